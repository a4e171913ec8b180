#!/bin/bash
# guest.sh - (bench/vm-migrate) runs in the 6.1 guest: bench/hotwriter 1 GiB at 10 % under variants, per run its rate,
# its migrations between vCPUs and switches (/proc/PID/sched), the tracker's; MARK lines for host.sh. Not part of make bench.
# VARIANTS: U/T/T0/T1/floor (writer pinned to CPU 0; T0/T1 tracker pinned), Un/Tn/Ts/Tx/Fn (nothing pinned; Ts: PAGEMAP_TRACK_SLICES=1).
cd /km/tests
W=./build/bench/hotwriter; P=./build/pagemap
SECS=${SECS:-6} IV=${IV:-1}
export HOTWRITER_FLUSH_MS=${FLUSH:-100}
echo "nproc $(nproc) $(uname -r)"
mig() { awk '/nr_migrations/ {print $3}' /proc/$1/sched 2>/dev/null || echo 0; }
sw() { awk '/nr_switches/ {print $3}' /proc/$1/sched 2>/dev/null || echo 0; }
vol() { awk '/^voluntary_ctxt/ {v=$2} /^nonvoluntary_ctxt/ {n=$2} END {print v+0, n+0}' /proc/$1/status 2>/dev/null; }
cstat() { awk '{print $14+$15}' /proc/$1/stat 2>/dev/null || echo 0; }
run() { # label wpin tracker-cmd...
	local label=$1 wpin=$2; shift 2
	local wa=(); [ "$wpin" != - ] && wa=(taskset -c "$wpin")
	case $label in floor*) "${wa[@]}" $W 1 10 $SECS floor $IV sd-read > /tmp/w.out 2>&1 & ;;
	*) "${wa[@]}" $W 1 10 $SECS > /tmp/w.out 2>&1 & ;; esac
	local wpid=$!
	while ! grep -q ready /tmp/w.out; do sleep 0.1; done
	local tpid="" tid
	case $label in floor1) for tid in $(ls /proc/$wpid/task); do [ "$tid" != "$wpid" ] && taskset -pc 1 "$tid" >/dev/null; done ;; esac
	if [ $# -gt 0 ]; then
		local cmd="${*//PID/$wpid}"
		eval "exec $cmd" > /tmp/t.out 2>/tmp/t.err &
		tpid=$!
	fi
	sleep 2
	local t0=0; [ -n "$tpid" ] && t0=$(cstat $tpid)
	local c0=$(cstat $wpid) cs0=$(awk '/ctxt/{print $2}' /proc/stat) m0=$(mig $wpid) s0=$(sw $wpid) v0=$(vol $wpid) tm0=0; [ -n "$tpid" ] && tm0=$(mig $tpid)
	echo "MARK b $label up $(cut -d' ' -f1 /proc/uptime)"
	( for i in $(seq $SECS); do sleep 1; echo "P $(cut -d' ' -f1 /proc/uptime) w$(awk '{print $39}' /proc/$wpid/stat 2>/dev/null) t$([ -n "$tpid" ] && awk '{print $39}' /proc/$tpid/stat 2>/dev/null)"; done ) > /tmp/place &
	kill -USR1 $wpid
	sleep $SECS; sleep 0.2
	local m1=$(mig $wpid) s1=$(sw $wpid) v1=$(vol $wpid) tm1=0; [ -n "$tpid" ] && tm1=$(mig $tpid)
	wait $wpid
	echo "MARK e $label up $(cut -d' ' -f1 /proc/uptime)"
	local t1=0; [ -n "$tpid" ] && t1=$(cstat $tpid)
	local cs1=$(awk '/ctxt/{print $2}' /proc/stat)
	[ -n "$tpid" ] && { kill -INT $tpid 2>/dev/null; wait $tpid 2>/dev/null; }
	echo "RES $label rate $(awk '/^rate/{print $2}' /tmp/w.out) tracker_ticks $((t1-t0)) wmig $((m1-m0)) wsw $((s1-s0)) wvol/nonvol $v0 -> $v1 tmig $((tm1-tm0)) ctxt $((cs1-cs0)) $(grep ^floor /tmp/w.out) place: $(cut -d' ' -f3,4 /tmp/place | tr '\n' ' ') per_s: $(awk '/^at/{printf "%s ", $3-p; p=$3}' /tmp/w.out)"
}
statloop() { while :; do cat /proc/$1/stat >/dev/null; sleep 0.25; done; }
for round in $(seq ${ROUNDS:-2}); do
	for v in ${VARIANTS:-U T T1 F}; do
		case $v in
		U) run U 0 ;;
		Un) run Un - ;;
		T) run T 0 "$P track -m soft-dirty --max-overhead 0 PID $IV" ;;
		Tn) run Tn - "$P track -m soft-dirty --max-overhead 0 PID $IV" ;;
		Tb) run Tb - "./chrt -b 0 $P track -m soft-dirty --max-overhead 0 PID $IV" ;;
		Tx) run Tx - "env PAGEMAP_TRACK_SLICES=1 PAGEMAP_TRACK_SCHED=normal $P track -m soft-dirty --max-overhead 0 PID $IV" ;;
		Ts) run Ts - "env PAGEMAP_TRACK_SLICES=1 $P track -m soft-dirty --max-overhead 0 PID $IV" ;;
		T1) run T1 0 "taskset -c 1 $P track -m soft-dirty --max-overhead 0 PID $IV" ;;
		T0) run T0 0 "taskset -c 0 $P track -m soft-dirty --max-overhead 0 PID $IV" ;;
		F) run floor 0 ;;
		F1) run floor1 0 ;;  # writer on CPU 0, its floor thread moved to CPU 1  # floor thread inherits CPU 0
		Fn) run floorn - ;;
		Sn) run Sn - "statloop PID" ;;
		esac
	done
done
