// SPDX-License-Identifier: GPL-2.0
/*
 * t-iocb-flags: the iocb fields around IOCB_FLAG_KVEC, which the kvec glue
 * must not disturb (in flag mode every iocb here also carries it).
 * io_submit -EINVAL for a nonzero aio_reserved2 (on a write, and on a read
 * or an fsync that does not carry IOCB_FLAG_KVEC_FIXED or carries it on an
 * opcode without buffers), an unknown opcode, an invalid ioprio class with
 * IOCB_FLAG_IOPRIO.  aio_flags bits the series does not define (4..31) are
 * ignored for every opcode, as stock 6.1 ignores them, on kernels with and
 * without the kvec path: writes, a read, a vectored read and an fsync with
 * 1 << 4, 1 << 31 or all of 0xfffffff0 go through with their data.
 * IOCB_FLAG_KVEC_FIXED on an fsync (aio_reserved2 0) is ignored too: the
 * fsync completes with 0.  Accepted and plain:
 * IOCB_FLAG_KVEC on its own, aio_reqprio without IOCB_FLAG_IOPRIO,
 * valid BE/IDLE/RT priorities, RESFD|IOPRIO together, RWF_HIPRI (aio
 * clears it) and RWF_APPEND (ignored by block devices: the write lands at
 * aio_offset).  The kernel sets aio_key to 0 (KIOCB_KEY) on submission.
 */
#include "aiotest.h"

#include <linux/fs.h>
#include <poll.h>
#include <sys/eventfd.h>

#define SEED	9000
#define PRIO(class, level)	((short)(((class) << 13) | (level)))
/* kvec-aio.h's KVEC_AIO_FLAG_FIXED, spelt out: this test needs no libkvec */
#define FLAG_FIXED		(1U << 3)
/* aio_flags bits no kernel defines */
#define UNDEFINED_FLAGS		0xfffffff0U

static io_context_t ctx;
static uint8_t *buf;
static int fd;

/* A 64 KiB write at @off (pattern seed) with the iocb adjusted by the caller. */
static void prep_w(struct iocb *cb, uint64_t off, uint64_t seed)
{
	aiot_fill(buf, 65536, seed, off);
	aiot_prep_pwrite(cb, fd, buf, 65536, (long long)off);
}

static void run(const char *tag, struct iocb *cb, int want_submit, long want_res,
		uint64_t off, uint64_t seed)
{
	struct aiot_res r = aiot_submit_wait(ctx, cb);

	aiot_report(tag, r, NULL, 0);
	if (want_submit == 1) {
		CHECK(aiot_is(r, want_res), "%s: %s, want res %s", tag, aiot_resstr(r),
		      aiot_rstr(want_res));
		if (want_res > 0 && cb->aio_lio_opcode == IO_CMD_PWRITE)
			aiot_sync_verify(fd, off, (uint64_t)want_res, seed);
		if (want_res > 0 && (cb->aio_lio_opcode == IO_CMD_PREAD ||
				     cb->aio_lio_opcode == IO_CMD_PREADV))
			aiot_verify(tag, buf, (size_t)want_res, seed, off);
	} else {
		CHECK(r.submit == want_submit, "%s: %s, want io_submit %s", tag,
		      aiot_resstr(r), aiot_rstr(want_submit));
		aiot_sync_verify(fd, off, 65536, seed);	/* unchanged */
	}
}

int main(void)
{
	const uint64_t off = 2 * AIOT_MIB;
	bool root = geteuid() == 0;
	bool kvec_kernel = aiot_stats_present();
	struct iocb cb;
	uint64_t cnt = 0;
	int efd;

	aiot_init("t-iocb-flags");
	aiot_require_size(8 * AIOT_MIB);
	fd = aiot_open_dev(O_RDWR | O_DIRECT);
	ctx = aiot_ctx(4);
	buf = aiot_alloc(65536);
	aiot_sync_write_pattern(fd, off, 65536, SEED);

	/* refused */
	prep_w(&cb, off, SEED + 1);
	cb.u.c.__pad3 = 1;			/* aio_reserved2 */
	run("write reserved2=1", &cb, -EINVAL, 0, off, SEED);
	prep_w(&cb, off, SEED + 1);
	cb.aio_lio_opcode = 42;
	run("opcode=42", &cb, -EINVAL, 0, off, SEED);
	prep_w(&cb, off, SEED + 1);
	cb.aio_lio_opcode = IO_CMD_NOOP;
	run("opcode=NOOP", &cb, -EINVAL, 0, off, SEED);
	prep_w(&cb, off, SEED + 1);
	cb.u.c.flags |= IOCB_FLAG_IOPRIO;
	cb.aio_reqprio = PRIO(7, 0);		/* IOPRIO_CLASS_INVALID */
	run("write ioprio=invalid-class", &cb, -EINVAL, 0, off, SEED);
	prep_w(&cb, off, SEED + 1);
	cb.u.c.flags |= IOCB_FLAG_IOPRIO;
	cb.aio_reqprio = PRIO(0, 3);		/* NONE with a level */
	run("write ioprio=none-level3", &cb, -EINVAL, 0, off, SEED);

	/* aio_reserved2 without IOCB_FLAG_KVEC_FIXED, or with it on an fsync */
	memset(buf, AIOT_POISON, 65536);
	aiot_prep_pread(&cb, fd, buf, 65536, (long long)off);
	cb.u.c.__pad3 = 1;
	run("read reserved2=1", &cb, -EINVAL, 0, off, SEED);
	io_prep_fsync(&cb, fd);
	aiot_mark(&cb);
	cb.u.c.__pad3 = 1;
	run("fsync reserved2=1", &cb, -EINVAL, 0, off, SEED);
	io_prep_fsync(&cb, fd);
	aiot_mark(&cb);
	cb.u.c.flags |= FLAG_FIXED;
	cb.u.c.__pad3 = 1;
	run("fsync FIXED reserved2=1", &cb, -EINVAL, 0, off, SEED);

	/* undefined aio_flags bits: ignored for every opcode, as by stock 6.1 */
	prep_w(&cb, off, SEED + 1);
	cb.u.c.flags |= 1U << 31;
	run("write aio_flags|=1<<31", &cb, 1, 65536, off, SEED + 1);
	prep_w(&cb, off, SEED + 2);
	cb.u.c.flags |= 1 << 4;
	run("write aio_flags|=1<<4", &cb, 1, 65536, off, SEED + 2);
	prep_w(&cb, off, SEED + 1);
	cb.u.c.flags |= UNDEFINED_FLAGS;
	run("write aio_flags|=0xfffffff0", &cb, 1, 65536, off, SEED + 1);
	memset(buf, AIOT_POISON, 65536);
	aiot_prep_pread(&cb, fd, buf, 65536, (long long)off);
	cb.u.c.flags |= UNDEFINED_FLAGS;
	run("read aio_flags|=0xfffffff0", &cb, 1, 65536, off, SEED + 1);
	{
		struct iovec iov[2] = { { buf, 32768 }, { buf + 32768, 32768 } };

		memset(buf, AIOT_POISON, 65536);
		aiot_prep_preadv(&cb, fd, iov, 2, (long long)off);
		cb.u.c.flags |= 1U << 16;	/* the old uAPI's buffer index 1 */
		run("readv aio_flags|=1<<16", &cb, 1, 65536, off, SEED + 1);
	}
	io_prep_fsync(&cb, fd);
	aiot_mark(&cb);
	cb.u.c.flags |= UNDEFINED_FLAGS;
	run("fsync aio_flags|=0xfffffff0", &cb, 1, 0, off, SEED + 1);
	io_prep_fsync(&cb, fd);
	aiot_mark(&cb);
	cb.u.c.flags |= FLAG_FIXED;
	run("fsync aio_flags|=FIXED", &cb, 1, 0, off, SEED + 1);
	aiot_sync_verify(fd, off, 65536, SEED + 1);

	/* accepted */
	if (kvec_kernel) {
		prep_w(&cb, off, SEED + 2);
		cb.u.c.flags |= IOCB_FLAG_KVEC;
		run("write aio_flags=KVEC", &cb, 1, 65536, off, SEED + 2);
	}
	prep_w(&cb, off, SEED + 3);
	cb.aio_reqprio = PRIO(1, 0);		/* ignored without the flag */
	run("write reqprio-without-flag", &cb, 1, 65536, off, SEED + 3);
	prep_w(&cb, off, SEED + 4);
	cb.u.c.flags |= IOCB_FLAG_IOPRIO;
	cb.aio_reqprio = PRIO(2, 4);		/* BE 4 */
	run("write ioprio=be4", &cb, 1, 65536, off, SEED + 4);
	prep_w(&cb, off, SEED + 5);
	cb.u.c.flags |= IOCB_FLAG_IOPRIO;
	cb.aio_reqprio = PRIO(3, 0);		/* IDLE */
	run("write ioprio=idle", &cb, 1, 65536, off, SEED + 5);
	prep_w(&cb, off, SEED + 6);
	cb.u.c.flags |= IOCB_FLAG_IOPRIO;
	cb.aio_reqprio = PRIO(1, 2);		/* RT 2: CAP_SYS_ADMIN or _NICE */
	if (root)
		run("write ioprio=rt2", &cb, 1, 65536, off, SEED + 6);
	else
		run("write ioprio=rt2", &cb, -EPERM, 0, off, SEED + 5);

	memset(buf, AIOT_POISON, 65536);
	aiot_prep_rw(&cb, 0, fd, buf, 65536, (long long)off, RWF_HIPRI);
	run("read RWF_HIPRI", &cb, 1, 65536, off, root ? SEED + 6 : SEED + 5);
	prep_w(&cb, off, SEED + 7);
	cb.aio_rw_flags = RWF_HIPRI;
	run("write RWF_HIPRI", &cb, 1, 65536, off, SEED + 7);
	prep_w(&cb, off, SEED + 8);
	cb.aio_rw_flags = RWF_APPEND;
	run("write RWF_APPEND", &cb, 1, 65536, off, SEED + 8);

	/* RESFD and IOPRIO together (and KVEC in flag mode) */
	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (efd < 0)
		aiot_die("eventfd: %s", strerror(errno));
	prep_w(&cb, off, SEED + 9);
	cb.u.c.flags |= IOCB_FLAG_IOPRIO;
	cb.aio_reqprio = PRIO(2, 0);
	io_set_eventfd(&cb, efd);
	cb.key = 0x5a5a;			/* the kernel overwrites it */
	run("write resfd+ioprio", &cb, 1, 65536, off, SEED + 9);
	{
		struct pollfd pfd = { efd, POLLIN, 0 };

		poll(&pfd, 1, AIOT_TIMEOUT_S * 1000);
	}
	if (read(efd, &cnt, sizeof(cnt)) != sizeof(cnt))
		cnt = 0;
	aiot_R("resfd+ioprio eventfd=%llu key=%u", (unsigned long long)cnt, cb.key);
	CHECK(cnt == 1, "eventfd counted %llu", (unsigned long long)cnt);
	CHECK(cb.key == 0, "aio_key %#x after submission, want 0", cb.key);
	close(efd);

	free(buf);
	aiot_ctx_destroy(ctx);
	close(fd);
	return aiot_finish();
}
