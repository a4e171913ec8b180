/* account.c - per-process RSS, PSS, USS, swap and shared bytes: pagemap joined with kpagecount, or smaps_rollup. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "pages.h"
#include "account.h"
#include "smaps.h"

#ifndef ACCOUNT_BATCH	/* the fuzz build makes batches small: cheaper runs, more batch boundaries */
#define ACCOUNT_BATCH 16384	/* frames per pm_kpage_lookup: 512 KiB of pm_frame */
#endif

void pmi_pss_add(struct pmi_pss *p, uint64_t bytes, uint64_t count)
{
	if (count)
		p->sum += ((unsigned __int128)bytes << PMI_PSS_SHIFT) / count;
}

uint64_t pmi_pss_bytes(const struct pmi_pss *p)
{
	return (uint64_t)((p->sum + ((unsigned __int128)1 << (PMI_PSS_SHIFT - 1))) >> PMI_PSS_SHIFT);
}

const char *pm_account_source_name(enum pm_account_source source)
{
	switch (source) {
	case PM_ACCOUNT_PAGEMAP:
		return "pagemap";
	case PM_ACCOUNT_SMAPS_ROLLUP:
		return "smaps_rollup";
	case PM_ACCOUNT_SMAPS:
		return "smaps";
	default:
		return "none";
	}
}

/* ---- pagemap + kpagecount ---- */

struct acct {
	struct pm_kpage *k;
	struct pm_frame *fr;
	size_t n;
	uint64_t page_size;
	struct pmi_pss pss;
	struct pm_account *out;
	bool large;		/* a page of a large folio (THP, mTHP, large page cache) was counted */
	uint64_t map_start, map_end;	/* the mapping last asked whether it is hugetlb ... */
	int map_hugetlb;		/* ... 1 yes, 0 no, -1 not asked */
};

/* Look up the queued frames in one sorted pass and account each page as smaps would. */
static int acct_flush(struct acct *a)
{
	const uint64_t skip = (1ULL << PM_KPF_ZERO_PAGE) | (1ULL << PM_KPF_NOPAGE);
	const uint64_t large = (1ULL << PM_KPF_COMPOUND_HEAD) | (1ULL << PM_KPF_COMPOUND_TAIL);
	size_t i;
	int r = a->n ? pm_kpage_lookup(a->k, a->fr, a->n) : 0;

	for (i = 0; r == 0 && i < a->n; i++) {
		const struct pm_frame *f = &a->fr[i];

		/* hugetlb is outside smaps' Rss, reported apart as *_Hugetlb */
		if (f->flags & (1ULL << PM_KPF_HUGE)) {
			a->out->hugetlb += a->page_size;
			continue;
		}
		/* no struct page or the zero page: vm_normal_page() is NULL */
		if ((f->flags & skip) || f->count == 0)
			continue;
		a->large |= (f->flags & large) != 0;
		a->out->rss += a->page_size;
		if (f->count == 1)
			a->out->uss += a->page_size;
		else
			a->out->shared += a->page_size;
		pmi_pss_add(&a->pss, a->page_size, f->count);
	}
	a->n = 0;
	return r;
}

/*
 * Whether @run's mapping is hugetlb, by its first frame's flags (a hugetlb
 * mapping holds hugetlb pages only, and no other mapping holds any): one
 * lookup per mapping. 1, 0, or -errno.
 */
static int run_hugetlb(struct acct *a, const struct pm_run *run)
{
	struct pm_frame f = { .pfn = run->pfn };
	int r;

	if (run->map && a->map_hugetlb >= 0 && run->map->start == a->map_start && run->map->end == a->map_end)
		return a->map_hugetlb;
	r = pm_kpage_lookup(a->k, &f, 1);
	if (r < 0)
		return r;
	r = (f.flags & (1ULL << PM_KPF_HUGE)) != 0;
	if (run->map) {		/* else nothing to key the answer by: ask again next time */
		a->map_hugetlb = r;
		a->map_start = run->map->start;
		a->map_end = run->map->end;
	}
	return r;
}

/*
 * Pages the kernel marks mapped only here (bit 56: map count 1) need no
 * map count: each is whole in RSS, USS and PSS. Only hugetlb is told
 * apart, once per mapping. Returns 1 if accounted, 0 if not, -errno.
 */
static int acct_exclusive(struct acct *a, const struct pm_run *run)
{
	uint64_t bytes = run->end - run->start;
	int h;

	if (!(run->flags & PM_PAGE_EXCLUSIVE))
		return 0;
	h = run_hugetlb(a, run);
	if (h < 0)
		return h;
	if (h) {
		a->out->hugetlb += bytes;
		return 1;
	}
	a->out->rss += bytes;
	a->out->uss += bytes;
	pmi_pss_add(&a->pss, bytes, 1);
	return 1;
}

static int acct_run(struct acct *a, const struct pm_run *run)
{
	uint64_t va, pfn = run->pfn;
	int r;

	if (run->flags & PM_PAGE_SWAPPED) {
		a->out->swap += run->end - run->start;
		return 0;
	}
	if ((run->flags & (PM_PAGE_PRESENT | PM_PAGE_FRAME)) != (PM_PAGE_PRESENT | PM_PAGE_FRAME) ||
	    (run->flags & PM_PAGE_ZERO))
		return 0;
	r = acct_exclusive(a, run);
	if (r)
		return r < 0 ? r : 0;
	for (va = run->start; va < run->end; va += a->page_size) {
		if (a->n == ACCOUNT_BATCH && (r = acct_flush(a)) < 0)
			return r;
		a->fr[a->n++].pfn = pfn++;
	}
	return 0;
}

static int account_pagemap(struct pm_target *t, struct pm_kpage *k, struct pm_account *out)
{
	struct acct a = { k, malloc(ACCOUNT_BATCH * sizeof(struct pm_frame)), 0, 0, { 0 }, out, false, 0, 0, -1 };
	struct pm_walk *w = a.fr ? pm_walk_new(t, 0, UINT64_MAX, PM_WALK_ENTRIES) : NULL;
	const struct pm_run *run;
	unsigned files = pmi_kpage_selected(k);
	int r = w ? 0 : -errno;

	/* Map counts, and flags for hugetlb; not cgroups: each file read costs the kernel per frame. */
	pm_kpage_select(k, PM_KPAGE_BIT(PM_KPAGE_FLAGS) | PM_KPAGE_BIT(PM_KPAGE_COUNT));
	a.page_size = pm_ctx_features(t->ctx)->page_size;
	while (r == 0 && (r = pm_walk_next(w, &run)) == 0)
		r = acct_run(&a, run);
	if (r == 1)
		r = acct_flush(&a);
	pm_kpage_select(k, files);
	pm_walk_free(w);
	free(a.fr);
	out->pss = pmi_pss_bytes(&a.pss);
	out->source = PM_ACCOUNT_PAGEMAP;
	out->exact = true;
	out->estimate = a.large && pm_ctx_probe(t->ctx, PM_PROBE_MAPCOUNT)->page_mapcount == PM_NO;
	return r;
}

/* ---- smaps_rollup ---- */

/* Each field's first line in the rollup, whatever record it falls in (the header need not parse). */
static int rollup_add(void *arg, const struct pmi_smaps_rec *rec)
{
	struct pmi_smaps_rec *all = arg;
	int k;

	for (k = 0; k < PMI_SMAPS_NKEYS; k++)
		if ((rec->have & PMI_SMAPS_HAVE(k)) && !(all->have & PMI_SMAPS_HAVE(k))) {
			all->val[k] = rec->val[k];
			all->have |= PMI_SMAPS_HAVE(k);
		}
	return 0;
}

int pmi_account_from_smaps(struct pm_ctx *ctx, const struct pmi_smaps_rec *rec, struct pm_account *out)
{
	if ((rec->have & PMI_ACCOUNT_NEED) != PMI_ACCOUNT_NEED)
		return -EINVAL;
	/* Swap is absent without CONFIG_SWAP, the *_Hugetlb lines without CONFIG_HUGETLB_PAGE: 0 then */
	out->rss = rec->val[PMI_SMAPS_RSS];
	out->pss = rec->val[PMI_SMAPS_PSS];
	out->swap = rec->val[PMI_SMAPS_SWAP];
	out->uss = rec->val[PMI_SMAPS_PRIVATE_CLEAN] + rec->val[PMI_SMAPS_PRIVATE_DIRTY];
	out->shared = rec->val[PMI_SMAPS_SHARED_CLEAN] + rec->val[PMI_SMAPS_SHARED_DIRTY];
	out->hugetlb = rec->val[PMI_SMAPS_PRIVATE_HUGETLB] + rec->val[PMI_SMAPS_SHARED_HUGETLB];
	/* smaps averages large folios' map counts too, and its text cannot say whether there are any */
	out->estimate = pm_ctx_probe(ctx, PM_PROBE_MAPCOUNT)->page_mapcount == PM_NO;
	return 0;
}

int pmi_account_rollup(struct pm_ctx *ctx, pid_t pid, struct pm_account *out)
{
	struct pmi_smaps_rec all = { 0 };
	char path[4096], buf[8192];
	int r = pmi_pid_path(ctx, path, sizeof(path), pid, "smaps_rollup");

	if (r == 0)
		r = pmi_read_small_file(ctx, path, buf, sizeof(buf));
	if (r == 0)
		return -ESRCH;	/* no mm: a kernel thread, a zombie, or exited */
	if (r < 0)
		return r;
	r = pmi_smaps_parse_buf(buf, (size_t)r, rollup_add, &all);
	if (r < 0)
		return r;
	if ((r = pmi_account_from_smaps(ctx, &all, out)) < 0)
		return r;
	out->source = PM_ACCOUNT_SMAPS_ROLLUP;
	return 0;
}

int pm_account_process(struct pm_target *t, struct pm_kpage *k, struct pm_account *out)
{
	int r;

	memset(out, 0, sizeof(*out));
	if (k && pm_kpage_status(k, PM_KPAGE_COUNT) == 0 && pm_target_pfn_view(t) == PM_PFN_VISIBLE)
		r = account_pagemap(t, k, out);
	else
		r = pmi_account_rollup(t->ctx, t->pid, out);
	if (r < 0)
		memset(out, 0, sizeof(*out));
	return r;
}
