#!/bin/sh
# trace-diff: options, exit status, inputs it refuses, the candidate's
# records passing through, and write errors.
. "$(dirname "$0")/lib.sh"

TD=$BIN/trace-diff

kr() {
	printf '{"type":"kernel_row","t":0,"stage":"decode","kernel":"%s","total_us":%s,"stage_total_us":0}\n' "$1" "$2"
}

t_usage() {
	kr k 1 >"$T/a"
	status 2 "$TD" "$T/a" 2>"$T/err"
	usage_err "$T/err" trace-diff "--baseline FILE is required"
	status 2 "$TD" --baseline "$T/a" --gate x "$T/a" 2>"$T/err"
	has "$T/err" "bad --gate value, not a number: x"
	status 2 "$TD" --baseline "$T/a" --gate -5 "$T/a" 2>"$T/err"
	has "$T/err" "bad --gate value, negative: -5"
	status 2 "$TD" --baseline "$T/a" --gate inf "$T/a" 2>/dev/null
	status 2 "$TD" --baseline - - </dev/null 2>"$T/err"
	has "$T/err" "cannot both be the standard input"
	status 2 "$TD" --baseline "$T/a" "$T/a" "$T/a" 2>/dev/null
	status 2 "$TD" --bogus 2>/dev/null
	status 2 "$TD" --compat reference --baseline "$T/a" "$T/a" 2>"$T/err"
	has "$T/err" "the reference analyzer does not compare runs"
	"$TD" --help | grep -q -- '--whole-run'
	"$TD" --baseline "$T/a" --gate 2.5 "$T/a" >/dev/null
}
check "bad options: usage and exit 2" t_usage

t_nothing() {
	kr k 1 >"$T/a"
	printf '{"type":"input","role":"single"}\n' >"$T/empty"
	status 3 "$TD" --baseline "$T/empty" "$T/a" >/dev/null 2>"$T/err"
	has "$T/err" "nothing to compare: the baseline '$T/empty' has no kernel_row records"
	status 3 "$TD" --baseline "$T/a" <"$T/empty" >/dev/null 2>"$T/err"
	has "$T/err" "nothing to compare: the candidate '<stdin>' has no kernel_row records"
	# a diff given as a run
	"$TD" --no-pass --baseline "$T/a" "$T/a" >"$T/diff"
	status 3 "$TD" --baseline "$T/diff" "$T/a" >/dev/null 2>"$T/err"
	has "$T/err" "holds trace-diff records, not a run's"
}
check "a run without kernel rows: exit 3, saying what it holds" t_nothing

t_refused() {
	kr k 1 >"$T/a"
	{ printf '{"type":"run","id":1,"label":"x"}\n'; kr k 1; } >"$T/bundle"
	status 1 "$TD" --baseline "$T/bundle" "$T/a" >/dev/null 2>"$T/err"
	has "$T/err" "^trace-diff: $T/bundle:1: a bundle of several runs"
	# two saved reports concatenated: each numbers its traces from 0
	{ printf '{"type":"trace","t":0}\n'; kr k 1; printf '{"type":"trace","t":0}\n'; kr k 1; } >"$T/cat"
	status 1 "$TD" --baseline "$T/cat" "$T/a" >/dev/null 2>"$T/err"
	has "$T/err" "^trace-diff: $T/cat:3: trace 0 again: these records hold two reports"
	printf '{"type":"kernel_row","t":0,"stage":"decode","kernel":"k","total_us":-3,"stage_total_us":0}\n' >"$T/neg"
	status 1 "$TD" --baseline "$T/a" "$T/neg" >/dev/null 2>"$T/err"
	has "$T/err" "^trace-diff: $T/neg:1: kernel_row record: member 'total_us' is not a finite, non-negative number\$"
	printf '{"type":"kernel_row","t":0,"stage":"decode","kernel":"k","total_us":1e400,"stage_total_us":0}\n' >"$T/inf"
	status 1 "$TD" --baseline "$T/inf" "$T/a" >/dev/null 2>"$T/err"
	has "$T/err" "total_us"
	# two finite rows whose sum overflows
	{ kr k 1e308; kr k 1e308; } >"$T/big"
	status 1 "$TD" --baseline "$T/a" "$T/big" >/dev/null 2>"$T/err"
	has "$T/err" "the times of stage 'decode' add up to more than a double holds"
	printf '{"type":"kernel_row","t":0,"kernel":"k","total_us":1,"stage_total_us":0}\n' >"$T/bad"
	status 1 "$TD" --baseline "$T/a" "$T/bad" >/dev/null 2>"$T/err"
	has "$T/err" "$T/bad:1: kernel_row record: member 'stage' is missing"
	status 1 "$TD" --baseline "$T/nonexistent" "$T/a" >/dev/null 2>"$T/err"
	has "$T/err" "nonexistent"
}
check "a bundle, a negative or infinite figure, a malformed record: exit 1" t_refused

t_pass() {
	{ printf '{"type":"input","role":"single","framework":"none"}\n'; kr k 1
	  printf '{"type":"whatever","x":1}\n'; } >"$T/c"
	kr k 1 >"$T/a"
	"$TD" --baseline "$T/a" <"$T/c" >"$T/out"
	head -n 3 "$T/out" >"$T/head"
	same "$T/c" "$T/head"
	eq "diff_input diff_input diff_metric diff_row verdict verdict" \
	    "$(tail -n +4 "$T/out" | jq -r .type | xargs)"
	"$TD" --no-pass --baseline "$T/a" <"$T/c" >"$T/out"
	eq "diff_input" "$(head -n 1 "$T/out" | jq -r .type)"
	# the baseline from the standard input
	"$TD" --no-pass --baseline - "$T/c" <"$T/a" >"$T/out2"
	same "$T/out" "$T/out2"
}
check "the candidate's records pass through first (not with --no-pass)" t_pass

t_write_error() {
	kr k 1 >"$T/a"
	status 1 "$TD" --baseline "$T/a" "$T/a" >/dev/full 2>"$T/err"
	has "$T/err" "write error"
}
check "a write error: exit 1" t_write_error

done_testing
