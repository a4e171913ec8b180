/*
 * fuzz_stat_line.c - libFuzzer target for the one stat line parser (lib/base/stat_line.c): any
 * bytes (a command name is anyone's) parse or are refused, never read past the length, and a line that parses
 * names a command that lies between its first '(' and its last ')'; the read quota stays within its rows.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pagemap.h"
#include "live.h"

#define PM_FUZZ_NAME "fuzz_stat_line"
#include "replay_main.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ASSERT(c)                                                                                    \
	do {                                                                                         \
		if (!(c)) {                                                                          \
			fprintf(stderr, "fuzz_stat_line: %s:%d: invariant failed: %s\n", __FILE__, __LINE__, #c); \
			abort();                                                                     \
		}                                                                                    \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pm_proc_stat st, again;
	char comm[16], comm2[16];
	char *copy = malloc(size ? size : 1);	/* exactly @size bytes: ASan sees a read past them */
	double ages[64];
	size_t i, n;
	int r;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	r = pmi_stat_line_parse(copy, size, &st, comm, sizeof(comm));
	ASSERT(r == 0 || r == -22);
	ASSERT(strlen(comm) < sizeof(comm));
	if (r == 0) {
		const char *open = memchr(copy, '(', size);

		ASSERT(open != NULL);
		ASSERT(!memcmp(comm, open + 1, strlen(comm)));
		ASSERT((st.state >= 'A' && st.state <= 'Z') || (st.state >= 'a' && st.state <= 'z'));
		ASSERT(pmi_stat_line_parse(copy, size, &again, comm2, sizeof(comm2)) == 0);
		ASSERT(!memcmp(&st, &again, sizeof(st)) && !strcmp(comm, comm2));
		ASSERT(!pmi_stat_line_moved(&st, &again));
	}
	/* The quota: ages from the input's bytes, oldest first; never more rows than given. */
	n = size < 64 ? size : 64;
	for (i = 0; i < n; i++)
		ages[i] = (double)(255 - data[i]) / 8;
	for (i = 1; i < n; i++)
		if (ages[i] > ages[i - 1])
			ages[i] = ages[i - 1];
	ASSERT(pmi_live_quota(ages, n, size ? data[0] / 16.0 : 1, size > 1 ? data[1] / 8.0 : 10) <= n);
	free(copy);
	return 0;
}
