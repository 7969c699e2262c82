#!/bin/sh
# rank-skew: which kernels are collectives, of which kind.  Two ranks run the
# same kernels one after the other; each collective becomes a collective_row
# of its kind, and no other kernel does (nor counts as communication).
. "$(dirname "$0")/lib.sh"

RS=$BIN/rank-skew

# kind<TAB>kernel name; "-" for kernels that are no collective
cat >"$T/names" <<'EOF'
all-reduce	ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)
all-gather	ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)
reduce-scatter	ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)
send-recv	ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)
broadcast	ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)
reduce	ncclDevKernel_Reduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)
nccl	ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)
custom-all-reduce	void cross_device_reduce_1stage<__nv_bfloat16, 2>(RankData*, RankSignals, Signal*, __nv_bfloat16*, int, int)
custom-all-reduce	void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, unsigned long, unsigned int**, unsigned long, unsigned long)
custom-all-reduce	void tensorrt_llm::kernels::ar_fusion::allreduce_fusion_kernel_oneshot_lamport<__nv_bfloat16, 8>(int)
custom-all-reduce	void sglang::one_shot_all_reduce<float>(float*)
all-gather	void symm::multimem_all_gather<float>(float*)
all-to-all	void all_to_all_kernel<float>(float*)
moe-dispatch	void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*, int*, long*)
moe-combine	void deep_ep::internode_ll::combine<false>(void*)
moe-dispatch	void tensorrt_llm::kernels::moeA2ADispatchKernel<float>(float*)
moe-dispatch	void tensorrt_llm::kernels::moe_alltoall::moeA2ADispatchKernel<8, false, false, false>(int const*, int)
moe-combine	void dpsk::ep::internode::combine<false, 8, __nv_bfloat16, 8, 2, 16, 24>(int4*, float*, bool const*)
moe-dispatch	void dpsk::ep::internode::notify_dispatch<false, 8>(int const*, long*, int)
moe-dispatch	void dpsk::ep::internode::dispatch<false, 8, true, 8>(int4*, float*, long*)
moe-dispatch	void uccl::internode_ll::dispatch<true, false, 7168>(void*, void*, int*)
moe-combine	void mori::moe::EpCombineIntraNodeKernel<__hip_bfloat16>(mori::moe::EpDispatchCombineArgs<__hip_bfloat16>)
moe-dispatch	EpDispatchIntraNodeBatchKernel_bf16
-	void cub::DeviceReduceByKeyKernel<cub::DispatchReduceByKey<long*, int>::Policy, long*>(long*)
-	void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int, long, long, long, long, bool)
-	_combined_routing_compute
-	void dpsk::ep::internode::cached_notify<false>(int, int, int)
-	void flash::flash_fwd_splitkv_combine_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, cutlass::bfloat16_t>, 4, 1, true>(flash::Flash_fwd_params)
-	combine_kernel
-	void (anonymous namespace)::groupnorm_kernel_dispatch_up<__hip_bfloat16, 1024u>(unsigned int, unsigned int, long)
-	void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float> >(at::native::ReduceOp<float>)
-	void splitKreduce_kernel<32, 16, int, float, float, float, float, true, false, false>(cublasSplitKParams<float>)
-	Memcpy DtoD (Device -> Device)
-	void at::native::_scatter_gather_elementwise_kernel<128, 4>(int)
EOF

# the same kernels on ranks 0 and 1, 100 us apart, 10 us each
for r in 0 1; do
	printf '{"type":"trace","t":%s,"path":"/p/x-TP-%s.json","rank":%s}\n' "$r" "$r" "$r"
	awk -F '\t' -v r="$r" '{
		n = $2; gsub(/"/, "\\\"", n)
		printf "{\"type\":\"kernel\",\"t\":%d,\"name\":\"%s\",\"ts\":%d,\"dur\":10,\"stage\":\"decode\",\"sel\":true}\n",
		    r, n, NR * 100
	}' "$T/names"
	printf '{"type":"stats","t":%s}\n' "$r"
done >"$T/in"

t_kinds() {
	"$RS" --no-pass "$T/in" >"$T/out" 2>"$T/err"
	awk -F '\t' '$1 != "-" { print $1 }' "$T/names" >"$T/want"
	jq -r 'select(.type == "collective_row") | .kind' "$T/out" >"$T/got"
	same "$T/want" "$T/got"
	[ ! -s "$T/err" ]
}
check "each collective name gives its kind, in time order" t_kinds

t_not_collectives() {
	"$RS" --no-pass "$T/in" >"$T/out"
	ncoll=$(awk -F '\t' '$1 != "-"' "$T/names" | wc -l)
	nall=$(wc -l <"$T/names")
	eq "$((ncoll * 10)) $((nall * 10)) $ncoll" "$(jq -r 'select(.type == "rank_row" and .rank == 0) |
	    "\(.comm_us) \(.kernel_us) \(.collectives)"' "$T/out")"
}
check "other kernels are no collectives and no communication time" t_not_collectives

t_names_canonical() {
	"$RS" --no-pass "$T/in" >"$T/out"
	# the kernel table's name: "void " names lose their parameter list
	eq "void cross_device_reduce_1stage<__nv_bfloat16, 2>" \
	    "$(jq -r 'select(.type == "collective_row" and (.name | test("cross"))) | .name' "$T/out")"
}
check "collective names are the kernel table's canonical names" t_names_canonical

done_testing
