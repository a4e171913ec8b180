/* render.h - pagemap render's model: an address axis that follows the mappings, cells of exact byte counts. */
#ifndef PM_CLI_RENDER_H
#define PM_CLI_RENDER_H

#include <pagemap.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Page-state classes a cell counts (bytes). They overlap: a present file
 * page counts under present and file. RC_ANON: present or swapped, not file.
 */
enum rnd_class { RC_PRESENT, RC_SWAPPED, RC_FILE, RC_ANON, RC_EXCLUSIVE, RC_HUGE, RC_SOFTDIRTY, RC_UFFDWP,
		 RC_GUARD, RC_ZERO, RC_NCLASS };

/* The one colour a page gets: exclusive states, in the order ties are broken. */
enum rnd_state { RS_NONE, RS_ANON, RS_FILE, RS_HUGE, RS_ZERO, RS_SWAP, RS_GUARD, RS_NSTATE };
/* Slots a cell has: the page states, or a colouring by value (render_colour.c) that needs more. */
#define RS_MAXSTATE 11

struct rnd_class_info {
	const char *name;	/* JSON key and legend */
	const char *meaning;
	/*
	 * The page flag (PM_PAGE_*) the class counts, which a walk may not be
	 * able to tell (pm_walk_known); 0 for the base classes (present,
	 * swapped, file, anon), counted from those three flags, always told.
	 */
	uint32_t flag;
};
extern const struct rnd_class_info rnd_classes[RC_NCLASS];

struct rnd_state_info {
	const char *name;
	const char *colour;	/* "#RRGGBB", Okabe-Ito (colour-blind safe) */
	const char *meaning;
};
extern const struct rnd_state_info rnd_states[RS_NSTATE];
/* A diff's states in the same slots: slot 0 "unchanged" is the faded background, the others are changes. */
enum rnd_diff_state { RD_SAME, RD_APPEARED, RD_FREED, RD_WRITTEN, RD_SWAPPED, RD_MOVED, RD_HUGE };
extern const struct rnd_state_info rnd_diff_states[RS_NSTATE];

/* One mapping as the axis keeps it (its own copy of the path). */
struct rnd_map {
	uint64_t start, end;
	char perms[5];
	char *name;		/* path, [heap], [stack], or "anon" */
	uint32_t seg;		/* the segment (band) it is drawn in */
	uint64_t seg_page;	/* its first page's index among the segment's pages */
	uint64_t bytes[RC_NCLASS];
};

/* A band of the axis: mappings (one, or a group when there are too many), or a collapsed gap. */
struct rnd_seg {
	bool gap;
	uint32_t first_map, nmaps;	/* mappings drawn here (gap: the mapping after it) */
	uint64_t start, end;		/* address range (a gap's hole) */
	uint64_t pages;			/* mapped pages (not the holes of a group) */
	uint32_t cell, ncells;		/* [cell, cell + ncells) on the ribbon */
};

/* One cell: a slice of a segment's pages. */
struct rnd_cell {
	uint64_t start, end;		/* first byte of its first page, end of its last (addresses) */
	uint64_t bytes[RC_NCLASS];
	uint64_t state[RS_MAXSTATE];	/* bytes by drawn state; their sum is the cell's mapped bytes */
};

/* A run kept for hover and click (HTML), bounded in number. */
struct rnd_run {
	uint64_t start, end;
	uint32_t flags;			/* PM_PAGE_* */
	uint64_t pfn;			/* with PM_PAGE_FRAME|PRESENT */
	uint64_t swap_offset;
	uint8_t swap_type;
	uint32_t map;			/* index into maps */
	uint8_t slot;			/* the state slot it was counted under */
};

/* How the ribbon is laid out. */
struct rnd_layout {
	uint32_t width;		/* cells per row */
	uint32_t min_rows;
	uint32_t max_cells;	/* beyond, mappings are grouped into bands (said so) */
	uint32_t gap_max;	/* widest gap break, cells */
	bool one_row;		/* heat maps: the axis is one row, as wide as it must be */
};

struct rnd_model {
	uint64_t page_size;
	struct rnd_map *maps;
	size_t nmaps, cap_maps;
	struct rnd_seg *segs;
	size_t nsegs;
	struct rnd_cell *cells;
	uint32_t ncells, width, rows;	/* ncells <= width * rows; the rest of the last row is empty */
	uint32_t group;			/* mappings per band: 1, or more when aggregated */
	uint64_t total[RC_NCLASS];
	uint64_t mapped;		/* bytes in mappings */
	struct rnd_run *runs;
	size_t nruns, cap_runs, max_runs;
	/*
	 * Runs beyond max_runs (the cells still count them). Past the cap the
	 * walk ignores frames, so these are runs of alike pages, fewer than
	 * the runs of following frames a full walk would give.
	 */
	uint64_t runs_left_out;
	const struct rnd_state_info *states;	/* rnd_states, or rnd_diff_states (what state[] counts) */
	unsigned nstates;		/* slots of states[] in use: 0 means RS_NSTATE */
	uint32_t optional;		/* slots (bits) the legends leave out when they hold no bytes */
	struct rnd_state_info vstates[RS_MAXSTATE];	/* a colouring by value: its slots */
	char vnames[RS_MAXSTATE][160];	/* their names */
	char note[160];			/* what the colouring could not see, said in the picture ("" none) */
	uint32_t known;			/* PM_PAGE_* the walk could tell */
	size_t hint;			/* the mapping of the last run (a search hint) */
	char source[256];		/* what was drawn: "process 4242", "snapshot FILE" */
};

/* Add a mapping in address order (before rnd_layout). Returns 0 or -ENOMEM / -EINVAL (out of order, empty). */
int rnd_add_map(struct rnd_model *m, uint64_t start, uint64_t end, const char *perms, const char *path, size_t len);
/*
 * Lay the axis out: segments, gaps and cells; every mapping >= 1 cell,
 * gaps <= 2 % of the cells. Returns 0 or -ENOMEM.
 */
int rnd_layout(struct rnd_model *m, const struct rnd_layout *lay);
/* Count one run's bytes in the cells it covers (clipped to the mappings). */
void rnd_add_run(struct rnd_model *m, const struct pm_run *r);
/* Count run @r under state slot @slot (a colouring by value: each piece of one value). */
void rnd_add_run_as(struct rnd_model *m, const struct pm_run *r, unsigned slot);
/* Slots in use (RS_NSTATE unless a colouring says otherwise); does the legend show slot @k holding @bytes? */
unsigned rnd_nstates(const struct rnd_model *m);
/* Bytes of each state slot over all cells, added into @st (the legends' figures). */
void rnd_state_totals(const struct rnd_model *m, uint64_t st[RS_MAXSTATE]);
bool rnd_slot_shown(const struct rnd_model *m, unsigned k, uint64_t bytes);
/* Count [@start, @end) with page flags @flags (classes) under state slot @state (clipped to the mappings). */
void rnd_add_piece(struct rnd_model *m, uint64_t start, uint64_t end, uint32_t flags, unsigned state);
/*
 * Diff of two views of one process (render_diff.c): the axis from both
 * views' mappings, both walked in lockstep, each piece counted under its
 * change (rnd_diff_states) with B's classes. Returns 0 or -errno.
 */
int rnd_diff_fill(struct rnd_model *m, struct pm_target *a, struct pm_target *b, const struct rnd_layout *lay);
/* Read @t's mappings, lay out, walk once. Returns 0 or -errno from the library (the walk's). */
int rnd_model_fill(struct rnd_model *m, struct pm_target *t, const struct rnd_layout *lay);
/* The same, calling @each for every run instead of rnd_add_run (a negative return stops the walk with it). */
int rnd_model_walk(struct rnd_model *m, struct pm_target *t, const struct rnd_layout *lay,
		   int (*each)(void *data, const struct pm_run *r), void *data);
void rnd_model_free(struct rnd_model *m);
/* Forget the layout and counts, keep the mappings (to lay out again with more grouping). */
void rnd_model_reset(struct rnd_model *m);

/*
 * A stream into memory, as open_memstream(@buf, @len) (the text is the
 * caller's to free from fclose on), but grown without copies: for pictures
 * of a megabyte or more. Returns NULL with errno.
 */
FILE *rnd_buf_open(char **buf, size_t *len);

/* The state a cell is drawn in and its opacity level 1..4 (share populated); RS_NONE with level 0. */
enum rnd_state rnd_cell_state(const struct rnd_cell *c, unsigned *level);
/* Could the walk tell class @k (RC_*)? A class it could not is shown with "?". */
bool rnd_class_known(const struct rnd_model *m, int k);
/* Which segment holds cell @i (binary search); -1 for none. */
long rnd_seg_of_cell(const struct rnd_model *m, uint32_t i);
/* Write @s escaped for XML/HTML text and attributes (cli/base/textsafe.h's TS_XML). */
void rnd_xml_escape(FILE *f, const char *s);
/* Write @s as a JSON string (with quotes) that may sit inside an HTML <script> (TS_JSON_HTML). */
void rnd_json_str(FILE *f, const char *s);
/* Write @s for a terminal: no control byte reaches it (TS_TERM, as util-linux's tables). */
void rnd_term_str(FILE *f, const char *s);

/* Writers into @f (a memory stream; the caller checks the size). Return 0 or -EIO. */
int rnd_write_svg(FILE *f, const struct rnd_model *m);
int rnd_write_json(FILE *f, const struct rnd_model *m);
int rnd_write_ansi(FILE *f, const struct rnd_model *m);
int rnd_write_html(FILE *f, const struct rnd_model *m);

/* ---- colourings by value (render_colour.c) ---- */

enum rnd_colour { RCOL_STATE, RCOL_CGROUP, RCOL_CLASS, RCOL_NODE };
/* "state", "cgroup", "class", "node" into @out; -1 for another name. */
int rnd_colour_parse(const char *name, enum rnd_colour *out);
/*
 * Like rnd_model_fill, each present page coloured by its memory cgroup
 * (kpagecgroup), its physical class (kpageflags) or its NUMA node (frame
 * number against the node's memory blocks), read through @ctx. Returns 0
 * or -errno (the walk's; what the reader cannot see is drawn "hidden" or
 * "unknown" and said in m->note, not an error).
 */
int rnd_colour_fill(struct rnd_model *m, struct pm_ctx *ctx, struct pm_target *t, const struct rnd_layout *lay,
		    enum rnd_colour by);

/* ---- time heat maps (render_heat.c) ---- */

/* One interval of a recording: what it touched, as page ranges or per-mapping counts. */
struct heat_range {
	uint64_t start, end;
	uint64_t bytes;		/* bytes counted in [start, end): all of it for exact ranges */
	char *name;		/* per-mapping records: the recorded path (or NULL) */
};
struct heat_interval {
	double t;
	struct heat_range *r;
	size_t n, cap;
	uint64_t unmatched;	/* series: bytes of mappings in only one of the two snapshots (counted nowhere) */
};
struct heat_rec {
	char kind[16];		/* "track", "wss" or "series" */
	const char *what;	/* series: what the cells count ("written", ...); NULL: by kind */
	bool per_mapping;	/* counts are per mapping (track maps, wss), not exact ranges */
	struct heat_interval *iv;
	size_t n, cap;
	size_t nranges;		/* in all intervals (bounded) */
	uint64_t off_axis;	/* pages of the recording that lie on no band (set by heat_grid) */
};

/*
 * Parse a `track -J` (maps or --ranges) or `wss -J` recording from @buf.
 * Returns 0, or -EINVAL with @err (line and reason) for input it does not
 * know, -ENOMEM.
 */
int heat_parse(struct heat_rec *rec, const char *buf, size_t len, char *err, size_t errsize);
void heat_free(struct heat_rec *rec);
/* The axis from the recording itself (no process): its ranges merged into pseudo-mappings. */
int heat_axis_from_rec(struct rnd_model *m, const struct heat_rec *rec);
/* Time x address grid: counts[iv * ncells + cell] exact pages. Returns NULL on ENOMEM. */
uint64_t *heat_grid(const struct rnd_model *m, struct heat_rec *rec);
int heat_write_svg(FILE *f, const struct rnd_model *m, const struct heat_rec *rec, const uint64_t *grid);
int heat_write_json(FILE *f, const struct rnd_model *m, const struct heat_rec *rec, const uint64_t *grid);
int heat_write_ansi(FILE *f, const struct rnd_model *m, const struct heat_rec *rec, const uint64_t *grid);

/* ---- time heat maps of a series of snapshots (render_series.c) ---- */

/* What a series heat map counts in each interval (pm_diff_bytes categories of consecutive snapshots). */
enum series_what { SW_WRITTEN, SW_APPEARED, SW_FREED, SW_SWAPPED, SW_CHANGED, SW_N };
struct series_what_info {
	const char *name;
	const char *meaning;
};
extern const struct series_what_info series_whats[SW_N];
/* "written", "appeared", ... into @out; -1 for another name. */
int series_what_parse(const char *name, enum series_what *out);
/*
 * The axis of a diff or a series: the mappings of @n views of one process,
 * sorted, overlapping ones merged (the latest view's name for a mapping in
 * several). Returns 0 or -errno.
 */
int rnd_axis_union(struct rnd_model *m, struct pm_target *const *t, size_t n);
/*
 * One interval per consecutive pair of @t (n >= 2): the pieces
 * pm_diff_pieces reports whose change @what counts, as exact ranges
 * (adjacent ones merged), with the interval times @when (n - 1 of them).
 * Returns 0, -E2BIG (more ranges than a recording may hold), or -errno of
 * the diff; *@failed is the index of the later snapshot of a failed pair.
 */
int series_fill(struct heat_rec *rec, struct pm_target *const *t, size_t n, const double *when, enum series_what what,
		size_t *failed);

#endif
