/* cmd_features.c - `pagemap features`: what this kernel and this privilege level allow, and why not. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "output.h"

enum { COL_FEATURE, COL_STATUS, COL_DETAIL };

static const struct out_col columns[] = {
	[COL_FEATURE] = { "FEATURE", 0.2, 0, OUT_STR, "what is probed" },
	[COL_STATUS] = { "STATUS", 0.1, 0, OUT_STR, "yes, no, unknown, or the value" },
	[COL_DETAIL] = { "DETAIL", 0.7, SCOLS_FL_WRAP, OUT_STR, "why, and what would enable it" },
};

/* The library's rows of the features in words (pm_features_row), one table line each. */
static int print_rows(struct out *out, const struct pm_features *f, bool live)
{
	struct pm_feature_row r;
	struct libscols_line *ln;
	size_t i;
	int rc;

	for (i = 0; (rc = pm_features_row(f, live ? PM_FEATURES_LIVE : 0, i, &r)) == 0; i++) {
		ln = out_line(out);
		out_str(out, ln, COL_FEATURE, r.key);
		out_str(out, ln, COL_STATUS, r.value);
		out_str(out, ln, COL_DETAIL, r.why);
	}
	return rc < 0 ? rc : 0;
}

/* The key=value form a captured tree keeps in ROOT/pagemap-features (read back by the library). */
static int export_features(const struct pm_features *f)
{
	char buf[2048];

	if (pm_features_export(f, buf, sizeof(buf)) < 0) {
		cli_error(ENOSPC, "cannot export the features");
		return EXIT_RUNTIME;
	}
	fputs(buf, stdout);
	return EXIT_OK;
}

#define OPT_EXPORT 0x2000

int cmd_features(struct pm_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = { OUT_LONGOPTS, { "export", no_argument, NULL, OPT_EXPORT },
						  { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	bool export = false;
	const struct pm_features *f;
	struct out_opts o = { 0 };
	struct out *out;
	int c, r;

	optind = 0;
	while ((c = getopt_long(argc, argv, OUT_SHORTOPTS "h", longopts, NULL)) != -1) {
		if (out_parse_opt(&o, c, optarg))
			continue;
		if (c == OPT_EXPORT) {
			export = true;
			continue;
		}
		if (c == 'h') {
			printf("Usage: pagemap features [options]\n\n"
			       "What this kernel and this privilege level allow: pagemap layout, PFN\n"
			       "visibility, PAGEMAP_SCAN, userfaultfd write-protect, soft-dirty, the\n"
			       "physical-frame files and per-page map counts of large folios; for each\n"
			       "missing thing, why and what would enable it.\n\n"
			       "Options:\n"
			       "     --export           print the probe as key=value lines, the form a captured\n"
			       "                        tree keeps in ROOT/pagemap-features\n");
			out_help(stdout, columns, sizeof(columns) / sizeof(columns[0]));
			return EXIT_OK;
		}
		return cli_bad_option(argv);
	}
	if (optind < argc)
		return cli_usage_error("unexpected argument '%s'", argv[optind]);
	f = pm_ctx_probe(ctx, PM_PROBE_ALL);	/* every answer, the costlier probes too */
	if (!f) {
		cli_error(errno, "cannot probe the kernel");
		return EXIT_RUNTIME;
	}
	if (export)
		return export_features(f);
	out = out_new("features", columns, sizeof(columns) / sizeof(columns[0]), "FEATURE,STATUS,DETAIL", &o);
	if (!out)
		return EXIT_USAGE;
	r = print_rows(out, f, cli_live(ctx));
	if (!r)
		r = out_print(out);
	out_free(out);
	return r ? EXIT_RUNTIME : EXIT_OK;
}
