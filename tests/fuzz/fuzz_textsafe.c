/*
 * fuzz_textsafe.c - libFuzzer target for cli/base/textsafe.c, the one sanitizer of names in every output format:
 * whatever the bytes, each format's output is valid UTF-8 and valid in its syntax (JSON string, Prometheus
 * label value, XML text, terminal text without controls), and the documented decoding gives the bytes back.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../../cli/base/textsafe.h"
#include "../textsafe_check.h"

#define PM_FUZZ_NAME "fuzz_textsafe"
#include "replay_main.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Input: a name, up to the first NUL (a C string is all a name can be). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *name = malloc(size + 1);
	const char *why;

	if (!name)
		return 0;
	memcpy(name, data, size);
	name[size] = '\0';
	if ((why = tc_check_all(name))) {
		fprintf(stderr, "fuzz_textsafe: invariant failed: %s\n", why);
		abort();
	}
	free(name);
	return 0;
}
