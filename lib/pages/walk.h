/* walk.h - the walker's handle, shared by walk.c (mappings, segments, runs) and walk_entries.c (the pread back end's entries) (inside libpagemap only). */
#ifndef PMI_WALK_H
#define PMI_WALK_H

#include "compat.h"
#include "pages.h"
#include "smaps.h"

#ifndef BATCH_PAGES	/* the fuzz build makes batches small: cheaper runs, more batch boundaries */
#define BATCH_PAGES	65536u	/* entries per pread (512 KiB), a multiple of every PMD's page count */
#endif
/*
 * The entry buffer starts at 32 KiB, on the heap, and grows to BATCH_PAGES on
 * the first read that needs more. Allocated whole at once it was a mapping of
 * its own (malloc's mmap threshold is 128 KiB), and its munmap, a TLB flush,
 * was among the costs of a small process's `maps` (bench/README.md, "The fixed cost of a command").
 */
#ifndef BUF_FIRST
#define BUF_FIRST	4096u
#endif

/* A stretch of one mapping: either its state is known from scan categories, or entries must be read. */
struct segment {
	uint64_t start, end;
	uint32_t flags;		/* known flags, or flags to add to each entry's */
	bool entries;
};

struct pm_walk {
	struct pm_target *t;
	const struct pm_features *f;
	unsigned flags;			/* PM_WALK_* */
	unsigned iflags;		/* PM_IWALK_*: asked by callers inside the library */
	enum pm_backend backend;
	uint32_t known;
	uint64_t start, end;
	uint64_t psize, pmd_size;
	unsigned shift;

	struct pm_maps *maps;
	struct pm_mapping map;		/* current mapping, as maps gave it */
	uint64_t map_start, map_end;	/* its part inside [start, end) */
	bool have_map;
	bool unreadable;		/* [vvar]/[vsyscall] under PMI_IWALK_ALLMAPS: never read */
	uint64_t map_cur;		/* first address of the mapping not yet segmented */
	unsigned map_line;		/* maps lines read so far */
	uint64_t prev_end;		/* end of the last mapping read: a replayed maps must ascend */

	struct segment seg;
	uint64_t seg_cur;		/* next address of seg to turn into runs */

	uint64_t *buf;			/* entries [buf_vpn, buf_vpn + buf_n) */
	uint64_t buf_vpn;
	size_t buf_n;
	size_t buf_cap;			/* entries buf holds: BUF_FIRST, BATCH_PAGES once a read needs more */
	uint64_t thp_end;		/* pread: end of the PMD block found huge */
	struct pm_kpage *kpage;		/* kpageflags to confirm a huge block, or NULL */
	bool kpage_tried;		/* opened on the first huge block, once */

	struct page_region *vec;	/* scan results for the current mapping */
	size_t vec_n, vec_pos;
	uint64_t scan_next;
	uint64_t scan_mask;		/* the categories asked for: every one of cat[] */
	struct {
		uint64_t category;	/* PAGE_IS_* */
		uint32_t flag;		/* the PM_PAGE_* it gives (pm_flag_facts) */
	} cat[PM_PAGE_NFLAGS];
	unsigned ncat;
	uint64_t scan_far;		/* one call may scan ahead to here, past the mapping (0: never; see scan_refill) */
	bool hybrid;			/* auto back end, entries wanted, frames shown: 4 KiB mappings go by pread (decide_mapping) */
	bool decided;			/* hybrid: the current mapping's way is chosen */
	bool seg_pread;			/* the segment is a mapping's rest read by pread: huge blocks told by frames */
	uint64_t free_end;		/* hybrid: scans below here are not bounded (a mapping that keeps the scan) */

	struct pm_run pending, out;
	bool has_pending;
	struct pm_flag_bytes *sums;	/* pmi_walk_sum_mapping: pages are summed here by flag, no run is built */

	/* The last empty [0] and present [1] entries decoded: their flags depend on bits 55-63 alone. */
	uint64_t memo_key[2];		/* (raw >> 55) + 1; 0: none yet */
	struct pm_entry memo[2];

	/* Hidden frames with swap on: smaps Swap of each mapping tells uffd-wp markers from swap. */
	struct pmi_smaps_swap *smaps;
	size_t nsmaps;
	int smaps_err;			/* 1: not read yet, 0: read, <0: could not be read */
	int map_swap;			/* the current mapping has swap: -1 not asked yet, 0, 1 */
};

/* walk.c: extend the pending run by @len bytes or start a new one. Returns 1 when a finished run is in w->out. */
int pmi_walk_add_pages(struct pm_walk *w, uint64_t addr, uint64_t len, uint32_t flags, const struct pm_entry *e);

/* walk.c: the scan back end's read-ahead: the end of one pread from @lim_vpn that covers the next regions needing entries. */
uint64_t pmi_scan_readahead(const struct pm_walk *w, uint64_t lim_vpn, uint64_t cap_vpn);
/* walk_entries.c: read entries from @vpn up to the next batch boundary or the segment's end. */
int pmi_walk_refill(struct pm_walk *w, uint64_t vpn);
/* walk_entries.c: pages from @addr (in the buffer) to add as one piece. */
uint64_t pmi_walk_entry_piece(struct pm_walk *w, uint64_t addr);
/* walk_entries.c: decode the @n pages at @addr (in the buffer, all alike) and add them. */
int pmi_walk_add_entries(struct pm_walk *w, uint64_t addr, uint64_t n);

#endif
