// SPDX-License-Identifier: GPL-2.0
/*
 * t-thp: O_DIRECT aio from and into buffers that transparent huge pages
 * back.  gup pins a huge page's subpages with one reference update for the
 * whole folio, and unpinning releases runs of them per folio; the kvec
 * merges their physically contiguous pages into long bio_vecs.  Writes and
 * reads of 4 KiB .. 4 MiB start at the start of a huge page, inside one,
 * and just before the boundary between two, so that I/Os cover a folio
 * partly, whole, and across two.  Data read back must be the pattern
 * written, and the bytes around the read must stay untouched.  Then the
 * same I/Os through the buffers registered: a registered buffer keeps
 * each run of physically contiguous pages as one bio_vec, so that a huge
 * page is in one run at most (runs_registered), and I/Os longer than a
 * page start inside those runs.
 */
#include "aiotest.h"
#include "kvec-aio.h"
#include "thp-buf.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define REGION	(4 * THP_BUF_SIZE)

static const uint64_t sizes[] = {
	4 * AIOT_KIB, 64 * AIOT_KIB, 1 * AIOT_MIB, 2 * AIOT_MIB,
	2 * AIOT_MIB + 64 * AIOT_KIB, 4 * AIOT_MIB,
};

static io_context_t ctx;
static int fd;

/* A write from @buf (@write) or a read into it; @fixed: buffer 0 or 1. */
static struct aiot_res thp_rw(int write, int fixed, void *buf, size_t len,
			      uint64_t off)
{
	if (fixed)
		return aiot_fixed_rw(ctx, fd, write, buf, len, off, !write);
	if (write)
		return aiot_pwrite(ctx, fd, buf, len, (long long)off);
	return aiot_pread(ctx, fd, buf, len, (long long)off);
}

/* Every size at every place; @fixed: through registered buffers 0 and 1. */
static void thp_cases(uint8_t *wbuf, uint8_t *rbuf, int fixed)
{
	const char *how = fixed ? " fixed" : "";
	unsigned int i, j;
	int ncases = 0;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t sz = sizes[i];
		/* where in the region: a folio's start, inside one, across two */
		const struct { const char *name; uint64_t at; } bufs[] = {
			{ "folio-start", 0 },
			{ "in-folio", 16 * AIOT_KIB },
			{ "across", THP_BUF_SIZE - 8 * AIOT_KIB },
		};

		if (sz % aiot.lbs)
			continue;
		for (j = 0; j < sizeof(bufs) / sizeof(bufs[0]); j++) {
			uint64_t at = bufs[j].at;
			uint64_t seed = 700 + i * 4 + j + fixed * 50;
			uint64_t off = (8 + 4 * j) * AIOT_MIB;
			struct aiot_res r;
			char tag[96];

			if (at + sz + AIOT_PAGE > REGION || off + sz > aiot.size)
				continue;
			ncases++;

			aiot_fill(wbuf + at, sz, seed, off);
			r = thp_rw(1, fixed, wbuf + at, sz, off);
			snprintf(tag, sizeof(tag), "write%s size=%llu buf=%s",
				 how, (unsigned long long)sz, bufs[j].name);
			aiot_report(tag, r, NULL, 0);
			CHECK(aiot_is(r, (long)sz), "%s: %s", tag, aiot_resstr(r));
			aiot_sync_verify(fd, off, sz, seed);

			aiot_sync_write_pattern(fd, off, sz, seed + 1000);
			memset(rbuf, AIOT_POISON, REGION);
			r = thp_rw(0, fixed, rbuf + at, sz, off);
			snprintf(tag, sizeof(tag), "read%s size=%llu buf=%s",
				 how, (unsigned long long)sz, bufs[j].name);
			aiot_report(tag, r, rbuf + at, sz);
			CHECK(aiot_is(r, (long)sz), "%s: %s", tag, aiot_resstr(r));
			aiot_verify(tag, rbuf + at, sz, seed + 1000, off);
			aiot_verify_byte("before the read buffer", rbuf, at,
					 AIOT_POISON);
			aiot_verify_byte("after the read buffer", rbuf + at + sz,
					 AIOT_PAGE, AIOT_POISON);
		}
	}
	aiot_R("cases%s=%d", how, ncases);
	CHECK(ncases >= 15, "only %d%s cases ran", ncases, how);
}

int main(void)
{
	long long runs0, runs;
	uint8_t *wbuf, *rbuf;
	struct iovec iov[2];
	uint64_t thp, most;
	int ret;

	aiot_init("t-thp");
	aiot_require_size(32 * AIOT_MIB);
	fd = aiot_open_dev(O_RDWR | O_DIRECT);
	ctx = aiot_ctx(4);

	wbuf = aiot_map_thp(REGION);
	rbuf = aiot_map_thp(REGION);
	/* the point of the test: without huge pages it proves nothing */
	thp = aiot_thp_bytes(wbuf, REGION) + aiot_thp_bytes(rbuf, REGION);
	printf("# huge pages: %llu of %llu bytes\n", (unsigned long long)thp,
	       (unsigned long long)(2 * REGION));
	CHECK(thp >= REGION, "only %llu bytes of the buffers in huge pages",
	      (unsigned long long)thp);

	thp_cases(wbuf, rbuf, 0);

	/*
	 * Registered: at most one run per huge page and per small page,
	 * where a run per page would be 4096 (small pages may follow each
	 * other too, so this is a bound, not a count).
	 */
	iov[0] = (struct iovec){ wbuf, REGION };
	iov[1] = (struct iovec){ rbuf, REGION };
	runs0 = aiot_stat("runs_registered");
	ret = kvec_aio_register(ctx, iov, 2);
	CHECK(ret == 2, "register: %s", aiot_rstr(ret));
	runs = aiot_stat("runs_registered") - runs0;
	most = 2 * REGION / THP_BUF_SIZE + (2 * REGION - thp) / AIOT_PAGE;
	/* not an R line: the layout, not the path, decides the count */
	printf("# runs_registered +%lld (at most %llu)\n", runs,
	       (unsigned long long)most);
	CHECK(runs > 0 && (uint64_t)runs <= most,
	      "runs_registered +%lld with %llu bytes in huge pages, want 1..%llu",
	      runs, (unsigned long long)thp, (unsigned long long)most);
	thp_cases(wbuf, rbuf, 1);
	ret = kvec_aio_unregister(ctx);
	CHECK(ret == 2, "unregister: %s", aiot_rstr(ret));

	aiot_unmap(wbuf, REGION);
	aiot_unmap(rbuf, REGION);
	aiot_ctx_destroy(ctx);
	close(fd);
	return aiot_finish();
}
