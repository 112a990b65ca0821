// SPDX-License-Identifier: GPL-2.0
/*
 * t-thp: O_DIRECT aio from and into buffers that transparent huge pages
 * back.  gup pins a huge page's subpages with one reference update for the
 * whole folio, and unpinning releases runs of them per folio; the kvec
 * merges their physically contiguous pages into long bio_vecs.  Writes and
 * reads of 4 KiB .. 4 MiB start at the start of a huge page, inside one,
 * and just before the boundary between two, so that I/Os cover a folio
 * partly, whole, and across two.  Data read back must be the pattern
 * written, and the bytes around the read must stay untouched.
 */
#include "aiotest.h"
#include "thp-buf.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define REGION	(4 * THP_BUF_SIZE)

static const uint64_t sizes[] = {
	4 * AIOT_KIB, 64 * AIOT_KIB, 1 * AIOT_MIB, 2 * AIOT_MIB,
	2 * AIOT_MIB + 64 * AIOT_KIB, 4 * AIOT_MIB,
};

int main(void)
{
	uint8_t *wbuf, *rbuf;
	uint64_t thp;
	io_context_t ctx;
	unsigned int i, j;
	int fd, ncases = 0;

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
			uint64_t at = bufs[j].at, seed = 700 + i * 4 + j;
			uint64_t off = (8 + 4 * j) * AIOT_MIB;
			struct aiot_res r;
			char tag[96];

			if (at + sz + AIOT_PAGE > REGION || off + sz > aiot.size)
				continue;
			ncases++;

			aiot_fill(wbuf + at, sz, seed, off);
			r = aiot_pwrite(ctx, fd, wbuf + at, sz, (long long)off);
			snprintf(tag, sizeof(tag), "write size=%llu buf=%s",
				 (unsigned long long)sz, bufs[j].name);
			aiot_report(tag, r, NULL, 0);
			CHECK(aiot_is(r, (long)sz), "%s: %s", tag, aiot_resstr(r));
			aiot_sync_verify(fd, off, sz, seed);

			aiot_sync_write_pattern(fd, off, sz, seed + 1000);
			memset(rbuf, AIOT_POISON, REGION);
			r = aiot_pread(ctx, fd, rbuf + at, sz, (long long)off);
			snprintf(tag, sizeof(tag), "read size=%llu buf=%s",
				 (unsigned long long)sz, bufs[j].name);
			aiot_report(tag, r, rbuf + at, sz);
			CHECK(aiot_is(r, (long)sz), "%s: %s", tag, aiot_resstr(r));
			aiot_verify(tag, rbuf + at, sz, seed + 1000, off);
			aiot_verify_byte("before the read buffer", rbuf, at,
					 AIOT_POISON);
			aiot_verify_byte("after the read buffer", rbuf + at + sz,
					 AIOT_PAGE, AIOT_POISON);
		}
	}
	aiot_R("cases=%d", ncases);
	CHECK(ncases >= 15, "only %d cases ran", ncases);

	aiot_unmap(wbuf, REGION);
	aiot_unmap(rbuf, REGION);
	aiot_ctx_destroy(ctx);
	close(fd);
	return aiot_finish();
}
