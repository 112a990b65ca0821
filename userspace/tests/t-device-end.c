// SPDX-License-Identifier: GPL-2.0
/*
 * t-device-end: I/O at and across the end of the device (block/fops.c):
 *  - blkdev_read_iter: pos >= size gives 0 before anything else is looked
 *    at (even a misaligned buffer or length); an I/O crossing the end is
 *    truncated to the end first, so it returns the bytes up to the end, and
 *    a length that is misaligned only beyond the end is no longer misaligned.
 *  - blkdev_write_iter: count 0 gives 0, then pos >= size gives -ENOSPC
 *    (again before alignment); crossing writes are truncated the same way
 *    and return a short count.
 * Data up to the end is verified, read buffers beyond the short count must
 * stay untouched; one-bio, multi-bio and vectored variants.
 */
#include "aiotest.h"

#define SEED	5555
#define BIG	(2 * AIOT_MIB)

static io_context_t ctx;
static int fd;
static uint8_t *buf;		/* BIG + 2 pages */
static size_t buf_len;
static uint64_t S;

static void label(char *s, size_t n, long long rel)
{
	if (rel < 0)
		snprintf(s, n, "end-%lld", -rel);
	else if (rel > 0)
		snprintf(s, n, "end+%lld", rel);
	else
		snprintf(s, n, "end");
}

/* Read at S+rel into buf+boff: want res; data verified up to it. */
static void rd(long long rel, size_t boff, size_t len, long want, uint64_t seed)
{
	uint64_t off = (uint64_t)((long long)S + rel);
	struct aiot_res r;
	char at[48], tag[128];

	memset(buf, AIOT_POISON, buf_len);
	r = aiot_pread(ctx, fd, buf + boff, len, (long long)off);
	label(at, sizeof(at), rel);
	snprintf(tag, sizeof(tag), "read at=%s bufoff=%zu len=%zu", at, boff, len);
	aiot_report(tag, r, want > 0 ? buf + boff : NULL, len);
	CHECK(aiot_is(r, want), "%s: %s, want res %s", tag, aiot_resstr(r), aiot_rstr(want));
	if (want > 0 && aiot_is(r, want)) {
		aiot_verify(tag, buf + boff, (size_t)want, seed, off);
		aiot_verify_byte("read buffer past the end of the device",
				 buf + boff + want, len - (size_t)want, AIOT_POISON);
	} else {
		aiot_verify_byte("read buffer", buf, buf_len, AIOT_POISON);
	}
}

/* Write (seed) at S+rel from buf+boff: want res; the device verified. */
static void wr(long long rel, size_t boff, size_t len, long want, uint64_t seed)
{
	uint64_t off = (uint64_t)((long long)S + rel);
	struct aiot_res r;
	char at[48], tag[128];

	aiot_fill(buf + boff, len, seed, off);
	r = aiot_pwrite(ctx, fd, buf + boff, len, (long long)off);
	label(at, sizeof(at), rel);
	snprintf(tag, sizeof(tag), "write at=%s bufoff=%zu len=%zu", at, boff, len);
	aiot_report(tag, r, NULL, 0);
	CHECK(aiot_is(r, want), "%s: %s, want res %s", tag, aiot_resstr(r), aiot_rstr(want));
	if (want > 0)
		aiot_sync_verify(fd, off, (uint64_t)want, seed);
}

static void vec(int write, long long rel, long want, uint64_t seed)
{
	uint64_t off = (uint64_t)((long long)S + rel);
	struct iovec iov[3];
	struct aiot_res r;
	struct iocb cb;
	char at[48], tag[128];
	int i;

	memset(buf, AIOT_POISON, buf_len);
	for (i = 0; i < 3; i++)
		iov[i] = (struct iovec){ buf + (size_t)i * 8192 + 512, 4096 };
	if (write) {
		for (i = 0; i < 3; i++)
			aiot_fill(iov[i].iov_base, 4096, seed, off + (uint64_t)i * 4096);
		aiot_prep_pwritev(&cb, fd, iov, 3, (long long)off);
	} else {
		aiot_prep_preadv(&cb, fd, iov, 3, (long long)off);
	}
	r = aiot_submit_wait(ctx, &cb);
	label(at, sizeof(at), rel);
	snprintf(tag, sizeof(tag), "%s at=%s nseg=3 len=12288", write ? "writev" : "readv", at);
	aiot_report(tag, r, NULL, 0);
	CHECK(aiot_is(r, want), "%s: %s, want res %s", tag, aiot_resstr(r), aiot_rstr(want));
	if (want <= 0 || !aiot_is(r, want))
		return;
	if (write) {
		aiot_sync_verify(fd, off, (uint64_t)want, seed);
		return;
	}
	for (i = 0; i < 3; i++) {
		long done = (long)i * 4096, n = want - done;

		if (n > 4096)
			n = 4096;
		if (n < 0)
			n = 0;
		aiot_verify(tag, iov[i].iov_base, (size_t)n, seed, off + (uint64_t)done);
		aiot_verify_byte("readv segment past the end", (uint8_t *)iov[i].iov_base + n,
				 4096 - (size_t)n, AIOT_POISON);
	}
}

int main(void)
{
	const long long far = 1LL << 40, huge = 1LL << 62;
	const long long mb15 = (long long)(3 * AIOT_MIB / 2);
	long vrel;
	bool bad1;

	aiot_init("t-device-end");
	aiot_require_size(8 * AIOT_MIB);
	fd = aiot_open_dev(O_RDWR | O_DIRECT);
	ctx = aiot_ctx(4);
	bad1 = aiot.dma_mask & 1;
	/* vectored I/O starting 1.5 pages before the end, or one page on 4 KiB blocks */
	vrel = aiot.lbs <= 2048 ? 6144 : 4096;
	S = aiot.size;
	buf_len = BIG + 2 * AIOT_PAGE;
	buf = aiot_alloc(buf_len);
	aiot_sync_write_pattern(fd, S - BIG, BIG, SEED);

	/* reads */
	rd(-4096, 0, 8192, 4096, SEED);
	rd(-4096, 512, 8192, 4096, SEED);
	rd(-(long long)aiot.lbs, 0, 4096, aiot.lbs, SEED);
	rd(0, 0, 4096, 0, SEED);
	rd(4096, 0, 4096, 0, SEED);
	rd(far, 0, 4096, 0, SEED);
	rd(huge - (long long)S, 0, 4096, 0, SEED);
	rd(0, 1, 4096, 0, SEED);		/* misaligned buffer, at the end */
	rd(0, 0, 511, 0, SEED);			/* misaligned length, at the end */
	rd(1, 0, 4096, 0, SEED);		/* misaligned offset, past the end */
	rd(-4096, 1, 8192, bad1 ? -EINVAL : 4096, SEED);
	rd(-4096, 0, 8193, 4096, SEED);		/* misaligned only past the end */
	rd(-4096, 0, 4097, 4096, SEED);		/* 1 byte past: cut to 4096 */
	rd(-8192, 0, 4097, -EINVAL, SEED);	/* inside the device: misaligned */
	rd(-mb15, 0, BIG, mb15, SEED);		/* 384 pages: several bios */
	rd(-mb15, 512, BIG, mb15, SEED);
	rd(-(long long)AIOT_MIB, 0, BIG, AIOT_MIB, SEED);	/* one bio left */
	vec(0, -vrel, vrel, SEED);
	vec(0, 0, 0, SEED);

	/* writes */
	wr(-4096, 0, 8192, 4096, SEED + 1);
	wr(-4096, 3584, 8192, 4096, SEED + 2);
	wr(0, 0, 4096, -ENOSPC, SEED);
	wr(4096, 0, 4096, -ENOSPC, SEED);
	wr(far, 0, 4096, -ENOSPC, SEED);
	wr(huge - (long long)S, 0, 4096, -ENOSPC, SEED);
	wr(0, 1, 4096, -ENOSPC, SEED);		/* -ENOSPC before alignment */
	wr(1, 0, 511, -ENOSPC, SEED);
	wr(0, 0, 0, 0, SEED);			/* count 0 before -ENOSPC */
	wr(far, 1, 0, 0, SEED);
	wr(-4096, 0, 8193, 4096, SEED + 3);	/* misaligned only past the end */
	wr(-mb15, 0, BIG, mb15, SEED + 4);
	wr(-(long long)AIOT_MIB, 512, BIG, AIOT_MIB, SEED + 5);
	vec(1, -vrel, vrel, SEED + 6);
	vec(1, 0, -ENOSPC, SEED);

	/* a misaligned crossing write leaves the device alone */
	aiot_sync_write_pattern(fd, S - BIG, BIG, SEED);
	wr(-4096, 1, 8192, bad1 ? -EINVAL : 4096, SEED + 7);
	if (bad1)
		aiot_sync_verify(fd, S - BIG, BIG, SEED);

	free(buf);
	aiot_ctx_destroy(ctx);
	close(fd);
	return aiot_finish();
}
