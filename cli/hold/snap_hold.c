/* snap_hold.c - `pagemap snapshot`'s cgroup v2 selection and --freeze: the cgroup freezer or SIGSTOP, always undone. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "hold_mark.h"
#include "snap_hold.h"

#define HOLD_TIMEOUT_MS	10000	/* a process in uninterruptible sleep delays a freeze; longer is a failure */
#define HOLD_POLL_MS	5

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const int hold_signals[] = { SIGINT, SIGTERM, SIGHUP };
static struct sigaction old_action[ARRAY_SIZE(hold_signals)];
static struct snap_hold *volatile held;	/* what the signal handler undoes */

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void nap(void)
{
	struct timespec ts = { 0, HOLD_POLL_MS * 1000000L };

	nanosleep(&ts, NULL);
}

/* The cgroup2 mount whose root is the hierarchy's: /sys/fs/cgroup, else the first (a hybrid host's .../unified). */
static int cg2_mount(char *buf, size_t size)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL, root[PATH_MAX], mnt[PATH_MAX];
	size_t cap = 0;
	int r = -1;

	if (!f)
		return -1;
	while (getline(&line, &cap, f) > 0) {
		const char *dash = strstr(line, " - ");
		if (!dash || strncmp(dash + 3, "cgroup2 ", 8) ||
		    sscanf(line, "%*s %*s %*s %4095s %4095s", root, mnt) != 2 || strcmp(root, "/"))
			continue;
		if (r < 0 || !strcmp(mnt, "/sys/fs/cgroup"))
			r = snprintf(buf, size, "%s", mnt) < (int)size ? 0 : -1;
	}
	free(line);
	fclose(f);
	return r;
}

int cg2_dir(const char *path, char *dir)
{
	char mnt[PATH_MAX];
	struct stat sb;

	if (cg2_mount(mnt, sizeof(mnt)) < 0) {
		cli_error(0, "no cgroup %s: no cgroup v2 hierarchy is mounted (/proc/self/mountinfo)", path);
		return -1;
	}
	if (snprintf(dir, PATH_MAX, "%s%s", mnt, strcmp(path, "/") ? path : "") >= PATH_MAX) {
		cli_error(ENAMETOOLONG, "no cgroup %s", path);
		return -1;
	}
	if (stat(dir, &sb) < 0 || !S_ISDIR(sb.st_mode)) {
		cli_error(0, "no cgroup %s: %s is not a cgroup v2 directory", path, dir);
		return -1;
	}
	return 0;
}

/* The cgroup v2 path of @pid ("self" as 0) into @buf: its /proc/PID/cgroup "0::" line, parsed as `ps --cgroup` does. */
static int cg2_of(pid_t pid, char *buf, size_t size)
{
	char name[64], text[8192], *line;
	ssize_t n;
	int r = -ENODATA;

	if (pid)
		snprintf(name, sizeof(name), "/proc/%d/cgroup", (int)pid);
	else
		snprintf(name, sizeof(name), "/proc/self/cgroup");
	if ((n = cli_read_small(name, text, sizeof(text))) < 0)
		return (int)n;
	/* The v2 line alone: on a hybrid host pm_memcg_parse would take the v1 memory line first. */
	for (line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
		if (!strncmp(line, "0::", 3)) {
			char *nl = strchr(line, '\n');
			r = pm_memcg_parse(line, nl ? (size_t)(nl - line) : strlen(line), buf, size);
			break;
		}
	return r;
}

bool cg2_holds(pid_t pid, const char *path)
{
	char cg[PATH_MAX];

	return pid > 0 && cg2_of(pid, cg, sizeof(cg)) == 0 && pm_memcg_within(cg, path);
}

/* Undo what @h holds with async-signal-safe calls only: also the signal handler's path. */
static void undo(struct snap_hold *h)
{
	guard_release(h->holds, h->nholds);
}

/*
 * Count in one more hold of @h: stored whole, then counted, in that order
 * for the signal handler (which may run between any two instructions here
 * and reads up to @h->nholds).
 */
static void hold_add(struct snap_hold *h, pid_t pid, int fd)
{
	h->holds[h->nholds] = (struct guard_hold){ pid, fd };
	atomic_signal_fence(memory_order_release);
	h->nholds++;
}

static void on_signal(int sig)
{
	struct snap_hold *h = held;

	if (h)
		undo(h);
	signal(sig, SIG_DFL);
	raise(sig);	/* delivered when the handler returns: the end the signal would have been */
}

static void signals_catch(struct snap_hold *h)
{
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigfillset(&sa.sa_mask);
	held = h;
	for (i = 0; i < ARRAY_SIZE(hold_signals); i++)
		sigaction(hold_signals[i], &sa, &old_action[i]);
}

void hold_release(struct snap_hold *h)
{
	sigset_t block, old;
	size_t i;

	if (h->how == HOLD_NONE || h->end)
		return;
	h->end = h->start + (now_ns(CLOCK_MONOTONIC) - h->mono);
	if (held != h) {
		guard_end(&h->guard);
		return;	/* a cgroup frozen by someone else: theirs to thaw */
	}
	sigemptyset(&block);
	for (i = 0; i < ARRAY_SIZE(hold_signals); i++)
		sigaddset(&block, hold_signals[i]);
	sigprocmask(SIG_BLOCK, &block, &old);
	undo(h);
	held = NULL;
	for (i = 0; i < h->nholds; i++)
		if (h->holds[i].fd >= 0)
			close(h->holds[i].fd);
	free(h->holds);
	h->holds = NULL;
	h->nholds = 0;
	guard_end(&h->guard);	/* after the undo: a death before it leaves the guardian to do it */
	for (i = 0; i < ARRAY_SIZE(hold_signals); i++)
		sigaction(hold_signals[i], &old_action[i], NULL);
	sigprocmask(SIG_SETMASK, &old, NULL);	/* one that came meanwhile ends us now, with nothing held */
}

static void held_now(struct snap_hold *h)
{
	h->start = now_ns(CLOCK_REALTIME);
	h->mono = now_ns(CLOCK_MONOTONIC);
}

/* "frozen 1" in @dir's cgroup.events: 1, 0, or -1 unreadable. */
static int cg_frozen(const char *dir)
{
	char name[PATH_MAX + 16], text[512], *p;

	snprintf(name, sizeof(name), "%s/cgroup.events", dir);
	if (cli_read_small(name, text, sizeof(text)) <= 0)
		return -1;
	p = strstr(text, "frozen ");
	return p && (p == text || p[-1] == '\n') ? p[7] == '1' : -1;
}

int hold_cgroup(struct snap_hold *h, const char *path)
{
	char name[PATH_MAX + 16], own[PATH_MAX];
	int waited, fd, dfd, err;

	if (cg2_of(0, own, sizeof(own)) == 0 && pm_memcg_within(own, path)) {
		cli_error(0, "cannot freeze cgroup %s: pagemap itself runs in it (%s)", path, own);
		return -1;
	}
	snprintf(name, sizeof(name), "%s/cgroup.freeze", h->dir);
	if ((fd = open(name, O_RDWR | O_CLOEXEC)) < 0) {
		cli_error(errno, "cannot freeze cgroup %s: cannot open %s", path, name);
		if (errno == ENOENT)
			cli_hint("the root cgroup has no freezer; name a cgroup below it");
		return -1;
	}
	h->how = HOLD_CGROUP;
	dfd = open(h->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if ((cg_frozen(h->dir) == 1 || (pread(fd, own, 1, 0) == 1 && own[0] == '1')) &&
	    !(dfd >= 0 && mark_left_behind(dfd, h->left_by, sizeof(h->left_by)))) {
		h->already = true;	/* frozen (or being frozen) by someone else: theirs to thaw */
		close(fd);
		if (dfd >= 0)
			close(dfd);
		held_now(h);
		return 0;
	}
	if (h->left_by[0])	/* its freeze is ours to end: the holder that would have is gone */
		cli_note("snapshot: cgroup %s was left frozen by a pagemap that died (its guardian, PID %s, is gone): "
			 "thawed after this snapshot", path, h->left_by);
	if (!(h->holds = calloc(2, sizeof(*h->holds))))
		err = -ENOMEM;
	else if (!(err = guard_start(&h->guard, 2)) && !(err = guard_tell(&h->guard, GUARD_CGROUP_FREEZE, fd)) &&
		 dfd >= 0)
		err = guard_tell(&h->guard, GUARD_CGROUP_DIR, dfd);
	if (err) {
		cli_error(-err, "cannot freeze cgroup %s: cannot start the process that thaws it should pagemap die",
			  path);
		guard_end(&h->guard);
		free(h->holds);
		h->holds = NULL;
		close(fd);
		if (dfd >= 0)
			close(dfd);
		h->how = HOLD_NONE;
		return -1;
	}
	if (dfd >= 0)
		mark_put(dfd, h->guard.pid);
	hold_add(h, GUARD_CGROUP_FREEZE, fd);
	hold_add(h, GUARD_CGROUP_DIR, dfd);
	signals_catch(h);	/* before the write: a signal from here on thaws */
	if (write(fd, "1", 1) != 1) {
		cli_error(errno, "cannot freeze cgroup %s: cannot write %s", path, name);
		hold_release(h);
		return -1;
	}
	for (waited = 0; cg_frozen(h->dir) != 1; waited += HOLD_POLL_MS) {
		if (waited >= HOLD_TIMEOUT_MS) {
			cli_error(0, "cannot freeze cgroup %s: %s/cgroup.events not 'frozen 1' after %d s", path,
				  h->dir, HOLD_TIMEOUT_MS / 1000);
			hold_release(h);
			return -1;
		}
		nap();
	}
	held_now(h);
	return 0;
}

/* The state letter of /proc/PID/stat, or 0 when the process is gone. */
static char proc_state(pid_t pid)
{
	return cli_proc_stat(pid).state;
}

/*
 * Is @pid's process group the foreground of its controlling terminal? A
 * stopped foreground job gives the terminal back to its shell: after
 * SIGCONT it runs in the background, and the user's next keystrokes go to
 * the shell as commands.
 */
static bool in_foreground(pid_t pid)
{
	struct pm_proc_stat ps = cli_proc_stat(pid);

	return ps.state && ps.tty_nr != 0 && ps.tpgid > 0 && ps.tpgid == ps.pgrp;
}

static bool is_stopped(char st)
{
	return st == 'T' || st == 't';
}

static void note_already(struct snap_hold *h, pid_t pid)
{
	size_t len = strlen(h->already_pids);

	if (len < sizeof(h->already_pids) - 16)
		snprintf(h->already_pids + len, sizeof(h->already_pids) - len, "%s%d", len ? "," : "", (int)pid);
}

/*
 * SIGSTOP @pid unless it is stopped already (someone else's stop: left to
 * them) or gone. Recorded before it is sent, with the guardian and in
 * @h->holds: no moment exists where it is stopped and nobody knows.
 */
static int stop_one(struct snap_hold *h, pid_t pid)
{
	char st = proc_state(pid);
	int pidfd, err;

	if (!st || st == 'Z' || st == 'X')
		return 0;	/* gone: the snapshot says so */
	if (is_stopped(st)) {
		note_already(h, pid);
		return 0;
	}
	/* By pidfd: the process checked is the one signalled, and the one the guardian continues. */
	if ((pidfd = (int)syscall(SYS_pidfd_open, pid, 0)) < 0) {
		err = errno;
		cli_error(err, "cannot stop process %d", (int)pid);
		return err == ESRCH ? 0 : -1;
	}
	if ((err = guard_tell(&h->guard, pid, pidfd))) {
		close(pidfd);
		cli_error(-err, "cannot stop process %d: the process that continues it should pagemap die is gone",
			  (int)pid);
		return -1;
	}
	/* Before the signal (a SIGCONT of one never stopped does no harm); the pidfd kept for the SIGCONT. */
	hold_add(h, pid, pidfd);
	if (syscall(SYS_pidfd_send_signal, pidfd, SIGSTOP, NULL, 0) < 0) {
		err = errno;
		h->holds[h->nholds - 1].fd = -1;	/* then closed: the handler never signals a number reused */
		atomic_signal_fence(memory_order_release);
		close(pidfd);
		cli_error(err, "cannot stop process %d", (int)pid);
		return err == ESRCH ? 0 : -1;
	}
	return 0;
}

/* Refuse (one line and a hint) a process the SIGSTOP would take its terminal from, before anything is held. */
static int refuse_foreground(const pid_t *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (in_foreground(v[i]) && !is_stopped(proc_state(v[i]))) {
			cli_error(0, "cannot stop process %d: it is the foreground job of its terminal, which SIGSTOP "
				  "would hand back to the shell", (int)v[i]);
			cli_hint("hold it with the freezer (--cgroup PATH --freeze), which job control does not see");
			return -1;
		}
	return 0;
}

/* The PIDs of @v (of @n) that run into @live; how many. */
static size_t live_pids(const pid_t *v, size_t n, pid_t *live)
{
	size_t i, k = 0;
	char st;

	for (i = 0; i < n; i++)
		if ((st = proc_state(v[i])) && st != 'Z' && st != 'X')
			live[k++] = v[i];
	return k;
}

/*
 * The comma-separated -p @list, parsed once into @v (freed by the caller): the PIDs but pagemap's own
 * (parse() refused it; never ours to stop). How many, or -1 out of memory.
 */
static ssize_t parse_pids(const char *list, pid_t **v)
{
	size_t n = 0, k = 0, i;

	*v = NULL;
	if (cli_parse_pid_list(list, true, v, &n))
		return -1;
	for (i = 0; i < n; i++)
		if ((*v)[i] > 0 && (*v)[i] != getpid())
			(*v)[k++] = (*v)[i];
	return (ssize_t)k;
}

static bool listed(pid_t pid, const pid_t *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i] == pid)
			return true;
	return false;
}

/* Is @dir a leaf (no cgroup below it) whose every process is one of @v? */
static bool leaf_of_only(const char *dir, const pid_t *v, size_t n)
{
	char name[PATH_MAX + 16];
	struct dirent *d;
	bool ok = true;
	long pid;
	FILE *f;
	DIR *dd;

	if (!(dd = opendir(dir)))
		return false;
	while (ok && (d = readdir(dd)))
		ok = d->d_type != DT_DIR || !strcmp(d->d_name, ".") || !strcmp(d->d_name, "..");
	closedir(dd);
	snprintf(name, sizeof(name), "%s/cgroup.procs", dir);
	if (!ok || !(f = fopen(name, "re")))
		return false;
	while (ok && fscanf(f, "%ld", &pid) == 1)
		ok = listed((pid_t)pid, v, n);
	fclose(f);
	return ok;
}

/*
 * Can -p @pids be held by the freezer instead of SIGSTOP? When the listed
 * processes that run are all of one cgroup v2 leaf and nothing else is in
 * it (not the root, which has no freezer; not pagemap's own): then its path
 * into @path and its directory into @h->dir. The freezer is invisible to
 * job control (a foreground job keeps its terminal) and leaves no SIGCONT
 * to a process's handler; several cgroups, or company in one, keep SIGSTOP.
 */
static bool pids_in_own_leaf(struct snap_hold *h, const pid_t *pids, size_t npids, char *path, size_t size)
{
	char cg[PATH_MAX], own[PATH_MAX], mnt[PATH_MAX], name[PATH_MAX + 16];
	pid_t *v = calloc(npids ? npids : 1, sizeof(*v));
	size_t n = v ? live_pids(pids, npids, v) : 0, i;
	bool ok = false;

	if (!n || cg2_of(v[0], path, size) || !strcmp(path, "/") || cg2_mount(mnt, sizeof(mnt)))
		goto out;
	for (i = 1; i < n; i++)
		if (cg2_of(v[i], cg, sizeof(cg)) || strcmp(cg, path))
			goto out;
	if (cg2_of(0, own, sizeof(own)) || pm_memcg_within(own, path))
		goto out;
	if (snprintf(h->dir, PATH_MAX, "%s%s", mnt, path) >= PATH_MAX)
		goto out;
	snprintf(name, sizeof(name), "%s/cgroup.freeze", h->dir);
	ok = access(name, W_OK) == 0 && leaf_of_only(h->dir, v, n);
out:
	free(v);
	return ok;
}

int hold_pids(struct snap_hold *h, const char *pids)
{
	pid_t *v = NULL, pid;
	ssize_t n = parse_pids(pids, &v);
	int r = 0, waited;
	size_t i;

	if (n >= 0 && pids_in_own_leaf(h, v, (size_t)n, h->path, sizeof(h->path))) {
		free(v);
		return hold_cgroup(h, h->path);
	}
	h->path[0] = '\0';
	if (n < 0 || !(h->holds = calloc(n ? (size_t)n : 1, sizeof(*h->holds)))) {
		free(v);
		cli_error(ENOMEM, "cannot stop the processes");
		return -1;
	}
	if (refuse_foreground(v, (size_t)n) || (r = guard_start(&h->guard, (size_t)n))) {
		if (r)
			cli_error(-r, "cannot stop the processes: cannot start the process that continues them "
				  "should pagemap die");
		free(v);
		free(h->holds);
		h->holds = NULL;
		return -1;
	}
	h->how = HOLD_SIGSTOP;
	signals_catch(h);
	for (i = 0; i < (size_t)n && !r; i++)
		r = stop_one(h, v[i]);
	free(v);
	for (i = 0; i < h->nholds && !r; i++) {
		pid = h->holds[i].pid;
		for (waited = 0; h->holds[i].fd >= 0 && proc_state(pid) && !is_stopped(proc_state(pid));
		     waited += HOLD_POLL_MS) {
			if (waited >= HOLD_TIMEOUT_MS) {
				cli_error(0, "cannot stop process %d: not stopped %d s after SIGSTOP", (int)pid,
					  HOLD_TIMEOUT_MS / 1000);
				r = -1;
				break;
			}
			nap();
		}
	}
	if (r) {
		hold_release(h);
		return -1;
	}
	held_now(h);
	return 0;
}
