/* inject.c - run system calls inside another process by ptrace (x86-64), and take a userfaultfd made there. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
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

#ifdef __x86_64__

#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>

#define USER_CS_64	0x33		/* cs of a task running 64-bit code; 0x23 is ia32 */
#define EFLAGS_TF	0x100
#define SYSCALL_STOP	(SIGTRAP | 0x80)	/* PTRACE_O_TRACESYSGOOD */
#define MAX_STOPS	64		/* unexpected stops tolerated while one call runs */
#define SCAN_LIMIT	(1u << 20)	/* bytes of one mapping searched for a syscall instruction */

struct pm_inject {
	pid_t pid;			/* thread group */
	pid_t tid;			/* the stopped thread */
	struct user_regs_struct saved;	/* as found at the stop */
	uint64_t sigmask;		/* blocked signals as found */
	bool have_mask;			/* sigmask was read */
	bool mask_set;			/* we blocked every signal */
	bool dirty;			/* registers changed since the stop */
	bool at_entry;			/* in the syscall-entry stop of a call of ours */
	bool seized;			/* PTRACE_SEIZE done */
	bool gone;			/* the target died (and was waited for) */
	int err;			/* sticky failure of the mechanism */
	uint64_t sysaddr;		/* a "syscall" (0f 05) in the target's code */
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
	return wait_interruptible(in, ts);
}

/* Wait for the next report of the thread; -ESRCH once it is dead (and waited for). */
static int wait_stop(struct pm_inject *in, int *status)
{
	pid_t r;

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

/* The first "syscall" instruction (0f 05) in [start, end) of the target, searched up to SCAN_LIMIT bytes. */
static int find_insn(int mem, uint64_t start, uint64_t end, uint64_t *addr)
{
	unsigned char buf[4096], prev = 0;
	uint64_t a = start;

	if (end - start > SCAN_LIMIT)
		end = start + SCAN_LIMIT;
	while (a < end) {
		size_t want = end - a < sizeof(buf) ? (size_t)(end - a) : sizeof(buf);
		ssize_t n = pread(mem, buf, want, (off_t)a);
		ssize_t i;

		if (n <= 0)
			return -EIO;
		for (i = 0; i < n; i++) {
			if (buf[i] == 0x05 && (i ? buf[i - 1] : prev) == 0x0f && (i || a > start)) {
				*addr = a + (uint64_t)i - 1;
				return 0;
			}
		}
		prev = buf[n - 1];
		a += (uint64_t)n;
	}
	return -ENOENT;
}

/* Search the executable mappings: the vDSO if @vdso, else file and anonymous code. */
static int search_maps(struct pm_inject *in, int mem, bool vdso)
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
	while (err && (len = getline(&line, &cap, f)) > 0) {
		struct pm_mapping m;

		if (pm_maps_parse_line(line, (size_t)len, &m) < 0 || !(m.prot & PM_PROT_EXEC) ||
		    (m.kind == PM_MAP_VDSO) != vdso || m.kind == PM_MAP_VSYSCALL)
			continue;
		if (find_insn(mem, m.start, m.end, &in->sysaddr) == 0)
			err = 0;
	}
	free(line);
	fclose(f);
	return err;
}

/*
 * Where calls will run: a syscall instruction already in the target, so no
 * code is patched. The vDSO has some (its fallback paths); else the one the
 * thread is stopped after; else any executable mapping. The bytes around it
 * need not decode as that instruction: only rip matters.
 */
static int find_syscall_insn(struct pm_inject *in)
{
	char path[64];
	unsigned char b[2];
	int mem, err;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/mem", (int)in->pid, (int)in->tid);
	mem = open(path, O_RDONLY | O_CLOEXEC);
	if (mem < 0)
		return -errno;
	err = search_maps(in, mem, true);
	if (err && in->saved.rip >= 2 && pread(mem, b, 2, (off_t)(in->saved.rip - 2)) == 2 &&
	    b[0] == 0x0f && b[1] == 0x05) {
		in->sysaddr = in->saved.rip - 2;
		err = 0;
	}
	if (err)
		err = search_maps(in, mem, false);
	close(mem);
	return err;
}

static int read_state(struct pm_inject *in)
{
	if (ptrace(PTRACE_GETREGS, in->tid, 0L, &in->saved) < 0)
		return ptrace_failed(in);
	if (in->saved.cs != USER_CS_64)
		return -EOPNOTSUPP;
	in->have_mask = ptrace(PTRACE_GETSIGMASK, in->tid, sizeof(in->sigmask), &in->sigmask) == 0;
	return find_syscall_insn(in);
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
	err = choose_thread(in, pid, &ts);
	if (!err)
		err = seize(in, &ts);
	if (!err)
		err = read_state(in);
	if (err) {
		if (in->seized)
			pm_inject_detach(in);
		else
			free(in);
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

/* Put back the registers and the signal mask as found (the thread is in a stop). */
static int restore_thread(struct pm_inject *in)
{
	if (in->dirty && ptrace(PTRACE_SETREGS, in->tid, 0L, &in->saved) < 0)
		return ptrace_failed(in);
	in->dirty = false;
	if (in->mask_set && ptrace(PTRACE_SETSIGMASK, in->tid, sizeof(in->sigmask), &in->sigmask) < 0)
		return ptrace_failed(in);
	in->mask_set = false;
	return 0;
}

/*
 * Run the call set up in @r; its registers at the syscall-exit stop come back
 * in @r. The thread is put back as found at once, so that between calls
 * (and if we die there) it holds its own registers and signal mask: only
 * while a call runs does it hold ours.
 */
static int run_call(struct pm_inject *in, struct user_regs_struct *r, long nr)
{
	uint64_t all = ~0ULL;
	int err;

	if (in->have_mask)
		in->mask_set = ptrace(PTRACE_SETSIGMASK, in->tid, sizeof(all), &all) == 0;
	in->dirty = true;
	if (ptrace(PTRACE_SETREGS, in->tid, 0L, r) < 0)
		return ptrace_failed(in);
	err = to_syscall_stop(in);
	if (err)
		return err;
	in->at_entry = true;
	if (ptrace(PTRACE_GETREGS, in->tid, 0L, r) < 0)
		return ptrace_failed(in);
	if ((long)r->orig_rax != nr || r->rip != in->sysaddr + 2)
		return -EIO;
	err = to_syscall_stop(in);
	if (err)
		return err;
	in->at_entry = false;
	if (ptrace(PTRACE_GETREGS, in->tid, 0L, r) < 0)
		return ptrace_failed(in);
	return restore_thread(in);
}

long pm_inject_syscall(struct pm_inject *in, long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
	struct user_regs_struct r;
	int err;

	if (!in)
		return -EINVAL;
	if (in->err)
		return in->err;
	r = in->saved;
	r.rip = in->sysaddr;
	r.orig_rax = (unsigned long long)-1;	/* no restart processing on the way there */
	r.rax = (unsigned long long)nr;
	r.rdi = (unsigned long long)a0;
	r.rsi = (unsigned long long)a1;
	r.rdx = (unsigned long long)a2;
	r.r10 = (unsigned long long)a3;
	r.r8 = (unsigned long long)a4;
	r.r9 = (unsigned long long)a5;
	r.eflags &= ~(unsigned long long)EFLAGS_TF;
	in->event_pid = 0;
	err = run_call(in, &r, nr);
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
	if (ptrace(PTRACE_SETOPTIONS, child, 0L, (long)PTRACE_O_EXITKILL) < 0)
		return -errno;
	return 0;
}

/* Stuck in the entry stop of an unexpected call: skip it (orig_rax -1) and stop at its exit. */
static int leave_entry(struct pm_inject *in)
{
	struct user_regs_struct r;

	if (ptrace(PTRACE_GETREGS, in->tid, 0L, &r) < 0)
		return ptrace_failed(in);
	r.orig_rax = (unsigned long long)-1;
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

int pm_remote_uffd(pid_t pid, uint64_t features, int *local_fd, uint64_t *got_features)
{
	*local_fd = -1;
	if (got_features)
		*got_features = 0;
	return -EOPNOTSUPP;
}

#endif
