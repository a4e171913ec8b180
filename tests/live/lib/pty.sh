# pty.sh - sourced by live test scripts that run pagemap as a user does, in a terminal (not a test of its own).
# shellcheck shell=sh

# pty_run COLS OUT CMD...: run CMD in a pseudo-terminal COLS columns wide and 50 rows high (script(1), from
# util-linux, as a user's terminal: stdout and stderr are the terminal), its output in OUT with the
# terminal's CR taken out; returns CMD's status.
pty_run() {
	_cols=$1 _out=$2
	shift 2
	_cmd="stty cols $_cols rows 50 2>/dev/null;"
	for _a in "$@"; do
		_cmd="$_cmd '$(printf '%s' "$_a" | sed "s/'/'\\\\''/g")'"
	done
	TERM=${TERM:-xterm} script -q -e -c "$_cmd" /dev/null </dev/null >"$_out.raw" 2>&1
	_rc=$?
	tr -d '\r' <"$_out.raw" >"$_out"
	rm -f "$_out.raw"
	return $_rc
}

# pty_widest FILE: the width in terminal columns of FILE's widest line (escape sequences take none,
# a wide character two), as a terminal shows it.
pty_widest() {
	python3 -c '
import re, sys, unicodedata
esc = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
w = 0
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    line = esc.sub("", line.rstrip("\n"))
    n = sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)
    w = max(w, n)
print(w)' "$1"
}
