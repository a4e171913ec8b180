/* out_rows.h - cells formatted as libsmartcols 2.38 prints them, for out_stream.c's own rows. */
#ifndef PM_CLI_OUT_ROWS_H
#define PM_CLI_OUT_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "out_human.h"	/* out_fmt_u64 */

/* A growing byte buffer; after a failed allocation it keeps what it has and sets oom. */
struct obuf {
	char *p;
	size_t len, cap;
	bool oom;
};

/* obuf_add's way when the buffer must grow (or @n is 0). */
void obuf_grow_add(struct obuf *b, const char *s, size_t n);
/*
 * Copy @n bytes, 1 to 32, by two fixed-size copies that overlap (inlined moves, no library call; they read
 * and write only the @n bytes): a cell is a few bytes, and a library memcpy per cell was a tenth of `pages`.
 */
static inline void obuf_copy_short(char *d, const char *s, size_t n)
{
	if (n >= 16) {
		memcpy(d, s, 16);
		memcpy(d + n - 16, s + n - 16, 16);
	} else if (n >= 8) {
		memcpy(d, s, 8);
		memcpy(d + n - 8, s + n - 8, 8);
	} else if (n >= 4) {
		memcpy(d, s, 4);
		memcpy(d + n - 4, s + n - 4, 4);
	} else {
		d[0] = s[0];
		d[n / 2] = s[n / 2];
		d[n - 1] = s[n - 1];
	}
}

/* Append @n bytes of @s. Inline: a table row is a dozen small appends, and a call each was a tenth of `pages`. */
static inline void obuf_add(struct obuf *b, const char *s, size_t n)
{
	if (n && b->len + n <= b->cap) {
		if (n <= 32)
			obuf_copy_short(b->p + b->len, s, n);
		else
			memcpy(b->p + b->len, s, n);
		b->len += n;
		return;
	}
	obuf_grow_add(b, s, n);
}
void obuf_str(struct obuf *b, const char *s);
/* obuf_pad's way when the buffer must grow or @n is long. */
void obuf_grow_pad(struct obuf *b, size_t n);
/*
 * Append @n spaces. Inline, and 32 spaces stored at once where the buffer has room for them (those
 * past @n are not counted, so the next append writes over them): a library memset per padded cell
 * was a tenth of `pages`.
 */
static inline void obuf_pad(struct obuf *b, size_t n)
{
	static const char spaces[] = "                                ";	/* 32, and the NUL */

	if (n <= sizeof(spaces) - 1 && b->cap - b->len >= sizeof(spaces) - 1) {
		memcpy(b->p + b->len, spaces, sizeof(spaces) - 1);
		b->len += n;
		return;
	}
	obuf_grow_pad(b, n);
}
void obuf_free(struct obuf *b);

/* A raw-mode cell (NULL is empty): blanks, '\\' and what is not printable as \xHH (its fputs_nonblank). */
void obuf_raw_cell(struct obuf *b, const char *s);
/*
 * A JSON string: "..." with '"', '\\' and control bytes escaped as libsmartcols does, and bytes that are
 * not UTF-8 as \\xHH text (cli/base/textsafe.h); NULL or "" is null.
 */
void obuf_json_string(struct obuf *b, const char *s);
/* A JSON number cell: the text as it is; NULL or "" is null. */
void obuf_json_number(struct obuf *b, const char *s);
/* A list "1,640,700" as the JSON array [1, 640, 700] ([1,640,700] when @compact); "" or NULL: null. */
void obuf_json_numbers(struct obuf *b, const char *s, bool compact);
/* A JSON boolean cell: false for NULL, "", and text starting with '0', 'n' or 'N'; true otherwise. */
void obuf_json_bool(struct obuf *b, const char *s);
/* A JSON key, lower-cased and quoted (as libsmartcols names a column's values). */
void obuf_json_name(struct obuf *b, const char *name);
/* The same with ": " after it, as libsmartcols' JSON has it. */
void obuf_json_key(struct obuf *b, const char *name);


/*
 * Does @s print in an aligned table as its bytes, one column each (printable
 * ASCII, no '\\', which libsmartcols may encode)? Sets *len to its bytes.
 * NULL is the empty cell.
 */
bool out_cell_plain(const char *s, size_t *len);

#endif
