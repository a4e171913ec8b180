/* cmd_audit.c - `pagemap audit`: what on this machine can learn physical addresses or page sharing, and the fix. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "output.h"

enum { COL_NAME, COL_VERDICT, COL_SUBJECT, COL_EVIDENCE, COL_FIX, COL_PID, COL_UID, COL_COMM, NCOLS };

static const struct out_col columns[] = {
	[COL_NAME] = { "NAME", 0.1, 0, OUT_STR, "the check" },
	[COL_VERDICT] = { "VERDICT", 0.05, 0, OUT_STR, "ok, exposed or unknown" },
	[COL_SUBJECT] = { "SUBJECT", 0.15, 0, OUT_STR, "what was examined: a file, a process, a path" },
	[COL_EVIDENCE] = { "EVIDENCE", 0.5, 0, OUT_STR, "what was read" },
	[COL_FIX] = { "FIX", 0.2, 0, OUT_STR, "what would close the exposure" },
	[COL_PID] = { "PID", 5, SCOLS_FL_RIGHT, OUT_NUM, "process ID (cap-sys-admin rows)" },
	[COL_UID] = { "UID", 5, SCOLS_FL_RIGHT, OUT_NUM, "its effective user ID" },
	[COL_COMM] = { "COMM", 0.1, 0, OUT_STR, "command name (comm)" },
};

#define OPT_SNAPSHOTS 0x2000

static void help(void)
{
	printf("Usage: pagemap audit [options] [--snapshots PATH...]\n\n"
	       "Rowhammer exposure: what on this machine can learn physical addresses,\n"
	       "physical contiguity or page-sharing facts. One row per finding with its\n"
	       "verdict (ok, exposed, unknown), the evidence read and the fix: frame numbers\n"
	       "for unprivileged readers (by the kernel version and, as root, by a child\n"
	       "that drops to uid 65534), the modes of /proc/self/pagemap, /proc/kpage* and\n"
	       "the idle page bitmap, processes holding CAP_SYS_ADMIN, transparent and\n"
	       "hugetlb huge pages, the exclusive bit with KSM, snapshot files.\n\n"
	       "Options:\n"
	       "     --snapshots PATH   also search PATH (a file or a directory) for pagemap\n"
	       "                        snapshots holding frame numbers; arguments after it\n"
	       "                        are more paths\n"
	       "\nExit status: 0 nothing exposed, 1 something exposed (or a runtime failure,\n"
	       "said on stderr), 2 usage error.\n");
	out_help(stdout, columns, NCOLS);
}

static void row(struct out *out, const struct pm_finding *f)
{
	struct libscols_line *ln = out_line(out);

	out_str(out, ln, COL_NAME, f->name);
	out_str(out, ln, COL_VERDICT, pm_verdict_name(f->verdict));
	out_str(out, ln, COL_SUBJECT, f->subject);
	out_str(out, ln, COL_EVIDENCE, f->evidence);
	if (f->fix)
		out_str(out, ln, COL_FIX, f->fix);
	else
		out_unknown(out, ln, COL_FIX);
	if (f->pid) {
		out_u64(out, ln, COL_PID, (uint64_t)f->pid);
		out_str(out, ln, COL_COMM, f->comm);
	} else {
		out_unknown(out, ln, COL_PID);
		out_unknown(out, ln, COL_COMM);
	}
	if (f->uid_known)
		out_u64(out, ln, COL_UID, f->uid);
	else
		out_unknown(out, ln, COL_UID);
}

/* Options, then the snapshot paths. Returns the exit code; *@go_on says whether to audit. */
static int parse(int argc, char **argv, struct out_opts *o, struct pm_audit *a, bool *go_on)
{
	static const struct option longopts[] = { OUT_LONGOPTS, { "snapshots", required_argument, NULL, OPT_SNAPSHOTS },
						  { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	bool snapshots = false;
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, OUT_SHORTOPTS "h", longopts, NULL)) != -1) {
		if (out_parse_opt(o, c, optarg))
			continue;
		if (c == 'h') {
			help();
			return EXIT_OK;
		}
		if (c != OPT_SNAPSHOTS)
			return cli_bad_option(argv);
		snapshots = true;
		if (pm_audit_add_path(a, optarg) < 0)
			goto nomem;
	}
	if (optind < argc && !snapshots)
		return cli_usage_error("unexpected argument '%s' (snapshot paths follow --snapshots)", argv[optind]);
	for (; optind < argc; optind++)
		if (pm_audit_add_path(a, argv[optind]) < 0)
			goto nomem;
	*go_on = true;
	return EXIT_OK;
nomem:
	cli_error(ENOMEM, "cannot start the audit");
	return EXIT_RUNTIME;
}

int cmd_audit(struct pm_ctx *ctx, int argc, char **argv)
{
	struct pm_audit *a = pm_audit_new(ctx);
	const struct pm_finding *f;
	struct out_opts o = { 0 };
	struct out *out = NULL;
	bool go_on = false;
	int code, r;

	if (!a) {
		cli_error(errno, "cannot start the audit");
		return EXIT_RUNTIME;
	}
	code = parse(argc, argv, &o, a, &go_on);
	if (!go_on)
		goto out;
	code = EXIT_USAGE;
	out = out_new("audit", columns, NCOLS, "NAME,VERDICT,SUBJECT,EVIDENCE,FIX", &o);
	if (!out)
		goto out;
	code = EXIT_RUNTIME;
	r = pm_audit_run(a, 0);
	if (r == -EBADMSG && pm_ctx_tree_error(ctx)) {
		cli_error(0, "%s", pm_ctx_tree_error(ctx));
		goto out;
	}
	if (r < 0) {
		cli_error(-r, "cannot audit");
		goto out;
	}
	while (pm_audit_next(a, &f) == 0)
		row(out, f);
	if (out_print(out) < 0)
		goto out;
	code = pm_audit_count(a, PM_VERDICT_EXPOSED) ? EXIT_RUNTIME : EXIT_OK;	/* 1: something is exposed */
out:
	out_free(out);
	pm_audit_free(a);
	return code;
}
