// SPDX-License-Identifier: GPL-2.0
/*
 * t-unaligned-buf: buffers that are sector aligned but not page aligned
 * (page offsets 512, 1024, 3584), lengths that cross page boundaries, and
 * I/Os whose page span crosses the 256-page (1 MiB) bio limit: written from
 * one such buffer, read back into another with a different page offset,
 * verified byte for byte (plus the untouched bytes around the read buffer).
 */
#include "aiotest.h"

struct ucase {
	unsigned int bufoff;	/* page offset of the buffer */
	uint64_t len;
};

static const struct ucase cases[] = {
	{  512, 512 },
	{  512, 4096 },				/* 2 pages */
	{ 3584, 1024 },				/* 512 B each side of a page end */
	{ 1024, 8192 + 2048 },
	{ 3584, 64 * AIOT_KIB },
	{  512, AIOT_MIB - 512 },		/* exactly 256 pages: one bio */
	{  512, AIOT_MIB },			/* 257 pages */
	{  512, AIOT_MIB + 512 },		/* 257 pages, crosses 1 MiB */
	{ 3584, AIOT_MIB + 3584 },
	{ 1024, 2 * AIOT_MIB + 1024 },
	{ 3584, 4 * AIOT_MIB + 3584 },
	/* whole 4 KiB blocks too, for devices with 4 KiB sectors */
	{ 3584, 8192 },
	{  512, AIOT_MIB + 4096 },		/* 258 pages */
	{ 1024, 3 * AIOT_MIB },
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

#define GUARD	AIOT_PAGE

int main(void)
{
	uint64_t devoff = 0, maxlen = 0;
	uint8_t *wbase, *rbase;
	io_context_t ctx;
	unsigned int i;
	int fd, ran = 0;

	aiot_init("t-unaligned-buf");
	aiot_require_size(16 * AIOT_MIB);
	fd = aiot_open_dev(O_RDWR | O_DIRECT);
	ctx = aiot_ctx(4);

	for (i = 0; i < NCASES; i++)
		if (cases[i].len > maxlen)
			maxlen = cases[i].len;
	/* room for the largest length at any page offset, plus guards */
	wbase = aiot_alloc(maxlen + 2 * AIOT_PAGE);
	rbase = aiot_alloc(maxlen + 2 * AIOT_PAGE + GUARD);

	for (i = 0; i < NCASES; i++) {
		const struct ucase *c = &cases[i];
		/* read back into a buffer at the next case's page offset */
		unsigned int roff = cases[(i + 1) % NCASES].bufoff;
		uint8_t *wb = wbase + c->bufoff, *rb = rbase + roff;
		bool wvalid = !(c->bufoff & aiot.dma_mask) && !(c->len % aiot.lbs);
		bool rvalid = !(roff & aiot.dma_mask) && !(c->len % aiot.lbs);
		uint64_t seed = 500 + i;
		struct aiot_res r;
		char tag[96];

		if (c->len % aiot.lbs)
			continue;	/* only for logical blocks > 512 */
		/* sector-aligned device offsets, a few blocks apart */
		devoff = aiot_round_up(devoff + 3 * aiot.lbs, aiot.lbs);
		if (devoff + c->len > aiot.size)
			break;
		ran++;

		aiot_fill(wb, c->len, seed, devoff);
		r = aiot_pwrite(ctx, fd, wb, c->len, (long long)devoff);
		snprintf(tag, sizeof(tag), "write bufoff=%u len=%llu", c->bufoff,
			 (unsigned long long)c->len);
		aiot_report(tag, r, NULL, 0);
		if (wvalid) {
			CHECK(aiot_is(r, (long)c->len), "%s: %s", tag, aiot_resstr(r));
			aiot_sync_verify(fd, devoff, c->len, seed);
		} else {
			CHECK(aiot_is(r, -EINVAL), "%s: %s (dma mask %u)", tag,
			      aiot_resstr(r), aiot.dma_mask);
			aiot_sync_write_pattern(fd, devoff, c->len, seed);
		}

		memset(rbase, AIOT_POISON, maxlen + 2 * AIOT_PAGE + GUARD);
		r = aiot_pread(ctx, fd, rb, c->len, (long long)devoff);
		snprintf(tag, sizeof(tag), "read bufoff=%u len=%llu", roff,
			 (unsigned long long)c->len);
		aiot_report(tag, r, rb, c->len);
		if (rvalid) {
			CHECK(aiot_is(r, (long)c->len), "%s: %s", tag, aiot_resstr(r));
			aiot_verify(tag, rb, c->len, seed, devoff);
		} else {
			CHECK(aiot_is(r, -EINVAL), "%s: %s", tag, aiot_resstr(r));
			aiot_verify_byte("buffer after failed read", rb, c->len, AIOT_POISON);
		}
		aiot_verify_byte("bytes before read buffer", rbase, roff, AIOT_POISON);
		aiot_verify_byte("bytes after read buffer", rb + c->len, GUARD, AIOT_POISON);

		/* and into a page-aligned buffer, which spans one page less */
		memset(rbase, AIOT_POISON, c->len + GUARD);
		r = aiot_pread(ctx, fd, rbase, c->len, (long long)devoff);
		snprintf(tag, sizeof(tag), "read bufoff=0 len=%llu",
			 (unsigned long long)c->len);
		aiot_report(tag, r, rbase, c->len);
		CHECK(aiot_is(r, (long)c->len), "%s: %s", tag, aiot_resstr(r));
		aiot_verify(tag, rbase, c->len, seed, devoff);
		aiot_verify_byte("bytes after aligned read buffer", rbase + c->len, GUARD,
				 AIOT_POISON);

		devoff += c->len;
	}
	aiot_R("cases=%d", ran);
	CHECK(ran >= 5, "only %d cases ran", ran);

	free(wbase);
	free(rbase);
	aiot_ctx_destroy(ctx);
	close(fd);
	return aiot_finish();
}
