/* runs.h - collect a walk's runs, sum them over ranges, compare back ends and /proc/PID/smaps (live tests). */
#ifndef PM_LIVE_RUNS_H
#define PM_LIVE_RUNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pagemap.h>

/* One run, with the mapping it lay in copied out (the walk's pointer is borrowed). */
struct run_rec {
	uint64_t start, end;
	uint32_t flags;
	uint64_t pfn;
	uint8_t swap_type;
	uint64_t swap_offset;
	uint64_t map_start, map_end;
	enum pm_map_kind kind;
	uint32_t prot;
};

struct runs {
	struct run_rec *v;
	size_t n, cap;
	uint32_t known;			/* pm_walk_known() of the walk */
	enum pm_backend backend;	/* pm_walk_backend() */
	unsigned wflags;		/* PM_WALK_* given */
	char desc[32];			/* "scan+entries" */
	uint64_t (*skip)[2];		/* [start, end) of mappings runs_collect_all left out */
	size_t nskip;
};

/* Mappings at least this big are sanitizer reservations (ASan's shadow is terabytes), never the layout's. */
#define RUNS_HUGE_MAPPING	(16ULL << 30)

/*
 * runs_collect - set @backend on @t's context, walk [@start, @end) with
 * @wflags and keep every run. Returns 0, or -errno from pm_walk_new or
 * pm_walk_next (the runs read so far are kept).
 */
int runs_collect(struct pm_target *t, struct pm_ctx *ctx, enum pm_backend backend, unsigned wflags,
		 uint64_t start, uint64_t end, struct runs *out);

/*
 * runs_collect_all - the whole address space of @t, as one walk of
 * [0, UINT64_MAX) when no mapping reaches RUNS_HUGE_MAPPING (a plain
 * build), else as walks of the gaps between such mappings, which are
 * recorded in @out->skip and left out of runs_vs_smaps: reading every
 * entry of ASan's 20 TiB of reservations would take minutes.
 */
int runs_collect_all(struct pm_target *t, struct pm_ctx *ctx, enum pm_backend backend, unsigned wflags,
		     struct runs *out);
void runs_free(struct runs *r);

/*
 * runs_clip - copy into @out the runs of @r cut to [@start, @end) rounded out
 * to pages, as a walk of that range would give them. Returns 0 or -ENOMEM.
 */
int runs_clip(const struct runs *r, uint64_t start, uint64_t end, unsigned page_size, struct runs *out);

/* runs_usage - pm_usage_add over the parts of the runs inside [@start, @end). */
struct pm_usage runs_usage(const struct runs *r, uint64_t start, uint64_t end);

/* runs_bytes - bytes inside [@start, @end) whose flags have every bit of @all and none of @none. */
uint64_t runs_bytes(const struct runs *r, uint64_t start, uint64_t end, uint32_t all, uint32_t none);

/*
 * runs_check_shape - runs are page aligned, non-empty, in address order,
 * inside their mapping, and tile every mapping without gaps. Prints each
 * problem; returns how many.
 */
size_t runs_check_shape(const struct runs *r, unsigned page_size);

/*
 * runs_compare - @a and @b describe the same pages: restricted to the
 * flags both walks know, and with adjacent equal runs of one mapping
 * merged, they are identical (start, end, flags, mapping). Prints the first
 * differences; returns how many.
 */
size_t runs_compare(const struct runs *a, const struct runs *b);

/*
 * runs_compare_settled - runs_compare(@pread, @scan), and while they differ
 * walk both again with the same @wflags, up to @tries more times: on a
 * loaded machine page cache of a file mapping is reclaimed or read back
 * between two walks. A real difference between the back ends persists.
 */
size_t runs_compare_settled(struct pm_target *t, struct pm_ctx *ctx, unsigned wflags, struct runs *pread,
			    struct runs *scan, int tries);

/*
 * runs_vs_smaps - per mapping, the walk's sums equal /proc/@pid/smaps:
 * Rss == present - zero pages; Swap == swapped (not shared mappings);
 * AnonHugePages + ShmemPmdMapped + FilePmdMapped == thp (when THP known);
 * Private_Clean + Private_Dirty == exclusive (when EXCLUSIVE known, in
 * anonymous mappings and the layout's own memfd and file); every
 * mapping walked, none invented. Prints each mismatch; returns how many.
 */
size_t runs_vs_smaps(const struct runs *r, pid_t pid);

/* runs_dump - print the runs inside [@start, @end) (for diagnosing a failure). */
void runs_dump(const struct runs *r, uint64_t start, uint64_t end);

#endif
