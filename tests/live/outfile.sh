#!/bin/sh
# outfile.sh - every command that writes a file writes only what it created, as root beside a second user
# (uid 65534) who plants names, links, FIFOs and files in a sticky directory: -o /dev/null, /dev/stdout and
# /dev/stderr stay what they are (in a private mount namespace with a /dev of its own, so the real /dev is
# never at risk); 300 temporary names planted ahead (the first values of an unseeded rand() for PID 1 in a
# new PID namespace) never put the planter's file at the output; export --textfile never writes through a
# planted symlink; a planted symlink or FIFO at -o is refused, a planted file replaced; modes: snapshots and
# HTML pictures with frame numbers 0600, others 0644 less the umask; 40 concurrent --append land 40 members;
# uid 65534's flocks never stall an --append; -o - keeps what standard output held.
# Usage: tests/live/outfile.sh   (PAGEMAP_BUILD comes from make)
build=${PAGEMAP_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}
src=${PAGEMAP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
pagemap="$build/pagemap"
tree="$src/tests/fixtures/demo-6.18-root"
[ "$(id -u)" -eq 0 ] || { echo "SKIP outfile-live: needs root (a second user plants files)"; exit 77; }
command -v setpriv >/dev/null || { echo "SKIP outfile-live: no setpriv (util-linux)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP outfile-live: no python3"; exit 77; }
base=$(mktemp -d) || exit 1
target=
cleanup() {
	[ -n "$target" ] && kill "$target" 2>/dev/null
	rm -rf "$base"
}
trap cleanup EXIT
chmod 755 "$base"
cd "$base" || exit 1	# a writer that took "-" for a name leaves it here, not in the source tree
sticky="$base/sticky"
mkdir -m 1777 "$sticky"
victim="$base/victim"
echo precious >"$victim"
chmod 644 "$victim"
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
nobody test -w "$sticky" || { echo "SKIP outfile-live: uid 65534 cannot reach $sticky (a 0700 parent of \$TMPDIR?)"; exit 77; }
umask 022
fails=0
pass() { echo "PASS outfile-$1"; }
fail() { echo "FAIL outfile-$1${2:+: $2}"; fails=$((fails + 1)); }
mode() { stat -c %a "$1"; }

sleep 1000 &
target=$!

# 1. Devices and standard streams at -o, in a mount namespace whose /dev is a tmpfs of its own; then a
# file system with no inode left for the temporary.
mkdir "$base/full"
if unshare -m true 2>/dev/null; then
	out=$(unshare -m sh -c '
		mount -t tmpfs -o mode=755 pagemap-test /dev || exit 3
		mknod -m 666 /dev/null c 1 3 && ln -s /proc/self/fd/1 /dev/stdout && ln -s /proc/self/fd/2 /dev/stderr
		pm=$1 pid=$2 tree=$3
		"$pm" render "$pid" -f svg -o /dev/null; echo "render-null rc=$? $(stat -c %F /dev/null)"
		"$pm" snapshot --from-tree "$tree" -o /dev/null; echo "snapshot-null rc=$? $(stat -c %F /dev/null)"
		n=$("$pm" render "$pid" -f svg -o /dev/stdout | wc -c); echo "render-stdout bytes=$n $(stat -c %F /dev/stdout)"
		n=$("$pm" render "$pid" -f svg -o /dev/stderr 2>&1 >/dev/null | wc -c); echo "render-stderr bytes=$n $(stat -c %F /dev/stderr)"
		n=$("$pm" snapshot --from-tree "$tree" -o /dev/stdout | wc -c); echo "snapshot-stdout bytes=$n $(stat -c %F /dev/stdout)"
		n=$("$pm" snapshot --from-tree "$tree" -o - | wc -c); echo "snapshot-dash bytes=$n"
		ls -A /dev | grep -c "^\.\|XXXX\|null\." | sed "s/^/leftovers=/"
		# No inode left for a temporary: an error, the file that was there kept, nothing else made.
		mount -t tmpfs -o size=1m,nr_inodes=8 pagemap-full "$4" || exit 3
		echo kept >"$4/out.svg"
		i=0; while touch "$4/f$i" 2>/dev/null; do i=$((i + 1)); done
		"$pm" render "$pid" -f svg -o "$4/out.svg" 2>/dev/null; r1=$?
		"$pm" snapshot --from-tree "$tree" -o "$4/new.snap" 2>/dev/null; r2=$?
		echo "full rc=$r1,$r2 $(cat "$4/out.svg") $(ls -A "$4" | grep -vc "^f[0-9]*$")"
	' sh "$pagemap" "$target" "$tree" "$base/full" 2>&1)
	for case in render-null snapshot-null; do
		line=$(echo "$out" | grep "^$case ")
		[ "$line" = "$case rc=0 character special file" ] && pass "$case" || fail "$case" "$line"
	done
	for case in render-stdout render-stderr snapshot-stdout; do
		line=$(echo "$out" | grep "^$case ")
		echo "$line" | grep -q "bytes=[1-9][0-9]* symbolic link$" && pass "$case" || fail "$case" "$line"
	done
	echo "$out" | grep -q "^snapshot-dash bytes=[1-9]" && pass snapshot-dash || fail snapshot-dash "$(echo "$out" | grep dash)"
	echo "$out" | grep -q "^leftovers=0$" && pass dev-leftovers || fail dev-leftovers "$(echo "$out" | tail -n 3)"
	line=$(echo "$out" | grep "^full ")
	[ "$line" = "full rc=1,1 kept 1" ] && pass no-inodes || fail no-inodes "$line"
else
	echo "SKIP outfile-devices: no private mount namespace here (unshare -m)"
fi

# 2. Temporary names planted ahead: the first 300 values of glibc's unseeded rand(), XOR PID 1 (the writer
# is PID 1 of a new PID namespace), as ".pagemap-snapshot.%08x", files of uid 65534 saying "planted".
if unshare -p -f true 2>/dev/null; then
	python3 -c '
import ctypes, sys
libc = ctypes.CDLL(None)
for _ in range(300):
    print(".pagemap-snapshot.%08x" % ((libc.rand() & 0xffffffff) ^ 1))' >"$base/names"
	nobody sh -c 'cd "$1" && while read -r n; do echo planted >"$n"; done <"$2"' sh "$sticky" "$base/names"
	for way in tmpfile named; do
		rm -f "$sticky/out.snap"
		unshare -p -f sh -c '[ "$2" = named ] && export PAGEMAP_NO_TMPFILE=1; exec "$1" snapshot --from-tree "$3" -o "$4"' \
			sh "$pagemap" "$way" "$tree" "$sticky/out.snap" >"$base/err" 2>&1
		rc=$?
		if [ "$rc" -eq 0 ] && [ "$(stat -c %U "$sticky/out.snap")" = root ] && ! grep -q planted "$sticky/out.snap" &&
		   "$pagemap" snapshot --list "$sticky/out.snap" >/dev/null 2>&1; then
			pass "planted-names-$way"
		else
			fail "planted-names-$way" "rc=$rc owner=$(stat -c %U "$sticky/out.snap" 2>/dev/null) $(head -c 60 "$sticky/out.snap" 2>/dev/null | tr -dc '[:print:]') $(cat "$base/err")"
		fi
	done
	n=$(ls -A "$sticky" | grep -c '^\.pagemap-snapshot\.')
	[ "$n" -eq 300 ] && pass planted-names-untouched || fail planted-names-untouched "$n of 300 planted names left"
	rm -f "$sticky"/.pagemap-snapshot.* "$sticky/out.snap"
else
	echo "SKIP outfile-planted-names: no PID namespace here (unshare -p)"
fi

# 3. export --textfile DIR, DIR owned by uid 65534 (node_exporter's user owns it on Debian), who plants
# pagemap.prom.tmp and pagemap.prom as symlinks to a root file.
tdir="$base/textfile"
mkdir "$tdir" && chown 65534:65534 "$tdir"
nobody ln -s "$victim" "$tdir/pagemap.prom.tmp"
nobody ln -s "$victim" "$tdir/pagemap.prom"
"$pagemap" export --textfile "$tdir" >"$base/err" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && [ "$(cat "$victim")" = precious ] && [ -f "$tdir/pagemap.prom" ] && [ ! -L "$tdir/pagemap.prom" ] &&
   grep -q '^pagemap_' "$tdir/pagemap.prom" && [ "$(mode "$tdir/pagemap.prom")" = 644 ]; then
	pass textfile-symlink
else
	fail textfile-symlink "rc=$rc victim=$(head -c 40 "$victim") $(ls -l "$tdir" | tr '\n' ' ') $(cat "$base/err")"
fi
[ "$(ls -A "$tdir" | grep -vc '^pagemap.prom')" -eq 0 ] && pass textfile-no-temporary || fail textfile-no-temporary "$(ls -A "$tdir")"
echo precious >"$victim"

# 4. Planted at -o in the sticky directory: someone else's symlink is never followed (refused, one line and
# a hint, exit 1), nor their FIFO written (it would hand them the output); their regular file is replaced.
nobody ln -s "$victim" "$sticky/link.svg"
"$pagemap" render "$target" -o "$sticky/link.svg" >"$base/out" 2>"$base/err"
rc=$?
if [ "$rc" -eq 1 ] && [ -L "$sticky/link.svg" ] && [ "$(cat "$victim")" = precious ] && grep -q 'symbolic links' "$base/err"; then
	pass planted-symlink
else
	fail planted-symlink "rc=$rc $(ls -l "$sticky/link.svg") $(cat "$base/err")"
fi
nobody mkfifo -m 622 "$sticky/fifo.snap"
nobody sh -c 'exec 3<>"$1"; sleep 5' sh "$sticky/fifo.snap" &	# a reader waiting: a write would not block
reader=$!
"$pagemap" snapshot -p "$target" -o "$sticky/fifo.snap" >"$base/out" 2>"$base/err"
rc=$?
kill "$reader" 2>/dev/null
wait "$reader" 2>/dev/null
if [ "$rc" -eq 1 ] && [ -p "$sticky/fifo.snap" ] && grep -q 'not permitted' "$base/err"; then
	pass planted-fifo
else
	fail planted-fifo "rc=$rc $(ls -l "$sticky/fifo.snap") $(cat "$base/err")"
fi
nobody sh -c 'echo theirs >"$1"; chmod 666 "$1"' sh "$sticky/file.snap"
"$pagemap" snapshot -p "$target" -o "$sticky/file.snap" 2>"$base/err"
rc=$?
if [ "$rc" -eq 0 ] && [ "$(stat -c '%U %a' "$sticky/file.snap")" = "root 600" ] && ! grep -q theirs "$sticky/file.snap"; then
	pass planted-file-replaced
else
	fail planted-file-replaced "rc=$rc $(ls -l "$sticky/file.snap") $(cat "$base/err")"
fi

# 5. Modes by what the file holds (umask 022): frame numbers (snapshots, HTML pictures of a live process as
# root) 0600, else 0644.
"$pagemap" render "$target" -f html -o "$base/p.html" && "$pagemap" render "$target" -f svg -o "$base/p.svg" &&
	"$pagemap" snapshot -p "$target" -o "$base/p.snap" && "$pagemap" snapshot -p "$target" --append "$base/p.series"
got="html=$(mode "$base/p.html") svg=$(mode "$base/p.svg") snap=$(mode "$base/p.snap") series=$(mode "$base/p.series")"
if grep -q '"0x[0-9a-f]*",' "$base/p.html" && [ "$got" = "html=600 svg=644 snap=600 series=600" ]; then
	pass modes
else
	fail modes "$got"
fi

# 6. 40 appends at once to one new series: every member lands (the losers of the race to create it append
# again, then wait for the series' lock); a regression that deadlocks is cut at 120 s.
i=0 jobs=
while [ $i -lt 40 ]; do
	timeout 120 "$pagemap" snapshot -p "$target" --append "$base/s40" >"$base/append.$i" 2>&1 &
	jobs="$jobs $!"
	i=$((i + 1))
done
wait_rc=0
for job in $jobs; do
	wait "$job" || wait_rc=$?
done
members=$("$pagemap" snapshot --list "$base/s40" 2>/dev/null | grep -c '^member=')
if [ "$members" -eq 40 ] && [ "$wait_rc" -eq 0 ]; then
	pass append-40
else
	fail append-40 "$members of 40 members, an append exited $wait_rc: $(cat "$base"/append.* | sort | uniq -c | head -n 3)"
fi

# 7. Locks uid 65534 can take never stall root's --append: their flock on the directory (an append to a new
# series there locks nothing), their series-looking file kept locked (waited for 10 s at most, then one line).
if command -v flock >/dev/null; then
	nobody flock -s "$sticky" sleep 100 &
	holder=$!
	sleep 0.3
	t0=$(date +%s)
	timeout 60 "$pagemap" snapshot -p "$target" --append "$sticky/new.series" >"$base/err" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ] && [ $(($(date +%s) - t0)) -lt 30 ] &&
	   [ "$("$pagemap" snapshot --list "$sticky/new.series" 2>/dev/null | grep -c '^member=')" -eq 1 ]; then
		pass append-dir-locked
	else
		fail append-dir-locked "rc=$rc after $(($(date +%s) - t0)) s: $(cat "$base/err")"
	fi
	kill "$holder" 2>/dev/null
	wait "$holder" 2>/dev/null
	nobody sh -c 'echo theirs >"$1"; chmod 644 "$1"' sh "$sticky/held.series"
	nobody flock -x "$sticky/held.series" sleep 100 &
	holder=$!
	sleep 0.3
	t0=$(date +%s)
	timeout 60 "$pagemap" snapshot -p "$target" --append "$sticky/held.series" >"$base/err" 2>&1
	rc=$?
	if [ "$rc" -eq 1 ] && [ $(($(date +%s) - t0)) -lt 30 ] && [ "$(wc -l <"$base/err")" -eq 1 ] &&
	   grep -q 'stayed locked' "$base/err" && [ "$(cat "$sticky/held.series")" = theirs ]; then
		pass append-file-locked
	else
		fail append-file-locked "rc=$rc after $(($(date +%s) - t0)) s: $(cat "$base/err")"
	fi
	kill "$holder" 2>/dev/null
	wait "$holder" 2>/dev/null
else
	echo "SKIP outfile-append-locks: no flock (util-linux)"
fi

# 8. -o - writes to standard output's descriptor as it is: what > put before it stays, >> appends.
{ echo HEADER; "$pagemap" snapshot --from-tree "$tree" -o -; } >"$base/g.out" 2>"$base/err"
rc=$?
tail -c +8 "$base/g.out" >"$base/g.snap"
if [ "$rc" -eq 0 ] && [ "$(head -n 1 "$base/g.out")" = HEADER ] && "$pagemap" snapshot --list "$base/g.snap" >/dev/null 2>&1; then
	pass stdout-header-kept
else
	fail stdout-header-kept "rc=$rc $(head -c 20 "$base/g.out" | tr -dc '[:print:]') $(cat "$base/err")"
fi
"$pagemap" snapshot --from-tree "$tree" -o - >>"$base/a.snap" 2>"$base/err" && cp "$base/a.snap" "$base/a1.snap" &&
	"$pagemap" snapshot --from-tree "$tree" -o - >>"$base/a.snap" 2>>"$base/err"
rc=$?
n1=$(stat -c %s "$base/a1.snap" 2>/dev/null || echo 0)
if [ "$rc" -eq 0 ] && [ "$n1" -gt 0 ] && [ "$(stat -c %s "$base/a.snap")" -eq $((2 * n1)) ] &&
   cmp -s -n "$n1" "$base/a.snap" "$base/a1.snap"; then
	pass stdout-append
else
	fail stdout-append "rc=$rc first=$n1 both=$(stat -c %s "$base/a.snap") $(cat "$base/err")"
fi

[ "$fails" -eq 0 ]
