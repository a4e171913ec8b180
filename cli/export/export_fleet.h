/* export_fleet.h - what `pagemap export` and `serve` share: options, one scrape, the slow exact pass. */
#ifndef PM_CLI_FLEET_H
#define PM_CLI_FLEET_H

#include <pagemap.h>
#include <stdbool.h>
#include "metrics.h"

/* BY_MAPPING is ps's alone: a mapping is no process's group (fleet_group_key does not take it). */
enum fleet_by { BY_CGROUP = 0, BY_USER, BY_COMM, BY_PID, BY_RULES, BY_MAPPING };

#define FLEET_MAX_SERIES 1000
#define FLEET_MAX_RULES 256

/* A rule of a --rules file: processes whose command name matches @pattern (fnmatch) join group @name. */
struct fleet_rule {
	char *name, *pattern;
};

struct fleet_opts {
	enum fleet_by by;
	struct fleet_rule *rules;
	size_t nrules;
	size_t max_series;	/* hard cap on the samples of one exposition */
	size_t top;		/* at most this many groups besides "other"; 0: as many as the cap allows */
	double budget;		/* seconds for the per-process walks of one scrape; 0: none */
	enum mw_format format;
	/*
	 * A user's group key, as the command's USER cells say it (ps and export: cli_user_label, a replayed
	 * snapshot's recorded names and a cache); NULL: this machine's passwd when live, else the number. A
	 * function, not a call: this file is compiled into unit tests without cli/base, and serve's threads
	 * keep NULL (the cache is one thread's).
	 */
	const char *(*user_key)(struct pm_ctx *ctx, uid_t uid, char *buf, size_t size);
};

/* The slow tier's last result: exact PSS per group and frame classes, and when it was taken. */
struct fleet_exact {
	struct pm_groups *groups;	/* NULL before the first pass */
	bool have_classes;
	bool have_xshared;		/* groups' xshared filled (root: frame numbers visible) */
	struct pm_classes classes;
	bool have_free;			/* free_bytes read, free pages out of buddy and other */
	uint64_t free_bytes;		/* MemFree (pm_classes_free) */
	double taken;			/* CLOCK_MONOTONIC seconds at its end */
	double duration;		/* seconds it took */
	uint64_t skipped_gone, skipped_perm;
};

/* What lives from one scrape to the next (serve): counters. */
struct fleet_state {
	uint64_t series_dropped;	/* total, over every scrape */
	uint64_t scrapes;
};

/* Parse a --group-by value. Returns 0 or -EINVAL. */
int fleet_parse_by(const char *s, enum fleet_by *by);
/*
 * The group of @p by @o->by, into @key: its memory cgroup, its user's name (@o->user_key's; without
 * it, a UID number in a replayed tree, which came from another machine's passwd), its
 * command name, its PID or its --rules group; "unknown" when the figure is
 * not known. The one place a process's group is told, for export and ps.
 */
void fleet_group_key(struct pm_ctx *ctx, const struct fleet_opts *o, const struct pm_proc *p, char *key,
		     size_t size);
/*
 * Parse a rules file: "GROUP PATTERN" per line, '#' comments and blank
 * lines ignored; GROUP is printable without spaces (1..127 bytes), PATTERN a
 * glob on the command name. Returns 0, or -errno with a message in @err.
 */
int fleet_rules_load(const char *path, struct fleet_opts *o, char *err, size_t errsize);
/* Parse rules from a buffer (what fleet_rules_load reads; pure, for tests). */
int fleet_rules_parse(const char *text, struct fleet_opts *o, char *err, size_t errsize);
void fleet_rules_free(struct fleet_opts *o);

/* The slow tier: exact PSS per group (pagemap + kpagecount; smaps_rollup without root) and frame classes. */
int fleet_exact_pass(struct pm_ctx *ctx, const struct fleet_opts *o, struct fleet_exact *out);
void fleet_exact_free(struct fleet_exact *e);

/*
 * One scrape into @w: the cheap tier per group (walks now), @ex's exact
 * figures with their age when given, self-telemetry. Returns 0 or -errno
 * (ENOMEM, or the error listing ROOT/proc).
 */
int fleet_scrape(struct pm_ctx *ctx, const struct fleet_opts *o, struct fleet_state *st,
		 const struct fleet_exact *ex, struct mw *w);

/* Same, one walk written to each of the @nw writers @w[] (serve: both formats from one walk). */
int fleet_scrape_n(struct pm_ctx *ctx, const struct fleet_opts *o, struct fleet_state *st,
		   const struct fleet_exact *ex, struct mw *w, size_t nw);

double fleet_now(void);
/* Check the options that go together, load --rules. Returns -1 to go on, or an exit code after a message. */
int fleet_check_opts(struct fleet_opts *o, const char *rules);

#endif
