/* pagemap/features.h - Features: part of <pagemap.h>, which includes it (include that, not this). */
#ifndef PAGEMAP_FEATURES_H
#define PAGEMAP_FEATURES_H

#ifndef PAGEMAP_H
#error "include <pagemap.h>: it includes <pagemap/features.h> with what it needs"
#endif

/* Entry layouts (docs/kernel-interface.md §1). */
enum pm_layout {
	PM_LAYOUT_UNKNOWN = 0,
	PM_LAYOUT_PSHIFT,	/* 2.6.25-4.1 before any clear_refs 4: bits 55-60 = PAGE_SHIFT */
	PM_LAYOUT_V2,		/* 3.11-4.1 after a clear_refs 4: bit 55 soft-dirty, 56-60 zero */
	PM_LAYOUT_CURRENT,	/* 4.2+: 55 soft-dirty, 56 exclusive, 57 uffd-wp (5.13), 58 guard (6.15) */
};

/* What a reader of this privilege sees of frame numbers. */
enum pm_pfn_view {
	PM_PFN_UNKNOWN = 0,
	PM_PFN_VISIBLE,		/* PFNs and swap type/offset are shown */
	PM_PFN_HIDDEN,		/* 4.2+: zeroed, the opener lacks CAP_SYS_ADMIN */
	PM_PFN_REFUSED,		/* 4.0-4.1: opening pagemap fails with EPERM */
};

/* Answers that can be "not known" (e.g. a replayed tree cannot be probed by effect). */
enum pm_tristate { PM_NO = 0, PM_YES = 1, PM_UNKNOWN = 2 };

/*
 * PAGEMAP_SCAN categories: the kernel's PAGE_IS_* bits (uapi linux/fs.h), spelled
 * for callers whose headers predate them (the library itself uses the kernel's names).
 */
#define PM_CAT_WPALLOWED	(1ULL << 0)
#define PM_CAT_WRITTEN		(1ULL << 1)
#define PM_CAT_FILE		(1ULL << 2)
#define PM_CAT_PRESENT		(1ULL << 3)
#define PM_CAT_SWAPPED		(1ULL << 4)
#define PM_CAT_PFNZERO		(1ULL << 5)
#define PM_CAT_HUGE		(1ULL << 6)
#define PM_CAT_SOFT_DIRTY	(1ULL << 7)
#define PM_CAT_GUARD		(1ULL << 8)

/* One readable file of the physical-frame family. */
struct pm_kfile {
	bool readable;
	int error;		/* errno of the failed open, 0 when readable */
};

struct pm_features {
	char kernel_release[65];	/* "6.18.44-…", empty if unknown */
	unsigned kernel_major, kernel_minor, kernel_patch;
	unsigned page_size;		/* bytes */
	unsigned page_shift;
	uint64_t pmd_size;		/* bytes a PMD maps (THP size), 0 if unknown */
	bool privileged;		/* CAP_SYS_ADMIN in the initial user namespace */

	enum pm_layout layout;
	bool layout_by_effect;		/* confirmed by reading an unmapped entry */
	enum pm_pfn_view pfn_view;	/* for readers opened by this process */
	int pagemap_error;		/* errno opening our own pagemap, 0 if fine */
	enum pm_tristate unpriv_pfn;	/* can unprivileged users see PFNs here? */
	uint64_t zero_pfn;		/* PFN of the shared zero page, 0 if not visible */

	bool scan;			/* PAGEMAP_SCAN ioctl present */
	uint64_t scan_categories;	/* PM_CAT_* bits the kernel accepts */
	enum pm_tristate uffd_wp_async;	/* userfaultfd with WP_ASYNC */
	uint64_t uffd_features;		/* features UFFDIO_API reported */
	int uffd_error;			/* errno creating a userfaultfd, 0 if fine */
	enum pm_tristate soft_dirty;	/* by effect: a fresh page reads soft-dirty */
	enum pm_tristate guard_regions;	/* MADV_GUARD_INSTALL works (6.15+) */
	/*
	 * Each page of a large folio (THP, mTHP, large page-cache folio) has
	 * its own map count in kpagecount and smaps: PM_YES with
	 * CONFIG_PAGE_MAPCOUNT and on every kernel before 6.15; PM_NO with
	 * CONFIG_NO_PAGE_MAPCOUNT (6.15+), where both report the folio's
	 * average, so per-page sharing of large folios is an estimate (see
	 * pm_account). Probed by effect (below); PM_UNKNOWN where it cannot be.
	 */
	enum pm_tristate page_mapcount;

	struct pm_kfile kpageflags, kpagecount, kpagecgroup, page_idle;
	bool by_effect;			/* false for a replayed root: effects not probed */
	/*
	 * Does a read fault on fresh anonymous memory map the shared zero page?
	 * PM_NO on kernels that forbid it (s390 KVM guests, some hypervisor
	 * guests), where such a read allocates a page of its own. Probed by
	 * effect: two read-faulted pages share one frame that nobody maps
	 * exclusively (and that kpageflags calls the zero page, where readable).
	 * zero_pfn is set only when this is PM_YES and frames are visible.
	 */
	enum pm_tristate zero_page;
	enum pm_tristate huge_zero_page;	/* the same for THP (use_zero_page) */
	/*
	 * A replayed snapshot's page_mapcount is PM_UNKNOWN because its
	 * writer did not probe: it recorded no frame of a large folio, so no
	 * count it holds depends on the answer (the probe maps a THP and
	 * forks). Always false live. It sits in the struct's former tail
	 * padding: where the struct is 8-byte aligned (LP64) its size and
	 * every offset are those of 0.11; on i386 it grows by 4 bytes, so a
	 * copy made by a binary built against 0.11 must not be handed to
	 * pm_features_export() or pm_features_row(): pass the library's own.
	 */
	bool page_mapcount_not_needed;
};

/*
 * pm_ctx_features - the features of the kernel behind @ctx, probed on first
 * call and cached. On the live system every answer is checked by effect,
 * in the calling process and without forking: the layout and PFN view by
 * reading its own pagemap, PAGEMAP_SCAN by an ioctl, guard regions by
 * installing one, soft-dirty by a fresh page's bit 55, the zero page by
 * two read faults (a few pages mapped and unmapped). Three probes cost
 * more and run only when asked for through pm_ctx_probe() (the library's
 * own calls ask for what they need): until then uffd_wp_async is
 * PM_UNKNOWN, soft_dirty is the fresh-page answer alone, and page_mapcount
 * is PM_YES before 6.15 and PM_UNKNOWN after. Under a replayed root, what
 * can only be probed by effect is read from the tree's "pagemap-features"
 * file when the capture recorded one, else left PM_UNKNOWN (page_mapcount:
 * PM_YES before 6.15; PM_UNKNOWN with page_mapcount_not_needed where a
 * snapshot recorded no frame of a large folio and so did not probe).
 * Returns a borrowed pointer valid for the context's life, or NULL with
 * errno set (ENOMEM).
 */
PM_API const struct pm_features *pm_ctx_features(struct pm_ctx *ctx);

#define PM_PROBE_UFFD		(1u << 0)	/* create (and close) a userfaultfd: uffd_wp_async, uffd_features */
#define PM_PROBE_SOFT_DIRTY	(1u << 1)	/* fork a child that clears and sets its soft-dirty bits (4.2+, where bit 55 showed) */
#define PM_PROBE_MAPCOUNT	(1u << 2)	/* root, 6.15+: map one THP, fork a child that unmaps half, read kpagecount */
#define PM_PROBE_ALL		(PM_PROBE_UFFD | PM_PROBE_SOFT_DIRTY | PM_PROBE_MAPCOUNT)

/*
 * pm_ctx_probe - run the costlier probes in @what (PM_PROBE_*) that have not
 * run yet, and return the features as pm_ctx_features() does.
 * PM_PROBE_MAPCOUNT: with PFNs visible and /proc/kpagecount readable
 * (root), the caller maps one PMD-size THP (a huge-page allocation), forks
 * a child that unmaps half of it and reads kpagecount: 2 then 1 across the
 * middle is per-page, one value throughout is averaged. Without root or
 * without a THP it stays PM_UNKNOWN. PM_PROBE_SOFT_DIRTY forks a child.
 * Nothing runs under a replayed root. Returns NULL with errno (ENOMEM).
 */
PM_API const struct pm_features *pm_ctx_probe(struct pm_ctx *ctx, unsigned what);

/*
 * pm_features_export - @f as the key=value lines a captured tree keeps in
 * ROOT/pagemap-features (what `pagemap features --export` prints and a
 * snapshot records), into @buf of @size, NUL-terminated: what a replayed
 * root's pm_ctx_features() reads back. Returns the length, or -ENOSPC.
 */
PM_API int pm_features_export(const struct pm_features *f, char *buf, size_t size);

/* pm_layout_name - "pshift", "v2", "current" or "unknown". Static string. */
PM_API const char *pm_layout_name(enum pm_layout layout);

/* pm_pfn_view_name - "visible", "hidden", "refused" or "unknown". */
PM_API const char *pm_pfn_view_name(enum pm_pfn_view view);

/* One row of what the probe found, in words: the rows `pagemap features` prints. */
struct pm_feature_row {
	const char *key;	/* what is probed: "kernel", "layout", "pagemap-scan", ... (static) */
	char value[80];		/* "yes", "no", "unknown", or the value ("4096", "current", a release) */
	char why[512];		/* what it is; when missing, why and what would enable it */
};

#define PM_FEATURES_LIVE	(1u << 0)	/* @f was probed on the running kernel, not replayed */

/*
 * pm_features_row - row @i (from 0) of the features @f in words, into @row: the
 * same rows, in the same order, as `pagemap features`. @flags: PM_FEATURES_LIVE
 * when @f describes the running kernel (a context whose root is "/"), else the
 * words say the answers were recorded at capture. Pass the features of
 * pm_ctx_probe(ctx, PM_PROBE_ALL) to have every answer; fewer probes give
 * "unknown" or "not probed" rows. Pure: reads nothing but @f.
 * Returns 0 with @row filled, 1 when @i is past the last row, -EINVAL for a
 * NULL @f or @row or an unknown flag.
 */
PM_API int pm_features_row(const struct pm_features *f, unsigned flags, size_t i, struct pm_feature_row *row);

#endif /* PAGEMAP_FEATURES_H */
