/* test_maps.c - unit tests of the maps-line parser, the maps iterator and target opening on replayed roots. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pagemap.h"
#include "../harness.h"
#include "replay.h"

/* The parser gets an exact-size heap copy, so a read past @len trips ASan. */
static char *copy;
static size_t copy_len;

static int parse_n(const char *s, size_t len, struct pm_mapping *m)
{
	free(copy);
	copy = malloc(len ? len : 1);
	copy_len = len;
	if (len)
		memcpy(copy, s, len);
	memset(m, 0x5a, sizeof(*m));
	return pm_maps_parse_line(copy, len, m);
}

static int parse(const char *s, struct pm_mapping *m)
{
	return parse_n(s, strlen(s), m);
}

static void parse_done(void)
{
	free(copy);
	copy = NULL;
}

/* The path is a slice of the line: in bounds, not NUL-terminated, equal to @want. */
#define CHECK_PATH(m, want)                                                                   \
	do {                                                                                  \
		size_t _n = sizeof(want) - 1;                                                 \
		CHECK_EQ_U64((m)->path_len, _n);                                              \
		CHECK((m)->path >= copy && (m)->path + (m)->path_len <= copy + copy_len);     \
		if ((m)->path_len == _n)                                                      \
			CHECK(!memcmp((m)->path, (want), _n));                                \
	} while (0)

#define CHECK_MAP(m, s, e, off, maj, min, ino, prot_, perms_, kind_, del)  \
	do {                                                                \
		CHECK_EQ_U64((m)->start, (s));                              \
		CHECK_EQ_U64((m)->end, (e));                                \
		CHECK_EQ_U64((m)->offset, (off));                           \
		CHECK_EQ_U64((m)->dev_major, (maj));                        \
		CHECK_EQ_U64((m)->dev_minor, (min));                        \
		CHECK_EQ_U64((m)->inode, (ino));                            \
		CHECK_EQ_U64((m)->prot, (prot_));                           \
		CHECK_STR((m)->perms, (perms_));                            \
		CHECK_EQ_U64((m)->kind, (kind_));                           \
		CHECK_EQ_U64((m)->deleted, (del));                          \
	} while (0)

#define RW	(PM_PROT_READ | PM_PROT_WRITE)
#define RX	(PM_PROT_READ | PM_PROT_EXEC)

/* Lines copied from /proc/PID/maps on Linux 6.18 x86-64 (column padding as printed). */
static int parse_real_lines(void)
{
	struct pm_mapping m;

	CHECK_EQ_U64(parse("563f26910000-563f26931000 rw-p 00000000 00:00 0                          [heap]\n", &m), 0);
	CHECK_MAP(&m, 0x563f26910000, 0x563f26931000, 0, 0, 0, 0, RW, "rw-p", PM_MAP_HEAP, false);
	CHECK_PATH(&m, "[heap]");
	CHECK_EQ_U64(m.path[m.path_len], '\n');	/* a slice, not a string */

	CHECK_EQ_U64(parse("7ffca0812000-7ffca0833000 rw-p 00000000 00:00 0                          [stack]\n", &m), 0);
	CHECK_MAP(&m, 0x7ffca0812000, 0x7ffca0833000, 0, 0, 0, 0, RW, "rw-p", PM_MAP_STACK, false);
	CHECK_PATH(&m, "[stack]");

	CHECK_EQ_U64(parse("7f830266c000-7f830266e000 r-xp 00000000 00:00 0                          [vdso]\n", &m), 0);
	CHECK_MAP(&m, 0x7f830266c000, 0x7f830266e000, 0, 0, 0, 0, RX, "r-xp", PM_MAP_VDSO, false);
	CHECK_PATH(&m, "[vdso]");

	CHECK_EQ_U64(parse("7f8302666000-7f830266a000 r--p 00000000 00:00 0                          [vvar]\n", &m), 0);
	CHECK_MAP(&m, 0x7f8302666000, 0x7f830266a000, 0, 0, 0, 0, PM_PROT_READ, "r--p", PM_MAP_VVAR, false);
	CHECK_PATH(&m, "[vvar]");

	CHECK_EQ_U64(parse("7f830266a000-7f830266c000 r--p 00000000 00:00 0                          [vvar_vclock]\n",
			   &m), 0);
	CHECK_MAP(&m, 0x7f830266a000, 0x7f830266c000, 0, 0, 0, 0, PM_PROT_READ, "r--p", PM_MAP_VVAR, false);
	CHECK_PATH(&m, "[vvar_vclock]");

	CHECK_EQ_U64(parse("ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n",
			   &m), 0);
	CHECK_MAP(&m, 0xffffffffff600000, 0xffffffffff601000, 0, 0, 0, 0, PM_PROT_EXEC, "--xp", PM_MAP_VSYSCALL,
		  false);
	CHECK_PATH(&m, "[vsyscall]");

	CHECK_EQ_U64(parse("7f830249b000-7f83025f1000 r-xp 00026000 fe:00 332835                     "
			   "/usr/lib/x86_64-linux-gnu/libc.so.6\n", &m), 0);
	CHECK_MAP(&m, 0x7f830249b000, 0x7f83025f1000, 0x26000, 0xfe, 0, 332835, RX, "r-xp", PM_MAP_FILE, false);
	CHECK_PATH(&m, "/usr/lib/x86_64-linux-gnu/libc.so.6");

	CHECK_EQ_U64(parse("7f830265c000-7f8302663000 r--s 00000000 fe:00 332280                     "
			   "/usr/lib/x86_64-linux-gnu/gconv/gconv-modules.cache\n", &m), 0);
	CHECK_MAP(&m, 0x7f830265c000, 0x7f8302663000, 0, 0xfe, 0, 332280, PM_PROT_READ | PM_MAP_SHARED, "r--s",
		  PM_MAP_FILE, false);
	CHECK_PATH(&m, "/usr/lib/x86_64-linux-gnu/gconv/gconv-modules.cache");

	/* Anonymous: the kernel prints a space after the inode and no path. */
	CHECK_EQ_U64(parse("7f83023f4000-7f8302416000 rw-p 00000000 00:00 0 \n", &m), 0);
	CHECK_MAP(&m, 0x7f83023f4000, 0x7f8302416000, 0, 0, 0, 0, RW, "rw-p", PM_MAP_ANON, false);
	CHECK_EQ_U64(m.path_len, 0);
	CHECK(m.path >= copy && m.path <= copy + copy_len);

	/* A path with a space and an escaped newline (\012 is four bytes, kept as printed). */
	CHECK_EQ_U64(parse("7f6255fcd000-7f6255fce000 r--s 00000000 fe:00 10952942                   "
			   "/tmp/probe/has space\\012nl\n", &m), 0);
	CHECK_MAP(&m, 0x7f6255fcd000, 0x7f6255fce000, 0, 0xfe, 0, 10952942, PM_PROT_READ | PM_MAP_SHARED, "r--s",
		  PM_MAP_FILE, false);
	CHECK_PATH(&m, "/tmp/probe/has space\\012nl");

	CHECK_EQ_U64(parse("7f6255fcc000-7f6255fcd000 r--p 00000000 fe:00 10952943                   "
			   "/tmp/probe/gone (deleted)\n", &m), 0);
	CHECK_MAP(&m, 0x7f6255fcc000, 0x7f6255fcd000, 0, 0xfe, 0, 10952943, PM_PROT_READ, "r--p", PM_MAP_FILE,
		  true);
	CHECK_PATH(&m, "/tmp/probe/gone (deleted)");

	/* MAP_SHARED|MAP_ANONYMOUS is shmem: a file with an inode on dev 00:01. */
	CHECK_EQ_U64(parse("7f6255fd0000-7f6255fd2000 rw-s 00000000 00:01 25                         "
			   "/dev/zero (deleted)\n", &m), 0);
	CHECK_MAP(&m, 0x7f6255fd0000, 0x7f6255fd2000, 0, 0, 1, 25, RW | PM_MAP_SHARED, "rw-s", PM_MAP_FILE, true);
	CHECK_PATH(&m, "/dev/zero (deleted)");

	/* NVMe: major 259 is printed as 103; offsets above 32 bits. */
	CHECK_EQ_U64(parse("7f0000000000-7f0000001000 rwxp 1234567890 103:0a 18446744073709551609 /x\n", &m), 0);
	CHECK_MAP(&m, 0x7f0000000000, 0x7f0000001000, 0x1234567890, 259, 10, 18446744073709551609ULL,
		  RW | PM_PROT_EXEC, "rwxp", PM_MAP_FILE, false);
	CHECK_PATH(&m, "/x");

	/* ---p guard gaps between thread stacks. */
	CHECK_EQ_U64(parse("7f6255de0000-7f6255de3000 ---p 00000000 00:00 0 \n", &m), 0);
	CHECK_MAP(&m, 0x7f6255de0000, 0x7f6255de3000, 0, 0, 0, 0, 0, "---p", PM_MAP_ANON, false);
	parse_done();
	return T_PASS;
}

static int parse_named_anon(void)
{
	struct pm_mapping m;

	/* prctl(PR_SET_VMA_ANON_NAME) on private anonymous memory (5.17+). */
	CHECK_EQ_U64(parse("7f6255fce000-7f6255fd0000 rw-p 00000000 00:00 0                          [anon:myanon]\n",
			   &m), 0);
	CHECK_MAP(&m, 0x7f6255fce000, 0x7f6255fd0000, 0, 0, 0, 0, RW, "rw-p", PM_MAP_ANON_NAMED, false);
	CHECK_PATH(&m, "[anon:myanon]");

	/* Without the column padding (hand-written fixtures). */
	CHECK_EQ_U64(parse("7f6255fce000-7f6255fd0000 rw-p 00000000 00:00 0 [anon:jit]\n", &m), 0);
	CHECK_EQ_U64(m.kind, PM_MAP_ANON_NAMED);
	CHECK_PATH(&m, "[anon:jit]");

	/* 3.x per-thread stacks. */
	CHECK_EQ_U64(parse("7f6255fce000-7f6255fd0000 rw-p 00000000 00:00 0 [stack:1234]\n", &m), 0);
	CHECK_EQ_U64(m.kind, PM_MAP_STACK);

	/* Other bracketed names. */
	CHECK_EQ_U64(parse("7fff00000000-7fff00001000 r-xp 00000000 00:00 0 [uprobes]\n", &m), 0);
	CHECK_EQ_U64(m.kind, PM_MAP_SPECIAL);
	CHECK_PATH(&m, "[uprobes]");
	/* A file whose name looks special is a file. */
	CHECK_EQ_U64(parse("00400000-00401000 r--p 00000000 fe:00 12 /tmp/[heap]\n", &m), 0);
	CHECK_EQ_U64(m.kind, PM_MAP_FILE);
	parse_done();
	return T_PASS;
}

/*
 * Named shared anonymous memory: show_map_vma() prints "[anon_shmem:NAME]"
 * for a VMA with a vm_file (the shmem file), so the line carries that file's
 * device (00:01) and inode, as in the "/dev/zero (deleted)" line above.
 */
static int parse_named_anon_shmem(void)
{
	struct pm_mapping m;

	CHECK_EQ_U64(parse("7f6255fd0000-7f6255fd2000 rw-s 00000000 00:01 25                         "
			   "[anon_shmem:myshm]\n", &m), 0);
	CHECK_MAP(&m, 0x7f6255fd0000, 0x7f6255fd2000, 0, 0, 1, 25, RW | PM_MAP_SHARED, "rw-s", PM_MAP_ANON_NAMED,
		  false);
	CHECK_PATH(&m, "[anon_shmem:myshm]");
	/* The same name with inode 0 (as a hand-written fixture might have it). */
	CHECK_EQ_U64(parse("7f6255fd0000-7f6255fd2000 rw-s 00000000 00:00 0 [anon_shmem:myshm]\n", &m), 0);
	CHECK_EQ_U64(m.kind, PM_MAP_ANON_NAMED);
	parse_done();
	return T_PASS;
}

static int parse_no_newline(void)
{
	struct pm_mapping m;

	/* Without the trailing newline: the path ends at the buffer's end (ASan checks the copy). */
	CHECK_EQ_U64(parse("00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/dbus-daemon", &m), 0);
	CHECK_MAP(&m, 0x400000, 0x452000, 0, 8, 2, 173521, RX, "r-xp", PM_MAP_FILE, false);
	CHECK_PATH(&m, "/usr/bin/dbus-daemon");
	CHECK_EQ_U64(parse("00400000-00452000 rw-p 00000000 00:00 0", &m), 0);
	CHECK_EQ_U64(m.kind, PM_MAP_ANON);
	CHECK_EQ_U64(m.path_len, 0);
	CHECK_EQ_U64(parse("00400000-00452000 r--p 00000000 08:02 1 /a (deleted)", &m), 0);
	CHECK_EQ_U64(m.deleted, true);
	CHECK_PATH(&m, "/a (deleted)");
	/* Only the length counts: bytes after @len are not part of the line. */
	CHECK_EQ_U64(pm_maps_parse_line("00400000-00452000 r--p 00000000 08:02 1 /abc", 42, &m), 0);
	CHECK_EQ_U64(m.path_len, 2);
	CHECK(!memcmp(m.path, "/a", 2));
	/* Exactly one trailing newline is dropped; a second belongs to the path. */
	CHECK_EQ_U64(parse("00400000-00452000 r--p 00000000 08:02 1 /a\n\n", &m), 0);
	CHECK_PATH(&m, "/a\n");
	parse_done();
	return T_PASS;
}

static int parse_deleted(void)
{
	struct pm_mapping m;

	CHECK_EQ_U64(parse("7f0000000000-7f0000001000 rw-s 00000000 00:01 5 /memfd:pool (deleted)\n", &m), 0);
	CHECK_EQ_U64(m.deleted, true);
	CHECK_EQ_U64(m.kind, PM_MAP_FILE);
	CHECK_PATH(&m, "/memfd:pool (deleted)");
	CHECK_EQ_U64(parse("7f0000000000-7f0000001000 rw-s 00000000 00:01 5 /x(deleted)\n", &m), 0);
	CHECK_EQ_U64(m.deleted, false);
	CHECK_EQ_U64(parse("7f0000000000-7f0000001000 rw-s 00000000 00:01 5 /x (deleted) \n", &m), 0);
	CHECK_EQ_U64(m.deleted, false);
	CHECK_EQ_U64(parse("7f0000000000-7f0000001000 rw-s 00000000 00:01 5  (deleted)\n", &m), 0);
	CHECK_EQ_U64(m.deleted, false);	/* the padding is not part of the path */
	CHECK_PATH(&m, "(deleted)");
	parse_done();
	return T_PASS;
}

static int parse_inode_limits(void)
{
	struct pm_mapping m;

	CHECK_EQ_U64(parse("00400000-00401000 r--p 00000000 08:02 18446744073709551609 /x\n", &m), 0);
	CHECK_EQ_U64(m.inode, 18446744073709551609ULL);
	/* i_ino is an unsigned long: every u64 value can be printed. */
	CHECK_EQ_U64(parse("00400000-00401000 r--p 00000000 08:02 18446744073709551610 /x\n", &m), 0);
	CHECK_EQ_U64(m.inode, 18446744073709551610ULL);
	CHECK_EQ_U64(parse("00400000-00401000 r--p 00000000 08:02 18446744073709551615 /x\n", &m), 0);
	CHECK_EQ_U64(m.inode, UINT64_MAX);
	/* One more overflows. */
	CHECK_EQ_U64(parse("00400000-00401000 r--p 00000000 08:02 18446744073709551616 /x\n", &m), -EINVAL);
	CHECK_EQ_U64(parse("00400000-00401000 r--p 00000000 08:02 99999999999999999999 /x\n", &m), -EINVAL);
	CHECK_EQ_U64(parse("00400000-00401000 r--p 00000000 08:02 184467440737095516150 /x\n", &m), -EINVAL);
	parse_done();
	return T_PASS;
}

static int parse_hex_limits(void)
{
	struct pm_mapping m;

	CHECK_EQ_U64(parse("ffffffffffffffff-ffffffffffffffff ---p ffffffffffffffff fff:fffff 0\n", &m), 0);
	CHECK_EQ_U64(m.start, UINT64_MAX);
	CHECK_EQ_U64(m.end, UINT64_MAX);
	CHECK_EQ_U64(m.offset, UINT64_MAX);
	CHECK_EQ_U64(m.dev_major, 0xfff);
	CHECK_EQ_U64(m.dev_minor, 0xfffff);
	/* 17 digits, even with a leading zero. */
	CHECK_EQ_U64(parse("10000000000000000-10000000000000001 r--p 00000000 08:02 0\n", &m), -EINVAL);
	CHECK_EQ_U64(parse("00400000-10000000000000000 r--p 00000000 08:02 0\n", &m), -EINVAL);
	CHECK_EQ_U64(parse("00400000-00401000 r--p 10000000000000000 08:02 0\n", &m), -EINVAL);
	CHECK_EQ_U64(parse("0ffffffffffffffff-ffffffffffffffff r--p 00000000 08:02 0\n", &m), -EINVAL);
	/* Device numbers wider than 32 bits. */
	CHECK_EQ_U64(parse("00400000-00401000 r--p 00000000 100000000:02 0\n", &m), -EINVAL);
	CHECK_EQ_U64(parse("00400000-00401000 r--p 00000000 02:100000000 0\n", &m), -EINVAL);
	CHECK_EQ_U64(parse("00400000-00401000 r--p 00000000 ffffffff:ffffffff 0\n", &m), 0);
	CHECK_EQ_U64(m.dev_major, 0xffffffff);
	CHECK_EQ_U64(m.dev_minor, 0xffffffff);
	parse_done();
	return T_PASS;
}

static int parse_start_end(void)
{
	struct pm_mapping m;

	CHECK_EQ_U64(parse("00452000-00400000 r-xp 00000000 08:02 173521 /usr/bin/dbus-daemon\n", &m), -EINVAL);
	CHECK_EQ_U64(parse("00400001-00400000 r-xp 00000000 08:02 0\n", &m), -EINVAL);
	/* An empty range is not malformed. */
	CHECK_EQ_U64(parse("00400000-00400000 r-xp 00000000 08:02 0\n", &m), 0);
	CHECK_EQ_U64(m.start, 0x400000);
	CHECK_EQ_U64(m.end, 0x400000);
	parse_done();
	return T_PASS;
}

static int parse_hostile(void)
{
	static const char *const bad[] = {
		"",
		"\n",
		" \n",
		"00400000",
		"00400000-",
		"00400000-00452000",
		"00400000-00452000 ",
		"00400000-00452000 r-xp",
		"00400000-00452000 r-xp ",
		"00400000-00452000 r-xp 00000000",
		"00400000-00452000 r-xp 00000000 08",
		"00400000-00452000 r-xp 00000000 08:",
		"00400000-00452000 r-xp 00000000 08:02",
		"00400000-00452000 r-xp 00000000 08:02 ",
		"00400000-00452000 r-xp 00000000 08:02 \n",
		"00400000-00452000 r-xp 00000000 0802 173521 /x",
		"00400000 00452000 r-xp 00000000 08:02 173521 /x",
		"-00400000-00452000 r-xp 00000000 08:02 173521 /x",
		"+00400000-00452000 r-xp 00000000 08:02 173521 /x",
		" 00400000-00452000 r-xp 00000000 08:02 173521 /x",
		"0x400000-00452000 r-xp 00000000 08:02 173521 /x",
		"00400000-00452000  r-xp 00000000 08:02 173521 /x",
		"00400000-00452000\tr-xp 00000000 08:02 173521 /x",
		"00400000-00452000 r-xp\t00000000 08:02 173521 /x",
		"00400000-00452000 r-xp 00000000 08:02\t173521 /x",
		"g0400000-00452000 r-xp 00000000 08:02 173521 /x",
		/* bad perms */
		"00400000-00452000 rwxq 00000000 08:02 173521 /x",
		"00400000-00452000 RWXP 00000000 08:02 173521 /x",
		"00400000-00452000 xwrp 00000000 08:02 173521 /x",
		"00400000-00452000 r-x 00000000 08:02 173521 /x",
		"00400000-00452000 r-xpp 00000000 08:02 173521 /x",
		"00400000-00452000 ---- 00000000 08:02 173521 /x",
		"00400000-00452000 ???? 00000000 08:02 173521 /x",
		"00400000-00452000 r-",
		/* garbage right after the inode */
		"00400000-00452000 r-xp 00000000 08:02 173521x /x",
		"00400000-00452000 r-xp 00000000 08:02 173521/usr/bin/x",
		"00400000-00452000 r-xp 00000000 08:02 173521[heap]",
		"00400000-00452000 r-xp 00000000 08:02 -1 /x",
		"00400000-00452000 r-xp 00000000 08:02 +1 /x",
		"00400000-00452000 r-xp 00000000 08:02 0x10 /x",
		"00400000-00452000 r-xp 00000000 08:02 1\t/x",
		"00400000-00452000 r-xp 00000000 08:02 1\r\n",
	};
	struct pm_mapping m;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = parse(bad[i], &m);
		if (r != -EINVAL)
			printf("  accepted: \"%s\"\n", bad[i]);
		CHECK_EQ_U64(r, -EINVAL);
	}
	parse_done();
	return T_PASS;
}

static int parse_embedded_nul(void)
{
	static const char in_path[] = "00400000-00452000 r-xp 00000000 08:02 173521 /usr/bin/a\0b\n";
	static const char in_hex[] = "0040\0000-00452000 r-xp 00000000 08:02 173521 /x\n";
	static const char in_perms[] = "00400000-00452000 r\0xp 00000000 08:02 173521 /x\n";
	static const char after_ino[] = "00400000-00452000 r-xp 00000000 08:02 173521\0/x\n";
	static const char only_nul[] = "\0";
	struct pm_mapping m;

	CHECK_EQ_U64(parse_n(in_path, sizeof(in_path) - 1, &m), 0);
	CHECK_EQ_U64(m.path_len, 12);
	CHECK(!memcmp(m.path, "/usr/bin/a\0b", 12));
	CHECK_EQ_U64(m.kind, PM_MAP_FILE);
	CHECK_EQ_U64(parse_n(in_hex, sizeof(in_hex) - 1, &m), -EINVAL);
	CHECK_EQ_U64(parse_n(in_perms, sizeof(in_perms) - 1, &m), -EINVAL);
	CHECK_EQ_U64(parse_n(after_ino, sizeof(after_ino) - 1, &m), -EINVAL);
	CHECK_EQ_U64(parse_n(only_nul, 1, &m), -EINVAL);
	parse_done();
	return T_PASS;
}

/* ---- the iterator over a replayed root ---- */

#define NMAPS 100000

static int maps_iterator_many(void)
{
	const struct pm_mapping *m;
	struct pm_target *t = NULL;
	struct pm_maps *it = NULL;
	struct pm_ctx *ctx = NULL;
	char *root = rp_new_root(), path[4096], *longpath = NULL;
	uint64_t n = 0;
	FILE *f;
	int r, i;

	if (!root)
		return t_skip("cannot create a temporary directory");
	CHECK_EQ_U64(rp_write_str(root, "proc/self/pagemap", "01234567"), 0);
	CHECK_EQ_U64(rp_write_str(root, "proc/self/maps", ""), 0);
	snprintf(path, sizeof(path), "%s/proc/self/maps", root);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		goto out;
	longpath = malloc(20001);
	CHECK(longpath != NULL);
	if (!longpath) {
		fclose(f);
		goto out;
	}
	memset(longpath, 'a', 20000);
	longpath[0] = '/';
	longpath[20000] = '\0';
	for (i = 0; i < NMAPS; i++) {
		uint64_t s = 0x10000000ULL + (uint64_t)i * 0x2000;
		if (i == 500)	/* one very long line: no fixed line buffer */
			fprintf(f, "%08llx-%08llx r--p 00000000 fe:00 7 %s\n", (unsigned long long)s,
				(unsigned long long)s + 0x1000, longpath);
		else if (i % 3 == 0)
			fprintf(f, "%08llx-%08llx rw-p 00000000 00:00 0 \n", (unsigned long long)s,
				(unsigned long long)s + 0x1000);
		else
			fprintf(f, "%08llx-%08llx r-xp %08x fe:00 %d                     /usr/lib/lib%d.so\n",
				(unsigned long long)s, (unsigned long long)s + 0x1000, i * 0x1000, i, i);
	}
	/* The last line without its newline. */
	fprintf(f, "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]");
	CHECK_EQ_U64(fclose(f), 0);

	ctx = pm_ctx_new(root);
	CHECK(ctx != NULL);
	if (!ctx)
		goto out;
	t = pm_target_open(ctx, 0);
	CHECK(t != NULL);
	if (!t)
		goto out;
	CHECK_EQ_U64(pm_target_pid(t), 0);
	it = pm_maps_open(t);
	CHECK(it != NULL);
	if (!it)
		goto out;
	while ((r = pm_maps_next(it, &m)) == 0) {
		if (n < NMAPS) {
			uint64_t s = 0x10000000ULL + n * 0x2000;
			if (m->start != s || m->end != s + 0x1000) {
				CHECK_EQ_U64(m->start, s);
				CHECK_EQ_U64(m->end, s + 0x1000);
				break;
			}
			if (n == 500) {
				CHECK_EQ_U64(m->path_len, 20000);
				CHECK(m->path_len == 20000 && !memcmp(m->path, longpath, 20000));
			} else if (n % 3 == 0) {
				CHECK(m->kind == PM_MAP_ANON && m->path_len == 0);
			} else if (m->kind != PM_MAP_FILE || m->inode != n || m->offset != n * 0x1000) {
				CHECK_EQ_U64(m->kind, PM_MAP_FILE);
				CHECK_EQ_U64(m->inode, n);
				CHECK_EQ_U64(m->offset, n * 0x1000);
				break;
			}
		} else {
			CHECK_EQ_U64(m->start, 0xffffffffff600000ULL);
			CHECK_EQ_U64(m->kind, PM_MAP_VSYSCALL);
			CHECK_EQ_U64(m->path_len, 10);
		}
		n++;
	}
	CHECK_EQ_U64(r, 1);
	CHECK_EQ_U64(n, NMAPS + 1);
	/* The end stays the end. */
	CHECK_EQ_U64(pm_maps_next(it, &m), 1);
out:
	pm_maps_close(it);
	pm_target_close(t);
	pm_ctx_free(ctx);
	free(longpath);
	rp_free_root(root);
	return T_PASS;
}

static int maps_iterator_errors(void)
{
	const struct pm_mapping *m;
	struct pm_target *t = NULL;
	struct pm_maps *it;
	struct pm_ctx *ctx = NULL;
	char *root = rp_new_root();

	if (!root)
		return t_skip("cannot create a temporary directory");
	CHECK_EQ_U64(rp_write_str(root, "proc/self/pagemap", "01234567"), 0);
	CHECK_EQ_U64(rp_write_str(root, "proc/self/maps",
				  "00400000-00401000 r--p 00000000 08:02 1 /a\n"
				  "00402000-00401000 r--p 00000000 08:02 1 /b\n"), 0);
	ctx = pm_ctx_new(root);
	t = ctx ? pm_target_open(ctx, 0) : NULL;
	CHECK(t != NULL);
	if (!t)
		goto out;
	it = pm_maps_open(t);
	CHECK(it != NULL);
	CHECK_EQ_U64(pm_maps_next(it, &m), 0);
	CHECK_EQ_U64(m->start, 0x400000);
	CHECK_EQ_U64(pm_maps_next(it, &m), -EINVAL);
	pm_maps_close(it);

	/* An empty maps file: at the end at once. */
	CHECK_EQ_U64(rp_write_str(root, "proc/self/maps", ""), 0);
	it = pm_maps_open(t);
	CHECK(it != NULL);
	CHECK_EQ_U64(pm_maps_next(it, &m), 1);
	pm_maps_close(it);

	/* A refused maps open replays its errno. */
	CHECK_EQ_U64(rp_write_str(root, "proc/self/maps.errno", "EACCES\n"), 0);
	errno = 0;
	it = pm_maps_open(t);
	CHECK(it == NULL);
	CHECK_EQ_U64(errno, EACCES);
	pm_maps_close(it);

	/* No maps file at all. */
	CHECK_EQ_U64(rp_truncate(root, "proc/self/maps.errno", 0), 0);
	{
		char p[4096];
		snprintf(p, sizeof(p), "%s/proc/self/maps", root);
		CHECK_EQ_U64(unlink(p), 0);
	}
	errno = 0;
	it = pm_maps_open(t);
	CHECK(it == NULL);
	CHECK_EQ_U64(errno, ENOENT);
	pm_maps_close(NULL);	/* NULL is fine */
out:
	pm_target_close(t);
	pm_ctx_free(ctx);
	rp_free_root(root);
	return T_PASS;
}

/* ---- pm_target_open on replayed roots ---- */

/* Open self under a fresh root prepared by @setup; returns errno (0 on success). */
static int open_errno(void (*setup)(const char *root))
{
	struct pm_target *t;
	struct pm_ctx *ctx;
	char *root = rp_new_root();
	int e;

	if (!root)
		return -1;
	setup(root);
	ctx = pm_ctx_new(root);
	if (!ctx) {
		rp_free_root(root);
		return -1;
	}
	errno = 0;
	t = pm_target_open(ctx, 0);
	e = t ? 0 : errno;
	pm_target_close(t);
	pm_ctx_free(ctx);
	rp_free_root(root);
	return e;
}

static void setup_eperm(const char *root)
{
	rp_write_stat(root, "proc/self/stat", 'S', 4194560);
	rp_write_str(root, "proc/self/maps", "");
	rp_write_str(root, "proc/self/pagemap.errno", "EPERM\n");
}

static void setup_eacces(const char *root)
{
	rp_write_stat(root, "proc/self/stat", 'S', 4194560);
	rp_write_str(root, "proc/self/pagemap.errno", "EACCES");
}

static void setup_errno_number(const char *root)
{
	rp_write_stat(root, "proc/self/stat", 'S', 4194560);
	rp_write_str(root, "proc/self/pagemap.errno", "13\n");
}

static void setup_errno_over_file(const char *root)
{
	/* The recorded errno wins over a file that exists too. */
	rp_write_stat(root, "proc/self/stat", 'S', 4194560);
	rp_write_str(root, "proc/self/pagemap", "\0\0\0\0\0\0\0\0");
	rp_write_str(root, "proc/self/pagemap.errno", "EPERM\n");
}

static void setup_kthread(const char *root)
{
	rp_write_stat(root, "proc/self/stat", 'S', 0x00200000 | 0x40);
	rp_write_str(root, "proc/self/pagemap", "");
}

static void setup_zombie(const char *root)
{
	rp_write_stat(root, "proc/self/stat", 'Z', 4194560);
	rp_write_str(root, "proc/self/pagemap", "");
}

static void setup_dead(const char *root)
{
	rp_write_stat(root, "proc/self/stat", 'X', 4194560);
	rp_write_str(root, "proc/self/pagemap", "");
}

static void setup_nothing(const char *root)
{
	rp_write_str(root, "proc/sys/kernel/osrelease", "6.18.0\n");
}

static void setup_stat_no_pagemap(const char *root)
{
	/* A capture with a stat but no pagemap and no record of why. */
	rp_write_stat(root, "proc/self/stat", 'S', 4194560);
}

static void setup_errno_esrch(const char *root)
{
	/* 6.x refuse to open the pagemap of a task without an mm: the capture recorded it. */
	rp_write_stat(root, "proc/self/stat", 'S', 4194560);
	rp_write_str(root, "proc/self/pagemap.errno", "ESRCH\n");
}

static void setup_running(const char *root)
{
	rp_write_stat(root, "proc/self/stat", 'R', 4194560);
	rp_write_str(root, "proc/self/pagemap", "");
}

static void setup_pagemap_only(const char *root)
{
	rp_write_str(root, "proc/self/pagemap", "");
}

static int target_open_errors(void)
{
	CHECK_EQ_U64(open_errno(setup_eperm), EPERM);
	CHECK_EQ_U64(open_errno(setup_eacces), EACCES);
	CHECK_EQ_U64(open_errno(setup_errno_number), EACCES);
	CHECK_EQ_U64(open_errno(setup_errno_over_file), EPERM);
	CHECK_EQ_U64(open_errno(setup_kthread), ESRCH);
	CHECK_EQ_U64(open_errno(setup_zombie), ESRCH);
	CHECK_EQ_U64(open_errno(setup_dead), ESRCH);
	CHECK_EQ_U64(open_errno(setup_nothing), ENOENT);
	CHECK_EQ_U64(open_errno(setup_errno_esrch), ESRCH);
	{
		int e = open_errno(setup_stat_no_pagemap);
		CHECK(e == ENOENT || e == ESRCH);
	}
	CHECK_EQ_U64(open_errno(setup_running), 0);
	CHECK_EQ_U64(open_errno(setup_pagemap_only), 0);
	return T_PASS;
}

static int proc_state(void)
{
	struct pm_ctx *ctx;
	char *root = rp_new_root();

	if (!root)
		return t_skip("cannot create a temporary directory");
	ctx = pm_ctx_new(root);
	CHECK(ctx != NULL);
	if (!ctx)
		goto out;
	CHECK_EQ_U64(pm_proc_state(ctx, 1234), PM_PROC_GONE);
	rp_write_stat(root, "proc/1234/stat", 'S', 4194560);
	CHECK_EQ_U64(pm_proc_state(ctx, 1234), PM_PROC_RUNNING);
	rp_write_stat(root, "proc/1234/stat", 'Z', 4194560);
	CHECK_EQ_U64(pm_proc_state(ctx, 1234), PM_PROC_ZOMBIE);
	rp_write_stat(root, "proc/1234/stat", 'S', 0x00208040);
	CHECK_EQ_U64(pm_proc_state(ctx, 1234), PM_PROC_KTHREAD);
	/* PF_KTHREAD wins over the state of an exiting kernel thread. */
	rp_write_stat(root, "proc/1234/stat", 'Z', 0x00200000);
	CHECK_EQ_U64(pm_proc_state(ctx, 1234), PM_PROC_KTHREAD);
	/* A real kthreadd line. */
	rp_write_str(root, "proc/1234/stat", "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 2 0 0\n");
	CHECK_EQ_U64(pm_proc_state(ctx, 1234), PM_PROC_KTHREAD);
	/* Truncated or garbled stat lines. */
	rp_write_str(root, "proc/1234/stat", "1234 (cmd");
	CHECK_EQ_U64(pm_proc_state(ctx, 1234), PM_PROC_GONE);
	rp_write_str(root, "proc/1234/stat", "1234 (cmd)");
	CHECK_EQ_U64(pm_proc_state(ctx, 1234), PM_PROC_GONE);
	rp_write_str(root, "proc/1234/stat", "");
	CHECK_EQ_U64(pm_proc_state(ctx, 1234), PM_PROC_GONE);
	/* Cut after its state: not a line the kernel writes, so no process (it was RUNNING, flags 0, where
	 * the live table refused the same line: one reader now). */
	rp_write_str(root, "proc/1234/stat", "1234 (cmd) S");
	CHECK_EQ_U64(pm_proc_state(ctx, 1234), PM_PROC_GONE);
	/* Self and a numbered PID read different files. */
	CHECK_EQ_U64(pm_proc_state(ctx, 0), PM_PROC_GONE);
	rp_write_stat(root, "proc/self/stat", 'R', 0);
	CHECK_EQ_U64(pm_proc_state(ctx, 0), PM_PROC_RUNNING);
	pm_ctx_free(ctx);
out:
	rp_free_root(root);
	return T_PASS;
}

static int target_open_pid(void)
{
	struct pm_target *t;
	struct pm_ctx *ctx;
	char *root = rp_new_root();

	if (!root)
		return t_skip("cannot create a temporary directory");
	rp_write_stat(root, "proc/4321/stat", 'S', 4194560);
	rp_write_str(root, "proc/4321/pagemap", "");
	ctx = pm_ctx_new(root);
	CHECK(ctx != NULL);
	if (!ctx)
		goto out;
	t = pm_target_open(ctx, 4321);
	CHECK(t != NULL);
	if (t)
		CHECK_EQ_U64(pm_target_pid(t), 4321);
	pm_target_close(t);
	errno = 0;
	t = pm_target_open(ctx, 4322);
	CHECK(t == NULL);
	CHECK_EQ_U64(errno, ENOENT);
	pm_target_close(NULL);
	pm_ctx_free(ctx);
out:
	rp_free_root(root);
	return T_PASS;
}

static int ctx_root_checks(void)
{
	struct pm_ctx *ctx;
	char *root = rp_new_root(), p[4096];

	if (!root)
		return t_skip("cannot create a temporary directory");
	errno = 0;
	snprintf(p, sizeof(p), "%s/nonexistent", root);
	CHECK(pm_ctx_new(p) == NULL);
	CHECK_EQ_U64(errno, ENOENT);
	rp_write_str(root, "file", "x");
	snprintf(p, sizeof(p), "%s/file", root);
	errno = 0;
	CHECK(pm_ctx_new(p) == NULL);
	CHECK_EQ_U64(errno, ENOTDIR);
	snprintf(p, sizeof(p), "%s///", root);
	ctx = pm_ctx_new(p);
	CHECK(ctx != NULL);
	if (ctx)
		CHECK_STR(pm_ctx_root(ctx), root);
	pm_ctx_free(ctx);
	pm_ctx_free(NULL);
	rp_free_root(root);
	return T_PASS;
}

T_MAIN(T(parse_real_lines), T(parse_named_anon), T(parse_named_anon_shmem), T(parse_no_newline), T(parse_deleted),
       T(parse_inode_limits), T(parse_hex_limits), T(parse_start_end), T(parse_hostile), T(parse_embedded_nul),
       T(maps_iterator_many), T(maps_iterator_errors), T(target_open_errors), T(proc_state), T(target_open_pid),
       T(ctx_root_checks))
