#!/bin/bash
# man-pages.sh - every command of the tool (cli/main.c's table) has its page man/pagemap-NAME.1, which names it
# in NAME and which pagemap(1) lists in SEE ALSO; every page in man/ renders from the clone as a user reads it
# there, `man -l man/PAGE` from the top of the source (an alias page too: a symbolic link in man/, installed
# as .so), and groff -ww finds nothing to warn about; each long option of a command's --help is in its page
# or in pagemap(1).
# Usage: tests/cli/man-pages.sh   (PAGEMAP_SRC and PAGEMAP_BUILD from make)
src=${PAGEMAP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$src" || exit 1
command -v man >/dev/null && command -v groff >/dev/null ||
	{ echo "SKIP man-pages: no man or groff here (Debian: man-db)"; exit 77; }
fail=0
# The command names of the table: lines like { "maps", cmd_maps, "..." }.
cmds=$(sed -n 's/^[[:space:]]*{ "\([a-z0-9-]*\)", cmd_[a-z0-9_]*,.*/\1/p' cli/main.c)
[ "$(printf '%s\n' "$cmds" | wc -l)" -gt 10 ] || { echo "FAIL man-commands: no command table in cli/main.c"; exit 1; }
missing='' unnamed='' unlisted=''
seealso=$(sed -n '/^\.SH SEE ALSO/,/^\.SH/p' man/pagemap.1)
for c in $cmds; do
	f=man/pagemap-$c.1
	if [ ! -e "$f" ]; then missing="$missing $c"; continue; fi
	# NAME of the page (an alias's: its target's) lists pagemap-NAME.
	sed -n '/^\.SH NAME/,/^\.SH/p' "$f" | grep -q "pagemap\\\\-$c\\b" || unnamed="$unnamed $c"
	# pagemap(1) points to the page (to an alias's target).
	t=$(basename "$(readlink "$f" || echo "$f")" .1)
	printf '%s\n' "$seealso" | grep -q "^\.BR ${t//-/\\\\-} (1)" || unlisted="$unlisted $t"
done
n=$(printf '%s\n' "$cmds" | wc -w)
[ -z "$missing" ] && echo "PASS man-every-command ($n commands)" || { echo "FAIL man-every-command: no man/pagemap-NAME.1 for:$missing"; fail=1; }
[ -z "$unnamed" ] && echo "PASS man-names-its-command" || { echo "FAIL man-names-its-command: NAME lacks pagemap-NAME:$unnamed"; fail=1; }
[ -z "$unlisted" ] && echo "PASS man-pagemap-see-also" || { echo "FAIL man-pagemap-see-also: pagemap(1) SEE ALSO lacks:$unlisted"; fail=1; }

# Every long option a command's --help lists is in its page, or in pagemap(1) (the global and output options).
build=${PAGEMAP_BUILD:-$src/build}
if [ -x "$build/pagemap" ]; then
	undoc=
	for c in $cmds; do
		[ -e "man/pagemap-$c.1" ] || continue
		for o in $("$build/pagemap" "$c" --help 2>/dev/null | grep -o -e '--[a-z][a-z0-9-]*' | sort -u); do
			cat "man/pagemap-$c.1" man/pagemap.1 | grep -q -F -e "${o//-/\\-}" || undoc="$undoc $c:$o"
		done
	done
	[ -z "$undoc" ] && echo "PASS man-options-of-help" ||
		{ echo "FAIL man-options-of-help: not in the command's page nor pagemap(1):$undoc"; fail=1; }
else
	echo "SKIP man-options-of-help: no $build/pagemap (make all)"
fi

# Every page renders from the clone: man -l prints nothing on stderr, groff -ww warns of nothing.
bad=() pages=0
for f in man/*.[1-8]; do
	pages=$((pages + 1))
	err=$(MANWIDTH=80 man -l "$f" 2>&1 >/dev/null)
	err+=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$f" 2>&1)
	lines=$(MANWIDTH=80 man -l "$f" 2>/dev/null | wc -l)
	[ -z "$err" ] && [ "$lines" -gt 10 ] || bad+=("$f: ${lines} lines; $(printf '%s' "$err" | head -n 2 | tr '\n' ' ')")
done
if [ ${#bad[@]} -eq 0 ]; then
	echo "PASS man-l-renders ($pages pages from the clone)"
else
	echo "FAIL man-l-renders"
	printf '  %s\n' "${bad[@]}"
	fail=1
fi
exit $fail
