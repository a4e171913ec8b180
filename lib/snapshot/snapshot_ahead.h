/* snapshot_ahead.h - text files of a process read ahead by a thread (snapshot_ahead.c), for
 * pm_snapshot_add_process. Inside libpagemap only. */
#ifndef PMI_SNAPSHOT_AHEAD_H
#define PMI_SNAPSHOT_AHEAD_H

#include <pthread.h>
#include <sched.h>
#include "snapshot.h"

/*
 * smaps, smaps_rollup and numa_maps each walk the process's page tables in
 * the kernel, visiting every page: together about a third of a snapshot of
 * a large process with THP off (bench/README.md, "The snapshot's own work
 * with THP off"). Where a second CPU is free a thread reads them ahead,
 * with the process's small text files and, for the first process, the
 * machine's files (snapshot_sys.c), while the caller reads maps' pagemap
 * and the frames' words (for a small process the longest part); they are
 * written afterwards, in their usual place. The wall time shrinks, the CPU
 * time does not.
 */
#define AHEAD_FILES	6	/* smaps, smaps_rollup, numa_maps, stat, status, cgroup: a process's texts but maps */

struct snap_ahead {
	const struct pm_ctx *ctx;
	pid_t pid;
	pthread_t thread;
	bool started, joined;
	bool pinned;		/* started on a CPU other than the caller's (snapshot_ahead.c: why) */
	cpu_set_t allowed;	/* the CPUs the caller may run on: the thread's once it is placed */
	int fd[AHEAD_FILES];	/* or the open's -errno */
	int r[AHEAD_FILES];	/* the read's 0 or -errno */
	struct snap_text t[AHEAD_FILES];
	struct snap_sys *sys;	/* the machine's files to gather after the process's, or NULL */
	const struct snap_users *users;	/* the writer's (NULL: no names, a tree's): a UID it holds is not looked up again */
	bool read;		/* the files were read (fd[], r[] and t[] hold them) */
	bool uid_known, named;	/* the process's real UID (status) is uid; this machine names it user */
	uid_t uid;
	char user[256];
};

/*
 * Start the thread if it pays (live, a second CPU, not PM_SNAPSHOT_ONE_THREAD); else the files are
 * read in place by pmi_snap_ahead_wait. @sys: the machine's files to gather too, if not yet (NULL:
 * none); @users: the writer's, whose names need no lookup.
 */
void pmi_snap_ahead_start(struct snap_ahead *a, const struct pm_ctx *ctx, pid_t pid, unsigned flags,
			  struct snap_sys *sys, const struct snap_users *users);
/* The index of @name among the files read ahead (AHEAD_FILES), or -1. */
int pmi_snap_ahead_index(const struct snap_ahead *a, const char *name);
/* The files are read: the thread ended, or (none started) they are read now. */
void pmi_snap_ahead_wait(struct snap_ahead *a);
/* The thread ended (whatever happened: it must end before the caller returns), and what was read freed. */
void pmi_snap_ahead_free(struct snap_ahead *a);

#endif
