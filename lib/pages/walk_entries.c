/* walk_entries.c - the walker's pread back end: batches of pagemap entries turned into pieces of alike pages (huge blocks, smaps Swap). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include "pme.h"
#include "walk.h"

#define KPF_HUGE	17
#define KPF_THP		22

static bool private_anon(const struct pm_mapping *m)
{
	return !(m->prot & PM_MAP_SHARED) && !m->inode &&
	       (m->kind == PM_MAP_ANON || m->kind == PM_MAP_HEAP || m->kind == PM_MAP_STACK ||
		m->kind == PM_MAP_ANON_NAMED);
}

/*
 * A replayed pagemap that ends inside a mapping: the capture was cut short.
 * Say so and where, rather than let the mappings past the cut vanish.
 */
static int truncated(struct pm_walk *w, uint64_t vpn)
{
	char path[4096];
	struct stat st;
	unsigned long long size = fstat(w->t->pagemap_fd, &st) == 0 ? (unsigned long long)st.st_size : 0;

	if (pmi_pid_path(w->t->ctx, path, sizeof(path), w->t->pid, "pagemap") < 0)
		snprintf(path, sizeof(path), "pagemap");
	return pmi_tree_error(w->t->ctx,
			     "%s is truncated: it ends at byte %llu (%#llx), but the entry of %#llx "
			     "(mapping %#llx-%#llx) is at byte %#llx",
			     path, size, size, (unsigned long long)(vpn << w->shift),
			     (unsigned long long)w->map.start, (unsigned long long)w->map.end,
			     (unsigned long long)(vpn * sizeof(uint64_t)));
}

/* Read entries from @vpn up to the next batch boundary or the segment's end. */
int pmi_walk_refill(struct pm_walk *w, uint64_t vpn)
{
	uint64_t end_vpn = w->seg.end >> w->shift;
	uint64_t lim = (vpn / BATCH_PAGES + 1) * BATCH_PAGES;
	ssize_t n;

	if (lim > end_vpn)
		lim = pmi_scan_readahead(w, end_vpn, lim);
	if (lim - vpn > w->buf_cap) {	/* grown once: every later read fits */
		uint64_t *more = realloc(w->buf, BATCH_PAGES * sizeof(uint64_t));

		if (!more)
			return -ENOMEM;
		w->buf = more;
		w->buf_cap = BATCH_PAGES;
	}
	/* the caller's check before every read of the walk, one entry or many (pm_target_read asks only for more) */
	if (w->t->ctx->check && (n = w->t->ctx->check(w->t->ctx->check_data)) < 0)
		return (int)n;
	if (w->hybrid && w->seg_pread) {	/* the cost model's pread side (walk_cost.c) */
		uint64_t t0 = pmi_walk_now();

		n = pmi_target_read_nocheck(w->t, vpn, w->buf, (size_t)(lim - vpn));
		w->pread_ns += pmi_walk_now() - t0;
		w->pread_pages += n > 0 ? (uint64_t)n : 0;
	} else {
		n = pmi_target_read_nocheck(w->t, vpn, w->buf, (size_t)(lim - vpn));
	}
	if (n < 0)
		return (int)n;
	/* Live, a short read is task_size or a vanished mm; a replayed file holds every mapping whole. */
	if (!w->t->ctx->live && (uint64_t)n < lim - vpn)
		return truncated(w, vpn + (uint64_t)n);
	w->buf_vpn = vpn;
	w->buf_n = (size_t)n;
	if (!n) {	/* at task_size: nothing above can be read */
		w->seg.end = w->map_end = w->map_cur = vpn << w->shift;
		return 1;
	}
	return 0;
}

/* Are the @avail entries at @e, a PMD block's, one huge page? (pread back end, PFNs visible) */
static bool huge_block(struct pm_walk *w, const uint64_t *e, size_t avail)
{
	uint64_t n = w->pmd_size >> w->shift, pfn = e[0] & PME_PFRAME_MASK, kpf;

	if (n > avail || !pme_huge_candidate(e, n))
		return false;
	/* Contiguous and aligned: a huge page unless the buddy allocator was very kind. */
	if (!w->kpage_tried) {	/* opened here, not per walk: most walks never meet such a block */
		w->kpage_tried = true;
		w->kpage = pm_kpage_open(w->t->ctx);	/* NULL: nothing to confirm with */
	}
	if (!w->kpage || pmi_kpage_word(w->kpage, PM_KPAGE_FLAGS, pfn, &kpf) != 1)
		return true;
	return kpf & ((1ULL << KPF_THP) | (1ULL << KPF_HUGE));
}

/*
 * How many entries from buffer index @i (below @lim) decode to the same flags
 * as buf[i] and, unless the walk ignores frames, carry on its frame: PFN +1,
 * swap offset +1, a marker unchanged, an empty entry unchanged. One tight loop
 * instead of a decode and a run update per page.
 */
static size_t same_run(const struct pm_walk *w, size_t i, size_t lim)
{
	const uint64_t *b = w->buf;
	uint64_t first = b[i], zero = w->f->zero_pfn, step = 0, mask;
	/* A swap entry may show its slot even when PFNs are hidden (4.2-4.17). */
	bool frames = w->t->decode.frame_visible || ((first & PME_SWAP) && (first & PME_PFRAME_MASK));
	bool is_zero = frames && zero && (first & PME_PRESENT) && (first & PME_PFRAME_MASK) == zero;
	size_t j;

	if (is_zero)
		return 1;
	if (frames && !(w->iflags & PMI_IWALK_NOFRAMES)) {
		if (first & PME_PRESENT)
			step = 1;
		else if ((first & PME_SWAP) && !((first & PME_SWAP_TYPE_MASK) == PM_SWAP_TYPE_MARKER && (first & PME_UFFD_WP)))
			step = 1ULL << 5;	/* the offset above the 5 type bits */
		for (j = i + 1; j < lim && b[j] == first + (j - i) * step; j++)
			;
		/* A frame run that reaches the zero page stops before it. */
		if (step == 1 && zero > (first & PME_PFRAME_MASK) && zero - (first & PME_PFRAME_MASK) < j - i)
			j = i + (size_t)(zero - (first & PME_PFRAME_MASK));
		return j - i;
	}
	/* Flags depend on bits 55-63, the swap type when frames show, and whether the PFN is the zero page. */
	mask = ~PME_PFRAME_MASK | (frames && (first & PME_SWAP) ? PME_SWAP_TYPE_MASK : 0);
	if (frames && zero && (first & PME_PRESENT)) {
		for (j = i + 1; j < lim && !((b[j] ^ first) & mask) && (b[j] & PME_PFRAME_MASK) != zero; j++)
			;
		return j - i;
	}
	for (j = i + 1; j < lim && !((b[j] ^ first) & mask); j++)
		;
	return j - i;
}

/*
 * Does the current mapping hold swapped pages, by its smaps Swap? Read once
 * per walk, and only when an entry needs it. Unknown counts as yes: that was
 * the answer before smaps was asked.
 */
static bool mapping_has_swap(struct pm_walk *w)
{
	int64_t swap;

	if (w->map_swap >= 0)
		return w->map_swap;
	if (w->smaps_err > 0)
		w->smaps_err = pmi_smaps_swap_read(w->t, &w->smaps, &w->nsmaps);
	swap = w->smaps_err ? -1 : pmi_smaps_swap_of(w->smaps, w->nsmaps, w->map.start);
	w->map_swap = swap != 0;
	return w->map_swap;
}

/*
 * With frames hidden (4.18+) a swap entry and a uffd-wp marker read alike:
 * bit 62 and bit 57, no type, no offset. Where swap is on, the mapping's
 * smaps Swap settles it: none there means every such entry is a marker.
 * A mapping with both is still counted as swapped (documented).
 */
static const struct pm_decode_info *decode_info(struct pm_walk *w, uint64_t raw, struct pm_decode_info *tmp)
{
	const struct pm_decode_info *d = &w->t->decode;

	if (d->frame_visible || !d->swap_active || d->layout != PM_LAYOUT_CURRENT || !(raw & PME_SWAP) ||
	    !(raw & PME_UFFD_WP) || (raw & PME_PFRAME_MASK))
		return d;
	*tmp = *d;
	tmp->swap_active = mapping_has_swap(w);
	return tmp;
}

/* Decode the @n pages at @addr (in the buffer, all alike by same_run) and add them. */
int pmi_walk_add_entries(struct pm_walk *w, uint64_t addr, uint64_t n)
{
	size_t i = (size_t)((addr >> w->shift) - w->buf_vpn);
	uint64_t raw = w->buf[i];
	struct pm_decode_info tmp;
	struct pm_entry e;
	uint32_t fl;

	/* A sparse layout alternates present and empty entries: each kind is decoded once, not per page. */
	bool present = raw & PME_PRESENT, memo = !(raw & PME_SWAP) && (present || !(raw & PME_PFRAME_MASK));

	if (memo && w->memo_key[present] == (raw >> PME_HIGH_SHIFT) + 1) {
		e = w->memo[present];
		e.raw = raw;
		e.pfn = (e.flags & PM_PAGE_FRAME) ? raw & PME_PFRAME_MASK : 0;
	} else {
		/* An impossible entry still carries its bits. */
		pm_entry_decode(raw, decode_info(w, raw, &tmp), &e);
		if (memo) {
			w->memo_key[present] = (raw >> PME_HIGH_SHIFT) + 1;
			w->memo[present] = e;
		}
	}
	fl = e.flags | w->seg.flags;
	if (addr < w->thp_end)
		fl |= PM_PAGE_THP;
	if ((fl & PM_PAGE_PRESENT) && (fl & PM_PAGE_FRAME) && w->f->zero_pfn && e.pfn == w->f->zero_pfn)
		fl |= PM_PAGE_ZERO;
	/* In private anonymous memory only the huge zero page is "file" (6.x quirk). */
	if ((fl & PM_PAGE_PRESENT) && (fl & PM_PAGE_FILE) && private_anon(&w->map) && w->f->huge_zero_page != PM_NO)
		fl |= PM_PAGE_ZERO;
	/* Nobody maps the zero page exclusively: a page that says so is a page of its own. */
	if (fl & PM_PAGE_EXCLUSIVE)
		fl &= ~PM_PAGE_ZERO;
	if (fl & PM_PAGE_ZERO)
		fl &= ~PM_PAGE_FILE;
	/* Read by pread in a scan walk without entries: what the scan says, no more (it reads swap-format entries too). */
	if (w->seg_pread && !(w->flags & PM_WALK_ENTRIES) && !(raw & PME_SWAP))
		fl &= w->known | PM_PAGE_MARKER;
	return pmi_walk_add_pages(w, addr, n << w->shift, fl, &e);
}

/*
 * Is the PMD block at @block, which the walk's range cuts but which lies
 * whole inside the mapping, one huge page? Its entries outside the range
 * are read aside, so that a walk of part of a THP says THP as a walk of the
 * whole mapping does, and as PAGEMAP_SCAN does (live test subrange_walks).
 */
static bool huge_block_aside(struct pm_walk *w, uint64_t block)
{
	size_t n = (size_t)(w->pmd_size >> w->shift);
	uint64_t *e;
	bool huge;

	if (block < w->map.start || block + w->pmd_size > w->map.end)
		return false;
	e = malloc(n * sizeof(*e));	/* at most twice per mapping: where the range starts and ends */
	/* no stop check: a stop here would read as "not huge"; the walk's next refill stops instead */
	huge = e && pmi_target_read_nocheck(w->t, block >> w->shift, e, n) == (ssize_t)n && huge_block(w, e, n);
	free(e);
	return huge;
}

/* Pages from @addr (in the buffer) to add as one piece: alike, and not past a PMD boundary where THP is probed. */
uint64_t pmi_walk_entry_piece(struct pm_walk *w, uint64_t addr)
{
	size_t i = (size_t)((addr >> w->shift) - w->buf_vpn), lim = w->buf_n;
	uint64_t seg_lim = (w->seg.end >> w->shift) - w->buf_vpn;
	bool thp_probe = (w->backend == PM_BACKEND_PREAD || w->seg_pread) && w->t->decode.frame_visible;

	if (seg_lim < lim)
		lim = (size_t)seg_lim;
	if (thp_probe) {
		uint64_t pmd_lim = i + ((w->pmd_size - (addr & (w->pmd_size - 1))) >> w->shift);
		uint64_t block = addr & ~(w->pmd_size - 1);
		bool cut = block < w->map_start || block + w->pmd_size > w->map_end;

		if (pmd_lim < lim)
			lim = (size_t)pmd_lim;
		if ((addr == block || addr == w->map_start) &&
		    (cut ? huge_block_aside(w, block) : huge_block(w, w->buf + i, w->buf_n - i))) {
			w->thp_end = block + w->pmd_size;
			/* One huge page: contiguous frames, identical flags, a single piece. */
			if (!(w->flags & PM_WALK_EACH))
				return lim - i;
		}
	}
	if (w->flags & PM_WALK_EACH)
		return 1;
	return same_run(w, i, lim);
}

/* Count the entries of [i, end) by their bits 55-63 and add each kind at its first. */
static void sum_kinds(struct pm_walk *w, uint64_t addr, size_t i, size_t end)
{
	uint32_t *cnt = w->kind_cnt, *at = w->kind_at;
	uint16_t seen[PMI_KINDS];
	unsigned nk = 0, k;
	size_t j;

	for (j = i; j < end; j++) {
		k = (unsigned)(w->buf[j] >> PME_HIGH_SHIFT);
		if (!cnt[k]++) {
			at[k] = (uint32_t)(j - i);
			seen[nk++] = (uint16_t)k;
		}
	}
	while (nk--) {
		k = seen[nk];
		pmi_walk_add_entries(w, addr + ((uint64_t)at[k] << w->shift), cnt[k]);
		cnt[k] = 0;
	}
}

/*
 * May an entry of this kind (bits 55-63) be the zero page's? Its frame has
 * no struct page the kernel reads (vm_normal_page() gives none), so the
 * entry is present without PM_FILE and PM_MMAP_EXCLUSIVE.
 */
static bool kind_may_be_zero(uint64_t kind)
{
	uint64_t raw = kind << PME_HIGH_SHIFT;

	return (raw & PME_PRESENT) && !(raw & (PME_FILE | PME_MMAP_EXCLUSIVE));
}

/*
 * Entries of kinds @k0 and @k1 among KIND_LANES at @b, added to @c0, @c1. A
 * fixed count of 32-bit kinds: the compiler makes it vector compares at -O2
 * (a loop of unknown count, or 64-bit compares, it leaves scalar).
 */
#define KIND_LANES	16u
static inline void count_kinds(const uint64_t *b, uint32_t k0, uint32_t k1, size_t *c0, size_t *c1)
{
	uint32_t n0 = 0, n1 = 0;
	unsigned u;

	for (u = 0; u < KIND_LANES; u++) {
		uint32_t kind = (uint32_t)(b[u] >> PME_HIGH_SHIFT);

		n0 += kind == k0;
		n1 += kind == k1;
	}
	*c0 += n0;
	*c1 += n1;
}

/*
 * Sums only (mapstat): the plain entries from @addr, which is not a PMD
 * block's first (entry_piece tells huge blocks there), to the end of the
 * buffer, segment or block, counted by their bits 55-63 and added once per
 * kind. A sparse heap is a piece per page: decoding each as a piece was a
 * third of `maps`' time where pread reads it. Most blocks hold one or two
 * kinds (empty, present): the second is the first entry unlike the first,
 * and one pass counts both, by compares and adds alone (a running minimum,
 * maximum and index of other kinds, and the swap and zero-page tests of
 * every entry, made the pass a fifth of `maps`' time on a sparse heap, where
 * the raw reader's is a shift and an add). The swap bit is a kind's; the
 * zero page's frame is compared only where a kind may be its. Plain: not
 * swap-format (the swap type counts), not the zero page's frame. Stops
 * before any other entry; returns the pages done (0: take a piece).
 */
uint64_t pmi_walk_sum_plain(struct pm_walk *w, uint64_t addr)
{
	const uint64_t *b = w->buf;
	size_t i = (size_t)((addr >> w->shift) - w->buf_vpn), lim = w->buf_n, end, j, c0 = 0, c1 = 0, zeros = 0, other;
	uint64_t seg_lim = (w->seg.end >> w->shift) - w->buf_vpn, pmd_lim, k0, k1;
	/* an impossible value where the zero page's frame is not known */
	uint64_t zero = w->t->decode.frame_visible && w->f->zero_pfn ? PME_PRESENT | w->f->zero_pfn : UINT64_MAX;

	if (!w->sums || (w->flags & PM_WALK_EACH) || addr < w->thp_end || !(addr & (w->pmd_size - 1)) ||
	    addr == w->map_start)
		return 0;
	pmd_lim = i + ((w->pmd_size - (addr & (w->pmd_size - 1))) >> w->shift);
	lim = seg_lim < lim ? (size_t)seg_lim : lim;
	lim = pmd_lim < lim ? (size_t)pmd_lim : lim;
	k0 = b[i] >> PME_HIGH_SHIFT;
	for (other = i + 1; other < lim && b[other] >> PME_HIGH_SHIFT == k0; other++)
		;
	k1 = other < lim ? b[other] >> PME_HIGH_SHIFT : k0;
	c0 = other - i;
	if (zero != UINT64_MAX && (kind_may_be_zero(k0) || kind_may_be_zero(k1))) {
		for (j = i; j < other; j++)
			zeros += (b[j] & (PME_PRESENT | PME_PFRAME_MASK)) == zero;
		for (; j < lim; j++) {
			zeros += (b[j] & (PME_PRESENT | PME_PFRAME_MASK)) == zero;
			c0 += b[j] >> PME_HIGH_SHIFT == k0;
			c1 += b[j] >> PME_HIGH_SHIFT == k1;
		}
	} else {
		for (j = other; j + KIND_LANES <= lim; j += KIND_LANES)
			count_kinds(b + j, (uint32_t)k0, (uint32_t)k1, &c0, &c1);
		for (; j < lim; j++) {
			c0 += b[j] >> PME_HIGH_SHIFT == k0;
			c1 += b[j] >> PME_HIGH_SHIFT == k1;
		}
	}
	if (!zeros && !((k0 | k1) & (PME_SWAP >> PME_HIGH_SHIFT)) && c0 + c1 == lim - i) {
		pmi_walk_add_entries(w, addr, c0);
		if (c1)	/* one kind more: added at its first entry */
			pmi_walk_add_entries(w, addr + ((uint64_t)(other - i) << w->shift), c1);
		return lim - i;
	}
	/* Three kinds or more, or not all plain: up to the first entry that is not, counted by the slower way. */
	for (end = i; end < lim && !(b[end] & PME_SWAP) && (b[end] & (PME_PRESENT | PME_PFRAME_MASK)) != zero; end++)
		;
	if (end > i)
		sum_kinds(w, addr, i, end);
	return end - i;
}
