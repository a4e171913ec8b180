#!/bin/bash
# completion.sh - the bash completion (completion/pagemap.bash) loaded in bash, asked as bash asks it
# (COMP_WORDS, COMP_CWORD), its candidates checked against the commands' files and their --help.
# Usage: tests/cli/completion.sh   (PAGEMAP_BUILD comes from make)
src=${PAGEMAP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PAGEMAP_BUILD:-$src/build}
pagemap="$build/pagemap"

# shellcheck source=../../completion/pagemap.bash
. "$src/completion/pagemap.bash" || { echo "FAIL completion-load"; exit 1; }

# ask WORD...: the candidates for the last word, sorted, one per line.
ask() {
	COMP_WORDS=("$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_pagemap
	printf '%s\n' "${COMPREPLY[@]}" | sort
}

# same NAME GOT WANT: two sorted lists are equal.
same() {
	if [ "$2" = "$3" ]; then echo "PASS $1"; else
		echo "FAIL $1"
		diff <(echo "$3") <(echo "$2") | sed 's/^/  /'
	fi
}

# Every subcommand, one file each (cli/cmd_NAME.c), and the ones --help lists, are completed.
files=$(cd "$src/cli" && ls cmd_*.c | sed 's/^cmd_//; s/\.c$//' | sort)
listed=$("$pagemap" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z0-9]*\) .*/\1/p' | sort)
got=$(ask "$pagemap" "")
same completion-commands "$got" "$files"
same completion-commands-help "$got" "$listed"
same completion-prefix "$(ask "$pagemap" p)" "$(printf '%s\n' $files | grep '^p')"

# Each command's options: every long option its --help shows at the start of a line is offered.
for c in $files; do
	want=$("$pagemap" "$c" --help | grep -oE '^ {1,8}(-[a-zA-Z], )?--[a-z][a-z-]*' | grep -oE -- '--[a-z-]+' | sort -u)
	got=$(ask "$pagemap" "$c" --)
	missing=$(comm -23 <(echo "$want") <(echo "$got"))
	if [ -n "$want" ] && [ -z "$missing" ] && echo "$got" | grep -qx -- --help; then
		echo "PASS completion-options-$c"
	else
		echo "FAIL completion-options-$c: not offered: $(echo $missing)"
	fi
done

# Columns after -o (and --sort) are the ones --help lists, aliases included; lists complete their last name.
for c in maps ps; do
	want=$("$pagemap" "$c" --help | sed -n '/^Available output columns:/,$p' | sed -n 's/^ *\([A-Z][A-Z_0-9-]*\)  .*/\1/p;' | sort)
	aliases=$("$pagemap" "$c" --help | sed -n 's/.*(-o also takes \(.*\))$/\1/p' | tr -d ' ' | tr ',' '\n')
	want=$(printf '%s\n' $want $aliases | sort -u)
	same "completion-columns-$c" "$(ask "$pagemap" "$c" -o "")" "$want"
done
same completion-column-list "$(ask "$pagemap" ps -o +PID,US)" "$(printf '%s\n' +PID,USER +PID,USS | sort)"
same completion-sort "$(ask "$pagemap" ps --sort PS)" "PSS"

# PIDs where the usage takes one; none where it does not; global options and their values.
if ask "$pagemap" maps "" | grep -qx "$$"; then echo "PASS completion-pids"; else echo "FAIL completion-pids: $$ not offered"; fi
same completion-no-pids "$(ask "$pagemap" ps "")" ""
same completion-pid-option "$(ask "$pagemap" ps -p "$$" | grep -x "$$")" "$$"
same completion-global "$(ask "$pagemap" --ro)" "--root"
same completion-backend "$(ask "$pagemap" --backend "")" "$(printf '%s\n' auto pread scan)"
same completion-after-root "$(ask "$pagemap" --root /tmp ma)" "maps"
