/* cmd_snapshot.c - pagemap snapshot: write one file holding processes' page state; convert to and from trees. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "snap_hold.h"
#include "textsafe.h"

#define OPT_FROM_TREE	0x2000
#define OPT_TO_TREE	0x2001
#define OPT_PHYS	0x2002
#define OPT_LIST	0x2003
#define OPT_PFN		0x2004
#define OPT_KEY		0x2005
#define OPT_APPEND	0x2010
#define OPT_UNSCRAMBLE	0x2006
#define OPT_ONE_THREAD	0x2007
#define OPT_CGROUP	0x2008
#define OPT_FREEZE	0x2009

static const char *const pfn_modes[] = { "keep", "drop", "keyed", "keyed-block" };	/* enum pm_snapshot_pfn */

struct snap_opts {
	const char *out, *from_tree, *to_tree, *pids, *key, *cgroup;
	bool all, phys, list, unscramble, one_thread, freeze;
	int pfn;		/* enum pm_snapshot_pfn */
	bool append;		/* --append: out is a series */
	size_t refused;		/* -p: processes given and not written (named on stderr): exit 1 */
	unsigned char keybuf[PM_SNAPSHOT_KEY_SIZE];
};

static void help(void)
{
	printf("Usage: pagemap snapshot [-p PID,... | --cgroup PATH | --all] [--freeze] [--phys]\n"
	       "                        [--pfn MODE [--key FILE]] -o FILE\n"
	       "       pagemap snapshot --from-tree DIR -o FILE\n"
	       "       pagemap snapshot --to-tree DIR FILE\n"
	       "       pagemap snapshot -p PID,... [options] --append SERIES\n"
	       "       pagemap snapshot --list FILE\n"
	       "       pagemap snapshot --unscramble --key KEY -o FILE KEYED\n\n"
	       "Write the page state of processes into one file that every command replays\n"
	       "with 'pagemap --snapshot FILE COMMAND' as it would have answered at capture\n"
	       "time. The file is the tree 'pagemap --root' replays (maps, pagemap, stat,\n"
	       "status, smaps, smaps_rollup, cgroup, numa_maps, the features probe) in zstd\n"
	       "chunks with checksums (pagemap-snapshot(5)); as root it also holds the\n"
	       "kpageflags, kpagecount and kpagecgroup words of the processes' frames. Stop\n"
	       "the processes first (--freeze) for a consistent picture; the file's META says\n"
	       "when each process was read (window.PID). The file is created 0600, whole or\n"
	       "not at all.\n\n"
	       "Options:\n"
	       "  -p, --pid LIST         processes to write (comma-separated PIDs, self); one\n"
	       "                         that cannot be read (gone, a kernel thread, a zombie)\n"
	       "                         is named, left out and listed in META refused_pids:\n"
	       "                         exit status 1\n"
	       "      --cgroup PATH      every process of cgroup v2 PATH and the cgroups below it\n"
	       "                         (PATH as in /proc/PID/cgroup: /system.slice/foo.service)\n"
	       "      --all              every process it may read (the others are named)\n"
	       "      --freeze           hold the processes still while they are read: --cgroup\n"
	       "                         by the cgroup v2 freezer, -p by SIGSTOP (a terminal's\n"
	       "                         foreground job is refused) or by the freezer of their\n"
	       "                         leaf cgroup if alone in it; thawed after, also on\n"
	       "                         error, on any signal and if pagemap is killed (a\n"
	       "                         guardian process releases them) (not --all)\n"
	       "      --phys             the whole frame files (all of RAM) too, for 'phys', and\n"
	       "                         /proc/meminfo and /proc/vmstat (root)\n"
	       "      --pfn MODE         frame numbers (root): keep (default), drop (zeroed, no\n"
	       "                         kpage words), keyed (a keyed permutation: sharing and\n"
	       "                         equality stay, addresses go), keyed-block (2 MiB blocks\n"
	       "                         permuted, offsets inside kept: reveals contiguity)\n"
	       "      --key FILE         the 32-byte key of keyed modes: created (0600, random) if\n"
	       "                         missing; only its id is written into the snapshot\n"
	       "      --one-thread       read everything in one thread (by default, with a second\n"
	       "                         CPU, a thread reads smaps, numa_maps, the other text\n"
	       "                         files and the machine's while the pagemap is read: less\n"
	       "                         wall time, same CPU)\n"
	       "  -o, --output FILE      the snapshot to write (mode 0600; - for standard output,\n"
	       "                         written as it is: what > or >> put there stays)\n"
	       "      --append SERIES    add a member to the series SERIES (created if missing):\n"
	       "                         word chunks equal to the last member's are referred to,\n"
	       "                         not stored again; read a member as SERIES@N (1.., or\n"
	       "                         -1.. from the end; SERIES alone is the last); appends\n"
	       "                         wait for each other, for someone else's file 10 s at most\n"
	       "      --from-tree DIR    write a captured tree (tests/fixtures) as a snapshot\n"
	       "      --to-tree DIR      write the snapshot FILE out as a tree (DIR is created)\n"
	       "      --list             list FILE's sections: offset, type, payload length, path;\n"
	       "                         a FILE row gives the file's own length instead; of a\n"
	       "                         series, its members (SERIES@N: that member's sections)\n"
	       "      --unscramble       write the keyed snapshot KEYED back with the real frame\n"
	       "                         numbers (needs the key it was written with)\n");
}

/* -p's PIDs (checked by parse() already, so said nothing), "self" as 0; NULL with *@n 0 when none. */
static pid_t *pid_array(const char *list, size_t *n)
{
	pid_t *v = NULL;

	*n = 0;
	if (!*list || cli_parse_pid_list(list, true, &v, n)) {	/* "": every PID refused, none to say */
		free(v);
		*n = 0;
		return NULL;
	}
	return v;
}

/* Is pagemap itself in the list ("self", 0 or its PID)? */
static bool pids_hold_self(const char *list)
{
	size_t n, i;
	pid_t *v = pid_array(list, &n);
	bool self = false;

	for (i = 0; i < n; i++)
		self |= v[i] == 0 || v[i] == getpid();
	free(v);
	return self;
}

/* As `ps --cgroup` takes it: absolute; and no "." or ".." component, which would name another cgroup than the one matched. */
static int check_cgroup(const char *path)
{
	const char *c;

	if (path[0] != '/')
		return cli_usage_error("cgroup path '%s' does not start with /", path);
	for (c = path; (c = strchr(c, '/')); c++)
		if (!strncmp(c, "/.", 2) && (c[2] == '/' || !c[2] || (c[2] == '.' && (c[3] == '/' || !c[3]))))
			return cli_usage_error("cgroup path '%s' has a '.' or '..' component", path);
	return 0;
}

/* The options together, after getopt: which exclude which, what each needs, the arguments left. */
static int check_opts(const struct snap_opts *o, int argc, char **argv)
{
	pid_t *v = NULL;
	size_t n = 0;
	int r = o->pids ? cli_parse_pid_list(o->pids, true, &v, &n) : 0;

	free(v);
	if (r)
		return r;
	if (o->cgroup && check_cgroup(o->cgroup))
		return EXIT_USAGE;
	if (o->cgroup && (o->pids || o->all))
		return cli_usage_error("--cgroup excludes -p and --all");
	if (o->freeze && o->all)
		return cli_usage_error("--freeze takes -p or --cgroup: freezing every process would stop pagemap "
				       "and its shell too");
	if (o->freeze && !o->pids && !o->cgroup)
		return cli_usage_error("--freeze takes -p PID or --cgroup PATH");
	if (o->freeze && o->pids && pids_hold_self(o->pids))
		return cli_usage_error("--freeze cannot stop pagemap itself (-p self or its PID)");
	if (o->pfn >= PM_SNAPSHOT_PFN_KEYED && !o->key)
		return cli_usage_error("--pfn %s needs --key FILE", pfn_modes[o->pfn]);
	if (o->pfn != PM_SNAPSHOT_PFN_KEEP && (o->from_tree || o->phys))
		return cli_usage_error("--pfn %s is for processes read live, without --phys", pfn_modes[o->pfn]);
	if (o->unscramble && (!o->key || !o->out || optind + 1 != argc))
		return cli_usage_error("--unscramble needs --key KEY, -o FILE and one keyed snapshot");
	if (o->unscramble)
		return 0;
	if ((o->to_tree || o->list) && optind + 1 != argc)
		return cli_usage_error("give one snapshot FILE to read");
	if (!o->to_tree && !o->list && optind < argc)
		return cli_usage_error("unexpected argument '%s'", argv[optind]);
	if (!o->to_tree && !o->list && !o->out)
		return cli_usage_error("no output file given (-o FILE)");
	if (!o->to_tree && !o->list && !o->from_tree && !o->pids && !o->all && !o->cgroup)
		return cli_usage_error("nothing to write: give -p PID, --cgroup PATH, --all or --from-tree DIR");
	if (o->from_tree && (o->pids || o->all || o->cgroup || o->freeze))
		return cli_usage_error("--from-tree DIR writes a captured tree: no -p, --cgroup, --all or --freeze");
	return 0;
}

static int parse(int argc, char **argv, struct snap_opts *o)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' }, { "all", no_argument, NULL, 'a' },
		{ "phys", no_argument, NULL, OPT_PHYS }, { "output", required_argument, NULL, 'o' },
		{ "from-tree", required_argument, NULL, OPT_FROM_TREE },
		{ "to-tree", required_argument, NULL, OPT_TO_TREE }, { "list", no_argument, NULL, OPT_LIST },
		{ "pfn", required_argument, NULL, OPT_PFN }, { "key", required_argument, NULL, OPT_KEY },
		{ "append", required_argument, NULL, OPT_APPEND },
		{ "unscramble", no_argument, NULL, OPT_UNSCRAMBLE },
		{ "one-thread", no_argument, NULL, OPT_ONE_THREAD },
		{ "cgroup", required_argument, NULL, OPT_CGROUP }, { "freeze", no_argument, NULL, OPT_FREEZE },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, "p:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': o->pids = optarg; break;
		case 'a': o->all = true; break;
		case OPT_PHYS: o->phys = true; break;
		case 'o':
			if (o->append)
				return cli_usage_error("give -o FILE or --append SERIES, not both");
			o->out = optarg;
			break;
		case OPT_APPEND:
			if (o->out)
				return cli_usage_error("give -o FILE or --append SERIES, not both");
			o->out = optarg;
			o->append = true;
			break;
		case OPT_FROM_TREE: o->from_tree = optarg; break;
		case OPT_TO_TREE: o->to_tree = optarg; break;
		case OPT_LIST: o->list = true; break;
		case OPT_PFN:
			for (o->pfn = 0; o->pfn < 4 && strcmp(optarg, pfn_modes[o->pfn]); o->pfn++)
				;
			if (o->pfn == 4)
				return cli_usage_error("unknown --pfn mode '%s' (keep, drop, keyed, keyed-block)", optarg);
			break;
		case OPT_KEY: o->key = optarg; break;
		case OPT_UNSCRAMBLE: o->unscramble = true; break;
		case OPT_ONE_THREAD: o->one_thread = true; break;
		case OPT_CGROUP: o->cgroup = optarg; break;
		case OPT_FREEZE: o->freeze = true; break;
		case 'h': help(); return -1;
		default: return cli_bad_option(argv);
		}
	}
	return check_opts(o, argc, argv);
}

/* Processes not read: said on stderr and kept in the file's META, never left out silently. */
struct refused {
	char list[512];	/* "1,417,..." */
	size_t n;
};

static void refused_add(struct refused *rf, pid_t pid)
{
	size_t len = strlen(rf->list);

	if (len < sizeof(rf->list) - 16)
		snprintf(rf->list + len, sizeof(rf->list) - len, "%s%d", len ? "," : "", (int)pid);
	else if (!strstr(rf->list, ",..."))
		strcat(rf->list, ",...");
	rf->n++;
}

/*
 * -p: each process must open as every other command opens it (pm_target_open: not a kernel thread,
 * not a zombie, readable). One that does not is named in the library's words and added to @rf; the
 * list of the others (malloc'd, possibly empty) is what is held and written. NULL: out of memory.
 */
static char *readable_pids(struct pm_ctx *ctx, const char *list, struct refused *rf)
{
	size_t n, i, off = 0;
	pid_t *v = pid_array(list, &n);
	char *keep = calloc(n * 12 + 1, 1), name[16];
	struct pm_target *t;

	for (i = 0; keep && i < n; i++) {
		pid_t pid = v[i] ? v[i] : getpid();

		snprintf(name, sizeof(name), v[i] ? "%d" : "self", (int)v[i]);
		if (!(t = pm_target_open(ctx, pid))) {
			cli_explain_target(ctx, pid, name, errno);
			refused_add(rf, pid);
			continue;
		}
		pm_target_close(t);
		off += (size_t)sprintf(keep + off, "%s%s", off ? "," : "", name);
	}
	free(v);
	return keep;
}

/* Write the processes of @list; one gone meanwhile or refused is named, added to @rf, left out. */
static int add_pids(struct pm_snapshot_writer *w, struct pm_ctx *ctx, const char *list,
		    unsigned flags, struct refused *rf)
{
	size_t n, i;
	pid_t *v = pid_array(list, &n);
	char name[16];
	int r = 0;

	for (i = 0; i < n && !r; i++) {
		pid_t pid = v[i] ? v[i] : getpid();

		snprintf(name, sizeof(name), v[i] ? "%d" : "self", (int)v[i]);
		r = pm_snapshot_add_process(w, ctx, pid, flags);
		if (r == -ENOENT || r == -ESRCH || r == -EACCES || r == -EPERM) {
			cli_explain_target(ctx, pid, name, -r);
			refused_add(rf, pid);
			r = 0;
		} else if (r) {
			cli_error(-r, "cannot write process %d", (int)pid);
		}
	}
	free(v);
	return r;
}

/* Every process, or with @cgroup every process of that cgroup v2 and those below it (as `ps --cgroup` picks them). */
static int add_all(struct pm_snapshot_writer *w, struct pm_ctx *ctx, unsigned flags, const char *cgroup)
{
	struct pm_procs *it = pm_procs_open(ctx);
	struct refused rf = { "", 0 };
	const struct pm_proc *p;
	size_t found = 0;
	int r = 0;

	if (!it) {
		cli_error(errno, "cannot list /proc");
		return -errno;
	}
	while (!r && pm_procs_next(it, &p) == 0) {
		if (cgroup && !cg2_holds(p->pid, cgroup))
			continue;
		found++;
		/* Another namespace's or a non-dumpable process: root may be refused too (EACCES, EPERM). */
		r = pm_snapshot_add_process(w, ctx, p->pid, flags);
		if (r == -EACCES || r == -EPERM)
			refused_add(&rf, p->pid);
		if (r == -EACCES || r == -EPERM || r == -ENOENT || r == -ESRCH)
			r = 0;	/* processes come and go meanwhile */
		else if (r)
			cli_error(-r, "cannot write process %d", (int)p->pid);
	}
	pm_procs_close(it);
	if (!r && rf.n) {
		cli_note("snapshot: %zu process%s refused reading, not in the snapshot: %s", rf.n, rf.n == 1 ? "" : "es",
			 rf.list);
		r = pm_snapshot_add_meta(w, "refused_pids", rf.list);
	}
	if (!r && cgroup && !found)
		cli_note("snapshot: no process in cgroup %s", cgroup);
	return r;
}

/* A new key: random, in a file of mode 0600 that appears whole where nothing was (pm_outfile: never replaced). */
static int new_key(const char *path, unsigned char *key)
{
	int r;

	if (getrandom(key, PM_SNAPSHOT_KEY_SIZE, 0) != (ssize_t)PM_SNAPSHOT_KEY_SIZE) {
		cli_error(errno, "cannot get random bytes for the key");
		return -1;
	}
	/* Where nothing is (EEXIST otherwise), whole or not at all, 0600: a short write says its own errno. */
	r = pm_outfile_write(path, key, PM_SNAPSHOT_KEY_SIZE, PM_OUTFILE_PRIVATE | PM_OUTFILE_CREATE);
	if (r)
		cli_outfile_error(-r, "create key file", path);
	return r ? -1 : 0;
}

/* The key of @path: created if missing; refused when others may read it or it is not exactly one key. */
static int load_key(const char *path, unsigned char *key, bool create)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	unsigned char buf[PM_SNAPSHOT_KEY_SIZE + 1];	/* one more: a longer file is not a key */
	struct stat st;
	ssize_t n;

	if (fd < 0 && errno == ENOENT && create)
		return new_key(path, key);
	if (fd < 0) {
		cli_error(errno, "cannot open key file %s", path);
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (st.st_mode & 077)) {
		cli_error(0, "key file %s is not a regular file of mode 0600 or 0400 (chmod 600 %s)", path, path);
		close(fd);
		return -1;
	}
	n = read(fd, buf, sizeof(buf));
	close(fd);
	memcpy(key, buf, PM_SNAPSHOT_KEY_SIZE);
	explicit_bzero(buf, sizeof(buf));
	if (n != (ssize_t)PM_SNAPSHOT_KEY_SIZE) {
		cli_error(0, "key file %s does not hold a %u-byte key", path, PM_SNAPSHOT_KEY_SIZE);
		return -1;
	}
	return 0;
}

static int add_meta(struct pm_snapshot_writer *w, const struct snap_opts *o, struct pm_ctx *ctx)
{
	const struct pm_features *f = o->from_tree ? NULL : pm_ctx_features(ctx);
	char now[32];
	int r;

	snprintf(now, sizeof(now), "%lld", (long long)time(NULL));
	if ((r = pm_snapshot_add_meta(w, "writer", "pagemap " PAGEMAP_VERSION)) ||
	    (r = pm_snapshot_add_meta(w, "source", o->from_tree ? "tree" : "live")) ||
	    (!o->from_tree && (r = pm_snapshot_add_meta(w, "time", now))))
		return r;
	if (f && f->pfn_view == PM_PFN_VISIBLE)	/* kept, dropped or keyed: the library says which */
		r = pm_snapshot_set_frames(w, ctx, (enum pm_snapshot_pfn)o->pfn, o->pfn >= PM_SNAPSHOT_PFN_KEYED ?
					   o->keybuf : NULL);
	else if (f)	/* hidden frame numbers are said so, never stored as if 0 were a frame */
		r = pm_snapshot_add_meta(w, "frames", f->pfn_view == PM_PFN_HIDDEN ? "hidden" : "refused");
	return r;
}

/* META of --cgroup and --freeze: the cgroup, how the processes were held, and when. */
static int hold_meta(struct pm_snapshot_writer *w, const struct snap_opts *o, const struct snap_hold *h)
{
	char v[48];
	int r = 0;

	if (o->cgroup && (r = pm_snapshot_add_meta(w, "cgroup", o->cgroup)))
		return r;
	if (h->how == HOLD_NONE)
		return 0;
	snprintf(v, sizeof(v), "%llu,%llu", (unsigned long long)h->start, (unsigned long long)h->end);
	if ((r = pm_snapshot_add_meta(w, "frozen", h->how == HOLD_CGROUP ? "cgroup" : "sigstop")) ||
	    (r = pm_snapshot_add_meta(w, "frozen_window", v)))
		return r;
	if (h->path[0] && (r = pm_snapshot_add_meta(w, "frozen_cgroup", h->path)))	/* -p by the freezer */
		return r;
	if (h->already || h->already_pids[0])
		r = pm_snapshot_add_meta(w, "frozen_already", h->already ? "cgroup" : h->already_pids);
	return r;
}

/*
 * The processes asked for, held still while they are read with --freeze; released whatever
 * happened. With -p, those that cannot be read are left out, named, counted in o->refused and
 * listed in META refused_pids; -ECANCELED (said why) when none can be: nothing is written.
 */
static int add_processes(struct pm_snapshot_writer *w, struct pm_ctx *ctx, struct snap_opts *o,
			 struct snap_hold *h)
{
	unsigned flags = (o->phys ? 0 : PM_SNAPSHOT_FRAMES) | (o->one_thread ? PM_SNAPSHOT_ONE_THREAD : 0);
	struct refused rf = { "", 0 };
	char *list = NULL;
	int r;

	if (o->pids && !(list = readable_pids(ctx, o->pids, &rf))) {
		cli_error(ENOMEM, "cannot write the processes");
		return -ENOMEM;
	}
	if (list && !*list) {
		cli_error(0, "no process given can be read: %s is not written", o->out);
		free(list);
		return -ECANCELED;
	}
	if (o->freeze && (o->cgroup ? hold_cgroup(h, o->cgroup) : hold_pids(h, list))) {
		free(list);
		return -ECANCELED;	/* said why */
	}
	if (o->all || o->cgroup)
		r = add_all(w, ctx, flags, o->cgroup);
	else
		r = add_pids(w, ctx, list, flags, &rf);
	hold_release(h);
	free(list);
	if (!r && rf.n)
		r = pm_snapshot_add_meta(w, "refused_pids", rf.list);
	o->refused = rf.n;
	return r ? r : hold_meta(w, o, h);
}

/* One try: EXIT_OK, EXIT_RUNTIME (said why), or -EEXIST when a first --append lost the race to create the series. */
static int write_once(struct pm_ctx *ctx, struct snap_opts *o, bool to_stdout)
{
	struct snap_hold h = SNAP_HOLD_INIT;
	struct pm_snapshot_writer *w;
	char err[256] = "";
	int r;

	if (o->cgroup && cg2_dir(o->cgroup, h.dir))	/* before anything is written: nothing is */
		return EXIT_RUNTIME;
	if (to_stdout)	/* the descriptor itself: what > or >> opened stays as it is */
		w = pm_snapshot_create_fd(STDOUT_FILENO);
	else
		w = o->append ? pm_snapshot_append(o->out, err, sizeof(err)) : pm_snapshot_create(o->out);
	if (!w) {
		if (o->append && errno == EEXIST)
			return -EEXIST;	/* no series was there, and another append made one meanwhile */
		if (o->append && *err && errno != ELIBACC)
			cli_error(0, "cannot append to %s: %s", o->out, err);
		else if (errno == ELIBACC)	/* the library loads libzstd on its first snapshot (include/pagemap.h) */
			cli_error(0, "cannot create %s: cannot load libzstd.so.1 (Debian package libzstd1)", o->out);
		else
			cli_outfile_error(errno, "create", o->out);
		return EXIT_RUNTIME;
	}
	if (o->pfn >= PM_SNAPSHOT_PFN_KEYED && load_key(o->key, o->keybuf, true)) {
		pm_snapshot_writer_free(w);
		return EXIT_RUNTIME;
	}
	r = add_meta(w, o, ctx);
	if (!r && o->from_tree && (r = pm_snapshot_add_tree(w, o->from_tree)))
		cli_error(-r, "cannot read the tree %s", o->from_tree);
	else if (!r && !o->from_tree) {
		r = add_processes(w, ctx, o, &h);
		if (!r && (r = pm_snapshot_add_system(w, ctx, o->phys ? PM_SNAPSHOT_PHYS : 0)))
			cli_error(-r, "cannot write the system files");
	}
	if (!r && (r = pm_snapshot_commit(w))) {
		if (o->append && r == -EEXIST) {
			pm_snapshot_writer_free(w);
			return -EEXIST;	/* no series was there, and another append made one meanwhile */
		}
		cli_outfile_error(-r, "write", o->out);
	}
	pm_snapshot_writer_free(w);
	return r || o->refused ? EXIT_RUNTIME : EXIT_OK;
}

/* Appends to a new series race to create it (nothing to lock yet): the losers append again, to the series now there. */
#define SNAP_APPEND_TRIES 8

static int write_snapshot(struct pm_ctx *ctx, struct snap_opts *o)
{
	bool to_stdout = false;
	int r;

	if (!strcmp(o->out, "-")) {	/* standard output: its descriptor, never reopened */
		if (o->append)
			return cli_usage_error("a series is a file: --append - is not possible");
		if (isatty(STDOUT_FILENO)) {
			cli_error(0, "not writing a binary snapshot to a terminal: redirect it, or give -o FILE");
			return EXIT_RUNTIME;
		}
		o->out = "standard output";
		to_stdout = true;
	}
	for (int i = 0; (r = write_once(ctx, o, to_stdout)) == -EEXIST; i++)
		if (i + 1 == SNAP_APPEND_TRIES) {
			cli_outfile_error(EEXIST, "write", o->out);
			return EXIT_RUNTIME;
		}
	return r;
}

static const char *type_name(uint32_t t)
{
	static const char *names[] = { "?", "META", "FILE", "BYTES", "WORDS", "INDEX" };

	return t < sizeof(names) / sizeof(names[0]) ? names[t] : "unknown";
}

/* --list of a series: one line per member, key=value. */
static void list_members(const struct pm_snapshot *s)
{
	struct pm_snapshot_member m;

	for (unsigned i = 1; pm_snapshot_member_info(s, i, &m) == 0; i++) {
		printf("member=%u offset=%llu length=%llu time=%lld words_bytes=%llu reused=%llu reused_bytes=%llu pids=",
		       m.number, (unsigned long long)m.offset, (unsigned long long)m.length, (long long)m.time,
		       (unsigned long long)m.words_bytes, (unsigned long long)m.reused,
		       (unsigned long long)m.reused_bytes);
		for (uint32_t k = 0; k < m.listed; k++)
			printf("%s%d", k ? "," : "", (int)m.pids[k]);
		printf("%s\n", m.listed < m.npids ? ",..." : "");
	}
}

/* A --list row. On a terminal (@width) a long path goes on under itself; piped, a row is one line. */
static void list_section(const struct pm_snapshot_section *sec, unsigned width)
{
	char *line = NULL;
	size_t len;
	FILE *m = width ? open_memstream(&line, &len) : NULL, *f = m ? m : stdout;

	fprintf(f, "%10llu %-6s %8llu ", (unsigned long long)sec->offset, type_name(sec->type),
		(unsigned long long)(sec->type == PM_SNAPSHOT_FILE ? sec->size : sec->length));
	ts_fputs(TS_TERM, sec->path, f);	/* a path whoever wrote the file chose */
	if (m && fclose(m) == 0)
		cli_fputs_wrapped(stdout, line, width, "                           ");	/* under the path */
	free(line);
	putchar('\n');
}

static int read_snapshot(const struct snap_opts *o, const char *file)
{
	struct pm_snapshot_section sec;
	unsigned width = cli_term_width(STDOUT_FILENO);
	char err[256];
	struct pm_snapshot *s = pm_snapshot_open(file, err, sizeof(err));
	int r = 0;

	if (!s) {
		cli_error(0, "cannot read snapshot %s: %s", file, err);
		return EXIT_RUNTIME;
	}
	if (o->list && access(file, F_OK) == 0 && pm_snapshot_members(s, NULL))
		list_members(s);
	else if (o->list) {
		/* A FILE row: the file's length. The files of one FILES section share its offset and
		 * payload, whose length would repeat on every row and say nothing of any one file. */
		while (pm_snapshot_next(s, &sec) == 0)
			list_section(&sec, width);
	} else if (mkdir(o->to_tree, 0700) < 0) {
		cli_error(errno, "cannot create %s", o->to_tree);
		r = EXIT_RUNTIME;
	} else if ((r = pm_snapshot_extract(s, o->to_tree)) < 0) {
		cli_error(0, "cannot write %s from %s: %s", o->to_tree, file,
			  pm_snapshot_error(s) ? pm_snapshot_error(s) : strerror(-r));
		r = EXIT_RUNTIME;
	}
	pm_snapshot_close(s);
	return r;
}

static int unscramble(struct snap_opts *o, const char *in)
{
	char err[256];
	int r;

	if (load_key(o->key, o->keybuf, false))
		return EXIT_RUNTIME;
	r = pm_snapshot_unscramble(in, o->out, o->keybuf, err, sizeof(err));
	explicit_bzero(o->keybuf, sizeof(o->keybuf));
	if (r) {
		cli_error(0, "cannot unscramble %s: %s", in, err);
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

int cmd_snapshot(struct pm_ctx *ctx, int argc, char **argv)
{
	struct snap_opts o = { 0 };
	int r = parse(argc, argv, &o);

	if (r)
		return r < 0 ? EXIT_OK : r;
	if (o.to_tree || o.list)
		return read_snapshot(&o, argv[optind]);
	if (o.unscramble)
		return unscramble(&o, argv[optind]);
	if (!o.from_tree && !cli_live(ctx))
		return cli_usage_error("snapshot reads live processes: --root and --snapshot are for replay "
				       "(use --from-tree DIR)");
	return write_snapshot(ctx, &o);
}
