/* snapshot_diff.c - what changed between two views of one process: mappings matched, pages walked in lockstep. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "base.h"
#include "snapshot_source.h"
#include "snapshot_words.h"

#define HELD (PM_PAGE_PRESENT | PM_PAGE_SWAPPED | PM_PAGE_NONSWAP)

bool pm_diff_bytes_any(const struct pm_diff_bytes *b)
{
	return b->appeared || b->freed || b->swapout || b->swapin || b->written || b->moved || b->thp_formed ||
	       b->thp_split || b->uffdwp;
}

void pm_diff_bytes_add(struct pm_diff_bytes *sum, const struct pm_diff_bytes *b)
{
	sum->appeared += b->appeared;
	sum->freed += b->freed;
	sum->swapout += b->swapout;
	sum->swapin += b->swapin;
	sum->written += b->written;
	sum->moved += b->moved;
	sum->thp_formed += b->thp_formed;
	sum->thp_split += b->thp_split;
	sum->uffdwp += b->uffdwp;
}

/* The frame of page @x of run @r: +1 per page, except a small zero-page run (one frame for all). */
static uint64_t frame_at(const struct pm_run *r, uint64_t x, unsigned shift)
{
	if ((r->flags & PM_PAGE_ZERO) && !(r->flags & PM_PAGE_THP))
		return r->pfn;
	return r->pfn + ((x - r->start) >> shift);
}

/*
 * A page present in both on another frame: was it written? Only what proves
 * a write counts (man pagemap-diff(1), "What counts as written"):
 * - a page-cache page of a private mapping replaced by an anonymous one: a
 *   private file page gets an anonymous copy only on a write;
 * - soft-dirty gained (A's page was clean), unless a huge page formed in
 *   between: khugepaged marks the huge page it makes dirty;
 * - an anonymous page shared in A (the exclusive bit clear: the kernel saw a
 *   map count above 1) and alone in B: copy-on-write broken by our write.
 * A page-cache page on another frame was reclaimed and read again or
 * migrated; an exclusive page on another frame was migrated, compacted,
 * swapped out and in, or copied by a write while a sharing began and ended
 * between the snapshots (a fork whose child exited): frames alone cannot
 * tell these apart, so they count as moved.
 */
static bool new_frame_written(uint32_t fa, uint32_t fb)
{
	if (fb & PM_PAGE_FILE)
		return false;
	if (fa & PM_PAGE_FILE)
		return true;
	if (!(fa & PM_PAGE_SOFTDIRTY) && (fb & PM_PAGE_SOFTDIRTY) && !(~fa & fb & PM_PAGE_THP))
		return true;
	return !(fa & PM_PAGE_EXCLUSIVE) && (fb & PM_PAGE_EXCLUSIVE);
}

/*
 * A page present in both. Frames advance together page by page in both
 * runs, so one comparison at @x holds for the whole segment. The exclusive
 * bit gained on the same frame proves no write: another process stopped
 * mapping the page (its map count dropped).
 */
static void classify_present(const struct pm_run *ra, const struct pm_run *rb, uint64_t x, uint64_t n,
			     unsigned shift, struct pm_diff_bytes *d)
{
	uint32_t fa = ra->flags, fb = rb->flags;
	bool frames = (fa & fb & PM_PAGE_FRAME) != 0;

	if ((fb & PM_PAGE_THP) && !(fa & PM_PAGE_THP))
		d->thp_formed += n;
	if ((fa & PM_PAGE_THP) && !(fb & PM_PAGE_THP))
		d->thp_split += n;
	if (frames && (fa & PM_PAGE_ZERO) && !(fb & PM_PAGE_ZERO)) {
		/*
		 * A write fault replaces the zero page; a huge page in B may be khugepaged's, filled
		 * from the 4 KiB zero page. khugepaged never collapses the huge zero page: replaced
		 * by a huge page, it was written.
		 */
		if ((fb & PM_PAGE_THP) && !(fa & PM_PAGE_THP))
			d->moved += n;
		else
			d->written += n;
	} else if (frames && frame_at(ra, x, shift) != frame_at(rb, x, shift)) {
		if (new_frame_written(fa, fb))
			d->written += n;
		else
			d->moved += n;
	} else if (!(fa & PM_PAGE_SOFTDIRTY) && (fb & PM_PAGE_SOFTDIRTY) && !(~fa & fb & PM_PAGE_THP)) {
		d->written += n;	/* the same frame (or frames unseen): written since the bits were cleared */
	} else if (!frames && (fa & PM_PAGE_FILE) && !(fb & PM_PAGE_FILE)) {
		d->written += n;	/* frames unseen: a private file page replaced by an anonymous copy */
	}
}

/* Classify @n bytes at @x whose state is @ra in A and @rb in B (NULL: no run there, as if not held). */
static void classify(const struct pm_run *ra, const struct pm_run *rb, uint64_t x, uint64_t n, unsigned shift,
		     struct pm_diff_bytes *d)
{
	uint32_t fa = ra ? ra->flags : 0, fb = rb ? rb->flags : 0;

	if (!(fa & HELD) && (fb & HELD))
		d->appeared += n;
	else if ((fa & HELD) && !(fb & HELD))
		d->freed += n;
	else if ((fa & PM_PAGE_PRESENT) && (fb & PM_PAGE_SWAPPED))
		d->swapout += n;
	else if ((fa & PM_PAGE_SWAPPED) && (fb & PM_PAGE_PRESENT))
		d->swapin += n;
	else if ((fa & fb & PM_PAGE_PRESENT))
		classify_present(ra, rb, x, n, shift, d);
	if ((fa ^ fb) & PM_PAGE_UFFD_WP)
		d->uffdwp += n;
}

struct side {
	struct pm_walk *w;
	const struct pm_run *r;	/* the current run, NULL before the first and after the last */
	bool done;
};

/* Move @s to the first run that ends after @x. Returns 0 or -errno. */
static int side_reach(struct side *s, uint64_t x)
{
	int rc;

	while (!s->done && (!s->r || s->r->end <= x)) {
		rc = pm_walk_next(s->w, &s->r);
		if (rc < 0)
			return rc;
		if (rc > 0) {
			s->done = true;
			s->r = NULL;
		}
	}
	return 0;
}

/* The run of @s that holds @x (or NULL), and lower *@seg_end to where that answer changes. */
static const struct pm_run *side_at(const struct side *s, uint64_t x, uint64_t *seg_end)
{
	if (!s->r)
		return NULL;
	if (s->r->start > x) {
		if (s->r->start < *seg_end)
			*seg_end = s->r->start;
		return NULL;
	}
	if (s->r->end < *seg_end)
		*seg_end = s->r->end;
	return s->r;
}

/* Where a diff's results go: rows and pieces (either callback may be NULL), and the mapping of the pieces. */
struct piece_sink {
	pm_diff_fn row;
	pm_diff_piece_fn fn;
	void *data;
	const struct pm_mapping *map;
};

/* Walk [@start, @end) of both in lockstep, adding to *@out; each stretch where something changed goes to @sink. */
static int walk_range(struct pm_target *a, struct pm_target *b, uint64_t start, uint64_t end,
		      struct pm_diff_bytes *out, const struct piece_sink *sink)
{
	struct side sa = { 0 }, sb = { 0 };
	unsigned shift = a->decode.page_shift;
	uint64_t x = start, seg_end;
	const struct pm_run *ra, *rb;
	int rc = 0;

	sa.w = pm_walk_new(a, start, end, PM_WALK_ENTRIES);
	sb.w = sa.w ? pm_walk_new(b, start, end, PM_WALK_ENTRIES) : NULL;
	if (!sb.w) {
		rc = -errno;
		goto out;
	}
	while (x < end) {
		struct pm_diff_piece p = { .map = sink ? sink->map : NULL };

		if ((rc = side_reach(&sa, x)) < 0 || (rc = side_reach(&sb, x)) < 0)
			goto out;
		if (sa.done && sb.done)
			break;
		seg_end = end;
		ra = side_at(&sa, x, &seg_end);
		rb = side_at(&sb, x, &seg_end);
		classify(ra, rb, x, seg_end - x, shift, &p.bytes);
		pm_diff_bytes_add(out, &p.bytes);
		p.start = x;
		p.end = seg_end;
		if (sink && sink->fn && pm_diff_bytes_any(&p.bytes) && (rc = sink->fn(sink->data, &p)) != 0)
			goto out;
		x = seg_end;
	}
out:
	pm_walk_free(sa.w);
	pm_walk_free(sb.w);
	return rc;
}

/*
 * Classify [@start, @end) into *@out; each stretch where something changed
 * also goes to @sink (if any). Two members of one series skip the stretches
 * whose pagemap words are one stored chunk on both sides (nothing changed
 * there; no word is decoded to tell, unless the kpageflags words differ:
 * then a shared chunk is decoded once, for huge page candidates): the rest
 * is walked.
 * PAGEMAP_DIFF_WALK (any value) walks everything, for tests.
 */
static int diff_range(struct pm_target *a, struct pm_target *b, uint64_t start, uint64_t end,
		      struct pm_diff_bytes *out, const struct piece_sink *sink)
{
	unsigned shift = a->decode.page_shift;
	const struct pm_features *f = pm_ctx_features(a->ctx);
	uint64_t x = start, from, upto, block = f && f->pmd_size ? f->pmd_size >> shift : 0;
	struct pmi_snap_words *wa, *wb;
	int rc = 0, same;

	memset(out, 0, sizeof(*out));
	if (shift != b->decode.page_shift || start > end)
		return -EINVAL;
	wa = pmi_snap_source_words(a->ctx);
	wb = pmi_snap_source_words(b->ctx);
	if (!wa || !wb || getenv("PAGEMAP_DIFF_WALK"))	/* the fallback, forced */
		return walk_range(a, b, start, end, out, sink);
	while (x < end && !rc) {
		for (from = x; x < end; x = upto << shift) {	/* the stretch to walk: up to the next same one */
			same = pmi_snap_words_same(wa, a->pagemap_fd, wb, b->pagemap_fd, x >> shift,
						   (end - 1) / ((uint64_t)1 << shift) + 1, block,
						   &upto);
			if (same < 0)
				return same;
			if (same)
				break;
		}
		if (from < x && (rc = walk_range(a, b, from, x < end ? x : end, out, sink)))
			break;
		if (x < end)
			x = upto << shift;	/* the same stored chunk on both sides: skipped */
	}
	return rc;
}

int pm_diff_range(struct pm_target *a, struct pm_target *b, uint64_t start, uint64_t end, struct pm_diff_bytes *out)
{
	return diff_range(a, b, start, end, out, NULL);
}

/* One side's maps iterator with its current mapping copied out (the other side advances meanwhile). */
struct mside {
	struct pm_maps *it;
	struct pm_mapping m;	/* path points into buf */
	char *buf;
	size_t cap;
	bool done;
};

static int mside_next(struct mside *s)
{
	const struct pm_mapping *m;
	char *nb;
	int rc = pm_maps_next(s->it, &m);

	if (rc < 0)
		return rc;
	if (rc > 0) {
		s->done = true;
		return 0;
	}
	if (m->path_len + 1 > s->cap) {
		if (!(nb = realloc(s->buf, m->path_len + 1)))
			return -ENOMEM;
		s->buf = nb;
		s->cap = m->path_len + 1;
	}
	s->m = *m;
	if (m->path_len)
		memcpy(s->buf, m->path, m->path_len);
	s->buf[m->path_len] = '\0';
	s->m.path = s->buf;
	return 0;
}

/* The same mapping in both: start, end, offset, protection and path (ASLR or a remap make it another). */
static bool same_mapping(const struct pm_mapping *x, const struct pm_mapping *y)
{
	return x->start == y->start && x->end == y->end && x->offset == y->offset && x->prot == y->prot &&
	       x->path_len == y->path_len && !memcmp(x->path, y->path, x->path_len);
}

static int emit_one(struct mside *s, enum pm_diff_status st, const struct piece_sink *k)
{
	struct pm_diff_row row = { .status = st, .map = &s->m };
	int rc = k->row ? k->row(k->data, &row) : 0;

	return rc ? rc : mside_next(s);
}

static int emit_matched(struct pm_target *a, struct pm_target *b, struct mside *sa, struct mside *sb,
			const struct piece_sink *k)
{
	struct pm_diff_row row = { .status = PM_DIFF_MATCHED, .map = &sa->m };
	struct piece_sink pieces = *k;
	int rc;

	pieces.map = &sa->m;
	rc = diff_range(a, b, sa->m.start, sa->m.end, &row.bytes, &pieces);
	if (rc != 0 || (k->row && (rc = k->row(k->data, &row)) != 0))
		return rc;
	if ((rc = mside_next(sa)) < 0)
		return rc;
	return mside_next(sb);
}

/* One step of the merge of two address-ordered mapping lists. */
static int diff_step(struct pm_target *a, struct pm_target *b, struct mside *sa, struct mside *sb,
		     const struct piece_sink *k)
{
	int rc;

	if (sb->done || (!sa->done && sa->m.start < sb->m.start))
		return emit_one(sa, PM_DIFF_UNMAPPED, k);
	if (sa->done || sb->m.start < sa->m.start)
		return emit_one(sb, PM_DIFF_MAPPED, k);
	if (same_mapping(&sa->m, &sb->m))
		return emit_matched(a, b, sa, sb, k);
	rc = emit_one(sa, PM_DIFF_UNMAPPED, k);	/* same start, another mapping */
	return rc ? rc : emit_one(sb, PM_DIFF_MAPPED, k);
}

int pm_diff_pieces(struct pm_target *a, struct pm_target *b, pm_diff_fn row, pm_diff_piece_fn piece, void *data)
{
	struct piece_sink k = { .row = row, .fn = piece, .data = data };
	struct mside sa = { 0 }, sb = { 0 };
	int rc;

	if (!(sa.it = pm_maps_open(a)) || !(sb.it = pm_maps_open(b))) {
		rc = -errno;
		goto out;
	}
	if ((rc = mside_next(&sa)) < 0 || (rc = mside_next(&sb)) < 0)
		goto out;
	while (!sa.done || !sb.done)
		if ((rc = diff_step(a, b, &sa, &sb, &k)) != 0)
			break;
out:
	pm_maps_close(sa.it);
	pm_maps_close(sb.it);
	free(sa.buf);
	free(sb.buf);
	return rc;
}

int pm_diff_process(struct pm_target *a, struct pm_target *b, pm_diff_fn fn, void *data)
{
	return pm_diff_pieces(a, b, fn, NULL, data);
}
