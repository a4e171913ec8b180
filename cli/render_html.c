/* render_html.c - pagemap render's HTML: one self-contained page (inline CSS and JavaScript, no network). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
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
	".band{cursor:pointer}.band:hover{background:#EEEEEE}h2{font-size:12px;margin:0 0 4px 0;white-space:normal}";

/*
 * The page's script: draws the cells on a canvas from a level-of-detail
 * grid (level k: one code per 2^k cells), zoom (wheel) and pan (drag),
 * hover (the cell, its mapping and the run at its first address), click
 * (the mapping's runs), search (an address). window.pagemapRender lets a
 * test drive it.
 */
static const char script[] =
	"\"use strict\";\n"
	"(function () {\n"
	"const D = JSON.parse(document.getElementById(\"data\").textContent);\n"
	"const ROW = 14, PITCH = 26, X0 = 8;\n"
	"const cv = document.getElementById(\"map\"), ctx = cv.getContext(\"2d\");\n"
	"const tip = document.getElementById(\"tip\"), info = document.getElementById(\"info\");\n"
	"let zoom = 1, panX = 0, panY = 0, fit = 1, mark = -1, levels = [D.cells];\n"
	"const GAP = 126 - 48;	/* '~': a gap's cells */\n"
	"const hex = n => \"0x\" + n.toString(16);\n"
	"const big = s => BigInt(s);\n"
	"function size(b) {\n"
	"	const u = \"BKMGTPE\"; let i = 0; b = Number(b);\n"
	"	while (b >= 1024 && i < 6) { b /= 1024; i++; }\n"
	"	return (i ? (b < 10 ? b.toFixed(1).replace(/\\.0$/, \"\") : Math.floor(b)) : b) + u[i];\n"
	"}\n"
	"function code(lv, i) { return levels[lv].charCodeAt(i) - 48; }\n"
	"/* The level-of-detail grid: level k holds one code per 2^k cells, the most populated state of them. */\n"
	"function buildLevels() {\n"
	"	let cur = D.cells;\n"
	"	while (cur.length > 1 && levels.length < 12) {\n"
	"		let next = \"\";\n"
	"		for (let i = 0; i < cur.length; i += 2) {\n"
	"			const a = cur.charCodeAt(i), b = i + 1 < cur.length ? cur.charCodeAt(i + 1) : a;\n"
	"			const ra = a === 126 ? -1 : a % 5, rb = b === 126 ? -1 : b % 5;\n"
	"			next += String.fromCharCode(ra >= rb ? a : b);\n"
	"		}\n"
	"		levels.push(next);\n"
	"		cur = next;\n"
	"	}\n"
	"}\n"
	"function colour(c) {\n"
	"	if (c === GAP) return null;\n"
	"	const st = D.states[Math.floor(c / 5)], lv = c % 5;\n"
	"	return [st[1], [1, .4, .6, .8, 1][lv]];\n"
	"}\n"
	"function segOf(cell) {\n"
	"	let lo = 0, hi = D.segs.length;\n"
	"	while (lo < hi) { const m = (lo + hi) >> 1, s = D.segs[m]; if (s[3] + s[4] <= cell) lo = m + 1; else hi = m; }\n"
	"	while (lo < D.segs.length && !D.segs[lo][4]) lo++;\n"
	"	return lo < D.segs.length && D.segs[lo][3] <= cell ? lo : -1;\n"
	"}\n"
	"function resize() {\n"
	"	const w = Math.max(200, window.innerWidth - 2 * X0);\n"
	"	fit = Math.max(1, Math.floor(w / D.width)) || 1;\n"
	"	cv.width = Math.min(w, D.width * fit);\n"
	"	cv.height = Math.max(100, Math.min(window.innerHeight - cv.offsetTop - 8, D.rows * PITCH + 4));\n"
	"	cv.style.width = cv.width + \"px\"; cv.style.height = cv.height + \"px\";\n"
	"	draw();\n"
	"}\n"
	"function draw() {\n"
	"	const cw = fit * zoom;\n"
	"	let lv = 0;\n"
	"	while (cw * (1 << lv) < 1 && lv + 1 < levels.length) lv++;\n"
	"	const step = 1 << lv, cells = levels[lv], per = D.width;\n"
	"	ctx.fillStyle = \"#FFFFFF\"; ctx.fillRect(0, 0, cv.width, cv.height);\n"
	"	ctx.font = \"10px monospace\";\n"
	"	for (let r = 0; r < D.rows; r++) {\n"
	"		const y = r * PITCH - panY;\n"
	"		if (y + PITCH < 0 || y > cv.height) continue;\n"
	"		for (let i = 0; i < per; i += step) {\n"
	"			const cell = r * per + i;\n"
	"			if (cell >= D.ncells) break;\n"
	"			const c = cells.charCodeAt(Math.floor(cell / step)) - 48, x = i * cw - panX;\n"
	"			if (x + cw * step < 0 || x > cv.width) continue;\n"
	"			const col = colour(c);\n"
	"			if (!col) { ctx.fillStyle = \"#BBBBBB\"; ctx.fillRect(x, y + 6, Math.max(1, cw * step), 2); continue; }\n"
	"			ctx.globalAlpha = col[1]; ctx.fillStyle = col[0];\n"
	"			ctx.fillRect(x, y, Math.max(1, cw * step), ROW);\n"
	"			ctx.globalAlpha = 1;\n"
	"		}\n"
	"	}\n"
	"	for (const s of D.segs) {	/* band starts and names */\n"
	"		if (s[0] || !s[4]) continue;\n"
	"		const r = Math.floor(s[3] / per), x = (s[3] % per) * cw - panX, y = r * PITCH - panY;\n"
	"		if (y + PITCH < 0 || y > cv.height || x > cv.width) continue;\n"
	"		ctx.fillStyle = \"#333333\"; ctx.fillRect(x, y + ROW, 1, 3);\n"
	"		const w = Math.min(s[4], per - s[3] % per) * cw;\n"
	"		if (w >= 30) {\n"
	"			const n = D.names[s[5]], base = n.lastIndexOf(\"/\") >= 0 && n.length > 1 ? n.slice(n.lastIndexOf(\"/\") + 1) : n;\n"
	"			ctx.fillText(base.slice(0, Math.floor(w / 6)), x, y + ROW + 10);\n"
	"		}\n"
	"	}\n"
	"	if (mark >= 0) {\n"
	"		const r = Math.floor(mark / per), x = (mark % per) * cw - panX, y = r * PITCH - panY;\n"
	"		ctx.strokeStyle = \"#D55E00\"; ctx.lineWidth = 2; ctx.strokeRect(x - 2, y - 2, cw + 4, ROW + 4);\n"
	"	}\n"
	"}\n"
	"function cellAt(ev) {\n"
	"	const b = cv.getBoundingClientRect(), x = ev.clientX - b.left + panX, y = ev.clientY - b.top + panY;\n"
	"	const r = Math.floor(y / PITCH), i = Math.floor(x / (fit * zoom));\n"
	"	if (y - r * PITCH > ROW || i < 0 || i >= D.width || r < 0 || r >= D.rows) return -1;\n"
	"	const c = r * D.width + i;\n"
	"	return c < D.ncells ? c : -1;\n"
	"}\n"
	"function flagNames(f) { return D.flags.filter(t => f & t[0]).map(t => t[2]).join(\",\") || \"none\"; }\n"
	"/* The address range of cell @c of segment @s: its share of the band's pages (as the tool counted them). */\n"
	"function cellRange(si, c) {\n"
	"	const s = D.segs[si];\n"
	"	if (s[0]) return [big(s[1]), big(s[2])];\n"
	"	const pages = big(s[6]), n = BigInt(s[4]), k = BigInt(c - s[3]), ps = BigInt(D.page);\n"
	"	const p0 = k * pages / n, p1 = (k + 1n) * pages / n;\n"
	"	return [big(s[1]) + p0 * ps, big(s[1]) + p1 * ps];\n"
	"}\n"
	"function runsOf(mi) { return D.runs.filter(r => r[0] === mi); }\n"
	"function runAt(addr) {\n"
	"	let lo = 0, hi = D.runs.length;\n"
	"	while (lo < hi) { const m = (lo + hi) >> 1; if (big(D.runs[m][2]) <= addr) lo = m + 1; else hi = m; }\n"
	"	return lo < D.runs.length && big(D.runs[lo][1]) <= addr ? D.runs[lo] : null;\n"
	"}\n"
	"function runText(r) {\n"
	"	const m = D.maps[r[0]];\n"
	"	return hex(big(r[1])) + \"-\" + hex(big(r[2])) + \" \" + size(big(r[2]) - big(r[1])) + \" \" + flagNames(r[3]) +\n"
	"		(r[4] !== \"\" ? \" frame \" + r[4] : \"\") + (r[5] !== \"\" ? \" swap \" + r[5] : \"\") + \"  \" + D.names[m[3]];\n"
	"}\n"
	"function describe(c) {\n"
	"	const si = segOf(c);\n"
	"	if (si < 0) return \"\";\n"
	"	const s = D.segs[si];\n"
	"	if (s[0]) return \"gap of \" + size(big(s[2]) - big(s[1])) + \" (\" + s[1] + \"-\" + s[2] + \")\";\n"
	"	const [a, b] = cellRange(si, c), st = D.states[Math.floor((D.cells.charCodeAt(c) - 48) / 5)][0];\n"
	"	let t = D.names[s[5]] + \" \" + s[7] + \" \" + s[1] + \"-\" + s[2] + \" (\" + size(big(s[2]) - big(s[1])) + \")\\ncell \" +\n"
	"		hex(a) + \"-\" + hex(b) + \": mostly \" + st;\n"
	"	const r = runAt(a);\n"
	"	if (r) t += \"\\nrun \" + runText(r);\n"
	"	else if (D.runs_left_out) t += \"\\n(runs beyond the first \" + D.runs.length + \" are left out: the cells still count them)\";\n"
	"	return t;\n"
	"}\n"
	"function select(si) {\n"
	"	const s = D.segs[si];\n"
	"	if (!s || s[0]) return 0;\n"
	"	const list = s[8] >= 0 ? runsOf(s[8]) : [];\n"
	"	const out = document.getElementById(\"runs\");\n"
	"	out.textContent = \"\";\n"
	"	const h = document.createElement(\"h2\");\n"
	"	h.textContent = D.names[s[5]] + \" \" + s[7] + \" \" + s[1] + \"-\" + s[2] + \": \" + list.length + \" runs\" +\n"
	"		(s[8] >= 0 ? \"; bytes: \" + D.classes.map((n, k) => n + \" \" + D.maps[s[8]][4][k]).join(\", \") : \"\");\n"
	"	out.appendChild(h);\n"
	"	for (const r of list.slice(0, 2000)) {\n"
	"		const d = document.createElement(\"div\");\n"
	"		d.className = \"run\"; d.textContent = runText(r);\n"
	"		out.appendChild(d);\n"
	"	}\n"
	"	mark = s[3]; draw();\n"
	"	return list.length;\n"
	"}\n"
	"function search(text) {\n"
	"	let a;\n"
	"	try { a = big(text.trim().startsWith(\"0x\") ? text.trim() : \"0x\" + text.trim()); } catch (e) { return \"not an address\"; }\n"
	"	for (let si = 0; si < D.segs.length; si++) {\n"
	"		const s = D.segs[si];\n"
	"		if (big(s[1]) <= a && a < big(s[2])) {\n"
	"			if (s[0]) { info.textContent = hex(a) + \": in a gap of \" + size(big(s[2]) - big(s[1])); return info.textContent; }\n"
	"			for (let c = s[3]; c < s[3] + s[4]; c++) {\n"
	"				const [x, y] = cellRange(si, c);\n"
	"				if (x <= a && a < y) {\n"
	"					mark = c; draw(); select(si); mark = c; draw();\n"
	"					info.textContent = hex(a) + \": \" + describe(c);\n"
	"					return info.textContent;\n"
	"				}\n"
	"			}\n"
	"		}\n"
	"	}\n"
	"	info.textContent = hex(a) + \": not mapped\";\n"
	"	return info.textContent;\n"
	"}\n"
	"cv.addEventListener(\"mousemove\", ev => {\n"
	"	if (drag) { panX = Math.max(0, drag[2] - (ev.clientX - drag[0])); panY = Math.max(0, drag[3] - (ev.clientY - drag[1])); draw(); return; }\n"
	"	const c = cellAt(ev);\n"
	"	if (c < 0) { tip.style.display = \"none\"; return; }\n"
	"	tip.textContent = describe(c);\n"
	"	tip.style.display = \"block\";\n"
	"	tip.style.left = (ev.pageX + 12) + \"px\"; tip.style.top = (ev.pageY + 12) + \"px\";\n"
	"});\n"
	"let drag = null, moved = false;\n"
	"cv.addEventListener(\"mousedown\", ev => { drag = [ev.clientX, ev.clientY, panX, panY]; moved = false; });\n"
	"window.addEventListener(\"mouseup\", ev => {\n"
	"	if (drag && Math.abs(ev.clientX - drag[0]) + Math.abs(ev.clientY - drag[1]) > 3) moved = true;\n"
	"	drag = null;\n"
	"});\n"
	"cv.addEventListener(\"click\", ev => { if (!moved) { const c = cellAt(ev); if (c >= 0) select(segOf(c)); } });\n"
	"cv.addEventListener(\"mouseleave\", () => { tip.style.display = \"none\"; });\n"
	"cv.addEventListener(\"wheel\", ev => {\n"
	"	ev.preventDefault();\n"
	"	const b = cv.getBoundingClientRect(), x = ev.clientX - b.left + panX, old = zoom;\n"
	"	zoom = Math.min(256, Math.max(1 / 64, zoom * (ev.deltaY < 0 ? 1.25 : 0.8)));\n"
	"	panX = Math.max(0, x * zoom / old - (ev.clientX - b.left));\n"
	"	draw();\n"
	"}, { passive: false });\n"
	"document.getElementById(\"search\").addEventListener(\"change\", ev => search(ev.target.value));\n"
	"document.getElementById(\"reset\").addEventListener(\"click\", () => { zoom = 1; panX = panY = 0; mark = -1; draw(); });\n"
	"/* The mapping list: one element per band, in address order; a click selects it. */\n"
	"const bands = document.getElementById(\"bands\"), frag = document.createDocumentFragment();\n"
	"D.segs.forEach((s, si) => {\n"
	"	if (s[0]) return;\n"
	"	const d = document.createElement(\"div\");\n"
	"	d.className = \"band\"; d.dataset.seg = si; d.dataset.start = s[1]; d.dataset.end = s[2];\n"
	"	d.textContent = s[1] + \" \" + s[7] + \" \" + size(big(s[2]) - big(s[1])).padStart(6) + \" \" + D.names[s[5]];\n"
	"	d.addEventListener(\"click\", () => select(si));\n"
	"	frag.appendChild(d);\n"
	"});\n"
	"bands.appendChild(frag);\n"
	"buildLevels();\n"
	"window.addEventListener(\"resize\", resize);\n"
	"resize();\n"
	"window.pagemapRender = { select: select, search: search, describe: describe, segOf: segOf, data: D };\n"
	"})();\n"
	"\n";

/* A band: [gap, start, end, cell, cells, name index, pages, perms, mapping index or -1]. */
static void html_segs(FILE *f, const struct rnd_model *m)
{
	size_t i;

	fputs(",\"segs\":[", f);
	for (i = 0; i < m->nsegs; i++) {
		const struct rnd_seg *s = &m->segs[i];
		bool one = !s->gap && s->nmaps == 1 && m->group == 1;

		fprintf(f, "%s[%d,\"0x%" PRIx64 "\",\"0x%" PRIx64 "\",%u,%u,%zu,\"%" PRIu64 "\",", i ? "," : "", s->gap,
			s->start, s->end, s->cell, s->ncells, s->gap ? 0 : m->nmaps ? (size_t)s->first_map : 0, s->pages);
		rnd_json_str(f, one ? m->maps[s->first_map].perms : "");
		fprintf(f, ",%ld]", one ? (long)s->first_map : -1L);
	}
	fputc(']', f);
}

/* Names, one per mapping ("N mappings" for a group's first); mappings with their bytes by class; runs. */
static void html_maps(FILE *f, const struct rnd_model *m)
{
	size_t i;
	int k;

	fputs(",\"names\":[", f);
	for (i = 0; i < m->nmaps; i++) {
		const struct rnd_seg *s = &m->segs[m->maps[i].seg];
		char grp[32];

		fputs(i ? "," : "", f);
		snprintf(grp, sizeof(grp), "%u mappings", s->nmaps);
		rnd_json_str(f, m->group > 1 ? grp : m->maps[i].name);
	}
	fputs("],\"maps\":[", f);
	for (i = 0; m->group == 1 && i < m->nmaps; i++) {
		const struct rnd_map *mp = &m->maps[i];

		fprintf(f, "%s[\"0x%" PRIx64 "\",\"0x%" PRIx64 "\",\"%s\",%zu,[", i ? "," : "", mp->start, mp->end,
			mp->perms, i);
		for (k = 0; k < RC_NCLASS; k++)
			fprintf(f, "%s%" PRIu64, k ? "," : "", mp->bytes[k]);
		fputs("]]", f);
	}
	fputs("],\"runs\":[", f);
	for (i = 0; m->group == 1 && i < m->nruns; i++) {
		const struct rnd_run *r = &m->runs[i];

		fprintf(f, "%s[%u,\"0x%" PRIx64 "\",\"0x%" PRIx64 "\",%u,", i ? "," : "", r->map, r->start, r->end, r->flags);
		if ((r->flags & PM_PAGE_PRESENT) && (r->flags & PM_PAGE_FRAME))
			fprintf(f, "\"0x%" PRIx64 "\",", r->pfn);
		else
			fputs((r->flags & PM_PAGE_PRESENT) ? "\"hidden\"," : "\"\",", f);
		if ((r->flags & PM_PAGE_SWAPPED) && (r->flags & PM_PAGE_FRAME))
			fprintf(f, "\"%u:0x%" PRIx64 "\"]", r->swap_type, r->swap_offset);
		else
			fputs((r->flags & PM_PAGE_SWAPPED) ? "\"hidden\"]" : "\"\"]", f);
	}
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
	for (k = 0; k < RS_NSTATE; k++)
		fprintf(f, "%s[\"%s\",\"%s\"]", k ? "," : "", m->states[k].name, m->states[k].colour);
	fputs("],\"classes\":[", f);
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
	uint64_t st[RS_NSTATE] = { 0 };
	char sz[16];
	uint32_t i;
	int k;

	for (i = 0; i < m->ncells; i++)
		for (k = 0; k < RS_NSTATE; k++)
			st[k] += m->cells[i].state[k];
	fputs("<div id=\"legend\">", f);
	for (k = 0; k < RS_NSTATE; k++)
		fprintf(f, "<span class=\"sw\" style=\"background:%s\"></span>%s %s", m->states[k].colour, m->states[k].name,
			rnd_size(st[k], sz, sizeof(sz)));
	fputs("<br>bytes by class:", f);
	for (k = 0; k < RC_NCLASS; k++)
		fprintf(f, " %s %" PRIu64, rnd_classes[k].name, m->total[k]);
	fputs("</div>\n", f);
}

int rnd_write_html(FILE *f, const struct rnd_model *m)
{
	char a[16], b[16];

	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>pagemap render: ", f);
	rnd_xml_escape(f, m->source);
	fprintf(f, "</title>\n<style>%s</style></head><body>\n<header><b>", css);
	rnd_xml_escape(f, m->source);
	fprintf(f, "</b>: %zu mappings, %s mapped, %s present. <input id=\"search\" placeholder=\"search an address (hex)\"> "
		   "<button id=\"reset\">reset zoom</button> <span id=\"info\"></span><br>wheel: zoom, drag: pan, "
		   "hover: a cell and its run, click: a mapping's runs", m->nmaps, rnd_size(m->mapped, a, sizeof(a)),
		rnd_size(m->total[RC_PRESENT], b, sizeof(b)));
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
