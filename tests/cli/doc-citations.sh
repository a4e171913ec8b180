#!/bin/bash
# doc-citations.sh - every section (§N) cited of docs/kernel-interface.md exists there, and no comment or doc
# cites a document outside the repository (the shared kernel ABI notes the project started from).
# Usage: tests/cli/doc-citations.sh
src=${PAGEMAP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
doc=docs/kernel-interface.md
cd "$src" || exit 1

# search ERE: FILE:LINE:TEXT of every tracked file (or, out of git, every file but build output) that matches.
search() {
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git grep -n -I -E -e "$1" -- . ':!tests/cli/doc-citations.sh'
	else
		grep -r -n -I -E --exclude-dir='build*' --exclude-dir=.git --exclude=doc-citations.sh -e "$1" . | sed 's|^\./||'
	fi
}

# The section numbers the document has: "## 6. ..." gives 6, "### 6.2 ..." gives 6.2.
sections=$(sed -n -E 's/^#{2,3} ([0-9]+(\.[0-9]+)?)\.? .*/\1/p' "$doc")
[ -n "$sections" ] || { echo "FAIL doc-sections: no numbered sections in $doc"; exit 1; }

# Every §N on a line naming the document, on every line of the document itself and of the fixtures' README
# (which says its § are the document's), as FILE:LINE:§N. "§1.1-1.3" is checked at both ends.
cited() {
	search '§[0-9]' | awk -v doc="$doc" '{
		split($0, p, ":"); f = p[1]
		if (f != doc && f != "tests/fixtures/README.md" && $0 !~ /kernel-interface\.md/)
			next
		text = substr($0, length(p[1]) + length(p[2]) + 3)
		while (match(text, /§[0-9]+(\.[0-9]+)?(-[0-9]+(\.[0-9]+)?)?/)) {
			print f ":" p[2] ":" substr(text, RSTART, RLENGTH)
			text = substr(text, RSTART + RLENGTH)
		}
	}'
}

bad=0 count=0
while IFS=: read -r f n ref; do
	count=$((count + 1))
	for s in $(printf '%s\n' "${ref#§}" | tr '-' ' '); do
		if ! printf '%s\n' "$sections" | grep -q -x -F "$s"; then
			echo "  $f:$n: §$s is not a section of $doc"
			bad=1
		fi
	done
done < <(cited)
if [ "$bad" = 0 ] && [ "$count" -gt 0 ]; then echo "PASS doc-sections-exist ($count citations)"; else echo "FAIL doc-sections-exist"; fi

# Citations of the notes outside the repository (spelt in two pieces so this file does not match itself).
outside=$(search "kernel""-abi|/work/shared/""docs")
if [ -z "$outside" ]; then echo "PASS doc-no-outside-citations"; else
	echo "FAIL doc-no-outside-citations"
	printf '%s\n' "$outside" | sed 's/^/  /'
fi
