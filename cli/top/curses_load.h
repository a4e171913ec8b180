/*
 * curses_load.h - ncurses (wide-character libncursesw), opened with dlopen() when `top` draws in a
 * terminal (curses_load.c), so that no other command maps and relocates it at start. Call sites
 * use the sym_ names below, after curses_load().
 */
#ifndef PAGEMAP_CLI_CURSES_LOAD_H
#define PAGEMAP_CLI_CURSES_LOAD_H

#define NCURSES_WIDECHAR 1
#include <curses.h>

/* Every ncurses call the CLI makes (cli/top/top_screen.c, top_draw.c). */
#define CURSES_CALLS(X)                                                                                       \
	X(initscr) X(endwin) X(isendwin) X(cbreak) X(noecho) X(keypad) X(wtimeout) X(wgetch) X(werase)       \
	X(wmove) X(waddnstr) X(wattr_on) X(wattr_off) X(wrefresh) X(getmaxx) X(getmaxy) X(curs_set)          \
	X(has_colors) X(start_color) X(use_default_colors) X(init_pair) X(wclrtoeol) X(echo) X(nocbreak)      \
	X(wgetnstr) X(set_escdelay) X(newterm) X(delscreen)

#define CURSES_DECLARE(f) extern __typeof__(f) *sym_##f;
CURSES_CALLS(CURSES_DECLARE)
#undef CURSES_DECLARE

/* Load ncurses and resolve every call above, once. Returns 0, or -1 after a message naming what is missing. */
int curses_load(void);
/* ncurses' stdscr (a variable, not a call): the window newterm() made. */
WINDOW *curses_stdscr(void);

#endif
