/* test_audit.c - `pagemap audit` on the running kernel: as root (with the uid-65534 child), as uid 65534 itself, and the CLI's exit status. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <pagemap.h>
#include "../harness.h"

#define NOBODY 65534

/* The first finding named @name (and @subject, if not NULL) after the iterator's position. */
static const struct pm_finding *find(struct pm_audit *a, const char *name, const char *subject)
{
	const struct pm_finding *f;

	while (pm_audit_next(a, &f) == 0)
		if (!strcmp(f->name, name) && (!subject || !strcmp(f->subject, subject)))
			return f;
	return NULL;
}

/* What the kernel version says of frame numbers for unprivileged readers: 2.6.25-3.x shown, else not. */
static enum pm_verdict pfn_expected(const struct pm_features *feat)
{
	return feat->kernel_major && feat->kernel_major < 4 ? PM_VERDICT_EXPOSED : PM_VERDICT_OK;
}

/* One audit of the live system: the pfn row's verdict, or -1. Checks what every audit must say. */
static int audit_once(unsigned flags, const char *who_wanted)
{
	struct pm_ctx *ctx = pm_ctx_new(NULL);
	struct pm_audit *a = ctx ? pm_audit_new(ctx) : NULL;
	const struct pm_features *feat = ctx ? pm_ctx_features(ctx) : NULL;
	const struct pm_finding *f;
	unsigned n = 0, by[4] = { 0 };
	int v = -1;

	CHECK(a && feat);
	if (!a || !feat)
		goto out;
	CHECK_EQ_U64(pm_audit_run(a, flags), 0);
	f = find(a, "pfn-unprivileged", NULL);
	CHECK(f != NULL);
	if (f) {
		v = (int)f->verdict;
		CHECK_EQ_U64(f->verdict, pfn_expected(feat));
		if (who_wanted && !strstr(f->evidence, who_wanted)) {
			printf("  evidence \"%s\" does not name \"%s\"\n", f->evidence, who_wanted);
			t_failed_checks++;
		}
		if (!who_wanted)
			CHECK(!strstr(f->evidence, "by effect"));
	}
	/* Every check ran once, in order; the counts add up. */
	CHECK(find(a, "kpageflags", "/proc/kpageflags") != NULL);
	CHECK((f = find(a, "cap-sys-admin", "processes")) != NULL && f->verdict != PM_VERDICT_UNKNOWN);
	/* Huge pages and KSM are context, never an exposure by themselves (whatever this host's settings). */
	CHECK((f = find(a, "thp", NULL)) != NULL && f->verdict != PM_VERDICT_EXPOSED);
	CHECK((f = find(a, "hugetlb", NULL)) != NULL && f->verdict != PM_VERDICT_EXPOSED);
	CHECK((f = find(a, "exclusive-bit", NULL)) != NULL && f->verdict != PM_VERDICT_EXPOSED);
	CHECK_EQ_U64(pm_audit_next(a, &f), 1);
	pm_audit_free(a);
	a = pm_audit_new(ctx);
	CHECK(a && pm_audit_run(a, flags | PM_AUDIT_NO_CHILD) == 0);
	while (a && pm_audit_next(a, &f) == 0) {
		n++;
		CHECK((unsigned)f->verdict < 4);
		by[f->verdict & 3]++;
	}
	CHECK(n > 8);
	if (a)
		CHECK_EQ_U64(by[0] + by[1] + by[2] + by[3],
			     pm_audit_count(a, PM_VERDICT_OK) + pm_audit_count(a, PM_VERDICT_EXPOSED) +
				     pm_audit_count(a, PM_VERDICT_UNKNOWN) + pm_audit_count(a, PM_VERDICT_CONTEXT));
out:
	pm_audit_free(a);
	pm_ctx_free(ctx);
	return v;
}

/* Is this process holding CAP_SYS_ADMIN (bit 21 of CapEff)? */
static bool have_sys_admin(void)
{
	char buf[4096], *p;
	FILE *fp = fopen("/proc/self/status", "r");
	size_t n = fp ? fread(buf, 1, sizeof(buf) - 1, fp) : 0;

	if (fp)
		fclose(fp);
	buf[n] = '\0';
	p = strstr(buf, "\nCapEff:");
	return p && (strtoull(p + 8, NULL, 16) & (1ULL << 21));
}

/* As root: the uid-65534 child reads its own entry; the version rule and the effect agree here. */
static int root_child(void)
{
	struct pm_ctx *ctx;
	struct pm_audit *a;
	const struct pm_finding *f;
	char subject[64];

	if (geteuid() != 0 || !have_sys_admin())
		return t_skip("needs root with CAP_SYS_ADMIN (the unprivileged view is unpriv_self)");
	audit_once(0, "a child dropped to uid 65534 without capabilities read a present page of its own");
	audit_once(PM_AUDIT_NO_CHILD, NULL);
	/* This process holds CAP_SYS_ADMIN as root: listed, ok. */
	ctx = pm_ctx_new(NULL);
	a = ctx ? pm_audit_new(ctx) : NULL;
	CHECK(a && pm_audit_run(a, PM_AUDIT_NO_CHILD) == 0);
	snprintf(subject, sizeof(subject), "pid %d (test_audit)", (int)getpid());
	f = a ? find(a, "cap-sys-admin", subject) : NULL;
	CHECK(f != NULL);
	if (f) {
		CHECK_EQ_U64(f->pid, getpid());
		CHECK(f->uid_known && f->uid == 0);
		CHECK_EQ_U64(f->verdict, PM_VERDICT_OK);
		CHECK_STR(f->comm, "test_audit");
	}
	pm_audit_free(a);
	pm_ctx_free(ctx);
	return T_PASS;
}

/* The checks of an unprivileged process: its own view decides; it still lists this test (root) as a holder. */
static void unpriv_checks(pid_t holder)
{
	struct pm_ctx *ctx;
	struct pm_audit *a;
	const struct pm_finding *f;
	char subject[64];

	audit_once(0, "this process (no CAP_SYS_ADMIN) read a present page of its own");
	if (holder <= 0)
		return;
	ctx = pm_ctx_new(NULL);
	a = ctx ? pm_audit_new(ctx) : NULL;
	CHECK(a && pm_audit_run(a, 0) == 0);
	/* status and uid_map are world-readable: root's holders are seen without privilege. */
	snprintf(subject, sizeof(subject), "pid %d (test_audit)", (int)holder);
	f = a ? find(a, "cap-sys-admin", subject) : NULL;
	CHECK(f && f->uid_known && f->uid == 0 && f->verdict == PM_VERDICT_OK);
	pm_audit_free(a);
	pm_ctx_free(ctx);
}

/* As uid 65534: directly when run so (tests/live/unpriv.sh style), or in a child that drops to it. */
static int unpriv_self(void)
{
	pid_t parent = getpid(), pid;
	int status;

	if (geteuid() != 0) {
		if (have_sys_admin())
			return t_skip("runs without root only when CAP_SYS_ADMIN is not held");
		unpriv_checks(0);
		return T_PASS;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) || setresuid(NOBODY, NOBODY, NOBODY)) {
			printf("  cannot become uid %d: %s\n", NOBODY, strerror(errno));
			_exit(1);
		}
		/* Changing credentials made us undumpable: our /proc/self would be root's. A login is not. */
		prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
		unpriv_checks(have_sys_admin() ? 0 : parent);
		fflush(stdout);
		_exit(t_failed_checks ? 1 : 0);
	}
	CHECK(pid > 0);
	while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	CHECK(pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return T_PASS;
}

/* The CLI: exit 1 iff a row is exposed, 0 otherwise; -J is one object. */
static int cli_status(void)
{
	const char *build = getenv("PAGEMAP_BUILD");
	char cmd[4096], line[4096];
	char verdict[16], name[32], subject[512];
	unsigned exposed = 0, others = 0, rows = 0, holders = ~0u, count;
	FILE *p;
	int st;

	if (!build)
		return t_skip("PAGEMAP_BUILD is not set (run through make check)");
	snprintf(cmd, sizeof(cmd), "'%s/pagemap' audit -n -r -o VERDICT,NAME,SUBJECT,COUNT,EVIDENCE", build);
	p = popen(cmd, "r");
	if (!p)
		return t_skip("cannot run %s", cmd);
	while (fgets(line, sizeof(line), p)) {
		exposed += !strncmp(line, "exposed ", 8);
		others += !strncmp(line, "context ", 8) || !strncmp(line, "unknown ", 8);
		/* The process rows, folded or not, add up to the summary's count of holders (raw: "\x20" in cells). */
		if (sscanf(line, "%15s %31s %511s %u", verdict, name, subject, &count) != 4 || strcmp(name, "cap-sys-admin"))
			continue;
		if (!strcmp(subject, "processes"))
			holders = (unsigned)strtoul(strrchr(line, ' ') + 1, NULL, 10);
		else
			rows += count;
	}
	st = pclose(p);
	CHECK(WIFEXITED(st));
	CHECK_EQ_U64(WEXITSTATUS(st), exposed ? 1 : 0);
	CHECK_EQ_U64(rows, holders);
	snprintf(cmd, sizeof(cmd), "'%s/pagemap' audit --strict >/dev/null 2>&1", build);
	st = system(cmd);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == (exposed || others ? 1 : 0));
	snprintf(cmd, sizeof(cmd), "'%s/pagemap' audit -J >/dev/null 2>&1", build);
	st = system(cmd);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == (exposed ? 1 : 0));
	snprintf(cmd, sizeof(cmd), "'%s/pagemap' audit extra >/dev/null 2>&1", build);
	st = system(cmd);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 2);
	return T_PASS;
}

/* Root that may not change UIDs: the child cannot drop, which is said, never taken for the kernel's EPERM. */
static int root_no_setuid(void)
{
	const char *build = getenv("PAGEMAP_BUILD");
	char cmd[4096], line[1024];
	bool said = false;
	FILE *p;

	if (geteuid() != 0 || !have_sys_admin())
		return t_skip("needs root with CAP_SYS_ADMIN");
	if (!build || system("command -v setpriv >/dev/null 2>&1") != 0)
		return t_skip("needs PAGEMAP_BUILD (make check) and setpriv (util-linux)");
	if (system("setpriv --bounding-set=-setuid,-setgid true >/dev/null 2>&1") != 0)
		return t_skip("this setpriv cannot drop CAP_SETUID from the bounding set (BusyBox's has no --bounding-set)");
	snprintf(cmd, sizeof(cmd), "setpriv --bounding-set=-setuid,-setgid '%s/pagemap' audit -n -o NAME,EVIDENCE",
		 build);
	p = popen(cmd, "r");
	if (!p)
		return t_skip("cannot run %s", cmd);
	while (fgets(line, sizeof(line), p))
		said |= !strncmp(line, "pfn-unprivileged ", 17) && strstr(line, "no child could drop to uid 65534");
	pclose(p);
	CHECK(said);
	return T_PASS;
}

T_MAIN(T(root_child), T(unpriv_self), T(cli_status), T(root_no_setuid))
