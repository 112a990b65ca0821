// SPDX-License-Identifier: GPL-2.0
/*
 * t-efault: bad buffers.  What the stock 6.1 code gives (block/fops.c,
 * bio_iov_iter_get_pages() in block/bio.c, get_user_pages_fast()):
 *
 *  - A buffer that cannot be pinned at all (unmapped, NULL, a read into a
 *    PROT_READ mapping) fails the I/O with res -EFAULT when the I/O fits
 *    in one bio (<= 256 pages).  Reads leave the memory alone, failed
 *    writes leave the device alone.
 *  - Only a prefix pinnable, one bio: gup returns the pages it got, the bio
 *    is cut there (rounded down to the logical block size) and the I/O
 *    completes with that short count.  Vectored: the segments before the
 *    first bad one.  Nothing pinnable: -EFAULT.
 *  - More than 256 pages (__blkdev_direct_IO, several bios): a bio that
 *    pins nothing is ended with BLK_STS_IOERR, so the whole I/O completes
 *    with res -EIO, not -EFAULT and not a short count.
 *  - A write from a PROT_READ mapping works.
 *  - Bad pointers that aio itself follows (a kernel address or a segment
 *    reaching past TASK_SIZE failing access_ok, the iovec array, the iocb
 *    and the iocb array) make io_submit fail with -EFAULT.
 */
#include "aiotest.h"

#include <sys/mman.h>

#define SEED	4321

static io_context_t ctx;
static int fd;
static uint64_t dev0;

static struct aiot_res rw(int write, void *buf, size_t len, uint64_t off)
{
	return aiot_rw(ctx, write, fd, buf, len, (long long)off);
}

static struct aiot_res rwv(int write, struct iovec *iov, int n, uint64_t off)
{
	struct iocb cb;

	if (write)
		aiot_prep_pwritev(&cb, fd, iov, n, (long long)off);
	else
		aiot_prep_preadv(&cb, fd, iov, n, (long long)off);
	return aiot_submit_wait(ctx, &cb);
}

static void expect(const char *tag, struct aiot_res r, long want)
{
	aiot_report(tag, r, NULL, 0);
	CHECK(aiot_is(r, want), "%s: %s, want res %s", tag, aiot_resstr(r),
	      aiot_rstr(want));
}

static void expect_submit(const char *tag, int submit, int want)
{
	aiot_R("%s submit=%s", tag, aiot_rstr(submit));
	CHECK(submit == want, "%s: io_submit %s, want %s", tag, aiot_rstr(submit),
	      aiot_rstr(want));
}

/* A page-aligned mapping of @len whose bytes from @keep on are unmapped. */
static uint8_t *partial_map(size_t len, size_t keep)
{
	uint8_t *p = aiot_map(len);

	aiot_unmap(p + keep, len - keep);
	return p;
}

int main(void)
{
	const size_t len = 64 * AIOT_KIB, half = 32 * AIOT_KIB, big = 2 * AIOT_MIB;
	struct aiot_res r;
	struct iovec iov[3];
	struct iocb cb, *cbp;
	uint8_t *p, *good;
	long want;

	aiot_init("t-efault");
	aiot_require_size(32 * AIOT_MIB);
	fd = aiot_open_dev(O_RDWR | O_DIRECT);
	ctx = aiot_ctx(4);
	dev0 = 8 * AIOT_MIB;
	aiot_sync_write_pattern(fd, dev0, 4 * AIOT_MIB, SEED);
	good = aiot_alloc(big);

	/* ---- nothing pinnable, one bio: -EFAULT */
	p = aiot_hole(len);
	expect("read unmapped len=64K", rw(0, p, len, dev0), -EFAULT);
	expect("write unmapped len=64K", rw(1, p, len, dev0), -EFAULT);
	expect("read NULL len=4096", rw(0, NULL, 4096, dev0), -EFAULT);
	expect("write NULL len=4096", rw(1, NULL, 4096, dev0), -EFAULT);
	aiot_sync_verify(fd, dev0, len, SEED);

	/* read into PROT_READ memory: -EFAULT and the memory unchanged */
	p = aiot_map(len);
	aiot_fill(p, len, SEED + 7, 0);
	if (mprotect(p, len, PROT_READ) < 0)
		aiot_die("mprotect: %s", strerror(errno));
	expect("read into PROT_READ len=64K", rw(0, p, len, dev0), -EFAULT);
	aiot_verify("PROT_READ mapping after failed read", p, len, SEED + 7, 0);
	/* a write from it works */
	aiot_fill(good, len, SEED + 8, dev0);	/* what the mapping must hold */
	if (mprotect(p, len, PROT_READ | PROT_WRITE) < 0)
		aiot_die("mprotect: %s", strerror(errno));
	memcpy(p, good, len);
	if (mprotect(p, len, PROT_READ) < 0)
		aiot_die("mprotect: %s", strerror(errno));
	expect("write from PROT_READ len=64K", rw(1, p, len, dev0), (long)len);
	aiot_sync_verify(fd, dev0, len, SEED + 8);
	aiot_unmap(p, len);
	aiot_sync_write_pattern(fd, dev0, len, SEED);

	/* ---- a pinnable prefix, one bio: a short count */
	p = partial_map(len, half);
	r = rw(0, p, len, dev0);
	expect("read half-mapped len=64K", r, (long)half);
	aiot_verify("half-mapped read", p, half, SEED, dev0);
	aiot_fill(p, half, SEED + 9, dev0);
	expect("write half-mapped len=64K", rw(1, p, len, dev0), (long)half);
	aiot_sync_verify(fd, dev0, half, SEED + 9);
	aiot_sync_verify(fd, dev0 + half, len - half, SEED);
	aiot_unmap(p, half);
	aiot_sync_write_pattern(fd, dev0, len, SEED);

	/* from a page offset: the prefix is rounded down to the logical block */
	p = partial_map(len + AIOT_PAGE, half);
	want = (long)aiot_round_down(half - 512, aiot.lbs);
	if (!want)
		want = -EFAULT;
	if (512 & aiot.dma_mask)
		want = -EINVAL;
	expect("read half-mapped bufoff=512 len=64K", rw(0, p + 512, len, dev0), want);
	if (want > 0)
		aiot_verify("half-mapped read bufoff=512", p + 512, want, SEED, dev0);
	aiot_unmap(p, half);

	/* the mapped part PROT_READ for a read: nothing pinnable */
	p = partial_map(len, half);
	if (mprotect(p, half, PROT_READ) < 0)
		aiot_die("mprotect: %s", strerror(errno));
	expect("read PROT_READ+unmapped len=64K", rw(0, p, len, dev0), -EFAULT);
	aiot_unmap(p, half);

	/* writable first half, PROT_READ second half: the read stops there */
	p = aiot_map(len);
	if (mprotect(p + half, half, PROT_READ) < 0)
		aiot_die("mprotect: %s", strerror(errno));
	expect("read RW+PROT_READ len=64K", rw(0, p, len, dev0), (long)half);
	aiot_verify("RW+PROT_READ read", p, half, SEED, dev0);
	aiot_verify_byte("PROT_READ half after read", p + half, half, AIOT_POISON);
	expect("write RW+PROT_READ len=64K", rw(1, p, len, dev0), (long)len);
	aiot_unmap(p, len);
	aiot_sync_write_pattern(fd, dev0, len, SEED);

	/* ---- vectored, one bio: segments before the bad one */
	memset(good, AIOT_POISON, big);
	p = aiot_hole(8192);
	iov[0] = (struct iovec){ p, 8192 };
	iov[1] = (struct iovec){ good, 8192 };
	iov[2] = (struct iovec){ good + 16384, 8192 };
	expect("readv seg0-unmapped", rwv(0, iov, 3, dev0), -EFAULT);
	expect("writev seg0-unmapped", rwv(1, iov, 3, dev0), -EFAULT);
	aiot_verify_byte("readv seg0-unmapped buffer", good, 32768, AIOT_POISON);
	iov[0] = (struct iovec){ good, 8192 };
	iov[1] = (struct iovec){ p, 8192 };
	expect("readv seg1-unmapped", rwv(0, iov, 3, dev0), 8192);
	aiot_verify("readv seg1-unmapped seg0", good, 8192, SEED, dev0);
	aiot_verify_byte("readv seg1-unmapped seg2", good + 16384, 8192, AIOT_POISON);
	aiot_fill(good, 8192, SEED + 10, dev0);
	expect("writev seg1-unmapped", rwv(1, iov, 3, dev0), 8192);
	aiot_sync_verify(fd, dev0, 8192, SEED + 10);
	aiot_sync_verify(fd, dev0 + 8192, 16384, SEED);
	iov[1] = (struct iovec){ NULL, 8192 };
	expect("readv seg1-NULL", rwv(0, iov, 3, dev0), 8192);
	aiot_sync_write_pattern(fd, dev0, len, SEED);

	/* ---- several bios: -EIO */
	p = aiot_hole(big);
	expect("read unmapped len=2M", rw(0, p, big, dev0), -EIO);
	expect("write unmapped len=2M", rw(1, p, big, dev0), -EIO);
	p = partial_map(big, big - 512 * AIOT_KIB);
	expect("read 1.5M-mapped len=2M", rw(0, p, big, dev0), -EIO);
	expect("write 1.5M-mapped len=2M", rw(1, p, big, dev0), -EIO);
	aiot_unmap(p, big - 512 * AIOT_KIB);
	p = aiot_hole(8192);
	iov[0] = (struct iovec){ good, AIOT_MIB };
	iov[1] = (struct iovec){ p, 8192 };
	iov[2] = (struct iovec){ good + AIOT_MIB, 8192 };
	expect("readv 1M+unmapped+8K", rwv(0, iov, 3, dev0), -EIO);
	expect("writev 1M+unmapped+8K", rwv(1, iov, 3, dev0), -EIO);
	aiot_sync_write_pattern(fd, dev0, 4 * AIOT_MIB, SEED);

	/* ---- pointers aio follows itself: io_submit -EFAULT */
	aiot_prep_pread(&cb, fd, (void *)0xffff888000000000UL, 4096, (long long)dev0);
	r = aiot_submit_wait(ctx, &cb);
	expect_submit("read kernel-address", r.submit, -EFAULT);
	aiot_prep_pwrite(&cb, fd, (void *)0xffff888000000000UL, 4096, (long long)dev0);
	r = aiot_submit_wait(ctx, &cb);
	expect_submit("write kernel-address", r.submit, -EFAULT);

	p = aiot_hole(AIOT_PAGE);
	aiot_prep_preadv(&cb, fd, (struct iovec *)p, 2, (long long)dev0);
	r = aiot_submit_wait(ctx, &cb);
	expect_submit("readv iovec-array-unmapped", r.submit, -EFAULT);
	aiot_prep_pwritev(&cb, fd, (struct iovec *)p, 2, (long long)dev0);
	r = aiot_submit_wait(ctx, &cb);
	expect_submit("writev iovec-array-unmapped", r.submit, -EFAULT);
	aiot_prep_preadv(&cb, fd, NULL, 1, (long long)dev0);
	r = aiot_submit_wait(ctx, &cb);
	expect_submit("readv iovec-array-NULL", r.submit, -EFAULT);
	iov[0] = (struct iovec){ good, 4096 };
	iov[1] = (struct iovec){ good + 4096, (size_t)1 << 47 };	/* past TASK_SIZE */
	aiot_prep_preadv(&cb, fd, iov, 2, (long long)dev0);
	r = aiot_submit_wait(ctx, &cb);
	expect_submit("readv iov_len=2^47", r.submit, -EFAULT);

	/* the iocb and the iocb array themselves (nothing to mark here) */
	cbp = (struct iocb *)p;
	expect_submit("iocb-unmapped", io_submit(ctx, 1, &cbp), -EFAULT);
	expect_submit("iocb-array-unmapped", io_submit(ctx, 1, (struct iocb **)p), -EFAULT);
	CHECK(aiot_reap_extra(ctx, 0) == 0, "events after refused submissions");

	aiot_sync_verify(fd, dev0, 4 * AIOT_MIB, SEED);
	free(good);
	aiot_ctx_destroy(ctx);
	close(fd);
	return aiot_finish();
}
