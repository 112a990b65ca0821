// SPDX-License-Identifier: GPL-2.0
/*
 * t-einval: misalignment.  A buffer address off the queue's DMA alignment
 * (buf+1, buf+256 for the default 511 mask), a device offset or a length
 * that is not a multiple of the logical block size, one bad segment in a
 * vectored I/O (address, length, a misaligned empty segment before data)
 * must complete with res -EINVAL (io_submit 1), for reads and writes, in
 * the one-bio and the multi-bio case, without touching the buffer or the
 * device.  Zero-length I/O gives res 0 whatever its alignment.  Negative
 * or overflowing offsets, nbytes > SSIZE_MAX and an iov_len < 0 (as
 * ssize_t) are refused by io_submit with -EINVAL.
 */
#include "aiotest.h"

#include <limits.h>

#define REGION		(4 * AIOT_MIB)	/* pre-written, must stay unchanged */
#define SEED		1234

static io_context_t ctx;
static int fd;
static uint8_t *base;		/* page aligned, 2 MiB + 2 pages */
static size_t base_len;
static uint64_t dev0;		/* start of the region */

/* Expected res for an I/O with these properties under the stock rules. */
static long expect(uintptr_t addr, uint64_t off, uint64_t len)
{
	if (!len)
		return 0;
	if ((addr & aiot.dma_mask) || (off % aiot.lbs) || (len % aiot.lbs))
		return -EINVAL;
	return (long)len;
}

/* One non-vectored read and write at base+boff, dev0+doff, len. */
static void rw_case(const char *name, size_t boff, uint64_t doff, uint64_t len)
{
	long want = expect((uintptr_t)(base + boff), dev0 + doff, len);
	struct aiot_res r;
	struct iocb cb;
	char tag[128];

	memset(base, AIOT_POISON, base_len);
	aiot_prep_pread(&cb, fd, base + boff, len, (long long)(dev0 + doff));
	r = aiot_submit_wait(ctx, &cb);
	snprintf(tag, sizeof(tag), "read %s", name);
	aiot_report(tag, r, want > 0 ? base + boff : NULL, len);
	CHECK(aiot_is(r, want), "%s: %s, want res %s", tag, aiot_resstr(r),
	      aiot_rstr(want));
	if (want > 0)
		aiot_verify(tag, base + boff, len, SEED, dev0 + doff);
	else
		aiot_verify_byte("buffer after failed read", base, base_len, AIOT_POISON);

	/* a write of the same data the region holds, so success changes nothing */
	aiot_fill(base + boff, len, SEED, dev0 + doff);
	aiot_prep_pwrite(&cb, fd, base + boff, len, (long long)(dev0 + doff));
	r = aiot_submit_wait(ctx, &cb);
	snprintf(tag, sizeof(tag), "write %s", name);
	aiot_report(tag, r, NULL, 0);
	CHECK(aiot_is(r, want), "%s: %s, want res %s", tag, aiot_resstr(r),
	      aiot_rstr(want));
}

/* A failing write of other data must not reach the device. */
static void rw_nochange(const char *name, size_t boff, uint64_t doff, uint64_t len)
{
	struct aiot_res r;
	struct iocb cb;
	char tag[128];

	aiot_fill(base + boff, len, SEED + 1, dev0 + doff);
	aiot_prep_pwrite(&cb, fd, base + boff, len, (long long)(dev0 + doff));
	r = aiot_submit_wait(ctx, &cb);
	snprintf(tag, sizeof(tag), "write-other %s", name);
	aiot_report(tag, r, NULL, 0);
	CHECK(aiot_is(r, -EINVAL), "%s: %s", tag, aiot_resstr(r));
	aiot_sync_verify(fd, dev0, REGION, SEED);
}

/* Vectored read and write of @n segments; want is the expected res. */
static void vec_case(const char *name, struct iovec *iov, int n, long want)
{
	struct aiot_res r;
	struct iocb cb;
	char tag[128];
	uint64_t pos;
	int i;

	memset(base, AIOT_POISON, base_len);
	aiot_prep_preadv(&cb, fd, iov, n, (long long)dev0);
	r = aiot_submit_wait(ctx, &cb);
	snprintf(tag, sizeof(tag), "readv %s", name);
	aiot_report(tag, r, NULL, 0);
	CHECK(aiot_is(r, want), "%s: %s, want res %s", tag, aiot_resstr(r),
	      aiot_rstr(want));
	if (want < 0)
		aiot_verify_byte("buffer after failed readv", base, base_len, AIOT_POISON);
	for (pos = dev0, i = 0; want > 0 && i < n; i++) {
		aiot_verify(tag, iov[i].iov_base, iov[i].iov_len, SEED, pos);
		pos += iov[i].iov_len;
	}

	for (pos = dev0, i = 0; i < n; i++) {
		aiot_fill(iov[i].iov_base, iov[i].iov_len, want < 0 ? SEED + 1 : SEED, pos);
		pos += iov[i].iov_len;
	}
	aiot_prep_pwritev(&cb, fd, iov, n, (long long)dev0);
	r = aiot_submit_wait(ctx, &cb);
	snprintf(tag, sizeof(tag), "writev %s", name);
	aiot_report(tag, r, NULL, 0);
	CHECK(aiot_is(r, want), "%s: %s, want res %s", tag, aiot_resstr(r),
	      aiot_rstr(want));
	if (want < 0)
		aiot_sync_verify(fd, dev0, 64 * AIOT_KIB, SEED);
}

/* io_submit itself must refuse this iocb. */
static void submit_case(const char *name, int write, void *buf, size_t len,
			long long off, int want)
{
	struct aiot_res r = aiot_rw(ctx, write, fd, buf, len, off);
	char tag[128];

	snprintf(tag, sizeof(tag), "%s %s", write ? "write" : "read", name);
	aiot_report(tag, r, NULL, 0);
	CHECK(r.submit == want, "%s: %s, want io_submit %s", tag, aiot_resstr(r),
	      aiot_rstr(want));
}

int main(void)
{
	unsigned int L;
	struct iovec iov[4];
	uint64_t big = 2 * AIOT_MIB;

	aiot_init("t-einval");
	aiot_require_size(16 * AIOT_MIB);
	fd = aiot_open_dev(O_RDWR | O_DIRECT);
	ctx = aiot_ctx(4);
	L = aiot.lbs;
	base_len = big + 2 * AIOT_PAGE;
	base = aiot_alloc(base_len);
	dev0 = 4 * AIOT_MIB;
	aiot_sync_write_pattern(fd, dev0, REGION, SEED);

	/* controls: aligned I/O works here */
	rw_case("aligned len=4096", 0, 0, 4096);
	rw_case("aligned bufoff=512 len=4096", 512, 0, 4096);

	/* buffer address */
	rw_case("bufoff=1 len=4096", 1, 0, 4096);
	rw_case("bufoff=256 len=4096", 256, 0, 4096);
	rw_case("bufoff=4095 len=4096", 4095, 0, 4096);
	rw_case("bufoff=1 len=2M", 1, 0, big);		/* multi-bio path */
	/* device offset */
	rw_case("off=1 len=4096", 0, 1, 4096);
	rw_case("off=256 len=4096", 0, 256, 4096);
	rw_case("off=L-1 len=4096", 0, L - 1, 4096);
	rw_case("off=256 len=2M", 0, 256, big);
	/* length */
	rw_case("len=511", 0, 0, 511);
	rw_case("len=513", 0, 0, 513);
	rw_case("len=4097", 0, 0, 4097);
	rw_case("len=2M+1", 0, 0, big + 1);
	rw_case("len=1", 0, 0, 1);
	/* zero length: 0 before any alignment check */
	rw_case("len=0", 0, 0, 0);
	rw_case("len=0 bufoff=1", 1, 0, 0);
	rw_case("len=0 off=1", 0, 1, 0);

	/* failing writes of other data leave the device alone */
	rw_nochange("bufoff=1 len=8192", 1, 0, 8192);
	rw_nochange("off=256 len=8192", 0, 256, 8192);
	rw_nochange("len=8193", 0, 0, 8193);
	/* half the DMA alignment: 256 for the default 511 mask, 2 on NVMe */
	if (aiot.dma_mask) {
		char name[64];
		size_t half = (aiot.dma_mask + 1) / 2;

		snprintf(name, sizeof(name), "bufoff=%zu len=2M", half);
		rw_nochange(name, half, 0, big);
	}

	/* vectored: one bad segment among good ones */
	iov[0] = (struct iovec){ base, 4096 };
	iov[1] = (struct iovec){ base + 8192, 4096 };
	iov[2] = (struct iovec){ base + 16384, 8192 };
	vec_case("3seg aligned", iov, 3, 16384);
	iov[1].iov_base = base + 8192 + 1;
	vec_case("3seg seg1-bufoff=1", iov, 3, (aiot.dma_mask & 1) ? -EINVAL : 16384);
	iov[1].iov_base = base + 8192;
	iov[1].iov_len = 4096 + 256;	/* and seg2 256 shorter: total aligned */
	iov[2].iov_len = 8192 - 256;
	vec_case("3seg seg1-len=4352 seg2-len=7936", iov, 3, -EINVAL);
	iov[1].iov_len = 4096;
	iov[2].iov_len = 8192;
	/* an empty segment is still checked for address alignment ... */
	iov[3] = iov[2];
	iov[2] = (struct iovec){ base + 12288 + 1, 0 };
	vec_case("4seg seg2-empty-bufoff=1", iov, 4, (aiot.dma_mask & 1) ? -EINVAL : 16384);
	/* ... unless it comes after the last byte */
	iov[2] = iov[3];
	iov[3] = (struct iovec){ base + 32768 + 1, 0 };
	vec_case("4seg seg3-empty-bufoff=1 last", iov, 4, 16384);
	/* the last segment one byte long */
	iov[3] = (struct iovec){ base + 32768, 1 };
	vec_case("4seg seg3-len=1", iov, 4, -EINVAL);
	/* multi-bio: 2 MiB then a misaligned segment */
	iov[0] = (struct iovec){ base, big - 8192 };
	iov[1] = (struct iovec){ base + big, 4096 + 1 };
	vec_case("2seg 2M seg1-len=4097", iov, 2, -EINVAL);

	/* an iov_len that is negative as ssize_t: the iovec import refuses it */
	{
		struct aiot_res r;
		struct iocb cb;

		iov[0] = (struct iovec){ base, 4096 };
		iov[1] = (struct iovec){ base + 4096, (size_t)-1 };
		aiot_prep_preadv(&cb, fd, iov, 2, (long long)dev0);
		r = aiot_submit_wait(ctx, &cb);
		aiot_report("readv seg1-len=-1", r, NULL, 0);
		CHECK(r.submit == -EINVAL, "readv iov_len -1: %s", aiot_resstr(r));
		aiot_prep_pwritev(&cb, fd, iov, 2, (long long)dev0);
		r = aiot_submit_wait(ctx, &cb);
		aiot_report("writev seg1-len=-1", r, NULL, 0);
		CHECK(r.submit == -EINVAL, "writev iov_len -1: %s", aiot_resstr(r));
	}

	/* refused before any I/O: rw_verify_area and the overflow checks */
	submit_case("off=-512", 0, base, 4096, -512, -EINVAL);
	submit_case("off=-512", 1, base, 4096, -512, -EINVAL);
	submit_case("off=LLONG_MAX-511", 0, base, 4096, LLONG_MAX - 511, -EINVAL);
	submit_case("off=LLONG_MAX-511", 1, base, 4096, LLONG_MAX - 511, -EINVAL);
	submit_case("len=SSIZE_MAX+1", 0, base, (size_t)SSIZE_MAX + 1, 0, -EINVAL);
	submit_case("len=SSIZE_MAX+1", 1, base, (size_t)SSIZE_MAX + 1, 0, -EINVAL);

	aiot_sync_verify(fd, dev0, REGION, SEED);
	free(base);
	aiot_ctx_destroy(ctx);
	close(fd);
	return aiot_finish();
}
