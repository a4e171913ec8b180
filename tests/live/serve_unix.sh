#!/bin/sh
# serve_unix.sh - `pagemap serve --listen unix:PATH`: the socket is made with its mode (0600 by default) so that
# another user (uid 65534) gets EACCES; a planted symbolic link or file at PATH is refused and left as it was; a
# stale socket is replaced, a live one is not; the socket goes at exit.
src=${PAGEMAP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PAGEMAP_BUILD:-$src/build}
pagemap="$build/pagemap"
tmp=$(mktemp -d) || exit 1
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }
[ -x "$pagemap" ] || { echo "SKIP serve-unix: $pagemap is not built"; exit 77; }
# uid 65534 runs the system's python3 (a per-user shim in root's PATH is not for it).
py=/usr/bin/python3
[ -x "$py" ] || { echo "SKIP serve-unix: $py is not installed"; exit 77; }
for b in curl setpriv; do
	command -v "$b" >/dev/null || { echo "SKIP serve-unix: $b is not installed"; exit 77; }
done
[ "$(id -u)" = 0 ] || { echo "SKIP serve-unix: needs root to try the socket as another user (uid 65534)"; exit 77; }
chmod 755 "$tmp"
mkdir -m 755 "$tmp/d"
mkdir -m 1777 "$tmp/sticky"
# Behind a 0700 parent (of $TMPDIR) uid 65534 reaches nothing: EACCES would come from the directory, not the
# socket's mode, and the links could not be planted.
setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$tmp/d" -a -w "$tmp/sticky" ||
	{ echo "SKIP serve-unix: uid 65534 cannot reach $tmp (a 0700 parent of \$TMPDIR?)"; exit 77; }
sock=$tmp/d/pagemap.sock

start() {	# start PATH [ARGS]: serve on unix:PATH until it says it serves; 1 when it exited instead
	p=$1
	shift
	# Emptied here, not by the child's redirection: the last server's "serving" must not pass for this one's
	# (a SIGTERM sent before this one blocks it can be lost, and stop would wait forever).
	: >"$tmp/err"
	"$pagemap" serve --listen "unix:$p" --pss-interval 0 "$@" 2>>"$tmp/err" &
	pid=$!
	for _ in $(seq 100); do
		grep -q 'serving' "$tmp/err" && return 0
		kill -0 "$pid" 2>/dev/null || { wait "$pid"; pid=; return 1; }
		sleep 0.1
	done
	stop	# still silent after 10 s: not left running (the next start would lose its pid)
	return 1
}
stop() {	# bounded: SIGTERM, then after 10 s SIGKILL
	kill "$pid" 2>/dev/null
	for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$pid" 2>/dev/null
	wait "$pid"
	pid=
}
# as_nobody PATH: what connecting to PATH as uid 65534 gives: ok, or the errno's name
as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups "$py" -c '
import errno, socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1]); print("ok")
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))' "$1"
}

if ! start "$sock"; then
	fail serve-unix-start "$(cat "$tmp/err")"
	exit 1
fi
mode=$(stat -c '%a %F' "$sock")
if [ "$mode" = "600 socket" ]; then pass serve-unix-mode; else fail serve-unix-mode "$mode, want 600 socket"; fi
code=$(curl -s -o "$tmp/body" -w '%{http_code}' --max-time 20 --unix-socket "$sock" http://localhost/metrics)
if [ "$code" = 200 ] && grep -q '^pagemap_scrape_walks_total ' "$tmp/body"; then pass serve-unix-scrape
else fail serve-unix-scrape "status $code"; fi
got=$(as_nobody "$sock")
if [ "$got" = EACCES ]; then pass serve-unix-other-user; else fail serve-unix-other-user "uid 65534 connecting: $got, want EACCES"; fi

# A second server on a live socket is refused; the first one goes on.
first=$pid
if start "$sock"; then stop; fail serve-unix-live "a second server took a live socket"
else pass serve-unix-live; fi
pid=$first
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 20 --unix-socket "$sock" http://localhost/metrics)
if [ "$code" = 200 ]; then pass serve-unix-live-kept; else fail serve-unix-live-kept "status $code"; fi
stop
if [ -e "$sock" ]; then fail serve-unix-removed "the socket is left at exit"; else pass serve-unix-removed; fi

# A stale socket (its server killed) is replaced.
start "$sock" && kill -KILL "$pid" && wait "$pid" 2>/dev/null
pid=
if [ -S "$sock" ] && start "$sock"; then pass serve-unix-stale; stop; else fail serve-unix-stale "$(cat "$tmp/err")"; fi

# The mode asked for: 0666 lets uid 65534 in.
if start "$sock" --socket-mode 0666 && [ "$(stat -c %a "$sock")" = 666 ] && [ "$(as_nobody "$sock")" = ok ]; then
	pass serve-unix-mode-given
else fail serve-unix-mode-given "$(stat -c %a "$sock" 2>&1) $(cat "$tmp/err")"; fi
[ -n "$pid" ] && stop

# Another user plants a link (to a file of root's, and to a path that does not exist) and a file: refused, and
# nothing is created or changed through them.
echo 'root data' >"$tmp/victim"
setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "ln -s '$tmp/victim' '$tmp/sticky/l1' &&
	ln -s '$tmp/nothing' '$tmp/sticky/l2' && echo planted >'$tmp/sticky/f'"
for name in l1 l2 f; do
	before=$(stat -c '%F %s %Y' "$tmp/sticky/$name" "$tmp/victim")
	if start "$tmp/sticky/$name"; then stop; fail "serve-unix-planted-$name" "served on a planted $(stat -c %F "$tmp/sticky/$name")"
	elif [ -e "$tmp/nothing" ] || [ "$(stat -c '%F %s %Y' "$tmp/sticky/$name" "$tmp/victim")" != "$before" ]; then
		fail "serve-unix-planted-$name" "the planted name or its target changed"
	else pass "serve-unix-planted-$name"; fi
done
grep -q 'not a socket' "$tmp/err" && pass serve-unix-planted-message || fail serve-unix-planted-message "$(cat "$tmp/err")"

# Misuse. Bounded: a wrongly accepted option would serve until killed.
timeout 10 "$pagemap" serve --listen "unix:$sock" --socket-mode 0400 >/dev/null 2>&1
rc=$?
if [ "$rc" = 2 ]; then pass serve-unix-bad-mode; else fail serve-unix-bad-mode "exit $rc, want 2"; fi
timeout 10 "$pagemap" serve --listen 127.0.0.1:0 --socket-mode 0600 >/dev/null 2>&1
rc=$?
if [ "$rc" = 2 ]; then pass serve-unix-mode-tcp; else fail serve-unix-mode-tcp "exit $rc, want 2"; fi
