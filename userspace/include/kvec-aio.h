/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvec-aio.h: registered kvecs for libaio programs.
 *
 * A context's registered buffers are pinned once by an IOCB_CMD_KVEC_REGISTER
 * iocb and numbered from 0.  A read or write then names one with
 * IOCB_FLAG_KVEC_FIXED and its index in the top bits of aio_flags; its
 * [buf, buf + count) must lie inside that buffer.  On an O_DIRECT block
 * device such I/O builds bios straight from the pinned pages, with no pin
 * or unpin per I/O.  Buffers stay pinned until IOCB_CMD_KVEC_UNREGISTER,
 * io_destroy() or exit, and past that for I/O still in flight on them.
 *
 * Errors (returned by io_submit(), or in a fixed I/O's event):
 *   register:   EINVAL (count 0 or above KVEC_AIO_MAX_BUFS, a length 0 or
 *               above 1 GiB, a non-zero field the command does not use:
 *               aio_fildes, aio_reqprio, aio_offset, aio_rw_flags, or
 *               aio_resfd without IOCB_FLAG_RESFD), EFAULT (bad address,
 *               memory not writable), EOPNOTSUPP (file-backed memory
 *               other than shmem/hugetlbfs), ENOMEM (RLIMIT_MEMLOCK,
 *               unless CAP_IPC_LOCK), EBUSY (buffers already registered)
 *   unregister: ENXIO (none registered), EINVAL (a non-zero field it
 *               does not use, as for register, or aio_buf, aio_nbytes)
 *   fixed I/O:  EFAULT (no such buffer, range not inside it), EINVAL
 *               (vectored opcodes)
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
#define KVEC_AIO_FLAG_KVEC	(1U << 2)	/* IOCB_FLAG_KVEC */
#define KVEC_AIO_FLAG_FIXED	(1U << 3)	/* IOCB_FLAG_KVEC_FIXED */
#define KVEC_AIO_BUF_SHIFT	16		/* IOCB_KVEC_BUF_SHIFT */
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

static inline void kvec_aio_prep_unregister(struct iocb *cb)
{
	memset(cb, 0, sizeof(*cb));
	cb->aio_lio_opcode = KVEC_AIO_CMD_UNREGISTER;
}

/* Make a prepared IO_CMD_PREAD or IO_CMD_PWRITE use registered buffer @index. */
static inline void kvec_aio_use_fixed(struct iocb *cb, unsigned int index)
{
	cb->u.c.flags |= KVEC_AIO_FLAG_FIXED | (index << KVEC_AIO_BUF_SHIFT);
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

/*
 * Submit @cb (a register or unregister iocb) and collect its event, which is
 * posted before io_submit() returns.  For a context with no other events
 * pending: another event coming first is an error (-EBUSY) and is lost.
 * Return: the number of buffers registered or released, or -errno.
 */
static inline int kvec_aio_submit_cmd(io_context_t ctx, struct iocb *cb)
{
	struct timespec now = { 0, 0 };
	struct io_event ev;
	int ret;

	ret = io_submit(ctx, 1, &cb);
	if (ret != 1)
		return ret < 0 ? ret : -EIO;
	ret = io_getevents(ctx, 1, 1, &ev, &now);
	if (ret != 1)
		return ret < 0 ? ret : -EIO;
	if (ev.obj != cb)
		return -EBUSY;
	return (int)(long)ev.res;
}

static inline int kvec_aio_register(io_context_t ctx, const struct iovec *iov,
				    unsigned int nr)
{
	struct iocb cb;

	kvec_aio_prep_register(&cb, iov, nr);
	return kvec_aio_submit_cmd(ctx, &cb);
}

static inline int kvec_aio_unregister(io_context_t ctx)
{
	struct iocb cb;

	kvec_aio_prep_unregister(&cb);
	return kvec_aio_submit_cmd(ctx, &cb);
}

#endif /* KVEC_AIO_H */
