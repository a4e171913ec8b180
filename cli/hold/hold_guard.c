/* hold_guard.c - the guardian of --freeze: a process of its own that releases the holds when pagemap is gone. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "hold_guard.h"
#include "hold_mark.h"

#define GUARD_DONE	(-1)	/* the record that says pagemap released everything itself */
#define GUARD_DEATHSIG	SIGUSR2	/* PR_SET_PDEATHSIG's, read from a signalfd: blocked like every other */

/* What the guardian was told, each before the hold: room for all of it allocated before the fork. */
struct guard_list {
	struct guard_hold *v;
	size_t n, cap;
};

void guard_release(const struct guard_hold *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (v[i].fd < 0 || v[i].pid == GUARD_CGROUP_DIR) {
			continue;	/* below, once thawed */
		} else if (v[i].pid == GUARD_CGROUP_FREEZE) {
			ssize_t w = write(v[i].fd, "0", 1);	/* fails only when the cgroup went */
			(void)w;
		} else {
			/*
			 * Whether or not it looks stopped: a SIGSTOP sent a moment
			 * ago may not have stopped it yet, and SIGCONT discards it
			 * while pending. Only processes not stopped when pagemap
			 * came are here. By pidfd: a PID reused meanwhile is not
			 * signalled.
			 */
			syscall(SYS_pidfd_send_signal, v[i].fd, SIGCONT, NULL, 0);
		}
	}
	for (i = 0; i < n; i++)
		if (v[i].fd >= 0 && v[i].pid == GUARD_CGROUP_DIR)
			mark_drop(v[i].fd);
}

/* One record off @sock into @l: 1 read, 0 EOF or an error (pagemap is gone), -1 the done record. */
static int take_record(int sock, struct guard_list *l, int flags)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} c;
	int32_t pid;
	struct iovec iov = { &pid, sizeof(pid) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.buf, .msg_controllen = sizeof(c.buf) };
	struct cmsghdr *cm;
	ssize_t n;
	int fd = -1;

	do
		n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC | flags);
	while (n < 0 && errno == EINTR);
	if (n < 0 && errno == EAGAIN)
		return 2;
	if (n != (ssize_t)sizeof(pid))
		return 0;
	if (pid == GUARD_DONE)
		return -1;
	cm = CMSG_FIRSTHDR(&m);
	if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
	if (fd < 0)
		return 1;
	if (l->n == l->cap) {	/* more than guard_start() was told: pagemap is broken; release now */
		close(fd);
		return 0;
	}
	l->v[l->n++] = (struct guard_hold){ pid, fd };
	return 1;
}

/*
 * Out of the terminal's session (no job-control signal, no SIGHUP reaches
 * it, and it holds no terminal), every signal it can block blocked, no
 * descriptor of pagemap's but the socket, the OOM killer told to pass it
 * over (as root): nothing that ends pagemap ends it first.
 */
static int guardian_setup(int sock, pid_t parent)
{
	sigset_t all, death;
	int null, sfd;

	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	setsid();
	if (chdir("/") < 0)
		return -1;
	if (sock != 3 && (dup2(sock, 3) < 0 || close(sock) < 0))
		return -1;
	if ((null = open("/dev/null", O_RDWR)) >= 0) {
		dup2(null, 0), dup2(null, 1), dup2(null, 2);
		if (null > 3)
			close(null);
	}
	syscall(SYS_close_range, 4U, ~0U, 0);
	if ((null = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC)) >= 0) {
		ssize_t w = write(null, "-1000", 5);	/* refused without CAP_SYS_RESOURCE: then as any other */
		(void)w;
		close(null);
	}
	/* The second line: the socket's EOF is the first. */
	sigemptyset(&death);
	sigaddset(&death, GUARD_DEATHSIG);
	sfd = signalfd(-1, &death, SFD_CLOEXEC | SFD_NONBLOCK);
	prctl(PR_SET_PDEATHSIG, GUARD_DEATHSIG);
	if (getppid() != parent)	/* pagemap died before the prctl */
		raise(GUARD_DEATHSIG);
	return sfd;
}

static __attribute__((noreturn)) void guardian_main(int sock, pid_t parent, struct guard_hold *v, size_t max)
{
	struct guard_list l = { v, 0, max };
	int sfd = guardian_setup(sock, parent), r;

	sock = 3;
	for (;;) {
		struct pollfd p[2] = { { sock, POLLIN, 0 }, { sfd, POLLIN, 0 } };

		if (poll(p, sfd >= 0 ? 2 : 1, -1) < 0 && errno != EINTR)
			break;
		if (sfd >= 0 && p[1].revents) {	/* pagemap died: what it sent is queued; take it all, then release */
			while ((r = take_record(sock, &l, MSG_DONTWAIT)) == 1)
				;
			if (r < 0)
				_exit(0);
			break;
		}
		if ((r = take_record(sock, &l, MSG_DONTWAIT)) == 0)
			break;
		if (r < 0)
			_exit(0);	/* released by pagemap itself */
	}
	guard_release(l.v, l.n);
	_exit(0);
}

int guard_start(struct hold_guard *g, size_t max)
{
	/* Before the fork: the guardian calls no allocator once pagemap counts on it to keep a hold. */
	struct guard_hold *v = calloc(max ? max : 1, sizeof(*v));
	pid_t parent = getpid(), pid;
	int sv[2];

	if (!v)
		return -ENOMEM;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		free(v);
		return -errno;
	}
	fflush(NULL);	/* nothing buffered is written twice */
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(sv[0]);
		close(sv[1]);
		free(v);
		return err;
	}
	if (pid == 0) {
		close(sv[0]);
		guardian_main(sv[1], parent, v, max);
	}
	free(v);
	close(sv[1]);
	g->pid = pid;
	g->sock = sv[0];
	return 0;
}

int guard_tell(struct hold_guard *g, pid_t pid, int fd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} c;
	int32_t rec = pid;
	struct iovec iov = { &rec, sizeof(rec) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (g->sock < 0)
		return -EPIPE;
	if (fd >= 0) {
		memset(&c, 0, sizeof(c));
		m.msg_control = c.buf;
		m.msg_controllen = sizeof(c.buf);
		CMSG_FIRSTHDR(&m)->cmsg_level = SOL_SOCKET;
		CMSG_FIRSTHDR(&m)->cmsg_type = SCM_RIGHTS;
		CMSG_FIRSTHDR(&m)->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(CMSG_FIRSTHDR(&m)), &fd, sizeof(int));
	}
	/* Queued on the guardian's socket when this returns: read by it even if we die the next instant. */
	do
		n = sendmsg(g->sock, &m, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(rec) ? 0 : n < 0 ? -errno : -EIO;
}

void guard_end(struct hold_guard *g)
{
	int status;

	if (g->sock < 0)
		return;
	guard_tell(g, GUARD_DONE, -1);
	close(g->sock);
	g->sock = -1;
	while (waitpid(g->pid, &status, 0) < 0 && errno == EINTR)
		;
	g->pid = 0;
}
