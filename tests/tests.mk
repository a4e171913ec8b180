# tests/tests.mk - test programs and the check target (included by the Makefile).
# tests/unit/*.c  pure decoders and parsers, linked against the library's objects (may use lib/base/base.h)
# tests/live/*.c  real kernel tests, linked against the shared library; tests/live/*.sh wrap those
#                 that change system state (swap, KSM) and restore it
# tests/cli/*.sh  golden CLI tests replayed through --root fixtures
# tests/abi/*     the public header, libpagemap.sym, the library's exports and the man SYNOPSIS agree
# tests/layout/*  lib/ and cli/ keep folders.mk's rules (includes, calls, floors), the size limits and pm_ names;
#                 self-test.sh shows the checker failing on a tree broken one rule at a time

UNIT_SRC  := $(wildcard tests/unit/*.c)
UNIT_BIN  := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%,$(UNIT_SRC))
LIVE_LIB  := $(wildcard tests/live/lib/*.c)
LIVE_SRC  := $(wildcard tests/live/*.c)
LIVE_BIN  := $(patsubst tests/live/%.c,$(BUILD)/tests/live/%,$(LIVE_SRC))
LIVE_SH   := $(wildcard tests/live/*.sh)
# These change system state or privileges: make check runs them only through their wrappers.
LIVE_WRAPPED := $(BUILD)/tests/live/test_swap $(BUILD)/tests/live/test_ksm $(BUILD)/tests/live/test_unpriv $(BUILD)/tests/live/test_hugetlb
CLI_SH    := $(wildcard tests/cli/*.sh)
ABI_CHECK := tests/abi/check-abi.py
LAYOUT_CHECK := tests/layout/check-layout.py tests/layout/self-test.sh
TEST_TOOLS_SRC := $(wildcard tests/tools/*.c)
TEST_TOOLS := $(patsubst tests/tools/%.c,$(BUILD)/tests/tools/%,$(TEST_TOOLS_SRC))

$(BUILD)/tests/unit/%: tests/unit/%.c tests/harness.h $(LIB_OBJ)
	@mkdir -p $(@D)
	$(CC) $(BASEFLAGS) $(CFLAGS) $(LIB_ALL_INC) $(CLI_ALL_INC) -Itests -o $@ $< $(LIB_OBJ) $(LIB_LIBS)
# test_serve_cache includes serve's scrape cache and connection guard (and the writer and fleet they use).
$(BUILD)/tests/unit/test_serve_cache: cli/export/serve_cache.c cli/export/serve_cache.h cli/export/serve_guard.c cli/export/serve_guard.h cli/export/metrics.c cli/export/export_fleet.c cli/base/textsafe.c cli/base/textsafe.h
# test_render includes the CLI's render model and recording reader (pure logic, no output layer).
$(BUILD)/tests/unit/test_render: cli/render/render_model.c cli/render/render_heat_parse.c cli/render/render.h cli/base/textsafe.c cli/base/textsafe.h
# test_fleet includes the CLI's exporter (cli/export/metrics.c, cli/export/export_fleet.c); test_textsafe the one output sanitizer.
$(BUILD)/tests/unit/test_fleet: cli/export/metrics.c cli/export/export_fleet.c cli/base/textsafe.c cli/base/textsafe.h
$(BUILD)/tests/unit/test_textsafe: cli/base/textsafe.c cli/base/textsafe.h
# test_termwrap includes the CLI's text wrapper for terminals (notes, track's headings, snapshot --list).
$(BUILD)/tests/unit/test_termwrap: cli/base/termwrap.c cli/base/cli.h
# test_out_rows includes the CLI's row formatter and checks it against libsmartcols' own output.
$(BUILD)/tests/unit/test_out_rows: tests/unit/test_out_rows.c tests/harness.h cli/output/out_rows.c cli/output/out_rows.h cli/output/out_human.c cli/output/out_human.h cli/output/output.h cli/base/textsafe.c cli/base/textsafe.h
	@mkdir -p $(@D)
	$(CC) $(BASEFLAGS) $(CFLAGS) $(SMARTCOLS_CFLAGS) $(CLI_ALL_INC) -Itests -o $@ $< $(SMARTCOLS_LIBS)
# test_out_human includes the one formatter of sizes and changes of size (out_human.c) and the digits it uses.
$(BUILD)/tests/unit/test_out_human: tests/unit/test_out_human.c tests/harness.h cli/output/out_human.c cli/output/out_human.h cli/output/out_rows.c cli/output/out_rows.h cli/output/output.h cli/base/textsafe.c
	@mkdir -p $(@D)
	$(CC) $(BASEFLAGS) $(CFLAGS) $(SMARTCOLS_CFLAGS) $(CLI_ALL_INC) -Itests -o $@ $<

# test_inject drives lib/inject/inject.c, which is internal: it links the library's objects, as unit tests do.
$(BUILD)/tests/live/test_inject: tests/live/test_inject.c tests/harness.h $(wildcard tests/live/lib/*.h) $(LIVE_LIB) $(LIB_OBJ)
	@mkdir -p $(@D)
	$(CC) $(BASEFLAGS) $(CFLAGS) -Itests -Itests/live/lib -o $@ $< $(LIVE_LIB) $(LIB_OBJ) $(LIB_LIBS) -lpthread

$(BUILD)/tests/live/%: tests/live/%.c tests/harness.h $(wildcard tests/live/lib/*.h) $(LIVE_LIB) $(SHLIB)
	@mkdir -p $(@D)
	$(CC) $(BASEFLAGS) $(CFLAGS) -Itests -Itests/live/lib -o $@ $< $(LIVE_LIB) -L$(BUILD) -lpagemap -lpthread -Wl,-rpath,'$$ORIGIN/../..'

$(BUILD)/tests/tools/%: tests/tools/%.c $(wildcard tests/tools/*.h) $(SHLIB)
	@mkdir -p $(@D)
	$(CC) $(BASEFLAGS) $(CFLAGS) -o $@ $< -L$(BUILD) -lpagemap -Wl,-rpath,'$$ORIGIN/../..'

# The exporter tests' workload of known size is not code under test: built without sanitizers, whose runtime
# (shadow memory, allocator) would add megabytes to the sizes it is checked against.
$(BUILD)/tests/tools/pm-fleet-load: tests/tools/pm-fleet-load.c
	@mkdir -p $(@D)
	$(CC) $(filter-out $(SANFLAGS),$(BASEFLAGS)) $(CFLAGS) -o $@ $<

.PHONY: test-programs
test-programs: all $(UNIT_BIN) $(LIVE_BIN) $(TEST_TOOLS)

# Scripts find the build through these.
export PAGEMAP_BUILD = $(abspath $(BUILD))
export PAGEMAP_SRC = $(abspath .)

# The golden CLI tests check JSON output with python3.
TEST_DEBS += python3
# tests/cli/man-pages.sh renders every page with man -l and groff (man-db brings groff-base).
TEST_DEBS += man-db
# tests/live/doc_examples.sh runs the man pages' examples, some of which pipe JSON into jq.
TEST_DEBS += jq

check: test-deps
	$(MAKE) test-programs fuzz-replay-programs
	@echo "NOTE: make check tests the running kernel only; Linux 6.1 and 6.12 are tested by 'make vm-check' (QEMU; .ci/run does both)"
	@command -v qemu-system-x86_64 >/dev/null || echo "WARNING: no qemu-system-x86_64 here: the 6.1 and 6.12 kernels are NOT tested on this machine"
	@[ -n "$(SANFLAGS)$(FUZZ_SANFLAGS)" ] || echo "WARNING: $(CC) cannot link ASan/UBSan here (no libasan?): the fuzz corpus replays without sanitizers"
	tests/run $(UNIT_BIN) $(filter-out $(LIVE_WRAPPED),$(LIVE_BIN)) $(LIVE_SH) $(CLI_SH) $(ABI_CHECK) $(LAYOUT_CHECK) tests/fuzz/replay.sh python/run-tests

# The fuzz corpus replay runs under ASan+UBSan where $(CC) can link them; where it cannot (no libasan, or a
# compiler without its sanitizer runtimes) it still runs, plain, and says so, rather than failing to build.
# (tests/fuzz/fuzz.mk's own assignment gives way to this override.)
FUZZ_CAN_SANITIZE = $(shell printf 'int main(void) { return 0; }\n' | \
	$(CC) -fsanitize=address,undefined -x c - -o /dev/null >/dev/null 2>&1 && echo yes)
FUZZ_SANFLAGS_WANTED := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
override FUZZ_SANFLAGS = $(if $(FUZZ_CAN_SANITIZE),$(FUZZ_SANFLAGS_WANTED))

# check-live: the live kernel tests only (no unit, CLI golden or fuzz replay: nothing of theirs depends on the
# machine's state). .ci/run runs it once more with a swap file on and THP never. Left out of it: the
# tests of what a user runs and reads (the README's commands, install, a venv, the documented examples, what a
# terminal shows), whose answers no swap or THP mode changes; make check runs them once.
LIVE_SH_ONCE := $(addprefix tests/live/,demo.sh install.sh python_venv.sh doc_examples.sh cols80.sh cols80_more.sh)
.PHONY: check-live
check-live: test-programs
	tests/run $(filter-out $(LIVE_WRAPPED),$(LIVE_BIN)) $(filter-out $(LIVE_SH_ONCE),$(LIVE_SH))
