/* inject_child.c - system calls in the children and threads a call of ours made (x86-64): hold a
 * new child, close its descriptors, run a call in a thread of its own (a vfork'd clone) and end it.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "compat.h"
#include "inject.h"
#include "base.h"

#ifdef __x86_64__

#include "inject_x86.h"

/* Wait (__WALL) for the first stop of an auto-attached child or thread: 0, or -errno (ESRCH: died, waited for). */
static int first_stop(pid_t child)
{
	int status;
	pid_t r;

	do
		r = waitpid(child, &status, __WALL);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return WIFSTOPPED(status) ? 0 : -ESRCH;
}

int pmi_inject_hold_child(pid_t child)
{
	int err = first_stop(child);

	if (err)
		return err;
	if (ptrace(PTRACE_SETOPTIONS, child, 0L, (long)(PTRACE_O_EXITKILL | PTRACE_O_TRACESYSGOOD)) < 0)
		return -errno;
	return 0;
}

/* Resume the held child to its next syscall stop; other stops (SIGSTOP: every other signal is blocked) are passed over. */
static int child_syscall_stop(pid_t child)
{
	int status, n;

	for (n = 0; n < MAX_STOPS; n++) {
		pid_t r;

		if (ptrace(PTRACE_SYSCALL, child, 0L, 0L) < 0)
			return -errno;
		do
			r = waitpid(child, &status, __WALL);
		while (r < 0 && errno == EINTR);
		if (r < 0)
			return -errno;
		if (!WIFSTOPPED(status))
			return -ESRCH;
		if (WSTOPSIG(status) == SYSCALL_STOP)
			return 0;
	}
	return -EIO;
}

int pmi_inject_child_close_fds(const struct pmi_inject *in, pid_t child)
{
	struct user_regs_struct r;
	int err;

	if (!in || in->err)
		return in ? in->err : -EINVAL;
	if (ptrace(PTRACE_GETREGS, child, 0L, &r) < 0)
		return -errno;
	r.rip = in->sysaddr;
	r.orig_rax = (unsigned long long)-1;
	r.rax = SYS_close_range;
	r.rdi = 0;
	r.rsi = ~0U;
	r.rdx = 0;
	if (ptrace(PTRACE_SETREGS, child, 0L, &r) < 0)
		return -errno;
	err = child_syscall_stop(child);	/* entry */
	if (!err)
		err = child_syscall_stop(child);	/* exit */
	if (!err && ptrace(PTRACE_GETREGS, child, 0L, &r) < 0)
		err = -errno;
	return err ? err : (long)r.rax < 0 ? (int)r.rax : 0;
}

long pmi_inject_thread_syscall(const struct pmi_inject *in, pid_t tid, long nr, long a0, long a1, long a2)
{
	struct user_regs_struct r;
	int err;

	if (!in || in->err)
		return in ? in->err : -EINVAL;
	err = child_syscall_stop(tid);	/* it enters rt_sigreturn at the trampoline (its exit frame) */
	if (err)
		return err;
	if (ptrace(PTRACE_GETREGS, tid, 0L, &r) < 0)
		return -errno;
	if ((long)r.orig_rax != SYS_rt_sigreturn || r.rip != in->sysaddr + 2)
		return -EIO;
	r.orig_rax = (unsigned long long)nr;
	r.rdi = (unsigned long long)a0;
	r.rsi = (unsigned long long)a1;
	r.rdx = (unsigned long long)a2;
	r.rip = in->tramp;	/* after our call, rt_sigreturn again: let go, it exits */
	if (ptrace(PTRACE_SETREGS, tid, 0L, &r) < 0)
		return -errno;
	err = child_syscall_stop(tid);
	if (!err && ptrace(PTRACE_GETREGS, tid, 0L, &r) < 0)
		err = -errno;
	if (err)
		return err;
	return r.rip == in->tramp ? (long)r.rax : -EIO;
}

/* Let the injected thread run to its exit(2) and reap it (its tracer's wait): its descriptor table is then closed. */
static int end_thread(pid_t tid)
{
	int status;
	pid_t r;

	if (ptrace(PTRACE_CONT, tid, 0L, 0L) < 0)
		return -errno;
	for (;;) {
		do
			r = waitpid(tid, &status, __WALL);
		while (r < 0 && errno == EINTR);
		if (r < 0)
			return -errno;
		if (WIFEXITED(status) || WIFSIGNALED(status))
			return 0;	/* reaped: its descriptor table is gone */
		if (ptrace(PTRACE_CONT, tid, 0L, 0L) < 0)	/* a group stop or an event on the way out */
			return -errno;
	}
}

long pmi_inject_vfork_done(struct pmi_inject *in)
{
	struct user_regs_struct r;
	pid_t tid;
	int err;

	if (!in || !in->vfork_tid)
		return -EINVAL;
	tid = in->vfork_tid;
	in->vfork_tid = 0;
	err = end_thread(tid);
	if (err) {
		/* Cannot be (our tracee, stopped) short of the target dying: let it go, it exits by its frame. */
		ptrace(PTRACE_DETACH, tid, 0L, 0L);
		if (!in->err)
			in->err = -EIO;
		return in->err;
	}
	/* Its vfork wait is over: on to the clone's syscall-exit stop. */
	err = pmi_inject_to_stop(in, false);
	if (!err)
		err = pmi_inject_exit_regs(in, &r);
	if (!err)
		err = pmi_inject_set_options(in, 0);
	if (err) {
		if (!in->err)
			in->err = err;
		return err;
	}
	return (long)r.rax;
}

long pmi_inject_vfork_thread(struct pmi_inject *in)
{
	struct user_regs_struct r;
	long a[6] = { CLONE_VM | CLONE_VFORK | CLONE_THREAD | CLONE_SIGHAND };
	int err;

	if (!in || in->vfork_tid)
		return -EINVAL;
	if (in->err)
		return in->err;
	err = pmi_inject_set_options(in, PTRACE_O_TRACEVFORK);
	if (err)
		return err;
	a[1] = pmi_inject_exit_frame(in, SYS_exit);	/* newsp */
	if (a[1] < 0) {
		pmi_inject_set_options(in, 0);
		return a[1];
	}
	in->event_pid = 0;
	err = pmi_inject_enter_call(in, &r, SYS_clone, a);
	if (!err)
		err = pmi_inject_to_stop(in, true);
	if (err == 0) {		/* no thread: the clone failed */
		err = pmi_inject_exit_regs(in, &r);
		if (!err)
			err = pmi_inject_set_options(in, 0);
		if (err) {
			in->err = err;
			return err;
		}
		return (long)r.rax < 0 ? (long)r.rax : -EIO;
	}
	if (err < 0) {
		in->err = err;
		return err;
	}
	/*
	 * In the vfork stop: the clone is made, the thread auto-attached to us.
	 * No PTRACE_O_EXITKILL for it (SIGKILL to a thread ends the whole
	 * target): let go, it exits by its frame.
	 */
	in->at_entry = false;
	if (in->event_pid <= 0) {	/* cannot be: TRACEVFORK reports it */
		in->err = -EIO;
		return -EIO;
	}
	in->vfork_tid = in->event_pid;
	err = first_stop(in->vfork_tid);
	if (err) {
		in->vfork_tid = 0;	/* died (the whole target with it): nothing to wait for */
		in->err = err;
		return err;
	}
	return in->vfork_tid;
}

#else	/* !__x86_64__ */

int pmi_inject_hold_child(pid_t child)
{
	(void)child;
	return -EOPNOTSUPP;
}

long pmi_inject_vfork_thread(struct pmi_inject *in)
{
	(void)in;
	return -EOPNOTSUPP;
}

long pmi_inject_vfork_done(struct pmi_inject *in)
{
	(void)in;
	return -EOPNOTSUPP;
}

long pmi_inject_thread_syscall(const struct pmi_inject *in, pid_t tid, long nr, long a0, long a1, long a2)
{
	(void)in, (void)tid, (void)nr, (void)a0, (void)a1, (void)a2;
	return -EOPNOTSUPP;
}

int pmi_inject_child_close_fds(const struct pmi_inject *in, pid_t child)
{
	(void)in;
	(void)child;
	return -EOPNOTSUPP;
}

#endif
