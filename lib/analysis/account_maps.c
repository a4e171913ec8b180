/* account_maps.c - per-mapping RSS, PSS, USS, swap, shared and hugetlb bytes from the kernel's /proc/PID/smaps. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "pages.h"
#include "account.h"
#include "smaps.h"

struct maps_acct {
	struct pm_target *t;
	pm_account_map_fn fn;
	void *data;
};

static int map_rec(void *arg, const struct pmi_smaps_rec *rec)
{
	struct maps_acct *m = arg;
	struct pm_account a = { 0 };
	int r;

	if (!rec->mapped)	/* fields before any mapping line: no mapping to give them to */
		return 0;
	if ((r = pmi_account_from_smaps(m->t->ctx, rec, &a)) < 0)
		return r;
	a.source = PM_ACCOUNT_SMAPS;
	return m->fn(m->data, &rec->map, &a);
}

int pm_account_mappings(struct pm_target *t, pm_account_map_fn fn, void *data)
{
	struct maps_acct m = { t, fn, data };
	FILE *f;
	int r = pmi_smaps_open(t, &f);

	if (r < 0)
		return r;
	r = pmi_smaps_parse_file(f, map_rec, &m);
	fclose(f);
	return r;
}
