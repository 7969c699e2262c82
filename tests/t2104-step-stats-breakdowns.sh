#!/bin/sh
# step-stats: the breakdowns of issue 32 on hand-computed fixtures
# (step-stats(1)): collectives under compute per stage and step, launch
# delays and their verdicts, launch delays per kernel name, busy and idle
# per stream, GPU time per GPU annotation.
. "$(dirname "$0")/lib.sh"
. "$FIX/step-stats/records.sh"

# One decode trace, GPU process 0; streams 7 (compute), 9 (collectives),
# 13 (a copy).  Times in us; a call [ts, dur] ends at ts + dur.
#   K1 gemm       s7  [10,40]   call [0,5]   ends 5     delay  5
#   K2 all-reduce s9  [20,60]   call [6,4]   ends 10    delay 10
#   K3 attention  s7  [45,55]   cudaGraphLaunch [12,8] ends 20: delay 25
#   K4 rmsnorm    s7  [55,58]   the same replay: no delay of its own
#   K6 all-reduce s9  [300,400] call [70,5]  ends 75    delay 225
#   M1 H2D copy   s13 [90,95]   cudaMemcpyAsync [80,2] ends 82: delay 8
#   K7 silu       s7  [420,430] call [410,5] ends 415   delay 5
#   K8 gemm       s7  [440,450] no launch record
# busy [10,60] 50 + [90,95] 5 + [300,400] 100 + [420,430] 10 + [440,450] 10
# = 175 of span 440, idle 265; host-bound: 60-90 until 82 (22), 95-300
# none (K6's call ended at 75), 400-420 until 415 (15), 430-440 none (no
# launch): 37, 8.4 % of the span.
# Collectives: K2 + K6 = 140; under compute K2's [20,40] and [45,58] = 33,
# 23.57 %; comm_us 140 - 33 = 107.
# Delays 5 5 8 10 25 225: nearest-rank p50 the 3rd (8), p90 the 6th (225),
# one over 100 us.  The GPU waited for the host 8.4 % of the span, under
# 10 %, but idled 265 - 37 = 228 (51.8 %) with work queued: stalled.
# Steps: ProfilerStep#1 [0,50] holds the calls of K1..K4: collectives 40,
# 33 under compute (82.5 %); ProfilerStep#2 [60,300] those of K6 and M1:
# 100, none under compute.
# GPU annotations (gpu_user_annotation, pid 0):
#   layer           s7 [8,60] (K1 30, K3 10, K4 3: 43; K2 is on s9)
#                   s7 [415,445] (K7 10, K8 clipped to 5: 15)
#                   s8 [10,40] (no item of s8: not counted)
#   nccl:all_reduce s9 [20,60] (K2 40), s9 [300,400] (K6 100)
#   outer           s7 [0,1000] (every s7 item: 63)
#   empty           s7 [100,200] (nothing inside: no row)
# plus one on another process and a CPU annotation called layer (neither
# counts).  Shares of busy 175: 140 = 80 %, 63 = 36 %, 58 = 33.14 %.
trace() {
	trc /p/decode/t.json
	ann 'ProfilerStep#1' 0 50
	ann 'ProfilerStep#2' 60 240
	ann layer 8 52
	CPID=0 ann layer 8 52 gpu_user_annotation 7
	CPID=0 ann layer 415 30 gpu_user_annotation 7
	CPID=0 ann layer 10 30 gpu_user_annotation 8
	CPID=0 ann nccl:all_reduce 20 40 gpu_user_annotation 9
	CPID=0 ann nccl:all_reduce 300 100 gpu_user_annotation 9
	CPID=0 ann outer 0 1000 gpu_user_annotation 7
	CPID=0 ann empty 100 100 gpu_user_annotation 7
	CPID=5 ann ghost 0 1000 gpu_user_annotation 7
	launch cudaLaunchKernel 0 5 1
	launch cudaLaunchKernel 6 4 2
	launch cudaGraphLaunch 12 8 3
	launch cudaLaunchKernel 70 5 4
	copy cudaMemcpyAsync 80 2 5 memcpy
	launch cudaLaunchKernel 410 5 6
	kern sm90_xmma_gemm_bf16_kernel kernel 10 30 1 7
	kern 'ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*)' kernel 20 40 2 9
	kern 'void flash_attention_kernel<64>(float*)' kernel 45 10 3 7
	kern 'void rmsnorm_kernel<float>(float*, int)' kernel 55 3 3 7
	kern 'ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*)' kernel 300 100 4 9
	kern 'Memcpy HtoD (Pageable -> Device)' gpu_memcpy 90 5 5 13
	kern 'void silu_kernel(float*)' kernel 420 10 6 7
	kern sm90_xmma_gemm_bf16_kernel kernel 440 10 - 7
	end
}

t_comm() {
	trace | ss >"$T/out"
	eq '175 440 265 37 63 107 5 140 23.571428571428573' \
	    "$(rec gpu_time '"\(.busy_us) \(.span_us) \(.idle_us) \(.idle_launch_us) \(.compute_us) \(.comm_us) \(.memcpy_us) \(.comm_total_us) \(.comm_overlap_pct)"' "$T/out")"
	rec step '[.name, .comm_total_us, (.comm_overlap_pct // "-")] | @tsv' "$T/out" >"$T/got"
	printf 'ProfilerStep#1\t40\t82.5\nProfilerStep#2\t100\t0\n' >"$T/want"
	same "$T/want" "$T/got"
}
check 'collectives: their union and the part under compute, per stage and step' t_comm

t_launch_delay() {
	trace | ss >"$T/out"
	eq '{"type":"launch_delay","t":0,"stage":"decode","launches":6,"p50_us":8,"p90_us":225,"max_us":225,"threshold_us":100,"over":1,"verdict":"stalled"}' \
	    "$(grep '"type":"launch_delay"' "$T/out")"
	rec kernel_delay '[.kernel, .launches, .p50_us, .max_us, .over] | @tsv' "$T/out" >"$T/got"
	printf '%s\n' 'ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*)	2	10	225	1' \
	    'void flash_attention_kernel<64>	1	25	25	0' \
	    'Memcpy HtoD (Pageable -> Device)	1	8	8	0' \
	    'sm90_xmma_gemm_bf16_kernel	1	5	5	0' \
	    'void silu_kernel	1	5	5	0' >"$T/want"
	same "$T/want" "$T/got"
}
check 'launch delays: once per launch (a graph replay by its first item), p50 p90 max, over 100 us' t_launch_delay

t_streams() {
	trace | ss >"$T/out"
	rec stream_time '[.stream, .kind, .kernels, .kernel_us, .busy_us, .span_us, .idle_us] | @tsv' \
	    "$T/out" >"$T/got"
	printf '%s\n' '9	communication	2	140	140	380	240' '7	compute	5	63	63	440	377' \
	    '13	memory	1	5	5	5	0' >"$T/want"
	same "$T/want" "$T/got"
}
check 'streams: items, busy, idle within their own span, kind, most busy first' t_streams

t_annotations() {
	trace | ss >"$T/out"
	rec annotation_time '[.name, .count, .busy_us, .share_pct, .range_us] | @tsv' "$T/out" >"$T/got"
	printf '%s\n' 'nccl:all_reduce	2	140	80	140' 'outer	1	63	36	1000' \
	    'layer	2	58	33.142857142857146	82' >"$T/want"
	same "$T/want" "$T/got"
	# another GPU process selected: its annotations (none), not these
	trace | sed 's/"selected":"0"/"selected":"6"/' | ss | grep -c '"type":"annotation_time"' >"$T/n" || :
	eq 0 "$(cat "$T/n")" "annotation_time records for process 6"
}
check 'GPU annotations: busy inside the ranges on their own stream, share, count, range time' t_annotations

# 2,500 annotation ranges that each span the trace's 2,500 kernels (gaps
# between them): 6.25 million pieces, more than the 16 a kernel (and 2^22)
# they may cut: no annotation_time, a note instead, and memory that stays
# small (the pieces once took 4.7 GB from 10,000 of them).
t_annotations_bounded() {
	python3 -c 'import json
N = 2500
ev = [{"name": "process_name", "ph": "M", "pid": 0, "tid": 0, "args": {"name": "GPU 0"}}]
for i in range(N):
    ev += [{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": i * 10 + 1, "dur": 2, "args": {"correlation": i + 1}},
           {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": i * 10 + 4, "dur": 3, "args": {"device": 0, "stream": 7, "correlation": i + 1}},
           {"ph": "X", "cat": "gpu_user_annotation", "name": "a%d" % i, "pid": 0, "tid": 7, "ts": i * 0.001, "dur": N * 10}]
print(json.dumps({"traceEvents": ev}))' >"$T/ann.json"
	"$BIN/trace-extract" -q "$T/ann.json" | "$BIN/trace-stage" -q | "$BIN/step-stats" >"$T/out" 2>"$T/err"
	eq 0 "$(grep -c '"type":"annotation_time"' "$T/out")" "annotation_time records"
	has "$T/out" '"id":"annotation_time_unmeasured"'
	has "$T/err" 'not measured: 2500 annotation ranges overlap 6250000 stretches'
	eq 1 "$(grep -c '"type":"gpu_time"' "$T/out")" "gpu_time records"
}
check 'GPU annotations that each span the trace: left out with a note, not quadratic' t_annotations_bounded

# Per-name delays are for the kernel table's names: one under 0.5 % of the
# stage's kernel time (1 us of 1001) gets none, the stage's figures count it.
t_kernel_delay_bar() {
	{
		trc /p/decode/t.json
		launch cudaLaunchKernel 0 1 1
		launch cudaLaunchKernel 2 1 2
		kern big_gemm kernel 10 1000 1 7
		kern tiny_kernel kernel 1010 1 2 7
		end
	} | ss >"$T/out"
	eq 'big_gemm' "$(rec kernel_delay .kernel "$T/out")"
	eq '2 9 1007' "$(rec launch_delay '"\(.launches) \(.p50_us) \(.max_us)"' "$T/out")"
}
check 'kernel_delay: only names of at least 0.5 % of the stage (the kernel table shows 1 %)' t_kernel_delay_bar

# The clocks disagree: no delay figure, no verdict, no per-name record.
t_clock_offset() {
	trace | sed 's/"time_us":{}/"time_us":{},"clock_offset_us":55000/' | ss >"$T/out"
	eq '{"type":"launch_delay","t":0,"stage":"decode","launches":6,"clock_offset_us":55000}' \
	    "$(grep '"type":"launch_delay"' "$T/out")"
	hasnt "$T/out" '"type":"kernel_delay"'
	has "$T/out" '"type":"stream_time"'
}
check 'clocks that disagree: the launch count and the offset only' t_clock_offset

t_no_launches() {
	trace | grep -v '"type":"launch"' | ss >"$T/out"
	hasnt "$T/out" '"type":"launch_delay"'
	hasnt "$T/out" '"type":"kernel_delay"'
	eq '140 23.571428571428573' "$(rec gpu_time '"\(.comm_total_us) \(.comm_overlap_pct)"' "$T/out")"
}
check 'no launch records: no launch delays, the rest unchanged' t_no_launches

# One trace per verdict (a single stream of kernels, times in us):
#   host_bound  [0,10] call ends -5, [100,110] call ends 98: the gap 10-100
#               waited 88 for the host (80 % of 110); delays 5 2, p50 2
#   bursty      [0,10] ends -500, [10,20] ends -400, [200,210] ends 150: the
#               gap waited 130 (62 %); delays 500 410 50, p50 410
#   gpu_bound   [0,10] ends -300, [10,20] ends -200, [20,30] ends -100: no
#               gap; delays 300 210 120, p50 210
#   balanced    [0,10] ends -3, [10,20] ends 8: no gap; delays 3 2, p50 2
verdicts() {
	_t=0
	for v in '0 10 -5 100 10 98' '0 10 -500 10 10 -400 200 10 150' \
	    '0 10 -300 10 10 -200 20 10 -100' '0 10 -3 10 10 8'; do
		T_IDX=$_t trc "/p/decode/v$_t.json"
		set -- $v
		_corr=1
		while [ $# -gt 0 ]; do
			T_IDX=$_t launch cudaLaunchKernel $(($3 - 1)) 1 $_corr
			T_IDX=$_t kern k kernel "$1" "$2" $_corr 7
			_corr=$((_corr + 1))
			shift 3
		done
		T_IDX=$_t end
		_t=$((_t + 1))
	done
}

t_verdicts() {
	verdicts | ss >"$T/out"
	rec launch_delay '[.t, .verdict, .p50_us] | @tsv' "$T/out" >"$T/got"
	printf '0\thost_bound\t2\n1\tbursty\t410\n2\tgpu_bound\t210\n3\tbalanced\t2\n' >"$T/want"
	same "$T/want" "$T/got"
	eq '88 130' "$(rec gpu_time 'select(.t < 2) | .idle_launch_us' "$T/out" | tr '\n' ' ' | sed 's/ $//')"
}
check 'verdicts: host-bound, bursty, GPU-bound and balanced, from the delays and the idle figures' t_verdicts

# Issue 30: the items wait in sorts, spilled to runs of a few records on
# disk past TRIAGE_SPOOL_MEM: every record the same as in memory.
t_spilled() {
	trace >"$T/in"
	"$BIN/step-stats" -q "$T/in" >"$T/mem"
	TRIAGE_SPOOL_MEM=64 "$BIN/step-stats" -q "$T/in" >"$T/disk"
	same "$T/mem" "$T/disk"
	rec annotation_time '[.name, .count, .busy_us] | @tsv' "$T/disk" >"$T/got"
	printf '%s\n' 'nccl:all_reduce	2	140' 'outer	1	63' 'layer	2	58' >"$T/want"
	same "$T/want" "$T/got"
	for a in "" "--streams 2" "--graph" "-f vllm" "-d gpu-ahead" "-d two-gpus" "-d orphan"; do
		# shellcheck disable=SC2086
		"$TESTDIR/gen-trace" -s both -n 8 -l 3 $a -o "$T/g.json"
		"$BIN/trace-extract" -q "$T/g.json" | "$BIN/trace-stage" -q --late-stages >"$T/g.s"
		"$BIN/step-stats" -q "$T/g.s" >"$T/mem"
		TRIAGE_SPOOL_MEM=64 "$BIN/step-stats" -q "$T/g.s" >"$T/disk"
		same "$T/mem" "$T/disk"
	done
	eq 2 "$(grep -c '"type":"gpu_time"' "$T/disk")" "gpu_time records"
}
check 'every record the same with the items in runs on disk' t_spilled

done_testing
