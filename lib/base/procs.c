/* procs.c - the one walk of ROOT/proc (the process list, the live table): PID, state, UID and command name. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "base.h"

struct pm_procs {
	struct pm_ctx *ctx;
	DIR *dir;
	struct pm_proc cur;
};

int pmi_proc_dir_open(struct pm_ctx *ctx, DIR **dir)
{
	char path[4096];
	int r = pmi_ctx_tree(ctx);	/* a listing: the names must be there (first: it names the root) */

	if (r >= 0)
		r = pmi_path(ctx, path, sizeof(path), "/proc");
	if (r < 0)
		return r;
	return (*dir = opendir(path)) ? 0 : -errno;
}

int pmi_proc_dir_next(DIR *dir, pid_t *pid)
{
	struct dirent *d;

	for (;;) {
		char *end;
		long v;

		errno = 0;
		if (!(d = readdir(dir)))
			return errno ? -errno : 1;
		/* The kernel's names only: no sign, no leading zero, no PID past pid_t (a tree could hold them). */
		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		errno = 0;
		v = strtol(d->d_name, &end, 10);
		if (!*end && !errno && v > 0 && v <= 0x7fffffff) {
			*pid = (pid_t)v;
			return 0;
		}
	}
}

struct pm_procs *pm_procs_open(struct pm_ctx *ctx)
{
	struct pm_procs *it = calloc(1, sizeof(*it));
	int r;

	if (!it)
		return NULL;
	it->ctx = ctx;
	if ((r = pmi_proc_dir_open(ctx, &it->dir)) < 0) {
		free(it);
		errno = -r;
		return NULL;
	}
	return it;
}

int pmi_status_uid(const char *status, size_t len, uid_t *uid)
{
	const char *a = memmem(status, len, "\nUid:", 5), *end = status + len;
	unsigned long v = 0;
	const char *p;

	if (!a)
		return -EBADMSG;
	for (p = a + 5; p < end && (*p == '\t' || *p == ' '); p++)
		;
	if (p == end || *p < '0' || *p > '9')
		return -EBADMSG;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		if (v > ((unsigned long)(uid_t)-1 - (unsigned long)(*p - '0')) / 10)
			return -EBADMSG;	/* more than a uid_t holds: not a line the kernel writes */
		v = v * 10 + (unsigned long)(*p - '0');
	}
	*uid = (uid_t)v;
	return 0;
}

int pm_proc_uid(struct pm_ctx *ctx, pid_t pid, uid_t *uid)
{
	char path[4096], buf[4096];
	int r = pmi_pid_path(ctx, path, sizeof(path), pid, "status");

	if (r == 0 && (r = pmi_read_small_file(ctx, path, buf, sizeof(buf))) >= 0)
		r = pmi_status_uid(buf, (size_t)r, uid);
	return r < 0 ? r : 0;
}

/* State and comm from one read of stat; real UID from status. */
static void read_identity(struct pm_ctx *ctx, struct pm_proc *p)
{
	char path[4096], buf[4096];
	struct pm_proc_stat st;
	int n;

	p->state = PM_PROC_GONE;
	if (pmi_pid_path(ctx, path, sizeof(path), p->pid, "stat") < 0 ||
	    (n = pmi_read_small_file(ctx, path, buf, sizeof(buf))) <= 0 ||
	    pmi_stat_line_parse(buf, (size_t)n, &st, p->comm, sizeof(p->comm)) < 0)
		return;
	p->state = pmi_stat_state(&st);
	p->uid_known = pm_proc_uid(ctx, p->pid, &p->uid) == 0;
}

int pm_procs_next(struct pm_procs *it, const struct pm_proc **out)
{
	pid_t pid;
	int r = pmi_proc_dir_next(it->dir, &pid);

	if (r)
		return r;
	memset(&it->cur, 0, sizeof(it->cur));
	it->cur.pid = pid;
	read_identity(it->ctx, &it->cur);
	*out = &it->cur;
	return 0;
}

void pm_procs_close(struct pm_procs *it)
{
	if (!it)
		return;
	if (it->dir)
		closedir(it->dir);
	free(it);
}
