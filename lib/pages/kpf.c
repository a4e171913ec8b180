/* kpf.c - pure physical page flags: the KPF table, page-types' -b filter expressions, names and letters. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pages.h"

/* Bit numbers of the overloaded bits pm_kpf_cook() unfolds (docs/kernel-interface.md §7.1, page-types.c). */
enum {
	KPF_ERROR = 1, KPF_ACTIVE = 6, KPF_SLAB = 7, KPF_WRITEBACK = 8, KPF_RECLAIM = 9,
	KPF_OWNER_2 = 34, KPF_READAHEAD = 48, KPF_SLUB_FROZEN = 50, KPF_SLUB_DEBUG = 51,
};

#define BIT(n) (1ULL << (n))

/* Stable bits first, then kernel-internal, then page-types' pseudo-bits: letters as page-types (docs/kernel-interface.md §8). */
static const struct pm_kpf_info kpf_table[] = {
	{ 0, "locked", 'L', "page lock held (I/O in progress)", false },
	{ 1, "error", 'E', "I/O error (never set since 6.12)", false },
	{ 2, "referenced", 'R', "recently referenced (PG_referenced)", false },
	{ 3, "uptodate", 'U', "data valid", false },
	{ 4, "dirty", 'D', "dirty (PG_dirty)", false },
	{ 5, "lru", 'l', "on an LRU list", false },
	{ 6, "active", 'A', "on the active LRU", false },
	{ 7, "slab", 'S', "slab page", false },
	{ 8, "writeback", 'W', "under writeback", false },
	{ 9, "reclaim", 'I', "to be reclaimed (PG_reclaim)", false },
	{ 10, "buddy", 'B', "first page of a free buddy block", false },
	{ 11, "mmap", 'M', "mapped into some page table", false },
	{ 12, "anonymous", 'a', "anonymous memory", false },
	{ 13, "swapcache", 's', "in the swap cache", false },
	{ 14, "swapbacked", 'b', "RAM or swap backed (anon, shmem)", false },
	{ 15, "compound_head", 'H', "head of a compound page or large folio", false },
	{ 16, "compound_tail", 'T', "tail of a compound page or large folio", false },
	{ 17, "huge", 'G', "part of a hugetlb page", false },
	{ 18, "unevictable", 'u', "on the unevictable LRU (mlock, ramfs, SHM_LOCK)", false },
	{ 19, "hwpoison", 'X', "hardware poisoned", false },
	{ 20, "nopage", 'n', "no struct page at this frame (hole, offline, device)", false },
	{ 21, "ksm", 'x', "KSM merged page", false },
	{ 22, "thp", 't', "transparent huge page or large folio (mTHP, 6.10+)", false },
	{ 23, "offline", 'o', "logically offline (balloon)", false },
	{ 24, "zero_page", 'z', "the zero page or huge zero page", false },
	{ 25, "idle_page", 'i', "idle (page_idle tracking)", false },
	{ 26, "pgtable", 'g', "page table", false },
	{ 32, "reserved", 'r', "reserved (zero page, vDSO, pfn 0)", true },
	{ 33, "mlocked", 'm', "mlocked", true },
	{ 34, "owner_2", 'd', "PG_owner_2 (6.1: mappedtodisk)", true },
	{ 35, "private", 'P', "PG_private", true },
	{ 36, "private_2", 'p', "PG_private_2", true },
	{ 37, "owner_private", 'O', "PG_owner_priv_1 (swapcache on swap-backed pages)", true },
	{ 38, "arch", 'h', "architecture-specific PG_arch_1", true },
	{ 39, "uncached", 'c', "PG_uncached (6.1)", true },
	{ 40, "softdirty", 'f', "soft-dirty (from pagemap, never from the kernel)", true },
	{ 41, "arch_2", 'H', "architecture-specific PG_arch_2", true },
	{ 42, "arch_3", '3', "architecture-specific PG_arch_3 (6.12)", true },
	{ 47, "anon_exclusive", 'd', "pseudo: owner_2 on an anonymous page", true },
	{ 48, "readahead", 'I', "pseudo: reclaim without writeback", true },
	{ 50, "slub_frozen", 'A', "pseudo: active on a slab page", true },
	{ 51, "slub_debug", 'E', "pseudo: error on a slab page", true },
	{ 61, "file", 'F', "pseudo: pagemap says file-backed", true },
	{ 62, "swap", 'w', "pseudo: pagemap says swapped", true },
	{ 63, "mmap_exclusive", '1', "pseudo: pagemap says mapped only here", true },
};

const struct pm_kpf_info *pm_kpf_table(size_t *n)
{
	if (n)
		*n = PMI_ARRAY_SIZE(kpf_table);
	return kpf_table;
}

static const struct pm_kpf_info *kpf_by_bit(unsigned bit)
{
	size_t i;

	for (i = 0; i < PMI_ARRAY_SIZE(kpf_table); i++)
		if (kpf_table[i].bit == bit)
			return &kpf_table[i];
	return NULL;
}

static uint64_t unfold(uint64_t flags)
{
	if ((flags & BIT(PM_KPF_ANON)) && (flags & BIT(KPF_OWNER_2)))
		flags ^= BIT(KPF_OWNER_2) | BIT(PM_KPF_ANON_EXCLUSIVE);
	if (flags & BIT(KPF_SLAB)) {
		if (flags & BIT(KPF_ACTIVE))
			flags ^= BIT(KPF_ACTIVE) | BIT(KPF_SLUB_FROZEN);
		if (flags & BIT(KPF_ERROR))
			flags ^= BIT(KPF_ERROR) | BIT(KPF_SLUB_DEBUG);
	}
	if ((flags & BIT(KPF_RECLAIM)) && !(flags & BIT(KPF_WRITEBACK)))
		flags ^= BIT(KPF_RECLAIM) | BIT(KPF_READAHEAD);
	return flags;
}

uint64_t pm_kpf_cook(uint64_t flags, bool raw)
{
	const uint64_t compound = BIT(PM_KPF_COMPOUND_HEAD) | BIT(PM_KPF_COMPOUND_TAIL);

	if (raw)
		return unfold(flags);
	flags &= ~PM_KPF_INTERNAL_MASK;
	if ((flags & compound) && !(flags & BIT(PM_KPF_HUGE)))
		flags &= ~compound;
	return flags;
}

int pm_kpf_describe(uint64_t flags, char *buf, size_t size)
{
	size_t len = 0;
	unsigned bit;

	if (size)
		buf[0] = '\0';
	for (bit = 0; bit < 64; bit++) {
		const struct pm_kpf_info *k = kpf_by_bit(bit);
		int r;

		if (!(flags & BIT(bit)))
			continue;
		r = k ? snprintf(buf + len, size - len, "%s%s", len ? "," : "", k->name) :
			snprintf(buf + len, size - len, "%sbit%u", len ? "," : "", bit);
		if (r < 0 || (size_t)r >= size - len) {
			if (size)
				buf[len] = '\0';
			return -ENOSPC;
		}
		len += (size_t)r;
	}
	return (int)len;
}

char *pm_kpf_letters(uint64_t flags, bool raw, char *buf, size_t size)
{
	size_t i, k = 0;

	if (!size)
		return buf;
	for (i = 0; i < PMI_ARRAY_SIZE(kpf_table) && k + 1 < size; i++) {
		if (kpf_table[i].internal && !raw)
			continue;
		buf[k++] = (flags & BIT(kpf_table[i].bit)) ? kpf_table[i].letter : '_';
	}
	buf[k] = '\0';
	return buf;
}

/*
 * One term of @len bytes, resolved as page-types' parse_flag_name() does, in
 * this order: empty (no bits), a prefix of "compound" (head and tail), a
 * prefix of a flag name in bit order (so "u" is uptodate and "a" active), a
 * number. Only then our own syntax: one flag letter ("L", "x"), which
 * page-types rejects, so it cannot change the meaning of an expression
 * page-types accepts. Unlike page-types, a malformed number ("0xzz", "-1",
 * "12abc") is an error rather than whatever strtoll() made of its start.
 * Returns 0 with *@bits or -EINVAL.
 */
static int parse_name(const char *s, size_t len, uint64_t *bits)
{
	char num[24], *end;
	size_t i;

	*bits = 0;
	if (!len)
		return 0;
	if (len <= 8 && !strncmp(s, "compound", len)) {
		*bits = BIT(PM_KPF_COMPOUND_HEAD) | BIT(PM_KPF_COMPOUND_TAIL);
		return 0;
	}
	for (i = 0; i < PMI_ARRAY_SIZE(kpf_table); i++) {
		if (len <= strlen(kpf_table[i].name) && !strncmp(s, kpf_table[i].name, len)) {
			*bits = BIT(kpf_table[i].bit);
			return 0;
		}
	}
	if (s[0] >= '0' && s[0] <= '9') {
		if (len >= sizeof(num))
			return -EINVAL;
		memcpy(num, s, len);
		num[len] = '\0';
		errno = 0;
		*bits = strtoull(num, &end, 0);
		return errno || *end ? -EINVAL : 0;
	}
	for (i = 0; len == 1 && i < PMI_ARRAY_SIZE(kpf_table); i++) {
		if (s[0] == kpf_table[i].letter) {
			*bits = BIT(kpf_table[i].bit);
			return 0;
		}
	}
	return -EINVAL;
}

/*
 * The bits of the comma list [s, s + len), as page-types' parse_flag_names():
 * a "~term" counts only when @neg is true, and is otherwise skipped unread.
 */
static int parse_list(const char *s, size_t len, bool neg, uint64_t *bits)
{
	const char *end = s + len;

	*bits = 0;
	for (;;) {
		const char *comma = memchr(s, ',', (size_t)(end - s));
		size_t n = comma ? (size_t)(comma - s) : (size_t)(end - s);
		uint64_t b;

		if (n && s[0] == '~') {
			if (neg && parse_name(s + 1, n - 1, &b) < 0)
				return -EINVAL;
			if (neg)
				*bits |= b;
		} else {
			if (parse_name(s, n, &b) < 0)
				return -EINVAL;
			*bits |= b;
		}
		if (!comma)
			return 0;
		s = comma + 1;
	}
}

/* The length of the list at @s: up to the next '=' or the end (page-types ignores the rest). */
static size_t list_len(const char *s)
{
	return strcspn(s, "=");
}

/*
 * page-types' parse_bits_mask(): "=V" (flags == V), "M=V" ((flags & M) == V),
 * "a,~b" ((flags & (a|b)) == a), "a,b" ((flags & (a|b)) != 0).
 */
int pm_kpf_parse(struct pm_kpf_filter *f, const char *expr)
{
	struct pm_kpf_term t = { 0 };
	const char *eq;
	int r;

	if (!f || !expr)
		return -EINVAL;
	if (f->n >= PM_KPF_MAX_TERMS)
		return -E2BIG;
	eq = strchr(expr, '=');
	if (eq == expr) {
		t.mask = ~0ULL;
		r = parse_list(eq + 1, list_len(eq + 1), false, &t.value);
	} else if (eq) {
		r = parse_list(expr, (size_t)(eq - expr), false, &t.mask);
		if (r == 0)
			r = parse_list(eq + 1, list_len(eq + 1), false, &t.value);
	} else if (strchr(expr, '~')) {
		r = parse_list(expr, strlen(expr), true, &t.mask);
		if (r == 0)
			r = parse_list(expr, strlen(expr), false, &t.value);
	} else {
		r = parse_list(expr, strlen(expr), false, &t.mask);
		t.value = ~0ULL;
	}
	if (r < 0)
		return r;
	t.any = t.value == ~0ULL;	/* page-types' KPF_ALL_BITS test, with its corner case */
	f->term[f->n++] = t;
	return 0;
}

bool pm_kpf_match(const struct pm_kpf_filter *f, uint64_t flags)
{
	unsigned i;

	for (i = 0; f && i < f->n && i < PM_KPF_MAX_TERMS; i++) {
		const struct pm_kpf_term *t = &f->term[i];

		if (t->any ? !(flags & t->mask) : (flags & t->mask) != t->value)
			return false;
	}
	return true;
}
