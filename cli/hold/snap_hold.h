/* snap_hold.h - `pagemap snapshot`'s cgroup v2 selection and --freeze: the cgroup freezer or SIGSTOP, always undone. */
#ifndef PM_SNAP_HOLD_H
#define PM_SNAP_HOLD_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "hold_guard.h"

enum hold_how { HOLD_NONE, HOLD_CGROUP, HOLD_SIGSTOP };

/* What --freeze holds: filled by hold_cgroup() or hold_pids(), undone by hold_release(). */
struct snap_hold {
	enum hold_how how;
	char dir[PATH_MAX];		/* the cgroup's directory under the cgroup v2 mount */
	char path[PATH_MAX];		/* -p held by the freezer: the processes' cgroup ("/a/b"), else "" */
	char left_by[16];		/* the PID of a dead pagemap's guardian whose freeze we took over */
	bool already;			/* the cgroup was frozen before: left so */
	/*
	 * What we hold, as the guardian was told of it: the cgroup.freeze and
	 * the marked directory, or each process SIGSTOPped here with its pidfd.
	 * An entry is complete before @nholds counts it (the signal handler
	 * reads them); one whose stop failed has fd -1.
	 */
	struct guard_hold *holds;
	size_t nholds;
	char already_pids[256];		/* those found stopped by someone else: "4,17" */
	uint64_t start, mono;		/* when everything was found held (CLOCK_REALTIME ns, CLOCK_MONOTONIC ns) */
	uint64_t end;			/* CLOCK_REALTIME ns, start + the monotonic time held */
	struct hold_guard guard;	/* releases the hold if pagemap dies holding it, however */
};
#define SNAP_HOLD_INIT { .how = HOLD_NONE, .guard = HOLD_GUARD_INIT }

/*
 * The directory of cgroup v2 @path (absolute, as /proc/PID/cgroup's "0::"
 * line gives it) under the cgroup2 mount, into @dir of PATH_MAX. 0, or -1
 * after a one-line message (no cgroup2 mount, no such cgroup).
 */
int cg2_dir(const char *path, char *dir);
/* Is process @pid in cgroup v2 @path or below it? false when gone or unreadable. */
bool cg2_holds(pid_t pid, const char *path);

/*
 * Hold still the processes of cgroup directory @h->dir (cg2_dir) with its
 * freezer, or the comma-separated @pids: with the freezer too when they
 * are all the processes of one leaf cgroup (its path into @h->path), else
 * with SIGSTOP (those found stopped are left to whoever stopped them; one
 * in the foreground of its terminal is refused). Each hold is first told to a guardian process, which
 * releases it if pagemap ends holding it, by any signal or crash; SIGINT,
 * SIGTERM and SIGHUP also undo the hold here at once and then end the
 * process as they would have. 0, or -1 after a one-line message, with
 * nothing held.
 */
int hold_cgroup(struct snap_hold *h, const char *path);
int hold_pids(struct snap_hold *h, const char *pids);
/* Thaw or SIGCONT what @h holds and restore the signals; sets @h->end. Safe to call twice, or with nothing held. */
void hold_release(struct snap_hold *h);

#endif
