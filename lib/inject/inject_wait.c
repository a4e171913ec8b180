/* inject_wait.c - the tracee's stops and deaths, under both attach and the injected calls (x86-64). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "inject.h"
#include "base.h"

#ifdef __x86_64__

#include "inject_x86.h"

/* Is the dead thread group leader @pid a child of ours (its /proc entry stays while it is a zombie)? */
static bool own_child(pid_t pid)
{
	char path[64], buf[1024];
	struct pm_proc_stat st;
	ssize_t n;
	int fd;

	/* One read of the whole line: a command name may hold a newline. */
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	return n > 0 && pmi_stat_line_parse(buf, (size_t)n, &st, NULL, 0) == 0 && st.ppid == getpid();
}

/*
 * Wait for the next report of the thread; -ESRCH once it is dead. A dead
 * tracee is waited for so that its real parent can reap it, unless that
 * parent is us (pagemap track -- CMD): then its exit status is our
 * caller's to collect, and reaping it here would lose it.
 */
int pmi_inject_wait_stop(struct pmi_inject *in, int *status)
{
	siginfo_t si;
	pid_t r;
	int w;

	do {
		memset(&si, 0, sizeof(si));
		w = waitid(P_PID, (id_t)in->tid, &si, WEXITED | WSTOPPED | __WALL | WNOWAIT);
	} while (w < 0 && errno == EINTR);
	if (w < 0)
		return -errno;
	if (si.si_code == CLD_EXITED || si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED) {
		in->gone = true;
		*status = si.si_code == CLD_EXITED ? (si.si_status & 0xff) << 8 : si.si_status & 0x7f;
		if (!(in->tid == in->pid && own_child(in->pid)))
			while (waitpid(in->tid, status, __WALL) < 0 && errno == EINTR)
				;
		return -ESRCH;
	}
	do
		r = waitpid(in->tid, status, __WALL);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	if (WIFEXITED(*status) || WIFSIGNALED(*status)) {
		in->gone = true;
		return -ESRCH;
	}
	return 0;
}

/*
 * A ptrace request failed. ESRCH on a thread we hold stopped means SIGKILL
 * woke it: wait for its death, so that its real parent gets to reap it.
 */
int pmi_inject_ptrace_failed(struct pmi_inject *in)
{
	int err = -errno, status;

	if (err == -ESRCH && !in->gone)
		pmi_inject_wait_stop(in, &status);
	return err;
}

#endif
