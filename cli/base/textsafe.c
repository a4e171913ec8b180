/* textsafe.c - the one sanitizer for names in every output format: valid UTF-8, bad bytes as \xHH (textsafe.h). */
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "textsafe.h"

size_t ts_utf8_len(const unsigned char *s, size_t n, unsigned *cp)
{
	unsigned c, lo = 0x80, hi = 0xbf, v;
	size_t len, i;

	if (n == 0)
		return 0;
	c = s[0];
	if (c < 0x80)
		len = 1, v = c;
	else if (c >= 0xc2 && c <= 0xdf)
		len = 2, v = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, v = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, v = c & 0x07;
	else
		return 0;	/* a continuation byte, C0/C1 (overlong two bytes), F5 and up (past U+10FFFF) */
	/* The second byte's range rules out overlong forms, surrogates and what lies past U+10FFFF. */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if (s[i] < lo || s[i] > hi)
			return 0;
		v = v << 6 | (s[i] & 0x3f);
		lo = 0x80, hi = 0xbf;
	}
	if (cp)
		*cp = v;
	return len;
}

static int ts_hexval(unsigned char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/*
 * Does the text after a backslash (@p) read as one of the escapes ts_unescape decodes: "x" and a
 * lower-case hex pair for a control byte (00-1f, 7f), the backslash (5c) or a byte from 80 up? Such a
 * backslash is written \x5c, so that decoding stays exact.
 */
static bool ts_esc_tail(const unsigned char *p)
{
	int hi, lo, v;

	if (p[0] != 'x' || (hi = ts_hexval(p[1])) < 0 || (lo = ts_hexval(p[2])) < 0)
		return false;
	v = hi << 4 | lo;
	return v < 0x20 || v == 0x5c || v == 0x7f || v >= 0x80;
}

/* A format's own escape for a backslash: JSON and Prometheus double it. */
static bool ts_doubles_backslash(enum ts_format f)
{
	return f == TS_JSON || f == TS_JSON_HTML || f == TS_PROM || f == TS_PROM_HELP;
}

/* The text \xHH for byte @c, its backslash written as format @f writes one. */
static void ts_put_hex(enum ts_format f, unsigned char c, ts_put_fn *put, void *ctx)
{
	char buf[5] = { '\\', 'x', "0123456789abcdef"[c >> 4], "0123456789abcdef"[c & 15], 0 };

	if (ts_doubles_backslash(f))
		put(ctx, "\\", 1);
	put(ctx, buf, 4);
}

/* JSON's escape of ASCII @c: the short forms, else \u00XX (lower-case hex, as libsmartcols). */
static void ts_put_json_ascii(unsigned char c, ts_put_fn *put, void *ctx)
{
	static const char shortc[] = "\b\t\n\f\r\"", shortn[] = "btnfr\"";
	const char *p = c ? strchr(shortc, c) : NULL;
	char buf[7] = { '\\', 'u', '0', '0', "0123456789abcdef"[c >> 4], "0123456789abcdef"[c & 15], 0 };

	if (p) {
		char two[2] = { '\\', shortn[p - shortc] };

		put(ctx, two, 2);
	} else {
		put(ctx, buf, 6);
	}
}

/* Is ASCII byte @c (not a backslash) escaped in format @f? */
static bool ts_ascii_escaped(enum ts_format f, unsigned char c)
{
	switch (f) {
	case TS_JSON_HTML:
		return c < 0x20 || c == '"' || c == '<' || c == '>' || c == '&' || c == 0x7f;
	case TS_JSON:
		return c < 0x20 || c == '"';
	case TS_PROM:
		return c < 0x20 || c == 0x7f || c == '"';
	case TS_PROM_HELP:
		return c < 0x20 || c == 0x7f;
	case TS_XML:
		return c < 0x20 || c == 0x7f || c == '&' || c == '<' || c == '>' || c == '"' || c == '\'';
	case TS_TERM:
		return c < 0x20 || c == 0x7f;
	case TS_TEXT:
	default:
		return false;
	}
}

/* Write the escape of ASCII byte @c, one ts_ascii_escaped() says format @f escapes. */
static void ts_put_ascii(enum ts_format f, unsigned char c, ts_put_fn *put, void *ctx)
{
	static const char *const ent[] = { ['&'] = "&amp;", ['<'] = "&lt;", ['>'] = "&gt;",
					   ['"'] = "&quot;", ['\''] = "&#39;" };

	if (f == TS_JSON || f == TS_JSON_HTML)
		ts_put_json_ascii(c, put, ctx);
	else if ((f == TS_PROM || f == TS_PROM_HELP) && (c == '\n' || c == '"'))
		put(ctx, c == '\n' ? "\\n" : "\\\"", 2);
	else if (f == TS_XML && c < sizeof(ent) / sizeof(ent[0]) && ent[c])
		put(ctx, ent[c], strlen(ent[c]));
	else
		ts_put_hex(f, c, put, ctx);
}

/* Is the valid character @cp (@n bytes) escaped byte by byte in format @f? */
static bool ts_hex_char(enum ts_format f, unsigned cp)
{
	/*
	 * C1 controls (U+0080 ... U+009F: CSI, OSC) act in terminals, and JSON, a scrape and tables are
	 * all read on one: in every format. XML 1.0 has no U+FFFE, U+FFFF.
	 */
	if (cp >= 0x80 && cp <= 0x9f)
		return true;
	if (f == TS_XML || f == TS_TERM || f == TS_PROM || f == TS_PROM_HELP)
		return cp == 0xfffe || cp == 0xffff;
	return false;
}

/* util-linux's fputs_nonblank, byte by byte: the same <ctype.h> calls, so the same answer in any locale. */
static void ts_raw(const unsigned char *s, ts_put_fn *put, void *ctx)
{
	const unsigned char *run = s;

	for (; *s; s++) {
		if (!isblank(*s) && *s != '\\' && isprint(*s) && !iscntrl(*s))
			continue;
		put(ctx, (const char *)run, (size_t)(s - run));
		ts_put_hex(TS_RAW, *s, put, ctx);
		run = s + 1;
	}
	put(ctx, (const char *)run, (size_t)(s - run));
}

void ts_escape(enum ts_format f, const char *str, ts_put_fn *put, void *ctx)
{
	const unsigned char *s = (const unsigned char *)(str ? str : ""), *run = s;
	size_t left = strlen((const char *)s), n, i;
	bool eight_bit;
	unsigned cp;

	if (f == TS_RAW) {
		ts_raw(s, put, ctx);
		return;
	}
	/*
	 * A terminal whose locale is 8-bit (MB_CUR_MAX 1: the C locale this program runs in, or Latin-1)
	 * reads each byte alone: the continuation byte 9b of U+201B (e2 80 9b) is CSI there. As util-linux's
	 * mbs_safe_encode, and so as the tables: every byte from 80 up as \xHH.
	 */
	eight_bit = f == TS_TERM && MB_CUR_MAX == 1;

	for (; *s; s += n, left -= n) {
		n = 1;
		if (*s == '\\') {
			if (f == TS_TERM ? s[1] != 'x' : !ts_esc_tail(s + 1)) {
				if (!ts_doubles_backslash(f))
					continue;
				put(ctx, (const char *)run, (size_t)(s - run));
				put(ctx, "\\\\", 2);
			} else {
				put(ctx, (const char *)run, (size_t)(s - run));
				ts_put_hex(f, '\\', put, ctx);
			}
		} else if (*s < 0x80) {
			if (!ts_ascii_escaped(f, *s))
				continue;
			put(ctx, (const char *)run, (size_t)(s - run));
			ts_put_ascii(f, *s, put, ctx);
		} else if (!eight_bit && (n = ts_utf8_len(s, left, &cp))) {
			if (!ts_hex_char(f, cp))
				continue;
			put(ctx, (const char *)run, (size_t)(s - run));
			for (i = 0; i < n; i++)
				ts_put_hex(f, s[i], put, ctx);
		} else {
			n = 1;
			put(ctx, (const char *)run, (size_t)(s - run));
			ts_put_hex(f, *s, put, ctx);
		}
		run = s + n;
	}
	put(ctx, (const char *)run, (size_t)(s - run));
}

static void ts_put_file(void *ctx, const char *s, size_t n)
{
	if (n)
		fwrite(s, 1, n, ctx);
}

void ts_fputs(enum ts_format f, const char *s, FILE *out)
{
	ts_escape(f, s, ts_put_file, out);
}

int ts_text_changes(const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	size_t left = strlen((const char *)s), n;
	unsigned cp;

	for (; *s; s += n, left -= n) {
		if (*s < 0x80) {
			n = 1;
			if (*s == '\\' && ts_esc_tail(s + 1))
				return 1;
		} else if (!(n = ts_utf8_len(s, left, &cp)) || ts_hex_char(TS_TEXT, cp)) {
			return 1;
		}
	}
	return 0;
}

size_t ts_unescape(const char *str, size_t n, char *out)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, o = 0;

	while (i < n) {
		if (s[i] == '\\' && n - i >= 4 && ts_esc_tail(s + i + 1)) {
			out[o++] = (char)(ts_hexval(s[i + 2]) << 4 | ts_hexval(s[i + 3]));
			i += 4;
		} else {
			out[o++] = (char)s[i++];
		}
	}
	return o;
}
