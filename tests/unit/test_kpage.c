/* test_kpage.c - the KPF table, -b filter parsing, names and letters, and batched kpage reads over replayed roots. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pages.h"
#include "../harness.h"
#include "replay.h"

#define B(n) (1ULL << (n))
#define ANON_PAGE 0x5868ULL	/* uptodate,lru,active,mmap,anonymous,swapbacked */

static int table_sane(void)
{
	const struct pm_kpf_info *t = pm_kpf_table(NULL);
	size_t n, i, stable = 0;

	pm_kpf_table(&n);
	CHECK(t != NULL && n > 40);
	for (i = 0; i < n; i++) {
		CHECK(t[i].name && t[i].name[0] && t[i].meaning && t[i].letter);
		CHECK(t[i].bit < 64);
		CHECK(t[i].internal == (t[i].bit >= 32));
		if (i)
			CHECK(t[i].bit > t[i - 1].bit);
		stable += t[i].bit <= 26;
	}
	CHECK_EQ_U64(stable, 27);	/* every uapi bit 0-26 */
	CHECK_EQ_U64(t[12].letter, 'a');
	CHECK_STR(t[12].name, "anonymous");
	return T_PASS;
}

static int describe_names(void)
{
	char buf[256], small[12];

	CHECK_EQ_U64(pm_kpf_describe(0, buf, sizeof(buf)), 0);
	CHECK_STR(buf, "");
	CHECK(pm_kpf_describe(ANON_PAGE, buf, sizeof(buf)) > 0);
	CHECK_STR(buf, "uptodate,lru,active,mmap,anonymous,swapbacked");
	pm_kpf_describe(B(30) | B(32) | B(63), buf, sizeof(buf));
	CHECK_STR(buf, "bit30,reserved,mmap_exclusive");
	CHECK_EQ_U64(pm_kpf_describe(ANON_PAGE, small, sizeof(small)), (uint64_t)-ENOSPC);
	CHECK_STR(small, "uptodate");	/* truncated at a name boundary, terminated */
	CHECK_EQ_U64(pm_kpf_describe(ANON_PAGE, small, 0), (uint64_t)-ENOSPC);
	CHECK_EQ_U64(pm_kpf_describe(~0ULL, buf, sizeof(buf)), (uint64_t)-ENOSPC);
	CHECK(strlen(buf) < sizeof(buf));
	return T_PASS;
}

static int letters(void)
{
	char buf[64], tiny[4];
	size_t n;

	pm_kpf_table(&n);
	pm_kpf_letters(ANON_PAGE, false, buf, sizeof(buf));
	CHECK_STR(buf, "___U_lA____Ma_b____________");
	pm_kpf_letters(0, true, buf, sizeof(buf));
	CHECK_EQ_U64(strlen(buf), n);
	pm_kpf_letters(B(32) | B(47), true, buf, sizeof(buf));
	CHECK(strchr(buf, 'r') != NULL && strchr(buf, 'd') != NULL);
	pm_kpf_letters(B(32), false, buf, sizeof(buf));
	CHECK(strchr(buf, 'r') == NULL);
	CHECK_STR(pm_kpf_letters(~0ULL, false, tiny, sizeof(tiny)), "LER");
	return T_PASS;
}

static int cook(void)
{
	const uint64_t head = B(15), tail = B(16), huge = B(17), thp = B(22);

	CHECK_EQ_U64(pm_kpf_cook(ANON_PAGE | B(32) | B(34), false), ANON_PAGE);
	CHECK_EQ_U64(pm_kpf_cook(ANON_PAGE | head | thp, false), ANON_PAGE | thp);
	CHECK_EQ_U64(pm_kpf_cook(tail | huge, false), tail | huge);
	CHECK_EQ_U64(pm_kpf_cook(ANON_PAGE | B(34), true), ANON_PAGE | B(47));
	CHECK_EQ_U64(pm_kpf_cook(B(34), true), B(34));	/* owner_2 of a file page stays */
	CHECK_EQ_U64(pm_kpf_cook(B(7) | B(6) | B(1), true), B(7) | B(50) | B(51));
	CHECK_EQ_U64(pm_kpf_cook(B(9), true), B(48));
	CHECK_EQ_U64(pm_kpf_cook(B(9) | B(8), true), B(9) | B(8));
	return T_PASS;
}

/* Parse @expr into a fresh filter and check @flags against it. */
static int match1(const char *expr, uint64_t flags)
{
	struct pm_kpf_filter f = { 0 };

	if (pm_kpf_parse(&f, expr) < 0)
		return -1;
	return pm_kpf_match(&f, flags);
}

static int parse_forms(void)
{
	CHECK_EQ_U64(match1("anon", ANON_PAGE), 1);	/* prefix: anonymous, not anon_exclusive */
	CHECK_EQ_U64(match1("anon", 0x28), 0);
	CHECK_EQ_U64(match1("slab,buddy", B(10)), 1);	/* any of */
	CHECK_EQ_U64(match1("slab,buddy", ANON_PAGE), 0);
	CHECK_EQ_U64(match1("anon,~M", B(12)), 1);	/* letters, negation */
	CHECK_EQ_U64(match1("anon,~M", ANON_PAGE), 0);
	CHECK_EQ_U64(match1("~lru", B(7)), 1);
	CHECK_EQ_U64(match1("~lru", ANON_PAGE), 0);
	CHECK_EQ_U64(match1("=buddy", B(10)), 1);	/* exact */
	CHECK_EQ_U64(match1("=buddy", B(10) | B(3)), 0);
	CHECK_EQ_U64(match1("=", 0), 1);	/* page-types: flags == 0 */
	CHECK_EQ_U64(match1("=", B(3)), 0);
	CHECK_EQ_U64(match1("lru,active=lru", 0x28), 1);	/* masked */
	CHECK_EQ_U64(match1("lru,active=lru", 0x68), 0);
	CHECK_EQ_U64(match1("lru,active=lru", 0x08), 0);
	CHECK_EQ_U64(match1("compound", B(16)), 1);
	CHECK_EQ_U64(match1("0x1000", ANON_PAGE), 1);	/* a numeric mask */
	CHECK_EQ_U64(match1("0x1000,0x4", 0x4), 1);
	CHECK_EQ_U64(match1("zero_page", B(24)), 1);
	CHECK_EQ_U64(match1("anon_exclusive", B(47)), 1);
	CHECK_EQ_U64(match1("r", B(32)), 0);	/* "r" is a prefix: referenced, as page-types */
	CHECK_EQ_U64(match1("H", B(15)), 1);	/* a colliding letter: the stable bit wins */
	CHECK_EQ_U64(match1("x", B(21)), 1);	/* a letter page-types rejects: ksm */
	return T_PASS;
}

/*
 * page-types' parse_bits_mask() and bit_mask_ok() from tools/mm/page-types.c,
 * restated on synthetic flags: each expression below is one page-types
 * accepts, with the (mask, bits) pair page-types computes for it.
 */
#define ALL (~0ULL)
static int page_types_ok(uint64_t mask, uint64_t bits, uint64_t flags)
{
	return bits == ALL ? (flags & mask) != 0 : (flags & mask) == bits;
}

static int page_types_exprs(void)
{
	static const struct {
		const char *expr;
		uint64_t mask, bits;
	} pt[] = {
		/* One lower-case letter is a prefix of a name, first in bit order. */
		{ "l", B(0), ALL }, { "e", B(1), ALL }, { "r", B(2), ALL }, { "u", B(3), ALL },
		{ "d", B(4), ALL }, { "a", B(6), ALL }, { "s", B(7), ALL }, { "w", B(8), ALL },
		{ "b", B(10), ALL }, { "m", B(11), ALL }, { "c", B(15) | B(16), ALL }, { "h", B(17), ALL },
		{ "n", B(20), ALL }, { "k", B(21), ALL }, { "t", B(22), ALL }, { "o", B(23), ALL },
		{ "z", B(24), ALL }, { "i", B(25), ALL }, { "p", B(26), ALL }, { "f", B(40), ALL },
		/* Prefixes and names. */
		{ "anon", B(12), ALL }, { "anon_", B(47), ALL }, { "sw", B(13), ALL }, { "swapb", B(14), ALL },
		{ "compound_t", B(16), ALL }, { "co", B(15) | B(16), ALL }, { "un", B(18), ALL },
		{ "uncached", B(39), ALL }, { "re", B(2), ALL }, { "res", B(32), ALL }, { "mmap_", B(63), ALL },
		/* Numbers, alone and in lists. */
		{ "0x1000", 0x1000, ALL }, { "1", B(0), ALL }, { "0x10,anon", 0x10 | B(12), ALL }, { "0", 0, ALL },
		/* The four forms. */
		{ "u,a", B(3) | B(6), ALL }, { "u,~a", B(3) | B(6), B(3) }, { "=u,a", ALL, B(3) | B(6) },
		{ "u,a=u", B(3) | B(6), B(3) }, { "lru,active=lru", B(5) | B(6), B(5) },
		/* Corners page-types accepts. */
		{ "", 0, ALL }, { "lru,", B(5), ALL }, { ",lru", B(5), ALL }, { "a,,b", B(6) | B(10), ALL },
		{ "~", 0, 0 }, { "lru,~lru", B(5), B(5) }, { "lru=", B(5), 0 }, { "=", ALL, 0 },
		{ "=lru,~active", ALL, B(5) }, { "~lru=lru", 0, B(5) }, { "=lru=active", ALL, B(5) },
		{ "lru=active", B(5), B(6) }, { "=0xffffffffffffffff", ALL, ALL },
	};
	static const uint64_t samples[] = {
		0, B(0), B(2), B(3), B(3) | B(6), B(5), B(5) | B(6), B(6), B(10), B(12), 0x5868, 0x5828,
		B(15), B(16), B(15) | B(17), B(47) | B(12), B(32), B(39), B(63), 0x10, ALL, B(3) | B(5),
	};
	size_t i, j;

	for (i = 0; i < sizeof(pt) / sizeof(pt[0]); i++) {
		struct pm_kpf_filter f = { 0 };

		if (pm_kpf_parse(&f, pt[i].expr) < 0) {
			printf("  refused page-types expression \"%s\"\n", pt[i].expr);
			t_failed_checks++;
			continue;
		}
		for (j = 0; j < sizeof(samples) / sizeof(samples[0]); j++) {
			if (pm_kpf_match(&f, samples[j]) != page_types_ok(pt[i].mask, pt[i].bits, samples[j])) {
				printf("  \"%s\" on %#llx: page-types says %d\n", pt[i].expr,
				       (unsigned long long)samples[j], page_types_ok(pt[i].mask, pt[i].bits, samples[j]));
				t_failed_checks++;
			}
		}
	}
	return T_PASS;
}

static int parse_conjunction(void)
{
	struct pm_kpf_filter f = { 0 };
	int i;

	CHECK(pm_kpf_match(&f, 0));
	CHECK(pm_kpf_match(NULL, 123));
	CHECK_EQ_U64(pm_kpf_parse(&f, "anonymous"), 0);
	CHECK_EQ_U64(pm_kpf_parse(&f, "~active"), 0);
	CHECK(pm_kpf_match(&f, 0x5828));
	CHECK(!pm_kpf_match(&f, ANON_PAGE));
	CHECK(!pm_kpf_match(&f, 0x28));
	for (i = 2; i < PM_KPF_MAX_TERMS; i++)
		CHECK_EQ_U64(pm_kpf_parse(&f, "lru"), 0);
	CHECK_EQ_U64(pm_kpf_parse(&f, "lru"), (uint64_t)-E2BIG);
	CHECK_EQ_U64(f.n, PM_KPF_MAX_TERMS);
	return T_PASS;
}

static int parse_hostile(void)
{
	static const char *const bad[] = {
		/* page-types refuses these too ... */
		"~~a", "nosuch", "anonymous_", "a b", "\x01", "\xff\xfe", "compoundx", "L,x,zz", "=nosuch",
		/* ... and takes these as whatever strtoll made of their start: we refuse them. */
		"0x", "0xzz", "99999999999999999999999", "-1", "12abc",
	};
	struct pm_kpf_filter f = { 0 };
	char *big;
	size_t i;

	CHECK_EQ_U64(pm_kpf_parse(&f, NULL), (uint64_t)-EINVAL);
	CHECK_EQ_U64(pm_kpf_parse(NULL, "a"), (uint64_t)-EINVAL);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = pm_kpf_parse(&f, bad[i]);
		if (r != -EINVAL)
			printf("  accepted \"%s\" (%d)\n", bad[i], r);
		CHECK_EQ_U64(r, (uint64_t)-EINVAL);
	}
	CHECK_EQ_U64(f.n, 0);	/* nothing added by a failed parse */
	big = malloc(200001);
	if (!big)
		return T_FAIL;
	for (i = 0; i < 200000; i += 2)
		memcpy(big + i, "a,", 2);
	big[199999] = '\0';	/* "a,a,...,a" */
	CHECK_EQ_U64(pm_kpf_parse(&f, big), 0);
	memset(big, 'x', 200000);
	big[200000] = '\0';
	CHECK_EQ_U64(pm_kpf_parse(&f, big), (uint64_t)-EINVAL);
	free(big);
	return T_PASS;
}

/* ---- replayed roots ---- */

#define NPFN 200000ULL

static uint64_t want_flags(uint64_t pfn) { return pfn * 3 + 1; }
static uint64_t want_count(uint64_t pfn) { return pfn % 5; }
static uint64_t want_cgroup(uint64_t pfn) { return 1000 + pfn / 1000; }

/* Write NPFN words of @fn to ROOT/REL with one pwrite at 0. */
static int put_file(const char *root, const char *rel, uint64_t (*fn)(uint64_t))
{
	uint64_t *w = malloc(NPFN * sizeof(*w)), i;
	int r;

	if (!w)
		return -ENOMEM;
	for (i = 0; i < NPFN; i++)
		w[i] = fn(i);
	r = rp_put_entries(root, rel, 0, w, NPFN);
	free(w);
	return r;
}

static char *make_root(bool flags_refused)
{
	char *root = rp_new_root();

	if (!root || rp_write_str(root, "proc/sys/kernel/osrelease", "6.12.0\n") ||
	    put_file(root, "proc/kpagecount", want_count) || put_file(root, "proc/kpagecgroup", want_cgroup) ||
	    (flags_refused ? rp_write_str(root, "proc/kpageflags.errno", "EACCES\n") :
			     put_file(root, "proc/kpageflags", want_flags))) {
		rp_free_root(root);
		return NULL;
	}
	return root;
}

static int kpage_read_runs(void)
{
	char *root = make_root(false);
	struct pm_ctx *ctx = root ? pm_ctx_new(root) : NULL;
	struct pm_kpage *k = ctx ? pm_kpage_open(ctx) : NULL;
	uint64_t end = 0, *f = calloc(NPFN + 8, 8), *c = calloc(NPFN + 8, 8), i;
	int bad = 0;

	CHECK(k != NULL && f && c);
	if (!k || !f || !c)
		goto out;
	CHECK_EQ_U64(pm_kpage_status(k, PM_KPAGE_FLAGS), 0);
	CHECK_EQ_U64(pm_kpage_end(k, &end), 0);
	CHECK_EQ_U64(end, NPFN);
	CHECK_EQ_U64(pm_kpage_read(k, 0, NPFN + 8, f, c, NULL), 0);	/* crosses the end, in batches */
	for (i = 0; i < NPFN && !bad; i++)
		bad = f[i] != want_flags(i) || c[i] != want_count(i);
	CHECK(!bad);
	CHECK_EQ_U64(f[NPFN + 3], B(PM_KPF_NOPAGE));
	CHECK_EQ_U64(c[NPFN + 3], 0);
	CHECK_EQ_U64(pm_kpage_read(k, 12345, 1, NULL, NULL, f), 0);
	CHECK_EQ_U64(f[0], want_cgroup(12345));
	CHECK_EQ_U64(pm_kpage_read(k, 5, 0, f, c, f), 0);
	CHECK_EQ_U64(pm_kpage_read(k, UINT64_MAX - 1, 4, f, NULL, NULL), (uint64_t)-EINVAL);
	CHECK_EQ_U64(pm_kpage_read(k, NPFN * 4, 2, f, NULL, NULL), 0);	/* far past the end */
	CHECK_EQ_U64(f[1], B(PM_KPF_NOPAGE));
out:
	free(f);
	free(c);
	pm_kpage_close(k);
	pm_ctx_free(ctx);
	rp_free_root(root);
	return T_PASS;
}

static int kpage_lookup_batches(void)
{
	char *root = make_root(false);
	struct pm_ctx *ctx = root ? pm_ctx_new(root) : NULL;
	struct pm_kpage *k = ctx ? pm_kpage_open(ctx) : NULL;
	size_t n = 150000, i, bad = 0;
	struct pm_frame *fr = calloc(n, sizeof(*fr));
	uint64_t before;

	CHECK(k != NULL && fr);
	if (!k || !fr)
		goto out;
	/* Scattered, descending, with repeats, and some past the end: the caller's order must survive. */
	for (i = 0; i < n; i++)
		fr[i].pfn = i % 7 == 6 ? NPFN + i : (n - i) * 13 % NPFN;
	fr[1].pfn = fr[0].pfn;
	before = pmi_kpage_nreads(k);
	CHECK_EQ_U64(pm_kpage_lookup(k, fr, n), 0);
	for (i = 0; i < n; i++) {
		uint64_t p = fr[i].pfn;
		if (p >= NPFN)
			bad += fr[i].flags != B(PM_KPF_NOPAGE) || fr[i].count || fr[i].cgroup;
		else
			bad += fr[i].flags != want_flags(p) || fr[i].count != want_count(p) ||
			       fr[i].cgroup != want_cgroup(p);
	}
	CHECK_EQ_U64(bad, 0);
	/* Never one pread per page: a few runs per 64Ki batch and file. */
	CHECK(pmi_kpage_nreads(k) - before < 100);
	printf("  %zu frames looked up with %llu preads\n", n, (unsigned long long)(pmi_kpage_nreads(k) - before));
	CHECK_EQ_U64(pm_kpage_lookup(k, NULL, 0), 0);
	CHECK_EQ_U64(pm_kpage_lookup(k, NULL, 3), (uint64_t)-EINVAL);
out:
	free(fr);
	pm_kpage_close(k);
	pm_ctx_free(ctx);
	rp_free_root(root);
	return T_PASS;
}

/* pm_kpage_select: lookups read only the files asked for (fewer preads), the others' fields read 0. */
static int kpage_select_files(void)
{
	char *root = make_root(false);
	struct pm_ctx *ctx = root ? pm_ctx_new(root) : NULL;
	struct pm_kpage *k = ctx ? pm_kpage_open(ctx) : NULL;
	struct pm_frame fr[3] = { { .pfn = 5 }, { .pfn = 9 }, { .pfn = 5000 } };
	uint64_t before, all, one;

	CHECK(k != NULL);
	if (!k)
		goto out;
	before = pmi_kpage_nreads(k);
	CHECK_EQ_U64(pm_kpage_lookup(k, fr, 3), 0);
	all = pmi_kpage_nreads(k) - before;
	CHECK_EQ_U64(pm_kpage_select(k, PM_KPAGE_BIT(PM_KPAGE_COUNT)), 0);
	before = pmi_kpage_nreads(k);
	CHECK_EQ_U64(pm_kpage_lookup(k, fr, 3), 0);
	one = pmi_kpage_nreads(k) - before;
	CHECK_EQ_U64(all, 3 * one);
	CHECK_EQ_U64(fr[0].flags, 0);
	CHECK_EQ_U64(fr[0].cgroup, 0);
	CHECK_EQ_U64(fr[0].count, want_count(5));
	CHECK_EQ_U64(fr[2].count, want_count(5000));
	CHECK_EQ_U64(pm_kpage_select(k, 0), (uint64_t)-EINVAL);
	CHECK_EQ_U64(pm_kpage_select(k, 8), (uint64_t)-EINVAL);
	CHECK_EQ_U64(pm_kpage_select(NULL, 1), (uint64_t)-EINVAL);
out:
	pm_kpage_close(k);
	pm_ctx_free(ctx);
	rp_free_root(root);
	return T_PASS;
}

static int kpage_partial_access(void)
{
	char *root = make_root(true), *empty = rp_new_root();
	struct pm_ctx *ctx = root ? pm_ctx_new(root) : NULL, *ectx = empty ? pm_ctx_new(empty) : NULL;
	struct pm_kpage *k = ctx ? pm_kpage_open(ctx) : NULL;
	struct pm_frame fr[2] = { { .pfn = 7, .flags = 99 }, { .pfn = 3 } };
	uint64_t w;

	CHECK(k != NULL);
	if (k) {
		CHECK_EQ_U64(pm_kpage_status(k, PM_KPAGE_FLAGS), (uint64_t)-EACCES);
		CHECK_EQ_U64(pm_kpage_status(k, PM_KPAGE_COUNT), 0);
		CHECK_EQ_U64(pm_kpage_status(k, 7), (uint64_t)-EINVAL);
		CHECK_EQ_U64(pm_kpage_read(k, 0, 1, &w, NULL, NULL), (uint64_t)-EACCES);
		CHECK_EQ_U64(pm_kpage_lookup(k, fr, 2), 0);
		CHECK_EQ_U64(fr[0].flags, 0);
		CHECK_EQ_U64(fr[0].count, want_count(7));
		CHECK_EQ_U64(fr[1].cgroup, want_cgroup(3));
	}
	CHECK(ectx != NULL);
	errno = 0;
	CHECK(ectx && pm_kpage_open(ectx) == NULL);
	CHECK_EQ_U64(errno, ENOENT);
	pm_kpage_close(NULL);
	pm_kpage_close(k);
	pm_ctx_free(ctx);
	pm_ctx_free(ectx);
	rp_free_root(root);
	rp_free_root(empty);
	return T_PASS;
}

T_MAIN(T(table_sane), T(describe_names), T(letters), T(cook), T(parse_forms), T(page_types_exprs), T(parse_conjunction), T(parse_hostile),
       T(kpage_read_runs), T(kpage_lookup_batches), T(kpage_select_files), T(kpage_partial_access))
