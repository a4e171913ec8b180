/* test_cache.c - the page cache view's pure parts: meminfo fields (hostile text included) and map_files names. */
#include <errno.h>
#include <stdint.h>
#include "../harness.h"
#include "pages.h"
#include "cache.h"

static int meminfo_normal(void)
{
	const char *t = "MemTotal:       16314668 kB\nBuffers:          123 kB\nCached:           240128 kB\n"
			"SwapCached:        8 kB\n";
	uint64_t v = 0;

	CHECK_EQ_U64(pmi_meminfo_field(t, "Cached", &v), 0);
	CHECK_EQ_U64(v, 240128ULL * 1024);
	CHECK_EQ_U64(pmi_meminfo_field(t, "SwapCached", &v), 0);
	CHECK_EQ_U64(v, 8 * 1024);
	CHECK_EQ_U64(pmi_meminfo_field(t, "MemTotal", &v), 0);
	CHECK_EQ_U64(v, 16314668ULL * 1024);
	return T_PASS;
}

/* "SwapCached:" does not answer "Cached"; a line must start with the name. */
static int meminfo_prefix(void)
{
	uint64_t v = 7;

	CHECK_EQ_U64(pmi_meminfo_field("SwapCached: 8 kB\n", "Cached", &v), -ENOENT);
	CHECK_EQ_U64(pmi_meminfo_field("CachedX: 8 kB\n", "Cached", &v), -ENOENT);
	CHECK_EQ_U64(pmi_meminfo_field(" Cached: 8 kB\n", "Cached", &v), -ENOENT);
	CHECK_EQ_U64(v, 7);
	return T_PASS;
}

/* Captured trees are untrusted: no value, a sign, an overflow, an empty file, no trailing newline. */
static int meminfo_hostile(void)
{
	uint64_t v = 7;

	CHECK_EQ_U64(pmi_meminfo_field("", "Cached", &v), -ENOENT);
	CHECK_EQ_U64(pmi_meminfo_field("Cached:", "Cached", &v), -EINVAL);
	CHECK_EQ_U64(pmi_meminfo_field("Cached:   kB\n", "Cached", &v), -EINVAL);
	CHECK_EQ_U64(pmi_meminfo_field("Cached: -5 kB\n", "Cached", &v), -EINVAL);
	CHECK_EQ_U64(pmi_meminfo_field("Cached: 99999999999999999999 kB\n", "Cached", &v), -EINVAL);
	CHECK_EQ_U64(pmi_meminfo_field("Cached: 18014398509481984 kB\n", "Cached", &v), -EINVAL);
	CHECK_EQ_U64(v, 7);
	/* The largest value whose bytes fit in 64 bits, without a trailing newline. */
	CHECK_EQ_U64(pmi_meminfo_field("Cached: 18014398509481983", "Cached", &v), 0);
	CHECK_EQ_U64(v, 18014398509481983ULL * 1024);
	CHECK_EQ_U64(pmi_meminfo_field("\n\n\nCached:\t4", "Cached", &v), 0);
	CHECK_EQ_U64(v, 4096);
	return T_PASS;
}

static int map_files_names(void)
{
	char buf[64], tiny[8];

	CHECK_EQ_U64(pmi_map_files_name(0x7f0000001000ULL, 0x7f0000003000ULL, buf, sizeof(buf)), 0);
	CHECK_STR(buf, "map_files/7f0000001000-7f0000003000");
	CHECK_EQ_U64(pmi_map_files_name(0, UINT64_MAX, buf, sizeof(buf)), 0);
	CHECK_STR(buf, "map_files/0-ffffffffffffffff");
	CHECK_EQ_U64(pmi_map_files_name(1, 2, tiny, sizeof(tiny)), -ENAMETOOLONG);
	return T_PASS;
}

T_MAIN(T(meminfo_normal), T(meminfo_prefix), T(meminfo_hostile), T(map_files_names))
