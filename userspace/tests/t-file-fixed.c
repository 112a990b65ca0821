// SPDX-License-Identifier: GPL-2.0
/*
 * t-file-fixed: registered kvecs (IOCB_FLAG_KVEC_FIXED, kvec-aio.h) on
 * O_DIRECT files of ext4 and XFS (AIOT_DIR).  Slot 0 is a 2 MiB buffer,
 * slot 1 a 68 KiB one registered from 512 bytes into its first page.
 *  - an extending fixed write of 1 MiB from slot 0: i_size, the data, and
 *    one fixed_iocbs and one file_iocbs, no per-I/O pin (pages_pinned and
 *    the vmstat FOLL_PIN counters stay put);
 *  - fixed reads into slot 1 at 512 bytes into a page, and from slot 0 at
 *    512 bytes into a page (on the 4 KiB target: the alignment rule of a
 *    user iovec, the DMA alignment, decides; the data must be right);
 *  - fixed reads across EOF (short count) and at EOF (0);
 *  - a hole (ftruncate) and an unwritten extent (fallocate) read as zeros
 *    through fixed reads, then fixed writes in place, read back;
 *  - vectored fixed PWRITEV/PREADV, three segments in slot 0;
 *  - an O_DSYNC descriptor and RWF_DSYNC on fixed writes;
 *  - a misaligned file offset and length (EINVAL, as stock), an empty slot
 *    and a range outside the buffer (EFAULT from io_submit);
 *  - fixed I/O on a descriptor without O_DIRECT of the same file (buffered,
 *    from the registered pages);
 *  - io_destroy with 16 fixed reads in flight on the file: all done, data
 *    in the buffer, the registration released.
 * Fixed iocbs take the kvec path in every mode but fs.aio_kvec = 3, so the
 * counters are checked in every mode the runner uses.
 */
#include "aiotest.h"
#include "kvec-aio.h"

#include <linux/fs.h>

#define SEED	9500
#define BUF0	(2 * AIOT_MIB)
#define BUF1	(64 * AIOT_KIB + 2 * AIOT_PAGE)	/* slot 1: from b1 + 512 */
#define NFLY	16
#define FLYLEN	(64 * AIOT_KIB)

static io_context_t ctx;
static unsigned int lbs, fsbs;
static uint8_t *b0, *b1;

static struct aiot_res fixed(int fd, int write, void *b, size_t len, uint64_t off,
			     unsigned int index)
{
	return aiot_fixed_rw(ctx, fd, write, b, len, off, index);
}

static void expect(const char *tag, struct aiot_res r, long want)
{
	CHECK(aiot_is(r, want), "%s: %s, want res %s", tag, aiot_resstr(r), aiot_rstr(want));
}

/* A fixed write of the (seed, off) pattern from @b; the image follows. */
static struct aiot_res fwrite_pat(const char *tag, int fd, struct aiot_img *img, uint8_t *b,
				  size_t len, uint64_t off, unsigned int index,
				  uint64_t seed, long want)
{
	struct aiot_res r;

	aiot_fill(b, len, seed, off);
	r = fixed(fd, 1, b, len, off, index);
	aiot_R("%s %s isize=%lld", tag, aiot_resstr(r), aiot_fsize(fd));
	expect(tag, r, want);
	if (r.submit == 1 && r.res > 0)
		aiot_img_write(img, off, (uint64_t)r.res, seed);
	return r;
}

/* A fixed read into @b (poisoned), checked against the image up to res. */
static struct aiot_res fread_chk(const char *tag, int fd, const struct aiot_img *img,
				 uint8_t *b, size_t len, uint64_t off, unsigned int index,
				 long want)
{
	struct aiot_res r;

	memset(b, AIOT_POISON, len);
	r = fixed(fd, 0, b, len, off, index);
	aiot_report(tag, r, b, len);
	expect(tag, r, want);
	if (r.submit == 1 && r.res > 0)
		CHECK(aiot.nodata || !memcmp(b, img->b + off, (size_t)r.res), "%s: data", tag);
	return r;
}

static void test_basic(void)
{
	struct aiot_img img;
	int fd = aiot_file_create("fixed", O_RDWR | O_DIRECT);
	long long fixed0 = aiot_stat("fixed_iocbs"), files0 = aiot_stat("file_iocbs");
	long long pinned0 = aiot_stat("pages_pinned");
	long long acq0 = aiot_vmstat("nr_foll_pin_acquired");
	uint64_t size;

	aiot_img_init(&img);
	fwrite_pat("fixed write-1m-extending", fd, &img, b0, AIOT_MIB, 0, 0, SEED, AIOT_MIB);
	CHECK(aiot_stat("fixed_iocbs") - fixed0 == 1, "fixed_iocbs +%lld, want 1",
	      aiot_stat("fixed_iocbs") - fixed0);
	CHECK(aiot_stat("file_iocbs") - files0 == 1, "file_iocbs +%lld, want 1",
	      aiot_stat("file_iocbs") - files0);
	CHECK(aiot_stat("pages_pinned") == pinned0, "pages_pinned +%lld by a fixed write",
	      aiot_stat("pages_pinned") - pinned0);
	CHECK(aiot_vmstat("nr_foll_pin_acquired") == acq0, "%lld FOLL_PIN pins by a fixed write",
	      aiot_vmstat("nr_foll_pin_acquired") - acq0);
	CHECK(aiot_sync_verify(fd, 0, AIOT_MIB, SEED), "file after the fixed write");

	/* 512 bytes into a page: slot 1's start, and inside slot 0 */
	fread_chk("fixed read-64k slot1+0", fd, &img, b1 + 512, 64 * AIOT_KIB, 8192, 1,
		  64 * AIOT_KIB);
	fread_chk("fixed read-8k slot0+512", fd, &img, b0 + 512, 8192, 4096, 0, 8192);
	fread_chk("fixed read-1lb slot0+512", fd, &img, b0 + 512, lbs, 3 * lbs, 0, lbs);
	fwrite_pat("fixed write-8k slot0+512", fd, &img, b0 + 512, 8192, 65536, 0, SEED + 1, 8192);
	fread_chk("fixed read-back slot0+0", fd, &img, b0, 16384, 65536, 0, 16384);

	/* EOF */
	size = AIOT_MIB + 1000;
	CHECK(ftruncate(fd, (off_t)size) == 0, "ftruncate: %s", strerror(errno));
	aiot_img_truncate(&img, size);
	fread_chk("fixed read-across-eof", fd, &img, b0, 8192, AIOT_MIB - 4096, 0, 4096 + 1000);
	fread_chk("fixed read-at-eof", fd, &img, b0, lbs, aiot_round_up(size, lbs), 0, 0);
	fread_chk("fixed read-past-eof", fd, &img, b0, 65536, 4 * AIOT_MIB, 0, 0);

	/* a hole and an unwritten extent */
	CHECK(ftruncate(fd, 2 * AIOT_MIB) == 0, "ftruncate: %s", strerror(errno));
	aiot_img_truncate(&img, 2 * AIOT_MIB);
	CHECK(fallocate(fd, 0, 2 * AIOT_MIB, AIOT_MIB) == 0, "fallocate: %s", strerror(errno));
	aiot_img_truncate(&img, 3 * AIOT_MIB);
	fread_chk("fixed read-hole", fd, &img, b0, 65536, AIOT_MIB + 512 * AIOT_KIB, 0, 65536);
	aiot_verify_byte("fixed read of a hole", b0, 65536, 0);
	fread_chk("fixed read-unwritten", fd, &img, b0, 65536, 2 * AIOT_MIB + 65536, 0, 65536);
	aiot_verify_byte("fixed read of an unwritten extent", b0, 65536, 0);
	fwrite_pat("fixed write-hole", fd, &img, b0 + 4096, 65536, AIOT_MIB + 512 * AIOT_KIB, 0,
		   SEED + 2, 65536);
	fwrite_pat("fixed write-hole-1lb", fd, &img, b0, lbs, AIOT_MIB + 768 * AIOT_KIB + lbs, 0,
		   SEED + 3, lbs);
	fwrite_pat("fixed write-unwritten", fd, &img, b0, 65536, 2 * AIOT_MIB + 65536, 0,
		   SEED + 4, 65536);
	fwrite_pat("fixed write-unwritten-1lb", fd, &img, b0, lbs, 2 * AIOT_MIB + 256 * AIOT_KIB + lbs,
		   0, SEED + 5, lbs);
	fread_chk("fixed read-back-hole", fd, &img, b0 + 65536, 512 * AIOT_KIB,
		  AIOT_MIB + 512 * AIOT_KIB, 0, 512 * AIOT_KIB);
	fread_chk("fixed read-back-unwritten", fd, &img, b0 + 65536, 512 * AIOT_KIB,
		  2 * AIOT_MIB, 0, 512 * AIOT_KIB);
	aiot_img_check("after fixed I/O", fd, &img);
	aiot_R("fixed file%s", aiot_img_crc(&img));
	close(fd);
	aiot_img_free(&img);
}

static void test_vectored(void)
{
	size_t o = lbs < AIOT_PAGE ? lbs : 0;
	struct iovec w[3] = {
		{ b0 + o, 4096 + lbs }, { b0 + 4 * AIOT_PAGE, 8192 }, { b0 + 8 * AIOT_PAGE, 65536 },
	};
	struct iovec r[3] = {
		{ b0 + 256 * AIOT_KIB, 8192 }, { b0 + 512 * AIOT_KIB + o, 4096 + lbs },
		{ b0 + 768 * AIOT_KIB, 65536 },
	};
	size_t total = 4096 + lbs + 8192 + 65536;
	uint64_t off = fsbs + (lbs < fsbs ? lbs : 0), pos = off;
	struct aiot_img img;
	int fd = aiot_file_create("fixedvec", O_RDWR | O_DIRECT), i;
	struct aiot_res res;
	struct iocb cb;

	aiot_img_init(&img);
	CHECK(aiot_sync_write_pattern(fd, 0, AIOT_MIB, SEED + 10), "pre-write");
	aiot_img_write(&img, 0, AIOT_MIB, SEED + 10);
	for (i = 0; i < 3; pos += w[i].iov_len, i++)
		aiot_fill(w[i].iov_base, w[i].iov_len, SEED + 11, pos);
	kvec_aio_prep_pwritev_fixed(&cb, fd, w, 3, (long long)off, 0);
	res = aiot_submit_wait(ctx, &cb);
	aiot_report("fixedvec pwritev-3seg", res, NULL, 0);
	expect("fixedvec pwritev-3seg", res, (long)total);
	if (aiot_is(res, (long)total))
		aiot_img_write(&img, off, total, SEED + 11);
	for (i = 0; i < 3; i++)
		memset(r[i].iov_base, AIOT_POISON, r[i].iov_len);
	kvec_aio_prep_preadv_fixed(&cb, fd, r, 3, (long long)off, 0);
	res = aiot_submit_wait(ctx, &cb);
	aiot_R("fixedvec preadv-3seg %s%s%s%s", aiot_resstr(res),
	       aiot_crcstr(r[0].iov_base, r[0].iov_len), aiot_crcstr(r[1].iov_base, r[1].iov_len),
	       aiot_crcstr(r[2].iov_base, r[2].iov_len));
	expect("fixedvec preadv-3seg", res, (long)total);
	for (i = 0, pos = off; i < 3 && aiot_is(res, (long)total); pos += r[i].iov_len, i++)
		CHECK(aiot.nodata || !memcmp(r[i].iov_base, img.b + pos, r[i].iov_len),
		      "fixed preadv segment %d", i);
	/* extending, across EOF */
	pos = off = AIOT_MIB - 4096;
	for (i = 0; i < 3; pos += w[i].iov_len, i++)
		aiot_fill(w[i].iov_base, w[i].iov_len, SEED + 12, pos);
	kvec_aio_prep_pwritev_fixed(&cb, fd, w, 3, (long long)off, 0);
	res = aiot_submit_wait(ctx, &cb);
	aiot_R("fixedvec pwritev-extending %s isize=%lld", aiot_resstr(res), aiot_fsize(fd));
	expect("fixedvec pwritev-extending", res, (long)total);
	if (aiot_is(res, (long)total))
		aiot_img_write(&img, off, total, SEED + 12);
	aiot_img_check("after vectored fixed I/O", fd, &img);
	aiot_R("fixedvec file%s", aiot_img_crc(&img));
	close(fd);
	aiot_img_free(&img);
}

static void test_sync_and_errors(void)
{
	struct aiot_img img;
	int fd = aiot_file_create("fixedsync", O_RDWR | O_DIRECT);
	int dfd = aiot_file_open("fixedsync", O_RDWR | O_DIRECT | O_DSYNC);
	int bfd = aiot_file_open("fixedsync", O_RDWR);
	struct aiot_res r;
	struct iocb cb;

	aiot_img_init(&img);
	fwrite_pat("fixedsync O_DSYNC extending", dfd, &img, b0, 131072, 0, 0, SEED + 20, 131072);
	fwrite_pat("fixedsync O_DSYNC overwrite", dfd, &img, b0, 4096, lbs, 0, SEED + 21, 4096);
	aiot_fill(b0, 65536, SEED + 22, 131072);
	kvec_aio_prep_pwrite_fixed(&cb, fd, b0, 65536, 131072, 0);
	cb.aio_rw_flags = RWF_DSYNC;
	r = aiot_submit_wait(ctx, &cb);
	aiot_R("fixedsync RWF_DSYNC extending %s isize=%lld", aiot_resstr(r), aiot_fsize(fd));
	expect("fixedsync RWF_DSYNC extending", r, 65536);
	if (aiot_is(r, 65536))
		aiot_img_write(&img, 131072, 65536, SEED + 22);

	/* stock's errors */
	r = fixed(fd, 0, b0, 4096, 1, 0);
	aiot_report("fixedsync read-off1", r, NULL, 0);
	expect("fixedsync read-off1", r, -EINVAL);
	r = fixed(fd, 1, b0, 4096, 1, 0);
	aiot_R("fixedsync write-off1 %s isize=%lld", aiot_resstr(r), aiot_fsize(fd));
	expect("fixedsync write-off1", r, -EINVAL);
	r = fixed(fd, 0, b0, 100, 0, 0);
	aiot_report("fixedsync read-len100", r, NULL, 0);
	expect("fixedsync read-len100", r, -EINVAL);
	r = fixed(fd, 1, b0, 100, 0, 0);
	aiot_report("fixedsync write-len100", r, NULL, 0);
	expect("fixedsync write-len100", r, -EINVAL);
	r = fixed(fd, 0, b0, 4096, 0, 2);
	aiot_report("fixedsync read-empty-slot", r, NULL, 0);
	CHECK(r.submit == -EFAULT, "fixed read from slot 2: %s", aiot_resstr(r));
	r = fixed(fd, 1, b0 + BUF0 - 4096, 8192, 0, 0);
	aiot_report("fixedsync write-past-buffer", r, NULL, 0);
	CHECK(r.submit == -EFAULT, "fixed write past the buffer: %s", aiot_resstr(r));

	/* a descriptor without O_DIRECT: buffered, from the registered pages */
	fwrite_pat("fixedsync buffered-fd write", bfd, &img, b0 + 100, 5000, 1000, 0, SEED + 23,
		   5000);
	fread_chk("fixedsync buffered-fd read", bfd, &img, b0 + 3, 7000, 500, 0, 7000);
	CHECK(fsync(bfd) == 0, "fsync: %s", strerror(errno));
	aiot_img_check("after fixed I/O with O_DSYNC and without O_DIRECT", fd, &img);
	aiot_R("fixedsync file%s", aiot_img_crc(&img));
	close(bfd);
	close(dfd);
	close(fd);
	aiot_img_free(&img);
}

/* io_destroy with fixed reads of the file in flight, in a context of its own */
static void test_destroy_inflight(void)
{
	static struct iocb cbs[NFLY];
	struct iocb *cbp[NFLY];
	struct iovec reg = { b0, NFLY * FLYLEN };
	io_context_t c = aiot_ctx(NFLY);
	int fd = aiot_file_create("fixedfly", O_RDWR | O_DIRECT), i, ret;
	long long reg0 = aiot_stat("pages_registered"), unreg0 = aiot_stat("pages_unregistered");

	CHECK(aiot_sync_write_pattern(fd, 0, NFLY * FLYLEN, SEED + 30), "pre-write");
	memset(b0, AIOT_POISON, NFLY * FLYLEN);
	ret = kvec_aio_register(c, &reg, 1);
	CHECK(ret == 1, "register: %s", aiot_rstr(ret));
	for (i = 0; i < NFLY; i++) {
		kvec_aio_prep_pread_fixed(&cbs[i], fd, b0 + (size_t)i * FLYLEN, FLYLEN,
					  (long long)(NFLY - 1 - i) * FLYLEN, 0);
		cbp[i] = &cbs[i];
	}
	ret = io_submit(c, NFLY, cbp);
	aiot_R("fixedfly submit=%s", aiot_rstr(ret));
	CHECK(ret == NFLY, "submit %d fixed reads: %s", NFLY, aiot_rstr(ret));
	ret = io_destroy(c);
	aiot_R("fixedfly io_destroy=%s", aiot_rstr(ret));
	CHECK(ret == 0, "io_destroy: %s", aiot_rstr(ret));
	for (i = 0; i < NFLY; i++)
		if (!aiot_verify("fixed read finished by io_destroy", b0 + (size_t)i * FLYLEN,
				 FLYLEN, SEED + 30, (uint64_t)(NFLY - 1 - i) * FLYLEN))
			break;
	CHECK(aiot_stat("pages_registered") - reg0 == aiot_stat("pages_unregistered") - unreg0,
	      "registered pages not all released by io_destroy");
	close(fd);
}

int main(void)
{
	struct iovec reg[2];
	int ret;

	aiot_init_file("t-file-fixed");
	if (aiot_stat("fixed_iocbs") < 0 || aiot_stat("file_iocbs") < 0)
		aiot_skip("kernel without registered kvecs on files (no file_iocbs in /proc/fs/aio_kvec)");
	lbs = aiot.lbs;
	fsbs = aiot.fsbs;
	if (aiot.dma_mask > 511)
		aiot_skip("device needs buffers aligned to more than 512 bytes");
	ctx = aiot_ctx(8);
	b0 = aiot_map(BUF0);
	b1 = aiot_map(BUF1 + 512);
	reg[0] = (struct iovec){ b0, BUF0 };
	reg[1] = (struct iovec){ b1 + 512, BUF1 };
	ret = kvec_aio_register(ctx, reg, 2);
	aiot_R("register %s", aiot_rstr(ret));
	if (!CHECK(ret == 2, "register: %s", aiot_rstr(ret)))
		return aiot_finish();

	test_basic();
	test_vectored();
	test_sync_and_errors();
	ret = kvec_aio_unregister(ctx);
	CHECK(ret == 2, "unregister: %s", aiot_rstr(ret));
	test_destroy_inflight();

	aiot_unmap(b0, BUF0);
	aiot_unmap(b1, BUF1 + 512);
	aiot_ctx_destroy(ctx);
	return aiot_finish();
}
