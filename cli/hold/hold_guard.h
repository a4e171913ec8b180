/* hold_guard.h - the guardian of --freeze: a process of its own that releases the holds when pagemap is gone. */
#ifndef PM_HOLD_GUARD_H
#define PM_HOLD_GUARD_H

#include <stddef.h>
#include <sys/types.h>

/*
 * One hold, as the guardian is told of it and as pagemap keeps it: a
 * process (@pid > 0, @fd its pidfd), a cgroup.freeze (@pid
 * GUARD_CGROUP_FREEZE) or its marked directory (GUARD_CGROUP_DIR). @fd < 0:
 * nothing to release.
 */
struct guard_hold {
	pid_t pid;
	int fd;
};

/* The guardian as pagemap sees it: its PID and our end of the socket it reads the holds from. */
struct hold_guard {
	pid_t pid;
	int sock;
};
#define HOLD_GUARD_INIT { .pid = 0, .sock = -1 }

/*
 * Start the guardian (before any hold is taken), with room for @max holds
 * allocated before it forks: it never allocates after pagemap was told a
 * hold is covered. 0, or -errno. It lives
 * until guard_end() or until pagemap is gone, however it ended (SIGKILL,
 * the OOM killer, a crash, any signal): then it thaws the cgroup and
 * continues the processes it was told of, and exits.
 */
int guard_start(struct hold_guard *g, size_t max);
#define GUARD_CGROUP_FREEZE	0	/* guard_tell's @pid for a cgroup.freeze */
#define GUARD_CGROUP_DIR	(-2)	/* ... for the directory whose mark goes after the thaw (hold_mark.h) */

/*
 * Tell the guardian of a hold BEFORE it is taken: the cgroup.freeze of a
 * cgroup about to be frozen (@pid GUARD_CGROUP_FREEZE) and its directory
 * (GUARD_CGROUP_DIR), or a process about to be stopped (@fd its pidfd);
 * at most guard_start()'s @max of them. 0 once the guardian will release
 * it, or -errno (the guardian is gone): then the hold must not be taken.
 */
int guard_tell(struct hold_guard *g, pid_t pid, int fd);
/*
 * Release the @n holds @v (async-signal-safe: write and pidfd_send_signal):
 * thaw each cgroup.freeze, SIGCONT each process by its pidfd (never by a
 * PID, which may be another's by now), then drop the marks. The guardian's
 * release and pagemap's own, its signal handler's too.
 */
void guard_release(const struct guard_hold *v, size_t n);
/* Everything was released by pagemap itself: the guardian forgets it all and exits; waited for. Safe with none. */
void guard_end(struct hold_guard *g);

#endif
