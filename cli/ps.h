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

/* ps_group_parse - a --group-by value: user, comm or cgroup (export's keys). 0 or -EINVAL. */
int ps_group_parse(const char *arg, enum fleet_by *by);

/* ps_group_help - the --group-by view's columns, for --help. */
void ps_group_help(void);

/* ps_group_sort_known - whether -s @sort names a column of the groups' table. */
bool ps_group_sort_known(const char *sort);

/* ps_group_out - the groups' table (JSON key "groups") with @oo's columns; NULL after a message. */
struct out *ps_group_out(enum fleet_by by, const struct out_opts *oo);

/*
 * ps_group_fill - the processes' @rows summed into one line of @out per group
 * (the library's pm_groups, keyed by each row's group), sorted by the column
 * named @sort (NULL: PSS), and the total line. 0 or -ENOMEM.
 */
int ps_group_fill(struct out *out, const struct ps_row *rows, size_t n, enum fleet_by by, const char *sort);

#endif
