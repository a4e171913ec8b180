/* pagemap/outfile.h - Output files: written whole, never through what others planted: part of <pagemap.h>, which includes it (include that, not this). */
#ifndef PAGEMAP_OUTFILE_H
#define PAGEMAP_OUTFILE_H

#ifndef PAGEMAP_H
#error "include <pagemap.h>: it includes <pagemap/outfile.h> with what it needs"
#endif

/*
 * Output files: pm_outfile_* - the one way the library and the pagemap tool
 * write a file (snapshots, series, pictures, metrics textfiles), safe as root
 * in a directory others may write (/tmp, a service's own directory):
 *
 *  - Nothing at the path, or a regular file: the content goes to a temporary
 *    in the same directory (O_TMPFILE, else a name of 64 random bits from
 *    getrandom(), created O_CREAT|O_EXCL|O_NOFOLLOW; no free name in 16 tries
 *    is EEXIST, never someone else's file) that pm_outfile_commit() puts at
 *    the path whole: over the regular file that was there (rename), or only
 *    where still nothing is (link, RENAME_NOREPLACE: EEXIST if a file came
 *    meanwhile). A regular file there is replaced, never written into.
 *  - A symlink is followed, and the character device or FIFO it names
 *    written in place (/dev/stdout on a pipe or terminal, /dev/stderr), only
 *    when the symlink is owned by the caller's effective UID or by root;
 *    anyone else's symlink is refused with ELOOP, in any directory (stricter
 *    than the kernel's protected_symlinks, which spares directories that are
 *    not sticky). Nothing is created through a symlink (a dangling one is
 *    ENOENT), and a regular file reached through one is EEXIST, never
 *    truncated nor written: reopening /dev/stdout loses what the shell's
 *    ">>" or an earlier writer put there (use pm_snapshot_create_fd()).
 *  - A character device (/dev/null, a terminal) is written in place, whoever
 *    owns it (only CAP_MKNOD makes one: no one plants it); a FIFO only when
 *    the caller or root owns it (else EPERM: someone's FIFO would hand them
 *    the output); it is opened O_NOFOLLOW and must be the file looked at
 *    (EAGAIN if the name was swapped meanwhile). A socket is refused (ENXIO
 *    through a symlink, else EPERM), a block device too (EPERM); a directory
 *    is EISDIR. In place means no temporary and no atomicity.
 *  - PM_OUTFILE_ENTRY: the path is a name others read as a regular file (a
 *    series, a node_exporter textfile): whatever is there but a directory is
 *    replaced by the rename, never followed nor written.
 *  - PM_OUTFILE_CREATE: a new file only (a key): anything at the path, or
 *    anything that appears there before the commit, is EEXIST.
 *
 * Mode: PM_OUTFILE_PRIVATE gives 0600 whatever the umask, for anything that
 * may hold frame numbers or swap offsets (snapshots, pictures of a process as
 * root); else 0644 less the umask. A file written in place keeps its mode.
 */
#define PM_OUTFILE_PRIVATE	(1u << 0)	/* mode 0600: the content may hold frame numbers */
#define PM_OUTFILE_ENTRY	(1u << 1)	/* replace whatever entry is at the path; never write through it */
#define PM_OUTFILE_CREATE	(1u << 2)	/* only where nothing is: anything at the path is EEXIST (keys) */

struct pm_outfile;

/*
 * pm_outfile_open - start writing @path as the rules above say; @flags:
 * PM_OUTFILE_*. Write the content to pm_outfile_fd(), then
 * pm_outfile_commit(); pm_outfile_free() without a commit leaves the path as
 * it was (unless written in place). Returns the handle, or NULL with errno:
 * EEXIST (PM_OUTFILE_CREATE and something is there; a regular file
 * through a symlink; no temporary name could be had), ELOOP (a symlink not
 * ours nor root's), EPERM (a block device or socket, or a FIFO not ours nor
 * root's), ENXIO (a socket through a symlink), EISDIR, EAGAIN (the entry
 * changed while it was opened), EINVAL (bad @flags), or the error of
 * opening the directory, the temporary or the file written in place.
 */
PM_API struct pm_outfile *pm_outfile_open(const char *path, unsigned flags);

/* pm_outfile_fd - the descriptor to write the content to (owned by @o). */
PM_API int pm_outfile_fd(const struct pm_outfile *o);

/* pm_outfile_in_place - true when @o writes into what is at the path (a device, FIFO, a symlink's file). */
PM_API bool pm_outfile_in_place(const struct pm_outfile *o);

/*
 * pm_outfile_commit - fsync and put the content at the path (see above).
 * Returns 0, or -errno: -EEXIST (a file appeared where there was none), the
 * fsync, link or rename error. Call once.
 */
PM_API int pm_outfile_commit(struct pm_outfile *o);

/* pm_outfile_free - close; an uncommitted temporary is removed. NULL is fine. */
PM_API void pm_outfile_free(struct pm_outfile *o);

/* pm_outfile_write - pm_outfile_open, write @len bytes of @buf, commit, free: 0 or -errno. */
PM_API int pm_outfile_write(const char *path, const void *buf, size_t len, unsigned flags);

#endif /* PAGEMAP_OUTFILE_H */
