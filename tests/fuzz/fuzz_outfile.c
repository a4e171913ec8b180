/* fuzz_outfile.c - libFuzzer target: pm_outfile against whatever is at the path, and whatever changes there meanwhile. */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pagemap.h"

#define PM_FUZZ_NAME "fuzz_outfile"
#include "replay_main.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ASSERT(c)                                                                                   \
	do {                                                                                        \
		if (!(c)) {                                                                         \
			fprintf(stderr, "fuzz_outfile: %s:%d: invariant failed: %s\n", __FILE__, __LINE__, #c); \
			abort();                                                                    \
		}                                                                                   \
	} while (0)

/*
 * The input: [0] what is at the path, [1] the flags, [2] bit 0: named
 * temporaries (PAGEMAP_NO_TMPFILE), [3] what happens at the path between
 * the open and the commit, then the content. A victim file beside it stands
 * for someone else's file: only our own symlink, followed on purpose, may
 * ever change it. Uid 65534's entries need root (lchown): without it those
 * inputs are skipped.
 */
enum at { AT_NONE, AT_REGULAR, AT_OWN_LINK, AT_OTHER_LINK, AT_DIR, AT_DANGLING, AT_OTHER_FIFO, AT_N };
enum meanwhile { MW_NONE, MW_FILE, MW_OTHER_LINK, MW_GONE, MW_N };

static char dir[256], path[300], victim[300], old[] = "old content";
static const char precious[] = "precious";

static void put(const char *p, const char *text)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	ASSERT(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text) && close(fd) == 0);
}

/* The whole of @p into @buf (at most @size), or -1. */
static ssize_t slurp(const char *p, char *buf, size_t size)
{
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, size);
	close(fd);
	return n;
}

static void remove_all(void)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	char p[600];

	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
			if (unlink(p) < 0)
				ASSERT(rmdir(p) == 0);
		}
	if (d)
		closedir(d);
}

static void remove_dir(void)
{
	remove_all();
	rmdir(dir);
}

/* Entries of the directory other than the path and the victim: temporaries left behind. */
static int strays(void)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	while (d && (de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && strcmp(de->d_name, "out") &&
		     strcmp(de->d_name, "victim");
	closedir(d);
	return n;
}

static void other_link(void)
{
	ASSERT(symlink(victim, path) == 0 && lchown(path, 65534, 65534) == 0);
}

static void plant(enum at at)
{
	switch (at) {
	case AT_NONE: break;
	case AT_REGULAR: put(path, old); break;
	case AT_OWN_LINK: ASSERT(symlink(victim, path) == 0); break;
	case AT_OTHER_LINK: other_link(); break;
	case AT_DIR: ASSERT(mkdir(path, 0700) == 0); break;
	case AT_DANGLING: ASSERT(symlink("victim-gone", path) == 0); break;
	case AT_OTHER_FIFO: ASSERT(mkfifo(path, 0666) == 0 && chown(path, 65534, 65534) == 0); break;
	default: break;
	}
}

static void disturb(enum meanwhile mw)
{
	if (mw == MW_NONE)
		return;
	if (unlink(path) < 0)
		rmdir(path);
	if (mw == MW_FILE)
		put(path, "theirs");
	else if (mw == MW_OTHER_LINK)
		other_link();
}

static void set_up(void)
{
	snprintf(dir, sizeof(dir), "%s/fuzz_outfile.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ASSERT(mkdtemp(dir));
	atexit(remove_dir);
	snprintf(path, sizeof(path), "%s/out", dir);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
}

/* One open, write, commit (or not), free; then what may and may not have changed. */
static void run(enum at at, unsigned flags, enum meanwhile mw, bool commit, const uint8_t *content, size_t len)
{
	struct pm_outfile *o;
	struct stat before, after;
	char buf[4096];
	bool had = lstat(path, &before) == 0, in_place = false;
	int r = -1;

	o = pm_outfile_open(path, flags);
	if (o) {
		in_place = pm_outfile_in_place(o);
		ASSERT(!in_place);	/* our link names a regular file: never written through (EEXIST) */
		ASSERT(write(pm_outfile_fd(o), content, len) == (ssize_t)len);
		disturb(mw);
		r = commit ? pm_outfile_commit(o) : -ECANCELED;
		pm_outfile_free(o);
	} else {
		ASSERT(at == AT_OTHER_LINK || at == AT_DIR || at == AT_DANGLING || at == AT_OTHER_FIFO ||
		       (at == AT_OWN_LINK && !(flags & PM_OUTFILE_ENTRY)) || ((flags & PM_OUTFILE_CREATE) && had) ||
		       (flags & ~7u));
		ASSERT(had == (lstat(path, &after) == 0) && (!had || after.st_ino == before.st_ino));
	}
	ASSERT(strays() == 0);	/* no temporary left, committed or not */
	/* the file a link names: never written (someone else's, or ours: truncating it loses what >> kept) */
	ASSERT(slurp(victim, buf, sizeof(buf)) == (ssize_t)strlen(precious) && !memcmp(buf, precious, strlen(precious)));
	if (r == 0 && !in_place) {	/* ours, whole, at the name, with its mode */
		ASSERT(lstat(path, &after) == 0 && S_ISREG(after.st_mode) && after.st_uid == geteuid());
		ASSERT(slurp(path, buf, sizeof(buf)) == (ssize_t)len && !memcmp(buf, content, len));
		if (flags & PM_OUTFILE_PRIVATE)
			ASSERT((after.st_mode & 07777) == 0600);
		else
			ASSERT((after.st_mode & 07777) == 0644);	/* umask 022; never group or world writable */
	}
	if (r == 0 && !in_place && !(flags & PM_OUTFILE_ENTRY) && mw == MW_FILE && at == AT_NONE)
		ASSERT(0);	/* something came where nothing was: never replaced */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	enum at at;
	enum meanwhile mw;
	unsigned flags;

	if (!ready) {
		set_up();
		umask(022);
		ready = true;
	}
	if (size < 4)
		return 0;
	at = (enum at)(data[0] % AT_N);
	mw = (enum meanwhile)(data[3] % MW_N);
	flags = data[1] & 7u;
	if (data[1] & 0x80)
		flags |= 1u << 5;	/* an unknown flag: EINVAL */
	if (geteuid() != 0 && (at == AT_OTHER_LINK || at == AT_OTHER_FIFO || mw == MW_OTHER_LINK))
		return 0;
	if (at == AT_DIR && mw != MW_NONE)
		return 0;	/* a directory's removal is not what is tested */
	remove_all();
	put(victim, precious);
	plant(at);
	if (data[2] & 1)
		setenv("PAGEMAP_NO_TMPFILE", "1", 1);
	else
		unsetenv("PAGEMAP_NO_TMPFILE");
	run(at, flags, mw, !(data[2] & 2), data + 4, size - 4 < 4096 ? size - 4 : 4096);
	return 0;
}
