// SPDX-License-Identifier: GPL-2.0
/*
 * t-rw-verify: O_DIRECT aio writes then reads of 512 B .. 16 MiB at several
 * device offsets; the data read back must be the pattern written, byte for
 * byte, and nothing past the requested length may be touched.  Each range
 * is cross-checked through the synchronous pread(2)/pwrite(2) path, so an
 * aio path that consistently used the wrong sectors would still fail.
 */
#include "aiotest.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const uint64_t sizes[] = {
	512, 1 * AIOT_KIB, 4 * AIOT_KIB, 8 * AIOT_KIB, 64 * AIOT_KIB,
	128 * AIOT_KIB, 1 * AIOT_MIB, 1 * AIOT_MIB + 4 * AIOT_KIB,
	2 * AIOT_MIB, 4 * AIOT_MIB, 8 * AIOT_MIB, 16 * AIOT_MIB,
};

#define GUARD	AIOT_PAGE

int main(void)
{
	uint64_t maxsz = 0, odd_off;
	uint8_t *wbuf, *rbuf;
	io_context_t ctx;
	unsigned int i, j;
	int fd, ncases = 0;

	aiot_init("t-rw-verify");
	aiot_require_size(4 * AIOT_MIB);
	fd = aiot_open_dev(O_RDWR | O_DIRECT);
	ctx = aiot_ctx(4);

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (sizes[i] <= aiot.size / 4 && sizes[i] > maxsz)
			maxsz = sizes[i];
	wbuf = aiot_alloc(maxsz);
	rbuf = aiot_alloc(maxsz + GUARD);
	/* sector aligned but not page aligned (7 logical blocks in) */
	odd_off = 7ULL * aiot.lbs;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t sz = sizes[i];
		struct { const char *name; uint64_t off; } at[4] = {
			{ "0", 0 },
			{ "7lb", odd_off },
			{ "third", aiot_round_down(aiot.size / 3, aiot.lbs) + odd_off },
			{ "end", aiot.size - sz },
		};
		/* the big sizes only at two offsets, to keep the run short */
		unsigned int nat = sz >= 4 * AIOT_MIB ? 2 : 4;

		if (sz > aiot.size / 4 || sz % aiot.lbs)
			continue;
		for (j = 0; j < nat; j++) {
			unsigned int k = sz >= 4 * AIOT_MIB ? j * 3 : j;	/* 0, end */
			uint64_t off = at[k].off, seed = 100 + i * 8 + k;
			struct aiot_res r;
			char tag[96];

			if (off + sz > aiot.size)
				continue;
			ncases++;

			/* aio write, checked by the synchronous path */
			aiot_fill(wbuf, sz, seed, off);
			r = aiot_pwrite(ctx, fd, wbuf, sz, (long long)off);
			snprintf(tag, sizeof(tag), "write size=%llu at=%s",
				 (unsigned long long)sz, at[k].name);
			aiot_report(tag, r, NULL, 0);
			CHECK(aiot_is(r, (long)sz), "%s: %s", tag, aiot_resstr(r));
			if (sz <= AIOT_MIB)
				aiot_verify("write source after write", wbuf, sz, seed, off);
			aiot_sync_verify(fd, off, sz, seed);

			/* aio read of what the synchronous path wrote */
			aiot_sync_write_pattern(fd, off, sz, seed + 1000);
			memset(rbuf, AIOT_POISON, sz + GUARD);
			r = aiot_pread(ctx, fd, rbuf, sz, (long long)off);
			snprintf(tag, sizeof(tag), "read size=%llu at=%s",
				 (unsigned long long)sz, at[k].name);
			aiot_report(tag, r, rbuf, sz);
			CHECK(aiot_is(r, (long)sz), "%s: %s", tag, aiot_resstr(r));
			aiot_verify(tag, rbuf, sz, seed + 1000, off);
			aiot_verify_byte("guard after read buffer", rbuf + sz, GUARD, AIOT_POISON);

			/* the second half alone: the offset must be honoured */
			if (sz >= 2 * aiot.lbs) {
				uint64_t half = aiot_round_down(sz / 2, aiot.lbs);

				memset(rbuf, AIOT_POISON, sz - half);
				r = aiot_pread(ctx, fd, rbuf, sz - half, (long long)(off + half));
				snprintf(tag, sizeof(tag), "read-tail size=%llu at=%s",
					 (unsigned long long)(sz - half), at[k].name);
				aiot_report(tag, r, rbuf, sz - half);
				CHECK(aiot_is(r, (long)(sz - half)), "%s: %s", tag, aiot_resstr(r));
				aiot_verify(tag, rbuf, sz - half, seed + 1000, off + half);
			}
		}
	}
	aiot_R("cases=%d", ncases);
	CHECK(ncases >= 20, "only %d cases ran", ncases);

	free(wbuf);
	free(rbuf);
	aiot_ctx_destroy(ctx);
	close(fd);
	return aiot_finish();
}
