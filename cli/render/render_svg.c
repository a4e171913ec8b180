/* render_svg.c - pagemap render's SVG, JSON and ANSI writers: the same ribbon of cells, deterministic output. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "out_human.h"	/* out_human_size: the sizes the tables print */
#include "render.h"
#include "textsafe.h"

#define X0 8		/* left margin */
#define Y0 48		/* first row's top, under the heading */
#define CELL_H 14	/* a row's cells */
#define PITCH 28	/* a row: cells, then a lane for names */
#define MAX_TITLES 4000	/* bands with their own tooltip; beyond, the SVG would outgrow 1 MiB */

static uint32_t cell_x(const struct rnd_model *m, uint32_t i)
{
	return X0 + i % m->width;
}

static uint32_t cell_y(const struct rnd_model *m, uint32_t i)
{
	return Y0 + i / m->width * PITCH;
}

/* Drawn key of a cell: state * 5 + opacity level; gaps are drawn apart. */
static unsigned cell_key(const struct rnd_cell *c)
{
	unsigned level;
	enum rnd_state s = rnd_cell_state(c, &level);

	return (unsigned)s * 5 + level;
}

static const char *const opacity[5] = { "1", ".4", ".6", ".8", "1" };

/*
 * One path per drawn key: a thick stroke per run of equal cells in a row,
 * relative moves between runs (about 7 bytes a run: what keeps 250 k
 * cells under 1 MiB).
 */
static void svg_cells(FILE *f, const struct rnd_model *m, const unsigned char *keys, unsigned key)
{
	uint32_t i = 0, row = UINT32_MAX, last_end = 0;
	bool any = false;

	while (i < m->ncells) {
		uint32_t j = i;

		if (keys[i] != key) {
			i++;
			continue;
		}
		while (j + 1 < m->ncells && keys[j + 1] == key && (j + 1) % m->width)
			j++;
		if (!any)
			fprintf(f, "<path fill=\"none\" stroke=\"%s\" stroke-opacity=\"%s\" stroke-width=\"%d\" d=\"",
				m->states[key / 5].colour, opacity[key % 5], CELL_H);
		if (i / m->width != row) {
			row = i / m->width;
			fprintf(f, "M%u %uh%u", cell_x(m, i), cell_y(m, i) + CELL_H / 2, j - i + 1);
		} else {
			fprintf(f, "m%u 0h%u", cell_x(m, i) - last_end, j - i + 1);
		}
		last_end = cell_x(m, j) + 1;
		any = true;
		i = j + 1;
	}
	if (any)
		fputs("\"/>\n", f);
}

/* A band's pieces (it may wrap over rows): call @fn for each. */
static void pieces(const struct rnd_model *m, const struct rnd_seg *s, FILE *f,
		   void (*fn)(FILE *f, const struct rnd_model *m, const struct rnd_seg *s, uint32_t from, uint32_t n))
{
	uint32_t i = s->cell, end = s->cell + s->ncells;

	while (i < end) {
		uint32_t row_end = (i / m->width + 1) * m->width, upto = end < row_end ? end : row_end;

		fn(f, m, s, i, upto - i);
		i = upto;
	}
}

static void gap_piece(FILE *f, const struct rnd_model *m, const struct rnd_seg *s, uint32_t from, uint32_t n)
{
	char sz[16];

	fprintf(f, "<rect x=\"%u\" y=\"%u\" width=\"%u\" height=\"%d\" fill=\"url(#gap)\"><title>gap %s</title></rect>\n",
		cell_x(m, from), cell_y(m, from), n, CELL_H, out_human_size(s->end - s->start, sz, sizeof(sz)));
	if (n >= 18)
		fprintf(f, "<text x=\"%u\" y=\"%u\" class=\"g\">%s</text>\n", cell_x(m, from), cell_y(m, from) + CELL_H + 10,
			sz);
}

static void seg_name(const struct rnd_model *m, const struct rnd_seg *s, char *buf, size_t size)
{
	if (s->nmaps > 1)
		snprintf(buf, size, "%u mappings", s->nmaps);
	else
		snprintf(buf, size, "%s", m->maps[s->first_map].name);
}

static void band_piece(FILE *f, const struct rnd_model *m, const struct rnd_seg *s, uint32_t from, uint32_t n)
{
	const struct rnd_map *mp = &m->maps[s->first_map];
	char name[4096], sz[16], pr[16];
	const char *base;

	seg_name(m, s, name, sizeof(name));
	fprintf(f, "<rect class=\"b\" x=\"%u\" y=\"%u\" width=\"%u\" height=\"%d\"><title>", cell_x(m, from),
		cell_y(m, from), n, CELL_H);
	rnd_xml_escape(f, name);
	fputc(' ', f);
	/* perms are [rwxsp-], escaped as every text read all the same */
	rnd_xml_escape(f, s->nmaps > 1 ? "" : mp->perms);
	fprintf(f, " 0x%" PRIx64 "-0x%" PRIx64 " %s, present %s</title></rect>\n",
		s->start, s->end, out_human_size(s->pages * m->page_size, sz, sizeof(sz)),
		out_human_size(s->nmaps > 1 ? 0 : mp->bytes[RC_PRESENT], pr, sizeof(pr)));
	if (n < 30)
		return;
	base = strrchr(name, '/');	/* a file's name, not its directory */
	base = base && base[1] ? base + 1 : name;
	snprintf(name, sizeof(name), "%.*s", (int)(n / 6), base);
	fprintf(f, "<text x=\"%u\" y=\"%u\">", cell_x(m, from), cell_y(m, from) + CELL_H + 10);
	rnd_xml_escape(f, name);
	fputs("</text>\n", f);
}

static void tick_piece(FILE *f, const struct rnd_model *m, const struct rnd_seg *s, uint32_t from, uint32_t n)
{
	if (from == s->cell)	/* where a band starts: a tick in the lane under the cells */
		fprintf(f, "M%u %uv3", cell_x(m, from), cell_y(m, from) + CELL_H);
}

static void svg_legend(FILE *f, const struct rnd_model *m, uint32_t y)
{
	uint64_t st[RS_MAXSTATE] = { 0 };
	char sz[16];
	uint32_t n = 0;
	int k;

	rnd_state_totals(m, st);
	for (k = 0; k < (int)rnd_nstates(m); k++) {
		uint32_t x, yy;

		if (!rnd_slot_shown(m, (unsigned)k, st[k]))
			continue;
		x = X0 + (n % 4) * 200 + (m->nstates ? (n % 4) * 100 : 0);	/* value names (cgroup paths) are longer */
		yy = y + (n / 4) * 18;
		n++;

		/* Names of values are cgroup paths too: escaped as every other text of the picture. */
		fprintf(f, "<rect x=\"%u\" y=\"%u\" width=\"12\" height=\"12\" fill=\"%s\" stroke=\"#555555\" "
			   "stroke-width=\".5\"/><text x=\"%u\" y=\"%u\">",
			x, yy, m->states[k].colour, x + 16, yy + 10);
		rnd_xml_escape(f, m->states[k].name);
		fprintf(f, " %s (%" PRIu64 " B)</text>\n", out_human_size(st[k], sz, sizeof(sz)), st[k]);
	}
	y += (n + 3) / 4 * 18 + 8;
	fprintf(f, "<text x=\"%d\" y=\"%u\">bytes by class:", X0, y);
	for (k = 0; k < RC_NCLASS; k++)
		fprintf(f, " %s %" PRIu64 "%s", rnd_classes[k].name, m->total[k], rnd_class_known(m, k) ? "" : "?");
	fputs("</text>\n", f);
	if (m->note[0]) {	/* a colouring's reader could not see everything: never a silent zero */
		fprintf(f, "<text x=\"%d\" y=\"%u\" fill=\"#D55E00\">", X0, y + 18);
		rnd_xml_escape(f, m->note);
		fputs("</text>\n", f);
	}
}

/* The notes the picture owes its reader: what was aggregated, what could not be told. */
static void heading(FILE *f, const struct rnd_model *m, uint32_t nsegs_map)
{
	char a[16], b[16], c[16];	/* one buffer per size: the arguments are all evaluated before printing */

	fprintf(f, "<text x=\"%d\" y=\"16\" class=\"h\">", X0);
	rnd_xml_escape(f, m->source);
	fprintf(f, ": %zu mapping%s, %s mapped, %s present, %s swapped</text>\n", m->nmaps, m->nmaps == 1 ? "" : "s",
		out_human_size(m->mapped, a, sizeof(a)), out_human_size(m->total[RC_PRESENT], b, sizeof(b)),
		out_human_size(m->total[RC_SWAPPED], c, sizeof(c)));
	fprintf(f, "<text x=\"%d\" y=\"32\">one cell per %s or more; band widths grow with the square root of their "
		   "size; gaps collapsed", X0, out_human_size(m->page_size, a, sizeof(a)));
	if (m->group > 1)
		fprintf(f, "; aggregated: bands of %u mappings", m->group);
	if (nsegs_map > MAX_TITLES)
		fprintf(f, "; %u bands, names left out", nsegs_map);
	if (!m->nmaps)
		fputs("; the process has no mappings", f);
	fputs("</text>\n", f);
}

int rnd_write_svg(FILE *f, const struct rnd_model *m)
{
	uint32_t rows = m->rows ? m->rows : 1, w = X0 * 2 + m->width, h = Y0 + rows * PITCH + 80 + (m->nstates ? 54 : 0),
		 nmapsegs = 0;
	unsigned char keys[256], *k;
	size_t i;
	unsigned key;

	for (i = 0; i < m->nsegs; i++)
		nmapsegs += !m->segs[i].gap;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" "
		   "font-family=\"monospace\" font-size=\"10\">\n<title>pagemap render: ", w, h, w, h);
	rnd_xml_escape(f, m->source);
	fputs("</title>\n<style>.b{fill:none;pointer-events:all}.g{fill:#777777}.h{font-weight:bold}</style>\n"
	      "<defs><pattern id=\"gap\" width=\"4\" height=\"4\" patternUnits=\"userSpaceOnUse\">"
	      "<path d=\"M0 4L4 0\" stroke=\"#999999\" stroke-width=\"1\"/></pattern></defs>\n"
	      "<rect width=\"100%\" height=\"100%\" fill=\"#FFFFFF\"/>\n", f);
	heading(f, m, nmapsegs);
	k = m->ncells ? malloc(m->ncells) : NULL;
	if (m->ncells && !k)
		return -ENOMEM;
	memset(keys, 0, sizeof(keys));
	for (i = 0; i < m->ncells; i++) {
		k[i] = (unsigned char)cell_key(&m->cells[i]);
		keys[k[i]] = 1;
	}
	for (i = 0; i < m->nsegs; i++)	/* gap cells are drawn by their own rectangles */
		if (m->segs[i].gap)
			memset(k + m->segs[i].cell, 255, m->segs[i].ncells);
	fputs("<g id=\"cells\">\n", f);
	for (key = 0; key < RS_MAXSTATE * 5; key++)
		if (keys[key])
			svg_cells(f, m, k, key);
	free(k);
	fputs("</g>\n<g id=\"gaps\">\n", f);
	for (i = 0; i < m->nsegs; i++)
		if (m->segs[i].gap && m->segs[i].ncells)
			pieces(m, &m->segs[i], f, gap_piece);
	fputs("</g>\n<path id=\"ticks\" stroke=\"#333333\" stroke-width=\"1\" d=\"", f);
	for (i = 0; i < m->nsegs; i++)
		if (!m->segs[i].gap)
			pieces(m, &m->segs[i], f, tick_piece);
	fputs("\"/>\n<g id=\"bands\">\n", f);
	for (i = 0; i < m->nsegs && nmapsegs <= MAX_TITLES; i++)
		if (!m->segs[i].gap)
			pieces(m, &m->segs[i], f, band_piece);
	fputs("</g>\n<g id=\"legend\">\n", f);
	svg_legend(f, m, Y0 + rows * PITCH + 8);
	fputs("</g>\n</svg>\n", f);
	return ferror(f) ? -EIO : 0;
}

/* ---- JSON: the aggregated grid, exact bytes per cell ---- */

static void json_bytes(FILE *f, const uint64_t *b)
{
	int k;
	bool first = true;

	fputc('{', f);
	for (k = 0; k < RC_NCLASS; k++) {
		if (!b[k])
			continue;
		fprintf(f, "%s\"%s\":%" PRIu64, first ? "" : ",", rnd_classes[k].name, b[k]);
		first = false;
	}
	fputc('}', f);
}

static void json_seg(FILE *f, const struct rnd_model *m, const struct rnd_seg *s)
{
	char name[4096];

	fprintf(f, "{\"kind\":\"%s\",\"start\":\"0x%" PRIx64 "\",\"end\":\"0x%" PRIx64 "\",\"cell\":%u,\"cells\":%u",
		s->gap ? "gap" : "band", s->start, s->end, s->cell, s->ncells);
	if (!s->gap) {
		const struct rnd_map *mp = &m->maps[s->first_map];

		seg_name(m, s, name, sizeof(name));
		fprintf(f, ",\"mappings\":%u,\"size\":%" PRIu64 ",\"perms\":", s->nmaps, s->pages * m->page_size);
		rnd_json_str(f, s->nmaps > 1 ? "" : mp->perms);
		fputs(",\"name\":", f);
		rnd_json_str(f, name);
		if (s->nmaps == 1) {
			fputs(",\"bytes\":", f);
			json_bytes(f, mp->bytes);
		}
	} else {
		fprintf(f, ",\"size\":%" PRIu64, s->end - s->start);
	}
	fputc('}', f);
}

static void json_legend(FILE *f, const struct rnd_model *m)
{
	uint64_t st[RS_MAXSTATE] = { 0 };
	const char *sep = "";
	unsigned k;

	rnd_state_totals(m, st);
	fputs(",\"legend\":{", f);
	for (k = 0; k < rnd_nstates(m); k++) {
		if (!rnd_slot_shown(m, k, st[k]))
			continue;
		fputs(sep, f);
		rnd_json_str(f, m->states[k].name);
		fprintf(f, ":%" PRIu64, st[k]);
		sep = ",";
	}
	fputs("},\"note\":", f);
	rnd_json_str(f, m->note);
}

int rnd_write_json(FILE *f, const struct rnd_model *m)
{
	const char *sep;
	size_t i;
	bool first = true;
	int k;

	fputs("{\"render\":{\"source\":", f);
	rnd_json_str(f, m->source);
	fprintf(f, ",\"page_size\":%" PRIu64 ",\"width\":%u,\"rows\":%u,\"group\":%u,\"mapped\":%" PRIu64
		   ",\"classes\":[", m->page_size, m->width, m->rows, m->group, m->mapped);
	for (k = 0; k < RC_NCLASS; k++)
		fprintf(f, "%s\"%s\"", k ? "," : "", rnd_classes[k].name);
	fputs("],\"total\":", f);
	json_bytes(f, m->total);
	if (m->nstates)	/* a colouring by value: its legend, exact bytes per value */
		json_legend(f, m);
	fputs(",\n\"segments\":[", f);
	for (i = 0; i < m->nsegs; i++) {
		fputs(i ? ",\n" : "\n", f);
		json_seg(f, m, &m->segs[i]);
	}
	fputs("],\n\"cells\":[", f);
	for (i = 0; i < m->ncells; i++) {
		const struct rnd_cell *c = &m->cells[i];
		unsigned level;
		enum rnd_state s = rnd_cell_state(c, &level);

		if (c->state[RS_NONE] == 0 && s == RS_NONE)
			continue;	/* gap cells and empty ones: the segments say what they are */
		fprintf(f, "%s\n{\"cell\":%zu,\"start\":\"0x%" PRIx64 "\",\"end\":\"0x%" PRIx64 "\",\"state\":", first ? "" : ",",
			i, c->start, c->end);
		rnd_json_str(f, m->states[s].name);	/* a colouring's values are cgroup paths */
		fprintf(f, ",\"level\":%u,\"bytes\":", level);
		json_bytes(f, c->bytes);
		fputs(",\"states\":{", f);
		for (k = 0, sep = ""; k < RS_MAXSTATE; k++)
			if (c->state[k]) {
				fputs(sep, f);
				rnd_json_str(f, m->states[k].name);
				fprintf(f, ":%" PRIu64, c->state[k]);
				sep = ",";
			}
		fputs("}}", f);
		first = false;
	}
	fputs("]}}\n", f);
	return ferror(f) ? -EIO : 0;
}

/* ---- ANSI: the ribbon in a terminal, 24-bit background colours ---- */

static char ansi_last[32];	/* the colour escape last written: repeat none (a terminal line stays short) */

/* Write @s (which resets the colours) and forget the last colour. */
static void ansi_reset(FILE *f, const char *s)
{
	fputs(s, f);
	ansi_last[0] = '\0';
}

static void ansi_colour(FILE *f, const char *hex, unsigned level)
{
	char esc[32];
	unsigned rgb[3], i;

	sscanf(hex + 1, "%2x%2x%2x", &rgb[0], &rgb[1], &rgb[2]);
	for (i = 0; i < 3; i++)	/* the opacity over a white background, as the SVG shows it */
		rgb[i] = 255 - (255 - rgb[i]) * (level ? level : 4) / 4;
	snprintf(esc, sizeof(esc), "\033[48;2;%u;%u;%um", rgb[0], rgb[1], rgb[2]);
	if (strcmp(esc, ansi_last))
		fputs(esc, f);
	snprintf(ansi_last, sizeof(ansi_last), "%s", esc);
}

struct tbuf {
	char *p;
	size_t len, size;
};

static void put_tbuf(void *ctx, const char *s, size_t n)
{
	struct tbuf *b = ctx;

	n = n < b->size - 1 - b->len ? n : b->size - 1 - b->len;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

/* A band's name as a terminal may show it (cut to its band afterwards: an escape may be cut, never a byte let through). */
static void term_name(const struct rnd_model *m, const struct rnd_seg *s, char *buf, size_t size)
{
	char raw[4096];
	struct tbuf b = { buf, 0, size };

	seg_name(m, s, raw, sizeof(raw));
	buf[0] = '\0';
	ts_escape(TS_TERM, raw, put_tbuf, &b);
}

/* Under a row: each band's name from its first column, as far as the next band. */
static void ansi_names(FILE *f, const struct rnd_model *m, uint32_t row)
{
	char line[4096];
	uint32_t first = row * m->width, w = m->width < sizeof(line) - 1 ? m->width : sizeof(line) - 1, c;

	memset(line, ' ', w);
	line[w] = '\0';
	for (c = 0; c < w && first + c < m->ncells; c++) {
		long si = rnd_seg_of_cell(m, first + c);
		const struct rnd_seg *s;
		char name[4096], sz[16];
		uint32_t n;

		if (si < 0 || ((s = &m->segs[si])->cell != first + c && c))
			continue;
		if (s->gap)
			snprintf(name, sizeof(name), "~%s", out_human_size(s->end - s->start, sz, sizeof(sz)));
		else
			term_name(m, s, name, sizeof(name));
		n = s->cell + s->ncells - (first + c);
		if (n > 1)
			memcpy(line + c, name, strlen(name) < n - 1 && strlen(name) < w - c ? strlen(name) : (n - 1 < w - c ? n - 1 : w - c));
	}
	fprintf(f, "%s\n", line);
}

int rnd_write_ansi(FILE *f, const struct rnd_model *m)
{
	uint64_t st[RS_MAXSTATE] = { 0 };
	char a[16];
	uint32_t r, c;
	int k;
	const char *sep = "";

	rnd_term_str(f, m->source);
	fprintf(f, ": %zu mapping%s, %s mapped%s\n", m->nmaps, m->nmaps == 1 ? "" : "s", out_human_size(m->mapped, a, sizeof(a)),
		m->group > 1 ? " (aggregated: bands of several mappings)" : "");
	for (r = 0; r < m->rows && r * m->width < m->ncells; r++) {
		for (c = 0; c < m->width && r * m->width + c < m->ncells; c++) {
			uint32_t i = r * m->width + c;
			long si = rnd_seg_of_cell(m, i);
			unsigned level;
			enum rnd_state s = rnd_cell_state(&m->cells[i], &level);

			if (si >= 0 && m->segs[si].gap) {
				ansi_reset(f, "\033[0m\033[90m~");
				continue;
			}
			ansi_colour(f, m->states[s].colour, level);
			fputc(si >= 0 && m->segs[si].cell == i ? '|' : ' ', f);
		}
		ansi_reset(f, "\033[0m\n");
		ansi_names(f, m, r);
	}
	rnd_state_totals(m, st);
	for (k = 0; k < (int)rnd_nstates(m); k++) {
		if (!rnd_slot_shown(m, (unsigned)k, st[k]))
			continue;
		fputs(sep, f);
		ansi_colour(f, m->states[k].colour, 4);
		ansi_reset(f, "  \033[0m");
		fputc(' ', f);
		rnd_term_str(f, m->states[k].name);	/* cgroup paths, when coloured by cgroup */
		fprintf(f, " %s", out_human_size(st[k], a, sizeof(a)));
		sep = "  ";
	}
	fputc('\n', f);
	if (m->note[0]) {
		fputs("note: ", f);
		rnd_term_str(f, m->note);
		fputc('\n', f);
	}
	return ferror(f) ? -EIO : 0;
}
