#!/bin/sh
# fuse-detect's corrections (issue 14, docs/deviations.md "Corrections"):
# what counts as the evidence of a missing fusion and what says a fusion is
# already in use.  Each case runs in both modes: corrected by default, the
# reference's answer under --compat reference.
. "$(dirname "$0")/lib.sh"
. "$FIX/fuse-detect/rows.sh"

SG='{"model_path":"m","tp_size":1}'

# crow STAGE KERNEL CATEGORY TOTAL_US: a row of a 1000 us decode stage.
crow() {
	printf '{"type":"kernel_row","t":0,"stage":"%s","kernel":%s,"category":"%s","total_us":%s,"launches":1,"share_pct":%s,"stage_total_us":1000,"location":"a.py:1 f","cpu_op":"-","shown":true,"entry":null}\n' \
	    "$1" "$(jstr "$2")" "$3" "$4" "$(awk -v u="$4" 'BEGIN { print u / 10 }')"
}

# both CATALOG_LINE STREAM: "corrected | reference" fuse rows as pattern:status:share.
both() {
	printf '%s\n' "$1" >"$T/cat"
	fd -p "$T/cat" <"$2" >"$T/c.out"
	fd -p "$T/cat" --compat reference <"$2" >"$T/r.out"
	printf '%s | %s\n' \
	    "$(fuse_rows "$T/c.out" '"\(.pattern):\(.status):\(.share_pct)"' | paste -sd, -)" \
	    "$(fuse_rows "$T/r.out" '"\(.pattern):\(.share_pct)"' | paste -sd, -)"
}

NQ='"pattern":"NQ","active_keywords":["norm_quant"],"split_groups":[["rmsnorm"],["quant","fp4"]],"min_share":0.3,"likely_share":1.5'

t_gemm_not_quant_evidence() {
	# a norm kernel and an MXFP4 GEMM: the GEMM's data type is no
	# separate quantization kernel, so the split match is incomplete
	{ inp vllm "$SG"; crow decode rmsnorm_kernel norm 100; crow decode _matmul_ogs_bf16xmxfp4_swiglu gemm 700; } >"$T/in"
	eq ' | NQ:80' "$(both "$(pat "$NQ")" "$T/in")"
	# a real quantization kernel still makes it a missing fusion
	{ inp vllm "$SG"; crow decode rmsnorm_kernel norm 100; crow decode _matmul_ogs_bf16xmxfp4 gemm 700
	  crow decode per_token_quant_fp8 quantize 50; } >"$T/in2"
	eq 'NQ:missing:15 | NQ:85' "$(both "$(pat "$NQ")" "$T/in2")"
}
check "a GEMM is not evidence for a norm/quantization fusion (reference: it is)" t_gemm_not_quant_evidence

t_gemm_group_keeps_gemms() {
	# a pattern whose group names GEMMs still takes GEMM rows
	G='"pattern":"RG","active_keywords":["router_gemm"],"split_groups":[["router"],["gemm","matmul"]],"min_share":0.3,"likely_share":1.5'
	{ inp vllm "$SG"; crow decode router_logits_kernel other 20; crow decode sm90_gemm_bf16 gemm 300; } >"$T/in"
	eq 'RG:missing:32 | RG:32' "$(both "$(pat "$G")" "$T/in")"
}
check "a GEMM group still matches GEMM kernels" t_gemm_group_keeps_gemms

t_fused_kernel_in_use() {
	# one "fused" kernel covering every split group is the fusion running
	Q='"pattern":"QK","active_keywords":["fused_inplace_qknorm"],"split_groups":[["qknorm","q_norm"]],"min_share":0.3,"likely_share":2.0'
	{ inp sglang "$SG"; crow decode 'void (anonymous namespace)::fused_qknorm_warp<128l, true, __nv_bfloat16>' norm 23; } >"$T/in"
	eq 'QK:in use:2.3 | QK:2.3' "$(both "$(pat "$Q")" "$T/in")"
	# an unfused kernel of the same group stays a missing fusion
	{ inp sglang "$SG"; crow decode qknorm_kernel norm 23; } >"$T/in2"
	eq 'QK:missing:2.3 | QK:2.3' "$(both "$(pat "$Q")" "$T/in2")"
	# "fused" covering only one of two groups is not the fusion
	R='"pattern":"RK","active_keywords":["fused_qk_rope_reshape_and_cache"],"split_groups":[["rope"],["kv_cache"]],"min_share":0.4,"likely_share":2.0'
	{ inp sglang "$SG"; crow decode fused_rope_kernel rope 30; crow decode store_kv_cache kv_cache 30; } >"$T/in3"
	eq 'RK:missing:6 | RK:6' "$(both "$(pat "$R")" "$T/in3")"
}
check "a fused kernel that covers every split group is in use (reference: missing)" t_fused_kernel_in_use

t_moe_gate() {
	M='"pattern":"Fused MoE router / top-k","active_keywords":["moe_fused_gate"],"split_groups":[["softmax"],["topk"]],"min_share":0.3,"likely_share":1.5'
	# a dense model's softmax and top-k are no MoE routing
	{ inp sglang "$SG"; crow decode softmax_kernel softmax 300; crow decode topk_kernel reduce_topk 160; } >"$T/in"
	eq ' | Fused MoE router / top-k:46' "$(both "$(pat "$M")" "$T/in")"
	fd -p "$T/cat" --explain=records <"$T/in" >"$T/x"
	eq 'gated_no_moe_kernels' "$(jq -r 'select(.type=="fuse_explain") | .verdict' "$T/x")"
	# with an MoE kernel in the stage the pattern applies
	{ cat "$T/in"; crow decode fused_moe_kernel moe 100; } >"$T/in2"
	eq 'Fused MoE router / top-k:missing:46 | Fused MoE router / top-k:46' "$(both "$(pat "$M")" "$T/in2")"
}
check "MoE routing patterns need an MoE kernel in the stage (reference: any softmax)" t_moe_gate

done_testing
