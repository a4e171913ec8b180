/* test_swap.c - swapped-out anonymous pages as both back ends and smaps see them; tests/live/swap.sh provides the swap area. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pagemap.h>
#include "../harness.h"
#include "layout.h"
#include "runs.h"
#include "smaps.h"

#define SWAP_PAGES_DEFAULT	256
#define UFFD_PAGES		16
#define UFFD_POPULATED		10
#define MAX_SWAPFILES_6X	23	/* swap types at or above are migration/device/marker entries */

static const enum pm_backend backends[2] = { PM_BACKEND_PREAD, PM_BACKEND_SCAN };
static const unsigned wflags[3] = { 0, PM_WALK_ENTRIES, PM_WALK_ENTRIES | PM_WALK_EACH };

/* Lines after the header of /proc/swaps: active swap areas. */
static int swap_areas(void)
{
	char line[512];
	int n = -1;
	FILE *f = fopen("/proc/swaps", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		n++;
	fclose(f);
	return n < 0 ? 0 : n;
}

/* Every swapped run part in [s, e) shows a real swap slot: a swap-file type, a non-zero offset. */
static uint64_t bad_slots(const struct runs *r, uint64_t s, uint64_t e)
{
	uint64_t bad = 0;
	size_t i;

	for (i = 0; i < r->n; i++) {
		const struct run_rec *x = &r->v[i];
		if (x->end <= s || x->start >= e || !(x->flags & PM_PAGE_SWAPPED))
			continue;
		if (!(x->flags & PM_PAGE_FRAME) || x->swap_type >= MAX_SWAPFILES_6X || !x->swap_offset) {
			printf("  bad swap slot %u:%#" PRIx64 " at %#" PRIx64 "\n", x->swap_type, x->swap_offset,
			       x->start);
			bad++;
		}
	}
	return bad;
}

/* With one run per page, no two pages share a swap slot. */
static uint64_t duplicate_slots(const struct runs *r, uint64_t s, uint64_t e)
{
	uint64_t dup = 0;
	size_t i, j;

	for (i = 0; i < r->n; i++) {
		if (r->v[i].end <= s || r->v[i].start >= e || !(r->v[i].flags & PM_PAGE_SWAPPED))
			continue;
		for (j = i + 1; j < r->n && r->v[j].start < e; j++)
			dup += (r->v[j].flags & PM_PAGE_SWAPPED) && r->v[j].swap_type == r->v[i].swap_type &&
			       r->v[j].swap_offset == r->v[i].swap_offset;
	}
	return dup;
}

static void check_walk(const struct runs *r, const struct layout *l, const struct pm_features *f)
{
	const struct lay_region *g = &l->r[LR_SWAP], *a = &l->r[LR_ANON], *u = &l->r[LR_UFFD];
	uint64_t n = g->end - g->start, ps = l->page_size;
	struct pm_usage us = runs_usage(r, g->start, g->end), ua = runs_usage(r, a->start, a->end);
	struct pm_usage uu = runs_usage(r, u->start, u->end);

	CHECK_EQ_U64(runs_check_shape(r, l->page_size), 0);
	CHECK_EQ_U64(runs_vs_smaps(r, l->pid), 0);
	/* Swapped out: swapped, not present, not a marker, not file. */
	CHECK_EQ_U64(us.swapped, n);
	CHECK_EQ_U64(us.present, 0);
	CHECK_EQ_U64(us.file, 0);
	CHECK_EQ_U64(runs_bytes(r, g->start, g->end, 0, PM_PAGE_SWAPPED), 0);
	CHECK_EQ_U64(runs_bytes(r, g->start, g->end, PM_PAGE_MARKER, 0), 0);
	if (r->known & PM_PAGE_EXCLUSIVE)
		CHECK_EQ_U64(us.exclusive, 0);	/* only present pages are exclusive */
	if (f->pfn_view == PM_PFN_VISIBLE && (r->known & PM_PAGE_FRAME)) {
		CHECK_EQ_U64(bad_slots(r, g->start, g->end), 0);
		if (r->wflags & PM_WALK_EACH)
			CHECK_EQ_U64(duplicate_slots(r, g->start, g->end), 0);
	}
	/* Untouched by the pageout. */
	CHECK_EQ_U64(ua.present, a->end - a->start);
	CHECK_EQ_U64(ua.swapped, 0);
	/*
	 * uffd-wp markers stay markers while swap is on: frames visible, by their
	 * type (31); hidden, by the mapping's smaps Swap of 0.
	 */
	if (u->start && !u->error) {
		CHECK_EQ_U64(uu.swapped, 0);
		CHECK_EQ_U64(uu.present, UFFD_POPULATED * ps);
		CHECK_EQ_U64(runs_bytes(r, u->start, u->end, PM_PAGE_MARKER | PM_PAGE_UFFD_WP, PM_PAGE_SWAPPED),
			     (UFFD_PAGES - UFFD_POPULATED) * ps);
	}
}

static int swap_walk(void)
{
	struct layout_opts o = { .anon_pages = 8, .uffd_pages = UFFD_PAGES, .uffd_populated = UFFD_POPULATED };
	const char *n = getenv("PAGEMAP_TEST_SWAP_PAGES");
	const struct pm_features *f;
	struct runs rs[2][3];
	struct pm_ctx *ctx;
	struct pm_target *t;
	struct layout l;
	struct smaps s;
	int b, k, r;

	if (!getenv("PAGEMAP_SWAP_READY"))
		return t_skip("run through tests/live/swap.sh, which sets up and removes a swap file");
	if (swap_areas() < 1)
		return t_skip("no swap area is active");
	o.swap_pages = n && *n ? (unsigned)strtoul(n, NULL, 0) : SWAP_PAGES_DEFAULT;
	ctx = pm_ctx_new(NULL);
	f = ctx ? pm_ctx_features(ctx) : NULL;
	if (!f)
		return T_FAIL;
	r = layout_start(&o, &l);
	if (r < 0) {
		printf("  layout: %s\n", strerror(-r));
		pm_ctx_free(ctx);
		return T_FAIL;
	}
	CHECK_EQ_U64(l.r[LR_SWAP].error, 0);
	CHECK_EQ_U64(l.r[LR_SWAP].detail, o.swap_pages);	/* the child saw every page swapped */
	t = pm_target_open(ctx, l.pid);
	CHECK(t != NULL);
	memset(rs, 0, sizeof(rs));
	for (b = 0; t && b < 2; b++) {
		for (k = 0; k < 3; k++) {
			if (backends[b] == PM_BACKEND_SCAN && !kernel_has_scan())
				continue;
			CHECK_EQ_U64(-runs_collect_all(t, ctx, backends[b], wflags[k], &rs[b][k]), 0);
			check_walk(&rs[b][k], &l, f);
		}
	}
	if (t && kernel_has_scan())
		for (k = 0; k < 3; k++)
			CHECK_EQ_U64(runs_compare_settled(t, ctx, wflags[k], &rs[0][k], &rs[1][k], 3), 0);
	if (smaps_read(l.pid, &s) == 0) {
		const struct smaps_entry *e = smaps_find(&s, l.r[LR_SWAP].start);
		CHECK(e != NULL);
		if (e)
			CHECK_EQ_U64(e->swap, (uint64_t)o.swap_pages * l.page_size);
		smaps_free(&s);
	}
	for (b = 0; b < 2; b++)
		for (k = 0; k < 3; k++)
			runs_free(&rs[b][k]);
	pm_target_close(t);
	layout_stop(&l);
	pm_ctx_free(ctx);
	return T_PASS;
}

T_MAIN(T(swap_walk))
