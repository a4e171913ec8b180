/* cmd_track.c - `pagemap track`: the pages a process writes, per interval, per mapping (a thin layer over pm_watch). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "output.h"
#include "track.h"

#define DEFAULT_MAX_OVERHEAD 10.0	/* percent */

volatile sig_atomic_t track_stop_signal;

static void on_stop(int sig)
{
	track_stop_signal = sig;
}

/* The help's text around the methods, which the library describes (pm_watch_method_details). */
static const char help_head[] =
	"Usage: pagemap track [options] PID [INTERVAL [COUNT]]\n"
	"       pagemap track [options] [INTERVAL] -- COMMAND [ARG...]\n"
	"\nThe pages a process writes, per interval (default 1 second), per mapping and in total.\n"
	"Every writable mapping is watched, and mappings that appear later from the interval they\n"
	"appear in (their pages with content count as written then). When the process exits, a\n"
	"last record says so, with its real length (\"partial\"): a COMMAND is held at its exit\n"
	"(ptrace, PTRACE_O_TRACEEXIT: its signals wait for track meanwhile) and that interval is\n"
	"collected there; a PID track did not start, or fork-snapshot, cannot be held (its memory\n"
	"goes as it exits): that record says \"not collected\" and why.\n"
	"\nHow the target is disturbed, by method (stated on stderr when tracking starts):\n";

static const char help_cost[] =
	"\nWhat it costs the target (an estimate, printed every interval): each page written in an\n"
	"interval took one tracking fault, priced by a measurement at start (first writes to 1024\n"
	"protected pages against plain writes, in a throwaway child; stated on stderr), against\n"
	"the target's CPU time (at least a tenth of a CPU); plus the time of the collect's scans\n"
	"against the interval. Beside it, track's own collect: its wall time and track's CPU for\n"
	"it (a share of one CPU over the interval), work done for the target, not in the estimate.\n"
	"Measured here (Linux 6.18, paravirtualized guest): 15-30 us per fault by uffd with the\n"
	"host busy, 1.0-1.3 us on a quiet day. At 25 us a process writing 26,000 different pages\n"
	"per second (10 % of 1 GiB) loses about 65 % of a CPU at a 1 s interval and all of it at\n"
	"0.1 s (at 1 us, 2.6 % and 26 %); rewriting a page within an interval costs nothing more.\n"
	"With --max-overhead (default 10 %) the next interval is widened in proportion when the\n"
	"estimate passes it (never narrower than asked); it stays while the estimate is within\n"
	"the budget, and narrows back when it falls under a quarter of it (the target went\n"
	"quiet); the record says which, with the estimate. An interval that ran past its plan\n"
	"says so and why (a collect over a tenth of it: the process gets 90 % of an interval\n"
	"after a collect). Such a writer then reached 4-6 s intervals in 3-4 collects and, in\n"
	"the steady state, kept 0.90-0.93 of its untracked write rate (0.88-1.04 over all rows\n"
	"measured: pagemap-track(1), bench/README.md).\n"
	"\nOptions:\n";

static const char help_options[] =
	"      --ranges         list the written address ranges, not the mappings\n"
	"      --no-thp         count per 4 KiB in huge pages too, splitting those written\n"
	"                       (uffd); without it tracking leaves them whole\n"
	"      --no-hold        do not trace COMMAND to hold it at its exit: its last interval goes\n"
	"                       uncollected (for a program that minds a tracer: LeakSanitizer,\n"
	"                       or one that runs a setuid program, which runs unprivileged traced)\n"
	"      --max-overhead PERCENT\n"
	"                       keep the estimated cost to the process under PERCENT of its\n"
	"                       time (default 10; 0: never widen) by widening the interval\n"
	"  -J, --json           one JSON object per interval, one per line\n"
	"  -b, --bytes          sizes in bytes\n"
	"  -n, --noheadings     no table headings, and no total row\n"
	"      --total          the total row also with -n\n"
	"  -h, --help           this help\n"
	"\nOn a terminal the table's default columns are START PERMS PAGES WRITTEN HUGE\n"
	"PATH (the path cut to its width), and headings and notes are broken to its\n"
	"width; piped, with -r or -J: START END PERMS PAGES WRITTEN HUGE PATH, and each\n"
	"heading is one line.\n"
	"\nJSON: {\"t\":SECONDS,\"interval\":SECONDS,\"method\":\"uffd\",\"written\":BYTES,\"pages\":N,\n"
	"       \"asked\":SECONDS,\"planned\":SECONDS,\"widened\":BOOL,\"stretched\":BOOL,\n"
	"       \"partial\":BOOL,\"collected\":BOOL,\"why_not\":WORDS,\"faults\":N,\"fault_us\":US,\n"
	"       \"overhead\":PERCENT,\"collect_ms\":MS,\"collect_cpu_ms\":MS,\"track_cpu\":PERCENT,\n"
	"       \"max_hold_ms\":MS,\"next_interval\":SECONDS,\n"
	"       \"maps\":[{\"start\":\"0x..\",\"end\":\"0x..\",\"path\":\"..\",\"pages\":N,\"written\":BYTES,\n"
	"                \"huge\":BYTES},...]}   (path null without a file or name; -o picks the keys)\n"
	"      (with --ranges, \"ranges\":[{\"start\":..,\"end\":..,\"huge\":false},...] instead of \"maps\").\n"
	"      interval: measured, from the previous collect's start; planned: asked, or widened by\n"
	"      --max-overhead; stretched: it ran more than 5 % and 10 ms past its plan; partial: the\n"
	"      last, cut short by the process's end; collected false: why_not says why, and written,\n"
	"      pages and the cost keys are null; collect_cpu_ms: track's CPU for the interval's\n"
	"      listing and collect; track_cpu: that, in percent of one CPU over the interval.\n"
	"\nExit status: 0 when tracking ended (COUNT reached, the process exited, or SIGINT/SIGTERM),\n"
	"1 when tracking could not start or failed, 2 for a usage error. With -- COMMAND, as time(1):\n"
	"COMMAND's exit status (128+N if signal N ended it; SIGINT, SIGTERM and SIGHUP are passed\n"
	"on to it), 127 if it was not found, 126 if it could not be run.\n";

/* The methods track offers: every back end that watches another process (not only the caller). */
static bool offered(enum pm_watch_method m)
{
	return !(pm_watch_method_flags(m) & PM_WATCH_METHOD_CALLER_ONLY);
}

/* The offered back ends as words ("uffd, soft-dirty or fork-snapshot"), in the library's order. */
static const char *offered_list(void)
{
	static char buf[256];
	size_t i, k = 0, n = 0, len = 0;

	for (i = 0; i < pm_watch_method_count(); i++)
		n += offered(pm_watch_method_at(i));
	for (i = 0; i < pm_watch_method_count() && len < sizeof(buf); i++) {
		enum pm_watch_method m = pm_watch_method_at(i);
		const char *sep;

		if (!offered(m))
			continue;
		sep = !k ? "" : k + 1 == n ? " or " : ", ";
		k++;
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", sep,
					pm_watch_method_name(m));
	}
	return buf;
}

/* A method's name in the first 14 columns (on a line of its own when longer), its lines beside. */
static void help_method(enum pm_watch_method m)
{
	const char *name = pm_watch_method_name(m), *d = pm_watch_method_details(m), *nl;

	if (strlen(name) > 10)
		printf("  %s\n%14s", name, "");
	else
		printf("  %-10s  ", name);
	for (; (nl = strchr(d, '\n')); d = nl + 1)
		printf("%.*s\n%14s", (int)(nl - d), d, "");
	printf("%s\n", d);
}

static int usage_help(void)
{
	size_t i;

	fputs(help_head, stdout);
	for (i = 0; i < pm_watch_method_count(); i++)
		if (offered(pm_watch_method_at(i)))
			help_method(pm_watch_method_at(i));
	fputs(help_cost, stdout);
	printf("  -m, --method NAME    auto (default), %s\n", offered_list());
	fputs(help_options, stdout);
	return EXIT_OK;
}

/* -m NAME: a back end the library names, if it watches another process ("auto" too). */
static int parse_method(const char *s, enum pm_watch_method *m)
{
	int r = pm_watch_method_from_name(s);

	if (r < 0 || !offered((enum pm_watch_method)r))
		return -EINVAL;
	*m = (enum pm_watch_method)r;
	return 0;
}

static int parse_interval(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0.01) || v > 86400 * 365)
		return -EINVAL;
	*out = v;
	return 0;
}

/* --max-overhead PERCENT, as a share; 0 turns widening off. */
static int parse_percent(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0) || v > 100)
		return -EINVAL;
	*out = v / 100;
	return 0;
}

/* ---- watched mappings ---- */

/* Watch every writable mapping not yet watched (the library keeps what is watched). */
static int watch_writable(struct track *tr, unsigned flags)
{
	struct pm_watch_batch b;
	int err = pm_watch_add_writable(tr->w, flags, &b);

	if (err == 0 && b.failed && !tr->skipped)
		cli_error(b.error, "track: cannot watch %#" PRIx64 "-%#" PRIx64 "; such mappings are left out",
			  b.failed_start, b.failed_end);
	tr->skipped += (unsigned)b.failed;
	/* What the mappings just watched change in the cost or the sight of a collect (huge pages left whole). */
	if (pm_watch_notice(tr->w) && !tr->noticed) {
		fprintf(stderr, "pagemap: track: %s\n", pm_watch_notice(tr->w));
		tr->noticed = true;
	}
	return err;
}

/* ---- the loop ---- */

/* CPU time of track itself (all its threads), seconds. */
static double own_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Collect, print, and set sp->next: the interval to wait now (widened past the asked one by --max-overhead).
 * A command held at its exit is collected without a reset: nothing is armed again in memory about to go.
 */
static int one_interval(struct track *tr, struct span *sp)
{
	const struct pm_written *r;
	double cpu0 = own_cpu();
	size_t n;
	int err;

	/* Mappings that appeared during the interval: watched from now, their content counted as written now. */
	err = watch_writable(tr, PM_WATCH_POPULATED);
	if (err == 0)
		err = pm_watch_collect(tr->w, tr->at_exit ? 0 : PM_WATCH_RESET, &r, &n);
	tr->collect_cpu = own_cpu() - cpu0;
	if (err < 0)
		return err;
	sp->partial = tr->at_exit;
	sp->next = pm_watch_next_interval(tr->w, sp->asked, tr->max_overhead);
	return track_print(tr, sp, r, n);
}

/* Price one tracking fault here (once per watch: a process that exec'd is measured again, quietly). */
static void calibrate(struct track *tr, bool quiet)
{
	int err = pm_watch_calibrate(tr->w, &tr->fault_cost);
	char then[128];

	if (quiet)
		return;
	if (err < 0) {
		cli_error(-err, "track: cannot measure what a tracking fault costs here; faults are counted, not priced");
		return;
	}
	if (tr->max_overhead > 0)
		snprintf(then, sizeof(then), "the interval widens when the estimated cost passes %g%% of its time "
			 "(--max-overhead)", 100 * tr->max_overhead);
	else
		snprintf(then, sizeof(then), "the interval stays as asked whatever the cost (--max-overhead 0)");
	cli_note("track: one tracking fault costs it about %.1f us here (measured now: first writes to 1024 protected "
		 "pages against plain writes, in a throwaway child); %s", 1e6 * tr->fault_cost, then);
}

static int start_watch(struct track *tr, enum pm_watch_method method, unsigned flags, bool quiet);

/*
 * The target has no memory: it exited, or it exec'd (a shell script, an
 * interpreter's shim). In the second case watch the new program, whose
 * populated pages count as written.
 */
static int restart_after_exec(struct track *tr)
{
	enum pm_watch_method m;
	unsigned flags = tr->flags;
	struct pm_target *probe;
	bool held;
	int code;

	/* A restart that failed (the process was exiting, not exec'ing) left no watch: it is gone. */
	if (!tr->w || pm_proc_state(tr->ctx, tr->pid) != PM_PROC_RUNNING)
		return -ESRCH;
	/* An exiting process is still running for a moment after its memory went: exec'd only with memory. */
	if (!(probe = pm_target_open(tr->ctx, tr->pid)))
		return -ESRCH;
	pm_target_close(probe);
	m = pm_watch_method(tr->w);
	cli_note("track: process %d exec'd: watching its new program", (int)tr->pid);
	held = tr->held;
	track_hold_release(tr);	/* the new watch may stop it by ptrace: one tracer */
	pm_watch_free(tr->w);
	pm_target_close(tr->t);
	tr->w = NULL;
	tr->t = NULL;
	code = start_watch(tr, m, flags, true);
	if (code != EXIT_OK)
		return -ECANCELED;	/* its new program cannot be watched: start_watch said why */
	if (held)
		track_hold_start(tr);
	return watch_writable(tr, PM_WATCH_POPULATED);
}

/* The process ended during the interval @sp and its memory went uncollected: a record that says so. */
static int print_lost(struct track *tr, struct span *sp)
{
	sp->partial = true;
	sp->lost = tr->unheld ? tr->unheld : "the process exited before this interval's collect";
	tr->collect_cpu = 0;
	return track_print(tr, sp, NULL, 0);
}

/* The interval that starts now: how long the last one ran, and what it was to be. */
static void begin_span(struct track *tr, struct span *sp, double now, double t0, double last)
{
	struct pm_watch_cost c;

	sp->t = now - t0;
	sp->interval = now - last;
	sp->planned = sp->next;
	sp->widened = sp->planned > sp->asked + 1e-9;
	sp->partial = false;
	sp->lost = NULL;
	tr->prev_collect = tr->w && pm_watch_cost(tr->w, &c) == 0 ? c.scan_time : 0;
}

/*
 * Every interval as asked, or wider when --max-overhead says so. When the
 * next collect is due is pm_watch_next_wait's: never before the process has
 * had 90 % of the next interval since this one ended (a slow collect does
 * not eat into the next interval, it stretches this one: the record says
 * so). A command is held at its exit, and its last interval collected there.
 */
static int track_loop(struct track *tr, double asked, unsigned long count)
{
	double t0 = track_now(), last = t0, due = t0 + asked;
	struct span sp = { .asked = asked, .next = asked };
	unsigned long i;
	int err = 0, tries;

	/* Held and priced now, the target armed and tracked meanwhile: a short-lived command is not missed for it. */
	track_hold_start(tr);
	calibrate(tr, false);
	if (!getenv("PAGEMAP_TRACK_SLICES"))	/* the slices forced: tests cover both */
		tr->pidfd = track_open_pidfd(tr->pid);
	for (i = 1; !count || i <= count; i++) {
		double now;

		track_sleep_until(tr, due);
		if (track_stop_signal)
			break;
		now = track_now();
		begin_span(tr, &sp, now, t0, last);
		err = one_interval(tr, &sp);
		for (tries = 0; err == -ESRCH && !tr->at_exit && tries < 10; tries++)
			if ((err = restart_after_exec(tr)) == 0)
				err = one_interval(tr, &sp);
		if (err == -ESRCH && print_lost(tr, &sp) < 0)
			err = -EIO;
		last = now;
		if (tr->at_exit)	/* collected at its exit: it may go on */
			err = -ESRCH;
		if (err < 0)
			break;
		due = track_now() + pm_watch_next_wait(tr->w, sp.next);
	}
	track_hold_release(tr);
	if (tr->pidfd >= 0)
		close(tr->pidfd);
	tr->pidfd = -1;
	if (err == -ESRCH) {
		cli_note("track: process %d exited", (int)tr->pid);
		return EXIT_OK;
	}
	if (err == -ECANCELED)	/* no watch of its new program: nothing more to record */
		return EXIT_RUNTIME;
	if (err < 0) {
		cli_error(-err, "track: process %d", (int)tr->pid);
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

/* Why the userfaultfd (or snapshot) could not be made inside the target, for the errors ptrace gives. */
static void start_hint(int err)
{
	switch (err) {
	case EBUSY:
		cli_hint("it is traced already (a debugger, strace): a process has one tracer");
		break;
	case EAGAIN:
		cli_hint("it stays in uninterruptible sleep (a vfork parent waiting for its child, stuck I/O): "
			 "ptrace cannot stop it");
		break;
	case EPERM:
		cli_hint(geteuid() ? "ptrace refused: another user's process, or a seccomp filter only root may suspend"
				   : "ptrace refused: a security module (LSM) or a restricted ptrace scope");
		break;
	case ENOEXEC:
		cli_hint("no rt_sigreturn trampoline in its code to run injected calls from");
		break;
	}
}

static int start_watch(struct track *tr, enum pm_watch_method method, unsigned flags, bool quiet)
{
	char why[512], arg[32];

	snprintf(arg, sizeof(arg), "%d", (int)tr->pid);
	tr->t = cli_open_target(tr->ctx, tr->pid, arg);
	if (!tr->t)
		return EXIT_RUNTIME;
	tr->w = pm_watch_new(tr->ctx, tr->pid, method, flags);
	if (!tr->w) {
		int err = errno;

		if (err == EOPNOTSUPP && pm_watch_explain(tr->ctx, tr->pid, method, why, sizeof(why)) < 0)
			cli_error(0, "track: cannot track process %d here: %s", (int)tr->pid, why);
		else
			cli_error(err, "track: cannot track process %d", (int)tr->pid);
		start_hint(err);
		return EXIT_RUNTIME;
	}
	if (!quiet)
		cli_note("track: process %d by %s (%s); this perturbs it: %s", (int)tr->pid,
			 pm_watch_method_name(pm_watch_method(tr->w)), pm_watch_reason(tr->w),
			 pm_watch_method_perturbs(pm_watch_method(tr->w)));
	if (quiet)	/* after an exec; the first start calibrates once the target is armed (track_loop) */
		calibrate(tr, true);
	return EXIT_OK;
}

/* What the command line asks for, apart from the output options (in struct track). */
struct track_args {
	enum pm_watch_method method;
	unsigned flags;			/* PM_WATCH_NOTHP */
	unsigned long count;		/* intervals; 0: until the process exits or a signal */
	double interval;
	char **cmd;			/* after "--", or NULL */
	int dd;				/* argv index of "--" (argc without one) */
};

/* The options before "--"; returns -1 to go on, or an exit code. */
static int parse_options(struct track *tr, struct track_args *a, int argc, char **argv)
{
	enum { OPT_RANGES = 0x2000, OPT_NOTHP, OPT_MAXOVER, OPT_NOHOLD };
	static const struct option longopts[] = {
		{ "method", required_argument, NULL, 'm' }, { "ranges", no_argument, NULL, OPT_RANGES },
		{ "no-thp", no_argument, NULL, OPT_NOTHP }, { "help", no_argument, NULL, 'h' },
		{ "max-overhead", required_argument, NULL, OPT_MAXOVER }, { "no-hold", no_argument, NULL, OPT_NOHOLD },
		OUT_LONGOPTS, OUT_TOTAL_LONGOPT, { NULL, 0, NULL, 0 },
	};
	int c;

	/* "--" separates our arguments from a command's: find it before getopt consumes it. */
	for (a->dd = 1; a->dd < argc && strcmp(argv[a->dd], "--"); a->dd++)
		;
	if (a->dd < argc) {
		a->cmd = argv + a->dd + 1;
		tr->command = true;
	}
	opterr = 0;
	optind = 0;
	/* GNU permutation, as the other subcommands, but only among the arguments before "--". */
	while ((c = getopt_long(a->dd, argv, "m:h" OUT_SHORTOPTS, longopts, NULL)) != -1) {
		if (out_parse_opt(&tr->oo, c, optarg))
			continue;
		if (c == 'm' && parse_method(optarg, &a->method) < 0)
			return cli_usage_error("unknown method '%s' (auto, %s)", optarg,
					       offered_list());
		else if (c == OPT_RANGES)
			tr->ranges = true;
		else if (c == OPT_NOTHP)
			a->flags |= PM_WATCH_NOTHP;
		else if (c == OPT_NOHOLD)
			tr->no_hold = true;
		else if (c == OPT_MAXOVER && parse_percent(optarg, &tr->max_overhead) < 0)
			return cli_usage_error("invalid --max-overhead '%s' (a percentage, 0 to 100)", optarg);
		else if (c == 'h')
			return usage_help();
		else if (c != 'm' && c != OPT_MAXOVER)
			return cli_bad_option(argv);
	}
	return -1;
}

/* PID [INTERVAL [COUNT]], or [INTERVAL] before "--"; returns -1 to go on, or an exit code. */
static int parse_operands(struct track *tr, struct track_args *a, char **argv)
{
	int nargs = a->dd - optind;
	char **v = argv + optind, *end;

	if (tr->command) {
		if (!*a->cmd)
			return cli_usage_error("no command after --");
		if (nargs > 1)
			return cli_usage_error("too many arguments before --");
		if (nargs == 1 && parse_interval(v[0], &a->interval) < 0)
			return cli_usage_error("invalid interval '%s' (seconds, at least 0.01)", v[0]);
		return -1;
	}
	if (nargs < 1)
		return cli_usage_error("no PID given");
	if (nargs > 3)
		return cli_usage_error("too many arguments");
	if (cli_parse_pid(v[0], &tr->pid) < 0 || tr->pid == 0)
		return cli_usage_error("invalid PID '%s' (track watches another process)", v[0]);
	if (nargs >= 2 && parse_interval(v[1], &a->interval) < 0)
		return cli_usage_error("invalid interval '%s' (seconds, at least 0.01)", v[1]);
	if (nargs == 3) {
		errno = 0;
		a->count = strtoul(v[2], &end, 10);
		if (errno || end == v[2] || *end || a->count == 0 || v[2][0] == '-')
			return cli_usage_error("invalid count '%s'", v[2]);
	}
	return -1;
}

/* Start watching (spawning the command first); EXIT_OK with tr->w set, or an exit code; *@ended: it already exited. */
static int start(struct track *tr, const struct track_args *a, bool *ended)
{
	int code, err = 0, st;

	if (tr->command && (tr->pid = track_spawn(a->cmd, &st)) < 0)
		return st == ENOENT ? 127 : st ? 126 : EXIT_RUNTIME;	/* exec failed: as time(1) and the shell */
	tr->flags = a->flags;
	code = start_watch(tr, a->method, a->flags, false);
	/* The command ran unwatched until now: what it populated counts as written in the first interval. */
	if (code == EXIT_OK && (err = watch_writable(tr, tr->command ? PM_WATCH_POPULATED : 0)) == -ESRCH)
		err = restart_after_exec(tr);
	if (code == EXIT_OK && err < 0)
		code = EXIT_RUNTIME;
	if (code != EXIT_OK && tr->command && track_command_ended(tr->pid)) {
		/* A command that ended before it was watched: not a failure, its status is the answer. */
		cli_note("track: process %d exited", (int)tr->pid);
		*ended = true;
		return EXIT_OK;
	}
	if (err < 0)
		cli_error(-err, "track: cannot watch process %d", (int)tr->pid);
	return code;
}

/* Stop tracking; with -- COMMAND, its status as time(1) gives it (128 + N if signal N ended it; ours wins). */
static int finish(struct track *tr, int code)
{
	struct pm_watch_cost c;

	if (tr->w && pm_watch_cost(tr->w, &c) == 0)
		cli_note("track: the longest single scan held process %d's page tables %.1f ms", (int)tr->pid,
			 1e3 * c.max_hold_ever);
	track_hold_release(tr);	/* before a command is stopped and reaped: traced, it would wait for us */
	pm_watch_free(tr->w);	/* unregisters and closes: the target is left as found */
	pm_target_close(tr->t);
	out_free(tr->out);
	if (tr->sigfd >= 0)
		close(tr->sigfd);
	if (!tr->command || tr->pid <= 0)
		return code;
	return track_reap(tr, code);
}

int cmd_track(struct pm_ctx *ctx, int argc, char **argv)
{
	struct track tr = { .ctx = ctx, .max_overhead = DEFAULT_MAX_OVERHEAD / 100, .pidfd = -1,
			   .sigfd = -1 };
	struct track_args a = { .method = PM_WATCH_AUTO, .interval = 1.0 };
	struct sigaction sa;
	bool ended = false;
	int code = parse_options(&tr, &a, argc, argv);

	if (code < 0)
		code = parse_operands(&tr, &a, argv);
	if (code >= 0)
		return code;
	/* Every option is checked before the target is touched. */
	if (!(tr.out = track_new_table(&tr)))
		return EXIT_USAGE;
	if (!pm_ctx_features(ctx)) {
		cli_error(errno, "track: cannot probe the kernel");
		out_free(tr.out);
		return EXIT_RUNTIME;
	}
	tr.psize = pm_ctx_features(ctx)->page_size;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	code = start(&tr, &a, &ended);
	if (code == EXIT_OK && !ended)
		code = track_loop(&tr, a.interval, a.count);
	return finish(&tr, code);
}
