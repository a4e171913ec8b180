/*
 * flag_lack_words.c - why a page flag cannot be told, in words: pm_flag_lack()'s answer as the sentence a
 * user reads beside a column or field shown as unknown, from the flag's kernel facts.
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

char *pm_flag_lack_str(uint32_t flag, int lack, const struct pm_read_how *how, char *buf, size_t size)
{
	const struct pm_flag_fact *x = fact_of(flag);
	bool sd, scan = how && how->scan;
	char what[32];

	if (!x || lack < PM_LACK_NONE || lack > PM_LACK_SCAN || !buf || !size) {
		errno = EINVAL;
		return NULL;
	}
	sd = x->needs & PM_NEED_SOFT_DIRTY;
	if (sd)	/* bit 55 is older than soft-dirty: it held the page shift */
		snprintf(what, sizeof(what), "soft-dirty");
	else
		snprintf(what, sizeof(what), "bit %d", x->raw_bit);
	if (lack == PM_LACK_NONE)
		snprintf(buf, size, "it can be told");
	else if (lack == PM_LACK_KERNEL)
		snprintf(buf, size, "%s came with Linux %u.%u", what, x->since_major, x->since_minor);
	else if (lack == PM_LACK_LAYOUT)
		snprintf(buf, size, "this pagemap layout has no %s bit", what);
	else if (lack == PM_LACK_CONFIG)
		snprintf(buf, size, "%s",
			 sd ? "kernel built without CONFIG_MEM_SOFT_DIRTY" : "the kernel refuses MADV_GUARD_INSTALL");
	else if (lack == PM_LACK_FRAMES)
		snprintf(buf, size, "%s", scan ? "PFNs are hidden" : "PFNs are hidden and the pread back end needs them");
	else if (lack == PM_LACK_ZERO_PFN)
		snprintf(buf, size, "the zero page's frame is not known");
	else if (lack == PM_LACK_ENTRIES)
		snprintf(buf, size, "the scan back end was not asked to read entries");
	else
		snprintf(buf, size, "PAGEMAP_SCAN here does not report it");
	return buf;
}
