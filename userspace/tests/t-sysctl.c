// SPDX-License-Identifier: GPL-2.0
/*
 * t-sysctl: the run-time switch.  /proc/sys/fs/aio_kvec takes 0, 1 and 2;
 * 3, -1 and text are refused with EINVAL and leave the value alone; a
 * non-root writer gets EACCES.  Which path an iocb takes is decided by the
 * sysctl or IOCB_FLAG_KVEC and nothing else: raw io_submit (not the
 * mode-aware helpers) of a 64 KiB read with sysctl 0 and no flag leaves
 * iocbs_submitted alone, sysctl 1 or 2 or the flag adds exactly one, sysctl
 * 2 without the flag also adds one to kiobuf_iocbs (the flag asks for the
 * plain kvec path), and all read the same data.  Skips on kernels without
 * the kvec path.
 */
#include "aiotest.h"

#include <fcntl.h>
#include <sys/wait.h>

#define SYSCTL	"/proc/sys/fs/aio_kvec"
#define SEED	9500
#define LEN	65536

static int sysctl_write(const char *val)
{
	int fd = open(SYSCTL, O_WRONLY);
	ssize_t n;
	int err;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	err = n < 0 ? -errno : 0;
	close(fd);
	return err;
}

static int sysctl_read(void)
{
	FILE *f = fopen(SYSCTL, "r");
	int v = -100;

	if (!f)
		aiot_die("%s: %s", SYSCTL, strerror(errno));
	if (fscanf(f, "%d", &v) != 1)
		v = -100;
	fclose(f);
	return v;
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
		_exit(sysctl_write("1") == -EACCES ? 0 : 1);
	}
	if (waitpid(pid, &status, 0) != pid)
		aiot_die("waitpid: %s", strerror(errno));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "non-root write to %s was not refused with EACCES (status %#x)", SYSCTL,
	      status);
	aiot_R("non-root write: %s", WIFEXITED(status) && !WEXITSTATUS(status) ?
	       "EACCES" : "allowed");
}

/* Which path a read takes, by the sysctl and the iocb flag. */
struct path_case {
	const char *tag;
	const char *sysctl;
	bool flag;
	long long want_delta;	/* iocbs_submitted: 1 if the kvec path ran */
	long long want_kiobuf;	/* kiobuf_iocbs: 1 if the kiobuf emulation ran */
};

static const struct path_case paths[] = {
	{ "sysctl 0 no flag", "0", false, 0, 0 },
	{ "sysctl 0 flag", "0", true, 1, 0 },
	{ "sysctl 1 no flag", "1", false, 1, 0 },
	{ "sysctl 2 no flag", "2", false, 1, 1 },
	{ "sysctl 2 flag", "2", true, 1, 0 },
};

/* One read through raw io_submit, so the test's own mode adds no flag. */
static long raw_read(io_context_t ctx, int fd, void *buf, bool flag, long long *delta,
		     long long *kiobuf_delta)
{
	long long before = aiot_stat("iocbs_submitted");
	long long kiobuf_before = aiot_stat("kiobuf_iocbs");
	struct iocb cb, *cbs[1] = { &cb };
	struct io_event ev;

	memset(buf, AIOT_POISON, LEN);
	io_prep_pread(&cb, fd, buf, LEN, 0);
	if (flag)
		cb.u.c.flags |= IOCB_FLAG_KVEC;
	if (io_submit(ctx, 1, cbs) != 1)
		aiot_die("io_submit: %s", strerror(errno));
	if (aiot_reap(ctx, 1, &ev) != 1)
		aiot_die("no completion for the read");
	*delta = aiot_stat("iocbs_submitted") - before;
	*kiobuf_delta = aiot_stat("kiobuf_iocbs") - kiobuf_before;
	return (long)ev.res;
}

int main(void)
{
	static const char *const refused[] = { "3", "-1", "abc" };
	int fd, saved, v;
	long long delta, kdelta;
	char restore[8];
	io_context_t ctx;
	unsigned int i;
	uint8_t *buf;
	long res;

	aiot_init("t-sysctl");
	if (access(SYSCTL, F_OK) || !aiot_stats_present())
		aiot_skip("%s or /proc/fs/aio_kvec absent: no kvec path", SYSCTL);
	saved = sysctl_read();
	CHECK(saved >= 0 && saved <= 2, "%s reads %d", SYSCTL, saved);

	CHECK(sysctl_write("2") == 0 && sysctl_read() == 2, "writing 2 failed");
	CHECK(sysctl_write("1") == 0 && sysctl_read() == 1, "writing 1 failed");
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		int err = sysctl_write(refused[i]);

		aiot_R("write %s: %s, value %d", refused[i], aiot_rstr(err),
		       sysctl_read());
		CHECK(err == -EINVAL, "write %s gave %s, want EINVAL", refused[i],
		      aiot_rstr(err));
		CHECK(sysctl_read() == 1, "refused write %s changed the value", refused[i]);
	}
	CHECK(sysctl_write("0") == 0 && sysctl_read() == 0, "writing 0 failed");
	check_non_root();

	aiot_require_size(4 * AIOT_MIB);
	fd = aiot_open_dev(O_RDWR | O_DIRECT);
	ctx = aiot_ctx(1);
	buf = aiot_alloc(LEN);
	aiot_sync_write_pattern(fd, 0, LEN, SEED);

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		const struct path_case *c = &paths[i];

		sysctl_write(c->sysctl);
		res = raw_read(ctx, fd, buf, c->flag, &delta, &kdelta);
		aiot_R("%s: res %s kvec iocbs +%lld kiobuf iocbs +%lld", c->tag,
		       aiot_rstr(res), delta, kdelta);
		CHECK(res == LEN && delta == c->want_delta && kdelta == c->want_kiobuf,
		      "%s: res %ld, iocbs_submitted +%lld, kiobuf_iocbs +%lld, want +%lld +%lld",
		      c->tag, res, delta, kdelta, c->want_delta, c->want_kiobuf);
		aiot_verify(c->tag, buf, LEN, SEED, 0);
	}

	snprintf(restore, sizeof(restore), "%d", saved);
	v = sysctl_write(restore);
	CHECK(v == 0, "restoring %s: %s", SYSCTL, aiot_rstr(v));
	free(buf);
	aiot_ctx_destroy(ctx);
	close(fd);
	return aiot_finish();
}
