#!/bin/sh
# Every tool's --help and its man page list the same options (issue 31):
# the help is made from the option table its parser uses (common/opt.h;
# the driver's opt_table), so this is the check that the page keeps up.
# sanitize: no (only the help text and the pages)
. "$(dirname "$0")/lib.sh"

# help_opts TOOL...: the long options an option line of the help names
help_opts() {
	"$@" --help | grep -o '^  \(-., \)\{0,1\}--[a-z][a-z0-9-]*\|^      --[a-z][a-z0-9-]*' |
	    sed 's/.*--/--/' | sort -u
}

# man_opts PAGE: the long options of the tags of its OPTIONS section
# (".It Fl -name", several per tag; "Fl -[no-]name" is both)
man_opts() {
	sed -n '/^\.Sh OPTIONS/,/^\.Sh /p' "$1" | grep '^\.It Fl' |
	    grep -o 'Fl -\(\[no-\]\)\{0,1\}[a-z][a-z0-9-]*' | sed 's/^Fl //' |
	    awk '/\[no-\]/ { sub(/\[no-\]/, ""); print "-" $0; sub(/^-/, "-no-"); print "-" $0; next }
	    { print "-" $0 }' | sort -u
}

t_tools() {
	n=0
	for b in "$BIN"/*; do
		t=$(basename "$b")
		[ "$t" = triage ] && continue
		[ -f "$TOP/man/man1/$t.1" ] || { echo "no man page for $t"; return 1; }
		help_opts "$b" >"$T/$t.help"
		man_opts "$TOP/man/man1/$t.1" >"$T/$t.man"
		if ! cmp -s "$T/$t.help" "$T/$t.man"; then
			echo "$t: --help (<) and $t(1) (>) differ:"
			diff "$T/$t.help" "$T/$t.man" | grep '^[<>]'
			return 1
		fi
		# the help fits a terminal
		"$b" --help | awk -v t="$t" 'length > 79 { print t ": too long: " $0; e = 1 } END { exit e }'
		n=$((n + 1))
	done
	# every tool of cmd/ was checked, none skipped
	eq "$(ls -d "$TOP"/cmd/*/ | wc -l | tr -d " ")" "$n" "tools"
}
check "each tool: --help lists exactly the options of its man page, in 79 columns" t_tools

t_triage() {
	help_opts sh "$TRIAGE" >"$T/triage.help"
	man_opts "$TOP/man/man1/triage.1" >"$T/triage.man"
	same "$T/triage.help" "$T/triage.man"
}
check "triage: --help lists exactly the options of triage(1)" t_triage

t_usage_errors() {
	# a usage error is one line and where the help is, in every tool
	for b in "$BIN"/*; do
		t=$(basename "$b")
		[ "$t" = triage ] && continue
		status 2 "$b" --no-such-option </dev/null >/dev/null 2>"$T/e"
		usage_err "$T/e" "$t" "unknown or ambiguous option '--no-such-option'"
	done
	status 2 sh "$TRIAGE" --no-such-option 2>"$T/e"
	usage_err "$T/e" triage "error: unrecognized arguments: --no-such-option"
}
check "a usage error: one line, then Try 'TOOL --help'" t_usage_errors

done_testing
