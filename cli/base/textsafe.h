/*
 * textsafe.h - the one sanitizer for every name that leaves the program (comm, paths, cgroups, mapping
 * names), per output format.
 *
 * Names are bytes their owner chose: any process sets its comm and names its files, memfds and anonymous
 * mappings; a delegated user names cgroups. Every format gets them as valid UTF-8 in one rendering:
 * a byte that is not part of a valid UTF-8 sequence (RFC 3629: shortest form, no surrogates, at most
 * U+10FFFF) becomes the four characters \xHH (lower-case hex); so does each byte of a C1 control
 * character (U+0080 ... U+009F, which terminals act on) in every format, and a C0 control byte in the
 * formats that cannot carry it (Prometheus labels, XML, a terminal; JSON has its own \u00XX). Not
 * U+FFFD: two names must never become one label set, and the rendering must be undone exactly. For that,
 * a backslash in the name that would read as such an escape (a backslash followed by "x" and the
 * lower-case hex of a control byte, of '\\' (5c), or of a byte from 80 up) is itself written \x5c. Every
 * other backslash stays as it is, so systemd's "\x2d" in unit and cgroup names reaches JSON and
 * Prometheus unchanged. Decoding (ts_unescape): each such \xHH becomes its byte; nothing else changes.
 */
#ifndef PM_CLI_TEXTSAFE_H
#define PM_CLI_TEXTSAFE_H

#include <stddef.h>
#include <stdio.h>

enum ts_format {
	TS_TEXT,	/* the valid UTF-8 rendering above (bad bytes, C1) and nothing else: what JSON and
			   labels carry */
	TS_JSON,	/* inside a JSON string: TS_TEXT, then \" \\ \b \t \n \f \r and \u00XX for the
			   other control bytes, as libsmartcols escapes (so both JSON printers agree) */
	TS_JSON_HTML,	/* TS_JSON that may sit in an HTML <script>: also '<' '>' '&' and DEL as \u00XX */
	TS_PROM,	/* a Prometheus/OpenMetrics label value: TS_TEXT, then \\ \" and \n, the other C0
			   and C1 controls and DEL as \xHH (a scrape is read with curl, too) */
	TS_PROM_HELP,	/* Prometheus text format HELP: TS_PROM without the quote's escape */
	TS_XML,		/* XML/HTML text or attribute: TS_TEXT, the five entities, and what XML 1.0 cannot
			   hold or a terminal would act on (C0, DEL, C1, U+FFFE, U+FFFF) as \xHH per byte */
	TS_TERM,	/* a terminal: as util-linux's tables encode (mbs_safe_encode): C0, DEL, C1 and
			   invalid bytes as \xHH, a backslash before 'x' as \x5c; in an 8-bit locale
			   (MB_CUR_MAX 1, as the C locale pagemap runs in) every byte from 80 up as \xHH */
	TS_RAW,		/* a cell of -r output, byte for byte as libsmartcols' raw mode (fputs_nonblank):
			   blanks, '\\' and every byte <ctype.h> does not call printable as \xHH */
};

/* Where escaped text goes: @n bytes at @s. */
typedef void ts_put_fn(void *ctx, const char *s, size_t n);

/* Write the NUL-terminated @s (NULL is "") in format @f through @put. */
void ts_escape(enum ts_format f, const char *s, ts_put_fn *put, void *ctx);
/* The same into a stdio stream. */
void ts_fputs(enum ts_format f, const char *s, FILE *out);
/*
 * Would TS_TEXT change @s? False for the valid UTF-8 without an escape-like backslash that nearly
 * every name is: callers then pass @s on as it is.
 */
int ts_text_changes(const char *s);
/*
 * The length of the valid UTF-8 sequence at @s (at most @n bytes), 0 when the byte at @s starts none.
 * Sets *cp to the code point when @cp is not NULL.
 */
size_t ts_utf8_len(const unsigned char *s, size_t n, unsigned *cp);
/*
 * Undo the \xHH rendering of TS_TEXT, TS_PROM (after the format's own unescaping) and TS_XML (after
 * the entities): \x00 ... \x1f, \x5c, \x7f and \x80 ... \xff back to their bytes, into @out (room for @n
 * bytes: the result is never longer than @s). Returns the length. For tests and the documented promise.
 */
size_t ts_unescape(const char *s, size_t n, char *out);

#endif
