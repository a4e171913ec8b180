/*
 * track_spawn.c - `pagemap track`'s target as a process: the command it spawns,
 * the wait for the next interval (which the target's end cuts short), and the
 * command's status at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "track.h"

double track_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#define SLICE 0.25	/* seconds: without a pidfd, a widened interval is slept in slices, to see the process end */

/* A pidfd of @pid (Linux 5.3), or -1. */
int track_open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

/*
 * Until @when, or a stop signal, or the process ended (its last interval is
 * collected at once, not after an interval --max-overhead made long), or a
 * held command stopped at its exit (tr->at_exit). With a pidfd, one sleep
 * that its end cuts short: no wake-up between collects (the slices woke us
 * 4 times a second, each a context switch on a CPU the target may share;
 * PAGEMAP_TRACK_SLICES=1 forces them, for the tests). A held command's
 * stops (its signals) wake us too: they are served at once.
 */
void track_sleep_until(struct track *tr, double when)
{
	struct timespec ts;

	for (;;) {
		struct pollfd p[2] = { { .fd = tr->pidfd, .events = POLLIN }, { .fd = tr->sigfd, .events = POLLIN } };
		double now = track_now(), d = when - now;

		if (now >= when || track_stop_signal)
			return;
		if (tr->pidfd < 0 && d > SLICE)
			d = SLICE;
		ts.tv_sec = (time_t)d;
		ts.tv_nsec = (long)((d - (double)ts.tv_sec) * 1e9);
		/* EINTR: a stop signal, checked above */
		if (ppoll(p, 2, &ts, NULL) > 0) {
			if ((p[1].revents & POLLIN) && track_hold_serve(tr))
				return;
			if (p[0].revents & POLLIN) {	/* it ended */
				close(tr->pidfd);
				tr->pidfd = -1;		/* the slices from now on: no spinning on a readable pidfd */
				return;
			}
			continue;
		}
		if (tr->pidfd < 0 && track_now() < when && pm_proc_state(tr->ctx, tr->pid) != PM_PROC_RUNNING)
			return;
	}
}

/*
 * Has our child @pid ended (without reaping it)? A command whose memory went
 * while it was being watched is exiting: give it 100 ms to become a zombie.
 */
bool track_command_ended(pid_t pid)
{
	struct timespec ts = { 0, 5 * 1000 * 1000 };
	siginfo_t si;
	int i;

	for (i = 0; i < 20; i++) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid)
			return true;
		nanosleep(&ts, NULL);
	}
	return false;
}

/* Fork and exec @argv; returns the PID once exec succeeded, or -1 after a message with *@err set. */
pid_t track_spawn(char **argv, int *errp)
{
	int p[2], err = 0;
	pid_t pid;

	*errp = 0;
	if (pipe2(p, O_CLOEXEC) < 0)
		return cli_error(errno, "track: pipe"), -1;
	pid = fork();
	if (pid < 0)
		return cli_error(errno, "track: fork"), -1;
	if (pid == 0) {
		close(p[0]);
		execvp(argv[0], argv);
		err = errno;
		if (write(p[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(p[1]);
	if (read(p[0], &err, sizeof(err)) == sizeof(err)) {
		close(p[0]);
		waitpid(pid, NULL, 0);
		cli_error(err, "track: cannot run %s", argv[0]);
		*errp = err;
		return -1;
	}
	close(p[0]);
	return pid;
}

int track_reap(struct track *tr, int code)
{
	int st;

	if (code != EXIT_OK || track_stop_signal) {
		kill(tr->pid, track_stop_signal ? track_stop_signal : SIGTERM);
		kill(tr->pid, SIGCONT);	/* a stopped command takes the signal only when it runs */
	}
	while (waitpid(tr->pid, &st, 0) < 0 && errno == EINTR)
		;
	if (code == EXIT_OK)
		code = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : EXIT_RUNTIME;
	return code;
}
