#!/bin/sh
# trace-diff: runs with different step counts are compared per step (from
# step-stats' gpu_time), equal counts and runs without steps as totals; the
# stage's GPU time figures (diff_metric) and what the report says about it.
. "$(dirname "$0")/lib.sh"

TD=$BIN/trace-diff

kr() {	# kr STAGE KERNEL US LAUNCHES
	printf '{"type":"kernel_row","t":0,"stage":"%s","kernel":"%s","category":"gemm","total_us":%s,"launches":%s,"stage_total_us":0}\n' \
	    "$1" "$2" "$3" "$4"
}
gt() {	# gt STAGE STEPS BUSY IDLE IDLE_LAUNCH GRAPH
	printf '{"type":"gpu_time","t":0,"stage":"%s","kernels":1,"kernel_us":1,"busy_us":%s,"span_us":1,"idle_us":%s,"idle_launch_us":%s,"compute_us":1,"comm_us":0,"memcpy_us":0,"graph_us":%s,"steps":%s}\n' \
	    "$1" "$3" "$4" "$5" "$6" "$2"
}
sp() {	# sp STAGE INDEX CPU_US
	printf '{"type":"step","t":0,"stage":"%s","index":%s,"name":"ProfilerStep#%s","ts":%s,"cpu_us":%s}\n' \
	    "$1" "$2" "$2" "$2" "$3"
}

t_per_step() {
	# 2 steps vs 4: 200 us and 400 us of gemm are 100 us per step on both sides
	{ kr decode 'void g' 200 4; kr decode 'void n' 60 4; gt decode 2 250 50 20 100
	  sp decode 0 10; sp decode 1 30; } >"$T/a"
	{ kr decode 'void g' 400 8; kr decode 'void n' 160 8; gt decode 4 520 80 40 520
	  sp decode 0 10; sp decode 1 30; sp decode 2 20; sp decode 3 50; } >"$T/b"
	"$TD" --no-pass --baseline "$T/a" "$T/b" >"$T/out"
	eq "void n changed 30 40 10 true|void g same 100 100 0 true" "$(jq -r 'select(.type == "diff_row") |
	    "\(.kernel) \(.status) \(.base_us) \(.cand_us) \(.delta_us) \(.per_step)"' "$T/out" | paste -sd '|' -)"
	# launches are not divided: 4 of 2 steps and 8 of 4 are as many per step
	eq "4 8" "$(jq -r 'select(.type == "diff_row" and .kernel == "void g") |
	    "\(.base_launches) \(.cand_launches)"' "$T/out")"
	eq "kernel_us_per_step 130 140 true 2 4" "$(jq -r 'select(.type == "verdict" and .scope == "decode") |
	    "\(.metric) \(.base) \(.cand) \(.per_step) \(.base_steps) \(.cand_steps)"' "$T/out")"
	# figures: per step for times; the graph share in points; p50 of the steps' CPU time
	eq "kernel_us 130 140 true
busy_us 125 130 true
idle_us 25 20 true
idle_launch_us 10 10 true
graph_pct 40 100 null
step_p50_us 10 20 null
steps 2 4 null" "$(jq -r 'select(.type == "diff_metric") | "\(.metric) \(.base) \(.cand) \(.per_step)"' "$T/out")"
	eq "60 null" "$(jq -r 'select(.type == "diff_metric" and .metric == "graph_pct") |
	    "\(.delta) \(.delta_pct)"' "$T/out")"
}
check "different step counts: times per step, launches as they are" t_per_step

t_complete_steps() {
	# the median is of the periods the report's is of: not the last step's
	# (the GPU's drain), not a step that launched nothing
	pp() {	# pp INDEX PERIOD_US EXTRA
		printf '{"type":"step","t":0,"stage":"decode","index":%s,"name":"s","ts":%s,"cpu_us":1,"period_us":%s%s}\n' \
		    "$1" "$1" "$2" "$3"
	}
	{ kr decode 'void g' 200 4; gt decode 4 250 50 20 100
	  pp 0 10 ',"kernels":3'; pp 1 12 ',"kernels":3'; pp 2 900 ',"kernels":0'
	  pp 3 400 ',"kernels":3,"last":true'; } >"$T/a"
	{ kr decode 'void g' 200 4; gt decode 1 250 50 20 100; pp 0 473 ',"kernels":9,"last":true'; } >"$T/b"
	"$TD" --no-pass --baseline "$T/a" "$T/a" >"$T/out"
	eq "10 10" "$(jq -r 'select(.type == "diff_metric" and .metric == "step_p50_us") |
	    "\(.base) \(.cand)"' "$T/out")"
	# a run whose only step is its last has no median to compare
	"$TD" --no-pass --baseline "$T/a" "$T/b" >"$T/out2"
	eq 0 "$(jq -s 'map(select(.type == "diff_metric" and .metric == "step_p50_us")) | length' "$T/out2")"
	eq "4 1" "$(jq -r 'select(.type == "diff_metric" and .metric == "steps") | "\(.base) \(.cand)"' "$T/out2")"
}
check "the step median of complete steps with GPU work, as the report's" t_complete_steps

t_step_busy() {
	# the host queued the steps ahead: periods of 6 ms while the GPU is busy
	# 9 ms a step; the GPU's median step is compared beside the period's,
	# over the same steps (not the last, not one without kernels)
	pb() {	# pb SIDEFILE INDEX PERIOD_US BUSY_US EXTRA
		printf '{"type":"step","t":0,"stage":"decode","index":%s,"name":"s","ts":%s,"cpu_us":1,"period_us":%s,"kernels":3,"gpu_busy_us":%s%s}\n' \
		    "$2" "$2" "$3" "$4" "${5-}" >>"$1"
	}
	{ kr decode 'void g' 200 4; gt decode 4 250 50 20 100; } >"$T/a"
	pb "$T/a" 0 6000 9000; pb "$T/a" 1 6100 9100; pb "$T/a" 2 5900 8900
	pb "$T/a" 3 20000 30000 ',"last":true'
	{ kr decode 'void g' 200 4; gt decode 3 250 50 20 100; } >"$T/b"
	pb "$T/b" 0 6000 7000; pb "$T/b" 1 6000 7200
	printf '{"type":"step","t":0,"stage":"decode","index":2,"name":"s","ts":2,"cpu_us":1,"period_us":800,"kernels":0,"gpu_busy_us":0}\n' >>"$T/b"
	"$TD" --no-pass --baseline "$T/a" "$T/b" >"$T/out"
	eq "step_p50_us 6000 6000 0|step_busy_p50_us 9000 7000 -22.2222" "$(jq -r 'select(.type == "diff_metric" and
	    (.metric | startswith("step_"))) | "\(.metric) \(.base) \(.cand) \(.delta_pct * 10000 | round / 10000)"' "$T/out" |
	    paste -sd '|' -)"
	# the report names it
	"$BIN/triage-render" <"$T/out" >"$T/md"
	eq 1 "$(grep -c '^| GPU busy per step p50 | 9.00 ms | 7.00 ms |' "$T/md")"
	# both hosts ran ahead (busy p50 over 1.05 times the period's): the
	# period row is flagged per side and the report says what to read
	eq "true true" "$(jq -r 'select(.type == "diff_metric" and .metric == "step_p50_us") |
	    "\(.base_host_ahead) \(.cand_host_ahead)"' "$T/out")"
	has "$T/md" "^In both runs the steps' GPU work (busy p50 9.00 ms and 7.00 ms) is longer than their period (p50 6.00 ms and 6.00 ms): the host queued steps ahead of the GPU"
	# a candidate whose GPU keeps up (6.2 ms of work in 6 ms periods is within 5 %)
	sed 's/"gpu_busy_us":7000/"gpu_busy_us":6200/; s/"gpu_busy_us":7200/"gpu_busy_us":6250/' "$T/b" >"$T/d"
	"$TD" --no-pass --baseline "$T/a" "$T/d" >"$T/out3"
	eq "true null" "$(jq -r 'select(.type == "diff_metric" and .metric == "step_p50_us") |
	    "\(.base_host_ahead) \(.cand_host_ahead)"' "$T/out3")"
	"$BIN/triage-render" <"$T/out3" >"$T/md3"
	has "$T/md3" "^In the baseline the steps' GPU work (busy p50 9.00 ms) is longer than their period (p50 6.00 ms): "
	hasnt "$T/md3" "In both runs"
	# a side whose steps do not all say their busy time: not compared
	sed 's/,"gpu_busy_us":7200//' "$T/b" >"$T/c"
	"$TD" --no-pass --baseline "$T/a" "$T/c" >"$T/out2"
	eq 0 "$(jq -s 'map(select(.type == "diff_metric" and .metric == "step_busy_p50_us")) | length' "$T/out2")"
	eq 1 "$(jq -s 'map(select(.type == "diff_metric" and .metric == "step_p50_us")) | length' "$T/out2")"
}
check "the GPU busy per step beside the host's step period" t_step_busy

t_idle_sync() {
	# idle waiting on a synchronization, per step like the other times,
	# compared only when both sides measured it
	gs() {	# gs STEPS IDLE_SYNC: gt's record with idle_sync_us
		gt decode "$1" 100 50 10 0 | sed "s/,\"steps\"/,\"idle_sync_us\":$2,\"steps\"/"
	}
	{ kr decode 'void g' 200 4; gs 2 30; } >"$T/a"
	{ kr decode 'void g' 400 8; gs 4 20; } >"$T/b"
	{ kr decode 'void g' 400 8; gt decode 4 100 50 10 0; } >"$T/c"
	"$TD" --no-pass --baseline "$T/a" "$T/b" >"$T/out"
	eq "15 5 -10 true" "$(jq -r 'select(.type == "diff_metric" and .metric == "idle_sync_us") |
	    "\(.base) \(.cand) \(.delta) \(.per_step)"' "$T/out")"
	"$TD" --no-pass --baseline "$T/a" "$T/c" >"$T/out2"
	eq 0 "$(grep -c '"metric":"idle_sync_us"' "$T/out2")" "one side without it"
	"$TD" --no-pass --baseline "$T/a" "$T/b" | "$BIN/triage-render" -q >"$T/md"
	grep -q "Idle waiting on a synchronization" "$T/md"
	# a base under a hundredth of the other side: the change, no percentage
	{ kr decode 'void g' 400 8; gs 4 8000; } >"$T/d"
	"$TD" --no-pass --baseline "$T/a" "$T/d" >"$T/out3"
	eq "15 2000 1985 null" "$(jq -r 'select(.type == "diff_metric" and .metric == "idle_sync_us") |
	    "\(.base) \(.cand) \(.delta) \(.delta_pct)"' "$T/out3")"
	eq "-66.7" "$(jq -r 'select(.type == "diff_metric" and .metric == "idle_sync_us") | .delta_pct * 10 | round / 10' "$T/out")"
}
check "idle waiting on a synchronization, when both runs measured it" t_idle_sync

t_equal_steps() {
	{ kr decode 'void g' 200 4; gt decode 2 200 0 0 0; } >"$T/a"
	{ kr decode 'void g' 260 4; gt decode 2 260 0 0 0; } >"$T/b"
	"$TD" --no-pass --baseline "$T/a" "$T/b" >"$T/out"
	eq "kernel_us 200 260 30" "$(jq -r 'select(.type == "verdict" and .scope == "decode") |
	    "\(.metric) \(.base) \(.cand) \(.delta_pct)"' "$T/out")"
	eq "null" "$(jq -r 'select(.type == "diff_row") | .per_step' "$T/out")"
}
check "equal step counts: totals" t_equal_steps

# Runs of other batch sizes: GPU time per step grows with the batch, so the
# verdict's reason says so, with the time per token (decode: a step's tokens
# are its batch); batches within 10 % say nothing.
t_batches() {
	bs() {	# bs BATCH: a decode step of that batch, the last one
		printf '{"type":"step","t":0,"stage":"decode","index":0,"name":"step[DECODE bs=%s]","ts":1,"cpu_us":1,"period_us":100,"last":true,"batch":%s,"kernels":5}\n' "$1" "$1"
	}
	{ kr decode 'void g' 800 4; gt decode 1 800 0 0 0; bs 16; } >"$T/a"
	{ kr decode 'void g' 960 4; gt decode 1 960 0 0 0; bs 32; } >"$T/b"
	"$TD" --no-pass --baseline "$T/a" "$T/b" >"$T/out"
	eq "regression|the steps' batch differs (16 in the baseline, 32 in the candidate, on average): GPU time per step grows with the batch, and per token it went 0.05 -> 0.03 ms (-40.0%)" \
	    "$(jq -r 'select(.type == "verdict" and .scope == "decode") | "\(.verdict)|\(.reason)"' "$T/out")"
	{ kr decode 'void g' 960 4; gt decode 1 960 0 0 0; bs 17; } >"$T/c"
	"$TD" --no-pass --baseline "$T/a" "$T/c" >"$T/out2"
	eq "null" "$(jq -r 'select(.type == "verdict" and .scope == "decode") | .reason' "$T/out2")"
}
check "other batch sizes: the reason says so, per token" t_batches

t_steps_one_side() {
	# a saved report without step-stats (or --compat) on one side: totals
	{ kr decode 'void g' 200 4; } >"$T/a"
	{ kr decode 'void g' 400 8; gt decode 4 400 0 0 0; } >"$T/b"
	"$TD" --no-pass --baseline "$T/a" "$T/b" >"$T/out"
	eq "kernel_us null 4 regression" "$(jq -r 'select(.type == "verdict" and .scope == "decode") |
	    "\(.metric) \(.base_steps) \(.cand_steps) \(.verdict)"' "$T/out")"
	# only the figure both sides have
	eq "kernel_us" "$(jq -r 'select(.type == "diff_metric") | .metric' "$T/out" | xargs)"
	"$BIN/triage-render" <"$T/out" >"$T/md"
	has "$T/md" "only the candidate has step markers, so times are totals over the stage"
}
check "steps on one side only: totals, and the report says so" t_steps_one_side

t_generated() {
	# the whole pipeline on generated traces of 2 and 5 steps: per step, the same
	"$TESTDIR/gen-trace" -n 2 -o "$T/t2.json"
	"$TESTDIR/gen-trace" -n 5 -o "$T/t5.json"
	for n in 2 5; do
		"$BIN/trace-extract" -q "$T/t$n.json" | "$BIN/trace-stage" -q | "$BIN/kernel-map" -q |
		    "$BIN/step-stats" -q >"$T/r$n"
	done
	"$TD" --no-pass --gate 0 --baseline "$T/r2" "$T/r5" >"$T/out"
	# 0.36 ms over 2 steps and 0.90 ms over 5: 180 us per step (gen-trace's header)
	eq "neutral 180 180 2 5" "$(jq -r 'select(.type == "verdict" and .scope == "overall") |
	    "\(.verdict) \(.base) \(.cand) \(.base_steps) \(.cand_steps)"' "$T/out")"
	eq "same same same" "$(jq -r 'select(.type == "diff_row") | .status' "$T/out" | xargs)"
}
check "generated traces of 2 and 5 steps are the same per step" t_generated

done_testing
