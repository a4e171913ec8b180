/*
 * top_draw_levels.c - the terminal view's deeper levels: a process's mappings (the walk `maps`
 * makes, with RSS's change since the frame before) and a mapping's pages as a map of cells with
 * a legend of exact counts, as pagemon draws a process's pages.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "curses_load.h"
#include "top_screen.h"

/* A cell: its letter (the map reads without colours too) and its colour pair. */
static const struct {
	char letter;
	const char *name;
	short fg;
} cells[NCELL] = {
	[CELL_NONE] = { '.', "not present", COLOR_WHITE },
	[CELL_EXCL] = { '#', "exclusive", COLOR_GREEN },
	[CELL_SHARED] = { 's', "shared", COLOR_CYAN },
	[CELL_PRESENT] = { 'p', "present", COLOR_GREEN },
	[CELL_FILE] = { 'f', "file", COLOR_BLUE },
	[CELL_THP] = { 'H', "huge", COLOR_MAGENTA },
	[CELL_ZERO] = { '0', "zero page", COLOR_WHITE },
	[CELL_SWAP] = { 'S', "swapped", COLOR_RED },
	[CELL_GUARD] = { 'g', "guard", COLOR_YELLOW },
	[CELL_WRITTEN] = { 'W', "written this frame", COLOR_RED },
};
#define PAIR_CELL 16	/* pairs PAIR_CELL + state */

void draw_cell_colours(void)
{
	int s;

	for (s = 0; s < NCELL; s++)
		sym_init_pair((short)(PAIR_CELL + s), cells[s].fg, -1);
}

static void human(uint64_t v, char *buf, size_t size)
{
	out_human_size(v, buf, size);
}

static void proc_heading(const struct top_view *v, int y, int w)
{
	const struct top_proc *p = &v->proc;
	uint64_t rss = 0, swap = 0;
	char line[400], comm[300], a[32], b[32];
	size_t i;

	for (i = 0; i < p->n; i++)
		rss += p->v[i].rss, swap += p->v[i].u.swapped;
	human(rss, a, sizeof(a));
	human(swap, b, sizeof(b));
	snprintf(line, sizeof(line), "Process %d (%s): %zu mappings, RSS %s, swapped %s", (int)p->pid,
		 draw_safe(p->comm, comm, sizeof(comm)), p->n, a, b);
	draw_text(y, 0, line, w);
	snprintf(line, sizeof(line), "%-14s %6s %6s %9s %7s %6s %7s %-5s %s", "START", "SIZE", "RSS", "EXCLUSIVE",
		 "SWAPPED", "THP", v->watch ? "WRITTEN" : "CHANGE", "PERMS", "PATH");
	sym_wattr_on(stdscr_win(), A_REVERSE, NULL);
	draw_text(y + 2, 0, line, w);
	sym_wclrtoeol(stdscr_win());
	sym_wattr_off(stdscr_win(), A_REVERSE, NULL);
}

static void proc_row(const struct top_view *v, const struct top_mapping *m, int y, int w, bool selected)
{
	char line[700], size[32], rss[32], excl[32], swap[32], thp[32], change[40], path[600];

	human(m->end - m->start, size, sizeof(size));
	human(m->rss, rss, sizeof(rss));
	if (m->known & PM_PAGE_EXCLUSIVE)
		human(m->u.exclusive, excl, sizeof(excl));
	else
		snprintf(excl, sizeof(excl), "-");
	human(m->u.swapped, swap, sizeof(swap));
	human(m->u.thp, thp, sizeof(thp));
	if (v->watch) {
		human(m->written, change, sizeof(change));
	} else {
		out_human_signed(m->rss_change, change, sizeof(change));
	}
	snprintf(line, sizeof(line), "%#14llx %6s %6s %9s %7s %6s %7s %-5s %s", (unsigned long long)m->start, size, rss,
		 excl, swap, thp, change, m->perms, draw_safe(m->path, path, sizeof(path)));
	if (selected)
		sym_wattr_on(stdscr_win(), A_REVERSE, NULL);
	draw_text(y, 0, line, w);
	if (selected) {
		sym_wclrtoeol(stdscr_win());
		sym_wattr_off(stdscr_win(), A_REVERSE, NULL);
	}
}

void draw_proc(struct top_view *v, int y, int w, int h)
{
	struct top_proc *p = &v->proc;
	int rows = h - y - 4;
	size_t i;

	if (p->err) {	/* gone, or not ours to read: the library's words, as every command says them */
		char line[PATH_MAX + 256], safe[2 * PATH_MAX];
		const char *hint = NULL;

		pm_target_explain(v->ctx, p->pid, NULL, -p->err, line, sizeof(line), &hint);
		draw_text(y, 0, draw_safe(line, safe, sizeof(safe)), w);
		if (hint)
			draw_text(y + 1, 0, hint, w);
		draw_text(y + 3, 0, "Esc goes back to the processes.", w);
		return;
	}
	proc_heading(v, y, w);
	if (rows < 1)
		rows = 1;
	if (p->sel >= p->n)
		p->sel = p->n ? p->n - 1 : 0;
	if (p->sel < p->first)
		p->first = p->sel;
	if (p->sel >= p->first + (size_t)rows)
		p->first = p->sel - (size_t)rows + 1;
	for (i = p->first; i < p->n && (int)(i - p->first) < rows; i++)
		proc_row(v, &p->v[i], y + 3 + (int)(i - p->first), w, i == p->sel);
}

/* The legend: each state's letter, name and exact page count, as many per line as fit. */
static int legend(const struct top_view *v, int y, int w)
{
	char item[96], line[512] = "";
	size_t len = 0;
	int s;

	for (s = 0; s < NCELL; s++) {
		if (!v->map.count[s] && s != CELL_NONE)
			continue;
		snprintf(item, sizeof(item), "%c %s %llu  ", cells[s].letter, cells[s].name,
			 (unsigned long long)v->map.count[s]);
		if (len + strlen(item) > (size_t)w && len) {
			draw_text(y++, 0, line, w);
			len = 0;
			line[0] = '\0';
		}
		len += (size_t)snprintf(line + len, sizeof(line) - len, "%s", item);
	}
	draw_text(y++, 0, line, w);
	return y;
}

void draw_pagemap(struct top_view *v, int y, int w, int h)
{
	const struct top_pagemap *m = &v->map;
	char line[700], path[600];
	int per = w - 15 > 8 ? w - 15 : 8, row;
	size_t c = 0;

	uint64_t pages = (m->end - m->start) / (uint64_t)sysconf(_SC_PAGESIZE);

	snprintf(line, sizeof(line), "%#llx-%#llx %s: %llu %s, %llu per cell", (unsigned long long)m->start,
		 (unsigned long long)m->end, draw_safe(m->path, path, sizeof(path)), (unsigned long long)pages,
		 pages == 1 ? "page" : "pages", (unsigned long long)m->pages_per_cell);
	draw_text(y++, 0, line, w);
	if (m->err) {
		snprintf(line, sizeof(line), "cannot read its pages: %s", strerror(-m->err));
		draw_text(y, 0, line, w);
		return;
	}
	y = legend(v, y, w) + 1;
	for (row = 0; c < m->ncells && y + row < h - 1; row++) {
		int i;

		snprintf(line, sizeof(line), "%#14llx ", (unsigned long long)(m->start + c * m->pages_per_cell *
									  (uint64_t)sysconf(_SC_PAGESIZE)));
		draw_text(y + row, 0, line, w);
		for (i = 0; i < per && c < m->ncells; i++, c++) {
			char ch[2] = { cells[m->cell[c]].letter, '\0' };

			if (v->colour)
				sym_wattr_on(stdscr_win(), COLOR_PAIR(PAIR_CELL + m->cell[c]), NULL);
			draw_text(y + row, 15 + i, ch, 1);
			if (v->colour)
				sym_wattr_off(stdscr_win(), COLOR_PAIR(PAIR_CELL + m->cell[c]), NULL);
		}
	}
}
