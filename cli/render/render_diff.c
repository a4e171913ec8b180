/* render_diff.c - pagemap render --diff: two views of one process walked in lockstep, each page under its change. */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
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

/* The changed stretches, as pm_diff_pieces reports them (mappings matched as `pagemap diff` matches them). */
struct change {
	uint64_t start, end;
	unsigned state;
};

struct changes {
	struct change *v;
	size_t n, cap, at;	/* at: the lockstep's cursor */
	unsigned unmatched;	/* mappings in one view only: their pages count nowhere */
};

/* The state a picture gives a change: the first of diff --pages' CHANGE words (uffd_wp alone has no colour). */
static unsigned diff_state(const struct pm_diff_bytes *b)
{
	switch (diff_change_first(b)) {
	case DC_APPEARED: return RD_APPEARED;
	case DC_FREED: return RD_FREED;
	case DC_SWAPOUT:
	case DC_SWAPIN: return RD_SWAPPED;
	case DC_WRITTEN: return RD_WRITTEN;
	case DC_NEW_FRAME: return RD_MOVED;
	case DC_THP_FORMED:
	case DC_THP_SPLIT: return RD_HUGE;
	default: return RD_SAME;
	}
}

static int on_change(void *data, const struct pm_diff_piece *p)
{
	struct changes *c = data;
	unsigned st = diff_state(&p->bytes);
	struct change *more;

	if (st == RD_SAME)
		return 0;
	if (c->n && c->v[c->n - 1].end == p->start && c->v[c->n - 1].state == st) {
		c->v[c->n - 1].end = p->end;
		return 0;
	}
	if (c->n == c->cap) {
		if (!(more = realloc(c->v, (c->cap ? 2 * c->cap : 256) * sizeof(*more))))
			return -ENOMEM;
		c->v = more;
		c->cap = c->cap ? 2 * c->cap : 256;
	}
	c->v[c->n++] = (struct change){ p->start, p->end, st };
	return 0;
}

static int on_row(void *data, const struct pm_diff_row *row)
{
	struct changes *c = data;

	if (row->status != PM_DIFF_MATCHED)
		c->unmatched++;
	return 0;
}

/* Add [@s, @e) drawn with B's @flags, split where the library's changes begin and end. */
static void add_split(struct rnd_model *m, struct changes *c, uint64_t s, uint64_t e, uint32_t flags)
{
	uint64_t upto;

	while (s < e) {
		while (c->at < c->n && c->v[c->at].end <= s)
			c->at++;
		if (c->at == c->n || c->v[c->at].start >= e) {
			rnd_add_piece(m, s, e, flags, RD_SAME);
			return;
		}
		if (c->v[c->at].start > s) {
			rnd_add_piece(m, s, c->v[c->at].start, flags, RD_SAME);
			s = c->v[c->at].start;
		}
		upto = c->v[c->at].end < e ? c->v[c->at].end : e;
		rnd_add_piece(m, s, upto, flags, c->v[c->at].state);
		s = upto;
	}
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* Both walks in address order: each stretch where neither run changes is drawn with B's flags (A's where B has none). */
static int lockstep(struct rnd_model *m, struct side *a, struct side *b, struct changes *c)
{
	uint64_t cur = 0;

	advance(a);
	advance(b);
	while (a->have || b->have) {
		uint64_t sa = a->have ? (a->r.start > cur ? a->r.start : cur) : UINT64_MAX;
		uint64_t sb = b->have ? (b->r.start > cur ? b->r.start : cur) : UINT64_MAX;
		uint64_t s = min64(sa, sb), e = UINT64_MAX;
		bool ina = a->have && sa == s, inb = b->have && sb == s;

		e = ina ? min64(e, a->r.end) : a->have ? min64(e, sa) : e;
		e = inb ? min64(e, b->r.end) : b->have ? min64(e, sb) : e;
		add_split(m, c, s, e, inb ? b->r.flags : 0);
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

/*
 * The pages' changes are the library's (pm_diff_pieces, as `pagemap diff
 * --pages` lists them); the walks in lockstep only give each stretch B's
 * flags for the class bytes. Pages of a mapping in one view only count
 * nowhere, as in `pagemap diff`: the note says so.
 */
int rnd_diff_fill(struct rnd_model *m, struct pm_target *a, struct pm_target *b, const struct rnd_layout *lay)
{
	struct side sa = { 0 }, sb = { 0 };
	struct pm_target *const views[2] = { a, b };
	struct changes c = { 0 };
	int rc;

	m->states = rnd_diff_states;
	if (!m->nmaps && (rc = rnd_axis_union(m, views, 2)) < 0)
		return rc;
	if ((rc = rnd_layout(m, lay)) < 0)
		return rc;
	if ((rc = pm_diff_pieces(a, b, on_row, on_change, &c)) < 0)
		goto out;
	if (c.unmatched)
		snprintf(m->note, sizeof(m->note), "%u mapping%s in one snapshot only: %s pages count nowhere",
			 c.unmatched, c.unmatched == 1 ? "" : "s", c.unmatched == 1 ? "its" : "their");
	if (!(sa.w = pm_walk_new(a, 0, UINT64_MAX, PM_WALK_ENTRIES)) || !(sb.w = pm_walk_new(b, 0, UINT64_MAX, PM_WALK_ENTRIES))) {
		rc = -errno;
		goto out;
	}
	m->known = pm_walk_known(sb.w);
	rc = lockstep(m, &sa, &sb, &c);
out:
	pm_walk_free(sa.w);
	pm_walk_free(sb.w);
	free(c.v);
	return rc;
}
