/* wss_referenced.c - the REFERENCED working-set method: clear_refs 1 opens the window, smaps Referenced reads it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "pages.h"
#include "smaps.h"
#include "wss.h"

/* Open the target's clear_refs. Returns 0 or -errno with the words in @buf. */
static int open_referenced(struct pm_target *t, struct pmi_wss_files *files, char *buf, size_t size,
			   const char *why_not_before)
{
	char path[4096];
	int fd, r;

	if ((r = pmi_pid_path(t->ctx, path, sizeof(path), t->pid, "clear_refs")) < 0)
		return r;
	fd = pmi_open(t->ctx, path, O_WRONLY);
	if (fd < 0) {
		if (fd == -ENOENT)	/* clear_refs exists since 2.6.22: the process went */
			fd = -ESRCH;
		pmi_wss_say(buf, size, "cannot open %s: %s%s", path, pmi_strerror(-fd),
		    fd == -EACCES ? " (only the process's owner or root may write it)" : "");
		return fd;
	}
	files->clear = fd;
	if (why_not_before)
		pmi_wss_say(buf, size, "clear_refs 1 and smaps Referenced; %s", why_not_before);
	else
		pmi_wss_say(buf, size, "clear_refs 1 and smaps Referenced (chosen by the caller)");
	return 0;
}

static int start_referenced(struct pm_wss *w)
{
	ssize_t n;

	w->reset_start = pmi_wss_now_ns();
	do
		n = write(w->f.clear, "1", 1);
	while (n < 0 && errno == EINTR);
	w->reset_end = pmi_wss_now_ns();
	if (n < 0)
		return -errno;
	return n == 1 ? 0 : -EIO;
}

/* One smaps record: a result with its Rss and Referenced. */
static int smaps_add(void *arg, const struct pmi_smaps_rec *rec)
{
	struct pm_wss *w = arg;
	int r;

	if (!rec->mapped)	/* fields before any mapping line */
		return 0;
	if ((r = pmi_wss_add_mapping(w, &rec->map)) < 0)
		return r;
	w->maps[w->nmaps - 1].resident = rec->val[PMI_SMAPS_RSS];
	w->maps[w->nmaps - 1].accessed = rec->val[PMI_SMAPS_REFERENCED];
	return 0;
}

/* Read ROOT/proc/PID/smaps: a record per mapping with Rss and Referenced. */
static int read_smaps(struct pm_wss *w)
{
	FILE *f;
	int r = pmi_smaps_open(w->t, &f);

	if (r < 0)
		return r;
	r = pmi_smaps_parse_file(f, smaps_add, w);
	fclose(f);
	return r;
}

static int stop_referenced(struct pm_wss *w, uint64_t *read_start, uint64_t *read_end)
{
	int r;

	*read_start = pmi_wss_now_ns();
	r = read_smaps(w);
	*read_end = pmi_wss_now_ns();
	return r;
}

const struct pmi_wss_backend pmi_wss_backend_referenced = {
	.method = PM_WSS_REFERENCED,
	.name = "referenced",
	.unavailable = "",
	.open = open_referenced,
	.start = start_referenced,
	.stop = stop_referenced,
};
