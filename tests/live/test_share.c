/* test_share.c - live pm_share and `pagemap shared`: a child and its forked peer share exactly the memory the test made them share. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <pagemap.h>
#include "../harness.h"
#include "layout.h"

#define SHARE 48	/* COW-shared anonymous pages */
#define BROKEN 8	/* written before the fork, again by the child after it */
#define FRESH 8		/* first written after the fork, by both */
#define MEMFD 24	/* memfd pages: the child maps them once, the peer twice */
#define PRIV 16		/* a private mapping each, written after the fork */
#define NOBODY 65534

static struct layout lay;
static int setup_err = 1;

static void teardown(void)
{
	layout_stop(&lay);
}

static int setup(void)
{
	struct layout_opts o = { .share_pages = SHARE, .share_broken = BROKEN, .share_fresh = FRESH,
				 .share_memfd_pages = MEMFD, .share_private_pages = PRIV };

	if (setup_err <= 0)
		return setup_err;
	atexit(teardown);
	return setup_err = layout_start(&o, &lay);
}

static uint64_t region(enum lay_id r)
{
	return lay.r[r].start;
}

static bool root_view(void)
{
	return geteuid() == 0;
}

/* Does mapping @m of process @pid contain @addr? */
static bool is(const struct pm_share_map *m, pid_t pid, uint64_t addr)
{
	return m && m->pid == pid && m->map.start <= addr && addr < m->map.end;
}

/* The pair of mappings at (@pa, @a) and (@pb, @b), or NULL. */
static const struct pm_share_pair *find_pair(struct pm_share *s, pid_t pa, uint64_t a, pid_t pb, uint64_t b)
{
	const struct pm_share_pair *p, *hit = NULL;

	while (pm_share_next_pair(s, &p) == 0)
		if (!hit && is(p->a, pa, a) && is(p->b, pb, b))
			hit = p;
	return hit;
}

static const struct pm_share_map *find_map(struct pm_share *s, pid_t pid, uint64_t addr)
{
	const struct pm_share_map *m, *hit = NULL;

	while (pm_share_next_map(s, &m) == 0)
		if (!hit && is(m, pid, addr))
			hit = m;
	return hit;
}

/* Pairs touching the mapping at (@pid, @addr). */
static unsigned pairs_with(struct pm_share *s, pid_t pid, uint64_t addr)
{
	const struct pm_share_pair *p;
	unsigned n = 0;

	while (pm_share_next_pair(s, &p) == 0)
		n += is(p->a, pid, addr) || is(p->b, pid, addr);
	return n;
}

#define CHECK_MAP(s, pid, addr, res, sh)                                                         \
	do {                                                                                     \
		const struct pm_share_map *_m = find_map((s), (pid), (addr));                    \
		CHECK(_m != NULL);                                                               \
		if (_m) {                                                                        \
			CHECK_EQ_U64(_m->sum.resident, (uint64_t)(res) * lay.page_size);          \
			CHECK_EQ_U64(_m->sum.shared, (uint64_t)(sh) * lay.page_size);             \
			CHECK_EQ_U64(_m->sum.outside, 0);                                         \
			CHECK_EQ_U64(_m->sum.swap, 0);                                            \
		}                                                                                \
	} while (0)

/* Add the child and the peer to a new set under back end @b and finish it; NULL (and a message) on failure. */
static struct pm_share *share_both(struct pm_ctx *ctx)
{
	struct pm_share *s = pm_share_new(ctx, NULL);
	pid_t pids[2] = { lay.pid, lay.peer };
	int i, r = s ? 0 : -errno;

	for (i = 0; i < 2 && r == 0; i++) {
		struct pm_target *t = pm_target_open(ctx, pids[i]);
		r = t ? pm_share_add(s, t) : -errno;
		pm_target_close(t);
	}
	if (r == 0)
		r = pm_share_finish(s);
	if (r < 0) {
		printf("  share of %d and %d: %s\n", (int)lay.pid, (int)lay.peer, strerror(-r));
		pm_share_free(s);
		return NULL;
	}
	return s;
}

/* Exactly the pages made shared, pair by pair, with either back end; private pages in no pair. */
static int pairs_exact(void)
{
	const enum pm_backend backends[2] = { PM_BACKEND_PREAD, PM_BACKEND_SCAN };
	int r = setup(), b;
	uint64_t ps;

	if (r < 0)
		return t_skip("no layout child: %s", strerror(-r));
	if (!root_view())
		return t_skip("needs root (PFNs and /proc/kpagecount)");
	ps = lay.page_size;
	for (b = 0; b < 2; b++) {
		struct pm_ctx *ctx = pm_ctx_new(NULL);
		const struct pm_share_pair *p;
		struct pm_share_sum u, pu;
		struct pm_share *s;
		uint64_t sum = 0;

		if (b == 1 && !kernel_has_scan()) {
			pm_ctx_free(ctx);
			continue;
		}
		CHECK(ctx != NULL);
		if (!ctx || pm_ctx_set_backend(ctx, backends[b]) < 0 || !(s = share_both(ctx))) {
			t_failed_checks++;
			pm_ctx_free(ctx);
			continue;
		}
		printf("  back end %s\n", pm_backend_name(backends[b]));
		CHECK_EQ_U64(pm_share_ntargets(s), 2);
		p = find_pair(s, lay.pid, region(LR_SHARE), lay.peer, region(LR_SHARE));
		CHECK(p != NULL);
		if (p) {
			CHECK_EQ_U64(p->shared, SHARE * ps);
			CHECK_EQ_U64(p->outside, 0);
			CHECK_EQ_U64(p->swap, 0);
		}
		p = find_pair(s, lay.pid, region(LR_SHARE_MEMFD), lay.peer, region(LR_SHARE_MEMFD));
		CHECK(p != NULL);
		if (p) {
			CHECK_EQ_U64(p->shared, MEMFD * ps);
			CHECK_EQ_U64(p->outside, 0);
		}
		p = find_pair(s, lay.pid, region(LR_SHARE_MEMFD), lay.peer, region(LR_PEER_MEMFD));
		CHECK(p != NULL);
		if (p)
			CHECK_EQ_U64(p->shared, MEMFD * ps);
		CHECK_EQ_U64(pairs_with(s, lay.pid, region(LR_SHARE)), 1);
		CHECK_EQ_U64(pairs_with(s, lay.peer, region(LR_SHARE)), 1);
		CHECK_EQ_U64(pairs_with(s, lay.pid, region(LR_SHARE_MEMFD)), 2);
		CHECK_EQ_U64(pairs_with(s, lay.peer, region(LR_PEER_MEMFD)), 1);
		CHECK_EQ_U64(pairs_with(s, lay.pid, region(LR_SHARE_PRIV)), 0);
		CHECK_EQ_U64(pairs_with(s, lay.peer, region(LR_PEER_PRIV)), 0);
		/* Each side: its own copies of the broken and fresh pages are resident, not shared. */
		CHECK_MAP(s, lay.pid, region(LR_SHARE), SHARE + BROKEN + FRESH, SHARE);
		CHECK_MAP(s, lay.peer, region(LR_SHARE), SHARE + BROKEN + FRESH, SHARE);
		CHECK_MAP(s, lay.pid, region(LR_SHARE_MEMFD), MEMFD, MEMFD);
		CHECK_MAP(s, lay.peer, region(LR_SHARE_MEMFD), MEMFD, MEMFD);
		CHECK_MAP(s, lay.peer, region(LR_PEER_MEMFD), MEMFD, MEMFD);
		CHECK_MAP(s, lay.pid, region(LR_SHARE_PRIV), PRIV, 0);
		CHECK_MAP(s, lay.peer, region(LR_PEER_PRIV), PRIV, 0);
		/* Process level: the memfd counts once although the peer maps it twice. */
		while (pm_share_next_pair(s, &p) == 0)
			sum += p->shared;
		CHECK_EQ_U64(pm_share_sum(s, 0, 1, &pu), 0);
		CHECK(pu.shared >= (SHARE + MEMFD) * ps);
		CHECK(pu.shared <= sum - MEMFD * ps);
		CHECK_EQ_U64(pm_share_sum(s, PM_SHARE_ALL, PM_SHARE_ALL, &u), 0);
		CHECK_EQ_U64(u.shared, pu.shared);	/* two processes: shared by two = shared by both */
		CHECK_EQ_U64(pm_share_sum(s, 1, PM_SHARE_ALL, &u), 0);
		CHECK_EQ_U64(u.shared, pu.shared);
		CHECK(u.resident >= (SHARE + BROKEN + FRESH + MEMFD + PRIV) * ps);
		CHECK_EQ_U64(u.hugetlb, 0);
		if (t_failed_checks)
			printf("  pids %d %d, process pair shared %llu, sum of pairs %llu\n", (int)lay.pid, (int)lay.peer,
			       (unsigned long long)pu.shared, (unsigned long long)sum);
		pm_share_free(s);
		pm_ctx_free(ctx);
	}
	return T_PASS;
}

/* ---- the CLI ---- */

static void cli_path(char *buf, size_t size)
{
	const char *b = getenv("PAGEMAP_BUILD");
	char exe[PATH_MAX - 16];
	ssize_t n;

	if (b && *b) {
		snprintf(buf, size, "%s/pagemap", b);
		return;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);	/* BUILD/tests/live/test_share */
	exe[n > 0 ? n : 0] = '\0';
	for (int i = 0; i < 3; i++) {
		char *sl = strrchr(exe, '/');
		if (sl)
			*sl = '\0';
	}
	snprintf(buf, size, "%s/pagemap", exe);
}

static void drop_to_nobody(void)
{
	if (setgroups(0, NULL) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 || setresuid(NOBODY, NOBODY, NOBODY) < 0)
		_exit(126);
	prctl(PR_SET_DUMPABLE, 1);
}

/* Read all of @fd into @buf (NUL-terminated, truncated to @size - 1). */
static void slurp(int fd, char *buf, size_t size)
{
	size_t n = 0;
	ssize_t r;
	char junk[4096];

	while ((r = read(fd, n + 1 < size ? buf + n : junk, n + 1 < size ? size - 1 - n : sizeof(junk))) > 0 ||
	       (r < 0 && errno == EINTR))
		if (r > 0 && n + 1 < size)
			n += (size_t)r;
	buf[n] = '\0';
}

/* Run `pagemap ARGS...` (as nobody with @drop); its exit status, or -1. */
static int run_cli(char *const *args, bool drop, char *out, size_t outsz, char *err, size_t errsz)
{
	char bin[PATH_MAX], *argv[16];
	int po[2], pe[2], st, i;
	pid_t pid;

	cli_path(bin, sizeof(bin));
	argv[0] = bin;
	for (i = 0; args[i] && i < 14; i++)
		argv[i + 1] = args[i];
	argv[i + 1] = NULL;
	if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0)
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		dup2(po[1], 1);
		dup2(pe[1], 2);
		if (drop)
			drop_to_nobody();
		execv(bin, argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	slurp(po[0], out, outsz);
	slurp(pe[0], err, errsz);
	close(po[0]);
	close(pe[0]);
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The value of "key" in the JSON object [@obj, @end) into @buf ("" if absent, "null" for null). */
static const char *json_field(const char *obj, const char *end, const char *key, char *buf, size_t size)
{
	char pat[64];
	const char *p;
	size_t n = 0;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	buf[0] = '\0';
	for (p = obj; p && p < end; p++) {
		p = strstr(p, pat);
		if (!p || p >= end)
			return buf;
		p += strlen(pat);
		while (*p == ' ')
			p++;
		if (*p == '"')
			for (p++; *p && *p != '"' && n + 1 < size; p++)
				buf[n++] = *p;
		else
			for (; *p && *p != ',' && *p != '\n' && *p != '}' && n + 1 < size; p++)
				buf[n++] = *p;
		buf[n] = '\0';
		return buf;
	}
	return buf;
}

/* The "shared" value of the first row of @kind whose start and peer_start are @a and @b (0: any); -1 if none. */
static long long json_row(const char *doc, const char *kind, uint64_t a, uint64_t b, unsigned *count)
{
	const char *p = doc;
	long long v = -1;
	char want_a[32], want_b[32], f[4096];

	snprintf(want_a, sizeof(want_a), "0x%llx", (unsigned long long)a);
	snprintf(want_b, sizeof(want_b), "0x%llx", (unsigned long long)b);
	if (count)
		*count = 0;
	while ((p = strstr(p, "\"kind\":"))) {
		const char *end = strchr(p, '}');
		if (!end)
			break;
		if (!strcmp(json_field(p, end, "kind", f, sizeof(f)), kind) &&
		    (!a || !strcmp(json_field(p, end, "start", f, sizeof(f)), want_a)) &&
		    (!b || !strcmp(json_field(p, end, "peer_start", f, sizeof(f)), want_b))) {
			if (v < 0)
				v = strtoll(json_field(p, end, "shared", f, sizeof(f)), NULL, 10);
			if (count)
				(*count)++;
		}
		p = end;
	}
	return v;
}

#define OUTSZ (4u << 20)

/* `pagemap shared -J CHILD PEER`: the pair rows carry the exact bytes; private mappings get no row. */
static int cli_json(void)
{
	char a1[16], a2[16], *out = malloc(OUTSZ), err[4096];
	char *args[] = { (char *)"shared", (char *)"-J", a1, a2, NULL };
	unsigned n;
	int rc, r = setup();
	uint64_t ps = lay.page_size;

	if (r < 0 || !out) {
		free(out);
		return r < 0 ? t_skip("no layout child: %s", strerror(-r)) : T_FAIL;
	}
	if (!root_view()) {
		free(out);
		return t_skip("needs root (PFNs and /proc/kpagecount)");
	}
	snprintf(a1, sizeof(a1), "%d", (int)lay.pid);
	snprintf(a2, sizeof(a2), "%d", (int)lay.peer);
	rc = run_cli(args, false, out, OUTSZ, err, sizeof(err));
	CHECK_EQ_U64(rc, 0);
	if (rc != 0)
		printf("  stderr: %s\n", err);
	CHECK(strstr(out, "\"shared\": [") != NULL);
	CHECK_EQ_U64(json_row(out, "pair", region(LR_SHARE), region(LR_SHARE), &n), SHARE * ps);
	CHECK_EQ_U64(n, 1);
	CHECK_EQ_U64(json_row(out, "pair", region(LR_SHARE_MEMFD), region(LR_SHARE_MEMFD), NULL), MEMFD * ps);
	CHECK_EQ_U64(json_row(out, "pair", region(LR_SHARE_MEMFD), region(LR_PEER_MEMFD), NULL), MEMFD * ps);
	CHECK_EQ_U64(json_row(out, "map", region(LR_SHARE), 0, &n), SHARE * ps);
	CHECK_EQ_U64(n, 2);	/* the child's and the peer's */
	json_row(out, "map", region(LR_SHARE_PRIV), 0, &n);
	CHECK_EQ_U64(n, 0);
	json_row(out, "pair", region(LR_SHARE_PRIV), 0, &n);
	CHECK_EQ_U64(n, 0);
	json_row(out, "pids", 0, 0, &n);
	CHECK_EQ_U64(n, 1);
	json_row(out, "process", 0, 0, &n);
	CHECK_EQ_U64(n, 2);
	CHECK(json_row(out, "total", 0, 0, &n) >= (long long)((SHARE + MEMFD) * ps));
	CHECK_EQ_U64(n, 1);
	CHECK_STR(err, "");
	free(out);
	return T_PASS;
}

/* Usage errors exit 2, a missing process 1, each with one line (plus the usage hint). */
static int cli_errors(void)
{
	char out[4096], err[4096];
	char *none[] = { (char *)"shared", (char *)"4194304", NULL };
	char *bad[] = { (char *)"shared", (char *)"12x", NULL };
	char *twice[] = { (char *)"shared", (char *)"1", (char *)"1", NULL };
	char *empty[] = { (char *)"shared", NULL };
	char *opt[] = { (char *)"shared", (char *)"--frobnicate", (char *)"1", NULL };

	CHECK_EQ_U64(run_cli(none, false, out, sizeof(out), err, sizeof(err)), 1);
	CHECK_STR(err, "pagemap: cannot open process 4194304: no such process\n");
	CHECK_STR(out, "");
	CHECK_EQ_U64(run_cli(bad, false, out, sizeof(out), err, sizeof(err)), 2);
	CHECK(strstr(err, "invalid PID '12x'") != NULL);
	CHECK_EQ_U64(run_cli(twice, false, out, sizeof(out), err, sizeof(err)), 2);
	CHECK(strstr(err, "given twice") != NULL);
	CHECK_EQ_U64(run_cli(empty, false, out, sizeof(out), err, sizeof(err)), 2);
	CHECK(strstr(err, "no PID given") != NULL);
	CHECK_EQ_U64(run_cli(opt, false, out, sizeof(out), err, sizeof(err)), 2);
	CHECK(strstr(err, "Try 'pagemap shared --help'") != NULL);
	return T_PASS;
}

/*
 * Without CAP_SYS_ADMIN the frames are hidden: pm_share_add says -EPERM
 * before anything else, and the CLI says so in one line with exit 1. Run
 * as uid 65534 (dropped in a child when the test runs as root).
 */
static int unpriv_hidden(void)
{
	char out[4096], err[4096], res[64] = "";
	char *args[] = { (char *)"shared", (char *)"self", NULL };
	int p[2], st, rc, r;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return T_FAIL;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		struct pm_ctx *ctx;
		struct pm_target *t;
		struct pm_share *s;

		close(p[0]);
		if (geteuid() == 0)
			drop_to_nobody();
		ctx = pm_ctx_new(NULL);
		t = ctx ? pm_target_open(ctx, 0) : NULL;
		s = t ? pm_share_new(ctx, NULL) : NULL;
		r = s ? pm_share_add(s, t) : -errno;
		if (s && r == -EPERM && pm_share_finish(s) == 0 && pm_share_ntargets(s) == 0)
			r = -EPERM * 1000;	/* and the empty set still finishes */
		dprintf(p[1], "%d", r);
		_exit(0);
	}
	close(p[1]);
	slurp(p[0], res, sizeof(res));
	close(p[0]);
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
		return T_FAIL;
	if (WEXITSTATUS(st) == 126)
		return t_skip("cannot become uid %d", NOBODY);
	CHECK_STR(res, "-1000");	/* -EPERM, then the set finished empty */
	rc = run_cli(args, geteuid() == 0, out, sizeof(out), err, sizeof(err));
	if (rc == 127 || rc == 126)
		return t_skip("uid %d cannot run the pagemap binary (exit %d)", NOBODY, rc);
	CHECK_EQ_U64(rc, 1);
	CHECK_STR(err, "pagemap: cannot compare the pages of process self: physical frame numbers are hidden "
		       "(needs CAP_SYS_ADMIN)\n");
	CHECK_STR(out, "");
	return T_PASS;
}

/* A process that is gone when it is walked: -ESRCH, nothing of it kept, the set still usable. Kills the child: last. */
static int exited(void)
{
	struct pm_ctx *ctx;
	struct pm_target *t, *peer;
	struct pm_share *s;
	const struct pm_share_map *m;
	int r = setup();

	if (r < 0)
		return t_skip("no layout child: %s", strerror(-r));
	if (!root_view())
		return t_skip("needs root (PFNs and /proc/kpagecount)");
	CHECK((ctx = pm_ctx_new(NULL)) != NULL);
	if (!ctx)
		return T_FAIL;
	t = pm_target_open(ctx, lay.pid);
	peer = pm_target_open(ctx, lay.peer);
	s = pm_share_new(ctx, NULL);
	CHECK(t && peer && s);
	if (t && peer && s) {
		CHECK_EQ_U64(pm_share_add(s, peer), 0);
		CHECK(pm_share_add(s, peer) == -EEXIST);
		CHECK_EQ_U64(layout_kill_nowait(&lay), 0);
		CHECK(pm_share_add(s, t) == -ESRCH);
		CHECK_EQ_U64(pm_share_ntargets(s), 1);
		CHECK_EQ_U64(pm_share_finish(s), 0);
		CHECK(pm_share_add(s, peer) == -EINVAL);
		while (pm_share_next_map(s, &m) == 0)
			CHECK_EQ_U64(m->pid, lay.peer);
	}
	pm_share_free(s);
	pm_target_close(t);
	pm_target_close(peer);
	pm_ctx_free(ctx);
	return T_PASS;
}

T_MAIN(T(pairs_exact), T(cli_json), T(cli_errors), T(unpriv_hidden), T(exited))
