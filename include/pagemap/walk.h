/* pagemap/walk.h - Walk: part of <pagemap.h>, which includes it (include that, not this). */
#ifndef PAGEMAP_WALK_H
#define PAGEMAP_WALK_H

#ifndef PAGEMAP_H
#error "include <pagemap.h>: it includes <pagemap/walk.h> with what it needs"
#endif

/* What the caller needs; lets the scan back end skip reading entries. */
#define PM_WALK_ENTRIES	(1u << 0)	/* exclusive, uffd-wp, PFN and swap fields */
#define PM_WALK_EACH	(1u << 1)	/* one run per page */

/* One run of pages with identical decoded state, inside one mapping. */
struct pm_run {
	uint64_t start, end;		/* [start, end) virtual, page aligned */
	uint32_t flags;			/* PM_PAGE_* shared by every page */
	uint64_t pfn;			/* first page's PFN (then +1 per page; the same for every
					   page of a small zero-page run), with FRAME|PRESENT */
	uint8_t swap_type;		/* with FRAME|SWAPPED: type; offsets +1 per page */
	uint64_t swap_offset;
	const struct pm_mapping *map;	/* the mapping the run lies in (borrowed) */
};

struct pm_walk;

/*
 * pm_walk_new - walk the pages of @t in [@start, @end) that lie in
 * mappings, as runs in address order. Unmapped holes are skipped; pages of
 * a mapping that are neither present nor swapped come as runs with no
 * PRESENT/SWAPPED flag. @flags: PM_WALK_*. The address range is clamped to
 * what the kernel can read (task_size).
 * Returns the walk, or NULL with errno: EINVAL (@start > @end, or a bit in
 * @flags that is not a PM_WALK_* flag), EOPNOTSUPP
 * (scan back end forced on a kernel without PAGEMAP_SCAN), ENOMEM, or the
 * errors of pm_maps_open. Memory use is bounded by the batch size.
 */
PM_API struct pm_walk *pm_walk_new(struct pm_target *t, uint64_t start, uint64_t end, unsigned flags);

/*
 * pm_walk_next - the next run. Returns 0 with *@out (borrowed until the
 * next call), 1 at the end, -ESRCH if the target exited or exec'd, or
 * another -errno. A replayed tree gives -EBADMSG for a maps line the kernel
 * could not have written (malformed, not whole pages, empty, out of order)
 * or a pagemap that ends inside a mapping (pm_ctx_tree_error names the file
 * and the line or byte), never a silent end.
 */
PM_API int pm_walk_next(struct pm_walk *w, const struct pm_run **out);

/* pm_walk_backend - the back end this walk uses (never AUTO). */
PM_API enum pm_backend pm_walk_backend(const struct pm_walk *w);

/*
 * pm_walk_known - the PM_PAGE_* flags this walk can determine. A flag
 * outside the mask is "unknown", not "clear": e.g. PM_PAGE_THP with the
 * pread back end when PFNs are hidden, or PM_PAGE_EXCLUSIVE with the scan
 * back end without PM_WALK_ENTRIES.
 */
PM_API uint32_t pm_walk_known(const struct pm_walk *w);

/*
 * pm_walk_ignore_frames - from the next run on, runs are no longer cut where
 * the frames stop following on (PFN + 1, swap offset + 1 per page): a run is
 * then every consecutive page of alike flags, and its pfn, swap type and
 * offset are its first page's only. For a caller that needs the frames of
 * some runs only, or none: a picture keeps the first thousands of runs for
 * its detail and then only sums bytes. The flags stay exact (the zero page
 * is still told by its frame); without it, a THP-off heap comes as one run
 * per few pages, with it as one per mapping.
 */
PM_API void pm_walk_ignore_frames(struct pm_walk *w);

/* pm_walk_free - free the walk. NULL is fine. */
PM_API void pm_walk_free(struct pm_walk *w);

/*
 * Bytes by state, summed over runs (e.g. per mapping, or a whole process),
 * one field per summed flag (pm_flag_sums gives each one's words):
 *   present   mapped to a page in RAM, the zero page and huge zero page
 *             included (smaps Rss plus zero, plus hugetlb); the kernel's
 *             Rss is pm_usage_rss()
 *   thp       in PMD-mapped huge pages of its own memory (THP or hugetlb),
 *             not the huge zero page (smaps AnonHugePages + ShmemPmdMapped +
 *             FilePmdMapped, or the hugetlb pages)
 *   zero      mapped to the zero page or the huge zero page (in present)
 * Callers allocate it: its layout never changes.
 */
struct pm_usage {
	uint64_t present, swapped, file, exclusive, thp, softdirty, uffdwp, guard, zero;
};

/*
 * pm_usage_add - add @run's bytes to @u under each flag the run has, except
 * thp for the huge zero page (pure).
 */
PM_API void pm_usage_add(struct pm_usage *u, const struct pm_run *run);

/*
 * pm_usage_rss - the resident bytes the kernel counts (smaps Rss, VmRSS) of
 * @u summed over mapping @m: present less zero; 0 for a hugetlb mapping
 * (m->hugetlb, or the path /anon_hugepage), whose pages smaps counts as
 * hugetlb. A mapping from pm_maps_next, a walk or pm_mapstat is told by its
 * device (MAP_HUGETLB, MFD_HUGETLB, SHM_HUGETLB, a hugetlbfs file); one
 * parsed alone by pm_maps_parse_line by its path only. @m may be NULL (no
 * mapping to tell hugetlb by). Exact when the walk knows PM_PAGE_ZERO
 * (pm_walk_known); else an upper bound. Pure.
 */
PM_API uint64_t pm_usage_rss(const struct pm_usage *u, const struct pm_mapping *m);

/*
 * Bytes by page flag: by_flag[i] sums the runs that have flag 1u << i
 * (PM_PAGE_*), THP without the huge zero page as in struct pm_usage. Room
 * for every bit of the flags word, so a new flag changes no layout; struct
 * pm_usage is the same sums for the first nine flags.
 */
struct pm_flag_bytes {
	uint64_t by_flag[32];
};

/* pm_flag_bytes_add - add @run's bytes to @b under each flag the run has, as pm_usage_add (pure). */
PM_API void pm_flag_bytes_add(struct pm_flag_bytes *b, const struct pm_run *run);

#endif /* PAGEMAP_WALK_H */
