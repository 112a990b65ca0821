// SPDX-License-Identifier: GPL-2.0
/*
 * t-file-race: O_DIRECT aio on ext4 and XFS files (AIOT_DIR) while other
 * things happen to the file.  Results are checked for sanity; R lines are
 * printed only for what does not depend on timing.
 *  - coherence: rounds of 32 direct writes to region A and 32 direct reads
 *    of regions B and C in flight while a child process reads A through a
 *    buffered descriptor and a shared mapping, writes B with pwrite(2) on
 *    its own descriptor without O_DIRECT and C through a MAP_SHARED
 *    mapping.  Afterwards direct aio reads, buffered reads and the mapping
 *    must all show A, B and C as last written;
 *  - truncate and fallocate racing direct I/O: a child shrinks and regrows
 *    the file (ftruncate), punches holes and preallocates while rounds of
 *    direct reads and writes run; each result must be a byte count within
 *    the request or an errno, nothing may crash or leak (the runner checks
 *    pins, the kvec counters and dmesg, and fscks the filesystem after the
 *    run); afterwards the file is written and read back whole;
 *  - io_cancel of a file iocb in flight and of a finished one: what stock
 *    gives (EINVAL: aio reads and writes cannot be cancelled), and each
 *    iocb then completes normally;
 *  - io_destroy with 32 writes and 32 reads in flight: when it returns
 *    everything is done and the data is there;
 *  - exit with I/O in flight: a child submits 32 writes and exits without
 *    reaping; its exit waits for them and the data is in the file.
 */
#include "aiotest.h"

#include <sys/mman.h>
#include <sys/wait.h>

#define SEED	9700
#define REG	(2 * AIOT_MIB)		/* regions A, B, C */
#define CHUNK	(64 * AIOT_KIB)
#define NIO	32
#define ROUNDS	4

static io_context_t ctx;
static uint8_t *buf;			/* NIO * 2 chunks, a page apart */

static uint8_t *slot(int i)
{
	return buf + (size_t)i * (CHUNK + AIOT_PAGE);
}

/*
 * Submit @n prepared iocbs (all or fail) and reap them; counts events whose
 * res is the full chunk in *@full, and CHECKs each is a count within the
 * chunk or -errno.  Returns the number of events.
 */
static int run_batch(io_context_t c, struct iocb *cbs, int n, int *full)
{
	struct iocb *cbp[2 * NIO];
	struct io_event ev[2 * NIO];
	unsigned char seen[2 * NIO];
	int i, ret, got;

	for (i = 0; i < n; i++)
		cbp[i] = &cbs[i];
	ret = aiot_submit(c, n, cbp);
	if (!CHECK(ret == n, "submit %d: %s", n, aiot_rstr(ret)))
		return 0;
	got = aiot_reap(c, n, ev);
	memset(seen, 0, sizeof(seen));
	for (i = 0; i < got; i++) {
		long res = (long)ev[i].res;

		if (aiot_event_iocb(&ev[i], cbs, n, seen) < 0)
			continue;
		CHECK((res >= 0 && res <= (long)CHUNK) || (res < 0 && res >= -4095),
		      "event res %ld", res);
		CHECK(ev[i].res2 == 0, "res2 %ld", (long)ev[i].res2);
		if (res == (long)CHUNK)
			(*full)++;
	}
	return got;
}

/* ------------------------------------------------------------- coherence */

static void coherence_child(const char *tag, int rounds)
{
	int bfd = aiot_file_open(tag, O_RDWR);
	uint8_t *map = mmap(NULL, 3 * REG, PROT_READ | PROT_WRITE, MAP_SHARED, bfd, 0);
	uint8_t *b = aiot_alloc(CHUNK);
	volatile uint8_t sink = 0;
	uint64_t off;
	int r;

	if (map == MAP_FAILED)
		_exit(2);
	for (r = 0; r < rounds; r++) {
		for (off = 0; off < REG; off += CHUNK) {
			/* A: read, buffered and mapped */
			if (pread(bfd, b, CHUNK, (off_t)off) != (ssize_t)CHUNK)
				_exit(3);
			sink ^= map[off + (off / CHUNK) % CHUNK];
			/* B: buffered writes, C: writes through the mapping */
			aiot_fill(b, CHUNK, SEED + 2, REG + off);
			if (pwrite(bfd, b, CHUNK, (off_t)(REG + off)) != (ssize_t)CHUNK)
				_exit(4);
			aiot_fill(map + 2 * REG + off, CHUNK, SEED + 3, 2 * REG + off);
		}
	}
	(void)sink;
	if (msync(map, 3 * REG, MS_SYNC) || fsync(bfd))
		_exit(5);
	free(b);
	munmap(map, 3 * REG);
	close(bfd);
	_exit(0);
}

static bool region_ok(const char *what, const uint8_t *p, uint64_t off, uint64_t seed)
{
	return aiot_verify(what, p, REG, seed, off);
}

static void test_coherence(void)
{
	static struct iocb cbs[2 * NIO];
	int fd = aiot_file_create("coh", O_RDWR | O_DIRECT), bfd, i, r, status;
	int full = 0, events = 0;
	uint8_t *all, *map;
	bool dio_ok = true, buf_ok = true, map_ok = true;
	pid_t pid;

	CHECK(aiot_sync_write_pattern(fd, 0, 3 * REG, SEED), "pre-write");
	pid = aiot_fork();
	if (pid == 0)
		coherence_child("coh", 2);
	for (r = 0; r < ROUNDS; r++) {
		for (i = 0; i < NIO; i++) {
			/* A in full, B and C chunk by chunk over the rounds */
			aiot_prep_pattern(&cbs[i], 1, fd, slot(i), CHUNK, (uint64_t)i * CHUNK,
					  SEED + 1);
			aiot_prep_pattern(&cbs[NIO + i], 0, fd, slot(NIO + i), CHUNK,
					  REG + (uint64_t)((i + r * NIO) % (2 * NIO)) * CHUNK, 0);
		}
		events += run_batch(ctx, cbs, 2 * NIO, &full);
	}
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
	aiot_R("coherence child status=%d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "coherence child: status %#x", status);
	aiot_R("coherence events=%d full=%d", events, full);
	CHECK(events == ROUNDS * 2 * NIO && full == ROUNDS * 2 * NIO,
	      "coherence: %d events, %d full", events, full);

	/* the three views, after everything completed */
	all = aiot_alloc(3 * REG);
	for (i = 0; i < 3; i++) {
		struct aiot_res res = aiot_pread(ctx, fd, all + (size_t)i * REG, REG,
						 (long long)i * REG);

		dio_ok &= CHECK(aiot_is(res, REG), "direct read-back: %s", aiot_resstr(res));
	}
	dio_ok = dio_ok && region_ok("direct read of A", all, 0, SEED + 1) &&
		 region_ok("direct read of B", all + REG, REG, SEED + 2) &&
		 region_ok("direct read of C", all + 2 * REG, 2 * REG, SEED + 3);
	bfd = aiot_file_open("coh", O_RDONLY);
	memset(all, AIOT_POISON, 3 * REG);
	buf_ok = CHECK(pread(bfd, all, 3 * REG, 0) == (ssize_t)(3 * REG), "buffered read-back") &&
		 region_ok("buffered read of A", all, 0, SEED + 1) &&
		 region_ok("buffered read of B", all + REG, REG, SEED + 2) &&
		 region_ok("buffered read of C", all + 2 * REG, 2 * REG, SEED + 3);
	map = mmap(NULL, 3 * REG, PROT_READ, MAP_SHARED, bfd, 0);
	if (CHECK(map != MAP_FAILED, "mmap: %s", strerror(errno))) {
		map_ok = region_ok("mapped A", map, 0, SEED + 1) &&
			 region_ok("mapped B", map + REG, REG, SEED + 2) &&
			 region_ok("mapped C", map + 2 * REG, 2 * REG, SEED + 3);
		munmap(map, 3 * REG);
	} else {
		map_ok = false;
	}
	aiot_R("coherence direct=%s buffered=%s mapped=%s", dio_ok ? "ok" : "bad",
	       buf_ok ? "ok" : "bad", map_ok ? "ok" : "bad");
	free(all);
	close(bfd);
	close(fd);
}

/* ------------------------------------------------------ truncate, punch */

static void truncate_child(const char *tag)
{
	int fd = aiot_file_open(tag, O_RDWR), i;

	for (i = 0; i < 40; i++) {
		off_t at = (off_t)((i * 7) % 32) * (off_t)CHUNK;

		switch (i % 4) {
		case 0:
			if (ftruncate(fd, REG / 2))
				_exit(2);
			break;
		case 1:
			if (ftruncate(fd, REG))
				_exit(3);
			break;
		case 2:
			if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, at, CHUNK))
				_exit(4);
			break;
		case 3:
			if (fallocate(fd, 0, at, 2 * CHUNK))
				_exit(5);
			break;
		}
		usleep(1000);
	}
	_exit(0);
}

static void test_truncate(void)
{
	static struct iocb cbs[2 * NIO];
	int fd = aiot_file_create("trunc", O_RDWR | O_DIRECT), i, r, status, full = 0;
	int events = 0;
	struct aiot_img img;
	pid_t pid;

	CHECK(aiot_sync_write_pattern(fd, 0, REG, SEED + 10), "pre-write");
	pid = aiot_fork();
	if (pid == 0)
		truncate_child("trunc");
	for (r = 0; r < ROUNDS; r++) {
		for (i = 0; i < NIO; i++) {
			uint64_t off = (uint64_t)((i * 5 + r) % NIO) * CHUNK;

			aiot_prep_pattern(&cbs[i], 1, fd, slot(i), CHUNK, off, SEED + 11 + r);
			aiot_prep_pattern(&cbs[NIO + i], 0, fd, slot(NIO + i), CHUNK,
					  REG - CHUNK - off, 0);
		}
		events += run_batch(ctx, cbs, 2 * NIO, &full);
	}
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
	aiot_R("truncate child status=%d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "truncate child: status %#x", status);
	aiot_R("truncate events=%d", events);
	CHECK(events == ROUNDS * 2 * NIO, "truncate: %d events", events);
	fprintf(stderr, "t-file-race: truncate: %d of %d I/Os moved a full chunk\n", full,
		ROUNDS * 2 * NIO);

	/* the file works as any other afterwards */
	CHECK(ftruncate(fd, 0) == 0, "ftruncate: %s", strerror(errno));
	aiot_img_init(&img);
	CHECK(aiot_write_pattern(ctx, fd, 0, REG, SEED + 20), "rewrite after the race");
	aiot_img_write(&img, 0, REG, SEED + 20);
	aiot_img_check("file after the truncate race", fd, &img);
	aiot_R("truncate rewrite%s", aiot_img_crc(&img));
	aiot_img_free(&img);
	close(fd);
}

/* ---------------------------------------------------------------- cancel */

static void test_cancel(void)
{
	struct iocb cbs[2], *cbp[2] = { &cbs[0], &cbs[1] };
	struct io_event ev[2], cev;
	unsigned char seen[2] = { 0, 0 };
	long res[2] = { -ETIMEDOUT, -ETIMEDOUT };
	int fd = aiot_file_create("cancel", O_RDWR | O_DIRECT), ret, got, i;

	CHECK(aiot_sync_write_pattern(fd, 0, 4 * AIOT_MIB, SEED + 30), "pre-write");
	aiot_prep_pattern(&cbs[0], 0, fd, buf, 2 * AIOT_MIB, 0, 0);
	aiot_prep_pattern(&cbs[1], 1, fd, buf + 2 * AIOT_MIB + AIOT_PAGE, CHUNK,
			  2 * AIOT_MIB, SEED + 31);
	ret = aiot_submit(ctx, 2, cbp);
	CHECK(ret == 2, "submit: %s", aiot_rstr(ret));
	ret = io_cancel(ctx, &cbs[0], &cev);
	aiot_R("cancel in-flight read ret=%s", aiot_rstr(ret));
	ret = io_cancel(ctx, &cbs[1], &cev);
	aiot_R("cancel in-flight write ret=%s", aiot_rstr(ret));
	got = aiot_reap(ctx, 2, ev);
	/* in iocb order: the completion order is a matter of timing */
	for (i = 0; i < got; i++) {
		int k = aiot_event_iocb(&ev[i], cbs, 2, seen);

		if (k >= 0)
			res[k] = (long)ev[i].res;
	}
	aiot_R("cancel events read res=%s write res=%s", aiot_rstr(res[0]), aiot_rstr(res[1]));
	aiot_verify("read that io_cancel did not stop", buf, 2 * AIOT_MIB, SEED + 30, 0);
	aiot_sync_verify(fd, 2 * AIOT_MIB, CHUNK, SEED + 31);
	ret = io_cancel(ctx, &cbs[0], &cev);
	aiot_R("cancel finished read ret=%s", aiot_rstr(ret));
	CHECK(aiot_reap_extra(ctx, 10) == 0, "events after io_cancel");
	close(fd);
}

/* --------------------------------------------------- io_destroy and exit */

static void test_destroy(void)
{
	static struct iocb cbs[2 * NIO];
	struct iocb *cbp[2 * NIO];
	io_context_t c = aiot_ctx(2 * NIO);
	int fd = aiot_file_create("destroy", O_RDWR | O_DIRECT), i, ret;
	bool ok = true;

	CHECK(aiot_sync_write_pattern(fd, 0, 2 * NIO * CHUNK, SEED + 40), "pre-write");
	for (i = 0; i < NIO; i++) {
		aiot_prep_pattern(&cbs[i], 1, fd, slot(i), CHUNK, (uint64_t)i * CHUNK, SEED + 41);
		aiot_prep_pattern(&cbs[NIO + i], 0, fd, slot(NIO + i), CHUNK,
				  (uint64_t)(NIO + i) * CHUNK, 0);
	}
	for (i = 0; i < 2 * NIO; i++)
		cbp[i] = &cbs[i];
	ret = aiot_submit(c, 2 * NIO, cbp);
	aiot_R("destroy submit=%s", aiot_rstr(ret));
	ret = io_destroy(c);
	aiot_R("destroy io_destroy=%s", aiot_rstr(ret));
	CHECK(ret == 0, "io_destroy: %s", aiot_rstr(ret));
	for (i = 0; i < NIO && ok; i++)
		ok = aiot_verify("read finished by io_destroy", slot(NIO + i), CHUNK, SEED + 40,
				 (uint64_t)(NIO + i) * CHUNK);
	ok = aiot_sync_verify(fd, 0, NIO * CHUNK, SEED + 41) && ok;
	aiot_R("destroy data=%s", ok ? "ok" : "bad");
	close(fd);
}

static void test_exit(void)
{
	int fd = aiot_file_create("exit", O_RDWR | O_DIRECT), status;
	pid_t pid;

	CHECK(ftruncate(fd, NIO * CHUNK) == 0, "ftruncate: %s", strerror(errno));
	pid = aiot_fork();
	if (pid == 0) {
		static struct iocb cbs[NIO];
		struct iocb *cbp[NIO];
		io_context_t c = aiot_ctx(NIO);
		int cfd = aiot_file_open("exit", O_RDWR | O_DIRECT), i;

		for (i = 0; i < NIO; i++) {
			aiot_prep_pattern(&cbs[i], 1, cfd, slot(i), CHUNK, (uint64_t)i * CHUNK,
					  SEED + 50);
			cbp[i] = &cbs[i];
		}
		_exit(aiot_submit(c, NIO, cbp) == NIO ? 0 : 1);
	}
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
	aiot_R("exit child status=%d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: status %#x", status);
	aiot_R("exit data=%s", aiot_sync_verify(fd, 0, NIO * CHUNK, SEED + 50) ? "ok" : "bad");
	close(fd);
}

int main(void)
{
	aiot_init_file("t-file-race");
	ctx = aiot_ctx(2 * NIO + 4);
	buf = aiot_alloc(2 * NIO * (CHUNK + AIOT_PAGE));

	test_coherence();
	test_truncate();
	test_cancel();
	test_destroy();
	test_exit();

	free(buf);
	aiot_ctx_destroy(ctx);
	return aiot_finish();
}
