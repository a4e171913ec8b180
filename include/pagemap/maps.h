/* pagemap/maps.h - Maps: part of <pagemap.h>, which includes it (include that, not this). */
#ifndef PAGEMAP_MAPS_H
#define PAGEMAP_MAPS_H

#ifndef PAGEMAP_H
#error "include <pagemap.h>: it includes <pagemap/maps.h> with what it needs"
#endif

/* What a mapping is, from its path field and inode. */
enum pm_map_kind {
	PM_MAP_ANON = 0,	/* no path, inode 0 */
	PM_MAP_FILE,		/* a path and an inode */
	PM_MAP_HEAP,		/* [heap] */
	PM_MAP_STACK,		/* [stack] */
	PM_MAP_VDSO,		/* [vdso] */
	PM_MAP_VVAR,		/* [vvar], [vvar_vclock]: VM_PFNMAP, always reads empty */
	PM_MAP_VSYSCALL,	/* [vsyscall]: above task_size, unreadable */
	PM_MAP_ANON_NAMED,	/* [anon:NAME] or [anon_shmem:NAME] */
	PM_MAP_SPECIAL,		/* any other [name] */
};

#define PM_PROT_READ	(1u << 0)
#define PM_PROT_WRITE	(1u << 1)
#define PM_PROT_EXEC	(1u << 2)
#define PM_MAP_SHARED	(1u << 3)	/* 's' in perms; otherwise private 'p' */

struct pm_mapping {
	uint64_t start, end;		/* [start, end) virtual */
	uint64_t offset;		/* file offset */
	uint32_t dev_major, dev_minor;
	uint64_t inode;
	uint32_t prot;			/* PM_PROT_*, PM_MAP_SHARED */
	char perms[5];			/* as printed, "rw-p" */
	enum pm_map_kind kind;
	bool deleted;			/* path ends with " (deleted)" (kept in path) */
	/* Its file is on hugetlbfs: pm_maps_next tells every kind (MAP_HUGETLB, MFD_HUGETLB, SHM_HUGETLB,
	   a hugetlbfs file) by effect, pm_maps_parse_line MAP_HUGETLB's /anon_hugepage only. Sits in what
	   was padding: the struct's size and offsets are those of 0.11. A mapping a caller fills by hand
	   for pm_usage_rss() or pm_quick_add() must be zeroed first (= { 0 } or memset): a byte left
	   from the stack here would count its pages as hugetlb. */
	bool hugetlb;
	const char *path;		/* bytes after the inode field, not NUL-terminated */
	size_t path_len;		/* may be 0 */
};

/*
 * pm_maps_parse_line - parse one /proc/PID/maps line (pure, no I/O).
 * @line, @len: the bytes, with or without the trailing newline; need not be
 * NUL-terminated. @out->path points into @line.
 * Returns 0, or -EINVAL if the line is malformed (start > end included).
 */
PM_API int pm_maps_parse_line(const char *line, size_t len, struct pm_mapping *out);

struct pm_maps;

/*
 * pm_maps_open - start streaming @t's mappings from ROOT/proc/PID/maps.
 * There is no limit on the number of mappings; memory use is one line.
 * Returns the iterator or NULL with errno (ENOENT, ESRCH, EACCES, ENOMEM).
 */
PM_API struct pm_maps *pm_maps_open(struct pm_target *t);

/*
 * pm_maps_next - the next mapping in address order, with hugetlb told by
 * its device: live, the kernel's own hugetlbfs mounts are learned once per
 * context by creating an empty MFD_HUGETLB memfd of each huge page size
 * (no page, no privilege), a user's mount from mountinfo; replayed, from
 * the capture's smaps (KernelPageSize), or the path rule where it has none.
 * Returns 0 with *@out set (borrowed until the next call), 1 at the end,
 * -EINVAL on a malformed line, or another -errno from reading.
 */
PM_API int pm_maps_next(struct pm_maps *it, const struct pm_mapping **out);

/* pm_maps_close - free the iterator. NULL is fine. */
PM_API void pm_maps_close(struct pm_maps *it);

#endif /* PAGEMAP_MAPS_H */
