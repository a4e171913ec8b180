/* test_track_cost.c - what tracking costs the tracked process: the estimate pm_watch_cost gives is present and sane, and pagemap track --max-overhead widens the interval under a heavy writer and says so in its records. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <pagemap.h>
#include "../harness.h"

#define HEAVY_PAGES 16384	/* 64 MiB rewritten in passes: thousands of tracking faults per interval anywhere */

static struct pm_ctx *ctx;

/*
 * The helper modes run under pagemap track -- COMMAND, which traces its command to hold it at its
 * exit; LeakSanitizer (a SANITIZE=1 build) cannot run under ptrace and would fail the helper's exit.
 */
static int as_helper;
int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void)
{
	return as_helper;
}


static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Write one byte to every page of @p, @passes times (each pass after a reset faults on every page). */
static void write_passes(volatile char *p, size_t pages, int passes)
{
	long ps = sysconf(_SC_PAGESIZE);
	size_t i;
	int k;

	for (k = 0; k < passes; k++)
		for (i = 0; i < pages; i++)
			p[i * (size_t)ps] = (char)(k + 1);
}

static volatile sig_atomic_t heavy_stop;

static void on_term(int sig)
{
	(void)sig;
	heavy_stop = 1;
}

/*
 * `test_track_cost heavy FILE`: map HEAVY_PAGES pages (THP off), write our PID to FILE and rewrite the pages,
 * pass after pass, until SIGTERM (exit 0) or 120 s (a slow build, ASan, takes seconds to start tracking).
 */
static int heavy_main(const char *file)
{
	long ps = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, HEAVY_PAGES * (size_t)ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	double end = now_s() + 120;
	FILE *f;

	if (p == MAP_FAILED)
		return 1;
	signal(SIGTERM, on_term);
	madvise(p, HEAVY_PAGES * (size_t)ps, MADV_NOHUGEPAGE);
	f = fopen(file, "w");
	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) != 0)
		return 1;
	while (!heavy_stop && now_s() < end)
		write_passes(p, HEAVY_PAGES, 1);
	return 0;
}

/* Run `pagemap track OPTS --max-overhead MAXOVER 0.05 -- us heavy FILE`; NULL (skipped or failed) or its output. */
static FILE *start_heavy(const char *opts, const char *maxover, char *file, size_t size)
{
	const char *build = getenv("PAGEMAP_BUILD");
	char self[4096], cmd[16384];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int fd;

	snprintf(file, size, "%s/pm-cost-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	fd = mkstemp(file);
	if (n <= 0 || fd < 0)
		return NULL;
	close(fd);
	self[n] = '\0';
	snprintf(cmd, sizeof(cmd), "%s/pagemap track %s --max-overhead %s 0.05 -- %s heavy %s 2>/dev/null", build,
		 opts, maxover, self, file);
	return popen(cmd, "r");
}

/* Tell the writer to finish (its PID is in @file); pagemap track then ends with its status, 0. */
static void stop_heavy(const char *file)
{
	FILE *f = fopen(file, "r");
	int pid = 0;

	if (f && fscanf(f, "%d", &pid) == 1 && pid > 0)
		kill(pid, SIGTERM);
	if (f)
		fclose(f);
	unlink(file);
}

/* The library: calibrated, one collect after a pass over written pages; every field of the estimate in range. */
static int t_estimate(void)
{
	long ps = sysconf(_SC_PAGESIZE);
	size_t len = 4096 * (size_t)ps;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct pm_watch *w = pm_watch_new(ctx, 0, PM_WATCH_AUTO, PM_WATCH_NOTHP);
	const struct pm_written *out;
	struct pm_watch_cost c;
	double cost = -1;
	size_t n, i;
	uint64_t pages = 0;

	if (!w)
		return t_skip("no write watch of the caller here: %s", strerror(errno));
	CHECK(p != MAP_FAILED);
	madvise(p, len, MADV_NOHUGEPAGE);
	write_passes(p, 4096, 1);
	CHECK(pm_watch_cost(w, &c) == -ENODATA);	/* no collect yet */
	CHECK(pm_watch_calibrate(w, &cost) == 0);
	CHECK(cost > 0 && cost < 0.01);			/* a fault costs more than nothing and less than 10 ms */
	CHECK(pm_watch_add(w, (uintptr_t)p, (uintptr_t)p + len, 0) == 0);
	CHECK(pm_watch_collect(w, PM_WATCH_RESET, &out, &n) == 0);
	write_passes(p, 4096, 2);
	CHECK(pm_watch_collect(w, PM_WATCH_RESET, &out, &n) == 0);
	for (i = 0; i < n; i++)
		pages += (out[i].end - out[i].start) / (uint64_t)ps;
	CHECK(pm_watch_cost(w, &c) == 0);
	printf("  %s: %" PRIu64 " pages written, estimate: %" PRIu64 " faults x %.2f us, cpu %.3f s of %.3f s, "
	       "collect %.3f ms, longest hold %.3f ms, overhead %.1f %%\n", pm_watch_method_name(pm_watch_method(w)),
	       pages, c.faults, 1e6 * c.fault_cost, c.cpu, c.interval, 1e3 * c.scan_time, 1e3 * c.max_hold,
	       100 * c.overhead);
	CHECK(pages >= 4096);
	CHECK(c.faults <= pages && c.faults <= c.minflt);
	CHECK(c.minflt != UINT64_MAX && c.cpu >= 0);	/* our own /proc/self/stat read */
	CHECK(c.fault_cost == cost);
	CHECK(c.fault_time == (double)c.faults * c.fault_cost);
	CHECK(c.interval > 0 && c.scan_time >= 0 && c.max_hold <= c.scan_time + 1e-9);
	CHECK(c.max_hold_ever >= c.max_hold);
	CHECK(c.overhead >= 0 && c.overhead <= 1);
	CHECK(pm_watch_next_interval(w, 1000, 0.5) >= 1000);	/* never narrower than asked */
	CHECK(pm_watch_next_interval(w, 0.001, 0) == 0.001);	/* no budget: as asked */
	pm_watch_free(w);
	munmap(p, len);
	return t_failed_checks ? T_FAIL : T_PASS;
}

/* Minor faults of this process so far. */
static long minflt_now(void)
{
	struct rusage u;

	getrusage(RUSAGE_SELF, &u);
	return u.ru_minflt;
}

/* The minor faults of writing each of @pages never-touched pages of @p once. */
static long first_writes(volatile char *p, size_t pages, long ps)
{
	long before = minflt_now();
	size_t i;

	for (i = 0; i < pages; i++)
		p[i * (size_t)ps] = 1;
	return minflt_now() - before;
}

/*
 * Why the estimate counts first writes to new pages as tracking faults: under uffd-wp with
 * WP_UNPOPULATED (lib/watch/watch_uffd.c, needed so that a read of an untouched page is not taken for a
 * write) the page a first write brings in arrives write-protected, and the write faults again. So a
 * watched process pays one fault more per new page than it would untracked, as for a page written
 * again. If a kernel ever resolves both in one fault, this fails, and the estimate over-states the
 * cost of new pages (lib/watch/watch_cost.c would then subtract them).
 */
static int t_first_write_faults(void)
{
	enum { PAGES = 1024 };
	long ps = sysconf(_SC_PAGESIZE);
	size_t len = PAGES * (size_t)ps, i, n;
	char *plain = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *watched = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct pm_watch *w = pm_watch_new(ctx, 0, PM_WATCH_UFFD, PM_WATCH_NOTHP);
	const struct pm_written *out;
	struct pm_watch_cost c;
	long f_plain, f_watched;
	uint64_t pages = 0;

	if (!w) {
		munmap(plain, len);
		munmap(watched, len);
		return t_skip("no uffd write watch of the caller here: %s", strerror(errno));
	}
	CHECK(plain != MAP_FAILED && watched != MAP_FAILED);
	madvise(plain, len, MADV_NOHUGEPAGE);
	madvise(watched, len, MADV_NOHUGEPAGE);
	CHECK(pm_watch_add(w, (uintptr_t)watched, (uintptr_t)watched + len, 0) == 0);
	CHECK(pm_watch_collect(w, PM_WATCH_RESET, &out, &n) == 0);
	f_plain = first_writes(plain, PAGES, ps);
	f_watched = first_writes(watched, PAGES, ps);
	CHECK(pm_watch_collect(w, PM_WATCH_RESET, &out, &n) == 0);
	for (i = 0; i < n; i++)
		pages += (out[i].end - out[i].start) / (uint64_t)ps;
	CHECK(pm_watch_cost(w, &c) == 0);
	printf("  first writes to %d new pages: %ld minor faults unwatched, %ld watched; %" PRIu64 " reported written, "
	       "the estimate counts %" PRIu64 " tracking faults\n", PAGES, f_plain, f_watched, pages, c.faults);
	CHECK(pages == PAGES);
	/* (ASan's shadow of a new mapping faults too, alike in both: compare the difference) */
	CHECK(f_plain >= PAGES && f_watched - f_plain >= PAGES * 9 / 10);
	CHECK(c.faults == PAGES);
	pm_watch_free(w);
	munmap(plain, len);
	munmap(watched, len);
	return t_failed_checks ? T_FAIL : T_PASS;
}

/* A number after "KEY": in a JSON line, or -1. */
static double json_num(const char *line, const char *key)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(line, k);
	return p ? strtod(p + strlen(k), NULL) : -1;
}

/*
 * pagemap track --max-overhead 1 at 0.05 s over a process that rewrites 16384 pages without pause: the first
 * interval's estimate is over 1 % on any machine (16384 faults of at least 0.1 us in 50 ms), so the next
 * interval is widened, and a record says widened, with an interval longer than asked.
 */
static int t_cli_widen(void)
{
	char file[4096], line[65536], why[256];
	unsigned lines = 0, widened = 0, told = 0, estimated = 0;
	FILE *f;
	int st;

	if (!getenv("PAGEMAP_BUILD"))
		return t_skip("PAGEMAP_BUILD is not set (make check sets it)");
	if (pm_watch_explain(ctx, 1, PM_WATCH_AUTO, why, sizeof(why)) < 0 ||
	    (pm_watch_explain(ctx, 1, PM_WATCH_UFFD, why, sizeof(why)) < 0 &&
	     pm_watch_explain(ctx, 1, PM_WATCH_SOFTDIRTY, why, sizeof(why)) < 0))
		return t_skip("no method can track another process here: %s", why);
	f = start_heavy("-J", "1", file, sizeof(file));
	CHECK(f != NULL);
	while (f && fgets(line, sizeof(line), f)) {
		double interval = json_num(line, "interval"), next = json_num(line, "next_interval");
		double over = json_num(line, "overhead"), fus = json_num(line, "fault_us");

		lines++;
		CHECK(json_num(line, "asked") == 0.05 && over >= 0 && over <= 100 && fus >= 0 && json_num(line, "faults") >= 0);
		CHECK(next >= 0.05);
		if (fus > 0 && json_num(line, "faults") > 0 && over > 0)
			estimated++;
		/* The last record, cut short by the writer's end, is shorter than planned: no check of its length. */
		if (strstr(line, "\"widened\":true") && !strstr(line, "\"partial\":true")) {
			widened++;
			CHECK(interval > 0.05);
		}
		if (over > 1 && next > 0.05)
			told++;
		if (lines <= 6)
			printf("  interval %.3f s, overhead %.1f %%, next %.3f s%s\n", interval, over, next,
			       strstr(line, "\"widened\":true") ? ", widened" : "");
		if ((widened && told) || lines >= 20)
			stop_heavy(file);
	}
	st = f ? pclose(f) : -1;
	unlink(file);
	printf("  %u records, %u with an estimate, %u over budget with a wider next interval, %u widened\n", lines,
	       estimated, told, widened);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(lines >= 2);
	CHECK(estimated >= 1);
	CHECK(told >= 1);
	CHECK(widened >= 1);
	return t_failed_checks ? T_FAIL : T_PASS;
}

/* --max-overhead 0: the same writer, every interval as asked and no record says widened. */
static int t_cli_no_widen(void)
{
	char file[4096], line[65536], why[256];
	unsigned lines = 0;
	FILE *f;
	int st;

	if (!getenv("PAGEMAP_BUILD"))
		return t_skip("PAGEMAP_BUILD is not set (make check sets it)");
	if (pm_watch_explain(ctx, 1, PM_WATCH_AUTO, why, sizeof(why)) < 0)
		return t_skip("no method can track another process here: %s", why);
	f = start_heavy("-J", "0", file, sizeof(file));
	CHECK(f != NULL);
	while (f && fgets(line, sizeof(line), f)) {
		lines++;
		CHECK(strstr(line, "\"widened\":false") != NULL);
		CHECK(json_num(line, "next_interval") == 0.05);
		if (lines == 3)
			stop_heavy(file);
	}
	st = f ? pclose(f) : -1;
	unlink(file);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(lines >= 3);
	return t_failed_checks ? T_FAIL : T_PASS;
}

/*
 * The notice under each table record says why the next interval is what it is, and its words match the
 * estimate it states: "over --max-overhead 5%" only when the estimate is over 5 %, "within" when it is not,
 * "narrowed" when it fell under a quarter of it. The same writer at 5 %: its estimate starts over the budget
 * and, the interval widened, falls within it while the interval stays widened.
 */
static int t_cli_notice(void)
{
	char file[4096], line[65536], why[256];
	unsigned heads = 0, told = 0, bad = 0;
	FILE *f;
	int st;

	if (!getenv("PAGEMAP_BUILD"))
		return t_skip("PAGEMAP_BUILD is not set (make check sets it)");
	if (pm_watch_explain(ctx, 1, PM_WATCH_AUTO, why, sizeof(why)) < 0)
		return t_skip("no method can track another process here: %s", why);
	f = start_heavy("", "5", file, sizeof(file));
	CHECK(f != NULL);
	while (f && fgets(line, sizeof(line), f)) {
		const char *e = strstr(line, "estimated cost to it: ");
		double est;

		if (!e)
			continue;
		est = strtod(e + strlen("estimated cost to it: "), NULL);
		heads++;
		if (strstr(line, "max-overhead")) {
			bool ok = strstr(line, "over --max-overhead 5%") ? est > 5 :
				  strstr(line, "within --max-overhead 5%") ? est <= 5 :
				  strstr(line, "under a quarter of --max-overhead 5%") ? est < 1.25 : false;

			told++;
			if (!ok) {
				bad++;
				printf("  words against the figure: %s", strstr(line, "estimated"));
			} else if (told <= 4) {
				printf("  %s", strstr(line, "estimated"));
			}
		}
		if (heads >= 6)
			stop_heavy(file);
	}
	st = f ? pclose(f) : -1;
	unlink(file);
	printf("  %u records, %u with a notice, %u of them against the estimate they state\n", heads, told, bad);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(told >= 1);
	CHECK(bad == 0);
	return t_failed_checks ? T_FAIL : T_PASS;
}

int main(int argc, char **argv)
{
	static const struct t_case cases[] = {
		{ "estimate", t_estimate },
		{ "first_write_faults", t_first_write_faults },
		{ "cli_widen", t_cli_widen },
		{ "cli_no_widen", t_cli_no_widen },
		{ "cli_notice", t_cli_notice },
	};

	as_helper = argc == 3 && !strcmp(argv[1], "heavy");
	if (as_helper)
		return heavy_main(argv[2]);
	ctx = pm_ctx_new(NULL);
	if (!ctx) {
		printf("FAIL setup: %s\n", strerror(errno));
		return 1;
	}
	return t_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
