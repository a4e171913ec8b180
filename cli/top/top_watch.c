/*
 * top_watch.c - the process level's pages written per frame, through the library's write watch,
 * only when the user asks: the first w says what watching does to the process (the back end's own
 * words, as track's notice gives them), the second starts it, a third stops it; leaving the
 * process, or top, stops it too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "top_screen.h"

/* The back end AUTO would take for @pid: the first one this kernel and privilege level allow. */
static enum pm_watch_method method_for(struct pm_ctx *ctx, pid_t pid)
{
	static const enum pm_watch_method order[] = { PM_WATCH_UFFD, PM_WATCH_SOFTDIRTY };
	char why[256];
	size_t i;

	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (pm_watch_explain(ctx, pid, order[i], why, sizeof(why)) == 0)
			return order[i];
	return PM_WATCH_AUTO;
}

void top_watch_stop(struct top_view *v)
{
	pm_watch_free(v->watch);
	v->watch = NULL;
	v->watch_asked = false;
	free(v->written);
	v->written = NULL;
	v->nwritten = 0;
}

/* w: ask, start or stop. */
void top_watch_key(struct top_view *v)
{
	enum pm_watch_method m = method_for(v->ctx, v->proc.pid);
	struct pm_watch_batch b = { 0 };

	if (v->watch) {
		top_watch_stop(v);
		snprintf(v->message, sizeof(v->message), "writes no longer watched");
		return;
	}
	if (m == PM_WATCH_AUTO) {
		char why[256];

		pm_watch_explain(v->ctx, v->proc.pid, PM_WATCH_UFFD, why, sizeof(why));
		snprintf(v->message, sizeof(v->message), "cannot watch writes: %s", why);
		return;
	}
	if (!v->watch_asked) {	/* say first what it does to the process */
		snprintf(v->message, sizeof(v->message), "w again: watch writes by %s: %s", pm_watch_method_name(m),
			 pm_watch_method_perturbs(m));
		v->watch_asked = true;
		return;
	}
	v->watch = pm_watch_new(v->ctx, v->proc.pid, m, 0);
	if (!v->watch || pm_watch_add_writable(v->watch, 0, &b) < 0) {
		snprintf(v->message, sizeof(v->message), "cannot watch writes: %s", strerror(errno));
		top_watch_stop(v);
		return;
	}
	snprintf(v->message, sizeof(v->message), "watching writes by %s (w stops)", pm_watch_method_name(m));
}

/* Sum @v->written over each mapping (both sorted by address). */
static void per_mapping(struct top_view *v)
{
	struct top_proc *p = &v->proc;
	size_t i, j = 0;

	for (i = 0; i < p->n; i++) {
		struct top_mapping *m = &p->v[i];

		m->written = 0;
		while (j < v->nwritten && v->written[j].end <= m->start)
			j++;
		for (size_t k = j; k < v->nwritten && v->written[k].start < m->end; k++) {
			uint64_t s = v->written[k].start > m->start ? v->written[k].start : m->start;
			uint64_t e = v->written[k].end < m->end ? v->written[k].end : m->end;

			m->written += e > s ? e - s : 0;
		}
	}
}

/* This frame's written pages (the watch re-armed), new mappings watched from now on. */
int top_watch_collect(struct top_view *v)
{
	const struct pm_written *w;
	size_t n;
	int r;

	if (!v->watch)
		return 0;
	if ((r = pm_watch_collect(v->watch, PM_WATCH_RESET, &w, &n)) < 0) {
		snprintf(v->message, sizeof(v->message), "watching writes stopped: %s", strerror(-r));
		top_watch_stop(v);
		return r;
	}
	free(v->written);
	v->written = n ? malloc(n * sizeof(*w)) : NULL;
	v->nwritten = v->written ? n : 0;
	if (v->written)
		memcpy(v->written, w, n * sizeof(*w));
	pm_watch_add_writable(v->watch, PM_WATCH_POPULATED, NULL);
	per_mapping(v);
	return 0;
}
