#!/bin/sh
# rank-skew: where the straggler's lateness is (issue 31) -- on its host
# (its collectives' launch calls came late), in its GPU idle gaps
# (launched in time, the GPU idle before them) -- on hand-made records
# with launch calls.  Every figure is worked out by hand in the comments;
# the kernels case is t2200's late rank.
. "$(dirname "$0")/lib.sh"

RS=$BIN/rank-skew
AR='ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)'

trc() {	# trc T RANK
	printf '{"type":"trace","v":1,"t":%s,"role":"single","path":"/p/x-TP-%s.trace.json","stage":"all","rank":%s}\n' \
	    "$1" "$2" "$2"
}
kl() {	# kl T NAME TS DUR CORR LAUNCH_TS: a selected kernel and its launch call
	printf '{"type":"launch","t":%s,"name":"cudaLaunchKernel","pid":"9","tid":"9","ts":%s,"dur":4,"correlation":%s}\n' \
	    "$1" "$6" "$5"
	printf '{"type":"kernel","t":%s,"name":"%s","pid":"0","tid":"7","ts":%s,"dur":%s,"stream":"7","stage":"decode","correlation":%s,"sel":true}\n' \
	    "$1" "$2" "$3" "$4" "$5"
}
st() { printf '{"type":"stats","t":%s}\n' "$1"; }

# Three ranks on one clock, each: gemm 100+50, AR 1, gemm2 210+20, AR 2.
#   rank 0: AR 1 launched 150, 160+40 (ends 200); AR 2 launched 240, 250+50
#   rank 1: AR 1 launched 150, 160+40;            AR 2 launched 245, 255+45
#   rank 2: AR 1 launched $1, 190+10;              AR 2 launched $2, 290+10
ranks() {	# ranks AR1_LAUNCH AR2_LAUNCH: rank 2's launch calls
	trc 0 0; kl 0 gemm 100 50 1 95; kl 0 "$AR" 160 40 2 150; kl 0 gemm2 210 20 3 205
	kl 0 "$AR" 250 50 4 240; st 0
	trc 1 1; kl 1 gemm 100 50 1 95; kl 1 "$AR" 160 40 2 150; kl 1 gemm2 210 20 3 205
	kl 1 "$AR" 255 45 4 245; st 1
	trc 2 2; kl 2 gemm 100 50 1 95; kl 2 "$AR" 190 10 2 "$1"; kl 2 gemm2 210 20 3 205
	kl 2 "$AR" 290 10 4 "$2"; st 2
}

# The AR 1 ends at 200 everywhere: no offsets.  Rank 2 starts last at both.
#   AR 1: start 190 vs 160, 160: +30; windows [100,160] busy 50 idle 10 (ranks 0, 1),
#         [100,190] busy 50 idle 40 (rank 2): idle +30, busy 0
#   AR 2: start 290 vs 250, 255 (252.5): +37.5; windows [200,250] busy 20 idle 30,
#         [200,255] busy 20 idle 35, [200,290] busy 20 idle 70: idle +37.5, busy 0
#   late 67.5, idle 67.5, busy 0; other kernels 70 on every rank: excess 0
t_host() {
	# launched late: 180 vs 150 (+30), 280 vs 240, 245 (242.5; +37.5): 67.5, all of it
	ranks 180 280 | "$RS" --no-pass >"$T/out" 2>"$T/err"
	[ ! -s "$T/err" ]
	eq '{"rank":2,"late_collectives":2,"late_us":67.5,"late_launch_us":67.5,"late_idle_us":67.5,"late_busy_us":0,"kernel_excess_us":0,"late_in":"host"}' \
	    "$(jq -c 'select(.type == "rank_row" and .straggler) | {rank, late_collectives, late_us,
	        late_launch_us, late_idle_us, late_busy_us, kernel_excess_us, late_in}' "$T/out")"
	# only the straggler's row carries them
	eq 0 "$(jq -c 'select(.type == "rank_row" and (.straggler | not) and has("late_us"))' "$T/out" | wc -l | tr -d ' ')"
}
check "late launch calls: the lateness is on the host" t_host

t_idle() {
	# launched in time: 150 vs 150 (0), 240 vs 242.5 (-2.5): the GPU sat idle instead
	ranks 150 240 | "$RS" --no-pass >"$T/out"
	eq '{"late_us":67.5,"late_launch_us":-2.5,"late_idle_us":67.5,"late_busy_us":0,"late_in":"idle"}' \
	    "$(jq -c 'select(.type == "rank_row" and .straggler) | {late_us, late_launch_us,
	        late_idle_us, late_busy_us, late_in}' "$T/out")"
}
check "launched in time, the GPU idle before the collectives: idle gaps" t_idle

t_no_launch() {
	# a rank without the launch of a late collective: no host figure, and
	# the idle gaps still place the lateness
	ranks 180 280 | grep -v '"correlation":4}$' | "$RS" --no-pass >"$T/out"
	# AR 2's launch is gone on every rank: the host figure is AR 1's alone
	eq '30 idle' "$(jq -r 'select(.type == "rank_row" and .straggler) | "\(.late_launch_us) \(.late_in)"' "$T/out")"
	ranks 180 280 | grep -v '"correlation":[24]}$' | "$RS" --no-pass >"$T/out"
	eq 'false idle' "$(jq -r 'select(.type == "rank_row" and .straggler) | "\(has("late_launch_us")) \(.late_in)"' "$T/out")"
}
check "collectives without launch calls: no host figure for them" t_no_launch

done_testing
