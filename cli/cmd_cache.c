/* cmd_cache.c - `pagemap cache`: what is in the page cache, per file, and who maps it or holds it open. */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "cli.h"
#include "output.h"

enum {
	COL_PID, COL_COMMAND, COL_CACHED, COL_DIRTY, COL_WRITEBACK, COL_EVICTED, COL_RECENT, COL_SIZE, COL_MAPPED,
	COL_MAPONLY, COL_PROCS, COL_SHARED, COL_FILES, COL_VIA, COL_METHOD, COL_DEV, COL_INODE, COL_MEMCG, COL_OWNCG, COL_OTHERCG, COL_PAYER, COL_PATH
};

static const struct out_col columns[] = {
	[COL_PID] = { "PID", 6, SCOLS_FL_RIGHT, OUT_NUM, "process ID" },
	[COL_COMMAND] = { "COMMAND", 0.1, 0, OUT_STR, "command name (comm)" },
	[COL_CACHED] = { "CACHED", 5, SCOLS_FL_RIGHT, OUT_SIZE, "bytes of the file in the page cache" },
	[COL_DIRTY] = { "DIRTY", 5, SCOLS_FL_RIGHT, OUT_SIZE, "of those, dirty" },
	[COL_WRITEBACK] = { "WRITEBACK", 5, SCOLS_FL_RIGHT, OUT_SIZE, "of those, under writeback" },
	[COL_EVICTED] = { "EVICTED", 5, SCOLS_FL_RIGHT, OUT_SIZE, "bytes evicted (shmem: swapped out)" },
	[COL_RECENT] = { "RECENT", 5, SCOLS_FL_RIGHT, OUT_SIZE, "of those, evicted recently (would refault)" },
	[COL_SIZE] = { "SIZE", 5, SCOLS_FL_RIGHT, OUT_SIZE, "file size" },
	[COL_MAPPED] = { "MAPPED", 5, SCOLS_FL_RIGHT, OUT_SIZE, "present bytes of the file mapped by the process" },
	[COL_MAPONLY] = { "MAPONLY", 5, SCOLS_FL_RIGHT, OUT_SIZE, "of those, mapped by no other process" },
	[COL_PROCS] = { "PROCS", 3, SCOLS_FL_RIGHT, OUT_NUM, "processes examined that map the file or hold it open" },
	[COL_SHARED] = { "SHARED", 3, SCOLS_FL_RIGHT, OUT_NUM, "other processes examined that map it or hold it open" },
	[COL_FILES] = { "FILES", 3, SCOLS_FL_RIGHT, OUT_NUM, "files the process maps or holds open" },
	[COL_VIA] = { "VIA", 4, 0, OUT_STR, "map (mapped), fd (held open), arg (named)" },
	[COL_METHOD] = { "METHOD", 5, 0, OUT_STR, "cachestat, mincore (cached only) or unknown" },
	[COL_DEV] = { "DEV", 5, 0, OUT_STR, "device major:minor" },
	[COL_INODE] = { "INODE", 5, SCOLS_FL_RIGHT, OUT_NUM, "inode" },
	[COL_MEMCG] = { "MEMCG", 0.1, 0, OUT_STR, "the process's memory cgroup (root: kpagecgroup)" },
	[COL_OWNCG] = { "OWNCG", 5, SCOLS_FL_RIGHT, OUT_SIZE, "of MAPPED, bytes charged to the process's memory cgroup" },
	[COL_OTHERCG] = { "OTHERCG", 5, SCOLS_FL_RIGHT, OUT_SIZE, "of MAPPED, bytes charged to another memory cgroup" },
	[COL_PAYER] = { "PAYER", 0.1, 0, OUT_STR, "the other memory cgroup charged for most of OTHERCG" },
	[COL_PATH] = { "PATH", 0.3, SCOLS_FL_NOEXTREMES, OUT_STR, "file name (first seen)" },
};
#define NCOLS (sizeof(columns) / sizeof(columns[0]))

enum view { VIEW_FILES, VIEW_PAIRS, VIEW_PROCS };

struct cache_opts {
	struct out_opts o;
	enum view view;
	bool view_set, all;
	size_t top;			/* 0: every row */
	pid_t *pids;
	size_t npids;
};

struct proc_row {
	pid_t pid;
	char comm[64];
	size_t files;
	uint64_t cached, mapped, maponly;
	bool maponly_known;
};

struct cache_run {
	struct pm_cache *c;
	struct proc_row *procs;
	size_t nprocs;
	size_t skipped;			/* --all: processes not readable */
	int skip_err;
	int bad_args;
};

static const char *via_str(unsigned via, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s%s%s%s", via & PM_CACHE_VIA_MAP ? "map" : "",
		 (via & PM_CACHE_VIA_MAP) && (via & ~PM_CACHE_VIA_MAP) ? "," : "", via & PM_CACHE_VIA_FD ? "fd" : "",
		 (via & PM_CACHE_VIA_ARG) && (via & (PM_CACHE_VIA_MAP | PM_CACHE_VIA_FD)) ? "," : "",
		 via & PM_CACHE_VIA_ARG ? "arg" : "");
	return buf;
}

/* A count the method could not measure prints "-" (null), never 0. */
static void count_cell(struct out *out, struct libscols_line *ln, size_t col, const struct pm_cache_stat *s,
		       uint32_t bit, uint64_t v)
{
	if (!s->error && (s->known & bit))
		out_u64(out, ln, col, v);
	else
		out_unknown(out, ln, col);
}

static void file_cells(struct out *out, struct libscols_line *ln, const struct pm_cache_file *f)
{
	const struct pm_cache_stat *s = &f->stat;
	char buf[4200];

	count_cell(out, ln, COL_CACHED, s, PM_CACHE_CACHED, s->cached);
	count_cell(out, ln, COL_DIRTY, s, PM_CACHE_DIRTY, s->dirty);
	count_cell(out, ln, COL_WRITEBACK, s, PM_CACHE_WRITEBACK, s->writeback);
	count_cell(out, ln, COL_EVICTED, s, PM_CACHE_EVICTED, s->evicted);
	count_cell(out, ln, COL_RECENT, s, PM_CACHE_RECENT, s->recently_evicted);
	out_u64(out, ln, COL_SIZE, s->size);
	out_str(out, ln, COL_METHOD, pm_cache_method_name(s->error ? PM_CACHE_UNKNOWN : s->method));
	snprintf(buf, sizeof(buf), "%u:%u", major((dev_t)s->dev), minor((dev_t)s->dev));
	out_str(out, ln, COL_DEV, buf);
	out_u64(out, ln, COL_INODE, s->ino);
	out_str(out, ln, COL_VIA, via_str(f->via, buf, sizeof(buf)));
	snprintf(buf, sizeof(buf), "%s%s", f->path, f->deleted ? " (deleted)" : "");
	out_str(out, ln, COL_PATH, buf);
}

static uint64_t file_cached(const struct pm_cache_file *f)
{
	return f->stat.error || !(f->stat.known & PM_CACHE_CACHED) ? 0 : f->stat.cached;
}

static const struct pm_cache *sort_set;

static int by_cached_desc(const void *a, const void *b)
{
	uint64_t x = file_cached(pm_cache_file_at(sort_set, *(const size_t *)a));
	uint64_t y = file_cached(pm_cache_file_at(sort_set, *(const size_t *)b));

	return x < y ? 1 : x > y ? -1 : 0;
}

/* Files in argument order, or by cached bytes with --top and --all. */
static size_t *file_order(const struct pm_cache *c, const struct cache_opts *co)
{
	size_t n = pm_cache_nfiles(c), i, *idx = malloc((n + 1) * sizeof(*idx));

	if (!idx)
		return NULL;
	for (i = 0; i < n; i++)
		idx[i] = i;
	if (co->top || co->all) {
		sort_set = c;
		qsort(idx, n, sizeof(*idx), by_cached_desc);
	}
	return idx;
}

/* A summary row: "[N other files]", "[unattributed]", "[meminfo Cached]". */
static void summary_row(struct out *out, const char *label, uint64_t bytes)
{
	struct libscols_line *ln = out_line(out);

	out_u64(out, ln, COL_CACHED, bytes);
	out_str(out, ln, COL_PATH, label);
}

/*
 * The system view's remainder: meminfo Cached minus every file found (not
 * only the top N), printed even when it is large: that is the point.
 */
static int unattributed_rows(struct pm_ctx *ctx, struct out *out, uint64_t found)
{
	uint64_t cached;
	int r = pm_cache_meminfo(ctx, &cached);

	if (r < 0) {
		cli_error(-r, "cannot read meminfo Cached");
		return EXIT_RUNTIME;
	}
	summary_row(out, "[unattributed]", cached > found ? cached - found : 0);
	summary_row(out, "[meminfo Cached]", cached);
	if (found > cached)
		cli_error(0, "note: the files found hold %llu bytes more than meminfo Cached (the cache changed during the scan)",
			  (unsigned long long)(found - cached));
	return EXIT_OK;
}

static int files_view(struct pm_ctx *ctx, const struct cache_opts *co, struct cache_run *cr, struct out *out)
{
	size_t n = pm_cache_nfiles(cr->c), i, shown = co->top && co->top < n ? co->top : n, *idx;
	uint64_t found = 0, rest = 0;
	char label[64];

	idx = file_order(cr->c, co);
	if (!idx) {
		cli_error(ENOMEM, "cannot sort files");
		return EXIT_RUNTIME;
	}
	for (i = 0; i < n; i++) {
		const struct pm_cache_file *f = pm_cache_file_at(cr->c, idx[i]);
		found += file_cached(f);
		if (i >= shown) {
			rest += file_cached(f);
			continue;
		}
		struct libscols_line *ln = out_line(out);
		file_cells(out, ln, f);
		out_u64(out, ln, COL_PROCS, f->nprocs);
		out_u64(out, ln, COL_SHARED, f->nprocs ? f->nprocs - 1 : 0);
	}
	free(idx);
	if (shown < n) {
		snprintf(label, sizeof(label), "[%zu other files]", n - shown);
		summary_row(out, label, rest);
	}
	return co->all ? unattributed_rows(ctx, out, found) : EXIT_OK;
}

static struct proc_row *proc_of(struct cache_run *cr, pid_t pid, size_t *hint)
{
	for (; *hint < cr->nprocs; (*hint)++)
		if (cr->procs[*hint].pid == pid)
			return &cr->procs[*hint];
	return NULL;
}

/* Per process: its files' cached bytes (each file once) and its mapped bytes; uses come grouped by process. */
static void sum_procs(struct cache_run *cr)
{
	size_t i, hint = 0;

	for (i = 0; i < pm_cache_nuses(cr->c); i++) {
		const struct pm_cache_use *u = pm_cache_use_at(cr->c, i);
		struct proc_row *p = proc_of(cr, u->pid, &hint);
		if (!p)
			continue;
		p->files++;
		p->cached += file_cached(pm_cache_file_at(cr->c, u->file));
		p->mapped += u->mapped;
		p->maponly += u->mapped_only;
		p->maponly_known = (p->files == 1 || p->maponly_known) && u->mapped_only_known;
	}
}

/* A memory cgroup's path from its inode; "-" where unknown. */
static void cgroup_cell(struct out *out, struct libscols_line *ln, size_t col, const struct cache_run *cr, uint64_t ino)
{
	char path[4096];

	if (ino && pm_cache_cgroup_path(cr->c, ino, path, sizeof(path)) == 0)
		out_str(out, ln, col, path);
	else if (ino)
		snprintf(path, sizeof(path), "inode %llu", (unsigned long long)ino), out_str(out, ln, col, path);
	else
		out_unknown(out, ln, col);
}

/* Who pays for the mapped pages: the process's own memory cgroup or another (kpagecgroup, root). */
static void payer_cells(struct out *out, struct libscols_line *ln, const struct cache_run *cr,
			const struct pm_cache_use *u)
{
	if (!u->charged_known) {
		out_unknown(out, ln, COL_MEMCG);
		out_unknown(out, ln, COL_OWNCG);
		out_unknown(out, ln, COL_OTHERCG);
		out_unknown(out, ln, COL_PAYER);
		return;
	}
	if (out_has(out, COL_MEMCG))
		cgroup_cell(out, ln, COL_MEMCG, cr, u->memcg);
	out_u64(out, ln, COL_OWNCG, u->charged_own);
	out_u64(out, ln, COL_OTHERCG, u->charged_other);
	if (out_has(out, COL_PAYER))
		cgroup_cell(out, ln, COL_PAYER, cr, u->other_memcg);
}

static void pair_row(struct out *out, const struct cache_run *cr, const struct proc_row *p,
		     const struct pm_cache_use *u)
{
	const struct pm_cache_file *f = pm_cache_file_at(cr->c, u->file);
	struct libscols_line *ln = out_line(out);
	char buf[32];

	out_u64(out, ln, COL_PID, (uint64_t)u->pid);
	out_str(out, ln, COL_COMMAND, p ? p->comm : "");
	file_cells(out, ln, f);
	out_str(out, ln, COL_VIA, via_str(u->via, buf, sizeof(buf)));
	out_u64(out, ln, COL_MAPPED, u->mapped);
	if (u->mapped_only_known)
		out_u64(out, ln, COL_MAPONLY, u->mapped_only);
	else
		out_unknown(out, ln, COL_MAPONLY);
	out_u64(out, ln, COL_PROCS, f->nprocs);
	out_u64(out, ln, COL_SHARED, f->nprocs ? f->nprocs - 1 : 0);
	payer_cells(out, ln, cr, u);
}

static const struct pm_cache *sort_uses_set;

/* Pairs by their process's mapped bytes of the file, then the file's cached bytes. */
static int by_use_mapped(const void *a, const void *b)
{
	const struct pm_cache_use *x = pm_cache_use_at(sort_uses_set, *(const size_t *)a);
	const struct pm_cache_use *y = pm_cache_use_at(sort_uses_set, *(const size_t *)b);
	uint64_t cx = file_cached(pm_cache_file_at(sort_uses_set, x->file));
	uint64_t cy = file_cached(pm_cache_file_at(sort_uses_set, y->file));

	if (x->mapped != y->mapped)
		return x->mapped < y->mapped ? 1 : -1;
	return cx < cy ? 1 : cx > cy ? -1 : 0;
}

static int pairs_view(const struct cache_opts *co, struct cache_run *cr, struct out *out)
{
	size_t i, hint, n = pm_cache_nuses(cr->c), *idx = malloc((n + 1) * sizeof(*idx));

	if (!idx) {
		cli_error(ENOMEM, "cannot sort pairs");
		return EXIT_RUNTIME;
	}
	for (i = 0; i < n; i++)
		idx[i] = i;
	if (co->top) {
		sort_uses_set = cr->c;
		qsort(idx, n, sizeof(*idx), by_use_mapped);
		n = co->top < n ? co->top : n;
	}
	for (i = 0; i < n; i++) {
		const struct pm_cache_use *u = pm_cache_use_at(cr->c, idx[i]);
		hint = 0;
		pair_row(out, cr, proc_of(cr, u->pid, &hint), u);
	}
	free(idx);
	return EXIT_OK;
}

static int by_proc_cached(const void *a, const void *b)
{
	const struct proc_row *x = a, *y = b;

	return x->cached < y->cached ? 1 : x->cached > y->cached ? -1 : 0;
}

static int procs_view(const struct cache_opts *co, struct cache_run *cr, struct out *out)
{
	size_t i, n = cr->nprocs;

	if (co->top) {
		qsort(cr->procs, n, sizeof(*cr->procs), by_proc_cached);
		n = co->top < n ? co->top : n;
	}
	for (i = 0; i < n; i++) {
		const struct proc_row *p = &cr->procs[i];
		struct libscols_line *ln = out_line(out);
		out_u64(out, ln, COL_PID, (uint64_t)p->pid);
		out_str(out, ln, COL_COMMAND, p->comm);
		out_u64(out, ln, COL_FILES, p->files);
		out_u64(out, ln, COL_CACHED, p->cached);
		out_u64(out, ln, COL_MAPPED, p->mapped);
		if (p->maponly_known || !p->files)
			out_u64(out, ln, COL_MAPONLY, p->maponly);
		else
			out_unknown(out, ln, COL_MAPONLY);
	}
	return EXIT_OK;
}

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
static int add_arg(struct cache_run *cr, const char *path)
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
	int r;

	if (p->state != PM_PROC_RUNNING) {
		if (!co->all)
			cli_error(0, "process %d has no memory (%s)", (int)p->pid,
				  p->state == PM_PROC_KTHREAD ? "a kernel thread" : p->state == PM_PROC_ZOMBIE ? "a zombie" : "exited");
		return co->all ? 0 : -1;
	}
	r = pm_cache_add_process(cr->c, p->pid);
	if (r == -ENOMEM) {
		cli_error(ENOMEM, "cannot add process %d", (int)p->pid);
		return -2;
	}
	if (r < 0) {
		if (!co->all) {
			char arg[24];
			snprintf(arg, sizeof(arg), "%d", (int)p->pid);
			if (r == -ENOENT)
				cli_error(0, "no process %s", arg);
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
static int add_procs(struct pm_ctx *ctx, const struct cache_opts *co, struct cache_run *cr)
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
			cli_error(0, "no process %d", (int)co->pids[i]);
			fail = 1;
		}
	free(seen);
	if (cr->skipped)
		cli_error(0, "note: %zu processes not examined (last reason: %s)", cr->skipped, strerror(cr->skip_err));
	return r == -2 || r < -2 ? EXIT_RUNTIME : fail ? EXIT_RUNTIME : EXIT_OK;
}

/* Why files show "-": one stderr line per reason, with a hint for the known ones. */
static void note_unknown(const struct pm_cache *c)
{
	static const int reasons[] = { EPERM, ENOSYS, EOPNOTSUPP, EACCES, ENOENT };
	size_t i, j, n, other = 0;

	for (j = 0; j < (sizeof(reasons) / sizeof(reasons[0])); j++) {
		for (i = n = 0; i < pm_cache_nfiles(c); i++)
			n += pm_cache_file_at(c, i)->stat.error == -reasons[j];
		if (!n)
			continue;
		cli_error(reasons[j], "note: %zu file%s not measured", n, n == 1 ? "" : "s");
		if (reasons[j] == EPERM)
			cli_hint("cachestat(2) needs write permission on the file, its ownership or root since Linux 6.14 (and its stable backports); mincore(2) would claim every page resident, so nothing is shown");
		else if (reasons[j] == ENOSYS)
			cli_hint("this kernel has no cachestat(2) (Linux 6.5); mincore(2) is used only for files this user owns or may write");
		else if (reasons[j] == EOPNOTSUPP)
			cli_hint("hugetlbfs files have no page cache to report, and a replayed tree holds none");
	}
	for (i = 0; i < pm_cache_nfiles(c); i++) {
		int e = -pm_cache_file_at(c, i)->stat.error;
		for (j = 0; e && j < (sizeof(reasons) / sizeof(reasons[0])) && e != reasons[j]; j++)
			;
		other += e && j == (sizeof(reasons) / sizeof(reasons[0]));
	}
	if (other)
		cli_error(0, "note: %zu more files not measured (other errors)", other);
}

static int usage_help(void)
{
	printf("Usage: pagemap cache [options] FILE|DIR...\n"
	       "       pagemap cache [options] -p PID [-p PID]... | --all [--top N]\n\n"
	       "What is in the page cache, file by file (cachestat(2); nothing is read,\n"
	       "mapped or advised, so the cache is not perturbed), and which processes map\n"
	       "each file or hold it open through a descriptor. A directory is walked\n"
	       "(symbolic links not followed). Files are counted once per device and inode.\n"
	       "A dash (null in JSON) means the count could not be measured: stderr says why.\n"
	       "\nViews:\n"
	       "  (default)         one row per file; with -p, one row per (process, file)\n"
	       "      --files       one row per file (the default with --all)\n"
	       "      --pairs       one row per (process, file)\n"
	       "      --processes   one row per process: files, cached, mapped bytes\n"
	       "\nSelection:\n"
	       "  -p, --pid PID     the files of process PID (repeatable)\n"
	       "  -A, --all         every process; the file view ends with [unattributed]:\n"
	       "                    meminfo Cached minus every file found\n"
	       "  -t, --top N       the N rows with most cached bytes ([N other files] sums the rest)\n");
	out_help(stdout, columns, NCOLS);
	return EXIT_OK;
}

enum { OPT_FILES = 0x2000, OPT_PAIRS, OPT_PROCS };

static int parse_opts(struct cache_opts *co, int argc, char **argv)
{
	static const struct option longopts[] = {
		OUT_LONGOPTS,
		{ "pid", required_argument, NULL, 'p' },
		{ "all", no_argument, NULL, 'A' },
		{ "top", required_argument, NULL, 't' },
		{ "files", no_argument, NULL, OPT_FILES },
		{ "pairs", no_argument, NULL, OPT_PAIRS },
		{ "processes", no_argument, NULL, OPT_PROCS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	pid_t *np;
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, OUT_SHORTOPTS "p:At:h", longopts, NULL)) != -1) {
		if (out_parse_opt(&co->o, c, optarg))
			continue;
		switch (c) {
		case 'p':
			np = realloc(co->pids, (co->npids + 1) * sizeof(*np));
			if (!np)
				return cli_usage_error("out of memory");
			co->pids = np;
			if (cli_parse_pid(optarg, &co->pids[co->npids]) < 0)
				return cli_usage_error("invalid PID '%s'", optarg);
			if (co->pids[co->npids] == 0)	/* "self": found in ROOT/proc by number */
				co->pids[co->npids] = getpid();
			co->npids++;
			break;
		case 'A':
			co->all = true;
			break;
		case 't':
			errno = 0;
			co->top = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || !co->top || optarg[0] == '-')
				return cli_usage_error("invalid --top '%s' (a count of rows, at least 1)", optarg);
			break;
		case OPT_FILES:
		case OPT_PAIRS:
		case OPT_PROCS:
			co->view = c == OPT_FILES ? VIEW_FILES : c == OPT_PAIRS ? VIEW_PAIRS : VIEW_PROCS;
			co->view_set = true;
			break;
		case 'h':
			return usage_help() == EXIT_OK ? -1 : EXIT_USAGE;
		default:
			return cli_bad_option(argv);
		}
	}
	if (co->all && co->npids)
		return cli_usage_error("--all and --pid exclude each other");
	if (optind == argc && !co->all && !co->npids)
		return cli_usage_error("no file, --pid or --all given");
	if (optind < argc && (co->all || co->npids))
		return cli_usage_error("files and --pid/--all exclude each other");
	if (!co->view_set)
		co->view = co->npids ? VIEW_PAIRS : VIEW_FILES;
	if (co->view != VIEW_FILES && !co->all && !co->npids)
		return cli_usage_error("--pairs and --processes need --pid or --all");
	return EXIT_OK;
}

static const char *default_cols(const struct cache_opts *co)
{
	if (co->view == VIEW_PROCS)
		return "PID,COMMAND,FILES,CACHED,MAPPED,MAPONLY";
	if (co->view == VIEW_PAIRS)
		return "PID,COMMAND,CACHED,MAPPED,MAPONLY,SHARED,VIA,PATH";
	if (co->all || co->npids)
		return "CACHED,DIRTY,WRITEBACK,EVICTED,RECENT,SIZE,PROCS,VIA,PATH";
	return "CACHED,DIRTY,WRITEBACK,EVICTED,RECENT,SIZE,PATH";
}

static int collect(struct pm_ctx *ctx, const struct cache_opts *co, struct cache_run *cr, int argc, char **argv)
{
	int i;

	if (co->all || co->npids) {
		int code = add_procs(ctx, co, cr);
		sum_procs(cr);
		return code;
	}
	for (i = optind; i < argc; i++)
		if (add_arg(cr, argv[i]) < 0)
			return EXIT_RUNTIME;
	return cr->bad_args ? EXIT_RUNTIME : EXIT_OK;
}

int cmd_cache(struct pm_ctx *ctx, int argc, char **argv)
{
	struct cache_opts co = { 0 };
	struct cache_run cr = { 0 };
	struct out *out = NULL;
	struct pm_kpage *kp = NULL;
	int code = parse_opts(&co, argc, argv), shown;

	if (code != EXIT_OK)
		goto out;
	out = out_new("cache", columns, NCOLS, default_cols(&co), &co.o);
	cr.c = pm_cache_new(ctx);
	if (!out || !cr.c) {
		code = out ? EXIT_RUNTIME : EXIT_USAGE;
		goto out;
	}
	if (out_has(out, COL_MEMCG) || out_has(out, COL_OWNCG) || out_has(out, COL_OTHERCG) || out_has(out, COL_PAYER)) {
		kp = pm_kpage_open(ctx);
		if (!kp || pm_cache_set_kpage(cr.c, kp) < 0) {
			cli_error(kp ? EACCES : errno, "note: cannot read /proc/kpagecgroup: who pays is shown as \"-\"");
			cli_hint("run as root");
		}
	}
	code = collect(ctx, &co, &cr, argc, argv);
	if (code != EXIT_OK && !pm_cache_nfiles(cr.c) && !cr.nprocs)
		goto out;
	note_unknown(cr.c);
	shown = co.view == VIEW_FILES ? files_view(ctx, &co, &cr, out) :
		co.view == VIEW_PAIRS ? pairs_view(&co, &cr, out) : procs_view(&co, &cr, out);
	if (shown != EXIT_OK)
		code = shown;
	if (out_print(out) < 0)
		code = EXIT_RUNTIME;
out:
	if (code == -1)
		code = EXIT_OK;	/* --help */
	pm_cache_free(cr.c);
	pm_kpage_close(kp);
	free(cr.procs);
	free(co.pids);
	out_free(out);
	return code;
}
