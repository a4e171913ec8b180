/* test_watch_cost.c - the write watch's cost: the /proc/PID/stat parser (real lines and hostile ones) and the interval choice (lib/watch_cost.c). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "../harness.h"
#include "watch.h"

/* A real line (6.18), a comm with spaces and parentheses, tpgid -1. */
static int stat_real(void)
{
	static const char line[] = "4242 (my (odd) prog) S 1 4242 4242 0 -1 4194560 12345 0 7 0 250 75 0 0 20 0 3 0 "
				   "100 1000000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
	struct pmi_proc_stat st;

	CHECK(pmi_proc_stat_parse(line, &st) == 0);
	CHECK_EQ_U64(st.minflt, 12345);
	CHECK_EQ_U64(st.cpu_ticks, 325);
	return T_PASS;
}

/* Cut short, no ')', letters where numbers go, an empty state: refused, never read past the end. */
static int stat_hostile(void)
{
	static const char *const bad[] = {
		"", "4242", "4242 (x", "4242 (x)", "4242 (x) ", "4242 (x) S", "4242 (x) S 1 2 3 4 5 6 7 8 9 10",
		"4242 (x) S 1 2 3 4 5 6 7 8 9 10 11", "4242 (x) S 1 2 3 4 5 6 7 x 9 10 11 12 13",
		"4242 (x) S 1 2 3 4 5 6 7 - 9 10 11 12 13", "4242 (x) S 1 2 3 4 5 6 7 8 9 10 99999999999999999999999 12",
		"(x)", ")", "4242 (x)\n",
	};
	struct pmi_proc_stat st = { 7, 7 };
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (pmi_proc_stat_parse(bad[i], &st) != -EINVAL) {
			printf("  accepted: \"%s\"\n", bad[i]);
			CHECK(0);
		}
	/* The last ')' counts: a comm that ends in ") S 1 ..." is not taken for the fields. */
	CHECK(pmi_proc_stat_parse("1 (a) S 1 2 3 4 5 6 7 8 9 10 11 12) S 1", &st) == -EINVAL);
	return T_PASS;
}

/* A handle with an estimate set by hand: share @share of an interval of @interval seconds. */
static void fake(struct pm_watch *w, double interval, double share)
{
	memset(w, 0, sizeof(*w));
	w->cost.have = true;
	w->cost.share = share;
	w->cost.last.interval = interval;
	w->cost.last.overhead = share > 1 ? 1 : share;
}

static bool near(double a, double b)
{
	return a > b - 1e-9 && a < b + 1e-9;
}

/* Within budget: as asked; over it: wider in proportion, at most 8x per step; back down when cheap. */
static int next_interval(void)
{
	struct pm_watch w;

	memset(&w, 0, sizeof(w));
	CHECK(near(pm_watch_next_interval(&w, 1, 0.1), 1));		/* no collect yet */
	fake(&w, 1, 0.05);
	CHECK(near(pm_watch_next_interval(&w, 1, 0.1), 1));		/* within: never narrower than asked */
	CHECK(near(pm_watch_next_interval(&w, 1, 0), 1));		/* no budget */
	fake(&w, 1, 0.4);
	CHECK(near(pm_watch_next_interval(&w, 1, 0.1), 5));		/* 0.4 / (0.1 * 0.8) */
	fake(&w, 1, 3.0);
	CHECK(near(pm_watch_next_interval(&w, 1, 0.1), 8));		/* one step at most */
	fake(&w, 8, 3.0);
	CHECK(near(pm_watch_next_interval(&w, 1, 0.1), 64));
	fake(&w, 64, 0.01);
	CHECK(near(pm_watch_next_interval(&w, 1, 0.1), 8));		/* cheap now: narrower, 64 * 0.01 / 0.08 */
	fake(&w, 8, 0.001);
	CHECK(near(pm_watch_next_interval(&w, 1, 0.1), 1));		/* and back to the asked one */
	fake(&w, 900, 5.0);
	CHECK(near(pm_watch_next_interval(&w, 1, 0.1), 1000));	/* the runaway bound */
	return T_PASS;
}

T_MAIN(T(stat_real), T(stat_hostile), T(next_interval))
