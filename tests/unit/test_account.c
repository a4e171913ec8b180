/* test_account.c - PSS arithmetic: fixed point summed without per-page truncation, rounded once. */
#include <stdint.h>
#include "../harness.h"
#include "account.h"

static uint64_t pss_of(uint64_t pages, uint64_t page_size, uint64_t count)
{
	struct pmi_pss p = { 0 };
	uint64_t i;

	for (i = 0; i < pages; i++)
		pmi_pss_add(&p, page_size, count);
	return pmi_pss_bytes(&p);
}

/* 3 pages each shared by 3 make one whole page, not 3 * 1365 (libmeminfo) or 4095 (truncating). */
static int no_truncation(void)
{
	CHECK_EQ_U64(pss_of(3, 4096, 3), 4096);
	CHECK_EQ_U64(pss_of(7, 4096, 7), 4096);
	CHECK_EQ_U64(pss_of(1000, 4096, 3), 1365333);	/* 1365333.33 */
	CHECK_EQ_U64(pss_of(2, 4096, 3), 2731);		/* 2730.67 rounds up, once */
	CHECK_EQ_U64(pss_of(1, 4096, 3), 1365);
	CHECK_EQ_U64(pss_of(511, 4096, 511), 4096);
	CHECK_EQ_U64(pss_of(100000, 4096, 6), 68266667);	/* 68266666.67 */
	return T_PASS;
}

static int counts(void)
{
	struct pmi_pss p = { 0 };

	pmi_pss_add(&p, 4096, 0);	/* the zero page: nothing, never a division by 0 */
	CHECK_EQ_U64(pmi_pss_bytes(&p), 0);
	pmi_pss_add(&p, 4096, 1);
	pmi_pss_add(&p, 4096, 2);
	pmi_pss_add(&p, 65536, 4);	/* a 64 KiB page */
	CHECK_EQ_U64(pmi_pss_bytes(&p), 4096 + 2048 + 16384);
	CHECK_EQ_U64(pss_of(1, 4096, UINT64_MAX), 0);
	return T_PASS;
}

/* Sums past 2^64 >> PMI_PSS_SHIFT bytes do not overflow: 1 TiB private plus 1 TiB shared by 3. */
static int large(void)
{
	struct pmi_pss p = { 0 };

	pmi_pss_add(&p, 1ULL << 40, 1);
	pmi_pss_add(&p, 3ULL << 40, 3);
	CHECK_EQ_U64(pmi_pss_bytes(&p), 2ULL << 40);
	return T_PASS;
}

T_MAIN(T(no_truncation), T(counts), T(large))
