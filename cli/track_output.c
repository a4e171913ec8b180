/*
 * track_output.c - `pagemap track`'s report of an interval: a row per written
 * mapping (or range), the total, and the head with the cost estimate.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include "cli.h"
#include "track.h"

enum { COL_START, COL_END, COL_PERMS, COL_PAGES, COL_WRITTEN, COL_HUGE, COL_PATH };

static const struct out_col columns[] = {
	[COL_START] = { "START", 14, SCOLS_FL_RIGHT, OUT_HEX, "first address of the mapping (or range)" },
	[COL_END] = { "END", 14, SCOLS_FL_RIGHT, OUT_HEX, "address after its last byte" },
	[COL_PERMS] = { "PERMS", 4, 0, OUT_STR, "permissions, as in maps (rwxp/s)" },
	[COL_PAGES] = { "PAGES", 6, SCOLS_FL_RIGHT, OUT_NUM, "pages written in the interval" },
	[COL_WRITTEN] = { "WRITTEN", 6, SCOLS_FL_RIGHT, OUT_SIZE, "bytes written in the interval" },
	[COL_HUGE] = { "HUGE", 6, SCOLS_FL_RIGHT, OUT_SIZE, "of those, bytes reported whole with a huge page" },
	[COL_PATH] = { "PATH", 0.3, SCOLS_FL_NOEXTREMES, OUT_STR, "the mapping's file or [name]; empty: anonymous" },
};
#define NCOLS (sizeof(columns) / sizeof(columns[0]))

/* --ranges: a range is reported whole with a huge page or page by page, so HUGE is yes or no (JSON true/false). */
static const struct out_col range_columns[] = {
	[COL_START] = { "START", 14, SCOLS_FL_RIGHT, OUT_HEX, "first address of the range" },
	[COL_END] = { "END", 14, SCOLS_FL_RIGHT, OUT_HEX, "address after its last byte" },
	[COL_PERMS] = { "PERMS", 4, 0, OUT_STR, "(empty for ranges)" },
	[COL_PAGES] = { "PAGES", 6, SCOLS_FL_RIGHT, OUT_NUM, "pages written in the interval" },
	[COL_WRITTEN] = { "WRITTEN", 6, SCOLS_FL_RIGHT, OUT_SIZE, "bytes written in the interval" },
	[COL_HUGE] = { "HUGE", 4, 0, OUT_BOOL, "reported whole with a huge page, not page by page" },
	[COL_PATH] = { "PATH", 0.3, SCOLS_FL_NOEXTREMES, OUT_STR, "(empty for ranges)" },
};

/*
 * Bytes of the written ranges inside [a, b); *huge gets the part reported at
 * huge-page granularity. Mappings come in address order, and so do the
 * ranges: *@from, the first range that may still overlap, only moves forward
 * (linear in both).
 */
static uint64_t written_in(const struct pm_written *r, size_t n, uint64_t a, uint64_t b, uint64_t *huge, size_t *from)
{
	uint64_t sum = 0;
	size_t i;

	*huge = 0;
	while (*from < n && r[*from].end <= a)
		(*from)++;
	for (i = *from; i < n && r[i].start < b; i++) {
		uint64_t lo = r[i].start > a ? r[i].start : a, hi = r[i].end < b ? r[i].end : b;

		if (hi > lo) {
			sum += hi - lo;
			if (r[i].huge)
				*huge += hi - lo;
		}
	}
	return sum;
}

static void row(struct out *out, struct libscols_line *ln, uint64_t a, uint64_t b, const char *perms,
		const char *path, uint64_t bytes, uint64_t huge, uint64_t psize)
{
	out_u64(out, ln, COL_START, a);
	out_u64(out, ln, COL_END, b);
	out_str(out, ln, COL_PERMS, perms);
	out_u64(out, ln, COL_PAGES, bytes / psize);
	out_u64(out, ln, COL_WRITTEN, bytes);
	out_u64(out, ln, COL_HUGE, huge);
	out_str(out, ln, COL_PATH, path);
}

/* The table every interval fills; NULL after a usage error for -o. JSON keeps the keys it always had. */
struct out *track_new_table(const struct track *tr)
{
	if (tr->ranges)
		return out_new("ranges", range_columns, NCOLS,
			       tr->oo.json ? "START,END,HUGE" : "START,END,PAGES,WRITTEN,HUGE", &tr->oo);
	return out_new("maps", columns, NCOLS,
		       tr->oo.json ? "START,END,PATH,PAGES,WRITTEN,HUGE" : "START,END,PERMS,PAGES,WRITTEN,HUGE,PATH", &tr->oo);
}

/* One row per written mapping: the maps are read again each interval (they change). */
static int fill_maps(struct track *tr, const struct pm_written *r, size_t n)
{
	struct pm_maps *it = pm_maps_open(tr->t);
	const struct pm_mapping *m;
	char path[4096];
	size_t from = 0;
	int ret = 0;

	while (it && (ret = pm_maps_next(it, &m)) == 0) {
		uint64_t huge, bytes = written_in(r, n, m->start, m->end, &huge, &from);

		if (!bytes)
			continue;
		snprintf(path, sizeof(path), "%.*s", (int)m->path_len, m->path);
		row(tr->out, out_line(tr->out), m->start, m->end, m->perms, path, bytes, huge, tr->psize);
	}
	if (!it)
		ret = -errno;
	pm_maps_close(it);
	return ret < 0 ? ret : 0;
}

static int fill_rows(struct track *tr, const struct pm_written *r, size_t n, uint64_t total, uint64_t huge)
{
	struct libscols_line *ln;
	size_t i;
	int err = 0;

	if (!tr->ranges)
		err = fill_maps(tr, r, n);
	for (i = 0; tr->ranges && i < n; i++)
		row(tr->out, out_line(tr->out), r[i].start, r[i].end, "", "", r[i].end - r[i].start, r[i].huge, tr->psize);
	if ((ln = out_total_line(tr->out))) {	/* tables only */
		out_str(tr->out, ln, COL_PATH, "total");
		out_u64(tr->out, ln, COL_PAGES, total / tr->psize);
		out_u64(tr->out, ln, COL_WRITTEN, total);
		if (!tr->ranges)	/* a range's HUGE is yes or no */
			out_u64(tr->out, ln, COL_HUGE, huge);
	}
	return err;
}

/* The cost line under the heading: what the estimate says, and why the next interval is what it is. */
static void cost_words(const struct track *tr, const struct pm_watch_cost *c, const struct span *sp, char *buf,
		       size_t size)
{
	int n = snprintf(buf, size, "#   estimated cost to it: %.1f%% (%" PRIu64 " faults x %.1f us, collect %.1f ms, "
			 "longest hold %.1f ms)", 100 * c->overhead, c->faults, 1e6 * c->fault_cost, 1e3 * c->scan_time,
			 1e3 * c->max_hold);

	if (n < 0 || (size_t)n >= size)
		return;
	if (sp->next > sp->asked + 1e-9)
		snprintf(buf + n, size - (size_t)n, "; over --max-overhead %g%%: next interval widened to %.3fs\n",
			 100 * tr->max_overhead, sp->next);
	else
		snprintf(buf + n, size - (size_t)n, "\n");
}

/* The interval's head: comment lines over the table, or the first keys of its JSON line. */
static int print_interval(struct track *tr, const struct span *sp, uint64_t total)
{
	const char *method = pm_watch_method_name(pm_watch_method(tr->w));
	struct pm_watch_cost c = { .interval = sp->interval };
	char heading[768], hs[32], cost[400];

	pm_watch_cost(tr->w, &c);	/* set by the collect just made */
	cost_words(tr, &c, sp, cost, sizeof(cost));
	snprintf(heading, sizeof(heading), "%s# t=%.3fs interval %.3fs (asked %gs%s), %s: %" PRIu64 " pages written (%s)\n%s",
		 sp->t > sp->interval + 1e-9 ? "\n" : "", sp->t, sp->interval, sp->asked,
		 sp->widened ? ", widened by --max-overhead" : "", method, total / tr->psize,
		 out_human_size(total, hs, sizeof(hs)), cost);

	const struct out_field head[] = {
		{ "t", OUT_SECS, 0, sp->t, NULL }, { "interval", OUT_SECS, 0, sp->interval, NULL },
		{ "method", OUT_STR, 0, 0, method }, { "written", OUT_NUM, total, 0, NULL },
		{ "pages", OUT_NUM, total / tr->psize, 0, NULL }, { "asked", OUT_SECS, 0, sp->asked, NULL },
		{ "widened", OUT_BOOL, sp->widened, 0, NULL }, { "faults", OUT_NUM, c.faults, 0, NULL },
		{ "fault_us", OUT_SECS, 0, 1e6 * c.fault_cost, NULL }, { "overhead", OUT_SECS, 0, 100 * c.overhead, NULL },
		{ "collect_ms", OUT_SECS, 0, 1e3 * c.scan_time, NULL }, { "max_hold_ms", OUT_SECS, 0, 1e3 * c.max_hold, NULL },
		{ "next_interval", OUT_SECS, 0, sp->next, NULL },
	};

	return out_print_record(tr->out, heading, head, sizeof(head) / sizeof(head[0]));
}

int track_print(struct track *tr, const struct span *sp, const struct pm_written *r, size_t n)
{
	uint64_t total = 0, huge = 0;
	size_t i;
	int err;

	for (i = 0; i < n; i++) {
		total += r[i].end - r[i].start;
		if (r[i].huge)
			huge += r[i].end - r[i].start;
	}
	err = fill_rows(tr, r, n, total, huge);
	return err < 0 ? err : print_interval(tr, sp, total);
}
