/* pagemap/cache.h - Page cache: part of <pagemap.h>, which includes it (include that, not this). */
#ifndef PAGEMAP_CACHE_H
#define PAGEMAP_CACHE_H

#ifndef PAGEMAP_H
#error "include <pagemap.h>: it includes <pagemap/cache.h> with what it needs"
#endif

/*
 * What is in the page cache, file by file, and who maps it or holds it
 * open. Nothing here reads or maps file data, advises the kernel or
 * populates page tables: the cache is measured, not perturbed.
 */

/* How a file's cache state was measured. */
enum pm_cache_method {
	PM_CACHE_UNKNOWN = 0,	/* not measured: pm_cache_stat.error says why */
	PM_CACHE_CACHESTAT,	/* cachestat(2), Linux 6.5+: every count */
	PM_CACHE_MINCORE,	/* mincore(2) over a PROT_NONE mapping, only where cachestat is
				   missing (or PAGEMAP_CACHE=mincore) and the caller owns or may
				   write the file; cached bytes only */
};

/* The counts of a pm_cache_stat that were measured (pm_cache_stat.known). */
#define PM_CACHE_CACHED		(1u << 0)
#define PM_CACHE_DIRTY		(1u << 1)
#define PM_CACHE_WRITEBACK	(1u << 2)
#define PM_CACHE_EVICTED	(1u << 3)
#define PM_CACHE_RECENT		(1u << 4)
#define PM_CACHE_ALL		0x1fu

/* One file's page cache state. A count outside @known is unknown, not 0. */
struct pm_cache_stat {
	uint64_t dev, ino;		/* st_dev, st_ino of the file measured (0 if stat failed) */
	uint64_t size;			/* st_size in bytes */
	enum pm_cache_method method;
	uint32_t known;			/* PM_CACHE_* */
	int error;			/* 0, or -errno: why nothing was measured */
	uint64_t cached;		/* bytes in the page cache (shmem: in RAM) */
	uint64_t dirty, writeback;	/* of those, dirty; under writeback */
	uint64_t evicted;		/* bytes evicted since the file was opened first (shmem: swapped) */
	uint64_t recently_evicted;	/* of those, evicted recently enough to count as refaults */
};

/*
 * pm_cache_stat_fd - measure the page cache of the regular file open at
 * @fd (opened for reading; O_PATH descriptors are refused by cachestat).
 * cachestat(2) is used; only where the kernel lacks it (ENOSYS, before
 * Linux 6.5) does mincore(2) count cached pages, and only when the caller
 * owns the file, may write it or is root: otherwise mincore reports every
 * page resident, and that fake answer is never given.
 * PAGEMAP_CACHE=cachestat|mincore forces a method (tests).
 * Returns 0 with *@out filled, or -errno with out->method PM_CACHE_UNKNOWN
 * and out->error set: EINVAL (not a regular file), EPERM (cachestat needs
 * write permission or ownership since Linux 6.14 and its stable
 * backports), ENOSYS (no cachestat and mincore cannot be trusted here),
 * EOPNOTSUPP (hugetlbfs), EBADF. @ctx is for debug logs only.
 */
PM_API int pm_cache_stat_fd(struct pm_ctx *ctx, int fd, struct pm_cache_stat *out);

/*
 * pm_cache_stat_path - pm_cache_stat_fd on the file at @path (not under
 * the context's root: it names a file, not a kernel interface). Anything
 * that is not a regular file is refused (-EINVAL) before it is opened; the
 * file is opened O_RDONLY|O_NONBLOCK, O_NOATIME where allowed, and read
 * never. Returns as pm_cache_stat_fd, plus the errors of stat and open.
 */
PM_API int pm_cache_stat_path(struct pm_ctx *ctx, const char *path, struct pm_cache_stat *out);

/* pm_cache_method_name - "cachestat", "mincore" or "unknown". Static. */
PM_API const char *pm_cache_method_name(enum pm_cache_method m);

/*
 * pm_cache_meminfo - the page cache of the whole system: ROOT/proc/meminfo
 * "Cached:" in bytes (it includes shmem and tmpfs, excludes buffers and
 * swap cache). Returns 0, -EBADMSG (no valid line: pm_ctx_tree_error), or
 * the open error.
 */
PM_API int pm_cache_meminfo(struct pm_ctx *ctx, uint64_t *cached);

struct pm_cache;

/* How a process reaches a file (pm_cache_use.via, pm_cache_file.via). */
#define PM_CACHE_VIA_MAP	(1u << 0)	/* mapped (maps; deleted files through map_files) */
#define PM_CACHE_VIA_FD		(1u << 1)	/* held open through a descriptor (/proc/PID/fd) */
#define PM_CACHE_VIA_ARG	(1u << 2)	/* named by the caller (pm_cache_add_path) */

/* One file of a pm_cache, deduplicated by (device, inode). */
struct pm_cache_file {
	struct pm_cache_stat stat;	/* stat.error != 0: not measured (see pm_cache_stat_fd) */
	const char *path;		/* the first name seen: the argument, a maps path or fd link */
	bool deleted;			/* unlinked while mapped or open */
	unsigned via;			/* PM_CACHE_VIA_*, over every process */
	unsigned nprocs;		/* processes added that map it or hold it open */
};

/* One (process, file) pair: what the process does with the file. */
struct pm_cache_use {
	pid_t pid;
	size_t file;			/* index for pm_cache_file_at */
	unsigned via;			/* PM_CACHE_VIA_MAP and/or PM_CACHE_VIA_FD */
	uint64_t mapped;		/* bytes of its file-backed pages of the file that are present */
	uint64_t mapped_only;		/* of those, mapped by no other process (pagemap bit 56) */
	bool mapped_only_known;		/* false where the walk cannot tell (kernel before 4.2) */
	/* Who pays, with pm_cache_set_kpage and a readable kpagecgroup (root): */
	bool charged_known;		/* the fields below are measured */
	uint64_t memcg;			/* the process's memory cgroup (its directory's inode; 0 unknown) */
	uint64_t charged_own;		/* of @mapped, bytes charged to @memcg */
	uint64_t charged_other;		/* of @mapped, bytes charged to other memory cgroups (or none) */
	uint64_t other_memcg;		/* the cgroup charged for most of those (majority vote; 0 none) */
};

/*
 * pm_cache_new - an empty set of files and (process, file) pairs.
 * Returns the handle or NULL with errno (ENOMEM). The context must outlive
 * it; free with pm_cache_free.
 */
PM_API struct pm_cache *pm_cache_new(struct pm_ctx *ctx);

/*
 * pm_cache_add_path - add the file at @path, measured as pm_cache_stat_path
 * does. A file seen before (a hard link, a bind mount) is not added again.
 * Returns 0 (also when the file could not be measured: its stat.error
 * says why), or -errno when it cannot be added: the stat error (ENOENT,
 * EACCES), EINVAL (not a regular file), ENOMEM.
 */
PM_API int pm_cache_add_path(struct pm_cache *c, const char *path);

/*
 * pm_cache_add_at - pm_cache_add_path on @name relative to the directory
 * @dirfd (or AT_FDCWD), recorded as @path: for walking a tree with openat,
 * which spares the kernel a lookup of the whole path per file. Symbolic
 * links in @name are followed. Returns as pm_cache_add_path.
 */
PM_API int pm_cache_add_at(struct pm_cache *c, int dirfd, const char *name, const char *path);

/*
 * pm_cache_add_process - add the files process @pid maps (ROOT/proc/PID/
 * maps; each file opened through map_files, which reaches deleted files
 * and other mount namespaces and needs CAP_SYS_ADMIN, else through
 * ROOT/proc/PID/root/PATH) and holds open (ROOT/proc/PID/fd), each
 * measured once, and one pm_cache_use per file with the present bytes of
 * its file-backed pages (one pagemap walk). Shared memory (memfd, SysV,
 * MAP_SHARED|MAP_ANONYMOUS) counts as files: it is page cache too.
 * Under a replayed root files are listed but not measured (stat.error
 * -EOPNOTSUPP): the capture holds no page cache.
 * Returns 0, or -errno: ENOENT, ESRCH, EACCES as pm_target_open and
 * pm_walk_next (nothing of the process is kept then), ENOMEM.
 */
PM_API int pm_cache_add_process(struct pm_cache *c, pid_t pid);

/*
 * pm_cache_set_kpage - join mapped pages to the memory cgroups charged for
 * them (ROOT/proc/kpagecgroup through @k, root only): processes added
 * later get pm_cache_use.charged_*. @k must outlive @c; NULL turns it off.
 * Returns 0, or the open error of kpagecgroup (-EACCES, -ENOENT).
 */
PM_API int pm_cache_set_kpage(struct pm_cache *c, struct pm_kpage *k);

/*
 * pm_cache_cgroup_path - the path below the cgroup mount (ROOT/sys/fs/
 * cgroup, or its "memory" hierarchy on cgroup v1) of the cgroup directory
 * with inode @ino, into @buf ("/" for the root cgroup). Walks the tree
 * each call: call it for the few cgroups shown. Returns 0, -ENOENT (no
 * such cgroup: removed, or 0), -ENAMETOOLONG.
 */
PM_API int pm_cache_cgroup_path(struct pm_cache *c, uint64_t ino, char *buf, size_t size);

/* pm_cache_nfiles - how many files the set holds. */
PM_API size_t pm_cache_nfiles(const struct pm_cache *c);

/* pm_cache_file_at - file @i (0 <= @i < pm_cache_nfiles), borrowed until pm_cache_free; NULL past the end. */
PM_API const struct pm_cache_file *pm_cache_file_at(const struct pm_cache *c, size_t i);

/* pm_cache_nuses - how many (process, file) pairs, in the order processes were added. */
PM_API size_t pm_cache_nuses(const struct pm_cache *c);

/* pm_cache_use_at - pair @i, borrowed until pm_cache_free; NULL past the end. */
PM_API const struct pm_cache_use *pm_cache_use_at(const struct pm_cache *c, size_t i);

/* pm_cache_free - free the set. NULL is fine. */
PM_API void pm_cache_free(struct pm_cache *c);

#endif /* PAGEMAP_CACHE_H */
