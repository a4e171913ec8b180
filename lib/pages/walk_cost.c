/* walk_cost.c - the hybrid walk's reader per mapping: PAGEMAP_SCAN (entries read where needed) or pread alone, by costs measured in the walk. */
#include "scan.h"
#include "walk.h"

/*
 * May a walk read some mappings by pread and others by the scan and answer
 * alike? pread tells huge pages by their frames, so frames must show; every
 * flag the scan tells must be told by pread too (the zero page needs its
 * frame known); and without entries only where runs need no frames (sums):
 * a run read by pread ends where its frames stop following on, one by the
 * scan does not.
 */
bool pmi_walk_hybrid_ok(const struct pm_walk *w)
{
	if (!w->t->decode.frame_visible)
		return false;
	if (!(w->flags & PM_WALK_ENTRIES) && !(w->iflags & PMI_IWALK_NOFRAMES))
		return false;
	return !(pmi_walk_known_how(w, true) & ~pmi_walk_known_how(w, false));
}

/*
 * The sample: the pages from map_cur to @seen that the scan has walked, the
 * entries the scan's way must read there (regions that need them, and the
 * gaps pmi_scan_readahead reads through), and whether a huge page is among them.
 */
static void measure_sample(struct pm_walk *w, uint64_t seen)
{
	uint64_t reads = 0, last = 0, gap = (uint64_t)READAHEAD_GAP << w->shift;
	size_t i;

	w->sample_huge = false;
	for (i = w->vec_pos; i < w->vec_n && w->vec[i].start < seen; i++) {
		uint64_t s = w->vec[i].start > w->map_cur ? w->vec[i].start : w->map_cur;
		uint64_t e = w->vec[i].end < seen ? w->vec[i].end : seen;
		uint32_t fl = pmi_walk_cat_flags(w, w->vec[i].categories);

		if (e <= s || !pmi_walk_needs_entries(w, fl))
			continue;
		w->sample_huge |= (fl & PM_PAGE_THP) != 0;
		if (last && s - last <= gap)
			reads += (s - last) >> w->shift;
		reads += (e - s) >> w->shift;
		last = e;
	}
	w->sample_pages = (seen - w->map_cur) >> w->shift;
	w->sample_reads = reads;
	w->sampled = true;
}

/*
 * What every scan call costs whatever it walks (the system call, the lock,
 * the mapping's lookup): one call over one page, timed once per walk. A
 * sample of empty space costs little more, so without this a 32 MiB sample
 * of a reservation of terabytes (a sanitizer's allocator) priced the scan
 * of the rest at that call's cost per page, near pread's.
 */
static uint64_t call_cost(struct pm_walk *w)
{
	if (!w->scan_call_ns) {
		struct pm_scan_arg arg = { .start = w->map_cur, .return_mask = w->scan_mask, .max_pages = 1 };
		struct page_region one;
		uint64_t t0 = pmi_walk_now();

		pmi_scan_step(w->t->pagemap_fd, &arg, w->map_cur + w->psize, &one, 1);
		w->scan_call_ns = pmi_walk_now() - t0 + 1;	/* 0: not timed yet */
	}
	return w->scan_call_ns - 1;
}

/*
 * The cost per page of the rest of the mapping each way, the sample taken
 * as its likeness: the scan's way is the sample's scan call's CPU time per
 * page walked, less what any call costs, plus the sample's share of entries
 * read at pread's cost; pread's way is one entry per page at the CPU time
 * per entry of the walk's preads. Both measured in the walk, on this
 * machine and this shape: where a region per page makes the scan dearer
 * than pread (a sparse heap), pread reads alone; where the scan skips what
 * holds nothing (a sanitizer's shadow), it scans. Pure: the walk's figures
 * in, the choice out (tests/unit/test_walk_cost.c).
 */
bool pmi_walk_cost_choose(const struct pmi_walk_costs *c, double *scan, double *pread)
{
	*pread = c->pread_pages ? (double)c->pread_ns / (double)c->pread_pages : 0;
	*scan = c->scan_pages && c->scan_ns > c->call_ns ? (double)(c->scan_ns - c->call_ns) / (double)c->scan_pages : 0;
	*scan += *pread * (double)c->sample_reads / (double)(c->sample_pages ? c->sample_pages : 1);
	return c->pread_pages && *pread < *scan;
}

static bool prefer_pread(struct pm_walk *w)
{
	struct pmi_walk_costs c = {
		.scan_ns = w->scan_ns, .scan_pages = w->scan_pages, .call_ns = call_cost(w),
		.pread_ns = w->pread_ns, .pread_pages = w->pread_pages,
		.sample_pages = w->sample_pages, .sample_reads = w->sample_reads,
	};
	double scan, pread;
	bool r = pmi_walk_cost_choose(&c, &scan, &pread);

	pmi_dbg(w->t->ctx, "walk: %#llx-%#llx: sampled %llu pages, %llu entries to read by the scan's way: "
		"scan %.2f ns/page, pread %.2f ns/page (a scan call %llu ns): %s", (unsigned long long)w->map.start,
		(unsigned long long)w->map.end, (unsigned long long)w->sample_pages,
		(unsigned long long)w->sample_reads, scan, pread, (unsigned long long)c.call_ns,
		r ? "rest by pread" : "scan on");
	return r;
}

/*
 * Take the sample: what the scan has seen of the mapping (at least
 * PROBE_PAGES / 2 pages, else a bounded scan afresh). Returns 1 when the
 * scan has seen the mapping whole (nothing left to choose), 0, or <0.
 */
static int take_sample(struct pm_walk *w)
{
	uint64_t seen, want = (uint64_t)(PROBE_PAGES / 2) << w->shift;
	int r;

	w->free_end = w->map_end;
	seen = w->scan_next < w->map_end ? w->scan_next : w->map_end;
	if (seen >= w->map_end)
		return 1;
	/* A scan ahead saw too little of it, or was not timed (it ran on from a mapping it saw whole): sample afresh. */
	if (seen - w->map_cur < want || !w->scan_timed) {
		w->scan_next = w->map_cur;
		w->free_end = 0;
		r = pmi_walk_scan_refill(w);
		if (r < 0)
			return r;
		w->free_end = w->map_end;
		seen = w->scan_next < w->map_end ? w->scan_next : w->map_end;
		if (seen >= w->map_end)
			return 1;
	}
	measure_sample(w, seen);
	return 0;
}

/*
 * Choose how the rest of the current mapping is read (the scan back end,
 * auto, hybrid). Scanning on where entries are read anyway walks the page
 * tables twice; pread alone reads an entry for every page, the empty ones
 * too. Huge pages keep the scan. The first mapping to choose, with no pread
 * measured yet, reads its sample by pread to measure it, then chooses.
 * Returns 1 when the segment is a stretch read by pread, 0 to scan on, <0.
 */
int pmi_walk_decide(struct pm_walk *w)
{
	int r;

	if (!w->sampled) {
		r = take_sample(w);
		if (r) {
			w->decided = true;
			return r < 0 ? r : 0;
		}
	}
	if (!w->sample_huge && !w->pread_pages && !w->explored) {
		w->explored = true;
		pmi_walk_set_seg(w, w->map_cur, w->map_cur + (w->sample_pages << w->shift), 0, true);
		w->seg_pread = true;
		return 1;
	}
	w->decided = true;
	if (w->sample_huge || !w->pread_pages || !prefer_pread(w))
		return 0;
	w->free_end = 0;
	pmi_walk_set_seg(w, w->map_cur, w->map_end, 0, true);
	w->seg_pread = true;
	return 1;
}
