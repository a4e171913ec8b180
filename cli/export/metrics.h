/* metrics.h - the Prometheus text and OpenMetrics exposition writer, into a growable buffer. */
#ifndef PM_CLI_METRICS_H
#define PM_CLI_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum mw_format { MW_PROMETHEUS = 0, MW_OPENMETRICS };
enum mw_type { MW_GAUGE = 0, MW_COUNTER };

/* HTTP Content-Type of each format. */
#define MW_CT_PROMETHEUS "text/plain; version=0.0.4; charset=utf-8"
#define MW_CT_OPENMETRICS "application/openmetrics-text; version=1.0.0; charset=utf-8"

struct mw {
	enum mw_format format;
	char *buf;
	size_t len, cap;
	bool oom;		/* an append failed: the buffer is incomplete */
	size_t series;		/* samples written */
	enum mw_type type;	/* of the current family */
	const char *family;	/* the current family's name (borrowed) */
};

/* One label: name (a valid label name, not escaped) and value (escaped here). */
struct mw_label {
	const char *name, *value;
};

void mw_init(struct mw *w, enum mw_format format);
void mw_free(struct mw *w);
/*
 * Start a family: # HELP, # TYPE (and # UNIT for OpenMetrics when @unit).
 * @name has no _total: counters get it on their samples.
 */
void mw_family(struct mw *w, const char *name, enum mw_type type, const char *unit, const char *help);
/* One sample of the current family with @n labels. */
void mw_sample(struct mw *w, const struct mw_label *labels, size_t n, double value);
/* Same, an integer value printed exactly. */
void mw_sample_u64(struct mw *w, const struct mw_label *labels, size_t n, uint64_t value);
/* End the exposition (OpenMetrics: # EOF). */
void mw_finish(struct mw *w);
/*
 * Append @s as valid UTF-8 (bytes that are not: \xHH text, cli/base/textsafe.h) with \\, \" and \n escaped
 * (label values; HELP text escapes no quote). Exposed for tests.
 */
void mw_escape(struct mw *w, const char *s, bool quote);
/* The format an HTTP Accept header asks for: OpenMetrics only when it names application/openmetrics-text. */
enum mw_format mw_negotiate(const char *accept);

#endif
