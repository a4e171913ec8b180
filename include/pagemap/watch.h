/* pagemap/watch.h - Write watch: part of <pagemap.h>, which includes it (include that, not this). */
#ifndef PAGEMAP_WATCH_H
#define PAGEMAP_WATCH_H

#ifndef PAGEMAP_H
#error "include <pagemap.h>: it includes <pagemap/watch.h> with what it needs"
#endif

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
 * armed. Where the kernel keeps soft-dirty bits (pm_features soft_dirty),
 * a huge page's own bit tells that it was written, reported whole
 * (huge_pages); the bits are cleared for the whole process at each reset
 * (clear_refs 4), and a first write to a huge page between reading and
 * clearing them is missed (pm_watch_atomic() false). Elsewhere each
 * collect reads their contents (process_vm_readv), compares a hash with
 * the last one and reports a changed one whole (huge_pages; stats
 * hashed_bytes): a collect then costs a read of them all, and a write of
 * the same bytes is not seen. pm_watch_notice() says which, in words, once
 * a huge page is left whole. One that appears in a sparse piece counts
 * as written. MPROTECT stays exact
 * on huge pages: the kernel splits the PMD mapping at the protection
 * change. PM_WATCH_NOTHP write-protects huge pages whole like the rest
 * (UFFD): the kernel splits each at its first write, so reports are exact
 * per page and only the huge pages written are split; it keeps new ones
 * from forming there (MADV_NOHUGEPAGE, the caller only).
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

#define PM_WATCH_NOTHP	(1u << 0)	/* per page in huge pages too (each split at its first write); MADV_NOHUGEPAGE (caller only) */

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

/*
 * pm_watch_notice - one line on what the back end found in the watched
 * ranges that changes what a collect costs or sees (UFFD: huge pages left
 * whole, and how their writes are told), or NULL while there is nothing to
 * say. It appears at the pm_watch_add() that finds the first such page and
 * does not change after. Borrowed.
 */
PM_API const char *pm_watch_notice(const struct pm_watch *w);

/* pm_watch_atomic - does a collect with PM_WATCH_RESET never lose a concurrent write? */
PM_API bool pm_watch_atomic(const struct pm_watch *w);

/* pm_watch_stats - running counts (borrowed, updated by each collect). */
PM_API const struct pm_watch_stats *pm_watch_stats(const struct pm_watch *w);

/* pm_watch_method_name - "auto", "uffd", "soft-dirty", "mprotect" or "fork-snapshot". Static string. */
PM_API const char *pm_watch_method_name(enum pm_watch_method method);

/*
 * The back ends, for a caller that names or lists them (an option, a binding),
 * so that it keeps no list of its own: a back end added to the library shows
 * there by itself.
 * pm_watch_method_count - how many back ends there are (AUTO is not one).
 * pm_watch_method_at - the @i-th (0 <= @i < count), in the order AUTO prefers
 * them; PM_WATCH_AUTO past the end.
 * pm_watch_method_from_name - the method pm_watch_method_name() spells @name
 * ("auto" too), or -EINVAL.
 */
PM_API size_t pm_watch_method_count(void);
PM_API enum pm_watch_method pm_watch_method_at(size_t i);
PM_API int pm_watch_method_from_name(const char *name);

#define PM_WATCH_METHOD_CALLER_ONLY	(1u << 0)	/* watches the caller only (pid 0) */
/*
 * Stops another process by ptrace at each reset and each add, not only in
 * pm_watch_new: the process may have no other tracer while it is watched
 * (a process has one), so a caller cannot hold it at its exit (fork-snapshot).
 */
#define PM_WATCH_METHOD_TRACES		(1u << 1)

/* pm_watch_method_flags - PM_WATCH_METHOD_* of @method; 0 for AUTO or an unknown method. */
PM_API unsigned pm_watch_method_flags(enum pm_watch_method method);

/*
 * pm_watch_method_perturbs - one sentence, no final period: what watching by
 * @method does to the watched process (a tool states it when it starts).
 * pm_watch_method_details - a paragraph for a help text: how @method watches
 * and what that costs the process, in lines of at most 86 characters joined
 * by '\n' (no final one).
 * Static strings; NULL for AUTO or an unknown method.
 */
PM_API const char *pm_watch_method_perturbs(enum pm_watch_method method);
PM_API const char *pm_watch_method_details(enum pm_watch_method method);

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

#endif /* PAGEMAP_WATCH_H */
