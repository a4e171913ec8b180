/* wss_result.c - below the working-set front and its methods: the result records, the clock, the reason text. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "pages.h"
#include "wss.h"

uint64_t pmi_wss_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void pmi_wss_say(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (!size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}

/* A new record for mapping @m (its path copied). */
int pmi_wss_add_mapping(struct pm_wss *w, const struct pm_mapping *m)
{
	struct pm_wss_mapping *rec;
	char *path;

	if (w->nmaps == w->maps_cap) {
		size_t cap = w->maps_cap ? w->maps_cap * 2 : 64;
		struct pm_wss_mapping *p = realloc(w->maps, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		w->maps = p;
		w->maps_cap = cap;
	}
	path = strndup(m->path_len ? m->path : "", m->path_len);
	if (!path)
		return -ENOMEM;
	rec = &w->maps[w->nmaps++];
	memset(rec, 0, sizeof(*rec));
	rec->start = m->start;
	rec->end = m->end;
	memcpy(rec->perms, m->perms, sizeof(rec->perms));
	rec->kind = m->kind;
	rec->path = path;
	return 0;
}
