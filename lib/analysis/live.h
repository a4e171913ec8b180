/* live.h - the pure parts of the live process table (lib/analysis/live.c), unit-tested on their own (private). */
#ifndef PMI_LIVE_H
#define PMI_LIVE_H

#include "base.h"

/* The fields of /proc/PID/stat that say whether a process's memory may have changed, and who it is. */
struct pmi_stat_line {
	char state;			/* R, S, D, Z, T, ... */
	bool kthread;			/* PF_KTHREAD in flags: no memory of its own */
	uint64_t minflt, majflt;	/* faults: the resident set moved */
	uint64_t utime, stime;		/* clock ticks: it ran */
	uint64_t starttime;		/* clock ticks after boot: with the PID, one process (PIDs are reused) */
	uint64_t vsize;			/* bytes mapped: mappings came or went */
	uint64_t rss;			/* resident pages by the kernel's counters */
};

/*
 * pmi_stat_line_parse - the fields of one stat line (@len bytes, need not be
 * NUL-terminated); the command name (between the first '(' and the last ')',
 * so one that holds ") R 1 " is still one name) into @comm (@comm_size > 0,
 * truncated, NUL-terminated). Returns 0, or -EINVAL for a line without every
 * field up to rss. Pure.
 */
int pmi_stat_line_parse(const char *buf, size_t len, struct pmi_stat_line *out, char *comm, size_t comm_size);

/* Did the process of @a, read later as @b, fault, run, remap or change state? Pure. */
bool pmi_stat_line_moved(const struct pmi_stat_line *a, const struct pmi_stat_line *b);

/*
 * pmi_live_quota - how many of @n unmoved rows, whose ages in seconds are
 * @ages oldest first, to read again now: every one that would pass @max_age
 * before the refresh after (@next seconds away), and at least the share
 * (@n * @next / @max_age, rounded up) that spreads the reads evenly over the
 * bound instead of all at once. Pure.
 */
size_t pmi_live_quota(const double *ages, size_t n, double next, double max_age);

#endif
