#!/bin/sh
# scripts/triage reports the stage that failed, not the upstream stages that
# were killed by SIGPIPE when it stopped reading; nothing reaches stdout.
# sanitize: no (the driver's own logic; the tools it runs are tested under
# the sanitizers by their own scripts)
. "$(dirname "$0")/lib.sh"

# A tool directory where one filter is replaced by a failing stand-in.
fake_bin() {	# fake_bin DIR TOOL CODE
	mkdir -p "$1"
	for t in "$BIN"/*; do
		ln -sf "$t" "$1/${t##*/}"
	done
	rm -f "$1/$2"
	printf '#!/bin/sh\necho "%s: simulated failure" >&2\nexit %s\n' "$2" "$3" >"$1/$2"
	chmod +x "$1/$2"
}

"$TESTDIR/gen-trace" -n 200 -l 8 -o "$T/big.json"

t_downstream_failure() {
	fake_bin "$T/b1" kernel-map 1
	TRIAGE_BINDIR=$T/b1 status 1 "$TRIAGE" --input "$T/big.json" >"$T/out" 2>"$T/err"
	eq 0 "$(wc -c <"$T/out" | tr -d ' ')" "stdout bytes"
	has "$T/err" "kernel-map: simulated failure"
}
check "a failing kernel-map: exit 1, its message, no report" t_downstream_failure

t_render_failure() {
	fake_bin "$T/b2" triage-render 3
	TRIAGE_BINDIR=$T/b2 status 3 "$TRIAGE" --input "$T/big.json" >"$T/out2" 2>"$T/err2"
	eq 0 "$(wc -c <"$T/out2" | tr -d ' ')" "stdout bytes"
}
check "a failing last stage keeps its own exit code" t_render_failure

t_mapping_failure() {
	fake_bin "$T/b3" overlap-sweep 1
	TRIAGE_BINDIR=$T/b3 status 1 "$TRIAGE" --mapping-input "$T/big.json" \
	    --formal-input "$T/big.json" >"$T/out3" 2>"$T/err3"
	eq 0 "$(wc -c <"$T/out3" | tr -d ' ')" "stdout bytes"
	has "$T/err3" "overlap-sweep: simulated failure"
}
check "mapping/formal: a failing overlap-sweep is reported" t_mapping_failure

# The mapping pipeline and the formal extraction run side by side.
t_both_sides_fail() {
	printf '{"traceEvents":[{"ph":"X"' >"$T/cut-m.json"
	printf '{"traceEvents":[{"ph":"X"' >"$T/cut-f.json"
	mkdir -p "$T/tmpdir"
	TMPDIR=$T/tmpdir status 1 "$TRIAGE" --mapping-input "$T/cut-m.json" \
	    --formal-input "$T/cut-f.json" >"$T/out4" 2>"$T/err4"
	eq 0 "$(wc -c <"$T/out4" | tr -d ' ')" "stdout bytes"
	has "$T/err4" "cut-m.json': truncated JSON"
	has "$T/err4" "cut-f.json': truncated JSON"
	# a broken mapping trace stops the flow before any formal-side tool
	TMPDIR=$T/tmpdir status 1 "$TRIAGE" --mapping-input "$T/cut-m.json" \
	    --formal-input "$T/big.json" >"$T/out5" 2>"$T/err5"
	eq 0 "$(wc -c <"$T/out5" | tr -d ' ')" "stdout bytes"
	eq 1 "$(grep -c . "$T/err5")" "error lines"
	# the temporary record files are gone
	eq "" "$(ls -A "$T/tmpdir")" "left in TMPDIR"
}
check "mapping/formal: both sides' errors, exit 1, no report, no temporary files left" t_both_sides_fail

t_side_by_side_report() {
	TRIAGE_BINDIR=$BIN "$TRIAGE" --mapping-input "$T/big.json" --formal-input "$T/big.json" \
	    --format jsonl >"$T/dual.json"
	# the same report as the tools give when run one after the other
	"$BIN/trace-extract" -q --role mapping "$T/big.json" | "$BIN/trace-stage" -q |
	    "$BIN/trace-health" -q >"$T/m.jsonl"
	"$BIN/kernel-map" -q --sites-only <"$T/m.jsonl" >"$T/sites.jsonl"
	cat "$T/sites.jsonl" >>"$T/m.jsonl"
	"$BIN/trace-extract" -q --role formal --no-windows "$T/big.json" | "$BIN/trace-stage" -q |
	    "$BIN/trace-health" -q | "$BIN/kernel-map" -q --mapping "$T/sites.jsonl" |
	    "$BIN/step-stats" -q | "$BIN/kernel-roofline" -q --mapping "$T/m.jsonl" |
	    "$BIN/overlap-sweep" -q --mapping "$T/m.jsonl" | "$BIN/fuse-detect" -q |
	    { cat; grep '^{"type":"health",' "$T/sites.jsonl"; } |
	    "$BIN/triage-render" -q --format jsonl >"$T/seq.json"
	same "$T/seq.json" "$T/dual.json"
	# one verdict per trace: the formal's, then the mapping's
	eq "formal mapping" "$(jq -r 'select(.type == "health") | .role' "$T/dual.json" | tr '\n' ' ' |
	    sed 's/ $//')" "health records"
	eq 3 "$(jq -s 'map(select(.type == "overlap_row")) | length' "$T/dual.json")" "overlap rows"
}
check "mapping/formal side by side: the report of the sequential pipelines" t_side_by_side_report

# The last filter to read the event records drops them for the reports
# that are tables only (issue 30): each such report is the one the whole
# stream gives, and the records report keeps them.
t_drop_events() {
	"$BIN/trace-extract" -q "$T/big.json" | "$BIN/trace-stage" -q | "$BIN/trace-health" -q |
	    "$BIN/kernel-map" -q | "$BIN/step-stats" -q | "$BIN/kernel-roofline" -q |
	    "$BIN/fuse-detect" -q >"$T/whole.jsonl"
	for f in md json html csv; do
		TRIAGE_BINDIR=$BIN "$TRIAGE" --input "$T/big.json" --format "$f" >"$T/drop.$f"
		"$BIN/triage-render" -q --format "$f" <"$T/whole.jsonl" >"$T/whole.$f"
		same "$T/whole.$f" "$T/drop.$f" || return 1
	done
	TRIAGE_BINDIR=$BIN "$TRIAGE" --input "$T/big.json" --format jsonl >"$T/drop.jsonl"
	eq "$(grep -c '^{"type":"kernel",' "$T/whole.jsonl")" \
	    "$(grep -c '^{"type":"kernel",' "$T/drop.jsonl")" "kernel records of -f jsonl"
	# what fuse-detect is given: no event record for a markdown report
	mkdir -p "$T/spy"
	for t in "$BIN"/*; do
		ln -sf "$t" "$T/spy/${t##*/}"
	done
	rm -f "$T/spy/fuse-detect"
	printf '#!/bin/sh
tee "%s" | "%s" "$@"
' "$T/fuse.in" "$BIN/fuse-detect" >"$T/spy/fuse-detect"
	chmod +x "$T/spy/fuse-detect"
	TRIAGE_BINDIR=$T/spy "$TRIAGE" --input "$T/big.json" >/dev/null
	eq 0 "$(grep -c -e '^{"type":"kernel",' -e '^{"type":"launch",' "$T/fuse.in")" "events given"
	has "$T/fuse.in" '^{"type":"kernel_row",'
	TRIAGE_BINDIR=$BIN "$TRIAGE" --mapping-input "$T/big.json" --formal-input "$T/big.json" \
	    --format jsonl >"$T/dual.jsonl"
	TRIAGE_BINDIR=$BIN "$TRIAGE" --mapping-input "$T/big.json" --formal-input "$T/big.json" \
	    >"$T/dual.md"
	"$BIN/triage-render" -q <"$T/dual.jsonl" >"$T/dual.whole.md"
	same "$T/dual.whole.md" "$T/dual.md"
}
check "the tables-only reports without the event records: the same reports" t_drop_events

t_dual_stdin() {
	# the two sides run as background jobs, which must still see stdin
	"$TRIAGE" --mapping-input - --formal-input "$T/big.json" <"$T/big.json" >"$T/m-stdin.md"
	"$TRIAGE" --mapping-input "$T/big.json" --formal-input - <"$T/big.json" >"$T/f-stdin.md"
	"$TRIAGE" --mapping-input "$T/big.json" --formal-input "$T/big.json" >"$T/files.md"
	has "$T/m-stdin.md" 'Overlap'
	# the same tables; only the input lines and the health table's trace
	# column name "-"
	grep -v '^- \*\*\|^# Triage' "$T/files.md" | sed 's/^| \(mapping\|formal\): \(big\.json\|-\) |/| \1: TRACE |/' >"$T/a"
	grep -v '^- \*\*\|^# Triage' "$T/m-stdin.md" | sed 's/^| \(mapping\|formal\): \(big\.json\|-\) |/| \1: TRACE |/' >"$T/b"
	grep -v '^- \*\*\|^# Triage' "$T/f-stdin.md" | sed 's/^| \(mapping\|formal\): \(big\.json\|-\) |/| \1: TRACE |/' >"$T/c"
	same "$T/a" "$T/b"
	same "$T/a" "$T/c"
}
check "mapping/formal: either trace may come on stdin" t_dual_stdin

t_mapping_fails_first() {
	# A broken mapping trace: no report can come, so the formal extraction is
	# stopped, not waited for; here it would wait forever on a silent pipe.
	mkfifo "$T/silent"
	status 1 timeout 30 "$TRIAGE" --mapping-input "$T/cut-m.json" \
	    --formal-input "$T/silent" >"$T/out6" 2>"$T/err6"
	has "$T/err6" "cut-m.json': truncated JSON"
	eq 0 "$(wc -c <"$T/out6" | tr -d ' ')" "stdout bytes"
	if grep -q 'Terminated' "$T/err6"; then
		echo "the shell reported the stopped job:"
		cat "$T/err6"
		return 1
	fi
}
check "mapping/formal: a failed mapping stops the formal extraction at once" t_mapping_fails_first

done_testing
