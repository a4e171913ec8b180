/* cache_targets.c - what `pagemap cache` measures: the files named (directories walked without
 * following links), or the files the processes chosen map or hold open. */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "output.h"
#include "cache.h"

/* One regular file found by the walk: @name under @dirfd, @path for its row. -1 only on ENOMEM. */
static int tree_file(struct cache_run *cr, int dirfd, const char *name, const char *path)
{
	int r = pm_cache_add_at(cr->c, dirfd, name, path);

	if (r == -ENOMEM)
		return -1;
	/* ENOENT: removed during the walk; EINVAL: replaced by something not a regular file */
	if (r < 0 && r != -ENOENT && r != -EINVAL) {
		cli_error(-r, "cannot measure %s", path);
		cr->bad_args++;
	}
	return 0;
}

/* d_type, or where the file system gives none, lstat's answer (DT_UNKNOWN: gone, skip it). */
static unsigned char entry_type(int dirfd, const struct dirent *de)
{
	struct stat sb;

	if (de->d_type != DT_UNKNOWN)
		return de->d_type;
	if (fstatat(dirfd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
		return DT_UNKNOWN;
	return S_ISDIR(sb.st_mode) ? DT_DIR : S_ISREG(sb.st_mode) ? DT_REG : DT_UNKNOWN;
}

/*
 * Every regular file under the directory @dfd (taken over and closed), whose
 * name is @path[0..@len). Depth first, symbolic links not followed. Names are
 * looked up relative to their directory (openat), not as whole paths: on a
 * tree of 100k files that is most of the kernel's work. A directory that
 * vanishes is skipped; one that cannot be opened (EACCES, EMFILE at great
 * depth: one descriptor per level) is said and makes the exit status 1,
 * never hidden. -1 on ENOMEM.
 */
static int walk_dir(struct cache_run *cr, int dfd, char *path, size_t len, size_t cap)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	int r = 0;

	if (!d) {
		cli_error(errno, "cannot walk %.*s", (int)len, path);
		cr->bad_args++;
		close(dfd);
		return 0;
	}
	while (r == 0 && (de = readdir(d))) {
		size_t n = strlen(de->d_name);
		unsigned char type;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		type = entry_type(dfd, de);
		if (type != DT_DIR && type != DT_REG)
			continue;
		if (len + n + 2 > cap) {
			cli_error(ENAMETOOLONG, "cannot walk %.*s/%s", (int)len, path, de->d_name);
			cr->bad_args++;
			continue;
		}
		path[len] = '/';
		memcpy(path + len + 1, de->d_name, n + 1);
		if (type == DT_REG) {
			r = tree_file(cr, dfd, de->d_name, path);
		} else {
			int sub = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0) {
				r = walk_dir(cr, sub, path, len + 1 + n, cap);
			} else if (errno != ENOENT) {
				cli_error(errno, "cannot walk %s", path);
				cr->bad_args++;
			}
		}
		path[len] = '\0';
	}
	closedir(d);
	return r;
}

/* A FILE argument, or every regular file under a directory argument (symbolic links not followed). */
int cache_add_arg(struct cache_run *cr, const char *path)
{
	struct stat sb;
	int r;

	if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		size_t cap = 32768, len = strlen(path);
		int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		char *buf = malloc(cap);

		if (dfd < 0 || !buf || len >= cap) {
			cli_error(dfd < 0 ? errno : buf ? ENAMETOOLONG : ENOMEM, "cannot walk %s", path);
			if (dfd >= 0)
				close(dfd);
			free(buf);
			return -1;
		}
		while (len > 0 && path[len - 1] == '/')
			len--;	/* "dir/" names its files "dir/f", "/" names "/etc" */
		memcpy(buf, path, len);
		buf[len] = '\0';
		r = walk_dir(cr, dfd, buf, len, cap);
		free(buf);
		if (r < 0)
			cli_error(ENOMEM, "cannot walk %s", path);
		return r;
	}
	r = pm_cache_add_path(cr->c, path);
	if (r == -ENOMEM) {
		cli_error(ENOMEM, "cannot add %s", path);
		return -1;
	}
	if (r < 0) {
		cli_error(-r == EINVAL ? 0 : -r, "cannot measure %s%s", path,
			  r == -EINVAL ? ": not a regular file" : "");
		cr->bad_args++;
	}
	return 0;
}

static bool wanted(const struct cache_opts *co, pid_t pid, bool *seen)
{
	size_t i;

	if (co->all)
		return true;
	for (i = 0; i < co->npids; i++)
		if (co->pids[i] == pid)
			return seen[i] = true;
	return false;
}

static int add_proc(struct pm_ctx *ctx, const struct cache_opts *co, struct cache_run *cr, const struct pm_proc *p)
{
	struct proc_row *row;
	char arg[16];
	int r;

	snprintf(arg, sizeof(arg), "%d", (int)p->pid);
	/* Named as every command names it: the library's words. */
	if (p->state != PM_PROC_RUNNING) {
		if (!co->all)
			cli_explain_target(ctx, p->pid, arg, ESRCH);
		return co->all ? 0 : -1;
	}
	r = pm_cache_add_process(cr->c, p->pid);
	if (r == -ENOMEM) {
		cli_error(ENOMEM, "cannot add process %d", (int)p->pid);
		return -2;
	}
	if (r < 0) {
		if (!co->all) {
			if (r == -ENOENT || r == -ESRCH)
				cli_explain_target(ctx, p->pid, arg, -r);
			else
				cli_walk_error(ctx, -r, arg);
			return -1;
		}
		cr->skipped++;
		cr->skip_err = -r;
		return 0;
	}
	row = realloc(cr->procs, (cr->nprocs + 1) * sizeof(*row));
	if (!row)
		return -2;
	cr->procs = row;
	row = &cr->procs[cr->nprocs++];
	memset(row, 0, sizeof(*row));
	row->pid = p->pid;
	snprintf(row->comm, sizeof(row->comm), "%s", p->comm);
	return 0;
}

/* -p PID... and --all, through ROOT/proc, in directory order. */
int cache_add_procs(struct pm_ctx *ctx, const struct cache_opts *co, struct cache_run *cr)
{
	bool *seen = calloc(co->npids + 1, sizeof(*seen));
	struct pm_procs *it = pm_procs_open(ctx);
	const struct pm_proc *p;
	int r, fail = 0;
	size_t i;

	if (!it || !seen) {
		cli_error(errno, "cannot list processes");
		pm_procs_close(it);
		free(seen);
		return EXIT_RUNTIME;
	}
	while ((r = pm_procs_next(it, &p)) == 0) {
		if (!wanted(co, p->pid, seen))
			continue;
		r = add_proc(ctx, co, cr, p);
		if (r == -2)
			break;
		fail |= r < 0;
	}
	pm_procs_close(it);
	for (i = 0; i < co->npids; i++)
		if (!seen[i]) {
			char arg[16];

			snprintf(arg, sizeof(arg), "%d", (int)co->pids[i]);
			cli_explain_target(ctx, co->pids[i], arg, ENOENT);
			fail = 1;
		}
	free(seen);
	if (cr->skipped)
		cli_error(0, "note: %zu process%s not examined (last reason: %s)", cr->skipped,
			  cr->skipped == 1 ? "" : "es", strerror(cr->skip_err));
	return r == -2 || r < -2 ? EXIT_RUNTIME : fail ? EXIT_RUNTIME : EXIT_OK;
}
