// SPDX-License-Identifier: GPL-2.0
/*
 * t-stress: a verifying random load.  A fixed count of I/Os (STRESS_IOS,
 * default 3000) with random directions, sizes (one block to 4 MiB,
 * log-uniform, so multi-bio I/Os come up), offsets, buffer offsets within
 * the DMA alignment and 1..8 segments, up to 256 in flight.  The lower half
 * of the area gets IOCB_FLAG_KVEC, the upper half does not, so with
 * fs.aio_kvec=0 both paths run at once side by side.  No two I/Os in flight
 * overlap unless both read.  A shadow map holds the seed each block was
 * last written with: every read is checked against it when it completes,
 * and the whole area is read back through pread(2) at the end.  Every I/O
 * must complete exactly once with its full length.  The R line carries the
 * count of I/Os and of blocks that differed ("mismatches="); /proc/fs/aio_kvec must
 * have seen exactly the iocbs the mode sends down the kvec path.
 */
#include "aiotest.h"

#define AREA		(64 * AIOT_MIB)
#define AREA_OFF	(16 * AIOT_MIB)
#define MAXQD		256
#define MAXLEN		(4 * AIOT_MIB)
#define MAXSEGS		8
#define INFLIGHT_BYTES	(96 * AIOT_MIB)

struct slot {
	struct iocb cb;
	struct iovec iov[MAXSEGS];
	uint8_t *mem;		/* allocation; the segments lie inside */
	uint64_t off, len;
	uint32_t seed;		/* writes: the data's seed */
	bool busy, write;
};

static struct slot slots[MAXQD];
static uint32_t *shadow;	/* seed per block of the area, 0: never written */
static uint64_t nblocks, rng = 0x9e3779b97f4a7c15ULL;
static long long mismatches, nreads, nwrites, nvec, nflagged, bytes;
static uint64_t inflight_bytes;
static int fd;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint64_t rnd_below(uint64_t n)
{
	return rnd() % n;
}

/* Does [off, off+len) meet an I/O in flight that is not a read like this one? */
static bool conflicts(uint64_t off, uint64_t len, bool write)
{
	int i;

	for (i = 0; i < MAXQD; i++) {
		struct slot *s = &slots[i];

		if (s->busy && off < s->off + s->len && s->off < off + len &&
		    (write || s->write))
			return true;
	}
	return false;
}

/* Blocks of buf (device offset off) that do not hold their shadow seed's data. */
static long long check_blocks(const uint8_t *buf, uint64_t off, uint64_t len)
{
	uint64_t b, lbs = aiot.lbs;
	long long bad = 0;

	if (aiot.nodata)
		return 0;
	for (b = 0; b < len; b += lbs) {
		uint32_t seed = shadow[(off + b - AREA_OFF) / lbs];
		bool ok;

		ok = aiot_verify("stress block", buf + b, lbs, seed, off + b);
		bad += !ok;
	}
	return bad;
}

static void prepare(struct slot *s, int idx)
{
	uint64_t lbs = aiot.lbs, half = AREA / 2, maxblocks = MAXLEN / lbs;
	uint64_t len, off, align, pos, left;
	int nseg, i, shift = 0, tries = 0;
	uint8_t *p;
	bool low;

	while ((2ULL << shift) <= maxblocks)
		shift++;
	do {
		/* log-uniform length: a power of two blocks, then up to twice it */
		int sh = (int)rnd_below((uint64_t)shift + 1);

		len = (1ULL << sh) + rnd_below(1ULL << sh);
		len = (len > maxblocks ? maxblocks : len) * lbs;
		low = rnd() & 1;
		off = rnd_below((half - len) / lbs + 1) * lbs + (low ? 0 : half);
		s->write = rnd() & 1;
		if (++tries > 1000)
			aiot_die("no free range after 1000 tries");
	} while (conflicts(AREA_OFF + off, len, s->write));

	s->off = AREA_OFF + off;
	s->len = len;
	nseg = (rnd() & 3) ? 1 : 1 + (int)rnd_below(MAXSEGS);
	if ((uint64_t)nseg > len / lbs)
		nseg = (int)(len / lbs);
	align = (uint64_t)aiot.dma_mask + 1;
	/* room for a shifted start and a gap before every segment */
	if (posix_memalign((void **)&s->mem, AIOT_PAGE, len + (nseg + 1) * AIOT_PAGE))
		aiot_die("posix_memalign");
	p = s->mem + rnd_below(AIOT_PAGE / align) * align;
	s->seed = s->write ? (uint32_t)(2 + rnd_below(1u << 30)) : 0;
	for (i = 0, left = len, pos = s->off; i < nseg; i++) {
		uint64_t seg = i == nseg - 1 ? left :
			(1 + rnd_below(left / lbs - (uint64_t)(nseg - 1 - i))) * lbs;

		s->iov[i].iov_base = p;
		s->iov[i].iov_len = seg;
		if (s->write)
			aiot_fill(p, seg, s->seed, pos);
		else
			memset(p, AIOT_POISON, seg);
		/* sometimes a gap, so segments do not always continue a page */
		p += seg + rnd_below(2) * align;
		left -= seg;
		pos += seg;
	}
	if (nseg > 1) {
		(s->write ? aiot_prep_pwritev : aiot_prep_preadv)(&s->cb, fd, s->iov, nseg,
								  (long long)s->off);
		nvec++;
	} else {
		(s->write ? aiot_prep_pwrite : aiot_prep_pread)(&s->cb, fd, s->iov[0].iov_base,
								len, (long long)s->off);
	}
	s->cb.data = (void *)(uintptr_t)idx;
	if (low) {
		s->cb.u.c.flags |= IOCB_FLAG_KVEC;
		nflagged++;
	}
	s->busy = true;
	inflight_bytes += len;
}

static void complete(struct slot *s, long res)
{
	uint64_t lbs = aiot.lbs, b;
	int i;

	CHECK(res == (long)s->len, "%s off=%llu len=%llu: res %s",
	      s->write ? "write" : "read", (unsigned long long)s->off,
	      (unsigned long long)s->len, aiot_rstr(res));
	if (s->write) {
		if (res == (long)s->len)
			for (b = 0; b < s->len; b += lbs)
				shadow[(s->off + b - AREA_OFF) / lbs] = s->seed;
		nwrites++;
	} else {
		uint64_t pos = s->off;
		long long bad = 0;

		for (i = 0; i < MAXSEGS && pos < s->off + s->len; i++) {
			bad += check_blocks(s->iov[i].iov_base, pos, s->iov[i].iov_len);
			pos += s->iov[i].iov_len;
		}
		if (bad)
			fprintf(stderr, "t-stress: read off=%llu len=%llu: %lld blocks differ\n",
				(unsigned long long)s->off, (unsigned long long)s->len, bad);
		mismatches += bad;
		nreads++;
	}
	bytes += (long long)s->len;
	inflight_bytes -= s->len;
	free(s->mem);
	s->busy = false;
}

int main(void)
{
	long long total = 3000, submitted = 0, done = 0, sub0;
	unsigned char seen[MAXQD];
	struct io_event ev[MAXQD];
	const char *e = getenv("STRESS_IOS");
	io_context_t ctx;
	int qd = 0, i;
	uint8_t *buf;
	uint64_t b;

	aiot_init("t-stress");
	aiot_require_size(AREA_OFF + AREA);
	if (e)
		total = atoll(e);
	fd = aiot_open_dev(O_RDWR | O_DIRECT);
	ctx = aiot_ctx(MAXQD);
	nblocks = AREA / aiot.lbs;
	shadow = malloc(nblocks * sizeof(*shadow));
	if (!shadow)
		aiot_die("malloc");
	for (b = 0; b < nblocks; b++)
		shadow[b] = 1;
	aiot_sync_write_pattern(fd, AREA_OFF, AREA, 1);
	sub0 = aiot_stat("iocbs_submitted");

	while (done < total) {
		struct iocb *cbs[MAXQD];
		int n = 0, want, got, ret;

		/* top the queue up to a random depth, within the memory budget */
		want = 1 + (int)rnd_below(MAXQD);
		for (i = 0; i < MAXQD && qd + n < want && submitted + n < total &&
			    inflight_bytes < INFLIGHT_BYTES; i++) {
			if (slots[i].busy)
				continue;
			prepare(&slots[i], i);
			cbs[n++] = &slots[i].cb;
		}
		if (n) {
			ret = aiot_submit(ctx, n, cbs);
			if (!CHECK(ret == n, "io_submit of %d: %s", n, aiot_rstr(ret)))
				break;
			submitted += n;
			qd += n;
		}
		/* reap at least one, sometimes everything */
		got = aiot_reap(ctx, (rnd() & 7) ? 1 : qd, ev);
		if (!got)
			break;
		memset(seen, 0, sizeof(seen));
		for (i = 0; i < got; i++) {
			int idx = (int)(uintptr_t)ev[i].data;

			if (!CHECK(idx >= 0 && idx < MAXQD && slots[idx].busy &&
				   ev[i].obj == &slots[idx].cb && !seen[idx],
				   "event for a slot not in flight (%d)", idx))
				continue;
			seen[idx] = 1;
			CHECK(ev[i].res2 == 0, "res2 %ld", (long)ev[i].res2);
			complete(&slots[idx], (long)ev[i].res);
			qd--;
			done++;
		}
	}
	CHECK(aiot_reap_extra(ctx, 100) == 0, "events after the last I/O");

	/* the whole area through the synchronous reference path */
	buf = aiot_alloc(AIOT_MIB);
	for (b = 0; b < AREA; b += AIOT_MIB) {
		if (pread(fd, buf, AIOT_MIB, (off_t)(AREA_OFF + b)) != (ssize_t)AIOT_MIB)
			aiot_die("pread: %s", strerror(errno));
		mismatches += check_blocks(buf, AREA_OFF + b, AIOT_MIB);
	}
	free(buf);

	if (sub0 >= 0) {
		long long got = aiot_stat("iocbs_submitted") - sub0;
		long long want = aiot_mode_is_stock() ? nflagged : done;

		fprintf(stderr, "t-stress: %lld reads, %lld writes, %lld vectored, %lld MiB; kvec iocbs %lld (flagged %lld)\n",
			nreads, nwrites, nvec, bytes >> 20, got, nflagged);
		CHECK(got == want, "kvec iocbs %lld, want %lld", got, want);
	}
	CHECK(mismatches == 0, "%lld blocks differ", mismatches);
	/* the mix depends on completion timing: only these two are the same in every mode */
	aiot_R("stress ios=%lld mismatches=%lld", done, mismatches);
	free(shadow);
	aiot_ctx_destroy(ctx);
	close(fd);
	return aiot_finish();
}
