/* fuzz_snapshot_extract.c - libFuzzer target: fuzz_snapshot's checks, then pm_snapshot_extract into a private tree (slow: disk). */
#define PM_FUZZ_NAME "fuzz_snapshot_extract"
#define FUZZ_SNAPSHOT_EXTRACT 1
#include "fuzz_snapshot.c"
