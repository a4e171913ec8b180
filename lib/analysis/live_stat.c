/* live_stat.c - the pure parts of the live table: a stat line's fields, when to read a rollup again (live.h). */
#include <errno.h>
#include <string.h>
#include "live.h"

#define PF_KTHREAD_FLAG 0x00200000UL	/* include/linux/sched.h: PF_KTHREAD */

/* The next decimal field after @*p (one space before it) up to @end; false at the end or on a non-digit. */
static bool next_u64(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;

	if (s >= end || *s != ' ')
		return false;
	s++;
	if (s < end && *s == '-')	/* a signed field (priority, nice): its value is not used */
		s++;
	if (s >= end || *s < '0' || *s > '9')
		return false;
	for (; s < end && *s >= '0' && *s <= '9'; s++)
		x = x > (UINT64_MAX - 9) / 10 ? UINT64_MAX : x * 10 + (uint64_t)(*s - '0');
	*p = s;
	*v = x;
	return true;
}

int pmi_stat_line_parse(const char *buf, size_t len, struct pmi_stat_line *out, char *comm, size_t comm_size)
{
	const char *open = memchr(buf, '(', len), *close = NULL, *p, *end = buf + len;
	uint64_t f[22];
	size_t i, n;

	memset(out, 0, sizeof(*out));
	comm[0] = '\0';
	for (p = buf; p < end; p++)	/* the last ')': the fields after it hold none */
		if (*p == ')')
			close = p;
	if (!open || !close || close < open || end - close < 4 || close[1] != ' ')
		return -EINVAL;
	n = (size_t)(close - open - 1) < comm_size - 1 ? (size_t)(close - open - 1) : comm_size - 1;
	memcpy(comm, open + 1, n);
	comm[n] = '\0';
	out->state = close[2];
	if (!(out->state >= 'A' && out->state <= 'Z') && !(out->state >= 'a' && out->state <= 'z'))
		return -EINVAL;
	/* After state: ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime
	 * cutime cstime priority nice num_threads itrealvalue starttime vsize rss (proc(5)). */
	for (p = close + 3, i = 0; i < 21; i++)
		if (!next_u64(&p, end, &f[i]))
			return -EINVAL;
	out->kthread = (f[5] & PF_KTHREAD_FLAG) != 0;
	out->minflt = f[6];
	out->majflt = f[8];
	out->utime = f[10];
	out->stime = f[11];
	out->starttime = f[18];
	out->vsize = f[19];
	out->rss = f[20];
	return 0;
}

bool pmi_stat_line_moved(const struct pmi_stat_line *a, const struct pmi_stat_line *b)
{
	return a->state != b->state || a->minflt != b->minflt || a->majflt != b->majflt ||
	       a->utime != b->utime || a->stime != b->stime || a->vsize != b->vsize || a->rss != b->rss;
}

size_t pmi_live_quota(const double *ages, size_t n, double next, double max_age)
{
	size_t forced = 0, spread;
	double share;

	if (!n)
		return 0;
	if (!(max_age > 0) || !(next >= 0) || next >= max_age)
		return n;
	while (forced < n && ages[forced] + next > max_age)
		forced++;
	share = (double)n * next / max_age;	/* < n: next < max_age */
	spread = (size_t)share;
	if ((double)spread < share)
		spread++;
	return forced > spread ? forced : spread;
}
