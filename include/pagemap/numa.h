/* pagemap/numa.h - NUMA: which node a process's memory is on: part of <pagemap.h>, which includes it (include that, not this). */
#ifndef PAGEMAP_NUMA_H
#define PAGEMAP_NUMA_H

#ifndef PAGEMAP_H
#error "include <pagemap.h>: it includes <pagemap/numa.h> with what it needs"
#endif

/* One node of ROOT/sys/devices/system/node. */
struct pm_numa_node {
	int id;				/* the N of nodeN */
	bool has_memory;		/* MemTotal > 0 */
	unsigned ncpus;			/* CPUs in its cpulist; 0: a memory-only node (a tier, CXL) */
	char cpulist[128];		/* as sysfs prints it ("0-3,8"), "" none or unreadable */
	int tier;			/* memory_tierN it belongs to (6.1+; lower is faster), -1 unknown */
	uint64_t mem_total, mem_free;	/* bytes, from nodeN/meminfo (0 unknown) */
	uint64_t promoted, demoted;	/* pages moved to/from it by tiering (nodeN/vmstat, 5.18+; 0 unknown) */
};

struct pm_numa;

/*
 * pm_numa_open - read the machine's nodes: CPUs, memory, distances, tiers,
 * and which frames each node holds (its memory blocks,
 * ROOT/sys/devices/system/node/nodeN/memoryM, block_size_bytes each).
 * Returns the handle, or NULL with errno: EOPNOTSUPP (no node directory:
 * a kernel without CONFIG_NUMA), ENOMEM, or an open error. The context
 * must outlive it.
 */
PM_API struct pm_numa *pm_numa_open(struct pm_ctx *ctx);

/* pm_numa_close - free the handle. NULL is fine. */
PM_API void pm_numa_close(struct pm_numa *n);

/* pm_numa_count - nodes, in node order; node indexes below are 0..count-1. */
PM_API size_t pm_numa_count(const struct pm_numa *n);

/* pm_numa_node - node @index, or NULL out of range. */
PM_API const struct pm_numa_node *pm_numa_node(const struct pm_numa *n, size_t index);

/* pm_numa_distance - the SLIT distance from node index @i to @j (10 local), -1 unknown. */
PM_API int pm_numa_distance(const struct pm_numa *n, size_t i, size_t j);

/* pm_numa_index_of_id - the index of node @id, -1 if no such node. */
PM_API int pm_numa_index_of_id(const struct pm_numa *n, int id);

/* pm_numa_index_of_cpu - the index of the node CPU @cpu belongs to, -1 unknown. */
PM_API int pm_numa_index_of_cpu(const struct pm_numa *n, unsigned cpu);

/*
 * pm_numa_index_of_pfn - the index of the node that holds frame @pfn, or
 * -1 when no memory block covers it (or sysfs has no memory blocks on a
 * machine of several nodes). *@next gets the first PFN at which the answer
 * may differ, so a run of frames costs one call per node range.
 */
PM_API int pm_numa_index_of_pfn(const struct pm_numa *n, uint64_t pfn, uint64_t *next);

/* Where the node of each page comes from. */
enum pm_numa_source {
	PM_NUMA_AUTO = 0,	/* frames if visible, else move_pages, else numa_maps */
	PM_NUMA_FRAMES,		/* each present page's frame number against the nodes' memory blocks (root) */
	PM_NUMA_MOVE_PAGES,	/* move_pages(2) asked for each present page's node (no move): ~30-50 ms/GiB */
	PM_NUMA_MAPS,		/* ROOT/proc/PID/numa_maps totals per mapping; classes by the mapping's kind */
};

/* The kinds of memory counted per node; disjoint, they sum to the node's bytes. */
enum pm_numa_class {
	PM_NUMA_ANON = 0,	/* private anonymous, including copied-on-write file pages */
	PM_NUMA_FILE,		/* page cache of a file */
	PM_NUMA_SHMEM,		/* shared memory: memfd, tmpfs, SysV, shared anonymous */
	PM_NUMA_HUGETLB,	/* hugetlbfs pages (of page_size below) */
	PM_NUMA_NCLASSES
};

/* One mapping's bytes per node; pointers valid until the next pm_numa_proc_next(). */
struct pm_numa_map {
	const struct pm_mapping *map;
	const char *policy;		/* its memory policy as numa_maps says ("default", "bind:1"), "" unknown */
	uint64_t page_size;		/* numa_maps kernelpagesize_kB in bytes (hugetlb: the huge size), 0 unknown */
	size_t nnodes;			/* pm_numa_count() + 1: the last slot holds bytes on no known node */
	const uint64_t (*bytes)[PM_NUMA_NCLASSES];	/* bytes[node index][class] */
	const uint64_t *thp;		/* thp[node index]: of those, bytes in PMD-mapped huge pages */
};

struct pm_numa_proc;

/*
 * pm_numa_proc_open - the bytes per node of every mapping of @t, by
 * @source (PM_NUMA_AUTO picks the best the reader may use;
 * pm_numa_proc_source() says which). FRAMES needs visible frame numbers
 * (EACCES otherwise); MOVE_PAGES needs the right to move the target's
 * pages (its own user, or CAP_SYS_NICE: EPERM otherwise) and a live
 * process (EOPNOTSUPP when replaying a tree); MAPS needs numa_maps.
 * Returns the handle or NULL with errno (also those of pm_walk_new).
 */
PM_API struct pm_numa_proc *pm_numa_proc_open(struct pm_target *t, struct pm_numa *n,
					      enum pm_numa_source source);

/*
 * pm_numa_proc_next - the next mapping in address order (mappings with no
 * pages in RAM included). Returns 0 with *@out, 1 at the end, or -errno
 * (-ESRCH: the process exited).
 */
PM_API int pm_numa_proc_next(struct pm_numa_proc *p, const struct pm_numa_map **out);

/* pm_numa_proc_source - the source in use (never AUTO). */
PM_API enum pm_numa_source pm_numa_proc_source(const struct pm_numa_proc *p);

/* pm_numa_source_name - "frames", "move_pages", "numa_maps" ("auto"). */
PM_API const char *pm_numa_source_name(enum pm_numa_source source);

/* pm_numa_proc_close - free it. NULL is fine. */
PM_API void pm_numa_proc_close(struct pm_numa_proc *p);

/*
 * pm_numa_locality - where @pid runs: @ran_on[i] is set for each node index
 * i one of its threads last ran on (task stat, field 39), @allowed[i] for
 * each node with a CPU in its Cpus_allowed_list. Both arrays hold
 * pm_numa_count() entries and are cleared first. Returns the number of
 * threads read, or -errno (-ESRCH gone).
 */
PM_API int pm_numa_locality(struct pm_numa *n, pid_t pid, bool *ran_on, bool *allowed);

#endif /* PAGEMAP_NUMA_H */
