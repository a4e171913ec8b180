#!/bin/sh
# serve.sh - `pagemap serve`: GET /metrics in both formats, errors for other methods, paths, long URLs, bodies,
# slow clients holding connections; after all of them it still serves, and it stops cleanly on SIGTERM.
src=${PAGEMAP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PAGEMAP_BUILD:-$src/build}
pagemap="$build/pagemap"
tmp=$(mktemp -d) || exit 1
pid= slow=
cleanup() {
	[ -n "$slow" ] && kill "$slow" 2>/dev/null
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }
command -v curl >/dev/null || { echo "SKIP serve: curl is not installed"; exit 77; }
[ -x "$pagemap" ] || { echo "SKIP serve: $pagemap is not built"; exit 77; }

# Port 0: the kernel picks a free loopback port, which serve announces on stderr.
"$pagemap" serve --listen 127.0.0.1:0 --pss-interval 1 2>"$tmp/err" &
pid=$!
port=
for _ in $(seq 50); do
	port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$tmp/err")
	[ -n "$port" ] && break
	sleep 0.1
done
[ -n "$port" ] || { fail serve-start "$(cat "$tmp/err")"; exit 1; }
url=http://127.0.0.1:$port/metrics

code() {	# code NAME WANT CURL-ARGS...: the HTTP status (000: the server dropped the connection)
	name=$1 want=$2
	shift 2
	got=$(curl -s -o "$tmp/body" -w '%{http_code}' --max-time 20 "$@")
	case " $want " in *" $got "*) pass "$name" ;; *) fail "$name" "status $got, want $want: $(head -c 200 "$tmp/body")" ;; esac
}

code serve-get 200 -D "$tmp/hdr" "$url"
if grep -qi '^content-type: text/plain; version=0.0.4' "$tmp/hdr"; then pass serve-type-text; else fail serve-type-text "$(grep -i content-type "$tmp/hdr")"; fi
if command -v promtool >/dev/null; then
	if promtool check metrics <"$tmp/body" >"$tmp/lint" 2>&1; then pass serve-promtool; else fail serve-promtool "$(head -n 5 "$tmp/lint")"; fi
else
	echo "SKIP serve-promtool: promtool is not installed (Debian's prometheus package has it)"
fi
code serve-openmetrics 200 -D "$tmp/hdr" -H 'Accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5' "$url"
if grep -qi '^content-type: application/openmetrics-text' "$tmp/hdr" && [ "$(tail -n 1 "$tmp/body")" = "# EOF" ]; then
	pass serve-type-openmetrics
else fail serve-type-openmetrics "$(grep -i content-type "$tmp/hdr")"; fi

# The slow tier arrives with its age: its first pass takes seconds on a busy machine (more under ASan), so poll.
for _ in $(seq 60); do
	curl -s --max-time 20 "$url" >"$tmp/body"
	grep -q '^pagemap_pss_age_seconds ' "$tmp/body" && break
	sleep 0.5
done
if grep -q '^pagemap_pss_age_seconds ' "$tmp/body" && grep -q '^pagemap_group_pss_bytes{' "$tmp/body"; then pass serve-pss-age
else fail serve-pss-age "no pagemap_pss_age_seconds or pss samples"; fi

code serve-post 405 -X POST "$url"
code serve-put 405 -X PUT -d x "$url"
code serve-delete 405 -X DELETE "$url"
code serve-head 405 -I "$url"
code serve-other-path 404 "http://127.0.0.1:$port/"
code serve-traversal 404 "http://127.0.0.1:$port/../metrics/x"
code serve-get-body 400 -X GET -d 'a body' "$url"
code serve-long-url "414 431 000" "$url?$(head -c 20000 /dev/zero | tr '\0' a)"
code serve-long-header "431 413 400 000" -H "X-Big: $(head -c 20000 /dev/zero | tr '\0' b)" "$url"

# Slow clients: 20 connections that send half a request line and wait, and 5 that send nothing.
python3 - "$port" <<'PY' &
import socket, sys, time
socks = []
for i in range(25):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    if i < 20:
        s.send(b"GET /metr")
    socks.append(s)
time.sleep(30)
PY
slow=$!
sleep 0.5
t0=$(date +%s)
code serve-beside-slow-clients 200 "$url"
t1=$(date +%s)
if [ $((t1 - t0)) -le 5 ]; then pass serve-not-blocked; else fail serve-not-blocked "took $((t1 - t0)) s"; fi
kill "$slow" 2>/dev/null
wait "$slow" 2>/dev/null
slow=
# A garbage request line.
printf 'BLAH\r\n\r\n' | python3 -c "
import socket, sys
s = socket.create_connection(('127.0.0.1', $port)); s.sendall(sys.stdin.buffer.read()); s.settimeout(5)
try: print(s.recv(100).split(b'\r\n')[0].decode() or 'dropped')
except Exception as e: print('dropped', e)" >"$tmp/garbage"
if grep -Eq '^HTTP/1.[01] 4|^dropped' "$tmp/garbage"; then pass serve-garbage; else fail serve-garbage "$(cat "$tmp/garbage")"; fi
code serve-still-serving 200 "$url"

kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
if [ "$rc" = 0 ]; then pass serve-sigterm; else fail serve-sigterm "exit $rc"; fi

# Misuse.
"$pagemap" serve --listen nowhere >/dev/null 2>&1
rc=$?
if [ "$rc" = 2 ]; then pass serve-bad-listen; else fail serve-bad-listen "exit $rc, want 2"; fi
python3 -c "
import socket, subprocess, sys
s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()
sys.exit(subprocess.run(['$pagemap', 'serve', '--listen', '127.0.0.1:%d' % s.getsockname()[1]],
                        stderr=subprocess.DEVNULL, timeout=10).returncode)"
rc=$?
if [ "$rc" = 1 ]; then pass serve-port-taken; else fail serve-port-taken "exit $rc, want 1"; fi

# A snapshot's slow tier: its thread makes a context of its own, which must replay the snapshot's word
# files (frames, map counts) as the command's does; a context on the extracted tree read them as zeros.
if [ "$(id -u)" != 0 ]; then
	echo "SKIP serve-snapshot-pss: the snapshot needs frame numbers and kpagecount (root)"
elif ! "$pagemap" snapshot -p $$ -o "$tmp/s.snap" 2>"$tmp/err"; then
	fail serve-snapshot-pss "snapshot: $(tail -n 1 "$tmp/err")"
else
	"$pagemap" --snapshot "$tmp/s.snap" serve --listen 127.0.0.1:0 --pss-interval 1 2>"$tmp/err" &
	pid=$!
	port=
	for _ in $(seq 50); do
		port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$tmp/err")
		[ -n "$port" ] && break
		sleep 0.1
	done
	for _ in $(seq 60); do
		curl -s --max-time 20 "http://127.0.0.1:$port/metrics" >"$tmp/body"
		grep -q '^pagemap_group_pss_bytes{.*source="pagemap"}' "$tmp/body" && break
		sleep 0.5
	done
	pss=$(sed -n 's/^pagemap_group_pss_bytes{.*source="pagemap"} \([0-9]*\)$/\1/p' "$tmp/body" | head -n 1)
	if [ -n "$pss" ] && [ "$pss" -gt 0 ]; then pass serve-snapshot-pss; else fail serve-snapshot-pss "PSS from the frames: '$pss'"; fi
	kill -TERM "$pid"
	wait "$pid"
	pid=
fi
