#!/bin/sh
# snapshot_users.sh - a replayed snapshot shows USER by the name the capture's machine gave the UID
# (its META users), not as a number; a --root tree, which records no names, still shows numbers.
# The process is our own: a sleep run as uid 65534.
# Usage: tests/live/snapshot_users.sh   (PAGEMAP_BUILD comes from make; PAGEMAP_BIN: another binary)
build=${PAGEMAP_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}
pagemap=${PAGEMAP_BIN:-$build/pagemap}
work=$(mktemp -d) || exit 1
s=''
cleanup() {
	[ -n "$s" ] && kill "$s" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

[ "$(id -u)" = 0 ] || { echo "SKIP snapshot-users: needs root (a process of another user)"; exit 77; }
name=$(getent passwd 65534 | cut -d: -f1)
[ -n "$name" ] || { echo "SKIP snapshot-users: no user name for uid 65534 here"; exit 77; }
setpriv --reuid=65534 --regid=65534 --clear-groups sleep 100000 & s=$!
i=0
while [ "$(cat "/proc/$s/comm" 2>/dev/null)" != sleep ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done

"$pagemap" snapshot -p "$s,self" -o "$work/s.pms" 2>"$work/err" ||
	{ echo "FAIL snapshot-users-write: $(cat "$work/err")"; exit 1; }
"$pagemap" --snapshot "$work/s.pms" ps -n -r -o PID,USER -p "$s" >"$work/out" 2>"$work/err"
got=$(awk '{ print $2 }' "$work/out")
if [ "$got" = "$name" ]; then echo "PASS snapshot-users-name"
else echo "FAIL snapshot-users-name: USER '$got', want '$name' (the capture's); stderr: $(cat "$work/err")"; fi
# ps --group-by user and export's user groups say the name the rows say (they said the number: a seam
# between one command's rows and its groups).
"$pagemap" --snapshot "$work/s.pms" ps --group-by user -n -r -o USER,PROCESSES >"$work/g" 2>"$work/err"
"$pagemap" --snapshot "$work/s.pms" export --group-by user >"$work/x" 2>>"$work/err"
if grep -qx "$name 1" "$work/g" && grep -q "group=\"$name\"" "$work/x" && ! grep -q 'group="65534"' "$work/x"; then
	echo "PASS snapshot-users-groups"
else
	echo "FAIL snapshot-users-groups: ps --group-by user: $(tr '\n' '|' <"$work/g") export: $(grep -o 'group="[^"]*"' "$work/x" | sort -u | tr '\n' ' ')"
fi
# Both users are said: the sleep's and the writer's own (self).
me=$(id -un)
if tr -c "[:print:]" "\n" <"$work/s.pms" | grep -q "users=.*\b0=$me" && tr -c "[:print:]" "\n" <"$work/s.pms" | grep -q "users=.*65534=$name"; then
	echo "PASS snapshot-users-meta"
else
	echo "FAIL snapshot-users-meta: no META users line with 0=$me and 65534=$name"
fi

# ps -u NAME of a replayed snapshot is the capture's NAME: a snapshot written where uid 65534 is called
# "daemon" (a passwd of ours bound over /etc/passwd in a private mount namespace), replayed here where
# "daemon" is another UID, selects the sleep by the capture's name; a name the capture did not know is
# still looked up here.
if command -v unshare >/dev/null && [ "$(id -u daemon 2>/dev/null)" != 65534 ] && [ -n "$(id -u daemon 2>/dev/null)" ]; then
	{ grep -v '^daemon:' /etc/passwd | grep -v ':x:65534:'; echo 'daemon:x:65534:65534:capture:/:/bin/false'; } >"$work/passwd"
	unshare -m sh -c 'mount --bind "$1" /etc/passwd && exec "$2" snapshot -p "$3" -o "$4"' sh \
		"$work/passwd" "$pagemap" "$s" "$work/d.pms" 2>"$work/err" ||
		{ echo "FAIL snapshot-users-select-write: $(cat "$work/err")"; exit 1; }
	got=$("$pagemap" --snapshot "$work/d.pms" ps -n -r -o PID,USER -u daemon 2>"$work/err")
	if [ "$got" = "$s daemon" ]; then echo "PASS snapshot-users-select"
	else echo "FAIL snapshot-users-select: ps -u daemon printed '$got', want '$s daemon' (uid 65534 in the capture); stderr: $(cat "$work/err")"; fi
	got=$("$pagemap" --snapshot "$work/d.pms" ps -n -r -o PID -u 65534 2>&1)
	[ "$got" = "$s" ] && echo "PASS snapshot-users-select-uid" || echo "FAIL snapshot-users-select-uid: '$got'"
	got=$("$pagemap" --snapshot "$work/d.pms" ps -n -r -o PID -u root 2>&1)
	[ -z "$got" ] && echo "PASS snapshot-users-select-here" || echo "FAIL snapshot-users-select-here: '$got'"
else
	echo "SKIP snapshot-users-select: no unshare, or no user daemon with a UID other than 65534 here"
fi
exit 0
