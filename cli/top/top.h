/*
 * top.h - `pagemap top`: the machine's processes live (cmd_top.c), as frames of rows (top_rows.c) printed
 * for scripts (top_batch.c) or drawn in a terminal with ncurses (top_screen.c, top_draw.c, curses_load.c).
 */
#ifndef PAGEMAP_CLI_TOP_H
#define PAGEMAP_CLI_TOP_H

#include <stdbool.h>
#include <signal.h>
#include <stddef.h>
#include <sys/types.h>
#include <pagemap.h>
#include "output.h"

/* The figures of a row, in the order of the columns that show them. */
enum top_fig { FIG_RSS, FIG_PSS, FIG_USS, FIG_SWAP, FIG_SHARED, FIG_HUGETLB, NFIGS };

/* What a row is keyed by. */
enum top_group { GROUP_NONE, GROUP_USER, GROUP_COMM, GROUP_CGROUP };

/* One row of a frame: a process, or a group of them. */
struct top_row {
	pid_t pid;			/* 0 for a group */
	size_t procs;			/* processes in it (1 for a process) */
	char key[256];			/* the group's key, or the process's command name */
	bool uid_known;
	uid_t uid;
	uint64_t fig[NFIGS];		/* bytes */
	double rate[NFIGS];		/* bytes per second since the frame before (0 for a new row) */
	double age;			/* seconds since its figures were read (a group: its oldest); -1 never */
	size_t hidden;			/* its processes whose figures this reader may not read */
	int err;			/* a process whose figures this reader may not see: -EACCES; else 0 */
};

struct top_opts {
	double delay;			/* -d: seconds between frames */
	double max_age;			/* --max-age: the bound on a row's age */
	unsigned long count;		/* -n: frames, 0 = until stopped */
	bool batch;			/* -b, or -J */
	struct out_opts o;		/* -J and the common options of the batch table */
	enum fig_sort { SORT_FIG, SORT_PID, SORT_COMMAND } sort_by;
	enum top_fig sort;		/* SORT_FIG: by this figure, largest first */
	enum top_group group;
	pid_t *pids;			/* -p: only these */
	size_t npids;
	bool by_user;			/* -u */
	uid_t user;
	const char *cgroup;		/* --cgroup: this memory cgroup and below */
	const char *filter;		/* the text search of the interactive view: a command name holding it */
};

/* A frame: the rows to show and what the table read to make them. */
struct top_frame {
	struct top_row *rows;
	size_t n, cap;
	struct pm_live_stats live;	/* what the refresh read and kept */
	struct pm_live_memory mem, mem_prev;
	bool mem_known, mem_prev_known;
	double t;			/* seconds since the first frame */
	size_t kthreads, zombies;	/* rows left out: no memory of their own */
	size_t hidden;			/* processes of other users whose figures are not readable here */
};

struct top_cgroups;

/* The processes -p, -u and --cgroup ask for, judged by the live table before it reads a rollup. */
struct top_filter {
	struct pm_ctx *ctx;
	const struct top_opts *to;
};
bool top_live_filter(void *data, const struct pm_live_row *row);

/* top_rows.c */
extern const char *const top_fig_names[NFIGS];
int top_frame_fill(struct top_frame *f, struct pm_ctx *ctx, const struct pm_live *l, const struct top_opts *to,
		   struct top_cgroups *cg);
void top_frame_free(struct top_frame *f);
struct top_cgroups *top_cgroups_new(void);
void top_cgroups_free(struct top_cgroups *cg);
int top_parse_sort(const char *arg, struct top_opts *to);
int top_parse_group(const char *arg, enum top_group *g);

/* Monotonic seconds. */
double top_now(void);
/* top_rows.c: the next frame into @f (the live table refreshed, meminfo, the rows); 0 or -errno (no message). */
int top_refresh(struct pm_ctx *ctx, struct pm_live *l, struct top_frame *f, const struct top_opts *to,
		struct top_cgroups *cg, double t0);
/* The one line for top_refresh's @err (the terminal view says it after giving the terminal back). */
void top_refresh_error(struct pm_ctx *ctx, int err);

/* top_batch.c: a frame as top -b prints one (heading and table), or a JSON line with -J. */
void top_batch_help(unsigned flags);
struct out *top_batch_out(const struct top_opts *to);
int top_batch_frame(struct out *out, struct pm_ctx *ctx, const struct top_frame *f, unsigned long index,
		    const struct top_opts *to);
/* The header lines of a frame (batch and screen): @line(@data, text) per line. */
void top_header(struct pm_ctx *ctx, const struct top_frame *f, const struct top_opts *to,
		void (*line)(void *data, const char *text), void *data);

/* top_screen.c: the interactive view until q or *@stop (a signal's number); returns an exit code. */
int top_screen(struct pm_ctx *ctx, struct pm_live *l, struct top_opts *to, volatile sig_atomic_t *stop);

#endif
