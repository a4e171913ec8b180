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

/* The real UID of @pid from ROOT/proc/PID/status (the Uid: line's first field): 0, or -1 when unknown. */
static int status_uid(struct pm_ctx *ctx, pid_t pid, uid_t *uid)
{
	const char *root = pm_ctx_root(ctx);
	char path[4096], text[4096], *a, *e;
	unsigned long v;

	snprintf(path, sizeof(path), "%s/proc/%d/status", strcmp(root, "/") ? root : "", (int)pid);
	if (cli_read_small(path, text, sizeof(text)) <= 0 || !(a = strstr(text, "\nUid:")))
		return -1;
	v = strtoul(a + 5, &e, 10);
	if (e == a + 5)
		return -1;
	*uid = (uid_t)v;
	return 0;
}

/*
 * Each process of @list (comma-separated PIDs, 0 or "self" this one) read
 * alone: a walk of every process of the machine (two files each) cost a
 * snapshot of one small process more than its own pages.
 */
void snap_users_note_pids(struct snap_users *u, struct pm_ctx *ctx, const char *list)
{
	char tok[16];
	size_t len;
	pid_t pid;
	uid_t uid;

	for (; *list; list += len + (list[len] == ',')) {
		len = strcspn(list, ",");
		snprintf(tok, sizeof(tok), "%.*s", (int)(len < sizeof(tok) ? len : sizeof(tok) - 1), list);
		if (cli_parse_pid(tok, &pid) == 0 && status_uid(ctx, pid ? pid : getpid(), &uid) == 0)
			snap_users_note(u, uid);
	}
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
