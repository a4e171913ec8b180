# tests/vm/vm.mk - the live tests and the CLI under other kernels (6.1, 6.12) in QEMU (included by the Makefile).
# make vm-programs    static live tests, the CLI, guest scripts into $(VM_BUILD)/vm-tests
# make vm-check       run them under both kernels; vm-check-6.1, vm-check-6.12 run one;
#                     vm-check-6.12-swap runs 6.12 with zram swap on throughout
# Needs ../shared/tools/kernel-matrix/run-in-vm.sh and QEMU (run-in-vm.sh --setup); make check never does.
#
# The guest build is a plain one in its own folder, whatever SANITIZE says: ASan cannot link
# statically, and the guests have no libraries but those the runner copies.

VM_BUILD        ?= build-vm
VM_DIR          := $(VM_BUILD)/vm-tests
VM_RUNNER       ?= ../shared/tools/kernel-matrix/run-in-vm.sh
# Limits: each test program, and each whole VM run (boot + every test); a hang costs at most this.
# A whole run takes ~70-200 s of VM time (3 s boot; test_watch is the longest program, up to ~150 s on
# one emulated CPU); both kernels hung would cost 2 x (420 + 10) s.
VM_TEST_TIMEOUT ?= 240
VM_TIMEOUT      ?= 420
# Guest page-table work is ~8x slower than the host's: smaller sizes where the tests allow.
VM_ENV          ?= -e PAGEMAP_TEST_BIG_MIB=64 -e PAGEMAP_TEST_SWAP_MIB=16 -e PAGEMAP_TEST_STRESS_ROUNDS=50 -e PAGEMAP_TEST_MANY_MAPS=6000
VM_ARGS          = -t $(VM_TIMEOUT) -T $(VM_TEST_TIMEOUT) -e PAGEMAP_BUILD=/km/tests/build \
		   -e PAGEMAP_RUNAS=/km/tests/build/runas $(VM_ENV)

.PHONY: vm-programs vm-check vm-check-6.1 vm-check-6.12 vm-check-6.12-swap

ifeq ($(VM_INNER),1)
ifndef LIVE_SRC
$(error tests/vm/vm.mk must be included after tests/tests.mk)
endif
# Here BUILD is $(VM_BUILD) and SANITIZE is off: the Makefile's rules make $(STLIB) and $(CLI_OBJ).
#   vm-tests/         what the runner runs: live tests without wrappers, tests/live/*.sh, tests/vm/*.sh
#   vm-tests/build/   PAGEMAP_BUILD in the guest: tests/live/*, pagemap, runas
VM_LIVE    := $(patsubst tests/live/%.c,$(VM_DIR)/build/tests/live/%,$(LIVE_SRC))
VM_LINKS   := $(patsubst tests/live/%.c,$(VM_DIR)/%,$(filter-out $(patsubst %,tests/live/%.c,$(notdir $(LIVE_WRAPPED))),$(LIVE_SRC)))
VM_LIVE_SH := $(patsubst tests/live/%,$(VM_DIR)/%,$(LIVE_SH))
VM_SH      := $(patsubst tests/vm/%,$(VM_DIR)/%,$(wildcard tests/vm/*.sh))
VM_TOP     := $(VM_LINKS) $(VM_LIVE_SH) $(VM_SH)

$(VM_DIR)/build/tests/live/%: tests/live/%.c tests/harness.h $(wildcard tests/live/lib/*.h) $(LIVE_LIB) $(STLIB)
	@mkdir -p $(@D)
	$(CC) $(BASEFLAGS) $(CFLAGS) -Itests -Itests/live/lib -static -o $@ $< $(LIVE_LIB) $(STLIB) $(LIB_LIBS) -lpthread

# The CLI takes libpagemap statically; libsmartcols (no static archive in Debian) and zstd come in
# through ldd. libsmartcols is linked here although the CLI opens it with dlopen (cli/output/scols_load.c),
# so that ldd lists it and the runner copies it into the guest. libmicrohttpd is dlopen()ed by serve
# alone and not copied: serve is not tested in guests.
# --wrap as in the Makefile: completion reads each command's getopt table.
$(VM_DIR)/build/pagemap: $(CLI_OBJ) $(STLIB)
	@mkdir -p $(@D)
	$(CC) -o $@ $(CLI_OBJ) $(STLIB) -Wl,--no-as-needed $(SMARTCOLS_LIBS) -Wl,--as-needed -ldl $(LIB_LIBS) -lpthread -Wl,--wrap=getopt_long

$(VM_DIR)/build/runas: tests/vm/runas.c
	@mkdir -p $(@D)
	$(CC) $(BASEFLAGS) $(CFLAGS) -static -o $@ $<

$(VM_LINKS): $(VM_DIR)/%: $(VM_DIR)/build/tests/live/%
	ln -sf build/tests/live/$* $@
$(VM_LIVE_SH): $(VM_DIR)/%: tests/live/%
	@mkdir -p $(@D)
	cp $< $@
$(VM_SH): $(VM_DIR)/%: tests/vm/%
	@mkdir -p $(@D)
	cp $< $@

vm-programs: $(VM_LIVE) $(VM_TOP) $(VM_DIR)/build/pagemap $(VM_DIR)/build/runas
	@for f in $(VM_DIR)/*; do \
		case " $(VM_TOP) " in *" $$f "*) ;; *) [ -d "$$f" ] || rm -f "$$f" ;; esac; \
	done
else
vm-programs:
	@$(MAKE) --no-print-directory BUILD=$(VM_BUILD) SANITIZE= VM_INNER=1 vm-programs

# 6.1 with transparent_hugepage=always said outright: Debian's default in a 1 GiB guest, kept whatever it becomes.
VM_ARGS_6.1      = -a transparent_hugepage=always
vm-check-6.1: vm-programs
	tests/vm/run "vm 6.1" $(VM_RUNNER) $(VM_ARGS_6.1) $(VM_ARGS) $(VM_DIR)
# 6.12 with two NUMA nodes, node 1 memory only (a tier, CXL-style): test_numa places pages on it.
VM_ARGS_6.12     = -N 2 -s 1
vm-check-6.12: vm-programs
	tests/vm/run "vm 6.12" $(VM_RUNNER) -S bookworm-backports $(VM_ARGS_6.12) $(VM_ARGS) $(VM_DIR)
# 6.12 with swap on (zram) for every test, as installed machines have it; tests/vm/0swap-on.sh turns it on.
vm-check-6.12-swap: vm-programs
	tests/vm/run "vm 6.12 swap" $(VM_RUNNER) -S bookworm-backports -M zram -e PAGEMAP_VM_SWAP_MIB=256 \
		$(VM_ARGS) $(VM_DIR)
# Both, even when the first fails.
vm-check: vm-programs
	@rc=0; \
	tests/vm/run "vm 6.1" $(VM_RUNNER) $(VM_ARGS_6.1) $(VM_ARGS) $(VM_DIR) || rc=1; \
	tests/vm/run "vm 6.12" $(VM_RUNNER) -S bookworm-backports $(VM_ARGS) $(VM_DIR) || rc=1; \
	exit $$rc
endif

clean: vm-clean
.PHONY: vm-clean
vm-clean:
	rm -rf $(VM_BUILD)
