/* phys_hist.c - `pagemap phys`'s histogram of flag words (open addressing, grows without limit),
 * its summary table, and the cells every table of the command shares. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include "cli.h"
#include "output.h"
#include "phys.h"

static size_t hist_pos(const struct hist *h, uint64_t flags)
{
	size_t i = (size_t)((flags * 0x9e3779b97f4a7c15ULL) >> 20) & (h->cap - 1);

	while (h->slot[i].pages && h->slot[i].flags != flags)
		i = (i + 1) & (h->cap - 1);
	return i;
}

static int hist_grow(struct hist *h)
{
	struct hist n = { calloc(h->cap ? 2 * h->cap : 256, sizeof(struct hslot)), h->cap ? 2 * h->cap : 256, 0 };
	size_t i;

	if (!n.slot)
		return -ENOMEM;
	for (i = 0; i < h->cap; i++)
		if (h->slot[i].pages)
			n.slot[hist_pos(&n, h->slot[i].flags)] = h->slot[i];
	n.used = h->used;
	free(h->slot);
	*h = n;
	return 0;
}

int phys_hist_add(struct hist *h, uint64_t flags, uint64_t pages)
{
	size_t i;

	if (2 * (h->used + 1) > h->cap && hist_grow(h) < 0)
		return -ENOMEM;
	i = hist_pos(h, flags);
	if (!h->slot[i].pages) {
		h->slot[i].flags = flags;
		h->used++;
	}
	h->slot[i].pages += pages;
	return 0;
}

static int hslot_cmp(const void *a, const void *b)
{
	const struct hslot *x = a, *y = b;

	return x->flags < y->flags ? -1 : x->flags > y->flags;
}

void phys_hex16(char *buf, size_t size, uint64_t v)
{
	snprintf(buf, size, "0x%016" PRIx64, v);
}

void phys_name_cells(struct out *out, struct libscols_line *ln, size_t sym, size_t names,
		     uint64_t flags, bool raw)
{
	char buf[1024];

	/* Only the columns shown: naming the flags was a third of phys -l's time (run-rows.sh). */
	if (out_has(out, sym)) {
		pm_kpf_letters(flags, raw, buf, sizeof(buf));
		out_str(out, ln, sym, buf);
	}
	if (out_has(out, names)) {
		pm_kpf_describe(flags, buf, sizeof(buf));
		out_str(out, ln, names, buf);
	}
}

void phys_sum_row(struct out *out, const struct hslot *s, const struct phys_opts *po)
{
	struct libscols_line *ln = out_line(out);
	char buf[32];

	phys_hex16(buf, sizeof(buf), s->flags);
	out_str(out, ln, S_FLAGS, buf);
	out_u64(out, ln, S_PAGES, s->pages);
	out_u64(out, ln, S_SIZE, s->pages * po->page_size);
	phys_name_cells(out, ln, S_SYMBOLIC, S_NAMES, s->flags, po->raw);
}

/* The rows of @h in flag order, then a total in the table view. */
int phys_print_hist(struct hist *h, const struct phys_opts *po, const char *name)
{
	struct out *out = out_new_fit(name, phys_sum_cols, NELEM(phys_sum_cols), PHYS_SUM_DEFAULTS,
				      PHYS_SUM_TERM_DEFAULTS, &po->o);
	struct libscols_line *ln;
	uint64_t total = 0;
	size_t i, k = 0;
	int r;

	if (!out)
		return EXIT_USAGE;
	for (i = 0; i < h->cap; i++)
		if (h->slot[i].pages)
			h->slot[k++] = h->slot[i];
	if (k)
		qsort(h->slot, k, sizeof(*h->slot), hslot_cmp);
	for (i = 0; i < k; i++) {
		phys_sum_row(out, &h->slot[i], po);
		total += h->slot[i].pages;
	}
	if ((ln = out_total_line(out))) {
		/* The label in the first text column shown (a terminal's set has no FLAGS). */
		out_str(out, ln, out_has(out, S_FLAGS) || !out_has(out, S_SYMBOLIC) ? S_FLAGS : S_SYMBOLIC, "total");
		out_u64(out, ln, S_PAGES, total);
		out_u64(out, ln, S_SIZE, total * po->page_size);
	}
	r = out_print(out);
	out_free(out);
	return r < 0 ? EXIT_RUNTIME : EXIT_OK;
}
