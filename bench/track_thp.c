/* track_thp.c - benchmark: the write watch's collect on a THP heap (a Java heap's shape) against a raw PAGEMAP_SCAN collect-and-reset. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/userfaultfd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <pagemap.h>
#include "../lib/base/compat.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23	/* Linux 5.14 */
#endif

#define PMD	(2u << 20)
#define PAGE	4096u
#define VEC	1024
#define MAXR	64

/*
 * Two heaps of the same shape, each its own 2 MiB aligned MADV_HUGEPAGE
 * mapping: the target's (a child process, watched by the library as
 * `pagemap track` watches it) and our own (armed by our own userfaultfd, read
 * by the raw loop: the floor, the kernel's fast path and nothing else). Each
 * round both get the same writes, then both are collected and reset, in turns.
 */
struct heap {
	char *mem;
	size_t size;
};

/* What the child is told: the pages to write this round (shared before fork). */
struct order {
	uint32_t n;
	uint32_t stamp;
	uint32_t idx[];
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "track_thp: %s: %s\n", what, strerror(err));
	exit(2);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* AnonHugePages of the mapping at @start in /proc/@pid/smaps, kB (-1: not found). */
static long anon_huge_kb(pid_t pid, const void *start)
{
	char path[64], line[256];
	unsigned long a = 0;
	long kb = -1, v;
	bool in = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long b;

		if (sscanf(line, "%lx-%lx ", &a, &b) == 2)
			in = a == (uintptr_t)start;
		else if (in && sscanf(line, "AnonHugePages: %ld kB", &v) == 1)
			kb = v;
	}
	fclose(f);
	return kb;
}

static void heap_make(struct heap *h, size_t size)
{
	char *p = mmap(NULL, size + PMD, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap", errno);
	h->mem = (char *)(((uintptr_t)p + PMD - 1) & ~(uintptr_t)(PMD - 1));
	h->size = size;
	if (madvise(h->mem, size, MADV_HUGEPAGE) < 0)
		die("MADV_HUGEPAGE", errno);
	if (madvise(h->mem, size, MADV_POPULATE_WRITE) < 0)
		memset(h->mem, 1, size);
}

static void heap_write(const struct heap *h, const struct order *o)
{
	uint32_t i;

	for (i = 0; i < o->n; i++)
		*(volatile uint32_t *)(h->mem + (size_t)o->idx[i] * PAGE) = o->stamp;
}

/*
 * The pages a round writes, @pct percent of the heap's pages:
 * scattered: anywhere (every huge page gets some: the worst case for a
 * per-huge-page filter); clustered: a contiguous window that moves on each
 * round, as an allocator's bump pointer in a young generation does.
 */
static void choose(struct order *o, size_t npages, double pct, bool clustered, int round, uint64_t *seed)
{
	size_t k = (size_t)((double)npages * pct / 100.0), i, start;
	uint8_t *seen;

	if (k < 1)
		k = 1;
	o->n = (uint32_t)k;
	o->stamp = (uint32_t)splitmix(seed) | 1;
	if (clustered) {
		start = ((size_t)round * k) % (npages - k);
		for (i = 0; i < k; i++)
			o->idx[i] = (uint32_t)(start + i);
		return;
	}
	seen = calloc(npages, 1);
	if (!seen)
		die("calloc", ENOMEM);
	for (i = 0; i < k;) {
		size_t p = splitmix(seed) % npages;

		if (!seen[p]) {
			seen[p] = 1;
			o->idx[i++] = (uint32_t)p;
		}
	}
	free(seen);
}

/* The target: its heap, then one round of writes per byte read from @cmd, acknowledged on @ack. */
static void child(size_t size, struct order *o, int cmd, int ack, int ready)
{
	struct heap h;
	char c;

	heap_make(&h, size);
	if (write(ready, &h.mem, sizeof(h.mem)) != sizeof(h.mem))
		_exit(1);
	while (read(cmd, &c, 1) == 1) {
		heap_write(&h, o);
		if (write(ack, &c, 1) != 1)
			_exit(1);
	}
	_exit(0);
}

static int raw_arm(int pagemap_fd, const struct heap *h)
{
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED };
	struct uffdio_register reg = {
		.range = { .start = (uintptr_t)h->mem, .len = h->size }, .mode = UFFDIO_REGISTER_MODE_WP,
	};
	struct pm_scan_arg arg = {
		.size = sizeof(arg), .flags = PM_SCAN_WP_MATCHING | PM_SCAN_CHECK_WPASYNC,
		.start = (uintptr_t)h->mem, .end = (uintptr_t)h->mem + h->size,
		.category_mask = PAGE_IS_WRITTEN, .return_mask = PAGE_IS_WRITTEN,
	};
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);

	if (fd < 0)
		die("userfaultfd", errno);
	if (ioctl(fd, UFFDIO_API, &api) < 0)
		die("UFFDIO_API (WP_ASYNC)", errno);
	if (ioctl(fd, UFFDIO_REGISTER, &reg) < 0)
		die("UFFDIO_REGISTER", errno);
	if (ioctl(pagemap_fd, PAGEMAP_SCAN, &arg) < 0)
		die("PAGEMAP_SCAN (arm)", errno);
	return fd;
}

/* The raw collect-and-reset over our heap (resuming as lib/pages/scan.c does); pages written. */
static uint64_t raw_collect(int pagemap_fd, const struct heap *h, struct page_region *vec)
{
	uint64_t cur = (uintptr_t)h->mem, end = cur + h->size, pages = 0;

	for (;;) {
		struct pm_scan_arg arg = {
			.size = sizeof(arg), .flags = PM_SCAN_WP_MATCHING | PM_SCAN_CHECK_WPASYNC,
			.start = cur, .end = end, .vec = (uintptr_t)vec, .vec_len = VEC,
			.category_mask = PAGE_IS_WRITTEN, .return_mask = PAGE_IS_WRITTEN,
		};
		int i, n = ioctl(pagemap_fd, PAGEMAP_SCAN, &arg);

		if (n < 0)
			die("PAGEMAP_SCAN", errno);
		for (i = 0; i < n; i++)
			pages += (vec[i].end - vec[i].start) / PAGE;
		if (n < VEC)
			return pages;
		cur = arg.walk_end > vec[n - 1].end ? arg.walk_end : vec[n - 1].end;
	}
}

/* Does the library's answer cover every page written (@o, in the target's heap at @base)? Missed pages. */
static uint64_t missed(const struct order *o, uint64_t base, const struct pm_written *out, size_t n)
{
	uint64_t miss = 0;
	uint32_t i;

	for (i = 0; i < o->n; i++) {
		uint64_t a = base + (uint64_t)o->idx[i] * PAGE;
		size_t lo = 0, hi = n;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (out[mid].end <= a)
				lo = mid + 1;
			else
				hi = mid;
		}
		miss += !(lo < n && out[lo].start <= a);
	}
	return miss;
}

struct opts {
	double mib, pct;
	int rounds;
	bool shapes[2];		/* scattered, clustered */
	bool nothp;
};

static void talk(int fd, char c)
{
	if (write(fd, &c, 1) != 1)
		die("pipe", errno);
}

/* One figure: @o->rounds interleaved pairs on fresh heaps. 0, or 1 when the library missed a write. */
static int run(const struct opts *op, bool clustered, unsigned flags, struct pm_ctx *ctx, int pagemap_fd)
{
	size_t size = ((size_t)(op->mib * 1048576) + PMD - 1) & ~(size_t)(PMD - 1), npages = size / PAGE;
	struct order *o = mmap(NULL, sizeof(*o) + npages * 4, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int cmd[2], ack[2], ready[2], r, uffd, bad = 0;
	double tl[MAXR], tr[MAXR], t0;
	struct page_region *vec = calloc(VEC, sizeof(*vec));
	uint64_t seed = 42, rawpages = 0, libpages = 0, hugepages = 0, miss = 0, hashed0;
	long thp_t0, thp_t1, thp_r0, thp_r1;
	const struct pm_written *out;
	struct pm_watch *w;
	struct heap own;
	char *tmem;
	size_t n, i;
	pid_t pid;
	char c;

	if (o == MAP_FAILED || !vec || pipe(cmd) || pipe(ack) || pipe(ready))
		die("setup", errno);
	pid = fork();
	if (pid < 0)
		die("fork", errno);
	if (!pid) {
		close(cmd[1]);
		close(ack[0]);
		child(size, o, cmd[0], ack[1], ready[1]);
	}
	close(cmd[0]);
	close(ack[1]);
	if (read(ready[0], &tmem, sizeof(tmem)) != sizeof(tmem))
		die("child", EIO);
	heap_make(&own, size);
	thp_t0 = anon_huge_kb(pid, tmem);
	thp_r0 = anon_huge_kb(getpid(), own.mem);
	w = pm_watch_new(ctx, pid, PM_WATCH_AUTO, flags);
	if (!w)
		die("pm_watch_new", errno);
	if ((r = pm_watch_add(w, (uintptr_t)tmem, (uintptr_t)tmem + size, 0)) < 0)
		die("pm_watch_add", -r);
	uffd = raw_arm(pagemap_fd, &own);
	hashed0 = pm_watch_stats(w)->hashed_bytes;
	for (r = -1; r < op->rounds; r++) {	/* round -1: a warm-up, untimed */
		choose(o, npages, op->pct, clustered, r + 1, &seed);
		talk(cmd[1], 'w');
		if (read(ack[0], &c, 1) != 1)
			die("child ack", EIO);
		heap_write(&own, o);
		/* In turns: the library first on even rounds, the raw loop first on odd ones. */
		for (i = 0; i < 2; i++) {
			if ((i == 0) == (r % 2 == 0)) {
				t0 = now();
				if (pm_watch_collect(w, PM_WATCH_RESET, &out, &n) < 0)
					die("pm_watch_collect", errno);
				if (r >= 0)
					tl[r] = now() - t0;
				if (r >= 0) {
					uint64_t m = missed(o, (uintptr_t)tmem, out, n);

					miss += m;
					for (size_t k = 0; k < n; k++) {
						libpages += (out[k].end - out[k].start) / PAGE;
						hugepages += out[k].huge ? (out[k].end - out[k].start) / PAGE : 0;
					}
				}
			} else {
				uint64_t p;

				t0 = now();
				p = raw_collect(pagemap_fd, &own, vec);
				if (r >= 0) {
					tr[r] = now() - t0;
					rawpages += p;
				}
			}
		}
	}
	thp_t1 = anon_huge_kb(pid, tmem);
	thp_r1 = anon_huge_kb(getpid(), own.mem);
	{
		double ml = median(tl, op->rounds) * 1e3, mr = median(tr, op->rounds) * 1e3;
		const char *how = pm_watch_reason(w);

		printf("%-9s %-7s %5.1f%% %7.2f %7.3f %6.1fx %9.1f %8.1f %6.0f->%-6.0f %6.0f->%-6.0f %s\n",
		       clustered ? "clustered" : "scattered", flags & PM_WATCH_NOTHP ? "no-thp" : "default", op->pct, ml,
		       mr, ml / mr, (double)libpages / op->rounds, (double)hugepages / op->rounds,
		       thp_t0 / 1024.0, thp_t1 / 1024.0, thp_r0 / 1024.0, thp_r1 / 1024.0,
		       miss ? "MISSED WRITES" : "");
		printf("    method %s, %.0f MiB hashed per collect, raw %.1f pages; %s\n    notice: %s\n",
		       pm_watch_method_name(pm_watch_method(w)),
		       (double)(pm_watch_stats(w)->hashed_bytes - hashed0) / (op->rounds + 1) / 1048576,
		       (double)rawpages / op->rounds, how ? how : "", pm_watch_notice(w) ? pm_watch_notice(w) : "none");
		bad = miss != 0;
	}
	pm_watch_free(w);
	close(uffd);
	munmap(own.mem, own.size);
	close(cmd[1]);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(ack[0]);
	close(ready[0]);
	close(ready[1]);
	munmap(o, sizeof(*o) + npages * 4);
	free(vec);
	return bad;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: track_thp [OPTION]...\n"
		"Time pm_watch_collect (reset) on another process's MADV_HUGEPAGE heap against a raw\n"
		"PAGEMAP_SCAN collect-and-reset of a heap of the same shape, interleaved, medians.\n"
		"  -s, --size MIB        heap size (default 730)\n"
		"  -p, --percent P       pages written per round (default 3)\n"
		"  -r, --rounds N        timed rounds, at most 64 (default 9)\n"
		"  -w, --shape NAME      scattered, clustered or both (default both)\n"
		"  -n, --no-thp          also time PM_WATCH_NOTHP (track --no-thp)\n"
		"Columns: LIB_MS / RAW_MS medians and their ratio; pages the library reported per round\n"
		"(HUGE_PG: of them, reported whole with their huge page); AnonHugePages (MiB) of the\n"
		"target's heap and of ours before -> after.\n");
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "size", required_argument, NULL, 's' }, { "percent", required_argument, NULL, 'p' },
		{ "rounds", required_argument, NULL, 'r' }, { "shape", required_argument, NULL, 'w' },
		{ "no-thp", no_argument, NULL, 'n' }, { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	struct opts op = { .mib = 730, .pct = 3, .rounds = 9, .shapes = { true, true } };
	struct utsname u;
	struct pm_ctx *ctx;
	int c, fd, bad = 0, s;
	char thp[64] = "?";
	FILE *f;

	while ((c = getopt_long(argc, argv, "s:p:r:w:nh", lo, NULL)) != -1) {
		switch (c) {
		case 's': op.mib = atof(optarg); break;
		case 'p': op.pct = atof(optarg); break;
		case 'r': op.rounds = atoi(optarg); break;
		case 'w':
			op.shapes[0] = !strcmp(optarg, "scattered") || !strcmp(optarg, "both");
			op.shapes[1] = !strcmp(optarg, "clustered") || !strcmp(optarg, "both");
			break;
		case 'n': op.nothp = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (op.rounds < 1 || op.rounds > MAXR || op.mib < 4 || !(op.shapes[0] || op.shapes[1])) {
		usage(stderr);
		return 2;
	}
	ctx = pm_ctx_new(NULL);
	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (!ctx || fd < 0)
		die("pm_ctx_new or pagemap", errno);
	uname(&u);
	f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	if (f) {
		if (!fgets(thp, sizeof(thp), f))
			thp[0] = 0;
		thp[strcspn(thp, "\n")] = 0;
		fclose(f);
	}
	printf("kernel %s; THP %s; heap %.0f MiB MADV_HUGEPAGE, %.1f%% of its pages written per round, %d rounds\n",
	       u.release, thp, op.mib, op.pct, op.rounds);
	printf("%-9s %-7s %6s %7s %7s %7s %9s %8s %-13s %-13s\n", "SHAPE", "FLAGS", "WRITE", "LIB_MS", "RAW_MS", "RATIO",
	       "LIB_PAGES", "HUGE_PG", "TARGET_THP", "RAW_THP");
	fflush(stdout);
	for (s = 0; s < 2; s++) {
		if (!op.shapes[s])
			continue;
		bad |= run(&op, s == 1, 0, ctx, fd);
		if (op.nothp)
			bad |= run(&op, s == 1, PM_WATCH_NOTHP, ctx, fd);
		fflush(stdout);
	}
	pm_ctx_free(ctx);
	return bad;
}
