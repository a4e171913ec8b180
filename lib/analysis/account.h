/* account.h - PSS in fixed point, shared by lib/analysis/account.c and its unit tests (private). */
#ifndef PMI_ACCOUNT_H
#define PMI_ACCOUNT_H

#include "base.h"

/* account.c: PSS in fixed point, summed without per-page truncation and rounded once (unit tests check it). */
#define PMI_PSS_SHIFT 32
struct pmi_pss {
	unsigned __int128 sum;	/* bytes << PMI_PSS_SHIFT */
};
/* Add @bytes mapped @count times (@count 0 adds nothing). Pure. */
void pmi_pss_add(struct pmi_pss *p, uint64_t bytes, uint64_t count);
/* The sum in bytes, rounded to the nearest byte. Pure. */
uint64_t pmi_pss_bytes(const struct pmi_pss *p);

#endif
