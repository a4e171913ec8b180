/*
 * top_screen.c - `pagemap top` in a terminal: ncurses (loaded on first need, curses_load.c), a frame
 * every -d seconds, the keys people know from top and htop, and the terminal given back as it was
 * on every way out (q, a signal, an error, exit()).
 */
#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cli.h"
#include "curses_load.h"
#include "top_screen.h"

static WINDOW *win;
static SCREEN *screen;

WINDOW *stdscr_win(void)
{
	return win;
}

/* The terminal as it was: on return, and by atexit() on any exit() after newterm. */
static void restore(void)
{
	if (win && !sym_isendwin())
		sym_endwin();
}

void top_user(const struct top_view *v, const struct top_row *r, char *buf, size_t size)
{
	if (r->uid_known)
		cli_user_label(v->ctx, r->uid, buf, size);
	else
		snprintf(buf, size, "-");	/* as -b and ps say a figure not known */
}

static const char *const help_lines[] = {
	"pagemap top: keys",
	"",
	"  q          quit",
	"  Enter      a process's mappings; on a mapping, its pages as a map",
	"  Esc        back a level (also Backspace, Left)",
	"  w          (a process or mapping) the pages it writes per frame: the first w",
	"             says what watching does to it, the second starts, a third stops",
	"  Up, Down   select a row (also k, j); PgUp, PgDn, Home, End",
	"  P M U S    sort by PSS, RSS, USS or SWAP; N by PID, C by command",
	"  < >        sort by the figure left or right of the current one",
	"  g          group by user, command, memory cgroup, or none",
	"  /          show only commands that hold a text (empty: all)",
	"  space      pause the frames (the keys go on)",
	"  h ?        this page (any key closes it)",
	"",
	"The header says how old a row may be: a process's figures are read again",
	"when its stat line moves, the rest oldest first within that bound.",
	"NO_COLOR set: no colours.",
};

static void draw_help(int w)
{
	size_t i;

	for (i = 0; i < sizeof(help_lines) / sizeof(help_lines[0]); i++)
		draw_text((int)i, 0, help_lines[i], w);
}

struct header_at {
	int y, w;
};

static void header_line(void *data, const char *text)
{
	struct header_at *h = data;

	draw_text(h->y++, 0, text, h->w);
}

/* The selected row stays on its process (or group) across frames and sorts. */
static void keep_selection(struct top_view *v)
{
	const struct top_frame *f = &v->frame;
	size_t i;

	for (i = 0; i < f->n; i++)
		if (v->to->group == GROUP_NONE ? f->rows[i].pid == v->sel_pid : !strcmp(f->rows[i].key, v->sel_key)) {
			v->sel = i;
			return;
		}
	if (v->sel >= f->n)
		v->sel = f->n ? f->n - 1 : 0;
}

static void note_selection(struct top_view *v)
{
	if (v->sel < v->frame.n) {
		v->sel_pid = v->frame.rows[v->sel].pid;
		snprintf(v->sel_key, sizeof(v->sel_key), "%s", v->frame.rows[v->sel].key);
	}
}

/* @s from row @y over at most @rows lines of @w columns, broken at spaces (our own words: ASCII). */
static void draw_wrapped(int y, const char *s, int w, int rows)
{
	char line[512];

	while (*s && rows-- > 0 && w > 1) {
		size_t n = strlen(s);

		if (n > (size_t)w) {
			n = (size_t)w;
			while (n > 1 && s[n] != ' ')
				n--;
			if (n == 1)
				n = (size_t)w;
		}
		snprintf(line, sizeof(line), "%.*s", (int)n, s);
		sym_wmove(win, y, 0);
		sym_wclrtoeol(win);
		draw_text(y++, 0, line, w);
		s += n;
		while (*s == ' ')
			s++;
	}
}

static const char *const key_lines[] = {
	"q quit  h help  Enter process  / search  < > sort  g group  space pause",
	"q quit  h help  Enter mapping  Esc back  w writes  space pause",
	"q quit  h help  Esc back  w writes  space pause",
};

static void draw(struct top_view *v)
{
	int w = sym_getmaxx(win), h = sym_getmaxy(win), y, rows;
	struct header_at at = { 0, w };
	size_t i;

	sym_werase(win);
	if (v->help || v->level) {
		if (v->help)
			draw_help(w);
		else if (v->level == 1)
			draw_proc(v, 0, w, h);
		else
			draw_pagemap(v, 0, w, h);
		if (!v->help) {
			draw_wrapped(h - 4, v->message, w, 3);	/* a notice may run over a line: it is all said */
			draw_text(h - 1, 0, key_lines[v->level], w);
		}
		sym_wrefresh(win);
		return;
	}
	top_header(v->ctx, &v->frame, v->to, header_line, &at);
	y = at.y;
	if (v->message[0] || v->paused || v->search[0]) {
		char line[600], search[300];

		snprintf(line, sizeof(line), "%s%s%s%s%s", v->paused ? "[paused] " : "", v->search[0] ? "search: " : "",
			 draw_safe(v->search, search, sizeof(search)), v->search[0] ? "  " : "", v->message);
		draw_text(y, 0, line, w);
	}
	draw_heading(v, ++y, w);
	rows = h - y - 2;	/* the key line at the bottom */
	if (rows < 1)
		rows = 1;
	if (v->sel < v->first)
		v->first = v->sel;
	if (v->sel >= v->first + (size_t)rows)
		v->first = v->sel - (size_t)rows + 1;
	for (i = v->first; i < v->frame.n && (int)(i - v->first) < rows; i++)
		draw_row(v, &v->frame.rows[i], y + 1 + (int)(i - v->first), w, i == v->sel);
	draw_text(h - 1, 0, key_lines[0], w);
	sym_wrefresh(win);
}

/* The line typed after '/' (Enter ends it, an empty one clears the search). */
static void read_search(struct top_view *v)
{
	char buf[sizeof(v->search)];
	int h = sym_getmaxy(win);

	sym_wmove(win, h - 1, 0);
	sym_wclrtoeol(win);
	draw_text(h - 1, 0, "search: ", 8);
	sym_echo();
	sym_curs_set(1);
	sym_wtimeout(win, -1);
	if (sym_wgetnstr(win, buf, (int)sizeof(buf) - 1) == ERR)
		buf[0] = '\0';
	sym_noecho();
	sym_curs_set(0);
	snprintf(v->search, sizeof(v->search), "%s", buf);
	v->to->filter = v->search[0] ? v->search : NULL;
}

static void sort_by(struct top_view *v, enum fig_sort by, enum top_fig fig)
{
	v->to->sort_by = by;
	v->to->sort = fig;
}

/* '<' and '>': the figure left or right of the sort column. */
static void sort_step(struct top_view *v, int step)
{
	int f = v->to->sort_by == SORT_FIG ? (int)v->to->sort : FIG_PSS;

	f = (f + step + NFIGS) % NFIGS;
	sort_by(v, SORT_FIG, (enum top_fig)f);
}

static void move_sel(struct top_view *v, long by)
{
	long n = (long)v->frame.n, s = (long)v->sel + by;

	v->sel = (size_t)(s < 0 || !n ? 0 : s >= n ? n - 1 : s);
	note_selection(v);
}

/* The cells the mapping level has room for: the lines under its heading and legend, less the address. */
static size_t map_cells(void)
{
	int w = sym_getmaxx(win) - 15, h = sym_getmaxy(win) - 6;

	return (size_t)(w > 8 ? w : 8) * (size_t)(h > 1 ? h : 1);
}

/* The level's figures read again (the machine's through the live table, by the caller). */
static void read_level(struct top_view *v)
{
	if (cli_proc_stat(v->proc.pid).starttime != v->proc.start) {	/* ended, or its PID is another's now */
		v->proc.err = v->map.err = -ESRCH;
		top_watch_stop(v);	/* nothing watched, and no w said for another process */
		v->level = 1;
		return;
	}
	if (v->level == 1) {
		v->proc.err = top_proc_read(v->ctx, &v->proc);
		top_watch_collect(v);
	} else if (v->level == 2) {
		char path[sizeof(v->map.path)];

		top_watch_collect(v);
		snprintf(path, sizeof(path), "%s", v->map.path);
		v->map.err = top_pagemap_read(v->ctx, v->proc.pid, v->map.start, v->map.end, map_cells(), v->written,
					      v->nwritten, &v->map);
		snprintf(v->map.path, sizeof(v->map.path), "%s", path);
	}
}

static bool is_enter(int c)
{
	return c == '\n' || c == '\r' || c == KEY_ENTER;
}

static bool is_back(int c)
{
	return c == 27 || c == KEY_BACKSPACE || c == 127 || c == '\b' || c == KEY_LEFT;
}

/* Enter on the machine's table opens the process selected; on the process's, the mapping selected. */
static void go_in(struct top_view *v)
{
	if (v->level == 0 && v->sel < v->frame.n && v->to->group == GROUP_NONE) {
		top_proc_free(&v->proc);
		memset(&v->proc, 0, sizeof(v->proc));
		v->proc.pid = v->frame.rows[v->sel].pid;
		v->proc.start = cli_proc_stat(v->proc.pid).starttime;
		snprintf(v->proc.comm, sizeof(v->proc.comm), "%.*s", (int)sizeof(v->proc.comm) - 1, v->frame.rows[v->sel].key);
		v->level = 1;
	} else if (v->level == 1 && v->proc.sel < v->proc.n) {
		const struct top_mapping *m = &v->proc.v[v->proc.sel];

		top_pagemap_free(&v->map);
		v->map.start = m->start, v->map.end = m->end;
		snprintf(v->map.path, sizeof(v->map.path), "%s", m->path);
		v->level = 2;
	} else {
		snprintf(v->message, sizeof(v->message), "Enter opens a process (not a group: g ungroups)");
		return;
	}
	read_level(v);
}

static void move_level_sel(struct top_view *v, int c, int page)
{
	long n = (long)v->proc.n, s = (long)v->proc.sel;

	s += c == KEY_UP || c == 'k' ? -1 : c == KEY_DOWN || c == 'j' ? 1 : c == KEY_PPAGE ? -page :
		c == KEY_NPAGE ? page : c == KEY_HOME ? -n : c == KEY_END ? n : 0;
	v->proc.sel = (size_t)(s < 0 || !n ? 0 : s >= n ? n - 1 : s);
}

/* A key at the process or mapping level; returns false to quit. */
static bool on_level_key(struct top_view *v, int c, int page)
{
	if (c == 'q' || c == 'Q')
		return false;
	if (c == 'w') {
		top_watch_key(v);
		return true;
	}
	if (is_back(c)) {
		if (--v->level == 0)
			top_watch_stop(v);	/* leaving the process: it is not watched any longer */
	} else if (is_enter(c) && v->level == 1)
		go_in(v);
	else if (v->level == 1)
		move_level_sel(v, c, page);
	if (c == ' ')
		v->paused = !v->paused;
	else if (c == 'h' || c == '?')
		v->help = true;
	return true;
}

/* A key; returns false to quit. @changed: the rows must be made again (sort, group, search). */
static bool on_key(struct top_view *v, int c, bool *changed)
{
	int page = sym_getmaxy(win) - 10 > 1 ? sym_getmaxy(win) - 10 : 1;

	if (c != ERR && c != KEY_RESIZE)
		v->message[0] = '\0';	/* said until the next key, through the frames between */
	if (v->help && c != ERR && c != KEY_RESIZE) {
		v->help = false;
		return c != 'q' && c != 'Q';
	}
	if (v->level && c != ERR && c != KEY_RESIZE)
		return on_level_key(v, c, page);
	if (is_enter(c)) {
		go_in(v);
		return true;
	}
	switch (c) {
	case 'q': case 'Q':
		return false;
	case KEY_UP: case 'k': move_sel(v, -1); break;
	case KEY_DOWN: case 'j': move_sel(v, 1); break;
	case KEY_PPAGE: move_sel(v, -page); break;
	case KEY_NPAGE: move_sel(v, page); break;
	case KEY_HOME: move_sel(v, -(long)v->frame.n); break;
	case KEY_END: move_sel(v, (long)v->frame.n); break;
	case 'P': sort_by(v, SORT_FIG, FIG_PSS); *changed = true; break;
	case 'M': sort_by(v, SORT_FIG, FIG_RSS); *changed = true; break;
	case 'U': sort_by(v, SORT_FIG, FIG_USS); *changed = true; break;
	case 'S': sort_by(v, SORT_FIG, FIG_SWAP); *changed = true; break;
	case 'N': sort_by(v, SORT_PID, FIG_PSS); *changed = true; break;
	case 'C': sort_by(v, SORT_COMMAND, FIG_PSS); *changed = true; break;
	case '<': sort_step(v, -1); *changed = true; break;
	case '>': sort_step(v, 1); *changed = true; break;
	case 'g':
		v->to->group = (enum top_group)((v->to->group + 1) % (GROUP_CGROUP + 1));
		*changed = true;
		break;
	case ' ': v->paused = !v->paused; break;
	case 'h': case '?': v->help = true; break;
	case '/': read_search(v); *changed = true; break;
	case ERR: case KEY_RESIZE: break;
	default:
		snprintf(v->message, sizeof(v->message), "unknown key (h for the keys)");
	}
	return true;
}

/* The screen's set-up; 0, or -1 after a message (the terminal left as it was). */
static int screen_open(struct top_view *v)
{
	const char *no_colour = getenv("NO_COLOR");

	if (curses_load() < 0)
		return -1;
	setlocale(LC_ALL, "");	/* names in the terminal's encoding; the numbers do not use the locale */
	/* newterm, not initscr: initscr exits by itself on an unknown TERM, before this can say why and what else */
	if (!(screen = sym_newterm(NULL, stdout, stdin)) || !(win = curses_stdscr())) {
		cli_error(0, "cannot start the terminal view (TERM=%s); -b prints frames", getenv("TERM") ? getenv("TERM") : "");
		return -1;
	}
	atexit(restore);
	sym_cbreak();
	sym_noecho();
	sym_keypad(win, TRUE);
	sym_set_escdelay(25);	/* Esc goes back a level at once, not after ncurses' default second */
	sym_curs_set(0);
	/* Colours where the terminal has them and NO_COLOR is not set; else reverse video marks what colour would. */
	v->colour = !(no_colour && *no_colour) && sym_has_colors() && draw_colours(true);
	if (v->colour)
		draw_cell_colours();
	return 0;
}

int top_screen(struct pm_ctx *ctx, struct pm_live *l, struct top_opts *to, volatile sig_atomic_t *stop)
{
	struct top_view v = { .ctx = ctx, .to = to };
	struct top_cgroups *cg = top_cgroups_new();
	double t0 = top_now(), next = t0, wait;
	unsigned long frames = 0;
	bool run = true;
	int code = EXIT_OK, err = 0;

	if (!cg || screen_open(&v) < 0) {
		top_cgroups_free(cg);
		return EXIT_RUNTIME;
	}
	while (run && !*stop) {
		bool changed = false;
		int c;

		if (!v.paused && top_now() >= next) {
			if (to->count && frames == to->count)
				break;	/* -n: the last frame was shown for its -d */
			if (v.level)
				read_level(&v);
			else if ((err = top_refresh(ctx, l, &v.frame, to, cg, t0)) < 0)
				break;
			frames++;
			keep_selection(&v);
			/* From the frame's end: a frame longer than -d starts the next at once, never a late burst */
			next = top_now() - next > to->delay ? top_now() + to->delay : next + to->delay;
		}
		draw(&v);
		wait = v.paused ? 1 : next - top_now();
		sym_wtimeout(win, wait > 0 ? (int)(wait * 1000) + 1 : 0);
		c = sym_wgetch(win);
		run = on_key(&v, c, &changed);
		if (changed && top_frame_fill(&v.frame, ctx, l, to, cg) == 0)	/* the same figures, made again */
			keep_selection(&v);
	}
	restore();
	if (err) {	/* said now that the terminal is back: on curses' screen it would be erased with it */
		top_refresh_error(ctx, err);
		code = EXIT_RUNTIME;
	}
	sym_delscreen(screen);
	win = NULL;
	screen = NULL;
	top_watch_stop(&v);
	top_proc_free(&v.proc);
	top_pagemap_free(&v.map);
	top_frame_free(&v.frame);
	top_cgroups_free(cg);
	return code;
}
