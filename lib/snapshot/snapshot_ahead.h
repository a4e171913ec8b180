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
#define AHEAD_FILES	6	/* smaps, smaps_rollup, numa_maps, stat, status, cgroup */

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
};

/*
 * Start the thread if it pays (live, a second CPU, not PM_SNAPSHOT_ONE_THREAD); else the files are
 * read in place. @sys: the machine's files the thread gathers too, if not yet (NULL: none).
 */
void pmi_snap_ahead_start(struct snap_ahead *a, const struct pm_ctx *ctx, pid_t pid, unsigned flags,
			  struct snap_sys *sys);
/* The index of @name among the files read ahead, or -1 (none read ahead, or not one of them). */
int pmi_snap_ahead_index(const struct snap_ahead *a, const char *name);
/* Wait for the thread: its files are read. */
void pmi_snap_ahead_wait(struct snap_ahead *a);
/* Wait (the thread must end before the caller returns, whatever happened) and free what it read. */
void pmi_snap_ahead_free(struct snap_ahead *a);

#endif
