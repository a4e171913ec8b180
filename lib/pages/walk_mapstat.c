/* walk_mapstat.c - every mapping with its usage, summed from one walk that also reads the mappings. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "pages.h"

struct pm_mapstat {
	struct pm_walk *walk;
	bool walk_done;
	struct pm_mapping map;	/* the mapping being summed, with its path copied below */
	char *path;
	size_t path_cap;
	struct pm_usage usage;
	struct pm_flag_bytes bytes;
	uint32_t known;		/* the flags the row's sums can tell */
	int err;		/* a walk error met after a finished row: returned by the next call */
};

/*
 * struct pm_usage (frozen for the ABI): one uint64_t per summed flag, in the
 * order of the flag table's sum column (pm_flag_sums), for the first nine.
 */
#define USAGE_FIELDS	(sizeof(struct pm_usage) / sizeof(uint64_t))
_Static_assert(offsetof(struct pm_usage, zero) == 8 * sizeof(uint64_t) && USAGE_FIELDS == 9,
	       "struct pm_usage is nine sums in a row");

static uint64_t *usage_field(struct pm_usage *u, int column)
{
	return (uint64_t *)((char *)u + (size_t)column * sizeof(uint64_t));
}

/* The flag table's rows that have a field in struct pm_usage. */
static bool has_field(const struct pm_flag_sum *s)
{
	return s->column >= 0 && (size_t)s->column < USAGE_FIELDS;
}

/*
 * The flags a run's bytes are summed under: its own, except THP for the huge
 * zero page. The huge zero page is PMD-mapped, so its pages say THP (pagemap
 * pages, runs), but it is no huge page of the process's own memory: smaps
 * counts it in neither Rss nor AnonHugePages, and the sums follow smaps.
 */
static uint32_t summed_flags(uint32_t flags)
{
	return (flags & PM_PAGE_ZERO) ? flags & ~PM_PAGE_THP : flags;
}

void pm_usage_add(struct pm_usage *u, const struct pm_run *run)
{
	const struct pm_flag_sum *s;
	uint32_t flags = summed_flags(run->flags);
	size_t i, n;

	for (s = pm_flag_sums(&n), i = 0; i < n; i++)
		if (has_field(&s[i]) && (flags & s[i].bit))
			*usage_field(u, s[i].column) += run->end - run->start;
}

/*
 * smaps Rss: what is present, less the zero page and huge zero page (in
 * present, counted apart in zero), and nothing of a hugetlb mapping (smaps
 * counts it as *_Hugetlb, not Rss).
 */
uint64_t pm_usage_rss(const struct pm_usage *u, const struct pm_mapping *m)
{
	if (m && pmi_map_hugetlb(m))
		return 0;
	return u->present > u->zero ? u->present - u->zero : 0;
}

void pmi_flag_bytes_add_len(struct pm_flag_bytes *b, uint32_t flags, uint64_t len)
{
	for (flags = summed_flags(flags); flags; flags &= flags - 1)
		b->by_flag[__builtin_ctz(flags)] += len;
}

void pm_flag_bytes_add(struct pm_flag_bytes *b, const struct pm_run *run)
{
	pmi_flag_bytes_add_len(b, run->flags, run->end - run->start);
}

static void usage_from_bytes(struct pm_usage *u, const struct pm_flag_bytes *b)
{
	const struct pm_flag_sum *s;
	size_t i, n;

	for (s = pm_flag_sums(&n), i = 0; i < n; i++)
		if (has_field(&s[i]))
			*usage_field(u, s[i].column) = b->by_flag[__builtin_ctz(s[i].bit)];
}

struct pm_mapstat *pm_mapstat_open(struct pm_target *t, unsigned walk_flags)
{
	struct pm_mapstat *it;
	int e;

	if (walk_flags & ~(PM_WALK_ENTRIES | PM_WALK_EACH)) {	/* as pm_walk_new: unknown bits are refused */
		errno = EINVAL;
		return NULL;
	}
	it = calloc(1, sizeof(*it));
	if (!it)
		return NULL;
	/* Only sums: frames need not continue; every mapping, readable or not, gets a row. */
	it->walk = pmi_walk_open(t, 0, UINT64_MAX, walk_flags & ~PM_WALK_EACH, PMI_IWALK_NOFRAMES | PMI_IWALK_ALLMAPS);
	if (!it->walk) {
		e = errno;
		free(it);
		errno = e;
		return NULL;
	}
	return it;
}

/* Copy mapping @m: the walk reuses its line buffer once it moves on. */
static int take_mapping(struct pm_mapstat *it, const struct pm_mapping *m)
{
	if (m->path_len + 1 > it->path_cap) {
		char *p = realloc(it->path, m->path_len + 1);
		if (!p)
			return -ENOMEM;
		it->path = p;
		it->path_cap = m->path_len + 1;
	}
	memcpy(it->path, m->path, m->path_len);
	it->map = *m;
	it->map.path = it->path;
	return 0;
}

int pm_mapstat_next(struct pm_mapstat *it, const struct pm_mapping **map, const struct pm_usage **usage)
{
	const struct pm_mapping *m;
	int rc;

	if (it->err)
		return it->err;
	if (it->walk_done)
		return 1;
	memset(&it->usage, 0, sizeof(it->usage));
	memset(&it->bytes, 0, sizeof(it->bytes));
	it->known = 0;
	rc = pmi_walk_sum_mapping(it->walk, &it->bytes, &m);
	if (rc == 1) {
		it->walk_done = true;
		return 1;
	}
	if (rc < 0) {	/* no row of a mapping whose sums are partial (a truncated replay, a target gone) */
		it->err = rc;
		return rc;
	}
	rc = take_mapping(it, m);
	if (rc < 0)
		return rc;
	usage_from_bytes(&it->usage, &it->bytes);
	it->known = pmi_walk_map_known(it->walk);
	*map = &it->map;
	*usage = &it->usage;
	return 0;
}

const struct pm_flag_bytes *pm_mapstat_bytes(const struct pm_mapstat *it)
{
	return &it->bytes;
}

uint32_t pm_mapstat_known(const struct pm_mapstat *it)
{
	return it->known;
}

const struct pm_walk *pm_mapstat_walk(const struct pm_mapstat *it)
{
	return it->walk;
}

void pm_mapstat_close(struct pm_mapstat *it)
{
	if (!it)
		return;
	pm_walk_free(it->walk);
	free(it->path);
	free(it);
}
