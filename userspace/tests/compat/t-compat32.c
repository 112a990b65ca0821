// SPDX-License-Identifier: GPL-2.0
/*
 * t-compat32: registered kvecs from a 32-bit program (the kernel's compat
 * path: struct iovec has 32-bit fields, io_submit() takes 32-bit iocb
 * pointers; struct iocb is the same 64 bytes).  Built with -m32 -static and
 * raw system calls, so it needs neither libaio nor 32-bit libraries in the
 * guest, only CONFIG_IA32_EMULATION:
 *  - register two buffers: res 2, their pages registered;
 *  - a fixed write from buffer 0, checked through pread(2); a fixed read
 *    back into buffer 1;
 *  - a 3-segment fixed preadv into buffer 1 (data in the segments, the gaps
 *    untouched), a 2-segment fixed pwritev from buffer 0, a segment outside
 *    the buffer (EFAULT);
 *  - update slot 0 to a third buffer (res 1): fixed I/O through it works,
 *    through the old one gives EFAULT; clear slot 1 (EFAULT after);
 *  - unregister: res 2, every page released; fixed_iocbs moved.
 * Same conventions as the libaio tests (aiotest.h): AIOT_DEV, AIOT_MODE,
 * AIOT_NODATA; "R " lines; exit 0 pass, 1 fail, 77 skip.
 */
#if !defined(__i386__)
#error "t-compat32 is built with -m32 only (userspace/Makefile)"
#endif

#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* from userspace/include/kvec-aio.h, which needs libaio */
#define CMD_REGISTER	9
#define CMD_UNREGISTER	10
#define CMD_UPDATE	11
#define FLAG_KVEC	(1U << 2)
#define FLAG_FIXED	(1U << 3)

#define BUFLEN		(64 * 1024)
#define PAGE		4096
#define POISON		0xa5
#define DEV0		(1024 * 1024)
#define DEV1		(2 * 1024 * 1024)
#define SEED		3232

_Static_assert(sizeof(void *) == 4, "a 32-bit build");
_Static_assert(sizeof(struct iovec) == 8, "compat struct iovec: two 32-bit fields");
_Static_assert(sizeof(struct iocb) == 64, "struct iocb: 64 bytes on every ABI");

/*
 * io_pgetevents_time64(2) with no signal mask: io_getevents(2) on i386 takes
 * the old 32-bit timespec and exists only with CONFIG_COMPAT_32BIT_TIME,
 * which the guest kernel need not have.
 */
struct ts64 {
	int64_t tv_sec;
	int64_t tv_nsec;
};

static aio_context_t ctx;
static int fd, failures, flag_mode, nodata;
static const char *mode = "stock";

static void fail_at(int line, const char *cond, const char *fmt, ...)
{
	va_list ap;

	failures++;
	fprintf(stderr, "t-compat32: FAIL %s:%d: %s [mode %s]: ", __FILE__, line, cond, mode);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

#define CHECK(cond, ...) ((cond) ? 1 : (fail_at(__LINE__, #cond, __VA_ARGS__), 0))

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "t-compat32: FATAL: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void R(const char *fmt, ...)
{
	va_list ap;

	fputs("R ", stdout);
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

static const char *rstr(long long v)
{
	static char ring[8][32];
	static unsigned int next;
	char *s = ring[next++ % 8];

	if (v < 0 && v >= -4095 && strerrorname_np((int)-v))
		snprintf(s, 32, "%s", strerrorname_np((int)-v));
	else
		snprintf(s, 32, "%lld", v);
	return s;
}

/* /proc/fs/aio_kvec counter, -1 if absent */
static long long stat_of(const char *name)
{
	FILE *f = fopen("/proc/fs/aio_kvec", "r");
	long long v, found = -1;
	char key[128];

	if (!f)
		return -1;
	while (fscanf(f, "%127s %lld", key, &v) == 2)
		if (!strcmp(key, name))
			found = v;
	fclose(f);
	return found;
}

static long long net_registered(void)
{
	return stat_of("pages_registered") - stat_of("pages_unregistered");
}

/* Wait up to 5 s for the registered pages held to be @base + @want. */
static void expect_held(const char *what, long long base, long long want)
{
	long long held = net_registered() - base;
	int i;

	for (i = 0; i < 100 && held != want; i++) {
		usleep(50000);
		held = net_registered() - base;
	}
	CHECK(held == want, "%s: %lld registered pages held, want %lld", what, held, want);
}

/* ------------------------------------------------------------- pattern */

static uint8_t pat(uint32_t seed, uint32_t off)
{
	uint32_t x = (off >> 2) * 0x9e3779b1u ^ (seed + 1) * 0x85ebca6bu;

	x ^= x >> 15;
	x *= 0x2c1b3c6du;
	x ^= x >> 12;
	return (uint8_t)(x >> (8 * (off & 3)));
}

static void fill(uint8_t *p, size_t len, uint32_t seed, uint32_t devoff)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pat(seed, devoff + (uint32_t)i);
}

static int verify(const char *what, const uint8_t *p, size_t len, uint32_t seed, uint32_t devoff)
{
	size_t i;

	if (nodata)
		return 1;
	for (i = 0; i < len; i++)
		if (p[i] != pat(seed, devoff + (uint32_t)i))
			return CHECK(0, "%s: byte %zu of %zu is %#x, want %#x", what, i, len, p[i],
				     pat(seed, devoff + (uint32_t)i));
	return 1;
}

static int verify_byte(const char *what, const uint8_t *p, size_t len, uint8_t b)
{
	size_t i;

	if (nodata)
		return 1;
	for (i = 0; i < len; i++)
		if (p[i] != b)
			return CHECK(0, "%s: byte %zu of %zu is %#x, want %#x", what, i, len, p[i], b);
	return 1;
}

static uint8_t *map(size_t len)
{
	uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap %zu: %s", len, strerror(errno));
	memset(p, POISON, len);
	return p;
}

/* ------------------------------------------------------------ syscalls */

static long sys_ret(long r)
{
	return r < 0 ? -errno : r;
}

static long io_submit1(struct iocb *cb)
{
	struct iocb *cbs[1] = { cb };

	return sys_ret(syscall(__NR_io_submit, ctx, 1L, cbs));
}

struct res {
	long submit;		/* io_submit: 1 or -errno */
	long long res;		/* the event's res when submit == 1 */
};

static const char *resstr(struct res r)
{
	static char ring[8][48];
	static unsigned int next;
	char *s = ring[next++ % 8];

	if (r.submit == 1)
		snprintf(s, 48, "submit=1 res=%s", rstr(r.res));
	else
		snprintf(s, 48, "submit=%s", rstr(r.submit));
	return s;
}

/* Submit one iocb and wait (60 s at most) for its event. */
static struct res submit_wait(struct iocb *cb)
{
	struct ts64 ts = { 60, 0 };
	struct io_event ev;
	struct res r = { 0, 0 };
	long got;

	r.submit = io_submit1(cb);
	if (r.submit != 1)
		return r;
	memset(&ev, 0, sizeof(ev));
	do
		got = sys_ret(syscall(__NR_io_pgetevents_time64, ctx, 1L, 1L, &ev, &ts,
				      NULL));
	while (got == -EINTR);
	if (!CHECK(got == 1, "io_pgetevents_time64: %s", rstr(got))) {
		r.res = -ETIMEDOUT;
		return r;
	}
	CHECK(ev.obj == (uint64_t)(uintptr_t)cb, "event of another iocb");
	CHECK(ev.res2 == 0, "res2 %lld", (long long)ev.res2);
	r.res = ev.res;
	return r;
}

static void prep_cmd(struct iocb *cb, int op, const struct iovec *iov, unsigned int nr,
		     unsigned int first)
{
	memset(cb, 0, sizeof(*cb));
	cb->aio_lio_opcode = op;
	cb->aio_buf = (uintptr_t)iov;
	cb->aio_nbytes = nr;
	cb->aio_offset = first;
}

/* A command's result: io_submit's error, or its event's res. */
static long long command(int op, const struct iovec *iov, unsigned int nr, unsigned int first)
{
	struct iocb cb;
	struct res r;

	prep_cmd(&cb, op, iov, nr, first);
	r = submit_wait(&cb);
	return r.submit == 1 ? r.res : r.submit;
}

/* A fixed read or write (IOCB_CMD_PREAD/PWRITE/PREADV/PWRITEV) naming @slot. */
static struct res fixed(int op, const void *buf, uint32_t nbytes, uint32_t off, unsigned int slot)
{
	struct iocb cb;

	memset(&cb, 0, sizeof(cb));
	cb.aio_lio_opcode = op;
	cb.aio_fildes = fd;
	cb.aio_buf = (uintptr_t)buf;
	cb.aio_nbytes = nbytes;
	cb.aio_offset = off;
	cb.aio_flags = FLAG_FIXED | (flag_mode ? FLAG_KVEC : 0);
	cb.aio_reserved2 = slot;
	return submit_wait(&cb);
}

static int fixed_ok;	/* fixed I/Os that moved data */

static void expect_io(const char *tag, struct res r, long long want)
{
	R("%s %s", tag, resstr(r));
	if (CHECK(r.submit == 1 && r.res == want, "%s: %s, want res %s", tag, resstr(r),
		  rstr(want)) && want > 0)
		fixed_ok++;
}

static void expect_efault(const char *tag, struct res r)
{
	R("%s %s", tag, resstr(r));
	CHECK(r.submit == -EFAULT, "%s: %s, want submit EFAULT", tag, resstr(r));
}

static void expect_cmd(const char *tag, long long got, long long want)
{
	R("%s %s", tag, rstr(got));
	CHECK(got == want, "%s: %s, want %s", tag, rstr(got), rstr(want));
}

/* pread(2) of [off, off + len) into @chk and verify (seed, off). */
static void device_holds(const char *what, uint8_t *chk, uint32_t len, uint32_t off,
			 uint32_t seed)
{
	ssize_t got;

	memset(chk, POISON, len);
	got = pread(fd, chk, len, off);
	if (CHECK(got == (ssize_t)len, "%s: pread %zd (%s)", what, got, strerror(errno)))
		verify(what, chk, len, seed, off);
}

int main(void)
{
	const char *dev = getenv("AIOT_DEV"), *nd = getenv("AIOT_NODATA");
	uint8_t *a, *b, *e, *chk;
	unsigned long long size = 0;
	long long base, fix0;
	struct iovec tab[2], seg[3];
	int lbs = 0;
	long ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (getenv("AIOT_MODE") && *getenv("AIOT_MODE"))
		mode = getenv("AIOT_MODE");
	flag_mode = !strcmp(mode, "flag");
	nodata = nd && *nd && strcmp(nd, "0");
	if (!dev || !*dev) {
		puts("SKIP: AIOT_DEV not set");
		return 77;
	}
	if (stat_of("fixed_iocbs") < 0) {
		puts("SKIP: kernel without registered kvecs");
		return 77;
	}
	fd = open(dev, O_RDWR | O_DIRECT);
	if (fd < 0)
		die("open %s: %s", dev, strerror(errno));
	if (ioctl(fd, BLKGETSIZE64, &size) < 0 || ioctl(fd, BLKSSZGET, &lbs) < 0)
		die("%s: geometry: %s", dev, strerror(errno));
	if (size < 16 * 1024 * 1024) {
		printf("SKIP: %s holds %llu bytes, test needs 16 MiB\n", dev, size);
		return 77;
	}
	if (lbs > PAGE)
		die("%s: logical block size %d above a page", dev, lbs);
	fprintf(stderr, "t-compat32: dev %s size %llu lbs %d mode %s%s\n", dev, size, lbs, mode,
		nodata ? " nodata" : "");
	ret = sys_ret(syscall(__NR_io_setup, 8, &ctx));
	if (ret < 0)
		die("io_setup: %s", rstr(ret));

	a = map(BUFLEN);
	b = map(BUFLEN);
	e = map(BUFLEN);
	chk = map(BUFLEN);
	base = net_registered();
	fix0 = stat_of("fixed_iocbs");

	/* register from 32-bit iovecs */
	tab[0] = (struct iovec){ a, BUFLEN };
	tab[1] = (struct iovec){ b, BUFLEN };
	ret = (long)command(CMD_REGISTER, tab, 2, 0);
	R("register-2 %s", rstr(ret));
	if (ret != 2)
		die("register of two buffers from a 32-bit program: %s, want 2%s", rstr(ret),
		    ret == -EINVAL ? " (the kernel refuses compat registration)" : "");
	expect_held("register", base, 2 * BUFLEN / PAGE);

	/* a fixed write from slot 0, a fixed read back into slot 1 */
	fill(a, BUFLEN, SEED, DEV0);
	expect_io("fixed-write-64k", fixed(IOCB_CMD_PWRITE, a, BUFLEN, DEV0, 0), BUFLEN);
	device_holds("device after the fixed write", chk, BUFLEN, DEV0, SEED);
	expect_io("fixed-read-64k", fixed(IOCB_CMD_PREAD, b, BUFLEN, DEV0, 1), BUFLEN);
	verify("fixed read into slot 1", b, BUFLEN, SEED, DEV0);

	/* 3 segments (32-bit iovecs) of slot 1, gaps between them */
	memset(b, POISON, BUFLEN);
	seg[0] = (struct iovec){ b + PAGE, 2 * PAGE };
	seg[1] = (struct iovec){ b + 5 * PAGE, PAGE };
	seg[2] = (struct iovec){ b + 8 * PAGE, 4 * PAGE };
	expect_io("fixed-preadv-3", fixed(IOCB_CMD_PREADV, seg, 3, DEV0, 1), 7 * PAGE);
	verify("preadv segment 0", seg[0].iov_base, 2 * PAGE, SEED, DEV0);
	verify("preadv segment 1", seg[1].iov_base, PAGE, SEED, DEV0 + 2 * PAGE);
	verify("preadv segment 2", seg[2].iov_base, 4 * PAGE, SEED, DEV0 + 3 * PAGE);
	verify_byte("preadv gap 0", b, PAGE, POISON);
	verify_byte("preadv gap 1", b + 3 * PAGE, 2 * PAGE, POISON);
	verify_byte("preadv gap 2", b + 6 * PAGE, 2 * PAGE, POISON);
	verify_byte("preadv tail", b + 12 * PAGE, BUFLEN - 12 * PAGE, POISON);

	/* 2 segments of slot 0 written out */
	seg[0] = (struct iovec){ a, 2 * PAGE };
	seg[1] = (struct iovec){ a + 4 * PAGE, PAGE };
	fill(seg[0].iov_base, 2 * PAGE, SEED + 1, DEV1);
	fill(seg[1].iov_base, PAGE, SEED + 1, DEV1 + 2 * PAGE);
	expect_io("fixed-pwritev-2", fixed(IOCB_CMD_PWRITEV, seg, 2, DEV1, 0), 3 * PAGE);
	device_holds("device after the fixed pwritev", chk, 3 * PAGE, DEV1, SEED + 1);

	/* a segment outside the named buffer */
	seg[0] = (struct iovec){ b, PAGE };
	seg[1] = (struct iovec){ chk, PAGE };
	expect_efault("fixed-preadv-outside", fixed(IOCB_CMD_PREADV, seg, 2, DEV0, 1));

	/* update slot 0 to a third buffer */
	tab[0] = (struct iovec){ e, BUFLEN };
	expect_cmd("update-slot0", command(CMD_UPDATE, tab, 1, 0), 1);
	expect_io("fixed-read-updated-slot0", fixed(IOCB_CMD_PREAD, e, BUFLEN, DEV0, 0), BUFLEN);
	verify("fixed read into the updated slot 0", e, BUFLEN, SEED, DEV0);
	expect_efault("fixed-read-old-slot0", fixed(IOCB_CMD_PREAD, a, PAGE, DEV0, 0));
	expect_held("update of slot 0", base, 2 * BUFLEN / PAGE);

	/* clear slot 1 */
	tab[0] = (struct iovec){ NULL, 0 };
	expect_cmd("update-clear-slot1", command(CMD_UPDATE, tab, 1, 1), 1);
	expect_efault("fixed-read-cleared-slot1", fixed(IOCB_CMD_PREAD, b, PAGE, DEV0, 1));
	expect_held("clear of slot 1", base, BUFLEN / PAGE);

	expect_cmd("unregister", command(CMD_UNREGISTER, NULL, 0, 0), 2);
	expect_held("unregister", base, 0);
	CHECK(stat_of("fixed_iocbs") - fix0 >= fixed_ok,
	      "fixed_iocbs +%lld for %d fixed I/Os: not the kvec path",
	      stat_of("fixed_iocbs") - fix0, fixed_ok);

	ret = sys_ret(syscall(__NR_io_destroy, ctx));
	CHECK(ret == 0, "io_destroy: %s", rstr(ret));
	close(fd);
	if (failures) {
		fprintf(stderr, "t-compat32: %d check(s) failed (dev %s, mode %s)\n", failures, dev,
			mode);
		return 1;
	}
	fprintf(stderr, "t-compat32: passed (dev %s, mode %s)\n", dev, mode);
	return 0;
}
