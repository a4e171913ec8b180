/* test_snapshot.c - the snapshot format: codec, reader on synthetic and hostile files, writer round trip. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#include "harness.h"
#include "pages.h"
#include "snapshot_keeper.h"
#include "snapshot.h"
#include "snapshot_reader.h"
#include "snapshot_codec_ref.h"
#include "snapshot_build.h"

static const uint64_t pm_words[3] = { 0x8100000000001234ULL, 0x8100000000001235ULL, 0x4000000000000000ULL | 0x2a0 };

/* The sample: META, a text file, a future section type, a sparse pagemap. */
static void build_sample(struct build *b, uint32_t version)
{
	struct snap_extent ext = { .start = 10, .count = 3 };
	unsigned char raw[256];
	size_t n = pmi_snap_encode(&ext, 1, pm_words, raw, version);

	memset(b, 0, sizeof(*b));
	b_head(b, version);
	b_sec(b, PM_SNAPSHOT_META, "writer=test\n", 12);
	b_file(b, 0, PM_SNAPSHOT_BYTES, 5, "proc/42/stat");
	b_sec(b, 99, "from the future", 15);	/* a later version's section: skipped */
	b_chunk(b, PM_SNAPSHOT_BYTES, 0, 0, 0, "hello", 5);
	b_file(b, 1, PM_SNAPSHOT_WORDS, 100 * 8, "proc/42/pagemap");
	b_chunk(b, PM_SNAPSHOT_WORDS, 1, 3, 0, raw, n);
	b_finish(b);
}

static int mem_fd(const void *p, size_t n)
{
	int fd = memfd_create("snap", MFD_CLOEXEC);

	if (fd >= 0 && write(fd, p, n) != (ssize_t)n) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Open @n bytes of @p; NULL with errno and the reason in @err. */
static struct pm_snapshot *open_mem(const void *p, size_t n, char *err, size_t errsize)
{
	int fd = mem_fd(p, n), e;
	struct pm_snapshot *s;

	if (fd < 0)
		return NULL;
	s = pm_snapshot_open_fd(fd, err, errsize);
	e = errno;
	if (!s)
		close(fd);
	errno = e;
	return s;
}

static void close_mem(struct pm_snapshot *s)
{
	/* open_fd leaves the descriptor to the caller: the fuzz-style tests drop it with the handle */
	pm_snapshot_close(s);
}

/* A replay context of the snapshot built in @b (freed here), or NULL. */
static struct pm_ctx *replay_ctx(struct build *b, char *err, size_t errsize)
{
	struct pm_snapshot *s = open_mem(b->p, b->len, err, errsize);
	struct pm_ctx *ctx = s ? pm_ctx_new_snapshot(s) : NULL;

	close_mem(s);
	free(b->p);
	return ctx;
}

static int t_codec_roundtrip(void)
{
	struct snap_extent ext[3] = { { 0, 2 }, { 5, 1 }, { 1000000, 3 } }, dext[8];
	uint64_t words[6] = { 0x8180000000000001ULL, 0x8180000000000002ULL, 0, 0x4000000000000000ULL | 0x5b,
			      0x8000000000777777ULL, 0xff80000000000010ULL }, out[8];
	unsigned char raw[512];
	const char *why = NULL;
	size_t n = pmi_snap_encode(ext, 3, words, raw, PM_SNAPSHOT_VERSION), nw = 0, cut;
	int next = pmi_snap_decode(raw, n, dext, 8, out, 8, &nw, PM_SNAPSHOT_VERSION, &why);

	CHECK(n <= pmi_snap_encode_bound(6, 3));
	CHECK_EQ_U64(next, 3);
	CHECK_EQ_U64(nw, 6);
	CHECK(!memcmp(out, words, sizeof(words)));
	CHECK_EQ_U64(dext[2].start, 1000000);
	for (cut = 0; cut < n; cut++)	/* every proper prefix is refused */
		CHECK(pmi_snap_decode(raw, cut, dext, 8, out, 8, &nw, PM_SNAPSHOT_VERSION, &why) == -EBADMSG);
	CHECK(pmi_snap_decode(raw, n, dext, 2, out, 8, &nw, PM_SNAPSHOT_VERSION, &why) == -EBADMSG);	/* over the extent limit */
	CHECK(pmi_snap_decode(raw, n, dext, 8, out, 5, &nw, PM_SNAPSHOT_VERSION, &why) == -EBADMSG);	/* over the word limit */
	n = pmi_snap_encode(ext, 3, words, raw, 2);	/* versions 1 and 2: as they were written */
	CHECK_EQ_U64(pmi_snap_decode(raw, n, dext, 8, out, 8, &nw, 2, &why), 3);
	CHECK(!memcmp(out, words, sizeof(words)));
	CHECK_EQ_U64(n, 9 + 12 + 1 + 1 + 1 + 4 + 1 + 4);	/* extents, a u16 column per word, a varint per frame */
	return T_PASS;
}

/*
 * Version 3's frame column in both modes: scattered frames (a random half
 * of the words present, a random frame after each short run) take the
 * packed mode, flag words of a few values a palette, of many values
 * repeating deltas the varints;
 * every word back as it was, every prefix refused, and the scattered ones
 * smaller than in version 2.
 */
static int t_codec_frame_modes(void)
{
	enum { N = 4096 };
	static uint64_t words[N], out[N];
	static unsigned char raw[N * 12 + 4096], old[N * 12 + 4096];
	struct snap_extent ext = { 0, N }, dext[2];
	const char *why = NULL;
	size_t n, n2, nw, i, cut;
	uint64_t pfn = 0x100000;
	int pass;

	for (pass = 0; pass < 3; pass++) {
		srand(7 + pass);
		for (i = 0; i < N; i++) {
			if (pass == 0) {	/* scattered frames, half the pages present, with swap entries */
				pfn = rand() % 4 ? pfn + 1 : 0x100000 + (uint64_t)rand() % 6000000;
				words[i] = !(rand() & 1) ? 0 : i % 97 == 0 ? 0x4000000000000000ULL | (uint64_t)rand() << 5 | 1 :
					   0x8100000000000000ULL | pfn;
			} else if (pass == 1) {	/* flag words of a few values */
				static const uint64_t f[4] = { 0x5828, 0x5868, 0x405828, 0x1005828 };
				words[i] = f[rand() % 4];
			} else {	/* flag words of 40 values in a cycle, and a few zero words */
				words[i] = i % 13 == 0 ? 0 : 0x400005828ULL | (uint64_t)(i % 40) << 20;
			}
		}
		n = pmi_snap_encode(&ext, 1, words, raw, 3);
		n2 = pmi_snap_encode(&ext, 1, words, old, 2);
		CHECK(n <= pmi_snap_encode_bound(N, 1));
		CHECK_EQ_U64(pmi_snap_decode(raw, n, dext, 2, out, N, &nw, 3, &why), 1);
		CHECK_EQ_U64(nw, N);
		CHECK(!memcmp(out, words, sizeof(words)));
		for (cut = 0; cut < n; cut += 1 + cut / 8)	/* prefixes refused */
			CHECK(pmi_snap_decode(raw, cut, dext, 2, out, N, &nw, 3, &why) == -EBADMSG);
		if (pass == 0)
			CHECK(n < n2 * 2 / 3);	/* 1 bit of presence a word, about 23 bits a random frame */
		if (pass == 1)
			CHECK(n < N / 4 + 64);	/* 2 bits a word */
	}
	return T_PASS;
}

/* A PRNG for the run-wise encoder's inputs (xorshift64*). */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

/* Append one piece of @kind to @w (at most @cap words): the shapes the encoder takes as runs, and their edges. */
static size_t gen_piece(uint64_t *w, size_t at, size_t cap, unsigned kind, uint64_t *s)
{
	static const uint64_t flags[] = { 0x8180000000000000ULL, 0x8100000000000000ULL, 0xff80000000000000ULL,
					  0x4000000000000000ULL, 0, 0x0080000000000000ULL };
	uint64_t f = flags[rnd(s) % 6], base = rnd(s) >> (9 + rnd(s) % 40), v;
	size_t n = 1 + rnd(s) % (rnd(s) % 4 ? 40 : 1100), i;

	n = n < cap - at ? n : cap - at;
	for (i = 0; i < n; i++) {
		switch (kind) {
		case 0:	/* zero words */
			v = 0;
			break;
		case 1:	/* equal words */
			v = f | base;
			break;
		case 2:	/* contiguous frames */
			v = f | ((base | 1) + i);
			break;
		case 3:	/* contiguous frames carrying past bit 54 (the run must end there) */
			v = f + (((1ULL << 55) - 1) - n / 2) + i;
			break;
		case 4:	/* scattered words */
			v = rnd(s);
			break;
		case 5:	/* a huge page's kpageflags: head, then tails */
			v = i % 512 ? 0x0000000000008828ULL : 0x0000000000408028ULL;
			break;
		case 6:	/* a few values at random (a palette of up to 17) */
			v = 0x400005828ULL + (rnd(s) % (1 + base % 17)) * 0x100000;
			break;
		case 7:	/* bits 55-63 alone, or low bits 1 and the largest */
			v = rnd(s) % 2 ? rnd(s) & ~((1ULL << 55) - 1) : rnd(s) % 2 ? 1 : (1ULL << 55) - 1;
			break;
		default:	/* scattered frames in runs of 1 to 4 (THP off) */
			v = (1ULL << 63) | (i % 4 ? w[at + i - 1] + 1 : 0x100000 + rnd(s) % 6000000);
			break;
		}
		w[at + i] = v;
	}
	return n;
}

/*
 * The run-wise encoder writes what the word-at-a-time one wrote
 * (snapshot_codec_ref.h), on pieces of every shape mixed at random, on
 * 1024 flag values, on nothing, and on a THP process's full chunks; each
 * decodes back.
 */
static int t_codec_runs_same(void)
{
	enum { N = 262144 };
	uint64_t *w = malloc(N * 8), *back = malloc(N * 8), s = 0x9e3779b97f4a7c15ULL;
	unsigned char *a = malloc(pmi_snap_encode_bound(N, 1)), *b = malloc(pmi_snap_encode_bound(N, 1));
	const char *why = NULL;
	size_t total, na, nb, i;
	int round, bad = 0;

	CHECK(w && back && a && b);
	for (round = 0; round < 4000 && !bad; round++) {
		size_t cap = round < 3900 ? 1 + rnd(&s) % 3000 : N;
		unsigned kinds = (unsigned)rnd(&s);
		total = round == 0 ? 0 : 0;
		while (round && total < cap) {
			unsigned kind = (unsigned)(rnd(&s) % 9);
			if (kinds & 1)	/* some rounds keep to two shapes, as real chunks do */
				kind = kind % 2 ? (kinds >> 1) % 9 : (kinds >> 5) % 9;
			total += gen_piece(w, total, cap, kind, &s);
		}
		if (round == 1) {	/* every flag value: a 10-bit index a word */
			for (total = 0; total < 4096; total++)
				w[total] = (uint64_t)(total % 512) << 55 | (total / 512 % 2 ? total : 0);
		}
		na = ref_encode_columns(w, total, a);
		nb = pmi_snap_encode_columns(w, total, b, 3);
		if (na != nb || memcmp(a, b, na)) {
			bad = 1;
			break;
		}
		memset(back, 0xa5, total * 8);
		CHECK(pmi_snap_decode_columns(b, nb, back, total, 3, &why) == 0);
		CHECK(!memcmp(back, w, total * 8));
	}
	CHECK_EQ_U64(bad, 0);
	CHECK_EQ_U64(round, 4000);
	for (i = 0; i < N; i++)	/* a THP process: pagemap words of 512 contiguous frames a huge page */
		w[i] = 0x8180000000000000ULL | (0x200000 + (i / 512) * 0x3400 + i % 512);
	na = ref_encode_columns(w, N, a);
	nb = pmi_snap_encode_columns(w, N, b, 3);
	CHECK(na == nb && !memcmp(a, b, na));
	free(w);
	free(back);
	free(a);
	free(b);
	return T_PASS;
}

static int t_codec_hostile(void)
{
	static const unsigned char cases[][12] = {
		{ 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f },	/* absurd extent count */
		{ 1, 0, 0xff, 0xff, 0xff, 0xff, 0x0f },				/* absurd word count */
		{ 2, 0, 1, 0, 1, 0, 0, 0, 0 },					/* a zero gap: extents overlap */
		{ 1, 0, 1, 0, 0x04 },						/* unknown column bits */
		{ 1, 0, 1, 0, 0x02, 0 },					/* low bits set, frame missing */
		{ 1, 0, 1, 0, 0x02, 0x00 },
	};
	struct snap_extent ext[16];
	uint64_t words[16];
	unsigned char junk[64];
	const char *why;
	size_t nw, i, j;

	/* Version 3 columns (one extent of 1 or 2 words first): palette, packed indices, frame column mode. */
	static const struct { unsigned char b[16]; size_t n; } v3[] = {
		{ { 1, 0, 1, 0 }, 4 },						/* no palette for a word */
		{ { 1, 0, 1, 0x81, 0x08 }, 5 },					/* a palette over 1024 */
		{ { 1, 0, 1, 1, 0x00, 0x04 }, 6 },				/* unknown bits in the palette */
		{ { 1, 0, 1, 2, 0, 0, 0, 0, 0 }, 9 },				/* palette out of order */
		{ { 1, 0, 1, 3, 0, 0, 1, 0, 2, 0, 0x03 }, 11 },			/* index past the palette */
		{ { 1, 0, 1, 2, 0, 0, 0x02, 0x02, 0x02 }, 9 },			/* padding bit set */
		{ { 1, 0, 1, 2, 0, 0, 0x02, 0x02 }, 8 },			/* indices missing */
		{ { 1, 0, 1, 1, 0x02, 0x02 }, 6 },				/* frame column mode missing */
		{ { 1, 0, 1, 1, 0x02, 0x02, 2, 2 }, 8 },			/* unknown mode */
		{ { 1, 0, 1, 1, 0x02, 0x02, 0, 0 }, 8 },			/* mode 0: a zero frame */
		{ { 1, 0, 1, 1, 0x02, 0x02, 0, 2, 0 }, 9 },			/* mode 0: trailing byte */
		{ { 1, 0, 1, 1, 0x02, 0x02, 1, 0, 3, 127, 0 }, 11 },		/* mode 1: base 0 */
		{ { 1, 0, 1, 1, 0x02, 0x02, 1, 5, 56, 127, 0 }, 11 },		/* mode 1: width over 55 */
		{ { 1, 0, 1, 1, 0x02, 0x02, 1, 5, 3, 80 }, 10 },		/* mode 1: unknown token */
		{ { 1, 0, 1, 1, 0x02, 0x02, 1, 5, 3, 127 }, 10 },		/* mode 1: bits missing */
		{ { 1, 0, 1, 1, 0x02, 0x02, 1, 5, 3, 127, 1, 0 }, 12 },	/* mode 1: a byte after the bits */
		{ { 1, 0, 1, 1, 0x02, 0x02, 1, 5, 3, 127, 0x09 }, 11 },		/* mode 1: padding bit set */
		{ { 1, 0, 1, 1, 0x02, 0x02, 1, 5, 3, 0 }, 10 },			/* mode 1: a zero frame (delta 0 from 0) */
		{ { 1, 0, 1, 1, 0x02, 0x02, 1, 5, 3 }, 9 },			/* mode 1: token missing */
		{ { 1, 0, 1, 1, 0x02, 0x02, 2, 0 }, 8 },			/* mode 2: no values */
		{ { 1, 0, 1, 1, 0x02, 0x02, 2, 17 }, 8 },			/* mode 2: over 16 values */
		{ { 1, 0, 1, 1, 0x02, 0x02, 2, 2, 5, 0, 0 }, 11 },		/* mode 2: values out of order */
		{ { 1, 0, 1, 1, 0x02, 0x02, 2, 2, 5, 1 }, 10 },			/* mode 2: index bits missing */
		{ { 1, 0, 1, 1, 0x02, 0x02, 2, 2, 5, 1, 1, 0 }, 12 },		/* mode 2: a byte after the bits */
		{ { 1, 0, 1, 1, 0x02, 0x02, 2, 3, 5, 1, 1, 0x03 }, 12 },	/* mode 2: index past the values */
		{ { 1, 0, 1, 1, 0x02, 0x02, 2, 2, 5, 1, 0x03 }, 11 },		/* mode 2: padding bit set */
		{ { 1, 0, 1, 1, 0x02, 0x02, 2, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f }, 16 },	/* mode 2: past 55 bits */
	};
	uint32_t version;

	for (i = 0; i < PMI_ARRAY_SIZE(cases); i++) {
		why = NULL;
		CHECK(pmi_snap_decode(cases[i], sizeof(cases[i]), ext, 16, words, 16, &nw, 2, &why) == -EBADMSG);
		CHECK(why != NULL);
	}
	for (i = 0; i < PMI_ARRAY_SIZE(v3); i++) {
		why = NULL;
		CHECK(pmi_snap_decode(v3[i].b, v3[i].n, ext, 16, words, 16, &nw, 3, &why) == -EBADMSG);
		CHECK(why != NULL);
	}
	/* the last case, whole: base 5 in mode 1 decodes to frame 5 (the cases above break it one way each) */
	{
		static const unsigned char ok[] = { 1, 0, 1, 1, 0x02, 0x02, 1, 5, 3, 127, 0 };
		CHECK_EQ_U64(pmi_snap_decode(ok, sizeof(ok), ext, 16, words, 16, &nw, 3, &why), 1);
		CHECK_EQ_U64(words[0], 0x0100000000000005ULL);
	}
	{
		static const unsigned char ok2[] = { 1, 0, 2, 1, 0x02, 0x02, 2, 2, 5, 1, 0x02 };	/* mode 2: 5, 6 */
		CHECK_EQ_U64(pmi_snap_decode(ok2, sizeof(ok2), ext, 16, words, 16, &nw, 3, &why), 1);
		CHECK_EQ_U64(words[0], 0x0100000000000005ULL);
		CHECK_EQ_U64(words[1], 0x0100000000000006ULL);
	}
	srand(13);
	for (version = 2; version <= 3; version++) {
		for (i = 0; i < 20000; i++) {	/* random input: refused or decoded within bounds, never past them */
			for (j = 0; j < sizeof(junk); j++)
				junk[j] = (unsigned char)rand();
			junk[0] &= 7;
			int r = pmi_snap_decode(junk, (size_t)rand() % sizeof(junk), ext, 16, words, 16, &nw, version, &why);
			CHECK(r == -EBADMSG || (r >= 0 && r <= 16 && nw <= 16));
		}
	}
	return T_PASS;
}

struct collect {
	char text[16];
	uint64_t words[100];
	int calls;
};

static int collect_fn(void *data, uint64_t off, const void *buf, size_t len)
{
	struct collect *c = data;

	c->calls++;
	if (len <= 16 && off + len <= 16 && off < 16)
		memcpy(c->text + off, buf, len);
	if (len % 8 == 0 && off / 8 + len / 8 <= 100)
		memcpy((char *)c->words + off, buf, len);
	return 0;
}

static int t_reader_sample(void)
{
	struct build b;
	struct pm_snapshot_section sec;
	struct collect c = { 0 };
	struct pm_snapshot *s;
	char err[256];
	int types = 0, future = 0;

	build_sample(&b, PM_SNAPSHOT_VERSION);
	s = open_mem(b.p, b.len, err, sizeof(err));
	CHECK(s != NULL);
	if (!s) {
		printf("  %s\n", err);
		free(b.p);
		return T_FAIL;
	}
	CHECK_STR(pm_snapshot_meta(s, "writer"), "test");
	CHECK(pm_snapshot_meta(s, "nope") == NULL);
	while (pm_snapshot_next(s, &sec) == 0) {
		types++;
		future += sec.type == 99;
		if (sec.type == PM_SNAPSHOT_BYTES || sec.type == PM_SNAPSHOT_WORDS)
			CHECK(pm_snapshot_read(s, &sec, collect_fn, &c) == 0);
		else
			CHECK(pm_snapshot_read(s, &sec, collect_fn, &c) == -EINVAL);
	}
	CHECK_EQ_U64(types, 7);	/* with the INDEX */
	CHECK_EQ_U64(future, 1);
	CHECK_STR(c.text, "hello");
	CHECK_EQ_U64(c.words[10], pm_words[0]);
	CHECK_EQ_U64(c.words[12], pm_words[2]);
	CHECK_EQ_U64(c.words[9], 0);
	pm_snapshot_rewind(s);
	CHECK(pm_snapshot_next(s, &sec) == 0 && sec.type == PM_SNAPSHOT_META);
	close_mem(s);
	free(b.p);
	return T_PASS;
}

/* A FILES section (version 2): @count records from @recs (@n bytes), declared ids from @first. */
static void b_files(struct build *b, uint32_t count, uint32_t first, const void *recs, size_t n)
{
	size_t bound = ZSTD_compressBound(n);
	unsigned char *p = malloc(8 + bound);
	size_t z = ZSTD_compress(p + 8, bound, recs, n, 3);

	snap_put32(p, count);
	snap_put32(p + 4, first);
	b_sec(b, PM_SNAPSHOT_FILES, p, 8 + z);
	free(p);
}

static size_t rec(unsigned char *p, uint32_t kind, uint64_t size, const char *path)
{
	size_t n = strlen(path);

	snap_put32(p, kind);
	snap_put64(p + 4, size);
	snap_put32(p + 12, (uint32_t)n);
	memcpy(p + SNAP_FILES_FIXED, path, n);
	return SNAP_FILES_FIXED + n;
}

/* FILES: each file yielded as a FILE, chunks of its files read; hostile records refused with one line. */
static int t_reader_files(void)
{
	static const struct {
		uint32_t count, first;
		const char *why;
	} bad[] = { { 3, 0, "truncated" }, { 1, 0, "trailing" }, { 2, 1, "out of order" }, { 0, 0, "absurd" },
		    { 0xffffffffu, 0, "absurd" } };
	unsigned char recs[256];
	size_t n = 0, i;
	struct build b;
	struct pm_snapshot_section sec;
	struct collect c = { 0 };
	struct pm_snapshot *s;
	char err[256];
	int files = 0;

	n += rec(recs + n, PM_SNAPSHOT_BYTES, 5, "proc/42/stat");
	n += rec(recs + n, PM_SNAPSHOT_BYTES, 0, "sys/devices/system/node/node0/memory0");
	memset(&b, 0, sizeof(b));
	b_head(&b, PM_SNAPSHOT_VERSION);
	b_files(&b, 2, 0, recs, n);
	b_chunk(&b, PM_SNAPSHOT_BYTES, 0, 0, 0, "hello", 5);
	b_finish(&b);
	s = open_mem(b.p, b.len, err, sizeof(err));
	CHECK(s != NULL);
	while (s && pm_snapshot_next(s, &sec) == 0) {
		if (sec.type == PM_SNAPSHOT_FILE)
			CHECK(sec.file == (uint32_t)files++ && sec.path);
		if (sec.type == PM_SNAPSHOT_BYTES)
			CHECK(pm_snapshot_read(s, &sec, collect_fn, &c) == 0 && !strcmp(sec.path, "proc/42/stat"));
	}
	CHECK_EQ_U64(files, 2);
	CHECK(!memcmp(c.text, "hello", 5));
	pm_snapshot_close(s);
	free(b.p);
	for (i = 0; i < PMI_ARRAY_SIZE(bad); i++) {
		memset(&b, 0, sizeof(b));
		b_head(&b, PM_SNAPSHOT_VERSION);
		b_files(&b, bad[i].count, bad[i].first, recs, n);
		b_finish(&b);
		err[0] = '\0';
		s = open_mem(b.p, b.len, err, sizeof(err));
		CHECK(s == NULL && errno == EBADMSG && strstr(err, bad[i].why) && !strchr(err, '\n'));
		free(b.p);
	}
	n = rec(recs, PM_SNAPSHOT_BYTES, 1, "proc/../etc/passwd");
	memset(&b, 0, sizeof(b));
	b_head(&b, PM_SNAPSHOT_VERSION);
	b_files(&b, 1, 0, recs, n);
	b_finish(&b);
	s = open_mem(b.p, b.len, err, sizeof(err));
	CHECK(s == NULL && errno == EBADMSG && strstr(err, "unsafe path"));
	free(b.p);
	return T_PASS;
}

/* Every proper prefix fails with EBADMSG and a one-line reason. */
static int t_reader_truncated(void)
{
	struct build b;
	struct pm_snapshot *s;
	char err[256];
	size_t cut;

	build_sample(&b, PM_SNAPSHOT_VERSION);
	for (cut = 0; cut < b.len; cut++) {
		err[0] = '\0';
		s = open_mem(b.p, cut, err, sizeof(err));
		CHECK(s == NULL && errno == EBADMSG);
		CHECK(err[0] && !strchr(err, '\n'));
		pm_snapshot_close(s);
	}
	free(b.p);
	return T_PASS;
}

/* Every single bit flipped anywhere is caught when the file is opened. */
static int t_reader_bitflips(void)
{
	struct build b;
	struct pm_snapshot *s;
	char err[256];
	size_t bit;

	build_sample(&b, PM_SNAPSHOT_VERSION);
	for (bit = 0; bit < b.len * 8; bit++) {
		b.p[bit / 8] ^= (unsigned char)(1u << (bit % 8));
		err[0] = '\0';
		s = open_mem(b.p, b.len, err, sizeof(err));
		CHECK(s == NULL && (errno == EBADMSG || errno == EPROTONOSUPPORT));
		CHECK(err[0] && !strchr(err, '\n'));
		if (s)
			printf("  bit %zu flipped went unseen\n", bit);
		pm_snapshot_close(s);
		b.p[bit / 8] ^= (unsigned char)(1u << (bit % 8));
	}
	free(b.p);
	return T_PASS;
}

static int t_reader_version(void)
{
	struct build b;
	char err[256];
	struct pm_snapshot *s;

	build_sample(&b, PM_SNAPSHOT_SERIES_VERSION + 1);
	s = open_mem(b.p, b.len, err, sizeof(err));
	CHECK(s == NULL && errno == EPROTONOSUPPORT);
	CHECK(strstr(err, "version") != NULL);
	free(b.p);
	build_sample(&b, PM_SNAPSHOT_SERIES_VERSION);	/* a plain layout under a series' version: no SERIES index */
	s = open_mem(b.p, b.len, err, sizeof(err));
	CHECK(s == NULL && errno == EBADMSG);
	CHECK(strstr(err, "series index") != NULL && !strchr(err, '\n'));
	free(b.p);
	build_sample(&b, 1);	/* version 2 adds to 1: a version 1 file still reads */
	s = open_mem(b.p, b.len, err, sizeof(err));
	CHECK(s != NULL);
	pm_snapshot_close(s);
	free(b.p);
	return T_PASS;
}

/* Lengths and counts far past anything real: refused by the bounds, not by a failed allocation. */
static int t_reader_absurd(void)
{
	struct build b;
	struct pm_snapshot_section sec;
	struct collect c = { 0 };
	struct snap_extent ext = { .start = 0, .count = 1 };
	unsigned char raw[64], big[16];
	uint64_t w = 0x8100000000000001ULL;
	size_t n;
	char err[256];
	struct pm_snapshot *s;
	int bad = 0;

	/* a section claiming 2^62 bytes */
	memset(&b, 0, sizeof(b));
	b_head(&b, PM_SNAPSHOT_VERSION);
	b_sec_len(&b, PM_SNAPSHOT_META, "a=b\n", 4, 1ULL << 62);
	b_finish(&b);
	s = open_mem(b.p, b.len, err, sizeof(err));
	CHECK(s == NULL && errno == EBADMSG && strstr(err, "section 0"));
	free(b.p);

	/* a file of 2^62 bytes, a path with "..", a chunk of an undeclared file */
	memset(&b, 0, sizeof(b));
	b_head(&b, PM_SNAPSHOT_VERSION);
	b_file(&b, 0, PM_SNAPSHOT_WORDS, 1ULL << 62, "proc/1/pagemap");
	b_finish(&b);
	s = open_mem(b.p, b.len, err, sizeof(err));
	CHECK(s == NULL && errno == EBADMSG && strstr(err, "absurd file length"));
	free(b.p);
	memset(&b, 0, sizeof(b));
	b_head(&b, PM_SNAPSHOT_VERSION);
	b_file(&b, 0, PM_SNAPSHOT_BYTES, 1, "proc/../../etc/passwd");
	b_finish(&b);
	s = open_mem(b.p, b.len, err, sizeof(err));
	CHECK(s == NULL && errno == EBADMSG && strstr(err, "unsafe path"));
	free(b.p);
	memset(&b, 0, sizeof(b));
	b_head(&b, PM_SNAPSHOT_VERSION);
	b_chunk(&b, PM_SNAPSHOT_BYTES, 7, 0, 0, "x", 1);
	b_finish(&b);
	s = open_mem(b.p, b.len, err, sizeof(err));
	CHECK(s == NULL && errno == EBADMSG && strstr(err, "not declared"));
	free(b.p);

	/* chunks that open (the checksums hold) but decode to nonsense: words past the file, a huge zstd frame */
	n = pmi_snap_encode(&ext, 1, &w, raw, PM_SNAPSHOT_VERSION);
	memset(big, 0, sizeof(big));
	big[0] = 0x28, big[1] = 0xb5, big[2] = 0x2f, big[3] = 0xfd;	/* zstd magic, then a 2^40 content size */
	big[4] = 0xc0, big[9] = 0x01, big[10] = 0;
	memset(&b, 0, sizeof(b));
	b_head(&b, PM_SNAPSHOT_VERSION);
	b_file(&b, 0, PM_SNAPSHOT_WORDS, 0, "proc/1/pagemap");
	b_chunk(&b, PM_SNAPSHOT_WORDS, 0, 1, 0, raw, n);
	b_file(&b, 1, PM_SNAPSHOT_WORDS, 8, "proc/2/pagemap");
	b_chunk(&b, PM_SNAPSHOT_WORDS, 1, 99, 0, raw, n);	/* the header's word count is wrong */
	{
		unsigned char p[SNAP_CHUNK_FIXED + sizeof(big)];
		memset(p, 0, SNAP_CHUNK_FIXED);
		snap_put32(p, 1);
		memcpy(p + SNAP_CHUNK_FIXED, big, sizeof(big));
		b_sec(&b, PM_SNAPSHOT_WORDS, p, sizeof(p));
	}
	b_finish(&b);
	s = open_mem(b.p, b.len, err, sizeof(err));
	CHECK(s != NULL);
	while (s && pm_snapshot_next(s, &sec) == 0) {
		if (sec.type != PM_SNAPSHOT_WORDS)
			continue;
		CHECK(pm_snapshot_read(s, &sec, collect_fn, &c) == -EBADMSG);
		CHECK(pm_snapshot_error(s) && strstr(pm_snapshot_error(s), "section "));
		bad++;
	}
	CHECK_EQ_U64(bad, 3);
	CHECK_EQ_U64(c.calls, 0);
	pm_snapshot_close(s);
	free(b.p);
	return T_PASS;
}

struct sum {
	uint64_t words, sum;
};

static int sum_fn(void *data, uint64_t off, const void *buf, size_t len)
{
	struct sum *x = data;
	const uint64_t *w = buf;

	for (size_t i = 0; i < len / 8; i++)
		x->sum += w[i] ^ (off / 8 + i);
	x->words += len / 8;
	return 0;
}

/*
 * The reader sizes its buffers to the chunks it reads: a small chunk, a
 * 3000-word one (the buffers grow), a small one again; a chunk holding more
 * words than its header says and one whose header says 2^32-1 words are
 * refused (no allocation to match them: the buffers are sized by the
 * extent count and the words of the extents), and reading goes on after.
 */
static int t_reader_sized_buffers(void)
{
	static uint64_t w[3000];
	static const uint32_t hdr[] = { 1, 3000, 1, 2, 0xffffffffu, 1 };
	static const uint32_t held[] = { 1, 3000, 1, 3, 1, 1 };
	static unsigned char raw[3 * 3000 * 10 + 64];
	struct pm_snapshot_section sec;
	struct pm_snapshot *s;
	struct build b;
	char err[256];
	size_t i, k = 0;

	for (i = 0; i < 3000; i++)
		w[i] = 0x8100000000000000ULL | (0x1000 + i * 7);
	memset(&b, 0, sizeof(b));
	b_head(&b, PM_SNAPSHOT_VERSION);
	b_file(&b, 0, PM_SNAPSHOT_WORDS, 3000 * 8, "proc/1/pagemap");
	for (i = 0; i < sizeof(hdr) / sizeof(hdr[0]); i++) {
		struct snap_extent ext = { .start = 0, .count = held[i] };
		size_t n = pmi_snap_encode(&ext, 1, w, raw, PM_SNAPSHOT_VERSION);
		b_chunk(&b, PM_SNAPSHOT_WORDS, 0, hdr[i], 0, raw, n);
	}
	b_finish(&b);
	s = open_mem(b.p, b.len, err, sizeof(err));
	CHECK(s != NULL);
	while (s && pm_snapshot_next(s, &sec) == 0) {
		struct sum x = { 0 }, want = { 0 };
		int r;

		if (sec.type != PM_SNAPSHOT_WORDS)
			continue;
		r = pm_snapshot_read(s, &sec, sum_fn, &x);
		if (hdr[k] != held[k]) {
			CHECK(r == -EBADMSG && pm_snapshot_error(s) && strstr(pm_snapshot_error(s), "section "));
			CHECK_EQ_U64(x.words, 0);
		} else {
			CHECK_EQ_U64(r, 0);
			sum_fn(&want, 0, w, held[k] * 8ul);
			CHECK_EQ_U64(x.words, want.words);
			CHECK_EQ_U64(x.sum, want.sum);
		}
		k++;
	}
	CHECK_EQ_U64(k, 6);
	if (s) {	/* sized by what the chunks held: 3000 words, 1 extent; not by a header's 2^32-1 (262144 at most) */
		CHECK_EQ_U64(s->wcap, 3000);
		CHECK_EQ_U64(s->xcap, 1);
	}
	close_mem(s);
	free(b.p);
	return t_failed_checks ? T_FAIL : T_PASS;
}

static int write_file(const char *path, const void *p, size_t n, off_t at)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int ok = fd >= 0 && pwrite(fd, p, n, at) == (ssize_t)n;

	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

/* The public writer: a tree in, the same tree out; the file is 0600 and nothing is left beside it. */
static int t_writer_tree(void)
{
	char dir[] = "/tmp/test_snapshot.XXXXXX", path[512], back[512], snap[512];
	struct pm_snapshot_writer *w;
	struct pm_snapshot *s;
	struct stat st;
	uint64_t words[4] = { 0x8100000000000100ULL, 0x8100000000000101ULL, 0, 0x8100000000000050ULL }, got[4];
	char err[256], buf[16] = "";
	int fd;

	if (!mkdtemp(dir))
		return t_skip("no temporary directory");
	snprintf(path, sizeof(path), "%s/tree", dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/tree/proc", dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/tree/proc/pagemap", dir);
	CHECK(write_file(path, words, sizeof(words), 1 << 20) == 0);	/* sparse: a hole of 1 MiB first */
	snprintf(path, sizeof(path), "%s/tree/proc/maps", dir);
	CHECK(write_file(path, "maps\n", 5, 0) == 0);
	snprintf(snap, sizeof(snap), "%s/out.snap", dir);
	w = pm_snapshot_create(snap);
	CHECK(w != NULL);
	snprintf(path, sizeof(path), "%s/tree", dir);
	CHECK(w && pm_snapshot_add_meta(w, "k", "v") == 0);
	CHECK(w && pm_snapshot_add_meta(w, "bad=key", "v") == -EINVAL);
	CHECK(w && pm_snapshot_add_tree(w, path) == 0);
	CHECK(w && stat(snap, &st) < 0);	/* nothing at the name before the commit */
	CHECK(w && pm_snapshot_commit(w) == 0);
	pm_snapshot_writer_free(w);
	CHECK(stat(snap, &st) == 0 && (st.st_mode & 0777) == 0600);
	s = pm_snapshot_open(snap, err, sizeof(err));
	CHECK(s != NULL);
	snprintf(back, sizeof(back), "%s/back", dir);
	mkdir(back, 0700);
	CHECK(s && pm_snapshot_extract(s, back) == 0);
	CHECK(s && pm_snapshot_extract(s, back) != 0);	/* never over existing files */
	pm_snapshot_close(s);
	snprintf(path, sizeof(path), "%s/back/proc/pagemap", dir);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0 && fstat(fd, &st) == 0 && st.st_size == (1 << 20) + 32);
	CHECK(fd >= 0 && pread(fd, got, sizeof(got), 1 << 20) == sizeof(got) && !memcmp(got, words, sizeof(got)));
	if (fd >= 0)
		close(fd);
	snprintf(path, sizeof(path), "%s/back/proc/maps", dir);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0 && read(fd, buf, sizeof(buf)) == 5 && !strcmp(buf, "maps\n"));
	if (fd >= 0)
		close(fd);
	pmi_snap_remove_tree(dir);
	return T_PASS;
}

/*
 * Text files of every length around the writer's steps (lib/snapshot/snapshot_write_text.c: read
 * in 256 KiB steps, held up to 8 MiB, read twice above) come back byte for byte:
 * pmi_snap_text_read and pmi_snap_text_write, which a process's smaps, smaps_rollup and numa_maps
 * go through when a second thread reads them ahead.
 */
static int t_writer_text_lengths(void)
{
	static const size_t len[] = { 0, 1, (256u << 10) - 1, 256u << 10, (512u << 10) + 1, 8u << 20, (8u << 20) + 12345 };
	char dir[] = "/tmp/test_snapshot.XXXXXX", path[512], snap[512], err[256];
	struct pm_snapshot_writer *w;
	struct pm_snapshot *s = NULL;
	size_t i, j, max = (8u << 20) + 12345;
	char *text = malloc(max), *back = malloc(max + 1);
	int fd;

	if (!text || !back || !mkdtemp(dir)) {
		free(text);
		free(back);
		return t_skip("no memory or no temporary directory");
	}
	for (j = 0; j < max; j++)	/* lines, and no period that a chunk boundary could hide */
		text[j] = (j * 2654435761u >> 7) % 61 == 0 ? '\n' : (char)('a' + (j * 7 + j / 4099) % 26);
	snprintf(path, sizeof(path), "%s/tree", dir);
	mkdir(path, 0700);
	for (i = 0; i < PMI_ARRAY_SIZE(len); i++) {
		snprintf(path, sizeof(path), "%s/tree/text%zu", dir, i);
		CHECK(write_file(path, text, len[i], 0) == 0);
	}
	snprintf(snap, sizeof(snap), "%s/out.snap", dir);
	snprintf(path, sizeof(path), "%s/tree", dir);
	w = pm_snapshot_create(snap);
	CHECK(w && pm_snapshot_add_tree(w, path) == 0 && pm_snapshot_commit(w) == 0);
	pm_snapshot_writer_free(w);
	snprintf(path, sizeof(path), "%s/back", dir);
	mkdir(path, 0700);
	CHECK((s = pm_snapshot_open(snap, err, sizeof(err))) != NULL && pm_snapshot_extract(s, path) == 0);
	pm_snapshot_close(s);
	for (i = 0; i < PMI_ARRAY_SIZE(len); i++) {
		ssize_t n = 0, got;
		snprintf(path, sizeof(path), "%s/back/text%zu", dir, i);
		fd = open(path, O_RDONLY);
		while (fd >= 0 && (got = read(fd, back + n, max + 1 - (size_t)n)) > 0)
			n += got;
		if (fd >= 0)
			close(fd);
		CHECK_EQ_U64((uint64_t)n, len[i]);
		CHECK(n == (ssize_t)len[i] && !memcmp(back, text, len[i]));
	}
	pmi_snap_remove_tree(dir);
	free(text);
	free(back);
	return t_failed_checks ? T_FAIL : T_PASS;
}

/* A word chunk of @n extents of @ext, words 1, 2, ... from @first. */
static void b_words(struct build *b, uint32_t id, const struct snap_extent *ext, size_t n, uint64_t first)
{
	uint64_t w[64];
	unsigned char raw[1024];
	size_t i, nw = 0;

	for (i = 0; i < n; i++)
		nw += ext[i].count;
	for (i = 0; i < nw; i++)
		w[i] = first + i;
	b_chunk(b, PM_SNAPSHOT_WORDS, id, (uint32_t)nw, 0, raw, pmi_snap_encode(ext, n, w, raw, b->version));
}

/*
 * Replay reads word files from their chunks (snapshot_words.c): interleaved chunks, reads across holes and
 * chunk boundaries and past the end, the extracted file left without data, a hostile chunk refused.
 */
static int t_replay_words(void)
{
	static const struct snap_extent a[2] = { { 0, 3 }, { 10, 2 } }, c[2] = { { 5, 2 }, { 20, 1 } };
	static const struct snap_extent past = { 6, 4 };	/* kpagecount has 8 words */
	uint64_t want[64] = { 0 }, got[80];
	struct build b = { 0 };
	struct pm_ctx *ctx;
	char err[256], path[4096];
	struct stat st;
	int fd, i;

	b_head(&b, PM_SNAPSHOT_VERSION);
	b_file(&b, 0, PM_SNAPSHOT_WORDS, 64 * 8, "proc/kpageflags");
	b_words(&b, 0, a, 2, 1);
	b_words(&b, 0, c, 2, 6);	/* a second process's frames: between the first's */
	b_file(&b, 1, PM_SNAPSHOT_WORDS, 8 * 8, "proc/kpagecount");
	b_words(&b, 1, &past, 1, 1);
	b_finish(&b);
	for (i = 0; i < 3; i++)
		want[i] = 1 + (uint64_t)i;
	want[10] = 4, want[11] = 5, want[5] = 6, want[6] = 7, want[20] = 8;
	ctx = replay_ctx(&b, err, sizeof(err));
	CHECK(ctx != NULL);
	if (!ctx)
		return T_FAIL;
	CHECK(pmi_path(ctx, path, sizeof(path), "/proc/kpageflags") == 0);
	fd = pmi_open(ctx, path, O_RDONLY);
	CHECK(fd >= 0);
	CHECK(fstat(fd, &st) == 0 && st.st_size == 64 * 8 && st.st_blocks == 0);	/* nothing written */
	CHECK(pmi_ctx_pread_words(ctx, fd, got, 64, 0) == 64 && !memcmp(got, want, sizeof(want)));
	CHECK(pmi_ctx_pread_words(ctx, fd, got, 8, 4) == 8 && !memcmp(got, want + 4, 8 * 8));
	CHECK(pmi_ctx_pread_words(ctx, fd, got, 1, 20) == 1 && got[0] == 8);
	CHECK(pmi_ctx_pread_words(ctx, fd, got, 10, 60) == 4 && !got[0] && !got[3]);	/* short at the end */
	CHECK(pmi_ctx_pread_words(ctx, fd, got, 10, 64) == 0);
	CHECK(pread(fd, got, 8, 0) == 8 && got[0] == 0);	/* the file itself holds nothing */
	close(fd);
	CHECK(pmi_path(ctx, path, sizeof(path), "/proc/kpagecount") == 0);
	fd = pmi_open(ctx, path, O_RDONLY);
	CHECK(fd >= 0);
	CHECK(pmi_ctx_pread_words(ctx, fd, got, 8, 0) == -EBADMSG);
	CHECK(pm_ctx_tree_error(ctx) && strstr(pm_ctx_tree_error(ctx), "past the file's length"));
	if (fd >= 0)
		close(fd);
	pm_ctx_free(ctx);
	return T_PASS;
}

/* Version 3: a chunk of file @id holding the columns of @nw words @first, first + 1, ... and extents at @ref. */
static void b_words_ref(struct build *b, uint32_t id, uint32_t nw, uint64_t first, uint64_t ref)
{
	uint64_t w[64];
	unsigned char raw[1024];
	uint32_t i;

	for (i = 0; i < nw; i++)
		w[i] = first + i;
	b_chunk(b, PM_SNAPSHOT_WORDS, id, nw, ref, raw, pmi_snap_encode_columns(w, nw, raw, b->version));
}

/*
 * The sample of shared extents: kpageflags with its own extent list (@a: 5 words), kpagecount
 * (64 words) and a short third file (8 words) referring to it; @mode breaks it on purpose.
 */
enum { SH_OK, SH_NOWHERE, SH_FORWARD, SH_BYTES, SH_CHAIN, SH_COUNT, SH_PAST, SH_V2 };

static void build_shared(struct build *b, int mode)
{
	static const struct snap_extent a[2] = { { 0, 3 }, { 10, 2 } };
	uint64_t flags_at;

	memset(b, 0, sizeof(*b));
	b_head(b, mode == SH_V2 ? 2 : PM_SNAPSHOT_VERSION);
	b_file(b, 0, PM_SNAPSHOT_BYTES, 5, "proc/42/stat");
	b_chunk(b, PM_SNAPSHOT_BYTES, 0, 0, 0, "hello", 5);
	b_file(b, 1, PM_SNAPSHOT_WORDS, 64 * 8, "proc/kpageflags");
	b_file(b, 2, PM_SNAPSHOT_WORDS, 64 * 8, "proc/kpagecount");
	b_file(b, 3, PM_SNAPSHOT_WORDS, (mode == SH_PAST ? 8 : 64) * 8, "proc/kpagecgroup");
	flags_at = b->len;
	b_words(b, 1, a, 2, 100);
	switch (mode) {
	case SH_NOWHERE:
		b_words_ref(b, 2, 5, 200, flags_at + 1);
		break;
	case SH_FORWARD:	/* refers to the chunk after it */
		b_words_ref(b, 2, 5, 200, b->len + SNAP_SEC_SIZE + 64);
		break;
	case SH_BYTES:
		b_words_ref(b, 2, 5, 200, b->off[1]);
		break;
	case SH_CHAIN:
		b_words_ref(b, 2, 5, 200, flags_at);
		b_words_ref(b, 3, 5, 300, b->off[b->n - 1]);
		break;
	case SH_COUNT:
		b_words_ref(b, 2, 4, 200, flags_at);
		break;
	default:
		b_words_ref(b, 2, 5, 200, flags_at);
		b_words_ref(b, 3, 5, 300, flags_at);
	}
	b_finish(b);
}

static int t_shared_extents(void)
{
	static const char *const refused[] = {
		[SH_NOWHERE] = "where no section before it starts", [SH_FORWARD] = "where no section before it starts",
		[SH_BYTES] = "not a WORDS chunk with its own", [SH_CHAIN] = "not a WORDS chunk with its own",
		[SH_COUNT] = "4 words, the chunk whose extents it shares",
	};
	struct pm_snapshot_section sec;
	struct collect c[4];
	struct pm_snapshot *s;
	struct build b;
	char err[256];
	int mode, r;

	build_shared(&b, SH_OK);
	s = open_mem(b.p, b.len, err, sizeof(err));
	CHECK(s != NULL);
	memset(c, 0, sizeof(c));
	while (s && pm_snapshot_next(s, &sec) == 0)
		if (sec.type == PM_SNAPSHOT_WORDS)
			CHECK(pm_snapshot_read(s, &sec, collect_fn, &c[sec.file]) == 0);
	for (r = 1; r < 4; r++) {
		uint64_t base = r == 1 ? 100 : r == 2 ? 200 : 300;
		CHECK_EQ_U64(c[r].calls, 2);	/* the two extents of kpageflags */
		CHECK_EQ_U64(c[r].words[0], base);
		CHECK_EQ_U64(c[r].words[2], base + 2);
		CHECK_EQ_U64(c[r].words[3], 0);
		CHECK_EQ_U64(c[r].words[10], base + 3);
		CHECK_EQ_U64(c[r].words[11], base + 4);
	}
	close_mem(s);
	free(b.p);
	for (mode = SH_NOWHERE; mode <= SH_COUNT; mode++) {	/* refused when opened, with one line */
		build_shared(&b, mode);
		s = open_mem(b.p, b.len, err, sizeof(err));
		CHECK(s == NULL && errno == EBADMSG);
		if (s || !strstr(err, refused[mode]))
			printf("  mode %d: %s\n", mode, s ? "opened" : err);
		CHECK(!s && strstr(err, refused[mode]) && strstr(err, "WORDS of proc/kpage"));
		pm_snapshot_close(s);
		free(b.p);
	}
	/* Shared extents past the referring file's end; a version 2 file's field ignored, as its readers did. */
	for (mode = SH_PAST; mode <= SH_V2; mode++) {
		build_shared(&b, mode);
		s = open_mem(b.p, b.len, err, sizeof(err));
		CHECK(s != NULL);
		memset(c, 0, sizeof(c));
		while (s && pm_snapshot_next(s, &sec) == 0) {
			if (sec.type != PM_SNAPSHOT_WORDS)
				continue;
			r = pm_snapshot_read(s, &sec, collect_fn, &c[sec.file]);
			CHECK(sec.file == 1 || mode == SH_PAST ? (sec.file != 3) == (r == 0) : r == -EBADMSG);
			if (r)
				CHECK(strstr(pm_snapshot_error(s), mode == SH_PAST ? "past the file's length" : "") != NULL);
		}
		close_mem(s);
		free(b.p);
	}
	return T_PASS;
}

/* The replay's word reader (snapshot_words.c) on shared extents, and refusing them past the file's end. */
static int t_shared_replay(void)
{
	uint64_t got[64];
	struct pm_ctx *ctx;
	char err[256], path[4096];
	struct build b;
	int fd, mode;

	for (mode = SH_OK; mode <= SH_PAST; mode += SH_PAST) {
		build_shared(&b, mode);
		ctx = replay_ctx(&b, err, sizeof(err));
		CHECK(ctx != NULL);
		if (!ctx)
			return T_FAIL;
		CHECK(pmi_path(ctx, path, sizeof(path), "/proc/kpagecount") == 0);
		fd = pmi_open(ctx, path, O_RDONLY);
		CHECK(pmi_ctx_pread_words(ctx, fd, got, 64, 0) == 64);
		CHECK(got[0] == 200 && got[2] == 202 && got[3] == 0 && got[10] == 203 && got[11] == 204 && !got[12]);
		close(fd);
		CHECK(pmi_path(ctx, path, sizeof(path), "/proc/kpagecgroup") == 0);
		fd = pmi_open(ctx, path, O_RDONLY);
		if (mode == SH_OK) {
			CHECK(pmi_ctx_pread_words(ctx, fd, got, 64, 0) == 64 && got[11] == 304);
		} else {
			CHECK(pmi_ctx_pread_words(ctx, fd, got, 8, 0) == -EBADMSG);
			CHECK(pm_ctx_tree_error(ctx) && strstr(pm_ctx_tree_error(ctx), "past the file's length"));
		}
		close(fd);
		pm_ctx_free(ctx);
	}
	return T_PASS;
}

/* The writer's multi-column stream: one extent list (indices where any column is not 0), the others refer to it. */
static int t_writer_cols(void)
{
	static uint64_t f[64], k[64], g[64];
	const uint64_t *cols[3] = { f, k, g };
	struct pm_snapshot_writer *w;
	struct pm_snapshot_section sec;
	struct pm_snapshot *s;
	struct collect c[3];
	char dir[] = "/tmp/test_snapshot.XXXXXX", path[64], err[256];
	uint32_t ids[3];
	int i, refs = 0, own = 0;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/s.snap", dir);
	for (i = 0; i < 64; i++) {	/* words 0-9 and 50-63; 30 kpagecgroup's alone; zero runs of 20 and 19 between */
		f[i] = i < 10 || i >= 50 ? 0x100 + (uint64_t)i : 0;
		k[i] = f[i] ? 1 : 0;
		g[i] = i == 30 ? 7 : 0;
	}
	w = pm_snapshot_create(path);
	CHECK(w != NULL);
	for (i = 0; w && i < 3; i++)
		ids[i] = (uint32_t)pmi_snap_w_file(w, i == 0 ? "proc/kpageflags" : i == 1 ? "proc/kpagecount" : "proc/kpagecgroup",
						   PM_SNAPSHOT_WORDS, 64 * 8);
	if (w) {
		struct snap_ws *ws = pmi_snap_ws_new_cols(w, ids, 3);
		CHECK(ws != NULL);
		CHECK(pmi_snap_ws_add_cols(ws, 0, cols, 64) == 0);
		CHECK(pmi_snap_ws_close(ws) == 0);
		CHECK(pm_snapshot_commit(w) == 0);
		pm_snapshot_writer_free(w);
	}
	s = pm_snapshot_open(path, err, sizeof(err));
	CHECK(s != NULL);
	memset(c, 0, sizeof(c));
	while (s && pm_snapshot_next(s, &sec) == 0) {
		unsigned char fixed[SNAP_CHUNK_FIXED];
		int fd = open(path, O_RDONLY);
		if (sec.type != PM_SNAPSHOT_WORDS)
			continue;
		CHECK(pread(fd, fixed, sizeof(fixed), (off_t)(sec.offset + SNAP_SEC_SIZE)) == sizeof(fixed));
		close(fd);
		refs += snap_get64(fixed + 8) != 0;
		own += snap_get64(fixed + 8) == 0;
		CHECK(pm_snapshot_read(s, &sec, collect_fn, &c[sec.file]) == 0);
	}
	CHECK_EQ_U64(own, 1);
	CHECK_EQ_U64(refs, 2);
	CHECK(!memcmp(c[0].words, f, sizeof(f)) && !memcmp(c[1].words, k, sizeof(k)) && !memcmp(c[2].words, g, sizeof(g)));
	for (i = 0; i < 3; i++)	/* [0, 10), [30, 31), [50, 64) in each: 30 for kpagecgroup's word */
		CHECK_EQ_U64(c[i].calls, 3);
	pm_snapshot_close(s);
	unlink(path);
	rmdir(dir);
	return T_PASS;
}

/* build_sample's sections (version 3), then an INDEX of @len bytes of @pay and the trailer. */
static void build_index(struct build *b, const void *pay, size_t len)
{
	unsigned char t[SNAP_TRAILER_SIZE];
	uint64_t at;

	build_sample(b, PM_SNAPSHOT_VERSION);
	b->len = b->off[b->n - 1];	/* drop the INDEX and trailer b_finish wrote */
	b->n--;
	at = b->len;
	b_sec(b, PM_SNAPSHOT_INDEX, pay, len);
	snap_put64(t, at);
	memcpy(t + 8, SNAP_END_MAGIC, 8);
	b_put(b, t, sizeof(t));
}

/* Open a sample with INDEX payload @pay: refused with a line naming the INDEX section and containing @why. */
static int index_refused(const void *pay, size_t len, const char *why)
{
	struct build b;
	struct pm_snapshot *s;
	char err[256] = "";
	int ok;

	build_index(&b, pay, len);
	s = open_mem(b.p, b.len, err, sizeof(err));
	ok = s == NULL && errno == EBADMSG && strstr(err, "INDEX") && strstr(err, why) && !strchr(err, '\n');
	if (!ok)
		printf("  INDEX case \"%s\": %s\n", why, s ? "opened" : err);
	pm_snapshot_close(s);
	free(b.p);
	return ok;
}

/*
 * Version 3's INDEX (varint count, varint type and payload length per
 * section): the writer's opens; hostile ones are refused by their bounds,
 * with one line: truncated, absurd or wrong counts, overlapping lengths,
 * entries out of order, overlong varints, trailing bytes, the old layout.
 */
static int t_index_v3(void)
{
	struct build b;
	struct pm_snapshot *s;
	unsigned char good[256], bad[300];
	size_t n, i, len, cut;
	char err[256];

	build_sample(&b, PM_SNAPSHOT_VERSION);
	n = b.n - 1;	/* sections before the INDEX */
	b.len = b.off[n];
	b.n = n;
	len = b_index(&b, good);
	free(b.p);
	CHECK(len < 8 + n * 16);	/* smaller than versions 1 and 2's */
	build_index(&b, good, len);	/* the same again: opens */
	s = open_mem(b.p, b.len, err, sizeof(err));
	CHECK(s != NULL);
	pm_snapshot_close(s);
	free(b.p);
	for (cut = 0; cut < len; cut++)	/* truncated anywhere */
		CHECK(index_refused(good, cut, cut ? "" : "too short"));
	CHECK(index_refused(good, len - 1, "entry"));
	memcpy(bad, good, len);	/* one section more, one fewer, 2^63 */
	bad[0] = (unsigned char)(n + 1);
	CHECK(index_refused(bad, len, "lists"));
	bad[0] = (unsigned char)(n - 1);
	CHECK(index_refused(bad, len, "lists"));
	i = 0;
	for (int k = 0; k < 9; k++)
		bad[i++] = 0x80;
	bad[i++] = 0x01;
	memcpy(bad + i, good + 1, len - 1);
	CHECK(index_refused(bad, i + len - 1, "lists"));
	for (i = 0; i < 10; i++)	/* an 11-byte varint: over 64 bits */
		bad[i] = 0xff;
	bad[10] = 0x7f;
	CHECK(index_refused(bad, 11, "too short"));
	memcpy(bad, good, len);	/* trailing bytes: a zero, then a whole further entry */
	bad[len] = 0;
	CHECK(index_refused(bad, len + 1, "trailing bytes"));
	bad[len] = 1, bad[len + 1] = 4;
	CHECK(index_refused(bad, len + 2, "trailing bytes"));
	memcpy(bad, good, len);	/* the first section's length one more: it would overlap the second */
	CHECK(bad[2] < 0x7f);
	bad[2]++;
	CHECK(index_refused(bad, len, "entry 0 does not match"));
	memcpy(bad, good, len);	/* entries 0 and 1 swapped (META and FILE: out of order) */
	CHECK(good[1] < 0x80 && good[2] < 0x80 && good[3] < 0x80 && good[4] < 0x80);
	memcpy(bad + 1, good + 3, 2);
	memcpy(bad + 3, good + 1, 2);
	CHECK(index_refused(bad, len, "entry 0 does not match"));
	memcpy(bad, good, len);	/* a type too long for 32 bits */
	bad[1] = 0x81, bad[2] = 0x80, bad[3] = 0x80, bad[4] = 0x80, bad[5] = 0x80;
	memcpy(bad + 6, good + 2, len - 2);
	CHECK(index_refused(bad, len + 4, "entry 0 does not match"));
	build_sample(&b, 2);	/* versions 1 and 2's 16-byte entries: refused in a version 3 file, read in theirs */
	s = open_mem(b.p, b.len, err, sizeof(err));
	CHECK(s != NULL);
	pm_snapshot_close(s);
	CHECK(index_refused(b.p + b.off[b.n - 1] + SNAP_SEC_SIZE, 8 + n * 16, "does not match"));
	free(b.p);
	return T_PASS;
}

/* A chunk of file @id: one extent of @nw words from word 0 (bit 63 set in each) in a file of format @version. */
static void b_many(struct build *b, uint32_t version, uint32_t nw, uint32_t next)
{
	struct snap_extent *ext = calloc(next, sizeof(*ext));
	uint64_t *w = malloc(nw * 8ul);
	unsigned char *raw = malloc(pmi_snap_encode_bound(nw, next));
	uint32_t i;

	for (i = 0; i < next; i++) {	/* @next extents one word apart; the last takes what is left */
		ext[i].start = 2ull * i;
		ext[i].count = i + 1 < next ? 1 : nw - (next - 1);
	}
	for (i = 0; i < nw; i++)
		w[i] = 1ULL << 63;
	memset(b, 0, sizeof(*b));
	b_head(b, version);
	b_file(b, 0, PM_SNAPSHOT_WORDS, 8ull << 20, "proc/kpageflags");
	b_chunk(b, PM_SNAPSHOT_WORDS, 0, nw, 0, raw, pmi_snap_encode(ext, next, w, raw, version));
	b_finish(b);
	free(ext);
	free(w);
	free(raw);
}

/* The words of b_many's chunk: its header's count. */
static uint64_t sum_words(const struct build *b)
{
	return snap_get32(b->p + b->off[1] + SNAP_SEC_SIZE + 4);
}

/* Read the one chunk of b_many's file both ways (pm_snapshot_read, the replay's word reader): 0 or -errno. */
static int many_read(const struct build *b, uint64_t *sum_pread, char *err, size_t errsize)
{
	struct pm_snapshot_section sec;
	struct pm_snapshot *s = open_mem(b->p, b->len, err, errsize);
	struct sum c = { 0 };
	struct pm_ctx *ctx;
	char path[4096];
	uint64_t got[1024];
	int r = -EINVAL, fd;

	*sum_pread = 0;
	if (!s)
		return -errno;
	while (pm_snapshot_next(s, &sec) == 0)
		if (sec.type == PM_SNAPSHOT_WORDS)
			r = pm_snapshot_read(s, &sec, sum_fn, &c);
	if (!r && c.words != sum_words(b))
		r = -EIO;
	if (r)
		snprintf(err, errsize, "%s", pm_snapshot_error(s) ? pm_snapshot_error(s) : "?");
	ctx = pm_ctx_new_snapshot(s);
	close_mem(s);
	if (!ctx)
		return r ? r : -errno;
	if (pmi_path(ctx, path, sizeof(path), "/proc/kpageflags") == 0 && (fd = pmi_open(ctx, path, O_RDONLY)) >= 0) {
		for (uint64_t at = 0; at < (1u << 20); at += 1024) {	/* the whole file: words with bit 63 */
			ssize_t n = pmi_ctx_pread_words(ctx, fd, got, 1024, at);
			if (n < 0) {
				if (!r) {
					r = (int)n;
					snprintf(err, errsize, "%s", pm_ctx_tree_error(ctx) ? pm_ctx_tree_error(ctx) : "?");
				}
				break;
			}
			for (ssize_t i = 0; i < n; i++)
				*sum_pread += got[i] >> 63;
		}
		close(fd);
	}
	pm_ctx_free(ctx);
	return r;
}

/*
 * The words of one chunk: up to 262144 in a version 3 file, 65536 in a
 * version 1 or 2 file (as before); at most 65536 extents in either. Both
 * readers (pm_snapshot_read and the replay's) enforce the same limits.
 */
static int t_words_limits(void)
{
	struct build b;
	char err[256];
	uint64_t sum;

	b_many(&b, 2, SNAP_MAX_WORDS_V2, 1);	/* the most a version 2 chunk holds */
	CHECK(many_read(&b, &sum, err, sizeof(err)) == 0 && sum == SNAP_MAX_WORDS_V2);
	free(b.p);
	b_many(&b, 2, SNAP_MAX_WORDS_V2 + 1, 1);
	CHECK(many_read(&b, &sum, err, sizeof(err)) == -EBADMSG && strstr(err, "absurd word count"));
	free(b.p);
	b_many(&b, PM_SNAPSHOT_VERSION, SNAP_MAX_WORDS, 1);	/* version 3: four times that */
	CHECK(many_read(&b, &sum, err, sizeof(err)) == 0 && sum == SNAP_MAX_WORDS);
	free(b.p);
	b_many(&b, PM_SNAPSHOT_VERSION, SNAP_MAX_WORDS + 1, 1);
	CHECK(many_read(&b, &sum, err, sizeof(err)) == -EBADMSG && strstr(err, "absurd word count"));
	free(b.p);
	b_many(&b, PM_SNAPSHOT_VERSION, SNAP_MAX_EXTENTS + 10, SNAP_MAX_EXTENTS);	/* the most extents */
	CHECK(many_read(&b, &sum, err, sizeof(err)) == 0 && sum == SNAP_MAX_EXTENTS + 10);
	free(b.p);
	b_many(&b, PM_SNAPSHOT_VERSION, SNAP_MAX_EXTENTS + 10, SNAP_MAX_EXTENTS + 1);
	CHECK(many_read(&b, &sum, err, sizeof(err)) == -EBADMSG && strstr(err, "absurd extent count"));
	free(b.p);
	return T_PASS;
}

/*
 * The writer's chunks: contiguous frames go up to SNAP_MAX_WORDS words a
 * chunk; words whose columns encode past SNAP_MAX_RAW (random frames, a
 * token byte and up to 55 bits a word) are written in pieces that fit; every word reads back.
 */
static int t_writer_big_chunks(void)
{
	enum { N = 600000 };
	uint64_t *words = malloc(N * 8);
	struct pm_snapshot_writer *w;
	struct pm_snapshot_section sec;
	struct pm_snapshot *s;
	struct sum x[2] = { { 0 } };
	char dir[] = "/tmp/test_snapshot.XXXXXX", path[64], err[256];
	uint64_t want[2] = { 0, 0 }, seed = 42;
	int chunks[2] = { 0, 0 }, id[2], f, maxw[2] = { 0, 0 };

	CHECK(words && mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/s.snap", dir);
	w = pm_snapshot_create(path);
	CHECK(w != NULL);
	for (f = 0; w && f < 2; f++) {	/* file 0: contiguous frames; file 1: random ones */
		struct snap_ws *ws;
		id[f] = pmi_snap_w_file(w, f ? "proc/2/pagemap" : "proc/1/pagemap", PM_SNAPSHOT_WORDS, (uint64_t)N * 8);
		CHECK(id[f] >= 0);
		for (size_t i = 0; i < N; i++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			words[i] = (1ULL << 63) | (f ? (seed >> 9) | 1 : 0x1000 + i);
			want[f] += words[i] ^ i;
		}
		ws = pmi_snap_ws_new(w, (uint32_t)id[f]);
		CHECK(ws != NULL);
		CHECK(pmi_snap_ws_add(ws, 0, words, N) == 0);
		CHECK(pmi_snap_ws_close(ws) == 0);
	}
	if (w) {
		CHECK(pm_snapshot_commit(w) == 0);
		pm_snapshot_writer_free(w);
	}
	s = pm_snapshot_open(path, err, sizeof(err));
	CHECK(s != NULL);
	while (s && pm_snapshot_next(s, &sec) == 0) {
		uint64_t before;
		if (sec.type != PM_SNAPSHOT_WORDS)
			continue;
		before = x[sec.file].words;
		CHECK(pm_snapshot_read(s, &sec, sum_fn, &x[sec.file]) == 0);
		chunks[sec.file]++;
		if ((int)(x[sec.file].words - before) > maxw[sec.file])
			maxw[sec.file] = (int)(x[sec.file].words - before);
	}
	for (f = 0; f < 2; f++) {
		CHECK_EQ_U64(x[f].words, N);
		CHECK_EQ_U64(x[f].sum, want[f]);
	}
	CHECK_EQ_U64(chunks[0], (N + SNAP_MAX_WORDS - 1) / SNAP_MAX_WORDS);	/* 3 chunks, not 10 */
	CHECK_EQ_U64(maxw[0], SNAP_MAX_WORDS);
	CHECK(chunks[1] >= 4 && maxw[1] < 150000);	/* 8 bytes a word: about 130,000 words a chunk */
	pm_snapshot_close(s);
	unlink(path);
	rmdir(dir);
	free(words);
	return T_PASS;
}

/*
 * The read windows: written at commit as META window.PID=START,END, as many
 * as META's 64 KiB leaves room for, the rest counted (windows_omitted); the
 * file the reader opens; a META line past the limit is refused, not written.
 */
static int t_writer_windows(void)
{
	struct pm_snapshot_writer *w;
	struct pm_snapshot *s;
	char dir[] = "/tmp/test_snapshot.XXXXXX", path[64], err[256], key[32], val[4096];
	const char *v;
	int i, kept = 0;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/s.snap", dir);
	w = pm_snapshot_create(path);
	CHECK(w != NULL);
	if (!w)
		return T_FAIL;
	CHECK(pm_snapshot_add_meta(w, "writer", "test") == 0);
	for (i = 1; i <= 3000; i++)	/* about 55 bytes each: not all fit */
		CHECK(pmi_snap_w_window(w, 100000 + i, 1796586455272067338ULL + (uint64_t)i,
					1796586455272067338ULL + 2 * (uint64_t)i) == 0);
	CHECK(pm_snapshot_commit(w) == 0);
	pm_snapshot_writer_free(w);
	s = pm_snapshot_open(path, err, sizeof(err));
	CHECK(s != NULL);
	if (s) {
		CHECK_STR(pm_snapshot_meta(s, "window.100001"), "1796586455272067339,1796586455272067340");
		for (i = 1; i <= 3000; i++) {
			snprintf(key, sizeof(key), "window.%d", 100000 + i);
			kept += pm_snapshot_meta(s, key) != NULL;
		}
		CHECK(kept > 1000 && kept < 3000);
		v = pm_snapshot_meta(s, "windows_omitted");
		CHECK(v && atoi(v) == 3000 - kept);
		snprintf(key, sizeof(key), "window.%d", 100000 + kept + 1);
		CHECK(pm_snapshot_meta(s, key) == NULL);	/* the first ones kept, the last ones left out */
	}
	pm_snapshot_close(s);
	unlink(path);
	/* add_meta itself: past 64 KiB in all, -E2BIG */
	w = pm_snapshot_create(path);
	CHECK(w != NULL);
	memset(val, 'x', 4000);
	val[4000] = '\0';
	for (i = 0; w && i < 16; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		CHECK(pm_snapshot_add_meta(w, key, val) == 0);
	}
	CHECK(w && pm_snapshot_add_meta(w, "k16", val) == -E2BIG);
	pm_snapshot_writer_free(w);
	rmdir(dir);
	return t_failed_checks ? T_FAIL : T_PASS;
}

/* A series of three members of a tree whose proc/1/pagemap spans 3 slots: member 2 changes a word of slot 1. */
#define SER_WORDS (3 * SNAP_SLOT_WORDS)
static int series_member(const char *dir, const char *series, const uint64_t *words)
{
	char path[600];
	struct pm_snapshot_writer *w;
	char err[256];
	int r;

	snprintf(path, sizeof(path), "%s/tree/proc/1/pagemap", dir);
	if (write_file(path, words, SER_WORDS * 8, 0))
		return -EIO;
	snprintf(path, sizeof(path), "%s/tree", dir);
	if (!(w = pm_snapshot_append(series, err, sizeof(err))))
		return -errno;
	r = pm_snapshot_add_tree(w, path);
	if (!r)
		r = pm_snapshot_commit(w);
	pm_snapshot_writer_free(w);
	return r;
}

static int sum_member(const char *series, int member, uint64_t *sum, uint64_t *nwords)
{
	struct pm_snapshot_section sec;
	struct sum x;
	struct pm_snapshot *s = pm_snapshot_open_member(series, member, NULL, 0);
	int r = 0;

	if (!s)
		return -errno;
	memset(&x, 0, sizeof(x));
	while (!r && pm_snapshot_next(s, &sec) == 0)
		if (sec.type == PM_SNAPSHOT_WORDS)
			r = pm_snapshot_read(s, &sec, sum_fn, &x);
	pm_snapshot_close(s);
	*sum = x.sum;
	*nwords = x.words;
	return r;
}

static int build_series(char *dir, char *series, size_t size, uint64_t *words)
{
	char path[600];
	size_t i;

	if (!mkdtemp(dir))
		return -1;
	snprintf(series, size, "%s/s.series", dir);
	snprintf(path, sizeof(path), "%s/tree", dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/tree/proc", dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/tree/proc/1", dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/tree/proc/1/maps", dir);
	write_file(path, "maps\n", 5, 0);
	for (i = 0; i < SER_WORDS; i++)
		words[i] = 0x8100000000000000ULL | (0x10000 + i * 7 % 1000003);
	if (series_member(dir, series, words))
		return -1;
	words[SNAP_SLOT_WORDS + 5] ^= 0x4000;	/* slot 1 changes */
	if (series_member(dir, series, words) || series_member(dir, series, words))
		return -1;
	return 0;
}

/* pm_snapshot_append: members, their index, reuse of unchanged slots, every member read back. */
static int t_series_write(void)
{
	char dir[] = "/tmp/test_snapshot.XXXXXX", series[512], at[600], err[256];
	uint64_t *words = calloc(SER_WORDS, 8), sum, n, want1 = 0, want2 = 0;
	struct pm_snapshot_member m;
	struct pm_snapshot *s;
	struct stat st;
	unsigned open = 0;
	size_t i;

	CHECK(words != NULL);
	if (build_series(dir, series, sizeof(series), words)) {
		free(words);
		return t_skip("cannot write a series in /tmp");
	}
	for (i = 0; i < SER_WORDS; i++) {
		want2 += words[i] ^ i;	/* as sum_fn adds them */
		want1 += (i == SNAP_SLOT_WORDS + 5 ? words[i] ^ 0x4000 : words[i]) ^ i;
	}
	CHECK(stat(series, &st) == 0 && (st.st_mode & 0777) == 0600);
	s = pm_snapshot_open(series, err, sizeof(err));
	CHECK(s != NULL);
	CHECK(s && pm_snapshot_members(s, &open) == 3 && open == 3);
	CHECK(s && pm_snapshot_member_info(s, 1, &m) == 0 && m.reused == 0 && m.npids == 1 && m.pids[0] == 1);
	CHECK(s && pm_snapshot_member_info(s, 2, &m) == 0 && m.reused == 2 && m.words_bytes > 0);
	CHECK(s && pm_snapshot_member_info(s, 3, &m) == 0 && m.reused == 3 && m.words_bytes == 0);
	CHECK(s && pm_snapshot_member_info(s, 4, &m) == -ERANGE && pm_snapshot_member_info(s, 0, &m) == -ERANGE);
	pm_snapshot_close(s);
	CHECK(sum_member(series, 1, &sum, &n) == 0 && n == SER_WORDS && sum == want1);
	CHECK(sum_member(series, 2, &sum, &n) == 0 && n == SER_WORDS && sum == want2);
	CHECK(sum_member(series, 3, &sum, &n) == 0 && n == SER_WORDS && sum == want2);
	CHECK(sum_member(series, -3, &sum, &n) == 0 && sum == want1);
	CHECK(sum_member(series, 0, &sum, &n) == 0 && sum == want2);
	CHECK(pm_snapshot_open_member(series, 4, err, sizeof(err)) == NULL && errno == ERANGE && strstr(err, "has 3"));
	CHECK(pm_snapshot_open_member(series, -4, err, sizeof(err)) == NULL && errno == ERANGE);
	snprintf(at, sizeof(at), "%s@1", series);
	s = pm_snapshot_open(at, err, sizeof(err));
	CHECK(s && pm_snapshot_members(s, &open) == 3 && open == 1);
	pm_snapshot_close(s);
	/* A plain snapshot is not a series: refused, left as it was; a symlink is never followed. */
	snprintf(at, sizeof(at), "%s/plain.snap", dir);
	{
		struct pm_snapshot_writer *w = pm_snapshot_create(at);
		CHECK(w && pm_snapshot_add_meta(w, "k", "v") == 0 && pm_snapshot_commit(w) == 0);
		pm_snapshot_writer_free(w);
	}
	CHECK(pm_snapshot_append(at, err, sizeof(err)) == NULL && errno == EINVAL && strstr(err, "not a series"));
	s = pm_snapshot_open(at, NULL, 0);
	CHECK(s && pm_snapshot_members(s, &open) == 0 && open == 1);
	pm_snapshot_close(s);
	snprintf(at, sizeof(at), "%s/link", dir);
	CHECK(symlink(series, at) == 0);
	CHECK(pm_snapshot_append(at, err, sizeof(err)) == NULL && errno == ELOOP);
	pmi_snap_remove_tree(dir);
	free(words);
	return T_PASS;
}

/* The series file's bytes in memory, and where its SERIES section is. */
static unsigned char *series_bytes(const char *series, size_t *len, uint64_t *series_off)
{
	struct stat st;
	unsigned char *p;
	int fd = open(series, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) < 0 || !(p = malloc((size_t)st.st_size)) ||
	    pread(fd, p, (size_t)st.st_size, 0) != st.st_size) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	close(fd);
	*len = (size_t)st.st_size;
	*series_off = snap_get64(p + *len - SNAP_TRAILER_SIZE);
	return p;
}

/* Rewrite the section at @off (payload of @n bytes, already changed in place) with checksums that match. */
static void reseal(unsigned char *p, uint64_t off, size_t n)
{
	uint64_t hash = pmi_snap_hash(p + off + SNAP_SEC_SIZE, n);

	snap_put64(p + off + 16, hash);
	snap_put32(p + off + 4, pmi_snap_header_check(snap_get32(p + off), n, hash));
}

/* Open member @member of @p: must fail with one line naming @what (and EBADMSG or ERANGE). */
static int refused_member(const unsigned char *p, size_t len, int member, const char *what)
{
	char err[256] = "";
	int fd = mem_fd(p, len);
	struct pm_snapshot *s = fd >= 0 ? pm_snapshot_open_member_fd(fd, member, err, sizeof(err)) : NULL;
	int ok = !s && (errno == EBADMSG || errno == ERANGE || errno == EPROTONOSUPPORT) && err[0] &&
		 !strchr(err, '\n') && (!what || strstr(err, what));

	if (!ok)
		printf("  member %d: %s (want a refusal naming '%s')\n", member, s ? "opened" : err, what ? what : "");
	pm_snapshot_close(s);
	if (fd >= 0)
		close(fd);
	return ok;
}

/* A series with a new SERIES payload @pay (@n bytes) in place of its own. */
static unsigned char *with_series(const unsigned char *p, uint64_t series_off, const unsigned char *pay, size_t n,
				  size_t *len)
{
	unsigned char *q = malloc(series_off + SNAP_SEC_SIZE + n + SNAP_TRAILER_SIZE);

	memcpy(q, p, series_off);
	snap_put32(q + series_off, PM_SNAPSHOT_SERIES);
	snap_put64(q + series_off + 8, n);
	memcpy(q + series_off + SNAP_SEC_SIZE, pay, n);
	reseal(q, series_off, n);
	snap_put64(q + series_off + SNAP_SEC_SIZE + n, series_off);
	memcpy(q + series_off + SNAP_SEC_SIZE + n + 8, SNAP_END_MAGIC, 8);
	*len = series_off + SNAP_SEC_SIZE + n + SNAP_TRAILER_SIZE;
	return q;
}

/* Damaged series: truncated, bits flipped, REUSE to nowhere, forward or itself, absurd or misplaced members. */
static int t_series_hostile(void)
{
	char dir[] = "/tmp/test_snapshot.XXXXXX", series[512];
	uint64_t *words = calloc(SER_WORDS, 8), series_off = 0, reuse = 0, base2 = 0, v;
	unsigned char *p, *q, pay[256];
	struct pm_snapshot_member m;
	struct pm_snapshot *s;
	size_t len = 0, qlen, i, n;
	int bad = 0, r;

	CHECK(words != NULL);
	if (build_series(dir, series, sizeof(series), words)) {
		free(words);
		return t_skip("cannot write a series in /tmp");
	}
	p = series_bytes(series, &len, &series_off);
	CHECK(p != NULL);
	s = pm_snapshot_open(series, NULL, 0);
	CHECK(s && pm_snapshot_member_info(s, 2, &m) == 0);
	base2 = m.offset;
	pm_snapshot_close(s);
	for (i = base2; i < base2 + m.length && !reuse; i += SNAP_SEC_SIZE + snap_get64(p + i + 8))
		if (snap_get32(p + i) == PM_SNAPSHOT_REUSE)
			reuse = i;
	CHECK(reuse != 0);
	/* Truncated anywhere: refused, one line (a torn tail is not read as a shorter series). */
	for (i = 0; i < len; i += i + 64 < len ? 61 : 1)
		bad += !refused_member(p, i, 0, NULL) + !refused_member(p, i, 1, NULL);
	CHECK(bad == 0);
	/* Bits flipped in the SERIES section, the trailer and a REUSE section. */
	for (i = series_off * 8; i < len * 8; i += 3) {
		p[i / 8] ^= (unsigned char)(1u << (i % 8));
		bad += !refused_member(p, len, 0, NULL);
		p[i / 8] ^= (unsigned char)(1u << (i % 8));
	}
	for (i = reuse * 8; i < (reuse + SNAP_SEC_SIZE + SNAP_REUSE_LEN) * 8; i++) {
		p[i / 8] ^= (unsigned char)(1u << (i % 8));
		bad += !refused_member(p, len, 2, NULL);
		p[i / 8] ^= (unsigned char)(1u << (i % 8));
	}
	CHECK(bad == 0);
	/* A REUSE naming itself, a later byte, its own member, no section start, a META section, past the file. */
	{
		const uint64_t to[] = { reuse, reuse + 40, base2, SNAP_HEAD_SIZE + 1, SNAP_HEAD_SIZE, UINT64_MAX - 8,
					0 };
		uint64_t was = snap_get64(p + reuse + SNAP_SEC_SIZE + 8);
		for (i = 0; i < sizeof(to) / sizeof(to[0]); i++) {
			snap_put64(p + reuse + SNAP_SEC_SIZE + 8, to[i]);
			reseal(p, reuse, SNAP_REUSE_LEN);
			bad += !refused_member(p, len, 2, "REUSE");
		}
		snap_put64(p + reuse + SNAP_SEC_SIZE + 4, 12345);	/* another word count than the chunk's */
		snap_put64(p + reuse + SNAP_SEC_SIZE + 8, was);
		reseal(p, reuse, SNAP_REUSE_LEN);
		bad += !refused_member(p, len, 2, "REUSE");
	}
	CHECK(bad == 0);
	/* Absurd or misplaced members in a SERIES index that is itself well sealed. */
	n = pmi_snap_put_varint(pay, 1u << 30);
	q = with_series(p, series_off, pay, n + 16, &qlen);
	CHECK(refused_member(q, qlen, 0, "member count"));
	free(q);
	n = pmi_snap_put_varint(pay, 0);
	q = with_series(p, series_off, pay, n, &qlen);
	CHECK(refused_member(q, qlen, 0, "member count"));
	free(q);
	for (r = 0; r < 3; r++) {	/* one member: at byte 17, ending short of the index, with 65 PIDs listed */
		const uint64_t f[3][8] = { { SNAP_HEAD_SIZE + 1, series_off - SNAP_HEAD_SIZE - 1, 0, 0, 0, 0, 0, 0 },
					   { SNAP_HEAD_SIZE, base2 - SNAP_HEAD_SIZE, 0, 0, 0, 0, 0, 0 },
					   { SNAP_HEAD_SIZE, series_off - SNAP_HEAD_SIZE, 0, 0, 0, 0, 65, 65 } };
		n = pmi_snap_put_varint(pay, 1);
		for (i = 0; i < 8; i++)
			n += pmi_snap_put_varint(pay + n, f[r][i]);
		q = with_series(p, series_off, pay, n, &qlen);
		CHECK(refused_member(q, qlen, 0, "series index"));
		free(q);
	}
	/* Its own SERIES payload back, sealed again: opens (the forging helpers themselves are right). */
	v = snap_get64(p + series_off + 8);
	q = with_series(p, series_off, p + series_off + SNAP_SEC_SIZE, (size_t)v, &qlen);
	{
		int fd = mem_fd(q, qlen);
		s = fd >= 0 ? pm_snapshot_open_member_fd(fd, 1, NULL, 0) : NULL;
		CHECK(s != NULL);
		pm_snapshot_close(s);
		if (fd >= 0)
			close(fd);
	}
	free(q);
	free(p);
	pmi_snap_remove_tree(dir);
	free(words);
	return T_PASS;
}

T_MAIN(T(t_codec_roundtrip), T(t_codec_frame_modes), T(t_codec_runs_same), T(t_codec_hostile), T(t_reader_sample), T(t_reader_files), T(t_reader_truncated), T(t_reader_bitflips),
       T(t_reader_version), T(t_reader_absurd), T(t_reader_sized_buffers), T(t_writer_tree), T(t_writer_text_lengths),
       T(t_replay_words), T(t_shared_extents), T(t_shared_replay), T(t_writer_cols),
       T(t_index_v3), T(t_words_limits), T(t_writer_big_chunks), T(t_writer_windows), T(t_series_write),
       T(t_series_hostile))
