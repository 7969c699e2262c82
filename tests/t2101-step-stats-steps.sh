#!/bin/sh
# step-stats: step markers of each framework, the work launched inside
# them, the per-stage step percentiles, no steps and one step.
. "$(dirname "$0")/lib.sh"
. "$FIX/step-stats/records.sh"

STEPCOLS='[.index, .stage, .name, .ts, .cpu_us, (.batch // "-"), (.tokens // "-"), .kernels, .gpu_busy_us, .gpu_span_us] | @tsv'

# SGLang: five decode steps of 100, 300, 200, 400, 500 us and one extend step.
#   step 0 [0,100]: a graph replay launched at 10, two kernels on two
#          streams [20,30] and [25,40]: 2 items, busy 20, span 20
#   step 1 [100,400]: launches at 150 and 390, kernels [160,170] and
#          [395,405] (running past the marker): busy 20, span 245
#   step 2 [400,600]: nothing launched; its stage is the marker's (DECODE)
#   step 3 [600,1000]: a launch of another process at 700 and a memcpy
#          without launch record: neither is the step's; a memcpy whose
#          cudaMemcpyAsync call (kind memcpy) starts at 800 is: [805,815]
#   step 4 [1000,1500]: a launch at 1000 from another thread of the
#          process (counts; the start is inclusive), kernel [1010,1020]
#   step 5 [1500,1550] EXTEND: a launch at 1500 lies in steps 4 and 5;
#          the latest-starting marker, step 5, takes it: kernel [1505,1525]
# decode durations sorted 100 200 300 400 500: nearest-rank p50 is the 3rd
# (300), p90 the 5th (500).
sglang() {
	trc /p/t.json
	ann 'step[DECODE bs=32]' 0 100
	ann 'step[DECODE bs=32]' 0 100 gpu_user_annotation
	ann 'step[DECODE bs=32]' 100 300
	ann 'step[DECODE bs=31]' 400 200
	ann 'step[DECODE bs=30]' 600 400
	ann 'step[DECODE bs=30]' 1000 500
	ann 'step[EXTEND bs=4 toks=512]' 1500 50
	ann model_forward_decode 0 1500
	launch cudaGraphLaunch 10 5 1
	launch cudaLaunchKernel 150 5 2
	launch cudaLaunchKernel 390 5 3
	CPID=2 launch cudaLaunchKernel 700 5 4
	launch cudaLaunchKernel 1000 5 5 3
	launch cudaLaunchKernel 1500 5 6
	kern graph_gemm kernel 20 10 1 7
	kern graph_attention kernel 25 15 1 8
	kern eager_norm kernel 160 10 2 7
	kern eager_act kernel 395 10 3 7
	kern other_proc_launch kernel 710 10 4 7
	kern 'Memcpy DtoH (Device -> Pinned)' gpu_memcpy 720 10 - 7
	copy cudaMemcpyAsync 800 3 9 memcpy
	kern 'Memcpy HtoD (Pinned -> Device)' gpu_memcpy 805 10 9 7
	kern eager_sample kernel 1010 10 5 7
	STAGE=extend kern prefill_gemm kernel 1505 20 6 7
	end
}

t_sglang_steps() {
	sglang | ss >"$T/out"
	rec step "$STEPCOLS" "$T/out" >"$T/got"
	printf '%s\n' \
	    '0	decode	step[DECODE bs=32]	0	100	32	-	2	20	20' \
	    '1	decode	step[DECODE bs=32]	100	300	32	-	2	20	245' \
	    '2	decode	step[DECODE bs=31]	400	200	31	-	0	0	0' \
	    '3	decode	step[DECODE bs=30]	600	400	30	-	1	10	10' \
	    '4	decode	step[DECODE bs=30]	1000	500	30	-	1	10	10' \
	    '5	extend	step[EXTEND bs=4 toks=512]	1500	50	4	512	1	20	20' >"$T/want"
	same "$T/want" "$T/got"
}
check 'SGLang step[...] markers: batch, tokens, stage and the work each launched' t_sglang_steps

# The markers follow one another, so each period (start to the next
# marker's start; the last, step 5, to the later of its marker's end 1550
# and its kernel's end 1525) is its CPU time.  Tokens per second: decode
# steps move their batch, 32+32+31+30+30 = 155 tokens in 1500 us; the
# extend step its 512 tokens in 50 us.
t_sglang_percentiles() {
	sglang | ss >"$T/out"
	rec gpu_time '[.stage, .steps, .step_p50_us // "-", .step_p90_us // "-", .step_max_us // "-", .tokens_per_s] | @tsv' \
	    "$T/out" >"$T/got"
	printf '%s\n' 'extend	1	-	-	-	10240000' 'decode	5	300	500	500	103333.33333333333' >"$T/want"
	same "$T/want" "$T/got"
	eq '100 300 200 400 500 50' "$(rec step '.period_us' "$T/out" | tr '\n' ' ' | sed 's/ $//')"
}
check 'step periods and their percentiles per stage: nearest rank; tokens per second' t_sglang_percentiles

# SGLang's overlap scheduler: each decode step's CPU marker is short (1400
# us) while the GPU work it launched runs for 9000 us and the next step
# starts when that is done.  The period is what a serving engineer calls
# the step time: 9000, 9000 and, for the last, to its GPU work's end at
# 18000 + 200 + 9000 = 27200, so 9200; the CPU time stays 1400 a step.
t_overlap_scheduler() {
	{
		trc /p/decode/t.json
		for k in 0 1 2; do
			ann 'step[DECODE bs=128]' $((k * 9000)) 1400
			launch cudaGraphLaunch $((k * 9000 + 100)) 50 $((k + 1))
			kern graph_step kernel $((k * 9000 + 200)) 9000 $((k + 1))
		done
		end
	} | ss >"$T/out"
	eq '1400 9000 9000|1400 9000 9000|1400 9200 9000' \
	    "$(rec step '"\(.cpu_us) \(.period_us) \(.gpu_span_us)"' "$T/out" | paste -sd '|')"
	# the stage's step figures are of the periods, not of the 1.4 ms markers
	eq 'decode 3 9000 9200 9200' "$(rec gpu_time '"\(.stage) \(.steps) \(.step_p50_us) \(.step_p90_us) \(.step_max_us)"' "$T/out")"
	# 384 tokens (128 a step) in 27200 us
	eq 14117.64705882353 "$(rec gpu_time '.tokens_per_s' "$T/out")"
}
check 'overlap scheduler: step period, not the CPU marker, is the step time' t_overlap_scheduler

# Ten PyTorch steps of 10, 20, ... 100 us, back to back in shuffled order
# (written in another order still), so each period is its step's length:
# nearest-rank p50 is 50 and p90 is 90 (an interpolating percentile would
# give 55, 91).
t_pytorch_ten() {
	{
		trc /p/decode/t.json
		at=0
		for d in 30 100 10 60 20 90 40 80 50 70; do
			echo "$at $d"
			at=$((at + d))
		done | sort -k2,2n | while read -r at d; do
			ann "ProfilerStep#$d" "$at" "$d"
		done
		kern k kernel 0 5 -
		end
	} | ss >"$T/out"
	eq 'decode 10 50 90 100' "$(rec gpu_time '"\(.stage) \(.steps) \(.step_p50_us) \(.step_p90_us) \(.step_max_us)"' "$T/out")"
	eq '0 ProfilerStep#30 30 30 -' "$(rec step 'select(.index == 0) | "\(.index) \(.name) \(.cpu_us) \(.period_us) \(.batch // "-")"' "$T/out")"
	eq 10 "$(grep -c '"type":"step"' "$T/out")" steps
}
check 'PyTorch ProfilerStep#N: ten steps, p50 50, p90 90, by start order' t_pytorch_ten

# vLLM markers, both spellings; the trace has no launches and no kernels, so
# each stage is the one the marker names (mixed: none, so the path stage,
# all), and gpu_time records exist for the steps alone.
t_vllm() {
	{
		trc /p/t.json
		ann 'execute_4096_context_2(sq4064sk4064sqsq8257536sqsk8257536)_generation_30(sq30sk9000sqsq30sqsk9000)' 0 50
		ann 'execute_context_1(888_788544)_generation_0(0)' 100 80
		ann 'execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk32785sqsq32sqsk32785)' 200 10
		ann execute_model 0 300
		ann 'execute_context_1(888' 300 5
		end
	} | ss -q >"$T/out"
	rec step '[.index, .stage, .batch // "-", .tokens // "-", .kernels // "-"] | @tsv' "$T/out" >"$T/got"
	printf '%s\n' '0	all	32	4096	-' '1	extend	1	-	-' '2	decode	32	32	-' >"$T/want"
	same "$T/want" "$T/got"
	rec gpu_time '[.stage, .kernels, .steps] | @tsv' "$T/out" >"$T/got"
	printf '%s\n' 'extend	0	1' 'decode	0	1' 'all	0	1' >"$T/want"
	same "$T/want" "$T/got"
}
check 'vLLM execute_..._context_N..._generation_N... markers, both spellings' t_vllm

# Nested markers of several families: only the first family present counts
# (SGLang, then vLLM, then PyTorch); GPU-side copies never do.
t_nesting() {
	{
		trc /p/decode/t.json
		ann 'ProfilerStep#7' 0 1000
		ann 'execute_8_context_0(sq0sk0sqsq0sqsk0)_generation_8(sq8sk80sqsq8sqsk80)' 10 900
		ann 'step[DECODE bs=8]' 20 800
		ann 'step[DECODE bs=8]' 25 800 gpu_user_annotation
		ann 'ProfilerStep#7' 5 1000 gpu_user_annotation
		end
		T_IDX=1 trc /p/decode/u.json
		T_IDX=1 ann 'ProfilerStep#8' 0 1000
		T_IDX=1 ann 'execute_8_context_0(sq0sk0sqsq0sqsk0)_generation_8(sq8sk80sqsq8sqsk80)' 10 900
		T_IDX=1 end
		T_IDX=2 trc /p/decode/v.json
		T_IDX=2 ann 'ProfilerStep#9' 0 1000 gpu_user_annotation
		T_IDX=2 end
	} | ss >"$T/out"
	rec step '[.t, .name] | @tsv' "$T/out" >"$T/got"
	printf '%s\n' '0	step[DECODE bs=8]' \
	    '1	execute_8_context_0(sq0sk0sqsq0sqsk0)_generation_8(sq8sk80sqsq8sqsk80)' >"$T/want"
	same "$T/want" "$T/got"
}
check 'nested markers: one family per trace (SGLang > vLLM > PyTorch), CPU side only' t_nesting

t_no_steps() {
	{
		trc /p/decode/t.json
		ann model_forward_decode 0 100
		ann 'step[DECODE bs=8]' 0 100 gpu_user_annotation
		launch cudaLaunchKernel 1 2 1
		kern k kernel 5 5 1
		end
	} | ss >"$T/out"
	eq 'decode false false false false' "$(rec gpu_time '"\(.stage) \(has("steps")) \(has("step_p50_us")) \(has("step_p90_us")) \(has("step_max_us"))"' "$T/out")"
	hasnt "$T/out" '"type":"step"'
}
check 'no step markers: no step records, no step members' t_no_steps

t_one_step() {
	{
		trc /p/decode/t.json
		ann 'ProfilerStep#3' 0 100
		launch cudaLaunchKernel 1 2 1
		kern k kernel 5 5 1
		end
	} | ss >"$T/out"
	eq 'decode 1 false false false' "$(rec gpu_time '"\(.stage) \(.steps) \(has("step_p50_us")) \(has("step_p90_us")) \(has("step_max_us"))"' "$T/out")"
	eq '{"type":"step","t":0,"stage":"decode","index":0,"name":"ProfilerStep#3","ts":0,"cpu_us":100,"period_us":100,"kernels":1,"gpu_busy_us":5,"gpu_span_us":5,"comm_total_us":0,"gpu_ts":5,"id":"step-1"}' \
	    "$(grep '"type":"step"' "$T/out")"
}
check 'one step: steps 1 and no percentiles' t_one_step

# Without launch records the steps keep their CPU side only.
t_steps_no_launches() {
	{
		trc /p/decode/t.json
		ann 'ProfilerStep#3' 0 100
		ann 'ProfilerStep#4' 100 50
		kern k kernel 5 5 -
		end
	} | ss >"$T/out"
	eq '{"type":"step","t":0,"stage":"decode","index":1,"name":"ProfilerStep#4","ts":100,"cpu_us":50,"period_us":50,"id":"step-2"}' \
	    "$(grep '"index":1' "$T/out")"
	eq 'decode 2 50 100 100' "$(rec gpu_time '"\(.stage) \(.steps) \(.step_p50_us) \(.step_p90_us) \(.step_max_us)"' "$T/out")"
}
check 'no launch records: step kernels and GPU time absent, CPU time kept' t_steps_no_launches

done_testing
