/* snapshot_ahead.c - a process's smaps, smaps_rollup and numa_maps read by a thread of their own while
 * its pagemap is read (pm_snapshot_add_process writes them afterwards). */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base.h"
#include "snapshot_ahead.h"

static const char *const ahead_file[AHEAD_FILES] = { "smaps", "smaps_rollup", "numa_maps" };

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
	return NULL;
}

/* More than one CPU to run on: sched_getaffinity, as a cgroup's cpuset or taskset leaves them. */
static bool second_cpu(void)
{
	cpu_set_t set;

	return sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 1;
}

/* Start the thread if it pays (live, a second CPU, not PM_SNAPSHOT_ONE_THREAD); else the files are read in place. */
void pmi_snap_ahead_start(struct snap_ahead *a, const struct pm_ctx *ctx, pid_t pid, unsigned flags)
{
	sigset_t all, old;

	memset(a, 0, sizeof(*a));
	if ((flags & PM_SNAPSHOT_ONE_THREAD) || !ctx->live || !second_cpu())
		return;
	a->ctx = ctx;
	a->pid = pid;
	sigfillset(&all);	/* the caller's signals stay the caller's: the thread starts with all blocked */
	pthread_sigmask(SIG_SETMASK, &all, &old);
	a->started = pthread_create(&a->thread, NULL, ahead_run, a) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* The index of @name among the files read ahead, or -1 (none read ahead, or not one of them). */
int pmi_snap_ahead_index(const struct snap_ahead *a, const char *name)
{
	size_t i;

	for (i = 0; a->started && i < AHEAD_FILES; i++)
		if (!strcmp(ahead_file[i], name))
			return (int)i;
	return -1;
}

/* Wait for the thread: its files are read. */
void pmi_snap_ahead_wait(struct snap_ahead *a)
{
	if (a->started && !a->joined)
		pthread_join(a->thread, NULL);
	a->joined = true;
}

/* Wait (the thread must end before the caller returns, whatever happened) and free what it read. */
void pmi_snap_ahead_free(struct snap_ahead *a)
{
	size_t i;

	if (!a->started)
		return;
	pmi_snap_ahead_wait(a);
	a->started = false;
	for (i = 0; i < AHEAD_FILES; i++) {
		if (a->fd[i] >= 0)
			close(a->fd[i]);
		free(a->t[i].buf);
	}
}

