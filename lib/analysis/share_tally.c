/* share_tally.c - pm_share's join: sweep the records in key order, cut the key space where the set of mappings changes, count each cut once. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "share.h"

#define POOL_FLUSH	65536		/* map and target indexes queued before a lookup is forced */

/* A record covering the sweep's position: keys up to @end (excluded) of mapping @map. */
struct act {
	uint64_t end;
	uint32_t map;
};

/* A stretch of frames queued for lookup: @n frames, @nrec records over each, maps and targets at @off in the pool. */
struct seg {
	uint64_t key;		/* first key (frames: also in the batch) */
	uint64_t n;
	size_t nrec;
	size_t off;		/* into pool: nm maps, then nt targets */
	uint32_t nm, nt;
};

/* Frames of one stretch by what they are; all share one set of mappings. */
struct counts {
	uint64_t res, out, huge, swap;
};

struct sweep {
	struct pm_share *s;
	pmi_share_lookup_fn fn;
	void *data;
	struct act *a;		/* records covering the position */
	size_t na, cap_a;
	bool changed;		/* a changed since the pool's last set */
	uint32_t *pool;		/* distinct maps and targets of queued stretches */
	size_t npool, cap_pool, last;	/* last: offset of the newest set */
	uint32_t last_nm, last_nt;
	struct pm_frame *fr;	/* the lookup batch */
	size_t nb;
	struct seg *segs;
	size_t nseg, cap_seg;
};

/* ---- pair table ---- */

static uint64_t pair_hash(uint32_t a, uint32_t b)
{
	uint64_t h = ((uint64_t)a << 32 | b) * 0x9e3779b97f4a7c15ULL;

	return h ^ (h >> 29);
}

static int pairtab_rehash(struct share_pairtab *t)
{
	size_t n = t->nslot ? 2 * t->nslot : 64, i;
	uint32_t *s = calloc(n, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (i = 0; i < t->n; i++) {
		size_t h = pair_hash(t->v[i].a, t->v[i].b) & (n - 1);
		while (s[h])
			h = (h + 1) & (n - 1);
		s[h] = (uint32_t)(i + 1);
	}
	free(t->slot);
	t->slot = s;
	t->nslot = n;
	return 0;
}

/* The pair (a, b), created zeroed if new; NULL on ENOMEM. */
static struct pm_share_pair *pairtab_get(struct share_pairtab *t, uint32_t a, uint32_t b)
{
	size_t h;

	if ((t->n + 1) * 2 > t->nslot && (t->n >= UINT32_MAX - 1 || pairtab_rehash(t) < 0))
		return NULL;
	for (h = pair_hash(a, b) & (t->nslot - 1); t->slot[h]; h = (h + 1) & (t->nslot - 1)) {
		struct share_pair *p = &t->v[t->slot[h] - 1];
		if (p->a == a && p->b == b)
			return &p->p;
	}
	if (pmi_grow(&t->v, &t->cap, t->n + 1, sizeof(*t->v)) < 0)
		return NULL;
	t->v[t->n] = (struct share_pair){ a, b, { 0 } };
	t->slot[h] = (uint32_t)++t->n;
	return &t->v[t->n - 1].p;
}

void pmi_pairtab_free(struct share_pairtab *t)
{
	free(t->v);
	free(t->slot);
}

int pmi_pair_cmp(const void *x, const void *y)
{
	const struct share_pair *p = x, *q = y;

	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	return (p->b > q->b) - (p->b < q->b);
}

/* ---- counting one stretch ---- */

static void sum_add(struct pm_share_sum *u, uint64_t ps, const struct counts *c, bool multi)
{
	u->hugetlb += c->huge * ps;
	u->resident += c->res * ps;
	u->shared += multi ? c->res * ps : 0;
	u->outside += c->out * ps;
	u->swap += c->swap * ps;
	u->swap_shared += multi ? c->swap * ps : 0;
}

static int pair_add(struct share_pairtab *t, uint32_t a, uint32_t b, uint64_t ps, const struct counts *c)
{
	struct pm_share_pair *p = pairtab_get(t, a, b);

	if (!p)
		return -ENOMEM;
	p->shared += c->res * ps;
	p->outside += c->out * ps;
	p->swap += c->swap * ps;
	return 0;
}

/*
 * Count a stretch whose keys all have the maps @dm[0..@nm) and targets
 * @dt[0..@nt): each scope that maps it gets its bytes once, each pair of
 * mappings of two processes (and each pair of processes) gets what is shared.
 */
static int tally(struct pm_share *s, const uint32_t *dm, uint32_t nm, const uint32_t *dt, uint32_t nt,
		 const struct counts *c)
{
	const uint64_t ps = s->page_size;
	bool multi = nt > 1;	/* hugetlb frames are never shared here: counted apart */
	size_t i, j;
	int r;

	if (!c->res && !c->swap && !c->huge)
		return 0;
	for (i = 0; i < nm; i++)
		sum_add(&s->maps[dm[i]].sum, ps, c, multi);
	for (i = 0; i < nt; i++)
		sum_add(&s->tsum[dt[i]], ps, c, multi);
	sum_add(&s->total, ps, c, multi);
	if (!multi || (!c->res && !c->swap))
		return 0;
	for (i = 0; i < nm; i++)
		for (j = i + 1; j < nm; j++)
			if (s->maps[dm[i]].target != s->maps[dm[j]].target &&
			    (r = pair_add(&s->mp, dm[i], dm[j], ps, c)) < 0)
				return r;
	for (i = 0; i < nt; i++)
		for (j = i + 1; j < nt; j++)
			if ((r = pair_add(&s->pp, dt[i], dt[j], ps, c)) < 0)
				return r;
	return 0;
}

/*
 * What each frame of a stretch is: not counted (no struct page, the zero
 * page, or no mapping left: nothing resident, as smaps), hugetlb, or
 * resident, and then mapped outside the set when its kpagecount is above
 * the number of times the set maps it (@nrec).
 */
static void classify(const struct pm_frame *fr, uint64_t n, size_t nrec, struct counts *c)
{
	const uint64_t none = (1ULL << PM_KPF_NOPAGE) | (1ULL << PM_KPF_ZERO_PAGE);
	uint64_t i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < n; i++) {
		if ((fr[i].flags & none) || fr[i].count == 0)
			continue;
		if (fr[i].flags & (1ULL << PM_KPF_HUGE)) {
			c->huge++;
		} else {
			c->res++;
			c->out += fr[i].count > nrec;
		}
	}
}

/* Look up the queued frames and count each queued stretch. */
static int flush(struct sweep *w)
{
	const struct pm_frame *fr = w->fr;
	struct counts c;
	size_t i;
	int r;

	if (w->nb && (r = w->fn(w->data, w->fr, w->nb)) < 0)
		return r;
	for (i = 0; i < w->nseg; i++) {
		const struct seg *g = &w->segs[i];
		classify(fr, g->n, g->nrec, &c);
		fr += g->n;
		if ((r = tally(w->s, w->pool + g->off, g->nm, w->pool + g->off + g->nm, g->nt, &c)) < 0)
			return r;
	}
	w->nb = w->nseg = w->npool = 0;
	w->changed = true;	/* the pool is empty: the next stretch writes its set again */
	return 0;
}

/* ---- the sweep ---- */

static int u32_cmp(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return (a > b) - (a < b);
}

/* Write the distinct maps, then targets, of the covering records to the pool (maps sorted, so targets are too). */
static int pool_set(struct sweep *w)
{
	size_t i, off = w->npool, nm = 0, nt = 0;
	uint32_t *p;

	if (pmi_grow(&w->pool, &w->cap_pool, off + 2 * w->na, sizeof(*w->pool)) < 0)
		return -ENOMEM;
	p = w->pool + off;
	for (i = 0; i < w->na; i++)
		p[i] = w->a[i].map;
	qsort(p, w->na, sizeof(*p), u32_cmp);
	for (i = 0; i < w->na; i++)
		if (!nm || p[nm - 1] != p[i])
			p[nm++] = p[i];
	for (i = 0; i < nm; i++) {
		uint32_t t = w->s->maps[p[i]].target;
		if (!nt || p[nm + nt - 1] != t)
			p[nm + nt++] = t;
	}
	w->npool = off + nm + nt;
	w->last = off;
	w->last_nm = (uint32_t)nm;
	w->last_nt = (uint32_t)nt;
	w->changed = false;
	return 0;
}

/* Queue the keys [@key, @end) of the covering records: frames for lookup, swap slots counted at once. */
static int emit(struct sweep *w, uint64_t key, uint64_t end)
{
	int r;

	if (w->changed && (r = pool_set(w)) < 0)
		return r;
	if (key & PMI_SHARE_KEY_SWAP) {
		struct counts c = { 0, 0, 0, end - key };
		return tally(w->s, w->pool + w->last, w->last_nm, w->pool + w->last + w->last_nm, w->last_nt, &c);
	}
	while (key < end) {
		uint64_t n = end - key, i;

		if (n > SHARE_BATCH - w->nb)
			n = SHARE_BATCH - w->nb;
		if (pmi_grow(&w->segs, &w->cap_seg, w->nseg + 1, sizeof(*w->segs)) < 0)
			return -ENOMEM;
		w->segs[w->nseg++] = (struct seg){ key, n, w->na, w->last, w->last_nm, w->last_nt };
		for (i = 0; i < n; i++)
			w->fr[w->nb++] = (struct pm_frame){ .pfn = key + i };
		key += n;
		if (w->nb == SHARE_BATCH || w->npool >= POOL_FLUSH) {
			if ((r = flush(w)) < 0)
				return r;
			if (key < end && (r = pool_set(w)) < 0)
				return r;
		}
	}
	return 0;
}

/* The next record of a live mapping into *@rec (mappings of a process that failed are skipped): 0, 1, -errno. */
static int next_rec(struct sweep *w, struct share_rec *rec)
{
	int r;

	while ((r = pmi_store_next(&w->s->st, rec)) == 0 && w->s->maps[rec->map].target == SHARE_DEAD)
		;
	return r;
}

/* Drop the covering records that end at @key. */
static void drop_ended(struct sweep *w, uint64_t key)
{
	size_t i, n = 0;

	for (i = 0; i < w->na; i++)
		if (w->a[i].end != key)
			w->a[n++] = w->a[i];
	w->changed |= n != w->na;
	w->na = n;
}

static int sweep(struct sweep *w)
{
	struct share_rec nx;
	uint64_t key = 0, end;
	size_t i;
	int more = next_rec(w, &nx), r;

	while (more == 0 || w->na) {
		if (more < 0)
			return more;
		if (!w->na)
			key = nx.key;
		while (more == 0 && nx.key == key) {	/* records start at or after the position */
			if (pmi_grow(&w->a, &w->cap_a, w->na + 1, sizeof(*w->a)) < 0)
				return -ENOMEM;
			w->a[w->na++] = (struct act){ nx.key + nx.len, nx.map };
			w->changed = true;
			more = next_rec(w, &nx);
		}
		if (more < 0)
			return more;
		end = more == 0 ? nx.key : UINT64_MAX;
		for (i = 0; i < w->na; i++)
			end = w->a[i].end < end ? w->a[i].end : end;
		if ((r = emit(w, key, end)) < 0)
			return r;
		drop_ended(w, end);
		key = end;
	}
	return flush(w);
}

int pmi_share_sweep(struct pm_share *s, pmi_share_lookup_fn fn, void *data)
{
	struct sweep w = { .s = s, .fn = fn, .data = data, .changed = true };
	int r = -ENOMEM;

	if ((w.fr = malloc(SHARE_BATCH * sizeof(*w.fr))))
		r = sweep(&w);
	free(w.fr);
	free(w.a);
	free(w.pool);
	free(w.segs);
	return r;
}
