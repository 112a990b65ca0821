// SPDX-License-Identifier: GPL-2.0
/*
 * t-fixed-vec: registered vectored I/O (IOCB_CMD_PREADV/PWRITEV with
 * IOCB_FLAG_KVEC_FIXED): every segment must lie inside the one buffer the
 * iocb names, and the data moves through that buffer's registered pages.
 *
 * Each case runs twice: in the runner's mode (fixed iocbs take the kvec
 * path in all of them) and with fs.aio_kvec = 3 ("off": every iocb takes
 * the stock path, fixed ones too, on their user addresses, after the same
 * checks of slot and ranges).  Both runs must give the same io_submit() and
 * event results and the same data (but in the unmapped case); the first must move fixed_iocbs (and not fallback_disabled), the
 * second fallback_disabled; no fixed iocb may take a FOLL_PIN pin in
 * either.  fs.aio_kvec is put back at exit, also on a fatal signal.
 *
 * The table: slot 0 a 2 MiB buffer, slot 1 empty, slot 2 a 2 MiB mapping
 * registered from its second page, slot 3 a 64 KiB mapping that is
 * munmap()ed before the last case.  Cases:
 *  - pagealigned: 3 segments at page-aligned addresses, logical-block
 *    multiples, written vectored-fixed, read back by a plain pread and by a
 *    2-segment fixed preadv into another buffer (gaps stay untouched);
 *  - sector512: 512-byte segments at 512-byte page offsets (works where the
 *    device takes 512-byte blocks at that alignment, else EINVAL);
 *  - nseg64: 64 segments of 1-3 blocks at page offsets that are multiples of
 *    the logical block size and the DMA alignment, read back into a
 *    different 64-segment shape;
 *  - crosspage: segments whose parts in each page are not whole blocks on
 *    4 KiB devices (or, with a 4-byte DMA alignment, on 512-byte ones):
 *    only the agreement with the off run (and the data, where it moves);
 *  - outside / straddle: a segment in unregistered memory, in another
 *    registered buffer, before the buffer, across either end of it: EFAULT
 *    from io_submit, the device and the buffers untouched;
 *  - badslot: fixed vectored I/O naming the empty slot 1, slot 4 (the
 *    table's size), slot 65535: EFAULT from io_submit;
 *  - nseg0 (whatever stock gives), nseg1025 (EINVAL);
 *  - devend: a 3-segment fixed read and write crossing the device end
 *    (short count), at the end (0, ENOSPC);
 *  - unmapped: slot 3 after munmap(): on the kvec path fixed writes still
 *    send the registered pages' data and fixed reads fill them (round
 *    trip); off, the user addresses are gone: EFAULT, as stock gives.
 */
#include "aiotest.h"
#include "kvec-aio.h"

#include <signal.h>
#include <sys/mman.h>

#define MODE_OFF	3
#define SEED		4242
#define BUFLEN		(2 * AIOT_MIB)
#define ULEN		(64 * AIOT_KIB)
#define NSLOTS		4
#define MAXOPS		16
#define MAXSEG		(UIO_MAXIOV + 1)
#define REGION		(4 * AIOT_MIB)	/* device bytes per case */
#define UNMAPPED_CASE	10		/* its region holds U's pattern */

static io_context_t ctx;
static int fd;
static uint8_t *W;		/* slot 0: [W, W + BUFLEN) */
static uint8_t *R, *Rb;		/* slot 2: [Rb = R + 4096, R + BUFLEN) */
static uint8_t *U;		/* slot 3: [U, U + ULEN), unmapped at the end */
static uint8_t *P;		/* plain, unregistered memory */
static unsigned int unit;	/* segment alignment: lbs, DMA alignment, >= 512 */
static int case_nr;
static bool unmapped;		/* U is gone: no checksum of what a read put there */

/* ------------------------------------------------------------ fs.aio_kvec */

static int sysctl_orig = -1;
static char sysctl_orig_str[16];

/* atexit and fatal signals: only async-signal-safe calls */
static void sysctl_restore(void)
{
	if (sysctl_orig >= 0)
		aiot_sysctl_write(sysctl_orig_str);
}

static void on_fatal(int sig)
{
	sysctl_restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void sysctl_guard(void)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGSEGV,
				    SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGALRM };
	struct sigaction sa;
	size_t i;

	sysctl_orig = aiot_sysctl_read();
	if (sysctl_orig < 0)
		aiot_die("cannot read %s", AIOT_SYSCTL);
	snprintf(sysctl_orig_str, sizeof(sysctl_orig_str), "%d\n", sysctl_orig);
	atexit(sysctl_restore);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fatal;
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

static void sysctl_set(int v)
{
	char s[16];
	int err;

	snprintf(s, sizeof(s), "%d\n", v);
	err = aiot_sysctl_write(s);
	if (err)
		aiot_die("fs.aio_kvec = %d: %s", v, aiot_rstr(err));
	if (aiot_sysctl_read() != v)
		aiot_die("fs.aio_kvec = %d did not stick (reads %d)", v, aiot_sysctl_read());
}

/* Registered pages not yet released, system-wide. */
static long long net_registered(void)
{
	return aiot_stat("pages_registered") - aiot_stat("pages_unregistered");
}

/* Wait (up to 5 s) until the registered pages are back to @net0. */
static bool registered_settle(long long net0)
{
	int i;

	for (i = 0; i < 500 && net_registered() != net0; i++)
		usleep(10000);
	return net_registered() == net0;
}

/* ---------------------------------------------------------------- a run */

/* What one run of a case did: compared between the two runs. */
struct outcome {
	int n;
	char tag[MAXOPS][64];
	struct aiot_res r[MAXOPS];
	uint64_t crc[MAXOPS];		/* of what a read put into its segments */
	bool has_crc[MAXOPS];
	int fixed_queued;		/* fixed iocbs io_submit() took */
	int fixed_moved;		/* of those, events with res > 0 */
};

static struct outcome *cur;
static int run_nr;			/* 0: the runner's mode, 1: fs.aio_kvec = 3 */
static const char *const run_name[2] = { "mode", "off" };

static struct aiot_res record(const char *tag, struct aiot_res r, bool fixed)
{
	int i = cur->n;

	if (i >= MAXOPS)
		aiot_die("more than %d operations in a case", MAXOPS);
	snprintf(cur->tag[i], sizeof(cur->tag[i]), "%s", tag);
	cur->r[i] = r;
	cur->has_crc[i] = false;
	cur->n++;
	if (fixed && r.submit == 1) {
		cur->fixed_queued++;
		if (r.res > 0)
			cur->fixed_moved++;
	}
	return r;
}

static void record_crc(const struct iovec *iov, int n, long res)
{
	uint64_t h = 0;
	long left = res;
	int i;

	if (res <= 0)
		return;
	/* chain the per-segment sums over the bytes the read returned */
	for (i = 0; i < n && left > 0; i++) {
		size_t len = (size_t)left < iov[i].iov_len ? (size_t)left : iov[i].iov_len;

		h = h * 0x100000001b3ULL ^ aiot_csum(iov[i].iov_base, len);
		left -= (long)len;
	}
	cur->crc[cur->n - 1] = h;
	cur->has_crc[cur->n - 1] = !aiot.nodata;
}

/* A fixed preadv/pwritev of iov[0..n) at off naming @slot; checks no pin. */
static struct aiot_res fixed_vec(const char *tag, int write, const struct iovec *iov,
				 int n, uint64_t off, unsigned int slot)
{
	long long pins0 = aiot_vmstat("nr_foll_pin_acquired"), pins1;
	struct aiot_res r;
	struct iocb cb;

	if (write)
		kvec_aio_prep_pwritev_fixed(&cb, fd, iov, n, (long long)off, slot);
	else
		kvec_aio_prep_preadv_fixed(&cb, fd, iov, n, (long long)off, slot);
	r = record(tag, aiot_submit_wait(ctx, &cb), true);
	pins1 = aiot_vmstat("nr_foll_pin_acquired");
	CHECK(pins1 == pins0, "%s [%s run]: a fixed iocb took %lld FOLL_PIN pins",
	      tag, run_name[run_nr], pins1 - pins0);
	if (!write && r.submit == 1 && !unmapped)
		record_crc(iov, n, r.res);
	return r;
}

/* A plain (not fixed) pread into P: the stock reference in the off run. */
static struct aiot_res plain_read(const char *tag, size_t len, uint64_t off)
{
	struct aiot_res r;
	struct iovec v = { P, len };

	memset(P, AIOT_POISON, len);
	r = record(tag, aiot_pread(ctx, fd, P, len, (long long)off), false);
	if (r.submit == 1)
		record_crc(&v, 1, r.res);
	return r;
}

static void fill_segs(const struct iovec *iov, int n, uint64_t seed, uint64_t off)
{
	int i;

	for (i = 0; i < n; i++) {
		aiot_fill(iov[i].iov_base, iov[i].iov_len, seed, off);
		off += iov[i].iov_len;
	}
}

static uint64_t total_of(const struct iovec *iov, int n)
{
	uint64_t t = 0;
	int i;

	for (i = 0; i < n; i++)
		t += iov[i].iov_len;
	return t;
}

/*
 * The first @res bytes of the segments hold (seed, off...), the rest of
 * each segment and every byte of [base, base + len) outside the segments
 * is still poison.
 */
static bool verify_layout(const char *what, const struct iovec *iov, int n, long res,
			  uint64_t seed, uint64_t off, const uint8_t *base, size_t len)
{
	uint8_t *copy = aiot_alloc(len);
	bool ok = true;
	long left = res > 0 ? res : 0;
	int i;

	if (aiot.nodata) {
		free(copy);
		return true;
	}
	memcpy(copy, base, len);
	for (i = 0; i < n; i++) {
		size_t at = (const uint8_t *)iov[i].iov_base - base;
		size_t got = (size_t)left < iov[i].iov_len ? (size_t)left : iov[i].iov_len;
		char w[160];

		snprintf(w, sizeof(w), "%s [%s run]: segment %d", what, run_name[run_nr], i);
		if (at + iov[i].iov_len > len)
			aiot_die("%s: segment outside its region", what);
		ok = ok && aiot_verify(w, base + at, got, seed, off);
		off += got;
		left -= (long)got;
		memset(copy + at, AIOT_POISON, got);
	}
	if (ok) {
		char w[160];

		snprintf(w, sizeof(w), "%s [%s run]: bytes outside the data read", what,
			 run_name[run_nr]);
		ok = aiot_verify_byte(w, copy, len, AIOT_POISON);
	}
	free(copy);
	return ok;
}

/* Device region of the current case; scrubbed with another pattern. */
static uint64_t region(void)
{
	return (uint64_t)case_nr * REGION;
}

static uint64_t scrub_seed(void)
{
	return SEED + 1000 + (uint64_t)case_nr;
}

static void scrub(uint64_t off, uint64_t len)
{
	CHECK(aiot_sync_write_pattern(fd, off, len, scrub_seed()), "scrub device");
}

/* Expect a bad-segment iocb refused by io_submit with EFAULT, nothing moved. */
static void expect_efault(const char *tag, int write, const struct iovec *iov, int n,
			  unsigned int slot)
{
	struct aiot_res r = fixed_vec(tag, write, iov, n, region(), slot);

	CHECK(r.submit == -EFAULT, "%s [%s run]: %s, want submit EFAULT", tag,
	      run_name[run_nr], aiot_resstr(r));
}

/* ------------------------------------------------------------------ cases */

static void c_pagealigned(void)
{
	const unsigned int b = aiot.lbs;
	struct iovec w[3] = {
		{ W, 2 * AIOT_PAGE + b },
		{ W + 4 * AIOT_PAGE, b },
		{ W + 6 * AIOT_PAGE, AIOT_PAGE + 2 * b },
	};
	uint64_t tot = total_of(w, 3), off = region();
	struct iovec rd[2] = {
		{ Rb + 2 * AIOT_PAGE, AIOT_PAGE + b },
		{ Rb + 5 * AIOT_PAGE, tot - (AIOT_PAGE + b) },
	};
	struct aiot_res r;

	scrub(off, 64 * AIOT_KIB);
	fill_segs(w, 3, SEED, off);
	r = fixed_vec("pwritev-fixed nseg=3", 1, w, 3, off, 0);
	CHECK(aiot_is(r, (long)tot), "pagealigned write [%s run]: %s, want %llu",
	      run_name[run_nr], aiot_resstr(r), (unsigned long long)tot);
	CHECK(aiot_sync_verify(fd, off, tot, SEED), "pagealigned: device after fixed pwritev");
	r = plain_read("pread-plain", tot, off);
	CHECK(aiot_is(r, (long)tot), "pagealigned plain read: %s", aiot_resstr(r));
	aiot_verify("plain pread of a fixed pwritev", P, tot, SEED, off);

	memset(R, AIOT_POISON, BUFLEN);
	r = fixed_vec("preadv-fixed nseg=2", 0, rd, 2, off, 2);
	CHECK(aiot_is(r, (long)tot), "pagealigned read [%s run]: %s", run_name[run_nr],
	      aiot_resstr(r));
	verify_layout("pagealigned fixed preadv", rd, 2, r.submit == 1 ? r.res : 0, SEED,
		      off, R, BUFLEN);
}

static void c_sector512(void)
{
	struct iovec w[4], rd[4];
	static const unsigned int woff[4] = { 512, 1536, 3584, 2048 };
	static const unsigned int roff[4] = { 3584, 512, 1024, 2560 };
	uint64_t off = region();
	bool ok = aiot.lbs <= 512;
	struct aiot_res r;
	int i;

	for (i = 0; i < 4; i++) {
		w[i] = (struct iovec){ W + i * AIOT_PAGE + woff[i], 512 };
		rd[i] = (struct iovec){ Rb + 2 * i * AIOT_PAGE + roff[i], 512 };
		if (((uintptr_t)w[i].iov_base | (uintptr_t)rd[i].iov_base) & aiot.dma_mask)
			ok = false;
	}
	scrub(off, 64 * AIOT_KIB);
	fill_segs(w, 4, SEED + 1, off);
	r = fixed_vec("pwritev-fixed nseg=4 seg=512", 1, w, 4, off, 0);
	if (ok) {
		CHECK(aiot_is(r, 2048), "sector512 write [%s run]: %s, want 2048",
		      run_name[run_nr], aiot_resstr(r));
		CHECK(aiot_sync_verify(fd, off, 2048, SEED + 1), "sector512: device");
	} else {
		CHECK(r.submit == -EINVAL || aiot_is(r, -EINVAL),
		      "sector512 write on lbs %u dma mask %u [%s run]: %s, want EINVAL",
		      aiot.lbs, aiot.dma_mask, run_name[run_nr], aiot_resstr(r));
		CHECK(aiot_sync_verify(fd, off, 64 * AIOT_KIB, scrub_seed()),
		      "sector512: a refused write changed the device");
		/* the data for the read below, written by pwrite(2) */
		CHECK(aiot_sync_write_pattern(fd, off, 64 * AIOT_KIB, SEED + 1), "pre-write");
	}
	memset(R, AIOT_POISON, BUFLEN);
	r = fixed_vec("preadv-fixed nseg=4 seg=512", 0, rd, 4, off, 2);
	if (ok)
		CHECK(aiot_is(r, 2048), "sector512 read [%s run]: %s, want 2048",
		      run_name[run_nr], aiot_resstr(r));
	else
		CHECK(r.submit == -EINVAL || aiot_is(r, -EINVAL),
		      "sector512 read [%s run]: %s, want EINVAL", run_name[run_nr],
		      aiot_resstr(r));
	verify_layout("sector512 fixed preadv", rd, 4, ok && r.submit == 1 ? r.res : 0,
		      SEED + 1, off, R, BUFLEN);
}

static void c_nseg64(void)
{
	const unsigned int b = aiot.lbs;
	struct iovec w[64], rd[64];
	uint64_t off = region(), tot;
	struct aiot_res r;
	int i;

	/*
	 * Page offsets that are multiples of unit (the logical block size or
	 * the DMA alignment, at least 512): every page's part of a segment is
	 * then whole blocks too, which a bio_vec iterator over the buffer's
	 * pages needs (crosspage below has the other kind).
	 */
	for (i = 0; i < 64; i++) {
		size_t po = unit < AIOT_PAGE ? (size_t)(i * unit) % AIOT_PAGE : 0;
		size_t pr = unit < AIOT_PAGE ? (size_t)(i * 3 * unit) % AIOT_PAGE : 0;

		w[i] = (struct iovec){ W + (size_t)i * 4 * AIOT_PAGE + po, (1 + i % 3) * (size_t)b };
		rd[i] = (struct iovec){ Rb + (size_t)i * 4 * AIOT_PAGE + pr,
					(1 + (63 - i) % 3) * (size_t)b };
	}
	tot = total_of(w, 64);
	if (total_of(rd, 64) != tot)
		aiot_die("nseg64: layouts of different sizes");
	scrub(off, tot);
	fill_segs(w, 64, SEED + 2, off);
	r = fixed_vec("pwritev-fixed nseg=64", 1, w, 64, off, 0);
	CHECK(aiot_is(r, (long)tot), "nseg64 write [%s run]: %s, want %llu", run_name[run_nr],
	      aiot_resstr(r), (unsigned long long)tot);
	CHECK(aiot_sync_verify(fd, off, tot, SEED + 2), "nseg64: device after fixed pwritev");
	memset(R, AIOT_POISON, BUFLEN);
	r = fixed_vec("preadv-fixed nseg=64", 0, rd, 64, off, 2);
	CHECK(aiot_is(r, (long)tot), "nseg64 read [%s run]: %s", run_name[run_nr],
	      aiot_resstr(r));
	verify_layout("nseg64 fixed preadv", rd, 64, r.submit == 1 ? r.res : 0, SEED + 2, off,
		      R, BUFLEN);
}

/*
 * Segments whose pages may hold parts that are not whole logical blocks: a
 * block-sized segment at page offset 512 and one starting 512 bytes before
 * a page end (on 4 KiB devices: 512 + 3584 bytes in two pages), and (DMA
 * alignment below 256) 512 bytes starting 256 bytes before a page end.
 * A plain iovec of the same shape is aligned; whether a registered buffer's
 * pages are is what the stock path says with fs.aio_kvec = 3, so only the
 * two runs' agreement and, where it moves data, the data are checked.
 */
static void c_crosspage(void)
{
	const unsigned int b = aiot.lbs;
	struct iovec w[2] = {
		{ W + 512, b },
		{ W + 3 * AIOT_PAGE - 512, b },
	};
	struct iovec rd[2] = {
		{ Rb + 512, b },
		{ Rb + 3 * AIOT_PAGE - 512, b },
	};
	struct iovec half = { Rb + 5 * AIOT_PAGE - 256, aiot_round_up(512, b) };
	uint64_t off = region();
	struct aiot_res r;

	scrub(off, 64 * AIOT_KIB);
	fill_segs(w, 2, SEED + 7, off);
	r = fixed_vec("pwritev-fixed seg-at-512", 1, w, 2, off, 0);
	/* on a 512-byte device every page holds whole blocks of these */
	if (aiot.lbs == 512)
		CHECK(aiot_is(r, 1024), "crosspage write on a 512-byte device [%s run]: %s",
		      run_name[run_nr], aiot_resstr(r));
	if (aiot_is(r, 2L * b))
		CHECK(aiot_sync_verify(fd, off, 2ULL * b, SEED + 7), "crosspage: device");
	else
		CHECK(aiot_sync_verify(fd, off, 64 * AIOT_KIB, scrub_seed()),
		      "crosspage: a failed write (%s) changed the device", aiot_resstr(r));
	CHECK(aiot_sync_write_pattern(fd, off, 64 * AIOT_KIB, SEED + 8), "pre-write");
	memset(R, AIOT_POISON, BUFLEN);
	r = fixed_vec("preadv-fixed seg-at-512", 0, rd, 2, off, 2);
	if (aiot.lbs == 512)
		CHECK(aiot_is(r, 1024), "crosspage read on a 512-byte device [%s run]: %s",
		      run_name[run_nr], aiot_resstr(r));
	verify_layout("crosspage fixed preadv", rd, 2, r.submit == 1 ? r.res : 0, SEED + 8,
		      off, R, BUFLEN);
	if (aiot.dma_mask < 255) {
		memset(R, AIOT_POISON, BUFLEN);
		r = fixed_vec("preadv-fixed 256-before-page-end", 0, &half, 1, off, 2);
		verify_layout("crosspage fixed preadv across a page end", &half, 1,
			      r.submit == 1 ? r.res : 0, SEED + 8, off, R, BUFLEN);
	}
}

static void c_outside(void)
{
	struct iovec v[2] = { { W, AIOT_PAGE }, { P, AIOT_PAGE } };
	uint64_t off = region();

	scrub(off, 64 * AIOT_KIB);
	memset(P, AIOT_POISON, AIOT_PAGE);
	memset(R, AIOT_POISON, BUFLEN);
	expect_efault("pwritev-fixed seg-unregistered", 1, v, 2, 0);
	expect_efault("preadv-fixed seg-unregistered", 0, v, 2, 0);
	v[1].iov_base = Rb;		/* registered, but as slot 2 */
	expect_efault("pwritev-fixed seg-other-slot", 1, v, 2, 0);
	expect_efault("preadv-fixed seg-other-slot", 0, v, 2, 0);
	v[0] = (struct iovec){ Rb + AIOT_PAGE, AIOT_PAGE };
	v[1] = (struct iovec){ R, AIOT_PAGE };	/* R's first page: not registered */
	expect_efault("preadv-fixed seg-before-buffer", 0, v, 2, 2);
	CHECK(aiot_sync_verify(fd, off, 64 * AIOT_KIB, scrub_seed()),
	      "outside: a refused write changed the device");
	aiot_verify_byte("outside: plain buffer after refused reads", P, AIOT_PAGE, AIOT_POISON);
	aiot_verify_byte("outside: slot 2 after refused reads", R, BUFLEN, AIOT_POISON);
}

static void c_straddle(void)
{
	struct iovec v[3] = {
		{ W, AIOT_PAGE },
		{ W + 2 * AIOT_PAGE, AIOT_PAGE },
		{ W + BUFLEN - AIOT_PAGE, 2 * AIOT_PAGE },	/* past the end */
	};
	uint64_t off = region();

	scrub(off, 64 * AIOT_KIB);
	memset(W + BUFLEN - AIOT_PAGE, 0x3c, AIOT_PAGE);
	memset(R, AIOT_POISON, BUFLEN);
	expect_efault("pwritev-fixed last-seg-past-end", 1, v, 3, 0);
	expect_efault("preadv-fixed last-seg-past-end", 0, v, 3, 0);
	v[2] = (struct iovec){ Rb - 512, AIOT_PAGE };	/* across the start */
	expect_efault("preadv-fixed seg-across-start", 0, v + 2, 1, 2);
	v[2] = (struct iovec){ Rb + BUFLEN - AIOT_PAGE - 512, AIOT_PAGE };
	expect_efault("preadv-fixed seg-across-end", 0, v + 2, 1, 2);
	CHECK(aiot_sync_verify(fd, off, 64 * AIOT_KIB, scrub_seed()),
	      "straddle: a refused write changed the device");
	aiot_verify_byte("straddle: slot 2 after refused reads", R, BUFLEN, AIOT_POISON);
	aiot_verify_byte("straddle: slot 0's last page", W + BUFLEN - AIOT_PAGE, AIOT_PAGE, 0x3c);
}

static void c_badslot(void)
{
	struct iovec v[2] = { { W, AIOT_PAGE }, { W + AIOT_PAGE, AIOT_PAGE } };
	uint64_t off = region();

	scrub(off, 64 * AIOT_KIB);
	expect_efault("preadv-fixed empty-slot", 0, v, 2, 1);
	expect_efault("pwritev-fixed empty-slot", 1, v, 2, 1);
	expect_efault("preadv-fixed slot=table-size", 0, v, 2, NSLOTS);
	expect_efault("pwritev-fixed slot=65535", 1, v, 2, 65535);
	CHECK(aiot_sync_verify(fd, off, 64 * AIOT_KIB, scrub_seed()),
	      "badslot: a refused write changed the device");
}

static void c_nseg0(void)
{
	struct iovec v[1] = { { W, AIOT_PAGE } };

	fixed_vec("preadv-fixed nseg=0", 0, v, 0, region(), 0);
	fixed_vec("pwritev-fixed nseg=0", 1, v, 0, region(), 0);
	/* compared between the runs only: the stock result, whatever it is */
}

static void c_nseg1025(void)
{
	static struct iovec v[MAXSEG];
	struct aiot_res r;
	int i;

	for (i = 0; i < MAXSEG; i++)
		v[i] = (struct iovec){ W + (size_t)(i % 256) * AIOT_PAGE, aiot.lbs };
	r = fixed_vec("preadv-fixed nseg=1025", 0, v, MAXSEG, region(), 0);
	CHECK(r.submit == -EINVAL, "nseg1025 read [%s run]: %s, want submit EINVAL",
	      run_name[run_nr], aiot_resstr(r));
	r = fixed_vec("pwritev-fixed nseg=1025", 1, v, MAXSEG, region(), 0);
	CHECK(r.submit == -EINVAL, "nseg1025 write [%s run]: %s, want submit EINVAL",
	      run_name[run_nr], aiot_resstr(r));
}

/* As t-device-end's vec(): 3 x 4 KiB segments starting vrel before the end. */
static void c_devend(void)
{
	const uint64_t S = aiot.size;
	const long vrel = aiot.lbs <= 2048 ? 6144 : 4096;
	struct iovec rd[3], w[3];
	struct aiot_res r;
	int i;

	for (i = 0; i < 3; i++) {
		rd[i] = (struct iovec){ Rb + (size_t)i * 2 * AIOT_PAGE, AIOT_PAGE };
		w[i] = (struct iovec){ W + (size_t)i * 2 * AIOT_PAGE, AIOT_PAGE };
	}
	CHECK(aiot_sync_write_pattern(fd, S - 64 * AIOT_KIB, 64 * AIOT_KIB, SEED + 3),
	      "devend pre-write");
	memset(R, AIOT_POISON, BUFLEN);
	r = fixed_vec("preadv-fixed across-end", 0, rd, 3, S - (uint64_t)vrel, 2);
	CHECK(aiot_is(r, vrel), "devend read [%s run]: %s, want %ld", run_name[run_nr],
	      aiot_resstr(r), vrel);
	verify_layout("devend fixed preadv", rd, 3, r.submit == 1 ? r.res : 0, SEED + 3,
		      S - (uint64_t)vrel, R, BUFLEN);
	r = fixed_vec("preadv-fixed at-end", 0, rd, 3, S, 2);
	CHECK(aiot_is(r, 0), "devend read at the end [%s run]: %s, want 0", run_name[run_nr],
	      aiot_resstr(r));

	fill_segs(w, 3, SEED + 4, S - (uint64_t)vrel);
	r = fixed_vec("pwritev-fixed across-end", 1, w, 3, S - (uint64_t)vrel, 0);
	CHECK(aiot_is(r, vrel), "devend write [%s run]: %s, want %ld", run_name[run_nr],
	      aiot_resstr(r), vrel);
	CHECK(aiot_sync_verify(fd, S - (uint64_t)vrel, (uint64_t)vrel, SEED + 4),
	      "devend: device after the short fixed write");
	r = fixed_vec("pwritev-fixed at-end", 1, w, 3, S, 0);
	CHECK(aiot_is(r, -ENOSPC), "devend write at the end [%s run]: %s, want ENOSPC",
	      run_name[run_nr], aiot_resstr(r));
}

/*
 * Slot 3 after munmap(): only the registered pages hold it.  Written from:
 * the device gets U's old content.  Read into, then written from: the
 * device data makes the round trip through the registered pages.
 */
static void c_unmapped(void)
{
	uint64_t off = region(), dx = off + AIOT_MIB, dy = off + 2 * AIOT_MIB;
	struct iovec w[2] = { { U, 16 * AIOT_KIB }, { U + 32 * AIOT_KIB, 16 * AIOT_KIB } };
	struct iovec mid = { U + 16 * AIOT_KIB, 16 * AIOT_KIB };
	uint8_t *chk = aiot_alloc(16 * AIOT_KIB);
	struct aiot_res r;

	scrub(off, 3 * AIOT_MIB);
	r = fixed_vec("pwritev-fixed unmapped", 1, w, 2, off, 3);
	if (run_nr) {
		/* off: the stock path on addresses that are no longer mapped */
		CHECK(aiot_is(r, -EFAULT), "unmapped write [%s run]: %s, want EFAULT",
		      run_name[run_nr], aiot_resstr(r));
		free(chk);
		return;
	}
	CHECK(aiot_is(r, 32 * AIOT_KIB), "unmapped write [%s run]: %s", run_name[run_nr],
	      aiot_resstr(r));
	CHECK(aiot_sync_verify(fd, off, 32 * AIOT_KIB, SEED + 5),
	      "unmapped [%s run]: device after a fixed write from unmapped memory",
	      run_name[run_nr]);

	CHECK(aiot_sync_write_pattern(fd, dx, 16 * AIOT_KIB, SEED + 6 + (uint64_t)run_nr),
	      "pre-write");
	r = fixed_vec("preadv-fixed unmapped", 0, &mid, 1, dx, 3);
	CHECK(aiot_is(r, 16 * AIOT_KIB), "unmapped read [%s run]: %s", run_name[run_nr],
	      aiot_resstr(r));
	r = fixed_vec("pwritev-fixed unmapped-back", 1, &mid, 1, dy, 3);
	CHECK(aiot_is(r, 16 * AIOT_KIB), "unmapped write back [%s run]: %s", run_name[run_nr],
	      aiot_resstr(r));
	memset(chk, AIOT_POISON, 16 * AIOT_KIB);
	CHECK(pread(fd, chk, 16 * AIOT_KIB, (off_t)dy) == (ssize_t)(16 * AIOT_KIB), "pread");
	aiot_verify("unmapped: data read into registered pages and written back", chk,
		    16 * AIOT_KIB, SEED + 6 + (uint64_t)run_nr, dx);
	free(chk);
}

/* ------------------------------------------------------------------ driver */

/* @same: both runs must agree (every case but the unmapped one) */
static void run_case2(const char *name, void (*fn)(void), bool same)
{
	struct outcome o[2];
	int run, i;

	memset(o, 0, sizeof(o));
	for (run = 0; run < 2; run++) {
		long long fix0, dis0, fix1, dis1;

		run_nr = run;
		cur = &o[run];
		sysctl_set(run ? MODE_OFF : sysctl_orig);
		fix0 = aiot_stat("fixed_iocbs");
		dis0 = aiot_stat("fallback_disabled");
		fn();
		fix1 = aiot_stat("fixed_iocbs");
		dis1 = aiot_stat("fallback_disabled");
		if (run == 0) {
			CHECK(fix1 - fix0 >= cur->fixed_moved && fix1 - fix0 <= cur->fixed_queued,
			      "%s: fixed_iocbs +%lld with %d fixed iocbs queued, %d moving data: "
			      "not the kvec path", name, fix1 - fix0, cur->fixed_queued,
			      cur->fixed_moved);
			CHECK(dis1 == dis0, "%s: fallback_disabled +%lld with fs.aio_kvec = %d",
			      name, dis1 - dis0, sysctl_orig);
		} else {
			CHECK(dis1 - dis0 >= cur->fixed_moved,
			      "%s: fallback_disabled +%lld with fs.aio_kvec = 3 and %d fixed iocbs "
			      "moving data: they did not take the stock path", name, dis1 - dis0,
			      cur->fixed_moved);
		}
	}
	sysctl_set(sysctl_orig);

	CHECK(o[0].n == o[1].n || !same,
	      "%s: %d operations in the first run, %d in the off run", name, o[0].n, o[1].n);
	for (i = 0; i < o[0].n && (i < o[1].n || !same); i++) {
		if (o[0].has_crc[i])
			aiot_R("%s %s %s crc=%016llx", name, o[0].tag[i], aiot_resstr(o[0].r[i]),
			       (unsigned long long)o[0].crc[i]);
		else
			aiot_R("%s %s %s", name, o[0].tag[i], aiot_resstr(o[0].r[i]));
		if (!same)
			continue;
		CHECK(o[0].r[i].submit == o[1].r[i].submit && o[0].r[i].res == o[1].r[i].res,
		      "%s %s: %s with fs.aio_kvec = %d, %s with fs.aio_kvec = 3 (stock)", name,
		      o[0].tag[i], aiot_resstr(o[0].r[i]), sysctl_orig, aiot_resstr(o[1].r[i]));
		CHECK(o[0].has_crc[i] == o[1].has_crc[i] &&
		      (!o[0].has_crc[i] || o[0].crc[i] == o[1].crc[i]),
		      "%s %s: data read differs from the off run's (crc %016llx vs %016llx)",
		      name, o[0].tag[i], (unsigned long long)o[0].crc[i],
		      (unsigned long long)o[1].crc[i]);
	}
	case_nr++;
}

static void run_case(const char *name, void (*fn)(void))
{
	run_case2(name, fn, true);
}

int main(void)
{
	struct iovec tab[NSLOTS];
	long long reg0, net0, pins_base;
	int ret;

	aiot_init("t-fixed-vec");
	if (aiot_stat("fixed_iocbs") < 0)
		aiot_skip("kernel without registered kvecs");
	aiot_require_size(16 * REGION);
	sysctl_guard();
	/* the features this test is about, each a clear failure if missing */
	ret = aiot_sysctl_write("3\n");
	if (ret || aiot_sysctl_read() != MODE_OFF)
		aiot_die("fs.aio_kvec = 3 (every iocb on the stock path) refused: %s; "
			 "kernel without the off mode", aiot_rstr(ret ? ret : -EINVAL));
	sysctl_set(sysctl_orig);
	if (aiot_stat("fallback_disabled") < 0)
		aiot_die("/proc/fs/aio_kvec has no fallback_disabled counter");

	unit = aiot.dma_mask + 1 > 512 ? aiot.dma_mask + 1 : 512;
	if (unit < aiot.lbs)
		unit = aiot.lbs;
	fd = aiot_open_dev(O_RDWR | O_DIRECT);
	ctx = aiot_ctx(8);
	W = aiot_map(BUFLEN);
	R = aiot_map(BUFLEN);
	Rb = R + AIOT_PAGE;
	U = aiot_map(ULEN);
	P = aiot_alloc(AIOT_MIB);
	/* U's content, which the unmapped case writes out */
	aiot_fill(U, 16 * AIOT_KIB, SEED + 5, UNMAPPED_CASE * REGION);
	aiot_fill(U + 32 * AIOT_KIB, 16 * AIOT_KIB, SEED + 5,
		  UNMAPPED_CASE * REGION + 16 * AIOT_KIB);

	tab[0] = (struct iovec){ W, BUFLEN };
	tab[1] = (struct iovec){ NULL, 0 };
	tab[2] = (struct iovec){ Rb, BUFLEN - AIOT_PAGE };
	tab[3] = (struct iovec){ U, ULEN };
	pins_base = aiot_pins_out();
	net0 = net_registered();
	reg0 = aiot_stat("pages_registered");
	ret = kvec_aio_register(ctx, tab, NSLOTS);
	aiot_R("register nslots=4 sparse res=%s", aiot_rstr(ret));
	if (ret != NSLOTS)
		aiot_die("register of 4 slots, slot 1 empty: %s, want 4", aiot_rstr(ret));
	CHECK(aiot_stat("pages_registered") - reg0 ==
	      (long long)((2 * BUFLEN - AIOT_PAGE + ULEN) / AIOT_PAGE),
	      "pages_registered +%lld for a sparse table", aiot_stat("pages_registered") - reg0);

	run_case("pagealigned", c_pagealigned);		/* region 0 */
	run_case("sector512", c_sector512);		/* 1 */
	run_case("nseg64", c_nseg64);			/* 2 */
	run_case("crosspage", c_crosspage);		/* 3 */
	run_case("outside", c_outside);			/* 4 */
	run_case("straddle", c_straddle);		/* 5 */
	run_case("badslot", c_badslot);			/* 6 */
	run_case("nseg0", c_nseg0);			/* 7 */
	run_case("nseg1025", c_nseg1025);		/* 8 */
	run_case("devend", c_devend);			/* the device end */
	aiot_unmap(U, ULEN);
	unmapped = true;
	if (case_nr != UNMAPPED_CASE)
		aiot_die("the unmapped case is number %d, not %d", case_nr, UNMAPPED_CASE);
	run_case2("unmapped", c_unmapped, false);

	ret = kvec_aio_unregister(ctx);
	aiot_R("unregister res=%s", aiot_rstr(ret));
	CHECK(ret == NSLOTS, "unregister: %s, want 4", aiot_rstr(ret));
	aiot_ctx_destroy(ctx);
	aiot_pins_settle("after unregister and io_destroy", pins_base);
	CHECK(registered_settle(net0), "registered pages not all released: %lld left",
	      net_registered() - net0);
	free(P);
	aiot_unmap(W, BUFLEN);
	aiot_unmap(R, BUFLEN);
	close(fd);
	return aiot_finish();
}
