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
	".note{color:#D55E00}.band{cursor:pointer;height:15px;line-height:15px}.band:hover{background:#EEEEEE}h2{font-size:12px;margin:0 0 4px 0;white-space:normal}";

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
	"let zoom = 1, panX = 0, panY = 0, fit = 1, mark = -1, levels = [];\n"
	"const GAP = 126 - 48;	/* '~': a gap's cells */\n"
	"const hex = n => \"0x\" + n.toString(16);\n"
	"const big = s => BigInt(s);\n"
	"function size(b) {\n"
	"	const u = \"BKMGTPE\"; let i = 0; b = Number(b);\n"
	"	while (b >= 1024 && i < 6) { b /= 1024; i++; }\n"
	"	return (i ? (b < 10 ? b.toFixed(1).replace(/\\.0$/, \"\") : Math.floor(b)) : b) + u[i];\n"
	"}\n"
	"/* Colours of the codes ('0' + state * 5 + level), over white as the SVG blends them; gaps and the end: clear. */\n"
	"const RGB = [];\n"
	"for (let c = 0; c < 256; c++) {\n"
	"	const st = D.states[Math.floor(c / 5)];\n"
	"	if (!st || c === GAP) { RGB.push([0, 0, 0, 0]); continue; }\n"
	"	const op = [1, .4, .6, .8, 1][c % 5], h = st[1];\n"
	"	RGB.push([1, 3, 5].map(k => Math.round(255 - (255 - parseInt(h.substr(k, 2), 16)) * op)).concat([255]));\n"
	"}\n"
	"function rank(c) { return c === 255 ? -2 : c === GAP ? -1 : c % 5; }\n"
	"/* The level-of-detail grid: level k holds, per row, one code per 2^k cells: the most populated of them. */\n"
	"function buildLevels() {\n"
	"	const base = new Uint8Array(D.rows * D.width).fill(255);\n"
	"	for (let i = 0; i < D.ncells; i++) base[i] = D.cells.charCodeAt(i) - 48;\n"
	"	let cur = { w: D.width, data: base, img: null };\n"
	"	levels.push(cur);\n"
	"	while (cur.w > 1 && levels.length < 12) {\n"
	"		const w = Math.ceil(cur.w / 2), data = new Uint8Array(D.rows * w);\n"
	"		for (let r = 0; r < D.rows; r++)\n"
	"			for (let j = 0; j < w; j++) {\n"
	"				const a = cur.data[r * cur.w + 2 * j], b = 2 * j + 1 < cur.w ? cur.data[r * cur.w + 2 * j + 1] : a;\n"
	"				data[r * w + j] = rank(a) >= rank(b) ? a : b;\n"
	"			}\n"
	"		cur = { w: w, data: data, img: null };\n"
	"		levels.push(cur);\n"
	"	}\n"
	"}\n"
	"/* A level as an image, one pixel per code and one line per row: the map is a few drawImage calls. */\n"
	"function image(k) {\n"
	"	const L = levels[k];\n"
	"	if (L.img) return L.img;\n"
	"	const c = document.createElement(\"canvas\");\n"
	"	c.width = L.w; c.height = D.rows;\n"
	"	const g = c.getContext(\"2d\"), id = g.createImageData(L.w, D.rows);\n"
	"	for (let i = 0; i < L.data.length; i++) id.data.set(RGB[L.data[i]], i * 4);\n"
	"	g.putImageData(id, 0, 0);\n"
	"	return (L.img = c);\n"
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
	"	cv.height = Math.max(100, Math.min(window.innerHeight - 48 - 8, D.rows * PITCH + 4));	/* 48: the header (no layout forced) */\n"
	"	cv.style.width = cv.width + \"px\"; cv.style.height = cv.height + \"px\";\n"
	"	draw();\n"
	"}\n"
	"function draw() {\n"
	"	const cw = fit * zoom, per = D.width;\n"
	"	let lv = 0;\n"
	"	while (cw * (1 << lv) < 1 && lv + 1 < levels.length) lv++;\n"
	"	const L = levels[lv], img = image(lv), sw = cw * (1 << lv);\n"
	"	ctx.fillStyle = \"#FFFFFF\"; ctx.fillRect(0, 0, cv.width, cv.height);\n"
	"	ctx.imageSmoothingEnabled = false;\n"
	"	ctx.font = \"10px monospace\";\n"
	"	for (let r = 0; r < D.rows; r++) {\n"
	"		const y = r * PITCH - panY;\n"
	"		if (y + PITCH < 0 || y > cv.height) continue;\n"
	"		const j0 = Math.max(0, Math.floor(panX / sw)), j1 = Math.min(L.w, Math.ceil((panX + cv.width) / sw));\n"
	"		if (j1 > j0) ctx.drawImage(img, j0, r, j1 - j0, 1, j0 * sw - panX, y, (j1 - j0) * sw, ROW);\n"
	"	}\n"
	"	ctx.fillStyle = \"#BBBBBB\";\n"
	"	for (const s of D.segs) {	/* gaps: a grey line through their cells */\n"
	"		if (!s[0]) continue;\n"
	"		for (let c = s[3]; c < s[3] + s[4]; c = (Math.floor(c / per) + 1) * per) {\n"
	"			const n = Math.min(s[3] + s[4], (Math.floor(c / per) + 1) * per) - c;\n"
	"			ctx.fillRect((c % per) * cw - panX, Math.floor(c / per) * PITCH - panY + 6, Math.max(1, n * cw), 2);\n"
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
	"		(r[4] !== \"\" ? \" frame \" + r[4] : \"\") + (r[5] !== \"\" ? \" swap \" + r[5] : \"\") +\n"
	"		(D.by_value ? \" \" + D.states[r[6]][0] : \"\") + \"  \" + D.names[m[3]];\n"
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
	"/* The mapping list: one element per band, in address order; a click selects it. Beyond 2000 bands only the\n"
	"   rows in view exist (a list of 20000 elements would cost seconds of layout before the first paint). */\n"
	"const bands = document.getElementById(\"bands\"), bandSegs = [], LINE = 15;\n"
	"D.segs.forEach((s, si) => { if (!s[0]) bandSegs.push(si); });\n"
	"function bandDiv(si) {\n"
	"	const s = D.segs[si], d = document.createElement(\"div\");\n"
	"	d.className = \"band\"; d.dataset.seg = si; d.dataset.start = s[1]; d.dataset.end = s[2];\n"
	"	d.textContent = s[1] + \" \" + s[7] + \" \" + size(big(s[2]) - big(s[1])).padStart(6) + \" \" + D.names[s[5]];\n"
	"	d.addEventListener(\"click\", () => select(si));\n"
	"	return d;\n"
	"}\n"
	"if (bandSegs.length <= 2000) {\n"
	"	const frag = document.createDocumentFragment();\n"
	"	for (const si of bandSegs) frag.appendChild(bandDiv(si));\n"
	"	bands.appendChild(frag);\n"
	"} else {\n"
	"	const inner = document.createElement(\"div\");\n"
	"	inner.style.position = \"relative\"; inner.style.height = bandSegs.length * LINE + \"px\";\n"
	"	bands.appendChild(inner);\n"
	"	const paintList = () => {\n"
	"		const i0 = Math.floor(bands.scrollTop / LINE), i1 = Math.min(bandSegs.length, i0 + Math.ceil(320 / LINE) + 2);\n"
	"		inner.textContent = \"\";\n"
	"		for (let i = i0; i < i1; i++) {\n"
	"			const d = bandDiv(bandSegs[i]);\n"
	"			d.style.position = \"absolute\"; d.style.top = i * LINE + \"px\";\n"
	"			inner.appendChild(d);\n"
	"		}\n"
	"	};\n"
	"	bands.addEventListener(\"scroll\", paintList);\n"
	"	paintList();\n"
	"}\n"
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
			s->start, s->end, s->cell, s->ncells, m->group > 1 ? i : s->gap ? 0 : (size_t)s->first_map, s->pages);
		rnd_json_str(f, one ? m->maps[s->first_map].perms : "");
		fprintf(f, ",%ld]", one ? (long)s->first_map : -1L);
	}
	fputc(']', f);
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
			fprintf(f, "\"%u:0x%" PRIx64 "\"", r->swap_type, r->swap_offset);
		else
			fputs((r->flags & PM_PAGE_SWAPPED) ? "\"hidden\"" : "\"\"", f);
		fprintf(f, ",%u]", r->slot);
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
		fprintf(f, " %s", rnd_size(st[k], sz, sizeof(sz)));
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
