/* test_live.c - the live table's bookkeeping: stat lines (real and hostile), when a row moved, the read quota; the table on this machine. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "pagemap.h"
#include "live.h"
#include "../harness.h"
#include "replay.h"

static int parse(const char *line, struct pm_proc_stat *st, char *comm, size_t size)
{
	return pmi_stat_line_parse(line, strlen(line), st, comm, size);
}

/* A line as Linux 6.x prints it (52 fields): the fields the table uses land where proc(5) says. */
static int real_line(void)
{
	struct pm_proc_stat st;
	char comm[64];

	CHECK_EQ_U64(parse("1234 (sleep) S 1 1234 1234 34816 1234 4194304 97 0 1 0 3 5 0 0 20 0 1 0 "
			   "889912 8638464 236 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 "
			   "0 0 0 0 0 0 0 0\n", &st, comm, sizeof(comm)), 0);
	CHECK_STR(comm, "sleep");
	CHECK(st.state == 'S' && !st.kthread);
	CHECK_EQ_U64(st.minflt, 97);
	CHECK_EQ_U64(st.majflt, 1);
	CHECK_EQ_U64(st.utime, 3);
	CHECK_EQ_U64(st.stime, 5);
	CHECK_EQ_U64(st.starttime, 889912);
	CHECK_EQ_U64(st.vsize, 8638464);
	CHECK_EQ_U64(st.rss, 236);
	CHECK(st.ppid == 1 && st.pgrp == 1234 && st.tty_nr == 34816 && st.tpgid == 1234 && st.processor == 1);
	/* A kernel thread: PF_KTHREAD (0x00200000) in flags; tpgid -1, priority and nice negative. */
	CHECK_EQ_U64(parse("2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 -100 -20 1 0 2 0 0", &st, comm,
			   sizeof(comm)), 0);
	CHECK(st.kthread && st.starttime == 2 && st.vsize == 0 && st.tpgid == -1 && st.processor == -1);
	return T_PASS;
}

/* A command name is anyone's bytes: parentheses, a fake field list, a newline, a name at the limit. */
static int hostile_names(void)
{
	struct pm_proc_stat st;
	char comm[64], small[4];

	CHECK_EQ_U64(parse("7 (a) R 1 2 3) S 1 7 7 0 -1 0 11 0 0 0 1 2 0 0 20 0 1 0 42 4096 3", &st, comm,
			   sizeof(comm)), 0);
	CHECK_STR(comm, "a) R 1 2 3");
	CHECK(st.state == 'S' && st.minflt == 11 && st.starttime == 42 && st.rss == 3);
	CHECK_EQ_U64(parse("8 (new\nline)) Z 1 8 8 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 43 0 0", &st, comm, sizeof(comm)), 0);
	CHECK_STR(comm, "new\nline)");
	CHECK(st.state == 'Z');
	CHECK_EQ_U64(parse("9 (longer than four) S 1 9 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 44 0 0", &st, small,
			   sizeof(small)), 0);
	CHECK_STR(small, "lon");
	return T_PASS;
}

/* Lines a table must refuse rather than read as another process's figures. */
static int malformed(void)
{
	static const char *bad[] = {
		"", "1234", "1234 (sleep)", "1234 (sleep) S", "1 (x) S 1 2 3", "1 (x) 5 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 4 0 0",
		"1 (x)S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 4 0 0", "1 x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 4 0 0",
		"1 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 4 0", "1 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 4 0 z",
		"1 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 4  0 0",
		/* Not as the kernel writes it: before "PID (", a sign in a count, rss running on. */
		"x1 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 4 0 0", " 1 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 4 0 0",
		"1  (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 4 0 0", "1 (x) S 1 1 1 0 -1 0 -5 0 0 0 0 0 0 0 20 0 1 0 4 0 0",
		"1 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 -4 0 0", "1 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 4 0 0x",
	};
	struct pm_proc_stat st;
	char comm[64];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (parse(bad[i], &st, comm, sizeof(comm)) != -EINVAL) {
			printf("  accepted: '%s'\n", bad[i]);
			return T_FAIL;
		}
	/* Not NUL-terminated: the length given is the end. */
	CHECK_EQ_U64(pmi_stat_line_parse("1 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 4 0 0999", 51, &st, comm,
					 sizeof(comm)), 0);
	CHECK_EQ_U64(st.rss, 0);
	/* A number past 64 bits saturates rather than wraps into a small one. */
	CHECK_EQ_U64(parse("1 (x) S 1 1 1 0 -1 0 99999999999999999999999 0 0 0 0 0 0 0 20 0 1 0 4 0 0", &st, comm,
			   sizeof(comm)), 0);
	CHECK_EQ_U64(st.minflt, UINT64_MAX);
	return T_PASS;
}

/* The end of a test on a replayed tree: free what it made (NULL: not made), return @ok. */
static int done(int ok, struct pm_live *l, struct pm_procs *it, struct pm_ctx *ctx, char *root)
{
	pm_live_free(l);
	pm_procs_close(it);
	pm_ctx_free(ctx);
	rp_free_root(root);
	return ok;
}

/*
 * The stat lines on which the library's three readers disagreed (the live table's, pm_proc_state's and
 * pm_procs's, and the tool's own): pm_proc_state read a line cut after its state, or with a digit for a
 * state, as a running process (flags 0), and pm_procs listed it with a name; the table refused it. Now
 * every reader refuses it: GONE, no name, no row. The signed fields the tool reads come back signed.
 */
static int one_reader(void)
{
	static const char *cut[] = {
		"50 (x) S", "50 (x) S 1 50 50 0 -1 4194560", "50 (x) 5 1 50 50 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 9 0 0",
		"50 (x)S 1 50 50 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 9 0 0",
		"50 (x) S 1 50 50 0 -1 4194560 -3 0 0 0 0 0 0 0 20 0 1 0 9 0 0",
	};
	const char *tty = "50 (sh) T 1 50 50 34817 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 9 0 0";
	char *root = rp_new_root();
	struct pm_ctx *ctx = NULL;
	struct pm_procs *it = NULL;
	const struct pm_proc *p;
	struct pm_proc_stat st;
	char comm[64];
	size_t i;
	int ok = T_FAIL;

	if (!root || !(ctx = pm_ctx_new(root)))
		goto out;
	for (i = 0; i < sizeof(cut) / sizeof(cut[0]); i++) {
		if (rp_write_str(root, "proc/50/stat", cut[i]) < 0 || pm_proc_state(ctx, 50) != PM_PROC_GONE ||
		    !(it = pm_procs_open(ctx)) || pm_procs_next(it, &p) != 0 || p->state != PM_PROC_GONE || p->comm[0]) {
			printf("  read as a process: '%s'\n", cut[i]);
			goto out;
		}
		pm_procs_close(it);
		it = NULL;
	}
	/* A kernel thread whose name holds a fake field list: the flags after the last ')' count. */
	if (rp_write_str(root, "proc/50/stat", "50 (k) S 1 1 1 0 -1 0) S 2 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 9 0 0") < 0 ||
	    pm_proc_state(ctx, 50) != PM_PROC_KTHREAD || !(it = pm_procs_open(ctx)) || pm_procs_next(it, &p) != 0 ||
	    p->state != PM_PROC_KTHREAD || strcmp(p->comm, "k) S 1 1 1 0 -1 0"))
		goto out;
	/* What `snapshot --freeze` asks: the terminal's foreground group, -1 when there is none. */
	if (pm_proc_stat_parse(tty, strlen(tty), &st, NULL, 0) ||
	    st.state != 'T' || st.pgrp != 50 || st.tty_nr != 34817 || st.tpgid != -1 || st.starttime != 9)
		goto out;
	CHECK_EQ_U64(pm_proc_stat_parse("50 (sh) T", 9, &st, comm, sizeof(comm)), -EINVAL);
	CHECK(!comm[0] && !st.state);
	ok = T_PASS;
out:
	return done(ok, NULL, it, ctx, root);
}

static int moved(void)
{
	struct pm_proc_stat a = { .state = 'S', .minflt = 5, .utime = 1, .vsize = 4096, .rss = 1 }, b = a;

	CHECK(!pmi_stat_line_moved(&a, &b));
	b.minflt++;
	CHECK(pmi_stat_line_moved(&a, &b));
	b = a, b.stime++;
	CHECK(pmi_stat_line_moved(&a, &b));
	b = a, b.vsize += 4096;
	CHECK(pmi_stat_line_moved(&a, &b));
	b = a, b.state = 'T';
	CHECK(pmi_stat_line_moved(&a, &b));
	b = a, b.rss = 0;	/* reclaim or swap-out, without a fault of its own */
	CHECK(pmi_stat_line_moved(&a, &b));
	return T_PASS;
}

static int quota(void)
{
	double ages[10] = { 9.5, 9.2, 8, 5, 4, 3, 2, 1, 0.5, 0 };

	CHECK_EQ_U64(pmi_live_quota(ages, 0, 1, 10), 0);
	/* Two rows would pass 10 s before the next frame; the even share of 10 rows over 10 s is 1. */
	CHECK_EQ_U64(pmi_live_quota(ages, 10, 1, 10), 2);
	/* Nothing near the bound: the share alone, rounded up. */
	CHECK_EQ_U64(pmi_live_quota(ages + 3, 7, 1, 10), 1);
	CHECK_EQ_U64(pmi_live_quota(ages + 3, 7, 2.5, 10), 2);
	/* A frame as long as the bound, or a bad bound: every row. */
	CHECK_EQ_U64(pmi_live_quota(ages, 10, 10, 10), 10);
	CHECK_EQ_U64(pmi_live_quota(ages, 10, 1, 0), 10);
	CHECK_EQ_U64(pmi_live_quota(ages, 10, -1, 10), 10);
	return T_PASS;
}

/* Steady state: idle rows are read round-robin and no row ever passes the bound at a refresh. */
static int round_robin_bound(void)
{
	double read_at[100], now = 0, next = 0.25, bound = 2;
	size_t i, step, worst_reads = 0;

	for (i = 0; i < 100; i++)
		read_at[i] = 0;
	for (step = 1; step <= 200; step++) {
		double ages[100];
		size_t order[100], n = 100, q, j, k;

		now += next;
		for (i = 0; i < n; i++)	/* oldest first (selection sort: 100 rows) */
			order[i] = i;
		for (i = 0; i < n; i++)
			for (j = i + 1; j < n; j++)
				if (read_at[order[j]] < read_at[order[i]])
					k = order[i], order[i] = order[j], order[j] = k;
		for (i = 0; i < n; i++)
			ages[i] = now - read_at[order[i]];
		q = pmi_live_quota(ages, n, next, bound);
		for (i = 0; i < q; i++)
			read_at[order[i]] = now;
		worst_reads = q > worst_reads ? q : worst_reads;
		for (i = 0; i < n; i++)
			CHECK(now - read_at[i] <= bound - next + 1e-9);
	}
	/* The reads are spread: no frame reads much more than 100 x 0.25 / 2 = 12.5 rows. */
	CHECK(worst_reads <= 14);
	return T_PASS;
}

/* Process @pid of a replayed ROOT: a stat line with @minflt and @start, a status, a rollup of @rss_kb kB (not in stat). */
static int put_proc(const char *root, int pid, unsigned minflt, unsigned start, unsigned rss_kb)
{
	char rel[64], buf[1024];
	int r;

	snprintf(rel, sizeof(rel), "proc/%d/stat", pid);
	snprintf(buf, sizeof(buf), "%d (w %d) S 1 %d %d 0 -1 4194560 %u 0 0 0 1 1 0 0 20 0 1 0 %u 8192000 2 0\n",
		 pid, pid, pid, pid, minflt, start);
	if ((r = rp_write_str(root, rel, buf)) < 0)
		return r;
	snprintf(rel, sizeof(rel), "proc/%d/status", pid);
	snprintf(buf, sizeof(buf), "Name:\tw\nUmask:\t0022\nState:\tS (sleeping)\nUid:\t%d\t%d\t%d\t%d\n", 1000 + pid,
		 1000 + pid, 1000 + pid, 1000 + pid);
	if ((r = rp_write_str(root, rel, buf)) < 0)
		return r;
	snprintf(rel, sizeof(rel), "proc/%d/smaps_rollup", pid);
	snprintf(buf, sizeof(buf), "00400000-7ffff000 ---p 00000000 00:00 0 [rollup]\nRss: %u kB\nPss: %u kB\n"
		 "Shared_Clean: 0 kB\nShared_Dirty: 0 kB\nPrivate_Clean: 0 kB\nPrivate_Dirty: %u kB\nSwap: 0 kB\n",
		 rss_kb, rss_kb, rss_kb);
	return rp_write_str(root, rel, buf);
}

static const struct pm_live_row *row_of(const struct pm_live *l, pid_t pid)
{
	size_t i;

	for (i = 0; i < pm_live_count(l); i++)
		if (pm_live_at(l, i)->pid == pid)
			return pm_live_at(l, i);
	return NULL;
}

/*
 * Twenty processes of a replayed tree, bound 100 s, a frame a second: after the first frame reads
 * them all, an idle frame reads one (the oldest); a process whose stat moved is read; a PID whose
 * start time changed is another process (a new row, its own UID); a process gone is counted; a
 * malformed stat line is no row.
 */
static int bookkeeping(void)
{
	char *root = rp_new_root();
	struct pm_ctx *ctx = NULL;
	struct pm_live *l = NULL;
	struct pm_live_stats st;
	const struct pm_live_row *r;
	int pid, ok = T_FAIL;

	if (!root)
		return T_FAIL;
	for (pid = 100; pid < 120; pid++)
		if (put_proc(root, pid, 10, 500 + pid, 8) < 0)
			goto out;
	if (rp_write_str(root, "proc/121/stat", "121 (bad) S 1 2") < 0 ||
	    rp_write_str(root, "proc/131/stat", "131 (kworker/0:1) I 2 0 0 0 -1 69238880 0 0 0 0 0 9 0 0 20 0 1 0 77 0 0") < 0)
		goto out;
	if (!(ctx = pm_ctx_new(root)) || !(l = pm_live_new(ctx, 100)) || pm_live_refresh(l, 1) < 0)
		goto out;
	pm_live_stats(l, &st);
	if (st.rows != 21 || st.read != 20 || st.read_moved != 20 || row_of(l, 121))
		goto out;
	/* A kernel thread: a row without memory, never read, of no age (the bound is not its). */
	if (!(r = row_of(l, 131)) || r->state != PM_PROC_KTHREAD || r->err != -ESRCH || r->age != -1 || r->acct.rss)
		goto out;
	if (!(r = row_of(l, 105)) || r->acct.rss != 8192 || !r->is_new || !r->uid_known || r->uid != 1105 ||
	    strcmp(r->comm, "w 105"))
		goto out;
	/* Figures change behind unchanged stat lines: only the quota's one row is read. */
	for (pid = 100; pid < 120; pid++)
		if (put_proc(root, pid, 10, 500 + pid, 12) < 0)
			goto out;
	if (pm_live_refresh(l, 1) < 0)
		goto out;
	pm_live_stats(l, &st);
	if (st.read != 1 || st.read_aged != 1 || st.read_moved != 0 || st.unread != 20 || st.gone != 0)
		goto out;
	/* 105 faulted, 107 is another process under the same PID, 110 ended. */
	if (put_proc(root, 105, 11, 605, 16) < 0 || put_proc(root, 107, 0, 9999, 20) < 0)
		goto out;
	{
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/proc/110", root);
		rp_free_root(strdup(path));	/* rm -rf of the one process */
	}
	if (pm_live_refresh(l, 1) < 0)
		goto out;
	pm_live_stats(l, &st);
	if (st.rows != 20 || st.gone != 2 || st.read_moved != 2 || row_of(l, 110))	/* 110, and 107's first */
		goto out;
	/* 105's change is from its read two frames before, over the time between the two reads. */
	r = row_of(l, 105);
	if (!r || !r->read_now || r->is_new || r->acct.rss != 16384 || r->prev.rss != 8192 || !(r->interval > 0) ||
	    r->age != 0)
		goto out;
	r = row_of(l, 107);
	if (!r || !r->read_now || !r->is_new || r->acct.rss != 20480 || r->prev.rss != 20480 || r->interval != 0)
		goto out;
	ok = T_PASS;
out:
	pm_live_free(l);
	pm_ctx_free(ctx);
	rp_free_root(root);
	return ok;
}

/*
 * One walk of ROOT/proc for the process list and the live table: only the kernel's names are PIDs.
 * pm_procs took any run of digits ("0", "007" as 7, one past pid_t as a wrapped PID); the table
 * refused them. Both list 12 alone, and pm_proc_uid reads its status (ENOENT and EBADMSG otherwise).
 */
static int one_walk(void)
{
	static const char *odd[] = { "proc/0/stat", "proc/007/stat", "proc/99999999999/stat", "proc/+5/stat",
				     "proc/-3/stat", "proc/12x/stat" };
	char *root = rp_new_root();
	struct pm_ctx *ctx = NULL;
	struct pm_procs *it = NULL;
	struct pm_live *l = NULL;
	const struct pm_proc *p;
	size_t i, n = 0;
	uid_t uid = 0;
	int ok = T_FAIL;

	if (!root || put_proc(root, 12, 1, 5, 8) < 0 || rp_write_str(root, "proc/13/status", "Name:\tx\n") < 0)
		goto out;
	for (i = 0; i < sizeof(odd) / sizeof(odd[0]); i++)
		if (rp_write_stat(root, odd[i], 'S', 0) < 0)
			goto out;
	if (!(ctx = pm_ctx_new(root)) || !(it = pm_procs_open(ctx)))
		goto out;
	while (pm_procs_next(it, &p) == 0) {
		if (p->pid != 12 && p->pid != 13) {
			printf("  listed PID %d\n", (int)p->pid);
			goto out;
		}
		n++;
	}
	if (n != 2 || !(l = pm_live_new(ctx, 100)) || pm_live_refresh(l, 1) < 0 || pm_live_count(l) != 1 ||
	    pm_live_at(l, 0)->pid != 12)
		goto out;
	if (pm_proc_uid(ctx, 12, &uid) != 0 || uid != 1012 || pm_proc_uid(ctx, 14, &uid) != -ENOENT ||
	    pm_proc_uid(ctx, 13, &uid) != -EBADMSG || uid != 1012)
		goto out;
	ok = T_PASS;
out:
	return done(ok, l, it, ctx, root);
}

/* Process @pid's status now says UID @uid. */
static int put_uid(const char *root, int pid, int uid)
{
	char rel[64], buf[128];

	snprintf(rel, sizeof(rel), "proc/%d/status", pid);
	snprintf(buf, sizeof(buf), "Name:\tw\nUid:\t%d\t%d\t%d\t%d\n", uid, uid, uid, uid);
	return rp_write_str(root, rel, buf);
}

/*
 * A row read for its age alone reads its status too: a setuid can take less than a clock tick and no
 * fault, so an unmoved stat line proves nothing. Every row is read each frame here (the next frame is
 * past the bound). 12's status changes under an unmoved stat line: the aged read sees the new UID (a
 * table that read status only when the stat line moved kept 1012). 400 processes more grow the table's
 * scratch arrays.
 */
static int status_every_rollup(void)
{
	struct { char *root; struct pm_ctx *ctx; struct pm_live *l; } f = { rp_new_root(), NULL, NULL };
	const struct pm_live_row *r;
	struct pm_live_stats st;
	int pid, ok = T_FAIL;

	if (!f.root || put_proc(f.root, 12, 1, 5, 8) < 0 || !(f.ctx = pm_ctx_new(f.root)) ||
	    !(f.l = pm_live_new(f.ctx, 10)) || pm_live_refresh(f.l, 100) < 0 || put_uid(f.root, 12, 2012) < 0 ||
	    pm_live_refresh(f.l, 100) < 0)
		goto out;
	pm_live_stats(f.l, &st);
	if (!(r = row_of(f.l, 12)) || !r->read_now || st.read_aged != 1 || r->uid != 2012) {
		printf("  after an aged read: uid %d\n", r ? (int)r->uid : -1);
		goto out;
	}
	if (put_proc(f.root, 12, 2, 5, 8) < 0 || put_uid(f.root, 12, 3012) < 0 || pm_live_refresh(f.l, 100) < 0 ||
	    !(r = row_of(f.l, 12)) || r->uid != 3012)
		goto out;
	for (pid = 1000; pid < 1400; pid++)
		if (put_proc(f.root, pid, 1, 7, 4) < 0)
			goto out;
	if (pm_live_refresh(f.l, 100) < 0 || pm_live_count(f.l) != 401 || pm_live_at(f.l, 400)->pid != 1399 ||
	    pm_live_at(f.l, 400)->acct.rss != 4096 || pm_live_refresh(f.l, 100) < 0 || pm_live_count(f.l) != 401)
		goto out;
	pm_live_stats(f.l, &st);
	ok = st.read == 401 && st.read_aged == 401 ? T_PASS : T_FAIL;
out:
	return done(ok, f.l, NULL, f.ctx, f.root);
}

static bool even_pids(void *data, const struct pm_live_row *row)
{
	(*(int *)data)++;
	return row->pid % 2 == 0 && row->comm[0] == 'w' && row->uid_known;
}

/* A filter sees each row with its PID, UID and name before any rollup is read; rows it refuses are never read. */
static int filtered(void)
{
	char *root = rp_new_root();
	struct pm_ctx *ctx = NULL;
	struct pm_live *l = NULL;
	struct pm_live_stats st;
	int pid, calls = 0, ok = T_FAIL;

	if (!root)
		return T_FAIL;
	for (pid = 100; pid < 110; pid++)
		if (put_proc(root, pid, 10, 500 + pid, 8) < 0)
			goto out;
	if (!(ctx = pm_ctx_new(root)) || !(l = pm_live_new(ctx, 100)))
		goto out;
	pm_live_set_filter(l, even_pids, &calls);
	if (pm_live_refresh(l, 1) < 0)
		goto out;
	pm_live_stats(l, &st);
	if (calls != 10 || st.rows != 5 || st.read != 5 || pm_live_at(l, 0)->pid != 100 || pm_live_at(l, 4)->pid != 108)
		goto out;
	pm_live_set_filter(l, NULL, NULL);
	if (pm_live_refresh(l, 1) < 0)
		goto out;
	pm_live_stats(l, &st);
	ok = st.rows == 10 && st.read_moved == 5 && st.gone == 0 ? T_PASS : T_FAIL;
out:
	pm_live_free(l);
	pm_ctx_free(ctx);
	rp_free_root(root);
	return ok;
}

/* The table on this machine: a child of ours is a row, with smaps_rollup's figures; its end is a gone row. */
static int live_table(void)
{
	struct pm_ctx *ctx = pm_ctx_new("/");
	struct pm_live *l = NULL;
	struct pm_live_stats st;
	const struct pm_live_row *row = NULL;
	pid_t child = fork();
	size_t i;
	int ok = T_FAIL;

	if (child == 0) {
		pause();
		_exit(0);
	}
	if (!ctx || child < 0 || !(l = pm_live_new(ctx, 5)))
		goto out;
	if (pm_live_new(ctx, 0) != NULL || errno != EINVAL || pm_live_refresh(l, 1) < 0)
		goto out;
	for (i = 0; i < pm_live_count(l); i++)
		if (pm_live_at(l, i)->pid == child)
			row = pm_live_at(l, i);
	if (!row || !row->is_new || !row->read_now || row->err || row->state != PM_PROC_RUNNING || !row->acct.rss)
		goto out;
	pm_live_stats(l, &st);
	if (st.rows != pm_live_count(l) || st.read != st.read_moved + st.read_aged || st.interval != 0)
		goto out;
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	if (pm_live_refresh(l, 1) < 0)
		goto out;
	for (i = 0; i < pm_live_count(l); i++)
		if (pm_live_at(l, i)->pid == child)
			goto out;
	pm_live_stats(l, &st);
	ok = st.gone >= 1 && st.interval > 0 && st.oldest <= 5 ? T_PASS : T_FAIL;
out:
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	pm_live_free(l);
	pm_ctx_free(ctx);
	return ok;
}

T_MAIN(T(real_line), T(hostile_names), T(malformed), T(one_reader), T(moved), T(quota), T(round_robin_bound), T(bookkeeping), T(one_walk), T(status_every_rollup), T(filtered),
       T(live_table))
