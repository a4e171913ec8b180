/* account.c - per-process RSS, PSS, USS, swap and shared bytes: pagemap joined with kpagecount, or smaps_rollup. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

#ifndef ACCOUNT_BATCH	/* the fuzz build makes batches small: cheaper runs, more batch boundaries */
#define ACCOUNT_BATCH 16384	/* frames per pm_kpage_lookup: 512 KiB of pm_frame */
#endif

void pm_pss_add(struct pm_pss *p, uint64_t bytes, uint64_t count)
{
	if (count)
		p->sum += ((unsigned __int128)bytes << PM_PSS_SHIFT) / count;
}

uint64_t pm_pss_bytes(const struct pm_pss *p)
{
	return (uint64_t)((p->sum + ((unsigned __int128)1 << (PM_PSS_SHIFT - 1))) >> PM_PSS_SHIFT);
}

const char *pm_account_source_name(enum pm_account_source source)
{
	switch (source) {
	case PM_ACCOUNT_PAGEMAP:
		return "pagemap";
	case PM_ACCOUNT_SMAPS_ROLLUP:
		return "smaps_rollup";
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
	struct pm_pss pss;
	struct pm_account *out;
	bool large;		/* a page of a large folio (THP, mTHP, large page cache) was counted */
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
		pm_pss_add(&a->pss, a->page_size, f->count);
	}
	a->n = 0;
	return r;
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
	for (va = run->start; va < run->end; va += a->page_size) {
		if (a->n == ACCOUNT_BATCH && (r = acct_flush(a)) < 0)
			return r;
		a->fr[a->n++].pfn = pfn++;
	}
	return 0;
}

static int account_pagemap(struct pm_target *t, struct pm_kpage *k, struct pm_account *out)
{
	struct acct a = { k, malloc(ACCOUNT_BATCH * sizeof(struct pm_frame)), 0, 0, { 0 }, out, false };
	struct pm_walk *w = a.fr ? pm_walk_new(t, 0, UINT64_MAX, PM_WALK_ENTRIES) : NULL;
	const struct pm_run *run;
	unsigned files = pm_kpage_selected(k);
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
	out->pss = pm_pss_bytes(&a.pss);
	out->source = PM_ACCOUNT_PAGEMAP;
	out->exact = true;
	out->estimate = a.large && pm_ctx_probe(t->ctx, PM_PROBE_MAPCOUNT)->page_mapcount == PM_NO;
	return r;
}

/* ---- smaps_rollup ---- */

/* The kB value of "Name:" in @buf, in bytes; false if the line is absent. */
static bool rollup_field(const char *buf, const char *name, uint64_t *bytes)
{
	size_t n = strlen(name);
	const char *p;

	for (p = buf; (p = strstr(p, name)); p += n) {
		if ((p == buf || p[-1] == '\n') && p[n] == ':') {
			char *e;
			unsigned long long v = strtoull(p + n + 1, &e, 10);

			if (e == p + n + 1)
				return false;
			*bytes = (uint64_t)v * 1024;
			return true;
		}
	}
	return false;
}

static int account_rollup(struct pm_target *t, struct pm_account *out)
{
	uint64_t pc = 0, pd = 0, sc = 0, sd = 0, ph = 0, sh = 0;
	char path[4096], buf[8192];
	int r = pm_pid_path(t->ctx, path, sizeof(path), t->pid, "smaps_rollup");

	if (r == 0)
		r = pm_read_small_file(t->ctx, path, buf, sizeof(buf));
	if (r == 0)
		return -ESRCH;	/* no mm: a kernel thread, a zombie, or exited */
	if (r < 0)
		return r;
	if (!rollup_field(buf, "Rss", &out->rss) || !rollup_field(buf, "Pss", &out->pss) ||
	    !rollup_field(buf, "Private_Clean", &pc) || !rollup_field(buf, "Private_Dirty", &pd) ||
	    !rollup_field(buf, "Shared_Clean", &sc) || !rollup_field(buf, "Shared_Dirty", &sd))
		return -EINVAL;
	rollup_field(buf, "Swap", &out->swap);	/* absent without CONFIG_SWAP */
	rollup_field(buf, "Private_Hugetlb", &ph);	/* absent without CONFIG_HUGETLB_PAGE */
	rollup_field(buf, "Shared_Hugetlb", &sh);
	out->uss = pc + pd;
	out->shared = sc + sd;
	out->hugetlb = ph + sh;
	out->source = PM_ACCOUNT_SMAPS_ROLLUP;
	/* smaps averages large folios' map counts too, and the rollup cannot say whether there are any */
	out->estimate = pm_ctx_probe(t->ctx, PM_PROBE_MAPCOUNT)->page_mapcount == PM_NO;
	return 0;
}

int pm_account_process(struct pm_target *t, struct pm_kpage *k, struct pm_account *out)
{
	int r;

	memset(out, 0, sizeof(*out));
	if (k && pm_kpage_status(k, PM_KPAGE_COUNT) == 0 && pm_target_pfn_view(t) == PM_PFN_VISIBLE)
		r = account_pagemap(t, k, out);
	else
		r = account_rollup(t, out);
	if (r < 0)
		memset(out, 0, sizeof(*out));
	return r;
}
