#!/bin/sh
# step-stats: the gpu_time figures on hand-computed fixtures (step-stats(1)):
# overlapping streams, graph and eager launches, host-bound gaps, the
# compute/comm/memory split, legacy categories, degenerate items.
. "$(dirname "$0")/lib.sh"
. "$FIX/step-stats/records.sh"

# Seven work items on streams 7, 8, 9 of decode (times in us):
#   K1 gemm      [100,110] eager,  launch ends  95
#   K2 attention [115,125] graph,  launch ends 120 (first of the replay)
#   K3 nccl      [120,140] graph   (same replay, starts later)
#   K4 memcpy    [135,145] no launch record
#   K5 rmsnorm   [165,170] eager,  launch ends 160
#   K6 silu      [180,190] eager,  launch ends 175
#   K7 rmsnorm   [192,195] eager,  launch ends 187 (before the gap began)
# plus a cuda_sync, a cuda_runtime event and another process's kernel.
# busy [100,110] [115,145] [165,170] [180,195]... = 10+30+5+10+3 = 58,
# span 95, idle 37; gaps 110-115 (host 5: the replay's call ended at 120),
# 145-165 (host 15), 170-180 (host 5), 190-192 (host 0) = 25.
# compute K1 10, K2 10 (K3 overlaps it 120-125), K5 5, K6 10, K7 3 = 38;
# comm K3 alone 125-140 = 15 (K4 overlaps 135-140); memory K4 140-145 = 5.
# graph: union of K2, K3 = [115,140] = 25, 25/58 = 43.1 %; eager kernels
# K1 K5 K6 K7 = 4 (the memcpy is no kernel).  Collectives (issue 32): K3
# alone, 20; under compute K2's 120-125 (K4 is memory), 5 of 20 = 25 %.
worked() {
	trc /p/decode/x.json
	launch cudaLaunchKernel 90 5 1
	launch cudaGraphLaunch 100 20 2
	launch cudaLaunchKernel 150 10 3
	launch cudaLaunchKernel 170 5 4
	launch cudaLaunchKernel 185 2 6
	kern sm90_xmma_gemm_bf16_kernel kernel 100 10 1 7
	kern 'void flash_attention_kernel<64>(float*)' kernel 115 10 2 7
	kern 'ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*)' kernel 120 20 2 9
	kern 'Memcpy HtoD (Pageable -> Device)' gpu_memcpy 135 10 5 8
	kern 'void rmsnorm_kernel<float>(float*, int)' kernel 165 5 3 7
	kern 'void silu_kernel(float*)' kernel 180 10 4 7
	kern 'void rmsnorm_kernel<float>(half*, int)' kernel 192 3 6 7
	kern 'Stream Wait Event' cuda_sync 150 5 - 7
	kern hipLaunchKernel cuda_runtime 100 60 - 7
	other ghost_kernel kernel 146 100
	end
}

t_worked() {
	worked >"$T/in"
	ss <"$T/in" >"$T/out"
	eq '{"type":"gpu_time","t":0,"stage":"decode","kernels":7,"copies":1,"kernel_us":68,"busy_us":58,"span_us":95,"idle_us":37,"idle_launch_us":25,"idle_sync_us":0,"compute_us":38,"comm_us":15,"memcpy_us":5,"comm_total_us":20,"comm_overlap_pct":25,"graph_us":25,"graph_pct":43.10344827586207,"eager_kernels":4,"id":"gpu-1"}' \
	    "$(grep '"type":"gpu_time"' "$T/out")"
	eq 1 "$(grep -c '"type":"gpu_time"' "$T/out")" "gpu_time records"
	hasnt "$T/out" '"type":"step"'
}
check 'worked fixture: busy, idle, host-bound gaps, split, graph share' t_worked

# The worked fixture's four gaps (issue 29), after the stage's gpu_time,
# each with the item after it and its launch call: the host parts add up
# to idle_launch_us (5 + 15 + 5 + 0 = 25).
#   110-115 before K2, replay call [100,120]: host until K2 starts, 5
#   145-165 before K5, call [150,160]: 15
#   170-180 before K6, call [170,175]: 5
#   190-192 before K7, call [185,187] ended before the gap: 0
t_idle_gaps() {
	worked | ss >"$T/out"
	rec idle_gap '[.stage, .ts, .dur, .host_us, .kernel, .launch, .launch_ts, .launch_dur, .id] | @tsv' \
	    "$T/out" >"$T/got"
	printf '%s\n' \
	    'decode	110	5	5	void flash_attention_kernel<64>(float*)	cudaGraphLaunch	100	20	gap-1' \
	    'decode	145	20	15	void rmsnorm_kernel<float>(float*, int)	cudaLaunchKernel	150	10	gap-2' \
	    'decode	170	10	5	void silu_kernel(float*)	cudaLaunchKernel	170	5	gap-3' \
	    'decode	190	2	0	void rmsnorm_kernel<float>(half*, int)	cudaLaunchKernel	185	2	gap-4' >"$T/want"
	same "$T/want" "$T/got"
	eq 'gpu_time idle_gap idle_gap idle_gap idle_gap' \
	    "$(jq -r 'select(.type == "gpu_time" or .type == "idle_gap") | .type' "$T/out" | tr '\n' ' ' |
	        sed 's/ $//')" "order"
	# without launch records no host part and no call; the gaps stay
	worked | grep -v '"type":"launch"' | ss >"$T/out"
	eq '110 5 false false|145 20 false false|170 10 false false|190 2 false false' \
	    "$(rec idle_gap '"\(.ts) \(.dur) \(has("host_us")) \(has("launch"))"' "$T/out" | paste -sd'|' -)"
}
check 'idle_gap: the gaps with the item after them and its late launch call' t_idle_gaps

# Of many gaps, the 32 longest and the 32 longest waiting for the host,
# never one under 1 us: after a kernel k0 [0,10], 40 kernels of 10 us each
# 2..41 us after the one before, the gap's host part its length for the 20
# even ones (the launch call ends at the kernel's start) and 0 for the
# others (it ended long before), and a last gap of 0.5 us.  The 32 longest are 10..41; the host-bound
# ones add 2, 4, 6, 8: 36 records.
t_idle_gap_choice() {
	{
		trc /p/decode/x.json
		launch cudaLaunchKernel 0 1 100
		kern k0 kernel 0 10 100 7
		ts=0
		i=1
		while [ "$i" -le 40 ]; do
			g=$((i + 1))
			start=$((ts + 10 + g))
			if [ $((g % 2)) -eq 0 ]; then
				launch cudaLaunchKernel $((start - 1)) 1 "$i"
			else
				launch cudaLaunchKernel "$ts" 1 "$i"
			fi
			kern "k$i" kernel "$start" 10 "$i" 7
			ts=$start
			i=$((i + 1))
		done
		launch cudaLaunchKernel 0 1 99
		kern k99 kernel "$((ts + 10)).5" 1 99 7
		end
	} | ss >"$T/out"
	eq 36 "$(grep -c '"type":"idle_gap"' "$T/out")" "gap records"
	eq '2 4 6 8' "$(rec idle_gap 'select(.dur < 10) | .dur' "$T/out" | tr '\n' ' ' | sed 's/ $//')"
	eq 0 "$(rec idle_gap 'select(.dur < 1)' "$T/out" | wc -l | tr -d ' ')" "gaps under 1 us"
	eq sorted "$(rec idle_gap .ts "$T/out" | sort -n -c && echo sorted)"
}
check 'idle_gap: the 32 longest and the 32 longest host-bound, in order, none under 1 us' t_idle_gap_choice

t_escape() {
	worked | ss >"$T/out"
	rec graph_escape '[.stage, .kernel, .launches, .total_us, .share_pct, has("location")] | @tsv' \
	    "$T/out" >"$T/got"
	printf '%s\n' \
	    'decode	sm90_xmma_gemm_bf16_kernel	1	10	14.705882352941176	false' \
	    'decode	void silu_kernel	1	10	14.705882352941176	false' \
	    'decode	void rmsnorm_kernel<float>	2	8	11.764705882352942	false' >"$T/want"
	same "$T/want" "$T/got"
}
check 'graph_escape: eager kernels by canonical name, largest first, ties by name' t_escape

t_no_launches() {
	worked | grep -v '"type":"launch"' | ss >"$T/out"
	eq '{"type":"gpu_time","t":0,"stage":"decode","kernels":7,"copies":1,"kernel_us":68,"busy_us":58,"span_us":95,"idle_us":37,"compute_us":38,"comm_us":15,"memcpy_us":5,"comm_total_us":20,"comm_overlap_pct":25,"id":"gpu-1"}' \
	    "$(grep '"type":"gpu_time"' "$T/out")"
	hasnt "$T/out" '"type":"graph_escape"'
}
check 'no launch records: launch-dependent members absent, the rest unchanged' t_no_launches

# Copies and sets have a submitting call (issue 25), a launch record of
# kind memcpy or memset, so a gap before one is host-bound as before a
# kernel.  A real H100 trace: a 126 ms gap in DataLoader.__next__, its H2D
# copy issued 48 us before it ran.
#   K1 gemm  [0,100]          launch ends -5
#   M  H2D   [126100,126110]  cudaMemcpyAsync [126040,126052]
#   K2 norm  [126200,126300]  launch ends 126150
#   S  set   [126400,126405]  cudaMemsetAsync ends 126250, before its gap
# busy 100+10+100+5 = 215 of span 126405, idle 126190; host-bound: the gap
# 100-126100 until the copy's call ended, 126052-100 = 125952; 126110-126200
# until 126150, 40; 126300-126400 none (the set was queued when the gap
# began): 125992.  Without the copies' calls (a stream of before), only 40.
t_copies_host_bound() {
	{
		trc /p/decode/x.json
		launch cudaLaunchKernel -10 5 1
		copy cudaMemcpyAsync 126040 12 2 memcpy
		launch cudaLaunchKernel 126140 10 3
		copy cudaMemsetAsync 126240 10 4 memset
		kern gemm kernel 0 100 1 7
		kern 'Memcpy HtoD (Pageable -> Device)' gpu_memcpy 126100 10 2 7
		kern 'void rmsnorm_kernel(float*)' kernel 126200 100 3 7
		kern 'Memset (Device)' gpu_memset 126400 5 4 7
		end
	} >"$T/in"
	ss <"$T/in" >"$T/out"
	eq '{"type":"gpu_time","t":0,"stage":"decode","kernels":4,"copies":2,"kernel_us":215,"busy_us":215,"span_us":126405,"idle_us":126190,"idle_launch_us":125992,"idle_sync_us":0,"compute_us":200,"comm_us":0,"memcpy_us":15,"comm_total_us":0,"graph_us":0,"graph_pct":0,"id":"gpu-1"}' \
	    "$(grep '"type":"gpu_time"' "$T/out")"
	grep -v '"kind":"mem' "$T/in" | ss | jq -r 'select(.type == "gpu_time") | .idle_launch_us' >"$T/old"
	eq 40 "$(cat "$T/old")"
}
check 'host-bound gaps before copies and sets: their runtime calls count as launches' t_copies_host_bound

# An epoch clock with nanosecond digits (issue 25): 2000 kernels of 1.237
# us, 0.003 us apart, at 1700000000123456.000 us and on.  Near 1.7e15 a
# double resolves 0.25 us: the absolute times made busy 2480 us, more than
# the 2474 us the kernels last, and idle 0.  On the trace's own digits less
# its time base: busy 2474, idle 1999 x 0.003 = 5.997, span 2479.997.
t_epoch_ns() {
	awk 'BEGIN {
		printf "{\"traceEvents\": [\n"
		for (k = 0; k < 2000; k++) {
			t = 1240 * k; us = 123456 + int(t / 1000); ns = t % 1000
			printf "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 9, \"tid\": 9, \"ts\": 1700000000%06d.%03d, \"dur\": 1, \"args\": {\"correlation\": %d}},\n", us - 10, ns, k + 1
			printf "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 1700000000%06d.%03d, \"dur\": 1.237, \"args\": {\"correlation\": %d, \"stream\": 7}}%s\n", us, ns, k + 1, k < 1999 ? "," : ""
		}
		print "]}"
	}' >"$T/ns.json"
	"$BIN/trace-extract" -q "$T/ns.json" | "$BIN/trace-stage" -q | ss >"$T/out"
	eq 'true true true true' "$(rec gpu_time '"\(.busy_us <= .kernel_us) \((.kernel_us - 2474 | fabs) < 1e-6) \((.idle_us - 5.997 | fabs) < 1e-6) \((.span_us - 2479.997 | fabs) < 1e-6)"' "$T/out")"
}
check 'an epoch clock with nanosecond digits: busy within the sum of durations, gaps kept' t_epoch_ns

# Legacy categories count, sync and runtime events do not; a copy kernel is
# memory: Kernel [0,10] compute, Memcpy [5,15], Memset [20,22], copy kernel
# [30,34] memory.  busy 15+2+4 = 21 of span 34; compute 10, memory 11.
# Of the 4 work items, 2 are copies and sets (the copy kernel is a kernel).
t_categories() {
	{
		STAGE=all trc /p/t.json
		STAGE=all kern gemm_legacy Kernel 0 10 -
		STAGE=all kern 'Memcpy DtoD (Device -> Device)' Memcpy 5 10 -
		STAGE=all kern 'Memset (Device)' Memset 20 2 -
		STAGE=all kern 'void copy_kernel(float*)' kernel 30 4 -
		STAGE=all kern 'Context Sync' cuda_sync 10 20 -
		STAGE=all kern cudaMemcpyAsync cuda_runtime 10 20 -
		end
	} | ss >"$T/out"
	eq '{"type":"gpu_time","t":0,"stage":"all","kernels":4,"copies":2,"kernel_us":26,"busy_us":21,"span_us":34,"idle_us":13,"compute_us":10,"comm_us":0,"memcpy_us":11,"comm_total_us":0,"id":"gpu-1"}' \
	    "$(grep '"type":"gpu_time"' "$T/out")"
}
check 'legacy Kernel/Memcpy/Memset count; cuda_sync and runtime events never' t_categories

# A [10,20] whose launch call ended at 30 (clock skew), C with dur -5 and B
# with dur 0 inside A's time, D and E both [40,50], F [45,48] inside them;
# D's call ended at 60.  busy 20 of span 40; the gap 20-40 is host-bound
# entirely (20); nothing negative, nothing NaN.
t_degenerate() {
	{
		trc /p/decode/x.json
		launch cudaLaunchKernel 5 25 1
		launch cudaLaunchKernel 35 25 4
		kern gemm_a kernel 10 10 1 7
		kern gemm_b kernel 20 0 - 7
		kern gemm_c kernel 15 -5 - 7
		kern gemm_d kernel 40 10 4 7
		kern gemm_e kernel 40 10 - 8
		kern gemm_f kernel 45 3 - 9
		end
	} | ss >"$T/out"
	eq '{"type":"gpu_time","t":0,"stage":"decode","kernels":6,"kernel_us":33,"busy_us":20,"span_us":40,"idle_us":20,"idle_launch_us":20,"idle_sync_us":0,"compute_us":20,"comm_us":0,"memcpy_us":0,"comm_total_us":0,"graph_us":0,"graph_pct":0,"id":"gpu-1"}' \
	    "$(grep '"type":"gpu_time"' "$T/out")"
}
check 'zero-length, negative, identical items and clock skew: exact, never negative' t_degenerate

# A graph replay of one zero-length kernel: busy 0, graph_pct 0, not NaN.
t_all_zero() {
	{
		trc /p/decode/x.json
		launch cudaGraphLaunch 0 1 1
		kern k0 kernel 5 0 1 7
		end
	} | ss >"$T/out"
	eq '{"type":"gpu_time","t":0,"stage":"decode","kernels":1,"kernel_us":0,"busy_us":0,"span_us":0,"idle_us":0,"idle_launch_us":0,"idle_sync_us":0,"compute_us":0,"comm_us":0,"memcpy_us":0,"comm_total_us":0,"graph_us":0,"graph_pct":0,"eager_kernels":0,"id":"gpu-1"}' \
	    "$(grep '"type":"gpu_time"' "$T/out")"
}
check 'only zero-length items: every figure 0, graph_pct 0' t_all_zero

# Corrupt times are left out with a warning: ts 1e18, dur 1e14 (3 years),
# 1e999 (infinite); a step marker of 1e14 us too.  Two items of 1e308 us
# would have made every sum infinite.
# corrupt_stream [EXTRA_TS]: the records, with one more kernel starting at EXTRA_TS
corrupt_stream() {
	trc /p/decode/x.json
	ann 'ProfilerStep#1' 0 1e14
	ann 'ProfilerStep#2' 0 10
	kern k_far kernel 1e18 5 - 7
	kern k_long kernel 10 1e14 - 7
	kern k_inf kernel 10 1e999 - 7
	[ -z "${1:-}" ] || kern k_extra kernel "$1" 4 - 7
	kern k_huge kernel 0 1e308 - 7
	kern k_huge kernel 1 1e308 - 7
	kern k_ok kernel 3 4 - 7
	end
}

t_corrupt() {
	corrupt_stream | ss >"$T/out" 2>"$T/err"
	has "$T/err" '^step-stats: warning: 5 GPU work items with a corrupt ts or dur'
	eq '{"type":"gpu_time","t":0,"stage":"decode","kernels":1,"kernel_us":4,"busy_us":4,"span_us":4,"idle_us":0,"compute_us":4,"comm_us":0,"memcpy_us":0,"comm_total_us":0,"steps":1,"complete_steps":0,"step_last_us":10,"id":"gpu-1"}' \
	    "$(grep '"type":"gpu_time"' "$T/out")"
	eq 'ProfilerStep#2' "$(rec step .name "$T/out")"
	# the same records laid out otherwise (type and t last) take the reader's
	# general path, which reads 1e999 as infinity too (-1e999 as its negative)
	mv "$T/out" "$T/out.fast"
	corrupt_stream -1e999 | sed 's/^{"type":"kernel","t":0,\(.*\)}$/{\1,"t":0,"type":"kernel"}/' | ss >"$T/out" 2>"$T/err"
	has "$T/err" '^step-stats: warning: 6 GPU work items with a corrupt ts or dur'
	# (the kernel lines pass as they came)
	grep -v '"type":"kernel"' "$T/out.fast" >"$T/want"
	grep -v '"type":"kernel"' "$T/out" >"$T/got"
	same "$T/want" "$T/got"
	# NaN and Infinity are not JSON numbers: refused on either path
	{
		trc /p/decode/x.json
		kern k_nan kernel 10 NaN - 7
		end
	} >"$T/nan"
	status 1 sh -c '"$1" <"$2" 2>"$3"' sh "$BIN/step-stats" "$T/nan" "$T/err"
	has "$T/err" "kernel record: member 'dur' is not a number"
}
check 'corrupt times: items and markers left out with a warning, sums stay finite' t_corrupt

# Stages in order extend, decode, all; a kernel without stage takes its
# trace's path stage; each trace's records come before its own stats, each
# stage's stream_time records after its gpu_time (issue 32).
t_stages() {
	{
		trc /p/x.json
		STAGE=decode kern k_dec kernel 0 10 -
		STAGE=extend kern k_ext kernel 20 10 -
		STAGE=- kern k_none kernel 40 5 -
		end
		T_IDX=1 trc /q/decode/y.json
		T_IDX=1 STAGE=- kern k_path kernel 0 7 -
		T_IDX=1 end
	} | ss >"$T/out"
	jq -r '[.type, .t, .stage // "", .kernel_us // ""] | join(" ")' "$T/out" |
	    grep -v -e '^kernel ' -e '^gpu_pids ' >"$T/got"
	printf '%s\n' 'trace 0  ' 'gpu_time 0 extend 10' 'stream_time 0 extend 10' \
	    'gpu_time 0 decode 10' 'stream_time 0 decode 10' 'gpu_time 0 all 5' \
	    'stream_time 0 all 5' 'stats 0  ' 'trace 1  ' 'gpu_time 1 decode 7' \
	    'stream_time 1 decode 7' 'stats 1  ' >"$T/want"
	same "$T/want" "$T/got"
}
check 'one gpu_time per trace and stage, in stage order, before the stats record' t_stages

# Two stages whose items interleave (issue 25): decode [0,10] [30,40]
# [60,70], extend [12,28] [45,55].  The GPU is idle only in [10,12],
# [28,30], [40,45] and [55,60]: decode's span [0,70] holds all four, 14 us
# (not its own gaps' 40), with 26 us of extend's work (other_stages_us);
# extend's span [12,55] holds [28,30] and [40,45], 7 us (not 17), with
# decode's 10.  Host-bound: D2's call ends at 29 (1 us of [28,30]), E2's at
# 50, after E2 starts at 45 (all 5 us of [40,45]); the others returned
# before their gaps: 6 us in each stage (its own gaps would give decode 19,
# extend 17).  A cudaStreamSynchronize [56,59] blocks the host in [55,60],
# inside decode's span only: 3 us waiting on a synchronization.
interleaved() {
	trc /p/t.json
	launch cudaLaunchKernel 0 1 1
	launch cudaLaunchKernel 1 1 2
	launch cudaLaunchKernel 2 1 3
	launch cudaLaunchKernel 3 2 4
	launch cudaLaunchKernel 4 46 5
	launch cudaLaunchKernel 20 9 6
	kern d1 kernel 0 10 1
	kern d2 kernel 30 10 6
	kern d3 kernel 60 10 3
	STAGE=extend kern e1 kernel 12 16 4
	STAGE=extend kern e2 kernel 45 10 5
	blocking cudaStreamSynchronize 56 3
	end
}

t_interleaved() {
	interleaved | ss >"$T/out"
	rec gpu_time '[.stage, .busy_us, .span_us, .idle_us, .other_stages_us, .idle_launch_us, .idle_sync_us, .sync_gap_us // "-", .sync_gap_call // "-", .sync_gap_ts // "-"] | @tsv' "$T/out" >"$T/got"
	printf '%s\n' 'extend	26	43	7	10	6	0	-	-	-' \
	    'decode	30	70	14	26	6	3	3	cudaStreamSynchronize	55' >"$T/want"
	same "$T/want" "$T/got"
	# the idle_gap records are the same gaps, each of a microsecond or more
	eq 'extend 28 2 1|extend 40 5 5|decode 10 2 0|decode 28 2 1|decode 40 5 5|decode 55 5 0' \
	    "$(rec idle_gap '"\(.stage) \(.ts) \(.dur) \(.host_us)"' "$T/out" | paste -sd '|')"
	eq 3 "$(rec idle_gap 'select(.ts == 55) | .sync_us' "$T/out")"
}
check 'interleaved stages: a stage is idle only where no stage runs' t_interleaved

t_one_stage_rounding() {
	# One stage: busy plus idle is its span.  Kernels of 1.2 us leave the
	# sums' rounding (1.4e-14 us) as the rest, which is no other stage's work.
	"$TESTDIR/gen-trace" | jq -c '.traceEvents |= map(if .cat == "kernel" and
	    (.name | test("rmsnorm")) then .dur = 1.2 else . end)' >"$T/r.json"
	"$BIN/trace-extract" -q "$T/r.json" | "$BIN/trace-stage" | ss >"$T/out"
	eq 'all 324.8 null' "$(rec gpu_time '"\(.stage) \(.kernel_us * 1000 | round / 1000) \(.other_stages_us)"' "$T/out")"
}
check 'one stage: no other stages time from rounding' t_one_stage_rounding

# The host blocked in a synchronous copy (SGLang on ROCm: hipStreamWaitEvent,
# then a hipMemcpyWithStream that waits 463 ms): kernel A [0,100]; B is
# launched at 120 (its call ends at 125) and starts at 1100; the copy's
# call runs [130,1130], its copy [1110,1120].  The gap [100,1100]: 25 us
# host-bound (until B's call ended), 970 us waiting on a synchronization
# ([125,1100] within the copy's call), 5 us neither.  A cudaDeviceSynchronize
# [1120,1203] that returns 3 us after the GPU went idle at 1200, before
# C's launch [1205,1210]: the gap [1200,1212] is host-bound up to 1210
# (10 us; 35 in all), and its last 2 us are in no blocking call: the
# host's own wait stays host-bound.  With an async copy nothing is a
# synchronization.
blocked() {
	trc /p/decode/t.json
	launch cudaLaunchKernel 0 5 1
	kern a kernel 0 100 1
	launch cudaLaunchKernel 120 5 2
	copy "${1:-hipMemcpyWithStream}" 130 1000 3 memcpy
	kern b kernel 1100 10 2
	kern 'Memcpy DtoH (Device -> Host)' gpu_memcpy 1110 10 3
	kern c0 kernel 1120 80 -
	blocking cudaDeviceSynchronize 1120 83
	launch cudaLaunchKernel 1205 5 4
	kern c kernel 1212 8 4
	end
}

t_blocked() {
	blocked | ss >"$T/out"
	eq '1012 35 970 970 hipMemcpyWithStream 100' \
	    "$(rec gpu_time '"\(.idle_us) \(.idle_launch_us) \(.idle_sync_us) \(.sync_gap_us) \(.sync_gap_call) \(.sync_gap_ts)"' "$T/out")"
	eq '100 1000 25 970|1200 12 10 -' \
	    "$(rec idle_gap '"\(.ts) \(.dur) \(.host_us) \(.sync_us // "-")"' "$T/out" | paste -sd '|')"
	# a blocking call with a corrupt (infinite) duration counts nowhere
	blocked | sed '/"type":"stats"/i {"type":"sync","t":0,"name":"cudaStreamSynchronize","pid":"1","tid":"1","ts":1201,"dur":1e999}' | ss >"$T/out"
	eq '35 970' "$(rec gpu_time '"\(.idle_launch_us) \(.idle_sync_us)"' "$T/out")"
	blocked cudaMemcpyAsync | ss >"$T/out"
	eq '1012 35 0 false' "$(rec gpu_time '"\(.idle_us) \(.idle_launch_us) \(.idle_sync_us) \(has("sync_gap_us"))"' "$T/out")"
	# clocks that disagree: no host-side figure at all
	blocked | sed 's/"time_us":{}/"time_us":{},"clock_offset_us":5000/' | ss >"$T/out"
	eq 'false false false' "$(rec gpu_time '"\(has("idle_launch_us")) \(has("idle_sync_us")) \(has("sync_gap_us"))"' "$T/out")"
}
check 'idle while the host sat in a blocking call: its own kind, after the host-bound part' t_blocked

done_testing
