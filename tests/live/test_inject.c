/* test_inject.c - syscall injection into a process that does not cooperate: results, restarts, signals, a remote userfaultfd and its clean-up. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../../lib/base/compat.h"
#include "../../lib/inject/inject.h"
#include "../harness.h"
#include "layout.h"
#include "smaps.h"

#define NPAGES		64
#define REPLY_MS	10000
#define PM_UFFD_WP	(1ULL << 57)
#define PM_ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))
/* Kernel-internal return values a stopped thread may carry (include/linux/errno.h). */
#define ERESTARTSYS		512
#define ERESTART_RESTARTBLOCK	516

/* A command to the child, and its reply. */
struct msg {
	char op;		/* W write pages, S sleep, R read the data pipe, P read it into a page, C checksum,
				   T start a thread, F install a seccomp filter, B busy loop,
				   V vfork a child that sleeps arg ms, Q quit */
	uint32_t arg;		/* S, V: ms; P: page */
	uint64_t mask;		/* W: pages */
};

struct reply {
	int64_t val;
	uint64_t h;		/* the child's running hash of the commands it got */
	uint64_t sum;		/* C: the first byte of every page, summed */
	char buf[32];
};

struct child {
	pid_t pid;
	int cmd, rep, data;	/* our ends: commands, replies, the data pipe */
	uint64_t base;		/* its NPAGES-page mapping */
	uint64_t h;		/* the hash we expect it to have */
	uint8_t first[NPAGES];	/* the first byte we expect in each page */
};

static long ps;
static volatile uint64_t *shared;	/* a MAP_SHARED page: [0] stops a busy loop, [1] says it runs */

#define LCG(x) ((x) * 6364136223846793005ULL + 1442695040888963407ULL)

/* ---- the child: it never learns that it is traced ---- */

static volatile sig_atomic_t usr1_count;
static atomic_ulong thread_count;

static void on_usr1(int sig)
{
	(void)sig;
	usr1_count++;
}

static void *spin(void *arg)
{
	(void)arg;
	for (;;) {
		syscall(SYS_getppid);
		atomic_fetch_add(&thread_count, 1);
	}
	return NULL;
}

static int read_full(int fd, void *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, (char *)buf + got, n - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

/* F: a filter that kills the child on getppid() (the test injects one: suspended, it survives). */
static void install_filter(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = PM_ARRAY_LEN(f), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
		_exit(3);
}

static void child_do(const struct msg *m, char *p, int data, struct reply *r)
{
	struct timespec ts = { .tv_sec = m->arg / 1000, .tv_nsec = (long)(m->arg % 1000) * 1000000 };
	pthread_t t;
	unsigned i;

	switch (m->op) {
	case 'W':
		for (i = 0; i < NPAGES; i++)
			if (m->mask & (1ULL << i))
				p[i * ps]++;
		break;
	case 'S':
		r->val = nanosleep(&ts, NULL) == 0 ? 0 : errno;
		break;
	case 'R':
		r->val = read(data, r->buf, sizeof(r->buf) - 1);
		break;
	case 'P':
		r->val = read(data, p + m->arg * ps + 8, 8);
		break;
	case 'T':
		r->val = pthread_create(&t, NULL, spin, NULL);
		break;
	case 'F':
		install_filter();
		break;
	case 'V': {	/* a vfork parent sleeps uninterruptibly until its child exits */
		pid_t v = vfork();

		if (v == 0) {
			nanosleep(&ts, NULL);
			_exit(0);
		}
		r->val = v > 0 && waitpid(v, NULL, 0) == v ? 0 : -1;
		break;
	}
	case 'B': {	/* busy in user mode, its state in registers only, until told to stop */
		uint64_t x = 1, n = 0;

		shared[1] = 1;
		while (!shared[0]) {
			x = LCG(x);
			n++;
		}
		r->sum = x;
		r->val = (int64_t)n;
		break;
	}
	case 'C':
		for (i = 0; i < NPAGES; i++)
			r->sum += (uint8_t)p[i * ps];
		r->val = usr1_count;
		break;
	}
}

static void child_main(int cmd, int rep, int data)
{
	struct sigaction sa = { .sa_handler = on_usr1 };	/* no SA_RESTART: EINTR shows */
	char *p = mmap(NULL, (NPAGES + 2) * ps, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t h = 0, addr;
	struct msg m;
	unsigned i;

	sigaction(SIGUSR1, &sa, NULL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (p == MAP_FAILED)
		_exit(2);
	p += ps;	/* PROT_NONE on both sides: the mapping never merges with a neighbour */
	if (mprotect(p, NPAGES * ps, PROT_READ | PROT_WRITE) < 0)
		_exit(2);
	madvise(p, NPAGES * ps, MADV_NOHUGEPAGE);
	for (i = 0; i < NPAGES; i++)
		memset(p + i * ps, (int)(i + 1), ps);
	addr = (uintptr_t)p;
	if (write(rep, &addr, sizeof(addr)) != sizeof(addr))
		_exit(2);
	while (read_full(cmd, &m, sizeof(m)) == 0 && m.op != 'Q') {
		struct reply r;

		memset(&r, 0, sizeof(r));
		h = h * 31 + (uint8_t)m.op;
		child_do(&m, p, data, &r);
		r.h = h;
		if (write(rep, &r, sizeof(r)) != sizeof(r))
			_exit(2);
	}
	_exit(0);
}

/* ---- the test's side ---- */

static int child_start(struct child *c)
{
	int cmd[2], rep[2], data[2];

	memset(c, 0, sizeof(*c));
	c->pid = -1;
	if (pipe2(cmd, O_CLOEXEC) || pipe2(rep, O_CLOEXEC) || pipe2(data, O_CLOEXEC))
		return -errno;
	c->pid = fork();
	if (c->pid < 0)
		return -errno;
	if (c->pid == 0) {
		close(cmd[1]);
		close(rep[0]);
		close(data[1]);
		child_main(cmd[0], rep[1], data[0]);
	}
	close(cmd[0]);
	close(rep[1]);
	close(data[0]);
	c->cmd = cmd[1];
	c->rep = rep[0];
	c->data = data[1];
	for (unsigned i = 0; i < NPAGES; i++)
		c->first[i] = (uint8_t)(i + 1);
	return read_full(c->rep, &c->base, sizeof(c->base)) == 0 ? 0 : -EIO;
}

static int child_send(struct child *c, char op, uint32_t arg, uint64_t mask)
{
	struct msg m;

	memset(&m, 0, sizeof(m));
	m.op = op;
	m.arg = arg;
	m.mask = mask;
	c->h = c->h * 31 + (uint8_t)op;
	if (op == 'W')
		for (unsigned i = 0; i < NPAGES; i++)
			if (mask & (1ULL << i))
				c->first[i]++;
	return write(c->cmd, &m, sizeof(m)) == sizeof(m) ? 0 : -EIO;
}

static int child_reply(struct child *c, struct reply *r)
{
	struct pollfd pfd = { .fd = c->rep, .events = POLLIN };

	if (poll(&pfd, 1, REPLY_MS) != 1) {
		printf("  child %d did not reply in %d ms\n", (int)c->pid, REPLY_MS);
		return -ETIMEDOUT;
	}
	if (read_full(c->rep, r, sizeof(*r)))
		return -EIO;
	CHECK_EQ_U64(r->h, c->h);	/* it saw every command, and its registers held its state */
	return 0;
}

static int child_cmd(struct child *c, char op, uint32_t arg, uint64_t mask, struct reply *r)
{
	int err = child_send(c, op, arg, mask);

	return err ? err : child_reply(c, r);
}

/* Quit the child and reap it (SIGKILL after 5 s); its exit status (0 when all went well), or -1. */
static int child_stop(struct child *c)
{
	struct timespec ms = { 0, 1000000 };
	int status = 0, i;
	pid_t r = 0;

	if (c->pid <= 0)
		return -1;
	child_send(c, 'Q', 0, 0);
	close(c->cmd);
	close(c->rep);
	close(c->data);
	for (i = 0; i < 5000 && (r = waitpid(c->pid, &status, WNOHANG)) == 0; i++)
		nanosleep(&ms, NULL);
	if (r == 0) {
		printf("  child %d did not quit: killed\n", (int)c->pid);
		kill(c->pid, SIGKILL);
		r = waitpid(c->pid, &status, 0);
		status = -1;
	}
	c->pid = -1;
	return r > 0 && status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Checksum round trip: the child's pages hold exactly what we wrote, and it still runs. */
static void check_child_sane(struct child *c, int64_t usr1)
{
	struct reply r;
	uint64_t want = 0;

	for (unsigned i = 0; i < NPAGES; i++)
		want += c->first[i];
	CHECK(child_cmd(c, 'C', 0, 0, &r) == 0);
	CHECK_EQ_U64(r.sum, want);
	CHECK_EQ_U64(r.val, usr1);
}

/* The number /proc/PID/syscall starts with: the call it is blocked in, -1 in user mode, -2 running. */
static long current_syscall(pid_t pid)
{
	char path[64], buf[256] = "";
	FILE *f;
	long nr = -2;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -3;
	if (fgets(buf, sizeof(buf), f) && strncmp(buf, "running", 7))
		nr = strtol(buf, NULL, 10);
	fclose(f);
	return nr;
}

static char task_state(pid_t pid)
{
	char path[64], buf[512] = "", *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return '?';
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

/* Wait (up to 5 s) until @pid sleeps in system call @a or @b. */
static bool wait_blocked(pid_t pid, long a, long b)
{
	struct timespec ms = { 0, 1000000 };

	for (int i = 0; i < 5000; i++) {
		long nr;

		if (task_state(pid) == 'S' && ((nr = current_syscall(pid)) == a || nr == b))
			return true;
		nanosleep(&ms, NULL);
	}
	printf("  child %d never blocked in syscall %ld (state %c, syscall %ld)\n", (int)pid, a, task_state(pid),
	       current_syscall(pid));
	return false;
}

static bool wait_state(pid_t pid, char state)
{
	struct timespec ms = { 0, 1000000 };

	for (int i = 0; i < 5000; i++) {
		if (task_state(pid) == state)
			return true;
		nanosleep(&ms, NULL);
	}
	return false;
}

/* Its open descriptors, and whether one of them is a userfaultfd. */
static int count_fds(pid_t pid, bool *uffd)
{
	char dir[64], link[384], target[128];
	struct dirent *d;
	DIR *dp;
	int n = 0;

	*uffd = false;
	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	dp = opendir(dir);
	if (!dp)
		return -1;
	while ((d = readdir(dp))) {
		ssize_t len;

		if (d->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s", dir, d->d_name);
		len = readlink(link, target, sizeof(target) - 1);
		if (len < 0)
			continue;
		target[len] = '\0';
		n++;
		if (!strcmp(target, "anon_inode:[userfaultfd]"))
			*uffd = true;
	}
	closedir(dp);
	return n;
}

static long tracer_of(pid_t pid)
{
	char path[64], line[256];
	long tracer = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "TracerPid: %ld", &tracer) == 1)
			break;
	fclose(f);
	return tracer;
}

/* May we ptrace our children (Yama scope 3 forbids it), and a sibling (scope 1+ needs CAP_SYS_PTRACE)? */
static int yama_scope(void)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	int v = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%d", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

static bool ptrace_children_ok(void)
{
	return yama_scope() < 3 && (yama_scope() < 2 || geteuid() == 0);
}

/* The kernel can do what the uffd tests need: async uffd-wp and PAGEMAP_SCAN (6.7+). */
static bool have_wp_async(char *why, size_t size)
{
	struct uffdio_api api = { .api = UFFD_API };
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
	bool ok;

	if (fd < 0 && errno == EINVAL)
		fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		snprintf(why, size, "cannot create a userfaultfd: %s", strerror(errno));
		return false;
	}
	ok = ioctl(fd, UFFDIO_API, &api) == 0 && (api.features & UFFD_FEATURE_WP_ASYNC);
	close(fd);
	if (!ok)
		snprintf(why, size, "this kernel's userfaultfd has no UFFD_FEATURE_WP_ASYNC (Linux 6.7+)");
	else if (!kernel_has_scan()) {
		snprintf(why, size, "no PAGEMAP_SCAN (Linux 6.7+)");
		ok = false;
	}
	return ok;
}

/* ---- injection, every kernel ---- */

/* Calls return what the kernel returns in the target; the thread was stopped inside read(). */
static int inject_results(void)
{
	struct pmi_inject *in = NULL;
	struct child c;
	long ret = 0;
	bool uffd;
	int nfd;

	if (!ptrace_children_ok())
		return t_skip("Yama ptrace_scope %d forbids attaching", yama_scope());
	CHECK(child_start(&c) == 0);
	CHECK(wait_blocked(c.pid, SYS_read, SYS_read));
	nfd = count_fds(c.pid, &uffd);
	CHECK(pmi_inject_attach(c.pid, &in) == 0);
	if (in) {
		CHECK_EQ_U64(tracer_of(c.pid), getpid());
		CHECK_EQ_U64(pmi_inject_stopped_in(in, &ret), SYS_read);
		CHECK_EQ_U64(ret, -ERESTARTSYS);
		CHECK_EQ_U64(pmi_inject_syscall(in, SYS_getpid, 0, 0, 0, 0, 0, 0), c.pid);
		CHECK_EQ_U64(pmi_inject_syscall(in, SYS_getppid, 0, 0, 0, 0, 0, 0), getpid());
		CHECK_EQ_U64(pmi_inject_syscall(in, SYS_close, 9999, 0, 0, 0, 0, 0), -EBADF);
		CHECK_EQ_U64(pmi_inject_syscall(in, SYS_gettid, 0, 0, 0, 0, 0, 0), c.pid);
		CHECK_EQ_U64(pmi_inject_error(in), 0);
		CHECK_EQ_U64(pmi_inject_detach(in), 0);
	}
	CHECK_EQ_U64(tracer_of(c.pid), 0);
	CHECK_EQ_U64(count_fds(c.pid, &uffd), nfd);
	check_child_sane(&c, 0);
	CHECK_EQ_U64(child_stop(&c), 0);
	return T_PASS;
}

/* A read() on a pipe interrupted by the stop returns the data written after the detach. */
static int inject_restart_read(void)
{
	struct pmi_inject *in = NULL;
	struct child c;
	struct reply r;
	long ret = 0;
	int round;

	if (!ptrace_children_ok())
		return t_skip("Yama ptrace_scope %d forbids attaching", yama_scope());
	CHECK(child_start(&c) == 0);
	/* Round 0 injects calls; round 1 only attaches and detaches (registers untouched). */
	for (round = 0; round < 2; round++) {
		CHECK(child_send(&c, 'R', 0, 0) == 0);
		CHECK(wait_blocked(c.pid, SYS_read, SYS_read));
		CHECK(pmi_inject_attach(c.pid, &in) == 0);
		if (in) {
			CHECK_EQ_U64(pmi_inject_stopped_in(in, &ret), SYS_read);
			CHECK_EQ_U64(ret, -ERESTARTSYS);
			if (round == 0)
				CHECK_EQ_U64(pmi_inject_syscall(in, SYS_getpid, 0, 0, 0, 0, 0, 0), c.pid);
			CHECK_EQ_U64(pmi_inject_detach(in), 0);
		}
		CHECK(wait_blocked(c.pid, SYS_read, SYS_read));	/* back in read(), not returned from it */
		CHECK(write(c.data, "hello", 5) == 5);
		memset(&r, 0, sizeof(r));
		CHECK(child_reply(&c, &r) == 0);
		CHECK_EQ_U64(r.val, 5);
		CHECK_STR(r.buf, "hello");
	}
	check_child_sane(&c, 0);
	CHECK_EQ_U64(child_stop(&c), 0);
	return T_PASS;
}

/* A nanosleep() interrupted by the stop (-ERESTART_RESTARTBLOCK) goes on through restart_syscall and returns 0. */
static int inject_restart_nanosleep(void)
{
	struct pmi_inject *in = NULL;
	struct child c;
	struct reply r;
	long nr, ret = 0;

	if (!ptrace_children_ok())
		return t_skip("Yama ptrace_scope %d forbids attaching", yama_scope());
	CHECK(child_start(&c) == 0);
	CHECK(child_send(&c, 'S', 400, 0) == 0);
	CHECK(wait_blocked(c.pid, SYS_clock_nanosleep, SYS_nanosleep));
	CHECK(pmi_inject_attach(c.pid, &in) == 0);
	if (in) {
		nr = pmi_inject_stopped_in(in, &ret);
		CHECK(nr == SYS_clock_nanosleep || nr == SYS_nanosleep);
		CHECK_EQ_U64(ret, -ERESTART_RESTARTBLOCK);
		CHECK_EQ_U64(pmi_inject_syscall(in, SYS_getpid, 0, 0, 0, 0, 0, 0), c.pid);
		CHECK_EQ_U64(pmi_inject_syscall(in, SYS_close, -1, 0, 0, 0, 0, 0), -EBADF);
		CHECK_EQ_U64(pmi_inject_detach(in), 0);
	}
	memset(&r, 0, sizeof(r));
	r.val = -1;
	CHECK(child_reply(&c, &r) == 0);
	CHECK_EQ_U64(r.val, 0);		/* nanosleep returned 0, not EINTR */
	check_child_sane(&c, 0);
	CHECK_EQ_U64(child_stop(&c), 0);
	return T_PASS;
}

/* A signal sent while the thread is held arrives once after the detach (its handler runs). */
static int inject_signal_held(void)
{
	struct pmi_inject *in = NULL;
	struct child c;
	struct reply r;

	if (!ptrace_children_ok())
		return t_skip("Yama ptrace_scope %d forbids attaching", yama_scope());
	CHECK(child_start(&c) == 0);
	CHECK(wait_blocked(c.pid, SYS_read, SYS_read));
	CHECK(pmi_inject_attach(c.pid, &in) == 0);
	if (in) {
		CHECK(kill(c.pid, SIGUSR1) == 0);
		CHECK_EQ_U64(pmi_inject_syscall(in, SYS_getpid, 0, 0, 0, 0, 0, 0), c.pid);
		CHECK_EQ_U64(pmi_inject_syscall(in, SYS_getpid, 0, 0, 0, 0, 0, 0), c.pid);
		CHECK_EQ_U64(pmi_inject_detach(in), 0);
	}
	check_child_sane(&c, 1);
	/*
	 * The same in a read() that does not retry: its handler has no
	 * SA_RESTART, so it returns EINTR, as it would had nobody traced it.
	 */
	CHECK(child_send(&c, 'R', 0, 0) == 0);
	CHECK(wait_blocked(c.pid, SYS_read, SYS_read));
	CHECK(pmi_inject_attach(c.pid, &in) == 0);
	if (in) {
		CHECK(kill(c.pid, SIGUSR1) == 0);
		CHECK_EQ_U64(pmi_inject_syscall(in, SYS_getpid, 0, 0, 0, 0, 0, 0), c.pid);
		CHECK_EQ_U64(pmi_inject_detach(in), 0);
	}
	memset(&r, 0, sizeof(r));
	CHECK(child_reply(&c, &r) == 0);
	CHECK_EQ_U64(r.val, -1);
	check_child_sane(&c, 2);
	CHECK_EQ_U64(child_stop(&c), 0);
	return T_PASS;
}

/* A stopped (SIGSTOP) target takes calls and is stopped again after the detach. */
static int inject_stopped_target(void)
{
	struct timespec ms50 = { 0, 50000000 };
	struct pmi_inject *in = NULL;
	struct child c;

	if (!ptrace_children_ok())
		return t_skip("Yama ptrace_scope %d forbids attaching", yama_scope());
	CHECK(child_start(&c) == 0);
	CHECK(wait_blocked(c.pid, SYS_read, SYS_read));
	CHECK(kill(c.pid, SIGSTOP) == 0);
	CHECK(wait_state(c.pid, 'T'));
	CHECK(pmi_inject_attach(c.pid, &in) == 0);
	if (in) {
		CHECK_EQ_U64(pmi_inject_syscall(in, SYS_getpid, 0, 0, 0, 0, 0, 0), c.pid);
		CHECK_EQ_U64(pmi_inject_detach(in), 0);
	}
	nanosleep(&ms50, NULL);
	CHECK(task_state(c.pid) == 'T');
	CHECK(kill(c.pid, SIGCONT) == 0);
	check_child_sane(&c, 0);
	CHECK_EQ_U64(child_stop(&c), 0);
	return T_PASS;
}

/* The child's thread counter, read from its memory (a forked child has ours at the same address). */
static uint64_t remote_count(pid_t pid)
{
	char path[64];
	uint64_t v = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (pread(fd, &v, sizeof(v), (off_t)(uintptr_t)&thread_count) != sizeof(v))
			v = 0;
		close(fd);
	}
	return v;
}

/* Wait (up to 5 s) until the child's thread counter moves past @v. */
static bool count_moves(pid_t pid, uint64_t v)
{
	struct timespec ms = { 0, 1000000 };

	for (int i = 0; i < 5000; i++) {
		if (remote_count(pid) > v)
			return true;
		nanosleep(&ms, NULL);
	}
	return false;
}

/* Other threads run on while one is held, and after: no code of theirs is patched. */
static int inject_threads(void)
{
	struct pmi_inject *in = NULL;
	struct child c;
	struct reply r;

	if (!ptrace_children_ok())
		return t_skip("Yama ptrace_scope %d forbids attaching", yama_scope());
	CHECK(child_start(&c) == 0);
	CHECK(child_cmd(&c, 'T', 0, 0, &r) == 0 && r.val == 0);
	CHECK(wait_blocked(c.pid, SYS_read, SYS_read));
	CHECK(pmi_inject_attach(c.pid, &in) == 0);
	if (in) {
		for (int i = 0; i < 200; i++)
			CHECK_EQ_U64(pmi_inject_syscall(in, SYS_getppid, 0, 0, 0, 0, 0, 0), getpid());
		CHECK(count_moves(c.pid, remote_count(c.pid)));	/* the other thread runs meanwhile */
		CHECK_EQ_U64(pmi_inject_detach(in), 0);
	}
	CHECK(count_moves(c.pid, remote_count(c.pid)));
	check_child_sane(&c, 0);
	CHECK_EQ_U64(child_stop(&c), 0);
	return T_PASS;
}

/* A thread stopped in user mode (orig_rax -1) gets every register back: its busy loop computes on. */
static int inject_user_mode(void)
{
	struct timespec ms = { 0, 1000000 };
	struct pmi_inject *in = NULL;
	struct child c;
	struct reply r;
	uint64_t x = 1;
	long ret;
	int i;

	if (!ptrace_children_ok())
		return t_skip("Yama ptrace_scope %d forbids attaching", yama_scope());
	CHECK(child_start(&c) == 0);
	shared[0] = shared[1] = 0;
	CHECK(child_send(&c, 'B', 0, 0) == 0);
	for (i = 0; i < 5000 && !shared[1]; i++)
		nanosleep(&ms, NULL);
	CHECK(pmi_inject_attach(c.pid, &in) == 0);
	if (in) {
		CHECK_EQ_U64(pmi_inject_stopped_in(in, &ret), -1);
		CHECK_EQ_U64(pmi_inject_syscall(in, SYS_getpid, 0, 0, 0, 0, 0, 0), c.pid);
		CHECK_EQ_U64(pmi_inject_syscall(in, SYS_close, -1, 0, 0, 0, 0, 0), -EBADF);
		CHECK_EQ_U64(pmi_inject_detach(in), 0);
	}
	for (i = 0; i < 20; i++)
		nanosleep(&ms, NULL);
	shared[0] = 1;
	memset(&r, 0, sizeof(r));
	CHECK(child_reply(&c, &r) == 0);
	CHECK(r.val > 0);
	for (int64_t n = 0; n < r.val; n++)
		x = LCG(x);
	CHECK_EQ_U64(r.sum, x);
	check_child_sane(&c, 0);
	CHECK_EQ_U64(child_stop(&c), 0);
	return T_PASS;
}

/* SIGSTOP cannot be blocked: it stops the thread while calls run, is held back, and is sent again after the detach. */
static int inject_sigstop_held(void)
{
	struct pmi_inject *in = NULL;
	struct child c;

	if (!ptrace_children_ok())
		return t_skip("Yama ptrace_scope %d forbids attaching", yama_scope());
	CHECK(child_start(&c) == 0);
	CHECK(wait_blocked(c.pid, SYS_read, SYS_read));
	CHECK(pmi_inject_attach(c.pid, &in) == 0);
	if (in) {
		CHECK(kill(c.pid, SIGSTOP) == 0);
		CHECK_EQ_U64(pmi_inject_syscall(in, SYS_getpid, 0, 0, 0, 0, 0, 0), c.pid);
		CHECK_EQ_U64(pmi_inject_syscall(in, SYS_getpid, 0, 0, 0, 0, 0, 0), c.pid);
		CHECK_EQ_U64(pmi_inject_error(in), 0);
		CHECK_EQ_U64(pmi_inject_detach(in), 0);
	}
	CHECK(wait_state(c.pid, 'T'));
	CHECK(kill(c.pid, SIGCONT) == 0);
	check_child_sane(&c, 0);
	CHECK_EQ_U64(child_stop(&c), 0);
	return T_PASS;
}

/* The target is killed while held: the mechanism reports ESRCH, stickily, and the detach too. */
static int inject_target_killed(void)
{
	struct pmi_inject *in = NULL;
	struct child c;

	if (!ptrace_children_ok())
		return t_skip("Yama ptrace_scope %d forbids attaching", yama_scope());
	CHECK(child_start(&c) == 0);
	CHECK(pmi_inject_attach(c.pid, &in) == 0);
	if (in) {
		CHECK_EQ_U64(pmi_inject_syscall(in, SYS_getpid, 0, 0, 0, 0, 0, 0), c.pid);
		CHECK(kill(c.pid, SIGKILL) == 0);
		CHECK_EQ_U64(pmi_inject_syscall(in, SYS_getpid, 0, 0, 0, 0, 0, 0), -ESRCH);
		CHECK_EQ_U64(pmi_inject_error(in), -ESRCH);
		CHECK_EQ_U64(pmi_inject_syscall(in, SYS_getpid, 0, 0, 0, 0, 0, 0), -ESRCH);
		CHECK_EQ_U64(pmi_inject_detach(in), -ESRCH);
	}
	/* We are its parent as well as its tracer: the exit status is left for us (track -- CMD reports it). */
	{
		int st = 0;

		CHECK(waitpid(c.pid, &st, 0) == c.pid && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	}
	close(c.cmd);
	close(c.rep);
	close(c.data);
	return T_PASS;
}

static int inject_seccomp_target(void)
{
	struct pmi_inject *in = NULL;
	struct child c;
	struct reply r;
	int err;

	if (!ptrace_children_ok())
		return t_skip("Yama ptrace_scope %d forbids attaching", yama_scope());
	CHECK(child_start(&c) == 0);
	CHECK(child_cmd(&c, 'F', 0, 0, &r) == 0);
	CHECK(wait_blocked(c.pid, SYS_read, SYS_read));
	err = pmi_inject_attach(c.pid, &in);
	if (geteuid() != 0) {
		CHECK_EQ_U64(err, -EPERM);	/* PTRACE_O_SUSPEND_SECCOMP needs CAP_SYS_ADMIN */
	} else {
		CHECK_EQ_U64(err, 0);
		if (in) {
			CHECK_EQ_U64(pmi_inject_syscall(in, SYS_getppid, 0, 0, 0, 0, 0, 0), getpid());
			CHECK_EQ_U64(pmi_inject_detach(in), 0);
		}
	}
	check_child_sane(&c, 0);
	CHECK_EQ_U64(child_stop(&c), 0);
	return T_PASS;
}

static bool sibling_ptrace_ok(void)
{
	return yama_scope() == 0 || (yama_scope() < 3 && geteuid() == 0);
}

/* The blocked-signal mask of @pid (SigBlk in its status), or ~0 if unreadable. */
static uint64_t sigblk(pid_t pid)
{
	char path[64], line[256];
	unsigned long long v = ~0ULL;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return v;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "SigBlk: %llx", &v) == 1)
			break;
	fclose(f);
	return v;
}

/*
 * The tracer dies (SIGKILL) while attached, between two calls: the kernel
 * detaches the target, which holds its own registers and signal mask at
 * that point, so its read() restarts and it runs on.
 */
static int inject_tracer_killed(void)
{
	struct timespec ms = { 0, 1000000 };
	struct child c;
	struct reply r;
	int ready[2], status, err = -EIO, i;
	pid_t tracer;

	if (!sibling_ptrace_ok())
		return t_skip("Yama ptrace_scope %d: a sibling may not attach", yama_scope());
	CHECK(child_start(&c) == 0);
	CHECK(child_send(&c, 'R', 0, 0) == 0);
	CHECK(wait_blocked(c.pid, SYS_read, SYS_read));
	CHECK(pipe2(ready, O_CLOEXEC) == 0);
	tracer = fork();
	if (tracer == 0) {
		struct pmi_inject *in;

		err = pmi_inject_attach(c.pid, &in);
		if (!err && pmi_inject_syscall(in, SYS_getpid, 0, 0, 0, 0, 0, 0) != c.pid)
			err = -EPROTO;
		if (write(ready[1], &err, sizeof(err)) != sizeof(err))
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	CHECK(read_full(ready[0], &err, sizeof(err)) == 0);
	close(ready[0]);
	CHECK_EQ_U64(err, 0);
	CHECK_EQ_U64(tracer_of(c.pid), tracer);
	kill(tracer, SIGKILL);
	CHECK(waitpid(tracer, &status, 0) == tracer && WIFSIGNALED(status));
	for (i = 0; i < 5000 && tracer_of(c.pid) != 0; i++)
		nanosleep(&ms, NULL);
	CHECK_EQ_U64(tracer_of(c.pid), 0);
	CHECK(wait_blocked(c.pid, SYS_read, SYS_read));
	CHECK_EQ_U64(sigblk(c.pid), 0);
	CHECK(write(c.data, "hello", 5) == 5);
	memset(&r, 0, sizeof(r));
	CHECK(child_reply(&c, &r) == 0);
	CHECK_EQ_U64(r.val, 5);
	CHECK_STR(r.buf, "hello");
	check_child_sane(&c, 0);
	CHECK_EQ_U64(child_stop(&c), 0);
	return T_PASS;
}

/* How many threads @pid has. */
static int thread_total(pid_t pid)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((d = readdir(dir)))
		n += d->d_name[0] != '.';
	closedir(dir);
	return n;
}

/*
 * The tracer dies holding an injected vfork thread that made a
 * userfaultfd in its own descriptor table, the attached thread in the
 * clone's vfork stop, a signal with a handler pending: the thread exits by
 * its frame, its table with it; then the attached thread runs its handler
 * and its read() goes on. Nothing is left: no thread, no descriptor.
 */
static int inject_vfork_thread_killed(void)
{
	struct timespec ms = { 0, 1000000 };
	struct child c;
	long got[3] = { -EIO, 0, 0 };	/* error, thread, its descriptor */
	char path[96], target[64];
	int ready[2], status, i;
	ssize_t len;
	bool uffd;
	pid_t tracer;

	if (!sibling_ptrace_ok())
		return t_skip("Yama ptrace_scope %d: a sibling may not attach", yama_scope());
	CHECK(child_start(&c) == 0);
	CHECK(wait_blocked(c.pid, SYS_read, SYS_read));
	CHECK(pipe2(ready, O_CLOEXEC) == 0);
	tracer = fork();
	if (tracer == 0) {
		struct pmi_inject *in;
		long err = pmi_inject_attach(c.pid, &in), tid = 0, fd = 0;

		if (!err && (tid = pmi_inject_vfork_thread(in)) < 0)
			err = tid;
		if (!err && (fd = pmi_inject_thread_syscall(in, (pid_t)tid, SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK, 0,
							    0)) < 0)
			err = fd;
		got[0] = err, got[1] = tid, got[2] = fd;
		if (write(ready[1], got, sizeof(got)) != sizeof(got))
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	CHECK(read_full(ready[0], got, sizeof(got)) == 0);
	close(ready[0]);
	CHECK_EQ_U64(got[0], 0);
	CHECK_EQ_U64(thread_total(c.pid), 2);
	snprintf(path, sizeof(path), "/proc/%d/task/%ld/fd/%ld", (int)c.pid, got[1], got[2]);
	len = readlink(path, target, sizeof(target) - 1);
	CHECK(len > 0);
	target[len > 0 ? len : 0] = '\0';
	CHECK_STR(target, "anon_inode:[userfaultfd]");	/* in the thread's table ... */
	count_fds(c.pid, &uffd);
	CHECK(!uffd);					/* ... not in the target's */
	CHECK(kill(c.pid, SIGUSR1) == 0);		/* pending: every signal is blocked in both */
	kill(tracer, SIGKILL);
	CHECK(waitpid(tracer, &status, 0) == tracer && WIFSIGNALED(status));
	for (i = 0; i < 5000 && (thread_total(c.pid) != 1 || tracer_of(c.pid) != 0); i++)
		nanosleep(&ms, NULL);
	CHECK_EQ_U64(thread_total(c.pid), 1);
	CHECK_EQ_U64(tracer_of(c.pid), 0);
	CHECK(wait_blocked(c.pid, SYS_read, SYS_read));
	CHECK_EQ_U64(sigblk(c.pid), 0);
	count_fds(c.pid, &uffd);
	CHECK(!uffd);
	check_child_sane(&c, 1);
	CHECK_EQ_U64(child_stop(&c), 0);
	return T_PASS;
}

/* A thread that stays in uninterruptible sleep (a vfork parent) is refused, not waited for. */
static int inject_refuses_d_state(void)
{
	struct timespec ms = { 0, 1000000 };
	struct pmi_inject *in = NULL;
	struct child c;
	struct reply r;
	int i;

	if (!ptrace_children_ok())
		return t_skip("Yama ptrace_scope %d forbids attaching", yama_scope());
	CHECK(child_start(&c) == 0);
	CHECK(child_send(&c, 'V', 2000, 0) == 0);	/* attach gives up after 1 s */
	for (i = 0; i < 3000 && task_state(c.pid) != 'D'; i++)
		nanosleep(&ms, NULL);
	CHECK(task_state(c.pid) == 'D');
	CHECK_EQ_U64(pmi_inject_attach(c.pid, &in), -EAGAIN);
	CHECK(in == NULL);
	CHECK_EQ_U64(tracer_of(c.pid), 0);
	memset(&r, 0, sizeof(r));
	r.val = -1;
	CHECK(child_reply(&c, &r) == 0);
	CHECK_EQ_U64(r.val, 0);
	check_child_sane(&c, 0);
	CHECK_EQ_U64(child_stop(&c), 0);
	return T_PASS;
}

/* What attach refuses, leaving the target alone. */
static int inject_refusals(void)
{
	struct pmi_inject *in = (struct pmi_inject *)1, *in2 = NULL;
	struct child c;
	pid_t z;

	CHECK_EQ_U64(pmi_inject_attach(0, &in), -EINVAL);
	CHECK(in == NULL);
	CHECK_EQ_U64(pmi_inject_attach(getpid(), &in), -EINVAL);
	CHECK_EQ_U64(pmi_inject_detach(NULL), 0);
	if (!ptrace_children_ok())
		return t_skip("Yama ptrace_scope %d forbids attaching", yama_scope());
	z = fork();
	if (z == 0)
		_exit(0);
	CHECK(wait_state(z, 'Z'));
	CHECK_EQ_U64(pmi_inject_attach(z, &in), -ESRCH);	/* a zombie */
	waitpid(z, NULL, 0);
	CHECK_EQ_U64(pmi_inject_attach(z, &in), -ESRCH);	/* gone */
	CHECK(child_start(&c) == 0);
	CHECK(pmi_inject_attach(c.pid, &in) == 0);
	CHECK_EQ_U64(pmi_inject_attach(c.pid, &in2), -EBUSY);	/* traced already */
	CHECK(in2 == NULL);
	CHECK_EQ_U64(pmi_inject_detach(in), 0);
	check_child_sane(&c, 0);
	CHECK_EQ_U64(child_stop(&c), 0);
	return T_PASS;
}

/*
 * The pieces of pmi_remote_uffd by hand, on every kernel with userfaultfd:
 * the context made in the target covers the target's memory (a MISSING
 * registration, harmless on populated pages, shows as "um" in its smaps),
 * the target keeps no descriptor, and closing ours drops the registration.
 */
static bool has_vmflag(pid_t pid, uint64_t base, const char *flag)
{
	struct smaps s;
	bool found = false;

	if (smaps_read(pid, &s) < 0)
		return false;
	for (size_t i = 0; i < s.n; i++)
		if (s.v[i].start <= base && base < s.v[i].end)
			found = strstr(s.v[i].vmflags, flag) != NULL;
	smaps_free(&s);
	return found;
}

static int inject_uffd_by_hand(void)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	struct pmi_inject *in = NULL;
	char link[64], target[128] = "";
	long rfd = -ENOSYS;
	struct child c;
	int nfd, pidfd, fd = -1;
	bool uffd;

	if (!ptrace_children_ok())
		return t_skip("Yama ptrace_scope %d forbids attaching", yama_scope());
	CHECK(child_start(&c) == 0);
	CHECK(wait_blocked(c.pid, SYS_read, SYS_read));
	nfd = count_fds(c.pid, &uffd);
	pidfd = (int)syscall(SYS_pidfd_open, c.pid, 0);
	CHECK(pidfd >= 0);
	CHECK(pmi_inject_attach(c.pid, &in) == 0);
	if (in) {
		rfd = pmi_inject_syscall(in, SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY, 0, 0, 0, 0, 0);
		if (rfd == -EINVAL)
			rfd = pmi_inject_syscall(in, SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK, 0, 0, 0, 0, 0);
		if (rfd >= 0) {
			snprintf(link, sizeof(link), "/proc/%d/fd/%ld", (int)c.pid, rfd);
			CHECK(readlink(link, target, sizeof(target) - 1) > 0);
			CHECK_STR(target, "anon_inode:[userfaultfd]");
			fd = (int)syscall(SYS_pidfd_getfd, pidfd, (int)rfd, 0);
			CHECK(fd >= 0);
			CHECK_EQ_U64(pmi_inject_syscall(in, SYS_close, rfd, 0, 0, 0, 0, 0), 0);
			CHECK(access(link, F_OK) < 0);
		}
		CHECK_EQ_U64(pmi_inject_detach(in), 0);
	}
	close(pidfd);
	CHECK_EQ_U64(count_fds(c.pid, &uffd), nfd);
	CHECK(!uffd);
	if (rfd == -ENOSYS) {
		child_stop(&c);
		return t_skip("no userfaultfd in this kernel");
	}
	CHECK(rfd >= 0);
	if (fd >= 0) {
		CHECK(ioctl(fd, UFFDIO_API, &api) == 0);
		memset(&reg, 0, sizeof(reg));
		reg.range.start = c.base;
		reg.range.len = NPAGES * ps;
		reg.mode = UFFDIO_REGISTER_MODE_MISSING;
		CHECK(ioctl(fd, UFFDIO_REGISTER, &reg) == 0);
		CHECK(has_vmflag(c.pid, c.base, " um"));
		close(fd);
		CHECK(!has_vmflag(c.pid, c.base, " um"));
	}
	check_child_sane(&c, 0);
	CHECK_EQ_U64(child_stop(&c), 0);
	return T_PASS;
}

/* ---- a remote userfaultfd for write tracking (6.7+) ---- */

static int scan(int pm, uint64_t start, uint64_t end, struct page_region *vec, size_t n)
{
	struct pm_scan_arg a = {
		.size = sizeof(a),
		.flags = PM_SCAN_WP_MATCHING | PM_SCAN_CHECK_WPASYNC,
		.start = start,
		.end = end,
		.vec = (uintptr_t)vec,
		.vec_len = n,
		.category_mask = PAGE_IS_WRITTEN,
		.return_mask = PAGE_IS_WRITTEN,
	};
	int r = ioctl(pm, PAGEMAP_SCAN, &a);

	return r < 0 ? -errno : r;
}

/* Harvest and re-arm: the pages reported written, as a mask (bit i: page i); ~0 on error. */
static uint64_t harvest(int pm, uint64_t base)
{
	struct page_region vec[NPAGES];
	uint64_t mask = 0;
	int n = scan(pm, base, base + NPAGES * ps, vec, NPAGES);

	if (n < 0) {
		printf("  PAGEMAP_SCAN: %s\n", strerror(-n));
		return ~0ULL;
	}
	for (int i = 0; i < n; i++) {
		if (vec[i].categories != PAGE_IS_WRITTEN)
			return ~0ULL;
		for (uint64_t a = vec[i].start; a < vec[i].end; a += ps)
			mask |= 1ULL << ((a - base) / ps);
	}
	return mask;
}

/* How many of the child's pages carry the uffd-wp bit (57); -1 on error. */
static int wp_bits(pid_t pid, uint64_t base)
{
	char path[64];
	uint64_t e[NPAGES];
	int fd, n = 0;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (pread(fd, e, sizeof(e), (off_t)(base / ps * 8)) != (ssize_t)sizeof(e))
		n = -1;
	for (int i = 0; n >= 0 && i < NPAGES; i++)
		n += (e[i] & PM_UFFD_WP) != 0;
	close(fd);
	return n;
}

static int open_pagemap(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* Remote uffd, register, arm: what a tracker does. 0 or -errno. */
static int track(pid_t pid, uint64_t base, int *fd)
{
	uint64_t got = 0;
	int pm, err;

	err = pmi_remote_uffd(pid, UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED, fd, &got);
	if (err)
		return err;
	if (!(got & UFFD_FEATURE_WP_ASYNC))
		return -EPROTO;
	err = pmi_remote_register_wp(*fd, base, NPAGES * ps);
	if (err)
		return err;
	pm = open_pagemap(pid);
	if (pm < 0)
		return -errno;
	err = scan(pm, base, base + NPAGES * ps, NULL, 0);
	close(pm);
	return err < 0 ? err : 0;
}

/* Without WP_ASYNC (or asked wrongly) pmi_remote_uffd fails before touching the target. */
static int remote_uffd_refusals(void)
{
	struct child c;
	uint64_t got = 0;
	char why[128];
	int fd = 5;

	CHECK(child_start(&c) == 0);
	CHECK_EQ_U64(pmi_remote_uffd(c.pid, UFFD_FEATURE_WP_UNPOPULATED, &fd, &got), -EINVAL);
	CHECK_EQ_U64(fd, -1);
	CHECK_EQ_U64(pmi_remote_uffd(c.pid, UFFD_FEATURE_WP_ASYNC | (1ULL << 62), &fd, &got), -EOPNOTSUPP);
	if (!have_wp_async(why, sizeof(why)))
		CHECK_EQ_U64(pmi_remote_uffd(c.pid, UFFD_FEATURE_WP_ASYNC, &fd, &got), -EOPNOTSUPP);
	CHECK_EQ_U64(tracer_of(c.pid), 0);
	check_child_sane(&c, 0);
	CHECK_EQ_U64(child_stop(&c), 0);
	return T_PASS;
}

static int remote_uffd_track(void)
{
	struct timespec ms50 = { 0, 50000000 };
	uint64_t subset, x = 0x9e3779b97f4a7c15ULL;
	struct child c;
	struct reply r;
	char why[128];
	int fd = -1, pm, nfd;
	bool uffd;

	if (!have_wp_async(why, sizeof(why)))
		return t_skip("%s", why);
	if (!ptrace_children_ok())
		return t_skip("Yama ptrace_scope %d forbids attaching", yama_scope());
	CHECK(child_start(&c) == 0);
	CHECK(wait_blocked(c.pid, SYS_read, SYS_read));
	nfd = count_fds(c.pid, &uffd);
	CHECK_EQ_U64(track(c.pid, c.base, &fd), 0);
	pm = open_pagemap(c.pid);
	CHECK(pm >= 0);
	CHECK_EQ_U64(tracer_of(c.pid), 0);
	CHECK_EQ_U64(count_fds(c.pid, &uffd), nfd);	/* it keeps no descriptor */
	CHECK(!uffd);
	CHECK(has_vmflag(c.pid, c.base, " uw"));
	CHECK_EQ_U64(wp_bits(c.pid, c.base), NPAGES);

	CHECK(child_cmd(&c, 'W', 0, (1ULL << 3) | (1ULL << 7) | (1ULL << 20), &r) == 0);
	CHECK_EQ_U64(harvest(pm, c.base), (1ULL << 3) | (1ULL << 7) | (1ULL << 20));
	CHECK_EQ_U64(harvest(pm, c.base), 0);	/* re-armed */
	for (int round = 0; round < 3; round++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;	/* xorshift: a fixed pseudo-random subset */
		subset = x & (x >> 3);
		CHECK(child_cmd(&c, 'W', 0, subset, &r) == 0);
		CHECK_EQ_U64(harvest(pm, c.base), subset);
	}
	/* A write by the kernel (read(2) into page 40) counts too. */
	CHECK(child_send(&c, 'P', 40, 0) == 0);
	CHECK(wait_blocked(c.pid, SYS_read, SYS_read));
	CHECK(write(c.data, "kernelwr", 8) == 8);
	CHECK(child_reply(&c, &r) == 0);
	CHECK_EQ_U64(r.val, 8);
	CHECK_EQ_U64(harvest(pm, c.base), 1ULL << 40);

	/* Unregistering half the range drops its uffd-wp bits; closing the last descriptor drops the rest. */
	CHECK_EQ_U64(pmi_remote_unregister(fd, c.base, NPAGES / 2 * ps), 0);
	CHECK_EQ_U64(wp_bits(c.pid, c.base), NPAGES / 2);
	CHECK(!has_vmflag(c.pid, c.base, " uw"));
	CHECK(has_vmflag(c.pid, c.base + NPAGES / 2 * ps, " uw"));
	close(fd);
	CHECK_EQ_U64(wp_bits(c.pid, c.base), 0);
	CHECK(!has_vmflag(c.pid, c.base, " uw"));
	CHECK_EQ_U64(scan(pm, c.base, c.base + NPAGES * ps, NULL, 0), -EPERM);	/* no async-WP VMA any more */
	close(pm);
	memset(&r, 0, sizeof(r));
	CHECK(child_cmd(&c, 'S', 50, 0, &r) == 0);
	CHECK_EQ_U64(r.val, 0);
	nanosleep(&ms50, NULL);
	check_child_sane(&c, 0);
	CHECK_EQ_U64(child_stop(&c), 0);
	return T_PASS;
}

/* A tracker that registered the child's memory dies by SIGKILL: the child keeps nothing of it. */
static int remote_uffd_tracker_killed(void)
{
	struct child c;
	struct reply r;
	char why[128];
	int ready[2], status, err = -EIO;
	pid_t tracker;

	if (!have_wp_async(why, sizeof(why)))
		return t_skip("%s", why);
	if (!sibling_ptrace_ok())
		return t_skip("Yama ptrace_scope %d: a sibling may not attach", yama_scope());
	CHECK(child_start(&c) == 0);
	CHECK(pipe2(ready, O_CLOEXEC) == 0);
	tracker = fork();
	if (tracker == 0) {
		int fd = -1;

		err = track(c.pid, c.base, &fd);
		if (write(ready[1], &err, sizeof(err)) != sizeof(err))
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	CHECK(read_full(ready[0], &err, sizeof(err)) == 0);
	close(ready[0]);
	CHECK_EQ_U64(err, 0);
	CHECK_EQ_U64(wp_bits(c.pid, c.base), NPAGES);
	CHECK(has_vmflag(c.pid, c.base, " uw"));
	CHECK(child_cmd(&c, 'W', 0, 1ULL << 5, &r) == 0);	/* it writes while tracked: never blocks */
	kill(tracker, SIGKILL);
	CHECK(waitpid(tracker, &status, 0) == tracker && WIFSIGNALED(status));
	CHECK_EQ_U64(wp_bits(c.pid, c.base), 0);
	CHECK(!has_vmflag(c.pid, c.base, " uw"));
	CHECK(child_cmd(&c, 'W', 0, 1ULL << 6, &r) == 0);
	memset(&r, 0, sizeof(r));
	CHECK(child_cmd(&c, 'S', 20, 0, &r) == 0);
	CHECK_EQ_U64(r.val, 0);
	check_child_sane(&c, 0);
	CHECK_EQ_U64(child_stop(&c), 0);
	return T_PASS;
}

static int setup(void)
{
	ps = sysconf(_SC_PAGESIZE);
	signal(SIGPIPE, SIG_IGN);
	shared = mmap(NULL, (size_t)ps, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	return shared == MAP_FAILED ? -1 : 0;
}

int main(int argc, char **argv)
{
	static const struct t_case cases[] = {
		T(inject_results), T(inject_restart_read), T(inject_restart_nanosleep), T(inject_signal_held),
		T(inject_stopped_target), T(inject_user_mode), T(inject_threads), T(inject_sigstop_held), T(inject_target_killed),
		T(inject_tracer_killed), T(inject_vfork_thread_killed),
		T(inject_seccomp_target), T(inject_refuses_d_state), T(inject_refusals), T(inject_uffd_by_hand),
		T(remote_uffd_refusals), T(remote_uffd_track), T(remote_uffd_tracker_killed),
	};

	if (setup() < 0)
		return 1;
#ifndef __x86_64__
	printf("SKIP inject: syscall injection is x86-64 only\n");
	return 0;
#endif
	return t_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
