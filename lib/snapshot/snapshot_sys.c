/*
 * snapshot_sys.c - the machine's files a snapshot keeps beside its processes
 * (the kernel release, swap areas, the huge page size, the NUMA topology of
 * snapshot_numa.c): gathered first, by the thread that reads a process's
 * text files ahead (snapshot_ahead.c) or in place, then written in their
 * usual place by pm_snapshot_add_system.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base.h"
#include "snapshot.h"

/* A file that cannot be opened is written as PATH.errno: the kernel's answer is worth keeping. */
static const char *const sys_file[][2] = {
	{ "/proc/sys/kernel/osrelease", "proc/sys/kernel/osrelease" },
	{ "/proc/swaps", "proc/swaps" },
	{ "/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "sys/kernel/mm/transparent_hugepage/hpage_pmd_size" },
};

static struct snap_sysfile *sys_add(struct snap_sys *s, const char *path)
{
	struct snap_sysfile *f;

	if (s->n == s->cap && pmi_grow(&s->v, &s->cap, s->n + 1, sizeof(*s->v)))
		return NULL;
	f = &s->v[s->n];
	memset(f, 0, sizeof(*f));
	f->fd = -1;
	if (!(f->path = strdup(path)))
		return NULL;
	s->n++;
	return f;
}

int pmi_snap_sys_name(struct snap_sys *s, const char *path)
{
	struct snap_sysfile *f = sys_add(s, path);

	if (!f)
		return -ENOMEM;
	f->name_only = true;
	return 0;
}

int pmi_snap_sys_read(struct snap_sys *s, const struct pm_ctx *ctx, const char *live, const char *path,
		      bool errno_file)
{
	struct snap_sysfile *f = sys_add(s, path);
	int fd;

	if (!f)
		return -ENOMEM;
	f->errno_file = errno_file;
	if ((fd = pmi_open(ctx, live, O_RDONLY)) < 0) {
		f->err = -fd;
		return 0;
	}
	f->r = pmi_snap_text_read(&f->t, fd);
	if (f->r || f->t.whole)
		close(fd);
	else
		f->fd = fd;	/* longer than held: written from the file itself */
	return 0;
}

int pmi_snap_sys_gather(struct snap_sys *s, const struct pm_ctx *ctx)
{
	char live[256];
	size_t i;
	int r = 0;

	for (i = 0; i < PMI_ARRAY_SIZE(sys_file) && !r; i++)
		if ((r = pmi_path(ctx, live, sizeof(live), "%s", sys_file[i][0])) == 0)
			r = pmi_snap_sys_read(s, ctx, live, sys_file[i][1], true);
	if (!r)
		r = pmi_snap_numa_gather(s, ctx);
	s->r = r;
	s->gathered = true;
	s->ctx = ctx;
	return r;
}

int pmi_snap_sys_put(struct pm_snapshot_writer *w, struct snap_sys *s)
{
	struct snap_sysfile *f;
	int id, r = s->r;

	for (f = s->v; !r && f < s->v + s->n; f++) {
		if (f->name_only)
			r = (id = pmi_snap_w_file(w, f->path, PM_SNAPSHOT_BYTES, 0)) < 0 ? id : 0;
		else if (f->err)
			r = f->errno_file ? pmi_snap_put_errno(w, f->path, f->err) : 0;
		else
			r = f->r ? f->r : pmi_snap_text_write(w, f->path, &f->t, f->fd);
	}
	return r;
}

void pmi_snap_sys_free(struct snap_sys *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		free(s->v[i].path);
		free(s->v[i].t.buf);
		if (s->v[i].fd >= 0)
			close(s->v[i].fd);
	}
	free(s->v);
	memset(s, 0, sizeof(*s));
}
