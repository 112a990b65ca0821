// SPDX-License-Identifier: GPL-2.0
/*
 * t-fixed-update: sparse tables of registered kvecs and IOCB_CMD_KVEC_UPDATE.
 *  - no table: update gives ENXIO, fixed I/O EFAULT;
 *  - sparse register (slots 0 and 2 filled, 1 empty): only the filled
 *    slots' pages are registered; fixed I/O on slot 1, on slot 3 (the
 *    table's size), on slot 2^32 (not cut to 0) gives EFAULT; { p, 0 } in a
 *    register is EINVAL, { NULL, n } EFAULT;
 *  - update slot 1: event res = count, its pages registered, fixed write and
 *    read through it move the right data;
 *  - bad updates, each with its errno and no slot changed (all-or-nothing):
 *    count 0 or too large, slots past the table, aio_offset 2^32, fields the
 *    command does not use, { p, 0 }, { NULL, 4096 } after a good entry, a
 *    PROT_READ buffer, a hole, an unreadable iovec array; the registered
 *    page and pin counts are unchanged after each;
 *  - replace slot 0: fixed I/O through the new buffer works and through the
 *    old one gives EFAULT, the old pages are released; clear slot 2: EFAULT;
 *    a 3-slot update (set, clear, set) at once: res 3;
 *  - updates with I/O in flight on the replaced slot: 4 x 1 MiB fixed reads
 *    and the update in one io_submit(), then in two; 4 x 1 MiB fixed writes
 *    and the update, then io_destroy() without unregistering: the reads'
 *    data is in the old buffer (the device's content), the new buffer is
 *    untouched, the writes sent the old buffer's data; the old pages are
 *    released once the I/O is done;
 *  - at the end every registered page is released and the FOLL_PIN pins
 *    balance.
 */
#include "aiotest.h"
#include "kvec-aio.h"

#include <sys/mman.h>

#define SEED		9100
#define SMALL		(64 * AIOT_KIB)		/* 16 pages */
#define SPAGES		(SMALL / AIOT_PAGE)
#define BIG		(4 * AIOT_MIB)		/* 1024 pages */
#define BPAGES		(BIG / AIOT_PAGE)
#define NREAD		4
#define CHUNK		(BIG / NREAD)
/* device regions */
#define DEV_SMALL	0
#define DEV_BIG		(8 * AIOT_MIB)
#define DEV_BIG2	(16 * AIOT_MIB)

static io_context_t ctx;
static int fd;

static long long net_registered(void)
{
	return aiot_stat("pages_registered") - aiot_stat("pages_unregistered");
}

/*
 * Wait (up to 5 s; unpins of replaced buffers may be deferred) until the
 * registered pages not yet released are @base + @want and the FOLL_PIN pins
 * outstanding are @pbase + @want.
 */
static void expect_held(const char *what, long long base, long long pbase, long long want)
{
	long long net = 0, pins = 0;
	int i;

	for (i = 0; i < 100; i++) {
		net = net_registered() - base;
		pins = aiot_pins_out() - pbase;
		if (net == want && pins == want)
			break;
		usleep(50000);
	}
	CHECK(net == want, "%s: %lld registered pages held, want %lld", what, net, want);
	CHECK(pins == want, "%s: %lld pages pinned, want %lld", what, pins, want);
}

static void expect_int(const char *tag, int got, int want)
{
	aiot_R("%s %s", tag, aiot_rstr(got));
	CHECK(got == want, "%s: %s, want %s", tag, aiot_rstr(got), aiot_rstr(want));
}

/* io_submit() of one command iocb; its result from io_submit or its event. */
static int cmd(struct iocb *cb)
{
	return kvec_aio_submit_cmd(ctx, cb, NULL);
}

static struct aiot_res fixed_rw(int write, void *buf, size_t len, uint64_t off,
				unsigned int slot)
{
	return aiot_fixed_rw(ctx, fd, write, buf, len, off, slot);
}

static void expect_io(const char *tag, struct aiot_res r, long want)
{
	aiot_report(tag, r, NULL, 0);
	CHECK(aiot_is(r, want), "%s: %s, want res %s", tag, aiot_resstr(r), aiot_rstr(want));
}

static void expect_efault(const char *tag, struct aiot_res r)
{
	aiot_report(tag, r, NULL, 0);
	CHECK(r.submit == -EFAULT, "%s: %s, want submit EFAULT", tag, aiot_resstr(r));
}

/*
 * Slot @slot holds @buf: a fixed write of SMALL from it and a fixed read back
 * into it move the right data.  @seed makes each check's data its own.
 */
static void slot_works(const char *tag, uint8_t *buf, unsigned int slot, uint64_t seed)
{
	char t[96];

	aiot_fill(buf, SMALL, seed, DEV_SMALL);
	snprintf(t, sizeof(t), "%s fixed-write", tag);
	expect_io(t, fixed_rw(1, buf, SMALL, DEV_SMALL, slot), SMALL);
	CHECK(aiot_sync_verify(fd, DEV_SMALL, SMALL, seed), "%s: device after fixed write", tag);
	CHECK(aiot_sync_write_pattern(fd, DEV_SMALL, SMALL, seed + 50), "pre-write");
	memset(buf, AIOT_POISON, SMALL);
	snprintf(t, sizeof(t), "%s fixed-read", tag);
	expect_io(t, fixed_rw(0, buf, SMALL, DEV_SMALL, slot), SMALL);
	aiot_verify(t, buf, SMALL, seed + 50, DEV_SMALL);
}

/* Fixed I/O naming @slot with @buf (which it does not hold) gives EFAULT. */
static void slot_refuses(const char *tag, uint8_t *buf, unsigned int slot)
{
	char t[96];

	snprintf(t, sizeof(t), "%s fixed-read", tag);
	expect_efault(t, fixed_rw(0, buf, AIOT_PAGE, DEV_SMALL, slot));
	snprintf(t, sizeof(t), "%s fixed-write", tag);
	expect_efault(t, fixed_rw(1, buf, AIOT_PAGE, DEV_SMALL, slot));
}

static void test_no_table(uint8_t *a)
{
	struct iovec v = { a, SMALL };

	if (kvec_aio_update(ctx, 0, &v, 1) == -EINVAL)
		aiot_die("IOCB_CMD_KVEC_UPDATE without a table: EINVAL, want ENXIO "
			 "(kernel without table updates)");
	expect_int("update-no-table", kvec_aio_update(ctx, 0, &v, 1), -ENXIO);
	expect_efault("fixed-no-table", fixed_rw(0, a, AIOT_PAGE, 0, 0));
}

/* Bad register entries: EINVAL for { p, 0 }, EFAULT for { NULL, n }. */
static void test_register_entries(uint8_t *a)
{
	struct iovec v[3] = { { a, SMALL }, { NULL, 0 }, { a, 0 } };

	expect_int("register-entry-p-0", kvec_aio_register(ctx, v, 3), -EINVAL);
	v[2] = (struct iovec){ NULL, AIOT_PAGE };
	expect_int("register-entry-null-4096", kvec_aio_register(ctx, v, 3), -EFAULT);
	expect_int("unregister-after-bad-registers", kvec_aio_unregister(ctx), -ENXIO);
}

/* Bad updates on the table { A, B, C }: each refused, no slot changed. */
static void test_bad_updates(uint8_t *a, uint8_t *b, uint8_t *c, uint8_t *d)
{
	uint8_t *ro = aiot_map(SMALL);
	void *hole = aiot_hole(SMALL);
	struct iovec v[3] = { { d, SMALL }, { d, SMALL }, { d, SMALL } };
	long long net0 = net_registered(), pins0 = aiot_pins_out();
	struct iocb cb;

	if (mprotect(ro, SMALL, PROT_READ))
		aiot_die("mprotect: %s", strerror(errno));
	expect_int("update-count-0", kvec_aio_update(ctx, 0, v, 0), -EINVAL);
	expect_int("update-first-3", kvec_aio_update(ctx, 3, v, 1), -EINVAL);
	expect_int("update-first-2-count-2", kvec_aio_update(ctx, 2, v, 2), -EINVAL);
	kvec_aio_prep_update(&cb, 0, v, 1);
	cb.u.c.offset = 1LL << 32;	/* a 64-bit first slot, not cut to 0 */
	expect_int("update-first-2^32", cmd(&cb), -EINVAL);
	expect_int("update-count-too-many", kvec_aio_update(ctx, 0, v, KVEC_AIO_MAX_BUFS + 1),
		   -EINVAL);
	kvec_aio_prep_update(&cb, 0, v, 1);
	cb.u.c.nbytes = (1UL << 32) | 1;
	expect_int("update-count-2^32+1", cmd(&cb), -EINVAL);
	kvec_aio_prep_update(&cb, 0, v, 1);
	cb.aio_fildes = 3;
	expect_int("update-with-fildes", cmd(&cb), -EINVAL);
	kvec_aio_prep_update(&cb, 0, v, 1);
	cb.aio_reqprio = 1;
	expect_int("update-with-reqprio", cmd(&cb), -EINVAL);
	kvec_aio_prep_update(&cb, 0, v, 1);
	cb.aio_rw_flags = 1;
	expect_int("update-with-rw-flags", cmd(&cb), -EINVAL);
	kvec_aio_prep_update(&cb, 0, v, 1);
	cb.u.c.__pad3 = 1;	/* aio_reserved2 */
	expect_int("update-with-reserved2", cmd(&cb), -EINVAL);
	kvec_aio_prep_update(&cb, 0, v, 1);
	cb.u.c.resfd = 3;
	expect_int("update-resfd-without-flag", cmd(&cb), -EINVAL);
	kvec_aio_prep_update(&cb, 0, v, 1);
	cb.u.c.flags = KVEC_AIO_FLAG_FIXED;
	expect_int("update-with-fixed-flag", cmd(&cb), -EINVAL);

	/* a good entry first, then a bad one: neither slot changes */
	v[1] = (struct iovec){ d, 0 };
	expect_int("update-entry-p-0", kvec_aio_update(ctx, 0, v, 2), -EINVAL);
	v[1] = (struct iovec){ NULL, AIOT_PAGE };
	expect_int("update-entry-null-4096", kvec_aio_update(ctx, 0, v, 2), -EFAULT);
	v[1] = (struct iovec){ ro, SMALL };
	expect_int("update-entry-readonly", kvec_aio_update(ctx, 0, v, 2), -EFAULT);
	v[1] = (struct iovec){ hole, SMALL };
	expect_int("update-entry-hole", kvec_aio_update(ctx, 0, v, 2), -EFAULT);
	v[0] = (struct iovec){ NULL, 0 };	/* a clear, then a bad one */
	v[1] = (struct iovec){ NULL, AIOT_PAGE };
	expect_int("update-clear-then-bad", kvec_aio_update(ctx, 0, v, 2), -EFAULT);
	v[0] = (struct iovec){ d, SMALL };
	v[1] = (struct iovec){ d, SMALL };
	v[2] = (struct iovec){ ro, SMALL };	/* the last of three */
	expect_int("update-3-last-readonly", kvec_aio_update(ctx, 0, v, 3), -EFAULT);
	expect_int("update-bad-array", kvec_aio_update(ctx, 0, hole, 1), -EFAULT);

	/* nothing changed: A, B, C still in slots 0, 1, 2; D in none */
	expect_held("after the refused updates", net0, pins0, 0);
	slot_works("bad-updates slot0=A", a, 0, SEED + 10);
	slot_works("bad-updates slot1=B", b, 1, SEED + 11);
	slot_works("bad-updates slot2=C", c, 2, SEED + 12);
	slot_refuses("bad-updates slot0-not-D", d, 0);
	slot_refuses("bad-updates slot1-not-D", d, 1);
	aiot_unmap(ro, SMALL);
}

/* The table's basic life: sparse register, fill, replace, clear. */
static void test_updates(void)
{
	uint8_t *a = aiot_map(SMALL), *b = aiot_map(SMALL), *c = aiot_map(SMALL);
	uint8_t *d = aiot_map(SMALL);
	struct iovec tab[3] = { { a, SMALL }, { NULL, 0 }, { c, SMALL } };
	struct iovec v[3];
	long long net0 = net_registered(), pins0 = aiot_pins_out();
	struct iocb cb;

	test_no_table(a);
	test_register_entries(a);

	expect_int("register-sparse-3", kvec_aio_register(ctx, tab, 3), 3);
	expect_held("sparse register", net0, pins0, 2 * SPAGES);
	slot_works("sparse slot0", a, 0, SEED + 1);
	slot_works("sparse slot2", c, 2, SEED + 2);
	slot_refuses("sparse empty-slot1", a, 1);
	slot_refuses("sparse slot3=size", a, 3);
	slot_refuses("sparse slot16384", a, KVEC_AIO_MAX_BUFS);
	/* aio_reserved2 is 64 bits: 2^32 is not slot 0 */
	kvec_aio_prep_pread_fixed(&cb, fd, a, AIOT_PAGE, 0, 0);
	cb.u.c.__pad3 = 1LL << 32;
	expect_efault("sparse slot2^32 fixed-read", aiot_submit_wait(ctx, &cb));

	/* fill the empty slot */
	v[0] = (struct iovec){ b, SMALL };
	expect_int("update-slot1", kvec_aio_update(ctx, 1, v, 1), 1);
	expect_held("update of the empty slot", net0, pins0, 3 * SPAGES);
	slot_works("updated slot1", b, 1, SEED + 3);
	slot_works("slot0 after update of slot1", a, 0, SEED + 4);

	test_bad_updates(a, b, c, d);

	/* replace slot 0: A out, D in */
	v[0] = (struct iovec){ d, SMALL };
	expect_int("update-replace-slot0", kvec_aio_update(ctx, 0, v, 1), 1);
	expect_held("replace slot 0", net0, pins0, 3 * SPAGES);
	slot_works("replaced slot0=D", d, 0, SEED + 5);
	slot_refuses("replaced slot0-not-A", a, 0);

	/* clear slot 2 */
	v[0] = (struct iovec){ NULL, 0 };
	expect_int("update-clear-slot2", kvec_aio_update(ctx, 2, v, 1), 1);
	expect_held("clear slot 2", net0, pins0, 2 * SPAGES);
	slot_refuses("cleared slot2", c, 2);
	slot_works("slot1 after clear of slot2", b, 1, SEED + 6);

	/* three slots at once: A, empty, C */
	v[0] = (struct iovec){ a, SMALL };
	v[1] = (struct iovec){ NULL, 0 };
	v[2] = (struct iovec){ c, SMALL };
	expect_int("update-3-slots", kvec_aio_update(ctx, 0, v, 3), 3);
	expect_held("3-slot update", net0, pins0, 2 * SPAGES);
	slot_works("3-slot slot0=A", a, 0, SEED + 7);
	slot_refuses("3-slot slot1-empty", b, 1);
	slot_works("3-slot slot2=C", c, 2, SEED + 8);
	slot_refuses("3-slot slot0-not-D", d, 0);

	expect_int("unregister-sparse", kvec_aio_unregister(ctx), 3);
	expect_held("unregister", net0, pins0, 0);
	expect_int("update-after-unregister", kvec_aio_update(ctx, 0, v, 1), -ENXIO);
	aiot_unmap(a, SMALL);
	aiot_unmap(b, SMALL);
	aiot_unmap(c, SMALL);
	aiot_unmap(d, SMALL);
}

/*
 * NREAD fixed reads of CHUNK into @old (slot 1 of { Z, old }) with an
 * update of slot 1 to @nbuf: in the same io_submit() (@batch) or just
 * after it.  The reads finish on the old pages.
 */
static void inflight_reads(const char *tag, uint8_t *z, uint8_t *old, uint8_t *nbuf,
			   bool batch, uint64_t seed)
{
	struct iovec tab[2] = { { z, SMALL }, { old, BIG } }, nv = { nbuf, BIG };
	static struct iocb cbs[NREAD + 1];
	struct iocb *cbp[NREAD + 1];
	struct io_event ev[NREAD + 1];
	uint8_t *ref = aiot_alloc(BIG);
	long long net0 = net_registered(), pins0 = aiot_pins_out();
	int i, ok = 0, upd = 0, ret;
	char t[96];

	CHECK(aiot_sync_write_pattern(fd, DEV_BIG, BIG, seed), "pre-write");
	memset(old, AIOT_POISON, BIG);
	memset(nbuf, AIOT_POISON, BIG);
	snprintf(t, sizeof(t), "%s register", tag);
	expect_int(t, kvec_aio_register(ctx, tab, 2), 2);
	for (i = 0; i < NREAD; i++) {
		kvec_aio_prep_pread_fixed(&cbs[i], fd, old + i * CHUNK, CHUNK,
					  (long long)(DEV_BIG + i * CHUNK), 1);
		aiot_mark(&cbs[i]);
		cbp[i] = &cbs[i];
	}
	kvec_aio_prep_update(&cbs[NREAD], 1, &nv, 1);
	cbp[NREAD] = &cbs[NREAD];
	if (batch) {
		ret = io_submit(ctx, NREAD + 1, cbp);
		CHECK(ret == NREAD + 1, "%s: io_submit of %d reads and the update: %s", tag,
		      NREAD, aiot_rstr(ret));
	} else {
		ret = io_submit(ctx, NREAD, cbp);
		CHECK(ret == NREAD, "%s: io_submit of %d reads: %s", tag, NREAD, aiot_rstr(ret));
		ret = io_submit(ctx, 1, cbp + NREAD);
		CHECK(ret == 1, "%s: io_submit of the update: %s", tag, aiot_rstr(ret));
	}
	if (aiot_reap(ctx, NREAD + 1, ev) == NREAD + 1) {
		for (i = 0; i < NREAD + 1; i++) {
			if (ev[i].obj == &cbs[NREAD]) {
				upd = (int)(long)ev[i].res;
			} else {
				CHECK(ev[i].res == CHUNK, "%s: read res %s", tag,
				      aiot_rstr((long)ev[i].res));
				ok += ev[i].res == CHUNK;
			}
		}
	}
	aiot_R("%s reads-ok=%d update=%s", tag, ok, aiot_rstr(upd));
	CHECK(ok == NREAD && upd == 1, "%s: %d of %d reads, update %s", tag, ok, NREAD,
	      aiot_rstr(upd));
	/* the data in the old buffer, as the device holds it; the new untouched */
	CHECK(pread(fd, ref, BIG, DEV_BIG) == (ssize_t)BIG, "pread reference");
	CHECK(aiot.nodata || !memcmp(old, ref, BIG), "%s: old buffer differs from the device",
	      tag);
	aiot_verify(tag, old, BIG, seed, DEV_BIG);
	snprintf(t, sizeof(t), "%s: new buffer", tag);
	aiot_verify_byte(t, nbuf, BIG, AIOT_POISON);
	/* the old pages go once the reads are done: Z and the new buffer stay */
	snprintf(t, sizeof(t), "%s, reads done", tag);
	expect_held(t, net0, pins0, SPAGES + BPAGES);
	snprintf(t, sizeof(t), "%s slot1-not-old", tag);
	slot_refuses(t, old, 1);
	snprintf(t, sizeof(t), "%s slot1=new fixed-read", tag);
	memset(nbuf, AIOT_POISON, BIG);
	expect_io(t, fixed_rw(0, nbuf + CHUNK, CHUNK, DEV_BIG, 1), CHUNK);
	aiot_verify(t, nbuf + CHUNK, CHUNK, seed, DEV_BIG);
	snprintf(t, sizeof(t), "%s unregister", tag);
	expect_int(t, kvec_aio_unregister(ctx), 2);
	expect_held(t, net0, pins0, 0);
	free(ref);
}

/*
 * NREAD fixed writes of CHUNK from @old with the update in the same
 * io_submit(), on a context of their own that io_destroy() ends with the
 * buffers still registered: the device gets the old buffer's data.
 */
static void inflight_writes(uint8_t *old, uint8_t *nbuf, uint64_t seed)
{
	const char *tag = "inflight-writes-destroy";
	struct iovec tab[1] = { { old, BIG } }, nv = { nbuf, BIG };
	static struct iocb cbs[NREAD + 1];
	struct iocb *cbp[NREAD + 1];
	struct io_event ev[NREAD + 1];
	io_context_t c = aiot_ctx(NREAD + 2);
	long long net0 = net_registered(), pins0 = aiot_pins_out();
	int i, ok = 0, upd = 0, ret;

	CHECK(aiot_sync_write_pattern(fd, DEV_BIG2, BIG, seed + 1), "pre-write");
	aiot_fill(old, BIG, seed, DEV_BIG2);
	aiot_fill(nbuf, BIG, seed + 2, DEV_BIG2);
	ret = kvec_aio_register(c, tab, 1);
	aiot_R("%s register %s", tag, aiot_rstr(ret));
	CHECK(ret == 1, "%s register: %s", tag, aiot_rstr(ret));
	for (i = 0; i < NREAD; i++) {
		kvec_aio_prep_pwrite_fixed(&cbs[i], fd, old + i * CHUNK, CHUNK,
					   (long long)(DEV_BIG2 + i * CHUNK), 0);
		aiot_mark(&cbs[i]);
		cbp[i] = &cbs[i];
	}
	kvec_aio_prep_update(&cbs[NREAD], 0, &nv, 1);
	cbp[NREAD] = &cbs[NREAD];
	ret = io_submit(c, NREAD + 1, cbp);
	CHECK(ret == NREAD + 1, "%s: io_submit: %s", tag, aiot_rstr(ret));
	if (aiot_reap(c, NREAD + 1, ev) == NREAD + 1) {
		for (i = 0; i < NREAD + 1; i++) {
			if (ev[i].obj == &cbs[NREAD])
				upd = (int)(long)ev[i].res;
			else
				ok += ev[i].res == CHUNK;
		}
	}
	aiot_R("%s writes-ok=%d update=%s", tag, ok, aiot_rstr(upd));
	CHECK(ok == NREAD && upd == 1, "%s: %d of %d writes, update %s", tag, ok, NREAD,
	      aiot_rstr(upd));
	CHECK(aiot_sync_verify(fd, DEV_BIG2, BIG, seed), "%s: device holds the old buffer's data",
	      tag);
	/* a last write through the new buffer, then io_destroy with it registered */
	{
		struct iocb wcb, *wp = &wcb;

		kvec_aio_prep_pwrite_fixed(&wcb, fd, nbuf, CHUNK, DEV_BIG2, 0);
		aiot_mark(&wcb);
		CHECK(io_submit(c, 1, &wp) == 1, "%s: fixed write through the new buffer", tag);
	}
	CHECK(io_destroy(c) == 0, "%s: io_destroy", tag);
	CHECK(aiot_sync_verify(fd, DEV_BIG2, CHUNK, seed + 2),
	      "%s: fixed write through the new buffer", tag);
	expect_held("io_destroy with the updated table", net0, pins0, 0);
}

int main(void)
{
	uint8_t *z, *old, *nbuf;
	long long net0, pins0, fix0;

	aiot_init("t-fixed-update");
	if (aiot_stat("fixed_iocbs") < 0)
		aiot_skip("kernel without registered kvecs");
	aiot_require_size(32 * AIOT_MIB);
	fd = aiot_open_dev(O_RDWR | O_DIRECT);
	ctx = aiot_ctx(NREAD + 4);
	net0 = net_registered();
	pins0 = aiot_pins_out();
	fix0 = aiot_stat("fixed_iocbs");

	test_updates();

	z = aiot_map(SMALL);
	old = aiot_map(BIG);
	nbuf = aiot_map(BIG);
	inflight_reads("inflight-reads-batch", z, old, nbuf, true, SEED + 20);
	inflight_reads("inflight-reads-after", z, old, nbuf, false, SEED + 21);
	inflight_writes(old, nbuf, SEED + 22);
	CHECK(aiot_stat("fixed_iocbs") > fix0, "fixed_iocbs did not move: no kvec path");

	aiot_ctx_destroy(ctx);
	expect_held("the end", net0, pins0, 0);
	aiot_unmap(z, SMALL);
	aiot_unmap(old, BIG);
	aiot_unmap(nbuf, BIG);
	close(fd);
	return aiot_finish();
}
