/* watch_vmas.c - the mappings of a watched range, for the back ends: from the batch listing or one read of maps. */
#include <errno.h>
#include "watch.h"

int pmi_watch_vmas_in(struct pm_watch *w, uint64_t start, uint64_t end,
		     int (*fn)(struct pm_watch *w, const struct pmi_watch_vma *v, void *data), void *data)
{
	const struct pm_mapping *m;
	struct pm_maps *it;
	int ret;

	if (w->vmas) {
		size_t lo = 0, hi = w->nvmas;

		while (lo < hi) {	/* the first mapping that ends after start */
			size_t mid = lo + (hi - lo) / 2;

			if (w->vmas[mid].end <= start)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < w->nvmas && w->vmas[lo].start < end; lo++)
			if ((ret = fn(w, &w->vmas[lo], data)) != 0)
				return ret;
		return 0;
	}
	it = pm_maps_open(w->t);
	if (!it)
		return -errno;
	while ((ret = pm_maps_next(it, &m)) == 0 && m->start < end) {
		struct pmi_watch_vma v = { m->start, m->end, m->prot,
					  m->kind == PM_MAP_VVAR || m->kind == PM_MAP_VSYSCALL };

		if (m->end > start && (ret = fn(w, &v, data)) != 0)
			break;
	}
	pm_maps_close(it);
	return ret < 0 ? ret : ret == 1 ? 0 : ret;
}
