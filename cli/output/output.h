/*
 * output.h - the output layer every subcommand fills: typed cells in, table/raw/JSON out.
 *
 * A command makes a table (out_new) from its column table (struct out_col), fills one line
 * per row (out_line, out_str/out_u64/out_unknown), calls out_stream after each row when the
 * rows are many, and out_print at the end (out_print_record for a series of records). It
 * never tests for JSON.
 *
 * Two renderers print the table; which one is decided here, once, per case (more in
 * cli/output/README.md):
 *
 *   case                                 renderer      why
 *   -J and -r, whole or streamed         out_rows.c    libsmartcols measures every cell's
 *                                                      width even where none is used: that
 *                                                      was most of the many-row commands' time
 *   a record's JSON line (track, wss -J) out_rows.c    libsmartcols has no one-line JSON
 *   aligned, to no terminal, every       out_rows.c    a plain cell's width is its length
 *     cell plain (printable ASCII, no '\')
 *   aligned, to no terminal, a cell      libsmartcols  it encodes (\xHH) and measures
 *     that is not plain                                multibyte text; the batch goes back
 *   aligned, to a terminal               libsmartcols  it fits the columns to the terminal
 *   a tree (out_tree), an empty table,   libsmartcols  nesting, headings alone: few rows
 *     a record's table or raw lines
 *   PAGEMAP_OUT_SLOW=1 (tests), but for  libsmartcols  the oracle out_rows.c is tested
 *     a record's JSON                                  against (JSON whole at out_print)
 *
 * A stream (out_stream) prints the bytes the whole table would (raw and JSON: tests/cli
 * compares them; aligned: a column may widen after a batch). libsmartcols 2.38's bytes are
 * copied in two files: out_rows.c its cell routines, out_stream.c its row frames and column
 * widths; tests/unit/test_out_rows.c and the PAGEMAP_OUT_SLOW tests compare both with the
 * library's own print, so a libsmartcols that prints otherwise fails them.
 *
 * One escaper per format: a JSON string's bytes and a raw cell's are cli/base/textsafe.c's
 * (TS_JSON, TS_RAW); what libsmartcols prints gets its cells as textsafe's valid UTF-8
 * (TS_TEXT) first, so its JSON escaping gives TS_JSON's bytes.
 *
 * Inside the folder (lowest first): textsafe.c, out_rows.c, scols_load.c < out_table.c (the
 * cells held) < output.c (this API's front) and out_stream.c (printing); neither of the last
 * two calls the other.
 */
#ifndef PM_CLI_OUTPUT_H
#define PM_CLI_OUTPUT_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <libsmartcols.h>
#include "out_human.h"

/* How a column's cells are typed; decides formatting and the JSON type. */
enum out_kind {
	OUT_STR,	/* text */
	OUT_SIZE,	/* bytes: human "4K" in tables, integer with -b and in JSON */
	OUT_NUM,	/* integer */
	OUT_HEX,	/* address or PFN: "0x..." everywhere (a string in JSON) */
	OUT_BOOL,	/* yes/no, true/false in JSON */
	OUT_SECS,	/* seconds with 3 decimals, a number in JSON (record fields) */
	OUT_NUMS,	/* integers, comma separated ("1,640,700"): an array of numbers in JSON */
};

/* One row of a subcommand's column table: drives --output, help and JSON types. */
struct out_col {
	const char *name;	/* upper case: "START"; lower-cased for JSON keys */
	double whint;		/* libsmartcols width hint */
	int flags;		/* SCOLS_FL_* */
	enum out_kind kind;
	const char *help;
	const char *aliases;	/* other names -o accepts for it, comma separated, or NULL */
};

/*
 * Resident bytes: the kernel's Rss in every command, under one name and one
 * definition; -o also takes RESIDENT. PRESENT is another column (maps): what
 * the page table maps in RAM, the zero page included.
 */
#define OUT_RSS_ALIASES "RSS,RESIDENT"
#define OUT_RSS_HELP "resident bytes as the kernel counts them (smaps Rss, VmRSS): not the zero page, not hugetlb"
/*
 * A process's swap and unique bytes (ps, top) are other quantities than a mapping's SWAPPED and EXCLUSIVE
 * (maps, top's process level), which pagemap's bits give: the help says how they differ.
 */
#define OUT_SWAP_HELP "bytes in swap (smaps_rollup Swap, swapped shared memory too; maps' SWAPPED, from pagemap, misses that)"
#define OUT_USS_HELP "unique bytes: pages mapped by this process only (maps' EXCLUSIVE, pagemap's bit, can differ for large folios)"

struct out_opts {
	bool json, raw, noheadings, bytes, all;
	bool total;	/* --total: the total row also with -n or -r */
	const char *list;	/* -o LIST, or "+LIST" to add to the defaults */
};

struct out;

/* Common option letters and long options; subcommands append their own. */
#define OUT_SHORTOPTS "Jrno:b"
#define OUT_OPT_ALL 0x1000
#define OUT_OPT_TOTAL 0x1800	/* away from the commands' own (0x1001 up, 0x2000 up) */
#define OUT_LONGOPTS                                                  \
	{ "json", no_argument, NULL, 'J' },                           \
	{ "raw", no_argument, NULL, 'r' },                            \
	{ "noheadings", no_argument, NULL, 'n' },                     \
	{ "output", required_argument, NULL, 'o' },                   \
	{ "output-all", no_argument, NULL, OUT_OPT_ALL },             \
	{ "bytes", no_argument, NULL, 'b' }
/* For the commands whose table ends with a total row (out_total_line): appended to OUT_LONGOPTS. */
#define OUT_TOTAL_LONGOPT { "total", no_argument, NULL, OUT_OPT_TOTAL }

/* Handle a common option; returns true if @c was one. */
bool out_parse_opt(struct out_opts *o, int c, const char *arg);

/* Print the common options and the column list for --help. */
void out_help(FILE *f, const struct out_col *cols, size_t n);
/* The same, with what @flags asks beyond the common options. */
#define OUT_HELP_LONG_BYTES 0x1	/* --bytes has no -b: phys, whose -b is page-types' --bits */
#define OUT_HELP_TOTAL 0x2	/* the table ends with a total row: --total */
#define OUT_HELP_LONG_NOHEADINGS 0x4	/* --noheadings has no -n: top, whose -n is top's count of frames */
void out_help_with(FILE *f, const struct out_col *cols, size_t n, unsigned flags);
/* The column lines alone, as out_help prints them: for a command's second table (diff --pages, ps --group-by). */
void out_help_columns(FILE *f, const struct out_col *cols, size_t n);

/*
 * The default columns for --help, after the column list: @defaults, and @term_defaults (NULL: none)
 * those out_new_fit shows on a terminal instead.
 */
void out_help_defaults(FILE *f, const char *defaults, const char *term_defaults);

/*
 * Make a table named @name (the JSON key) with the columns selected by
 * @o (or @defaults, comma separated). Returns NULL after printing a usage
 * error for an unknown column.
 */
struct out *out_new(const char *name, const struct out_col *cols, size_t n, const char *defaults,
		    const struct out_opts *o);
/*
 * The same, with @term_defaults the columns shown instead of @defaults when the table is aligned
 * for a terminal (stdout a tty, neither -J nor -r): a set that fits 80 columns, as lsblk's and
 * ps's defaults do; pipes, -r and -J keep @defaults, so scripts see the same columns on every
 * terminal. "+LIST" adds to the set in use; -o LIST and --output-all are the same everywhere.
 * @term_defaults NULL: @defaults everywhere.
 */
struct out *out_new_fit(const char *name, const struct out_col *cols, size_t n, const char *defaults,
			const char *term_defaults, const struct out_opts *o);
/* Does the table show the terminal's defaults (out_new_fit)? For a footnote naming the others. */
bool out_term_view(const struct out *out);
void out_free(struct out *out);

/* Is column @id (index into the table) shown? Lets commands skip work. */
bool out_has(const struct out *out, size_t id);

struct libscols_line *out_line(struct out *out);
/*
 * A line under @parent (a line of this table): the table is a tree, printed
 * by libsmartcols whole at out_print. The first line of a tree table must be
 * made after out_tree, before any other line.
 */
void out_tree(struct out *out);
struct libscols_line *out_child_line(struct out *out, struct libscols_line *parent);
/*
 * A totals line: only in the aligned table view with headings, so that -n and -r print rows
 * only (a script counting rows counts rows); --total brings it back there. NULL for JSON,
 * whose rows are rows only, and wherever the line is not printed.
 */
struct libscols_line *out_total_line(struct out *out);
/*
 * A total that is also a row of the JSON (shared's KIND total, cache's [meminfo Cached]): the
 * same rule for tables (none with -n or -r unless --total), and always in JSON, which keeps it.
 */
struct libscols_line *out_total_row(struct out *out);

/* Cell setters: a column that is not shown is ignored. */
void out_str(struct out *out, struct libscols_line *ln, size_t id, const char *s);
void out_u64(struct out *out, struct libscols_line *ln, size_t id, uint64_t v);
void out_unknown(struct out *out, struct libscols_line *ln, size_t id);	/* "-" / null */
/*
 * A signed figure (a change): an OUT_SIZE cell as out_human_signed ("+1.5M", "-4K", "0B"), else (and
 * with -b) decimal, "+4096", "-4096", "0"; JSON has no '+'.
 */
void out_s64(struct out *out, struct libscols_line *ln, size_t id, int64_t v);

/*
 * Print the lines made so far and drop them once a batch (4096 lines) is
 * full, so memory does not grow with the rows. The stream looks like the
 * whole table printed at once, except that a column may widen after a
 * batch (it never narrows). Not with a totals line or sorted rows.
 * Returns 0 or -EIO.
 */
int out_stream(struct out *out);

/* Print the table, or the rest of a stream; returns 0 or -errno. */
int out_print(struct out *out);

/* One field of a record's head (out_print_record), typed as a column's cells are. */
struct out_field {
	const char *key;	/* the JSON key */
	enum out_kind kind;
	uint64_t u;		/* OUT_NUM, OUT_SIZE, OUT_HEX, OUT_BOOL */
	double secs;		/* OUT_SECS */
	const char *s;		/* OUT_STR; NULL: null in JSON (a record field not known) */
};

/*
 * A record stream: the table is one record of a series (track's intervals, wss's windows).
 * In JSON, one object per line: the @n head fields, then the rows under the
 * table's name, {"k":v,...,"NAME":[{row},...]}, flushed at once. Otherwise
 * the @heading line (if not NULL) and the table. The lines are dropped
 * either way, so the table can hold the next record. Returns 0 or -errno.
 */
int out_print_record(struct out *out, const char *heading, const struct out_field *f, size_t n);


#endif
