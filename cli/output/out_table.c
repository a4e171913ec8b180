/*
 * out_table.c - where a table's cells are held: the stream's own rows (text, no allocation
 * per cell) or libsmartcols lines, and the libsmartcols table made on first need (out_table.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "out_table.h"
#include "textsafe.h"

/*
 * A wrapped cell (SCOLS_FL_WRAP) breaks at a space, else at a comma (a list of names), the
 * separator giving way to the line break; libsmartcols's own wrap cuts inside a word.
 * The longest word: the narrowest the column can be.
 */
static size_t word_chunksize(const struct libscols_column *cl, const char *data, void *unused)
{
	size_t best = 0;

	(void)cl;
	(void)unused;
	while (data && *data) {
		size_t n = strcspn(data, ", ");

		if (n > best)
			best = n;
		data += n + (data[n] != '\0');
	}
	return best;
}

/* End the first line of @data that fits the column's width; the rest, or NULL when all fits. */
static char *word_nextchunk(const struct libscols_column *cl, char *data, void *unused)
{
	size_t width = sym_scols_column_get_width(cl), len = data ? strlen(data) : 0, cut = 0, i;

	(void)unused;
	if (!width || len <= width)
		return NULL;
	for (i = 1; i <= width; i++)	/* at the last space, else the last comma (a list of names) */
		if (data[i] == ' ' || (data[i] == ',' && (!cut || data[cut] != ' ')))
			cut = i;
	if (!cut)
		return NULL;	/* a word wider than the column: libsmartcols prints it as it is */
	data[cut] = '\0';
	return data + cut + 1;
}

/* The libsmartcols column of shown column @id; 0 or -ENOMEM. */
static int make_column(struct out *out, size_t id)
{
	const struct out_col *c = &out->cols[id];
	static const int json_type[] = { [OUT_STR] = SCOLS_JSON_STRING, [OUT_SIZE] = SCOLS_JSON_NUMBER,
					 [OUT_NUM] = SCOLS_JSON_NUMBER, [OUT_HEX] = SCOLS_JSON_STRING,
					 [OUT_BOOL] = SCOLS_JSON_BOOLEAN, [OUT_SECS] = SCOLS_JSON_NUMBER,
					 /* JSON comes from out_rows.c but for trees, and no tree has such a column */
					 [OUT_NUMS] = SCOLS_JSON_STRING };
	/* Cells are wrapped only for a terminal, where libsmartcols narrows columns to fit it. */
	bool wrap = (c->flags & SCOLS_FL_WRAP) && out->tty && !out->o.json && !out->o.raw;
	struct libscols_column *sc = sym_scols_table_new_column(out->tb, c->name, c->whint,
							       wrap ? c->flags : c->flags & ~SCOLS_FL_WRAP);

	if (!sc)
		return -ENOMEM;
	if (wrap)
		sym_scols_column_set_wrapfunc(sc, word_chunksize, word_nextchunk, NULL);
	/* libsmartcols lower-cases the heading for the JSON key. */
	sym_scols_column_set_json_type(sc, json_type[c->kind]);
	out->sc[id] = sc;
	return 0;
}

int out_scols(struct out *out)
{
	size_t i;

	if (out->tb)
		return 0;
	scols_load();
	if (!(out->tb = sym_scols_new_table()))
		return -ENOMEM;
	sym_scols_table_set_name(out->tb, out->name);
	sym_scols_table_enable_json(out->tb, out->o.json);
	sym_scols_table_enable_raw(out->tb, out->o.raw);
	sym_scols_table_enable_noheadings(out->tb, out->o.noheadings);
	for (i = 0; i < out->nshown; i++)
		if (make_column(out, out->order[i]) < 0)
			return -ENOMEM;
	if (out->sized)
		out_hint_widths(out);
	return 0;
}

void out_hint_widths(struct out *out)
{
	size_t i;

	for (i = 0; i < out->nshown; i++) {
		struct libscols_column *sc = out->sc[out->order[i]];

		if (i + 1 == out->nshown && !(out->cols[out->order[i]].flags & SCOLS_FL_RIGHT))
			continue;
		sym_scols_column_set_whint(sc, (double)out->w[i]);
		if (out->w[i] > strlen(out->cols[out->order[i]].name))
			sym_scols_column_set_flags(sc, sym_scols_column_get_flags(sc) | SCOLS_FL_STRICTWIDTH);
	}
}

static void put_obuf(void *ctx, const char *s, size_t n)
{
	obuf_add(ctx, s, n);
}

int out_scols_cell(struct out *out, struct libscols_line *ln, size_t pos, const char *s)
{
	enum out_kind kind = out->cols[out->order[pos]].kind;

	if (s && out->o.json && (kind == OUT_STR || kind == OUT_HEX) && ts_text_changes(s)) {
		out->text.len = 0;
		ts_escape(TS_TEXT, s, put_obuf, &out->text);
		obuf_add(&out->text, "", 1);
		if (out->text.oom)
			return -ENOMEM;
		s = out->text.p;
	}
	return sym_scols_line_set_data(ln, pos, s) ? -ENOMEM : 0;
}

bool out_own_wanted(const struct out *out)
{
	/* JSON even under PAGEMAP_OUT_SLOW: a record's JSON is out_rows.c's, from own rows only. */
	return !out->tree && (out->o.json || (!out->slow && (out->o.raw || !out->tty)));
}

bool out_own_row(struct out *out)
{
	if (out->nrows == out->cap_rows) {
		size_t cap = out->cap_rows ? 2 * out->cap_rows : 256;
		struct out_cellref *ref;
		uint64_t *set;

		if (cap > SIZE_MAX / sizeof(*ref) / out->nshown)
			return false;
		if (!(ref = realloc(out->ref, cap * out->nshown * sizeof(*ref))))
			return false;
		out->ref = ref;
		if (!(set = realloc(out->set, cap * sizeof(*set))))
			return false;
		out->set = set;
		out->cap_rows = cap;
	}
	out->set[out->nrows++] = 0;
	return true;
}

void out_own_set(struct out *out, size_t pos, const char *s, size_t len, bool plain)
{
	if (!out->nrows || !s)
		return;
	out->ref[(out->nrows - 1) * out->nshown + pos] = (struct out_cellref){ out->cells.len, plain ? len : OUT_CELL_ODD };
	out->set[out->nrows - 1] |= (uint64_t)1 << pos;
	obuf_add(&out->cells, s, len + 1);
	out->oom |= out->cells.oom;
}

bool out_own_cells(const struct out *out, size_t *row, const char **c, size_t *len)
{
	const struct out_cellref *ref;
	uint64_t set;
	size_t i;

	if (*row >= out->nrows)
		return false;
	ref = out->ref + *row * out->nshown;
	set = out->set[*row];
	for (i = 0; i < out->nshown; i++) {
		bool has = set & ((uint64_t)1 << i);

		c[i] = has ? out->cells.p + ref[i].off : NULL;
		if (len)
			len[i] = has ? ref[i].len : 0;
	}
	++*row;
	return true;
}

/* The own rows (if any) into libsmartcols lines, for a batch only it can print; 0 or -ENOMEM. */
int out_own_to_scols(struct out *out)
{
	const char *c[OUT_MAX_COLS];
	struct libscols_line *ln;
	size_t row = 0, i;

	if (out_scols(out))
		return -ENOMEM;
	while (out->own && out_own_cells(out, &row, c, NULL)) {
		if (!(ln = sym_scols_table_new_line(out->tb, NULL)))
			return -ENOMEM;
		for (i = 0; i < out->nshown; i++)
			if (c[i] && out_scols_cell(out, ln, i, c[i]))
				return -ENOMEM;
	}
	return 0;
}

void out_drop_rows(struct out *out)
{
	if (out->tb)
		sym_scols_table_remove_lines(out->tb);
	out->lines = out->nrows = out->cells.len = 0;
}
