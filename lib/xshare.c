/* xshare.c - what groups of processes share with each other: frames mapped by more than one group, by PFN. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

/* One shared page of one group: its frame. Sorted by pfn, then group, at the end. */
struct xs_entry {
	uint64_t pfn;
	uint32_t group;
};

struct pm_xshare {
	struct xs_entry *e;
	size_t n, cap;
	uint64_t page_size;
};

struct pm_xshare *pm_xshare_new(struct pm_ctx *ctx)
{
	struct pm_xshare *x = calloc(1, sizeof(*x));

	if (x)
		x->page_size = pm_ctx_features(ctx)->page_size;
	return x;
}

void pm_xshare_free(struct pm_xshare *x)
{
	if (!x)
		return;
	free(x->e);
	free(x);
}

int pm_xshare_add_pfn(struct pm_xshare *x, uint64_t pfn, uint32_t group)
{
	struct xs_entry *e;
	size_t cap;

	if (x->n == x->cap) {
		cap = x->cap ? 2 * x->cap : 4096;
		if (!(e = realloc(x->e, cap * sizeof(*e))))
			return -ENOMEM;
		x->e = e;
		x->cap = cap;
	}
	x->e[x->n++] = (struct xs_entry){ pfn, group };
	return 0;
}

/* The frames of @run's present pages that another process may map too (not exclusive, not the zero page). */
static int add_run(struct pm_xshare *x, const struct pm_run *run, uint32_t group)
{
	const uint32_t want = PM_PAGE_PRESENT | PM_PAGE_FRAME;
	uint64_t i, n = (run->end - run->start) / x->page_size;
	int r = 0;

	if ((run->flags & want) != want || (run->flags & (PM_PAGE_EXCLUSIVE | PM_PAGE_ZERO)))
		return 0;
	for (i = 0; r == 0 && i < n; i++)
		r = pm_xshare_add_pfn(x, run->pfn + i, group);
	return r;
}

int pm_xshare_add(struct pm_xshare *x, struct pm_target *t, uint32_t group)
{
	struct pm_walk *w;
	const struct pm_run *run;
	int r;

	if (pm_target_pfn_view(t) != PM_PFN_VISIBLE)
		return -EPERM;
	if (!(w = pm_walk_new(t, 0, UINT64_MAX, PM_WALK_ENTRIES)))
		return -errno;
	while ((r = pm_walk_next(w, &run)) == 0)
		if ((r = add_run(x, run, group)) < 0)
			break;
	pm_walk_free(w);
	return r < 0 ? r : 0;
}

static int by_pfn(const void *a, const void *b)
{
	const struct xs_entry *x = a, *y = b;

	if (x->pfn != y->pfn)
		return x->pfn < y->pfn ? -1 : 1;
	return (x->group > y->group) - (x->group < y->group);
}

int pm_xshare_finish(struct pm_xshare *x, uint64_t *bytes, size_t ngroups)
{
	size_t i, j, k;

	if (x->n)	/* qsort of a NULL array is undefined even for 0 elements */
		qsort(x->e, x->n, sizeof(*x->e), by_pfn);
	for (i = 0; i < x->n; i = j) {
		for (j = i + 1; j < x->n && x->e[j].pfn == x->e[i].pfn; j++)
			;
		/* Sorted by group within a frame: more than one group when the first and last differ. */
		if (x->e[i].group == x->e[j - 1].group)
			continue;
		for (k = i; k < j; k++) {
			if (k > i && x->e[k].group == x->e[k - 1].group)
				continue;	/* the group's other mapping of this frame */
			if (x->e[k].group >= ngroups)
				return -EINVAL;
			bytes[x->e[k].group] += x->page_size;
		}
	}
	return 0;
}
