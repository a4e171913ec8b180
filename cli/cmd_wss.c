/* cmd_wss.c - `pagemap wss PID [INTERVAL [COUNT]]`: how much of a process's resident memory it touched during a window. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "output.h"

#define OPT_METHOD 0x1001

enum { COL_MAPPING, COL_START, COL_END, COL_PERMS, COL_RSS, COL_ACCESSED, COL_PCT, COL_UNTRACKED,
       COL_METHOD, COL_WINDOW, COL_MEASURED, COL_MAXIMUM };

static const struct out_col columns[] = {
	[COL_MAPPING] = { "MAPPING", 0.3, SCOLS_FL_TREE | SCOLS_FL_NOEXTREMES | SCOLS_FL_TRUNC, OUT_STR,
			  "\"total\", and under it each mapping's path (empty: anonymous)" },
	[COL_START] = { "START", 14, SCOLS_FL_RIGHT, OUT_HEX, "first address of the mapping" },
	[COL_END] = { "END", 14, SCOLS_FL_RIGHT, OUT_HEX, "address after its last byte" },
	[COL_PERMS] = { "PERMS", 4, 0, OUT_STR, "permissions, as in maps (rwxp/s)" },
	[COL_RSS] = { "RSS", 5, SCOLS_FL_RIGHT, OUT_SIZE, OUT_RSS_HELP ", when the window closed",
			   OUT_RSS_ALIASES },
	[COL_ACCESSED] = { "ACCESSED", 5, SCOLS_FL_RIGHT, OUT_SIZE, "of those, bytes accessed during the window" },
	[COL_PCT] = { "PCT", 5, SCOLS_FL_RIGHT, OUT_NUM, "ACCESSED as a percentage of RSS" },
	[COL_UNTRACKED] = { "UNTRACKED", 5, SCOLS_FL_RIGHT, OUT_SIZE,
			    "idle method: resident bytes the kernel does not track (not on an LRU: hugetlbfs files)" },
	[COL_METHOD] = { "METHOD", 6, 0, OUT_STR, "idle or referenced (total row)" },
	[COL_WINDOW] = { "WINDOW", 6, SCOLS_FL_RIGHT, OUT_NUM, "requested window, seconds (total row)" },
	[COL_MEASURED] = { "MEASURED", 6, SCOLS_FL_RIGHT, OUT_NUM,
			   "measured window: reset done to read begun, seconds (total row)" },
	[COL_MAXIMUM] = { "MAXIMUM", 6, SCOLS_FL_RIGHT, OUT_NUM,
			  "longest a page's window may have been: reset begun to read done, seconds (total row)" },
};
#define NCOLS (sizeof(columns) / sizeof(columns[0]))
/* On a terminal, what fits 80 columns: the path cut to the rest; the method is said on stderr */
#define TERM_COLS "MAPPING,START,RSS,ACCESSED,PCT,MEASURED"

struct wss_opts {
	struct out_opts o;
	enum pm_wss_method method;
	bool all;
	double interval;
	unsigned long count;	/* windows back to back; more than 1: one record per window */
};

/* SIGINT, SIGTERM or SIGHUP during a series: the window in progress is dropped, the ones printed stand. */
static volatile sig_atomic_t wss_stop_signal;

static void on_stop(int sig)
{
	wss_stop_signal = sig;
}

/* What each method does to the target, said on stderr before it is done (the help says it wrapped). */
static const char *perturbs(enum pm_wss_method m)
{
	return m == PM_WSS_IDLE ? "idle page tracking marks its resident frames idle: their accessed bits are cleared "
				  "in every process that maps them (reclaim keeps their age through the young flag)" :
				  "clear_refs 1: page reclaim sees its pages as not recently used";
}

static int parse_method(const char *s, enum pm_wss_method *m)
{
	if (!strcmp(s, "auto"))
		*m = PM_WSS_AUTO;
	else if (!strcmp(s, "idle"))
		*m = PM_WSS_IDLE;
	else if (!strcmp(s, "referenced"))
		*m = PM_WSS_REFERENCED;
	else
		return -EINVAL;
	return 0;
}

/* Seconds, decimals allowed, an optional "s": "1", "0.5", "2s". */
static int parse_interval(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	if (end != s && *end == 's')
		end++;
	if (errno || end == s || *end || !(*v > 0) || *v > 86400 * 365.0)
		return -EINVAL;
	return 0;
}

/* A count of windows: a positive integer. */
static int parse_count(const char *s, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || !*v)
		return -EINVAL;
	return 0;
}

/* Seconds, cut short by a stop signal (only a series installs the handler). */
static void sleep_seconds(double s)
{
	struct timespec ts = { .tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9) };

	while (!wss_stop_signal && nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Windows printed as records: one JSON object per line, or a heading over each table. */
static bool series(const struct wss_opts *wo)
{
	return wo->count > 1;
}

static void seconds_cell(struct out *out, struct libscols_line *ln, size_t col, double s)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%.3f", s);
	out_str(out, ln, col, buf);
}

static void usage_cells(struct out *out, struct libscols_line *ln, uint64_t resident, uint64_t accessed,
			uint64_t untracked, enum pm_wss_method m)
{
	char buf[32];

	out_u64(out, ln, COL_RSS, resident);
	out_u64(out, ln, COL_ACCESSED, accessed);
	if (resident) {
		snprintf(buf, sizeof(buf), "%.1f", 100.0 * (double)accessed / (double)resident);
		out_str(out, ln, COL_PCT, buf);
	} else {
		out_unknown(out, ln, COL_PCT);
	}
	if (m == PM_WSS_IDLE)
		out_u64(out, ln, COL_UNTRACKED, untracked);
	else
		out_unknown(out, ln, COL_UNTRACKED);
}

static void mapping_row(struct out *out, struct libscols_line *parent, const struct pm_wss_mapping *m,
			enum pm_wss_method method)
{
	struct libscols_line *ln = out_child_line(out, parent);

	out_str(out, ln, COL_MAPPING, m->path);	/* anonymous: empty, as in maps */
	out_u64(out, ln, COL_START, m->start);
	out_u64(out, ln, COL_END, m->end);
	out_str(out, ln, COL_PERMS, m->perms);
	usage_cells(out, ln, m->resident, m->accessed, m->untracked, method);
}

/*
 * The total row carries the window and the method; the mappings hang under it. With -n or -r
 * (rows only) there is none unless --total, and the mappings stand alone; JSON keeps it. A
 * series' JSON line carries the total in its head instead (window_record), as track's does.
 */
static int fill_rows(struct out *out, struct pm_wss *w, const struct pm_wss_summary *s, const struct wss_opts *wo)
{
	struct libscols_line *total = series(wo) && wo->o.json ? NULL : out_total_row(out);
	const struct pm_wss_mapping *m;
	int rc;

	out_str(out, total, COL_MAPPING, "total");
	out_unknown(out, total, COL_START);
	out_unknown(out, total, COL_END);
	out_unknown(out, total, COL_PERMS);
	usage_cells(out, total, s->resident, s->accessed, s->untracked, s->method);
	out_str(out, total, COL_METHOD, pm_wss_method_name(s->method));
	seconds_cell(out, total, COL_WINDOW, wo->interval);
	seconds_cell(out, total, COL_MEASURED, (double)s->window_ns / 1e9);
	seconds_cell(out, total, COL_MAXIMUM, (double)s->window_max_ns / 1e9);
	while ((rc = pm_wss_next(w, &m)) == 0)
		if (wo->all || m->resident)
			mapping_row(out, total, m, s->method);
	return rc < 0 ? rc : 0;
}

static void explain_wss_error(int err, const char *arg, const char *what)
{
	if (err == ESRCH)
		cli_error(0, "process %s exited or called exec during the window; there is no working set to report", arg);
	else
		cli_error(err, "cannot %s process %s", what, arg);
	if (err == EACCES)
		cli_hint(geteuid() == 0 ? "refused to root: a security module (LSM) forbids it" :
					  "another user's process needs root; idle page tracking always does");
}

/* A series' window: "# window I of N" over its table, or its JSON line with the total in the head. */
static int window_record(struct out *out, const struct pm_wss_summary *s, const struct wss_opts *wo,
			 unsigned long i, double t)
{
	double pct = s->resident ? 100.0 * (double)s->accessed / (double)s->resident : 0;
	char heading[300], acc[32], res[32];
	bool idle = s->method == PM_WSS_IDLE;

	snprintf(heading, sizeof(heading), "%s# window %lu of %lu, t=%.3fs: %s of %s resident accessed\n",
		 i > 1 ? "\n" : "", i, wo->count, t, out_human_size(s->accessed, acc, sizeof(acc)),
		 out_human_size(s->resident, res, sizeof(res)));

	const struct out_field head[] = {
		{ "index", OUT_NUM, i, 0, NULL }, { "t", OUT_SECS, 0, t, NULL },
		{ "method", OUT_STR, 0, 0, pm_wss_method_name(s->method) },
		{ "window", OUT_SECS, 0, wo->interval, NULL },
		{ "measured", OUT_SECS, 0, (double)s->window_ns / 1e9, NULL },
		{ "maximum", OUT_SECS, 0, (double)s->window_max_ns / 1e9, NULL },
		{ "rss", OUT_NUM, s->resident, 0, NULL }, { "accessed", OUT_NUM, s->accessed, 0, NULL },
		{ "pct", s->resident ? OUT_SECS : OUT_STR, 0, pct, NULL },
		{ "untracked", idle ? OUT_NUM : OUT_STR, s->untracked, 0, NULL },
	};

	return out_print_record(out, heading, head, sizeof(head) / sizeof(head[0]));
}

/*
 * One window: open, wait, close, print. Returns 0, 1 when a stop signal came during it (nothing
 * printed), or -1 after saying why it failed.
 */
static int one_window(struct pm_wss *w, struct out *out, const struct wss_opts *wo, unsigned long i, double *t0,
		      const char *arg)
{
	struct pm_wss_summary s;
	int r;

	if (wss_stop_signal)	/* came while the last window was read or printed */
		return 1;
	if (i == 1)	/* t counts from the opening of the first window */
		*t0 = now_seconds();
	r = pm_wss_start(w);
	if (r < 0) {
		explain_wss_error(-r, arg, "start the window of");
		return -1;
	}
	sleep_seconds(wo->interval);
	if (wss_stop_signal)
		return 1;
	r = pm_wss_stop(w, &s);
	if (r == 0)
		r = fill_rows(out, w, &s, wo);
	if (r < 0) {
		explain_wss_error(-r, arg, "read the accessed pages of");
		return -1;
	}
	r = series(wo) ? window_record(out, &s, wo, i, now_seconds() - *t0) : out_print(out);
	if (r < 0) {
		cli_error(-r, "cannot write the output");
		return -1;
	}
	return 0;
}

static int measure(struct pm_target *t, struct out *out, const struct wss_opts *wo, const char *arg)
{
	char why[512];
	struct pm_wss *w = pm_wss_new(t, wo->method);
	double t0 = 0;
	unsigned long i;
	int r = 0;

	if (!w) {
		r = errno;
		pm_wss_explain(t, wo->method, why, sizeof(why));
		cli_error(0, "cannot measure the working set of process %s: %s", arg, why);
		if (r == EOPNOTSUPP && wo->method == PM_WSS_IDLE)
			cli_hint("try --method referenced (clear_refs 1 and smaps)");
		return EXIT_RUNTIME;
	}
	cli_error(0, "wss: clearing the accessed bits of process %s (%s)", arg, perturbs(pm_wss_method(w)));
	cli_error(0, "note: method %s: %s", pm_wss_method_name(pm_wss_method(w)), pm_wss_reason(w));
	for (i = 1; i <= wo->count && r == 0; i++)
		r = one_window(w, out, wo, i, &t0, arg);
	pm_wss_free(w);
	if (r == 1)	/* the windows printed are the answer: a clean end, as track's */
		cli_error(0, "wss: stopped by signal %d: %lu of %lu windows reported", (int)wss_stop_signal, i - 2,
			  wo->count);
	return r < 0 ? EXIT_RUNTIME : EXIT_OK;
}

static int usage_help(void)
{
	printf("Usage: pagemap wss [options] PID [INTERVAL [COUNT]]\n\n"
	       "The working set of process PID (or \"self\"): how many of its resident bytes it\n"
	       "accessed during a window of INTERVAL seconds (default 1; decimals allowed), in\n"
	       "total and per mapping, with the requested and the measured window.\n\n"
	       "COUNT windows back to back (default 1): each printed as it closes, under a\n"
	       "\"# window I of COUNT\" heading; with -J one JSON object per window and line\n"
	       "(the total and the window in its head, the mappings under \"wss\"). SIGINT or\n"
	       "SIGTERM ends a series with the windows printed (exit status 0).\n\n"
	       "This changes the target: its pages' accessed bits are cleared when the window\n"
	       "opens, which page reclaim uses to find memory not recently used:\n"
	       "  idle        idle page tracking marks its resident frames idle: their\n"
	       "              accessed bits are cleared in every process that maps them\n"
	       "              (reclaim keeps their age through the young flag)\n"
	       "  referenced  clear_refs 1: page reclaim sees its pages as not recently used\n"
	       "The command says which on standard error before the window opens.\n\n"
	       "Options:\n"
	       " -m, --method NAME      auto (default: idle where the kernel has it and PFNs are\n"
	       "                        visible, else referenced), idle or referenced\n"
	       " -a, --all              also mappings with nothing resident\n"
	       " -h, --help             this help\n\n"
	       "Default columns on a terminal, to fit its width (the path cut): MAPPING START\n"
	       "RSS ACCESSED PCT MEASURED; piped, with -r or -J: MAPPING START END RSS ACCESSED\n"
	       "PCT METHOD WINDOW MEASURED. -o and --output-all choose the same everywhere.\n");
	out_help_with(stdout, columns, NCOLS, OUT_HELP_TOTAL);
	return EXIT_OK;
}

static int parse_args(int argc, char **argv, struct wss_opts *wo, pid_t *pid)
{
	static const struct option longopts[] = {
		OUT_LONGOPTS, OUT_TOTAL_LONGOPT,
		{ "method", required_argument, NULL, 'm' },
		{ "all", no_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, OUT_SHORTOPTS "m:ah", longopts, NULL)) != -1) {
		if (out_parse_opt(&wo->o, c, optarg))
			continue;
		if (c == 'm' && parse_method(optarg, &wo->method) < 0)
			return cli_usage_error("unknown method '%s' (auto, idle or referenced)", optarg);
		else if (c == 'a')
			wo->all = true;
		else if (c == 'h')
			return -1;
		else if (c != 'm')
			return cli_bad_option(argv);
	}
	if (optind == argc)
		return cli_usage_error("no PID given");
	if (argc - optind > 3)
		return cli_usage_error("too many arguments");
	if (cli_parse_pid(argv[optind], pid) < 0)
		return cli_usage_error("invalid PID '%s'", argv[optind]);
	if (argc - optind >= 2 && parse_interval(argv[optind + 1], &wo->interval) < 0)
		return cli_usage_error("invalid interval '%s' (seconds, such as 1 or 0.5)", argv[optind + 1]);
	if (argc - optind == 3 && parse_count(argv[optind + 2], &wo->count) < 0)
		return cli_usage_error("invalid count '%s' (windows, at least 1)", argv[optind + 2]);
	return 0;
}

int cmd_wss(struct pm_ctx *ctx, int argc, char **argv)
{
	struct wss_opts wo = { .method = PM_WSS_AUTO, .interval = 1.0, .count = 1 };
	struct sigaction sa = { .sa_handler = on_stop };
	struct pm_target *t;
	struct out *out;
	pid_t pid;
	int code = parse_args(argc, argv, &wo, &pid);

	if (code < 0)
		return usage_help();
	if (code)
		return code;
	/* A series' JSON line has the total and the window in its head, its rows the mappings alone. */
	out = out_new_fit("wss", columns, NCOLS, series(&wo) && wo.o.json ? "MAPPING,START,END,RSS,ACCESSED,PCT" :
			  "MAPPING,START,END,RSS,ACCESSED,PCT,METHOD,WINDOW,MEASURED", TERM_COLS, &wo.o);
	if (!out)
		return EXIT_USAGE;
	if (!series(&wo) || !wo.o.json)
		out_tree(out);	/* the mappings hang under the total row */
	if (series(&wo)) {	/* one window alone keeps the default: killed, it has nothing to show */
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
	}
	t = cli_open_target(ctx, pid, argv[optind]);
	if (!t) {
		out_free(out);
		return EXIT_RUNTIME;
	}
	code = measure(t, out, &wo, argv[optind]);
	pm_target_close(t);
	out_free(out);
	return code;
}
