# bench/bench.mk - `make bench`: `pagemap maps` against the raw pagemap read, `pagemap phys -p` against page-types'
# per-page join, `pagemap ps` against smem and smaps_rollup, the write watch's collect-and-reset against a raw
# PAGEMAP_SCAN (included by the Makefile). Each part alone: `make bench-maps`, `bench-phys`, `bench-ps`, `bench-watch`.
# BENCH_GIB=4   GiB the target touches     BENCH_RUNS=5   runs per command (median taken)
# The programs are standalone (they use neither the library nor the CLI's code), except watch.c.

BENCH_SRC := $(wildcard bench/*.c)
BENCH_BIN := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC))

$(BUILD)/bench/%: bench/%.c lib/base/compat.h
	@mkdir -p $(@D)
	$(CC) $(BASEFLAGS) $(CFLAGS) -o $@ $<

.PHONY: bench-programs
bench-programs: $(BENCH_BIN)

# One after the other (never in parallel under make -j: they time the same machine).
.PHONY: bench-maps bench-phys bench-ps bench-shared bench-numa
bench: all bench-programs
	BENCH_BUILD=$(abspath $(BUILD)) bench/run.sh
	BENCH_BUILD=$(abspath $(BUILD)) bench/run-phys.sh
	BENCH_BUILD=$(abspath $(BUILD)) bench/run-ps.sh
	BENCH_BUILD=$(abspath $(BUILD)) bench/run-shared.sh
	BENCH_BUILD=$(abspath $(BUILD)) bench/run-numa.sh
	$(BUILD)/bench/watch $(BENCH_WATCH_ARGS)
bench-maps: all bench-programs
	BENCH_BUILD=$(abspath $(BUILD)) bench/run.sh
bench-phys: all bench-programs
	BENCH_BUILD=$(abspath $(BUILD)) bench/run-phys.sh
bench-ps: all bench-programs
	BENCH_BUILD=$(abspath $(BUILD)) bench/run-ps.sh
bench-shared: all bench-programs
	BENCH_BUILD=$(abspath $(BUILD)) bench/run-shared.sh
bench-numa: all bench-programs
	BENCH_BUILD=$(abspath $(BUILD)) bench/run-numa.sh

# Not part of `make bench` (on request): maps of 10,000 and 60,000 mappings against cat smaps.
.PHONY: bench-mappings
bench-mappings: all bench-programs
	BENCH_BUILD=$(abspath $(BUILD)) bench/run-mappings.sh

# Not part of `make bench` (on request): snapshot size per page and time against pages.
.PHONY: bench-snapshot bench-replay bench-diff bench-series
bench-snapshot: all bench-programs
	BENCH_BUILD=$(abspath $(BUILD)) bench/run-snapshot.sh
# A snapshot's replay against the live walk of the same stopped 1 GiB process (pages, features).
bench-replay: all bench-programs
	BENCH_BUILD=$(abspath $(BUILD)) bench/run-replay.sh
# `pagemap diff` of two snapshots of an 8 GiB target (BENCH_GIB) around a known set of writes.
bench-diff: all bench-programs
	BENCH_BUILD=$(abspath $(BUILD)) bench/run-diff.sh
# `pagemap diff S@1 S@2` of two members of a series against two separate files (BENCH_GIB, BENCH_PFN).
bench-series: all bench-programs
	BENCH_BUILD=$(abspath $(BUILD)) bench/run-series.sh

# bench/watch.c links the library (static: a rebuild of the shared one during a run cannot mix versions).
# `make bench-watch` runs it (1 and 4 GiB; 16 only when asked: BENCH_WATCH_ARGS="-s 16", which maps only
# with MemAvailable >= 20 GiB); BENCH_WATCH_ARGS passes options (e.g. "-s 1 -f 1 -r 21").
$(BUILD)/bench/watch: bench/watch.c $(STLIB) include/pagemap.h $(wildcard include/pagemap/*.h) lib/base/compat.h
	@mkdir -p $(@D)
	$(CC) $(BASEFLAGS) $(CFLAGS) -o $@ $< $(STLIB) $(LIB_LIBS) -lm

.PHONY: bench-watch
bench-watch: all $(BUILD)/bench/watch
	$(BUILD)/bench/watch $(BENCH_WATCH_ARGS)

# bench/track_thp.c: the watch's collect on another process's 730 MB MADV_HUGEPAGE heap (a Java heap's
# shape) against a raw PAGEMAP_SCAN collect-and-reset of a heap of the same shape, same run (about a minute).
# BENCH_TRACK_THP_ARGS passes options (e.g. "-n" to time --no-thp too, "-w clustered").
$(BUILD)/bench/track_thp: bench/track_thp.c $(STLIB) include/pagemap.h $(wildcard include/pagemap/*.h) lib/base/compat.h
	@mkdir -p $(@D)
	$(CC) $(BASEFLAGS) $(CFLAGS) -o $@ $< $(STLIB) $(LIB_LIBS) -lm

.PHONY: bench-track-thp
bench-track-thp: all $(BUILD)/bench/track_thp
	$(BUILD)/bench/track_thp $(BENCH_TRACK_THP_ARGS)

# `make bench-fleet`: the exporter's cost; not part of `make bench` (it starts 2000 processes).
.PHONY: bench-fleet
bench-fleet: all $(BUILD)/bench/touch
	BENCH_BUILD=$(abspath $(BUILD)) bench/run-fleet.sh

# `make bench-serve-clients`: 1000 scrapes at once against `pagemap serve`; not part of `make bench`.
.PHONY: bench-serve-clients
bench-serve-clients: all
	BENCH_BUILD=$(abspath $(BUILD)) bench/run-serve-clients.sh

# What tracking costs the tracked process: bench/hotwriter untracked, self-tracked by the floor, and under
# `pagemap track` with and without --max-overhead; not part of `make bench` (minutes; 8 GiB). Under flock /tmp/bench.lock.
$(BUILD)/bench/hotwriter: bench/hotwriter.c lib/base/compat.h
	@mkdir -p $(@D)
	$(CC) $(BASEFLAGS) $(CFLAGS) -o $@ $< -lpthread

.PHONY: bench-cost
bench-cost: all $(BUILD)/bench/hotwriter
	BENCH_BUILD=$(abspath $(BUILD)) bench/run-cost.sh

# The same with the soft-dirty method in the 6.1 and 6.12 guests of ../shared/tools/kernel-matrix/run-in-vm.sh
# (QEMU under TCG; run-in-vm.sh --setup first): 1 GiB in a 3 GiB guest, seconds scaled down; about 20 min.
.PHONY: bench-cost-vm
bench-cost-vm: all $(BUILD)/bench/hotwriter
	BENCH_BUILD=$(abspath $(BUILD)) bench/run-cost-vm.sh

# The page cache view over a synthetic 100k-file tree; not part of `make bench` (it writes 100k files).
.PHONY: bench-cache
bench-cache: all bench-programs
	BENCH_BUILD=$(abspath $(BUILD)) bench/run-cache.sh

# Not part of `make bench` (the fixed cost of a command): maps of a small process against cat smaps.
.PHONY: bench-tiny
bench-tiny: all bench-programs
	BENCH_BUILD=$(abspath $(BUILD)) bench/run-tiny.sh

# Not part of `make bench` (the fixed cost of a snapshot): snapshot -p of a sleep against maps of it.
.PHONY: bench-snap-tiny
bench-snap-tiny: all bench-programs
	BENCH_BUILD=$(abspath $(BUILD)) bench/run-snap-tiny.sh

# Not part of `make bench` (on request): render time against maps, output sizes.
.PHONY: bench-render
bench-render: all bench-programs
	BENCH_BUILD=$(abspath $(BUILD)) bench/run-render.sh

# Not part of `make bench`: the first paint of render's HTML (100 k mappings) in headless Chromium.
.PHONY: bench-paint
bench-paint: all
	BENCH_BUILD=$(abspath $(BUILD)) bench/run-paint.sh

# Not part of `make bench`: the 16 GiB one-in-16 target (maps against raw pread and raw PAGEMAP_SCAN,
# pages against page-types -p -l), every reader's output compared first.
.PHONY: bench-sparse
bench-sparse: all bench-programs
	BENCH_BUILD=$(abspath $(BUILD)) bench/run-sparse.sh

# Not part of `make bench` (many rows): pages --each, phys -l and the phys -p list against page-types
# (built from the kernel's source: KERNEL_SRC, or Debian's linux-source package), wall, CPU, peak RSS, cost per row.
.PHONY: bench-rows
bench-rows: all bench-programs
	BENCH_BUILD=$(abspath $(BUILD)) bench/run-rows.sh

# pagemap top against procps top: CPU per frame with 100, 1,000 and 5,000 idle processes more, and the staleness
# of its rows (#35). Not in `make bench`: it starts thousands of processes.
.PHONY: bench-top
bench-top: all bench-programs
	BENCH_BUILD=$(abspath $(BUILD)) bench/run-top.sh
