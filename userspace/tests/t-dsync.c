// SPDX-License-Identifier: GPL-2.0
/*
 * t-dsync: synchronous-write variants, which make the stock path add
 * REQ_FUA (dio_bio_write_op): writes on an O_DSYNC and an O_SYNC
 * descriptor, RWF_DSYNC and RWF_SYNC in aio_rw_flags (non-vectored and
 * vectored), one-bio and multi-bio sizes.  Each completes with its full
 * length and the data is on the device.  IOCB_CMD_FDSYNC/FSYNC on the
 * device complete with 0; an unknown RWF bit is refused by io_submit with
 * -EOPNOTSUPP; reads with RWF_DSYNC are plain reads.
 */
#include "aiotest.h"

#include <linux/fs.h>

#define SEED	7500

static io_context_t ctx;
static uint8_t *buf;
static int rwfd;

static void w(const char *name, int fd, int rwflags, size_t bufoff, size_t len,
	      uint64_t off, uint64_t seed)
{
	struct aiot_res r;
	struct iocb cb;
	char tag[128];

	aiot_fill(buf + bufoff, len, seed, off);
	aiot_prep_rw(&cb, 1, fd, buf + bufoff, len, (long long)off, rwflags);
	r = aiot_submit_wait(ctx, &cb);
	snprintf(tag, sizeof(tag), "write %s len=%zu", name, len);
	aiot_report(tag, r, NULL, 0);
	CHECK(aiot_is(r, (long)len), "%s: %s", tag, aiot_resstr(r));
	aiot_sync_verify(rwfd, off, len, seed);
}

static void wv(const char *name, int fd, int rwflags, uint64_t off, uint64_t seed)
{
	struct iovec iov[3] = {
		{ buf + 512, 4096 }, { buf + 16384, 65536 }, { buf + 3 * AIOT_MIB, AIOT_MIB },
	};
	struct aiot_res r;
	struct iocb cb;
	uint64_t pos = off;
	char tag[128];
	int i;

	for (i = 0; i < 3; i++) {
		aiot_fill(iov[i].iov_base, iov[i].iov_len, seed, pos);
		pos += iov[i].iov_len;
	}
	io_prep_pwritev2(&cb, fd, iov, 3, (long long)off, rwflags);
	aiot_mark(&cb);
	r = aiot_submit_wait(ctx, &cb);
	snprintf(tag, sizeof(tag), "writev %s len=%llu", name,
		 (unsigned long long)(pos - off));
	aiot_report(tag, r, NULL, 0);
	CHECK(aiot_is(r, (long)(pos - off)), "%s: %s", tag, aiot_resstr(r));
	aiot_sync_verify(rwfd, off, pos - off, seed);
}

static void fsync_op(const char *name, int fd, int datasync)
{
	struct aiot_res r = aiot_fsync_report(ctx, name, fd, datasync);

	CHECK(aiot_is(r, 0), "%s: %s", name, aiot_resstr(r));
}

int main(void)
{
	const size_t big = 2 * AIOT_MIB + 4096;
	int dsfd, sfd;
	struct aiot_res r;
	struct iocb cb;

	aiot_init("t-dsync");
	aiot_require_size(64 * AIOT_MIB);
	rwfd = aiot_open_dev(O_RDWR | O_DIRECT);
	dsfd = aiot_open_dev(O_RDWR | O_DIRECT | O_DSYNC);
	sfd = aiot_open_dev(O_RDWR | O_DIRECT | O_SYNC);
	ctx = aiot_ctx(4);
	buf = aiot_alloc(5 * AIOT_MIB);

	w("O_DSYNC", dsfd, 0, 0, 4096, 0, SEED + 1);
	w("O_DSYNC", dsfd, 0, 512, big, 1 * AIOT_MIB, SEED + 2);
	w("O_SYNC", sfd, 0, 0, 65536, 4 * AIOT_MIB, SEED + 3);
	w("O_SYNC", sfd, 0, 3584, big, 5 * AIOT_MIB, SEED + 4);
	w("RWF_DSYNC", rwfd, RWF_DSYNC, 0, 8192, 8 * AIOT_MIB, SEED + 5);
	w("RWF_DSYNC", rwfd, RWF_DSYNC, 1024, big, 9 * AIOT_MIB, SEED + 6);
	w("RWF_SYNC", rwfd, RWF_SYNC, 0, 131072, 12 * AIOT_MIB, SEED + 7);
	w("RWF_SYNC", rwfd, RWF_SYNC, 0, big, 13 * AIOT_MIB, SEED + 8);
	w("O_DSYNC+RWF_DSYNC", dsfd, RWF_DSYNC, 0, 4096, 16 * AIOT_MIB, SEED + 9);
	wv("RWF_DSYNC", rwfd, RWF_DSYNC, 20 * AIOT_MIB, SEED + 10);
	wv("O_DSYNC", dsfd, 0, 24 * AIOT_MIB, SEED + 11);
	fsync_op("fdsync", rwfd, 1);
	fsync_op("fsync", rwfd, 0);
	fsync_op("fdsync O_DSYNC", dsfd, 1);

	/* reads with RWF_DSYNC: nothing special */
	memset(buf, AIOT_POISON, 65536);
	aiot_prep_rw(&cb, 0, rwfd, buf, 65536, 4 * AIOT_MIB, RWF_DSYNC);
	r = aiot_submit_wait(ctx, &cb);
	aiot_report("read RWF_DSYNC len=65536", r, buf, 65536);
	CHECK(aiot_is(r, 65536), "read RWF_DSYNC: %s", aiot_resstr(r));
	aiot_verify("read RWF_DSYNC", buf, 65536, SEED + 3, 4 * AIOT_MIB);
	memset(buf, AIOT_POISON, 65536);
	aiot_prep_rw(&cb, 0, dsfd, buf, 65536, 4 * AIOT_MIB, 0);
	r = aiot_submit_wait(ctx, &cb);
	aiot_report("read O_DSYNC len=65536", r, buf, 65536);
	CHECK(aiot_is(r, 65536), "read O_DSYNC: %s", aiot_resstr(r));
	aiot_verify("read O_DSYNC", buf, 65536, SEED + 3, 4 * AIOT_MIB);

	/* an RWF bit the kernel does not know */
	aiot_prep_rw(&cb, 1, rwfd, buf, 4096, 0, (int)0x40000000);
	r = aiot_submit_wait(ctx, &cb);
	aiot_report("write rw_flags=0x40000000", r, NULL, 0);
	CHECK(r.submit == -EOPNOTSUPP, "unknown RWF flag: %s", aiot_resstr(r));
	aiot_sync_verify(rwfd, 0, 4096, SEED + 1);

	free(buf);
	aiot_ctx_destroy(ctx);
	close(rwfd);
	close(dsfd);
	close(sfd);
	return aiot_finish();
}
