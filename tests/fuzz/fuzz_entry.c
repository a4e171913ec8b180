/* fuzz_entry.c - libFuzzer target for pm_entry_decode: 8 bytes of raw entry, 1 byte choosing how it was read. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pagemap.h"

#define PM_FUZZ_NAME "fuzz_entry"
#include "replay_main.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ASSERT(c)                                                                          \
	do {                                                                               \
		if (!(c)) {                                                                \
			fprintf(stderr, "fuzz_entry: %s:%d: invariant failed: %s (raw %#llx)\n", \
				__FILE__, __LINE__, #c, (unsigned long long)raw);          \
			abort();                                                           \
		}                                                                          \
	} while (0)

#define FRAME_MASK	((1ULL << 55) - 1)
#define ALL_FLAGS	((1u << PM_PAGE_NFLAGS) - 1)

/*
 * Selector byte: bits 0-1 layout (unknown, pshift, v2, current), bit 2
 * frame_visible, bit 3 swap_active, bits 4-7 page_shift - 12 (12..27).
 */
static void check(uint64_t raw, const struct pm_decode_info *info)
{
	struct pm_entry e, e2;
	char letters[PM_PAGE_NFLAGS + 1];
	int r;

	memset(&e, 0xa5, sizeof(e));
	r = pm_entry_decode(raw, info, &e);
	ASSERT(r == 0 || r == -EINVAL);
	ASSERT(e.raw == raw);
	ASSERT(!(e.flags & ~ALL_FLAGS));
	ASSERT(!(e.flags & (PM_PAGE_THP | PM_PAGE_ZERO)));
	ASSERT(!((e.flags & PM_PAGE_PRESENT) && (e.flags & PM_PAGE_SWAPPED)));
	/* Frames only when shown: to this reader, or by a swap entry that carries its slot (4.2-4.17). */
	ASSERT(!(e.flags & PM_PAGE_FRAME) || info->frame_visible || (!(raw >> 63) && (raw >> 62 & 1) && (raw & FRAME_MASK)));
	ASSERT(!!(e.flags & PM_PAGE_PRESENT) == !!(raw >> 63));
	/* At most one of swap / marker / non-swap, and only with bit 62 and without bit 63. */
	ASSERT(__builtin_popcount(e.flags & (PM_PAGE_SWAPPED | PM_PAGE_MARKER | PM_PAGE_NONSWAP)) <= 1);
	if (e.flags & (PM_PAGE_SWAPPED | PM_PAGE_MARKER | PM_PAGE_NONSWAP))
		ASSERT((raw & (1ULL << 62)) && !(raw >> 63));
	if ((raw & (1ULL << 62)) && !(raw >> 63))
		ASSERT(e.flags & (PM_PAGE_SWAPPED | PM_PAGE_MARKER | PM_PAGE_NONSWAP));
	ASSERT(!!(e.flags & PM_PAGE_FILE) == !!(raw & (1ULL << 61)));
	if ((e.flags & PM_PAGE_PRESENT) && (e.flags & PM_PAGE_FRAME))
		ASSERT(e.pfn == (raw & FRAME_MASK));
	else
		ASSERT(e.pfn == 0);
	if ((e.flags & PM_PAGE_FRAME) && !(e.flags & PM_PAGE_PRESENT)) {
		ASSERT(e.swap_type == (raw & 0x1f));
		ASSERT(e.swap_offset == (raw & FRAME_MASK) >> 5);
	} else {
		ASSERT(e.swap_type == 0 && e.swap_offset == 0);
	}
	if (info->layout == PM_LAYOUT_PSHIFT) {
		ASSERT(e.page_shift == ((raw >> 55) & 0x3f));
		ASSERT(r == 0 || e.page_shift != info->page_shift || ((raw >> 62) == 3) ||
		       (!(raw >> 62) && (raw & FRAME_MASK)));
		ASSERT(!(e.flags & (PM_PAGE_SOFTDIRTY | PM_PAGE_EXCLUSIVE | PM_PAGE_UFFD_WP | PM_PAGE_GUARD)));
	} else {
		ASSERT(e.page_shift == 0);
	}
	if (info->layout == PM_LAYOUT_V2)
		ASSERT(!(e.flags & (PM_PAGE_EXCLUSIVE | PM_PAGE_UFFD_WP | PM_PAGE_GUARD)));
	/* Impossible combinations are refused. */
	if ((raw >> 62) == 3)
		ASSERT(r == -EINVAL);
	if (info->layout == PM_LAYOUT_CURRENT && (raw & (3ULL << 59)))
		ASSERT(r == -EINVAL);
	/* Pure: the same answer twice. */
	memset(&e2, 0x5a, sizeof(e2));
	ASSERT(pm_entry_decode(raw, info, &e2) == r);
	ASSERT(e2.flags == e.flags && e2.pfn == e.pfn && e2.swap_type == e.swap_type &&
	       e2.swap_offset == e.swap_offset && e2.page_shift == e.page_shift);
	pm_flags_letters(e.flags, letters, sizeof(letters));
	ASSERT(strlen(letters) == PM_PAGE_NFLAGS - 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum pm_layout layouts[] = { PM_LAYOUT_UNKNOWN, PM_LAYOUT_PSHIFT, PM_LAYOUT_V2,
						  PM_LAYOUT_CURRENT };
	uint8_t in[9] = { 0 };
	struct pm_decode_info info;
	uint64_t raw;

	memcpy(in, data, size < sizeof(in) ? size : sizeof(in));
	memcpy(&raw, in, sizeof(raw));
	info.layout = layouts[in[8] & 3];
	info.frame_visible = in[8] & 4;
	info.swap_active = in[8] & 8;
	info.page_shift = 12 + (in[8] >> 4);
	check(raw, &info);
	/* The other readings of the same bits must hold up too. */
	info.frame_visible = !info.frame_visible;
	check(raw, &info);
	info.layout = PM_LAYOUT_CURRENT;
	check(raw, &info);
	return 0;
}
