/* walk.c - runs of pages with identical state over a range: PAGEMAP_SCAN and batched pread back ends, same records. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "compat.h"
#include "internal.h"
#include "smaps.h"

#ifndef BATCH_PAGES	/* the fuzz build makes batches small: cheaper runs, more batch boundaries */
#define BATCH_PAGES	65536u	/* entries per pread (512 KiB), a multiple of every PMD's page count */
#endif
#define SCAN_VEC	1024u	/* regions per PAGEMAP_SCAN call (24 KiB) */
#define KPF_HUGE	17
#define KPF_THP		22

/* A stretch of one mapping: either its state is known from scan categories, or entries must be read. */
struct segment {
	uint64_t start, end;
	uint32_t flags;		/* known flags, or flags to add to each entry's */
	bool entries;
};

struct pm_walk {
	struct pm_target *t;
	const struct pm_features *f;
	unsigned flags;
	enum pm_backend backend;
	uint32_t known;
	uint64_t start, end;
	uint64_t psize, pmd_size;
	unsigned shift;

	struct pm_maps *maps;
	struct pm_mapping map;		/* current mapping, as maps gave it */
	uint64_t map_start, map_end;	/* its part inside [start, end) */
	bool have_map;
	bool unreadable;		/* [vvar]/[vsyscall] under PM_WALK_ALLMAPS: never read */
	uint64_t map_cur;		/* first address of the mapping not yet segmented */
	unsigned map_line;		/* maps lines read so far */
	uint64_t prev_end;		/* end of the last mapping read: a replayed maps must ascend */

	struct segment seg;
	uint64_t seg_cur;		/* next address of seg to turn into runs */

	uint64_t *buf;			/* entries [buf_vpn, buf_vpn + buf_n) */
	uint64_t buf_vpn;
	size_t buf_n;
	uint64_t thp_end;		/* pread: end of the PMD block found huge */
	int kpf_fd;			/* /proc/kpageflags to confirm a huge block, or -1 */

	struct page_region *vec;	/* scan results for the current mapping */
	size_t vec_n, vec_pos;
	uint64_t scan_next;
	uint64_t scan_mask;

	struct pm_run pending, out;
	bool has_pending;

	/* Hidden frames with swap on: smaps Swap of each mapping tells uffd-wp markers from swap. */
	struct pm_smaps_swap *smaps;
	size_t nsmaps;
	int smaps_err;			/* 1: not read yet, 0: read, <0: could not be read */
	int map_swap;			/* the current mapping has swap: -1 not asked yet, 0, 1 */
};

static bool private_anon(const struct pm_mapping *m)
{
	return !(m->prot & PM_MAP_SHARED) && !m->inode &&
	       (m->kind == PM_MAP_ANON || m->kind == PM_MAP_HEAP || m->kind == PM_MAP_STACK ||
		m->kind == PM_MAP_ANON_NAMED);
}

/* The bits each kernel has (docs/kernel-interface.md §1): a bit it lacks reads 0 and means nothing. */
static uint32_t entry_known(const struct pm_walk *w)
{
	const struct pm_features *f = w->f;
	enum pm_layout l = w->t->decode.layout;
	uint32_t k = PM_PAGE_PRESENT | PM_PAGE_SWAPPED | PM_PAGE_MARKER;

	if (pm_kernel_at_least(f, 3, 5))
		k |= PM_PAGE_FILE;
	if (l == PM_LAYOUT_CURRENT)
		k |= PM_PAGE_EXCLUSIVE;
	if ((l == PM_LAYOUT_CURRENT || l == PM_LAYOUT_V2) && f->soft_dirty != PM_NO)
		k |= PM_PAGE_SOFTDIRTY;	/* without CONFIG_MEM_SOFT_DIRTY bit 55 is always 0 */
	if (l == PM_LAYOUT_CURRENT && pm_kernel_at_least(f, 5, 13))
		k |= PM_PAGE_UFFD_WP;
	if (l == PM_LAYOUT_CURRENT && (f->guard_regions == PM_YES || pm_kernel_at_least(f, 6, 15)) &&
	    f->guard_regions != PM_NO)
		k |= PM_PAGE_GUARD;
	return k;
}

static uint32_t pread_known(const struct pm_walk *w)
{
	uint32_t k = entry_known(w);

	if (w->t->decode.frame_visible)
		k |= PM_PAGE_FRAME | PM_PAGE_NONSWAP | PM_PAGE_THP | (w->f->zero_pfn || w->f->zero_page == PM_NO ? PM_PAGE_ZERO : 0);
	return k;
}

static uint32_t scan_known(const struct pm_walk *w)
{
	uint32_t k = PM_PAGE_PRESENT | PM_PAGE_SWAPPED | PM_PAGE_FILE | PM_PAGE_MARKER | PM_PAGE_THP |
		     PM_PAGE_ZERO;

	if ((w->scan_mask & PAGE_IS_SOFT_DIRTY) && w->f->soft_dirty != PM_NO)
		k |= PM_PAGE_SOFTDIRTY;
	if (w->scan_mask & PAGE_IS_GUARD)
		k |= PM_PAGE_GUARD;
	if (w->flags & PM_WALK_ENTRIES)
		k |= entry_known(w) & (PM_PAGE_EXCLUSIVE | PM_PAGE_UFFD_WP);
	/* Swapped regions are always read: their type tells migration from swap, when shown. */
	if (w->t->decode.frame_visible)
		k |= PM_PAGE_NONSWAP | ((w->flags & PM_WALK_ENTRIES) ? PM_PAGE_FRAME : 0);
	return k;
}

static int choose_backend(struct pm_walk *w)
{
	enum pm_backend b = w->t->ctx->backend;

	if (b == PM_BACKEND_SCAN && (!w->f->scan || !w->t->ctx->live))
		return -EOPNOTSUPP;
	/* A replayed tree is plain files: no ioctl can answer there. */
	if (b == PM_BACKEND_AUTO)
		b = w->f->scan && w->t->ctx->live ? PM_BACKEND_SCAN : PM_BACKEND_PREAD;
	w->backend = b;
	w->scan_mask = PAGE_IS_PRESENT | PAGE_IS_SWAPPED | PAGE_IS_FILE | PAGE_IS_PFNZERO | PAGE_IS_HUGE;
	w->scan_mask |= w->f->scan_categories & (PAGE_IS_SOFT_DIRTY | PAGE_IS_GUARD);
	w->known = b == PM_BACKEND_SCAN ? scan_known(w) : pread_known(w);
	return 0;
}

struct pm_walk *pm_walk_new(struct pm_target *t, uint64_t start, uint64_t end, unsigned flags)
{
	struct pm_walk *w;
	int r;

	if (start > end) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->t = t;
	w->f = pm_ctx_features(t->ctx);
	w->flags = flags;
	w->start = start;
	w->end = end;
	w->kpf_fd = -1;
	w->smaps_err = 1;
	w->psize = w->f->page_size;
	w->shift = w->f->page_shift;
	w->pmd_size = w->f->pmd_size;
	r = choose_backend(w);
	if (r < 0) {
		free(w);
		errno = -r;
		return NULL;
	}
	w->buf = malloc(BATCH_PAGES * sizeof(uint64_t));
	w->vec = w->backend == PM_BACKEND_SCAN ? malloc(SCAN_VEC * sizeof(*w->vec)) : NULL;
	w->maps = pm_maps_open(t);
	if (!w->buf || (w->backend == PM_BACKEND_SCAN && !w->vec) || !w->maps) {
		r = errno ? errno : ENOMEM;
		pm_walk_free(w);
		errno = r;
		return NULL;
	}
	if (w->backend == PM_BACKEND_PREAD && t->decode.frame_visible) {
		char path[4096];
		if (pm_path(t->ctx, path, sizeof(path), "/proc/kpageflags") == 0)
			w->kpf_fd = pm_open(t->ctx, path, O_RDONLY);
	}
	return w;
}

void pm_walk_free(struct pm_walk *w)
{
	if (!w)
		return;
	pm_maps_close(w->maps);
	if (w->kpf_fd >= 0)
		close(w->kpf_fd);
	free(w->smaps);
	free(w->buf);
	free(w->vec);
	free(w);
}

enum pm_backend pm_walk_backend(const struct pm_walk *w)
{
	return w->backend;
}

uint32_t pm_walk_known(const struct pm_walk *w)
{
	return w->known;
}

/*
 * The end of the maps file is the end of the walk only if the target still
 * has its memory. A maps file whose process exited or exec'd reads empty
 * from then on (6.x seq_file m_start finds no mm), which alone would pass
 * for an empty address space instead of -ESRCH (live test exit_race).
 * Live only: a replayed tree's pagemap file may legitimately be empty.
 */
static int maps_end(struct pm_walk *w)
{
	uint64_t e;
	ssize_t n;

	if (!w->t->ctx->live)
		return 1;
	n = pm_target_read(w->t, 0, &e, 1);	/* -ESRCH when the mm is gone */
	return n < 0 ? (int)n : 1;
}

/* Name the maps file and line of a replayed tree that the kernel could not have written. */
static int bad_maps(struct pm_walk *w, const char *why, const struct pm_mapping *m)
{
	char path[4096];

	if (w->t->ctx->live)
		return -EINVAL;
	if (pm_pid_path(w->t->ctx, path, sizeof(path), w->t->pid, "maps") < 0)
		snprintf(path, sizeof(path), "maps");
	if (!m)
		return pm_tree_error(w->t->ctx, "%s line %u: %s", path, w->map_line, why);
	return pm_tree_error(w->t->ctx, "%s line %u: %#llx-%#llx %s", path, w->map_line,
			     (unsigned long long)m->start, (unsigned long long)m->end, why);
}

/*
 * Mappings as the kernel prints them: whole pages, not empty, ascending and
 * apart. A replayed maps file may hold anything; a piece shorter than a page
 * would never advance the walk.
 */
static int check_mapping(struct pm_walk *w, const struct pm_mapping *m)
{
	/* [vsyscall] is 4 KiB whatever the page size of a synthetic tree: it is never read. */
	uint64_t unit = m->kind == PM_MAP_VSYSCALL || m->kind == PM_MAP_VVAR ? 4096 : w->psize;

	if ((m->start | m->end) & (unit - 1))
		return bad_maps(w, "is not a whole number of pages", m);
	if (m->start >= m->end)
		return bad_maps(w, "is empty", m);
	if (m->start < w->prev_end && !w->t->ctx->live)
		return bad_maps(w, "starts before the previous mapping ends", m);
	w->prev_end = m->end;
	return 0;
}

/* Advance to the next mapping that overlaps the range and can be read. Returns 0, 1 at the end, <0. */
static int next_mapping(struct pm_walk *w)
{
	const struct pm_mapping *m;
	int r;

	for (;;) {
		r = pm_maps_next(w->maps, &m);
		if (r == 1)
			return maps_end(w);
		w->map_line++;
		if (r == -EINVAL)
			return bad_maps(w, "is not a maps line", NULL);
		if (r)
			return r;
		r = check_mapping(w, m);
		if (r)
			return r;
		if (m->end <= w->start || m->start >= w->end)
			continue;
		/* [vsyscall] lies above task_size; [vvar] is VM_PFNMAP and always reads empty. */
		w->unreadable = m->kind == PM_MAP_VSYSCALL || m->kind == PM_MAP_VVAR;
		if (w->unreadable && !(w->flags & PM_WALK_ALLMAPS))
			continue;
		w->map = *m;
		/* Runs point at the whole mapping; the walk covers its part in range. */
		w->map_start = m->start < w->start ? w->start & ~(w->psize - 1) : m->start;
		w->map_end = m->end > w->end ? (w->end + w->psize - 1) & ~(w->psize - 1) : m->end;
		if (w->map_start < m->start)	/* a [vsyscall] smaller than a page */
			w->map_start = m->start;
		if (w->map_end > m->end || w->map_end < w->map_start)
			w->map_end = m->end;
		w->map_cur = w->scan_next = w->map_start;
		w->vec_n = w->vec_pos = 0;
		w->seg_cur = w->seg.end = w->map_start;
		w->map_swap = -1;
		w->have_map = true;
		return 0;
	}
}

static uint32_t flags_from_categories(uint64_t c)
{
	uint32_t f = 0;

	if (c & PAGE_IS_PRESENT)
		f |= PM_PAGE_PRESENT;
	if (c & PAGE_IS_SWAPPED)
		f |= PM_PAGE_SWAPPED;
	if (c & PAGE_IS_FILE)
		f |= PM_PAGE_FILE;
	if (c & PAGE_IS_HUGE)
		f |= PM_PAGE_THP;
	if (c & PAGE_IS_PFNZERO)
		f |= PM_PAGE_ZERO;
	if (c & PAGE_IS_SOFT_DIRTY)
		f |= PM_PAGE_SOFTDIRTY;
	if (c & PAGE_IS_GUARD)
		f = (f & ~PM_PAGE_SWAPPED) | PM_PAGE_GUARD | PM_PAGE_MARKER;
	return f;
}

/*
 * One PAGEMAP_SCAN call over the rest of the mapping. Resume rule for the
 * stale walk_end that 6.12-6.18 return after more than 512 regions in one
 * call (docs/kernel-interface.md §6.2): a full vec resumes at the later of walk_end and
 * the end of the last region.
 */
static int scan_refill(struct pm_walk *w)
{
	struct pm_scan_arg arg = {
		.size = sizeof(arg), .start = w->scan_next, .end = w->map_end,
		.vec = (uint64_t)(uintptr_t)w->vec, .vec_len = SCAN_VEC, .return_mask = w->scan_mask,
	};
	int n = ioctl(w->t->pagemap_fd, PAGEMAP_SCAN, &arg);

	if (n < 0)
		return -errno;
	w->vec_n = (size_t)n;
	w->vec_pos = 0;
	if ((size_t)n < SCAN_VEC)
		w->scan_next = w->map_end;
	else
		w->scan_next = arg.walk_end > w->vec[n - 1].end ? arg.walk_end : w->vec[n - 1].end;
	return 0;
}

static void set_seg(struct pm_walk *w, uint64_t start, uint64_t end, uint32_t flags, bool entries)
{
	w->seg = (struct segment){ .start = start, .end = end, .flags = flags, .entries = entries };
	w->seg_cur = start;
	w->map_cur = end;
}

/* Scan back end: the next region, or the gap before it (VM_PFNMAP parts are not reported). */
static int scan_segment(struct pm_walk *w)
{
	const struct page_region *reg;
	uint32_t fl;
	bool entries;
	int r;

	while (w->vec_pos == w->vec_n) {
		if (w->scan_next >= w->map_end) {
			if (w->map_cur >= w->map_end)
				return 1;
			set_seg(w, w->map_cur, w->map_end, 0, false);
			return 0;
		}
		r = scan_refill(w);
		if (r < 0)
			return r;
	}
	reg = &w->vec[w->vec_pos];
	if (reg->end <= w->map_cur) {	/* already counted: never twice */
		w->vec_pos++;
		return scan_segment(w);
	}
	if (reg->start > w->map_cur) {
		set_seg(w, w->map_cur, reg->start, 0, false);
		return 0;
	}
	w->vec_pos++;
	fl = flags_from_categories(reg->categories);
	/* PAGE_IS_SWAPPED also covers uffd-wp markers and migration entries: read those. */
	entries = ((fl & PM_PAGE_SWAPPED) ||
		   ((w->flags & PM_WALK_ENTRIES) && (fl & (PM_PAGE_PRESENT | PM_PAGE_MARKER))));
	if (entries)
		fl &= PM_PAGE_THP | PM_PAGE_ZERO;
	set_seg(w, w->map_cur, reg->end < w->map_end ? reg->end : w->map_end, fl, entries);
	return 0;
}

static int next_segment(struct pm_walk *w)
{
	if (w->unreadable) {
		if (w->map_cur >= w->map_end)
			return 1;
		set_seg(w, w->map_cur, w->map_end, 0, false);
		return 0;
	}
	if (w->backend == PM_BACKEND_SCAN)
		return scan_segment(w);
	if (w->map_cur >= w->map_end)
		return 1;
	set_seg(w, w->map_cur, w->map_end, 0, true);
	return 0;
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

	if (pm_pid_path(w->t->ctx, path, sizeof(path), w->t->pid, "pagemap") < 0)
		snprintf(path, sizeof(path), "pagemap");
	return pm_tree_error(w->t->ctx,
			     "%s is truncated: it ends at byte %llu (%#llx), but the entry of %#llx "
			     "(mapping %#llx-%#llx) is at byte %#llx",
			     path, size, size, (unsigned long long)(vpn << w->shift),
			     (unsigned long long)w->map.start, (unsigned long long)w->map.end,
			     (unsigned long long)(vpn * sizeof(uint64_t)));
}

/* Read entries from @vpn up to the next batch boundary or the segment's end. */
static int refill(struct pm_walk *w, uint64_t vpn)
{
	uint64_t end_vpn = w->seg.end >> w->shift;
	uint64_t lim = (vpn / BATCH_PAGES + 1) * BATCH_PAGES;
	ssize_t n;

	if (lim > end_vpn)
		lim = end_vpn;
	n = pm_target_read(w->t, vpn, w->buf, (size_t)(lim - vpn));
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
	uint64_t n = w->pmd_size >> w->shift, first = e[0], j, kpf;
	uint64_t pfn = first & ((1ULL << 55) - 1), diff = 0;

	if (!(first >> 63) || !pfn || (pfn & (n - 1)) || n > avail)
		return false;
	for (j = 1; j < n; j++)	/* no early exit: a branch-free loop the compiler can vectorise */
		diff |= e[j] ^ (first + j);
	if (diff)
		return false;
	/* Contiguous and aligned: a huge page unless the buddy allocator was very kind. */
	if (w->kpf_fd < 0 || pm_pread_words(w->kpf_fd, &kpf, 1, pfn) != 1)
		return true;
	return kpf & ((1ULL << KPF_THP) | (1ULL << KPF_HUGE));
}

static bool compatible(const struct pm_run *p, uint64_t addr, uint32_t flags, const struct pm_entry *e,
		       unsigned shift, bool frames)
{
	uint64_t n = (p->end - p->start) >> shift;

	if (p->end != addr || p->flags != flags)
		return false;
	if (!(flags & PM_PAGE_FRAME) || !frames)	/* pm_mapstat only sums bytes */
		return true;
	if ((flags & PM_PAGE_ZERO) && !(flags & PM_PAGE_THP))
		return e->pfn == p->pfn;	/* every page maps the one zero page */
	if (flags & PM_PAGE_PRESENT)
		return e->pfn == p->pfn + n;
	if (flags & PM_PAGE_MARKER)	/* the offset encodes the marker kind */
		return e->swap_type == p->swap_type && e->swap_offset == p->swap_offset;
	return e->swap_type == p->swap_type && e->swap_offset == p->swap_offset + n;
}

/* Extend the pending run by @len bytes or start a new one. Returns 1 when a finished run is in w->out. */
static int add_pages(struct pm_walk *w, uint64_t addr, uint64_t len, uint32_t flags, const struct pm_entry *e)
{
	static const struct pm_entry none;
	bool done;

	if (!e)
		e = &none;
	if (w->has_pending && !(w->flags & PM_WALK_EACH) &&
	    compatible(&w->pending, addr, flags, e, w->shift, !(w->flags & PM_WALK_NOFRAMES))) {
		w->pending.end += len;
		return 0;
	}
	done = w->has_pending;
	if (done)
		w->out = w->pending;
	w->pending = (struct pm_run){ .start = addr, .end = addr + len, .flags = flags,
				      .pfn = e->pfn, .swap_type = e->swap_type, .swap_offset = e->swap_offset,
				      .map = &w->map };
	w->has_pending = true;
	return done;
}

#define E_PRESENT	(1ULL << 63)
#define E_SWAP		(1ULL << 62)
#define E_UFFD_WP	(1ULL << 57)
#define E_FRAME_MASK	((1ULL << 55) - 1)
#define SWAP_TYPE_MASK	0x1fULL

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
	bool frames = w->t->decode.frame_visible || ((first & E_SWAP) && (first & E_FRAME_MASK));
	bool is_zero = frames && zero && (first & E_PRESENT) && (first & E_FRAME_MASK) == zero;
	size_t j;

	if (is_zero)
		return 1;
	if (frames && !(w->flags & PM_WALK_NOFRAMES)) {
		if (first & E_PRESENT)
			step = 1;
		else if ((first & E_SWAP) && !((first & SWAP_TYPE_MASK) == PM_SWAP_TYPE_MARKER && (first & E_UFFD_WP)))
			step = 1ULL << 5;	/* the offset above the 5 type bits */
		for (j = i + 1; j < lim && b[j] == first + (j - i) * step; j++)
			;
		/* A frame run that reaches the zero page stops before it. */
		if (step == 1 && zero > (first & E_FRAME_MASK) && zero - (first & E_FRAME_MASK) < j - i)
			j = i + (size_t)(zero - (first & E_FRAME_MASK));
		return j - i;
	}
	/* Flags depend on bits 55-63, the swap type when frames show, and whether the PFN is the zero page. */
	mask = ~E_FRAME_MASK | (frames && (first & E_SWAP) ? SWAP_TYPE_MASK : 0);
	if (frames && zero && (first & E_PRESENT)) {
		for (j = i + 1; j < lim && !((b[j] ^ first) & mask) && (b[j] & E_FRAME_MASK) != zero; j++)
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
		w->smaps_err = pm_smaps_swap_read(w->t, &w->smaps, &w->nsmaps);
	swap = w->smaps_err ? -1 : pm_smaps_swap_of(w->smaps, w->nsmaps, w->map.start);
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

	if (d->frame_visible || !d->swap_active || d->layout != PM_LAYOUT_CURRENT || !(raw & E_SWAP) ||
	    !(raw & E_UFFD_WP) || (raw & E_FRAME_MASK))
		return d;
	*tmp = *d;
	tmp->swap_active = mapping_has_swap(w);
	return tmp;
}

/* Decode the @n pages at @addr (in the buffer, all alike by same_run) and add them. */
static int add_entries(struct pm_walk *w, uint64_t addr, uint64_t n)
{
	size_t i = (size_t)((addr >> w->shift) - w->buf_vpn);
	struct pm_decode_info tmp;
	struct pm_entry e;
	uint32_t fl;

	/* An impossible entry still carries its bits. */
	pm_entry_decode(w->buf[i], decode_info(w, w->buf[i], &tmp), &e);
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
	return add_pages(w, addr, n << w->shift, fl, &e);
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
	huge = e && pm_target_read(w->t, block >> w->shift, e, n) == (ssize_t)n && huge_block(w, e, n);
	free(e);
	return huge;
}

/* Pages from @addr (in the buffer) to add as one piece: alike, and not past a PMD boundary where THP is probed. */
static uint64_t entry_piece(struct pm_walk *w, uint64_t addr)
{
	size_t i = (size_t)((addr >> w->shift) - w->buf_vpn), lim = w->buf_n;
	uint64_t seg_lim = (w->seg.end >> w->shift) - w->buf_vpn;
	bool thp_probe = w->backend == PM_BACKEND_PREAD && w->t->decode.frame_visible;

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

/* Turn the current segment into runs until one run is finished. Returns 1 with w->out, 0 when the segment ends. */
static int consume(struct pm_walk *w)
{
	int r;

	while (w->seg_cur < w->seg.end) {
		uint64_t addr = w->seg_cur, vpn = addr >> w->shift, n;

		if (!w->seg.entries) {
			uint32_t fl = w->seg.flags;
			/* In bytes: an unread [vsyscall] may be less than a page, and must still end. */
			uint64_t len = w->seg.end - addr;
			if (fl & PM_PAGE_ZERO)
				fl &= ~PM_PAGE_FILE;
			if ((w->flags & PM_WALK_EACH) && len > w->psize)
				len = w->psize;
			w->seg_cur += len;
			if (add_pages(w, addr, len, fl, NULL))
				return 1;
			continue;
		}
		if (vpn < w->buf_vpn || vpn >= w->buf_vpn + w->buf_n) {
			r = refill(w, vpn);
			if (r)
				return r < 0 ? r : 0;
		}
		n = entry_piece(w, addr);
		w->seg_cur += n << w->shift;
		if (add_entries(w, addr, n))
			return 1;
	}
	return 0;
}

static bool flush(struct pm_walk *w)
{
	if (!w->has_pending)
		return false;
	w->out = w->pending;
	w->has_pending = false;
	return true;
}

int pm_walk_next(struct pm_walk *w, const struct pm_run **out)
{
	int r;

	for (;;) {
		if (!w->have_map) {
			r = next_mapping(w);
			if (r)
				return r;
		}
		if (w->seg_cur >= w->seg.end) {
			r = next_segment(w);
			if (r < 0)
				return r;
			if (r == 1) {	/* runs never span two mappings */
				w->have_map = false;
				if (flush(w)) {
					*out = &w->out;
					return 0;
				}
				continue;
			}
		}
		r = consume(w);
		if (r < 0)
			return r;
		if (r == 1) {
			*out = &w->out;
			return 0;
		}
	}
}

void pm_usage_add(struct pm_usage *u, const struct pm_run *run)
{
	uint64_t b = run->end - run->start;
	uint32_t f = run->flags;

	if (f & PM_PAGE_PRESENT)
		u->present += b;
	if (f & PM_PAGE_SWAPPED)
		u->swapped += b;
	if (f & PM_PAGE_FILE)
		u->file += b;
	if (f & PM_PAGE_EXCLUSIVE)
		u->exclusive += b;
	if (f & PM_PAGE_THP)
		u->thp += b;
	if (f & PM_PAGE_SOFTDIRTY)
		u->softdirty += b;
	if (f & PM_PAGE_UFFD_WP)
		u->uffdwp += b;
	if (f & PM_PAGE_GUARD)
		u->guard += b;
	if (f & PM_PAGE_ZERO)
		u->zero += b;
}
