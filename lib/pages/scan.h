/* scan.h - the one PAGEMAP_SCAN call-and-resume loop, for the walker and the write watch (internal). */
#ifndef PMI_SCAN_H
#define PMI_SCAN_H

#include <stddef.h>
#include <stdint.h>
#include "compat.h"

/*
 * pmi_scan_step - one PAGEMAP_SCAN of pagemap @fd over [arg->start, @end),
 * regions into @vec (@vec_len of them; 0: no output, the kernel then walks
 * the whole range in one call). Afterwards arg->start is where the next call
 * starts: @end once the answer was not full, else the later of walk_end and
 * the last region's end, because 6.12-6.18 return a stale walk_end after
 * more than 512 regions in one call (docs/kernel-interface.md §6.2). A call
 * with arg->max_pages set stops once that many pages (holes inside mappings
 * count) were walked: it resumes at that later point whatever the count.
 * Returns the number of regions, or -errno.
 */
int pmi_scan_step(int fd, struct pm_scan_arg *arg, uint64_t end, struct page_region *vec, size_t vec_len);

/* Called with each batch of regions; a negative return stops the loop with that error. */
typedef int (*pmi_scan_fn)(void *data, const struct page_region *v, size_t n);

/*
 * pmi_scan_each - pmi_scan_step from @arg.start to @arg.end until the range is
 * done, @fn called with every non-empty batch. @arg's size, vec and vec_len
 * are set here. Returns 0 or the first negative errno (of the ioctl or @fn).
 */
int pmi_scan_each(int fd, struct pm_scan_arg arg, struct page_region *vec, size_t vec_len, pmi_scan_fn fn,
		 void *data);

#endif
