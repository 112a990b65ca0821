/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Buffers that transparent huge pages back, for the tests and aio-bench
 * (not installed).  x86-64 maps a huge page with one PMD: 2 MiB, aligned.
 */
#ifndef THP_BUF_H
#define THP_BUF_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define THP_BUF_SIZE	(2UL << 20)

/*
 * @len bytes of anonymous memory starting on a huge-page boundary,
 * madvise(MADV_HUGEPAGE)d before anything touches it; free with munmap().
 * NULL with errno set on failure (EINVAL from madvise: a kernel without
 * THP).
 */
static inline void *thp_buf_map(size_t len)
{
	size_t span = len + THP_BUF_SIZE;
	char *p = mmap(NULL, span, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t base = (uintptr_t)p, start;

	if (p == MAP_FAILED)
		return NULL;
	/* keep the aligned part only, so that every huge page fits in it */
	start = (base + THP_BUF_SIZE - 1) & ~(uintptr_t)(THP_BUF_SIZE - 1);
	if (start > base)
		munmap(p, start - base);
	if (base + span > start + len)
		munmap((char *)start + len, base + span - start - len);
	if (madvise((void *)start, len, MADV_HUGEPAGE) < 0) {
		munmap((void *)start, len);
		return NULL;
	}
	return (void *)start;
}

/*
 * Bytes of the mappings overlapping [@p, @p + @len) that huge pages back
 * (their AnonHugePages in /proc/self/smaps), or -1 if smaps cannot be read.
 */
static inline long long thp_buf_backed(const void *p, size_t len)
{
	uintptr_t lo = (uintptr_t)p, hi = lo + len;
	unsigned long long vlo, vhi, kib;
	FILE *f = fopen("/proc/self/smaps", "r");
	long long total = 0;
	char line[256];
	int in = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		/* a mapping's first line, "start-end perms ...", starts one */
		if (sscanf(line, "%llx-%llx ", &vlo, &vhi) == 2) {
			in = vlo < hi && vhi > lo;
			continue;
		}
		if (in && sscanf(line, "AnonHugePages: %llu kB", &kib) == 1)
			total += (long long)kib * 1024;
	}
	fclose(f);
	return total;
}

#endif /* THP_BUF_H */
