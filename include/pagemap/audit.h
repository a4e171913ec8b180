/* pagemap/audit.h - Audit: part of <pagemap.h>, which includes it (include that, not this). */
#ifndef PAGEMAP_AUDIT_H
#define PAGEMAP_AUDIT_H

#ifndef PAGEMAP_H
#error "include <pagemap.h>: it includes <pagemap/audit.h> with what it needs"
#endif

/*
 * What a finding says about exposure. Only EXPOSED is something an
 * unprivileged user can use now; CONTEXT raises or lowers the risk of one
 * (huge pages give physical contiguity, KSM page sharing) but learns no
 * physical address by itself.
 */
enum pm_verdict {
	PM_VERDICT_OK = 0,	/* nothing learnt here by an unprivileged process */
	PM_VERDICT_EXPOSED,	/* frame numbers (or the frame files) reach users other than root */
	PM_VERDICT_UNKNOWN,	/* the evidence could not be read */
	PM_VERDICT_CONTEXT,	/* a fact that weighs on the risk, no exposure by itself */
};

/* One finding of an audit. Strings are borrowed from the handle. */
struct pm_finding {
	const char *name;	/* the check: "pfn-unprivileged", "kpageflags", "thp", ... */
	const char *subject;	/* what was examined: a path, or "pid 1 (systemd)" */
	enum pm_verdict verdict;
	const char *evidence;	/* what was read, in words */
	const char *fix;	/* what would close it; NULL when there is nothing to do */
	pid_t pid;		/* a process row of "cap-sys-admin": its PID, else 0 */
	bool uid_known;
	uid_t uid;		/* that process's effective UID, when uid_known */
	const char *comm;	/* that process's command name, else NULL */
};

struct pm_audit;

/*
 * pm_audit_new - an audit of the machine behind @ctx (live, or a replayed
 * tree: every kernel file is read through the context's root).
 * Returns the handle or NULL with errno (ENOMEM). The context must outlive
 * it; free with pm_audit_free().
 */
PM_API struct pm_audit *pm_audit_new(struct pm_ctx *ctx);

/*
 * pm_audit_add_path - also look for pagemap snapshot files holding
 * unscrambled frame numbers at @path (a file, or a directory searched
 * recursively without following symbolic links). @path is a path of the
 * machine the caller runs on, not under the context's root. Copied.
 * Returns 0, -EINVAL after pm_audit_run(), or -ENOMEM.
 */
PM_API int pm_audit_add_path(struct pm_audit *a, const char *path);

#define PM_AUDIT_NO_CHILD	(1u << 0)	/* do not fork the uid-65534 child (below) */

/*
 * pm_audit_run - make the findings (once), in this order:
 *   pfn-unprivileged   do readers without CAP_SYS_ADMIN see frame numbers:
 *                      the kernel version's rule (before 4.0 yes, 4.0-4.1
 *                      EPERM, 4.2+ zeroed) and, where possible, the effect:
 *                      live as root, a forked child that drops to uid 65534
 *                      (setresuid, no capabilities) reads its own pagemap
 *                      entry of a written page; live without root, this
 *                      process's own view; replayed, what an unprivileged
 *                      capture recorded in ROOT/pagemap-features.
 *   pagemap-file, kpageflags, kpagecount, kpagecgroup, page-idle
 *                      the mode and owner of /proc/self/pagemap, the
 *                      /proc/kpage* files and /sys/kernel/mm/page_idle/bitmap:
 *                      exposed when anyone but root may read or write them.
 *                      A replayed tree records them as FILE.mode ("0400 0 0":
 *                      octal mode, UID, GID); without one the verdict is
 *                      unknown, unless the file is recorded absent (ENOENT).
 *   cap-sys-admin      the processes holding CAP_SYS_ADMIN (CapEff) in the
 *                      initial user namespace, which read every frame number:
 *                      one summary row, then one row per process (kernel
 *                      threads and zombies left out). Root's are expected
 *                      (ok); a holder with another effective UID is exposed.
 *   thp, hugetlb       can an unprivileged process get 2 MiB (or larger) of
 *                      physical contiguity: transparent_hugepage/enabled
 *                      (always, madvise; on 6.1+ MADV_COLLAPSE ignores
 *                      "never"), and huge page pools (nr_hugepages,
 *                      nr_overcommit_hugepages) that MAP_HUGETLB takes from
 *                      without privilege. Context: contiguity is no address.
 *   exclusive-bit      with KSM running (/sys/kernel/mm/ksm/run = 1), bit 56
 *                      (4.2+, shown to every reader) tells a process that a
 *                      page of its own was merged with another's. Context.
 *   snapshots          per path added: the snapshot files found, one row
 *                      each ("snapshot"): exposed when one holds frame
 *                      numbers and users other than root may read it (a
 *                      non-root owner, a non-root group with g+r, or o+r;
 *                      the directories above it are not judged), context
 *                      when only root may read it.
 * Replayed, a file the tree does not hold gives unknown, never ok: only a
 * recorded FILE.errno of ENOENT says that the kernel has no such file.
 * @flags: PM_AUDIT_*. Returns 0, or -errno: -ENOMEM, -EBADMSG (a replayed
 * tree is damaged: pm_ctx_tree_error), -EALREADY if it ran before.
 */
PM_API int pm_audit_run(struct pm_audit *a, unsigned flags);

/*
 * pm_audit_next - the next finding, in the order above.
 * Returns 0 with *@out (borrowed until pm_audit_free), 1 at the end, or
 * -EINVAL before pm_audit_run().
 */
PM_API int pm_audit_next(struct pm_audit *a, const struct pm_finding **out);

/*
 * pm_audit_count - how many findings have verdict @v (the per-process and
 * per-file rows counted with the rest).
 */
PM_API unsigned pm_audit_count(const struct pm_audit *a, enum pm_verdict v);

/* pm_audit_free - free the handle and its findings. NULL is fine. */
PM_API void pm_audit_free(struct pm_audit *a);

/* pm_verdict_name - "ok", "exposed", "unknown" or "context". Static string. */
PM_API const char *pm_verdict_name(enum pm_verdict v);

#endif /* PAGEMAP_AUDIT_H */
