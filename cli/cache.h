/* cache.h - `pagemap cache`'s pieces, shared by cmd_cache.c (options, the run), cache_targets.c
 * (what is measured: files named, trees walked, processes' maps and descriptors) and cache_view.c
 * (the three views). */
#ifndef PAGEMAP_CLI_CACHE_H
#define PAGEMAP_CLI_CACHE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <pagemap.h>
#include "output.h"

enum {
	COL_PID, COL_COMMAND, COL_CACHED, COL_DIRTY, COL_WRITEBACK, COL_EVICTED, COL_RECENT, COL_SIZE, COL_MAPPED,
	COL_MAPONLY, COL_PROCS, COL_SHARED, COL_FILES, COL_VIA, COL_METHOD, COL_DEV, COL_INODE, COL_MEMCG, COL_OWNCG, COL_OTHERCG, COL_PAYER, COL_PATH
};

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

/* cache_targets.c */
/* A FILE argument, or every regular file under a directory argument (symbolic links not followed). */
int cache_add_arg(struct cache_run *cr, const char *path);
/* -p PID... and --all, through ROOT/proc, in directory order. */
int cache_add_procs(struct pm_ctx *ctx, const struct cache_opts *co, struct cache_run *cr);

/* cache_view.c: the rows of each view (EXIT_OK or an exit code), the per-process sums they read. */
int cache_files_view(struct pm_ctx *ctx, const struct cache_opts *co, struct cache_run *cr,
		     struct out *out);
int cache_pairs_view(const struct cache_opts *co, struct cache_run *cr, struct out *out);
int cache_procs_view(const struct cache_opts *co, struct cache_run *cr, struct out *out);
/* Per process: its files' cached bytes (each file once) and its mapped bytes; uses come grouped by process. */
void cache_sum_procs(struct cache_run *cr);

#endif
