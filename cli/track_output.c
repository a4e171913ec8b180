/*
 * track_output.c - `pagemap track`'s report of an interval: a row per written
 * mapping (or range), the total, and the head with the cost estimate.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
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
	[COL_PATH] = { "PATH", 0.3, SCOLS_FL_NOEXTREMES | SCOLS_FL_TRUNC, OUT_STR,
		       "the mapping's file or [name]; empty: anonymous" },
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
	/* a terminal's: what fits 80 columns, the path cut to the rest (pmap shows no end either) */
	return out_new_fit("maps", columns, NCOLS,
			   tr->oo.json ? "START,END,PATH,PAGES,WRITTEN,HUGE" : "START,END,PERMS,PAGES,WRITTEN,HUGE,PATH",
			   "START,PERMS,PAGES,WRITTEN,HUGE,PATH", &tr->oo);
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

/* track's CPU in the last collect as a percentage of one CPU over the interval. */
static double track_cpu_share(const struct track *tr, const struct span *sp)
{
	return sp->interval > 0 ? 100 * tr->collect_cpu / sp->interval : 0;
}

/* Did the interval run past its plan (by more than 5 % and 10 ms: not a wake-up's jitter)? */
static bool stretched(const struct span *sp)
{
	return !sp->partial && sp->interval > sp->planned * 1.05 && sp->interval > sp->planned + 0.010;
}

/* Why the next interval is what it is, after the estimate @c; "" when as asked and nothing changed. */
static void next_words(const struct track *tr, const struct pm_watch_cost *c, const struct span *sp, char *buf,
		       size_t size)
{
	double limit = 100 * tr->max_overhead, est = 100 * c->overhead;

	buf[0] = '\0';
	if (sp->partial || !(tr->max_overhead > 0))
		return;
	if (c->overhead > tr->max_overhead && sp->next > sp->planned + 1e-9)
		snprintf(buf, size, "; %.1f%% is over --max-overhead %g%%: next interval widened to %.3fs", est, limit,
			 sp->next);
	else if (c->overhead > tr->max_overhead)
		snprintf(buf, size, "; %.1f%% is over --max-overhead %g%%: next interval stays at %.3fs, the widest "
			 "allowed", est, limit, sp->next);
	else if (sp->next < sp->planned - 1e-9)
		snprintf(buf, size, "; %.1f%% is under a quarter of --max-overhead %g%%: next interval narrowed to %.3fs",
			 est, limit, sp->next);
	else if (sp->next > sp->asked + 1e-9)
		snprintf(buf, size, "; %.1f%% is within --max-overhead %g%%: next interval stays widened at %.3fs", est,
			 limit, sp->next);
}

/* The cost line under the heading: the estimate for the process, track's own collect, and the next interval. */
static void cost_words(const struct track *tr, const struct pm_watch_cost *c, const struct span *sp, char *buf,
		       size_t size)
{
	char next[200];

	if (sp->lost) {
		buf[0] = '\0';
		return;
	}
	next_words(tr, c, sp, next, sizeof(next));
	snprintf(buf, size, "#   estimated cost to it: %.1f%% (%" PRIu64 " faults x %.1f us, scans holding its page "
		     "tables up to %.1f ms at once); track's own collect: %.1f ms, %.1f ms of its CPU (%.1f%% of a CPU "
		     "over the interval)%s\n", 100 * c->overhead, c->faults, 1e6 * c->fault_cost, 1e3 * c->max_hold,
		 1e3 * c->scan_time, 1e3 * tr->collect_cpu, track_cpu_share(tr, sp), next);
}

/* Why the interval @sp ran past its plan: the start's measurement, the collect before it, or a late wake-up. */
static int stretch_cause(const struct track *tr, const struct span *sp, char *buf, size_t size)
{
	if (sp->t <= sp->interval + 1e-9)	/* the first: pm_watch_calibrate ran in it */
		return snprintf(buf, size, "the measurement of a tracking fault's price at start took its time");
	double by_collect = tr->prev_collect - 0.1 * sp->planned, late = sp->interval - sp->planned - by_collect;

	if (by_collect <= 0)
		return snprintf(buf, size, "track woke late (a busy machine)");
	/* pm_watch_next_wait's rule: a collect over a tenth of the interval pushes the next one back */
	return snprintf(buf, size, "the collect before it took %.1f ms, and the process gets 90%% of an interval "
			"after a collect%s", 1e3 * tr->prev_collect,
			late > 0.05 * sp->planned && late > 0.010 ? "; track also woke late (a busy machine)" : "");
}

/* The words in the heading's parentheses after "asked": widened, stretched, the last. */
static void span_words(const struct track *tr, const struct span *sp, char *buf, size_t size)
{
	int n = snprintf(buf, size, "asked %gs", sp->asked);

	if (n >= 0 && (size_t)n < size && sp->widened)
		n += snprintf(buf + n, size - (size_t)n, ", widened to %.3fs by --max-overhead", sp->planned);
	if (n >= 0 && (size_t)n < size && stretched(sp)) {
		n += snprintf(buf + n, size - (size_t)n, "; %.3fs longer than planned: ", sp->interval - sp->planned);
		if (n >= 0 && (size_t)n < size)
			n += stretch_cause(tr, sp, buf + n, size - (size_t)n);
	}
	if (n >= 0 && (size_t)n < size && sp->partial)
		snprintf(buf + n, size - (size_t)n, "; the last, partial: the process exited");
}

/*
 * On a terminal, @heading broken at spaces to its width (continuation lines stay comments): *@buf
 * holds it, to be freed. Piped, -r and -J: @heading as it is, one line per fact for grep.
 */
static const char *fit_heading(const struct track *tr, const char *heading, char **buf)
{
	unsigned width = tr->oo.json || tr->oo.raw ? 0 : cli_term_width(STDOUT_FILENO);
	size_t len;
	FILE *m;

	*buf = NULL;
	if (!width || !(m = open_memstream(buf, &len)))
		return heading;
	cli_fputs_wrapped(m, heading, width, "#     ");
	if (fclose(m) != 0) {
		free(*buf);
		*buf = NULL;
		return heading;
	}
	return *buf;
}

/* A number of the record, or null where the interval was not collected. */
#define REC_NUM(k, v) { k, sp->lost ? OUT_STR : OUT_NUM, (v), 0, NULL }
#define REC_SECS(k, v) { k, sp->lost ? OUT_STR : OUT_SECS, 0, (v), NULL }

/* The interval's head: comment lines over the table, or the first keys of its JSON line. */
static int print_interval(struct track *tr, const struct span *sp, uint64_t total)
{
	const char *method = pm_watch_method_name(pm_watch_method(tr->w));
	struct pm_watch_cost c = { .interval = sp->interval };
	char heading[1024], hs[32], cost[600], span[300], what[400], *fitted;
	int r;

	if (!sp->lost)
		pm_watch_cost(tr->w, &c);	/* set by the collect just made */
	cost_words(tr, &c, sp, cost, sizeof(cost));
	span_words(tr, sp, span, sizeof(span));
	if (sp->lost)
		snprintf(what, sizeof(what), "not collected: %s", sp->lost);
	else
		snprintf(what, sizeof(what), "%" PRIu64 " pages written (%s)", total / tr->psize,
			 out_human_size(total, hs, sizeof(hs)));
	snprintf(heading, sizeof(heading), "%s# t=%.3fs interval %.3fs (%s), %s: %s\n%s",
		 sp->t > sp->interval + 1e-9 ? "\n" : "", sp->t, sp->interval, span, method, what, cost);

	const struct out_field head[] = {
		{ "t", OUT_SECS, 0, sp->t, NULL }, { "interval", OUT_SECS, 0, sp->interval, NULL },
		{ "method", OUT_STR, 0, 0, method }, REC_NUM("written", total), REC_NUM("pages", total / tr->psize),
		{ "asked", OUT_SECS, 0, sp->asked, NULL }, { "planned", OUT_SECS, 0, sp->planned, NULL },
		{ "widened", OUT_BOOL, sp->widened, 0, NULL }, { "stretched", OUT_BOOL, stretched(sp), 0, NULL },
		{ "partial", OUT_BOOL, sp->partial, 0, NULL }, { "collected", OUT_BOOL, !sp->lost, 0, NULL },
		{ "why_not", OUT_STR, 0, 0, sp->lost }, REC_NUM("faults", c.faults),
		REC_SECS("fault_us", 1e6 * c.fault_cost), REC_SECS("overhead", 100 * c.overhead),
		REC_SECS("collect_ms", 1e3 * c.scan_time), REC_SECS("collect_cpu_ms", 1e3 * tr->collect_cpu),
		REC_SECS("track_cpu", track_cpu_share(tr, sp)), REC_SECS("max_hold_ms", 1e3 * c.max_hold),
		{ "next_interval", OUT_SECS, 0, sp->next, NULL },
	};

	r = out_print_record(tr->out, fit_heading(tr, heading, &fitted), head, sizeof(head) / sizeof(head[0]));
	free(fitted);
	return r;
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
	/* Not collected: no rows (its maps are gone with it), and no total, which would read as 0. */
	err = sp->lost ? 0 : fill_rows(tr, r, n, total, huge);
	return err < 0 ? err : print_interval(tr, sp, total);
}
