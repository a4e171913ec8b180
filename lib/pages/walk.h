/* walk.h - the walker's handle, shared by walk.c (mappings, segments, runs) and walk_entries.c (the pread back end's entries) (inside libpagemap only). */
#ifndef PMI_WALK_H
#define PMI_WALK_H

#include <time.h>
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

#define PMI_KINDS	512u	/* values of an entry's bits 55-63 */

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
	bool hybrid;			/* auto back end, frames shown: each mapping goes by the cheaper reader (walk_cost.c) */
	bool decided;			/* hybrid: the current mapping's way is chosen */
	bool sampled;			/* hybrid: the current mapping's sample is measured (sample_*) */
	bool explored;			/* hybrid: its sample was read by pread to measure pread */
	bool sample_huge;		/* the sample holds a huge page whose entries are wanted */
	uint64_t sample_pages;		/* pages the sample spans */
	uint64_t sample_reads;		/* entries the scan's way reads there (regions needing them, gaps read through) */
	uint64_t scan_ns, scan_pages;	/* the last scan call: its time and the pages it walked */
	bool scan_timed;		/* the last scan call was timed (it could be a sample: pmi_walk_call_may_sample) */
	uint64_t scan_call_ns;		/* what any scan call costs, + 1 (0: not timed yet) */
	uint64_t pread_ns, pread_pages;	/* hybrid: the time and entries of the walk's whole-stretch preads */
	bool seg_pread;			/* the segment is a mapping's rest read by pread: huge blocks told by frames */
	uint64_t free_end;		/* hybrid: scans below here are not bounded (a mapping that keeps the scan) */

	struct pm_run pending, out;
	bool has_pending;
	struct pm_flag_bytes *sums;	/* pmi_walk_sum_mapping: pages are summed here by flag, no run is built */

	/* pmi_walk_sum_plain: entries counted by bits 55-63 (zero between calls), and the first of each. */
	uint32_t kind_cnt[PMI_KINDS], kind_at[PMI_KINDS];

	/* The last empty [0] and present [1] entries decoded: their flags depend on bits 55-63 alone. */
	uint64_t memo_key[2];		/* (raw >> 55) + 1; 0: none yet */
	struct pm_entry memo[2];

	/* Hidden frames with swap on: smaps Swap of each mapping tells uffd-wp markers from swap. */
	struct pmi_smaps_swap *smaps;
	size_t nsmaps;
	int smaps_err;			/* 1: not read yet, 0: read, <0: could not be read */
	int map_swap;			/* the current mapping has swap: -1 not asked yet, 0, 1 */
};

/*
 * The cost model's clock: this thread's CPU time, which a preemption on a
 * busy machine does not inflate (a wall-clock stall in a 100 us sample
 * could send terabytes of empty shadow to pread). Hybrid walks only.
 */
static inline uint64_t pmi_walk_now(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Hybrid: pages one bounded scan walks (32 MiB of 4 KiB pages), the sample a mapping is decided on. */
#define PROBE_PAGES	8192u

/* Gaps of up to this many pages between regions whose entries are read are read through (pmi_scan_readahead). */
#define READAHEAD_GAP	512u

/*
 * Can a bounded scan call from a mapping's rest of @rest pages stop before
 * that mapping's end, so be the sample its reader is chosen on? Each region
 * it reports holds a page at least, so one that may report @max_pages pages
 * in @vec_len regions sees a shorter rest whole, and nothing is left to
 * choose there. Only such calls are timed: in a small process every mapping
 * is seen whole by one call, and its clock reads (a system call each, the
 * first about 5 us) were all the cost model added to a `sleep`'s `maps`.
 */
static inline bool pmi_walk_call_may_sample(uint64_t rest_pages, uint64_t max_pages, uint64_t vec_len)
{
	return rest_pages >= max_pages || rest_pages >= vec_len;
}

/* walk.c: the flags a region's scan categories give. */
uint32_t pmi_walk_cat_flags(const struct pm_walk *w, uint64_t categories);
/* walk.c: must the entries of a region with these flags be read? */
bool pmi_walk_needs_entries(const struct pm_walk *w, uint32_t fl);
/* walk.c: the next PAGEMAP_SCAN call of the scan back end into w->vec (timed into scan_ns, scan_pages). */
int pmi_walk_scan_refill(struct pm_walk *w);
/* walk.c: make [start, end) of the mapping the current segment. */
void pmi_walk_set_seg(struct pm_walk *w, uint64_t start, uint64_t end, uint32_t flags, bool entries);
/* walk.c: the flags a walk by the scan (@scan) or by pread can tell. */
uint32_t pmi_walk_known_how(const struct pm_walk *w, bool scan);
/* walk_cost.c: may this walk read some mappings by pread and others by the scan, answering alike? */
bool pmi_walk_hybrid_ok(const struct pm_walk *w);
/* The figures a mapping's reader is chosen on (walk_cost.c): CPU ns, pages and entries. */
struct pmi_walk_costs {
	uint64_t scan_ns, scan_pages;	/* the sample's scan call: its time, the pages it reported */
	uint64_t call_ns;		/* what any scan call costs (one page) */
	uint64_t pread_ns, pread_pages;	/* the walk's preads so far */
	uint64_t sample_pages;		/* pages the sample spans */
	uint64_t sample_reads;		/* entries the scan's way reads there */
};
/* walk_cost.c: true when pread alone is the cheaper way (no pread measured: false); the two costs per page out. */
bool pmi_walk_cost_choose(const struct pmi_walk_costs *c, double *scan, double *pread);
/* walk_cost.c: choose the current mapping's reader. 1: the segment is a stretch by pread, 0: scan on, <0: error. */
int pmi_walk_decide(struct pm_walk *w);

/* walk.c: extend the pending run by @len bytes or start a new one. Returns 1 when a finished run is in w->out. */
int pmi_walk_add_pages(struct pm_walk *w, uint64_t addr, uint64_t len, uint32_t flags, const struct pm_entry *e);

/* walk.c: the scan back end's read-ahead: the end of one pread from @lim_vpn that covers the next regions needing entries. */
uint64_t pmi_scan_readahead(const struct pm_walk *w, uint64_t lim_vpn, uint64_t cap_vpn);
/* walk_entries.c: read entries from @vpn up to the next batch boundary or the segment's end. */
int pmi_walk_refill(struct pm_walk *w, uint64_t vpn);
/* walk_entries.c: pages from @addr (in the buffer) to add as one piece. */
uint64_t pmi_walk_entry_piece(struct pm_walk *w, uint64_t addr);
/* walk_entries.c: sums only, the plain entries from @addr counted by kind; the pages done, 0: take a piece. */
uint64_t pmi_walk_sum_plain(struct pm_walk *w, uint64_t addr);
/* walk_entries.c: decode the @n pages at @addr (in the buffer, all alike) and add them. */
int pmi_walk_add_entries(struct pm_walk *w, uint64_t addr, uint64_t n);

#endif
