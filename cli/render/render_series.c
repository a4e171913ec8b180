/* render_series.c - time heat maps of a series of snapshots: what changed between each two, placed by pm_diff_pieces. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "render.h"

#define MAX_RANGES (16u << 20)	/* as a recording: 512 MiB of ranges at most */

const struct series_what_info series_whats[SW_N] = {
	[SW_WRITTEN] = { "written", "pages written, as 'pagemap diff' counts WRITTEN: only on evidence (the zero "
				    "page replaced, copy-on-write broken, soft-dirty gained)" },
	[SW_APPEARED] = { "appeared", "pages neither present nor swapped before, present or swapped after" },
	[SW_FREED] = { "freed", "pages present or swapped before, neither after" },
	[SW_SWAPPED] = { "swapped", "pages swapped out or swapped in (SWAPOUT + SWAPIN)" },
	[SW_CHANGED] = { "changed", "pages with any change 'pagemap diff' counts: the above, new frame, huge page formed "
				    "or split, uffd-wp changed (each page once)" },
};

int series_what_parse(const char *name, enum series_what *out)
{
	for (unsigned i = 0; i < SW_N; i++)
		if (!strcmp(name, series_whats[i].name)) {
			*out = (enum series_what)i;
			return 0;
		}
	return -1;
}

/* The bytes of a piece that @what counts: all of it or none (each category is 0 or the whole piece). */
static uint64_t counted(enum series_what what, const struct pm_diff_piece *p)
{
	const struct pm_diff_bytes *b = &p->bytes;

	switch (what) {
	case SW_WRITTEN:
		return b->written;
	case SW_APPEARED:
		return b->appeared;
	case SW_FREED:
		return b->freed;
	case SW_SWAPPED:
		return b->swapout + b->swapin;
	default:
		return p->end - p->start;	/* pm_diff_pieces reports only pieces where something changed */
	}
}

struct sink {
	struct heat_rec *rec;
	struct heat_interval *iv;
	enum series_what what;
};

static int on_piece(void *data, const struct pm_diff_piece *p)
{
	struct sink *k = data;
	struct heat_interval *iv = k->iv;
	uint64_t n = counted(k->what, p);
	struct heat_range *r;

	if (!n)
		return 0;
	if (iv->n && iv->r[iv->n - 1].end == p->start) {	/* the pieces of one run, or runs that changed alike */
		iv->r[iv->n - 1].end = p->end;
		iv->r[iv->n - 1].bytes += n;
		return 0;
	}
	if (++k->rec->nranges > MAX_RANGES)
		return -E2BIG;
	if (iv->n == iv->cap) {
		size_t cap = iv->cap ? 2 * iv->cap : 16;

		if (!(r = realloc(iv->r, cap * sizeof(*r))))
			return -ENOMEM;
		iv->r = r;
		iv->cap = cap;
	}
	iv->r[iv->n++] = (struct heat_range){ p->start, p->end, n, NULL };
	return 0;
}

/* A mapping in one snapshot only (mapped, unmapped, or its bounds changed): its pages are compared nowhere. */
static int on_row(void *data, const struct pm_diff_row *row)
{
	struct sink *k = data;

	if (row->status != PM_DIFF_MATCHED)
		k->iv->unmatched += row->map->end - row->map->start;
	return 0;
}

int series_fill(struct heat_rec *rec, struct pm_target *const *t, size_t n, const double *when, enum series_what what,
		size_t *failed)
{
	struct sink k = { rec, NULL, what };
	size_t i;
	int rc;

	snprintf(rec->kind, sizeof(rec->kind), "series");
	rec->what = series_whats[what].name;
	if (n < 2 || !(rec->iv = calloc(n - 1, sizeof(*rec->iv))))
		return n < 2 ? -EINVAL : -ENOMEM;
	rec->cap = n - 1;
	for (i = 0; i + 1 < n; i++) {
		rec->n = i + 1;
		k.iv = &rec->iv[i];
		k.iv->t = when[i];
		if ((rc = pm_diff_pieces(t[i], t[i + 1], on_row, on_piece, &k)) < 0) {
			*failed = i + 1;
			return rc;
		}
	}
	return 0;
}
