/*
 * hugetlb_devs.c - is a mapping hugetlb, by effect: its file lives on a hugetlbfs superblock. A maps line
 * names MAP_HUGETLB's file /anon_hugepage, but an MFD_HUGETLB memfd, a SHM_HUGETLB segment and a file on a
 * hugetlbfs mount read like any shmem or tmpfs file; only their device (major 0, an anonymous superblock)
 * tells them. Live, the kernel's own hugetlbfs mounts (one per huge page size, behind MAP_HUGETLB,
 * MFD_HUGETLB and SHM_HUGETLB) are learned by creating an empty memfd of each size, and a user's mount
 * from mountinfo; a replay learns from the recorded smaps (KernelPageSize above the base page), never from
 * the replaying machine.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "pages.h"
#include "smaps.h"

#ifndef MFD_HUGETLB
#define MFD_HUGETLB	0x0004U
#endif
#define HUGE_SHIFT	26	/* MFD_HUGE_SHIFT: log2 of the page size in the flags' top bits */

/* One lock for every context's set: taken only for a mapping that may be hugetlb, which is rare. */
static pthread_mutex_t devs_lock = PTHREAD_MUTEX_INITIALIZER;

int pmi_hugetlb_devs_lookup(const struct pmi_hugetlb_devs *d, uint32_t major, uint32_t minor)
{
	size_t i;

	if (major)
		return 0;	/* hugetlbfs is a virtual file system: its superblocks are anonymous */
	for (i = 0; i < d->n; i++)
		if (d->v[i].minor == minor)
			return d->v[i].huge;
	return -1;
}

int pmi_hugetlb_devs_add(struct pmi_hugetlb_devs *d, uint32_t minor, bool huge)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		if (d->v[i].minor == minor) {
			d->v[i].huge = huge;
			return 0;
		}
	if (pmi_grow(&d->v, &d->cap, d->n + 1, sizeof(*d->v)) < 0)
		return -ENOMEM;
	d->v[d->n++] = (struct pmi_hugetlb_dev){ .minor = minor, .huge = huge };
	return 0;
}

bool pmi_hugetlb_candidate(const struct pm_mapping *m, uint64_t align)
{
	/*
	 * A hugetlb VMA has a file on an anonymous superblock (00:00 is no file:
	 * minor 0 is never given out) and starts and ends on its huge page size.
	 * Not its inode: a SysV segment's is its shmid, 0 for the first.
	 */
	return !m->dev_major && m->dev_minor && align > 1 && !(m->start & (align - 1)) && !(m->end & (align - 1));
}

int pmi_mountinfo_dev(const char *line, size_t len, uint32_t *major, uint32_t *minor, bool *hugetlbfs)
{
	const char *p = line, *end = line + len, *sep;
	unsigned long long a, b;
	char num[48];
	int i;
	size_t n;

	/* "ID PARENT MAJOR:MINOR ROOT POINT OPTIONS [TAGS...] - FSTYPE SOURCE SUPER" (proc(5)) */
	for (i = 0; i < 2; i++) {
		if (!(p = memchr(p, ' ', (size_t)(end - p))))
			return -EINVAL;
		p++;
	}
	sep = memchr(p, ' ', (size_t)(end - p));
	n = sep ? (size_t)(sep - p) : 0;
	if (!n || n >= sizeof(num))
		return -EINVAL;
	memcpy(num, p, n);
	num[n] = '\0';
	if (sscanf(num, "%llu:%llu", &a, &b) != 2 || a > UINT32_MAX || b > UINT32_MAX)
		return -EINVAL;
	for (p = sep; p + 3 <= end; p++)
		if (!memcmp(p, " - ", 3))
			break;
	if (p + 3 > end)
		return -EINVAL;
	p += 3;
	*major = (uint32_t)a;
	*minor = (uint32_t)b;
	*hugetlbfs = end - p >= 10 && !memcmp(p, "hugetlbfs", 9) && p[9] == ' ';
	return 0;
}

/* Learn every anonymous device (major 0) of the mountinfo at @path, hugetlbfs or not, in one read. */
static void learn_mountinfo(struct pmi_hugetlb_devs *d, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	if (!f) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((n = getline(&line, &cap, f)) > 0) {
		uint32_t ma, mi;
		bool huge;

		if (line[n - 1] == '\n')
			n--;
		if (pmi_mountinfo_dev(line, (size_t)n, &ma, &mi, &huge) == 0 && !ma)
			pmi_hugetlb_devs_add(d, mi, huge);
	}
	free(line);
	fclose(f);
}

/* The device of an empty memfd made with @flags, learned as @huge; false when it cannot be made. */
static bool learn_memfd(struct pmi_hugetlb_devs *d, unsigned flags, bool huge)
{
	struct stat st;
	int fd = memfd_create("pagemap-hugetlb-probe", MFD_CLOEXEC | flags);
	bool ok = fd >= 0 && fstat(fd, &st) == 0 && !major(st.st_dev);

	if (ok)
		pmi_hugetlb_devs_add(d, minor(st.st_dev), huge);
	if (fd >= 0)
		close(fd);
	return ok;
}

/*
 * The kernel's own hugetlbfs mounts, one per huge page size: an empty memfd
 * of each size (no page is taken, no privilege needed) shows its device. Where
 * hugetlb is absent it cannot be made: then no mapping is hugetlb that way.
 * The internal shmem mount (memfd, SysV, shared anonymous memory) is learned
 * as not hugetlb on the way: the most common major-0 file of all.
 */
static void probe_live(struct pmi_hugetlb_devs *d, uint64_t page)
{
	DIR *dir = opendir("/sys/kernel/mm/hugepages");
	struct dirent *e;

	d->probed = true;
	learn_memfd(d, 0, false);
	while (dir && (e = readdir(dir))) {
		unsigned long long kb;
		uint64_t size;
		unsigned shift;

		if (sscanf(e->d_name, "hugepages-%llukB", &kb) != 1 || !kb || kb > (1ULL << 40))
			continue;
		size = kb * 1024;
		if (size & (size - 1))
			continue;
		shift = (unsigned)__builtin_ctzll(size);
		/* the alignment holds where memfd cannot tell (before 4.14): mountinfo still may */
		if (!d->min_size || size < d->min_size)
			d->min_size = size;
		learn_memfd(d, MFD_HUGETLB | (shift << HUGE_SHIFT), true);
	}
	if (dir)
		closedir(dir);
	/* no sysfs (a container may lack it): the default size's mount still tells, aligned as a base page pair */
	if (!dir && learn_memfd(d, MFD_HUGETLB, true))
		d->min_size = 2 * page;
}

static int live_verdict(struct pm_target *t, struct pmi_hugetlb_devs *d, const struct pm_mapping *m, uint64_t page)
{
	char path[4096];
	int v;

	if (!d->probed)
		probe_live(d, page);
	/* a hugetlb VMA is aligned to its huge page size, the smallest of which is known now */
	if (!pmi_hugetlb_candidate(m, d->min_size))
		return 0;
	if ((v = pmi_hugetlb_devs_lookup(d, m->dev_major, m->dev_minor)) >= 0)
		return v;
	/* a user's mount: ours, else the target's (another mount namespace); numbers hold in every one */
	if (!d->mounts_read) {
		d->mounts_read = true;
		learn_mountinfo(d, "/proc/self/mountinfo");
		if ((v = pmi_hugetlb_devs_lookup(d, m->dev_major, m->dev_minor)) >= 0)
			return v;
	}
	if (pmi_pid_path(t->ctx, path, sizeof(path), t->pid, "mountinfo") == 0)
		learn_mountinfo(d, path);
	if ((v = pmi_hugetlb_devs_lookup(d, m->dev_major, m->dev_minor)) >= 0)
		return v;
	/* on no mount we can see (a detached one): not told, and not asked again */
	pmi_hugetlb_devs_add(d, m->dev_minor, false);
	return 0;
}

struct replay_learn {
	struct pmi_hugetlb_devs *d;
	uint64_t page;
};

static int learn_smaps(void *arg, const struct pmi_smaps_rec *rec)
{
	struct replay_learn *l = arg;

	if (rec->mapped && !rec->map.dev_major && rec->map.dev_minor && (rec->have & PMI_SMAPS_HAVE(PMI_SMAPS_KERNEL_PAGE)))
		pmi_hugetlb_devs_add(l->d, rec->map.dev_minor, rec->val[PMI_SMAPS_KERNEL_PAGE] > l->page);
	return 0;
}

/*
 * A replay: the capture's smaps says, per mapping, KernelPageSize, above the
 * base page for a hugetlb VMA only; a mapping's device tells the others on
 * it. Read once per maps iterator (*@smaps_read), only when a device is not
 * known yet. Without smaps nothing is learned (-1): the path rule stands.
 */
static int replay_verdict(struct pm_target *t, struct pmi_hugetlb_devs *d, const struct pm_mapping *m,
			  bool *smaps_read)
{
	struct replay_learn l = { .d = d, .page = t->ctx->features.page_size ? t->ctx->features.page_size : 4096 };
	int v = pmi_hugetlb_devs_lookup(d, m->dev_major, m->dev_minor);
	FILE *f;

	if (v >= 0 || *smaps_read)
		return v;
	*smaps_read = true;
	if (pmi_smaps_open(t, &f) < 0)
		return -1;
	pmi_smaps_parse_file(f, learn_smaps, &l);
	fclose(f);
	return pmi_hugetlb_devs_lookup(d, m->dev_major, m->dev_minor);
}

bool pmi_hugetlb_by_effect(struct pm_target *t, const struct pm_mapping *m, bool *smaps_read)
{
	uint64_t page = t->ctx->features.page_size ? t->ctx->features.page_size : 4096;
	int v;

	/* a huge page is at least two base pages: most mappings stop here, before any lock or probe */
	if (!pmi_hugetlb_candidate(m, 2 * page))
		return false;
	pthread_mutex_lock(&devs_lock);
	v = t->ctx->live ? live_verdict(t, &t->ctx->hugetlb, m, page)
			 : replay_verdict(t, &t->ctx->hugetlb, m, smaps_read);
	pthread_mutex_unlock(&devs_lock);
	return v > 0;
}
