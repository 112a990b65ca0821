// SPDX-License-Identifier: GPL-2.0
/*
 * t-preload: libkvec-fixed.so (userspace/kvec-fixed-preload.c), the
 * LD_PRELOAD library that puts a libaio program's reads and writes on
 * registered kvecs.  The program runs itself again with LD_PRELOAD set to
 * ../libkvec-fixed.so next to its own directory (skips when it is not
 * built), then, as a plain libaio program would, on a small region of
 * AIOT_DEV:
 *  - a batch of four writes and four reads from an anonymous mapping:
 *    the events are the batch's (obj, data, res), the iocbs come back to
 *    the program as it made them, the data reaches the device (pread(2))
 *    and comes back;
 *  - events are exactly the program's: reads into new mappings (each a
 *    registration, whose event the library must hide) alone, in a batch
 *    with hits, and while another thread waits in io_getevents() (the
 *    library cannot take its events off the ring then and must drop them
 *    from what it returns); nothing left over afterwards;
 *  - a read into read-only memory fails with EFAULT as without the library
 *    (the same iocb through the raw io_submit system call, which the
 *    library does not see), for a buffer registered while it was writable
 *    and then mprotect()ed, and for a new read-only mapping; the memory is
 *    not written;
 *  - the pages behind an address change and the library follows: munmap
 *    and a new mapping at the same address, mmap(MAP_FIXED) over a
 *    registered mapping, free() and malloc() of the same size: writes send
 *    the new pages' data, reads land in the new pages;
 *  - the program's own registration (IOCB_CMD_KVEC_REGISTER) on a context
 *    the library had: it works, fixed I/O through it too, and plain I/O
 *    after it;
 *  - /proc/fs/aio_kvec fixed_iocbs grows by exactly the reads and writes
 *    expected to go through registered kvecs (all but the EFAULT ones and
 *    the plain ones after the program's own registration): fixed iocbs use
 *    the registered pages in fs.aio_kvec 0, 1 and 2; 3 (off) sends
 *    everything the stock way, where the count is not checked.
 * Data checks are skipped with AIOT_NODATA; every res and errno check
 * remains.  R lines: results and crcs, the same with and without kvecs.
 */
#include "aiotest.h"
#include "kvec-aio.h"

#include <limits.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif

#define ENV_LIB		"T_PRELOAD_LIB"
#define LIBNAME		"libkvec-fixed.so"
#define SEED		7700
#define CHUNK		(64 * AIOT_KIB)
#define MAPLEN		AIOT_MIB
/* device offsets, all inside the first 8 MiB */
#define OFF_BATCH	0
#define OFF_EVENTS	(AIOT_MIB)
#define OFF_EFAULT	(2 * AIOT_MIB)
#define OFF_REMAP	(3 * AIOT_MIB)
#define OFF_OWN		(6 * AIOT_MIB)
#define REGION		(8 * AIOT_MIB)

static io_context_t ctx;
static int fd;
static bool count_fixed;	/* fixed_iocbs present and fs.aio_kvec != 3 */

/* ---------------------------------------------------------------- parent */

/* Run this program again with the library preloaded; returns only on failure. */
static void reexec(char **argv)
{
	char exe[PATH_MAX], lib[PATH_MAX + 32], real[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		aiot_die("readlink /proc/self/exe: %s", strerror(errno));
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		aiot_die("/proc/self/exe: %s: no directory", exe);
	*slash = '\0';
	snprintf(lib, sizeof(lib), "%s/../" LIBNAME, exe);
	if (!realpath(lib, real) || access(real, R_OK))
		aiot_skip("%s not built (%s)", LIBNAME, lib);
	setenv(ENV_LIB, real, 1);
	setenv("LD_PRELOAD", real, 1);
	fflush(NULL);
	execv("/proc/self/exe", argv);
	aiot_die("execv /proc/self/exe: %s", strerror(errno));
}

/* ----------------------------------------------------------------- child */

static bool lib_mapped(const char *path)
{
	char line[512];
	bool found = false;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, path) != NULL;
	fclose(f);
	return found;
}

static long long fixed_now(void)
{
	return count_fixed ? aiot_stat("fixed_iocbs") : 0;
}

/* fixed_iocbs grew by @want since @base: the reads and writes of phase @what */
static void fixed_check(const char *what, long long base, long long want)
{
	long long got;

	if (!count_fixed)
		return;
	got = aiot_stat("fixed_iocbs") - base;
	CHECK(got == want, "%s: fixed_iocbs +%lld, expected +%lld (the library "
	      "left iocbs off registered kvecs)", what, got, want);
}

static void *map_rw(size_t len)
{
	return aiot_map(len);
}

/*
 * Submit @n iocbs in one io_submit and reap exactly @n events: each one
 * for an iocb of the batch with its data, res2 0, res @res; the iocbs as
 * the program made them after io_submit; nothing more.
 */
static bool batch(const char *what, struct iocb *cbs, int n, long res)
{
	struct iocb *ptrs[16], saved[16];
	struct io_event ev[16];
	unsigned char seen[16] = { 0 };
	int i, got, ret, bad = 0;

	for (i = 0; i < n; i++) {
		cbs[i].data = (void *)(uintptr_t)(0x7e570000 + i);
		aiot_mark(&cbs[i]);
		saved[i] = cbs[i];
		ptrs[i] = &cbs[i];
	}
	ret = io_submit(ctx, n, ptrs);
	if (!CHECK(ret == n, "%s: io_submit of %d: %s", what, n, aiot_rstr(ret)))
		return false;
	for (i = 0; i < n; i++)
		bad += !CHECK(!memcmp(&saved[i], &cbs[i], sizeof(saved[i])),
			      "%s: iocb %d changed by io_submit (aio_flags %#x, "
			      "aio_reserved2 %#llx)", what, i, cbs[i].u.c.flags,
			      (unsigned long long)cbs[i].u.c.__pad3);
	got = aiot_reap(ctx, n, ev);
	for (i = 0; i < got; i++) {
		int idx = aiot_event_iocb(&ev[i], cbs, n, seen);

		if (idx < 0) {
			bad++;
			continue;
		}
		bad += !CHECK(ev[i].data == cbs[idx].data, "%s: event data %p, iocb's %p",
			      what, ev[i].data, cbs[idx].data);
		bad += !CHECK((long)ev[i].res == res && ev[i].res2 == 0,
			      "%s: iocb %d res %s res2 %ld, expected %s", what, idx,
			      aiot_rstr((long)ev[i].res), (long)ev[i].res2, aiot_rstr(res));
	}
	ret = aiot_reap_extra(ctx, 0);
	bad += !CHECK(ret == 0, "%s: %d event(s) more than the program's", what, ret);
	return got == n && !bad;
}

/* 1. four writes, four reads, one io_submit each */
static void test_batch(void)
{
	char *m = map_rw(MAPLEN);
	struct iocb cbs[4];
	long long f0 = fixed_now();
	bool w, r;
	int i;

	for (i = 0; i < 4; i++)
		aiot_prep_pattern(&cbs[i], 1, fd, m + i * CHUNK, CHUNK,
				  OFF_BATCH + i * CHUNK, SEED);
	w = batch("batch write", cbs, 4, CHUNK);
	CHECK(aiot_sync_verify(fd, OFF_BATCH, 4 * CHUNK, SEED),
	      "batch write: pread(2) does not find the data");
	for (i = 0; i < 4; i++)	/* backwards, into the mapping's second half */
		aiot_prep_pattern(&cbs[i], 0, fd, m + MAPLEN / 2 + (3 - i) * CHUNK,
				  CHUNK, OFF_BATCH + (3 - i) * CHUNK, SEED);
	r = batch("batch read", cbs, 4, CHUNK);
	CHECK(aiot_verify("batch read", m + MAPLEN / 2, 4 * CHUNK, SEED, OFF_BATCH),
	      "batch read: wrong data");
	fixed_check("batch", f0, 8);
	aiot_R("batch write=%s read=%s%s", w ? "ok" : "bad", r ? "ok" : "bad",
	       aiot_crcstr(m + MAPLEN / 2, 4 * CHUNK));
	aiot_unmap(m, MAPLEN);
}

/* a thread that waits for @n events of the program and tells how many came */
struct waiter {
	int n, got, extra;
	struct io_event ev[8];
};

static void *wait_events(void *arg)
{
	struct waiter *w = arg;

	w->got = aiot_reap(ctx, w->n, w->ev);
	return NULL;
}

static void check_events(const char *what, struct io_event *ev, int got,
			 struct iocb *cbs, int n)
{
	unsigned char seen[8] = { 0 };
	int i, idx;

	CHECK(got == n, "%s: %d events, expected %d", what, got, n);
	for (i = 0; i < got; i++) {
		idx = aiot_event_iocb(&ev[i], cbs, n, seen);
		if (idx < 0)
			continue;
		CHECK(ev[i].data == cbs[idx].data && (long)ev[i].res == (long)AIOT_PAGE &&
		      ev[i].res2 == 0, "%s: iocb %d: data %p (%p) res %s res2 %ld", what,
		      idx, ev[i].data, cbs[idx].data, aiot_rstr((long)ev[i].res),
		      (long)ev[i].res2);
	}
}

/* 2. events: registrations' events never reach the program */
static void test_events(void)
{
	char *x = map_rw(MAPLEN), *y, *z, *t1, *t2;
	struct iocb cbs[4], *p;
	struct io_event ev[8];
	struct waiter w = { .n = 2 };
	pthread_t th;
	long long f0 = fixed_now();
	int i, n, ret;

	y = mmap(NULL, 2 * MAPLEN, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (y == MAP_FAILED)
		aiot_die("mmap shared: %s", strerror(errno));
	aiot_sync_write_pattern(fd, OFF_EVENTS, 4 * AIOT_PAGE, SEED + 1);

	/* a read whose event is on the ring, then a miss: two io_submits */
	for (i = 0; i < 2; i++) {
		aiot_prep_pattern(&cbs[i], 0, fd, i ? y : x, AIOT_PAGE,
				  OFF_EVENTS + i * AIOT_PAGE, SEED + 1);
		cbs[i].data = (void *)(uintptr_t)(0xe0 + i);
		p = &cbs[i];
		ret = aiot_submit(ctx, 1, &p);
		CHECK(ret == 1, "events: io_submit %d: %s", i, aiot_rstr(ret));
	}
	n = aiot_reap(ctx, 2, ev);
	check_events("events, two submits", ev, n, cbs, 2);
	CHECK(aiot_reap_extra(ctx, 20) == 0, "events: more events than the program's");
	fixed_check("events, two submits", f0, 2);
	f0 = fixed_now();
	CHECK(aiot_verify("events x", x, AIOT_PAGE, SEED + 1, OFF_EVENTS) &&
	      aiot_verify("events y", y, AIOT_PAGE, SEED + 1, OFF_EVENTS + AIOT_PAGE),
	      "events: wrong data");

	/* hit, miss, hit in one batch */
	z = map_rw(MAPLEN);
	aiot_prep_pattern(&cbs[0], 0, fd, x + AIOT_PAGE, AIOT_PAGE, OFF_EVENTS, SEED + 1);
	aiot_prep_pattern(&cbs[1], 0, fd, z, AIOT_PAGE, OFF_EVENTS + AIOT_PAGE, SEED + 1);
	aiot_prep_pattern(&cbs[2], 0, fd, y + MAPLEN, AIOT_PAGE,
			  OFF_EVENTS + 2 * AIOT_PAGE, SEED + 1);
	CHECK(batch("events, hit miss hit", cbs, 3, AIOT_PAGE),
	      "events: batch of a hit, a miss and a hit");
	CHECK(aiot_verify("events z", z, AIOT_PAGE, SEED + 1, OFF_EVENTS + AIOT_PAGE),
	      "events: wrong data in the new mapping");

	fixed_check("events, hit miss hit", f0, 3);
	f0 = fixed_now();

	/* misses while another thread waits in io_getevents */
	if (pthread_create(&th, NULL, wait_events, &w))
		aiot_die("pthread_create");
	/*
	 * Mapped after the thread's stack: in 6.1 a mapping made just before
	 * would merge with the stack below it into one VMA, which the library
	 * takes for a thread stack (guard page below) and never registers.
	 */
	t1 = map_rw(MAPLEN);
	t2 = map_rw(MAPLEN);
	usleep(20000);	/* let it block, usually; either way the result is the same */
	for (i = 0; i < 2; i++) {
		aiot_prep_pattern(&cbs[i], 0, fd, i ? t2 : t1, AIOT_PAGE,
				  OFF_EVENTS + (2 + i) * AIOT_PAGE, SEED + 1);
		cbs[i].data = (void *)(uintptr_t)(0xf0 + i);
		p = &cbs[i];
		ret = aiot_submit(ctx, 1, &p);
		CHECK(ret == 1, "events, reaper waiting: io_submit %d: %s", i, aiot_rstr(ret));
	}
	pthread_join(th, NULL);
	check_events("events, reaper waiting", w.ev, w.got, cbs, 2);
	CHECK(aiot_reap_extra(ctx, 20) == 0,
	      "events, reaper waiting: more events than the program's");
	CHECK(aiot_verify("events t1", t1, AIOT_PAGE, SEED + 1, OFF_EVENTS + 2 * AIOT_PAGE) &&
	      aiot_verify("events t2", t2, AIOT_PAGE, SEED + 1, OFF_EVENTS + 3 * AIOT_PAGE),
	      "events, reaper waiting: wrong data");
	fixed_check("events, reaper waiting", f0, 2);
	aiot_R("events%s%s", aiot_crcstr(z, AIOT_PAGE), aiot_crcstr(t2, AIOT_PAGE));
	aiot_unmap(x, MAPLEN);
	aiot_unmap(z, MAPLEN);
	aiot_unmap(t1, MAPLEN);
	aiot_unmap(t2, MAPLEN);
	munmap(y, 2 * MAPLEN);
}

/* One read into @buf through the library and one the library does not see. */
static void efault_pair(const char *tag, char *buf)
{
	struct iocb cb, *p = &cb;
	struct aiot_res lib, raw = { 0, 0 };
	struct io_event ev;
	long ret;

	aiot_prep_pread(&cb, fd, buf, AIOT_PAGE, OFF_EFAULT);
	lib = aiot_submit_wait(ctx, &cb);
	aiot_prep_pread(&cb, fd, buf, AIOT_PAGE, OFF_EFAULT);
	aiot_mark(&cb);
	ret = syscall(__NR_io_submit, ctx, 1L, &p);
	raw.submit = ret < 0 ? -errno : (int)ret;
	if (raw.submit == 1 && aiot_reap(ctx, 1, &ev) == 1)
		raw.res = (long)ev.res;
	CHECK(lib.submit == raw.submit && lib.res == raw.res,
	      "%s: %s with the library, %s without", tag, aiot_resstr(lib),
	      aiot_resstr(raw));
	CHECK(aiot_is(lib, -EFAULT) || lib.submit == -EFAULT,
	      "%s: %s, expected EFAULT", tag, aiot_resstr(lib));
	if (!aiot.nodata)
		CHECK(aiot_verify_byte(tag, buf, AIOT_PAGE, AIOT_POISON),
		      "%s: read-only memory written", tag);
	aiot_report(tag, lib, NULL, 0);
}

/* 3. reads into read-only memory */
static void test_efault(void)
{
	char *r = map_rw(MAPLEN), *ro;
	long long f0 = fixed_now();
	struct aiot_res res;

	aiot_sync_write_pattern(fd, OFF_EFAULT, AIOT_PAGE, SEED + 2);
	res = aiot_pread(ctx, fd, r, AIOT_PAGE, OFF_EFAULT);	/* registers r */
	CHECK(aiot_is(res, AIOT_PAGE) &&
	      aiot_verify("efault first read", r, AIOT_PAGE, SEED + 2, OFF_EFAULT),
	      "efault: read into the writable buffer: %s", aiot_resstr(res));
	memset(r, AIOT_POISON, AIOT_PAGE);
	if (mprotect(r, MAPLEN, PROT_READ))
		aiot_die("mprotect: %s", strerror(errno));
	efault_pair("efault-mprotect", r);

	ro = mmap(NULL, MAPLEN, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro == MAP_FAILED)
		aiot_die("mmap read-only: %s", strerror(errno));
	/* zero pages, not poison: check against a copy of them */
	{
		struct iocb cb;
		struct aiot_res lib;

		aiot_prep_pread(&cb, fd, ro, AIOT_PAGE, OFF_EFAULT);
		lib = aiot_submit_wait(ctx, &cb);
		CHECK(aiot_is(lib, -EFAULT) || lib.submit == -EFAULT,
		      "efault-new: %s, expected EFAULT", aiot_resstr(lib));
		if (!aiot.nodata)
			CHECK(aiot_verify_byte("efault-new", ro, AIOT_PAGE, 0),
			      "efault-new: read-only memory written");
		aiot_report("efault-new", lib, NULL, 0);
	}
	munmap(ro, MAPLEN);
	fixed_check("efault", f0, 1);
	aiot_unmap(r, MAPLEN);
}

/* write @len at @off from @buf (pattern @seed), pread(2) it, read it back into @back */
static void rw_new_pages(const char *what, char *buf, char *back, size_t len,
			 uint64_t off, uint64_t seed)
{
	struct aiot_res w, r;

	aiot_fill(buf, len, seed, off);
	w = aiot_pwrite(ctx, fd, buf, len, off);
	CHECK(aiot_is(w, (long)len), "%s: write %s", what, aiot_resstr(w));
	CHECK(aiot_sync_verify(fd, off, len, seed),
	      "%s: the device has other data than the new pages' (old pages written?)", what);
	memset(back, AIOT_POISON, len);
	r = aiot_pread(ctx, fd, back, len, off);
	CHECK(aiot_is(r, (long)len), "%s: read %s", what, aiot_resstr(r));
	CHECK(aiot_verify(what, back, len, seed, off),
	      "%s: the data did not land in the new pages (old pages read into?)", what);
	aiot_R("%s write=%s read=%s%s", what, aiot_resstr(w), aiot_resstr(r),
	       aiot_crcstr(back, len));
}

/* 4. new pages at an old address */
static void test_remap(void)
{
	char *m = map_rw(MAPLEN), *m2, *h;
	void *h2;
	long long f0 = fixed_now();
	long long want = 0;

	rw_new_pages("remap-first", m, m + MAPLEN / 2, CHUNK, OFF_REMAP, SEED + 3);
	want += 2;

	/* munmap, a new mapping at the same address (the library's mmap sees no MAP_FIXED) */
	if (munmap(m, MAPLEN))
		aiot_die("munmap: %s", strerror(errno));
	m2 = mmap(m, MAPLEN, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (m2 == MAP_FAILED || m2 != m) {
		/* the address was taken, or an old kernel ignored the flag: no check */
		fprintf(stderr, "t-preload: no new mapping at %p (%p): munmap check skipped\n",
			(void *)m, (void *)m2);
		if (m2 != MAP_FAILED)
			munmap(m2, MAPLEN);
		m = map_rw(MAPLEN);
	} else {
		rw_new_pages("remap-munmap", m, m + MAPLEN / 2, CHUNK, OFF_REMAP + CHUNK,
			     SEED + 4);
		want += 2;
	}

	/* mmap(MAP_FIXED) straight over the registered mapping */
	m2 = mmap(m, MAPLEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		  -1, 0);
	if (m2 != m)
		aiot_die("mmap MAP_FIXED: %s", strerror(errno));
	rw_new_pages("remap-fixed", m, m + MAPLEN / 2, CHUNK, OFF_REMAP + 2 * CHUNK,
		     SEED + 5);
	want += 2;
	aiot_unmap(m, MAPLEN);

	/* free and malloc of the same size: glibc mmaps the chunk, at the same place */
	h = malloc(4 * MAPLEN);
	if (!h)
		aiot_die("malloc");
	h2 = (void *)aiot_round_up((uintptr_t)h, AIOT_PAGE);
	rw_new_pages("remap-malloc", h2, (char *)h2 + MAPLEN, CHUNK, OFF_REMAP + 3 * CHUNK,
		     SEED + 6);
	free(h);
	h = malloc(4 * MAPLEN);
	if (!h)
		aiot_die("malloc");
	h2 = (void *)aiot_round_up((uintptr_t)h, AIOT_PAGE);
	rw_new_pages("remap-free-malloc", h2, (char *)h2 + MAPLEN, CHUNK,
		     OFF_REMAP + 4 * CHUNK, SEED + 7);
	free(h);
	want += 4;
	fixed_check("remap", f0, want);
}

/* 5. the program registers kvecs itself on a context the library had */
static void test_own(void)
{
	char *o = map_rw(MAPLEN), *plain = map_rw(MAPLEN);
	struct iovec reg = { o, MAPLEN };
	struct iocb cb, *p = &cb;
	struct io_event ev;
	struct aiot_res w = { 0, 0 }, r = { 0, 0 }, pl;
	long long f0 = fixed_now();
	int ret;

	/* a plain read first, so that the library holds registrations here */
	pl = aiot_pread(ctx, fd, plain, AIOT_PAGE, OFF_OWN);
	CHECK(aiot_is(pl, AIOT_PAGE), "own: read before %s", aiot_resstr(pl));
	ret = kvec_aio_register(ctx, &reg, 1);
	if (ret == -EINVAL && !aiot_stats_present()) {
		/* a kernel without registered kvecs: the library did nothing either */
		fprintf(stderr, "t-preload: no registered kvecs in this kernel: own registration not checked\n");
	} else if (CHECK(ret == 1, "own: IOCB_CMD_KVEC_REGISTER: %s", aiot_rstr(ret))) {
		aiot_fill(o, CHUNK, SEED + 8, OFF_OWN);
		kvec_aio_prep_pwrite_fixed(&cb, fd, o, CHUNK, OFF_OWN, 0);
		aiot_mark(&cb);
		w.submit = io_submit(ctx, 1, &p);
		if (w.submit == 1 && aiot_reap(ctx, 1, &ev) == 1)
			w.res = (long)ev.res;
		CHECK(aiot_is(w, CHUNK), "own: fixed write %s", aiot_resstr(w));
		CHECK(aiot_sync_verify(fd, OFF_OWN, CHUNK, SEED + 8), "own: fixed write data");
		memset(o + CHUNK, AIOT_POISON, CHUNK);
		kvec_aio_prep_pread_fixed(&cb, fd, o + CHUNK, CHUNK, OFF_OWN, 0);
		aiot_mark(&cb);
		r.submit = io_submit(ctx, 1, &p);
		if (r.submit == 1 && aiot_reap(ctx, 1, &ev) == 1)
			r.res = (long)ev.res;
		CHECK(aiot_is(r, CHUNK) &&
		      aiot_verify("own fixed read", o + CHUNK, CHUNK, SEED + 8, OFF_OWN),
		      "own: fixed read %s", aiot_resstr(r));
		/* plain I/O on the context goes on working (the stock way or kvec) */
		memset(plain, AIOT_POISON, CHUNK);
		pl = aiot_pread(ctx, fd, plain, CHUNK, OFF_OWN);
		CHECK(aiot_is(pl, CHUNK) &&
		      aiot_verify("own plain read", plain, CHUNK, SEED + 8, OFF_OWN),
		      "own: plain read after the registration %s", aiot_resstr(pl));
		ret = kvec_aio_unregister(ctx);
		CHECK(ret == 1, "own: IOCB_CMD_KVEC_UNREGISTER: %s", aiot_rstr(ret));
	}
	CHECK(aiot_reap_extra(ctx, 20) == 0, "own: more events than the program's");
	/* the library's read, the program's two fixed ones; the last read is plain */
	fixed_check("own", f0, 3);
	aiot_R("own register=%d write=%s read=%s plain=%s%s", ret, aiot_resstr(w),
	       aiot_resstr(r), aiot_resstr(pl), aiot_crcstr(plain, CHUNK));
	aiot_unmap(o, MAPLEN);
	aiot_unmap(plain, MAPLEN);
}

int main(int argc, char **argv)
{
	const char *lib = getenv(ENV_LIB);
	int sys;

	(void)argc;
	aiot_init("t-preload");
	if (!lib)
		reexec(argv);
	if (!CHECK(lib_mapped(lib), "%s not loaded (LD_PRELOAD=%s)", lib,
		   getenv("LD_PRELOAD") ? getenv("LD_PRELOAD") : ""))
		return aiot_finish();
	aiot_require_size(REGION);
	sys = aiot_sysctl_read();
	count_fixed = aiot_stat("fixed_iocbs") >= 0 && sys != 3;
	fprintf(stderr, "t-preload: %s, fs.aio_kvec %d, fixed_iocbs %s\n", lib, sys,
		count_fixed ? "checked" : "not checked");

	fd = aiot_open_dev(O_RDWR | O_DIRECT);
	ctx = aiot_ctx(64);
	test_batch();
	test_events();
	test_efault();
	test_remap();
	test_own();
	aiot_ctx_destroy(ctx);
	close(fd);
	return aiot_finish();
}
