// SPDX-License-Identifier: GPL-2.0
/*
 * aio-bench: a minimal libaio load generator for comparing the stock and
 * the kvec O_DIRECT paths on one block device (or a regular file).
 *
 * One process, one io_context, qd page-aligned buffers.  I/Os are submitted
 * in io_submit calls of up to --batch iocbs and reaped with io_getevents
 * waiting for --batch events (fewer when fewer are in flight), so qd I/Os
 * stay in flight until --ios have been submitted or --time has passed; the
 * rest is then drained.  --kvec sets IOCB_FLAG_KVEC on every iocb; --fixed
 * registers the buffers once (registered kvecs) and names them per iocb.
 * --uring does the same through io_uring (with --fixed, its registered
 * buffers), the reference the kvec paths are measured against; --regfile
 * and --submit-wait add what fio's t/io_uring adds: a registered file, and
 * the last submission of each round waiting for its events in the same
 * io_uring_enter(), one system call where libaio makes two.  --thp puts
 * the buffers side by side in transparent huge pages, and fails if the
 * kernel does not back them with huge pages.
 *
 * Reported: IOPS, MiB/s, CPU time of the run, submit latency (one io_submit
 * call's time divided among the iocbs it queued) and completion latency
 * (from just before an iocb's io_submit to the return of the io_getevents
 * that reaped it), and the deltas of /proc/fs/aio_kvec per I/O, which show
 * whether the kvec path really ran: those counters are global, so other
 * aio on the system during the run shows up in them too.
 *
 * Random offsets come from a fixed-seed xorshift64, so runs are repeatable.
 * Exit status: 0 success, 1 error (including any short or failed I/O),
 * 2 usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libaio.h>
#include <liburing.h>
#include <linux/fs.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kvec-aio.h"
#include "thp-buf.h"

#define IOCB_FLAG_KVEC		KVEC_AIO_FLAG_KVEC

#ifndef STATS_FILE
#define STATS_FILE		"/proc/fs/aio_kvec"	/* -D for testing the parser */
#endif
#define BUF_ALIGN		4096
#define DEF_IOS			100000
/* Latency samples kept per kind (8 bytes each); later I/Os are not sampled. */
#define LAT_MAX			(4u << 20)
#define LAT_GROW_MIN		(64u << 10)
#define SEED_OFFSETS		0x9e3779b97f4a7c15ULL
#define SEED_DATA		0x6b7665632d61696fULL	/* "kvec-aio" */

static const char *prog = "aio-bench";

enum rw_mode { RW_RANDREAD, RW_RANDWRITE, RW_READ, RW_WRITE };
static const char *const rw_names[] = {
	[RW_RANDREAD] = "randread", [RW_RANDWRITE] = "randwrite",
	[RW_READ] = "read", [RW_WRITE] = "write",
};

struct opts {
	const char *dev;
	enum rw_mode rw;
	uint64_t bs;
	unsigned int qd;
	unsigned int batch;	/* 0: = qd */
	uint64_t ios;		/* I/Os to submit; 0 in --time mode */
	double time_s;		/* > 0: --time mode */
	bool kvec;
	bool fixed;		/* registered buffers: one per slot */
	bool uring;		/* io_uring instead of libaio, for reference */
	bool regfile;		/* io_uring: the file registered (fixed file) */
	bool submit_wait;	/* io_uring: submit and wait in one enter */
	bool thp;		/* buffers in transparent huge pages */
	uint64_t size;		/* 0: whole device */
	uint64_t align;		/* random offsets; 0: = bs */
	bool json;
};

/* Slots: one buffer and iocb each, qd of them, recycled through a stack. */
struct slot {
	struct iocb cb;
	void *buf;
	unsigned int index;	/* registered buffer number, with --fixed */
	long long off;		/* device offset of the I/O in flight */
	uint64_t t_sub;		/* ns, just before the io_submit that queued it */
};

struct lat {
	uint64_t *v;		/* ns */
	size_t n, cap;
	bool fixed;		/* preallocated for --ios: never grows */
};

/* The /proc/fs/aio_kvec counters reported, in output order. */
enum { KS_IOCBS, KS_BIOS, KS_ARRAYS, KS_PINNED, KS_FIXED, KS_NR };
static const char *const ks_names[KS_NR] = {
	"iocbs_submitted", "bios", "array_allocs", "pages_pinned", "fixed_iocbs",
};
static const char *const ks_keys[KS_NR] = {
	"iocbs_per_io", "bios_per_io", "array_allocs_per_io", "pages_pinned_per_io",
	"fixed_iocbs_per_io",
};

struct kstats {
	bool present;		/* the file exists */
	bool have[KS_NR];
	long long v[KS_NR];
};

struct pct {
	double p50, p99, p999;	/* us */
};

/* ---------------------------------------------------------------- misc */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s --dev PATH [options]\n"
		"  --dev PATH           block device or file, opened O_DIRECT\n"
		"  --rw MODE            randread (default), randwrite, read, write\n"
		"  --bs BYTES           I/O size, k/m/g suffix ok (default 4k)\n"
		"  --qd N               I/Os in flight (default 1)\n"
		"  --batch N            iocbs per io_submit, events per wait (default qd)\n"
		"  --ios N              I/Os to run (default %d)\n"
		"  --time SECONDS       run for this long instead of --ios\n"
		"  --kvec               set IOCB_FLAG_KVEC on every iocb\n"
		"  --fixed              registered buffers, each pinned once: kvecs\n"
		"                       (IOCB_CMD_KVEC_REGISTER, IOCB_FLAG_KVEC_FIXED),\n"
		"                       with --uring io_uring's (READ/WRITE_FIXED)\n"
		"  --uring              io_uring (liburing) instead of libaio, the same\n"
		"                       buffers, batches and reaping\n"
		"  --regfile            with --uring: register the file, IOSQE_FIXED_FILE\n"
		"  --submit-wait        with --uring: the submission before each reap\n"
		"                       also waits for its events (one io_uring_enter)\n"
		"  --size BYTES         use only the first BYTES of the device\n"
		"  --offset-align BYTES alignment of random offsets (default bs)\n"
		"  --thp                the buffers side by side in memory that\n"
		"                       transparent huge pages back (MADV_HUGEPAGE)\n"
		"  --json               one JSON object instead of key=value pairs\n"
		"  --help\n", prog, DEF_IOS);
}

/* "aio-bench: <message>" on stderr. */
static void vwarn_prog(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

__attribute__((format(printf, 1, 2), noreturn))
static void usage_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn_prog(fmt, ap);
	va_end(ap);
	usage(stderr);
	exit(2);
}

__attribute__((format(printf, 1, 2), noreturn))
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn_prog(fmt, ap);
	va_end(ap);
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static double tv_s(const struct timeval *tv)
{
	return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

/* xorshift64: never yields 0 from a non-zero state. */
static uint64_t xorshift64(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* "4096", "4k", "1M", "2g": binary multiples.  False on junk or overflow. */
static bool parse_bytes(const char *s, uint64_t *out)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return false;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	}
	if (*end || (v << shift) >> shift != v)
		return false;
	*out = v << shift;
	return true;
}

static bool parse_count(const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return false;
	*out = v;
	return true;
}

/* ------------------------------------------------------------- options */

static void parse_opts(int argc, char **argv, struct opts *o)
{
	enum { O_DEV = 256, O_RW, O_BS, O_QD, O_BATCH, O_IOS, O_TIME, O_KVEC,
	       O_FIXED, O_URING, O_REGFILE, O_SUBMIT_WAIT, O_SIZE, O_ALIGN, O_THP,
	       O_JSON, O_HELP };
	static const struct option lopts[] = {
		{ "dev", required_argument, NULL, O_DEV },
		{ "rw", required_argument, NULL, O_RW },
		{ "bs", required_argument, NULL, O_BS },
		{ "qd", required_argument, NULL, O_QD },
		{ "batch", required_argument, NULL, O_BATCH },
		{ "ios", required_argument, NULL, O_IOS },
		{ "time", required_argument, NULL, O_TIME },
		{ "kvec", no_argument, NULL, O_KVEC },
		{ "fixed", no_argument, NULL, O_FIXED },
		{ "uring", no_argument, NULL, O_URING },
		{ "regfile", no_argument, NULL, O_REGFILE },
		{ "submit-wait", no_argument, NULL, O_SUBMIT_WAIT },
		{ "size", required_argument, NULL, O_SIZE },
		{ "offset-align", required_argument, NULL, O_ALIGN },
		{ "thp", no_argument, NULL, O_THP },
		{ "json", no_argument, NULL, O_JSON },
		{ "help", no_argument, NULL, O_HELP },
		{ NULL, 0, NULL, 0 },
	};
	bool have_ios = false;
	uint64_t v;
	char *end;
	int c;
	size_t i;

	*o = (struct opts){ .rw = RW_RANDREAD, .bs = 4096, .qd = 1 };
	opterr = 0;	/* our own messages (":" tells a missing argument), exit 2 */
	while ((c = getopt_long(argc, argv, ":", lopts, NULL)) != -1) {
		switch (c) {
		case O_DEV:
			o->dev = optarg;
			break;
		case O_RW:
			for (i = 0; i < sizeof(rw_names) / sizeof(rw_names[0]); i++)
				if (!strcmp(optarg, rw_names[i]))
					break;
			if (i == sizeof(rw_names) / sizeof(rw_names[0]))
				usage_err("bad --rw '%s'", optarg);
			o->rw = (enum rw_mode)i;
			break;
		case O_BS:
			if (!parse_bytes(optarg, &o->bs) || !o->bs || o->bs > (1U << 30))
				usage_err("bad --bs '%s' (1 .. 1g)", optarg);
			break;
		case O_QD:
			if (!parse_count(optarg, 65536, &v) || !v)
				usage_err("bad --qd '%s' (1 .. 65536)", optarg);
			o->qd = (unsigned int)v;
			break;
		case O_BATCH:
			if (!parse_count(optarg, 65536, &v) || !v)
				usage_err("bad --batch '%s' (1 .. 65536)", optarg);
			o->batch = (unsigned int)v;
			break;
		case O_IOS:
			if (!parse_count(optarg, UINT64_MAX, &o->ios) || !o->ios)
				usage_err("bad --ios '%s'", optarg);
			have_ios = true;
			break;
		case O_TIME:
			errno = 0;
			o->time_s = strtod(optarg, &end);
			if (errno || *end || end == optarg || !isfinite(o->time_s) ||
			    o->time_s <= 0 || o->time_s > 1e7)
				usage_err("bad --time '%s'", optarg);
			break;
		case O_KVEC:
			o->kvec = true;
			break;
		case O_FIXED:
			o->fixed = true;
			break;
		case O_URING:
			o->uring = true;
			break;
		case O_REGFILE:
			o->regfile = true;
			break;
		case O_SUBMIT_WAIT:
			o->submit_wait = true;
			break;
		case O_SIZE:
			if (!parse_bytes(optarg, &o->size) || !o->size)
				usage_err("bad --size '%s'", optarg);
			break;
		case O_ALIGN:
			if (!parse_bytes(optarg, &o->align) || !o->align)
				usage_err("bad --offset-align '%s'", optarg);
			break;
		case O_THP:
			o->thp = true;
			break;
		case O_JSON:
			o->json = true;
			break;
		case O_HELP:
			usage(stdout);
			exit(0);
		case ':':
			usage_err("%s needs an argument", argv[optind - 1]);
		default:
			usage_err("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage_err("stray argument '%s'", argv[optind]);
	if (!o->dev)
		usage_err("--dev is required");
	if (have_ios && o->time_s > 0)
		usage_err("--ios and --time exclude each other");
	if (o->uring && o->kvec)
		usage_err("--kvec is an aio flag; --uring does not take it");
	if ((o->regfile || o->submit_wait) && !o->uring)
		usage_err("--regfile and --submit-wait are io_uring's: add --uring");
	if (o->thp && o->bs % BUF_ALIGN)
		usage_err("--thp: --bs must be a multiple of %u", BUF_ALIGN);
	if (!o->batch)
		o->batch = o->qd;
	if (o->batch > o->qd)
		usage_err("--batch %u exceeds --qd %u", o->batch, o->qd);
	if (!o->align)
		o->align = o->bs;
	if (!have_ios && o->time_s <= 0)
		o->ios = DEF_IOS;
}

static void prep_iocb(const struct opts *o, struct slot *s, int fd, bool is_write)
{
	if (is_write)
		io_prep_pwrite(&s->cb, fd, s->buf, o->bs, s->off);
	else
		io_prep_pread(&s->cb, fd, s->buf, o->bs, s->off);
	if (o->kvec)
		s->cb.u.c.flags |= IOCB_FLAG_KVEC;
	if (o->fixed)
		kvec_aio_use_fixed(&s->cb, s->index);
	s->cb.data = s;
}

static void prep_sqe(struct io_uring *ring, const struct opts *o, struct slot *s,
		     int fd, bool is_write)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe)
		die("io_uring: no free sqe");	/* never: at most qd in flight */
	if (o->fixed && is_write)
		io_uring_prep_write_fixed(sqe, fd, s->buf, o->bs, s->off, s->index);
	else if (o->fixed)
		io_uring_prep_read_fixed(sqe, fd, s->buf, o->bs, s->off, s->index);
	else if (is_write)
		io_uring_prep_write(sqe, fd, s->buf, o->bs, s->off);
	else
		io_uring_prep_read(sqe, fd, s->buf, o->bs, s->off);
	if (o->regfile) {
		sqe->fd = 0;	/* index 0 of the registered files */
		sqe->flags |= IOSQE_FIXED_FILE;
	}
	io_uring_sqe_set_data(sqe, s);
}

/*
 * Wait for at least @min completions and take up to @max, as io_events so
 * that the caller treats both interfaces alike.  Returns the number taken.
 */
static int reap_uring(struct io_uring *ring, unsigned int min, unsigned int max,
		      struct io_event *ev)
{
	struct io_uring_cqe *cqe;
	unsigned int head, n = 0;
	int ret;

	ret = io_uring_wait_cqe_nr(ring, &cqe, min);
	if (ret)
		return ret;
	io_uring_for_each_cqe(ring, head, cqe) {
		if (n == max)
			break;
		ev[n].data = io_uring_cqe_get_data(cqe);
		ev[n].res = cqe->res;
		n++;
	}
	io_uring_cq_advance(ring, n);
	return (int)n;
}

/*
 * Register every slot's buffer, buffer i for slot i, with the aio context
 * (registered kvecs) or the ring (io_uring's registered buffers).
 */
static void register_bufs(io_context_t ctx, struct io_uring *ring,
			  struct slot *slots, unsigned int n, uint64_t bs)
{
	struct iovec *iov = calloc(n, sizeof(*iov));
	unsigned int i;
	int ret;

	if (!iov)
		die("out of memory for %u iovecs", n);
	if (n > KVEC_AIO_MAX_BUFS)
		die("--fixed: at most %u buffers (qd)", KVEC_AIO_MAX_BUFS);
	for (i = 0; i < n; i++) {
		iov[i].iov_base = slots[i].buf;
		iov[i].iov_len = bs;
		slots[i].index = i;
	}
	if (ring) {
		ret = io_uring_register_buffers(ring, iov, n);
		if (ret)
			die("--fixed: io_uring_register_buffers: %s", strerror(-ret));
		ret = (int)n;
	} else {
		ret = kvec_aio_register(ctx, iov, n);
	}
	if (ret != (int)n)
		die("--fixed: registering %u buffers: %s", n,
		    ret < 0 ? strerror(-ret) : "short count");
	free(iov);
}

/* ------------------------------------------------------------- latency */

static void lat_init(struct lat *l, uint64_t ios)
{
	l->n = 0;
	l->fixed = ios > 0;
	l->cap = ios ? (ios < LAT_MAX ? ios : LAT_MAX) : LAT_GROW_MIN;
	l->v = malloc(l->cap * sizeof(*l->v));
	if (!l->v)
		die("out of memory for %zu latency samples", l->cap);
}

static void lat_add(struct lat *l, uint64_t ns)
{
	if (l->n == l->cap) {
		size_t cap = l->cap * 2 < LAT_MAX ? l->cap * 2 : LAT_MAX;
		uint64_t *v;

		if (l->fixed || cap == l->cap)
			return;
		v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			die("out of memory for %zu latency samples", cap);
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = ns;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Nearest rank: the smallest sample with at least p/1000 of all at or below. */
static double lat_rank_us(const struct lat *l, unsigned int permille)
{
	size_t k = (l->n * permille + 999) / 1000;

	return (double)l->v[k ? k - 1 : 0] / 1e3;
}

static struct pct lat_pct(struct lat *l)
{
	struct pct p = { 0, 0, 0 };

	if (!l->n)
		return p;
	qsort(l->v, l->n, sizeof(*l->v), cmp_u64);
	p.p50 = lat_rank_us(l, 500);
	p.p99 = lat_rank_us(l, 990);
	p.p999 = lat_rank_us(l, 999);
	return p;
}

/* ------------------------------------------------------------- kstats */

static void kstats_read(struct kstats *ks)
{
	FILE *f = fopen(STATS_FILE, "r");
	char key[128];
	long long v;
	int i;

	memset(ks, 0, sizeof(*ks));
	if (!f)
		return;
	ks->present = true;
	while (fscanf(f, "%127s %lld", key, &v) == 2) {
		for (i = 0; i < KS_NR; i++) {
			if (!strcmp(key, ks_names[i])) {
				ks->have[i] = true;
				ks->v[i] = v;
			}
		}
	}
	fclose(f);
}

/* ---------------------------------------------------------------- output */

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

struct result {
	uint64_t ios;
	double seconds, usr_s, sys_s;
	struct pct slat, clat;
	bool ks_present, ks_have[KS_NR];
	double ks_per_io[KS_NR];
	long long thp_bytes;	/* of the buffers, with --thp; else -1 */
};

static void report(const struct opts *o, const struct result *r)
{
	double iops = (double)r->ios / r->seconds;
	double mib_s = (double)r->ios * (double)o->bs / r->seconds / (1024.0 * 1024.0);
	int i;

	if (!o->json) {
		printf("dev=%s rw=%s bs=%llu qd=%u batch=%u kvec=%d fixed=%d uring=%d"
		       " regfile=%d submit_wait=%d ios=%llu seconds=%.6f"
		       " iops=%.1f mib_s=%.2f usr_s=%.3f sys_s=%.3f"
		       " submit_lat_p50_us=%.2f submit_lat_p99_us=%.2f submit_lat_p999_us=%.2f"
		       " clat_p50_us=%.2f clat_p99_us=%.2f clat_p999_us=%.2f",
		       o->dev, rw_names[o->rw], (unsigned long long)o->bs, o->qd, o->batch,
		       o->kvec, o->fixed, o->uring, o->regfile, o->submit_wait,
		       (unsigned long long)r->ios, r->seconds,
		       iops, mib_s,
		       r->usr_s, r->sys_s, r->slat.p50, r->slat.p99, r->slat.p999,
		       r->clat.p50, r->clat.p99, r->clat.p999);
		if (r->thp_bytes >= 0)
			printf(" thp_bytes=%lld", r->thp_bytes);
		if (!r->ks_present)
			printf(" kvec_stats=none");
		for (i = 0; r->ks_present && i < KS_NR; i++) {
			if (r->ks_have[i])
				printf(" kvec_%s=%.4f", ks_keys[i], r->ks_per_io[i]);
			else
				printf(" kvec_%s=none", ks_keys[i]);
		}
		putchar('\n');
		return;
	}

	printf("{\"dev\":");
	json_str(o->dev);
	printf(",\"rw\":\"%s\",\"bs\":%llu,\"qd\":%u,\"batch\":%u,\"kvec\":%s,\"fixed\":%s"
	       ",\"uring\":%s,\"regfile\":%s,\"submit_wait\":%s"
	       ",\"ios\":%llu,\"seconds\":%.6f,\"iops\":%.1f,\"mib_s\":%.2f"
	       ",\"usr_s\":%.3f,\"sys_s\":%.3f"
	       ",\"submit_lat_us\":{\"p50\":%.2f,\"p99\":%.2f,\"p999\":%.2f}"
	       ",\"clat_us\":{\"p50\":%.2f,\"p99\":%.2f,\"p999\":%.2f}",
	       rw_names[o->rw], (unsigned long long)o->bs, o->qd, o->batch,
	       o->kvec ? "true" : "false", o->fixed ? "true" : "false",
	       o->uring ? "true" : "false", o->regfile ? "true" : "false",
	       o->submit_wait ? "true" : "false",
	       (unsigned long long)r->ios, r->seconds,
	       iops, mib_s, r->usr_s, r->sys_s, r->slat.p50, r->slat.p99,
	       r->slat.p999, r->clat.p50, r->clat.p99, r->clat.p999);
	if (r->thp_bytes >= 0)
		printf(",\"thp_bytes\":%lld", r->thp_bytes);
	printf(",\"kvec_stats\":");
	if (!r->ks_present) {
		printf("null}\n");
		return;
	}
	for (i = 0; i < KS_NR; i++) {
		printf("%s\"%s\":", i ? "," : "{", ks_keys[i]);
		if (r->ks_have[i])
			printf("%.4f", r->ks_per_io[i]);
		else
			printf("null");
	}
	printf("}}\n");
}

/* ---------------------------------------------------------------- main */

static uint64_t dev_size(int fd, const char *path)
{
	struct stat st;
	uint64_t size;

	if (fstat(fd, &st))
		die("fstat %s: %s", path, strerror(errno));
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(fd, BLKGETSIZE64, &size))
			die("BLKGETSIZE64 %s: %s", path, strerror(errno));
		return size;
	}
	if (S_ISREG(st.st_mode))
		return (uint64_t)st.st_size;
	die("%s: neither a block device nor a regular file", path);
}

int main(int argc, char **argv)
{
	struct opts o;
	struct result r;
	struct kstats ks0, ks1;
	struct rusage ru0, ru1;
	struct slot *slots;
	struct slot **freel;
	struct iocb **cbs;
	struct io_event *ev;
	struct slot **pending;	/* the slots of one submission, in order */
	struct io_uring ring;
	struct lat slat, clat;
	io_context_t ctx = 0;
	uint64_t size, nblocks, seq = 0, rng = SEED_OFFSETS, drng = SEED_DATA;
	uint64_t submitted = 0, completed = 0, t_start, t_end, deadline = 0;
	bool is_write, is_rand, stop = false;
	unsigned int i, nfree, inflight = 0;
	char *thp_region = NULL;
	size_t thp_len = 0;
	long long thp_bytes;
	int fd, ret, j;

	parse_opts(argc, argv, &o);
	is_write = o.rw == RW_WRITE || o.rw == RW_RANDWRITE;
	is_rand = o.rw == RW_RANDREAD || o.rw == RW_RANDWRITE;

	fd = open(o.dev, (is_write ? O_RDWR : O_RDONLY) | O_DIRECT);
	if (fd < 0)
		die("open %s: %s", o.dev, strerror(errno));
	size = dev_size(fd, o.dev);
	if (o.size && o.size < size)
		size = o.size;
	if (size < o.bs)
		die("%s: %llu bytes, less than one I/O of %llu", o.dev,
		    (unsigned long long)size, (unsigned long long)o.bs);
	/* Random offsets: multiples of align that leave room for a whole I/O. */
	nblocks = (size - o.bs) / o.align + 1;

	slots = calloc(o.qd, sizeof(*slots));
	freel = calloc(o.qd, sizeof(*freel));
	cbs = calloc(o.batch, sizeof(*cbs));
	pending = calloc(o.batch, sizeof(*pending));
	ev = calloc(o.qd, sizeof(*ev));
	if (!slots || !freel || !cbs || !pending || !ev)
		die("out of memory for %u slots", o.qd);
	/* --thp: one region, the buffers side by side in its huge pages */
	if (o.thp) {
		thp_len = ((size_t)o.qd * o.bs + THP_BUF_SIZE - 1) &
			  ~(THP_BUF_SIZE - 1);
		thp_region = thp_buf_map(thp_len);
		if (!thp_region)
			die("--thp: %zu bytes in huge pages: %s", thp_len,
			    strerror(errno));
	}
	for (i = 0; i < o.qd; i++) {
		if (o.thp) {
			slots[i].buf = thp_region + (size_t)i * o.bs;
		} else {
			ret = posix_memalign(&slots[i].buf, BUF_ALIGN, o.bs);
			if (ret)
				die("posix_memalign %llu: %s",
				    (unsigned long long)o.bs, strerror(ret));
		}
		/*
		 * Write data is random rather than constant so that no layer
		 * below can shortcut it (zero detection, compression); reads
		 * get the buffer touched so the first I/Os do not pay the
		 * page faults.
		 */
		if (is_write) {
			uint64_t *w = slots[i].buf;
			size_t k;

			for (k = 0; k < o.bs / 8; k++)
				w[k] = xorshift64(&drng);
			memset((char *)slots[i].buf + k * 8, 0x5a, o.bs % 8);
		} else {
			memset(slots[i].buf, 0, o.bs);
		}
		freel[i] = &slots[i];
	}
	nfree = o.qd;
	/* a --thp figure is only one if the buffers really are huge pages */
	thp_bytes = o.thp ? thp_buf_backed(thp_region, thp_len) : -1;
	if (o.thp && (thp_bytes <= 0 ||
		      (size_t)thp_bytes < ((size_t)o.qd * o.bs & ~(THP_BUF_SIZE - 1))))
		die("--thp: only %lld of %llu buffer bytes in huge pages", thp_bytes,
		    (unsigned long long)o.qd * o.bs);

	if (o.uring) {
		ret = io_uring_queue_init(o.qd, &ring, 0);
		if (ret)
			die("io_uring_queue_init(%u): %s", o.qd, strerror(-ret));
	} else {
		ret = io_setup((int)o.qd, &ctx);
		if (ret)
			die("io_setup(%u): %s", o.qd, strerror(-ret));
	}
	if (o.fixed)
		register_bufs(ctx, o.uring ? &ring : NULL, slots, o.qd, o.bs);
	if (o.regfile) {
		ret = io_uring_register_files(&ring, &fd, 1);
		if (ret)
			die("--regfile: io_uring_register_files: %s", strerror(-ret));
	}
	lat_init(&slat, o.ios);
	lat_init(&clat, o.ios);

	kstats_read(&ks0);
	getrusage(RUSAGE_SELF, &ru0);
	t_start = t_end = now_ns();
	if (o.time_s > 0)
		deadline = t_start + (uint64_t)(o.time_s * 1e9);

	for (;;) {
		/* Top up to qd, in io_submit calls of at most batch iocbs. */
		while (!stop && nfree) {
			unsigned int n = nfree < o.batch ? nfree : o.batch;
			uint64_t t0, t1, per;

			if (o.ios && o.ios - submitted < n)
				n = (unsigned int)(o.ios - submitted);
			if (!n) {
				stop = true;
				break;
			}
			for (i = 0; i < n; i++) {
				struct slot *s = freel[--nfree];
				long long off;

				if (is_rand) {
					off = (long long)(xorshift64(&rng) % nblocks * o.align);
				} else {
					if (seq + o.bs > size)
						seq = 0;
					off = (long long)seq;
					seq += o.bs;
				}
				s->off = off;
				if (o.uring) {
					prep_sqe(&ring, &o, s, fd, is_write);
				} else {
					prep_iocb(&o, s, fd, is_write);
					cbs[i] = &s->cb;
				}
				pending[i] = s;
			}
			t0 = now_ns();
			if (o.submit_wait && !nfree) {
				/* the reap below then finds its events in the ring */
				unsigned int after = inflight + n;

				ret = io_uring_submit_and_wait(&ring,
						after < o.batch ? after : o.batch);
			} else if (o.uring) {
				ret = io_uring_submit(&ring);
			} else {
				ret = io_submit(ctx, n, cbs);
			}
			t1 = now_ns();
			/* A full queue is no error while completions can free it. */
			if (ret == -EAGAIN && inflight)
				ret = 0;
			if (ret < 0)
				die("io_submit: %s", strerror(-ret));
			if (!ret && !inflight)
				die("io_submit queued none of %u iocbs", n);
			per = ret ? (t1 - t0) / (uint64_t)ret : 0;
			for (j = 0; j < ret; j++) {
				pending[j]->t_sub = t0;
				lat_add(&slat, per);
			}
			/* io_uring keeps unsubmitted sqes queued; aio hands them back */
			if (o.uring && ret < (int)n)
				die("io_uring_submit queued %d of %u", ret, n);
			for (j = ret; j < (int)n; j++)
				freel[nfree++] = pending[j];
			inflight += (unsigned int)ret;
			submitted += (uint64_t)ret;
			if (ret < (int)n)
				break;	/* reap before trying again */
		}
		if (!inflight)
			break;

		if (o.uring)
			ret = reap_uring(&ring, inflight < o.batch ? inflight : o.batch,
					 o.qd, ev);
		else
			ret = io_getevents(ctx, inflight < o.batch ? inflight : o.batch,
					   o.qd, ev, NULL);
		if (ret == -EINTR)
			continue;
		if (ret < 0)
			die("%s: %s", o.uring ? "io_uring_wait_cqe_nr" : "io_getevents",
			    strerror(-ret));
		t_end = now_ns();
		for (j = 0; j < ret; j++) {
			struct slot *s = ev[j].data;
			long res = (long)ev[j].res;

			if (res < 0)
				die("%s at offset %lld: %s", rw_names[o.rw],
				    s->off, strerror((int)-res));
			if ((uint64_t)res != o.bs)
				die("%s at offset %lld: short I/O, %ld of %llu bytes",
				    rw_names[o.rw], s->off, res,
				    (unsigned long long)o.bs);
			lat_add(&clat, t_end - s->t_sub);
			freel[nfree++] = s;
		}
		inflight -= (unsigned int)ret;
		completed += (uint64_t)ret;
		if (deadline && t_end >= deadline)
			stop = true;
	}
	getrusage(RUSAGE_SELF, &ru1);
	kstats_read(&ks1);

	memset(&r, 0, sizeof(r));
	r.ios = completed;
	r.thp_bytes = thp_bytes;
	r.seconds = (double)(t_end - t_start) / 1e9;
	if (r.seconds <= 0)
		r.seconds = 1e-9;	/* keeps the rates finite */
	r.usr_s = tv_s(&ru1.ru_utime) - tv_s(&ru0.ru_utime);
	r.sys_s = tv_s(&ru1.ru_stime) - tv_s(&ru0.ru_stime);
	r.slat = lat_pct(&slat);
	r.clat = lat_pct(&clat);
	r.ks_present = ks0.present && ks1.present;
	for (j = 0; r.ks_present && j < KS_NR; j++) {
		r.ks_have[j] = ks0.have[j] && ks1.have[j];
		if (r.ks_have[j] && completed)
			r.ks_per_io[j] = (double)(ks1.v[j] - ks0.v[j]) / (double)completed;
	}
	report(&o, &r);

	if (o.uring)
		io_uring_queue_exit(&ring);
	else
		io_destroy(ctx);
	close(fd);
	if (o.thp)
		munmap(thp_region, thp_len);
	for (i = 0; !o.thp && i < o.qd; i++)
		free(slots[i].buf);
	free(slots);
	free(freel);
	free(cbs);
	free(pending);
	free(ev);
	free(slat.v);
	free(clat.v);
	return 0;
}
