#!/bin/sh
# kernel-map: the corrected kernel categories (data/kernel-categories.jsonl)
# on names of the kernel families real traces carry, against the
# reference's answer for the same names (--compat reference).
. "$(dirname "$0")/lib.sh"

# name	corrected	reference
cat >"$T/names.tsv" <<'X'
Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT128x256x32_MI16x16x1_SN_LDSB1_AFC1	gemm	other
attn_fwd	attention	other
void (anonymous namespace)::fused_qknorm_warp<128l, true, __nv_bfloat16>	norm	other
void (anonymous namespace)::store_kvcache<2048l, 4, false, long>	kv_cache	other
cutlass_dsl::kernel_cutlass_FusedAddRMSNormKernel_1	norm	gemm
void flashinfer::BatchPrefillWithPagedKVCacheKernel<128u>	attention	memory
void flashinfer::BatchDecodeWithPagedKVCacheKernel<8u>	attention	other
void cutlass::device_kernel<flash::FlashAttnFwdSm90<x>>	attention	gemm
volta_scudnn_128x64_stridedB_splitK_xregs_large_nn_v1	convolution	other
void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 512, true, 1>	norm	other
void at::native::(anonymous namespace)::max_pool_backward_nchw<float, float>	pooling	other
triton_poi_fused_add_cos_sin_0	elementwise	other
batched_transpose_32x32_half	layout	other
void split_embedding_codegen_forward_unweighted_kernel<float, float, float, long, 2ul>	embedding	other
Memcpy DtoH (Device -> Pinned)	memcpy	memory
Memset (Device)	memset	memory
ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)	communication	communication
sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas	gemm	gemm
void vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>	norm	norm
void vllm::act_and_mul_kernel<c10::BFloat16, &vllm::silu_kernel<c10::BFloat16>, true>	activation	activation
X

t_categories() {
	{
		echo '{"type":"trace","t":0,"path":"/x/decode/t.json"}'
		i=0
		while IFS='	' read -r name _; do
			i=$((i + 1))
			printf '{"type":"kernel","t":0,"name":%s,"ts":%d,"dur":1,"sel":true}\n' \
			    "$(printf '%s' "$name" | jq -Rs .)" "$i"
		done <"$T/names.tsv"
		echo '{"type":"stats","t":0}'
	} >"$T/in"
	"$BIN/kernel-map" <"$T/in" >"$T/new"
	"$BIN/kernel-map" --compat reference <"$T/in" >"$T/ref"
	# equal times: the rows come in first-seen order, the fixture's
	jq -r 'select(.type=="kernel_row")|.category' "$T/new" >"$T/got.new"
	jq -r 'select(.type=="kernel_row")|.category' "$T/ref" >"$T/got.ref"
	cut -f2 "$T/names.tsv" | same - "$T/got.new"
	cut -f3 "$T/names.tsv" | same - "$T/got.ref"
}
check 'corrected categories of real kernel families; the reference'"'"'s answer with --compat' t_categories

t_gpu_work() {
	# Event Sync (cuda_sync) and a runtime call with a stream are no GPU work
	cat >"$T/t.json" <<-'X'
	{"traceEvents":[
	{"ph":"X","cat":"kernel","name":"gemm_kernel","pid":0,"tid":7,"ts":10,"dur":5,"args":{"stream":7,"correlation":1}},
	{"ph":"X","cat":"cuda_sync","name":"Event Sync","pid":0,"tid":7,"ts":20,"dur":4,"args":{"stream":7}},
	{"ph":"X","cat":"cuda_runtime","name":"hipLaunchKernel","pid":1,"tid":1,"ts":5,"dur":3,"args":{"stream":7,"correlation":1}}
	]}
	X
	"$BIN/trace-extract" -q "$T/t.json" >"$T/new"
	"$BIN/trace-extract" -q --compat reference "$T/t.json" >"$T/ref"
	eq 'gemm_kernel' "$(jq -r 'select(.type=="kernel")|.name' "$T/new")"
	eq 2 "$(jq -r 'select(.type=="stats")|.not_gpu_work' "$T/new")"
	eq 3 "$(jq -s 'map(select(.type=="kernel"))|length' "$T/ref")" "reference kernel records"
}
check 'sync events and runtime calls are not kernels; --compat keeps them' t_gpu_work

done_testing
