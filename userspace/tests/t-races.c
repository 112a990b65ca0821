// SPDX-License-Identifier: GPL-2.0
/*
 * t-races: lifecycle races with I/O in flight (io_destroy and exit with I/O
 * in flight are t-destroy-inflight's).  Every iocb completes exactly once,
 * every I/O's data is verified (NODATA devices: results only), the pins are
 * all released after each case.
 *
 *  - munmap right after io_submit: 1 MiB reads and writes, their buffers
 *    unmapped before they are reaped (all in one io_submit, or each right
 *    after its own): full length, and the device holds what the write
 *    buffers held at submit time; the pins keep the pages alive.
 *  - fork with reads in flight: the child writes its own byte into the same
 *    buffers and exits; the parent's buffers get the device data, not the
 *    child's (fork copies pinned pages for the child).  The crc of the
 *    parent's buffers is an R line, so it is compared with stock.
 *  - io_destroy from a second thread while this one submits into the
 *    context, each iocb signalling an eventfd: io_destroy returns 0; every
 *    io_submit before it queues, every one after it gets -EINVAL and none
 *    queues after a refusal; the eventfd counts exactly the queued iocbs
 *    (io_destroy waits for them); queued writes are on the device, refused
 *    ones are not; queued reads filled their buffers.
 *  - memory pressure: a child maps and touches up to 70 % of MemAvailable
 *    (stopping above a floor), frees it and starts again, while 512
 *    verified reads and writes run; the child must not be OOM-killed.
 *  - mode switch under load: a thread flips fs.aio_kvec 0 -> 1 -> 2 while
 *    2048 verified reads and writes run on non-overlapping ranges; the value
 *    found at the start is restored.
 */
#include "aiotest.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#define MIB		AIOT_MIB
#define SYSCTL		AIOT_SYSCTL

/* Device layout. */
#define M_W		0		/* munmap: 8 write slots of 1 MiB */
#define M_R		(8 * MIB)	/* munmap: read area, 1 MiB */
#define F_R		(10 * MIB)	/* fork: read area, 8 MiB */
#define D_BASE		(18 * MIB)	/* destroy: 256 slots of 16 KiB */
#define P_BASE		(24 * MIB)	/* pressure: verified I/O, 4 MiB */
#define S_BASE		(28 * MIB)	/* mode switch: verified I/O, 4 MiB */
#define DEV_END		(32 * MIB)

static int fd;
static io_context_t ctx;

/* -------------------------------------------------------------- helpers */

/* In a kvec mode each accepted iocb went through the kvec path once. */
static void kvec_count(const char *what, long long sub0, long long comp0, long long accepted)
{
	long long sub = aiot_stat("iocbs_submitted"), comp = aiot_stat("iocbs_completed");
	long long want = aiot_mode_is_stock() ? 0 : accepted;

	if (sub0 < 0)
		return;
	CHECK(sub - sub0 == want && comp - comp0 == want,
	      "%s: kvec iocbs submitted +%lld completed +%lld, want +%lld", what,
	      sub - sub0, comp - comp0, want);
}

/*
 * Submit cbp[0..n) (as many io_submit calls as it takes) and reap n events:
 * exactly one per iocb, each with res == len[i].  Returns how many did.
 */
static int submit_reap(struct iocb *cbs, int n, const size_t *len, int *once)
{
	struct iocb *cbp[256];
	struct io_event ev[256];
	unsigned char seen[256] = { 0 };
	int i, sub = 0, got, full = 0, ret;

	for (i = 0; i < n; i++) {
		cbs[i].data = (void *)(uintptr_t)(i + 1);
		cbp[i] = &cbs[i];
	}
	while (sub < n) {
		ret = aiot_submit(ctx, n - sub, cbp + sub);
		if (!CHECK(ret > 0, "io_submit after %d of %d: %s", sub, n, aiot_rstr(ret)))
			break;
		sub += ret;
	}
	got = aiot_reap(ctx, sub, ev);
	for (i = 0; i < got; i++) {
		int idx = aiot_event_iocb(&ev[i], cbs, n, seen);

		if (idx < 0)
			continue;
		(*once)++;
		CHECK(ev[i].data == (void *)(uintptr_t)(idx + 1), "iocb %d: event data", idx);
		if (CHECK((long)ev[i].res == (long)len[idx] && ev[i].res2 == 0,
			  "iocb %d (%s, %zu bytes): res %s res2 %ld", idx,
			  cbs[idx].aio_lio_opcode == IO_CMD_PREAD ||
			  cbs[idx].aio_lio_opcode == IO_CMD_PREADV ? "read" : "write",
			  len[idx], aiot_rstr((long)ev[i].res), (long)ev[i].res2))
			full++;
	}
	CHECK(aiot_reap_extra(ctx, 0) == 0, "more events than iocbs");
	return full;
}

/* ------------------------------------------------- munmap after submit */

#define MN	8		/* writes and reads per round */

static void test_munmap(void)
{
	static struct iocb cbs[2 * MN];
	uint8_t *buf[2 * MN];
	long long pins0 = aiot_pins_out(), sub0 = aiot_stat("iocbs_submitted");
	long long comp0 = aiot_stat("iocbs_completed");
	int round, i, full = 0, once = 0, n = 0;

	aiot_sync_write_pattern(fd, M_R, MIB, 7100);
	for (round = 0; round < 4; round++) {
		uint64_t seed = 7200 + round;
		bool each = round & 1;	/* unmap right after each iocb's own io_submit */
		struct io_event ev[2 * MN];
		unsigned char seen[2 * MN];
		int got, want;

		for (i = 0; i < 2 * MN; i++) {
			uint64_t off = i < MN ? M_W + (uint64_t)i * MIB : M_R;

			buf[i] = aiot_map(MIB);	/* its own mapping: munmap takes all of it */
			if (i < MN) {
				aiot_fill(buf[i], MIB, seed, off);
				aiot_prep_pwrite(&cbs[i], fd, buf[i], MIB, (long long)off);
			} else {
				aiot_prep_pread(&cbs[i], fd, buf[i], MIB, (long long)off);
			}
			cbs[i].data = (void *)(uintptr_t)(i + 1);
		}
		if (each) {
			for (i = 0; i < 2 * MN; i++) {
				struct iocb *p = &cbs[i];
				int ret = aiot_submit(ctx, 1, &p);

				CHECK(ret == 1, "io_submit %d: %s", i, aiot_rstr(ret));
				aiot_unmap(buf[i], MIB);
			}
			want = 2 * MN;
		} else {
			struct iocb *cbp[2 * MN];
			int ret;

			for (i = 0; i < 2 * MN; i++)
				cbp[i] = &cbs[i];
			ret = aiot_submit(ctx, 2 * MN, cbp);
			CHECK(ret == 2 * MN, "io_submit: %s", aiot_rstr(ret));
			for (i = 0; i < 2 * MN; i++)
				aiot_unmap(buf[i], MIB);
			want = ret > 0 ? ret : 0;
		}
		memset(seen, 0, sizeof(seen));
		got = aiot_reap(ctx, want, ev);
		for (i = 0; i < got; i++) {
			int idx = aiot_event_iocb(&ev[i], cbs, 2 * MN, seen);

			if (idx < 0)
				continue;
			once++;
			full += CHECK((long)ev[i].res == MIB && ev[i].res2 == 0,
				      "iocb %d: res %s", idx, aiot_rstr((long)ev[i].res));
		}
		n += 2 * MN;
		/* what the unmapped buffers held at submit time is on the device */
		for (i = 0; i < MN; i++)
			if (!aiot_sync_verify(fd, M_W + (uint64_t)i * MIB, MIB, seed))
				break;
	}
	aiot_R("munmap-after-submit ios=%d completed-once=%d full=%d", n, once, full);
	kvec_count("munmap", sub0, comp0, n);
	aiot_pins_settle("munmap after submit", pins0);
}

/* ------------------------------------------------------ fork with reads */

#define FN	12

static void test_fork(void)
{
	static const size_t sizes[FN] = {
		256 * AIOT_KIB, 256 * AIOT_KIB, 256 * AIOT_KIB, 256 * AIOT_KIB,
		256 * AIOT_KIB, 256 * AIOT_KIB, 256 * AIOT_KIB, 256 * AIOT_KIB,
		MIB, MIB, 2 * MIB, 2 * MIB,
	};
	static struct iocb cbs[FN];
	static struct iovec iov[FN][4];
	long long pins0 = aiot_pins_out(), sub0 = aiot_stat("iocbs_submitted");
	long long comp0 = aiot_stat("iocbs_completed");
	int round, total = 0;

	for (round = 0; round < 3; round++) {
		uint64_t seed = 7300 + round, off[FN], pos = 0;
		uint8_t *mem = aiot_map(8 * MIB), *b[FN];
		int i, once = 0, full, status;
		pid_t pid;

		aiot_sync_write_pattern(fd, F_R, 8 * MIB, seed);
		for (i = 0; i < FN; i++) {
			b[i] = mem + pos;
			off[i] = F_R + pos;
			pos += sizes[i];
			if (round == 1) {
				/* vectored: four segments */
				int k;

				for (k = 0; k < 4; k++) {
					iov[i][k].iov_base = b[i] + k * (sizes[i] / 4);
					iov[i][k].iov_len = sizes[i] / 4;
				}
				aiot_prep_preadv(&cbs[i], fd, iov[i], 4, (long long)off[i]);
			} else {
				aiot_prep_pread(&cbs[i], fd, b[i], sizes[i], (long long)off[i]);
			}
		}
		fflush(stdout);
		fflush(stderr);
		/* submit, then fork at once, while the reads are in flight */
		{
			struct iocb *cbp[FN];
			int ret;

			for (i = 0; i < FN; i++) {
				cbs[i].data = (void *)(uintptr_t)(i + 1);
				cbp[i] = &cbs[i];
			}
			ret = aiot_submit(ctx, FN, cbp);
			CHECK(ret == FN, "io_submit: %s", aiot_rstr(ret));
		}
		pid = fork();
		if (pid < 0)
			aiot_die("fork: %s", strerror(errno));
		if (pid == 0) {
			size_t j;

			if (round == 2)
				usleep(20000);	/* after the reads, most likely */
			for (i = 0; i < FN; i++)
				memset(b[i], 0x3c, sizes[i]);
			/* its copies are its own: the reads must not land in them */
			usleep(50000);
			for (i = 0; i < FN; i++)
				for (j = 0; j < sizes[i]; j++)
					if (b[i][j] != 0x3c)
						_exit(2);
			_exit(0);
		}
		{
			struct io_event ev[FN];
			unsigned char seen[FN] = { 0 };
			int got = aiot_reap(ctx, FN, ev);

			full = 0;
			for (i = 0; i < got; i++) {
				int idx = aiot_event_iocb(&ev[i], cbs, FN, seen);

				if (idx < 0)
					continue;
				once++;
				full += CHECK((long)ev[i].res == (long)sizes[idx] && ev[i].res2 == 0,
					      "fork read %d: res %s", idx, aiot_rstr((long)ev[i].res));
			}
		}
		if (waitpid(pid, &status, 0) != pid)
			aiot_die("waitpid: %s", strerror(errno));
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
		for (i = 0; i < FN; i++) {
			char what[64];

			snprintf(what, sizeof(what), "fork round %d read %d", round, i);
			if (!aiot_verify(what, b[i], sizes[i], seed, off[i]))
				break;
		}
		aiot_R("fork-read round=%d n=%d completed-once=%d full=%d child=%d%s", round, FN,
		       once, full, WIFEXITED(status) ? WEXITSTATUS(status) : -1,
		       aiot_crcstr(mem, 8 * MIB));
		aiot_unmap(mem, 8 * MIB);
		total += FN;
	}
	kvec_count("fork", sub0, comp0, total);
	aiot_pins_settle("fork with reads in flight", pins0);
}

/* ------------------------------------------- io_destroy while submitting */

#define DN	256
#define DLEN	(16 * AIOT_KIB)

struct destroyer {
	io_context_t ctx;
	atomic_int progress;	/* iocbs queued so far */
	int threshold;
	int ret;
};

static void *destroy_thread(void *arg)
{
	struct destroyer *d = arg;

	while (atomic_load(&d->progress) < d->threshold)
		sched_yield();
	d->ret = io_destroy(d->ctx);
	return NULL;
}

static void test_destroy(void)
{
	static const int batch[4] = { 1, 1, 4, 8 };
	static const int thresh[4] = { DN / 4, 1, DN / 2, DN / 8 };
	static struct iocb cbs[DN];
	struct iocb *cbp[DN];
	uint8_t *bufs = aiot_alloc((size_t)DN * DLEN);
	long long pins0 = aiot_pins_out(), sub0 = aiot_stat("iocbs_submitted");
	long long comp0 = aiot_stat("iocbs_completed");
	long long all_queued = 0;
	int round;

	for (round = 0; round < 4; round++) {
		uint64_t old = 7400 + 2 * round, new = old + 1;
		struct destroyer d;
		struct io_event ev;
		struct timespec ts = { 0, 0 };
		pthread_t th;
		uint64_t cnt = 0;
		int i, ret, k = batch[round], queued = 0, refused = 0, first_refused = -1;
		int bad = 0, late = 0, efd;
		bool data_ok = true;

		aiot_sync_write_pattern(fd, D_BASE, (uint64_t)DN * DLEN, old);
		efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (efd < 0)
			aiot_die("eventfd: %s", strerror(errno));
		d.ctx = 0;
		if (io_setup(DN + 8, &d.ctx))
			aiot_die("io_setup: %s", strerror(errno));
		atomic_init(&d.progress, 0);
		d.threshold = thresh[round];
		d.ret = 1;
		for (i = 0; i < DN; i++) {
			uint64_t off = D_BASE + (uint64_t)i * DLEN;
			uint8_t *b = bufs + (size_t)i * DLEN;

			/* even ones write, odd ones read */
			aiot_prep_pattern(&cbs[i], !(i & 1), fd, b, DLEN, off, new);
			io_set_eventfd(&cbs[i], efd);
			cbp[i] = &cbs[i];
		}
		ret = pthread_create(&th, NULL, destroy_thread, &d);
		if (ret)
			aiot_die("pthread_create: %s", strerror(ret));
		for (i = 0; i < DN; i += k) {
			ret = aiot_submit(d.ctx, k, cbp + i);
			if (ret == k) {
				queued += k;
				late += first_refused >= 0;
				atomic_store(&d.progress, queued);
			} else if (ret == -EINVAL) {
				refused += k;
				if (first_refused < 0)
					first_refused = i;
			} else {
				bad++;
				CHECK(ret == k || ret == -EINVAL,
				      "destroy race: io_submit of %d at %d: %s", k, i,
				      aiot_rstr(ret));
			}
		}
		/* if it queued everything the destroyer may still be waiting */
		atomic_store(&d.progress, DN);
		pthread_join(th, NULL);
		CHECK(d.ret == 0, "io_destroy while submitting: %s", aiot_rstr(d.ret));
		CHECK(!late, "%d io_submit calls queued after one was refused", late);
		if (read(efd, &cnt, sizeof(cnt)) != sizeof(cnt))
			cnt = 0;	/* EAGAIN: none counted */
		close(efd);
		CHECK(cnt == (uint64_t)queued, "eventfd counted %llu, %d iocbs queued",
		      (unsigned long long)cnt, queued);
		/* raw syscall: libaio would look at the unmapped ring */
		ret = syscall(SYS_io_getevents, d.ctx, 1L, 1L, &ev, &ts) < 0 ? -errno : 0;
		CHECK(ret == -EINVAL, "io_getevents on the destroyed context: %s", aiot_rstr(ret));
		fprintf(stderr, "t-races: destroy round %d (batch %d, after %d): queued %d refused %d\n",
			round, k, d.threshold, queued, refused);

		/* queued ones did their I/O, refused ones none */
		for (i = 0; i < DN && data_ok; i++) {
			uint64_t off = D_BASE + (uint64_t)i * DLEN;
			const uint8_t *b = bufs + (size_t)i * DLEN;
			bool q = first_refused < 0 || i < first_refused;

			if (i & 1)
				data_ok = q ? aiot_verify("queued read", b, DLEN, old, off) :
					      aiot_verify_byte("refused read", b, DLEN, AIOT_POISON);
			else
				data_ok = aiot_sync_verify(fd, off, DLEN, q ? new : old);
		}
		aiot_R("destroy-race round=%d batch=%d io_destroy=%s queued-then-EINVAL=%s eventfd-counts-queued=%s data=%s",
		       round, k, aiot_rstr(d.ret), !late && !bad ? "yes" : "no",
		       cnt == (uint64_t)queued ? "yes" : "no", data_ok ? "ok" : "bad");
		all_queued += queued;
	}
	free(bufs);
	kvec_count("destroy race", sub0, comp0, all_queued);
	aiot_pins_settle("io_destroy race", pins0);
}

/* ---------------------------------------------------------- verified I/O */

#define VN	32			/* iocbs per batch: 16 writes, 16 reads */
#define VSLOT	(64 * AIOT_KIB)
#define VGROUP	(16 * VSLOT)		/* four groups of 16 slots */

struct vio {
	int ios, once, full;
};

/*
 * @batches batches of 32 iocbs on [base, base + 4 MiB): batch b writes the
 * 16 slots of group b % 4 and reads back group (b + 3) % 4, written by the
 * batch before, so nothing in flight overlaps; every 4th iocb is vectored.
 * Reads verified as they come, all groups with pread(2) at the end.
 */
static void verified_io(uint64_t base, int batches, uint64_t seed0, uint8_t *bufs,
			struct vio *v)
{
	static struct iocb cbs[VN];
	static struct iovec iov[VN][4];
	uint64_t gseed[4], next = seed0 + 4;
	size_t len[VN];
	uint64_t off[VN];
	int b, i, g;

	for (g = 0; g < 4; g++) {
		gseed[g] = seed0 + g;
		aiot_sync_write_pattern(fd, base + (uint64_t)g * VGROUP, VGROUP, gseed[g]);
	}
	for (b = 0; b < batches; b++) {
		int wg = b % 4, rg = (b + 3) % 4;
		uint64_t snew = next++;

		for (i = 0; i < VN; i++) {
			uint8_t *p = bufs + (size_t)i * VSLOT;
			bool write = !(i & 1), vec = i % 4 >= 2;
			int slot = i / 2;

			if (write) {
				off[i] = base + (uint64_t)wg * VGROUP + (uint64_t)slot * VSLOT;
				len[i] = VSLOT;
				aiot_fill(p, len[i], snew, off[i]);
			} else {
				off[i] = base + (uint64_t)rg * VGROUP + (uint64_t)slot * VSLOT;
				len[i] = (size_t)(1 + (i * 7 + b) % 16) * 4096;
				/* four segments of whole logical blocks */
				if (vec)
					len[i] = aiot_round_up(len[i], 4 * aiot.lbs);
				memset(p, AIOT_POISON, len[i]);
			}
			if (vec) {
				int k;

				for (k = 0; k < 4; k++) {
					iov[i][k].iov_base = p + k * (len[i] / 4);
					iov[i][k].iov_len = len[i] / 4;
				}
				if (write)
					aiot_prep_pwritev(&cbs[i], fd, iov[i], 4, (long long)off[i]);
				else
					aiot_prep_preadv(&cbs[i], fd, iov[i], 4, (long long)off[i]);
			} else {
				aiot_prep_rw(&cbs[i], write, fd, p, len[i], (long long)off[i], 0);
			}
		}
		v->full += submit_reap(cbs, VN, len, &v->once);
		v->ios += VN;
		for (i = 1; i < VN; i += 2) {
			char what[64];

			snprintf(what, sizeof(what), "batch %d read %d", b, i);
			if (!aiot_verify(what, bufs + (size_t)i * VSLOT, len[i], gseed[rg], off[i]))
				break;
		}
		gseed[wg] = snew;
	}
	for (g = 0; g < 4; g++)
		if (!aiot_sync_verify(fd, base + (uint64_t)g * VGROUP, VGROUP, gseed[g]))
			break;
}

/* ------------------------------------------------------ memory pressure */

struct pressure {
	volatile int stop, started;
	volatile long cycles, peak_mib;
};

static long long meminfo_kib(const char *key)
{
	char k[64];
	long long v, found = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld kB", k, &v) == 2)
		if (!strncmp(k, key, strlen(key)) && k[strlen(key)] == ':')
			found = v;
	fclose(f);
	return found;
}

#define PCHUNK	(32 * MIB)

/* Map and touch up to @target bytes, never below @floor_kib available; again. */
static void pressure_child(struct pressure *ps, size_t target, long long floor_kib)
{
	static void *chunk[256];

	while (!ps->stop) {
		size_t mapped = 0;
		int n = 0, i;

		while (!ps->stop && mapped + PCHUNK <= target && n < 256) {
			uint8_t *p;
			size_t j;

			if (meminfo_kib("MemAvailable") < floor_kib + (long long)(PCHUNK / 1024))
				break;
			p = mmap(NULL, PCHUNK, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
			if (p == MAP_FAILED)
				break;
			for (j = 0; j < PCHUNK; j += AIOT_PAGE)
				p[j] = (uint8_t)j;
			chunk[n++] = p;
			mapped += PCHUNK;
			ps->started = 1;
		}
		if ((long)(mapped / MIB) > ps->peak_mib)
			ps->peak_mib = (long)(mapped / MIB);
		for (i = 0; i < n; i++)
			munmap(chunk[i], PCHUNK);
		ps->cycles++;
		ps->started = 1;
	}
}

static void test_pressure(void)
{
	struct pressure *ps;
	struct vio v = { 0 };
	uint8_t *bufs = aiot_alloc((size_t)VN * VSLOT);
	long long avail = meminfo_kib("MemAvailable"), total = meminfo_kib("MemTotal");
	long long floor_kib, pins0 = aiot_pins_out();
	size_t target;
	int status, i;
	pid_t pid;

	if (avail <= 0 || total <= 0) {
		aiot_R("mempressure not-run (no /proc/meminfo)");
		free(bufs);
		return;
	}
	/* keep a tenth of memory (at least 96 MiB) free: pressure, not OOM */
	floor_kib = total / 10 > 96 * 1024 ? total / 10 : 96 * 1024;
	target = (size_t)(avail * 7 / 10) * 1024;
	ps = mmap(NULL, AIOT_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ps == MAP_FAILED)
		aiot_die("mmap shared: %s", strerror(errno));
	memset(ps, 0, sizeof(*ps));
	/* pre-write the area first: brd and null_blk then allocate nothing under pressure */
	for (i = 0; i < 4; i++)
		aiot_sync_write_pattern(fd, P_BASE + (uint64_t)i * VGROUP, VGROUP, 7500);
	pid = aiot_fork();
	if (pid == 0) {
		free(bufs);	/* the parent's I/O buffers */
		pressure_child(ps, target, floor_kib);
		_exit(0);
	}
	for (i = 0; i < AIOT_TIMEOUT_S * 100 && !ps->started; i++)
		usleep(10000);
	CHECK(ps->started, "pressure child did not start");
	verified_io(P_BASE, 16, 7600, bufs, &v);
	ps->stop = 1;
	if (waitpid(pid, &status, 0) != pid)
		aiot_die("waitpid: %s", strerror(errno));
	fprintf(stderr, "t-races: pressure: MemAvailable %lld kB, target %zu MiB, peak %ld MiB, %ld cycles during the I/O\n",
		avail, (size_t)(target / MIB), ps->peak_mib, ps->cycles);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "pressure child: status %#x (%s)", status,
	      WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "exit");
	aiot_R("mempressure ios=%d completed-once=%d full=%d child-exit=%d", v.ios, v.once,
	       v.full, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	munmap(ps, AIOT_PAGE);
	free(bufs);
	aiot_pins_settle("memory pressure", pins0);
}

/* ------------------------------------------------ mode switch under load */

static char sysctl_saved[16];
static atomic_int flip_stop;
static long flips;

static void sysctl_restore(void)
{
	if (sysctl_saved[0])
		aiot_sysctl_write(sysctl_saved);
}

static void *flipper(void *arg)
{
	static const char *const vals[] = { "0", "1", "2" };
	struct timespec ts = { 0, 200000 };
	int err;

	(void)arg;
	while (!atomic_load(&flip_stop)) {
		err = aiot_sysctl_write(vals[flips % 3]);
		if (err) {
			CHECK(err == 0, "flipping %s: %s", SYSCTL, aiot_rstr(err));
			break;
		}
		flips++;
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void test_modeswitch(void)
{
	struct vio v = { 0 };
	uint8_t *bufs;
	long long pins0 = aiot_pins_out(), sub0 = aiot_stat("iocbs_submitted");
	long long kio0 = aiot_stat("kiobuf_iocbs");
	pthread_t th;
	FILE *f;
	int ret;

	f = fopen(SYSCTL, "r");
	if (!f || access(SYSCTL, W_OK)) {
		if (f)
			fclose(f);
		aiot_R("modeswitch not-run (no %s)", SYSCTL);
		return;
	}
	if (!fgets(sysctl_saved, sizeof(sysctl_saved), f))
		sysctl_saved[0] = 0;
	fclose(f);
	sysctl_saved[strcspn(sysctl_saved, "\n")] = 0;
	atexit(sysctl_restore);
	bufs = aiot_alloc((size_t)VN * VSLOT);

	atomic_init(&flip_stop, 0);
	ret = pthread_create(&th, NULL, flipper, NULL);
	if (ret)
		aiot_die("pthread_create: %s", strerror(ret));
	verified_io(S_BASE, 64, 7700, bufs, &v);
	atomic_store(&flip_stop, 1);
	pthread_join(th, NULL);
	sysctl_restore();
	fprintf(stderr, "t-races: modeswitch: %ld flips; kvec iocbs +%lld (kiobuf +%lld) of %d\n",
		flips, aiot_stat("iocbs_submitted") - sub0, aiot_stat("kiobuf_iocbs") - kio0, v.ios);
	aiot_R("modeswitch ios=%d completed-once=%d full=%d", v.ios, v.once, v.full);
	free(bufs);
	aiot_pins_settle("mode switch", pins0);
}

int main(void)
{
	aiot_init("t-races");
	aiot_require_size(DEV_END);
	fd = aiot_open_dev(O_RDWR | O_DIRECT);
	ctx = aiot_ctx(64);

	test_munmap();
	test_fork();
	test_destroy();
	test_pressure();
	test_modeswitch();

	aiot_ctx_destroy(ctx);
	close(fd);
	return aiot_finish();
}
