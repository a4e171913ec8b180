/* target.c - one process: its pagemap fd, held for the handle's life, and its state. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base.h"
#include "pme.h"

enum pm_proc_state pm_proc_state(struct pm_ctx *ctx, pid_t pid)
{
	char path[4096], buf[1024];
	struct pm_proc_stat st;
	int n;

	if (pmi_pid_path(ctx, path, sizeof(path), pid, "stat") < 0 ||
	    (n = pmi_read_small_file(ctx, path, buf, sizeof(buf))) <= 0 ||
	    pmi_stat_line_parse(buf, (size_t)n, &st, NULL, 0) < 0)
		return PM_PROC_GONE;
	return pmi_stat_state(&st);
}

/*
 * 3.11-4.1 switch from the page-shift layout to v2 when anyone writes 4
 * to a clear_refs: decide by effect on this target's own file.
 */
static enum pm_layout target_layout(struct pm_target *t, const struct pm_features *f, ssize_t have_e0, uint64_t e0)
{
	if (f->layout == PM_LAYOUT_CURRENT)
		return f->layout;
	if (have_e0 != 1 && pmi_ctx_pread_words(t->ctx, t->pagemap_fd, &e0, 1, 0) != 1)
		return f->layout;
	if (e0 == PME_PSHIFT_NOT_PRESENT(f->page_shift))
		return PM_LAYOUT_PSHIFT;
	/* Page 0 reads 0: v2 on a kernel known to be 3.11-4.1, else the current layout. */
	return f->layout == PM_LAYOUT_PSHIFT || f->layout == PM_LAYOUT_V2 ? PM_LAYOUT_V2 : PM_LAYOUT_CURRENT;
}

static int open_pagemap(struct pm_ctx *ctx, pid_t pid)
{
	char path[4096];
	int fd, r = pmi_pid_path(ctx, path, sizeof(path), pid, "pagemap");

	if (r < 0)
		return r;
	fd = pmi_open(ctx, path, O_RDONLY);
	if (fd == -EACCES && ctx->live) {
		/*
		 * Without an mm the pagemap inode belongs to root, so on 6.x an
		 * unprivileged opener gets EACCES for a zombie or a kernel
		 * thread where root gets ESRCH: report the documented ESRCH
		 * (live tests exit_race and open_errors run as uid 65534).
		 */
		enum pm_proc_state st = pm_proc_state(ctx, pid);
		return st == PM_PROC_ZOMBIE || st == PM_PROC_KTHREAD ? -ESRCH : -EACCES;
	}
	if (fd >= 0 || fd == -EPERM || fd == -EACCES || !ctx->live)
		return fd;
	/* ESRCH (no mm) vs ENOENT (no process): ask /proc/PID/stat. */
	return pm_proc_state(ctx, pid) == PM_PROC_GONE ? -ENOENT : -ESRCH;
}

struct pm_target *pm_target_open(struct pm_ctx *ctx, pid_t pid)
{
	const struct pm_features *f = pm_ctx_features(ctx);
	enum pm_proc_state st = PM_PROC_RUNNING;
	struct pm_target *t;
	ssize_t have_e0 = -1;
	uint64_t e0 = 0;
	int fd;

	if (!f)
		return NULL;
	if (ctx->features_bad) {	/* a replayed tree with a page or PMD size out of range */
		errno = EBADMSG;
		return NULL;
	}
	fd = open_pagemap(ctx, pid);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	/*
	 * 6.1 and older open a kernel thread's or zombie's pagemap, and every read of it gives 0 bytes (no
	 * mm). Live, a read of entry 0 tells so (a process with an mm has an entry for every page), at the
	 * cost of one pread instead of an open and read of /proc/PID/stat at every open; the entry serves
	 * target_layout too. A replayed tree's pagemap file need not hold page 0: ask its stat.
	 */
	if (ctx->live)
		have_e0 = pmi_ctx_pread_words(ctx, fd, &e0, 1, 0);
	if (have_e0 == 0)
		st = PM_PROC_ZOMBIE;
	else if (have_e0 < 0)
		st = pm_proc_state(ctx, pid);
	if (st == PM_PROC_KTHREAD || st == PM_PROC_ZOMBIE) {
		close(fd);
		errno = ESRCH;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		close(fd);
		return NULL;
	}
	t->ctx = ctx;
	t->pid = pid;
	t->pagemap_fd = fd;
	/* The view belongs to the opener's credentials: ours, or the capture's. */
	t->pfn_view = f->pfn_view == PM_PFN_VISIBLE || (f->pfn_view == PM_PFN_UNKNOWN && f->privileged) ?
			      PM_PFN_VISIBLE : PM_PFN_HIDDEN;
	t->decode.layout = target_layout(t, f, have_e0, e0);
	t->decode.page_shift = f->page_shift;
	t->decode.frame_visible = t->pfn_view == PM_PFN_VISIBLE;
	t->decode.swap_active = pmi_swap_active(ctx);
	return t;
}

void pm_target_close(struct pm_target *t)
{
	if (!t)
		return;
	if (t->pagemap_fd >= 0)
		close(t->pagemap_fd);
	free(t);
}

pid_t pm_target_pid(const struct pm_target *t)
{
	return t->pid;
}

enum pm_pfn_view pm_target_pfn_view(const struct pm_target *t)
{
	return t->pfn_view;
}

void pm_target_decode_info(const struct pm_target *t, struct pm_decode_info *out)
{
	*out = t->decode;
}

/*
 * A 0-byte read means either the end of the readable address space
 * (task_size) or that the mm is gone (exit, exec). Virtual page 0 is always
 * below task_size: if it reads nothing too, the mm is gone.
 */
static int mm_gone(struct pm_target *t)
{
	uint64_t e;
	ssize_t n = pmi_ctx_pread_words(t->ctx, t->pagemap_fd, &e, 1, 0);

	if (n < 0)
		return (int)n;
	return n == 0;
}

ssize_t pmi_target_read_nocheck(struct pm_target *t, uint64_t vpn, uint64_t *buf, size_t count)
{
	ssize_t n = pmi_ctx_pread_words(t->ctx, t->pagemap_fd, buf, count, vpn);
	int gone;

	/* A replayed file never loses its mm: a short read is its end (the walk calls it truncated). */
	if (n < 0 || (size_t)n == count || !count || !t->ctx->live)
		return n;
	gone = mm_gone(t);
	if (gone < 0)
		return gone;
	return gone ? -ESRCH : n;
}

/*
 * The caller's check (pm_ctx_set_check) is asked before a read of more than
 * one entry: a one-word read is a liveness probe (wss, watch, the walk's
 * start), over at once, and one that failed with -EINTR made "the target
 * has no memory: Interrupted system call" of a stop.
 */
ssize_t pm_target_read(struct pm_target *t, uint64_t vpn, uint64_t *buf, size_t count)
{
	int stop = count > 1 && t->ctx->check ? t->ctx->check(t->ctx->check_data) : 0;

	if (stop < 0)	/* the caller asked to stop */
		return stop;
	return pmi_target_read_nocheck(t, vpn, buf, count);
}
