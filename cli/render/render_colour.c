/* render_colour.c - pagemap render's colourings by value: memory cgroup, physical page class, NUMA node of each page. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "render.h"

/*
 * Slots of a colouring by value: the states that have no frame first, then
 * up to NVALUES values in the Okabe-Ito colours, then "other" for values
 * beyond the palette.
 */
#define NVALUES 7
enum { SL_NONE, SL_SWAP, SL_HIDDEN, SL_VALUE0, SL_OTHER = SL_VALUE0 + NVALUES, SL_COUNT };
static const char *const palette[NVALUES] = { "#0072B2", "#E69F00", "#009E73", "#CC79A7",
					      "#56B4E9", "#D55E00", "#F0E442" };
_Static_assert(SL_COUNT <= RS_MAXSTATE, "a colouring's slots fit a cell");

#define BATCH 4096	/* frames looked up per kpage read */

/* The physical classes drawn (the library's pm_class, as `pagemap phys` counts them); the rest is "other". */
static const enum pm_class class_values[NVALUES] = { PM_CLASS_ANON, PM_CLASS_ANON_THP, PM_CLASS_FILE, PM_CLASS_SHMEM,
						     PM_CLASS_ZERO, PM_CLASS_KSM, PM_CLASS_HUGETLB };

struct colour_walk {
	struct rnd_model *m;
	struct pm_ctx *ctx;
	enum rnd_colour by;
	struct pm_kpage *kpage;		/* cgroup, class */
	struct pm_numa *numa;		/* node */
	int open_err;			/* why kpage or numa could not be opened (-errno), 0 */
	int read_err;			/* the first kpage read error */
	uint64_t ino[NVALUES];		/* cgroup: the inode of each value slot, in the order first seen */
	unsigned nino;
	bool hidden;			/* pages present with their frames hidden */
	uint64_t unknown;		/* bytes drawn unknown with frames visible */
	uint64_t words[BATCH];
	uint8_t slots[BATCH];
};

int rnd_colour_parse(const char *name, enum rnd_colour *out)
{
	static const char *const names[] = { [RCOL_STATE] = "state", [RCOL_CGROUP] = "cgroup", [RCOL_CLASS] = "class",
					     [RCOL_NODE] = "node" };
	unsigned i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i])) {
			*out = (enum rnd_colour)i;
			return 0;
		}
	return -1;
}

static unsigned class_slot(uint64_t kpf)
{
	enum pm_class c = pm_class_of(kpf);
	unsigned i;

	if (c == PM_CLASS_COUNT)	/* a hole or an offline frame: kpageflags cannot say */
		return SL_HIDDEN;
	for (i = 0; i < NVALUES; i++)
		if (class_values[i] == c)
			return SL_VALUE0 + i;
	return SL_OTHER;
}

/* The slot of cgroup inode @ino: one per cgroup while the palette lasts (in address order: deterministic). */
static unsigned cgroup_slot(struct colour_walk *cw, uint64_t ino)
{
	unsigned i;

	for (i = 0; i < cw->nino; i++)
		if (cw->ino[i] == ino)
			return SL_VALUE0 + i;
	if (cw->nino == NVALUES)
		return SL_OTHER;
	cw->ino[cw->nino] = ino;
	return SL_VALUE0 + cw->nino++;
}

/* Slots of @n frames from @pfn into cw->slots. */
static void frame_slots(struct colour_walk *cw, uint64_t pfn, size_t n)
{
	size_t i = 0;
	int rc;

	if (cw->by == RCOL_NODE) {
		while (i < n) {
			uint64_t next = pfn + i + 1;
			int idx = cw->numa ? pm_numa_index_of_pfn(cw->numa, pfn + i, &next) : -1;
			unsigned slot = idx < 0 ? SL_HIDDEN : idx < NVALUES ? SL_VALUE0 + (unsigned)idx : SL_OTHER;

			if (!cw->numa || next <= pfn + i)
				next = pfn + n;
			for (; i < n && pfn + i < next; i++)
				cw->slots[i] = (uint8_t)slot;
		}
		return;
	}
	rc = cw->kpage ? pm_kpage_read(cw->kpage, pfn, n, cw->by == RCOL_CLASS ? cw->words : NULL, NULL,
				       cw->by == RCOL_CGROUP ? cw->words : NULL) : -ENOENT;
	if (rc < 0 && !cw->read_err)
		cw->read_err = rc;
	for (i = 0; i < n; i++)
		cw->slots[i] = (uint8_t)(rc < 0 ? SL_HIDDEN : cw->by == RCOL_CLASS ? class_slot(cw->words[i]) :
					 cgroup_slot(cw, cw->words[i]));
}

/* A run with visible frames: in batches, each piece of one value counted (and kept for hover) on its own. */
static void add_frames(struct colour_walk *cw, const struct pm_run *r)
{
	uint64_t ps = cw->m->page_size, npages = (r->end - r->start) / ps, i = 0;
	bool same = (r->flags & PM_PAGE_ZERO) && !(r->flags & PM_PAGE_THP);	/* one zero page mapped many times */

	while (i < npages) {
		size_t n = same ? 1 : npages - i < BATCH ? (size_t)(npages - i) : BATCH, j0 = 0, j;

		frame_slots(cw, r->pfn + (same ? 0 : i), n);
		if (same) {
			struct pm_run piece = *r;

			rnd_add_run_as(cw->m, &piece, cw->slots[0]);
			cw->unknown += cw->slots[0] == SL_HIDDEN ? r->end - r->start : 0;
			return;
		}
		for (j = 1; j <= n; j++) {
			struct pm_run piece = *r;

			if (j < n && cw->slots[j] == cw->slots[j0])
				continue;
			piece.start = r->start + (i + j0) * ps;
			piece.end = r->start + (i + j) * ps;
			piece.pfn = r->pfn + i + j0;
			rnd_add_run_as(cw->m, &piece, cw->slots[j0]);
			cw->unknown += cw->slots[j0] == SL_HIDDEN ? piece.end - piece.start : 0;
			j0 = j;
		}
		i += n;
	}
}

static int colour_run(void *data, const struct pm_run *r)
{
	struct colour_walk *cw = data;

	if (!(r->flags & PM_PAGE_PRESENT)) {
		rnd_add_run_as(cw->m, r, (r->flags & PM_PAGE_SWAPPED) ? SL_SWAP : SL_NONE);
	} else if (!(r->flags & PM_PAGE_FRAME)) {
		cw->hidden = true;
		rnd_add_run_as(cw->m, r, SL_HIDDEN);
	} else {
		add_frames(cw, r);
	}
	return 0;
}

static void set_slot(struct rnd_model *m, unsigned k, const char *name, const char *colour, bool optional)
{
	snprintf(m->vnames[k], sizeof(m->vnames[k]), "%s", name);
	m->vstates[k] = (struct rnd_state_info){ m->vnames[k], colour, "" };
	if (optional)
		m->optional |= 1u << k;
	else
		m->optional &= ~(1u << k);
}

/* cgroup: name the inodes seen (paths below the cgroup mount), then order the slots by name in every cell and run. */
static void name_cgroups(struct colour_walk *cw)
{
	struct rnd_model *m = cw->m;
	struct pm_cache *c = pm_cache_new(cw->ctx);
	char names[NVALUES][160];
	unsigned order[NVALUES], perm[SL_COUNT], i, j;
	size_t k;

	for (i = 0; i < cw->nino; i++) {
		char path[4096];

		if (!cw->ino[i])
			snprintf(names[i], sizeof(names[i]), "uncharged");
		else if (c && pm_cache_cgroup_path(c, cw->ino[i], path, sizeof(path)) == 0)
			snprintf(names[i], sizeof(names[i]), "%.159s", path);
		else	/* removed since, or a replayed snapshot without the cgroup tree */
			snprintf(names[i], sizeof(names[i]), "cgroup ino %" PRIu64, cw->ino[i]);
		order[i] = i;
	}
	pm_cache_free(c);
	for (i = 1; i < cw->nino; i++)	/* insertion sort by name: at most NVALUES */
		for (j = i; j > 0 && strcmp(names[order[j - 1]], names[order[j]]) > 0; j--) {
			unsigned t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (i = 0; i < SL_COUNT; i++)
		perm[i] = i;
	for (i = 0; i < cw->nino; i++) {
		perm[SL_VALUE0 + order[i]] = SL_VALUE0 + i;
		set_slot(m, SL_VALUE0 + i, names[order[i]], palette[i], false);
	}
	for (k = 0; k < m->ncells; k++) {
		uint64_t old[SL_COUNT];

		memcpy(old, m->cells[k].state, sizeof(old));
		for (i = 0; i < SL_COUNT; i++)
			m->cells[k].state[perm[i]] = old[i];
	}
	for (k = 0; k < m->nruns; k++)
		m->runs[k].slot = (uint8_t)perm[m->runs[k].slot];
}

/* The slots' names and colours, and the note for what could not be seen. */
static void name_slots(struct colour_walk *cw)
{
	static const char *const what[] = { [RCOL_CGROUP] = "memory cgroup", [RCOL_CLASS] = "physical class",
					     [RCOL_NODE] = "NUMA node" };
	struct rnd_model *m = cw->m;
	unsigned i;
	int err = cw->open_err ? cw->open_err : cw->read_err;

	for (i = SL_VALUE0; i < SL_OTHER; i++)
		set_slot(m, i, "", "#FFFFFF", true);
	set_slot(m, SL_NONE, "none", "#E4E4E4", false);
	set_slot(m, SL_SWAP, "swapped", "#000000", false);
	set_slot(m, SL_HIDDEN, cw->hidden ? "hidden" : "unknown", "#999999", true);
	set_slot(m, SL_OTHER, "other", "#666666", true);
	if (cw->by == RCOL_CLASS)
		for (i = 0; i < NVALUES; i++)
			set_slot(m, SL_VALUE0 + i, pm_class_name(class_values[i]), palette[i], false);
	for (i = 0; cw->by == RCOL_NODE && cw->numa && i < pm_numa_count(cw->numa) && i < NVALUES; i++) {
		char name[32];

		snprintf(name, sizeof(name), "node %d", pm_numa_node(cw->numa, i)->id);
		set_slot(m, SL_VALUE0 + i, name, palette[i], false);
	}
	if (cw->by == RCOL_CGROUP)
		name_cgroups(cw);
	m->note[0] = '\0';
	if (cw->hidden)
		snprintf(m->note, sizeof(m->note), "frame numbers hidden (not root): the %s of pages in RAM is not shown",
			 what[cw->by]);
	else if (cw->unknown && err)
		snprintf(m->note, sizeof(m->note), "%s unreadable (%s): the %s of pages in RAM is unknown",
			 cw->by == RCOL_NODE ? "node topology" : cw->by == RCOL_CLASS ? "kpageflags" : "kpagecgroup",
			 strerror(-err), what[cw->by]);
	else if (cw->unknown)
		snprintf(m->note, sizeof(m->note), "%s of %" PRIu64 " bytes unknown (frames no %s", what[cw->by],
			 cw->unknown, cw->by == RCOL_NODE ? "node's memory block covers)" : "kpage word describes)");
}

int rnd_colour_fill(struct rnd_model *m, struct pm_ctx *ctx, struct pm_target *t, const struct rnd_layout *lay,
		    enum rnd_colour by)
{
	struct colour_walk *cw;
	int rc;

	if (by == RCOL_STATE)
		return rnd_model_fill(m, t, lay);
	if (!(cw = calloc(1, sizeof(*cw))))
		return -ENOMEM;
	cw->m = m;
	cw->ctx = ctx;
	cw->by = by;
	if (by == RCOL_NODE && !(cw->numa = pm_numa_open(ctx)))
		cw->open_err = -errno;
	if (by != RCOL_NODE) {
		if (!(cw->kpage = pm_kpage_open(ctx)))
			cw->open_err = -errno;
		else if ((rc = pm_kpage_status(cw->kpage, by == RCOL_CLASS ? PM_KPAGE_FLAGS : PM_KPAGE_CGROUP)) < 0)
			cw->open_err = rc;
	}
	m->states = m->vstates;
	m->nstates = SL_COUNT;
	m->optional = 0;
	rc = rnd_model_walk(m, t, lay, colour_run, cw);
	name_slots(cw);
	pm_kpage_close(cw->kpage);
	pm_numa_close(cw->numa);
	free(cw);
	return rc;
}
