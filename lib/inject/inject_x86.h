/* inject_x86.h - the ptrace injection's handle and constants, shared by inject_attach.c, inject.c
 * and inject_child.c (x86-64 only). */
#ifndef PMI_INJECT_X86_H
#define PMI_INJECT_X86_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
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

struct pmi_inject {
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
	pid_t vfork_tid;		/* pmi_inject_vfork_thread's thread; the thread in its clone's vfork stop */
};

/* inject_wait.c: wait for the thread's next stop (reaping a dead one for its parent); 0 or -errno. */
int pmi_inject_wait_stop(struct pmi_inject *in, int *status);
/* inject_wait.c: a ptrace request failed; ESRCH on a held thread: wait for its death. Returns -errno. */
int pmi_inject_ptrace_failed(struct pmi_inject *in);

/* inject.c: the call machinery that inject_child.c's calls in children and threads build on. */
/* Resume to the next syscall stop, signals held back; with @vfork, a PTRACE_EVENT_VFORK stop
 * returns 1. */
int pmi_inject_to_stop(struct pmi_inject *in, bool vfork);
/* A stack pointer whose return runs syscall @nr (exit_group, exit) at once. */
long pmi_inject_exit_frame(struct pmi_inject *in, long nr);
/* Take the thread to the syscall-entry stop of call @nr with arguments @a, its registers in @r. */
int pmi_inject_enter_call(struct pmi_inject *in, struct user_regs_struct *r, long nr,
			  const long a[6]);
/* The call's syscall-exit stop has been reached: its registers in @r. */
int pmi_inject_exit_regs(struct pmi_inject *in, struct user_regs_struct *r);

#endif
