#!/bin/sh
# trace-extract's walk of a profile directory (issue 21): iterative, at most
# 64 levels deep with a warning past that (a tree 1,000 levels deep once
# overflowed the stack: two PATH_MAX buffers per level), symlinked
# directories not followed (no loop), special files never opened, and a
# trace reached under two names counted once.
. "$(dirname "$0")/lib.sh"

GEN=$TESTDIR/gen-trace
EX=$BIN/trace-extract

t_deep() {
	mkdir -p "$T/deep"
	(cd "$T/deep" && mkdir -p "$(awk 'BEGIN { for (i = 0; i < 1000; i++) printf "a/" }')")
	"$GEN" -n 1 -l 1 -o "$T/deep/a/a/t.trace.json"
	"$GEN" -n 1 -l 1 -o "$T/deep/$(awk 'BEGIN { for (i = 0; i < 999; i++) printf "a/" }')far.trace.json"
	set +e
	"$EX" "$T/deep" >"$T/out" 2>"$T/err"
	rc=$?
	set -e
	eq 0 "$rc" "exit status"
	jq -r 'select(.type == "trace") | .path' "$T/out" >"$T/paths"
	eq "$T/deep/a/a/t.trace.json" "$(cat "$T/paths")" "the trace found"
	has "$T/err" "warning: 1 directory more than 64 levels below '$T/deep' not searched for traces"
	eq 1 "$(grep -c 'not searched' "$T/err")" "warnings"
	# only the deep one: nothing to analyze, said so, still no signal
	rm "$T/deep/a/a/t.trace.json"
	status 3 "$EX" "$T/deep" >/dev/null 2>"$T/err"
	has "$T/err" "no trace files found under '$T/deep'"
}
check "a directory 1,000 levels deep: searched 64 levels down, exit 0 or 3, never a signal" t_deep

t_loops() {
	mkdir -p "$T/loop/run"
	"$GEN" -n 1 -l 1 -o "$T/loop/run/t.trace.json"
	ln -s .. "$T/loop/run/up"
	ln -s . "$T/loop/run/here"
	ln -s ../run "$T/loop/again"
	"$EX" -q "$T/loop" | jq -r 'select(.type == "trace") | .path' >"$T/paths"
	eq "$T/loop/run/t.trace.json" "$(cat "$T/paths")" "traces"
}
check "symlinked directories are not followed: loops end, nothing counted twice" t_loops

t_special() {
	mkdir -p "$T/sp"
	"$GEN" -n 1 -l 1 -o "$T/sp/t.trace.json"
	mkfifo "$T/sp/pipe.trace.json"
	ln -s t.trace.json "$T/sp/soft.trace.json"
	# a FIFO named like a trace would block a reader forever: not opened
	"$EX" -q --all-ranks "$T/sp" 2>/dev/null | jq -r 'select(.type == "input") | .traces[]' >"$T/paths"
	eq "$T/sp/t.trace.json" "$(cat "$T/paths")" "traces"
}
check "a FIFO named like a trace is not opened; a symlinked trace counts once" t_special

done_testing
