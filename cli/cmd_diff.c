/* cmd_diff.c - `pagemap diff A B`: what changed in each process's mappings between two snapshots. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "output.h"

enum { COL_PID, COL_MAPPING, COL_START, COL_END, COL_APPEARED, COL_FREED, COL_SWAPOUT, COL_SWAPIN, COL_WRITTEN,
       COL_THP_FORMED, COL_THP_SPLIT, COL_NEW_FRAME, COL_UFFDWP, COL_PERMS, COL_PATH };

static const struct out_col columns[] = {
	[COL_PID] = { "PID", 7, SCOLS_FL_RIGHT, OUT_NUM, "process ID" },
	[COL_MAPPING] = { "MAPPING", 8, 0, OUT_STR,
			  "same, changed, unmapped (in A only) or mapped (in B only)" },
	[COL_START] = { "START", 14, SCOLS_FL_RIGHT, OUT_HEX, "first address of the mapping" },
	[COL_END] = { "END", 14, SCOLS_FL_RIGHT, OUT_HEX, "address after its last byte" },
	[COL_APPEARED] = { "APPEARED", 6, SCOLS_FL_RIGHT, OUT_SIZE, "bytes neither present nor swapped in A, in B" },
	[COL_FREED] = { "FREED", 6, SCOLS_FL_RIGHT, OUT_SIZE, "bytes present or swapped in A, neither in B" },
	[COL_SWAPOUT] = { "SWAPOUT", 6, SCOLS_FL_RIGHT, OUT_SIZE, "bytes present in A, swapped in B" },
	[COL_SWAPIN] = { "SWAPIN", 6, SCOLS_FL_RIGHT, OUT_SIZE, "bytes swapped in A, present in B" },
	[COL_WRITTEN] = { "WRITTEN", 6, SCOLS_FL_RIGHT, OUT_SIZE,
			  "bytes written, on evidence: the zero page replaced, copy-on-write broken (a shared page or a "
			  "page-cache page of a private mapping now on a page of its own), soft-dirty gained" },
	[COL_THP_FORMED] = { "THP_FORMED", 6, SCOLS_FL_RIGHT, OUT_SIZE, "bytes in a huge page in B only" },
	[COL_THP_SPLIT] = { "THP_SPLIT", 6, SCOLS_FL_RIGHT, OUT_SIZE, "bytes in a huge page in A only" },
	[COL_NEW_FRAME] = { "NEW_FRAME", 6, SCOLS_FL_RIGHT, OUT_SIZE,
			    "bytes on another frame, with no evidence of a write: migration, or copy-on-write broken by "
			    "a sharing that began and ended between the snapshots", "MOVED" },
	[COL_UFFDWP] = { "UFFD_WP", 6, SCOLS_FL_RIGHT, OUT_SIZE, "bytes whose uffd-wp bit changed" },
	[COL_PERMS] = { "PERMS", 4, 0, OUT_STR, "permissions, as in maps (rwxp/s)" },
	[COL_PATH] = { "PATH", 0.3, SCOLS_FL_NOEXTREMES | SCOLS_FL_TRUNC, OUT_STR,
		       "the mapping's file or [name]; empty: anonymous" },
};
#define NCOLS (sizeof(columns) / sizeof(columns[0]))

/* diff --pages: one row per run of pages that changed alike (pm_diff_pieces), adjacent pieces merged. */
enum { PC_PID, PC_START, PC_END, PC_PAGES, PC_CHANGE, PC_PERMS, PC_PATH };

static const struct out_col page_columns[] = {
	[PC_PID] = { "PID", 7, SCOLS_FL_RIGHT, OUT_NUM, "process ID" },
	[PC_START] = { "START", 14, SCOLS_FL_RIGHT, OUT_HEX, "first address of the run" },
	[PC_END] = { "END", 14, SCOLS_FL_RIGHT, OUT_HEX, "address after the run" },
	[PC_PAGES] = { "PAGES", 6, SCOLS_FL_RIGHT, OUT_NUM, "pages in the run" },
	[PC_CHANGE] = { "CHANGE", 10, 0, OUT_STR,
			"what changed, the byte columns' names in lower case (written, new_frame, ...), comma separated "
			"where a page counts in several (render --diff colours the first)" },
	[PC_PERMS] = { "PERMS", 4, 0, OUT_STR, "permissions of the mapping" },
	[PC_PATH] = { "PATH", 0.3, SCOLS_FL_NOEXTREMES | SCOLS_FL_TRUNC, OUT_STR, "the mapping's file or [name]" },
};
#define NPCOLS (sizeof(page_columns) / sizeof(page_columns[0]))

struct diff_run {
	struct out *out;
	pid_t pid;
	struct pm_diff_bytes total;
	bool differs, all, pages, noted_frames;
	unsigned page_shift;
	struct {	/* --pages: the run being merged, within one mapping */
		bool open;
		uint64_t start, end;
		char change[96];	/* every change's name, comma-joined */
	} run;
};

static void bytes_cells(struct out *out, struct libscols_line *ln, const struct pm_diff_bytes *b)
{
	out_u64(out, ln, COL_APPEARED, b->appeared);
	out_u64(out, ln, COL_FREED, b->freed);
	out_u64(out, ln, COL_SWAPOUT, b->swapout);
	out_u64(out, ln, COL_SWAPIN, b->swapin);
	out_u64(out, ln, COL_WRITTEN, b->written);
	out_u64(out, ln, COL_THP_FORMED, b->thp_formed);
	out_u64(out, ln, COL_THP_SPLIT, b->thp_split);
	out_u64(out, ln, COL_NEW_FRAME, b->moved);
	out_u64(out, ln, COL_UFFDWP, b->uffdwp);
}

static int row_cb(void *data, const struct pm_diff_row *row)
{
	static const char *const status[] = { "same", "unmapped", "mapped" };
	struct diff_run *d = data;
	struct libscols_line *ln;
	bool changed = row->status == PM_DIFF_MATCHED && pm_diff_bytes_any(&row->bytes);

	if (changed || row->status != PM_DIFF_MATCHED)
		d->differs = true;
	if (row->status == PM_DIFF_MATCHED)
		pm_diff_bytes_add(&d->total, &row->bytes);
	if (!d->all && row->status == PM_DIFF_MATCHED && !changed)
		return 0;	/* only what changed, unless --all */
	ln = out_line(d->out);
	out_u64(d->out, ln, COL_PID, (uint64_t)d->pid);
	out_str(d->out, ln, COL_MAPPING, changed ? "changed" : status[row->status]);
	out_u64(d->out, ln, COL_START, row->map->start);
	out_u64(d->out, ln, COL_END, row->map->end);
	if (row->status == PM_DIFF_MATCHED)
		bytes_cells(d->out, ln, &row->bytes);
	out_str(d->out, ln, COL_PERMS, row->map->perms);
	out_str(d->out, ln, COL_PATH, row->map->path);
	return 0;
}

/* --pages: print the run being merged, if any; @m is the mapping it lies in. */
static void run_flush(struct diff_run *d, const struct pm_mapping *m)
{
	struct libscols_line *ln;

	if (!d->run.open)
		return;
	d->run.open = false;
	ln = out_line(d->out);
	out_u64(d->out, ln, PC_PID, (uint64_t)d->pid);
	out_u64(d->out, ln, PC_START, d->run.start);
	out_u64(d->out, ln, PC_END, d->run.end);
	out_u64(d->out, ln, PC_PAGES, (d->run.end - d->run.start) >> d->page_shift);
	out_str(d->out, ln, PC_CHANGE, d->run.change);
	out_str(d->out, ln, PC_PERMS, m->perms);
	out_str(d->out, ln, PC_PATH, m->path);
}

static int piece_cb(void *data, const struct pm_diff_piece *p)
{
	struct diff_run *d = data;
	char words[sizeof(d->run.change)];

	diff_change_words(&p->bytes, words, sizeof(words));
	if (d->run.open && d->run.end == p->start && !strcmp(d->run.change, words)) {
		d->run.end = p->end;	/* pieces are not maximal: the same change goes on */
		return 0;
	}
	run_flush(d, p->map);
	d->run.open = true;
	d->run.start = p->start;
	d->run.end = p->end;
	memcpy(d->run.change, words, sizeof(words));
	return 0;
}

/* --pages: a mapping's row comes after its pieces; its last run is printed there, totals kept. */
static int pages_row_cb(void *data, const struct pm_diff_row *row)
{
	struct diff_run *d = data;

	run_flush(d, row->map);
	if (row->status != PM_DIFF_MATCHED || pm_diff_bytes_any(&row->bytes))
		d->differs = true;
	return 0;
}

/* A and B: snapshots, or captured trees with --tree. NULL after a one-line message naming the file. */
static struct pm_ctx *open_side(const char *path, bool tree)
{
	struct pm_snapshot *s;
	struct pm_ctx *ctx;
	char err[256];

	if (tree) {
		if (!(ctx = pm_ctx_new(path)))
			cli_error(errno, "cannot use tree %s", path);
		return ctx;
	}
	if (!(s = pm_snapshot_open(path, err, sizeof(err)))) {
		cli_error(0, "cannot read snapshot %s: %s", path, err);
		return NULL;
	}
	if (!(ctx = pm_ctx_new_snapshot(s)))
		cli_error(0, "cannot replay snapshot %s: %s", path,
			  errno == EBADMSG && pm_snapshot_error(s) ? pm_snapshot_error(s) : strerror(errno));
	pm_snapshot_close(s);
	return ctx;
}

/*
 * Without frame numbers (a snapshot taken without CAP_SYS_ADMIN, or --pfn drop), a private page
 * that became exclusive may have been written (copy-on-write) or left by a sharer: it counts in
 * no column, and the user is told so once.
 */
static void note_frames(const struct pm_target *a, const struct pm_target *b, struct diff_run *d)
{
	struct pm_decode_info ia, ib;

	pm_target_decode_info(a, &ia);
	pm_target_decode_info(b, &ib);
	if (d->noted_frames || (ia.frame_visible && ib.frame_visible))
		return;
	d->noted_frames = true;
	cli_error(0, "note: no frame numbers in %s: a page that became exclusive may have been written "
		  "(copy-on-write) or left by a sharer, and counts in no column", ia.frame_visible ? "B" : "A");
}

/* Diff process @pid of A and B. A process missing from B (or A) is skipped when @quiet (no -p). */
static int diff_pid(struct pm_ctx *ca, struct pm_ctx *cb, const char *na, const char *nb, pid_t pid, bool quiet,
		    struct diff_run *d)
{
	struct pm_target *a, *b = NULL;
	char arg[32];
	int rc, code = EXIT_OK;

	snprintf(arg, sizeof(arg), "%d", (int)pid);
	a = quiet ? pm_target_open(ca, pid) : cli_open_target(ca, pid, arg);
	if (a)
		b = quiet ? pm_target_open(cb, pid) : cli_open_target(cb, pid, arg);
	if (!a || !b) {
		code = quiet && (errno == ENOENT || errno == ESRCH) ? EXIT_OK : EXIT_TROUBLE;
		if (code && quiet)
			cli_error(errno, "cannot open process %s in %s", arg, a ? nb : na);
		goto out;
	}
	d->pid = pid;
	d->page_shift = pm_ctx_features(ca) ? pm_ctx_features(ca)->page_shift : 12;
	note_frames(a, b, d);
	if (d->pages)
		rc = pm_diff_pieces(a, b, pages_row_cb, piece_cb, d);
	else
		rc = pm_diff_process(a, b, row_cb, d);
	if (rc < 0) {
		cli_walk_error(pm_ctx_tree_error(ca) ? ca : cb, -rc, arg);
		code = EXIT_TROUBLE;
	}
out:
	pm_target_close(a);
	pm_target_close(b);
	return code;
}

/* Every process of A that B has too. */
static int diff_all(struct pm_ctx *ca, struct pm_ctx *cb, const char *na, const char *nb, struct diff_run *d)
{
	struct pm_procs *it = pm_procs_open(ca);
	const struct pm_proc *p;
	int rc, code = EXIT_OK;

	if (!it) {
		cli_error(errno, "cannot list the processes of %s", na);
		return EXIT_TROUBLE;
	}
	while (code == EXIT_OK && (rc = pm_procs_next(it, &p)) == 0)
		if (p->state == PM_PROC_RUNNING)
			code = diff_pid(ca, cb, na, nb, p->pid, true, d);
	pm_procs_close(it);
	if (code == EXIT_OK && rc < 0) {
		cli_error(-rc, "cannot list the processes of %s", na);
		code = EXIT_TROUBLE;
	}
	return code;
}

static void total_row(struct diff_run *d)
{
	struct libscols_line *ln = d->pages ? NULL : out_total_line(d->out);

	if (!ln)
		return;
	out_str(d->out, ln, out_has(d->out, COL_PATH) ? COL_PATH : COL_MAPPING, "total");
	bytes_cells(d->out, ln, &d->total);
}

static int usage_help(void)
{
	printf("Usage: pagemap diff [options] A B\n\n"
	       "What changed between snapshots A and B (files written by 'pagemap snapshot'):\n"
	       "for each process in both, one row per mapping that changed (matched by start, end,\n"
	       "offset, protection and path; unmapped and mapped ones too) with the bytes of each\n"
	       "kind of change, and a total row. A page is WRITTEN only on evidence of a write;\n"
	       "NEW_FRAME holds pages on another frame with none (see pagemap-diff(1)).\n"
	       "Exit status (as diff(1)): 0 nothing differs, 1 something differs, 2 trouble (a usage\n"
	       "error, a missing or damaged snapshot, a process not in both).\n\n"
	       "Options:\n"
	       "  -p, --pid PID          only process PID (an error if A or B lacks it)\n"
	       "  -a, --all              every mapping, the unchanged ones too (MAPPING same)\n"
	       "      --pages            which pages: one row per run of pages that changed alike,\n"
	       "                         START END PAGES CHANGE (as render --diff colours them); only\n"
	       "                         mappings in both: one mapped or unmapped is a row without it\n"
	       "      --tree             A and B are captured /proc trees (as --root takes)\n\n"
	       "Default columns on a terminal, to fit its width (the path cut): PID MAPPING\n"
	       "START APPEARED FREED SWAPOUT WRITTEN PATH; piped, with -r or -J: all but\n"
	       "UFFD_WP and PERMS. -o and --output-all choose the same everywhere.\n");
	out_help_with(stdout, columns, NCOLS, OUT_HELP_TOTAL);
	printf("\nOutput columns with --pages:\n");
	out_help_columns(stdout, page_columns, NPCOLS);
	return EXIT_OK;
}

#define OPT_TREE 0x2000
#define OPT_PAGES 0x2001
#define DEFAULT_COLS "PID,MAPPING,START,END,APPEARED,FREED,SWAPOUT,SWAPIN,WRITTEN,THP_FORMED,THP_SPLIT,NEW_FRAME,PATH"
/* On a terminal, what fits 80 columns (the path cut to the rest): where, what grew, shrank, went to swap, was written */
#define TERM_COLS "PID,MAPPING,START,APPEARED,FREED,SWAPOUT,WRITTEN,PATH"
#define PAGE_COLS_ONE "START,END,PAGES,CHANGE"	/* -p: one process */
#define PAGE_COLS "PID,START,END,PAGES,CHANGE"

static int run_diff(const char *na, const char *nb, bool tree, bool one, pid_t pid, struct diff_run *d)
{
	struct pm_ctx *ca, *cb = NULL;
	int code = EXIT_TROUBLE;

	if (!(ca = open_side(na, tree)) || !(cb = open_side(nb, tree)))
		goto out;
	code = one ? diff_pid(ca, cb, na, nb, pid, false, d) : diff_all(ca, cb, na, nb, d);
	if (code == EXIT_OK) {
		total_row(d);
		if (out_print(d->out) < 0)
			code = EXIT_TROUBLE;
		else if (d->differs)
			code = EXIT_DIFFERENT;	/* like diff(1) */
	}
out:
	pm_ctx_free(ca);
	pm_ctx_free(cb);
	return code;
}

int cmd_diff(struct pm_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = { OUT_LONGOPTS, OUT_TOTAL_LONGOPT,
						  { "pid", required_argument, NULL, 'p' },
						  { "all", no_argument, NULL, 'a' },
						  { "pages", no_argument, NULL, OPT_PAGES },
						  { "tree", no_argument, NULL, OPT_TREE },
						  { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	struct diff_run d = { 0 };
	struct out_opts o = { 0 };
	bool tree = false, one = false;
	pid_t pid = 0;
	int c, code;

	(void)ctx;	/* A and B bring their own contexts */
	optind = 0;
	while ((c = getopt_long(argc, argv, OUT_SHORTOPTS "p:ah", longopts, NULL)) != -1) {
		if (out_parse_opt(&o, c, optarg))
			continue;
		if (c == 'p') {
			if (cli_parse_pid(optarg, &pid) < 0 || pid == 0)
				return cli_usage_error("invalid PID '%s'", optarg);
			one = true;
		} else if (c == 'a') {
			d.all = true;
		} else if (c == OPT_PAGES) {
			d.pages = true;
		} else if (c == OPT_TREE) {
			tree = true;
		} else if (c == 'h') {
			return usage_help();
		} else {
			return cli_bad_option(argv);
		}
	}
	if (argc - optind != 2)
		return cli_usage_error(argc - optind < 2 ? "give two snapshots, A and B" : "too many arguments");
	if (d.pages)
		d.out = out_new("diff", page_columns, NPCOLS, one ? PAGE_COLS_ONE : PAGE_COLS, &o);
	else
		d.out = out_new_fit("diff", columns, NCOLS, DEFAULT_COLS, TERM_COLS, &o);
	if (!d.out)
		return EXIT_USAGE;
	code = run_diff(argv[optind], argv[optind + 1], tree, one, pid, &d);
	out_free(d.out);
	return code;
}
