/*
 * flag_lack_words.c - why a page flag cannot be told, in words: pm_flag_lack()'s answer as the
 * sentence a user reads beside a column or field shown as unknown, from the flag's kernel facts.
 */
#include <errno.h>
#include <stdio.h>
#include "base.h"

static const struct pm_flag_fact *fact_of(uint32_t flag)
{
	const struct pm_flag_fact *x;
	size_t i, n;

	for (x = pm_flag_facts(&n), i = 0; i < n; i++)
		if (x[i].bit == flag)
			return &x[i];
	return NULL;
}

/* The words of @lack, whose bit @what names: a static string or a format of @x's kernel. */
static void lack_words(const struct pm_flag_fact *x, int lack, bool scan, const char *what,
		       char *buf, size_t size)
{
	bool sd = x->needs & PM_NEED_SOFT_DIRTY;
	const char *s;

	switch (lack) {
	case PM_LACK_NONE:
		s = "it can be told";
		break;
	case PM_LACK_KERNEL:
		snprintf(buf, size, "%s came with Linux %u.%u", what, x->since_major,
			 x->since_minor);
		return;
	case PM_LACK_LAYOUT:
		snprintf(buf, size, "this pagemap layout has no %s bit", what);
		return;
	case PM_LACK_CONFIG:
		s = sd ? "kernel built without CONFIG_MEM_SOFT_DIRTY" :
			 "the kernel refuses MADV_GUARD_INSTALL";
		break;
	case PM_LACK_FRAMES:
		s = scan ? "PFNs are hidden" : "PFNs are hidden and the pread back end needs them";
		break;
	case PM_LACK_ZERO_PFN:
		s = "the zero page's frame is not known";
		break;
	case PM_LACK_ENTRIES:
		s = "the scan back end was not asked to read entries";
		break;
	default:
		s = "PAGEMAP_SCAN here does not report it";
	}
	snprintf(buf, size, "%s", s);
}

char *pm_flag_lack_str(uint32_t flag, int lack, const struct pm_read_how *how, char *buf,
		       size_t size)
{
	const struct pm_flag_fact *x = fact_of(flag);
	char what[32];

	if (!x || lack < PM_LACK_NONE || lack > PM_LACK_SCAN || !buf || !size) {
		errno = EINVAL;
		return NULL;
	}
	/* Bit 55 is older than soft-dirty (it held the page shift): name the flag, not the bit. */
	if (x->needs & PM_NEED_SOFT_DIRTY)
		snprintf(what, sizeof(what), "soft-dirty");
	else
		snprintf(what, sizeof(what), "bit %d", x->raw_bit);
	lack_words(x, lack, how && how->scan, what, buf, size);
	return buf;
}
