#!/bin/sh
# fuse-detect's corrected matching (issue 26, docs/deviations.md C16):
# keywords match whole words of the kernel's identity, its Python sites and
# CPU ops; a split group's evidence is a kernel of a category the group
# stands for; a fusion in use is its fused kernels and ranks first;
# dtype- and model-specific patterns need the trace's data type and model;
# the evidence cell lists what the related time adds up; the rationale and
# --explain say what matched.  Each case also runs under --compat
# reference, which keeps the reference's answer.
. "$(dirname "$0")/lib.sh"
. "$FIX/fuse-detect/rows.sh"

SG='{"model_path":"m","tp_size":1}'

# crow KERNEL CATEGORY TOTAL_US [LOCATION [CPU_OP]]: a row of a 1000 us decode stage.
crow() {
	printf '{"type":"kernel_row","t":0,"stage":"decode","kernel":%s,"category":"%s","total_us":%s,"launches":1,"share_pct":%s,"stage_total_us":1000,"location":%s,"cpu_op":%s,"shown":true,"entry":null}\n' \
	    "$(jstr "$1")" "$2" "$3" "$(awk -v u="$3" 'BEGIN { print u / 10 }')" \
	    "$(jstr "${4:-a.py:1 f}")" "$(jstr "${5:--}")"
}

# both [-p CATALOG] STREAM [JQ]: fuse rows "corrected | reference", default pattern:status:share.
both() {
	_p=
	if [ "$1" = -p ]; then _p="-p $2"; shift 2; fi
	_q=${2:-'"\(.pattern):\(.status):\(.share_pct)"'}
	# shellcheck disable=SC2086
	fd $_p <"$1" >"$T/c.out"
	# shellcheck disable=SC2086
	fd $_p --compat reference <"$1" >"$T/r.out"
	printf '%s | %s\n' "$(fuse_rows "$T/c.out" "$_q" | paste -sd, -)" \
	    "$(fuse_rows "$T/r.out" "$_q" | paste -sd, -)"
}

# verdict PATTERN FILE: the --explain verdict of a pattern.
verdict() {
	jq -r --arg p "$1" 'select(.type=="fuse_explain" and .pattern==$p) | .verdict' "$2"
}

t_whole_words() {
	# "rope" is no word of ck::tensor_operation; "cat" none of scatter
	pat '"pattern":"R","split_groups":[["rope"],["cat"]],"min_share":0.1,"likely_share":1' >"$T/cat"
	{ inp sglang "$SG"
	  crow 'void ck::kernel_moe_gemm<ck::tensor_operation::device::GridwiseMoeGemm<int> >' moe 500
	  crow 'void at::native::_scatter_gather_elementwise_kernel<128, 4>' indexing 100; } >"$T/in"
	eq ' | R:missing:60' "$(both -p "$T/cat" "$T/in")"
	# words join across case and underscores, within one field
	pat '"pattern":"W","active_keywords":["fused_add_rmsnorm"]' >"$T/cat"
	{ inp sglang "$SG"; crow 'void flashinfer::norm::FusedAddRMSNormKernel<8u, __nv_bfloat16>' norm 50; } >"$T/in"
	eq 'W:in use:5 | W:in use:5' "$(both -p "$T/cat" "$T/in")"
	pat '"pattern":"K","active_keywords":["kv_cache"]' >"$T/cat"
	{ inp sglang "$SG"; crow 'void (anonymous namespace)::store_kvcache<2048l, 4, false, long>' kv_cache 40; } >"$T/in"
	eq 'K:in use:4 | K:in use:4' "$(both -p "$T/cat" "$T/in")"
	# a keyword never straddles the name and the location ("kernel a")
	pat '"pattern":"S","active_keywords":["kernel a"]' >"$T/cat"
	{ inp sglang "$SG"; crow my_kernel other 40 'a.py:1 f'; } >"$T/in"
	eq ' | S:in use:4' "$(both -p "$T/cat" "$T/in")"
	# the site share suffix and <br> are no words of a location
	pat '"pattern":"L","active_keywords":["siteshare"]' >"$T/cat"
	{ inp sglang "$SG"; crow k other 40 'a.py:1 f (site share 60%)<br>b.py:2 g (site share 40%)'; } >"$T/in"
	eq ' | L:in use:4' "$(both -p "$T/cat" "$T/in")"
}
check "keywords match whole words of one field (reference: substrings of all three joined)" t_whole_words

t_template_args() {
	# a data type in a template argument is not what the kernel does
	pat '"pattern":"Q","split_groups":[["quant","fp8"]],"min_share":0.1,"likely_share":1' >"$T/cat"
	{ inp vllm "$SG"
	  crow 'void vllm::reshape_and_cache_flash_kernel<__hip_bfloat16, __hip_bfloat16, (vllm::Fp8KVCacheDataType)0>' kv_cache 497; } >"$T/in"
	eq ' | Q:missing:49.7' "$(both -p "$T/cat" "$T/in")"
}
check "a template argument's data type is no keyword hit (reference: Fp8KVCacheDataType is fp8)" t_template_args

t_attention_not_kv_write() {
	# the built-in "Fused QK RoPE reshape + KV cache write": the paged
	# attention kernel reads the cache its fused path writes; it is no
	# separate kernel of that fusion
	{ inp sglang "$SG"
	  crow 'void rotary_embedding_kernel<c10::BFloat16, true>' rope 36
	  crow 'void paged_attention_ll4mi_QKV_mfma16_kernel<0, __hip_bfloat16, __hip_bfloat16, (vllm::Fp8KVCacheDataType)0, 256, 128>' attention 88
	  crow 'void (anonymous namespace)::store_kvcache<2048l, 4, false, long>' kv_cache 49
	  crow 'fmhaSm100fKernel_QkvBfloat16OBfloat16H128PagedKvCausalP64VarSeqQ8Kv128PersistentSwapsAbForGen' attention 72; } >"$T/in"
	eq 'Fused QK RoPE reshape + KV cache write:missing:8.5|void rotary_embedding_kernel<c10::BFloat16, true> (3.6%)<br>void (anonymous namespace)::store_kvcache<2048l, 4, false, long> (4.9%) | Fused QK RoPE reshape + KV cache write:missing:24.5|void rotary_embedding_kernel<c10::BFloat16, true> (3.6%)<br>void paged_attention_ll4mi_QKV_mfma16_kernel<0, __hip_bfloat16, __hip_bfloat16, (vllm::Fp8KVCacheDataType)0, 256, 128> (8.8%)<br>void (anonymous namespace)::store_kvcache<2048l, 4, false, long> (4.9%)' \
	    "$(both "$T/in" '"\(.pattern):\(.status):\(.share_pct)|\(.evidence)"')"
}
check "an attention kernel is no evidence of the KV-cache write before it (reference: it is)" t_attention_not_kv_write

t_in_use_time() {
	# a fusion in use is its fused kernels' time, not the partial groups' (62.1 % before)
	{ inp sglang "$SG"
	  crow _fused_qk_rope_reshape_and_cache_kernel kv_cache 20
	  crow 'void ck::kernel_moe_gemm<ck::tensor_operation::device::GridwiseMoeGemm<int>, 1>' moe 350
	  crow 'void rotary_embedding_kernel<c10::BFloat16, true>' rope 30; } >"$T/in"
	eq 'Fused QK RoPE reshape + KV cache write:in use:2|_fused_qk_rope_reshape_and_cache_kernel (2.0%) | Fused QK RoPE reshape + KV cache write:in use:40|_fused_qk_rope_reshape_and_cache_kernel (2.0%)<br>void ck::kernel_moe_gemm<ck::tensor_operation::device::GridwiseMoeGemm<int>, 1> (35.0%)<br>void rotary_embedding_kernel<c10::BFloat16, true> (3.0%)' \
	    "$(both "$T/in" '"\(.pattern):\(.status):\(.share_pct)|\(.evidence)"')"
}
check "a fusion in use counts its fused kernels only (reference: with partial groups)" t_in_use_time

t_evidence_sum() {
	# the evidence lists every related row: three, then the rest summed
	pat '"pattern":"E","split_groups":[["e_"]],"min_share":0.1,"likely_share":1' >"$T/cat"
	{ inp sglang "$SG"; crow e_a other 41; crow e_b other 12; crow e_c other 5; crow e_d other 2
	  crow e_e other 1; } >"$T/in"
	fd -p "$T/cat" <"$T/in" >"$T/out"
	eq '6.1|e_a (4.1%)<br>e_b (1.2%)<br>e_c (0.5%)<br>and 2 more (0.3%)' \
	    "$(fuse_rows "$T/out" '"\(.share_pct)|\(.evidence)"')"
	fd -p "$T/cat" --compat reference <"$T/in" >"$T/out"
	eq 'e_a (4.1%)<br>e_b (1.2%)' "$(fuse_rows "$T/out" .evidence)"
}
check "the evidence adds up to the related time: three rows, then 'and N more' (reference: 1 % rows only)" \
    t_evidence_sum

t_dtype() {
	# the FP8 scaled-MM pattern on a BF16 model's nvjet GEMMs: no FP8 in the stage
	{ inp sglang "$SG"
	  crow nvjet_sm103_tst_32x64_64x16_4x1_v_bz_splitK_TNN gemm 83
	  crow 'Memset (Device)' memset 5; } >"$T/in"
	eq ' | PR #22392 CUTLASS FP8 scaled MM replacing nvjet:missing:8.8' "$(both "$T/in")"
	fd --explain=records <"$T/in" >"$T/x"
	eq gated_dtype "$(verdict 'PR #22392 CUTLASS FP8 scaled MM replacing nvjet' "$T/x")"
	# an FP8 quantization kernel in the stage, or fp8 in the server args, shows FP8
	{ cat "$T/in"; crow 'void vllm::scaled_fp8_quant_kernel_strided<c10::BFloat16, c10::Float8_e4m3fn>' quantize 1; } >"$T/in2"
	eq 'PR #22392 CUTLASS FP8 scaled MM replacing nvjet:missing:8.8' \
	    "$(fuse_rows "$(fd <"$T/in2" >"$T/o2"; echo "$T/o2")" '"\(.pattern):\(.status):\(.share_pct)"')"
	{ inp sglang '{"model_path":"m","tp_size":1,"quantization":"fp8"}'; sed 1d "$T/in"; } >"$T/in3"
	eq 'PR #22392 CUTLASS FP8 scaled MM replacing nvjet:missing:8.8' \
	    "$(fuse_rows "$(fd <"$T/in3" >"$T/o3"; echo "$T/o3")" '"\(.pattern):\(.status):\(.share_pct)"')"
}
check "dtype-specific patterns need the stage's data type (reference: any nvjet GEMM)" t_dtype

t_model() {
	# a DeepSeek router-GEMM pattern on a gpt-oss trace
	pat '"pattern":"DS","candidate_path":["vllm/x.py"],"split_groups":[["router"],["gemm"]],"model_family":["deepseek"],"min_share":0.1,"likely_share":1' >"$T/cat"
	mkin() {	# MODEL_FAMILY
		printf '{"type":"input","v":1,"role":"single","path":"/p","framework":"vllm","server_args":null,"model_family":%s,"traces":[]}\n' "$(jstr "$1")"
		crow router_logits_kernel other 20 'vllm/model_executor/layers/router.py:1 f'
		crow sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64 gemm 25
	}
	mkin gpt_oss >"$T/in"
	eq ' | DS:missing:4.5' "$(both -p "$T/cat" "$T/in")"
	fd -p "$T/cat" --explain=records <"$T/in" >"$T/x"
	eq gated_model_family "$(verdict DS "$T/x")"
	mkin deepseek_v3 >"$T/in2"
	eq 'DS:missing:4.5 | DS:missing:4.5' "$(both -p "$T/cat" "$T/in2")"
	# model_include reads the family when server args name no model
	pat '"pattern":"Inc","candidate_path":["vllm/x.py"],"active_keywords":["router_logits"],"model_include":["deepseek"]' >"$T/cat"
	eq 'Inc:in use:2 | ' "$(both -p "$T/cat" "$T/in2")"
}
check "model-specific patterns read the model family (reference: server args only)" t_model

t_model_name_keyword() {
	# "gpt_oss" in a split group names the model, not an operation: every
	# kernel of models/gpt_oss.py has it (the GPT-OSS router-GEMM pattern
	# took all of the model's GEMMs)
	pat '"pattern":"RG","candidate_path":["vllm/x.py"],"split_groups":[["router","gpt_oss"],["gemm"]],"model_include":["gpt_oss"],"min_share":0.1,"likely_share":1' >"$T/cat"
	{ inp vllm '{"model_path":"openai/gpt_oss-20b","tp_size":1}'
	  crow sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64 gemm 59 \
	    'vllm/model_executor/models/gpt_oss.py:293 forward'; } >"$T/in"
	eq ' | RG:missing:5.9' "$(both -p "$T/cat" "$T/in")"
}
check "a split keyword that names the pattern's model is no operation's keyword" t_model_name_keyword

t_also_active() {
	# aiter's fused add + RMSNorm (+quant) is the fusion SGLang's catalog names
	{ inp sglang "$SG"
	  crow _ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi256ELi16ELb1ELb0ELb1ELi1EEEvPT0_PT_PfS4_S4_S4_diiiiiiib norm 109; } >"$T/in"
	eq 'Fused residual add + RMSNorm:in use:10.9 | ' "$(both "$T/in")"
}
check "AMD equivalents count as the fusion in use (aiter add_rmsnorm_quant_kernel)" t_also_active

t_in_use_first() {
	# the in-place QK RMSNorm kernel runs: it is not the QK norm evidence
	# of "Fused QK RMSNorm + RoPE" (priority 30 beats it in the reference)
	{ inp sglang "$SG"
	  crow 'void (anonymous namespace)::fused_qknorm_warp<128l, true, __nv_bfloat16>' norm 23
	  crow 'void (anonymous namespace)::fused_rope_store_kernel<true, 128l, true, __nv_bfloat16, long, 16u>' rope 18; } >"$T/in"
	eq 'Fused RoPE + KV cache store:in use:1.8,In-place QK RMSNorm:in use:2.3 | Fused QK RMSNorm + RoPE:missing:4.1' \
	    "$(both "$T/in")"
}
check "fusions in use rank first: their kernels are no other fusion's evidence" t_in_use_first

t_rationale_explain() {
	{ inp sglang "$SG"
	  crow 'void rotary_embedding_kernel<c10::BFloat16, true>' rope 36
	  crow 'void (anonymous namespace)::store_kvcache<2048l, 4, false, long>' kv_cache 49; } >"$T/in"
	fd --explain=records <"$T/in" >"$T/x"
	eq "Split kernels of this fusion take 8.5% of GPU time: 'rotary' in rotary_embedding_kernel<…> (name), 'kv_cache' in store_kvcache<…> (name). SGLang has the fused path: python/sglang/srt/layers/attention/utils.py. A single fused path already handles RoPE, layout reshaping, and the KV-cache write during attention preparation." \
	    "$(fuse_rows "$T/x" .rationale)"
	eq "split match, 2 rows, 8.500%, Confirmed; matched 'rotary' in rotary_embedding_kernel<…> (name), 'kv_cache' in store_kvcache<…> (name)" \
	    "$(jq -r 'select(.type=="fuse_explain" and .verdict=="accepted") | .detail' "$T/x")"
	fd --compat reference <"$T/in" >"$T/r"
	has "$T/r" 'This tree already has a matching path'
}
check "the rationale and --explain name the keyword, the kernel and where it matched" t_rationale_explain

done_testing
