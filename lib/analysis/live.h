/* live.h - the pure parts of the live process table (lib/analysis/live.c), unit-tested on their own (private). */
#ifndef PMI_LIVE_H
#define PMI_LIVE_H

#include "base.h"

/* Did the process of @a, read later as @b, fault, run, remap or change state? Pure. */
bool pmi_stat_line_moved(const struct pm_proc_stat *a, const struct pm_proc_stat *b);

/*
 * pmi_live_quota - how many of @n unmoved rows, whose ages in seconds are
 * @ages oldest first, to read again now: every one that would pass @max_age
 * before the refresh after (@next seconds away), and at least the share
 * (@n * @next / @max_age, rounded up) that spreads the reads evenly over the
 * bound instead of all at once. Pure.
 */
size_t pmi_live_quota(const double *ages, size_t n, double next, double max_age);

#endif
