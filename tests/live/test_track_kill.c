/* test_track_kill.c - pagemap track and the targets it stops: killed before each ptrace call (strace inject) they live on unharmed; those it cannot stop are refused at once; snapshot children hold no descriptors. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stddef.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../harness.h"

/*
 * Each kind of target runs under one `strace -e inject=ptrace:signal=KILL:when=N
 * pagemap track PID 0.01 1` after another, N = 1, 2, ... until a run is not
 * killed any more (fork-snapshot makes hundreds of calls, a snapshot per
 * mapping added: there every other N up to 100, which covers its first
 * snapshots whole). The target checks itself all along (registers and
 * extended FPU state of a spinning loop, nanosleep and read results and
 * errno, its sigaltstack); after each run the test checks what the kernel shows of it: no
 * tracer, no thread stopped, the signal mask of every thread as set, every
 * thread still making progress, and how many userfaultfds it holds. At the
 * end it is told to finish and must exit 0.
 */

#define MAX_THREADS	4
#define MASK		((1ULL << (SIGUSR2 - 1)) | (1ULL << (SIGWINCH - 1)))	/* every thread blocks these */
#define SENTINEL	4242	/* errno set before each blocking call; it must come back unchanged */
#define MAX_N		2000
#define MAX_KIDS	4096	/* children of one target thread looked at */

enum role { SPIN, SLEEP, READ };

struct kind {
	const char *name;
	enum role roles[MAX_THREADS];	/* [0] is the leader, the thread track stops */
	int n;
	const char *method;		/* track -m METHOD, else auto (uffd) */
	int step;			/* kill points tried: 1, 1 + step, ... */
	int max_n;			/* up to this one, else until a run is not killed */
	bool alarm;			/* a SIGALRM handler runs every 1 ms, on the thread's own stack */
};

static const struct kind kinds[] = {
	{ "1 thread spinning", { SPIN }, 1, NULL, 1, 0, false },
	{ "1 thread in nanosleep", { SLEEP }, 1, NULL, 1, 0, false },
	{ "1 thread in read", { READ }, 1, NULL, 1, 0, false },
	{ "leader in read, 2 spinning, 1 in nanosleep", { READ, SPIN, SPIN, SLEEP }, 4, NULL, 1, 0, false },
	{ "leader spinning, 1 in nanosleep, 1 spinning", { SPIN, SLEEP, SPIN }, 3, NULL, 1, 0, false },
	{ "fork-snapshot: leader in read, 1 spinning, 1 in nanosleep", { READ, SPIN, SLEEP }, 3, "fork-snapshot", 2, 100,
	  false },
	/*
	 * A handler due the moment the thread's mask comes back (Go's SIGURG,
	 * timers): its frame and the handler's own stack use land just below
	 * the thread's stack pointer as found, where an injected thread's exit
	 * frame would lie if it could outlive the stop of the thread it was
	 * cloned from.
	 */
	{ "1 thread spinning, SIGALRM handler every 1 ms", { SPIN }, 1, NULL, 1, 0, true },
	{ "1 thread in read (SA_RESTART), SIGALRM handler every 1 ms", { READ }, 1, NULL, 1, 0, true },
};

/* Shared with the target (MAP_SHARED, made before the fork). */
struct board {
	volatile uint64_t stop;
	volatile uint64_t progress[MAX_THREADS];
	volatile uint64_t fail;			/* first failure: (thread + 1) << 8 | what */
	volatile uint64_t ready;		/* threads started */
	volatile int64_t got, got_errno;	/* READ: what read() returned, and errno */
	volatile uint64_t alarms;		/* SIGALRM handlers run */
};

static struct board *board;

/* Uses 4 KiB of the stack it runs on (not an alternate one): a pattern over whatever lay below the thread's frame. */
static void on_alarm(int sig)
{
	volatile unsigned char buf[4096];
	int e = errno;
	size_t i;

	(void)sig;
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(0xa5 ^ i);
	board->alarms++;
	errno = e;
}

static void start_alarm(void)
{
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } };

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) || setitimer(ITIMER_REAL, &it, NULL))
		_exit(91);
}
static int read_fd = -1;
static char pagemap_bin[PATH_MAX];
static int have_avx2;

static void fail(int t, int what)
{
	if (!board->fail)
		board->fail = (uint64_t)(t + 1) << 8 | (uint64_t)what;
}

/*
 * User mode only, its state in registers: two LCGs that must agree
 * (rax, rbx), constants that must stay (r12 = r13), and a pattern in ymm15
 * compared with memory every round (when AVX2 is there).
 */
static int spin_regs(volatile uint64_t *count, volatile uint64_t *stop, int avx)
{
	static const uint64_t pat[4] __attribute__((aligned(32))) = {
		0x0123456789abcdefULL, 0xfedcba9876543210ULL, 0x5555aaaa5555aaaaULL, 0x0f0f0f0ff0f0f0f0ULL,
	};
	uint64_t bad = 0;

	__asm__ volatile(
		"mov $1, %%rax\n\t"
		"mov $1, %%rbx\n\t"
		"mov $0x1234567, %%r12\n\t"
		"mov $0x1234567, %%r13\n\t"
		"mov $6364136223846793005, %%r14\n\t"
		"mov $1442695040888963407, %%r15\n\t"
		"test %[avx], %[avx]\n\t"
		"jz 1f\n\t"
		"vmovdqa (%[pat]), %%ymm15\n"
		"1:\n\t"
		"imul %%r14, %%rax\n\t"
		"add %%r15, %%rax\n\t"
		"imul %%r14, %%rbx\n\t"
		"add %%r15, %%rbx\n\t"
		"cmp %%rax, %%rbx\n\t"
		"jne 8f\n\t"
		"cmp %%r12, %%r13\n\t"
		"jne 8f\n\t"
		"test %[avx], %[avx]\n\t"
		"jz 2f\n\t"
		"vpcmpeqq (%[pat]), %%ymm15, %%ymm14\n\t"
		"vpmovmskb %%ymm14, %%ecx\n\t"
		"cmp $-1, %%ecx\n\t"
		"jne 8f\n"
		"2:\n\t"
		"incq (%[count])\n\t"
		"cmpq $0, (%[stop])\n\t"
		"je 1b\n\t"
		"jmp 9f\n"
		"8:\n\t"
		"mov $1, %[bad]\n"
		"9:\n\t"
		"test %[avx], %[avx]\n\t"
		"jz 3f\n\t"
		"vzeroupper\n"
		"3:\n"
		: [bad] "+r"(bad)
		: [pat] "r"(pat), [count] "r"(count), [stop] "r"(stop), [avx] "r"((uint64_t)avx)
		: "rax", "rbx", "rcx", "r12", "r13", "r14", "r15", "xmm14", "xmm15", "memory", "cc");
	return bad ? -1 : 0;
}

static void do_sleep(int t)
{
	while (!board->stop) {
		struct timespec a, b, d = { 0, 20000000 };
		int r;

		clock_gettime(CLOCK_MONOTONIC, &a);
		errno = SENTINEL;
		r = clock_nanosleep(CLOCK_MONOTONIC, 0, &d, NULL);
		if (r != 0)
			fail(t, 'n');
		if (errno != SENTINEL)
			fail(t, 'e');
		clock_gettime(CLOCK_MONOTONIC, &b);
		if ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 20000000L)
			fail(t, 's');	/* came back early */
		board->progress[t]++;
	}
}

static void do_read(int t)
{
	char buf[8];
	ssize_t r;

	errno = SENTINEL;
	r = read(read_fd, buf, sizeof(buf));
	board->got = r;
	board->got_errno = errno;
	if (r != sizeof(buf) || memcmp(buf, "finish!!", 8))
		fail(t, 'r');
	if (errno != SENTINEL)
		fail(t, 'e');
	board->stop = 1;
}

static void run_role(int t, enum role role)
{
	static char alt[MAX_THREADS][65536];
	stack_t ss = { .ss_sp = alt[t], .ss_size = sizeof(alt[t]) }, now, old;
	sigset_t m, cur;

	if (sigaltstack(&ss, &old) < 0)	/* rt_sigreturn must leave it as it is */
		fail(t, 'a');

	sigemptyset(&m);
	sigaddset(&m, SIGUSR2);
	sigaddset(&m, SIGWINCH);
	pthread_sigmask(SIG_SETMASK, &m, NULL);
	__atomic_add_fetch(&board->ready, 1, __ATOMIC_SEQ_CST);
	switch (role) {
	case SPIN:
		if (spin_regs(&board->progress[t], &board->stop, have_avx2) < 0)
			fail(t, 'x');
		break;
	case SLEEP:
		do_sleep(t);
		break;
	case READ:
		do_read(t);
		break;
	}
	if (sigaltstack(NULL, &now) < 0 || now.ss_sp != ss.ss_sp || now.ss_size != ss.ss_size || now.ss_flags)
		fail(t, 'a');
	sigaltstack(&old, NULL);	/* a sanitizer unmaps the one it finds at thread exit as its own */
	pthread_sigmask(SIG_SETMASK, NULL, &cur);
	if (!sigismember(&cur, SIGUSR2) || !sigismember(&cur, SIGWINCH) || sigismember(&cur, SIGUSR1))
		fail(t, 'm');
}

struct targ {
	int t;
	enum role role;
};

static void *thread_main(void *arg)
{
	const struct targ *a = arg;

	run_role(a->t, a->role);
	return NULL;
}

static void target_main(const struct kind *k)
{
	static struct targ args[MAX_THREADS];
	pthread_t th[MAX_THREADS];
	int i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (k->alarm)
		start_alarm();
	for (i = 1; i < k->n; i++) {
		args[i] = (struct targ){ i, k->roles[i] };
		if (pthread_create(&th[i], NULL, thread_main, &args[i]))
			_exit(90);
	}
	run_role(0, k->roles[0]);
	for (i = 1; i < k->n; i++)
		pthread_join(th[i], NULL);
	_exit(board->fail ? 1 : 0);
}

/* ---- what the test sees from outside ---- */

static int task_ids(pid_t pid, pid_t *tids, int max)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((d = readdir(dir)) && n < max)
		if (d->d_name[0] != '.')
			tids[n++] = atoi(d->d_name);
	closedir(dir);
	return n;
}

struct tstat {
	char state;
	long tracer;
	unsigned long long blk;
};

static int task_status(pid_t pid, pid_t tid, struct tstat *s)
{
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	memset(s, 0, sizeof(*s));
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "State: %c", &s->state);
		sscanf(line, "TracerPid: %ld", &s->tracer);
		sscanf(line, "SigBlk: %llx", &s->blk);
	}
	fclose(f);
	return 0;
}

static int count_uffds(pid_t pid)
{
	char path[64], link[PATH_MAX], target[64];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		ssize_t len;

		if (d->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s", path, d->d_name);
		len = readlink(link, target, sizeof(target) - 1);
		if (len > 0) {
			target[len] = 0;
			n += !strcmp(target, "anon_inode:[userfaultfd]");
		}
	}
	closedir(dir);
	return n;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * The children of thread @tid of @pid, at most @max: the whole children
 * file (every snapshot a killed tracker left is a zombie child, so the
 * line grows past any fixed buffer, and a number cut short would name
 * another process), each confirmed by its PPid.
 */
static int children_of(pid_t pid, pid_t tid, long *out, int max)
{
	char path[80], *line = NULL, *p, *end;
	size_t cap = 0;
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (getline(&line, &cap, f) < 0) {
		free(line);
		fclose(f);
		return 0;
	}
	fclose(f);
	for (p = line; n < max; p = end) {
		long c = strtol(p, &end, 10), ppid = -1;
		char status[64], l[128];
		FILE *st;

		if (end == p)
			break;
		snprintf(status, sizeof(status), "/proc/%ld/status", c);
		st = fopen(status, "re");
		if (!st)
			continue;
		while (fgets(l, sizeof(l), st))
			sscanf(l, "PPid: %ld", &ppid);
		fclose(st);
		if (ppid == pid)
			out[n++] = c;
	}
	free(line);
	return n;
}

/* What a task is doing, for the log of a failure: its status, kernel stack and wait channel. */
static void show_task(long pid)
{
	static const char *const files[] = { "status", "stack", "wchan", "stat" };
	char path[64], line[512];
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%ld/%s", pid, files[i]);
		f = fopen(path, "re");
		if (!f)
			continue;
		printf("    %s:\n", path);
		while (fgets(line, sizeof(line), f))
			printf("      %s%s", line, strchr(line, '\n') ? "" : "\n");
		fclose(f);
	}
}

/* Every thread untraced, not stopped, with its mask as set: "" or what is wrong. */
static const char *check_threads(pid_t pid, const struct kind *k, char *why, size_t size, bool show)
{
	pid_t tids[MAX_THREADS + 4];
	struct tstat s;
	int n, i;

	n = task_ids(pid, tids, MAX_THREADS + 4);
	if (n != k->n)
		return snprintf(why, size, "%d threads, not %d", n, k->n), why;
	for (i = 0; i < n; i++) {
		if (task_status(pid, tids[i], &s) < 0)
			return snprintf(why, size, "thread %d gone", (int)tids[i]), why;
		if (s.tracer)
			return snprintf(why, size, "thread %d still traced by %ld", (int)tids[i], s.tracer), why;
		if (s.state == 'T' || s.state == 't' || s.state == 'Z' || s.state == 'X')
			return snprintf(why, size, "thread %d in state %c", (int)tids[i], s.state), why;
		if (s.blk != MASK)
			return snprintf(why, size, "thread %d SigBlk %016llx", (int)tids[i], s.blk), why;
	}
	/* A snapshot child let go must not run on as a copy of it: dead (a zombie of it) or gone. */
	for (i = 0; i < n; i++) {
		long kids[MAX_KIDS];
		int m = children_of(pid, tids[i], kids, MAX_KIDS), j;

		for (j = 0; j < m; j++)
			if (task_status(kids[j], kids[j], &s) == 0 && s.state != 'Z' && s.state != 'X' && !s.tracer) {
				if (show)
					show_task(kids[j]);
				return snprintf(why, size, "its child %ld runs (state %c): a copy of it", kids[j], s.state),
				       why;
			}
	}
	return "";
}

/*
 * Untraced, no thread stopped, masks as set, every thread moving: "" or
 * what is wrong. A thread the kernel let go may not have run yet (it
 * restores its mask itself, by rt_sigreturn): give it a second.
 */
static const char *check_target(pid_t pid, const struct kind *k, char *why, size_t size)
{
	uint64_t before[MAX_THREADS], alarms;
	const char *bad = "";
	int i, tries;

	for (tries = 0; tries < 200; tries++) {
		bad = check_threads(pid, k, why, size, false);
		if (!*bad || board->fail)
			break;
		sleep_ms(5);
	}
	if (*bad)
		return check_threads(pid, k, why, size, true);
	for (i = 0; i < k->n; i++)
		before[i] = board->progress[i];
	alarms = board->alarms;
	for (tries = 0; tries < 100; tries++) {
		bool all = !k->alarm || board->alarms != alarms;

		sleep_ms(10);
		for (i = 0; i < k->n; i++)
			if (k->roles[i] != READ && board->progress[i] == before[i])
				all = false;
		if (all || board->fail)
			break;
	}
	if (board->fail)
		return snprintf(why, size, "thread %d found '%c' wrong", (int)(board->fail >> 8) - 1,
				(int)(board->fail & 0xff)), why;
	for (i = 0; i < k->n; i++)
		if (k->roles[i] != READ && board->progress[i] == before[i])
			return snprintf(why, size, "thread %d makes no progress", i), why;
	if (k->alarm && board->alarms == alarms)
		return snprintf(why, size, "its SIGALRM handler runs no more"), why;
	return "";
}

/* How many children the target's threads have. */
static int count_children(pid_t pid)
{
	pid_t tids[MAX_THREADS + 4];
	int n = task_ids(pid, tids, MAX_THREADS + 4), i, sum = 0;

	for (i = 0; i < n; i++) {
		long kids[MAX_KIDS];

		sum += children_of(pid, tids[i], kids, MAX_KIDS);
	}
	return sum;
}

/* After a failure: SIGKILL children of the target that run (copies of it a broken tracker let go). */
static void kill_copies(pid_t pid)
{
	pid_t tids[MAX_THREADS + 4];
	int n = task_ids(pid, tids, MAX_THREADS + 4), i;

	for (i = 0; i < n; i++) {
		long kids[MAX_KIDS];
		int m = children_of(pid, tids[i], kids, MAX_KIDS), j;

		for (j = 0; j < m; j++)
			kill((pid_t)kids[j], SIGKILL);	/* our descendant; a zombie ignores it */
	}
}

/* strace ... pagemap track PID 0.01 1, killed before its @n-th ptrace call: its wait status. */
static int run_killed(pid_t target, int n, const char *method)
{
	char when[64], pid[16];
	pid_t p;
	int st;

	snprintf(when, sizeof(when), "inject=ptrace:signal=KILL:when=%d", n);
	snprintf(pid, sizeof(pid), "%d", (int)target);
	p = fork();
	if (p == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 1);
		dup2(null, 2);
		/* LeakSanitizer cannot run in a traced process (SANITIZE=1 builds): everything else still checks. */
		setenv("LSAN_OPTIONS", "detect_leaks=0", 1);
		if (method)
			execlp("strace", "strace", "-qq", "-o", "/dev/null", "-e", "trace=ptrace", "-e", when,
			       pagemap_bin, "track", "-m", method, pid, "0.01", "1", (char *)NULL);
		else
			execlp("strace", "strace", "-qq", "-o", "/dev/null", "-e", "trace=ptrace", "-e", when,
			       pagemap_bin, "track", pid, "0.01", "1", (char *)NULL);
		_exit(127);
	}
	if (p < 0 || waitpid(p, &st, 0) != p)
		return -1;
	return st;
}

static int sweep(const struct kind *k)
{
	struct timespec t0, t1;
	char why[160];
	int pipefd[2], n, st, status, uffds = 0, first_left = 0, last_left = 0, killed = 0, leaked = 0;
	pid_t pid;

	memset(board, 0, sizeof(*board));
	CHECK(pipe2(pipefd, O_CLOEXEC) == 0);
	pid = fork();
	if (pid == 0) {
		close(pipefd[1]);
		read_fd = pipefd[0];
		target_main(k);
	}
	close(pipefd[0]);
	CHECK(pid > 0);
	while (board->ready < (uint64_t)k->n)
		sleep_ms(1);
	sleep_ms(20);	/* the leader in its read or sleep */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	printf("  %s (pid %d):\n", k->name, (int)pid);
	for (n = 1; n <= (k->max_n ? k->max_n : MAX_N); n += k->step) {
		const char *bad;
		int u;

		st = run_killed(pid, n, k->method);
		bad = check_target(pid, k, why, sizeof(why));
		u = count_uffds(pid);
		if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
			killed++;
		printf("    N=%-2d tracker %-9s target %s%s\n", n,
		       WIFSIGNALED(st) ? "killed" : WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "finished" : "failed",
		       *bad ? "HARMED: " : "ok", *bad ? bad : u > uffds ? ", holds an unused userfaultfd" : "");
		CHECK_STR(bad, "");
		if (*bad)
			break;
		if (u > uffds) {	/* a descriptor it never opened: none may be left, at any kill point */
			if (!first_left)
				first_left = n;
			last_left = n;
			leaked++;
			uffds = u;
		}
		if (!WIFSIGNALED(st)) {
			CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
			break;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK(k->max_n || n <= MAX_N);
	CHECK(killed >= 10);
	if (leaked)
		printf("    %d kill points (N=%d..%d) left an unused userfaultfd in it\n", leaked, first_left, last_left);
	CHECK_EQ_U64(leaked, 0);
	printf("    %d zombie children left in it (a snapshot a killed tracker had made)\n", count_children(pid));
	if (t_failed_checks)
		kill_copies(pid);
	CHECK(write(pipefd[1], "finish!!", 8) == 8);
	board->stop = 1;
	close(pipefd[1]);
	CHECK(waitpid(pid, &status, 0) == pid);
	printf("    %d kill points, %.1f s; exit: %s %d\n", killed,
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
	       WIFEXITED(status) ? "status" : "signal", WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	if (board->fail)
		printf("    thread %d found '%c' wrong (read: %lld, errno %lld)\n", (int)(board->fail >> 8) - 1,
		       (int)(board->fail & 0xff), (long long)board->got, (long long)board->got_errno);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return T_PASS;
}

static const char *cannot_run(void);

/* ---- tracking that cannot start, and what it says ---- */

struct run {
	int status;
	double secs;
	char err[4096];		/* its stderr */
};

/* Run @argv (stdout to /dev/null), its stderr into r->err. */
static int run_cmd(char *const argv[], struct run *r)
{
	struct timespec t0, t1;
	int p[2];
	size_t n = 0;
	ssize_t got;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 1);
		dup2(p[1], 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	while (n < sizeof(r->err) - 1 && (got = read(p[0], r->err + n, sizeof(r->err) - 1 - n)) > 0)
		n += (size_t)got;
	close(p[0]);
	waitpid(pid, &r->status, 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	r->secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("    %s ... -> %s %d in %.2f s: %s", argv[0], WIFEXITED(r->status) ? "exit" : "signal",
	       WIFEXITED(r->status) ? WEXITSTATUS(r->status) : WTERMSIG(r->status), r->secs, r->err);
	return 0;
}

/*
 * track PID 0.01 2 could not make the userfaultfd: it exits 1 saying @words,
 * or (a kernel with soft-dirty) tracks by soft-dirty saying why not uffd.
 * Never uffd with nothing behind it.
 */
static void check_refused(const struct run *r, const char *words)
{
	bool failed = WIFEXITED(r->status) && WEXITSTATUS(r->status) == 1;
	bool fell_back = WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0 && strstr(r->err, "by soft-dirty") &&
			 strstr(r->err, "not uffd");

	CHECK(failed || fell_back);
	CHECK(strstr(r->err, words) != NULL);
	CHECK(!strstr(r->err, "left out"));
}

/* A child that waits in read on @fd until it reads EOF; then exits 0. */
static pid_t start_reader(int fd, int close_fd)
{
	pid_t pid = fork();

	if (pid == 0) {
		char c;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (close_fd >= 0)
			close(close_fd);
		while (read(fd, &c, 1) > 0)
			;
		_exit(0);
	}
	return pid;
}

static int finish(pid_t pid, int wfd)
{
	int st = -1;

	close(wfd);
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static long tracer_of(pid_t pid)
{
	struct tstat s;

	return task_status(pid, pid, &s) == 0 ? s.tracer : -1;
}

/* Already traced (a test tracer stands for strace or gdb): refused at once; the tracer keeps it. */
static int start_traced(void)
{
	const char *why = cannot_run();
	char pid[16];
	struct run r;
	int p[2], st;
	pid_t target, tracer;

	if (why)
		return t_skip("%s", why);
	CHECK(pipe2(p, O_CLOEXEC) == 0);
	target = start_reader(p[0], p[1]);
	close(p[0]);
	tracer = fork();
	if (tracer == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (ptrace(PTRACE_SEIZE, target, 0L, 0L) < 0)
			_exit(1);
		for (;;)
			pause();
	}
	for (int i = 0; i < 1000 && tracer_of(target) != tracer; i++)
		sleep_ms(1);
	CHECK_EQ_U64(tracer_of(target), tracer);
	snprintf(pid, sizeof(pid), "%d", (int)target);
	{
		char *argv[] = { pagemap_bin, "track", pid, "0.01", "2", NULL };
		char *forced[] = { pagemap_bin, "track", "-m", "uffd", pid, "0.01", "2", NULL };
		char *snap[] = { pagemap_bin, "track", "-m", "fork-snapshot", pid, "0.01", "2", NULL };

		run_cmd(argv, &r);
		check_refused(&r, "traced already");
		CHECK(r.secs < 1.0);
		run_cmd(forced, &r);
		CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 1);
		CHECK(strstr(r.err, "traced already") != NULL);
		run_cmd(snap, &r);
		CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 1);
		CHECK(strstr(r.err, "traced already") != NULL);
	}
	CHECK_EQ_U64(tracer_of(target), tracer);
	kill(tracer, SIGKILL);
	waitpid(tracer, &st, 0);
	CHECK_EQ_U64(finish(target, p[1]), 0);
	return T_PASS;
}

/* A parent blocked in vfork (uninterruptible): refused after a second, once, not per mapping. */
static int start_vfork_parent(void)
{
	const char *why = cannot_run();
	char pid[16];
	struct run r;
	struct tstat s;
	int st, i;
	pid_t target;

	if (why)
		return t_skip("%s", why);
	target = fork();
	if (target == 0) {
		pid_t v;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		v = vfork();
		if (v == 0) {
			struct timespec ts = { 2, 0 };

			nanosleep(&ts, NULL);
			_exit(0);
		}
		_exit(v > 0 && waitpid(v, &st, 0) == v ? 0 : 1);
	}
	for (i = 0; i < 2000 && !(task_status(target, target, &s) == 0 && s.state == 'D'); i++)
		sleep_ms(1);
	CHECK(s.state == 'D');
	snprintf(pid, sizeof(pid), "%d", (int)target);
	{
		char *argv[] = { pagemap_bin, "track", pid, "0.01", "2", NULL };

		run_cmd(argv, &r);
	}
	check_refused(&r, "uninterruptible sleep");
	CHECK(r.secs < 1.9);	/* one attach gives up after 1 s (the vfork child sleeps 2 s) */
	CHECK_EQ_U64(tracer_of(target), 0);
	CHECK(waitpid(target, &st, 0) == target && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return T_PASS;
}

/* A filter that fails userfaultfd() with EPERM (as container runtimes do). */
static void deny_userfaultfd(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_userfaultfd, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
		_exit(3);
}

/* A reader under that filter, as uid @uid if not 0 (dumpable, so that uid may ptrace it). */
static pid_t start_filtered(int fd, int close_fd, uid_t uid)
{
	pid_t pid = fork();

	if (pid == 0) {
		char c;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(close_fd);
		if (uid && (setresgid(uid, uid, uid) || setresuid(uid, uid, uid)))
			_exit(4);
		prctl(PR_SET_DUMPABLE, 1);
		deny_userfaultfd();
		while (read(fd, &c, 1) > 0)
			;
		_exit(0);
	}
	return pid;
}

/* Root passes through the target's seccomp filter (PTRACE_O_SUSPEND_SECCOMP): the notice says so. */
static int start_seccomp_root(void)
{
	const char *why = cannot_run();
	char pid[16];
	struct run r;
	int p[2];
	pid_t target;

	if (why)
		return t_skip("%s", why);
	CHECK(pipe2(p, O_CLOEXEC) == 0);
	target = start_filtered(p[0], p[1], 0);
	close(p[0]);
	sleep_ms(50);
	snprintf(pid, sizeof(pid), "%d", (int)target);
	{
		char *argv[] = { pagemap_bin, "track", pid, "0.01", "1", NULL };

		run_cmd(argv, &r);
	}
	CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	CHECK(strstr(r.err, "seccomp filter is suspended") != NULL);
	CHECK_EQ_U64(count_uffds(target), 0);
	CHECK_EQ_U64(finish(target, p[1]), 0);
	return T_PASS;
}

/* An unprivileged tracker and a target of its own uid under a filter: refused, saying it is the filter. */
static int start_seccomp_unpriv(void)
{
	const char *why = cannot_run();
	char pid[16];
	struct run r;
	int p[2];
	pid_t target;

	if (why)
		return t_skip("%s", why);
	if (system("setpriv --help 2>/dev/null | grep -q reuid") != 0)
		return t_skip("no setpriv --reuid (util-linux)");
	if (access(pagemap_bin, X_OK) != 0 || system("setpriv --reuid=65534 --regid=65534 --clear-groups "
						     "sh -c 'test -x \"$0\"' \"$PAGEMAP_BIN\" 2>/dev/null") != 0)
		return t_skip("uid 65534 cannot run %s", pagemap_bin);
	CHECK(pipe2(p, O_CLOEXEC) == 0);
	target = start_filtered(p[0], p[1], 65534);
	close(p[0]);
	sleep_ms(50);
	snprintf(pid, sizeof(pid), "%d", (int)target);
	{
		char *argv[] = { "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
				 pagemap_bin, "track", pid, "0.01", "2", NULL };

		run_cmd(argv, &r);
	}
	check_refused(&r, "seccomp filter");
	CHECK_EQ_U64(tracer_of(target), 0);
	CHECK_EQ_U64(count_uffds(target), 0);
	CHECK_EQ_U64(finish(target, p[1]), 0);
	return T_PASS;
}

/* The fork-snapshot child holds none of the target's descriptors: a pipe's EOF is not delayed. */
static int snapshot_child_fds(void)
{
	const char *why = cannot_run();
	char pid[16], path[64], buf[64];
	int data[2], ctl[2], st, i;
	pid_t target, tracker, child = 0;
	struct pollfd pfd;
	FILE *f;

	if (why)
		return t_skip("%s", why);
	CHECK(pipe2(data, O_CLOEXEC) == 0);
	CHECK(pipe2(ctl, O_CLOEXEC) == 0);
	target = fork();
	if (target == 0) {
		char c;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(data[0]);
		close(ctl[1]);
		if (read(ctl[0], &c, 1) == 1)	/* told: close the pipe's write end */
			close(data[1]);
		while (read(ctl[0], &c, 1) > 0)
			;
		_exit(0);
	}
	close(data[1]);
	close(ctl[0]);
	snprintf(pid, sizeof(pid), "%d", (int)target);
	tracker = fork();
	if (tracker == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 1);
		dup2(null, 2);
		execl(pagemap_bin, pagemap_bin, "track", "-m", "fork-snapshot", pid, "5", "1", (char *)NULL);
		_exit(127);
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)target, (int)target);
	for (i = 0; i < 3000 && !child; i++) {
		f = fopen(path, "re");
		if (f) {
			if (fgets(buf, sizeof(buf), f))
				child = atoi(buf);
			fclose(f);
		}
		if (!child)
			sleep_ms(1);
	}
	CHECK(child > 0);
	sleep_ms(300);	/* start-up replaces the snapshot once per mapping added: take the one that stays */
	f = fopen(path, "re");
	child = 0;
	if (f) {
		if (fgets(buf, sizeof(buf), f))
			child = atoi(buf);
		fclose(f);
	}
	CHECK(child > 0);
	if (child > 0) {
		char fds[64];
		struct dirent *d;
		DIR *dir;
		int n = 0;

		snprintf(fds, sizeof(fds), "/proc/%d/fd", (int)child);
		dir = opendir(fds);
		CHECK(dir != NULL);
		while (dir && (d = readdir(dir)))
			n += d->d_name[0] != '.';
		if (dir)
			closedir(dir);
		printf("    the snapshot child %d holds %d descriptors\n", (int)child, n);
		CHECK_EQ_U64(n, 0);
	}
	CHECK(write(ctl[1], "c", 1) == 1);
	pfd.fd = data[0];
	pfd.events = POLLIN;
	CHECK(poll(&pfd, 1, 1000) == 1);	/* EOF at once, not when the snapshot is replaced (5 s) */
	CHECK(read(data[0], buf, 1) == 0);
	kill(tracker, SIGTERM);
	CHECK(waitpid(tracker, &st, 0) == tracker);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(data[0]);
	CHECK_EQ_U64(finish(target, ctl[1]), 0);
	return T_PASS;
}

static int setup(const char *argv0)
{
	const char *b = getenv("PAGEMAP_BUILD");

	if (b && strlen(b) < sizeof(pagemap_bin) - 16)
		snprintf(pagemap_bin, sizeof(pagemap_bin), "%.*s/pagemap", (int)(sizeof(pagemap_bin) - 16), b);
	else {
		char self[PATH_MAX];
		ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
		char *s;

		(void)argv0;
		if (len <= 0)
			return -1;
		self[len] = 0;
		s = strstr(self, "/tests/live/");
		if (!s)
			return -1;
		strcpy(s, "/pagemap");
		memcpy(pagemap_bin, self, sizeof(pagemap_bin));
	}
	setenv("PAGEMAP_BIN", pagemap_bin, 1);
	have_avx2 = __builtin_cpu_supports("avx2");
	board = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	signal(SIGPIPE, SIG_IGN);
	return board == MAP_FAILED ? -1 : 0;
}

static const char *cannot_run(void)
{
	if (system("strace -V >/dev/null 2>&1") != 0)
		return "no strace (a test dependency: apt-get install strace)";
	if (access(pagemap_bin, X_OK) != 0)
		return "no pagemap binary";
	if (geteuid() != 0)
		return "needs root (ptrace of a sibling, the uffd method)";
	return NULL;
}

#define SWEEP(i)                                                  \
	static int sweep_##i(void)                                \
	{                                                         \
		const char *why = cannot_run();                   \
		return why ? t_skip("%s", why) : sweep(&kinds[i]); \
	}
SWEEP(0)
SWEEP(1)
SWEEP(2)
SWEEP(3)
SWEEP(4)
SWEEP(5)
SWEEP(6)
SWEEP(7)

int main(int argc, char **argv)
{
	static const struct t_case cases[] = {
		T(sweep_0), T(sweep_1), T(sweep_2), T(sweep_3), T(sweep_4), T(sweep_5), T(sweep_6), T(sweep_7),
		T(start_traced), T(start_vfork_parent),
		T(start_seccomp_root), T(start_seccomp_unpriv), T(snapshot_child_fds),
	};

	if (setup(argv[0]) < 0)
		return 1;
#ifndef __x86_64__
	printf("SKIP track_kill: syscall injection is x86-64 only\n");
	return 0;
#endif
	return t_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
