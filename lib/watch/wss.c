/* wss.c - working-set size over a window: the front, one table of methods in preference order (wss_idle.c, wss_referenced.c). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "pages.h"
#include "wss.h"

/* AUTO tries these in order; a caller may name one. */
static const struct pmi_wss_backend *const backends[] = { &pmi_wss_backend_idle, &pmi_wss_backend_referenced };
#define NBACKENDS (sizeof(backends) / sizeof(backends[0]))

const char *pm_wss_method_name(enum pm_wss_method method)
{
	size_t i;

	if (method == PM_WSS_AUTO)
		return "auto";
	for (i = 0; i < NBACKENDS; i++)
		if (backends[i]->method == method)
			return backends[i]->name;
	return "unknown";
}

static void close_files(struct pmi_wss_files *f)
{
	if (f->bitmap >= 0)
		close(f->bitmap);
	if (f->clear >= 0)
		close(f->clear);
	pm_kpage_close(f->kpage);
	*f = (struct pmi_wss_files){ .bitmap = -1, .clear = -1 };
}

/* Can the target be measured at all: a live process with memory? 0 or -errno with the words in @buf. */
static int measurable(struct pm_target *t, enum pm_wss_method m, char *buf, size_t size)
{
	uint64_t e;
	ssize_t n;

	if (m != PM_WSS_AUTO && m != PM_WSS_IDLE && m != PM_WSS_REFERENCED) {
		pmi_wss_say(buf, size, "unknown method %d", (int)m);
		return -EINVAL;
	}
	if (!t->ctx->live) {
		pmi_wss_say(buf, size, "a window needs a live process, not a replayed root");
		return -EOPNOTSUPP;
	}
	n = pm_target_read(t, 0, &e, 1);
	if (n < 0) {
		pmi_wss_say(buf, size, "the target has no memory: %s", pmi_strerror((int)-n));
		return (int)n;
	}
	return 0;
}

/*
 * Decide the method and open its files: the caller's, or under AUTO the
 * first usable in the table, each told why the ones before it were not.
 */
static int choose(struct pm_target *t, enum pm_wss_method *m, struct pmi_wss_files *f,
		  const struct pmi_wss_backend **be, char *buf, size_t size)
{
	char why[256], before[320] = "";
	size_t i;
	int r = measurable(t, *m, buf, size);

	*f = (struct pmi_wss_files){ .bitmap = -1, .clear = -1 };
	for (i = 0; r == 0 && i < NBACKENDS; i++) {
		if (*m != PM_WSS_AUTO && *m != backends[i]->method)
			continue;
		r = backends[i]->open(t, f, why, sizeof(why), *m == PM_WSS_AUTO && *before ? before : NULL);
		if (r == 0) {
			pmi_wss_say(buf, size, "%s", why);
			*m = backends[i]->method;
			*be = backends[i];
			return 0;
		}
		close_files(f);
		snprintf(before, sizeof(before), "%s%s", backends[i]->unavailable, why);
		pmi_wss_say(buf, size, "%s", before);
		if (*m == PM_WSS_AUTO && i + 1 < NBACKENDS)
			r = 0;	/* try the next */
	}
	return r;
}

int pm_wss_explain(struct pm_target *t, enum pm_wss_method method, char *buf, size_t size)
{
	const struct pmi_wss_backend *be;
	struct pmi_wss_files f;
	int r = choose(t, &method, &f, &be, buf, size);

	close_files(&f);
	return r;
}

struct pm_wss *pm_wss_new(struct pm_target *t, enum pm_wss_method method)
{
	struct pm_wss *w = calloc(1, sizeof(*w));
	const struct pm_features *f;
	int r;

	if (!w)
		return NULL;
	f = pm_ctx_features(t->ctx);
	r = f ? choose(t, &method, &w->f, &w->be, w->reason, sizeof(w->reason)) : -ENOMEM;
	if (r < 0) {
		free(w);
		errno = -r;
		return NULL;
	}
	w->t = t;
	w->method = method;
	w->psize = f->page_size;
	w->pmd_pages = f->pmd_size / f->page_size;
	return w;
}

static void drop_results(struct pm_wss *w)
{
	size_t i;

	for (i = 0; i < w->nmaps; i++)
		free((char *)w->maps[i].path);
	w->nmaps = w->next = 0;
	w->stopped = false;
	memset(&w->sum, 0, sizeof(w->sum));
}

void pm_wss_free(struct pm_wss *w)
{
	if (!w)
		return;
	drop_results(w);
	if (w->be->release)
		w->be->release(w);
	close_files(&w->f);
	free(w->maps);
	free(w);
}

enum pm_wss_method pm_wss_method(const struct pm_wss *w)
{
	return w->method;
}

const char *pm_wss_reason(const struct pm_wss *w)
{
	return w->reason;
}

/*
 * The kernel takes clear_refs from a process without memory and does
 * nothing, a zombie's smaps reads empty, a reaped one's is gone (ENOENT):
 * ask the target's pagemap fd, tied to its mm, and turn @r into -ESRCH.
 */
static int target_check(struct pm_wss *w, int r)
{
	uint64_t e;
	ssize_t n = pm_target_read(w->t, 0, &e, 1);

	if (n == -ESRCH || (r == 0 && n < 0))
		return n < 0 ? (int)n : r;
	return r;
}

int pm_wss_start(struct pm_wss *w)
{
	int r;

	drop_results(w);
	w->started = false;
	r = target_check(w, w->be->start(w));
	w->started = r == 0;
	return r;
}

/* ---- results ---------------------------------------------------------------- */

static void summarize(struct pm_wss *w, uint64_t read_start, uint64_t read_end)
{
	size_t i;

	w->sum.method = w->method;
	w->sum.window_ns = read_start > w->reset_end ? read_start - w->reset_end : 0;
	w->sum.window_max_ns = read_end - w->reset_start;
	w->sum.mappings = w->nmaps;
	for (i = 0; i < w->nmaps; i++) {
		w->sum.resident += w->maps[i].resident;
		w->sum.accessed += w->maps[i].accessed;
		w->sum.untracked += w->maps[i].untracked;
	}
}

int pm_wss_stop(struct pm_wss *w, struct pm_wss_summary *out)
{
	uint64_t read_start = 0, read_end = 0;
	int r;

	if (out)
		memset(out, 0, sizeof(*out));
	if (!w->started)
		return -EINVAL;
	drop_results(w);
	r = w->be->stop(w, &read_start, &read_end);
	/* An exited target reads as an empty smaps or frees its frames (idle 0): never report that. */
	r = target_check(w, r);
	if (r < 0) {
		drop_results(w);
		return r;
	}
	summarize(w, read_start, read_end);
	w->stopped = true;
	if (out)
		*out = w->sum;
	return 0;
}

int pm_wss_next(struct pm_wss *w, const struct pm_wss_mapping **out)
{
	if (!w->stopped)
		return -EINVAL;
	if (w->next >= w->nmaps)
		return 1;
	*out = &w->maps[w->next++];
	return 0;
}
