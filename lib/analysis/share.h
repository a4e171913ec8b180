/* share.h - the pm_share handle, shared by share.c (building, results), share_store.c (page records, spilled in sorted runs) and share_tally.c (the frame join) (inside libpagemap only). */
#ifndef PMI_SHARE_H
#define PMI_SHARE_H

#include <limits.h>
#include <sys/types.h>
#include "pages.h"

/* share.c: the counting step apart from walking and kpagecount, so unit tests can feed it synthetic pages. */
#define PMI_SHARE_KEY_SWAP	(1ULL << 63)	/* a page key with this bit is a swap slot: type << 50 | offset */
/* Look up @n frames (distinct, ascending PFNs) as pm_kpage_lookup does; 0 or -errno. */
typedef int (*pmi_share_lookup_fn)(void *data, struct pm_frame *frames, size_t n);
/* A handle without context or pm_kpage (pm_share_add refuses it); NULL with errno. */
struct pm_share *pmi_share_alloc(uint64_t page_size);
/* Start the next process; the maps pushed next are its. 0 or -errno. */
int pmi_share_push_target(struct pm_share *s, pid_t pid);
/* A mapping of the last process (its path is copied); the pages pushed next are its. 0 or -errno. */
int pmi_share_push_map(struct pm_share *s, const struct pm_mapping *m);
/* One page of the last mapping: a PFN, or PMI_SHARE_KEY_SWAP | type << 50 | offset. 0 or -errno. */
int pmi_share_push_page(struct pm_share *s, uint64_t key);
/* @n pages of the last mapping from @key on (frames or slots of one swap type, +1 each). 0 or -errno. */
int pmi_share_push_pages(struct pm_share *s, uint64_t key, uint64_t n);
/* Spill the page records to a temporary file each time @records runs are held (tests: small; default 262144). */
void pmi_share_set_spill(struct pm_share *s, size_t records);
/* pm_share_finish with @fn for the lookups: called with at most 16384 distinct frames at a time, ascending. */
int pmi_share_tally(struct pm_share *s, pmi_share_lookup_fn fn, void *data);

#ifndef SHARE_BATCH	/* the fuzz build makes batches small: cheaper runs, more batch boundaries */
#define SHARE_BATCH	16384		/* distinct frames per lookup: 512 KiB of pm_frame */
#endif
#ifndef SHARE_MEM_RECS	/* records held in memory before a sorted run goes to the spill file: 4 MiB */
#define SHARE_MEM_RECS	262144
#endif
#define SHARE_DEAD	UINT_MAX	/* pm_share_map.target of a mapping whose process failed after a spill */

/*
 * One run of pages of one mapping: keys @key .. @key + @len - 1 (frames, or
 * swap slots of one swap type), 16 bytes. Fork-shared and THP memory comes
 * in long runs of contiguous frames, so a run stands for many pages.
 */
struct share_rec {
	uint64_t key;
	uint32_t len;
	uint32_t map;
};

/* A sorted run of records in the spill file. */
struct share_chunk {
	off_t off;
	size_t n;
};

/* One source of the merge: a chunk read back in pieces, or the records still in memory. */
struct share_src {
	struct share_rec *buf;
	size_t i, n, cap;	/* next record, records in buf, buf's size */
	off_t off;		/* in the spill file: where the rest of the chunk starts */
	size_t left;		/* records of the chunk not read yet */
};

/*
 * The page records: in memory up to a limit, then sorted and appended to an
 * unlinked temporary file as one chunk; read back merged in key order.
 */
struct share_store {
	struct share_rec *recs;
	size_t n, cap, limit;
	int fd;			/* the spill file, -1 until the first spill */
	off_t end;
	struct share_chunk *chunks;
	size_t nchunks, cap_chunks;
	struct share_src *src;	/* merging: one per chunk, then the records in memory */
	uint32_t *heap;		/* sources by their next record, a binary min-heap */
	size_t nheap;
	struct share_rec *bufs;
};

/* Pairs found by (a, b), in an open-addressing index over a growing array. */
struct share_pair {
	uint32_t a, b;
	struct pm_share_pair p;
};

struct share_pairtab {
	struct share_pair *v;
	size_t n, cap;
	uint32_t *slot;		/* index + 1 into v, 0 = empty; size is a power of two */
	size_t nslot;
};

struct pm_share {
	struct pm_ctx *ctx;
	struct pm_kpage *k;
	bool own_k;
	int k_error;		/* errno of opening our own pm_kpage */
	uint64_t page_size;

	pid_t *pids;		/* per target, in pm_share_add order */
	unsigned ntargets, cap_targets;
	struct pm_share_map *maps;
	size_t nmaps, cap_maps;
	bool any_dead;		/* some maps have target SHARE_DEAD */
	struct share_store st;

	bool finished;
	struct pm_share_sum *tsum;	/* per target */
	struct pm_share_sum total;
	struct share_pairtab mp;	/* mapping pairs */
	struct share_pairtab pp;	/* process pairs */
	size_t map_it, pair_it;
};

/*
 * share.c: forget the last target, added when the handle had @nmaps maps,
 * @nrecs records in memory and @nchunks spilled (pm_share_add's failure path).
 */
void pmi_share_pop_target(struct pm_share *s, size_t nmaps, size_t nrecs, size_t nchunks);

/* share_store.c */
void pmi_store_init(struct share_store *st, size_t limit);
void pmi_store_free(struct share_store *st);
/* Add @len keys from @key of mapping @map (joined to the last run when they continue it). 0 or -errno. */
int pmi_store_push(struct share_store *st, uint64_t key, uint64_t len, uint32_t map);
/* Start reading back, in (key, map) order; the store takes no more records. 0 or -errno. */
int pmi_store_rewind(struct share_store *st);
/* The next record into *@out: 0, 1 at the end, or -errno (a read of the spill file). */
int pmi_store_next(struct share_store *st, struct share_rec *out);

/* share_tally.c */
int pmi_share_sweep(struct pm_share *s, pmi_share_lookup_fn fn, void *data);
void pmi_pairtab_free(struct share_pairtab *t);
int pmi_pair_cmp(const void *x, const void *y);

#endif
