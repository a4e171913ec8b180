/* watch_softdirty.c - write watch back end: clear_refs 4 and the soft-dirty bit, read through the page walker. */
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "watch.h"

/*
 * Soft-dirty alone misses a page whose content was dropped (MADV_DONTNEED,
 * reclaim of a shared page): its entry becomes empty and empty entries
 * carry no soft-dirty bit. So each reset also records which pages were
 * populated (present or swapped); a recorded page found empty is reported
 * written. One bit per watched page.
 */
struct sd_state {
	uint64_t **populated;		/* per range, a bitmap of its pages; NULL before its first reset */
	size_t cap;
};

static bool test_bit(const uint64_t *map, uint64_t i)
{
	return map && (map[i / 64] >> (i % 64)) & 1;
}

static void set_bits(uint64_t *map, uint64_t from, uint64_t to)
{
	for (; from < to; from++)
		map[from / 64] |= 1ULL << (from % 64);
}

static int clear_refs(struct pm_watch *w)
{
	char path[64];
	int fd, err = 0;

	if (pmi_pid_path(w->ctx, path, sizeof(path), w->pid, "clear_refs") < 0)
		return -ENAMETOOLONG;
	fd = pmi_open(w->ctx, path, O_WRONLY);
	if (fd < 0)
		return fd;
	if (write(fd, "4", 1) != 1)
		err = -errno;
	close(fd);
	return err;
}

/* Emit the pages of [a, b) in range @r that were populated at the last reset. */
static void emit_dropped(struct pm_watch *w, const struct pmi_watch_range *r, const uint64_t *was, uint64_t a,
			 uint64_t b)
{
	uint64_t p;

	for (p = a; p < b; p += w->psize)
		if (test_bit(was, (p - r->start) / w->psize))
			pmi_watch_emit(w, p, p + w->psize, false);
}

/* Report range @i's written pages; with @now, record which pages are populated now. */
static int collect_range(struct pm_watch *w, size_t i, uint64_t *now)
{
	struct sd_state *s = w->priv;
	const struct pmi_watch_range *r = &w->ranges[i];
	const uint64_t *was = i < s->cap ? s->populated[i] : NULL;
	struct pm_walk *walk = pm_walk_new(w->t, r->start, r->end, 0);
	const struct pm_run *run;
	int ret;

	if (!walk)
		return -errno;
	while ((ret = pm_walk_next(walk, &run)) == 0) {
		bool populated = run->flags & (PM_PAGE_PRESENT | PM_PAGE_SWAPPED);

		/* A new VMA reads soft-dirty everywhere: only pages with content (not the zero page) count. */
		if (populated && (run->flags & PM_PAGE_SOFTDIRTY) && !(run->flags & PM_PAGE_ZERO))
			pmi_watch_emit(w, run->start, run->end, run->flags & PM_PAGE_THP);
		else if (!populated)
			emit_dropped(w, r, was, run->start, run->end);
		if (now && populated)
			set_bits(now, (run->start - r->start) / w->psize, (run->end - r->start) / w->psize);
	}
	pm_walk_free(walk);
	return ret < 0 ? ret : 0;
}

static int ensure_slots(struct sd_state *s, size_t n)
{
	uint64_t **p;

	if (n <= s->cap)
		return 0;
	p = realloc(s->populated, n * sizeof(*p));
	if (!p)
		return -ENOMEM;
	memset(p + s->cap, 0, (n - s->cap) * sizeof(*p));
	s->populated = p;
	s->cap = n;
	return 0;
}

/* Collect ranges [0, @n); with @reset, clear the bits and keep the populated maps. */
static int sd_collect_n(struct pm_watch *w, size_t n, bool reset)
{
	struct sd_state *s = w->priv;
	uint64_t **now = NULL;
	size_t i;
	int err = 0;

	if (reset) {
		now = calloc(n ? n : 1, sizeof(*now));
		if (!now)
			return -ENOMEM;
	}
	for (i = 0; i < n && !err; i++) {
		uint64_t pages = (w->ranges[i].end - w->ranges[i].start) / w->psize;

		if (reset && !(now[i] = calloc((pages + 63) / 64, sizeof(uint64_t))))
			err = -ENOMEM;
		if (!err)
			err = collect_range(w, i, reset ? now[i] : NULL);
	}
	/* Writes between the walk above and this reset are lost: not atomic (pm_watch_atomic). */
	if (!err && reset) {
		double t0 = pmi_now();

		err = clear_refs(w);	/* the whole process's page tables, under its mmap lock: one hold */
		pmi_watch_hold(w, pmi_now() - t0);
	}
	if (!err && reset) {
		for (i = 0; i < n; i++) {
			free(s->populated[i]);
			s->populated[i] = now[i];
			now[i] = NULL;
		}
	}
	if (now)
		for (i = 0; i < n; i++)
			free(now[i]);
	free(now);
	return err;
}

static int sd_collect(struct pm_watch *w, bool reset)
{
	return sd_collect_n(w, w->nranges, reset);
}

/* Keep what the older ranges reported so far: the reset below clears the whole process. */
static int save_reported(struct pm_watch *w)
{
	size_t mark = w->nout, i;
	int err = sd_collect_n(w, w->nranges, false);

	for (i = mark; !err && i < w->nout; i++)
		pmi_watch_keep(w, w->out[i].start, w->out[i].end, w->out[i].huge);
	w->nout = mark;
	return err;
}

static int sd_add(struct pm_watch *w, const struct pmi_watch_range *r)
{
	struct sd_state *s = w->priv;
	int err;

	(void)r;
	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return -ENOMEM;
		w->priv = s;
	}
	err = ensure_slots(s, w->nranges + 1);
	if (!err && w->nranges)
		err = save_reported(w);
	/* Reset every range including the new one (it is at index nranges, counted after we return). */
	if (!err)
		err = sd_collect_n(w, w->nranges + 1, true);
	w->nout = 0;
	return err;
}

static void sd_fini(struct pm_watch *w)
{
	struct sd_state *s = w->priv;
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->cap; i++)
		free(s->populated[i]);
	free(s->populated);
	free(s);
	w->priv = NULL;
}

/* Usable where a written page was read back soft-dirty by the probe; any process. */
static int sd_usable(struct pm_ctx *ctx, pid_t pid, char *buf, size_t size)
{
	const struct pm_features *f = pm_ctx_probe(ctx, PM_PROBE_SOFT_DIRTY);

	if (!f) {
		snprintf(buf, size, "soft-dirty: soft-dirty support could not be probed");
		return -EOPNOTSUPP;
	}
	if (f->soft_dirty == PM_YES) {
		snprintf(buf, size, "soft-dirty: this kernel keeps soft-dirty bits (a written page read back soft-dirty)");
		return 0;
	}
	snprintf(buf, size, "soft-dirty: %s",
		 f->soft_dirty == PM_NO ? "this kernel has no soft-dirty bits (CONFIG_MEM_SOFT_DIRTY is off)"
					: "soft-dirty support could not be probed");
	return -EOPNOTSUPP;
}

/* Calibration: clear our own soft-dirty bits (the whole process, as collects do the target's). */
static int sd_cal_arm(char *p, size_t len, int *state)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
	int r = fd >= 0 && write(fd, "4", 1) == 1 ? 0 : -1;

	if (fd >= 0)
		close(fd);
	return r;
}

const struct pmi_watch_ops pmi_watch_softdirty_ops = {
	.method = PM_WATCH_SOFTDIRTY,
	.name = "soft-dirty",
	.auto_pick = true,
	.takes_over = true,
	.perturbs = "its soft-dirty bits are cleared every interval (clear_refs 4, whole process; "
		    "the first write to each page per interval faults)",
	.details = "its soft-dirty bits are cleared every interval (clear_refs 4, the whole\n"
		   "process); the first write to each page per interval faults. Writes made\n"
		   "while a collection runs can be seen one interval late or, rarely, lost.",
	.usable = sd_usable,
	.atomic = false,
	.add = sd_add,
	.collect = sd_collect,
	.fini = sd_fini,
	.cal_arm = sd_cal_arm,
};
