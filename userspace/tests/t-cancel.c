// SPDX-License-Identifier: GPL-2.0
/*
 * t-cancel: io_cancel on read/write iocbs right after submitting them.  In
 * 6.1 only iocbs that registered a cancel callback (poll) sit on the
 * context's active_reqs list, so io_cancel on a read or write, in flight
 * or not, returns -EINVAL, and its event is still delivered exactly once
 * with the full res (unique obj and data, data verified).  A poll iocb is
 * the positive control: io_cancel gives -EINPROGRESS and one event, res 0.
 */
#include "aiotest.h"

#include <poll.h>
#include <sys/eventfd.h>

#define N	64
#define LEN	(256 * AIOT_KIB)

int main(void)
{
	static struct iocb cbs[N];
	struct iocb *cbp[N], pcb, *pp = &pcb;
	struct io_event ev[N], cev;
	uint8_t *buf[N];
	unsigned char seen[N] = { 0 };
	uint64_t v = 1;
	int fd, efd, i, ret, got, einval = 0, other = 0, unique = 0;
	io_context_t ctx;

	aiot_init("t-cancel");
	aiot_require_size(N * LEN + AIOT_MIB);
	fd = aiot_open_dev(O_RDWR | O_DIRECT);
	ctx = aiot_ctx(N + 1);

	for (i = 0; i < N; i++) {
		uint64_t off = (uint64_t)i * LEN;

		buf[i] = aiot_alloc(LEN);
		if (i & 1)
			aiot_sync_write_pattern(fd, off, LEN, 3000 + i);
		aiot_prep_pattern(&cbs[i], !(i & 1), fd, buf[i], LEN, off, 3000 + i);
		cbs[i].data = (void *)(uintptr_t)(0x2000 + i);
		cbp[i] = &cbs[i];
	}
	ret = aiot_submit(ctx, N, cbp);
	/* cancel at once, newest first: the likeliest to be still in flight */
	for (i = (ret > 0 ? ret : 0) - 1; i >= 0; i--) {
		int c = io_cancel(ctx, &cbs[i], &cev);

		if (c == -EINVAL)
			einval++;
		else {
			other++;
			CHECK(c == -EINVAL, "io_cancel of iocb %d: %s", i, aiot_rstr(c));
		}
	}
	aiot_R("submit n=%d ret=%s cancel einval=%d other=%d", N, aiot_rstr(ret),
	       einval, other);
	CHECK(ret == N, "io_submit: %s", aiot_rstr(ret));

	got = ret > 0 ? aiot_reap(ctx, ret, ev) : 0;
	for (i = 0; i < got; i++) {
		int idx = aiot_event_iocb(&ev[i], cbs, N, seen);

		if (idx < 0)
			continue;
		unique++;
		CHECK(ev[i].data == (void *)(uintptr_t)(0x2000 + idx), "iocb %d: data", idx);
		CHECK((long)ev[i].res == (long)LEN, "iocb %d: res %s", idx,
		      aiot_rstr((long)ev[i].res));
	}
	CHECK(aiot_reap_extra(ctx, 100) == 0, "events beyond one per iocb");
	aiot_R("events=%d unique=%d", got, unique);
	CHECK(got == N && unique == N, "not every iocb completed once");
	for (i = 0; i < N; i++) {
		if (i & 1)
			aiot_verify("read after cancel", buf[i], LEN, 3000 + i, (uint64_t)i * LEN);
		else
			aiot_sync_verify(fd, (uint64_t)i * LEN, LEN, 3000 + i);
	}

	/* completed and reaped: still -EINVAL */
	ret = io_cancel(ctx, &cbs[0], &cev);
	aiot_R("cancel completed ret=%s", aiot_rstr(ret));
	CHECK(ret == -EINVAL, "io_cancel of a completed iocb: %s", aiot_rstr(ret));

	/* control: a poll iocb waiting on an idle eventfd can be cancelled */
	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (efd < 0)
		aiot_die("eventfd: %s", strerror(errno));
	io_prep_poll(&pcb, efd, POLLIN);
	pcb.data = (void *)(uintptr_t)0x3000;
	ret = aiot_submit(ctx, 1, &pp);
	CHECK(ret == 1, "io_submit poll: %s", aiot_rstr(ret));
	CHECK(aiot_reap_extra(ctx, 20) == 0, "poll on an idle eventfd completed");
	ret = io_cancel(ctx, &pcb, &cev);
	aiot_R("cancel poll ret=%s", aiot_rstr(ret));
	CHECK(ret == -EINPROGRESS, "io_cancel of a poll iocb: %s", aiot_rstr(ret));
	got = aiot_reap(ctx, 1, ev);
	CHECK(got == 1 && ev[0].obj == &pcb && ev[0].data == pcb.data,
	      "cancelled poll: no event or a wrong one");
	aiot_R("cancel poll events=%d res=%s", got, got ? aiot_rstr((long)ev[0].res) : "-");
	CHECK(got == 1 && ev[0].res == 0, "cancelled poll res %s", aiot_rstr((long)ev[0].res));
	if (write(efd, &v, sizeof(v)) != sizeof(v))
		aiot_die("eventfd write: %s", strerror(errno));
	CHECK(aiot_reap_extra(ctx, 50) == 0, "event after the cancelled poll");
	close(efd);

	for (i = 0; i < N; i++)
		free(buf[i]);
	aiot_ctx_destroy(ctx);
	close(fd);
	return aiot_finish();
}
