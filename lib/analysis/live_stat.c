/* live_stat.c - the pure parts of the live table: when to read a rollup again (live.h). */
#include "live.h"

bool pmi_stat_line_moved(const struct pm_proc_stat *a, const struct pm_proc_stat *b)
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
