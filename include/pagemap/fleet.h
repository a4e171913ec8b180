/* pagemap/fleet.h - Fleet: cheap figures, groups, frame classes (for exporters): part of <pagemap.h>, which includes it (include that, not this). */
#ifndef PAGEMAP_FLEET_H
#define PAGEMAP_FLEET_H

#ifndef PAGEMAP_H
#error "include <pagemap.h>: it includes <pagemap/fleet.h> with what it needs"
#endif

/*
 * What pagemap's bits alone tell of a process, without kpagecount: cheap
 * enough for every scrape of an exporter. Bytes.
 */
struct pm_quick {
	uint64_t rss;		/* smaps Rss: present, not the zero page or huge zero page, not hugetlb */
	uint64_t anon, file, shmem;	/* rss split: no file bit; file bit in shared memory; other file bit */
	uint64_t uss;		/* present and mapped only here (exclusive bit 56, 4.2+) */
	uint64_t swap;		/* swap entries */
	uint64_t thp;		/* PMD-mapped huge pages of its own memory, not the huge zero page (in rss) */
	uint64_t hugetlb;	/* present in hugetlb mappings (struct pm_mapping's hugetlb; not in rss) */
	uint64_t entries;	/* pagemap entries read: all of every mapping with the pread back end,
				   those of present and swapped regions with the scan back end */
	uint64_t longest_ns;	/* the longest single walk step: a bound on one read's hold on the target */
	bool uss_known;		/* the walk could read the exclusive bit (else uss is 0) */
};

/*
 * pm_quick_add - add one walk run to @q (pure). Hugetlb is told by the
 * run's mapping (its hugetlb field, which a walk sets by the mapping's
 * device: MAP_HUGETLB, MFD_HUGETLB, SHM_HUGETLB, a hugetlbfs file; else the
 * path /anon_hugepage); shared memory by the mapping's path (/dev/zero
 * shared, /memfd:, /SYSV, /dev/shm/, [anon_shmem:]).
 */
PM_API void pm_quick_add(struct pm_quick *q, const struct pm_run *run);

/*
 * pm_quick_process - walk all of @t once (PM_WALK_ENTRIES) and fill @out.
 * The walker reads pagemap in batches, so the target's mmap lock is held
 * for one batch at a time; @out->longest_ns says how long the longest step
 * took. Returns 0, or -errno as pm_walk_new/pm_walk_next (ESRCH, EACCES,
 * EPERM, ENOMEM); @out is zeroed on failure.
 */
PM_API int pm_quick_process(struct pm_target *t, struct pm_quick *out);

/* One named group of processes: sums of their figures. */
struct pm_group {
	const char *key;		/* owned by the set */
	uint32_t procs;			/* processes added with pm_groups_add */
	struct pm_quick quick;		/* sums; longest_ns the maximum */
	uint32_t exact_procs;		/* processes added with pm_groups_add_exact */
	struct pm_account exact;	/* sums; estimate if any was; source the least exact */
	uint64_t xshared;		/* bytes of frames other groups map too (pm_xshare); summed when folded */
};

struct pm_groups;

/* pm_groups_new - an empty set of groups. NULL with errno ENOMEM. Free with pm_groups_free(). */
PM_API struct pm_groups *pm_groups_new(void);

/* pm_groups_free - free the set and its keys. NULL is fine. */
PM_API void pm_groups_free(struct pm_groups *g);

/*
 * pm_groups_add - add one process's cheap figures to the group @key (made
 * when new; @key is copied). Returns 0 or -ENOMEM.
 */
PM_API int pm_groups_add(struct pm_groups *g, const char *key, const struct pm_quick *q);

/* pm_groups_add_exact - add one process's pm_account_process() figures to group @key. 0 or -ENOMEM. */
PM_API int pm_groups_add_exact(struct pm_groups *g, const char *key, const struct pm_account *a);

/* pm_groups_add_xshared - add @bytes to group @key's xshared (pm_xshare_finish). 0 or -ENOMEM. */
PM_API int pm_groups_add_xshared(struct pm_groups *g, const char *key, uint64_t bytes);

/* pm_groups_find - the index of group @key (for pm_groups_at), or -ENOENT. */
PM_API int pm_groups_find(const struct pm_groups *g, const char *key);

/*
 * pm_groups_cap - order the groups by size (rss + swap + hugetlb + exact
 * pss, largest first, ties by key) and, when there are more than @keep,
 * keep the @keep - 1 largest and fold the rest into one group named @other
 * (last). A group already named @other is folded too. *@folded gets the
 * number of groups folded. Returns 0, -EINVAL (@keep 0) or -ENOMEM (the
 * set is then unchanged but for its order).
 */
PM_API int pm_groups_cap(struct pm_groups *g, size_t keep, const char *other, size_t *folded);

/* pm_groups_count - the number of groups. */
PM_API size_t pm_groups_count(const struct pm_groups *g);

/* pm_groups_at - group @i (borrowed until the next add, cap or free), NULL past the end. */
PM_API const struct pm_group *pm_groups_at(const struct pm_groups *g, size_t i);

/*
 * What groups share with each other. Each process added is walked once
 * (PM_WALK_ENTRIES) and the frames of its present pages that are not
 * exclusive (bit 56) and not the zero page are kept with the process's group
 * number, as runs of contiguous frames (16 bytes a run; past 4 MiB spilled in
 * sorted chunks to an unlinked file in $TMPDIR, so memory stays bounded);
 * pm_xshare_finish() merges them by frame and gives each group the bytes of
 * its distinct frames that at least one other group maps too. Needs visible
 * PFNs (root).
 */
struct pm_xshare;

/* pm_xshare_new - an empty set (page size from @ctx). NULL with errno ENOMEM. Free with pm_xshare_free(). */
PM_API struct pm_xshare *pm_xshare_new(struct pm_ctx *ctx);

/* pm_xshare_free - free the set. NULL is fine. */
PM_API void pm_xshare_free(struct pm_xshare *x);

/*
 * pm_xshare_add - add @t's shared frames to group number @group.
 * Returns 0, -EPERM when @t does not show PFNs, -ENOMEM, or -errno of the walk
 * (ESRCH, EACCES); frames added before an error stay.
 */
PM_API int pm_xshare_add(struct pm_xshare *x, struct pm_target *t, uint32_t group);

/* pm_xshare_add_pfn - add one frame of group @group (pure; what pm_xshare_add does per page). 0 or -ENOMEM. */
PM_API int pm_xshare_add_pfn(struct pm_xshare *x, uint64_t pfn, uint32_t group);

/*
 * pm_xshare_finish - add to @bytes[g] the bytes of group g's distinct frames
 * that another group maps too, for every group number below @ngroups. The
 * set is emptied: frames added afterwards are counted by the next call.
 * Returns 0, -EINVAL for a group number >= @ngroups, -ENOMEM, or -errno of
 * reading back the spill file (@bytes partly added on an error).
 */
PM_API int pm_xshare_finish(struct pm_xshare *x, uint64_t *bytes, size_t ngroups);

/* Classes of physical frames: each frame is in exactly one (the first that matches, in this order). */
enum pm_class {
	/*
	 * Free pages kpageflags flags buddy: every page of a free block since Linux 4.10, only
	 * its first before (the rest then in other); pm_classes_free() takes all free memory apart.
	 */
	PM_CLASS_BUDDY = 0,
	PM_CLASS_SLAB,
	PM_CLASS_PAGETABLE,	/* 4.19+; before, in other */
	PM_CLASS_ZERO,		/* the zero page and huge zero page */
	PM_CLASS_HUGETLB,
	PM_CLASS_KSM,
	PM_CLASS_ANON_THP,	/* anonymous, in a transparent huge page */
	PM_CLASS_ANON,
	PM_CLASS_SHMEM,		/* swap-backed, not anonymous: shmem, tmpfs */
	PM_CLASS_FILE,		/* on an LRU list otherwise: page cache */
	PM_CLASS_OTHER,		/* kernel allocations, reserved, vmalloc, ... */
	PM_CLASS_COUNT
};

/* Bytes of physical memory per class, from kpageflags. */
struct pm_classes {
	uint64_t bytes[PM_CLASS_COUNT];
	uint64_t frames;	/* frames read (holes and offline frames in none of the classes) */
};

/* pm_class_of - the class of one raw kpageflags word; PM_CLASS_COUNT for a hole or an offline frame. Pure. */
PM_API enum pm_class pm_class_of(uint64_t kpageflags);

/* pm_class_name - "buddy", "slab", ..., "other" (metric label values). Static string. */
PM_API const char *pm_class_name(enum pm_class c);

/*
 * pm_classes_read - read all of kpageflags through @k (in batches of 64 Ki
 * frames) and sum frames by class, @ctx's page size each.
 * Returns 0, or -errno of pm_kpage_end/pm_kpage_read (EACCES without root),
 * ENOMEM; @out is zeroed on failure.
 */
PM_API int pm_classes_read(struct pm_ctx *ctx, struct pm_kpage *k, struct pm_classes *out);

/*
 * pm_classes_free - take the free memory out of @c (as pm_classes_read
 * filled it) into @free_bytes. kpageflags flags every page of a free block
 * buddy since Linux 4.10 and only its first page before (the block's order
 * is not in kpageflags), so there the rest of a free block reads as other;
 * and pages on the per-CPU free lists are flagged nothing on any kernel.
 * @free_bytes gets ROOT/proc/meminfo's MemFree, the kernel's count of free
 * pages; PM_CLASS_BUDDY becomes 0 and PM_CLASS_OTHER loses MemFree less the
 * buddy bytes (at most what it holds: MemFree is read after the walk, and
 * what was allocated or freed meanwhile is the difference). The per-CPU
 * lists are not in MemFree either and stay in other. Returns 0,
 * -EINVAL, -EBADMSG (no valid MemFree line: pm_ctx_tree_error) or the
 * error of reading meminfo; @c is unchanged on failure.
 */
PM_API int pm_classes_free(struct pm_ctx *ctx, struct pm_classes *c, uint64_t *free_bytes);

#endif /* PAGEMAP_FLEET_H */
