/* audit.c - rowhammer exposure audit: who can learn physical addresses, contiguity or page sharing here. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/capability.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "audit.h"

#define E_PRESENT	(1ULL << 63)
#define E_EXCLUSIVE	(1ULL << 56)
#define E_FRAME_MASK	((1ULL << 55) - 1)
#define NOBODY		65534	/* the unprivileged user the child becomes */
#define CAP_BIT_SYS_ADMIN 21

const char *pm_verdict_name(enum pm_verdict v)
{
	switch (v) {
	case PM_VERDICT_OK:
		return "ok";
	case PM_VERDICT_EXPOSED:
		return "exposed";
	case PM_VERDICT_CONTEXT:
		return "context";
	case PM_VERDICT_UNKNOWN:
	default:
		return "unknown";
	}
}

struct pm_audit *pm_audit_new(struct pm_ctx *ctx)
{
	struct pm_audit *a = calloc(1, sizeof(*a));

	if (a)
		a->ctx = ctx;
	return a;
}

int pm_audit_add_path(struct pm_audit *a, const char *path)
{
	char **p, *copy;

	if (a->ran)
		return -EINVAL;
	p = realloc(a->paths, (a->npaths + 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	a->paths = p;
	copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	a->paths[a->npaths++] = copy;
	return 0;
}

static void finding_free(struct pm_finding *f)
{
	free((char *)f->subject);
	free((char *)f->evidence);
	free((char *)f->fix);
	free((char *)f->comm);
}

void pm_audit_free(struct pm_audit *a)
{
	size_t i;

	if (!a)
		return;
	for (i = 0; i < a->n; i++)
		finding_free(&a->f[i]);
	for (i = 0; i < a->npaths; i++)
		free(a->paths[i]);
	free(a->paths);
	free(a->f);
	free(a);
}

struct pm_finding *pmi_audit_add(struct pm_audit *a, const char *name, const char *subject, enum pm_verdict v,
				const char *fix, const char *fmt, ...)
{
	struct pm_finding *f;
	va_list ap;
	char *ev = NULL;
	int r;

	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 16;
		f = realloc(a->f, cap * sizeof(*f));
		if (!f)
			goto nomem;
		a->f = f;
		a->cap = cap;
	}
	va_start(ap, fmt);
	r = vasprintf(&ev, fmt, ap);
	va_end(ap);
	if (r < 0)
		goto nomem;
	f = &a->f[a->n];
	memset(f, 0, sizeof(*f));
	f->name = name;	/* always a literal */
	f->verdict = v;
	f->evidence = ev;
	f->subject = strdup(subject);
	f->fix = fix ? strdup(fix) : NULL;
	if (!f->subject || (fix && !f->fix)) {
		finding_free(f);
		goto nomem;
	}
	a->n++;
	a->counts[v]++;
	return f;
nomem:
	a->err = -ENOMEM;
	return NULL;
}

int pm_audit_next(struct pm_audit *a, const struct pm_finding **out)
{
	if (!a->ran)
		return -EINVAL;
	if (a->next >= a->n)
		return 1;
	*out = &a->f[a->next++];
	return 0;
}

unsigned pm_audit_count(const struct pm_audit *a, enum pm_verdict v)
{
	return (unsigned)v < PMI_VERDICTS ? a->counts[v] : 0;
}

/* ---- pure parsers ---- */

/* The value after "\nKEY" (or KEY at the start) in a status text, or NULL. */
static const char *status_field(const char *s, const char *key)
{
	size_t n = strlen(key);
	const char *p = s;

	while (p && *p) {
		if (!strncmp(p, key, n))
			return p + n;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

int pmi_audit_parse_status(const char *status, uint64_t *capeff, uint32_t *euid)
{
	const char *c = status_field(status, "CapEff:"), *u = status_field(status, "Uid:");
	unsigned long long caps, uids[2];
	char *end;
	int i;

	if (!c || !u)
		return -ENOENT;
	while (*c == ' ' || *c == '\t')
		c++;
	if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f')))
		return -EINVAL;
	errno = 0;
	caps = strtoull(c, &end, 16);
	if (errno || end - c > 16 || (*end != '\n' && *end != '\0'))
		return -EINVAL;
	for (i = 0; i < 2; i++) {
		while (*u == ' ' || *u == '\t')
			u++;
		if (*u < '0' || *u > '9')
			return -EINVAL;
		errno = 0;
		uids[i] = strtoull(u, &end, 10);
		if (errno || uids[i] > UINT32_MAX)
			return -EINVAL;
		u = end;
	}
	*capeff = caps;
	*euid = (uint32_t)uids[1];
	return 0;
}

bool pmi_audit_uid_map_initial(const char *m)
{
	unsigned long long in, out, count;
	int used = 0;

	if (sscanf(m, " %llu %llu %llu %n", &in, &out, &count, &used) != 3)
		return false;
	return in == 0 && out == 0 && count == 4294967295ULL && m[used] == '\0';
}

bool pmi_audit_ns_initial(const char *link)
{
	return !strcmp(link, "user:[4026531837]");
}

enum pmi_audit_thp pmi_audit_parse_thp(const char *s)
{
	const char *a = strchr(s, '['), *b = a ? strchr(a, ']') : NULL;
	size_t n;

	if (!a || !b || strchr(b, '['))
		return PMI_THP_UNKNOWN;
	n = (size_t)(b - a - 1);
	if (n == 6 && !strncmp(a + 1, "always", n))
		return PMI_THP_ALWAYS;
	if (n == 7 && !strncmp(a + 1, "madvise", n))
		return PMI_THP_MADVISE;
	if (n == 5 && !strncmp(a + 1, "never", n))
		return PMI_THP_NEVER;
	return PMI_THP_UNKNOWN;
}

int pmi_audit_parse_count(const char *s, uint64_t *v)
{
	unsigned long long x;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno || (*end != '\n' && *end != '\0') || (*end == '\n' && end[1] != '\0'))
		return -EINVAL;
	*v = x;
	return 0;
}

/* ---- reading small kernel files through the root ---- */

/* ROOT@name into @buf; returns length or -errno. */
static int read_text(struct pm_audit *a, const char *name, char *buf, size_t size)
{
	char path[PATH_MAX];
	int r = pmi_path(a->ctx, path, sizeof(path), "%s", name);

	return r < 0 ? r : pmi_read_small_file(a->ctx, path, buf, size);
}

/* Why reading @r failed, in words: a replayed tree's missing file is one the capture did not record. */
static const char *read_error(const struct pm_audit *a, int r)
{
	return !a->ctx->live && r == -ENOENT ? "not recorded by the capture" : pmi_strerror(-r);
}

/* ---- frame numbers for unprivileged readers ---- */

/* What a reader without CAP_SYS_ADMIN saw, by effect. */
struct effect {
	bool have;
	int drop_err;		/* the child: errno becoming uid 65534 without capabilities, 0 if it did */
	int err;		/* errno opening or reading pagemap, 0 if an entry was read */
	uint64_t entry;		/* the entry of a present page of the reader's own */
	bool excl_known;	/* bit 56 of @entry was read (the child), not only the frame view */
	char who[96];		/* who read it */
};

/* In the child: become uid 65534 with no capabilities, then read our own entry of a written page. */
static void child_read(int wfd, unsigned page_shift)
{
	struct effect e = { .have = true, .excl_known = true };
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct caps[2];
	char *p = mmap(NULL, (size_t)1 << page_shift, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd;

	/* A failure here is not the kernel refusing pagemap: said apart (root without CAP_SETUID in a container). */
	if (p == MAP_FAILED || setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY)) {
		e.drop_err = errno;
		goto out;
	}
	/* setresuid away from root cleared the capabilities, unless securebits kept them. */
	if (syscall(SYS_capget, &hdr, caps) < 0 || (caps[0].effective & (1u << CAP_BIT_SYS_ADMIN))) {
		e.drop_err = EPERM;
		goto out;
	}
	/* Changing credentials made us undumpable: /proc/self would be root's 0400 files. */
	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	p[0] = 1;
	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e.err = errno;
		goto out;
	}
	if (pmi_pread_words(fd, &e.entry, 1, (uint64_t)(uintptr_t)p >> page_shift) != 1)
		e.err = EIO;
	close(fd);
out:
	if (write(wfd, &e, sizeof(e)) != (ssize_t)sizeof(e))
		_exit(1);
	_exit(0);
}

/* Live, as root: fork the child and take its answer. */
static void effect_child(unsigned page_shift, struct effect *e)
{
	int fds[2], status;
	ssize_t n;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return;
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		child_read(fds[1], page_shift);
	}
	close(fds[1]);
	if (pid > 0) {
		do
			n = read(fds[0], e, sizeof(*e));
		while (n < 0 && errno == EINTR);
		if (n != (ssize_t)sizeof(*e))
			memset(e, 0, sizeof(*e));
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	close(fds[0]);
	snprintf(e->who, sizeof(e->who), "a child dropped to uid %d without capabilities", NOBODY);
}

/* What this process (live, unprivileged) or an unprivileged capture (replayed) saw. */
static void effect_self(const struct pm_features *f, bool live, struct effect *e)
{
	if (f->privileged)
		return;
	e->have = f->pfn_view != PM_PFN_UNKNOWN;
	e->err = f->pfn_view == PM_PFN_REFUSED ? EPERM : 0;
	e->entry = f->pfn_view == PM_PFN_VISIBLE ? E_PRESENT | 1 : E_PRESENT;
	snprintf(e->who, sizeof(e->who), "%s", live ? "this process (no CAP_SYS_ADMIN)" :
							"the capture's unprivileged reader (pagemap-features)");
}

/* The version rule: PM_VERDICT_* and why. */
static enum pm_verdict pfn_rule(const struct pm_features *f, char *why, size_t size)
{
	const char *k = f->kernel_release;

	if (!f->kernel_major) {
		snprintf(why, size, "kernel release unknown");
		return PM_VERDICT_UNKNOWN;
	}
	if (!pm_kernel_at_least(f, 2, 6) || (f->kernel_major == 2 && f->kernel_minor == 6 && f->kernel_patch < 25)) {
		snprintf(why, size, "Linux %s: no pagemap before 2.6.25", k);
		return PM_VERDICT_OK;
	}
	if (!pm_kernel_at_least(f, 4, 0)) {
		snprintf(why, size, "Linux %s: before 4.0 every reader allowed to read a process (its owner) sees its frame numbers", k);
		return PM_VERDICT_EXPOSED;
	}
	if (!pm_kernel_at_least(f, 4, 2)) {
		snprintf(why, size, "Linux %s: 4.0 and 4.1 refuse pagemap (EPERM) to readers without CAP_SYS_ADMIN", k);
		return PM_VERDICT_OK;
	}
	snprintf(why, size, "Linux %s: since 4.2 frame numbers read 0 for readers without CAP_SYS_ADMIN%s", k,
		 pm_kernel_at_least(f, 4, 18) ? "" : " (swap type and offset still shown before ~4.18)");
	return PM_VERDICT_OK;
}

static enum pm_verdict effect_verdict(const struct effect *e, char *what, size_t size)
{
	if (e->drop_err) {
		snprintf(what, size, "no child could drop to uid %d without capabilities: %s", NOBODY,
			 pmi_strerror(e->drop_err));
		return PM_VERDICT_UNKNOWN;
	}
	if (e->err) {
		snprintf(what, size, "%s could not read pagemap: %s", e->who, pmi_strerror(e->err));
		return e->err == EPERM ? PM_VERDICT_OK : PM_VERDICT_UNKNOWN;
	}
	if (!(e->entry & E_PRESENT)) {
		snprintf(what, size, "%s read a page it had written as not present", e->who);
		return PM_VERDICT_UNKNOWN;
	}
	snprintf(what, size, "%s read a present page of its own with frame %s", e->who,
		 e->entry & E_FRAME_MASK ? "shown" : "0 (hidden)");
	return e->entry & E_FRAME_MASK ? PM_VERDICT_EXPOSED : PM_VERDICT_OK;
}

static void check_pfn(struct pm_audit *a, const struct pm_features *f, const struct effect *e)
{
	char rule[256], what[192] = "";
	enum pm_verdict v = pfn_rule(f, rule, sizeof(rule)), ev;

	if (e->have) {
		ev = effect_verdict(e, what, sizeof(what));
		if (ev != PM_VERDICT_UNKNOWN && v != PM_VERDICT_UNKNOWN && ev != v)
			strncat(what, ": the effect overrides the version rule (a backport?)", sizeof(what) - strlen(what) - 1);
		if (ev != PM_VERDICT_UNKNOWN)
			v = ev;
	}
	pmi_audit_add(a, "pfn-unprivileged", "/proc/PID/pagemap", v,
		     v == PM_VERDICT_EXPOSED ? "run Linux 4.2 or later (or a kernel with 'pagemap: hide physical addresses "
					       "from non-privileged users' backported)" : NULL,
		     "%s%s%s", rule, e->have ? "; by effect: " : "", what);
}

/* ---- processes holding CAP_SYS_ADMIN in the initial user namespace ---- */

/* Is @pid in the initial user namespace? The ns link if we may read it, else the uid_map. */
static int initial_ns(struct pm_audit *a, pid_t pid)
{
	char path[PATH_MAX], buf[256];
	ssize_t n;

	if (pmi_ctx_tree(a->ctx) == 0 && pmi_pid_path(a->ctx, path, sizeof(path), pid, "ns/user") == 0 &&
	    (n = readlink(path, buf, sizeof(buf) - 1)) > 0) {
		buf[n] = '\0';
		return pmi_audit_ns_initial(buf);
	}
	if (pmi_pid_path(a->ctx, path, sizeof(path), pid, "uid_map") < 0 ||
	    pmi_read_small_file(a->ctx, path, buf, sizeof(buf)) < 0)
		return -1;
	return pmi_audit_uid_map_initial(buf);
}

/* One holder's row; counts into @nroot/@nother. */
static void cap_holder(struct pm_audit *a, const struct pm_proc *p, unsigned *nroot, unsigned *nother)
{
	char path[PATH_MAX], buf[4096], subject[96];
	uint64_t caps;
	uint32_t euid;
	struct pm_finding *f;
	int init;

	if (p->state != PM_PROC_RUNNING || pmi_pid_path(a->ctx, path, sizeof(path), p->pid, "status") < 0 ||
	    pmi_read_small_file(a->ctx, path, buf, sizeof(buf)) < 0 || pmi_audit_parse_status(buf, &caps, &euid) < 0 ||
	    !(caps & (1ULL << CAP_BIT_SYS_ADMIN)))
		return;
	init = initial_ns(a, p->pid);
	if (init == 0)
		return;
	snprintf(subject, sizeof(subject), "pid %d (%s)", (int)p->pid, p->comm);
	*(euid ? nother : nroot) += 1;
	f = pmi_audit_add(a, "cap-sys-admin", subject, euid ? PM_VERDICT_EXPOSED : PM_VERDICT_OK,
			 euid ? "drop CAP_SYS_ADMIN from its file capabilities, ambient set or service unit "
				"(AmbientCapabilities=, CapabilityBoundingSet=)" : NULL,
			 "CapEff %016llx, effective uid %u, user namespace %s", (unsigned long long)caps, euid,
			 init > 0 ? "initial" : "not readable (assumed initial)");
	if (f) {
		f->pid = p->pid;
		f->uid_known = true;
		f->uid = (uid_t)euid;
		f->comm = strdup(p->comm);
		if (!f->comm)
			a->err = -ENOMEM;
	}
}

void pmi_audit_move_last(struct pm_audit *a, size_t at)
{
	struct pm_finding last;

	if (!a->n || at >= a->n - 1)
		return;
	last = a->f[a->n - 1];
	memmove(&a->f[at + 1], &a->f[at], (a->n - 1 - at) * sizeof(*a->f));
	a->f[at] = last;
}

static int by_pid(const void *x, const void *y)
{
	const struct pm_finding *a = x, *b = y;

	return (a->pid > b->pid) - (a->pid < b->pid);
}

static void check_caps(struct pm_audit *a)
{
	struct pm_procs *it = pm_procs_open(a->ctx);
	int open_err = errno;
	const struct pm_proc *p;
	unsigned nroot = 0, nother = 0;
	size_t at = a->n;
	int r = 1;

	while (it && (r = pm_procs_next(it, &p)) == 0)
		cap_holder(a, p, &nroot, &nother);
	pm_procs_close(it);
	qsort(a->f + at, a->n - at, sizeof(*a->f), by_pid);	/* directory order differs between filesystems */
	if (!it || r < 0)
		pmi_audit_add(a, "cap-sys-admin", "processes", PM_VERDICT_UNKNOWN, NULL, "cannot list the processes: %s",
			     pmi_strerror(it ? -r : open_err));
	else
		pmi_audit_add(a, "cap-sys-admin", "processes", nother ? PM_VERDICT_EXPOSED : PM_VERDICT_OK,
			     nother ? "take CAP_SYS_ADMIN from the processes below that do not run as root" : NULL,
			     "%u processes hold CAP_SYS_ADMIN in the initial user namespace (%u as root, %u as other "
			     "users): each reads every frame number", nroot + nother, nroot, nother);
	pmi_audit_move_last(a, at);
}

/* ---- 2 MiB of known physical contiguity ---- */

static void check_thp(struct pm_audit *a, const struct pm_features *f)
{
	static const char file[] = "/sys/kernel/mm/transparent_hugepage/enabled";
	static const char *collapse_fix = "no setting closes it on 6.1+: a kernel without CONFIG_TRANSPARENT_HUGEPAGE, "
					  "or a seccomp filter refusing madvise(MADV_HUGEPAGE, MADV_COLLAPSE)";
	char buf[256];
	int r = read_text(a, file, buf, sizeof(buf));
	bool collapse = f->kernel_major && pm_kernel_at_least(f, 6, 1);
	const char *fix = collapse ? collapse_fix : "echo never > /sys/kernel/mm/transparent_hugepage/enabled "
						    "(and transparent_hugepage=never on the kernel command line)";

	buf[r > 0 ? strcspn(buf, "\n") : 0] = '\0';
	if (pmi_audit_absent(a, file, r))
		pmi_audit_add(a, "thp", file, PM_VERDICT_OK, NULL, "absent: kernel without transparent huge pages");
	else if (r < 0)
		pmi_audit_add(a, "thp", file, PM_VERDICT_UNKNOWN, NULL, "cannot read: %s", read_error(a, r));
	else if (pmi_audit_parse_thp(buf) == PMI_THP_ALWAYS)
		pmi_audit_add(a, "thp", file, PM_VERDICT_CONTEXT, fix, "\"%s\": every 2 MiB-aligned anonymous range a process "
			     "touches may be one physically contiguous huge page", buf);
	else if (pmi_audit_parse_thp(buf) == PMI_THP_MADVISE)
		pmi_audit_add(a, "thp", file, PM_VERDICT_CONTEXT, fix, "\"%s\": any process gets physically contiguous 2 MiB "
			     "huge pages with madvise(MADV_HUGEPAGE)", buf);
	else if (pmi_audit_parse_thp(buf) == PMI_THP_NEVER && collapse)
		pmi_audit_add(a, "thp", file, PM_VERDICT_CONTEXT, collapse_fix, "\"%s\", but on Linux 6.1+ madvise(MADV_COLLAPSE) makes a huge page whatever this says", buf);
	else if (pmi_audit_parse_thp(buf) == PMI_THP_NEVER)
		pmi_audit_add(a, "thp", file, PM_VERDICT_OK, NULL, "\"%s\": no transparent huge pages%s", buf,
			     f->kernel_major ? "" : " (kernel release unknown: 6.1+ would have MADV_COLLAPSE)");
	else
		pmi_audit_add(a, "thp", file, PM_VERDICT_UNKNOWN, NULL, "\"%s\": not a mode this audit knows", buf);
}

/* One pool's pages and overcommit limit: -errno, or 0 with @pages/@over. */
static int pool(struct pm_audit *a, const char *dir, uint64_t *pages, uint64_t *over)
{
	char name[PATH_MAX], buf[64];
	int r;

	snprintf(name, sizeof(name), "%s/nr_hugepages", dir);
	r = read_text(a, name, buf, sizeof(buf));
	if (r < 0 || pmi_audit_parse_count(buf, pages) < 0)
		return r < 0 ? r : -EINVAL;
	snprintf(name, sizeof(name), "%s/nr_overcommit_hugepages", dir);
	r = read_text(a, name, buf, sizeof(buf));
	if (r < 0 || pmi_audit_parse_count(buf, over) < 0)
		*over = 0;	/* no overcommit file: nothing to add */
	return 0;
}

/* Huge page pools: MAP_HUGETLB draws from them without any privilege (only SHM_HUGETLB checks a group). */
static void check_hugetlb(struct pm_audit *a)
{
	static const char vm[] = "/proc/sys/vm";
	uint64_t pages = 0, over = 0;
	int r = pool(a, vm, &pages, &over);

	if (pmi_audit_absent(a, "/proc/sys/vm/nr_hugepages", r))
		pmi_audit_add(a, "hugetlb", "/proc/sys/vm/nr_hugepages", PM_VERDICT_OK, NULL,
			     "absent: kernel without hugetlbfs");
	else if (r < 0)
		pmi_audit_add(a, "hugetlb", "/proc/sys/vm/nr_hugepages", PM_VERDICT_UNKNOWN, NULL, "cannot read: %s",
			     read_error(a, r));
	else if (pages || over)
		pmi_audit_add(a, "hugetlb", "/proc/sys/vm/nr_hugepages", PM_VERDICT_CONTEXT,
			     "echo 0 > /proc/sys/vm/nr_hugepages and nr_overcommit_hugepages where no service needs them",
			     "nr_hugepages %llu, nr_overcommit_hugepages %llu: any process may mmap(MAP_HUGETLB) a "
			     "physically contiguous huge page of the default size", (unsigned long long)pages,
			     (unsigned long long)over);
	else
		pmi_audit_add(a, "hugetlb", "/proc/sys/vm/nr_hugepages", PM_VERDICT_OK, NULL,
			     "nr_hugepages 0, nr_overcommit_hugepages 0: no pool of the default size");
}

/* ---- the exclusive bit as a sharing side channel ---- */

static void check_ksm(struct pm_audit *a, const struct pm_features *f, const struct effect *e)
{
	static const char file[] = "/sys/kernel/mm/ksm/run";
	static const char *fix = "echo 2 > /sys/kernel/mm/ksm/run (unmerge and stop), or keep KSM to one trust domain";
	char buf[64], seen[192] = "";
	uint64_t run = 0;
	int r = read_text(a, file, buf, sizeof(buf));

	if (e->have && e->excl_known && !e->drop_err && !e->err && (e->entry & E_PRESENT))
		snprintf(seen, sizeof(seen), "; by effect: %s read bit 56 %s on its own page", e->who,
			 e->entry & E_EXCLUSIVE ? "set" : "clear");
	if (pmi_audit_absent(a, file, r))
		pmi_audit_add(a, "exclusive-bit", file, PM_VERDICT_OK, NULL, "absent: kernel without KSM");
	else if (r < 0 || pmi_audit_parse_count(buf, &run) < 0)
		pmi_audit_add(a, "exclusive-bit", file, PM_VERDICT_UNKNOWN, NULL, "cannot read: %s",
			     r < 0 ? read_error(a, r) : "not a number");
	else if (run != 1)
		pmi_audit_add(a, "exclusive-bit", file, PM_VERDICT_OK, NULL, "run %llu: KSM is not merging pages",
			     (unsigned long long)run);
	else if (!f->kernel_major)
		pmi_audit_add(a, "exclusive-bit", file, PM_VERDICT_UNKNOWN, NULL,
			     "run 1: KSM merges pages; kernel release unknown%s", seen);
	else if (pm_kernel_at_least(f, 4, 2))
		pmi_audit_add(a, "exclusive-bit", file, PM_VERDICT_CONTEXT, fix,
			     "run 1: KSM merges pages, and bit 56 (4.2+, shown to every reader) clears when a page of a "
			     "process was merged with another's identical page%s", seen);
	else if (pm_kernel_at_least(f, 4, 0))
		pmi_audit_add(a, "exclusive-bit", file, PM_VERDICT_OK, NULL,
			     "run 1, but Linux %s refuses pagemap to unprivileged readers and has no bit 56",
			     f->kernel_release);
	else
		pmi_audit_add(a, "exclusive-bit", file, PM_VERDICT_CONTEXT, fix,
			     "run 1: no bit 56 before 4.2, but Linux %s shows frame numbers to every reader: merged "
			     "pages share one", f->kernel_release);
}

int pm_audit_run(struct pm_audit *a, unsigned flags)
{
	const struct pm_features *f;
	struct effect e = { 0 };
	size_t i;

	if (a->ran)
		return -EALREADY;
	a->ran = true;
	f = pm_ctx_features(a->ctx);
	if (!f)
		return -errno;
	if (a->ctx->live && f->privileged && !(flags & PM_AUDIT_NO_CHILD))
		effect_child(f->page_shift, &e);
	else
		effect_self(f, a->ctx->live, &e);
	check_pfn(a, f, &e);
	pmi_audit_modes(a);
	check_caps(a);
	check_thp(a, f);
	check_hugetlb(a);
	check_ksm(a, f, &e);
	for (i = 0; i < a->npaths; i++)
		pmi_audit_snapshots(a, a->paths[i]);
	if (a->err)
		return a->err;
	return a->ctx->tree_error && a->ctx->tree_error[0] ? -EBADMSG : 0;
}
