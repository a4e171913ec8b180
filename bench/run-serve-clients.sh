#!/bin/sh
# run-serve-clients.sh - many clients at once against `pagemap serve`: N concurrent scrapes from loopback
# addresses (4 per address) while BENCH_IDLE idle processes more (default 500) give each walk work; p50/p99/max
# per scrape and the walks they cost. A scrape waits up to 120 s (not Prometheus' 10 s), so a slow server shows
# its real figures. Usage: bench/run-serve-clients.sh [N]   (BENCH_BUILD: the build directory; BENCH_ADDRS: how
# many client addresses, 1 for all from 127.0.0.1)
build=${BENCH_BUILD:-$(cd "$(dirname "$0")/.." && pwd)/build}
src=$(cd "$(dirname "$0")/.." && pwd)
n=${1:-1000}
idle=${BENCH_IDLE:-500}
tmp=$(mktemp -d) || exit 1
pid= sleepers=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	[ -n "$sleepers" ] && kill $sleepers 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
i=0
while [ "$i" -lt "$idle" ]; do
	sleep 100000 &
	sleepers="$sleepers $!"
	i=$((i + 1))
done
"$build/pagemap" serve --listen 127.0.0.1:0 --pss-interval 0 2>"$tmp/err" &
pid=$!
port=
for _ in $(seq 50); do
	port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$tmp/err")
	[ -n "$port" ] && break
	sleep 0.1
done
[ -n "$port" ] || { echo "serve did not start: $(cat "$tmp/err")"; exit 1; }
addrs=$(( (n + 3) / 4 ))
[ "$addrs" -gt 240 ] && addrs=240
addrs=${BENCH_ADDRS:-$addrs}
echo "$n scrapes at once, $(ls /proc | grep -c "^[0-9]") processes, $("$build/pagemap" --version 2>&1 | head -n 1)"
SERVE_CLIENT_TIMEOUT=120 python3 "$src/tests/live/serve_clients.py" "$port" concurrent "$n" "$addrs" 1 | grep -v '^PASS\|^FAIL'
