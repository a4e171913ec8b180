/* account.h - PSS in fixed point, shared by lib/analysis/account.c and its unit tests (private). */
#ifndef PMI_ACCOUNT_H
#define PMI_ACCOUNT_H

#include "base.h"
#include "smaps.h"

/* The smaps fields an account needs: a record without one of them is malformed. */
#define PMI_ACCOUNT_NEED (PMI_SMAPS_HAVE(PMI_SMAPS_RSS) | PMI_SMAPS_HAVE(PMI_SMAPS_PSS) | \
			  PMI_SMAPS_HAVE(PMI_SMAPS_PRIVATE_CLEAN) | PMI_SMAPS_HAVE(PMI_SMAPS_PRIVATE_DIRTY) | \
			  PMI_SMAPS_HAVE(PMI_SMAPS_SHARED_CLEAN) | PMI_SMAPS_HAVE(PMI_SMAPS_SHARED_DIRTY))

/*
 * pmi_account_from_smaps - @out's figures from one smaps or smaps_rollup
 * record of a process of @ctx (source left to the caller). 0, or -EINVAL
 * without a field of PMI_ACCOUNT_NEED.
 */
int pmi_account_from_smaps(struct pm_ctx *ctx, const struct pmi_smaps_rec *rec, struct pm_account *out);

/*
 * pmi_account_rollup - @out from ROOT/proc/@pid/smaps_rollup alone, without
 * opening the process as a target (no pagemap fd): what a table of every
 * process re-reads each frame. Returns 0, or -errno as pm_account_process.
 */
int pmi_account_rollup(struct pm_ctx *ctx, pid_t pid, struct pm_account *out);

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
