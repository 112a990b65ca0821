// SPDX-License-Identifier: GPL-2.0
/*
 * t-memlock: what registered kvecs charge, to whom, and when they stop.
 * Registered pages are charged to the registering user's locked_vm (one
 * count for every process of the uid, forked children included), limited
 * by the registering process's RLIMIT_MEMLOCK, not charged with
 * CAP_IPC_LOCK, and not shared with mlock()'s per-process count; they show
 * in the registering process's VmPin.  The root process (R) sets
 * RLIMIT_MEMLOCK to 1 MiB and:
 *  - registers 2 MiB itself: allowed (CAP_IPC_LOCK), VmPin +2048 KiB;
 *  - forks a process U that becomes uid/gid 65534 (no capabilities) and:
 *    registers 768 KiB (VmPin +768 KiB), writes a pattern through the
 *    registered buffer and reads it back through it; a forked child of U
 *    (same uid) then gets ENOMEM for 512 KiB, and 256 KiB registers; once
 *    the child let go of those and U unregistered, the child registers
 *    512 KiB, and while it holds them U gets ENOMEM for 768 KiB; right after
 *    the child's io_destroy() U registers 768 KiB;
 *  - mlock() of 768 KiB, then registering 768 KiB, then mlock() of 768 KiB
 *    again with them registered: all succeed (two separate counts, each
 *    within the 1 MiB limit; the old per-mm charge refused the second);
 *  - registers the full 1 MiB, has 16 fixed reads in flight and calls
 *    io_destroy(): the reads' data is there when it returns, and a new
 *    context registers 1 MiB at once (no wait) while 4 KiB more gets ENOMEM;
 *    VmPin is back where it started.
 * At each checkpoint U stops and R checks, as root (stat_refresh needs it),
 * that the FOLL_PIN pins outstanding (/proc/vmstat) and pages_registered -
 * pages_unregistered (/proc/fs/aio_kvec) are exactly what U holds then:
 * after each io_destroy() and unregister, nothing.  All I/O here is fixed
 * I/O, which takes the kvec path in every mode.
 */
#include "aiotest.h"
#include "kvec-aio.h"

#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#define SEED	9900
#define LIMIT	AIOT_MIB		/* RLIMIT_MEMLOCK */
#define BIG	(768 * AIOT_KIB)
#define HALF	(512 * AIOT_KIB)
#define QUARTER	(256 * AIOT_KIB)
#define NOBODY	65534
#define NFLY	16
#define FLYLEN	(LIMIT / NFLY)

static int fd;
/* U -> R: checkpoints; R -> U: checked, go on */
static int up[2], down[2];
/* U <-> its child C: turns */
static int to_child[2], to_parent[2];

struct checkpoint {
	char what[56];
	long long pages;	/* pages U holds registered at this point */
};

static void expect_int(const char *tag, int got, int want)
{
	aiot_R("%s %s", tag, aiot_rstr(got));
	CHECK(got == want, "%s: %s, want %s", tag, aiot_rstr(got), aiot_rstr(want));
}

static int reg(io_context_t ctx, void *buf, size_t len)
{
	struct iovec iov = { buf, len };

	return kvec_aio_register(ctx, &iov, 1);
}

static void check_vmpin(const char *what, long long base, long long kib)
{
	long long v = aiot_vmpin_kib();

	CHECK(v - base == kib, "%s: VmPin %+lld KiB, want %+lld", what, v - base, kib);
}

static void send_byte(int wfd)
{
	if (write(wfd, "x", 1) != 1)
		aiot_die("pipe write: %s", strerror(errno));
}

static void wait_byte(int rfd)
{
	char c;

	if (read(rfd, &c, 1) != 1)
		aiot_die("pipe read: the other process is gone");
}

/* U: stop until R checked that @pages registered pages are all there is. */
static void checkpoint(const char *what, long long pages)
{
	struct checkpoint cp = { .pages = pages };

	snprintf(cp.what, sizeof(cp.what), "%s", what);
	if (write(up[1], &cp, sizeof(cp)) != sizeof(cp))
		aiot_die("checkpoint write: %s", strerror(errno));
	wait_byte(down[0]);
}

/* A fixed read or write of [buf, buf + len) at device offset @off, buffer 0. */
static struct aiot_res fixed_rw(io_context_t ctx, int write, void *buf, size_t len,
				uint64_t off)
{
	struct iocb cb;

	if (write)
		kvec_aio_prep_pwrite_fixed(&cb, fd, buf, len, (long long)off, 0);
	else
		kvec_aio_prep_pread_fixed(&cb, fd, buf, len, (long long)off, 0);
	return aiot_submit_wait(ctx, &cb);
}

static void expect_io(const char *tag, struct aiot_res r, size_t len, const void *buf)
{
	aiot_report(tag, r, buf, len);
	CHECK(aiot_is(r, (long)len), "%s: %s, want res %zu", tag, aiot_resstr(r), len);
}

/*
 * U's child C, same uid: U holds 768 KiB registered.  Each turn starts when
 * U sends a byte and ends with a byte back.
 */
static void child_main(void)
{
	io_context_t c = aiot_ctx(4);
	uint8_t *b = aiot_map(HALF);
	long long vp0 = aiot_vmpin_kib();

	/* turn 1: 768 KiB are the user's already */
	wait_byte(to_child[0]);
	expect_int("child-register-512k", reg(c, b, HALF), -ENOMEM);
	check_vmpin("child after ENOMEM", vp0, 0);
	expect_int("child-register-256k", reg(c, b, QUARTER), 1);
	check_vmpin("child with 256 KiB registered", vp0, QUARTER / AIOT_KIB);
	memset(b, AIOT_POISON, QUARTER);
	expect_io("child-fixed-read-256k", fixed_rw(c, 0, b, QUARTER, 0), QUARTER, b);
	aiot_verify("child's fixed read", b, QUARTER, SEED, 0);
	expect_int("child-unregister-256k", kvec_aio_unregister(c), 1);
	check_vmpin("child after unregister", vp0, 0);
	send_byte(to_parent[1]);

	/* turn 2: U unregistered its 768 KiB */
	wait_byte(to_child[0]);
	expect_int("child-register-512k-after-parent", reg(c, b, HALF), 1);
	check_vmpin("child with 512 KiB registered", vp0, HALF / AIOT_KIB);
	send_byte(to_parent[1]);

	/* turn 3: U was refused 768 KiB; let go of the 512 by io_destroy */
	wait_byte(to_child[0]);
	CHECK(io_destroy(c) == 0, "child's io_destroy");
	check_vmpin("child after io_destroy", vp0, 0);
	send_byte(to_parent[1]);
	aiot_unmap(b, HALF);
	exit(aiot_finish());
}

/* U: one user, two processes. */
static void shared_user(io_context_t ctx, uint8_t *a, long long vp0)
{
	int status;
	pid_t pid;

	expect_int("register-768k", reg(ctx, a, BIG), 1);
	check_vmpin("768 KiB registered", vp0, BIG / AIOT_KIB);
	checkpoint("768 KiB registered", BIG / AIOT_PAGE);
	/* the kvec path on the registered pages: out and back */
	aiot_fill(a, BIG, SEED, 0);
	expect_io("fixed-write-768k", fixed_rw(ctx, 1, a, BIG, 0), BIG, a);
	CHECK(aiot_sync_verify(fd, 0, BIG, SEED), "device after the fixed write");
	memset(a, AIOT_POISON, BIG);
	expect_io("fixed-read-768k", fixed_rw(ctx, 0, a, BIG, 0), BIG, a);
	aiot_verify("fixed read back", a, BIG, SEED, 0);

	if (pipe(to_child) || pipe(to_parent))
		aiot_die("pipe: %s", strerror(errno));
	pid = aiot_fork();
	if (pid == 0)
		child_main();

	send_byte(to_child[1]);			/* turn 1 */
	wait_byte(to_parent[0]);
	expect_int("unregister-768k", kvec_aio_unregister(ctx), 1);
	check_vmpin("768 KiB unregistered", vp0, 0);
	send_byte(to_child[1]);			/* turn 2 */
	wait_byte(to_parent[0]);
	expect_int("register-768k-child-holds-512k", reg(ctx, a, BIG), -ENOMEM);
	check_vmpin("after ENOMEM", vp0, 0);
	send_byte(to_child[1]);			/* turn 3 */
	wait_byte(to_parent[0]);
	/* the child's io_destroy() has returned: its charge is gone already */
	expect_int("register-768k-after-child-destroy", reg(ctx, a, BIG), 1);
	check_vmpin("768 KiB registered again", vp0, BIG / AIOT_KIB);

	CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed (status %#x)",
	      status);
	expect_int("unregister-768k-again", kvec_aio_unregister(ctx), 1);
	check_vmpin("all unregistered", vp0, 0);
	close(to_child[1]);
	close(to_parent[0]);
	close(to_child[0]);
	close(to_parent[1]);
	checkpoint("shared user: all unregistered", 0);
}

/* U: mlock()'s count and the registered pages' count are separate. */
static void mlock_separate(io_context_t ctx, uint8_t *a, long long vp0)
{
	uint8_t *m = aiot_map(BIG);
	int ret;

	ret = mlock(m, BIG) ? -errno : 0;
	expect_int("mlock-768k", ret, 0);
	expect_int("register-768k-with-768k-mlocked", reg(ctx, a, BIG), 1);
	check_vmpin("registered beside mlock", vp0, BIG / AIOT_KIB);
	CHECK(munlock(m, BIG) == 0, "munlock: %s", strerror(errno));
	ret = mlock(m, BIG) ? -errno : 0;
	expect_int("mlock-768k-with-768k-registered", ret, 0);
	CHECK(munlock(m, BIG) == 0, "munlock: %s", strerror(errno));
	expect_int("unregister-beside-mlock", kvec_aio_unregister(ctx), 1);
	aiot_unmap(m, BIG);
	checkpoint("mlock: all unregistered", 0);
}

/* U: io_destroy() with fixed reads in flight on a buffer at the limit. */
static void destroy_at_limit(long long vp0)
{
	static struct iocb cbs[NFLY];
	struct iocb *cbp[NFLY];
	uint8_t *f = aiot_map(LIMIT), *extra = aiot_map(AIOT_PAGE);
	io_context_t d = aiot_ctx(NFLY), d2 = aiot_ctx(4), d3 = aiot_ctx(4);
	int i;

	CHECK(aiot_sync_write_pattern(fd, 0, LIMIT, SEED + 1), "pre-write");
	expect_int("register-1m", reg(d, f, LIMIT), 1);
	check_vmpin("1 MiB registered", vp0, LIMIT / AIOT_KIB);
	expect_int("register-4k-over-1m", reg(d3, extra, AIOT_PAGE), -ENOMEM);
	checkpoint("1 MiB registered", LIMIT / AIOT_PAGE);
	memset(f, AIOT_POISON, LIMIT);
	for (i = 0; i < NFLY; i++) {
		kvec_aio_prep_pread_fixed(&cbs[i], fd, f + i * FLYLEN, FLYLEN,
					  (long long)i * FLYLEN, 0);
		cbp[i] = &cbs[i];
	}
	CHECK(aiot_submit(d, NFLY, cbp) == NFLY, "submit %d fixed reads", NFLY);
	CHECK(io_destroy(d) == 0, "io_destroy with fixed reads in flight");
	/* at once: io_destroy() returns after the pages are unpinned and uncharged */
	expect_int("register-1m-after-destroy", reg(d2, f, LIMIT), 1);
	check_vmpin("1 MiB registered in a new context", vp0, LIMIT / AIOT_KIB);
	aiot_verify("fixed reads finished by io_destroy", f, LIMIT, SEED + 1, 0);
	checkpoint("destroyed with reads in flight, 1 MiB registered anew",
		   LIMIT / AIOT_PAGE);
	expect_int("register-4k-over-1m-again", reg(d3, extra, AIOT_PAGE), -ENOMEM);
	CHECK(io_destroy(d2) == 0, "io_destroy");
	check_vmpin("after the last io_destroy", vp0, 0);
	checkpoint("last io_destroy", 0);
	CHECK(io_destroy(d3) == 0, "io_destroy");
	aiot_unmap(f, LIMIT);
	aiot_unmap(extra, AIOT_PAGE);
}

/* The unprivileged process. */
static void user_main(void)
{
	struct rlimit rl;
	io_context_t ctx;
	long long vp0;
	uint8_t *a;

	close(up[0]);
	close(down[1]);
	if (setresgid(NOBODY, NOBODY, NOBODY) || setresuid(NOBODY, NOBODY, NOBODY))
		aiot_die("becoming uid %d: %s", NOBODY, strerror(errno));
	CHECK(getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur == LIMIT,
	      "RLIMIT_MEMLOCK not inherited");
	ctx = aiot_ctx(8);
	a = aiot_map(BIG);
	vp0 = aiot_vmpin_kib();
	CHECK(vp0 >= 0, "no VmPin in /proc/self/status");

	shared_user(ctx, a, vp0);
	mlock_separate(ctx, a, vp0);
	destroy_at_limit(vp0);

	aiot_unmap(a, BIG);
	aiot_ctx_destroy(ctx);
	close(up[1]);
	exit(aiot_finish());
}

/* R: with CAP_IPC_LOCK, RLIMIT_MEMLOCK does not apply. */
static void root_over_limit(long long pins0, long long regd0)
{
	io_context_t ctx = aiot_ctx(2);
	uint8_t *b = aiot_map(2 * LIMIT);
	long long vp0 = aiot_vmpin_kib();

	expect_int("root-register-2m-over-limit", reg(ctx, b, 2 * LIMIT), 1);
	check_vmpin("root: 2 MiB registered", vp0, 2 * LIMIT / AIOT_KIB);
	CHECK(aiot_pins_out() - pins0 == 2 * LIMIT / AIOT_PAGE, "root: %lld pins for 2 MiB",
	      aiot_pins_out() - pins0);
	CHECK(aiot_sync_write_pattern(fd, 0, 2 * LIMIT, SEED + 2), "pre-write");
	memset(b, AIOT_POISON, 2 * LIMIT);
	expect_io("root-fixed-read-2m", fixed_rw(ctx, 0, b, 2 * LIMIT, 0), 2 * LIMIT, b);
	aiot_verify("root's fixed read", b, 2 * LIMIT, SEED + 2, 0);
	CHECK(io_destroy(ctx) == 0, "root's io_destroy");
	check_vmpin("root: after io_destroy", vp0, 0);
	CHECK(aiot_pins_out() == pins0, "root: %lld pages pinned after io_destroy",
	      aiot_pins_out() - pins0);
	CHECK(aiot_stat("pages_registered") - aiot_stat("pages_unregistered") == regd0,
	      "root: registered pages left after io_destroy");
	aiot_unmap(b, 2 * LIMIT);
}

static long long registered_now(void)
{
	return aiot_stat("pages_registered") - aiot_stat("pages_unregistered");
}

int main(void)
{
	struct rlimit rl = { LIMIT, LIMIT };
	long long pins0, regd0;
	struct checkpoint cp;
	int status;
	ssize_t n;
	pid_t pid;

	aiot_init("t-memlock");
	if (aiot_stat("fixed_iocbs") < 0)
		aiot_skip("kernel without registered kvecs");
	if (geteuid() != 0)
		aiot_skip("needs root: switches to uid %d", NOBODY);
	if (aiot.dma_mask >= AIOT_PAGE)
		aiot_skip("device needs buffers aligned to more than a page");
	aiot_require_size(2 * LIMIT);
	fd = aiot_open_dev(O_RDWR | O_DIRECT);
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		aiot_die("setrlimit(RLIMIT_MEMLOCK): %s", strerror(errno));
	pins0 = aiot_pins_out();
	regd0 = registered_now();

	root_over_limit(pins0, regd0);

	if (pipe(up) || pipe(down))
		aiot_die("pipe: %s", strerror(errno));
	pid = aiot_fork();
	if (pid == 0)
		user_main();
	close(up[1]);
	close(down[0]);
	while ((n = read(up[0], &cp, sizeof(cp))) == sizeof(cp)) {
		long long pins = aiot_pins_out() - pins0, regd = registered_now() - regd0;

		cp.what[sizeof(cp.what) - 1] = 0;
		CHECK(pins == cp.pages, "%s: %lld pages pinned (vmstat), want %lld", cp.what,
		      pins, cp.pages);
		CHECK(regd == cp.pages,
		      "%s: pages_registered - pages_unregistered %+lld, want %+lld", cp.what,
		      regd, cp.pages);
		send_byte(down[1]);
	}
	CHECK(n == 0, "checkpoint read: %zd", n);
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "uid %d process failed (status %#x)", NOBODY, status);
	CHECK(aiot_pins_out() == pins0, "%lld pages pinned at the end", aiot_pins_out() - pins0);
	CHECK(registered_now() == regd0, "registered pages left at the end");
	close(fd);
	return aiot_finish();
}
