/* test_diff.c - pm_diff_range and pm_diff_process on two synthetic trees: each category, mapping matching, hostile B. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pagemap.h"
#include "../harness.h"
#include "replay.h"

#define P (1ULL << 63)
#define S (1ULL << 62)
#define X (1ULL << 56)
#define D (1ULL << 55)
#define W (1ULL << 57)
#define F (1ULL << 61)
#define SWP(type, off) (S | ((uint64_t)(off) << 5) | (type))
#define MAPS16 "00400000-00410000 rw-p 00000000 00:00 0 \n"
#define MAPSF "00400000-00410000 rw-p 00000000 08:01 1234 /usr/lib/libx.so\n"	/* private file mapping */

/* A tree of one process (self) with @maps and entries @e[0..n) from virtual page 0x400 on. */
static char *tree(uint64_t psize, const char *maps, const uint64_t *e, size_t n, uint64_t pagemap_end_vpn)
{
	char *root = rp_new_root(), feat[256];
	static const uint64_t zero = 0;

	if (!root)
		return NULL;
	snprintf(feat, sizeof(feat), "kernel=6.18.0\npage_size=%llu\nlayout=current\npfn_view=visible\n",
		 (unsigned long long)psize);
	if (rp_write_str(root, "pagemap-features", feat) || rp_write_str(root, "proc/sys/kernel/osrelease", "6.18.0\n") ||
	    rp_write_str(root, "proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n/dev/x partition 1 0 -2\n") ||
	    rp_write_stat(root, "proc/self/stat", 'S', 4194560) || rp_write_str(root, "proc/self/maps", maps) ||
	    rp_put_entries(root, "proc/self/pagemap", 0x400, e, n) ||
	    rp_put_entries(root, "proc/self/pagemap", pagemap_end_vpn - 1, &zero, 1)) {
		rp_free_root(root);
		return NULL;
	}
	return root;
}

struct pair {
	char *ra, *rb;
	struct pm_ctx *ca, *cb;
	struct pm_target *a, *b;
};

static int pair_open(struct pair *p)
{
	if (!p->ra || !p->rb || !(p->ca = pm_ctx_new(p->ra)) || !(p->cb = pm_ctx_new(p->rb)))
		return -1;
	p->a = pm_target_open(p->ca, 0);
	p->b = pm_target_open(p->cb, 0);
	return p->a && p->b ? 0 : -1;
}

static void pair_close(struct pair *p)
{
	pm_target_close(p->a);
	pm_target_close(p->b);
	pm_ctx_free(p->ca);
	pm_ctx_free(p->cb);
	rp_free_root(p->ra);
	rp_free_root(p->rb);
}

/*
 * What proves a write on a page present in both, and what does not: the
 * exclusive bit gained on the same frame (a sharer left: two readers of a
 * file, one killed); a page-cache page on another frame (reclaimed and read
 * again); an exclusive anonymous page on another frame (migration, or a fork
 * and a write and the child's exit between the snapshots) are not writes. A
 * private file page become anonymous, soft-dirty gained on another frame and
 * a shared anonymous page become exclusive on another frame are.
 */
static int evidence(void)
{
	static const uint64_t a[] = { P | F | 0x1000, P | F | 0x1001, P | X | 0x1002, P | F | X | 0x1003, P | X | 0x1004,
				      P | 0x1005, P | F | 0x1006 };
	static const uint64_t b[] = { P | F | X | 0x1000, P | F | X | 0x2001, P | X | 0x2002, P | X | 0x2003,
				      P | X | D | 0x2004, P | X | 0x2005, P | F | 0x1006 };
	struct pair p = { .ra = tree(4096, MAPSF, a, 7, 0x410), .rb = tree(4096, MAPSF, b, 7, 0x410) };
	struct pm_diff_bytes d;

	if (pair_open(&p) < 0) {
		pair_close(&p);
		return t_skip("cannot build the trees");
	}
	CHECK_EQ_U64(pm_diff_range(p.a, p.b, 0x400000, 0x410000, &d), 0);
	CHECK_EQ_U64(d.written, 3 * 4096);	/* file to anonymous, soft-dirty gained, shared to exclusive */
	CHECK_EQ_U64(d.moved, 2 * 4096);	/* page cache on another frame, exclusive on another frame */
	CHECK_EQ_U64(d.appeared + d.freed + d.swapout + d.swapin + d.uffdwp, 0);
	pair_close(&p);
	return T_PASS;
}

/* One page per category, and one of each kind of "written". */
static int categories(void)
{
	static const uint64_t a[] = { 0, P | X | 0x1001, P | X | 0x1002, SWP(0, 2), P | 0x1004, P | X | 0x1005,
				      P | 0x1006, P | X | 0x1007, P | X | 0x1008, P | X | 0x1009 };
	static const uint64_t b[] = { P | X | 0x1000, 0, SWP(0, 1), P | X | 0x2003, P | X | 0x2004, P | X | 0x2005,
				      P | X | 0x1006, P | X | D | 0x1007, P | X | W | 0x1008, P | X | 0x1009 };
	struct pair p = { .ra = tree(4096, MAPS16, a, 10, 0x410), .rb = tree(4096, MAPS16, b, 10, 0x410) };
	struct pm_diff_bytes d, sum = { 0 };

	if (pair_open(&p) < 0) {
		pair_close(&p);
		return t_skip("cannot build the trees");
	}
	CHECK_EQ_U64(pm_diff_range(p.a, p.b, 0x400000, 0x410000, &d), 0);
	CHECK_EQ_U64(d.appeared, 4096);
	CHECK_EQ_U64(d.freed, 4096);
	CHECK_EQ_U64(d.swapout, 4096);
	CHECK_EQ_U64(d.swapin, 4096);
	CHECK_EQ_U64(d.written, 2 * 4096);	/* CoW broken, soft-dirty gained (exclusive gained: no write) */
	CHECK_EQ_U64(d.moved, 4096);
	CHECK_EQ_U64(d.uffdwp, 4096);
	CHECK_EQ_U64(d.thp_formed + d.thp_split, 0);
	CHECK(pm_diff_bytes_any(&d));
	pm_diff_bytes_add(&sum, &d);
	pm_diff_bytes_add(&sum, &d);
	CHECK_EQ_U64(sum.written, 4 * 4096);
	/* A against itself: nothing; a part of the range: only its pages. */
	CHECK_EQ_U64(pm_diff_range(p.a, p.a, 0x400000, 0x410000, &d), 0);
	CHECK(!pm_diff_bytes_any(&d));
	CHECK_EQ_U64(pm_diff_range(p.a, p.b, 0x401000, 0x403000, &d), 0);
	CHECK_EQ_U64(d.freed + d.swapout, 2 * 4096);
	CHECK_EQ_U64(d.appeared + d.swapin + d.written + d.moved + d.uffdwp, 0);
	CHECK_EQ_U64(pm_diff_range(p.a, p.b, 0x403000, 0x402000, &d), -EINVAL);
	pair_close(&p);
	return T_PASS;
}

struct rows {
	int n;
	enum pm_diff_status st[8];
	uint64_t start[8], end[8];
	char path[8][32];
};

static int collect(void *data, const struct pm_diff_row *row)
{
	struct rows *r = data;

	if (r->n == 8)
		return -E2BIG;
	r->st[r->n] = row->status;
	r->start[r->n] = row->map->start;
	r->end[r->n] = row->map->end;
	snprintf(r->path[r->n], sizeof(r->path[0]), "%s", row->map->path);
	r->n++;
	return 0;
}

/* Matched by start, end, offset, protection and path; anything else is unmapped + mapped. */
static int matching(void)
{
	static const char ma[] = MAPS16 "00500000-00501000 r--p 00000000 00:00 0 \n"
					"00700000-00701000 r--p 00001000 08:01 7 /lib/x.so\n";
	static const char mb[] = MAPS16 "00500000-00502000 r--p 00000000 00:00 0 \n"
					"00600000-00601000 rw-p 00000000 00:00 0 \n"
					"00700000-00701000 r--p 00001000 08:01 7 /lib/y.so\n";
	static const uint64_t e[] = { P | X | 0x1000 };
	struct pair p = { .ra = tree(4096, ma, e, 1, 0x701), .rb = tree(4096, mb, e, 1, 0x701) };
	struct rows r = { 0 };
	static const enum pm_diff_status want[] = { PM_DIFF_MATCHED, PM_DIFF_UNMAPPED, PM_DIFF_MAPPED, PM_DIFF_MAPPED,
						    PM_DIFF_UNMAPPED, PM_DIFF_MAPPED };
	static const uint64_t wstart[] = { 0x400000, 0x500000, 0x500000, 0x600000, 0x700000, 0x700000 };
	int i;

	if (pair_open(&p) < 0) {
		pair_close(&p);
		return t_skip("cannot build the trees");
	}
	CHECK_EQ_U64(pm_diff_process(p.a, p.b, collect, &r), 0);
	CHECK_EQ_U64(r.n, 6);
	for (i = 0; i < r.n && i < 6; i++) {
		CHECK_EQ_U64(r.st[i], want[i]);
		CHECK_EQ_U64(r.start[i], wstart[i]);
	}
	CHECK_EQ_U64(r.end[2], 0x502000);
	CHECK_STR(r.path[4], "/lib/x.so");
	CHECK_STR(r.path[5], "/lib/y.so");
	/* The callback's non-zero return stops the diff and comes back. */
	r.n = 8;
	CHECK_EQ_U64(pm_diff_process(p.a, p.b, collect, &r), -E2BIG);
	pair_close(&p);
	return T_PASS;
}

/* B's pagemap ends inside its mapping, B has another page size: errors, never a crash or a silent answer. */
static int hostile(void)
{
	static const uint64_t e[] = { P | X | 0x1000, P | X | 0x1001 };
	struct pair p = { .ra = tree(4096, MAPS16, e, 2, 0x410), .rb = tree(4096, MAPS16, e, 2, 0x410) };
	struct pair q = { .ra = tree(4096, MAPS16, e, 2, 0x410),
			  .rb = tree(16384, MAPS16, e, 2, 0x410) };
	struct pm_diff_bytes d;
	struct rows r = { 0 };

	if (!p.rb || rp_truncate(p.rb, "proc/self/pagemap", 0x404 * 8) < 0 || pair_open(&p) < 0 || pair_open(&q) < 0) {
		pair_close(&p);
		pair_close(&q);
		return t_skip("cannot build the trees");
	}
	CHECK_EQ_U64(pm_diff_range(p.a, p.b, 0x400000, 0x410000, &d), -EBADMSG);
	CHECK(pm_ctx_tree_error(p.cb) != NULL);
	CHECK_EQ_U64(pm_diff_process(p.a, p.b, collect, &r), -EBADMSG);
	CHECK_EQ_U64(pm_diff_range(q.a, q.b, 0x400000, 0x410000, &d), -EINVAL);
	CHECK_EQ_U64(pm_diff_process(q.a, q.b, collect, &r), -EINVAL);
	pair_close(&p);
	pair_close(&q);
	return T_PASS;
}

T_MAIN(T(categories), T(evidence), T(matching), T(hostile))
