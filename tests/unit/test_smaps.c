/* test_smaps.c - the smaps text parser (lib/pages/smaps.c): real layouts, the rollup, and hostile text. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "../harness.h"
#include "smaps.h"

#define MAXREC 8

/* What the callback saw: records copied, paths too (they are borrowed). */
struct seen {
	size_t n;
	struct pmi_smaps_rec rec[MAXREC];
	char path[MAXREC][64];
	int stop_at;	/* return -EINTR at this record (1-based), 0 never */
};

static int collect(void *arg, const struct pmi_smaps_rec *rec)
{
	struct seen *s = arg;
	size_t len;

	if (s->n < MAXREC) {
		s->rec[s->n] = *rec;
		len = rec->map.path_len < sizeof(s->path[0]) - 1 ? rec->map.path_len : sizeof(s->path[0]) - 1;
		memcpy(s->path[s->n], rec->mapped ? rec->map.path : "", rec->mapped ? len : 0);
		s->path[s->n][rec->mapped ? len : 0] = '\0';
	}
	s->n++;
	return s->stop_at && (int)s->n == s->stop_at ? -EINTR : 0;
}

static int parse(const char *text, struct seen *s)
{
	return pmi_smaps_parse_buf(text, strlen(text), collect, s);
}

static const char two[] =
	"55d0c8a00000-55d0c8a21000 rw-p 00000000 00:00 0                          [heap]\n"
	"Size:                132 kB\n"
	"KernelPageSize:        4 kB\n"
	"Rss:                  12 kB\n"
	"Pss:                   6 kB\n"
	"Shared_Clean:          0 kB\n"
	"Shared_Dirty:          4 kB\n"
	"Private_Clean:         0 kB\n"
	"Private_Dirty:         8 kB\n"
	"Referenced:           12 kB\n"
	"Anonymous:            12 kB\n"
	"Swap:                  8 kB\n"
	"SwapPss:               8 kB\n"
	"Pss_Anon:              6 kB\n"
	"VmFlags: rd wr mr mw me ac sd\n"
	"7f0000000000-7f0000200000 rw-s 00000000 00:0f 1234                       /dev/hugepages/x (deleted)\n"
	"KernelPageSize:     2048 kB\n"
	"Rss:                   0 kB\n"
	"Shared_Hugetlb:     2048 kB\n"
	"Private_Hugetlb:       0 kB\n"
	"VmFlags: rd wr sh mr mw me ms de ht";	/* no final newline */

static int real_layout(void)
{
	struct seen s = { 0 };

	CHECK(parse(two, &s) == 0);
	CHECK_EQ_U64(s.n, 2);
	CHECK(s.rec[0].mapped && s.rec[1].mapped);
	CHECK_EQ_U64(s.rec[0].map.start, 0x55d0c8a00000ULL);
	CHECK_STR(s.path[0], "[heap]");
	CHECK_EQ_U64(s.rec[0].val[PMI_SMAPS_RSS], 12 << 10);
	CHECK_EQ_U64(s.rec[0].val[PMI_SMAPS_PSS], 6 << 10);	/* not Pss_Anon */
	CHECK_EQ_U64(s.rec[0].val[PMI_SMAPS_SWAP], 8 << 10);	/* not SwapPss */
	CHECK_EQ_U64(s.rec[0].val[PMI_SMAPS_REFERENCED], 12 << 10);
	CHECK_EQ_U64(s.rec[0].val[PMI_SMAPS_PRIVATE_DIRTY], 8 << 10);
	CHECK(!(s.rec[0].have & PMI_SMAPS_HAVE(PMI_SMAPS_SHARED_HUGETLB)));
	CHECK_STR(s.path[1], "/dev/hugepages/x (deleted)");
	CHECK(s.rec[1].map.deleted);
	CHECK_EQ_U64(s.rec[1].val[PMI_SMAPS_KERNEL_PAGE], 2 << 20);
	CHECK_EQ_U64(s.rec[1].val[PMI_SMAPS_SHARED_HUGETLB], 2 << 20);
	CHECK(s.rec[1].have & PMI_SMAPS_HAVE(PMI_SMAPS_PRIVATE_HUGETLB));
	CHECK(!(s.rec[1].have & PMI_SMAPS_HAVE(PMI_SMAPS_SWAP)));
	return T_PASS;
}

/* smaps_rollup: one record; its header parses on every kernel since 4.14. */
static int rollup(void)
{
	struct seen s = { 0 };

	CHECK(parse("00400000-7ffd2c3f1000 ---p 00000000 00:00 0                          [rollup]\n"
		    "Rss:                1000 kB\nPss:                 500 kB\n", &s) == 0);
	CHECK_EQ_U64(s.n, 1);
	CHECK(s.rec[0].mapped);
	CHECK_STR(s.path[0], "[rollup]");
	CHECK_EQ_U64(s.rec[0].val[PMI_SMAPS_PSS], 500 << 10);
	return T_PASS;
}

/* Fields before any mapping line come as one unmapped record; empty text as none. */
static int fields_without_mapping(void)
{
	struct seen s = { 0 };

	CHECK(parse("Rss: 4 kB\nSwap: 8 kB\n", &s) == 0);
	CHECK_EQ_U64(s.n, 1);
	CHECK(!s.rec[0].mapped);
	CHECK_EQ_U64(s.rec[0].val[PMI_SMAPS_SWAP], 8 << 10);
	memset(&s, 0, sizeof(s));
	CHECK(parse("", &s) == 0);
	CHECK_EQ_U64(s.n, 0);
	CHECK(parse("\n\n\n", &s) == 0);
	CHECK_EQ_U64(s.n, 0);
	return T_PASS;
}

static int hostile_lines(void)
{
	static const char text[] =
		"1000-2000 rw-p 00000000 00:00 0\n"
		"Rss:\n"				/* no number: not a field */
		"Rss: kB\n"
		"Rss:                 abc kB\n"
		"Rss:        18446744073709551615 kB\n"	/* wraps when scaled, as strtoull * 1024 did */
		"Rss: 99 kB\n"				/* a second Rss: the first counts */
		"Swap:                                                                        7 kB\n"
		"Referenced: 99999999999999999999999999999 kB\n"	/* saturates */
		"3000-2000 rw-p 00000000 00:00 0\n"	/* start > end: ignored, fields stay with 1000 */
		"KernelPageSize: 4 kB\n"
		"garbage without colon or dash\n"
		"zz-yy rw-p\n"
		"\x01\xff:\n";
	struct seen s = { 0 };

	CHECK(parse(text, &s) == 0);
	CHECK_EQ_U64(s.n, 1);
	CHECK_EQ_U64(s.rec[0].map.start, 0x1000);
	CHECK_EQ_U64(s.rec[0].val[PMI_SMAPS_RSS], 18446744073709551615ULL * 1024);
	CHECK_EQ_U64(s.rec[0].val[PMI_SMAPS_SWAP], 7 << 10);	/* long padding is read through */
	CHECK_EQ_U64(s.rec[0].val[PMI_SMAPS_REFERENCED], (uint64_t)UINT64_MAX * 1024);
	CHECK_EQ_U64(s.rec[0].val[PMI_SMAPS_KERNEL_PAGE], 4 << 10);
	return T_PASS;
}

/* NUL bytes inside lines, a very long path, and a buffer not NUL-terminated. */
static int hostile_bytes(void)
{
	char big[9000];
	struct seen s = { 0 };
	int n;

	static const char nul[] = "1000-2000 r--p 0 00:00 0 /a\0b\nRss: 4\0 kB\nSwap:\0 8 kB\n";
	CHECK(pmi_smaps_parse_buf(nul, sizeof(nul) - 1, collect, &s) == 0);
	CHECK_EQ_U64(s.n, 1);
	CHECK_EQ_U64(s.rec[0].val[PMI_SMAPS_RSS], 4 << 10);
	CHECK(!(s.rec[0].have & PMI_SMAPS_HAVE(PMI_SMAPS_SWAP)));	/* the number stops at the NUL */
	memset(&s, 0, sizeof(s));
	n = snprintf(big, sizeof(big), "1000-2000 rw-p 00000000 00:00 0 /");
	memset(big + n, 'x', sizeof(big) - (size_t)n);
	CHECK(pmi_smaps_parse_buf(big, sizeof(big), collect, &s) == 0);	/* no newline, no NUL */
	CHECK_EQ_U64(s.n, 1);
	CHECK_EQ_U64(s.rec[0].map.path_len, sizeof(big) - (size_t)n + 1);
	return T_PASS;
}

/* A callback's nonzero return stops the parse and comes back; nothing is handed over after it. */
static int callback_stops(void)
{
	struct seen s = { .stop_at = 1 };

	CHECK(parse(two, &s) == -EINTR);
	CHECK_EQ_U64(s.n, 1);
	return T_PASS;
}

/* The stream front end and the swap table over it: same records, address order kept. */
static int swap_table(void)
{
	static const char text[] = "2000-3000 rw-p 0 00:00 0\nSwap: 4 kB\n"
				   "1000-2000 rw-p 0 00:00 0\nSwap: 8 kB\n"	/* not above: dropped */
				   "3000-4000 rw-p 0 00:00 0\nKernelPageSize: 4 kB\nSwap: 12 kB\n";
	struct pmi_smaps_swap *v = NULL;
	size_t n = 0;
	FILE *f = fmemopen((void *)text, sizeof(text) - 1, "r");

	CHECK(f != NULL);
	if (!f)
		return T_FAIL;
	CHECK(pmi_smaps_swap_parse(f, &v, &n) == 0);
	fclose(f);
	CHECK_EQ_U64(n, 2);
	if (n == 2) {
		CHECK_EQ_U64(v[0].swap, 4 << 10);
		CHECK_EQ_U64(v[1].swap, 12 << 10);
		CHECK_EQ_U64(v[1].kernel_page, 4 << 10);
		CHECK(pmi_smaps_swap_of(v, n, 0x3000) == 12 << 10);
		CHECK(pmi_smaps_swap_of(v, n, 0x1000) == -1);
	}
	free(v);
	return T_PASS;
}

T_MAIN(T(real_layout), T(rollup), T(fields_without_mapping), T(hostile_lines), T(hostile_bytes),
       T(callback_stops), T(swap_table))
