/* test_walk_cost.c - the hybrid walk's choice of reader per mapping (lib/pages/walk_cost.c) on synthetic costs, and which scan calls are timed at all: decisions, never times. */
#include <stdint.h>
#include <stdio.h>
#include "../harness.h"
#include "walk.h"

/* The 16 GiB one-in-16 heap as measured on 6.18: a region per present page makes the scan six times pread. */
static int sparse_heap(void)
{
	struct pmi_walk_costs c = {
		.scan_ns = 290000, .scan_pages = 8192, .call_ns = 3000,
		.pread_ns = 48000, .pread_pages = 8192, .sample_pages = 8192, .sample_reads = 8177,
	};
	double scan, pread;

	CHECK(pmi_walk_cost_choose(&c, &scan, &pread));
	CHECK(pread > 5.8 && pread < 5.9);
	CHECK(scan > 40 && scan < 41);	/* (290,000 - 3,000) / 8192 + all entries read at pread's cost */
	return T_PASS;
}

/* A sanitizer's shadow: terabytes reserved, nothing present; the scan skips it, pread would read every entry. */
static int empty_shadow(void)
{
	struct pmi_walk_costs c = {
		.scan_ns = 5000, .scan_pages = 8192, .call_ns = 3000,
		.pread_ns = 48000, .pread_pages = 8192, .sample_pages = 8192, .sample_reads = 0,
	};
	double scan, pread;

	CHECK(!pmi_walk_cost_choose(&c, &scan, &pread));
	CHECK(scan < 1);
	/* The call's own cost is not priced per page: a sample dearer than one call by little keeps the scan. */
	c.scan_ns = c.call_ns;
	CHECK(!pmi_walk_cost_choose(&c, &scan, &pread));
	c.scan_ns = c.call_ns - 1;	/* a call cheaper than the one-page call (the clock's grain) */
	CHECK(!pmi_walk_cost_choose(&c, &scan, &pread));
	return T_PASS;
}

/* Nearly empty: a few present regions cost their entries' reads; still far below reading every entry. */
static int nearly_empty(void)
{
	struct pmi_walk_costs c = {
		.scan_ns = 20000, .scan_pages = 8192, .call_ns = 3000,
		.pread_ns = 48000, .pread_pages = 8192, .sample_pages = 8192, .sample_reads = 512,
	};
	double scan, pread;

	CHECK(!pmi_walk_cost_choose(&c, &scan, &pread));
	return T_PASS;
}

/* Dense, every page present in one region: the scan reads every entry anyway, and walks the tables once more. */
static int dense(void)
{
	struct pmi_walk_costs c = {
		.scan_ns = 9000, .scan_pages = 8192, .call_ns = 3000,
		.pread_ns = 48000, .pread_pages = 8192, .sample_pages = 8192, .sample_reads = 8192,
	};
	double scan, pread;

	CHECK(pmi_walk_cost_choose(&c, &scan, &pread));
	return T_PASS;
}

/* No pread measured yet, or nothing sampled: never pread on no evidence, never a division by zero. */
static int no_figures(void)
{
	struct pmi_walk_costs c = { .scan_ns = 290000, .scan_pages = 8192, .call_ns = 3000, .sample_pages = 8192,
				    .sample_reads = 8192 };
	double scan, pread;

	CHECK(!pmi_walk_cost_choose(&c, &scan, &pread));
	c = (struct pmi_walk_costs){ .pread_ns = 48000, .pread_pages = 8192 };
	CHECK(!pmi_walk_cost_choose(&c, &scan, &pread));
	CHECK(scan == 0);
	return T_PASS;
}

/*
 * A bounded call that reports at most max_pages pages in vec_len regions sees a shorter rest whole: it is
 * not timed (a small process's mappings all are); one that may stop inside the mapping is.
 */
static int timed_calls(void)
{
	CHECK(!pmi_walk_call_may_sample(1, PROBE_PAGES, 1024));
	CHECK(!pmi_walk_call_may_sample(1023, PROBE_PAGES, 1024));
	CHECK(pmi_walk_call_may_sample(1024, PROBE_PAGES, 1024));	/* vec full exactly at the end: timed */
	CHECK(pmi_walk_call_may_sample(PROBE_PAGES, PROBE_PAGES, 1 << 20));
	CHECK(!pmi_walk_call_may_sample(PROBE_PAGES - 1, PROBE_PAGES, 1 << 20));
	CHECK(pmi_walk_call_may_sample(UINT64_MAX >> 12, PROBE_PAGES, 1024));
	CHECK(!pmi_walk_call_may_sample(0, PROBE_PAGES, 1024));
	return T_PASS;
}

T_MAIN(T(sparse_heap), T(empty_shadow), T(nearly_empty), T(dense), T(no_figures), T(timed_calls))
