/* inject.c - run system calls inside another process by ptrace (x86-64): the calls, the frame, the
 * detach. Calls in the children and threads a call of ours makes: inject_child.c. */
#include <cpuid.h>
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include "compat.h"
#include "inject.h"
#include "base.h"

#ifdef __x86_64__

#include "inject_x86.h"

/* A clone/fork/vfork event of a call of ours (pmi_inject_set_options asked for it): note the new child. */
static void event_child(struct pmi_inject *in, int event)
{
	unsigned long msg;

	if ((event == PTRACE_EVENT_CLONE || event == PTRACE_EVENT_FORK || event == PTRACE_EVENT_VFORK) &&
	    ptrace(PTRACE_GETEVENTMSG, in->tid, 0L, &msg) == 0)
		in->event_pid = (pid_t)msg;
}

/*
 * Resume until the next syscall stop, holding back signals that stop the
 * thread meanwhile; with @vfork, a PTRACE_EVENT_VFORK stop ends the wait
 * too (returns 1): the clone is done, and the thread would go on to wait
 * for its child's exit, which a child we hold stopped never comes to.
 */
int pmi_inject_to_stop(struct pmi_inject *in, bool vfork)
{
	siginfo_t si;
	int status, err, n, sig;

	for (n = 0; n < MAX_STOPS; n++) {
		if (ptrace(PTRACE_SYSCALL, in->tid, 0L, 0L) < 0)
			return pmi_inject_ptrace_failed(in);
		err = pmi_inject_wait_stop(in, &status);
		if (err)
			return err;
		if (WSTOPSIG(status) == SYSCALL_STOP)
			return 0;
		if (status >> 16) {	/* PTRACE_EVENT_STOP: a group stop; the detach reinstates it */
			event_child(in, status >> 16);
			if (vfork && status >> 16 == PTRACE_EVENT_VFORK)
				return 1;
			continue;
		}
		sig = WSTOPSIG(status);
		/* A fault raised by the kernel at our instruction (syscall user dispatch, seccomp trap): ours. */
		if (ptrace(PTRACE_GETSIGINFO, in->tid, 0L, &si) == 0 && si.si_code > 0 &&
		    (sig == SIGSYS || sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGTRAP))
			return -EIO;
		in->held |= 1ULL << (sig - 1);
	}
	return -EIO;
}

static int to_syscall_stop(struct pmi_inject *in)
{
	return pmi_inject_to_stop(in, false);
}

/*
 * Put back the signal mask, then the registers as found (the thread is in a
 * stop). In this order a tracer killed between the two leaves the thread
 * armed with its own mask (rt_sigreturn sets the same), or with its own
 * registers and mask.
 */
static int restore_thread(struct pmi_inject *in)
{
	if (in->mask_set && ptrace(PTRACE_SETSIGMASK, in->tid, sizeof(in->sigmask), &in->sigmask) < 0)
		return pmi_inject_ptrace_failed(in);
	in->mask_set = false;
	if (in->dirty && ptrace(PTRACE_SETREGS, in->tid, 0L, &in->saved) < 0)
		return pmi_inject_ptrace_failed(in);
	in->dirty = false;
	in->armed = false;
	return 0;
}

/*
 * The registers rt_sigreturn puts back: those found, with a system call
 * the stop interrupted set up to run again, as the kernel does on the way
 * out of a stop when no handler runs (rt_sigreturn itself does no restart
 * processing). rt_sigreturn also resets the restart block, so a call that
 * would go on through restart_syscall (nanosleep, clock_nanosleep, poll,
 * futex waits with a timeout) is issued again instead: a relative timeout
 * starts over.
 */
static void frame_regs(const struct user_regs_struct *r, struct rt_frame *f)
{
	uint64_t rax = r->rax, rip = r->rip;

	if ((long)r->orig_rax >= 0) {
		switch (-(long)r->rax) {
		case ERESTARTSYS:
		case ERESTARTNOINTR:
		case ERESTARTNOHAND:
		case ERESTART_RESTARTBLOCK:
			rax = r->orig_rax;
			rip -= 2;
			break;
		}
	}
	f->r8 = r->r8, f->r9 = r->r9, f->r10 = r->r10, f->r11 = r->r11;
	f->r12 = r->r12, f->r13 = r->r13, f->r14 = r->r14, f->r15 = r->r15;
	f->rdi = r->rdi, f->rsi = r->rsi, f->rbp = r->rbp, f->rbx = r->rbx;
	f->rdx = r->rdx, f->rax = rax, f->rcx = r->rcx, f->rsp = r->rsp;
	f->rip = rip, f->eflags = r->eflags;
	f->cs = (uint16_t)r->cs, f->ss = (uint16_t)r->ss;
}

/*
 * Write below the thread's red zone a signal frame of its state as found
 * (registers, extended FPU state, signal mask), as the kernel would for a
 * handler. uc_stack gets an invalid mode: rt_sigreturn's sigaltstack()
 * fails (an error it ignores) and changes nothing.
 */
static int write_frame(struct pmi_inject *in)
{
	struct rt_frame f;
	uint64_t fp = (in->saved.rsp - RED_ZONE - in->xsize - 4) & ~63ULL;

	memset(&f, 0, sizeof(f));
	in->frame = (fp - sizeof(f)) & ~15ULL;
	f.uc_flags = UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS | (in->xsize > 512 ? UC_FP_XSTATE : 0);
	f.ss_flags = 3;		/* neither 0, SS_ONSTACK nor SS_DISABLE: EINVAL */
	frame_regs(&in->saved, &f);
	f.fpstate = fp;
	f.sigmask = in->sigmask;
	if (pwrite(in->mem, in->xstate, in->xsize + 4, (off_t)fp) != (ssize_t)(in->xsize + 4) ||
	    pwrite(in->mem, &f, sizeof(f), (off_t)in->frame) != (ssize_t)sizeof(f))
		return errno ? -errno : -EIO;
	return 0;
}

/*
 * Arm the thread before the first call: from here until the detach,
 * whatever it is left to do alone (its tracer killed) ends in
 * rt_sigreturn, which gives it back its registers, FPU state and mask. It
 * points at the trampoline with rsp at the frame; then every signal is
 * blocked (rt_sigreturn unblocks them again): signals sent meanwhile stay
 * pending.
 */
static int arm(struct pmi_inject *in)
{
	struct user_regs_struct r = in->saved;
	uint64_t all = ~0ULL;
	int err;

	if (in->armed)
		return 0;
	err = write_frame(in);
	if (err)
		return err;
	r.rip = in->tramp;
	r.rsp = in->frame + 8;
	r.orig_rax = (unsigned long long)-1;	/* no restart processing on the way there */
	r.rax = 0;
	r.eflags &= ~(unsigned long long)EFLAGS_TF;
	in->dirty = true;
	if (ptrace(PTRACE_SETREGS, in->tid, 0L, &r) < 0)
		return pmi_inject_ptrace_failed(in);
	in->armed = true;
	in->mask_set = ptrace(PTRACE_SETSIGMASK, in->tid, sizeof(all), &all) == 0;
	return 0;
}

long pmi_inject_exit_frame(struct pmi_inject *in, long nr)
{
	struct rt_frame f;
	uint64_t at;
	int err;

	if (!in)
		return -EINVAL;
	if (in->err)
		return in->err;
	err = arm(in);
	if (err) {
		in->err = err;
		return err;
	}
	at = (in->frame - sizeof(f)) & ~15ULL;
	memset(&f, 0, sizeof(f));
	f.uc_flags = UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS;
	f.ss_flags = 3;
	f.rip = in->sysaddr;		/* rt_sigreturn returns onto the syscall instruction ... */
	f.rax = (uint64_t)nr;		/* ... which ends the child (exit_group) or thread (exit) at once */
	f.rsp = at;
	f.eflags = in->saved.eflags & ~(uint64_t)EFLAGS_TF;
	f.cs = (uint16_t)in->saved.cs;
	f.ss = (uint16_t)in->saved.ss;
	f.sigmask = ~0ULL;
	if (pwrite(in->mem, &f, sizeof(f), (off_t)at) != (ssize_t)sizeof(f))
		return errno ? -errno : -EIO;
	return (long)(at + 8);
}

long pmi_inject_exit_stack(struct pmi_inject *in)
{
	return pmi_inject_exit_frame(in, SYS_exit_group);
}

/*
 * Run one call: the thread enters rt_sigreturn at the trampoline; at its
 * syscall-entry stop the number and arguments become ours and rip the
 * trampoline again, so that after our call it would enter rt_sigreturn
 * once more. At every stop a thread let go thus restores itself: before
 * the swap rt_sigreturn runs; after it, our call, then rt_sigreturn.
 * enter_call takes the thread to the swapped syscall-entry stop; run_call
 * on to the syscall-exit stop, whose registers come back in @r.
 */
int pmi_inject_enter_call(struct pmi_inject *in, struct user_regs_struct *r, long nr,
			  const long a[6])
{
	int err = arm(in);

	if (err)
		return err;
	err = to_syscall_stop(in);
	if (err)
		return err;
	in->at_entry = true;
	if (ptrace(PTRACE_GETREGS, in->tid, 0L, r) < 0)
		return pmi_inject_ptrace_failed(in);
	if ((long)r->orig_rax != SYS_rt_sigreturn || r->rip != in->sysaddr + 2)
		return -EIO;
	r->orig_rax = (unsigned long long)nr;
	r->rdi = (unsigned long long)a[0];
	r->rsi = (unsigned long long)a[1];
	r->rdx = (unsigned long long)a[2];
	r->r10 = (unsigned long long)a[3];
	r->r8 = (unsigned long long)a[4];
	r->r9 = (unsigned long long)a[5];
	r->rip = in->tramp;
	if (ptrace(PTRACE_SETREGS, in->tid, 0L, r) < 0)
		return pmi_inject_ptrace_failed(in);
	return 0;
}

/* The call's syscall-exit stop has been reached: its registers in @r. */
int pmi_inject_exit_regs(struct pmi_inject *in, struct user_regs_struct *r)
{
	in->at_entry = false;
	if (ptrace(PTRACE_GETREGS, in->tid, 0L, r) < 0)
		return pmi_inject_ptrace_failed(in);
	return r->rip == in->tramp ? 0 : -EIO;
}

static int run_call(struct pmi_inject *in, struct user_regs_struct *r, long nr, const long a[6])
{
	int err = pmi_inject_enter_call(in, r, nr, a);

	if (!err)
		err = to_syscall_stop(in);
	return err ? err : pmi_inject_exit_regs(in, r);
}

long pmi_inject_syscall(struct pmi_inject *in, long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
	const long a[6] = { a0, a1, a2, a3, a4, a5 };
	struct user_regs_struct r;
	int err;

	if (!in)
		return -EINVAL;
	if (in->err)
		return in->err;
	in->event_pid = 0;
	err = run_call(in, &r, nr, a);
	if (err) {
		in->err = err;
		return err;
	}
	return (long)r.rax;
}

int pmi_inject_error(const struct pmi_inject *in)
{
	return in ? in->err : -EINVAL;
}

long pmi_inject_stopped_in(const struct pmi_inject *in, long *ret)
{
	if (ret)
		*ret = in ? (long)in->saved.rax : 0;
	return in ? (long)in->saved.orig_rax : -1;
}

int pmi_inject_set_options(struct pmi_inject *in, long extra)
{
	if (!in)
		return -EINVAL;
	if (in->err)
		return in->err;
	if (ptrace(PTRACE_SETOPTIONS, in->tid, 0L, in->opts | extra) < 0)
		return pmi_inject_ptrace_failed(in);
	return 0;
}

pid_t pmi_inject_event_pid(const struct pmi_inject *in)
{
	return in ? in->event_pid : 0;
}

/*
 * Stuck in a syscall-entry stop (a call that failed half-way): skip the
 * call (orig_rax -1) and stop at its exit. Armed, it returns to the
 * trampoline, so that a thread let go there still ends in rt_sigreturn.
 */
static int leave_entry(struct pmi_inject *in)
{
	struct user_regs_struct r;

	if (ptrace(PTRACE_GETREGS, in->tid, 0L, &r) < 0)
		return pmi_inject_ptrace_failed(in);
	r.orig_rax = (unsigned long long)-1;
	if (in->armed)
		r.rip = in->tramp;
	if (ptrace(PTRACE_SETREGS, in->tid, 0L, &r) < 0)
		return pmi_inject_ptrace_failed(in);
	in->at_entry = false;
	return to_syscall_stop(in);
}

static int restore_and_detach(struct pmi_inject *in)
{
	int err = 0, e, sig;

	if (in->vfork_tid)
		pmi_inject_vfork_done(in);
	if (in->at_entry)
		err = leave_entry(in);
	e = in->gone ? 0 : restore_thread(in);
	if (!err)
		err = e;
	/* The detach sets TIF_SIGPENDING: the kernel restarts an interrupted call on the way out. */
	if (!in->gone && ptrace(PTRACE_DETACH, in->tid, 0L, 0L) < 0) {
		e = pmi_inject_ptrace_failed(in);
		if (!err)
			err = e;
	}
	if (in->gone)
		return -ESRCH;
	for (sig = 1; sig <= 64; sig++)
		if (in->held & (1ULL << (sig - 1)))
			syscall(SYS_tgkill, in->pid, in->tid, sig);
	return err;
}

int pmi_inject_detach(struct pmi_inject *in)
{
	int err;

	if (!in)
		return 0;
	err = in->gone ? -ESRCH : restore_and_detach(in);
	if (in->mem >= 0)
		close(in->mem);
	free(in->xstate);
	free(in);
	return err;
}

#else	/* !__x86_64__ */

int pmi_inject_attach(pid_t pid, struct pmi_inject **out)
{
	(void)pid;
	*out = NULL;
	return -EOPNOTSUPP;
}

long pmi_inject_syscall(struct pmi_inject *in, long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
	return -EOPNOTSUPP;
}

int pmi_inject_error(const struct pmi_inject *in)
{
	return -EOPNOTSUPP;
}

long pmi_inject_stopped_in(const struct pmi_inject *in, long *ret)
{
	if (ret)
		*ret = 0;
	return -1;
}

int pmi_inject_detach(struct pmi_inject *in)
{
	return in ? -EOPNOTSUPP : 0;
}

int pmi_inject_set_options(struct pmi_inject *in, long extra)
{
	(void)in;
	(void)extra;
	return -EOPNOTSUPP;
}

pid_t pmi_inject_event_pid(const struct pmi_inject *in)
{
	(void)in;
	return 0;
}

long pmi_inject_exit_stack(struct pmi_inject *in)
{
	(void)in;
	return -EOPNOTSUPP;
}

#endif
