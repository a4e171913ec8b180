/* test_audit.c - unit tests of the audit's pure parsers (real and hostile input), the snapshot sniffer and replayed audits. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pagemap.h"
#include "audit.h"
#include "../harness.h"
#include "replay.h"

static int parse_mode(void)
{
	static const char *const bad[] = {
		"", "\n", "0400", "0400 0", "0400 0 x", "x 0 0", "-1 0 0", "0400 -1 0", "0400 0 0 7",
		"010000 0 0", "0400 4294967296 0", "0400 0 99999999999999999999", "09 0 0", "0400,0,0",
		"0400 0 0 \n\n x", "99999999999999999999999 0 0",
	};
	unsigned mode = 1;
	uint32_t uid = 1, gid = 1;
	size_t i;

	CHECK_EQ_U64(pmi_audit_parse_mode("0400 0 0\n", &mode, &uid, &gid), 0);
	CHECK_EQ_U64(mode, 0400);
	CHECK_EQ_U64(uid, 0);
	CHECK_EQ_U64(gid, 0);
	CHECK_EQ_U64(pmi_audit_parse_mode("  7777\t4294967295 1000 \n", &mode, &uid, &gid), 0);
	CHECK_EQ_U64(mode, 07777);
	CHECK_EQ_U64(uid, 4294967295u);
	CHECK_EQ_U64(gid, 1000);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		mode = 0123;
		if (pmi_audit_parse_mode(bad[i], &mode, &uid, &gid) != -EINVAL)
			printf("  accepted \"%s\"\n", bad[i]), t_failed_checks++;
		CHECK_EQ_U64(mode, 0123);	/* untouched on error */
	}
	return T_PASS;
}

static const char status_ok[] = "Name:\tcapdaemon\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t1100\n"
				"Uid:\t1000\t1001\t1002\t1003\nGid:\t1000\t1000\t1000\t1000\n"
				"CapInh:\t0000000000000000\nCapPrm:\t0000000000200000\nCapEff:\t0000000000200000\n"
				"CapBnd:\t000001ffffffffff\n";

static int parse_status(void)
{
	static const char *const bad[] = {
		"Uid:\t0\t0\t0\t0\nCapEff:\tzz\n",
		"Uid:\t0\t0\t0\t0\nCapEff:\t\n",
		"Uid:\t0\t0\t0\t0\nCapEff:\t00000000002000000000000000000000\n",	/* 32 digits */
		"Uid:\t0\t0\t0\t0\nCapEff:\t0000000000200000x\n",
		"Uid:\t0\t0\t0\t0\nCapEff:\t-1\n",
		"Uid:\t0\nCapEff:\t0\n",
		"Uid:\t0\t4294967296\t0\t0\nCapEff:\t0\n",
		"Uid:\tx\ty\nCapEff:\t0\n",
		"Uid:\t0\t-5\t0\t0\nCapEff:\t0\n",
	};
	uint64_t caps = 7;
	uint32_t euid = 7;
	size_t i;

	CHECK_EQ_U64(pmi_audit_parse_status(status_ok, &caps, &euid), 0);
	CHECK_EQ_U64(caps, 0x200000);
	CHECK_EQ_U64(euid, 1001);	/* the effective UID: the second field */
	/* Keys only count at the start of a line. */
	CHECK_EQ_U64(pmi_audit_parse_status("Name:\tx Uid: CapEff:\n", &caps, &euid), -ENOENT);
	CHECK_EQ_U64(pmi_audit_parse_status("", &caps, &euid), -ENOENT);
	CHECK_EQ_U64(pmi_audit_parse_status("Uid:\t0\t0\t0\t0\n", &caps, &euid), -ENOENT);
	CHECK_EQ_U64(pmi_audit_parse_status("CapEff:\t0\n", &caps, &euid), -ENOENT);
	CHECK_EQ_U64(pmi_audit_parse_status("Uid:\t0\t0\t0\t0\nCapEff:\tffffffffffffffff", &caps, &euid), 0);
	CHECK_EQ_U64(caps, UINT64_MAX);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		caps = 7;
		if (pmi_audit_parse_status(bad[i], &caps, &euid) != -EINVAL)
			printf("  accepted \"%s\"\n", bad[i]), t_failed_checks++;
		CHECK_EQ_U64(caps, 7);
	}
	return T_PASS;
}

static int namespaces(void)
{
	CHECK(pmi_audit_uid_map_initial("         0          0 4294967295\n"));
	CHECK(pmi_audit_uid_map_initial("0 0 4294967295"));
	CHECK(!pmi_audit_uid_map_initial("         0     100000      65536\n"));
	CHECK(!pmi_audit_uid_map_initial("0 0 4294967294\n"));
	CHECK(!pmi_audit_uid_map_initial("0 0 4294967295\n1 1 1\n"));	/* two lines: not the identity map */
	CHECK(!pmi_audit_uid_map_initial(""));
	CHECK(!pmi_audit_uid_map_initial("0 0"));
	CHECK(!pmi_audit_uid_map_initial("0 0 4294967295 junk"));
	CHECK(pmi_audit_ns_initial("user:[4026531837]"));
	CHECK(!pmi_audit_ns_initial("user:[4026532201]"));
	CHECK(!pmi_audit_ns_initial("user:[4026531837]x"));
	CHECK(!pmi_audit_ns_initial(""));
	return T_PASS;
}

static int parse_thp(void)
{
	CHECK_EQ_U64(pmi_audit_parse_thp("[always] madvise never\n"), PMI_THP_ALWAYS);
	CHECK_EQ_U64(pmi_audit_parse_thp("always [madvise] never\n"), PMI_THP_MADVISE);
	CHECK_EQ_U64(pmi_audit_parse_thp("always madvise [never]"), PMI_THP_NEVER);
	CHECK_EQ_U64(pmi_audit_parse_thp("always inherit madvise [never]"), PMI_THP_NEVER);
	CHECK_EQ_U64(pmi_audit_parse_thp("always [inherit] madvise never"), PMI_THP_UNKNOWN);
	CHECK_EQ_U64(pmi_audit_parse_thp("[always] [never]"), PMI_THP_UNKNOWN);
	CHECK_EQ_U64(pmi_audit_parse_thp("[always"), PMI_THP_UNKNOWN);
	CHECK_EQ_U64(pmi_audit_parse_thp("always] [never"), PMI_THP_UNKNOWN);
	CHECK_EQ_U64(pmi_audit_parse_thp("[]"), PMI_THP_UNKNOWN);
	CHECK_EQ_U64(pmi_audit_parse_thp("[alwaysx]"), PMI_THP_UNKNOWN);
	CHECK_EQ_U64(pmi_audit_parse_thp(""), PMI_THP_UNKNOWN);
	return T_PASS;
}

static int parse_count(void)
{
	static const char *const bad[] = { "", "\n", "-1", "+1", " 1", "1 ", "1x", "0x10", "1\n\n",
					   "18446744073709551616" };
	uint64_t v = 9;
	size_t i;

	CHECK_EQ_U64(pmi_audit_parse_count("512\n", &v), 0);
	CHECK_EQ_U64(v, 512);
	CHECK_EQ_U64(pmi_audit_parse_count("0", &v), 0);
	CHECK_EQ_U64(v, 0);
	CHECK_EQ_U64(pmi_audit_parse_count("18446744073709551615\n", &v), 0);
	CHECK_EQ_U64(v, UINT64_MAX);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 9;
		if (pmi_audit_parse_count(bad[i], &v) != -EINVAL)
			printf("  accepted \"%s\"\n", bad[i]), t_failed_checks++;
		CHECK_EQ_U64(v, 9);
	}
	return T_PASS;
}

static int sniff(void)
{
	CHECK_EQ_U64(pmi_audit_sniff((const unsigned char *)"PMSNAP", 6), PMI_SNAP_UNKNOWN_FORMAT);
	CHECK_EQ_U64(pmi_audit_sniff((const unsigned char *)"PMSNAP\0\0\0\1", 10), PMI_SNAP_UNKNOWN_FORMAT);
	CHECK_EQ_U64(pmi_audit_sniff((const unsigned char *)"\x89PMSNAP\n\0\0\0\1", 12), PMI_SNAP_UNKNOWN_FORMAT);
	CHECK_EQ_U64(pmi_audit_sniff((const unsigned char *)"\x89PMSNAP", 7), PMI_SNAP_NOT);	/* cut short */
	CHECK_EQ_U64(pmi_audit_sniff((const unsigned char *)"PMSNA", 5), PMI_SNAP_NOT);
	CHECK_EQ_U64(pmi_audit_sniff((const unsigned char *)"pmsnap", 6), PMI_SNAP_NOT);
	CHECK_EQ_U64(pmi_audit_sniff((const unsigned char *)" PMSNAP", 7), PMI_SNAP_NOT);
	CHECK_EQ_U64(pmi_audit_sniff((const unsigned char *)"", 0), PMI_SNAP_NOT);
	return T_PASS;
}

/* Files that are not plain: a FIFO is not read (no blocking), a final symlink is not followed. */
static int sniff_path(void)
{
	char *root = rp_new_root(), p[PATH_MAX], q[PATH_MAX];

	if (!root)
		return t_skip("cannot create a temporary directory");
	rp_write_str(root, "snap", "PMSNAP v0");
	rp_write_str(root, "text", "hello");
	rp_write(root, "empty", "", 0);
	snprintf(p, sizeof(p), "%s/snap", root);
	CHECK_EQ_U64(pmi_audit_sniff_path(p), PMI_SNAP_UNKNOWN_FORMAT);
	snprintf(q, sizeof(q), "%s/link", root);
	CHECK(symlink(p, q) == 0);
	CHECK_EQ_U64(pmi_audit_sniff_path(q), -ELOOP);
	snprintf(p, sizeof(p), "%s/text", root);
	CHECK_EQ_U64(pmi_audit_sniff_path(p), PMI_SNAP_NOT);
	snprintf(p, sizeof(p), "%s/empty", root);
	CHECK_EQ_U64(pmi_audit_sniff_path(p), PMI_SNAP_NOT);
	snprintf(p, sizeof(p), "%s/fifo", root);
	CHECK(mkfifo(p, 0600) == 0);
	CHECK_EQ_U64(pmi_audit_sniff_path(p), PMI_SNAP_NOT);
	CHECK_EQ_U64(pmi_audit_sniff_path(root), PMI_SNAP_NOT);	/* a directory */
	snprintf(p, sizeof(p), "%s/missing", root);
	CHECK_EQ_U64(pmi_audit_sniff_path(p), -ENOENT);
	rp_free_root(root);
	return T_PASS;
}

/* A replayed machine on Linux 6.18 read without privilege, nothing else recorded. */
static char *bare_tree(void)
{
	char *root = rp_new_root();

	if (!root)
		return NULL;
	rp_write_str(root, "proc/sys/kernel/osrelease", "6.18.0\n");
	rp_write_str(root, "pagemap-features", "kernel=6.18.0\npage_size=4096\nprivileged=no\nlayout=current\n"
					       "pfn_view=hidden\nzero_pfn=0x0\n");
	rp_mkdirs(root, "proc/x");
	rp_write_str(root, "sys/kernel/mm/page_idle/bitmap.errno", "ENOENT\n");
	rp_write_str(root, "sys/kernel/mm/ksm/run.errno", "ENOENT\n");
	return root;
}

/* Find the first finding named @name (with @subject if not NULL). */
static const struct pm_finding *find(struct pm_audit *a, const char *name, const char *subject)
{
	const struct pm_finding *f;

	while (pm_audit_next(a, &f) == 0)
		if (!strcmp(f->name, name) && (!subject || !strcmp(f->subject, subject)))
			return f;
	return NULL;
}

/* Nothing recorded: every check says unknown or absent, none claims ok from missing evidence. */
static int replay_bare(void)
{
	char *root = bare_tree();
	struct pm_ctx *ctx = root ? pm_ctx_new(root) : NULL;
	struct pm_audit *a = ctx ? pm_audit_new(ctx) : NULL;
	const struct pm_finding *f;

	if (!a)
		return t_skip("cannot build a replayed tree");
	CHECK_EQ_U64(pm_audit_next(a, &f), -EINVAL);	/* not run yet */
	CHECK_EQ_U64(pm_audit_run(a, 0), 0);
	CHECK_EQ_U64(pm_audit_run(a, 0), -EALREADY);
	CHECK_EQ_U64(pm_audit_add_path(a, "/tmp"), -EINVAL);
	f = find(a, "pfn-unprivileged", NULL);
	CHECK(f && f->verdict == PM_VERDICT_OK);
	f = find(a, "kpageflags", NULL);
	CHECK(f && f->verdict == PM_VERDICT_UNKNOWN && strstr(f->evidence, "not recorded"));
	f = find(a, "page-idle", NULL);	/* recorded absent: the kernel has none */
	CHECK(f && f->verdict == PM_VERDICT_OK && strstr(f->evidence, "absent"));
	f = find(a, "cap-sys-admin", "processes");
	CHECK(f && f->verdict == PM_VERDICT_OK && strstr(f->evidence, "0 processes"));
	f = find(a, "thp", NULL);
	CHECK(f && f->verdict == PM_VERDICT_UNKNOWN && strstr(f->evidence, "not recorded"));
	f = find(a, "exclusive-bit", NULL);
	CHECK(f && f->verdict == PM_VERDICT_OK && strstr(f->evidence, "absent"));
	CHECK_EQ_U64(pm_audit_next(a, &f), 1);
	CHECK_EQ_U64(pm_audit_count(a, PM_VERDICT_EXPOSED), 0);
	CHECK_EQ_U64(pm_audit_count(a, (enum pm_verdict)7), 0);
	CHECK_STR(pm_verdict_name(PM_VERDICT_EXPOSED), "exposed");
	CHECK_STR(pm_verdict_name((enum pm_verdict)7), "unknown");
	pm_audit_free(a);
	pm_audit_free(NULL);
	pm_ctx_free(ctx);
	rp_free_root(root);
	return T_PASS;
}

/* Hostile recorded files: a malformed mode is a damaged tree; garbage counts and modes are unknown, not ok. */
static int replay_hostile(void)
{
	char *root = bare_tree(), p[PATH_MAX];
	struct pm_ctx *ctx;
	struct pm_audit *a;
	const struct pm_finding *f;

	if (!root)
		return t_skip("cannot create a temporary directory");
	rp_write_str(root, "proc/kpageflags.mode", "0400 0 0\n");
	rp_write_str(root, "proc/kpagecount.mode", "0444 zero 0\n");
	rp_write_str(root, "sys/kernel/mm/transparent_hugepage/enabled", "[always] [never]\n");
	rp_write_str(root, "sys/kernel/mm/ksm/run", "1x\n");
	snprintf(p, sizeof(p), "%s/sys/kernel/mm/ksm/run.errno", root);
	CHECK(unlink(p) == 0);
	rp_write_str(root, "proc/sys/vm/nr_hugepages", "-3\n");
	rp_write_str(root, "proc/77/status", status_ok);
	rp_write_str(root, "proc/77/uid_map", "0 0 4294967295\n");
	rp_write_stat(root, "proc/77/stat", 'S', 0);
	ctx = pm_ctx_new(root);
	a = ctx ? pm_audit_new(ctx) : NULL;
	if (!a)
		return t_skip("cannot open the replayed tree");
	CHECK_EQ_U64(pm_audit_run(a, 0), -EBADMSG);
	CHECK(pm_ctx_tree_error(ctx) && strstr(pm_ctx_tree_error(ctx), "kpagecount.mode"));
	f = find(a, "kpageflags", NULL);
	CHECK(f && f->verdict == PM_VERDICT_OK);
	f = find(a, "kpagecount", NULL);
	CHECK(f && f->verdict == PM_VERDICT_UNKNOWN);
	f = find(a, "cap-sys-admin", "processes");
	CHECK(f && f->verdict == PM_VERDICT_EXPOSED);
	f = find(a, "cap-sys-admin", NULL);
	CHECK(f && f->pid == 77 && f->uid_known && f->uid == 1001 && f->comm);
	f = find(a, "thp", NULL);
	CHECK(f && f->verdict == PM_VERDICT_UNKNOWN);
	f = find(a, "hugetlb", NULL);
	CHECK(f && f->verdict == PM_VERDICT_UNKNOWN);
	f = find(a, "exclusive-bit", NULL);
	CHECK(f && f->verdict == PM_VERDICT_UNKNOWN);
	pm_audit_free(a);
	pm_ctx_free(ctx);
	rp_free_root(root);
	return T_PASS;
}

/* --snapshots over a directory: sorted, symlinks not followed, an unreadable path counted. */
static int snapshots_dir(void)
{
	char *root = bare_tree(), dir[PATH_MAX / 2], p[PATH_MAX], q[PATH_MAX];
	struct pm_ctx *ctx;
	struct pm_audit *a;
	const struct pm_finding *f;

	if (!root)
		return t_skip("cannot create a temporary directory");
	rp_write_str(root, "snaps/b.pms", "PMSNAP");
	rp_write_str(root, "snaps/a/deep.pms", "\x89PMSNAP\n");
	rp_write_str(root, "snaps/c.txt", "xPMSNAP");
	snprintf(dir, sizeof(dir), "%s/snaps", root);
	snprintf(p, sizeof(p), "%s/b.pms", dir);
	snprintf(q, sizeof(q), "%s/link.pms", dir);
	CHECK(symlink(p, q) == 0);
	snprintf(q, sizeof(q), "%s/loop", dir);
	CHECK(symlink(dir, q) == 0);
	ctx = pm_ctx_new(root);
	a = ctx ? pm_audit_new(ctx) : NULL;
	if (!a)
		return t_skip("cannot open the replayed tree");
	CHECK_EQ_U64(pm_audit_add_path(a, dir), 0);
	snprintf(p, sizeof(p), "%s/none", root);
	CHECK_EQ_U64(pm_audit_add_path(a, p), 0);
	CHECK_EQ_U64(pm_audit_run(a, 0), 0);
	f = find(a, "snapshots", dir);
	CHECK(f && f->verdict == PM_VERDICT_UNKNOWN && strstr(f->evidence, "3 files searched") &&
	      strstr(f->evidence, "2 of an unknown format"));
	CHECK(pm_audit_next(a, &f) == 0 && !strcmp(f->name, "snapshot") && strstr(f->subject, "/a/deep.pms"));
	CHECK(pm_audit_next(a, &f) == 0 && !strcmp(f->name, "snapshot") && strstr(f->subject, "/b.pms"));
	CHECK(pm_audit_next(a, &f) == 0 && !strcmp(f->name, "snapshots") && f->verdict == PM_VERDICT_UNKNOWN &&
	      strstr(f->evidence, "1 could not be read"));
	CHECK_EQ_U64(pm_audit_next(a, &f), 1);
	pm_audit_free(a);
	pm_ctx_free(ctx);
	rp_free_root(root);
	return T_PASS;
}

/*
 * The grading: huge pages and KSM are context (contiguity and sharing, no
 * address), only frame numbers and the frame files reaching users other than
 * root are exposed. An ordinary 6.18 machine (THP madvise, a hugetlb pool,
 * KSM on, every frame file root's) has nothing exposed; one world-readable
 * kpagecount is.
 */
static int grades(void)
{
	static const char *const frame_files[] = { "proc/kpageflags.mode", "proc/kpagecount.mode",
						   "proc/kpagecgroup.mode", "proc/self/pagemap.mode" };
	char *root = bare_tree(), p[PATH_MAX];
	struct pm_ctx *ctx = NULL;
	struct pm_audit *a = NULL;
	const struct pm_finding *f;
	size_t i;
	int pass;

	if (!root)
		return t_skip("cannot create a temporary directory");
	for (i = 0; i < sizeof(frame_files) / sizeof(frame_files[0]); i++)
		rp_write_str(root, frame_files[i], "0400 0 0\n");
	rp_write_str(root, "sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n");
	rp_write_str(root, "proc/sys/vm/nr_hugepages", "512\n");
	rp_write_str(root, "proc/sys/vm/nr_overcommit_hugepages", "0\n");
	rp_write_str(root, "sys/kernel/mm/ksm/run", "1\n");
	snprintf(p, sizeof(p), "%s/sys/kernel/mm/ksm/run.errno", root);
	CHECK(unlink(p) == 0);
	for (pass = 0; pass < 2; pass++) {
		if (pass == 1)
			rp_write_str(root, "proc/kpagecount.mode", "0444 0 0\n");
		ctx = pm_ctx_new(root);
		a = ctx ? pm_audit_new(ctx) : NULL;
		if (!a)
			break;
		CHECK_EQ_U64(pm_audit_run(a, 0), 0);
		f = find(a, "thp", NULL);
		CHECK(f && f->verdict == PM_VERDICT_CONTEXT && f->fix);
		f = find(a, "hugetlb", NULL);
		CHECK(f && f->verdict == PM_VERDICT_CONTEXT);
		f = find(a, "exclusive-bit", NULL);
		CHECK(f && f->verdict == PM_VERDICT_CONTEXT);
		CHECK_EQ_U64(pm_audit_count(a, PM_VERDICT_CONTEXT), 3);
		CHECK_EQ_U64(pm_audit_count(a, PM_VERDICT_EXPOSED), pass);
		CHECK_EQ_U64(pm_audit_count(a, PM_VERDICT_UNKNOWN), 0);
		pm_audit_free(a);
		pm_ctx_free(ctx);
		a = NULL;
		ctx = NULL;
	}
	pm_audit_free(a);
	pm_ctx_free(ctx);
	rp_free_root(root);
	CHECK_EQ_U64(pass, 2);
	CHECK_STR(pm_verdict_name(PM_VERDICT_CONTEXT), "context");
	CHECK_EQ_U64(PM_VERDICT_OK, 0);	/* the ABI: values never renumbered */
	CHECK_EQ_U64(PM_VERDICT_EXPOSED, 1);
	CHECK_EQ_U64(PM_VERDICT_UNKNOWN, 2);
	CHECK_EQ_U64(PM_VERDICT_CONTEXT, 3);
	return T_PASS;
}

/* Who may read a snapshot that holds frame numbers: a non-root owner, a non-root group with g+r, or o+r. */
static int others_read(void)
{
	CHECK(!pmi_audit_others_read(0600, 0, 0));
	CHECK(!pmi_audit_others_read(0640, 0, 0));	/* group root: root's */
	CHECK(pmi_audit_others_read(0640, 0, 4));	/* adm may read it */
	CHECK(!pmi_audit_others_read(0600 & 0200, 0, 4));
	CHECK(pmi_audit_others_read(0644, 0, 0));
	CHECK(pmi_audit_others_read(0400, 1000, 1000));	/* its owner is not root */
	CHECK(!pmi_audit_others_read(0000, 1000, 1000));
	CHECK(!pmi_audit_others_read(0200, 1000, 0));
	return T_PASS;
}

/*
 * A snapshot with frame numbers (the fixture's kept.pms) is exposed when users other than root may
 * read it, context when only root may: as root 0644 and 0600; as another user, 0600 is still
 * its owner's, who is not root.
 */
static int snapshot_modes(void)
{
	const char *src = getenv("PAGEMAP_SRC");
	char *root = bare_tree(), from[PATH_MAX], to[PATH_MAX], buf[65536];
	static const unsigned modes[] = { 0644, 0600 };
	const struct pm_finding *f;
	struct pm_ctx *ctx;
	struct pm_audit *a;
	FILE *in, *out;
	size_t n, i;

	snprintf(from, sizeof(from), "%s/tests/fixtures/audit-snapshots/sub/kept.pms", src ? src : ".");
	if (!root || !(in = fopen(from, "rb")))
		return t_skip("no %s (run from the source tree, or through make check)", from);
	snprintf(to, sizeof(to), "%s/kept.pms", root);
	out = fopen(to, "wb");
	CHECK(out != NULL);
	while (out && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		CHECK_EQ_U64(fwrite(buf, 1, n, out), n);
	fclose(in);
	if (!out || fclose(out) != 0)
		return T_FAIL;
	for (i = 0; i < 2; i++) {
		bool others = modes[i] & 0004 || geteuid() != 0;

		CHECK(chmod(to, modes[i]) == 0);
		ctx = pm_ctx_new(root);
		a = ctx ? pm_audit_new(ctx) : NULL;
		CHECK(a && pm_audit_add_path(a, to) == 0 && pm_audit_run(a, 0) == 0);
		f = a ? find(a, "snapshots", to) : NULL;
		CHECK(f && f->verdict == (others ? PM_VERDICT_EXPOSED : PM_VERDICT_CONTEXT));
		CHECK(f && strstr(f->evidence, others ? "(1 readable by users other than root)" :
							"(0 readable by users other than root)"));
		f = a ? find(a, "snapshot", to) : NULL;
		CHECK(f && f->verdict == (others ? PM_VERDICT_EXPOSED : PM_VERDICT_CONTEXT) && f->fix);
		CHECK(a && pm_audit_count(a, PM_VERDICT_EXPOSED) == (others ? 2u : 0u));
		pm_audit_free(a);
		pm_ctx_free(ctx);
	}
	rp_free_root(root);
	return T_PASS;
}

T_MAIN(T(parse_mode), T(parse_status), T(namespaces), T(parse_thp), T(parse_count), T(sniff), T(sniff_path),
       T(replay_bare), T(replay_hostile), T(snapshots_dir),
       T(grades), T(others_read), T(snapshot_modes))
