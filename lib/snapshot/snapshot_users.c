/*
 * snapshot_users.c - the names the writing machine gives the users whose
 * processes a snapshot holds, written as META users=UID=NAME,...
 * (pagemap-snapshot(5)) so that a replay shows USER as the capture knew
 * it: the replaying machine's passwd may name those UIDs differently, or
 * not at all. Each process's real UID comes from the status it records;
 * its name is looked up by the thread that reads the process's files
 * (snapshot_ahead.c), once per UID.
 */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base.h"
#include "snapshot.h"

int pmi_snap_user_name(uid_t uid, char *name, size_t size)
{
	struct passwd pw, *res = NULL;
	size_t len = 4096;
	char *buf = NULL, *nb;
	int r;

	do {	/* an entry longer than the buffer (a long GECOS): ERANGE, try a larger one, up to 1 MiB */
		if (!(nb = realloc(buf, len))) {
			r = ENOMEM;
			break;
		}
		buf = nb;
		r = getpwuid_r(uid, &pw, buf, len, &res);
		len *= 2;
	} while (r == ERANGE && len <= (1u << 20));
	if (!r && (!res || strlen(res->pw_name) >= size))
		r = ENOENT;
	if (!r)
		strcpy(name, res->pw_name);
	free(buf);
	return -r;
}

bool pmi_snap_users_known(const struct snap_users *u, uid_t uid)
{
	size_t i;

	for (i = 0; i < u->n; i++)
		if (u->uid[i] == uid)
			return true;
	return false;
}

int pmi_snap_users_note(struct snap_users *u, uid_t uid, const char *name)
{
	if (pmi_snap_users_known(u, uid) || u->n == SNAP_USERS_MAX)
		return 0;	/* past SNAP_USERS_MAX users the others are left out: shown as numbers */
	if (!(u->name[u->n] = name ? strdup(name) : NULL) && name)
		return -ENOMEM;
	u->uid[u->n++] = uid;
	return 0;
}

int pmi_snap_users_put(struct pm_snapshot_writer *w, const struct snap_users *u)
{
	char line[SNAP_USERS_LINE];
	size_t i, off = 0;
	int n, r;

	line[0] = '\0';
	for (i = 0; i < u->n; i++) {
		if (!u->name[i] || strpbrk(u->name[i], ",=\n"))
			continue;	/* no name here, or one the line could not hold */
		n = snprintf(line + off, sizeof(line) - off, "%s%u=%s", off ? "," : "", (unsigned)u->uid[i], u->name[i]);
		if (n < 0 || (size_t)n >= sizeof(line) - off)
			break;	/* past the line: the first ones, the others shown as numbers */
		off += (size_t)n;
	}
	line[off] = '\0';
	r = off ? pm_snapshot_add_meta(w, "users", line) : 0;
	return r == -E2BIG ? 0 : r;	/* no room left in META (its 64 KiB): names are worth no snapshot */
}

void pmi_snap_users_free(struct snap_users *u)
{
	size_t i;

	for (i = 0; i < u->n; i++) {
		free(u->name[i]);
		u->name[i] = NULL;
	}
	u->n = 0;
}
