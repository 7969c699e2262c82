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
# and its kernel's end 1525) is its CPU time.  The percentiles are of the
# complete periods (a next step follows) of steps with GPU work: step 2
# launched nothing, step 5 is the last; decode's are 100 300 400 500, so
# nearest-rank p50 is the 2nd (300), p90 the 4th (500).  Tokens per
# second, of the same steps: decode steps move their batch, 32+32+30+30 =
# 124 tokens in 1300 us; the extend stage has only its last step, whose
# 512 tokens in 50 us are its rate, marked tokens_from_last.
t_sglang_percentiles() {
	sglang | ss >"$T/out"
	rec gpu_time '[.stage, .steps, .complete_steps, .step_p50_us // "-", .step_p90_us // "-", .step_max_us // "-", .step_last_us // "-", .tokens_per_s, .tokens_from_last // false] | @tsv' \
	    "$T/out" >"$T/got"
	printf '%s\n' 'extend	1	0	-	-	-	50	10240000	true' \
	    'decode	5	4	300	500	500	-	95384.61538461539	false' >"$T/want"
	same "$T/want" "$T/got"
	eq '100 300 200 400 500 50' "$(rec step '.period_us' "$T/out" | tr '\n' ' ' | sed 's/ $//')"
	eq 'false false false false false true' "$(rec step '.last // false' "$T/out" | tr '\n' ' ' | sed 's/ $//')"
}
check 'step periods and their percentiles per stage: nearest rank; tokens per second' t_sglang_percentiles

# SGLang's overlap scheduler: each decode step's CPU marker is short (1400
# us) while the GPU work it launched runs for 9000 us and the next step
# starts when that is done.  The period is what a serving engineer calls
# the step time: 9000, 9000 and, for the last, to its GPU work's end at
# 18000 + 200 + 9000 = 27200, so 9200; the CPU time stays 1400 a step.
# The percentiles are of the two complete periods, the last apart.
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
	eq 'decode 3 2 9000 9000 9000 9200' "$(rec gpu_time '"\(.stage) \(.steps) \(.complete_steps) \(.step_p50_us) \(.step_p90_us) \(.step_max_us) \(.step_last_us)"' "$T/out")"
	# 256 tokens (128 a step) in 18000 us, of the complete steps
	eq 14222.222222222223 "$(rec gpu_time '.tokens_per_s' "$T/out")"
}
check 'overlap scheduler: step period, not the CPU marker, is the step time' t_overlap_scheduler

# The host ahead of the GPU: markers 6000 us apart launch 9000 us of GPU
# work each, which queues (each kernel starts when the one before ends).
# The periods are the host's rate, 6000; the steps' GPU busy, 9000, is
# what the GPU took a step: steps_host_ahead, with the busy p50 beside.
# The overlap scheduler's steps above (busy equal to the period) are not.
t_host_ahead() {
	{
		trc /p/decode/t.json
		for k in 0 1 2 3; do
			ann 'step[DECODE bs=128]' $((k * 6000)) 500
			launch cudaGraphLaunch $((k * 6000 + 100)) 50 $((k + 1))
			kern graph_step kernel $((k * 9000 + 200)) 9000 $((k + 1))
		done
		end
	} | ss >"$T/out"
	eq 'decode 6000 9000 true' "$(rec gpu_time '"\(.stage) \(.step_p50_us) \(.step_busy_p50_us) \(.steps_host_ahead)"' "$T/out")"
	t_overlap_scheduler
	eq '9000 9000 null' "$(rec gpu_time '"\(.step_p50_us) \(.step_busy_p50_us) \(.steps_host_ahead)"' "$T/out")"
}
check 'the host ahead of the GPU: the periods are its rate, the steps GPU busy longer' t_host_ahead

# Ten PyTorch steps of 10, 20, ... 100 us, back to back in shuffled order
# (written in another order still), and an eleventh of 5 us after them, so
# each period is its step's length: of the ten complete ones nearest-rank
# p50 is 50 and p90 is 90 (an interpolating percentile would give 55,
# 91); the last, 5 us, stands apart.  The trace has no launch records, so
# no step is known to be empty: all count.
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
		ann 'ProfilerStep#5' 550 5
		kern k kernel 0 5 -
		end
	} | ss >"$T/out"
	eq 'decode 11 10 50 90 100 5' "$(rec gpu_time '"\(.stage) \(.steps) \(.complete_steps) \(.step_p50_us) \(.step_p90_us) \(.step_max_us) \(.step_last_us)"' "$T/out")"
	eq '0 ProfilerStep#30 30 30 -' "$(rec step 'select(.index == 0) | "\(.index) \(.name) \(.cpu_us) \(.period_us) \(.batch // "-")"' "$T/out")"
	eq 11 "$(grep -c '"type":"step"' "$T/out")" steps
}
check 'PyTorch ProfilerStep#N: ten steps, p50 50, p90 90, by start order' t_pytorch_ten

# vLLM markers, both spellings; the trace has no launches and no kernels, so
# each stage is the one the marker names (mixed: none, so the path stage,
# all), and gpu_time records exist for the steps alone.  Without the total
# the tokens are the groups' (888 of "(888_788544)", 4064 + 30 of sq).
t_vllm() {
	{
		trc /p/t.json
		ann 'execute_4096_context_2(sq4064sk4064sqsq8257536sqsk8257536)_generation_30(sq30sk9000sqsq30sqsk9000)' 0 50
		ann 'execute_context_1(888_788544)_generation_0(0)' 100 80
		ann 'execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk32785sqsq32sqsk32785)' 200 10
		ann execute_model 0 300
		ann 'execute_context_1(888' 300 5
		ann 'execute_context_2(sq4064sk4064sqsq8257536sqsk8257536)_generation_30(sq30sk9000sqsq30sqsk9000)' 400 20
		end
	} | ss -q >"$T/out"
	rec step '[.index, .stage, .batch // "-", .tokens // "-", .kernels // "-"] | @tsv' "$T/out" >"$T/got"
	printf '%s\n' '0	all	32	4096	-' '1	extend	1	888	-' '2	decode	32	32	-' '3	all	32	4094	-' >"$T/want"
	same "$T/want" "$T/got"
	rec gpu_time '[.stage, .kernels, .steps] | @tsv' "$T/out" >"$T/got"
	printf '%s\n' 'extend	0	1' 'decode	0	1' 'all	0	2' >"$T/want"
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
	eq 'decode 1 0 false false false 100' "$(rec gpu_time '"\(.stage) \(.steps) \(.complete_steps) \(has("step_p50_us")) \(has("step_p90_us")) \(has("step_max_us")) \(.step_last_us)"' "$T/out")"
	eq '{"type":"step","t":0,"stage":"decode","index":0,"name":"ProfilerStep#3","ts":0,"cpu_us":100,"period_us":100,"last":true,"kernels":1,"gpu_busy_us":5,"gpu_span_us":5,"comm_total_us":0,"gpu_ts":5,"id":"step-1"}' \
	    "$(grep '"type":"step"' "$T/out")"
}
check 'one step: steps 1, no percentiles, its period the last one' t_one_step

# Without launch records the steps keep their CPU side only.
t_steps_no_launches() {
	{
		trc /p/decode/t.json
		ann 'ProfilerStep#3' 0 100
		ann 'ProfilerStep#4' 100 50
		kern k kernel 5 5 -
		end
	} | ss >"$T/out"
	eq '{"type":"step","t":0,"stage":"decode","index":1,"name":"ProfilerStep#4","ts":100,"cpu_us":50,"period_us":50,"last":true,"id":"step-2"}' \
	    "$(grep '"index":1' "$T/out")"
	# one complete period (100), the last (50) apart
	eq 'decode 2 1 100 100 100 50' "$(rec gpu_time '"\(.stage) \(.steps) \(.complete_steps) \(.step_p50_us) \(.step_p90_us) \(.step_max_us) \(.step_last_us)"' "$T/out")"
}
check 'no launch records: step kernels and GPU time absent, CPU time kept' t_steps_no_launches

# An empty trailing step (a marker that launched nothing, as ROCm 6.2's
# ProfilerStep#2 of 49 us after the last real step) is no step time: the
# percentiles are of the one complete period, 100, not of 5 and 100
# (whose nearest-rank p50 would be 5), and there is no last step with work.
t_empty_last() {
	{
		trc /p/decode/t.json
		ann 'ProfilerStep#1' 0 100
		launch cudaLaunchKernel 10 5 1
		kern k kernel 20 50 1
		ann 'ProfilerStep#2' 100 5
		end
	} | ss >"$T/out"
	eq 'decode 2 1 100 100 100 false' "$(rec gpu_time '"\(.stage) \(.steps) \(.complete_steps) \(.step_p50_us) \(.step_p90_us) \(.step_max_us) \(has("step_last_us"))"' "$T/out")"
	eq '100 5' "$(rec step '.period_us' "$T/out" | paste -sd ' ')"
}
check 'an empty trailing step counts in no percentile' t_empty_last

# With the GPU clock 5000 us ahead (gpu_pids.clock_offset_us), the last
# step's GPU work ending at 5250 on the GPU's clock ended at 250 on the
# host's: the period is 250, not 5250, and its 1000 tokens make 4,000,000
# tokens per second, from the last step (no complete one).
t_offset_last() {
	{
		trc /p/t.json | sed 's/"time_us":{}/"time_us":{},"clock_offset_us":5000/'
		ann 'step[EXTEND bs=2 toks=1000]' 0 100
		launch cudaLaunchKernel 10 5 1
		STAGE=extend kern prefill kernel 5050 200 1
		end
	} | ss >"$T/out"
	eq '250 true' "$(rec step '"\(.period_us) \(.last)"' "$T/out")"
	eq 'extend 250 4000000 true' "$(rec gpu_time '"\(.stage) \(.step_last_us) \(.tokens_per_s) \(.tokens_from_last)"' "$T/out")"
}
check 'clocks that disagree: the last period ends at the GPU end less the offset' t_offset_last

done_testing
