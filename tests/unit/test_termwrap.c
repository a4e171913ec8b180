/* test_termwrap.c - cli/base/termwrap.c: text broken to a terminal's width keeps every word and its order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../harness.h"

#include "../../cli/base/termwrap.c"

/* @text wrapped to @width with @indent, as a string to free. */
static char *wrapped(const char *text, unsigned width, const char *indent)
{
	char *buf = NULL;
	size_t len;
	FILE *m = open_memstream(&buf, &len);

	cli_fputs_wrapped(m, text, width, indent);
	fclose(m);
	return buf;
}

/* Widest line of @s in terminal columns. */
static unsigned widest(const char *s)
{
	unsigned w = 0;

	while (*s) {
		size_t n = strcspn(s, "\n");
		unsigned c = text_cols(s, n);

		w = c > w ? c : w;
		s += n + (s[n] == '\n');
	}
	return w;
}

/* @got, blanks and line breaks aside, is @want (only blanks and breaks were changed). */
static int same_text(const char *got, const char *want)
{
	for (;;) {
		while (*got == ' ' || *got == '\n')
			got++;
		while (*want == ' ' || *want == '\n')
			want++;
		if (*got != *want)
			return 0;
		if (!*got)
			return 1;
		got++, want++;
	}
}

static int test_fits(void)
{
	static const char *texts[] = {
		"pagemap: track: process 13629 by uffd (uffd: async write-protect + PAGEMAP_SCAN; the userfaultfd is "
		"made inside PID 13629 by ptrace (it stops once, briefly)); this perturbs it: its writable pages are "
		"write-protected (a minor fault on the first write to each page per interval)",
		"#   estimated cost to it: 0.0% (0 faults x 0.9 us, scans holding its page tables up to 0.0 ms at once)",
		"     50968 FILE          2 sys/devices/virtual/memory_tiering/memory_tier4/nodelist/\xc3\xa9\xc3\xa9"
		"\xc3\xa9/ddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd",
		"\n# t=0.2s\nshort\n",
		"",
	};
	unsigned widths[] = { 20, 40, 80, 132 };

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		for (size_t k = 0; k < sizeof(widths) / sizeof(widths[0]); k++) {
			char *got = wrapped(texts[i], widths[k], "  ");

			CHECK(widest(got) <= widths[k]);
			CHECK(same_text(got, texts[i]));
			free(got);
		}
	return T_PASS;
}

static int test_as_is(void)
{
	char *got;

	/* width 0 (a pipe): the text as it is, however long */
	got = wrapped("a  b   c\n", 0, "  ");
	CHECK_STR(got, "a  b   c\n");
	free(got);
	/* blanks between words on one line stay (aligned fields); at a break they go; leading blanks stay */
	got = wrapped("   12 FILE   3 path/to/a/file", 24, "        ");
	CHECK_STR(got, "   12 FILE   3\n        path/to/a/file");
	free(got);
	/* a line that fits is untouched */
	got = wrapped("# window 1 of 2, t=0.2s", 80, "#  ");
	CHECK_STR(got, "# window 1 of 2, t=0.2s");
	free(got);
	/* a word wider than a line is cut where it stands, continuation lines indented */
	got = wrapped("x abcdefghijklmnopqrstuvwxyz0123456789", 20, "  ");
	CHECK_STR(got, "x abcdefghijklmnopqr\n  stuvwxyz0123456789");
	free(got);
	return T_PASS;
}

T_MAIN(T(test_fits), T(test_as_is))
