/* output.c - the libsmartcols wrapper: column selection, typed cells, table/raw/JSON rendering. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "output.h"
#include "cli.h"
#include "complete.h"
#include "out_rows.h"

#define OUT_MAX_COLS 64

struct out {
	struct libscols_table *tb;
	const struct out_col *cols;
	size_t ncols;
	struct libscols_column *sc[OUT_MAX_COLS];	/* by column id; NULL when not shown */
	size_t seq[OUT_MAX_COLS];			/* position of each shown column */
	size_t order[OUT_MAX_COLS];			/* the column id at each position */
	size_t nshown;
	struct out_opts o;
	const char *name;			/* the JSON key */
	size_t batch, lines;			/* out_stream: lines per batch, lines held */
	bool streamed;				/* a batch was printed: out_print ends the stream */
	bool stream_off;			/* this libsmartcols prints JSON we cannot splice */
	bool slow;				/* PAGEMAP_OUT_SLOW: every batch through libsmartcols (tests) */
	bool tty;				/* stdout is a terminal: libsmartcols fits the columns to it */
	struct obuf ob;				/* a batch formatted by out_rows.c */
};

/* Lines out_stream holds before printing them; PAGEMAP_OUT_BATCH overrides (tests). */
#define OUT_BATCH 4096

bool out_parse_opt(struct out_opts *o, int c, const char *arg)
{
	switch (c) {
	case 'J':
		o->json = true;
		return true;
	case 'r':
		o->raw = true;
		return true;
	case 'n':
		o->noheadings = true;
		return true;
	case 'b':
		o->bytes = true;
		return true;
	case 'o':
		o->list = arg;
		return true;
	case OUT_OPT_ALL:
		o->all = true;
		return true;
	default:
		return false;
	}
}

static void help(FILE *f, const struct out_col *cols, size_t n, bool short_bytes)
{
	size_t i;

	complete_columns(cols, n);	/* when completing; nothing otherwise */
	fputs("\nOutput:\n"
	      " -J, --json             JSON (sizes in bytes, addresses as \"0x...\" strings)\n"
	      " -r, --raw              raw output, no alignment\n"
	      " -n, --noheadings       no column headings\n"
	      " -o, --output LIST      columns to show; +LIST adds to the default\n"
	      "     --output-all       every column\n", f);
	fprintf(f, " %s--bytes            sizes in bytes, not human-readable\n", short_bytes ? "-b, " : "    ");
	fputs("\nAvailable output columns:\n", f);
	for (i = 0; i < n; i++) {
		fprintf(f, " %12s  %s", cols[i].name, cols[i].help);
		if (cols[i].aliases) {	/* the other names, without its own */
			const char *a = cols[i].aliases, *sep = " (-o also takes ";

			while (*a) {
				size_t len = strcspn(a, ",");

				if (strlen(cols[i].name) != len || strncasecmp(a, cols[i].name, len)) {
					fprintf(f, "%s%.*s", sep, (int)len, a);
					sep = ", ";
				}
				a += len + (a[len] == ',');
			}
			fputs(")", f);
		}
		fputc('\n', f);
	}
}

void out_help(FILE *f, const struct out_col *cols, size_t n)
{
	help(f, cols, n, true);
}

void out_help_long_bytes(FILE *f, const struct out_col *cols, size_t n)
{
	help(f, cols, n, false);
}

/* Is @name (@len bytes) one of the comma-separated @list? */
static bool in_list(const char *list, const char *name, size_t len)
{
	while (list && *list) {
		size_t n = strcspn(list, ",");

		if (n == len && !strncasecmp(list, name, len))
			return true;
		list += n + (list[n] == ',');
	}
	return false;
}

static int find_col(const struct out_col *cols, size_t n, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strlen(cols[i].name) == len && !strncasecmp(cols[i].name, name, len))
			return (int)i;
	for (i = 0; i < n; i++)
		if (in_list(cols[i].aliases, name, len))
			return (int)i;
	return -1;
}

/* Parse "A,B,C" into ids; returns the count or -1 after a usage error. */
static int parse_list(const char *list, const struct out_col *cols, size_t n, size_t *ids, size_t max, int have)
{
	const char *p = list;

	while (*p) {
		size_t len = strcspn(p, ",");
		int id = find_col(cols, n, p, len);
		if (id < 0) {
			cli_usage_error("unknown column '%.*s' (see --help for the list)", (int)len, p);
			return -1;
		}
		if (have < (int)max)
			ids[have++] = (size_t)id;
		p += len;
		if (*p == ',')
			p++;
	}
	return have;
}

static int add_column(struct out *out, size_t id)
{
	const struct out_col *c = &out->cols[id];
	static const int json_type[] = { [OUT_STR] = SCOLS_JSON_STRING, [OUT_SIZE] = SCOLS_JSON_NUMBER,
					 [OUT_NUM] = SCOLS_JSON_NUMBER, [OUT_HEX] = SCOLS_JSON_STRING,
					 [OUT_BOOL] = SCOLS_JSON_BOOLEAN, [OUT_SECS] = SCOLS_JSON_NUMBER };
	struct libscols_column *sc;

	if (out->sc[id])
		return 0;
	sc = scols_table_new_column(out->tb, c->name, c->whint, c->flags);
	if (!sc)
		return -ENOMEM;
	/* libsmartcols lower-cases the heading for the JSON key. */
	scols_column_set_json_type(sc, json_type[c->kind]);
	out->sc[id] = sc;
	out->order[out->nshown] = id;
	out->seq[id] = out->nshown++;
	return 0;
}

static int select_columns(struct out *out, const char *defaults)
{
	size_t ids[OUT_MAX_COLS], i;
	int n = 0;

	if (out->o.all) {
		for (i = 0; i < out->ncols; i++)
			ids[n++] = i;
	} else {
		const char *list = out->o.list;
		if (!list || *list == '+')
			n = parse_list(defaults, out->cols, out->ncols, ids, OUT_MAX_COLS, 0);
		if (n >= 0 && list)
			n = parse_list(*list == '+' ? list + 1 : list, out->cols, out->ncols, ids, OUT_MAX_COLS, n);
	}
	if (n < 0)
		return -EINVAL;
	if (n == 0) {
		cli_usage_error("no columns to show: -o needs at least one (see --help for the list)");
		return -EINVAL;
	}
	for (i = 0; i < (size_t)n; i++)
		if (add_column(out, ids[i]) < 0)
			return -ENOMEM;
	return 0;
}

struct out *out_new(const char *name, const struct out_col *cols, size_t n, const char *defaults,
		    const struct out_opts *o)
{
	struct out *out = calloc(1, sizeof(*out));

	if (!out || n > OUT_MAX_COLS || !(out->tb = scols_new_table())) {
		free(out);
		cli_error(0, "cannot create output table: %s", strerror(ENOMEM));
		return NULL;
	}
	out->cols = cols;
	out->ncols = n;
	out->o = *o;
	out->name = name;
	out->batch = OUT_BATCH;
	if (getenv("PAGEMAP_OUT_BATCH") && atoi(getenv("PAGEMAP_OUT_BATCH")) > 0)
		out->batch = (size_t)atoi(getenv("PAGEMAP_OUT_BATCH"));
	out->slow = getenv("PAGEMAP_OUT_SLOW") && *getenv("PAGEMAP_OUT_SLOW") == '1';
	out->tty = isatty(STDOUT_FILENO);
	scols_table_set_name(out->tb, name);
	scols_table_enable_json(out->tb, o->json);
	scols_table_enable_raw(out->tb, o->raw);
	scols_table_enable_noheadings(out->tb, o->noheadings);
	if (select_columns(out, defaults) < 0) {
		out_free(out);
		return NULL;
	}
	return out;
}

void out_free(struct out *out)
{
	if (!out)
		return;
	scols_unref_table(out->tb);
	obuf_free(&out->ob);
	free(out);
}

bool out_has(const struct out *out, size_t id)
{
	return id < out->ncols && out->sc[id];
}

struct libscols_line *out_line(struct out *out)
{
	out->lines++;
	return scols_table_new_line(out->tb, NULL);
}

struct libscols_line *out_total_line(struct out *out)
{
	if (out->o.json || out->o.raw)
		return NULL;
	return scols_table_new_line(out->tb, NULL);
}

static void set_cell(struct out *out, struct libscols_line *ln, size_t id, const char *s)
{
	if (ln && out_has(out, id))
		scols_line_set_data(ln, out->seq[id], s);
}

void out_str(struct out *out, struct libscols_line *ln, size_t id, const char *s)
{
	/* libsmartcols prints a JSON boolean false only for "", "0" or "n...": "false" would print true. */
	if (out->cols[id].kind == OUT_BOOL && out->o.json && s)
		s = !strcmp(s, "yes") || !strcmp(s, "true") ? "1" : "0";
	set_cell(out, ln, id, s);
}

char *out_human_size(uint64_t bytes, char *buf, size_t size)
{
	static const char suffix[] = "BKMGTPE";
	unsigned exp = 0;
	uint64_t whole = bytes, frac = 0;

	while (whole >= 1024 && exp + 1 < sizeof(suffix) - 1) {
		frac = whole & 1023;
		whole >>= 10;
		exp++;
	}
	/* One decimal, rounded, as util-linux's size_to_human_string. */
	frac = (frac * 10 + 512) / 1024;
	if (frac == 10) {
		whole++;
		frac = 0;
	}
	if (frac && whole < 1000)
		snprintf(buf, size, "%" PRIu64 ".%" PRIu64 "%c", whole, frac, suffix[exp]);
	else
		snprintf(buf, size, "%" PRIu64 "%c", whole, suffix[exp]);
	return buf;
}

void out_u64(struct out *out, struct libscols_line *ln, size_t id, uint64_t v)
{
	char buf[32];

	if (!ln || !out_has(out, id))
		return;
	switch (out->cols[id].kind) {
	case OUT_SIZE:
		if (out->o.bytes || out->o.json)
			out_fmt_u64(buf, v, false);
		else
			out_human_size(v, buf, sizeof(buf));
		break;
	case OUT_HEX:
		out_fmt_u64(buf, v, true);	/* printf's cost showed in the many-row commands (#12) */
		break;
	case OUT_BOOL:
		snprintf(buf, sizeof(buf), "%s", v ? (out->o.json ? "1" : "yes") : (out->o.json ? "0" : "no"));
		break;
	case OUT_NUM:
	case OUT_STR:
	default:
		out_fmt_u64(buf, v, false);
		break;
	}
	set_cell(out, ln, id, buf);
}

void out_unknown(struct out *out, struct libscols_line *ln, size_t id)
{
	/* An empty cell is null in JSON; a dash in tables says "not known", never a fake 0. */
	set_cell(out, ln, id, out->o.json ? NULL : "-");
}

/*
 * JSON in batches. libsmartcols 2.38 cannot print a JSON range (it asserts),
 * so each batch is printed whole to a string, "{\n   \"NAME\": [\n" ROWS
 * "\n   ]\n}", and its ROWS are spliced: the first batch's after the opening,
 * every later one after a ",", its first row's indentation dropped, which
 * is how libsmartcols itself joins rows ("},{"). Returns 0, 1 if this
 * library's JSON does not look like that (nothing printed), or -EIO.
 */
static int json_batch(struct out *out)
{
	char head[256], *s = NULL, *rows;
	size_t len, hlen;
	static const char tail[] = "\n   ]\n}";
	int r;

	snprintf(head, sizeof(head), "{\n   \"%s\": [\n", out->name);
	hlen = strlen(head);
	if (scols_print_table_to_string(out->tb, &s) || !s) {
		free(s);
		return -EIO;
	}
	len = strlen(s);
	if (len && s[len - 1] == '\n')
		len--;
	r = 1;
	if (len < hlen + sizeof(tail) - 1 || strncmp(s, head, hlen) ||
	    strncmp(s + len - (sizeof(tail) - 1), tail, sizeof(tail) - 1) || strncmp(s + hlen, "      {", 7))
		goto out;
	s[len - (sizeof(tail) - 1)] = '\0';
	rows = s + hlen;
	if (out->streamed)
		r = fputs(",", stdout) < 0 || fputs(rows + 6, stdout) < 0 ? -EIO : 0;
	else
		r = fputs(head, stdout) < 0 || fputs(rows, stdout) < 0 ? -EIO : 0;
out:
	free(s);
	return r;
}

/* The text of the cell at position @pos of @ln, or NULL. */
static const char *cell_data(struct libscols_line *ln, size_t pos)
{
	struct libscols_cell *ce = scols_line_get_cell(ln, pos);

	return ce ? scols_cell_get_data(ce) : NULL;
}

/* One row as libsmartcols prints it in JSON: "      {" first in the stream, "},{" after a row. */
static void json_row(struct out *out, struct libscols_line *ln, bool first)
{
	size_t i;

	obuf_str(&out->ob, first ? "      {\n" : ",{\n");
	for (i = 0; i < out->nshown; i++) {
		const struct out_col *c = &out->cols[out->order[i]];
		const char *d = cell_data(ln, i);

		obuf_str(&out->ob, i ? ",\n         " : "         ");
		obuf_json_key(&out->ob, c->name);
		if (c->kind == OUT_BOOL)
			obuf_json_bool(&out->ob, d);
		else if (c->kind == OUT_STR || c->kind == OUT_HEX)
			obuf_json_string(&out->ob, d);
		else
			obuf_json_number(&out->ob, d);
	}
	obuf_str(&out->ob, "\n      }");
}

/*
 * One aligned row in the widths libsmartcols gave the columns (@w): right
 * aligned cells padded before, others after, the last left-aligned one and
 * an empty last one not at all. False when a cell is not plain ASCII or wider than its column:
 * then libsmartcols prints the batch (it encodes, measures and widens).
 */
static bool aligned_row(struct out *out, struct libscols_line *ln, const size_t *w)
{
	size_t i, len;

	for (i = 0; i < out->nshown; i++) {
		bool right = out->cols[out->order[i]].flags & SCOLS_FL_RIGHT, last = i + 1 == out->nshown;
		const char *d = cell_data(ln, i);

		if (!out_cell_plain(d, &len) || (len > w[i] && (right || !last)))
			return false;
		if (last && !len)	/* libsmartcols pads no empty last cell, even a right-aligned one */
			break;
		if (right)
			obuf_pad(&out->ob, w[i] - len);
		obuf_add(&out->ob, d ? d : "", len);
		if (!last)
			obuf_pad(&out->ob, right ? 1 : w[i] - len + 1);
	}
	obuf_add(&out->ob, "\n", 1);
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
	struct libscols_iter *itr;
	struct libscols_line *ln;
	size_t i, w[OUT_MAX_COLS];
	bool first = !out->streamed;
	int r = 0;

	if (out->slow || (!out->o.json && !out->o.raw && (!out->streamed || out->tty)))
		return 1;
	if (!(itr = scols_new_iter(SCOLS_ITER_FORWARD)))
		return 1;
	out->ob.len = 0;
	for (i = 0; i < out->nshown; i++)
		w[i] = scols_column_get_width(out->sc[out->order[i]]);
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
	while (r == 0 && scols_table_next_line(out->tb, itr, &ln) == 0) {
		if (out->o.json) {
			json_row(out, ln, first);
			first = false;
		} else if (out->o.raw) {
			for (i = 0; i < out->nshown; i++) {
				obuf_str(&out->ob, i ? " " : "");
				obuf_raw_cell(&out->ob, cell_data(ln, i));
			}
			obuf_add(&out->ob, "\n", 1);
		} else if (!aligned_row(out, ln, w)) {
			r = 1;
		}
	}
	scols_free_iter(itr);
	if (r == 0 && out->ob.oom)
		r = 1;
	if (r == 0 && fwrite(out->ob.p, 1, out->ob.len, stdout) != out->ob.len)
		r = -EIO;
	return r;
}

/* The batch through libsmartcols; columns keep the widest width seen, so the stream stays aligned. */
static int scols_batch(struct out *out)
{
	size_t i, w;
	int r;

	if (out->o.json) {
		r = json_batch(out);
		if (r == 1 && out->streamed)	/* it did look like that before: cannot happen */
			return -EIO;
		if (r == 1) {	/* keep every line: one table at the end */
			out->stream_off = true;
			r = 0;
		}
	} else {
		r = scols_table_print_range(out->tb, NULL, NULL) || fputc('\n', stdout) == EOF ? -EIO : 0;
		/*
		 * Not a left-aligned last column: it is not padded, and its relative
		 * hint lets it take the rest of a terminal.
		 */
		for (i = 0; r == 0 && i < out->ncols; i++) {
			if (!out->sc[i] || (out->seq[i] + 1 == out->nshown && !(out->cols[i].flags & SCOLS_FL_RIGHT)))
				continue;
			w = scols_column_get_width(out->sc[i]);
			scols_column_set_whint(out->sc[i], (double)w);
			/*
			 * libsmartcols (2.38) widens a column narrower than its heading to the
			 * heading and stops there, ignoring the hint; a strict-width one gets
			 * the hint, unless the hint is no wider than the heading. So: strict
			 * only when wider than the heading.
			 */
			if (w > strlen(out->cols[i].name))
				scols_column_set_flags(out->sc[i], scols_column_get_flags(out->sc[i]) | SCOLS_FL_STRICTWIDTH);
		}
	}
	return r;
}

/* Print the lines held and drop them. */
static int print_batch(struct out *out)
{
	int r = direct_batch(out);

	if (r == 1)
		r = scols_batch(out);
	if (out->stream_off)
		return r;
	scols_table_remove_lines(out->tb);
	out->lines = 0;
	out->streamed = true;
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

	if (!out->streamed)
		return scols_print_table(out->tb) ? -EIO : 0;
	if (out->lines)
		r = print_batch(out);
	if (r == 0 && out->o.json)
		r = fputs("\n   ]\n}\n", stdout) < 0 ? -EIO : 0;
	return r;
}

/* ---- record streams: one JSON object per line ---- */

/* Drop the whitespace libsmartcols puts between JSON tokens (not inside strings); in place. */
static void json_compact(char *s)
{
	bool in_str = false, esc = false;
	char *d = s;

	for (; *s; s++) {
		if (in_str) {
			in_str = esc || *s != '"';
			esc = !esc && *s == '\\';
		} else if (*s == ' ' || *s == '\n' || *s == '\t') {
			continue;
		} else {
			in_str = *s == '"';
		}
		*d++ = *s;
	}
	*d = '\0';
}

/* @f's JSON value; a string's bytes are escaped as libsmartcols escapes cells. */
static int json_field(const struct out_field *f)
{
	const unsigned char *c;

	switch (f->kind) {
	case OUT_SECS:
		return printf("%.3f", f->secs);
	case OUT_HEX:
		return printf("\"0x%" PRIx64 "\"", f->u);
	case OUT_BOOL:
		return fputs(f->u ? "true" : "false", stdout);
	case OUT_STR:
		putchar('"');
		for (c = (const unsigned char *)(f->s ? f->s : ""); *c; c++)
			if (*c == '"' || *c == '\\')
				printf("\\%c", *c);
			else if (*c < 0x20)
				printf("\\u%04x", *c);
			else
				putchar(*c);
		return putchar('"');
	default:
		return printf("%" PRIu64, f->u);
	}
}

/*
 * The rows as libsmartcols prints them, compacted to {"NAME":[...]}, and
 * spliced after the head fields: the JSON types, keys and escaping stay
 * those of every other table.
 */
static int json_record(struct out *out, const struct out_field *f, size_t n)
{
	char *s = NULL, head[256];
	size_t i, hlen, len;
	int r = -EIO;

	if (scols_print_table_to_string(out->tb, &s) || !s)
		goto out;
	json_compact(s);
	hlen = (size_t)snprintf(head, sizeof(head), "{\"%s\":[", out->name);
	len = strlen(s);
	if (len < hlen + 2 || strncmp(s, head, hlen) || strcmp(s + len - 2, "]}"))
		goto out;	/* not the JSON this wrapper was written against */
	putchar('{');
	for (i = 0; i < n; i++) {
		printf("\"%s\":", f[i].key);
		json_field(&f[i]);
		putchar(',');
	}
	r = fputs(s + 1, stdout) == EOF || putchar('\n') == EOF || fflush(stdout) ? -EIO : 0;
out:
	free(s);
	return r;
}

int out_print_record(struct out *out, const char *heading, const struct out_field *f, size_t n)
{
	int r;

	if (out->o.json) {
		r = json_record(out, f, n);
	} else {
		r = heading && fputs(heading, stdout) == EOF ? -EIO : 0;
		if (r == 0)
			r = scols_print_table(out->tb) || fflush(stdout) ? -EIO : 0;
	}
	scols_table_remove_lines(out->tb);
	out->lines = 0;
	return r;
}
