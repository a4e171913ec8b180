/* share_groups.c - what groups of processes share with each other: frames mapped by more than one group, by PFN. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "share.h"

/*
 * The frames are kept as runs of contiguous frames of one group in the store
 * pm_share uses (lib/analysis/share_store.c): 16 bytes a run, past 4 MiB spilled in
 * sorted chunks to an unlinked file and merged back, so memory stays bounded
 * however many processes a fleet has (a page each was 16 bytes, 1 GiB of
 * records for 256 GiB of shared memory).
 */
#define XSHARE_MEM_RECS	262144

struct pm_xshare {
	struct share_store st;
	uint64_t page_size;
};

struct pm_xshare *pm_xshare_new(struct pm_ctx *ctx)
{
	struct pm_xshare *x = calloc(1, sizeof(*x));

	if (!x)
		return NULL;
	x->page_size = pm_ctx_features(ctx)->page_size;
	pmi_store_init(&x->st, XSHARE_MEM_RECS);
	return x;
}

void pm_xshare_free(struct pm_xshare *x)
{
	if (!x)
		return;
	pmi_store_free(&x->st);
	free(x);
}

int pm_xshare_add_pfn(struct pm_xshare *x, uint64_t pfn, uint32_t group)
{
	return pmi_store_push(&x->st, pfn, 1, group);
}

/* The frames of @run's present pages that another process may map too (not exclusive, not the zero page). */
static int add_run(struct pm_xshare *x, const struct pm_run *run, uint32_t group)
{
	const uint32_t want = PM_PAGE_PRESENT | PM_PAGE_FRAME;

	if ((run->flags & want) != want || (run->flags & (PM_PAGE_EXCLUSIVE | PM_PAGE_ZERO)))
		return 0;
	return pmi_store_push(&x->st, run->pfn, (run->end - run->start) / x->page_size, group);
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

/*
 * The sweep over the frame space. @shared counts the frames passed so far
 * that two or more groups mapped; a group notes it when it starts covering
 * frames and takes the difference when it stops, so each group gets the
 * shared frames it covered without a pass over every group per frame.
 */
struct xs_end {
	uint64_t end;		/* first frame past a run */
	uint32_t group;
};

struct xs_sweep {
	struct xs_end *heap;	/* the runs covering the position, by end: a binary min-heap */
	size_t n, cap;
	uint32_t *cover;	/* per group: runs covering the position */
	uint64_t *mark;		/* per group: @shared when it started covering */
	uint64_t *bytes, page_size;
	size_t groups;		/* groups covering the position */
	uint64_t pos, shared;
};

static void advance(struct xs_sweep *s, uint64_t to)
{
	if (s->groups >= 2)
		s->shared += to - s->pos;
	s->pos = to;
}

static void heap_down(struct xs_sweep *s, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		struct xs_end t;

		if (l < s->n && s->heap[l].end < s->heap[m].end)
			m = l;
		if (l + 1 < s->n && s->heap[l + 1].end < s->heap[m].end)
			m = l + 1;
		if (m == i)
			return;
		t = s->heap[i];
		s->heap[i] = s->heap[m];
		s->heap[m] = t;
		i = m;
	}
}

static int start_run(struct xs_sweep *s, const struct share_rec *r)
{
	size_t i;

	if (s->n == s->cap && pmi_grow(&s->heap, &s->cap, s->n + 1, sizeof(*s->heap)) < 0)
		return -ENOMEM;
	advance(s, r->key);
	if (s->cover[r->map]++ == 0) {
		s->groups++;
		s->mark[r->map] = s->shared;
	}
	for (i = s->n++; i && s->heap[(i - 1) / 2].end > r->key + r->len; i = (i - 1) / 2)
		s->heap[i] = s->heap[(i - 1) / 2];
	s->heap[i] = (struct xs_end){ r->key + r->len, r->map };
	return 0;
}

/* End every run that ends at or before @to. */
static void end_runs(struct xs_sweep *s, uint64_t to)
{
	while (s->n && s->heap[0].end <= to) {
		uint32_t g = s->heap[0].group;

		advance(s, s->heap[0].end);
		if (--s->cover[g] == 0) {
			s->groups--;
			s->bytes[g] += (s->shared - s->mark[g]) * s->page_size;
		}
		s->heap[0] = s->heap[--s->n];
		heap_down(s, 0);
	}
}

int pm_xshare_finish(struct pm_xshare *x, uint64_t *bytes, size_t ngroups)
{
	struct xs_sweep s = { .bytes = bytes, .page_size = x->page_size };
	struct share_rec r;
	int rc;

	s.cover = calloc(ngroups ? ngroups : 1, sizeof(*s.cover));
	s.mark = calloc(ngroups ? ngroups : 1, sizeof(*s.mark));
	rc = !s.cover || !s.mark ? -ENOMEM : pmi_store_rewind(&x->st);
	while (rc == 0 && (rc = pmi_store_next(&x->st, &r)) == 0) {
		if (r.map >= ngroups) {
			rc = -EINVAL;
			break;
		}
		end_runs(&s, r.key);
		rc = start_run(&s, &r);
	}
	if (rc == 1) {
		end_runs(&s, UINT64_MAX);
		rc = 0;
	}
	free(s.heap);
	free(s.cover);
	free(s.mark);
	pmi_store_free(&x->st);	/* counted: the set starts again empty */
	return rc;
}
