/* cmd_cache.c - `pagemap cache`: what is in the page cache, per file, and who maps it or holds it
 * open. Options and the run here; what is measured: cache_targets.c; the views: cache_view.c. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "output.h"
#include "cache.h"

static const struct out_col columns[] = {
	[COL_PID] = { "PID", 6, SCOLS_FL_RIGHT, OUT_NUM, "process ID" },
	[COL_COMMAND] = { "COMMAND", 0.1, SCOLS_FL_TRUNC, OUT_STR, "command name (comm)" },
	[COL_CACHED] = { "CACHED", 5, SCOLS_FL_RIGHT, OUT_SIZE, "bytes of the file in the page cache" },
	[COL_DIRTY] = { "DIRTY", 5, SCOLS_FL_RIGHT, OUT_SIZE, "of those, dirty" },
	[COL_WRITEBACK] = { "WRITEBACK", 5, SCOLS_FL_RIGHT, OUT_SIZE, "of those, under writeback" },
	[COL_EVICTED] = { "EVICTED", 5, SCOLS_FL_RIGHT, OUT_SIZE, "bytes evicted (shmem: swapped out)" },
	[COL_RECENT] = { "RECENT", 5, SCOLS_FL_RIGHT, OUT_SIZE, "of those, evicted recently (would refault)" },
	[COL_SIZE] = { "SIZE", 5, SCOLS_FL_RIGHT, OUT_SIZE, "file size" },
	[COL_MAPPED] = { "MAPPED", 5, SCOLS_FL_RIGHT, OUT_SIZE, "present bytes of the file mapped by the process" },
	[COL_MAPONLY] = { "MAPONLY", 5, SCOLS_FL_RIGHT, OUT_SIZE, "of those, mapped by no other process" },
	[COL_PROCS] = { "PROCS", 3, SCOLS_FL_RIGHT, OUT_NUM, "processes examined that map the file or hold it open" },
	[COL_SHARED] = { "SHARED", 3, SCOLS_FL_RIGHT, OUT_NUM, "other processes examined that map it or hold it open" },
	[COL_FILES] = { "FILES", 3, SCOLS_FL_RIGHT, OUT_NUM, "files the process maps or holds open" },
	[COL_VIA] = { "VIA", 4, 0, OUT_STR, "map (mapped), fd (held open), arg (named)" },
	[COL_METHOD] = { "METHOD", 5, 0, OUT_STR, "cachestat, mincore (cached only) or unknown" },
	[COL_DEV] = { "DEV", 5, 0, OUT_STR, "device major:minor" },
	[COL_INODE] = { "INODE", 5, SCOLS_FL_RIGHT, OUT_NUM, "inode" },
	[COL_MEMCG] = { "MEMCG", 0.1, 0, OUT_STR, "the process's memory cgroup (root: kpagecgroup)" },
	[COL_OWNCG] = { "OWNCG", 5, SCOLS_FL_RIGHT, OUT_SIZE, "of MAPPED, bytes charged to the process's memory cgroup" },
	[COL_OTHERCG] = { "OTHERCG", 5, SCOLS_FL_RIGHT, OUT_SIZE, "of MAPPED, bytes charged to another memory cgroup" },
	[COL_PAYER] = { "PAYER", 0.1, 0, OUT_STR, "the other memory cgroup charged for most of OTHERCG" },
	[COL_PATH] = { "PATH", 0.3, SCOLS_FL_NOEXTREMES | SCOLS_FL_TRUNC, OUT_STR, "file name (first seen)" },
};
#define NCOLS (sizeof(columns) / sizeof(columns[0]))

/* Why files show "-": one stderr line per reason, with a hint for the known ones. */
static void note_unknown(const struct pm_cache *c)
{
	static const int reasons[] = { EPERM, ENOSYS, EOPNOTSUPP, EACCES, ENOENT };
	size_t i, j, n, other = 0;

	for (j = 0; j < (sizeof(reasons) / sizeof(reasons[0])); j++) {
		for (i = n = 0; i < pm_cache_nfiles(c); i++)
			n += pm_cache_file_at(c, i)->stat.error == -reasons[j];
		if (!n)
			continue;
		cli_error(reasons[j], "note: %zu file%s not measured", n, n == 1 ? "" : "s");
		if (reasons[j] == EPERM)
			cli_hint("cachestat(2) needs write permission on the file, its ownership or root since Linux 6.14 (and its stable backports); mincore(2) would claim every page resident, so nothing is shown");
		else if (reasons[j] == ENOSYS)
			cli_hint("this kernel has no cachestat(2) (Linux 6.5); mincore(2) is used only for files this user owns or may write");
		else if (reasons[j] == EOPNOTSUPP)
			cli_hint("hugetlbfs files have no page cache to report, and a replayed tree holds none");
	}
	for (i = 0; i < pm_cache_nfiles(c); i++) {
		int e = -pm_cache_file_at(c, i)->stat.error;
		for (j = 0; e && j < (sizeof(reasons) / sizeof(reasons[0])) && e != reasons[j]; j++)
			;
		other += e && j == (sizeof(reasons) / sizeof(reasons[0]));
	}
	if (other)
		cli_error(0, "note: %zu more file%s not measured (other errors)", other, other == 1 ? "" : "s");
}

static int usage_help(void)
{
	printf("Usage: pagemap cache [options] FILE|DIR...\n"
	       "       pagemap cache [options] -p PID [-p PID]... | --all [--top N]\n\n"
	       "What is in the page cache, file by file (cachestat(2); nothing is read,\n"
	       "mapped or advised, so the cache is not perturbed), and which processes map\n"
	       "each file or hold it open through a descriptor. A directory is walked\n"
	       "(symbolic links not followed). Files are counted once per device and inode.\n"
	       "A dash (null in JSON) means the count could not be measured: stderr says why.\n"
	       "\nViews:\n"
	       "  (default)         one row per file, then their total (files, cached bytes,\n"
	       "                    size; not in JSON); with -p, one row per (process, file)\n"
	       "      --files       one row per file (the default with --all)\n"
	       "      --pairs       one row per (process, file)\n"
	       "      --processes   one row per process: files, cached, mapped bytes\n"
	       "\nSelection:\n"
	       "  -p, --pid PID     the files of process PID (repeatable)\n"
	       "  -A, --all         every process; the file view ends with [unattributed]:\n"
	       "                    meminfo Cached minus every file found\n"
	       "  -t, --top N       the N rows with most cached bytes ([N other files] sums the rest)\n"
	       "\nDefault columns on a terminal, to fit its width (the path cut): files CACHED\n"
	       "DIRTY EVICTED SIZE PATH (with -p or --all CACHED DIRTY SIZE PROCS PATH), pairs\n"
	       "PID COMMAND CACHED MAPPED VIA PATH; piped, with -r or -J also WRITEBACK, RECENT\n"
	       "(with -p or --all EVICTED, VIA; pairs MAPONLY, SHARED). -o and --output-all\n"
	       "choose the same everywhere.\n");
	out_help_with(stdout, columns, NCOLS, OUT_HELP_TOTAL);
	return EXIT_OK;
}

enum { OPT_FILES = 0x2000, OPT_PAIRS, OPT_PROCS };

static int parse_opts(struct cache_opts *co, int argc, char **argv)
{
	static const struct option longopts[] = {
		OUT_LONGOPTS, OUT_TOTAL_LONGOPT,
		{ "pid", required_argument, NULL, 'p' },
		{ "all", no_argument, NULL, 'A' },
		{ "top", required_argument, NULL, 't' },
		{ "files", no_argument, NULL, OPT_FILES },
		{ "pairs", no_argument, NULL, OPT_PAIRS },
		{ "processes", no_argument, NULL, OPT_PROCS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	pid_t *np;
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, OUT_SHORTOPTS "p:At:h", longopts, NULL)) != -1) {
		if (out_parse_opt(&co->o, c, optarg))
			continue;
		switch (c) {
		case 'p':
			np = realloc(co->pids, (co->npids + 1) * sizeof(*np));
			if (!np)
				return cli_usage_error("out of memory");
			co->pids = np;
			if (cli_parse_pid(optarg, &co->pids[co->npids]) < 0)
				return cli_usage_error("invalid PID '%s'", optarg);
			if (co->pids[co->npids] == 0)	/* "self": found in ROOT/proc by number */
				co->pids[co->npids] = getpid();
			co->npids++;
			break;
		case 'A':
			co->all = true;
			break;
		case 't':
			errno = 0;
			co->top = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || !co->top || optarg[0] == '-')
				return cli_usage_error("invalid --top '%s' (a count of rows, at least 1)", optarg);
			break;
		case OPT_FILES:
		case OPT_PAIRS:
		case OPT_PROCS:
			co->view = c == OPT_FILES ? VIEW_FILES : c == OPT_PAIRS ? VIEW_PAIRS : VIEW_PROCS;
			co->view_set = true;
			break;
		case 'h':
			return usage_help() == EXIT_OK ? -1 : EXIT_USAGE;
		default:
			return cli_bad_option(argv);
		}
	}
	if (co->all && co->npids)
		return cli_usage_error("--all and --pid exclude each other");
	if (optind == argc && !co->all && !co->npids)
		return cli_usage_error("no file, --pid or --all given");
	if (optind < argc && (co->all || co->npids))
		return cli_usage_error("files and --pid/--all exclude each other");
	if (!co->view_set)
		co->view = co->npids ? VIEW_PAIRS : VIEW_FILES;
	if (co->view != VIEW_FILES && !co->all && !co->npids)
		return cli_usage_error("--pairs and --processes need --pid or --all");
	return EXIT_OK;
}

static const char *default_cols(const struct cache_opts *co)
{
	if (co->view == VIEW_PROCS)
		return "PID,COMMAND,FILES,CACHED,MAPPED,MAPONLY";
	if (co->view == VIEW_PAIRS)
		return "PID,COMMAND,CACHED,MAPPED,MAPONLY,SHARED,VIA,PATH";
	if (co->all || co->npids)
		return "CACHED,DIRTY,WRITEBACK,EVICTED,RECENT,SIZE,PROCS,VIA,PATH";
	return "CACHED,DIRTY,WRITEBACK,EVICTED,RECENT,SIZE,PATH";
}

/* On a terminal, what fits 80 columns (vmtouch's question first: how much of how big), the path cut to the rest. */
static const char *term_cols(const struct cache_opts *co)
{
	if (co->view == VIEW_PROCS)
		return "PID,COMMAND,FILES,CACHED,MAPPED,MAPONLY";
	if (co->view == VIEW_PAIRS)
		return "PID,COMMAND,CACHED,MAPPED,VIA,PATH";
	if (co->all || co->npids)
		return "CACHED,DIRTY,SIZE,PROCS,PATH";
	return "CACHED,DIRTY,EVICTED,SIZE,PATH";
}

static int collect(struct pm_ctx *ctx, const struct cache_opts *co, struct cache_run *cr, int argc, char **argv)
{
	int i;

	if (co->all || co->npids) {
		int code = cache_add_procs(ctx, co, cr);
		cache_sum_procs(cr);
		return code;
	}
	for (i = optind; i < argc; i++)
		if (cache_add_arg(cr, argv[i]) < 0)
			return EXIT_RUNTIME;
	return cr->bad_args ? EXIT_RUNTIME : EXIT_OK;
}

int cmd_cache(struct pm_ctx *ctx, int argc, char **argv)
{
	struct cache_opts co = { 0 };
	struct cache_run cr = { 0 };
	struct out *out = NULL;
	struct pm_kpage *kp = NULL;
	int code = parse_opts(&co, argc, argv), shown;

	if (code != EXIT_OK)
		goto out;
	out = out_new_fit("cache", columns, NCOLS, default_cols(&co), term_cols(&co), &co.o);
	cr.c = pm_cache_new(ctx);
	if (!out || !cr.c) {
		code = out ? EXIT_RUNTIME : EXIT_USAGE;
		goto out;
	}
	if (out_has(out, COL_MEMCG) || out_has(out, COL_OWNCG) || out_has(out, COL_OTHERCG) || out_has(out, COL_PAYER)) {
		kp = pm_kpage_open(ctx);
		if (!kp || pm_cache_set_kpage(cr.c, kp) < 0) {
			cli_error(kp ? EACCES : errno, "note: cannot read /proc/kpagecgroup: who pays is shown as \"-\"");
			cli_hint("run as root");
		}
	}
	code = collect(ctx, &co, &cr, argc, argv);
	if (code != EXIT_OK && !pm_cache_nfiles(cr.c) && !cr.nprocs)
		goto out;
	note_unknown(cr.c);
	shown = co.view == VIEW_FILES ? cache_files_view(ctx, &co, &cr, out) :
		co.view == VIEW_PAIRS ? cache_pairs_view(&co, &cr, out) :
		cache_procs_view(&co, &cr, out);
	if (shown != EXIT_OK)
		code = shown;
	if (out_print(out) < 0)
		code = EXIT_RUNTIME;
out:
	if (code == -1)
		code = EXIT_OK;	/* --help */
	pm_cache_free(cr.c);
	pm_kpage_close(kp);
	free(cr.procs);
	free(co.pids);
	out_free(out);
	return code;
}
