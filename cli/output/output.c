/*
 * output.c - the output layer's front (output.h): common options, --help, column selection,
 * typed cells. Printing is out_stream.c's; which renderer prints which case, output.h says.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "output.h"
#include "cli.h"
#include "complete.h"
#include "out_table.h"

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
	case OUT_OPT_TOTAL:
		o->total = true;
		return true;
	default:
		return false;
	}
}

/* Column @c's line of --help: its name, its help and the other names -o takes for it. */
static void help_column(FILE *f, const struct out_col *c)
{
	char text[512];
	size_t n = (size_t)snprintf(text, sizeof(text), "%s", c->help);
	const char *a = c->aliases, *sep = " (-o also takes ";

	while (a && *a && n < sizeof(text)) {	/* the other names, without its own */
		size_t len = strcspn(a, ",");

		if (strlen(c->name) != len || strncasecmp(a, c->name, len)) {
			n += (size_t)snprintf(text + n, sizeof(text) - n, "%s%.*s", sep, (int)len, a);
			sep = ", ";
		}
		a += len + (a[len] == ',');
	}
	if (c->aliases && n < sizeof(text))
		snprintf(text + n, sizeof(text) - n, ")");
	/* Folded at spaces to 80 columns under the help's first word, as the options above are. */
	char line[600];

	snprintf(line, sizeof(line), " %12s  %s", c->name, text);
	cli_fputs_wrapped(f, line, 79, "               ");
	fputc('\n', f);
}

void out_help_columns(FILE *f, const struct out_col *cols, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		help_column(f, &cols[i]);
}

void out_help_with(FILE *f, const struct out_col *cols, size_t n, unsigned flags)
{
	complete_columns(cols, n);	/* when completing; nothing otherwise */
	fputs("\nOutput:\n"
	      " -J, --json             JSON (sizes in bytes, addresses as \"0x...\" strings;\n"
	      "                        bytes of names that are not UTF-8 as \\xHH, see\n"
	      "                        pagemap(1))\n"
	      " -r, --raw              raw output, no alignment\n", f);
	fprintf(f, " %s--noheadings       no column headings\n", flags & OUT_HELP_LONG_NOHEADINGS ? "    " : "-n, ");
	fputs(" -o, --output LIST      columns to show; +LIST adds to the default\n"
	      "     --output-all       every column\n", f);
	fprintf(f, " %s--bytes            sizes in bytes, not human-readable\n",
		flags & OUT_HELP_LONG_BYTES ? "    " : "-b, ");
	if (flags & OUT_HELP_TOTAL)
		fputs("     --total            the total row also with -n or -r (rows only)\n", f);
	fputs("\nAvailable output columns:\n", f);
	out_help_columns(f, cols, n);
}

/* @list (comma separated) after @label, wrapped at commas to fit 80 columns, each line indented. */
static void help_list(FILE *f, const char *label, const char *list)
{
	size_t col = 2;

	fprintf(f, "%s\n  ", label);
	while (*list) {
		size_t len = strcspn(list, ",");
		bool more = list[len] == ',';

		if (col > 2 && col + len + more > 79) {
			fputs("\n  ", f);
			col = 2;
		}
		fprintf(f, "%.*s%s", (int)len, list, more ? "," : "");
		col += len + more;
		list += len + more;
	}
	fputc('\n', f);
}

void out_help_defaults(FILE *f, const char *defaults, const char *term_defaults)
{
	fputc('\n', f);
	if (!term_defaults) {
		help_list(f, "Default columns:", defaults);
		return;
	}
	help_list(f, "Default columns on a terminal (a set that fits 80 columns):", term_defaults);
	help_list(f, "Default columns in a pipe or file, with -r and with -J:", defaults);
}

void out_help(FILE *f, const struct out_col *cols, size_t n)
{
	out_help_with(f, cols, n, 0);
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

static void add_column(struct out *out, size_t id)
{
	if (out->shown[id])
		return;
	out->shown[id] = true;
	out->order[out->nshown] = id;
	out->seq[id] = out->nshown++;
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
		add_column(out, ids[i]);
	return 0;
}

struct out *out_new(const char *name, const struct out_col *cols, size_t n, const char *defaults,
		    const struct out_opts *o)
{
	return out_new_fit(name, cols, n, defaults, NULL, o);
}

struct out *out_new_fit(const char *name, const struct out_col *cols, size_t n, const char *defaults,
			const char *term_defaults, const struct out_opts *o)
{
	struct out *out = calloc(1, sizeof(*out));

	if (!out || n > OUT_MAX_COLS) {
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
	out->own = out_own_wanted(out);
	if (term_defaults && out->tty && !o->json && !o->raw && !o->all &&
	    (!o->list || *o->list == '+')) {
		defaults = term_defaults;
		out->term_view = true;
	}
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
	if (out->tb)
		sym_scols_unref_table(out->tb);
	obuf_free(&out->ob);
	obuf_free(&out->text);
	obuf_free(&out->cells);
	free(out->ref);
	free(out->set);
	free(out);
}

bool out_term_view(const struct out *out)
{
	return out->term_view;
}

bool out_has(const struct out *out, size_t id)
{
	return id < out->ncols && out->shown[id];
}

struct libscols_line *out_line(struct out *out)
{
	out->lines++;
	if (out->own) {
		if (!out_own_row(out))
			out->oom = true;
		/* A handle the commands only pass back to the setters: never dereferenced in own mode. */
		return (struct libscols_line *)out;
	}
	return out_scols(out) ? NULL : sym_scols_table_new_line(out->tb, NULL);
}

void out_tree(struct out *out)
{
	out->tree = true;
	out->own = false;	/* children hang on real lines; own rows have none */
}

struct libscols_line *out_child_line(struct out *out, struct libscols_line *parent)
{
	struct libscols_line *ln = out_line(out);

	if (ln && parent && out->tree)
		sym_scols_line_add_child(parent, ln);
	return ln;
}

struct libscols_line *out_total_line(struct out *out)
{
	if (out->o.json || ((out->o.raw || out->o.noheadings) && !out->o.total))
		return NULL;
	return out_line(out);
}

struct libscols_line *out_total_row(struct out *out)
{
	if (!out->o.json && (out->o.raw || out->o.noheadings) && !out->o.total)
		return NULL;
	return out_line(out);
}

/*
 * Cell @id of @ln: @s, whose length (and that it is plain) the caller may know: @len, else
 * OUT_CELL_ODD and it is measured here.
 */
static void set_cell(struct out *out, struct libscols_line *ln, size_t id, const char *s, size_t len)
{
	bool plain = true;

	/* The handle out_line gives in own mode is @out itself; a real line (a total) goes to libsmartcols. */
	if (ln == (struct libscols_line *)out && out_has(out, id)) {
		if (s && len == OUT_CELL_ODD && !(plain = out_cell_plain(s, &len)))
			len = strlen(s);
		out_own_set(out, out->seq[id], s, len, plain);
	} else if (ln && out_has(out, id)) {
		if (out_scols_cell(out, ln, out->seq[id], s))
			out->oom = true;
	}
}

void out_str(struct out *out, struct libscols_line *ln, size_t id, const char *s)
{
	/* libsmartcols prints a JSON boolean false only for "", "0" or "n...": "false" would print true. */
	if (out->cols[id].kind == OUT_BOOL && out->o.json && s)
		s = !strcmp(s, "yes") || !strcmp(s, "true") ? "1" : "0";
	set_cell(out, ln, id, s, OUT_CELL_ODD);
}

void out_u64(struct out *out, struct libscols_line *ln, size_t id, uint64_t v)
{
	char buf[32];
	size_t len = OUT_CELL_ODD;	/* digits are plain: their length is known */

	if (!ln || !out_has(out, id))
		return;
	switch (out->cols[id].kind) {
	case OUT_SIZE:
		if (out->o.bytes || out->o.json)
			len = out_fmt_u64(buf, v, false);
		else
			out_human_size(v, buf, sizeof(buf));
		break;
	case OUT_HEX:
		len = out_fmt_u64(buf, v, true);	/* printf's cost showed in the many-row commands */
		break;
	case OUT_BOOL:
		snprintf(buf, sizeof(buf), "%s", v ? (out->o.json ? "1" : "yes") : (out->o.json ? "0" : "no"));
		break;
	case OUT_NUM:
	case OUT_STR:
	default:
		len = out_fmt_u64(buf, v, false);
		break;
	}
	set_cell(out, ln, id, buf, len);
}

void out_s64(struct out *out, struct libscols_line *ln, size_t id, int64_t v)
{
	uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	char buf[40];

	if (!ln || !out_has(out, id))
		return;
	if (out->cols[id].kind == OUT_SIZE && !out->o.bytes && !out->o.json) {
		out_human_signed(v, buf, sizeof(buf));
	} else {
		/* JSON takes no '+'; a table's bytes show it, as its human sizes do; no change has no sign. */
		buf[0] = v < 0 ? '-' : '+';
		out_fmt_u64(buf + 1, mag, false);
		if (!(v < 0) && (out->o.json || !mag))
			memmove(buf, buf + 1, strlen(buf));
	}
	set_cell(out, ln, id, buf, OUT_CELL_ODD);
}

void out_unknown(struct out *out, struct libscols_line *ln, size_t id)
{
	/* An empty cell is null in JSON; a dash in tables says "not known", never a fake 0. */
	set_cell(out, ln, id, out->o.json ? NULL : "-", OUT_CELL_ODD);
}
