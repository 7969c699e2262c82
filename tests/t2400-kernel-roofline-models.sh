#!/bin/sh
# kernel-roofline: the FLOP and byte models of kernel-roofline(1) MODELS on
# hand-computed shapes (GEMMs with and without bias, batched, fp8 scaled with
# scale tensors, causal and non-causal attention, varlen exact and bounded,
# paged prefill, fused MoE, convolution, memory-bound ops, memcpy), and the
# roofline arithmetic against a hand-made GPU table.
. "$(dirname "$0")/lib.sh"

SPECS=$FIX/kernel-roofline/test-gpus.jsonl
BF='"c10::BFloat16"'
F8='"c10::Float8_e4m3fn"'

# One trace of decode kernels on "Test GPU" (1000 GB/s, bf16 100 TFLOP/s):
# shape ID OP DIMS TYPES CONCRETE, then kern NAME DUR SHAPE [FRAC].
begin() {
	: >"$T/in.jsonl"
	rec '{"type":"trace","v":1,"t":0,"stage":"all"}'
	rec "{\"type\":\"device\",\"t\":0,\"id\":0,\"name\":\"${GPUNAME:-Test GPU}\"}"
}
rec() { printf '%s\n' "$1" >>"$T/in.jsonl"; }
shape() {
	rec "{\"type\":\"op_shape\",\"t\":0,\"id\":$1,\"op\":\"$2\",\"dims\":$3,\"types\":$4,\"concrete\":$5}"
}
kern() {
	_frac=
	[ -n "${4:-}" ] && _frac=",\"shape_frac\":$4"
	rec "{\"type\":\"kernel\",\"t\":0,\"name\":\"$1\",\"cat\":\"kernel\",\"ts\":0,\"dur\":$2,\"shape\":$3$_frac,\"stage\":\"decode\",\"sel\":true}"
}
finish() {
	rec '{"type":"stats","t":0}'
	"$BIN/kernel-roofline" -q --gpu-specs "$SPECS" "$@" <"$T/in.jsonl" >"$T/out.jsonl"
}
# eff KERNEL JQ: a jq expression over the kernel's kernel_eff record
eff() {
	jq -r --arg k "$1" "select(.type == \"kernel_eff\" and .kernel == \$k) | $2" "$T/out.jsonl"
}

t_gemm() {
	begin
	shape 0 aten::mm '[[128,256],[256,512]]' "[$BF,$BF]" '["",""]'
	shape 1 aten::addmm '[[512],[128,256],[256,512],[],[]]' "[$BF,$BF,$BF,\"Scalar\",\"Scalar\"]" \
	    '["","","","1","1"]'
	shape 2 aten::bmm '[[8,64,32],[8,32,16]]' '["c10::Half","c10::Half"]' '["",""]'
	shape 3 aten::linear '[[4,32,256],[512,256],[512]]' "[$BF,$BF,$BF]" '["","",""]'
	kern mm 1 0
	kern addmm 1 1
	kern bmm 1 2
	kern linear 1 3
	finish
	# 2 M N K: 2*128*512*256; bytes (128*256 + 256*512 + 128*512) * 2
	eq "33554432 458752 M=128 N=512 K=256 bf16 bf16" "$(eff mm '"\(.flops) \(.bytes) \(.shape) \(.dtype)"')"
	# the bias: + M N FLOPs, + 512 * 2 bytes
	eq "33619968 459776" "$(eff addmm '"\(.flops) \(.bytes)"')"
	# batched: 2 * 8 * 64 * 16 * 32; 8 * (64*32 + 32*16 + 64*16) * 2
	eq "524288 57344 batch=8 M=64 N=16 K=32 fp16" "$(eff bmm '"\(.flops) \(.bytes) \(.shape)"')"
	# linear: M = 4*32 rows of the input, the weight N x K
	eq "33619968 459776" "$(eff linear '"\(.flops) \(.bytes)"')"
	# against Test GPU: 0.3355 us of compute, 0.4588 us of memory: memory-bound
	eq "memory 0.458752 45.8752 33.554432 458.752" "$(eff mm \
	    '"\(.bound) \(.roof_us) \(.pct_of_roof * 1e6 | round / 1e6) \(.tflops) \(.gbps)"')"
	eq 73.142857 "$(eff mm '.intensity * 1e6 | round / 1e6')"
}
check "GEMMs: mm, addmm (bias), bmm (batched), linear; the roofline of one" t_gemm

t_scaled_gemm() {
	begin
	# _scaled_mm(A, B, scale_a, scale_b, bias, scale_result, out_dtype=BFloat16 (15), fast)
	shape 0 aten::_scaled_mm '[[64,128],[128,256],[],[],[],[],[],[]]' \
	    "[$F8,$F8,\"float\",\"float\",\"\",\"\",\"Scalar\",\"Scalar\"]" '["","","","","","","15","False"]'
	# vLLM's cutlass_scaled_mm(out, a, b, a_scales per row, b_scales per column, bias)
	shape 1 _C::cutlass_scaled_mm '[[64,256],[64,128],[128,256],[64,1],[1,256],[]]' \
	    "[$BF,$F8,$F8,\"float\",\"float\",\"\"]" '["","","","","",""]'
	kern scaled 2 0
	kern cutlass 2 1
	finish
	# 2*64*256*128; A and B one byte an element, two 4-byte scales, a bf16 result
	eq "4194304 73736 fp8" "$(eff scaled '"\(.flops) \(.bytes) \(.dtype)"')"
	# the out tensor's bytes, and 64 + 256 scales
	eq "4194304 75008 fp8" "$(eff cutlass '"\(.flops) \(.bytes) \(.dtype)"')"
	# fp8 peak 200 TFLOP/s: 0.021 us of compute, 0.074 us of memory
	eq "200 memory" "$(eff scaled '"\(.peak_tflops) \(.bound)"')"
}
check "fp8 scaled GEMMs with their scale tensors" t_scaled_gemm

t_attention() {
	begin
	q='[2,8,128,64]'
	shape 0 aten::_scaled_dot_product_flash_attention "[$q,$q,$q,[],[],[],[]]" \
	    "[$BF,$BF,$BF,\"Scalar\",\"Scalar\",\"Scalar\",\"Scalar\"]" '["","","","0.","False","False","0.125"]'
	shape 1 aten::_scaled_dot_product_flash_attention "[$q,$q,$q,[],[],[],[]]" \
	    "[$BF,$BF,$BF,\"Scalar\",\"Scalar\",\"Scalar\",\"Scalar\"]" '["","","","0.","True","False","0.125"]'
	v='[512,8,64]'
	shape 2 aten::_flash_attention_forward "[$v,$v,$v,[5],[5],[],[],[],[],[],[]]" \
	    "[$BF,$BF,$BF,\"int\",\"int\",\"Scalar\",\"Scalar\",\"Scalar\",\"Scalar\",\"Scalar\",\"Scalar\"]" \
	    '["","","","","","128","128","0.","True","False","0.125"]'
	v='[500,8,64]'
	shape 3 aten::_flash_attention_forward "[$v,$v,$v,[5],[5],[],[],[],[],[],[]]" \
	    "[$BF,$BF,$BF,\"int\",\"int\",\"Scalar\",\"Scalar\",\"Scalar\",\"Scalar\",\"Scalar\",\"Scalar\"]" \
	    '["","","","","","128","128","0.","True","False","0.125"]'
	shape 4 aiter::mha_batch_prefill \
	    '[[256,8,64],[1000,2,64],[1000,2,64],[3],[3],[300],[],[],[],[],[],[],[]]' \
	    "[$BF,$BF,$BF,\"int\",\"int\",\"int\",\"Scalar\",\"Scalar\",\"Scalar\",\"Scalar\",\"Scalar\",\"Scalar\",\"Scalar\"]" \
	    '["","","","","","","128","150","0.","0.125","0.","False","True"]'
	kern full 10 0
	kern causal 10 1
	kern varlen 10 2
	kern varlen_bound 10 3
	kern paged 10 4
	finish
	# 16 heads x 128 x 128 pairs x 2 (D + Dv) FLOPs; q, k, v and the output
	eq "67108864 1048576 exact" "$(eff full '"\(.flops) \(.bytes) \(.estimate // "exact")"')"
	# causal, Sq = Sk: 128 * 129 / 2 pairs
	eq "33816576 B=2 H=8 Sq=128 Sk=128 D=64 causal bf16" "$(eff causal '"\(.flops) \(.shape)"')"
	# varlen, 4 sequences of exactly 128 (512 = 4 * 128): 4 * 8256 pairs, 8 heads
	eq "67633152 2097192 exact" "$(eff varlen '"\(.flops) \(.bytes) \(.estimate // "exact")"')"
	# 500 tokens over 4 sequences of at most 128: at most min(500*500, 128*500) pairs,
	# less at least (500^2/4 - 500)/2 masked: 33000
	eq "67584000 bound" "$(eff varlen_bound '"\(.flops) \(.estimate // "exact")"')"
	# paged: 2 sequences of 128 queries, 300 cached tokens (150 each), bottom-right causal
	eq "45350912 679112 exact" "$(eff paged '"\(.flops) \(.bytes) \(.estimate // "exact")"')"
	eq true "$(jq -r 'select(.type == "roofline") | .estimated' "$T/out.jsonl")"
}
check "attention: SDPA causal and not, varlen exact and bounded, paged prefill" t_attention

t_moe_conv() {
	begin
	shape 0 sglang::inplace_fused_experts '[[16,128],[8,512,128],[8,128,256],[16,2],[16,2]]' \
	    "[$BF,$BF,$BF,\"float\",\"int\"]" '["","","","",""]'
	shape 1 aten::miopen_convolution '[[8,64,56,56],[128,64,3,3],[],[],[],[],[],[],[]]' \
	    "[$BF,$BF,\"\",\"ScalarList\",\"ScalarList\",\"ScalarList\",\"Scalar\",\"Scalar\",\"Scalar\"]" \
	    '["","","","[1, 1]","[1, 1]","[1, 1]","1","False","False"]'
	kern moe 10 0
	kern conv 10 1
	finish
	# 16 tokens x top-2: 2*32*512*128 + 2*32*128*256; the hidden states in and
	# out, the top-k tensors, and the weights of min(8, 32) experts
	eq "6291456 1581312 bound T=16 top2 E=8 H=128 I=256 bf16" \
	    "$(eff moe '"\(.flops) \(.bytes) \(.estimate // "exact") \(.shape)"')"
	# 2 N K C R S P Q with P = Q = 56; input, weight and output
	eq "3699376128 9781248" "$(eff conv '"\(.flops) \(.bytes)"')"
}
check "fused MoE (tokens x top-k x expert GEMMs) and convolution" t_moe_conv

t_memory() {
	begin
	shape 0 aten::silu '[[1024,4096]]' "[$BF]" '[""]'
	shape 1 aten::add_ '[[1024,1024],[1024,1024],[]]' '["float","float","Scalar"]' '["","","1"]'
	shape 2 aten::native_layer_norm '[[64,1024],[],[1024],[1024],[]]' \
	    "[$BF,\"ScalarList\",$BF,$BF,\"Scalar\"]" '["","[1024]","","","1e-05"]'
	shape 3 aten::sum '[[256,1024],[],[],[]]' '["float","ScalarList","Scalar",""]' \
	    '["","[1]","False",""]'
	kern silu 10 0
	kern add 10 1
	kern norm 10 2
	kern sum 10 3
	rec '{"type":"kernel","t":0,"name":"Memcpy DtoD (Device -> Device)","cat":"gpu_memcpy","ts":0,"dur":1,"bytes":1000,"stage":"decode","sel":true}'
	rec '{"type":"kernel","t":0,"name":"Memcpy HtoD (Pinned -> Device)","cat":"gpu_memcpy","ts":0,"dur":3,"bytes":1000,"stage":"decode","sel":true}'
	finish
	# in and out, two bytes each
	eq "0 16777216 memory" "$(eff silu '"\(.flops) \(.bytes) \(.bound)"')"
	# in place: both inputs read, self written back
	eq 12582912 "$(eff add .bytes)"
	# input, weight, bias, and the output of the input's size
	eq 266240 "$(eff norm .bytes)"
	eq 1048576 "$(eff sum .bytes)"
	# a copy within the GPU reads and writes its bytes; one from the host is not modeled
	eq "2000 memcpy" "$(eff 'Memcpy DtoD (Device -> Device)' '"\(.bytes) \(.op)"')"
	eq "Memcpy HtoD (Pinned -> Device) 3" "$(jq -r 'select(.type == "roofline") |
	    .unmodeled[0] | "\(.op) \(.us)"' "$T/out.jsonl")"
}
check "memory-bound ops (activation, in-place, norm, reduction) and memcpy events" t_memory

t_frac_tf32_unmodeled() {
	begin
	shape 0 aten::mm '[[128,256],[256,512]]' '["float","float"]' '["",""]'
	shape 1 vllm::moe_forward '[[888,3072],[888,128],[]]' "[$BF,$BF,\"\"]" '["","",""]'
	kern gemm_main 3 0 0.75
	kern splitk_reduce 1 0 0.25
	kern sm80_xmma_gemm_f32f32_tf32f32_f32 2 0
	kern moe_kernel 5 1
	rec '{"type":"kernel","t":0,"name":"graph_kernel","cat":"kernel","ts":0,"dur":4,"stage":"decode","sel":true}'
	rec '{"type":"kernel","t":0,"name":"other_process","cat":"kernel","ts":0,"dur":100,"shape":0,"stage":"decode"}'
	rec '{"type":"step","t":0,"stage":"decode","index":0,"name":"ProfilerStep#1","ts":0,"cpu_us":10}'
	rec '{"type":"step","t":0,"stage":"decode","index":1,"name":"ProfilerStep#2","ts":10,"cpu_us":10}'
	finish
	# the op's work split by time: 3/4 and 1/4 of 33554432
	eq "25165824 8388608" "$(eff gemm_main .flops) $(eff splitk_reduce .flops)"
	# fp32 on CUDA cores, unless the kernel's name says TF32
	eq "fp32 tf32" "$(eff gemm_main .dtype) $(eff sm80_xmma_gemm_f32f32_tf32f32_f32 .dtype)"
	# stage: 3 + 1 + 2 + 5 + 4 us (not the other process's kernel); 6 modeled
	eq "15 6 40" "$(jq -r 'select(.type == "roofline") | "\(.stage_us) \(.modeled_us) \(.modeled_pct)"' \
	    "$T/out.jsonl")"
	eq "vllm::moe_forward:5 -:4" "$(jq -r 'select(.type == "roofline") | .unmodeled |
	    map("\(.op):\(.us)") | join(" ")' "$T/out.jsonl")"
	# headroom over the two steps
	eq 2 "$(jq -r 'select(.type == "roofline") | .steps' "$T/out.jsonl")"
	eq 1 "$(jq -r 'select(.type == "roofline") |
	    (.headroom_us / 2 - .headroom_per_step_us | fabs < 1e-9) | if . then 1 else 0 end' "$T/out.jsonl")"
}
check "an op's work split over its kernels; TF32 by the kernel name; unmodeled time by op; steps" \
    t_frac_tf32_unmodeled

t_passes_through() {
	begin
	shape 0 aten::mm '[[128,256],[256,512]]' "[$BF,$BF]" '["",""]'
	kern mm 1 0
	rec '{"type":"kernel_row","t":0,"stage":"decode","kernel":"mm","total_us":1,"stage_total_us":1}'
	finish
	jq -c 'select(.type != "kernel_eff" and .type != "roofline")' "$T/out.jsonl" >"$T/rest"
	jq -c . "$T/in.jsonl" >"$T/want"
	same "$T/want" "$T/rest"
	# the trace's rows come before its stats record
	eq stats "$(tail -n 1 "$T/out.jsonl" | jq -r .type)"
}
check "every input record passes through unchanged; the rows precede the stats record" t_passes_through

t_drop_events() {
	begin
	shape 0 aten::mm '[[128,256],[256,512]]' "[$BF,$BF]" '["",""]'
	kern mm 1 0
	rec '{"type":"launch","t":0,"name":"cudaLaunchKernel","ts":0,"dur":1,"correlation":1}'
	rec '{"type":"cpu_op","t":0,"name":"aten::mm","ts":0,"dur":2}'
	rec '{"type":"sync","t":0,"name":"cudaDeviceSynchronize","ts":3,"dur":1}'
	rec '{"type":"kernel_row","t":0,"stage":"decode","kernel":"mm","total_us":1,"stage_total_us":1}'
	finish
	mv "$T/out.jsonl" "$T/all.jsonl"
	"$BIN/kernel-roofline" -q --gpu-specs "$SPECS" --drop-events <"$T/in.jsonl" >"$T/out.jsonl"
	# the same rows from the same reading, without the event records
	grep -v -e '"type":"kernel",' -e '"type":"launch",' -e '"type":"cpu_op",' \
	    -e '"type":"sync",' "$T/all.jsonl" >"$T/want"
	same "$T/want" "$T/out.jsonl"
	eq 1 "$(grep -c '"type":"kernel_eff"' "$T/out.jsonl")" "kernel_eff records"
	eq 'op_shape kernel_row' "$(jq -r 'select(.type == "op_shape" or .type == "kernel_row") | .type' \
	    "$T/out.jsonl" | tr '\n' ' ' | sed 's/ $//')"
}
check "--drop-events: the kernel, launch, cpu_op and sync records read but not written" t_drop_events

done_testing
