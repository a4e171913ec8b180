/*
 * snapshot_keeper.c - the keeper of a replay's tree. A replay makes a tree of names under $TMPDIR
 * (directories and empty files: readdir and stat of a replay need them) and pm_ctx_free removes it; a replay
 * killed by SIGKILL never gets there, and each one left its tree behind. The keeper is a child, cloned with
 * exit signal 0 (waitpid(-1) without __WALL never sees it, as watch_fork_child.c's), every signal blocked,
 * on a small stack of its own, holding one end of a pipe: EOF means we are gone, and it removes the tree with
 * raw system calls only (it is a copy of a process that may have had threads: no malloc, no locks). A byte
 * before the EOF means pm_ctx_free removed it already: the keeper leaves, touching nothing (the name may be
 * someone else's by then).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "base.h"
#include "snapshot_keeper.h"

#define KEEPER_STACK	(256u << 10)	/* MAP_NORESERVE: only what the removal touches */
#define KEEPER_DEPTH	32		/* SNAP_MAX_DEPTH (snapshot.h): path_ok() refuses deeper paths */
#define KEEPER_PASSES	4		/* a directory read again until a pass finds nothing (entries go as it reads) */

struct pmi_snap_keeper {
	pid_t pid;
	int wfd;	/* the pipe's write end: a byte then EOF, or EOF alone when we die */
	void *stack;
};

struct keeper_arg {
	int rfd, pfd, tfd;	/* the pipe's read end, the tree's parent directory, the tree */
	char name[NAME_MAX + 1];	/* the tree's name in its parent */
};

struct dirent64_raw {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

static bool dot(const char *n)
{
	return n[0] == '.' && (!n[1] || (n[1] == '.' && !n[2]));
}

/* Remove what directory @dfd holds; raw system calls on a bounded stack. */
__attribute__((no_sanitize_address)) static void empty_dir(long dfd, int depth)
{
	char buf[1024];
	int pass;

	for (pass = 0; pass < KEEPER_PASSES; pass++) {
		bool found = false;
		long n;

		syscall(SYS_lseek, dfd, 0L, (long)SEEK_SET);
		while ((n = syscall(SYS_getdents64, dfd, buf, (long)sizeof(buf))) > 0) {
			for (long off = 0; off < n; off += ((struct dirent64_raw *)(buf + off))->reclen) {
				struct dirent64_raw *d = (struct dirent64_raw *)(buf + off);
				long sub;

				if (dot(d->name))
					continue;
				found = true;
				if (syscall(SYS_unlinkat, dfd, d->name, 0L) == 0)
					continue;
				/* a directory (EISDIR): its contents first */
				sub = depth < KEEPER_DEPTH ? syscall(SYS_openat, dfd, d->name,
								    (long)(O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) : -1;
				if (sub >= 0) {
					empty_dir(sub, depth + 1);
					syscall(SYS_close, sub);
				}
				syscall(SYS_unlinkat, dfd, d->name, (long)AT_REMOVEDIR);
			}
		}
		if (!found)
			break;
	}
}

__attribute__((no_sanitize_address)) static int keeper_main(void *data)
{
	static const uint64_t all = ~0ULL;
	struct keeper_arg *a = data;
	struct stat now, tree;
	long n;
	char c;

	/*
	 * A session of our own: a kill of the caller's process group (timeout -s
	 * KILL, a shell's job) spares us. The parent also moves us to a group of
	 * our own before it goes on (then setsid() fails, EPERM: a group leader);
	 * either suffices.
	 */
	syscall(SYS_setsid);
	/* Also glibc's own two signals, which pthread_sigmask leaves unblocked: a ^C to the group spares us. */
	syscall(SYS_rt_sigprocmask, (long)SIG_SETMASK, &all, NULL, (long)sizeof(all));
	for (int fd = 0; fd < 3; fd++)	/* our stdio: a pipe a shell waits on would stay open */
		if (fd != a->rfd && fd != a->pfd && fd != a->tfd)
			syscall(SYS_close, (long)fd);
	/* close_range around the three we keep (5.9+; without it, our copies stay open until we exit) */
	{
		int keep[3] = { a->rfd, a->pfd, a->tfd }, i, j, t;
		for (i = 0; i < 3; i++)
			for (j = i + 1; j < 3; j++)
				if (keep[j] < keep[i]) {
					t = keep[i];
					keep[i] = keep[j];
					keep[j] = t;
				}
		syscall(SYS_close_range, 3L, (long)keep[0] - 1, 0L);
		syscall(SYS_close_range, (long)keep[0] + 1, (long)keep[1] - 1, 0L);
		syscall(SYS_close_range, (long)keep[1] + 1, (long)keep[2] - 1, 0L);
		syscall(SYS_close_range, (long)keep[2] + 1, (long)~0U, 0L);
	}
	while ((n = syscall(SYS_read, (long)a->rfd, &c, 1L)) < 0 && errno == EINTR)
		;
	/* EOF: we are gone. Only the tree we made, if its name still is it. */
	if (n == 0 && syscall(SYS_fstat, (long)a->tfd, &tree) == 0 &&
	    syscall(SYS_newfstatat, (long)a->pfd, a->name, &now, (long)AT_SYMLINK_NOFOLLOW) == 0 &&
	    now.st_dev == tree.st_dev && now.st_ino == tree.st_ino) {
		empty_dir(a->tfd, 0);
		syscall(SYS_unlinkat, (long)a->pfd, a->name, (long)AT_REMOVEDIR);
	}
	syscall(SYS_exit_group, 0L);
	return 0;
}

/* The tree's parent directory and name in it, opened and copied into @a. 0 or -errno. */
static int open_parent(const char *dir, struct keeper_arg *a)
{
	if ((a->pfd = pmi_open_parent(dir, a->name)) < 0)
		return a->pfd;
	if ((a->tfd = openat(a->pfd, a->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		int e = -errno;
		close(a->pfd);
		return e;
	}
	return 0;
}

struct pmi_snap_keeper *pmi_snap_keeper_start(const char *dir)
{
	struct pmi_snap_keeper *k = calloc(1, sizeof(*k));
	struct keeper_arg a = { .rfd = -1 };
	sigset_t all, old;
	int p[2] = { -1, -1 }, r;

	if (!k)
		return NULL;
	k->stack = mmap(NULL, KEEPER_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (k->stack == MAP_FAILED) {
		r = -errno;
		k->stack = NULL;
		goto fail;
	}
	if ((r = open_parent(dir, &a)))
		goto fail;
	if (pipe2(p, O_CLOEXEC) < 0) {
		r = -errno;
		goto fail_fds;
	}
	a.rfd = p[0];
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	/* Flags 0: exit signal 0, a copy of the address space (a's among it), no atfork handlers. */
	k->pid = clone(keeper_main, (char *)k->stack + KEEPER_STACK, 0, &a);
	r = k->pid < 0 ? -errno : 0;
	if (!r)	/* out of our process group before we return, whether or not its setsid() ran yet */
		setpgid(k->pid, k->pid);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(p[0]);
	if (r) {
		close(p[1]);
		goto fail_fds;
	}
	k->wfd = p[1];
	close(a.pfd);
	close(a.tfd);
	return k;
fail_fds:
	close(a.pfd);
	close(a.tfd);
fail:
	if (k->stack)
		munmap(k->stack, KEEPER_STACK);
	free(k);
	errno = -r;
	return NULL;
}

void pmi_snap_keeper_end(struct pmi_snap_keeper *k)
{
	ssize_t n;

	if (!k)
		return;
	do
		n = write(k->wfd, "q", 1);	/* "leave it": we removed the tree */
	while (n < 0 && errno == EINTR);
	close(k->wfd);
	while (waitpid(k->pid, NULL, __WALL) < 0 && errno == EINTR)
		;
	munmap(k->stack, KEEPER_STACK);
	free(k);
}
