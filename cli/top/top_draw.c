/*
 * top_draw.c - what the terminal view draws: the header, the processes' table and the key line,
 * fitted to the terminal's width (columns left out from the right when it is narrow), names
 * encoded as util-linux encodes them for a terminal (cli/base/textsafe.h), never raw bytes.
 */
#include <stdio.h>
#include <string.h>
#include <wchar.h>
#include "curses_load.h"
#include "textsafe.h"
#include "top_screen.h"

/* The column pairs: 1 set per colour the view uses (COLOR_PAIR numbers). */
enum { PAIR_HEAD = 1, PAIR_SELECT, PAIR_RISE, PAIR_FALL, PAIR_HIDDEN };

bool draw_colours(bool on)
{
	if (!on || !sym_has_colors() || sym_start_color() == ERR)
		return false;
	sym_use_default_colors();
	sym_init_pair(PAIR_HEAD, COLOR_BLACK, COLOR_CYAN);
	sym_init_pair(PAIR_SELECT, COLOR_BLACK, COLOR_WHITE);
	sym_init_pair(PAIR_RISE, COLOR_RED, -1);
	sym_init_pair(PAIR_FALL, COLOR_GREEN, -1);
	sym_init_pair(PAIR_HIDDEN, COLOR_YELLOW, -1);
	return true;
}

static void put_obuf(void *ctx, const char *s, size_t n)
{
	struct { char *p; size_t len, size; } *b = ctx;

	if (b->len + n < b->size) {
		memcpy(b->p + b->len, s, n);
		b->len += n;
		b->p[b->len] = '\0';
	}
}

const char *draw_safe(const char *s, char *buf, size_t size)
{
	struct { char *p; size_t len, size; } b = { buf, 0, size };

	buf[0] = '\0';
	ts_escape(TS_TERM, s, put_obuf, &b);
	return buf;
}

/* The bytes of @s that fill at most @cols terminal columns (a wide character takes two). */
static int fit_bytes(const char *s, int cols)
{
	mbstate_t st = { 0 };
	size_t off = 0, len = strlen(s);
	int used = 0;

	while (off < len) {
		wchar_t wc;
		size_t n = mbrtowc(&wc, s + off, len - off, &st);
		int w;

		if (n == (size_t)-1 || n == (size_t)-2 || n == 0)
			break;	/* safe() leaves only valid UTF-8 in a UTF-8 locale; stop at anything else */
		w = wcwidth(wc);
		if (used + (w > 0 ? w : 0) > cols)
			break;
		used += w > 0 ? w : 0;
		off += n;
	}
	return (int)off;
}

/* The terminal columns @s fills. */
static int text_cols(const char *s)
{
	mbstate_t st = { 0 };
	size_t off = 0, len = strlen(s);
	int used = 0;

	while (off < len) {
		wchar_t wc;
		size_t n = mbrtowc(&wc, s + off, len - off, &st);

		if (n == (size_t)-1 || n == (size_t)-2 || n == 0)
			break;
		used += wcwidth(wc) > 0 ? wcwidth(wc) : 0;
		off += n;
	}
	return used;
}

void draw_text(int y, int x, const char *s, int cols)
{
	if (cols <= 0)
		return;
	sym_wmove(stdscr_win(), y, x);
	sym_waddnstr(stdscr_win(), s, fit_bytes(s, cols));
}

static void size_cell(char *buf, size_t size, uint64_t v, bool unknown)
{
	if (unknown)
		snprintf(buf, size, "-");
	else
		out_human_size(v, buf, size);
}

static void rate_cell(char *buf, size_t size, double r, bool unknown)
{
	if (unknown)
		snprintf(buf, size, "-");
	else
		out_human_signed(out_round_s64(r), buf, size);	/* as -b prints it */
}

/* The columns shown at width @w: the figures right of the name, the narrower the fewer. */
static int figs_shown(int w)
{
	return w >= 76 ? NFIGS - 1 : w >= 69 ? 4 : w >= 62 ? 3 : w >= 55 ? 2 : 1;	/* HUGETLB with -o only */
}

static const enum top_fig fig_order[NFIGS] = { FIG_RSS, FIG_PSS, FIG_USS, FIG_SWAP, FIG_SHARED, FIG_HUGETLB };

/* @off after snprintf's @n into a buffer of @size: never past its end, whatever the terminal's width. */
static int advance(int off, int n, size_t size)
{
	return n < 0 ? off : off + n >= (int)size ? (int)size - 1 : off + n;
}

void draw_heading(const struct top_view *v, int y, int w)
{
	char line[512], cell[32];
	int i, nf = figs_shown(w), off;
	const char *name = v->to->group == GROUP_NONE ? "COMMAND" : "GROUP";

	off = v->to->group == GROUP_NONE ? snprintf(line, sizeof(line), "%7s %-8s ", "PID", "USER") :
		snprintf(line, sizeof(line), "%5s ", "PROCS");
	off = advance(off, snprintf(line + off, sizeof(line) - (size_t)off, "%-*s", name_width(v, w), name), sizeof(line));
	for (i = 0; i < nf; i++) {
		snprintf(cell, sizeof(cell), "%s%s", v->to->sort_by == SORT_FIG && v->to->sort == fig_order[i] ? "*" : "",
			 top_fig_names[fig_order[i]]);
		off = advance(off, snprintf(line + off, sizeof(line) - (size_t)off, " %6s", cell), sizeof(line));
	}
	snprintf(cell, sizeof(cell), "%s/s", top_fig_names[v->to->sort_by == SORT_FIG ? v->to->sort : FIG_PSS]);
	snprintf(line + off, sizeof(line) - (size_t)off, " %8s", cell);
	sym_wattr_on(stdscr_win(), v->colour ? COLOR_PAIR(PAIR_HEAD) : A_REVERSE, NULL);
	draw_text(y, 0, line, w);
	sym_wclrtoeol(stdscr_win());
	sym_wattr_off(stdscr_win(), v->colour ? COLOR_PAIR(PAIR_HEAD) : A_REVERSE, NULL);
}

/* The name column's width: what the figures leave, at most 200 (a wide terminal pads the right instead). */
int name_width(const struct top_view *v, int w)
{
	int fixed = (v->to->group == GROUP_NONE ? 17 : 6) + 7 * figs_shown(w) + 9;

	return w - fixed < 8 ? 8 : w - fixed > 200 ? 200 : w - fixed;
}


/* One row: the figures, the change per second coloured by its sign, the selection reversed. */
void draw_row(const struct top_view *v, const struct top_row *r, int y, int w, bool selected)
{
	char line[1024], cell[32], name[256], key[300], user[64];
	int i, nf = figs_shown(w), off, nw = name_width(v, w);
	bool unknown = r->err != 0;	/* hidden, or a group all of whose processes are: never a fake 0 */
	enum top_fig rate_fig = v->to->sort_by == SORT_FIG ? v->to->sort : FIG_PSS;

	draw_safe(r->key, key, sizeof(key));
	snprintf(name, sizeof(name), "%.*s", fit_bytes(key, nw), key);
	if (v->to->group == GROUP_NONE) {
		char safe_user[300], cut[300];

		/* A user name comes from passwd, LDAP or sssd: made safe, cut to 8 columns as a name is */
		top_user(v, r, user, sizeof(user));
		draw_safe(user, safe_user, sizeof(safe_user));
		snprintf(cut, sizeof(cut), "%.*s", fit_bytes(safe_user, 8), safe_user);
		off = snprintf(line, sizeof(line), "%7d %s%*s ", (int)r->pid, cut, 8 - text_cols(cut), "");
	} else {
		off = snprintf(line, sizeof(line), "%5zu ", r->procs);
	}
	off = advance(off, snprintf(line + off, sizeof(line) - (size_t)off, "%s%*s", name, nw - text_cols(name), ""),
		      sizeof(line));
	for (i = 0; i < nf; i++) {
		size_cell(cell, sizeof(cell), r->fig[fig_order[i]], unknown);
		off = advance(off, snprintf(line + off, sizeof(line) - (size_t)off, " %6s", cell), sizeof(line));
	}
	if (selected)
		sym_wattr_on(stdscr_win(), v->colour ? COLOR_PAIR(PAIR_SELECT) : A_REVERSE, NULL);
	draw_text(y, 0, line, w);
	rate_cell(cell, sizeof(cell), r->rate[rate_fig], unknown);
	/* coloured as the cell reads: by the whole bytes rate_cell shows */
	if (!selected && v->colour && !unknown && out_round_s64(r->rate[rate_fig]))
		sym_wattr_on(stdscr_win(), COLOR_PAIR(r->rate[rate_fig] > 0 ? PAIR_RISE : PAIR_FALL), NULL);
	off = text_cols(line);	/* columns, not bytes: a name may hold wide characters */
	snprintf(line, sizeof(line), " %8s", cell);
	draw_text(y, off < w ? off : w, line, w - off);
	sym_wattr_off(stdscr_win(), A_COLOR | A_REVERSE, NULL);
	if (selected) {
		sym_wattr_on(stdscr_win(), v->colour ? COLOR_PAIR(PAIR_SELECT) : A_REVERSE, NULL);
		sym_wclrtoeol(stdscr_win());
		sym_wattr_off(stdscr_win(), A_COLOR | A_REVERSE, NULL);
	}
}
