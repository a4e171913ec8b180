/* pm-derive.c - rewrite a captured pagemap.sparse as an older kernel would have reported the same process. */
/*
 * Used by tests/fixtures/derive (see tests/fixtures/README.md for the rules
 * and the kernel facts behind each option). Input and output are the
 * pagemap-sparse v1 text of tests/tools/pm-sparse.c; the input must be a
 * capture of a current-layout kernel with PFNs visible (root).
 *
 * Usage: pm-derive [OPTION...] IN.sparse OUT.sparse
 *   -l LAYOUT  pshift, v2 or current (docs/kernel-interface.md §1.1-1.3)
 *   -S SHIFT   PAGE_SHIFT of the capture (default 12)
 *   -F         the kernel has bit 61 PM_FILE (3.5+); else it reads 0
 *   -E         the kernel has bit 56 PM_MMAP_EXCLUSIVE (4.2+)
 *   -U         the kernel has bit 57 and uffd-wp PTE markers (5.13+)
 *   -G         the kernel has bit 58 and guard markers (6.15+)
 *   -T         the kernel has THP (2.6.38+); without it a PMD-mapped block
 *              becomes base pages with descending PFNs
 *   -D         every VMA carries VM_SOFTDIRTY (CONFIG_MEM_SOFT_DIRTY=y and no
 *              clear_refs 4 on this process): bit 55 on every entry (v2, current)
 *   -p         PFNs of present pages read 0 (4.2+ reader without CAP_SYS_ADMIN)
 *   -s         swap type and offset read 0 (4.18+ reader without CAP_SYS_ADMIN)
 *   -0         also write virtual page 0's entry (unmapped: the layout probe reads it)
 *   -w START-END:OFFSET  first swap out the present pages of [START, END) to
 *              swap type 0, slot OFFSET + page index (all hex)
 *   -c TEXT    what the output is, for its header comment
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sparse-format.h"

#define E_PRESENT	(1ULL << 63)
#define E_SWAP		(1ULL << 62)
#define E_FILE		(1ULL << 61)
#define E_GUARD		(1ULL << 58)
#define E_UFFD_WP	(1ULL << 57)
#define E_EXCLUSIVE	(1ULL << 56)
#define E_SOFT_DIRTY	(1ULL << 55)
#define E_FRAME		((1ULL << 55) - 1)
#define SWAP_TYPE_MASK	0x1fULL
#define MARKER_TYPE	31	/* PTE markers: swap type 31 on the capture's kernel (docs/kernel-interface.md §9.1) */

enum layout { PSHIFT, V2, CURRENT };

struct opts {
	enum layout layout;
	unsigned shift;
	bool file, exclusive, uffd, guard, thp, softdirty, hide_pfn, hide_swap, page0;
	bool swapout;
	uint64_t sw_start, sw_end, sw_slot;
	const char *comment;
};

struct words {
	uint64_t *off, *w;
	bool *section;		/* an '@' line started here in the input */
	size_t n, cap;
	uint64_t size;		/* the '=' line */
};

static int fail(const char *what, const char *name)
{
	fprintf(stderr, "pm-derive: %s %s: %s\n", what, name, strerror(errno));
	return 1;
}

static int push(struct words *s, uint64_t off, uint64_t w, bool section)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 4096;
		uint64_t *o = realloc(s->off, cap * sizeof(*o)), *v;
		bool *b;

		if (!o)
			return -1;
		s->off = o;
		v = realloc(s->w, cap * sizeof(*v));
		if (!v)
			return -1;
		s->w = v;
		b = realloc(s->section, cap * sizeof(*b));
		if (!b)
			return -1;
		s->section = b;
		s->cap = cap;
	}
	s->off[s->n] = off;
	s->w[s->n] = w;
	s->section[s->n++] = section;
	return 0;
}

/* Read IN.sparse; offsets must increase (a capture writes mappings in address order). */
static int load(const char *name, struct words *s)
{
	char line[256];
	uint64_t off = 0, i, n, v;
	bool section = true;
	unsigned long lineno = 0;
	FILE *in = fopen(name, "re");

	if (!in)
		return fail("cannot open", name);
	while (fgets(line, sizeof(line), in)) {
		char *e, op;

		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (line[0] == '@' || line[0] == '=') {
			v = strtoull(line + 1, &e, 16);
			if (line[0] == '@') {
				off = v;
				section = true;
			} else {
				s->size = v;
			}
			continue;
		}
		v = strtoull(line, &e, 16);
		if (e == line)
			goto bad;
		op = *e;
		n = (op == '*' || op == '+') ? strtoull(e + 1, NULL, 10) : 1;
		if (!n)
			goto bad;
		for (i = 0; i < n; i++, off += 8) {
			if (s->n && off <= s->off[s->n - 1])
				goto bad;
			if (push(s, off, op == '+' ? v + i : v, section) < 0)
				return fail("cannot load", name);
			section = false;
		}
	}
	fclose(in);
	return 0;
bad:
	fprintf(stderr, "pm-derive: %s:%lu: bad line or offsets out of order\n", name, lineno);
	fclose(in);
	return 1;
}

/* A simulated swap-out: present pages of the range become swap type 0, slot base + page index. */
static void swap_out(struct words *s, const struct opts *o)
{
	uint64_t first = o->sw_start >> o->shift, end = o->sw_end >> o->shift;
	size_t i;

	for (i = 0; i < s->n; i++) {
		uint64_t vpn = s->off[i] / 8;
		if (vpn >= first && vpn < end && (s->w[i] & E_PRESENT))
			s->w[i] = E_SWAP | ((o->sw_slot + vpn - first) << 5);
	}
}

/*
 * Before THP (2.6.38) a PMD-aligned run of present, contiguous, PMD-aligned
 * frames could not be one huge page: the same memory would have come page by
 * page, in the descending order the buddy allocator gives (as the capture's
 * base pages show). Reverse the frames inside each such block.
 */
static void split_thp(struct words *s, const struct opts *o)
{
	size_t per = (size_t)1 << (o->shift - 3), i, j;	/* a PMD holds one page of 8-byte entries */

	for (i = 0; i + per <= s->n; i++) {
		uint64_t first = s->w[i], pfn = first & E_FRAME;
		bool huge = (s->off[i] / 8) % per == 0 && (first & E_PRESENT) && pfn && pfn % per == 0;

		for (j = 1; huge && j < per; j++)
			huge = s->off[i + j] == s->off[i] + 8 * j && s->w[i + j] == first + j;
		if (!huge)
			continue;
		for (j = 0; j < per; j++)
			s->w[i + j] = (first & ~E_FRAME) | (pfn + per - 1 - j);
		i += per - 1;
	}
}

/* One entry as the older kernel reports it (docs/kernel-interface.md §1.2, §1.3, §1.1, §2.1). */
static uint64_t rewrite(uint64_t w, const struct opts *o)
{
	uint64_t frame = w & E_FRAME, flags = w & (E_PRESENT | E_SWAP | E_FILE);
	uint64_t high = w & (E_SOFT_DIRTY | E_EXCLUSIVE | E_UFFD_WP | E_GUARD);
	bool marker = (w & E_SWAP) && (frame & SWAP_TYPE_MASK) == MARKER_TYPE && (w & (E_GUARD | E_UFFD_WP));

	/* A marker the kernel does not have: the PTE would simply be empty. */
	if (marker && ((w & E_GUARD) ? !o->guard : !o->uffd))
		flags = high = frame = 0;
	if (!o->file)
		flags &= ~E_FILE;
	if (!o->exclusive)
		high &= ~E_EXCLUSIVE;
	if (!o->uffd)
		high &= ~E_UFFD_WP;
	if (!o->guard)
		high &= ~E_GUARD;
	if ((flags & E_PRESENT) && o->hide_pfn)
		frame = 0;
	if ((flags & E_SWAP) && o->hide_swap)
		frame = 0;
	switch (o->layout) {
	case PSHIFT:
		return flags | (uint64_t)o->shift << 55 | frame;
	case V2:	/* bits 56-60 are zero */
		high &= E_SOFT_DIRTY;
		break;
	case CURRENT:
		break;
	}
	if (o->softdirty)
		high |= E_SOFT_DIRTY;
	return flags | high | frame;
}

static int save(const char *name, const struct words *s, const struct opts *o)
{
	FILE *out = fopen(name, "we");
	size_t i, j;

	if (!out)
		return fail("cannot create", name);
	fprintf(out, "# pagemap-sparse v1: %s\n", o->comment ? o->comment : "derived by pm-derive");
	if (o->page0 && (!s->n || s->off[0] > 0)) {
		uint64_t e0 = o->layout == PSHIFT ? (uint64_t)o->shift << 55 : 0;
		sparse_emit(out, 0, &e0, 1);
	}
	for (i = 0; i < s->n; i = j) {
		for (j = i + 1; j < s->n && !s->section[j] && s->off[j] == s->off[j - 1] + 8; j++)
			;
		sparse_emit(out, s->off[i], s->w + i, j - i);
	}
	fprintf(out, "=%" PRIx64 "\n", s->size);
	return fclose(out) ? fail("cannot write", name) : 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: pm-derive -l pshift|v2|current [-S SHIFT] [-FEUGTDps0] [-w START-END:SLOT] [-c TEXT] "
			"IN.sparse OUT.sparse\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct opts o = { .layout = CURRENT, .shift = 12 };
	struct words s = { 0 };
	size_t i;
	int c;

	while ((c = getopt(argc, argv, "l:S:FEUGTDps0w:c:")) != -1) {
		switch (c) {
		case 'l':
			if (!strcmp(optarg, "pshift"))
				o.layout = PSHIFT;
			else if (!strcmp(optarg, "v2"))
				o.layout = V2;
			else if (!strcmp(optarg, "current"))
				o.layout = CURRENT;
			else
				return usage();
			break;
		case 'S':
			o.shift = (unsigned)strtoul(optarg, NULL, 10);
			if (o.shift < 12 || o.shift > 20)
				return usage();
			break;
		case 'F': o.file = true; break;
		case 'E': o.exclusive = true; break;
		case 'U': o.uffd = true; break;
		case 'G': o.guard = true; break;
		case 'T': o.thp = true; break;
		case 'D': o.softdirty = true; break;
		case 'p': o.hide_pfn = true; break;
		case 's': o.hide_swap = true; break;
		case '0': o.page0 = true; break;
		case 'w':
			if (sscanf(optarg, "%" SCNx64 "-%" SCNx64 ":%" SCNx64, &o.sw_start, &o.sw_end, &o.sw_slot) != 3 ||
			    o.sw_start >= o.sw_end)
				return usage();
			o.swapout = true;
			break;
		case 'c': o.comment = optarg; break;
		default:
			return usage();
		}
	}
	if (argc - optind != 2)
		return usage();
	/* Only the current layout has these bits. */
	if (o.layout != CURRENT)
		o.exclusive = o.uffd = o.guard = false;
	if (load(argv[optind], &s))
		return 1;
	if (o.swapout)
		swap_out(&s, &o);
	if (!o.thp)
		split_thp(&s, &o);
	for (i = 0; i < s.n; i++)
		s.w[i] = rewrite(s.w[i], &o);
	return save(argv[optind + 1], &s, &o);
}
