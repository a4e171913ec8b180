/* cmd_audit.c - `pagemap audit`: what on this machine can learn physical addresses or page sharing, and the fix. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "output.h"

enum { COL_NAME, COL_VERDICT, COL_SUBJECT, COL_EVIDENCE, COL_FIX, COL_PID, COL_UID, COL_COMMAND, COL_COUNT, COL_PIDS, NCOLS };

static const struct out_col columns[] = {
	[COL_NAME] = { "NAME", 0.1, 0, OUT_STR, "the check" },
	[COL_VERDICT] = { "VERDICT", 0.05, 0, OUT_STR, "exposed, context, unknown or ok" },
	[COL_SUBJECT] = { "SUBJECT", 0.25, SCOLS_FL_TRUNC, OUT_STR, "what was examined: a file, a process, a path" },
	[COL_EVIDENCE] = { "EVIDENCE", 0.5, SCOLS_FL_WRAP, OUT_STR, "what was read" },
	[COL_FIX] = { "FIX", 0.2, SCOLS_FL_WRAP, OUT_STR, "what would close the exposure" },
	[COL_PID] = { "PID", 5, SCOLS_FL_RIGHT, OUT_NUM, "process ID (cap-sys-admin rows)" },
	[COL_UID] = { "UID", 5, SCOLS_FL_RIGHT, OUT_NUM, "its effective user ID" },
	[COL_COMMAND] = { "COMMAND", 0.1, 0, OUT_STR, "command name (comm)", "COMM" },
	[COL_COUNT] = { "COUNT", 5, SCOLS_FL_RIGHT, OUT_NUM, "processes this row stands for (a folded row: more than 1)" },
	[COL_PIDS] = { "PIDS", 0.1, 0, OUT_NUMS, "their process IDs, comma separated (JSON: an array)" },
};

#define DEFAULT_COLS "NAME,VERDICT,SUBJECT,EVIDENCE,FIX"
/* On a terminal, what fits 80 columns: the subject cut, the evidence wrapped; a hint names the fixes' view */
#define TERM_COLS "NAME,VERDICT,SUBJECT,EVIDENCE"

#define OPT_SNAPSHOTS 0x2000
#define OPT_EACH 0x2001
#define OPT_STRICT 0x2002

static void help(void)
{
	printf("Usage: pagemap audit [options] [--snapshots PATH...]\n\n"
	       "Rowhammer exposure: what on this machine can learn physical addresses,\n"
	       "physical contiguity or page-sharing facts. One row per finding with its\n"
	       "verdict, the evidence read and the fix: frame numbers for unprivileged\n"
	       "readers (by the kernel version and, as root, by a child that drops to uid\n"
	       "65534), the modes of /proc/self/pagemap, /proc/kpage* and the idle page\n"
	       "bitmap, processes holding CAP_SYS_ADMIN, transparent and hugetlb huge\n"
	       "pages, the exclusive bit with KSM, snapshot files.\n\n"
	       "Verdicts: exposed  users other than root can learn frame numbers now\n"
	       "          context  weighs on the risk, no exposure by itself (huge pages,\n"
	       "                   KSM, a snapshot with frame numbers only root may read)\n"
	       "          unknown  the evidence could not be read\n"
	       "          ok       nothing learnt here\n"
	       "Processes with the same finding (root's CAP_SYS_ADMIN holders) are one row\n"
	       "(COUNT, PIDS); exposed rows are never folded.\n\n"
	       "Options:\n"
	       "     --each             one row per process, none folded\n"
	       "     --strict           exit 1 also for context and unknown findings\n"
	       "     --snapshots PATH   also search PATH (a file or a directory) for pagemap\n"
	       "                        snapshots holding frame numbers; arguments after it\n"
	       "                        are more paths\n\n"
	       "Default columns on a terminal, to fit its width: NAME VERDICT SUBJECT (cut)\n"
	       "EVIDENCE (wrapped); the fixes: -o NAME,VERDICT,FIX (a hint says so when\n"
	       "something is exposed). Piped, with -r or -J: NAME VERDICT SUBJECT EVIDENCE\n"
	       "FIX. -o and --output-all choose the same everywhere.\n"
	       "\nExit status: 0 nothing exposed; 1 something exposed (with --strict, also a\n"
	       "context or unknown finding), or a runtime failure said on stderr; 2 usage\n"
	       "error.\n");
	out_help(stdout, columns, NCOLS);
}

/* A row: one finding, or the @n findings of @fold (same check, verdict, evidence, fix and UID). */
struct row {
	const struct pm_finding *f;
	const struct pm_finding **fold;
	size_t n;
};

static void row(struct out *out, const struct row *r)
{
	struct libscols_line *ln = out_line(out);
	const struct pm_finding *f = r->f;
	char subject[64], *pids = NULL;
	size_t len = 0, i;
	FILE *m;

	out_str(out, ln, COL_NAME, f->name);
	out_str(out, ln, COL_VERDICT, pm_verdict_name(f->verdict));
	snprintf(subject, sizeof(subject), "%zu processes", r->n);
	out_str(out, ln, COL_SUBJECT, r->n > 1 ? subject : f->subject);
	out_str(out, ln, COL_EVIDENCE, f->evidence);
	if (f->fix)
		out_str(out, ln, COL_FIX, f->fix);
	else
		out_unknown(out, ln, COL_FIX);
	if (f->pid && r->n == 1) {
		out_u64(out, ln, COL_PID, (uint64_t)f->pid);
		out_str(out, ln, COL_COMMAND, f->comm);
	} else {
		out_unknown(out, ln, COL_PID);
		out_unknown(out, ln, COL_COMMAND);
	}
	if (f->uid_known)
		out_u64(out, ln, COL_UID, f->uid);
	else
		out_unknown(out, ln, COL_UID);
	out_u64(out, ln, COL_COUNT, r->n);
	m = f->pid && out_has(out, COL_PIDS) ? open_memstream(&pids, &len) : NULL;
	for (i = 0; m && i < r->n; i++)
		fprintf(m, "%s%d", i ? "," : "", (int)r->fold[i]->pid);
	if (m && fclose(m) == 0)
		out_str(out, ln, COL_PIDS, pids);
	else
		out_unknown(out, ln, COL_PIDS);
	free(pids);
}

/* May @g stand in the same row as @f? Process rows that differ only in the process; an exposed one never. */
static bool same_row(const struct pm_finding *f, const struct pm_finding *g)
{
	return f->pid && g->pid && f->verdict != PM_VERDICT_EXPOSED && f->verdict == g->verdict &&
	       !strcmp(f->name, g->name) && !strcmp(f->evidence, g->evidence) && !f->fix == !g->fix &&
	       (!f->fix || !strcmp(f->fix, g->fix)) && f->uid_known == g->uid_known && f->uid == g->uid;
}

/*
 * The rows of @all (@n findings): each at its first finding's place, with the later ones that
 * may share it (unless @each). Returns 0 or -ENOMEM.
 */
static int rows(struct out *out, const struct pm_finding **all, size_t n, bool each)
{
	const struct pm_finding **fold = malloc((n ? n : 1) * sizeof(*fold));
	bool *taken = calloc(n ? n : 1, sizeof(*taken));
	struct row r;
	size_t i, j;

	if (!fold || !taken) {
		free(fold);
		free(taken);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		if (taken[i])
			continue;
		r = (struct row){ .f = all[i], .fold = fold, .n = 1 };
		fold[0] = all[i];
		for (j = i + 1; !each && j < n; j++)
			if (!taken[j] && same_row(all[i], all[j])) {
				taken[j] = true;
				fold[r.n++] = all[j];
			}
		row(out, &r);
	}
	free(fold);
	free(taken);
	return 0;
}

/* Options, then the snapshot paths. Returns the exit code; *@go_on says whether to audit. */
struct opts {
	struct out_opts out;
	bool each, strict;
};

static int parse(int argc, char **argv, struct opts *o, struct pm_audit *a, bool *go_on)
{
	static const struct option longopts[] = { OUT_LONGOPTS, { "snapshots", required_argument, NULL, OPT_SNAPSHOTS },
						  { "each", no_argument, NULL, OPT_EACH },
						  { "strict", no_argument, NULL, OPT_STRICT },
						  { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	bool snapshots = false;
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, OUT_SHORTOPTS "h", longopts, NULL)) != -1) {
		if (out_parse_opt(&o->out, c, optarg))
			continue;
		if (c == OPT_EACH || c == OPT_STRICT) {
			*(c == OPT_EACH ? &o->each : &o->strict) = true;
			continue;
		}
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

/* Every finding of @a, folded unless @each. Returns 0 or -ENOMEM. */
static int print_findings(struct out *out, struct pm_audit *a, bool each)
{
	size_t n = 0, cap = 0;
	const struct pm_finding *f, **all = NULL, **more;
	int r = 0;

	while (r == 0 && pm_audit_next(a, &f) == 0) {
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			more = realloc(all, cap * sizeof(*all));
			if (!more)
				r = -ENOMEM;
			else
				all = more;
		}
		if (r == 0)
			all[n++] = f;
	}
	if (r == 0)
		r = rows(out, all, n, each);
	free(all);
	return r;
}

/* 1 when something is exposed (--strict: or context, or unknown), else 0. */
static int verdict_code(const struct pm_audit *a, bool strict)
{
	unsigned bad = pm_audit_count(a, PM_VERDICT_EXPOSED);

	if (strict)
		bad += pm_audit_count(a, PM_VERDICT_CONTEXT) + pm_audit_count(a, PM_VERDICT_UNKNOWN);
	return bad ? EXIT_RUNTIME : EXIT_OK;
}

int cmd_audit(struct pm_ctx *ctx, int argc, char **argv)
{
	struct pm_audit *a = pm_audit_new(ctx);
	struct opts o = { 0 };
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
	out = out_new_fit("audit", columns, NCOLS, DEFAULT_COLS, TERM_COLS, &o.out);
	if (!out)
		goto out;
	code = EXIT_RUNTIME;
	r = pm_audit_run(a, 0);
	if (r == -EBADMSG && pm_ctx_tree_error(ctx)) {
		cli_error(0, "%s", pm_ctx_tree_error(ctx));
		goto out;
	}
	if (r < 0 || (r = print_findings(out, a, o.each)) < 0) {
		cli_error(-r, "cannot audit");
		goto out;
	}
	if (out_print(out) < 0)
		goto out;
	code = verdict_code(a, o.strict);
	if (code != EXIT_OK && out_term_view(out))	/* the terminal's columns leave the fixes out */
		cli_hint("what would close each finding: pagemap audit -o NAME,VERDICT,FIX");
out:
	out_free(out);
	pm_audit_free(a);
	return code;
}
