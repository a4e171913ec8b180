#!/bin/sh
# serve_stall.sh - no client stalls `pagemap serve`: connections trickling header bytes, connect-send-close,
# 200 scrapes at once (sharing one walk per cache period), pipelined requests, every slot held by slow
# clients, many connections from one address. Clients run on loopback only (serve_clients.py); every loop is
# bounded in count and time.
src=${PAGEMAP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PAGEMAP_BUILD:-$src/build}
pagemap="$build/pagemap"
clients="$src/tests/live/serve_clients.py"
tmp=$(mktemp -d) || exit 1
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
command -v python3 >/dev/null || { echo "SKIP serve-stall: python3 is not installed"; exit 77; }
[ -x "$pagemap" ] || { echo "SKIP serve-stall: $pagemap is not built"; exit 77; }
python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.9", 0))' 2>/dev/null ||
	{ echo "SKIP serve-stall: cannot bind loopback addresses besides 127.0.0.1"; exit 77; }
# An ASan build on 2 CPUs beside other work answers 200 scrapes at once in more than Prometheus' 10 s; the
# walks counter, not the time, is what shows they share walks.
if [ -z "$SERVE_CLIENT_TIMEOUT" ] && { case $build in *asan*) true ;; *) false ;; esac ||
	grep -q __asan_init "$pagemap"; }; then
	export SERVE_CLIENT_TIMEOUT=30
fi

# start_serve ADDR: serve on ADDR:0 (the kernel picks a free port, which serve announces on stderr); sets
# $pid and $port. No slow tier: the cheap walk is what each scrape would repeat without the cache.
start_serve() {
	a=$1
	shift
	: >"$tmp/err"	# emptied before the start: the last server's port must not pass for this one's
	"$pagemap" serve --listen "$a:0" --pss-interval 0 "$@" 2>>"$tmp/err" &
	pid=$!
	port=
	for _ in $(seq 50); do
		port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$tmp/err")
		[ -n "$port" ] && return 0
		sleep 0.1
	done
	echo "FAIL serve-stall-start: $(cat "$tmp/err")"
	exit 1
}

stop_serve() {	# bounded: SIGTERM, then after 10 s SIGKILL
	kill "$pid" 2>/dev/null
	for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$pid" 2>/dev/null
	wait "$pid"
	pid=
}

if [ "$1" = --per-client ]; then
	# In a private network namespace (see below): a non-loopback address on its own loopback device.
	ip link set lo up && ip addr add 192.0.2.1/24 dev lo || { echo "FAIL serve-per-client-netns: ip failed"; exit 1; }
	start_serve 192.0.2.1
	SERVE_HOST=192.0.2.1 python3 "$clients" "$port" per-client 40 16 192.0.2.50
	# The scraper's own address full of trickling connections (a NAT, a node address shared with Prometheus):
	# its slowest makes room, so the scrapes from that address still get in.
	SERVE_HOST=192.0.2.1 python3 "$clients" "$port" slowloris 24 4 192.0.2.50 |
		sed 's/serve-slowloris/serve-per-client-slowloris/'
	exit 0
fi

start_serve 127.0.0.1
python3 "$clients" "$port" pipeline 50 1
python3 "$clients" "$port" sendclose 32
python3 "$clients" "$port" concurrent 200 50 1
python3 "$clients" "$port" slowloris 48 11
if kill -0 "$pid" 2>/dev/null; then echo "PASS serve-stall-alive"; else echo "FAIL serve-stall-alive: serve died"; fi
stop_serve

# Every slot taken: 64 connections from 127.0.0.1 trickle into 32 slots, reconnecting as soon as they are cut;
# the scrapes still get in (the connection longest in its headers makes room). Short: the slots are full from
# the first second, and the run above holds the deadline.
start_serve 127.0.0.1 --max-connections 32
python3 "$clients" "$port" slowloris 64 6 local | sed 's/serve-slowloris/serve-full-slowloris/'
stop_serve

# Bounded: a wrongly accepted option would serve until killed.
timeout 10 "$pagemap" serve --listen 127.0.0.1:0 --max-connections 2 >/dev/null 2>&1
rc=$?
if [ "$rc" = 2 ]; then echo "PASS serve-bad-max-connections"; else echo "FAIL serve-bad-max-connections: exit $rc, want 2"; fi

# Loopback is every local user's address, so the per-client limit spares it: it is seen on a TEST-NET
# address, in a network namespace of our own (nothing of the host's network changes).
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! unshare -n true 2>/dev/null; then
	echo "SKIP serve-per-client-limit: needs root, ip (iproute2) and unshare -n"
else
	unshare -n "$0" --per-client
fi

