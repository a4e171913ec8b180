/* pagemap/diff.h - Diff: what changed between two views of one process: part of <pagemap.h>, which includes it (include that, not this). */
#ifndef PAGEMAP_DIFF_H
#define PAGEMAP_DIFF_H

#ifndef PAGEMAP_H
#error "include <pagemap.h>: it includes <pagemap/diff.h> with what it needs"
#endif

/*
 * Diff: pm_diff_* - compare one process as two targets show it (two
 * snapshots, two captured trees, a snapshot and the live process): its
 * mappings matched by start, end, offset, protection and path, and the pages
 * of each matched mapping walked in lockstep. Every page counts in at most
 * one of appeared, freed, swapout, swapin, written, moved; thp_formed,
 * thp_split and uffdwp count beside those.
 */
struct pm_diff_bytes {
	uint64_t appeared;	/* neither present nor swapped in A, present or swapped in B */
	uint64_t freed;		/* present or swapped in A, neither in B */
	uint64_t swapout;	/* present in A, swapped in B */
	uint64_t swapin;	/* swapped in A, present in B */
	uint64_t written;	/* present in both, and a write proven: the zero page replaced (not by a huge
				   page), a page-cache page become anonymous, an anonymous page shared in A
				   alone on another frame in B (copy-on-write broken), or soft-dirty gained
				   (not where a huge page formed): pagemap-diff(1). The exclusive bit gained
				   on the same frame is no write (another mapper left). Before 0.11 that
				   counted here, and a page-cache page become anonymous in moved. */
	uint64_t moved;		/* present in both, frames visible in both, on another frame with no write
				   proven: migration, compaction, or copy-on-write broken by a sharing that
				   began and ended in between (`pagemap diff`'s NEW_FRAME) */
	uint64_t thp_formed;	/* present in both, PMD-mapped (THP) in B only */
	uint64_t thp_split;	/* present in both, PMD-mapped in A only */
	uint64_t uffdwp;	/* the uffd-wp bit differs */
};

enum pm_diff_status {
	PM_DIFF_MATCHED = 0,	/* in both: bytes says what changed */
	PM_DIFF_UNMAPPED,	/* in A only */
	PM_DIFF_MAPPED,		/* in B only */
};

/* One mapping of the comparison, as pm_diff_process() reports it. */
struct pm_diff_row {
	enum pm_diff_status status;
	const struct pm_mapping *map;	/* A's (MATCHED, UNMAPPED) or B's (MAPPED); path NUL-terminated; borrowed */
	struct pm_diff_bytes bytes;	/* MATCHED only; zero otherwise */
};

/* Called once per mapping, in address order; a non-zero return stops the diff and is returned. */
typedef int (*pm_diff_fn)(void *data, const struct pm_diff_row *row);

/*
 * pm_diff_range - classify the pages of [@start, @end) of @a (before) and
 * @b (after) into *@out (zeroed first). Both walks read entries
 * (PM_WALK_ENTRIES); a page outside every run of a side counts as neither
 * present nor swapped there. Returns 0, -EINVAL (@start > @end, or the
 * targets' page sizes differ), or the errors of pm_walk_new/pm_walk_next.
 */
PM_API int pm_diff_range(struct pm_target *a, struct pm_target *b, uint64_t start, uint64_t end,
			 struct pm_diff_bytes *out);

/*
 * pm_diff_process - compare every mapping of @a (before) with @b (after)
 * and call @fn once per mapping: matched ones with their byte totals, the
 * others as UNMAPPED or MAPPED. A mapping whose bounds changed (a heap that
 * grew) is one UNMAPPED and one MAPPED row. Memory use is two maps lines and
 * the walks' batches. Returns 0, what @fn returned, or -errno as
 * pm_maps_open, pm_maps_next and pm_diff_range.
 */
PM_API int pm_diff_process(struct pm_target *a, struct pm_target *b, pm_diff_fn fn, void *data);

/* One stretch of a matched mapping whose pages all changed alike, as pm_diff_pieces() reports it. */
struct pm_diff_piece {
	uint64_t start, end;		/* page-aligned, inside one mapping matched in both */
	const struct pm_mapping *map;	/* A's mapping the piece lies in; path NUL-terminated; borrowed */
	struct pm_diff_bytes bytes;	/* this piece's change: each category is 0 or end - start */
};

/* Called once per changed piece, in address order; a non-zero return stops the diff and is returned. */
typedef int (*pm_diff_piece_fn)(void *data, const struct pm_diff_piece *piece);

/*
 * pm_diff_pieces - pm_diff_process() with the addresses: match the mappings
 * of @a (before) and @b (after) as pm_diff_process() does, and within each
 * matched mapping call @piece for every stretch of pages that changed alike
 * (pm_diff_bytes_any() of its bytes is true), in address order; then call
 * @row for that mapping as pm_diff_process() would (unmatched mappings get
 * only their @row call: their pages count nowhere). Either callback may be
 * NULL. Pieces are not maximal: two adjacent ones may hold the same change.
 * The pieces of a mapping add up (pm_diff_bytes_add) to its row's bytes.
 * Memory use is that of pm_diff_process(). Returns 0, what a callback
 * returned, or -errno as pm_diff_process().
 */
PM_API int pm_diff_pieces(struct pm_target *a, struct pm_target *b, pm_diff_fn row, pm_diff_piece_fn piece,
			  void *data);

/* pm_diff_bytes_any - does any category of @b hold bytes? Pure. */
PM_API bool pm_diff_bytes_any(const struct pm_diff_bytes *b);

/* pm_diff_bytes_add - add @b to @sum, category by category. Pure. */
PM_API void pm_diff_bytes_add(struct pm_diff_bytes *sum, const struct pm_diff_bytes *b);

#endif /* PAGEMAP_DIFF_H */
