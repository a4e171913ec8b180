#!/bin/bash
# host.sh STAGE OUT [run-in-vm.sh args] - (bench/vm-migrate) boots the guest with STAGE (build/, bench/hotwriter, bash, chrt; see
# bench/run-cost-vm.sh for the layout) running guest.sh, and samples the host CPU time of every QEMU thread every 0.5 s into
# OUT.host (the vCPU threads are the two busiest); corr.py OUT lines the two up (guest uptime against QEMU start + 1 s).
stage=$1 out=$2; shift 2
cp "$(dirname "$0")"/guest.sh $stage/
/work/shared/tools/kernel-matrix/run-in-vm.sh -m 3072 -s 2 -t 1500 "$@" -c './bin/bash guest.sh' $stage > $out 2>&1 &
rpid=$!
qpid=""
for i in $(seq 100); do
	sleep 0.2
	for p in $(pgrep -f '^qemu-system-x86_64'); do
		a=$p
		while [ -n "$a" ] && [ "$a" -gt 1 ]; do [ "$a" = "$rpid" ] && qpid=$p && break 2; a=$(awk '{print $4}' /proc/$a/stat 2>/dev/null); done
	done
	[ -n "$qpid" ] && break
done
echo "qpid $qpid start $(awk '{print $22}' /proc/$qpid/stat) boot_host $(date +%s.%N)" > $out.host
while kill -0 $rpid 2>/dev/null; do
	l="$(awk '{print $1}' /proc/uptime)"
	for t in /proc/$qpid/task/*; do
		l="$l ${t##*/}:$(awk '{print $14+$15}' $t/stat 2>/dev/null)"
	done
	echo "$l $(cut -d' ' -f1 /proc/loadavg)" >> $out.host
	sleep 0.5
done
wait $rpid
