/* hold_mark.h - the mark --freeze puts on a cgroup it froze: who holds it, so that a freeze left behind is known. */
#ifndef PM_HOLD_MARK_H
#define PM_HOLD_MARK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * Mark cgroup directory @dirfd as frozen by us, its holder @guardian (the
 * process that thaws it if pagemap dies): an extended attribute
 * trusted.pagemap.frozen_by (user.pagemap.frozen_by when trusted.* is
 * refused, by a user other than root on a directory they own),
 * "PID STARTTIME". Best effort: a cgroup that takes no attribute is
 * frozen all the same, unmarked.
 */
void mark_put(int dirfd, pid_t guardian);
/* Remove the mark (async-signal-safe): after the thaw. */
void mark_drop(int dirfd);
/*
 * Does @dirfd carry a mark whose holder is gone (a freeze left by a
 * pagemap and its guardian that both died)? Then true, with "PID" of the
 * holder in @who. Only a mark mark_put() would write is believed: as
 * root trusted.*, else user.* on a directory of the caller's own (anyone
 * who may write the directory may write user.*).
 */
bool mark_left_behind(int dirfd, char *who, size_t size);

#endif
