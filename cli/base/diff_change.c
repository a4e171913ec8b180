/*
 * diff_change.c - the words of a diff's changes, for `diff --pages` and `render --diff`: one table, so the
 * listing and the picture name each stretch of pages alike (the library decides which change it is).
 */
#include <string.h>
#include "cli.h"

/* Column order, as `pagemap diff` prints them; the first that holds bytes is the one a picture colours. */
static const char *const names[DC_N] = {
	[DC_APPEARED] = "appeared", [DC_FREED] = "freed",	  [DC_SWAPOUT] = "swapout",
	[DC_SWAPIN] = "swapin",	    [DC_WRITTEN] = "written",	  [DC_NEW_FRAME] = "new_frame",
	[DC_THP_FORMED] = "thp_formed", [DC_THP_SPLIT] = "thp_split", [DC_UFFD_WP] = "uffd_wp",
};

static uint64_t value(const struct pm_diff_bytes *b, enum diff_change c)
{
	switch (c) {
	case DC_APPEARED: return b->appeared;
	case DC_FREED: return b->freed;
	case DC_SWAPOUT: return b->swapout;
	case DC_SWAPIN: return b->swapin;
	case DC_WRITTEN: return b->written;
	case DC_NEW_FRAME: return b->moved;
	case DC_THP_FORMED: return b->thp_formed;
	case DC_THP_SPLIT: return b->thp_split;
	case DC_UFFD_WP: return b->uffdwp;
	default: return 0;
	}
}

enum diff_change diff_change_first(const struct pm_diff_bytes *b)
{
	unsigned c;

	for (c = 0; c < DC_N; c++)
		if (value(b, (enum diff_change)c))
			return (enum diff_change)c;
	return DC_N;
}

const char *diff_change_words(const struct pm_diff_bytes *b, char *buf, size_t size)
{
	size_t len = 0, n;
	unsigned c;

	buf[0] = '\0';
	for (c = 0; c < DC_N; c++) {
		if (!value(b, (enum diff_change)c))
			continue;
		n = strlen(names[c]);
		if (len + n + 2 > size)
			break;
		if (len)
			buf[len++] = ',';
		memcpy(buf + len, names[c], n + 1);
		len += n;
	}
	return buf;
}
