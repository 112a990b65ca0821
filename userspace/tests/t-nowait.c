// SPDX-License-Identifier: GPL-2.0
/*
 * t-nowait: RWF_NOWAIT on O_DIRECT iocbs.  Stock 6.1 behaviour:
 *  - block/fops.c: an I/O spanning <= 256 pages is one bio, submitted with
 *    REQ_NOWAIT.  A bigger one goes to __blkdev_direct_IO, which gives a
 *    NOWAIT I/O up (res -EAGAIN, nothing submitted) if the first bio could
 *    not take all of it; whether it could depends on how many of the
 *    buffer's pages happen to be physically contiguous (bio_iov_add_page
 *    merges them), so for plain buffers that result is "the full length or
 *    -EAGAIN" and its R line leaves res out.  Vectored 2 KiB segments, each
 *    at the start of its own page, never merge: 300 of them are -EAGAIN for
 *    certain.
 *  - block/blk-merge.c: a REQ_NOWAIT bio that would have to be split to fit
 *    the queue limits (max_sectors_kb, max_segments; blk-mq devices such as
 *    null_blk, 127 KiB by default) ends with BLK_STS_AGAIN: res -EAGAIN.
 *    Bio-based devices (brd) do not split.  A virtual boundary (NVMe)
 *    splits at every gap between segments that do not end on it.
 *  - Within the limits the full length completes (brd and null_blk support
 *    NOWAIT); at the device end 0 / -ENOSPC come first; a buffered NOWAIT
 *    write is refused with res -EOPNOTSUPP.
 * A refused I/O leaves the buffer and the device unchanged.  The ranges are
 * written through pwrite(2) first, which also drops any page cache that
 * would make a NOWAIT write fail.
 */
#include "aiotest.h"

#include <linux/fs.h>

#define SEED	8500
#define REGION	(4 * AIOT_MIB)
#define EITHER	1L	/* want: the full length or -EAGAIN */

static io_context_t ctx;
static uint8_t *buf;
static size_t buf_len;
static int fd;
static long long max_bytes, max_segs, virt_boundary;
static bool mq;

/*
 * What the stock code gives for a NOWAIT I/O of @len bytes spanning
 * @pages pages, @merge_free if its bvecs can never merge.
 */
static long nowait_want(size_t len, size_t pages, bool merge_free)
{
	bool fits = max_bytes > 0 && max_segs > 0 && (long long)len <= max_bytes &&
		    (long long)pages <= max_segs;

	/* too big for the queue: if fops.c lets it through, the split fails */
	if (mq && max_bytes > 0 && (long long)len > max_bytes)
		return -EAGAIN;
	/*
	 * A virtual boundary (NVMe's 4 KiB) splits a bio at every gap between
	 * segments, and unmergeable bvecs that end mid-page leave gaps.
	 */
	if (mq && merge_free && virt_boundary > 0 && pages > 1)
		return -EAGAIN;
	if (pages > 256)
		return merge_free ? -EAGAIN : EITHER;
	if (fits)
		return (long)len;
	if (mq && merge_free && max_segs > 0 && (long long)pages > max_segs)
		return -EAGAIN;		/* split by segment count */
	return EITHER;
}

static void check_res(const char *tag, struct aiot_res r, long *want, size_t len)
{
	if (*want == EITHER) {
		aiot_R("%s submit=%s res=len-or-EAGAIN", tag, aiot_rstr(r.submit));
		fprintf(stderr, "t-nowait: %s: %s\n", tag, aiot_resstr(r));
		CHECK(aiot_is(r, (long)len) || aiot_is(r, -EAGAIN), "%s: %s", tag,
		      aiot_resstr(r));
		*want = r.submit == 1 ? r.res : -EAGAIN;
	} else {
		aiot_report(tag, r, NULL, 0);
		CHECK(aiot_is(r, *want), "%s: %s, want res %s", tag, aiot_resstr(r),
		      aiot_rstr(*want));
	}
}

/*
 * The device holds the new pattern (seed + 1) exactly when the NOWAIT write
 * completed in full; any write that moved data is undone to @seed.
 */
static void write_landed_or_not(struct aiot_res r, bool done, uint64_t off,
				size_t len, uint64_t seed)
{
	aiot_sync_verify(fd, off, len, done ? seed + 1 : seed);
	if (r.submit == 1 && r.res > 0)
		aiot_sync_write_pattern(fd, off, len, seed);
}

static void nw(int write, size_t bufoff, size_t len, uint64_t off, uint64_t seed)
{
	size_t pages = aiot_round_up(bufoff + len, AIOT_PAGE) / AIOT_PAGE;
	long want = nowait_want(len, pages, false);
	struct aiot_res r;
	struct iocb cb;
	char tag[128];
	bool done;

	memset(buf, AIOT_POISON, buf_len);
	if (write)
		aiot_fill(buf + bufoff, len, seed + 1, off);
	aiot_prep_rw(&cb, write, fd, buf + bufoff, len, (long long)off, RWF_NOWAIT);
	r = aiot_submit_wait(ctx, &cb);
	snprintf(tag, sizeof(tag), "%s RWF_NOWAIT bufoff=%zu len=%zu",
		 write ? "write" : "read", bufoff, len);
	check_res(tag, r, &want, len);
	done = aiot_is(r, (long)len);
	if (write) {
		write_landed_or_not(r, done, off, len, seed);
	} else if (done) {
		aiot_verify(tag, buf + bufoff, len, seed, off);
	} else {
		aiot_verify_byte("buffer after refused NOWAIT read", buf, buf_len, AIOT_POISON);
	}
}

/* @n segments of 2 KiB, each at the start of its own page: never merged. */
static void nwv(int write, int n, uint64_t off, uint64_t seed)
{
	size_t len = (size_t)n * 2048;
	/* 2 KiB segments are misaligned on devices of larger blocks */
	long want = 2048 % aiot.lbs ? -EINVAL : nowait_want(len, (size_t)n, true);
	struct iovec *iov = calloc(n, sizeof(*iov));
	struct aiot_res r;
	struct iocb cb;
	char tag[128];
	bool done;
	int i;

	if (!iov)
		aiot_die("calloc");
	memset(buf, AIOT_POISON, buf_len);
	for (i = 0; i < n; i++) {
		iov[i] = (struct iovec){ buf + (size_t)i * AIOT_PAGE, 2048 };
		if (write)
			aiot_fill(iov[i].iov_base, 2048, seed + 1, off + (uint64_t)i * 2048);
	}
	if (write)
		io_prep_pwritev2(&cb, fd, iov, n, (long long)off, RWF_NOWAIT);
	else
		io_prep_preadv2(&cb, fd, iov, n, (long long)off, RWF_NOWAIT);
	aiot_mark(&cb);
	r = aiot_submit_wait(ctx, &cb);
	snprintf(tag, sizeof(tag), "%s RWF_NOWAIT nseg=%d seglen=2048 one-per-page",
		 write ? "writev" : "readv", n);
	check_res(tag, r, &want, len);
	done = aiot_is(r, (long)len);
	if (write) {
		write_landed_or_not(r, done, off, len, seed);
	} else if (done) {
		for (i = 0; i < n; i++)
			if (!aiot_verify(tag, iov[i].iov_base, 2048, seed,
					 off + (uint64_t)i * 2048))
				break;
	} else {
		aiot_verify_byte("buffer after refused NOWAIT readv", buf, buf_len, AIOT_POISON);
	}
	free(iov);
}

int main(void)
{
	const uint64_t off = 4 * AIOT_MIB;
	struct aiot_res r;
	struct iocb cb;
	long long kb;
	int bfd;

	aiot_init("t-nowait");
	aiot_require_size(16 * AIOT_MIB);
	fd = aiot_open_dev(O_RDWR | O_DIRECT);
	bfd = aiot_open_dev(O_RDWR);
	ctx = aiot_ctx(4);
	kb = aiot_queue_attr("max_sectors_kb");
	max_bytes = kb > 0 ? kb * 1024 : -1;
	max_segs = aiot_queue_attr("max_segments");
	virt_boundary = aiot_queue_attr("virt_boundary_mask");
	mq = aiot_dev_is_mq();
	fprintf(stderr, "t-nowait: max_sectors_kb %lld max_segments %lld %s\n", kb,
		max_segs, mq ? "blk-mq" : "bio-based");
	buf_len = 2 * AIOT_MIB + 2 * AIOT_PAGE;
	buf = aiot_alloc(buf_len);
	aiot_sync_write_pattern(fd, off, REGION, SEED);

	nw(0, 0, 65536, off, SEED);
	nw(1, 0, 65536, off, SEED);
	nw(0, 512, 65536, off, SEED);
	nw(1, 3584, 65536, off, SEED);
	nw(0, 0, AIOT_MIB, off, SEED);			/* 256 pages: one bio */
	nw(1, 0, AIOT_MIB, off, SEED);
	nw(0, 512, AIOT_MIB, off, SEED);		/* 257 pages */
	nw(1, 512, AIOT_MIB, off, SEED);
	nw(0, 0, AIOT_MIB + 4096, off, SEED);
	nw(0, 0, 2 * AIOT_MIB, off, SEED);
	nw(1, 0, 2 * AIOT_MIB, off, SEED);
	nwv(0, 16, off, SEED);				/* 16 segments, 32 KiB */
	nwv(1, 16, off, SEED);
	nwv(0, 256, off, SEED);				/* 256 segments, 512 KiB */
	nwv(1, 256, off, SEED);
	nwv(0, 300, off, SEED);				/* > 256 unmergeable pages */
	nwv(1, 300, off, SEED);

	/* at the end of the device: 0 and -ENOSPC come first */
	aiot_prep_rw(&cb, 0, fd, buf, 2 * AIOT_MIB, (long long)aiot.size, RWF_NOWAIT);
	r = aiot_submit_wait(ctx, &cb);
	aiot_report("read RWF_NOWAIT at=end len=2M", r, NULL, 0);
	CHECK(aiot_is(r, 0), "NOWAIT read at the end: %s", aiot_resstr(r));
	aiot_prep_rw(&cb, 1, fd, buf, 2 * AIOT_MIB, (long long)aiot.size, RWF_NOWAIT);
	r = aiot_submit_wait(ctx, &cb);
	aiot_report("write RWF_NOWAIT at=end len=2M", r, NULL, 0);
	CHECK(aiot_is(r, -ENOSPC), "NOWAIT write at the end: %s", aiot_resstr(r));

	/* buffered */
	aiot_prep_rw(&cb, 1, bfd, buf, 4096, (long long)off, RWF_NOWAIT);
	r = aiot_submit_wait(ctx, &cb);
	aiot_report("buffered write RWF_NOWAIT", r, NULL, 0);
	CHECK(aiot_is(r, -EOPNOTSUPP), "buffered NOWAIT write: %s", aiot_resstr(r));
	aiot_sync_verify(fd, off, REGION, SEED);

	free(buf);
	aiot_ctx_destroy(ctx);
	close(bfd);
	close(fd);
	return aiot_finish();
}
