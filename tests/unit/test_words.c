/*
 * test_words.c - unit tests of the library's words for users: the features in rows
 * (pm_features_row), why a flag cannot be told (pm_flag_lack_str), why a process could not be
 * opened (pm_target_explain) and what an errno means from this library (pm_strerror).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pagemap.h"
#include "../harness.h"

/* A current kernel @maj.@min seen by an unprivileged reader, every probe answered. */
static struct pm_features kernel(unsigned maj, unsigned min)
{
	struct pm_features f;

	memset(&f, 0, sizeof(f));
	snprintf(f.kernel_release, sizeof(f.kernel_release), "%u.%u.0-test", maj, min);
	f.kernel_major = maj;
	f.kernel_minor = min;
	f.page_size = 4096;
	f.pmd_size = 2 << 20;
	f.layout = PM_LAYOUT_CURRENT;
	f.pfn_view = PM_PFN_HIDDEN;
	f.by_effect = true;
	f.soft_dirty = f.guard_regions = f.zero_page = f.huge_zero_page = PM_YES;
	f.kpageflags.readable = f.kpagecount.readable = f.kpagecgroup.readable =
		f.page_idle.readable = true;
	return f;
}

/* Row @key of @f: its value and why, or NULL when there is no such row. */
static const struct pm_feature_row *row_of(const struct pm_features *f, unsigned flags,
					   const char *key)
{
	static struct pm_feature_row r;
	size_t i;

	for (i = 0; pm_features_row(f, flags, i, &r) == 0; i++)
		if (!strcmp(r.key, key))
			return &r;
	return NULL;
}

#define CHECK_ROW(f, flags, key, want_value, want_why)                                             \
	do {                                                                                       \
		const struct pm_feature_row *_r = row_of(f, flags, key);                           \
		CHECK(_r != NULL);                                                                 \
		if (_r) {                                                                          \
			CHECK_STR(_r->value, want_value);                                          \
			CHECK_STR(_r->why, want_why);                                              \
		}                                                                                  \
	} while (0)

/* The rows come in the order `pagemap features` prints them, then 1; misuse is -EINVAL. */
static int rows_in_order(void)
{
	static const char *keys[] = {
		"kernel", "page-size", "pmd-size", "privileged", "pagemap", "layout", "pfn",
		"unprivileged-pfn", "exclusive-bit", "uffd-wp-bit", "guard-regions", "zero-page",
		"huge-zero-page", "pagemap-scan", "uffd-wp-async", "soft-dirty", "kpageflags",
		"kpagecount", "kpagecgroup", "idle-page-tracking", "page-mapcount",
	};
	struct pm_features f = kernel(6, 18);
	struct pm_feature_row r;
	size_t i, n = sizeof(keys) / sizeof(keys[0]);

	for (i = 0; i < n; i++) {
		CHECK_EQ_U64(pm_features_row(&f, 0, i, &r), 0);
		CHECK_STR(r.key, keys[i]);
		CHECK(r.value[0] != '\0' && r.why[0] != '\0');
	}
	CHECK_EQ_U64(pm_features_row(&f, 0, n, &r), 1);
	CHECK_EQ_U64(pm_features_row(&f, 0, (size_t)-1, &r), 1);
	CHECK_EQ_U64(pm_features_row(NULL, 0, 0, &r), -EINVAL);
	CHECK_EQ_U64(pm_features_row(&f, 0, 0, NULL), -EINVAL);
	CHECK_EQ_U64(pm_features_row(&f, 1u << 5, 0, &r), -EINVAL);
	return T_PASS;
}

/* The values: sizes as numbers, the layout and PFN view by name, tristates as yes/no/unknown. */
static int values(void)
{
	struct pm_features f = kernel(6, 18);

	CHECK_ROW(&f, PM_FEATURES_LIVE, "kernel", "6.18.0-test",
		  "probed by effect on the running kernel");
	CHECK_ROW(&f, 0, "kernel", "6.18.0-test", "replayed tree: recorded at capture");
	CHECK_ROW(&f, 0, "page-size", "4096", "bytes per page");
	CHECK_ROW(&f, 0, "pmd-size", "2097152",
		  "bytes one PMD maps: the size of a PMD-mapped huge page");
	CHECK_ROW(&f, 0, "pfn", "hidden",
		  "PFNs hidden: the reader lacks CAP_SYS_ADMIN (Linux 4.2+ shows 0); run as root");
	f.privileged = true; /* hidden from a privileged reader: a capture that dropped them */
	f.by_effect = false;
	CHECK_ROW(&f, 0, "pfn", "hidden",
		  "PFNs hidden: the capture dropped them (snapshot --pfn drop)");
	memset(f.kernel_release, 0, sizeof(f.kernel_release));
	f.soft_dirty = PM_UNKNOWN;
	CHECK_ROW(&f, 0, "kernel", "unknown", "replayed tree: recorded at capture");
	CHECK_ROW(&f, 0, "soft-dirty", "unknown", "not probed");
	/* A value this library does not know: no read past the table. */
	f.layout = (enum pm_layout)42;
	CHECK_ROW(&f, 0, "layout", "unknown", "could not be determined");
	return T_PASS;
}

/* What is missing says why and what would enable it. */
static int why_not(void)
{
	struct pm_features f = kernel(4, 1);

	f.layout = PM_LAYOUT_PSHIFT;
	f.pfn_view = PM_PFN_REFUSED;
	f.pagemap_error = EPERM;
	f.uffd_error = EPERM;
	f.unpriv_pfn = PM_NO;
	f.soft_dirty = PM_NO;
	f.kpageflags = (struct pm_kfile){ false, EACCES };
	f.kpagecgroup = (struct pm_kfile){ false, ENOENT };
	f.page_idle = (struct pm_kfile){ false, ENOENT };
	f.kpagecount = (struct pm_kfile){ false, ENODATA };
	CHECK_ROW(&f, 0, "privileged", "no",
		  "no CAP_SYS_ADMIN: Linux 4.0-4.1 refuse to open pagemap");
	CHECK_ROW(&f, 0, "pagemap", "no",
		  "opening /proc/self/pagemap failed: Operation not permitted (Linux 4.0-4.1 need "
		  "CAP_SYS_ADMIN)");
	CHECK_ROW(&f, 0, "unprivileged-pfn", "no",
		  "4.0-4.1 refuse pagemap to readers without CAP_SYS_ADMIN: no exposure");
	CHECK_ROW(&f, 0, "exclusive-bit", "no", "needs Linux 4.2+");
	CHECK_ROW(&f, 0, "uffd-wp-bit", "no", "needs Linux 5.13+");
	CHECK_ROW(&f, 0, "pagemap-scan", "no", "needs Linux 6.7+; walks use batched pread");
	CHECK_ROW(&f, 0, "uffd-wp-async", "no",
		  "userfaultfd: Operation not permitted (set vm.unprivileged_userfaultfd=1 or run "
		  "with CAP_SYS_PTRACE)");
	CHECK_ROW(&f, 0, "soft-dirty", "no",
		  "kernel built without CONFIG_MEM_SOFT_DIRTY: clear_refs 4 is accepted but does "
		  "nothing");
	CHECK_ROW(&f, 0, "kpageflags", "no", "Permission denied (root only)");
	CHECK_ROW(&f, 0, "kpagecount", "unknown", "not in the captured tree");
	CHECK_ROW(&f, 0, "kpagecgroup", "no", "missing: kernel built without CONFIG_MEMCG");
	CHECK_ROW(&f, 0, "idle-page-tracking", "no",
		  "missing: kernel built without CONFIG_IDLE_PAGE_TRACKING");
	f.kernel_major = 3;
	f.kernel_minor = 10;
	CHECK_ROW(&f, 0, "soft-dirty", "no", "needs Linux 3.11+");
	return T_PASS;
}

/* PAGEMAP_SCAN's categories by name, in bit order; a replayed tree says it is walked with pread. */
static int scan_categories(void)
{
	struct pm_features f = kernel(6, 18);

	f.scan = true;
	f.scan_categories = PM_CAT_WPALLOWED | PM_CAT_PRESENT | PM_CAT_GUARD;
	CHECK_ROW(&f, PM_FEATURES_LIVE, "pagemap-scan", "yes",
		  "PAGEMAP_SCAN ioctl; categories: wpallowed,present,guard");
	f.by_effect = false;
	CHECK_ROW(&f, 0, "pagemap-scan", "yes",
		  "PAGEMAP_SCAN ioctl; categories: wpallowed,present,guard (a replayed tree is "
		  "walked with pread)");
	return T_PASS;
}

/* Each reason of pm_flag_lack in words, naming the flag's bit or soft-dirty and its kernel. */
static int lack_words(void)
{
	const struct pm_read_how scan = { .layout = PM_LAYOUT_CURRENT, .scan = true };
	char buf[128];

#define CHECK_LACK(flag, lack, how, want)                                                          \
	CHECK_STR(pm_flag_lack_str(flag, lack, how, buf, sizeof(buf)), want)
	CHECK_LACK(PM_PAGE_SOFTDIRTY, PM_LACK_KERNEL, NULL, "soft-dirty came with Linux 3.11");
	CHECK_LACK(PM_PAGE_GUARD, PM_LACK_KERNEL, NULL, "bit 58 came with Linux 6.15");
	CHECK_LACK(PM_PAGE_SOFTDIRTY, PM_LACK_LAYOUT, NULL,
		   "this pagemap layout has no soft-dirty bit");
	CHECK_LACK(PM_PAGE_EXCLUSIVE, PM_LACK_LAYOUT, NULL,
		   "this pagemap layout has no bit 56 bit");
	CHECK_LACK(PM_PAGE_SOFTDIRTY, PM_LACK_CONFIG, NULL,
		   "kernel built without CONFIG_MEM_SOFT_DIRTY");
	CHECK_LACK(PM_PAGE_GUARD, PM_LACK_CONFIG, NULL, "the kernel refuses MADV_GUARD_INSTALL");
	CHECK_LACK(PM_PAGE_THP, PM_LACK_FRAMES, NULL,
		   "PFNs are hidden and the pread back end needs them");
	CHECK_LACK(PM_PAGE_THP, PM_LACK_FRAMES, &scan, "PFNs are hidden");
	CHECK_LACK(PM_PAGE_ZERO, PM_LACK_ZERO_PFN, &scan, "the zero page's frame is not known");
	CHECK_LACK(PM_PAGE_EXCLUSIVE, PM_LACK_ENTRIES, &scan,
		   "the scan back end was not asked to read entries");
	CHECK_LACK(PM_PAGE_GUARD, PM_LACK_SCAN, &scan, "PAGEMAP_SCAN here does not report it");
	CHECK_LACK(PM_PAGE_PRESENT, PM_LACK_NONE, NULL, "it can be told");
#undef CHECK_LACK
	/* Truncated to fit, never past @size. */
	CHECK_STR(pm_flag_lack_str(PM_PAGE_SOFTDIRTY, PM_LACK_KERNEL, NULL, buf, 5), "soft");
	errno = 0;
	CHECK(!pm_flag_lack_str(PM_PAGE_PRESENT | PM_PAGE_SWAPPED, PM_LACK_KERNEL, NULL, buf,
				sizeof(buf)));
	CHECK_EQ_U64(errno, EINVAL);
	CHECK(!pm_flag_lack_str(PM_PAGE_PRESENT, PM_LACK_SCAN + 1, NULL, buf, sizeof(buf)));
	CHECK(!pm_flag_lack_str(PM_PAGE_PRESENT, -EINVAL, NULL, buf, sizeof(buf)));
	CHECK(!pm_flag_lack_str(PM_PAGE_PRESENT, PM_LACK_KERNEL, NULL, NULL, 8));
	CHECK(!pm_flag_lack_str(PM_PAGE_PRESENT, PM_LACK_KERNEL, NULL, buf, 0));
	return T_PASS;
}

/* Write @text to @root/proc/@pid/stat. */
static void put_stat(const char *root, int pid, const char *text)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/proc", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/proc/%d", root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/proc/%d/stat", root, pid);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* A failed open in words, from what the replayed tree's proc/PID/stat says of the process. */
static int open_words(void)
{
	char root[] = "/tmp/pm-test-words-XXXXXX", cmd[64], msg[256], want[256];
	const char *hint = "unset";
	struct pm_ctx *ctx;

	if (!mkdtemp(root))
		return t_skip("mkdtemp: %s", strerror(errno));
	put_stat(root, 42, "42 (a (b)) Z 1 42 42 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 42 0 0\n");
	put_stat(root, 43, "43 (kworker/0:1) I 2 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 43 0 0\n");
	put_stat(root, 44, "44 (sh) S 1 44 44 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 44 0 0\n");
	ctx = pm_ctx_new(root);
	CHECK(ctx != NULL);
	if (!ctx)
		goto out;
#define CHECK_OPEN(pid, name, err, want_msg, want_hint)                                            \
	do {                                                                                       \
		CHECK_EQ_U64(pm_target_explain(ctx, pid, name, err, msg, sizeof(msg), &hint), 0);  \
		CHECK_STR(msg, want_msg);                                                          \
		if (want_hint)                                                                     \
			CHECK_STR(hint, (const char *)(want_hint));                                \
		else                                                                               \
			CHECK(hint == NULL);                                                       \
	} while (0)
	CHECK_OPEN(42, "42", ESRCH, "cannot open process 42: it is a zombie and has no memory left",
		   NULL);
	CHECK_OPEN(43, "43", ESRCH,
		   "cannot open process 43: it is a kernel thread and has no user memory", NULL);
	CHECK_OPEN(45, NULL, ESRCH, "cannot open process 45: it exited or has no memory", NULL);
	CHECK_OPEN(45, "45", ENOENT, "cannot open process 45: no such process", NULL);
	snprintf(want, sizeof(want), "cannot open %s/proc/44/pagemap: %s", root, strerror(ENOENT));
	CHECK_OPEN(44, "44", ENOENT, want,
		   "a capture stores pagemap as pagemap.sparse: tests/fixtures/unpack makes the "
		   "tree replayable");
	CHECK_OPEN(44, "44", -EPERM, "cannot open /proc/44/pagemap: Operation not permitted",
		   "Linux 4.0 and 4.1 allow pagemap only to readers with CAP_SYS_ADMIN");
	CHECK_OPEN(44, "self", EACCES, "cannot open /proc/self/pagemap: Permission denied",
		   geteuid() == 0 ? "refused to root: a security module (LSM) or a restricted "
				    "ptrace scope forbids it"
				  : "reading another user's, or a non-dumpable, process needs root "
				    "(or CAP_SYS_PTRACE)");
	/* EBADMSG without a problem recorded for the tree: the plain error. */
	CHECK_OPEN(44, "44", EBADMSG, "cannot open /proc/44/pagemap: Bad message", NULL);
#undef CHECK_OPEN
	/* Truncated to fit; misuse is -EINVAL. */
	CHECK_EQ_U64(pm_target_explain(ctx, 45, NULL, ENOENT, msg, 12, &hint), 0);
	CHECK_STR(msg, "cannot open");
	CHECK_EQ_U64(pm_target_explain(NULL, 45, NULL, ENOENT, msg, sizeof(msg), &hint), -EINVAL);
	CHECK_EQ_U64(pm_target_explain(ctx, 45, NULL, ENOENT, msg, 0, &hint), -EINVAL);
	CHECK_EQ_U64(pm_target_explain(ctx, 45, NULL, ENOENT, msg, sizeof(msg), NULL), -EINVAL);
	pm_ctx_free(ctx);
out:
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd) != 0)
		printf("  cannot remove %s\n", root);
	return T_PASS;
}

/* The errors with a meaning of their own in the library's words, either sign; others as strerror. */
static int error_words(void)
{
	CHECK_STR(pm_strerror(ENOENT), "no such process or file");
	CHECK_STR(pm_strerror(-ENOENT), "no such process or file");
	CHECK_STR(pm_strerror(EBADMSG), "the replayed tree or snapshot is damaged");
	CHECK_STR(pm_strerror(ESRCH), "the target has no memory any more: it exited or exec'd, "
				      "or it is a zombie or a kernel thread");
	CHECK_STR(pm_strerror(ENOMEM), strerror(ENOMEM));
	CHECK_STR(pm_strerror(-ENOSPC), strerror(ENOSPC));
	return T_PASS;
}

T_MAIN(T(rows_in_order), T(values), T(why_not), T(scan_categories), T(lack_words), T(open_words),
       T(error_words))
