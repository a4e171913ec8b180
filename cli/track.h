/*
 * track.h - `pagemap track` in four files: the command (cmd_track.c), the report
 * of each interval (track_output.c), the target as a process: spawned, waited
 * for, reaped (track_spawn.c), and held at its exit (track_hold.c).
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
	bool no_hold;			/* --no-hold: a command is not traced to be held at its exit */
	struct out_opts oo;
	struct out *out;		/* one record per interval */
	uint64_t psize;
	double max_overhead;		/* --max-overhead as a share (0: intervals as asked) */
	double fault_cost;		/* pm_watch_calibrate's, seconds (0: not measured) */
	int pidfd;			/* the target's pidfd, readable once it ended (-1: none, sleep in slices) */
	int sigfd;			/* SIGCHLD, while a command is held (-1: none) */
	bool held;			/* the command is traced, to stop at its exit (track_hold.c) */
	bool held_once;			/* ... and it was said on stderr */
	bool noticed;			/* pm_watch_notice() was said on stderr (once a run) */
	bool at_exit;			/* ... and it is stopped there: its memory is still whole */
	const char *unheld;		/* why a last interval could not be collected */
	char unheld_buf[192];
	double collect_cpu;		/* track's own CPU time in the last collect, seconds */
	double prev_collect;		/* the collect before this interval, wall seconds (0: none) */
};

/* When and how long: the interval as it was, as asked, as planned, and the next one (widened or not). */
struct span {
	double t, interval, asked;
	double planned;		/* what it was to be: asked, or wider by --max-overhead */
	bool widened;		/* planned wider than asked, by --max-overhead */
	bool partial;		/* the last: the process ended before it was due */
	const char *lost;	/* not collected, and why (NULL: collected) */
	double next;		/* the next interval */
};

/* The stop signal caught (SIGINT, SIGTERM, SIGHUP; 0: none): the loop ends, a command gets it. */
extern volatile sig_atomic_t track_stop_signal;

/* track_output.c */
/* The table every interval fills; NULL after a usage error for -o. */
struct out *track_new_table(const struct track *tr);
/* Print the interval @sp: its rows for the written ranges @r (@n of them) and its head. */
int track_print(struct track *tr, const struct span *sp, const struct pm_written *r, size_t n);

/* track_hold.c */
/* Hold a command at its exit (else tr->unheld says why not). */
void track_hold_start(struct track *tr);
/* Serve the held command's stops (SIGCHLD came); true when it is stopped at its exit. */
bool track_hold_serve(struct track *tr);
/* Let the held command go (from its exit stop, or before a new watch injects into it). */
void track_hold_release(struct track *tr);

/* track_spawn.c */
double track_now(void);		/* CLOCK_MONOTONIC, seconds */
int track_open_pidfd(pid_t pid);
void track_sleep_until(struct track *tr, double when);
bool track_command_ended(pid_t pid);
pid_t track_spawn(char **argv, int *errp);
/* The command's status as time(1) gives it, stopped first if tracking failed or was stopped. */
int track_reap(struct track *tr, int code);

#endif
