/*
 * cmd_top.c - `pagemap top`: every process's RSS, PSS, USS, swap and shared bytes, live. Frames
 * come from the library's live table (pagemap/live.h), which re-reads a rollup only when the
 * process moved, and the rest within the bound on a row's age that the header states. Drawn
 * with ncurses in a terminal (top_screen.c), or printed as frames for scripts (-b, -J).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "output.h"
#include "top.h"

enum { OPT_CGROUP = 0x2001, OPT_MAX_AGE, OPT_NOHEADINGS, OPT_BYTES };

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
	stop_signal = sig;
}

static int usage_help(void)
{
	printf("Usage: pagemap top [options]\n\n"
	       "Every process's resident (RSS), proportional (PSS), unique (USS), swapped,\n"
	       "shared and hugetlb bytes, live, from the kernel's smaps_rollup. A process's\n"
	       "rollup is read again when its stat shows that it faulted, ran, remapped or\n"
	       "changed state; the others are read oldest first so that no row is older than\n"
	       "--max-age (PSS moves when a sharer maps or unmaps), which the header states.\n"
	       "In a terminal: an interactive view (h for its keys); -b or -J: frames for\n"
	       "scripts, as top -b prints them (also when stdin or stdout is no terminal).\n\n"
	       "Options:\n"
	       " -d, --delay SECONDS    between frames (default 1)\n"
	       " -n, --iterations N     stop after N frames\n"
	       " -b, --batch            plain frames on stdout, no terminal view\n"
	       " -p, --pid PID,...      only these processes\n"
	       " -u, --user USER        only processes of USER (a name or a UID)\n"
	       "     --cgroup PATH      only processes in memory cgroup PATH or below it\n"
	       " -s, --sort COL         RSS, PSS (default), USS, SWAP, SHARED, HUGETLB, PID or\n"
	       "                        COMMAND; the change per second shown is COL's\n"
	       " -g, --group-by KEY     one row per user, comm or cgroup, its processes summed\n"
	       "     --max-age SECONDS  the bound on a row's age (default 10, at least -d)\n\n"
	       "-J prints one JSON object per frame and line (JSON Lines): the header's\n"
	       "figures and the rows under \"processes\". SIGINT or SIGTERM ends the frames.\n");
	top_batch_help(OUT_HELP_LONG_BYTES | OUT_HELP_LONG_NOHEADINGS);
	return EXIT_OK;
}

static int parse_secs(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return errno || end == s || *end || !isfinite(*v) || *v < 0.05 || *v > 86400 ? -EINVAL : 0;
}

static int parse_user(struct top_opts *to, const char *arg)
{
	to->by_user = true;
	return cli_parse_user(arg, &to->user);
}

/* Returns -1 to go on, or an exit code. */
static int parse_opt(struct top_opts *to, int c, char **argv)
{
	char *e;

	switch (c) {
	case 'd':
		return parse_secs(optarg, &to->delay) < 0 ?
			cli_usage_error("invalid delay '%s' (seconds, 0.05 to 86400)", optarg) : -1;
	case 'n':
		errno = 0;
		to->count = strtoul(optarg, &e, 10);
		return errno || e == optarg || *e || optarg[0] == '-' || !to->count ?
			cli_usage_error("invalid count '%s' (frames, at least 1)", optarg) : -1;
	case 'b':
		to->batch = true;
		return -1;
	case 'p':
		return (c = cli_parse_pid_list(optarg, false, &to->pids, &to->npids)) ? c : -1;
	case 'u':
		return parse_user(to, optarg) < 0 ? cli_usage_error("unknown user '%s'", optarg) : -1;
	case OPT_CGROUP:
		if (optarg[0] != '/')
			return cli_usage_error("cgroup path '%s' does not start with /", optarg);
		to->cgroup = optarg;
		return -1;
	case 's':
		return top_parse_sort(optarg, to) < 0 ? cli_usage_error("unknown sort column '%s'", optarg) : -1;
	case 'g':
		return top_parse_group(optarg, &to->group) < 0 ?
			cli_usage_error("unknown --group-by '%s': user, comm or cgroup", optarg) : -1;
	case OPT_MAX_AGE:
		return parse_secs(optarg, &to->max_age) < 0 ? cli_usage_error("invalid --max-age '%s'", optarg) : -1;
	case OPT_NOHEADINGS:
		return out_parse_opt(&to->o, 'n', NULL) ? -1 : EXIT_USAGE;
	case OPT_BYTES:
		return out_parse_opt(&to->o, 'b', NULL) ? -1 : EXIT_USAGE;
	case 'h':
		return usage_help();
	default:
		return out_parse_opt(&to->o, c, optarg) ? -1 : cli_bad_option(argv);
	}
}

static int parse_args(int argc, char **argv, struct top_opts *to)
{
	static const struct option longopts[] = {
		{ "delay", required_argument, NULL, 'd' }, { "iterations", required_argument, NULL, 'n' },
		{ "batch", no_argument, NULL, 'b' }, { "pid", required_argument, NULL, 'p' },
		{ "user", required_argument, NULL, 'u' }, { "cgroup", required_argument, NULL, OPT_CGROUP },
		{ "sort", required_argument, NULL, 's' }, { "group-by", required_argument, NULL, 'g' },
		{ "max-age", required_argument, NULL, OPT_MAX_AGE }, { "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'J' }, { "raw", no_argument, NULL, 'r' },
		{ "noheadings", no_argument, NULL, OPT_NOHEADINGS }, { "output", required_argument, NULL, 'o' },
		{ "output-all", no_argument, NULL, OUT_OPT_ALL }, { "bytes", no_argument, NULL, OPT_BYTES },
		{ NULL, 0, NULL, 0 }
	};
	int c, code;

	optind = 0;	/* a fresh scan: main's getopt used it for the global options */
	while ((c = getopt_long(argc, argv, "d:n:bp:u:s:g:Jro:h", longopts, NULL)) != -1)
		if ((code = parse_opt(to, c, argv)) >= 0)
			return code == EXIT_OK ? -2 : code;
	if (optind < argc)
		return cli_usage_error("unexpected argument '%s'", argv[optind]);
	if (to->o.json || to->o.raw)
		to->batch = true;
	if (to->max_age < to->delay)
		to->max_age = to->delay;
	return -1;
}

/* Sleep until @until (monotonic seconds), cut short by a stop signal. */
static void sleep_until(double until)
{
	double left;

	while (!stop_signal && (left = until - top_now()) > 0) {
		struct timespec ts = { .tv_sec = (time_t)left, .tv_nsec = (long)((left - (double)(time_t)left) * 1e9) };

		nanosleep(&ts, NULL);
	}
}

static int batch(struct pm_ctx *ctx, struct pm_live *l, const struct top_opts *to)
{
	struct top_cgroups *cg = top_cgroups_new();
	struct out *out = top_batch_out(to);
	struct top_frame f = { 0 };
	double t0 = top_now(), next = t0;
	unsigned long i;
	int code = EXIT_OK, r;

	if (!out || !cg) {
		out_free(out);
		top_cgroups_free(cg);
		return out ? EXIT_RUNTIME : EXIT_USAGE;
	}
	for (i = 1; !stop_signal && (!to->count || i <= to->count); i++) {
		if (i > 1)
			sleep_until(next += to->delay);
		if (stop_signal)
			break;
		if ((r = top_refresh(ctx, l, &f, to, cg, t0)) < 0) {
			top_refresh_error(ctx, r);
			code = EXIT_RUNTIME;
			break;
		}
		if ((r = top_batch_frame(out, ctx, &f, i, to)) < 0 || fflush(stdout)) {
			cli_error(r < 0 ? -r : errno, "cannot write the frame");
			code = EXIT_RUNTIME;
			break;
		}
	}
	top_frame_free(&f);
	top_cgroups_free(cg);
	out_free(out);
	return code;
}

int cmd_top(struct pm_ctx *ctx, int argc, char **argv)
{
	struct top_opts to = { .delay = 1, .max_age = 10, .sort_by = SORT_FIG, .sort = FIG_PSS };
	struct sigaction sa = { .sa_handler = on_stop };
	struct top_filter filter;
	struct pm_live *l;
	int code = parse_args(argc, argv, &to);

	if (code != -1) {
		free(to.pids);
		return code == -2 ? EXIT_OK : code;
	}
	if (cli_root || cli_snapshot) {	/* a replay is one moment: nothing moves between frames */
		free(to.pids);
		return cli_usage_error("top watches the running machine: --root and --snapshot replay a moment (ps reads them)");
	}
	if (!(l = pm_live_new(ctx, to.max_age))) {
		cli_error(errno, "cannot make the process table");
		free(to.pids);
		return EXIT_RUNTIME;
	}
	filter.ctx = ctx;
	filter.to = &to;
	if (to.npids || to.by_user || to.cgroup)
		pm_live_set_filter(l, top_live_filter, &filter);
	/* Each ends the frames, and the terminal view gives the terminal back (procps top catches these too). */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	if (!to.batch && (!isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO)))
		to.batch = true;	/* no terminal to draw on or to read keys from: frames, as top -b */
	code = to.batch ? batch(ctx, l, &to) : top_screen(ctx, l, &to, &stop_signal);
	pm_live_free(l);
	free(to.pids);
	return code;
}
