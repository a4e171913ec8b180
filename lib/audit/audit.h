/* audit.h - private to lib/audit*.c: the findings store and the pure parsers unit tests call. */
#ifndef PMI_AUDIT_H
#define PMI_AUDIT_H

#include <stddef.h>
#include <stdint.h>
#include "pages.h"

#define PMI_VERDICTS (PM_VERDICT_CONTEXT + 1)

struct pm_audit {
	struct pm_ctx *ctx;
	char **paths;			/* pm_audit_add_path, in order */
	size_t npaths;
	struct pm_finding *f;		/* strings owned (strdup) */
	size_t n, cap, next;
	unsigned counts[PMI_VERDICTS];	/* by verdict */
	bool ran;
	int err;			/* the first ENOMEM while adding (negative) */
};

/* Add a finding (strings copied; @fix may be NULL). Returns the finding or NULL (a->err set). */
struct pm_finding *pmi_audit_add(struct pm_audit *a, const char *name, const char *subject, enum pm_verdict v,
				const char *fix, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Move the finding added last to index @at: a summary row goes before the rows it sums up. */
void pmi_audit_move_last(struct pm_audit *a, size_t at);

/* audit_files.c: the mode checks and the snapshot search. */

/*
 * Did opening ROOT@name fail with @r because the kernel has no such file?
 * Live, -ENOENT says so; replayed, only a recorded NAME.errno of ENOENT does
 * (a file a capture did not record is unknown, not absent).
 */
bool pmi_audit_absent(struct pm_audit *a, const char *name, int r);
void pmi_audit_modes(struct pm_audit *a);
/* May a user other than root read a file of this mode and owner (a non-root owner or group counts)? */
bool pmi_audit_others_read(unsigned mode, uint32_t uid, uint32_t gid);
void pmi_audit_snapshots(struct pm_audit *a, const char *path);

/* Pure parsers (no I/O). Hostile input gives -EINVAL, never a wrong answer. */

/* "0400 0 0\n" (octal mode, UID, GID: a replayed tree's FILE.mode) -> 0 or -EINVAL. */
int pmi_audit_parse_mode(const char *s, unsigned *mode, uint32_t *uid, uint32_t *gid);

/*
 * From the text of /proc/PID/status: CapEff (hex) and the effective UID (the
 * second field of "Uid:"). Returns 0, -ENOENT when a line is missing, or
 * -EINVAL when one is malformed.
 */
int pmi_audit_parse_status(const char *status, uint64_t *capeff, uint32_t *euid);

/* Is this /proc/PID/uid_map the initial namespace's identity map of every ID ("0 0 4294967295", one line)? */
bool pmi_audit_uid_map_initial(const char *uid_map);

/* Is this /proc/PID/ns/user link the initial user namespace's (user:[4026531837], PROC_USER_INIT_INO)? */
bool pmi_audit_ns_initial(const char *link);

/* transparent_hugepage/enabled ("always [madvise] never"): the bracketed word. */
enum pmi_audit_thp { PMI_THP_UNKNOWN = 0, PMI_THP_ALWAYS, PMI_THP_MADVISE, PMI_THP_NEVER };
enum pmi_audit_thp pmi_audit_parse_thp(const char *s);

/* A non-negative decimal count ("512\n") -> 0 or -EINVAL. */
int pmi_audit_parse_count(const char *s, uint64_t *v);

/*
 * What a file is, as a pagemap snapshot: pmi_audit_sniff() looks at the
 * magic only; pmi_audit_sniff_path() opens a file with the snapshot magic
 * through the snapshot reader (on the descriptor it holds, O_NOFOLLOW) and
 * asks its META "frames": "kept" is PMI_SNAP_FRAMES, "hidden", "refused",
 * "dropped" or "keyed" PMI_SNAP_NO_FRAMES; a file the reader rejects, or
 * one that does not say (converted from a tree), stays PMI_SNAP_UNKNOWN_FORMAT.
 */
enum pmi_snap_kind {
	PMI_SNAP_NOT = 0,		/* not a snapshot */
	PMI_SNAP_FRAMES,			/* holds unscrambled frame numbers */
	PMI_SNAP_NO_FRAMES,		/* frame numbers dropped or scrambled */
	PMI_SNAP_UNKNOWN_FORMAT,		/* a snapshot whose sections this library cannot read yet */
};
enum pmi_snap_kind pmi_audit_sniff(const unsigned char *head, size_t n);
/* The same for a file (opened without following a final symlink, never blocking): kind, or -errno. */
int pmi_audit_sniff_path(const char *path);

#endif
