/* pagemap/snapshot.h - Snapshots: one file of page state, replayed by every command: part of <pagemap.h>, which includes it (include that, not this). */
#ifndef PAGEMAP_SNAPSHOT_H
#define PAGEMAP_SNAPSHOT_H

#ifndef PAGEMAP_H
#error "include <pagemap.h>: it includes <pagemap/snapshot.h> with what it needs"
#endif

/*
 * Snapshot: pm_snapshot_* - one file holding a captured /proc tree (the tree
 * `pagemap --root` replays, tests/fixtures/README.md): every file as a
 * section with its path, text in zstd chunks, pagemap and kpage* in a
 * columnar word encoding, each chunk xxh64-checked, an index at the end.
 * The format is man/pagemap-snapshot.5. A snapshot is untrusted input: the
 * reader bounds every count and length and never allocates by what the
 * file says beyond fixed chunk limits (1 MiB decoded, 262144 words and
 * 65536 extents a chunk; 65536 words in version 1 and 2 files).
 */
#define PM_SNAPSHOT_VERSION	3	/* written; a reader also takes version 1 and 2 files */
#define PM_SNAPSHOT_SERIES_VERSION 4	/* a series of snapshots (pm_snapshot_append); read too */

enum pm_snapshot_type {
	PM_SNAPSHOT_META = 1,	/* key=value lines: what made the snapshot, when, of what */
	PM_SNAPSHOT_FILE = 2,	/* a file of the tree: path, kind, length */
	PM_SNAPSHOT_BYTES = 3,	/* a chunk of a text file's bytes */
	PM_SNAPSHOT_WORDS = 4,	/* a chunk of a word file's 64-bit words (pagemap, kpage*) */
	PM_SNAPSHOT_INDEX = 5,	/* the last section: every section's type and length (offset in versions 1, 2) */
	PM_SNAPSHOT_FILES = 6,	/* version 2: several FILEs in one (pm_snapshot_next yields each as a FILE) */
	PM_SNAPSHOT_REUSE = 7,	/* version 4: a WORDS chunk an earlier member stored (yielded as that WORDS) */
	PM_SNAPSHOT_SERIES = 8,	/* version 4: the index of a series' members (never yielded) */
};

/* One section of an open snapshot, as pm_snapshot_next() yields it. */
struct pm_snapshot_section {
	uint32_t type;		/* enum pm_snapshot_type, or a type this reader does not know */
	uint64_t offset;	/* of its header in the file */
	uint64_t length;	/* payload bytes */
	uint32_t file;		/* FILE, BYTES, WORDS: the file's id (order of its FILE section, from 0) */
	const char *path;	/* FILE, BYTES, WORDS: its path in the tree ("proc/42/maps"); else NULL */
	uint32_t kind;		/* FILE, BYTES, WORDS: PM_SNAPSHOT_BYTES or PM_SNAPSHOT_WORDS */
	uint64_t size;		/* FILE, BYTES, WORDS: the file's length in bytes */
};

struct pm_snapshot;
struct pm_snapshot_writer;

/*
 * pm_snapshot_open - open the snapshot at @path and check it whole: magic,
 * version, every section header and checksum, the index and trailer, the
 * paths (relative, no "..", no empty or "." component).
 * @err, @errsize: where a one-line reason goes on failure (may be NULL);
 * it names the section ("section 7 (WORDS of proc/42/pagemap): ...").
 * Returns the handle, or NULL with errno: EBADMSG (damaged or not a
 * snapshot), EFBIG (a file claims more than a snapshot may hold: a text file
 * over 256 MiB, a kpage* file over 2^40 frames; pagemap-snapshot(5) LIMITS),
 * EPROTONOSUPPORT (another format version), ELIBACC (libzstd.so.1,
 * which the shared library opens on its first snapshot, cannot be loaded;
 * @err says why), ENOMEM, or the open error. Free with pm_snapshot_close().
 */
PM_API struct pm_snapshot *pm_snapshot_open(const char *path, char *err, size_t errsize);

/* pm_snapshot_open_fd - the same on an open file (@fd stays the caller's, read with pread). */
PM_API struct pm_snapshot *pm_snapshot_open_fd(int fd, char *err, size_t errsize);

/*
 * pm_snapshot_next - the next section, in file order (unknown types too:
 * readers skip them). Returns 0 with *@out (its path borrowed until the
 * handle is closed), 1 at the end; pm_snapshot_rewind() starts again.
 */
PM_API int pm_snapshot_next(struct pm_snapshot *s, struct pm_snapshot_section *out);
PM_API void pm_snapshot_rewind(struct pm_snapshot *s);

/* pm_snapshot_meta - the value of META key @key (borrowed), or NULL. */
PM_API const char *pm_snapshot_meta(const struct pm_snapshot *s, const char *key);

/* Called with each extent of a chunk: @off is the byte offset in the file, @buf its @len bytes (borrowed). */
typedef int (*pm_snapshot_extent_fn)(void *data, uint64_t off, const void *buf, size_t len);

/*
 * pm_snapshot_read - decompress and decode a BYTES or WORDS section @sec
 * and call @fn for each extent (words native-endian). Returns 0, what @fn
 * returned if not 0, -EINVAL for another section type, -EBADMSG (the reason
 * from pm_snapshot_error()) or a read error.
 */
PM_API int pm_snapshot_read(struct pm_snapshot *s, const struct pm_snapshot_section *sec, pm_snapshot_extent_fn fn,
			    void *data);

/*
 * pm_snapshot_extract - write the tree into directory @dir (existing; files
 * are created 0600, directories 0700, never through a symlink, never over an
 * existing file). Word files are sparse: only the stored ranges are written,
 * the rest reads 0. Returns 0 or -errno (-EBADMSG: see pm_snapshot_error()).
 */
PM_API int pm_snapshot_extract(struct pm_snapshot *s, const char *dir);

/* pm_snapshot_error - the last failure of @s as one line (borrowed), or NULL. */
PM_API const char *pm_snapshot_error(const struct pm_snapshot *s);

/* pm_snapshot_close - close and free. NULL is fine. */
PM_API void pm_snapshot_close(struct pm_snapshot *s);

/*
 * A series: one file of several snapshots of the same processes over time
 * (format version 4, pm_snapshot_append()). Each member is a snapshot of its
 * own; a word chunk equal to the previous member's chunk of the same file
 * and words is stored once and referred to. An index at the end (checked)
 * gives each member's place, time and PIDs: a reader opens member N without
 * reading the others. pm_snapshot_open() and pm_snapshot_open_fd() open a
 * series' last member; every other call then sees that member as a
 * snapshot (a reused chunk is yielded by pm_snapshot_next() as the WORDS
 * section that stores it, at its offset).
 */

/*
 * pm_snapshot_open_member - open member @member of the series at @path:
 * 1 is the first, -1 the last, -2 the one before it, and so on; 0 is the
 * last too. A plain snapshot (version 1 to 3) is a series of one member.
 * pm_snapshot_open() takes "PATH@N" for this when no file PATH@N exists.
 * Returns the handle, or NULL with errno as pm_snapshot_open(), and ERANGE
 * (no such member; @err says how many there are).
 */
PM_API struct pm_snapshot *pm_snapshot_open_member(const char *path, int member, char *err, size_t errsize);

/* pm_snapshot_open_member_fd - the same on an open file (@fd stays the caller's). */
PM_API struct pm_snapshot *pm_snapshot_open_member_fd(int fd, int member, char *err, size_t errsize);

/* One member of a series, as its index gives it (pm_snapshot_member_info). */
struct pm_snapshot_member {
	uint32_t number;		/* 1, 2, ... */
	uint64_t offset, length;	/* its bytes in the file (sections and its INDEX) */
	int64_t time;			/* when it was written, seconds since the epoch */
	uint64_t words_bytes;		/* payload bytes of the WORDS chunks it stores itself */
	uint64_t reused;		/* word chunks it takes from earlier members instead */
	uint64_t reused_bytes;		/* the payload bytes those chunks take there */
	uint32_t npids;			/* PIDs it holds (processes with a pagemap) */
	uint32_t listed;		/* how many of them pids lists (at most 64) */
	const int32_t *pids;		/* borrowed until pm_snapshot_close() */
};

/*
 * pm_snapshot_members - the members of @s's file: 0 for a plain snapshot,
 * else their count; *@open (may be NULL) the number of the open one.
 */
PM_API unsigned pm_snapshot_members(const struct pm_snapshot *s, unsigned *open);

/*
 * pm_snapshot_member_info - member @number (from 1) of @s's series into
 * *@out. Returns 0, -EINVAL for a plain snapshot, -ERANGE for no such member.
 */
PM_API int pm_snapshot_member_info(const struct pm_snapshot *s, unsigned number, struct pm_snapshot_member *out);

/*
 * pm_ctx_new_snapshot - a context that replays snapshot @s as --root would
 * replay its tree. Every open is answered from the snapshot: word files
 * from their chunks, a text file decompressed into an anonymous memory file
 * when it is opened (a file no call opens costs nothing), a name it lacks
 * ENOENT; no file system is touched. A call that reads the root itself
 * (lists ROOT/proc, stat()s a cgroup directory, pm_ctx_root()) first makes
 * a tree of names only (directories, empty files) in a private directory
 * (0700, under $TMPDIR or /tmp) that pm_ctx_free() removes, as does a keeper
 * child process (exit signal 0: waitpid(-1) does not see it) if this process
 * dies first. A context made with pm_ctx_new(pm_ctx_root()) of it sees
 * empty files: make another with this call. @s may be closed after. Returns
 * the context, or NULL with errno (EBADMSG: pm_snapshot_error()).
 */
PM_API struct pm_ctx *pm_ctx_new_snapshot(struct pm_snapshot *s);

/*
 * pm_snapshot_create - start writing a snapshot to @path, mode 0600, by
 * pm_outfile_open(PM_OUTFILE_PRIVATE): a temporary in @path's directory that
 * pm_snapshot_commit() makes appear at @path whole, or not at all; a
 * character device, or a symlink of the caller's or root's (/dev/stdout), is
 * written in place; a symlink someone else owns is refused (ELOOP). Returns
 * the writer, or NULL with errno (ELIBACC: libzstd.so.1 cannot be loaded, as
 * in pm_snapshot_open(); pm_outfile_open()'s errors). Memory is bounded
 * whatever is added (one chunk per open file).
 */
PM_API struct pm_snapshot_writer *pm_snapshot_create(const char *path);

/*
 * pm_snapshot_create_fd - start writing a snapshot to @fd as it is (a pipe,
 * a socket, standard output redirected to a file with > or >>): written
 * sequentially from its current offset, never reopened, truncated, nor
 * closed (@fd stays the caller's; a duplicate is written). No temporary and
 * no atomicity: a failed run leaves what was written. Returns the writer,
 * or NULL with errno (EBADF, ELIBACC, ENOMEM).
 */
PM_API struct pm_snapshot_writer *pm_snapshot_create_fd(int fd);

/*
 * pm_snapshot_add_meta - a META key=value line (neither may hold '\n'; key
 * no '='). 0 or -errno: -EINVAL, -E2BIG (a line over 4 KiB, or META would
 * pass the 64 KiB a reader takes).
 */
PM_API int pm_snapshot_add_meta(struct pm_snapshot_writer *w, const char *key, const char *value);

/*
 * pm_snapshot_add_tree - add every regular file under directory @dir (a
 * captured tree, sorted by name): files named pagemap, kpageflags, kpagecount
 * or kpagecgroup whose length is a multiple of 8 as words (their holes
 * skipped), the others as bytes. A symlink, device or FIFO in the tree fails
 * with -EINVAL. Returns 0 or -errno.
 */
PM_API int pm_snapshot_add_tree(struct pm_snapshot_writer *w, const char *dir);

/* How a snapshot writes frame numbers (and swap offsets), see pm_snapshot_set_frames(). */
enum pm_snapshot_pfn {
	PM_SNAPSHOT_PFN_KEEP = 0,	/* as read: the default */
	PM_SNAPSHOT_PFN_DROP,		/* zeroed, no kpage* words */
	PM_SNAPSHOT_PFN_KEYED,		/* max_pfn + a keyed permutation of [0, max_pfn) */
	PM_SNAPSHOT_PFN_KEYED_BLOCK,	/* a keyed permutation of 2 MiB blocks, offsets inside kept */
};
#define PM_SNAPSHOT_KEY_SIZE	32u

/*
 * pm_snapshot_set_frames - before any process is added: write frame numbers
 * of @w as @mode says, and record it in META (frames=kept, dropped, keyed or
 * keyed-block; keyed modes also key_id=HEX, 16 hex digits, never the key).
 * Keyed modes need @key (PM_SNAPSHOT_KEY_SIZE bytes) and @ctx, whose
 * /proc/kpageflags length gives max_pfn (else 2^54, half the 55-bit field).
 * A frame f becomes lift + perm(f) in every pagemap word and its kpage*
 * words move to that index, lift being max_pfn in whole blocks (META
 * key_lift), so no scrambled frame equals a real one; frames at or above
 * max_pfn become f + lift (not hidden). A swap offset goes through its own
 * permutation, not lifted. Returns 0, or -EINVAL (bad @mode, no @key for a
 * keyed mode, called after a process was added).
 */
PM_API int pm_snapshot_set_frames(struct pm_snapshot_writer *w, struct pm_ctx *ctx, enum pm_snapshot_pfn mode,
				  const unsigned char *key);

/*
 * pm_snapshot_key_id - the key id META records for @key
 * (PM_SNAPSHOT_KEY_SIZE bytes): the first 8 bytes of SipHash-2-4 of a fixed
 * string under the key, so a reader can tell a wrong key without the key.
 */
PM_API uint64_t pm_snapshot_key_id(const unsigned char *key);

/*
 * pm_snapshot_unscramble - write snapshot @in, whose frame numbers were
 * keyed by pm_snapshot_set_frames() with @key (PM_SNAPSHOT_KEY_SIZE bytes),
 * to a new snapshot @out with the real frame numbers, swap offsets and
 * zero_pfn back (META frames=kept, the key's lines left out): its tree is
 * the one a keep snapshot would have held. @err, @errsize: a one-line
 * reason on failure. Returns 0, or -EKEYREJECTED (another key: the key ids
 * differ), -EINVAL (@in is not keyed), -EBADMSG (damaged), or -errno.
 */
PM_API int pm_snapshot_unscramble(const char *in, const char *out, const unsigned char *key, char *err,
				  size_t errsize);

#define PM_SNAPSHOT_FRAMES	(1u << 0)	/* join the present frames' kpageflags/count/cgroup words */
#define PM_SNAPSHOT_PHYS	(1u << 1)	/* add_system: the whole kpageflags, kpagecount, kpagecgroup */
#define PM_SNAPSHOT_ONE_THREAD	(1u << 2)	/* add_process: no second thread (see there) */

/*
 * pm_snapshot_add_process - add process @pid as seen through @ctx (live):
 * maps, stat, status, smaps, smaps_rollup, cgroup, numa_maps as text;
 * pagemap over each mapping read in batches; with PM_SNAPSHOT_FRAMES and
 * readable PFNs, the kpage* words of its present frames. A refused file is
 * recorded as FILE.errno, as a captured tree does. Where the calling thread
 * may run on more than one CPU, a second thread, started on another CPU,
 * reads the text files but maps (smaps, smaps_rollup and numa_maps are three
 * walks of the page tables in the kernel) and, the first time, the files
 * pm_snapshot_add_system() writes, while the caller reads the pagemap; it
 * ends before the call returns, and the files written are the same.
 * PM_SNAPSHOT_ONE_THREAD reads everything in the calling thread. The
 * process's owner (the real UID of its status) and this machine's name for
 * it (getpwuid_r) are kept for META users=UID=NAME,... at commit, so that a
 * replay shows USER as the capture knew it. Read live, the process's read window is kept: the
 * CLOCK_REALTIME nanoseconds when its reading started, and the start plus
 * the CLOCK_MONOTONIC time the reading took; pm_snapshot_commit() writes
 * them as META lines window.PID=START,END (as many as the META limit of
 * 64 KiB leaves room for: about 1100 processes; then windows_omitted=N
 * counts the others). Returns 0, or -errno (-ESRCH, -ENOENT: the process is gone
 * or never was; nothing of it is kept then in a way that replays wrongly:
 * its files are simply missing).
 */
PM_API int pm_snapshot_add_process(struct pm_snapshot_writer *w, struct pm_ctx *ctx, pid_t pid, unsigned flags);

/*
 * pm_snapshot_add_system - the files every tree has: osrelease, swaps,
 * hpage_pmd_size, pagemap-features (pm_features_export of @ctx's full probe;
 * the page_mapcount probe only when a recorded frame is of a large folio or
 * frames could not be checked, else the record says it was not needed),
 * and kpage*.errno ENODATA unless frames were added (with PM_SNAPSHOT_PHYS:
 * the whole frame files, and /proc/meminfo and /proc/vmstat as text beside
 * them; the others may have been read with the first process, see
 * pm_snapshot_add_process). Call once, after the processes. 0 or -errno.
 */
PM_API int pm_snapshot_add_system(struct pm_snapshot_writer *w, struct pm_ctx *ctx, unsigned flags);

/*
 * pm_snapshot_commit - write META users (the owners of the processes added,
 * by name), the processes' windows, the index and trailer, fsync, and put
 * the file at its path. 0 or -errno.
 */
PM_API int pm_snapshot_commit(struct pm_snapshot_writer *w);

/*
 * pm_snapshot_append - start writing a new member of the series at @path
 * (created, as a series of this one member, when no file is there). The
 * series is checked whole first (every member and its index); the new file
 * is the old members copied into a temporary as pm_snapshot_create() makes
 * one, then the new member: pm_snapshot_commit() puts it at @path, and
 * until then, or if it fails, the old series stays as it was. The series
 * is locked (flock) from its read until the writer is freed: a concurrent
 * append waits, then adds its member to this one's series (a series file
 * that others could open, not ours nor root's with mode 0600, is waited
 * for 10 s at most: EWOULDBLOCK). When no series is there yet nothing is
 * locked: the first member is put at @path only where still nothing is,
 * and this call (errno EEXIST) or pm_snapshot_commit() (-EEXIST) fails
 * when another append created the series meanwhile: append again. Add to the
 * writer as to a new snapshot. A word chunk equal, byte for byte once
 * compressed, to the last member's chunk of the same file path and words
 * is not stored again but referred to; in a series the pagemap's chunks end
 * on 16384-word slots (64 MiB of 4 KiB pages) so an unchanged range gives an
 * equal chunk.
 * @err, @errsize: a one-line reason on failure (may be NULL). Returns the
 * writer, or NULL with errno: EBADMSG (@path is damaged or not a
 * snapshot), EPROTONOSUPPORT, ELIBACC, ENOMEM, EOVERFLOW (65536 members
 * already), EINVAL (a plain snapshot is there, not a series), ELOOP (a
 * symlink is there), EWOULDBLOCK (see above), or the open error.
 * pm_snapshot_commit() of the new
 * member fails with -EOVERFLOW if the series' index would pass 4 MiB (what
 * readers take): the old series stays.
 */
PM_API struct pm_snapshot_writer *pm_snapshot_append(const char *path, char *err, size_t errsize);

/* pm_snapshot_writer_free - free; an uncommitted snapshot is discarded. NULL is fine. */
PM_API void pm_snapshot_writer_free(struct pm_snapshot_writer *w);

#endif /* PAGEMAP_SNAPSHOT_H */
