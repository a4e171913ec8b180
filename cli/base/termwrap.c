/*
 * termwrap.c - text to a terminal in lines that fit its width (notes on stderr, track's and wss's
 * headings): broken at spaces, as fmt(1) would, and only on a terminal, so that pipes and logs keep
 * one line per message for grep.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "cli.h"

unsigned cli_term_width(int fd)
{
	struct winsize ws;
	const char *cols = getenv("COLUMNS");

	if (!isatty(fd))
		return 0;
	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	if (cols && atoi(cols) > 0)
		return (unsigned)atoi(cols);
	return 80;
}

/* Terminal columns of @n bytes at @s: one per character (UTF-8 continuation bytes take none). */
static unsigned text_cols(const char *s, size_t n)
{
	unsigned w = 0;
	size_t i;

	for (i = 0; i < n; i++)
		w += ((unsigned char)s[i] & 0xc0) != 0x80;
	return w;
}

/* Bytes of @s that fill at most @cols columns, ending on a character's first byte (at least one character). */
static size_t fit_bytes(const char *s, size_t n, unsigned cols)
{
	size_t i = 0;
	unsigned w = 0;

	while (i < n) {
		size_t j = i + 1;

		while (j < n && ((unsigned char)s[j] & 0xc0) == 0x80)
			j++;
		if (w + 1 > cols && i > 0)
			break;
		w++;
		i = j;
	}
	return i;
}

/*
 * One line (no '\n') of @n bytes, broken at spaces to @width: the blanks between two words on one line
 * stay as they were (aligned fields), those at a break go. A word wider than a line is cut where it
 * stands, unless too little of the line is left.
 */
static void wrap_line(FILE *f, const char *s, size_t n, unsigned width, const char *indent)
{
	unsigned ind = text_cols(indent, strlen(indent)), col = 0, ww, gap = 0;
	size_t i = 0, j, k, wl;
	bool fresh = true;	/* at a line's start: no blank before the word */
	const char *w;

	while (i < n) {
		size_t blanks = i;

		while (i < n && s[i] == ' ')
			i++;
		if (i == n)	/* trailing blanks */
			break;
		gap = (unsigned)(i - blanks);
		w = blanks ? s + i : s;	/* the line's leading blanks belong to its first word */
		for (j = i; j < n && s[j] != ' '; j++)
			;
		wl = j - (size_t)(w - s);
		ww = text_cols(w, wl);
		if (!fresh && col + gap + ww > width && (ww <= width - ind || col + gap + 8 >= width)) {
			fprintf(f, "\n%s", indent);
			col = ind;
			fresh = true;
		}
		if (!fresh) {
			fprintf(f, "%*s", (int)gap, "");
			col += gap;
		}
		while (col + ww > width && width > col + 8) {	/* a word wider than a line (a path): cut */
			k = fit_bytes(w, wl, width - col);
			fwrite(w, 1, k, f);
			fprintf(f, "\n%s", indent);
			col = ind;
			w += k, wl -= k;
			ww = text_cols(w, wl);
		}
		fwrite(w, 1, wl, f);
		col += ww;
		fresh = false;
		i = j;
	}
}

void cli_fputs_wrapped(FILE *f, const char *text, unsigned width, const char *indent)
{
	const char *nl;

	if (!width || width < 20) {
		fputs(text, f);
		return;
	}
	while (*text) {
		size_t n = (nl = strchr(text, '\n')) ? (size_t)(nl - text) : strlen(text);

		wrap_line(f, text, n, width, indent);
		if (!nl)
			break;
		fputc('\n', f);
		text = nl + 1;
	}
}
