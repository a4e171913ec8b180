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
LIB_USES_snapshot := base pages snapshot
LIB_USES_audit    := base pages audit
# LIB_CALLS_x: folders x calls through the public API only (no -I, no private header): the audit opens
# snapshot files with pm_snapshot_open_fd to judge what they hold.
LIB_CALLS_audit   := snapshot

# The CLI and the Python binding include <pagemap.h> and their own headers only, never lib/. In cli/, the
# floors are: base (cli.h: the command table's shape, messages and exit codes in common.c, output paths,
# the one sanitizer of names, textsafe.c); the output layer (tables, raw, JSON, and completion, which
# reads the same column tables); then pictures (render), the Prometheus code (export) and snapshot
# --freeze's holds (hold), and top's frames and screen (top), side by side; the commands at the root (main.c, cmd_*.c and their helpers)
# use them all.
CLI_FOLDERS       := base output render export hold top
CLI_USES_base     := base
CLI_USES_output   := base output
CLI_USES_render   := base output render
CLI_USES_export   := base output export
CLI_USES_hold     := base output hold
CLI_USES_top      := base output top
CLI_USES_root     := root base output render export hold top

# A new folder: its name in LIB_FOLDERS (or CLI_FOLDERS) and a LIB_USES_<name> (CLI_USES_<name>) line
# naming itself and the folders below it; the Makefile and tests/layout/check-layout.py pick it up.
# A new dependency: the lower folder's name on the user's LIB_USES line, never the other way round
# (check-layout.py's floors rule fails on a circle; its lib-symbols rule on a call the line lacks).
