/* compat.h - PAGEMAP_SCAN and userfaultfd definitions missing from older uapi headers (Debian 12 ships 6.1's). */
#ifndef PMI_COMPAT_H
#define PMI_COMPAT_H

#include <linux/types.h>
#include <linux/ioctl.h>
#include <linux/fs.h>

#ifndef PAGEMAP_SCAN
/* Linux 6.7 include/uapi/linux/fs.h */
#define PAGE_IS_WPALLOWED	(1 << 0)
#define PAGE_IS_WRITTEN		(1 << 1)
#define PAGE_IS_FILE		(1 << 2)
#define PAGE_IS_PRESENT		(1 << 3)
#define PAGE_IS_SWAPPED		(1 << 4)
#define PAGE_IS_PFNZERO		(1 << 5)
#define PAGE_IS_HUGE		(1 << 6)
#define PAGE_IS_SOFT_DIRTY	(1 << 7)

struct page_region {
	__u64 start;
	__u64 end;
	__u64 categories;
};

#define PM_SCAN_WP_MATCHING	(1 << 0)
#define PM_SCAN_CHECK_WPASYNC	(1 << 1)

struct pm_scan_arg {
	__u64 size;
	__u64 flags;
	__u64 start;
	__u64 end;
	__u64 walk_end;
	__u64 vec;
	__u64 vec_len;
	__u64 max_pages;
	__u64 category_inverted;
	__u64 category_mask;
	__u64 category_anyof_mask;
	__u64 return_mask;
};

#define PROCFS_IOCTL_MAGIC	'f'
#define PAGEMAP_SCAN		_IOWR(PROCFS_IOCTL_MAGIC, 16, struct pm_scan_arg)
#endif

#ifndef PAGE_IS_GUARD
#define PAGE_IS_GUARD		(1 << 8)	/* Linux 6.15 */
#endif

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL	102		/* Linux 6.13 */
#define MADV_GUARD_REMOVE	103
#endif

#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_UNPOPULATED	(1 << 13)	/* Linux 6.4 */
#define UFFD_FEATURE_WP_ASYNC		(1 << 15)	/* Linux 6.7 */
#endif

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

/* pidfd_open(2) 5.3, pidfd_getfd(2) 5.6: one number on every architecture but alpha (asm-generic table). */
#include <sys/syscall.h>
#ifndef SYS_pidfd_open
#define SYS_pidfd_open		434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd		438
#endif

#endif
