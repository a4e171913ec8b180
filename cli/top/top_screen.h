/*
 * top_screen.h - the terminal view of `pagemap top` in two files: the loop, keys and levels
 * (top_screen.c) and what it draws (top_draw.c). Private to cli/top.
 */
#ifndef PAGEMAP_CLI_TOP_SCREEN_H
#define PAGEMAP_CLI_TOP_SCREEN_H

#include <stdbool.h>
#include "top.h"

/* One mapping of the process level, with its pages summed and its RSS's change since the frame before. */
struct top_mapping {
	uint64_t start, end;
	char perms[5];
	char path[256];			/* the bytes of maps (made safe when drawn) */
	struct pm_usage u;
	uint64_t rss;			/* smaps Rss: present less the zero page */
	int64_t rss_change;
	uint64_t written;		/* bytes written this frame (w: the write watch), 0 */
	uint32_t known;			/* PM_PAGE_* the walk can tell (exclusive needs the entries) */
};

/* The process level: one process's mappings, read again every frame. */
struct top_proc {
	pid_t pid;
	unsigned long long start;	/* its start time: with the PID, the process Enter opened (PIDs are reused) */
	char comm[64];
	struct top_mapping *v, *old;	/* this frame's and the one before's, in address order */
	size_t n, cap, nold;
	size_t sel, first;
	int err;			/* why the last read failed (-errno), 0 */
};

/* A page's state in the mapping level's map, and a cell's: the state most of its pages have. */
enum cell_state { CELL_NONE, CELL_EXCL, CELL_SHARED, CELL_PRESENT, CELL_FILE, CELL_THP, CELL_ZERO, CELL_SWAP,
		  CELL_GUARD, CELL_WRITTEN, NCELL };	/* WRITTEN: a cell with a page written this frame (w) */

/* The mapping level: a mapping's pages as cells. */
struct top_pagemap {
	uint64_t start, end;
	uint64_t pages_per_cell;
	size_t ncells;
	uint8_t *cell;			/* enum cell_state per cell */
	uint64_t count[NCELL];		/* pages per state: exact, whatever the cells */
	uint32_t known;
	char path[256];
	int err;
};

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
	char message[512];		/* under the header (a level: over the key line) until the next key */
	int level;			/* 0 the machine, 1 a process (Enter), 2 a mapping (Enter again) */
	struct top_proc proc;
	struct top_pagemap map;
	struct pm_watch *watch;		/* w: the process's writes, per frame */
	bool watch_asked;		/* the first w said what watching does */
	struct pm_written *written;	/* this frame's written ranges, sorted */
	size_t nwritten;
};

/* The window ncurses draws on (initscr's). */
struct _win_st *stdscr_win(void);

/* top_draw.c */
bool draw_colours(bool on);	/* false: the terminal has no colours */
/* Text at row @y, column @x, at most @cols columns wide: our own words, or a name made safe first. */
void draw_text(int y, int x, const char *s, int cols);
/* @s as a terminal may show it (control bytes and invalid UTF-8 encoded as \xHH) into @buf. */
const char *draw_safe(const char *s, char *buf, size_t size);
void draw_heading(const struct top_view *v, int y, int w);
void draw_row(const struct top_view *v, const struct top_row *r, int y, int w, bool selected);
int name_width(const struct top_view *v, int w);

/* top_levels.c: a process's mappings, a mapping's cells (@cells: how many the screen has). 0 or -errno. */
int top_proc_read(struct pm_ctx *ctx, struct top_proc *p);
void top_proc_free(struct top_proc *p);
int top_pagemap_read(struct pm_ctx *ctx, pid_t pid, uint64_t start, uint64_t end, size_t cells,
		     const struct pm_written *written, size_t nwritten, struct top_pagemap *pm);
void top_pagemap_free(struct top_pagemap *pm);

/* top_watch.c: w at the process level; each frame's written pages. */
void top_watch_key(struct top_view *v);
void top_watch_stop(struct top_view *v);
int top_watch_collect(struct top_view *v);

/* top_draw_levels.c: the process and mapping levels. */
void draw_cell_colours(void);
void draw_proc(struct top_view *v, int y, int w, int h);
void draw_pagemap(struct top_view *v, int y, int w, int h);

/* top_screen.c: USER of a row, by name where the machine has one. */
void top_user(const struct top_view *v, const struct top_row *r, char *buf, size_t size);

#endif
