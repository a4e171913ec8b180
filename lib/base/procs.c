/* procs.c - iterate over the processes of ROOT/proc: PID, state, UID and command name. */
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

struct pm_procs *pm_procs_open(struct pm_ctx *ctx)
{
	struct pm_procs *it;
	char path[4096];
	int r = pmi_ctx_tree(ctx);	/* a listing: the names must be there (first: it names the root) */

	if (r >= 0)
		r = pmi_path(ctx, path, sizeof(path), "/proc");
	if (r < 0) {
		errno = -r;
		return NULL;
	}
	it = calloc(1, sizeof(*it));
	if (!it)
		return NULL;
	it->ctx = ctx;
	it->dir = opendir(path);
	if (!it->dir) {
		r = errno;
		free(it);
		errno = r;
		return NULL;
	}
	return it;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

bool pmi_proc_uid(struct pm_ctx *ctx, pid_t pid, uid_t *uid)
{
	char path[4096], buf[4096], *a, *e;
	unsigned long v;

	if (pmi_pid_path(ctx, path, sizeof(path), pid, "status") < 0 ||
	    pmi_read_small_file(ctx, path, buf, sizeof(buf)) <= 0 || !(a = strstr(buf, "\nUid:")))
		return false;
	v = strtoul(a + 5, &e, 10);
	if (e == a + 5)
		return false;
	*uid = (uid_t)v;
	return true;
}

/* State and comm (between the first '(' and the last ')') from one read of stat; real UID from status. */
static void read_identity(struct pm_ctx *ctx, struct pm_proc *p)
{
	char path[4096], buf[4096], *a, *b;
	size_t n;

	p->state = PM_PROC_GONE;
	if (pmi_pid_path(ctx, path, sizeof(path), p->pid, "stat") < 0 ||
	    pmi_read_small_file(ctx, path, buf, sizeof(buf)) <= 0)
		return;
	p->state = pmi_stat_state(buf);
	if (p->state == PM_PROC_GONE)
		return;
	if ((a = strchr(buf, '(')) && (b = strrchr(buf, ')')) && b > a) {
		n = (size_t)(b - a - 1) < sizeof(p->comm) - 1 ? (size_t)(b - a - 1) : sizeof(p->comm) - 1;
		memcpy(p->comm, a + 1, n);
		p->comm[n] = '\0';
	}
	p->uid_known = pmi_proc_uid(ctx, p->pid, &p->uid);
}

int pm_procs_next(struct pm_procs *it, const struct pm_proc **out)
{
	struct dirent *d;

	for (;;) {
		errno = 0;
		d = readdir(it->dir);
		if (!d)
			return errno ? -errno : 1;
		if (all_digits(d->d_name))
			break;
	}
	memset(&it->cur, 0, sizeof(it->cur));
	it->cur.pid = (pid_t)strtol(d->d_name, NULL, 10);
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
