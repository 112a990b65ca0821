// SPDX-License-Identifier: GPL-2.0
/*
 * libkvec-fixed.so: registered kvecs for unmodified libaio programs.
 *
 *   LD_PRELOAD=build/userspace/libkvec-fixed.so fio --ioengine=libaio ...
 *
 * Every aio context the program creates (io_setup(), io_queue_init()) gets
 * an empty table of KVEC_FIXED_SLOTS slots (IOCB_CMD_KVEC_REGISTER, all
 * { NULL, 0 }).  io_submit() then turns each PREAD, PWRITE, PREADV and
 * PWRITEV iocb into a fixed one (IOCB_FLAG_KVEC_FIXED, slot in
 * aio_reserved2) when a slot holds its buffer; on a miss it reads
 * /proc/self/maps, registers the memory around the buffer into a slot
 * (IOCB_CMD_KVEC_UPDATE) and uses that.  The iocbs are restored once the
 * kernel has read them, so the program never sees the change.  An iocb
 * whose buffer cannot be registered goes to the kernel unchanged.
 *
 * What is registered: the whole mapping of an anonymous (or shmem)
 * buffer, at most KVEC_FIXED_MAX bytes (default, and kernel limit, 1 GiB)
 * around it, except where the C library carves and trims memory itself
 * ([heap], malloc's thread arenas: only the pages of the buffer, merged
 * with a slot whose pages they meet) and thread stacks (never: a new
 * thread reuses an old one's addresses on new pages).  A registered range
 * whose pages may be replaced behind it is dropped: free(), realloc(),
 * munmap(), mremap(), madvise() (DONTNEED, FREE, REMOVE), mprotect()
 * without write, mmap(MAP_FIXED) and shmdt() on it mark its slot stale,
 * and the next io_submit() on the context clears it.  Memory that changes
 * under the library's feet in ways it cannot see (raw system calls, the C
 * library unmapping and reusing memory for itself next to a buffer) is the
 * limit of the scheme; NOTES.md, "fio and registered kvecs".
 *
 * Each command posts an event.  The library takes it off the ring at once
 * when no thread is reaping (the usual case), moving the events ahead of
 * it up one place; otherwise io_getevents() and io_pgetevents() drop it
 * from what they return, waiting on for as many of the program's own as
 * were asked for.
 *
 * It stops registering on a context (slots it has keep serving) when a
 * registration fails for want of RLIMIT_MEMLOCK (ENOMEM, after trying the
 * buffer's pages alone) or for a reason it does not expect, and when
 * buffers come and go faster than slots pay off; a kernel without
 * registered kvecs (EINVAL) makes it do nothing at all.  A program that
 * uses registered kvecs itself (a KVEC command, or a fixed iocb of its
 * own) gets its context back: the library unregisters its table first.
 *
 * Environment: KVEC_FIXED_SLOTS (slots per context, 1..16384, default 64),
 * KVEC_FIXED_MAX (bytes registered at most per slot, k/m/g suffixes, at
 * most and by default 1g), KVEC_FIXED_VERBOSE (non-empty, not "0": one
 * line on stderr when the library stops registering on a context, a
 * summary per context at io_destroy()).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libaio.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include "kvec-aio.h"

#define EXPORT		__attribute__((visibility("default")))
#define MAX_CTX		256		/* contexts handled at once per process */
#define NEG		16		/* ranges known not to register, per context */
#define MAX_PENDING	2		/* our events left on a ring at most */
#define BATCH_MAX	1024		/* iocbs per io_submit() considered */
#define VEC_MAX		64		/* segments of a PREADV/PWRITEV considered */
#define ONE_GIB		(1UL << 30)
#define ARENA_SIZE	(64UL << 20)	/* glibc's HEAP_MAX_SIZE on 64-bit */
#define RING_MAGIC	0xa10a10a1U	/* the kernel's AIO_RING_MAGIC */
#define CMD_DATA	0x6b7665632d666978ULL	/* "kvec-fix": our commands' aio_data */
#define MAX_RW		0x7ffff000UL	/* the kernel's MAX_RW_COUNT */

/* The head of the completion ring an io_context_t points at. */
struct kv_ring {
	unsigned int id, nr, head, tail, magic;
	unsigned int compat_features, incompat_features, header_length;
	struct io_event events[];
};

enum vma_kind { VMA_ANON, VMA_HEAP, VMA_STACK, VMA_FILE, VMA_SPECIAL };

struct vma {
	uintptr_t	start, end;
	char		perms[5];
	enum vma_kind	kind;
	uintptr_t	prev_end, next_start, next_end;
	char		prev_perms[5], next_perms[5];
};

enum { SLOT_EMPTY, SLOT_VALID, SLOT_STALE };

struct slot {
	uintptr_t		start, end;
	unsigned long long	last_use;
	unsigned int		batch;	/* io_submit() that last used it */
	unsigned char		state;
};

struct kctx {
	_Atomic uintptr_t	key;		/* the io_context_t; 0: entry free */
	bool			claimed;	/* under table_lock */
	pthread_mutex_t		lock;		/* everything below but the atomics */
	struct slot		*slots;
	unsigned int		mru, batch, nstale;
	unsigned long long	clock;
	bool			off;		/* the program registers kvecs itself */
	bool			noreg;		/* no more registrations */
	struct { uintptr_t start, end; } neg[NEG];
	unsigned int		neg_next;
	struct vma		vma;		/* the mapping last read, if vma.end */
	struct iocb		cmd;		/* our commands; their events' obj */
	atomic_int		reapers;	/* threads in io_getevents() on it */
	atomic_int		swallowing;	/* taking our event off the ring */
	atomic_int		pending;	/* our events still on the ring */
	unsigned long long	n_fixed, n_plain, n_regs, n_maps, n_miss;
	unsigned int		peak_slots;	/* slots registered at once, at most */
	uintptr_t		peak_bytes;	/* bytes registered at once, at most */
};

static struct kctx ctxs[MAX_CTX];
/* the context whose lock this thread holds in io_submit(), if any */
static __thread struct kctx *held __attribute__((tls_model("initial-exec")));
static _Atomic unsigned int ctx_hw;		/* entries [0, ctx_hw) ever used */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
/* every range registered or known bad lies in [reg_lo, reg_hi) */
static _Atomic uintptr_t reg_lo = UINTPTR_MAX, reg_hi;

static unsigned int nslots = 64;
static uintptr_t max_bytes = ONE_GIB;
static bool verbose;
static atomic_bool kernel_lacks;		/* REGISTER said EINVAL once */
static atomic_bool no_vm_readv;			/* process_vm_readv(): ENOSYS */
static uintptr_t page_size = 4096;

static int (*real_io_setup)(int, io_context_t *);
static int (*real_io_destroy)(io_context_t);
static int (*real_io_submit)(io_context_t, long, struct iocb **);
static int (*real_io_getevents)(io_context_t, long, long, struct io_event *,
				struct timespec *);
static int (*real_io_pgetevents)(io_context_t, long, long, struct io_event *,
				 struct timespec *, sigset_t *);
static int (*real_io_queue_init)(int, io_context_t *);
static int (*real_io_queue_release)(io_context_t);
static void (*real_free)(void *);
static void *(*real_realloc)(void *, size_t);
static void *(*real_reallocarray)(void *, size_t, size_t);
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static int (*real_munmap)(void *, size_t);
static void *(*real_mremap)(void *, size_t, size_t, int, ...);
static int (*real_madvise)(void *, size_t, int);
static int (*real_mprotect)(void *, size_t, int);
static int (*real_shmdt)(const void *);

/* The next definition of @name (libaio's, the C library's); NULL if none. */
static void *next_sym(void *const *cache, const char *name)
{
	void *p = __atomic_load_n(cache, __ATOMIC_ACQUIRE);

	if (!p) {
		p = dlsym(RTLD_NEXT, name);
		__atomic_store_n((void **)cache, p, __ATOMIC_RELEASE);
	}
	return p;
}
#define REAL(name) ((__typeof__(real_##name))next_sym((void *const *)&real_##name, #name))

static void say(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	if (!verbose)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(2, buf, n) < 0)
		return;
}

/* ---- aio through raw system calls (our commands bypass the wrappers) ---- */

static int sys_submit_cmd(io_context_t ctx, struct iocb *cb)
{
	long ret = syscall(__NR_io_submit, ctx, 1L, &cb);

	return ret == 1 ? 0 : ret < 0 ? -errno : -EIO;
}

static void reset_ctx(struct kctx *k)
{
	k->mru = 0;
	k->batch = 0;
	k->nstale = 0;
	k->clock = 0;
	k->off = false;
	k->noreg = false;
	k->neg_next = 0;
	memset(k->neg, 0, sizeof(k->neg));
	memset(&k->vma, 0, sizeof(k->vma));
	atomic_store(&k->reapers, 0);
	atomic_store(&k->swallowing, 0);
	atomic_store(&k->pending, 0);
	k->n_fixed = k->n_plain = k->n_regs = k->n_maps = k->n_miss = 0;
	k->peak_slots = 0;
	k->peak_bytes = 0;
	if (k->slots)
		memset(k->slots, 0, nslots * sizeof(*k->slots));
}

/* The context's entry, without locking; NULL if the library does not know it. */
static struct kctx *find_ctx(io_context_t ctx)
{
	unsigned int i, hw = atomic_load_explicit(&ctx_hw, memory_order_acquire);

	for (i = 0; i < hw; i++)
		if (atomic_load_explicit(&ctxs[i].key, memory_order_acquire) ==
		    (uintptr_t)ctx)
			return &ctxs[i];
	return NULL;
}

static bool is_ours(const struct kctx *k, const struct io_event *ev)
{
	return ev->obj == &k->cmd && ev->data == (void *)(uintptr_t)CMD_DATA;
}

/*
 * Take our command's event off the ring, unless a thread is reaping: the
 * events ahead of it move up one place and the head passes it, as a
 * program reaping from the ring would move the head (the kernel only
 * appends at the tail).  Else count it for io_getevents() to drop.
 */
static void swallow(io_context_t ctx, struct kctx *k)
{
	struct kv_ring *ring = (struct kv_ring *)ctx;
	bool taken = false;

	atomic_store(&k->swallowing, 1);
	if (atomic_load(&k->reapers) == 0 && ring->magic == RING_MAGIC) {
		unsigned int head = __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE);
		unsigned int tail = __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
		unsigned int nr = ring->nr, i, prev;

		/* newest first: ours was posted last */
		for (i = tail; nr && head < nr && tail < nr && i != head;) {
			i = i ? i - 1 : nr - 1;
			if (!is_ours(k, &ring->events[i]))
				continue;
			for (; i != head; i = prev) {
				prev = i ? i - 1 : nr - 1;
				ring->events[i] = ring->events[prev];
			}
			taken = __atomic_compare_exchange_n(&ring->head, &head,
							    head + 1 == nr ? 0 : head + 1,
							    false, __ATOMIC_RELEASE,
							    __ATOMIC_RELAXED);
			break;
		}
	}
	if (!taken)
		atomic_fetch_add(&k->pending, 1);
	atomic_store(&k->swallowing, 0);
}

/* IOCB_CMD_KVEC_UPDATE of one slot, under k->lock: 0 or -errno. */
static int update_slot(io_context_t ctx, struct kctx *k, unsigned int i,
		       uintptr_t start, uintptr_t len)
{
	struct iovec iov = { (void *)start, len };
	int ret;

	kvec_aio_prep_update(&k->cmd, i, &iov, 1);
	k->cmd.data = (void *)(uintptr_t)CMD_DATA;
	ret = sys_submit_cmd(ctx, &k->cmd);
	if (!ret)
		swallow(ctx, k);
	return ret;
}

static void widen(uintptr_t lo, uintptr_t hi)
{
	uintptr_t v = atomic_load(&reg_lo);

	while (lo < v && !atomic_compare_exchange_weak(&reg_lo, &v, lo))
		;
	v = atomic_load(&reg_hi);
	while (hi > v && !atomic_compare_exchange_weak(&reg_hi, &v, hi))
		;
}

static void give_up(io_context_t ctx, struct kctx *k, const char *why, int err)
{
	if (k->noreg)
		return;
	k->noreg = true;
	say("kvec-fixed: context %p: no more registrations: %s%s%s", (void *)ctx,
	    why, err ? ": " : "", err ? strerror(err) : "");
}

/* ---- /proc/self/maps ---- */

static const char *hex(const char *p, uintptr_t *v)
{
	uintptr_t x = 0;
	int d;

	for (;; p++) {
		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else
			break;
		x = x << 4 | d;
	}
	*v = x;
	return p;
}

static const char *skip_field(const char *p)
{
	while (*p && *p != ' ')
		p++;
	while (*p == ' ')
		p++;
	return p;
}

/* One maps line: start, end, perms and what the mapping is. */
static bool parse_line(const char *l, uintptr_t *s, uintptr_t *e, char perms[5],
		       enum vma_kind *kind)
{
	const char *p = hex(l, s);

	if (*p != '-')
		return false;
	p = hex(p + 1, e);
	if (*p != ' ')
		return false;
	memcpy(perms, p + 1, 4);
	perms[4] = 0;
	p = skip_field(p + 1);		/* perms */
	p = skip_field(p);		/* offset */
	p = skip_field(p);		/* dev */
	p = skip_field(p);		/* inode, then the path if any */
	if (!*p)
		*kind = VMA_ANON;
	else if (!strncmp(p, "[heap]", 6))
		*kind = VMA_HEAP;
	else if (!strncmp(p, "[stack]", 7))
		*kind = VMA_STACK;
	else if (!strncmp(p, "[anon:", 6))
		*kind = VMA_ANON;
	else if (*p == '/' && strncmp(p, "/[aio]", 6))
		*kind = VMA_FILE;
	else
		*kind = VMA_SPECIAL;
	return true;
}

/* The mapping holding @addr, with its neighbours: true if found. */
static bool find_vma(uintptr_t addr, struct vma *v)
{
	char buf[4096], line[256];
	size_t ll = 0;
	bool found = false, done = false, skip = false;
	ssize_t n;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	memset(v, 0, sizeof(*v));
	while (!done && (n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n && !done; i++) {
			uintptr_t s, e;
			char perms[5];
			enum vma_kind kind;

			if (buf[i] != '\n') {
				/* long paths: their start is all we need */
				if (ll < sizeof(line) - 1 && !skip)
					line[ll++] = buf[i];
				else
					skip = true;
				continue;
			}
			line[ll] = 0;
			ll = 0;
			skip = false;
			if (!parse_line(line, &s, &e, perms, &kind))
				continue;
			if (found) {
				v->next_start = s;
				v->next_end = e;
				memcpy(v->next_perms, perms, 5);
				done = true;
			} else if (addr >= s && addr < e) {
				v->start = s;
				v->end = e;
				memcpy(v->perms, perms, 5);
				v->kind = kind;
				found = true;
			} else if (e <= addr) {
				v->prev_end = e;
				memcpy(v->prev_perms, perms, 5);
			}
		}
	}
	close(fd);
	return found;
}

/* ---- slots ---- */

static bool neg_hit(struct kctx *k, uintptr_t s)
{
	for (unsigned int i = 0; i < NEG; i++)
		if (s >= k->neg[i].start && s < k->neg[i].end)
			return true;
	return false;
}

static void neg_add(struct kctx *k, uintptr_t start, uintptr_t end)
{
	k->neg[k->neg_next].start = start;
	k->neg[k->neg_next].end = end;
	k->neg_next = (k->neg_next + 1) % NEG;
	widen(start, end);
}

/* A slot to (re)fill: empty, else stale, else the least recently used one
 * that this io_submit() has not used yet; -1 if none. */
static int victim(struct kctx *k)
{
	int best = -1;

	for (unsigned int i = 0; i < nslots; i++) {
		struct slot *sl = &k->slots[i];

		if (sl->state == SLOT_EMPTY)
			return i;
		if (sl->state == SLOT_STALE) {
			best = i;
			continue;
		}
		if (best >= 0 && k->slots[best].state == SLOT_STALE)
			continue;
		if (sl->batch != k->batch &&
		    (best < 0 || sl->last_use < k->slots[best].last_use))
			best = i;
	}
	return best;
}

enum choice {
	SKIP,		/* not this time: across mappings, too big */
	NEVER,		/* not this mapping: [*rs, *re) is remembered */
	PAGES,		/* the buffer's own pages, [*rs, *re) */
	WHOLE,		/* the mapping, or a window of it: [*rs, *re) */
};

/* What to register for a buffer [s, e) in mapping @v. */
static enum choice choose_range(const struct vma *v, uintptr_t s, uintptr_t e,
				uintptr_t *rs, uintptr_t *re)
{
	uintptr_t ps = s & ~(page_size - 1);
	uintptr_t pe = (e + page_size - 1) & ~(page_size - 1);
	bool arena;

	*rs = v->start;
	*re = v->end;
	if (v->perms[0] != 'r' || v->perms[1] != 'w' || v->kind == VMA_SPECIAL)
		return NEVER;
	if (e > v->end || pe - ps > max_bytes)
		return SKIP;
	/* a thread's stack, a guard page right below it: a new thread reuses
	 * an old one's addresses with new pages, behind our back */
	if (v->kind == VMA_ANON && v->prev_end == v->start &&
	    !strcmp(v->prev_perms, "---p"))
		return NEVER;
	*rs = ps;
	*re = pe;
	/*
	 * Where malloc carves and trims memory itself (the [heap], a thread's
	 * arena: 64 MiB aligned, the rest reserved), only pages that hold
	 * the buffer's bytes stay put for as long as it is not freed.
	 */
	arena = v->kind == VMA_ANON && !(v->start & (ARENA_SIZE - 1)) &&
		(v->end - v->start == ARENA_SIZE ||
		 (v->next_start == v->end && !strcmp(v->next_perms, "---p") &&
		  v->next_end - v->start <= ARENA_SIZE));
	if (arena || v->kind == VMA_HEAP || v->kind == VMA_STACK)
		return PAGES;
	if (v->end - v->start <= max_bytes) {
		*rs = v->start;
		*re = v->end;
		return WHOLE;
	}
	/* a window of max_bytes around the buffer, 2 MiB aligned */
	*rs = s > max_bytes / 2 ? (s - max_bytes / 2) & ~((2UL << 20) - 1) : 0;
	if (*rs < v->start)
		*rs = v->start;
	*re = *rs + max_bytes;
	if (*re > v->end) {
		*re = v->end;
		*rs = v->end - max_bytes;
	}
	if (*rs > ps || *re < pe) {
		*rs = ps;
		*re = pe;
	}
	return WHOLE;
}

/*
 * A slot in mapping @v whose range meets the pages [*rs, *re): its index,
 * with [*rs, *re) grown to cover both, or -1.  Every page of the union
 * holds bytes of a buffer in use, so it stays put as those do; fio's
 * buffers, one after another, end up in one slot.
 */
static int merge_slot(struct kctx *k, const struct vma *v, uintptr_t *rs,
		      uintptr_t *re)
{
	for (unsigned int i = 0; i < nslots; i++) {
		struct slot *sl = &k->slots[i];
		uintptr_t lo, hi;

		if (sl->state != SLOT_VALID || sl->start > *re || sl->end < *rs ||
		    sl->start < v->start || sl->end > v->end)
			continue;
		lo = sl->start < *rs ? sl->start : *rs;
		hi = sl->end > *re ? sl->end : *re;
		if (hi - lo > max_bytes)
			continue;
		*rs = lo;
		*re = hi;
		return i;
	}
	return -1;
}

/* For the summary: the most slots (and bytes) registered at once. */
static void note_use(struct kctx *k)
{
	unsigned int used = 0;
	uintptr_t bytes = 0;

	for (unsigned int j = 0; j < nslots; j++) {
		if (k->slots[j].state == SLOT_VALID) {
			used++;
			bytes += k->slots[j].end - k->slots[j].start;
		}
	}
	if (used > k->peak_slots)
		k->peak_slots = used;
	if (bytes > k->peak_bytes)
		k->peak_bytes = bytes;
}

/* Register memory holding [s, e) into a slot: its index or -1. */
static int miss(io_context_t ctx, struct kctx *k, uintptr_t s, uintptr_t e)
{
	uintptr_t rs, re, ps = s & ~(page_size - 1);
	uintptr_t pe = (e + page_size - 1) & ~(page_size - 1);
	struct vma *v = &k->vma;
	int i = -1, ret = -1;

	if (k->noreg || atomic_load(&k->pending) >= MAX_PENDING || neg_hit(k, s))
		return -1;
	/* buffers that come and go: slots cost more than they save */
	if (++k->n_miss >= 4 * nslots && k->n_miss * 16 > k->n_fixed) {
		give_up(ctx, k, "buffers change too often for registered slots", 0);
		return -1;
	}
	if (!(s >= v->start && e <= v->end)) {
		k->n_maps++;
		if (!find_vma(s, v)) {
			v->start = v->end = 0;
			return -1;
		}
		widen(v->start, v->end);	/* for invalidate() to find */
	}
	switch (choose_range(v, s, e, &rs, &re)) {
	case SKIP:
		return -1;
	case NEVER:
		neg_add(k, rs, re);
		return -1;
	case PAGES:
		i = merge_slot(k, v, &rs, &re);
		if (i >= 0)
			ret = update_slot(ctx, k, i, rs, re - rs);
		if (ret && i >= 0) {
			/* unchanged (all or nothing): the pages in a slot of their own */
			rs = ps;
			re = pe;
			i = -1;
		}
		break;
	case WHOLE:
		break;
	}
	if (ret) {
		i = victim(k);
		if (i < 0)
			return -1;
		ret = update_slot(ctx, k, i, rs, re - rs);
		if (ret == -ENOMEM && (rs != ps || re != pe)) {
			/* RLIMIT_MEMLOCK: the buffer's own pages may still fit */
			rs = ps;
			re = pe;
			ret = update_slot(ctx, k, i, rs, re - rs);
		}
	}
	switch (ret) {
	case 0:
		break;
	case -EFAULT:		/* not writable after all */
	case -EOPNOTSUPP:	/* a file other than shmem or hugetlbfs */
		neg_add(k, rs, re);
		return -1;
	case -EAGAIN:		/* the ring is full: later */
		return -1;
	case -ENOMEM:
		give_up(ctx, k, "IOCB_CMD_KVEC_UPDATE (RLIMIT_MEMLOCK?)", ENOMEM);
		return -1;
	default:
		give_up(ctx, k, "IOCB_CMD_KVEC_UPDATE", -ret);
		return -1;
	}
	if (k->slots[i].state == SLOT_STALE)
		k->nstale--;
	k->slots[i].start = rs;
	k->slots[i].end = re;
	k->slots[i].state = SLOT_VALID;
	k->n_regs++;
	widen(rs, re);
	note_use(k);
	return i;
}

/* The slot holding [s, e), registering one on a miss: its index or -1. */
static int lookup(io_context_t ctx, struct kctx *k, uintptr_t s, uintptr_t e)
{
	struct slot *sl = &k->slots[k->mru];

	if (sl->state == SLOT_VALID && s >= sl->start && e <= sl->end)
		return k->mru;
	for (unsigned int i = 0; i < nslots; i++) {
		sl = &k->slots[i];
		if (sl->state == SLOT_VALID && s >= sl->start && e <= sl->end) {
			k->mru = i;
			return i;
		}
	}
	return miss(ctx, k, s, e);
}

/* Clear stale slots, releasing their pages, as far as the ring allows. */
static void clear_stale(io_context_t ctx, struct kctx *k)
{
	for (unsigned int i = 0; i < nslots && k->nstale; i++) {
		int ret;

		if (k->slots[i].state != SLOT_STALE)
			continue;
		if (atomic_load(&k->pending) >= MAX_PENDING)
			return;
		ret = update_slot(ctx, k, i, 0, 0);
		if (ret == -EAGAIN)
			return;
		if (ret) {
			give_up(ctx, k, "IOCB_CMD_KVEC_UPDATE clearing a slot", -ret);
			return;
		}
		k->slots[i].state = SLOT_EMPTY;
		k->nstale--;
	}
}

/* Make @cb use a slot if its buffer allows: true if changed. */
static bool convert(io_context_t ctx, struct kctx *k, struct iocb *cb)
{
	uintptr_t s, e;
	int i;

	switch (cb->aio_lio_opcode) {
	case IO_CMD_PREAD:
	case IO_CMD_PWRITE:
		s = (uintptr_t)cb->u.c.buf;
		if (!cb->u.c.nbytes || __builtin_add_overflow(s, cb->u.c.nbytes, &e))
			return false;
		i = lookup(ctx, k, s, e);
		break;
	case IO_CMD_PREADV:
	case IO_CMD_PWRITEV: {
		struct iovec iov[VEC_MAX];
		struct iovec local = { iov, 0 }, remote = { (void *)cb->u.v.vec, 0 };
		uintptr_t total = 0;
		long nr = (long)cb->u.v.nr, j;

		i = -1;
		if (nr <= 0 || nr > VEC_MAX || atomic_load(&no_vm_readv))
			break;
		/*
		 * The program's iovec array may be bad (the kernel says
		 * EFAULT): read it as the kernel would.  Without
		 * CONFIG_CROSS_MEMORY_ATTACH, vectored iocbs stay as they are.
		 */
		local.iov_len = remote.iov_len = nr * sizeof(*iov);
		if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) !=
		    (ssize_t)local.iov_len) {
			if (errno == ENOSYS)
				atomic_store(&no_vm_readv, true);
			break;
		}
		for (j = 0; j < nr; j++) {
			s = (uintptr_t)iov[j].iov_base;
			/* empty segments, and more than stock would move */
			if (!iov[j].iov_len ||
			    __builtin_add_overflow(s, iov[j].iov_len, &e) ||
			    (total += iov[j].iov_len) > MAX_RW)
				break;
		}
		if (j < nr)
			break;
		s = (uintptr_t)iov[0].iov_base;
		i = lookup(ctx, k, s, s + iov[0].iov_len);
		for (j = 1; i >= 0 && j < nr; j++) {
			s = (uintptr_t)iov[j].iov_base;
			if (s < k->slots[i].start || s + iov[j].iov_len > k->slots[i].end)
				i = -1;
		}
		break;
	}
	default:
		return false;
	}
	if (i < 0) {
		k->n_plain++;
		return false;
	}
	cb->u.c.flags |= KVEC_AIO_FLAG_FIXED;
	cb->u.c.__pad3 = i;
	k->slots[i].batch = k->batch;
	k->slots[i].last_use = ++k->clock;
	k->n_fixed++;
	return true;
}

/* Does the program use registered kvecs itself? */
static bool program_owns(const struct iocb *cb)
{
	switch (cb->aio_lio_opcode) {
	case KVEC_AIO_CMD_REGISTER:
	case KVEC_AIO_CMD_UNREGISTER:
	case KVEC_AIO_CMD_UPDATE:
		return true;
	case IO_CMD_PREAD:
	case IO_CMD_PWRITE:
	case IO_CMD_PREADV:
	case IO_CMD_PWRITEV:
		return (cb->u.c.flags & KVEC_AIO_FLAG_FIXED) || cb->u.c.__pad3;
	}
	return false;
}

/* Step aside for a program that registers kvecs itself. */
static void yield(io_context_t ctx, struct kctx *k)
{
	int ret;

	kvec_aio_prep_unregister(&k->cmd);
	k->cmd.data = (void *)(uintptr_t)CMD_DATA;
	ret = sys_submit_cmd(ctx, &k->cmd);
	if (!ret)
		swallow(ctx, k);
	k->off = true;
	say("kvec-fixed: context %p: the program uses registered kvecs itself; "
	    "leaving the context to it%s%s", (void *)ctx, ret ? ": unregister: " : "",
	    ret ? strerror(-ret) : "");
}

/* ---- contexts ---- */

/* Give a new context an empty table of slots; idempotent. */
static void adopt(io_context_t ctx)
{
	struct kctx *k = NULL;
	struct iovec *iov;
	unsigned int i;
	int ret;

	if (!ctx || find_ctx(ctx) || atomic_load(&kernel_lacks))
		return;
	iov = calloc(nslots, sizeof(*iov));	/* all { NULL, 0 }: empty slots */
	if (!iov)
		return;
	pthread_mutex_lock(&table_lock);
	for (i = 0; i < MAX_CTX; i++) {
		if (!ctxs[i].claimed) {
			k = &ctxs[i];
			break;
		}
	}
	if (k && !k->slots) {
		k->slots = mmap(NULL, nslots * sizeof(*k->slots), PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (k->slots == MAP_FAILED)
			k->slots = NULL;
	}
	if (!k || !k->slots) {
		pthread_mutex_unlock(&table_lock);
		free(iov);
		say("kvec-fixed: context %p: no room to track it (%d contexts)",
		    (void *)ctx, MAX_CTX);
		return;
	}
	k->claimed = true;
	reset_ctx(k);
	kvec_aio_prep_register(&k->cmd, iov, nslots);
	k->cmd.data = (void *)(uintptr_t)CMD_DATA;
	ret = sys_submit_cmd(ctx, &k->cmd);
	if (!ret) {
		swallow(ctx, k);	/* a new context: its only event */
		if (i + 1 > atomic_load(&ctx_hw))
			atomic_store_explicit(&ctx_hw, i + 1, memory_order_release);
		atomic_store_explicit(&k->key, (uintptr_t)ctx, memory_order_release);
	} else {
		k->claimed = false;
	}
	pthread_mutex_unlock(&table_lock);
	free(iov);
	if (ret == -EINVAL) {
		if (!atomic_exchange(&kernel_lacks, true))
			say("kvec-fixed: IOCB_CMD_KVEC_REGISTER: %s: a kernel without "
			    "registered kvecs; nothing changed", strerror(EINVAL));
	} else if (ret) {
		say("kvec-fixed: context %p: IOCB_CMD_KVEC_REGISTER: %s; context left as it is",
		    (void *)ctx, strerror(-ret));
	}
}

static void forget(io_context_t ctx)
{
	struct kctx *k = ctx ? find_ctx(ctx) : NULL;

	if (!k)
		return;
	pthread_mutex_lock(&table_lock);
	pthread_mutex_lock(&k->lock);
	if (atomic_load(&k->key) == (uintptr_t)ctx) {
		atomic_store(&k->key, 0);
		say("kvec-fixed: context %p: %llu iocbs on registered kvecs, %llu "
		    "left as they were; %llu registrations, %llu reads of "
		    "/proc/self/maps; at most %u slots in use, %lu KiB",
		    (void *)ctx, k->n_fixed, k->n_plain, k->n_regs, k->n_maps,
		    k->peak_slots, (unsigned long)(k->peak_bytes >> 10));
		k->claimed = false;
	}
	pthread_mutex_unlock(&k->lock);
	pthread_mutex_unlock(&table_lock);
}

/* Pages of [lo, hi) may change: mark the slots over them stale. */
static void invalidate(uintptr_t lo, uintptr_t hi)
{
	unsigned int i, j, hw;

	if (lo >= hi || hi <= atomic_load(&reg_lo) || lo >= atomic_load(&reg_hi))
		return;
	hw = atomic_load_explicit(&ctx_hw, memory_order_acquire);
	for (i = 0; i < hw; i++) {
		struct kctx *k = &ctxs[i];

		if (!atomic_load(&k->key))
			continue;
		/*
		 * Called from inside io_submit() (the C library freeing its
		 * own memory): that context's lock is ours already, and
		 * others are only tried, against a lock-order deadlock; that
		 * memory is no I/O buffer.
		 */
		if (!held)
			pthread_mutex_lock(&k->lock);
		else if (k != held && pthread_mutex_trylock(&k->lock))
			continue;
		if (atomic_load(&k->key)) {
			for (j = 0; j < nslots; j++) {
				struct slot *sl = &k->slots[j];

				if (sl->state == SLOT_VALID && sl->start < hi &&
				    lo < sl->end) {
					sl->state = SLOT_STALE;
					k->nstale++;
				}
			}
			for (j = 0; j < NEG; j++)
				if (k->neg[j].start < hi && lo < k->neg[j].end)
					k->neg[j].start = k->neg[j].end = 0;
			if (k->vma.start < hi && lo < k->vma.end)
				k->vma.start = k->vma.end = 0;
		}
		if (k != held)
			pthread_mutex_unlock(&k->lock);
	}
}

/* ---- libaio ---- */

EXPORT int io_setup(int maxevents, io_context_t *ctxp)
{
	int ret;

	if (REAL(io_setup)) {
		ret = real_io_setup(maxevents, ctxp);
	} else {
		ret = syscall(__NR_io_setup, maxevents, ctxp);
		ret = ret < 0 ? -errno : ret;
	}
	if (ret == 0)
		adopt(*ctxp);
	return ret;
}

EXPORT int io_queue_init(int maxevents, io_context_t *ctxp)
{
	int ret;

	if (!REAL(io_queue_init))
		return io_setup(maxevents, ctxp);
	/* libaio's calls io_setup() through its PLT, which is ours: idempotent */
	ret = real_io_queue_init(maxevents, ctxp);
	if (ret == 0)
		adopt(*ctxp);
	return ret;
}

EXPORT int io_destroy(io_context_t ctx)
{
	int ret;

	forget(ctx);
	if (REAL(io_destroy))
		return real_io_destroy(ctx);
	ret = syscall(__NR_io_destroy, ctx);
	return ret < 0 ? -errno : ret;
}

EXPORT int io_queue_release(io_context_t ctx)
{
	forget(ctx);
	if (!REAL(io_queue_release))
		return io_destroy(ctx);
	return real_io_queue_release(ctx);
}

EXPORT int io_submit(io_context_t ctx, long nr, struct iocb *ios[])
{
	uint64_t changed[BATCH_MAX / 64] = { 0 };
	struct kctx *k = nr > 0 && ios ? find_ctx(ctx) : NULL;
	long i, n = nr < BATCH_MAX ? nr : BATCH_MAX;
	int ret;

	if (k) {
		pthread_mutex_lock(&k->lock);
		if (atomic_load(&k->key) != (uintptr_t)ctx) {
			pthread_mutex_unlock(&k->lock);
			k = NULL;
		}
		held = k;
	}
	if (k && !k->off) {
		for (i = 0; i < nr; i++) {
			if (ios[i] && program_owns(ios[i])) {
				yield(ctx, k);
				break;
			}
		}
	}
	if (k && !k->off) {
		k->batch++;
		if (k->nstale)
			clear_stale(ctx, k);
		for (i = 0; i < n; i++)
			if (ios[i] && convert(ctx, k, ios[i]))
				changed[i / 64] |= 1ULL << (i % 64);
	}
	if (REAL(io_submit)) {
		ret = real_io_submit(ctx, nr, ios);
	} else {
		ret = syscall(__NR_io_submit, ctx, nr, ios);
		ret = ret < 0 ? -errno : ret;
	}
	if (k) {
		/* the kernel has copied the iocbs: give the program its own back */
		for (i = 0; i < n; i++) {
			if (changed[i / 64] & (1ULL << (i % 64))) {
				ios[i]->u.c.flags &= ~KVEC_AIO_FLAG_FIXED;
				ios[i]->u.c.__pad3 = 0;
			}
		}
		held = NULL;
		pthread_mutex_unlock(&k->lock);
	}
	return ret;
}

/* Drop our commands' events from @ev[0..@n): how many are left. */
static long filter(struct kctx *k, struct io_event *ev, long n)
{
	long i, kept = 0;

	for (i = 0; i < n; i++) {
		if (is_ours(k, &ev[i])) {
			atomic_fetch_sub(&k->pending, 1);
			continue;
		}
		if (kept != i)
			ev[kept] = ev[i];
		kept++;
	}
	return kept;
}

static int real_getevents(io_context_t ctx, long min_nr, long nr,
			  struct io_event *ev, struct timespec *timeout,
			  sigset_t *sigmask, bool p)
{
	int ret;

	if (p)
		return REAL(io_pgetevents) ?
			real_io_pgetevents(ctx, min_nr, nr, ev, timeout, sigmask) :
			-ENOSYS;
	if (REAL(io_getevents))
		return real_io_getevents(ctx, min_nr, nr, ev, timeout);
	ret = syscall(__NR_io_getevents, ctx, min_nr, nr, ev, timeout);
	return ret < 0 ? -errno : ret;
}

static int getevents(io_context_t ctx, long min_nr, long nr, struct io_event *ev,
		     struct timespec *timeout, sigset_t *sigmask, bool p)
{
	struct kctx *k = find_ctx(ctx);
	long got = 0, kept;
	int ret;

	if (!k)
		return real_getevents(ctx, min_nr, nr, ev, timeout, sigmask, p);
	/* no reaping while io_submit() takes an event off the ring */
	for (;;) {
		atomic_fetch_add(&k->reapers, 1);
		if (!atomic_load(&k->swallowing))
			break;
		atomic_fetch_sub(&k->reapers, 1);
		sched_yield();
	}
	for (;;) {
		ret = real_getevents(ctx, min_nr > got ? min_nr - got : 0, nr - got,
				     ev + got, timeout, sigmask, p);
		if (ret <= 0)
			break;
		kept = filter(k, ev + got, ret);
		got += kept;
		/*
		 * Only when events of ours made the count short of min_nr:
		 * wait on for the program's (for as long again as @timeout).
		 */
		if (kept == ret || got >= min_nr || got >= nr)
			break;
	}
	atomic_fetch_sub(&k->reapers, 1);
	return got > 0 || ret > 0 ? got : ret;
}

EXPORT int io_getevents(io_context_t ctx, long min_nr, long nr,
			struct io_event *events, struct timespec *timeout)
{
	return getevents(ctx, min_nr, nr, events, timeout, NULL, false);
}

EXPORT int io_pgetevents(io_context_t ctx, long min_nr, long nr,
			 struct io_event *events, struct timespec *timeout,
			 sigset_t *sigmask)
{
	return getevents(ctx, min_nr, nr, events, timeout, sigmask, true);
}

/* ---- memory whose pages may change ---- */

static bool any_registered(void)
{
	return atomic_load_explicit(&reg_hi, memory_order_relaxed) != 0;
}

/*
 * The allocator's free() and realloc(): the C library's, or one the program
 * brings.  The dynamic linker may call them before anything else here ran,
 * and dlsym() may call them itself: meanwhile, the C library's.
 */
extern void __libc_free(void *);
extern void *__libc_realloc(void *, size_t);
static __thread int resolving __attribute__((tls_model("initial-exec")));

static void *alloc_sym(void **cache, const char *name, void *fallback)
{
	void *p = __atomic_load_n(cache, __ATOMIC_ACQUIRE);

	if (p)
		return p;
	if (resolving)
		return fallback;
	resolving = 1;
	p = dlsym(RTLD_NEXT, name);
	resolving = 0;
	if (!p)
		p = fallback;
	__atomic_store_n(cache, p, __ATOMIC_RELEASE);
	return p;
}

/* The bytes of the block @ptr points to, if anything is registered. */
static uintptr_t block_end(void *ptr)
{
	if (!ptr || !any_registered())
		return 0;
	return (uintptr_t)ptr + malloc_usable_size(ptr);
}

/*
 * Invalidation comes before and after the call: before, so that memory
 * handed out again at once is not taken for the old; after, so that a
 * registration made meanwhile by another thread is caught too.
 */
EXPORT void free(void *ptr)
{
	void (*f)(void *) = alloc_sym((void **)&real_free, "free", (void *)__libc_free);
	uintptr_t end = block_end(ptr);

	invalidate((uintptr_t)ptr, end);
	f(ptr);
	invalidate((uintptr_t)ptr, end);
}

EXPORT void *realloc(void *ptr, size_t size)
{
	void *(*f)(void *, size_t) = alloc_sym((void **)&real_realloc, "realloc",
					       (void *)__libc_realloc);
	uintptr_t end = block_end(ptr);
	void *ret;

	invalidate((uintptr_t)ptr, end);
	ret = f(ptr, size);
	invalidate((uintptr_t)ptr, end);
	return ret;
}

EXPORT void *reallocarray(void *ptr, size_t nmemb, size_t size)
{
	uintptr_t end = block_end(ptr);
	void *ret;

	invalidate((uintptr_t)ptr, end);
	ret = REAL(reallocarray) ? real_reallocarray(ptr, nmemb, size) : NULL;
	invalidate((uintptr_t)ptr, end);
	return ret;
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	uintptr_t lo = (uintptr_t)addr, hi = flags & MAP_FIXED ? lo + len : 0;
	void *ret;

	invalidate(lo, hi);
	ret = REAL(mmap) ? real_mmap(addr, len, prot, flags, fd, off) : MAP_FAILED;
	invalidate(lo, hi);
	return ret;
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
	__attribute__((alias("mmap")));

EXPORT int munmap(void *addr, size_t len)
{
	int ret;

	invalidate((uintptr_t)addr, (uintptr_t)addr + len);
	ret = REAL(munmap) ? real_munmap(addr, len) : -1;
	invalidate((uintptr_t)addr, (uintptr_t)addr + len);
	return ret;
}

EXPORT void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	void *new_addr = NULL, *ret;
	va_list ap;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	invalidate((uintptr_t)old, (uintptr_t)old + old_len);
	if (new_addr)
		invalidate((uintptr_t)new_addr, (uintptr_t)new_addr + new_len);
	ret = REAL(mremap) ? real_mremap(old, old_len, new_len, flags, new_addr) :
			     MAP_FAILED;
	invalidate((uintptr_t)old, (uintptr_t)old + old_len);
	if (new_addr)
		invalidate((uintptr_t)new_addr, (uintptr_t)new_addr + new_len);
	return ret;
}

EXPORT int madvise(void *addr, size_t len, int advice)
{
	uintptr_t lo = (uintptr_t)addr, hi = 0;
	int ret;

	switch (advice) {	/* those that may give the range new pages */
	case MADV_DONTNEED:
	case MADV_FREE:
	case MADV_REMOVE:
	case MADV_DONTNEED_LOCKED:
		hi = lo + len;
	}
	invalidate(lo, hi);
	ret = REAL(madvise) ? real_madvise(addr, len, advice) : -1;
	invalidate(lo, hi);
	return ret;
}

EXPORT int mprotect(void *addr, size_t len, int prot)
{
	/* a fixed read would still land where a plain one faults */
	uintptr_t lo = (uintptr_t)addr, hi = prot & PROT_WRITE ? 0 : lo + len;
	int ret = REAL(mprotect) ? real_mprotect(addr, len, prot) : -1;

	invalidate(lo, hi);
	return ret;
}

EXPORT int shmdt(const void *addr)
{
	struct vma v = { 0 };
	bool known = any_registered() && find_vma((uintptr_t)addr, &v);
	int ret;

	if (known)
		invalidate(v.start, v.end);
	ret = REAL(shmdt) ? real_shmdt(addr) : -1;
	if (known)
		invalidate(v.start, v.end);
	return ret;
}

/* ---- set-up ---- */

static void after_fork_child(void)
{
	/* the child has none of its parent's aio contexts */
	pthread_mutex_init(&table_lock, NULL);
	for (unsigned int i = 0; i < MAX_CTX; i++) {
		pthread_mutex_init(&ctxs[i].lock, NULL);
		atomic_store(&ctxs[i].key, 0);
		ctxs[i].claimed = false;
	}
}

static uintptr_t env_size(const char *name, uintptr_t def, uintptr_t lo, uintptr_t hi)
{
	const char *s = getenv(name);
	char *end;
	unsigned long long v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtoull(s, &end, 0);
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if (errno || *end || v < lo || v > hi) {
		say("kvec-fixed: %s=%s: not between %llu and %llu; %llu it is", name, s,
		    (unsigned long long)lo, (unsigned long long)hi,
		    (unsigned long long)def);
		return def;
	}
	return v;
}

__attribute__((constructor)) static void init(void)
{
	const char *v = getenv("KVEC_FIXED_VERBOSE");
	long ps = sysconf(_SC_PAGESIZE);

	verbose = v && *v && strcmp(v, "0");
	if (ps > 0)
		page_size = ps;
	nslots = env_size("KVEC_FIXED_SLOTS", 64, 1, KVEC_AIO_MAX_BUFS);
	max_bytes = env_size("KVEC_FIXED_MAX", ONE_GIB, page_size, ONE_GIB);
	max_bytes &= ~(page_size - 1);
	for (unsigned int i = 0; i < MAX_CTX; i++)
		pthread_mutex_init(&ctxs[i].lock, NULL);
	pthread_atfork(NULL, NULL, after_fork_child);
}
