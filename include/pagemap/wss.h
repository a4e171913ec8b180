/* pagemap/wss.h - Working-set size: part of <pagemap.h>, which includes it (include that, not this). */
#ifndef PAGEMAP_WSS_H
#define PAGEMAP_WSS_H

#ifndef PAGEMAP_H
#error "include <pagemap.h>: it includes <pagemap/wss.h> with what it needs"
#endif

/*
 * How much of a process's resident memory it touched during a window of
 * time. pm_wss_new() picks the method, pm_wss_start() clears the accessed
 * state (the window opens), pm_wss_stop() reads it back (the window
 * closes), pm_wss_next() gives one record per mapping. Methods:
 *
 *   PM_WSS_IDLE        idle page tracking (/sys/kernel/mm/page_idle/bitmap,
 *                      CONFIG_IDLE_PAGE_TRACKING, root; the target's PFNs
 *                      must be visible and /proc/kpageflags readable). The
 *                      frames of the target's resident pages are marked
 *                      idle (batched writes, PFN runs coalesced); the
 *                      kernel clears their accessed bits in every page
 *                      table that maps them and sets the young flag, so
 *                      reclaim is not misled. At the end a frame whose
 *                      idle bit went away was accessed. Per frame: a frame
 *                      shared with other processes (page cache, KSM,
 *                      fork-shared) reads accessed when ANY of them
 *                      touched it, and read(2)/write(2) of a file page
 *                      count as accesses. Only the head page of a large
 *                      folio (THP) carries the flag: a huge page counts
 *                      whole. Frames the kernel does not track (not on an
 *                      LRU list: hugetlb pages of a hugetlbfs file, pages
 *                      still in a per-CPU LRU batch) are counted in
 *                      "untracked"; the zero page and a hugetlb
 *                      mapping's pages are not resident (smaps Rss).
 *                      Pages that appear at an address during the window
 *                      (faulted in, copied on write, migrated) count as
 *                      accessed.
 *   PM_WSS_REFERENCED  /proc/PID/clear_refs "1", then the "Referenced:"
 *                      lines of /proc/PID/smaps (kB). Works for the owner
 *                      without privilege. Perturbs the target: the
 *                      accessed bits and PG_referenced of every page it
 *                      maps are cleared, so page reclaim sees them as not
 *                      recently used (and other processes' view of shared
 *                      pages changes too). Hugetlb pages are not counted
 *                      (smaps Rss leaves them out).
 *
 * PM_WSS_AUTO picks IDLE when the bitmap is there and writable and the
 * target's PFNs are visible (the per-frame method that needs nothing of
 * the target's /proc files), else REFERENCED; pm_wss_reason() says why.
 * Either way the target's pages have their accessed bits cleared: nothing
 * measures access without that. Neither flushes the TLB (the kernel clears
 * accessed bits without one, as reclaim does): a CPU that still caches a
 * page's translation can read or write it without setting the bit again,
 * so a target that keeps running on one CPU without switching address
 * space may be counted short.
 *
 * Windows are live only: a replayed root (pm_ctx_new with a directory)
 * gives -EOPNOTSUPP.
 *
 * Tests: the environment variable PAGEMAP_WSS_BITMAP (read by
 * pm_wss_new and pm_wss_explain; ignored in set-user-ID programs) names a
 * plain file used instead of the idle bitmap, with the same layout, so the
 * IDLE method runs on kernels without it: pm_wss_start writes the heads'
 * bits there, pm_wss_stop reads them back, and a bit the test clears
 * meanwhile reads as an access.
 */
enum pm_wss_method {
	PM_WSS_AUTO = 0,
	PM_WSS_IDLE,
	PM_WSS_REFERENCED,
};

/* One mapping's working set, in bytes. */
struct pm_wss_mapping {
	uint64_t start, end;		/* [start, end) virtual */
	char perms[5];			/* "rw-p" */
	enum pm_map_kind kind;
	const char *path;		/* NUL-terminated, "" when the mapping has none */
	uint64_t resident;		/* resident at the end of the window (smaps Rss: no zero page, no hugetlb) */
	uint64_t accessed;		/* of those, accessed during the window */
	uint64_t untracked;		/* IDLE: resident bytes the kernel cannot tell about; else 0 */
};

/* The whole window, filled by pm_wss_stop(). */
struct pm_wss_summary {
	enum pm_wss_method method;	/* never AUTO */
	uint64_t window_ns;		/* CLOCK_MONOTONIC from the end of the reset to the start of the read */
	uint64_t window_max_ns;		/* from the start of the reset to the end of the read */
	uint64_t resident, accessed, untracked;	/* sums over the mappings, bytes */
	size_t mappings;		/* records pm_wss_next() will give */
};

struct pm_wss;

/*
 * pm_wss_new - prepare a working-set measurement of @t with @method
 * (PM_WSS_AUTO: the best available). Opens what the method needs (the
 * idle bitmap and kpageflags, or the target's clear_refs) but changes
 * nothing yet.
 * Returns the handle, or NULL with errno: EOPNOTSUPP (a replayed root, or
 * IDLE forced on a kernel without the bitmap), EACCES (the bitmap,
 * kpageflags or clear_refs cannot be opened by this user; IDLE with
 * hidden PFNs), ESRCH (the target has exited), EINVAL (unknown method),
 * ENOMEM. pm_wss_explain() gives the words. @t must outlive the handle.
 */
PM_API struct pm_wss *pm_wss_new(struct pm_target *t, enum pm_wss_method method);

/*
 * pm_wss_explain - whether @method can measure @t here, as one line into
 * @buf of @size bytes (NUL-terminated when @size > 0): the reason AUTO
 * would pick it, or why it cannot work.
 * Returns 0 if it can, else the -errno pm_wss_new() would fail with.
 */
PM_API int pm_wss_explain(struct pm_target *t, enum pm_wss_method method, char *buf, size_t size);

/*
 * pm_wss_start - open the window: clear the accessed state (IDLE: walk @t
 * and mark its resident frames idle; REFERENCED: write "1" to clear_refs).
 * May be called again to restart the window (the previous results go).
 * Returns 0, -ESRCH (the target exited or exec'd), -EACCES, -ENOMEM, or
 * the -errno of the failed read or write.
 */
PM_API int pm_wss_start(struct pm_wss *w);

/*
 * pm_wss_stop - close the window: read which pages were accessed and sum
 * them per mapping. Fills *@out (may be NULL) and rewinds pm_wss_next().
 * Returns 0, -EINVAL (no window started), -ESRCH (the target exited or
 * exec'd during the window: never reported as an idle process), -EACCES
 * (smaps refused), -ENOMEM, or another -errno of reading.
 */
PM_API int pm_wss_stop(struct pm_wss *w, struct pm_wss_summary *out);

/*
 * pm_wss_next - the next mapping of the last pm_wss_stop(), in address
 * order (every mapping, also those with nothing resident). Returns 0 with
 * *@out (borrowed until the next pm_wss_start/pm_wss_stop/pm_wss_free),
 * 1 at the end, -EINVAL before a successful stop.
 */
PM_API int pm_wss_next(struct pm_wss *w, const struct pm_wss_mapping **out);

/* pm_wss_method - the method in use (never AUTO). */
PM_API enum pm_wss_method pm_wss_method(const struct pm_wss *w);

/* pm_wss_reason - one line: why this method was chosen. Borrowed. */
PM_API const char *pm_wss_reason(const struct pm_wss *w);

/* pm_wss_method_name - "auto", "idle" or "referenced". Static string. */
PM_API const char *pm_wss_method_name(enum pm_wss_method method);

/* pm_wss_free - free the handle; the target's pages are left as they are. NULL is fine. */
PM_API void pm_wss_free(struct pm_wss *w);

#endif /* PAGEMAP_WSS_H */
