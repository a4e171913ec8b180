"use strict";
(function () {
const D = JSON.parse(document.getElementById("data").textContent);
const ROW = 14, PITCH = 26, X0 = 8;
const cv = document.getElementById("map"), ctx = cv.getContext("2d");
const tip = document.getElementById("tip"), info = document.getElementById("info");
let zoom = 1, panX = 0, panY = 0, fit = 1, mark = -1, levels = [];
const GAP = 126 - 48;	/* '~': a gap's cells */
const hex = n => "0x" + n.toString(16);
const big = s => BigInt(s);
/* A size as the tables print it (cli/output/out_human.c, util-linux's rounding): "4K", "1.5M", "12.3M", "2G". */
function size(b) {
	const u = "BKMGTPE"; let i = 0, w = BigInt(b), f = 0n;
	while (w >= 1024n && i < 6) { f = w & 1023n; w >>= 10n; i++; }
	f = (f * 10n + 512n) / 1024n;
	if (f === 10n) { w++; f = 0n; }
	return w + (f && w < 1000n ? "." + f : "") + u[i];
}
/* Colours of the codes ('0' + state * 5 + level), over white as the SVG blends them; gaps and the end: clear. */
const RGB = [];
for (let c = 0; c < 256; c++) {
	const st = D.states[Math.floor(c / 5)];
	if (!st || c === GAP) { RGB.push([0, 0, 0, 0]); continue; }
	const op = [1, .4, .6, .8, 1][c % 5], h = st[1];
	RGB.push([1, 3, 5].map(k => Math.round(255 - (255 - parseInt(h.substr(k, 2), 16)) * op)).concat([255]));
}
function rank(c) { return c === 255 ? -2 : c === GAP ? -1 : c % 5; }
/* The level-of-detail grid: level k holds, per row, one code per 2^k cells: the most populated of them. */
function buildLevels() {
	const base = new Uint8Array(D.rows * D.width).fill(255);
	for (let i = 0; i < D.ncells; i++) base[i] = D.cells.charCodeAt(i) - 48;
	let cur = { w: D.width, data: base, img: null };
	levels.push(cur);
	while (cur.w > 1 && levels.length < 12) {
		const w = Math.ceil(cur.w / 2), data = new Uint8Array(D.rows * w);
		for (let r = 0; r < D.rows; r++)
			for (let j = 0; j < w; j++) {
				const a = cur.data[r * cur.w + 2 * j], b = 2 * j + 1 < cur.w ? cur.data[r * cur.w + 2 * j + 1] : a;
				data[r * w + j] = rank(a) >= rank(b) ? a : b;
			}
		cur = { w: w, data: data, img: null };
		levels.push(cur);
	}
}
/* A level as an image, one pixel per code and one line per row: the map is a few drawImage calls. */
function image(k) {
	const L = levels[k];
	if (L.img) return L.img;
	const c = document.createElement("canvas");
	c.width = L.w; c.height = D.rows;
	const g = c.getContext("2d"), id = g.createImageData(L.w, D.rows);
	for (let i = 0; i < L.data.length; i++) id.data.set(RGB[L.data[i]], i * 4);
	g.putImageData(id, 0, 0);
	return (L.img = c);
}
function segOf(cell) {
	let lo = 0, hi = D.segs.length;
	while (lo < hi) { const m = (lo + hi) >> 1, s = D.segs[m]; if (s[3] + s[4] <= cell) lo = m + 1; else hi = m; }
	while (lo < D.segs.length && !D.segs[lo][4]) lo++;
	return lo < D.segs.length && D.segs[lo][3] <= cell ? lo : -1;
}
function resize() {
	const w = Math.max(200, window.innerWidth - 2 * X0);
	fit = Math.max(1, Math.floor(w / D.width)) || 1;
	cv.width = Math.min(w, D.width * fit);
	cv.height = Math.max(100, Math.min(window.innerHeight - 48 - 8, D.rows * PITCH + 4));	/* 48: the header (no layout forced) */
	cv.style.width = cv.width + "px"; cv.style.height = cv.height + "px";
	draw();
}
function draw() {
	const cw = fit * zoom, per = D.width;
	let lv = 0;
	while (cw * (1 << lv) < 1 && lv + 1 < levels.length) lv++;
	const L = levels[lv], img = image(lv), sw = cw * (1 << lv);
	ctx.fillStyle = "#FFFFFF"; ctx.fillRect(0, 0, cv.width, cv.height);
	ctx.imageSmoothingEnabled = false;
	ctx.font = "10px monospace";
	for (let r = 0; r < D.rows; r++) {
		const y = r * PITCH - panY;
		if (y + PITCH < 0 || y > cv.height) continue;
		const j0 = Math.max(0, Math.floor(panX / sw)), j1 = Math.min(L.w, Math.ceil((panX + cv.width) / sw));
		if (j1 > j0) ctx.drawImage(img, j0, r, j1 - j0, 1, j0 * sw - panX, y, (j1 - j0) * sw, ROW);
	}
	/* Gap lines and band ticks are one path each, filled once: a fill per band cost tens of ms at 10000s of bands. */
	const gaps = new Path2D(), ticks = new Path2D();
	for (const s of D.segs) {	/* gaps: a grey line through their cells */
		if (!s[0]) continue;
		for (let c = s[3]; c < s[3] + s[4]; c = (Math.floor(c / per) + 1) * per) {
			const n = Math.min(s[3] + s[4], (Math.floor(c / per) + 1) * per) - c;
			gaps.rect((c % per) * cw - panX, Math.floor(c / per) * PITCH - panY + 6, Math.max(1, n * cw), 2);
		}
	}
	ctx.fillStyle = "#BBBBBB"; ctx.fill(gaps);
	ctx.fillStyle = "#333333";
	for (const s of D.segs) {	/* band starts and names */
		if (s[0] || !s[4]) continue;
		const r = Math.floor(s[3] / per), x = (s[3] % per) * cw - panX, y = r * PITCH - panY;
		if (y + PITCH < 0 || y > cv.height || x > cv.width) continue;
		ticks.rect(x, y + ROW, 1, 3);
		const w = Math.min(s[4], per - s[3] % per) * cw;
		if (w >= 30) {
			const n = D.names[s[5]], base = n.lastIndexOf("/") >= 0 && n.length > 1 ? n.slice(n.lastIndexOf("/") + 1) : n;
			ctx.fillText(base.slice(0, Math.floor(w / 6)), x, y + ROW + 10);
		}
	}
	ctx.fill(ticks);
	if (mark >= 0) {
		const r = Math.floor(mark / per), x = (mark % per) * cw - panX, y = r * PITCH - panY;
		ctx.strokeStyle = "#D55E00"; ctx.lineWidth = 2; ctx.strokeRect(x - 2, y - 2, cw + 4, ROW + 4);
	}
}
function cellAt(ev) {
	const b = cv.getBoundingClientRect(), x = ev.clientX - b.left + panX, y = ev.clientY - b.top + panY;
	const r = Math.floor(y / PITCH), i = Math.floor(x / (fit * zoom));
	if (y - r * PITCH > ROW || i < 0 || i >= D.width || r < 0 || r >= D.rows) return -1;
	const c = r * D.width + i;
	return c < D.ncells ? c : -1;
}
function flagNames(f) { return D.flags.filter(t => f & t[0]).map(t => t[2]).join(",") || "none"; }
/* The address range of cell @c of segment @s: its share of the band's pages (as the tool counted them). */
function cellRange(si, c) {
	const s = D.segs[si];
	if (s[0]) return [big(s[1]), big(s[2])];
	const pages = big(s[6]), n = BigInt(s[4]), k = BigInt(c - s[3]), ps = BigInt(D.page);
	const p0 = k * pages / n, p1 = (k + 1n) * pages / n;
	return [big(s[1]) + p0 * ps, big(s[1]) + p1 * ps];
}
function runsOf(mi) { return D.runs.filter(r => r[0] === mi); }
function runAt(addr) {
	let lo = 0, hi = D.runs.length;
	while (lo < hi) { const m = (lo + hi) >> 1; if (big(D.runs[m][2]) <= addr) lo = m + 1; else hi = m; }
	return lo < D.runs.length && big(D.runs[lo][1]) <= addr ? D.runs[lo] : null;
}
function runText(r) {
	const m = D.maps[r[0]];
	return hex(big(r[1])) + "-" + hex(big(r[2])) + " " + size(big(r[2]) - big(r[1])) + " " + flagNames(r[3]) +
		(r[4] !== "" ? " frame " + r[4] : "") + (r[5] !== "" ? " swap " + r[5] : "") +
		(D.by_value ? " " + D.states[r[6]][0] : "") + "  " + D.names[m[3]];
}
function describe(c) {
	const si = segOf(c);
	if (si < 0) return "";
	const s = D.segs[si];
	if (s[0]) return "gap of " + size(big(s[2]) - big(s[1])) + " (" + s[1] + "-" + s[2] + ")";
	const [a, b] = cellRange(si, c), st = D.states[Math.floor((D.cells.charCodeAt(c) - 48) / 5)][0];
	let t = D.names[s[5]] + " " + s[7] + " " + s[1] + "-" + s[2] + " (" + size(big(s[2]) - big(s[1])) + ")\ncell " +
		hex(a) + "-" + hex(b) + ": mostly " + st;
	const r = runAt(a);
	if (r) t += "\nrun " + runText(r);
	else if (D.runs_left_out) t += "\n(runs beyond the first " + D.runs.length + " are left out: the cells still count them)";
	return t;
}
function select(si) {
	const s = D.segs[si];
	if (!s || s[0]) return 0;
	const list = s[8] >= 0 ? runsOf(s[8]) : [];
	const out = document.getElementById("runs");
	out.textContent = "";
	const h = document.createElement("h2");
	h.textContent = D.names[s[5]] + " " + s[7] + " " + s[1] + "-" + s[2] + ": " + list.length + " runs" +
		(s[8] >= 0 ? "; bytes: " + D.classes.map((n, k) => n + " " + D.maps[s[8]][4][k]).join(", ") : "");
	out.appendChild(h);
	for (const r of list.slice(0, 2000)) {
		const d = document.createElement("div");
		d.className = "run"; d.textContent = runText(r);
		out.appendChild(d);
	}
	mark = s[3]; draw();
	return list.length;
}
function search(text) {
	let a;
	try { a = big(text.trim().startsWith("0x") ? text.trim() : "0x" + text.trim()); } catch (e) { return "not an address"; }
	for (let si = 0; si < D.segs.length; si++) {
		const s = D.segs[si];
		if (big(s[1]) <= a && a < big(s[2])) {
			if (s[0]) { info.textContent = hex(a) + ": in a gap of " + size(big(s[2]) - big(s[1])); return info.textContent; }
			for (let c = s[3]; c < s[3] + s[4]; c++) {
				const [x, y] = cellRange(si, c);
				if (x <= a && a < y) {
					mark = c; draw(); select(si); mark = c; draw();
					info.textContent = hex(a) + ": " + describe(c);
					return info.textContent;
				}
			}
		}
	}
	info.textContent = hex(a) + ": not mapped";
	return info.textContent;
}
cv.addEventListener("mousemove", ev => {
	if (drag) { panX = Math.max(0, drag[2] - (ev.clientX - drag[0])); panY = Math.max(0, drag[3] - (ev.clientY - drag[1])); draw(); return; }
	const c = cellAt(ev);
	if (c < 0) { tip.style.display = "none"; return; }
	tip.textContent = describe(c);
	tip.style.display = "block";
	tip.style.left = (ev.pageX + 12) + "px"; tip.style.top = (ev.pageY + 12) + "px";
});
let drag = null, moved = false;
cv.addEventListener("mousedown", ev => { drag = [ev.clientX, ev.clientY, panX, panY]; moved = false; });
window.addEventListener("mouseup", ev => {
	if (drag && Math.abs(ev.clientX - drag[0]) + Math.abs(ev.clientY - drag[1]) > 3) moved = true;
	drag = null;
});
cv.addEventListener("click", ev => { if (!moved) { const c = cellAt(ev); if (c >= 0) select(segOf(c)); } });
cv.addEventListener("mouseleave", () => { tip.style.display = "none"; });
cv.addEventListener("wheel", ev => {
	ev.preventDefault();
	const b = cv.getBoundingClientRect(), x = ev.clientX - b.left + panX, old = zoom;
	zoom = Math.min(256, Math.max(1 / 64, zoom * (ev.deltaY < 0 ? 1.25 : 0.8)));
	panX = Math.max(0, x * zoom / old - (ev.clientX - b.left));
	draw();
}, { passive: false });
document.getElementById("search").addEventListener("change", ev => search(ev.target.value));
document.getElementById("reset").addEventListener("click", () => { zoom = 1; panX = panY = 0; mark = -1; draw(); });
/* The mapping list: one element per band, in address order; a click selects it. Beyond 2000 bands only the
   rows in view exist (a list of 20000 elements would cost seconds of layout before the first paint). */
const bands = document.getElementById("bands"), bandSegs = [], LINE = 15;
D.segs.forEach((s, si) => { if (!s[0]) bandSegs.push(si); });
function bandDiv(si) {
	const s = D.segs[si], d = document.createElement("div");
	d.className = "band"; d.dataset.seg = si; d.dataset.start = s[1]; d.dataset.end = s[2];
	d.textContent = s[1] + " " + s[7] + " " + size(big(s[2]) - big(s[1])).padStart(6) + " " + D.names[s[5]];
	d.addEventListener("click", () => select(si));
	return d;
}
if (bandSegs.length <= 2000) {
	const frag = document.createDocumentFragment();
	for (const si of bandSegs) frag.appendChild(bandDiv(si));
	bands.appendChild(frag);
} else {
	const inner = document.createElement("div");
	inner.style.position = "relative"; inner.style.height = bandSegs.length * LINE + "px";
	bands.appendChild(inner);
	const paintList = () => {
		const i0 = Math.floor(bands.scrollTop / LINE), i1 = Math.min(bandSegs.length, i0 + Math.ceil(320 / LINE) + 2);
		inner.textContent = "";
		for (let i = i0; i < i1; i++) {
			const d = bandDiv(bandSegs[i]);
			d.style.position = "absolute"; d.style.top = i * LINE + "px";
			inner.appendChild(d);
		}
	};
	bands.addEventListener("scroll", paintList);
	paintList();
}
buildLevels();
window.addEventListener("resize", resize);
resize();
window.pagemapRender = { select: select, search: search, describe: describe, segOf: segOf, size: size, data: D };
})();

