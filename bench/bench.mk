# bench/bench.mk - `make bench`: `pagemap maps` against the kernel's raw pagemap read (included by the Makefile).
# BENCH_GIB=4   GiB the target touches     BENCH_RUNS=5   runs per command (median taken)
# The programs are standalone: they use neither the library nor the CLI's code.

BENCH_SRC := $(wildcard bench/*.c)
BENCH_BIN := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC))

$(BUILD)/bench/%: bench/%.c lib/compat.h
	@mkdir -p $(@D)
	$(CC) $(BASEFLAGS) $(CFLAGS) -o $@ $<

.PHONY: bench-programs
bench-programs: $(BENCH_BIN)

bench: all bench-programs
	BENCH_BUILD=$(abspath $(BUILD)) bench/run.sh
