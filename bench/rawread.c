/* rawread.c - benchmark baselines: the kernel's raw pagemap read of a process, by pread or by PAGEMAP_SCAN, or pread plus the frame join. */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include "../lib/base/compat.h"

#define PREAD_ENTRIES	262144u		/* 2 MiB of entries per pread */
#define SCAN_VEC	1024u		/* regions per PAGEMAP_SCAN call, as lib/pages/walk.c */
#define TASK_SIZE	0x7ffffffff000ULL	/* x86-64 4-level: nothing at or above reads (docs/kernel-interface.md §3) */
#define PM_PRESENT	(1ULL << 63)

/* The same return mask as the tool's scan back end (lib/pages/walk.c choose_backend, with soft-dirty and guard). */
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

/* A run of contiguous present frames (mode frames). */
struct run {
	uint64_t start, n;
};
static struct run *runs;
static size_t nruns, cap_runs;

static int cmp_run(const void *a, const void *b)
{
	uint64_t x = ((const struct run *)a)->start, y = ((const struct run *)b)->start;

	return x < y ? -1 : x > y;
}

/* Mode frames: gather the present frames of @n entries as runs. */
static int gather(const uint64_t *buf, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t pfn = buf[i] & ((1ULL << 55) - 1);
		if (!(buf[i] >> 63) || !pfn)
			continue;
		if (nruns && runs[nruns - 1].start + runs[nruns - 1].n == pfn) {
			runs[nruns - 1].n++;
			continue;
		}
		if (nruns == cap_runs) {
			struct run *r = realloc(runs, (cap_runs = cap_runs ? cap_runs * 2 : 65536) * sizeof(*r));
			if (!r)
				return -ENOMEM;
			runs = r;
		}
		runs[nruns++] = (struct run){ pfn, 1 };
	}
	return 0;
}

/* pread the entries of [start, end) in 2 MiB buffers, counting present pages. Returns 0 or -errno. */
static int pread_range(int fd, uint64_t start, uint64_t end, uint64_t *buf, struct totals *t, bool frames)
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
		if (frames && gather(buf, (size_t)n / 8))
			return -ENOMEM;
		vpn += (uint64_t)n / 8;
	}
	return 0;
}

/*
 * Mode scan-pmd: one pagemap entry per 2 MiB block of each huge region. Since Linux 6.15 bit 56
 * (exclusive) is one answer per folio (folio_maybe_mapped_shared), so one entry tells a PMD-mapped
 * block's EXCLUSIVE: the least any reader of `maps`' default columns must add to the scan there.
 */
static bool pmd_reads;

static int pmd_entries(int fd, const struct page_region *r, struct totals *t)
{
	uint64_t a, e;

	if (!pmd_reads || !(r->categories & PAGE_IS_HUGE))
		return 0;
	for (a = r->start & ~((2ULL << 20) - 1); a < r->end; a += 2ULL << 20) {
		if (pread(fd, &e, 8, (off_t)((a >> shift) * 8)) != 8)
			return -errno;
		t->calls++;
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
			if (pmd_entries(fd, &vec[i], t))
				return -errno;
		}
		if ((unsigned)n < SCAN_VEC)
			break;
		/* A full vec: walk_end may be stale on 6.12-6.18 (docs/kernel-interface.md §6.2); resume past the last region. */
		start = arg.walk_end > vec[n - 1].end ? arg.walk_end : vec[n - 1].end;
	}
	return 0;
}

/*
 * Mode frames: the kpageflags, kpagecount and kpagecgroup words of the
 * gathered frames, runs sorted and read in ascending order, runs up to 32
 * frames apart in one read of at most PREAD_ENTRIES words: the kernel's
 * cost of the frame join, what `phys -p` and a snapshot add to a walk.
 */
static int read_frames(uint64_t *buf, struct totals *t)
{
	static const char *const file[] = { "/proc/kpageflags", "/proc/kpagecount", "/proc/kpagecgroup" };
	size_t i, j;

	qsort(runs, nruns, sizeof(*runs), cmp_run);
	for (int f = 0; f < 3; f++) {
		int fd = open(file[f], O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		for (i = 0; i < nruns; i = j) {
			uint64_t base = runs[i].start, end = base + (runs[i].n < PREAD_ENTRIES ? runs[i].n : PREAD_ENTRIES);
			for (j = i + 1; j < nruns && runs[j].start <= end + 32 && runs[j].start + runs[j].n - base <= PREAD_ENTRIES; j++)
				end = runs[j].start + runs[j].n > end ? runs[j].start + runs[j].n : end;
			if (pread(fd, buf, (end - base) * 8, (off_t)(base * 8)) < 0) {
				close(fd);
				return -errno;
			}
			t->calls++;
		}
		close(fd);
	}
	return 0;
}

/* One pass: every mapping the tool walks ([vsyscall] and [vvar*] excluded, as lib/pages/walk.c does). */
static int one_pass(const char *mode, int pid, struct totals *t)
{
	char path[64], line[4096];
	bool frames = !strcmp(mode, "frames"), scan = !strncmp(mode, "scan", 4);
	void *buf = !scan ? malloc(PREAD_ENTRIES * 8) : malloc(SCAN_VEC * sizeof(struct page_region));
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
		r = !scan ? pread_range(fd, start, end, buf, t, frames) : scan_range(fd, start, end, buf, t);
	}
	if (r == 0 && frames)
		r = read_frames(buf, t);
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

	if (argc != 3 || (strcmp(argv[1], "pread") && strcmp(argv[1], "scan") && strcmp(argv[1], "scan-pmd") &&
			  strcmp(argv[1], "frames"))) {
		fprintf(stderr, "Usage: rawread pread|scan|scan-pmd|frames PID\n"
				"One pass over the pagemap of every mapping of PID: pread in 2 MiB buffers, or\n"
				"PAGEMAP_SCAN per mapping with the tool's return mask; scan-pmd: the scan plus one\n"
				"entry per 2 MiB block of each huge region (EXCLUSIVE's least cost, Linux 6.15+);\n"
				"frames: pread, then the kpageflags, kpagecount and kpagecgroup words of the\n"
				"present frames (root).\n"
				"Prints seconds and counts.\n");
		return 2;
	}
	pid = strtol(argv[2], &end, 10);
	if (*end || pid <= 0) {
		fprintf(stderr, "rawread: invalid PID '%s'\n", argv[2]);
		return 2;
	}
	pmd_reads = !strcmp(argv[1], "scan-pmd");
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
