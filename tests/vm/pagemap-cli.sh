#!/bin/sh
# pagemap-cli.sh - (QEMU guest, busybox sh) the pagemap CLI against what the booted kernel must give: features, maps and pages with soft-dirty, the scan back end or its clean refusal.
# Expectations come from uname -r and, for soft-dirty, from "sd" in VmFlags (as the kernel selftests
# check), never from the probe under test. Prints one PASS/FAIL/SKIP line per check.
pm=${PAGEMAP_BUILD:-/km/tests/build}/pagemap
runas=${PAGEMAP_RUNAS:-}

[ -x "$pm" ] || { echo "SKIP cli: $pm is not built (make vm-programs)"; exit 77; }
tmp=$(mktemp -d) || exit 1
sleeper=
cleanup() {
	[ -n "$sleeper" ] && kill "$sleeper" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

rel=$(uname -r)
maj=${rel%%.*}
min=${rel#*.}
min=${min%%[!0-9]*}
at_least() { [ "$maj" -gt "$1" ] || { [ "$maj" -eq "$1" ] && [ "$min" -ge "$2" ]; }; }
yn() { if "$@"; then echo yes; else echo no; fi; }
sd=$(yn grep -q '^VmFlags:.* sd' /proc/self/smaps)
scan=$(yn at_least 6 7)		# PAGEMAP_SCAN and UFFD_FEATURE_WP_ASYNC
guard=$(yn at_least 6 15)	# pagemap bit 58, PAGE_IS_GUARD
backends="pread auto"
[ "$scan" = yes ] && backends="pread scan auto"
echo "  kernel $rel: PAGEMAP_SCAN $scan, guard bit $guard, soft-dirty (smaps sd) $sd"

rc=0 bad=0
check() {	# check WHAT GOT WANT
	if [ "$2" != "$3" ]; then
		echo "  $1: got '$2', want '$3'"
		bad=$((bad + 1))
	fi
}
result() {	# result NAME: PASS, or FAIL if a check since the last result failed
	if [ "$bad" -eq 0 ]; then
		echo "PASS $1"
	else
		echo "FAIL $1"
		rc=1
	fi
	bad=0
}
# run FILE CMD...: stdout to FILE, stderr to FILE.err; the exit status.
run() {
	f=$1
	shift
	"$@" >"$f" 2>"$f.err"
	s=$?
	[ "$s" -eq 0 ] || sed 's/^/  stderr: /' "$f.err"
	return "$s"
}

# ---- features: each row as this kernel must have it
run "$tmp/feat" "$pm" features -r -n -o FEATURE,STATUS,DETAIL
check "features exit status" $? 0
status() { awk -v k="$1" '$1 == k { print $2 }' "$tmp/feat"; }
check pagemap "$(status pagemap)" yes
check layout "$(status layout)" current
check privileged "$(status privileged)" "$(yn [ "$(id -u)" -eq 0 ])"
check uffd-wp-bit "$(status uffd-wp-bit)" "$(yn at_least 5 13)"
check pagemap-scan "$(status pagemap-scan)" "$scan"
check soft-dirty "$(status soft-dirty)" "$sd"
check uffd-wp-async "$(status uffd-wp-async)" "$scan"
check guard-regions "$(status guard-regions)" "$guard"
# The categories: the eight of 6.7 (soft-dirty among them), guard from 6.15.
cats=$(awk '$1 == "pagemap-scan" { print $3 }' "$tmp/feat" | sed -n 's/.*categories:\\x20//p')
listed() { case ",$cats," in *",$1,"*) echo yes ;; *) echo no ;; esac; }
check "pagemap-scan lists soft-dirty" "$(listed soft-dirty)" "$scan"
check "pagemap-scan lists guard" "$(listed guard)" "$guard"
run "$tmp/export" "$pm" features --export
check "features --export exit status" $? 0
want=0x0
[ "$scan" = yes ] && want=0xff
[ "$guard" = yes ] && want=0x1ff
check scan_categories "$(sed -n 's/^scan_categories=//p' "$tmp/export")" "$want"
check "export soft_dirty" "$(sed -n 's/^soft_dirty=//p' "$tmp/export")" "$sd"
result cli:features

# ---- maps self: soft-dirty is a number where the kernel has it, and a fresh heap is soft-dirty whole
for b in $backends; do
	run "$tmp/maps" "$pm" --backend "$b" maps -r -n -b -o SIZE,PRESENT,SOFTDIRTY,PATH self
	check "maps self ($b) exit status" $? 0
	check "maps self ($b) has rows" "$(yn [ "$(wc -l <"$tmp/maps")" -ge 5 ])" yes
	check "maps self ($b) present bytes" "$(awk '{ p += $2 } END { print (p > 0 ? "some" : "none") }' "$tmp/maps")" some
	# [vvar] (VM_PFNMAP) and [vsyscall] cannot be read: "-" there, and only there.
	if [ "$sd" = yes ]; then
		check "maps self ($b) SOFTDIRTY a number" \
			"$(awk '$4 != "[vvar]" && $4 != "[vsyscall]" && $3 !~ /^[0-9]+$/ { print; exit }' "$tmp/maps")" ""
		check "maps self ($b) [heap] SOFTDIRTY = SIZE (VM_SOFTDIRTY)" \
			"$(awk '$4 == "[heap]" { print ($3 == $1 ? "whole" : $3 " of " $1) }' "$tmp/maps")" whole
	else
		check "maps self ($b) SOFTDIRTY unknown" "$(awk '$3 != "-" { print; exit }' "$tmp/maps")" ""
	fi
done
result cli:maps

# ---- pages self: the D letter is known (never '?') where the kernel has soft-dirty
for b in $backends; do
	run "$tmp/pages" "$pm" --backend "$b" pages -r -n -o FLAGS,PFN,PATH self
	check "pages self ($b) exit status" $? 0
	d=$(awk '{ c[substr($1, 5, 1)]++ } END { printf "%s", (c["?"] ? "?" : "") (c["D"] ? "D" : "") }' "$tmp/pages")
	check "pages self ($b) soft-dirty letters" "$d" "$([ "$sd" = yes ] && echo D || echo '?')"
	check "pages self ($b) PFNs shown" "$(awk '$1 ~ /^P/ && $2 == "hidden" { print; exit }' "$tmp/pages")" ""
done
result cli:pages

# ---- clear_refs 4 on an idle process: no page soft-dirty afterwards, through every back end
if [ "$sd" = yes ]; then
	sleep 1000 &
	sleeper=$!
	i=0
	while [ $i -lt 50 ] && [ "$(awk '{ print $3 }' "/proc/$sleeper/stat" 2>/dev/null)" != S ]; do
		sleep 0.1
		i=$((i + 1))
	done
	run "$tmp/before" "$pm" maps -r -n -b -o SOFTDIRTY "$sleeper"
	check "maps before clear_refs exit status" $? 0
	check "soft-dirty before clear_refs" "$(awk '$1 ~ /^[0-9]+$/ { s += $1 } END { print (s > 0 ? "some" : "none") }' "$tmp/before")" some
	s=0
	echo 4 >"/proc/$sleeper/clear_refs" || s=1
	check "clear_refs 4" "$s" 0
	cols=START,END,PRESENT,SWAPPED,FILE,EXCLUSIVE,THP,SOFTDIRTY,UFFDWP
	for b in $backends; do
		run "$tmp/after.$b" "$pm" --backend "$b" maps -r -n -b -o "$cols" "$sleeper"
		check "maps after clear_refs ($b) exit status" $? 0
		check "soft-dirty after clear_refs ($b)" \
			"$(awk '$8 ~ /^[0-9]+$/ { s += $8 } END { print s + 0 }' "$tmp/after.$b")" 0
		run "$tmp/pages.$b" "$pm" --backend "$b" pages -r -n -o FLAGS "$sleeper"
		check "pages after clear_refs ($b) exit status" $? 0
		check "pages after clear_refs ($b) D letters" "$(awk 'substr($1, 5, 1) != "-" { print; exit }' "$tmp/pages.$b")" ""
	done
	if [ "$scan" = yes ]; then
		check "maps pread = scan" "$(yn cmp -s "$tmp/after.pread" "$tmp/after.scan")" yes
		cmp -s "$tmp/after.pread" "$tmp/after.scan" || diff "$tmp/after.pread" "$tmp/after.scan" | sed 's/^/  /'
	fi
	kill "$sleeper"
	sleeper=
	result cli:soft-dirty-clear
else
	echo "SKIP cli:soft-dirty-clear: no \"sd\" in VmFlags: kernel without CONFIG_MEM_SOFT_DIRTY"
fi

# ---- --backend scan: works from 6.7, fails cleanly (exit 1, one line on stderr, nothing on stdout) before
"$pm" --backend scan maps self >"$tmp/scan" 2>"$tmp/scan.err"
s=$?
if [ "$scan" = yes ]; then
	check "--backend scan exit status" "$s" 0
	check "--backend scan errors" "$(grep -v '^pagemap: note: ' "$tmp/scan.err")" ""
else
	check "--backend scan exit status" "$s" 1
	check "--backend scan stdout" "$(wc -c <"$tmp/scan")" 0
	check "--backend scan stderr lines" "$(wc -l <"$tmp/scan.err")" 1
	check "--backend scan says why" "$(yn grep -q '^pagemap: .*PAGEMAP_SCAN needs Linux 6.7' "$tmp/scan.err")" yes
	sed 's/^/  stderr: /' "$tmp/scan.err"
fi
result cli:backend-scan

# ---- unprivileged: PFNs hidden, soft-dirty still known
if [ "$(id -u)" -eq 0 ] && [ -z "$runas" ]; then
	echo "SKIP cli:unprivileged: no PAGEMAP_RUNAS helper to drop root with"
else
	as_user=
	[ "$(id -u)" -eq 0 ] && as_user="$runas 65534"
	run "$tmp/ufeat" $as_user "$pm" features -r -n -o FEATURE,STATUS
	check "unprivileged features exit status" $? 0
	check "unprivileged privileged" "$(awk '$1 == "privileged" { print $2 }' "$tmp/ufeat")" no
	check "unprivileged pfn" "$(awk '$1 == "pfn" { print $2 }' "$tmp/ufeat")" hidden
	check "unprivileged soft-dirty" "$(awk '$1 == "soft-dirty" { print $2 }' "$tmp/ufeat")" "$sd"
	for b in $backends; do
		run "$tmp/upages" $as_user "$pm" --backend "$b" pages -r -n -o FLAGS,PFN self
		check "unprivileged pages ($b) exit status" $? 0
		check "unprivileged pages ($b) PFNs hidden" "$(awk '$1 ~ /^P/ && $2 != "hidden" { print; exit }' "$tmp/upages")" ""
		[ "$sd" = yes ] && check "unprivileged pages ($b) soft-dirty known" \
			"$(awk 'substr($1, 5, 1) == "?" { print; exit }' "$tmp/upages")" ""
	done
	result cli:unprivileged
fi
exit "$rc"
