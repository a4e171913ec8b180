# folders.mk - what each source folder may include: the dependency rules of docs/internals.md, made real.
# Each folder is compiled with -I for itself and the folders named here, and nothing else, so an #include
# that breaks a rule fails to build; tests/layout/check-layout.py checks the same rules on the #include
# lines and on the symbols each folder's objects call (a call through the public API counts too).
# Every folder may include <pagemap.h> (include/). Floors, lowest first: base, pages, analysis and
# inject, watch, snapshot, audit (it judges snapshot files too). No folder includes one above it.
LIB_FOLDERS       := base pages analysis inject watch snapshot audit
LIB_USES_base     := base
LIB_USES_pages    := base pages
LIB_USES_analysis := base pages analysis
LIB_USES_inject   := base pages inject
LIB_USES_watch    := base pages inject watch
LIB_USES_snapshot := base pages analysis snapshot
LIB_USES_audit    := base pages snapshot audit

# The CLI and the Python binding include <pagemap.h> and their own headers only, never lib/. In cli/, the
# commands (the root: main.c, cmd_*.c and their shared helpers) use every folder; the output layer is the
# floor the others stand on; pictures (render), the Prometheus code (export) and snapshot --freeze's holds
# (hold) use the output layer and the root's shared headers, not each other.
CLI_FOLDERS       := output render export hold
CLI_USES_root     := root output render export hold
CLI_USES_output   := root output
CLI_USES_render   := root output render
CLI_USES_export   := root output export
CLI_USES_hold     := root output hold

# A new folder: its name in LIB_FOLDERS (or CLI_FOLDERS) and a LIB_USES_<name> (CLI_USES_<name>) line
# naming itself and the folders below it; the Makefile and tests/layout/check-layout.py pick it up.
# A new dependency: the lower folder's name on the user's LIB_USES line, never the other way round
# (check-layout.py's floors rule fails on a circle; its lib-symbols rule on a call the line lacks).
