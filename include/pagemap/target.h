/* pagemap/target.h - Target: part of <pagemap.h>, which includes it (include that, not this). */
#ifndef PAGEMAP_TARGET_H
#define PAGEMAP_TARGET_H

#ifndef PAGEMAP_H
#error "include <pagemap.h>: it includes <pagemap/target.h> with what it needs"
#endif

struct pm_target;

/* What /proc/PID/stat says a process is. */
enum pm_proc_state {
	PM_PROC_GONE = 0,	/* no such process */
	PM_PROC_RUNNING,	/* a user process with memory */
	PM_PROC_ZOMBIE,
	PM_PROC_KTHREAD,
};

/* The fields of one /proc/PID/stat line that say what a process is, whether it ran, and which it is (proc(5)). */
struct pm_proc_stat {
	char state;			/* R, S, D, Z, T, ... */
	bool kthread;			/* PF_KTHREAD in flags: no memory of its own */
	int ppid, pgrp, session;
	int tty_nr, tpgid;		/* the controlling terminal (0: none), its foreground group (-1: none) */
	uint64_t minflt, majflt;	/* faults: the resident set moved */
	uint64_t utime, stime;		/* clock ticks: it ran */
	uint64_t starttime;		/* clock ticks after boot: with the PID, one process (PIDs are reused) */
	uint64_t vsize;			/* bytes mapped: mappings came or went */
	uint64_t rss;			/* resident pages by the kernel's counters */
	int processor;			/* the CPU it last ran on (field 39); -1 when the line stops before it */
	uint64_t reserved[4];		/* zero: room for fields a later version parses */
};

/*
 * pm_proc_stat_parse - the fields of one stat line of @len bytes (need not
 * be NUL-terminated) into @out, and the command name, which may hold any
 * byte but NUL (it ends at the line's last ')'), into @comm of @comm_size
 * bytes, truncated and NUL-terminated (NULL: not wanted).
 * Returns 0, or -EINVAL for a line that is not the kernel's (any field up
 * to rss missing or malformed): never another process's figures.
 */
PM_API int pm_proc_stat_parse(const char *buf, size_t len, struct pm_proc_stat *out, char *comm, size_t comm_size);

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

/*
 * pm_target_explain - why pm_target_open(@ctx, @pid) failed with errno @err,
 * in words for a user: into @buf of @size bytes the error line ("cannot open
 * process 42: it is a zombie and has no memory left", "cannot open
 * /proc/42/pagemap: Permission denied", a replayed tree's own problem for
 * EBADMSG), and into *@hint a line on the known cause (a static string), or
 * NULL. @name is how the caller named the process ("self", "42"; NULL: the
 * number). Reads ROOT/proc/PID/stat to tell a zombie or kernel thread from a
 * process that is gone, and looks at the caller's effective UID for EACCES.
 * The line is truncated to fit; PATH_MAX + 256 bytes always suffice.
 * Returns 0, or -EINVAL for a NULL @ctx, @buf or @hint or a zero @size.
 */
PM_API int pm_target_explain(struct pm_ctx *ctx, pid_t pid, const char *name, int err, char *buf, size_t size,
			     const char **hint);

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

#endif /* PAGEMAP_TARGET_H */
