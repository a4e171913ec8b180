/* pagemap/share.h - Sharing between processes: part of <pagemap.h>, which includes it (include that, not this). */
#ifndef PAGEMAP_SHARE_H
#define PAGEMAP_SHARE_H

#ifndef PAGEMAP_H
#error "include <pagemap.h>: it includes <pagemap/share.h> with what it needs"
#endif

/*
 * Which physical pages a set of processes share with each other and with
 * the rest of the system, per pair of mappings, in bytes.
 *
 * Each process added is walked once (pm_walk, PM_WALK_ENTRIES) and each
 * run of present pages with contiguous frames is recorded as (first frame,
 * pages, mapping), each run of swap entries as (swap type and first offset,
 * pages, mapping): 16 bytes per run, however long (fork-shared and THP
 * memory comes in long runs; at worst one run per page). Up to 262144 runs
 * (4 MiB) are held in memory; past that they are sorted and appended to an
 * unlinked temporary file in $TMPDIR (default /tmp; O_TMPFILE, else mkstemp
 * and unlink), so memory stays bounded however much is added (if no file
 * can be made, they stay in memory). pm_share_finish merges the sorted runs
 * (at most 8 MiB of read buffers), cuts the frame space where the set of
 * mappings changes, and looks each distinct frame up once in
 * /proc/kpagecount and /proc/kpageflags, in ascending batches through
 * pm_kpage_lookup (never one read per page). Then, per frame:
 *   - mapped by two processes of the set: it is shared in the set, and each
 *     pair of their mappings that maps it (one mapping of each process)
 *     gets its bytes;
 *   - its kpagecount is above the number of times the set maps it: some
 *     process outside the set maps it too ("outside"). Page-cache pages no
 *     process maps, kernel references and the swap cache do not count.
 * Bytes count each distinct frame once per scope: a mapping, a process, a
 * pair or the set that maps a frame at two addresses (KSM) counts it once.
 * Two mappings of one process mapping the same frame make no pair.
 *
 * What is left out, as smaps does: the zero page and the huge zero page,
 * frames with map count 0 and frames without a struct page. Hugetlb pages
 * (KPF_HUGE, when kpageflags is readable) are only counted in the hugetlb
 * fields, apart from everything else. A transparent huge page counts per
 * 4 KiB subpage with that subpage's map count; under CONFIG_NO_PAGE_MAPCOUNT
 * (6.15+) kpagecount is the average of a large folio, so "outside" is an
 * estimate for partly mapped large folios (see pm_account_process).
 * Swap slots held by two processes of the set are shared in the set; who
 * else holds a slot cannot be read, so swap has no "outside".
 *
 * The processes are read one after the other and kpagecount after that:
 * the answer describes no single instant, as with smaps.
 *
 * Needs PFNs (CAP_SYS_ADMIN) and a readable kpagecount (root): see
 * pm_share_add.
 */
struct pm_share;

/* Bytes of one scope: a mapping, a process, a pair of processes, or the whole set. */
struct pm_share_sum {
	uint64_t resident;	/* distinct frames mapped (not the zero page, not hugetlb) */
	uint64_t shared;	/* of those, frames another process of the set maps too */
	uint64_t outside;	/* of those, frames a process outside the set maps too */
	uint64_t swap;		/* distinct swap slots held */
	uint64_t swap_shared;	/* of those, slots another process of the set holds too */
	uint64_t hugetlb;	/* distinct hugetlb frames mapped, counted nowhere else */
};

/* One mapping of a process of the set, and what it shares. */
struct pm_share_map {
	pid_t pid;			/* as given to pm_target_open (0: self) */
	unsigned target;		/* index of its process, in pm_share_add order */
	struct pm_mapping map;		/* path is NUL-terminated here, owned by the handle */
	struct pm_share_sum sum;
};

/* Two mappings of two different processes of the set, and what they have in common. */
struct pm_share_pair {
	const struct pm_share_map *a, *b;	/* a's process was added before b's */
	uint64_t shared;		/* bytes of frames both map */
	uint64_t outside;		/* of those, bytes a process outside the set maps too */
	uint64_t swap;			/* bytes of swap slots both hold */
};

/*
 * pm_share_new - an empty set of processes.
 * @ctx: the context (must outlive the handle).
 * @k: an open pm_kpage to read kpagecount and kpageflags through
 *     (borrowed: it must outlive the handle), or NULL to open one; a failure
 *     to open it is then reported by pm_share_add.
 * Returns the handle, or NULL with errno EINVAL (@ctx NULL) or ENOMEM.
 * Free with pm_share_free().
 */
PM_API struct pm_share *pm_share_new(struct pm_ctx *ctx, struct pm_kpage *k);

/*
 * pm_share_add - walk process @t and record its mappings and pages.
 * @t may be closed after the call.
 * Returns 0, or -errno, checked in this order:
 *   -EINVAL  after pm_share_finish;
 *   -EPERM   PFNs hidden (pm_target_pfn_view is not PM_PFN_VISIBLE): the
 *            reader needs CAP_SYS_ADMIN in the initial user namespace (or a
 *            replayed capture recorded no frame numbers);
 *   the error opening /proc/kpagecount (-EACCES for non-root, -ENOENT);
 *   -EEXIST  a process with the same PID is in the set already;
 *   the errors of pm_walk_new and pm_walk_next: -ESRCH when the process
 *            exited or exec'd during the walk, -ENOMEM;
 *   a write error of the temporary file (-ENOSPC, -EIO; see the overview).
 * On failure nothing of @t is kept and the handle stays usable.
 */
PM_API int pm_share_add(struct pm_share *s, struct pm_target *t);

/*
 * pm_share_finish - look up the recorded frames and count what is shared
 * (see the overview). Frees the page records; afterwards only the results
 * can be read. Returns 0, -EINVAL (called twice), -ENOMEM, or a read error
 * of kpagecount, kpageflags or the temporary file (the handle is then
 * unusable: free it).
 */
PM_API int pm_share_finish(struct pm_share *s);

/*
 * pm_share_next_map - after pm_share_finish, the next mapping of the set,
 * in pm_share_add order, each process's in address order (also those that
 * share nothing). Returns 0 with *@out (valid until pm_share_free), 1 at
 * the end (the next call starts over), or -EINVAL before pm_share_finish.
 */
PM_API int pm_share_next_map(struct pm_share *s, const struct pm_share_map **out);

/*
 * pm_share_next_pair - after pm_share_finish, the next pair of mappings of
 * two different processes that have frames or swap slots in common, by @a
 * then @b in pm_share_next_map order. Returns 0 with *@out (valid until
 * pm_share_free), 1 at the end (the next call starts over), or -EINVAL
 * before pm_share_finish.
 */
PM_API int pm_share_next_pair(struct pm_share *s, const struct pm_share_pair **out);

/* pm_share_ntargets - how many processes were added successfully. */
PM_API unsigned pm_share_ntargets(const struct pm_share *s);

#define PM_SHARE_ALL	(-1)

/*
 * pm_share_sum - after pm_share_finish, the bytes of one scope into *@out:
 *   @a = PM_SHARE_ALL (and @b too): the whole set (shared: frames mapped by
 *        at least two of its processes; outside: frames of the set a
 *        process outside it maps too);
 *   @a a process index, @b = PM_SHARE_ALL: that process;
 *   @a and @b two process indexes: what both map (resident = shared: bytes
 *        of frames both map, outside: of those, mapped outside the set
 *        too; swap = swap_shared: slots both hold; hugetlb 0).
 * Process indexes count pm_share_add calls that succeeded, from 0.
 * Returns 0, or -EINVAL (before pm_share_finish, an index out of range,
 * @a equal to @b, or @a PM_SHARE_ALL without @b); *@out is zeroed then.
 */
PM_API int pm_share_sum(const struct pm_share *s, int a, int b, struct pm_share_sum *out);

/* pm_share_free - free the handle, its records and results. NULL is fine. */
PM_API void pm_share_free(struct pm_share *s);

#endif /* PAGEMAP_SHARE_H */
