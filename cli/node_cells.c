/*
 * node_cells.c - `maps -o +NODES`: each mapping's bytes per node, read by a
 * walk of its own (pm_numa_proc) before the maps walk and looked up by start
 * address, so a mapping that appeared between the two walks shows "-".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "node_cells.h"
#include "output.h"

struct node_cell {
	uint64_t start;
	char text[96];
};

struct node_cells {
	struct node_cell *cell;		/* sorted by start: pm_numa_proc_next goes in address order */
	size_t n, cap;
};

/* "0:1.2M,1:4K" for the nodes with bytes in RAM; "?" for frames in no node. */
static void format_cell(struct node_cell *c, const struct pm_numa *numa, const struct pm_numa_map *m, bool bytes)
{
	size_t i, k, len = 0;

	c->text[0] = '\0';
	for (i = 0; i < m->nnodes && len + 32 < sizeof(c->text); i++) {
		uint64_t sum = 0;
		char id[16], size[32];

		for (k = 0; k < PM_NUMA_NCLASSES; k++)
			sum += m->bytes[i][k];
		if (!sum)
			continue;
		if (i + 1 == m->nnodes)
			snprintf(id, sizeof(id), "?");
		else
			snprintf(id, sizeof(id), "%d", pm_numa_node(numa, i)->id);
		if (bytes)
			snprintf(size, sizeof(size), "%" PRIu64, sum);
		else
			out_human_size(sum, size, sizeof(size));
		len += (size_t)snprintf(c->text + len, sizeof(c->text) - len, "%s%s:%s", len ? "," : "", id, size);
	}
}

static int append(struct node_cells *c, const struct pm_numa *numa, const struct pm_numa_map *m, bool bytes)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct node_cell *p = realloc(c->cell, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		c->cell = p;
		c->cap = cap;
	}
	c->cell[c->n].start = m->map->start;
	format_cell(&c->cell[c->n++], numa, m, bytes);
	return 0;
}

struct node_cells *node_cells_new(struct pm_ctx *ctx, struct pm_target *t, bool bytes)
{
	struct node_cells *c = calloc(1, sizeof(*c));
	struct pm_numa *numa = pm_numa_open(ctx);
	struct pm_numa_proc *p = numa ? pm_numa_proc_open(t, numa, PM_NUMA_AUTO) : NULL;
	const struct pm_numa_map *m;
	int rc = p ? 0 : -errno, saved;

	if (!c)
		rc = -ENOMEM;
	while (!rc && (rc = pm_numa_proc_next(p, &m)) == 0)
		rc = append(c, numa, m, bytes);
	pm_numa_proc_close(p);
	pm_numa_close(numa);
	if (rc < 0) {
		saved = -rc;
		node_cells_free(c);
		errno = saved;
		return NULL;
	}
	return c;
}

const char *node_cells_get(const struct node_cells *c, uint64_t start)
{
	size_t lo = 0, hi = c->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->cell[mid].start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->n && c->cell[lo].start == start ? c->cell[lo].text : NULL;
}

void node_cells_free(struct node_cells *c)
{
	if (c)
		free(c->cell);
	free(c);
}
