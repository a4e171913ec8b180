/*
 * ps.h - `pagemap ps` in two files: the command, one row per process
 * (cmd_ps.c), and its --group-by view, one row per user, command or memory
 * cgroup with the rows of its processes summed (ps_group.c).
 */
#ifndef PAGEMAP_CLI_PS_H
#define PAGEMAP_CLI_PS_H

#include <stdbool.h>
#include <sys/types.h>
#include <pagemap.h>
#include "output.h"
#include "export_fleet.h"

/* One process accounted. */
struct ps_row {
	pid_t pid;
	bool uid_known;
	uid_t uid;
	char comm[64];
	char *cgroup;			/* NULL when not wanted or unknown */
	char *group;			/* its group's key with --group-by, else NULL */
	struct pm_account acct;
};

/* ps_group_parse - a --group-by value: user, comm, cgroup (export's keys) or mapping. 0 or -EINVAL. */
int ps_group_parse(const char *arg, enum fleet_by *by);

/* ps_group_help - the --group-by view's columns, for --help. */
void ps_group_help(void);

/* ps_group_sort_known - whether -s @sort names a column of the groups' table. */
bool ps_group_sort_known(const char *sort);

/* ps_group_out - the groups' table (JSON key "groups") with @oo's columns; NULL after a message. */
struct out *ps_group_out(enum fleet_by by, const struct out_opts *oo);

/* ps_group_rows - the processes' @rows into @g, each under its row's group. 0 or -ENOMEM. */
int ps_group_rows(struct pm_groups *g, const struct ps_row *rows, size_t n);

/*
 * ps_group_mappings - @t's mappings (the library's per-mapping accounts, from
 * smaps) into @g, one group per path, summed over its mappings of that path
 * and counted as one process; nothing is added on an error. 0 or -errno.
 */
int ps_group_mappings(struct pm_groups *g, struct pm_target *t);

/*
 * ps_group_fill - a line of @out per group of @g, sorted by column @sort (NULL: PSS), and the total line
 * (@procs: the processes accounted). 0 or -ENOMEM.
 */
int ps_group_fill(struct out *out, const struct pm_groups *g, enum fleet_by by, const char *sort, size_t procs);

#endif
