/*
 * serve_cache.c - the scrape cache of `pagemap serve`.
 *
 * A walk reads the pagemap of every process: on a busy host it takes
 * seconds of CPU. Without a cache each scrape made its own, so a thousand
 * clients asking at once (or two Prometheus servers of an HA pair) cost a
 * thousand walks in a row and pushed answers past Prometheus' 10 s scrape
 * timeout. Here the walks are single-flight: the first scrape to find no
 * fresh result walks, scrapes arriving meanwhile wait for that same walk,
 * and a result younger than max_age answers at once. Each answer says its
 * age (pagemap_scrape_age_seconds) and how many walks were made
 * (pagemap_scrape_walks_total), so a scraper can tell a reused result.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "export_fleet.h"
#include "serve_cache.h"

#define OM_EOF "# EOF\n"

void scrape_cache_init(struct scrape_cache *c, double max_age, scrape_walk_fn walk, void *arg)
{
	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->done, NULL);
	c->walk = walk;
	c->arg = arg;
	c->max_age = max_age;
}

void scrape_cache_free(struct scrape_cache *c)
{
	free(c->body[0]);
	free(c->body[1]);
	pthread_cond_destroy(&c->done);
	pthread_mutex_destroy(&c->lock);
}

/* Keep a finished walk's expositions. The OpenMetrics one loses its "# EOF": answers append families. */
static void store(struct scrape_cache *c, struct mw w[2], int err)
{
	int i;

	for (i = 0; i < 2; i++) {
		free(c->body[i]);
		c->body[i] = err ? NULL : w[i].buf;
		c->len[i] = err ? 0 : w[i].len;
		if (err)
			mw_free(&w[i]);
	}
	if (!err && c->len[MW_OPENMETRICS] >= strlen(OM_EOF) &&
	    !memcmp(c->body[MW_OPENMETRICS] + c->len[MW_OPENMETRICS] - strlen(OM_EOF), OM_EOF, strlen(OM_EOF)))
		c->len[MW_OPENMETRICS] -= strlen(OM_EOF);
	c->err = err;
	c->taken = fleet_now();
	c->walks++;
}

/* Walk with the lock dropped: one caller at a time gets here (c->running). */
static void walk_now(struct scrape_cache *c)
{
	struct mw w[2];
	int r;

	c->running = true;
	pthread_mutex_unlock(&c->lock);
	mw_init(&w[MW_PROMETHEUS], MW_PROMETHEUS);
	mw_init(&w[MW_OPENMETRICS], MW_OPENMETRICS);
	r = c->walk(c->arg, w);
	pthread_mutex_lock(&c->lock);
	store(c, w, r);
	c->running = false;
	pthread_cond_broadcast(&c->done);
}

/* The answer: the cached exposition, then this answer's age and the walks counter, then the end. Locked. */
static int answer(struct scrape_cache *c, enum mw_format format, void (*extra)(void *, struct mw *),
		  void *extra_arg, char **body, size_t *len)
{
	struct mw tail;
	char *b;

	if (c->err)
		return c->err;
	mw_init(&tail, format);
	mw_family(&tail, "pagemap_scrape_age_seconds", MW_GAUGE, "seconds",
		  "Age of the walk this answer comes from (scrapes close together share one walk)");
	mw_sample(&tail, NULL, 0, fleet_now() - c->taken);
	mw_family(&tail, "pagemap_scrape_walks", MW_COUNTER, NULL,
		  "Walks of the processes made to answer scrapes "
		  "(scrapes sharing a walk or its cached result make none)");
	mw_sample_u64(&tail, NULL, 0, c->walks);
	if (extra)
		extra(extra_arg, &tail);
	mw_finish(&tail);
	b = tail.oom ? NULL : malloc(c->len[format] + tail.len + 1);
	if (b) {
		memcpy(b, c->body[format], c->len[format]);
		memcpy(b + c->len[format], tail.buf, tail.len);
		*len = c->len[format] + tail.len;
		b[*len] = '\0';
	}
	mw_free(&tail);
	*body = b;
	return b ? 0 : -ENOMEM;
}

int scrape_cache_get(struct scrape_cache *c, enum mw_format format, void (*extra)(void *, struct mw *),
		     void *extra_arg, char **body, size_t *len)
{
	uint64_t seen;
	int r;

	pthread_mutex_lock(&c->lock);
	seen = c->walks;
	if (c->running) {
		/* Join the walk under way: it began at most one walk's time before this scrape. */
		while (c->running && c->walks == seen)
			pthread_cond_wait(&c->done, &c->lock);
	} else if (!c->walks || c->err || c->max_age <= 0 || fleet_now() - c->taken > c->max_age) {
		walk_now(c);
	}
	r = answer(c, format, extra, extra_arg, body, len);
	pthread_mutex_unlock(&c->lock);
	return r;
}
