/* main.c - the pagemap tool: global options, the command table, exit codes. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "complete.h"

struct command {
	const char *name;
	int (*fn)(struct pm_ctx *ctx, int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "audit", cmd_audit, "rowhammer exposure: who can learn physical addresses or sharing here" },
	{ "diff", cmd_diff, "what changed in each mapping between two snapshots" },
	{ "export", cmd_export, "per-group memory for Prometheus, once: stdout or a textfile directory" },
	{ "cache", cmd_cache, "the page cache per file, and who maps the files or holds them open" },
	{ "features", cmd_features, "what this kernel and privilege level allow" },
	{ "maps", cmd_maps, "one row per mapping: present, swapped, shared, huge pages" },
	{ "numa", cmd_numa, "which NUMA node each mapping's memory is on; the nodes" },
	{ "pages", cmd_pages, "runs of pages with their flags, frames and swap slots" },
	{ "phys", cmd_phys, "physical memory by page flags; a process's pages with their frames" },
	{ "ps", cmd_ps, "one row per process: RSS, PSS, USS, swap and shared bytes" },
	{ "top", cmd_top, "every process's RSS, PSS, USS and swap live, in a terminal or as frames" },
	{ "render", cmd_render, "a picture of an address space (SVG, HTML, ANSI) or a time heat map" },
	{ "serve", cmd_serve, "an HTTP /metrics endpoint for Prometheus (per-group memory, exact PSS)" },
	{ "shared", cmd_shared, "what processes share with each other and the rest, per mapping pair" },
	{ "snapshot", cmd_snapshot, "write processes' page state into one file that every command replays" },
	{ "track", cmd_track, "the pages a process writes, per interval and mapping" },
	{ "v2p", cmd_v2p, "virtual to physical addresses, with the frames' flags and counts" },
	{ "wss", cmd_wss, "working-set size: bytes a process accessed during a window" },
};

static const struct option global_opts[] = {
	{ "root", required_argument, NULL, 'R' },
	{ "snapshot", required_argument, NULL, 'S' },
	{ "backend", required_argument, NULL, 'B' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};
#define GLOBAL_SHORTOPTS "+R:S:hV"

static void usage(FILE *f)
{
	size_t i;

	fputs("Usage: pagemap [--root DIR | --snapshot FILE] [--backend auto|pread|scan] COMMAND [ARGS]\n"
	      "\nInspect Linux /proc/PID/pagemap: where a process's memory is and what it shares.\n"
	      "\nCommands:\n", f);
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fputs("\nOptions:\n"
	      "  -R, --root DIR       read /proc and /sys under DIR (a captured tree)\n"
	      "  -S, --snapshot FILE  replay a file written by 'pagemap snapshot'\n"
	      "      --backend NAME   walker back end: auto (default), pread or scan\n"
	      "  -h, --help           this help\n"
	      "  -V, --version        version\n"
	      "\nExit status: 0 success, 1 runtime failure, 2 usage error.\n"
	      "Run 'pagemap COMMAND --help' for a command's options.\n", f);
}

/* A failure's code: 1, but 2 for diff, whose 1 answers "different" (as diff(1)'s). */
static int failure_code(void)
{
	return cli_cmd && !strcmp(cli_cmd, "diff") ? EXIT_TROUBLE : EXIT_RUNTIME;
}

/* stdout must reach its destination: a failed write is an error (util-linux close_stdout). */
static int close_stdout(int code)
{
	if (fflush(stdout) != 0 || ferror(stdout) || fclose(stdout) != 0) {
		if (errno != EPIPE) {
			cli_error(errno, "write error");
			return failure_code();
		}
	}
	return code;
}

static int parse_backend(const char *s, enum pm_backend *b)
{
	if (!strcmp(s, "auto"))
		*b = PM_BACKEND_AUTO;
	else if (!strcmp(s, "pread"))
		*b = PM_BACKEND_PREAD;
	else if (!strcmp(s, "scan"))
		*b = PM_BACKEND_SCAN;
	else
		return -EINVAL;
	return 0;
}

static int run_command(const struct command *cmd, const char *root, const char *snap, enum pm_backend b, int argc,
		       char **argv)
{
	struct pm_ctx *ctx;
	int code;

	cli_root = root;
	cli_snapshot = snap;
	ctx = cli_ctx_new();
	if (!ctx)
		return failure_code();
	if (b != PM_BACKEND_AUTO)
		pm_ctx_set_backend(ctx, b);
	code = cmd->fn(ctx, argc, argv);
	/* A replayed tree's problem the library went on without (an unreadable stat, features file) still fails. */
	if (code == EXIT_OK && pm_ctx_tree_error(ctx)) {
		cli_error(0, "%s", pm_ctx_tree_error(ctx));
		code = failure_code();
	}
	pm_ctx_free(ctx);
	return code;
}

/*
 * Hidden: the words bash completion offers (completion/pagemap.bash), from
 * the tables above and each command's own. Without CMD: "cmd NAME" per
 * command, the global options, "val --backend NAME" per back end.
 */
static int complete_words(int argc, char **argv)
{
	static const enum pm_backend backends[] = { PM_BACKEND_AUTO, PM_BACKEND_PREAD, PM_BACKEND_SCAN };
	size_t i;

	for (i = 0; argc > 0 && i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[0], commands[i].name))
			return complete_command(commands[i].fn, commands[i].name);
	if (argc > 0)
		return EXIT_USAGE;
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		printf("cmd %s\n", commands[i].name);
	complete_options(stdout, GLOBAL_SHORTOPTS, global_opts);
	for (i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
		printf("val --backend %s\n", pm_backend_name(backends[i]));
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	enum pm_backend backend = PM_BACKEND_AUTO;
	const char *root = NULL, *snap = NULL;
	size_t i;
	int c;

	if (argc > 1 && !strcmp(argv[1], "--complete-words"))
		return close_stdout(complete_words(argc - 2, argv + 2));
	opterr = 0;	/* our own one-line messages */
	while ((c = getopt_long(argc, argv, GLOBAL_SHORTOPTS, global_opts, NULL)) != -1) {
		switch (c) {
		case 'R':
			if (!*optarg)
				return cli_usage_error("empty --root: give a directory (/ for the live system)");
			root = optarg;
			break;
		case 'S':
			if (!*optarg)
				return cli_usage_error("empty --snapshot: give a file written by 'pagemap snapshot'");
			snap = optarg;
			break;
		case 'B':
			if (parse_backend(optarg, &backend) < 0)
				return cli_usage_error("unknown back end '%s' (auto, pread or scan)", optarg);
			break;
		case 'h':
			usage(stdout);
			return close_stdout(EXIT_OK);
		case 'V':
			return close_stdout(cli_version());
		default:
			return cli_bad_option(argv);
		}
	}
	if (optind >= argc)
		return cli_usage_error("no command given");
	if (root && snap)
		return cli_usage_error("--root and --snapshot exclude each other");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (!strcmp(argv[optind], commands[i].name)) {
			cli_cmd = commands[i].name;
			optind++;
			return close_stdout(run_command(&commands[i], root, snap, backend, argc - optind + 1,
							argv + optind - 1));
		}
	}
	return cli_usage_error("unknown command '%s'", argv[optind]);
}
