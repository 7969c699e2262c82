#!/bin/sh
# Kernel durations that sum past the double range.  The reference prints the
# infinite totals ("inf ms"); here kernel-map writes the total as null and
# fuse-detect rejects the row ("kernel_row needs ... total_us"), so the whole
# report fails with a message that does not point at the trace.  Known bug in
# kernel-map / fuse-detect, reported to their owners; this test fails until
# it is fixed.
. "$(dirname "$0")/lib.sh"

t_inf_total() {
	printf '[{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1e308, "pid": 0, "tid": 7, "args": {"stream": 7}},\n {"ph": "X", "cat": "kernel", "name": "k", "ts": 5, "dur": 1e308, "pid": 0, "tid": 7, "args": {"stream": 7}}]\n' >"$T/huge.json"
	set +e
	"$TRIAGE" --input "$T/huge.json" >"$T/out" 2>"$T/err"
	rc=$?
	set -e
	hasnt "$T/err" "kernel_row needs"
	eq 0 "$rc"
	has "$T/out" "^Kernel Table"
}
check "kernel times that overflow to infinity still give a report" t_inf_total

done_testing
