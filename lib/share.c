/* share.c - which frames a set of processes share with each other and with the rest of the system, per mapping pair. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

#ifndef SHARE_BATCH	/* the fuzz build makes batches small: cheaper runs, more batch boundaries */
#define SHARE_BATCH	16384		/* distinct frames per lookup: 512 KiB of pm_frame */
#endif
#define SWAP_TYPE_SHIFT	50		/* key of a swap slot: PM_SHARE_KEY_SWAP | type << 50 | offset */

/* One recorded page: a frame (or swap slot) mapped by mapping @map. 16 bytes. */
struct rec {
	uint64_t key;
	uint32_t map;
	uint32_t pad;
};

/* A pair of mappings (or of processes) and the bytes they have in common. */
struct pair {
	uint32_t a, b;
	struct pm_share_pair p;
};

/* Pairs found by (a, b), in an open-addressing index over a growing array. */
struct pairtab {
	struct pair *v;
	size_t n, cap;
	uint32_t *slot;		/* index + 1 into v, 0 = empty; size is a power of two */
	size_t nslot;
};

struct pm_share {
	struct pm_ctx *ctx;
	struct pm_kpage *k;
	bool own_k;
	int k_error;		/* errno of opening our own pm_kpage */
	uint64_t page_size;

	pid_t *pids;		/* per target, in pm_share_add order */
	unsigned ntargets, cap_targets;
	struct pm_share_map *maps;
	size_t nmaps, cap_maps;
	struct rec *recs;
	size_t nrecs, cap_recs;

	bool finished;
	struct pm_share_sum *tsum;	/* per target */
	struct pm_share_sum total;
	struct pairtab mp;		/* mapping pairs */
	struct pairtab pp;		/* process pairs */
	size_t map_it, pair_it;
	uint32_t *dm, *dt;		/* scratch: distinct maps and targets of one frame */
	size_t cap_d;
};

/* ---- growing arrays ---- */

static int grow(void *pp, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap : 16;
	void *p;

	if (need <= *cap)
		return 0;
	while (c < need) {
		if (c > SIZE_MAX / 2 / size)
			return -ENOMEM;
		c *= 2;
	}
	p = realloc(*(void **)pp, c * size);
	if (!p)
		return -ENOMEM;
	*(void **)pp = p;
	*cap = c;
	return 0;
}

/* ---- pair table ---- */

static uint64_t pair_hash(uint32_t a, uint32_t b)
{
	uint64_t h = ((uint64_t)a << 32 | b) * 0x9e3779b97f4a7c15ULL;

	return h ^ (h >> 29);
}

static int pairtab_rehash(struct pairtab *t)
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
static struct pm_share_pair *pairtab_get(struct pairtab *t, uint32_t a, uint32_t b)
{
	size_t h;

	if ((t->n + 1) * 2 > t->nslot && (t->n >= UINT32_MAX - 1 || pairtab_rehash(t) < 0))
		return NULL;
	for (h = pair_hash(a, b) & (t->nslot - 1); t->slot[h]; h = (h + 1) & (t->nslot - 1)) {
		struct pair *p = &t->v[t->slot[h] - 1];
		if (p->a == a && p->b == b)
			return &p->p;
	}
	if (grow(&t->v, &t->cap, t->n + 1, sizeof(*t->v)) < 0)
		return NULL;
	t->v[t->n] = (struct pair){ a, b, { 0 } };
	t->slot[h] = (uint32_t)++t->n;
	return &t->v[t->n - 1].p;
}

static void pairtab_free(struct pairtab *t)
{
	free(t->v);
	free(t->slot);
}

static int pair_cmp(const void *x, const void *y)
{
	const struct pair *p = x, *q = y;

	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	return (p->b > q->b) - (p->b < q->b);
}

/* ---- building ---- */

struct pm_share *pmi_share_alloc(uint64_t page_size)
{
	struct pm_share *s = calloc(1, sizeof(*s));

	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	s->page_size = page_size;
	return s;
}

struct pm_share *pm_share_new(struct pm_ctx *ctx, struct pm_kpage *k)
{
	const struct pm_features *f = ctx ? pm_ctx_features(ctx) : NULL;
	struct pm_share *s;

	if (!ctx) {
		errno = EINVAL;
		return NULL;
	}
	if (!f || !(s = pmi_share_alloc(f->page_size))) {
		errno = ENOMEM;
		return NULL;
	}
	s->ctx = ctx;
	s->k = k;
	if (!k) {
		s->k = pm_kpage_open(ctx);
		s->own_k = s->k != NULL;
		s->k_error = s->k ? 0 : errno;
	}
	return s;
}

void pm_share_free(struct pm_share *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nmaps; i++)
		free((char *)s->maps[i].map.path);
	if (s->own_k)
		pm_kpage_close(s->k);
	free(s->pids);
	free(s->maps);
	free(s->recs);
	free(s->tsum);
	pairtab_free(&s->mp);
	pairtab_free(&s->pp);
	free(s->dm);
	free(s->dt);
	free(s);
}

int pmi_share_push_target(struct pm_share *s, pid_t pid)
{
	size_t cap = s->cap_targets;

	if (s->finished || s->ntargets >= INT32_MAX)
		return -EINVAL;
	if (grow(&s->pids, &cap, (size_t)s->ntargets + 1, sizeof(*s->pids)) < 0)
		return -ENOMEM;
	s->cap_targets = (unsigned)cap;
	s->pids[s->ntargets++] = pid;
	return 0;
}

int pmi_share_push_map(struct pm_share *s, const struct pm_mapping *m)
{
	struct pm_share_map *sm;
	char *path;

	if (s->finished || !s->ntargets || s->nmaps >= INT32_MAX)
		return -EINVAL;
	if (grow(&s->maps, &s->cap_maps, s->nmaps + 1, sizeof(*s->maps)) < 0 ||
	    !(path = malloc(m->path_len + 1)))
		return -ENOMEM;
	if (m->path_len)
		memcpy(path, m->path, m->path_len);
	path[m->path_len] = '\0';
	sm = &s->maps[s->nmaps++];
	memset(sm, 0, sizeof(*sm));
	sm->pid = s->pids[s->ntargets - 1];
	sm->target = s->ntargets - 1;
	sm->map = *m;
	sm->map.path = path;
	return 0;
}

int pmi_share_push_page(struct pm_share *s, uint64_t key)
{
	if (s->finished || !s->nmaps)
		return -EINVAL;
	if (s->nrecs == s->cap_recs && grow(&s->recs, &s->cap_recs, s->nrecs + 1, sizeof(*s->recs)) < 0)
		return -ENOMEM;
	s->recs[s->nrecs++] = (struct rec){ key, (uint32_t)(s->nmaps - 1), 0 };
	return 0;
}

/* Record the pages of one run: each frame of a present run, each slot of a swapped one. */
static int add_run(struct pm_share *s, const struct pm_run *run)
{
	const uint32_t frame = PM_PAGE_FRAME | PM_PAGE_PRESENT;
	uint64_t i, n = (run->end - run->start) / s->page_size;
	int r = 0;

	if ((run->flags & frame) == frame && !(run->flags & PM_PAGE_ZERO)) {
		for (i = 0; i < n && r == 0; i++)
			r = pmi_share_push_page(s, run->pfn + i);
	} else if ((run->flags & (PM_PAGE_FRAME | PM_PAGE_SWAPPED)) == (PM_PAGE_FRAME | PM_PAGE_SWAPPED)) {
		for (i = 0; i < n && r == 0; i++)
			r = pmi_share_push_page(s, PM_SHARE_KEY_SWAP | (uint64_t)run->swap_type << SWAP_TYPE_SHIFT |
							  (run->swap_offset + i));
	}
	return r;
}

static int walk_target(struct pm_share *s, struct pm_target *t)
{
	struct pm_walk *w = pm_walk_new(t, 0, UINT64_MAX, PM_WALK_ENTRIES);
	const struct pm_run *run;
	size_t first = s->nmaps;
	int r = w ? 0 : -errno;

	while (r == 0 && (r = pm_walk_next(w, &run)) == 0) {
		if (s->nmaps == first || s->maps[s->nmaps - 1].map.start != run->map->start)
			r = pmi_share_push_map(s, run->map);
		if (r == 0)
			r = add_run(s, run);
	}
	pm_walk_free(w);
	return r == 1 ? 0 : r;
}

int pm_share_add(struct pm_share *s, struct pm_target *t)
{
	size_t nmaps, nrecs, i;
	unsigned j;
	int r;

	if (!s || !t || s->finished || !s->ctx)
		return -EINVAL;
	if (pm_target_pfn_view(t) != PM_PFN_VISIBLE)
		return -EPERM;
	if (!s->k)
		return -(s->k_error ? s->k_error : EACCES);
	if ((r = pm_kpage_status(s->k, PM_KPAGE_COUNT)) < 0)
		return r;
	for (j = 0; j < s->ntargets; j++)
		if (s->pids[j] == pm_target_pid(t))
			return -EEXIST;
	nmaps = s->nmaps;
	nrecs = s->nrecs;
	if ((r = pmi_share_push_target(s, pm_target_pid(t))) < 0)
		return r;
	r = walk_target(s, t);
	if (r < 0) {	/* keep nothing of this target */
		for (i = nmaps; i < s->nmaps; i++)
			free((char *)s->maps[i].map.path);
		s->nmaps = nmaps;
		s->nrecs = nrecs;
		s->ntargets--;
	}
	return r;
}

/* ---- counting ---- */

static int rec_cmp(const void *x, const void *y)
{
	const struct rec *a = x, *b = y;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return (a->map > b->map) - (a->map < b->map);
}

/* What one frame (or slot) is: mapped by 2+ processes of the set, and by others outside it. */
struct frame_kind {
	bool swap, hugetlb, multi, outside;
};

static void sum_add(struct pm_share_sum *u, uint64_t ps, const struct frame_kind *f)
{
	if (f->hugetlb) {
		u->hugetlb += ps;
	} else if (f->swap) {
		u->swap += ps;
		u->swap_shared += f->multi ? ps : 0;
	} else {
		u->resident += ps;
		u->shared += f->multi ? ps : 0;
		u->outside += f->outside ? ps : 0;
	}
}

static int pair_add(struct pairtab *t, uint32_t a, uint32_t b, uint64_t ps, const struct frame_kind *f)
{
	struct pm_share_pair *p = pairtab_get(t, a, b);

	if (!p)
		return -ENOMEM;
	if (f->swap) {
		p->swap += ps;
	} else {
		p->shared += ps;
		p->outside += f->outside ? ps : 0;
	}
	return 0;
}

/* Distinct maps and targets of one group of records (sorted by map, so targets are sorted too). */
static int distinct(struct pm_share *s, const struct rec *g, size_t n, size_t *nm, size_t *nt)
{
	size_t i, cap = s->cap_d;

	if (n > cap) {
		uint32_t *dt;

		if (grow(&s->dm, &cap, n, sizeof(*s->dm)) < 0 || !(dt = realloc(s->dt, cap * sizeof(*dt))))
			return -ENOMEM;
		s->dt = dt;
		s->cap_d = cap;
	}
	*nm = *nt = 0;
	for (i = 0; i < n; i++) {
		uint32_t m = g[i].map, t = s->maps[m].target;
		if (!*nm || s->dm[*nm - 1] != m)
			s->dm[(*nm)++] = m;
		if (!*nt || s->dt[*nt - 1] != t)
			s->dt[(*nt)++] = t;
	}
	return 0;
}

/*
 * Count one frame or swap slot mapped by the @n records @g: @count is its
 * kpagecount (ignored for a slot), @flags its kpageflags word.
 */
static int tally_group(struct pm_share *s, const struct rec *g, size_t n, uint64_t count, uint64_t flags)
{
	const uint64_t none = (1ULL << PM_KPF_NOPAGE) | (1ULL << PM_KPF_ZERO_PAGE);
	struct frame_kind f = { .swap = (g->key & PM_SHARE_KEY_SWAP) != 0 };
	size_t nm, nt, i, j;
	int r;

	/* No struct page, the zero page, or no mapping left: nothing resident (as smaps) */
	if (!f.swap && ((flags & none) || count == 0))
		return 0;
	if ((r = distinct(s, g, n, &nm, &nt)) < 0)
		return r;
	f.hugetlb = !f.swap && (flags & (1ULL << PM_KPF_HUGE));
	f.multi = nt > 1 && !f.hugetlb;
	f.outside = !f.swap && !f.hugetlb && count > n;
	for (i = 0; i < nm; i++)
		sum_add(&s->maps[s->dm[i]].sum, s->page_size, &f);
	for (i = 0; i < nt; i++)
		sum_add(&s->tsum[s->dt[i]], s->page_size, &f);
	sum_add(&s->total, s->page_size, &f);
	if (!f.multi)
		return 0;
	for (i = 0; i < nm; i++)
		for (j = i + 1; j < nm; j++)
			if (s->maps[s->dm[i]].target != s->maps[s->dm[j]].target &&
			    (r = pair_add(&s->mp, s->dm[i], s->dm[j], s->page_size, &f)) < 0)
				return r;
	for (i = 0; i < nt; i++)
		for (j = i + 1; j < nt; j++)
			if ((r = pair_add(&s->pp, s->dt[i], s->dt[j], s->page_size, &f)) < 0)
				return r;
	return 0;
}

/* End of the group of records with the key of @recs[@i]. */
static size_t group_end(const struct rec *recs, size_t n, size_t i)
{
	size_t e = i + 1;

	while (e < n && recs[e].key == recs[i].key)
		e++;
	return e;
}

/* Look up the distinct frames from record @*pos on, up to SHARE_BATCH of them, and count them. */
static int tally_batch(struct pm_share *s, size_t *pos, struct pm_frame *fr, size_t *gs,
		       pm_share_lookup_fn fn, void *data)
{
	size_t nb = 0, i = *pos, b;
	int r;

	while (nb < SHARE_BATCH && i < s->nrecs && !(s->recs[i].key & PM_SHARE_KEY_SWAP)) {
		memset(&fr[nb], 0, sizeof(fr[nb]));
		fr[nb].pfn = s->recs[i].key;
		gs[nb++] = i;
		i = group_end(s->recs, s->nrecs, i);
	}
	gs[nb] = i;
	if (nb && (r = fn(data, fr, nb)) < 0)
		return r;
	for (b = 0; b < nb; b++)
		if ((r = tally_group(s, &s->recs[gs[b]], gs[b + 1] - gs[b], fr[b].count, fr[b].flags)) < 0)
			return r;
	*pos = i;
	return 0;
}

/* Sort the pair tables into (a, b) order and point their entries at the mappings. */
static void finish_pairs(struct pm_share *s)
{
	size_t i;

	if (s->mp.n)
		qsort(s->mp.v, s->mp.n, sizeof(*s->mp.v), pair_cmp);
	if (s->pp.n)
		qsort(s->pp.v, s->pp.n, sizeof(*s->pp.v), pair_cmp);
	for (i = 0; i < s->mp.n; i++) {
		s->mp.v[i].p.a = &s->maps[s->mp.v[i].a];
		s->mp.v[i].p.b = &s->maps[s->mp.v[i].b];
	}
	free(s->mp.slot);
	free(s->pp.slot);
	s->mp.slot = s->pp.slot = NULL;
}

int pmi_share_tally(struct pm_share *s, pm_share_lookup_fn fn, void *data)
{
	struct pm_frame *fr = malloc(SHARE_BATCH * sizeof(*fr));
	size_t *gs = malloc((SHARE_BATCH + 1) * sizeof(*gs));
	size_t pos = 0;
	int r = 0;

	if (s->finished)
		r = -EINVAL;
	else if (!fr || !gs || !(s->tsum = calloc(s->ntargets ? s->ntargets : 1, sizeof(*s->tsum))))
		r = -ENOMEM;
	if (r == 0 && s->nrecs)
		qsort(s->recs, s->nrecs, sizeof(*s->recs), rec_cmp);
	while (r == 0 && pos < s->nrecs && !(s->recs[pos].key & PM_SHARE_KEY_SWAP))
		r = tally_batch(s, &pos, fr, gs, fn, data);
	while (r == 0 && pos < s->nrecs) {	/* swap slots sort last */
		size_t e = group_end(s->recs, s->nrecs, pos);
		r = tally_group(s, &s->recs[pos], e - pos, 0, 0);
		pos = e;
	}
	free(fr);
	free(gs);
	if (r < 0) {
		free(s->tsum);
		s->tsum = NULL;
		memset(&s->total, 0, sizeof(s->total));
		return r;	/* the handle is left unusable: free it */
	}
	free(s->recs);
	s->recs = NULL;
	s->nrecs = s->cap_recs = 0;
	finish_pairs(s);
	s->finished = true;
	return 0;
}

static int kpage_lookup(void *data, struct pm_frame *frames, size_t n)
{
	return pm_kpage_lookup(data, frames, n);
}

int pm_share_finish(struct pm_share *s)
{
	if (!s || s->finished)
		return -EINVAL;
	if (s->nrecs && !s->k)
		return -(s->k_error ? s->k_error : EACCES);
	return pmi_share_tally(s, kpage_lookup, s->k);
}

/* ---- results ---- */

int pm_share_next_map(struct pm_share *s, const struct pm_share_map **out)
{
	if (!s || !s->finished)
		return -EINVAL;
	if (s->map_it >= s->nmaps) {
		s->map_it = 0;
		return 1;
	}
	*out = &s->maps[s->map_it++];
	return 0;
}

int pm_share_next_pair(struct pm_share *s, const struct pm_share_pair **out)
{
	if (!s || !s->finished)
		return -EINVAL;
	if (s->pair_it >= s->mp.n) {
		s->pair_it = 0;
		return 1;
	}
	*out = &s->mp.v[s->pair_it++].p;
	return 0;
}

unsigned pm_share_ntargets(const struct pm_share *s)
{
	return s ? s->ntargets : 0;
}

int pm_share_sum(const struct pm_share *s, int a, int b, struct pm_share_sum *out)
{
	memset(out, 0, sizeof(*out));
	if (!s || !s->finished || a >= (int)s->ntargets || b >= (int)s->ntargets || (a < 0 && b >= 0) ||
	    (a >= 0 && a == b))
		return -EINVAL;
	if (a < 0) {
		*out = s->total;
	} else if (b < 0) {
		*out = s->tsum[a];
	} else {
		struct pair key = { (uint32_t)(a < b ? a : b), (uint32_t)(a < b ? b : a), { 0 } };
		const struct pair *p = s->pp.n ? bsearch(&key, s->pp.v, s->pp.n, sizeof(key), pair_cmp) : NULL;

		if (p) {
			out->resident = out->shared = p->p.shared;
			out->outside = p->p.outside;
			out->swap = out->swap_shared = p->p.swap;
		}
	}
	return 0;
}
