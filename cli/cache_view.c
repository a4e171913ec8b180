/* cache_view.c - `pagemap cache`'s three views: files (the default), process-file pairs (--pairs)
 * and processes (--processes), their cells and order, and the summary rows under them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include "cli.h"
#include "output.h"
#include "cache.h"

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

/*
 * A summary row: "[N other files]", "[unattributed]", or the total "[meminfo Cached]" (@total:
 * not with -n or -r unless --total, as every command's total row; JSON keeps it).
 */
static void summary_row(struct out *out, const char *label, uint64_t bytes, bool total)
{
	struct libscols_line *ln = total ? out_total_row(out) : out_line(out);

	if (!ln)
		return;
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
	summary_row(out, "[unattributed]", cached > found ? cached - found : 0, false);
	summary_row(out, "[meminfo Cached]", cached, true);
	if (found > cached)
		cli_error(0, "note: the files found hold %llu bytes more than meminfo Cached (the cache changed during the scan)",
			  (unsigned long long)(found - cached));
	return EXIT_OK;
}

/*
 * The files' total, as vmtouch's: a table line (none with -n or -r unless --total, none in JSON,
 * whose rows are what it sums, as maps' and ps's). Files not measured (an error) add their size
 * only and the label counts them; a count a measured file's method cannot give (mincore: cached
 * only) leaves its total unknown, never short.
 */
static void files_total(struct out *out, const struct pm_cache *c)
{
	static const struct { size_t col; uint32_t bit; } counts[] = {
		{ COL_CACHED, PM_CACHE_CACHED }, { COL_DIRTY, PM_CACHE_DIRTY }, { COL_WRITEBACK, PM_CACHE_WRITEBACK },
		{ COL_EVICTED, PM_CACHE_EVICTED }, { COL_RECENT, PM_CACHE_RECENT },
	};
	struct libscols_line *ln = out_total_line(out);
	size_t n = pm_cache_nfiles(c), i, k, unmeasured = 0;
	uint64_t sum[5] = { 0 }, size = 0;
	uint32_t known = ~0u;
	char label[96];

	if (!ln)
		return;
	for (i = 0; i < n; i++) {
		const struct pm_cache_stat *s = &pm_cache_file_at(c, i)->stat;
		const uint64_t v[5] = { s->cached, s->dirty, s->writeback, s->evicted, s->recently_evicted };

		size += s->size;
		if (s->error) {
			unmeasured++;
			continue;
		}
		known &= s->known;
		for (k = 0; k < 5; k++)
			sum[k] += v[k];
	}
	for (k = 0; k < 5; k++)
		if (unmeasured < n && (known & counts[k].bit))
			out_u64(out, ln, counts[k].col, sum[k]);
		else
			out_unknown(out, ln, counts[k].col);
	out_u64(out, ln, COL_SIZE, size);
	if (unmeasured)
		snprintf(label, sizeof(label), "[total: %zu file%s, %zu not measured]", n, n == 1 ? "" : "s", unmeasured);
	else
		snprintf(label, sizeof(label), "[total: %zu file%s]", n, n == 1 ? "" : "s");
	out_str(out, ln, COL_PATH, label);
}

int cache_files_view(struct pm_ctx *ctx, const struct cache_opts *co, struct cache_run *cr,
		     struct out *out)
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
		summary_row(out, label, rest, false);
	}
	if (co->all)	/* its total is the system's, meminfo Cached */
		return unattributed_rows(ctx, out, found);
	files_total(out, cr->c);
	return EXIT_OK;
}

static struct proc_row *proc_of(struct cache_run *cr, pid_t pid, size_t *hint)
{
	for (; *hint < cr->nprocs; (*hint)++)
		if (cr->procs[*hint].pid == pid)
			return &cr->procs[*hint];
	return NULL;
}

/* Per process: its files' cached bytes (each file once) and its mapped bytes; uses come grouped by process. */
void cache_sum_procs(struct cache_run *cr)
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

int cache_pairs_view(const struct cache_opts *co, struct cache_run *cr, struct out *out)
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

int cache_procs_view(const struct cache_opts *co, struct cache_run *cr, struct out *out)
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
