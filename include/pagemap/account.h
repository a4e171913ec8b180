/* pagemap/account.h - Per-process accounting: part of <pagemap.h>, which includes it (include that, not this). */
#ifndef PAGEMAP_ACCOUNT_H
#define PAGEMAP_ACCOUNT_H

#ifndef PAGEMAP_H
#error "include <pagemap.h>: it includes <pagemap/account.h> with what it needs"
#endif

/* Where a pm_account's figures come from. */
enum pm_account_source {
	PM_ACCOUNT_NONE = 0,
	PM_ACCOUNT_PAGEMAP,		/* a walk of pagemap joined with kpagecount (and kpageflags) */
	PM_ACCOUNT_SMAPS_ROLLUP,	/* the kernel's /proc/PID/smaps_rollup (kB granularity) */
	PM_ACCOUNT_SMAPS,		/* one mapping's record of /proc/PID/smaps (kB granularity) */
};

/* Memory of one process, in bytes. */
struct pm_account {
	uint64_t rss;		/* resident pages mapped by the process (not the zero page, not hugetlb) */
	uint64_t pss;		/* proportional: each page's size divided by its map count */
	uint64_t uss;		/* unique: pages mapped once (smaps Private_Clean + Private_Dirty) */
	uint64_t swap;		/* swapped-out pages (smaps Swap) */
	uint64_t shared;	/* pages mapped more than once (smaps Shared_Clean + Shared_Dirty) */
	uint64_t hugetlb;	/* hugetlb pages mapped, in none of the above (smaps Private_Hugetlb + Shared_Hugetlb) */
	enum pm_account_source source;
	bool exact;		/* source is PM_ACCOUNT_PAGEMAP: byte-exact, PSS rounded once */
	bool estimate;		/* USS, shared and PSS rest on averaged map counts of large folios (see below) */
};

/*
 * pm_account_process - RSS, PSS, USS, swap and shared bytes of @t.
 *
 * With @k open on a readable kpagecount and @t showing PFNs
 * (PM_PFN_VISIBLE, i.e. root), @t is walked once (pm_walk, PM_WALK_ENTRIES)
 * and the PFNs of its present pages are looked up in batches through
 * pm_kpage_lookup (memory bounded by the batch size, never one read per
 * page). A page whose map count is 1 is unique (USS), above 1 shared; PSS
 * adds page_size / count per page in fixed point and is rounded once at the
 * end (smaps truncates with 12 fraction bits; libmeminfo truncates every
 * page to whole KiB: neither is done here). As smaps does, the zero page
 * and huge zero page (map count 0) are not counted, and hugetlb pages
 * (KPF_HUGE, when kpageflags is readable) count only in @out->hugetlb (the
 * bytes of their mapped pages); a THP or mTHP counts per base page with
 * that page's map count, so a large folio shared by several processes adds
 * up to its size once over their PSS; swap is the bytes of swap entries.
 * source = PM_ACCOUNT_PAGEMAP, exact = true.
 *
 * Otherwise (@k NULL, kpagecount unreadable, or PFNs hidden) the figures
 * are read from ROOT/proc/PID/smaps_rollup: Rss, Pss, Private_Clean +
 * Private_Dirty, Swap, Shared_Clean + Shared_Dirty, Private_Hugetlb +
 * Shared_Hugetlb (kB, so multiples of 1024; the kernel truncates Pss).
 * source = PM_ACCOUNT_SMAPS_ROLLUP.
 *
 * Estimates: a kernel built with CONFIG_NO_PAGE_MAPCOUNT (6.15+) reports
 * in kpagecount, and uses in smaps, the average map count of a large folio
 * rather than each page's own, so the split between USS and shared and the
 * PSS of partly shared large folios are estimates there. @out->estimate is
 * true when pm_ctx_features() says page_mapcount == PM_NO and, from
 * pagemap, the process maps at least one page of a large folio (not
 * hugetlb: KPF_COMPOUND_HEAD/TAIL), or, from smaps_rollup (which does not
 * tell folios apart), always. With page_mapcount PM_UNKNOWN it stays false.
 *
 * Returns 0 with *@out filled, or -errno: ESRCH (the target exited or
 * exec'd during the walk), EACCES, ENOENT (no smaps_rollup: Linux before
 * 4.14 without kpagecount access), EINVAL (malformed smaps_rollup), ENOMEM,
 * or a read error of kpagecount. @out is zeroed on failure.
 */
PM_API int pm_account_process(struct pm_target *t, struct pm_kpage *k, struct pm_account *out);

/* Called by pm_account_mappings once per mapping; @map and its path are borrowed until it returns. */
typedef int (*pm_account_map_fn)(void *data, const struct pm_mapping *map, const struct pm_account *acct);

/*
 * pm_account_mappings - RSS, PSS, USS, swap, shared and hugetlb bytes of
 * each mapping of @t, from the kernel's ROOT/proc/PID/smaps (the fields
 * pm_account_process reads from smaps_rollup, per mapping: kB, Pss
 * truncated per mapping, so a process's mappings may sum a few KiB below
 * its rollup), in address order; source = PM_ACCOUNT_SMAPS, estimate as
 * for smaps_rollup. @fn's nonzero return stops the read and is returned.
 * Returns 0, or -errno: ESRCH (gone, or no mm), EACCES, EINVAL (a record
 * without Rss, Pss, Shared_* or Private_* lines), ENOMEM, or @fn's.
 */
PM_API int pm_account_mappings(struct pm_target *t, pm_account_map_fn fn, void *data);

/* pm_account_source_name - "pagemap", "smaps_rollup", "smaps" or "none". Static string. */
PM_API const char *pm_account_source_name(enum pm_account_source source);

#endif /* PAGEMAP_ACCOUNT_H */
