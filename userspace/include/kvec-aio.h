/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvec-aio.h: registered kvecs for libaio programs.
 *
 * A context's registered buffers are pinned once by an IOCB_CMD_KVEC_REGISTER
 * iocb and numbered from 0; an entry { NULL, 0 } leaves its slot empty.  A
 * read or write names a buffer with IOCB_FLAG_KVEC_FIXED and the buffer's
 * index in aio_reserved2 (libaio: u.c.__pad3): [buf, buf + count) of a
 * PREAD or PWRITE, and every segment of a PREADV or PWRITEV, must lie inside
 * that buffer.  The I/O then uses the pinned pages, with no pin or unpin per
 * I/O.  IOCB_CMD_KVEC_UPDATE replaces or clears slots; I/O in flight on a
 * replaced buffer finishes on its old pages.  Buffers stay pinned until they
 * are replaced, IOCB_CMD_KVEC_UNREGISTER, io_destroy() or exit, and past
 * that for I/O still in flight on them; io_destroy() returns only after
 * every page is unpinned and uncharged.
 *
 * Pinned pages are charged to the registering user's RLIMIT_MEMLOCK (not
 * to mlock()'s per-process count), unless the caller has CAP_IPC_LOCK.
 *
 * A kernel without registered kvecs fails IOCB_CMD_KVEC_REGISTER with
 * EINVAL (the feature probe) and any non-zero aio_reserved2 with EINVAL.
 *
 * Errors (returned by io_submit(), or in a fixed I/O's event):
 *   register:   EINVAL (count 0 or above KVEC_AIO_MAX_BUFS, a length above
 *               1 GiB, a length 0 with a non-NULL base, a non-zero field
 *               the command does not use: aio_fildes, aio_reqprio,
 *               aio_offset, aio_rw_flags, aio_reserved2, or aio_resfd
 *               without IOCB_FLAG_RESFD), EFAULT (bad address, a NULL base
 *               with a length, memory not writable), EOPNOTSUPP
 *               (file-backed memory other than shmem/hugetlbfs), ENOMEM
 *               (RLIMIT_MEMLOCK, unless CAP_IPC_LOCK), EBUSY (buffers
 *               already registered)
 *   update:     as register, aio_offset being the first slot; EINVAL for
 *               slots past the table, ENXIO (none registered)
 *   unregister: ENXIO (none registered), EINVAL (a non-zero field it
 *               does not use, as for register, or aio_buf, aio_nbytes)
 *   fixed I/O:  EFAULT from io_submit() (no table, an empty slot or one
 *               past the table, a range or segment not inside the
 *               buffer); the event carries the rest, as for any read or
 *               write (EINVAL for misalignment...).  On other opcodes the
 *               flag is ignored, and aio_reserved2 must be 0 (EINVAL).
 */
#ifndef KVEC_AIO_H
#define KVEC_AIO_H

#include <errno.h>
#include <libaio.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

#define KVEC_AIO_CMD_REGISTER	9	/* IOCB_CMD_KVEC_REGISTER */
#define KVEC_AIO_CMD_UNREGISTER	10	/* IOCB_CMD_KVEC_UNREGISTER */
#define KVEC_AIO_CMD_UPDATE	11	/* IOCB_CMD_KVEC_UPDATE */
#define KVEC_AIO_FLAG_KVEC	(1U << 2)	/* IOCB_FLAG_KVEC */
#define KVEC_AIO_FLAG_FIXED	(1U << 3)	/* IOCB_FLAG_KVEC_FIXED */
#define KVEC_AIO_MAX_BUFS	(1U << 14)

/* An iocb that registers @iov[0..@nr) with the context it is submitted to. */
static inline void kvec_aio_prep_register(struct iocb *cb,
					  const struct iovec *iov, unsigned int nr)
{
	/* fields the command does not use (aio_fildes too) must be 0 */
	memset(cb, 0, sizeof(*cb));
	cb->aio_lio_opcode = KVEC_AIO_CMD_REGISTER;
	cb->u.c.buf = (void *)iov;
	cb->u.c.nbytes = nr;
}

/* An iocb that puts @iov[0..@nr) into slots @first.. of the registered table. */
static inline void kvec_aio_prep_update(struct iocb *cb, unsigned int first,
					const struct iovec *iov, unsigned int nr)
{
	kvec_aio_prep_register(cb, iov, nr);
	cb->aio_lio_opcode = KVEC_AIO_CMD_UPDATE;
	cb->u.c.offset = first;
}

static inline void kvec_aio_prep_unregister(struct iocb *cb)
{
	memset(cb, 0, sizeof(*cb));
	cb->aio_lio_opcode = KVEC_AIO_CMD_UNREGISTER;
}

/* Make a prepared read or write (plain or vectored) use buffer @index. */
static inline void kvec_aio_use_fixed(struct iocb *cb, unsigned int index)
{
	cb->u.c.flags |= KVEC_AIO_FLAG_FIXED;
	cb->u.c.__pad3 = index;
}

static inline void kvec_aio_prep_pread_fixed(struct iocb *cb, int fd, void *buf,
					     size_t count, long long offset,
					     unsigned int index)
{
	io_prep_pread(cb, fd, buf, count, offset);
	kvec_aio_use_fixed(cb, index);
}

static inline void kvec_aio_prep_pwrite_fixed(struct iocb *cb, int fd, void *buf,
					      size_t count, long long offset,
					      unsigned int index)
{
	io_prep_pwrite(cb, fd, buf, count, offset);
	kvec_aio_use_fixed(cb, index);
}

static inline void kvec_aio_prep_preadv_fixed(struct iocb *cb, int fd,
					      const struct iovec *iov, int iovcnt,
					      long long offset, unsigned int index)
{
	io_prep_preadv(cb, fd, iov, iovcnt, offset);
	kvec_aio_use_fixed(cb, index);
}

static inline void kvec_aio_prep_pwritev_fixed(struct iocb *cb, int fd,
					       const struct iovec *iov, int iovcnt,
					       long long offset, unsigned int index)
{
	io_prep_pwritev(cb, fd, iov, iovcnt, offset);
	kvec_aio_use_fixed(cb, index);
}

/*
 * Events of other iocbs that arrived before a command's own: the caller
 * provides @ev[0..@max) and handles @ev[0..@nr) as if io_getevents() had
 * returned them.
 */
struct kvec_aio_events {
	struct io_event	*ev;
	long		max;
	long		nr;
};

/*
 * Collect the event of @cb, a command already submitted (it is posted before
 * io_submit() returns).  Events of other iocbs that come first go to
 * @other.  If @other is full first, return -ENOSPC without taking more:
 * handle @other's events, set other->nr = 0 and call again.  With @other
 * NULL the caller promises that nothing else is in flight on @ctx; should
 * another event come first anyway, it is lost and -EBUSY is returned.
 * Return: the command's result (number of buffers registered, updated or
 * released) or -errno.
 */
static inline int kvec_aio_reap_cmd(io_context_t ctx, struct iocb *cb,
				    struct kvec_aio_events *other)
{
	struct timespec now = { 0, 0 };
	struct io_event ev;
	int ret;

	for (;;) {
		if (other && other->nr >= other->max)
			return -ENOSPC;
		ret = io_getevents(ctx, 1, 1, &ev, &now);
		if (ret != 1)
			return ret < 0 ? ret : -EIO;
		if (ev.obj == cb)
			return (int)(long)ev.res;
		if (!other)
			return -EBUSY;
		other->ev[other->nr++] = ev;
	}
}

/* Submit @cb (a register, update or unregister iocb) and collect its event. */
static inline int kvec_aio_submit_cmd(io_context_t ctx, struct iocb *cb,
				      struct kvec_aio_events *other)
{
	int ret = io_submit(ctx, 1, &cb);

	if (ret != 1)
		return ret < 0 ? ret : -EIO;
	return kvec_aio_reap_cmd(ctx, cb, other);
}

static inline int kvec_aio_register(io_context_t ctx, const struct iovec *iov,
				    unsigned int nr)
{
	struct iocb cb;

	kvec_aio_prep_register(&cb, iov, nr);
	return kvec_aio_submit_cmd(ctx, &cb, NULL);
}

static inline int kvec_aio_update(io_context_t ctx, unsigned int first,
				  const struct iovec *iov, unsigned int nr)
{
	struct iocb cb;

	kvec_aio_prep_update(&cb, first, iov, nr);
	return kvec_aio_submit_cmd(ctx, &cb, NULL);
}

static inline int kvec_aio_unregister(io_context_t ctx)
{
	struct iocb cb;

	kvec_aio_prep_unregister(&cb);
	return kvec_aio_submit_cmd(ctx, &cb, NULL);
}

#endif /* KVEC_AIO_H */
