/* inject.c - run system calls inside another process by ptrace (x86-64), and take a userfaultfd made there. */
#include <cpuid.h>
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
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
#include "internal.h"

int pm_remote_register_wp(int uffd, uint64_t start, uint64_t len)
{
	struct uffdio_register reg = {
		.range = { .start = start, .len = len },
		.mode = UFFDIO_REGISTER_MODE_WP,
	};

	return ioctl(uffd, UFFDIO_REGISTER, &reg) < 0 ? -errno : 0;
}

int pm_remote_unregister(int uffd, uint64_t start, uint64_t len)
{
	struct uffdio_range range = { .start = start, .len = len };

	return ioctl(uffd, UFFDIO_UNREGISTER, &range) < 0 ? -errno : 0;
}

int pm_inject_seccomp(pid_t pid)
{
	char path[64], line[256];
	int mode = -ESRCH, v;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Seccomp: %d", &v) == 1)
			mode = v;
	fclose(f);
	return mode;
}

#ifdef __x86_64__

#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>

#define USER_CS_64	0x33		/* cs of a task running 64-bit code; 0x23 is ia32 */
#define EFLAGS_TF	0x100
#define SYSCALL_STOP	(SIGTRAP | 0x80)	/* PTRACE_O_TRACESYSGOOD */
#define MAX_STOPS	64		/* unexpected stops tolerated while one call runs */
#define SCAN_LIMIT	(256u << 20)	/* bytes of executable mappings searched for a trampoline */
#define RED_ZONE	128		/* bytes below rsp the x86-64 ABI lets a function use */
#define XSTATE_MAX	(64u << 10)	/* largest extended FPU state taken (AMX tiles are 8 KiB) */
#define FP_XSTATE_MAGIC1	0x46505853U
#define FP_XSTATE_MAGIC2	0x46505845U
#define UC_FP_XSTATE		0x1
#define UC_SIGCONTEXT_SS	0x2
#define UC_STRICT_RESTORE_SS	0x4
#define ERESTARTSYS		512	/* kernel-internal returns of an interrupted call (include/linux/errno.h) */
#define ERESTARTNOINTR		513
#define ERESTARTNOHAND		514
#define ERESTART_RESTARTBLOCK	516

/*
 * The kernel's x86-64 rt_sigframe (arch/x86/include/asm/sigframe.h): what
 * rt_sigreturn reads at rsp - 8. Written out here: glibc's ucontext_t is
 * another layout past uc_mcontext.
 */
struct rt_frame {
	uint64_t pretcode;		/* the return address a handler pops; rsp points just above it */
	uint64_t uc_flags;
	uint64_t uc_link;
	uint64_t ss_sp;			/* uc_stack: sigaltstack(2) settings to restore */
	int32_t ss_flags;
	int32_t ss_pad;
	uint64_t ss_size;
	uint64_t r8, r9, r10, r11, r12, r13, r14, r15;	/* uc_mcontext: struct sigcontext */
	uint64_t rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, eflags;
	uint16_t cs, gs, fs, ss;
	uint64_t err, trapno, oldmask, cr2;
	uint64_t fpstate;		/* the XSAVE image, 64-byte aligned; 0 would reset the FPU */
	uint64_t reserved1[8];
	uint64_t sigmask;		/* uc_sigmask: the mask rt_sigreturn sets */
	uint8_t info[128];		/* siginfo: unused, but rt_sigreturn checks the whole frame is user memory */
};

_Static_assert(offsetof(struct rt_frame, r8) == 48, "uc_mcontext offset");
_Static_assert(offsetof(struct rt_frame, sigmask) == 304, "uc_sigmask offset");
_Static_assert(sizeof(struct rt_frame) == 440, "rt_sigframe size");

struct pm_inject {
	pid_t pid;			/* thread group */
	pid_t tid;			/* the stopped thread */
	struct user_regs_struct saved;	/* as found at the stop */
	uint64_t sigmask;		/* blocked signals as found */
	bool mask_set;			/* we blocked every signal */
	bool dirty;			/* registers changed since the stop */
	bool armed;			/* the thread points at the trampoline, its frame written */
	bool at_entry;			/* in the syscall-entry stop of a call of ours */
	bool seized;			/* PTRACE_SEIZE done */
	bool gone;			/* the target died (and was waited for) */
	int err;			/* sticky failure of the mechanism */
	int mem;			/* /proc/PID/task/TID/mem, read-write */
	uint64_t tramp;			/* "mov $15,%eax|%rax; syscall" in the target's code: rt_sigreturn */
	uint64_t sysaddr;		/* the syscall instruction of the trampoline */
	uint64_t frame;			/* where the frame is written: the thread's rsp while armed is frame + 8 */
	unsigned char *xstate;		/* its extended FPU state as found (XSAVE layout) */
	size_t xsize;			/* bytes of it rt_sigreturn reads */
	uint64_t held;			/* signals taken at stops, sent again after the detach (bit n-1: signal n) */
	long opts;			/* the ptrace options of the seize */
	pid_t event_pid;		/* the child of the last call's PTRACE_EVENT_CLONE/FORK/VFORK, 0 if none */
};

/* What /proc/PID/task/TID/status says about a thread. */
struct task_status {
	char state;
	pid_t tgid;
	pid_t tracer;
	int seccomp;
	bool shstk;			/* a user shadow stack (CET): rt_sigreturn would want a token on it */
};

static int read_task_status(pid_t pid, pid_t tid, struct task_status *ts)
{
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	memset(ts, 0, sizeof(*ts));
	while (fgets(line, sizeof(line), f)) {
		int v;

		if (sscanf(line, "State: %c", &ts->state) == 1)
			continue;
		if (sscanf(line, "Tgid: %d", &v) == 1)
			ts->tgid = v;
		else if (sscanf(line, "TracerPid: %d", &v) == 1)
			ts->tracer = v;
		else if (sscanf(line, "Seccomp: %d", &v) == 1)
			ts->seccomp = v;
		else if (!strncmp(line, "x86_Thread_features:", 20) && strstr(line, "shstk"))
			ts->shstk = true;
	}
	fclose(f);
	return ts->tgid > 0 ? 0 : -ESRCH;
}

static bool thread_dead(const struct task_status *ts)
{
	return ts->state == 'Z' || ts->state == 'X' || ts->state == 'x';
}

/* A leader that exited while its threads run stays a zombie thread: take the first live thread instead. */
static int pick_live_thread(struct pm_inject *in, struct task_status *ts)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int err = -ESRCH;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)in->pid);
	dir = opendir(path);
	if (!dir)
		return -ESRCH;
	while (err && (d = readdir(dir))) {
		pid_t tid = (pid_t)strtol(d->d_name, NULL, 10);

		if (tid > 0 && tid != in->pid && read_task_status(in->pid, tid, ts) == 0 && !thread_dead(ts)) {
			in->tid = tid;
			err = 0;
		}
	}
	closedir(dir);
	return err;
}

/*
 * A thread in uninterruptible sleep (a vfork parent, stuck I/O) stops only
 * once it leaves it, and the wait for the stop cannot be given up (a seized
 * thread cannot be detached while it runs): give it a second, else refuse.
 */
static int wait_interruptible(struct pm_inject *in, struct task_status *ts)
{
	struct timespec ms10 = { 0, 10000000 };
	int i, err = 0;

	for (i = 0; !err && ts->state == 'D' && i < 100; i++) {
		nanosleep(&ms10, NULL);
		err = read_task_status(in->pid, in->tid, ts);
	}
	return err ? err : (ts->state == 'D' ? -EAGAIN : 0);
}

/* Which thread to stop, and whether it may be stopped at all. */
static int choose_thread(struct pm_inject *in, pid_t pid, struct task_status *ts)
{
	int err = read_task_status(pid, pid, ts);

	if (err)
		return err;
	in->pid = ts->tgid;
	in->tid = pid;
	if (thread_dead(ts)) {
		if (pid != ts->tgid)
			return -ESRCH;
		err = pick_live_thread(in, ts);
		if (err)
			return err;
	}
	if (ts->tracer)
		return -EBUSY;
	if (ts->shstk)
		return -EOPNOTSUPP;
	return wait_interruptible(in, ts);
}

/* Is the dead thread group leader @pid a child of ours (its /proc entry stays while it is a zombie)? */
static bool own_child(pid_t pid)
{
	char path[64], buf[512], *p;
	int ppid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
		sscanf(p + 1, " %*c %d", &ppid);
	fclose(f);
	return ppid == getpid();
}

/*
 * Wait for the next report of the thread; -ESRCH once it is dead. A dead
 * tracee is waited for so that its real parent can reap it, unless that
 * parent is us (pagemap track -- CMD): then its exit status is our
 * caller's to collect, and reaping it here would lose it.
 */
static int wait_stop(struct pm_inject *in, int *status)
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
static int ptrace_failed(struct pm_inject *in)
{
	int err = -errno, status;

	if (err == -ESRCH && !in->gone)
		wait_stop(in, &status);
	return err;
}

/*
 * Seize and interrupt. A signal reported before the interrupt's stop is
 * delivered (its handler runs); the stop comes after it, as in CRIU's
 * compel. A group-stopped target reports PTRACE_EVENT_STOP too.
 */
static int seize(struct pm_inject *in, const struct task_status *ts)
{
	long opts = PTRACE_O_TRACESYSGOOD;
	int status, err;

	if (ts->seccomp)	/* an injected call could be killed by the filter */
		opts |= PTRACE_O_SUSPEND_SECCOMP;
	if (ptrace(PTRACE_SEIZE, in->tid, 0L, opts) < 0)	/* EINVAL: no CONFIG_CHECKPOINT_RESTORE */
		return errno == EINVAL && ts->seccomp ? -EPERM : -errno;
	in->seized = true;
	in->opts = opts;
	if (ptrace(PTRACE_INTERRUPT, in->tid, 0L, 0L) < 0)
		return ptrace_failed(in);
	for (;;) {
		err = wait_stop(in, &status);
		if (err)
			return err;
		if (status >> 16 == PTRACE_EVENT_STOP)
			return 0;
		if (ptrace(PTRACE_CONT, in->tid, 0L, (long)WSTOPSIG(status)) < 0)
			return ptrace_failed(in);
	}
}

/*
 * The first rt_sigreturn trampoline in [start, end) of the target: "mov
 * $15,%eax; syscall" (b8 0f 00 00 00 0f 05: glibc's __restore_rt, musl) or
 * "mov $15,%rax; syscall" (48 c7 c0 0f 00 00 00 0f 05: Go). *@budget
 * counts down the bytes read.
 */
static int find_tramp(int mem, uint64_t start, uint64_t end, size_t *budget, uint64_t *addr, uint64_t *sys)
{
	static const unsigned char pat1[] = { 0xb8, 0x0f, 0, 0, 0, 0x0f, 0x05 };
	static const unsigned char pat2[] = { 0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0, 0x0f, 0x05 };
	unsigned char buf[65536 + sizeof(pat2)];
	size_t keep = 0;
	uint64_t a = start;

	while (a < end && *budget) {
		size_t want = end - a < 65536 ? (size_t)(end - a) : 65536;
		ssize_t n = pread(mem, buf + keep, want, (off_t)a);
		size_t i, len;

		if (n <= 0)
			return -EIO;
		*budget = *budget > (size_t)n ? *budget - (size_t)n : 0;
		len = keep + (size_t)n;
		for (i = 0; i + sizeof(pat1) <= len; i++) {
			uint64_t at = a - keep + i;

			if (!memcmp(buf + i, pat1, sizeof(pat1))) {
				*addr = at;
				*sys = at + 5;
				return 0;
			}
			if (i + sizeof(pat2) <= len && !memcmp(buf + i, pat2, sizeof(pat2))) {
				*addr = at;
				*sys = at + 7;
				return 0;
			}
		}
		keep = len < sizeof(pat2) - 1 ? len : sizeof(pat2) - 1;
		memmove(buf, buf + len - keep, keep);
		a += (uint64_t)n;
	}
	return -ENOENT;
}

/*
 * Where the thread runs while calls are injected: an rt_sigreturn
 * trampoline already in the target's code (no byte of code is written, so
 * threads still running never meet patched code). The vDSO of x86-64 has
 * none; the C library's is found in its file mapping.
 */
static bool is_libc(const struct pm_mapping *m)
{
	static const char *const names[] = { "/libc.so", "/libc-", "/ld-musl-" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (memmem(m->path, m->path_len, names[i], strlen(names[i])))
			return true;
	return false;
}

/* One pass over the executable mappings: the C library's only (@libc), or all. */
static int search_maps(struct pm_inject *in, bool libc, size_t *budget)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *f;
	int err = -ENOEXEC;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/maps", (int)in->pid, (int)in->tid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (err && *budget && (len = getline(&line, &cap, f)) > 0) {
		struct pm_mapping m;

		if (pm_maps_parse_line(line, (size_t)len, &m) < 0 || !(m.prot & PM_PROT_EXEC) ||
		    m.kind == PM_MAP_VDSO || m.kind == PM_MAP_VSYSCALL || (libc && !is_libc(&m)))
			continue;
		if (find_tramp(in->mem, m.start, m.end, budget, &in->tramp, &in->sysaddr) == 0)
			err = 0;
	}
	free(line);
	fclose(f);
	return err;
}

/* The C library first: a big program's own code is not read through before it. */
static int find_trampoline(struct pm_inject *in)
{
	size_t budget = SCAN_LIMIT;
	int err = search_maps(in, true, &budget);

	return err == -ENOEXEC ? search_maps(in, false, &budget) : err;
}

/* Bytes of a standard-format XSAVE image that hold the components set in @bv (CPUID leaf 0xd). */
static uint32_t xsave_size(uint64_t bv)
{
	uint32_t size = 576, eax, ebx, ecx, edx;	/* legacy area + header */
	int i;

	for (i = 2; i < 64; i++)
		if ((bv >> i & 1) && __get_cpuid_count(0xd, (unsigned)i, &eax, &ebx, &ecx, &edx) && ebx + eax > size)
			size = ebx + eax;
	return size;
}

/*
 * The thread's extended FPU state, as rt_sigreturn wants it. NT_X86_XSTATE
 * gives the standard-format XSAVE image, its software bytes holding XCR0
 * (gdb's convention); a signal frame's hold magic1 and sizes instead, and
 * MAGIC2 follows the image (arch/x86/kernel/fpu/signal.c,
 * check_xstate_in_sigframe). The size covers the components the image
 * holds (XSTATE_BV): within what the kernel accepts for this task, even
 * where the regset is larger (AMX). Without XSAVE, the FXSAVE image only
 * (rt_sigreturn then restores x87 and SSE).
 */
static int read_xstate(struct pm_inject *in)
{
	struct iovec iov;
	uint64_t xcr0, bv;
	uint32_t v;

	in->xstate = calloc(1, XSTATE_MAX + 4);
	if (!in->xstate)
		return -ENOMEM;
	iov.iov_base = in->xstate;
	iov.iov_len = XSTATE_MAX;
	if (ptrace(PTRACE_GETREGSET, in->tid, (void *)NT_X86_XSTATE, &iov) == 0 && iov.iov_len >= 576) {
		memcpy(&xcr0, in->xstate + 464, 8);
		memcpy(&bv, in->xstate + 512, 8);
		in->xsize = xsave_size(bv);
		if (in->xsize <= iov.iov_len) {
			memset(in->xstate + 464, 0, 48);
			v = FP_XSTATE_MAGIC1;
			memcpy(in->xstate + 464, &v, 4);
			v = (uint32_t)in->xsize + 4;	/* extended_size */
			memcpy(in->xstate + 468, &v, 4);
			memcpy(in->xstate + 472, &xcr0, 8);	/* xfeatures */
			v = (uint32_t)in->xsize;	/* xstate_size */
			memcpy(in->xstate + 480, &v, 4);
			v = FP_XSTATE_MAGIC2;
			memcpy(in->xstate + in->xsize, &v, 4);
			return 0;
		}
	}
	iov.iov_len = 512;
	if (ptrace(PTRACE_GETREGSET, in->tid, (void *)NT_PRFPREG, &iov) < 0 || iov.iov_len != 512)
		return ptrace_failed(in);
	memset(in->xstate + 464, 0, 48);	/* no magic1: the FXSAVE part only */
	in->xsize = 512;
	return 0;
}

static int read_state(struct pm_inject *in)
{
	char path[64];
	int err;

	if (ptrace(PTRACE_GETREGS, in->tid, 0L, &in->saved) < 0)
		return ptrace_failed(in);
	if (in->saved.cs != USER_CS_64)
		return -EOPNOTSUPP;
	if (ptrace(PTRACE_GETSIGMASK, in->tid, sizeof(in->sigmask), &in->sigmask) < 0)
		return ptrace_failed(in);
	err = read_xstate(in);
	if (err)
		return err;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/mem", (int)in->pid, (int)in->tid);
	in->mem = open(path, O_RDWR | O_CLOEXEC);
	if (in->mem < 0)
		return -errno;
	return find_trampoline(in);
}

int pm_inject_attach(pid_t pid, struct pm_inject **out)
{
	struct task_status ts;
	struct pm_inject *in;
	int err;

	*out = NULL;
	if (pid <= 0 || pid == getpid())
		return -EINVAL;
	in = calloc(1, sizeof(*in));
	if (!in)
		return -ENOMEM;
	in->mem = -1;
	err = choose_thread(in, pid, &ts);
	if (!err)
		err = seize(in, &ts);
	if (!err)
		err = read_state(in);
	if (err) {
		if (in->seized)
			pm_inject_detach(in);
		else
			free(in);	/* nothing else is held before the seize */
		return err;
	}
	*out = in;
	return 0;
}

/* A clone/fork/vfork event of a call of ours (pm_inject_set_options asked for it): note the new child. */
static void event_child(struct pm_inject *in, int event)
{
	unsigned long msg;

	if ((event == PTRACE_EVENT_CLONE || event == PTRACE_EVENT_FORK || event == PTRACE_EVENT_VFORK) &&
	    ptrace(PTRACE_GETEVENTMSG, in->tid, 0L, &msg) == 0)
		in->event_pid = (pid_t)msg;
}

/* Resume until the next syscall stop, holding back signals that stop the thread meanwhile. */
static int to_syscall_stop(struct pm_inject *in)
{
	siginfo_t si;
	int status, err, n, sig;

	for (n = 0; n < MAX_STOPS; n++) {
		if (ptrace(PTRACE_SYSCALL, in->tid, 0L, 0L) < 0)
			return ptrace_failed(in);
		err = wait_stop(in, &status);
		if (err)
			return err;
		if (WSTOPSIG(status) == SYSCALL_STOP)
			return 0;
		if (status >> 16) {	/* PTRACE_EVENT_STOP: a group stop; the detach reinstates it */
			event_child(in, status >> 16);
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

/*
 * Put back the signal mask, then the registers as found (the thread is in a
 * stop). In this order a tracer killed between the two leaves the thread
 * armed with its own mask (rt_sigreturn sets the same), or with its own
 * registers and mask.
 */
static int restore_thread(struct pm_inject *in)
{
	if (in->mask_set && ptrace(PTRACE_SETSIGMASK, in->tid, sizeof(in->sigmask), &in->sigmask) < 0)
		return ptrace_failed(in);
	in->mask_set = false;
	if (in->dirty && ptrace(PTRACE_SETREGS, in->tid, 0L, &in->saved) < 0)
		return ptrace_failed(in);
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
static int write_frame(struct pm_inject *in)
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
static int arm(struct pm_inject *in)
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
		return ptrace_failed(in);
	in->armed = true;
	in->mask_set = ptrace(PTRACE_SETSIGMASK, in->tid, sizeof(all), &all) == 0;
	return 0;
}

long pm_inject_exit_stack(struct pm_inject *in)
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
	f.rax = SYS_exit_group;		/* ... which ends the child at once */
	f.rsp = at;
	f.eflags = in->saved.eflags & ~(uint64_t)EFLAGS_TF;
	f.cs = (uint16_t)in->saved.cs;
	f.ss = (uint16_t)in->saved.ss;
	f.sigmask = ~0ULL;
	if (pwrite(in->mem, &f, sizeof(f), (off_t)at) != (ssize_t)sizeof(f))
		return errno ? -errno : -EIO;
	return (long)(at + 8);
}

/*
 * Run one call: the thread enters rt_sigreturn at the trampoline; at its
 * syscall-entry stop the number and arguments become ours and rip the
 * trampoline again, so that after our call it would enter rt_sigreturn
 * once more. At every stop a thread let go thus restores itself: before
 * the swap rt_sigreturn runs; after it, our call, then rt_sigreturn. The
 * call's registers at the syscall-exit stop come back in @r.
 */
static int run_call(struct pm_inject *in, struct user_regs_struct *r, long nr, const long a[6])
{
	int err = arm(in);

	if (err)
		return err;
	err = to_syscall_stop(in);
	if (err)
		return err;
	in->at_entry = true;
	if (ptrace(PTRACE_GETREGS, in->tid, 0L, r) < 0)
		return ptrace_failed(in);
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
		return ptrace_failed(in);
	err = to_syscall_stop(in);
	if (err)
		return err;
	in->at_entry = false;
	if (ptrace(PTRACE_GETREGS, in->tid, 0L, r) < 0)
		return ptrace_failed(in);
	return r->rip == in->tramp ? 0 : -EIO;
}

long pm_inject_syscall(struct pm_inject *in, long nr, long a0, long a1, long a2, long a3, long a4, long a5)
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

int pm_inject_error(const struct pm_inject *in)
{
	return in ? in->err : -EINVAL;
}

long pm_inject_stopped_in(const struct pm_inject *in, long *ret)
{
	if (ret)
		*ret = in ? (long)in->saved.rax : 0;
	return in ? (long)in->saved.orig_rax : -1;
}

int pm_inject_set_options(struct pm_inject *in, long extra)
{
	if (!in)
		return -EINVAL;
	if (in->err)
		return in->err;
	if (ptrace(PTRACE_SETOPTIONS, in->tid, 0L, in->opts | extra) < 0)
		return ptrace_failed(in);
	return 0;
}

pid_t pm_inject_event_pid(const struct pm_inject *in)
{
	return in ? in->event_pid : 0;
}

int pm_inject_hold_child(pid_t child)
{
	int status;
	pid_t r;

	do
		r = waitpid(child, &status, __WALL);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	if (!WIFSTOPPED(status))
		return -ESRCH;	/* killed before its first instruction, and waited for */
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

int pm_inject_child_close_fds(const struct pm_inject *in, pid_t child)
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

/*
 * Stuck in a syscall-entry stop (a call that failed half-way): skip the
 * call (orig_rax -1) and stop at its exit. Armed, it returns to the
 * trampoline, so that a thread let go there still ends in rt_sigreturn.
 */
static int leave_entry(struct pm_inject *in)
{
	struct user_regs_struct r;

	if (ptrace(PTRACE_GETREGS, in->tid, 0L, &r) < 0)
		return ptrace_failed(in);
	r.orig_rax = (unsigned long long)-1;
	if (in->armed)
		r.rip = in->tramp;
	if (ptrace(PTRACE_SETREGS, in->tid, 0L, &r) < 0)
		return ptrace_failed(in);
	in->at_entry = false;
	return to_syscall_stop(in);
}

static int restore_and_detach(struct pm_inject *in)
{
	int err = 0, e, sig;

	if (in->at_entry)
		err = leave_entry(in);
	e = in->gone ? 0 : restore_thread(in);
	if (!err)
		err = e;
	/* The detach sets TIF_SIGPENDING: the kernel restarts an interrupted call on the way out. */
	if (!in->gone && ptrace(PTRACE_DETACH, in->tid, 0L, 0L) < 0) {
		e = ptrace_failed(in);
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

int pm_inject_detach(struct pm_inject *in)
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

/* The features a userfaultfd of our own offers (same kernel); 0 if none can be made. */
static uint64_t offered_features(void)
{
	struct uffdio_api api = { .api = UFFD_API };
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);

	if (fd < 0 && errno == EINVAL)	/* UFFD_USER_MODE_ONLY is 5.11+ */
		fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	if (ioctl(fd, UFFDIO_API, &api) < 0)
		api.features = 0;
	close(fd);
	return api.features;
}

/* Inject userfaultfd(), take the descriptor through @pidfd, close it in the target. */
static int take_remote_uffd(struct pm_inject *in, int pidfd, int *fd)
{
	long rfd, cerr;
	int err = 0;

	rfd = pm_inject_syscall(in, SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY, 0, 0, 0, 0, 0);
	if (rfd == -EINVAL && !pm_inject_error(in))	/* UFFD_USER_MODE_ONLY is 5.11+ */
		rfd = pm_inject_syscall(in, SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK, 0, 0, 0, 0, 0);
	if (rfd < 0)
		return (int)rfd;
	*fd = (int)syscall(SYS_pidfd_getfd, pidfd, (int)rfd, 0);
	if (*fd < 0)
		err = -errno;
	cerr = pm_inject_syscall(in, SYS_close, rfd, 0, 0, 0, 0, 0);
	if (!err && cerr < 0)
		err = (int)cerr;
	if (err && *fd >= 0) {
		close(*fd);
		*fd = -1;
	}
	return err;
}

static int uffd_api(int fd, uint64_t features, uint64_t *got)
{
	struct uffdio_api api = { .api = UFFD_API, .features = features };

	if (ioctl(fd, UFFDIO_API, &api) < 0)
		return -errno;
	if (got)
		*got = api.features;
	return (api.features & features) == features ? 0 : -EOPNOTSUPP;
}

int pm_remote_uffd(pid_t pid, uint64_t features, int *local_fd, uint64_t *got_features)
{
	struct pm_inject *in;
	uint64_t offered = offered_features();
	int pidfd, fd = -1, err, derr;

	*local_fd = -1;
	if (got_features)
		*got_features = offered;
	if (!(features & UFFD_FEATURE_WP_ASYNC))
		return -EINVAL;
	if (offered && (features & ~offered))
		return -EOPNOTSUPP;
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		return -errno;
	err = pm_inject_attach(pid, &in);
	if (!err) {
		err = take_remote_uffd(in, pidfd, &fd);
		derr = pm_inject_detach(in);
		if (!err)
			err = derr;
	}
	close(pidfd);
	if (!err)
		err = uffd_api(fd, features, got_features);
	if (err) {
		if (fd >= 0)
			close(fd);
		return err;
	}
	*local_fd = fd;
	return 0;
}

#else	/* !__x86_64__ */

int pm_inject_attach(pid_t pid, struct pm_inject **out)
{
	(void)pid;
	*out = NULL;
	return -EOPNOTSUPP;
}

long pm_inject_syscall(struct pm_inject *in, long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
	return -EOPNOTSUPP;
}

int pm_inject_error(const struct pm_inject *in)
{
	return -EOPNOTSUPP;
}

long pm_inject_stopped_in(const struct pm_inject *in, long *ret)
{
	if (ret)
		*ret = 0;
	return -1;
}

int pm_inject_detach(struct pm_inject *in)
{
	return in ? -EOPNOTSUPP : 0;
}

int pm_inject_set_options(struct pm_inject *in, long extra)
{
	(void)in;
	(void)extra;
	return -EOPNOTSUPP;
}

pid_t pm_inject_event_pid(const struct pm_inject *in)
{
	(void)in;
	return 0;
}

int pm_inject_hold_child(pid_t child)
{
	(void)child;
	return -EOPNOTSUPP;
}

long pm_inject_exit_stack(struct pm_inject *in)
{
	(void)in;
	return -EOPNOTSUPP;
}

int pm_inject_child_close_fds(const struct pm_inject *in, pid_t child)
{
	(void)in;
	(void)child;
	return -EOPNOTSUPP;
}

int pm_remote_uffd(pid_t pid, uint64_t features, int *local_fd, uint64_t *got_features)
{
	*local_fd = -1;
	if (got_features)
		*got_features = 0;
	return -EOPNOTSUPP;
}

#endif

const char *pm_watch_inject_words(pid_t pid, int err)
{
	switch (-err) {
	case EBUSY:
		return "it is traced already (a debugger, strace): a process has one tracer";
	case EAGAIN:
		return "it stayed in uninterruptible sleep (a vfork parent waiting for its child, stuck I/O), "
		       "where ptrace cannot stop it";
	case EPERM:
		if (pm_inject_seccomp(pid) > 0 && geteuid() != 0)
			return "it runs under a seccomp filter, which only CAP_SYS_ADMIN may suspend for the injected "
			       "calls (one could kill it)";
		return "ptrace or the injected call was refused (credentials, Yama, an LSM, seccomp)";
	case ENOEXEC:
		return "no rt_sigreturn trampoline (mov $15,%eax; syscall) in its code to run injected calls from";
	case EOPNOTSUPP:
		return "it runs 32-bit code or has a shadow stack";
	case ESRCH:
		return "it exited";
	}
	return strerror(-err);
}
