/* watch_result.c - the write watch's result collector, below every back end: emit, keep for later, coalesce. */
#include <errno.h>
#include <stdlib.h>
#include "watch.h"

void pmi_watch_emit(struct pm_watch *w, uint64_t start, uint64_t end, bool huge)
{
	struct pm_written *o;

	if (start >= end || w->out_err)
		return;
	if (w->nout && w->out[w->nout - 1].end == start && w->out[w->nout - 1].huge == huge) {
		w->out[w->nout - 1].end = end;
		return;
	}
	if (w->nout == w->cap_out) {
		size_t cap = w->cap_out ? 2 * w->cap_out : 256;

		o = realloc(w->out, cap * sizeof(*o));
		if (!o) {
			w->out_err = ENOMEM;
			return;
		}
		w->out = o;
		w->cap_out = cap;
	}
	w->out[w->nout++] = (struct pm_written){ .start = start, .end = end, .huge = huge };
}

static int by_start(const void *a, const void *b)
{
	const struct pm_written *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Sort, merge overlaps (a huge report covering small ones stays huge), join neighbours of one kind. */
void pmi_watch_coalesce(struct pm_watch *w)
{
	size_t i, n = 0;
	bool sorted = true;

	/* Back ends report each range in address order: sort only when ranges were added out of order. */
	for (i = 1; i < w->nout && sorted; i++)
		sorted = w->out[i - 1].start <= w->out[i].start;
	if (!sorted)
		qsort(w->out, w->nout, sizeof(*w->out), by_start);
	for (i = 0; i < w->nout; i++) {
		struct pm_written *cur = &w->out[i], *last = n ? &w->out[n - 1] : NULL;

		if (last && cur->start < last->end) {	/* overlap: ranges may repeat across watched ranges */
			if (cur->end > last->end)
				last->end = cur->end;
			last->huge = last->huge || cur->huge;
		} else if (last && cur->start == last->end && cur->huge == last->huge) {
			last->end = cur->end;
		} else {
			w->out[n++] = *cur;
		}
	}
	w->nout = n;
}

void pmi_watch_keep(struct pm_watch *w, uint64_t start, uint64_t end, bool huge)
{
	struct pm_written *p;

	if (start >= end || w->out_err)
		return;
	if (w->npending && w->pending[w->npending - 1].end == start && w->pending[w->npending - 1].huge == huge) {
		w->pending[w->npending - 1].end = end;
		return;
	}
	if (w->npending == w->cap_pending) {
		size_t cap = w->cap_pending ? 2 * w->cap_pending : 64;

		p = realloc(w->pending, cap * sizeof(*p));
		if (!p) {
			w->out_err = ENOMEM;
			return;
		}
		w->pending = p;
		w->cap_pending = cap;
	}
	w->pending[w->npending++] = (struct pm_written){ .start = start, .end = end, .huge = huge };
}
