#!/bin/sh
# rank-skew on hand-made records: a late rank on a host whose clock runs
# 1000 us ahead, a missing rank, unequal collective counts, sequences whose
# kernels differ, two stages.  Every figure below is worked out by hand in
# the comments.
. "$(dirname "$0")/lib.sh"

RS=$BIN/rank-skew
AR='ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)'
AR32='ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)'
SR='ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)'

trc() {	# trc T RANK: a trace record
	printf '{"type":"trace","v":1,"t":%s,"role":"single","path":"/p/x-TP-%s.trace.json","stage":"all","rank":%s}\n' \
	    "$1" "$2" "$2"
}
k() {	# k T NAME TS DUR [STAGE]: a selected kernel
	printf '{"type":"kernel","t":%s,"name":"%s","pid":"0","tid":"7","ts":%s,"dur":%s,"stream":"7","stage":"%s","sel":true}\n' \
	    "$1" "$2" "$3" "$4" "${5:-decode}"
}
st() { printf '{"type":"stats","t":%s}\n' "$1"; }

# Three ranks, two all-reduces each (decode):
#   rank 0  gemm_a 100+50, AR 160+40 (ends 200), gemm_b 210+50, AR 270+30 (ends 300);
#           copy_k 120+60 on another stream; other_gpu (no sel) is not counted
#   rank 1  clock 1000 ahead: gemm_a 1100+50, AR 1170+30 (ends 1200),
#           gemm_b 1210+50, AR 1265+35 (ends 1300)
#   rank 2  slow: gemm_a 100+80, AR 190+10 (ends 200), gemm_b 210+70, AR 285+15
late_ranks() {
	trc 0 0
	k 0 gemm_a 100 50
	k 0 copy_k 120 60
	printf '{"type":"kernel","t":0,"name":"other_gpu","pid":"1","tid":"7","ts":100,"dur":999,"stage":"decode"}\n'
	k 0 "$AR" 160 40
	k 0 gemm_b 210 50
	k 0 "$AR" 270 30
	st 0
	trc 1 1
	k 1 gemm_a 1100 50
	k 1 "$AR" 1170 30
	k 1 gemm_b 1210 50
	k 1 "$AR" 1265 35
	st 1
	trc 2 2
	k 2 gemm_a 100 80
	k 2 "$AR" 190 10
	k 2 gemm_b 210 70
	k 2 "$AR" 285 15
	st 2
}
late_ranks >"$T/late.jsonl"

t_align() {
	"$RS" --no-pass "$T/late.jsonl" >"$T/out" 2>"$T/err"
	# aligned on the first all-reduce's end: rank 1 is 200 - 1200 = -1000 us off
	eq '{"type":"rank_align","stage":"decode","method":"end","ref_rank":0,"kind":"all-reduce","name":"'"$AR"'","ordinal":1,"end_spread_us":0}' \
	    "$(grep rank_align "$T/out")"
	eq "0 -1000 0" "$(jq -r 'select(.type == "rank_row") | .offset_us' "$T/out" | tr '\n' ' ' | sed 's/ $//')"
	[ ! -s "$T/err" ]
}
check "clocks aligned on the first all-reduce's end" t_align

t_collectives() {
	"$RS" --no-pass "$T/late.jsonl" >"$T/out"
	# AR 1: aligned starts 160, 1170-1000=170, 190: skew 30; durations 40 30 10: wait 30
	# AR 2: aligned starts 270, 265, 285: skew 20; durations 30 35 15: wait 20
	jq -c 'select(.type == "collective_row") | del(.type, .name)' "$T/out" >"$T/rows"
	cat >"$T/want" <<-'EOF'
	{"stage":"decode","kind":"all-reduce","ordinal":1,"ranks":[{"rank":0,"ts":160,"dur":40},{"rank":1,"ts":170,"dur":30},{"rank":2,"ts":190,"dur":10}],"skew_us":30,"wait_us":30,"last_rank":2,"id":"collective-1"}
	{"stage":"decode","kind":"all-reduce","ordinal":2,"ranks":[{"rank":0,"ts":270,"dur":30},{"rank":1,"ts":265,"dur":35},{"rank":2,"ts":285,"dur":15}],"skew_us":20,"wait_us":20,"last_rank":2,"id":"collective-2"}
	EOF
	same "$T/want" "$T/rows"
}
check "late rank: skew, wait and last rank of each all-reduce" t_collectives

t_rank_rows() {
	"$RS" --no-pass "$T/late.jsonl" >"$T/out"
	# rank 0: busy [100,200] + [210,260] + [270,300] = 180, kernels 50+60+40+50+30 = 230,
	#   comm 70, wait (40-10) + (30-15) = 45
	# rank 1: busy = kernels = 50+30+50+35 = 165, comm 65, wait (30-10) + (35-15) = 40
	# rank 2: busy = kernels = 80+10+70+15 = 175, comm 25, wait 0, last twice: the straggler
	# where it is late (issue 31), against the median of ranks 0 and 1; each window runs
	# from the rank's previous collective's end (the first: its first kernel) to the start:
	#   AR 1: start 190 vs 160, 170 (median 165): 25; windows [100,160] busy 60 idle 0,
	#         [1100,1170] busy 50 idle 20, [100,190] busy 80 idle 10: busy +25, idle 0
	#   AR 2: start 285 vs 270, 265 (267.5): 17.5; windows [200,270] busy 50 idle 20,
	#         [1200,1265] busy 50 idle 15, [200,285] busy 70 idle 15: busy +20, idle -2.5
	#   late 42.5, busy 45, idle -2.5, no launch records; its other kernels 150 against
	#   160 and 100 (median 130): +20; busy reaches half the lateness: kernels
	jq -c 'select(.type == "rank_row") | del(.type, .stage, .offset_us)' "$T/out" >"$T/rows"
	cat >"$T/want" <<-'EOF'
	{"rank":0,"busy_us":180,"kernel_us":230,"comm_us":70,"wait_us":45,"last_arrivals":0,"collectives":2,"matched":2,"straggler":false,"time_base_us":0,"id":"rank-1"}
	{"rank":1,"busy_us":165,"kernel_us":165,"comm_us":65,"wait_us":40,"last_arrivals":0,"collectives":2,"matched":2,"straggler":false,"time_base_us":0,"id":"rank-2"}
	{"rank":2,"busy_us":175,"kernel_us":175,"comm_us":25,"wait_us":0,"last_arrivals":2,"collectives":2,"matched":2,"straggler":true,"late_collectives":2,"late_us":42.5,"late_idle_us":-2.5,"late_busy_us":45,"kernel_excess_us":20,"late_in":"kernels","time_base_us":0,"id":"rank-3"}
	EOF
	same "$T/want" "$T/rows"
}
check "late rank: busy, kernel, comm and wait time per rank, the straggler" t_rank_rows

t_deltas() {
	"$RS" --no-pass "$T/late.jsonl" >"$T/out"
	# the straggler's gemm_a 80 against the median of 50 50 80; gemm_b 70 against 50;
	# copy_k ran on rank 0 only: 0 on the straggler, not above the median (0)
	jq -c 'select(.type == "rank_kernel_delta") | del(.type)' "$T/out" >"$T/rows"
	cat >"$T/want" <<-'EOF'
	{"stage":"decode","rank":2,"kernel":"gemm_a","rank_us":80,"median_us":50,"delta_us":30,"launches":1,"id":"delta-1"}
	{"stage":"decode","rank":2,"kernel":"gemm_b","rank_us":70,"median_us":50,"delta_us":20,"launches":1,"id":"delta-2"}
	EOF
	same "$T/want" "$T/rows"
	"$RS" --no-pass -n 1 "$T/late.jsonl" | grep -c rank_kernel_delta >"$T/n" || true
	eq 1 "$(cat "$T/n")"
}
check "the straggler's kernels against the other ranks' median" t_deltas

t_deltas_two() {
	# of two ranks the other's time is the measure, as for the lateness:
	# rank 1's gemm_a 80 against rank 0's 50 is 30 more (the median of both,
	# 65, would say 15)
	{ trc 0 0; k 0 gemm_a 100 50; k 0 "$AR" 160 40; st 0
	  trc 1 1; k 1 gemm_a 100 80; k 1 "$AR" 190 10; st 1; } >"$T/two.jsonl"
	"$RS" --no-pass "$T/two.jsonl" >"$T/out"
	eq "1 gemm_a 80 50 30" "$(jq -r 'select(.type == "rank_kernel_delta") |
	    "\(.rank) \(.kernel) \(.rank_us) \(.median_us) \(.delta_us)"' "$T/out")"
	eq 30 "$(jq -r 'select(.type == "rank_row" and .straggler) | .kernel_excess_us' "$T/out")"
}
check "two ranks: the straggler's kernels against the other rank" t_deltas_two

t_align_none() {
	"$RS" --no-pass --align none "$T/late.jsonl" >"$T/out"
	eq '"none"' "$(jq 'select(.type == "rank_align") | .method' "$T/out")"
	# raw starts 160, 1170, 190: rank 1 seems 1010 us late
	eq "1010 1 1010" "$(jq -r 'select(.type == "collective_row" and .ordinal == 1) |
	    "\(.skew_us) \(.last_rank) \(.ranks[1].ts - .ranks[0].ts)"' "$T/out")"
}
check "--align none takes the clocks as they are" t_align_none

t_pass_through() {
	"$RS" "$T/late.jsonl" >"$T/out"
	head -n "$(wc -l <"$T/late.jsonl")" "$T/out" >"$T/head"
	same "$T/late.jsonl" "$T/head"
	eq 8 "$(($(wc -l <"$T/out") - $(wc -l <"$T/late.jsonl")))"
}
check "input records pass through unchanged, the analysis follows" t_pass_through

# A missing rank: rank 3 is expected (--ranks, or the input's tp_size) but absent.
t_missing_rank() {
	"$RS" --no-pass --ranks 0-3 "$T/late.jsonl" >"$T/out" 2>"$T/err"
	eq '{"type":"rank_gap","stage":"decode","reason":"missing","ranks":[{"rank":3,"count":0}]}' \
	    "$(grep rank_gap "$T/out")"
	has "$T/err" "warning: stage 'decode': no kernels of rank 3: left out of the matching"
	# the present ranks are still matched
	eq 2 "$(grep -c collective_row "$T/out")"
	{ printf '{"type":"input","v":1,"tp_size":4}\n'; cat "$T/late.jsonl"; } |
	    "$RS" --no-pass >"$T/out2" 2>/dev/null
	same "$T/out" "$T/out2"
}
check "missing rank: reported, the others matched" t_missing_rank

# A corrupt tp_size (a billion, the largest integer) expects no rank: it
# once looped over them; repeated --ranks are one rank each.
t_absurd_tp_size() {
	"$RS" --no-pass "$T/late.jsonl" >"$T/plain" 2>/dev/null
	for n in 1000000000 9223372036854775807; do
		{ printf '{"type":"input","v":1,"tp_size":%s}\n' "$n"; cat "$T/late.jsonl"; } |
		    "$RS" --no-pass >"$T/out" 2>"$T/err"
		same "$T/plain" "$T/out" || return 1
		has "$T/err" "warning: tp_size $n is no tensor-parallel size (more than 1000000)"
	done
	"$RS" --no-pass --ranks 0-3,3,2-3 "$T/late.jsonl" >"$T/out" 2>/dev/null
	"$RS" --no-pass --ranks 0-3 "$T/late.jsonl" >"$T/want" 2>/dev/null
	same "$T/want" "$T/out"
}
check "an absurd tp_size expects no rank; repeated --ranks count once" t_absurd_tp_size

# Unequal counts: rank 1's trace was cut after its first all-reduce.  Every
# rank also ends with one send/recv, which does line up.
cut_ranks() {
	trc 0 0; k 0 "$AR" 160 40; k 0 "$AR" 270 30; k 0 "$SR" 400 20; st 0
	trc 1 1; k 1 "$AR" 1170 30; k 1 "$SR" 1405 15; st 1
	trc 2 2; k 2 "$AR" 190 10; k 2 "$AR" 285 15; k 2 "$SR" 410 10; st 2
}

t_unequal_counts() {
	cut_ranks | "$RS" --no-pass >"$T/out" 2>"$T/err"
	eq '{"type":"rank_gap","stage":"decode","reason":"count","kind":"all-reduce","ranks":[{"rank":0,"count":2},{"rank":1,"count":1},{"rank":2,"count":2}]}' \
	    "$(grep rank_gap "$T/out")"
	has "$T/err" "warning: stage 'decode': all-reduce counts differ between ranks (1 on rank 1, 2 on rank 0): not paired"
	# no all-reduce is paired; the send/recv is, and the clocks align on it:
	# ends 420, 1420, 420: offsets 0, -1000, 0; starts 400, 405, 410: skew 10,
	# durations 20 15 10: wait 10, rank 2 last
	eq "send-recv" "$(jq -r 'select(.type == "rank_align") | .kind' "$T/out")"
	eq '1 send-recv 10 10 2' "$(jq -r 'select(.type == "collective_row") |
	    "\(.ordinal) \(.kind) \(.skew_us) \(.wait_us) \(.last_rank)"' "$T/out")"
	eq "3 1 | 2 1 | 3 1" "$(jq -r 'select(.type == "rank_row") | "\(.collectives) \(.matched)"' "$T/out" |
	    tr '\n' '|' | sed 's/|$//; s/|/ | /g')"
}
check "unequal counts: the kind is reported, not paired" t_unequal_counts

t_nothing_aligned() {
	cut_ranks | grep -v SendRecv | "$RS" --no-pass >"$T/out" 2>"$T/err"
	eq '"none"' "$(jq 'select(.type == "rank_align") | .method' "$T/out")"
	has "$T/err" "no collective is matched on every rank: clocks not aligned"
	hasnt "$T/out" collective_row
	hasnt "$T/out" rank_kernel_delta
}
check "no matched collective: clocks not aligned, no rows" t_nothing_aligned

t_names_differ() {
	late_ranks | sed "/\"t\":1,\"name\":\"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)\",\"pid\":\"0\",\"tid\":\"7\",\"ts\":1265/s/bf16/f32/" |
	    "$RS" --no-pass >"$T/out" 2>"$T/err"
	eq '{"type":"rank_gap","stage":"decode","reason":"names","kind":"all-reduce","ordinal":2,"ranks":[{"rank":0,"count":2,"name":"'"$AR"'"},{"rank":1,"count":2,"name":"'"$AR32"'"},{"rank":2,"count":2,"name":"'"$AR"'"}]}' \
	    "$(grep rank_gap "$T/out")"
	has "$T/err" "all-reduce number 2 is not the same kernel on every rank"
	hasnt "$T/out" collective_row
}
check "same counts, different kernels: reported, not paired" t_names_differ

t_stages() {
	# extend: ranks 0 and 1 only (rank 2 expected, since it has decode kernels):
	# align, gap, two rows, one collective; decode: align, three rows, one collective
	{
		trc 0 0; k 0 "$AR" 10 20 extend; k 0 "$AR" 160 40; st 0
		trc 1 1; k 1 "$AR" 1015 15 extend; k 1 "$AR" 1170 30; st 1
		trc 2 2; k 2 "$AR" 190 10; st 2
	} | "$RS" --no-pass >"$T/out" 2>"$T/err"
	eq "extend extend extend extend extend decode decode decode decode decode" \
	    "$(jq -r .stage "$T/out" | tr '\n' ' ' | sed 's/ $//')"
	eq '[{"rank":2,"count":0}]' "$(jq -c 'select(.type == "rank_gap" and .stage == "extend") | .ranks' "$T/out")"
	# extend: ends 30 and 1030: rank 1 offset -1000; starts 10, 15: skew 5, wait 5
	eq "5 5 1" "$(jq -r 'select(.type == "collective_row" and .stage == "extend") |
	    "\(.skew_us) \(.wait_us) \(.last_rank)"' "$T/out")"
	eq "0 -1000" "$(jq -r 'select(.type == "rank_row" and .stage == "extend") | .offset_us' "$T/out" |
	    tr '\n' ' ' | sed 's/ $//')"
}
check "stages are matched apart, extend first" t_stages

t_one_rank() {
	{ trc 0 0; k 0 "$AR" 160 40; k 0 gemm_a 100 50; st 0; } | "$RS" --no-pass >"$T/out" 2>"$T/err"
	has "$T/err" "stage 'decode': only rank 0: nothing to compare"
	eq "rank_align rank_row" "$(jq -r .type "$T/out" | tr '\n' ' ' | sed 's/ $//')"
	eq "90 40 0" "$(jq -r 'select(.type == "rank_row") | "\(.kernel_us) \(.comm_us) \(.wait_us)"' "$T/out")"
}
check "a single rank: its row and a warning" t_one_rank

done_testing
