// SPDX-License-Identifier: GPL-2.0
/*
 * t-fault: fault injection under I/O (debug kernels: CONFIG_FAULT_INJECTION
 * with its debugfs files; skips without /sys/kernel/debug/fail_make_request).
 * Every iocb must complete exactly once, with its full length or an errno
 * of the phase's allowed set; afterwards the device holds, block by block,
 * only what the outcomes allow; in a kvec mode /proc/fs/aio_kvec counts
 * every accepted iocb once and every failed one as an error (the kvec path
 * counts synchronous failures too, which aio turns into events, so the
 * errors delta equals the failed events exactly; io_submit failures come
 * before the kvec path and are not counted).
 *
 *  a) block errors, fail_make_request on the device:
 *     a1 probability 100: single-bio and multi-bio I/Os all fail with -EIO
 *        and transfer nothing (every bio fails before it moves data);
 *     a2 interval 3: writev/readv of 1024 half-page segments, which no path
 *        can merge, so every path issues at least 4 bios in a row and one of
 *        any 3 consecutive ones fails: always -EIO; blocks are old-or-new
 *        (writes) or poison-or-data (reads), the skipped half pages intact;
 *     a3 interval 5 on 4 MiB I/Os: some fail (-EIO), some not, depending on
 *        the path's bio count: only a summary is an R line;
 *     a4 null_blk bad blocks (configfs devices): a 4 MiB I/O over a bad
 *        range fails with -EIO, the bad sectors keep the old data and every
 *        block farther than one request (max_sectors_kb) from them has the
 *        new data.
 *  b) allocation failures for this task only (task-filter, make-it-fail set
 *     around io_submit alone), failslab, fail_page_alloc, both: io_submit
 *     may fail (-EAGAIN kiocb, -ENOMEM iovec), events may carry -ENOMEM,
 *     -EFAULT or -EIO; a failed submission or -ENOMEM/-EFAULT transfers
 *     nothing.  kvec page arrays stay at most a page (vectored 64 x 4 KiB,
 *     plain 1920 KiB): a larger kvmalloc falls back to vmalloc, whose failure
 *     is reported with a stack dump that the runner would take for a splat.
 *  c) pins racing munmap/mprotect of the buffer in another thread: single-bio
 *     I/Os give the full length, a short count or -EFAULT, multi-bio ones the
 *     full length or -EIO; the device holds what the outcome allows.
 *
 * Pins balance after each phase (vmstat).  Injected faults: T - "times" left
 * per attribute, plus I/Os failed by bad blocks and by the pin race; "FAULTS
 * n" on stdout, the breakdown on stderr.  All settings are restored at exit,
 * also from a fatal signal.
 */
#include "aiotest.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>

#define DBGFS		"/sys/kernel/debug"
#define TIMES		1000000		/* "times" budget of every attribute */
#define MAXOPS		16
#define MAXSEGS		1024
#define MIB		AIOT_MIB

/* Device layout. */
#define A_SLOT		(4 * MIB)
#define A_NSLOTS	10
#define A_W		0			/* a: slots 0..9 */
#define A_R		(A_NSLOTS * A_SLOT)	/* a: read area, 4 MiB */
#define B_W		(A_R + 4 * MIB)		/* b: 3 slots of 2 MiB */
#define B_R		(B_W + 6 * MIB)		/* b: read area, 2 MiB */
#define C_W		(B_R + 2 * MIB)		/* c: 3 slots of 2 MiB */
#define C_R		(C_W + 6 * MIB)		/* c: read area, 2 MiB */
#define DEV_END		(C_R + 2 * MIB)

#define ARENA		(12 * MIB)	/* per-batch I/O buffers */
/* phase c: the buffer being unmapped, writes from its first half, reads into the second */
#define RB_LEN		(6 * MIB)

static io_context_t ctx;
static int fd;
static uint64_t next_seed = 70000;

/* ------------------------------------------------ fault attribute files */

enum { FA_MKREQ, FA_SLAB, FA_PAGE, NR_FA };
static const char *const fa_name[NR_FA] = {
	"fail_make_request", "failslab", "fail_page_alloc",
};
static const char *const fa_file[] = {
	"probability", "interval", "times", "space", "verbose", "task-filter",
	"ignore-gfp-wait", "ignore-gfp-highmem", "min-order", "cache-filter",
};
#define NR_FILES	(sizeof(fa_file) / sizeof(fa_file[0]))

/* Paths and saved values prepared up front: restore() runs in signal handlers. */
static char fa_path[NR_FA][NR_FILES][96];
static char fa_saved[NR_FA][NR_FILES][32];
static bool fa_have[NR_FA][NR_FILES];
static bool fa_present[NR_FA];
static long long fa_injected[NR_FA];
static char dev_mif[96];		/* /sys/dev/block/M:m/make-it-fail */
static char bb_path[128];		/* null_blk configfs badblocks, or "" */
static char bb_clear[64];		/* "-0-<last sector>" */
static int task_mif = -1;		/* /proc/thread-self/make-it-fail */
static volatile sig_atomic_t restored;

static int put(const char *path, const char *val)
{
	int f = open(path, O_WRONLY | O_CLOEXEC), ret = 0;

	if (f < 0)
		return -errno;
	if (write(f, val, strlen(val)) < 0)
		ret = -errno;
	close(f);
	return ret;
}

static bool get_str(const char *path, char *buf, size_t len)
{
	int f = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (f < 0)
		return false;
	n = read(f, buf, len - 1);
	close(f);
	if (n < 0)
		return false;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return true;
}

static int fa_index(const char *file)
{
	unsigned int i;

	for (i = 0; i < NR_FILES; i++)
		if (!strcmp(fa_file[i], file))
			return (int)i;
	aiot_die("no fault attribute file %s", file);
}

static void fa_set(int a, const char *file, const char *val)
{
	int i = fa_index(file), ret;

	if (!fa_have[a][i])
		return;		/* not every attribute has every file */
	ret = put(fa_path[a][i], val);
	CHECK(ret == 0, "%s/%s = %s: %s", fa_name[a], file, val, aiot_rstr(ret));
}

static long long fa_get(int a, const char *file)
{
	char buf[32];

	if (!get_str(fa_path[a][fa_index(file)], buf, sizeof(buf)))
		return -1;
	return strtoll(buf, NULL, 10);
}

/* Only this task, and only while it sits in io_submit. */
static void task_fail(bool on)
{
	if (task_mif >= 0 && pwrite(task_mif, on ? "1" : "0", 1, 0) != 1)
		aiot_die("make-it-fail: %s", strerror(errno));
}

/* Everything off again; async-signal-safe. */
static void restore(void)
{
	int a;
	unsigned int i;

	if (restored)
		return;
	restored = 1;
	if (task_mif >= 0 && pwrite(task_mif, "0", 1, 0) < 0)
		restored = 2;
	for (a = 0; a < NR_FA; a++) {
		if (!fa_present[a])
			continue;
		put(fa_path[a][0], "0");	/* probability first */
		for (i = 1; i < NR_FILES; i++)
			if (fa_have[a][i])
				put(fa_path[a][i], fa_saved[a][i]);
	}
	if (dev_mif[0])
		put(dev_mif, "0");
	if (bb_path[0])
		put(bb_path, bb_clear);
}

static void on_signal(int sig)
{
	restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void fa_init(void)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGSEGV,
				    SIGBUS, SIGABRT, SIGFPE, SIGILL };
	unsigned int i;
	int a;

	for (a = 0; a < NR_FA; a++) {
		for (i = 0; i < NR_FILES; i++) {
			snprintf(fa_path[a][i], sizeof(fa_path[a][i]), DBGFS "/%s/%s",
				 fa_name[a], fa_file[i]);
			fa_have[a][i] = get_str(fa_path[a][i], fa_saved[a][i],
						sizeof(fa_saved[a][i]));
		}
		fa_present[a] = fa_have[a][0];
	}
	snprintf(dev_mif, sizeof(dev_mif), "/sys/dev/block/%u:%u/make-it-fail",
		 major((dev_t)aiot.rdev), minor((dev_t)aiot.rdev));
	if (access(dev_mif, W_OK))
		dev_mif[0] = 0;
	task_mif = open("/proc/thread-self/make-it-fail", O_WRONLY | O_CLOEXEC);

	/* a memory-backed configfs null_blk: bad blocks */
	if (!aiot.nodata) {
		const char *base = strrchr(aiot.dev, '/');

		snprintf(bb_path, sizeof(bb_path), "/sys/kernel/config/nullb/%s/badblocks",
			 base ? base + 1 : aiot.dev);
		if (access(bb_path, W_OK))
			bb_path[0] = 0;
		snprintf(bb_clear, sizeof(bb_clear), "-0-%llu",
			 (unsigned long long)(aiot.size / 512 - 1));
	}

	atexit(restore);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], on_signal);
}

/* Arm attribute @a: "times" TIMES, no messages (verbose 2 dumps stacks). */
static void fa_arm(int a, int probability, int interval, bool task_filter)
{
	char v[32];

	fa_set(a, "probability", "0");
	fa_set(a, "verbose", "0");
	fa_set(a, "space", "0");
	snprintf(v, sizeof(v), "%d", TIMES);
	fa_set(a, "times", v);
	snprintf(v, sizeof(v), "%d", interval);
	fa_set(a, "interval", v);
	fa_set(a, "task-filter", task_filter ? "Y" : "N");
	/* the default Y would spare every GFP_KERNEL allocation */
	fa_set(a, "ignore-gfp-wait", "N");
	fa_set(a, "ignore-gfp-highmem", "N");
	fa_set(a, "min-order", "0");
	fa_set(a, "cache-filter", "N");
	CHECK(fa_get(a, "times") == TIMES, "%s/times reads %lld", fa_name[a],
	      fa_get(a, "times"));
	snprintf(v, sizeof(v), "%d", probability);
	fa_set(a, "probability", v);
}

/* Disarm @a; return (and add up) the faults it injected meanwhile. */
static long long fa_disarm(int a)
{
	long long left;

	fa_set(a, "probability", "0");
	left = fa_get(a, "times");
	CHECK(left >= 0 && left <= TIMES, "%s/times reads %lld", fa_name[a], left);
	if (left < 0)
		return 0;
	fa_injected[a] += TIMES - left;
	return TIMES - left;
}

static void dev_fail(bool on)
{
	int ret = put(dev_mif, on ? "1" : "0");

	CHECK(ret == 0, "%s: %s", dev_mif, aiot_rstr(ret));
}

/* -------------------------------------------------------------- counters */

struct kst {
	long long submitted, completed, errors;
};

static struct kst kst_now(void)
{
	struct kst k = {
		aiot_stat("iocbs_submitted"), aiot_stat("iocbs_completed"),
		aiot_stat("errors"),
	};
	return k;
}

/*
 * In a kvec mode every accepted iocb went through the kvec path and each
 * failed event is one error there; in the stock mode nothing went there.
 */
static void kst_check(const char *phase, struct kst k0, int accepted, int failed)
{
	struct kst k = kst_now();
	long long ws = aiot_mode_is_stock() ? 0 : accepted;
	long long we = aiot_mode_is_stock() ? 0 : failed;

	if (k0.submitted < 0)
		return;
	fprintf(stderr, "t-fault: %s: kvec iocbs +%lld completed +%lld errors +%lld; accepted %d failed %d\n",
		phase, k.submitted - k0.submitted, k.completed - k0.completed,
		k.errors - k0.errors, accepted, failed);
	CHECK(k.submitted - k0.submitted == ws, "%s: kvec iocbs_submitted +%lld, want %lld",
	      phase, k.submitted - k0.submitted, ws);
	CHECK(k.completed - k0.completed == ws, "%s: kvec iocbs_completed +%lld, want %lld",
	      phase, k.completed - k0.completed, ws);
	CHECK(k.errors - k0.errors == we, "%s: kvec errors +%lld, want %lld (failed events)",
	      phase, k.errors - k0.errors, we);
}

/* ---------------------------------------------------------- data checks */

/* What a block may hold: the pattern of (seed, device offset + shift), or one byte. */
struct want {
	int byte;		/* >= 0: every byte is this */
	uint64_t seed;
	int64_t shift;
};

static uint8_t *vbuf, *vtmp;	/* device read-back and expected data, 4 MiB each */

static struct want pat(uint64_t seed, int64_t shift)
{
	struct want w = { -1, seed, shift };

	return w;
}

static struct want byte_of(uint8_t b)
{
	struct want w = { b, 0, 0 };

	return w;
}

static bool matches(const uint8_t *p, size_t n, uint64_t devoff, const struct want *w)
{
	size_t i;

	if (w->byte >= 0) {
		for (i = 0; i < n; i++)
			if (p[i] != w->byte)
				return false;
		return true;
	}
	aiot_fill(vtmp, n, w->seed, (uint64_t)((int64_t)devoff + w->shift));
	return !memcmp(p, vtmp, n);
}

/*
 * Each logical block of got[0..len), which stands for device offset @devoff,
 * must be wholly one of w[0..nw); a block that is none is reported.
 */
static bool blocks_are(const char *what, const uint8_t *got, size_t len,
		       uint64_t devoff, const struct want *w, int nw)
{
	size_t pos;
	int k;

	if (aiot.nodata || !len)
		return true;
	if (matches(got, len, devoff, &w[0]))
		return true;
	for (pos = 0; pos < len; pos += aiot.lbs) {
		size_t n = len - pos < aiot.lbs ? len - pos : aiot.lbs;

		for (k = 0; k < nw; k++)
			if (matches(got + pos, n, devoff + pos, &w[k]))
				break;
		if (k == nw) {
			CHECK(k < nw, "%s: block at dev off %llu (byte %zu of %zu) holds none of the %d allowed contents",
			      what, (unsigned long long)(devoff + pos), pos, len, nw);
			return false;
		}
	}
	return true;
}

static void dev_read(uint64_t off, size_t len)
{
	ssize_t n = pread(fd, vbuf, len, (off_t)off);

	if (n != (ssize_t)len)
		aiot_die("pread %zu at %llu: %zd (%s)", len, (unsigned long long)off, n,
			 n < 0 ? strerror(errno) : "short");
}

/* pwrite(2) the content @w describes over [off, off + len). */
static void dev_write(uint64_t off, size_t len, struct want w)
{
	ssize_t n;

	if (w.byte >= 0)
		memset(vbuf, w.byte, len);
	else
		aiot_fill(vbuf, len, w.seed, (uint64_t)((int64_t)off + w.shift));
	n = pwrite(fd, vbuf, len, (off_t)off);
	if (n != (ssize_t)len)
		aiot_die("pwrite %zu at %llu: %zd (%s)", len, (unsigned long long)off, n,
			 n < 0 ? strerror(errno) : "short");
}

/* ------------------------------------------------------------------ ops */

/* A write slot: [off, off + len) holds cur. */
struct slot {
	uint64_t off;
	size_t len;
	struct want cur;
};

struct op {
	const char *tag;
	bool write;
	bool multi;		/* spans more than BIO_MAX_VECS pages */
	uint64_t off;
	size_t len;
	uint8_t *buf;		/* plain I/O, or the start of the segments' span */
	size_t span;		/* bytes of buf the op owns */
	struct iovec *iov;	/* vectored: iov[0..niov) */
	int niov;
	struct slot *slot;	/* writes */
	struct want new;	/* writes: what a completed one leaves */
	int submit;		/* io_submit: 1 or -errno */
	long res;		/* the event's res */
};

static struct iocb cbs[MAXOPS];
static struct op ops[MAXOPS];
static struct iovec iovs[MAXOPS][MAXSEGS];
static int nops;
static uint8_t *arena;
static size_t arena_used;

static uint8_t *arena_get(size_t len)
{
	uint8_t *p = arena + arena_used;

	len = aiot_round_up(len, AIOT_PAGE);
	if (arena_used + len > ARENA)
		aiot_die("arena exhausted");
	arena_used += len;
	return p;
}

static unsigned long span_pages(const struct op *o)
{
	unsigned long n = 0;
	int i;

	if (!o->iov)
		return aiot_round_up(((uintptr_t)o->buf & (AIOT_PAGE - 1)) + o->len,
				     AIOT_PAGE) / AIOT_PAGE;
	for (i = 0; i < o->niov; i++) {
		uintptr_t b = (uintptr_t)o->iov[i].iov_base;

		n += (aiot_round_up(b + o->iov[i].iov_len, AIOT_PAGE) -
		      aiot_round_down(b, AIOT_PAGE)) / AIOT_PAGE;
	}
	return n;
}

/* Fill the write's buffer (or segments) with its new content, poison a read's. */
static void op_fill(struct op *o)
{
	uint64_t d = o->off;
	int i;

	if (!o->write) {
		memset(o->buf, AIOT_POISON, o->span);
		return;
	}
	if (!o->iov) {
		aiot_fill(o->buf, o->len, o->new.seed, (uint64_t)((int64_t)d + o->new.shift));
		return;
	}
	memset(o->buf, AIOT_POISON, o->span);
	for (i = 0; i < o->niov; i++) {
		aiot_fill(o->iov[i].iov_base, o->iov[i].iov_len, o->new.seed,
			  (uint64_t)((int64_t)d + o->new.shift));
		d += o->iov[i].iov_len;
	}
}

static struct op *op_add(const char *tag, bool write, uint64_t off, size_t len)
{
	struct op *o = &ops[nops++];

	if (nops > MAXOPS)
		aiot_die("too many ops");
	memset(o, 0, sizeof(*o));
	o->tag = tag;
	o->write = write;
	o->off = off;
	o->len = len;
	return o;
}

/* The part common to every op kind: a write gets a fresh seed, a read poison. */
static struct op *op_ready(struct op *o, bool write, struct slot *s)
{
	o->slot = s;
	if (write)
		o->new = pat(next_seed++, 0);
	o->multi = span_pages(o) > 256;
	op_fill(o);
	return o;
}

/* Plain op with an arena buffer. */
static struct op *op_plain(const char *tag, bool write, uint64_t off, size_t len,
			   struct slot *s)
{
	struct op *o = op_add(tag, write, off, len);

	o->buf = arena_get(len);
	o->span = len;
	return op_ready(o, write, s);
}

/* Vectored op: @n segments of @seglen, one every @stride bytes of its span. */
static struct op *op_vec(const char *tag, bool write, uint64_t off, int n, size_t seglen,
			 size_t stride, struct slot *s)
{
	struct op *o = op_add(tag, write, off, (size_t)n * seglen);
	int i;

	o->span = (size_t)(n - 1) * stride + seglen;
	o->buf = arena_get(o->span);
	o->iov = iovs[o - ops];
	o->niov = n;
	for (i = 0; i < n; i++) {
		o->iov[i].iov_base = o->buf + (size_t)i * stride;
		o->iov[i].iov_len = seglen;
	}
	return op_ready(o, write, s);
}

static void op_prep(int i)
{
	struct op *o = &ops[i];

	if (o->iov) {
		if (o->write)
			aiot_prep_pwritev(&cbs[i], fd, o->iov, o->niov, (long long)o->off);
		else
			aiot_prep_preadv(&cbs[i], fd, o->iov, o->niov, (long long)o->off);
	} else {
		aiot_prep_rw(&cbs[i], o->write, fd, o->buf, o->len, (long long)o->off, 0);
	}
	cbs[i].data = (void *)(uintptr_t)(i + 1);
}

struct tally {
	int attempts, accepted, failed;	/* failed: events with res < 0 */
	int full, shorts, eio, efault, enomem, other;
	int sub_eagain, sub_enomem, sub_other;
};

/*
 * Submit ops[0..nops), one io_submit each (this task's make-it-fail set
 * around it when @taskfail), and collect every event: exactly one for each
 * accepted iocb, none for a refused one.
 */
static void run_ops(struct tally *t, bool taskfail)
{
	unsigned char seen[MAXOPS] = { 0 };
	struct io_event ev[MAXOPS];
	int i, got, acc = 0;

	for (i = 0; i < nops; i++) {
		struct iocb *p = &cbs[i];

		op_prep(i);
		if (taskfail)
			task_fail(true);
		ops[i].submit = aiot_submit(ctx, 1, &p);
		if (taskfail)
			task_fail(false);
		ops[i].res = 0;
		t->attempts++;
		if (ops[i].submit == 1) {
			acc++;
			continue;
		}
		CHECK(ops[i].submit < 0, "io_submit of one returned %d", ops[i].submit);
		if (ops[i].submit == -EAGAIN)
			t->sub_eagain++;
		else if (ops[i].submit == -ENOMEM)
			t->sub_enomem++;
		else
			t->sub_other++;
	}
	t->accepted += acc;
	got = aiot_reap(ctx, acc, ev);
	for (i = 0; i < got; i++) {
		int idx = aiot_event_iocb(&ev[i], cbs, nops, seen);

		if (idx < 0)
			continue;
		CHECK(ops[idx].submit == 1, "%s: event for a refused iocb", ops[idx].tag);
		CHECK(ev[i].data == (void *)(uintptr_t)(idx + 1), "%s: event data", ops[idx].tag);
		CHECK(ev[i].res2 == 0, "%s: res2 %ld", ops[idx].tag, (long)ev[i].res2);
		ops[idx].res = (long)ev[i].res;
	}
	CHECK(aiot_reap_extra(ctx, 0) == 0, "more events than accepted iocbs");
	for (i = 0; i < nops; i++) {
		long res = ops[i].res;

		if (ops[i].submit != 1)
			continue;
		if (!CHECK(seen[i], "%s: no event", ops[i].tag)) {
			ops[i].res = -ETIMEDOUT;
			continue;
		}
		if (res < 0)
			t->failed++;
		if (res == (long)ops[i].len)
			t->full++;
		else if (res > 0)
			t->shorts++;
		else if (res == -EIO)
			t->eio++;
		else if (res == -EFAULT)
			t->efault++;
		else if (res == -ENOMEM)
			t->enomem++;
		else
			t->other++;
	}
}

static void tally_print(const char *phase, const struct tally *t)
{
	fprintf(stderr, "t-fault: %s [%s]: attempts %d accepted %d: full %d short %d EIO %d EFAULT %d ENOMEM %d other %d; io_submit EAGAIN %d ENOMEM %d other %d\n",
		phase, aiot.mode_name, t->attempts, t->accepted, t->full, t->shorts, t->eio,
		t->efault, t->enomem, t->other, t->sub_eagain, t->sub_enomem, t->sub_other);
}

/* End of a phase: its tally, the kvec counters against it, pins balanced. */
static void phase_close(const char *phase, const struct tally *t, struct kst k0,
			long long pins0)
{
	tally_print(phase, t);
	kst_check(phase, k0, t->accepted, t->failed);
	aiot_pins_settle(phase, pins0);
}

/* Did the op transfer nothing, by its outcome? */
static bool op_nothing(const struct op *o, bool eio_nothing)
{
	return o->submit != 1 || o->res == -EFAULT || o->res == -ENOMEM ||
	       (o->res == -EIO && eio_nothing);
}

/*
 * Check a write's slot on the device, then leave the slot in a known state:
 * the new content if the write completed, else the old one written back.
 */
static void check_write(struct op *o, bool eio_nothing)
{
	struct slot *s = o->slot;
	struct want w[2] = { o->new, s->cur };
	char what[96];

	if (aiot.nodata)
		return;
	snprintf(what, sizeof(what), "%s (%s) device", o->tag,
		 o->submit == 1 ? aiot_rstr(o->res) : aiot_rstr(o->submit));
	dev_read(s->off, s->len);
	if (o->submit == 1 && o->res == (long)o->len) {
		blocks_are(what, vbuf, s->len, s->off, &w[0], 1);
		s->cur = o->new;
		return;
	}
	if (op_nothing(o, eio_nothing)) {
		blocks_are(what, vbuf, s->len, s->off, &w[1], 1);
		return;
	}
	if (o->res > 0) {
		/* short: the prefix written, the rest not */
		blocks_are(what, vbuf, (size_t)o->res, s->off, &w[0], 1);
		blocks_are(what, vbuf + o->res, s->len - (size_t)o->res,
			   s->off + (size_t)o->res, &w[1], 1);
	} else {
		blocks_are(what, vbuf, s->len, s->off, w, 2);
	}
	dev_write(s->off, s->len, s->cur);
}

/* A read's buffer: data where it completed, poison where it did nothing. */
static void check_read(const struct op *o, uint64_t seed, bool eio_nothing)
{
	struct want w[2] = { pat(seed, 0), byte_of(AIOT_POISON) };
	uint64_t d = o->off;
	size_t done = 0, covered = 0;
	int nw, i;
	char what[96];

	if (aiot.nodata)
		return;
	snprintf(what, sizeof(what), "%s (%s) buffer", o->tag,
		 o->submit == 1 ? aiot_rstr(o->res) : aiot_rstr(o->submit));
	if (o->submit == 1 && o->res == (long)o->len) {
		done = o->len;
		nw = 1;
	} else if (op_nothing(o, eio_nothing)) {
		w[0] = w[1];
		nw = 1;
	} else if (o->res > 0) {
		done = (size_t)o->res;
		nw = 0;
	} else {
		nw = 2;
	}
	if (!o->iov) {
		if (nw) {
			blocks_are(what, o->buf, o->len, d, w, nw);
		} else {
			blocks_are(what, o->buf, done, d, &w[0], 1);
			blocks_are(what, o->buf + done, o->len - done, d + done, &w[1], 1);
		}
		return;
	}
	for (i = 0; i < o->niov; i++) {
		const uint8_t *b = o->iov[i].iov_base;
		size_t l = o->iov[i].iov_len;

		if (nw) {
			blocks_are(what, b, l, d, w, nw);
		} else {
			size_t in = done > covered ? (done - covered < l ? done - covered : l) : 0;

			blocks_are(what, b, in, d, &w[0], 1);
			blocks_are(what, b + in, l - in, d + in, &w[1], 1);
		}
		covered += l;
		d += l;
		/* the bytes between segments are not the I/O's */
		if (i + 1 < o->niov)
			aiot_verify_byte(what, b + l, (size_t)((const uint8_t *)o->iov[i + 1].iov_base - b) - l,
					 AIOT_POISON);
	}
}

static void check_ops(uint64_t read_seed, bool eio_nothing)
{
	int i;

	for (i = 0; i < nops; i++) {
		if (ops[i].write)
			check_write(&ops[i], eio_nothing);
		else
			check_read(&ops[i], read_seed, eio_nothing);
	}
}

static void batch_reset(void)
{
	nops = 0;
	arena_used = 0;
}

/* ------------------------------------------------------ a: block errors */

static struct slot aslot[A_NSLOTS];
static const uint64_t a_read_seed = 61000, b_read_seed = 62000;

static void a_init(void)
{
	int i;

	for (i = 0; i < A_NSLOTS; i++) {
		aslot[i].off = A_W + (uint64_t)i * A_SLOT;
		aslot[i].len = A_SLOT;
		aslot[i].cur = pat(60000 + i, 0);
		aiot_sync_write_pattern(fd, aslot[i].off, A_SLOT, 60000 + i);
	}
	aiot_sync_write_pattern(fd, A_R, 4 * MIB, a_read_seed);
}

/* Slot @i as used by one kind of write, which always covers all of it. */
static struct slot *aslot_len(int i, size_t len)
{
	aslot[i].len = len;	/* its content description holds for any prefix */
	return &aslot[i];
}

/* Per tag, was every outcome the same?  "n=.. all=EIO" or "mixed". */
struct tagsum {
	const char *tag;
	int n;
	long res;
	bool mixed;
};

static void tagsum_add(struct tagsum *ts, int nts, const struct op *o)
{
	long r = o->submit == 1 ? o->res : o->submit;
	int i;

	for (i = 0; i < nts; i++) {
		if (ts[i].tag == o->tag || !ts[i].tag)
			break;
	}
	if (i == nts)
		return;
	if (!ts[i].tag) {
		ts[i].tag = o->tag;
		ts[i].res = r;
	}
	ts[i].n++;
	if (r != ts[i].res)
		ts[i].mixed = true;
}

/* Every op of the batch just run must have failed whole, with -EIO. */
static void expect_all_eio(const char *phase, struct tagsum *ts, int nts)
{
	int i;

	for (i = 0; i < nops; i++) {
		tagsum_add(ts, nts, &ops[i]);
		CHECK(ops[i].submit == 1 && ops[i].res == -EIO,
		      "%s %s: submit %s res %s, want EIO", phase, ops[i].tag,
		      aiot_rstr(ops[i].submit), aiot_rstr(ops[i].res));
	}
}

/* End a phase of bio failures (@how: the rate), one R line per op kind. */
static void eio_phase_close(const char *phase, const char *how,
			    const struct tagsum *ts, int nts,
			    const struct tally *t, struct kst k0, long long pins0)
{
	long long inj;
	int i;

	dev_fail(false);
	inj = fa_disarm(FA_MKREQ);
	for (i = 0; i < nts && ts[i].tag; i++)
		aiot_R("%s %s %s n=%d res=%s", phase, ts[i].tag, how, ts[i].n,
		       ts[i].mixed ? "mixed" : aiot_rstr(ts[i].res));
	fprintf(stderr, "t-fault: %s: %lld bio failures injected\n", phase, inj);
	phase_close(phase, t, k0, pins0);
}

static void phase_a1(void)
{
	const int rounds = 6;
	struct tagsum ts[MAXOPS] = { { 0 } };
	struct tally t = { 0 };
	struct kst k0 = kst_now();
	long long pins0 = aiot_pins_out();
	int r;

	fa_arm(FA_MKREQ, 100, 1, false);
	dev_fail(true);
	for (r = 0; r < rounds; r++) {
		batch_reset();
		op_plain("read-4k", false, A_R, 4096, NULL);
		op_plain("write-4k", true, aslot[0].off, 4096, aslot_len(0, 4096));
		op_plain("read-64k", false, A_R, 64 * AIOT_KIB, NULL);
		op_plain("write-64k", true, aslot[1].off, 64 * AIOT_KIB, aslot_len(1, 64 * AIOT_KIB));
		op_vec("readv-3x8k", false, A_R, 3, 8192, 16384, NULL);
		op_vec("writev-3x8k", true, aslot[2].off, 3, 8192, 16384, aslot_len(2, 24576));
		op_plain("read-1m", false, A_R, MIB, NULL);
		op_plain("write-1m", true, aslot[3].off, MIB, aslot_len(3, MIB));
		op_plain("read-4m", false, A_R, 4 * MIB, NULL);
		op_plain("write-4m", true, aslot[4].off, 4 * MIB, aslot_len(4, 4 * MIB));
		run_ops(&t, false);
		expect_all_eio("a1", ts, MAXOPS);
		/* every bio failed before moving data: nothing transferred */
		dev_fail(false);
		check_ops(a_read_seed, true);
		dev_fail(true);
	}
	eio_phase_close("a1", "p=100", ts, MAXOPS, &t, k0, pins0);
}

/*
 * 1024 segments of 2 KiB, each at the start of its own page: no two are
 * physically contiguous, so no path merges them into one bvec and every
 * path needs at least 4 bios (BIO_MAX_VECS each) in a row.
 */
static void phase_a2(void)
{
	const int rounds = 4;
	const size_t seg = 2048;
	struct tagsum ts[2] = { { 0 } };
	struct tally t = { 0 };
	struct kst k0;
	long long pins0;
	int r;

	if (aiot.lbs > seg || (seg & aiot.dma_mask)) {
		aiot_R("a2 not-run (lbs %u)", aiot.lbs);
		return;
	}
	k0 = kst_now();
	pins0 = aiot_pins_out();
	fa_arm(FA_MKREQ, 100, 3, false);
	dev_fail(true);
	for (r = 0; r < rounds; r++) {
		batch_reset();
		op_vec("writev-1024x2k", true, aslot[5].off, MAXSEGS, seg, AIOT_PAGE,
		       aslot_len(5, MAXSEGS * seg));
		op_vec("readv-1024x2k", false, A_R, MAXSEGS, seg, AIOT_PAGE, NULL);
		run_ops(&t, false);
		expect_all_eio("a2", ts, 2);
		dev_fail(false);
		check_ops(a_read_seed, false);
		dev_fail(true);
	}
	eio_phase_close("a2", "interval=3", ts, 2, &t, k0, pins0);
}

/* Every 5th bio fails: whether a 4 MiB I/O does depends on the path's bios. */
static void phase_a3(void)
{
	const int rounds = 8;
	struct tally t = { 0 };
	struct kst k0 = kst_now();
	long long pins0 = aiot_pins_out(), inj;
	int r, i, ok = 0;

	fa_arm(FA_MKREQ, 100, 5, false);
	dev_fail(true);
	for (r = 0; r < rounds; r++) {
		batch_reset();
		op_plain("a3 write-4m", true, aslot[6].off, 4 * MIB, aslot_len(6, 4 * MIB));
		op_plain("a3 read-4m", false, A_R, 4 * MIB, NULL);
		run_ops(&t, false);
		for (i = 0; i < nops; i++)
			ok += CHECK(ops[i].submit == 1 &&
				    (ops[i].res == (long)ops[i].len || ops[i].res == -EIO),
				    "%s: submit %s res %s, want full or EIO", ops[i].tag,
				    aiot_rstr(ops[i].submit), aiot_rstr(ops[i].res));
		dev_fail(false);
		check_ops(a_read_seed, false);
		dev_fail(true);
	}
	dev_fail(false);
	inj = fa_disarm(FA_MKREQ);
	aiot_R("a3 mbio-4m interval=5 ios=%d completed-once=%d full-or-EIO=%d",
	       t.attempts, t.accepted, ok);
	fprintf(stderr, "t-fault: a3: %lld bio failures injected\n", inj);
	phase_close("a3", &t, k0, pins0);
}

static void bb_set(char sign, uint64_t off, size_t len)
{
	char v[64];
	int ret;

	snprintf(v, sizeof(v), "%c%llu-%llu", sign, (unsigned long long)(off / 512),
		 (unsigned long long)((off + len) / 512 - 1));
	ret = put(bb_path, v);
	CHECK(ret == 0, "badblocks %s: %s", v, aiot_rstr(ret));
}

/*
 * Blocks of got (device offset devoff, len) against a bad range [bs, be): in
 * it @bad, farther than @reach from it @far, in between either.
 */
static void bb_check(const char *what, const uint8_t *got, size_t len, uint64_t devoff,
		     uint64_t bs, uint64_t be, uint64_t reach, struct want bad,
		     struct want far)
{
	struct want both[2] = { far, bad };
	size_t pos;

	for (pos = 0; pos < len; pos += aiot.lbs) {
		uint64_t b0 = devoff + pos, b1 = b0 + aiot.lbs;

		if (b0 >= bs && b1 <= be)
			blocks_are(what, got + pos, aiot.lbs, b0, &bad, 1);
		else if (b0 >= be + reach || b1 + reach <= bs)
			blocks_are(what, got + pos, aiot.lbs, b0, &far, 1);
		else
			blocks_are(what, got + pos, aiot.lbs, b0, both, 2);
	}
}

static long long bb_faults;

/* null_blk bad blocks: one 4 KiB bad range in the write slot and one in the read area. */
static void phase_a4(void)
{
	const int rounds = 6;
	const size_t blen = 4096;
	struct kst k0;
	struct tally t = { 0 };
	long long pins0, maxkb = aiot_queue_attr("max_sectors_kb");
	uint64_t reach = maxkb > 0 ? (uint64_t)maxkb * 1024 : 4 * MIB;
	int r, i;

	if (!bb_path[0]) {
		aiot_R("a4 badblocks not-run (no configfs null_blk)");
		return;
	}
	k0 = kst_now();
	pins0 = aiot_pins_out();
	for (r = 0; r < rounds; r++) {
		uint64_t wbad = aslot[7].off + aiot_round_down((uint64_t)r * 700 * AIOT_KIB + 12288, blen);
		uint64_t rbad = A_R + aiot_round_down((uint64_t)r * 650 * AIOT_KIB + 40960, blen);
		struct op *w, *rd;

		batch_reset();
		w = op_plain("a4 write-4m", true, aslot[7].off, 4 * MIB, aslot_len(7, 4 * MIB));
		rd = op_plain("a4 read-4m", false, A_R, 4 * MIB, NULL);
		op_plain("a4 read-64k-bad", false, rbad - 8192, 64 * AIOT_KIB, NULL);
		/* far from anything else in flight, so no request can merge it in */
		op_plain("a4 read-64k-good", false, B_R, 64 * AIOT_KIB, NULL);
		bb_set('+', wbad, blen);
		bb_set('+', rbad, blen);
		run_ops(&t, false);
		bb_set('-', wbad, blen);
		bb_set('-', rbad, blen);
		for (i = 0; i < nops; i++) {
			long want = i == 3 ? (long)ops[i].len : -EIO;

			aiot_R("a4 round=%d %s res=%s", r, ops[i].tag,
			       ops[i].submit == 1 ? aiot_rstr(ops[i].res) : aiot_rstr(ops[i].submit));
			CHECK(ops[i].submit == 1 && ops[i].res == want, "%s: submit %s res %s, want %s",
			      ops[i].tag, aiot_rstr(ops[i].submit), aiot_rstr(ops[i].res),
			      aiot_rstr(want));
			bb_faults += ops[i].res == -EIO;
		}
		if (!aiot.nodata) {
			dev_read(w->off, w->len);
			bb_check("a4 write-4m device", vbuf, w->len, w->off, wbad, wbad + blen, reach,
				 w->slot->cur, w->new);
			dev_write(w->off, w->len, w->slot->cur);
			bb_check("a4 read-4m buffer", rd->buf, rd->len, rd->off, rbad, rbad + blen, reach,
				 byte_of(AIOT_POISON), pat(a_read_seed, 0));
			bb_check("a4 read-64k-bad buffer", ops[2].buf, ops[2].len, ops[2].off, rbad,
				 rbad + blen, reach, byte_of(AIOT_POISON), pat(a_read_seed, 0));
			check_read(&ops[3], b_read_seed, false);
		}
	}
	fprintf(stderr, "t-fault: a4: request reach %llu bytes\n", (unsigned long long)reach);
	phase_close("a4", &t, k0, pins0);
}

/* ------------------------------------------------- b: allocation failures */

static struct slot bslot[3];

static void b_init(void)
{
	static const size_t len[3] = { 256 * AIOT_KIB, 1920 * AIOT_KIB, 16 * AIOT_KIB };
	int i;

	for (i = 0; i < 3; i++) {
		bslot[i].off = B_W + (uint64_t)i * 2 * MIB;
		bslot[i].len = len[i];
		bslot[i].cur = pat(66000 + i, 0);
		aiot_sync_write_pattern(fd, bslot[i].off, len[i], 66000 + i);
	}
	aiot_sync_write_pattern(fd, B_R, 2 * MIB, b_read_seed);
}

/*
 * The six kinds, each its own io_submit with make-it-fail set: writev/readv
 * of 64 pages (a 1 KiB iovec copy, a 2 KiB kvec array), 1920 KiB plain (a
 * 3.8 KiB kvec array, two bios), 16 KiB (inline pages).
 */
static void b_batch(void)
{
	batch_reset();
	op_vec("b writev-64x4k", true, bslot[0].off, 64, 4096, 4096, &bslot[0]);
	op_vec("b readv-64x4k", false, B_R, 64, 4096, 4096, NULL);
	op_plain("b write-1920k", true, bslot[1].off, 1920 * AIOT_KIB, &bslot[1]);
	op_plain("b read-1920k", false, B_R, 1920 * AIOT_KIB, NULL);
	op_plain("b write-16k", true, bslot[2].off, 16 * AIOT_KIB, &bslot[2]);
	op_plain("b read-16k", false, B_R + 64 * AIOT_KIB, 16 * AIOT_KIB, NULL);
}

static void phase_b(const char *name, int slab_p, int page_p, int rounds)
{
	struct tally t = { 0 };
	struct kst k0 = kst_now();
	long long pins0 = aiot_pins_out(), islab = 0, ipage = 0;
	int r, i, resolved = 0;

	if ((slab_p && !fa_present[FA_SLAB]) || (page_p && !fa_present[FA_PAGE]) ||
	    task_mif < 0) {
		aiot_R("%s not-run (no such fault attribute)", name);
		return;
	}
	if (slab_p)
		fa_arm(FA_SLAB, slab_p, 1, true);
	if (page_p)
		fa_arm(FA_PAGE, page_p, 1, true);
	for (r = 0; r < rounds; r++) {
		b_batch();
		run_ops(&t, true);
		for (i = 0; i < nops; i++) {
			const struct op *o = &ops[i];

			if (o->submit != 1) {
				resolved++;
				CHECK(o->submit == -EAGAIN || o->submit == -ENOMEM,
				      "%s %s: io_submit %s", name, o->tag, aiot_rstr(o->submit));
				continue;
			}
			resolved += o->res != -ETIMEDOUT;
			CHECK(o->res == (long)o->len || o->res == -ENOMEM || o->res == -EFAULT ||
			      o->res == -EIO, "%s %s: res %s", name, o->tag, aiot_rstr(o->res));
		}
		check_ops(b_read_seed, false);
	}
	if (slab_p)
		islab = fa_disarm(FA_SLAB);
	if (page_p)
		ipage = fa_disarm(FA_PAGE);
	aiot_R("%s attempts=%d resolved-once=%d", name, t.attempts, resolved);
	fprintf(stderr, "t-fault: %s: failslab %lld, fail_page_alloc %lld injected\n", name,
		islab, ipage);
	phase_close(name, &t, k0, pins0);
}

/* --------------------------------------------------------- c: pin races */

static uint8_t *rb;			/* RB_LEN, remapped under the I/O */
static volatile int racer_stop;
static long racer_cycles;
static const uint64_t c_buf_seed = 63000;

static uint64_t xs(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * Take a random piece of rb away (munmap, PROT_NONE or PROT_READ) and put
 * it back as a new mapping that already holds rb's content: the I/O thread
 * never touches rb, so any byte it sends is the pattern of its rb offset.
 */
static void *racer(void *arg)
{
	uint64_t s = 0x9e3779b97f4a7c15ULL;
	const size_t npg = RB_LEN / AIOT_PAGE;

	(void)arg;
	while (!racer_stop) {
		size_t pg = xs(&s) % npg, n = 1 + xs(&s) % 64, len;
		uint8_t *dst, *tmp;

		if (pg + n > npg)
			n = npg - pg;
		len = n * AIOT_PAGE;
		dst = rb + pg * AIOT_PAGE;
		/* mapped before the hole exists, so it cannot land in it */
		tmp = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (tmp == MAP_FAILED)
			aiot_die("racer mmap: %s", strerror(errno));
		aiot_fill(tmp, len, c_buf_seed, pg * AIOT_PAGE);
		switch (xs(&s) % 4) {
		case 0:
		case 1:
			if (munmap(dst, len))
				aiot_die("racer munmap: %s", strerror(errno));
			break;
		case 2:
			if (mprotect(dst, len, PROT_NONE))
				aiot_die("racer mprotect: %s", strerror(errno));
			break;
		default:
			if (mprotect(dst, len, PROT_READ))	/* reads into it fail */
				aiot_die("racer mprotect: %s", strerror(errno));
			break;
		}
		sched_yield();
		if (mremap(tmp, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, dst) != dst)
			aiot_die("racer mremap: %s", strerror(errno));
		racer_cycles++;
	}
	return NULL;
}

static struct slot cslot[3];
static const uint64_t c_read_seed = 64000;
static long long pin_faults;

static struct op *c_op(const char *tag, bool write, uint64_t off, size_t len,
		       struct slot *s, uint64_t *rnd)
{
	struct op *o = op_add(tag, write, off, len);
	size_t maxpg = (RB_LEN / 2 - len) / AIOT_PAGE;
	size_t bo = (xs(rnd) % (maxpg + 1)) * AIOT_PAGE + (write ? 0 : RB_LEN / 2);

	o->buf = rb + bo;
	o->span = len;
	o->slot = s;
	/* a write sends rb's pattern: device offset d gets rb offset d - off + bo */
	o->new = pat(c_buf_seed, (int64_t)bo - (int64_t)off);
	o->multi = span_pages(o) > 256;
	return o;
}

static void phase_c(void)
{
	const int rounds = 40;
	struct tally t = { 0 };
	struct kst k0 = kst_now();
	long long pins0 = aiot_pins_out();
	uint64_t rnd = 0x2545f4914f6cdd1dULL;
	pthread_t th;
	int r, i, allowed = 0, ret;

	for (i = 0; i < 3; i++) {
		cslot[i].off = C_W + (uint64_t)i * 2 * MIB;
		cslot[i].cur = pat(65000 + i, 0);
	}
	cslot[0].len = 64 * AIOT_KIB;
	cslot[1].len = MIB;
	cslot[2].len = MIB + 64 * AIOT_KIB;
	for (i = 0; i < 3; i++)
		aiot_sync_write_pattern(fd, cslot[i].off, cslot[i].len, 65000 + i);
	aiot_sync_write_pattern(fd, C_R, 2 * MIB, c_read_seed);
	aiot_fill(rb, RB_LEN, c_buf_seed, 0);

	/* from here until the join this thread maps nothing: rb has holes */
	racer_stop = 0;
	ret = pthread_create(&th, NULL, racer, NULL);
	if (ret)
		aiot_die("pthread_create: %s", strerror(ret));
	for (r = 0; r < rounds; r++) {
		batch_reset();
		c_op("c write-64k", true, cslot[0].off, cslot[0].len, &cslot[0], &rnd);
		c_op("c read-64k", false, C_R, 64 * AIOT_KIB, NULL, &rnd);
		c_op("c write-1m", true, cslot[1].off, cslot[1].len, &cslot[1], &rnd);
		c_op("c read-1m", false, C_R, MIB, NULL, &rnd);
		c_op("c write-1m64k", true, cslot[2].off, cslot[2].len, &cslot[2], &rnd);
		c_op("c read-1m64k", false, C_R, MIB + 64 * AIOT_KIB, NULL, &rnd);
		run_ops(&t, false);
		for (i = 0; i < nops; i++) {
			const struct op *o = &ops[i];
			bool ok;

			if (o->submit != 1)
				continue;
			if (o->multi)
				ok = o->res == (long)o->len || o->res == -EIO;
			else
				ok = o->res == (long)o->len || o->res == -EFAULT ||
				     (o->res > 0 && o->res < (long)o->len &&
				      !(o->res % aiot.lbs));
			allowed += CHECK(ok, "%s (%s bio): res %s", o->tag,
					 o->multi ? "multi" : "single", aiot_rstr(o->res));
			pin_faults += o->res != (long)o->len;
		}
		/* only the writes: rb is not safe to read while the racer runs */
		for (i = 0; i < nops; i++)
			if (ops[i].write)
				check_write(&ops[i], false);
	}
	racer_stop = 1;
	pthread_join(th, NULL);
	CHECK(t.attempts == t.accepted, "pin race: %d of %d submissions refused",
	      t.attempts - t.accepted, t.attempts);
	aiot_R("c pinrace ios=%d completed-once=%d res-allowed=%d", t.attempts, t.accepted,
	       allowed);
	fprintf(stderr, "t-fault: c: %ld remaps, %lld I/Os hit a missing page\n",
		racer_cycles, pin_faults);
	phase_close("c", &t, k0, pins0);
}

int main(void)
{
	long long total;

	aiot_init("t-fault");
	if (access(DBGFS "/fail_make_request", F_OK))
		aiot_skip("no %s/fail_make_request (kernel without fault injection)", DBGFS);
	aiot_require_size(DEV_END);
	fa_init();
	if (!dev_mif[0])
		aiot_skip("no make-it-fail for %s", aiot.dev);
	fd = aiot_open_dev(O_RDWR | O_DIRECT);
	ctx = aiot_ctx(MAXOPS * 2);
	arena = aiot_map(ARENA);
	vbuf = aiot_map(4 * MIB);
	vtmp = aiot_map(4 * MIB);
	rb = aiot_map(RB_LEN);
	a_init();
	b_init();

	phase_a1();
	phase_a2();
	phase_a3();
	phase_a4();
	phase_b("b-failslab", 25, 0, 40);
	phase_b("b-fail_page_alloc", 0, 25, 40);
	phase_b("b-both", 15, 15, 30);
	phase_c();

	restore();
	total = fa_injected[FA_MKREQ] + fa_injected[FA_SLAB] + fa_injected[FA_PAGE] +
		bb_faults + pin_faults;
	fprintf(stderr, "t-fault: faults [%s]: fail_make_request %lld failslab %lld fail_page_alloc %lld badblocks %lld pin-race %lld\n",
		aiot.mode_name, fa_injected[FA_MKREQ], fa_injected[FA_SLAB],
		fa_injected[FA_PAGE], bb_faults, pin_faults);
	printf("FAULTS %lld\n", total);
	aiot_ctx_destroy(ctx);
	close(fd);
	return aiot_finish();
}
