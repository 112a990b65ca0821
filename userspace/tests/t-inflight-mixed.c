// SPDX-License-Identifier: GPL-2.0
/*
 * t-inflight-mixed: 256 I/Os in flight on one context, reads and writes
 * interleaved on non-overlapping ranges, sizes from one block to 1 MiB +
 * 4 KiB, buffers at page offsets 0, 512 and 3584, and eight reads whose
 * buffers are the 512-byte slices of one shared page.  Every iocb must
 * complete exactly once with its full length; read data, written data and
 * the untouched gaps between the ranges are verified.
 */
#include "aiotest.h"

#define N	256
#define NSHARED	8	/* the last NSHARED iocbs read into one page */
#define SEED_OLD	6000
#define SEED_NEW	6001

static const size_t sizes[] = {
	4096, 8192, 512, 65536, 131072, 16384, 262144, 32768,
};

static struct iocb cbs[N];

int main(void)
{
	struct iocb *cbp[N];
	struct io_event ev[N];
	uint8_t *mem[N], *buf[N], *shared;
	size_t len[N];
	uint64_t off[N], pos = 0, end, rcsum = 0xcbf29ce484222325ULL;
	unsigned char seen[N];
	int fd, i, ret, sub = 0, got, nshared, unique = 0, resok = 0;
	io_context_t ctx;

	aiot_init("t-inflight-mixed");
	fd = aiot_open_dev(O_RDWR | O_DIRECT);
	nshared = (int)(AIOT_PAGE / aiot.lbs) < NSHARED ? (int)(AIOT_PAGE / aiot.lbs) : NSHARED;
	shared = aiot_alloc(AIOT_PAGE);

	for (i = 0; i < N; i++) {
		unsigned int bufoff = (i % 3 == 1) ? 512 : (i % 3 == 2) ? 3584 : 0;

		if (bufoff & aiot.dma_mask)
			bufoff = 0;
		len[i] = (i % 64 == 7) ? AIOT_MIB + 4096 : sizes[i % 8];
		if (len[i] % aiot.lbs)
			len[i] = aiot.lbs;
		mem[i] = NULL;
		if (i >= N - NSHARED) {
			len[i] = aiot.lbs;
			buf[i] = i - (N - NSHARED) < nshared ?
				 shared + (size_t)(i - (N - NSHARED)) * aiot.lbs : NULL;
		}
		if (i < N - NSHARED || !buf[i]) {
			mem[i] = aiot_alloc(len[i] + bufoff);
			buf[i] = mem[i] + bufoff;
		}
		pos = aiot_round_up(pos + aiot.lbs, aiot.lbs);	/* a one-block gap */
		off[i] = pos;
		pos += len[i];
	}
	end = pos + aiot.lbs;
	aiot_require_size(end);
	ctx = aiot_ctx(N);

	aiot_sync_write_pattern(fd, 0, end, SEED_OLD);
	for (i = 0; i < N; i++) {
		/* the shared-page ones all read; otherwise even write, odd read */
		if (i % 2 == 0 && i < N - NSHARED) {
			aiot_fill(buf[i], len[i], SEED_NEW, off[i]);
			aiot_prep_pwrite(&cbs[i], fd, buf[i], len[i], (long long)off[i]);
		} else {
			aiot_prep_pread(&cbs[i], fd, buf[i], len[i], (long long)off[i]);
		}
		cbs[i].data = (void *)(uintptr_t)(i + 1);
		cbp[i] = &cbs[i];
	}
	/* all at once; resubmit the rest if the kernel takes fewer */
	while (sub < N) {
		ret = aiot_submit(ctx, N - sub, cbp + sub);
		if (!CHECK(ret > 0, "io_submit after %d: %s", sub, aiot_rstr(ret)))
			break;
		sub += ret;
	}
	aiot_R("submitted=%d", sub);

	memset(seen, 0, sizeof(seen));
	got = aiot_reap(ctx, sub, ev);
	for (i = 0; i < got; i++) {
		int idx = aiot_event_iocb(&ev[i], cbs, N, seen);

		if (idx < 0)
			continue;
		unique++;
		CHECK(ev[i].data == (void *)(uintptr_t)(idx + 1), "iocb %d: wrong data", idx);
		if (CHECK((long)ev[i].res == (long)len[idx] && ev[i].res2 == 0,
			  "iocb %d (%s len %zu): res %s", idx,
			  cbs[idx].aio_lio_opcode == IO_CMD_PREAD ? "read" : "write",
			  len[idx], aiot_rstr((long)ev[i].res)))
			resok++;
	}
	CHECK(aiot_reap_extra(ctx, 100) == 0, "more events than iocbs");
	aiot_R("events=%d unique=%d res-ok=%d", got, unique, resok);
	CHECK(unique == N && resok == N, "not all %d iocbs completed once with their length", N);

	for (i = 0; i < N; i++) {
		char what[64];

		snprintf(what, sizeof(what), "iocb %d len %zu", i, len[i]);
		if (cbs[i].aio_lio_opcode == IO_CMD_PREAD) {
			aiot_verify(what, buf[i], len[i], SEED_OLD, off[i]);
			rcsum = (rcsum ^ aiot_csum(buf[i], len[i])) * 0x100000001b3ULL;
		} else {
			aiot_sync_verify(fd, off[i], len[i], SEED_NEW);
		}
	}
	if (aiot.nodata)
		aiot_R("reads verified");
	else
		aiot_R("reads crc=%016llx", (unsigned long long)rcsum);
	/* the one-block gaps in front of every range still hold the old data */
	for (i = 0; i < N; i++)
		if (!aiot_sync_verify(fd, off[i] - aiot.lbs, aiot.lbs, SEED_OLD))
			break;

	for (i = 0; i < N; i++)
		free(mem[i]);
	free(shared);
	aiot_ctx_destroy(ctx);
	close(fd);
	return aiot_finish();
}
