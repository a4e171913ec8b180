/* harness.h - the tiny test harness every test binary uses: PASS/FAIL/SKIP lines that tests/run counts. */
#ifndef PM_HARNESS_H
#define PM_HARNESS_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * A test is a function returning one of these. It reports failures through
 * CHECK*, which print the file, line and values, and keep going so one run
 * shows every broken expectation. Each test prints exactly one result line:
 *   PASS name | FAIL name | SKIP name: reason
 */
enum { T_PASS = 0, T_FAIL = 1, T_SKIP = 77 };

static int t_failed_checks;
static char t_skip_reason[512];

#define CHECK(cond)                                                                     \
	do {                                                                            \
		if (!(cond)) {                                                          \
			printf("  %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			t_failed_checks++;                                              \
		}                                                                       \
	} while (0)

#define CHECK_EQ_U64(a, b)                                                                         \
	do {                                                                                       \
		unsigned long long _a = (unsigned long long)(a), _b = (unsigned long long)(b);      \
		if (_a != _b) {                                                                    \
			printf("  %s:%d: %s == %s failed: %llu (%#llx) != %llu (%#llx)\n", __FILE__, \
			       __LINE__, #a, #b, _a, _a, _b, _b);                                   \
			t_failed_checks++;                                                         \
		}                                                                                  \
	} while (0)

#define CHECK_STR(a, b)                                                                          \
	do {                                                                                     \
		const char *_a = (a), *_b = (b);                                                 \
		if (!_a || !_b || strcmp(_a, _b)) {                                              \
			printf("  %s:%d: %s == %s failed: \"%s\" != \"%s\"\n", __FILE__, __LINE__, #a, \
			       #b, _a ? _a : "(null)", _b ? _b : "(null)");                        \
			t_failed_checks++;                                                       \
		}                                                                                \
	} while (0)

/* Skip the current test with a reason (printed on its result line). */
static inline int t_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int t_skip(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t_skip_reason, sizeof(t_skip_reason), fmt, ap);
	va_end(ap);
	return T_SKIP;
}

struct t_case {
	const char *name;
	int (*fn)(void);
};

/* Run the cases (optionally only those named in argv) and exit 0 iff none failed. */
static inline int t_main(const struct t_case *cases, size_t n, int argc, char **argv)
{
	struct timespec t0, t1;
	double secs;
	int failed = 0;
	size_t i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < n; i++) {
		int r, a, want = argc < 2;
		for (a = 1; a < argc; a++)
			want |= !strcmp(argv[a], cases[i].name);
		if (!want)
			continue;
		t_failed_checks = 0;
		t_skip_reason[0] = '\0';
		clock_gettime(CLOCK_MONOTONIC, &t0);
		r = cases[i].fn();
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (r == T_SKIP && !t_failed_checks) {
			printf("SKIP %s: %s\n", cases[i].name, t_skip_reason);
		} else if (r == T_PASS && !t_failed_checks) {
			printf("PASS %s\n", cases[i].name);
		} else {
			printf("FAIL %s\n", cases[i].name);
			failed++;
		}
		secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		if (secs >= 1)	/* where make check's time goes (CI has a budget) */
			printf("  %s took %.1f s\n", cases[i].name, secs);
	}
	return failed ? 1 : 0;
}

#define T_MAIN(...)                                                                      \
	int main(int argc, char **argv)                                                  \
	{                                                                                \
		static const struct t_case cases[] = { __VA_ARGS__ };                    \
		return t_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);      \
	}
#define T(fn) { #fn, fn }

#endif
