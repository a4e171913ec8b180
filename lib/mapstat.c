/* mapstat.c - every mapping with its usage, summed from one walk that also reads the mappings. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

struct pm_mapstat {
	struct pm_walk *walk;
	struct pm_run run;	/* the walk's next run, copied: it is borrowed only until the next call */
	bool have_run, walk_done;
	struct pm_mapping map;	/* the mapping being summed, with its path copied below */
	char *path;
	size_t path_cap;
	struct pm_usage usage;
	int err;		/* a walk error met after a finished row: returned by the next call */
};

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
	it->walk = pm_walk_open(t, 0, UINT64_MAX, walk_flags & ~PM_WALK_EACH, PM_IWALK_NOFRAMES | PM_IWALK_ALLMAPS);
	if (!it->walk) {
		e = errno;
		free(it);
		errno = e;
		return NULL;
	}
	return it;
}

/* Make the walk's next run it->run; returns 0 (have_run says if there is one) or -errno. */
static int fetch_run(struct pm_mapstat *it)
{
	const struct pm_run *r;
	int rc;

	if (it->have_run || it->walk_done)
		return 0;
	rc = pm_walk_next(it->walk, &r);
	if (rc < 0)
		return rc;
	if (rc == 1) {
		it->walk_done = true;
		return 0;
	}
	it->run = *r;
	it->have_run = true;
	return 0;
}

/* Copy the mapping of it->run: the walk reuses its line buffer once it moves on. */
static int take_mapping(struct pm_mapstat *it)
{
	const struct pm_mapping *m = it->run.map;

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
	int rc = it->err ? it->err : fetch_run(it);

	if (rc < 0)
		return rc;
	if (!it->have_run)
		return 1;
	rc = take_mapping(it);
	if (rc < 0)
		return rc;
	memset(&it->usage, 0, sizeof(it->usage));
	/* Runs never span mappings: sum until the walk's mapping changes. */
	while (it->have_run && it->run.map->start == it->map.start) {
		pm_usage_add(&it->usage, &it->run);
		it->have_run = false;
		rc = fetch_run(it);
		if (rc < 0) {	/* give the row so far; the error comes with the next call */
			it->err = rc;
			break;
		}
	}
	*map = &it->map;
	*usage = &it->usage;
	return 0;
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
