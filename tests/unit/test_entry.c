/* test_entry.c - unit tests of pm_entry_decode on every layout, the flag table and pm_flags_letters. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include "pagemap.h"
#include "../harness.h"

#define B_PRESENT	(1ULL << 63)
#define B_SWAP		(1ULL << 62)
#define B_FILE		(1ULL << 61)
#define B_GUARD		(1ULL << 58)
#define B_UFFD_WP	(1ULL << 57)
#define B_EXCL		(1ULL << 56)
#define B_SD		(1ULL << 55)
#define FRAME_MASK	((1ULL << 55) - 1)
#define PSHIFT(s)	((uint64_t)(s) << 55)
#define SWP(type, off)	(B_SWAP | ((uint64_t)(off) << 5) | (uint64_t)(type))

static const struct pm_decode_info cur_vis = { .layout = PM_LAYOUT_CURRENT, .page_shift = 12, .frame_visible = true };
static const struct pm_decode_info cur_hid = { .layout = PM_LAYOUT_CURRENT, .page_shift = 12 };
static const struct pm_decode_info cur_hid_swap = { .layout = PM_LAYOUT_CURRENT, .page_shift = 12,
						    .swap_active = true };
static const struct pm_decode_info v2_vis = { .layout = PM_LAYOUT_V2, .page_shift = 12, .frame_visible = true };
static const struct pm_decode_info ps_vis = { .layout = PM_LAYOUT_PSHIFT, .page_shift = 12, .frame_visible = true };

/* Decode and check every output field at once. */
#define EXPECT(raw_, info_, ret_, fl_, pfn_, type_, off_)                  \
	do {                                                               \
		struct pm_entry _e;                                        \
		memset(&_e, 0xa5, sizeof(_e));                             \
		CHECK_EQ_U64(pm_entry_decode((raw_), (info_), &_e), (ret_)); \
		CHECK_EQ_U64(_e.raw, (raw_));                              \
		CHECK_EQ_U64(_e.flags, (fl_));                             \
		CHECK_EQ_U64(_e.pfn, (pfn_));                              \
		CHECK_EQ_U64(_e.swap_type, (type_));                       \
		CHECK_EQ_U64(_e.swap_offset, (off_));                      \
	} while (0)

static int decode_flags(uint64_t raw, const struct pm_decode_info *info, int *ret)
{
	struct pm_entry e;

	*ret = pm_entry_decode(raw, info, &e);
	return (int)e.flags;
}

/* ---- current layout (4.2+) ---- */

static int current_zero(void)
{
	struct pm_entry e;

	EXPECT(0, &cur_vis, 0, 0, 0, 0, 0);
	EXPECT(0, &cur_hid, 0, 0, 0, 0, 0);
	memset(&e, 0xff, sizeof(e));
	CHECK_EQ_U64(pm_entry_decode(0, &cur_vis, &e), 0);
	CHECK_EQ_U64(e.page_shift, 0);
	return T_PASS;
}

static int current_present_visible(void)
{
	EXPECT(B_PRESENT | 0x12345, &cur_vis, 0, PM_PAGE_PRESENT | PM_PAGE_FRAME, 0x12345, 0, 0);
	EXPECT(B_PRESENT | B_EXCL | 0x3b30, &cur_vis, 0,
	       PM_PAGE_PRESENT | PM_PAGE_FRAME | PM_PAGE_EXCLUSIVE, 0x3b30, 0, 0);
	EXPECT(B_PRESENT | B_SD | 7, &cur_vis, 0, PM_PAGE_PRESENT | PM_PAGE_FRAME | PM_PAGE_SOFTDIRTY, 7, 0, 0);
	EXPECT(B_PRESENT | B_UFFD_WP | B_EXCL | 9, &cur_vis, 0,
	       PM_PAGE_PRESENT | PM_PAGE_FRAME | PM_PAGE_UFFD_WP | PM_PAGE_EXCLUSIVE, 9, 0, 0);
	/* The whole 55-bit PFN field. */
	EXPECT(B_PRESENT | FRAME_MASK, &cur_vis, 0, PM_PAGE_PRESENT | PM_PAGE_FRAME, FRAME_MASK, 0, 0);
	/* PFN 0 is a real frame number when visible. */
	EXPECT(B_PRESENT, &cur_vis, 0, PM_PAGE_PRESENT | PM_PAGE_FRAME, 0, 0, 0);
	return T_PASS;
}

static int current_present_hidden(void)
{
	/* 4.2+ zero the PFN for readers without CAP_SYS_ADMIN. */
	EXPECT(B_PRESENT | B_EXCL, &cur_hid, 0, PM_PAGE_PRESENT | PM_PAGE_EXCLUSIVE, 0, 0, 0);
	EXPECT(B_PRESENT | B_FILE, &cur_hid, 0, PM_PAGE_PRESENT | PM_PAGE_FILE, 0, 0, 0);
	/* Frame bits are not reported as a PFN when the reader cannot see frames. */
	EXPECT(B_PRESENT | 0x1234, &cur_hid, 0, PM_PAGE_PRESENT, 0, 0, 0);
	return T_PASS;
}

static int current_file_bit(void)
{
	EXPECT(B_PRESENT | B_FILE | 0x42, &cur_vis, 0, PM_PAGE_PRESENT | PM_PAGE_FILE | PM_PAGE_FRAME, 0x42, 0, 0);
	EXPECT(B_PRESENT | B_FILE | B_EXCL | 0x42, &cur_vis, 0,
	       PM_PAGE_PRESENT | PM_PAGE_FILE | PM_PAGE_FRAME | PM_PAGE_EXCLUSIVE, 0x42, 0, 0);
	return T_PASS;
}

static int current_guard_marker(void)
{
	/* docs/kernel-interface.md §1.5: 0x440000000000009f = swap + guard, type 31 offset 4. */
	/* A marker is no swap slot: no FRAME, type and offset 0 (the raw word keeps them). */
	EXPECT(0x440000000000009fULL, &cur_vis, 0, PM_PAGE_MARKER | PM_PAGE_GUARD, 0, 0, 0);
	CHECK_EQ_U64(SWP(31, 4) | B_GUARD, 0x440000000000009fULL);
	/* Hidden frame: only bits 62 and 58 are left; never swap, whatever swap_active says. */
	EXPECT(B_SWAP | B_GUARD, &cur_hid, 0, PM_PAGE_MARKER | PM_PAGE_GUARD, 0, 0, 0);
	EXPECT(B_SWAP | B_GUARD, &cur_hid_swap, 0, PM_PAGE_MARKER | PM_PAGE_GUARD, 0, 0, 0);
	return T_PASS;
}

static int current_uffd_wp_marker(void)
{
	struct pm_decode_info vis_swap = cur_vis;

	/* docs/kernel-interface.md §1.5: 0x420000000000003f = swap + uffd-wp, type 31 offset 1. */
	EXPECT(0x420000000000003fULL, &cur_vis, 0, PM_PAGE_MARKER | PM_PAGE_UFFD_WP, 0, 0, 0);
	/* A visible frame decides; swap being on does not matter. */
	vis_swap.swap_active = true;
	EXPECT(0x420000000000003fULL, &vis_swap, 0, PM_PAGE_MARKER | PM_PAGE_UFFD_WP, 0, 0, 0);
	CHECK_EQ_U64(SWP(31, 1) | B_UFFD_WP, 0x420000000000003fULL);
	return T_PASS;
}

static int current_swap_entry(void)
{
	EXPECT(SWP(3, 0x1234), &cur_vis, 0, PM_PAGE_SWAPPED | PM_PAGE_FRAME, 0, 3, 0x1234);
	EXPECT(SWP(0, 0), &cur_vis, 0, PM_PAGE_SWAPPED | PM_PAGE_FRAME, 0, 0, 0);
	/* Largest swap type (22) and the whole 50-bit offset field. */
	EXPECT(SWP(22, (1ULL << 50) - 1), &cur_vis, 0, PM_PAGE_SWAPPED | PM_PAGE_FRAME, 0, 22,
	       (1ULL << 50) - 1);
	/* type = e & 0x1f, offset = (e & ((1<<55)-1)) >> 5 on a raw value. */
	EXPECT(B_SWAP | 0xabcdef12ULL, &cur_vis, 0, PM_PAGE_SWAPPED | PM_PAGE_FRAME, 0, 0x12 & 0x1f,
	       (0xabcdef12ULL & FRAME_MASK) >> 5);
	/* Soft-dirty and uffd-wp swap PTEs are still swap. */
	EXPECT(SWP(1, 77) | B_SD, &cur_vis, 0, PM_PAGE_SWAPPED | PM_PAGE_FRAME | PM_PAGE_SOFTDIRTY, 0, 1, 77);
	EXPECT(SWP(1, 77) | B_UFFD_WP, &cur_vis, 0, PM_PAGE_SWAPPED | PM_PAGE_FRAME | PM_PAGE_UFFD_WP, 0, 1, 77);
	return T_PASS;
}

static int current_nonswap_types(void)
{
	unsigned type;

	/* 6.x: 23 hwpoison, 24-26 migration, 27-30 device: offset holds the PFN. */
	for (type = 23; type <= 30; type++)
		EXPECT(SWP(type, 0x8765), &cur_vis, 0, PM_PAGE_NONSWAP | PM_PAGE_FRAME, 0, type, 0x8765);
	/* Migration of a page-cache page carries PM_FILE. */
	EXPECT(SWP(25, 0x10) | B_FILE, &cur_vis, 0, PM_PAGE_NONSWAP | PM_PAGE_FRAME | PM_PAGE_FILE, 0, 25, 0x10);
	/* Type 31 without uffd-wp or guard (poison marker, offset 2) is not swap. */
	EXPECT(SWP(31, 2), &cur_vis, 0, PM_PAGE_NONSWAP | PM_PAGE_FRAME, 0, 31, 2);
	/* Every real swap type is swap. */
	for (type = 0; type < 23; type++)
		EXPECT(SWP(type, 5), &cur_vis, 0, PM_PAGE_SWAPPED | PM_PAGE_FRAME, 0, type, 5);
	return T_PASS;
}

static int current_hidden_swap(void)
{
	/* 4.18+: the frame of a swap entry is zeroed for unprivileged readers. */
	EXPECT(B_SWAP, &cur_hid, 0, PM_PAGE_SWAPPED, 0, 0, 0);
	EXPECT(B_SWAP | B_SD, &cur_hid, 0, PM_PAGE_SWAPPED | PM_PAGE_SOFTDIRTY, 0, 0, 0);
	/* uffd-wp on a swap entry: a marker unless swap is on. */
	EXPECT(B_SWAP | B_UFFD_WP, &cur_hid, 0, PM_PAGE_MARKER | PM_PAGE_UFFD_WP, 0, 0, 0);
	EXPECT(B_SWAP | B_UFFD_WP, &cur_hid_swap, 0, PM_PAGE_SWAPPED | PM_PAGE_UFFD_WP, 0, 0, 0);
	/* Without uffd-wp, swap_active does not matter. */
	EXPECT(B_SWAP, &cur_hid_swap, 0, PM_PAGE_SWAPPED, 0, 0, 0);
	EXPECT(B_SWAP | B_FILE, &cur_hid, 0, PM_PAGE_SWAPPED | PM_PAGE_FILE, 0, 0, 0);
	return T_PASS;
}

static int current_reserved_bits(void)
{
	int r, fl;

	/* Bits 59-60 are always 0 since 4.2. */
	EXPECT(1ULL << 59, &cur_vis, -EINVAL, 0, 0, 0, 0);
	EXPECT(1ULL << 60, &cur_vis, -EINVAL, 0, 0, 0, 0);
	EXPECT(3ULL << 59, &cur_hid, -EINVAL, 0, 0, 0, 0);
	/* The rest is still decoded. */
	fl = decode_flags(B_PRESENT | (1ULL << 60) | 5, &cur_vis, &r);
	CHECK_EQ_U64(r, -EINVAL);
	CHECK_EQ_U64(fl, PM_PAGE_PRESENT | PM_PAGE_FRAME);
	fl = decode_flags(SWP(2, 3) | (1ULL << 59), &cur_vis, &r);
	CHECK_EQ_U64(r, -EINVAL);
	CHECK_EQ_U64(fl, PM_PAGE_SWAPPED | PM_PAGE_FRAME);
	return T_PASS;
}

static int current_present_and_swap(void)
{
	int r, fl;

	fl = decode_flags(B_PRESENT | B_SWAP, &cur_vis, &r);
	CHECK_EQ_U64(r, -EINVAL);
	CHECK(!((fl & PM_PAGE_PRESENT) && (fl & PM_PAGE_SWAPPED)));
	fl = decode_flags(B_PRESENT | B_SWAP | 0x1234, &cur_hid, &r);
	CHECK_EQ_U64(r, -EINVAL);
	CHECK(!((fl & PM_PAGE_PRESENT) && (fl & PM_PAGE_SWAPPED)));
	fl = decode_flags(B_PRESENT | B_SWAP, &v2_vis, &r);
	CHECK_EQ_U64(r, -EINVAL);
	fl = decode_flags(B_PRESENT | B_SWAP | PSHIFT(12), &ps_vis, &r);
	CHECK_EQ_U64(r, -EINVAL);
	CHECK(!((fl & PM_PAGE_PRESENT) && (fl & PM_PAGE_SWAPPED)));
	return T_PASS;
}

static int current_frame_on_empty(void)
{
	EXPECT(1, &cur_vis, -EINVAL, 0, 0, 0, 0);
	EXPECT(1ULL << 54, &cur_vis, -EINVAL, 0, 0, 0, 0);
	EXPECT(0x1234, &cur_hid, -EINVAL, 0, 0, 0, 0);
	EXPECT(B_SD | 5, &cur_vis, -EINVAL, PM_PAGE_SOFTDIRTY, 0, 0, 0);
	EXPECT(1, &v2_vis, -EINVAL, 0, 0, 0, 0);
	EXPECT(PSHIFT(12) | 1, &ps_vis, -EINVAL, 0, 0, 0, 0);
	/* Flag bits alone on a non-present entry are fine (VM_SOFTDIRTY holes). */
	EXPECT(B_SD, &cur_vis, 0, PM_PAGE_SOFTDIRTY, 0, 0, 0);
	return T_PASS;
}

static int current_null_info(void)
{
	/* NULL info reads the current layout with frames hidden. */
	EXPECT(B_PRESENT | B_EXCL | 0x55, NULL, 0, PM_PAGE_PRESENT | PM_PAGE_EXCLUSIVE, 0, 0, 0);
	EXPECT(B_SWAP | B_UFFD_WP, NULL, 0, PM_PAGE_MARKER | PM_PAGE_UFFD_WP, 0, 0, 0);
	EXPECT(1ULL << 59, NULL, -EINVAL, 0, 0, 0, 0);
	return T_PASS;
}

/* ---- page-shift layout (2.6.25 - 4.1 before clear_refs 4) ---- */

static int pshift_not_present(void)
{
	struct pm_entry e;

	CHECK_EQ_U64(PSHIFT(12), 0x0600000000000000ULL);
	CHECK_EQ_U64(pm_entry_decode(0x0600000000000000ULL, &ps_vis, &e), 0);
	CHECK_EQ_U64(e.flags, 0);
	CHECK_EQ_U64(e.page_shift, 12);
	CHECK_EQ_U64(e.pfn, 0);
	/* Bits 57 and 58 are part of the shift here, not uffd-wp/guard. */
	CHECK(!(e.flags & (PM_PAGE_UFFD_WP | PM_PAGE_GUARD)));
	/* Zero is impossible in this layout: the shift is never 0. */
	CHECK_EQ_U64(pm_entry_decode(0, &ps_vis, &e), -EINVAL);
	CHECK_EQ_U64(e.page_shift, 0);
	CHECK_EQ_U64(e.flags, 0);
	return T_PASS;
}

static int pshift_mismatch(void)
{
	struct pm_entry e;
	unsigned s;

	for (s = 0; s < 64; s++) {
		int want = s == 12 ? 0 : -EINVAL;
		CHECK_EQ_U64(pm_entry_decode(PSHIFT(s), &ps_vis, &e), want);
		CHECK_EQ_U64(e.page_shift, s);
		CHECK_EQ_U64(e.flags, 0);
	}
	CHECK_EQ_U64(pm_entry_decode(B_PRESENT | PSHIFT(14) | 5, &ps_vis, &e), -EINVAL);
	CHECK_EQ_U64(e.page_shift, 14);
	CHECK_EQ_U64(e.flags, PM_PAGE_PRESENT | PM_PAGE_FRAME);
	return T_PASS;
}

static int pshift_present_and_swap(void)
{
	struct pm_entry e;
	struct pm_decode_info hid = ps_vis;
	unsigned type;

	EXPECT(B_PRESENT | PSHIFT(12) | 0x1234, &ps_vis, 0, PM_PAGE_PRESENT | PM_PAGE_FRAME, 0x1234, 0, 0);
	CHECK_EQ_U64(pm_entry_decode(B_PRESENT | PSHIFT(12) | 0x1234, &ps_vis, &e), 0);
	CHECK_EQ_U64(e.page_shift, 12);
	/* Bit 61 is PM_FILE since 3.5. */
	EXPECT(B_PRESENT | B_FILE | PSHIFT(12) | 0x99, &ps_vis, 0,
	       PM_PAGE_PRESENT | PM_PAGE_FILE | PM_PAGE_FRAME, 0x99, 0, 0);
	/* Swap: no marker or guard from the shift bits 57-58. */
	EXPECT(SWP(1, 5) | PSHIFT(12), &ps_vis, 0, PM_PAGE_SWAPPED | PM_PAGE_FRAME, 0, 1, 5);
	/* 2.6.x-4.x: MAX_SWAPFILES 29, then migration and hwpoison. */
	for (type = 0; type < 29; type++)
		EXPECT(SWP(type, 7) | PSHIFT(12), &ps_vis, 0, PM_PAGE_SWAPPED | PM_PAGE_FRAME, 0, type, 7);
	for (type = 29; type < 32; type++)
		EXPECT(SWP(type, 7) | PSHIFT(12), &ps_vis, 0, PM_PAGE_NONSWAP | PM_PAGE_FRAME, 0, type, 7);
	/* Hidden frames and no swap: still swap, bit 57 is shift, not uffd-wp. */
	hid.frame_visible = false;
	EXPECT(B_SWAP | PSHIFT(12), &hid, 0, PM_PAGE_SWAPPED, 0, 0, 0);
	EXPECT(B_PRESENT | PSHIFT(12), &hid, 0, PM_PAGE_PRESENT, 0, 0, 0);
	return T_PASS;
}

static int pshift_other_page_sizes(void)
{
	struct pm_decode_info i14 = ps_vis, i16 = ps_vis;
	struct pm_entry e;

	i14.page_shift = 14;	/* 16 KiB pages */
	i16.page_shift = 16;	/* 64 KiB pages */
	CHECK_EQ_U64(PSHIFT(14), 0x0700000000000000ULL);
	CHECK_EQ_U64(PSHIFT(16), 0x0800000000000000ULL);
	CHECK_EQ_U64(pm_entry_decode(PSHIFT(14), &i14, &e), 0);
	CHECK_EQ_U64(e.flags, 0);
	CHECK_EQ_U64(e.page_shift, 14);
	CHECK_EQ_U64(pm_entry_decode(PSHIFT(16), &i16, &e), 0);
	CHECK_EQ_U64(e.flags, 0);
	CHECK_EQ_U64(e.page_shift, 16);
	EXPECT(B_PRESENT | PSHIFT(14) | 0xabc, &i14, 0, PM_PAGE_PRESENT | PM_PAGE_FRAME, 0xabc, 0, 0);
	EXPECT(B_PRESENT | PSHIFT(16) | 0xabc, &i16, 0, PM_PAGE_PRESENT | PM_PAGE_FRAME, 0xabc, 0, 0);
	EXPECT(SWP(4, 9) | PSHIFT(16), &i16, 0, PM_PAGE_SWAPPED | PM_PAGE_FRAME, 0, 4, 9);
	/* Each size rejects the others' shift. */
	CHECK_EQ_U64(pm_entry_decode(PSHIFT(12), &i14, &e), -EINVAL);
	CHECK_EQ_U64(pm_entry_decode(PSHIFT(12), &i16, &e), -EINVAL);
	CHECK_EQ_U64(pm_entry_decode(PSHIFT(16), &i14, &e), -EINVAL);
	CHECK_EQ_U64(pm_entry_decode(PSHIFT(14), &ps_vis, &e), -EINVAL);
	/* Bit 59 (shift 16) is no reserved bit in this layout. */
	CHECK_EQ_U64(pm_entry_decode(B_PRESENT | PSHIFT(16), &i16, &e), 0);
	return T_PASS;
}

/* ---- v2 layout (3.11 - 4.1 after clear_refs 4) ---- */

static int v2_layout(void)
{
	int bit, r, fl;
	unsigned type;

	EXPECT(0, &v2_vis, 0, 0, 0, 0, 0);
	EXPECT(B_SD, &v2_vis, 0, PM_PAGE_SOFTDIRTY, 0, 0, 0);
	EXPECT(B_PRESENT | B_SD | 0x77, &v2_vis, 0, PM_PAGE_PRESENT | PM_PAGE_SOFTDIRTY | PM_PAGE_FRAME, 0x77, 0, 0);
	EXPECT(B_PRESENT | B_FILE | 0x77, &v2_vis, 0, PM_PAGE_PRESENT | PM_PAGE_FILE | PM_PAGE_FRAME, 0x77, 0, 0);
	EXPECT(SWP(2, 40), &v2_vis, 0, PM_PAGE_SWAPPED | PM_PAGE_FRAME, 0, 2, 40);
	EXPECT(SWP(2, 40) | B_SD, &v2_vis, 0, PM_PAGE_SWAPPED | PM_PAGE_FRAME | PM_PAGE_SOFTDIRTY, 0, 2, 40);
	for (type = 23; type < 29; type++)
		EXPECT(SWP(type, 1), &v2_vis, 0, PM_PAGE_SWAPPED | PM_PAGE_FRAME, 0, type, 1);
	for (type = 29; type < 32; type++)
		EXPECT(SWP(type, 1), &v2_vis, 0, PM_PAGE_NONSWAP | PM_PAGE_FRAME, 0, type, 1);
	/* Bits 56-60 are zero in v2: no exclusive, uffd-wp or guard yet. */
	for (bit = 56; bit <= 60; bit++) {
		fl = decode_flags(B_PRESENT | (1ULL << bit) | 1, &v2_vis, &r);
		CHECK_EQ_U64(r, -EINVAL);
		CHECK_EQ_U64(fl, PM_PAGE_PRESENT | PM_PAGE_FRAME);
	}
	/* A page-shift entry read as v2 is impossible. */
	CHECK_EQ_U64(decode_flags(PSHIFT(12), &v2_vis, &r), 0);
	CHECK_EQ_U64(r, -EINVAL);
	/* Guard-looking swap entries are plain swap in v2. */
	fl = decode_flags(0x440000000000009fULL, &v2_vis, &r);
	CHECK_EQ_U64(r, -EINVAL);
	CHECK(!(fl & (PM_PAGE_GUARD | PM_PAGE_MARKER | PM_PAGE_UFFD_WP | PM_PAGE_EXCLUSIVE)));
	return T_PASS;
}

/* ---- flag table and letters ---- */

static int flag_table(void)
{
	static const struct {
		uint32_t bit;
		const char *name;
		char letter;
	} want[] = {
		{ PM_PAGE_PRESENT, "present", 'P' },	{ PM_PAGE_SWAPPED, "swapped", 'S' },
		{ PM_PAGE_FILE, "file", 'F' },		{ PM_PAGE_EXCLUSIVE, "exclusive", 'E' },
		{ PM_PAGE_SOFTDIRTY, "softdirty", 'D' }, { PM_PAGE_UFFD_WP, "uffdwp", 'W' },
		{ PM_PAGE_GUARD, "guard", 'G' },	{ PM_PAGE_MARKER, "marker", 'M' },
		{ PM_PAGE_NONSWAP, "migration", 'N' },	{ PM_PAGE_THP, "thp", 'H' },
		{ PM_PAGE_ZERO, "zero", 'Z' },
	};
	const struct pm_flag_info *t;
	uint32_t seen = 0;
	size_t n = 0, i, j, w;

	t = pm_flag_table(&n);
	CHECK(t != NULL);
	CHECK(pm_flag_table(NULL) == t);
	CHECK_EQ_U64(n, PM_PAGE_NFLAGS - 1);
	if (!t || n != PM_PAGE_NFLAGS - 1)
		return T_FAIL;
	for (i = 0; i < n; i++) {
		CHECK(t[i].bit && !(t[i].bit & (t[i].bit - 1)));	/* one bit */
		CHECK(t[i].bit != PM_PAGE_FRAME);
		CHECK(!(seen & t[i].bit));
		seen |= t[i].bit;
		CHECK(t[i].name && t[i].name[0]);
		CHECK(t[i].meaning && t[i].meaning[0]);
		CHECK(t[i].letter > ' ' && t[i].letter != '-');
		for (j = 0; t[i].name && t[i].name[j]; j++)
			CHECK((t[i].name[j] >= 'a' && t[i].name[j] <= 'z'));
		for (j = i + 1; j < n; j++) {
			CHECK(t[i].letter != t[j].letter);
			CHECK(strcmp(t[i].name, t[j].name) != 0);
		}
	}
	CHECK_EQ_U64(seen, ((1u << PM_PAGE_NFLAGS) - 1) & ~PM_PAGE_FRAME);
	for (w = 0; w < sizeof(want) / sizeof(want[0]); w++) {
		for (i = 0; i < n && t[i].bit != want[w].bit; i++)
			;
		CHECK(i < n);
		if (i == n)
			continue;
		CHECK_STR(t[i].name, want[w].name);
		CHECK_EQ_U64(t[i].letter, want[w].letter);
	}
	return T_PASS;
}

static int flags_letters(void)
{
	const struct pm_flag_info *t;
	char buf[32], all[32], *r;
	size_t n, i;

	t = pm_flag_table(&n);
	for (i = 0; i < n; i++)
		all[i] = t[i].letter;
	all[n] = '\0';
	CHECK_STR(pm_flags_letters(0, buf, sizeof(buf)), "-----------");
	CHECK_STR(pm_flags_letters((1u << PM_PAGE_NFLAGS) - 1, buf, sizeof(buf)), all);
	CHECK_STR(pm_flags_letters(~0u, buf, sizeof(buf)), all);
	CHECK_STR(pm_flags_letters(PM_PAGE_PRESENT | PM_PAGE_FILE, buf, sizeof(buf)), "P-F--------");
	CHECK_STR(pm_flags_letters(PM_PAGE_FRAME, buf, sizeof(buf)), "-----------");
	CHECK_STR(pm_flags_letters(PM_PAGE_ZERO | PM_PAGE_THP, buf, sizeof(buf)), "---------HZ");
	CHECK_STR(pm_flags_letters(PM_PAGE_MARKER | PM_PAGE_UFFD_WP, buf, sizeof(buf)), "-----W-M---");
	/* PM_PAGE_NFLAGS + 1 bytes suffice and nothing past the NUL is written. */
	memset(buf, 'x', sizeof(buf));
	r = pm_flags_letters(PM_PAGE_SWAPPED, buf, PM_PAGE_NFLAGS + 1);
	CHECK(r == buf);
	CHECK_STR(buf, "-S---------");
	CHECK_EQ_U64(buf[PM_PAGE_NFLAGS], 'x');
	CHECK_EQ_U64(buf[PM_PAGE_NFLAGS - 1], '\0');
	/* Too small: truncated, always terminated. */
	memset(buf, 'x', sizeof(buf));
	CHECK_STR(pm_flags_letters(PM_PAGE_PRESENT | PM_PAGE_FILE, buf, 4), "P-F");
	CHECK_EQ_U64(buf[4], 'x');
	memset(buf, 'x', sizeof(buf));
	r = pm_flags_letters(PM_PAGE_PRESENT, buf, 1);
	CHECK(r == buf);
	CHECK_EQ_U64(buf[0], '\0');
	CHECK_EQ_U64(buf[1], 'x');
	/* Size 0 writes nothing. */
	memset(buf, 'x', sizeof(buf));
	r = pm_flags_letters(PM_PAGE_PRESENT, buf, 0);
	CHECK(r == buf);
	CHECK_EQ_U64(buf[0], 'x');
	return T_PASS;
}

/* ---- hostile inputs ---- */

static void check_invariants(uint64_t raw, const struct pm_decode_info *info)
{
	struct pm_entry e;
	int r = pm_entry_decode(raw, info, &e);

	CHECK(r == 0 || r == -EINVAL);
	CHECK_EQ_U64(e.raw, raw);
	CHECK(!(e.flags & (PM_PAGE_THP | PM_PAGE_ZERO)));
	CHECK(!(e.flags & ~((1u << PM_PAGE_NFLAGS) - 1)));
	CHECK(!((e.flags & PM_PAGE_PRESENT) && (e.flags & PM_PAGE_SWAPPED)));
	CHECK(!((e.flags & PM_PAGE_SWAPPED) && (e.flags & (PM_PAGE_MARKER | PM_PAGE_NONSWAP))));
	CHECK(!((e.flags & PM_PAGE_MARKER) && (e.flags & PM_PAGE_NONSWAP)));
	/* Frames only when shown: to this reader, or by a swap entry that carries its slot (4.2-4.17). */
	CHECK(!(e.flags & PM_PAGE_FRAME) || info->frame_visible || (!(raw >> 63) && (raw & B_SWAP) && (raw & ((1ULL << 55) - 1))));
	CHECK(!!(e.flags & PM_PAGE_PRESENT) == !!(raw >> 63));
	if (e.flags & (PM_PAGE_SWAPPED | PM_PAGE_MARKER | PM_PAGE_NONSWAP))
		CHECK(raw & B_SWAP);
	if (e.flags & PM_PAGE_PRESENT && e.flags & PM_PAGE_FRAME)
		CHECK_EQ_U64(e.pfn, raw & FRAME_MASK);
	else
		CHECK_EQ_U64(e.pfn, 0);
	if (!(e.flags & PM_PAGE_FRAME) || (e.flags & PM_PAGE_PRESENT)) {
		CHECK_EQ_U64(e.swap_type, 0);
		CHECK_EQ_U64(e.swap_offset, 0);
	}
	if (info->layout != PM_LAYOUT_PSHIFT)
		CHECK_EQ_U64(e.page_shift, 0);
	else
		CHECK_EQ_U64(e.page_shift, (raw >> 55) & 0x3f);
}

static int single_bits_all_layouts(void)
{
	static const enum pm_layout layouts[] = { PM_LAYOUT_UNKNOWN, PM_LAYOUT_PSHIFT, PM_LAYOUT_V2,
						  PM_LAYOUT_CURRENT };
	static const unsigned shifts[] = { 12, 14, 16 };
	size_t l, s;
	int k, vis, swp, failed = t_failed_checks;

	for (l = 0; l < sizeof(layouts) / sizeof(layouts[0]); l++)
		for (s = 0; s < 3; s++)
			for (vis = 0; vis < 2; vis++)
				for (swp = 0; swp < 2; swp++)
					for (k = 0; k < 64; k++) {
						struct pm_decode_info i = { layouts[l], shifts[s], vis, swp };
						check_invariants(1ULL << k, &i);
						check_invariants(~(1ULL << k), &i);
						check_invariants((1ULL << k) | PSHIFT(shifts[s]), &i);
						if (t_failed_checks - failed > 20)
							return T_FAIL;	/* enough noise */
					}
	return T_PASS;
}

static int single_bits_exact(void)
{
	int k;

	for (k = 0; k < 64; k++) {
		uint64_t raw = 1ULL << k;
		int r, fl, want = 0, wr = 0;

		switch (k) {
		case 55: want = PM_PAGE_SOFTDIRTY; break;
		case 56: want = PM_PAGE_EXCLUSIVE; break;
		case 57: want = PM_PAGE_UFFD_WP; break;
		case 58: want = PM_PAGE_GUARD; break;
		case 59: case 60: wr = -EINVAL; break;
		case 61: want = PM_PAGE_FILE; break;
		case 62: want = PM_PAGE_SWAPPED | PM_PAGE_FRAME; break;
		case 63: want = PM_PAGE_PRESENT | PM_PAGE_FRAME; break;
		default: wr = -EINVAL; break;	/* a frame on an empty entry */
		}
		fl = decode_flags(raw, &cur_vis, &r);
		CHECK_EQ_U64(fl, want);
		CHECK_EQ_U64(r, wr);
		/* v2: 55 soft-dirty, 56-60 must be zero. */
		want = k == 55 ? PM_PAGE_SOFTDIRTY : k == 61 ? PM_PAGE_FILE :
		       k == 62 ? PM_PAGE_SWAPPED | PM_PAGE_FRAME : k == 63 ? PM_PAGE_PRESENT | PM_PAGE_FRAME : 0;
		wr = (k < 55 || (k >= 56 && k <= 60)) ? -EINVAL : 0;
		fl = decode_flags(raw, &v2_vis, &r);
		CHECK_EQ_U64(fl, want);
		CHECK_EQ_U64(r, wr);
		/* Page shift: no single bit is a shift of 12. */
		fl = decode_flags(raw, &ps_vis, &r);
		CHECK_EQ_U64(r, -EINVAL);
		CHECK(!(fl & (PM_PAGE_SOFTDIRTY | PM_PAGE_EXCLUSIVE | PM_PAGE_UFFD_WP | PM_PAGE_GUARD)));
	}
	return T_PASS;
}

static int random_entries(void)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	int i, failed = t_failed_checks;

	for (i = 0; i < 200000 && t_failed_checks - failed < 20; i++) {
		struct pm_decode_info info = { (enum pm_layout)(i & 3), 12 + ((i >> 2) & 7), (i >> 5) & 1,
					       (i >> 6) & 1 };
		/* xorshift64* */
		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		check_invariants(x * 0x2545f4914f6cdd1dULL, &info);
		check_invariants((x * 0x2545f4914f6cdd1dULL) & (B_PRESENT | B_SWAP | B_FILE | (0x3fULL << 55) | 0xff),
				 &info);
	}
	check_invariants(~0ULL, &cur_vis);
	check_invariants(~0ULL, &ps_vis);
	check_invariants(~0ULL, &v2_vis);
	return T_PASS;
}

T_MAIN(T(current_zero), T(current_present_visible), T(current_present_hidden), T(current_file_bit),
       T(current_guard_marker), T(current_uffd_wp_marker), T(current_swap_entry), T(current_nonswap_types),
       T(current_hidden_swap), T(current_reserved_bits), T(current_present_and_swap), T(current_frame_on_empty),
       T(current_null_info), T(pshift_not_present), T(pshift_mismatch), T(pshift_present_and_swap),
       T(pshift_other_page_sizes), T(v2_layout), T(flag_table), T(flags_letters), T(single_bits_all_layouts),
       T(single_bits_exact), T(random_entries))
