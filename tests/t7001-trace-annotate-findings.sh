#!/bin/sh
# trace-annotate: a hand-made run with one finding of each kind
# (tests/fixtures/trace-annotate/one-of-each.*), every added event checked
# for its track, position on the trace's own clock and args.
#
# The trace's base is 1700000000000000 us; record times are relative to it.
#   step 0 [80, 380): period 300, GPU busy 150 (50 %)
#   gap [210, 300) before the all-reduce: its launch call [280, 285) makes
#     [210, 285) waiting for the host, [285, 300) the rest
#   kernels of the analyzed process: gemm A [100.25, 150.25] (eager, corr 1),
#     rms [150, 170] (stream 8), gemm B [160, 210] (graph replay, corr 2),
#     all-reduce [300, 340]; another process's gemm is none of them
#   rows: gemm, all-reduce, rms shown (kernel-1..3); rms's overlap row
#     exposed [150.25, 160); fuse-1 (missing) with rms as evidence, fuse-2
#     in use (not marked); gemm escaped the graph once (gemm A); a row's
#     sites and CPU ops, joined by <br> in the records, are arrays
#   rank 1 of 2: its all-reduce starts at 312 aligned (offset 2, base 10
#     us after rank-skew's): 300 on its own clock, 40 us against rank 0's
#     10: it waited 30 for rank 0, the last to arrive
#   kernel_eff: gemm 2e9 FLOP and 1e8 bytes over its 2 launches, rms 8e7
#     bytes and no FLOPs; the step's GPU window [100.25, 360) holds all
#     three: 2e9 FLOP / 100 us = 20 TFLOP/s (rms's time not counted),
#     1.8e8 bytes / 120 us = 1500 GB/s
. "$(dirname "$0")/lib.sh"
TA=$BIN/trace-annotate
F=$FIX/trace-annotate

setup() {
	cp "$F/one-of-each.trace.json" "$T/trace.json"
	sed "s#@TRACE@#$T/trace.json#g" "$F/one-of-each.jsonl" >"$T/rec.jsonl"
}

# added: the events of the findings process, one JSON object a line
# (jq reads numbers as doubles: times are checked on the text, see slices)
added() {
	jq -c '(.traceEvents | map(select(.name == "process_name" and .args.name == "triage findings"))
	    | .[0].pid) as $p | .traceEvents[] | select(.pid == $p)' "$1"
}

# slices FILE: "tid ts dur row name" of each added slice, from the text as written
slices() {
	sed -n 's/^{"ph":"X","cat":"triage","name":"\([^"]*\)","pid":4194305,"tid":\([0-9]*\),"ts":\([0-9.]*\),"dur":\([0-9.]*\),"args":{"row":"\([^"]*\)".*/\2 \3 \4 \5 \1/p' "$1"
}

t_tracks() {
	setup
	"$TA" -q -o "$T/out.json" "$T/rec.jsonl"
	added "$T/out.json" >"$T/added"
	jq -r 'select(.ph == "M") | "\(.name) \(.tid) \(.args.name // .args.sort_index)"' "$T/added" >"$T/got"
	cat >"$T/want" <<-'EOF'
	process_name 0 triage findings
	process_sort_index 0 -1
	thread_name 1 Steps
	thread_sort_index 1 1
	thread_name 2 GPU idle: waiting for the host
	thread_sort_index 2 2
	thread_name 3 GPU idle: other
	thread_sort_index 3 3
	thread_name 4 Graph escapes
	thread_sort_index 4 4
	thread_name 5 Top kernels
	thread_sort_index 5 5
	thread_name 6 Top kernels (2)
	thread_sort_index 6 6
	thread_name 7 Overlap: exposed
	thread_sort_index 7 7
	thread_name 8 Fuse: Fused residual add + RMSNorm
	thread_sort_index 8 8
	thread_name 9 Collectives: waiting
	thread_sort_index 9 9
	EOF
	same "$T/want" "$T/got"
	eq 4194305 "$(jq -r .pid "$T/added" | sort -u)" "the one pid"
}
check 'one process, a named track per kind in order, a lane for the overlapping kernel' t_tracks

t_slices() {
	setup
	"$TA" -q -o "$T/out.json" "$T/rec.jsonl"
	slices "$T/out.json" >"$T/got"
	cat >"$T/want" <<-'EOF'
	1 1700000000000080 300 step-1 step 0: step[DECODE bs=8]
	2 1700000000000210 75 gpu-1 waiting for the host: cudaLaunchKernel
	3 1700000000000285 15 gpu-1 GPU idle, work submitted
	4 1700000000000100.25 50 escape-1 eager: gemm_kernel<…>
	5 1700000000000100.25 50 kernel-1 gemm_kernel<…>
	6 1700000000000150 20 kernel-3 rms_kernel
	5 1700000000000160 50 kernel-1 gemm_kernel<…>
	5 1700000000000300 40 kernel-2 ncclDevKernel_AllReduce_Sum_f32_RING_LL
	7 1700000000000150.25 9.75 overlap-1 exposed: rms_kernel
	8 1700000000000150 20 fuse-1 rms_kernel
	9 1700000000000300 30 collective-1 waiting for rank 0: all-reduce
	EOF
	same "$T/want" "$T/got"
	# a marked kernel's slice starts and lasts as its own event does, to the digit
	sed -n 's/.*"cat": "kernel", "name": "[^"]*", "pid": 0, "tid": [0-9]*, "ts": \([0-9.]*\), "dur": \([0-9.]*\).*/\1 \2/p' \
	    "$T/trace.json" >"$T/own"
	awk '$4 ~ /^kernel-/ { print $2, $3 }' "$T/got" | sort >"$T/marks"
	sort "$T/own" >"$T/own.s"
	same "$T/own.s" "$T/marks"
}
check 'each slice on its track at the trace-own ts, with its row id' t_slices

t_args() {
	setup
	"$TA" -q -o "$T/out.json" "$T/rec.jsonl"
	added "$T/out.json" >"$T/added"
	# the args as text: jq would round the times on the trace's clock
	x() { grep "^{\"ph\":\"X\",\"cat\":\"triage\",.*\"tid\":$1," "$T/out.json" | head -n 1 |
	    sed 's/.*,"args":\({.*}\)},*$/\1/'; }
	eq '{"row":"step-1","stage":"decode","index":0,"marker":"step[DECODE bs=8]","period_us":300,"cpu_us":30,"gpu_busy_us":150,"gpu_span_us":259.75,"gpu_busy_pct":50,"kernels":4,"batch":8}' "$(x 1)"
	eq '{"row":"gpu-1","gap":"gap-1","stage":"decode","gap_ts":1700000000000210,"gap_us":90,"host_us":75,"sync_us":10,"next_kernel":"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)","launch":"cudaLaunchKernel","launch_ts":1700000000000280,"launch_dur_us":5,"launch_end":1700000000000285}' "$(x 2)"
	eq "$(x 2)" "$(x 3)" "both parts of the gap"
	eq '{"row":"escape-1","kernel":"void gemm_kernel<1>","stage":"decode","eager_launches":1,"total_us":50,"share_pct":31.25,"python_location":["python/model.py:10 forward"]}' "$(x 4)"
	eq '{"row":"kernel-1","kernel":"void gemm_kernel<1>","stage":"decode","category":"gemm","share_pct":62.5,"total_us":100,"launches":2,"python_location":["python/model.py:10 forward (site share 75%)","python/other.py:3 f (site share 25%)"],"cpu_op":["aten::mm","aten::addmm"]}' "$(x 5)"
	eq '{"row":"overlap-1","kernel":"void rms_kernel","stage":"decode","priority":"P1","verdict":"headroom","exclusive_pct":98.75,"hidden_pct":1.25,"share_pct":12.5,"python_scope":["python/norm.py:3 forward"],"recommendation":"try fusion","exposed_us":9.75,"exposed_intervals":1,"intervals_marked":1}' "$(x 7)"
	eq '{"row":"fuse-1","pattern":"Fused residual add + RMSNorm","kernel":"void rms_kernel","stage":"decode","confidence":"Candidate","related_us":20,"share_pct":12.5,"candidate_path":["python/layernorm.py"]}' "$(x 8)"
	eq '{"row":"collective-1","kind":"all-reduce","kernel":"ncclDevKernel_AllReduce_Sum_f32_RING_LL","stage":"decode","ordinal":1,"rank":1,"wait_us":30,"skew_us":13,"collective_wait_us":30,"last_rank":0}' "$(x 9)"
}
check 'the args of each kind' t_args

t_counters() {
	setup
	"$TA" -q -o "$T/out.json" "$T/rec.jsonl"
	sed -n 's/^{"ph":"C","cat":"triage","name":"\([^"]*\)","pid":4194305,"ts":\([0-9.]*\),"args":{"\([a-z_]*\)":\([0-9.]*\)}}.*/\1 \2 \3=\4/p' \
	    "$T/out.json" >"$T/got"
	cat >"$T/want" <<-'EOF'
	GPU busy % (decode) 1700000000000080 busy_pct=50
	GPU busy % (decode) 1700000000000380 busy_pct=0
	Achieved TFLOP/s (decode) 1700000000000100.25 tflops=20
	Achieved TFLOP/s (decode) 1700000000000360 tflops=0
	Achieved GB/s (decode) 1700000000000100.25 gbps=1500
	Achieved GB/s (decode) 1700000000000360 gbps=0
	EOF
	same "$T/want" "$T/got"
	# without kernel_eff records no rate counters
	grep -v kernel_eff "$T/rec.jsonl" | "$TA" -q -o "$T/out2.json"
	eq 2 "$(added "$T/out2.json" | jq -r 'select(.ph == "C") | .name' | wc -l | tr -d ' ')"
}
check 'counters: GPU busy per step; achieved TFLOP/s and GB/s from kernel_eff records' t_counters

t_original() {
	setup
	"$TA" -q -o "$T/out.json" "$T/rec.jsonl"
	python3 "$TOP/tests/annotate-check.py" "$T/trace.json" "$T/out.json" >"$T/check"
	eq 'ok 37' "$(cat "$T/check")"
	# what follows the event array, byte for byte
	eq "$(sed -n '/^\],$/,$p' "$T/trace.json")" "$(sed -n '/^\],$/,$p' "$T/out.json")"
	eq "$(head -n 8 "$T/trace.json")" "$(head -n 8 "$T/out.json")"
}
check 'the original trace is all there, in order; the added events are well formed' t_original

t_top() {
	setup
	"$TA" -q -n 1 -o "$T/out.json" "$T/rec.jsonl"
	eq 'kernel-1 kernel-1' "$(added "$T/out.json" |
	    jq -r 'select(.ph == "X" and (.args.row | startswith("kernel"))) | .args.row' | tr '\n' ' ' |
	    sed 's/ $//')"
	"$TA" -q -n 0 -o "$T/out.json" "$T/rec.jsonl"
	eq 4 "$(added "$T/out.json" | jq -r 'select(.ph == "X" and (.args.row | startswith("kernel")))' |
	    jq -s length)"
}
check '-n N: the first N shown rows of a stage; 0 every shown one' t_top
# Past TRIAGE_SPOOL_MEM bytes of findings, sorted runs go to a temporary
# file and merge (issue 30): the same bytes out, runs of one finding
# included, on the fixture's lanes and on a generated run's many findings.
t_spooled_runs() {
	setup
	"$TA" -q -o "$T/whole.json" "$T/rec.jsonl"
	TRIAGE_SPOOL_MEM=1 "$TA" -q -o "$T/runs1.json" "$T/rec.jsonl"
	same "$T/whole.json" "$T/runs1.json"
	"$TOP/tests/gen-trace" -s both -n 40 -l 4 --streams 2 -o "$T/g.json"
	"$TRIAGE" -q --format jsonl --input "$T/g.json" >"$T/g.jsonl"
	"$TA" -q -o "$T/g.whole.json" "$T/g.jsonl"
	TRIAGE_SPOOL_MEM=1000 "$TA" -q -o "$T/g.runs.json" "$T/g.jsonl"
	same "$T/g.whole.json" "$T/g.runs.json"
	test "$(added "$T/g.runs.json" | wc -l)" -gt 500
}
check 'findings spooled in sorted runs: the same annotated trace' t_spooled_runs

done_testing
