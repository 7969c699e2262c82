#!/bin/sh
# trace-diff: verdicts per stage and overall, the gate (exit 5, naming the
# kernels), runs that cannot be compared (exit 6, --force), and the fuse
# and overlap transitions.
. "$(dirname "$0")/lib.sh"

TD=$BIN/trace-diff

kr() {	# kr STAGE KERNEL US
	printf '{"type":"kernel_row","t":0,"stage":"%s","kernel":"%s","category":"gemm","total_us":%s,"launches":1,"stage_total_us":0}\n' \
	    "$1" "$2" "$3"
}
inp() {	# inp FRAMEWORK [MODEL]
	printf '{"type":"input","role":"single","path":"/r/x.json","framework":"%s"%s}\n' "$1" \
	    "${2:+,\"model\":\"$2\"}"
}
verdicts() { jq -r 'select(.type == "verdict") | "\(.scope)=\(.verdict)"' "$1" | xargs; }

t_gate() {
	# decode: 1000 -> 1300 us (+30 %, gemm +250, norm +50); extend: 500 -> 510 (+2 %)
	{ inp sglang; kr extend 'void p' 500; kr decode 'void gemm' 800; kr decode 'void norm' 200; } >"$T/a"
	{ inp sglang; kr extend 'void p' 510; kr decode 'void gemm' 1050; kr decode 'void norm' 250; } >"$T/b"
	status 5 "$TD" --no-pass --gate 10 --baseline "$T/a" "$T/b" >"$T/out" 2>"$T/err"
	eq "extend=neutral decode=regression overall=regression" "$(verdicts "$T/out")"
	eq "decode kernel_us 30 10" "$(jq -r 'select(.type == "verdict" and .scope == "overall") |
	    "\(.stage) \(.metric) \(.delta_pct) \(.threshold_pct)"' "$T/out")"
	# the kernels that account for it: gemm alone is 250 of 300 us, over 80 %
	eq '[{"kernel":"void gemm","status":"changed","delta_us":250}]' \
	    "$(jq -c 'select(.type == "verdict" and .scope == "decode") | .kernels' "$T/out")"
	has "$T/err" "^trace-diff: regression in stage 'decode': GPU time +30.0% (1.00 -> 1.30 ms), beyond --gate 10%; kernels: void gemm +0.250 ms (changed)\$"
	# above the change: neutral, exit 0; no gate: the verdict at 5 %, exit 0
	"$TD" --no-pass --gate 40 --baseline "$T/a" "$T/b" >"$T/out"
	eq "extend=neutral decode=neutral overall=neutral" "$(verdicts "$T/out")"
	"$TD" --no-pass --baseline "$T/a" "$T/b" >"$T/out" 2>"$T/err"
	eq "extend=neutral decode=regression overall=regression" "$(verdicts "$T/out")"
	eq 5 "$(jq 'select(.type == "verdict" and .scope == "overall") | .threshold_pct' "$T/out")"
	[ ! -s "$T/err" ]
}
check "--gate: exit 5 when a stage grows beyond it, naming the kernels" t_gate

t_improvement() {
	{ inp sglang; kr decode 'void gemm' 800; kr decode 'void norm' 200; } >"$T/a"
	{ inp sglang; kr decode 'void gemm' 500; kr decode 'void norm' 200; } >"$T/b"
	"$TD" --no-pass --gate 10 --baseline "$T/a" "$T/b" >"$T/out"
	eq "decode=improvement overall=improvement" "$(verdicts "$T/out")"
	eq "-30 void gemm" "$(jq -r 'select(.type == "verdict" and .scope == "overall") |
	    "\(.delta_pct) \(.kernels[0].kernel)"' "$T/out")"
}
check "a faster candidate is an improvement and passes the gate" t_improvement

t_overall_worst() {
	{ inp sglang; kr extend 'void p' 100; kr decode 'void d' 100; } >"$T/a"
	{ inp sglang; kr extend 'void p' 120; kr decode 'void d' 150; } >"$T/b"
	status 5 "$TD" --no-pass --gate 10 --baseline "$T/a" "$T/b" >"$T/out" 2>"$T/err"
	eq "decode 50" "$(jq -r 'select(.type == "verdict" and .scope == "overall") |
	    "\(.stage) \(.delta_pct)"' "$T/out")"
	# every stage beyond the gate is named
	eq 2 "$(grep -c 'regression in stage' "$T/err")"
}
check "overall: the stage with the largest regression" t_overall_worst

t_incomparable() {
	{ inp sglang; kr decode 'void d' 100; } >"$T/a"
	{ inp vllm; kr decode 'void d' 200; } >"$T/b"
	status 6 "$TD" --no-pass --gate 10 --baseline "$T/a" "$T/b" >"$T/out" 2>"$T/err"
	has "$T/err" "^trace-diff: the runs are not comparable: framework sglang vs vllm (--force compares them anyway)\$"
	# the stage is still compared; overall says why not
	eq "decode=regression overall=incomparable" "$(verdicts "$T/out")"
	eq "framework sglang vs vllm" "$(jq -r 'select(.scope == "overall") | .reason' "$T/out")"
	# --force: the stage decides, and the gate applies
	status 5 "$TD" --no-pass --force --gate 10 --baseline "$T/a" "$T/b" >"$T/out" 2>/dev/null
	eq "regression compared anyway (--force): framework sglang vs vllm" \
	    "$(jq -r 'select(.scope == "overall") | "\(.verdict) \(.reason)"' "$T/out")"
	# another model (when both name one)
	{ inp sglang Qwen/Qwen3-8B; kr decode 'void d' 100; } >"$T/a"
	{ inp sglang meta/Llama-3-8B; kr decode 'void d' 100; } >"$T/b"
	status 6 "$TD" --no-pass --baseline "$T/a" "$T/b" >/dev/null 2>"$T/err"
	has "$T/err" "model 'Qwen/Qwen3-8B' vs 'meta/Llama-3-8B'"
	{ inp sglang; kr decode 'void d' 100; } >"$T/b"
	"$TD" --no-pass --baseline "$T/a" "$T/b" >/dev/null
}
check "another framework or model: exit 6 unless --force" t_incomparable

t_stages_differ() {
	{ inp sglang; kr extend 'void p' 100; kr decode 'void d' 100; } >"$T/a"
	{ inp sglang; kr decode 'void d' 100; } >"$T/b"
	status 6 "$TD" --no-pass --baseline "$T/a" "$T/b" >"$T/out" 2>"$T/err"
	has "$T/err" "stages extend,decode vs decode"
	eq "extend=incomparable decode=neutral overall=incomparable" "$(verdicts "$T/out")"
	eq "the stage is only in the baseline" "$(jq -r 'select(.scope == "extend") | .reason' "$T/out")"
	eq "removed" "$(jq -r 'select(.type == "diff_row" and .stage == "extend") | .status' "$T/out")"
	"$TD" --no-pass --force --baseline "$T/a" "$T/b" >"$T/out"
	eq "extend=incomparable decode=neutral overall=neutral" "$(verdicts "$T/out")"
	# no stage in common: nothing decides, even forced
	{ inp sglang; kr extend 'void p' 100; } >"$T/c"
	"$TD" --no-pass --force --baseline "$T/c" "$T/b" >"$T/out"
	eq "incomparable" "$(jq -r 'select(.scope == "overall") | .verdict' "$T/out")"
	# --whole-run: every stage is "all", so they compare
	"$TD" --no-pass --whole-run --baseline "$T/c" "$T/b" >"$T/out"
	eq "all=neutral overall=neutral" "$(verdicts "$T/out")"
	eq '["all"]' "$(jq -c 'select(.type == "diff_input" and .side == "base") | .stages' "$T/out")"
}
check "other stages: incomparable stages, exit 6 unless --force; --whole-run" t_stages_differ

t_no_base_time() {
	{ inp sglang; kr decode 'void d' 0; } >"$T/a"
	{ inp sglang; kr decode 'void d' 10; } >"$T/b"
	"$TD" --no-pass --gate 10 --baseline "$T/a" "$T/b" >"$T/out"
	eq "decode=incomparable overall=incomparable" "$(verdicts "$T/out")"
	"$TD" --no-pass --gate 0 --baseline "$T/a" "$T/a" >"$T/out"
	eq "decode=neutral overall=neutral" "$(verdicts "$T/out")"
}
check "a stage without GPU time in the baseline cannot be held to a percentage" t_no_base_time

fr() {	# fr STAGE PATTERN STATUS US
	printf '{"type":"fuse_row","t":0,"stage":"%s","pattern":"%s","related_us":%s,"status":"%s"}\n' \
	    "$1" "$2" "$4" "$3"
}
t_fuse() {
	{
		inp sglang; kr decode 'void d' 100
		fr decode P-same missing 10; fr decode P-resolved missing 5; fr decode P-fused missing 7
		fr decode P-lost 'in use' 9; fr decode P-lost2 'in use' 3
	} >"$T/a"
	{
		inp sglang; kr decode 'void d' 100
		fr decode P-same missing 12; fr decode P-fused 'in use' 6; fr decode P-lost2 missing 4
		fr decode P-appeared missing 8; fr decode P-gained 'in use' 2
	} >"$T/b"
	"$TD" --no-pass --baseline "$T/a" "$T/b" >"$T/out"
	eq "P-same:same:10:12 P-resolved:resolved:5:null P-fused:fused:7:6 P-lost:lost:9:null P-lost2:lost:3:4 P-appeared:appeared:null:8 P-gained:gained:null:2" \
	    "$(jq -r 'select(.type == "diff_fuse") | "\(.pattern):\(.transition):\(.base_us):\(.cand_us)"' "$T/out" | xargs)"
}
check "fuse rows: opportunities that appeared or went, fusions gained or lost" t_fuse

orow() {	# orow STAGE KERNEL US EXCL VERDICT
	printf '{"type":"overlap_row","stage":"%s","priority":"P1","verdict":"%s","kernel":"%s","total_us":%s,"exclusive_ratio":%s}\n' \
	    "$1" "$5" "$2" "$3" "$4"
}
t_overlap() {
	{ inp sglang; kr decode 'void d' 100; orow decode 'void d' 100 0.5 headroom; orow decode 'void x' 20 1 headroom; } >"$T/a"
	{ inp sglang; kr decode 'void d' 100; orow decode 'void d' 90 0.25 low-roi-hidden; } >"$T/b"
	"$TD" --no-pass --baseline "$T/a" "$T/b" >"$T/out"
	eq "void d 100 90 -10 50 25 headroom low-roi-hidden|void x 20 null null 100 null headroom null" \
	    "$(jq -r 'select(.type == "diff_overlap") | "\(.kernel) \(.base_us) \(.cand_us) \(.delta_us) \(.base_exclusive_pct) \(.cand_exclusive_pct) \(.base_verdict) \(.cand_verdict)"' "$T/out" |
	    paste -sd '|' -)"
	# only one run with overlap rows: none compared
	{ inp sglang; kr decode 'void d' 100; } >"$T/c"
	"$TD" --no-pass --baseline "$T/a" "$T/c" >"$T/out"
	eq 0 "$(grep -c diff_overlap "$T/out")"
}
check "overlap rows compared when both runs have them" t_overlap

done_testing
