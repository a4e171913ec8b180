/* test_textsafe.c - cli/base/textsafe.c, the one output sanitizer: hostile bytes in, valid output and the name back. */
#include <locale.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../harness.h"

#include "../../cli/base/textsafe.c"
#include "../textsafe_check.h"

/* @in in format @f must be exactly @want. */
static int same(enum ts_format f, const char *in, const char *want)
{
	size_t n;
	char *got = tc_escape(f, in, &n);
	int ok = !strcmp(got, want);

	if (!ok)
		printf("  format %d of \"%s\": got \"%s\", want \"%s\"\n", f, in, got, want);
	free(got);
	return ok;
}

/* The validator agrees with the definition on every 1-, 2- and 3-byte string and on 4-byte edges. */
static int test_utf8_exhaustive(void)
{
	unsigned char s[4];
	unsigned long want_cp;
	unsigned cp;
	uint32_t v, bad = 0;

	for (v = 0; v < 1u << 24; v++) {
		size_t n = v < 256 ? 1 : v < 65536 ? 2 : 3, a, b;

		s[0] = (unsigned char)(v >> (8 * (n - 1)));
		s[1] = (unsigned char)(v >> (8 * (n - 2) & 31));
		s[2] = (unsigned char)v;
		if (n == 2)
			s[1] = (unsigned char)v, s[0] = (unsigned char)(v >> 8);
		a = ts_utf8_len(s, n, &cp);
		b = tc_utf8(s, n, &want_cp);
		if (a != b || (a && cp != want_cp))
			bad++;
	}
	/* Four bytes: every lead byte with the continuation edges of each position. */
	static const unsigned char edge[] = { 0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xff };
	size_t i, j, k;

	for (v = 0; v < 256; v++)
		for (i = 0; i < sizeof(edge); i++)
			for (j = 0; j < sizeof(edge); j++)
				for (k = 0; k < sizeof(edge); k++) {
					unsigned char q[4] = { (unsigned char)v, edge[i], edge[j], edge[k] };

					if (ts_utf8_len(q, 4, &cp) != tc_utf8(q, 4, &want_cp))
						bad++;
				}
	CHECK_EQ_U64(bad, 0);
	return T_PASS;
}

/* Each kind of ill-formed UTF-8 spelt out: truncated, overlong, surrogates, past U+10FFFF. */
static int test_invalid_spelled_out(void)
{
	CHECK(same(TS_TEXT, "\xff", "\\xff"));
	CHECK(same(TS_TEXT, "a\xe2\x82", "a\\xe2\\x82"));			/* truncated at the end */
	CHECK(same(TS_TEXT, "\xe2\x82z", "\\xe2\\x82z"));			/* truncated before ASCII */
	CHECK(same(TS_TEXT, "\xc0\xaf\xe0\x80\xaf", "\\xc0\\xaf\\xe0\\x80\\xaf"));	/* overlong '/' */
	CHECK(same(TS_TEXT, "\xed\xa0\x80\xed\xbf\xbf", "\\xed\\xa0\\x80\\xed\\xbf\\xbf"));	/* surrogates */
	CHECK(same(TS_TEXT, "\xf4\x90\x80\x80\xf5\x80", "\\xf4\\x90\\x80\\x80\\xf5\\x80"));	/* past U+10FFFF */
	CHECK(same(TS_TEXT, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf", "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf"));
	CHECK(same(TS_TEXT, "\xef\xbf\xbe\xc2\xa0", "\xef\xbf\xbe\xc2\xa0"));	/* valid: kept in JSON */
	CHECK(same(TS_JSON, "\xc2\x9b" "2J\xc2\x9f", "\\\\xc2\\\\x9b" "2J\\\\xc2\\\\x9f"));	/* C1 (CSI): never raw */
	return T_PASS;
}

/* A backslash is escaped only where it would read as an escape: systemd's names stay as they are. */
static int test_backslash(void)
{
	CHECK(same(TS_TEXT, "dev-disk-by\\x2duuid", "dev-disk-by\\x2duuid"));
	CHECK(same(TS_TEXT, "\\xff", "\\x5cxff"));
	CHECK(same(TS_TEXT, "\\x5c", "\\x5cx5c"));
	CHECK(same(TS_TEXT, "\\x1b\\x7f\\x20", "\\x5cx1b\\x5cx7f\\x20"));
	CHECK(same(TS_TEXT, "\\xFF\\x\\x8\\", "\\xFF\\x\\x8\\"));		/* upper case, short: not escapes */
	CHECK(same(TS_TEXT, "\\\xff", "\\\\xff"));			/* a backslash before a bad byte */
	CHECK(same(TS_JSON, "\\x2d\\xff", "\\\\x2d\\\\x5cxff"));
	CHECK(same(TS_TERM, "\\x2d", "\\x5cx2d"));			/* as util-linux's tables */
	CHECK(ts_text_changes("\\x80") && !ts_text_changes("\\x2d \xc3\xa9") && ts_text_changes("\xff"));
	return T_PASS;
}

/* Each format's own escapes, spelled out. */
static int test_formats(void)
{
	const char *h = "q\"b\\s\n\t\x1b\x7f<&>'\xff";

	CHECK(same(TS_JSON, h, "q\\\"b\\\\s\\n\\t\\u001b\x7f<&>'\\\\xff"));
	CHECK(same(TS_JSON_HTML, h, "q\\\"b\\\\s\\n\\t\\u001b\\u007f\\u003c\\u0026\\u003e'\\\\xff"));
	CHECK(same(TS_PROM, h, "q\\\"b\\\\s\\n\\\\x09\\\\x1b\\\\x7f<&>'\\\\xff"));
	CHECK(same(TS_PROM_HELP, h, "q\"b\\\\s\\n\\\\x09\\\\x1b\\\\x7f<&>'\\\\xff"));
	CHECK(same(TS_XML, h, "q&quot;b\\s\\x0a\\x09\\x1b\\x7f&lt;&amp;&gt;&#39;\\xff"));
	CHECK(same(TS_TERM, h, "q\"b\\s\\x0a\\x09\\x1b\\x7f<&>'\\xff"));
	CHECK(same(TS_RAW, h, "q\"b\\x5cs\\x0a\\x09\\x1b\\x7f<&>'\\xff"));
	/* C1 controls (CSI, OSC) act in terminals; XML 1.0 has no U+FFFF. */
	CHECK(same(TS_TERM, "\xc2\x9b" "2J", "\\xc2\\x9b" "2J"));
	CHECK(same(TS_XML, "\xef\xbf\xbf", "\\xef\\xbf\\xbf"));
	CHECK(same(TS_PROM, "\xc2\x9d", "\\\\xc2\\\\x9d"));
	CHECK(same(TS_JSON, "", "") && same(TS_JSON, NULL, ""));
	return T_PASS;
}

/*
 * A terminal in an 8-bit locale (the C locale pagemap runs in) reads bytes alone: U+201B (e2 80 9b) ends in
 * CSI there. TS_TERM then escapes every byte from 80 up, as util-linux does when MB_CUR_MAX is 1; in a UTF-8
 * locale it keeps valid UTF-8 that is no C1 control.
 */
static int test_term_locale(void)
{
	CHECK(setlocale(LC_CTYPE, "C") != NULL);
	CHECK(same(TS_TERM, "\xe2\x80\x9b" "2J", "\\xe2\\x80\\x9b" "2J"));
	CHECK(same(TS_TERM, "caf\xc3\xa9 \\x2d\xff", "caf\\xc3\\xa9 \\x5cx2d\\xff"));
	CHECK(same(TS_TEXT, "\xe2\x80\x9b", "\xe2\x80\x9b"));		/* JSON and labels: not a terminal's */
	CHECK(same(TS_XML, "\xc3\xa9", "\xc3\xa9"));
	if (!setlocale(LC_CTYPE, "C.UTF-8") && !setlocale(LC_CTYPE, "en_US.UTF-8")) {
		setlocale(LC_CTYPE, "C");
		return t_skip("no UTF-8 locale (C.UTF-8, en_US.UTF-8) to compare with");
	}
	CHECK(same(TS_TERM, "\xe2\x80\x9b" "2J", "\xe2\x80\x9b" "2J"));
	CHECK(same(TS_TERM, "caf\xc3\xa9\xc2\x9b\xff", "caf\xc3\xa9\\xc2\\x9b\\xff"));
	setlocale(LC_CTYPE, "C");
	return T_PASS;
}

/* Every byte value alone, and after a lead byte, in every format: valid, and the name back. */
static int test_every_byte(void)
{
	char s[4];
	unsigned b, lead, fails = 0;
	static const unsigned char leads[] = { 'a', '\\', 0xc2, 0xe0, 0xed, 0xf0, 0xf4 };
	const char *why;

	for (b = 1; b < 256; b++) {
		s[0] = (char)b, s[1] = 0;
		if ((why = tc_check_all(s)) && fails++ < 5)
			printf("  byte 0x%02x: %s\n", b, why);
		for (lead = 0; lead < sizeof(leads); lead++) {
			s[0] = (char)leads[lead], s[1] = (char)b, s[2] = 0;
			if ((why = tc_check_all(s)) && fails++ < 5)
				printf("  bytes 0x%02x 0x%02x: %s\n", leads[lead], b, why);
		}
	}
	CHECK_EQ_U64(fails, 0);
	return T_PASS;
}

/* Random names from an alphabet of the troublesome pieces: the same promises. */
static int test_random_names(void)
{
	static const char *const piece[] = { "\\", "x", "5c", "ff", "1b", "2d", "8", "\xff", "\xc3", "\xa9", "\xe2\x82",
					     "\xed\xa0\x80", "\xf4\x90", "\"", "\n", "\x1b", "\x7f", "<", "&", "a", " ",
					     "\xc2\x9b", "\xef\xbf\xbf", "\xf0\x9f\x98\x80" };
	char name[256];
	unsigned long seed = 12345;
	size_t i, k, fails = 0;
	const char *why;

	for (i = 0; i < 200000; i++) {
		size_t len = 0, count;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		count = (seed >> 33) % 12;
		for (k = 0; k < count; k++) {
			const char *p;

			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			p = piece[(seed >> 33) % (sizeof(piece) / sizeof(piece[0]))];
			memcpy(name + len, p, strlen(p));
			len += strlen(p);
		}
		name[len] = '\0';
		if ((why = tc_check_all(name)) && fails++ < 5)
			printf("  random name %zu: %s\n", i, why);
	}
	CHECK_EQ_U64(fails, 0);
	return T_PASS;
}

T_MAIN(T(test_utf8_exhaustive), T(test_invalid_spelled_out), T(test_backslash), T(test_formats), T(test_term_locale),
       T(test_every_byte), T(test_random_names))
