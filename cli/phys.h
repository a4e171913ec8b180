/* phys.h - `pagemap phys`'s pieces, shared by cmd_phys.c (options, whole physical memory,
 * --describe), phys_hist.c (the histogram of flag words and the cells every table shares) and
 * phys_proc.c (-p PID). */
#ifndef PAGEMAP_CLI_PHYS_H
#define PAGEMAP_CLI_PHYS_H

#include <stdbool.h>
#include <stdint.h>
#include <pagemap.h>
#include "output.h"

#define PHYS_BATCH 65536	/* frames per kpageflags read, pages per process lookup */

/* Summary and --describe: one row per flag combination. */
enum { S_FLAGS, S_PAGES, S_SIZE, S_SYMBOLIC, S_NAMES, S_NCOLS };
extern const struct out_col phys_sum_cols[S_NCOLS];
/* A terminal: the frames' size and flags, letters and names, without the flags word (a row fits 80 columns). */
#define PHYS_SUM_DEFAULTS "FLAGS,PAGES,SIZE,SYMBOLIC,NAMES"
#define PHYS_SUM_TERM_DEFAULTS "PAGES,SIZE,SYMBOLIC,NAMES"

/* -p PID: a process's pages joined with their frames. */
enum {
	P_START, P_END, P_PAGES, P_PFN, P_FLAGS, P_KPF, P_NAMES, P_COUNT, P_CGROUP, P_PATH, P_NCOLS
};
extern const struct out_col phys_proc_cols[P_NCOLS];
/* A terminal: the run's start and length, frame, flags and map count, the path truncated (80 columns). */
#define PHYS_PROC_DEFAULTS "START,END,PAGES,PFN,FLAGS,COUNT,CGROUP,PATH"
#define PHYS_PROC_TERM_DEFAULTS "START,PAGES,PFN,FLAGS,COUNT,PATH"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

struct phys_opts {
	struct pm_kpf_filter filter;
	struct out_opts o;
	bool raw, list, summary;
	const char *pid, *range, *describe;
	uint64_t page_size;
};

/* A histogram of flag words: open addressing, grows without limit (phys_hist.c). */
struct hslot {
	uint64_t flags, pages;	/* pages == 0: empty */
};

struct hist {
	struct hslot *slot;
	size_t cap, used;
};

/* phys_hist.c */
/* Count @pages more frames with flags word @flags. 0 or -ENOMEM. */
int phys_hist_add(struct hist *h, uint64_t flags, uint64_t pages);
/* The rows of @h in flag order, then a total in the table view: an exit code. */
int phys_print_hist(struct hist *h, const struct phys_opts *po, const char *name);
/* "0x" and 16 hex digits. */
void phys_hex16(char *buf, size_t size, uint64_t v);
/* The flags' letters into column @sym and names into column @names, each only when shown. */
void phys_name_cells(struct out *out, struct libscols_line *ln, size_t sym, size_t names,
		     uint64_t flags, bool raw);
/* One row of the summary table. */
void phys_sum_row(struct out *out, const struct hslot *s, const struct phys_opts *po);

/* cmd_phys.c: /proc/kpageflags opened, or NULL with the error said. */
struct pm_kpage *phys_open_kpage(struct pm_ctx *ctx);
/* phys_proc.c: -p PID, a process's pages joined with their frames: an exit code. */
int phys_proc(struct pm_ctx *ctx, struct phys_opts *po);

#endif
