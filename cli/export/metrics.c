/* metrics.c - the Prometheus text format (0.0.4) and OpenMetrics 1.0 writer: HELP, TYPE, escaped labels. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "metrics.h"
#include "textsafe.h"

void mw_init(struct mw *w, enum mw_format format)
{
	memset(w, 0, sizeof(*w));
	w->format = format;
}

void mw_free(struct mw *w)
{
	free(w->buf);
	w->buf = NULL;
	w->len = w->cap = 0;
}

static void put(struct mw *w, const char *s, size_t n)
{
	size_t cap;
	char *p;

	if (w->oom)
		return;
	if (w->len + n + 1 > w->cap) {
		cap = w->cap ? w->cap : 4096;
		while (cap < w->len + n + 1)
			cap *= 2;
		if (!(p = realloc(w->buf, cap))) {
			w->oom = true;
			return;
		}
		w->buf = p;
		w->cap = cap;
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
	w->buf[w->len] = '\0';
}

static void puts_(struct mw *w, const char *s)
{
	put(w, s, strlen(s));
}

static void __attribute__((format(printf, 2, 3))) putf(struct mw *w, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		put(w, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

static void put_cb(void *ctx, const char *s, size_t n)
{
	put(ctx, s, n);
}

/*
 * Through cli/base/textsafe.c: a label value must be valid UTF-8 (Prometheus refuses the whole scrape
 * otherwise), and a group's name is whatever a process or a cgroup's owner chose.
 */
void mw_escape(struct mw *w, const char *s, bool quote)
{
	ts_escape(quote ? TS_PROM : TS_PROM_HELP, s, put_cb, w);
}

void mw_family(struct mw *w, const char *name, enum mw_type type, const char *unit, const char *help)
{
	/* The Prometheus format names a counter with its _total; OpenMetrics names the family without. */
	const char *sfx = type == MW_COUNTER && w->format == MW_PROMETHEUS ? "_total" : "";

	w->family = name;
	w->type = type;
	putf(w, "# HELP %s%s ", name, sfx);
	/* OpenMetrics escapes quotes in HELP too; the Prometheus format does not. */
	mw_escape(w, help, w->format == MW_OPENMETRICS);
	putf(w, "\n# TYPE %s%s %s\n", name, sfx, type == MW_COUNTER ? "counter" : "gauge");
	if (w->format == MW_OPENMETRICS && unit)
		putf(w, "# UNIT %s %s\n", name, unit);
}

static void sample_head(struct mw *w, const struct mw_label *labels, size_t n)
{
	size_t i;

	puts_(w, w->family);
	if (w->type == MW_COUNTER)
		puts_(w, "_total");
	for (i = 0; i < n; i++) {
		puts_(w, i ? "," : "{");
		puts_(w, labels[i].name);
		puts_(w, "=\"");
		mw_escape(w, labels[i].value, true);
		puts_(w, "\"");
	}
	puts_(w, n ? "} " : " ");
	w->series++;
}

void mw_sample(struct mw *w, const struct mw_label *labels, size_t n, double value)
{
	sample_head(w, labels, n);
	putf(w, "%.9g\n", value);
}

void mw_sample_u64(struct mw *w, const struct mw_label *labels, size_t n, uint64_t value)
{
	sample_head(w, labels, n);
	putf(w, "%llu\n", (unsigned long long)value);
}

void mw_finish(struct mw *w)
{
	if (w->format == MW_OPENMETRICS)
		puts_(w, "# EOF\n");
}

enum mw_format mw_negotiate(const char *accept)
{
	return accept && strcasestr(accept, "application/openmetrics-text") ? MW_OPENMETRICS : MW_PROMETHEUS;
}
