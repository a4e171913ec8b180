/* scan.c - the one PAGEMAP_SCAN call-and-resume loop, with the stale walk_end rule. */
#include <errno.h>
#include <sys/ioctl.h>
#include "scan.h"

int pmi_scan_step(int fd, struct pm_scan_arg *arg, uint64_t end, struct page_region *vec, size_t vec_len)
{
	int n;

	arg->size = sizeof(*arg);
	arg->end = end;
	arg->vec = (uint64_t)(uintptr_t)vec;
	arg->vec_len = vec_len;
	n = ioctl(fd, PAGEMAP_SCAN, arg);
	if (n < 0)
		return -errno;
	if (arg->max_pages) {	/* a bounded call may stop early: at walk_end, never before its last region's end */
		uint64_t s = n > 0 && vec[n - 1].end > arg->walk_end ? vec[n - 1].end : arg->walk_end;

		arg->start = s > arg->start && s < end ? s : end;
	} else if (!vec_len || (size_t)n < vec_len)
		arg->start = end;
	else	/* full: walk_end may be stale, never resume before the last region's end */
		arg->start = arg->walk_end > vec[n - 1].end ? arg->walk_end : vec[n - 1].end;
	return n;
}

int pmi_scan_each(int fd, struct pm_scan_arg arg, struct page_region *vec, size_t vec_len, pmi_scan_fn fn,
		 void *data)
{
	uint64_t end = arg.end;

	while (arg.start < end) {
		int err, n = pmi_scan_step(fd, &arg, end, vec, vec_len);

		if (n < 0)
			return n;
		if (n > 0 && (err = fn(data, vec, (size_t)n)) < 0)
			return err;
	}
	return 0;
}
