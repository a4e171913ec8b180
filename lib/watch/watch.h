/* watch.h - the write watch's handle and its back ends' interface (inside libpagemap only). */
#ifndef PMI_WATCH_H
#define PMI_WATCH_H

#include "pages.h"

/* A watched range, as pm_watch_add got it (page aligned). */
struct pmi_watch_range {
	uint64_t start, end;
};

/* One mapping of a batch's listing: what back ends need of it. */
struct pmi_watch_vma {
	uint64_t start, end;
	unsigned prot;			/* PM_PROT_*, PM_MAP_SHARED */
	bool special;			/* [vvar], [vsyscall]: never registered */
};

/*
 * pmi_watch_vmas_in (watch_vmas.c) - call @fn for each mapping of @w's process overlapping
 * [@start, @end): from the batch listing when there is one, else from one
 * read of its maps. Stops at the first non-zero return of @fn and returns it.
 */
int pmi_watch_vmas_in(struct pm_watch *w, uint64_t start, uint64_t end,
		     int (*fn)(struct pm_watch *w, const struct pmi_watch_vma *v, void *data), void *data);

/*
 * One back end: a row of watch.c's preference-ordered table, and everything
 * known of it, so that nothing outside its own file names it (the CLI and the
 * binding ask through pm_watch_method_*()).
 */
struct pmi_watch_ops {
	enum pm_watch_method method;
	const char *name;	/* pm_watch_method_name() */
	bool auto_pick;		/* PM_WATCH_AUTO may choose it (in the table's order) */
	bool takes_over;	/* may replace a chosen back end that failed to start */
	bool caller_only;	/* watches the caller only (PM_WATCH_METHOD_CALLER_ONLY) */
	bool traces_often;	/* ptraces another process at each reset (PM_WATCH_METHOD_TRACES) */
	const char *perturbs;	/* pm_watch_method_perturbs(): one sentence */
	const char *details;	/* pm_watch_method_details(): lines of at most 86 columns */
	/* Can it watch @pid (0: the caller) here? 0 or -errno, with words (starting "NAME: ") in @buf. */
	int (*usable)(struct pm_ctx *ctx, pid_t pid, char *buf, size_t size);
	bool atomic;	/* a reset never loses a write that races with it */
	/* Optional: atomic depends on the handle's state (overrides @atomic). */
	bool (*atomic_now)(const struct pm_watch *w);
	/*
	 * Optional, once from pm_watch_new: what needs the target's cooperation
	 * (a userfaultfd made inside it, a first snapshot), so that a failure shows
	 * at once, not per range. On failure the words go into @why.
	 */
	int (*start)(struct pm_watch *w, char *why, size_t size);
	/* Start watching [start, end) (already recorded in w->ranges): register, protect, arm. */
	int (*add)(struct pm_watch *w, const struct pmi_watch_range *r);
	/* Report written pages of every range through pmi_watch_emit; re-arm them if @reset. */
	int (*collect)(struct pm_watch *w, bool reset);
	/* Optional: a batch of adds is over (pm_watch_add_writable); what add deferred, do now. */
	int (*add_done)(struct pm_watch *w);
	/* Undo what add did; the handle is freed after. */
	void (*fini)(struct pm_watch *w);
	/*
	 * pm_watch_calibrate, in a throwaway child: arm [@p, @p + @len) as a watch
	 * would, so that the next write to each page takes this back end's tracking
	 * fault. Called once per round; *@state starts at -1 and is the back end's
	 * to keep between rounds (a descriptor, a process). 0, or -1.
	 */
	int (*cal_arm)(char *p, size_t len, int *state);
	/* Optional: the rounds are over; undo what cal_arm keeps in @state. */
	void (*cal_end)(int state);
};

/* A process's counts from /proc/PID/stat (all threads). */
struct pmi_proc_stat {
	uint64_t minflt;
	uint64_t cpu_ticks;	/* user + system, clock ticks */
};

/* watch_cost.c's state in the handle. */
struct pmi_watch_costing {
	double t_last;			/* CLOCK_MONOTONIC seconds: the last collect's start (or pm_watch_new) */
	struct pmi_proc_stat stat_last;
	bool stat_ok;
	double fault_cost;		/* pm_watch_calibrate's result, seconds (0: not calibrated) */
	double t_end;			/* CLOCK_MONOTONIC seconds: the last collect's end */
	double hold_now;		/* the longest hold the running collect reported */
	double hold_sum;		/* the holds of the running collect, summed */
	bool held;			/* the back end reported its holds (else the whole collect counts as one) */
	bool have;			/* last is set */
	bool watching;			/* a range was added: the first interval has started */
	double share;			/* last.overhead before it was capped at 1 */
	double planned;			/* pm_watch_next_interval's last answer (0: none yet) */
	struct pm_watch_cost last;
};

struct pm_watch {
	struct pm_ctx *ctx;
	pid_t pid;			/* 0: the caller */
	struct pm_target *t;		/* pagemap of the watched process (self too) */
	enum pm_watch_method method;
	const struct pmi_watch_ops *ops;
	unsigned flags;
	uint64_t psize;
	char reason[512];
	char notice[400];		/* pm_watch_notice(): set by the back end once it knows (empty: none) */

	struct pmi_watch_range *ranges;
	size_t nranges, cap_ranges;

	struct pm_written *out;		/* this collect's result, sorted and coalesced */
	size_t nout, cap_out;
	int out_err;			/* ENOMEM while emitting */

	struct pm_written *pending;	/* pmi_watch_keep: reported by the next collect */
	size_t npending, cap_pending;

	struct pm_watch_stats stats;
	struct pmi_watch_costing cost;
	void *priv;			/* the back end's state */

	/* pm_watch_add_writable: what is watched (sorted, merged), and the listing of the batch being added. */
	struct pmi_watch_range *covered;
	size_t ncovered, capcovered;
	const struct pmi_watch_vma *vmas;	/* non-NULL during a batch: back ends take mappings from it */
	size_t nvmas;
	size_t batch_first;			/* ranges[batch_first..] were added by the batch */
};

/* watch_result.c: the result collector every back end calls. */
/* Append a written range to this collect's result (coalesced when the collect ends). */
void pmi_watch_emit(struct pm_watch *w, uint64_t start, uint64_t end, bool huge);
/*
 * Keep a written range for the next collect (it reports and, with a reset, forgets it): for
 * writes a back end saw outside a collect, e.g. before re-arming older ranges in add().
 * ENOMEM is left in w->out_err, which pm_watch_add() turns into its result.
 */
void pmi_watch_keep(struct pm_watch *w, uint64_t start, uint64_t end, bool huge);
/* Sort this collect's result, merge overlaps (a huge report covering small ones stays huge), join neighbours. */
void pmi_watch_coalesce(struct pm_watch *w);

/* watch_cost.c: what the watch costs the process. */
double pmi_now(void);	/* CLOCK_MONOTONIC, seconds */
/* Parse a /proc/PID/stat line (NUL-terminated); 0 or -EINVAL. */
int pmi_proc_stat_parse(const char *buf, struct pmi_proc_stat *st);
/* The start of the first interval (pm_watch_new). */
void pmi_watch_cost_begin(struct pm_watch *w);
/* A back end held the process's page tables (or mm lock) for @seconds at once during this collect. */
void pmi_watch_hold(struct pm_watch *w, double seconds);
/* The collect that ran from @t0 to @t1 reported @pages pages written page by page: the estimate. */
void pmi_watch_cost_collect(struct pm_watch *w, double t0, double t1, uint64_t pages);
/* The same with the process's /proc/PID/stat given (NULL: unreadable): no I/O, for the model in the unit test. */
void pmi_watch_cost_account(struct pm_watch *w, double t0, double t1, uint64_t pages, const struct pmi_proc_stat *st);

#endif
