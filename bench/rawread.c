/* rawread.c - benchmark baselines: the kernel's raw pagemap read of a process, by pread or by PAGEMAP_SCAN. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include "../lib/compat.h"

#define PREAD_ENTRIES	262144u		/* 2 MiB of entries per pread */
#define SCAN_VEC	1024u		/* regions per PAGEMAP_SCAN call, as lib/walk.c */
#define TASK_SIZE	0x7ffffffff000ULL	/* x86-64 4-level: nothing at or above reads (docs/kernel-interface.md §3) */
#define PM_PRESENT	(1ULL << 63)

/* The same return mask as the tool's scan back end (lib/walk.c choose_backend, with soft-dirty and guard). */
#define RETURN_MASK	(PAGE_IS_PRESENT | PAGE_IS_SWAPPED | PAGE_IS_FILE | PAGE_IS_PFNZERO | PAGE_IS_HUGE | \
			 PAGE_IS_SOFT_DIRTY | PAGE_IS_GUARD)

static unsigned shift = 12;

struct totals {
	uint64_t present, pages, ranges, calls;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* pread the entries of [start, end) in 2 MiB buffers, counting present pages. Returns 0 or -errno. */
static int pread_range(int fd, uint64_t start, uint64_t end, uint64_t *buf, struct totals *t)
{
	uint64_t vpn = start >> shift, end_vpn = end >> shift;

	while (vpn < end_vpn) {
		size_t want = end_vpn - vpn < PREAD_ENTRIES ? (size_t)(end_vpn - vpn) : PREAD_ENTRIES, i;
		ssize_t n = pread(fd, buf, want * 8, (off_t)(vpn * 8));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ESRCH;	/* below task_size a 0 means the mm is gone */
		t->calls++;
		for (i = 0; i < (size_t)n / 8; i++)
			t->present += buf[i] >> 63;
		t->pages += (uint64_t)n / 8;
		vpn += (uint64_t)n / 8;
	}
	return 0;
}

/* PAGEMAP_SCAN over [start, end) with the tool's mask and vec size, summing present pages. */
static int scan_range(int fd, uint64_t start, uint64_t end, struct page_region *vec, struct totals *t)
{
	while (start < end) {
		struct pm_scan_arg arg = {
			.size = sizeof(arg), .start = start, .end = end,
			.vec = (uint64_t)(uintptr_t)vec, .vec_len = SCAN_VEC, .return_mask = RETURN_MASK,
		};
		int n = ioctl(fd, PAGEMAP_SCAN, &arg), i;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		t->calls++;
		for (i = 0; i < n; i++) {
			uint64_t pages = (vec[i].end - vec[i].start) >> shift;
			t->pages += pages;
			if (vec[i].categories & PAGE_IS_PRESENT)
				t->present += pages;
		}
		if ((unsigned)n < SCAN_VEC)
			break;
		/* A full vec: walk_end may be stale on 6.12-6.18 (docs/kernel-interface.md §6.2); resume past the last region. */
		start = arg.walk_end > vec[n - 1].end ? arg.walk_end : vec[n - 1].end;
	}
	return 0;
}

/* One pass: every mapping the tool walks ([vsyscall] and [vvar*] excluded, as lib/walk.c does). */
static int one_pass(const char *mode, int pid, struct totals *t)
{
	char path[64], line[4096];
	void *buf = strcmp(mode, "scan") ? malloc(PREAD_ENTRIES * 8) : malloc(SCAN_VEC * sizeof(struct page_region));
	unsigned long long start, end;
	FILE *maps;
	int fd, r = 0;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	maps = fopen(path, "re");
	if (!buf || fd < 0 || !maps) {
		r = -errno;
		goto out;
	}
	while (r == 0 && fgets(line, sizeof(line), maps)) {
		if (sscanf(line, "%llx-%llx", &start, &end) != 2 || strstr(line, "[vvar") || start >= TASK_SIZE)
			continue;
		if (end > TASK_SIZE)
			end = TASK_SIZE;
		t->ranges++;
		r = strcmp(mode, "scan") ? pread_range(fd, start, end, buf, t) : scan_range(fd, start, end, buf, t);
	}
out:
	if (maps)
		fclose(maps);
	if (fd >= 0)
		close(fd);
	free(buf);
	return r;
}

int main(int argc, char **argv)
{
	struct totals t = { 0 };
	double t0;
	char *end;
	long pid;
	int r;

	if (argc != 3 || (strcmp(argv[1], "pread") && strcmp(argv[1], "scan"))) {
		fprintf(stderr, "Usage: rawread pread|scan PID\n"
				"One pass over the pagemap of every mapping of PID: pread in 2 MiB buffers, or\n"
				"PAGEMAP_SCAN per mapping with the tool's return mask. Prints seconds and counts.\n");
		return 2;
	}
	pid = strtol(argv[2], &end, 10);
	if (*end || pid <= 0) {
		fprintf(stderr, "rawread: invalid PID '%s'\n", argv[2]);
		return 2;
	}
	while ((1L << shift) < sysconf(_SC_PAGESIZE))
		shift++;
	t0 = now();
	r = one_pass(argv[1], (int)pid, &t);
	t0 = now() - t0;
	if (r < 0) {
		fprintf(stderr, "rawread: %s of process %ld: %s\n", argv[1], pid, strerror(-r));
		return 1;
	}
	printf("mode=%s seconds=%.6f present_pages=%llu pages=%llu ranges=%llu calls=%llu\n", argv[1], t0,
	       (unsigned long long)t.present, (unsigned long long)t.pages, (unsigned long long)t.ranges,
	       (unsigned long long)t.calls);
	return 0;
}
