/*
 * track.h - `pagemap track` in three files: the command (cmd_track.c), the report
 * of each interval (track_output.c), and the target as a process: spawned, waited
 * for, reaped (track_spawn.c).
 */
#ifndef PAGEMAP_CLI_TRACK_H
#define PAGEMAP_CLI_TRACK_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <pagemap.h>
#include "output.h"

/* One run of `pagemap track`: what its pieces read and update. */
struct track {
	struct pm_ctx *ctx;
	pid_t pid;
	struct pm_target *t;		/* for the maps */
	struct pm_watch *w;
	unsigned skipped;		/* writable mappings the back end refused */
	unsigned flags;			/* PM_WATCH_* for pm_watch_new */
	bool ranges, command;
	struct out_opts oo;
	struct out *out;		/* one record per interval */
	uint64_t psize;
	double max_overhead;		/* --max-overhead as a share (0: intervals as asked) */
	double fault_cost;		/* pm_watch_calibrate's, seconds (0: not measured) */
	int pidfd;			/* the target's pidfd, readable once it ended (-1: none, sleep in slices) */
};

/* When and how long: the interval as it was, as asked, and the next one (widened or not). */
struct span {
	double t, interval, asked;
	bool widened;		/* this interval was made longer than asked, by --max-overhead */
	double next;		/* the next interval */
};

/* The stop signal caught (SIGINT, SIGTERM, SIGHUP; 0: none): the loop ends, a command gets it. */
extern volatile sig_atomic_t track_stop_signal;

/* track_output.c */
/* The table every interval fills; NULL after a usage error for -o. */
struct out *track_new_table(const struct track *tr);
/* Print the interval @sp: its rows for the written ranges @r (@n of them) and its head. */
int track_print(struct track *tr, const struct span *sp, const struct pm_written *r, size_t n);

/* track_spawn.c */
double track_now(void);		/* CLOCK_MONOTONIC, seconds */
int track_open_pidfd(pid_t pid);
void track_sleep_until(struct track *tr, double when);
bool track_command_ended(pid_t pid);
pid_t track_spawn(char **argv, int *errp);
/* The command's status as time(1) gives it, stopped first if tracking failed or was stopped. */
int track_reap(struct track *tr, int code);

#endif
