/* pagemap.h - libpagemap: decode and walk Linux /proc/PID/pagemap safely and fast. */
#ifndef PAGEMAP_H
#define PAGEMAP_H

/*
 * API families, one header each under pagemap/ (named in brackets), which
 * this header includes in the order they build on each other: include
 * <pagemap.h>, never a family header alone.
 *
 *   Context   pm_ctx_*      [context.h] one per run: the root prefix every
 *                           kernel path goes through ("/" live, or a captured
 *                           tree), the walker back end, the log and the
 *                           check asked during long calls.
 *   Features  struct pm_features [features.h] what the running kernel and
 *                           this privilege level allow: pagemap layout, PFN
 *                           visibility, PAGEMAP_SCAN, uffd-wp async,
 *                           soft-dirty, kpage*; from pm_ctx_features(), the
 *                           costlier probes by pm_ctx_probe().
 *   Target    pm_target_*   [target.h] one process (by PID, or self) with
 *                           its pagemap fd kept open: PFN visibility is
 *                           fixed at open.
 *   Maps      pm_maps_*     [maps.h] pure parser of one /proc/PID/maps line,
 *                           and a streaming iterator over a target's mappings.
 *   Entry     pm_entry_*    [entry.h] pure decoder of one 64-bit pagemap
 *                           entry, every layout the kernel has shipped since
 *                           2.6.25.
 *   Flags     pm_flag_*     [entry.h] the table of decoded page flags (bit,
 *                           name, letter, meaning) that help and filters
 *                           derive from, and each flag's kernel facts.
 *   Walk      pm_walk_*     [walk.h] runs of consecutive pages with identical
 *                           state over a virtual range, through PAGEMAP_SCAN
 *                           or batched pread, with the same records either way.
 *   Mapstat   pm_mapstat_*  [mapstat.h] every mapping of a target with its
 *                           usage by flag, summed from one walk.
 *   KPF       pm_kpf_*      [kpf.h] pure: the table of physical page flags
 *                           (KPF_*, page-types' letters), -b filter
 *                           expressions, flags to names and letters.
 *   Kpage     pm_kpage_*    [kpage.h] batched reads of /proc/kpageflags,
 *                           kpagecount and kpagecgroup: contiguous PFN runs,
 *                           or a scattered set sorted and coalesced into runs.
 *   Procs     pm_procs_*    [procs.h] the processes of ROOT/proc with state,
 *                           UID, comm.
 *   Audit     pm_audit_*    [audit.h] rowhammer exposure: what on this machine
 *                           can learn physical addresses or page-sharing
 *                           facts, each finding with a verdict, its evidence
 *                           and the fix.
 *   Memcg     pm_memcg_*    [memcg.h] a process's memory cgroup
 *                           (ROOT/proc/PID/cgroup), pure parser and path
 *                           matching included.
 *   Account   pm_account_*  [account.h] RSS, PSS, USS, swap, shared bytes of a
 *                           process, hugetlb bytes apart: pagemap + kpagecount
 *                           when readable (exact), else the kernel's
 *                           smaps_rollup; per mapping from smaps.
 *   Fleet     pm_quick_*, pm_groups_*, pm_xshare_*, pm_class* [fleet.h]
 *                           for exporters: cheap per-process figures from
 *                           pagemap bits alone, named groups summed and
 *                           capped, what groups share with each other,
 *                           physical memory by frame class.
 *   Live      pm_live_*     [live.h] every process with its memory, refreshed
 *                           frame by frame: a rollup read again when the
 *                           process's stat moved, the rest within a bound on
 *                           a row's age (what `pagemap top` shows).
 *   Watch     pm_watch_*    [watch.h] which pages of a process (the caller or
 *                           another) were written since the last reset:
 *                           uffd-wp async + PAGEMAP_SCAN, soft-dirty, mprotect,
 *                           or a fork snapshot.
 *   WSS       pm_wss_*      [wss.h] the working set over a window: idle page
 *                           tracking or accessed bits (clear_refs 1 + smaps
 *                           Referenced).
 *   Share     pm_share_*    [share.h] what a set of processes share with each
 *                           other and with the rest of the system, per pair of
 *                           mappings: pagemap + kpagecount (root).
 *   NUMA      pm_numa_*     [numa.h] the machine's nodes (CPUs, memory,
 *                           distances, tiers, the frames each holds) and a
 *                           process's bytes per node and mapping: from frame
 *                           numbers, move_pages(2) or numa_maps.
 *   Cache     pm_cache_*    [cache.h] page cache per file (cachestat), joined
 *                           to the processes that map the files or hold them
 *                           open.
 *   Snapshot  pm_snapshot_* [snapshot.h] one file holding a captured tree
 *                           (maps, pagemap, frames' kpage* words, features):
 *                           write, check, iterate, extract;
 *                           pm_ctx_new_snapshot replays it.
 *   Outfile   pm_outfile_*  [outfile.h] the one way files are written: a
 *                           temporary published whole, never through or over
 *                           what someone else planted, mode by what it holds.
 *   Diff      pm_diff_*     [diff.h] what changed in one process between two
 *                           views (snapshots): mappings matched, pages
 *                           classified.
 *
 * Conventions: functions returning int give 0 on success and -errno on
 * failure; functions returning a pointer give NULL and set errno. Iterators
 * (pm_*_next) return 0 with an item, 1 at the end, <0 on error; the item is
 * borrowed until the next call or until its handle is freed. Every
 * destructor accepts NULL. The library never prints and never exits.
 *
 * Errors with a meaning of their own here:
 *   -ESRCH   the target has no memory any more: it exited or exec'd since it
 *            was opened (reads return 0, PAGEMAP_SCAN fails), or it is a
 *            zombie or a kernel thread. Never reported as empty memory.
 *   -ENOENT  no such process.
 *   -EACCES  not allowed to read the target (other user, not dumpable, LSM).
 *   -EPERM   the kernel refuses pagemap to readers without CAP_SYS_ADMIN
 *            (Linux 4.0 and 4.1).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PM_API __attribute__((visibility("default")))

/* The families, one header each under pagemap/, in the order they build on each other. */
#include "pagemap/context.h"
#include "pagemap/features.h"
#include "pagemap/target.h"
#include "pagemap/maps.h"
#include "pagemap/entry.h"
#include "pagemap/walk.h"
#include "pagemap/mapstat.h"
#include "pagemap/kpf.h"
#include "pagemap/kpage.h"
#include "pagemap/procs.h"
#include "pagemap/audit.h"
#include "pagemap/memcg.h"
#include "pagemap/account.h"
#include "pagemap/fleet.h"
#include "pagemap/live.h"
#include "pagemap/watch.h"
#include "pagemap/wss.h"
#include "pagemap/share.h"
#include "pagemap/numa.h"
#include "pagemap/cache.h"
#include "pagemap/snapshot.h"
#include "pagemap/outfile.h"
#include "pagemap/diff.h"

/* (new API families go in a header of their own under pagemap/, included above) */

#ifdef __cplusplus
}
#endif

#endif /* PAGEMAP_H */
