#!/bin/bash
# run-cost-vm.sh - bench/run-cost.sh with the soft-dirty method, in the 6.1 and 6.12 guests of
# ../shared/tools/kernel-matrix/run-in-vm.sh (QEMU under TCG: this machine's 6.18 has no soft-dirty). The same
# driver runs in the guest, under a bash copied in with the tool (the guests have busybox alone; run-in-vm.sh
# copies the libraries of dynamic programs): per row, the writer untracked, tracking itself by the soft-dirty
# floors (sd-read: pagemap read + clear_refs 4 from a thread; sd-scan, 6.12 only: PAGEMAP_SCAN for
# PAGE_IS_SOFT_DIRTY + clear_refs 4), under `pagemap track -m soft-dirty`, and with --max-overhead, interleaved.
# BENCH_VM_KERNELS="6.1 6.12"  BENCH_VM_MEM=3072 (MiB)  BENCH_VM_SMP=2  BENCH_VM_TIMEOUT=1800 (s, per guest run)
# BENCH_VM_RUNNER=../shared/tools/kernel-matrix/run-in-vm.sh
# Everything run-cost.sh reads passes through, with defaults scaled to TCG (the guest runs ~8x slower; sizes that
# fit the guest): BENCH_COST_SIZES="1" BENCH_COST_HOT="0.1 1 10" BENCH_COST_INTERVALS="0.1 1" BENCH_COST_SECS=5
# BENCH_COST_LONG=40 BENCH_COST_SETTLE=15 BENCH_COST_REPS=1 BENCH_COST_PIN= (e.g. "0 1": the writer on vCPU 0, the
# tracker on vCPU 1); BENCH_COST_LOG=FILE gets the guests' per-second logs.
# HOTWRITER_FLUSH_MS=100: every writer, tracked or not, flushes its TLB this often (bench/hotwriter.c says why:
# QEMU's software TLB grows only at flushes, so an untracked writer would run on a 256-entry TLB); 0: never.
# Run it under `flock /tmp/bench.lock`: the guest's CPUs are this machine's.
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
build=${BENCH_BUILD:-$src/build}
runner=${BENCH_VM_RUNNER:-$src/../shared/tools/kernel-matrix/run-in-vm.sh}
for f in "$build/pagemap" "$build/bench/hotwriter" "$runner"; do
	[ -x "$f" ] || { echo "$(basename "$0"): $f is missing (make all bench-programs; run-in-vm.sh --setup)" >&2; exit 1; }
done
bash=$(command -v bash) || exit 1
tmp=$(mktemp -d /tmp/pm-bench-cost-vm.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT

# What the guest gets: the build's layout, the two scripts, bash.
stage=$tmp/stage
mkdir -p "$stage/build/bench" "$stage/bench" "$stage/bin"
cp "$build/pagemap" "$stage/build/" &&	# linked with the library's objects: it needs no libpagemap.so
	cp "$build/bench/hotwriter" "$stage/build/bench/" &&
	cp "$here/run-cost.sh" "$here/common.sh" "$stage/bench/" &&
	cp "$bash" "$stage/bin/bash" || exit 1
# The CLI opens libsmartcols with dlopen (cli/output/scols_load.c), for -J too: ldd does not list it, so the runner
# would not copy it; the guest finds this copy by LD_LIBRARY_PATH.
scols=$(ldconfig -p | awk '/libsmartcols\.so\.1 .*x86-64/ { print $NF; exit }')
if [ -z "$scols" ] || ! mkdir -p "$stage/build/lib" || ! cp -L "$scols" "$stage/build/lib/"; then
	echo "$(basename "$0"): libsmartcols.so.1 not found (Debian package libsmartcols1)" >&2
	exit 1
fi
rev=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -n "$(git -C "$src" status --porcelain -- lib cli include bench/hotwriter.c bench/run-cost.sh 2>/dev/null)" ] && rev="$rev+local changes"

envs=(-e "BENCH_TOOL=$rev" -e BENCH_COST_METHOD=soft-dirty -e BENCH_MEM_WAIT=0
      -e "BENCH_COST_SIZES=${BENCH_COST_SIZES:-1}" -e "BENCH_COST_HOT=${BENCH_COST_HOT:-0.1 1 10}"
      -e "BENCH_COST_INTERVALS=${BENCH_COST_INTERVALS:-0.1 1}" -e "BENCH_COST_SECS=${BENCH_COST_SECS:-5}"
      -e "BENCH_COST_LONG=${BENCH_COST_LONG:-40}" -e "BENCH_COST_SETTLE=${BENCH_COST_SETTLE:-15}"
      -e "BENCH_COST_REPS=${BENCH_COST_REPS:-1}" -e "BENCH_COST_MAXOVER=${BENCH_COST_MAXOVER:-10}"
      -e "HOTWRITER_FLUSH_MS=${HOTWRITER_FLUSH_MS:-100}" -e "BENCH_COST_PIN=${BENCH_COST_PIN:-}")
[ -n "${BENCH_COST_LOG:-}" ] && envs+=(-e BENCH_COST_LOG=/tmp/cost.log)
# The guest prints the log between markers after the table, for the host to keep (expanded in the guest).
# shellcheck disable=SC2016
cmd='export BENCH_BUILD=/km/tests/build LD_LIBRARY_PATH=/km/tests/build/lib; ./bin/bash bench/run-cost.sh; rc=$?
[ -n "${BENCH_COST_LOG:-}" ] && [ -f "$BENCH_COST_LOG" ] && { echo "@@cost-log-begin"; cat "$BENCH_COST_LOG"; echo "@@cost-log-end"; }
exit $rc'

rc=0
for k in ${BENCH_VM_KERNELS:-6.1 6.12}; do
	case $k in
	6.1) kargs=() floors="sd-read" ;;
	6.12) kargs=(-S bookworm-backports) floors="sd-read sd-scan" ;;
	*) echo "$(basename "$0"): unknown kernel $k (6.1 or 6.12)" >&2; exit 2 ;;
	esac
	echo "### guest $k: run-in-vm.sh ${kargs[*]} -m ${BENCH_VM_MEM:-3072} -s ${BENCH_VM_SMP:-2}; host load $(cut -d' ' -f1-3 /proc/loadavg)"
	"$runner" "${kargs[@]}" -m "${BENCH_VM_MEM:-3072}" -s "${BENCH_VM_SMP:-2}" -t "${BENCH_VM_TIMEOUT:-1800}" \
		"${envs[@]}" -e "BENCH_COST_FLOORS=${BENCH_COST_FLOORS:-$floors}" -c "$cmd" "$stage" >"$tmp/out" 2>&1
	r=$?
	if [ -n "${BENCH_COST_LOG:-}" ]; then
		{ echo "### guest $k"; sed -n '/@@cost-log-begin/,/@@cost-log-end/p' "$tmp/out" | sed '1d;$d'; } >>"$BENCH_COST_LOG"
	fi
	sed '/@@cost-log-begin/,/@@cost-log-end/d' "$tmp/out"
	echo "### guest $k: exit $r; host load $(cut -d' ' -f1-3 /proc/loadavg)"
	echo
	[ $r = 0 ] || rc=1
done
exit $rc
