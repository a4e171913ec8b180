/* snapshot_proc.c - write a live process and the system files into a snapshot, as tests/fixtures/capture would. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base.h"
#include "scan.h"
#include "snapshot.h"
#include "snapshot_ahead.h"

#define PMI_BATCH	SNAP_READ_WORDS
#define FRAME_BATCH	(1u << 20)	/* PFNs gathered before their kpage words are read: the more, the fewer passes
				   over the frame range the reader replays (4 GiB of 4 KiB pages) */

static const char *const kfile[3] = { "kpageflags", "kpagecount", "kpagecgroup" };

/* A refused open becomes FILE.errno, as tests/fixtures/README.md describes. */
int pmi_snap_put_errno(struct pm_snapshot_writer *w, const char *path, int e)
{
	char name[SNAP_MAX_PATH + 8], val[32];
	const char *en = strerrorname_np(e);
	int id, n = en ? snprintf(val, sizeof(val), "%s\n", en) : snprintf(val, sizeof(val), "%d\n", e);

	snprintf(name, sizeof(name), "%s.errno", path);
	if ((id = pmi_snap_w_file(w, name, PM_SNAPSHOT_BYTES, (uint64_t)n)) < 0)
		return id;
	return pmi_snap_w_bytes(w, (uint32_t)id, 0, val, (size_t)n);
}

/* Copy kernel file @live (a pmi_path) to tree path @path, or record why it could not be opened. */
static int copy_file(struct pm_snapshot_writer *w, struct pm_ctx *ctx, const char *live, const char *path)
{
	int fd = pmi_open(ctx, live, O_RDONLY), r;

	if (fd < 0)
		return pmi_snap_put_errno(w, path, -fd);
	r = pmi_snap_w_stream(w, path, fd);
	close(fd);
	return r;
}

/* The whole of maps in memory: its mappings are what the pagemap pass reads. */
static int read_all(int fd, char **out, size_t *len)
{
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap + 1), *nb;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t r;
		if (n == cap) {
			if (!(nb = realloc(buf, cap * 2 + 1))) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = -errno;
			free(buf);
			return e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

/*
 * The frame files' length in words: the live files' readable end, or in
 * keyed modes every index a frame read moves to: [lift, lift + span) for
 * the domain, up to lift + end for frames past it (memory added since the
 * domain was measured moves to f + lift).
 */
static uint64_t frames_words(const struct snap_frames *fr)
{
	const struct pmi_perm *p = &fr->perm[0];
	uint64_t span = pmi_perm_span(p);

	if (fr->pfn_mode < PM_SNAPSHOT_PFN_KEYED)
		return fr->end;
	return p->lift + (fr->end > span ? fr->end : span);
}

/* Declare the frame files once (their length: frames_words). */
static int frames_declare(struct pm_snapshot_writer *w, struct pm_ctx *ctx)
{
	struct snap_frames *fr = pmi_snap_w_frames(w);
	struct pm_kpage *k;
	char live[256], path[64];
	uint32_t ids[3];
	int i, id;

	if (fr->declared)
		return 0;
	fr->declared = true;
	fr->ctx = ctx;
	k = pm_kpage_open(ctx);
	if (!k || pm_kpage_end(k, &fr->end) < 0)
		fr->end = 0;
	pm_kpage_close(k);
	for (i = 0; i < 3; i++) {
		pmi_path(ctx, live, sizeof(live), "/proc/%s", kfile[i]);
		snprintf(path, sizeof(path), "proc/%s", kfile[i]);
		fr->fd[i] = pmi_open(ctx, live, O_RDONLY);
		if (fr->fd[i] < 0 || !fr->end) {
			int r = pmi_snap_put_errno(w, path, fr->fd[i] < 0 ? -fr->fd[i] : ENODATA);
			if (r)
				return r;
			continue;
		}
		if ((id = pmi_snap_w_file(w, path, PM_SNAPSHOT_WORDS, frames_words(fr) * 8)) < 0)
			return id;
		if (!(fr->ws[i] = pmi_snap_ws_new(w, (uint32_t)id)))
			return -ENOMEM;
		fr->col[fr->ncol] = i;
		ids[fr->ncol++] = (uint32_t)id;
	}
	if (fr->ncol && !(fr->joint = pmi_snap_ws_new_cols(w, ids, fr->ncol)))
		return -ENOMEM;
	return 0;
}


struct proc_pass {
	struct pm_snapshot_writer *w;
	const struct pm_ctx *ctx;	/* whose pagemap (a replayed snapshot's reads from its chunks) */
	struct snap_ws *ws;
	struct snap_frames *fr;
	uint64_t *buf, *kbuf;
	struct frun *run;		/* the present frames of the batch, as runs */
	struct page_region *regions;	/* PAGEMAP_SCAN's answers; NULL: no scan (a replay, an old kernel, PAGEMAP_BACKEND=pread) */
	struct moved *mv;		/* keyed modes: a batch of kpage words at their new indices */
	size_t nrun, nframes;		/* runs, and the frames (mapped pages) they hold */
	uint64_t words, zeros;		/* pagemap words read, and how many of them were 0 */
	bool frames;
	unsigned page_size;
};

/*
 * The kpage words of the frames gathered. Their read buffer (a column per
 * PMI_BATCH words, pmi_snap_frames_flush) is made on first use: huge-page
 * backed for a batch of frames that reads most of it, else malloc'd and
 * touched page by page where read (a huge page's clearing cost a small
 * process's snapshot more than its frames' reads).
 */
#define KBUF_HUGE	(PMI_BATCH / 4)

static int flush_frames(struct proc_pass *p)
{
	size_t n = 3 * PMI_BATCH * 8;
	int r;

	if (!p->kbuf && !(p->kbuf = p->nframes >= KBUF_HUGE ? pmi_snap_big_alloc(n) : malloc(n)))
		return -ENOMEM;
	r = pmi_snap_frames_flush(p->w, p->run, p->nrun, p->kbuf, p->mv);
	p->nrun = p->nframes = 0;
	return r;
}

/* Read the pagemap words of pages [@vpn, @last) into the stream, gathering present frames for the join. */
static int pass_words(struct proc_pass *p, int fd, uint64_t vpn, uint64_t last)
{
	int r;

	while (vpn < last) {
		size_t want = last - vpn < PMI_BATCH ? (size_t)(last - vpn) : PMI_BATCH, i;
		ssize_t n = pmi_ctx_pread_words(p->ctx, fd, p->buf, want, vpn);
		if (n <= 0)
			return n < 0 ? (int)n : 0;	/* 0: above task_size ([vsyscall]) or the mm is gone */
		p->words += (uint64_t)n;
		for (i = 0; i < (size_t)n; i++)
			p->zeros += !p->buf[i];
		for (i = 0; p->frames && i < (size_t)n; i++) {
			uint64_t pfn = p->buf[i] & ((1ULL << 55) - 1);
			struct frun *prev = p->nrun ? &p->run[p->nrun - 1] : NULL;
			if (!(p->buf[i] >> 63) || !pfn)
				continue;
			if (p->nframes == FRAME_BATCH) {
				if ((r = flush_frames(p)))
					return r;
				prev = NULL;
			}
			p->nframes++;
			if (prev && prev->start + prev->n == pfn)
				prev->n++;
			else
				p->run[p->nrun++] = (struct frun){ pfn, 1 };
		}
		for (i = 0; p->fr->pfn_mode != PM_SNAPSHOT_PFN_KEEP && i < (size_t)n; i++)
			p->buf[i] = pmi_scramble_word(&p->fr->sc, p->buf[i]);	/* after the join: it reads real frames */
		if ((r = pmi_snap_ws_add(p->ws, vpn, p->buf, (size_t)n)))
			return r;
		vpn += (uint64_t)n;
	}
	return 0;
}

/*
 * Live, with PAGEMAP_SCAN: only what may hold a word other than 0 is read. The scan of a
 * mapping gives its pages in regions: present or swapped (any entry but none) ones are read,
 * and so are holes of up to HOLE_READ pages between them (a pread costs more than 4 KiB of
 * words). A longer hole is a stretch without page-table entries, whose words are all alike:
 * 0, or the soft-dirty bit alone in a VM_SOFTDIRTY mapping (fs/proc/task_mmu.c
 * pagemap_pte_hole). Its first word decides: 0 is left out (as the writer leaves out every run
 * of zero words), anything else is read whole. A part the scan does not report (VM_PFNMAP, or
 * a mapping made meanwhile) is read whole too. An ASan process's 20 TiB of shadow took 9 s of
 * preads of zeros to snapshot; the same snapshot now takes what `pagemap pages` takes.
 */
#define HOLE_READ	512u
#define SCAN_REGIONS	512u

struct scan_pass {
	struct proc_pass *p;
	int fd;
	uint64_t next;			/* pages before this one are read or left out */
	uint64_t rs, re;		/* pages to read, not yet read */
	int err;
};

static int scan_flush(struct scan_pass *s)
{
	int r = s->re > s->rs ? pass_words(s->p, s->fd, s->rs, s->re) : 0;

	s->rs = s->re = 0;
	return r;
}

/* Pages [@a, @b) are to be read: joined to the pending read if they continue it. */
static int scan_read(struct scan_pass *s, uint64_t a, uint64_t b)
{
	int r;

	if (s->re != a && (r = scan_flush(s)))
		return r;
	if (s->re != a)
		s->rs = a;
	s->re = b;
	return 0;
}

/* A hole of pages [@a, @b): read through when short, else read only if its first word is not 0. */
static int scan_hole(struct scan_pass *s, uint64_t a, uint64_t b)
{
	uint64_t w;
	ssize_t n;

	if (b - a <= HOLE_READ)
		return scan_read(s, a, b);
	n = pmi_ctx_pread_words(s->p->ctx, s->fd, &w, 1, a);
	if (n < 0)
		return (int)n;
	return n == 1 && w ? scan_read(s, a, b) : 0;
}

static int scan_regions(void *data, const struct page_region *v, size_t n)
{
	struct scan_pass *s = data;
	unsigned ps = s->p->page_size;
	int r = 0;

	for (size_t i = 0; i < n && !r; i++) {
		uint64_t a = v[i].start / ps, b = v[i].end / ps;

		if (b <= s->next)
			continue;
		if (a > s->next && (r = scan_read(s, s->next, a)))	/* not reported: read it */
			break;
		if (a < s->next)
			a = s->next;
		r = v[i].categories & (PAGE_IS_PRESENT | PAGE_IS_SWAPPED) ? scan_read(s, a, b) : scan_hole(s, a, b);
		s->next = b;
	}
	return s->err = r;
}

/*
 * The first PMI_BATCH pages of a mapping are read as they are: one populated
 * at least half (a heap, a dense buffer) is read on that way, since the scan
 * would walk its page tables a second time (6 % of a dense 4 GiB snapshot);
 * the rest of a mostly empty one goes by the scan.
 */
static int pass_mapping(struct proc_pass *p, int fd, uint64_t start, uint64_t end)
{
	uint64_t vpn = start / p->page_size, last = end / p->page_size;
	uint64_t probe = last - vpn < PMI_BATCH ? last : vpn + PMI_BATCH, words = p->words, zeros = p->zeros;
	struct scan_pass s = { .p = p, .fd = fd, .next = probe };
	struct pm_scan_arg arg = { .start = probe * p->page_size, .end = end,
				   .return_mask = PAGE_IS_PRESENT | PAGE_IS_SWAPPED };
	int r;

	if (!p->regions)
		return pass_words(p, fd, vpn, last);
	if ((r = pass_words(p, fd, vpn, probe)) || probe == last)
		return r;
	if ((p->zeros - zeros) * 2 < p->words - words)
		return pass_words(p, fd, probe, last);
	r = pmi_scan_each(fd, arg, p->regions, SCAN_REGIONS, scan_regions, &s);
	if (s.err)
		return s.err;
	if (r < 0)	/* the ioctl refused (the mm went, or an answer this code does not know): the rest as before */
		return scan_flush(&s) ?: pass_words(p, fd, s.next, end / p->page_size);
	if (s.next < end / p->page_size && (r = scan_read(&s, s.next, end / p->page_size)))
		return r;
	return scan_flush(&s);
}

/*
 * The pagemap's length: the end of the last mapping that reads (what
 * tests/tools/pm-sparse records), [vsyscall] above the task's size not.
 * From the last mapping down, a word read each while a mapping could still
 * end higher: two reads where /proc's order holds, not one a mapping.
 */
static uint64_t pagemap_size(const struct pm_ctx *ctx, int fd, const struct frun *span, size_t n, unsigned ps)
{
	uint64_t size = 0, w;

	while (n--)
		if (span[n].start + span[n].n > size / 8 &&
		    pmi_ctx_pread_words(ctx, fd, &w, 1, span[n].start) == 1)
			size = (span[n].start + span[n].n) * 8;
	return size;
}

static int pass_pagemap(struct proc_pass *p, int fd, const struct frun *span, size_t n, const char *path)
{
	size_t i;
	int id, r = 0;

	if ((id = pmi_snap_w_file(p->w, path, PM_SNAPSHOT_WORDS, pagemap_size(p->ctx, fd, span, n, p->page_size))) < 0)
		return id;
	if (!(p->ws = pmi_snap_ws_new(p->w, (uint32_t)id)))
		return -ENOMEM;
	for (i = 0; i < n && !r; i++)
		r = pass_mapping(p, fd, span[i].start * p->page_size, (span[i].start + span[i].n) * p->page_size);
	if (!r && p->nrun)
		r = flush_frames(p);
	return pmi_snap_ws_close(p->ws) ?: r;
}

/*
 * The mappings of @maps, parsed once for the pass (its buffers' sizes, the
 * pagemap's length, the words read): [first page, pages). A mapping whose
 * bounds are not whole pages is read as the pages it touches, as before.
 */
static int maps_spans(const char *maps, unsigned ps, struct frun **out, size_t *n)
{
	size_t cap = 0;
	struct pm_mapping m;
	const char *line = maps;

	*out = NULL;
	*n = 0;
	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		if (!pm_maps_parse_line(line, len, &m) && m.end > m.start) {
			if (pmi_grow(out, &cap, *n + 1, sizeof(**out)) < 0)
				return -ENOMEM;
			(*out)[(*n)++] = (struct frun){ m.start / ps, m.end / ps - m.start / ps };
		}
		line = nl ? nl + 1 : NULL;
	}
	return 0;
}

/*
 * The pass's buffers, sized by the process (its mappings): a read takes at
 * most its largest mapping's words, a batch of frames at most its pages. At
 * the limits (PMI_BATCH words, FRAME_BATCH runs) they were huge pages
 * cleared for a process of a few hundred pages; a large process's are as
 * before, huge-page backed from a MiB (pmi_snap_big_alloc). Keyed modes move
 * each frame of a batch (mv): at most as many as its pages too.
 */
static int pass_alloc(struct proc_pass *p, const struct frun *span, size_t n)
{
	uint64_t largest = 0, total = 0;
	size_t words, runs, i;

	for (i = 0; i < n; i++) {
		total += span[i].n;
		largest = span[i].n > largest ? span[i].n : largest;
	}
	words = largest < PMI_BATCH ? (size_t)largest : PMI_BATCH;
	runs = total < FRAME_BATCH ? (size_t)total : FRAME_BATCH;
	if (!(p->buf = pmi_snap_dense_alloc((words ? words : 1) * 8)))
		return -ENOMEM;
	if (p->frames && !(p->run = pmi_snap_big_alloc((runs ? runs : 1) * sizeof(*p->run))))
		return -ENOMEM;
	if (p->frames && p->fr->pfn_mode >= PM_SNAPSHOT_PFN_KEYED &&
	    !(p->mv = pmi_snap_big_alloc((runs ? runs : 1) * sizeof(*p->mv))))
		return -ENOMEM;
	return 0;
}

static int add_pagemap(struct pm_snapshot_writer *w, struct pm_ctx *ctx, pid_t pid, const char *maps, bool frames)
{
	const struct pm_features *f = pm_ctx_features(ctx);
	struct proc_pass p = { .w = w, .ctx = ctx, .fr = pmi_snap_w_frames(w), .page_size = f ? f->page_size : 4096 };
	char live[256], path[64];
	struct frun *span = NULL;
	size_t nspan = 0;
	int fd, r;

	pmi_pid_path(ctx, live, sizeof(live), pid, "pagemap");
	snprintf(path, sizeof(path), "proc/%d/pagemap", (int)pid);
	if ((fd = pmi_open(ctx, live, O_RDONLY)) < 0) {
		p.fr->blind = true;	/* its smaps may still be recorded, and depend on map counts */
		return pmi_snap_put_errno(w, path, -fd);
	}
	p.frames = frames && f && f->pfn_view == PM_PFN_VISIBLE && p.fr->pfn_mode != PM_SNAPSHOT_PFN_DROP;
	if (p.frames && (r = frames_declare(w, ctx)))
		goto out;
	p.fr->blind |= !p.frames || !p.fr->ncol || p.fr->col[0] != 0;	/* large folios not told apart */
	if (f && f->scan && ctx->live && ctx->backend != PM_BACKEND_PREAD)	/* else every word is read */
		p.regions = malloc(SCAN_REGIONS * sizeof(*p.regions));
	r = maps_spans(maps, p.page_size, &span, &nspan) ?: pass_alloc(&p, span, nspan) ?:
	    pass_pagemap(&p, fd, span, nspan, path);
	free(span);
	free(p.buf);
	free(p.kbuf);
	free(p.regions);
	free(p.run);
	free(p.mv);
out:
	close(fd);
	return r;
}

/* Write file @i read ahead as @path, as copy_file would have. */
static int ahead_write(struct pm_snapshot_writer *w, struct snap_ahead *a, int i, const char *path)
{
	if (a->fd[i] < 0)
		return pmi_snap_put_errno(w, path, -a->fd[i]);
	return a->r[i] ? a->r[i] : pmi_snap_text_write(w, path, &a->t[i], a->fd[i]);
}

int pm_snapshot_add_process(struct pm_snapshot_writer *w, struct pm_ctx *ctx, pid_t pid, unsigned flags)
{
	static const char *const text[] = { "stat", "status", "smaps", "smaps_rollup", "cgroup", "numa_maps" };
	/* The window: wall-clock start, its end by the monotonic clock (a clock step meanwhile cannot skew it). */
	uint64_t start = pmi_clock_ns(CLOCK_REALTIME), mono = pmi_clock_ns(CLOCK_MONOTONIC);
	char live[256], path[64], *maps = NULL;
	struct snap_ahead ahead;
	size_t len = 0, i;
	int fd, id, r, k;

	pmi_pid_path(ctx, live, sizeof(live), pid, "maps");
	if ((fd = pmi_open(ctx, live, O_RDONLY)) < 0)
		return fd;	/* no process: nothing of it is written */
	r = read_all(fd, &maps, &len);
	close(fd);
	if (r)
		return r;
	snprintf(path, sizeof(path), "proc/%d/maps", (int)pid);
	pmi_snap_ahead_start(&ahead, ctx, pid, flags, pmi_snap_w_sys(w), pmi_snap_w_users(w));
	if ((id = pmi_snap_w_file(w, path, PM_SNAPSHOT_BYTES, len)) < 0 ||
	    (r = pmi_snap_w_bytes(w, (uint32_t)id, 0, maps, len)) ||
	    (r = add_pagemap(w, ctx, pid, maps, flags & PM_SNAPSHOT_FRAMES)))
		goto out;
	pmi_snap_ahead_wait(&ahead);
	for (i = 0; i < PMI_ARRAY_SIZE(text) && !r; i++) {	/* in their usual order, however they were read */
		snprintf(path, sizeof(path), "proc/%d/%s", (int)pid, text[i]);
		r = (k = pmi_snap_ahead_index(&ahead, text[i])) < 0 ? -EINVAL : ahead_write(w, &ahead, k, path);
	}
	if (!r && ahead.uid_known)	/* its owner's name, for META users at commit */
		r = pmi_snap_users_note(pmi_snap_w_users(w), ahead.uid, ahead.named ? ahead.user : NULL);
	if (!r && ctx->live)
		r = pmi_snap_w_window(w, pid, start, start + (pmi_clock_ns(CLOCK_MONOTONIC) - mono));
out:
	pmi_snap_ahead_free(&ahead);
	free(maps);
	return id < 0 ? id : r;
}


/* The whole frame files (machine scope). */
static int add_phys(struct pm_snapshot_writer *w)
{
	struct snap_frames *fr = pmi_snap_w_frames(w);
	uint64_t *buf = malloc(PMI_BATCH * 8), pfn;
	int f, r = 0;

	if (!buf)
		return -ENOMEM;
	for (f = 0; f < 3 && !r; f++) {
		for (pfn = 0; fr->ws[f] && pfn < fr->end && !r; pfn += PMI_BATCH) {
			size_t want = fr->end - pfn < PMI_BATCH ? (size_t)(fr->end - pfn) : PMI_BATCH;
			ssize_t n = pmi_ctx_pread_words(fr->ctx, fr->fd[f], buf, want, pfn);
			if (n <= 0) {
				r = (int)n;
				break;
			}
			r = pmi_snap_frames_put_unseen(fr, f, pfn, buf, (size_t)n);
		}
	}
	free(buf);
	return r;
}

/*
 * Whether the page_mapcount probe's answer matters to what was recorded: only
 * to the counts of large folios' pages (pm_account's estimate, smaps' figures).
 * Without a frame of one, the probe (a THP mapped, a child forked: a quarter
 * of a small process's snapshot) is left out and the record says why. Whole
 * frame files, or a process whose frames were not told apart, need it.
 */
static bool mapcount_needed(const struct snap_frames *fr, unsigned flags)
{
	return (flags & PM_SNAPSHOT_PHYS) || fr->blind || fr->large || !fr->declared;
}

/*
 * The features probe as recorded: its zero_pfn is a frame number too, moved
 * or dropped like the others. Dropped frames replay as hidden, never as
 * visible frame numbers that are all 0.
 */
static int export_features(const struct snap_frames *fr, unsigned flags, const struct pm_features *f, char *buf,
			   size_t size)
{
	struct pm_features copy = *f;

	copy.page_mapcount_not_needed = f->page_mapcount == PM_UNKNOWN && !mapcount_needed(fr, flags);

	if (fr->pfn_mode != PM_SNAPSHOT_PFN_KEEP && copy.zero_pfn)
		copy.zero_pfn = fr->pfn_mode == PM_SNAPSHOT_PFN_DROP ? 0 : pmi_perm_fwd(&fr->perm[0], copy.zero_pfn);
	if (fr->pfn_mode == PM_SNAPSHOT_PFN_DROP && copy.pfn_view == PM_PFN_VISIBLE)
		copy.pfn_view = PM_PFN_HIDDEN;
	return pm_features_export(&copy, buf, size);
}

int pm_snapshot_add_system(struct pm_snapshot_writer *w, struct pm_ctx *ctx, unsigned flags)
{
	/* With the whole frame files: the machine's counters as they read beside them (node ones: pmi_snap_numa_gather). */
	static const char *const machine[] = { "proc/meminfo", "proc/vmstat" };
	struct snap_frames *fr = pmi_snap_w_frames(w);
	struct snap_sys *sys = pmi_snap_w_sys(w);
	const struct pm_features *f = pm_ctx_probe(ctx, PM_PROBE_UFFD | PM_PROBE_SOFT_DIRTY |
						   (mapcount_needed(fr, flags) ? PM_PROBE_MAPCOUNT : 0));
	char live[256], feat[2048];
	size_t i;
	int id, r = 0, n;

	if (!f)
		return -errno;
	if ((flags & PM_SNAPSHOT_PHYS) && fr->pfn_mode >= PM_SNAPSHOT_PFN_KEYED)
		return -EOPNOTSUPP;	/* whole frame files are not permuted (yet): refuse rather than leak */
	if ((flags & PM_SNAPSHOT_PHYS) && fr->pfn_mode == PM_SNAPSHOT_PFN_KEEP && !(r = frames_declare(w, ctx)))
		r = add_phys(w);
	r = r ? r : pmi_snap_ws_close(fr->joint);
	fr->joint = NULL;
	for (i = 0; i < 3 && !r; i++) {
		r = pmi_snap_ws_close(fr->ws[i]);
		fr->ws[i] = NULL;
	}
	for (i = 0; i < 3 && !r && !fr->declared; i++) {	/* not copied: they describe all of RAM */
		snprintf(live, sizeof(live), "proc/%s", kfile[i]);
		r = pmi_snap_put_errno(w, live, ENODATA);
	}
	if (!r)
		r = pmi_snap_put_errno(w, "sys/kernel/mm/page_idle/bitmap", ENODATA);
	/*
	 * Read by the first process's thread, beside its pagemap; again here for
	 * another ctx, or with the whole frame files (read now: the node counters
	 * beside them, not a process list's time earlier).
	 */
	if (!r && sys->gathered && (sys->ctx != ctx || (flags & PM_SNAPSHOT_PHYS)))
		pmi_snap_sys_free(sys);
	if (!r && !sys->gathered)
		pmi_snap_sys_gather(sys, ctx);
	if (!r)
		r = pmi_snap_sys_put(w, sys);
	for (i = 0; i < PMI_ARRAY_SIZE(machine) && !r && (flags & PM_SNAPSHOT_PHYS); i++) {
		if ((r = pmi_path(ctx, live, sizeof(live), "/%s", machine[i])) == 0)
			r = copy_file(w, ctx, live, machine[i]);
	}
	if (r || (n = export_features(fr, flags, f, feat, sizeof(feat))) < 0)
		return r ? r : -ENOSPC;
	if ((id = pmi_snap_w_file(w, "pagemap-features", PM_SNAPSHOT_BYTES, (uint64_t)n)) < 0)
		return id;
	return pmi_snap_w_bytes(w, (uint32_t)id, 0, feat, (size_t)n);
}
