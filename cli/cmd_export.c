/* cmd_export.c - `pagemap export`: one exposition of per-group memory for Prometheus, to stdout or a textfile directory. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "export_fleet.h"

static int usage_help(void)
{
	printf("Usage: pagemap export [options]\n\n"
	       "Per-group memory (RSS by anon/file/shmem, USS, swap, huge pages) of every process,\n"
	       "in the Prometheus text format or OpenMetrics, with self-telemetry; with --pss\n"
	       "also exact PSS and, as root, physical memory by page class.\n\n"
	       "Options:\n"
	       " -f, --format FMT       prometheus (default) or openmetrics\n"
	       " -t, --textfile DIR     write DIR/pagemap.prom atomically (node_exporter's textfile collector)\n"
	       " -g, --group-by KEY     cgroup (default: the memory cgroup), user, comm, pid, rules\n"
	       "     --rules FILE       with --group-by rules: lines \"GROUP PATTERN\", a glob on the command name\n"
	       "     --top N            at most N groups besides \"other\"\n"
	       "     --max-series N     hard cap on the samples (default %d)\n"
	       "     --budget SECONDS   stop walking processes after this long (counted as skipped)\n"
	       "     --pss              also the slow tier: exact PSS per group, classes of frames\n"
	       " -h, --help             this help\n", FLEET_MAX_SERIES);
	return EXIT_OK;
}

/*
 * Write @w to DIR/pagemap.prom whole (pm_outfile: a private temporary, then a rename): the collector never
 * reads half a file, and whoever may write DIR (node_exporter's user owns it on Debian) cannot make root
 * write through a symlink or a FIFO planted there: that entry is replaced, never followed.
 */
static int write_textfile(const char *dir, const struct mw *w)
{
	char dst[4096];

	if (snprintf(dst, sizeof(dst), "%s/pagemap.prom", dir) >= (int)sizeof(dst)) {
		cli_error(ENAMETOOLONG, "cannot write into %s", dir);
		return EXIT_RUNTIME;
	}
	return cli_write_output(dst, w->buf, w->len, PM_OUTFILE_ENTRY) < 0 ? EXIT_RUNTIME : EXIT_OK;
}

#define OPT_TOP 0x3000
#define OPT_MAXSERIES 0x3001
#define OPT_BUDGET 0x3002
#define OPT_PSS 0x3003
#define OPT_RULES 0x3004

struct export_args {
	struct fleet_opts o;
	const char *textfile, *rules;
	bool pss;
};

static int parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v == 0 || v > 1000000)
		return -EINVAL;
	*out = (size_t)v;
	return 0;
}

/* Returns -1 to go on, or an exit code. */
static int parse_opt(struct export_args *a, int c, char **argv)
{
	char *end;

	switch (c) {
	case 'f':
		if (!strcmp(optarg, "prometheus"))
			a->o.format = MW_PROMETHEUS;
		else if (!strcmp(optarg, "openmetrics"))
			a->o.format = MW_OPENMETRICS;
		else
			return cli_usage_error("unknown format '%s' (prometheus or openmetrics)", optarg);
		return -1;
	case 't':
		a->textfile = optarg;
		return -1;
	case 'g':
		return fleet_parse_by(optarg, &a->o.by) < 0 ?
			       cli_usage_error("unknown group key '%s' (cgroup, user, comm, pid, rules)", optarg) : -1;
	case OPT_RULES:
		a->rules = optarg;
		return -1;
	case OPT_TOP:
		return parse_size(optarg, &a->o.top) < 0 ? cli_usage_error("invalid --top '%s'", optarg) : -1;
	case OPT_MAXSERIES:
		return parse_size(optarg, &a->o.max_series) < 0 ? cli_usage_error("invalid --max-series '%s'", optarg) :
								   -1;
	case OPT_BUDGET:
		a->o.budget = strtod(optarg, &end);
		return *end || end == optarg || !(a->o.budget > 0) ? cli_usage_error("invalid --budget '%s'", optarg) :
								   -1;
	case OPT_PSS:
		a->pss = true;
		return -1;
	case 'h':
		return usage_help();
	default:
		return cli_bad_option(argv);
	}
}

/* Check what goes together and load the rules. Returns -1 to go on, or an exit code. */
int fleet_check_opts(struct fleet_opts *o, const char *rules)
{
	char err[256];

	if (o->max_series < 64)
		return cli_usage_error("--max-series must be at least 64 (telemetry and one group)");
	if ((o->by == BY_RULES) != (rules != NULL))
		return cli_usage_error("--group-by rules and --rules FILE go together");
	if (rules && fleet_rules_load(rules, o, err, sizeof(err)) < 0) {
		cli_error(0, "cannot use rules %s: %s", rules, err);
		fleet_rules_free(o);
		return EXIT_RUNTIME;
	}
	return -1;
}

int cmd_export(struct pm_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' }, { "textfile", required_argument, NULL, 't' },
		{ "group-by", required_argument, NULL, 'g' }, { "rules", required_argument, NULL, OPT_RULES },
		{ "top", required_argument, NULL, OPT_TOP }, { "max-series", required_argument, NULL, OPT_MAXSERIES },
		{ "budget", required_argument, NULL, OPT_BUDGET }, { "pss", no_argument, NULL, OPT_PSS },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	struct export_args a = { .o = { .max_series = FLEET_MAX_SERIES, .user_key = cli_user_label } };
	struct fleet_exact ex = { 0 };
	struct fleet_state st = { 0 };
	struct mw w;
	int c, r, code;

	optind = 0;
	while ((c = getopt_long(argc, argv, "f:t:g:h", longopts, NULL)) != -1)
		if ((r = parse_opt(&a, c, argv)) >= 0)
			return r;
	if (optind < argc)
		return cli_usage_error("unexpected argument '%s'", argv[optind]);
	if ((r = fleet_check_opts(&a.o, a.rules)) >= 0)
		return r;
	mw_init(&w, a.o.format);
	r = a.pss ? fleet_exact_pass(ctx, &a.o, &ex) : 0;
	if (r == 0)
		r = fleet_scrape(ctx, &a.o, &st, a.pss ? &ex : NULL, &w);
	if (r < 0) {
		cli_error(-r, "cannot collect the processes of %s/proc", strcmp(pm_ctx_root(ctx), "/") ? pm_ctx_root(ctx) : "");
		code = EXIT_RUNTIME;
	} else if (a.textfile) {
		code = write_textfile(a.textfile, &w);
	} else {
		code = fwrite(w.buf, 1, w.len, stdout) == w.len ? EXIT_OK : EXIT_RUNTIME;
	}
	fleet_exact_free(&ex);
	fleet_rules_free(&a.o);
	mw_free(&w);
	return code;
}
