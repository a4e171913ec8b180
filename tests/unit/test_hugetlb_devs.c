/* test_hugetlb_devs.c - hugetlb mappings told by their device (lib/pages/hugetlb_devs.c): the pure parts, and a replay told by its recorded smaps alone. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pagemap.h"
#include "base.h"
#include "pages.h"
#include "../harness.h"
#include "replay.h"

#define MB2	0x200000ULL

static struct pm_mapping map_at(uint64_t start, uint64_t end, uint32_t major, uint64_t inode)
{
	struct pm_mapping m = { .start = start, .end = end, .dev_major = major, .dev_minor = 17, .inode = inode };

	return m;
}

static int devs_lookup_add(void)
{
	struct pmi_hugetlb_devs d = { 0 };

	CHECK_EQ_U64(pmi_hugetlb_devs_lookup(&d, 0, 17), (uint64_t)-1);
	CHECK_EQ_U64(pmi_hugetlb_devs_add(&d, 17, true), 0);
	CHECK_EQ_U64(pmi_hugetlb_devs_add(&d, 1, false), 0);
	CHECK_EQ_U64(pmi_hugetlb_devs_lookup(&d, 0, 17), 1);
	CHECK_EQ_U64(pmi_hugetlb_devs_lookup(&d, 0, 1), 0);
	CHECK_EQ_U64(pmi_hugetlb_devs_lookup(&d, 0, 18), (uint64_t)-1);
	/* a disk's device is never hugetlbfs, whatever its minor */
	CHECK_EQ_U64(pmi_hugetlb_devs_lookup(&d, 8, 17), 0);
	/* a later verdict replaces the first, without a second entry */
	CHECK_EQ_U64(pmi_hugetlb_devs_add(&d, 17, false), 0);
	CHECK_EQ_U64(pmi_hugetlb_devs_lookup(&d, 0, 17), 0);
	CHECK_EQ_U64(d.n, 2);
	for (uint32_t i = 100; i < 140; i++)
		CHECK_EQ_U64(pmi_hugetlb_devs_add(&d, i, i & 1), 0);
	CHECK_EQ_U64(pmi_hugetlb_devs_lookup(&d, 0, 133), 1);
	CHECK_EQ_U64(pmi_hugetlb_devs_lookup(&d, 0, 132), 0);
	free(d.v);
	return T_PASS;
}

static int candidate_prefilter(void)
{
	struct pm_mapping m = map_at(0x7f0000000000, 0x7f0000000000 + MB2, 0, 5);

	CHECK(pmi_hugetlb_candidate(&m, MB2));
	CHECK(pmi_hugetlb_candidate(&m, 4096));
	CHECK(!pmi_hugetlb_candidate(&m, 1ULL << 30));	/* 2 MiB is no 1 GiB page */
	CHECK(!pmi_hugetlb_candidate(&m, 0));		/* no huge page size: nothing is */
	m = map_at(0x7f0000001000, 0x7f0000001000 + MB2, 0, 5);
	CHECK(!pmi_hugetlb_candidate(&m, MB2));		/* start not aligned */
	m = map_at(0x7f0000000000, 0x7f0000000000 + MB2 + 4096, 0, 5);
	CHECK(!pmi_hugetlb_candidate(&m, MB2));		/* end not aligned */
	m = map_at(0x7f0000000000, 0x7f0000000000 + MB2, 0, 0);
	CHECK(pmi_hugetlb_candidate(&m, MB2));		/* inode 0: the first SysV segment (its shmid) */
	m.dev_minor = 0;
	CHECK(!pmi_hugetlb_candidate(&m, MB2));		/* 00:00: anonymous, no file */
	m = map_at(0x7f0000000000, 0x7f0000000000 + MB2, 253, 5);
	CHECK(!pmi_hugetlb_candidate(&m, MB2));		/* a disk's file (or device-dax) */
	return T_PASS;
}

static int mountinfo_lines(void)
{
	static const char huge[] = "36 25 0:45 / /dev/hugepages rw,relatime shared:17 - hugetlbfs hugetlbfs rw,pagesize=2M\n";
	static const char tmp[] = "40 25 0:21 / /dev/shm rw,nosuid,nodev shared:4 master:2 - tmpfs tmpfs rw\n";
	static const char disk[] = "25 1 253:0 / / rw,relatime - ext4 /dev/mapper/root rw";
	static const char *const bad[] = { "", "36 25", "36 25 0:45", "36 25 045 / / rw - hugetlbfs x rw",
					   "36 25 0:45 / / rw hugetlbfs x rw", "36 25 0:99999999999 / / rw - tmpfs x rw" };
	uint32_t ma = 9, mi = 9;
	bool h = false;
	size_t i;

	CHECK_EQ_U64(pmi_mountinfo_dev(huge, sizeof(huge) - 1, &ma, &mi, &h), 0);
	CHECK(ma == 0 && mi == 45 && h);
	CHECK_EQ_U64(pmi_mountinfo_dev(tmp, sizeof(tmp) - 1, &ma, &mi, &h), 0);
	CHECK(ma == 0 && mi == 21 && !h);
	CHECK_EQ_U64(pmi_mountinfo_dev(disk, sizeof(disk) - 1, &ma, &mi, &h), 0);
	CHECK(ma == 253 && mi == 0 && !h);
	for (i = 0; i < PMI_ARRAY_SIZE(bad); i++)
		CHECK_EQ_U64(pmi_mountinfo_dev(bad[i], strlen(bad[i]), &ma, &mi, &h), -EINVAL);
	return T_PASS;
}

/*
 * maps of a replayed self: an MFD_HUGETLB memfd and a plain memfd, both 2 MiB
 * aligned and major 0 (only the recorded smaps tells them apart), and
 * MAP_HUGETLB's /anon_hugepage (told by its path even without smaps).
 */
static const char replay_maps[] = "7f0000000000-7f0000200000 rw-s 00000000 00:11 1034 /memfd:hugey (deleted)\n"
				  "7f0000200000-7f0000400000 rw-s 00000000 00:01 2048 /memfd:plain (deleted)\n"
				  "7f0000600000-7f0000800000 rw-p 00000000 00:12 4096 /anon_hugepage (deleted)\n";
static const char replay_smaps[] = "7f0000000000-7f0000200000 rw-s 00000000 00:11 1034 /memfd:hugey (deleted)\n"
				   "Size:               2048 kB\nKernelPageSize:     2048 kB\nRss:                   0 kB\n"
				   "Shared_Hugetlb:        0 kB\nPrivate_Hugetlb:    2048 kB\n"
				   "7f0000200000-7f0000400000 rw-s 00000000 00:01 2048 /memfd:plain (deleted)\n"
				   "Size:               2048 kB\nKernelPageSize:        4 kB\nRss:                2048 kB\n"
				   "7f0000600000-7f0000800000 rw-p 00000000 00:12 4096 /anon_hugepage (deleted)\n"
				   "Size:               2048 kB\nKernelPageSize:     2048 kB\nRss:                   0 kB\n";

/* The hugetlb verdicts of the replayed mappings in order, and each one's pm_usage_rss, in @rss. */
static void replay_check(bool with_smaps, const bool want[3])
{
	char *root = rp_new_root();
	struct pm_ctx *ctx = NULL;
	struct pm_target *t = NULL;
	struct pm_mapstat *it;
	const struct pm_mapping *m;
	const struct pm_usage *u;
	uint64_t *e = calloc(3 * 512, sizeof(*e));
	size_t i = 0;

	CHECK(root && e);
	if (!root || !e)
		goto out;
	for (i = 0; i < 3 * 512; i++)
		e[i] = (1ULL << 63) | (1ULL << 61) | (0x10000 + i);	/* present, file, a PFN */
	CHECK(!rp_write_str(root, "pagemap-features", "page_size=4096\nlayout=current\npfn_view=visible\n"));
	CHECK(!rp_write_str(root, "proc/sys/kernel/osrelease", "6.18.0\n"));
	CHECK(!rp_write_stat(root, "proc/self/stat", 'S', 4194560));
	CHECK(!rp_write_str(root, "proc/self/maps", replay_maps));
	CHECK(!rp_put_entries(root, "proc/self/pagemap", 0x7f0000000, e, 1024));
	CHECK(!rp_put_entries(root, "proc/self/pagemap", 0x7f0000600, e + 1024, 512));
	if (with_smaps)
		CHECK(!rp_write_str(root, "proc/self/smaps", replay_smaps));
	ctx = pm_ctx_new(root);
	t = ctx ? pm_target_open(ctx, 0) : NULL;
	CHECK(t != NULL);
	if (!t || !(it = pm_mapstat_open(t, 0)))
		goto out;
	for (i = 0; pm_mapstat_next(it, &m, &u) == 0 && i < 3; i++) {
		CHECK_EQ_U64(m->hugetlb, want[i]);
		CHECK_EQ_U64(u->present, MB2);
		/* smaps Rss: nothing of a hugetlb mapping */
		CHECK_EQ_U64(pm_usage_rss(u, m), want[i] ? 0 : MB2);
	}
	CHECK_EQ_U64(i, 3);
	pm_mapstat_close(it);
out:
	free(e);
	pm_target_close(t);
	pm_ctx_free(ctx);
	if (root)
		rp_free_root(root);
}

static int replay_by_smaps(void)
{
	static const bool told[3] = { true, false, true }, path_only[3] = { false, false, true };

	replay_check(true, told);
	/* a capture without smaps: only the path rule, nothing guessed from this machine's devices */
	replay_check(false, path_only);
	return T_PASS;
}

T_MAIN(T(devs_lookup_add), T(candidate_prefilter), T(mountinfo_lines), T(replay_by_smaps))
