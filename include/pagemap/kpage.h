/* pagemap/kpage.h - Physical frames (kpageflags, kpagecount, kpagecgroup): part of <pagemap.h>, which includes it (include that, not this). */
#ifndef PAGEMAP_KPAGE_H
#define PAGEMAP_KPAGE_H

#ifndef PAGEMAP_H
#error "include <pagemap.h>: it includes <pagemap/kpage.h> with what it needs"
#endif

struct pm_kpage;

/* The files behind a pm_kpage. */
enum pm_kpage_file {
	PM_KPAGE_FLAGS = 0,	/* /proc/kpageflags */
	PM_KPAGE_COUNT,		/* /proc/kpagecount: mapcount per page */
	PM_KPAGE_CGROUP,	/* /proc/kpagecgroup: memcg inode, 0 uncharged (4.3+) */
};

/* One frame of a scattered lookup: the caller sets @pfn, the library the rest. */
struct pm_frame {
	uint64_t pfn;
	uint64_t flags;		/* raw kpageflags word (0 if that file is unreadable) */
	uint64_t count;		/* kpagecount (0 if unreadable) */
	uint64_t cgroup;	/* kpagecgroup (0 if unreadable) */
};

/*
 * pm_kpage_open - open ROOT/proc/kpageflags, kpagecount and kpagecgroup,
 * keeping whichever are readable (they are root-only: plain DAC, no
 * capability check). pm_kpage_status() tells which.
 * Returns the handle, or NULL with errno: the open error of kpageflags
 * (EACCES for non-root, ENOENT) when none of the three is readable, or
 * ENOMEM. The context must outlive the handle; free with pm_kpage_close().
 */
PM_API struct pm_kpage *pm_kpage_open(struct pm_ctx *ctx);

/* pm_kpage_close - close the files and free the handle. NULL is fine. */
PM_API void pm_kpage_close(struct pm_kpage *k);

/* pm_kpage_status - 0 if @file is open, else -errno of its failed open. */
PM_API int pm_kpage_status(const struct pm_kpage *k, enum pm_kpage_file file);

/*
 * pm_kpage_end - the first PFN past the readable range (the kernel's
 * round_up(max_pfn, PAGES_PER_SECTION); a replayed file's length / 8),
 * found with about 2 * log2(end) one-word reads of kpageflags (or of
 * whichever file is open). Returns 0 with *@end, or -errno.
 */
PM_API int pm_kpage_end(struct pm_kpage *k, uint64_t *end);

/*
 * pm_kpage_start - the first PFN the frame files describe: 0, except in a
 * replayed keyed snapshot, whose frame numbers were lifted past every real
 * frame (META key_lift, man pagemap-snapshot(5)): its frames lie in
 * [key_lift, end) and the words below read 0 but are no frames. A walk of
 * all frames (phys, pm_classes_read) starts here.
 */
PM_API uint64_t pm_kpage_start(const struct pm_kpage *k);

/*
 * pm_kpage_next_data - the first PFN at or after @pfn that a replayed
 * snapshot's frame files may hold words of: every frame in [@pfn, *@next)
 * reads 0 in each open file, so a walk of all frames (phys) accounts for
 * them at once rather than read them (a file may claim far more frames
 * than it holds). Live, and for a tree: *@next = @pfn. Returns 0 with
 * *@next (at most UINT64_MAX: no more words; callers stop at pm_kpage_end),
 * or -errno (EBADMSG: a damaged chunk, pm_ctx_tree_error()).
 */
PM_API int pm_kpage_next_data(struct pm_kpage *k, uint64_t pfn, uint64_t *next);

/*
 * pm_kpage_read - read @n consecutive frames from @pfn: kpageflags words
 * into @flags, kpagecount into @counts, kpagecgroup into @cgroups; any of
 * the three may be NULL (not read). Large runs are read in batches, one
 * pread per batch and file. Frames past the readable range read as
 * 1 << PM_KPF_NOPAGE in @flags and 0 in @counts and @cgroups.
 * Returns 0 (also when all three outputs are NULL), -EINVAL if @pfn + @n
 * overflows the PFN space, the open error of a requested file that is not
 * readable (-EACCES, -ENOENT), or a read error (-EIO, -EINVAL).
 */
PM_API int pm_kpage_read(struct pm_kpage *k, uint64_t pfn, size_t n, uint64_t *flags, uint64_t *counts,
			 uint64_t *cgroups);

/* A set of pm_kpage files for pm_kpage_select(). */
#define PM_KPAGE_BIT(file) (1u << (file))

/*
 * pm_kpage_select - the files later pm_kpage_lookup() calls read: an OR of
 * PM_KPAGE_BIT(PM_KPAGE_FLAGS|COUNT|CGROUP) (all three after open). The
 * kernel charges each file per frame read (~0.2 us), so a caller that does
 * not need map counts or cgroups says so; fields of files not selected are
 * set to 0. Returns 0, or -EINVAL for an empty or unknown set.
 */
PM_API int pm_kpage_select(struct pm_kpage *k, unsigned files);

/*
 * pm_kpage_lookup - fill flags, count and cgroup of @n frames at scattered
 * PFNs (in any order, repeats allowed). The PFNs are sorted (through an
 * index: @frames keeps the caller's order), coalesced into runs (small
 * gaps are read through) and each run is read once per file: never one
 * pread per page. Memory is bounded by the batch size whatever @n is.
 * Fields whose file is not readable are set to 0 (see pm_kpage_status);
 * frames past the readable range get flags 1 << PM_KPF_NOPAGE.
 * Returns 0, -ENOMEM, or a read error (frames are then partly filled).
 */
PM_API int pm_kpage_lookup(struct pm_kpage *k, struct pm_frame *frames, size_t n);

#endif /* PAGEMAP_KPAGE_H */
