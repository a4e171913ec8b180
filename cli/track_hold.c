/*
 * track_hold.c - `pagemap track -- COMMAND` holds its command at its exit, so that
 * the last, partial interval is collected: the command's first thread is traced
 * (PTRACE_SEIZE, PTRACE_O_TRACEEXIT), which stops it in exit_group before the
 * kernel tears its memory down (after that, even as a zombie not yet reaped, its
 * pagemap is empty). A traced thread also stops for each signal it is sent,
 * until track passes the signal on: track waits for SIGCHLD (a signalfd) beside
 * its timer and serves those stops at once, between collects.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli.h"
#include "track.h"

/* Why a last interval was not collected: the record says it. */
static const char why_by_pid[] =
	"the process exited before this interval's collect, and its memory with it "
	"(track holds a process at its exit only when it started it: -- COMMAND)";
static const char why_gone[] =
	"its memory was gone before track could stop it at its exit (killed by SIGKILL, "
	"or exit_group from a thread other than its first)";

static const char why_first_alone[] =
	"its first thread, the one track holds at its exit, ended alone (pthread_exit) while others ran "
	"on: track could hold it no more";

static const char why_early[] =
	"it exited before track could hold it at its exit (while tracking was being set up)";

/* Has our child @pid ended (not reaped: its status is track_reap's)? */
static bool ended(pid_t pid)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
}

void track_hold_start(struct track *tr)
{
	sigset_t chld;
	int err;

	if (!tr->command) {
		tr->unheld = why_by_pid;
		return;
	}
	if (tr->no_hold) {
		tr->unheld = "the process exited before this interval's collect, and its memory with it "
			     "(--no-hold: track did not hold it at its exit)";
		return;
	}
	if (pm_watch_method_flags(pm_watch_method(tr->w)) & PM_WATCH_METHOD_TRACES) {
		snprintf(tr->unheld_buf, sizeof(tr->unheld_buf), "%s stops the command by ptrace at each interval, "
			 "and a process has one tracer: track could not also hold it at its exit",
			 pm_watch_method_name(pm_watch_method(tr->w)));
		tr->unheld = tr->unheld_buf;
		return;
	}
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (tr->sigfd < 0) {
		/* Blocked: SIGCHLD (a stop of the command, the calibrating child) is only read from the signalfd. */
		sigprocmask(SIG_BLOCK, &chld, NULL);
		tr->sigfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	}
	if (tr->sigfd < 0 || ptrace(PTRACE_SEIZE, tr->pid, 0L, (long)PTRACE_O_TRACEEXIT) < 0) {
		err = errno;
		if (tr->sigfd >= 0 && ended(tr->pid))
			tr->unheld = why_early;
		else
			snprintf(tr->unheld_buf, sizeof(tr->unheld_buf), "track could not hold it at its exit: %s: %s",
				 tr->sigfd < 0 ? "signalfd" : "ptrace", strerror(err));
		if (tr->unheld != why_early)
			tr->unheld = tr->unheld_buf;
		return;
	}
	if (!tr->held_once)
		cli_note("track: process %d is traced (ptrace) until it exits, to be held there while its last "
			 "interval is collected; meanwhile each signal it is sent waits for track to pass it on (at "
			 "once, or after a collect or the start's measurement that is running)", (int)tr->pid);
	tr->held = tr->held_once = true;
	tr->unheld = why_gone;	/* held, yet gone without the exit stop */
}

/*
 * Is the exit stop of @pid's first thread the whole process's (exit_group, or its last thread)? In
 * exit_group the kernel sends SIGKILL to every other thread before the first one stops: a thread
 * that lives on without it pending means the first thread ends alone.
 */
static bool whole_process_exits(pid_t pid)
{
	char path[64], buf[2048], *p;
	struct dirent *e;
	bool whole = true;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(d = opendir(path)))
		return true;
	while (whole && (e = readdir(d))) {
		long tid = strtol(e->d_name, NULL, 10);

		if (tid <= 0 || tid == pid)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%ld/status", (int)pid, tid);
		if (cli_read_small(path, buf, sizeof(buf)) <= 0)
			continue;	/* gone meanwhile */
		if ((p = strstr(buf, "\nState:\t")) && (p[8] == 'Z' || p[8] == 'X'))
			continue;
		p = strstr(buf, "\nSigPnd:\t");
		whole = p && (strtoull(p + 9, NULL, 16) & (1ULL << (SIGKILL - 1)));
	}
	closedir(d);
	return whole;
}

/* One stop of the command: pass a signal on, leave a group stop stopped, note the exit. */
static void serve_stop(struct track *tr, int status)
{
	int sig = status & 0xff, event = status >> 8;

	if (event == PTRACE_EVENT_EXIT && !whole_process_exits(tr->pid)) {
		ptrace(PTRACE_DETACH, tr->pid, 0L, 0L);	/* the others run on: tracked, not held */
		tr->held = false;
		tr->unheld = why_first_alone;
		return;
	}
	if (event == PTRACE_EVENT_EXIT) {
		tr->at_exit = true;
		return;
	}
	/*
	 * A group stop (SIGSTOP and its kind) stays stopped, SIGCONT still waking it; the trap that
	 * tells its end (SIGTRAP, after a SIGCONT) is not one, and goes on.
	 */
	if (event == PTRACE_EVENT_STOP && (sig == SIGTRAP || ptrace(PTRACE_LISTEN, tr->pid, 0L, 0L) < 0))
		ptrace(PTRACE_CONT, tr->pid, 0L, 0L);
	if (event == PTRACE_EVENT_STOP)
		return;
	ptrace(PTRACE_CONT, tr->pid, 0L, (long)sig);	/* a signal for it, delivered now */
}

bool track_hold_serve(struct track *tr)
{
	struct signalfd_siginfo ssi;
	siginfo_t si;

	while (tr->sigfd >= 0 && read(tr->sigfd, &ssi, sizeof(ssi)) == sizeof(ssi))
		;
	while (tr->held && !tr->at_exit) {
		memset(&si, 0, sizeof(si));
		/* Stops only: its end stays for track_reap (the status is the command's answer). */
		if (waitid(P_PID, (id_t)tr->pid, &si, WSTOPPED | WNOHANG | __WALL) < 0 || si.si_pid != tr->pid)
			break;
		if (si.si_code == CLD_TRAPPED)
			serve_stop(tr, si.si_status);
	}
	return tr->at_exit;
}

/*
 * Let it go: from its exit stop (it goes on exiting), or, running, through a
 * stop of ours first (ptrace detaches only a stopped tracee), before a new
 * watch injects into it (one tracer). Its signals met on the way go with it.
 */
void track_hold_release(struct track *tr)
{
	siginfo_t si;

	if (!tr->held)
		return;
	tr->held = false;
	if (tr->at_exit) {
		ptrace(PTRACE_DETACH, tr->pid, 0L, 0L);
		return;
	}
	if (ptrace(PTRACE_INTERRUPT, tr->pid, 0L, 0L) < 0)
		return;
	for (;;) {
		memset(&si, 0, sizeof(si));
		/* Peek first: an end is not ours to reap. */
		if (waitid(P_PID, (id_t)tr->pid, &si, WSTOPPED | WEXITED | WNOWAIT | __WALL) < 0 && errno == EINTR)
			continue;
		if (si.si_pid != tr->pid || si.si_code != CLD_TRAPPED)
			return;
		if (waitid(P_PID, (id_t)tr->pid, &si, WSTOPPED | WNOHANG | __WALL) < 0 || si.si_pid != tr->pid)
			return;
		if (si.si_status >> 8 == PTRACE_EVENT_EXIT || si.si_status >> 8 == PTRACE_EVENT_STOP) {
			ptrace(PTRACE_DETACH, tr->pid, 0L, 0L);
			return;
		}
		ptrace(PTRACE_DETACH, tr->pid, 0L, (long)(si.si_status & 0xff));
		return;
	}
}
