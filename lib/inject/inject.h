/* inject.h - run system calls inside another process by ptrace, and take a userfaultfd made there (inside libpagemap only). */
#ifndef PMI_INJECT_H
#define PMI_INJECT_H

#include <stdint.h>
#include <sys/types.h>

/*
 * Syscall injection (x86-64 only; elsewhere every call but the register
 * helpers returns -EOPNOTSUPP). One thread of the target is stopped with
 * PTRACE_SEIZE + PTRACE_INTERRUPT; its other threads keep running. No byte
 * of its code is written (threads still running never meet patched code)
 * and no SIGTRAP is raised in it. PTRACE_O_EXITKILL is not used: the target
 * outlives the caller (only a child made by an injected clone gets it, from
 * pmi_inject_hold_child).
 *
 * Killing the caller never harms the target. Before the first call a
 * signal frame of the thread's state as found is written below its red zone
 * (registers, with a system call the stop interrupted set up to run again;
 * the XSAVE image; the signal mask; uc_stack with an invalid mode so that
 * sigaltstack stays), and the thread is pointed at an rt_sigreturn
 * trampoline already in its code ("mov $15,%eax; syscall", glibc's
 * __restore_rt, musl, Go) with rsp at the frame; only then is every signal
 * blocked in it (PTRACE_SETSIGMASK: signals sent meanwhile stay pending).
 * A call runs by letting the thread reach the trampoline's syscall-entry
 * stop (PTRACE_SYSCALL), where rt_sigreturn's number and arguments become
 * ours and rip the trampoline again, then its syscall-exit stop. Let go at
 * any instant (the kernel detaches the tracees of a dead tracer), the
 * thread runs rt_sigreturn, at once or after our call, and is back in its
 * own state. rt_sigreturn resets the restart block: a call that would go
 * on through restart_syscall (nanosleep, poll, futex waits with a timeout)
 * is issued again, a relative timeout starting over (on that path only).
 * pmi_remote_uffd makes its descriptor in a thread of the target's with a
 * table of its own (6.9+), cloned as a vfork so that the stopped thread
 * stays in the kernel until it has exited: a kill at any step leaves the
 * target no descriptor, and no handler of the stopped thread can run over
 * the new thread's frame;
 * before 6.9 one window remains: killed between the injected userfaultfd()
 * and close(), the target keeps an unused descriptor. The normal detach puts the mask, then the registers back at
 * the stop, so the kernel's own restart rules apply (see pmi_inject_detach).
 * tests/live/test_track_kill.c kills pagemap track before each of its ptrace
 * calls.
 *
 * Rules for callers: every call on one handle from the thread that attached
 * (ptrace is per tracer thread), and no waitpid(-1, ...) elsewhere in the
 * process meanwhile (it would take the tracee's stop reports).
 */
struct pmi_inject;

/*
 * pmi_inject_attach - stop a thread of @pid for injection. The thread is
 * @pid itself (a process's leader, or any thread id), or, when @pid is a
 * leader that has exited while its threads run, another thread of it. A
 * signal that reaches the thread before the stop is delivered as usual (its
 * handler runs) before the stop. A target that was stopped (SIGSTOP) stays
 * stopped after the detach.
 * Returns 0 with *@out set, or -errno with *@out NULL and the target as it
 * was (running, not traced):
 *   EINVAL      @pid <= 0 or the caller itself
 *   ESRCH       no such process, or it is a zombie or exiting
 *   EBUSY       already traced (a debugger, strace)
 *   EAGAIN      the thread stayed in uninterruptible sleep for a second (a
 *               vfork parent, stuck I/O): it could not be stopped until it
 *               leaves it, and a seized thread cannot be let go meanwhile
 *   EPERM       ptrace refused (credentials, Yama, LSM); also a target under
 *               seccomp when the caller may not suspend seccomp
 *               (PTRACE_O_SUSPEND_SECCOMP needs CAP_SYS_ADMIN): an injected
 *               call could kill it otherwise
 *   EOPNOTSUPP  not x86-64, the target runs 32-bit code, or the thread
 *               has a shadow stack (rt_sigreturn would want a token on it)
 *   ENOEXEC     no rt_sigreturn trampoline in its executable mappings (a
 *               static binary that never installs a signal handler)
 *   ENOMEM      out of memory
 */
int pmi_inject_attach(pid_t pid, struct pmi_inject **out);

/*
 * pmi_inject_syscall - run system call @nr with arguments @a0..@a5 in the
 * attached thread (x86-64 numbers: SYS_* of <sys/syscall.h>). Returns its
 * result: >= 0, or -errno as the kernel returned it.
 * If the mechanism fails instead (the target was killed: -ESRCH; an
 * unexpected stop: -EIO; the signal frame could not be written below its
 * stack: -EIO or -EFAULT, the thread untouched), the failure is sticky: this and every later call
 * return it, and pmi_inject_error() tells it apart from a failed syscall.
 * Blocking calls block the target's thread and the caller.
 */
long pmi_inject_syscall(struct pmi_inject *in, long nr, long a0, long a1, long a2, long a3, long a4, long a5);

/* pmi_inject_error - 0 while the mechanism works, else the -errno that broke it (sticky). */
int pmi_inject_error(const struct pmi_inject *in);

/*
 * pmi_inject_set_options - PTRACE_SETOPTIONS on the attached thread: the
 * options of the attach (PTRACE_O_TRACESYSGOOD, and SUSPEND_SECCOMP when
 * it was needed) plus @extra, e.g. PTRACE_O_TRACECLONE so that a child an
 * injected clone(2) makes is auto-attached to the caller's thread and held
 * at its first stop before it runs a single instruction. @extra 0 puts the
 * attach's options back (the detach drops them anyway).
 * Returns 0 or -errno (sticky mechanism failures as pmi_inject_syscall).
 */
int pmi_inject_set_options(struct pmi_inject *in, long extra);

/*
 * pmi_inject_event_pid - the child a PTRACE_EVENT_CLONE, _FORK or _VFORK
 * stop reported while the last pmi_inject_syscall ran (in the caller's PID
 * namespace; the call's own return value is its PID in the target's), or
 * 0 if there was none. Such a child is traced by the calling thread, seized
 * like its parent: see pmi_inject_hold_child.
 */
pid_t pmi_inject_event_pid(const struct pmi_inject *in);

/*
 * pmi_inject_hold_child - wait (waitpid __WALL) for the first stop of a
 * child auto-attached by an injected clone (pmi_inject_event_pid) and set
 * PTRACE_O_EXITKILL on it: it stays stopped, never having run, as long as
 * the caller's thread traces it, and the kernel kills it if the caller
 * dies. Killing it is the caller's business (SIGKILL, then waitpid with
 * __WALL takes the tracer's report; its real parent, the target, must
 * still reap it: a child made with exit signal 0 is never reaped by
 * itself). From the thread that made the injection.
 * Returns 0, or -errno: ESRCH (it died before its first stop; it was
 * waited for), ECHILD (not our tracee), the errors of PTRACE_SETOPTIONS.
 */
int pmi_inject_hold_child(pid_t child);

/*
 * pmi_inject_exit_stack - a stack pointer for the child of an injected
 * clone(2) (its newsp argument): a second signal frame, below the first,
 * whose rt_sigreturn lands on the trampoline's syscall instruction with
 * exit_group's number and every signal blocked. The child starts at the
 * trampoline like its parent; if the caller dies before
 * pmi_inject_hold_child gave it PTRACE_O_EXITKILL, it is let go and, instead
 * of running on as a copy of the target, exits at once (a zombie of the
 * target, exit signal 0). Arms the thread if no call has yet.
 * Returns the stack pointer (> 0) or -errno (sticky, as pmi_inject_syscall).
 */
long pmi_inject_exit_stack(struct pmi_inject *in);

/*
 * pmi_inject_child_close_fds - close every descriptor of a child held by
 * pmi_inject_hold_child (close_range(0, ~0U, 0) run in it, from the syscall
 * instruction of @in's trampoline): its copies of the target's descriptors
 * would otherwise delay a pipe's EOF, a socket's close or a lock's release
 * as long as it is held. The child was made without CLONE_FILES: the
 * target's own descriptors stay. The child stays stopped.
 * Returns 0, or -errno (ENOSYS before Linux 5.9, ESRCH if it died).
 */
int pmi_inject_child_close_fds(const struct pmi_inject *in, pid_t child);

/*
 * pmi_inject_stopped_in - the system call the thread was in when it stopped:
 * its number (-1 if it was running user code) and, in *@ret, the value it
 * was returning (-ERESTARTSYS = -512 etc. when the stop interrupted it).
 */
long pmi_inject_stopped_in(const struct pmi_inject *in, long *ret);

/*
 * pmi_inject_detach - PTRACE_DETACH (after putting the registers and the
 * signal mask back, if a failed call left them changed); then signals that
 * stopped the thread while calls ran and had to be held back (SIGSTOP,
 * which cannot be blocked) are sent to it again. Frees @in (NULL is fine);
 * use it on error paths too, in any state.
 * A system call the thread was in restarts exactly as after any ptrace
 * stop: the original orig_rax and -ERESTART* return value are put back and
 * the kernel, which the detach wakes with TIF_SIGPENDING set, applies its
 * own restart rules on the way back to user mode (restart, restart_syscall
 * for nanosleep-like calls, or -EINTR if a handler runs for a call not to
 * be restarted) - gdb's way after an inferior call; CRIU's compel instead
 * rewinds rip itself, which makes a pause() or sigsuspend() hit by a signal
 * during the stop sleep again after the handler.
 * Returns 0, or -errno: ESRCH if the target died (then it was reaped as
 * far as ptrace holds it; if the caller is also its parent, the exit status
 * is consumed here).
 */
int pmi_inject_detach(struct pmi_inject *in);

/*
 * A thread of the target with a descriptor table of its own, for a call
 * whose descriptor the target must never hold.
 * pmi_inject_vfork_thread - inject clone(CLONE_VM | CLONE_VFORK |
 * CLONE_THREAD | CLONE_SIGHAND) with PTRACE_O_TRACEVFORK, on a stack whose
 * frame (as pmi_inject_exit_stack's, but ending in exit(2), the thread
 * alone) lies just below the attached thread's. It inherits the armed
 * thread's mask (every signal blocked). Returns its id (> 0) held at its
 * first stop (no PTRACE_O_EXITKILL: SIGKILL to a thread ends its whole
 * process), the attached thread held in the clone's PTRACE_EVENT_VFORK
 * stop; or -errno (the clone's error; a mechanism failure is sticky). The
 * vfork is what makes a kill of the caller harmless: let go, the attached
 * thread waits in the kernel (wait_for_vfork_done, until the thread exits,
 * traced or not) and cannot run a signal handler over the thread's frame
 * before the thread has used it; the thread runs rt_sigreturn on its frame,
 * at once or after the call, and exits, its table with it.
 * pmi_inject_thread_syscall - run call @nr(@a0, @a1, @a2) in it through the
 * trampoline, as pmi_inject_syscall does: its result, or -errno also for a
 * failed mechanism (-EIO: an unexpected stop).
 * pmi_inject_vfork_done - let the thread run to its exit(2) and reap it
 * (its descriptor table is then closed), then take the attached thread to
 * the clone's syscall-exit stop: the clone's result (the thread's id in the
 * target's namespace) or -errno (sticky). pmi_inject_detach does it too if
 * it was left out.
 * From the thread that made the injection; the target stays attached.
 */
long pmi_inject_vfork_thread(struct pmi_inject *in);
long pmi_inject_thread_syscall(const struct pmi_inject *in, pid_t tid, long nr, long a0, long a1, long a2);
long pmi_inject_vfork_done(struct pmi_inject *in);

/*
 * pmi_remote_uffd - a userfaultfd whose context is @pid's memory, held only
 * by the caller: userfaultfd(O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY)
 * is injected (without UFFD_USER_MODE_ONLY on kernels before 5.11) and the
 * descriptor taken with pidfd_getfd(2) (Linux 5.6+, needs ptrace-attach
 * rights). On 6.9+ (pidfds of threads) the call runs in a thread injected
 * for it (pmi_inject_vfork_thread) with a copy of the target's descriptor
 * table, which exits with it: the target's own table never holds the
 * descriptor, whenever the caller is killed (the thread, let go, exits by
 * its frame while the attached thread waits for it in the kernel). Before 6.9 it
 * runs in the attached thread and is closed there again. Either way the
 * target is then detached keeping no descriptor. UFFDIO_API is done here on the caller's descriptor with
 * @features, which must include UFFD_FEATURE_WP_ASYNC: a synchronous
 * write-protect context with no reader would block the target at its first
 * write to a registered page. Closing the last descriptor (or the caller
 * dying) drops every registration and uffd-wp bit in the target (tested on
 * 6.12 and 6.18; 6.1 has no WP_ASYNC).
 * Returns 0 with *@local_fd (O_CLOEXEC) and *@got_features (what UFFDIO_API
 * reported: every feature the kernel offers; those asked for are enabled),
 * or -errno with *@local_fd -1:
 *   EINVAL      @features lacks UFFD_FEATURE_WP_ASYNC
 *   EOPNOTSUPP  a feature asked for is not offered (then checked on a
 *               userfaultfd of our own, before the target is touched;
 *               *@got_features says what is offered), or not x86-64
 *   ENOSYS      no pidfd_open/pidfd_getfd (before 5.6) or no userfaultfd
 *   the errors of pmi_inject_attach, the userfaultfd(2) errors in the target
 *   (EPERM, EMFILE, ...), those of pidfd_getfd and of UFFDIO_API.
 * On every failure the target is detached as found; before 6.9 it keeps
 * the injected descriptor if it was killed, or the caller was, or the
 * mechanism broke, between the two injected calls (the window of the
 * design above).
 */
int pmi_remote_uffd(pid_t pid, uint64_t features, int *local_fd, uint64_t *got_features);

/*
 * pmi_inject_seccomp - the seccomp mode of @pid's thread @pid (/proc/PID/status
 * "Seccomp:"): 0 none, 1 strict, 2 filter; -errno if unreadable. A target
 * under a filter is attached with PTRACE_O_SUSPEND_SECCOMP (CAP_SYS_ADMIN):
 * the injected calls pass its filter.
 */
int pmi_inject_seccomp(pid_t pid);

/* pmi_watch_inject_words - words for an error of pmi_inject_attach or of a call injected into process @pid. */
const char *pmi_watch_inject_words(pid_t pid, int err);

/*
 * pmi_remote_register_wp - UFFDIO_REGISTER [@start, @start + @len) of the
 * context's process (not the caller's) in write-protect mode on @uffd.
 * Returns 0 or -errno of the ioctl (EINVAL: unaligned, unmapped or not
 * registrable, e.g. VM_PFNMAP; EBUSY: registered on another userfaultfd).
 * pmi_remote_unregister - UFFDIO_UNREGISTER the range: its uffd-wp bits and
 * markers go too (tested on 6.12 and 6.18). Same returns.
 */
int pmi_remote_register_wp(int uffd, uint64_t start, uint64_t len);
int pmi_remote_unregister(int uffd, uint64_t start, uint64_t len);

#endif
