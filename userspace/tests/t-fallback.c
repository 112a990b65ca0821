// SPDX-License-Identifier: GPL-2.0
/*
 * t-fallback: iocbs the kvec path must leave to the stock code, with the
 * stock results: buffered (no O_DIRECT) reads and writes on the device,
 * including ones no direct I/O would accept (odd offset, length, buffer),
 * and buffered I/O on a regular file in /tmp (tmpfs).  In the kvec and
 * flag modes, when /proc/fs/aio_kvec exists, the device iocbs must count
 * as fallback_not_direct and the file ones as fallback_not_bdev, and
 * iocbs_submitted must not move.  The buffered data is cross-checked
 * through O_DIRECT reads after fsync, and page cache is dropped at the end.
 */
#include "aiotest.h"

#include <sys/stat.h>

#define SEED	8000
#define OFF	(32 * AIOT_MIB)

static io_context_t ctx;

static struct aiot_res io(int write, int fd, void *buf, size_t len, long long off)
{
	return aiot_rw(ctx, write, fd, buf, len, off);
}

static void expect(const char *tag, struct aiot_res r, long want, const void *buf,
		   size_t crclen)
{
	aiot_report(tag, r, buf, crclen);
	CHECK(aiot_is(r, want), "%s: %s, want res %s", tag, aiot_resstr(r), aiot_rstr(want));
}

struct snap {
	long long submitted, not_direct, not_bdev;
};

static struct snap snap(void)
{
	struct snap s = {
		aiot_stat("iocbs_submitted"),
		aiot_stat("fallback_not_direct"),
		aiot_stat("fallback_not_bdev"),
	};
	return s;
}

static bool check_stats(void)
{
	return !aiot_mode_is_stock() && aiot_stats_present();
}

int main(void)
{
	const size_t len = 65536;
	char path[] = "/tmp/aiot-fallback.XXXXXX";
	struct snap s0, s1;
	int bfd, dfd, tfd, nbuffered = 0;
	uint8_t *buf, *cmp;

	aiot_init("t-fallback");
	aiot_require_size(OFF + 4 * AIOT_MIB);
	dfd = aiot_open_dev(O_RDWR | O_DIRECT);
	bfd = aiot_open_dev(O_RDWR);
	ctx = aiot_ctx(4);
	buf = aiot_alloc(len + AIOT_PAGE);
	cmp = aiot_alloc(len + AIOT_PAGE);
	if (check_stats())
		fprintf(stderr, "t-fallback: checking %s counters\n", "/proc/fs/aio_kvec");

	/* ---- buffered I/O on the block device */
	aiot_sync_write_pattern(dfd, OFF, 4 * AIOT_MIB, SEED);
	s0 = snap();
	memset(buf, AIOT_POISON, len);
	expect("buffered read len=64K", io(0, bfd, buf, len, OFF), (long)len, buf, len);
	aiot_verify("buffered read", buf, len, SEED, OFF);
	aiot_fill(buf, len, SEED + 1, OFF + AIOT_MIB);
	expect("buffered write len=64K", io(1, bfd, buf, len, OFF + AIOT_MIB), (long)len,
	       NULL, 0);
	/* what no O_DIRECT I/O would take */
	memset(buf, AIOT_POISON, len + AIOT_PAGE);
	expect("buffered read off=+1 bufoff=1 len=511",
	       io(0, bfd, buf + 1, 511, OFF + 1), 511, buf + 1, 511);
	aiot_verify("buffered odd read", buf + 1, 511, SEED, OFF + 1);
	aiot_verify_byte("around the odd read", buf + 512, len, AIOT_POISON);
	aiot_fill(buf + 3, 4097, SEED + 2, OFF + 2 * AIOT_MIB + 5);
	expect("buffered write off=+5 bufoff=3 len=4097",
	       io(1, bfd, buf + 3, 4097, OFF + 2 * AIOT_MIB + 5), 4097, NULL, 0);
	/* vectored buffered */
	{
		struct iovec iov[2] = { { buf + 7, 100 }, { cmp + 1, 3000 } };
		struct aiot_res r;
		struct iocb cb;

		memset(buf, AIOT_POISON, len);
		memset(cmp, AIOT_POISON, len);
		aiot_prep_preadv(&cb, bfd, iov, 2, OFF + 3);
		r = aiot_submit_wait(ctx, &cb);
		expect("buffered readv nseg=2 len=3100", r, 3100, NULL, 0);
		aiot_verify("buffered readv seg0", buf + 7, 100, SEED, OFF + 3);
		aiot_verify("buffered readv seg1", cmp + 1, 3000, SEED, OFF + 103);
	}
	/* the end of the device and zero length, buffered */
	expect("buffered read at=end", io(0, bfd, buf, 4096, (long long)aiot.size), 0,
	       NULL, 0);
	expect("buffered write at=end", io(1, bfd, buf, 4096, (long long)aiot.size),
	       -ENOSPC, NULL, 0);
	memset(buf, AIOT_POISON, 8192);
	expect("buffered read at=end-100 len=8192",
	       io(0, bfd, buf, 8192, (long long)aiot.size - 100), 100, NULL, 0);
	expect("buffered write len=0", io(1, bfd, buf, 0, OFF), 0, NULL, 0);
	nbuffered = 9;
	s1 = snap();
	if (check_stats()) {
		fprintf(stderr, "t-fallback: fallback_not_direct +%lld for %d buffered iocbs\n",
			s1.not_direct - s0.not_direct, nbuffered);
		CHECK(s1.not_direct > s0.not_direct,
		      "fallback_not_direct %lld -> %lld for %d buffered iocbs",
		      s0.not_direct, s1.not_direct, nbuffered);
		CHECK(s1.submitted == s0.submitted,
		      "iocbs_submitted %lld -> %lld for buffered iocbs only",
		      s0.submitted, s1.submitted);
	}

	/* the buffered writes are on the device once synced */
	if (fsync(bfd) < 0)
		aiot_die("fsync: %s", strerror(errno));
	aiot_sync_verify(dfd, OFF + AIOT_MIB, len, SEED + 1);
	if (!aiot.nodata) {
		ssize_t got;

		aiot_fill(cmp, 4097, SEED + 2, OFF + 2 * AIOT_MIB + 5);
		memset(buf, AIOT_POISON, 3 * 4096);
		got = pread(dfd, buf, 3 * 4096, OFF + 2 * AIOT_MIB);
		CHECK(got == 3 * 4096, "direct pread: %zd", got);
		CHECK(!memcmp(buf + 5, cmp, 4097), "buffered odd write not on the device");
		aiot_verify("bytes before the odd write", buf, 5, SEED, OFF + 2 * AIOT_MIB);
		aiot_verify("bytes after the odd write", buf + 5 + 4097, 3 * 4096 - 5 - 4097,
			    SEED, OFF + 2 * AIOT_MIB + 5 + 4097);
	}

	/* ---- a regular file on tmpfs */
	tfd = mkstemp(path);
	if (tfd < 0)
		aiot_die("mkstemp %s: %s", path, strerror(errno));
	unlink(path);
	s0 = snap();
	aiot_fill(buf, len, SEED + 3, 0);
	expect("tmpfs write len=64K", io(1, tfd, buf, len, 0), (long)len, NULL, 0);
	aiot_fill(buf, 1000, SEED + 4, 70001);
	expect("tmpfs write off=70001 len=1000", io(1, tfd, buf, 1000, 70001), 1000, NULL, 0);
	memset(buf, AIOT_POISON, len);
	expect("tmpfs read len=64K", io(0, tfd, buf, len, 0), (long)len, buf, len);
	{
		/* tmpfs stores data whatever AIOT_NODATA says about the device */
		bool nd = aiot.nodata;

		aiot.nodata = false;
		aiot_verify("tmpfs read", buf, len, SEED + 3, 0);
		memset(buf, AIOT_POISON, len);
		expect("tmpfs read off=65536 len=8192", io(0, tfd, buf, 8192, 65536), 5465,
		       NULL, 0);
		aiot_verify_byte("tmpfs hole", buf, 70001 - 65536, 0);
		aiot_verify("tmpfs read tail", buf + 70001 - 65536, 1000, SEED + 4, 70001);
		aiot.nodata = nd;
	}
	expect("tmpfs read at=eof", io(0, tfd, buf, 4096, 71001), 0, NULL, 0);
	s1 = snap();
	if (check_stats()) {
		fprintf(stderr, "t-fallback: fallback_not_bdev +%lld for 5 tmpfs iocbs\n",
			s1.not_bdev - s0.not_bdev);
		CHECK(s1.not_bdev > s0.not_bdev,
		      "fallback_not_bdev %lld -> %lld for 5 tmpfs iocbs", s0.not_bdev,
		      s1.not_bdev);
		CHECK(s1.submitted == s0.submitted,
		      "iocbs_submitted %lld -> %lld for tmpfs iocbs", s0.submitted,
		      s1.submitted);
	}
	close(tfd);

	/* leave no page cache behind for the tests that follow */
	if (fsync(bfd) < 0 || posix_fadvise(bfd, 0, 0, POSIX_FADV_DONTNEED))
		fprintf(stderr, "t-fallback: dropping the page cache: %s\n", strerror(errno));

	free(buf);
	free(cmp);
	aiot_ctx_destroy(ctx);
	close(bfd);
	close(dfd);
	return aiot_finish();
}
