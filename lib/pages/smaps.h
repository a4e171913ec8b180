/* smaps.h - the one parser of /proc/PID/smaps and smaps_rollup text, and the per-mapping Swap and KernelPageSize (internal). */
#ifndef PMI_SMAPS_H
#define PMI_SMAPS_H

#include <stdint.h>
#include <stdio.h>
#include "pages.h"

/* The "Name: N kB" lines the library reads; PMI_SMAPS_HAVE(key) bits say which a record had. */
enum pmi_smaps_key {
	PMI_SMAPS_RSS,
	PMI_SMAPS_PSS,
	PMI_SMAPS_SHARED_CLEAN,
	PMI_SMAPS_SHARED_DIRTY,
	PMI_SMAPS_PRIVATE_CLEAN,
	PMI_SMAPS_PRIVATE_DIRTY,
	PMI_SMAPS_REFERENCED,
	PMI_SMAPS_SWAP,
	PMI_SMAPS_KERNEL_PAGE,
	PMI_SMAPS_SHARED_HUGETLB,
	PMI_SMAPS_PRIVATE_HUGETLB,
	PMI_SMAPS_NKEYS
};
#define PMI_SMAPS_HAVE(key) (1u << (key))

/*
 * One mapping of smaps text: its maps line and its fields in bytes (the first
 * line of each name counts). @mapped is false for fields before any mapping
 * line (smaps_rollup whose header does not parse); map.path is borrowed until
 * the callback returns. A line that is neither a field nor a mapping line is
 * ignored: the fields after it still belong to the mapping before it.
 */
struct pmi_smaps_rec {
	bool mapped;
	struct pm_mapping map;
	uint64_t val[PMI_SMAPS_NKEYS];
	unsigned have;
};

/* Called once per record, in text order; a nonzero return stops the parse and is returned. */
typedef int (*pmi_smaps_fn)(void *arg, const struct pmi_smaps_rec *rec);

/* A parse in progress, fed a line at a time (pure: no I/O). */
struct pmi_smaps_parser {
	struct pmi_smaps_rec rec;
	bool open;		/* rec holds a mapping or fields not yet handed over */
	char *hdr;		/* a copy of the current mapping line (rec.map.path points into it) */
	size_t hdr_cap;
	pmi_smaps_fn fn;
	void *arg;
};

void pmi_smaps_init(struct pmi_smaps_parser *p, pmi_smaps_fn fn, void *arg);
/* pmi_smaps_feed - one line (@len bytes, newline optional, need not be NUL-terminated). 0, -ENOMEM or fn's. */
int pmi_smaps_feed(struct pmi_smaps_parser *p, const char *line, size_t len);
/* pmi_smaps_finish - hand over the last record and free the parser. 0 or fn's return. */
int pmi_smaps_finish(struct pmi_smaps_parser *p);
/* pmi_smaps_parse_buf - the whole of @buf (@len bytes, NULs allowed), line by line. Pure. */
int pmi_smaps_parse_buf(const char *buf, size_t len, pmi_smaps_fn fn, void *arg);
/* pmi_smaps_parse_file - the same over a stream (no /proc access of its own). 0, -errno or fn's return. */
int pmi_smaps_parse_file(FILE *f, pmi_smaps_fn fn, void *arg);

struct pmi_smaps_swap {
	uint64_t start;		/* the mapping's first address */
	uint64_t swap;		/* its Swap: line, in bytes */
	uint64_t kernel_page;	/* its KernelPageSize: (a hugetlb mapping's huge page size), bytes */
};

/*
 * pmi_smaps_swap_parse - the mappings of smaps text read from @f, in address
 * order (a mapping not above the one before is dropped), each with its Swap
 * bytes. Pure over the stream. Returns 0 with *@out (free()) and *@n, or -errno.
 */
int pmi_smaps_swap_parse(FILE *f, struct pmi_smaps_swap **out, size_t *n);

/* pmi_smaps_open - ROOT/proc/PID/smaps of @t as a stream (fclose it); -ESRCH when it is gone. */
int pmi_smaps_open(struct pm_target *t, FILE **out);

/* pmi_smaps_swap_read - the same from ROOT/proc/PID/smaps of @t; -ESRCH when it is gone. */
int pmi_smaps_swap_read(struct pm_target *t, struct pmi_smaps_swap **out, size_t *n);

/* pmi_smaps_find - the record of the mapping that starts at @start, or NULL. */
const struct pmi_smaps_swap *pmi_smaps_find(const struct pmi_smaps_swap *v, size_t n, uint64_t start);

/* pmi_smaps_swap_of - Swap bytes of the mapping that starts at @start, -1 if none does. */
int64_t pmi_smaps_swap_of(const struct pmi_smaps_swap *v, size_t n, uint64_t start);

#endif
