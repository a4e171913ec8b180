# Makefile - libpagemap, the pagemap tool, tests, fuzzers, benchmarks.
# make            library (shared + static) and CLI in $(BUILD)
# make check      every test; ends with "N passed, N failed, N skipped"
# make demo       a demo process with a known layout, shown by features, maps, pages
# make python     the Python package (python/) into $(BUILD)/python/lib; make install-python: into the active venv
# make install    PREFIX=/usr/local DESTDIR=  (make uninstall with the same removes it)
# SANITIZE=1      build with ASan+UBSan (into build-asan unless BUILD is set)

VERSION    := 0.1.0
SOVERSION  := 0
PREFIX     ?= /usr/local
DESTDIR    ?=
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR     ?= $(PREFIX)/bin
MANDIR     ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
# Under PREFIX, as every other directory: bash-completion (2.2 and later) loads a command's completion on
# first use from .../share/bash-completion/completions under each of $XDG_DATA_DIRS (/usr/local/share and
# /usr/share by default) and under $XDG_DATA_HOME (~/.local/share), so PREFIX=/usr, /usr/local and ~/.local
# are all found, and a user's install never writes outside its PREFIX.
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions

ifeq ($(SANITIZE),1)
BUILD      ?= build-asan
SANFLAGS   := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
else
BUILD      ?= build
SANFLAGS   :=
endif

CC         ?= cc
CFLAGS     ?= -O2 -g
WARN       := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
BASEFLAGS  := -std=c11 -D_GNU_SOURCE $(WARN) $(SANFLAGS) -Iinclude
# -MMD: each object's header dependencies, so touching one header rebuilds what includes it.
DEPFLAGS   := -MMD -MP
SMARTCOLS_CFLAGS = $(shell pkg-config --cflags smartcols 2>/dev/null)
SMARTCOLS_LIBS   = $(shell pkg-config --libs smartcols 2>/dev/null || echo -lsmartcols)
# pagemap serve's HTTP server (Debian's libmicrohttpd-dev): its header here; the library itself is
# opened by serve alone at run time (cli/export/mhd_load.c), so no other command pays for loading it.
MHD_CFLAGS = $(shell pkg-config --cflags libmicrohttpd 2>/dev/null)
# What the library links: zstd for snapshots (xxhash is header-only). The static archive links it;
# the shared library opens it with dlopen on a program's first snapshot (lib/snapshot/zstd_load.c), so that
# programs which never touch a snapshot do not load it at every start (bench/run-tiny.sh).
LIB_LIBS         = -lzstd
SHLIB_LIBS       = -ldl

# The library's and the CLI's folders, and what each may include (folders.mk, docs/internals.md).
include folders.mk
LIB_SRC    := $(foreach d,$(LIB_FOLDERS),$(wildcard lib/$(d)/*.c))
LIB_PIC    := $(patsubst lib/%.c,$(BUILD)/lib/%.pic.o,$(LIB_SRC))
LIB_OBJ    := $(patsubst lib/%.c,$(BUILD)/lib/%.o,$(LIB_SRC))
CLI_SRC    := $(wildcard cli/*.c) $(foreach d,$(CLI_FOLDERS),$(wildcard cli/$(d)/*.c))
CLI_OBJ    := $(patsubst cli/%.c,$(BUILD)/cli/%.o,$(CLI_SRC))
# -I for every library folder (the tests and fuzzers see all of them; the library's own folders do not).
LIB_ALL_INC := $(addprefix -Ilib/,$(LIB_FOLDERS))
CLI_ALL_INC := -Icli $(addprefix -Icli/,$(CLI_FOLDERS))
# The -I flags of the folder a source file lives in: lib/FOLDER/x.c or cli/[FOLDER/]x.c.
lib_folder = $(word 2,$(subst /, ,$(1)))
lib_inc    = $(addprefix -Ilib/,$(LIB_USES_$(call lib_folder,$(1))))
cli_folder = $(if $(filter 2,$(words $(subst /, ,$(1)))),root,$(call lib_folder,$(1)))
cli_inc    = $(patsubst -Icli/root,-Icli,$(addprefix -Icli/,$(CLI_USES_$(call cli_folder,$(1)))))

SONAME     := libpagemap.so.$(SOVERSION)
SHLIB      := $(BUILD)/libpagemap.so.$(VERSION)
STLIB      := $(BUILD)/libpagemap.a
CLI        := $(BUILD)/pagemap

.PHONY: all deps test-deps check demo install uninstall clean fuzz bench
all: $(SHLIB) $(STLIB) $(CLI) $(BUILD)/pagemap.pc

$(BUILD)/lib/%.pic.o: lib/%.c
	@mkdir -p $(@D)
	$(CC) $(BASEFLAGS) $(DEPFLAGS) $(call lib_inc,$<) $(CFLAGS) -fPIC -fvisibility=hidden -DPMI_ZSTD_DLOPEN -c $< -o $@
$(BUILD)/lib/%.o: lib/%.c
	@mkdir -p $(@D)
	$(CC) $(BASEFLAGS) $(DEPFLAGS) $(call lib_inc,$<) $(CFLAGS) -fvisibility=hidden -c $< -o $@
$(BUILD)/cli/%.o: cli/%.c
	@mkdir -p $(@D)
	$(CC) $(BASEFLAGS) $(DEPFLAGS) $(call cli_inc,$<) $(GEN_INC) $(CFLAGS) $(SMARTCOLS_CFLAGS) \
		$(MHD_CFLAGS) -c $< -o $@
# Assets embedded at build time, as curl embeds its own: render's page script is
# cli/render/render_html.js, edited and linted as JavaScript; its bytes become the C string
# script[] in $(BUILD)/gen/render_html_js.h, which render_html.c includes. od is coreutils' (xxd
# is not in Debian's base); octal escapes keep every byte as it is (no trigraph, quote or
# backslash to mind). -MMD then lists the header, so editing the .js rebuilds render_html.o.
EMBED_HEAD = /* Generated from $< by the Makefile: its bytes as a C string. */
$(BUILD)/gen/render_html_js.h: cli/render/render_html.js
	@mkdir -p $(@D)
	{ echo '$(EMBED_HEAD)'; echo 'static const char script[] ='; \
	  od -An -v -to1 $< | sed -e 's/ \([0-7][0-7]*\)/\\\1/g' -e 's/^/\t"/' -e 's/$$/"/'; \
	  echo ';'; } >$@.tmp
	mv $@.tmp $@
$(BUILD)/cli/render/render_html.o: $(BUILD)/gen/render_html_js.h
$(BUILD)/cli/render/render_html.o: GEN_INC := -I$(BUILD)/gen
-include $(LIB_PIC:.o=.d) $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d)

$(SHLIB): $(LIB_PIC) lib/libpagemap.sym
	$(CC) $(SANFLAGS) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=lib/libpagemap.sym -o $@ $(LIB_PIC) $(SHLIB_LIBS)
	ln -sf libpagemap.so.$(VERSION) $(BUILD)/$(SONAME)
	ln -sf $(SONAME) $(BUILD)/libpagemap.so
$(STLIB): $(LIB_OBJ)
	rm -f $@ && ar rcs $@ $^

# The CLI is linked with the library's position-independent objects, not with libpagemap.so: one
# shared object fewer to find, map and relocate at every start costs a 4 ms command 0.3 ms (7 %;
# bench/run-tiny.sh, bench/README.md "The fixed cost of a command"). It still uses only the public
# API: tests/abi/check-abi.py fails on any library function the CLI's objects call that
# include/pagemap.h does not declare. The objects open libzstd with dlopen (lib/snapshot/zstd_load.c), as the
# shared library does. libsmartcols is opened with dlopen when a table needs it (cli/output/scols_load.c):
# most output is formatted without it. --wrap: completion reads each command's getopt_long table as it
# is passed (cli/output/complete.c).
$(CLI): $(CLI_OBJ) $(LIB_PIC)
	$(CC) $(SANFLAGS) -o $@ $(CLI_OBJ) $(LIB_PIC) $(SHLIB_LIBS) -lpthread -Wl,--wrap=getopt_long

PC_SED = sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|; s|@VERSION@|$(VERSION)|'
# Generated again by install, so PREFIX given there counts.
$(BUILD)/pagemap.pc: pagemap.pc.in | $(BUILD)
	$(PC_SED) $< > $@

$(BUILD):
	mkdir -p $@

# Missing Debian packages are installed when run as root (else named). DEBS: what building the library, the tool
# and the demo needs (make deps, make demo); TEST_DEBS: what the tests need beside it (make test-deps, make check):
# clang for the fuzz targets, strace, xmllint to validate render's SVGs, headless Chromium to open its HTML, tmux
# to drive top's terminal view, and
# what tests/tests.mk and python/python.mk add.
DEBS := pkg-config libsmartcols-dev libxxhash-dev libzstd-dev libmicrohttpd-dev libncurses-dev
TEST_DEBS := clang strace libxml2-utils chromium tmux
deps:
	@tools/install-deps $(DEBS)
test-deps:
	@tools/install-deps $(DEBS) $(TEST_DEBS)

# What install writes, by name, so that uninstall removes exactly it (same PREFIX, DESTDIR and *DIR).
# An alias page is a symbolic link in man/ (pagemap-serve.1 -> pagemap-export.1), so that man -l reads it
# from the clone; installed, it is a ".so man1/pagemap-export.1" line, as man-db resolves it under MANDIR.
MAN_PAGES  := $(wildcard man/*.1 man/*.3 man/*.5)
INST_FILES := $(INCLUDEDIR)/pagemap.h $(addprefix $(INCLUDEDIR)/pagemap/,$(notdir $(wildcard include/pagemap/*.h))) \
	$(addprefix $(LIBDIR)/,libpagemap.so.$(VERSION) $(SONAME) libpagemap.so libpagemap.a) \
	$(PKGCONFIGDIR)/pagemap.pc $(BINDIR)/pagemap $(BASHCOMPDIR)/pagemap \
	$(foreach f,$(MAN_PAGES),$(MANDIR)/man$(subst .,,$(suffix $(f)))/$(notdir $(f)))
# The loader finds a new libpagemap.so.0 in a directory it searches only once ldconfig has seen it: root's
# install into the system (DESTDIR empty) runs it. A LIBDIR the loader does not search (PREFIX=~/.local)
# is said in one line: such programs need LD_LIBRARY_PATH or an rpath (libpagemap(3), EXAMPLES).
LDCONFIG   ?= $(firstword $(wildcard /sbin/ldconfig /usr/sbin/ldconfig) ldconfig)
define ld_cache
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v $(LDCONFIG) >/dev/null; then \
		echo "$(LDCONFIG)"; $(LDCONFIG); fi
endef

install: all
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man5
	install -d $(DESTDIR)$(INCLUDEDIR)/pagemap
	install -m 644 include/pagemap.h $(DESTDIR)$(INCLUDEDIR)/
	install -m 644 include/pagemap/*.h $(DESTDIR)$(INCLUDEDIR)/pagemap/
	install -m 755 $(SHLIB) $(DESTDIR)$(LIBDIR)/
	ln -sf libpagemap.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libpagemap.so
	install -m 644 $(STLIB) $(DESTDIR)$(LIBDIR)/
	$(PC_SED) pagemap.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/pagemap.pc
	install -m 755 $(CLI) $(DESTDIR)$(BINDIR)/
	@for f in $(MAN_PAGES); do s=$${f##*.}; d=$(DESTDIR)$(MANDIR)/man$$s/$${f##*/}; \
		if [ -L "$$f" ]; then echo "echo .so man$$s/$$(readlink "$$f") > $$d"; rm -f "$$d"; \
			echo ".so man$$s/$$(readlink "$$f")" > "$$d" && chmod 644 "$$d" || exit 1; \
		else echo "install -m 644 $$f $$d"; install -m 644 "$$f" "$$d" || exit 1; fi; done
	install -d $(DESTDIR)$(BASHCOMPDIR)
	install -m 644 completion/pagemap.bash $(DESTDIR)$(BASHCOMPDIR)/pagemap
	$(ld_cache)
	@[ -n "$(DESTDIR)" ] || $(LDCONFIG) -p 2>/dev/null | grep -q -F '=> $(LIBDIR)/$(SONAME)' || \
		echo "note: the loader does not search $(LIBDIR): run programs linked with libpagemap with" \
		"LD_LIBRARY_PATH=$(LIBDIR), or link them with -Wl,-rpath,$(LIBDIR)"

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INST_FILES))
	rmdir $(DESTDIR)$(INCLUDEDIR)/pagemap 2>/dev/null || true
	$(ld_cache)

clean:
	rm -rf build build-asan build-fuzz

-include tests/tests.mk
-include tests/vm/vm.mk
-include tests/fuzz/fuzz.mk
-include bench/bench.mk
-include python/python.mk

# The demo: a process with a known layout, shown by features, maps and pages. Not code under test: built
# without sanitizers, whose terabytes of shadow mappings would be most of what the tests walk in it.
$(BUILD)/pagemap-demo: demo/pagemap-demo.c | $(BUILD)
	$(CC) $(filter-out $(SANFLAGS),$(BASEFLAGS)) $(CFLAGS) -o $@ $<
all: $(BUILD)/pagemap-demo
demo: deps
	$(MAKE) all
	@demo/run $(BUILD)
