# tests/fuzz/fuzz.mk - libFuzzer targets and their replay over the committed corpora (included by the Makefile).
# make fuzz           libFuzzer binaries in build-fuzz/ (clang; the library's sources are linked in directly,
#                     with small batch buffers: cheaper runs under ASan, more batch boundaries crossed)
# make fuzz-run       run each for FUZZ_SECONDS (default 30) on a copy of its corpus; crashes land in build-fuzz/artifacts/
#                     (ASan's quarantine at 16 MiB unless ASAN_OPTIONS says otherwise: with the default 256 MiB
#                     every allocation of an input lands on fresh pages, and the snapshot targets ran at half speed)
# make fuzz-replay    build the targets with a plain main() ($(CC), sanitizers on) and run them over tests/fuzz/corpus/*;
#                     prints "PASS fuzz_NAME-replay" or "FAIL fuzz_NAME-replay" per target

FUZZ_DIR      := build-fuzz
FUZZ_CC       ?= clang
FUZZ_SECONDS  ?= 30
FUZZ_TARGETS  := $(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN      := $(addprefix $(FUZZ_DIR)/,$(FUZZ_TARGETS))
FUZZ_REPLAY   := $(addprefix $(FUZZ_DIR)/replay/,$(FUZZ_TARGETS))
FUZZ_DEPS     := tests/fuzz/replay_main.h $(LIB_SRC) $(wildcard lib/*/*.h) include/pagemap.h $(wildcard include/pagemap/*.h)
# The replay build always runs under ASan+UBSan (the same flags as SANITIZE=1).
FUZZ_SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
FUZZ_SMALL    := -DBATCH_PAGES=4096u -DBUF_FIRST=512u -DKPAGE_BATCH=4096 -DSHARE_BATCH=1024 -DSHARE_MEM_RECS=64 -DACCOUNT_BATCH=1024
# FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION: lib/snapshot/snapshot_open*.c read past checksum
# mismatches (a fuzzer cannot forge them).
FUZZ_FLAGS    := $(FUZZ_SMALL) -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION -std=c11 -D_GNU_SOURCE $(WARN) -g -O1 -fsanitize=fuzzer,address,undefined \
                 -fno-omit-frame-pointer -fno-sanitize-recover=all -Iinclude $(LIB_ALL_INC) $(CLI_ALL_INC) -Itests/fuzz

.PHONY: fuzz fuzz-run fuzz-replay fuzz-replay-programs
fuzz: $(FUZZ_BIN)
fuzz-replay-programs: $(FUZZ_REPLAY)

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_DEPS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $< $(FUZZ_EXTRA) $(LIB_SRC) $(LIB_LIBS)

# The replay builds link the library's objects, compiled once: with SANITIZE=1 the build's own (the same
# flags), else a sanitized set of their own. (Each target compiling every library source took about 600
# compiles under ASan, minutes of CI on two cores.)
REPLAY_OBJ_DIR := $(FUZZ_DIR)/replay/obj
REPLAY_LIB_OBJ  = $(if $(SANFLAGS),$(LIB_OBJ),$(patsubst lib/%.c,$(REPLAY_OBJ_DIR)/%.o,$(LIB_SRC)))
.PRECIOUS: $(REPLAY_OBJ_DIR)/%.o
$(REPLAY_OBJ_DIR)/%.o: lib/%.c $(wildcard lib/*/*.h) include/pagemap.h $(wildcard include/pagemap/*.h)
	@mkdir -p $(@D)
	$(CC) $(BASEFLAGS) $(call lib_inc,$<) $(FUZZ_SANFLAGS) $(CFLAGS) -fvisibility=hidden -c $< -o $@

$(FUZZ_DIR)/replay/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/replay_main.h $(REPLAY_LIB_OBJ)
	@mkdir -p $(@D)
	$(CC) $(BASEFLAGS) $(if $(SANFLAGS),,$(FUZZ_SANFLAGS)) $(CFLAGS) -DPM_FUZZ_REPLAY $(LIB_ALL_INC) $(CLI_ALL_INC) -Itests/fuzz \
		-o $@ $< $(FUZZ_EXTRA) $(REPLAY_LIB_OBJ) $(LIB_LIBS)

# The corpus of fuzz_NAME is tests/fuzz/corpus/NAME; tests/fuzz/NAME.dict is used when present.
# Lines are short: maps inputs stop at 512 bytes (whole files replay through fuzz-replay).
fuzz-run: fuzz
	@mkdir -p $(FUZZ_DIR)/artifacts
	@fail=0; for t in $(FUZZ_TARGETS); do \
		n=$${t#fuzz_}; c=$(FUZZ_DIR)/corpus/$$n; mkdir -p $$c; cp -n tests/fuzz/corpus/$$n/* $$c/ 2>/dev/null || true; \
		d=; [ -f tests/fuzz/$$n.dict ] && d=-dict=tests/fuzz/$$n.dict; \
		case $$n in maps) o=-max_len=512;; smaps) o=-max_len=4096;; snapshot|snapshot_extract) o="-max_len=16384";; unscramble) o="-max_len=65536";; entry) o=-max_len=9;; heat) o=-max_len=8192;; tree) o="-max_len=16384 -timeout=10";; textsafe) o=-max_len=1024;; *) o=;; esac; \
		echo "== $$t for $(FUZZ_SECONDS)s"; \
		ASAN_OPTIONS=$${ASAN_OPTIONS:-quarantine_size_mb=16} TMPDIR=$${TMPDIR:-/dev/shm} \
		$(FUZZ_DIR)/$$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
			-artifact_prefix=$(FUZZ_DIR)/artifacts/$$t- $$o $$d $$c || fail=1; \
	done; exit $$fail

fuzz-replay: $(FUZZ_REPLAY)
	@fail=0; for t in $(FUZZ_TARGETS); do \
		$(FUZZ_DIR)/replay/$$t tests/fuzz/corpus/$${t#fuzz_}; rc=$$?; \
		[ $$rc -eq 0 ] || fail=1; [ $$rc -eq 0 ] || [ $$rc -eq 2 ] || echo "FAIL $$t-replay"; \
	done; exit $$fail

# fuzz_heat reads recordings with the CLI's reader and draws them with its heat map code.
HEAT_SRC := cli/render/render_heat_parse.c cli/render/render_heat.c cli/render/render_model.c cli/base/textsafe.c \
	cli/output/out_human.c
$(FUZZ_DIR)/fuzz_heat $(FUZZ_DIR)/replay/fuzz_heat: FUZZ_EXTRA := $(HEAT_SRC)
$(FUZZ_DIR)/fuzz_heat $(FUZZ_DIR)/replay/fuzz_heat: $(HEAT_SRC) cli/render/render.h

# fuzz_textsafe checks the CLI's one output sanitizer (every format) on any bytes.
$(FUZZ_DIR)/fuzz_textsafe $(FUZZ_DIR)/replay/fuzz_textsafe: FUZZ_EXTRA := cli/base/textsafe.c
$(FUZZ_DIR)/fuzz_textsafe $(FUZZ_DIR)/replay/fuzz_textsafe: cli/base/textsafe.c cli/base/textsafe.h

# fuzz_snapshot_extract is fuzz_snapshot.c built with extraction on (tests/fuzz/corpus/snapshot_extract links to its corpus).
$(FUZZ_DIR)/fuzz_snapshot_extract $(FUZZ_DIR)/replay/fuzz_snapshot_extract: tests/fuzz/fuzz_snapshot.c

# The unit tests include tests/unit/replay.h; tests/tests.mk lists only harness.h.
$(UNIT_BIN): $(wildcard tests/unit/*.h)
