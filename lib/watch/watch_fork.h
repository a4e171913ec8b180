/* watch_fork.h - the fork snapshot back end's state, shared by watch_fork.c (comparing) and watch_fork_child.c (the child) (inside libpagemap only). */
#ifndef PMI_WATCH_SNAPSHOT_H
#define PMI_WATCH_SNAPSHOT_H

#include "watch.h"

#define STACK_SIZE (64u * 1024)

struct snap_state {
	pid_t snap;			/* the snapshot (our PID namespace), 0: none */
	pid_t snap_there;		/* remote: its PID in the target's namespace (for wait4 there) */
	struct pm_target *st;		/* the snapshot's pagemap */
	int pipe[2];			/* self: the snapshot reads [0] until EOF, we hold [1] */
	void *stack;			/* self: the snapshot's stack (STACK_SIZE) */
	char *scratch;			/* two pages for content comparisons, or NULL */
	int err;			/* remote: a snapshot could not be made; never tried again */
};

/* Make a new snapshot (its PID, its PID in the target, its pagemap); the current one stays. */
int pmi_watch_snap_take(struct pm_watch *w, pid_t *child, pid_t *there, struct pm_target **st);
/* Drop a snapshot pmi_watch_snap_take made, keeping the current one. */
void pmi_watch_snap_drop_new(struct pm_watch *w, pid_t child, pid_t there, struct pm_target *st);
/* Drop the current snapshot and keep the one pmi_watch_snap_take made. */
void pmi_watch_snap_switch_to(struct pm_watch *w, pid_t child, pid_t there, struct pm_target *st);
/* Take a new snapshot, then drop the old one: a failure keeps the old one. */
int pmi_watch_snap_retake(struct pm_watch *w);
/* Drop the snapshot: kill and reap it (inside the target too). */
void pmi_watch_snap_drop(struct pm_watch *w);

#endif
