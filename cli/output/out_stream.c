/*
 * out_stream.c - printing a table: whole, in batches as commands make the rows (memory flat),
 * or as records; each case by the renderer output.h's table names (out_rows.c's formatter or
 * libsmartcols).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "out_table.h"
#include "textsafe.h"

/* The text of the cell at position @pos of @ln, or NULL. */
static const char *cell_data(struct libscols_line *ln, size_t pos)
{
	struct libscols_cell *ce = sym_scols_line_get_cell(ln, pos);

	return ce ? sym_scols_cell_get_data(ce) : NULL;
}

/*
 * The cells of the next row held, own or libsmartcols' (@itr), into @c, and unless @len is NULL their
 * lengths as out_own_cells gives them; false after the last.
 */
static bool next_row(struct out *out, struct libscols_iter *itr, size_t *row, const char **c, size_t *len)
{
	struct libscols_line *ln;
	size_t i;

	if (out->own)
		return out_own_cells(out, row, c, len);
	if (sym_scols_table_next_line(out->tb, itr, &ln))
		return false;
	for (i = 0; i < out->nshown; i++) {
		c[i] = cell_data(ln, i);
		if (len && !out_cell_plain(c[i], &len[i]))
			len[i] = OUT_CELL_ODD;
	}
	return true;
}

/*
 * One row as libsmartcols prints it in JSON: "      {" first in the stream, "},{" after a row.
 * @compact: without the blanks between tokens, for a record's one line.
 */
static void json_row(struct out *out, const char *const *cell, bool first, bool compact)
{
	size_t i;

	obuf_str(&out->ob, compact ? (first ? "{" : ",{") : first ? "      {\n" : ",{\n");
	for (i = 0; i < out->nshown; i++) {
		const struct out_col *c = &out->cols[out->order[i]];
		const char *d = cell[i];

		obuf_str(&out->ob, compact ? (i ? "," : "") : i ? ",\n         " : "         ");
		obuf_json_name(&out->ob, c->name);
		obuf_str(&out->ob, compact ? ":" : ": ");
		if (c->kind == OUT_BOOL)
			obuf_json_bool(&out->ob, d);
		else if (c->kind == OUT_STR || c->kind == OUT_HEX)
			obuf_json_string(&out->ob, d);
		else if (c->kind == OUT_NUMS)
			obuf_json_numbers(&out->ob, d, compact);
		else
			obuf_json_number(&out->ob, d);
	}
	obuf_str(&out->ob, compact ? "}" : "\n      }");
}

/*
 * One aligned row in the widths libsmartcols gave the columns (@w): right
 * aligned cells padded before, others after, the last left-aligned one and
 * an empty last one not at all. False when a cell is not plain ASCII or wider than its column:
 * then libsmartcols prints the batch (it encodes, measures and widens).
 */
static bool aligned_row(struct out *out, const char *const *cell, const size_t *clen, const size_t *w)
{
	size_t i, len;

	for (i = 0; i < out->nshown; i++) {
		bool right = out->cols[out->order[i]].flags & SCOLS_FL_RIGHT, last = i + 1 == out->nshown;

		len = clen[i];
		if (len == OUT_CELL_ODD || (len > w[i] && (right || !last)))
			return false;
		if (last && !len)	/* libsmartcols pads no empty last cell, even a right-aligned one */
			break;
		if (right)
			obuf_pad(&out->ob, w[i] - len);
		obuf_add(&out->ob, cell[i], len);
		if (!last)
			obuf_pad(&out->ob, right ? 1 : w[i] - len + 1);
	}
	obuf_add(&out->ob, "\n", 1);
	return true;
}

/*
 * The widths libsmartcols 2.38 gives a table it prints to no terminal
 * (calculate.c, count_column_width; a terminal also reduces and enlarges):
 * the widest cell, at least the heading (and 1), or the absolute width hint
 * when wider than both. False when a cell is not plain ASCII: then only
 * libsmartcols can measure it.
 */
static bool own_widths(struct out *out)
{
	const char *c[OUT_MAX_COLS];
	size_t row = 0, i, len[OUT_MAX_COLS], max[OUT_MAX_COLS] = { 0 };

	while (next_row(out, NULL, &row, c, len))
		for (i = 0; i < out->nshown; i++) {
			if (len[i] == OUT_CELL_ODD)
				return false;
			if (len[i] > max[i])
				max[i] = len[i];
		}
	for (i = 0; i < out->nshown; i++) {
		const struct out_col *col = &out->cols[out->order[i]];
		size_t min = strlen(col->name) ? strlen(col->name) : 1;

		if (max[i] < min)
			out->w[i] = min;
		else if (col->whint >= 1 && max[i] < (size_t)col->whint && min < (size_t)col->whint)
			out->w[i] = (size_t)col->whint;
		else
			out->w[i] = max[i];
	}
	return true;
}

/* The aligned heading line in the widths of own_widths, as libsmartcols prints it. */
static void aligned_heading(struct out *out)
{
	const char *c[OUT_MAX_COLS];
	size_t i, len[OUT_MAX_COLS];

	for (i = 0; i < out->nshown; i++) {
		c[i] = out->cols[out->order[i]].name;
		if (!out_cell_plain(c[i], &len[i]))
			len[i] = OUT_CELL_ODD;
	}
	aligned_row(out, c, len, out->w);
}

/*
 * The first batch, or a whole table, aligned here when it goes to no
 * terminal and every cell is plain (own_widths); the columns then keep these
 * widths for the batches after it, as scols_batch makes libsmartcols do.
 */
static bool size_first_batch(struct out *out)
{
	if (out->slow || out->tty || !out->own || !out->nrows || !own_widths(out))
		return false;
	out->sized = true;
	if (out->tb)
		out_hint_widths(out);
	return true;
}

/*
 * A batch formatted here (out_rows.c says why) and written in one piece:
 * raw and JSON always, the aligned table once libsmartcols sized its
 * columns on an earlier batch (as page-types, which sizes them up front).
 * Returns 0, 1 when libsmartcols must print it (nothing written), or -EIO.
 */
static int direct_batch(struct out *out)
{
	struct libscols_iter *itr = NULL;
	const char *c[OUT_MAX_COLS];
	size_t i, row = 0, w[OUT_MAX_COLS], len[OUT_MAX_COLS];
	bool first = !out->streamed;
	int r = 0;

	bool aligned = !out->o.json && !out->o.raw, sure = !aligned, flushed = false;

	if (aligned && first && !out->sized) {
		if (!size_first_batch(out))
			return 1;
		sure = true;	/* widths from these very rows: no row can fail */
	}
	if (out->slow || (aligned && out->tty))
		return 1;
	if (!out->own && (out_scols(out) || !(itr = sym_scols_new_iter(SCOLS_ITER_FORWARD))))
		return 1;
	out->ob.len = 0;
	/* Unsized widths matter to aligned rows only, which libsmartcols printed before (tb made). */
	for (i = 0; i < out->nshown; i++)
		w[i] = out->sized ? out->w[i] : out->tb ? sym_scols_column_get_width(out->sc[out->order[i]]) : 0;
	if (first && aligned && !out->o.noheadings)
		aligned_heading(out);
	if (first && out->o.json) {
		obuf_str(&out->ob, "{\n   ");
		obuf_json_key(&out->ob, out->name);
		obuf_str(&out->ob, "[\n");
	} else if (first && out->o.raw && !out->o.noheadings) {
		for (i = 0; i < out->nshown; i++) {
			obuf_str(&out->ob, i ? " " : "");
			obuf_raw_cell(&out->ob, out->cols[out->order[i]].name);
		}
		obuf_add(&out->ob, "\n", 1);
	}
	while (r == 0 && next_row(out, itr, &row, c, aligned ? len : NULL)) {
		if (out->o.json) {
			json_row(out, c, first, false);
			first = false;
		} else if (out->o.raw) {
			for (i = 0; i < out->nshown; i++) {
				obuf_str(&out->ob, i ? " " : "");
				obuf_raw_cell(&out->ob, c[i]);
			}
			obuf_add(&out->ob, "\n", 1);
		} else if (!aligned_row(out, c, len, w)) {
			r = 1;
		}
		/* Written as it goes where no later row can send the batch back to libsmartcols: fewer pages touched. */
		if (sure && out->ob.len >= OUT_FLUSH && !out->ob.oom) {
			if (fwrite(out->ob.p, 1, out->ob.len, stdout) != out->ob.len)
				r = -EIO;
			out->ob.len = 0;
			flushed = true;
		}
	}
	if (itr)
		sym_scols_free_iter(itr);
	if (r == 0 && out->ob.oom)
		r = flushed ? -ENOMEM : 1;	/* part written: libsmartcols cannot print it all again */
	if (r == 0 && fwrite(out->ob.p, 1, out->ob.len, stdout) != out->ob.len)
		r = -EIO;
	return r;
}

/* The batch through libsmartcols; columns keep the widest width seen, so the stream stays aligned. */
static int scols_batch(struct out *out)
{
	size_t i, w;
	int r;

	if (out_scols(out))
		return -ENOMEM;
	if (out->o.json) {
		/*
		 * libsmartcols prints JSON whole (2.38 cannot print a range of it): the
		 * rest of the stream is kept in its lines for out_print. Only the tests'
		 * PAGEMAP_OUT_SLOW, or a first batch out_rows.c had no memory for, comes
		 * here; a later batch cannot, half a document being printed.
		 */
		if (out->streamed)
			return -ENOMEM;
		out->stream_off = true;
		out->own = false;	/* the own rows are libsmartcols lines now (print_batch) */
		out->nrows = out->cells.len = 0;
		r = 0;
	} else {
		r = sym_scols_table_print_range(out->tb, NULL, NULL) || fputc('\n', stdout) == EOF ? -EIO : 0;
		/*
		 * Not a left-aligned last column: it is not padded, and its relative
		 * hint lets it take the rest of a terminal.
		 */
		for (i = 0; r == 0 && i < out->ncols; i++) {
			if (!out->sc[i] || (out->seq[i] + 1 == out->nshown && !(out->cols[i].flags & SCOLS_FL_RIGHT)))
				continue;
			w = sym_scols_column_get_width(out->sc[i]);
			sym_scols_column_set_whint(out->sc[i], (double)w);
			/*
			 * libsmartcols (2.38) widens a column narrower than its heading to the
			 * heading and stops there, ignoring the hint; a strict-width one gets
			 * the hint, unless the hint is no wider than the heading. So: strict
			 * only when wider than the heading.
			 */
			if (w > strlen(out->cols[i].name))
				sym_scols_column_set_flags(out->sc[i], sym_scols_column_get_flags(out->sc[i]) | SCOLS_FL_STRICTWIDTH);
		}
	}
	return r;
}

/* Print the lines held and drop them. */
static int print_batch(struct out *out)
{
	int r = out->oom ? -ENOMEM : direct_batch(out);

	if (r == 1 && out->own)
		r = out_own_to_scols(out) < 0 ? -ENOMEM : 1;
	if (r == 1)
		r = scols_batch(out);
	if (out->stream_off)
		return r;
	out_drop_rows(out);
	out->streamed = true;
	/*
	 * The stream goes on: its next rows need no libsmartcols lines, unless
	 * every batch goes back to libsmartcols anyway (aligned on a terminal,
	 * see direct_batch), where own rows would only be copied twice.
	 */
	out->own = out_own_wanted(out);
	return r;
}

int out_stream(struct out *out)
{
	if (out->lines < out->batch || out->stream_off)
		return 0;
	return print_batch(out);
}

int out_print(struct out *out)
{
	int r = 0;

	if (!out->streamed && out->nrows) {	/* the whole table formatted here when it can be */
		r = out->oom ? -ENOMEM : direct_batch(out);
		if (r == 1 && out_own_to_scols(out) < 0)
			return -ENOMEM;
		if (r < 0)
			return r;
		if (r == 0) {
			out->streamed = true;
			out->lines = out->nrows = out->cells.len = 0;
		}
	}
	if (!out->streamed)	/* an empty table's headings, or what only libsmartcols prints */
		return out_scols(out) ? -ENOMEM : sym_scols_print_table(out->tb) ? -EIO : 0;
	if (out->lines)
		r = print_batch(out);
	if (r == 0 && out->o.json)
		r = fputs("\n   ]\n}\n", stdout) < 0 ? -EIO : 0;
	return r;
}

/* ---- records: one JSON object per line ---- */

/* @f's JSON value; a string's bytes are escaped as every JSON cell is (cli/base/textsafe.h). */
static int json_field(const struct out_field *f)
{
	switch (f->kind) {
	case OUT_SECS:
		return printf("%.3f", f->secs);
	case OUT_HEX:
		return printf("\"0x%" PRIx64 "\"", f->u);
	case OUT_BOOL:
		return fputs(f->u ? "true" : "false", stdout);
	case OUT_STR:
		if (!f->s)	/* not known: null, never a fake 0 */
			return fputs("null", stdout);
		putchar('"');
		ts_fputs(TS_JSON, f->s, stdout);
		return putchar('"');
	default:
		return printf("%" PRIu64, f->u);
	}
}

/*
 * A record's line: {"k":v,...,"NAME":[{row},...]}, the rows as out_rows.c
 * formats every JSON row, without the blanks between tokens. JSON rows are
 * always own (out_own_wanted); a tree has no record form.
 */
static int json_record(struct out *out, const struct out_field *f, size_t n)
{
	const char *c[OUT_MAX_COLS];
	size_t i, row = 0;
	bool first = true;

	if (!out->own)
		return -EINVAL;
	out->ob.len = 0;
	obuf_json_name(&out->ob, out->name);
	obuf_str(&out->ob, ":[");
	while (out_own_cells(out, &row, c, NULL)) {
		json_row(out, c, first, true);
		first = false;
	}
	obuf_str(&out->ob, "]}\n");
	if (out->ob.oom)
		return -ENOMEM;
	putchar('{');
	for (i = 0; i < n; i++) {
		printf("\"%s\":", f[i].key);
		json_field(&f[i]);
		putchar(',');
	}
	if (fwrite(out->ob.p, 1, out->ob.len, stdout) != out->ob.len)
		return -EIO;
	return fflush(stdout) ? -EIO : 0;
}

int out_print_record(struct out *out, const char *heading, const struct out_field *f, size_t n)
{
	int r = out->oom ? -ENOMEM : 0;

	if (r == 0 && out->o.json) {
		r = json_record(out, f, n);
	} else if (r == 0 && out_own_to_scols(out) < 0) {
		r = -ENOMEM;
	} else if (r == 0) {
		r = heading && fputs(heading, stdout) == EOF ? -EIO : 0;
		if (r == 0)
			r = sym_scols_print_table(out->tb) || fflush(stdout) ? -EIO : 0;
	}
	out_drop_rows(out);
	out->oom = false;
	return r;
}
