# pagemap.bash - bash completion for pagemap(1). The words come from the tool itself
# (pagemap --complete-words [CMD]), read from the same tables its commands parse options with
# and print columns from, so a new command, option or column completes without an edit here.

# _pagemap_words BIN [CMD]: the words, one "KIND WORD..." per line, into the array _pagemap_w.
_pagemap_words()
{
	local IFS=$'\n'
	_pagemap_w=($("$@" 2>/dev/null))
}

# The words of one KIND (cmd, opt, col; arg and val take the option as well).
_pagemap_kind()
{
	local l
	for l in "${_pagemap_w[@]}"; do
		case $l in
		"$1 "*) printf '%s\n' "${l#"$1 "}" ;;
		esac
	done
}

# Does option $1 take a value (per the words of the command or the global ones)?
_pagemap_takes_arg()
{
	local l
	for l in "${_pagemap_w[@]}"; do
		case "$l " in
		"arg $1 "* | "arg -"?" $1 "*) return 0 ;;
		esac
	done
	return 1
}

# The long name of option $1 (-o gives --output).
_pagemap_long()
{
	local l
	case $1 in --*) echo "$1"; return ;; esac
	for l in "${_pagemap_w[@]}"; do
		case "$l " in
		"arg $1 --"*) l=${l#"arg $1 "}; echo "${l%% *}"; return ;;
		esac
	done
	echo "$1"
}

# Is the line $1 among the words (the command takes a PID: "pid")?
_pagemap_has()
{
	local l
	for l in "${_pagemap_w[@]}"; do
		[ "$l" = "$1" ] && return 0
	done
	return 1
}

_pagemap_pids()
{
	local d
	for d in /proc/[0-9]*; do
		echo "${d#/proc/}"
	done
}

# A column list: NAME,NAME,... with an optional leading +; completes its last name.
_pagemap_columns()
{
	local cur=$1 head=
	case $cur in +*) head=+; cur=${cur#+} ;; esac
	case $cur in *,*) head=$head${cur%,*},; cur=${cur##*,} ;; esac
	local IFS=$'\n'
	COMPREPLY=($(compgen -P "$head" -W "$(_pagemap_kind col)" -- "$cur"))
	compopt -o nospace 2>/dev/null
}

# The value of option $1 (long name) being typed as $2.
_pagemap_value()
{
	local IFS=$'\n'
	case $1 in
	--output | --sort) _pagemap_columns "$2" ;;
	--pid) COMPREPLY=($(compgen -W "$(_pagemap_pids)" -- "$2")) ;;
	--root) COMPREPLY=($(compgen -d -- "$2")) ;;
	*)
		local v
		v=$(_pagemap_kind val | sed -n "s|^$1 ||p")
		COMPREPLY=($(compgen -W "$v" -- "$2"))
		;;
	esac
}

_pagemap()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev= bin=${COMP_WORDS[0]} cmd= i
	local -a _pagemap_w
	((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
	COMPREPLY=()

	# The command is the first word that is not a global option or its value.
	_pagemap_words "$bin" --complete-words
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--) break ;;
		-*) _pagemap_takes_arg "${COMP_WORDS[i]}" && ((i++)) ;;
		*) cmd=${COMP_WORDS[i]}; break ;;
		esac
	done
	[ -n "$cmd" ] && _pagemap_words "$bin" --complete-words "$cmd"

	if [ "$prev" != "${prev#-}" ] && _pagemap_takes_arg "$prev"; then
		_pagemap_value "$(_pagemap_long "$prev")" "$cur"
	elif [ "$cur" != "${cur#-}" ]; then
		local IFS=$'\n'
		COMPREPLY=($(compgen -W "$(_pagemap_kind opt)" -- "$cur"))
	elif [ -z "$cmd" ]; then
		local IFS=$'\n'
		COMPREPLY=($(compgen -W "$(_pagemap_kind cmd)" -- "$cur"))
	elif _pagemap_has pid; then
		local IFS=$'\n'
		COMPREPLY=($(compgen -W "$(_pagemap_pids)" -- "$cur"))
	fi
	return 0
}
complete -F _pagemap pagemap
