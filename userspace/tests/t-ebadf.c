// SPDX-License-Identifier: GPL-2.0
/*
 * t-ebadf: file descriptors aio refuses in its own prep, so io_submit
 * returns -EBADF and no event follows: a write on a device opened
 * O_RDONLY, a read on O_WRONLY, an O_PATH descriptor, a closed and a
 * never-opened fd.  In a batch, io_submit stops at the bad iocb and
 * returns the number queued before it.  Controls: the allowed direction on
 * each descriptor works (data verified).
 */
#include "aiotest.h"

#define SEED	7000

static io_context_t ctx;

static void one(const char *tag, int write, int fd, void *buf, size_t len,
		long long off, int want_submit, long want_res)
{
	struct aiot_res r = aiot_rw(ctx, write, fd, buf, len, off);

	aiot_report(tag, r, NULL, 0);
	if (want_submit == 1)
		CHECK(aiot_is(r, want_res), "%s: %s, want res %s", tag, aiot_resstr(r),
		      aiot_rstr(want_res));
	else
		CHECK(r.submit == want_submit, "%s: %s, want io_submit %s", tag,
		      aiot_resstr(r), aiot_rstr(want_submit));
}

int main(void)
{
	struct iocb cb[2], *cbp[2];
	struct io_event ev[2];
	int rdfd, wrfd, pathfd, rwfd, closed, ret;
	uint8_t *buf;

	aiot_init("t-ebadf");
	aiot_require_size(4 * AIOT_MIB);
	rwfd = aiot_open_dev(O_RDWR | O_DIRECT);
	rdfd = aiot_open_dev(O_RDONLY | O_DIRECT);
	wrfd = aiot_open_dev(O_WRONLY | O_DIRECT);
	pathfd = aiot_open_dev(O_PATH);
	closed = aiot_open_dev(O_RDONLY | O_DIRECT);
	close(closed);
	ctx = aiot_ctx(4);
	buf = aiot_alloc(65536);
	aiot_sync_write_pattern(rwfd, 0, 65536, SEED);

	one("write on O_RDONLY", 1, rdfd, buf, 4096, 0, -EBADF, 0);
	one("read on O_WRONLY", 0, wrfd, buf, 4096, 0, -EBADF, 0);
	one("read on O_PATH", 0, pathfd, buf, 4096, 0, -EBADF, 0);
	one("write on O_PATH", 1, pathfd, buf, 4096, 0, -EBADF, 0);
	one("read on closed fd", 0, closed, buf, 4096, 0, -EBADF, 0);
	one("write on fd -1", 1, -1, buf, 4096, 0, -EBADF, 0);
	one("read on fd 1000000", 0, 1000000, buf, 4096, 0, -EBADF, 0);
	/* -EBADF comes before the buffer, alignment and offset are looked at */
	one("write on O_RDONLY misaligned", 1, rdfd, buf + 1, 4095, 1, -EBADF, 0);
	one("read on O_WRONLY NULL", 0, wrfd, NULL, 4096, 0, -EBADF, 0);
	one("write on O_RDONLY at -512", 1, rdfd, buf, 4096, -512, -EBADF, 0);

	/* controls: the allowed direction works */
	memset(buf, AIOT_POISON, 65536);
	one("read on O_RDONLY", 0, rdfd, buf, 65536, 0, 1, 65536);
	aiot_verify("read on O_RDONLY", buf, 65536, SEED, 0);
	aiot_fill(buf, 65536, SEED + 1, 0);
	one("write on O_WRONLY", 1, wrfd, buf, 65536, 0, 1, 65536);
	aiot_sync_verify(rwfd, 0, 65536, SEED + 1);

	/* a batch stops at the bad iocb */
	aiot_prep_pread(&cb[0], rdfd, buf, 4096, 0);
	aiot_prep_pwrite(&cb[1], rdfd, buf, 4096, 0);
	cbp[0] = &cb[0];
	cbp[1] = &cb[1];
	ret = aiot_submit(ctx, 2, cbp);
	aiot_R("batch good,bad submit=%s", aiot_rstr(ret));
	CHECK(ret == 1, "batch [good, bad]: io_submit %s, want 1", aiot_rstr(ret));
	if (ret > 0) {
		ret = aiot_reap(ctx, 1, ev);
		CHECK(ret == 1 && ev[0].obj == &cb[0] && (long)ev[0].res == 4096,
		      "batch [good, bad]: the good iocb's event");
	}
	cbp[0] = &cb[1];
	cbp[1] = &cb[0];
	ret = aiot_submit(ctx, 2, cbp);
	aiot_R("batch bad,good submit=%s", aiot_rstr(ret));
	CHECK(ret == -EBADF, "batch [bad, good]: io_submit %s, want EBADF", aiot_rstr(ret));
	if (ret > 0)
		aiot_reap(ctx, ret, ev);
	ret = aiot_reap_extra(ctx, 50);
	CHECK(ret == 0, "%d event(s) for refused iocbs", ret);

	free(buf);
	aiot_ctx_destroy(ctx);
	close(rwfd);
	close(rdfd);
	close(wrfd);
	close(pathfd);
	return aiot_finish();
}
