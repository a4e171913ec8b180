/* cmd_render.c - `pagemap render`: a picture of an address space (SVG, HTML, ANSI, JSON) or a time heat map. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "render.h"

#define SVG_MAX (1u << 20)
#define HTML_MAX (2u << 20)
#define MAX_CELLS 250000u
#define MAX_RECORDING (256u << 20)

enum fmt { F_AUTO, F_SVG, F_HTML, F_ANSI, F_JSON };

struct render_opts {
	const char *out, *snapshot, *track, *wss;
	bool diff, series, what_set;
	enum series_what what;
	char **files;		/* --series: the snapshots, in time order */
	size_t nfiles;
	const char *pid_arg;	/* --series: the PID, when given */
	enum fmt fmt;
	enum rnd_colour colour;
	unsigned width;
};

static int usage_help(void)
{
	fputs("Usage: pagemap render [options] PID\n"
	      "       pagemap render [options] --snapshot FILE [PID]\n"
	      "       pagemap render [options] --track FILE|--wss FILE [PID]\n"
	      "       pagemap render [options] --diff A B [PID]\n"
	      "       pagemap render [options] --series A B [C ...] [PID]\n"
	      "\nA picture of a process's address space: one band per mapping, in address order, wrapped\n"
	      "into rows; gaps between mappings collapsed to a short hatched break labelled with their\n"
	      "size. Each cell is a slice of a band's pages, coloured by the state most of its pages are in\n"
	      "(faded when only part of it is populated); the legend gives the exact bytes of each class.\n"
	      "With --track or --wss, a time heat map: one row per interval of a `pagemap track -J`\n"
	      "(--ranges gives exact addresses) or `pagemap wss -J` recording, cells holding page counts.\n"
	      "With --series, a time heat map of snapshots of one process: one row per interval between\n"
	      "two consecutive snapshots, cells holding the exact pages that changed in it (mappings matched\n"
	      "as 'pagemap diff' matches them; pages of a mapping not in both count nowhere, said so).\n"
	      "\nOptions:\n"
	      "  -o, --output FILE    write FILE (whole, or not at all; default and -: standard output;\n"
	      "                       0600 for HTML with frame numbers, else 0644 less the umask)\n"
	      "  -f, --format NAME    svg, html, ansi or json (default: from FILE's extension, else ansi\n"
	      "                       on a terminal and svg otherwise)\n"
	      "      --snapshot FILE  draw a process of a file written by 'pagemap snapshot'\n"
	      "      --track FILE     heat map of a 'pagemap track -J' recording (written pages)\n"
	      "      --wss FILE       heat map of 'pagemap wss -J' recordings (accessed pages)\n"
	      "      --diff           colour what changed from snapshot A to snapshot B, page for page\n"
	      "                       as 'pagemap diff --pages' lists it: appeared, freed, written,\n"
	      "                       swapped, new_frame, huge page formed or split\n"
	      "      --series         heat map of snapshots A B [C ...] of one process, in time order\n"
	      "                       (a last argument that is a number and names no file is the PID,\n"
	      "                       needed when the snapshots hold several processes)\n"
	      "      --what NAME      what a --series cell counts (default written):\n"
	      "  -c, --colour-by KEY  state (default), cgroup (the memory cgroup charged, kpagecgroup),\n"
	      "                       class (physical page class, kpageflags, as 'pagemap phys') or node\n"
	      "                       (NUMA node of each frame); cgroup and class need root, node frame\n"
	      "                       numbers: pages whose frame the reader cannot see are drawn hidden\n"
	      "                       (--color-by is the same)\n"
	      "  -w, --width N        cells per row (default 1200; ansi: the terminal's width)\n"
	      "  -h, --help           this help\n", stdout);
	for (int i = 0; i < SW_N; i++)
		printf("                       %-9s%s\n", series_whats[i].name, series_whats[i].meaning);
	fputs("\nColours (Okabe-Ito, colour-blind safe):\n", stdout);
	for (int i = 0; i < RS_NSTATE; i++)
		printf("  %-6s %s  %s\n", rnd_states[i].name, rnd_states[i].colour, rnd_states[i].meaning);
	fputs("\nExit status: 0 success, 1 runtime failure, 2 usage error, 3 a snapshot or recording that\n"
	      "cannot be read or is malformed.\n", stdout);
	return EXIT_OK;
}

static enum fmt fmt_of(const char *s)
{
	static const char *const names[] = { [F_SVG] = "svg", [F_HTML] = "html", [F_ANSI] = "ansi", [F_JSON] = "json" };
	size_t i;

	for (i = F_SVG; i <= F_JSON; i++)
		if (!strcmp(s, names[i]))
			return (enum fmt)i;
	return F_AUTO;
}

static enum fmt default_fmt(const char *out)
{
	const char *dot = out ? strrchr(out, '.') : NULL;

	if (dot && fmt_of(dot + 1) != F_AUTO)
		return fmt_of(dot + 1);
	if (dot && !strcmp(dot, ".htm"))
		return F_HTML;
	return (!out || !strcmp(out, "-")) && isatty(STDOUT_FILENO) ? F_ANSI : F_SVG;
}

static unsigned term_width(void)
{
	struct winsize ws;
	const char *cols = getenv("COLUMNS");

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		return ws.ws_col;
	if (cols && atoi(cols) >= 20)
		return (unsigned)atoi(cols);
	return 80;
}

/*
 * Does the picture hold frame numbers or swap offsets? HTML lists its runs with them when the reader saw
 * them (PM_PAGE_FRAME: as root); SVG, ANSI and JSON show cells only. Then it is written 0600 as a snapshot
 * is: frame numbers tell others where this process's memory lies physically (rowhammer).
 */
static bool holds_frames(const struct rnd_model *m, enum fmt fmt)
{
	if (fmt != F_HTML)
		return false;
	for (size_t i = 0; i < m->nruns; i++)
		if ((m->runs[i].flags & PM_PAGE_FRAME) && (m->runs[i].flags & (PM_PAGE_PRESENT | PM_PAGE_SWAPPED)))
			return true;
	return false;
}

/* The one process of a snapshot (its proc/PID/maps), or 0 and a usage error when there are several. */
static int snapshot_pid(const char *file, pid_t *pid)
{
	struct pm_snapshot *s = pm_snapshot_open(file, NULL, 0);
	struct pm_snapshot_section sec;
	int n = 0;

	if (!s)
		return -errno;
	while (pm_snapshot_next(s, &sec) == 0) {
		int p, len = 0;

		if (sec.type == PM_SNAPSHOT_FILE && sec.path && sscanf(sec.path, "proc/%d/maps%n", &p, &len) == 1 &&
		    (size_t)len == strlen(sec.path) && p > 0) {
			*pid = p;
			n++;
		}
	}
	pm_snapshot_close(s);
	return n == 1 ? 0 : n ? -E2BIG : -ENOENT;
}

/* A snapshot's context; *@when (if asked) its META time in seconds, NAN without one. */
static struct pm_ctx *open_snapshot(const char *file, double *when)
{
	char err[256], *end;
	struct pm_snapshot *s = pm_snapshot_open(file, err, sizeof(err));
	struct pm_ctx *ctx;
	const char *t;

	if (!s) {
		cli_error(0, "cannot read snapshot %s: %s", file, err);
		return NULL;
	}
	if (when) {
		t = pm_snapshot_meta(s, "time");
		*when = t && *t ? strtod(t, &end) : NAN;
		if (t && *end)
			*when = NAN;
	}
	if (!(ctx = pm_ctx_new_snapshot(s)))
		cli_error(0, "cannot replay snapshot %s: %s", file,
			  errno == EBADMSG && pm_snapshot_error(s) ? pm_snapshot_error(s) : strerror(errno));
	pm_snapshot_close(s);
	return ctx;
}

/* Render into memory; when over the format's bound, lay out again with fewer cells (mappings grouped). */
static int render_map(struct pm_ctx *ctx, struct pm_target *before, struct pm_target *t, const struct render_opts *ro, enum fmt fmt, const char *arg,
		      struct rnd_model *m, char **buf, size_t *len)
{
	/* HTML: at most 20000 bands, so that the mapping list and the data stay within 2 MiB */
	struct rnd_layout lay = { ro->width, fmt == F_ANSI ? 2 : 8, fmt == F_HTML ? 20000 : MAX_CELLS, 24, false };
	size_t limit = fmt == F_SVG ? SVG_MAX : fmt == F_HTML ? HTML_MAX : SIZE_MAX;

	for (;;) {
		FILE *f;
		int rc = before ? rnd_diff_fill(m, before, t, &lay) : rnd_colour_fill(m, ctx, t, &lay, ro->colour);

		if (rc < 0) {
			cli_walk_error(ctx, -rc, arg);
			return EXIT_RUNTIME;
		}
		if (!(f = rnd_buf_open(buf, len)))
			return EXIT_RUNTIME;
		rc = fmt == F_SVG ? rnd_write_svg(f, m) : fmt == F_HTML ? rnd_write_html(f, m) :
		     fmt == F_JSON ? rnd_write_json(f, m) : rnd_write_ansi(f, m);
		if (fclose(f) != 0 || rc < 0) {
			cli_error(rc < 0 ? -rc : errno, "cannot render process %s", arg);
			return EXIT_RUNTIME;
		}
		if (*len <= limit || lay.max_cells < 64)
			return EXIT_OK;
		free(*buf);
		*buf = NULL;
		lay.max_cells /= 2;
		m->max_runs /= 2;
		rnd_model_reset(m);
	}
}

/* Read a whole recording (bounded: a recording is a text file a person made, not a device). */
static int read_file(const char *path, char **buf, size_t *len)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	size_t cap = 65536, n = 0;
	char *b = NULL, *more;

	if (!f)
		return -errno;
	for (;;) {
		size_t got;

		if (!(more = realloc(b, cap + 1))) {
			free(b);
			if (f != stdin)
				fclose(f);
			return -ENOMEM;
		}
		b = more;
		got = fread(b + n, 1, cap - n, f);
		n += got;
		if (n < cap || cap >= MAX_RECORDING)
			break;
		cap *= 2;
	}
	if (ferror(f) || n >= MAX_RECORDING) {
		int err = ferror(f) ? -EIO : -EFBIG;

		free(b);
		if (f != stdin)
			fclose(f);
		return err;
	}
	if (f != stdin)
		fclose(f);
	b[n] = '\0';
	*buf = b;
	*len = n;
	return 0;
}

static int load_recording(const char *path, struct heat_rec *rec)
{
	char *buf = NULL, err[256] = "";
	size_t len = 0;
	int rc = read_file(path, &buf, &len);

	if (rc < 0) {
		cli_error(-rc, "cannot read recording %s", path);
		return rc == -EFBIG || rc == -ENOENT || rc == -EISDIR ? EXIT_BADINPUT : EXIT_RUNTIME;
	}
	rc = heat_parse(rec, buf, len, err, sizeof(err));
	free(buf);
	if (rc == -ENOMEM) {
		cli_error(ENOMEM, "cannot read recording %s", path);
		return EXIT_RUNTIME;
	}
	if (rc < 0) {
		cli_error(0, "malformed recording %s: %s", path, err);
		return EXIT_BADINPUT;
	}
	return EXIT_OK;
}

/* Grid and write a heat map laid out on @m; an SVG over its bound is laid out again with half the columns. */
static int heat_output(struct rnd_model *m, struct heat_rec *rec, struct rnd_layout *lay, enum fmt fmt, char **buf,
		       size_t *len)
{
	for (;;) {
		uint64_t *grid = heat_grid(m, rec);
		FILE *f = grid ? open_memstream(buf, len) : NULL;
		int rc;

		if (!f) {
			free(grid);
			return -ENOMEM;
		}
		rc = fmt == F_JSON ? heat_write_json(f, m, rec, grid) : fmt == F_ANSI ? heat_write_ansi(f, m, rec, grid) :
		     heat_write_svg(f, m, rec, grid);
		free(grid);
		if (fclose(f) != 0 || rc < 0)
			return -EIO;
		if (fmt != F_SVG || *len <= SVG_MAX || lay->width <= 16)
			return 0;
		free(*buf);
		*buf = NULL;
		lay->width /= 2;
		lay->max_cells = lay->width;
		rnd_model_reset(m);
		if ((rc = rnd_layout(m, lay)) < 0)
			return rc;
	}
}

/* Rows: intervals; cells: at most MAX_CELLS in all, so fewer columns for long recordings. */
static struct rnd_layout heat_layout(const struct render_opts *ro, size_t intervals)
{
	struct rnd_layout lay = { ro->width, 1, MAX_CELLS, 24, true };

	if (intervals && lay.max_cells / intervals < lay.width)
		lay.width = lay.max_cells / (uint32_t)intervals > 16 ? lay.max_cells / (uint32_t)intervals : 16;
	lay.max_cells = lay.width;
	return lay;
}

/* Heat map: the axis from the process (when given) or from the recording, one row per interval. */
static int render_heat(struct pm_target *t, const struct render_opts *ro, enum fmt fmt, struct rnd_model *m,
		       char **buf, size_t *len)
{
	const char *file = ro->track ? ro->track : ro->wss;
	struct heat_rec rec = { 0 };
	struct rnd_layout lay;
	int rc, code = load_recording(file, &rec);

	if (code != EXIT_OK) {
		heat_free(&rec);	/* what was read before the malformed part */
		return code;
	}
	lay = heat_layout(ro, rec.n);
	rc = t ? rnd_model_fill(m, t, &lay) : heat_axis_from_rec(m, &rec);
	if (rc == 0 && !t)
		rc = rnd_layout(m, &lay);
	snprintf(m->source, sizeof(m->source), "%s %s", rec.kind, file);
	if (rc == 0 && (rc = heat_output(m, &rec, &lay, fmt, buf, len)) < 0)
		cli_error(-rc, "cannot render the heat map of %s", file);
	else if (rc < 0)
		cli_error(-rc, "cannot lay out the heat map of %s", file);
	heat_free(&rec);
	return rc < 0 ? EXIT_RUNTIME : EXIT_OK;
}

/* --series: the one process of every snapshot (or @pid_arg's), the same in all. */
static int series_pid(const struct render_opts *ro, pid_t *pid)
{
	pid_t p;
	int rc;

	if (ro->pid_arg)
		return cli_parse_pid(ro->pid_arg, pid) < 0 || !*pid ? cli_usage_error("invalid PID '%s'", ro->pid_arg) :
									EXIT_OK;
	for (size_t i = 0; i < ro->nfiles; i++) {
		if ((rc = snapshot_pid(ro->files[i], &p)) == -E2BIG)
			return cli_usage_error("snapshot %s holds several processes: give a PID", ro->files[i]);
		if (rc < 0) {
			cli_error(0, rc == -ENOENT ? "snapshot %s holds no process" : "cannot read snapshot %s: %s",
				  ro->files[i], strerror(-rc));
			return EXIT_BADINPUT;
		}
		if (i && p != *pid) {
			cli_error(0, "snapshots %s and %s hold different processes (%d and %d): give a PID both hold",
				  ro->files[0], ro->files[i], (int)*pid, (int)p);
			return EXIT_BADINPUT;
		}
		*pid = p;
	}
	return EXIT_OK;
}

/* Open every snapshot and its process; the interval times (seconds since the first, or 1, 2, ...). */
static int series_open(const struct render_opts *ro, struct pm_ctx **ctx, struct pm_target **t, double *when)
{
	bool timed = true;
	pid_t pid = 0;
	size_t i;
	int code;

	for (i = 0; i < ro->nfiles; i++) {
		if (!(ctx[i] = open_snapshot(ro->files[i], &when[i])))
			return EXIT_BADINPUT;
		timed = timed && !isnan(when[i]);
	}
	if ((code = series_pid(ro, &pid)) != EXIT_OK)
		return code;
	for (i = 0; i < ro->nfiles; i++)
		if (!(t[i] = pm_target_open(ctx[i], pid))) {
			if (errno != ENOENT && errno != ESRCH)
				return cli_error(errno, "cannot open process %d in %s", (int)pid, ro->files[i]), EXIT_RUNTIME;
			cli_error(0, "snapshot %s holds no process %d", ro->files[i], (int)pid);
			return EXIT_BADINPUT;
		}
	for (i = 0; i + 1 < ro->nfiles; i++)
		when[i] = timed ? when[i + 1] - when[0] : (double)(i + 1);
	return EXIT_OK;
}

/* --series: one row per interval between consecutive snapshots, the pages that changed in it. */
static int render_series(const struct render_opts *ro, enum fmt fmt, struct rnd_model *m, char **buf, size_t *len)
{
	struct pm_ctx **ctx = calloc(ro->nfiles, sizeof(*ctx));
	struct pm_target **t = calloc(ro->nfiles, sizeof(*t));
	double *when = calloc(ro->nfiles, sizeof(*when));
	struct rnd_layout lay = heat_layout(ro, ro->nfiles - 1);
	struct heat_rec rec = { 0 };
	size_t i, bad = 0;
	int rc, code = ctx && t && when ? series_open(ro, ctx, t, when) : EXIT_RUNTIME;

	if (code != EXIT_OK)
		goto out;
	code = EXIT_RUNTIME;
	m->page_size = pm_ctx_features(ctx[0])->page_size;
	snprintf(m->source, sizeof(m->source), "process %d, %zu snapshots %s ... %s", (int)pm_target_pid(t[0]),
		 ro->nfiles, ro->files[0], ro->files[ro->nfiles - 1]);
	if ((rc = rnd_axis_union(m, t, ro->nfiles)) < 0 || (rc = rnd_layout(m, &lay)) < 0) {
		cli_error(-rc, "cannot lay out the heat map of %s", ro->files[0]);
		goto out;
	}
	if ((rc = series_fill(&rec, t, ro->nfiles, when, ro->what, &bad)) < 0) {
		struct pm_ctx *c = pm_ctx_tree_error(ctx[bad - 1]) ? ctx[bad - 1] : ctx[bad];

		if (rc == -E2BIG)
			cli_error(0, "more changed ranges between %s and %s than a heat map holds", ro->files[bad - 1],
				  ro->files[bad]);
		else
			cli_walk_error(c, -rc, m->source);
		code = rc == -EBADMSG || rc == -EINVAL ? EXIT_BADINPUT : EXIT_RUNTIME;
		goto out;
	}
	if ((rc = heat_output(m, &rec, &lay, fmt, buf, len)) < 0)
		cli_error(-rc, "cannot render the heat map of %s", ro->files[0]);
	else
		code = EXIT_OK;
out:
	heat_free(&rec);
	for (i = 0; i < ro->nfiles; i++) {
		pm_target_close(t ? t[i] : NULL);
		pm_ctx_free(ctx ? ctx[i] : NULL);
	}
	free(ctx);
	free(t);
	free(when);
	return code;
}

/* --series A B [C ...] [PID]: a last argument that is a number and names no file is the PID. */
static int series_args(int argc, char **argv, struct render_opts *ro)
{
	const char *last = optind < argc ? argv[argc - 1] : "";
	struct stat st;

	if (!ro->series)
		return cli_usage_error("--what is for --series");
	if (ro->diff || ro->snapshot || ro->track || ro->wss || ro->colour != RCOL_STATE)
		return cli_usage_error("--series takes snapshots of its own, without --diff, --snapshot, --track, --wss "
				       "or --colour-by");
	if (ro->fmt == F_HTML)
		return cli_usage_error("heat maps are svg, ansi or json");
	ro->files = argv + optind;
	ro->nfiles = (size_t)(argc - optind);
	if (*last && strspn(last, "0123456789") == strlen(last) && stat(last, &st) < 0) {
		ro->pid_arg = last;
		ro->nfiles--;
	}
	if (ro->nfiles < 2)
		return cli_usage_error("--series needs two snapshots or more, in time order");
	return 0;
}

static int parse_args(int argc, char **argv, struct render_opts *ro)
{
	enum { OPT_SNAPSHOT = 0x2000, OPT_TRACK, OPT_WSS, OPT_DIFF, OPT_SERIES, OPT_WHAT };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },   { "format", required_argument, NULL, 'f' },
		{ "width", required_argument, NULL, 'w' },    { "snapshot", required_argument, NULL, OPT_SNAPSHOT },
		{ "track", required_argument, NULL, OPT_TRACK }, { "wss", required_argument, NULL, OPT_WSS },
		{ "diff", no_argument, NULL, OPT_DIFF },      { "help", no_argument, NULL, 'h' },
		{ "colour-by", required_argument, NULL, 'c' }, { "color-by", required_argument, NULL, 'c' },
		{ "series", no_argument, NULL, OPT_SERIES },  { "what", required_argument, NULL, OPT_WHAT },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, "o:f:w:c:h", longopts, NULL)) != -1) {
		if (c == 'o')
			ro->out = optarg;
		else if (c == 'f' && (ro->fmt = fmt_of(optarg)) == F_AUTO)
			return cli_usage_error("unknown format '%s' (svg, html, ansi or json)", optarg);
		else if (c == 'w' && ((ro->width = (unsigned)strtoul(optarg, &end, 10)) < 20 || *end || ro->width > 100000))
			return cli_usage_error("invalid width '%s' (20 to 100000 cells)", optarg);
		else if (c == 'c' && rnd_colour_parse(optarg, &ro->colour) < 0)
			return cli_usage_error("unknown colouring '%s' (state, cgroup, class or node)", optarg);
		else if (c == OPT_SNAPSHOT)
			ro->snapshot = optarg;
		else if (c == OPT_TRACK)
			ro->track = optarg;
		else if (c == OPT_WSS)
			ro->wss = optarg;
		else if (c == OPT_DIFF)
			ro->diff = true;
		else if (c == OPT_SERIES)
			ro->series = true;
		else if (c == OPT_WHAT && series_what_parse(optarg, &ro->what) < 0)
			return cli_usage_error("unknown --what '%s' (written, appeared, freed, swapped or changed)", optarg);
		else if (c == OPT_WHAT)
			ro->what_set = true;
		else if (c == 'h')
			return -1;
		else if (c != 'f' && c != 'w' && c != 'c')
			return cli_bad_option(argv);
	}
	if (ro->series || ro->what_set)
		return series_args(argc, argv, ro);
	if (ro->track && ro->wss)
		return cli_usage_error("--track and --wss exclude each other");
	if (ro->fmt == F_HTML && (ro->track || ro->wss))
		return cli_usage_error("heat maps are svg, ansi or json");
	if (ro->colour != RCOL_STATE && (ro->diff || ro->track || ro->wss))
		return cli_usage_error("--colour-by colours a map of one process, not --diff or a heat map");
	if (ro->diff && (ro->snapshot || ro->track || ro->wss))
		return cli_usage_error("--diff takes two snapshots of its own, without --snapshot, --track or --wss");
	if (ro->diff && (argc - optind < 2 || argc - optind > 3))
		return cli_usage_error("--diff needs two snapshots, A and B, and a PID when they hold several processes");
	if (ro->diff)
		return 0;
	if (argc - optind > 1)
		return cli_usage_error("too many arguments");
	if (optind == argc && !ro->snapshot && !ro->track && !ro->wss)
		return cli_usage_error("no PID given");
	return 0;
}

/* The target: PID, or the one process of --snapshot. Sets *@t NULL for a heat map without a process. */
static int open_target(struct pm_ctx **ctx, struct pm_ctx **own, const struct render_opts *ro, const char *pid_arg, struct pm_target **t,
		       char *source, size_t size)
{
	pid_t pid = 0;
	int rc;

	*t = NULL;
	if (ro->snapshot) {
		if (!pid_arg && (rc = snapshot_pid(ro->snapshot, &pid)) < 0) {
			if (rc == -E2BIG)
				return cli_usage_error("snapshot %s holds several processes: give a PID", ro->snapshot);
			if (rc == -ENOENT)
				cli_error(0, "snapshot %s holds no process", ro->snapshot);
			else
				cli_error(0, "cannot read snapshot %s: %s", ro->snapshot, strerror(-rc));
			return EXIT_BADINPUT;
		}
		if (!(*own = open_snapshot(ro->snapshot, NULL)))
			return EXIT_BADINPUT;
		*ctx = *own;
	}
	if (pid_arg && cli_parse_pid(pid_arg, &pid) < 0)
		return cli_usage_error("invalid PID '%s'", pid_arg);
	if (!pid_arg && !ro->snapshot)
		return EXIT_OK;	/* a heat map drawn on the recording's own axis */
	snprintf(source, size, ro->snapshot ? "process %d of snapshot %s" : "process %d", (int)pid,
		 ro->snapshot ? ro->snapshot : "");
	if (!(*t = cli_open_target(*ctx, pid, pid_arg ? pid_arg : source)))
		return EXIT_RUNTIME;
	return EXIT_OK;
}

/* --diff: the same process in snapshot @file (A), and the source saying what is compared. */
static int open_before(const char *file, struct pm_target *t, struct pm_ctx **own, struct pm_target **before,
		       char *source, size_t size)
{
	char arg[32];
	size_t len = strlen(source);

	if (!(*own = open_snapshot(file, NULL)))
		return EXIT_BADINPUT;
	snprintf(arg, sizeof(arg), "%d", (int)pm_target_pid(t));
	if (!(*before = cli_open_target(*own, pm_target_pid(t), arg)))
		return EXIT_RUNTIME;
	snprintf(source + len, size - len, ", changes since %s", file);
	return EXIT_OK;
}

int cmd_render(struct pm_ctx *ctx, int argc, char **argv)
{
	struct render_opts ro = { .width = 0 };
	struct rnd_model m = { 0 };
	struct pm_ctx *own = NULL, *own_a = NULL, *use = ctx;
	struct pm_target *t = NULL, *before = NULL;
	char *buf = NULL;
	size_t len = 0;
	enum fmt fmt;
	int code = parse_args(argc, argv, &ro);

	if (code < 0)
		return usage_help();
	if (code)
		return code;
	fmt = ro.fmt != F_AUTO ? ro.fmt : default_fmt(ro.out);
	if (!ro.width)
		ro.width = fmt == F_ANSI ? term_width() : 1200;
	if (ro.series) {
		code = render_series(&ro, fmt, &m, &buf, &len);
		goto write;
	}
	if (ro.diff)	/* B is the snapshot drawn; A the one it is compared with */
		ro.snapshot = argv[optind + 1];
	code = open_target(&use, &own, &ro, argc - optind > 2 ? argv[optind + 2] : !ro.diff && optind < argc ? argv[optind] : NULL,
			   &t, m.source, sizeof(m.source));
	if (code == EXIT_OK && ro.diff)
		code = open_before(argv[optind], t, &own_a, &before, m.source, sizeof(m.source));
	if (code != EXIT_OK)
		goto out;
	m.page_size = pm_ctx_features(use)->page_size;
	m.max_runs = fmt == F_HTML ? 20000 : 0;	/* only the page shows runs (hover, click); the rest sum bytes */
	if (ro.track || ro.wss)
		code = render_heat(t, &ro, fmt, &m, &buf, &len);
	else
		code = render_map(use, before, t, &ro, fmt, m.source, &m, &buf, &len);
write:
	if (code == EXIT_OK && cli_write_output(ro.out, buf, len, holds_frames(&m, fmt) ? PM_OUTFILE_PRIVATE : 0) < 0)
		code = EXIT_RUNTIME;
out:
	free(buf);
	rnd_model_free(&m);
	pm_target_close(t);
	pm_target_close(before);
	pm_ctx_free(own);
	pm_ctx_free(own_a);
	return code;
}
