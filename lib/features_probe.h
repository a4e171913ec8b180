/* features_probe.h - the by-effect probes of features_probe.c, run by features.c (inside libpagemap only). */
#ifndef PM_FEATURES_PROBE_H
#define PM_FEATURES_PROBE_H

#include "internal.h"

/* Probed on our own process when a live target's features are first asked for (pm_ctx_features). */
void pmi_probe_self_pagemap(struct pm_features *f);
void pmi_probe_huge_zero(struct pm_ctx *ctx, struct pm_features *f);
void pmi_probe_scan(struct pm_features *f);
void pmi_probe_soft_dirty(struct pm_features *f);
void pmi_probe_guard(struct pm_features *f);

/* Probed only when asked for (pm_ctx_probe): they open a uffd, fork, or allocate a huge page. */
void pmi_probe_uffd(struct pm_features *f);
void pmi_probe_soft_dirty_trip(struct pm_features *f);
enum pm_tristate pmi_probe_page_mapcount(struct pm_ctx *ctx, const struct pm_features *f);

#endif
