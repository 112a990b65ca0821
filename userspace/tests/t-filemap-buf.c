// SPDX-License-Identifier: GPL-2.0
/*
 * t-filemap-buf: buffers that are not plain faulted-in anonymous memory.
 *  - MAP_SHARED mapping of a tmpfs file: an O_DIRECT read into it lands in
 *    the file (seen through pread(2) of the file); a write from it sends
 *    the file's data.
 *  - MAP_PRIVATE mapping of the file: a read into it breaks COW, the file
 *    stays unchanged and the mapping holds the device data.
 *  - Fresh anonymous memory never touched: a read faults it in; a write
 *    from it (the zero page) writes zeros.
 * One-bio and multi-bio sizes; results and data verified.
 */
#include "aiotest.h"

#include <sys/mman.h>

#define SEED	9500
#define LEN	(2 * AIOT_MIB + 8192)	/* several bios */
#define SMALL	(64 * AIOT_KIB)

static io_context_t ctx;
static int fd;

static struct aiot_res rw(int write, void *buf, size_t len, uint64_t off)
{
	return aiot_rw(ctx, write, fd, buf, len, (long long)off);
}

static void expect(const char *tag, struct aiot_res r, long want, const void *buf)
{
	aiot_report(tag, r, buf, buf ? (size_t)want : 0);
	CHECK(aiot_is(r, want), "%s: %s, want res %s", tag, aiot_resstr(r), aiot_rstr(want));
}

/* The file's bytes [0, len) through pread(2): pattern (seed, devoff)? */
static void file_is(int tfd, size_t len, uint64_t seed, uint64_t devoff, const char *what)
{
	uint8_t *tmp = aiot_alloc(len);
	ssize_t got = pread(tfd, tmp, len, 0);
	bool nd = aiot.nodata;

	CHECK(got == (ssize_t)len, "%s: pread %zd", what, got);
	if (seed != 0)
		aiot_verify(what, tmp, len, seed, devoff);	/* NODATA-aware */
	else {
		aiot.nodata = false;	/* the file is ours: always checkable */
		aiot_verify_byte(what, tmp, len, 0);
		aiot.nodata = nd;
	}
	free(tmp);
}

static void *map(int tfd, size_t len, int prot, int flags)
{
	void *p = mmap(NULL, len, prot, flags, tfd, 0);

	if (p == MAP_FAILED)
		aiot_die("mmap: %s", strerror(errno));
	return p;
}

int main(void)
{
	char path[] = "/tmp/aiot-filemap.XXXXXX";
	const uint64_t dev0 = 0, dev1 = 8 * AIOT_MIB;
	int tfd;
	uint8_t *p, *src;
	size_t sizes[2] = { SMALL, LEN };
	unsigned int i;

	aiot_init("t-filemap-buf");
	aiot_require_size(16 * AIOT_MIB);
	fd = aiot_open_dev(O_RDWR | O_DIRECT);
	ctx = aiot_ctx(4);
	tfd = mkstemp(path);
	if (tfd < 0)
		aiot_die("mkstemp %s: %s", path, strerror(errno));
	unlink(path);
	aiot_sync_write_pattern(fd, dev0, LEN, SEED);

	for (i = 0; i < 2; i++) {
		size_t len = sizes[i];
		char tag[96];

		/* read into a MAP_SHARED file mapping: the data is in the file */
		if (ftruncate(tfd, 0) < 0 || ftruncate(tfd, (off_t)len) < 0)
			aiot_die("ftruncate: %s", strerror(errno));
		p = map(tfd, len, PROT_READ | PROT_WRITE, MAP_SHARED);
		snprintf(tag, sizeof(tag), "read into MAP_SHARED file len=%zu", len);
		expect(tag, rw(0, p, len, dev0), (long)len, p);
		aiot_verify(tag, p, len, SEED, dev0);
		file_is(tfd, len, SEED, dev0, "file after read into its mapping");
		munmap(p, len);

		/* write from a MAP_SHARED (read-only) file mapping */
		src = aiot_alloc(len);
		aiot_fill(src, len, SEED + 1 + i, dev1);
		if (pwrite(tfd, src, len, 0) != (ssize_t)len)
			aiot_die("pwrite file: %s", strerror(errno));
		free(src);
		p = map(tfd, len, PROT_READ, MAP_SHARED);
		snprintf(tag, sizeof(tag), "write from MAP_SHARED file len=%zu", len);
		expect(tag, rw(1, p, len, dev1), (long)len, NULL);
		aiot_sync_verify(fd, dev1, len, SEED + 1 + i);
		munmap(p, len);

		/* read into a MAP_PRIVATE file mapping: COW, the file unchanged */
		if (ftruncate(tfd, 0) < 0 || ftruncate(tfd, (off_t)len) < 0)
			aiot_die("ftruncate: %s", strerror(errno));
		p = map(tfd, len, PROT_READ | PROT_WRITE, MAP_PRIVATE);
		snprintf(tag, sizeof(tag), "read into MAP_PRIVATE file len=%zu", len);
		expect(tag, rw(0, p, len, dev0), (long)len, p);
		aiot_verify(tag, p, len, SEED, dev0);
		file_is(tfd, len, 0, 0, "file under a MAP_PRIVATE read");
		munmap(p, len);

		/* never-touched anonymous memory, read into */
		p = map(-1, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
		snprintf(tag, sizeof(tag), "read into untouched anon len=%zu", len);
		expect(tag, rw(0, p, len, dev0), (long)len, p);
		aiot_verify(tag, p, len, SEED, dev0);
		munmap(p, len);

		/* and written from: zeros */
		p = map(-1, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
		snprintf(tag, sizeof(tag), "write from untouched anon len=%zu", len);
		expect(tag, rw(1, p, len, dev1), (long)len, NULL);
		if (!aiot.nodata) {
			uint8_t *tmp = aiot_alloc(len);

			CHECK(pread(fd, tmp, len, (off_t)dev1) == (ssize_t)len, "pread");
			aiot_verify_byte("device after a write from the zero page", tmp, len, 0);
			free(tmp);
		}
		munmap(p, len);
	}

	close(tfd);
	aiot_ctx_destroy(ctx);
	close(fd);
	return aiot_finish();
}
