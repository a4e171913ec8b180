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

/* Whether @pid is one of @list's (comma-separated PIDs or "self"). */
static bool listed(const char *list, pid_t pid)
{
	char tok[16];
	pid_t p;
	size_t len;

	for (; *list; list += len + (list[len] == ',')) {
		len = strcspn(list, ",");
		snprintf(tok, sizeof(tok), "%.*s", (int)(len < sizeof(tok) ? len : sizeof(tok) - 1), list);
		if (cli_parse_pid(tok, &p) == 0 && (p ? p : getpid()) == pid)
			return true;
	}
	return false;
}

void snap_users_note_pids(struct snap_users *u, struct pm_ctx *ctx, const char *list)
{
	struct pm_procs *it = pm_procs_open(ctx);
	const struct pm_proc *p;

	while (it && pm_procs_next(it, &p) == 0)
		if (p->uid_known && listed(list, p->pid))
			snap_users_note(u, p->uid);
	pm_procs_close(it);
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
