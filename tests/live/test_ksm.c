/* test_ksm.c - KSM-merged pages as both back ends, smaps and pm_account see them; tests/live/ksm.sh starts ksmd and restores it. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <pagemap.h>
#include "../harness.h"
#include "layout.h"
#include "runs.h"
#include "smaps.h"

#define KSM_PAGES_DEFAULT	32
#define MERGE_TIMEOUT_S		20

static const enum pm_backend backends[2] = { PM_BACKEND_PREAD, PM_BACKEND_SCAN };
static const unsigned wflags[3] = { 0, PM_WALK_ENTRIES, PM_WALK_ENTRIES | PM_WALK_EACH };

static long read_long(const char *path)
{
	long v = -1;
	FILE *f = fopen(path, "re");

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* Pages of @pid mapped to KSM pages: /proc/PID/ksm_merging_pages (5.19+), else ksm_stat. */
static long merging_pages(pid_t pid)
{
	char path[64];
	long v;

	snprintf(path, sizeof(path), "/proc/%d/ksm_merging_pages", (int)pid);
	v = read_long(path);
	if (v < 0) {
		snprintf(path, sizeof(path), "/proc/%d/ksm_stat", (int)pid);
		v = proc_field_kb(path, "ksm_merging_pages");	/* a bare number, no "kB" */
	}
	return v;
}

static long wait_merged(pid_t pid, long want)
{
	struct timespec ts = { 0, 100 * 1000 * 1000 };
	long v = 0;
	int i;

	for (i = 0; i < MERGE_TIMEOUT_S * 10; i++) {
		v = merging_pages(pid);
		if (v < 0 || v >= want)
			break;
		nanosleep(&ts, NULL);
	}
	return v;
}

/* Page i of region A and page i of region B are one KSM page: same PFN (one run per page, frames visible). */
static uint64_t pfn_mismatches(const struct runs *r, const struct layout *l)
{
	const struct lay_region *a = &l->r[LR_KSM_A], *b = &l->r[LR_KSM_B];
	uint64_t bad = 0, off;
	size_t i, j;

	for (off = 0; off < a->end - a->start; off += l->page_size) {
		uint64_t pa = 0, pb = 0;
		for (i = 0; i < r->n; i++)
			if (r->v[i].start == a->start + off)
				pa = r->v[i].pfn;
		for (j = 0; j < r->n; j++)
			if (r->v[j].start == b->start + off)
				pb = r->v[j].pfn;
		bad += !pa || pa != pb;
	}
	return bad;
}

static void check_walk(const struct runs *r, const struct layout *l, const struct pm_features *f)
{
	int k;

	CHECK_EQ_U64(runs_check_shape(r, l->page_size), 0);
	CHECK_EQ_U64(runs_vs_smaps(r, l->pid), 0);
	for (k = LR_KSM_A; k <= LR_KSM_B; k++) {
		const struct lay_region *g = &l->r[k];
		struct pm_usage u = runs_usage(r, g->start, g->end);
		uint64_t n = g->end - g->start;

		CHECK_EQ_U64(u.present, n);
		CHECK_EQ_U64(u.file, 0);
		CHECK_EQ_U64(u.swapped, 0);
		if (r->known & PM_PAGE_EXCLUSIVE)
			CHECK_EQ_U64(u.exclusive, 0);	/* each KSM page is mapped twice */
		if (r->known & PM_PAGE_ZERO)
			CHECK_EQ_U64(u.zero, 0);
	}
	if ((r->wflags & PM_WALK_EACH) && (r->known & PM_PAGE_FRAME) && f->pfn_view == PM_PFN_VISIBLE)
		CHECK_EQ_U64(pfn_mismatches(r, l), 0);
	/* The anonymous region beside them is not mergeable: still exclusive. */
	if (r->known & PM_PAGE_EXCLUSIVE)
		CHECK_EQ_U64(runs_usage(r, l->r[LR_ANON].start, l->r[LR_ANON].end).exclusive,
			     l->r[LR_ANON].end - l->r[LR_ANON].start);
}

static long long rollup_of(pid_t pid, const char *field)
{
	char path[64];
	long long v;

	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	v = proc_field_kb(path, field);
	return v < 0 ? -1 : v * 1024;
}

static bool near(uint64_t a, long long b)
{
	return b >= 0 && (a > (uint64_t)b ? a - (uint64_t)b : (uint64_t)b - a) <= 4096;	/* rollup is in kB */
}

/*
 * KSM-merged pages are shared pages: page i of region A and page i of B are
 * one KSM page mapped twice (map count 2, KPF_KSM), so the two regions add
 * 2 * n pages to SHARED, none to USS and n pages to PSS; every figure agrees
 * with smaps_rollup within 4 KiB.
 */
static void check_account(struct pm_ctx *ctx, struct pm_target *t, const struct layout *l, unsigned n)
{
	const struct lay_region *a = &l->r[LR_KSM_A];
	struct pm_kpage *k = pm_kpage_open(ctx);	/* NULL for non-root: smaps_rollup */
	long long rss, pss, uss, sh, v[4];
	struct pm_frame fr[64];
	struct pm_account acc;
	int r, tries = 0;
	uint64_t off;
	size_t i;

	/* other processes starting or exiting change shared library pages' counts: read until the rollup holds still */
	do {
		v[0] = rollup_of(l->pid, "Rss");
		v[1] = rollup_of(l->pid, "Pss");
		v[2] = rollup_of(l->pid, "Private_Clean") + rollup_of(l->pid, "Private_Dirty");
		v[3] = rollup_of(l->pid, "Shared_Clean") + rollup_of(l->pid, "Shared_Dirty");
		r = pm_account_process(t, k, &acc);
		rss = rollup_of(l->pid, "Rss");
		pss = rollup_of(l->pid, "Pss");
		uss = rollup_of(l->pid, "Private_Clean") + rollup_of(l->pid, "Private_Dirty");
		sh = rollup_of(l->pid, "Shared_Clean") + rollup_of(l->pid, "Shared_Dirty");
	} while (++tries < 10 && (v[0] != rss || v[1] != pss || v[2] != uss || v[3] != sh));
	CHECK_EQ_U64(r, 0);
	printf("  ksm (%s): rss %llu/%lld pss %llu/%lld uss %llu/%lld shared %llu/%lld (pm_account/smaps_rollup)\n",
	       pm_account_source_name(acc.source), (unsigned long long)acc.rss, rss, (unsigned long long)acc.pss, pss,
	       (unsigned long long)acc.uss, uss, (unsigned long long)acc.shared, sh);
	CHECK(near(acc.rss, rss));
	CHECK(near(acc.pss, pss));
	CHECK(near(acc.uss, uss));
	CHECK(near(acc.shared, sh));
	CHECK(acc.shared >= 2ULL * n * l->page_size);
	if (acc.source != PM_ACCOUNT_PAGEMAP) {
		pm_kpage_close(k);
		return;
	}
	/* the frames behind region A, looked up by PFN (pagemap shows them to root) */
	for (off = 0; off < a->end - a->start; off += 64 * l->page_size) {
		size_t m = 0;
		struct pm_walk *w = pm_walk_new(t, a->start + off, a->start + off + 64 * l->page_size, PM_WALK_ENTRIES);
		const struct pm_run *run;
		uint64_t va;

		CHECK(w != NULL);
		while (w && pm_walk_next(w, &run) == 0)
			for (va = run->start; va < run->end && va < a->end && m < 64; va += l->page_size)
				if (run->flags & PM_PAGE_PRESENT)
					fr[m++].pfn = run->pfn + (va - run->start) / l->page_size;
		pm_walk_free(w);
		CHECK_EQ_U64(pm_kpage_lookup(k, fr, m), 0);
		for (i = 0; i < m; i++) {
			CHECK_EQ_U64(fr[i].count, 2);
			CHECK(fr[i].flags & (1ULL << 21));	/* KPF_KSM */
		}
	}
	pm_kpage_close(k);
}

static int ksm_merge(void)
{
	struct layout_opts o = { .anon_pages = 8 };
	const char *n = getenv("PAGEMAP_TEST_KSM_PAGES");
	const struct pm_features *f;
	struct runs rs[2][3];
	struct pm_ctx *ctx;
	struct pm_target *t;
	struct layout l;
	struct smaps s;
	long merged;
	int b, k, r;

	if (!getenv("PAGEMAP_KSM_READY"))
		return t_skip("run through tests/live/ksm.sh, which starts ksmd and restores its settings");
	if (read_long("/sys/kernel/mm/ksm/run") != 1)
		return t_skip("ksmd is not running (/sys/kernel/mm/ksm/run is not 1)");
	o.ksm_pages = n && *n ? (unsigned)strtoul(n, NULL, 0) : KSM_PAGES_DEFAULT;
	ctx = pm_ctx_new(NULL);
	f = ctx ? pm_ctx_features(ctx) : NULL;
	if (!f)
		return T_FAIL;
	r = layout_start(&o, &l);
	if (r < 0) {
		printf("  layout: %s\n", strerror(-r));
		pm_ctx_free(ctx);
		return T_FAIL;
	}
	if (l.r[LR_KSM_A].error) {
		r = l.r[LR_KSM_A].error;
		layout_stop(&l);
		pm_ctx_free(ctx);
		return t_skip("MADV_MERGEABLE: %s (no CONFIG_KSM?)", strerror(r));
	}
	merged = wait_merged(l.pid, 2L * o.ksm_pages);
	printf("  %ld of %u pages merged\n", merged, 2 * o.ksm_pages);
	/* How fast ksmd gets there is the kernel's business (and the machine's load): not a failure of ours. */
	if (merged < 2L * o.ksm_pages) {
		layout_stop(&l);
		pm_ctx_free(ctx);
		if (merged < 0)
			return t_skip("neither /proc/PID/ksm_merging_pages nor ksm_stat (Linux 5.19+): cannot tell when ksmd merged");
		return t_skip("ksmd merged %ld of %u pages within %d s (slow ksmd or a loaded machine)", merged,
			      2 * o.ksm_pages, MERGE_TIMEOUT_S);
	}
	t = pm_target_open(ctx, l.pid);
	CHECK(t != NULL);
	memset(rs, 0, sizeof(rs));
	for (b = 0; t && b < 2; b++) {
		for (k = 0; k < 3; k++) {
			if (backends[b] == PM_BACKEND_SCAN && !kernel_has_scan())
				continue;
			CHECK_EQ_U64(-runs_collect_all(t, ctx, backends[b], wflags[k], &rs[b][k]), 0);
			check_walk(&rs[b][k], &l, f);
		}
	}
	if (t && kernel_has_scan())
		for (k = 0; k < 3; k++)
			CHECK_EQ_U64(runs_compare(&rs[0][k], &rs[1][k]), 0);
	if (t)
		check_account(ctx, t, &l, o.ksm_pages);
	/* smaps' own KSM count over the mappings holding the two regions (they may be one merged VMA); 6.6+. */
	if (kernel_at_least(6, 6) && smaps_read(l.pid, &s) == 0) {
		uint64_t ksm = 0;
		size_t i;
		for (i = 0; i < s.n; i++)
			for (k = LR_KSM_A; k <= LR_KSM_B; k++)
				if (s.v[i].start <= l.r[k].start && l.r[k].end <= s.v[i].end &&
				    (k == LR_KSM_A || !(s.v[i].start <= l.r[LR_KSM_A].start &&
							l.r[LR_KSM_A].end <= s.v[i].end)))
					ksm += s.v[i].ksm;
		CHECK_EQ_U64(ksm, 2ULL * o.ksm_pages * l.page_size);
		smaps_free(&s);
	}
	for (b = 0; b < 2; b++)
		for (k = 0; k < 3; k++)
			runs_free(&rs[b][k]);
	pm_target_close(t);
	layout_stop(&l);
	pm_ctx_free(ctx);
	return T_PASS;
}

T_MAIN(T(ksm_merge))
