/* share.c - which frames a set of processes share with each other and with the rest of the system, per mapping pair. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "share.h"

#define SWAP_TYPE_SHIFT	50		/* key of a swap slot: PMI_SHARE_KEY_SWAP | type << 50 | offset */

/* ---- building ---- */

struct pm_share *pmi_share_alloc(uint64_t page_size)
{
	struct pm_share *s = calloc(1, sizeof(*s));

	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	s->page_size = page_size;
	pmi_store_init(&s->st, SHARE_MEM_RECS);
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
	pmi_store_free(&s->st);
	free(s->tsum);
	pmi_pairtab_free(&s->mp);
	pmi_pairtab_free(&s->pp);
	free(s);
}

int pmi_share_push_target(struct pm_share *s, pid_t pid)
{
	size_t cap = s->cap_targets;

	if (s->finished || s->ntargets >= INT32_MAX)
		return -EINVAL;
	if (pmi_grow(&s->pids, &cap, (size_t)s->ntargets + 1, sizeof(*s->pids)) < 0)
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
	if (pmi_grow(&s->maps, &s->cap_maps, s->nmaps + 1, sizeof(*s->maps)) < 0 ||
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

int pmi_share_push_pages(struct pm_share *s, uint64_t key, uint64_t n)
{
	if (s->finished || !s->nmaps)
		return -EINVAL;
	return pmi_store_push(&s->st, key, n, (uint32_t)(s->nmaps - 1));
}

int pmi_share_push_page(struct pm_share *s, uint64_t key)
{
	return pmi_share_push_pages(s, key, 1);
}

void pmi_share_set_spill(struct pm_share *s, size_t records)
{
	s->st.limit = records ? records : 1;
}

/* Record the pages of one run: its frames if present, its swap slots if swapped, as one record. */
static int add_run(struct pm_share *s, const struct pm_run *run)
{
	const uint32_t frame = PM_PAGE_FRAME | PM_PAGE_PRESENT;
	uint64_t n = (run->end - run->start) / s->page_size;

	if ((run->flags & frame) == frame && !(run->flags & PM_PAGE_ZERO))
		return pmi_share_push_pages(s, run->pfn, n);
	if ((run->flags & (PM_PAGE_FRAME | PM_PAGE_SWAPPED)) == (PM_PAGE_FRAME | PM_PAGE_SWAPPED))
		return pmi_share_push_pages(s, PMI_SHARE_KEY_SWAP | (uint64_t)run->swap_type << SWAP_TYPE_SHIFT |
						       run->swap_offset, n);
	return 0;
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

void pmi_share_pop_target(struct pm_share *s, size_t nmaps, size_t nrecs, size_t nchunks)
{
	size_t i;

	if (s->st.nchunks == nchunks) {
		for (i = nmaps; i < s->nmaps; i++)
			free((char *)s->maps[i].map.path);
		s->nmaps = nmaps;
		s->st.n = nrecs;
	} else {	/* some of its records went to the spill file: the sweep skips them */
		for (i = nmaps; i < s->nmaps; i++)
			s->maps[i].target = SHARE_DEAD;
		s->any_dead |= s->nmaps > nmaps;
	}
	s->ntargets--;
}

int pm_share_add(struct pm_share *s, struct pm_target *t)
{
	size_t nmaps, nrecs, nchunks;
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
	nrecs = s->st.n;
	nchunks = s->st.nchunks;
	if ((r = pmi_share_push_target(s, pm_target_pid(t))) < 0)
		return r;
	r = walk_target(s, t);
	if (r < 0)	/* keep nothing of this target */
		pmi_share_pop_target(s, nmaps, nrecs, nchunks);
	return r;
}

/* ---- counting ---- */

/*
 * Drop the mappings of processes that failed after a spill: the others move
 * down, and the pairs (counted with the old indexes) follow them.
 */
static int drop_dead(struct pm_share *s)
{
	uint32_t *to;
	size_t i, n = 0;

	if (!s->any_dead)
		return 0;
	if (!(to = malloc(s->nmaps * sizeof(*to))))
		return -ENOMEM;
	for (i = 0; i < s->nmaps; i++) {
		if (s->maps[i].target == SHARE_DEAD) {
			free((char *)s->maps[i].map.path);
			continue;
		}
		to[i] = (uint32_t)n;
		s->maps[n++] = s->maps[i];
	}
	for (i = 0; i < s->mp.n; i++) {
		s->mp.v[i].a = to[s->mp.v[i].a];
		s->mp.v[i].b = to[s->mp.v[i].b];
	}
	s->nmaps = n;
	s->any_dead = false;
	free(to);
	return 0;
}

/* Sort the pair tables into (a, b) order and point their entries at the mappings. */
static void finish_pairs(struct pm_share *s)
{
	size_t i;

	if (s->mp.n)
		qsort(s->mp.v, s->mp.n, sizeof(*s->mp.v), pmi_pair_cmp);
	if (s->pp.n)
		qsort(s->pp.v, s->pp.n, sizeof(*s->pp.v), pmi_pair_cmp);
	for (i = 0; i < s->mp.n; i++) {
		s->mp.v[i].p.a = &s->maps[s->mp.v[i].a];
		s->mp.v[i].p.b = &s->maps[s->mp.v[i].b];
	}
	free(s->mp.slot);
	free(s->pp.slot);
	s->mp.slot = s->pp.slot = NULL;
}

int pmi_share_tally(struct pm_share *s, pmi_share_lookup_fn fn, void *data)
{
	int r = 0;

	if (s->finished)
		r = -EINVAL;
	else if (!(s->tsum = calloc(s->ntargets ? s->ntargets : 1, sizeof(*s->tsum))))
		r = -ENOMEM;
	if (r == 0)
		r = pmi_store_rewind(&s->st);
	if (r == 0)
		r = pmi_share_sweep(s, fn, data);
	pmi_store_free(&s->st);
	if (r == 0)
		r = drop_dead(s);
	if (r < 0) {
		free(s->tsum);
		s->tsum = NULL;
		memset(&s->total, 0, sizeof(s->total));
		return r;	/* the handle is left unusable: free it */
	}
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
	if ((s->st.n || s->st.nchunks) && !s->k)
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
		struct share_pair key = { (uint32_t)(a < b ? a : b), (uint32_t)(a < b ? b : a), { 0 } };
		const struct share_pair *p = s->pp.n ? bsearch(&key, s->pp.v, s->pp.n, sizeof(key), pmi_pair_cmp) : NULL;

		if (p) {
			out->resident = out->shared = p->p.shared;
			out->outside = p->p.outside;
			out->swap = out->swap_shared = p->p.swap;
		}
	}
	return 0;
}
