/*
 * snapshot_frames.c - a snapshot's frames: how their numbers are written (kept, dropped or keyed:
 * pm_snapshot_set_frames), and the join, the kpage words of the frames a process maps, each once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base.h"
#include "snapshot.h"

#define PMI_BATCH	SNAP_READ_WORDS
#define FRAME_GAP	32u		/* frames between two pieces read along rather than a read each: a kpage
				   word costs the kernel tens of ns, a pread() some microseconds */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_moved(const void *a, const void *b)
{
	return cmp_u64(a, b);	/* by index, the first member */
}

/*
 * Keyed modes: the words of the columns, at their permuted indices, sorted
 * (so the stream's extents stay long where the permutation keeps frames
 * together: keyed-block), then given to the stream by runs of consecutive
 * indices through @buf (a column per SNAP_READ_WORDS words).
 */
static int frames_put_moved(struct snap_frames *fr, struct moved *mv, size_t n, uint64_t *buf)
{
	const uint64_t *cols[3];
	size_t i = 0, j, k;
	unsigned c;
	int r = 0;

	qsort(mv, n, sizeof(*mv), cmp_moved);
	for (c = 0; c < fr->ncol; c++)
		cols[c] = buf + c * PMI_BATCH;
	while (i < n && !r) {
		for (j = i + 1; j < n && j - i < PMI_BATCH && mv[j].index == mv[j - 1].index + 1; j++)
			;
		for (k = i; k < j; k++)
			for (c = 0; c < fr->ncol; c++)
				buf[c * PMI_BATCH + (k - i)] = mv[k].word[c];
		r = pmi_snap_ws_add_cols(fr->joint, mv[i].index, cols, j - i);
		i = j;
	}
	return r;
}

static int cmp_frun(const void *a, const void *b)
{
	return cmp_u64(a, b);	/* by start, the first member */
}

/* *@buf holds at least @need runs (*@cap now), its first @keep kept; blocks of a MiB or more huge-page backed. */
static int frun_room(struct frun **buf, size_t *cap, size_t need, size_t keep)
{
	size_t nc = *cap ? *cap : 4096;
	struct frun *t;

	if (need <= *cap)
		return 0;
	while (nc < need)
		nc *= 2;
	if (!(t = pmi_snap_regrow(*buf, *cap * sizeof(*t), keep * sizeof(*t), nc * sizeof(*t), 1)))
		return -ENOMEM;
	*buf = t;
	*cap = nc;
	return 0;
}

#define RADIX_BITS	11u	/* 2048 counters, 16 KiB: a pass in L1 */

/*
 * @run's @n runs by start, the sorted array returned: @run or @tmp (room for
 * @n). An LSD radix sort, RADIX_BITS a pass, as many passes as the starts
 * have bits, a pass whose digit every start shares left out. glibc's qsort
 * (a merge sort through a malloc'd copy) of the 476,052 runs of a 4 GiB
 * process on scattered frames took 10 % of its snapshot, the copy's page
 * faults a further 2 %. The order of runs with one start does not matter:
 * frames_unseen joins them.
 */
static struct frun *sort_runs(struct frun *run, struct frun *tmp, size_t n)
{
	const uint64_t mask = (1u << RADIX_BITS) - 1;
	size_t count[1u << RADIX_BITS], i, sum, c;
	struct frun *src = run, *dst = tmp, *t;
	uint64_t all = 0;
	unsigned shift;

	for (i = 0; i < n; i++)
		all |= run[i].start;
	for (shift = 0; shift < 64 && all >> shift; shift += RADIX_BITS) {
		memset(count, 0, sizeof(count));
		for (i = 0; i < n; i++)
			count[src[i].start >> shift & mask]++;
		if (count[src[0].start >> shift & mask] == n)
			continue;
		for (i = 0, sum = 0; i <= mask; i++) {
			c = count[i];
			count[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			dst[count[src[i].start >> shift & mask]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	return src;
}

/* The first index in [@i, @end) whose bit in @m is @set, else @end (a word at a time). */
static uint64_t next_bit(const uint64_t *m, uint64_t i, uint64_t end, bool set)
{
	while (i < end) {
		uint64_t x = (set ? m[i / 64] : ~m[i / 64]) >> (i % 64);
		if (x)
			return i + (uint64_t)__builtin_ctzll(x) < end ? i + (uint64_t)__builtin_ctzll(x) : end;
		i = (i / 64 + 1) * 64;
	}
	return end;
}

static void set_bits(uint64_t *m, uint64_t a, uint64_t b)
{
	for (; a < b && a % 64; a++)
		m[a / 64] |= 1ULL << (a % 64);
	for (; a + 64 <= b; a += 64)
		m[a / 64] = ~0ULL;
	for (; a < b; a++)
		m[a / 64] |= 1ULL << (a % 64);
}

/* Append [@start, @start + @n) to @todo, in pieces of at most PMI_BATCH frames (a read's buffer). */
static int todo_push(struct frun **todo, size_t *len, size_t *cap, uint64_t start, uint64_t n)
{
	int r;

	while (n) {
		uint64_t k = n < PMI_BATCH ? n : PMI_BATCH;
		if (*len == *cap && (r = frun_room(todo, cap, *len + 1, *len)))
			return r;
		(*todo)[(*len)++] = (struct frun){ start, k };
		start += k;
		n -= k;
	}
	return 0;
}

/*
 * The bitmap of frames written (fr->seen), with the first batch's frames
 * marked. Touched all over by scattered frames: huge-page backed from 256
 * KiB (8 GiB of RAM) on, where pmi_snap_big_alloc would malloc up to 1 MiB
 * (24 GiB of RAM: 819 KiB, 200 page faults in the memset).
 */
static int seen_alloc(struct snap_frames *fr)
{
	size_t len = (fr->end + 63) / 64 * 8, i;

	if (!(fr->seen = pmi_snap_dense_alloc(len)))
		return -ENOMEM;
	memset(fr->seen, 0, len);
	for (i = 0; i < fr->nfirst; i++)
		if (fr->first[i].start < fr->end)
			set_bits(fr->seen, fr->first[i].start,
				 fr->first[i].start + fr->first[i].n < fr->end ? fr->first[i].start + fr->first[i].n : fr->end);
	free(fr->first);
	fr->first = NULL;
	fr->nfirst = 0;
	return 0;
}

/*
 * The frames of @run (sorted here) whose kpage words are not written yet,
 * as disjoint ascending pieces in fr->todo; they are marked written. Each
 * frame's words once per file: a frame met again (a process sharing it with
 * one written earlier) keeps the words read first. Read twice, a count or
 * flag may have changed meanwhile, and two words at one index would replay
 * one way and unscramble the other. The first batch has met nothing yet:
 * its runs are kept, in fewer bytes than the bitmap, and marked when a
 * second batch comes (seen_alloc). A snapshot of one small process makes
 * no bitmap: its clearing, a huge page and a memset of all RAM's bits, cost
 * more than the process's frames.
 */
static int frames_unseen(struct snap_frames *fr, struct frun *run, size_t nrun, size_t *ntodo)
{
	size_t len = (fr->end + 63) / 64 * 8, i, j;
	bool keep = false;
	uint64_t a, b, e;
	int r;

	if (!fr->seen && fr->end && fr->end <= (1ULL << 40)) {
		if (!fr->flushed && nrun * sizeof(*run) < len)
			keep = true;
		else if ((r = seen_alloc(fr)))
			return r;
	}
	fr->flushed = true;
	if (nrun < 1024) {
		qsort(run, nrun, sizeof(*run), cmp_frun);
	} else {	/* the list's room too: a piece a run, most often */
		if ((r = frun_room(&fr->sorted, &fr->sorted_cap, nrun, 0)) ||
		    (r = frun_room(&fr->todo, &fr->todo_cap, nrun + nrun / 4, 0)))
			return r;
		run = sort_runs(run, fr->sorted, nrun);
	}
	for (i = 1, j = 0; i < nrun; i++) {	/* overlapping (a frame mapped twice) or adjacent runs: one */
		if (run[i].start <= run[j].start + run[j].n) {
			b = run[i].start + run[i].n;
			run[j].n = b > run[j].start + run[j].n ? b - run[j].start : run[j].n;
		} else {
			run[++j] = run[i];
		}
	}
	nrun = nrun ? j + 1 : 0;
	if (keep && nrun) {
		if (!(fr->first = malloc(nrun * sizeof(*run))))
			return -ENOMEM;
		memcpy(fr->first, run, nrun * sizeof(*run));
		fr->nfirst = nrun;
	}
	*ntodo = 0;
	for (i = 0; i < nrun; i++) {
		a = run[i].start;
		b = run[i].start + run[i].n;
		e = fr->seen ? (b < fr->end ? b : fr->end) : a;	/* frames past the files' end are never seen */
		while (a < e) {
			uint64_t s = next_bit(fr->seen, a, e, false), t = next_bit(fr->seen, s, e, true);
			if (s < t && ((r = todo_push(&fr->todo, ntodo, &fr->todo_cap, s, t - s))))
				return r;
			if (s < t)
				set_bits(fr->seen, s, t);
			a = t;
		}
		if (a < b && (r = todo_push(&fr->todo, ntodo, &fr->todo_cap, a, b - a)))
			return r;
	}
	return 0;
}

/*
 * A large folio among @n kpageflags words (THP, mTHP, hugetlb, large page
 * cache: their pages are compound).
 */
static bool any_large(const uint64_t *flags, size_t n)
{
	const uint64_t large = 1ULL << PM_KPF_COMPOUND_HEAD | 1ULL << PM_KPF_COMPOUND_TAIL | 1ULL << PM_KPF_THP;
	uint64_t any = 0;
	size_t i;

	for (i = 0; i < n; i++)
		any |= flags[i];
	return (any & large) != 0;
}

/*
 * The words of every column's file for the pieces fr->todo[@i..): pieces a
 * short gap apart share one read per file (a few words read and dropped cost
 * less than a system call), @buf a column per SNAP_READ_WORDS words. Words a
 * short read left out read 0, as they would not being stored. Returns the
 * index of the first piece not read, or -errno.
 */
static ssize_t frames_read(struct snap_frames *fr, size_t i, size_t ntodo, uint64_t *buf, struct moved *mv,
			   size_t *nmv)
{
	const struct frun *t = fr->todo;
	const uint64_t *cols[3];
	uint64_t base = t[i].start, len, off, x, n, most = 0;
	ssize_t got[3];
	size_t j, k;
	unsigned c;
	int r;

	for (j = i + 1; j < ntodo && t[j].start - (t[j - 1].start + t[j - 1].n) <= FRAME_GAP &&
			t[j].start + t[j].n - base <= PMI_BATCH; j++)
		;
	if (base >= fr->end)
		return (ssize_t)j;
	len = t[j - 1].start + t[j - 1].n - base;
	for (c = 0; c < fr->ncol; c++) {
		if ((got[c] = pmi_ctx_pread_words(fr->ctx, fr->fd[fr->col[c]], buf + c * PMI_BATCH, (size_t)len, base)) < 0)
			return got[c];
		most = (uint64_t)got[c] > most ? (uint64_t)got[c] : most;
	}
	for (c = 0; c < fr->ncol; c++)	/* a file shorter than the others (it should not be) reads 0 there */
		memset(buf + c * PMI_BATCH + got[c], 0, (size_t)(most - (uint64_t)got[c]) * 8);
	for (k = i; k < j && t[k].start - base < most; k++) {	/* words past the files' end are left out */
		off = t[k].start - base;
		n = t[k].n < most - off ? t[k].n : most - off;
		if (fr->col[0] == 0 && !fr->large)	/* kpageflags: the piece's, not the gap's (other processes') */
			fr->large = any_large(buf + off, (size_t)n);
		if (fr->pfn_mode < PM_SNAPSHOT_PFN_KEYED) {
			for (c = 0; c < fr->ncol; c++)
				cols[c] = buf + c * PMI_BATCH + off;
			if ((r = pmi_snap_ws_add_cols(fr->joint, t[k].start, cols, (size_t)n)))
				return r;
			continue;
		}
		for (x = 0; x < n; x++, (*nmv)++) {
			mv[*nmv].index = pmi_perm_fwd(&fr->perm[0], t[k].start + x);
			for (c = 0; c < fr->ncol; c++)
				mv[*nmv].word[c] = buf[c * PMI_BATCH + off + x];
		}
	}
	return (ssize_t)j;
}

/* The kpage words of the frames of @nrun runs (sorted here): the files read together in ascending frame order. */
int pmi_snap_frames_flush(struct pm_snapshot_writer *w, struct frun *run, size_t nrun, uint64_t *buf, struct moved *mv)
{
	struct snap_frames *fr = pmi_snap_w_frames(w);
	size_t ntodo, nmv = 0, i;
	ssize_t next;
	int r;

	if ((r = frames_unseen(fr, run, nrun, &ntodo)))
		return r;
	for (i = 0; fr->joint && i < ntodo; i = (size_t)next)
		if ((next = frames_read(fr, i, ntodo, buf, mv, &nmv)) < 0)
			return (int)next;
	return nmv ? frames_put_moved(fr, mv, nmv, buf) : 0;
}
/* Frame @pfn's kpage words are written already (frames_unseen). */
static bool seen(const struct snap_frames *fr, uint64_t pfn)
{
	return fr->seen && pfn < fr->end && (fr->seen[pfn / 64] >> (pfn % 64) & 1);
}

int pmi_snap_frames_put_unseen(struct snap_frames *fr, int f, uint64_t pfn, const uint64_t *buf, size_t n)
{
	size_t i = 0, j;
	int r = 0;

	if (fr->first && (r = seen_alloc(fr)))	/* the processes' first batch, marked */
		return r;

	while (i < n && !r) {
		for (; i < n && seen(fr, pfn + i); i++)
			;
		for (j = i; j < n && !seen(fr, pfn + j); j++)
			;
		if (j > i)
			r = pmi_snap_ws_add(fr->ws[f], pfn + i, buf + i, j - i);
		i = j;
	}
	return r;
}

uint64_t pm_snapshot_key_id(const unsigned char *key)
{
	return pmi_key_id(key);
}

/*
 * max_pfn for the permutation: the frame files' length. The images are
 * lifted by the domain (whole blocks) so that none equals a real frame, and
 * domain + lift must fit the 55-bit field: when the length is unknown
 * (kpageflags unreadable) or absurd, the domain is [0, 2^54), half the
 * field, which holds every frame a kernel can have (physical addresses are
 * at most 52 bits, so frames are below 2^40 with 4 KiB pages).
 */
#define KEY_MAX_DOMAIN	(1ULL << (PMI_FRAME_BITS - 1))

static uint64_t max_pfn(struct pm_ctx *ctx)
{
	struct pm_kpage *k = ctx ? pm_kpage_open(ctx) : NULL;
	uint64_t end = 0;

	if (!k || pm_kpage_end(k, &end) < 0 || !end || end > KEY_MAX_DOMAIN)
		end = KEY_MAX_DOMAIN;
	pm_kpage_close(k);
	return end;
}

/* Keyed modes: both permutations, frames lifted past their domain (snapshot_pfnkey.h). */
static int set_keyed(struct snap_frames *fr, const unsigned char *key, struct pm_ctx *ctx, unsigned shift)
{
	int r;

	pmi_perm_init(&fr->perm[0], key, 1, max_pfn(ctx), shift);
	if ((r = pmi_perm_lift(&fr->perm[0], pmi_perm_span(&fr->perm[0]))))
		return r;	/* not reached: the domain is at most half the field */
	pmi_perm_init(&fr->perm[1], key, 2, 1ULL << 50, shift);	/* swap offsets: bits 5-54, not lifted */
	fr->sc = (struct pmi_scramble){ &fr->perm[0], &fr->perm[1], 0 };
	return 0;
}

/* META of a keyed mode: key_id, key_domain, key_lift, key_block (what --unscramble and replay need). */
static int keyed_meta(struct pm_snapshot_writer *w, const struct snap_frames *fr, const unsigned char *key,
		      unsigned shift)
{
	char v[24];
	int r;

	snprintf(v, sizeof(v), "%016llx", (unsigned long long)pmi_key_id(key));
	if ((r = pm_snapshot_add_meta(w, "key_id", v)))
		return r;
	snprintf(v, sizeof(v), "%llu", (unsigned long long)fr->perm[0].max);
	if ((r = pm_snapshot_add_meta(w, "key_domain", v)))
		return r;
	snprintf(v, sizeof(v), "%llu", (unsigned long long)fr->perm[0].lift);
	if ((r = pm_snapshot_add_meta(w, "key_lift", v)))
		return r;
	snprintf(v, sizeof(v), "%u", shift);
	return pm_snapshot_add_meta(w, "key_block", v);
}

int pm_snapshot_set_frames(struct pm_snapshot_writer *w, struct pm_ctx *ctx, enum pm_snapshot_pfn mode,
			   const unsigned char *key)
{
	static const char *const name[] = { "kept", "dropped", "keyed", "keyed-block" };
	struct snap_frames *fr = pmi_snap_w_frames(w);
	const struct pm_features *f = ctx ? pm_ctx_features(ctx) : NULL;
	unsigned shift = 0, ps = f && f->page_size ? f->page_size : 4096;
	int r;

	if ((unsigned)mode > PM_SNAPSHOT_PFN_KEYED_BLOCK || fr->declared ||
	    (mode >= PM_SNAPSHOT_PFN_KEYED && (!key || !ctx)))
		return -EINVAL;
	if (mode == PM_SNAPSHOT_PFN_KEYED_BLOCK)	/* 2 MiB in pages: 9 for 4 KiB, 5 for 64 KiB */
		while (shift < 21 && (ps << (shift + 1)) <= (2u << 20))
			shift++;
	if (mode >= PM_SNAPSHOT_PFN_KEYED && (r = set_keyed(fr, key, ctx, shift)))
		return r;
	fr->pfn_mode = mode;
	if ((r = pm_snapshot_add_meta(w, "frames", name[mode])) || mode < PM_SNAPSHOT_PFN_KEYED)
		return r;
	return keyed_meta(w, fr, key, shift);
}
