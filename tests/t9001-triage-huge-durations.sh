#!/bin/sh
# Kernel durations beyond a year are corrupt values; two of 1e308 us would
# overflow every sum to infinity.  trace-extract skips such events with a
# counted warning, and the report is built from the rest.
. "$(dirname "$0")/lib.sh"

t_huge_skipped() {
	printf '[{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1e308, "pid": 0, "tid": 7, "args": {"stream": 7}},\n {"ph": "X", "cat": "kernel", "name": "k", "ts": 5, "dur": 1e308, "pid": 0, "tid": 7, "args": {"stream": 7}},\n {"ph": "X", "cat": "kernel", "name": "ok_kernel", "ts": 9, "dur": 40, "pid": 0, "tid": 7, "args": {"stream": 7}}]\n' >"$T/huge.json"
	status 0 "$TRIAGE" --input "$T/huge.json" >"$T/out" 2>"$T/err"
	has "$T/err" "2 events skipped: dur_over_a_year"
	has "$T/out" '^| ok_kernel | other | 0.04 ms | 100.0% | 1 | unresolved | - |$'
	hasnt "$T/out" '^| k |'
}
check "kernel times beyond a year are skipped with a warning; the rest is tabled" t_huge_skipped

t_only_huge() {
	printf '[{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1e308, "pid": 0, "tid": 7, "args": {"stream": 7}}]\n' >"$T/only.json"
	status 3 "$TRIAGE" --input "$T/only.json" >"$T/out2" 2>"$T/err2"
	eq 0 "$(wc -c <"$T/out2" | tr -d ' ')" "stdout bytes"
	has "$T/err2" "dur_over_a_year"
}
check "nothing but absurd durations: exit 3" t_only_huge

done_testing
