/* SPDX-License-Identifier: GPL-2.0 */
/*
 * aiotest: shared helpers for the kvec-aio libaio test programs.
 *
 * Every test runs unchanged in five path modes (AIOT_MODE=stock, kvec,
 * flag, kiobuf, stock-pin) on one scratch block device (AIOT_DEV) and
 * prints the outcomes that must not depend on the path as "R " lines on stdout; the
 * runner compares them between modes.  Diagnostics go to stderr.  Exit status: 0 pass,
 * 1 fail, 77 skip (after "SKIP: reason" on stdout).
 *
 * Environment:
 *   AIOT_DEV     block device to test (required; overwritten freely)
 *   AIOT_MODE    stock | kvec | flag | kiobuf | stock-pin (default stock).
 *                In flag mode every iocb submitted through these helpers
 *                carries IOCB_FLAG_KVEC; the runner sets fs.aio_kvec for
 *                the others (0, 1, 0, 2, 4).
 *   AIOT_NODATA  1: the device does not store data (null_blk without
 *                memory_backed): data comparisons and checksums are skipped,
 *                all res/errno checks and R lines (without crc) remain.
 *   AIOT_DIR     (t-file-* only) a directory on a filesystem mounted from
 *                AIOT_DEV; AIOT_DEV then serves for the device's geometry
 *                (logical block size, DMA alignment) and is not written.
 */
#ifndef AIOTEST_H
#define AIOTEST_H

#include <errno.h>
#include <fcntl.h>
#include <libaio.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

/* The kernel's aio_flags bit asking for the kvec path for this iocb. */
#ifndef IOCB_FLAG_KVEC
#define IOCB_FLAG_KVEC		(1 << 2)
#endif
#ifndef IOCB_FLAG_RESFD
#define IOCB_FLAG_RESFD		(1 << 0)
#endif
#ifndef IOCB_FLAG_IOPRIO
#define IOCB_FLAG_IOPRIO	(1 << 1)
#endif

#ifndef UIO_MAXIOV
#define UIO_MAXIOV		1024
#endif

#define AIOT_KIB		1024ULL
#define AIOT_MIB		(1024ULL * 1024)
#define AIOT_PAGE		4096UL
/* Bytes one bio can map from page-aligned memory in 6.1 (BIO_MAX_VECS). */
#define AIOT_BIO_BYTES		(256 * AIOT_PAGE)
/* Byte the read buffers are filled with before a read. */
#define AIOT_POISON		0xa5
/* Seconds any wait for a completion may take before the test fails. */
#define AIOT_TIMEOUT_S		60

enum aiot_mode { AIOT_STOCK, AIOT_KVEC, AIOT_FLAG, AIOT_KIOBUF, AIOT_STOCK_PIN };

/*
 * stock and stock-pin: unflagged iocbs take the stock path (pinning its
 * pages in stock-pin, fs.aio_kvec = 4), not the kvec path.
 */
#define aiot_mode_is_stock() \
	(aiot.mode == AIOT_STOCK || aiot.mode == AIOT_STOCK_PIN)

/* Filled by aiot_init(). */
struct aiot_env {
	const char *dev;	/* AIOT_DEV */
	enum aiot_mode mode;
	const char *mode_name;
	bool nodata;		/* AIOT_NODATA=1 */
	uint64_t size;		/* BLKGETSIZE64 */
	unsigned int lbs;	/* BLKSSZGET: logical block size */
	unsigned int dma_mask;	/* queue/dma_alignment: buffer address mask */
	unsigned long long rdev;	/* st_rdev of AIOT_DEV */
	/* filesystem targets only (aiot_init_file) */
	const char *dir;	/* AIOT_DIR: where the test makes its files */
	const char *fs;		/* "ext4", "xfs" or "fs-<magic>" (statfs) */
	unsigned int fsbs;	/* the filesystem's block size (statfs f_bsize) */
};
extern struct aiot_env aiot;
extern int aiot_failures;

/*
 * Reads the environment, opens AIOT_DEV once to learn its geometry (size,
 * logical block size, DMA alignment) and closes it again.  Skips (77) when
 * AIOT_DEV is unset or not a block device; fails (1) on a bad AIOT_MODE.
 * @name is the test's name, for messages.
 */
void aiot_init(const char *name);

/* open(AIOT_DEV, flags); failure ends the test (exit 1). */
int aiot_open_dev(int flags);
/* Skip the test unless the device holds at least @bytes. */
void aiot_require_size(uint64_t bytes);
/* /sys/dev/block/M:m/queue/<name> as a number, -1 if absent. */
long long aiot_queue_attr(const char *name);
/* Is AIOT_DEV (or its disk) a blk-mq device (has an mq/ directory)? */
bool aiot_dev_is_mq(void);

/* Results and verdicts. */
__attribute__((format(printf, 1, 2))) void aiot_R(const char *fmt, ...);
__attribute__((format(printf, 1, 2), noreturn)) void aiot_skip(const char *fmt, ...);
__attribute__((format(printf, 1, 2), noreturn)) void aiot_die(const char *fmt, ...);
__attribute__((format(printf, 4, 5)))
void aiot_fail_at(const char *file, int line, const char *cond, const char *fmt, ...);
/* fork(2) with stdio flushed first (no output printed twice); dies on failure. */
pid_t aiot_fork(void);
/* Exit status of the test: 1 if any CHECK failed, else 0. */
int aiot_finish(void);

/* Evaluates to cond (as 0/1); on false reports file:line and the message. */
#define CHECK(cond, ...)						\
	((cond) ? 1 : (aiot_fail_at(__FILE__, __LINE__, #cond, __VA_ARGS__), 0))

/*
 * "EINVAL" for -EINVAL (any negative value: errno name), decimal for >= 0.
 * The returned string lives in a small ring of static buffers: valid for
 * the next 15 calls of aiot_rstr/aiot_crcstr.
 */
const char *aiot_rstr(long res);
/* " crc=<16 hex digits>" of buf[0..len), or "" when AIOT_NODATA is set. */
const char *aiot_crcstr(const void *buf, size_t len);

/* Memory. All buffers are page aligned and filled with AIOT_POISON. */
void *aiot_alloc(size_t len);		/* posix_memalign; free with free() */
void *aiot_map(size_t len);		/* mmap RW anonymous; aiot_unmap() */
void aiot_unmap(void *p, size_t len);
/* An address range that is certainly not mapped (mapped, then unmapped). */
void *aiot_hole(size_t len);
/*
 * Anonymous memory on 2 MiB boundaries, madvise(MADV_HUGEPAGE)d before it
 * is touched, so that transparent huge pages back it; free with
 * aiot_unmap().  Dies if the kernel has no THP (madvise fails).
 */
void *aiot_map_thp(size_t len);
/* Bytes of [p, p + len) that huge pages back (AnonHugePages of smaps). */
uint64_t aiot_thp_bytes(const void *p, size_t len);

/*
 * Deterministic data: the byte at device offset o written with @seed is a
 * function of (seed, o) only, so any part of a written range can be checked
 * wherever it is read back into.
 */
void aiot_fill(void *buf, size_t len, uint64_t seed, uint64_t devoff);
/*
 * True if buf[0..len) holds the pattern of (seed, devoff); otherwise reports
 * the first mismatch (with @what) and returns false.  Always true with
 * AIOT_NODATA.
 */
bool aiot_verify(const char *what, const void *buf, size_t len, uint64_t seed,
		 uint64_t devoff);
/* True if buf[0..len) is all @byte (same NODATA rule as aiot_verify). */
bool aiot_verify_byte(const char *what, const void *buf, size_t len, uint8_t byte);
/* 64-bit FNV-1a over 64-bit words (bytes for a tail): transcripts only. */
uint64_t aiot_csum(const void *buf, size_t len);

/*
 * iocb preparation: libaio's io_prep_* plus, in flag mode, IOCB_FLAG_KVEC
 * in u.c.flags (the kernel's aio_flags).  @data goes to iocb->data.
 */
void aiot_mark(struct iocb *cb);
void aiot_prep_pread(struct iocb *cb, int fd, void *buf, size_t len, long long off);
void aiot_prep_pwrite(struct iocb *cb, int fd, void *buf, size_t len, long long off);
void aiot_prep_preadv(struct iocb *cb, int fd, const struct iovec *iov, int n, long long off);
void aiot_prep_pwritev(struct iocb *cb, int fd, const struct iovec *iov, int n, long long off);
/* Non-vectored with aio_rw_flags (RWF_*). */
void aiot_prep_rw(struct iocb *cb, int write, int fd, void *buf, size_t len,
		  long long off, int rw_flags);
/*
 * A write of the (@seed, @off) pattern from @buf, or a read into @buf,
 * poisoned first so that a read that moves no data fails verification.
 */
void aiot_prep_pattern(struct iocb *cb, int write, int fd, void *buf,
		       size_t len, uint64_t off, uint64_t seed);

/* io_setup; failure ends the test. */
io_context_t aiot_ctx(int nr_events);
void aiot_ctx_destroy(io_context_t ctx);

/*
 * io_submit, after marking every iocb (flag mode).  Returns io_submit's
 * value (number queued or negative errno).
 */
int aiot_submit(io_context_t ctx, long nr, struct iocb **cbs);
/*
 * Collect exactly @nr events (waiting up to AIOT_TIMEOUT_S in total).
 * Returns the number collected; fewer is reported as a failure.
 */
int aiot_reap(io_context_t ctx, int nr, struct io_event *ev);
/* Number of events that arrive within @ms milliseconds (expects none). */
int aiot_reap_extra(io_context_t ctx, int ms);
/*
 * Index in @cbs[0..@n) of the iocb that @ev completes, marked in @seen (@n
 * bytes, zeroed by the caller); -1, reported as a failure, for an event of
 * no iocb in @cbs or a second event of one: completions come exactly once.
 */
int aiot_event_iocb(const struct io_event *ev, const struct iocb *cbs, int n,
		    unsigned char *seen);

struct aiot_res {
	int submit;	/* io_submit's return: 1, or a negative errno */
	long res;	/* the event's res when submit == 1, else 0 */
};
/*
 * Submit one iocb and, if queued, wait for its event; checks that exactly
 * one event comes back, for this iocb, with data intact and res2 == 0.
 */
struct aiot_res aiot_submit_wait(io_context_t ctx, struct iocb *cb);
/* "submit=1 res=8192" or "submit=EFAULT", static ring like aiot_rstr. */
const char *aiot_resstr(struct aiot_res r);
/*
 * "R <tag> submit=.. res=..[ crc=..]": the crc covers buf[0..crclen) and is
 * printed only when buf is given and the I/O was queued (and not NODATA).
 */
void aiot_report(const char *tag, struct aiot_res r, const void *buf, size_t crclen);
/* Did the call queue and complete with exactly @res? */
static inline bool aiot_is(struct aiot_res r, long res)
{
	return r.submit == 1 && r.res == res;
}

/* One-shot synchronous helpers over aiot_submit_wait (res checked). */
struct aiot_res aiot_rw(io_context_t ctx, int write, int fd, void *buf, size_t len,
			long long off);
struct aiot_res aiot_pread(io_context_t ctx, int fd, void *buf, size_t len, long long off);
struct aiot_res aiot_pwrite(io_context_t ctx, int fd, void *buf, size_t len, long long off);
/* Write the (seed, off) pattern over [off, off+len) in chunks; CHECKs res. */
bool aiot_write_pattern(io_context_t ctx, int fd, uint64_t off, uint64_t len,
			uint64_t seed);
/* Read [off, off+len) back and verify the pattern (NODATA: res only). */
bool aiot_read_verify(io_context_t ctx, int fd, uint64_t off, uint64_t len,
		      uint64_t seed);

/*
 * The same through pread(2)/pwrite(2) on @fd: the synchronous direct-I/O
 * path, which never goes through fs/aio.c and so serves as the reference
 * (it catches an aio path that writes and reads back the wrong sectors).
 */
bool aiot_sync_write_pattern(int fd, uint64_t off, uint64_t len, uint64_t seed);
bool aiot_sync_verify(int fd, uint64_t off, uint64_t len, uint64_t seed);

/*
 * kvec statistics, /proc/fs/aio_kvec ("name value" lines).  -1 when the
 * file or the name is absent (a kernel without the feature).
 */
long long aiot_stat(const char *name);
/* /proc/vmstat counter @name (per-cpu deltas folded in first), -1 if absent */
long long aiot_vmstat(const char *name);
/* FOLL_PIN pages taken and not yet released, system-wide */
long long aiot_pins_out(void);
/* CHECK that aiot_pins_out() returns to @base within 3 s (deferred unpins) */
void aiot_pins_settle(const char *what, long long base);
bool aiot_stats_present(void);
/* the kvec path switch */
#define AIOT_SYSCTL	"/proc/sys/fs/aio_kvec"
/* write @val (e.g. "3\n") to AIOT_SYSCTL: 0 or -errno; async-signal-safe */
int aiot_sysctl_write(const char *val);
/* AIOT_SYSCTL's value, -100 when it cannot be read */
int aiot_sysctl_read(void);
/* VmPin of /proc/self/status, in KiB; -1 if absent */
long long aiot_vmpin_kib(void);
/* a read or write (@write) through registered buffer @index, and its result */
/*
 * IOCB_CMD_FDSYNC (@datasync) or IOCB_CMD_FSYNC on @fd, submitted, waited
 * for and reported as an R line named @tag.
 */
struct aiot_res aiot_fsync_report(io_context_t ctx, const char *tag, int fd,
				  int datasync);
struct aiot_res aiot_fixed_rw(io_context_t ctx, int fd, int write, void *buf,
			      size_t len, uint64_t off, unsigned int index);

/*
 * Filesystem targets (the t-file-* programs).  aiot_init_file() is
 * aiot_init() plus AIOT_DIR: it skips (77) when AIOT_DIR is unset, fails
 * when AIOT_DIR is not on AIOT_DEV, and fills aiot.dir, aiot.fs and
 * aiot.fsbs.  The runner runs these programs only on filesystem targets.
 */
void aiot_init_file(const char *name);
/*
 * open(AIOT_DIR/<test>.<tag>, O_CREAT | O_TRUNC | @flags, 0600): a file of
 * this test, removed when the process that created it exits (exit(), not
 * _exit() or a signal), so that every mode starts from the same directory.
 * Failure ends the test.  aiot_file_open() opens it again (no O_CREAT).
 */
int aiot_file_create(const char *tag, int flags);
int aiot_file_open(const char *tag, int flags);
const char *aiot_file_path(const char *tag);
/* i_size by fstat(2); failure ends the test */
long long aiot_fsize(int fd);

/*
 * What a file should hold: an image in memory that follows the writes
 * (aiot_fill's patterns, so any range can be checked wherever it lands)
 * and size changes.  aiot_img_check() reads the whole file through @fd
 * with pread(2) (O_DIRECT or not: the buffer and length are page-rounded)
 * and CHECKs size and bytes.  Images hold at most AIOT_IMG_MAX bytes.
 */
#define AIOT_IMG_MAX	(8 * AIOT_MIB)
struct aiot_img {
	uint8_t *b;
	uint64_t size;
};
void aiot_img_init(struct aiot_img *img);
void aiot_img_free(struct aiot_img *img);
/* the file was written at [off, off+len) with pattern @seed; grows size */
void aiot_img_write(struct aiot_img *img, uint64_t off, uint64_t len, uint64_t seed);
/* the file was written at [off, off+len) from @buf */
void aiot_img_copy(struct aiot_img *img, uint64_t off, const void *buf, uint64_t len);
/* ftruncate(@size): bytes past it are gone, a larger size reads zeros */
void aiot_img_truncate(struct aiot_img *img, uint64_t size);
/* [off, off+len) reads as zeros now (hole punched, zeroed), size kept */
void aiot_img_zero(struct aiot_img *img, uint64_t off, uint64_t len);
bool aiot_img_check(const char *what, int fd, const struct aiot_img *img);
/* " crc=.." of the image's bytes [0, size) (aiot_crcstr) */
const char *aiot_img_crc(const struct aiot_img *img);

static inline uint64_t aiot_round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}
static inline uint64_t aiot_round_down(uint64_t v, uint64_t a)
{
	return v / a * a;
}

#endif /* AIOTEST_H */
