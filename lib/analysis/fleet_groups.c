/* fleet_groups.c - named groups of processes (a cgroup, a user, a command) with summed figures, capped to the largest. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "pages.h"

struct pm_groups {
	struct pm_group *g;
	uint32_t *hash;		/* per group: FNV-1a of its key, compared before the key */
	size_t n, cap;
};

static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

struct pm_groups *pm_groups_new(void)
{
	return calloc(1, sizeof(struct pm_groups));
}

void pm_groups_free(struct pm_groups *g)
{
	size_t i;

	if (!g)
		return;
	for (i = 0; i < g->n; i++)
		free((char *)g->g[i].key);
	free(g->g);
	free(g->hash);
	free(g);
}

/* The group named @key, made when new; NULL with errno ENOMEM. A linear scan: groups are capped to thousands. */
static struct pm_group *find(struct pm_groups *g, const char *key)
{
	uint32_t h = fnv1a(key);
	size_t i, cap;
	void *p;

	for (i = 0; i < g->n; i++)
		if (g->hash[i] == h && !strcmp(g->g[i].key, key))
			return &g->g[i];
	if (g->n == g->cap) {
		cap = g->cap ? 2 * g->cap : 64;
		if (!(p = realloc(g->g, cap * sizeof(*g->g))))
			return NULL;
		g->g = p;
		if (!(p = realloc(g->hash, cap * sizeof(*g->hash))))
			return NULL;
		g->hash = p;
		g->cap = cap;
	}
	memset(&g->g[g->n], 0, sizeof(g->g[0]));
	if (!(g->g[g->n].key = strdup(key)))
		return NULL;
	g->hash[g->n] = h;
	return &g->g[g->n++];
}

static void quick_sum(struct pm_quick *d, const struct pm_quick *s)
{
	d->rss += s->rss;
	d->anon += s->anon;
	d->file += s->file;
	d->shmem += s->shmem;
	d->uss += s->uss;
	d->swap += s->swap;
	d->thp += s->thp;
	d->hugetlb += s->hugetlb;
	d->entries += s->entries;
	if (s->longest_ns > d->longest_ns)
		d->longest_ns = s->longest_ns;
	d->uss_known = d->uss_known || s->uss_known;
}

static void exact_sum(struct pm_account *d, const struct pm_account *s)
{
	d->rss += s->rss;
	d->pss += s->pss;
	d->uss += s->uss;
	d->swap += s->swap;
	d->shared += s->shared;
	d->hugetlb += s->hugetlb;
	d->estimate = d->estimate || s->estimate;
	d->exact = d->exact || s->exact;
	if (s->source > d->source)	/* smaps_rollup in a group marks the whole group's figures as rounded */
		d->source = s->source;
}

int pm_groups_add(struct pm_groups *g, const char *key, const struct pm_quick *q)
{
	struct pm_group *p = find(g, key);

	if (!p)
		return -ENOMEM;
	p->procs++;
	quick_sum(&p->quick, q);
	return 0;
}

int pm_groups_add_exact(struct pm_groups *g, const char *key, const struct pm_account *a)
{
	struct pm_group *p = find(g, key);

	if (!p)
		return -ENOMEM;
	p->exact_procs++;
	exact_sum(&p->exact, a);
	return 0;
}

int pm_groups_add_xshared(struct pm_groups *g, const char *key, uint64_t bytes)
{
	struct pm_group *p = find(g, key);

	if (!p)
		return -ENOMEM;
	p->xshared += bytes;
	return 0;
}

int pm_groups_find(const struct pm_groups *g, const char *key)
{
	uint32_t h = fnv1a(key);
	size_t i;

	for (i = 0; i < g->n && i <= INT32_MAX; i++)
		if (g->hash[i] == h && !strcmp(g->g[i].key, key))
			return (int)i;
	return -ENOENT;
}

static uint64_t weight(const struct pm_group *p)
{
	return p->quick.rss + p->quick.swap + p->quick.hugetlb + p->exact.pss;
}

static int by_weight(const void *a, const void *b)
{
	const struct pm_group *x = a, *y = b;
	uint64_t u = weight(x), v = weight(y);

	return u != v ? (u > v ? -1 : 1) : strcmp(x->key, y->key);
}

/* Fold @p into the other group @o and free @p's key. */
static void fold(struct pm_group *o, struct pm_group *p)
{
	o->procs += p->procs;
	o->exact_procs += p->exact_procs;
	o->xshared += p->xshared;
	quick_sum(&o->quick, &p->quick);
	exact_sum(&o->exact, &p->exact);
	free((char *)p->key);
}

int pm_groups_cap(struct pm_groups *g, size_t keep, const char *other, size_t *folded)
{
	struct pm_group o = { 0 };
	size_t i, k;

	*folded = 0;
	if (!keep)
		return -EINVAL;
	qsort(g->g, g->n, sizeof(*g->g), by_weight);
	if (g->n <= keep)
		goto rehash;
	if (!(o.key = strdup(other)))
		return -ENOMEM;
	/* Keep keep - 1 groups and the other group; a kept group named like @other joins it. */
	for (i = 0, k = 0; i < g->n; i++) {
		if (k < keep - 1 && strcmp(g->g[i].key, other))
			g->g[k++] = g->g[i];
		else {
			fold(&o, &g->g[i]);
			++*folded;
		}
	}
	g->g[k++] = o;
	g->n = k;
rehash:
	for (i = 0; i < g->n; i++)
		g->hash[i] = fnv1a(g->g[i].key);
	return 0;
}

size_t pm_groups_count(const struct pm_groups *g)
{
	return g->n;
}

const struct pm_group *pm_groups_at(const struct pm_groups *g, size_t i)
{
	return i < g->n ? &g->g[i] : NULL;
}
