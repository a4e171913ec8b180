/*
 * snap_users.c - the names of the users whose processes a snapshot holds, kept in its META line
 * "users" (uid=name,...), so that a replay shows USER as the capture knew it: the replaying
 * machine's passwd may name those UIDs differently, or not at all.
 */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "snap_users.h"

void snap_users_note(struct snap_users *u, uid_t uid)
{
	size_t i;

	for (i = 0; i < u->n && u->uid[i] != uid; i++)
		;
	if (i == u->n && u->n < SNAP_USERS_MAX)
		u->uid[u->n++] = uid;
}

/*
 * Each process of @list (comma-separated PIDs, 0 or "self" this one) read
 * alone: a walk of every process of the machine (two files each) cost a
 * snapshot of one small process more than its own pages.
 */
void snap_users_note_pids(struct snap_users *u, struct pm_ctx *ctx, const char *list)
{
	pid_t *v = NULL;
	size_t n = 0, i;
	uid_t uid;

	if (!cli_parse_pid_list(list, true, &v, &n))
		for (i = 0; i < n; i++)
			if (pm_proc_uid(ctx, v[i] ? v[i] : getpid(), &uid) == 0)
				snap_users_note(u, uid);
	free(v);
}

/* META users=UID=NAME,...: only UIDs this machine's passwd names; nothing when none. */
int snap_users_meta(struct pm_snapshot_writer *w, const struct snap_users *u)
{
	char line[4096];
	struct passwd *pw;
	size_t i, off = 0;
	int n;

	line[0] = '\0';
	for (i = 0; i < u->n; i++) {
		if (!(pw = getpwuid(u->uid[i])) || strpbrk(pw->pw_name, ",=\n"))
			continue;
		n = snprintf(line + off, sizeof(line) - off, "%s%u=%s", off ? "," : "", (unsigned)u->uid[i],
			     pw->pw_name);
		if (n < 0 || (size_t)n >= sizeof(line) - off)
			break;	/* past 4 KiB: the first ones, the others shown as numbers */
		off += (size_t)n;
	}
	return off ? pm_snapshot_add_meta(w, "users", line) : 0;
}
