/* account.h - PSS in fixed point, shared by lib/analysis/account.c and its unit tests (private). */
#ifndef PM_ACCOUNT_H
#define PM_ACCOUNT_H

#include "base.h"

/* account.c: PSS in fixed point, summed without per-page truncation and rounded once (unit tests check it). */
#define PM_PSS_SHIFT 32
struct pm_pss {
	unsigned __int128 sum;	/* bytes << PM_PSS_SHIFT */
};
/* Add @bytes mapped @count times (@count 0 adds nothing). Pure. */
void pmi_pss_add(struct pm_pss *p, uint64_t bytes, uint64_t count);
/* The sum in bytes, rounded to the nearest byte. Pure. */
uint64_t pmi_pss_bytes(const struct pm_pss *p);

#endif
