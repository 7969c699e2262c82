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
	{ inp sglang; kr extend 'void d' 100; } >"$T/c"
	"$TD" --no-pass --force --baseline "$T/c" "$T/b" >"$T/out"
	eq "incomparable" "$(jq -r 'select(.scope == "overall") | .verdict' "$T/out")"
	# --whole-run: every stage is "all", so they compare
	"$TD" --no-pass --whole-run --baseline "$T/c" "$T/b" >"$T/out"
	eq "all=neutral overall=neutral" "$(verdicts "$T/out")"
	eq '["all"]' "$(jq -c 'select(.type == "diff_input" and .side == "base") | .stages' "$T/out")"
}
check "other stages: incomparable stages, exit 6 unless --force; --whole-run" t_stages_differ

# What the runs carry of themselves (issue 25): a trace record's world
# size, the analyzed GPU's device record, the input's model family.
tr() {	# tr WORLD: a trace record of rank 0 and world size WORLD
	printf '{"type":"trace","v":1,"t":0,"path":"/r/x.json","rank":0,"world_size":%s}\n' "$1"
}
dev() {	# dev NAME: the analyzed GPU (pid 0)
	printf '{"type":"device","t":0,"id":0,"name":"%s","compute_major":9,"compute_minor":0}\n' "$1"
	printf '{"type":"gpu_pids","t":0,"selected":"0","time_us":{}}\n'
}

t_workloads() {
	# a dense model's GEMMs on MI300X against a MoE's on B300: no kernel
	# family in common and no model named: not the same workload
	{ inp sglang; tr 1; dev 'AMD Instinct MI300X'
	  kr decode 'Cijk_Alik_Bljk_BBS_BH_MT256x256x64_MI32x32x8' 700; kr decode 'void rmsnorm_kernel<float>' 50; } >"$T/dense"
	{ inp sglang; tr 1; dev 'NVIDIA B300 SXM6 AC'
	  kr decode 'nvjet_sm103_tst_64x16_64x16_4x1_v_bz_TNT' 300; kr decode 'void moe_align_block_size_kernel<int>' 150
	  kr decode 'void rmsnorm_kernel<float>' 30; } >"$T/moe"
	status 6 "$TD" --no-pass --baseline "$T/dense" "$T/moe" >"$T/out" 2>"$T/err"
	has "$T/err" "only 6% of the GPU time is in kernel families both runs have (under a third), and they do not name one model"
	eq 6.25 "$(jq -r 'select(.type == "verdict" and .scope == "overall") | .shared_pct' "$T/out")"
	# --force compares them; the hardware difference is said, never refused
	status 0 "$TD" --no-pass --force --baseline "$T/dense" "$T/moe" >"$T/out" 2>"$T/err"
	has "$T/err" "^trace-diff: hardware differs: AMD Instinct MI300X vs NVIDIA B300 SXM6 AC$"
	eq 'AMD Instinct MI300X|NVIDIA B300 SXM6 AC' "$(jq -r 'select(.type == "diff_input") | .gpu' "$T/out" | paste -sd '|')"
	# the same model named on both: one workload on two GPUs, comparable
	{ inp sglang Qwen/Qwen3-8B; tail -n +2 "$T/dense"; } >"$T/dense8"
	{ inp sglang Qwen/Qwen3-8B; tail -n +2 "$T/moe"; } >"$T/moe8"
	status 0 "$TD" --no-pass --baseline "$T/dense8" "$T/moe8" >"$T/out" 2>"$T/err"
	has "$T/err" "hardware differs"
	# a device the trace leaves unnamed (ROCm 6.2 and 7) is named by its
	# figures, not taken for the other run's GPU
	{ inp sglang Qwen/Qwen3-8B; tr 1
	  printf '{"type":"device","t":0,"id":0,"name":"","total_global_mem":206141652992,"compute_major":9,"compute_minor":4,"num_sms":304,"warp_size":64}\n'
	  printf '{"type":"gpu_pids","t":0,"selected":"0","time_us":{}}\n'
	  kr decode 'Cijk_Alik_Bljk_BBS_BH_MT256x256x64_MI32x32x8' 700; kr decode 'void rmsnorm_kernel<float>' 50; } >"$T/anon"
	status 0 "$TD" --no-pass --baseline "$T/anon" "$T/moe8" >"$T/out" 2>"$T/err"
	has "$T/err" "^trace-diff: hardware differs: AMD Instinct MI300X (matched by its figures) vs NVIDIA B300 SXM6 AC$"
	sed 's/"num_sms":304/"num_sms":7/' "$T/anon" >"$T/anon2"
	status 0 "$TD" --no-pass --baseline "$T/anon2" "$T/moe8" >"$T/out" 2>"$T/err"
	has "$T/err" "^trace-diff: hardware differs: unnamed GPU (7 CUs, 192 GiB) vs NVIDIA B300 SXM6 AC$"
	# model families (issue 26's model_family) that differ, and world sizes
	{ printf '{"type":"input","role":"single","path":"/r/x.json","framework":"sglang","model_family":"llama"}\n'; tail -n +2 "$T/dense"; } >"$T/fa"
	{ printf '{"type":"input","role":"single","path":"/r/x.json","framework":"sglang","model_family":"qwen3_moe"}\n'; tail -n +2 "$T/dense"; } >"$T/fb"
	status 6 "$TD" --no-pass --baseline "$T/fa" "$T/fb" >/dev/null 2>"$T/err"
	has "$T/err" "model family llama vs qwen3_moe"
	{ inp sglang; tr 4; tail -n +3 "$T/dense"; } >"$T/w4"
	{ inp sglang; tr 8; tail -n +3 "$T/dense"; } >"$T/w8"
	status 6 "$TD" --no-pass --baseline "$T/w4" "$T/w8" >/dev/null 2>"$T/err"
	has "$T/err" "world size 4 vs 8"
}
check "comparability from what the runs carry: kernel families, model family, world size, GPU" t_workloads

t_collectives() {
	# decode +300 us, 250 of it in the all-reduce: the verdict says a
	# collective's time includes waiting for the other ranks
	ck() {	# ck KERNEL US
		printf '{"type":"kernel_row","t":0,"stage":"decode","kernel":"%s","category":"communication","total_us":%s,"launches":1,"stage_total_us":0}\n' "$1" "$2"
	}
	{ inp sglang; kr decode 'void gemm' 800; ck 'ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*)' 200; } >"$T/ca"
	{ inp sglang; kr decode 'void gemm' 850; ck 'ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*)' 450; } >"$T/cb"
	status 5 "$TD" --no-pass --gate 10 --baseline "$T/ca" "$T/cb" >"$T/out" 2>"$T/err"
	eq "collective kernels account for +0.250 ms of it, and a collective's time includes waiting for the other ranks (triage --all-ranks on both runs splits the wait from the transfer)" \
	    "$(jq -r 'select(.type == "verdict" and .scope == "decode") | .reason' "$T/out")"
	has "$T/err" "; collective kernels account for +0.250 ms of it"
	# both runs with --all-ranks: rank-skew's wait of the lowest rank splits it
	rr() {	# rr RANK COMM WAIT
		printf '{"type":"rank_row","stage":"decode","rank":%s,"busy_us":1,"kernel_us":1,"comm_us":%s,"wait_us":%s,"last_arrivals":0}\n' "$1" "$2" "$3"
	}
	{ cat "$T/ca"; rr 1 190 5; rr 0 200 20; } >"$T/ra"
	{ cat "$T/cb"; rr 0 450 220; rr 1 430 40; } >"$T/rb"
	status 5 "$TD" --no-pass --gate 10 --baseline "$T/ra" "$T/rb" >"$T/out" 2>/dev/null
	eq "collective kernels account for +0.250 ms of it, and a collective's time includes waiting for the other ranks: rank 0's wait went 0.020 -> 0.220 ms (+0.200 ms), its transfers +0.050 ms" \
	    "$(jq -r 'select(.type == "verdict" and .scope == "decode") | .reason' "$T/out")"
	eq '250 20 220' "$(jq -r 'select(.type == "verdict" and .scope == "decode") | "\(.comm_delta_us) \(.base_wait_us) \(.cand_wait_us)"' "$T/out")"
}
check "a regression in collectives says their time includes waiting for other ranks" t_collectives

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
