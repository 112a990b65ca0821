// SPDX-License-Identifier: GPL-2.0
/*
 * t-badinput: bad input the other errno tests (t-einval, t-efault, t-ebadf,
 * t-iocb-flags, t-sysctl) leave out, each an R line so every mode is held
 * to stock's outcome.  What stock 6.1 gives:
 *
 *  - Memory the device may not write: a read into a read-only file mapping
 *    (MAP_SHARED or MAP_PRIVATE, PROT_READ), a sealed memfd, the vDSO, the
 *    VM_PFNMAP [vvar] pages, PROT_NONE and PROT_EXEC-only memory: -EFAULT
 *    in one bio, -EIO when the I/O spans several (a bio that pins nothing
 *    fails the whole I/O); the memory, and the file behind it, unchanged.
 *    A readv whose second segment is read-only stops after the first.
 *    Writes from read-only file memory work; from PROT_NONE and [vvar]
 *    memory they fail with -EFAULT.  A writable MAP_PRIVATE mapping of a
 *    file opened O_RDONLY takes the data and the file stays unchanged.
 *  - Buffers at a non-canonical address: io_submit
 *    -EFAULT.  Lengths up to SSIZE_MAX at the device's last block are cut
 *    to what is left (MAX_RW_COUNT, then the device size).  Offset plus
 *    length past LLONG_MAX, negative offsets, UIO_MAXIOV + 1 segments:
 *    -EINVAL; exactly UIO_MAXIOV segments work.
 *  - iocb fields: aio_flags bits the kernel does not define are ignored,
 *    as stock ignores them (the read works), unknown aio_rw_flags bits are
 *    refused (-EOPNOTSUPP), a non-zero aio_reserved2 on a plain read gives
 *    -EINVAL, a bad resfd -EBADF or -EINVAL, reads of a directory -EINVAL.
 *  - Contexts: a bogus or destroyed context is -EINVAL everywhere, as are
 *    nr < 0, min_nr > nr and io_cancel of an iocb never submitted; an
 *    io_setup beyond fs.aio-max-nr is -EAGAIN.
 *  - A non-root process holding an open descriptor of the device reads
 *    through IOCB_FLAG_KVEC like through the stock path (no privilege is
 *    needed for either).
 */
#include "aiotest.h"

#include <limits.h>
#include <linux/fs.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define SEED		8800
#define SMALL		(64 * AIOT_KIB)		/* one bio on every path */
#define BIG		(2 * AIOT_MIB)		/* several bios */
#define REGION		(4 * AIOT_MIB)		/* pre-written, stays unchanged */

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE	0x0010
#endif

static io_context_t ctx;
static int fd;
static uint64_t dev0;

/* Raw syscalls: libaio's wrappers would refuse or rewrite some bad input. */
static long sys_submit(unsigned long c, long nr, struct iocb **cbs)
{
	long ret = syscall(SYS_io_submit, c, nr, cbs);

	return ret < 0 ? -errno : ret;
}

static long sys_getevents(unsigned long c, long min_nr, long nr, struct io_event *ev)
{
	struct timespec ts = { 0, 0 };
	long ret = syscall(SYS_io_getevents, c, min_nr, nr, ev, &ts);

	return ret < 0 ? -errno : ret;
}

/* One I/O through the mode-aware helpers; the R line and the check. */
static struct aiot_res one(const char *tag, struct iocb *cb, long want_submit, long want_res)
{
	struct aiot_res r = aiot_submit_wait(ctx, cb);

	aiot_report(tag, r, NULL, 0);
	if (want_submit != 1)
		CHECK(r.submit == want_submit, "%s: %s, want io_submit %s", tag,
		      aiot_resstr(r), aiot_rstr(want_submit));
	else
		CHECK(aiot_is(r, want_res), "%s: %s, want res %s", tag,
		      aiot_resstr(r), aiot_rstr(want_res));
	return r;
}

static struct aiot_res rw(const char *tag, int write, void *buf, size_t len,
			  long long off, long want_submit, long want_res)
{
	struct iocb cb;

	if (write)
		aiot_prep_pwrite(&cb, fd, buf, len, off);
	else
		aiot_prep_pread(&cb, fd, buf, len, off);
	return one(tag, &cb, want_submit, want_res);
}

/* Expected res of a read into memory nothing can be pinned from. */
static long unpinnable(size_t len)
{
	return len > AIOT_BIO_BYTES ? -EIO : -EFAULT;
}

/* ------------------------------------------------ read-only memory */

static int memfd_of(size_t len, uint64_t seed, unsigned int seals)
{
	int mfd = memfd_create("t-badinput", seals ? MFD_ALLOW_SEALING : 0);
	void *p = aiot_alloc(len);

	if (mfd < 0 || ftruncate(mfd, (off_t)len) < 0)
		aiot_die("memfd: %s", strerror(errno));
	aiot_fill(p, len, seed, 0);
	if (pwrite(mfd, p, len, 0) != (ssize_t)len)
		aiot_die("memfd write: %s", strerror(errno));
	free(p);
	if (seals && fcntl(mfd, F_ADD_SEALS, seals) < 0)
		aiot_die("F_ADD_SEALS: %s", strerror(errno));
	return mfd;
}

/* The same open file description's inode, opened again read-only. */
static int reopen_ro(int mfd)
{
	char path[64];
	int ro;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", mfd);
	ro = open(path, O_RDONLY | O_CLOEXEC);
	if (ro < 0)
		aiot_die("%s: %s", path, strerror(errno));
	return ro;
}

static void *map_file(int f, size_t len, int prot, int flags)
{
	void *p = mmap(NULL, len, prot, flags, f, 0);

	if (p == MAP_FAILED)
		aiot_die("mmap: %s", strerror(errno));
	return p;
}

/* The file still holds the (seed, 0) pattern, read through the fd. */
static void file_unchanged(const char *what, int f, size_t len, uint64_t seed)
{
	void *p = aiot_alloc(len);
	bool nodata = aiot.nodata;

	if (pread(f, p, len, 0) != (ssize_t)len)
		aiot_die("pread file: %s", strerror(errno));
	/* the file is memory, not the device: check even on NODATA devices */
	aiot.nodata = false;
	aiot_verify(what, p, len, seed, 0);
	aiot.nodata = nodata;
	free(p);
}

static void readonly_file_maps(void)
{
	static const size_t lens[] = { SMALL, BIG };
	char tag[96];
	unsigned int i;

	for (i = 0; i < 2; i++) {
		size_t len = lens[i];
		int mfd = memfd_of(len, SEED + 10 + i, 0), ro = reopen_ro(mfd);
		uint8_t *p;

		/* shared read-only mapping of a file opened read-only */
		p = map_file(ro, len, PROT_READ, MAP_SHARED);
		snprintf(tag, sizeof(tag), "read into ro-file MAP_SHARED len=%zu", len);
		rw(tag, 0, p, len, (long long)dev0, 1, unpinnable(len));
		file_unchanged(tag, mfd, len, SEED + 10 + i);
		snprintf(tag, sizeof(tag), "write from ro-file MAP_SHARED len=%zu", len);
		rw(tag, 1, p, len, (long long)(dev0 + REGION), 1, (long)len);
		munmap(p, len);

		/* private read-only mapping of a writable file */
		p = map_file(mfd, len, PROT_READ, MAP_PRIVATE);
		snprintf(tag, sizeof(tag), "read into file MAP_PRIVATE PROT_READ len=%zu", len);
		rw(tag, 0, p, len, (long long)dev0, 1, unpinnable(len));
		file_unchanged(tag, mfd, len, SEED + 10 + i);
		munmap(p, len);

		/* shared PROT_READ mapping of a writable file */
		p = map_file(mfd, len, PROT_READ, MAP_SHARED);
		snprintf(tag, sizeof(tag), "read into file MAP_SHARED PROT_READ len=%zu", len);
		rw(tag, 0, p, len, (long long)dev0, 1, unpinnable(len));
		file_unchanged(tag, mfd, len, SEED + 10 + i);
		munmap(p, len);

		/* a writable private copy of a read-only file takes the data */
		p = map_file(ro, len, PROT_READ | PROT_WRITE, MAP_PRIVATE);
		snprintf(tag, sizeof(tag), "read into ro-file MAP_PRIVATE RW len=%zu", len);
		rw(tag, 0, p, len, (long long)dev0, 1, (long)len);
		aiot_verify(tag, p, len, SEED, dev0);
		file_unchanged(tag, mfd, len, SEED + 10 + i);
		munmap(p, len);

		close(ro);
		close(mfd);
	}
}

static void sealed_memfds(void)
{
	static const struct { const char *name; unsigned int seals; } s[] = {
		{ "F_SEAL_WRITE", F_SEAL_WRITE },
		{ "F_SEAL_FUTURE_WRITE", F_SEAL_FUTURE_WRITE },
	};
	char tag[96];
	unsigned int i;

	for (i = 0; i < 2; i++) {
		int mfd = memfd_of(SMALL, SEED + 20 + i, s[i].seals);
		uint8_t *p = map_file(mfd, SMALL, PROT_READ, MAP_SHARED);

		snprintf(tag, sizeof(tag), "read into memfd %s", s[i].name);
		rw(tag, 0, p, SMALL, (long long)dev0, 1, -EFAULT);
		file_unchanged(tag, mfd, SMALL, SEED + 20 + i);
		snprintf(tag, sizeof(tag), "readv into memfd %s 2seg", s[i].name);
		{
			struct iovec iov[2] = { { p, 4096 }, { p + 4096, 4096 } };
			struct iocb cb;

			aiot_prep_preadv(&cb, fd, iov, 2, (long long)dev0);
			one(tag, &cb, 1, -EFAULT);
		}
		file_unchanged(tag, mfd, SMALL, SEED + 20 + i);
		munmap(p, SMALL);
		close(mfd);
	}
}

/* A readv whose second segment lies in read-only file memory. */
static void readv_rw_then_ro(void)
{
	int mfd = memfd_of(SMALL, SEED + 30, 0), ro = reopen_ro(mfd);
	uint8_t *p = map_file(ro, SMALL, PROT_READ, MAP_SHARED);
	uint8_t *buf = aiot_alloc(SMALL);
	struct iovec iov[2] = { { buf, SMALL }, { p, SMALL } };
	struct iocb cb;

	aiot_prep_preadv(&cb, fd, iov, 2, (long long)dev0);
	one("readv rw-seg then ro-file-seg", &cb, 1, (long)SMALL);
	aiot_verify("readv rw-seg", buf, SMALL, SEED, dev0);
	file_unchanged("readv ro-file seg", mfd, SMALL, SEED + 30);
	free(buf);
	munmap(p, SMALL);
	close(ro);
	close(mfd);
}

/* Start of the [vvar] mapping from /proc/self/maps, NULL if none. */
static void *vvar_start(void)
{
	unsigned long lo = 0;
	char line[256];
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[vvar]") && sscanf(line, "%lx-", &lo) == 1)
			break;
	fclose(f);
	return (void *)lo;
}

static void special_maps(void)
{
	uint8_t *vdso = (uint8_t *)getauxval(AT_SYSINFO_EHDR), *copy, *p;
	uint8_t *vvar = vvar_start();

	if (vdso) {
		copy = aiot_alloc(AIOT_PAGE);
		memcpy(copy, vdso, AIOT_PAGE);
		rw("read into vdso", 0, vdso, AIOT_PAGE, (long long)dev0, 1, -EFAULT);
		CHECK(!memcmp(copy, vdso, AIOT_PAGE), "the vdso changed");
		free(copy);
	} else {
		aiot_R("read into vdso not-run (no AT_SYSINFO_EHDR)");
	}
	if (vvar) {
		rw("read into vvar", 0, vvar, AIOT_PAGE, (long long)dev0, 1, -EFAULT);
		rw("write from vvar", 1, vvar, AIOT_PAGE, (long long)(dev0 + REGION), 1, -EFAULT);
	} else {
		aiot_R("vvar not-run (no [vvar] mapping)");
	}

	p = aiot_map(BIG);
	if (mprotect(p, BIG, PROT_NONE) < 0)
		aiot_die("mprotect: %s", strerror(errno));
	rw("read into PROT_NONE", 0, p, SMALL, (long long)dev0, 1, -EFAULT);
	rw("write from PROT_NONE", 1, p, SMALL, (long long)(dev0 + REGION), 1, -EFAULT);
	rw("read into PROT_NONE len=2M", 0, p, BIG, (long long)dev0, 1, -EIO);
	rw("write from PROT_NONE len=2M", 1, p, BIG, (long long)(dev0 + REGION), 1, -EIO);
	if (mprotect(p, BIG, PROT_EXEC) < 0)
		aiot_die("mprotect: %s", strerror(errno));
	rw("read into PROT_EXEC", 0, p, SMALL, (long long)dev0, 1, -EFAULT);
	if (mprotect(p, BIG, PROT_READ | PROT_WRITE) < 0)
		aiot_die("mprotect: %s", strerror(errno));
	aiot_verify_byte("PROT_NONE/PROT_EXEC memory after failed reads", p, BIG,
			 AIOT_POISON);
	aiot_unmap(p, BIG);

	/* never touched, then PROT_READ: only the zero page stands behind it */
	p = mmap(NULL, BIG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		aiot_die("mmap: %s", strerror(errno));
	rw("read into untouched PROT_READ len=2M", 0, p, BIG, (long long)dev0, 1, -EIO);
	aiot_verify_byte("untouched PROT_READ memory after a failed read", p, BIG, 0);
	munmap(p, BIG);
}

/* ------------------------------------------------ addresses and sizes */

static void addresses_and_sizes(void)
{
	uint8_t *buf = aiot_alloc(AIOT_PAGE);
	uint64_t last = aiot_round_down(aiot.size - AIOT_PAGE, AIOT_PAGE);
	struct iovec *iov;
	struct iocb cb;
	int i;

	/* access_ok() refuses these before any pin is tried */
	rw("read buf=non-canonical", 0, (void *)(1ULL << 47), AIOT_PAGE,
	   (long long)dev0, -EFAULT, 0);
	rw("write buf=non-canonical", 1, (void *)(1ULL << 47), AIOT_PAGE,
	   (long long)dev0, -EFAULT, 0);

	/* huge lengths at the last block: cut to what the device has left */
	aiot_sync_write_pattern(fd, last, AIOT_PAGE, SEED + 40);
	rw("read len=SSIZE_MAX at last block", 0, buf, SSIZE_MAX, (long long)last,
	   1, AIOT_PAGE);
	aiot_verify("read len=SSIZE_MAX", buf, AIOT_PAGE, SEED + 40, last);
	rw("read len=2G at last block", 0, buf, 2 * 1024 * AIOT_MIB, (long long)last,
	   1, AIOT_PAGE);
	aiot_fill(buf, AIOT_PAGE, SEED + 41, last);
	rw("write len=SSIZE_MAX at last block", 1, buf, SSIZE_MAX, (long long)last,
	   1, AIOT_PAGE);
	aiot_sync_verify(fd, last, AIOT_PAGE, SEED + 41);

	/* offset + length past LLONG_MAX, negative offsets, vectored */
	iov = calloc(UIO_MAXIOV + 1, sizeof(*iov));
	if (!iov)
		aiot_die("calloc");
	for (i = 0; i < 2; i++)
		iov[i] = (struct iovec){ buf, AIOT_PAGE };
	aiot_prep_preadv(&cb, fd, iov, 2, LLONG_MAX - 4095);
	one("readv off=LLONG_MAX-4095 2x4K", &cb, -EINVAL, 0);
	aiot_prep_pwritev(&cb, fd, iov, 2, LLONG_MAX - 4095);
	one("writev off=LLONG_MAX-4095 2x4K", &cb, -EINVAL, 0);
	rw("read off=LLONG_MAX-4095 len=8K", 0, buf, 8192, LLONG_MAX - 4095, -EINVAL, 0);
	aiot_prep_preadv(&cb, fd, iov, 1, -4096);
	one("readv off=-4096", &cb, -EINVAL, 0);
	aiot_prep_pwritev(&cb, fd, iov, 1, LLONG_MIN);
	one("writev off=LLONG_MIN", &cb, -EINVAL, 0);
	rw("read off=LLONG_MIN", 0, buf, AIOT_PAGE, LLONG_MIN, -EINVAL, 0);

	/* the segment limit: UIO_MAXIOV is fine, one more is not */
	free(buf);
	buf = aiot_alloc((UIO_MAXIOV + 1) * AIOT_PAGE);
	for (i = 0; i <= UIO_MAXIOV; i++)
		iov[i] = (struct iovec){ buf + (size_t)i * AIOT_PAGE, AIOT_PAGE };
	aiot_prep_preadv(&cb, fd, iov, UIO_MAXIOV, (long long)dev0);
	one("readv UIO_MAXIOV segs", &cb, 1, (long)(UIO_MAXIOV * AIOT_PAGE));
	aiot_verify("readv UIO_MAXIOV segs", buf, UIO_MAXIOV * AIOT_PAGE, SEED, dev0);
	aiot_prep_preadv(&cb, fd, iov, UIO_MAXIOV + 1, (long long)dev0);
	one("readv UIO_MAXIOV+1 segs", &cb, -EINVAL, 0);
	aiot_prep_pwritev(&cb, fd, iov, UIO_MAXIOV + 1, (long long)dev0);
	one("writev UIO_MAXIOV+1 segs", &cb, -EINVAL, 0);
	aiot_prep_preadv(&cb, fd, iov, INT_MAX, (long long)dev0);
	one("readv INT_MAX segs", &cb, -EINVAL, 0);
	free(iov);
	free(buf);
}

/* ------------------------------------------------ iocb fields, contexts */

static void iocb_fields(void)
{
	uint8_t *buf = aiot_alloc(SMALL);
	char dir[] = "/tmp/t-badinput-XXXXXX";
	struct iocb cb;
	char tag[64];
	int bit, dfd;

	/* every aio_flags bit the kernel does not define, one at a time */
	for (bit = 4; bit < 32; bit++) {
		aiot_prep_pread(&cb, fd, buf, SMALL, (long long)dev0);
		cb.u.c.flags |= 1U << bit;
		snprintf(tag, sizeof(tag), "read aio_flags bit %d", bit);
		one(tag, &cb, 1, SMALL);
	}
	aiot_prep_pread(&cb, fd, buf, SMALL, (long long)dev0);
	cb.u.c.__pad3 = 1;		/* aio_reserved2, without the fixed flag */
	one("read aio_reserved2=1", &cb, -EINVAL, 0);
	aiot_prep_rw(&cb, 0, fd, buf, SMALL, (long long)dev0, 1 << 7);
	one("read aio_rw_flags 1<<7", &cb, -EOPNOTSUPP, 0);
	aiot_prep_rw(&cb, 1, fd, buf, SMALL, (long long)dev0, (int)(1U << 31));
	one("write aio_rw_flags 1<<31", &cb, -EOPNOTSUPP, 0);

	aiot_prep_pread(&cb, fd, buf, SMALL, (long long)dev0);
	io_set_eventfd(&cb, -1);
	one("read resfd=-1", &cb, -EBADF, 0);
	aiot_prep_pread(&cb, fd, buf, SMALL, (long long)dev0);
	io_set_eventfd(&cb, fd);
	one("read resfd=block device", &cb, -EINVAL, 0);

	if (!mkdtemp(dir))
		aiot_die("mkdtemp: %s", strerror(errno));
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	if (dfd < 0)
		aiot_die("%s: %s", dir, strerror(errno));
	aiot_prep_pread(&cb, dfd, buf, SMALL, 0);
	one("read a directory", &cb, -EINVAL, 0);
	close(dfd);
	rmdir(dir);
	free(buf);
}

static void contexts(void)
{
	uint8_t *buf = aiot_alloc(SMALL);
	struct iocb cb, *cbs[1] = { &cb };
	struct io_event ev[2];
	unsigned long dead = 0;
	io_context_t c2 = NULL;
	unsigned long maxnr = 0;
	FILE *f;
	long ret;

	aiot_prep_pread(&cb, fd, buf, SMALL, (long long)dev0);
	aiot_mark(&cb);
	ret = sys_submit((unsigned long)0x1234, 1, cbs);
	aiot_R("io_submit bogus ctx ret=%s", aiot_rstr(ret));
	CHECK(ret == -EINVAL, "io_submit bogus ctx: %s", aiot_rstr(ret));
	ret = sys_submit((unsigned long)ctx, -1, cbs);
	aiot_R("io_submit nr=-1 ret=%s", aiot_rstr(ret));
	CHECK(ret == -EINVAL, "io_submit nr=-1: %s", aiot_rstr(ret));
	ret = sys_getevents((unsigned long)0x1234, 0, 1, ev);
	aiot_R("io_getevents bogus ctx ret=%s", aiot_rstr(ret));
	CHECK(ret == -EINVAL, "io_getevents bogus ctx: %s", aiot_rstr(ret));
	ret = sys_getevents((unsigned long)ctx, 2, 1, ev);
	aiot_R("io_getevents min_nr>nr ret=%s", aiot_rstr(ret));
	CHECK(ret == -EINVAL, "io_getevents min_nr > nr: %s", aiot_rstr(ret));
	ret = io_cancel(ctx, &cb, ev);
	aiot_R("io_cancel never-submitted ret=%s", aiot_rstr(ret));
	CHECK(ret == -EINVAL, "io_cancel of an iocb never submitted: %s", aiot_rstr(ret));
	ret = io_setup(0, &c2);
	aiot_R("io_setup nr=0 ret=%s", aiot_rstr(ret));
	CHECK(ret == -EINVAL, "io_setup(0): %s", aiot_rstr(ret));

	f = fopen("/proc/sys/fs/aio-max-nr", "r");
	if (f && fscanf(f, "%lu", &maxnr) == 1 && maxnr < INT_MAX / 2) {
		c2 = NULL;
		ret = io_setup((int)maxnr + 1, &c2);
		aiot_R("io_setup nr=aio-max-nr+1 ret=%s", aiot_rstr(ret));
		CHECK(ret == -EAGAIN, "io_setup beyond aio-max-nr: %s", aiot_rstr(ret));
		if (!ret)
			io_destroy(c2);
	}
	if (f)
		fclose(f);

	if (syscall(SYS_io_setup, 4, &dead) < 0)
		aiot_die("io_setup: %s", strerror(errno));
	if (syscall(SYS_io_destroy, dead) < 0)
		aiot_die("io_destroy: %s", strerror(errno));
	ret = sys_submit(dead, 1, cbs);
	aiot_R("io_submit destroyed ctx ret=%s", aiot_rstr(ret));
	CHECK(ret == -EINVAL, "io_submit on a destroyed context: %s", aiot_rstr(ret));
	ret = syscall(SYS_io_destroy, dead) < 0 ? -errno : 0;
	aiot_R("io_destroy twice ret=%s", aiot_rstr(ret));
	CHECK(ret == -EINVAL, "io_destroy twice: %s", aiot_rstr(ret));
	free(buf);
}

/* A non-root process with the device open: IOCB_FLAG_KVEC needs no privilege. */
static void nonroot(void)
{
	pid_t pid;
	int status;

	if (geteuid() != 0) {
		aiot_R("nonroot not-run (not root)");
		return;
	}
	pid = aiot_fork();
	if (!pid) {
		uint8_t *buf = aiot_alloc(SMALL);
		io_context_t c = NULL;
		struct aiot_res r;
		struct iocb cb;

		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(2);
		if (io_setup(4, &c))
			_exit(3);
		aiot_prep_pread(&cb, fd, buf, SMALL, (long long)dev0);
		cb.u.c.flags |= IOCB_FLAG_KVEC;
		r = aiot_submit_wait(c, &cb);
		if (!aiot_is(r, (long)SMALL))
			_exit(4);
		if (!aiot_verify("nonroot kvec read", buf, SMALL, SEED, dev0))
			_exit(5);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid)
		aiot_die("waitpid: %s", strerror(errno));
	aiot_R("nonroot IOCB_FLAG_KVEC read exit=%d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "non-root read with IOCB_FLAG_KVEC: status %#x", status);
}

int main(void)
{
	aiot_init("t-badinput");
	aiot_require_size(REGION + BIG + 64 * AIOT_MIB);
	fd = aiot_open_dev(O_RDWR | O_DIRECT);
	ctx = aiot_ctx(16);
	dev0 = 32 * AIOT_MIB;
	aiot_sync_write_pattern(fd, dev0, REGION, SEED);

	readonly_file_maps();
	sealed_memfds();
	readv_rw_then_ro();
	special_maps();
	/* the failed reads left the region alone; writes went past it */
	aiot_sync_verify(fd, dev0, REGION, SEED);
	addresses_and_sizes();
	iocb_fields();
	contexts();
	nonroot();

	aiot_sync_verify(fd, dev0, REGION, SEED);
	aiot_ctx_destroy(ctx);
	close(fd);
	return aiot_finish();
}
