/* smaps.h - per-mapping Swap and KernelPageSize of /proc/PID/smaps (internal). */
#ifndef PM_SMAPS_H
#define PM_SMAPS_H

#include <stdint.h>
#include <stdio.h>
#include "internal.h"

struct pm_smaps_swap {
	uint64_t start;		/* the mapping's first address */
	uint64_t swap;		/* its Swap: line, in bytes */
	uint64_t kernel_page;	/* its KernelPageSize: (a hugetlb mapping's huge page size), bytes */
};

/* pm_smaps_field - "@key   12 kB" (@key with its colon) into *@bytes; false for another line. Pure. */
bool pm_smaps_field(const char *line, const char *key, uint64_t *bytes);

/*
 * pm_smaps_swap_parse - the mappings of smaps text read from @f, in address
 * order, each with its Swap bytes. Pure over the stream (no /proc access).
 * Returns 0 with *@out (free()) and *@n, or -errno.
 */
int pm_smaps_swap_parse(FILE *f, struct pm_smaps_swap **out, size_t *n);

/* pm_smaps_open - ROOT/proc/PID/smaps of @t as a stream (fclose it); -ESRCH when it is gone. */
int pm_smaps_open(struct pm_target *t, FILE **out);

/* pm_smaps_swap_read - the same from ROOT/proc/PID/smaps of @t; -ESRCH when it is gone. */
int pm_smaps_swap_read(struct pm_target *t, struct pm_smaps_swap **out, size_t *n);

/* pm_smaps_find - the record of the mapping that starts at @start, or NULL. */
const struct pm_smaps_swap *pm_smaps_find(const struct pm_smaps_swap *v, size_t n, uint64_t start);

/* pm_smaps_swap_of - Swap bytes of the mapping that starts at @start, -1 if none does. */
int64_t pm_smaps_swap_of(const struct pm_smaps_swap *v, size_t n, uint64_t start);

#endif
