/*
 * out_table.h - where a table's cells are held (out_table.c): the stream's own rows, or
 * libsmartcols lines. output.c fills it (columns, cells), out_stream.c prints it (whole
 * tables, batches, records); neither calls the other, both call out_table.c. Which renderer
 * prints which case: output.h.
 */
#ifndef PM_CLI_OUT_TABLE_H
#define PM_CLI_OUT_TABLE_H

#include "output.h"
#include "out_rows.h"
#include "scols_load.h"

#define OUT_MAX_COLS 64

/*
 * A cell's length as an aligned row needs it: its bytes when it is plain
 * (out_cell_plain: printed as it is, a column a byte), else OUT_CELL_ODD
 * (only libsmartcols can measure it). An unset cell is plain and empty.
 */
#define OUT_CELL_ODD SIZE_MAX

/* An own cell: where its text begins in out->cells, and its length as above. */
struct out_cellref {
	size_t off, len;
};

struct out {
	struct libscols_table *tb;		/* NULL until a table needs libsmartcols (out_scols) */
	const struct out_col *cols;
	size_t ncols;
	bool shown[OUT_MAX_COLS];			/* by column id */
	struct libscols_column *sc[OUT_MAX_COLS];	/* by column id, once tb is made; NULL when not shown */
	size_t seq[OUT_MAX_COLS];			/* position of each shown column */
	size_t order[OUT_MAX_COLS];			/* the column id at each position */
	size_t nshown;
	struct out_opts o;
	const char *name;			/* the JSON key */
	size_t batch, lines;			/* out_stream: lines per batch, lines held */
	bool streamed;				/* a batch was printed: out_print ends the stream */
	bool stream_off;			/* JSON by libsmartcols: held to out_print */
	bool slow;				/* PAGEMAP_OUT_SLOW: every batch through libsmartcols (tests) */
	bool tty;				/* stdout is a terminal: libsmartcols fits the columns to it */
	bool term_view;				/* the terminal's default columns are shown (out_new_fit) */
	bool tree;				/* out_tree: libsmartcols lines throughout, never own rows */
	struct obuf ob;				/* a batch formatted by out_rows.c */
	struct obuf text;			/* a JSON cell's text made valid UTF-8 for libsmartcols (out_scols_cell) */
	/*
	 * Own rows (@own, out_own_wanted), which out_stream.c may print itself, are kept here,
	 * not in libsmartcols lines (an allocation per line and per cell): the
	 * text of every cell in @cells, NUL-terminated, at ref[row * nshown +
	 * position], with its length and whether it is plain, told once as it is
	 * set (a row's cells were measured again for each printing: a fifth of
	 * `pages`); set[row] has a bit per position set (OUT_MAX_COLS is 64).
	 */
	bool own, oom;
	bool sized;				/* w[] holds the widths the aligned rows were printed in */
	size_t w[OUT_MAX_COLS];
	struct obuf cells;
	struct out_cellref *ref;
	uint64_t *set;
	size_t nrows, cap_rows;
};

/* Lines out_stream holds before printing them; PAGEMAP_OUT_BATCH overrides (tests). */
#define OUT_BATCH 4096
/* Bytes of formatted rows out_stream.c writes at once when nothing can send them back to libsmartcols. */
#define OUT_FLUSH 65536

/*
 * The libsmartcols table of @out, made (and the library loaded) on first
 * need: its columns, settings and the widths of an aligned first batch.
 * 0 or -ENOMEM. Most output never needs it (scols_load.c says why).
 */
int out_scols(struct out *out);
/* The widths of an aligned first batch (w[], sized) given to libsmartcols' columns, once tb is made. */
void out_hint_widths(struct out *out);
/*
 * Are the rows kept as text, not libsmartcols lines (own)? Wherever out_stream.c may print them
 * itself: raw, JSON or no terminal; not a tree, not under PAGEMAP_OUT_SLOW but for JSON.
 */
bool out_own_wanted(const struct out *out);
/* A row of the stream's own storage; false when it cannot grow (the batch then fails with -ENOMEM). */
bool out_own_row(struct out *out);
/*
 * Cell @pos (a position, not a column id) of the last own row: a copy of @s, @len bytes, @plain
 * as out_cell_plain tells it; NULL: unset.
 */
void out_own_set(struct out *out, size_t pos, const char *s, size_t len, bool plain);
/*
 * The cells of own row *@row into @c (NULL for a cell not set) and, unless @len is NULL, their
 * lengths (OUT_CELL_ODD: not plain) into @len, by position, and *@row moved on; false after the last row.
 */
bool out_own_cells(const struct out *out, size_t *row, const char **c, size_t *len);
/* The own rows held, copied into libsmartcols lines (for what only libsmartcols prints); 0 or -ENOMEM. */
int out_own_to_scols(struct out *out);
/* Drop the rows held, own and libsmartcols', once printed: room for the next batch or record. */
void out_drop_rows(struct out *out);
/*
 * Set the cell at position @pos of libsmartcols line @ln to @s. In JSON, a text cell is first made valid
 * UTF-8 (cli/base/textsafe.h): libsmartcols' JSON printer copies any byte from 0x80 up as it is, and one name
 * that is not UTF-8 would make the whole document invalid. 0 or -ENOMEM.
 */
int out_scols_cell(struct out *out, struct libscols_line *ln, size_t pos, const char *s);

#endif
