/*
 * snapshot_words.c - the word files of a replayed snapshot (pagemap, kpage*) read straight from their WORDS
 * chunks. pm_ctx_new_snapshot extracts the text files into a tree but leaves each word file a sparse file of
 * its length with no data: writing tens of MiB of decoded words to a file system (then unlinking them) cost
 * most of a replay's time. Reads of those files (pmi_ctx_pread_words) find them by inode and decode the
 * chunks that hold the words asked for, a few decoded chunks kept; memory stays bounded whatever the size.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pme.h"
#include "snapshot_words.h"
#include "zstd_load.h"

#define NSLOTS 4	/* decoded chunks kept: a walk reads its pagemap in order, kpage lookups come in sorted batches */

struct wchunk {
	uint64_t offset, length;	/* the WORDS section: header offset, payload length */
	uint64_t ref_offset, ref_length;	/* version 3: the section holding its extents (length 0: none) */
	uint64_t lo, hi;		/* the words it holds lie in [lo, hi) (known once its file is indexed) */
	int huge;			/* pmi_snap_words_same: 0 not known, 1 no huge page candidate, 2 some */
};

struct wfile {
	uint32_t id;
	dev_t dev;
	ino_t ino;
	uint64_t nwords;		/* the file's length in words */
	struct wchunk *c;
	size_t n, cap;
	bool indexed;			/* lo and hi known, chunks sorted by lo */
	bool disjoint;			/* indexed, and no chunk's [lo, hi) overlaps another's */
	bool kpageflags;		/* proc/kpageflags: what a walk confirms huge pages with */
	bool bound;			/* dev and ino are the file's (pmi_snap_words_bind) */
};

struct slot {
	const struct wchunk *chunk;	/* NULL: empty */
	uint64_t age;
	struct snap_extent *ext;
	uint64_t *first;		/* per extent: the index in words of its first word */
	uint64_t *words;
	size_t next, cap, xcap;		/* room for cap words, xcap extents */
};

struct pmi_snap_words {
	int fd;
	dev_t dev;			/* the snapshot file's: two readers of one series compare chunks by offset */
	ino_t ino;
	const struct pmi_snap_words *kpf_peer;	/* pmi_snap_words_same: the reader kpf_same was found with */
	bool kpf_same;
	uint32_t max_words;		/* words a chunk may hold: the file's version's limit */
	uint32_t version;		/* the file's format version: its column encoding */
	pthread_mutex_t lock;
	struct wfile *f;
	size_t nf, fcap;
	struct slot slot[NSLOTS];
	uint64_t clock;
	unsigned char *zbuf, *raw;
	size_t zcap, rawcap;
	char err[256];
};

struct pmi_snap_words *pmi_snap_words_new(int fd, uint32_t version)
{
	struct pmi_snap_words *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->max_words = snap_max_words(version);
	w->version = version;
	struct stat st;

	if ((w->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0 || fstat(w->fd, &st) < 0) {
		if (w->fd >= 0)
			close(w->fd);
		free(w);
		return NULL;
	}
	w->dev = st.st_dev;
	w->ino = st.st_ino;
	pthread_mutex_init(&w->lock, NULL);
	return w;
}

void pmi_snap_words_free(struct pmi_snap_words *w)
{
	size_t i;

	if (!w)
		return;
	close(w->fd);
	for (i = 0; i < w->nf; i++)
		free(w->f[i].c);
	for (i = 0; i < NSLOTS; i++) {
		free(w->slot[i].ext);
		free(w->slot[i].first);
		free(w->slot[i].words);
	}
	free(w->f);
	free(w->zbuf);
	free(w->raw);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

const char *pmi_snap_words_error(const struct pmi_snap_words *w)
{
	return w && w->err[0] ? w->err : NULL;
}

static struct wfile *find_id(struct pmi_snap_words *w, uint32_t id)
{
	size_t lo = 0, hi = w->nf;

	while (lo < hi) {	/* ids are added in ascending order */
		size_t mid = lo + (hi - lo) / 2;
		if (w->f[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < w->nf && w->f[lo].id == id ? &w->f[lo] : NULL;
}

int pmi_snap_words_add_file(struct pmi_snap_words *w, uint32_t id, uint64_t size, const char *path)
{
	struct wfile *f;

	if (w->nf && w->f[w->nf - 1].id >= id)
		return -EINVAL;
	if (w->nf == w->fcap) {
		size_t nc = w->fcap ? w->fcap * 2 : 16;
		struct wfile *nf = realloc(w->f, nc * sizeof(*nf));
		if (!nf)
			return -ENOMEM;
		w->f = nf;
		w->fcap = nc;
	}
	f = &w->f[w->nf++];
	memset(f, 0, sizeof(*f));
	f->id = id;
	f->nwords = size / 8;
	f->kpageflags = !strcmp(path, "proc/kpageflags");
	return 0;
}

int pmi_snap_words_bind(struct pmi_snap_words *w, uint32_t id, int fd)
{
	struct wfile *f = find_id(w, id);
	struct stat st;

	if (!f)
		return -EINVAL;
	if (fstat(fd, &st) < 0)
		return -errno;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->bound = true;
	return 0;
}

int pmi_snap_words_add_chunk(struct pmi_snap_words *w, uint32_t id, uint64_t offset, uint64_t length,
			     uint64_t ref_offset, uint64_t ref_length)
{
	struct wfile *f = find_id(w, id);

	if (!f)
		return -EINVAL;
	if (f->n == f->cap) {
		size_t nc = f->cap ? f->cap * 2 : 8;
		struct wchunk *c = realloc(f->c, nc * sizeof(*c));
		if (!c)
			return -ENOMEM;
		f->c = c;
		f->cap = nc;
	}
	f->c[f->n++] = (struct wchunk){ .offset = offset, .length = length, .ref_offset = ref_offset,
					.ref_length = ref_length };
	return 0;
}

static int bad(struct pmi_snap_words *w, const struct wchunk *c, const char *why)
{
	if (!w->err[0])
		snprintf(w->err, sizeof(w->err), "WORDS section at byte %llu: %s", (unsigned long long)c->offset, why);
	return -EBADMSG;
}

static int grow_buf(unsigned char **p, size_t *cap, size_t n)
{
	unsigned char *np;

	if (n <= *cap)
		return 0;
	if (!(np = realloc(*p, n)))
		return -ENOMEM;
	*p = np;
	*cap = n;
	return 0;
}


/* Decompress chunk @c into w->raw; *@nwords the word count its header gives. The checks of pm_snapshot_read. */
static int inflate(struct pmi_snap_words *w, const struct wchunk *c, size_t *rawlen, uint32_t *nwords)
{
	size_t zlen = (size_t)(c->length - SNAP_CHUNK_FIXED), got;
	unsigned long long want;
	int r;

	const struct pmi_zstd *z = pmi_zstd(NULL, 0);

	if (!z)
		return bad(w, c, "libzstd is not loaded");
	if (c->length < SNAP_CHUNK_FIXED || zlen > ZSTD_COMPRESSBOUND(SNAP_MAX_RAW))
		return bad(w, c, "chunk length over the limit");
	if ((r = grow_buf(&w->zbuf, &w->zcap, zlen + SNAP_CHUNK_FIXED)))
		return r;
	if ((r = pmi_pread_all(w->fd, w->zbuf, zlen + SNAP_CHUNK_FIXED, c->offset + SNAP_SEC_SIZE)))
		return r == -ENODATA ? bad(w, c, "truncated") : r;
	*nwords = snap_get32(w->zbuf + 4);
	want = z->frame_content_size(w->zbuf + SNAP_CHUNK_FIXED, zlen);
	if (want == ZSTD_CONTENTSIZE_ERROR || want == ZSTD_CONTENTSIZE_UNKNOWN || want > SNAP_MAX_RAW)
		return bad(w, c, "not a zstd frame of at most 1 MiB");
	if ((r = grow_buf(&w->raw, &w->rawcap, want ? (size_t)want : 1)))
		return r;
	got = z->decompress(w->raw, (size_t)want, w->zbuf + SNAP_CHUNK_FIXED, zlen);
	if (z->is_error(got) || got != want)
		return bad(w, c, "zstd frame damaged");
	*rawlen = got;
	return 0;
}

/* Room for @n words and @x extents (what the chunk holds; at most 3.5 MiB a slot). The slot's chunk is lost. */
static int slot_buffers(struct slot *s, size_t n, size_t x)
{
	if (x > s->xcap) {	/* what they held is not kept: the chunk is decoded into them afresh */
		free(s->ext);
		free(s->first);
		s->xcap = 0;
		s->ext = pmi_snap_big_alloc(x * sizeof(*s->ext));
		s->first = pmi_snap_big_alloc(x * sizeof(*s->first));
		if (!s->ext || !s->first)
			return -ENOMEM;
		s->xcap = x;
	}
	if (n > s->cap) {
		free(s->words);
		s->cap = 0;
		if (!(s->words = pmi_snap_big_alloc(n * sizeof(*s->words))))
			return -ENOMEM;
		s->cap = n;
	}
	return 0;
}

/*
 * Decode chunk @c of @f into slot @s: its extents (version 3: maybe those of
 * the chunk it refers to), each within the file, and their words.
 */
/*
 * The extent list of chunk @x (a WORDS chunk, or the one whose extents a
 * version 3 chunk refers to) into slot @s's extents, decompressed into
 * w->raw: *@rawlen bytes there, the columns from *@used, *@nw words. The
 * count of extents, or -errno.
 */
static int decode_extents(struct pmi_snap_words *w, const struct wchunk *x, struct slot *s, size_t *rawlen,
			  size_t *nw, size_t *used)
{
	const char *why = "malformed";
	size_t xmax;
	uint32_t xhdr;
	int next, r;

	if ((r = inflate(w, x, rawlen, &xhdr)))
		return r;
	if (xhdr > w->max_words)
		return bad(w, x, "absurd word count");
	xmax = pmi_snap_extent_room(w->raw, *rawlen, xhdr);	/* what the chunk holds, not what its header says */
	if ((r = slot_buffers(s, 0, xmax)))
		return r;
	next = pmi_snap_decode_extents(w->raw, *rawlen, s->ext, xmax, xhdr, nw, used, &why);
	if (next < 0)
		return bad(w, x, why);
	if (*nw != xhdr)
		return bad(w, x, "word count differs from the header's");
	return next;
}

static int decode_into(struct pmi_snap_words *w, const struct wfile *f, const struct wchunk *c, struct slot *s)
{
	const struct wchunk ref = { .offset = c->ref_offset, .length = c->ref_length };
	const struct wchunk *x = c->ref_length ? &ref : c;	/* where the extents are */
	const char *why = "malformed";
	size_t rawlen, nw, used, e, done = 0;
	uint32_t hdr;
	int next, r;

	s->chunk = NULL;
	if ((next = decode_extents(w, x, s, &rawlen, &nw, &used)) < 0)
		return next;
	if ((r = slot_buffers(s, nw ? nw : 1, 0)))
		return r;
	if (x != c) {	/* its own payload: the columns alone */
		if ((r = inflate(w, c, &rawlen, &hdr)))
			return r;
		if (hdr != nw)
			return bad(w, c, "word count differs from the shared extents'");
		used = 0;
	}
	if (pmi_snap_decode_columns(w->raw + used, rawlen - used, s->words, nw, w->version, &why))
		return bad(w, c, why);
	for (e = 0; e < (size_t)next; e++) {
		if (s->ext[e].start + s->ext[e].count > f->nwords)
			return bad(w, x, "words past the file's length");
		s->first[e] = done;
		done += s->ext[e].count;
	}
	s->next = (size_t)next;
	s->chunk = c;
	s->age = ++w->clock;
	return 0;
}

/* The slot holding chunk @c decoded, decoding it into the least recently used one if none does. */
static int get_slot(struct pmi_snap_words *w, const struct wfile *f, const struct wchunk *c, struct slot **out)
{
	struct slot *old = &w->slot[0];
	int i, r;

	for (i = 0; i < NSLOTS; i++) {
		if (w->slot[i].chunk == c) {
			w->slot[i].age = ++w->clock;
			*out = &w->slot[i];
			return 0;
		}
		if (w->slot[i].age < old->age)
			old = &w->slot[i];
	}
	if ((r = decode_into(w, f, c, old)))
		return r;
	*out = old;
	return 0;
}

static int lo_cmp(const void *a, const void *b)
{
	const struct wchunk *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/*
 * The range [lo, hi) of chunk @c's words from its extent list alone (the
 * frame decompressed, the columns not decoded), into slot @s's extents.
 */
static int chunk_range(struct pmi_snap_words *w, struct wchunk *c, struct slot *s)
{
	const struct wchunk ref = { .offset = c->ref_offset, .length = c->ref_length };
	size_t rawlen, nw, used;
	int next = decode_extents(w, c->ref_length ? &ref : c, s, &rawlen, &nw, &used);

	if (next < 0)
		return next;
	c->lo = next ? s->ext[0].start : 0;
	c->hi = next ? s->ext[next - 1].start + s->ext[next - 1].count : 0;
	return 0;
}

/*
 * Learn each chunk's range of words (its extent list: no column decoded),
 * then sort the chunks by where they start and note whether they overlap
 * (the frame join's chunks of one file may; a process's pagemap's do not).
 */
static int index_file(struct pmi_snap_words *w, struct wfile *f)
{
	size_t i;
	int r;

	for (i = 0; i < NSLOTS; i++)
		w->slot[i].chunk = NULL;	/* the chunks move when sorted; slot 0 is a scratch meanwhile */
	for (i = 0; i < f->n; i++)
		if ((r = chunk_range(w, &f->c[i], &w->slot[0])))
			return r;
	qsort(f->c, f->n, sizeof(*f->c), lo_cmp);
	f->disjoint = true;
	for (i = 0; i + 1 < f->n; i++)
		if (f->c[i].hi > f->c[i + 1].lo && f->c[i].hi > f->c[i].lo)
			f->disjoint = false;
	f->indexed = true;
	return 0;
}

/* Copy the words of slot @s that lie in [@from, @to) into @buf (word @from at buf[0]). */
static void copy_words(const struct slot *s, uint64_t from, uint64_t to, uint64_t *buf)
{
	size_t lo = 0, hi = s->next;

	while (lo < hi) {	/* the first extent that ends after @from: extents ascend */
		size_t mid = lo + (hi - lo) / 2;
		if (s->ext[mid].start + s->ext[mid].count <= from)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < s->next && s->ext[lo].start < to; lo++) {
		uint64_t a = s->ext[lo].start > from ? s->ext[lo].start : from;
		uint64_t b = s->ext[lo].start + s->ext[lo].count < to ? s->ext[lo].start + s->ext[lo].count : to;
		memcpy(buf + (a - from), s->words + s->first[lo] + (a - s->ext[lo].start), (size_t)(b - a) * 8);
	}
}

static ssize_t read_file(struct pmi_snap_words *w, struct wfile *f, uint64_t *buf, size_t count, uint64_t index)
{
	uint64_t end;
	struct slot *s;
	size_t i;
	int r;

	if (!f->indexed && (r = index_file(w, f)))
		return r;
	if (index >= f->nwords)
		return 0;
	end = f->nwords - index < count ? f->nwords : index + count;
	memset(buf, 0, (size_t)(end - index) * 8);	/* words in no chunk read 0, as a sparse file's holes */
	for (i = 0; i < f->n && f->c[i].lo < end; i++) {
		if (f->c[i].hi <= index)
			continue;
		if ((r = get_slot(w, f, &f->c[i], &s)))
			return r;
		copy_words(s, index, end, buf);
	}
	return (ssize_t)(end - index);
}

/* The word file open on @fd, or NULL (-errno in *@r when fstat fails). */
static struct wfile *find_fd(struct pmi_snap_words *w, int fd, int *r)
{
	struct stat st;
	size_t i;

	*r = 0;
	if (fstat(fd, &st) < 0) {
		*r = -errno;
		return NULL;
	}
	for (i = 0; i < w->nf; i++)
		if (w->f[i].bound && w->f[i].ino == st.st_ino && w->f[i].dev == st.st_dev)
			return &w->f[i];
	return NULL;
}

ssize_t pmi_snap_words_pread(struct pmi_snap_words *w, int fd, uint64_t *buf, size_t count, uint64_t index)
{
	int e;
	struct wfile *f = find_fd(w, fd, &e);
	ssize_t r;

	if (e)
		return e;
	if (!f)
		return PMI_SNAP_WORDS_NOT_MINE;
	pthread_mutex_lock(&w->lock);
	r = read_file(w, f, buf, count, index);
	pthread_mutex_unlock(&w->lock);
	return r;
}

int pmi_snap_words_next_data(struct pmi_snap_words *w, int fd, uint64_t index, uint64_t *next)
{
	struct wfile *f;
	size_t i;
	int r;

	if (!(f = find_fd(w, fd, &r)))
		return r ? r : (int)PMI_SNAP_WORDS_NOT_MINE;
	pthread_mutex_lock(&w->lock);
	r = f->indexed ? 0 : index_file(w, f);
	*next = index < f->nwords ? f->nwords : index;
	for (i = 0; !r && i < f->n; i++) {	/* sorted by lo: the first that ends past @index starts first */
		if (f->c[i].hi > index && f->c[i].hi > f->c[i].lo) {
			*next = f->c[i].lo > index ? f->c[i].lo : index;
			break;
		}
	}
	pthread_mutex_unlock(&w->lock);
	return r;
}

/* The first chunk of indexed, disjoint @f whose words end after @index (f->n if none). */
static size_t chunk_after(const struct wfile *f, uint64_t index)
{
	size_t lo = 0, hi = f->n;

	while (lo < hi) {	/* disjoint and sorted by lo: hi ascends too (empty chunks aside, hi 0) */
		size_t mid = lo + (hi - lo) / 2;
		if (f->c[mid].hi <= index)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The file of @w's open on @fd, indexed (NULL: not one of its files, or damaged: *@r). */
static struct wfile *indexed_file(struct pmi_snap_words *w, int fd, int *r)
{
	struct wfile *f = find_fd(w, fd, r);

	if (f && !f->indexed) {
		pthread_mutex_lock(&w->lock);
		*r = index_file(w, f);
		pthread_mutex_unlock(&w->lock);
	}
	return *r ? NULL : f;
}

/* The kpageflags files of @a and @b: both absent, or the same chunks of the same file. */
static int same_kpageflags(struct pmi_snap_words *a, struct pmi_snap_words *b)
{
	struct wfile *fa = NULL, *fb = NULL;
	size_t i;
	int r = 0;

	for (i = 0; i < a->nf; i++)
		fa = a->f[i].kpageflags ? &a->f[i] : fa;
	for (i = 0; i < b->nf; i++)
		fb = b->f[i].kpageflags ? &b->f[i] : fb;
	if (!fa || !fb)
		return !fa && !fb;
	if (fa->n != fb->n)
		return 0;
	pthread_mutex_lock(&a->lock);
	r = fa->indexed ? 0 : index_file(a, fa);
	pthread_mutex_unlock(&a->lock);
	pthread_mutex_lock(&b->lock);
	r = r ? r : fb->indexed ? 0 : index_file(b, fb);
	pthread_mutex_unlock(&b->lock);
	if (r)
		return r;
	for (i = 0; i < fa->n; i++)
		if (fa->c[i].offset != fb->c[i].offset || fa->c[i].ref_offset != fb->c[i].ref_offset)
			return 0;
	return 1;
}

/*
 * Might a walk confirm a huge page with kpageflags in chunk @i of @f (a
 * pagemap, words of @block per PMD)? Yes where a present word at a
 * @block-aligned index holds a @block-aligned frame followed by @block - 1
 * contiguous ones (walk_entries.c huge_block), and where another chunk
 * shares a PMD with it (a block it cannot see whole). Decodes the chunk
 * once (the answer is kept). 1 no, 0 maybe, -errno.
 */
static int chunk_no_huge(struct pmi_snap_words *w, struct wfile *f, size_t i, uint64_t block)
{
	struct wchunk *c = &f->c[i];
	struct slot *s;
	size_t e;
	uint64_t k;
	int r;

	if (c->huge || !block)
		return c->huge == 1;
	c->huge = 2;
	if ((i && f->c[i - 1].hi > c->lo / block * block) ||
	    (i + 1 < f->n && f->c[i + 1].lo < (c->hi + block - 1) / block * block))
		return 0;
	pthread_mutex_lock(&w->lock);
	r = get_slot(w, f, c, &s);
	for (e = 0; !r && e < s->next; e++) {
		for (k = (s->ext[e].start + block - 1) / block * block - s->ext[e].start; k < s->ext[e].count; k += block) {
			const uint64_t *x = s->words + s->first[e] + k;
			if (!pme_huge_head(x[0], block))
				continue;
			if (k + block > s->ext[e].count || pme_huge_candidate(x, block))
				goto maybe;	/* (past the extent its next words read 0, no huge page, but be safe) */
		}
	}
	if (!r)
		c->huge = 1;
maybe:
	pthread_mutex_unlock(&w->lock);
	return r ? r : c->huge == 1;
}

int pmi_snap_words_same(struct pmi_snap_words *a, int fda, struct pmi_snap_words *b, int fdb, uint64_t index,
			uint64_t end, uint64_t block, uint64_t *upto)
{
	struct wfile *fa, *fb;
	size_t ia, ib;
	bool ca, cb;
	int r;

	*upto = end;
	if (!a || !b || a->dev != b->dev || a->ino != b->ino || index >= end)
		return 0;
	if (a->kpf_peer != b) {	/* asked once per pair */
		if ((r = same_kpageflags(a, b)) < 0)
			return r;
		a->kpf_peer = b;
		a->kpf_same = r;
	}
	if (!(fa = indexed_file(a, fda, &r)) || !(fb = indexed_file(b, fdb, &r)))
		return r;
	if (!fa->disjoint || !fb->disjoint)
		return 0;
	ia = chunk_after(fa, index);
	ib = chunk_after(fb, index);
	ca = ia < fa->n && fa->c[ia].lo <= index;
	cb = ib < fb->n && fb->c[ib].lo <= index;
	if (ia < fa->n && (ca ? fa->c[ia].hi : fa->c[ia].lo) < *upto)	/* where either side's answer changes */
		*upto = ca ? fa->c[ia].hi : fa->c[ia].lo;
	if (ib < fb->n && (cb ? fb->c[ib].hi : fb->c[ib].lo) < *upto)
		*upto = cb ? fb->c[ib].hi : fb->c[ib].lo;
	if (!ca && !cb)
		return 1;	/* a hole on both sides: zeros */
	if (!ca || !cb || fa->c[ia].offset != fb->c[ib].offset || fa->c[ia].ref_offset != fb->c[ib].ref_offset ||
	    fa->c[ia].lo != fb->c[ib].lo)
		return 0;
	/* The same stored chunk on both sides: the same words, [lo, hi) alike. A walk confirms a huge page with
	 * the kpageflags word of its first frame: where those differ, only a chunk that shows none is the same. */
	return a->kpf_same ? 1 : chunk_no_huge(a, fa, ia, block);
}
