/*
 * textsafe_check.h - what every output of cli/base/textsafe.c must be, checked independently of it (shared by
 * tests/unit/test_textsafe.c and tests/fuzz/fuzz_textsafe.c): valid UTF-8, each format's syntax, and the
 * original bytes back by the documented decoding. Include after cli/base/textsafe.c.
 */
#ifndef PM_TESTS_TEXTSAFE_CHECK_H
#define PM_TESTS_TEXTSAFE_CHECK_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct tc_buf {
	char *p;
	size_t len, cap;
};

static void tc_put(void *ctx, const char *s, size_t n)
{
	struct tc_buf *b = ctx;

	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			abort();
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

/* @s escaped in format @f, NUL-terminated, malloc'd; *len its length. */
static char *tc_escape(enum ts_format f, const char *s, size_t *len)
{
	struct tc_buf b = { 0 };

	tc_put(&b, "", 0);
	ts_escape(f, s, tc_put, &b);
	*len = b.len;
	return b.p;
}

/*
 * Valid UTF-8 by the definition, not by cli/base/textsafe.c's table: decode the bits, then refuse overlong
 * forms, surrogates and code points past U+10FFFF. Returns the sequence's length at @s, 0 if invalid;
 * *cp the code point.
 */
static size_t tc_utf8(const unsigned char *s, size_t n, unsigned long *cp)
{
	static const unsigned long min[] = { 0, 0, 0x80, 0x800, 0x10000 };
	size_t len, i;
	unsigned long v;

	if (!n)
		return 0;
	if (s[0] < 0x80)
		len = 1, v = s[0];
	else if ((s[0] & 0xe0) == 0xc0)
		len = 2, v = s[0] & 0x1f;
	else if ((s[0] & 0xf0) == 0xe0)
		len = 3, v = s[0] & 0x0f;
	else if ((s[0] & 0xf8) == 0xf0)
		len = 4, v = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (s[i] & 0x3f);
	}
	if (v < min[len] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return len;
}

static bool tc_valid_utf8(const char *s, size_t n)
{
	unsigned long cp;
	size_t k;

	for (; n; s += k, n -= k)
		if (!(k = tc_utf8((const unsigned char *)s, n, &cp)))
			return false;
	return true;
}

/* A C1 control character (U+0080 ... U+009F: bytes c2 80 ... c2 9f) in valid UTF-8 @s? */
static bool tc_has_c1(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i++)
		if ((unsigned char)s[i] == 0xc2 && (unsigned char)s[i + 1] >= 0x80 && (unsigned char)s[i + 1] <= 0x9f)
			return true;
	return false;
}

/* The documented decoding: \xHH of a control byte, of 5c or of 80 ... ff becomes its byte. */
static size_t tc_undo(const char *s, size_t n, char *out)
{
	size_t i = 0, o = 0;

	while (i < n) {
		unsigned v;

		if (i + 4 <= n && s[i] == '\\' && s[i + 1] == 'x' && strchr("0123456789abcdef", s[i + 2]) && s[i + 2] &&
		    strchr("0123456789abcdef", s[i + 3]) && s[i + 3] &&
		    ((v = (unsigned)strtoul((char[]){ s[i + 2], s[i + 3], 0 }, NULL, 16)) < 0x20 || v == 0x5c ||
		     v == 0x7f || v >= 0x80)) {
			out[o++] = (char)v;
			i += 4;
		} else {
			out[o++] = s[i++];
		}
	}
	return o;
}

static int tc_hex4(const char *p)
{
	int v = 0, i;

	for (i = 0; i < 4; i++) {
		char c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

/*
 * The inside of a JSON string (RFC 8259): no raw '"', '\\' only in its escapes, no raw control byte;
 * decoded into @out (the \u escapes seen are all below U+0080). False when not valid.
 */
static bool tc_json_decode(const char *s, size_t n, char *out, size_t *outn, bool html)
{
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		int v;

		if (c == '"' || c < 0x20 || (html && (c == '<' || c == '>' || c == '&')))
			return false;
		if (c == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] <= 0x9f)	/* a raw C1 control */
			return false;
		if (c != '\\') {
			out[o++] = (char)c;
			continue;
		}
		if (++i >= n)
			return false;
		switch (s[i]) {
		case '"': out[o++] = '"'; break;
		case '\\': out[o++] = '\\'; break;
		case '/': out[o++] = '/'; break;
		case 'b': out[o++] = '\b'; break;
		case 'f': out[o++] = '\f'; break;
		case 'n': out[o++] = '\n'; break;
		case 'r': out[o++] = '\r'; break;
		case 't': out[o++] = '\t'; break;
		case 'u':
			if (i + 4 >= n || (v = tc_hex4(s + i + 1)) < 0 || v >= 0x80 || v == 0)
				return false;
			out[o++] = (char)v;
			i += 4;
			break;
		default:
			return false;
		}
	}
	*outn = o;
	return true;
}

/* A Prometheus label value between its quotes: only \\ \" \n escapes, no raw '"' or newline; decoded. */
static bool tc_prom_decode(const char *s, size_t n, char *out, size_t *outn, bool help)
{
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		if ((!help && s[i] == '"') || s[i] == '\n')
			return false;
		if (s[i] != '\\') {
			out[o++] = s[i];
			continue;
		}
		if (++i >= n)
			return false;
		if (s[i] == 'n')
			out[o++] = '\n';
		else if (s[i] == '\\' || (!help && s[i] == '"'))
			out[o++] = s[i];
		else
			return false;
	}
	*outn = o;
	return true;
}

/* XML 1.0 text: entities only as written, no raw markup or quote, no character XML cannot hold; decoded. */
static bool tc_xml_decode(const char *s, size_t n, char *out, size_t *outn)
{
	static const struct {
		const char *ent;
		char c;
	} ents[] = { { "&amp;", '&' }, { "&lt;", '<' }, { "&gt;", '>' }, { "&quot;", '"' }, { "&#39;", '\'' } };
	size_t i, o = 0, k, e;
	unsigned long cp;

	for (i = 0; i < n; i += k) {
		if (!(k = tc_utf8((const unsigned char *)s + i, n - i, &cp)))
			return false;
		if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0xfffe || cp == 0xffff || (cp < 0x80 && strchr("<>\"'", (int)cp)))
			return false;
		if (cp != '&') {
			memcpy(out + o, s + i, k);
			o += k;
			continue;
		}
		for (e = 0; e < sizeof(ents) / sizeof(ents[0]); e++)
			if (!strncmp(s + i, ents[e].ent, strlen(ents[e].ent)))
				break;
		if (e == sizeof(ents) / sizeof(ents[0]))
			return false;
		out[o++] = ents[e].c;
		k = strlen(ents[e].ent);
	}
	*outn = o;
	return true;
}

/* What a terminal must not get: C0, DEL and C1 controls, or bytes that are not UTF-8. */
static bool tc_term_safe(const char *s, size_t n)
{
	unsigned long cp;
	size_t k;

	for (; n; s += k, n -= k)
		if (!(k = tc_utf8((const unsigned char *)s, n, &cp)) || cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
			return false;
	return true;
}

/* -r output: printable ASCII and no blank; every \xHH (any value: each backslash is escaped) decoded. */
static bool tc_raw_decode(const char *s, size_t n, char *out, size_t *outn)
{
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		if (s[i] <= 0x20 || s[i] >= 0x7f)
			return false;
		if (s[i] != '\\') {
			out[o++] = s[i];
			continue;
		}
		if (i + 3 >= n || s[i + 1] != 'x' || !strchr("0123456789abcdef", s[i + 2]) ||
		    !strchr("0123456789abcdef", s[i + 3]))
			return false;
		out[o++] = (char)strtoul((char[]){ s[i + 2], s[i + 3], 0 }, NULL, 16);
		i += 3;
	}
	*outn = o;
	return true;
}

/*
 * Every format of @in (NUL-terminated): valid UTF-8, its syntax, and @in back by the documented decoding
 * (all but TS_TERM, which is for eyes). Returns NULL or what failed.
 */
static const char *tc_check_all(const char *in)
{
	size_t inlen = strlen(in), n, dn = 0, un;
	char *out, *dec = malloc(4 * inlen + 64), *und = malloc(4 * inlen + 64);
	const char *why = NULL;
	int f;

	if (!dec || !und)
		abort();
	for (f = TS_TEXT; f <= TS_RAW && !why; f++) {
		out = tc_escape((enum ts_format)f, in, &n);
		if (strlen(out) != n || !tc_valid_utf8(out, n)) {
			why = "output is not valid UTF-8";
		} else if (tc_has_c1(out, n)) {
			why = "a raw C1 control (a terminal acts on it) in the output";
		} else if (f == TS_TEXT) {
			if (ts_text_changes(in) != (n != inlen || memcmp(out, in, n)))
				why = "ts_text_changes disagrees with TS_TEXT";
			dn = n;
			memcpy(dec, out, n);
		} else if (f == TS_JSON || f == TS_JSON_HTML) {
			if (!tc_json_decode(out, n, dec, &dn, f == TS_JSON_HTML))
				why = "not a valid JSON string";
		} else if (f == TS_PROM || f == TS_PROM_HELP) {
			if (!tc_prom_decode(out, n, dec, &dn, f == TS_PROM_HELP))
				why = "not a valid Prometheus label value";
		} else if (f == TS_XML) {
			if (!tc_xml_decode(out, n, dec, &dn))
				why = "not valid XML text";
		} else if (f == TS_RAW) {
			if (!tc_raw_decode(out, n, und, &un) || un != inlen || memcmp(und, in, inlen))
				why = "raw output is not printable ASCII without blanks, or does not decode to the name";
		} else if (!tc_term_safe(out, n)) {
			why = "a control byte would reach the terminal";
		}
		if (!why && f != TS_TERM && f != TS_RAW) {
			un = tc_undo(dec, dn, und);
			if (un != inlen || memcmp(und, in, inlen))
				why = "the decoding does not give the name back";
			else if (ts_unescape(dec, dn, und) != inlen || memcmp(und, in, inlen))
				why = "ts_unescape does not give the name back";
		}
		free(out);
	}
	free(dec);
	free(und);
	return why;
}

#endif
