/* inject_attach.c - attach for injection (x86-64): choose and seize a thread, find a trampoline, take its state. */
#include <cpuid.h>
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
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
static int pick_live_thread(struct pmi_inject *in, struct task_status *ts)
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
static int wait_interruptible(struct pmi_inject *in, struct task_status *ts)
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
static int choose_thread(struct pmi_inject *in, pid_t pid, struct task_status *ts)
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

/*
 * Seize and interrupt. A signal reported before the interrupt's stop is
 * delivered (its handler runs); the stop comes after it, as in CRIU's
 * compel. A group-stopped target reports PTRACE_EVENT_STOP too.
 */
static int seize(struct pmi_inject *in, const struct task_status *ts)
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
		return pmi_inject_ptrace_failed(in);
	for (;;) {
		err = pmi_inject_wait_stop(in, &status);
		if (err)
			return err;
		if (status >> 16 == PTRACE_EVENT_STOP)
			return 0;
		if (ptrace(PTRACE_CONT, in->tid, 0L, (long)WSTOPSIG(status)) < 0)
			return pmi_inject_ptrace_failed(in);
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
static int search_maps(struct pmi_inject *in, bool libc, size_t *budget)
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
static int find_trampoline(struct pmi_inject *in)
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
static int read_xstate(struct pmi_inject *in)
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
		return pmi_inject_ptrace_failed(in);
	memset(in->xstate + 464, 0, 48);	/* no magic1: the FXSAVE part only */
	in->xsize = 512;
	return 0;
}

static int read_state(struct pmi_inject *in)
{
	char path[64];
	int err;

	if (ptrace(PTRACE_GETREGS, in->tid, 0L, &in->saved) < 0)
		return pmi_inject_ptrace_failed(in);
	if (in->saved.cs != USER_CS_64)
		return -EOPNOTSUPP;
	if (ptrace(PTRACE_GETSIGMASK, in->tid, sizeof(in->sigmask), &in->sigmask) < 0)
		return pmi_inject_ptrace_failed(in);
	err = read_xstate(in);
	if (err)
		return err;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/mem", (int)in->pid, (int)in->tid);
	in->mem = open(path, O_RDWR | O_CLOEXEC);
	if (in->mem < 0)
		return -errno;
	return find_trampoline(in);
}

int pmi_inject_attach(pid_t pid, struct pmi_inject **out)
{
	struct task_status ts;
	struct pmi_inject *in;
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
			pmi_inject_detach(in);
		else
			free(in);	/* nothing else is held before the seize */
		return err;
	}
	*out = in;
	return 0;
}

#endif
