/* watch.c - benchmark: pm_watch collect-and-reset against a raw PAGEMAP_SCAN, hashing every page and the mprotect back end. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/userfaultfd.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <pagemap.h>
#include "../lib/base/compat.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23	/* Linux 5.14 */
#endif

#define MAX_LIST	8
#define GIB		(1024.0 * 1024 * 1024)

/*
 * The methods, in the order of the table. RAW is the floor: a hand-written
 * PAGEMAP_SCAN loop over a range on our own userfaultfd, return mask
 * PAGE_IS_WRITTEN alone (the kernel's fast path). RAW_HUGE is the same loop
 * with the return mask lib/watch/watch_uffd.c asks for (WRITTEN | HUGE), which the
 * kernel serves by its general path: it tells the kernel's share of the
 * library's time from the library's own.
 */
enum method { M_RAW, M_RAW_HUGE, M_UFFD, M_MPROTECT, M_HASH, M_COUNT };

static const char *const method_names[M_COUNT] = { "raw-scan", "raw-huge", "uffd", "mprotect", "hash" };

struct opts {
	double sizes[MAX_LIST];		/* GiB */
	int nsizes;
	double fracs[MAX_LIST];		/* percent of the pages written per round */
	int nfracs;
	int rounds;			/* 0: by size */
	unsigned methods;		/* bit per enum method */
	bool thp, use_memset;
	size_t fw_pages;		/* pages of the first-write test */
	int fw_reps;
	size_t vec_len;			/* regions per PAGEMAP_SCAN call of the raw loop */
	uint64_t seed;
};

/* The memory under test and what every method shares. */
struct bench {
	char *mem;
	size_t size, npages, psize;
	unsigned shift;
	int pagemap_fd;
	struct pm_ctx *ctx;
	uint64_t *hashes;		/* HASH: one per page, from the last collect (or arming) */
	struct page_region *vec;	/* RAW */
	size_t vec_len;
	uint64_t stamp;			/* the value the next write stores: every write changes the page */
};

/* One method, armed over the whole of b->mem. */
struct armed {
	enum method m;
	struct pm_watch *w;		/* UFFD, MPROTECT */
	int uffd;			/* RAW */
};

/* What one collect found. */
struct found {
	uint64_t pages, ranges;
	uint64_t overflows;		/* MPROTECT: pm_watch_stats()->overflows, running total */
	const struct pm_written *out;	/* UFFD, MPROTECT: the ranges (borrowed until the next collect) */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU time of this thread (user + system): what a busy machine disturbs least. */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "watch: %s: %s\n", what, strerror(err));
	exit(1);
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

/* The kB value of "Name:" in @path (/proc/meminfo, /proc/self/smaps_rollup), or 0. */
static uint64_t kb_of(const char *path, const char *name)
{
	char line[256];
	uint64_t v = 0;
	size_t n = strlen(name);
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, n) && line[n] == ':') {
			v = strtoull(line + n + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

static uint64_t meminfo_kb(const char *name)
{
	return kb_of("/proc/meminfo", name);
}

static long read_long(const char *path)
{
	char buf[64] = "";
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f && fgets(buf, sizeof(buf), f))
		v = strtol(buf, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

/* ------------------------------------------------------------------ */
/* The baselines                                                      */
/* ------------------------------------------------------------------ */

/* RAW: our own userfaultfd, async write-protect, the range registered and armed. */
static int raw_arm(struct bench *b)
{
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED };
	struct uffdio_register reg = {
		.range = { .start = (uintptr_t)b->mem, .len = b->size },
		.mode = UFFDIO_REGISTER_MODE_WP,
	};
	struct pm_scan_arg arg = {
		.size = sizeof(arg), .flags = PM_SCAN_WP_MATCHING | PM_SCAN_CHECK_WPASYNC,
		.start = (uintptr_t)b->mem, .end = (uintptr_t)b->mem + b->size,
		.category_mask = PAGE_IS_WRITTEN, .return_mask = PAGE_IS_WRITTEN,
	};
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);

	if (fd < 0)
		die("userfaultfd", errno);
	if (ioctl(fd, UFFDIO_API, &api) < 0)
		die("UFFDIO_API (WP_ASYNC)", errno);
	if (ioctl(fd, UFFDIO_REGISTER, &reg) < 0)
		die("UFFDIO_REGISTER", errno);
	if (ioctl(b->pagemap_fd, PAGEMAP_SCAN, &arg) < 0)
		die("PAGEMAP_SCAN (arm)", errno);
	return fd;
}

/*
 * RAW collect-and-reset: as little as a caller can do. Resume at the later of
 * walk_end and the last region's end (docs/kernel-interface.md §6.2: stale walk_end).
 */
static void raw_collect(struct bench *b, uint64_t return_mask, struct found *f)
{
	uint64_t cur = (uintptr_t)b->mem, end = cur + b->size;

	for (;;) {
		struct pm_scan_arg arg = {
			.size = sizeof(arg), .flags = PM_SCAN_WP_MATCHING | PM_SCAN_CHECK_WPASYNC,
			.start = cur, .end = end, .vec = (uintptr_t)b->vec, .vec_len = b->vec_len,
			.category_mask = PAGE_IS_WRITTEN, .return_mask = return_mask,
		};
		int i, n = ioctl(b->pagemap_fd, PAGEMAP_SCAN, &arg);

		if (n < 0)
			die("PAGEMAP_SCAN", errno);
		for (i = 0; i < n; i++)
			f->pages += (b->vec[i].end - b->vec[i].start) >> b->shift;
		f->ranges += (uint64_t)n;
		if ((size_t)n < b->vec_len)
			break;
		cur = arg.walk_end > b->vec[n - 1].end ? arg.walk_end : b->vec[n - 1].end;
	}
}

static inline uint64_t rotl(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

/* XXH64's round, four lanes per page: a fast 64-bit hash of one page. */
static inline uint64_t xround(uint64_t acc, uint64_t in)
{
	return rotl(acc + in * 0xc2b2ae3d27d4eb4fULL, 31) * 0x9e3779b185ebca87ULL;
}

static uint64_t page_hash(const uint64_t *p, size_t words)
{
	uint64_t a = 1, b = 2, c = 3, d = 4;
	size_t i;

	for (i = 0; i < words; i += 4) {
		a = xround(a, p[i]);
		b = xround(b, p[i + 1]);
		c = xround(c, p[i + 2]);
		d = xround(d, p[i + 3]);
	}
	return rotl(a, 1) + rotl(b, 7) + rotl(c, 12) + rotl(d, 18);
}

/* HASH collect-and-reset: hash every page, count (and remember) those that changed. */
static void hash_collect(struct bench *b, struct found *f)
{
	size_t i, words = b->psize / 8;
	bool prev = false;

	for (i = 0; i < b->npages; i++) {
		uint64_t h = page_hash((const uint64_t *)(b->mem + i * b->psize), words);
		bool changed = h != b->hashes[i];

		if (changed) {
			b->hashes[i] = h;
			f->pages++;
			f->ranges += !prev;
		}
		prev = changed;
	}
}

/* ------------------------------------------------------------------ */
/* Arming, collecting, disarming any method                           */
/* ------------------------------------------------------------------ */

static void arm(struct bench *b, enum method m, struct armed *a)
{
	struct found dummy = { 0 };
	int err;

	memset(a, 0, sizeof(*a));
	a->m = m;
	a->uffd = -1;
	switch (m) {
	case M_RAW:
	case M_RAW_HUGE:
		a->uffd = raw_arm(b);
		break;
	case M_HASH:
		hash_collect(b, &dummy);
		break;
	case M_UFFD:
	case M_MPROTECT:
		a->w = pm_watch_new(b->ctx, 0, m == M_UFFD ? PM_WATCH_UFFD : PM_WATCH_MPROTECT, 0);
		if (!a->w)
			die(m == M_UFFD ? "pm_watch_new uffd" : "pm_watch_new mprotect", errno);
		err = pm_watch_add(a->w, (uintptr_t)b->mem, (uintptr_t)b->mem + b->size, 0);
		if (err < 0)
			die("pm_watch_add", -err);
		break;
	default:
		break;
	}
}

static void collect(struct bench *b, struct armed *a, struct found *f)
{
	const struct pm_written *out;
	size_t n, i;
	int err;

	memset(f, 0, sizeof(*f));
	switch (a->m) {
	case M_RAW:
		raw_collect(b, PAGE_IS_WRITTEN, f);
		break;
	case M_RAW_HUGE:
		raw_collect(b, PAGE_IS_WRITTEN | PAGE_IS_HUGE, f);
		break;
	case M_HASH:
		hash_collect(b, f);
		break;
	default:
		err = pm_watch_collect(a->w, PM_WATCH_RESET, &out, &n);
		if (err < 0)
			die("pm_watch_collect", -err);
		for (i = 0; i < n; i++)
			f->pages += (out[i].end - out[i].start) >> b->shift;
		f->ranges = n;
		f->out = out;
		f->overflows = pm_watch_stats(a->w)->overflows;
		break;
	}
}

static void disarm(struct armed *a)
{
	if (a->uffd >= 0)
		close(a->uffd);	/* the kernel unregisters and clears the write-protect bits */
	pm_watch_free(a->w);
	a->uffd = -1;
	a->w = NULL;
}

/* Write one word into each of @n pages: a new value each time, at an offset that varies by page. */
static void write_pages(struct bench *b, const uint32_t *idx, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		volatile uint64_t *p = (volatile uint64_t *)(b->mem + (size_t)idx[i] * b->psize);

		p[idx[i] % (b->psize / 8)] = ++b->stamp;
	}
}

/* @k distinct pseudo-random page indices, sorted, into @idx; @bits is npages bits of scratch. */
static void choose_pages(uint64_t seed, size_t npages, size_t k, uint32_t *idx, uint64_t *bits)
{
	size_t i, got = 0;

	memset(bits, 0, (npages + 63) / 64 * 8);
	while (got < k) {
		size_t p = splitmix(&seed) % npages;

		if (bits[p / 64] >> (p % 64) & 1)
			continue;
		bits[p / 64] |= 1ULL << (p % 64);
		got++;
	}
	for (i = 0, got = 0; i < npages; i++)
		if (bits[i / 64] >> (i % 64) & 1)
			idx[got++] = (uint32_t)i;
}

/* ------------------------------------------------------------------ */
/* The measurements                                                   */
/* ------------------------------------------------------------------ */

struct result {
	double ms[64], cpu[64];
	int n;
	uint64_t ranges, overflows, wrong, wrong_pages;
};

static int rounds_for(const struct opts *o, double gib)
{
	if (o->rounds)
		return o->rounds;
	return gib <= 1 ? 15 : gib <= 4 ? 9 : 5;
}

static const char *size_name(double gib)
{
	static char buf[32];

	snprintf(buf, sizeof(buf), gib == (int)gib ? "%.0fGiB" : "%.2fGiB", gib);
	return buf;
}

/* Print one (size, fraction, method) line. Returns 1 if a collect gave a wrong count. */
/* The raw scan's figures, which the others are divided by (0: not measured). */
struct base {
	double wall, cpu, cpu_min;
};

static int report(double gib, double frac, size_t k, enum method m, struct result *r, const struct base *raw)
{
	char note[128] = "";
	double cpu = median(r->cpu, r->n), med = median(r->ms, r->n);

	if (r->wrong)
		snprintf(note, sizeof(note), "WRONG: %llu of %d collects reported %llu pages for %zu written",
			 (unsigned long long)r->wrong, r->n, (unsigned long long)r->wrong_pages, k);
	else if (r->overflows)
		snprintf(note, sizeof(note), "overflowed (vm.max_map_count) in %llu of %d rounds: whole range reported",
			 (unsigned long long)r->overflows, r->n);
	printf("%-7s %6.1f%% %8zu  %-9s %3d %9.3f %8.3f %9.3f %6.2fx %9.3f %6.2fx %8.3f %6.2fx %7llu  %s\n",
	       size_name(gib), frac, k, method_names[m], r->n, med, r->ms[0], r->ms[r->n - 1],
	       raw->wall > 0 ? med / raw->wall : 0.0, cpu, raw->cpu > 0 ? cpu / raw->cpu : 0.0, r->cpu[0],
	       raw->cpu_min > 0 ? r->cpu[0] / raw->cpu_min : 0.0, (unsigned long long)(r->ranges / (uint64_t)r->n), note);
	fflush(stdout);
	return r->wrong != 0;
}

/*
 * Do the ranges of a pm_watch collect cover exactly the @k sorted pages of
 * @idx? Returns the first page reported but not written, or written but not
 * reported, as an index; -1 when they agree.
 */
static long long check_set(const struct bench *b, const struct found *f, const uint32_t *idx, size_t k)
{
	uint64_t base = (uintptr_t)b->mem;
	size_t i, j = 0;

	for (i = 0; i < f->ranges; i++) {
		uint64_t p, first = (f->out[i].start - base) >> b->shift, last = (f->out[i].end - base) >> b->shift;

		for (p = first; p < last; p++, j++)
			if (j >= k || idx[j] != p)
				return j < k && idx[j] < p ? (long long)idx[j] : (long long)p;
	}
	return j < k ? (long long)idx[j] : -1;
}

/* Record and check one timed collect of @m: @idx (@k pages) were written since the last one. */
static void account(struct bench *b, enum method m, struct result *res, const struct found *f, uint64_t overflows,
		    const uint32_t *idx, size_t k, const char *where)
{
	long long bad_page = -1;

	res->ranges += f->ranges;
	if (overflows) {	/* MPROTECT at vm.max_map_count: the range was given up whole, as documented */
		res->overflows++;
		return;
	}
	if (f->pages == k && f->out)
		bad_page = check_set(b, f, idx, k);
	if (f->pages == k && bad_page < 0)
		return;
	res->wrong++;
	res->wrong_pages = f->pages;
	if (f->pages != k)
		fprintf(stderr, "watch: WRONG ANSWER: %s, %s: %llu pages reported, %zu written\n", method_names[m], where,
			(unsigned long long)f->pages, k);
	else
		fprintf(stderr, "watch: WRONG ANSWER: %s, %s: right count, but page %lld (%p) is reported xor written\n",
			method_names[m], where, bad_page, (void *)(b->mem + (size_t)bad_page * b->psize));
}

/*
 * Arm @m, run the untimed warm-up round (set 0: the method's buffers reach
 * their steady size), then timed rounds @from..@to into @res, and disarm.
 * Returns 1 if the warm-up round gave a wrong answer (timed ones count in @res).
 */
static int run_method(struct bench *b, enum method m, const uint32_t *idx, size_t k, int from, int to,
		      struct result *res, const char *what)
{
	struct result warm = { 0 };
	struct armed a;
	struct found f;
	uint64_t ovf = 0;
	char where[96];
	int r;

	arm(b, m, &a);
	for (r = 0; r <= to; r = r ? r + 1 : from) {
		const uint32_t *set = idx + (size_t)r * k;
		double t0, c0, wall, cpu;

		write_pages(b, set, k);
		c0 = cpu_now();
		t0 = now();
		collect(b, &a, &f);
		wall = (now() - t0) * 1e3;
		cpu = (cpu_now() - c0) * 1e3;
		snprintf(where, sizeof(where), "%s, %s %d", what, r ? "round" : "warm-up round", r);
		account(b, m, r ? res : &warm, &f, f.overflows - ovf, set, k, where);
		ovf = f.overflows;
		if (r) {
			res->ms[res->n] = wall;
			res->cpu[res->n++] = cpu;
		}
	}
	disarm(&a);
	return warm.wrong != 0;
}

/*
 * One fraction at one size. The page sets are drawn first (set 0 for the
 * warm-up rounds, then one per timed round), the same for every method.
 * Two passes: in each every method runs half the timed rounds, the second
 * pass in the reverse order of methods, so a drift in the machine's speed
 * is shared out evenly.
 */
static int bench_fraction(struct bench *b, const struct opts *o, double gib, double frac)
{
	int rounds = rounds_for(o, gib) > 64 ? 64 : rounds_for(o, gib), r, j, nm = 0, bad = 0, pass;
	size_t k = (size_t)llround((double)b->npages * frac / 100.0);
	uint64_t *bits = malloc((b->npages + 63) / 64 * 8);
	static struct result res[M_COUNT];
	enum method order[M_COUNT];
	struct base raw = { 0 };
	char what[64];
	uint32_t *idx;

	k = k ? k : 1;
	idx = malloc((size_t)(rounds + 1) * k * sizeof(*idx));
	if (!idx || !bits)
		die("malloc", ENOMEM);
	for (r = 0; r <= rounds; r++)
		choose_pages(o->seed ^ (uint64_t)r * 0x100000001b3ULL ^ (uint64_t)(frac * 1e6) ^ b->npages, b->npages,
			     k, idx + (size_t)r * k, bits);
	memset(res, 0, sizeof(res));
	for (j = 0; j < M_COUNT; j++)
		if (o->methods & 1u << j)
			order[nm++] = (enum method)j;
	snprintf(what, sizeof(what), "%s, %g%%", size_name(gib), frac);
	for (pass = 0; pass < 2; pass++) {
		int from = pass ? (rounds + 1) / 2 + 1 : 1, to = pass ? rounds : (rounds + 1) / 2;

		for (j = 0; j < nm && from <= to; j++) {
			enum method m = order[pass ? nm - 1 - j : j];

			bad |= run_method(b, m, idx, k, from, to, &res[m], what);
		}
	}
	if (o->methods & 1u << M_RAW) {
		double tmp[64];

		memcpy(tmp, res[M_RAW].ms, sizeof(tmp));
		raw.wall = median(tmp, res[M_RAW].n);
		memcpy(tmp, res[M_RAW].cpu, sizeof(tmp));
		raw.cpu = median(tmp, res[M_RAW].n);
		raw.cpu_min = tmp[0];
	}
	for (j = 0; j < M_COUNT; j++)
		if (o->methods & 1u << j)
			bad |= report(gib, frac, k, (enum method)j, &res[j], &raw);
	free(idx);
	free(bits);
	return bad;
}

/* One byte into each of @n pages: wall and CPU nanoseconds per page. */
static void touch_pages(struct bench *b, const uint32_t *idx, size_t n, double *wall, double *cpu)
{
	double t0, c0 = cpu_now();
	size_t i;

	t0 = now();
	for (i = 0; i < n; i++)
		((volatile char *)b->mem)[(size_t)idx[i] * b->psize] = (char)++b->stamp;
	*wall = (now() - t0) * 1e9 / (double)n;
	*cpu = (cpu_now() - c0) * 1e9 / (double)n;
}

/*
 * The cost of the first write to an armed page: one byte into each of @n
 * pages spread over the range, right after a reset, against the same writes
 * with nothing armed. Checks the next collect reports exactly those pages.
 */
static int bench_first_write(struct bench *b, const struct opts *o, double gib)
{
	size_t n = o->fw_pages < b->npages / 2 ? o->fw_pages : b->npages / 2, i, stride = b->npages / n;
	uint32_t *idx = malloc(n * sizeof(*idx));
	double wall[64], cpu[64], base_wall, base_cpu;
	int rep, reps = o->fw_reps > 64 ? 64 : o->fw_reps, bad = 0, mi;
	static const enum method ms[] = { M_UFFD, M_MPROTECT };

	if (!idx)
		die("malloc", ENOMEM);
	for (i = 0; i < n; i++)
		idx[i] = (uint32_t)(i * stride + (i * 7) % stride);
	/* The baseline: the same writes with nothing armed (the pages present, writable and dirty already). */
	for (rep = 0; rep < reps; rep++)
		touch_pages(b, idx, n, &wall[rep], &cpu[rep]);
	base_wall = median(wall, reps);
	base_cpu = median(cpu, reps);
	printf("first-write %-7s %6zu pages  %-9s %9.1f ns/page wall %9.1f ns/page CPU\n", size_name(gib), n,
	       "unarmed", base_wall, base_cpu);
	for (mi = 0; mi < 2; mi++) {
		struct result res = { 0 };
		struct armed a;
		struct found f;
		char where[64];
		uint64_t ovf;

		if (!(o->methods & 1u << ms[mi]))
			continue;
		arm(b, ms[mi], &a);
		collect(b, &a, &f);
		ovf = f.overflows;
		snprintf(where, sizeof(where), "first-write test, %s", size_name(gib));
		for (rep = 0; rep < reps; rep++) {
			touch_pages(b, idx, n, &wall[rep], &cpu[rep]);
			collect(b, &a, &f);	/* reports them and arms them again */
			account(b, ms[mi], &res, &f, f.overflows - ovf, idx, n, where);
			ovf = f.overflows;
		}
		disarm(&a);
		bad |= res.wrong != 0;
		printf("first-write %-7s %6zu pages  %-9s %9.1f ns/page wall %9.1f ns/page CPU  %7.1fx unarmed (CPU %.1fx)%s\n",
		       size_name(gib), n, method_names[ms[mi]], median(wall, reps), median(cpu, reps),
		       median(wall, reps) / base_wall, median(cpu, reps) / base_cpu, res.overflows ? "  (overflowed)" : "");
	}
	fflush(stdout);
	free(idx);
	return bad;
}

/* Map and populate @gib GiB; fills @b. Returns -1 (and says why) if memory is short. */
static int setup(struct bench *b, const struct opts *o, double gib)
{
	uint64_t avail = meminfo_kb("MemAvailable") * 1024;
	size_t align = 2u << 20;
	double t0 = now();
	char *p;

	b->size = (size_t)(gib * GIB) & ~(size_t)(b->psize - 1);
	b->npages = b->size / b->psize;
	/*
	 * The machine is shared: map only with 4 GiB to spare beyond the memory
	 * (the hashes, 8 bytes a page, and everyone else): 16 GiB needs 20.
	 * Checked right before mapping, for each size.
	 */
	if ((double)avail < (double)b->size + 4 * GIB) {
		printf("%-7s skipped: not enough memory (MemAvailable %.1f GiB, need %.1f GiB)\n", size_name(gib),
		       (double)avail / GIB, (double)b->size / GIB + 4);
		return -1;
	}
	p = mmap(NULL, b->size + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		die("mmap", errno);
	b->mem = (char *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
	if (b->mem != p)
		munmap(p, (size_t)(b->mem - p));
	munmap(b->mem + b->size, (size_t)(p + align - b->mem));
	if (madvise(b->mem, b->size, o->thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) < 0)
		die("madvise", errno);
	if (o->use_memset || madvise(b->mem, b->size, MADV_POPULATE_WRITE) < 0)
		memset(b->mem, 1, b->size);
	b->hashes = calloc(b->npages, sizeof(*b->hashes));
	if (!b->hashes)
		die("calloc", ENOMEM);
	printf("%-7s mapped at %p, %zu pages, populated in %.1f s, our AnonHugePages %.0f MiB, MemAvailable now %.1f GiB\n",
	       size_name(gib), (void *)b->mem, b->npages, now() - t0,
	       (double)kb_of("/proc/self/smaps_rollup", "AnonHugePages") / 1024,
	       (double)meminfo_kb("MemAvailable") / (1024 * 1024));
	return 0;
}

static void teardown(struct bench *b)
{
	munmap(b->mem, b->size);
	free(b->hashes);
	b->mem = NULL;
	b->hashes = NULL;
}

/* ------------------------------------------------------------------ */
/* Options                                                            */
/* ------------------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: watch [OPTION]...\n"
		"Time one collect-and-reset of a write watch over SIZE of anonymous memory after\n"
		"FRACTION of its pages were written: pm_watch (uffd, mprotect) against a raw\n"
		"PAGEMAP_SCAN loop and against hashing every page; then the cost of a first write.\n"
		"Every collect is checked against the pages written; exit status 1 if one was wrong.\n"
		"  -s, --sizes LIST      GiB, comma-separated (default 1,4; a size is skipped\n"
		"                        when MemAvailable is short of it + 4 GiB: 16 needs 20)\n"
		"  -f, --fractions LIST  percent of the pages written per round (default 0.1,1,10)\n"
		"  -r, --rounds N        timed rounds per figure, at most 64 (default 15 for 1 GiB,\n"
		"                        9 up to 4, 5 above; each arming adds an untimed warm-up)\n"
		"  -m, --methods LIST    of raw-scan,raw-huge,uffd,mprotect,hash (default all)\n"
		"  -t, --thp             MADV_HUGEPAGE instead of MADV_NOHUGEPAGE (the first write to\n"
		"                        an armed huge page splits it, under uffd and mprotect alike)\n"
		"      --memset          populate with memset, not MADV_POPULATE_WRITE\n"
		"  -n, --first-write N   pages of the first-write test (default 8192; 0: none)\n"
		"  -v, --vec N           regions per PAGEMAP_SCAN call of raw-scan and raw-huge\n"
		"                        (default 1024, as the library)\n"
		"  -h, --help\n");
}

static int parse_list(const char *s, double *v, int *n)
{
	char *end;

	for (*n = 0; *s && *n < MAX_LIST; s = *end ? end + 1 : end) {
		v[(*n)++] = strtod(s, &end);
		if (end == s || (*end && *end != ',') || v[*n - 1] <= 0)
			return -1;
	}
	return *s ? -1 : 0;
}

static int parse_methods(const char *s, unsigned *mask)
{
	char buf[128], *tok, *save = NULL;
	int j;

	snprintf(buf, sizeof(buf), "%s", s);
	*mask = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (j = 0; j < M_COUNT && strcmp(tok, method_names[j]); j++)
			;
		if (j == M_COUNT)
			return -1;
		*mask |= 1u << j;
	}
	return *mask ? 0 : -1;
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "sizes", required_argument, NULL, 's' },	{ "fractions", required_argument, NULL, 'f' },
		{ "rounds", required_argument, NULL, 'r' },	{ "methods", required_argument, NULL, 'm' },
		{ "thp", no_argument, NULL, 't' },		{ "memset", no_argument, NULL, 'M' },
		{ "first-write", required_argument, NULL, 'n' }, { "vec", required_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },		{ NULL, 0, NULL, 0 },
	};
	int c, bad = 0;

	*o = (struct opts){ .sizes = { 1, 4 }, .nsizes = 2, .fracs = { 0.1, 1, 10 }, .nfracs = 3,
			    .methods = (1u << M_COUNT) - 1, .fw_pages = 8192, .fw_reps = 5, .vec_len = 1024,
			    .seed = 0x5eed };
	while ((c = getopt_long(argc, argv, "s:f:r:m:tn:v:h", longopts, NULL)) != -1) {
		switch (c) {
		case 's': bad |= parse_list(optarg, o->sizes, &o->nsizes); break;
		case 'f': bad |= parse_list(optarg, o->fracs, &o->nfracs); break;
		case 'r': o->rounds = atoi(optarg); bad |= o->rounds <= 0 || o->rounds > 64; break;
		case 'm': bad |= parse_methods(optarg, &o->methods); break;
		case 't': o->thp = true; break;
		case 'M': o->use_memset = true; break;
		case 'n': o->fw_pages = strtoul(optarg, NULL, 10); break;
		case 'v': o->vec_len = strtoul(optarg, NULL, 10); bad |= o->vec_len == 0; break;
		case 'h': usage(stdout); exit(0);
		default: bad = 1; break;
		}
	}
	if (bad || optind != argc) {
		usage(stderr);
		exit(2);
	}
}

static void header(const struct opts *o)
{
	struct utsname u;
	double load[3] = { 0 };
	char thp[128] = "?";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");

	if (f && fgets(thp, sizeof(thp), f))
		thp[strcspn(thp, "\n")] = 0;
	if (f)
		fclose(f);
	uname(&u);
	getloadavg(load, 3);
	printf("kernel %s; %ld CPUs; %.1f GiB RAM, MemAvailable %.1f GiB; THP %s; vm.max_map_count %ld; load %.2f %.2f %.2f\n",
	       u.release, sysconf(_SC_NPROCESSORS_ONLN), (double)meminfo_kb("MemTotal") / (1024 * 1024),
	       (double)meminfo_kb("MemAvailable") / (1024 * 1024), thp, read_long("/proc/sys/vm/max_map_count"),
	       load[0], load[1], load[2]);
	printf("memory: private anonymous, %s, populated by %s; raw-scan vec %zu regions; first write: %zu pages, %d reps\n",
	       o->thp ? "MADV_HUGEPAGE" : "MADV_NOHUGEPAGE", o->use_memset ? "memset" : "MADV_POPULATE_WRITE", o->vec_len,
	       o->fw_pages, o->fw_reps);
	printf("%-7s %7s %8s  %-9s %3s %9s %8s %9s %7s %9s %7s %8s %7s %7s  %s\n", "SIZE", "WRITTEN", "PAGES", "METHOD",
	       "N", "WALL_MS", "MIN_MS", "MAX_MS", "RATIO", "CPU_MS", "RATIO", "CPU_MIN", "RATIO", "RANGES", "NOTE");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct opts o;
	struct bench b = { .pagemap_fd = -1 };
	int i, j, bad = 0;

	parse_opts(argc, argv, &o);
	b.psize = (size_t)sysconf(_SC_PAGESIZE);
	b.shift = (unsigned)__builtin_ctzl(b.psize);
	b.vec_len = o.vec_len;
	b.vec = calloc(b.vec_len, sizeof(*b.vec));
	b.pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	b.ctx = pm_ctx_new(NULL);
	if (!b.vec || b.pagemap_fd < 0 || !b.ctx)
		die("setup", errno);
	header(&o);
	for (i = 0; i < o.nsizes; i++) {
		if (setup(&b, &o, o.sizes[i]) < 0)
			continue;
		for (j = 0; j < o.nfracs; j++)
			bad |= bench_fraction(&b, &o, o.sizes[i], o.fracs[j]);
		if (o.fw_pages)
			bad |= bench_first_write(&b, &o, o.sizes[i]);
		teardown(&b);
	}
	pm_ctx_free(b.ctx);
	close(b.pagemap_fd);
	free(b.vec);
	if (bad)
		fprintf(stderr, "watch: some collects reported a wrong number of pages (see WRONG above)\n");
	return bad;
}
