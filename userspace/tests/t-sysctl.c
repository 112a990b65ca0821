// SPDX-License-Identifier: GPL-2.0
/*
 * t-sysctl: the run-time switch.  /proc/sys/fs/aio_kvec takes 0 to 4;
 * 5, -1 and text are refused with EINVAL and leave the value alone; a
 * non-root writer gets EACCES.  Which path an iocb takes is decided by the
 * sysctl, IOCB_FLAG_KVEC and IOCB_FLAG_KVEC_FIXED and nothing else: raw
 * io_submit (not the mode-aware helpers) of a 64 KiB read with sysctl 0 and
 * no flag leaves iocbs_submitted alone, sysctl 1 or 2 or the flag adds
 * exactly one, sysctl 2 without the flag also adds one to kiobuf_iocbs (the
 * flag asks for the plain kvec path), and all read the same data.
 * Sysctl 3 switches the kvec path off: no iocb takes it (iocbs_submitted
 * and the FOLL_PIN count in /proc/vmstat do not move), each iocb with
 * IOCB_FLAG_KVEC or IOCB_FLAG_KVEC_FIXED adds one to fallback_disabled,
 * unflagged ones nothing; flagged writes and reads, and fixed writes and
 * reads through a buffer registered under 3, move the right data through
 * the stock code, and fixed iocbs still get EFAULT for an index past the
 * table or a range outside the buffer.  Sysctl 4 is 0 with the stock path
 * pinning its pages: unflagged reads and writes leave iocbs_submitted
 * alone and move nr_foll_pin_acquired, flagged ones take the kvec path.
 * The value found at the start is
 * written back at exit, on failure too.  Skips on kernels without the kvec
 * path.
 */
#include "aiotest.h"
#include "kvec-aio.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define SEED	9500
#define LEN	65536
#define WOFF	(4 * LEN)	/* where the path cases write */

/* The value found at the start, written back at exit (aiot_die included). */
static int saved = -1;
static pid_t main_pid;

static void restore_sysctl(void)
{
	char val[16];

	if (saved < 0 || getpid() != main_pid)
		return;
	snprintf(val, sizeof(val), "%d", saved);
	if (aiot_sysctl_write(val))
		fprintf(stderr, "t-sysctl: could not restore %s to %d\n", AIOT_SYSCTL, saved);
}

/* A non-root process may read the switch but not flip it. */
static void check_non_root(void)
{
	pid_t pid;
	int status;

	if (geteuid() != 0) {
		aiot_R("non-root write: not run (not root)");
		return;
	}
	pid = aiot_fork();
	if (pid == 0) {
		if (setgid(65534) || setuid(65534))
			_exit(2);
		_exit(aiot_sysctl_write("1") == -EACCES ? 0 : 1);
	}
	if (waitpid(pid, &status, 0) != pid)
		aiot_die("waitpid: %s", strerror(errno));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "non-root write to %s was not refused with EACCES (status %#x)", AIOT_SYSCTL,
	      status);
	aiot_R("non-root write: %s", WIFEXITED(status) && !WEXITSTATUS(status) ?
	       "EACCES" : "allowed");
}

/* Which path a read or write takes, by the sysctl and the iocb flag. */
struct path_case {
	const char *tag;
	const char *sysctl;
	bool flag;
	bool write;
	long long want_delta;	/* iocbs_submitted: 1 if the kvec path ran */
	long long want_kiobuf;	/* kiobuf_iocbs: 1 if the kiobuf emulation ran */
	long long want_disabled;	/* fallback_disabled: 1 if flagged under 3 */
	bool stock_pins;	/* the stock path pins (FOLL_PIN) under 4 */
};

static const struct path_case paths[] = {
	{ "sysctl 0 no flag", "0", false, false, 0, 0, 0, false },
	{ "sysctl 0 flag", "0", true, false, 1, 0, 0, false },
	{ "sysctl 1 no flag", "1", false, false, 1, 0, 0, false },
	{ "sysctl 2 no flag", "2", false, false, 1, 1, 0, false },
	{ "sysctl 2 flag", "2", true, false, 1, 0, 0, false },
	{ "sysctl 3 no flag", "3", false, false, 0, 0, 0, false },
	{ "sysctl 3 flag", "3", true, false, 0, 0, 1, false },
	{ "sysctl 3 no flag write", "3", false, true, 0, 0, 0, false },
	{ "sysctl 3 flag write", "3", true, true, 0, 0, 1, false },
	{ "sysctl 4 no flag", "4", false, false, 0, 0, 0, true },
	{ "sysctl 4 flag", "4", true, false, 1, 0, 0, true },
	{ "sysctl 4 no flag write", "4", false, true, 0, 0, 0, true },
};

/* What one iocb moved in /proc/fs/aio_kvec and /proc/vmstat. */
struct moved {
	long long submitted, kiobuf, disabled, pins;
};

static struct moved counters(void)
{
	struct moved m = {
		.submitted = aiot_stat("iocbs_submitted"),
		.kiobuf = aiot_stat("kiobuf_iocbs"),
		.disabled = aiot_stat("fallback_disabled"),
		.pins = aiot_vmstat("nr_foll_pin_acquired"),
	};
	return m;
}

/*
 * Submit @cb through raw io_submit, so the test's own mode adds no flag,
 * and wait for its event; @d gets what it moved.
 */
static struct aiot_res raw_io(io_context_t ctx, struct iocb *cb, struct moved *d)
{
	struct moved before = counters(), after;
	struct aiot_res r = { 0, 0 };
	struct io_event ev;

	r.submit = io_submit(ctx, 1, &cb);
	if (r.submit == 1)
		r.res = aiot_reap(ctx, 1, &ev) == 1 ? (long)ev.res : -ETIMEDOUT;
	after = counters();
	d->submitted = after.submitted - before.submitted;
	d->kiobuf = after.kiobuf - before.kiobuf;
	d->disabled = after.disabled - before.disabled;
	d->pins = after.pins - before.pins;
	return r;
}

/*
 * One read of LEN at 0 (pattern SEED), or one write of LEN at WOFF with
 * pattern @seed, through raw_io.
 */
static long raw_rw(io_context_t ctx, int fd, void *buf, const struct path_case *c,
		   uint64_t seed, struct moved *d)
{
	struct iocb cb;
	struct aiot_res r;

	if (c->write) {
		aiot_fill(buf, LEN, seed, WOFF);
		io_prep_pwrite(&cb, fd, buf, LEN, WOFF);
	} else {
		memset(buf, AIOT_POISON, LEN);
		io_prep_pread(&cb, fd, buf, LEN, 0);
	}
	if (c->flag)
		cb.u.c.flags |= IOCB_FLAG_KVEC;
	r = raw_io(ctx, &cb, d);
	if (r.submit != 1)
		aiot_die("%s: io_submit: %s", c->tag, aiot_rstr(r.submit));
	return r.res;
}

/*
 * Registered buffers under sysctl 3: registering works, fixed I/O goes
 * through the stock code on the registered pages (no kvec iocb, no pin per
 * I/O) with the right data, and still validates the index and the range.
 */
static void fixed_off(io_context_t ctx, int fd)
{
	uint8_t *reg = aiot_map(2 * LEN);
	struct iovec iov = { reg, 2 * LEN };
	struct aiot_res r;
	struct moved d;
	struct iocb cb;
	int ret;

	CHECK(aiot_sysctl_write("3") == 0, "writing 3 failed");
	ret = kvec_aio_register(ctx, &iov, 1);
	aiot_R("sysctl 3 register: %s", aiot_rstr(ret));
	if (!CHECK(ret == 1, "register under sysctl 3: %s", aiot_rstr(ret))) {
		aiot_unmap(reg, 2 * LEN);
		return;
	}

	aiot_fill(reg + 4096, LEN, SEED + 1, LEN);
	kvec_aio_prep_pwrite_fixed(&cb, fd, reg + 4096, LEN, LEN, 0);
	r = raw_io(ctx, &cb, &d);
	aiot_R("sysctl 3 fixed write: %s kvec iocbs +%lld fallback_disabled +%lld pinned %s",
	       aiot_resstr(r), d.submitted, d.disabled, d.pins ? "yes" : "no");
	CHECK(aiot_is(r, LEN) && d.submitted == 0 && d.disabled == 1 && d.pins == 0,
	      "fixed write under 3: %s, iocbs_submitted +%lld, fallback_disabled +%lld, FOLL_PIN +%lld; want res %d, +0, +1, +0",
	      aiot_resstr(r), d.submitted, d.disabled, d.pins, LEN);
	CHECK(aiot_sync_verify(fd, LEN, LEN, SEED + 1), "device after a fixed write under 3");

	memset(reg, AIOT_POISON, 2 * LEN);
	kvec_aio_prep_pread_fixed(&cb, fd, reg + LEN, LEN, LEN, 0);
	r = raw_io(ctx, &cb, &d);
	aiot_R("sysctl 3 fixed read: %s kvec iocbs +%lld fallback_disabled +%lld pinned %s",
	       aiot_resstr(r), d.submitted, d.disabled, d.pins ? "yes" : "no");
	CHECK(aiot_is(r, LEN) && d.submitted == 0 && d.disabled == 1 && d.pins == 0,
	      "fixed read under 3: %s, iocbs_submitted +%lld, fallback_disabled +%lld, FOLL_PIN +%lld; want res %d, +0, +1, +0",
	      aiot_resstr(r), d.submitted, d.disabled, d.pins, LEN);
	aiot_verify("fixed read under 3", reg + LEN, LEN, SEED + 1, LEN);
	aiot_verify_byte("fixed read under 3: bytes around it", reg, LEN, AIOT_POISON);

	kvec_aio_prep_pread_fixed(&cb, fd, reg, LEN, 0, 1);
	r = raw_io(ctx, &cb, &d);
	aiot_R("sysctl 3 fixed read index 1: %s", aiot_resstr(r));
	CHECK(r.submit == -EFAULT, "fixed read of buffer 1 of 1 under 3: %s, want EFAULT",
	      aiot_resstr(r));
	kvec_aio_prep_pread_fixed(&cb, fd, reg + LEN + 4096, LEN, 0, 0);
	r = raw_io(ctx, &cb, &d);
	aiot_R("sysctl 3 fixed read past the end: %s", aiot_resstr(r));
	CHECK(r.submit == -EFAULT, "fixed read past the buffer's end under 3: %s, want EFAULT",
	      aiot_resstr(r));

	ret = kvec_aio_unregister(ctx);
	aiot_R("sysctl 3 unregister: %s", aiot_rstr(ret));
	CHECK(ret == 1, "unregister under 3: %s", aiot_rstr(ret));
	aiot_unmap(reg, 2 * LEN);
}

int main(void)
{
	static const char *const refused[] = { "5", "-1", "abc" };
	char restore[16];
	io_context_t ctx;
	struct moved d;
	unsigned int i;
	uint8_t *buf;
	int fd, v;
	long res;

	aiot_init("t-sysctl");
	if (access(AIOT_SYSCTL, F_OK) || !aiot_stats_present())
		aiot_skip("%s or /proc/fs/aio_kvec absent: no kvec path", AIOT_SYSCTL);
	v = aiot_sysctl_read();
	CHECK(v >= 0 && v <= 4, "%s reads %d", AIOT_SYSCTL, v);
	main_pid = getpid();
	saved = v >= 0 && v <= 4 ? v : 0;
	atexit(restore_sysctl);
	CHECK(aiot_stat("fallback_disabled") >= 0, "no fallback_disabled in /proc/fs/aio_kvec");

	CHECK(aiot_sysctl_write("4") == 0 && aiot_sysctl_read() == 4, "writing 4 failed");
	CHECK(aiot_sysctl_write("3") == 0 && aiot_sysctl_read() == 3, "writing 3 failed");
	CHECK(aiot_sysctl_write("2") == 0 && aiot_sysctl_read() == 2, "writing 2 failed");
	CHECK(aiot_sysctl_write("1") == 0 && aiot_sysctl_read() == 1, "writing 1 failed");
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		int err = aiot_sysctl_write(refused[i]);

		aiot_R("write %s: %s, value %d", refused[i], aiot_rstr(err),
		       aiot_sysctl_read());
		CHECK(err == -EINVAL, "write %s gave %s, want EINVAL", refused[i],
		      aiot_rstr(err));
		CHECK(aiot_sysctl_read() == 1, "refused write %s changed the value", refused[i]);
	}
	CHECK(aiot_sysctl_write("0") == 0 && aiot_sysctl_read() == 0, "writing 0 failed");
	check_non_root();

	aiot_require_size(4 * AIOT_MIB);
	fd = aiot_open_dev(O_RDWR | O_DIRECT);
	ctx = aiot_ctx(1);
	buf = aiot_alloc(LEN);
	aiot_sync_write_pattern(fd, 0, LEN, SEED);

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		const struct path_case *c = &paths[i];

		v = aiot_sysctl_write(c->sysctl);
		CHECK(v == 0, "%s: writing %s: %s", c->tag, c->sysctl, aiot_rstr(v));
		res = raw_rw(ctx, fd, buf, c, SEED + 10 + i, &d);
		aiot_R("%s: res %s kvec iocbs +%lld kiobuf iocbs +%lld fallback_disabled +%lld pinned %s",
		       c->tag, aiot_rstr(res), d.submitted, d.kiobuf, d.disabled,
		       d.pins ? "yes" : "no");
		CHECK(res == LEN && d.submitted == c->want_delta &&
		      d.kiobuf == c->want_kiobuf && d.disabled == c->want_disabled,
		      "%s: res %ld, iocbs_submitted +%lld, kiobuf_iocbs +%lld, fallback_disabled +%lld, want +%lld +%lld +%lld",
		      c->tag, res, d.submitted, d.kiobuf, d.disabled, c->want_delta,
		      c->want_kiobuf, c->want_disabled);
		/*
		 * the kvec path pins per I/O (FOLL_PIN); 6.1's stock path does
		 * not, unless sysctl 4 has it pin as 6.5 does
		 */
		CHECK((d.pins > 0) == (c->want_delta > 0 || c->stock_pins),
		      "%s: %lld FOLL_PIN pins taken, want %s", c->tag, d.pins,
		      c->want_delta > 0 || c->stock_pins ? "some" : "none");
		if (c->write)
			CHECK(aiot_sync_verify(fd, WOFF, LEN, SEED + 10 + i), "%s: device", c->tag);
		else
			aiot_verify(c->tag, buf, LEN, SEED, 0);
	}
	fixed_off(ctx, fd);

	snprintf(restore, sizeof(restore), "%d", saved);
	v = aiot_sysctl_write(restore);
	CHECK(v == 0 && aiot_sysctl_read() == saved, "restoring %s to %d: %s", AIOT_SYSCTL, saved,
	      aiot_rstr(v));
	saved = -1;	/* done: nothing for the exit handler */
	free(buf);
	aiot_ctx_destroy(ctx);
	close(fd);
	return aiot_finish();
}
