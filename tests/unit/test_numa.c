/* test_numa.c - unit tests of the numa_maps line parser, sysfs lists and the frame-to-node lookup (synthetic). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pages.h"
#include "numa.h"
#include "../harness.h"

/* Two nodes, ids 0 and 2 (ids need not be dense), frames [0, 100) on 0, [100, 150) none, [150, 300) on 2. */
static struct pm_numa_node nodes[2] = { { .id = 0 }, { .id = 2 } };
static struct pmi_numa_range ranges[] = { { 0, 100, 0 }, { 150, 300, 1 } };
static struct pm_numa topo = { .nodes = nodes, .count = 2, .ranges = ranges, .nranges = 2 };

/* The parser reads an exact-size heap copy, so a read past the end trips ASan. */
static int parse(const char *line, struct pmi_numa_maps_line *out, uint64_t *pages)
{
	char *copy = strdup(line);
	int r;

	if (!copy)
		return -ENOMEM;
	r = pmi_numa_maps_parse(copy, &topo, out, pages);
	free(copy);
	return r;
}

static int numa_maps_lines(void)
{
	struct pmi_numa_maps_line l;
	uint64_t pages[3];

	CHECK(parse("7f1ab318f000 default anon=129 dirty=129 N0=100 N2=29 kernelpagesize_kB=4\n", &l, pages) == 0);
	CHECK_EQ_U64(l.start, 0x7f1ab318f000ULL);
	CHECK_STR(l.policy, "default");
	CHECK_EQ_U64(l.anon, 129);
	CHECK_EQ_U64(pages[0], 100);
	CHECK_EQ_U64(pages[1], 29);
	CHECK_EQ_U64(pages[2], 0);
	CHECK_EQ_U64(l.pages, 129);
	CHECK_EQ_U64(l.page_size, 4096);
	CHECK(!l.huge);

	/* hugetlb, a node this machine does not list (N5: to the unknown slot), a policy with a space */
	CHECK(parse("7f0000000000 prefer (many)=static:0,2 file=/anon_hugepage\\040(deleted) huge dirty=2 N0=1 N5=1 "
		    "kernelpagesize_kB=2048", &l, pages) == 0);
	CHECK_STR(l.policy, "prefer (many)=static:0,2");
	CHECK(l.huge);
	CHECK_EQ_U64(l.page_size, 2048 * 1024);
	CHECK_EQ_U64(pages[0], 1);
	CHECK_EQ_U64(pages[2], 1);

	/* no pages in RAM, no kernelpagesize: 0, the caller uses the base page size */
	CHECK(parse("400000 bind:1 file=/usr/bin/x", &l, pages) == 0);
	CHECK_STR(l.policy, "bind:1");
	CHECK_EQ_U64(l.pages, 0);
	CHECK_EQ_U64(l.page_size, 0);
	CHECK(parse("400000 weighted interleave:0-1 heap anon=1 N0=1", &l, pages) == 0);
	CHECK_STR(l.policy, "weighted interleave:0-1");
	return T_PASS;
}

static int numa_maps_hostile(void)
{
	static const char *const bad[] = {
		"", "\n", "zz default", "7f00", "7f00 ", "7f00 default N0=", "7f00 default N0=-1",
		"7f00 default N0=1x", "7f00 default N99999=1",
		"7f00 default N0=99999999999999999999", "7f00 default N0=4503599627370496 N2=4503599627370496",
		"7f00 default anon=abc", "7f00 default kernelpagesize_kB=0", "7f00 default kernelpagesize_kB=99999999999",
		"ffffffffffffffffff default",
	};
	struct pmi_numa_maps_line l;
	uint64_t pages[3];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = parse(bad[i], &l, pages);

		if (r != -EINVAL)
			printf("  accepted: '%s' (%d)\n", bad[i], r);
		CHECK(r == -EINVAL);
	}
	return T_PASS;
}

static void count(long v, void *data)
{
	long *sum = data;

	sum[0]++;
	sum[1] += v;
}

static int sysfs_lists(void)
{
	long s[2] = { 0, 0 };

	CHECK(pmi_numa_parse_list("0-3,8,10-11\n", count, s) == 0);
	CHECK(s[0] == 7 && s[1] == 0 + 1 + 2 + 3 + 8 + 10 + 11);
	s[0] = s[1] = 0;
	CHECK(pmi_numa_parse_list("", count, s) == 0 && s[0] == 0);
	CHECK(pmi_numa_parse_list("\n", count, s) == 0 && s[0] == 0);
	CHECK(pmi_numa_parse_list("3-1", count, s) == -EINVAL);
	CHECK(pmi_numa_parse_list("0-99999999", count, s) == -EINVAL);	/* a hostile tree cannot make us loop */
	CHECK(pmi_numa_parse_list("1,,2", count, s) == -EINVAL);
	CHECK(pmi_numa_parse_list("-1", count, s) == -EINVAL);
	CHECK(pmi_numa_parse_list("1 2", count, s) == -EINVAL);
	return T_PASS;
}

static int pfn_to_node(void)
{
	uint64_t next;

	CHECK(pm_numa_index_of_pfn(&topo, 0, &next) == 0 && next == 100);
	CHECK(pm_numa_index_of_pfn(&topo, 99, &next) == 0 && next == 100);
	CHECK(pm_numa_index_of_pfn(&topo, 100, &next) == -1 && next == 150);
	CHECK(pm_numa_index_of_pfn(&topo, 150, &next) == 1 && next == 300);
	CHECK(pm_numa_index_of_pfn(&topo, 300, &next) == -1 && next == UINT64_MAX);
	CHECK(pm_numa_index_of_id(&topo, 2) == 1 && pm_numa_index_of_id(&topo, 1) == -1);
	return T_PASS;
}

static int distances(void)
{
	int16_t d[4];
	struct pm_numa n = topo;

	n.distance = d;
	memset(d, 0xff, sizeof(d));
	pmi_numa_parse_distances(&n, 0, "10 21\n");
	pmi_numa_parse_distances(&n, 1, "21 x");
	CHECK(pm_numa_distance(&n, 0, 0) == 10 && pm_numa_distance(&n, 0, 1) == 21);
	CHECK(pm_numa_distance(&n, 1, 0) == 21 && pm_numa_distance(&n, 1, 1) == -1);
	CHECK(pm_numa_distance(&n, 2, 0) == -1);
	return T_PASS;
}

T_MAIN(T(numa_maps_lines), T(numa_maps_hostile), T(sysfs_lists), T(pfn_to_node), T(distances))
