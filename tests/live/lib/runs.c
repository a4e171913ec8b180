/* runs.c - collect a walk's runs, sum them, compare back ends with each other and with /proc/PID/smaps. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "runs.h"
#include "smaps.h"

#define MAX_PRINTED 8

static int push(struct runs *r, const struct pm_run *run)
{
	struct run_rec *x;

	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 256;
		struct run_rec *nv = realloc(r->v, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		r->v = nv;
		r->cap = cap;
	}
	x = &r->v[r->n++];
	x->start = run->start;
	x->end = run->end;
	x->flags = run->flags;
	x->pfn = run->pfn;
	x->swap_type = run->swap_type;
	x->swap_offset = run->swap_offset;
	x->map_start = run->map->start;
	x->map_end = run->map->end;
	x->kind = run->map->kind;
	x->prot = run->map->prot;
	return 0;
}

static void describe(struct runs *out, enum pm_backend backend, unsigned wflags)
{
	out->wflags = wflags;
	out->backend = backend;
	snprintf(out->desc, sizeof(out->desc), "%s%s%s", pm_backend_name(backend),
		 wflags & PM_WALK_ENTRIES ? "+entries" : "", wflags & PM_WALK_EACH ? "+each" : "");
}

/* Walk [start, end) and append its runs to @out. */
static int append_walk(struct pm_target *t, struct pm_ctx *ctx, uint64_t start, uint64_t end, struct runs *out)
{
	const struct pm_run *run;
	struct pm_walk *w;
	int r = pm_ctx_set_backend(ctx, out->backend);

	if (r < 0)
		return r;
	w = pm_walk_new(t, start, end, out->wflags);
	if (!w)
		return -errno;
	out->known = pm_walk_known(w);
	out->backend = pm_walk_backend(w);
	while ((r = pm_walk_next(w, &run)) == 0) {
		r = push(out, run);
		if (r < 0)
			break;
	}
	pm_walk_free(w);
	return r < 0 ? r : 0;
}

int runs_collect(struct pm_target *t, struct pm_ctx *ctx, enum pm_backend backend, unsigned wflags,
		 uint64_t start, uint64_t end, struct runs *out)
{
	memset(out, 0, sizeof(*out));
	describe(out, backend, wflags);
	return append_walk(t, ctx, start, end, out);
}

/* The mappings of @t of at least RUNS_HUGE_MAPPING bytes, into out->skip. */
static int find_huge(struct pm_target *t, struct runs *out)
{
	struct pm_maps *it = pm_maps_open(t);
	const struct pm_mapping *m;
	size_t cap = 0;
	int r;

	if (!it)
		return -errno;
	while ((r = pm_maps_next(it, &m)) == 0) {
		if (m->end - m->start < RUNS_HUGE_MAPPING)
			continue;
		if (out->nskip == cap) {
			uint64_t (*nv)[2] = realloc(out->skip, (cap = cap ? cap * 2 : 16) * sizeof(*nv));
			if (!nv) {
				r = -ENOMEM;
				break;
			}
			out->skip = nv;
		}
		out->skip[out->nskip][0] = m->start;
		out->skip[out->nskip++][1] = m->end;
	}
	pm_maps_close(it);
	return r < 0 ? r : 0;
}

int runs_collect_all(struct pm_target *t, struct pm_ctx *ctx, enum pm_backend backend, unsigned wflags,
		     struct runs *out)
{
	uint64_t at = 0;
	size_t i;
	int r;

	memset(out, 0, sizeof(*out));
	describe(out, backend, wflags);
	r = find_huge(t, out);
	for (i = 0; !r && i < out->nskip; at = out->skip[i++][1])
		if (out->skip[i][0] > at)
			r = append_walk(t, ctx, at, out->skip[i][0], out);
	return r ? r : append_walk(t, ctx, at, UINT64_MAX, out);
}

int runs_clip(const struct runs *r, uint64_t start, uint64_t end, unsigned page_size, struct runs *out)
{
	uint64_t s = start & ~(uint64_t)(page_size - 1), e = (end + page_size - 1) & ~(uint64_t)(page_size - 1);
	size_t i;

	memset(out, 0, sizeof(*out));
	out->known = r->known;
	out->backend = r->backend;
	out->wflags = r->wflags;
	snprintf(out->desc, sizeof(out->desc), "%.20s(cut)", r->desc);
	out->v = malloc((r->n ? r->n : 1) * sizeof(*out->v));
	if (!out->v)
		return -ENOMEM;
	out->cap = r->n ? r->n : 1;
	for (i = 0; i < r->n; i++) {
		struct run_rec x = r->v[i];
		if (x.end <= s || x.start >= e)
			continue;
		if (x.start < s) {
			x.pfn += x.pfn ? (s - x.start) / page_size : 0;
			x.start = s;
		}
		x.end = x.end < e ? x.end : e;
		out->v[out->n++] = x;
	}
	return 0;
}

void runs_free(struct runs *r)
{
	free(r->v);
	free(r->skip);
	r->v = NULL;
	r->skip = NULL;
	r->n = r->cap = r->nskip = 0;
}

/* The part of run @x inside [start, end) as a pm_run, or false if none. */
static bool clip(const struct run_rec *x, uint64_t start, uint64_t end, struct pm_run *out)
{
	uint64_t s = x->start > start ? x->start : start, e = x->end < end ? x->end : end;

	if (s >= e)
		return false;
	memset(out, 0, sizeof(*out));
	out->start = s;
	out->end = e;
	out->flags = x->flags;
	return true;
}

struct pm_usage runs_usage(const struct runs *r, uint64_t start, uint64_t end)
{
	struct pm_usage u;
	struct pm_run run;
	size_t i;

	memset(&u, 0, sizeof(u));
	for (i = 0; i < r->n; i++)
		if (clip(&r->v[i], start, end, &run))
			pm_usage_add(&u, &run);
	return u;
}

uint64_t runs_bytes(const struct runs *r, uint64_t start, uint64_t end, uint32_t all, uint32_t none)
{
	struct pm_run run;
	uint64_t b = 0;
	size_t i;

	for (i = 0; i < r->n; i++)
		if (clip(&r->v[i], start, end, &run) && (run.flags & all) == all && !(run.flags & none))
			b += run.end - run.start;
	return b;
}

static void print_run(const char *pfx, const struct run_rec *x)
{
	char fl[PM_PAGE_NFLAGS + 1];

	printf("  %-14s %#" PRIx64 "-%#" PRIx64 " %s (%" PRIu64 " pages) map %#" PRIx64 "-%#" PRIx64 " pfn %#" PRIx64
	       " swap %u:%#" PRIx64 "\n",
	       pfx, x->start, x->end, pm_flags_letters(x->flags, fl, sizeof(fl)), (x->end - x->start) / (uint64_t)sysconf(_SC_PAGESIZE),
	       x->map_start, x->map_end, x->pfn, x->swap_type, x->swap_offset);
}

void runs_dump(const struct runs *r, uint64_t start, uint64_t end)
{
	size_t i, shown = 0;

	printf("  runs of %s in %#" PRIx64 "-%#" PRIx64 ":\n", r->desc, start, end);
	for (i = 0; i < r->n; i++) {
		if (r->v[i].end <= start || r->v[i].start >= end)
			continue;
		if (shown++ == 32) {
			printf("    ...\n");
			break;
		}
		print_run("  ", &r->v[i]);
	}
}

static size_t problem(size_t n, const struct runs *r, const struct run_rec *x, const char *what)
{
	if (n < MAX_PRINTED) {
		printf("  %s: %s:\n", r->desc, what);
		print_run("  ", x);
	}
	return 1;
}

size_t runs_check_shape(const struct runs *r, unsigned page_size)
{
	uint64_t mask = page_size - 1;
	size_t i, bad = 0;

	for (i = 0; i < r->n; i++) {
		const struct run_rec *x = &r->v[i], *p = i ? &r->v[i - 1] : NULL;
		bool new_map = !p || p->map_start != x->map_start;

		if ((x->start & mask) || (x->end & mask) || x->start >= x->end)
			bad += problem(bad, r, x, "run not page aligned or empty");
		if (x->start < x->map_start || x->end > x->map_end)
			bad += problem(bad, r, x, "run outside its mapping");
		if (new_map && x->start != x->map_start)
			bad += problem(bad, r, x, "mapping does not start with a run (gap)");
		if (new_map && p && (p->end != p->map_end || p->map_end > x->map_start))
			bad += problem(bad, r, p, "mapping does not end with a run, or mappings overlap");
		if (!new_map && p->end != x->start)
			bad += problem(bad, r, x, "gap or overlap between runs of one mapping");
	}
	if (r->n && r->v[r->n - 1].end != r->v[r->n - 1].map_end)
		bad += problem(bad, r, &r->v[r->n - 1], "last mapping does not end with a run");
	return bad;
}

/* Mask flags and merge adjacent equal runs of one mapping. */
static struct run_rec *normalize(const struct runs *r, uint32_t mask, size_t *n)
{
	struct run_rec *v = malloc((r->n ? r->n : 1) * sizeof(*v));
	size_t i, k = 0;

	if (!v)
		return NULL;
	for (i = 0; i < r->n; i++) {
		struct run_rec x = r->v[i];
		x.flags &= mask;
		x.pfn = x.swap_offset = x.swap_type = 0;
		if (k && v[k - 1].map_start == x.map_start && v[k - 1].end == x.start && v[k - 1].flags == x.flags)
			v[k - 1].end = x.end;
		else
			v[k++] = x;
	}
	*n = k;
	return v;
}

size_t runs_compare(const struct runs *a, const struct runs *b)
{
	uint32_t mask = a->known & b->known;
	size_t na, nb, i, j, bad = 0;
	struct run_rec *va = normalize(a, mask, &na), *vb = normalize(b, mask, &nb);

	if (!va || !vb) {
		free(va);
		free(vb);
		printf("  runs_compare: out of memory\n");
		return 1;
	}
	for (i = j = 0; i < na || j < nb;) {
		const struct run_rec *x = i < na ? &va[i] : NULL, *y = j < nb ? &vb[j] : NULL;
		if (x && y && x->start == y->start && x->end == y->end && x->flags == y->flags &&
		    x->map_start == y->map_start) {
			i++, j++;
			continue;
		}
		if (bad++ < MAX_PRINTED) {
			printf("  %s vs %s differ (common flags %#x):\n", a->desc, b->desc, mask);
			if (x)
				print_run(a->desc, x);
			if (y)
				print_run(b->desc, y);
		}
		/* Resynchronise on the earlier start. */
		if (x && (!y || x->start <= y->start))
			i++;
		if (y && (!x || y->start <= x->start))
			j++;
	}
	free(va);
	free(vb);
	return bad;
}

static bool skipped_by_walker(const struct smaps_entry *e)
{
	return !strcmp(e->name, "[vvar]") || !strcmp(e->name, "[vvar_vclock]") || !strcmp(e->name, "[vsyscall]");
}

/*
 * Whose pages only this process can map: anonymous memory and the layout's
 * own memfd and temp file ("pm-live"). A library's page-cache pages change
 * mapcount, hence exclusivity and smaps Private_*, whenever any process on
 * the system maps or unmaps them, so they cannot be compared at two moments.
 */
static bool owned_memory(const struct smaps_entry *e)
{
	return !e->name[0] || !strcmp(e->name, "[heap]") || !strncmp(e->name, "[stack", 6) ||
	       !strncmp(e->name, "[anon:", 6) || strstr(e->name, "pm-live");
}

static bool left_out(const struct runs *r, const struct smaps_entry *e)
{
	size_t i;

	for (i = 0; i < r->nskip; i++)
		if (r->skip[i][0] <= e->start && e->end <= r->skip[i][1])
			return true;
	return false;
}

static size_t mismatch(size_t bad, const struct runs *r, const struct smaps_entry *e, const char *what,
		       uint64_t kernel, uint64_t walker)
{
	if (bad < MAX_PRINTED)
		printf("  %s: %#" PRIx64 "-%#" PRIx64 " %s %s: %s: smaps %" PRIu64 " kB, walk %" PRIu64 " kB\n",
		       r->desc, e->start, e->end, e->perms, e->name[0] ? e->name : "(anon)", what, kernel / 1024,
		       walker / 1024);
	return 1;
}

/* Sums of the runs of the mapping starting at @start. */
static bool mapping_usage(const struct runs *r, uint64_t start, struct pm_usage *u)
{
	bool found = false;
	size_t i;

	memset(u, 0, sizeof(*u));
	for (i = 0; i < r->n; i++) {
		const struct run_rec *x = &r->v[i];
		struct pm_run run;
		if (x->map_start != start || !clip(x, x->start, x->end, &run))
			continue;
		found = true;
		pm_usage_add(u, &run);
	}
	return found;
}

static size_t check_mapping(const struct runs *r, const struct smaps_entry *e, size_t bad)
{
	size_t n = 0;
	struct pm_usage u;
	uint64_t hugetlb = e->private_hugetlb + e->shared_hugetlb;

	if (!mapping_usage(r, e->start, &u))
		return mismatch(bad, r, e, "mapping missing from the walk", 1, 0);
	/* smaps counts neither the zero page nor the huge zero page in Rss: pm_usage_rss says the same. */
	if (r->known & PM_PAGE_ZERO) {
		if (e->rss + hugetlb != u.present - u.zero)
			n += mismatch(bad + n, r, e, "Rss vs present-zero", e->rss + hugetlb, u.present - u.zero);
		if (!hugetlb && e->rss != pm_usage_rss(&u, NULL))
			n += mismatch(bad + n, r, e, "Rss vs pm_usage_rss", e->rss, pm_usage_rss(&u, NULL));
	} else if (e->rss + hugetlb > u.present) {
		n += mismatch(bad + n, r, e, "Rss > present", e->rss + hugetlb, u.present);
	}
	/* Shared memory's Swap also counts swapped shmem, which pagemap cannot see (docs/kernel-interface.md §10.3). */
	if (e->perms[3] != 's' && e->swap != u.swapped)
		n += mismatch(bad + n, r, e, "Swap vs swapped", e->swap, u.swapped);
	if ((r->known & PM_PAGE_THP) &&
	    e->anon_huge + e->shmem_pmd + e->file_pmd + hugetlb != u.thp)
		n += mismatch(bad + n, r, e, "AnonHugePages+ShmemPmdMapped+FilePmdMapped vs thp",
			      e->anon_huge + e->shmem_pmd + e->file_pmd + hugetlb, u.thp);
	if ((r->known & PM_PAGE_EXCLUSIVE) && owned_memory(e) &&
	    e->private_clean + e->private_dirty + e->private_hugetlb != u.exclusive)
		n += mismatch(bad + n, r, e, "Private_Clean+Private_Dirty vs exclusive",
			      e->private_clean + e->private_dirty + e->private_hugetlb, u.exclusive);
	return n;
}

size_t runs_vs_smaps(const struct runs *r, pid_t pid)
{
	struct smaps s;
	size_t i, bad = 0;
	int err = smaps_read(pid, &s);

	if (err < 0) {
		printf("  cannot read /proc/%d/smaps: %s\n", (int)pid, strerror(-err));
		return 1;
	}
	if (!s.n) {
		printf("  /proc/%d/smaps is empty\n", (int)pid);
		bad++;
	}
	for (i = 0; i < s.n; i++)
		if (!skipped_by_walker(&s.v[i]) && !left_out(r, &s.v[i]))
			bad += check_mapping(r, &s.v[i], bad);
	for (i = 0; i < r->n; i++) {
		if (i && r->v[i].map_start == r->v[i - 1].map_start)
			continue;
		if (!smaps_find(&s, r->v[i].map_start))
			bad += problem(bad, r, &r->v[i], "mapping walked that smaps does not list");
	}
	smaps_free(&s);
	return bad;
}

size_t runs_compare_settled(struct pm_target *t, struct pm_ctx *ctx, unsigned wflags, struct runs *pread,
			    struct runs *scan, int tries)
{
	size_t d = runs_compare(pread, scan);

	while (d && tries-- > 0) {
		printf("  the back ends differ: walking both again (page cache may have moved meanwhile)\n");
		runs_free(pread);
		runs_free(scan);
		if (runs_collect_all(t, ctx, PM_BACKEND_PREAD, wflags, pread) < 0 ||
		    runs_collect_all(t, ctx, PM_BACKEND_SCAN, wflags, scan) < 0)
			return d;
		d = runs_compare(pread, scan);
	}
	return d;
}
