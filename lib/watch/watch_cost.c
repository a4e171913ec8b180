/* watch_cost.c - what a write watch costs the watched process: the per-fault cost calibrated in a child, the estimate per collect, the interval that keeps it in a budget. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "watch.h"

#define CAL_PAGES	1024	/* pages written per calibration round (4 MiB with 4 KiB pages) */
#define CAL_STRIDE	1021	/* a prime: page i*1021 mod CAL_PAGES visits every page once, scattered */
#define CAL_ROUNDS	5	/* rounds; the median is kept */
#define WIDEN_STEP	8.0	/* pm_watch_next_interval: at most this much wider per collect */
#define WIDEN_MAX	1000.0	/* ... and at most this many times the asked interval (a runaway bound, not a policy) */
#define AIM		0.8	/* ... aiming at this share of the budget, so the estimate's noise stays inside it */
#define NARROW		0.25	/* ... and narrowing only below this share of the budget (a dead band: no see-saw on noise) */
#define QUIET_CPU	0.1	/* faults are priced against at least this share of one CPU over the interval */
#define GIVE		0.9	/* pm_watch_next_wait: the process has at least this share of the interval between collects */

double pmi_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* /proc/PID/stat's minor faults and user + system time of the whole thread group, by the one reader of the line. */
int pmi_proc_stat_parse(const char *buf, struct pmi_proc_stat *st)
{
	struct pm_proc_stat line;
	int r = pmi_stat_line_parse(buf, strlen(buf), &line, NULL, 0);

	if (r == 0) {
		st->minflt = line.minflt;
		st->cpu_ticks = line.utime + line.stime;
	}
	return r;
}

static int read_stat(struct pm_watch *w, struct pmi_proc_stat *st)
{
	char path[4096], buf[2048];
	int n;

	if (pmi_pid_path(w->ctx, path, sizeof(path), w->pid, "stat") < 0)
		return -ENAMETOOLONG;
	n = pmi_read_small_file(w->ctx, path, buf, sizeof(buf));
	if (n <= 0)
		return n < 0 ? n : -ESRCH;
	return pmi_proc_stat_parse(buf, st);
}

void pmi_watch_cost_begin(struct pm_watch *w)
{
	w->cost.t_last = pmi_now();
	w->cost.stat_ok = read_stat(w, &w->cost.stat_last) == 0;
	w->cost.last.cpu = -1;
}

void pmi_watch_hold(struct pm_watch *w, double seconds)
{
	if (seconds > w->cost.hold_now)
		w->cost.hold_now = seconds;
	w->cost.hold_sum += seconds;
	w->cost.held = true;
}

/*
 * The share of the process's time the tracking took: its faults against its CPU time, the scans
 * against the interval. Not capped at 1 (pm_watch_next_interval needs how far over it is).
 * A process that used under QUIET_CPU of a CPU is priced against QUIET_CPU: it waits more than
 * it runs, so its faults delay it without slowing it down, and set against its few clock ticks
 * they would read as most of its time and widen its interval for nothing (tests/unit/test_watch_cost.c,
 * the quiet writer).
 */
static double share_of(const struct pm_watch_cost *c, double held)
{
	double tick = 1.0 / (double)sysconf(_SC_CLK_TCK);
	double cpu = c->cpu >= 0 ? c->cpu : c->interval;

	/* The CPU time comes in clock ticks: never less than one, never less than the faults it contains. */
	if (cpu < QUIET_CPU * c->interval)
		cpu = QUIET_CPU * c->interval;
	if (cpu < tick)
		cpu = tick;
	return c->fault_time / cpu + (c->interval > 0 ? held / c->interval : 0);
}

/*
 * The estimate of a collect that ran from @t0 to @t1 and reported @pages pages written page by
 * page, the process's /proc/PID/stat then being *@st (NULL: unreadable). Pure: the model of
 * tests/unit/test_watch_cost.c drives it with a simulated process.
 */
void pmi_watch_cost_account(struct pm_watch *w, double t0, double t1, uint64_t pages, const struct pmi_proc_stat *st)
{
	struct pm_watch_cost *c = &w->cost.last;
	bool ok = st != NULL;

	c->interval = t0 - w->cost.t_last;
	c->minflt = UINT64_MAX;
	c->cpu = -1;
	if (ok && w->cost.stat_ok && st->minflt >= w->cost.stat_last.minflt && st->cpu_ticks >= w->cost.stat_last.cpu_ticks) {
		c->minflt = st->minflt - w->cost.stat_last.minflt;
		c->cpu = (double)(st->cpu_ticks - w->cost.stat_last.cpu_ticks) / (double)sysconf(_SC_CLK_TCK);
	}
	/* Each page written since the last reset took one tracking fault; no more than the minor faults counted. */
	c->faults = pages < c->minflt ? pages : c->minflt;
	c->fault_cost = w->cost.fault_cost;
	c->fault_time = (double)c->faults * c->fault_cost;
	c->scan_time = t1 - t0;
	c->max_hold = w->cost.held ? w->cost.hold_now : c->scan_time;
	if (c->max_hold > c->max_hold_ever)
		c->max_hold_ever = c->max_hold;
	/*
	 * The scans, not the whole collect: reading the maps and sorting the result leave the
	 * process alone. A back end that reports no holds (a stop, a fork) counts whole.
	 */
	w->cost.share = share_of(c, w->cost.held ? w->cost.hold_sum : c->scan_time);
	c->overhead = w->cost.share > 1 ? 1 : w->cost.share;
	w->cost.t_last = t0;
	w->cost.t_end = t1;
	if (ok)
		w->cost.stat_last = *st;
	w->cost.stat_ok = ok;
	w->cost.hold_now = 0;
	w->cost.hold_sum = 0;
	w->cost.held = false;
	w->cost.have = true;
}

/* After a collect that started at @t0 and ended at @t1 and reported @pages pages written page by page. */
void pmi_watch_cost_collect(struct pm_watch *w, double t0, double t1, uint64_t pages)
{
	struct pmi_proc_stat st;

	pmi_watch_cost_account(w, t0, t1, pages, read_stat(w, &st) == 0 ? &st : NULL);
}

int pm_watch_cost(const struct pm_watch *w, struct pm_watch_cost *c)
{
	if (!w->cost.have)
		return -ENODATA;
	*c = w->cost.last;
	return 0;
}

double pm_watch_next_interval(struct pm_watch *w, double asked, double max_overhead)
{
	const struct pm_watch_cost *c = &w->cost.last;
	double want, share = w->cost.share;

	if (!w->cost.have || !(max_overhead > 0) || !(asked > 0) || !(c->interval > 0))
		return w->cost.planned = asked;
	/*
	 * A process that keeps writing the same pages takes the same faults in a longer
	 * interval, and a collect costs the same: the share falls as the interval grows, and
	 * the interval that puts it at AIM of the budget is the last one times share / aim.
	 * Within the budget the interval stays as it was planned (the last actual one runs
	 * longer by the wake-up, the listing before the collect and pm_watch_next_wait's rule:
	 * kept, it would grow collect after collect at an unchanged cost), unless the share fell
	 * below NARROW of it (the process went quiet): then it narrows by the same proportion,
	 * to AIM, not below asked.
	 */
	want = c->interval * share / (max_overhead * AIM);
	if (share <= max_overhead && share >= max_overhead * NARROW)
		want = w->cost.planned > 0 ? w->cost.planned : c->interval;	/* within budget, not quiet: as planned */
	if (want > c->interval * WIDEN_STEP)
		want = c->interval * WIDEN_STEP;
	if (want > asked * WIDEN_MAX)
		want = asked * WIDEN_MAX;
	return w->cost.planned = want > asked ? want : asked;
}

double pm_watch_next_wait(const struct pm_watch *w, double next)
{
	double now = pmi_now(), due;

	if (!(next > 0))
		return 0;
	if (!w->cost.have)
		return next;
	/* Due @next after the last collect started, but the process has GIVE of it after that collect ended. */
	due = w->cost.t_last + next;
	if (due < w->cost.t_end + GIVE * next)
		due = w->cost.t_end + GIVE * next;
	return due > now ? due - now : 0;
}

/* ---- calibration: one tracking fault against one plain write, in a throwaway child ---- */

/* CPU time of the calling thread: a loaded machine's preemption is not the fault's cost. */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Write one byte to each of the @n pages in a scattered order (as a process's writes come: no prefetch, TLB misses). */
static double write_pages(volatile char *p, size_t n, size_t psize, char v)
{
	double t0 = cpu_now();
	size_t i;

	for (i = 0; i < n; i++)
		p[(i * CAL_STRIDE % n) * psize] = v;
	return cpu_now() - t0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * The child: rounds of (arm as back end @o would, time the first writes, time the same
 * writes again); the median difference per page.
 */
static double calibrate_child(const struct pmi_watch_ops *o, size_t psize)
{
	size_t len = CAL_PAGES * psize;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	double d[CAL_ROUNDS];
	int i, state = -1;

	if (p == MAP_FAILED || !o->cal_arm)	/* a back end without cal_arm cannot be priced */
		return -1;
	madvise(p, len, MADV_NOHUGEPAGE);	/* a huge page would take one fault for 512 pages */
	write_pages(p, CAL_PAGES, psize, 1);
	for (i = 0; i < CAL_ROUNDS; i++) {
		double first, again;

		if (o->cal_arm(p, len, &state) < 0)
			return -1;
		first = write_pages(p, CAL_PAGES, psize, (char)(i + 2));
		again = write_pages(p, CAL_PAGES, psize, (char)(i + 3));
		d[i] = (first - again) / CAL_PAGES;
	}
	if (o->cal_end)
		o->cal_end(state);
	qsort(d, CAL_ROUNDS, sizeof(d[0]), cmp_double);
	return d[CAL_ROUNDS / 2] > 0 ? d[CAL_ROUNDS / 2] : 0;
}

int pm_watch_calibrate(struct pm_watch *w, double *fault_cost)
{
	int p[2], st, err = 0;
	double v = -1;
	ssize_t n;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(p[0]);
		close(p[1]);
		return err;
	}
	if (pid == 0) {
		v = calibrate_child(w->ops, (size_t)w->psize);
		_exit(write(p[1], &v, sizeof(v)) == sizeof(v) ? 0 : 1);
	}
	close(p[1]);
	while ((n = read(p[0], &v, sizeof(v))) < 0 && errno == EINTR)
		;
	close(p[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (n != sizeof(v) || v < 0)
		return -EIO;
	w->cost.fault_cost = v;
	if (fault_cost)
		*fault_cost = v;
	return 0;
}
