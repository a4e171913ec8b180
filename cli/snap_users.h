/* snap_users.h - the users whose processes a snapshot holds, for its META line "users". */
#ifndef PM_SNAP_USERS_H
#define PM_SNAP_USERS_H

#include <pagemap.h>
#include <sys/types.h>

#define SNAP_USERS_MAX 256

struct snap_users {
	uid_t uid[SNAP_USERS_MAX];
	size_t n;
};

/* Note @uid (once; past SNAP_USERS_MAX users the others are left out, shown as numbers on replay). */
void snap_users_note(struct snap_users *u, uid_t uid);
/* Note the real UIDs of the processes of @list (comma-separated PIDs) as ROOT/proc says them. */
void snap_users_note_pids(struct snap_users *u, struct pm_ctx *ctx, const char *list);
/* Write META users=UID=NAME,... from this machine's passwd; 0 or -errno. */
int snap_users_meta(struct pm_snapshot_writer *w, const struct snap_users *u);

#endif
