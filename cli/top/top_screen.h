/*
 * top_screen.h - the terminal view of `pagemap top` in two files: the loop, keys and levels
 * (top_screen.c) and what it draws (top_draw.c). Private to cli/top.
 */
#ifndef PAGEMAP_CLI_TOP_SCREEN_H
#define PAGEMAP_CLI_TOP_SCREEN_H

#include <stdbool.h>
#include "top.h"

/* The view's state between frames. */
struct top_view {
	struct pm_ctx *ctx;
	struct top_opts *to;
	struct top_frame frame;
	size_t sel;			/* the selected row */
	size_t first;			/* the row at the top of the table */
	pid_t sel_pid;			/* the selected process, kept across frames and sorts */
	char sel_key[256];		/* or group */
	bool paused;			/* space: frames stop, the keys go on */
	bool help;			/* h: the keys' page */
	bool colour;			/* the terminal has colours and NO_COLOR is not set */
	char search[64];		/* / : rows whose command name holds it */
	char message[160];		/* one line under the header until the next key */
};

/* The window ncurses draws on (initscr's). */
struct _win_st *stdscr_win(void);

/* top_draw.c */
void draw_colours(bool on);
/* Text at row @y, column @x, at most @cols columns wide: our own words, or a name made safe first. */
void draw_text(int y, int x, const char *s, int cols);
/* @s as a terminal may show it (control bytes and invalid UTF-8 encoded as \xHH) into @buf. */
const char *draw_safe(const char *s, char *buf, size_t size);
void draw_heading(const struct top_view *v, int y, int w);
void draw_row(const struct top_view *v, const struct top_row *r, int y, int w, bool selected);
int name_width(const struct top_view *v, int w);

/* top_screen.c: USER of a row, by name where the machine has one. */
void top_user(const struct top_view *v, const struct top_row *r, char *buf, size_t size);

#endif
