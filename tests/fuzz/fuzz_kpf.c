/* fuzz_kpf.c - libFuzzer target for pm_kpf_parse (page-types -b expressions from the command line) and pm_kpf_describe. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pagemap.h"

#define PM_FUZZ_NAME "fuzz_kpf"
#include "replay_main.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ASSERT(c)                                                                              \
	do {                                                                                   \
		if (!(c)) {                                                                    \
			fprintf(stderr, "fuzz_kpf: %s:%d: invariant failed: %s\n", __FILE__, __LINE__, #c); \
			abort();                                                               \
		}                                                                              \
	} while (0)

/* Input: an expression (up to the first NUL), then 8 bytes of flags to match and describe. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pm_kpf_filter f, before;
	char expr[512], names[2048];
	uint64_t flags = 0;
	size_t n = strnlen((const char *)data, size < sizeof(expr) - 1 ? size : sizeof(expr) - 1);
	int r;

	memcpy(expr, data, n);
	expr[n] = '\0';
	if (n + 1 + 8 <= size)
		memcpy(&flags, data + n + 1, 8);
	memset(&f, 0, sizeof(f));
	before = f;
	r = pm_kpf_parse(&f, expr);
	ASSERT(r == 0 || r == -EINVAL || r == -E2BIG);
	if (r)	/* a refused expression leaves the filter as it was */
		ASSERT(!memcmp(&f, &before, sizeof(f)));
	else
		ASSERT(f.n >= 1 && f.n <= PM_KPF_MAX_TERMS);
	(void)pm_kpf_match(&f, flags);
	r = pm_kpf_describe(flags, names, sizeof(names));
	ASSERT(r >= 0 && strlen(names) < sizeof(names));
	return 0;
}
