/* render_html.c - pagemap render's HTML: one self-contained page (inline CSS and JavaScript, no network). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "out_human.h"	/* out_human_size: the sizes the tables print */
#include "render.h"

static const char css[] =
	"body{margin:0;font:12px monospace;color:#222222;background:#FFFFFF}"
	"header{height:48px;padding:4px 8px;box-sizing:border-box;overflow:hidden;white-space:nowrap}"
	"#map{display:block;margin:0 8px;cursor:crosshair}"
	"#tip{position:absolute;display:none;background:#FFFFF0;border:1px solid #888888;padding:4px;"
	"white-space:pre;pointer-events:none}"
	".sw{display:inline-block;width:12px;height:12px;vertical-align:middle;margin:0 4px 0 10px;border:1px solid #555555}"
	"#legend{padding:6px 0}#side{display:flex;gap:8px;padding:8px}"
	"#bands,#runs{flex:1;max-height:320px;overflow:auto;white-space:pre}"
	".note{color:#D55E00}.band{cursor:pointer;height:15px;line-height:15px}.band:hover{background:#EEEEEE}h2{font-size:12px;margin:0 0 4px 0;white-space:normal}";

/*
 * The page's script: draws the cells on a canvas from a level-of-detail
 * grid (level k: one code per 2^k cells), zoom (wheel) and pan (drag),
 * hover (the cell, its mapping and the run at its first address), click
 * (the mapping's runs), search (an address). window.pagemapRender lets a
 * test drive it. Its text is cli/render/render_html.js, made into the C string
 * script[] at build time (the Makefile's rule for render_html_js.h), so the
 * page's program is edited, read and linted as JavaScript.
 */
#include "render_html_js.h"

/*
 * The data's numbers, written into a line that is then written whole: the
 * page holds tens of thousands of runs, and printf parsing its format for
 * every number was most of the time the page took beyond the walk.
 */
static char *put_u(char *p, uint64_t v)
{
	char d[20];
	int n = 0;

	do
		d[n++] = (char)('0' + v % 10);
	while (v /= 10);
	while (n)
		*p++ = d[--n];
	return p;
}

/* "0x" and @v in lower-case hex, as PRIx64 writes it; @q: in quotes (the page reads addresses as BigInt strings) */
static char *put_x(char *p, uint64_t v, bool q)
{
	char d[16];
	int n = 0;

	do
		d[n++] = "0123456789abcdef"[v & 15];
	while (v >>= 4);
	if (q)
		*p++ = '"';
	*p++ = '0';
	*p++ = 'x';
	while (n)
		*p++ = d[--n];
	if (q)
		*p++ = '"';
	return p;
}

static char *put_s(char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	return p + n;
}

/* A band: [gap, start, end, cell, cells, name index, pages, perms, mapping index or -1]. */
static void html_segs(FILE *f, const struct rnd_model *m)
{
	char line[160], *p;
	size_t i;

	fputs(",\"segs\":[", f);
	for (i = 0; i < m->nsegs; i++) {
		const struct rnd_seg *s = &m->segs[i];
		bool one = !s->gap && s->nmaps == 1 && m->group == 1;

		p = put_s(line, i ? ",[" : "[");
		*p++ = s->gap ? '1' : '0';
		*p++ = ',';
		p = put_x(p, s->start, true);
		*p++ = ',';
		p = put_x(p, s->end, true);
		*p++ = ',';
		p = put_u(p, s->cell);
		*p++ = ',';
		p = put_u(p, s->ncells);
		*p++ = ',';
		p = put_u(p, m->group > 1 ? i : s->gap ? 0 : (size_t)s->first_map);
		p = put_s(p, ",\"");
		p = put_u(p, s->pages);
		p = put_s(p, "\",");
		fwrite(line, 1, (size_t)(p - line), f);
		rnd_json_str(f, one ? m->maps[s->first_map].perms : "");
		p = put_s(line, one ? "," : ",-1]");
		if (one) {
			p = put_u(p, s->first_map);
			*p++ = ']';
		}
		fwrite(line, 1, (size_t)(p - line), f);
	}
	fputc(']', f);
}

/* A run: [mapping index, start, end, flags, frame ("hidden", "" none), swap ("T:0xOFF", "hidden", ""), slot]. */
static void html_run(FILE *f, const struct rnd_run *r, bool first)
{
	char line[160], *p = put_s(line, first ? "[" : ",[");

	p = put_u(p, r->map);
	*p++ = ',';
	p = put_x(p, r->start, true);
	*p++ = ',';
	p = put_x(p, r->end, true);
	*p++ = ',';
	p = put_u(p, r->flags);
	*p++ = ',';
	if ((r->flags & PM_PAGE_PRESENT) && (r->flags & PM_PAGE_FRAME))
		p = put_x(p, r->pfn, true);
	else
		p = put_s(p, (r->flags & PM_PAGE_PRESENT) ? "\"hidden\"" : "\"\"");
	*p++ = ',';
	if ((r->flags & PM_PAGE_SWAPPED) && (r->flags & PM_PAGE_FRAME)) {
		*p++ = '"';
		p = put_u(p, r->swap_type);
		*p++ = ':';
		p = put_x(p, r->swap_offset, false);
		*p++ = '"';
	} else {
		p = put_s(p, (r->flags & PM_PAGE_SWAPPED) ? "\"hidden\"" : "\"\"");
	}
	*p++ = ',';
	p = put_u(p, r->slot);
	*p++ = ']';
	fwrite(line, 1, (size_t)(p - line), f);
}

/* Names, one per mapping (grouped: one per band, "N mappings"); mappings with their bytes by class; runs. */
static void html_maps(FILE *f, const struct rnd_model *m)
{
	size_t i;
	int k;

	fputs(",\"names\":[", f);
	for (i = 0; m->group == 1 && i < m->nmaps; i++) {
		fputs(i ? "," : "", f);
		rnd_json_str(f, m->maps[i].name);
	}
	for (i = 0; m->group > 1 && i < m->nsegs; i++)	/* grouped: one name per band */
		fprintf(f, "%s\"%u mappings\"", i ? "," : "", m->segs[i].gap ? 0 : m->segs[i].nmaps);
	fputs("],\"maps\":[", f);
	for (i = 0; m->group == 1 && i < m->nmaps; i++) {
		const struct rnd_map *mp = &m->maps[i];
		char line[320], *p = put_s(line, i ? ",[" : "[");

		p = put_x(p, mp->start, true);
		*p++ = ',';
		p = put_x(p, mp->end, true);
		*p++ = ',';
		fwrite(line, 1, (size_t)(p - line), f);
		/* perms are [rwxsp-] (the maps parser checks): escaped all the same */
		rnd_json_str(f, mp->perms);
		p = put_u(put_s(line, ","), i);
		for (k = 0; k < RC_NCLASS; k++)
			p = put_u(put_s(p, k ? "," : ",["), mp->bytes[k]);
		p = put_s(p, "]]");
		fwrite(line, 1, (size_t)(p - line), f);
	}
	fputs("],\"runs\":[", f);
	for (i = 0; m->group == 1 && i < m->nruns; i++)
		html_run(f, &m->runs[i], !i);
	fprintf(f, "],\"runs_left_out\":%" PRIu64, m->group == 1 ? m->runs_left_out : (uint64_t)m->nruns + m->runs_left_out);
}

/* One character per cell: '0' + state * 5 + opacity level, '~' for a gap. */
static void html_cells(FILE *f, const struct rnd_model *m)
{
	uint32_t i;
	size_t s;
	char *codes = malloc(m->ncells + 1);

	if (!codes)
		return;
	for (i = 0; i < m->ncells; i++) {
		unsigned level;
		enum rnd_state st = rnd_cell_state(&m->cells[i], &level);

		codes[i] = (char)('0' + st * 5 + level);
	}
	for (s = 0; s < m->nsegs; s++)
		if (m->segs[s].gap)
			memset(codes + m->segs[s].cell, '~', m->segs[s].ncells);
	codes[m->ncells] = '\0';
	fputs(",\"cells\":", f);
	rnd_json_str(f, codes);
	free(codes);
}

static void html_data(FILE *f, const struct rnd_model *m)
{
	const struct pm_flag_info *tab;
	size_t n, i;
	int k;

	fputs("{\"source\":", f);
	rnd_json_str(f, m->source);
	fprintf(f, ",\"page\":%" PRIu64 ",\"width\":%u,\"rows\":%u,\"ncells\":%u,\"group\":%u,\"states\":[", m->page_size,
		m->width, m->rows, m->ncells, m->group);
	for (k = 0; k < (int)rnd_nstates(m); k++) {
		fprintf(f, "%s[", k ? "," : "");
		rnd_json_str(f, m->states[k].name);	/* a colouring's values: cgroup paths */
		fprintf(f, ",\"%s\"]", m->states[k].colour);
	}
	fprintf(f, "],\"by_value\":%s,\"note\":", m->nstates ? "true" : "false");
	rnd_json_str(f, m->note);
	fputs(",\"classes\":[", f);
	for (k = 0; k < RC_NCLASS; k++)
		fprintf(f, "%s\"%s\"", k ? "," : "", rnd_classes[k].name);
	fputs("],\"flags\":[", f);
	tab = pm_flag_table(&n);
	for (i = 0; i < n; i++)
		fprintf(f, "%s[%u,\"%c\",\"%s\"]", i ? "," : "", tab[i].bit, tab[i].letter, tab[i].name);
	fputc(']', f);
	html_segs(f, m);
	html_maps(f, m);
	html_cells(f, m);
	fputc('}', f);
}

static void html_legend(FILE *f, const struct rnd_model *m)
{
	uint64_t st[RS_MAXSTATE] = { 0 };
	char sz[16];
	int k;

	rnd_state_totals(m, st);
	fputs("<div id=\"legend\">", f);
	for (k = 0; k < (int)rnd_nstates(m); k++) {
		if (!rnd_slot_shown(m, (unsigned)k, st[k]))
			continue;
		fprintf(f, "<span class=\"sw\" style=\"background:%s\"></span>", m->states[k].colour);
		rnd_xml_escape(f, m->states[k].name);
		fprintf(f, " %s", out_human_size(st[k], sz, sizeof(sz)));
		if (m->nstates)	/* a colouring's exact bytes: what a test and a reader compare with numa or phys */
			fprintf(f, " <span class=\"lb\" data-slot=\"%d\" data-bytes=\"%" PRIu64 "\"></span>", k, st[k]);
	}
	if (m->note[0]) {
		fputs("<br><b class=\"note\">", f);
		rnd_xml_escape(f, m->note);
		fputs("</b>", f);
	}
	fputs("<br>bytes by class:", f);
	for (k = 0; k < RC_NCLASS; k++)
		fprintf(f, " %s %" PRIu64 "%s", rnd_classes[k].name, m->total[k], rnd_class_known(m, k) ? "" : "?");
	fputs("</div>\n", f);
}

int rnd_write_html(FILE *f, const struct rnd_model *m)
{
	char a[16], b[16];

	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>pagemap render: ", f);
	rnd_xml_escape(f, m->source);
	fprintf(f, "</title>\n<style>%s</style></head><body>\n<header><b>", css);
	rnd_xml_escape(f, m->source);
	fprintf(f, "</b>: %zu mapping%s, %s mapped, %s present. <input id=\"search\" placeholder=\"search an address (hex)\"> "
		   "<button id=\"reset\">reset zoom</button> <span id=\"info\"></span><br>wheel: zoom, drag: pan, "
		   "hover: a cell and its run, click: a mapping's runs", m->nmaps, m->nmaps == 1 ? "" : "s", out_human_size(m->mapped, a, sizeof(a)),
		out_human_size(m->total[RC_PRESENT], b, sizeof(b)));
	if (m->group > 1)
		fprintf(f, "; aggregated: bands of %u mappings, runs left out", m->group);
	else if (m->runs_left_out)
		fprintf(f, "; runs beyond the first %zu left out (the cells count them)", m->nruns);
	fputs("</header>\n<canvas id=\"map\"></canvas>\n", f);
	html_legend(f, m);
	fputs("<div id=\"side\"><div id=\"bands\"></div><div id=\"runs\">click a mapping to list its runs</div></div>\n"
	      "<div id=\"tip\"></div>\n<script id=\"data\" type=\"application/json\">", f);
	html_data(f, m);
	fprintf(f, "</script>\n<script>\n%s</script>\n</body></html>\n", script);
	return ferror(f) ? -EIO : 0;
}
