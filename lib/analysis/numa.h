/* numa.h - the NUMA topology handle, shared by numa_topo.c (sysfs) and numa.c (a process's pages). */
#ifndef PMI_NUMA_INTERNAL_H
#define PMI_NUMA_INTERNAL_H

#include <stdint.h>
#include "pagemap.h"

#define PMI_NUMA_MAX_ID	4095		/* node and tier numbers beyond any kernel's MAX_NUMNODES */
#define PMI_NUMA_MAX_CPU	8191		/* CPU numbers parsed from lists (NR_CPUS of distributions) */
#define PMI_NUMA_TEXT_MAX 16384		/* nodeN/meminfo and nodeN/vmstat */

/* A run of frames on one node, from the node's memory blocks. */
struct pmi_numa_range {
	uint64_t start, end;	/* [start, end) PFNs */
	int index;		/* node index */
};

struct pm_numa {
	struct pm_ctx *ctx;
	struct pm_numa_node *nodes;
	size_t count;
	int16_t *distance;		/* count x count, -1 unknown */
	struct pmi_numa_range *ranges;	/* sorted, disjoint */
	size_t nranges, range_cap;
	int16_t cpu_node[PMI_NUMA_MAX_CPU + 1];	/* node index of each CPU, -1 none */
};

/* One line of /proc/PID/numa_maps, parsed. */
struct pmi_numa_maps_line {
	uint64_t start;
	char policy[64];	/* "default", "bind:1", "prefer (many)=static:0-1" */
	bool huge;		/* a hugetlb mapping */
	uint64_t page_size;	/* kernelpagesize_kB in bytes, 0 when absent */
	uint64_t anon;		/* anon= pages */
	uint64_t pages;		/* the sum of the Nx= counts */
};

/*
 * Parse one numa_maps line (pure: no I/O). @pages (pm_numa_count(@n) + 1
 * entries, cleared here) gets each node's Nx= count by node index; counts
 * of nodes @n does not know go to the last slot. Returns 0, or -EINVAL for
 * a line the kernel cannot have written (no address, absurd numbers).
 */
int pmi_numa_maps_parse(const char *line, const struct pm_numa *n, struct pmi_numa_maps_line *out, uint64_t *pages);

int pmi_numa_cmp_long(const void *a, const void *b);
int pmi_numa_parse_list(const char *s, void (*fn)(long v, void *data), void *data);
void pmi_numa_parse_distances(struct pm_numa *n, int i, const char *text);

#endif
