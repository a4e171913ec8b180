/*
 * stat_line.c - the one reader of a /proc/PID/stat line (proc(5)), for the process list, a target's
 * state, the live table and the tool. The command name is anyone's bytes (parentheses, spaces, a
 * newline, a fake field list): it ends at the LAST ')', and a line that lacks any field up to rss is
 * refused rather than read as another process's figures.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include "base.h"

#define PF_KTHREAD_FLAG 0x00200000UL	/* include/linux/sched.h: PF_KTHREAD */
#define STAT_FIELDS 21			/* after state: ppid ... rss */
#define STAT_CPU_AT 14			/* after rss: rsslim ... exit_signal, then processor (field 39) */
/* Of them, those the kernel prints signed (%d, %ld): ppid to tpgid, cutime to itrealvalue. */
#define STAT_SIGNED (0x1fUL | 0x3fUL << 12)

/*
 * The next decimal field after @*p (exactly one space before it; a '-' only where @sign) up to @end;
 * false at the end or on anything else. A value past 64 bits saturates rather than wraps into a small one.
 */
static bool next_field(const char **p, const char *end, bool sign, bool *neg, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;

	if (s >= end || *s != ' ')
		return false;
	s++;
	*neg = sign && s < end && *s == '-';
	s += *neg;
	if (s >= end || *s < '0' || *s > '9')
		return false;
	for (; s < end && *s >= '0' && *s <= '9'; s++)
		x = x > (UINT64_MAX - 9) / 10 ? UINT64_MAX : x * 10 + (uint64_t)(*s - '0');
	*p = s;
	*v = x;
	return true;
}

/* An int field (a PID, a terminal): clamped, so a hostile huge one is never taken for a small one. */
static int int_of(bool neg, uint64_t v)
{
	if (neg)
		return v > (uint64_t)INT_MAX + 1 ? INT_MIN : (int)-(int64_t)v;
	return v > INT_MAX ? INT_MAX : (int)v;
}

/* Is @buf "PID (" up to the first '(': the kernel's "%d (" and nothing else before the name? */
static const char *name_open(const char *buf, const char *end)
{
	const char *p = buf;

	while (p < end && *p >= '0' && *p <= '9')
		p++;
	return p > buf && end - p >= 2 && p[0] == ' ' && p[1] == '(' ? p + 1 : NULL;
}

static void take_fields(const uint64_t *f, const bool *neg, struct pm_proc_stat *out)
{
	out->ppid = int_of(neg[0], f[0]);
	out->pgrp = int_of(neg[1], f[1]);
	out->session = int_of(neg[2], f[2]);
	out->tty_nr = int_of(neg[3], f[3]);
	out->tpgid = int_of(neg[4], f[4]);
	out->kthread = (f[5] & PF_KTHREAD_FLAG) != 0;
	out->minflt = f[6];
	out->majflt = f[8];
	out->utime = f[10];
	out->stime = f[11];
	out->starttime = f[18];
	out->vsize = f[19];
	out->rss = f[20];
}

int pmi_stat_line_parse(const char *buf, size_t len, struct pm_proc_stat *out, char *comm, size_t comm_size)
{
	const char *end = buf + len, *open = name_open(buf, end), *close = NULL, *p;
	uint64_t f[STAT_FIELDS];
	bool neg[STAT_FIELDS];
	size_t i, n;

	memset(out, 0, sizeof(*out));
	if (comm && comm_size)
		comm[0] = '\0';
	for (p = open ? open + 1 : end; p < end; p++)	/* the last ')': the fields after it hold none */
		if (*p == ')')
			close = p;
	if (!close || end - close < 4 || close[1] != ' ')
		return -EINVAL;
	if (!(close[2] >= 'A' && close[2] <= 'Z') && !(close[2] >= 'a' && close[2] <= 'z'))
		return -EINVAL;
	/* After state: ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime
	 * cutime cstime priority nice num_threads itrealvalue starttime vsize rss (proc(5)). */
	for (p = close + 3, i = 0; i < STAT_FIELDS; i++)
		if (!next_field(&p, end, STAT_SIGNED >> i & 1, &neg[i], &f[i]))
			return -EINVAL;
	if (p < end && *p != ' ' && *p != '\n')	/* rss runs on into something else */
		return -EINVAL;
	out->state = close[2];
	take_fields(f, neg, out);
	/* The CPU it last ran on, when the line goes that far (fields after rss are optional here). */
	out->processor = -1;
	for (i = 0; i <= STAT_CPU_AT && next_field(&p, end, i >= STAT_CPU_AT - 1, &neg[0], &f[0]); i++)
		if (i == STAT_CPU_AT)
			out->processor = int_of(neg[0], f[0]);
	if (comm && comm_size) {
		n = (size_t)(close - open - 1) < comm_size - 1 ? (size_t)(close - open - 1) : comm_size - 1;
		memcpy(comm, open + 1, n);
		comm[n] = '\0';
	}
	return 0;
}

int pm_proc_stat_parse(const char *buf, size_t len, struct pm_proc_stat *out, char *comm, size_t comm_size)
{
	return pmi_stat_line_parse(buf, len, out, comm, comm_size);
}

enum pm_proc_state pmi_stat_state(const struct pm_proc_stat *st)
{
	if (st->kthread)
		return PM_PROC_KTHREAD;
	return st->state == 'Z' || st->state == 'X' ? PM_PROC_ZOMBIE : PM_PROC_RUNNING;
}
