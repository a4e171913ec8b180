/* pagemap/live.h - A live process table: part of <pagemap.h>, which includes it (include that, not this). */
#ifndef PAGEMAP_LIVE_H
#define PAGEMAP_LIVE_H

#ifndef PAGEMAP_H
#error "include <pagemap.h>: it includes <pagemap/live.h> with what it needs"
#endif

/*
 * Every process of ROOT/proc with its memory (pm_account), refreshed frame
 * by frame at a bounded cost: a process's smaps_rollup is read again only
 * when its stat line says it may have changed (it faulted, ran, grew or
 * shrank its address space or resident set, or changed state), and the
 * rest round-robin, oldest first, so that no row is older than the
 * table's bound on its age (PSS moves without the process doing anything
 * when a sharer maps or unmaps: that is what the bound is for).
 */
struct pm_live;

/* One process of a live table, as the last pm_live_refresh() left it. */
struct pm_live_row {
	pid_t pid;
	bool uid_known;
	uid_t uid;			/* the real UID, from status: read again with every rollup */
	enum pm_proc_state state;
	char comm[64];			/* stat's command name (any bytes but NUL) */
	int err;			/* 0, or why acct is unknown: -EACCES (another user's), -ESRCH (a kernel
					   thread, a zombie, or ended), -ENOENT (no smaps_rollup), -EINVAL */
	struct pm_account acct;		/* zero when err */
	struct pm_account prev;		/* acct at the read before the last (equal to acct: no change known) */
	double interval;		/* seconds between the reads of prev and acct; 0: no change known */
	double age;			/* seconds since acct was read, at the last refresh; -1 when never read */
	bool read_now;			/* acct was read by the last refresh */
	bool is_new;			/* first seen by the last refresh (a reused PID is a new row) */
};

/* What the last refresh did. */
struct pm_live_stats {
	size_t rows;			/* processes listed (those the filter keeps) */
	size_t read;			/* rollups read */
	size_t read_moved;		/* of them: the stat line moved, or a new process */
	size_t read_aged;		/* of them: round-robin, oldest first */
	size_t unread;			/* rows kept from an earlier read */
	size_t hidden;			/* rows whose rollup this reader may not read (EACCES) */
	size_t gone;			/* processes that ended since the refresh before */
	double interval;		/* seconds since the refresh before (0 the first time) */
	double oldest;			/* the age of the oldest row read, seconds (rows never read: none) */
	double max_age;			/* the bound pm_live_new was given */
};

/*
 * pm_live_new - an empty table of the processes of @ctx's ROOT/proc whose
 * rows are never older than @max_age seconds (> 0) after a refresh, given
 * refreshes at least every @max_age seconds.
 * Returns the table or NULL with errno (EINVAL, ENOMEM). The context must
 * outlive it.
 */
PM_API struct pm_live *pm_live_new(struct pm_ctx *ctx, double max_age);

/*
 * pm_live_refresh - one frame: list the processes, read each one's stat,
 * and the smaps_rollup of those that moved, that are new, and as many of
 * the rest (oldest first) as keep every row within the bound until the
 * refresh after, which the caller expects @next seconds from now.
 * Rows are in PID order. Returns 0, or -errno from listing ROOT/proc.
 */
PM_API int pm_live_refresh(struct pm_live *l, double next);

/*
 * pm_live_set_filter - list only the processes @fn returns true for (NULL:
 * every one). @fn sees a process's row before its rollup is read (PID, UID,
 * state, comm; acct not yet), so a table of a few processes reads only
 * theirs. Takes effect at the next refresh.
 */
typedef bool (*pm_live_filter_fn)(void *data, const struct pm_live_row *row);
PM_API void pm_live_set_filter(struct pm_live *l, pm_live_filter_fn fn, void *data);

/* pm_live_count, pm_live_at - the rows of the last refresh; a row is borrowed until the next. */
PM_API size_t pm_live_count(const struct pm_live *l);
PM_API const struct pm_live_row *pm_live_at(const struct pm_live *l, size_t i);

/* pm_live_stats - what the last refresh read and kept. */
PM_API void pm_live_stats(const struct pm_live *l, struct pm_live_stats *out);

/* The machine's memory from ROOT/proc/meminfo, in bytes; PM_LIVE_UNKNOWN where the kernel has no such line. */
#define PM_LIVE_UNKNOWN UINT64_MAX
struct pm_live_memory {
	uint64_t total;			/* MemTotal */
	uint64_t free;			/* MemFree */
	uint64_t available;		/* MemAvailable (3.14+) */
	uint64_t anon;			/* AnonPages: anonymous memory mapped by processes */
	uint64_t file;			/* Active(file) + Inactive(file): the page cache on the LRU */
	uint64_t shmem;			/* Shmem: tmpfs, shared anonymous and memfd memory */
	uint64_t anon_thp;		/* AnonHugePages: of anon, in transparent huge pages */
	uint64_t hugetlb;		/* Hugetlb (4.16+): every hugetlb pool page, used or not */
	uint64_t swap_total;		/* SwapTotal */
	uint64_t swap_free;		/* SwapFree */
};

/*
 * pm_live_memory - read @out from ROOT/proc/meminfo (one read).
 * Returns 0, or -errno: a read error, or EBADMSG from a replayed tree whose
 * meminfo lacks MemTotal.
 */
PM_API int pm_live_memory(struct pm_ctx *ctx, struct pm_live_memory *out);

/* pm_live_free - free the table. NULL is fine. */
PM_API void pm_live_free(struct pm_live *l);

#endif
