/* wss.h - the working-set front (wss.c) and its methods as rows: wss_idle.c, wss_referenced.c (internal). */
#ifndef PMI_WSS_H
#define PMI_WSS_H

#include <stdbool.h>
#include <stdint.h>
#include "pages.h"
#include "sparse.h"

#define NO_HEAD		UINT64_MAX

/* The files a method opened; -1 / NULL where it needs none. */
struct pmi_wss_files {
	int bitmap, clear;
	struct pm_kpage *kpage;
};

/* IDLE: a run of present pages at the start, frames pfn, pfn + 1, ... */
struct snap_run {
	uint64_t va, pfn, n;
};

struct pmi_wss_backend;

struct pm_wss {
	struct pm_target *t;
	enum pm_wss_method method;
	const struct pmi_wss_backend *be;
	char reason[256];
	struct pmi_wss_files f;
	uint64_t psize, pmd_pages;

	bool started, stopped;
	uint64_t reset_start, reset_end;

	/* IDLE, from pm_wss_start: the frames seen and the folio heads marked idle. */
	struct snap_run *snap;
	size_t nsnap, snap_cap;
	uint64_t *pfns, *pfn_head;	/* sorted unique frames; head of each, NO_HEAD if untracked */
	size_t npfns;
	uint64_t *heads;		/* sorted unique heads marked idle */
	uint8_t *idle;			/* per head, read by pm_wss_stop */
	size_t nheads;
	struct pmi_sparse io;		/* on the bitmap; buf: its words per call */

	struct pm_wss_mapping *maps;	/* results of the last stop; paths owned */
	size_t nmaps, maps_cap, next;
	struct pm_wss_summary sum;
};

/*
 * One method, a row of the front's preference-ordered table. @open decides
 * whether it is usable for @t and opens its files, saying why in @buf either
 * way (@why_not_before: why the methods before it were not, NULL if the
 * caller chose this one); @start opens the window, @stop reads it back into
 * per-mapping records (pmi_wss_add_mapping) between *@read_start and *@read_end;
 * @release frees the method's own state.
 */
struct pmi_wss_backend {
	enum pm_wss_method method;
	const char *name;
	const char *unavailable;	/* prefix of the reason it cannot be used */
	int (*open)(struct pm_target *t, struct pmi_wss_files *f, char *buf, size_t size, const char *why_not_before);
	int (*start)(struct pm_wss *w);
	int (*stop)(struct pm_wss *w, uint64_t *read_start, uint64_t *read_end);
	void (*release)(struct pm_wss *w);
};

extern const struct pmi_wss_backend pmi_wss_backend_idle, pmi_wss_backend_referenced;

/* wss_result.c: for the front and the methods */
uint64_t pmi_wss_now_ns(void);
void pmi_wss_say(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int pmi_wss_add_mapping(struct pm_wss *w, const struct pm_mapping *m);

#endif
