/*
 * test_out_human.c - cli/output/out_human.c: one form for a change of size everywhere (top's terminal, its -b
 * frames and header, every table's signed cells): the unsigned size's units and rounding with a sign, no sign
 * and "0B" for no change, the extremes of int64_t, and a rate's rounding to whole bytes.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "../harness.h"

#include "../../cli/base/textsafe.c"
#include "../../cli/output/out_rows.c"
#include "../../cli/output/out_human.c"

static const char *sgn(int64_t v)
{
	static char buf[64];

	return out_human_signed(v, buf, sizeof(buf));
}

static const char *uns(uint64_t v)
{
	static char buf[64];

	return out_human_size(v, buf, sizeof(buf));
}

/*
 * Sizes as every output prints them: the tables, render's SVG and HTML text (out_human_size) and the
 * HTML page's own script (cli/render/render_html.js size(), checked against this same table in
 * headless Chromium by tests/cli/render.sh html-sizes, against a copy of this table: change both).
 * One decimal, rounded, below 1000 of a unit.
 */
static const struct { uint64_t bytes; const char *text; } size_table[] = {
	{ 0, "0B" }, { 1023, "1023B" }, { 1024, "1K" }, { 1536, "1.5K" }, { 154317, "150.7K" },
	{ 2096128, "2M" }, { 12897485, "12.3M" }, { 1049100288ULL, "1000M" }, { 42949672960ULL, "40G" },
	{ 1152921504606846976ULL, "1E" },
};

static int test_size_table(void)
{
	size_t i;

	for (i = 0; i < sizeof(size_table) / sizeof(size_table[0]); i++)
		CHECK_STR(uns(size_table[i].bytes), size_table[i].text);
	return T_PASS;
}

/* The signed form of +-@v is the unsigned one of @v with its sign, at every unit boundary and either side of it. */
static int test_signed_mirrors_unsigned(void)
{
	char want[64];
	int e;

	for (e = 0; e < 63; e++) {
		int64_t base = (int64_t)1 << e, v;

		for (v = base - 1; v <= base + 1; v++) {
			if (v <= 0)
				continue;
			snprintf(want, sizeof(want), "+%s", uns((uint64_t)v));
			CHECK_STR(sgn(v), want);
			snprintf(want, sizeof(want), "-%s", uns((uint64_t)v));
			CHECK_STR(sgn(-v), want);
		}
	}
	return T_PASS;
}

static int test_signed_values(void)
{
	CHECK_STR(sgn(0), "0B");	/* as out_human_size(0): no sign, its unit */
	CHECK_STR(uns(0), "0B");
	CHECK_STR(sgn(1), "+1B");
	CHECK_STR(sgn(-1), "-1B");
	CHECK_STR(sgn(1023), "+1023B");
	CHECK_STR(sgn(1024), "+1K");
	CHECK_STR(sgn(-1024), "-1K");
	CHECK_STR(sgn(1536), "+1.5K");
	CHECK_STR(sgn(-1536), "-1.5K");
	CHECK_STR(sgn(-((int64_t)3 << 20)), "-3M");
	CHECK_STR(sgn(INT64_MAX), "+8E");
	CHECK_STR(sgn(INT64_MIN), "-8E");	/* its magnitude does not fit an int64_t */
	CHECK_STR(sgn(INT64_MIN + 1), "-8E");
	return T_PASS;
}

static int test_signed_buffer(void)
{
	char small[4];

	CHECK_STR(out_human_signed(-1536, small, sizeof(small)), "-1.");	/* cut, never past the buffer */
	CHECK(out_human_signed(5, small, 0) == small);
	return T_PASS;
}

static int test_round(void)
{
	CHECK(out_round_s64(0) == 0);
	CHECK(out_round_s64(0.4) == 0);
	CHECK(out_round_s64(-0.4) == 0);
	CHECK(out_round_s64(0.5) == 1);
	CHECK(out_round_s64(-0.5) == -1);
	CHECK(out_round_s64(0.7) == 1);	/* a rise under a byte a second is a rise, as its sign says */
	CHECK(out_round_s64(-1023.6) == -1024);
	CHECK(out_round_s64(0.0 / 0.0) == 0);
	CHECK(out_round_s64(1e30) == INT64_MAX);
	CHECK(out_round_s64(-1e30) == INT64_MIN);
	CHECK(out_round_s64(9223372036854775807.0) == INT64_MAX);	/* rounds up to 2^63 as a double */
	CHECK(out_round_s64(-9223372036854775807.0) == INT64_MIN);
	CHECK_STR(sgn(out_round_s64(0.7)), "+1B");
	CHECK_STR(sgn(out_round_s64(-0.2)), "0B");
	return T_PASS;
}

T_MAIN(T(test_size_table), T(test_signed_mirrors_unsigned), T(test_signed_values), T(test_signed_buffer), T(test_round))
