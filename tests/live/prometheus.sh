#!/bin/sh
# prometheus.sh - the real thing: Prometheus scrapes `pagemap serve` every second, and node_exporter's textfile
# collector serves what `pagemap export --textfile` wrote; a static workload of known private, shared and
# huge-page bytes must come back through Prometheus's HTTP API with those values.
# Needs Debian's prometheus and prometheus-node-exporter (.ci/run installs them); skips without them.
src=${PAGEMAP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PAGEMAP_BUILD:-$src/build}
pagemap="$build/pagemap"
load="$build/tests/tools/pm-fleet-load"
skip() { echo "SKIP prometheus: $*"; exit 77; }
for b in prometheus prometheus-node-exporter curl python3; do
	command -v "$b" >/dev/null || skip "$b is not installed (apt-get install prometheus prometheus-node-exporter curl)"
done
[ -x "$pagemap" ] && [ -x "$load" ] || skip "pagemap or pm-fleet-load is not built (make test-programs)"

tmp=$(mktemp -d) || exit 1
pids=
# Every server and the workload stop on every exit path.
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	for p in $pids; do wait "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }
freeport() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_http() {	# wait_http URL: up to 30 s
	for _ in $(seq 150); do curl -sf -o /dev/null "$1" && return 0; sleep 0.2; done
	return 1
}

MIB=1048576
thp=0
grep -q '\[never\]' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || thp=1
"$load" 8 4 "$thp" >"$tmp/ready" &
pids="$pids $!"
for _ in $(seq 50); do [ -s "$tmp/ready" ] && break; sleep 0.1; done
read -r _ wpid _ <"$tmp/ready" || { fail prometheus-workload "pm-fleet-load did not start"; exit 1; }
thp_bytes=$(awk '/^AnonHugePages:/ { print $2 * 1024 }' "/proc/$wpid/smaps_rollup")
printf 'fleetwork pmfleetwork\nfleetpeer pmfleetpeer\n' >"$tmp/rules"

sport=$(freeport) nport=$(freeport) pport=$(freeport)
"$pagemap" serve --listen "127.0.0.1:$sport" --group-by rules --rules "$tmp/rules" --pss-interval 1 2>"$tmp/serve.err" &
pids="$pids $!"
mkdir "$tmp/textfile" "$tmp/data"
"$pagemap" export --group-by rules --rules "$tmp/rules" --pss --textfile "$tmp/textfile" ||
	fail prometheus-textfile "pagemap export --textfile failed"
prometheus-node-exporter --web.listen-address="127.0.0.1:$nport" --collector.disable-defaults --collector.textfile \
	--collector.textfile.directory="$tmp/textfile" >"$tmp/node.log" 2>&1 &
pids="$pids $!"
cat >"$tmp/prometheus.yml" <<EOC
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: pagemap
    static_configs: [ { targets: ['127.0.0.1:$sport'] } ]
  - job_name: node
    static_configs: [ { targets: ['127.0.0.1:$nport'] } ]
EOC
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/data" \
	--web.listen-address="127.0.0.1:$pport" >"$tmp/prom.log" 2>&1 &
pids="$pids $!"
api=http://127.0.0.1:$pport/api/v1
wait_http "$api/status/buildinfo" || { fail prometheus-start "$(tail -n 5 "$tmp/prom.log")"; exit 1; }

# query EXPR: the value of the single series EXPR returns, or "none".
query() {
	curl -s --data-urlencode "query=$1" "$api/query" | python3 -c '
import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if len(r) == 1 else "none")'
}
# Two scrapes of each job, and the slow tier there too.
for _ in $(seq 60); do
	a=$(query 'count_over_time(up{job="pagemap"}[1m]) >= 2 and up{job="pagemap"} == 1')
	b=$(query 'count_over_time(up{job="node"}[1m]) >= 2 and up{job="node"} == 1')
	c=$(query 'pagemap_group_pss_bytes{job="pagemap",group="fleetwork"}')
	[ "$a" != none ] && [ "$b" != none ] && [ "$c" != none ] && break
	sleep 0.5
done
if [ "$a" != none ]; then pass prometheus-two-scrapes-serve; else fail prometheus-two-scrapes-serve "$(tail -n 3 "$tmp/prom.log")"; fi
if [ "$b" != none ]; then pass prometheus-two-scrapes-node; else fail prometheus-two-scrapes-node "$(tail -n 3 "$tmp/node.log")"; fi

# between NAME EXPR LOW HIGH: the series' value lies in [LOW, HIGH].
between() {
	v=$(query "$2")
	if python3 -c "import sys; v = float('$v'); sys.exit(not ($3 <= v <= $4))" 2>/dev/null; then pass "$1"
	else fail "$1" "$2 = $v, want [$3, $4]"; fi
}
priv=$((8 * MIB)) shared=$((4 * MIB))
for job in pagemap node; do
	sel="job=\"$job\",group=\"fleetwork\""
	# Private: the 8 MiB and the THP, plus what libc and the stack take (under 2 MiB).
	between "prometheus-$job-anon" "pagemap_group_rss_bytes{$sel,kind=\"anon\"}" $((priv + thp_bytes)) $((priv + thp_bytes + 2 * MIB))
	between "prometheus-$job-shmem" "pagemap_group_rss_bytes{$sel,kind=\"shmem\"}" $shared $shared
	between "prometheus-$job-peer-shmem" "pagemap_group_rss_bytes{job=\"$job\",group=\"fleetpeer\",kind=\"shmem\"}" $shared $shared
	# The shared pages are mapped twice: not unique.
	between "prometheus-$job-uss" "pagemap_group_uss_bytes{$sel}" $((priv + thp_bytes)) $((priv + thp_bytes + 2 * MIB))
	between "prometheus-$job-thp" "pagemap_group_huge_bytes{$sel,kind=\"thp\"}" "$thp_bytes" "$thp_bytes"
	between "prometheus-$job-processes" "pagemap_group_processes{$sel}" 1 1
	between "prometheus-$job-swap" "pagemap_group_swap_bytes{$sel}" 0 0
	# PSS: private whole, the shared 4 MiB half, libc's file pages a share of their size (under 2 MiB).
	between "prometheus-$job-pss" "pagemap_group_pss_bytes{$sel}" $((priv + thp_bytes + shared / 2)) \
		$((priv + thp_bytes + shared / 2 + 4 * MIB))
done
between prometheus-serve-pss-age 'pagemap_pss_age_seconds{job="pagemap"}' 0 10
between prometheus-serve-duration 'pagemap_scrape_duration_seconds{job="pagemap"}' 0 1
