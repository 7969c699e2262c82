#!/bin/sh
# triage --baseline BASE --input CAND: two runs of generated traces compared
# end to end (trace files, saved jsonl reports, mapping/formal pairs on both
# sides): a run against itself, kernels made 30 % longer (exit 5 with
# --gate), renamed template kernels, new and removed kernels, other step
# counts, runs that cannot be compared (exit 6), the README's CI example,
# usage errors and failures.
. "$(dirname "$0")/lib.sh"

GEN=$TESTDIR/gen-trace
"$GEN" -s decode -n 2 -o "$T/a.json"

# slow PCT IN OUT: every GPU work item PCT percent longer (dur only)
slow() {
	jq -c --argjson f "$1" '.traceEvents |= map(if (.cat | IN("kernel", "gpu_memcpy", "gpu_memset"))
	    then .dur = .dur * (1 + $f / 100) else . end)' "$2" >"$3"
}

verdicts() { jq -r 'select(.type == "verdict") | "\(.scope)=\(.verdict)"' "$1" | xargs; }

t_self() {
	"$TRIAGE" -q --gate 0 --baseline "$T/a.json" --input "$T/a.json" --format jsonl >"$T/out"
	eq "same same same" "$(jq -r 'select(.type == "diff_row") | .status' "$T/out" | xargs)"
	eq "0 0 0" "$(jq -r 'select(.type == "diff_row") | .delta_us' "$T/out" | xargs)"
	eq "decode=neutral overall=neutral" "$(verdicts "$T/out")"
	"$TRIAGE" -q --gate 0 --baseline "$T/a.json" --input "$T/a.json" >"$T/md"
	has "$T/md" '^# Triage report: a.json vs a.json$'
	has "$T/md" '^\*\*decode: GPU time 0.36 ms -> 0.36 ms (+0.0%), neutral; 0 changed, 0 new, 0 removed, 3 the same.\*\*$'
}
check "a run against itself: only same rows, zero deltas, exit 0 under --gate 0" t_self

t_slower() {
	slow 30 "$T/a.json" "$T/slow.json"
	status 5 "$TRIAGE" -q --gate 10 --baseline "$T/a.json" --input "$T/slow.json" --format jsonl \
	    >"$T/out" 2>"$T/err"
	eq "decode=regression overall=regression" "$(verdicts "$T/out")"
	# 0.36 ms -> 0.468 ms: +30 % up to rounding in the last digit
	eq true "$(jq 'select(.type == "verdict" and .scope == "overall") |
	    (.delta_pct - 30 | fabs) < 1e-9 and .base == 360' "$T/out")"
	has "$T/err" "regression in stage 'decode': GPU time +30.0% (0.36 -> 0.47 ms), beyond --gate 10%; kernels: "
	# the report comes with the status
	"$TRIAGE" -q --gate 10 --baseline "$T/a.json" --input "$T/slow.json" >"$T/md" 2>/dev/null || :
	has "$T/md" '^| decode | regression | GPU time (kernel sum) | 0.36 ms | 0.47 ms | +30.0% | 10.0% |'
	# the other way round: an improvement, no gate tripped
	"$TRIAGE" -q --gate 10 --baseline "$T/slow.json" --input "$T/a.json" --format jsonl >"$T/out"
	eq "decode=improvement overall=improvement" "$(verdicts "$T/out")"
}
check "kernels 30 % longer: a regression of 30 %, exit 5 under --gate 10" t_slower

t_renamed() {
	# a retuned GEMM (tile size) and a norm with another template argument
	sed -e 's/tilesize128x128x64/tilesize256x128x64/g' \
	    -e 's/rmsnorm_kernel<__nv_bfloat16, 8>/rmsnorm_kernel<__nv_bfloat16, 16>/g' \
	    "$T/a.json" >"$T/retuned.json"
	"$TRIAGE" -q --baseline "$T/a.json" --input "$T/retuned.json" --format jsonl >"$T/out"
	eq "changed family 2 same name 0 changed family 2" "$(jq -r 'select(.type == "diff_row") |
	    "\(.status) \(.match) \(if .base_kernel then 2 else 0 end)"' "$T/out" | xargs)"
	eq true "$(jq 'select(.type == "diff_row" and .match == "family" and
	    (.kernel | test("tilesize256"))) | .base_kernel | test("tilesize128")' "$T/out")"
}
check "renamed template kernels and retuned tile sizes: changed, not new and removed" t_renamed

t_new_removed() {
	sed 's/sgl_demo::rmsnorm_kernel/sgl_demo::fused_add_layernorm/g' "$T/a.json" >"$T/other.json"
	"$TRIAGE" -q --baseline "$T/a.json" --input "$T/other.json" --format jsonl >"$T/out"
	eq "new:40 removed:-40 same:0 same:0" "$(jq -r 'select(.type == "diff_row") |
	    "\(.status):\(.delta_us)"' "$T/out" | sort | xargs)"
}
check "a kernel replaced by another: new and removed" t_new_removed

t_steps() {
	"$GEN" -s decode -n 5 -o "$T/a5.json"
	"$TRIAGE" -q --gate 0 --baseline "$T/a.json" --input "$T/a5.json" >"$T/md"
	has "$T/md" '^> Note: decode: the baseline has 2 steps and the candidate 5, so times are per step.$'
	has "$T/md" '^| decode | neutral | kernel_us_per_step | 0.18 ms | 0.18 ms | 0.0% | 0.0% | - | - |$'
}
check "other step counts: per step, and the report says so" t_steps

t_incomparable() {
	"$GEN" -s decode -n 2 -f vllm -o "$T/v.json"
	status 6 "$TRIAGE" -q --baseline "$T/a.json" --input "$T/v.json" >"$T/md" 2>"$T/err"
	has "$T/err" "the runs are not comparable: framework sglang vs vllm"
	has "$T/md" '^- \*\*Verdict\*\*: incomparable: framework sglang vs vllm$'
	"$TRIAGE" -q --force --baseline "$T/a.json" --input "$T/v.json" >/dev/null
	"$GEN" -s both -n 3 -o "$T/both.json"
	status 6 "$TRIAGE" -q --baseline "$T/both.json" --input "$T/a.json" >/dev/null 2>"$T/err"
	has "$T/err" "stages extend,decode vs decode"
}
check "another framework or other stages: exit 6 with the report, --force compares" t_incomparable

t_saved() {
	"$TRIAGE" -q --input "$T/a.json" --format jsonl --output "$T/a.jsonl"
	slow 30 "$T/a.json" "$T/slow.json"
	"$TRIAGE" -q --baseline "$T/a.jsonl" --input "$T/slow.json" --format jsonl >"$T/o1" 2>/dev/null
	"$TRIAGE" -q --baseline "$T/a.json" --input "$T/slow.json" --format jsonl >"$T/o2" 2>/dev/null
	same "$T/o2" "$T/o1"
	# gzip'd, and on the candidate side too
	gzip -c "$T/a.jsonl" >"$T/a.jsonl.gz"
	"$TRIAGE" -q --gate 0 --baseline "$T/a.jsonl.gz" --input "$T/a.jsonl" --format jsonl >"$T/o3"
	eq "decode=neutral overall=neutral" "$(verdicts "$T/o3")"
}
check "saved jsonl reports (plain or gzip) stand for their runs" t_saved

t_dual() {
	"$GEN" -s decode -n 2 --streams 2 -o "$T/m.json"
	"$GEN" -s decode -n 2 --streams 2 --graph -o "$T/f.json"
	slow 20 "$T/f.json" "$T/f2.json"
	status 5 "$TRIAGE" -q --gate 10 --baseline-mapping "$T/m.json" --baseline-formal "$T/f.json" \
	    --mapping-input "$T/m.json" --formal-input "$T/f2.json" --format jsonl >"$T/out" 2>/dev/null
	eq "mapping/formal mapping/formal" "$(jq -r 'select(.type == "diff_input") | .mode' "$T/out" | xargs)"
	# both sides have overlap rows: compared
	[ "$(grep -c '"type":"diff_overlap"' "$T/out")" -gt 0 ]
	# a single-trace baseline against a mapping/formal candidate: no overlap comparison
	"$TRIAGE" -q --baseline "$T/f.json" --mapping-input "$T/m.json" --formal-input "$T/f.json" \
	    --format jsonl >"$T/out"
	eq 0 "$(grep -c '"type":"diff_overlap"' "$T/out")"
	# the graph replays all four kernels, the all-reduce among them
	eq "same same same same" "$(jq -r 'select(.type == "diff_row") | .status' "$T/out" | xargs)"
}
check "mapping/formal pairs on both sides" t_dual

t_formats() {
	"$TRIAGE" -q --baseline "$T/a.json" --input "$T/a.json" --format csv >"$T/c"
	eq "stage,kernel,kernel_short,status,base_us,cand_us,delta_us,delta_pct,base_launches,cand_launches,location" \
	    "$(head -n 1 "$T/c" | tr -d '\r')"
	"$TRIAGE" -q --baseline "$T/a.json" --input "$T/a.json" --format tsv --table verdict >"$T/t"
	eq "overall neutral" "$(sed -n 3p "$T/t" | cut -f 2,3 | tr '\t' ' ')"
	"$TRIAGE" -q --baseline "$T/a.json" --input "$T/a.json" --format html --output "$T/h.html"
	has "$T/h.html" 'data-table="diff"'
	"$TRIAGE" -q --baseline "$T/a.json" --input "$T/a.json" --format json | jq -e '.reports[0].tables |
	    map(.table) == ["verdict", "diff_gpu", "diff"]' >/dev/null
}
check "every format" t_formats

t_usage() {
	status 2 "$TRIAGE" --gate 10 --input "$T/a.json" 2>"$T/err"
	has "$T/err" "gate, --force and --whole-run need --baseline"
	status 2 "$TRIAGE" --baseline "$T/a.json" "$T/a.json" 2>"$T/err"
	has "$T/err" "compares one run with another"
	status 2 "$TRIAGE" --baseline-mapping "$T/a.json" --input "$T/a.json" 2>"$T/err"
	has "$T/err" "baseline-mapping and --baseline-formal go together"
	status 2 "$TRIAGE" --baseline "$T/a.json" --baseline-mapping "$T/a.json" \
	    --baseline-formal "$T/a.json" --input "$T/a.json" 2>/dev/null
	status 2 "$TRIAGE" --compat reference --baseline "$T/a.json" --input "$T/a.json" 2>"$T/err"
	has "$T/err" "not a mode of the reference"
	status 2 "$TRIAGE" --baseline "$T/a.json" --input "$T/a.json" --gate 1e 2>"$T/err"
	has "$T/err" "argument --gate: invalid percentage: '1e'"
	status 2 "$TRIAGE" --baseline "$T/a.json" --input "$T/a.json" --all-ranks 2>/dev/null
	"$TRIAGE" --help | grep -q -- '--baseline PATH'
}
check "usage errors: exit 2 before any analysis" t_usage

t_failures() {
	printf '{"traceEvents":[{"ph":"X"' >"$T/cut.json"
	mkdir -p "$T/tmpdir"
	TMPDIR=$T/tmpdir status 1 "$TRIAGE" -q --baseline "$T/cut.json" --input "$T/a.json" \
	    >"$T/out" 2>"$T/err"
	eq 0 "$(wc -c <"$T/out" | tr -d ' ')" "stdout bytes"
	has "$T/err" "^baseline: trace-extract: .*cut.json': truncated JSON"
	has "$T/err" "the baseline's analysis failed (exit 1)"
	TMPDIR=$T/tmpdir status 1 "$TRIAGE" -q --baseline "$T/a.json" --input "$T/cut.json" \
	    >"$T/out" 2>"$T/err"
	eq 0 "$(wc -c <"$T/out" | tr -d ' ')" "stdout bytes"
	has "$T/err" "cut.json': truncated JSON"
	printf '{"type":"input","role":"single"}\n' >"$T/norows.jsonl"
	TMPDIR=$T/tmpdir status 3 "$TRIAGE" -q --baseline "$T/norows.jsonl" --input "$T/a.json" \
	    >"$T/out" 2>"$T/err"
	has "$T/err" "nothing to compare: the baseline"
	eq "" "$(ls -A "$T/tmpdir")" "left in TMPDIR"
}
check "a broken baseline or candidate: its error, no report, no temporary files" t_failures

t_readme() {
	# the README's CI example, as written, in a directory of its own, with
	# build/bin on PATH as the README says (triage is there too)
	mkdir -p "$T/ci/base" "$T/ci/cand"
	cp "$T/a.json" "$T/ci/base/run.json"
	slow 30 "$T/a.json" "$T/ci/cand/run.json"
	sed -n '/^<!-- t9500 -->$/,/^```$/p' "$TOP/README.md" | sed '1,2d;$d' >"$T/example.sh"
	[ -s "$T/example.sh" ]
	(cd "$T/ci" && PATH=$BIN:$PATH status 5 sh "$T/example.sh" >"$T/ci.out" 2>"$T/ci.err")
	has "$T/ci/diff.md" 'regression'
	eq 30 "$(jq -r 'select(.type == "verdict" and .scope == "overall") | .delta_pct | round' "$T/ci/diff.jsonl")"
}
check "the README's CI example runs as written" t_readme

done_testing
