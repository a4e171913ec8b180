/* pagemap/mapstat.h - Per-mapping usage: part of <pagemap.h>, which includes it (include that, not this). */
#ifndef PAGEMAP_MAPSTAT_H
#define PAGEMAP_MAPSTAT_H

#ifndef PAGEMAP_H
#error "include <pagemap.h>: it includes <pagemap/mapstat.h> with what it needs"
#endif

struct pm_mapstat;

/*
 * pm_mapstat_open - iterate over every mapping of @t (including [vvar] and
 * [vsyscall], which read as empty) with its usage summed from one walk of
 * the whole address space. @walk_flags: PM_WALK_ENTRIES when exclusive,
 * uffd-wp or frame details are wanted (costs a pread on the scan back end).
 * The walk reads /proc/PID/maps once, for both the mappings and the pages.
 * Returns the iterator or NULL with errno as pm_walk_new (EINVAL for a bit
 * in @walk_flags that is not a PM_WALK_* flag).
 */
PM_API struct pm_mapstat *pm_mapstat_open(struct pm_target *t, unsigned walk_flags);

/*
 * pm_mapstat_next - the next mapping and its usage (both borrowed until the
 * next call). Returns 0, 1 at the end, or -errno as pm_walk_next; a mapping
 * whose walk failed gives no row, and every later call returns that error.
 */
PM_API int pm_mapstat_next(struct pm_mapstat *it, const struct pm_mapping **map, const struct pm_usage **usage);

/*
 * pm_mapstat_bytes - the mapping pm_mapstat_next() gave last, as bytes by
 * flag (borrowed until the next call); all zero before the first call.
 */
PM_API const struct pm_flag_bytes *pm_mapstat_bytes(const struct pm_mapstat *it);

/*
 * pm_mapstat_known - the PM_PAGE_* flags whose bytes the row
 * pm_mapstat_next() gave last can tell: pm_walk_known() of the walk, or 0
 * for [vvar] and [vsyscall], which are never read. A field of its struct
 * pm_usage (or a count of pm_mapstat_bytes()) whose flag is outside it is
 * unknown, not 0. 0 before the first call and after the last row.
 */
PM_API uint32_t pm_mapstat_known(const struct pm_mapstat *it);

/* pm_mapstat_walk - the walk behind the iterator, for pm_walk_known/pm_walk_backend. */
PM_API const struct pm_walk *pm_mapstat_walk(const struct pm_mapstat *it);

/* pm_mapstat_close - free the iterator. NULL is fine. */
PM_API void pm_mapstat_close(struct pm_mapstat *it);

#endif /* PAGEMAP_MAPSTAT_H */
