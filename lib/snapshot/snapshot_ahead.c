/* snapshot_ahead.c - a process's text files (and the first time the machine's) read by a thread of their
 * own while its pagemap is read (pm_snapshot_add_process and pm_snapshot_add_system write them afterwards). */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base.h"
#include "snapshot_ahead.h"

static const char *const ahead_file[AHEAD_FILES] = { "smaps", "smaps_rollup", "numa_maps", "stat", "status",
							"cgroup" };

#define AHEAD_STATUS	4	/* ahead_file[AHEAD_STATUS]: the process's real UID */

/* The process's real UID from its status, and this machine's name for it unless the writer knows it already. */
static void ahead_user(struct snap_ahead *a)
{
	const struct snap_text *t = &a->t[AHEAD_STATUS];

	if (a->fd[AHEAD_STATUS] < 0 || a->r[AHEAD_STATUS] || pmi_status_uid(t->buf, (size_t)t->len, &a->uid))
		return;
	a->uid_known = true;
	if (a->users && a->users->n < SNAP_USERS_MAX && !pmi_snap_users_known(a->users, a->uid))
		a->named = pmi_snap_user_name(a->uid, a->user, sizeof(a->user)) == 0;
}

static void *ahead_run(void *arg)
{
	struct snap_ahead *a = arg;
	char live[4096];
	size_t i;

	for (i = 0; i < AHEAD_FILES; i++) {
		int r = pmi_pid_path(a->ctx, live, sizeof(live), a->pid, ahead_file[i]);

		/* a path that does not fit is not opened cut short: the file is read as it would be, unread */
		a->fd[i] = r < 0 ? r : pmi_open(a->ctx, live, O_RDONLY);
		a->r[i] = a->fd[i] < 0 ? 0 : pmi_snap_text_read(&a->t[i], a->fd[i]);
	}
	a->read = true;
	ahead_user(a);
	if (a->sys)
		pmi_snap_sys_gather(a->sys, a->ctx);
	return NULL;
}

/* More than one CPU to run on (@set: those we may run on, as a cgroup's cpuset or taskset leaves them). */
static bool second_cpu(cpu_set_t *set)
{
	return sched_getaffinity(0, sizeof(*set), set) == 0 && CPU_COUNT(set) > 1;
}

/*
 * Have the thread start on a CPU other than the caller's: the CPUs we may
 * run on but this one. Left to the scheduler, Linux 6.18 put the new thread
 * on the caller's own CPU in 20 snapshots of 20 of a sleep here (2 CPUs, the
 * other idle), where it waited for the caller's time slice: in 16 it began
 * only when the caller was done with the frames' words, after it instead of
 * beside it (0.3-0.4 ms of a 3.6 ms snapshot). The pin is lifted once the
 * thread is placed, so that on a busy machine it is not held to a CPU
 * another task keeps.
 */
static void start_elsewhere(struct snap_ahead *a, pthread_attr_t *at)
{
	cpu_set_t other = a->allowed;
	int me = sched_getcpu();

	if (me < 0 || me >= CPU_SETSIZE)
		return;
	CPU_CLR(me, &other);
	a->pinned = CPU_COUNT(&other) > 0 && pthread_attr_setaffinity_np(at, sizeof(other), &other) == 0;
}

/* Start the thread if it pays; else the files are read in place (snapshot_ahead.h). */
void pmi_snap_ahead_start(struct snap_ahead *a, const struct pm_ctx *ctx, pid_t pid, unsigned flags,
			  struct snap_sys *sys, const struct snap_users *users)
{
	pthread_attr_t at;
	sigset_t all, old;

	memset(a, 0, sizeof(*a));
	a->ctx = ctx;
	a->pid = pid;
	a->users = ctx->live ? users : NULL;	/* a tree's UIDs are another machine's: not named by ours */
	if ((flags & PM_SNAPSHOT_ONE_THREAD) || !ctx->live || !second_cpu(&a->allowed) || pthread_attr_init(&at))
		return;	/* read in place by pmi_snap_ahead_wait; the machine's files by pm_snapshot_add_system */
	a->sys = sys && !sys->gathered ? sys : NULL;
	start_elsewhere(a, &at);
	sigfillset(&all);	/* the caller's signals stay the caller's: the thread starts with all blocked */
	pthread_sigmask(SIG_SETMASK, &all, &old);
	a->started = pthread_create(&a->thread, &at, ahead_run, a) == 0;
	if (a->started && a->pinned)	/* placed: from there it may run wherever the caller may */
		pthread_setaffinity_np(a->thread, sizeof(a->allowed), &a->allowed);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&at);
}

int pmi_snap_ahead_index(const struct snap_ahead *a, const char *name)
{
	size_t i;

	for (i = 0; i < AHEAD_FILES; i++)
		if (!strcmp(ahead_file[i], name))
			return (int)i;
	return -1;
}

void pmi_snap_ahead_wait(struct snap_ahead *a)
{
	if (a->started && !a->joined)
		pthread_join(a->thread, NULL);
	else if (!a->started && !a->joined)
		ahead_run(a);	/* no thread: read here, now */
	a->joined = true;
}

void pmi_snap_ahead_free(struct snap_ahead *a)
{
	size_t i;

	if (a->started && !a->joined)
		pthread_join(a->thread, NULL);	/* it must end before the caller returns, whatever happened */
	a->started = false;
	a->joined = true;
	for (i = 0; a->read && i < AHEAD_FILES; i++) {
		if (a->fd[i] >= 0)
			close(a->fd[i]);
		free(a->t[i].buf);
	}
}

