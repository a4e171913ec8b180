/* test_watch.c - live write watch: for every back end this kernel has, the reported pages equal the written ones. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <pagemap.h>
#include "../harness.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

/*
 * The workload: four regions of known pages. Each round writes a
 * pseudo-random subset (about one page in six) picked by a seed, so the
 * watcher knows exactly which pages were written, here or in a child.
 */
enum { R_ANON, R_FILE, R_MEMFD, R_THP, R_N };
static const char *const region_name[R_N] = { "anon", "private file", "shared memfd", "thp" };
static const unsigned region_pages[R_N] = { 256, 64, 64, 0 /* 2 PMDs, set at run time */ };

struct workload {
	uint8_t *base[R_N];
	size_t pages[R_N];
	size_t total;		/* pages in all regions */
	long psize;
	size_t pmd;
	bool thp;		/* the THP region really got huge pages */
};

static struct pm_ctx *ctx;

/*
 * The writer mode runs under pagemap track -- COMMAND, which traces its command to hold it at its
 * exit; LeakSanitizer (a SANITIZE=1 build) cannot run under ptrace and would fail the writer's exit.
 */
static int as_helper;
int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void)
{
	return as_helper;
}

static struct workload wl;
static bool swap_on;

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static bool thp_mapped(const void *addr)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[256];
	unsigned long lo, hi, want = (uintptr_t)addr, kb = 0;
	bool in = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			in = want >= lo && want < hi;
		else if (in && sscanf(line, "AnonHugePages: %lu kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb > 0;
}

/* Map the regions in this process (before any fork, so a child inherits them). */
static int workload_map(struct workload *w)
{
	char path[4096];
	int fd, mfd, i;
	uint8_t *p;

	w->psize = sysconf(_SC_PAGESIZE);
	w->pmd = (size_t)w->psize * 512;
	for (i = 0; i < R_N; i++)
		w->pages[i] = region_pages[i];
	w->pages[R_THP] = 2 * w->pmd / w->psize;

	w->base[R_ANON] = mmap(NULL, w->pages[R_ANON] * w->psize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w->base[R_ANON] == MAP_FAILED)
		return -errno;
	madvise(w->base[R_ANON], w->pages[R_ANON] * w->psize, MADV_NOHUGEPAGE);

	snprintf(path, sizeof(path), "%s/pm-watch-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	unlink(path);
	if (ftruncate(fd, w->pages[R_FILE] * w->psize) < 0)
		return -errno;
	w->base[R_FILE] = mmap(NULL, w->pages[R_FILE] * w->psize, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	close(fd);
	if (w->base[R_FILE] == MAP_FAILED)
		return -errno;

	mfd = memfd_create("pm-watch", MFD_CLOEXEC);
	if (mfd < 0 || ftruncate(mfd, w->pages[R_MEMFD] * w->psize) < 0)
		return -errno;
	w->base[R_MEMFD] = mmap(NULL, w->pages[R_MEMFD] * w->psize, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	close(mfd);
	if (w->base[R_MEMFD] == MAP_FAILED)
		return -errno;

	p = mmap(NULL, 3 * w->pmd, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	w->base[R_THP] = (uint8_t *)(((uintptr_t)p + w->pmd - 1) & ~(uintptr_t)(w->pmd - 1));
	madvise(w->base[R_THP], 2 * w->pmd, MADV_HUGEPAGE);

	/* Populate everything: a round's unwritten pages must have content that could be written. */
	for (i = 0; i < R_N; i++)
		memset(w->base[i], 0x5a, w->pages[i] * w->psize);
	w->thp = thp_mapped(w->base[R_THP]);
	for (i = 0; i < R_N; i++)
		w->total += w->pages[i];
	return 0;
}

/* Page @i of the whole workload (regions in order). */
static uint8_t *page_addr(const struct workload *w, size_t i)
{
	int r;

	for (r = 0; r < R_N; r++) {
		if (i < w->pages[r])
			return w->base[r] + i * w->psize;
		i -= w->pages[r];
	}
	return NULL;
}

/* The pages round @seed writes: about one in six, and at most 3 pages per THP (so huge reports show). */
static void round_set(const struct workload *w, uint64_t seed, uint8_t *set)
{
	uint64_t s = seed * 2654435761u + 1;
	size_t i, thp0 = w->total - w->pages[R_THP];

	for (i = 0; i < w->total; i++)
		set[i] = rnd(&s) % 6 == 0;
	for (i = thp0; i < w->total; i++)
		set[i] = set[i] && rnd(&s) % 64 == 0;
}

static unsigned long swapped_seen;	/* written pages found in swap before a collect (this process) */

static bool in_swap(const void *addr)
{
	uint64_t e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd >= 0 && pread(fd, &e, 8, (uintptr_t)addr / sysconf(_SC_PAGESIZE) * 8) != 8)
		e = 0;
	if (fd >= 0)
		close(fd);
	return (e >> 62) & 1;
}

static void round_write(const struct workload *w, uint64_t seed)
{
	uint8_t *set = calloc(w->total, 1);
	size_t i;

	round_set(w, seed, set);
	for (i = 0; i < w->total; i++)
		if (set[i])
			*(volatile uint8_t *)(page_addr(w, i) + (i * 17) % w->psize) = (uint8_t)seed;
	/* Written-then-swapped: push some written anonymous pages out (needs swap on), and count them. */
	for (i = 0; swap_on && i < w->pages[R_ANON]; i += 7)
		if (set[i] && madvise(page_addr(w, i), w->psize, MADV_PAGEOUT) == 0 && in_swap(page_addr(w, i)))
			swapped_seen++;
	free(set);
}

/* Which workload page holds @addr, or -1. */
static ssize_t page_index(const struct workload *w, uint64_t addr)
{
	size_t off = 0;
	int r;

	for (r = 0; r < R_N; r++) {
		uint64_t b = (uintptr_t)w->base[r];

		if (addr >= b && addr < b + w->pages[r] * w->psize)
			return off + (addr - b) / w->psize;
		off += w->pages[r];
	}
	return -1;
}

/* Watch the regions in @regions (bit r: region r). */
static int watch_workload(struct pm_watch *pw, const struct workload *w, unsigned regions)
{
	int r, err;

	for (r = 0; r < R_N; r++)
		if ((regions >> r & 1) &&
		    (err = pm_watch_add(pw, (uintptr_t)w->base[r], (uintptr_t)w->base[r] + w->pages[r] * w->psize, 0)) < 0) {
			printf("  pm_watch_add %s: %s\n", region_name[r], strerror(-err));
			return err;
		}
	return 0;
}

/* The region page @i of the workload lies in. */
static int region_of(const struct workload *w, size_t i)
{
	int r;

	for (r = 0; r < R_N - 1 && i >= w->pages[r]; r++)
		i -= w->pages[r];
	return r;
}

/*
 * Compare one collect with the written set: a written page not reported is
 * a failure; a reported page not written is allowed only inside a report
 * at huge-page granularity (counted in *@huge_extra). Only the regions in
 * @regions are watched: the others must report nothing.
 */
static void compare(const struct workload *w, const uint8_t *set, const struct pm_written *out, size_t n,
		    const char *what, uint64_t round, uint64_t *huge_extra, unsigned regions)
{
	uint8_t *got = calloc(w->total, 2), *huge = got + w->total;
	size_t i, shown = 0;
	uint64_t a;

	for (i = 0; i < n; i++)
		for (a = out[i].start; a < out[i].end; a += w->psize) {
			ssize_t k = page_index(w, a);

			if (k >= 0) {
				got[k] = 1;
				huge[k] = out[i].huge;
			}
		}
	for (i = 0; i < w->total; i++) {
		bool watched = regions >> region_of(w, i) & 1;

		if (set[i] && !watched && !got[i])
			continue;	/* an unwatched region: its writes are not expected, nothing may be reported */
		if (set[i] && !got[i] && shown++ < 5)
			printf("  %s round %llu: page %zu (%p) written, not reported\n", what,
			       (unsigned long long)round, i, (void *)page_addr(w, i));
		if (set[i] && !got[i])
			t_failed_checks++;
		if (!set[i] && got[i] && huge[i])
			(*huge_extra)++;
		else if (!set[i] && got[i]) {
			if (shown++ < 5)
				printf("  %s round %llu: page %zu (%p) reported, not written\n", what,
				       (unsigned long long)round, i, (void *)page_addr(w, i));
			t_failed_checks++;
		}
	}
	free(got);
}

/* A child that runs workload rounds when told: it does not know it is watched. */
struct child {
	pid_t pid;
	int cmd, ack;
};

static void child_loop(int cmd, int ack)
{
	uint64_t seed;

	while (read(cmd, &seed, sizeof(seed)) == sizeof(seed)) {
		if (seed == 0)
			_exit(0);
		round_write(&wl, seed);
		if (write(ack, &seed, sizeof(seed)) != sizeof(seed))
			_exit(1);
	}
	_exit(0);
}

static int child_start(struct child *c)
{
	int a[2], b[2];

	if (pipe(a) < 0 || pipe(b) < 0)
		return -errno;
	c->pid = fork();
	if (c->pid < 0)
		return -errno;
	if (c->pid == 0) {
		close(a[1]);
		close(b[0]);
		child_loop(a[0], b[1]);
	}
	close(a[0]);
	close(b[1]);
	c->cmd = a[1];
	c->ack = b[0];
	return 0;
}

static int child_round(struct child *c, uint64_t seed)
{
	uint64_t got;

	if (write(c->cmd, &seed, sizeof(seed)) != sizeof(seed) || read(c->ack, &got, sizeof(got)) != sizeof(got))
		return -EIO;
	return got == seed ? 0 : -EIO;
}

static void child_stop(struct child *c)
{
	uint64_t zero = 0;
	int st;

	if (c->pid <= 0)
		return;
	if (write(c->cmd, &zero, sizeof(zero)) != sizeof(zero))
		kill(c->pid, SIGKILL);
	waitpid(c->pid, &st, 0);
	close(c->cmd);
	close(c->ack);
	c->pid = 0;
}

#define ROUNDS 12

/* AnonHugePages of @pid's mapping that starts at @start (kB), -1 if not found. */
static long anon_huge_kb(pid_t pid, const void *start)
{
	char path[64], line[256];
	unsigned long long a, b;
	bool in = false;
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx-%llx ", &a, &b) == 2 && strchr(line, '-') < strchr(line, ' '))
			in = a == (uintptr_t)start;
		else if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	if (f)
		fclose(f);
	return kb;
}

#define ALL_REGIONS ((1u << R_N) - 1)
#define PRIVATE_REGIONS (ALL_REGIONS & ~(1u << R_MEMFD))	/* a fork snapshot cannot watch MAP_SHARED */

/*
 * Rounds of write / collect-and-reset through @m on this process (@remote
 * false) or a child, watching the workload regions in @regions.
 */
static int exactness_in(enum pm_watch_method m, bool remote, unsigned regions)
{
	struct child c = { 0 };
	struct pm_watch *pw;
	uint8_t *set = calloc(wl.total, 1);
	uint64_t round, huge_extra = 0;
	char why[256];
	int err;

	if (pm_watch_explain(ctx, remote ? 1 : 0, m, why, sizeof(why)) < 0 && m != PM_WATCH_SNAPSHOT) {
		free(set);
		return t_skip("%s", why);
	}
	if (remote && (err = child_start(&c)) < 0) {
		free(set);
		return t_skip("fork: %s", strerror(-err));
	}
	/* A fork snapshot checks the right to ptrace: ask about the child itself. */
	if (m == PM_WATCH_SNAPSHOT && pm_watch_explain(ctx, remote ? c.pid : 0, m, why, sizeof(why)) < 0) {
		child_stop(&c);
		free(set);
		return t_skip("%s", why);
	}
	pw = pm_watch_new(ctx, remote ? c.pid : 0, m, 0);
	CHECK(pw != NULL);
	if (!pw) {
		printf("  pm_watch_new: %s\n", strerror(errno));
		goto out;
	}
	CHECK(pm_watch_method(pw) == m);
	if (m == PM_WATCH_SNAPSHOT)
		printf("  %s\n", pm_watch_reason(pw));
	if (watch_workload(pw, &wl, regions) < 0) {
		t_failed_checks++;
		goto out;
	}
	for (round = 1; round <= ROUNDS; round++) {
		const struct pm_written *out;
		size_t n;

		if (remote)
			CHECK(child_round(&c, round) == 0);
		else
			round_write(&wl, round);
		round_set(&wl, round, set);
		err = pm_watch_collect(pw, PM_WATCH_RESET, &out, &n);
		CHECK_EQ_U64(err, 0);
		if (err == 0)
			compare(&wl, set, out, n, pm_watch_method_name(m), round, &huge_extra, regions);
	}
	printf("  %s%s: %d rounds, %llu pages reported only for huge-page granularity (thp %s), stats huge %llu%s\n",
	       pm_watch_method_name(m), remote ? " (another process)" : "", ROUNDS, (unsigned long long)huge_extra,
	       wl.thp ? "mapped" : "not mapped", (unsigned long long)pm_watch_stats(pw)->huge_pages,
	       swap_on ? (remote ? ", written pages swapped out by the child before collects" : "") : "");
	if (swap_on && !remote) {
		printf("  %lu written pages were in swap when collected\n", swapped_seen);
		CHECK(swapped_seen > 0);
	}
	swapped_seen = 0;
	CHECK(pm_watch_stats(pw)->huge_pages >= huge_extra);
out:
	pm_watch_free(pw);
	child_stop(&c);
	free(set);
	return t_failed_checks ? T_FAIL : T_PASS;
}

static int exactness(enum pm_watch_method m, bool remote)
{
	return exactness_in(m, remote, ALL_REGIONS);
}

static int t_self_uffd(void) { return exactness(PM_WATCH_UFFD, false); }
static int t_self_softdirty(void) { return exactness(PM_WATCH_SOFTDIRTY, false); }
static int t_self_mprotect(void) { return exactness(PM_WATCH_MPROTECT, false); }
static int t_remote_uffd(void) { return exactness(PM_WATCH_UFFD, true); }
static int t_remote_softdirty(void) { return exactness(PM_WATCH_SOFTDIRTY, true); }
static int t_self_snapshot(void) { return exactness_in(PM_WATCH_SNAPSHOT, false, PRIVATE_REGIONS); }
static int t_remote_snapshot(void) { return exactness_in(PM_WATCH_SNAPSHOT, true, PRIVATE_REGIONS); }

/* ---- traps, on a fresh mapping of this process ---- */

struct fresh {
	uint8_t *p;
	size_t len;
	struct pm_watch *w;
};

static int fresh_open(struct fresh *f, enum pm_watch_method m, size_t pages, unsigned flags, bool populate)
{
	char why[256];
	int err;

	if (pm_watch_explain(ctx, 0, m, why, sizeof(why)) < 0)
		return t_skip("%s", why);
	f->len = pages * wl.psize;
	f->p = mmap(NULL, f->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (f->p == MAP_FAILED)
		return t_skip("mmap: %s", strerror(errno));
	madvise(f->p, f->len, MADV_NOHUGEPAGE);
	if (populate)
		memset(f->p, 1, f->len);
	f->w = pm_watch_new(ctx, 0, m, flags);
	if (!f->w)
		return printf("  pm_watch_new: %s\n", strerror(errno)), T_FAIL;
	err = pm_watch_add(f->w, (uintptr_t)f->p, (uintptr_t)f->p + f->len, 0);
	if (err < 0)
		return printf("  pm_watch_add: %s\n", strerror(-err)), T_FAIL;
	return T_PASS;
}

static void fresh_close(struct fresh *f)
{
	pm_watch_free(f->w);
	if (f->p && f->p != MAP_FAILED)
		munmap(f->p, f->len);
}

/* Collect (and reset) into a page bitmap of @f; returns pages reported or -errno. */
static long fresh_collect(struct fresh *f, uint8_t *bits)
{
	const struct pm_written *out;
	size_t n, i, pages = f->len / wl.psize;
	long count = 0;
	uint64_t a;
	int err = pm_watch_collect(f->w, PM_WATCH_RESET, &out, &n);

	if (err < 0)
		return err;
	memset(bits, 0, pages);
	for (i = 0; i < n; i++)
		for (a = out[i].start; a < out[i].end; a += wl.psize)
			if (a >= (uintptr_t)f->p && a < (uintptr_t)f->p + f->len) {
				bits[(a - (uintptr_t)f->p) / wl.psize] = 1;
				count++;
			}
	return count;
}

static const enum pm_watch_method all_methods[] = { PM_WATCH_UFFD, PM_WATCH_SOFTDIRTY, PM_WATCH_MPROTECT };

/* Unpopulated pages and pages only read are not reported; a written one is, once. */
static int t_untouched_and_read(void)
{
	size_t k, i;
	int tested = 0;

	for (k = 0; k < 3; k++) {
		struct fresh f = { 0 };
		uint8_t bits[32];
		volatile uint8_t sink = 0;
		int r = fresh_open(&f, all_methods[k], 32, 0, false);

		if (r == T_SKIP) {
			fresh_close(&f);
			continue;
		}
		tested++;
		CHECK(r == T_PASS);
		for (i = 0; r == T_PASS && i < 16; i++)
			sink += f.p[i * wl.psize];	/* read: the zero page */
		(void)sink;
		if (r == T_PASS) {
			f.p[20 * wl.psize] = 1;
			CHECK_EQ_U64(fresh_collect(&f, bits), 1);
			CHECK(bits[20]);
			CHECK_EQ_U64(fresh_collect(&f, bits), 0);
		}
		fresh_close(&f);
	}
	return tested ? (t_failed_checks ? T_FAIL : T_PASS) : t_skip("no back end works here");
}

/* MADV_DONTNEED changes content: reported (uffd, soft-dirty); mprotect cannot see it (documented). */
static int t_dontneed(void)
{
	size_t k;
	int tested = 0;

	for (k = 0; k < 2; k++) {
		struct fresh f = { 0 };
		uint8_t bits[16];
		int r = fresh_open(&f, all_methods[k], 16, 0, true);

		if (r == T_SKIP) {
			fresh_close(&f);
			continue;
		}
		tested++;
		CHECK(r == T_PASS);
		if (r == T_PASS) {
			madvise(f.p + 5 * wl.psize, wl.psize, MADV_DONTNEED);
			CHECK_EQ_U64(fresh_collect(&f, bits), 1);
			CHECK(bits[5]);
		}
		fresh_close(&f);
	}
	return tested ? (t_failed_checks ? T_FAIL : T_PASS) : t_skip("neither uffd nor soft-dirty works here");
}

/* Unmapping part of a range reports nothing there; mapping it again and writing reports the write. */
static int t_munmap_remap(void)
{
	size_t k;
	int tested = 0;

	for (k = 0; k < 3; k++) {
		struct fresh f = { 0 };
		uint8_t bits[16];
		void *q;
		int r = fresh_open(&f, all_methods[k], 16, 0, true);

		if (r == T_SKIP) {
			fresh_close(&f);
			continue;
		}
		tested++;
		CHECK(r == T_PASS);
		if (r != T_PASS) {
			fresh_close(&f);
			continue;
		}
		munmap(f.p + 4 * wl.psize, 4 * wl.psize);
		f.p[1 * wl.psize] = 2;
		CHECK_EQ_U64(fresh_collect(&f, bits), 1);
		CHECK(bits[1]);
		q = mmap(f.p + 4 * wl.psize, 4 * wl.psize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
			 -1, 0);
		CHECK(q != MAP_FAILED);
		f.p[5 * wl.psize] = 3;
		f.p[9 * wl.psize] = 3;
		{
			long n = fresh_collect(&f, bits);

			/* uffd reports the new mapping whole (its pages read written until armed); mprotect does
			   not watch it (it never protected it); soft-dirty: a new VMA's populated pages. */
			CHECK(n >= 1);
			CHECK(bits[9]);
			if (all_methods[k] != PM_WATCH_MPROTECT)
				CHECK(bits[5]);
			printf("  %s: after munmap + mmap, %ld pages reported\n", pm_watch_method_name(all_methods[k]), n);
		}
		fresh_close(&f);
	}
	return tested ? (t_failed_checks ? T_FAIL : T_PASS) : t_skip("no back end works here");
}

/* mremap moves pages out of the watch: nothing reported, no error (uffd, soft-dirty; mprotect: see the header). */
static int t_mremap(void)
{
	size_t k;
	int tested = 0;

	for (k = 0; k < 2; k++) {
		struct fresh f = { 0 };
		uint8_t bits[8];
		uint8_t *dst = mmap(NULL, 8 * wl.psize, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *q;
		int r = fresh_open(&f, all_methods[k], 8, 0, true);

		if (r == T_SKIP) {
			fresh_close(&f);
			munmap(dst, 8 * wl.psize);
			continue;
		}
		tested++;
		CHECK(r == T_PASS && dst != MAP_FAILED);
		q = mremap(f.p, f.len, f.len, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
		CHECK(q == dst);
		if (q == dst) {
			const struct pm_written *out;
			size_t n = 1;

			q[3 * wl.psize] = 7;
			CHECK_EQ_U64(pm_watch_collect(f.w, PM_WATCH_RESET, &out, &n), 0);
			CHECK_EQ_U64(n, 0);
			/* The old place is a hole: memory mapped there again is watched again, its write seen. */
			CHECK(mmap(f.p, f.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == f.p);
			f.p[2 * wl.psize] = 1;
			CHECK(fresh_collect(&f, bits) >= 1 && bits[2]);
		}
		fresh_close(&f);
		munmap(dst, 8 * wl.psize);
	}
	return tested ? (t_failed_checks ? T_FAIL : T_PASS) : t_skip("neither uffd nor soft-dirty works here");
}

/* A child's writes after fork are its own; the parent's are reported. */
static int t_fork(void)
{
	size_t k;
	int tested = 0;

	for (k = 0; k < 3; k++) {
		struct fresh f = { 0 };
		uint8_t bits[16];
		pid_t pid;
		int st, r = fresh_open(&f, all_methods[k], 16, 0, true);

		if (r == T_SKIP) {
			fresh_close(&f);
			continue;
		}
		tested++;
		CHECK(r == T_PASS);
		if (r != T_PASS) {
			fresh_close(&f);
			continue;
		}
		pid = fork();
		if (pid == 0) {
			f.p[1 * wl.psize] = 9;
			_exit(f.p[1 * wl.psize] == 9 ? 0 : 1);
		}
		CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
		f.p[2 * wl.psize] = 9;
		CHECK_EQ_U64(fresh_collect(&f, bits), 1);
		CHECK(bits[2] && !bits[1]);
		fresh_close(&f);
	}
	return tested ? (t_failed_checks ? T_FAIL : T_PASS) : t_skip("no back end works here");
}

/* read(2) into a watched page: a write by the kernel. uffd and soft-dirty see it; mprotect makes it fail. */
static int t_kernel_write(void)
{
	size_t k;
	int tested = 0;

	for (k = 0; k < 3; k++) {
		struct fresh f = { 0 };
		uint8_t bits[8];
		int p[2], r = fresh_open(&f, all_methods[k], 8, 0, true);
		ssize_t got;

		if (r == T_SKIP) {
			fresh_close(&f);
			continue;
		}
		tested++;
		CHECK(r == T_PASS && pipe(p) == 0);
		if (r != T_PASS) {
			fresh_close(&f);
			continue;
		}
		CHECK(write(p[1], "abcd", 4) == 4);
		got = read(p[0], f.p + 3 * wl.psize, 4);
		if (all_methods[k] == PM_WATCH_MPROTECT) {
			CHECK(got == -1 && errno == EFAULT);
			CHECK_EQ_U64(fresh_collect(&f, bits), 0);
		} else {
			CHECK(got == 4);
			CHECK_EQ_U64(fresh_collect(&f, bits), 1);
			CHECK(bits[3]);
		}
		close(p[0]);
		close(p[1]);
		fresh_close(&f);
	}
	return tested ? (t_failed_checks ? T_FAIL : T_PASS) : t_skip("no back end works here");
}

/* A written page of a PMD-mapped THP is reported with its huge page; PM_WATCH_NOTHP reports it alone. */
static int thp_case(enum pm_watch_method m, unsigned flags, size_t *reported, bool *huge, bool *was_thp,
		    bool *still_thp)
{
	struct pm_watch *w;
	const struct pm_written *out;
	size_t n, i, pmd = wl.pmd;
	uint8_t *raw = mmap(NULL, 2 * pmd, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *p;
	int err;

	if (raw == MAP_FAILED)
		return -errno;
	p = (uint8_t *)(((uintptr_t)raw + pmd - 1) & ~(uintptr_t)(pmd - 1));
	madvise(p, pmd, MADV_HUGEPAGE);
	memset(p, 1, pmd);
	*was_thp = thp_mapped(p);
	w = pm_watch_new(ctx, 0, m, flags);
	if (!w) {
		munmap(raw, 2 * pmd);
		return -errno;
	}
	err = pm_watch_add(w, (uintptr_t)p, (uintptr_t)p + pmd, 0);
	p[7 * wl.psize] = 2;
	if (!err)
		err = pm_watch_collect(w, PM_WATCH_RESET, &out, &n);
	*reported = 0;
	*huge = false;
	for (i = 0; !err && i < n; i++) {
		*reported += (out[i].end - out[i].start) / wl.psize;
		*huge |= out[i].huge;
	}
	*still_thp = thp_mapped(p);
	pm_watch_free(w);
	munmap(raw, 2 * pmd);
	return err;
}

/*
 * A child of ours that runs @body(@arg, cmd, ack) on two pipes: it sends the
 * address of its memory first, then answers commands. Returns 0 with c->pid
 * and *@addr, or -errno (nothing left behind).
 */
struct piped_child {
	pid_t pid;
	int cmd, ack;
};

static int piped_start(struct piped_child *c, void (*body)(size_t arg, int cmd, int ack), size_t arg, uint8_t **addr)
{
	int cmd[2], ack[2], err;

	c->pid = 0;
	c->cmd = c->ack = -1;
	if (pipe(cmd) < 0)
		return -errno;
	if (pipe(ack) < 0) {
		err = -errno;
		close(cmd[0]);
		close(cmd[1]);
		return err;
	}
	c->pid = fork();
	if (c->pid == 0) {
		close(cmd[1]);
		close(ack[0]);
		body(arg, cmd[0], ack[1]);
		_exit(0);
	}
	close(cmd[0]);
	close(ack[1]);
	c->cmd = cmd[1];
	c->ack = ack[0];
	if (c->pid < 0)
		return -errno;
	return read(c->ack, addr, sizeof(*addr)) == sizeof(*addr) ? 0 : -ECHILD;
}

/* Close its pipes (it exits at EOF) and reap it. */
static void piped_stop(struct piped_child *c)
{
	if (c->cmd >= 0)
		close(c->cmd);
	if (c->ack >= 0)
		close(c->ack);
	if (c->pid > 0)
		waitpid(c->pid, NULL, 0);
	c->pid = 0;
	c->cmd = c->ack = -1;
}

/* The child of t_thp_kept: two huge pages of its own; each byte read from @cmd names a page of them to write. */
static void thp_child(size_t unused, int cmd, int ack)
{
	size_t pmd = wl.pmd;
	uint8_t *raw = mmap(NULL, 3 * pmd, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *p;
	unsigned char k;

	if (raw == MAP_FAILED)
		_exit(1);
	p = (uint8_t *)(((uintptr_t)raw + pmd - 1) & ~(uintptr_t)(pmd - 1));
	madvise(p, 2 * pmd, MADV_HUGEPAGE);
	memset(p, 0x5a, 2 * pmd);
	if (write(ack, &p, sizeof(p)) != sizeof(p))
		_exit(1);
	while (read(cmd, &k, 1) == 1) {
		p[(size_t)k * 8 * wl.psize] ^= 0xff;	/* page 8k: THP 0 for k < 64 */
		if (write(ack, &k, 1) != 1)
			break;
	}
	_exit(0);
}

/*
 * Tracking another process leaves its huge pages whole (uffd): AnonHugePages
 * of the mapping equal before and after, writes reported whole, marked huge,
 * only for the huge page written. Without this, the first write split it.
 */
static int t_thp_kept(void)
{
	struct piped_child c;
	uint8_t *p = NULL;
	struct pm_watch *w = NULL;
	long before, after;
	char why[256];
	int round;

	if (pm_watch_explain(ctx, 1, PM_WATCH_UFFD, why, sizeof(why)) < 0)
		return t_skip("%s", why);
	if (piped_start(&c, thp_child, 0, &p) < 0) {
		t_failed_checks++;
		goto out;
	}
	before = anon_huge_kb(c.pid, p);
	if (before < (long)(wl.pmd >> 10)) {
		piped_stop(&c);
		return t_skip("the child got no huge page (AnonHugePages %ld kB)", before);
	}
	w = pm_watch_new(ctx, c.pid, PM_WATCH_UFFD, 0);
	CHECK(w != NULL);
	CHECK(w && pm_watch_add(w, (uintptr_t)p, (uintptr_t)p + 2 * wl.pmd, 0) == 0);
	for (round = 0; w && round < 3; round++) {
		const struct pm_written *out;
		unsigned char k = (unsigned char)round;
		size_t n, i;
		uint64_t bytes = 0;

		CHECK(write(c.cmd, &k, 1) == 1 && read(c.ack, &k, 1) == 1);
		CHECK_EQ_U64(pm_watch_collect(w, PM_WATCH_RESET, &out, &n), 0);
		for (i = 0; i < n; i++) {
			bytes += out[i].end - out[i].start;
			CHECK(out[i].huge);
			CHECK_EQ_U64(out[i].start, (uintptr_t)p);	/* only the first huge page was written */
		}
		CHECK_EQ_U64(bytes, wl.pmd);
	}
	after = anon_huge_kb(c.pid, p);
	printf("  AnonHugePages %ld kB before tracking, %ld kB after; %llu bytes hashed\n", before, after,
	       w ? (unsigned long long)pm_watch_stats(w)->hashed_bytes : 0ULL);
	CHECK_EQ_U64(after, before);
out:
	pm_watch_free(w);
	piped_stop(&c);
	return t_failed_checks ? T_FAIL : T_PASS;
}

static int t_thp(void)
{
	size_t k, reported;
	bool huge, was_thp, still_thp;
	int tested = 0;
	char why[256];

	for (k = 0; k < 3; k++) {
		if (pm_watch_explain(ctx, 0, all_methods[k], why, sizeof(why)) < 0)
			continue;
		tested++;
		CHECK_EQ_U64(thp_case(all_methods[k], 0, &reported, &huge, &was_thp, &still_thp), 0);
		if (!was_thp)
			return t_skip("no THP was mapped (transparent_hugepage disabled?)");
		/*
		 * mprotect splits the PMD when it unprotects a page: exact per page. uffd
		 * (an async uffd-wp fault on a huge PMD would split it) leaves the huge
		 * page whole and unarmed and reports it whole when its contents changed;
		 * soft-dirty dirties the whole PMD without splitting it.
		 */
		printf("  %s: %zu pages reported, huge %d, still a huge page %d\n", pm_watch_method_name(all_methods[k]),
		       reported, huge, still_thp);
		if (all_methods[k] == PM_WATCH_MPROTECT) {
			CHECK_EQ_U64(reported, 1);
		} else {
			CHECK_EQ_U64(reported, wl.pmd / wl.psize);
			CHECK(huge);
			CHECK(still_thp);
		}
		if (all_methods[k] != PM_WATCH_SOFTDIRTY) {
			CHECK_EQ_U64(thp_case(all_methods[k], PM_WATCH_NOTHP, &reported, &huge, &was_thp, &still_thp), 0);
			CHECK_EQ_U64(reported, 1);
			CHECK(!huge);
		}
	}
	return tested ? (t_failed_checks ? T_FAIL : T_PASS) : t_skip("no back end works here");
}

static long vm_pte_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPTE: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/*
 * A huge, mostly empty mapping (a sanitizer's shadow, a reserved heap):
 * arming it whole would allocate page tables for all of it (2 MiB of
 * tables per GiB). UFFD arms only its populated pages; writes are seen.
 */
static int t_sparse_big(void)
{
	size_t len = (size_t)64 << 30, i;
	volatile uint8_t sink;
	struct pm_watch *w;
	const struct pm_written *out;
	uint8_t *p;
	size_t n;
	long before, after;
	char why[256];

	if (pm_watch_explain(ctx, 0, PM_WATCH_UFFD, why, sizeof(why)) < 0)
		return t_skip("%s", why);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return t_skip("mmap 64 GiB NORESERVE: %s", strerror(errno));
	madvise(p, len, MADV_NOHUGEPAGE);
	for (i = 0; i < 8; i++)
		p[i * ((size_t)1 << 30)] = 1;
	before = vm_pte_kb();
	w = pm_watch_new(ctx, 0, PM_WATCH_UFFD, 0);
	CHECK(w && pm_watch_add(w, (uintptr_t)p, (uintptr_t)p + len, 0) == 0);
	after = vm_pte_kb();
	printf("  64 GiB mapping, 8 pages populated: page tables %ld kB before arming, %ld kB after; sparse %llu GiB\n",
	       before, after, w ? (unsigned long long)(pm_watch_stats(w)->sparse_bytes >> 30) : 0ULL);
	CHECK(w && pm_watch_stats(w)->sparse_bytes == len);
	CHECK(after - before < 1024);	/* whole arming would take 128 MiB */
	p[3 * ((size_t)1 << 30)] = 2;		/* populated before */
	p[5 * ((size_t)1 << 30) + 4096] = 2;	/* empty before */
	sink = p[6 * ((size_t)1 << 30) + 8192];	/* empty, only read: the zero page, not written */
	(void)sink;
	CHECK(w && pm_watch_collect(w, PM_WATCH_RESET, &out, &n) == 0);
	CHECK_EQ_U64(w ? n : 0, 2);
	if (w && n == 2) {
		CHECK(out[0].start == (uintptr_t)p + 3 * ((size_t)1 << 30));
		CHECK(out[1].start == (uintptr_t)p + 5 * ((size_t)1 << 30) + 4096);
	}
	pm_watch_free(w);
	munmap(p, len);
	return t_failed_checks ? T_FAIL : T_PASS;
}

/* The mprotect back end passes faults that are not its own to the handler installed before it. */
static sigjmp_buf chain_jmp;
static volatile sig_atomic_t chain_hits;

static void chain_handler(int sig)
{
	(void)sig;
	chain_hits++;
	siglongjmp(chain_jmp, 1);
}

static int t_mprotect_chains(void)
{
	struct sigaction sa = { 0 }, old;
	struct fresh f = { 0 };
	uint8_t bits[4];
	uint8_t *none = mmap(NULL, wl.psize, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int r;

	sa.sa_handler = chain_handler;
	sigemptyset(&sa.sa_mask);
	CHECK(none != MAP_FAILED && sigaction(SIGSEGV, &sa, &old) == 0);
	r = fresh_open(&f, PM_WATCH_MPROTECT, 4, 0, true);
	CHECK(r == T_PASS);
	if (r == T_PASS) {
		chain_hits = 0;
		if (!sigsetjmp(chain_jmp, 1))
			*(volatile uint8_t *)none = 1;		/* not watched: the old handler must see it */
		CHECK_EQ_U64(chain_hits, 1);
		f.p[2 * wl.psize] = 1;				/* watched: recorded, the old handler not called */
		CHECK_EQ_U64(chain_hits, 1);
		CHECK_EQ_U64(fresh_collect(&f, bits), 1);
		CHECK(bits[2]);
	}
	fresh_close(&f);
	sigaction(SIGSEGV, &old, NULL);
	munmap(none, wl.psize);
	return t_failed_checks ? T_FAIL : T_PASS;
}

/* ---- stress: writers and a collector; no write may be lost ---- */

#define ST_THREADS 4
#define ST_PAGES 256
#define ST_ROUNDS_DEFAULT 3000	/* PAGEMAP_TEST_STRESS_ROUNDS overrides (the QEMU guests run fewer) */
#define ST_LOG (1u << 19)

struct wlog {
	uint16_t page;
	uint32_t s, e;	/* the epoch before and after the write */
};

static _Atomic uint32_t epoch;	/* odd while a collect runs; collect k runs in epoch 2k - 1 */
static _Atomic int stop;
static _Atomic uint64_t writes;	/* by all writers, so the collector can let them run between collects */
static _Atomic unsigned writers_done;	/* writers whose log is full */
static uint8_t *st_mem;

struct writer {
	pthread_t th;
	uint64_t seed;
	struct wlog *log;
	size_t n;
};

static void *writer_main(void *arg)
{
	struct writer *wr = arg;

	while (!atomic_load(&stop) && wr->n < ST_LOG) {
		uint16_t page = (uint16_t)(rnd(&wr->seed) % ST_PAGES);
		uint32_t s = atomic_load(&epoch);

		((volatile uint8_t *)st_mem)[page * wl.psize + (wr->seed & 63)] = (uint8_t)s;
		wr->log[wr->n++] = (struct wlog){ .page = page, .s = s, .e = atomic_load(&epoch) };
		atomic_fetch_add_explicit(&writes, 1, memory_order_relaxed);
	}
	atomic_fetch_add(&writers_done, 1);
	return NULL;
}

static unsigned stress_rounds(void)
{
	const char *e = getenv("PAGEMAP_TEST_STRESS_ROUNDS");

	return e && atoi(e) > 0 ? (unsigned)atoi(e) : ST_ROUNDS_DEFAULT;
}

static int stress(enum pm_watch_method m)
{
	const unsigned rounds = stress_rounds();
	struct writer wr[ST_THREADS];
	struct pm_watch *w;
	uint8_t (*seen)[ST_PAGES] = calloc(rounds + 2, ST_PAGES);
	size_t i, j, lost = 0, checked = 0, len = ST_PAGES * wl.psize;
	uint64_t seen_writes = 0;
	unsigned k, spins;
	char why[256];

	if (pm_watch_explain(ctx, 0, m, why, sizeof(why)) < 0) {
		free(seen);
		return t_skip("%s", why);
	}
	st_mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(st_mem != MAP_FAILED && seen);
	madvise(st_mem, len, MADV_NOHUGEPAGE);
	memset(st_mem, 1, len);
	w = pm_watch_new(ctx, 0, m, 0);
	CHECK(w && pm_watch_add(w, (uintptr_t)st_mem, (uintptr_t)st_mem + len, 0) == 0);
	if (t_failed_checks)
		goto out;
	atomic_store(&epoch, 0);
	atomic_store(&stop, 0);
	atomic_store(&writes, 0);
	atomic_store(&writers_done, 0);
	for (i = 0; i < ST_THREADS; i++) {
		wr[i] = (struct writer){ .seed = 0x9e3779b97f4a7c15ull * (i + 1), .n = 0 };
		wr[i].log = malloc(ST_LOG * sizeof(struct wlog));
		pthread_create(&wr[i].th, NULL, writer_main, &wr[i]);
	}
	for (k = 1; k <= rounds + 1; k++) {
		const struct pm_written *out;
		size_t n;
		uint64_t a;

		/* On one slow CPU (a guest) the writers could starve: let them write a little first. */
		for (spins = 0; atomic_load(&writes) < seen_writes + ST_THREADS && atomic_load(&writers_done) < ST_THREADS &&
				spins < 100000;
		     spins++)
			sched_yield();
		seen_writes = atomic_load(&writes);
		if (k == rounds + 1) {	/* writers stop; a last collect sees their last writes */
			atomic_store(&stop, 1);
			for (i = 0; i < ST_THREADS; i++)
				pthread_join(wr[i].th, NULL);
		}
		atomic_fetch_add(&epoch, 1);
		CHECK_EQ_U64(pm_watch_collect(w, PM_WATCH_RESET, &out, &n), 0);
		atomic_fetch_add(&epoch, 1);
		for (i = 0; i < n; i++)
			for (a = out[i].start; a < out[i].end; a += wl.psize)
				if (a >= (uintptr_t)st_mem && a < (uintptr_t)st_mem + len)
					seen[k][(a - (uintptr_t)st_mem) / wl.psize] = 1;
	}
	/* A write in epochs [s, e] must be in a collect from k = s/2 + 1 to (e + 1)/2 + 1. */
	for (i = 0; i < ST_THREADS; i++) {
		for (j = 0; j < wr[i].n; j++) {
			const struct wlog *l = &wr[i].log[j];
			uint32_t lo = l->s / 2 + 1, hi = (l->e + 1) / 2 + 1, q;
			bool ok = false;

			for (q = lo; q <= hi && q <= rounds + 1 && !ok; q++)
				ok = seen[q][l->page];
			if (!ok && lost++ < 5)
				printf("  lost: thread %zu write %zu to page %u in epochs %u-%u\n", i, j, l->page, l->s, l->e);
			checked++;
		}
		free(wr[i].log);
	}
	printf("  %s: %u rounds, %d writer threads, %zu writes checked, %zu lost\n", pm_watch_method_name(m), rounds,
	       ST_THREADS, checked, lost);
	CHECK_EQ_U64(lost, 0);
	CHECK(checked > rounds);
out:
	pm_watch_free(w);
	munmap(st_mem, len);
	free(seen);
	return t_failed_checks ? T_FAIL : T_PASS;
}

static int t_stress_uffd(void) { return stress(PM_WATCH_UFFD); }
static int t_stress_mprotect(void) { return stress(PM_WATCH_MPROTECT); }

/* ---- another process: no trace left ---- */

static bool has_uffd_fd(pid_t pid)
{
	char dir[64], path[320], link[256];
	struct dirent *de;
	DIR *d;
	bool found = false;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		ssize_t n;

		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n > 0) {
			link[n] = '\0';
			found |= strstr(link, "userfaultfd") != NULL;
		}
	}
	if (d)
		closedir(d);
	return found;
}

/* Pages of @pid's [start, end) with the uffd-wp bit (57) in pagemap. */
static long wp_pages(pid_t pid, uint64_t start, uint64_t end)
{
	char path[64];
	uint64_t e;
	long n = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	for (; start < end; start += wl.psize)
		if (pread(fd, &e, 8, start / wl.psize * 8) == 8 && (e >> 57 & 1))
			n++;
	close(fd);
	return n;
}

static int t_remote_no_trace(void)
{
	struct child c = { 0 };
	struct pm_watch *w;
	const struct pm_written *out;
	size_t n;
	uint64_t a = (uintptr_t)wl.base[R_ANON], b = a + wl.pages[R_ANON] * wl.psize;
	char why[256];

	if (pm_watch_explain(ctx, 1, PM_WATCH_UFFD, why, sizeof(why)) < 0)
		return t_skip("%s", why);
	if (child_start(&c) < 0)
		return t_skip("fork failed");
	w = pm_watch_new(ctx, c.pid, PM_WATCH_UFFD, 0);
	CHECK(w && pm_watch_add(w, a, b, 0) == 0);
	CHECK(!has_uffd_fd(c.pid));		/* the injected fd was closed in the child */
	CHECK(wp_pages(c.pid, a, b) == (long)wl.pages[R_ANON]);	/* armed: every page protected */
	CHECK(child_round(&c, 77) == 0);
	CHECK(w && pm_watch_collect(w, PM_WATCH_RESET, &out, &n) == 0);
	pm_watch_free(w);
	CHECK_EQ_U64(wp_pages(c.pid, a, b), 0);	/* the registration went with our fd */
	CHECK(!has_uffd_fd(c.pid));
	CHECK(child_round(&c, 78) == 0);	/* and the child runs on */
	child_stop(&c);
	return t_failed_checks ? T_FAIL : T_PASS;
}

/* pagemap track stopped by SIGTERM: exit 0, and the target keeps no write protection and no descriptor. */
static int t_cli_track_sigterm(void)
{
	const char *build = getenv("PAGEMAP_BUILD");
	uint64_t a = (uintptr_t)wl.base[R_ANON], b = a + wl.pages[R_ANON] * wl.psize;
	struct child c = { 0 };
	char bin[4096], pid[16], why[256];
	long armed;
	pid_t tr;
	int st = -1;

	if (!build)
		return t_skip("PAGEMAP_BUILD is not set (make check sets it)");
	snprintf(bin, sizeof(bin), "%s/pagemap", build);
	if (access(bin, X_OK) != 0)
		return t_skip("%s is not built", bin);
	if (pm_watch_explain(ctx, 1, PM_WATCH_UFFD, why, sizeof(why)) < 0)
		return t_skip("%s", why);
	if (child_start(&c) < 0)
		return t_skip("fork failed");
	snprintf(pid, sizeof(pid), "%d", (int)c.pid);
	tr = fork();
	if (tr == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		execl(bin, bin, "track", "-m", "uffd", pid, "0.2", (char *)NULL);
		_exit(127);
	}
	CHECK(tr > 0);
	/* Armed once the tracker has set up: every page of the child's anonymous region write-protected. */
	for (armed = 0; tr > 0 && armed < (long)wl.pages[R_ANON] && st < 0; usleep(20000))
		if ((armed = wp_pages(c.pid, a, b)) < (long)wl.pages[R_ANON] && waitpid(tr, &st, WNOHANG) != 0)
			break;
	CHECK_EQ_U64(armed, wl.pages[R_ANON]);
	CHECK(child_round(&c, 5) == 0);
	if (tr > 0 && st < 0) {
		kill(tr, SIGTERM);
		CHECK(waitpid(tr, &st, 0) == tr);
	}
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK_EQ_U64(wp_pages(c.pid, a, b), 0);
	CHECK(!has_uffd_fd(c.pid));
	CHECK(child_round(&c, 6) == 0);
	child_stop(&c);
	return t_failed_checks ? T_FAIL : T_PASS;
}

/* The watched process exits (a zombie, not yet reaped): every back end's collect says -ESRCH, never "nothing written". */
static int t_remote_exit(void)
{
	static const enum pm_watch_method ms[] = { PM_WATCH_UFFD, PM_WATCH_SOFTDIRTY, PM_WATCH_SNAPSHOT };
	uint64_t a = (uintptr_t)wl.base[R_ANON], b = a + wl.pages[R_ANON] * wl.psize;
	int tested = 0;
	size_t k;

	for (k = 0; k < sizeof(ms) / sizeof(ms[0]); k++) {
		struct child c = { 0 };
		struct pm_watch *w;
		const struct pm_written *out;
		size_t n;
		char why[256];
		int st;

		if (child_start(&c) < 0)
			return t_skip("fork failed");
		if (pm_watch_explain(ctx, c.pid, ms[k], why, sizeof(why)) < 0) {
			child_stop(&c);
			continue;
		}
		tested++;
		w = pm_watch_new(ctx, c.pid, ms[k], 0);
		CHECK(w && pm_watch_add(w, a, b, 0) == 0);
		kill(c.pid, SIGKILL);
		for (n = 0; n < 500 && pm_proc_state(ctx, c.pid) == PM_PROC_RUNNING; n++)
			usleep(2000);
		CHECK(pm_proc_state(ctx, c.pid) == PM_PROC_ZOMBIE);
		if (w)
			CHECK_EQ_U64(pm_watch_collect(w, PM_WATCH_RESET, &out, &n), (uint64_t)-ESRCH);
		pm_watch_free(w);
		waitpid(c.pid, &st, 0);
		close(c.cmd);
		close(c.ack);
	}
	return tested ? (t_failed_checks ? T_FAIL : T_PASS) : t_skip("no method can watch another process here");
}

/* Unprivileged (tests/live/unpriv.sh): another user's process cannot be watched, and says why. */
static int t_other_user_refused(void)
{
	const char *rp = getenv("PAGEMAP_ROOT_PID");
	struct pm_watch *w;
	pid_t pid;

	if (geteuid() == 0 || !rp)
		return t_skip("runs unprivileged under tests/live/unpriv.sh (PAGEMAP_ROOT_PID: a root process)");
	pid = (pid_t)atoi(rp);
	w = pm_watch_new(ctx, pid, PM_WATCH_AUTO, 0);
	CHECK(w == NULL);
	CHECK(errno == EACCES || errno == EPERM);
	printf("  watching root's process %d as uid %d: %s\n", (int)pid, (int)geteuid(), strerror(errno));
	pm_watch_free(w);
	return t_failed_checks ? T_FAIL : T_PASS;
}

/* ---- the CLI: pagemap track -- CMD, on a writer with a known pattern ---- */

#define WRITER_PAGES 64

/* `test_watch writer FILE`: map 64 pages, say where, write 16 pages, pause, write 32 more, pause, exit. */
static int writer_main_cmd(const char *file)
{
	long ps = sysconf(_SC_PAGESIZE);
	uint8_t *p = mmap(NULL, WRITER_PAGES * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char tmp[4096];
	FILE *f;
	int i;

	if (p == MAP_FAILED)
		return 1;
	madvise(p, WRITER_PAGES * ps, MADV_NOHUGEPAGE);
	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%p\n", (void *)p) < 0 || fclose(f) != 0 || rename(tmp, file) != 0)
		return 1;
	for (i = 0; i < 16; i++)
		p[i * ps] = 1;
	usleep(700000);
	for (i = 16; i < 48; i++)
		p[i * ps] = 2;
	usleep(700000);
	return 0;
}

static int t_cli_track(void)
{
	const char *build = getenv("PAGEMAP_BUILD");
	char self[4096], file[4096], cmd[16384], line[65536];
	uint64_t addr = 0, lo, hi, pages = 0;
	unsigned lines = 0;
	ssize_t n;
	FILE *f;
	int fd, st;
	char why[256];

	if (!build)
		return t_skip("PAGEMAP_BUILD is not set (make check sets it)");
	snprintf(cmd, sizeof(cmd), "%s/pagemap", build);
	if (access(cmd, X_OK) != 0)
		return t_skip("%s is not built", cmd);
	if (pm_watch_explain(ctx, 1, PM_WATCH_AUTO, why, sizeof(why)) < 0 ||
	    (pm_watch_explain(ctx, 1, PM_WATCH_UFFD, why, sizeof(why)) < 0 &&
	     pm_watch_explain(ctx, 1, PM_WATCH_SOFTDIRTY, why, sizeof(why)) < 0))
		return t_skip("no method can track another process here: %s", why);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	snprintf(file, sizeof(file), "%s/pm-track-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	fd = mkstemp(file);
	CHECK(n > 0 && fd >= 0);
	if (n <= 0 || fd < 0)
		return T_FAIL;
	self[n] = '\0';
	close(fd);
	/*
	 * --max-overhead 0: this checks that every written page is reported, so the interval must stay
	 * 0.2 s. The default budget widens it after the writer's start-up faults (1050 pages under
	 * ASan: 66 % estimated). tests/live/test_track_cost.c tests the widening, test_track_last.c the
	 * last interval, collected at the command's exit.
	 */
	snprintf(cmd, sizeof(cmd), "%s/pagemap track -J --ranges --max-overhead 0 0.2 -- %s writer %s 2>%s.err", build,
		 self, file, file);
	f = popen(cmd, "r");
	CHECK(f != NULL);
	while (f && fgets(line, sizeof(line), f)) {
		const char *p = line;

		lines++;
		if (!addr) {
			FILE *a = fopen(file, "r");

			if (a && fscanf(a, "%" SCNx64, &addr) != 1)
				addr = 0;
			if (a)
				fclose(a);
		}
		CHECK(!strncmp(line, "{\"t\":", 5) && strstr(line, "\"ranges\":[") && line[strlen(line) - 2] == '}');
		while ((p = strstr(p, "{\"start\":\"")) && sscanf(p, "{\"start\":\"%" SCNx64 "\",\"end\":\"%" SCNx64, &lo, &hi) == 2) {
			uint64_t end = addr + WRITER_PAGES * wl.psize;

			if (addr && hi > addr && lo < end)
				pages += ((hi < end ? hi : end) - (lo > addr ? lo : addr)) / wl.psize;
			p++;
		}
	}
	st = f ? pclose(f) : -1;
	unlink(file);
	printf("  pagemap track: %u interval lines, %llu pages written in the writer's mapping (48 expected)\n", lines,
	       (unsigned long long)pages);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {	/* say why: its stderr */
		char err[sizeof(file) + 8];
		FILE *e;

		snprintf(err, sizeof(err), "%s.err", file);
		printf("  pagemap track ended with status 0x%x; its stderr:\n", st);
		if ((e = fopen(err, "r"))) {
			while (fgets(line, sizeof(line), e))
				printf("    %s", line);
			fclose(e);
		}
	}
	{
		char err[sizeof(file) + 8];

		snprintf(err, sizeof(err), "%s.err", file);
		unlink(err);
	}
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(lines >= 3);
	CHECK(addr != 0);
	CHECK_EQ_U64(pages, 48);
	return t_failed_checks ? T_FAIL : T_PASS;
}

/* The children of every thread of @pid (0: self), from /proc/PID/task/TID/children (zombies included); their count. */
static int children_of(pid_t pid, char *buf, size_t size)
{
	char dirpath[64], path[384];
	struct dirent *d;
	DIR *dir;
	size_t len = 0;
	int n = 0;
	char *p;

	buf[0] = 0;
	snprintf(dirpath, sizeof(dirpath), "/proc/%d/task", pid ? (int)pid : (int)getpid());
	dir = opendir(dirpath);
	if (!dir)
		return -errno;
	while ((d = readdir(dir))) {
		FILE *f;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/children", dirpath, d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		len += fread(buf + len, 1, size - 1 - len, f);
		buf[len] = 0;
		fclose(f);
	}
	closedir(dir);
	for (p = strtok(buf, " \n"); p; p = strtok(NULL, " \n"))
		n++;
	return n;
}

static int tracer_of(pid_t pid)
{
	char path[64], line[256];
	int tracer = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "TracerPid: %d", &tracer) == 1)
			break;
	if (f)
		fclose(f);
	return tracer;
}

/*
 * fork-snapshot: the snapshot exists while watching (one child, also after
 * resets), shared mappings are refused, and pm_watch_free leaves the
 * watched process with no child, no zombie, not traced (remote and self).
 */
static int t_snapshot_leaves_nothing(void)
{
	struct child c = { 0 };
	struct pm_watch *pw = NULL;
	const struct pm_written *out;
	char kids[512], why[256];
	size_t n;
	int err, i;

	if (pm_watch_explain(ctx, 1, PM_WATCH_SNAPSHOT, why, sizeof(why)) < 0 &&
	    pm_watch_explain(ctx, 0, PM_WATCH_SNAPSHOT, why, sizeof(why)) < 0)
		return t_skip("%s", why);
	for (i = 0; i < 2; i++) {
		pid_t pid;

		if (i == 1 && (err = child_start(&c)) < 0)
			return t_skip("fork: %s", strerror(-err));
		pid = i ? c.pid : 0;
		if (i == 1 && pm_watch_explain(ctx, pid, PM_WATCH_SNAPSHOT, why, sizeof(why)) < 0) {
			printf("  remote: %s\n", why);
			break;
		}
		CHECK_EQ_U64(children_of(pid, kids, sizeof(kids)), 0);
		pw = pm_watch_new(ctx, pid, PM_WATCH_SNAPSHOT, 0);
		CHECK(pw != NULL);
		if (!pw)
			break;
		/* Atomic where frames show (two snapshots compared), not where they are hidden. */
		CHECK_EQ_U64(pm_watch_atomic(pw), pm_ctx_features(ctx)->pfn_view == PM_PFN_VISIBLE);
		CHECK_EQ_U64(pm_watch_add(pw, (uintptr_t)wl.base[R_MEMFD], (uintptr_t)wl.base[R_MEMFD] + wl.psize, 0),
			     -EOPNOTSUPP);
		CHECK_EQ_U64(watch_workload(pw, &wl, PRIVATE_REGIONS), 0);
		CHECK_EQ_U64(pm_watch_stats(pw)->shared_bytes, 0);
		CHECK_EQ_U64(pm_watch_collect(pw, PM_WATCH_RESET, &out, &n), 0);
		CHECK_EQ_U64(pm_watch_collect(pw, PM_WATCH_RESET, &out, &n), 0);
		CHECK_EQ_U64(n, 0);
		CHECK_EQ_U64(children_of(pid, kids, sizeof(kids)), 1);	/* the snapshot, the old ones reaped */
		if (i == 1)
			CHECK_EQ_U64(tracer_of(pid), 0);	/* not traced between resets */
		pm_watch_free(pw);
		pw = NULL;
		err = children_of(pid, kids, sizeof(kids));
		CHECK_EQ_U64(err, 0);	/* no child, no zombie */
		printf("  %s: children after pm_watch_free: %d\n", i ? "remote" : "self", err);
		if (i == 1) {
			CHECK_EQ_U64(tracer_of(pid), 0);
			CHECK(child_round(&c, 77) == 0);	/* it still runs */
		}
	}
	pm_watch_free(pw);
	child_stop(&c);
	return t_failed_checks ? T_FAIL : T_PASS;
}

static int swap_active(void)
{
	FILE *f = fopen("/proc/swaps", "r");
	char line[256];
	int n = 0;

	while (f && fgets(line, sizeof(line), f))
		n++;
	if (f)
		fclose(f);
	return n > 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A child with @n writable one-page mappings (PROT_NONE pages between): pages written on command. */
static void many_child(size_t n, int cmd, int ack)
{
	size_t ps = wl.psize, i;
	uint8_t *p = mmap(NULL, 2 * n * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint32_t k;

	if (p == MAP_FAILED)
		_exit(1);
	for (i = 0; i < n; i++) {
		p[2 * i * ps] = 1;
		if (mprotect(p + (2 * i + 1) * ps, ps, PROT_NONE) < 0)
			_exit(1);
	}
	if (write(ack, &p, sizeof(p)) != sizeof(p))
		_exit(1);
	while (read(cmd, &k, sizeof(k)) == sizeof(k)) {
		p[2 * (size_t)k * ps] = 2;
		if (write(ack, &k, sizeof(k)) != sizeof(k))
			break;
	}
	_exit(0);
}

/*
 * pm_watch_add_writable over a process of 60,000 mappings (30,000 writable):
 * one call adds each writable mapping once, a second call adds nothing, and
 * writes to a few of them are reported exactly. Before it, the tracker
 * re-read the maps for every mapping added (10,000 mappings: 155 s). The
 * time is printed, not asserted (bench/ measures).
 */
static int t_many_mappings(void)
{
	const char *e = getenv("PAGEMAP_TEST_MANY_MAPS");
	size_t n = (e && *e ? strtoul(e, NULL, 0) : 60000) / 2, i;
	static const uint32_t hits[] = { 0, 7, 12345, 29999 };
	struct pm_watch_batch b;
	struct pm_watch *w = NULL;
	struct piped_child c = { .cmd = -1, .ack = -1 };
	long max_maps = 0;
	uint8_t *p = NULL;
	char why[256];
	FILE *f;
	double t0, t1;

	f = fopen("/proc/sys/vm/max_map_count", "re");
	if (f && fscanf(f, "%ld", &max_maps) != 1)
		max_maps = 0;
	if (f)
		fclose(f);
	if (max_maps < (long)(2 * n + 1000))
		return t_skip("vm.max_map_count is %ld: below %zu mappings", max_maps, 2 * n + 1000);
	if (pm_watch_explain(ctx, 1, PM_WATCH_UFFD, why, sizeof(why)) < 0)
		return t_skip("%s", why);
	if (piped_start(&c, many_child, n, &p) < 0) {
		t_failed_checks++;
		goto out;
	}
	w = pm_watch_new(ctx, c.pid, PM_WATCH_UFFD, 0);
	CHECK(w != NULL);
	if (!w)
		goto out;
	t0 = now_s();
	CHECK_EQ_U64(pm_watch_add_writable(w, 0, &b), 0);
	t1 = now_s();
	printf("  %zu mappings: %zu writable ranges added in %.3f s (%zu vanished, %zu failed)\n", 2 * n, b.added,
	       t1 - t0, b.vanished, b.failed);
	CHECK(b.added >= n);	/* the child's, and its stack, heap, data */
	CHECK_EQ_U64(b.failed, 0);
	CHECK_EQ_U64(pm_watch_add_writable(w, PM_WATCH_POPULATED, &b), 0);
	CHECK_EQ_U64(b.added, 0);	/* nothing new */
	for (i = 0; i < sizeof(hits) / sizeof(hits[0]); i++) {
		uint32_t k = hits[i] % (uint32_t)n;

		CHECK(write(c.cmd, &k, sizeof(k)) == sizeof(k) && read(c.ack, &k, sizeof(k)) == sizeof(k));
	}
	{
		const struct pm_written *out;
		size_t nout, pages = 0;

		t0 = now_s();
		CHECK_EQ_U64(pm_watch_collect(w, PM_WATCH_RESET, &out, &nout), 0);
		t1 = now_s();
		for (i = 0; i < nout; i++) {
			uint64_t a;

			for (a = out[i].start; a < out[i].end; a += wl.psize) {
				size_t idx = (size_t)((a - (uintptr_t)p) / wl.psize);

				if (a >= (uintptr_t)p && idx < 2 * n) {
					CHECK(idx % 2 == 0);
					pages++;
				}
			}
		}
		printf("  collect over them: %.3f s, %zu pages reported\n", t1 - t0, pages);
		CHECK_EQ_U64(pages, sizeof(hits) / sizeof(hits[0]));
	}
out:
	pm_watch_free(w);
	piped_stop(&c);
	return t_failed_checks ? T_FAIL : T_PASS;
}

/*
 * PM_WATCH_POPULATED with swap on: of a range whose first pages are in swap
 * and the rest never touched, exactly the swapped pages are reported. With
 * frames hidden the markers that arming leaves on the empty pages read like
 * swap entries, in a mapping whose smaps Swap is not 0 (all 64 were reported).
 */
static int t_populated_swap(void)
{
	enum { PAGES = 64, USED = 16 };
	struct fresh f = { 0 };
	uint8_t bits[PAGES];
	char why[256];
	size_t i, swapped = 0;
	int err;

	if (!swap_active())
		return t_skip("no swap area is active (tests/live/swap.sh provides one)");
	if (pm_watch_explain(ctx, 0, PM_WATCH_UFFD, why, sizeof(why)) < 0)
		return t_skip("%s", why);
	f.len = PAGES * wl.psize;
	f.p = mmap(NULL, f.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(f.p != MAP_FAILED);
	madvise(f.p, f.len, MADV_NOHUGEPAGE);
	for (i = 0; i < USED; i++) {
		f.p[i * wl.psize] = 1;
		if (madvise(f.p + i * wl.psize, wl.psize, MADV_PAGEOUT) == 0 && in_swap(f.p + i * wl.psize))
			swapped++;
	}
	if (swapped < USED) {
		munmap(f.p, f.len);
		return t_skip("only %zu of %d written pages went to swap", swapped, USED);
	}
	f.w = pm_watch_new(ctx, 0, PM_WATCH_UFFD, 0);
	CHECK(f.w != NULL);
	err = pm_watch_add(f.w, (uintptr_t)f.p, (uintptr_t)f.p + f.len, PM_WATCH_POPULATED);
	CHECK_EQ_U64(err, 0);
	if (!err) {
		CHECK_EQ_U64(fresh_collect(&f, bits), USED);
		for (i = 0; i < USED; i++)
			CHECK(bits[i]);
	}
	fresh_close(&f);
	return t_failed_checks ? T_FAIL : T_PASS;
}

int main(int argc, char **argv)
{
	static const struct t_case cases[] = {
		{ "self_uffd", t_self_uffd },
		{ "self_softdirty", t_self_softdirty },
		{ "self_mprotect", t_self_mprotect },
		{ "remote_uffd", t_remote_uffd },
		{ "remote_softdirty", t_remote_softdirty },
		{ "self_snapshot", t_self_snapshot },
		{ "remote_snapshot", t_remote_snapshot },
		{ "snapshot_leaves_nothing", t_snapshot_leaves_nothing },
		{ "populated_swap", t_populated_swap },
		{ "untouched_and_read", t_untouched_and_read },
		{ "dontneed", t_dontneed },
		{ "munmap_remap", t_munmap_remap },
		{ "mremap", t_mremap },
		{ "fork", t_fork },
		{ "kernel_write", t_kernel_write },
		{ "thp", t_thp },
		{ "thp_kept", t_thp_kept },
		{ "many_mappings", t_many_mappings },
		{ "mprotect_chains", t_mprotect_chains },
		{ "sparse_big", t_sparse_big },
		{ "stress_uffd", t_stress_uffd },
		{ "stress_mprotect", t_stress_mprotect },
		{ "remote_no_trace", t_remote_no_trace },
		{ "cli_track", t_cli_track },
		{ "cli_track_sigterm", t_cli_track_sigterm },
		{ "remote_exit", t_remote_exit },
		{ "other_user_refused", t_other_user_refused },
	};
	int err;

	as_helper = argc == 3 && !strcmp(argv[1], "writer");
	if (as_helper)
		return writer_main_cmd(argv[2]);

	ctx = pm_ctx_new(NULL);
	if (!ctx || (err = workload_map(&wl)) < 0) {
		printf("FAIL setup: %s\n", strerror(ctx ? -err : errno));
		return 1;
	}
	swap_on = swap_active();
	printf("# swap %s: written-then-swapped pages %s\n", swap_on ? "on" : "off",
	       swap_on ? "are part of every round" : "are not tested in this run (tests/live/swap.sh runs them)");
	return t_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
