#!/bin/sh
# prometheus.sh - the real thing: Prometheus scrapes `pagemap serve` every 3 s, and node_exporter's textfile
# collector serves what `pagemap export --textfile` wrote; a static workload of known private, shared and
# huge-page bytes must come back through Prometheus's HTTP API with those values. A third target groups by
# comm while processes named with bytes that are not UTF-8, quotes, backslashes and ESC run
# (tests/live/hostile_names.py): it must stay up, and their samples must be stored under the documented names.
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
	exec 3>&- 2>/dev/null	# the hostile-named processes end when their stdin closes
	for p in $pids; do kill "$p" 2>/dev/null; done
	for p in $pids; do wait "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }
wait_http() {	# wait_http URL: up to 30 s
	for _ in $(seq 150); do curl -sf -o /dev/null "$1" && return 0; sleep 0.2; done
	return 1
}

thp=0
grep -q '\[never\]' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || thp=1
"$load" 8 4 "$thp" >"$tmp/ready" &
pids="$pids $!"
for _ in $(seq 50); do [ -s "$tmp/ready" ] && break; sleep 0.1; done
read -r _ wpid _ <"$tmp/ready" || { fail prometheus-workload "pm-fleet-load did not start"; exit 1; }
thp_bytes=$(awk '/^AnonHugePages:/ { print $2 * 1024 }' "/proc/$wpid/smaps_rollup")
printf 'fleetwork pmfleetwork\nfleetpeer pmfleetpeer\n' >"$tmp/rules"
mkfifo "$tmp/hold" && mkdir "$tmp/hostile"
python3 "$src/tests/live/hostile_names.py" "$tmp/hostile" <"$tmp/hold" >"$tmp/hostile.pids" 2>"$tmp/hostile.err" &
pids="$pids $!"
exec 3>"$tmp/hold"
for _ in $(seq 100); do grep -q '^ready$' "$tmp/hostile.pids" && break; sleep 0.1; done
grep -q '^ready$' "$tmp/hostile.pids" || fail prometheus-hostile-start "$(cat "$tmp/hostile.err")"

# Four free loopback ports, distinct: all bound at once, then released for the servers.
read -r sport nport pport hport <<EOP
$(python3 -c 'import socket
s = [socket.socket() for _ in range(4)]
for x in s: x.bind(("127.0.0.1", 0))
print(*(x.getsockname()[1] for x in s))')
EOP
serve_start=$(date +%s)
"$pagemap" serve --listen "127.0.0.1:$sport" --group-by rules --rules "$tmp/rules" --pss-interval 1 2>"$tmp/serve.err" &
pids="$pids $!"
"$pagemap" serve --listen "127.0.0.1:$hport" --group-by comm 2>"$tmp/serve-hostile.err" &
pids="$pids $!"
mkdir "$tmp/textfile" "$tmp/data"
"$pagemap" export --group-by rules --rules "$tmp/rules" --pss --textfile "$tmp/textfile" ||
	fail prometheus-textfile "pagemap export --textfile failed"
prometheus-node-exporter --web.listen-address="127.0.0.1:$nport" --collector.disable-defaults --collector.textfile \
	--collector.textfile.directory="$tmp/textfile" >"$tmp/node.log" 2>&1 &
pids="$pids $!"
# A scrape slower than its timeout reads as "down" (seen once on a loaded machine at 1 s): 5 s each (an ASan build
# under load took 2 s; one with THP never, in a CI dry run, 3.8 s).
cat >"$tmp/prometheus.yml" <<EOC
global:
  scrape_interval: 5s
  scrape_timeout: 5s
scrape_configs:
  - job_name: pagemap
    static_configs: [ { targets: ['127.0.0.1:$sport'] } ]
  - job_name: node
    static_configs: [ { targets: ['127.0.0.1:$nport'] } ]
  - job_name: hostile
    static_configs: [ { targets: ['127.0.0.1:$hport'] } ]
EOC
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/data" \
	--web.listen-address="127.0.0.1:$pport" >"$tmp/prom.log" 2>&1 &
pids="$pids $!"
api=http://127.0.0.1:$pport/api/v1
wait_http "$api/status/buildinfo" || { fail prometheus-start "$(tail -n 5 "$tmp/prom.log")"; exit 1; }

# One python3 for every query (the interpreter's start is slow on some machines): wait for two scrapes of each
# job and the slow tier, then check each "NAME|EXPR|LOW|HIGH" line: the single series' value lies in [LOW, HIGH].
MIB=1048576 priv=$((8 * MIB)) shared=$((4 * MIB))
{
	for job in pagemap node; do
		sel="job=\"$job\",group=\"fleetwork\""
		# Private: the 8 MiB and the THP, plus what libc and the stack take (under 2 MiB).
		echo "prometheus-$job-anon|pagemap_group_rss_bytes{$sel,kind=\"anon\"}|$((priv + thp_bytes))|$((priv + thp_bytes + 2 * MIB))"
		echo "prometheus-$job-shmem|pagemap_group_rss_bytes{$sel,kind=\"shmem\"}|$shared|$shared"
		echo "prometheus-$job-peer-shmem|pagemap_group_rss_bytes{job=\"$job\",group=\"fleetpeer\",kind=\"shmem\"}|$shared|$shared"
		# The shared pages are mapped twice: not unique.
		echo "prometheus-$job-uss|pagemap_group_uss_bytes{$sel}|$((priv + thp_bytes))|$((priv + thp_bytes + 2 * MIB))"
		echo "prometheus-$job-thp|pagemap_group_huge_bytes{$sel,kind=\"thp\"}|$thp_bytes|$thp_bytes"
		echo "prometheus-$job-processes|pagemap_group_processes{$sel}|1|1"
		echo "prometheus-$job-swap|pagemap_group_swap_bytes{$sel}|0|0"
		# PSS: private whole, the shared 4 MiB half, libc's file pages a share of their size (under 4 MiB).
		echo "prometheus-$job-pss|pagemap_group_pss_bytes{$sel}|$((priv + thp_bytes + shared / 2))|$((priv + thp_bytes + shared / 2 + 4 * MIB))"
	done
	# Root only (frames visible): the 4 MiB the two groups share, plus the libc, loader and program pages they share.
	if [ "$(id -u)" = 0 ]; then
		echo "prometheus-xshared-work|pagemap_group_shared_other_groups_bytes{job=\"pagemap\",group=\"fleetwork\"}|$shared|$((shared + 4 * MIB))"
		echo "prometheus-xshared-peer|pagemap_group_shared_other_groups_bytes{job=\"node\",group=\"fleetpeer\"}|$shared|$((shared + 4 * MIB))"
	fi
	# Names as docs/ say: bytes that are not UTF-8 and control bytes as the text \xHH, a backslash that
	# would read as one as \x5c (PromQL strings take \\ for one backslash; printf, as echo would decode them).
	# At least the one process each (others of the machine may share a name: only stored samples count here).
	printf '%s\n' 'prometheus-hostile-ff|pagemap_group_processes{job="hostile",group="\\xff"}|1|1000'
	printf '%s\n' 'prometheus-hostile-esc|pagemap_group_processes{job="hostile",group="esc\\x1b[2J\\x1b[31m"}|1|1000'
	printf '%s\n' 'prometheus-hostile-quote|pagemap_group_processes{job="hostile",group="q\"uote\\bs"}|1|1000'
	printf '%s\n' 'prometheus-hostile-newline|pagemap_group_processes{job="hostile",group="nl\nx\\x09y"}|1|1000'
	printf '%s\n' 'prometheus-hostile-looks-escaped|pagemap_group_processes{job="hostile",group="\\x5cxff\\x5cx5c\u00e9"}|1|1000'
	# Not a speed test (bench/run-fleet.sh measures that): a scrape must end within Prometheus's timeout.
	echo 'prometheus-serve-duration|pagemap_scrape_duration_seconds{job="pagemap"}|0|5'
} >"$tmp/checks"
python3 - "$api" "$tmp/checks" "$serve_start" >"$tmp/results" <<'PY'
import json, sys, time, urllib.parse, urllib.request
api, checks, serve_start = sys.argv[1], sys.argv[2], float(sys.argv[3])

def query(expr):
    url = api + "/query?" + urllib.parse.urlencode({"query": expr})
    r = json.load(urllib.request.urlopen(url, timeout=10))["data"]["result"]
    return float(r[0]["value"][1]) if len(r) == 1 else None

ready = {
    "prometheus-two-scrapes-serve": 'count_over_time(up{job="pagemap"}[1m]) >= 2 and up{job="pagemap"} == 1',
    "prometheus-two-scrapes-node": 'count_over_time(up{job="node"}[1m]) >= 2 and up{job="node"} == 1',
    "prometheus-two-scrapes-hostile": 'count_over_time(up{job="hostile"}[1m]) >= 2 and up{job="hostile"} == 1',
    "prometheus-slow-tier": 'pagemap_group_pss_bytes{job="pagemap",group="fleetwork"}',
}
deadline = time.time() + 60
while time.time() < deadline and any(query(e) is None for e in ready.values()):
    time.sleep(0.5)
for name, e in ready.items():
    print(("PASS %s" % name) if query(e) is not None else "FAIL %s: %s returned no series" % (name, e))
if query(ready["prometheus-two-scrapes-serve"]) is None:	# why: a scrape too slow for its timeout, or serve gone
    for e in ('up{job="pagemap"}', 'scrape_duration_seconds{job="pagemap"}'):
        print("  %s = %s" % (e, query(e)))
if query(ready["prometheus-two-scrapes-hostile"]) is None:	# why: the scrape refused (its error names the label)
    url = api.replace("/api/v1", "/api/v1/targets")
    for t in json.load(urllib.request.urlopen(url, timeout=10))["data"]["activeTargets"]:
        if t["labels"].get("job") == "hostile":
            print("  hostile target: health %s, error %s" % (t.get("health"), t.get("lastError")))
# The slow tier's age is not a speed test: a pass under ASan on a loaded machine took 13 s. What must hold is that
# its figures are this server's (no older than the server) and that they are renewed (the age goes down between
# two scrapes at least once: resets() counts a series' decreases).
age, renewed = 'pagemap_pss_age_seconds{job="pagemap"}', 'resets(pagemap_pss_age_seconds{job="pagemap"}[5m]) >= 1'
deadline = time.time() + 90
while time.time() < deadline and query(renewed) is None:
    time.sleep(1)
v, up = query(age), time.time() - serve_start
if v is not None and 0 <= v <= up and query(renewed) is not None:
    print("PASS prometheus-serve-pss-age: %.1f s old, the server up %.0f s, renewed" % (v, up))
else:
    print("FAIL prometheus-serve-pss-age: %s = %s (want [0, %.0f], the server's age), renewed: %s"
          % (age, v, up, query(renewed) is not None))
for line in open(checks):
    name, expr, lo, hi = line.rstrip("\n").split("|")
    v = query(expr)
    if v is not None and float(lo) <= v <= float(hi):
        print("PASS %s" % name)
    else:
        print("FAIL %s: %s = %s, want [%s, %s]" % (name, expr, v, lo, hi))
PY
cat "$tmp/results"
if grep -q '^FAIL' "$tmp/results"; then
	sed 's/^/  serve: /' "$tmp/serve.err" | tail -n 5
fi
