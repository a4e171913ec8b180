/* cli.h - what the pagemap subcommands share: the command table's shape, messages, exit codes. */
#ifndef PM_CLI_H
#define PM_CLI_H

#include <pagemap.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Exit codes: pagemap(1)'s EXIT STATUS has the table, per command. 1 is also an answer where a
 * command is a test (as diff(1)'s): diff found a difference, audit found an exposure; diff's failures
 * are then 2, as diff(1)'s trouble is.
 */
#define EXIT_OK		0
#define EXIT_RUNTIME	1
#define EXIT_USAGE	2
#define EXIT_DIFFERENT	1	/* diff: the two views differ */
#define EXIT_TROUBLE	2	/* diff: could not compare (as diff(1)), so that 1 means "different" alone */
#define EXIT_EXPOSED	1	/* audit: at least one finding is exposed */
#define EXIT_BADINPUT	3	/* render: a snapshot or recording that cannot be read or parsed */

#define PAGEMAP_VERSION "0.1.0"

extern const char *cli_cmd;	/* the running subcommand, for "Try 'pagemap CMD --help'" */

/* "pagemap: MESSAGE[: strerror(err)]" on stderr. */
void cli_error(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A notice, not an error: "pagemap: MESSAGE" on stderr, through the same terminal rendering as cli_error(). */
void cli_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A hint line under an error or a notice: "pagemap: hint: ...". */
void cli_hint(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The width of the terminal @fd is, or 0 where it is none (a pipe, a file: lines stay whole there). */
unsigned cli_term_width(int fd);
/*
 * @text to @f with each of its lines broken at spaces into lines of at most @width columns (a word
 * wider than that cut), the continuation lines starting with @indent; @width 0: @text as it is.
 */
void cli_fputs_wrapped(FILE *f, const char *text, unsigned width, const char *indent);
/*
 * Write @len bytes to @path ("-" or NULL: standard output) by pm_outfile_write() with @flags (PM_OUTFILE_*);
 * 0, or -1 after the message (cli_outfile_error()).
 */
int cli_write_output(const char *path, const void *buf, size_t len, unsigned flags);
/* "pagemap: cannot WHAT PATH: reason", and a hint when pm_outfile refused what is at the path. */
void cli_outfile_error(int err, const char *what, const char *path);
/* A usage error: one line, then "Try 'pagemap CMD --help'". Returns EXIT_USAGE. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "pagemap VERSION" on stdout; returns EXIT_OK. */
int cli_version(void);
/*
 * The usage error for the option getopt just refused (opterr is 0); but
 * "--version", which no subcommand lists, prints the version (EXIT_OK).
 */
int cli_bad_option(char **argv);

/*
 * getopt_long through @real, except that a word that reads as a negative number ("-1", "-0.5") in an
 * operand's place is an operand (no command has a digit for an option): the command's own check
 * then names it ("invalid interval '-1'"). Operands keep the order given. Every command's getopt_long
 * comes here (the link wraps it, cli/output/complete.c).
 */
struct option;
typedef int (*cli_getopt_fn)(int, char *const *, const char *, const struct option *, int *);
int cli_getopt_numbers(int argc, char *const *argv, const char *shortopts, const struct option *longopts,
		       int *index, cli_getopt_fn real);

/* Parse a PID argument ("self" = 0). Returns 0 or -EINVAL. */
int cli_parse_pid(const char *s, pid_t *pid);
/*
 * The one -p PID,... list: each PID as cli_parse_pid takes it ("self" = 0 only where @self), appended
 * to the malloc'd @*pids of @*n. Returns 0, or an exit code after one line: EXIT_USAGE naming the first
 * that is no PID ("invalid PID 'x'": an empty one too), EXIT_RUNTIME out of memory.
 */
int cli_parse_pid_list(const char *list, bool self, pid_t **pids, size_t *n);
/* Read small file @path (a /proc or cgroup file) into @buf of @size, NUL-terminated: its length, or -errno. */
ssize_t cli_read_small(const char *path, char *buf, size_t size);
/* The fields of the live /proc/PID/stat (pm_proc_stat_parse); state 0 when the process is gone. */
struct pm_proc_stat cli_proc_stat(pid_t pid);
/* Parse "0xSTART-0xEND" or one address (its page of @page bytes). Returns 0 or -EINVAL. */
int cli_parse_range(const char *s, uint64_t page, uint64_t *start, uint64_t *end);
/* Open a target and explain a failure on stderr. Returns NULL after the message. */
/* --root DIR and --snapshot FILE as given (NULL when not), set by main before a command runs. */
extern const char *cli_root, *cli_snapshot;
/*
 * A context for them, as the command's own: a command that needs a second
 * one (serve's exact tier, in a thread) makes it here. A snapshot's replay
 * reads its word files from the snapshot, not from the extracted tree, so a
 * plain pm_ctx_new(pm_ctx_root(ctx)) would see them empty. NULL after a
 * one-line message.
 */
struct pm_ctx *cli_ctx_new(void);
/* The group of a process whose user or cgroup could not be read, in ps --group-by, export and top -g. */
#define CLI_UNKNOWN_GROUP "unknown"
/*
 * What a USER cell and a group of users show: the name of user @uid as the processes' machine knew it
 * (live, this machine's passwd, from a cache kept for the run, one thread's: serve's threads do not call
 * it; a replayed snapshot, its META users; a --root tree, none), else the UID's number (a UID with no name
 * is its own user, never merged with another nameless one). Always @buf.
 */
const char *cli_user_label(struct pm_ctx *ctx, uid_t uid, char *buf, size_t size);
/*
 * The UID of user @name, the other way: a replayed snapshot's META users first (the capture's names, which
 * this machine may give other UIDs), else this machine's passwd. -ENOENT when neither names it.
 */
int cli_user_uid(const char *name, uid_t *uid);
/* A -u USER argument: a name (as cli_user_uid finds it) or a UID in decimal. 0 or -EINVAL. */
int cli_parse_user(const char *arg, uid_t *uid);
/*
 * Does @ctx read the live system? Asked without pm_ctx_root() of a replayed
 * snapshot, which makes its tree of names for a caller that may look in it.
 */
bool cli_live(struct pm_ctx *ctx);
struct pm_target *cli_open_target(struct pm_ctx *ctx, pid_t pid, const char *arg);
/*
 * Why process @arg (@pid) cannot be read, after pm_target_open() failed with @err: the library's
 * words (pm_target_explain: gone, a kernel thread, a zombie, refused) and its hint, on stderr.
 * Every command names a process it cannot read this way, alone or one of several.
 */
void cli_explain_target(struct pm_ctx *ctx, pid_t pid, const char *arg, int err);
/* Explain an error that came from walking @arg's memory. */
void cli_walk_error(struct pm_ctx *ctx, int err, const char *arg);
/* One stderr line when PFNs are hidden from this reader. */
void cli_note_hidden(struct pm_ctx *ctx, const struct pm_target *t);

/* page-types' raw-mode pseudo bits (1 << PM_KPF_*) for a page's PM_PAGE_* flags: file, swap, mmap_exclusive, softdirty. */
uint64_t cli_kpf_entry_bits(uint32_t pmflags);

/* A diff's changes (pm_diff_bytes categories) in `pagemap diff`'s column order, for --pages and render --diff. */
enum diff_change { DC_APPEARED, DC_FREED, DC_SWAPOUT, DC_SWAPIN, DC_WRITTEN, DC_NEW_FRAME, DC_THP_FORMED,
		   DC_THP_SPLIT, DC_UFFD_WP, DC_N };
/* The first change of @b holding bytes (DC_N: none): the one a picture colours. */
enum diff_change diff_change_first(const struct pm_diff_bytes *b);
/* @b's changes holding bytes as "written,thp_formed" into @buf of @size (96 holds them all); returns @buf. */
const char *diff_change_words(const struct pm_diff_bytes *b, char *buf, size_t size);

/* Subcommands: int cmd_NAME(struct pm_ctx *ctx, int argc, char **argv) returning an exit code. */
int cmd_audit(struct pm_ctx *ctx, int argc, char **argv);
int cmd_diff(struct pm_ctx *ctx, int argc, char **argv);
int cmd_export(struct pm_ctx *ctx, int argc, char **argv);
int cmd_cache(struct pm_ctx *ctx, int argc, char **argv);
int cmd_features(struct pm_ctx *ctx, int argc, char **argv);
int cmd_maps(struct pm_ctx *ctx, int argc, char **argv);
int cmd_pages(struct pm_ctx *ctx, int argc, char **argv);
int cmd_render(struct pm_ctx *ctx, int argc, char **argv);
int cmd_phys(struct pm_ctx *ctx, int argc, char **argv);
int cmd_ps(struct pm_ctx *ctx, int argc, char **argv);
int cmd_top(struct pm_ctx *ctx, int argc, char **argv);
int cmd_serve(struct pm_ctx *ctx, int argc, char **argv);
int cmd_shared(struct pm_ctx *ctx, int argc, char **argv);
int cmd_snapshot(struct pm_ctx *ctx, int argc, char **argv);
int cmd_v2p(struct pm_ctx *ctx, int argc, char **argv);
int cmd_track(struct pm_ctx *ctx, int argc, char **argv);
int cmd_wss(struct pm_ctx *ctx, int argc, char **argv);
int cmd_numa(struct pm_ctx *ctx, int argc, char **argv);

#endif
