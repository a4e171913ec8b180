/*
 * out_rows.c - the cells of streamed rows formatted as libsmartcols 2.38 prints them.
 *
 * Why not libsmartcols itself: printing a table, it measures every cell's
 * width character by character (mbrtowc), also in raw and JSON output where
 * no width is used; for the many-row commands (pages --each, phys -l, the
 * phys -p list) that was most of their time, several times page-types' cost
 * for the same rows (#12). cli/output.c keeps the rows in libsmartcols and
 * prints the whole-table case with it; only batches of a stream come here.
 * Every function below copies one routine of util-linux 2.38's output
 * (fputs_nonblank, fputs_quoted_json, ul_jsonwrt_value_*), so the bytes are
 * the same: tests/cli compares both ways (PAGEMAP_OUT_SLOW=1 prints every
 * batch through libsmartcols) and tests/unit/test_out_rows.c the escaping.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "out_rows.h"

void obuf_add(struct obuf *b, const char *s, size_t n)
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

void obuf_pad(struct obuf *b, size_t n)
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

static void put_hex(struct obuf *b, const char *prefix, unsigned char c)
{
	char buf[8];

	obuf_add(b, buf, (size_t)snprintf(buf, sizeof(buf), "%s%02x", prefix, c));
}

/* util-linux's fputs_nonblank; the same <ctype.h> calls, so the same answer in any locale. */
void obuf_raw_cell(struct obuf *b, const char *s)
{
	const char *run = s;

	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (!isblank(c) && c != '\\' && isprint(c) && !iscntrl(c))
			continue;
		obuf_add(b, run, (size_t)(s - run));
		put_hex(b, "\\x", c);
		run = s + 1;
	}
	if (s)
		obuf_add(b, run, (size_t)(s - run));
}

/* util-linux's fputs_quoted_json: bytes from 0x7f up are copied, invalid UTF-8 included. */
static void json_quoted(struct obuf *b, const char *s, bool lower)
{
	const char *run;

	obuf_add(b, "\"", 1);
	for (run = s; *s; s++) {
		unsigned char c = (unsigned char)*s;
		const char *esc = NULL;

		if (c >= 0x20 && c != '"' && c != '\\' && !(lower && c >= 'A' && c <= 'Z'))
			continue;
		obuf_add(b, run, (size_t)(s - run));
		run = s + 1;
		switch (c) {
		case '"': esc = "\\\""; break;
		case '\\': esc = "\\\\"; break;
		case '\b': esc = "\\b"; break;
		case '\t': esc = "\\t"; break;
		case '\n': esc = "\\n"; break;
		case '\f': esc = "\\f"; break;
		case '\r': esc = "\\r"; break;
		default:
			if (c >= 'A' && c <= 'Z') {
				char l = (char)(c - 'A' + 'a');

				obuf_add(b, &l, 1);
			} else {
				put_hex(b, "\\u00", c);
			}
		}
		if (esc)
			obuf_str(b, esc);
	}
	obuf_add(b, run, (size_t)(s - run));
	obuf_add(b, "\"", 1);
}

void obuf_json_string(struct obuf *b, const char *s)
{
	if (s && *s)
		json_quoted(b, s, false);
	else
		obuf_add(b, "null", 4);
}

void obuf_json_number(struct obuf *b, const char *s)
{
	obuf_str(b, s && *s ? s : "null");
}

void obuf_json_bool(struct obuf *b, const char *s)
{
	bool f = !s || !*s || *s == '0' || *s == 'n' || *s == 'N';

	obuf_str(b, f ? "false" : "true");
}

void obuf_json_key(struct obuf *b, const char *name)
{
	json_quoted(b, name, true);
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

void out_fmt_u64(char *buf, uint64_t v, bool hex)
{
	char tmp[24], *p = tmp + sizeof(tmp);

	*--p = '\0';
	do {
		*--p = "0123456789abcdef"[hex ? v & 15 : v % 10];
		v = hex ? v >> 4 : v / 10;
	} while (v);
	if (hex) {
		*--p = 'x';
		*--p = '0';
	}
	memcpy(buf, p, (size_t)(tmp + sizeof(tmp) - p));
}
