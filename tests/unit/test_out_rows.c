/* test_out_rows.c - cli/output/out_rows.c prints cells byte for byte as libsmartcols does, hostile strings included. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libsmartcols.h>
#include "../harness.h"

#include "../../cli/base/textsafe.c"
#include "../../cli/output/out_rows.c"
#include "../../cli/output/out_human.c"

/* Control bytes, quotes, backslashes, blanks, DEL, invalid and valid UTF-8, a "\x" that looks encoded. */
static char *scols_print_as_is(const char *data, int json, int json_type);

static const char *const hostile[] = {
	"plain", "a b\tc", "\"quoted\"", "back\\slash", "\\x41", "nl\nre\rff\fbs\bvt\v", "\x01\x1f\x7f",
	"\xff\xfe invalid", "\xc3\xa9t\xc3\xa9", "\xe2\x80", "-", "0", "n", "[heap]", "/a path/with \"all\" \\ of\x1b[31m",
	"\\xff looks escaped\\x5c", "\xc0\xaf overlong", "\xed\xa0\x80 surrogate", "\xf4\x90\x80\x80 past U+10FFFF",
	"systemd-fsck@dev-disk-by\\x2duuid.service",
};
#define NHOSTILE (sizeof(hostile) / sizeof(hostile[0]))

static void put_obuf_t(void *ctx, const char *s, size_t n)
{
	obuf_add(ctx, s, n);
}

/*
 * libsmartcols' own print of a one-column, one-row table (raw or JSON); NULL data is an unset cell.
 * A JSON string cell gets the text cli/output/output.c gives libsmartcols (out_scols_cell): valid UTF-8.
 */
static char *scols_print(const char *data, int json, int json_type)
{
	struct obuf t = { 0 };
	char *s;

	if (data && json && json_type == SCOLS_JSON_STRING) {
		ts_escape(TS_TEXT, data, put_obuf_t, &t);
		obuf_add(&t, "", 1);
		data = t.p;
	}
	s = scols_print_as_is(data, json, json_type);
	obuf_free(&t);
	return s;
}

static char *scols_print_as_is(const char *data, int json, int json_type)
{
	struct libscols_table *tb = scols_new_table();
	struct libscols_column *cl;
	struct libscols_line *ln;
	char *s = NULL;

	if (!tb)
		return NULL;
	scols_table_set_name(tb, "t");
	scols_table_enable_json(tb, json);
	scols_table_enable_raw(tb, !json);
	scols_table_enable_noheadings(tb, 1);
	cl = scols_table_new_column(tb, "NAME", 0, 0);
	if (cl && json)
		scols_column_set_json_type(cl, json_type);
	ln = cl ? scols_table_new_line(tb, NULL) : NULL;
	if (ln && (!data || scols_line_set_data(ln, 0, data) == 0))
		scols_print_table_to_string(tb, &s);
	scols_unref_table(tb);
	return s;
}

/* Ours, framed as libsmartcols frames one JSON row. */
static char *ours_json(const char *data, void (*cell)(struct obuf *, const char *))
{
	struct obuf b = { 0 };

	obuf_str(&b, "{\n   ");
	obuf_json_key(&b, "t");
	obuf_str(&b, "[\n      {\n         ");
	obuf_json_key(&b, "NAME");
	cell(&b, data);
	obuf_str(&b, "\n      }\n   ]\n}\n");
	obuf_add(&b, "", 1);
	return b.oom ? NULL : b.p;
}

static int test_raw_same_as_libsmartcols(void)
{
	size_t i;

	for (i = 0; i <= NHOSTILE; i++) {
		const char *d = i < NHOSTILE ? hostile[i] : NULL;
		struct obuf b = { 0 };
		char *want = scols_print(d, 0, 0);

		obuf_raw_cell(&b, d);
		obuf_add(&b, "", 1);	/* print_table_to_string ends a raw table without a newline */
		CHECK(want != NULL);
		if (want && strcmp(want, b.p))
			printf("  raw of case %zu: libsmartcols \"%s\", ours \"%s\"\n", i, want, b.p);
		CHECK(want && !strcmp(want, b.p));
		free(want);
		obuf_free(&b);
	}
	return T_PASS;
}

static int test_json_same_as_libsmartcols(void)
{
	static const struct {
		int type;
		void (*cell)(struct obuf *, const char *);
	} kinds[] = { { SCOLS_JSON_STRING, obuf_json_string },
		      { SCOLS_JSON_NUMBER, obuf_json_number },
		      { SCOLS_JSON_BOOLEAN, obuf_json_bool } };
	size_t i, k;

	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		for (i = 0; i <= NHOSTILE; i++) {
			const char *d = i < NHOSTILE ? hostile[i] : NULL;
			char *want = scols_print(d, 1, kinds[k].type), *got = ours_json(d, kinds[k].cell);

			CHECK(want && got);
			if (want && got && strcmp(want, got))
				printf("  JSON type %d case %zu: libsmartcols \"%s\", ours \"%s\"\n", kinds[k].type, i, want, got);
			CHECK(want && got && !strcmp(want, got));
			free(want);
			free(got);
		}
	}
	return T_PASS;
}

/* libsmartcols' JSON without the blanks between tokens (not those inside strings), in place. */
static void json_compact(char *s)
{
	bool in_str = false, esc = false;
	char *d = s;

	for (; *s; s++) {
		if (in_str) {
			in_str = esc || *s != '"';
			esc = !esc && *s == '\\';
		} else if (*s == ' ' || *s == '\n' || *s == '\t') {
			continue;
		} else {
			in_str = *s == '"';
		}
		*d++ = *s;
	}
	*d = '\0';
}

/*
 * A record's JSON line (cli/output/out_stream.c json_record: the table's name, the rows as
 * json_row(compact) frames them) is libsmartcols' JSON of the same table, blanks dropped.
 */
static int test_json_compact_same_as_libsmartcols(void)
{
	static const struct {
		int type;
		void (*cell)(struct obuf *, const char *);
	} kinds[] = { { SCOLS_JSON_STRING, obuf_json_string },
		      { SCOLS_JSON_NUMBER, obuf_json_number },
		      { SCOLS_JSON_BOOLEAN, obuf_json_bool } };
	size_t i, k;

	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		for (i = 0; i <= NHOSTILE; i++) {
			const char *d = i < NHOSTILE ? hostile[i] : NULL;
			char *want;
			struct obuf b = { 0 };

			/* A number cell holds digits (out_u64); dropping blanks changes others */
			if (kinds[k].type == SCOLS_JSON_NUMBER && d && strpbrk(d, " \t\n"))
				continue;
			want = scols_print(d, 1, kinds[k].type);
			obuf_str(&b, "{");
			obuf_json_name(&b, "t");
			obuf_str(&b, ":[{");
			obuf_json_name(&b, "NAME");
			obuf_str(&b, ":");
			kinds[k].cell(&b, d);
			obuf_str(&b, "}]}");
			obuf_add(&b, "", 1);
			CHECK(want && !b.oom);
			if (want)
				json_compact(want);
			if (want && strcmp(want, b.p))
				printf("  compact JSON type %d case %zu: libsmartcols \"%s\", ours \"%s\"\n",
				       kinds[k].type, i, want, b.p);
			CHECK(want && !strcmp(want, b.p));
			free(want);
			obuf_free(&b);
		}
	}
	return T_PASS;
}

/* The escapes spelled out, so a change in libsmartcols cannot move both sides unnoticed. */
static int test_escapes_spelled_out(void)
{
	struct obuf b = { 0 };

	obuf_raw_cell(&b, "a b\\\"\x01\xff\x7f");
	obuf_add(&b, "", 1);
	CHECK_STR(b.p, "a\\x20b\\x5c\"\\x01\\xff\\x7f");
	b.len = 0;
	obuf_json_string(&b, "q\"b\\t\tn\nc\x01\xff\x7f");
	obuf_add(&b, "", 1);
	CHECK_STR(b.p, "\"q\\\"b\\\\t\\tn\\nc\\u0001\\\\xff\x7f\"");
	b.len = 0;
	obuf_json_string(&b, "");
	obuf_json_number(&b, NULL);
	obuf_json_bool(&b, "no");
	obuf_json_bool(&b, "yes");
	obuf_json_key(&b, "SWAP\"OFF");
	obuf_add(&b, "", 1);
	CHECK_STR(b.p, "nullnullfalsetrue\"swap\\\"off\": ");
	obuf_free(&b);
	return T_PASS;
}

static int test_plain(void)
{
	size_t len = 99;

	CHECK(out_cell_plain(NULL, &len) && len == 0);
	CHECK(out_cell_plain("0x1000 abc", &len) && len == 10);
	CHECK(!out_cell_plain("tab\there", &len));
	CHECK(!out_cell_plain("back\\x41", &len));
	CHECK(!out_cell_plain("\xc3\xa9", &len));
	CHECK(!out_cell_plain("del\x7f", &len));
	return T_PASS;
}

/* Many small adds and a long pad grow the buffer; its bytes stay in order. */
static int test_buffer_grows(void)
{
	struct obuf b = { 0 };
	size_t i;

	for (i = 0; i < 10000; i++)
		obuf_add(&b, i % 2 ? "b" : "a", 1);
	obuf_pad(&b, 100000);
	CHECK(!b.oom && b.len == 110000);
	CHECK(b.p[0] == 'a' && b.p[9999] == 'b' && b.p[10000] == ' ' && b.p[109999] == ' ');
	obuf_free(&b);
	CHECK(b.p == NULL && b.len == 0);
	return T_PASS;
}

/* The same digits as printf, at the edges. */
static int test_fmt_u64(void)
{
	static const uint64_t v[] = { 0, 1, 9, 10, 15, 16, 255, 4096, 0x7fffffffffffULL, 1000000007, UINT64_MAX - 1, UINT64_MAX };
	char got[24], want[32];
	size_t i, n;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		n = out_fmt_u64(got, v[i], false);
		snprintf(want, sizeof(want), "%" PRIu64, v[i]);
		CHECK_STR(got, want);
		CHECK(n == strlen(want));
		n = out_fmt_u64(got, v[i], true);
		snprintf(want, sizeof(want), "0x%" PRIx64, v[i]);
		CHECK_STR(got, want);
		CHECK(n == strlen(want));
	}
	return T_PASS;
}

/* Appends of every length to 40 (1-32 copied by overlapping fixed-size moves): each one's bytes, in order. */
static int test_add_short(void)
{
	static const char src[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJ";
	struct obuf b = { 0 };
	char want[2048];
	size_t n, k = 0;

	obuf_add(&b, "", 0);
	for (n = 1; n <= 40; n++) {
		obuf_add(&b, src + n % 7, n);
		memcpy(want + k, src + n % 7, n);
		k += n;
		obuf_add(&b, "|", 1);
		want[k++] = '|';
	}
	CHECK(!b.oom && b.len == k && !memcmp(b.p, want, k));
	obuf_free(&b);
	return T_PASS;
}

/*
 * Short pads where the buffer has room store 32 spaces and count only theirs: what follows writes over
 * the rest. Every length to 33 (32 stored at once, 33 the other way), between cells, and at the very
 * end of the buffer's room.
 */
static int test_pad_short(void)
{
	struct obuf b = { 0 };
	char want[8192];	/* the buffer's first 4096 bytes, and a few more */
	size_t i, k = 0;

	obuf_pad(&b, 0);	/* no memory yet: nothing, and no write */
	CHECK(b.len == 0 && !b.oom);
	for (i = 0; i <= 33; i++) {
		obuf_add(&b, "x", 1);
		want[k++] = 'x';
		obuf_pad(&b, i);
		memset(want + k, ' ', i);
		k += i;
	}
	obuf_add(&b, "|", 1);
	want[k++] = '|';
	CHECK(!b.oom && b.len == k && !memcmp(b.p, want, k));
	/* Room for fewer than 32 more: the pad takes the way that grows the buffer. */
	while (b.cap - b.len >= 32) {
		obuf_add(&b, "y", 1);
		want[k++] = 'y';
	}
	obuf_pad(&b, 5);
	memset(want + k, ' ', 5);
	k += 5;
	obuf_add(&b, "z", 1);
	want[k++] = 'z';
	CHECK(!b.oom && b.len == k && !memcmp(b.p, want, k));
	obuf_free(&b);
	return T_PASS;
}

T_MAIN(T(test_fmt_u64), T(test_raw_same_as_libsmartcols), T(test_json_same_as_libsmartcols),
       T(test_json_compact_same_as_libsmartcols), T(test_escapes_spelled_out), T(test_plain),
       T(test_buffer_grows), T(test_add_short), T(test_pad_short))
