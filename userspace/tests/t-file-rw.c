// SPDX-License-Identifier: GPL-2.0
/*
 * t-file-rw: O_DIRECT aio on regular files of ext4 and XFS (AIOT_DIR), the
 * data path.  Every write is followed in an image of the file (aiotest's
 * aiot_img), and the file is read back whole through pread(2) and compared
 * byte for byte; each aio read is verified against the pattern it should
 * find, with a guard page after the buffer that must stay untouched.
 *  - extending writes from an empty file: a first block, appends, a write
 *    one logical block past EOF (a gap inside a filesystem block where
 *    that is bigger), a write 1 MiB past EOF, a write across EOF; i_size
 *    (fstat) after each completion;
 *  - reads of one logical block to 2 MiB at logical-block, page and
 *    filesystem-block offsets, buffers at a logical-block offset in a page;
 *  - reads at and across EOF of a file whose size is not a whole number of
 *    blocks: the short counts, and what the buffer holds past them;
 *  - holes (ftruncate-extended) read as zeros, then written in place, also
 *    less than a filesystem block; unwritten extents (fallocate) the same,
 *    fallocate KEEP_SIZE past EOF, an extending write into it, and
 *    PUNCH_HOLE of written data;
 *  - PREADV/PWRITEV with several segments at logical-block offsets in
 *    their pages, in place and extending;
 *  - O_DSYNC and O_SYNC descriptors, RWF_DSYNC and RWF_SYNC (plain and
 *    vectored), IOCB_CMD_FDSYNC/FSYNC on the file, an unknown RWF bit;
 *  - 32 writes and then 32 reads in flight at once on a preallocated file.
 */
#include "aiotest.h"

#include <linux/fs.h>

#define SEED	9100
#define BUFLEN	(4 * AIOT_MIB + 2 * AIOT_PAGE)
#define GUARD	AIOT_PAGE

static io_context_t ctx;
static unsigned int lbs, fsbs;
static uint8_t *buf;

/* "R <tag> submit=.. res=.. isize=.." */
static void report_size(const char *tag, struct aiot_res r, int fd)
{
	aiot_R("%s %s isize=%lld", tag, aiot_resstr(r), aiot_fsize(fd));
}

static void expect(const char *tag, struct aiot_res r, long want)
{
	CHECK(aiot_is(r, want), "%s: %s, want res %s", tag, aiot_resstr(r), aiot_rstr(want));
}

/* aio write of the (seed, off) pattern from buf + bufoff; the image follows */
static struct aiot_res wr(int fd, struct aiot_img *img, size_t bufoff, uint64_t off,
			  size_t len, uint64_t seed)
{
	struct aiot_res r;

	aiot_fill(buf + bufoff, len, seed, off);
	r = aiot_pwrite(ctx, fd, buf + bufoff, len, (long long)off);
	if (r.submit == 1 && r.res > 0)
		aiot_img_write(img, off, (uint64_t)r.res, seed);
	return r;
}

/*
 * aio read into buf + bufoff (poisoned, with a guard after it): reports
 * res and the crc of the whole requested buffer, checks the bytes up to
 * res against the image.
 */
static struct aiot_res rd(const char *tag, int fd, const struct aiot_img *img,
			  size_t bufoff, uint64_t off, size_t len)
{
	struct aiot_res r;

	memset(buf, AIOT_POISON, bufoff + len + GUARD);
	r = aiot_pread(ctx, fd, buf + bufoff, len, (long long)off);
	aiot_report(tag, r, buf + bufoff, len);
	CHECK(!(r.submit == 1 && r.res > 0 && off + (uint64_t)r.res <= img->size &&
		!aiot.nodata && memcmp(buf + bufoff, img->b + off, (size_t)r.res)),
	      "%s: data read differs from the file's", tag);
	aiot_verify_byte("guard after the read buffer", buf + bufoff + len, GUARD, AIOT_POISON);
	return r;
}

static void test_extend(void)
{
	/* each at i_size + gap - back */
	const struct { const char *name; uint64_t gap, back; size_t len; } w[] = {
		{ "first-block", 0, 0, fsbs },
		{ "append-64k", 0, 0, 64 * AIOT_KIB },
		{ "gap-1lb", lbs, 0, lbs },		/* inside a block if fsbs > lbs */
		{ "past-eof-1m", AIOT_MIB, 0, 128 * AIOT_KIB },
		{ "across-eof", 0, lbs, 8192 },
		{ "append-1m+4k", 0, 0, AIOT_MIB + 4096 },
	};
	struct aiot_img img;
	int fd = aiot_file_create("extend", O_RDWR | O_DIRECT);
	unsigned int i;
	char tag[96];

	aiot_img_init(&img);
	for (i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		uint64_t off = (uint64_t)aiot_fsize(fd) + w[i].gap - w[i].back;
		size_t len = w[i].len;
		struct aiot_res r;

		r = wr(fd, &img, 0, off, len, SEED + i);
		snprintf(tag, sizeof(tag), "extend %s", w[i].name);
		report_size(tag, r, fd);
		expect(tag, r, (long)len);
		CHECK(aiot_fsize(fd) == (long long)(off + len), "%s: i_size %lld, want %llu",
		      tag, aiot_fsize(fd), (unsigned long long)(off + len));
	}
	aiot_img_check("extending writes", fd, &img);
	aiot_R("extend file size=%llu%s", (unsigned long long)img.size, aiot_img_crc(&img));
	close(fd);
	aiot_img_free(&img);
}

static void test_read_sizes(void)
{
	const struct { uint64_t off; size_t len; bool odd_buf; } c[] = {
		{ 0, lbs, false },
		{ 7ULL * lbs, 4096, false },
		{ 3ULL * fsbs, 64 * AIOT_KIB, true },	/* buffer a logical block into its page */
		{ 0, AIOT_MIB, false },
		{ lbs, AIOT_MIB + 4096, true },		/* more than 256 pages */
		{ 5ULL * lbs, 2 * AIOT_MIB, false },
		{ 2 * AIOT_MIB, 64 * AIOT_KIB, false },
	};
	const uint64_t fsize = 3 * AIOT_MIB;
	struct aiot_img img;
	int fd = aiot_file_create("read", O_RDWR | O_DIRECT);
	unsigned int i;
	char tag[96];

	aiot_img_init(&img);
	CHECK(aiot_sync_write_pattern(fd, 0, fsize, SEED + 20), "pre-write");
	aiot_img_write(&img, 0, fsize, SEED + 20);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		size_t bufoff = c[i].odd_buf && lbs < AIOT_PAGE ? lbs : 0;
		struct aiot_res r;

		snprintf(tag, sizeof(tag), "read len=%zu off=%llu bufoff=%zu", c[i].len,
			 (unsigned long long)c[i].off, bufoff);
		r = rd(tag, fd, &img, bufoff, c[i].off, c[i].len);
		expect(tag, r, (long)c[i].len);
	}
	close(fd);
	aiot_img_free(&img);
}

static void test_eof(void)
{
	const uint64_t size = AIOT_MIB + 1000;
	struct aiot_img img;
	int fd = aiot_file_create("eof", O_RDWR | O_DIRECT);
	const struct { const char *name; uint64_t off; size_t len; long want; } c[] = {
		{ "at-last-block", AIOT_MIB, 4096, 1000 },
		{ "across-eof-128k", AIOT_MIB - 64 * AIOT_KIB, 128 * AIOT_KIB, 64 * AIOT_KIB + 1000 },
		{ "last-lb", aiot_round_down(size, lbs), 4096,
		  (long)(size - aiot_round_down(size, lbs)) },
		{ "at-eof-rounded", aiot_round_up(size, lbs), lbs, 0 },
		{ "past-eof", 4 * AIOT_MIB, 64 * AIOT_KIB, 0 },
	};
	struct iovec iov[3];
	struct iocb cb;
	struct aiot_res r;
	unsigned int i;
	char tag[96];

	aiot_img_init(&img);
	CHECK(aiot_sync_write_pattern(fd, 0, AIOT_MIB + 8192, SEED + 30), "pre-write");
	aiot_img_write(&img, 0, AIOT_MIB + 8192, SEED + 30);
	CHECK(ftruncate(fd, (off_t)size) == 0, "ftruncate: %s", strerror(errno));
	aiot_img_truncate(&img, size);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		snprintf(tag, sizeof(tag), "eof %s", c[i].name);
		r = rd(tag, fd, &img, 0, c[i].off, c[i].len);
		expect(tag, r, c[i].want);
	}
	/* vectored, across EOF: 4 KiB + 1000 bytes of 16 KiB */
	memset(buf, AIOT_POISON, 8 * AIOT_PAGE);
	iov[0] = (struct iovec){ buf, 4096 };
	iov[1] = (struct iovec){ buf + 2 * AIOT_PAGE, 4096 };
	iov[2] = (struct iovec){ buf + 4 * AIOT_PAGE, 8192 };
	aiot_prep_preadv(&cb, fd, iov, 3, AIOT_MIB - 4096);
	r = aiot_submit_wait(ctx, &cb);
	aiot_R("eof preadv-3seg %s crc=%s%s%s", aiot_resstr(r), aiot_crcstr(buf, 4096),
	       aiot_crcstr(buf + 2 * AIOT_PAGE, 4096), aiot_crcstr(buf + 4 * AIOT_PAGE, 8192));
	expect("eof preadv-3seg", r, 4096 + 1000);
	aiot_verify("eof preadv-3seg seg 0", buf, 4096, SEED + 30, AIOT_MIB - 4096);
	aiot_verify("eof preadv-3seg seg 1", buf + 2 * AIOT_PAGE, 1000, SEED + 30, AIOT_MIB);
	aiot_img_check("after reads at EOF", fd, &img);
	close(fd);
	aiot_img_free(&img);
}

static void test_hole(void)
{
	struct aiot_img img;
	int fd = aiot_file_create("hole", O_RDWR | O_DIRECT);
	struct aiot_res r;

	aiot_img_init(&img);
	CHECK(ftruncate(fd, 2 * AIOT_MIB) == 0, "ftruncate: %s", strerror(errno));
	aiot_img_truncate(&img, 2 * AIOT_MIB);
	r = rd("hole read-1m", fd, &img, 0, 256 * AIOT_KIB, AIOT_MIB);
	expect("hole read-1m", r, AIOT_MIB);
	aiot_verify_byte("hole read", buf, AIOT_MIB, 0);

	r = wr(fd, &img, 0, 512 * AIOT_KIB + lbs, 64 * AIOT_KIB, SEED + 40);
	report_size("hole write-64k", r, fd);
	expect("hole write-64k", r, 64 * AIOT_KIB);
	r = wr(fd, &img, 0, AIOT_MIB + lbs, lbs, SEED + 41);
	report_size("hole write-1lb", r, fd);
	expect("hole write-1lb", r, lbs);
	r = wr(fd, &img, 0, 2 * AIOT_MIB - fsbs, fsbs, SEED + 42);
	report_size("hole write-last-block", r, fd);
	expect("hole write-last-block", r, fsbs);

	r = rd("hole read-back", fd, &img, 0, 256 * AIOT_KIB, AIOT_MIB);
	expect("hole read-back", r, AIOT_MIB);
	r = rd("hole read-tail", fd, &img, 0, AIOT_MIB + 256 * AIOT_KIB, AIOT_MIB);
	expect("hole read-tail", r, 3 * AIOT_MIB / 4);
	aiot_img_check("holes written", fd, &img);
	aiot_R("hole file size=%llu%s", (unsigned long long)img.size, aiot_img_crc(&img));
	close(fd);
	aiot_img_free(&img);
}

static void test_prealloc(void)
{
	struct aiot_img img;
	int fd = aiot_file_create("falloc", O_RDWR | O_DIRECT), ret;
	struct aiot_res r;

	aiot_img_init(&img);
	ret = fallocate(fd, 0, 0, 2 * AIOT_MIB);
	aiot_R("falloc 2m ret=%s isize=%lld", aiot_rstr(ret ? -errno : 0), aiot_fsize(fd));
	CHECK(ret == 0, "fallocate: %s", strerror(errno));
	aiot_img_truncate(&img, 2 * AIOT_MIB);
	r = rd("falloc read-unwritten", fd, &img, 0, 0, 256 * AIOT_KIB);
	expect("falloc read-unwritten", r, 256 * AIOT_KIB);
	aiot_verify_byte("unwritten extent read", buf, 256 * AIOT_KIB, 0);

	r = wr(fd, &img, 0, AIOT_MIB, 64 * AIOT_KIB, SEED + 50);
	report_size("falloc write-64k", r, fd);
	expect("falloc write-64k", r, 64 * AIOT_KIB);
	r = wr(fd, &img, 0, AIOT_MIB + 128 * AIOT_KIB + lbs, lbs, SEED + 51);
	report_size("falloc write-1lb", r, fd);
	expect("falloc write-1lb", r, lbs);

	/* preallocated past EOF: reads end at EOF, an extending write uses it */
	ret = fallocate(fd, FALLOC_FL_KEEP_SIZE, 2 * AIOT_MIB, AIOT_MIB);
	aiot_R("falloc keep-size ret=%s isize=%lld", aiot_rstr(ret ? -errno : 0),
	       aiot_fsize(fd));
	CHECK(ret == 0, "fallocate KEEP_SIZE: %s", strerror(errno));
	r = rd("falloc read-past-eof", fd, &img, 0, 2 * AIOT_MIB, 64 * AIOT_KIB);
	expect("falloc read-past-eof", r, 0);
	r = wr(fd, &img, 0, 2 * AIOT_MIB, 64 * AIOT_KIB, SEED + 52);
	report_size("falloc write-extending", r, fd);
	expect("falloc write-extending", r, 64 * AIOT_KIB);

	r = rd("falloc read-back", fd, &img, 0, AIOT_MIB - 64 * AIOT_KIB, 512 * AIOT_KIB);
	expect("falloc read-back", r, 512 * AIOT_KIB);
	aiot_img_check("unwritten extents written", fd, &img);

	/* punch the written 64 KiB out: zeros again */
	ret = fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, AIOT_MIB, 64 * AIOT_KIB);
	aiot_R("falloc punch ret=%s", aiot_rstr(ret ? -errno : 0));
	CHECK(ret == 0, "PUNCH_HOLE: %s", strerror(errno));
	aiot_img_zero(&img, AIOT_MIB, 64 * AIOT_KIB);
	r = rd("falloc read-punched", fd, &img, 0, AIOT_MIB - 4096, 128 * AIOT_KIB);
	expect("falloc read-punched", r, 128 * AIOT_KIB);
	aiot_img_check("after PUNCH_HOLE", fd, &img);
	aiot_R("falloc file size=%llu%s", (unsigned long long)img.size, aiot_img_crc(&img));
	close(fd);
	aiot_img_free(&img);
}

/*
 * Four segments at logical-block offsets in their pages, the first across
 * a page boundary: 76 KiB + 2 logical blocks, in buf's first 25 pages.
 */
#define VEC_PAGES	25
static int vec_layout(struct iovec *iov)
{
	size_t o1 = lbs < AIOT_PAGE ? lbs : 0, o2 = lbs < AIOT_PAGE ? AIOT_PAGE - lbs : 0;

	iov[0] = (struct iovec){ buf + o1, 4096 + lbs };
	iov[1] = (struct iovec){ buf + 4 * AIOT_PAGE, 8192 };
	iov[2] = (struct iovec){ buf + 7 * AIOT_PAGE + o2, lbs };
	iov[3] = (struct iovec){ buf + 9 * AIOT_PAGE, 64 * AIOT_KIB };
	return 4;
}

static void vec_rw(const char *tag, int write, int fd, struct aiot_img *img,
		   uint64_t off, uint64_t seed)
{
	struct iovec iov[4];
	int n = vec_layout(iov), i;
	uint64_t pos = off, total = 0;
	struct aiot_res r;
	struct iocb cb;

	memset(buf, AIOT_POISON, (VEC_PAGES + 1) * AIOT_PAGE);
	for (i = 0; i < n; i++)
		total += iov[i].iov_len;
	if (write) {
		for (i = 0; i < n; pos += iov[i].iov_len, i++)
			aiot_fill(iov[i].iov_base, iov[i].iov_len, seed, pos);
		aiot_prep_pwritev(&cb, fd, iov, n, (long long)off);
	} else {
		aiot_prep_preadv(&cb, fd, iov, n, (long long)off);
	}
	r = aiot_submit_wait(ctx, &cb);
	if (write) {
		report_size(tag, r, fd);
		if (aiot_is(r, (long)total))
			aiot_img_write(img, off, total, seed);
	} else {
		aiot_R("%s %s%s%s%s%s", tag, aiot_resstr(r),
		       aiot_crcstr(iov[0].iov_base, iov[0].iov_len),
		       aiot_crcstr(iov[1].iov_base, iov[1].iov_len),
		       aiot_crcstr(iov[2].iov_base, iov[2].iov_len),
		       aiot_crcstr(iov[3].iov_base, iov[3].iov_len));
		for (i = 0, pos = off; i < n && aiot_is(r, (long)total);
		     pos += iov[i].iov_len, i++)
			CHECK(aiot.nodata || !memcmp(iov[i].iov_base, img->b + pos, iov[i].iov_len),
			      "%s: segment %d differs from the file", tag, i);
		aiot_verify_byte("page after the last segment", buf + VEC_PAGES * AIOT_PAGE,
				 AIOT_PAGE, AIOT_POISON);
	}
	expect(tag, r, (long)total);
}

static void test_vectored(void)
{
	struct aiot_img img;
	int fd = aiot_file_create("vec", O_RDWR | O_DIRECT);
	uint64_t sub = 3 * fsbs + (lbs < fsbs ? lbs : 0);

	aiot_img_init(&img);
	CHECK(aiot_sync_write_pattern(fd, 0, AIOT_MIB, SEED + 60), "pre-write");
	aiot_img_write(&img, 0, AIOT_MIB, SEED + 60);
	vec_rw("vec pwritev-4seg in-place", 1, fd, &img, sub, SEED + 61);
	vec_rw("vec preadv-4seg", 0, fd, &img, sub, 0);
	vec_rw("vec preadv-4seg other-offset", 0, fd, &img, 5 * lbs, 0);
	vec_rw("vec pwritev-4seg extending", 1, fd, &img, AIOT_MIB - 2 * lbs, SEED + 62);
	vec_rw("vec preadv-4seg extended", 0, fd, &img, AIOT_MIB - 2 * lbs, 0);
	aiot_img_check("vectored writes", fd, &img);
	aiot_R("vec file size=%llu%s", (unsigned long long)img.size, aiot_img_crc(&img));
	close(fd);
	aiot_img_free(&img);
}

static void sync_write(const char *tag, int fd, int rwflags, struct aiot_img *img,
		       uint64_t off, size_t len, uint64_t seed)
{
	struct aiot_res r;
	struct iocb cb;

	aiot_fill(buf, len, seed, off);
	aiot_prep_rw(&cb, 1, fd, buf, len, (long long)off, rwflags);
	r = aiot_submit_wait(ctx, &cb);
	report_size(tag, r, fd);
	expect(tag, r, (long)len);
	if (aiot_is(r, (long)len))
		aiot_img_write(img, off, len, seed);
}

static void fsync_op(const char *tag, int fd, int datasync)
{
	expect(tag, aiot_fsync_report(ctx, tag, fd, datasync), 0);
}

static void test_dsync(void)
{
	struct aiot_img img;
	int fd = aiot_file_create("dsync", O_RDWR | O_DIRECT);
	int dfd = aiot_file_open("dsync", O_RDWR | O_DIRECT | O_DSYNC);
	int sfd = aiot_file_open("dsync", O_RDWR | O_DIRECT | O_SYNC);
	struct iovec iov[3];
	struct aiot_res r;
	struct iocb cb;

	aiot_img_init(&img);
	sync_write("dsync O_DSYNC extending", dfd, 0, &img, 0, 64 * AIOT_KIB, SEED + 70);
	sync_write("dsync O_DSYNC overwrite", dfd, 0, &img, lbs, 4096, SEED + 71);
	sync_write("dsync O_SYNC extending", sfd, 0, &img, 64 * AIOT_KIB, 64 * AIOT_KIB, SEED + 72);
	sync_write("dsync RWF_DSYNC extending", fd, RWF_DSYNC, &img, 128 * AIOT_KIB,
		   128 * AIOT_KIB, SEED + 73);
	sync_write("dsync RWF_DSYNC overwrite", fd, RWF_DSYNC, &img, 8192, 8192, SEED + 74);
	sync_write("dsync RWF_SYNC overwrite", fd, RWF_SYNC, &img, 0, 4096, SEED + 75);
	sync_write("dsync O_DSYNC+RWF_DSYNC", dfd, RWF_DSYNC, &img, 256 * AIOT_KIB,
		   AIOT_MIB + 4096, SEED + 76);

	/* vectored RWF_DSYNC, extending */
	iov[0] = (struct iovec){ buf, 4096 };
	iov[1] = (struct iovec){ buf + 2 * AIOT_PAGE, 2 * lbs };
	iov[2] = (struct iovec){ buf + 4 * AIOT_PAGE, 64 * AIOT_KIB };
	aiot_fill(iov[0].iov_base, 4096, SEED + 77, img.size);
	aiot_fill(iov[1].iov_base, 2 * lbs, SEED + 77, img.size + 4096);
	aiot_fill(iov[2].iov_base, 64 * AIOT_KIB, SEED + 77, img.size + 4096 + 2 * lbs);
	io_prep_pwritev2(&cb, fd, iov, 3, (long long)img.size, RWF_DSYNC);
	aiot_mark(&cb);
	r = aiot_submit_wait(ctx, &cb);
	report_size("dsync pwritev RWF_DSYNC", r, fd);
	expect("dsync pwritev RWF_DSYNC", r, (long)(4096 + 2 * lbs + 64 * AIOT_KIB));
	if (r.submit == 1 && r.res > 0)
		aiot_img_write(&img, img.size, (uint64_t)r.res, SEED + 77);

	fsync_op("dsync fdsync", fd, 1);
	fsync_op("dsync fsync", fd, 0);
	fsync_op("dsync fdsync O_DSYNC", dfd, 1);

	/* a read with RWF_DSYNC is a plain read */
	memset(buf, AIOT_POISON, 65536);
	aiot_prep_rw(&cb, 0, fd, buf, 65536, 64 * AIOT_KIB, RWF_DSYNC);
	r = aiot_submit_wait(ctx, &cb);
	aiot_report("dsync read RWF_DSYNC", r, buf, 65536);
	expect("dsync read RWF_DSYNC", r, 65536);
	CHECK(aiot.nodata || !memcmp(buf, img.b + 64 * AIOT_KIB, 65536), "read RWF_DSYNC data");

	/* an RWF bit the kernel does not know: io_submit refuses it */
	aiot_prep_rw(&cb, 1, fd, buf, 4096, 0, (int)0x40000000);
	r = aiot_submit_wait(ctx, &cb);
	aiot_report("dsync write rw_flags=0x40000000", r, NULL, 0);
	CHECK(r.submit == -EOPNOTSUPP, "unknown RWF flag: %s", aiot_resstr(r));

	aiot_img_check("synchronous writes", fd, &img);
	aiot_R("dsync file size=%llu%s", (unsigned long long)img.size, aiot_img_crc(&img));
	close(sfd);
	close(dfd);
	close(fd);
	aiot_img_free(&img);
}

#define NB	32
#define BLEN	(64 * AIOT_KIB)

static void test_batch(void)
{
	static struct iocb cbs[NB];
	struct iocb *cbp[NB];
	struct io_event ev[NB];
	unsigned char seen[NB];
	struct aiot_img img;
	int fd = aiot_file_create("batch", O_RDWR | O_DIRECT), i, wok = 0, rok = 0, ret;
	long long files0 = aiot_stat("file_iocbs");

	aiot_img_init(&img);
	ret = fallocate(fd, 0, 0, NB * BLEN);
	CHECK(ret == 0, "fallocate: %s", strerror(errno));
	aiot_img_truncate(&img, NB * BLEN);
	/* buffers 64 KiB + a page apart, every other one a logical block in */
	for (i = 0; i < NB; i++) {
		size_t bo = (i & 1) && lbs < AIOT_PAGE ? lbs : 0;

		aiot_prep_pattern(&cbs[i], 1, fd, buf + (size_t)i * (BLEN + AIOT_PAGE) + bo,
				  BLEN, (uint64_t)i * BLEN, SEED + 80);
		cbp[i] = &cbs[i];
	}
	ret = aiot_submit(ctx, NB, cbp);
	CHECK(ret == NB, "submit %d writes: %s", NB, aiot_rstr(ret));
	if (ret > 0 && aiot_reap(ctx, ret, ev) == ret) {
		memset(seen, 0, sizeof(seen));
		for (i = 0; i < ret; i++) {
			int k = aiot_event_iocb(&ev[i], cbs, NB, seen);

			if (k >= 0 && ev[i].res == BLEN) {
				wok++;
				aiot_img_write(&img, (uint64_t)k * BLEN, BLEN, SEED + 80);
			}
		}
	}
	for (i = 0; i < NB; i++) {
		size_t bo = !(i & 1) && lbs < AIOT_PAGE ? lbs : 0;
		uint8_t *b = buf + (size_t)i * (BLEN + AIOT_PAGE);

		aiot_prep_pattern(&cbs[i], 0, fd, b + bo, BLEN, (uint64_t)(NB - 1 - i) * BLEN, 0);
	}
	ret = aiot_submit(ctx, NB, cbp);
	CHECK(ret == NB, "submit %d reads: %s", NB, aiot_rstr(ret));
	if (ret > 0 && aiot_reap(ctx, ret, ev) == ret) {
		memset(seen, 0, sizeof(seen));
		for (i = 0; i < ret; i++) {
			int k = aiot_event_iocb(&ev[i], cbs, NB, seen);

			if (k >= 0 && ev[i].res == BLEN &&
			    aiot_verify("batch read", (void *)(uintptr_t)cbs[k].u.c.buf, BLEN,
					SEED + 80, (uint64_t)(NB - 1 - k) * BLEN))
				rok++;
		}
	}
	aiot_R("batch writes-ok=%d reads-ok=%d", wok, rok);
	CHECK(wok == NB && rok == NB, "batch: %d writes, %d reads of %d complete", wok, rok, NB);
	aiot_img_check("batch writes", fd, &img);
	if (!aiot_mode_is_stock() && files0 >= 0)
		CHECK(aiot_stat("file_iocbs") - files0 >= 2 * NB,
		      "file_iocbs +%lld for %d file iocbs", aiot_stat("file_iocbs") - files0, 2 * NB);
	close(fd);
	aiot_img_free(&img);
}

int main(void)
{
	aiot_init_file("t-file-rw");
	lbs = aiot.lbs;
	fsbs = aiot.fsbs;
	if (aiot.dma_mask >= lbs)
		aiot_skip("device needs buffers aligned to more than a logical block");
	ctx = aiot_ctx(NB + 4);
	buf = aiot_alloc(BUFLEN + GUARD);

	test_extend();
	test_read_sizes();
	test_eof();
	test_hole();
	test_prealloc();
	test_vectored();
	test_dsync();
	test_batch();

	free(buf);
	aiot_ctx_destroy(ctx);
	return aiot_finish();
}
