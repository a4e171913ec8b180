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
	int err;		/* a walk error met after a finished row: returned by the next call */
};

/* The fields of struct pm_usage (kept for the ABI) and the flag each sums. */
static const struct {
	uint32_t flag;
	size_t offset;
} usage_fields[] = {
	{ PM_PAGE_PRESENT, offsetof(struct pm_usage, present) },
	{ PM_PAGE_SWAPPED, offsetof(struct pm_usage, swapped) },
	{ PM_PAGE_FILE, offsetof(struct pm_usage, file) },
	{ PM_PAGE_EXCLUSIVE, offsetof(struct pm_usage, exclusive) },
	{ PM_PAGE_THP, offsetof(struct pm_usage, thp) },
	{ PM_PAGE_SOFTDIRTY, offsetof(struct pm_usage, softdirty) },
	{ PM_PAGE_UFFD_WP, offsetof(struct pm_usage, uffdwp) },
	{ PM_PAGE_GUARD, offsetof(struct pm_usage, guard) },
	{ PM_PAGE_ZERO, offsetof(struct pm_usage, zero) },
};

static uint64_t *usage_field(struct pm_usage *u, size_t i)
{
	return (uint64_t *)((char *)u + usage_fields[i].offset);
}

void pm_usage_add(struct pm_usage *u, const struct pm_run *run)
{
	size_t i;

	for (i = 0; i < PM_ARRAY_SIZE(usage_fields); i++)
		if (run->flags & usage_fields[i].flag)
			*usage_field(u, i) += run->end - run->start;
}

void pmi_flag_bytes_add_len(struct pm_flag_bytes *b, uint32_t flags, uint64_t len)
{
	for (; flags; flags &= flags - 1)
		b->by_flag[__builtin_ctz(flags)] += len;
}

void pm_flag_bytes_add(struct pm_flag_bytes *b, const struct pm_run *run)
{
	pmi_flag_bytes_add_len(b, run->flags, run->end - run->start);
}

static void usage_from_bytes(struct pm_usage *u, const struct pm_flag_bytes *b)
{
	size_t i;

	for (i = 0; i < PM_ARRAY_SIZE(usage_fields); i++)
		*usage_field(u, i) = b->by_flag[__builtin_ctz(usage_fields[i].flag)];
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
	it->walk = pmi_walk_open(t, 0, UINT64_MAX, walk_flags & ~PM_WALK_EACH, PM_IWALK_NOFRAMES | PM_IWALK_ALLMAPS);
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
	*map = &it->map;
	*usage = &it->usage;
	return 0;
}

const struct pm_flag_bytes *pm_mapstat_bytes(const struct pm_mapstat *it)
{
	return &it->bytes;
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
