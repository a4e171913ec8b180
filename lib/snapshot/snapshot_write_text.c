/* snapshot_write_text.c - a /proc text file into the snapshot: read to learn its length (held when
 * short), declared, then its bytes as BYTES chunks. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "snapshot_writer.h"

#define SNAP_STREAM_HELD	(8u << 20)	/* a /proc text file up to this is read once and held */
#define SNAP_STREAM_FIRST	(16u << 10)	/* the first read's buffer, doubled as the file turns out longer */

/* Read @fd from @off into @buf of @cap bytes until it is full or the file ends: the bytes read, or -errno. */
static ssize_t read_upto(int fd, char *buf, size_t cap, uint64_t off)
{
	size_t got = 0;

	while (got < cap) {
		ssize_t n = pread(fd, buf + got, cap - got, (off_t)(off + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/*
 * /proc files say length 0: their length is what reading gives, and the
 * FILE section (with the length) comes first. A file that fits
 * SNAP_STREAM_HELD is read once and held (smaps, numa_maps and
 * smaps_rollup walk the page tables: a second read costs a second walk);
 * a longer one is read twice, keeping memory at that size, the second
 * pass stopping at the first's length. This is the first read. It starts
 * at SNAP_STREAM_FIRST: most files are a few KiB, and a buffer of
 * SNAP_TEXT_CHUNK cost an mmap and munmap each, and a sysctl file a
 * zeroed kernel buffer of that size (proc_sys_call_handler).
 */
int pmi_snap_text_read(struct snap_text *t, int fd)
{
	ssize_t n;

	memset(t, 0, sizeof(*t));
	while (!t->whole && t->held * 2 <= SNAP_STREAM_HELD) {	/* grown as the file turns out longer */
		size_t want = t->held ? t->held * 2 : SNAP_STREAM_FIRST;
		char *nb = realloc(t->buf, want);
		if (!nb && !t->held)
			return -ENOMEM;
		if (!nb)
			break;	/* read twice instead */
		t->buf = nb;
		t->held = want;
		if ((n = read_upto(fd, t->buf + t->len, t->held - (size_t)t->len, t->len)) < 0)
			return (int)n;
		t->len += (uint64_t)n;
		t->whole = t->len < t->held;
	}
	return 0;
}

int pmi_snap_text_write(struct pm_snapshot_writer *w, const char *path, struct snap_text *t, int fd)
{
	const size_t step = t->held < SNAP_TEXT_CHUNK ? t->held : SNAP_TEXT_CHUNK;	/* held short: out of memory */
	uint64_t off = t->len;
	ssize_t n = (ssize_t)step;
	int id, r = 0;

	while (!t->whole && n == (ssize_t)step) {	/* too long to hold: its length */
		if ((n = read_upto(fd, t->buf, step, off)) < 0)
			return (int)n;
		off += (uint64_t)n;
	}
	if ((id = pmi_snap_w_file(w, path, PM_SNAPSHOT_BYTES, off)) < 0)
		return id;
	if (t->whole)
		return pmi_snap_w_bytes(w, (uint32_t)id, 0, t->buf, (size_t)off);
	for (uint64_t pos = 0; pos < off && !r;) {
		n = pread(fd, t->buf, step < off - pos ? step : (size_t)(off - pos), (off_t)pos);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)	/* the file shrank between the reads (a /proc file changes): keep what is there */
			return n < 0 ? -errno : 0;
		r = pmi_snap_w_bytes(w, (uint32_t)id, pos, t->buf, (size_t)n);
		pos += (uint64_t)n;
	}
	return r;
}

int pmi_snap_w_stream(struct pm_snapshot_writer *w, const char *path, int fd)
{
	struct snap_text t;
	int r = pmi_snap_text_read(&t, fd);

	if (!r)
		r = pmi_snap_text_write(w, path, &t, fd);
	free(t.buf);
	return r;
}
