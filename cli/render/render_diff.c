/* render_diff.c - pagemap render --diff: two views of one process walked in lockstep, each page under its change. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "render.h"

/* One side's walk and its current run (copied: the walker's is borrowed until its next call). */
struct side {
	struct pm_walk *w;
	struct pm_run r;
	bool have;
	int rc;
};

static void advance(struct side *s)
{
	const struct pm_run *r;

	s->rc = pm_walk_next(s->w, &r);
	s->have = s->rc == 0;
	if (s->have)
		s->r = *r;
}

/* The frame of the page at @addr of run @r (a small zero-page run has one frame for all). */
static uint64_t frame_at(const struct pm_run *r, uint64_t addr, uint64_t psize)
{
	if ((r->flags & PM_PAGE_ZERO) && !(r->flags & PM_PAGE_THP))
		return r->pfn;
	return r->pfn + (addr - r->start) / psize;
}

/* The change of a piece, as pm_diff_range counts it: one category per page. */
static unsigned classify(const struct pm_run *a, const struct pm_run *b, uint64_t addr, uint64_t psize)
{
	uint32_t fa = a ? a->flags : 0, fb = b ? b->flags : 0;
	bool ha = fa & (PM_PAGE_PRESENT | PM_PAGE_SWAPPED), hb = fb & (PM_PAGE_PRESENT | PM_PAGE_SWAPPED);
	bool frames = (fa & fb & PM_PAGE_FRAME) != 0;

	if (!ha && hb)
		return RD_APPEARED;
	if (ha && !hb)
		return RD_FREED;
	if (!ha)
		return RD_SAME;
	if ((fa ^ fb) & PM_PAGE_SWAPPED)
		return RD_SWAPPED;
	if (!(fa & PM_PAGE_PRESENT))
		return RD_SAME;	/* swapped in both */
	if (((fa & PM_PAGE_ZERO) && !(fb & PM_PAGE_ZERO)) || ((fb & PM_PAGE_EXCLUSIVE) && !(fa & PM_PAGE_EXCLUSIVE)) ||
	    ((fb & PM_PAGE_SOFTDIRTY) && !(fa & PM_PAGE_SOFTDIRTY) &&
	     (!frames || frame_at(a, addr, psize) == frame_at(b, addr, psize))))
		return RD_WRITTEN;
	if (frames && frame_at(a, addr, psize) != frame_at(b, addr, psize))
		return RD_MOVED;
	if ((fa ^ fb) & PM_PAGE_THP)
		return RD_HUGE;
	return RD_SAME;
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* Both walks in address order: each stretch where neither run changes is one piece. */
static int lockstep(struct rnd_model *m, struct side *a, struct side *b)
{
	uint64_t cur = 0, ps = m->page_size;

	advance(a);
	advance(b);
	while (a->have || b->have) {
		uint64_t sa = a->have ? (a->r.start > cur ? a->r.start : cur) : UINT64_MAX;
		uint64_t sb = b->have ? (b->r.start > cur ? b->r.start : cur) : UINT64_MAX;
		uint64_t s = min64(sa, sb), e = UINT64_MAX;
		bool ina = a->have && sa == s, inb = b->have && sb == s;

		e = ina ? min64(e, a->r.end) : a->have ? min64(e, sa) : e;
		e = inb ? min64(e, b->r.end) : b->have ? min64(e, sb) : e;
		/* pages of one piece differ only in their frame numbers, which move in step (or not at all) */
		rnd_add_piece(m, s, e, inb ? b->r.flags : 0, classify(ina ? &a->r : NULL, inb ? &b->r : NULL, s, ps));
		cur = e;
		if (ina && e == a->r.end)
			advance(a);
		if (inb && e == b->r.end)
			advance(b);
	}
	return a->rc < 0 ? a->rc : b->rc < 0 ? b->rc : 0;
}

struct span {
	uint64_t start, end;
	char perms[5];
	char *name;
};

static int read_spans(struct pm_target *t, struct span **v, size_t *n, size_t *cap)
{
	struct pm_maps *it = pm_maps_open(t);
	const struct pm_mapping *mp;
	int rc;

	if (!it)
		return -errno;
	while ((rc = pm_maps_next(it, &mp)) == 0) {
		if (*n == *cap) {
			struct span *more = realloc(*v, (*cap ? 2 * *cap : 64) * sizeof(**v));

			if (!more) {
				rc = -ENOMEM;
				break;
			}
			*v = more;
			*cap = *cap ? 2 * *cap : 64;
		}
		(*v)[*n] = (struct span){ mp->start, mp->end, "", strndup(mp->path_len ? mp->path : "anon",
									     mp->path_len ? mp->path_len : 4) };
		memcpy((*v)[*n].perms, mp->perms, sizeof(mp->perms));
		if (!(*v)[(*n)++].name) {
			rc = -ENOMEM;
			break;
		}
	}
	pm_maps_close(it);
	return rc < 0 ? rc : 0;
}

static int cmp_span(const void *x, const void *y)
{
	const struct span *a = x, *b = y;

	return a->start < b->start ? -1 : a->start > b->start ? 1 : (a->end > b->end) - (a->end < b->end);
}

int rnd_axis_union(struct rnd_model *m, struct pm_target *const *t, size_t nt)
{
	struct span *v = NULL;
	size_t n = 0, cap = 0, i, j;
	int rc = 0;

	for (i = nt; rc == 0 && i-- > 0;)	/* the latest view's first: its names win among equals */
		rc = read_spans(t[i], &v, &n, &cap);
	if (rc == 0)
		qsort(v, n, sizeof(*v), cmp_span);
	for (i = 0; rc == 0 && i < n; i = j) {
		uint64_t end = v[i].end;

		for (j = i + 1; j < n && v[j].start < end; j++)
			end = v[j].end > end ? v[j].end : end;
		rc = rnd_add_map(m, v[i].start, end, v[i].perms, v[i].name, strlen(v[i].name));
		m->mapped += end - v[i].start;
	}
	for (i = 0; i < n; i++)
		free(v[i].name);
	free(v);
	return rc;
}

int rnd_diff_fill(struct rnd_model *m, struct pm_target *a, struct pm_target *b, const struct rnd_layout *lay)
{
	struct side sa = { 0 }, sb = { 0 };
	struct pm_target *const views[2] = { a, b };
	int rc;

	m->states = rnd_diff_states;
	if (!m->nmaps && (rc = rnd_axis_union(m, views, 2)) < 0)
		return rc;
	if ((rc = rnd_layout(m, lay)) < 0)
		return rc;
	if (!(sa.w = pm_walk_new(a, 0, UINT64_MAX, PM_WALK_ENTRIES)) || !(sb.w = pm_walk_new(b, 0, UINT64_MAX, PM_WALK_ENTRIES))) {
		rc = -errno;
		pm_walk_free(sa.w);
		return rc;
	}
	m->known = pm_walk_known(sb.w);
	rc = lockstep(m, &sa, &sb);
	pm_walk_free(sa.w);
	pm_walk_free(sb.w);
	return rc;
}
