/*
 * test_watch_methods.c - the write watch's back ends as the library lists them
 * (pm_watch_method_*): every row named, found by its name, described for a help
 * text; the names the CLI and the binding take.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "../harness.h"
#include <pagemap.h>

/* Each back end of the list: a name that finds it again, flags; no two share a name or a method. */
static int rows(void)
{
	size_t n = pm_watch_method_count(), i, j;

	CHECK(n >= 1);
	for (i = 0; i < n; i++) {
		enum pm_watch_method m = pm_watch_method_at(i);
		const char *name = pm_watch_method_name(m);

		CHECK(m != PM_WATCH_AUTO);
		CHECK(strcmp(name, "unknown") && strcmp(name, "auto"));
		CHECK(pm_watch_method_from_name(name) == (int)m);
		CHECK((pm_watch_method_flags(m) & ~(PM_WATCH_METHOD_CALLER_ONLY | PM_WATCH_METHOD_TRACES)) == 0);
		for (j = 0; j < i; j++) {
			CHECK(pm_watch_method_at(j) != m);
			CHECK(strcmp(pm_watch_method_name(pm_watch_method_at(j)), name));
		}
	}
	CHECK(pm_watch_method_at(n) == PM_WATCH_AUTO);
	CHECK(pm_watch_method_at((size_t)-1) == PM_WATCH_AUTO);
	/* The enum has no hole: 1..n are the rows (so a value outside is unknown, not a crash). */
	for (i = 1; i <= n; i++) {
		for (j = 0; j < n && pm_watch_method_at(j) != (enum pm_watch_method)i; j++)
			;
		CHECK(j < n);
	}
	return T_PASS;
}

/*
 * The words: one sentence to state when watching starts (no newline, no final period: the
 * CLI ends it), and a help paragraph whose lines fit beside the CLI's 14-column indent.
 */
static int words(void)
{
	size_t n = pm_watch_method_count(), i;

	for (i = 0; i < n; i++) {
		enum pm_watch_method m = pm_watch_method_at(i);
		const char *p = pm_watch_method_perturbs(m), *d = pm_watch_method_details(m), *nl;
		size_t len;

		CHECK(p && *p && !strchr(p, '\n'));
		len = p ? strlen(p) : 0;
		CHECK(len && p[len - 1] != '.');
		CHECK(d && *d);
		for (; d && *d; d = nl ? nl + 1 : d + strlen(d)) {
			nl = strchr(d, '\n');
			len = nl ? (size_t)(nl - d) : strlen(d);
			if (!len || len > 86)
				printf("  %s: a details line of %zu characters\n",
				       pm_watch_method_name(m), len);
			CHECK(len && len <= 86);
			CHECK(!nl || nl[1]);	/* no final newline */
		}
	}
	return T_PASS;
}

/* AUTO and unknown methods: no row, no words, no flags; names nobody spells are refused. */
static int lookups(void)
{
	enum pm_watch_method bad = (enum pm_watch_method)(pm_watch_method_count() + 1);

	CHECK(pm_watch_method_from_name("auto") == PM_WATCH_AUTO);
	CHECK(pm_watch_method_from_name(NULL) == -EINVAL);
	CHECK(pm_watch_method_from_name("") == -EINVAL);
	CHECK(pm_watch_method_from_name("bogus") == -EINVAL);
	CHECK(pm_watch_method_from_name("UFFD") == -EINVAL);		/* names are exact */
	CHECK(pm_watch_method_from_name("snapshot") == -EINVAL);	/* the binding's alias */
	CHECK_STR(pm_watch_method_name(bad), "unknown");
	CHECK(pm_watch_method_perturbs(PM_WATCH_AUTO) == NULL);
	CHECK(pm_watch_method_details(PM_WATCH_AUTO) == NULL);
	CHECK(pm_watch_method_perturbs(bad) == NULL && pm_watch_method_details(bad) == NULL);
	CHECK(pm_watch_method_flags(PM_WATCH_AUTO) == 0 && pm_watch_method_flags(bad) == 0);
	return T_PASS;
}

/* The names users type (pagemap track -m, Watch(method=)) and what they stand for are kept. */
static int names_kept(void)
{
	CHECK(pm_watch_method_from_name("uffd") == PM_WATCH_UFFD);
	CHECK(pm_watch_method_from_name("soft-dirty") == PM_WATCH_SOFTDIRTY);
	CHECK(pm_watch_method_from_name("mprotect") == PM_WATCH_MPROTECT);
	CHECK(pm_watch_method_from_name("fork-snapshot") == PM_WATCH_SNAPSHOT);
	CHECK(pm_watch_method_flags(PM_WATCH_MPROTECT) == PM_WATCH_METHOD_CALLER_ONLY);
	CHECK(pm_watch_method_flags(PM_WATCH_UFFD) == 0);
	CHECK(pm_watch_method_flags(PM_WATCH_SNAPSHOT) == PM_WATCH_METHOD_TRACES);	/* it attaches by ptrace */
	/* AUTO's order of preference, which pm_watch_method_at lists. */
	CHECK(pm_watch_method_at(0) == PM_WATCH_UFFD);
	CHECK(pm_watch_method_at(1) == PM_WATCH_SOFTDIRTY);
	return T_PASS;
}

/* pm_watch_new refuses a method with no row before it touches anything. */
static int new_unknown(void)
{
	struct pm_ctx *ctx = pm_ctx_new(NULL);
	enum pm_watch_method bad = (enum pm_watch_method)(pm_watch_method_count() + 1);

	if (!ctx)
		return t_skip("no context: %s", strerror(errno));
	errno = 0;
	CHECK(pm_watch_new(ctx, 0, bad, 0) == NULL);
	CHECK(errno == EINVAL);
	pm_ctx_free(ctx);
	return T_PASS;
}

T_MAIN(T(rows), T(words), T(lookups), T(names_kept), T(new_unknown))
