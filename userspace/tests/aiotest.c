// SPDX-License-Identifier: GPL-2.0
/*
 * aiotest: shared helpers for the kvec-aio libaio test programs.
 * See aiotest.h for the conventions (R lines, exit codes, environment).
 */
#include "aiotest.h"
#include "kvec-aio.h"
#include "thp-buf.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define AIOT_STATS_FILE	"/proc/fs/aio_kvec"
#define AIOT_MAX_FAIL_MSGS	100
#define AIOT_CHUNK	(8 * AIOT_MIB)

struct aiot_env aiot;
int aiot_failures;
static const char *aiot_name = "aiotest";

/* ---------------------------------------------------------------- output */

void aiot_R(const char *fmt, ...)
{
	va_list ap;

	fputs("R ", stdout);
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

void aiot_skip(const char *fmt, ...)
{
	va_list ap;

	if (aiot_failures)
		fprintf(stderr, "%s: skipping after %d failure(s)\n", aiot_name,
			aiot_failures);
	fputs("SKIP: ", stdout);
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
	exit(aiot_failures ? 1 : 77);
}

void aiot_die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: FATAL: ", aiot_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stdout);
	exit(1);
}

pid_t aiot_fork(void)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		aiot_die("fork: %s", strerror(errno));
	return pid;
}

void aiot_fail_at(const char *file, int line, const char *cond, const char *fmt, ...)
{
	va_list ap;

	if (++aiot_failures > AIOT_MAX_FAIL_MSGS) {
		if (aiot_failures == AIOT_MAX_FAIL_MSGS + 1)
			fprintf(stderr, "%s: further failures not shown\n", aiot_name);
		return;
	}
	fprintf(stderr, "%s: FAIL %s:%d: %s [mode %s]: ", aiot_name, file, line,
		cond, aiot.mode_name ? aiot.mode_name : "?");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int aiot_finish(void)
{
	fflush(stdout);
	if (aiot_failures) {
		fprintf(stderr, "%s: %d check(s) failed (dev %s, mode %s)\n",
			aiot_name, aiot_failures, aiot.dev, aiot.mode_name);
		return 1;
	}
	fprintf(stderr, "%s: passed (dev %s, mode %s)\n", aiot_name, aiot.dev,
		aiot.mode_name);
	return 0;
}

#define RING_SLOTS 16
static char *ring_slot(void)
{
	static char ring[RING_SLOTS][64];
	static unsigned int next;

	return ring[next++ % RING_SLOTS];
}

const char *aiot_rstr(long res)
{
	char *s = ring_slot();

	if (res < 0) {
		const char *name = (res >= -4095) ? strerrorname_np((int)-res) : NULL;

		if (name)
			snprintf(s, 64, "%s", name);
		else
			snprintf(s, 64, "E#%ld", -res);
	} else {
		snprintf(s, 64, "%ld", res);
	}
	return s;
}

const char *aiot_crcstr(const void *buf, size_t len)
{
	char *s;

	if (aiot.nodata)
		return "";
	s = ring_slot();
	snprintf(s, 64, " crc=%016llx", (unsigned long long)aiot_csum(buf, len));
	return s;
}

const char *aiot_resstr(struct aiot_res r)
{
	char *s = ring_slot();

	if (r.submit == 1)
		snprintf(s, 64, "submit=1 res=%s", aiot_rstr(r.res));
	else
		snprintf(s, 64, "submit=%s", aiot_rstr(r.submit));
	return s;
}

void aiot_report(const char *tag, struct aiot_res r, const void *buf, size_t crclen)
{
	if (buf && r.submit == 1)
		aiot_R("%s %s%s", tag, aiot_resstr(r), aiot_crcstr(buf, crclen));
	else
		aiot_R("%s %s", tag, aiot_resstr(r));
}

/* ----------------------------------------------------------- environment */

/* Open /sys/dev/block/M:m/<rel>, or the same under the whole disk. */
static FILE *sys_open(dev_t rdev, const char *rel)
{
	static const char *const fmts[] = {
		"/sys/dev/block/%u:%u/%s",
		"/sys/dev/block/%u:%u/../%s",	/* a partition */
	};
	char path[256];
	size_t i;

	for (i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		FILE *f;

		snprintf(path, sizeof(path), fmts[i], major(rdev), minor(rdev), rel);
		f = fopen(path, "r");
		if (f)
			return f;
	}
	return NULL;
}

static long long sys_number(dev_t rdev, const char *rel)
{
	FILE *f = sys_open(rdev, rel);
	long long v;
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, "%lld", &v) == 1;
	fclose(f);
	return ok ? v : -1;
}

long long aiot_queue_attr(const char *name)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "queue/%s", name);
	return sys_number((dev_t)aiot.rdev, rel);
}

bool aiot_dev_is_mq(void)
{
	char path[128];
	struct stat st;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/mq", major((dev_t)aiot.rdev),
		 minor((dev_t)aiot.rdev));
	if (stat(path, &st) == 0)
		return true;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/../mq", major((dev_t)aiot.rdev),
		 minor((dev_t)aiot.rdev));
	return stat(path, &st) == 0;
}

static unsigned int read_dma_mask(dev_t rdev)
{
	long long v = sys_number(rdev, "queue/dma_alignment");

	return v >= 0 ? (unsigned int)v : 511;	/* the block layer's default */
}

void aiot_init(const char *name)
{
	const char *mode, *nodata;
	unsigned long long size = 0;
	struct stat st;
	int fd, lbs = 0;

	aiot_name = name;
	setvbuf(stdout, NULL, _IOLBF, 0);

	mode = getenv("AIOT_MODE");
	if (!mode || !*mode || !strcmp(mode, "stock")) {
		aiot.mode = AIOT_STOCK;
		aiot.mode_name = "stock";
	} else if (!strcmp(mode, "kvec")) {
		aiot.mode = AIOT_KVEC;
		aiot.mode_name = "kvec";
	} else if (!strcmp(mode, "flag")) {
		aiot.mode = AIOT_FLAG;
		aiot.mode_name = "flag";
	} else if (!strcmp(mode, "kiobuf")) {
		aiot.mode = AIOT_KIOBUF;
		aiot.mode_name = "kiobuf";
	} else if (!strcmp(mode, "stock-pin")) {
		aiot.mode = AIOT_STOCK_PIN;
		aiot.mode_name = "stock-pin";
	} else {
		aiot_die("AIOT_MODE=%s: want stock, kvec, flag, kiobuf or stock-pin",
			 mode);
	}
	nodata = getenv("AIOT_NODATA");
	aiot.nodata = nodata && *nodata && strcmp(nodata, "0");

	aiot.dev = getenv("AIOT_DEV");
	if (!aiot.dev || !*aiot.dev)
		aiot_skip("AIOT_DEV not set");
	if (stat(aiot.dev, &st) < 0)
		aiot_skip("%s: %s", aiot.dev, strerror(errno));
	if (!S_ISBLK(st.st_mode))
		aiot_skip("%s is not a block device", aiot.dev);
	fd = open(aiot.dev, O_RDONLY);
	if (fd < 0)
		aiot_die("open %s: %s", aiot.dev, strerror(errno));
	if (ioctl(fd, BLKGETSIZE64, &size) < 0)
		aiot_die("BLKGETSIZE64 %s: %s", aiot.dev, strerror(errno));
	if (ioctl(fd, BLKSSZGET, &lbs) < 0)
		aiot_die("BLKSSZGET %s: %s", aiot.dev, strerror(errno));
	close(fd);
	if (lbs < 512 || (lbs & (lbs - 1)))
		aiot_die("%s: odd logical block size %d", aiot.dev, lbs);
	aiot.size = size;
	aiot.lbs = (unsigned int)lbs;
	aiot.rdev = st.st_rdev;
	aiot.dma_mask = read_dma_mask(st.st_rdev);
	fprintf(stderr, "%s: dev %s size %llu lbs %u dma_mask %u mode %s%s\n",
		name, aiot.dev, size, aiot.lbs, aiot.dma_mask, aiot.mode_name,
		aiot.nodata ? " nodata" : "");
}

int aiot_open_dev(int flags)
{
	int fd = open(aiot.dev, flags);

	if (fd < 0)
		aiot_die("open %s (flags %#x): %s", aiot.dev, flags, strerror(errno));
	return fd;
}

void aiot_require_size(uint64_t bytes)
{
	if (aiot.size < bytes)
		aiot_skip("%s holds %llu bytes, test needs %llu", aiot.dev,
			  (unsigned long long)aiot.size, (unsigned long long)bytes);
}

/* ---------------------------------------------------------------- memory */

void *aiot_alloc(size_t len)
{
	void *p;
	int err;

	if (!len)
		len = 1;
	err = posix_memalign(&p, AIOT_PAGE, len);
	if (err)
		aiot_die("posix_memalign %zu: %s", len, strerror(err));
	memset(p, AIOT_POISON, len);
	return p;
}

void *aiot_map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		aiot_die("mmap %zu: %s", len, strerror(errno));
	memset(p, AIOT_POISON, len);
	return p;
}

void aiot_unmap(void *p, size_t len)
{
	if (munmap(p, len) < 0)
		aiot_die("munmap %zu: %s", len, strerror(errno));
}

void *aiot_map_thp(size_t len)
{
	void *p = thp_buf_map(len);

	if (!p)
		aiot_die("huge-page buffer of %zu bytes: %s (a kernel without THP?)",
			 len, strerror(errno));
	memset(p, AIOT_POISON, len);
	return p;
}

uint64_t aiot_thp_bytes(const void *p, size_t len)
{
	long long n = thp_buf_backed(p, len);

	if (n < 0)
		aiot_die("/proc/self/smaps: %s", strerror(errno));
	return (uint64_t)n;
}

void *aiot_hole(size_t len)
{
	void *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		aiot_die("mmap %zu: %s", len, strerror(errno));
	aiot_unmap(p, len);
	return p;
}

/* --------------------------------------------------------------- pattern */

static inline uint64_t pat_word(uint64_t seed, uint64_t word)
{
	/* splitmix64 of a per-seed stream position */
	uint64_t z = word * 0x9e3779b97f4a7c15ULL + (seed + 1) * 0xd1b54a32d192ed03ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return htole64(z ^ (z >> 31));
}

static inline uint8_t pat_byte(uint64_t seed, uint64_t off)
{
	uint64_t w = pat_word(seed, off >> 3);

	return ((const uint8_t *)&w)[off & 7];
}

void aiot_fill(void *buf, size_t len, uint64_t seed, uint64_t devoff)
{
	uint8_t *p = buf;
	size_t i = 0;

	for (; i < len && ((devoff + i) & 7); i++)
		p[i] = pat_byte(seed, devoff + i);
	for (; i + 8 <= len; i += 8) {
		uint64_t w = pat_word(seed, (devoff + i) >> 3);

		memcpy(p + i, &w, 8);
	}
	for (; i < len; i++)
		p[i] = pat_byte(seed, devoff + i);
}

static void report_mismatch(const char *what, const uint8_t *p, size_t len,
			    size_t i, uint64_t seed, uint64_t devoff, int byte)
{
	size_t bad = 0, j;

	for (j = i; j < len; j++)
		if (p[j] != (byte >= 0 ? (uint8_t)byte : pat_byte(seed, devoff + j)))
			bad++;
	aiot_fail_at(__FILE__, __LINE__, "data", "%s: byte %zu of %zu (dev off %llu) is %#x, want %#x; %zu bad bytes from there",
		     what, i, len, (unsigned long long)(devoff + i), p[i],
		     byte >= 0 ? (unsigned int)byte : pat_byte(seed, devoff + i), bad);
}

bool aiot_verify(const char *what, const void *buf, size_t len, uint64_t seed,
		 uint64_t devoff)
{
	const uint8_t *p = buf;
	size_t i = 0;

	if (aiot.nodata)
		return true;
	for (; i < len && ((devoff + i) & 7); i++)
		if (p[i] != pat_byte(seed, devoff + i))
			goto bad;
	for (; i + 8 <= len; i += 8) {
		uint64_t w = pat_word(seed, (devoff + i) >> 3);

		if (memcmp(p + i, &w, 8)) {
			while (p[i] == pat_byte(seed, devoff + i))
				i++;
			goto bad;
		}
	}
	for (; i < len; i++)
		if (p[i] != pat_byte(seed, devoff + i))
			goto bad;
	return true;
bad:
	report_mismatch(what, p, len, i, seed, devoff, -1);
	return false;
}

bool aiot_verify_byte(const char *what, const void *buf, size_t len, uint8_t byte)
{
	const uint8_t *p = buf;
	size_t i;

	if (aiot.nodata)
		return true;
	for (i = 0; i < len; i++)
		if (p[i] != byte) {
			report_mismatch(what, p, len, i, 0, 0, byte);
			return false;
		}
	return true;
}

uint64_t aiot_csum(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t w;

		memcpy(&w, p + i, 8);
		h = (h ^ le64toh(w)) * 0x100000001b3ULL;
	}
	for (; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

/* ------------------------------------------------------------------ iocbs */

void aiot_mark(struct iocb *cb)
{
	if (aiot.mode == AIOT_FLAG)
		cb->u.c.flags |= IOCB_FLAG_KVEC;
}

void aiot_prep_pread(struct iocb *cb, int fd, void *buf, size_t len, long long off)
{
	io_prep_pread(cb, fd, buf, len, off);
	aiot_mark(cb);
}

void aiot_prep_pwrite(struct iocb *cb, int fd, void *buf, size_t len, long long off)
{
	io_prep_pwrite(cb, fd, buf, len, off);
	aiot_mark(cb);
}

void aiot_prep_preadv(struct iocb *cb, int fd, const struct iovec *iov, int n, long long off)
{
	io_prep_preadv(cb, fd, iov, n, off);
	aiot_mark(cb);
}

void aiot_prep_pwritev(struct iocb *cb, int fd, const struct iovec *iov, int n, long long off)
{
	io_prep_pwritev(cb, fd, iov, n, off);
	aiot_mark(cb);
}

void aiot_prep_rw(struct iocb *cb, int write, int fd, void *buf, size_t len,
		  long long off, int rw_flags)
{
	if (write)
		io_prep_pwrite(cb, fd, buf, len, off);
	else
		io_prep_pread(cb, fd, buf, len, off);
	cb->aio_rw_flags = rw_flags;
	aiot_mark(cb);
}

void aiot_prep_pattern(struct iocb *cb, int write, int fd, void *buf,
		       size_t len, uint64_t off, uint64_t seed)
{
	if (write)
		aiot_fill(buf, len, seed, off);
	else
		memset(buf, AIOT_POISON, len);
	aiot_prep_rw(cb, write, fd, buf, len, (long long)off, 0);
}

io_context_t aiot_ctx(int nr_events)
{
	io_context_t ctx = 0;
	int ret = io_setup(nr_events, &ctx);

	if (ret < 0)
		aiot_die("io_setup(%d): %s", nr_events, aiot_rstr(ret));
	return ctx;
}

void aiot_ctx_destroy(io_context_t ctx)
{
	int ret = io_destroy(ctx);

	CHECK(ret == 0, "io_destroy: %s", aiot_rstr(ret));
}

int aiot_submit(io_context_t ctx, long nr, struct iocb **cbs)
{
	long i;

	for (i = 0; i < nr; i++)
		aiot_mark(cbs[i]);
	return io_submit(ctx, nr, cbs);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int aiot_reap(io_context_t ctx, int nr, struct io_event *ev)
{
	double deadline = now_s() + AIOT_TIMEOUT_S;
	int got = 0;

	while (got < nr) {
		double left = deadline - now_s();
		struct timespec ts;
		int ret;

		if (left <= 0)
			break;
		ts.tv_sec = (time_t)left;
		ts.tv_nsec = (long)((left - ts.tv_sec) * 1e9);
		ret = io_getevents(ctx, nr - got, nr - got, ev + got, &ts);
		if (ret == -EINTR)
			continue;
		if (ret < 0) {
			CHECK(ret >= 0, "io_getevents: %s", aiot_rstr(ret));
			break;
		}
		got += ret;
	}
	CHECK(got == nr, "got %d of %d events within %d s", got, nr, AIOT_TIMEOUT_S);
	return got;
}

int aiot_event_iocb(const struct io_event *ev, const struct iocb *cbs, int n,
		    unsigned char *seen)
{
	long idx = (const struct iocb *)ev->obj - cbs;

	if (!CHECK(idx >= 0 && idx < n, "event for an unknown iocb"))
		return -1;
	if (!CHECK(!seen[idx], "second event for iocb %ld", idx))
		return -1;
	seen[idx] = 1;
	return (int)idx;
}

int aiot_reap_extra(io_context_t ctx, int ms)
{
	struct io_event ev[16];
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	int ret;

	do
		ret = io_getevents(ctx, 1, 16, ev, &ts);
	while (ret == -EINTR);
	if (ret < 0) {
		CHECK(ret >= 0, "io_getevents: %s", aiot_rstr(ret));
		return 0;
	}
	return ret;
}

struct aiot_res aiot_submit_wait(io_context_t ctx, struct iocb *cb)
{
	struct aiot_res r = { 0, 0 };
	struct io_event ev;
	int extra;

	r.submit = aiot_submit(ctx, 1, &cb);
	if (r.submit != 1) {
		CHECK(r.submit < 0, "io_submit of one iocb returned %d", r.submit);
		return r;
	}
	memset(&ev, 0, sizeof(ev));
	if (aiot_reap(ctx, 1, &ev) != 1) {
		r.res = -ETIMEDOUT;
		return r;
	}
	r.res = (long)ev.res;
	CHECK(ev.obj == cb, "event for another iocb");
	CHECK(ev.data == cb->data, "event data not the iocb's");
	CHECK(ev.res2 == 0, "res2 = %ld", (long)ev.res2);
	extra = aiot_reap_extra(ctx, 0);
	CHECK(extra == 0, "%d unexpected extra event(s)", extra);
	return r;
}

struct aiot_res aiot_rw(io_context_t ctx, int write, int fd, void *buf, size_t len,
			long long off)
{
	struct iocb cb;

	aiot_prep_rw(&cb, write, fd, buf, len, off, 0);
	return aiot_submit_wait(ctx, &cb);
}

struct aiot_res aiot_pread(io_context_t ctx, int fd, void *buf, size_t len, long long off)
{
	return aiot_rw(ctx, 0, fd, buf, len, off);
}

struct aiot_res aiot_pwrite(io_context_t ctx, int fd, void *buf, size_t len, long long off)
{
	return aiot_rw(ctx, 1, fd, buf, len, off);
}

/*
 * Write (seed, off) patterns, or read them back and verify, in chunks:
 * through aio on @ctx, or with pwrite(2)/pread(2) when @ctx is 0 (the
 * reference path, independent of the one under test).
 */
static bool pattern_io(io_context_t ctx, int write, int fd, uint64_t off,
		       uint64_t len, uint64_t seed)
{
	size_t chunk = len < AIOT_CHUNK ? len : AIOT_CHUNK;
	uint8_t *buf = aiot_alloc(chunk);
	bool ok = true;
	uint64_t done;

	for (done = 0; done < len; done += chunk) {
		size_t n = len - done < chunk ? len - done : chunk;
		unsigned long long at = off + done;
		bool moved;

		if (write)
			aiot_fill(buf, n, seed, at);
		else
			memset(buf, AIOT_POISON, n);
		if (ctx) {
			struct aiot_res r = aiot_rw(ctx, write, fd, buf, n, (long long)at);

			moved = CHECK(aiot_is(r, n), "%s off %llu len %zu: %s",
				      write ? "pattern write" : "verify read",
				      at, n, aiot_resstr(r));
		} else {
			ssize_t ret = write ? pwrite(fd, buf, n, (off_t)at) :
					      pread(fd, buf, n, (off_t)at);

			moved = CHECK(ret == (ssize_t)n, "sync %s off %llu len %zu: %zd (%s)",
				      write ? "pwrite" : "pread", at, n, ret,
				      ret < 0 ? strerror(errno) : "short");
		}
		if (!moved || (!write && !aiot_verify(ctx ? "read back" : "sync reference read",
						      buf, n, seed, at))) {
			ok = false;
			break;
		}
	}
	free(buf);
	return ok;
}

bool aiot_write_pattern(io_context_t ctx, int fd, uint64_t off, uint64_t len,
			uint64_t seed)
{
	return pattern_io(ctx, 1, fd, off, len, seed);
}

bool aiot_read_verify(io_context_t ctx, int fd, uint64_t off, uint64_t len,
		      uint64_t seed)
{
	return pattern_io(ctx, 0, fd, off, len, seed);
}

bool aiot_sync_write_pattern(int fd, uint64_t off, uint64_t len, uint64_t seed)
{
	return pattern_io(0, 1, fd, off, len, seed);
}

bool aiot_sync_verify(int fd, uint64_t off, uint64_t len, uint64_t seed)
{
	return pattern_io(0, 0, fd, off, len, seed);
}

/* ------------------------------------------------------------ statistics */

long long aiot_vmstat(const char *name)
{
	char key[64];
	long long v, found = -1;
	FILE *f;
	int rfd;

	/* fold the per-cpu differences in, or the counts lag by a few */
	rfd = open("/proc/sys/vm/stat_refresh", O_WRONLY);
	if (rfd >= 0) {
		if (write(rfd, "1", 1) != 1)
			aiot_die("stat_refresh: %s", strerror(errno));
		close(rfd);
	}
	f = fopen("/proc/vmstat", "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", key, &v) == 2)
		if (!strcmp(key, name))
			found = v;
	fclose(f);
	return found;
}

long long aiot_pins_out(void)
{
	return aiot_vmstat("nr_foll_pin_acquired") - aiot_vmstat("nr_foll_pin_released");
}

void aiot_pins_settle(const char *what, long long base)
{
	long long now = aiot_pins_out();
	int i;

	for (i = 0; i < 30 && now != base; i++) {
		usleep(100000);
		now = aiot_pins_out();
	}
	CHECK(now == base, "%s: %lld pages still pinned", what, now - base);
}

long long aiot_stat(const char *name)
{
	FILE *f = fopen(AIOT_STATS_FILE, "r");
	long long val = -1, v;
	char key[128];

	if (!f)
		return -1;
	while (fscanf(f, "%127s %lld", key, &v) == 2) {
		if (!strcmp(key, name)) {
			val = v;
			break;
		}
	}
	fclose(f);
	return val;
}

bool aiot_stats_present(void)
{
	return access(AIOT_STATS_FILE, R_OK) == 0;
}

long long aiot_vmpin_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	long long v = -1;
	char line[256];

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %lld", &v) == 1)
			break;
	fclose(f);
	return v;
}

struct aiot_res aiot_fsync_report(io_context_t ctx, const char *tag, int fd,
				  int datasync)
{
	struct aiot_res r;
	struct iocb cb;

	if (datasync)
		io_prep_fdsync(&cb, fd);
	else
		io_prep_fsync(&cb, fd);
	aiot_mark(&cb);
	r = aiot_submit_wait(ctx, &cb);
	aiot_report(tag, r, NULL, 0);
	return r;
}

struct aiot_res aiot_fixed_rw(io_context_t ctx, int fd, int write, void *buf,
			      size_t len, uint64_t off, unsigned int index)
{
	struct iocb cb;

	if (write)
		kvec_aio_prep_pwrite_fixed(&cb, fd, buf, len, (long long)off, index);
	else
		kvec_aio_prep_pread_fixed(&cb, fd, buf, len, (long long)off, index);
	return aiot_submit_wait(ctx, &cb);
}

int aiot_sysctl_write(const char *val)
{
	int fd = open(AIOT_SYSCTL, O_WRONLY | O_CLOEXEC), err = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	if (n < 0)
		err = -errno;
	else if ((size_t)n != strlen(val))
		err = -EIO;
	close(fd);
	return err;
}

int aiot_sysctl_read(void)
{
	FILE *f = fopen(AIOT_SYSCTL, "r");
	int v = -100;

	if (!f)
		return -100;
	if (fscanf(f, "%d", &v) != 1)
		v = -100;
	fclose(f);
	return v;
}

/* ------------------------------------------------------ filesystem targets */

#define AIOT_MAX_FILES	16
static char *aiot_files[AIOT_MAX_FILES];
static int aiot_nfiles;
static pid_t aiot_files_owner;

static void aiot_files_cleanup(void)
{
	int i;

	if (getpid() != aiot_files_owner)
		return;		/* a forked child exiting: not its files */
	for (i = 0; i < aiot_nfiles; i++) {
		unlink(aiot_files[i]);
		free(aiot_files[i]);
	}
	aiot_nfiles = 0;
}

void aiot_init_file(const char *name)
{
	struct statfs sfs;
	struct stat st;
	char *s;

	aiot_init(name);
	aiot.dir = getenv("AIOT_DIR");
	if (!aiot.dir || !*aiot.dir)
		aiot_skip("AIOT_DIR not set: a filesystem test (the runner's filesystem targets)");
	if (stat(aiot.dir, &st) < 0 || !S_ISDIR(st.st_mode))
		aiot_die("AIOT_DIR=%s: not a directory", aiot.dir);
	if ((unsigned long long)st.st_dev != aiot.rdev)
		aiot_die("AIOT_DIR=%s is not on AIOT_DEV=%s", aiot.dir, aiot.dev);
	if (statfs(aiot.dir, &sfs) < 0)
		aiot_die("statfs %s: %s", aiot.dir, strerror(errno));
	switch ((unsigned long)sfs.f_type) {
	case 0xef53:
		aiot.fs = "ext4";
		break;
	case 0x58465342:
		aiot.fs = "xfs";
		break;
	default:
		s = malloc(32);
		if (!s)
			aiot_die("malloc");
		snprintf(s, 32, "fs-%lx", (unsigned long)sfs.f_type);
		aiot.fs = s;
	}
	aiot.fsbs = (unsigned int)sfs.f_bsize;
	aiot_files_owner = getpid();
	atexit(aiot_files_cleanup);
	fprintf(stderr, "%s: dir %s fs %s block %u\n", name, aiot.dir, aiot.fs, aiot.fsbs);
}

const char *aiot_file_path(const char *tag)
{
	static char path[4][512];
	static unsigned int next;
	char *p = path[next++ % 4];

	snprintf(p, 512, "%s/%s.%s", aiot.dir, aiot_name, tag);
	return p;
}

int aiot_file_create(const char *tag, int flags)
{
	const char *path = aiot_file_path(tag);
	int fd = open(path, O_CREAT | O_TRUNC | flags, 0600), i;

	if (fd < 0)
		aiot_die("create %s (flags %#x): %s", path, flags, strerror(errno));
	for (i = 0; i < aiot_nfiles; i++)
		if (!strcmp(aiot_files[i], path))
			return fd;
	if (aiot_nfiles == AIOT_MAX_FILES)
		aiot_die("more than %d test files", AIOT_MAX_FILES);
	aiot_files[aiot_nfiles] = strdup(path);
	if (!aiot_files[aiot_nfiles])
		aiot_die("strdup");
	aiot_nfiles++;
	return fd;
}

int aiot_file_open(const char *tag, int flags)
{
	const char *path = aiot_file_path(tag);
	int fd = open(path, flags);

	if (fd < 0)
		aiot_die("open %s (flags %#x): %s", path, flags, strerror(errno));
	return fd;
}

long long aiot_fsize(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		aiot_die("fstat: %s", strerror(errno));
	return (long long)st.st_size;
}

void aiot_img_init(struct aiot_img *img)
{
	img->b = aiot_alloc(AIOT_IMG_MAX);
	memset(img->b, 0, AIOT_IMG_MAX);
	img->size = 0;
}

void aiot_img_free(struct aiot_img *img)
{
	free(img->b);
	img->b = NULL;
}

static void img_grow(struct aiot_img *img, uint64_t end)
{
	if (end > AIOT_IMG_MAX)
		aiot_die("file image: %llu bytes, more than %llu",
			 (unsigned long long)end, (unsigned long long)AIOT_IMG_MAX);
	if (end > img->size)
		img->size = end;
}

void aiot_img_write(struct aiot_img *img, uint64_t off, uint64_t len, uint64_t seed)
{
	img_grow(img, off + len);
	aiot_fill(img->b + off, len, seed, off);
}

void aiot_img_copy(struct aiot_img *img, uint64_t off, const void *buf, uint64_t len)
{
	img_grow(img, off + len);
	memcpy(img->b + off, buf, len);
}

void aiot_img_truncate(struct aiot_img *img, uint64_t size)
{
	img_grow(img, size);
	if (size < img->size)
		memset(img->b + size, 0, img->size - size);
	img->size = size;
}

void aiot_img_zero(struct aiot_img *img, uint64_t off, uint64_t len)
{
	if (off >= img->size)
		return;
	if (off + len > img->size)
		len = img->size - off;
	memset(img->b + off, 0, len);
}

bool aiot_img_check(const char *what, int fd, const struct aiot_img *img)
{
	long long size = aiot_fsize(fd);
	size_t cap = aiot_round_up(img->size ? img->size : 1, AIOT_PAGE) + AIOT_PAGE;
	uint8_t *buf;
	size_t got = 0, i;
	bool ok;

	if (!CHECK(size == (long long)img->size, "%s: i_size %lld, want %llu", what, size,
		   (unsigned long long)img->size))
		return false;
	buf = aiot_alloc(cap);
	while (got < cap) {
		ssize_t n = pread(fd, buf + got, cap - got, (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (!CHECK(n >= 0, "%s: pread at %zu: %s", what, got, strerror(errno))) {
			free(buf);
			return false;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	ok = CHECK(got == img->size, "%s: read %zu bytes of a %llu-byte file", what, got,
		   (unsigned long long)img->size);
	if (ok && !aiot.nodata && memcmp(buf, img->b, img->size)) {
		for (i = 0; buf[i] == img->b[i]; i++)
			;
		aiot_fail_at(__FILE__, __LINE__, "file == image",
			     "%s: file byte %zu is %#x, want %#x", what, i, buf[i], img->b[i]);
		ok = false;
	}
	free(buf);
	return ok;
}

const char *aiot_img_crc(const struct aiot_img *img)
{
	return aiot_crcstr(img->b, img->size);
}
