// SPDX-License-Identifier: GPL-2.0
/*
 * t-file-edge: O_DIRECT aio on ext4 and XFS files (AIOT_DIR) at the edges,
 * each result the stock one (the runner compares the R lines between the
 * modes) and, where the rule is plain, the one iomap gives in 6.1
 * (fs/iomap/direct-io.c):
 *  - alignment: the file offset and length against the device's logical
 *    block (EINVAL), the buffer address against its DMA alignment (EINVAL),
 *    a buffer 512 bytes into a page on a 4 KiB device and 4 bytes into one
 *    on NVMe (allowed: only the DMA alignment counts), writes of one logical
 *    block inside a bigger filesystem block; misaligned reads of a hole or
 *    an unwritten extent succeed (iomap zeroes the buffer without checking)
 *    and misaligned reads at or past EOF return 0.  In the kvec modes a
 *    buffer at an in-page offset that is not a multiple of the logical block
 *    crossing a page counts in fallback_unaligned, others in file_iocbs;
 *  - EFAULT: an unmapped buffer, a buffer whose second page is PROT_NONE or
 *    unmapped (iomap submits the first page, then fails the whole I/O with
 *    EFAULT: what reached the device or the buffer is recorded), a read into
 *    a read-only mapping, a write from one (works), a vectored I/O with a bad
 *    second segment, a 2 MiB read whose last page is bad, and a one-page
 *    unmapped buffer and read into read-only memory; i_size and the file's
 *    contents after each failed write.  Partly pinnable buffers, and the
 *    one-page ones, count in fallback_fault in the kvec modes;
 *  - RWF_NOWAIT: reads and overwrites of written blocks, writes into a hole,
 *    an unwritten extent, past EOF and of less than a filesystem block;
 *    with a dirty page cache page (buffered write on a second descriptor)
 *    and a clean cached one; the result (length or EAGAIN) is what stock
 *    gives, recorded, and a refused write changes nothing.  On XFS the
 *    NOWAIT writes use a descriptor opened by handle (FMODE_NOCMTIME), as
 *    its c/mtime check makes them EAGAIN whenever the clock has ticked;
 *  - ext4's fallback to buffered I/O, reached with per-file data journaling
 *    (chattr +j, FS_JOURNAL_DATA_FL; honoured only on a nodelalloc mount:
 *    statx's dio_offset_align is then 0): aligned and misaligned O_DIRECT
 *    aio then run as buffered I/O and succeed, a partly mapped buffer gives
 *    a short count.  With delalloc the flag is kept but O_DIRECT stays
 *    direct; XFS refuses the flag (both recorded).
 */
#include "aiotest.h"

#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#define SEED	9300
#define FSIZE	AIOT_MIB
#define BUFLEN	(4 * AIOT_MIB)

static io_context_t ctx;
static unsigned int lbs, fsbs;
static uint8_t *buf;
static bool kvec_counts;	/* a kvec mode on a kernel with the file counters */

struct counters {
	long long files, unaligned, fault;
};

static struct counters counters_now(void)
{
	struct counters c = {
		aiot_stat("file_iocbs"), aiot_stat("fallback_unaligned"),
		aiot_stat("fallback_fault"),
	};
	return c;
}

/* In the kvec modes: at least these many more of each since @c0. */
static void counters_expect(const char *tag, struct counters c0, int files,
			    int unaligned, int fault)
{
	struct counters c = counters_now();

	if (!kvec_counts)
		return;
	CHECK(c.files - c0.files >= files, "%s: file_iocbs +%lld, want +%d", tag,
	      c.files - c0.files, files);
	CHECK(c.unaligned - c0.unaligned >= unaligned, "%s: fallback_unaligned +%lld, want +%d",
	      tag, c.unaligned - c0.unaligned, unaligned);
	CHECK(c.fault - c0.fault >= fault, "%s: fallback_fault +%lld, want +%d", tag,
	      c.fault - c0.fault, fault);
}

static void expect(const char *tag, struct aiot_res r, long want)
{
	CHECK(aiot_is(r, want), "%s: %s, want res %s", tag, aiot_resstr(r), aiot_rstr(want));
}

/* A fresh file of FSIZE bytes of the (seed, off) pattern, and its image. */
static int pattern_file(const char *name, struct aiot_img *img, uint64_t seed)
{
	int fd = aiot_file_create(name, O_RDWR | O_DIRECT);

	aiot_img_init(img);
	CHECK(aiot_sync_write_pattern(fd, 0, FSIZE, seed), "%s: pre-write", name);
	aiot_img_write(img, 0, FSIZE, seed);
	return fd;
}

/* ------------------------------------------------------------ alignment */

/*
 * One read and one write of @len bytes at file offset @off from buf +
 * @bufoff, with iomap's verdict: EINVAL when the offset or the length is
 * not a multiple of the logical block or the buffer not DMA aligned.
 */
static void align_case(int fd, struct aiot_img *img, const char *name, uint64_t off,
		       size_t len, size_t bufoff, uint64_t seed)
{
	bool bad = ((off | len) & (lbs - 1)) || (bufoff & aiot.dma_mask);
	/* what the kvec path leaves to stock: misaligned in the page, across one */
	bool unaligned = (bufoff % lbs) && (bufoff % AIOT_PAGE) + len > AIOT_PAGE;
	long want = bad ? -EINVAL : (long)len;
	struct counters c0;
	struct aiot_res r;
	char tag[128];

	snprintf(tag, sizeof(tag), "align %s read off=%llu len=%zu bufoff=%zu", name,
		 (unsigned long long)off, len, bufoff);
	memset(buf, AIOT_POISON, bufoff + len + AIOT_PAGE);
	c0 = counters_now();
	r = aiot_pread(ctx, fd, buf + bufoff, len, (long long)off);
	aiot_report(tag, r, buf + bufoff, len);
	expect(tag, r, want);
	if (aiot_is(r, (long)len))
		CHECK(aiot.nodata || !memcmp(buf + bufoff, img->b + off, len), "%s: data", tag);
	else
		aiot_verify_byte("buffer after a refused read", buf, bufoff + len, AIOT_POISON);
	aiot_verify_byte("guard after the read buffer", buf + bufoff + len, AIOT_PAGE,
			 AIOT_POISON);
	if (!bad)
		counters_expect(tag, c0, unaligned ? 0 : 1, unaligned ? 1 : 0, 0);

	snprintf(tag, sizeof(tag), "align %s write off=%llu len=%zu bufoff=%zu", name,
		 (unsigned long long)off, len, bufoff);
	aiot_fill(buf + bufoff, len, seed, off);
	c0 = counters_now();
	r = aiot_pwrite(ctx, fd, buf + bufoff, len, (long long)off);
	aiot_R("%s %s isize=%lld", tag, aiot_resstr(r), aiot_fsize(fd));
	expect(tag, r, want);
	if (r.submit == 1 && r.res > 0)
		aiot_img_write(img, off, (uint64_t)r.res, seed);
	if (!bad)
		counters_expect(tag, c0, unaligned ? 0 : 1, unaligned ? 1 : 0, 0);
}

static void test_align(void)
{
	struct aiot_img img;
	int fd = pattern_file("align", &img, SEED);
	uint64_t s = SEED + 1;

	align_case(fd, &img, "aligned", 0, 4096, 0, s++);
	align_case(fd, &img, "off-512", 512, 4096, 0, s++);
	align_case(fd, &img, "off-1", 1, 4096, 0, s++);
	align_case(fd, &img, "off-lb/2", lbs / 2, lbs, 0, s++);
	align_case(fd, &img, "len-100", 0, 100, 0, s++);
	align_case(fd, &img, "len-512", 8192, 512, 0, s++);
	align_case(fd, &img, "len-4k+512", 8192, 4096 + 512, 0, s++);
	align_case(fd, &img, "buf+1", 16384, 4096, 1, s++);
	align_case(fd, &img, "buf+4-across", 16384, 4096, 4, s++);
	align_case(fd, &img, "buf+8-one-lb", 20480, lbs, 8, s++);
	align_case(fd, &img, "buf+512-across", 24576, 4096, 512, s++);
	align_case(fd, &img, "buf+512-one-lb", 24576, lbs, 512, s++);
	align_case(fd, &img, "buf+3584-8k", 32768, 8192, 3584, s++);
	align_case(fd, &img, "buf+lb-64k", 65536, 65536, lbs, s++);
	align_case(fd, &img, "sub-fs-block", fsbs + lbs, lbs, 0, s++);
	align_case(fd, &img, "sub-fs-block-2", 2 * fsbs - lbs, lbs, 0, s++);
	aiot_img_check("after the alignment cases", fd, &img);
	aiot_R("align file%s", aiot_img_crc(&img));
	close(fd);
	aiot_img_free(&img);
}

/*
 * Misaligned reads where iomap reads nothing from the device: holes and
 * unwritten extents are zeroed into the buffer without an alignment
 * check, reads at or past EOF end before it.  And one of written data,
 * for contrast (EINVAL).
 */
static void test_unaligned_nodata(void)
{
	const struct { const char *name; uint64_t off; size_t len; size_t bufoff; long want; } c[] = {
		{ "hole off=1", 2 * AIOT_MIB + 1, 100, 0, 100 },
		{ "hole buf+1", 2 * AIOT_MIB, 4096, 1, 4096 },
		{ "unwritten off=3", 3 * AIOT_MIB + 3, 1000, 5, 1000 },
		{ "written off=1", 1, 100, 0, -EINVAL },
		{ "at-eof len=100", 4 * AIOT_MIB, 100, 0, 0 },
		{ "past-eof off=1", 5 * AIOT_MIB + 1, 100, 1, 0 },
	};
	struct aiot_img img;
	int fd = pattern_file("nodata", &img, SEED + 100), ret;
	unsigned int i;
	char tag[96];

	/* [0, 1M) written, [1M, 3M) hole, [3M, 4M) unwritten */
	ret = fallocate(fd, 0, 3 * AIOT_MIB, AIOT_MIB);
	CHECK(ret == 0, "fallocate: %s", strerror(errno));
	aiot_img_truncate(&img, 4 * AIOT_MIB);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct aiot_res r;

		snprintf(tag, sizeof(tag), "nodata %s", c[i].name);
		memset(buf, AIOT_POISON, c[i].bufoff + c[i].len + AIOT_PAGE);
		r = aiot_pread(ctx, fd, buf + c[i].bufoff, c[i].len, (long long)c[i].off);
		aiot_report(tag, r, buf, c[i].bufoff + c[i].len + AIOT_PAGE);
		expect(tag, r, c[i].want);
		if (c[i].want > 0)
			aiot_verify_byte(tag, buf + c[i].bufoff, c[i].len, 0);
	}
	aiot_img_check("after misaligned reads", fd, &img);
	close(fd);
	aiot_img_free(&img);
}

/* --------------------------------------------------------------- EFAULT */

/*
 * A read and a write of @len at @off with @b, in the file @fd: each
 * result, the read buffer's first page and, after the write, i_size and
 * the file's crc (read back whole; the image takes what the file holds).
 */
static void fault_case(int fd, const char *name, uint8_t *b, bool readable,
		       size_t len, uint64_t off, bool write_too, int fault, bool efault)
{
	struct counters c0 = counters_now();
	struct aiot_res r;
	char tag[96];

	snprintf(tag, sizeof(tag), "efault %s read len=%zu", name, len);
	if (readable && !mprotect(b, AIOT_PAGE, PROT_READ | PROT_WRITE))
		memset(b, AIOT_POISON, AIOT_PAGE);
	r = aiot_pread(ctx, fd, b, len, (long long)off);
	/* what reached the buffer's first page */
	aiot_R("%s %s%s", tag, aiot_resstr(r), readable ? aiot_crcstr(b, AIOT_PAGE) : "");
	CHECK(aiot_is(r, -EFAULT) || (!efault && r.submit == 1 && r.res >= 0 && r.res <= (long)len),
	      "%s: %s", tag, aiot_resstr(r));
	counters_expect(tag, c0, 0, 0, fault);
	if (!write_too)
		return;
	snprintf(tag, sizeof(tag), "efault %s write len=%zu", name, len);
	c0 = counters_now();
	r = aiot_pwrite(ctx, fd, b, len, (long long)off);
	aiot_R("%s %s isize=%lld", tag, aiot_resstr(r), aiot_fsize(fd));
	CHECK(aiot_is(r, -EFAULT) || (!efault && r.submit == 1 && r.res >= 0 && r.res <= (long)len),
	      "%s: %s", tag, aiot_resstr(r));
	counters_expect(tag, c0, 0, 0, fault);
}

/* The file's size and crc, read back whole; the image becomes the file. */
static void file_state(const char *tag, int fd, struct aiot_img *img)
{
	long long size = aiot_fsize(fd);
	uint64_t got = 0;

	CHECK(size >= 0 && size <= (long long)AIOT_IMG_MAX, "%s: i_size %lld", tag, size);
	aiot_img_truncate(img, (uint64_t)size);
	while (got < (uint64_t)size) {
		ssize_t n = pread(fd, img->b + got, aiot_round_up(size - got, lbs), (off_t)got);

		if (!CHECK(n > 0, "%s: pread at %llu: %zd", tag, (unsigned long long)got, n))
			break;
		got += (uint64_t)n;
	}
	aiot_R("%s isize=%lld%s", tag, size, aiot_img_crc(img));
}

static void test_efault(void)
{
	const size_t len = 4 * AIOT_PAGE;
	struct aiot_img img;
	int fd = pattern_file("efault", &img, SEED + 200);
	uint8_t *m = aiot_map(len), *u = aiot_map(len), *ro = aiot_map(len);
	uint8_t *big = aiot_map(2 * AIOT_MIB), *hole;
	struct iovec iov[3];
	struct aiot_res r;
	struct iocb cb;

	/* each hole made right before its use, so that no mapping fills it */
	hole = aiot_hole(len);
	fault_case(fd, "unmapped", hole, false, len, 0, true, 0, true);
	file_state("efault after-unmapped", fd, &img);

	aiot_fill(m, len, SEED + 201, 65536);
	CHECK(mprotect(m + AIOT_PAGE, AIOT_PAGE, PROT_NONE) == 0, "mprotect: %s", strerror(errno));
	fault_case(fd, "page2-prot-none", m, true, len, 65536, true, 1, false);
	file_state("efault after-prot-none", fd, &img);
	/* extending: i_size after a write that failed part way */
	aiot_fill(m, AIOT_PAGE, SEED + 202, FSIZE);
	r = aiot_pwrite(ctx, fd, m, len, FSIZE);
	aiot_R("efault page2-prot-none extending-write %s isize=%lld", aiot_resstr(r),
	       aiot_fsize(fd));
	file_state("efault after-extending", fd, &img);

	aiot_fill(u, len, SEED + 203, 131072);
	aiot_unmap(u + AIOT_PAGE, AIOT_PAGE);
	fault_case(fd, "page2-unmapped", u, true, len, 131072, true, 1, false);
	file_state("efault after-page2-unmapped", fd, &img);

	/* a read into read-only memory fails; a write from it works */
	aiot_fill(ro, len, SEED + 204, 196608);
	CHECK(mprotect(ro, len, PROT_READ) == 0, "mprotect: %s", strerror(errno));
	fault_case(fd, "read-only", ro, false, len, 196608, false, 0, true);
	r = aiot_pwrite(ctx, fd, ro, len, 196608);
	aiot_report("efault read-only write", r, NULL, 0);
	expect("efault read-only write", r, (long)len);
	if (aiot_is(r, (long)len))
		aiot_img_write(&img, 196608, len, SEED + 204);
	aiot_img_check("after a write from read-only memory", fd, &img);

	/* one page, which the kvec import pins on a path of its own */
	hole = aiot_hole(AIOT_PAGE);
	fault_case(fd, "one-page-unmapped", hole, false, AIOT_PAGE, 0, true, 1, true);
	fault_case(fd, "one-page-read-only", ro + AIOT_PAGE, false, AIOT_PAGE, 196608, false,
		   1, true);
	aiot_img_check("after the one-page EFAULT cases", fd, &img);

	/* vectored: the second of three segments unmapped */
	memset(buf, AIOT_POISON, 2 * AIOT_PAGE);
	hole = aiot_hole(AIOT_PAGE);
	iov[0] = (struct iovec){ buf, 4096 };
	iov[1] = (struct iovec){ hole, 4096 };
	iov[2] = (struct iovec){ buf + AIOT_PAGE, 4096 };
	aiot_prep_preadv(&cb, fd, iov, 3, 0);
	r = aiot_submit_wait(ctx, &cb);
	aiot_R("efault preadv seg2-unmapped %s%s", aiot_resstr(r), aiot_crcstr(buf, 4096));
	CHECK(aiot_is(r, -EFAULT) || (r.submit == 1 && r.res >= 0 && r.res <= 3 * 4096),
	      "preadv with a bad segment: %s", aiot_resstr(r));
	aiot_fill(buf, 2 * AIOT_PAGE, SEED + 205, 262144);
	iov[2].iov_base = buf + 4096;
	aiot_prep_pwritev(&cb, fd, iov, 3, 262144);
	r = aiot_submit_wait(ctx, &cb);
	aiot_R("efault pwritev seg2-unmapped %s isize=%lld", aiot_resstr(r), aiot_fsize(fd));
	file_state("efault after-pwritev", fd, &img);

	/* 2 MiB of data, the last page PROT_NONE: several bios before the fault */
	CHECK(aiot_sync_write_pattern(fd, FSIZE, 2 * AIOT_MIB, SEED + 206), "pre-write");
	aiot_img_write(&img, FSIZE, 2 * AIOT_MIB, SEED + 206);
	CHECK(mprotect(big + 2 * AIOT_MIB - AIOT_PAGE, AIOT_PAGE, PROT_NONE) == 0,
	      "mprotect: %s", strerror(errno));
	{
		struct counters c0 = counters_now();

		r = aiot_pread(ctx, fd, big, 2 * AIOT_MIB, FSIZE);
		aiot_R("efault read-2m last-page-prot-none %s", aiot_resstr(r));
		counters_expect("efault read-2m", c0, 0, 0, 1);
	}
	aiot_img_check("after the EFAULT cases", fd, &img);

	aiot_unmap(m, len);
	aiot_unmap(u, AIOT_PAGE);
	aiot_unmap(u + 2 * AIOT_PAGE, 2 * AIOT_PAGE);
	aiot_unmap(ro, len);
	aiot_unmap(big, 2 * AIOT_MIB);
	close(fd);
	aiot_img_free(&img);
}

/* ------------------------------------------------------------- NOWAIT */

static struct aiot_res nowait(const char *tag, int write, int fd, struct aiot_img *img,
			      uint64_t off, size_t len, uint64_t seed)
{
	struct aiot_res r;
	struct iocb cb;

	memset(buf, AIOT_POISON, len);
	if (write)
		aiot_fill(buf, len, seed, off);
	aiot_prep_rw(&cb, write, fd, buf, len, (long long)off, RWF_NOWAIT);
	r = aiot_submit_wait(ctx, &cb);
	aiot_R("nowait %s %s isize=%lld", tag, aiot_resstr(r), aiot_fsize(fd));
	CHECK(aiot_is(r, (long)len) || aiot_is(r, -EAGAIN), "nowait %s: %s", tag,
	      aiot_resstr(r));
	if (write && aiot_is(r, (long)len))
		aiot_img_write(img, off, len, seed);
	if (!write && aiot_is(r, (long)len))
		CHECK(aiot.nodata || !memcmp(buf, img->b + off, len), "nowait %s: data", tag);
	return r;
}

/*
 * XFS checks a NOWAIT write's c/mtime update with kiocb_modified(): EAGAIN
 * whenever the clock has ticked since the last update, which makes the
 * result a matter of timing.  A descriptor opened by handle, as xfsdump
 * opens files, has FMODE_NOCMTIME and skips that (XFS_IOC_FD_TO_HANDLE and
 * XFS_IOC_OPEN_BY_HANDLE, libxfs/xfs_fs.h; CAP_SYS_ADMIN).  -errno if not.
 */
struct xfs_handlereq {
	uint32_t fd;
	void *path;
	uint32_t oflags;
	void *ihandle;
	uint32_t ihandlen;
	void *ohandle;
	uint32_t *ohandlen;
};
#define XFS_IOC_FD_TO_HANDLE	_IOWR('X', 106, struct xfs_handlereq)
#define XFS_IOC_OPEN_BY_HANDLE	_IOWR('X', 107, struct xfs_handlereq)

static int open_nocmtime(int fd, int flags)
{
	unsigned char handle[128];
	uint32_t hlen = sizeof(handle);
	struct xfs_handlereq h = { .fd = (uint32_t)fd, .ohandle = handle, .ohandlen = &hlen };
	int dfd, nfd;

	if (ioctl(fd, XFS_IOC_FD_TO_HANDLE, &h) < 0)
		return -errno;
	/* opened through a directory of the filesystem */
	dfd = open(aiot.dir, O_RDONLY | O_DIRECTORY);
	if (dfd < 0)
		return -errno;
	memset(&h, 0, sizeof(h));
	h.oflags = (uint32_t)flags;
	h.ihandle = handle;
	h.ihandlen = hlen;
	nfd = ioctl(dfd, XFS_IOC_OPEN_BY_HANDLE, &h);
	nfd = nfd < 0 ? -errno : nfd;
	close(dfd);
	return nfd;
}

static void test_nowait(void)
{
	struct aiot_img img;
	int fd = pattern_file("nowait", &img, SEED + 300), bfd, wfd, ret;
	uint8_t *b4 = aiot_alloc(4096);
	uint64_t s = SEED + 301;
	struct aiot_res r;

	bfd = aiot_file_open("nowait", O_RDWR);
	wfd = fd;
	if (!strcmp(aiot.fs, "xfs")) {
		wfd = open_nocmtime(fd, O_RDWR | O_DIRECT);
		aiot_R("nowait nocmtime-fd %s", wfd < 0 ? aiot_rstr(wfd) : "ok");
		if (!CHECK(wfd >= 0, "XFS open by handle: %s", aiot_rstr(wfd)))
			goto out;
	}
	/* [0, 1M) written, [1M, 2M) hole, [2M, 3M) unwritten */
	CHECK(ftruncate(fd, 2 * AIOT_MIB) == 0, "ftruncate: %s", strerror(errno));
	ret = fallocate(fd, 0, 2 * AIOT_MIB, AIOT_MIB);
	CHECK(ret == 0, "fallocate: %s", strerror(errno));
	aiot_img_truncate(&img, 3 * AIOT_MIB);

	nowait("read-written", 0, fd, &img, 0, 16384, 0);
	nowait("overwrite", 1, wfd, &img, 16384, 16384, s++);
	nowait("overwrite-again", 1, wfd, &img, 16384, 16384, s++);
	nowait("write-hole", 1, wfd, &img, AIOT_MIB + 65536, 16384, s++);
	nowait("read-hole", 0, fd, &img, AIOT_MIB + 65536, 16384, 0);
	nowait("write-unwritten", 1, wfd, &img, 2 * AIOT_MIB + 65536, 16384, s++);
	nowait("read-unwritten", 0, fd, &img, 2 * AIOT_MIB + 65536, 16384, 0);
	nowait("write-extending", 1, wfd, &img, 3 * AIOT_MIB, 16384, s++);
	nowait("write-sub-fs-block", 1, wfd, &img, 65536 + lbs, lbs, s++);

	/* a dirty page cache page over the range, from a buffered write */
	aiot_fill(b4, 4096, s, 131072);
	CHECK(pwrite(bfd, b4, 4096, 131072) == 4096, "buffered pwrite: %s", strerror(errno));
	aiot_img_write(&img, 131072, 4096, s++);
	nowait("read-dirty-cache", 0, fd, &img, 131072, 16384, 0);
	nowait("write-dirty-cache", 1, wfd, &img, 131072, 16384, s++);
	/* a read writes it back and leaves it cached, clean */
	r = aiot_pread(ctx, fd, buf, 16384, 131072);
	aiot_report("nowait plain-read", r, buf, 16384);
	expect("nowait plain-read", r, 16384);
	nowait("read-clean-cache", 0, fd, &img, 131072, 16384, 0);
	nowait("write-clean-cache", 1, wfd, &img, 131072, 16384, s++);
	/* a plain direct write drops the cached page */
	aiot_fill(buf, 16384, s, 131072);
	r = aiot_pwrite(ctx, fd, buf, 16384, 131072);
	aiot_report("nowait plain-write", r, NULL, 0);
	expect("nowait plain-write", r, 16384);
	aiot_img_write(&img, 131072, 16384, s++);
	nowait("write-after-invalidate", 1, wfd, &img, 131072, 16384, s++);
	aiot_img_check("after the NOWAIT cases", fd, &img);
	aiot_R("nowait file%s", aiot_img_crc(&img));
	if (wfd != fd)
		close(wfd);
out:
	free(b4);
	close(bfd);
	close(fd);
	aiot_img_free(&img);
}

/* ------------------------------------------- ext4: fallback to buffered */

/* statx's dio_offset_align: 0 when the file takes no direct I/O */
static long dio_offset_align(int fd)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) < 0)
		return -errno;
	if (!(stx.stx_mask & STATX_DIOALIGN))
		return -EOPNOTSUPP;
	return stx.stx_dio_offset_align;
}

/*
 * Per-file data journaling.  ext4 honours the flag only without delayed
 * allocation (ext4_inode_journal_mode(): the runner mounts one ext4 target
 * nodelalloc); statx then reports dio_offset_align 0 and O_DIRECT runs as
 * buffered I/O, where alignment does not matter.
 */
static void test_journal_data(void)
{
	struct aiot_img img;
	int fd = pattern_file("jdata", &img, SEED + 400), flags = 0, ret;
	uint8_t *m = aiot_map(4 * AIOT_PAGE);
	struct aiot_res r;
	bool buffered;
	long align;

	ret = ioctl(fd, FS_IOC_GETFLAGS, &flags);
	if (ret == 0) {
		flags |= FS_JOURNAL_DATA_FL;
		ret = ioctl(fd, FS_IOC_SETFLAGS, &flags);
	}
	ret = ret ? -errno : 0;
	align = dio_offset_align(fd);
	buffered = align == 0;
	aiot_R("jdata setflags=%s dio_offset_align=%s", aiot_rstr(ret), aiot_rstr(align));
	CHECK(!buffered || ret == 0, "no direct I/O without the flag");
	if (ret) {
		close(fd);
		aiot_img_free(&img);
		aiot_unmap(m, 4 * AIOT_PAGE);
		return;
	}
	aiot_fill(buf, 65536, SEED + 401, 8192);
	r = aiot_pwrite(ctx, fd, buf, 65536, 8192);
	aiot_report("jdata write-aligned", r, NULL, 0);
	expect("jdata write-aligned", r, 65536);
	if (aiot_is(r, 65536))
		aiot_img_write(&img, 8192, 65536, SEED + 401);
	aiot_fill(buf + 1, 100, SEED + 402, 1);
	r = aiot_pwrite(ctx, fd, buf + 1, 100, 1);
	aiot_report("jdata write-off1-len100-buf+1", r, NULL, 0);
	expect("jdata write-off1-len100-buf+1", r, buffered ? 100 : -EINVAL);
	if (aiot_is(r, 100))
		aiot_img_write(&img, 1, 100, SEED + 402);
	aiot_fill(buf, 3000, SEED + 403, FSIZE - 1000);
	r = aiot_pwrite(ctx, fd, buf, 3000, FSIZE - 1000);
	aiot_R("jdata write-extending-3000 %s isize=%lld", aiot_resstr(r), aiot_fsize(fd));
	expect("jdata write-extending-3000", r, buffered ? 3000 : -EINVAL);
	if (aiot_is(r, 3000))
		aiot_img_write(&img, FSIZE - 1000, 3000, SEED + 403);

	memset(buf, AIOT_POISON, 8192);
	r = aiot_pread(ctx, fd, buf + 3, 1000, 5);
	aiot_report("jdata read-off5-len1000-buf+3", r, buf + 3, 1000);
	expect("jdata read-off5-len1000-buf+3", r, buffered ? 1000 : -EINVAL);
	if (aiot_is(r, 1000))
		CHECK(aiot.nodata || !memcmp(buf + 3, img.b + 5, 1000), "jdata misaligned read: data");
	r = aiot_pread(ctx, fd, buf, 8192, FSIZE - 4096);
	aiot_report("jdata read-across-eof", r, buf, 8192);
	expect("jdata read-across-eof", r, (long)(img.size - (FSIZE - 4096)));

	/* buffered reads copy page by page: a short count at the bad page */
	CHECK(mprotect(m + AIOT_PAGE, AIOT_PAGE, PROT_NONE) == 0, "mprotect: %s", strerror(errno));
	r = aiot_pread(ctx, fd, m, 4 * AIOT_PAGE, 65536);
	aiot_R("jdata read-page2-prot-none %s%s", aiot_resstr(r), aiot_crcstr(m, AIOT_PAGE));
	aiot_img_check("data-journalled file", fd, &img);
	aiot_R("jdata file%s", aiot_img_crc(&img));
	aiot_unmap(m, 4 * AIOT_PAGE);
	close(fd);
	aiot_img_free(&img);
}

int main(void)
{
	aiot_init_file("t-file-edge");
	lbs = aiot.lbs;
	fsbs = aiot.fsbs;
	kvec_counts = !aiot_mode_is_stock() && aiot_stat("file_iocbs") >= 0 &&
		      aiot_stat("fallback_unaligned") >= 0 && aiot_stat("fallback_fault") >= 0;
	ctx = aiot_ctx(8);
	buf = aiot_alloc(BUFLEN);

	test_align();
	test_unaligned_nodata();
	test_efault();
	test_nowait();
	test_journal_data();

	free(buf);
	aiot_ctx_destroy(ctx);
	return aiot_finish();
}
