/* snapshot_key.c - rewrite a keyed snapshot with the real frame numbers, for the owner of the key. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base.h"
#include "snapshot.h"

#define MAX_STREAMS	4u	/* the current pagemap and the three kpage files */

struct unscramble {
	struct pm_snapshot *s;
	struct pm_snapshot_writer *w;
	struct pmi_perm perm[2];
	struct pmi_scramble sc;
	struct snap_ws *ws[MAX_STREAMS];
	uint32_t ws_file[MAX_STREAMS];
	uint32_t file;			/* of the chunk being read */
	int kind;			/* of the chunk: 0 pagemap words, 1 kpage words, -1 bytes copied as is */
	char *features;			/* pagemap-features with zero_pfn restored */
	size_t features_len;
	uint64_t *moved;		/* kpage chunk: new index, word pairs, gathered over all its extents */
	size_t nmoved;
	uint64_t lift;			/* META key_lift (0 in files written before it) */
	uint64_t kp_words;		/* the kpage file being read: its length in words once unscrambled */
	char why[160];			/* a damaged file's one-line reason */
};

/*
 * A kpage file's length unscrambled: the keyed file's, less the lift (its
 * words lie in [lift, length)), which is the keep snapshot's length again.
 * Files without key_lift keep their length, as before.
 */
static int kpage_words(struct unscramble *u, const struct pm_snapshot_section *sec, uint64_t *out)
{
	uint64_t n = sec->size / 8;

	if (n < u->lift) {
		snprintf(u->why, sizeof(u->why), "%s: %llu words, fewer than key_lift %llu", sec->path,
			 (unsigned long long)n, (unsigned long long)u->lift);
		return -EBADMSG;
	}
	*out = n - u->lift;
	return 0;
}

static int kind_of(const char *path)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

	if (!strcmp(base, "pagemap"))
		return 0;
	if (!strcmp(path, "proc/kpageflags") || !strcmp(path, "proc/kpagecount") || !strcmp(path, "proc/kpagecgroup"))
		return 1;
	return !strcmp(path, "pagemap-features") ? 2 : -1;
}

/* The stream of file @id: slot 0 for pagemaps (one at a time, closed when the next begins), 1-3 kpage files. */
static struct snap_ws *stream(struct unscramble *u, uint32_t id, int kind, int *err)
{
	unsigned i, slot = 0;

	for (i = 1; kind == 1 && i < MAX_STREAMS && !slot; i++)
		if (!u->ws[i] || u->ws_file[i] == id)
			slot = i;
	if (kind == 1 && !slot)
		return *err = -EBADMSG, NULL;
	if (u->ws[slot] && u->ws_file[slot] == id)
		return u->ws[slot];
	if ((*err = pmi_snap_ws_close(u->ws[slot])))
		return u->ws[slot] = NULL, NULL;
	u->ws_file[slot] = id;
	if (!(u->ws[slot] = pmi_snap_ws_new(u->w, id)))
		*err = -ENOMEM;
	return u->ws[slot];
}

static int cmp_pair(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The kpage words gathered from a chunk, into their stream in index order.
 * Sorted per extent instead, a keyed chunk's one-word extents (frames
 * scattered by the permutation) went back in random order, and the stream
 * started a chunk at each step back: a chunk per word, and a replay of the
 * unscrambled file that decoded one per lookup (23 s under ASan for `shared`
 * of two small processes, against 0.4 s for the keyed file).
 */
static int flush_moved(struct unscramble *u)
{
	struct snap_ws *ws;
	size_t i;
	int r = 0;

	if (!u->nmoved)
		return 0;
	if (!(ws = stream(u, u->file, 1, &r)))
		return r;
	qsort(u->moved, u->nmoved, 16, cmp_pair);
	for (i = 0; i < u->nmoved && !r; i++)
		r = pmi_snap_ws_add(ws, u->moved[2 * i], &u->moved[2 * i + 1], 1);
	u->nmoved = 0;
	return r;
}

static int on_extent(void *data, uint64_t off, const void *buf, size_t len)
{
	struct unscramble *u = data;
	const uint64_t *in = buf;
	size_t i, n = len / 8;
	struct snap_ws *ws;
	int r = 0;

	if (u->kind < 0)
		return pmi_snap_w_bytes(u->w, u->file, off, buf, len);
	if (!(ws = stream(u, u->file, u->kind, &r)))
		return r;
	if (u->kind == 0) {
		for (i = 0; i < n && !r; i++) {
			uint64_t w = pmi_scramble_word(&u->sc, in[i]);
			r = pmi_snap_ws_add(ws, off / 8 + i, &w, 1);
		}
		return r;
	}
	for (i = 0; i < n && !r; i++) {	/* kpage words go back to their frames' indices, sorted per chunk */
		uint64_t y = off / 8 + i, x = pmi_perm_inv(&u->perm[0], y);
		if (y < u->lift || x >= u->kp_words) {	/* no frame moves there: the file was not written so */
			snprintf(u->why, sizeof(u->why), "a kpage word at index %llu, outside the keyed frames",
				 (unsigned long long)y);
			return -EBADMSG;
		}
		if (u->nmoved == SNAP_MAX_WORDS && (r = flush_moved(u)))
			break;
		u->moved[2 * u->nmoved] = x;
		u->moved[2 * u->nmoved++ + 1] = in[i];
	}
	return r;
}

/* Collect pagemap-features whole (it is small) so its zero_pfn can go back before its FILE is declared. */
static int on_features(void *data, uint64_t off, const void *buf, size_t len)
{
	struct unscramble *u = data;
	char *p;

	if (off + len > 65536 || !(p = realloc(u->features, off + len + 1)))
		return -ENOMEM;
	u->features = p;
	memcpy(p + off, buf, len);
	u->features_len = off + len > u->features_len ? off + len : u->features_len;
	p[u->features_len] = '\0';
	return 0;
}

static int fix_features(struct unscramble *u)
{
	struct pm_snapshot_section sec;
	char *z, *end, *out;
	unsigned long long pfn;
	int r = 0, n;

	pm_snapshot_rewind(u->s);
	while (!r && pm_snapshot_next(u->s, &sec) == 0)
		if (sec.type == PM_SNAPSHOT_BYTES && !strcmp(sec.path, "pagemap-features"))
			r = pm_snapshot_read(u->s, &sec, on_features, u);
	if (r || !u->features || !(z = strstr(u->features, "\nzero_pfn=0x")))
		return r;
	pfn = strtoull(z + 12, &end, 16);
	if (!(out = malloc(u->features_len + 32)))
		return -ENOMEM;
	n = snprintf(out, u->features_len + 32, "%.*s\nzero_pfn=0x%llx%s", (int)(z - u->features), u->features,
		     pfn ? (unsigned long long)pmi_perm_inv(&u->perm[0], pfn) : 0ULL, end);
	free(u->features);
	u->features = out;
	u->features_len = (size_t)n;
	return 0;
}

/* Every section again, frame numbers back; META says frames=kept (the key's lines left out). */
static int copy_all(struct unscramble *u)
{
	struct pm_snapshot_section sec;
	const char *m = NULL;
	int r = 0, id;

	while (!r && (m = pmi_snap_meta_next(u->s, m))) {
		char key[64];
		size_t k = strcspn(m, "=");
		snprintf(key, sizeof(key), "%.*s", (int)(k < 63 ? k : 63), m);
		if (strcmp(key, "frames") && strncmp(key, "key_", 4) && m[k] == '=')
			r = pm_snapshot_add_meta(u->w, key, m + k + 1);
	}
	if (r || (r = pm_snapshot_add_meta(u->w, "frames", "kept")))
		return r;
	pm_snapshot_rewind(u->s);
	while (!r && pm_snapshot_next(u->s, &sec) == 0) {
		if (sec.type == PM_SNAPSHOT_FILE && kind_of(sec.path) == 2 && u->features) {
			if ((id = pmi_snap_w_file(u->w, sec.path, sec.kind, u->features_len)) < 0)
				return id;
			r = pmi_snap_w_bytes(u->w, (uint32_t)id, 0, u->features, u->features_len);
		} else if (sec.type == PM_SNAPSHOT_FILE) {
			uint64_t n = sec.size / 8;
			if (sec.kind == PM_SNAPSHOT_WORDS && kind_of(sec.path) == 1 && (r = kpage_words(u, &sec, &n)))
				return r;
			r = (id = pmi_snap_w_file(u->w, sec.path, sec.kind,
						  sec.kind == PM_SNAPSHOT_WORDS ? n * 8 : sec.size)) < 0 ? id : 0;
		} else if (sec.type == PM_SNAPSHOT_BYTES || sec.type == PM_SNAPSHOT_WORDS) {
			if (sec.type == PM_SNAPSHOT_BYTES && u->features && kind_of(sec.path) == 2)
				continue;	/* written whole with its FILE */
			u->file = sec.file;
			u->kind = sec.type == PM_SNAPSHOT_BYTES ? -1 : kind_of(sec.path) == 1;
			if (u->kind == 1 && (r = kpage_words(u, &sec, &u->kp_words)))
				return r;
			r = pm_snapshot_read(u->s, &sec, on_extent, u);
			if (u->kind == 1)	/* a damaged chunk's words are not written */
				r = r ? (u->nmoved = 0, r) : flush_moved(u);
		}
	}
	for (unsigned i = 0; i < MAX_STREAMS; i++) {
		int c = pmi_snap_ws_close(u->ws[i]);
		r = r ? r : c;
	}
	return r;
}

static int set_up(struct unscramble *u, const unsigned char *key, char *err, size_t errsize)
{
	const char *frames = pm_snapshot_meta(u->s, "frames"), *id = pm_snapshot_meta(u->s, "key_id");
	const char *dom = pm_snapshot_meta(u->s, "key_domain"), *blk = pm_snapshot_meta(u->s, "key_block");
	const char *lift = pm_snapshot_meta(u->s, "key_lift");
	char want[20], *end;
	unsigned long long max, up = 0;
	unsigned shift;

	if (!frames || (strcmp(frames, "keyed") && strcmp(frames, "keyed-block")) || !id || !dom || !blk) {
		snprintf(err, errsize, "its frame numbers are not keyed (frames=%s)", frames ? frames : "?");
		return -EINVAL;
	}
	snprintf(want, sizeof(want), "%016llx", (unsigned long long)pmi_key_id(key));
	if (strcmp(want, id)) {
		snprintf(err, errsize, "wrong key: the snapshot was scrambled with key id %s, this key is %s", id, want);
		return -EKEYREJECTED;
	}
	if (sscanf(dom, "%llu", &max) != 1 || sscanf(blk, "%u", &shift) != 1 || shift > 30 || !max) {
		snprintf(err, errsize, "bad key_domain or key_block in META");
		return -EBADMSG;
	}
	pmi_perm_init(&u->perm[0], key, 1, max, shift);
	/* key_lift: absent in files of earlier builds, whose frames were not lifted (lift 0) */
	if (lift && (errno = 0, up = strtoull(lift, &end, 10), *lift < '0' || *lift > '9' || errno || *end ||
		     pmi_perm_lift(&u->perm[0], up))) {
		snprintf(err, errsize, "bad key_lift in META");
		return -EBADMSG;
	}
	u->lift = up;
	pmi_perm_init(&u->perm[1], key, 2, 1ULL << 50, shift);
	u->sc = (struct pmi_scramble){ &u->perm[0], &u->perm[1], 1 };
	return 0;
}

int pm_snapshot_unscramble(const char *in, const char *out, const unsigned char *key, char *err, size_t errsize)
{
	struct unscramble u = { 0 };
	char why[256] = "";
	int r;

	if (!(u.s = pm_snapshot_open(in, why, sizeof(why))))
		r = -errno;
	else if (!(r = set_up(&u, key, why, sizeof(why)))) {
		u.moved = malloc(SNAP_MAX_WORDS * 16);
		if (!u.moved || !(u.w = pm_snapshot_create(out)))
			r = -ENOMEM;
		else if (!(r = fix_features(&u)) && !(r = copy_all(&u)))
			r = pm_snapshot_commit(u.w);
		if (r && !why[0] && u.why[0])
			snprintf(why, sizeof(why), "%s", u.why);
		if (r && !why[0] && pm_snapshot_error(u.s))
			snprintf(why, sizeof(why), "%s", pm_snapshot_error(u.s));
	}
	if (err && errsize)
		snprintf(err, errsize, "%s", why[0] ? why : pmi_strerror(-r));
	pm_snapshot_writer_free(u.w);
	pm_snapshot_close(u.s);
	free(u.moved);
	free(u.features);
	return r;
}
