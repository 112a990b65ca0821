// SPDX-License-Identifier: GPL-2.0
/*
 * t-destroy-inflight: 256 reads and writes submitted, then io_destroy at
 * once: io_destroy returns 0 only after all of them finished (6.1 waits),
 * so the writes are on the device and the read buffers filled when it
 * returns; the old context is gone (io_getevents -EINVAL) and a new one
 * works.  Then a forked child submits 256 and exits without reaping:
 * exit_aio waits for them too, so after waitpid the child's writes are on
 * the device, and the parent's own context is unaffected.
 */
#include "aiotest.h"

#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#define N	256
#define LEN	(32 * AIOT_KIB)

static struct iocb cbs[N];
static struct iocb *cbp[N];
static uint8_t *bufs;

/* Even iocbs write (seed, off), odd ones read what region seed+1 holds. */
static void prep(int fd, uint64_t dev0, uint64_t seed)
{
	int i;

	for (i = 0; i < N; i++) {
		uint64_t off = dev0 + (uint64_t)i * LEN;
		uint8_t *b = bufs + (size_t)i * LEN;

		aiot_prep_pattern(&cbs[i], !(i & 1), fd, b, LEN, off, seed);
		cbs[i].data = (void *)(uintptr_t)i;
		cbp[i] = &cbs[i];
	}
}

/* Pre-write the odd (read) slots with seed + 1. */
static void prewrite_reads(int fd, uint64_t dev0, uint64_t seed)
{
	int i;

	for (i = 1; i < N; i += 2)
		aiot_sync_write_pattern(fd, dev0 + (uint64_t)i * LEN, LEN, seed + 1);
}

static void check_done(int fd, uint64_t dev0, uint64_t seed, bool reads_too)
{
	int i;

	for (i = 0; i < N; i++) {
		uint64_t off = dev0 + (uint64_t)i * LEN;

		if (i & 1) {
			if (reads_too &&
			    !aiot_verify("read buffer after io_destroy",
					 bufs + (size_t)i * LEN, LEN, seed + 1, off))
				break;
		} else if (!aiot_sync_verify(fd, off, LEN, seed)) {
			break;
		}
	}
}

int main(void)
{
	const uint64_t dev0 = 0, dev1 = N * LEN;
	struct io_event ev;
	struct aiot_res r;
	struct timespec ts;
	io_context_t ctx, ctx2;
	int fd, ret, status;
	pid_t pid;
	uint8_t *one;

	aiot_init("t-destroy-inflight");
	aiot_require_size(2 * N * LEN + AIOT_MIB);
	fd = aiot_open_dev(O_RDWR | O_DIRECT);
	bufs = aiot_alloc((size_t)N * LEN);

	/* submit and destroy */
	prewrite_reads(fd, dev0, 10);
	ctx = aiot_ctx(N);
	prep(fd, dev0, 10);
	ret = aiot_submit(ctx, N, cbp);
	aiot_R("submit n=%d ret=%s", N, aiot_rstr(ret));
	CHECK(ret == N, "io_submit: %s", aiot_rstr(ret));
	ret = io_destroy(ctx);
	aiot_R("io_destroy ret=%s", aiot_rstr(ret));
	CHECK(ret == 0, "io_destroy with I/O in flight: %s", aiot_rstr(ret));
	check_done(fd, dev0, 10, true);
	/* raw syscall: libaio's io_getevents would peek at the unmapped ring */
	ts.tv_sec = 0;
	ts.tv_nsec = 0;
	ret = syscall(SYS_io_getevents, ctx, 1L, 1L, &ev, &ts) < 0 ? -errno : 0;
	aiot_R("io_getevents old-ctx ret=%s", aiot_rstr(ret));
	CHECK(ret == -EINVAL, "io_getevents on a destroyed context: %s", aiot_rstr(ret));

	/* a new context works */
	ctx2 = aiot_ctx(N);
	one = aiot_alloc(LEN);
	r = aiot_pread(ctx2, fd, one, LEN, (long long)dev0);
	aiot_report("new-ctx read", r, one, LEN);
	CHECK(aiot_is(r, LEN), "read on a new context: %s", aiot_resstr(r));
	aiot_verify("new context read", one, LEN, 10, dev0);

	/* a child that submits and exits without reaping */
	prewrite_reads(fd, dev1, 20);
	pid = aiot_fork();
	if (pid == 0) {
		io_context_t cctx = 0;

		free(one);	/* not the child's; bufs stays in use until exit */
		if (io_setup(N, &cctx) < 0)
			_exit(3);
		prep(fd, dev1, 20);
		ret = aiot_submit(cctx, N, cbp);
		_exit(ret == N ? 0 : 2);
	}
	if (waitpid(pid, &status, 0) != pid)
		aiot_die("waitpid: %s", strerror(errno));
	aiot_R("child exit=%d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "child: status %#x (2: io_submit short, 3: io_setup failed)", status);
	check_done(fd, dev1, 20, false);

	/* the parent's context is unaffected by the child's exit */
	memset(one, AIOT_POISON, LEN);
	r = aiot_pread(ctx2, fd, one, LEN, (long long)dev1);
	aiot_report("after-child read", r, one, LEN);
	CHECK(aiot_is(r, LEN), "read after the child exited: %s", aiot_resstr(r));
	aiot_verify("read after the child exited", one, LEN, 20, dev1);

	free(one);
	free(bufs);
	aiot_ctx_destroy(ctx2);
	close(fd);
	return aiot_finish();
}
