/* node_cells.h - a mapping's bytes per NUMA node as one cell ("0:1.2M,1:4K"), for `maps -o +NODES`. */
#ifndef PAGEMAP_CLI_NODE_CELLS_H
#define PAGEMAP_CLI_NODE_CELLS_H

#include <stdbool.h>
#include <stdint.h>
#include <pagemap.h>

struct node_cells;

/*
 * Read where every mapping of @t lives (pm_numa_proc_open, the first source
 * that works: frames, move_pages, numa_maps). @bytes: sizes in bytes, else
 * human ("4K"). NULL with errno when no source can answer.
 */
struct node_cells *node_cells_new(struct pm_ctx *ctx, struct pm_target *t, bool bytes);
/* The cell of the mapping that starts at @start ("" nothing in RAM), NULL if that walk did not see it. */
const char *node_cells_get(const struct node_cells *c, uint64_t start);
void node_cells_free(struct node_cells *c);

#endif
