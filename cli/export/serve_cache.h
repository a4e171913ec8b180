/* serve_cache.h - the scrape cache of `pagemap serve`: concurrent scrapes share one walk (see serve_cache.c). */
#ifndef PM_CLI_SERVE_CACHE_H
#define PM_CLI_SERVE_CACHE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "metrics.h"

/* One walk written in both formats: fills @w[MW_PROMETHEUS] and @w[MW_OPENMETRICS]. Returns 0 or -errno. */
typedef int (*scrape_walk_fn)(void *arg, struct mw w[2]);

struct scrape_cache {
	pthread_mutex_t lock;
	pthread_cond_t done;		/* a walk ended */
	scrape_walk_fn walk;
	void *arg;
	double max_age;			/* seconds a walk's result answers scrapes */
	char *body[2];			/* the last walk's expositions without OpenMetrics' "# EOF"; NULL: none */
	size_t len[2];
	int err;			/* the last walk's result */
	double taken;			/* CLOCK_MONOTONIC seconds at the last walk's end */
	uint64_t walks;			/* walks ended (the pagemap_scrape_walks counter) */
	bool running;			/* a walk is under way: callers wait for it */
};

void scrape_cache_init(struct scrape_cache *c, double max_age, scrape_walk_fn walk, void *arg);
void scrape_cache_free(struct scrape_cache *c);

/*
 * The exposition in @format for a scrape arriving now, in *@body (malloc'd,
 * the caller frees) and *@len: the cached walk when it is younger than
 * max_age, else the walk under way, else a new walk made by this caller.
 * @extra is appended before the end (OpenMetrics' "# EOF"): the caller's
 * own families (connection counters). Returns 0 or the walk's -errno.
 */
int scrape_cache_get(struct scrape_cache *c, enum mw_format format, void (*extra)(void *, struct mw *),
		     void *extra_arg, char **body, size_t *len);

#endif
