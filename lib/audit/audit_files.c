/* audit_files.c - the audit's file checks: modes of the frame files, snapshot files with frame numbers. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "audit.h"

#define SNAP_DEPTH_MAX 32	/* directories below a given path: deeper ones are not searched */

int pmi_audit_parse_mode(const char *s, unsigned *mode, uint32_t *uid, uint32_t *gid)
{
	unsigned long long v[3];
	const char *p = s;
	char *end;
	int i;

	for (i = 0; i < 3; i++) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		errno = 0;
		v[i] = strtoull(p, &end, i == 0 ? 8 : 10);
		if (errno || end == p || v[i] > (i == 0 ? 07777ULL : UINT32_MAX))
			return -EINVAL;
		p = end;
	}
	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	if (*p)
		return -EINVAL;
	*mode = (unsigned)v[0];
	*uid = (uint32_t)v[1];
	*gid = (uint32_t)v[2];
	return 0;
}

/* A file's mode and owner, live by stat(), replayed from FILE.mode. */
struct fmode {
	enum { FM_KNOWN, FM_ABSENT, FM_UNKNOWN } state;
	unsigned mode;
	uint32_t uid, gid;
	char why[96];		/* FM_UNKNOWN: the reason */
};

static void replayed_mode(struct pm_audit *a, const char *path, struct fmode *m)
{
	char side[PATH_MAX + 8], buf[128];
	int r;

	snprintf(side, sizeof(side), "%s.mode", path);
	r = pmi_read_small_file(a->ctx, side, buf, sizeof(buf));
	if (r >= 0 && pmi_audit_parse_mode(buf, &m->mode, &m->uid, &m->gid) == 0)
		return;
	if (r >= 0) {
		pmi_tree_error(a->ctx, "%s: not \"MODE UID GID\" (octal mode, decimal IDs)", side);
		m->state = FM_UNKNOWN;
		snprintf(m->why, sizeof(m->why), "%s", "its recorded mode is malformed");
		return;
	}
	m->state = FM_UNKNOWN;
	snprintf(m->why, sizeof(m->why), "%s", "mode and owner not recorded by the capture");
}

bool pmi_audit_absent(struct pm_audit *a, const char *name, int r)
{
	char path[PATH_MAX + 8], buf[64];

	if (r != -ENOENT)
		return false;
	if (a->ctx->live)
		return true;
	return pmi_path(a->ctx, path, sizeof(path), "%s.errno", name) == 0 &&
	       pmi_read_small_file(a->ctx, path, buf, sizeof(buf)) >= 0 && pmi_errno_from_name(buf) == ENOENT;
}

static void file_mode(struct pm_audit *a, const char *name, struct fmode *m)
{
	char path[PATH_MAX];
	struct stat st;

	memset(m, 0, sizeof(*m));
	if (pmi_path(a->ctx, path, sizeof(path), "%s", name) < 0) {
		m->state = FM_UNKNOWN;
		snprintf(m->why, sizeof(m->why), "%s", pmi_strerror(ENAMETOOLONG));
	} else if (!a->ctx->live && pmi_audit_absent(a, name, -ENOENT)) {
		m->state = FM_ABSENT;
	} else if (!a->ctx->live) {
		replayed_mode(a, path, m);
	} else if (stat(path, &st) < 0) {
		m->state = errno == ENOENT ? FM_ABSENT : FM_UNKNOWN;
		snprintf(m->why, sizeof(m->why), "cannot stat: %s", pmi_strerror(errno));
	} else {
		m->mode = st.st_mode & 07777;
		m->uid = st.st_uid;
		m->gid = st.st_gid;
	}
}

bool pmi_audit_others_read(unsigned mode, uint32_t uid, uint32_t gid)
{
	return (uid && (mode & 0400)) || (gid && (mode & 0040)) || (mode & 0004);
}

/* May anyone but root read or write it? */
static bool open_to_others(const struct fmode *m)
{
	return (m->mode & 0066 & (m->gid ? 0066 : 0006)) || (m->uid && (m->mode & 0600));
}

/* One of the files that describe all of physical memory: root only, or exposed. */
static void check_frame_file(struct pm_audit *a, const char *name, const char *path, const char *what,
			     const char *config)
{
	struct fmode m;
	char fix[PATH_MAX + 64];

	file_mode(a, path, &m);
	snprintf(fix, sizeof(fix), "chmod 0%o %s; chown 0:0 %s", m.mode & 0600 ? m.mode & 0600 : 0400, path, path);
	if (m.state == FM_ABSENT)
		pmi_audit_add(a, name, path, PM_VERDICT_OK, NULL, "absent: kernel without %s", config);
	else if (m.state == FM_UNKNOWN)
		pmi_audit_add(a, name, path, PM_VERDICT_UNKNOWN, NULL, "%s", m.why);
	else if (open_to_others(&m))
		pmi_audit_add(a, name, path, PM_VERDICT_EXPOSED, fix, "mode %04o, owner %u:%u: users other than root may "
			     "open it and %s", m.mode, m.uid, m.gid, what);
	else
		pmi_audit_add(a, name, path, PM_VERDICT_OK, NULL, "mode %04o, owner %u:%u: root only", m.mode, m.uid, m.gid);
}

/* /proc/PID/pagemap is its process's user's by design: only group and other bits would widen it. */
static void check_pagemap_file(struct pm_audit *a)
{
	static const char path[] = "/proc/self/pagemap";
	struct fmode m;

	file_mode(a, path, &m);
	if (m.state != FM_KNOWN)
		pmi_audit_add(a, "pagemap-file", path, PM_VERDICT_UNKNOWN, NULL, "%s",
			     m.state == FM_ABSENT ? "absent: kernel without CONFIG_PROC_PAGE_MONITOR?" : m.why);
	else if (m.mode & 0066)
		pmi_audit_add(a, "pagemap-file", path, PM_VERDICT_EXPOSED, "run a kernel whose pagemap files are 0400",
			     "mode %04o, owner %u:%u: other users may open a process's pagemap", m.mode, m.uid, m.gid);
	else
		pmi_audit_add(a, "pagemap-file", path, PM_VERDICT_OK, NULL,
			     "mode %04o, owner %u:%u: each process's pagemap is its own user's (and root's), with ptrace "
			     "read rights; what they see of frames is pfn-unprivileged's answer", m.mode, m.uid, m.gid);
}

void pmi_audit_modes(struct pm_audit *a)
{
	check_pagemap_file(a);
	check_frame_file(a, "kpageflags", "/proc/kpageflags", "learn the flags of every physical frame",
			 "CONFIG_PROC_PAGE_MONITOR");
	check_frame_file(a, "kpagecount", "/proc/kpagecount", "learn how often every physical frame is mapped",
			 "CONFIG_PROC_PAGE_MONITOR");
	check_frame_file(a, "kpagecgroup", "/proc/kpagecgroup", "learn the memory cgroup of every physical frame",
			 "CONFIG_MEMCG");
	check_frame_file(a, "page-idle", "/sys/kernel/mm/page_idle/bitmap",
			 "watch (and reset) the accesses to every physical frame", "CONFIG_IDLE_PAGE_TRACKING");
}

/* ---- snapshot files ---- */

enum pmi_snap_kind pmi_audit_sniff(const unsigned char *head, size_t n)
{
	/*
	 * This library's snapshots start with "\x89PMSNAP\n" (lib/snapshot/snapshot.h,
	 * PNG style); a bare "PMSNAP" at offset 0 is taken for one of another
	 * format.
	 */
	if ((n >= 6 && !memcmp(head, "PMSNAP", 6)) || (n >= 8 && !memcmp(head, "\x89PMSNAP\n", 8)))
		return PMI_SNAP_UNKNOWN_FORMAT;	/* pmi_audit_sniff_path() asks the reader which */
	return PMI_SNAP_NOT;
}

/* A file with this library's snapshot magic: does its writer say it kept frame numbers? */
static int snapshot_frames(int fd)
{
	struct pm_snapshot *s = pm_snapshot_open_fd(fd, NULL, 0);
	const char *v = s ? pm_snapshot_meta(s, "frames") : NULL;
	int k = PMI_SNAP_UNKNOWN_FORMAT;

	if (v && !strcmp(v, "kept"))
		k = PMI_SNAP_FRAMES;
	else if (v && (!strcmp(v, "hidden") || !strcmp(v, "refused") || !strcmp(v, "dropped") || !strcmp(v, "keyed") ||
		       !strcmp(v, "keyed-block")))
		k = PMI_SNAP_NO_FRAMES;
	pm_snapshot_close(s);
	return k;
}

int pmi_audit_sniff_path(const char *path)
{
	unsigned char head[16];
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY), e;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		e = errno;
		close(fd);
		return -e;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return PMI_SNAP_NOT;	/* a FIFO or a device is no snapshot, and is not read */
	}
	do
		n = read(fd, head, sizeof(head));
	while (n < 0 && errno == EINTR);
	e = errno;
	if (n >= 8 && !memcmp(head, "\x89PMSNAP\n", 8)) {
		int k = snapshot_frames(fd);

		close(fd);
		return k;
	}
	close(fd);
	return n < 0 ? -e : (int)pmi_audit_sniff(head, (size_t)n);
}

struct snap_tally {
	unsigned files, frames, readable, noframes, unknown, errors;
	int first_err;
	char err_path[256];
};

static void snap_file(struct pm_audit *a, const char *path, const struct stat *st, struct snap_tally *t)
{
	int k = pmi_audit_sniff_path(path);

	t->files++;
	if (k < 0) {
		if (!t->errors++) {
			t->first_err = -k;
			snprintf(t->err_path, sizeof(t->err_path), "%s", path);
		}
		return;
	}
	if (k == PMI_SNAP_FRAMES) {
		bool others = pmi_audit_others_read(st->st_mode, st->st_uid, st->st_gid);

		t->frames++;
		t->readable += others;
		pmi_audit_add(a, "snapshot", path, others ? PM_VERDICT_EXPOSED : PM_VERDICT_CONTEXT,
			     "rewrite it with --pfn drop or --pfn keyed, or delete it",
			     "a pagemap snapshot with unscrambled frame numbers, mode %04o, owner %u:%u: %s",
			     (unsigned)st->st_mode & 07777, (unsigned)st->st_uid, (unsigned)st->st_gid,
			     others ? "users other than root may read it" : "only root may read it");
	} else if (k == PMI_SNAP_NO_FRAMES) {
		t->noframes++;
		pmi_audit_add(a, "snapshot", path, PM_VERDICT_OK, NULL, "a pagemap snapshot without frame numbers "
			     "(hidden from its writer, dropped or scrambled)");
	} else if (k == PMI_SNAP_UNKNOWN_FORMAT) {
		t->unknown++;
		pmi_audit_add(a, "snapshot", path, PM_VERDICT_UNKNOWN, NULL,
			     "a pagemap snapshot that this library cannot read (damaged, another format, or it does not "
			     "say whether it kept frame numbers)");
	}
}

static int by_name(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

static void snap_walk(struct pm_audit *a, const char *path, int depth, struct snap_tally *t);

/* The entries of @dir, sorted (readdir's order differs between filesystems), each searched. */
static void snap_dir(struct pm_audit *a, const char *path, DIR *dir, int depth, struct snap_tally *t)
{
	char **names = NULL, **more, *child;
	size_t n = 0, i;
	struct dirent *d;

	while ((d = readdir(dir))) {
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		more = realloc(names, (n + 1) * sizeof(*names));
		if (!more || asprintf(&child, "%s%s%s", path, path[strlen(path) - 1] == '/' ? "" : "/", d->d_name) < 0) {
			names = more ? more : names;
			a->err = -ENOMEM;
			break;
		}
		names = more;
		names[n++] = child;
	}
	qsort(names, n, sizeof(*names), by_name);
	for (i = 0; i < n; i++) {
		if (!a->err)
			snap_walk(a, names[i], depth + 1, t);
		free(names[i]);
	}
	free(names);
}

/* Search @path: regular files are sniffed, directories entered, symbolic links and devices never followed. */
static void snap_walk(struct pm_audit *a, const char *path, int depth, struct snap_tally *t)
{
	struct stat st;
	DIR *dir = NULL;

	if (lstat(path, &st) < 0 || (S_ISDIR(st.st_mode) && !(dir = opendir(path)))) {
		if (!t->errors++) {
			t->first_err = errno;
			snprintf(t->err_path, sizeof(t->err_path), "%s", path);
		}
		return;
	}
	if (S_ISREG(st.st_mode))
		snap_file(a, path, &st, t);
	if (!dir)
		return;
	if (depth < SNAP_DEPTH_MAX)
		snap_dir(a, path, dir, depth, t);
	closedir(dir);
}

void pmi_audit_snapshots(struct pm_audit *a, const char *path)
{
	struct snap_tally t = { 0 };
	size_t at = a->n;
	enum pm_verdict v;
	char err[384] = "", readable[64] = "";

	snap_walk(a, path, 0, &t);
	if (t.errors)
		snprintf(err, sizeof(err), "; %u could not be read (%s: %s)", t.errors, t.err_path, pmi_strerror(t.first_err));
	if (t.frames)
		snprintf(readable, sizeof(readable), " (%u readable by users other than root)", t.readable);
	v = t.readable ? PM_VERDICT_EXPOSED : t.unknown || t.errors ? PM_VERDICT_UNKNOWN :
	    t.frames ? PM_VERDICT_CONTEXT : PM_VERDICT_OK;
	pmi_audit_add(a, "snapshots", path, v, t.frames ? "rewrite the files below without frame numbers, or delete them" : NULL,
		     "%u files searched: %u snapshots with frame numbers%s, %u without, %u of an unknown format%s",
		     t.files, t.frames, readable, t.noframes, t.unknown, err);
	pmi_audit_move_last(a, at);
}
