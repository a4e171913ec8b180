/* common.c - messages, PID parsing and target opening shared by the subcommands. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "textsafe.h"

const char *cli_cmd;

/*
 * @fmt and @ap to standard error through cli/base/textsafe.c's terminal rendering: messages name paths,
 * processes and cgroups that others chose, and none of their bytes may act on the terminal. On a
 * terminal the message is broken at spaces to its width (continuation lines indented); to a pipe or a
 * log it stays one line.
 */
static void say(const char *prefix, const char *fmt, va_list ap, int err)
{
	char *msg = NULL, *line = NULL;
	size_t len = 0;
	unsigned width = cli_term_width(STDERR_FILENO);
	FILE *m = width ? open_memstream(&line, &len) : NULL;
	FILE *f = m ? m : stderr;

	fputs(prefix, f);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	ts_fputs(TS_TERM, msg ? msg : "(message lost: out of memory)", f);
	free(msg);
	if (err)
		fprintf(f, ": %s", strerror(err));
	if (m && fclose(m) == 0)
		cli_fputs_wrapped(stderr, line, width, "         ");	/* under the text after "pagemap: " */
	free(line);
	fputc('\n', stderr);
}

void cli_error(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("pagemap: ", fmt, ap, err);
	va_end(ap);
}

void cli_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("pagemap: ", fmt, ap, 0);
	va_end(ap);
}

void cli_hint(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("pagemap: hint: ", fmt, ap, 0);
	va_end(ap);
}

int cli_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("pagemap: ", fmt, ap, 0);
	va_end(ap);
	fprintf(stderr, "Try 'pagemap %s%s--help' for more information.\n", cli_cmd ? cli_cmd : "",
		cli_cmd ? " " : "");
	return EXIT_USAGE;
}

ssize_t cli_read_small(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	do
		n = read(fd, buf, size - 1);
	while (n < 0 && errno == EINTR);
	n = n < 0 ? -errno : n;
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

struct pm_proc_stat cli_proc_stat(pid_t pid)
{
	struct pm_proc_stat ps;
	char name[64], text[1024];
	ssize_t n;

	snprintf(name, sizeof(name), "/proc/%d/stat", (int)pid);
	if ((n = cli_read_small(name, text, sizeof(text))) <= 0 ||
	    pm_proc_stat_parse(text, (size_t)n, &ps, NULL, 0) < 0)
		memset(&ps, 0, sizeof(ps));	/* state 0: gone (or not a line the kernel writes) */
	return ps;
}

int cli_version(void)
{
	printf("pagemap %s\n", PAGEMAP_VERSION);
	return EXIT_OK;
}

int cli_bad_option(char **argv)
{
	if (!optopt && optind > 0 && !strcmp(argv[optind - 1], "--version"))
		return cli_version();
	if (optopt && optopt < 0x100)
		return cli_usage_error("invalid option or missing argument -- '%c'", optopt);
	return cli_usage_error("unrecognized option or missing argument '%s'", argv[optind - 1]);
}

int cli_parse_pid(const char *s, pid_t *pid)
{
	char *end;
	long v;

	if (!strcmp(s, "self")) {
		*pid = 0;
		return 0;
	}
	if (s[0] < '0' || s[0] > '9')	/* strict decimal: strtol would take " 1" and "+5" */
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0 || v > 4194304)
		return -EINVAL;
	*pid = (pid_t)v;
	return 0;
}

int cli_parse_pid_list(const char *list, bool self, pid_t **pids, size_t *n)
{
	const char *p = list;
	char tok[16];
	pid_t pid, *v;
	size_t len;

	do {	/* every PID between commas, the first and the last too: "", "1,,2" and "1," name an empty one */
		len = strcspn(p, ",");
		snprintf(tok, sizeof(tok), "%.*s", (int)(len < sizeof(tok) ? len : 0), p);
		if (len >= sizeof(tok) || cli_parse_pid(tok, &pid) < 0 || (!pid && !self))
			return cli_usage_error("invalid PID '%.*s'", (int)len, p);
		if (!(v = realloc(*pids, (*n + 1) * sizeof(*v)))) {
			cli_error(ENOMEM, "cannot keep the PIDs");
			return EXIT_RUNTIME;
		}
		*pids = v;
		(*pids)[(*n)++] = pid;
		p += len;
	} while (*p++ == ',');
	return 0;
}

void cli_explain_target(struct pm_ctx *ctx, pid_t pid, const char *arg, int err)
{
	char msg[PATH_MAX + 256];
	const char *hint;

	if (pm_target_explain(ctx, pid, arg, err, msg, sizeof(msg), &hint) < 0) {
		cli_error(err, "cannot open /proc/%s/pagemap", arg);
		return;
	}
	cli_error(0, "%s", msg);
	if (hint)
		cli_hint("%s", hint);
}

const char *cli_root, *cli_snapshot;
static char *snapshot_users;	/* the replayed snapshot's META users, uid=name,... */

bool cli_live(struct pm_ctx *ctx)
{
	return !cli_snapshot && !strcmp(pm_ctx_root(ctx), "/");
}

/*
 * This machine's name of @uid, cached for the run: getpwuid reads the passwd database every call, which was
 * most of a top frame's system calls on a machine of a few hundred processes, and ps asks once a row. A user
 * renamed while the command runs keeps its old name until the next start, as procps top does. Past the
 * cache's size, every UID still gets its answer, from passwd.
 */
static const char *passwd_name(uid_t uid, char *buf, size_t size)
{
	static struct {
		uid_t uid;
		bool known;
		char name[64];
	} cache[256];
	static size_t used;
	struct passwd *pw;
	size_t i;

	for (i = 0; i < used; i++)
		if (cache[i].uid == uid) {
			if (!cache[i].known)
				return NULL;
			snprintf(buf, size, "%s", cache[i].name);
			return buf;
		}
	if (!(pw = getpwuid(uid)) || strlen(pw->pw_name) >= sizeof(cache[0].name)) {
		if (!pw && used < sizeof(cache) / sizeof(cache[0]))
			cache[used].uid = uid, cache[used++].known = false;
		return pw ? (snprintf(buf, size, "%s", pw->pw_name), buf) : NULL;
	}
	if (used < sizeof(cache) / sizeof(cache[0])) {
		cache[used].uid = uid;
		cache[used].known = true;
		snprintf(cache[used++].name, sizeof(cache[0].name), "%s", pw->pw_name);
	}
	snprintf(buf, size, "%s", pw->pw_name);
	return buf;
}

/* The name of @uid as cli_user_label describes it, or NULL: show the number. */
static const char *user_name(struct pm_ctx *ctx, uid_t uid, char *buf, size_t size)
{
	char key[16];
	const char *s;
	size_t len;

	if (cli_live(ctx))
		return passwd_name(uid, buf, size);
	len = (size_t)snprintf(key, sizeof(key), "%u=", (unsigned)uid);
	for (s = cli_snapshot ? snapshot_users : NULL; s && *s; s += strcspn(s, ","), s += *s == ',') {
		if (strncmp(s, key, len))
			continue;
		snprintf(buf, size, "%.*s", (int)strcspn(s + len, ","), s + len);
		return buf;
	}
	return NULL;	/* a tree replayed by --root came from another machine: its passwd is not ours */
}

const char *cli_user_label(struct pm_ctx *ctx, uid_t uid, char *buf, size_t size)
{
	if (!user_name(ctx, uid, buf, size))
		snprintf(buf, size, "%u", (unsigned)uid);
	return buf;
}

int cli_user_uid(const char *name, uid_t *uid)
{
	struct passwd *pw;
	const char *s, *eq;
	size_t len = strlen(name);

	for (s = cli_snapshot ? snapshot_users : NULL; s && *s; s += strcspn(s, ","), s += *s == ',') {
		eq = s + strcspn(s, "=,");
		if (*eq == '=' && strcspn(eq + 1, ",") == len && !strncmp(eq + 1, name, len)) {
			*uid = (uid_t)strtoul(s, NULL, 10);
			return 0;
		}
	}
	if (!(pw = getpwnam(name)))
		return -ENOENT;
	*uid = pw->pw_uid;
	return 0;
}

int cli_parse_user(const char *arg, uid_t *uid)
{
	char *e;
	unsigned long v;

	if (cli_user_uid(arg, uid) == 0)
		return 0;
	errno = 0;
	v = strtoul(arg, &e, 10);
	if (errno || e == arg || *e || arg[0] < '0' || arg[0] > '9')
		return -EINVAL;
	*uid = (uid_t)v;
	return 0;
}

/* The context of --snapshot FILE: the snapshot checked whole, then replayed as its tree. */
static struct pm_ctx *snapshot_ctx(const char *file)
{
	struct pm_snapshot *s;
	struct pm_ctx *ctx;
	char err[256];

	if (!(s = pm_snapshot_open(file, err, sizeof(err)))) {
		cli_error(0, "cannot read snapshot %s: %s", file, err);
		return NULL;
	}
	if (pm_snapshot_meta(s, "users") && !snapshot_users)
		snapshot_users = strdup(pm_snapshot_meta(s, "users"));
	if (!(ctx = pm_ctx_new_snapshot(s)))
		cli_error(0, "cannot replay snapshot %s: %s", file,
			  errno == EBADMSG && pm_snapshot_error(s) ? pm_snapshot_error(s) : strerror(errno));
	pm_snapshot_close(s);
	return ctx;
}

struct pm_ctx *cli_ctx_new(void)
{
	struct pm_ctx *ctx = cli_snapshot ? snapshot_ctx(cli_snapshot) : pm_ctx_new(cli_root);

	if (!ctx && !cli_snapshot)
		cli_error(errno, "cannot use root %s", cli_root ? cli_root : "/");
	return ctx;
}

struct pm_target *cli_open_target(struct pm_ctx *ctx, pid_t pid, const char *arg)
{
	struct pm_target *t = pm_target_open(ctx, pid);

	if (!t)
		cli_explain_target(ctx, pid, arg, errno);
	return t;
}

void cli_walk_error(struct pm_ctx *ctx, int err, const char *arg)
{
	if (err == EBADMSG && pm_ctx_tree_error(ctx))
		cli_error(0, "%s", pm_ctx_tree_error(ctx));
	else if (err == ESRCH)
		cli_error(0, "process %s exited or called exec during the scan; its memory is gone", arg);
	else if (err == EINVAL)
		cli_error(0, "cannot read the memory of process %s: malformed maps line or invalid range", arg);
	else if (err == EOPNOTSUPP)
		cli_error(0, "cannot scan process %s: PAGEMAP_SCAN needs Linux 6.7+ and a live process (use --backend pread)", arg);
	else
		cli_error(err, "cannot read the memory of process %s", arg);
}

void cli_note_hidden(struct pm_ctx *ctx, const struct pm_target *t)
{
	const struct pm_features *f = pm_ctx_features(ctx);

	if (pm_target_pfn_view(t) == PM_PFN_VISIBLE)
		return;
	if (cli_live(ctx))
		cli_error(0, "note: physical frame numbers are hidden: %s",
			  !pm_kernel_at_least(f, 4, 2) ?
				  "the reader lacks privilege" :
				  "the reader lacks CAP_SYS_ADMIN in the initial user namespace (Linux 4.2+)");
	else
		cli_error(0, "note: physical frame numbers were hidden from the capture");
}

int cli_parse_range(const char *s, uint64_t page, uint64_t *start, uint64_t *end)
{
	char *e;

	if (s[0] < '0' || s[0] > '9')	/* strtoull would take " 1", "+1" and "-1" */
		return -EINVAL;
	errno = 0;
	*start = strtoull(s, &e, 0);
	if (errno || e == s)
		return -EINVAL;
	if (*e == '\0') {	/* one address: its page */
		*start &= ~(page - 1);
		*end = *start > UINT64_MAX - page ? UINT64_MAX : *start + page;
		return 0;
	}
	if (*e != '-')
		return -EINVAL;
	s = e + 1;
	if (s[0] < '0' || s[0] > '9')
		return -EINVAL;
	*end = strtoull(s, &e, 0);
	return errno || e == s || *e || *end <= *start ? -EINVAL : 0;
}

uint64_t cli_kpf_entry_bits(uint32_t pm)
{
	uint64_t f = 0;

	if (pm & PM_PAGE_SOFTDIRTY)
		f |= 1ULL << PM_KPF_SOFTDIRTY;
	if (pm & PM_PAGE_FILE)
		f |= 1ULL << PM_KPF_FILE;
	if (pm & PM_PAGE_SWAPPED)
		f |= 1ULL << PM_KPF_SWAP;
	if (pm & PM_PAGE_EXCLUSIVE)
		f |= 1ULL << PM_KPF_MMAP_EXCLUSIVE;
	return f;
}
