/* snapshot_write_series.c - pm_snapshot_append: lock the series, copy its members, write the new
 * member naming the last one's identical WORDS chunks (REUSE), then the SERIES index of all
 * members. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "snapshot_writer.h"

void pmi_snap_series_free(struct snap_series *sr)
{
	if (!sr)
		return;
	pm_snapshot_close(sr->old);
	if (sr->lockfd >= 0)
		close(sr->lockfd);	/* the lock goes with it: the next append reads what this one wrote */
	for (size_t i = 0; i < sr->npath; i++)
		free(sr->path[i]);
	free(sr->path);
	free(sr->prev);
	free(sr->cmp);
	free(sr);
}

static int prev_cmp(const void *a, const void *b)
{
	const struct prev_chunk *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

/*
 * A series member's WORDS chunk with its own extents (@fixed, then the
 * zstd frame of @z bytes in w->pay): when the last member stored a chunk
 * of the same file path, words and frame, byte for byte (the hash finds
 * the candidate, the bytes decide), a REUSE section naming it instead.
 * 1 if written so, 0 if not, -errno.
 */
int pmi_snap_series_reuse(struct pm_snapshot_writer *w, const unsigned char *fixed, size_t z)
{
	struct snap_series *sr = w->series;
	uint32_t id = snap_get32(fixed), nw = snap_get32(fixed + 4);
	struct prev_chunk key;
	unsigned char ref[SNAP_REUSE_LEN];
	size_t lo = 0, hi = sr->nprev;
	int r;

	if (!sr->nprev || snap_get64(fixed + 8) || id >= sr->npath || !sr->path[id])
		return 0;
	key.key = pmi_snap_hash(sr->path[id], strlen(sr->path[id])) + pmi_snap_hash(w->pay + SNAP_CHUNK_FIXED, z);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (prev_cmp(&sr->prev[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < sr->nprev && sr->prev[lo].key == key.key; lo++) {
		const struct prev_chunk *c = &sr->prev[lo];
		if (c->nwords != nw || c->len != SNAP_CHUNK_FIXED + z)
			continue;
		if (pmi_snap_read_at(sr->old, sr->cmp, z, c->off + SNAP_SEC_SIZE + SNAP_CHUNK_FIXED))
			continue;
		if (memcmp(sr->cmp, w->pay + SNAP_CHUNK_FIXED, z))
			continue;	/* the same hash, other bytes: stored again */
		snap_put32(ref, id);
		snap_put32(ref + 4, nw);
		snap_put64(ref + 8, c->off);
		sr->reused++;
		sr->reused_bytes += c->len;
		r = pmi_snap_w_section(w, PM_SNAPSHOT_REUSE, ref, sizeof(ref));
		return r ? r : 1;
	}
	return 0;
}

/* A series member's file w->nfiles: a word file's path kept (REUSE looks chunks up by it), a pagemap's PID noted. */
int pmi_snap_series_file(struct pm_snapshot_writer *w, const char *path, uint32_t kind)
{
	struct snap_series *sr = w->series;
	char **np;
	int pid = 0, n = 0;

	if (kind != PM_SNAPSHOT_WORDS)
		return 0;
	if (w->nfiles >= sr->npath) {
		size_t nc = w->nfiles + 64;
		if (!(np = realloc(sr->path, nc * sizeof(*np))))
			return -ENOMEM;
		memset(np + sr->npath, 0, (nc - sr->npath) * sizeof(*np));
		sr->path = np;
		sr->npath = nc;
	}
	if (!(sr->path[w->nfiles] = strdup(path)))
		return -ENOMEM;
	if (sscanf(path, "proc/%d/pagemap%n", &pid, &n) == 1 && !path[n] && pid > 0 &&
	    sr->npids < SNAP_MAX_MEMBER_PIDS)
		sr->pids[sr->npids++] = pid;
	else if (pid > 0 && !path[n])
		sr->npids++;	/* counted, not listed (npids past the list: see put_series) */
	return 0;
}

/* The old series' bytes before its SERIES index (its members) into the new file, after the header. */
static int copy_members(struct pm_snapshot_writer *w, int from, uint64_t end)
{
	loff_t in = SNAP_HEAD_SIZE;
	char buf[65536];
	ssize_t n;
	int fr;

	if ((fr = pmi_snap_w_flush_out(w)))	/* the header first: copy_file_range writes to the file itself */
		return fr;
	while ((uint64_t)in < end) {
		size_t want = end - (uint64_t)in < (1u << 30) ? (size_t)(end - (uint64_t)in) : (1u << 30);
		n = copy_file_range(from, &in, w->fd, NULL, want, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;	/* not supported here (or nothing copied): read and write */
		w->off += (uint64_t)n;
	}
	while ((uint64_t)in < end) {
		size_t want = end - (uint64_t)in < sizeof(buf) ? (size_t)(end - (uint64_t)in) : sizeof(buf);
		int r;

		n = pread(from, buf, want, in);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EBADMSG;
		if ((r = pmi_snap_w_write_all(w, buf, (size_t)n)))
			return r;
		in += n;	/* a short read copies what it got, not @want */
	}
	return 0;
}

/*
 * The chunks of the old series' last member that a new chunk may name
 * (those with their own extents; a REUSE there names such a chunk too),
 * keyed by their file's path and the hash of their zstd frame.
 */
static int load_prev(struct snap_series *sr)
{
	struct pm_snapshot_section sec;
	uint64_t roff, rlen, off, len;
	unsigned char *buf = sr->cmp;
	size_t cap = 0;
	int r;

	pm_snapshot_rewind(sr->old);
	while (pm_snapshot_next(sr->old, &sec) == 0) {
		if (sec.type != PM_SNAPSHOT_WORDS || pmi_snap_chunk_ref(sr->old, sec.offset, &roff, &rlen))
			continue;
		off = sec.offset;
		len = sec.length;
		pmi_snap_chunk_data(sr->old, sec.offset, &off, &len);
		if (len < SNAP_CHUNK_FIXED || len > SNAP_CHUNK_FIXED + ZSTD_COMPRESSBOUND(SNAP_MAX_RAW))
			continue;	/* no chunk a reader would decode: never referred to */
		if (sr->nprev == cap) {
			struct prev_chunk *np = realloc(sr->prev, (cap = cap ? cap * 2 : 256) * sizeof(*np));
			if (!np)
				return -ENOMEM;
			sr->prev = np;
		}
		if ((r = pmi_snap_read_at(sr->old, buf, (size_t)len, off + SNAP_SEC_SIZE)))
			return r;
		sr->prev[sr->nprev++] = (struct prev_chunk){
			.key = pmi_snap_hash(sec.path, strlen(sec.path)) +
			       pmi_snap_hash(buf + SNAP_CHUNK_FIXED, (size_t)len - SNAP_CHUNK_FIXED),
			.off = off, .len = len, .nwords = snap_get32(buf + 4) };
	}
	qsort(sr->prev, sr->nprev, sizeof(*sr->prev), prev_cmp);
	return 0;
}

/* How long an append waits for the lock of a series that others could have opened (and keep locked). */
#define SERIES_LOCK_WAIT_MS 10000

/*
 * flock() the series in @fd. A file of ours or root's that no one else may
 * open (a series is written 0600) is locked by appends only: wait for it.
 * Anyone who can open a file can lock it and keep it locked: for any other
 * file (one planted in a sticky directory) try for SERIES_LOCK_WAIT_MS, then
 * fail with EWOULDBLOCK, never wait forever.
 */
static int lock_file(int fd, const struct stat *st)
{
	bool ours = (st->st_uid == geteuid() || st->st_uid == 0) && !(st->st_mode & 077);
	struct timespec ms = { 0, 10 * 1000 * 1000 };

	for (int waited = 0;; waited += 10) {
		if (flock(fd, ours ? LOCK_EX : LOCK_EX | LOCK_NB) == 0)
			return 0;
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK || waited >= SERIES_LOCK_WAIT_MS)
			return -errno;
		nanosleep(&ms, NULL);
	}
}

/*
 * Lock the series at @path from its read to the rename that replaces it, so
 * that appends wait for each other instead of each copying the same members
 * and the last rename dropping the others'. flock() on the series file (see
 * lock_file()), taken again when the name no longer holds that file once the
 * lock is granted (the append that held it renamed its new series in). While
 * there is no series yet nothing is locked (a lock on the directory is one
 * anyone can hold forever): the first member is published only where still
 * nothing is, and the append that loses that race gets -EEXIST from
 * pm_snapshot_commit(), to append again to the series now there. @fd: the
 * series opened (-1 when none is there); @lockfd: the fd locked, to close
 * when done (-1: none). 0 or -errno (-ELOOP: a symlink is there;
 * -EWOULDBLOCK: someone else's file stayed locked).
 */
static int lock_series(const char *path, int *fd, int *lockfd)
{
	char base[NAME_MAX + 1];
	struct stat st, now;
	int dirfd = pmi_open_parent(path, base), r;

	if (dirfd < 0)
		return dirfd;
	*lockfd = -1;
	for (;;) {
		*fd = openat(dirfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (*fd < 0) {
			r = errno == ENOENT ? 0 : -errno;
			break;
		}
		r = fstat(*fd, &st) < 0 ? -errno : lock_file(*fd, &st);
		if (r) {
			close(*fd);
			*fd = -1;
			break;
		}
		if (fstatat(dirfd, base, &now, AT_SYMLINK_NOFOLLOW) == 0 && now.st_dev == st.st_dev &&
		    now.st_ino == st.st_ino) {
			*lockfd = *fd;
			close(dirfd);
			return 0;
		}
		close(*fd);	/* replaced while we waited: lock the new one */
	}
	close(dirfd);
	return r;
}

/* The series in @fd as it is (NULL when @fd is -1: none yet): checked whole. @fd stays the caller's. */
static struct pm_snapshot *open_old(int fd, char *err, size_t errsize, int *r)
{
	struct pm_snapshot *s;
	unsigned i;

	*r = 0;
	if (fd < 0)
		return NULL;
	for (i = 0, s = NULL; !*r; i++) {	/* every member: a damaged one is not carried into the new file */
		pm_snapshot_close(s);
		if (!(s = pm_snapshot_open_member_fd(fd, (int)i + 1, err, errsize)))
			*r = -errno;
		else if (s->version < SNAP_SERIES_VERSION)
			*r = -EINVAL;
		else if (i + 1 == s->nmembers)
			break;
	}
	if (*r == -EINVAL && err && errsize)
		snprintf(err, errsize, "a plain snapshot (format version %u), not a series", s->version);
	if (*r) {
		pm_snapshot_close(s);
		return NULL;
	}
	return s;
}

struct pm_snapshot_writer *pm_snapshot_append(const char *path, char *err, size_t errsize)
{
	struct pm_snapshot_writer *w = NULL;
	struct snap_series *sr = calloc(1, sizeof(*sr));
	int r = -ENOMEM, fd;

	if (sr)
		sr->lockfd = -1;
	if (!sr || !(sr->cmp = malloc(SNAP_CHUNK_FIXED + ZSTD_COMPRESSBOUND(SNAP_MAX_RAW))))
		goto fail;
	if ((r = lock_series(path, &fd, &sr->lockfd))) {
		if (err && errsize)
			snprintf(err, errsize, "%s", r == -ELOOP ? "a symlink, not a series" :
				 r == -EWOULDBLOCK ? "someone else's file there stayed locked" : pmi_strerror(-r));
		goto out;
	}
	sr->old = open_old(fd, err, errsize, &r);
	if (r)
		goto out;	/* @err says why */
	if (sr->old && sr->old->nmembers >= SNAP_MAX_MEMBERS) {
		r = -EOVERFLOW;
		goto fail;
	}
	/*
	 * A series is a regular file. Where none was locked, one may have appeared
	 * since: create only where still nothing is, or its members would be lost.
	 */
	if (!(w = pmi_snap_w_create(path, -1, SNAP_SERIES_VERSION,
			 PM_OUTFILE_ENTRY | (sr->old ? 0 : PM_OUTFILE_CREATE)))) {
		r = -errno;
		goto fail;
	}
	w->series = sr;
	sr = NULL;	/* the writer's now */
	if (w->series->old &&
	    ((r = copy_members(w, w->series->old->fd, w->series->old->limit)) ||
	     (r = load_prev(w->series))))
		goto fail;
	w->series->base = w->off;
	return w;
fail:
	if (err && errsize)
		snprintf(err, errsize, "%s", r == -EOVERFLOW ? "the series has 65536 members already" : pmi_strerror(-r));
out:
	pmi_snap_series_free(sr);
	pm_snapshot_writer_free(w);
	errno = -r;
	return NULL;
}

/* The SERIES index of a series' members, the old ones and the new one ending at @end. */
int pmi_snap_series_index(struct pm_snapshot_writer *w, uint64_t end)
{
	struct snap_series *sr = w->series;
	size_t n = sr->old ? sr->old->nmembers : 0, i, k, len = 0;
	struct pm_snapshot_member m;
	unsigned char *p = malloc((n + 1) * 80 + (n + 1) * SNAP_MAX_MEMBER_PIDS * 5);
	int r;

	if (!p)
		return -ENOMEM;
	len = pmi_snap_put_varint(p, n + 1);
	for (i = 0; i <= n; i++) {
		if (i < n)
			pm_snapshot_member_info(sr->old, (unsigned)i + 1, &m);
		else
			m = (struct pm_snapshot_member){ .offset = sr->base, .length = end - sr->base,
				.time = (int64_t)time(NULL), .words_bytes = sr->words_bytes, .reused = sr->reused,
				.reused_bytes = sr->reused_bytes, .npids = sr->npids,
				.listed = sr->npids < SNAP_MAX_MEMBER_PIDS ? sr->npids : SNAP_MAX_MEMBER_PIDS,
				.pids = sr->pids };
		len += pmi_snap_put_varint(p + len, m.offset);
		len += pmi_snap_put_varint(p + len, m.length);
		len += pmi_snap_put_varint(p + len, m.time > 0 ? (uint64_t)m.time : 0);
		len += pmi_snap_put_varint(p + len, m.words_bytes);
		len += pmi_snap_put_varint(p + len, m.reused);
		len += pmi_snap_put_varint(p + len, m.reused_bytes);
		len += pmi_snap_put_varint(p + len, m.npids);
		len += pmi_snap_put_varint(p + len, m.listed);
		for (k = 0; k < m.listed; k++)
			len += pmi_snap_put_varint(p + len, (uint64_t)m.pids[k]);
	}
	/* readers refuse more */
	r = len > SNAP_MAX_SERIES ? -EOVERFLOW : pmi_snap_w_section(w, PM_SNAPSHOT_SERIES, p, len);
	free(p);
	return r;
}
