/* inject_uffd.c - a userfaultfd made inside another process, its register calls, the words for injection errors. */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "compat.h"
#include "inject.h"
#include "base.h"

int pmi_remote_register_wp(int uffd, uint64_t start, uint64_t len)
{
	struct uffdio_register reg = {
		.range = { .start = start, .len = len },
		.mode = UFFDIO_REGISTER_MODE_WP,
	};

	return ioctl(uffd, UFFDIO_REGISTER, &reg) < 0 ? -errno : 0;
}

int pmi_remote_unregister(int uffd, uint64_t start, uint64_t len)
{
	struct uffdio_range range = { .start = start, .len = len };

	return ioctl(uffd, UFFDIO_UNREGISTER, &range) < 0 ? -errno : 0;
}

int pmi_inject_seccomp(pid_t pid)
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
static int take_remote_uffd(struct pmi_inject *in, int pidfd, int *fd)
{
	long rfd, cerr;
	int err = 0;

	rfd = pmi_inject_syscall(in, SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY, 0, 0, 0, 0, 0);
	if (rfd == -EINVAL && !pmi_inject_error(in))	/* UFFD_USER_MODE_ONLY is 5.11+ */
		rfd = pmi_inject_syscall(in, SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK, 0, 0, 0, 0, 0);
	if (rfd < 0)
		return (int)rfd;
	*fd = (int)syscall(SYS_pidfd_getfd, pidfd, (int)rfd, 0);
	if (*fd < 0)
		err = -errno;
	cerr = pmi_inject_syscall(in, SYS_close, rfd, 0, 0, 0, 0, 0);
	if (!err && cerr < 0)
		err = (int)cerr;
	if (err && *fd >= 0) {
		close(*fd);
		*fd = -1;
	}
	return err;
}

#define PMI_PIDFD_THREAD	O_EXCL	/* linux/pidfd.h's PIDFD_THREAD, 6.9+: a pidfd of one thread */

/* Can a pidfd name a thread (6.9+)? pidfd_getfd then takes from that thread's own descriptor table. */
static bool thread_pidfds(void)
{
	int fd = (int)syscall(SYS_pidfd_open, getpid(), PMI_PIDFD_THREAD);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* userfaultfd() in thread @tid, the 5.11+ flag first; the descriptor number in its table, or -errno. */
static long thread_userfaultfd(struct pmi_inject *in, pid_t tid)
{
	long rfd = pmi_inject_thread_syscall(in, tid, SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY,
					     0, 0);

	if (rfd == -EINVAL)	/* UFFD_USER_MODE_ONLY is 5.11+ (or an unexpected stop: then this fails too) */
		rfd = pmi_inject_thread_syscall(in, tid, SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK, 0, 0);
	return rfd;
}

/*
 * The userfaultfd made in a thread of the target's own whose descriptor
 * table is a copy (clone without CLONE_FILES): the context is the target's
 * memory, the descriptor is never in the target's table. The clone is a
 * vfork (CLONE_VFORK): the attached thread stays in the kernel
 * (wait_for_vfork_done) until the new thread has exited, tracer or not, so
 * nothing runs on the stack that holds the new thread's exit frame before
 * the frame is used. Killed at any step, we leave the thread to exit by
 * its frame, its table with it; then the attached thread returns to its own.
 */
static int take_thread_uffd(struct pmi_inject *in, int *fd)
{
	long r, done;
	pid_t tid;
	int err = 0, tfd;

	r = pmi_inject_vfork_thread(in);
	if (r < 0)
		return (int)r;
	tid = (pid_t)r;
	r = thread_userfaultfd(in, tid);
	if (r < 0)
		err = (int)r;
	if (!err) {
		tfd = (int)syscall(SYS_pidfd_open, tid, PMI_PIDFD_THREAD);
		if (tfd < 0 || (*fd = (int)syscall(SYS_pidfd_getfd, tfd, (int)r, 0)) < 0)
			err = -errno;
		if (tfd >= 0)
			close(tfd);
	}
	done = pmi_inject_vfork_done(in);	/* the thread exits, its table closed; the clone returns */
	if (done < 0 && !err)
		err = (int)done;
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

int pmi_remote_uffd(pid_t pid, uint64_t features, int *local_fd, uint64_t *got_features)
{
	struct pmi_inject *in;
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
	err = pmi_inject_attach(pid, &in);
	if (!err) {
		/* Before 6.9 (no thread pidfd) the target holds the descriptor between two calls: killed there, it keeps it. */
		err = thread_pidfds() ? take_thread_uffd(in, &fd) : take_remote_uffd(in, pidfd, &fd);
		derr = pmi_inject_detach(in);
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

int pmi_remote_uffd(pid_t pid, uint64_t features, int *local_fd, uint64_t *got_features)
{
	*local_fd = -1;
	if (got_features)
		*got_features = 0;
	return -EOPNOTSUPP;
}

#endif

const char *pmi_watch_inject_words(pid_t pid, int err)
{
	switch (-err) {
	case EBUSY:
		return "it is traced already (a debugger, strace): a process has one tracer";
	case EAGAIN:
		return "it stayed in uninterruptible sleep (a vfork parent waiting for its child, stuck I/O), "
		       "where ptrace cannot stop it";
	case EPERM:
		if (pmi_inject_seccomp(pid) > 0 && geteuid() != 0)
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
	return pmi_strerror(-err);
}
