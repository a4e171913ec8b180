/*
 * out_rows.c - cells formatted as libsmartcols 2.38 prints them, for the rows out_stream.c
 * prints itself.
 *
 * Why not libsmartcols itself: printing a table, it measures every cell's
 * width character by character (mbrtowc), also in raw and JSON output where
 * no width is used; for the many-row commands (pages --each, phys -l, the
 * phys -p list) that was most of their time, several times page-types' cost
 * for the same rows (bench/run-rows.sh). Which tables come here and which go
 * to libsmartcols: the table in cli/output/output.h.
 * Every function below copies one routine of util-linux 2.38's output
 * (fputs_nonblank, fputs_quoted_json, ul_jsonwrt_value_*), so the bytes are
 * the same: tests/cli compares both ways (PAGEMAP_OUT_SLOW=1 prints every
 * batch through libsmartcols) and tests/unit/test_out_rows.c the escaping.
 * One difference, on purpose: JSON strings are valid UTF-8 (cli/base/textsafe.h);
 * cli/output/out_table.c gives libsmartcols the same text, so the bytes still agree.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "out_rows.h"
#include "textsafe.h"

void obuf_grow_add(struct obuf *b, const char *s, size_t n)
{
	if (!n)		/* nothing to copy, and memcpy takes no NULL buffer even then */
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *p;

		while (cap < b->len + n)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

void obuf_str(struct obuf *b, const char *s)
{
	obuf_add(b, s, strlen(s));
}

void obuf_grow_pad(struct obuf *b, size_t n)
{
	static const char spaces[] = "                                ";

	while (n) {
		size_t k = n < sizeof(spaces) - 1 ? n : sizeof(spaces) - 1;

		obuf_add(b, spaces, k);
		n -= k;
	}
}

void obuf_free(struct obuf *b)
{
	free(b->p);
	*b = (struct obuf){ 0 };
}

static void put_obuf(void *ctx, const char *s, size_t n)
{
	obuf_add(ctx, s, n);
}

/* A raw-mode cell: cli/base/textsafe.c's TS_RAW, util-linux's fputs_nonblank. */
void obuf_raw_cell(struct obuf *b, const char *s)
{
	if (s)
		ts_escape(TS_RAW, s, put_obuf, b);
}

/*
 * A JSON string: cli/base/textsafe.c's one JSON escaper. On valid UTF-8 its bytes are those of util-linux's
 * fputs_quoted_json; invalid UTF-8, which libsmartcols copies into its JSON as it is, becomes \\xHH text
 * (cli/output/out_table.c hands libsmartcols the same text, so both printers agree).
 */
void obuf_json_string(struct obuf *b, const char *s)
{
	if (!s || !*s) {
		obuf_add(b, "null", 4);
		return;
	}
	obuf_add(b, "\"", 1);
	ts_escape(TS_JSON, s, put_obuf, b);
	obuf_add(b, "\"", 1);
}

void obuf_json_number(struct obuf *b, const char *s)
{
	obuf_str(b, s && *s ? s : "null");
}

void obuf_json_numbers(struct obuf *b, const char *s, bool compact)
{
	const char *p;

	if (!s || !*s) {
		obuf_add(b, "null", 4);
		return;
	}
	obuf_add(b, "[", 1);
	for (p = s; *p; p++)
		if (*p == ',')
			obuf_str(b, compact ? "," : ", ");
		else
			obuf_add(b, p, 1);
	obuf_add(b, "]", 1);
}

void obuf_json_bool(struct obuf *b, const char *s)
{
	bool f = !s || !*s || *s == '0' || *s == 'n' || *s == 'N';

	obuf_str(b, f ? "false" : "true");
}

void obuf_json_name(struct obuf *b, const char *name)
{
	char low[64];
	size_t i;

	/* A column's heading, lower-cased as libsmartcols names its values; headings are short ASCII. */
	for (i = 0; name[i] && i < sizeof(low) - 1; i++)
		low[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] - 'A' + 'a' : name[i]);
	low[i] = '\0';
	obuf_add(b, "\"", 1);
	ts_escape(TS_JSON, low, put_obuf, b);
	obuf_add(b, "\"", 1);
}

void obuf_json_key(struct obuf *b, const char *name)
{
	obuf_json_name(b, name);
	obuf_add(b, ": ", 2);
}

bool out_cell_plain(const char *s, size_t *len)
{
	const char *p = s;

	for (; p && *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e || *p == '\\')
			return false;
	*len = s ? (size_t)(p - s) : 0;
	return true;
}
