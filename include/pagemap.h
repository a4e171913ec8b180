/* pagemap.h - libpagemap: decode and walk Linux /proc/PID/pagemap safely and fast. */
#ifndef PAGEMAP_H
#define PAGEMAP_H

/*
 * API families
 *
 *   Context   pm_ctx_*      one per run: the root prefix every kernel path goes
 *                           through ("/" live, or a captured tree), the probed
 *                           kernel features, the walker back end.
 *   Features  pm_features_* what the running kernel and this privilege level
 *                           allow: pagemap layout, PFN visibility,
 *                           PAGEMAP_SCAN, uffd-wp async, soft-dirty, kpage*.
 *   Target    pm_target_*   one process (by PID, or self) with its pagemap fd
 *                           kept open: PFN visibility is fixed at open.
 *   Maps      pm_maps_*     pure parser of one /proc/PID/maps line, and a
 *                           streaming iterator over a target's mappings.
 *   Entry     pm_entry_*    pure decoder of one 64-bit pagemap entry, every
 *                           layout the kernel has shipped since 2.6.25.
 *   Flags     pm_flag_*     the table of decoded page flags (bit, name,
 *                           letter, meaning) that help and filters derive from.
 *   Walk      pm_walk_*     runs of consecutive pages with identical state
 *                           over a virtual range, through PAGEMAP_SCAN or
 *                           batched pread, with the same records either way.
 *   KPF       pm_kpf_*      pure: the table of physical page flags (KPF_*,
 *                           page-types' letters), -b filter expressions,
 *                           flags to names and letters.
 *   Kpage     pm_kpage_*    batched reads of /proc/kpageflags, kpagecount
 *                           and kpagecgroup: contiguous PFN runs, or a
 *                           scattered set sorted and coalesced into runs.
 *   Procs     pm_procs_*    the processes of ROOT/proc with state, UID, comm.
 *   Audit     pm_audit_*    rowhammer exposure: what on this machine can learn
 *                           physical addresses or page-sharing facts, each
 *                           finding with a verdict, its evidence and the fix.
 *   Memcg     pm_memcg_*    a process's memory cgroup (ROOT/proc/PID/cgroup),
 *                           pure parser and path matching included.
 *   Account   pm_account_*  RSS, PSS, USS, swap, shared bytes of a process,
 *                           hugetlb bytes apart: pagemap + kpagecount when
 *                           readable (exact), else the kernel's smaps_rollup.
 *   Fleet     pm_quick_*, pm_groups_*, pm_xshare_*, pm_class*
 *                           for exporters: cheap per-process figures from
 *                           pagemap bits alone, named groups summed and
 *                           capped, what groups share with each other,
 *                           physical memory by frame class.
 *   Share     pm_share_*    what a set of processes share with each other
 *                           and with the rest of the system, per pair of
 *                           mappings: pagemap + kpagecount (root).
 *   Watch     pm_watch_*    which pages of a process (the caller or another)
 *                           were written since the last reset: uffd-wp async
 *                           + PAGEMAP_SCAN, soft-dirty, or mprotect.
 *   WSS       pm_wss_*      the working set over a window: idle page tracking
 *                           or accessed bits (clear_refs 1 + smaps Referenced).
 *   Cache     pm_cache_*    page cache per file (cachestat), joined to the
 *                           processes that map the files or hold them open.
 *   Snapshot  pm_snapshot_* one file holding a captured tree (maps, pagemap,
 *                           frames' kpage* words, features): write, check,
 *                           iterate, extract; pm_ctx_new_snapshot replays it.
 *   Outfile   pm_outfile_*  the one way files are written: a temporary
 *                           published whole, never through or over what
 *                           someone else planted, mode by what it holds.
 *   Diff      pm_diff_*     what changed in one process between two views
 *                           (snapshots): mappings matched, pages classified.
 *
 * Conventions: functions returning int give 0 on success and -errno on
 * failure; functions returning a pointer give NULL and set errno. Iterators
 * (pm_*_next) return 0 with an item, 1 at the end, <0 on error; the item is
 * borrowed until the next call or until its handle is freed. Every
 * destructor accepts NULL. The library never prints and never exits.
 *
 * Errors with a meaning of their own here:
 *   -ESRCH   the target has no memory any more: it exited or exec'd since it
 *            was opened (reads return 0, PAGEMAP_SCAN fails), or it is a
 *            zombie or a kernel thread. Never reported as empty memory.
 *   -ENOENT  no such process.
 *   -EACCES  not allowed to read the target (other user, not dumpable, LSM).
 *   -EPERM   the kernel refuses pagemap to readers without CAP_SYS_ADMIN
 *            (Linux 4.0 and 4.1).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PM_API __attribute__((visibility("default")))

/* ------------------------------------------------------------------ */
/* Context                                                            */
/* ------------------------------------------------------------------ */

struct pm_ctx;

/*
 * pm_ctx_new - create a context.
 * @root: directory that stands for "/" for every kernel path (/proc, /sys),
 *        or NULL for the live system. A captured tree may hold FILE.errno
 *        files: opening FILE then fails with that recorded errno (a name
 *        such as "EPERM" or a number), so refused opens replay too.
 * Returns the context, or NULL with errno set (ENOMEM; ENOTDIR or ENOENT if
 * @root is not a directory). Free with pm_ctx_free().
 * The environment variable PAGEMAP_BACKEND=pread|scan forces the walker's
 * back end (see pm_ctx_set_backend); PAGEMAP_DEBUG=1 sends debug lines to
 * the log callback.
 */
PM_API struct pm_ctx *pm_ctx_new(const char *root);

/* pm_ctx_free - free a context and its probed features. NULL is fine. */
PM_API void pm_ctx_free(struct pm_ctx *ctx);

/* pm_ctx_root - the root prefix ("/" for the live system). Borrowed. */
PM_API const char *pm_ctx_root(const struct pm_ctx *ctx);

/*
 * pm_ctx_tree_error - what was wrong with the replayed tree, or NULL.
 * A captured tree is untrusted input: a file that is not a regular file (a
 * FIFO would block, a device would be read), a truncated pagemap, a maps line
 * out of order or not page-aligned, a recorded page or PMD size out of range.
 * The call that met it failed with -EBADMSG (or, where the library goes on
 * without the file, nothing failed); this gives one line naming the file and
 * the reason, for the first such problem. Always NULL for the live system.
 * Borrowed, valid until pm_ctx_free().
 */
PM_API const char *pm_ctx_tree_error(const struct pm_ctx *ctx);

/* Walker back ends. */
enum pm_backend {
	PM_BACKEND_AUTO = 0,	/* PAGEMAP_SCAN when the kernel has it, else pread */
	PM_BACKEND_PREAD,	/* batched pread of /proc/PID/pagemap */
	PM_BACKEND_SCAN,	/* PAGEMAP_SCAN ioctl (Linux 6.7+) */
};

/*
 * pm_ctx_set_backend - choose the walker back end for walks created later.
 * Returns 0, or -EINVAL for an unknown value. Choosing PM_BACKEND_SCAN on a
 * kernel without PAGEMAP_SCAN makes pm_walk_new() fail with -EOPNOTSUPP.
 */
PM_API int pm_ctx_set_backend(struct pm_ctx *ctx, enum pm_backend backend);

/* pm_backend_name - "auto", "pread" or "scan". Static string. */
PM_API const char *pm_backend_name(enum pm_backend backend);

/*
 * pm_ctx_set_log - receive debug lines through @fn (NULL: back to stderr,
 * and only while PAGEMAP_DEBUG is set). @line has no trailing newline.
 */
typedef void (*pm_log_fn)(void *data, const char *line);
PM_API void pm_ctx_set_log(struct pm_ctx *ctx, pm_log_fn fn, void *data);

/*
 * pm_ctx_set_check - have long calls on @ctx ask @fn whether to go on:
 * before each pagemap read of a walk or of pm_target_read() of more than
 * one entry (a one-word read is a liveness probe) and before each
 * PAGEMAP_SCAN step, so a caller can stop a walk of a huge address space
 * (e.g. when its user pressed Ctrl-C) without waiting for its end. A
 * negative return of @fn stops the call, which fails with that value
 * (-EINTR is the natural one). @fn runs in the calling thread, possibly in
 * several threads at once; it must be cheap. NULL (the default): never stop.
 */
typedef int (*pm_check_fn)(void *data);
PM_API void pm_ctx_set_check(struct pm_ctx *ctx, pm_check_fn fn, void *data);

/* ------------------------------------------------------------------ */
/* Features                                                           */
/* ------------------------------------------------------------------ */

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

/* PAGEMAP_SCAN categories, as in the kernel's uapi (PAGE_IS_*). */
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
 * PM_YES before 6.15).
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

/* pm_layout_name - "pshift", "v2", "current" or "unknown". Static string. */
PM_API const char *pm_layout_name(enum pm_layout layout);

/* pm_pfn_view_name - "visible", "hidden", "refused" or "unknown". */
PM_API const char *pm_pfn_view_name(enum pm_pfn_view view);

/* ------------------------------------------------------------------ */
/* Target                                                             */
/* ------------------------------------------------------------------ */

struct pm_target;

/* What /proc/PID/stat says a process is. */
enum pm_proc_state {
	PM_PROC_GONE = 0,	/* no such process */
	PM_PROC_RUNNING,	/* a user process with memory */
	PM_PROC_ZOMBIE,
	PM_PROC_KTHREAD,
};

/*
 * pm_proc_state - classify @pid (0 = self) from ROOT/proc/PID/stat, to turn
 * an -ESRCH into a precise message. Never fails: an unreadable stat is
 * PM_PROC_GONE.
 */
PM_API enum pm_proc_state pm_proc_state(struct pm_ctx *ctx, pid_t pid);

/*
 * pm_target_open - open process @pid (0 = the calling process, "self") and
 * keep its pagemap fd for the handle's life.
 * Returns the handle, or NULL with errno: ENOENT (no such process), ESRCH
 * (zombie, kernel thread, or exited), EACCES (not permitted), EPERM (kernel
 * 4.0-4.1 requires CAP_SYS_ADMIN), ENOMEM; replayed trees only: EBADMSG (the
 * pagemap is not a regular file, or the tree's page or PMD size is out of
 * range: pm_ctx_tree_error says which). The context must outlive it.
 */
PM_API struct pm_target *pm_target_open(struct pm_ctx *ctx, pid_t pid);

/* pm_target_close - close the fds and free the handle. NULL is fine. */
PM_API void pm_target_close(struct pm_target *t);

/* pm_target_pid - the PID given to pm_target_open (0 for self). */
PM_API pid_t pm_target_pid(const struct pm_target *t);

/*
 * pm_target_pfn_view - what this handle's fd shows of frame numbers:
 * PM_PFN_VISIBLE or PM_PFN_HIDDEN (fixed at open by the opener's
 * credentials; for a replayed tree, decided from the data).
 */
PM_API enum pm_pfn_view pm_target_pfn_view(const struct pm_target *t);

/*
 * pm_target_read - read the raw entries for @count pages starting at
 * virtual page number @vpn into @buf. Handles EINTR, short reads and
 * partial words. Entries at or above the readable end of the address space
 * read as 0 only if the kernel says so (end of task_size).
 * Returns the number of entries read (< @count only at task_size),
 * -ESRCH if the target's mm is gone, or another -errno.
 */
PM_API ssize_t pm_target_read(struct pm_target *t, uint64_t vpn, uint64_t *buf, size_t count);

/* ------------------------------------------------------------------ */
/* Maps                                                               */
/* ------------------------------------------------------------------ */

/* What a mapping is, from its path field and inode. */
enum pm_map_kind {
	PM_MAP_ANON = 0,	/* no path, inode 0 */
	PM_MAP_FILE,		/* a path and an inode */
	PM_MAP_HEAP,		/* [heap] */
	PM_MAP_STACK,		/* [stack] */
	PM_MAP_VDSO,		/* [vdso] */
	PM_MAP_VVAR,		/* [vvar], [vvar_vclock]: VM_PFNMAP, always reads empty */
	PM_MAP_VSYSCALL,	/* [vsyscall]: above task_size, unreadable */
	PM_MAP_ANON_NAMED,	/* [anon:NAME] or [anon_shmem:NAME] */
	PM_MAP_SPECIAL,		/* any other [name] */
};

#define PM_PROT_READ	(1u << 0)
#define PM_PROT_WRITE	(1u << 1)
#define PM_PROT_EXEC	(1u << 2)
#define PM_MAP_SHARED	(1u << 3)	/* 's' in perms; otherwise private 'p' */

struct pm_mapping {
	uint64_t start, end;		/* [start, end) virtual */
	uint64_t offset;		/* file offset */
	uint32_t dev_major, dev_minor;
	uint64_t inode;
	uint32_t prot;			/* PM_PROT_*, PM_MAP_SHARED */
	char perms[5];			/* as printed, "rw-p" */
	enum pm_map_kind kind;
	bool deleted;			/* path ends with " (deleted)" (kept in path) */
	const char *path;		/* bytes after the inode field, not NUL-terminated */
	size_t path_len;		/* may be 0 */
};

/*
 * pm_maps_parse_line - parse one /proc/PID/maps line (pure, no I/O).
 * @line, @len: the bytes, with or without the trailing newline; need not be
 * NUL-terminated. @out->path points into @line.
 * Returns 0, or -EINVAL if the line is malformed (start > end included).
 */
PM_API int pm_maps_parse_line(const char *line, size_t len, struct pm_mapping *out);

struct pm_maps;

/*
 * pm_maps_open - start streaming @t's mappings from ROOT/proc/PID/maps.
 * There is no limit on the number of mappings; memory use is one line.
 * Returns the iterator or NULL with errno (ENOENT, ESRCH, EACCES, ENOMEM).
 */
PM_API struct pm_maps *pm_maps_open(struct pm_target *t);

/*
 * pm_maps_next - the next mapping in address order.
 * Returns 0 with *@out set (borrowed until the next call), 1 at the end,
 * -EINVAL on a malformed line, or another -errno from reading.
 */
PM_API int pm_maps_next(struct pm_maps *it, const struct pm_mapping **out);

/* pm_maps_close - free the iterator. NULL is fine. */
PM_API void pm_maps_close(struct pm_maps *it);

/* ------------------------------------------------------------------ */
/* Entries and page flags                                             */
/* ------------------------------------------------------------------ */

/* Decoded page state, the same bits whatever the layout or back end. */
#define PM_PAGE_PRESENT		(1u << 0)	/* in RAM (bit 63) */
#define PM_PAGE_SWAPPED		(1u << 1)	/* a swap entry (bit 62, not a marker) */
#define PM_PAGE_FILE		(1u << 2)	/* page cache or shmem (bit 61) */
#define PM_PAGE_EXCLUSIVE	(1u << 3)	/* mapped only here (bit 56, 4.2+) */
#define PM_PAGE_SOFTDIRTY	(1u << 4)	/* soft-dirty (bit 55, 3.11+) */
#define PM_PAGE_UFFD_WP		(1u << 5)	/* userfaultfd write-protected (bit 57, 5.13+) */
#define PM_PAGE_GUARD		(1u << 6)	/* guard region marker (bit 58, 6.15+) */
#define PM_PAGE_MARKER		(1u << 7)	/* bit 62 set by a PTE marker, not swap */
#define PM_PAGE_NONSWAP		(1u << 8)	/* bit 62 set by migration/hwpoison/device entry */
/*
 * PM_PAGE_THP: PMD-mapped transparent or hugetlb page. PAGEMAP_SCAN says so
 * directly; the pread back end infers it from 2 MiB-aligned contiguous frames
 * (confirmed by kpageflags when readable), so a huge page whose PMD was split
 * but whose frames stayed together still reads THP there.
 */
#define PM_PAGE_THP		(1u << 9)
#define PM_PAGE_ZERO		(1u << 10)	/* the zero page or huge zero page (walker) */
#define PM_PAGE_FRAME		(1u << 11)	/* pfn or swap type/offset fields are real */
#define PM_PAGE_NFLAGS		12

/* One row of the flag table. */
struct pm_flag_info {
	uint32_t bit;		/* PM_PAGE_* value */
	const char *name;	/* lower-case column name, "present" */
	char letter;		/* one-letter code for compact flag strings */
	const char *meaning;	/* one line for help */
};

/* pm_flag_table - the table of PM_PAGE_* flags; *@n gets its length. Static. */
PM_API const struct pm_flag_info *pm_flag_table(size_t *n);

/*
 * pm_flags_letters - write @flags as one letter per flag in table order,
 * '-' where clear, into @buf of @size bytes (PM_PAGE_NFLAGS + 1 suffices).
 * Returns @buf.
 */
PM_API char *pm_flags_letters(uint32_t flags, char *buf, size_t size);

/*
 * What a flag needs besides a kernel that reports it (pm_flag_fact.needs).
 * PM_NEED_SOFT_DIRTY and PM_NEED_GUARD name a probed answer in struct
 * pm_features: PM_NO makes the flag unknown, PM_YES makes the kernel version
 * irrelevant. Under PAGEMAP_SCAN an accepted category proves the kernel
 * support (guard regions), but not the kernel config (soft-dirty).
 */
#define PM_NEED_FRAMES		(1u << 0)	/* the reader sees frame numbers (pm_decode_info.frame_visible) */
#define PM_NEED_ENTRIES		(1u << 1)	/* entries are read: under PAGEMAP_SCAN only with PM_WALK_ENTRIES */
#define PM_NEED_SOFT_DIRTY	(1u << 2)	/* CONFIG_MEM_SOFT_DIRTY (pm_features.soft_dirty) */
#define PM_NEED_GUARD		(1u << 3)	/* MADV_GUARD_INSTALL guard regions (pm_features.guard_regions) */
#define PM_NEED_ZERO_PFN	(1u << 4)	/* the zero page's frame is known (pm_features.zero_pfn), or there is none */

/* One row of the kernel facts behind a PM_PAGE_* flag. */
struct pm_flag_fact {
	uint32_t bit;			/* PM_PAGE_* value */
	int raw_bit;			/* the pagemap entry bit that is this flag; -1 when it is derived
					   (from the frame field, the swap type, or frames side by side) */
	unsigned since_major, since_minor;	/* first kernel that reports it; 0.0: every kernel */
	uint32_t needs;			/* PM_NEED_* */
	uint64_t scan_category;		/* PM_CAT_* that gives it under PAGEMAP_SCAN without reading
					   entries; 0 when entries must be read */
};

/*
 * pm_flag_facts - the kernel facts of each PM_PAGE_* flag: the rows of
 * pm_flag_table() in its order, then PM_PAGE_FRAME (which has no letter);
 * *@n gets the length. Static.
 */
PM_API const struct pm_flag_fact *pm_flag_facts(size_t *n);

/* How pages are read, for pm_flag_lack(). */
struct pm_read_how {
	enum pm_layout layout;		/* of the entries (pm_target_decode_info) */
	bool frames;			/* the reader sees frame numbers */
	bool scan;			/* the PAGEMAP_SCAN back end (else pread) */
	bool entries;			/* PM_WALK_ENTRIES: the scan back end reads entries too */
};

/* Why a flag cannot be told: pm_flag_lack()'s answer. */
enum pm_lack {
	PM_LACK_NONE = 0,	/* it can be told: clear means clear */
	PM_LACK_KERNEL,		/* the kernel is older than the flag (since_major.since_minor) */
	PM_LACK_LAYOUT,		/* this entry layout has no such bit (bits 55-60 before 4.2) */
	PM_LACK_CONFIG,		/* the probe says the kernel lacks what it needs (PM_NEED_SOFT_DIRTY, _GUARD) */
	PM_LACK_FRAMES,		/* frame numbers are hidden from this reader */
	PM_LACK_ZERO_PFN,	/* the zero page's frame is not known */
	PM_LACK_ENTRIES,	/* the scan back end does not read entries (no PM_WALK_ENTRIES) */
	PM_LACK_SCAN,		/* PAGEMAP_SCAN here does not accept the flag's category */
};

/*
 * pm_flag_lack - can flag @flag (one PM_PAGE_* bit) be told on the kernel of
 * @f, read as @how says? The one rule behind pm_walk_known() and the tool's
 * "shown as -" notes, from pm_flag_facts(). Pure.
 * Returns PM_LACK_NONE (0), the first reason it cannot (enum pm_lack, in the
 * order listed there), or -EINVAL for a value that is not one known flag.
 */
PM_API int pm_flag_lack(const struct pm_features *f, const struct pm_read_how *how, uint32_t flag);

/*
 * pm_kernel_at_least - is the kernel of @f at least @major.@minor? True
 * when its version is unknown (a replayed tree without one): the library
 * then assumes a current kernel. The one version check of the library and
 * the tool. Pure.
 */
PM_API bool pm_kernel_at_least(const struct pm_features *f, unsigned major, unsigned minor);

/* How to read raw entries. */
struct pm_decode_info {
	enum pm_layout layout;
	unsigned page_shift;		/* for the page-shift layout's sanity check */
	bool frame_visible;		/* PFN/swap fields are shown to this reader */
	bool swap_active;		/* some swap area is on (helps tell uffd-wp markers apart when frames are hidden) */
};

struct pm_entry {
	uint64_t raw;
	uint32_t flags;			/* PM_PAGE_* (never THP or ZERO: those need the walker) */
	uint8_t page_shift;		/* PM_LAYOUT_PSHIFT only: bits 55-60 */
	uint8_t swap_type;		/* with PM_PAGE_FRAME and bit 62 */
	uint64_t swap_offset;
	uint64_t pfn;			/* with PM_PAGE_FRAME and PM_PAGE_PRESENT */
};

/* Swap type the kernel uses for PTE markers (uffd-wp, guard, poison). */
#define PM_SWAP_TYPE_MARKER	31

/*
 * pm_entry_decode - decode raw entry @raw as read under @info (pure).
 * Returns 0, or -EINVAL if @raw is impossible in that layout (e.g. present
 * and swapped at once, or a page-shift field that is not @info->page_shift);
 * @out is filled either way.
 */
PM_API int pm_entry_decode(uint64_t raw, const struct pm_decode_info *info, struct pm_entry *out);

/*
 * pm_target_decode_info - how the entries pm_target_read() returns for @t
 * decode: the layout found when @t was opened, the page shift, whether
 * frames are visible, whether swap is on. With pm_entry_decode() it reads
 * single pages without a walk (no maps). Pure.
 */
PM_API void pm_target_decode_info(const struct pm_target *t, struct pm_decode_info *out);

/* ------------------------------------------------------------------ */
/* Walk                                                               */
/* ------------------------------------------------------------------ */

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

/* pm_walk_free - free the walk. NULL is fine. */
PM_API void pm_walk_free(struct pm_walk *w);

/* Bytes by state, summed over runs (e.g. per mapping, or a whole process). */
struct pm_usage {
	uint64_t present, swapped, file, exclusive, thp, softdirty, uffdwp, guard, zero;
};

/* pm_usage_add - add @run's bytes to @u under each flag the run has (pure). */
PM_API void pm_usage_add(struct pm_usage *u, const struct pm_run *run);

/*
 * Bytes by page flag: by_flag[i] sums the runs that have flag 1u << i
 * (PM_PAGE_*). Room for every bit of the flags word, so a new flag changes
 * no layout; struct pm_usage is the same sums for the first nine flags.
 */
struct pm_flag_bytes {
	uint64_t by_flag[32];
};

/* pm_flag_bytes_add - add @run's bytes to @b under each flag the run has (pure). */
PM_API void pm_flag_bytes_add(struct pm_flag_bytes *b, const struct pm_run *run);

/* ------------------------------------------------------------------ */
/* Per-mapping usage                                                  */
/* ------------------------------------------------------------------ */

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

/* pm_mapstat_walk - the walk behind the iterator, for pm_walk_known/pm_walk_backend. */
PM_API const struct pm_walk *pm_mapstat_walk(const struct pm_mapstat *it);

/* pm_mapstat_close - free the iterator. NULL is fine. */
PM_API void pm_mapstat_close(struct pm_mapstat *it);

/* ------------------------------------------------------------------ */
/* Physical page flags (KPF)                                          */
/* ------------------------------------------------------------------ */

/*
 * Bits of a /proc/kpageflags word (the kernel's KPF_* numbers). Bits 0-26
 * are the stable uapi; 32-42 are kernel-internal ("subject to change");
 * 47-63 are page-types' overloaded pseudo-bits, never reported by the
 * kernel: pm_kpf_cook() and the caller fill them.
 */
#define PM_KPF_COMPOUND_HEAD	15
#define PM_KPF_COMPOUND_TAIL	16
#define PM_KPF_HUGE		17
#define PM_KPF_NOPAGE		20
#define PM_KPF_THP		22
#define PM_KPF_ZERO_PAGE	24
#define PM_KPF_ANON		12
#define PM_KPF_SOFTDIRTY	40
#define PM_KPF_ANON_EXCLUSIVE	47
#define PM_KPF_FILE		61	/* pseudo: the pagemap entry's file bit */
#define PM_KPF_SWAP		62	/* pseudo: the pagemap entry's swap bit */
#define PM_KPF_MMAP_EXCLUSIVE	63	/* pseudo: the pagemap entry's exclusive bit */
#define PM_KPF_INTERNAL_MASK	0xffffffff00000000ULL	/* bits shown only in raw mode */

/* One row of the KPF table. */
struct pm_kpf_info {
	uint32_t bit;		/* bit number, 0-63 */
	const char *name;	/* page-types' long name, "anonymous" */
	char letter;		/* page-types' letter, 'a'; some raw-only letters repeat stable ones */
	const char *meaning;	/* one line for help */
	bool internal;		/* kernel-internal (32+) or pseudo-bit: raw mode only */
};

/*
 * pm_kpf_table - the KPF table in bit order, stable bits first; *@n gets
 * its length. Static, never freed.
 */
PM_API const struct pm_kpf_info *pm_kpf_table(size_t *n);

/*
 * pm_kpf_cook - the flags page-types shows for kpageflags word @flags.
 * @raw false: hide kernel-internal bits 32-63 and compound head/tail of
 * pages that are not hugetlb. @raw true: unfold the overloaded bits
 * (owner_2 on an anon page is anon_exclusive, reclaim without writeback is
 * readahead, active/error on a slab page are slub_frozen/slub_debug).
 * Pure; returns the cooked word.
 */
PM_API uint64_t pm_kpf_cook(uint64_t flags, bool raw);

/*
 * pm_kpf_describe - write the names of the bits of @flags, comma separated
 * in bit order, into @buf of @size bytes; a bit without a name is written
 * "bitN". Always NUL-terminates when @size > 0.
 * Returns the length written, or -ENOSPC if @buf was too small (it then
 * holds a truncated list). Pure.
 */
PM_API int pm_kpf_describe(uint64_t flags, char *buf, size_t size);

/*
 * pm_kpf_letters - page-types' symbolic form of @flags: one letter per
 * table row in table order, '_' where clear; stable bits only unless @raw.
 * @buf of @size bytes (64 suffices). Returns @buf, truncated to fit.
 */
PM_API char *pm_kpf_letters(uint64_t flags, bool raw, char *buf, size_t size);

/* One -b term: flags match when (flags & mask) == value, or, with @any, when (flags & mask) != 0. */
struct pm_kpf_term {
	uint64_t mask, value;
	bool any;
};

#define PM_KPF_MAX_TERMS 64

/* A conjunction of terms (repeat -b to narrow); zero-initialise before use. */
struct pm_kpf_filter {
	unsigned n;
	struct pm_kpf_term term[PM_KPF_MAX_TERMS];
};

/*
 * pm_kpf_parse - add one page-types -b expression to @f (pure). Forms:
 *   a,b      any of the bits set
 *   a,~b     a set and b clear (every ~ term clear, every other set)
 *   =a,b     exactly these bits, all others clear
 *   a,b=a    under the mask a,b the flags equal a
 * Every expression the kernel's tools/mm/page-types accepts means what it
 * means there. A bit is, in this order: a prefix of "compound" (head and
 * tail: "c"), a prefix of a long name, the first in bit order winning
 * ("anon" is anonymous, "u" uptodate, "a" active), or a number (0x1000: a
 * mask of bits). Empty terms add nothing, ~terms of the =-forms are ignored,
 * and text after a second '=' too, as there. Beyond page-types: a single
 * table letter that is no prefix ('L' locked, 'x' ksm; stable bits first).
 * Returns 0, -EINVAL for an unknown name or a malformed number (f is
 * unchanged), -E2BIG when @f already holds PM_KPF_MAX_TERMS terms.
 */
PM_API int pm_kpf_parse(struct pm_kpf_filter *f, const char *expr);

/* pm_kpf_match - do @flags pass every term of @f? An empty filter passes everything. Pure. */
PM_API bool pm_kpf_match(const struct pm_kpf_filter *f, uint64_t flags);

/* ------------------------------------------------------------------ */
/* Physical frames (kpageflags, kpagecount, kpagecgroup)              */
/* ------------------------------------------------------------------ */

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

/* ------------------------------------------------------------------ */
/* Processes                                                          */
/* ------------------------------------------------------------------ */

/* One process of ROOT/proc, as pm_procs_next() sees it. */
struct pm_proc {
	pid_t pid;
	enum pm_proc_state state;	/* from ROOT/proc/PID/stat; PM_PROC_GONE if it exited meanwhile */
	bool uid_known;			/* ROOT/proc/PID/status had a Uid: line */
	uid_t uid;			/* the real UID, when uid_known */
	char comm[64];			/* the command name from stat ("" if gone) */
};

struct pm_procs;

/*
 * pm_procs_open - iterate over the processes of ROOT/proc (every directory
 * whose name is a number), in directory order. Memory use is one directory
 * stream.
 * Returns the iterator or NULL with errno (ENOENT, EACCES, ENOMEM). Free
 * with pm_procs_close(); the context must outlive it.
 */
PM_API struct pm_procs *pm_procs_open(struct pm_ctx *ctx);

/*
 * pm_procs_next - the next process, classified from its stat and status
 * files. A process that exited between the directory read and the file
 * reads comes back with state PM_PROC_GONE (the caller counts it).
 * Returns 0 with *@out (borrowed until the next call), 1 at the end, or
 * -errno from reading the directory.
 */
PM_API int pm_procs_next(struct pm_procs *it, const struct pm_proc **out);

/* pm_procs_close - free the iterator. NULL is fine. */
PM_API void pm_procs_close(struct pm_procs *it);

/* ------------------------------------------------------------------ */
/* Audit                                                              */
/* ------------------------------------------------------------------ */

/* What a finding says about exposure. */
enum pm_verdict {
	PM_VERDICT_OK = 0,	/* nothing learnt here by an unprivileged process */
	PM_VERDICT_EXPOSED,	/* physical addresses, contiguity or sharing are learnt */
	PM_VERDICT_UNKNOWN,	/* the evidence could not be read */
};

/* One finding of an audit. Strings are borrowed from the handle. */
struct pm_finding {
	const char *name;	/* the check: "pfn-unprivileged", "kpageflags", "thp", ... */
	const char *subject;	/* what was examined: a path, or "pid 1 (systemd)" */
	enum pm_verdict verdict;
	const char *evidence;	/* what was read, in words */
	const char *fix;	/* what would close it; NULL when there is nothing to do */
	pid_t pid;		/* a process row of "cap-sys-admin": its PID, else 0 */
	bool uid_known;
	uid_t uid;		/* that process's effective UID, when uid_known */
	const char *comm;	/* that process's command name, else NULL */
};

struct pm_audit;

/*
 * pm_audit_new - an audit of the machine behind @ctx (live, or a replayed
 * tree: every kernel file is read through the context's root).
 * Returns the handle or NULL with errno (ENOMEM). The context must outlive
 * it; free with pm_audit_free().
 */
PM_API struct pm_audit *pm_audit_new(struct pm_ctx *ctx);

/*
 * pm_audit_add_path - also look for pagemap snapshot files holding
 * unscrambled frame numbers at @path (a file, or a directory searched
 * recursively without following symbolic links). @path is a path of the
 * machine the caller runs on, not under the context's root. Copied.
 * Returns 0, -EINVAL after pm_audit_run(), or -ENOMEM.
 */
PM_API int pm_audit_add_path(struct pm_audit *a, const char *path);

#define PM_AUDIT_NO_CHILD	(1u << 0)	/* do not fork the uid-65534 child (below) */

/*
 * pm_audit_run - make the findings (once), in this order:
 *   pfn-unprivileged   do readers without CAP_SYS_ADMIN see frame numbers:
 *                      the kernel version's rule (before 4.0 yes, 4.0-4.1
 *                      EPERM, 4.2+ zeroed) and, where possible, the effect:
 *                      live as root, a forked child that drops to uid 65534
 *                      (setresuid, no capabilities) reads its own pagemap
 *                      entry of a written page; live without root, this
 *                      process's own view; replayed, what an unprivileged
 *                      capture recorded in ROOT/pagemap-features.
 *   pagemap-file, kpageflags, kpagecount, kpagecgroup, page-idle
 *                      the mode and owner of /proc/self/pagemap, the
 *                      /proc/kpage* files and /sys/kernel/mm/page_idle/bitmap:
 *                      exposed when anyone but root may read or write them.
 *                      A replayed tree records them as FILE.mode ("0400 0 0":
 *                      octal mode, UID, GID); without one the verdict is
 *                      unknown, unless the file is recorded absent (ENOENT).
 *   cap-sys-admin      the processes holding CAP_SYS_ADMIN (CapEff) in the
 *                      initial user namespace, which read every frame number:
 *                      one summary row, then one row per process (kernel
 *                      threads and zombies left out). Root's are expected
 *                      (ok); a holder with another effective UID is exposed.
 *   thp, hugetlb       can an unprivileged process get 2 MiB (or larger) of
 *                      known physical contiguity: transparent_hugepage/enabled
 *                      (always, madvise; on 6.1+ MADV_COLLAPSE ignores
 *                      "never"), and huge page pools (nr_hugepages,
 *                      nr_overcommit_hugepages) that MAP_HUGETLB takes from
 *                      without privilege.
 *   exclusive-bit      with KSM running (/sys/kernel/mm/ksm/run = 1), bit 56
 *                      (4.2+, shown to every reader) tells a process that a
 *                      page of its own was merged with another's.
 *   snapshots          per path added: the snapshot files found, one row
 *                      each ("snapshot"), exposed when they hold frame numbers.
 * Replayed, a file the tree does not hold gives unknown, never ok: only a
 * recorded FILE.errno of ENOENT says that the kernel has no such file.
 * @flags: PM_AUDIT_*. Returns 0, or -errno: -ENOMEM, -EBADMSG (a replayed
 * tree is damaged: pm_ctx_tree_error), -EALREADY if it ran before.
 */
PM_API int pm_audit_run(struct pm_audit *a, unsigned flags);

/*
 * pm_audit_next - the next finding, in the order above.
 * Returns 0 with *@out (borrowed until pm_audit_free), 1 at the end, or
 * -EINVAL before pm_audit_run().
 */
PM_API int pm_audit_next(struct pm_audit *a, const struct pm_finding **out);

/*
 * pm_audit_count - how many findings have verdict @v (the per-process and
 * per-file rows counted with the rest).
 */
PM_API unsigned pm_audit_count(const struct pm_audit *a, enum pm_verdict v);

/* pm_audit_free - free the handle and its findings. NULL is fine. */
PM_API void pm_audit_free(struct pm_audit *a);

/* pm_verdict_name - "ok", "exposed" or "unknown". Static string. */
PM_API const char *pm_verdict_name(enum pm_verdict v);

/* ------------------------------------------------------------------ */
/* Memory cgroups                                                     */
/* ------------------------------------------------------------------ */

/*
 * pm_memcg_parse - pure: the memory cgroup path in the text of a
 * /proc/PID/cgroup file (@len bytes at @text, NUL bytes allowed). A cgroup
 * v1 line "ID:CONTROLLERS:PATH" whose controllers include "memory" wins;
 * otherwise the cgroup v2 line "0::PATH". Malformed lines are skipped.
 * Copies PATH, NUL-terminated, into @buf of @size bytes.
 * Returns 0, -ENODATA (no such line), -ERANGE (@buf too small) or
 * -EBADMSG (the line's path is empty).
 */
PM_API int pm_memcg_parse(const char *text, size_t len, char *buf, size_t size);

/*
 * pm_memcg_of - the memory cgroup of process @pid, read from
 * ROOT/proc/PID/cgroup through the context's root prefix (a replayed tree's
 * recorded errors apply; a FIFO or directory there is refused, never read).
 * Fills @buf as pm_memcg_parse() does.
 * Returns 0, -EINVAL (@pid <= 0 or no buffer), -ENOENT or -ESRCH (no such
 * process, or it exited), -EACCES, -EBADMSG (see pm_ctx_tree_error; or an
 * empty path), -ENODATA, -ERANGE, -ENOMEM.
 */
PM_API int pm_memcg_of(struct pm_ctx *ctx, pid_t pid, char *buf, size_t size);

/*
 * pm_memcg_within - pure: is cgroup @cg the cgroup @path or below it, by
 * whole path components? @path starts with '/'; trailing slashes are
 * ignored, so "/" holds every cgroup and "/a/" holds "/a/b" but not "/ab".
 * False when either is NULL or @path is relative.
 */
PM_API bool pm_memcg_within(const char *cg, const char *path);

/*
 * pm_memcg_exists - does memory cgroup @path (absolute, as pm_memcg_of()
 * gives it) exist as a directory of ROOT/sys/fs/cgroup (cgroup v2) or
 * ROOT/sys/fs/cgroup/memory (v1)? Only stat()s, never opens.
 */
PM_API bool pm_memcg_exists(struct pm_ctx *ctx, const char *path);

/* ------------------------------------------------------------------ */
/* Per-process accounting                                             */
/* ------------------------------------------------------------------ */

/* Where a pm_account's figures come from. */
enum pm_account_source {
	PM_ACCOUNT_NONE = 0,
	PM_ACCOUNT_PAGEMAP,		/* a walk of pagemap joined with kpagecount (and kpageflags) */
	PM_ACCOUNT_SMAPS_ROLLUP,	/* the kernel's /proc/PID/smaps_rollup (kB granularity) */
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

/* pm_account_source_name - "pagemap", "smaps_rollup" or "none". Static string. */
PM_API const char *pm_account_source_name(enum pm_account_source source);

/* ------------------------------------------------------------------ */
/* Fleet: cheap figures, groups, frame classes (for exporters)        */
/* ------------------------------------------------------------------ */

/*
 * What pagemap's bits alone tell of a process, without kpagecount: cheap
 * enough for every scrape of an exporter. Bytes.
 */
struct pm_quick {
	uint64_t rss;		/* present, not the zero page, not hugetlb */
	uint64_t anon, file, shmem;	/* rss split: no file bit; file bit in shared memory; other file bit */
	uint64_t uss;		/* present and mapped only here (exclusive bit 56, 4.2+) */
	uint64_t swap;		/* swap entries */
	uint64_t thp;		/* PMD-mapped transparent huge pages (in rss) */
	uint64_t hugetlb;	/* present in MAP_HUGETLB/SHM_HUGETLB mappings (not in rss) */
	uint64_t entries;	/* pagemap entries read: all of every mapping with the pread back end,
				   those of present and swapped regions with the scan back end */
	uint64_t longest_ns;	/* the longest single walk step: a bound on one read's hold on the target */
	bool uss_known;		/* the walk could read the exclusive bit (else uss is 0) */
};

/*
 * pm_quick_add - add one walk run to @q (pure). Shared memory is told by
 * the mapping's path (/dev/zero shared, /memfd:, /SYSV, /dev/shm/,
 * [anon_shmem:]), hugetlb by /anon_hugepage; a hugetlbfs file counts as file.
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
	PM_CLASS_BUDDY = 0,	/* the first page of a free block (kpageflags marks no other: the rest are in other) */
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

/* ------------------------------------------------------------------ */
/* Write watch                                                        */
/* ------------------------------------------------------------------ */

/*
 * Which pages of a process were written since the last reset, in the
 * spirit of Windows' GetWriteWatch/ResetWriteWatch. One handle watches
 * address ranges of one process (the caller itself, or another one) with
 * one back end:
 *
 *   PM_WATCH_UFFD       userfaultfd write-protect in async mode (Linux 6.7+):
 *                       writes resolve in the kernel without a message;
 *                       PAGEMAP_SCAN with PM_SCAN_WP_MATCHING reports the
 *                       written pages and protects them again in one pass,
 *                       page by page under the page-table lock, so a write
 *                       racing with a collection is reported now or next time,
 *                       never lost. Kernel writes (read(2) into a watched
 *                       page) count. For another process the userfaultfd is
 *                       created inside it by ptrace syscall injection (the
 *                       target is stopped for a few syscalls, once), taken
 *                       with pidfd_getfd and closed there again: the target
 *                       keeps no descriptor. Closing the handle (or the
 *                       watcher dying) drops the registration. Only
 *                       mappings that exist when a range is added are
 *                       watched; one that replaces them later is registered
 *                       at the next collect and reported written whole.
 *                       Arming an empty page costs a page-table entry: a
 *                       mapping of 1 GiB or more that is less than half
 *                       populated (a sanitizer's shadow, a reserved heap)
 *                       is armed only where populated (sparse_bytes):
 *                       writes there are still all seen, MADV_DONTNEED
 *                       of a page there is not.
 *   PM_WATCH_SOFTDIRTY  /proc/PID/clear_refs "4" and the soft-dirty bit (55),
 *                       where the kernel has CONFIG_MEM_SOFT_DIRTY (probed by
 *                       effect). Resets the whole process, not just the
 *                       watched ranges; a reset is NOT atomic against writers
 *                       running meanwhile (pm_watch_atomic() says false); new,
 *                       grown or merged VMAs read written (false positives).
 *   PM_WATCH_MPROTECT   the caller only: watched pages are made read-only and
 *                       a SIGSEGV handler records the first write to each and
 *                       makes it writable again. Limits: writes by the kernel
 *                       (read(2), recv(2) into a watched page) fail with EFAULT
 *                       instead of being recorded; each scattered written page
 *                       becomes a VMA of its own until the next reset, and at
 *                       vm.max_map_count the handler marks the whole range
 *                       written (counted in overflows); only private or shared
 *                       mappings the caller may mprotect. A range moved by
 *                       mremap keeps its read-only pages, and a write there
 *                       then faults for good: free the watch first.
 *   PM_WATCH_SNAPSHOT   "fork-snapshot" (the UndoDB method), only when asked
 *                       for: each reset takes a snapshot, a child of the
 *                       watched process that shares its memory copy-on-write
 *                       and never runs; a collect compares, in one pagemap
 *                       walk of each, the process's pages with the
 *                       snapshot's. A private page the process wrote was
 *                       copied: with PFNs visible (root) its frame (or swap
 *                       entry) differs from the snapshot's, or the snapshot
 *                       had nothing there; with PFNs hidden it is mapped
 *                       once (exclusive, bit 56) where an unwritten one is
 *                       still shared with the snapshot. Page-cache pages of
 *                       private file mappings and the zero page are never
 *                       written. MAP_SHARED mappings (shmem, memfd, files)
 *                       have no copy-on-write: pm_watch_add leaves them out
 *                       (stats shared_bytes) and refuses a range with
 *                       nothing else (-EOPNOTSUPP). For the caller the
 *                       snapshot is made with clone(2), exit signal 0 (no
 *                       SIGCHLD; waitpid(-1) without __WALL never sees it),
 *                       signals blocked, on a 64 KiB stack mapping of its
 *                       own; it closes its copies of the caller's
 *                       descriptors except a pipe, and exits when the
 *                       caller dies (EOF). For another process (x86-64,
 *                       ptrace rights) clone(flags 0) is injected into one
 *                       of its threads by ptrace: the child is attached to
 *                       the watcher and held at its first stop before
 *                       running an instruction (PTRACE_O_EXITKILL); a reset
 *                       or pm_watch_free kills it and reaps it inside the
 *                       target (injected wait4), so the target is left with
 *                       no child and no zombie. The snapshot is traced by
 *                       the thread that made it: use such a handle from one
 *                       thread that outlives it (if that thread exits, the
 *                       kernel kills the snapshot and collects fail).
 *                       Known residue: if the watcher is killed, the kernel
 *                       kills the snapshot, which stays a zombie child of
 *                       the target (never reported to it) until the target
 *                       exits or waits with __WALL/__WCLONE. With PFNs
 *                       visible a reset is atomic (pm_watch_atomic() true):
 *                       it takes the new snapshot first and compares the
 *                       old one with it, both frozen, so every write lands
 *                       before the fork (this collect) or after it (the
 *                       next). With PFNs hidden it is not (false): the
 *                       process is compared with the snapshot, and writes
 *                       between that and the new fork are lost; a page in
 *                       swap in both cannot tell one shared slot
 *                       (unwritten) from two (written, then swapped out),
 *                       so the two copies are compared by content, read
 *                       from the process and the snapshot, which brings
 *                       both back from swap (stats content_compared; a
 *                       write of the same bytes reads as none). Each
 *                       pm_watch_add takes a new snapshot (what older
 *                       ranges reported so far is kept for the next
 *                       collect). Costs: a fork (page tables copied) per
 *                       reset; the snapshot holds the frames the process
 *                       wrote or freed since, until the next reset; the
 *                       first write to each page per interval copies it.
 *                       Huge pages: a write to a THP shared with the
 *                       snapshot splits the PMD mapping and copies one
 *                       4 KiB page (seen on 6.18), so reports stay per
 *                       page; a huge page that appeared since the snapshot
 *                       is reported whole (huge). False positives: a page
 *                       swapped out at the snapshot and read back in, a
 *                       page moved to a new frame without a write
 *                       (khugepaged collapse), anonymous pages pinned for
 *                       DMA (copied at fork), every populated page of a
 *                       MADV_DONTFORK or MADV_WIPEONFORK mapping, and
 *                       (caller only) the page of the calling thread's TLS
 *                       where the kernel stores the snapshot's rseq CPU id
 *                       when it first returns to user space. With PFNs
 *                       hidden, a page written since the snapshot that
 *                       became shared again (another fork, KSM) is missed.
 *
 * PM_WATCH_AUTO picks UFFD when pm_features says uffd_wp_async and
 * PAGEMAP_SCAN are there, else SOFTDIRTY where it works, else MPROTECT for
 * the caller itself; pm_watch_reason() says why. It never picks SNAPSHOT.
 *
 * What every back end reports as written, beyond the pages really written:
 * pages a range lost and got back (MADV_DONTNEED, munmap + mmap at the same
 * place: written, as their content changed), and with SOFTDIRTY the pages
 * of a PMD-mapped huge page, reported whole (counted in huge_pages).
 * UFFD leaves PMD-mapped transparent huge pages whole: a write-protect
 * fault on one would split it (async uffd-wp, 6.7-6.18), so they are not
 * armed; each collect reads their contents (process_vm_readv), compares a
 * hash with the last one and reports a changed one whole (huge_pages;
 * stats hashed_bytes). A write of the same bytes is not seen there; one
 * that appears in a sparse piece counts as written. MPROTECT stays exact
 * on huge pages: the kernel splits the PMD mapping at the protection
 * change. PM_WATCH_NOTHP splits huge pages when a range is added (UFFD,
 * then exact per page) and keeps new ones from forming there
 * (MADV_NOHUGEPAGE, the caller only).
 * Pages merely read, or never touched, are not reported. A watched range
 * that is unmapped reports nothing; one moved by mremap leaves the watch.
 * After fork() the child is not watched (UFFD, SOFTDIRTY) or inherits
 * read-only pages and the handler (MPROTECT).
 */
enum pm_watch_method {
	PM_WATCH_AUTO = 0,
	PM_WATCH_UFFD,
	PM_WATCH_SOFTDIRTY,
	PM_WATCH_MPROTECT,
	PM_WATCH_SNAPSHOT,	/* = 4, "fork-snapshot"; never chosen by AUTO */
};

#define PM_WATCH_NOTHP	(1u << 0)	/* split huge pages in watched ranges, MADV_NOHUGEPAGE them (caller only) */

/* One range of written pages, [start, end). */
struct pm_written {
	uint64_t start, end;
	bool huge;		/* reported at huge-page granularity: not every page may have been written */
};

/* Running counts of a watch, since pm_watch_new. */
struct pm_watch_stats {
	uint64_t collects;	/* pm_watch_collect calls */
	uint64_t written_pages;	/* pages reported written, summed over collects */
	uint64_t huge_pages;	/* of those, pages reported only as part of a written huge page */
	uint64_t faults;	/* MPROTECT: first writes the handler took */
	uint64_t overflows;	/* MPROTECT: times vm.max_map_count forced a whole range writable */
	uint64_t rearms;	/* UFFD: times a replaced mapping in a range had to be registered again */
	uint64_t sparse_bytes;	/* UFFD: bytes of big (1 GiB+), mostly empty mappings armed only where populated */
	uint64_t shared_bytes;	/* SNAPSHOT: bytes of MAP_SHARED mappings in added ranges, left out (no COW) */
	uint64_t content_compared; /* SNAPSHOT, PFNs hidden: pages in swap in both snapshots, compared by content */
	uint64_t hashed_bytes;	/* UFFD without NOTHP: bytes of huge pages left whole, read and hashed to compare */
};

struct pm_watch;

/*
 * pm_watch_new - a write watch over process @pid (0: the caller) with
 * @method (PM_WATCH_AUTO: the best this kernel offers) and PM_WATCH_* @flags.
 * Nothing is watched until pm_watch_add(), but what needs the target is
 * done here, once: UFFD makes its userfaultfd (inside another process, by
 * ptrace injection), SNAPSHOT of another process its first child. If that
 * fails and @method was AUTO, SOFTDIRTY takes over where the kernel has it,
 * and pm_watch_reason() says why not UFFD; else the call fails. A watch
 * never retries ptrace per range.
 * Another process is stopped only briefly, and killing the caller at any
 * moment leaves it running in its own state (registers, FPU state, signal
 * mask); only a caller killed between the injected userfaultfd() and
 * close() leaves it an unused descriptor. As root, its seccomp filter is
 * suspended for the injected calls (the reason says so).
 * Returns the handle, or NULL with errno: EOPNOTSUPP (the method cannot
 * work here; pm_watch_explain() gives the words), ENOENT/ESRCH/EACCES/EPERM
 * (the target, or ptrace refused), EBUSY (another process: traced already,
 * by a debugger or strace), EAGAIN (another process: in uninterruptible
 * sleep for a second, e.g. a parent blocked in vfork), ENOEXEC (another
 * process: no rt_sigreturn trampoline in its code), ENOMEM. The context
 * must outlive the handle.
 */
PM_API struct pm_watch *pm_watch_new(struct pm_ctx *ctx, pid_t pid, enum pm_watch_method method, unsigned flags);

/*
 * pm_watch_explain - why @method can or cannot watch process @pid (0: the
 * caller) on this kernel at this privilege level: one line into @buf.
 * Returns 0 if it can, else -EOPNOTSUPP (or the target's -errno).
 */
PM_API int pm_watch_explain(struct pm_ctx *ctx, pid_t pid, enum pm_watch_method method, char *buf, size_t size);

#define PM_WATCH_POPULATED	(1u << 0)	/* pm_watch_add: pages with content now count as written */

/*
 * pm_watch_add - watch [@start, @end) too (rounded out to pages). The range
 * is armed: writes from now on are reported. With PM_WATCH_POPULATED in
 * @flags, the pages that have content when the range is added (present or
 * swapped, not the zero page) are reported written by the next collect:
 * for memory that appeared after watching began (a new mapping of a
 * tracked process), whose earlier writes nobody saw. With UFFD it must lie in
 * mappings the kernel lets userfaultfd register (not VM_PFNMAP/VM_IO, not
 * [vvar]); holes are allowed and stay unwatched.
 * Returns 0, -EINVAL (@start > @end, no mapping in the range, an unknown
 * flag), -EBUSY
 * (UFFD: another userfaultfd has the range), -EOPNOTSUPP (SNAPSHOT: only
 * MAP_SHARED mappings in the range), -ENOMEM, or -errno of the
 * kernel call that failed.
 */
PM_API int pm_watch_add(struct pm_watch *w, uint64_t start, uint64_t end, unsigned flags);

/* What one pm_watch_add_writable() call did. */
struct pm_watch_batch {
	size_t added;		/* ranges now watched */
	size_t vanished;	/* ranges whose mapping went away (or was replaced) before it could be registered */
	size_t failed;		/* ranges left out for another reason: the first one and why below */
	int error;		/* errno of the first failure */
	uint64_t failed_start, failed_end;
};

/*
 * pm_watch_add_writable - watch every writable mapping of the process that
 * is not watched yet: all of them at the first call, the ones that appeared
 * since at the next (a tracker's "follow new mappings" policy). One read of
 * the process's maps per call, whatever the number of mappings; ranges
 * already watched are never added twice. @flags as pm_watch_add (use
 * PM_WATCH_POPULATED after the first call: what new mappings already hold
 * was written unseen). [vvar] and [vsyscall] are left out. A mapping that
 * vanishes between the listing and its registration is normal and skipped
 * (counted in @b->vanished); one the kernel refuses is skipped too (@b->failed,
 * with the first errno). @b may be NULL.
 * Returns 0, -ESRCH (the process is gone), -ENOMEM, or -errno reading maps.
 */
PM_API int pm_watch_add_writable(struct pm_watch *w, unsigned flags, struct pm_watch_batch *b);

#define PM_WATCH_RESET	(1u << 0)	/* re-arm what is reported, atomically where the back end can */

/*
 * pm_watch_collect - the pages of the watched ranges written since the last
 * reset (or since they were added), as sorted, coalesced ranges in *@out
 * (*@n of them; borrowed until the next call or pm_watch_free). With
 * PM_WATCH_RESET those pages are armed again.
 * Returns 0, -ESRCH (the target exited or exec'd), or -errno.
 */
PM_API int pm_watch_collect(struct pm_watch *w, unsigned flags, const struct pm_written **out, size_t *n);

/* pm_watch_method - the back end in use (never AUTO). */
PM_API enum pm_watch_method pm_watch_method(const struct pm_watch *w);

/* pm_watch_reason - one line: why this back end was chosen. Borrowed. */
PM_API const char *pm_watch_reason(const struct pm_watch *w);

/* pm_watch_atomic - does a collect with PM_WATCH_RESET never lose a concurrent write? */
PM_API bool pm_watch_atomic(const struct pm_watch *w);

/* pm_watch_stats - running counts (borrowed, updated by each collect). */
PM_API const struct pm_watch_stats *pm_watch_stats(const struct pm_watch *w);

/* pm_watch_method_name - "auto", "uffd", "soft-dirty", "mprotect" or "fork-snapshot". Static string. */
PM_API const char *pm_watch_method_name(enum pm_watch_method method);

/*
 * What watching costs the watched process: an ESTIMATE, made at each
 * pm_watch_collect() for the interval since the previous one (or since
 * pm_watch_new). Two parts:
 *  - tracking faults: every page reported written page by page (not the
 *    huge pages compared by contents) took one fault on its first write
 *    after a reset (write-protect, soft-dirty, copy-on-write or SIGSEGV,
 *    by method); never more than the process's minor faults over the
 *    interval (/proc/PID/stat, all threads). Each is priced at the extra
 *    time of one such first write over a write to an unprotected page,
 *    measured on this machine by pm_watch_calibrate(); the sum is set
 *    against the process's CPU time over the interval (clock ticks, at
 *    least one, all threads), counted as at least a tenth of one CPU over
 *    the interval: a process that mostly waits is delayed by its faults,
 *    not slowed, and its few ticks would make them look like all its time;
 *  - the scans of the collect: the time its PAGEMAP_SCAN or clear_refs
 *    calls took, summed, counts whole against the interval (they
 *    write-protect the process's page tables and flush its TLB; the
 *    process is slowed, not stopped, so this over-states it). A back end
 *    that reports no scan calls (fork-snapshot, mprotect) counts the
 *    collect's whole wall time.
 */
struct pm_watch_cost {
	double interval;	/* seconds from the previous collect's start to this one's */
	double cpu;		/* the process's CPU time over it, seconds, all threads (-1: unknown) */
	uint64_t minflt;	/* its minor faults over it (UINT64_MAX: unknown) */
	uint64_t faults;	/* tracking faults estimated (pages written, at most minflt) */
	double fault_cost;	/* seconds per tracking fault (pm_watch_calibrate; 0: not calibrated, faults not priced) */
	double fault_time;	/* faults * fault_cost, seconds */
	double scan_time;	/* the collect's wall time, seconds */
	double max_hold;	/* longest the collect held the process's mm or page tables at once (one scan call), seconds */
	double max_hold_ever;	/* the same over every collect so far */
	double overhead;	/* fault_time / cpu + scans / interval (above), at most 1: the share of its time tracking took */
};

/*
 * pm_watch_calibrate - measure what one tracking fault of @w's method costs
 * here: a child is forked that maps 1024 pages, arms them as the method does
 * (its own userfaultfd, clear_refs, mprotect or a copy-on-write child) and
 * times first writes (in a scattered order) against plain writes, in its
 * CPU time (a loaded machine's preemption is not the fault's cost), five
 * rounds, median kept (about 0.15 s in a virtual machine, far less on bare
 * metal). The watched process is not touched; the caller is forked (its
 * page tables copied) once. The result (seconds, also in *@fault_cost when
 * not NULL) prices the faults of every later pm_watch_cost().
 * Returns 0, or -errno of pipe/fork, -EIO when the child could not measure.
 */
PM_API int pm_watch_calibrate(struct pm_watch *w, double *fault_cost);

/* pm_watch_cost - the estimate of the last collect into *@c: 0, or -ENODATA before the first collect. */
PM_API int pm_watch_cost(const struct pm_watch *w, struct pm_watch_cost *c);

/*
 * pm_watch_next_interval - the interval (seconds) to wait before the next
 * collect so that the overhead stays within @max_overhead (a share: 0.1 for
 * 10 %), given the last estimate: never less than @asked. Over the budget,
 * the last interval widened in proportion (a process that keeps writing
 * the same pages takes as many faults in a longer interval, so the share
 * falls), aiming at 80 % of the budget, at most 8 times wider per collect
 * and 1000 times @asked in all (a process that writes ever new pages pays
 * per page whatever the interval: widening does not help it, the bound
 * stops it). Within the budget the interval stays as this function last
 * chose it (it keeps its answer in @w; the actual interval, start to start,
 * runs a little longer, and taken as the next plan it would creep), unless the share fell
 * under a quarter of the budget (the process went quiet): then it narrows in the
 * same proportion, down to @asked. A process that rewrites a hot set
 * converges in one step once the 8x bound no longer binds, and does not
 * see-saw (tests/unit/test_watch_cost.c models it). @max_overhead <= 0,
 * or no collect yet: @asked.
 */
PM_API double pm_watch_next_interval(struct pm_watch *w, double asked, double max_overhead);

/*
 * pm_watch_next_wait - how long to sleep (seconds, from now) before the
 * next collect, for an interval of @next seconds (pm_watch_next_interval's
 * or a fixed one): @next after the last collect started, but never before
 * the process has had 90 % of @next since that collect ended (a collect
 * slower than the interval does not leave it none). 0 when due already;
 * @next before the first collect. pagemap track sleeps this long.
 */
PM_API double pm_watch_next_wait(const struct pm_watch *w, double next);

/*
 * pm_watch_free - stop watching and free the handle: UFFD ranges are
 * unregistered and the userfaultfd closed (the kernel then clears every
 * write-protect bit), MPROTECT pages get their protection back, the
 * SNAPSHOT child is killed and reaped (inside the target: it is stopped
 * once more by ptrace). The soft-dirty bits of the target are left as
 * they are. NULL is fine.
 */
PM_API void pm_watch_free(struct pm_watch *w);

/* ------------------------------------------------------------------ */
/* Working-set size                                                   */
/* ------------------------------------------------------------------ */

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
 *                      LRU list: hugetlb, the zero page, pages still in a
 *                      per-CPU LRU batch) are counted in "untracked".
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
	uint64_t resident;		/* resident at the end of the window (smaps Rss; no zero pages) */
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

/* ------------------------------------------------------------------ */
/* Sharing between processes                                          */
/* ------------------------------------------------------------------ */

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

/* ------------------------------------------------------------------ */
/* NUMA: which node a process's memory is on                          */
/* ------------------------------------------------------------------ */

/* One node of ROOT/sys/devices/system/node. */
struct pm_numa_node {
	int id;				/* the N of nodeN */
	bool has_memory;		/* MemTotal > 0 */
	unsigned ncpus;			/* CPUs in its cpulist; 0: a memory-only node (a tier, CXL) */
	char cpulist[128];		/* as sysfs prints it ("0-3,8"), "" none or unreadable */
	int tier;			/* memory_tierN it belongs to (6.1+; lower is faster), -1 unknown */
	uint64_t mem_total, mem_free;	/* bytes, from nodeN/meminfo (0 unknown) */
	uint64_t promoted, demoted;	/* pages moved to/from it by tiering (nodeN/vmstat, 5.18+; 0 unknown) */
};

struct pm_numa;

/*
 * pm_numa_open - read the machine's nodes: CPUs, memory, distances, tiers,
 * and which frames each node holds (its memory blocks,
 * ROOT/sys/devices/system/node/nodeN/memoryM, block_size_bytes each).
 * Returns the handle, or NULL with errno: EOPNOTSUPP (no node directory:
 * a kernel without CONFIG_NUMA), ENOMEM, or an open error. The context
 * must outlive it.
 */
PM_API struct pm_numa *pm_numa_open(struct pm_ctx *ctx);

/* pm_numa_close - free the handle. NULL is fine. */
PM_API void pm_numa_close(struct pm_numa *n);

/* pm_numa_count - nodes, in node order; node indexes below are 0..count-1. */
PM_API size_t pm_numa_count(const struct pm_numa *n);

/* pm_numa_node - node @index, or NULL out of range. */
PM_API const struct pm_numa_node *pm_numa_node(const struct pm_numa *n, size_t index);

/* pm_numa_distance - the SLIT distance from node index @i to @j (10 local), -1 unknown. */
PM_API int pm_numa_distance(const struct pm_numa *n, size_t i, size_t j);

/* pm_numa_index_of_id - the index of node @id, -1 if no such node. */
PM_API int pm_numa_index_of_id(const struct pm_numa *n, int id);

/* pm_numa_index_of_cpu - the index of the node CPU @cpu belongs to, -1 unknown. */
PM_API int pm_numa_index_of_cpu(const struct pm_numa *n, unsigned cpu);

/*
 * pm_numa_index_of_pfn - the index of the node that holds frame @pfn, or
 * -1 when no memory block covers it (or sysfs has no memory blocks on a
 * machine of several nodes). *@next gets the first PFN at which the answer
 * may differ, so a run of frames costs one call per node range.
 */
PM_API int pm_numa_index_of_pfn(const struct pm_numa *n, uint64_t pfn, uint64_t *next);

/* Where the node of each page comes from. */
enum pm_numa_source {
	PM_NUMA_AUTO = 0,	/* frames if visible, else move_pages, else numa_maps */
	PM_NUMA_FRAMES,		/* each present page's frame number against the nodes' memory blocks (root) */
	PM_NUMA_MOVE_PAGES,	/* move_pages(2) asked for each present page's node (no move): ~30-50 ms/GiB */
	PM_NUMA_MAPS,		/* ROOT/proc/PID/numa_maps totals per mapping; classes by the mapping's kind */
};

/* The kinds of memory counted per node; disjoint, they sum to the node's bytes. */
enum pm_numa_class {
	PM_NUMA_ANON = 0,	/* private anonymous, including copied-on-write file pages */
	PM_NUMA_FILE,		/* page cache of a file */
	PM_NUMA_SHMEM,		/* shared memory: memfd, tmpfs, SysV, shared anonymous */
	PM_NUMA_HUGETLB,	/* hugetlbfs pages (of page_size below) */
	PM_NUMA_NCLASSES
};

/* One mapping's bytes per node; pointers valid until the next pm_numa_proc_next(). */
struct pm_numa_map {
	const struct pm_mapping *map;
	const char *policy;		/* its memory policy as numa_maps says ("default", "bind:1"), "" unknown */
	uint64_t page_size;		/* numa_maps kernelpagesize_kB in bytes (hugetlb: the huge size), 0 unknown */
	size_t nnodes;			/* pm_numa_count() + 1: the last slot holds bytes on no known node */
	const uint64_t (*bytes)[PM_NUMA_NCLASSES];	/* bytes[node index][class] */
	const uint64_t *thp;		/* thp[node index]: of those, bytes in PMD-mapped huge pages */
};

struct pm_numa_proc;

/*
 * pm_numa_proc_open - the bytes per node of every mapping of @t, by
 * @source (PM_NUMA_AUTO picks the best the reader may use;
 * pm_numa_proc_source() says which). FRAMES needs visible frame numbers
 * (EACCES otherwise); MOVE_PAGES needs the right to move the target's
 * pages (its own user, or CAP_SYS_NICE: EPERM otherwise) and a live
 * process (EOPNOTSUPP when replaying a tree); MAPS needs numa_maps.
 * Returns the handle or NULL with errno (also those of pm_walk_new).
 */
PM_API struct pm_numa_proc *pm_numa_proc_open(struct pm_target *t, struct pm_numa *n,
					      enum pm_numa_source source);

/*
 * pm_numa_proc_next - the next mapping in address order (mappings with no
 * pages in RAM included). Returns 0 with *@out, 1 at the end, or -errno
 * (-ESRCH: the process exited).
 */
PM_API int pm_numa_proc_next(struct pm_numa_proc *p, const struct pm_numa_map **out);

/* pm_numa_proc_source - the source in use (never AUTO). */
PM_API enum pm_numa_source pm_numa_proc_source(const struct pm_numa_proc *p);

/* pm_numa_source_name - "frames", "move_pages", "numa_maps" ("auto"). */
PM_API const char *pm_numa_source_name(enum pm_numa_source source);

/* pm_numa_proc_close - free it. NULL is fine. */
PM_API void pm_numa_proc_close(struct pm_numa_proc *p);

/*
 * pm_numa_locality - where @pid runs: @ran_on[i] is set for each node index
 * i one of its threads last ran on (task stat, field 39), @allowed[i] for
 * each node with a CPU in its Cpus_allowed_list. Both arrays hold
 * pm_numa_count() entries and are cleared first. Returns the number of
 * threads read, or -errno (-ESRCH gone).
 */
PM_API int pm_numa_locality(struct pm_numa *n, pid_t pid, bool *ran_on, bool *allowed);

/* ------------------------------------------------------------------ */
/* Page cache                                                         */
/* ------------------------------------------------------------------ */

/*
 * What is in the page cache, file by file, and who maps it or holds it
 * open. Nothing here reads or maps file data, advises the kernel or
 * populates page tables: the cache is measured, not perturbed.
 */

/* How a file's cache state was measured. */
enum pm_cache_method {
	PM_CACHE_UNKNOWN = 0,	/* not measured: pm_cache_stat.error says why */
	PM_CACHE_CACHESTAT,	/* cachestat(2), Linux 6.5+: every count */
	PM_CACHE_MINCORE,	/* mincore(2) over a PROT_NONE mapping, only where cachestat is
				   missing (or PAGEMAP_CACHE=mincore) and the caller owns or may
				   write the file; cached bytes only */
};

/* The counts of a pm_cache_stat that were measured (pm_cache_stat.known). */
#define PM_CACHE_CACHED		(1u << 0)
#define PM_CACHE_DIRTY		(1u << 1)
#define PM_CACHE_WRITEBACK	(1u << 2)
#define PM_CACHE_EVICTED	(1u << 3)
#define PM_CACHE_RECENT		(1u << 4)
#define PM_CACHE_ALL		0x1fu

/* One file's page cache state. A count outside @known is unknown, not 0. */
struct pm_cache_stat {
	uint64_t dev, ino;		/* st_dev, st_ino of the file measured (0 if stat failed) */
	uint64_t size;			/* st_size in bytes */
	enum pm_cache_method method;
	uint32_t known;			/* PM_CACHE_* */
	int error;			/* 0, or -errno: why nothing was measured */
	uint64_t cached;		/* bytes in the page cache (shmem: in RAM) */
	uint64_t dirty, writeback;	/* of those, dirty; under writeback */
	uint64_t evicted;		/* bytes evicted since the file was opened first (shmem: swapped) */
	uint64_t recently_evicted;	/* of those, evicted recently enough to count as refaults */
};

/*
 * pm_cache_stat_fd - measure the page cache of the regular file open at
 * @fd (opened for reading; O_PATH descriptors are refused by cachestat).
 * cachestat(2) is used; only where the kernel lacks it (ENOSYS, before
 * Linux 6.5) does mincore(2) count cached pages, and only when the caller
 * owns the file, may write it or is root: otherwise mincore reports every
 * page resident, and that fake answer is never given.
 * PAGEMAP_CACHE=cachestat|mincore forces a method (tests).
 * Returns 0 with *@out filled, or -errno with out->method PM_CACHE_UNKNOWN
 * and out->error set: EINVAL (not a regular file), EPERM (cachestat needs
 * write permission or ownership since Linux 6.14 and its stable
 * backports), ENOSYS (no cachestat and mincore cannot be trusted here),
 * EOPNOTSUPP (hugetlbfs), EBADF. @ctx is for debug logs only.
 */
PM_API int pm_cache_stat_fd(struct pm_ctx *ctx, int fd, struct pm_cache_stat *out);

/*
 * pm_cache_stat_path - pm_cache_stat_fd on the file at @path (not under
 * the context's root: it names a file, not a kernel interface). Anything
 * that is not a regular file is refused (-EINVAL) before it is opened; the
 * file is opened O_RDONLY|O_NONBLOCK, O_NOATIME where allowed, and read
 * never. Returns as pm_cache_stat_fd, plus the errors of stat and open.
 */
PM_API int pm_cache_stat_path(struct pm_ctx *ctx, const char *path, struct pm_cache_stat *out);

/* pm_cache_method_name - "cachestat", "mincore" or "unknown". Static. */
PM_API const char *pm_cache_method_name(enum pm_cache_method m);

/*
 * pm_cache_meminfo - the page cache of the whole system: ROOT/proc/meminfo
 * "Cached:" in bytes (it includes shmem and tmpfs, excludes buffers and
 * swap cache). Returns 0, -EBADMSG (no valid line: pm_ctx_tree_error), or
 * the open error.
 */
PM_API int pm_cache_meminfo(struct pm_ctx *ctx, uint64_t *cached);

struct pm_cache;

/* How a process reaches a file (pm_cache_use.via, pm_cache_file.via). */
#define PM_CACHE_VIA_MAP	(1u << 0)	/* mapped (maps; deleted files through map_files) */
#define PM_CACHE_VIA_FD		(1u << 1)	/* held open through a descriptor (/proc/PID/fd) */
#define PM_CACHE_VIA_ARG	(1u << 2)	/* named by the caller (pm_cache_add_path) */

/* One file of a pm_cache, deduplicated by (device, inode). */
struct pm_cache_file {
	struct pm_cache_stat stat;	/* stat.error != 0: not measured (see pm_cache_stat_fd) */
	const char *path;		/* the first name seen: the argument, a maps path or fd link */
	bool deleted;			/* unlinked while mapped or open */
	unsigned via;			/* PM_CACHE_VIA_*, over every process */
	unsigned nprocs;		/* processes added that map it or hold it open */
};

/* One (process, file) pair: what the process does with the file. */
struct pm_cache_use {
	pid_t pid;
	size_t file;			/* index for pm_cache_file_at */
	unsigned via;			/* PM_CACHE_VIA_MAP and/or PM_CACHE_VIA_FD */
	uint64_t mapped;		/* bytes of its file-backed pages of the file that are present */
	uint64_t mapped_only;		/* of those, mapped by no other process (pagemap bit 56) */
	bool mapped_only_known;		/* false where the walk cannot tell (kernel before 4.2) */
	/* Who pays, with pm_cache_set_kpage and a readable kpagecgroup (root): */
	bool charged_known;		/* the fields below are measured */
	uint64_t memcg;			/* the process's memory cgroup (its directory's inode; 0 unknown) */
	uint64_t charged_own;		/* of @mapped, bytes charged to @memcg */
	uint64_t charged_other;		/* of @mapped, bytes charged to other memory cgroups (or none) */
	uint64_t other_memcg;		/* the cgroup charged for most of those (majority vote; 0 none) */
};

/*
 * pm_cache_new - an empty set of files and (process, file) pairs.
 * Returns the handle or NULL with errno (ENOMEM). The context must outlive
 * it; free with pm_cache_free.
 */
PM_API struct pm_cache *pm_cache_new(struct pm_ctx *ctx);

/*
 * pm_cache_add_path - add the file at @path, measured as pm_cache_stat_path
 * does. A file seen before (a hard link, a bind mount) is not added again.
 * Returns 0 (also when the file could not be measured: its stat.error
 * says why), or -errno when it cannot be added: the stat error (ENOENT,
 * EACCES), EINVAL (not a regular file), ENOMEM.
 */
PM_API int pm_cache_add_path(struct pm_cache *c, const char *path);

/*
 * pm_cache_add_at - pm_cache_add_path on @name relative to the directory
 * @dirfd (or AT_FDCWD), recorded as @path: for walking a tree with openat,
 * which spares the kernel a lookup of the whole path per file. Symbolic
 * links in @name are followed. Returns as pm_cache_add_path.
 */
PM_API int pm_cache_add_at(struct pm_cache *c, int dirfd, const char *name, const char *path);

/*
 * pm_cache_add_process - add the files process @pid maps (ROOT/proc/PID/
 * maps; each file opened through map_files, which reaches deleted files
 * and other mount namespaces and needs CAP_SYS_ADMIN, else through
 * ROOT/proc/PID/root/PATH) and holds open (ROOT/proc/PID/fd), each
 * measured once, and one pm_cache_use per file with the present bytes of
 * its file-backed pages (one pagemap walk). Shared memory (memfd, SysV,
 * MAP_SHARED|MAP_ANONYMOUS) counts as files: it is page cache too.
 * Under a replayed root files are listed but not measured (stat.error
 * -EOPNOTSUPP): the capture holds no page cache.
 * Returns 0, or -errno: ENOENT, ESRCH, EACCES as pm_target_open and
 * pm_walk_next (nothing of the process is kept then), ENOMEM.
 */
PM_API int pm_cache_add_process(struct pm_cache *c, pid_t pid);

/*
 * pm_cache_set_kpage - join mapped pages to the memory cgroups charged for
 * them (ROOT/proc/kpagecgroup through @k, root only): processes added
 * later get pm_cache_use.charged_*. @k must outlive @c; NULL turns it off.
 * Returns 0, or the open error of kpagecgroup (-EACCES, -ENOENT).
 */
PM_API int pm_cache_set_kpage(struct pm_cache *c, struct pm_kpage *k);

/*
 * pm_cache_cgroup_path - the path below the cgroup mount (ROOT/sys/fs/
 * cgroup, or its "memory" hierarchy on cgroup v1) of the cgroup directory
 * with inode @ino, into @buf ("/" for the root cgroup). Walks the tree
 * each call: call it for the few cgroups shown. Returns 0, -ENOENT (no
 * such cgroup: removed, or 0), -ENAMETOOLONG.
 */
PM_API int pm_cache_cgroup_path(struct pm_cache *c, uint64_t ino, char *buf, size_t size);

/* pm_cache_nfiles - how many files the set holds. */
PM_API size_t pm_cache_nfiles(const struct pm_cache *c);

/* pm_cache_file_at - file @i (0 <= @i < pm_cache_nfiles), borrowed until pm_cache_free; NULL past the end. */
PM_API const struct pm_cache_file *pm_cache_file_at(const struct pm_cache *c, size_t i);

/* pm_cache_nuses - how many (process, file) pairs, in the order processes were added. */
PM_API size_t pm_cache_nuses(const struct pm_cache *c);

/* pm_cache_use_at - pair @i, borrowed until pm_cache_free; NULL past the end. */
PM_API const struct pm_cache_use *pm_cache_use_at(const struct pm_cache *c, size_t i);

/* pm_cache_free - free the set. NULL is fine. */
PM_API void pm_cache_free(struct pm_cache *c);

/* ------------------------------------------------------------------ */
/* Snapshots: one file of page state, replayed by every command       */
/* ------------------------------------------------------------------ */

/*
 * Snapshot: pm_snapshot_* - one file holding a captured /proc tree (the tree
 * `pagemap --root` replays, tests/fixtures/README.md): every file as a
 * section with its path, text in zstd chunks, pagemap and kpage* in a
 * columnar word encoding, each chunk xxh64-checked, an index at the end.
 * The format is man/pagemap-snapshot.5. A snapshot is untrusted input: the
 * reader bounds every count and length and never allocates by what the
 * file says beyond fixed chunk limits (1 MiB decoded, 262144 words and
 * 65536 extents a chunk; 65536 words in version 1 and 2 files).
 */
#define PM_SNAPSHOT_VERSION	3	/* written; a reader also takes version 1 and 2 files */
#define PM_SNAPSHOT_SERIES_VERSION 4	/* a series of snapshots (pm_snapshot_append); read too */

enum pm_snapshot_type {
	PM_SNAPSHOT_META = 1,	/* key=value lines: what made the snapshot, when, of what */
	PM_SNAPSHOT_FILE = 2,	/* a file of the tree: path, kind, length */
	PM_SNAPSHOT_BYTES = 3,	/* a chunk of a text file's bytes */
	PM_SNAPSHOT_WORDS = 4,	/* a chunk of a word file's 64-bit words (pagemap, kpage*) */
	PM_SNAPSHOT_INDEX = 5,	/* the last section: every section's type and length (offset in versions 1, 2) */
	PM_SNAPSHOT_FILES = 6,	/* version 2: several FILEs in one (pm_snapshot_next yields each as a FILE) */
	PM_SNAPSHOT_REUSE = 7,	/* version 4: a WORDS chunk an earlier member stored (yielded as that WORDS) */
	PM_SNAPSHOT_SERIES = 8,	/* version 4: the index of a series' members (never yielded) */
};

/* One section of an open snapshot, as pm_snapshot_next() yields it. */
struct pm_snapshot_section {
	uint32_t type;		/* enum pm_snapshot_type, or a type this reader does not know */
	uint64_t offset;	/* of its header in the file */
	uint64_t length;	/* payload bytes */
	uint32_t file;		/* FILE, BYTES, WORDS: the file's id (order of its FILE section, from 0) */
	const char *path;	/* FILE, BYTES, WORDS: its path in the tree ("proc/42/maps"); else NULL */
	uint32_t kind;		/* FILE, BYTES, WORDS: PM_SNAPSHOT_BYTES or PM_SNAPSHOT_WORDS */
	uint64_t size;		/* FILE, BYTES, WORDS: the file's length in bytes */
};

struct pm_snapshot;
struct pm_snapshot_writer;

/*
 * pm_snapshot_open - open the snapshot at @path and check it whole: magic,
 * version, every section header and checksum, the index and trailer, the
 * paths (relative, no "..", no empty or "." component).
 * @err, @errsize: where a one-line reason goes on failure (may be NULL);
 * it names the section ("section 7 (WORDS of proc/42/pagemap): ...").
 * Returns the handle, or NULL with errno: EBADMSG (damaged or not a
 * snapshot), EFBIG (a file claims more than a snapshot may hold: a text file
 * over 256 MiB, a kpage* file over 2^40 frames; pagemap-snapshot(5) LIMITS),
 * EPROTONOSUPPORT (another format version), ELIBACC (libzstd.so.1,
 * which the shared library opens on its first snapshot, cannot be loaded;
 * @err says why), ENOMEM, or the open error. Free with pm_snapshot_close().
 */
PM_API struct pm_snapshot *pm_snapshot_open(const char *path, char *err, size_t errsize);

/* pm_snapshot_open_fd - the same on an open file (@fd stays the caller's, read with pread). */
PM_API struct pm_snapshot *pm_snapshot_open_fd(int fd, char *err, size_t errsize);

/*
 * pm_snapshot_next - the next section, in file order (unknown types too:
 * readers skip them). Returns 0 with *@out (its path borrowed until the
 * handle is closed), 1 at the end; pm_snapshot_rewind() starts again.
 */
PM_API int pm_snapshot_next(struct pm_snapshot *s, struct pm_snapshot_section *out);
PM_API void pm_snapshot_rewind(struct pm_snapshot *s);

/* pm_snapshot_meta - the value of META key @key (borrowed), or NULL. */
PM_API const char *pm_snapshot_meta(const struct pm_snapshot *s, const char *key);

/* Called with each extent of a chunk: @off is the byte offset in the file, @buf its @len bytes (borrowed). */
typedef int (*pm_snapshot_extent_fn)(void *data, uint64_t off, const void *buf, size_t len);

/*
 * pm_snapshot_read - decompress and decode a BYTES or WORDS section @sec
 * and call @fn for each extent (words native-endian). Returns 0, what @fn
 * returned if not 0, -EINVAL for another section type, -EBADMSG (the reason
 * from pm_snapshot_error()) or a read error.
 */
PM_API int pm_snapshot_read(struct pm_snapshot *s, const struct pm_snapshot_section *sec, pm_snapshot_extent_fn fn,
			    void *data);

/*
 * pm_snapshot_extract - write the tree into directory @dir (existing; files
 * are created 0600, directories 0700, never through a symlink, never over an
 * existing file). Word files are sparse: only the stored ranges are written,
 * the rest reads 0. Returns 0 or -errno (-EBADMSG: see pm_snapshot_error()).
 */
PM_API int pm_snapshot_extract(struct pm_snapshot *s, const char *dir);

/* pm_snapshot_error - the last failure of @s as one line (borrowed), or NULL. */
PM_API const char *pm_snapshot_error(const struct pm_snapshot *s);

/* pm_snapshot_close - close and free. NULL is fine. */
PM_API void pm_snapshot_close(struct pm_snapshot *s);

/*
 * A series: one file of several snapshots of the same processes over time
 * (format version 4, pm_snapshot_append()). Each member is a snapshot of its
 * own; a word chunk equal to the previous member's chunk of the same file
 * and words is stored once and referred to. An index at the end (checked)
 * gives each member's place, time and PIDs: a reader opens member N without
 * reading the others. pm_snapshot_open() and pm_snapshot_open_fd() open a
 * series' last member; every other call then sees that member as a
 * snapshot (a reused chunk is yielded by pm_snapshot_next() as the WORDS
 * section that stores it, at its offset).
 */

/*
 * pm_snapshot_open_member - open member @member of the series at @path:
 * 1 is the first, -1 the last, -2 the one before it, and so on; 0 is the
 * last too. A plain snapshot (version 1 to 3) is a series of one member.
 * pm_snapshot_open() takes "PATH@N" for this when no file PATH@N exists.
 * Returns the handle, or NULL with errno as pm_snapshot_open(), and ERANGE
 * (no such member; @err says how many there are).
 */
PM_API struct pm_snapshot *pm_snapshot_open_member(const char *path, int member, char *err, size_t errsize);

/* pm_snapshot_open_member_fd - the same on an open file (@fd stays the caller's). */
PM_API struct pm_snapshot *pm_snapshot_open_member_fd(int fd, int member, char *err, size_t errsize);

/* One member of a series, as its index gives it (pm_snapshot_member_info). */
struct pm_snapshot_member {
	uint32_t number;		/* 1, 2, ... */
	uint64_t offset, length;	/* its bytes in the file (sections and its INDEX) */
	int64_t time;			/* when it was written, seconds since the epoch */
	uint64_t words_bytes;		/* payload bytes of the WORDS chunks it stores itself */
	uint64_t reused;		/* word chunks it takes from earlier members instead */
	uint64_t reused_bytes;		/* the payload bytes those chunks take there */
	uint32_t npids;			/* PIDs it holds (processes with a pagemap) */
	uint32_t listed;		/* how many of them pids lists (at most 64) */
	const int32_t *pids;		/* borrowed until pm_snapshot_close() */
};

/*
 * pm_snapshot_members - the members of @s's file: 0 for a plain snapshot,
 * else their count; *@open (may be NULL) the number of the open one.
 */
PM_API unsigned pm_snapshot_members(const struct pm_snapshot *s, unsigned *open);

/*
 * pm_snapshot_member_info - member @number (from 1) of @s's series into
 * *@out. Returns 0, -EINVAL for a plain snapshot, -ERANGE for no such member.
 */
PM_API int pm_snapshot_member_info(const struct pm_snapshot *s, unsigned number, struct pm_snapshot_member *out);

/*
 * pm_ctx_new_snapshot - a context that replays snapshot @s as --root would
 * replay its tree: a tree of names only (directories, empty files) in a
 * private directory (0700, under $TMPDIR or /tmp) that pm_ctx_free()
 * removes, as does a keeper child process (exit signal 0: waitpid(-1) does
 * not see it) if this process dies first. No file's contents are written:
 * this context reads word files from the snapshot's chunks and decompresses
 * a text file into an anonymous memory file when it is opened, so a file no
 * call opens costs nothing; a context made with pm_ctx_new(pm_ctx_root())
 * of it sees empty files: make another with this call. @s may be closed
 * after. Returns the context, or NULL with errno (EBADMSG:
 * pm_snapshot_error()).
 */
PM_API struct pm_ctx *pm_ctx_new_snapshot(struct pm_snapshot *s);

/*
 * pm_snapshot_create - start writing a snapshot to @path, mode 0600, by
 * pm_outfile_open(PM_OUTFILE_PRIVATE): a temporary in @path's directory that
 * pm_snapshot_commit() makes appear at @path whole, or not at all; a
 * character device, or a symlink of the caller's or root's (/dev/stdout), is
 * written in place; a symlink someone else owns is refused (ELOOP). Returns
 * the writer, or NULL with errno (ELIBACC: libzstd.so.1 cannot be loaded, as
 * in pm_snapshot_open(); pm_outfile_open()'s errors). Memory is bounded
 * whatever is added (one chunk per open file).
 */
PM_API struct pm_snapshot_writer *pm_snapshot_create(const char *path);

/*
 * pm_snapshot_create_fd - start writing a snapshot to @fd as it is (a pipe,
 * a socket, standard output redirected to a file with > or >>): written
 * sequentially from its current offset, never reopened, truncated, nor
 * closed (@fd stays the caller's; a duplicate is written). No temporary and
 * no atomicity: a failed run leaves what was written. Returns the writer,
 * or NULL with errno (EBADF, ELIBACC, ENOMEM).
 */
PM_API struct pm_snapshot_writer *pm_snapshot_create_fd(int fd);

/*
 * pm_snapshot_add_meta - a META key=value line (neither may hold '\n'; key
 * no '='). 0 or -errno: -EINVAL, -E2BIG (a line over 4 KiB, or META would
 * pass the 64 KiB a reader takes).
 */
PM_API int pm_snapshot_add_meta(struct pm_snapshot_writer *w, const char *key, const char *value);

/*
 * pm_snapshot_add_tree - add every regular file under directory @dir (a
 * captured tree, sorted by name): files named pagemap, kpageflags, kpagecount
 * or kpagecgroup whose length is a multiple of 8 as words (their holes
 * skipped), the others as bytes. A symlink, device or FIFO in the tree fails
 * with -EINVAL. Returns 0 or -errno.
 */
PM_API int pm_snapshot_add_tree(struct pm_snapshot_writer *w, const char *dir);

/* How a snapshot writes frame numbers (and swap offsets), see pm_snapshot_set_frames(). */
enum pm_snapshot_pfn {
	PM_SNAPSHOT_PFN_KEEP = 0,	/* as read: the default */
	PM_SNAPSHOT_PFN_DROP,		/* zeroed, no kpage* words */
	PM_SNAPSHOT_PFN_KEYED,		/* max_pfn + a keyed permutation of [0, max_pfn) */
	PM_SNAPSHOT_PFN_KEYED_BLOCK,	/* a keyed permutation of 2 MiB blocks, offsets inside kept */
};
#define PM_SNAPSHOT_KEY_SIZE	32u

/*
 * pm_snapshot_set_frames - before any process is added: write frame numbers
 * of @w as @mode says, and record it in META (frames=kept, dropped, keyed or
 * keyed-block; keyed modes also key_id=HEX, 16 hex digits, never the key).
 * Keyed modes need @key (PM_SNAPSHOT_KEY_SIZE bytes) and @ctx, whose
 * /proc/kpageflags length gives max_pfn (else 2^54, half the 55-bit field).
 * A frame f becomes lift + perm(f) in every pagemap word and its kpage*
 * words move to that index, lift being max_pfn in whole blocks (META
 * key_lift), so no scrambled frame equals a real one; frames at or above
 * max_pfn become f + lift (not hidden). A swap offset goes through its own
 * permutation, not lifted. Returns 0, or -EINVAL (bad @mode, no @key for a
 * keyed mode, called after a process was added).
 */
PM_API int pm_snapshot_set_frames(struct pm_snapshot_writer *w, struct pm_ctx *ctx, enum pm_snapshot_pfn mode,
				  const unsigned char *key);

/*
 * pm_snapshot_key_id - the key id META records for @key
 * (PM_SNAPSHOT_KEY_SIZE bytes): the first 8 bytes of SipHash-2-4 of a fixed
 * string under the key, so a reader can tell a wrong key without the key.
 */
PM_API uint64_t pm_snapshot_key_id(const unsigned char *key);

/*
 * pm_snapshot_unscramble - write snapshot @in, whose frame numbers were
 * keyed by pm_snapshot_set_frames() with @key (PM_SNAPSHOT_KEY_SIZE bytes),
 * to a new snapshot @out with the real frame numbers, swap offsets and
 * zero_pfn back (META frames=kept, the key's lines left out): its tree is
 * the one a keep snapshot would have held. @err, @errsize: a one-line
 * reason on failure. Returns 0, or -EKEYREJECTED (another key: the key ids
 * differ), -EINVAL (@in is not keyed), -EBADMSG (damaged), or -errno.
 */
PM_API int pm_snapshot_unscramble(const char *in, const char *out, const unsigned char *key, char *err,
				  size_t errsize);

#define PM_SNAPSHOT_FRAMES	(1u << 0)	/* join the present frames' kpageflags/count/cgroup words */
#define PM_SNAPSHOT_PHYS	(1u << 1)	/* add_system: the whole kpageflags, kpagecount, kpagecgroup */
#define PM_SNAPSHOT_ONE_THREAD	(1u << 2)	/* add_process: no second thread (see there) */

/*
 * pm_snapshot_add_process - add process @pid as seen through @ctx (live):
 * maps, stat, status, smaps, smaps_rollup, cgroup, numa_maps as text;
 * pagemap over each mapping read in batches; with PM_SNAPSHOT_FRAMES and
 * readable PFNs, the kpage* words of its present frames. A refused file is
 * recorded as FILE.errno, as a captured tree does. Where the calling thread
 * may run on more than one CPU, a second thread reads smaps, smaps_rollup
 * and numa_maps (three walks of the page tables in the kernel) while the
 * caller reads the pagemap, and ends before the call returns; the file
 * written is the same. PM_SNAPSHOT_ONE_THREAD reads everything in the
 * calling thread. Read live, the process's read window is kept: the
 * CLOCK_REALTIME nanoseconds when its reading started, and the start plus
 * the CLOCK_MONOTONIC time the reading took; pm_snapshot_commit() writes
 * them as META lines window.PID=START,END (as many as the META limit of
 * 64 KiB leaves room for: about 1100 processes; then windows_omitted=N
 * counts the others). Returns 0, or -errno (-ESRCH, -ENOENT: the process is gone
 * or never was; nothing of it is kept then in a way that replays wrongly:
 * its files are simply missing).
 */
PM_API int pm_snapshot_add_process(struct pm_snapshot_writer *w, struct pm_ctx *ctx, pid_t pid, unsigned flags);

/*
 * pm_snapshot_add_system - the files every tree has: osrelease, swaps,
 * hpage_pmd_size, pagemap-features (pm_features_export of @ctx's full probe),
 * and kpage*.errno ENODATA unless frames were added (with PM_SNAPSHOT_PHYS:
 * the whole frame files, and /proc/meminfo and /proc/vmstat as text beside
 * them). Call once, after the processes. 0 or -errno.
 */
PM_API int pm_snapshot_add_system(struct pm_snapshot_writer *w, struct pm_ctx *ctx, unsigned flags);

/* pm_snapshot_commit - write the index and trailer, fsync, and put the file at its path. 0 or -errno. */
PM_API int pm_snapshot_commit(struct pm_snapshot_writer *w);

/*
 * pm_snapshot_append - start writing a new member of the series at @path
 * (created, as a series of this one member, when no file is there). The
 * series is checked whole first (every member and its index); the new file
 * is the old members copied into a temporary as pm_snapshot_create() makes
 * one, then the new member: pm_snapshot_commit() puts it at @path, and
 * until then, or if it fails, the old series stays as it was. The series
 * is locked (flock) from its read until the writer is freed: a concurrent
 * append waits, then adds its member to this one's series (a series file
 * that others could open, not ours nor root's with mode 0600, is waited
 * for 10 s at most: EWOULDBLOCK). When no series is there yet nothing is
 * locked: the first member is put at @path only where still nothing is,
 * and this call (errno EEXIST) or pm_snapshot_commit() (-EEXIST) fails
 * when another append created the series meanwhile: append again. Add to the
 * writer as to a new snapshot. A word chunk equal, byte for byte once
 * compressed, to the last member's chunk of the same file path and words
 * is not stored again but referred to; in a series the pagemap's chunks end
 * on 16384-word slots (64 MiB of 4 KiB pages) so an unchanged range gives an
 * equal chunk.
 * @err, @errsize: a one-line reason on failure (may be NULL). Returns the
 * writer, or NULL with errno: EBADMSG (@path is damaged or not a
 * snapshot), EPROTONOSUPPORT, ELIBACC, ENOMEM, EOVERFLOW (65536 members
 * already), EINVAL (a plain snapshot is there, not a series), ELOOP (a
 * symlink is there), EWOULDBLOCK (see above), or the open error.
 * pm_snapshot_commit() of the new
 * member fails with -EOVERFLOW if the series' index would pass 4 MiB (what
 * readers take): the old series stays.
 */
PM_API struct pm_snapshot_writer *pm_snapshot_append(const char *path, char *err, size_t errsize);

/* pm_snapshot_writer_free - free; an uncommitted snapshot is discarded. NULL is fine. */
PM_API void pm_snapshot_writer_free(struct pm_snapshot_writer *w);

/*
 * pm_features_export - @f as the key=value lines a captured tree keeps in
 * ROOT/pagemap-features (what `pagemap features --export` prints), into
 * @buf of @size, NUL-terminated. Returns the length, or -ENOSPC.
 */
PM_API int pm_features_export(const struct pm_features *f, char *buf, size_t size);

/* ------------------------------------------------------------------ */
/* Output files: written whole, never through what others planted     */
/* ------------------------------------------------------------------ */

/*
 * Output files: pm_outfile_* - the one way the library and the pagemap tool
 * write a file (snapshots, series, pictures, metrics textfiles), safe as root
 * in a directory others may write (/tmp, a service's own directory):
 *
 *  - Nothing at the path, or a regular file: the content goes to a temporary
 *    in the same directory (O_TMPFILE, else a name of 64 random bits from
 *    getrandom(), created O_CREAT|O_EXCL|O_NOFOLLOW; no free name in 16 tries
 *    is EEXIST, never someone else's file) that pm_outfile_commit() puts at
 *    the path whole: over the regular file that was there (rename), or only
 *    where still nothing is (link, RENAME_NOREPLACE: EEXIST if a file came
 *    meanwhile). A regular file there is replaced, never written into.
 *  - A symlink is followed, and the character device or FIFO it names
 *    written in place (/dev/stdout on a pipe or terminal, /dev/stderr), only
 *    when the symlink is owned by the caller's effective UID or by root;
 *    anyone else's symlink is refused with ELOOP, in any directory (stricter
 *    than the kernel's protected_symlinks, which spares directories that are
 *    not sticky). Nothing is created through a symlink (a dangling one is
 *    ENOENT), and a regular file reached through one is EEXIST, never
 *    truncated nor written: reopening /dev/stdout loses what the shell's
 *    ">>" or an earlier writer put there (use pm_snapshot_create_fd()).
 *  - A character device (/dev/null, a terminal) is written in place, whoever
 *    owns it (only CAP_MKNOD makes one: no one plants it); a FIFO only when
 *    the caller or root owns it (else EPERM: someone's FIFO would hand them
 *    the output); it is opened O_NOFOLLOW and must be the file looked at
 *    (EAGAIN if the name was swapped meanwhile). A socket is refused (ENXIO
 *    through a symlink, else EPERM), a block device too (EPERM); a directory
 *    is EISDIR. In place means no temporary and no atomicity.
 *  - PM_OUTFILE_ENTRY: the path is a name others read as a regular file (a
 *    series, a node_exporter textfile): whatever is there but a directory is
 *    replaced by the rename, never followed nor written.
 *  - PM_OUTFILE_CREATE: a new file only (a key): anything at the path, or
 *    anything that appears there before the commit, is EEXIST.
 *
 * Mode: PM_OUTFILE_PRIVATE gives 0600 whatever the umask, for anything that
 * may hold frame numbers or swap offsets (snapshots, pictures of a process as
 * root); else 0644 less the umask. A file written in place keeps its mode.
 */
#define PM_OUTFILE_PRIVATE	(1u << 0)	/* mode 0600: the content may hold frame numbers */
#define PM_OUTFILE_ENTRY	(1u << 1)	/* replace whatever entry is at the path; never write through it */
#define PM_OUTFILE_CREATE	(1u << 2)	/* only where nothing is: anything at the path is EEXIST (keys) */

struct pm_outfile;

/*
 * pm_outfile_open - start writing @path as the rules above say; @flags:
 * PM_OUTFILE_*. Write the content to pm_outfile_fd(), then
 * pm_outfile_commit(); pm_outfile_free() without a commit leaves the path as
 * it was (unless written in place). Returns the handle, or NULL with errno:
 * EEXIST (PM_OUTFILE_CREATE and something is there; a regular file
 * through a symlink; no temporary name could be had), ELOOP (a symlink not
 * ours nor root's), EPERM (a block device or socket, or a FIFO not ours nor
 * root's), ENXIO (a socket through a symlink), EISDIR, EAGAIN (the entry
 * changed while it was opened), EINVAL (bad @flags), or the error of
 * opening the directory, the temporary or the file written in place.
 */
PM_API struct pm_outfile *pm_outfile_open(const char *path, unsigned flags);

/* pm_outfile_fd - the descriptor to write the content to (owned by @o). */
PM_API int pm_outfile_fd(const struct pm_outfile *o);

/* pm_outfile_in_place - true when @o writes into what is at the path (a device, FIFO, a symlink's file). */
PM_API bool pm_outfile_in_place(const struct pm_outfile *o);

/*
 * pm_outfile_commit - fsync and put the content at the path (see above).
 * Returns 0, or -errno: -EEXIST (a file appeared where there was none), the
 * fsync, link or rename error. Call once.
 */
PM_API int pm_outfile_commit(struct pm_outfile *o);

/* pm_outfile_free - close; an uncommitted temporary is removed. NULL is fine. */
PM_API void pm_outfile_free(struct pm_outfile *o);

/* pm_outfile_write - pm_outfile_open, write @len bytes of @buf, commit, free: 0 or -errno. */
PM_API int pm_outfile_write(const char *path, const void *buf, size_t len, unsigned flags);

/* ------------------------------------------------------------------ */
/* Diff: what changed between two views of one process                */
/* ------------------------------------------------------------------ */

/*
 * Diff: pm_diff_* - compare one process as two targets show it (two
 * snapshots, two captured trees, a snapshot and the live process): its
 * mappings matched by start, end, offset, protection and path, and the pages
 * of each matched mapping walked in lockstep. Every page counts in at most
 * one of appeared, freed, swapout, swapin, written, moved; thp_formed,
 * thp_split and uffdwp count beside those.
 */
struct pm_diff_bytes {
	uint64_t appeared;	/* neither present nor swapped in A, present or swapped in B */
	uint64_t freed;		/* present or swapped in A, neither in B */
	uint64_t swapout;	/* present in A, swapped in B */
	uint64_t swapin;	/* swapped in A, present in B */
	uint64_t written;	/* present in both: the zero page replaced, a new frame with the exclusive bit
				   gained (copy-on-write broken), or exclusive or soft-dirty gained on the same frame */
	uint64_t moved;		/* present in both, frames visible in both, another frame otherwise */
	uint64_t thp_formed;	/* present in both, PMD-mapped (THP) in B only */
	uint64_t thp_split;	/* present in both, PMD-mapped in A only */
	uint64_t uffdwp;	/* the uffd-wp bit differs */
};

enum pm_diff_status {
	PM_DIFF_MATCHED = 0,	/* in both: bytes says what changed */
	PM_DIFF_UNMAPPED,	/* in A only */
	PM_DIFF_MAPPED,		/* in B only */
};

/* One mapping of the comparison, as pm_diff_process() reports it. */
struct pm_diff_row {
	enum pm_diff_status status;
	const struct pm_mapping *map;	/* A's (MATCHED, UNMAPPED) or B's (MAPPED); path NUL-terminated; borrowed */
	struct pm_diff_bytes bytes;	/* MATCHED only; zero otherwise */
};

/* Called once per mapping, in address order; a non-zero return stops the diff and is returned. */
typedef int (*pm_diff_fn)(void *data, const struct pm_diff_row *row);

/*
 * pm_diff_range - classify the pages of [@start, @end) of @a (before) and
 * @b (after) into *@out (zeroed first). Both walks read entries
 * (PM_WALK_ENTRIES); a page outside every run of a side counts as neither
 * present nor swapped there. Returns 0, -EINVAL (@start > @end, or the
 * targets' page sizes differ), or the errors of pm_walk_new/pm_walk_next.
 */
PM_API int pm_diff_range(struct pm_target *a, struct pm_target *b, uint64_t start, uint64_t end,
			 struct pm_diff_bytes *out);

/*
 * pm_diff_process - compare every mapping of @a (before) with @b (after)
 * and call @fn once per mapping: matched ones with their byte totals, the
 * others as UNMAPPED or MAPPED. A mapping whose bounds changed (a heap that
 * grew) is one UNMAPPED and one MAPPED row. Memory use is two maps lines and
 * the walks' batches. Returns 0, what @fn returned, or -errno as
 * pm_maps_open, pm_maps_next and pm_diff_range.
 */
PM_API int pm_diff_process(struct pm_target *a, struct pm_target *b, pm_diff_fn fn, void *data);

/* One stretch of a matched mapping whose pages all changed alike, as pm_diff_pieces() reports it. */
struct pm_diff_piece {
	uint64_t start, end;		/* page-aligned, inside one mapping matched in both */
	const struct pm_mapping *map;	/* A's mapping the piece lies in; path NUL-terminated; borrowed */
	struct pm_diff_bytes bytes;	/* this piece's change: each category is 0 or end - start */
};

/* Called once per changed piece, in address order; a non-zero return stops the diff and is returned. */
typedef int (*pm_diff_piece_fn)(void *data, const struct pm_diff_piece *piece);

/*
 * pm_diff_pieces - pm_diff_process() with the addresses: match the mappings
 * of @a (before) and @b (after) as pm_diff_process() does, and within each
 * matched mapping call @piece for every stretch of pages that changed alike
 * (pm_diff_bytes_any() of its bytes is true), in address order; then call
 * @row for that mapping as pm_diff_process() would (unmatched mappings get
 * only their @row call: their pages count nowhere). Either callback may be
 * NULL. Pieces are not maximal: two adjacent ones may hold the same change.
 * The pieces of a mapping add up (pm_diff_bytes_add) to its row's bytes.
 * Memory use is that of pm_diff_process(). Returns 0, what a callback
 * returned, or -errno as pm_diff_process().
 */
PM_API int pm_diff_pieces(struct pm_target *a, struct pm_target *b, pm_diff_fn row, pm_diff_piece_fn piece,
			  void *data);

/* pm_diff_bytes_any - does any category of @b hold bytes? Pure. */
PM_API bool pm_diff_bytes_any(const struct pm_diff_bytes *b);

/* pm_diff_bytes_add - add @b to @sum, category by category. Pure. */
PM_API void pm_diff_bytes_add(struct pm_diff_bytes *sum, const struct pm_diff_bytes *b);

/* (new API families go above this line, each in its own section) */

#ifdef __cplusplus
}
#endif

#endif /* PAGEMAP_H */
