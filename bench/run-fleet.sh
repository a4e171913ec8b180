#!/bin/bash
# run-fleet.sh - the exporter's cost: one scrape of `pagemap serve` with ~1000 processes (wall, CPU, and CPU
# share at a 15 s interval), the slow tier (exact PSS and frame classes), 2000 processes under the 1000-series
# cap (and still correct), and a 4 GiB touch loop's p99 step time with and without a scrape every second.
# Every process it starts is killed on exit. Usage: bench/run-fleet.sh   (BENCH_BUILD: the build directory)
set -u
build=${BENCH_BUILD:-$(cd "$(dirname "$0")/.." && pwd)/build}
pagemap=$build/pagemap
touch=$build/bench/touch
tmp=$(mktemp -d)
pids=()
cleanup() {
	kill "${pids[@]}" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
hz=$(getconf CLK_TCK)

spawn() {	# spawn N: N more idle processes
	local i
	for ((i = 0; i < $1; i++)); do
		sleep 100000 &
		pids+=($!)
	done
}
# cpu PID: utime + stime in seconds
cpu() { awk -v hz="$hz" '{ print ($14 + $15) / hz }' "/proc/$1/stat"; }
serve() {	# serve ARGS...: start serve, set $spid and $url
	"$pagemap" serve --listen 127.0.0.1:0 "$@" 2>"$tmp/serve.err" &
	spid=$!
	pids+=($spid)
	for _ in $(seq 50); do
		port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$tmp/serve.err")
		[ -n "$port" ] && break
		sleep 0.1
	done
	url=http://127.0.0.1:$port/metrics
}
scrapes() {	# scrapes N: N scrapes; prints CPU seconds per scrape and the last scrape's own duration
	local c0 c1 i
	curl -s "$url" >/dev/null	# warm-up
	c0=$(cpu "$spid")
	for ((i = 0; i < $1; i++)); do curl -s "$url" >"$tmp/last"; done
	c1=$(cpu "$spid")
	awk -v a="$c0" -v b="$c1" -v n="$1" 'BEGIN { printf "cpu_per_scrape_s %.4f cpu_share_at_15s %.3f%% ", (b - a) / n, (b - a) / n / 15 * 100 }'
	awk '/^pagemap_scrape_duration_seconds / { d = $2 } /^pagemap_scrape_processes / { p = $2 }
	     /^pagemap_longest_read_seconds / { l = $2 } !/^#/ { s++ }
	     END { printf "scrape_s %s processes %s series %d longest_read_s %s\n", d, p, s, l }' "$tmp/last"
}

echo "== $(nproc) cores, $(uname -r), $(ps -e --no-headers | wc -l) processes before"
spawn 1000
sleep 1
echo "== 1000 idle processes more ($(ps -e --no-headers | wc -l) in all), cheap tier, 20 scrapes"
serve --pss-interval 0
echo "group-by cgroup: $(scrapes 20)"
kill "$spid"; wait "$spid" 2>/dev/null
serve --pss-interval 0 --group-by pid
echo "group-by pid:    $(scrapes 20)"
kill "$spid"; wait "$spid" 2>/dev/null

echo "== the slow tier once (pagemap export --pss: exact PSS of every process, kpageflags by class)"
/usr/bin/time -f "wall_s %e cpu_s %U+%S max_rss_kb %M" "$pagemap" export --pss >/dev/null

spawn 1000
sleep 1
echo "== 2000 idle processes more, --group-by pid, the default cap of 1000 series"
"$pagemap" export --group-by pid >"$tmp/capped"
"$pagemap" export --group-by pid --max-series 1000000 >"$tmp/all"
sum() { awk '/^pagemap_group_rss_bytes\{/ { s += $2 } END { print s }' "$1"; }
echo "series $(grep -vc '^#' "$tmp/capped") (uncapped $(grep -vc '^#' "$tmp/all")), groups $(awk '/^pagemap_scrape_groups / { print $2 }' "$tmp/capped"), other $(grep -c 'group="other"' "$tmp/capped") series, dropped $(awk '/^pagemap_series_dropped_total / { print $2 }' "$tmp/capped")"
echo "rss summed: capped $(sum "$tmp/capped"), uncapped $(sum "$tmp/all") (equal when no process changed between the two)"
kill "${pids[@]}" 2>/dev/null
wait 2>/dev/null
pids=()

if [ -x "$touch" ] && [ "$(awk '/MemAvailable/ { print int($2 / 1048576) }' /proc/meminfo)" -ge 6 ]; then
	echo "== 4 GiB touch loop, 20 s: p50/p99/max of one 2 MiB step (512 page writes)"
	"$touch" 4 20 >"$tmp/t0" &
	tpid=$!; pids+=($tpid)
	wait "$tpid"
	echo "alone:              $(tail -n 1 "$tmp/t0")"
	"$touch" 4 20 >"$tmp/t1" &
	tpid=$!; pids+=($tpid)
	until grep -q ready "$tmp/t1" 2>/dev/null; do sleep 0.1; done
	serve --pss-interval 0 --group-by pid
	while kill -0 "$tpid" 2>/dev/null; do curl -s "$url" >/dev/null; sleep 1; done
	echo "scraped every 1 s:  $(tail -n 1 "$tmp/t1")"
	curl -s "$url" | grep '^pagemap_longest_read_seconds'
else
	echo "== touch loop skipped: no $touch, or less than 6 GiB available"
fi
