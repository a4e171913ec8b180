/*
 * top_levels.c - what the terminal view's deeper levels read: one process's mappings with their
 * pages summed (the walk `maps` makes, so the figures are the same), and one mapping's pages as
 * cells of a map, each cell the state most of its pages have, with exact counts per state.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "top_screen.h"

void top_proc_free(struct top_proc *p)
{
	free(p->v);
	free(p->old);
	p->v = p->old = NULL;
	p->n = p->cap = p->nold = 0;
}

/* The same mapping in the frame before (by start and end), for its change. */
static const struct top_mapping *was(const struct top_proc *p, uint64_t start, uint64_t end)
{
	size_t lo = 0, hi = p->nold;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->old[mid].start == start && p->old[mid].end == end)
			return &p->old[mid];
		if (p->old[mid].start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int add_mapping(struct top_proc *p, const struct pm_mapping *m, const struct pm_usage *u, uint32_t known)
{
	struct top_mapping *e;
	const struct top_mapping *before;

	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 64;
		struct top_mapping *v = realloc(p->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->v = v;
		p->cap = cap;
	}
	e = &p->v[p->n++];
	memset(e, 0, sizeof(*e));
	e->start = m->start;
	e->end = m->end;
	memcpy(e->perms, m->perms, sizeof(e->perms));
	snprintf(e->path, sizeof(e->path), "%.*s", (int)(m->path_len < sizeof(e->path) ? m->path_len :
							sizeof(e->path) - 1), m->path ? m->path : "");
	e->u = *u;
	e->rss = pm_usage_rss(u, m);
	e->known = known;
	before = was(p, e->start, e->end);
	e->rss_change = before ? (int64_t)e->rss - (int64_t)before->rss : 0;
	return 0;
}

int top_proc_read(struct pm_ctx *ctx, struct top_proc *p)
{
	struct pm_target *t = pm_target_open(ctx, p->pid);
	struct pm_mapstat *it;
	const struct pm_mapping *m;
	const struct pm_usage *u;
	int r;

	if (!t)
		return -errno;
	/* Exclusive needs the entries (a pread beside the scan): root, or a process of one's own. */
	it = pm_mapstat_open(t, PM_WALK_ENTRIES);
	if (!it) {
		r = -errno;
		pm_target_close(t);
		return r;
	}
	free(p->old);	/* this frame's rows become the ones the next frame's changes are against */
	p->old = p->v, p->nold = p->n;
	p->v = NULL, p->n = p->cap = 0;
	while ((r = pm_mapstat_next(it, &m, &u)) == 0)
		if ((r = add_mapping(p, m, u, pm_mapstat_known(it))) < 0)
			break;
	pm_mapstat_close(it);
	pm_target_close(t);
	return r == 1 ? 0 : r;
}

/* A run's state in the map. */
static enum cell_state state_of(const struct pm_run *run, uint32_t known)
{
	uint32_t f = run->flags;

	if (f & PM_PAGE_GUARD)
		return CELL_GUARD;
	if (f & PM_PAGE_SWAPPED)
		return CELL_SWAP;
	if (!(f & PM_PAGE_PRESENT))
		return CELL_NONE;
	if (f & PM_PAGE_ZERO)
		return CELL_ZERO;
	if (f & PM_PAGE_THP)
		return CELL_THP;
	if (f & PM_PAGE_FILE)
		return CELL_FILE;
	if (!(known & PM_PAGE_EXCLUSIVE))
		return CELL_PRESENT;
	return f & PM_PAGE_EXCLUSIVE ? CELL_EXCL : CELL_SHARED;
}

/* Add @run's pages to the cells it covers (@tally: NCELL pages per cell) and to the exact counts. */
static void tally_run(struct top_pagemap *pm, uint64_t *tally, const struct pm_run *run, uint64_t page)
{
	enum cell_state s = state_of(run, pm->known);
	uint64_t first = (run->start - pm->start) / page, last = (run->end - pm->start) / page;	/* [first, last) */

	pm->count[s] += last - first;
	while (first < last) {
		uint64_t cell = first / pm->pages_per_cell, cell_end = (cell + 1) * pm->pages_per_cell;
		uint64_t n = (cell_end < last ? cell_end : last) - first;

		if (cell < pm->ncells)
			tally[cell * NCELL + s] += n;
		first += n;
	}
}

/* Each cell's state: the one most of its pages have (the first in enum order on a tie). */
static void settle_cells(struct top_pagemap *pm, const uint64_t *tally)
{
	size_t c;
	int s;

	for (c = 0; c < pm->ncells; c++) {
		int best = CELL_NONE;

		for (s = 1; s < NCELL; s++)
			if (tally[c * NCELL + s] > tally[c * NCELL + best])
				best = s;
		pm->cell[c] = (uint8_t)best;
	}
}

/* The written pages over the cells: a cell with one shows W; the count is exact, beside the states'. */
static void overlay_written(struct top_pagemap *pm, const struct pm_written *wr, size_t n, uint64_t page)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t s = wr[i].start > pm->start ? wr[i].start : pm->start;
		uint64_t e = wr[i].end < pm->end ? wr[i].end : pm->end;
		uint64_t p;

		if (e <= s)
			continue;
		pm->count[CELL_WRITTEN] += (e - s) / page;
		for (p = (s - pm->start) / page; p < (e - pm->start) / page; p = (p / pm->pages_per_cell + 1) *
									      pm->pages_per_cell)
			if (p / pm->pages_per_cell < pm->ncells)
				pm->cell[p / pm->pages_per_cell] = CELL_WRITTEN;
	}
}

int top_pagemap_read(struct pm_ctx *ctx, pid_t pid, uint64_t start, uint64_t end, size_t cells,
		     const struct pm_written *written, size_t nwritten, struct top_pagemap *pm)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), npages = (end - start) / page, *tally;
	struct pm_target *t = pm_target_open(ctx, pid);
	struct pm_walk *w;
	const struct pm_run *run;
	int r;

	if (!t)
		return -errno;
	free(pm->cell);
	memset(pm, 0, sizeof(*pm));
	pm->start = start, pm->end = end;
	pm->pages_per_cell = npages > cells && cells ? (npages + cells - 1) / cells : 1;
	pm->ncells = (size_t)((npages + pm->pages_per_cell - 1) / pm->pages_per_cell);
	pm->cell = calloc(pm->ncells + 1, 1);
	tally = calloc(pm->ncells + 1, NCELL * sizeof(*tally));
	w = pm->cell && tally ? pm_walk_new(t, start, end, PM_WALK_ENTRIES) : NULL;
	if (!w) {
		r = pm->cell && tally ? -errno : -ENOMEM;
		goto out;
	}
	pm->known = pm_walk_known(w);
	while ((r = pm_walk_next(w, &run)) == 0)
		tally_run(pm, tally, run, page);
	if (r == 1) {
		r = 0;
		settle_cells(pm, tally);
		overlay_written(pm, written, nwritten, page);
	}
	pm_walk_free(w);
out:
	free(tally);
	pm_target_close(t);
	return r;
}

void top_pagemap_free(struct top_pagemap *pm)
{
	free(pm->cell);
	memset(pm, 0, sizeof(*pm));
}
