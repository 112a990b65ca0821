// SPDX-License-Identifier: GPL-2.0
/*
 * t-eventfd: IOCB_FLAG_RESFD (io_set_eventfd) on 64 reads and writes
 * submitted together: the eventfd counts exactly one per completion, every
 * event carries its iocb's data and the right res, data verified.  Also a
 * resfd that is not an eventfd (io_submit -EINVAL) or not an fd (-EBADF),
 * and a failing I/O (res -EINVAL) still signals the eventfd.
 */
#include "aiotest.h"

#include <poll.h>
#include <sys/eventfd.h>

#define N	64

/* Read the eventfd until it has counted @want in total (or timeout). */
static uint64_t drain(int efd, uint64_t want)
{
	uint64_t total = 0, v;
	int waited = 0;

	while (total < want && waited < AIOT_TIMEOUT_S * 10) {
		struct pollfd pfd = { efd, POLLIN, 0 };

		if (poll(&pfd, 1, 100) == 0) {
			waited++;
			continue;
		}
		if (read(efd, &v, sizeof(v)) == sizeof(v))
			total += v;
	}
	return total;
}

int main(void)
{
	static struct iocb cbs[N];
	struct iocb *cbp[N];
	struct io_event ev[N];
	uint8_t *buf[N], *p;
	size_t len[N];
	uint64_t off[N], cnt, v;
	unsigned char seen[N] = { 0 };
	io_context_t ctx;
	int fd, efd, i, ret, got, unique = 0;
	struct aiot_res r;

	aiot_init("t-eventfd");
	aiot_require_size(16 * AIOT_MIB);
	fd = aiot_open_dev(O_RDWR | O_DIRECT);
	ctx = aiot_ctx(N);
	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (efd < 0)
		aiot_die("eventfd: %s", strerror(errno));

	/* odd iocbs read what pwrite(2) put there, even ones write */
	for (i = 0; i < N; i++) {
		len[i] = (size_t)(1 + i % 16) * 4096;
		off[i] = (uint64_t)i * 64 * AIOT_KIB;
		buf[i] = aiot_alloc(len[i]);
		if (i & 1)
			aiot_sync_write_pattern(fd, off[i], len[i], 2000 + i);
		aiot_prep_pattern(&cbs[i], !(i & 1), fd, buf[i], len[i], off[i], 2000 + i);
		io_set_eventfd(&cbs[i], efd);
		cbs[i].data = (void *)(uintptr_t)(0x1000 + i);
		cbp[i] = &cbs[i];
	}
	ret = aiot_submit(ctx, N, cbp);
	aiot_R("submit n=%d ret=%s", N, aiot_rstr(ret));
	CHECK(ret == N, "io_submit: %s", aiot_rstr(ret));
	got = ret > 0 ? aiot_reap(ctx, ret, ev) : 0;
	for (i = 0; i < got; i++) {
		int idx = aiot_event_iocb(&ev[i], cbs, N, seen);

		if (idx < 0)
			continue;
		unique++;
		CHECK(ev[i].data == (void *)(uintptr_t)(0x1000 + idx),
		      "iocb %d: data not its own", idx);
		CHECK((long)ev[i].res == (long)len[idx] && ev[i].res2 == 0,
		      "iocb %d: res %s, want %zu", idx, aiot_rstr((long)ev[i].res), len[idx]);
	}
	CHECK(got == N && unique == N, "not every iocb completed");
	cnt = drain(efd, (uint64_t)got);
	aiot_R("events=%d eventfd=%llu", got, (unsigned long long)cnt);
	CHECK(cnt == (uint64_t)N, "eventfd counted %llu, want %d", (unsigned long long)cnt, N);
	CHECK(read(efd, &v, sizeof(v)) < 0 && errno == EAGAIN,
	      "eventfd counted more than the completions");
	CHECK(aiot_reap_extra(ctx, 50) == 0, "extra events");

	for (i = 0; i < N; i++) {
		if (i & 1)
			aiot_verify("eventfd read", buf[i], len[i], 2000 + i, off[i]);
		else
			aiot_sync_verify(fd, off[i], len[i], 2000 + i);
	}

	/* a failing I/O signals too */
	p = aiot_alloc(8192);
	aiot_prep_pread(&cbs[0], fd, p, 4095, 0);	/* length not a block multiple */
	io_set_eventfd(&cbs[0], efd);
	r = aiot_submit_wait(ctx, &cbs[0]);
	cnt = drain(efd, 1);
	aiot_R("misaligned %s eventfd=%llu", aiot_resstr(r), (unsigned long long)cnt);
	CHECK(aiot_is(r, -EINVAL), "misaligned read: %s", aiot_resstr(r));
	CHECK(cnt == 1, "eventfd counted %llu for one failed I/O", (unsigned long long)cnt);

	/* resfd not an eventfd, and not an fd at all */
	aiot_prep_pread(&cbs[0], fd, p, 4096, 0);
	io_set_eventfd(&cbs[0], fd);
	r = aiot_submit_wait(ctx, &cbs[0]);
	aiot_report("resfd=blockdev", r, NULL, 0);
	CHECK(r.submit == -EINVAL, "resfd = block device: %s", aiot_resstr(r));
	aiot_prep_pread(&cbs[0], fd, p, 4096, 0);
	io_set_eventfd(&cbs[0], 1 << 20);
	r = aiot_submit_wait(ctx, &cbs[0]);
	aiot_report("resfd=badfd", r, NULL, 0);
	CHECK(r.submit == -EBADF, "resfd = bad fd: %s", aiot_resstr(r));
	cnt = 0;
	CHECK(read(efd, &cnt, sizeof(cnt)) < 0, "eventfd signalled for refused iocbs");

	free(p);
	for (i = 0; i < N; i++)
		free(buf[i]);
	close(efd);
	aiot_ctx_destroy(ctx);
	close(fd);
	return aiot_finish();
}
