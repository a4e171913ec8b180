/* render_model.c - pagemap render's axis (bands that follow the mappings, collapsed gaps) and its exact cells. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "render.h"
#include "textsafe.h"

const struct rnd_class_info rnd_classes[RC_NCLASS] = {
	[RC_PRESENT] = { "present", "mapped to pages in RAM: RSS, the zero page and hugetlb" },
	[RC_SWAPPED] = { "swapped", "in swap" },
	[RC_FILE] = { "file", "page cache or shmem (present or swapped)" },
	[RC_ANON] = { "anon", "anonymous (present or swapped, not file)" },
	[RC_EXCLUSIVE] = { "exclusive", "mapped only by this process", PM_PAGE_EXCLUSIVE },
	[RC_HUGE] = { "huge", "in PMD-mapped huge pages of its own (THP or hugetlb), not the huge zero page",
		      PM_PAGE_THP },
	[RC_SOFTDIRTY] = { "softdirty", "soft-dirty (written since the last clear)",
			   PM_PAGE_SOFTDIRTY },
	[RC_UFFDWP] = { "uffdwp", "userfaultfd write-protected", PM_PAGE_UFFD_WP },
	[RC_GUARD] = { "guard", "guard region marker", PM_PAGE_GUARD },
	[RC_ZERO] = { "zero", "the zero page or huge zero page", PM_PAGE_ZERO },
};

/* Okabe-Ito colours; "none" is a light grey so that mapped-but-empty still shows the band. */
const struct rnd_state_info rnd_states[RS_NSTATE] = {
	[RS_NONE] = { "none", "#E4E4E4", "mapped, nothing in RAM or swap" },
	[RS_ANON] = { "anon", "#0072B2", "anonymous, in RAM" },
	[RS_FILE] = { "file", "#009E73", "file or shmem, in RAM" },
	[RS_HUGE] = { "huge", "#CC79A7", "huge page" },
	[RS_ZERO] = { "zero", "#F0E442", "zero page" },
	[RS_SWAP] = { "swap", "#D55E00", "swapped out" },
	[RS_GUARD] = { "guard", "#000000", "guard region" },
};

const struct rnd_state_info rnd_diff_states[RS_NSTATE] = {
	[RD_SAME] = { "unchanged", "#E4E4E4", "the same in both, or in neither" },
	[RD_APPEARED] = { "appeared", "#009E73", "in RAM or swap in B only" },
	[RD_FREED] = { "freed", "#D55E00", "in RAM or swap in A only" },
	[RD_WRITTEN] = { "written", "#0072B2", "written, on evidence (as pagemap diff counts WRITTEN)" },
	[RD_SWAPPED] = { "swapped", "#E69F00", "swapped out or in" },
	[RD_MOVED] = { "new_frame", "#CC79A7", "on another frame in B, no evidence of a write" },
	[RD_HUGE] = { "thp", "#56B4E9", "a huge page formed or split" },
};

int rnd_add_map(struct rnd_model *m, uint64_t start, uint64_t end, const char *perms, const char *path, size_t len)
{
	struct rnd_map *mp;

	if (start >= end || (m->nmaps && start < m->maps[m->nmaps - 1].end))
		return -EINVAL;
	if (m->nmaps == m->cap_maps) {
		size_t cap = m->cap_maps ? 2 * m->cap_maps : 64;

		mp = realloc(m->maps, cap * sizeof(*mp));
		if (!mp)
			return -ENOMEM;
		m->maps = mp;
		m->cap_maps = cap;
	}
	mp = &m->maps[m->nmaps];
	memset(mp, 0, sizeof(*mp));
	mp->start = start;
	mp->end = end;
	snprintf(mp->perms, sizeof(mp->perms), "%.4s", perms);
	if (!len) {
		path = "anon";
		len = 4;
	}
	if (!(mp->name = strndup(path, len)))
		return -ENOMEM;
	m->nmaps++;
	return 0;
}

/* Segments: groups of @group mappings, and a gap segment wherever the next mapping does not start at the last end. */
static int make_segs(struct rnd_model *m, uint32_t group)
{
	size_t i, n = 0;

	m->segs = calloc(2 * m->nmaps + 1, sizeof(*m->segs));
	if (!m->segs)
		return -ENOMEM;
	for (i = 0; i < m->nmaps; i++) {
		struct rnd_map *mp = &m->maps[i];
		struct rnd_seg *s = n ? &m->segs[n - 1] : NULL;
		uint64_t pages = (mp->end - mp->start) / m->page_size;

		if (s && !s->gap && s->nmaps < group) {	/* joins the group (its hole, if any, is not drawn) */
			mp->seg = (uint32_t)(n - 1);
			mp->seg_page = s->pages;
			s->nmaps++;
			s->end = mp->end;
			s->pages += pages;
			continue;
		}
		if (s && mp->start > s->end) {
			s = &m->segs[n++];
			s->gap = true;
			s->first_map = (uint32_t)i;
			s->start = m->segs[n - 2].end;
			s->end = mp->start;
		}
		s = &m->segs[n];
		s->first_map = (uint32_t)i;
		s->nmaps = 1;
		s->start = mp->start;
		s->end = mp->end;
		s->pages = pages;
		mp->seg = (uint32_t)n++;
		mp->seg_page = 0;
	}
	m->nsegs = n;
	return 0;
}

/* floor(sqrt(v)), in integers: the same widths on every machine, and no libm for the tool. */
static uint64_t isqrt(uint64_t v)
{
	uint64_t r = 0, bit = 1ull << 62;

	while (bit > v)
		bit >>= 2;
	while (bit) {
		if (v >= r + bit) {
			v -= r + bit;
			r = (r >> 1) + bit;
		} else {
			r >>= 1;
		}
		bit >>= 2;
	}
	return r;
}

/* Give each segment its cells: gaps @gapw, bands 1 + their share of the rest (never more than their pages). */
static uint32_t assign(struct rnd_model *m, uint64_t gapw, uint64_t avail, unsigned __int128 wsum)
{
	uint32_t cell = 0;
	size_t i;

	for (i = 0; i < m->nsegs; i++) {
		struct rnd_seg *s = &m->segs[i];
		uint64_t n = gapw;

		if (!s->gap) {
			n = 1 + (uint64_t)((unsigned __int128)avail * (isqrt(s->pages) + 1) / wsum);
			if (n > s->pages)
				n = s->pages;
		}
		s->cell = cell;
		s->ncells = (uint32_t)n;
		cell += (uint32_t)n;
	}
	return cell;
}

/*
 * Widths: every band at least one cell and at most one cell per page; the
 * rest shared by the square root of the pages, so a 4 GiB heap does not
 * squeeze a 4 KiB library out. Gaps get a fixed width: 2 % of the cells
 * drawn at most, also once the rows that small bands leave empty are cut.
 */
static void allocate(struct rnd_model *m, const struct rnd_layout *lay)
{
	size_t i, nmap = 0, ngap = 0;
	unsigned __int128 wsum = 0;
	uint64_t total, gapw = 0;

	for (i = 0; i < m->nsegs; i++) {
		if (m->segs[i].gap)
			ngap++;
		else {
			nmap++;
			wsum += isqrt(m->segs[i].pages) + 1;
		}
	}
	m->width = lay->width;
	m->rows = (uint32_t)((nmap + nmap / 4 + ngap + lay->width - 1) / lay->width);
	if (m->rows < lay->min_rows)
		m->rows = lay->min_rows;
	if (lay->one_row) {
		m->width *= m->rows;
		m->rows = 1;
	}
	total = (uint64_t)m->width * m->rows;
	if (ngap) {
		gapw = total / 50 / ngap;
		if (gapw > lay->gap_max)
			gapw = lay->gap_max;
	}
	for (;;) {
		uint32_t cell = assign(m, gapw, total - gapw * ngap - nmap, wsum ? wsum : 1);
		uint32_t rows = lay->one_row ? 1 : cell ? cell / m->width + (cell % m->width != 0) : 1;

		m->ncells = cell;
		if (!gapw || gapw * ngap * 50 <= (uint64_t)rows * m->width) {
			m->rows = rows;
			return;
		}
		gapw = (uint64_t)rows * m->width / 50 / ngap < gapw ? (uint64_t)rows * m->width / 50 / ngap : gapw - 1;
	}
}

/* The first segment page of cell @i of @s: floor(i * pages / ncells). */
static uint64_t cell_first_page(const struct rnd_seg *s, uint64_t i)
{
	return (uint64_t)((unsigned __int128)i * s->pages / s->ncells);
}

/* The address of segment page @p, from the mapping @mi of the segment onwards (mappings of a group in order). */
static uint64_t seg_page_addr(const struct rnd_model *m, const struct rnd_seg *s, uint64_t p, size_t *mi)
{
	while (*mi + 1 < (size_t)s->first_map + s->nmaps && m->maps[*mi + 1].seg_page <= p)
		(*mi)++;
	return m->maps[*mi].start + (p - m->maps[*mi].seg_page) * m->page_size;
}

static void cell_addresses(struct rnd_model *m)
{
	size_t i;
	uint32_t k;

	for (i = 0; i < m->nsegs; i++) {
		const struct rnd_seg *s = &m->segs[i];
		size_t mi = s->first_map;

		for (k = 0; k < s->ncells; k++) {
			struct rnd_cell *c = &m->cells[s->cell + k];

			if (s->gap) {
				c->start = s->start;
				c->end = s->end;
				continue;
			}
			c->start = seg_page_addr(m, s, cell_first_page(s, k), &mi);
			c->end = seg_page_addr(m, s, cell_first_page(s, k + 1) - 1, &mi) + m->page_size;
		}
	}
}

int rnd_layout(struct rnd_model *m, const struct rnd_layout *lay)
{
	uint32_t group = 1;
	int err;

	/* Too many mappings for one cell each: bands of 2, 4, ... mappings (the picture says so). */
	while (m->nmaps / group + m->nmaps / group / 4 > lay->max_cells)
		group *= 2;
	m->group = group;
	if (!m->states)
		m->states = rnd_states;
	if ((err = make_segs(m, group)) < 0)
		return err;
	allocate(m, lay);
	m->cells = calloc(m->ncells ? m->ncells : 1, sizeof(*m->cells));
	if (!m->cells)
		return -ENOMEM;
	cell_addresses(m);
	return 0;
}

/* The classes (bits 1 << RC_*) pages with flags @f count under. */
static uint32_t class_mask(uint32_t f)
{
	bool held = f & (PM_PAGE_PRESENT | PM_PAGE_SWAPPED);
	uint32_t mask = 0;
	int k;

	/* The huge zero page is no huge page of the process's (pm_usage_add sums it so, as smaps does). */
	if (f & PM_PAGE_ZERO)
		f &= ~PM_PAGE_THP;

	/* The base classes: a page in RAM or swap is file or anon. */
	mask |= (f & PM_PAGE_PRESENT) ? 1u << RC_PRESENT : 0;
	mask |= (f & PM_PAGE_SWAPPED) ? 1u << RC_SWAPPED : 0;
	mask |= held && (f & PM_PAGE_FILE) ? 1u << RC_FILE : 0;
	mask |= held && !(f & PM_PAGE_FILE) ? 1u << RC_ANON : 0;
	for (k = 0; k < RC_NCLASS; k++)
		mask |= (f & rnd_classes[k].flag) ? 1u << k : 0;
	return mask;
}

/* @b bytes into each class of @mask: a run's classes are found once, not once per cell it covers. */
static void class_bytes(uint32_t mask, uint64_t b, uint64_t *bytes)
{
	for (; mask; mask &= mask - 1)
		bytes[__builtin_ctz(mask)] += b;
}

static enum rnd_state run_state(uint32_t f)
{
	if (f & PM_PAGE_GUARD)
		return RS_GUARD;
	if (f & PM_PAGE_SWAPPED)
		return RS_SWAP;
	if (!(f & PM_PAGE_PRESENT))
		return RS_NONE;
	if (f & PM_PAGE_ZERO)
		return RS_ZERO;
	if (f & PM_PAGE_THP)
		return RS_HUGE;
	return (f & PM_PAGE_FILE) ? RS_FILE : RS_ANON;
}

/* The mapping holding @addr: the last one found first (runs come in address order), else a binary search. */
static long find_map(const struct rnd_model *m, uint64_t addr, size_t *hint)
{
	size_t lo = 0, hi = m->nmaps;

	if (*hint < m->nmaps && m->maps[*hint].start <= addr && addr < m->maps[*hint].end)
		return (long)*hint;
	if (*hint + 1 < m->nmaps && m->maps[*hint + 1].start <= addr && addr < m->maps[*hint + 1].end)
		return (long)++*hint;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->maps[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < m->nmaps && m->maps[lo].start <= addr)
		return (long)(*hint = lo);
	return -1;
}

/* Pages [o0, o1) of segment @s in classes @cls: into every cell they cover, under state slot @st. */
static void add_to_cells(struct rnd_model *m, const struct rnd_seg *s, uint64_t o0, uint64_t o1, uint32_t cls, unsigned st)
{
	uint64_t i = (uint64_t)(((unsigned __int128)(o0 + 1) * s->ncells + s->pages - 1) / s->pages) - 1;

	while (o0 < o1 && i < s->ncells) {
		uint64_t next = cell_first_page(s, i + 1), upto = next < o1 ? next : o1;
		struct rnd_cell *c = &m->cells[s->cell + i];
		uint64_t b = (upto - o0) * m->page_size;

		class_bytes(cls, b, c->bytes);
		c->state[st] += b;
		o0 = upto;
		i++;
	}
}

static void keep_run(struct rnd_model *m, const struct pm_run *r, uint64_t s, uint64_t e, long mi, unsigned slot)
{
	struct rnd_run *k;

	if (m->nruns == m->max_runs) {
		m->runs_left_out++;
		return;
	}
	if (m->nruns == m->cap_runs) {
		/*
		 * Room for every run at once: a large block is mmap'd and only the
		 * pages of the runs kept are touched, where growing it copied the
		 * runs at each step.
		 */
		size_t cap = m->max_runs;

		k = realloc(m->runs, cap * sizeof(*k));
		if (!k) {	/* hover detail is optional: the cells still count the run */
			m->runs_left_out++;
			return;
		}
		m->runs = k;
		m->cap_runs = cap;
	}
	k = &m->runs[m->nruns++];
	*k = (struct rnd_run){ s, e, r->flags, r->pfn, r->swap_offset, r->swap_type, (uint32_t)mi, (uint8_t)slot };
}

/* [@start, @end) into the cells and sums of the mappings it lies in; calls @keep for each mapping's piece. */
static void add_span(struct rnd_model *m, uint64_t start, uint64_t end, uint32_t flags, unsigned state,
		     const struct pm_run *keep)
{
	uint64_t s = start;
	uint32_t cls = class_mask(flags);

	while (s < end) {
		long mi = find_map(m, s, &m->hint);
		const struct rnd_map *mp;
		uint64_t e;

		if (mi < 0)
			return;	/* a mapping that appeared after the maps were read: not on the axis */
		mp = &m->maps[mi];
		e = end < mp->end ? end : mp->end;
		add_to_cells(m, &m->segs[mp->seg], mp->seg_page + (s - mp->start) / m->page_size,
			     mp->seg_page + (e - mp->start) / m->page_size, cls, state);
		class_bytes(cls, e - s, m->maps[mi].bytes);
		class_bytes(cls, e - s, m->total);
		if (keep)
			keep_run(m, keep, s, e, mi, state);
		s = e;
	}
}

void rnd_add_run(struct rnd_model *m, const struct pm_run *r)
{
	add_span(m, r->start, r->end, r->flags, run_state(r->flags), r);
}

void rnd_add_run_as(struct rnd_model *m, const struct pm_run *r, unsigned slot)
{
	add_span(m, r->start, r->end, r->flags, slot < RS_MAXSTATE ? slot : 0, r);
}

void rnd_add_piece(struct rnd_model *m, uint64_t start, uint64_t end, uint32_t flags, unsigned state)
{
	add_span(m, start, end, flags, state < RS_NSTATE ? state : 0, NULL);
}

void rnd_state_totals(const struct rnd_model *m, uint64_t st[RS_MAXSTATE])
{
	size_t i;
	unsigned k;

	for (i = 0; i < m->ncells; i++)
		for (k = 0; k < RS_MAXSTATE; k++)
			st[k] += m->cells[i].state[k];
}

unsigned rnd_nstates(const struct rnd_model *m)
{
	return m->nstates ? m->nstates : RS_NSTATE;
}

bool rnd_slot_shown(const struct rnd_model *m, unsigned k, uint64_t bytes)
{
	return k < rnd_nstates(m) && (bytes || !(m->optional & (1u << k)));
}

static int read_maps(struct rnd_model *m, struct pm_target *t)
{
	struct pm_maps *it = pm_maps_open(t);
	const struct pm_mapping *mp;
	int rc;

	if (!it)
		return -errno;
	while ((rc = pm_maps_next(it, &mp)) == 0) {
		/* [vsyscall] lies above task_size and reads nothing; overlapping lines are not the kernel's */
		if ((rc = rnd_add_map(m, mp->start, mp->end, mp->perms, mp->path, mp->path_len)) < 0)
			break;
		m->mapped += mp->end - mp->start;
	}
	pm_maps_close(it);
	return rc < 0 ? rc : 0;
}

int rnd_model_walk(struct rnd_model *m, struct pm_target *t, const struct rnd_layout *lay,
		   int (*each)(void *data, const struct pm_run *r), void *data)
{
	struct pm_walk *w;
	const struct pm_run *r;
	bool frames_off = false;
	int rc;

	if (!m->nmaps && (rc = read_maps(m, t)) < 0)
		return rc;
	if ((rc = rnd_layout(m, lay)) < 0)
		return rc;
	if (!m->nmaps)
		return 0;
	if (!(w = pm_walk_new(t, 0, UINT64_MAX, PM_WALK_ENTRIES)))
		return -errno;
	m->known = pm_walk_known(w);
	while ((rc = pm_walk_next(w, &r)) == 0) {
		/*
		 * Once no more runs are kept for the detail, frames no longer
		 * matter to the state colouring (a colouring by value reads
		 * them): runs of alike pages, not of following frames, so that
		 * a THP-off heap costs one run, not one per few pages.
		 */
		if (!each && !frames_off && m->nruns >= m->max_runs) {
			pm_walk_ignore_frames(w);
			frames_off = true;
		}
		if (!each)
			rnd_add_run(m, r);
		else if ((rc = each(data, r)) < 0)
			break;
	}
	pm_walk_free(w);
	return rc < 0 ? rc : 0;
}

int rnd_model_fill(struct rnd_model *m, struct pm_target *t, const struct rnd_layout *lay)
{
	return rnd_model_walk(m, t, lay, NULL, NULL);
}

void rnd_model_reset(struct rnd_model *m)
{
	size_t i;

	free(m->segs);
	free(m->cells);
	free(m->runs);
	m->segs = NULL;
	m->cells = NULL;
	m->runs = NULL;
	m->nsegs = m->ncells = 0;
	m->nruns = m->cap_runs = 0;
	m->runs_left_out = 0;
	memset(m->total, 0, sizeof(m->total));
	for (i = 0; i < m->nmaps; i++)
		memset(m->maps[i].bytes, 0, sizeof(m->maps[i].bytes));
}

void rnd_model_free(struct rnd_model *m)
{
	size_t i;

	rnd_model_reset(m);
	for (i = 0; i < m->nmaps; i++)
		free(m->maps[i].name);
	free(m->maps);
	m->maps = NULL;
	m->nmaps = m->cap_maps = 0;
}

bool rnd_class_known(const struct rnd_model *m, int k)
{
	uint32_t need = rnd_classes[k].flag;

	return !need || !m->known || (m->known & need);
}

enum rnd_state rnd_cell_state(const struct rnd_cell *c, unsigned *level)
{
	uint64_t pop = 0, all;
	int i, best = RS_NONE;

	for (i = RS_NONE + 1; i < RS_MAXSTATE; i++) {	/* slots not in use hold 0 */
		pop += c->state[i];
		if (c->state[i] > (best == RS_NONE ? 0 : c->state[best]))
			best = i;
	}
	all = pop + c->state[RS_NONE];
	*level = pop ? (unsigned)((pop * 4 + all - 1) / all) : 0;
	return (enum rnd_state)best;
}

long rnd_seg_of_cell(const struct rnd_model *m, uint32_t i)
{
	size_t lo = 0, hi = m->nsegs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->segs[mid].cell + m->segs[mid].ncells <= i)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* zero-width gaps share their cell number with the next band: skip them */
	while (lo < m->nsegs && !m->segs[lo].ncells)
		lo++;
	return lo < m->nsegs && m->segs[lo].cell <= i ? (long)lo : -1;
}

/* Names are any bytes: cli/base/textsafe.c makes them valid UTF-8 (bad bytes as \xHH), as every format does. */
void rnd_xml_escape(FILE *f, const char *s)
{
	ts_fputs(TS_XML, s, f);
}

void rnd_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	ts_fputs(TS_JSON_HTML, s, f);	/* never "</script>" inside the HTML's data */
	fputc('"', f);
}

void rnd_term_str(FILE *f, const char *s)
{
	ts_fputs(TS_TERM, s, f);
}
