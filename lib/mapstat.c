/* mapstat.c - every mapping with its usage: the maps iterator and one walk, in lockstep. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

struct pm_mapstat {
	struct pm_maps *maps;
	struct pm_walk *walk;
	struct pm_run run;	/* the walk's next run, copied: it is borrowed only until the next call */
	bool have_run, walk_done;
	struct pm_usage usage;
};

struct pm_mapstat *pm_mapstat_open(struct pm_target *t, unsigned walk_flags)
{
	struct pm_mapstat *it = calloc(1, sizeof(*it));
	int e;

	if (!it)
		return NULL;
	it->walk = pm_walk_new(t, 0, UINT64_MAX, (walk_flags & ~PM_WALK_EACH) | PM_WALK_NOFRAMES);
	if (it->walk)
		it->maps = pm_maps_open(t);
	if (!it->maps) {
		e = errno;
		pm_mapstat_close(it);
		errno = e;
		return NULL;
	}
	return it;
}

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
	it->run.map = NULL;
	it->have_run = true;
	return 0;
}

int pm_mapstat_next(struct pm_mapstat *it, const struct pm_mapping **map, const struct pm_usage **usage)
{
	const struct pm_mapping *m;
	int rc = pm_maps_next(it->maps, &m);

	if (rc)
		return rc;
	memset(&it->usage, 0, sizeof(it->usage));
	for (;;) {
		rc = fetch_run(it);
		if (rc < 0)
			return rc;
		if (!it->have_run || it->run.start >= m->end)
			break;
		if (it->run.start >= m->start) {
			struct pm_run part = it->run;
			if (part.end > m->end)	/* the mapping shrank since the walk read maps */
				part.end = m->end;
			pm_usage_add(&it->usage, &part);
		}
		it->have_run = false;
	}
	*map = m;
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
	pm_maps_close(it->maps);
	free(it);
}
