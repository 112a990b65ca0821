// SPDX-License-Identifier: GPL-2.0
/*
 * t-vectored: IOCB_CMD_PWRITEV/PREADV with 1, 2, 3, 8, 9, 16, 256 and 1024
 * (UIO_MAXIOV) segments of mixed logical-block-multiple lengths, at bases
 * that are sector aligned but mostly not page aligned (some segments are
 * contiguous in memory, some cross page ends).  Written vectored, checked
 * through pread(2); written through pwrite(2), read vectored and verified
 * segment by segment, with the gaps between segments left untouched.
 * 1025 segments: io_submit -EINVAL.  0 segments: res 0.
 */
#include "aiotest.h"

static const int nsegs[] = { 1, 2, 3, 8, 9, 16, 256, 1024 };

struct layout {
	struct iovec *iov;
	int n;
	uint8_t *base;
	size_t span;	/* bytes of base in use */
	uint64_t total;	/* sum of iov_len */
};

/* Segment i: length 1..8 logical blocks; base placed by i % 4. */
static void make_layout(struct layout *l, int n, int variant)
{
	unsigned int unit = aiot.dma_mask + 1 > 512 ? aiot.dma_mask + 1 : 512;
	size_t pos = 0, cap = 0;
	int i;

	for (i = 0; i < n; i++)
		cap += (size_t)(1 + (i * 5 + n + variant) % 8) * aiot.lbs + 2 * AIOT_PAGE;
	l->n = n;
	l->iov = calloc(n + 1, sizeof(*l->iov));
	if (!l->iov)
		aiot_die("calloc");
	l->base = aiot_alloc(cap);
	l->total = 0;
	for (i = 0; i < n; i++) {
		size_t len = (size_t)(1 + (i * 5 + n + variant) % 8) * aiot.lbs;

		switch ((i + variant) % 4) {
		case 0:		/* right after the previous segment */
			break;
		case 1:		/* next page + 512 */
			pos = aiot_round_up(pos + 1, AIOT_PAGE) + unit % AIOT_PAGE;
			break;
		case 2:		/* next page + 3584: crosses the page end */
			pos = aiot_round_up(pos + 1, AIOT_PAGE) + (7 * unit) % AIOT_PAGE;
			break;
		case 3:		/* a small gap */
			pos += unit;
			break;
		}
		pos = aiot_round_up(pos, unit);
		l->iov[i].iov_base = l->base + pos;
		l->iov[i].iov_len = len;
		pos += len;
		l->total += len;
	}
	l->span = pos;
	if (pos > cap)
		aiot_die("layout overflow");
}

static void free_layout(struct layout *l)
{
	free(l->iov);
	free(l->base);
}

/* Every byte of base[0..span) outside the segments is still poison. */
static bool gaps_untouched(const struct layout *l)
{
	size_t pos = 0;
	int i;

	for (i = 0; i < l->n; i++) {
		size_t start = (uint8_t *)l->iov[i].iov_base - l->base;

		if (start > pos &&
		    !aiot_verify_byte("gap between segments", l->base + pos, start - pos,
				      AIOT_POISON))
			return false;
		if (start + l->iov[i].iov_len > pos)
			pos = start + l->iov[i].iov_len;
	}
	return true;
}

static uint64_t csum_segments(const struct layout *l, uint8_t *tmp)
{
	size_t pos = 0;
	int i;

	for (i = 0; i < l->n; i++) {
		memcpy(tmp + pos, l->iov[i].iov_base, l->iov[i].iov_len);
		pos += l->iov[i].iov_len;
	}
	return aiot_csum(tmp, pos);
}

int main(void)
{
	uint64_t devoff = 0;
	struct iovec many[UIO_MAXIOV + 1];
	struct aiot_res r;
	struct iocb cb;
	io_context_t ctx;
	uint8_t *small;
	unsigned int k;
	int fd, i;

	aiot_init("t-vectored");
	aiot_require_size(32 * AIOT_MIB);
	fd = aiot_open_dev(O_RDWR | O_DIRECT);
	ctx = aiot_ctx(4);

	for (k = 0; k < sizeof(nsegs) / sizeof(nsegs[0]); k++) {
		struct layout w, rd;
		uint64_t seed = 700 + k, seed2 = 800 + k, off;
		uint8_t *tmp;
		char tag[96];

		make_layout(&w, nsegs[k], 0);
		make_layout(&rd, nsegs[k], 1 + k);	/* a different shape */
		devoff = aiot_round_up(devoff + AIOT_MIB, AIOT_MIB) + 5ULL * aiot.lbs;
		if (devoff + w.total > aiot.size || devoff + rd.total > aiot.size)
			aiot_die("device too small for %d segments", nsegs[k]);

		/* writev from the segments, verified through pread(2) */
		for (off = devoff, i = 0; i < w.n; i++) {
			aiot_fill(w.iov[i].iov_base, w.iov[i].iov_len, seed, off);
			off += w.iov[i].iov_len;
		}
		aiot_prep_pwritev(&cb, fd, w.iov, w.n, (long long)devoff);
		r = aiot_submit_wait(ctx, &cb);
		snprintf(tag, sizeof(tag), "writev nseg=%d len=%llu", w.n,
			 (unsigned long long)w.total);
		aiot_report(tag, r, NULL, 0);
		CHECK(aiot_is(r, (long)w.total), "%s: %s", tag, aiot_resstr(r));
		aiot_sync_verify(fd, devoff, w.total, seed);

		/* readv into the other shape of what pwrite(2) wrote */
		aiot_sync_write_pattern(fd, devoff, rd.total, seed2);
		aiot_prep_preadv(&cb, fd, rd.iov, rd.n, (long long)devoff);
		r = aiot_submit_wait(ctx, &cb);
		snprintf(tag, sizeof(tag), "readv nseg=%d len=%llu", rd.n,
			 (unsigned long long)rd.total);
		tmp = aiot_alloc(rd.total);
		if (aiot.nodata || r.submit != 1)
			aiot_report(tag, r, NULL, 0);
		else
			aiot_R("%s %s crc=%016llx", tag, aiot_resstr(r),
			       (unsigned long long)csum_segments(&rd, tmp));
		free(tmp);
		CHECK(aiot_is(r, (long)rd.total), "%s: %s", tag, aiot_resstr(r));
		for (off = devoff, i = 0; i < rd.n; i++) {
			char what[128];

			snprintf(what, sizeof(what), "%s segment %d", tag, i);
			if (!aiot_verify(what, rd.iov[i].iov_base, rd.iov[i].iov_len,
					 seed2, off))
				break;
			off += rd.iov[i].iov_len;
		}
		gaps_untouched(&rd);
		if (rd.span < (size_t)aiot_round_up(rd.span, AIOT_PAGE))
			aiot_verify_byte("after the last segment", rd.base + rd.span,
					 aiot_round_up(rd.span, AIOT_PAGE) - rd.span,
					 AIOT_POISON);
		devoff += w.total > rd.total ? w.total : rd.total;
		free_layout(&w);
		free_layout(&rd);
	}

	/* UIO_MAXIOV + 1 segments: refused by aio's iovec import */
	small = aiot_alloc(AIOT_PAGE);
	for (i = 0; i < UIO_MAXIOV + 1; i++) {
		many[i].iov_base = small;
		many[i].iov_len = aiot.lbs;
	}
	aiot_prep_preadv(&cb, fd, many, UIO_MAXIOV + 1, 0);
	r = aiot_submit_wait(ctx, &cb);
	aiot_report("readv nseg=1025", r, NULL, 0);
	CHECK(r.submit == -EINVAL, "readv 1025 segments: %s", aiot_resstr(r));
	aiot_prep_pwritev(&cb, fd, many, UIO_MAXIOV + 1, 0);
	r = aiot_submit_wait(ctx, &cb);
	aiot_report("writev nseg=1025", r, NULL, 0);
	CHECK(r.submit == -EINVAL, "writev 1025 segments: %s", aiot_resstr(r));

	/* 0 segments: a zero-length I/O */
	aiot_prep_preadv(&cb, fd, many, 0, 0);
	r = aiot_submit_wait(ctx, &cb);
	aiot_report("readv nseg=0", r, NULL, 0);
	CHECK(aiot_is(r, 0), "readv 0 segments: %s", aiot_resstr(r));
	aiot_prep_pwritev(&cb, fd, many, 0, 0);
	r = aiot_submit_wait(ctx, &cb);
	aiot_report("writev nseg=0", r, NULL, 0);
	CHECK(aiot_is(r, 0), "writev 0 segments: %s", aiot_resstr(r));

	/*
	 * The same buffer in every segment.  Written: every block on the device
	 * gets its content.  Read: the segments race for the same bytes, so
	 * the buffer must hold the data of one of the blocks, no more is said.
	 */
	{
		size_t n = (size_t)UIO_MAXIOV * aiot.lbs;
		uint8_t *dev = aiot_alloc(n), *exp = aiot_alloc(n);
		bool found = false;
		ssize_t got;

		aiot_fill(small, aiot.lbs, 901, 0);
		for (i = 0; i < UIO_MAXIOV; i++)
			many[i].iov_base = small;
		aiot_prep_pwritev(&cb, fd, many, UIO_MAXIOV, 0);
		r = aiot_submit_wait(ctx, &cb);
		aiot_report("writev nseg=1024 same-buffer", r, NULL, 0);
		CHECK(aiot_is(r, (long)n), "same-buffer writev: %s", aiot_resstr(r));
		got = pread(fd, dev, n, 0);
		CHECK(got == (ssize_t)n, "pread: %zd", got);
		for (i = 0; !aiot.nodata && i < UIO_MAXIOV; i++)
			if (!CHECK(!memcmp(dev + (size_t)i * aiot.lbs, small, aiot.lbs),
				   "same-buffer writev: block %d differs", i))
				break;

		aiot_sync_write_pattern(fd, 0, n, 900);
		memset(small, AIOT_POISON, aiot.lbs);
		aiot_prep_preadv(&cb, fd, many, UIO_MAXIOV, 0);
		r = aiot_submit_wait(ctx, &cb);
		aiot_report("readv nseg=1024 same-buffer", r, NULL, 0);
		CHECK(aiot_is(r, (long)n), "same-buffer readv: %s", aiot_resstr(r));
		aiot_fill(exp, n, 900, 0);
		for (i = 0; i < UIO_MAXIOV && !found; i++)
			found = !memcmp(small, exp + (size_t)i * aiot.lbs, aiot.lbs);
		CHECK(found || aiot.nodata, "same-buffer readv: buffer holds no block's data");
		free(dev);
		free(exp);
	}
	free(small);

	aiot_ctx_destroy(ctx);
	close(fd);
	return aiot_finish();
}
