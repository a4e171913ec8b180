/*
 * top_batch.c - a frame for scripts and logs: top -b's plain frames (the header lines over the table)
 * or, with -J, one JSON object per frame and line; and the header lines the terminal view draws too.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "top.h"

enum {
	COL_PID, COL_USER, COL_COMMAND, COL_GROUP, COL_PROCS,
	COL_FIG,			/* NFIGS columns: RSS ... HUGETLB */
	COL_RATE = COL_FIG + NFIGS,	/* NFIGS columns: RSS_PER_S ... HUGETLB_PER_S */
	COL_AGE = COL_RATE + NFIGS,
};

static const struct out_col columns[] = {
	[COL_PID] = { "PID", 7, SCOLS_FL_RIGHT, OUT_NUM, "process ID" },
	[COL_USER] = { "USER", 8, SCOLS_FL_TRUNC, OUT_STR, "owner (real UID) by name" },
	[COL_COMMAND] = { "COMMAND", 15, SCOLS_FL_TRUNC, OUT_STR, "command name (comm)" },
	[COL_GROUP] = { "GROUP", 15, SCOLS_FL_TRUNC, OUT_STR, "the group's user, command name or memory cgroup (-g)" },
	[COL_PROCS] = { "PROCESSES", 5, SCOLS_FL_RIGHT, OUT_NUM, "processes in the group (-g)", "PROCS" },
	[COL_FIG + FIG_RSS] = { "RSS", 6, SCOLS_FL_RIGHT, OUT_SIZE, OUT_RSS_HELP, OUT_RSS_ALIASES },
	[COL_FIG + FIG_PSS] = { "PSS", 6, SCOLS_FL_RIGHT, OUT_SIZE, "proportional bytes: each page divided by its map count" },
	[COL_FIG + FIG_USS] = { "USS", 6, SCOLS_FL_RIGHT, OUT_SIZE, OUT_USS_HELP },
	[COL_FIG + FIG_SWAP] = { "SWAP", 6, SCOLS_FL_RIGHT, OUT_SIZE, OUT_SWAP_HELP },
	[COL_FIG + FIG_SHARED] = { "SHARED", 6, SCOLS_FL_RIGHT, OUT_SIZE, "bytes of pages mapped more than once" },
	[COL_FIG + FIG_HUGETLB] = { "HUGETLB", 6, SCOLS_FL_RIGHT, OUT_SIZE, "hugetlb bytes mapped (in no other column)" },
	[COL_RATE + FIG_RSS] = { "RSS_PER_S", 7, SCOLS_FL_RIGHT, OUT_SIZE, "change of RSS per second since the frame before (the view's RSS/s)", "RSS/S" },
	[COL_RATE + FIG_PSS] = { "PSS_PER_S", 7, SCOLS_FL_RIGHT, OUT_SIZE, "change of PSS per second", "PSS/S" },
	[COL_RATE + FIG_USS] = { "USS_PER_S", 7, SCOLS_FL_RIGHT, OUT_SIZE, "change of USS per second", "USS/S" },
	[COL_RATE + FIG_SWAP] = { "SWAP_PER_S", 7, SCOLS_FL_RIGHT, OUT_SIZE, "change of SWAP per second", "SWAP/S" },
	[COL_RATE + FIG_SHARED] = { "SHARED_PER_S", 7, SCOLS_FL_RIGHT, OUT_SIZE, "change of SHARED per second", "SHARED/S" },
	[COL_RATE + FIG_HUGETLB] = { "HUGETLB_PER_S", 7, SCOLS_FL_RIGHT, OUT_SIZE, "change of HUGETLB per second", "HUGETLB/S" },
	[COL_AGE] = { "AGE", 5, SCOLS_FL_RIGHT, OUT_SECS, "seconds since the row's figures were read" },
};
#define NCOLS (sizeof(columns) / sizeof(columns[0]))

void top_batch_help(unsigned flags)
{
	out_help_with(stdout, columns, NCOLS, flags);
}

struct out *top_batch_out(const struct top_opts *to)
{
	char defaults[160];

	/* The change per second is the sort column's, as top shows one column of %CPU. */
	snprintf(defaults, sizeof(defaults), "%s,RSS,PSS,USS,SWAP,SHARED,%s_PER_S",
		 to->group == GROUP_NONE ? "PID,USER,COMMAND" : "GROUP,PROCESSES",
		 top_fig_names[to->sort_by == SORT_FIG ? to->sort : FIG_PSS]);
	return out_new("processes", columns, NCOLS, defaults, &to->o);
}

static void fill_row(struct pm_ctx *ctx, struct out *out, const struct top_row *r, const struct top_opts *to)
{
	struct libscols_line *ln = out_line(out);
	int i;

	if (to->group == GROUP_NONE) {
		out_u64(out, ln, COL_PID, (uint64_t)r->pid);
		out_str(out, ln, COL_COMMAND, r->key);
	} else {
		out_str(out, ln, COL_GROUP, r->key);
		out_u64(out, ln, COL_PROCS, r->procs);
	}
	if (r->uid_known && to->group != GROUP_CGROUP && to->group != GROUP_COMM) {
		char u[256];

		out_str(out, ln, COL_USER, cli_user_label(ctx, r->uid, u, sizeof(u)));
	} else {
		out_unknown(out, ln, COL_USER);
	}
	for (i = 0; i < NFIGS; i++) {
		if (r->err) {	/* another user's (a group: all of them), unreadable here: never a fake 0 */
			out_unknown(out, ln, COL_FIG + i);
			out_unknown(out, ln, COL_RATE + i);
			continue;
		}
		out_u64(out, ln, COL_FIG + i, r->fig[i]);
		out_s64(out, ln, COL_RATE + i, out_round_s64(r->rate[i]));
	}
	if (out_has(out, COL_AGE) && r->age >= 0) {
		char age[32];

		snprintf(age, sizeof(age), "%.1f", r->age);
		out_str(out, ln, COL_AGE, age);
	} else {
		out_unknown(out, ln, COL_AGE);	/* never read: a kernel thread's, or hidden */
	}
}

static const char *size_or_dash(uint64_t v, char *buf, size_t size)
{
	if (v == PM_LIVE_UNKNOWN)
		return "-";
	return out_human_size(v, buf, size);
}

/* "+1.5M/s": the change per second of a meminfo figure between two frames. */
static const char *rate_of(uint64_t now, uint64_t was, double dt, char *buf, size_t size)
{
	char h[40];

	if (now == PM_LIVE_UNKNOWN || was == PM_LIVE_UNKNOWN || !(dt > 0))
		return "";
	out_human_signed(out_round_s64(((double)now - (double)was) / dt), h, sizeof(h));
	snprintf(buf, size, " (%s/s)", h);
	return buf;
}

void top_header(struct pm_ctx *ctx, const struct top_frame *f, const struct top_opts *to,
		void (*line)(void *data, const char *text), void *data)
{
	const struct pm_live_memory *m = &f->mem, *p = &f->mem_prev;
	double dt = f->mem_prev_known ? f->live.interval : 0;
	char text[512], a[32], b[32], c[32], d[32], e[32], r1[48], r2[48];
	time_t now = time(NULL);
	struct tm tm;

	(void)ctx;
	localtime_r(&now, &tm);
	snprintf(text, sizeof(text), "pagemap top - %02d:%02d:%02d, %zu %s: %zu read (%zu moved, %zu by age)",
		 tm.tm_hour, tm.tm_min, tm.tm_sec, f->live.rows, f->live.rows == 1 ? "process" : "processes",
		 f->live.read, f->live.read_moved, f->live.read_aged);
	line(data, text);
	snprintf(text, sizeof(text), "Rows at most %.3g s old (oldest %.1f s), a frame every %.3g s", f->live.max_age,
		 f->live.oldest, to->delay);
	line(data, text);
	if (f->hidden) {	/* smaps_rollup is readable by the owner (and ptrace's rules), not by everyone */
		snprintf(text, sizeof(text), "%zu %s smaps_rollup this reader may not read: shown as -%s", f->hidden,
			 f->hidden == 1 ? "process's" : "processes'", geteuid() ? " (root reads it)" : "");
		line(data, text);
	}
	if (!f->mem_known)
		return;
	snprintf(text, sizeof(text), "Mem  %s total, %s free, %s available%s", size_or_dash(m->total, a, sizeof(a)),
		 size_or_dash(m->free, b, sizeof(b)), size_or_dash(m->available, c, sizeof(c)),
		 rate_of(m->available, p->available, dt, r1, sizeof(r1)));
	line(data, text);
	snprintf(text, sizeof(text), "     anon %s%s, THP %s, file %s, shmem %s, hugetlb %s",
		 size_or_dash(m->anon, a, sizeof(a)), rate_of(m->anon, p->anon, dt, r1, sizeof(r1)),
		 size_or_dash(m->anon_thp, b, sizeof(b)), size_or_dash(m->file, c, sizeof(c)),
		 size_or_dash(m->shmem, d, sizeof(d)), size_or_dash(m->hugetlb, e, sizeof(e)));
	line(data, text);
	if (m->swap_total != PM_LIVE_UNKNOWN && m->swap_total) {
		uint64_t used = m->swap_free == PM_LIVE_UNKNOWN ? PM_LIVE_UNKNOWN : m->swap_total - m->swap_free;
		uint64_t pused = p->swap_free == PM_LIVE_UNKNOWN || p->swap_total == PM_LIVE_UNKNOWN ?
			PM_LIVE_UNKNOWN : p->swap_total - p->swap_free;

		snprintf(text, sizeof(text), "Swap %s total, %s used%s", size_or_dash(m->swap_total, a, sizeof(a)),
			 size_or_dash(used, b, sizeof(b)), rate_of(used, pused, dt, r2, sizeof(r2)));
	} else {
		snprintf(text, sizeof(text), "Swap none");
	}
	line(data, text);
}

/* A frame's heading: its header lines, each ended by a newline. */
struct heading {
	size_t len;
	char buf[2048];
};

static void add_line(void *data, const char *text)
{
	struct heading *h = data;
	int n = snprintf(h->buf + h->len, sizeof(h->buf) - h->len, "%s\n", text);

	if (n > 0 && h->len + (size_t)n < sizeof(h->buf))
		h->len += (size_t)n;
}

static uint64_t mem_field(const struct top_frame *f, uint64_t v)
{
	return f->mem_known ? v : PM_LIVE_UNKNOWN;
}

#define MEM_FIELD(k, v) { k, mem_field(f, v) == PM_LIVE_UNKNOWN ? OUT_STR : OUT_NUM, mem_field(f, v), 0, NULL }

int top_batch_frame(struct out *out, struct pm_ctx *ctx, const struct top_frame *f, unsigned long index,
		    const struct top_opts *to)
{
	struct heading head = { 0, "" };
	size_t i;

	if (index > 1)
		add_line(&head, "");
	top_header(ctx, f, to, add_line, &head);
	for (i = 0; i < f->n; i++)
		fill_row(ctx, out, &f->rows[i], to);

	const struct out_field fields[] = {
		{ "index", OUT_NUM, index, 0, NULL }, { "t", OUT_SECS, 0, f->t, NULL },
		{ "interval", OUT_SECS, 0, f->live.interval, NULL },
		{ "listed", OUT_NUM, f->live.rows, 0, NULL }, { "read", OUT_NUM, f->live.read, 0, NULL },
		{ "read_moved", OUT_NUM, f->live.read_moved, 0, NULL },
		{ "read_aged", OUT_NUM, f->live.read_aged, 0, NULL },
		{ "oldest", OUT_SECS, 0, f->live.oldest, NULL }, { "max_age", OUT_SECS, 0, f->live.max_age, NULL },
		{ "hidden", OUT_NUM, f->hidden, 0, NULL }, { "kernel_threads", OUT_NUM, f->kthreads, 0, NULL },
		MEM_FIELD("mem_total", f->mem.total), MEM_FIELD("mem_free", f->mem.free),
		MEM_FIELD("mem_available", f->mem.available), MEM_FIELD("anon", f->mem.anon),
		MEM_FIELD("anon_thp", f->mem.anon_thp), MEM_FIELD("file", f->mem.file),
		MEM_FIELD("shmem", f->mem.shmem), MEM_FIELD("hugetlb", f->mem.hugetlb),
		MEM_FIELD("swap_total", f->mem.swap_total), MEM_FIELD("swap_free", f->mem.swap_free),
	};
	return out_print_record(out, head.buf, fields, sizeof(fields) / sizeof(fields[0]));
}
