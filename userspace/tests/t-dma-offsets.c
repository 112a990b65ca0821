// SPDX-License-Identifier: GPL-2.0
/*
 * t-dma-offsets: aio to and from buffers whose page offset is a multiple of
 * the DMA alignment but not of the logical block size (4, 1028, 4092 with
 * NVMe's 4-byte alignment), in reverse-faulted memory (one bvec per page), at
 * sizes that need several bios: no bio may end inside a logical block, so
 * every byte must round-trip through aio and match pread(2)'s reference.
 *
 *  - pwrite/pread of 2 MiB at each such offset, and 4 MiB at the first;
 *  - pwritev/preadv of three 49-page segments at offsets 4, 1028, 3584;
 *  - lengths just past max_sectors_kb, max_segments pages, 1 MiB, and of
 *    exactly 256 and 257 pages (BIO_MAX_VECS);
 *  - pwritev/preadv of 64 one-block segments at alternating offsets;
 *  - fixed write and read of 2 MiB through a registered buffer (kvec-aio.h).
 * On a device whose DMA alignment is the logical block size (brd, null_blk)
 * the offsets are block multiples and the test proves less (a note says so).
 */
#include "aiotest.h"
#include "kvec-aio.h"

#include <sys/mman.h>

#define MAXOFFS		3
#define SEG3_LEN	(49 * AIOT_PAGE)	/* 200704 bytes */
#define NSEG64		64
#define MAXBIG		(8 * AIOT_MIB)

/* A reverse-faulted anonymous mapping holding len bytes at page offset off. */
struct rbuf {
	uint8_t *map;
	size_t maplen;
	unsigned int off;
	uint8_t *buf;	/* map + off */
	size_t len;
};

static io_context_t ctx;
static int fd;
static int pagemap_fd = -1;
static unsigned int unit;	/* dma_mask + 1: the finest buffer alignment */
static uint64_t cursor;		/* next free device position */
static int ncases;

/*
 * Map len bytes at page offset off plus a poisoned guard page after them,
 * THP off, and fault the pages in from the last one down to the first: the
 * page allocator hands out ascending frames, so virtually adjacent pages
 * come out physically descending and no two of them merge into one bvec.
 */
static void rev_map(struct rbuf *b, size_t len, unsigned int off)
{
	size_t i;

	b->maplen = aiot_round_up(off + len, AIOT_PAGE) + AIOT_PAGE;
	b->map = mmap(NULL, b->maplen, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b->map == MAP_FAILED)
		aiot_die("mmap %zu: %s", b->maplen, strerror(errno));
	/* EINVAL without CONFIG_TRANSPARENT_HUGEPAGE: nothing to turn off */
	(void)madvise(b->map, b->maplen, MADV_NOHUGEPAGE);
	for (i = b->maplen / AIOT_PAGE; i-- > 0;)
		memset(b->map + i * AIOT_PAGE, AIOT_POISON, AIOT_PAGE);
	b->off = off;
	b->buf = b->map + off;
	b->len = len;
}

static void rev_unmap(struct rbuf *b)
{
	aiot_unmap(b->map, b->maplen);
	b->map = b->buf = NULL;
}

/* The poison before and after the read buffer is untouched. */
static void guards_ok(const struct rbuf *b, const char *tag)
{
	char what[128];

	snprintf(what, sizeof(what), "%s: bytes before the buffer", tag);
	aiot_verify_byte(what, b->map, b->off, AIOT_POISON);
	snprintf(what, sizeof(what), "%s: bytes after the buffer", tag);
	aiot_verify_byte(what, b->buf + b->len, b->maplen - b->off - b->len,
			 AIOT_POISON);
}

/*
 * Diagnostics only (stderr): how many virtually adjacent page pairs of
 * buf[0..len) are physically adjacent, from /proc/self/pagemap (needs
 * CAP_SYS_ADMIN for the frame numbers; silent without).
 */
static void note_contig(const char *tag, const void *buf, size_t len)
{
	const uint64_t pfn_mask = (1ULL << 55) - 1;
	uintptr_t first = (uintptr_t)buf / AIOT_PAGE;
	size_t n = ((uintptr_t)buf + len - 1) / AIOT_PAGE - first + 1, adj = 0, i;
	uint64_t *e;

	if (pagemap_fd < 0 || n < 2)
		return;
	e = calloc(n, sizeof(*e));
	if (!e)
		aiot_die("calloc");
	if (pread(pagemap_fd, e, n * sizeof(*e), (off_t)(first * sizeof(*e))) !=
	    (ssize_t)(n * sizeof(*e)))
		goto out;
	for (i = 0; i < n; i++)
		if (!(e[i] >> 63) || !(e[i] & pfn_mask))
			goto out;	/* not present, or frame numbers hidden */
	for (i = 1; i < n; i++)
		if ((e[i] & pfn_mask) == (e[i - 1] & pfn_mask) + 1)
			adj++;
	fprintf(stderr, "# %s: %zu of %zu page pairs physically contiguous\n",
		tag, adj, n - 1);
out:
	free(e);
}

/* A device position for len bytes: block aligned, a few blocks past the last. */
static uint64_t next_pos(uint64_t len)
{
	uint64_t pos = aiot_round_up(cursor + 5ULL * aiot.lbs, aiot.lbs);

	if (pos + len > aiot.size)
		pos = 3ULL * aiot.lbs;
	cursor = pos + len;
	return pos;
}

/*
 * Page offsets that are multiples of unit and, where the device allows any
 * (unit < lbs), not multiples of lbs: unit, 1028 rounded down to unit (or
 * up, if down is a block multiple), 3584 rounded down to unit, and
 * PAGE - unit (standing in for 3584 when that is a block multiple, as with
 * 4-byte alignment).  The first MAXOFFS that qualify; offset 0 alone if
 * unit is a whole page.
 */
static unsigned int pick_offsets(unsigned int *offs)
{
	bool strict = unit < aiot.lbs;
	uint64_t near1k = aiot_round_down(1028, unit);
	unsigned int n = 0, i, j;
	uint64_t want[4];

	if (strict && !(near1k % aiot.lbs))
		near1k = aiot_round_up(1028, unit);
	want[0] = unit;
	want[1] = near1k;
	want[2] = aiot_round_down(3584, unit);
	want[3] = AIOT_PAGE > unit ? AIOT_PAGE - unit : 0;

	for (i = 0; i < sizeof(want) / sizeof(want[0]) && n < MAXOFFS; i++) {
		if (!want[i] || want[i] >= AIOT_PAGE || (strict && !(want[i] % aiot.lbs)))
			continue;
		for (j = 0; j < n && offs[j] != want[i]; j++)
			;
		if (j == n)
			offs[n++] = (unsigned int)want[i];
	}
	if (!strict)
		fprintf(stderr, "# note: DMA alignment %u >= logical block size %u: every "
			"allowed buffer offset is a block multiple, so the mid-block bio "
			"split is not exercised on this device\n", unit, aiot.lbs);
	if (!n) {
		fprintf(stderr, "# note: DMA alignment %u: page-aligned buffers only\n", unit);
		offs[n++] = 0;
	}
	return n;
}

/*
 * One pwrite of the (seed, devoff) pattern from a reverse-faulted buffer at
 * page offset off, checked through pread(2); then one pread of it into a
 * fresh reverse-faulted buffer at the same offset, verified with its guards.
 */
static void rw_case(const char *name, unsigned int off, size_t len,
		    uint64_t devoff, uint64_t seed)
{
	struct aiot_res r;
	struct rbuf b;
	struct iocb cb;
	char tag[96];

	ncases++;
	rev_map(&b, len, off);
	snprintf(tag, sizeof(tag), "pwrite-%s-off%u len=%zu", name, off, len);
	note_contig(tag, b.buf, len);
	aiot_prep_pattern(&cb, 1, fd, b.buf, len, devoff, seed);
	r = aiot_submit_wait(ctx, &cb);
	aiot_report(tag, r, NULL, 0);
	CHECK(aiot_is(r, (long)len), "%s at %llu: %s", tag,
	      (unsigned long long)devoff, aiot_resstr(r));
	aiot_verify("write source after the write", b.buf, len, seed, devoff);
	aiot_sync_verify(fd, devoff, len, seed);
	rev_unmap(&b);

	rev_map(&b, len, off);
	snprintf(tag, sizeof(tag), "pread-%s-off%u len=%zu", name, off, len);
	aiot_prep_pattern(&cb, 0, fd, b.buf, len, devoff, seed);
	r = aiot_submit_wait(ctx, &cb);
	aiot_report(tag, r, b.buf, len);
	CHECK(aiot_is(r, (long)len), "%s at %llu: %s", tag,
	      (unsigned long long)devoff, aiot_resstr(r));
	aiot_verify(tag, b.buf, len, seed, devoff);
	guards_ok(&b, tag);
	rev_unmap(&b);
}

/* "R <tag> submit=.. res=.. crc=.." over the segments' bytes in iov order. */
static void report_segments(const char *tag, struct aiot_res r,
			    const struct iovec *iov, int n, size_t total)
{
	uint8_t *tmp;
	size_t pos = 0;
	int i;

	if (aiot.nodata || r.submit != 1) {
		aiot_report(tag, r, NULL, 0);
		return;
	}
	tmp = aiot_alloc(total);
	for (i = 0; i < n; i++) {
		memcpy(tmp + pos, iov[i].iov_base, iov[i].iov_len);
		pos += iov[i].iov_len;
	}
	aiot_report(tag, r, tmp, pos);
	free(tmp);
}

/* Each segment holds the pattern of its device position. */
static void verify_segments(const char *tag, const struct iovec *iov, int n,
			    uint64_t devoff, uint64_t seed)
{
	char what[128];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(what, sizeof(what), "%s segment %d", tag, i);
		if (!aiot_verify(what, iov[i].iov_base, iov[i].iov_len, seed, devoff))
			break;
		devoff += iov[i].iov_len;
	}
}

/* Three segments of @seglen, each in a reverse-faulted mapping at off[k]. */
static void map_segments(struct rbuf *b, struct iovec *iov, const unsigned int *off,
			 size_t seglen)
{
	int k;

	for (k = 0; k < 3; k++) {
		rev_map(&b[k], seglen, off[k]);
		iov[k].iov_base = b[k].buf;
		iov[k].iov_len = seglen;
	}
}

/*
 * PWRITEV then PREADV of three 49-page segments at page offsets 4, 1028 and
 * 3584 (rounded down to unit, unit if that is 0), each segment in its own
 * reverse-faulted mapping.
 */
static void vec3_case(uint64_t seed)
{
	const unsigned int want[3] = { 4, 1028, 3584 };
	size_t seglen = aiot_round_down(SEG3_LEN, aiot.lbs), total = 3 * seglen;
	struct rbuf b[3];
	struct iovec iov[3];
	struct aiot_res r;
	struct iocb cb;
	uint64_t devoff;
	unsigned int off[3];
	char tag[96];
	int k;

	if (unit > 3584) {
		fprintf(stderr, "# note: DMA alignment %u: no sub-page segment offsets\n",
			unit);
		aiot_R("pwritev-3seg skipped");
		return;
	}
	for (k = 0; k < 3; k++) {
		off[k] = (unsigned int)aiot_round_down(want[k], unit);
		if (!off[k])
			off[k] = unit;
	}
	ncases++;
	devoff = next_pos(total);

	map_segments(b, iov, off, seglen);
	for (k = 0; k < 3; k++)
		aiot_fill(b[k].buf, seglen, seed, devoff + k * seglen);
	snprintf(tag, sizeof(tag), "pwritev-3seg-off%u-%u-%u len=%zu", off[0], off[1],
		 off[2], total);
	aiot_prep_pwritev(&cb, fd, iov, 3, (long long)devoff);
	r = aiot_submit_wait(ctx, &cb);
	aiot_report(tag, r, NULL, 0);
	CHECK(aiot_is(r, (long)total), "%s at %llu: %s", tag,
	      (unsigned long long)devoff, aiot_resstr(r));
	aiot_sync_verify(fd, devoff, total, seed);
	for (k = 0; k < 3; k++)
		rev_unmap(&b[k]);

	map_segments(b, iov, off, seglen);
	snprintf(tag, sizeof(tag), "preadv-3seg-off%u-%u-%u len=%zu", off[0], off[1],
		 off[2], total);
	aiot_prep_preadv(&cb, fd, iov, 3, (long long)devoff);
	r = aiot_submit_wait(ctx, &cb);
	report_segments(tag, r, iov, 3, total);
	CHECK(aiot_is(r, (long)total), "%s at %llu: %s", tag,
	      (unsigned long long)devoff, aiot_resstr(r));
	verify_segments(tag, iov, 3, devoff, seed);
	for (k = 0; k < 3; k++) {
		guards_ok(&b[k], tag);
		rev_unmap(&b[k]);
	}
}

/*
 * 64 one-block segments, segment i in its own stride of one reverse-faulted
 * mapping at page offset offa (even i) or offb (odd i): PWRITEV checked
 * through pread(2), then PREADV of what pwrite(2) wrote, verified segment by
 * segment with everything between the segments left as poison.
 */
static void vec64_case(unsigned int offa, unsigned int offb, uint64_t seed,
		       uint64_t seed2)
{
	size_t stride = aiot_round_up((offa > offb ? offa : offb) + aiot.lbs, AIOT_PAGE);
	size_t total = (size_t)NSEG64 * aiot.lbs, pos;
	struct iovec iov[NSEG64];
	struct aiot_res r;
	struct rbuf b;
	struct iocb cb;
	uint64_t devoff;
	char tag[96];
	int i;

	ncases++;
	devoff = next_pos(total);
	rev_map(&b, NSEG64 * stride, 0);
	for (i = 0; i < NSEG64; i++) {
		iov[i].iov_base = b.buf + i * stride + (i & 1 ? offb : offa);
		iov[i].iov_len = aiot.lbs;
		aiot_fill(iov[i].iov_base, aiot.lbs, seed, devoff + (uint64_t)i * aiot.lbs);
	}
	snprintf(tag, sizeof(tag), "pwritev-64seg-off%u-%u len=%zu", offa, offb, total);
	aiot_prep_pwritev(&cb, fd, iov, NSEG64, (long long)devoff);
	r = aiot_submit_wait(ctx, &cb);
	aiot_report(tag, r, NULL, 0);
	CHECK(aiot_is(r, (long)total), "%s at %llu: %s", tag,
	      (unsigned long long)devoff, aiot_resstr(r));
	aiot_sync_verify(fd, devoff, total, seed);

	aiot_sync_write_pattern(fd, devoff, total, seed2);
	memset(b.map, AIOT_POISON, b.maplen);
	snprintf(tag, sizeof(tag), "preadv-64seg-off%u-%u len=%zu", offa, offb, total);
	aiot_prep_preadv(&cb, fd, iov, NSEG64, (long long)devoff);
	r = aiot_submit_wait(ctx, &cb);
	report_segments(tag, r, iov, NSEG64, total);
	CHECK(aiot_is(r, (long)total), "%s at %llu: %s", tag,
	      (unsigned long long)devoff, aiot_resstr(r));
	verify_segments(tag, iov, NSEG64, devoff, seed2);
	/* the bytes between the segments (and after the last) are untouched */
	for (pos = 0, i = 0; i <= NSEG64; i++) {
		size_t end = i < NSEG64 ? (size_t)((uint8_t *)iov[i].iov_base - b.map) :
					  b.maplen;

		if (!aiot_verify_byte("between the read segments", b.map + pos,
				      end - pos, AIOT_POISON))
			break;
		if (i < NSEG64)
			pos = end + iov[i].iov_len;
	}
	rev_unmap(&b);
}

/*
 * Registered kvecs: one reverse-faulted buffer registered with the context,
 * a fixed write of 2 MiB from page offset off (one bio over the buffer's
 * bio_vecs, which the block layer splits), checked through pread(2), and a
 * fixed read of it back into the same buffer.
 */
static void fixed_case(unsigned int off, uint64_t seed)
{
	const size_t len = 2 * AIOT_MIB;
	uint64_t devoff = next_pos(len);
	struct iovec reg;
	struct aiot_res r;
	struct rbuf b;
	struct iocb cb;
	char tag[96];
	int ret;

	ncases++;
	rev_map(&b, len, off);
	/* the whole mapping but its guard page, from its first page */
	reg = (struct iovec){ b.map, b.maplen - AIOT_PAGE };
	ret = kvec_aio_register(ctx, &reg, 1);
	aiot_R("fixed-register res=%s", aiot_rstr(ret));
	if (!CHECK(ret == 1, "register: %s", aiot_rstr(ret))) {
		rev_unmap(&b);
		return;
	}

	aiot_fill(b.buf, len, seed, devoff);
	kvec_aio_prep_pwrite_fixed(&cb, fd, b.buf, len, (long long)devoff, 0);
	r = aiot_submit_wait(ctx, &cb);
	snprintf(tag, sizeof(tag), "fixed-pwrite-2m-off%u len=%zu", off, len);
	aiot_report(tag, r, NULL, 0);
	CHECK(aiot_is(r, (long)len), "%s at %llu: %s", tag,
	      (unsigned long long)devoff, aiot_resstr(r));
	aiot_sync_verify(fd, devoff, len, seed);

	memset(b.map, AIOT_POISON, b.maplen);
	kvec_aio_prep_pread_fixed(&cb, fd, b.buf, len, (long long)devoff, 0);
	r = aiot_submit_wait(ctx, &cb);
	snprintf(tag, sizeof(tag), "fixed-pread-2m-off%u len=%zu", off, len);
	aiot_report(tag, r, b.buf, len);
	CHECK(aiot_is(r, (long)len), "%s at %llu: %s", tag,
	      (unsigned long long)devoff, aiot_resstr(r));
	aiot_verify(tag, b.buf, len, seed, devoff);
	guards_ok(&b, tag);

	ret = kvec_aio_unregister(ctx);
	CHECK(ret == 1, "unregister: %s", aiot_rstr(ret));
	rev_unmap(&b);
}

int main(void)
{
	unsigned int offs[MAXOFFS], noffs, i;
	long long msk, mseg, vbm;
	uint64_t cap;
	struct {
		const char *name;
		uint64_t len;	/* 0: attribute unknown */
	} big[5];

	aiot_init("t-dma-offsets");
	aiot_require_size(32 * AIOT_MIB);
	fd = aiot_open_dev(O_RDWR | O_DIRECT);
	ctx = aiot_ctx(4);
	pagemap_fd = open("/proc/self/pagemap", O_RDONLY);
	unit = aiot.dma_mask + 1;
	msk = aiot_queue_attr("max_sectors_kb");
	mseg = aiot_queue_attr("max_segments");
	vbm = aiot_queue_attr("virt_boundary_mask");
	fprintf(stderr, "# dma alignment %u, lbs %u, max_sectors_kb %lld, "
		"max_segments %lld, virt_boundary_mask %lld\n", unit, aiot.lbs, msk,
		mseg, vbm);
	noffs = pick_offsets(offs);
	fprintf(stderr, "# buffer page offsets:");
	for (i = 0; i < noffs; i++)
		fprintf(stderr, " %u", offs[i]);
	fputc('\n', stderr);

	/* 1: 2 MiB at every offset, 4 MiB at the first (at the device's end) */
	for (i = 0; i < noffs; i++)
		rw_case("2m", offs[i], 2 * AIOT_MIB, next_pos(2 * AIOT_MIB), 7100 + i);
	rw_case("4m", offs[0], 4 * AIOT_MIB, aiot.size - 4 * AIOT_MIB, 7150);

	/* 2: three 49-page segments */
	vec3_case(7200);

	/* 3: more than one bio, across the queue limits */
	cap = aiot_round_down(aiot.size / 4 < MAXBIG ? aiot.size / 4 : MAXBIG, aiot.lbs);
	big[0].name = "maxsect+lb";
	big[0].len = msk > 0 ? aiot_round_up((uint64_t)msk * AIOT_KIB, aiot.lbs) + aiot.lbs : 0;
	big[1].name = "maxseg+lb";
	big[1].len = mseg > 0 ? (uint64_t)mseg * AIOT_PAGE + aiot.lbs : 0;
	big[2].name = "1m+lb";
	big[2].len = AIOT_MIB + aiot.lbs;
	big[3].name = "256p";
	big[3].len = AIOT_BIO_BYTES;
	big[4].name = "257p";
	big[4].len = AIOT_BIO_BYTES + AIOT_PAGE;
	for (i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
		uint64_t len = big[i].len < cap ? big[i].len : cap;

		if (!len) {
			aiot_R("pwrite-%s skipped", big[i].name);
			continue;
		}
		rw_case(big[i].name, offs[0], len, next_pos(len), 7300 + i);
	}

	/* 4: many one-block segments at alternating offsets */
	vec64_case(offs[0], offs[noffs - 1], 7400, 7401);

	/* 5: registered kvecs, where the kernel has them (fs.aio_kvec) */
	if (access("/proc/sys/fs/aio_kvec", F_OK) == 0)
		fixed_case(offs[noffs - 1], 7500);

	aiot_R("cases=%d", ncases);
	CHECK(ncases >= 6, "only %d cases ran", ncases);

	if (pagemap_fd >= 0)
		close(pagemap_fd);
	aiot_ctx_destroy(ctx);
	close(fd);
	return aiot_finish();
}
