/* pagemap/procs.h - Processes: part of <pagemap.h>, which includes it (include that, not this). */
#ifndef PAGEMAP_PROCS_H
#define PAGEMAP_PROCS_H

#ifndef PAGEMAP_H
#error "include <pagemap.h>: it includes <pagemap/procs.h> with what it needs"
#endif

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

/*
 * pm_proc_uid - the real UID of @pid (0 = self): the first field of the
 * Uid: line of ROOT/proc/PID/status, into *@uid.
 * Returns 0, or -errno: the file's (ENOENT: no such process), or EBADMSG
 * when it has no Uid: line.
 */
PM_API int pm_proc_uid(struct pm_ctx *ctx, pid_t pid, uid_t *uid);

#endif /* PAGEMAP_PROCS_H */
