// SPDX-License-Identifier: GPL-2.0
/*
 * t-fixed: registered kvecs (IOCB_CMD_KVEC_REGISTER, IOCB_FLAG_KVEC_FIXED
 * with the buffer index in aio_reserved2).
 *  - register two buffers: one pin per page, charged once (VmPin grows by
 *    the pages); fixed writes and reads move the right data (page-straddling
 *    slices and a one-segment PREADV included) and pin nothing per I/O
 *    (fixed_iocbs counts them, pages_pinned and the vmstat pin counters stay
 *    put);
 *  - bad index (past the table, 0xffffffff, 1 << 32: no truncation to 32
 *    bits), ranges outside the buffer, aio_reserved2 without the flag
 *    (EINVAL, as stock), an old-style index in the top bits of aio_flags
 *    (ignored: buffer 0 is used), a second registration, aio_reserved2 on
 *    the register, update and unregister commands (EINVAL, registration
 *    left alone), aio_flags bits other than RESFD on a register (EINVAL), bad
 *    register arguments (count, length, NULL, hole, read-only memory, a
 *    private file mapping), unregister twice: each with its errno;
 *  - kvec_aio_submit_cmd() with a read's event already in the ring: the
 *    read's event comes back in other->ev; with other->max 0, -ENOSPC, and
 *    kvec_aio_reap_cmd() collects the command's event once there is room;
 *  - unregister with 64 fixed reads in flight: every read completes with its
 *    data, the pages are released after the last one;
 *  - io_destroy with 64 fixed reads in flight: when it returns every read
 *    is done and every registered page is unpinned and uncharged (vmstat
 *    pins, pages_registered == pages_unregistered, VmPin), checked at once;
 *  - munmap of a registered buffer keeps its pages: a fixed write from the
 *    unmapped range still sends the data, the pins go at unregister;
 *  - fork with a fixed read in flight: the data lands in the parent;
 *  - RLIMIT_MEMLOCK without CAP_IPC_LOCK: ENOMEM past the limit (t-memlock
 *    has the per-user accounting);
 *  - 4 MiB fixed I/Os from 512 bytes into a page, past BIO_MAX_VECS pages:
 *    the right data, one bio each (the bio uses the buffer's bio_vecs and
 *    the block layer splits it).
 * On an O_DIRECT block device fixed I/O takes the kvec path in every mode.
 */
#include "aiotest.h"
#include "kvec-aio.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#define SEED	8800
#define BUF0	AIOT_MIB		/* 256 pages */
#define BUF1	(64 * AIOT_KIB + 512)	/* registered from offset 512: 17 pages */
#define NFLY	64
#define FLYLEN	(16 * AIOT_KIB)

static io_context_t ctx;
static int fd;

/* Counters that show what an operation pinned and unpinned. */
struct pins {
	long long acquired, released, pinned, registered, unregistered, fixed;
};

static struct pins pins_now(void)
{
	struct pins p = {
		.acquired = aiot_vmstat("nr_foll_pin_acquired"),
		.released = aiot_vmstat("nr_foll_pin_released"),
		.pinned = aiot_stat("pages_pinned"),
		.registered = aiot_stat("pages_registered"),
		.unregistered = aiot_stat("pages_unregistered"),
		.fixed = aiot_stat("fixed_iocbs"),
	};
	return p;
}

/*
 * Wait (up to 5 s) until @want pages more than @p were unregistered: only
 * for an unregister with I/O in flight, whose last I/O lets the pages go.
 * After io_destroy() nothing may be left to wait for (test_inflight).
 */
static bool unregistered_by(struct pins p, long long want)
{
	int i;

	for (i = 0; i < 500; i++) {
		if (aiot_stat("pages_unregistered") - p.unregistered >= want)
			return true;
		usleep(10000);
	}
	return false;
}

static void expect_int(const char *tag, int got, int want)
{
	aiot_R("%s %s", tag, aiot_rstr(got));
	CHECK(got == want, "%s: %s, want %s", tag, aiot_rstr(got), aiot_rstr(want));
}

static struct aiot_res fixed_rw(int write, void *buf, size_t len, uint64_t off,
				unsigned int index)
{
	return aiot_fixed_rw(ctx, fd, write, buf, len, off, index);
}

static void expect_io(const char *tag, struct aiot_res r, long want, const void *buf)
{
	aiot_report(tag, r, buf, buf && want > 0 ? (size_t)want : 0);
	CHECK(aiot_is(r, want), "%s: %s, want res %s", tag, aiot_resstr(r), aiot_rstr(want));
}

static void expect_submit(const char *tag, struct aiot_res r, int err)
{
	aiot_report(tag, r, NULL, 0);
	CHECK(r.submit == err, "%s: %s, want submit %s", tag, aiot_resstr(r), aiot_rstr(err));
}

/* io_submit() of the one iocb @cb. */
static int submit_one(struct iocb *cb)
{
	return io_submit(ctx, 1, &cb);
}

/* Data path and the pin accounting of register, fixed I/O and unregister. */
static void test_basic(uint8_t *b0, uint8_t *b1)
{
	struct iovec iov[2] = { { b0, BUF0 }, { b1 + 512, BUF1 - 512 } };
	uint8_t *check = aiot_alloc(BUF0);
	long long vmpin0 = aiot_vmpin_kib(), vmpin;
	struct pins p0, p1, p2;
	struct iocb cb;
	struct aiot_res r;

	CHECK(vmpin0 >= 0, "no VmPin in /proc/self/status");
	p0 = pins_now();
	expect_int("register-2", kvec_aio_register(ctx, iov, 2), 2);
	p1 = pins_now();
	vmpin = aiot_vmpin_kib();
	CHECK(vmpin - vmpin0 == (256 + 17) * 4, "VmPin +%lld KiB after registering 273 pages",
	      vmpin - vmpin0);
	CHECK(p1.registered - p0.registered == 256 + 17, "pages_registered +%lld",
	      p1.registered - p0.registered);
	CHECK(p1.acquired - p0.acquired == 256 + 17, "vmstat pins +%lld",
	      p1.acquired - p0.acquired);
	expect_int("register-again", kvec_aio_register(ctx, iov, 2), -EBUSY);

	/* 1 MiB out of buffer 0, back through buffer 1 in page-straddling parts */
	aiot_fill(b0, BUF0, SEED, 0);
	expect_io("fixed-write-1m", fixed_rw(1, b0, BUF0, 0, 0), BUF0, b0);
	memset(b1, AIOT_POISON, BUF1);
	expect_io("fixed-read-64k-off512", fixed_rw(0, b1 + 512, BUF1 - 512, 8192, 1),
		  BUF1 - 512, b1 + 512);
	aiot_verify("fixed read into buffer 1", b1 + 512, BUF1 - 512, SEED, 8192);
	memset(b1, AIOT_POISON, BUF1);
	expect_io("fixed-read-4k-straddle", fixed_rw(0, b1 + 4096 + 512, 4096, 4096, 1),
		  4096, b1 + 4096 + 512);
	aiot_verify("straddling fixed read", b1 + 4096 + 512, 4096, SEED, 4096);
	CHECK(aiot_sync_verify(fd, 0, BUF0, SEED), "device after fixed write");
	/* part of buffer 0 into a plain buffer: fixed write, plain read */
	expect_io("fixed-write-8k-mid", fixed_rw(1, b0 + 65536, 8192, 2 * BUF0, 0),
		  8192, b0 + 65536);
	r = aiot_pread(ctx, fd, check, 8192, 2 * BUF0);
	expect_io("plain-read-back", r, 8192, check);
	aiot_verify("plain read of a fixed write", check, 8192, SEED, 65536);

	p2 = pins_now();
	CHECK(p2.fixed - p1.fixed == 4, "fixed_iocbs +%lld, want 4", p2.fixed - p1.fixed);
	/* the plain read pinned its 2 pages; the fixed I/Os pinned none */
	CHECK(p2.pinned - p1.pinned <= 2, "pages_pinned +%lld by fixed I/O",
	      p2.pinned - p1.pinned);

	/* bad references */
	expect_submit("fixed-bad-index", fixed_rw(0, b0, 4096, 0, 2), -EFAULT);
	expect_submit("fixed-huge-index", fixed_rw(0, b0, 4096, 0, 0xffff), -EFAULT);
	expect_submit("fixed-index-2^32-1", fixed_rw(0, b0, 4096, 0, 0xffffffffU), -EFAULT);
	/* all 64 bits of aio_reserved2 are the index: 1 << 32 is not buffer 0 */
	kvec_aio_prep_pread_fixed(&cb, fd, b0, 4096, 0, 0);
	cb.u.c.__pad3 = 1LL << 32;
	expect_submit("fixed-index-2^32", aiot_submit_wait(ctx, &cb), -EFAULT);
	expect_submit("fixed-past-end", fixed_rw(0, b0 + BUF0 - 4096, 8192, 0, 0), -EFAULT);
	expect_submit("fixed-before-start", fixed_rw(0, b1, 4096, 0, 1), -EFAULT);
	expect_submit("fixed-wrong-buffer", fixed_rw(0, b1 + 512, 4096, 0, 0), -EFAULT);
	/* vectored fixed I/O (t-fixed-vec has the rest): one segment */
	{
		struct iovec v = { b0 + 8192, 4096 };

		memset(b0 + 8192, AIOT_POISON, 4096);
		io_prep_preadv(&cb, fd, &v, 1, 8192);
		kvec_aio_use_fixed(&cb, 0);
		expect_io("fixed-preadv-1seg", aiot_submit_wait(ctx, &cb), 4096, b0 + 8192);
		aiot_verify("fixed one-segment preadv", b0 + 8192, 4096, SEED, 8192);
	}
	/* aio_reserved2 without IOCB_FLAG_KVEC_FIXED: EINVAL, as stock 6.1 */
	io_prep_pread(&cb, fd, b0, 4096, 0);
	cb.u.c.__pad3 = 1;
	expect_submit("reserved2-without-flag", aiot_submit_wait(ctx, &cb), -EINVAL);
	/*
	 * The old uAPI's index in the top 16 bits of aio_flags means nothing
	 * now: with aio_reserved2 0 this is buffer 0 (buffer 1 would not hold
	 * the range: EFAULT).
	 */
	memset(b0, AIOT_POISON, 4096);
	kvec_aio_prep_pread_fixed(&cb, fd, b0, 4096, 0, 0);
	cb.u.c.flags |= 1U << 16;
	expect_io("old-style-index-bits", aiot_submit_wait(ctx, &cb), 4096, b0);
	aiot_verify("fixed read with index bits in aio_flags", b0, 4096, SEED, 0);

	/* commands with aio_reserved2: EINVAL, the table stays as it is */
	kvec_aio_prep_unregister(&cb);
	cb.u.c.__pad3 = 1;
	expect_int("unregister-with-reserved2", submit_one(&cb), -EINVAL);
	kvec_aio_prep_update(&cb, 0, iov, 1);
	cb.u.c.__pad3 = 1;
	expect_int("update-with-reserved2", submit_one(&cb), -EINVAL);
	memset(b0, AIOT_POISON, 4096);
	expect_io("fixed-read-after-refused-cmds", fixed_rw(0, b0, 4096, 0, 0), 4096, b0);
	aiot_verify("fixed read after refused commands", b0, 4096, SEED, 0);
	CHECK(pins_now().unregistered == p1.unregistered, "refused commands unregistered pages");

	p1 = pins_now();
	expect_int("unregister", kvec_aio_unregister(ctx), 2);
	p2 = pins_now();
	CHECK(p2.unregistered - p1.unregistered == 256 + 17, "pages_unregistered +%lld",
	      p2.unregistered - p1.unregistered);
	CHECK(p2.released - p1.released == 256 + 17, "vmstat unpins +%lld",
	      p2.released - p1.released);
	vmpin = aiot_vmpin_kib();
	CHECK(vmpin == vmpin0, "VmPin %lld KiB after unregister, was %lld", vmpin, vmpin0);
	expect_int("unregister-again", kvec_aio_unregister(ctx), -ENXIO);
	expect_submit("fixed-after-unregister", fixed_rw(0, b0, 4096, 0, 0), -EFAULT);
	free(check);
}

static void test_register_args(uint8_t *b0)
{
	struct iovec iov[2] = { { b0, 4096 }, { b0, 4096 } };
	uint8_t *ro = aiot_map(8192);
	void *hole = aiot_hole(8192);	/* after the last mmap that could fill it */
	struct iocb cb;
	int tfd;
	void *fmap;

	expect_int("register-0", kvec_aio_register(ctx, iov, 0), -EINVAL);
	expect_int("register-too-many", kvec_aio_register(ctx, iov, KVEC_AIO_MAX_BUFS + 1),
		   -EINVAL);
	iov[1].iov_len = 0;
	expect_int("register-len-0", kvec_aio_register(ctx, iov, 2), -EINVAL);
	iov[1].iov_len = (1ULL << 30) + 1;
	expect_int("register-len-1g+1", kvec_aio_register(ctx, iov, 2), -EINVAL);
	iov[1].iov_base = NULL;
	iov[1].iov_len = 4096;
	expect_int("register-null", kvec_aio_register(ctx, iov, 2), -EFAULT);
	iov[1].iov_base = hole;
	expect_int("register-hole", kvec_aio_register(ctx, iov, 2), -EFAULT);
	iov[1].iov_base = (void *)-4096L;
	iov[1].iov_len = 8192;
	expect_int("register-wrap", kvec_aio_register(ctx, iov, 2), -EOVERFLOW);
	if (mprotect(ro, 8192, PROT_READ))
		aiot_die("mprotect: %s", strerror(errno));
	iov[1].iov_base = ro;
	iov[1].iov_len = 8192;
	expect_int("register-readonly", kvec_aio_register(ctx, iov, 2), -EFAULT);
	expect_int("register-bad-array", kvec_aio_register(ctx, hole, 1), -EFAULT);

	/* a private writable mapping of a file that is not shmem: this binary */
	tfd = open("/proc/self/exe", O_RDONLY);
	CHECK(tfd >= 0, "open /proc/self/exe: %s", strerror(errno));
	fmap = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, tfd, 0);
	CHECK(fmap != MAP_FAILED, "mmap exe: %s", strerror(errno));
	iov[1].iov_base = fmap;
	iov[1].iov_len = 4096;
	expect_int("register-file-backed", kvec_aio_register(ctx, iov, 2), -EOPNOTSUPP);
	munmap(fmap, 4096);
	close(tfd);

	/*
	 * Each iocb below would register one good buffer but for one field:
	 * a count past 32 bits (not narrowed to 1), or a field the command
	 * does not use, which must be 0 to stay free for later.
	 */
	iov[0].iov_len = 4096;
	kvec_aio_prep_register(&cb, iov, 1);
	cb.u.c.offset = 4096;
	expect_int("register-with-offset", submit_one(&cb), -EINVAL);
	kvec_aio_prep_register(&cb, iov, 1);
	cb.u.c.nbytes = (1UL << 32) | 1;
	expect_int("register-count-2^32+1", submit_one(&cb), -EINVAL);
	kvec_aio_prep_register(&cb, iov, 1);
	cb.aio_fildes = 3;
	expect_int("register-with-fildes", submit_one(&cb), -EINVAL);
	kvec_aio_prep_register(&cb, iov, 1);
	cb.aio_reqprio = 1;
	expect_int("register-with-reqprio", submit_one(&cb), -EINVAL);
	kvec_aio_prep_register(&cb, iov, 1);
	cb.u.c.resfd = 3;
	expect_int("register-resfd-without-flag", submit_one(&cb), -EINVAL);
	kvec_aio_prep_register(&cb, iov, 1);
	cb.u.c.__pad3 = 1;			/* aio_reserved2 */
	expect_int("register-with-reserved2", submit_one(&cb), -EINVAL);
	kvec_aio_prep_unregister(&cb);
	cb.aio_fildes = 3;
	expect_int("unregister-with-fildes", submit_one(&cb), -EINVAL);
	/* nothing of the failed attempts stays registered */
	expect_int("unregister-none-yet", kvec_aio_unregister(ctx), -ENXIO);
	/*
	 * The commands are new: any aio_flags bit but IOCB_FLAG_RESFD is
	 * refused, to stay free for later (reads and writes ignore undefined
	 * bits, as stock does: t-iocb-flags).
	 */
	kvec_aio_prep_register(&cb, iov, 1);
	cb.u.c.flags |= 1U << 4;
	expect_int("register-undefined-flag", submit_one(&cb), -EINVAL);
	kvec_aio_prep_register(&cb, iov, 1);
	cb.u.c.flags |= KVEC_AIO_FLAG_FIXED;
	expect_int("register-with-fixed-flag", submit_one(&cb), -EINVAL);
	/* nothing of the failed attempts stays registered */
	expect_int("unregister-none", kvec_aio_unregister(ctx), -ENXIO);
	aiot_unmap(ro, 8192);
}

/*
 * Submit a 64 KiB pattern read into @buf with an eventfd and wait until its
 * event is in the ring, without reaping it.
 */
static void read_completed_unreaped(struct iocb *cb, uint8_t *buf, int efd)
{
	struct pollfd pfd = { efd, POLLIN, 0 };
	struct iocb *cbp = cb;
	uint64_t cnt = 0;

	aiot_prep_pattern(cb, 0, fd, buf, 65536, 0, SEED + 4);
	io_set_eventfd(cb, efd);
	CHECK(aiot_submit(ctx, 1, &cbp) == 1, "submit the read");
	/* aio_complete() signals the eventfd after the event is in the ring */
	CHECK(poll(&pfd, 1, AIOT_TIMEOUT_S * 1000) == 1, "read not done within %d s",
	      AIOT_TIMEOUT_S);
	CHECK(read(efd, &cnt, sizeof(cnt)) == sizeof(cnt) && cnt == 1,
	      "eventfd counted %llu", (unsigned long long)cnt);
}

/* The read's event, handed back in @other by kvec_aio_submit_cmd(). */
static void check_other(const char *tag, const struct kvec_aio_events *other,
			const struct iocb *rcb, const uint8_t *buf)
{
	const struct io_event *ev = other->ev;

	aiot_R("%s other.nr=%ld res=%s", tag, other->nr,
	       other->nr == 1 ? aiot_rstr((long)ev->res) : "-");
	if (!CHECK(other->nr == 1, "%s: %ld other events, want the read's", tag, other->nr))
		return;
	CHECK(ev->obj == rcb && ev->data == rcb->data, "%s: event of another iocb", tag);
	CHECK(ev->res == 65536 && ev->res2 == 0, "%s: read res %ld res2 %ld", tag,
	      (long)ev->res, (long)ev->res2);
	aiot_verify(tag, buf, 65536, SEED + 4, 0);
}

/*
 * kvec_aio_submit_cmd() on a context where another iocb's event is already
 * waiting: the event is handed back in @other, or -ENOSPC without room.
 */
static void test_other_events(uint8_t *b0)
{
	struct iovec iov = { b0, BUF0 };
	struct io_event oev[4];
	struct kvec_aio_events other = { oev, 4, 0 };
	uint8_t *rbuf = aiot_alloc(65536);
	struct iocb rcb, ccb;
	int efd = eventfd(0, EFD_CLOEXEC);

	if (efd < 0)
		aiot_die("eventfd: %s", strerror(errno));
	CHECK(aiot_sync_write_pattern(fd, 0, 65536, SEED + 4), "pre-write");

	/* room for one more event: the read's comes back, then the command's */
	read_completed_unreaped(&rcb, rbuf, efd);
	kvec_aio_prep_register(&ccb, &iov, 1);
	expect_int("register-other", kvec_aio_submit_cmd(ctx, &ccb, &other), 1);
	check_other("register-other", &other, &rcb, rbuf);
	other.nr = 0;
	kvec_aio_prep_unregister(&ccb);
	expect_int("unregister-other-empty", kvec_aio_submit_cmd(ctx, &ccb, &other), 1);
	CHECK(other.nr == 0, "unregister: %ld other events, none pending", other.nr);

	/* no room: -ENOSPC, and the command's event is still there to reap */
	read_completed_unreaped(&rcb, rbuf, efd);
	other.max = 0;
	kvec_aio_prep_register(&ccb, &iov, 1);
	expect_int("register-other-no-room", kvec_aio_submit_cmd(ctx, &ccb, &other), -ENOSPC);
	CHECK(other.nr == 0, "no room, yet %ld events taken", other.nr);
	other.max = 4;
	expect_int("reap-cmd-after-room", kvec_aio_reap_cmd(ctx, &ccb, &other), 1);
	check_other("reap-cmd-after-room", &other, &rcb, rbuf);
	CHECK(aiot_reap_extra(ctx, 0) == 0, "events left after the command's");
	/* the registration the -ENOSPC left to collect is in place */
	memset(b0, AIOT_POISON, 65536);
	expect_io("fixed-read-after-enospc", fixed_rw(0, b0, 65536, 0, 0), 65536, b0);
	aiot_verify("fixed read after -ENOSPC", b0, 65536, SEED + 4, 0);
	expect_int("unregister-after-enospc", kvec_aio_unregister(ctx), 1);

	close(efd);
	free(rbuf);
}

/* 64 fixed reads in flight, then unregister (or io_destroy). */
static void test_inflight(uint8_t *b0, bool destroy)
{
	const char *tag = destroy ? "destroy-inflight" : "unregister-inflight";
	struct iovec iov = { b0, NFLY * FLYLEN };
	static struct iocb cbs[NFLY];
	struct iocb *cbp[NFLY];
	struct io_event ev[NFLY + 1];
	io_context_t c = destroy ? aiot_ctx(NFLY + 1) : ctx;
	long long pages = NFLY * FLYLEN / AIOT_PAGE;
	long long vmpin0 = aiot_vmpin_kib();
	struct pins p0 = pins_now(), p1;
	int i, ok = 0;

	CHECK(aiot_sync_write_pattern(fd, 0, NFLY * FLYLEN, SEED + 1), "pre-write");
	memset(b0, AIOT_POISON, NFLY * FLYLEN);
	expect_int(tag, kvec_aio_register(c, &iov, 1), 1);
	for (i = 0; i < NFLY; i++) {
		kvec_aio_prep_pread_fixed(&cbs[i], fd, b0 + i * FLYLEN, FLYLEN,
					  (long long)i * FLYLEN, 0);
		cbp[i] = &cbs[i];
	}
	CHECK(aiot_submit(c, NFLY, cbp) == NFLY, "submit %d fixed reads", NFLY);
	if (destroy) {
		long long vmpin;

		CHECK(io_destroy(c) == 0, "io_destroy with fixed reads in flight");
		/*
		 * io_destroy waited for the reads, and returns only once every
		 * registered page is unpinned and uncharged: no waiting here.
		 */
		p1 = pins_now();
		vmpin = aiot_vmpin_kib();
		ok = NFLY;
		CHECK(p1.unregistered - p0.unregistered == pages,
		      "%s: pages_unregistered +%lld when io_destroy returned, want %lld", tag,
		      p1.unregistered - p0.unregistered, pages);
		CHECK(p1.registered == p1.unregistered,
		      "%s: pages_registered %lld != pages_unregistered %lld after io_destroy", tag,
		      p1.registered, p1.unregistered);
		CHECK(p1.acquired - p1.released == p0.acquired - p0.released,
		      "%s: %lld pages still pinned (vmstat) after io_destroy", tag,
		      (p1.acquired - p1.released) - (p0.acquired - p0.released));
		CHECK(vmpin == vmpin0, "%s: VmPin %lld KiB after io_destroy, was %lld", tag,
		      vmpin, vmpin0);
	} else {
		struct iocb ucb;
		struct iocb *up = &ucb;

		kvec_aio_prep_unregister(&ucb);
		CHECK(io_submit(c, 1, &up) == 1, "unregister with reads in flight");
		/* the reads' events and the unregister's, in any order */
		CHECK(aiot_reap(c, NFLY + 1, ev) == NFLY + 1, "events");
		for (i = 0; i < NFLY + 1; i++) {
			if (ev[i].obj == &ucb)
				CHECK(ev[i].res == 1, "unregister res %ld", (long)ev[i].res);
			else if (ev[i].res == FLYLEN)
				ok++;
		}
	}
	aiot_R("%s reads-ok=%d", tag, ok);
	CHECK(ok == NFLY, "%s: %d of %d reads complete", tag, ok, NFLY);
	CHECK(aiot_verify(tag, b0, NFLY * FLYLEN, SEED + 1, 0), "%s: data", tag);
	if (!destroy)
		CHECK(unregistered_by(p0, pages), "%s: pages not released", tag);
	CHECK(aiot_stat("fixed_iocbs") - p0.fixed == NFLY, "%s: fixed_iocbs", tag);
}

/* munmap does not take registered pages away; unregister does. */
static void test_munmap(void)
{
	uint8_t *m = aiot_map(BUF0);
	struct iovec iov = { m, BUF0 };
	struct pins p0, p1;

	aiot_fill(m, BUF0, SEED + 2, 4 * BUF0);
	expect_int("munmap-register", kvec_aio_register(ctx, &iov, 1), 1);
	p0 = pins_now();
	aiot_unmap(m, BUF0);
	p1 = pins_now();
	CHECK(p1.released == p0.released, "munmap released %lld pins",
	      p1.released - p0.released);
	expect_io("fixed-write-after-munmap", fixed_rw(1, m, BUF0, 4 * BUF0, 0), BUF0, NULL);
	CHECK(aiot_sync_verify(fd, 4 * BUF0, BUF0, SEED + 2), "data of unmapped buffer");
	expect_int("munmap-unregister", kvec_aio_unregister(ctx), 1);
	p1 = pins_now();
	CHECK(p1.released - p0.released == 256, "unregister released %lld pins",
	      p1.released - p0.released);
}

/* fork while a fixed read is in flight: the data lands in the parent. */
static void test_fork(uint8_t *b0)
{
	struct iovec iov = { b0, BUF0 };
	struct iocb cb, *cbp = &cb;
	struct io_event ev;
	int status;
	pid_t pid;

	CHECK(aiot_sync_write_pattern(fd, 0, BUF0, SEED + 3), "pre-write");
	memset(b0, AIOT_POISON, BUF0);
	expect_int("fork-register", kvec_aio_register(ctx, &iov, 1), 1);
	kvec_aio_prep_pread_fixed(&cb, fd, b0, BUF0, 0, 0);
	CHECK(aiot_submit(ctx, 1, &cbp) == 1, "submit");
	pid = fork();
	if (pid == 0) {
		b0[0] ^= 1;	/* the child's copy: must not reach the parent */
		_exit(0);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && status == 0, "child");
	CHECK(aiot_reap(ctx, 1, &ev) == 1 && ev.res == BUF0, "fixed read res");
	aiot_R("fork-read res=%s", aiot_rstr((long)ev.res));
	aiot_verify("fixed read across fork", b0, BUF0, SEED + 3, 0);
	expect_int("fork-unregister", kvec_aio_unregister(ctx), 1);
}

/* Without CAP_IPC_LOCK the pages count against RLIMIT_MEMLOCK. */
static void test_memlock(void)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		struct rlimit rl = { 64 * AIOT_KIB, 64 * AIOT_KIB };
		uint8_t *m = aiot_map(BUF0);
		struct iovec big = { m, BUF0 }, small = { m, 32 * AIOT_KIB };
		io_context_t c = aiot_ctx(4);
		int a, b;

		if (setrlimit(RLIMIT_MEMLOCK, &rl) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(3);
		a = kvec_aio_register(c, &big, 1);
		b = kvec_aio_register(c, &small, 1);
		_exit(a == -ENOMEM && b == 1 ? 0 : 1);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid, "memlock child");
	aiot_R("memlock-child status=%d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "over RLIMIT_MEMLOCK: want ENOMEM, then success within it (status %d)",
	      status);
}

/*
 * Larger than one bio of pages, not page aligned: one bio, split below.  The
 * pages are faulted in last to first, so that few of them are physically
 * contiguous: bios filled page by page would need several.
 */
static void test_large(void)
{
	const size_t len = 4 * AIOT_MIB, maplen = len + 3 * 4096;
	uint8_t *b = mmap(NULL, maplen, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct iovec iov = { b, maplen };
	long long bios0;
	size_t off;

	if (b == MAP_FAILED)
		aiot_die("mmap %zu: %s", maplen, strerror(errno));
	for (off = maplen; off; off -= 4096)
		b[off - 4096] = AIOT_POISON;

	expect_int("register-large", kvec_aio_register(ctx, &iov, 1), 1);
	aiot_fill(b + 4096 + 512, len, SEED + 1, 4 * AIOT_MIB);
	bios0 = aiot_stat("bios");
	expect_io("fixed-write-4m-off512", fixed_rw(1, b + 4096 + 512, len, 4 * AIOT_MIB, 0),
		  (long)len, b + 4096 + 512);
	CHECK(aiot_stat("bios") - bios0 == 1, "fixed 4 MiB write: %lld bios, want 1",
	      aiot_stat("bios") - bios0);
	CHECK(aiot_sync_verify(fd, 4 * AIOT_MIB, len, SEED + 1), "device after 4 MiB fixed write");
	memset(b, AIOT_POISON, maplen);
	bios0 = aiot_stat("bios");
	expect_io("fixed-read-4m-off1024", fixed_rw(0, b + 1024, len, 4 * AIOT_MIB, 0),
		  (long)len, b + 1024);
	CHECK(aiot_stat("bios") - bios0 == 1, "fixed 4 MiB read: %lld bios, want 1",
	      aiot_stat("bios") - bios0);
	aiot_verify("4 MiB fixed read", b + 1024, len, SEED + 1, 4 * AIOT_MIB);
	expect_int("unregister-large", kvec_aio_unregister(ctx), 1);
	aiot_unmap(b, maplen);
}

int main(void)
{
	uint8_t *b0, *b1;

	aiot_init("t-fixed");
	if (aiot_stat("fixed_iocbs") < 0)
		aiot_skip("kernel without registered kvecs");
	if (aiot.dma_mask > 511)
		aiot_skip("device needs buffers aligned to more than 512 bytes");
	aiot_require_size(8 * BUF0);
	fd = aiot_open_dev(O_RDWR | O_DIRECT);
	ctx = aiot_ctx(NFLY + 8);
	b0 = aiot_map(BUF0);
	b1 = aiot_map(BUF1);

	test_basic(b0, b1);
	test_register_args(b0);
	test_other_events(b0);
	test_inflight(b0, false);
	test_inflight(b0, true);
	test_munmap();
	test_fork(b0);
	test_memlock();
	test_large();

	aiot_unmap(b0, BUF0);
	aiot_unmap(b1, BUF1);
	aiot_ctx_destroy(ctx);
	close(fd);
	return aiot_finish();
}
