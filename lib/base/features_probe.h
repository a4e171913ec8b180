/* features_probe.h - the by-effect probes of features_probe.c, run by features.c (inside libpagemap only). */
#ifndef PMI_FEATURES_PROBE_H
#define PMI_FEATURES_PROBE_H

#include "base.h"

/*
 * What the probes on our own process share: one /proc/self/pagemap and one
 * scratch mapping of fresh private anonymous pages, each probe on pages of
 * its own (zero page: 0-1, soft-dirty: 2, guard: 3). Made and unmade once:
 * a mapping and a munmap (a TLB flush) per probe showed in the cost of a
 * command on a small process (bench/README.md, "The fixed cost of a command").
 */
#define PROBE_SCRATCH_PAGES 4
struct pmi_probe_self {
	int fd;		/* our pagemap, or -1 */
	int err;	/* why fd is -1 */
	char *scratch;	/* PROBE_SCRATCH_PAGES pages, or NULL */
	size_t page_size;
};
void pmi_probe_self_open(struct pmi_probe_self *s, size_t page_size);
void pmi_probe_self_close(struct pmi_probe_self *s);

/* Probed on our own process when a live target's features are first asked for (pm_ctx_features). */
void pmi_probe_self_pagemap(struct pm_features *f, const struct pmi_probe_self *s);
void pmi_probe_huge_zero(struct pm_ctx *ctx, struct pm_features *f);
void pmi_probe_scan(struct pm_features *f, const struct pmi_probe_self *s);
void pmi_probe_soft_dirty(struct pm_features *f, const struct pmi_probe_self *s);
void pmi_probe_guard(struct pm_features *f, const struct pmi_probe_self *s);

/* Probed only when asked for (pm_ctx_probe): they open a uffd, fork, or allocate a huge page. */
void pmi_probe_uffd(struct pm_features *f);
void pmi_probe_soft_dirty_trip(struct pm_features *f);
enum pm_tristate pmi_probe_page_mapcount(struct pm_ctx *ctx, const struct pm_features *f);

#endif
