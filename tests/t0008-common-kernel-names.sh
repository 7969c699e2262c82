#!/bin/sh
# common/kname.c and common/kcat.c (issue 26): real kernel names of NVIDIA
# and AMD traces (vLLM, SGLang, TensorRT-LLM, aiter, CK, Tensile/hipBLASLt,
# cuBLAS/nvjet, CUTLASS, FlashInfer, FlashAttention, Triton, NCCL, DeepEP
# and the other expert-parallel libraries (dpsk::ep, UCCL, MORI, moeA2A),
# PyTorch) demangled as c++filt does, shortened by structure with their
# expected short name and category, and kept apart within a table.  A C
# program linked against the library of the build under test checks them.
. "$(dirname "$0")/lib.sh"

LIB=$BIN/../libcommon.a
CC=${CC:-cc}
NAMES=$FIX/common/kernel-names.tsv

build() {
	[ -f "$LIB" ] || { echo "no $LIB"; return 1; }
	san=
	if nm "$LIB" 2>/dev/null | grep -q __asan; then
		san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
	fi
	# shellcheck disable=SC2086
	"$CC" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $san -iquote "$TOP/common" \
	    -o "$T/kname-check" "$FIX/common/kname-check.c" "$LIB" $COMMON_LIBS
}

t_fixture() {
	build
	[ "$(grep -c '' "$NAMES")" -ge 150 ]
	"$T/kname-check" names "$NAMES" >"$T/out" || { cat "$T/out"; return 1; }
	has "$T/out" '^218 checked, 0 failed$'
}
check "150+ real names: expected short name and category, brackets balanced, one table unique" \
    t_fixture

t_cxxfilt() {
	command -v c++filt >/dev/null || { echo "c++filt not found (binutils)"; return 1; }
	build
	grep '^_Z' "$NAMES" | cut -f1 >"$T/mangled"
	[ -s "$T/mangled" ]
	"$T/kname-check" demangle <"$T/mangled" >"$T/ours"
	# c++filt takes the 2,000-character CK symbols past its default recursion limit with -r
	c++filt -r <"$T/mangled" >"$T/theirs"
	same "$T/theirs" "$T/ours"
	eq 'void aiter::add_rmsnorm_quant_kernel<std::bfloat16_t, std::bfloat16_t, 256, 16, false, false, true, 1>(std::bfloat16_t*, std::bfloat16_t*, float*, std::bfloat16_t*, std::bfloat16_t*, std::bfloat16_t*, double, int, int, int, int, int, int, int, bool)' \
	    "$(echo _ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi256ELi16ELb0ELb0ELb1ELi1EEEvPT0_PT_PfS4_S4_S4_diiiiiiib |
	    "$T/kname-check" demangle)"
}
check "mangled names demangled as c++filt does (DF16b bfloat16 included)" t_cxxfilt

t_issue_names() {
	build
	# the garbled names of the issue, shortened by structure
	printf '%s\n' \
	    '_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi64ELi8ELb0ELb0ELb1ELi1EEEvPT0_PT_PfS4_S4_S4_diiiiiiib' \
	    'std::enable_if<(((8)>(0)))&&vllm::_typeConvert<c10::BFloat16>::exists, void>::type vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, long, c10::BFloat16*, c10::BFloat16 const*, float, int, int)' \
	    'Memcpy DtoD (Device -> Device)' \
	    'Memcpy HtoD (Pageable -> Device)' \
	    'Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT128x256x32_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTLA0_DTLB0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA4_GRVWB4_GSUAMBSK_GLS0_ISA942_IU1_K1_LDSTI0_LBSPPA512_LBSPPB256_LBSPPM0_LPA16_LPB16_LPM0_LRVW8_LWPMn1_MIAV1_MIWT4_8_MO40_NTn1_NTA0_NTB0_NTC0_NTD0_NTM0_NEPBS0_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO0_SRVW0_SSO0_SVW4_SK3_SKFTR0_SKXCCM0_SGROB0_TSGRA0_TSGRB0_TT4_64_TLDS1_UMLDSA0_UMLDSB0_U64SL1_USFGROn1_VSn1_VWA4_VWB1_WSGRA0_WSGRB0_WS64_WG16_16_1' \
	    'void ck_tile::kentry<1, ck_tile::Rmsnorm2dFwd<ck_tile::Rmsnorm2dFwdPipelineOnePass<ck_tile::Rmsnorm2dFwdPipelineProblem<ck_tile::bf16_t, ck_tile::bf16_t, float, ck_tile::bf16_t, ck_tile::bf16_t, float, float, ck_tile::Generic2dBlockShape<ck_tile::sequence<1, 1>, ck_tile::sequence<1, 256>, ck_tile::sequence<1, 8>, ck_tile::sequence<1, 8> >, ck_tile::Rmsnorm2dFwdTraits<true, false, false, false, (ck_tile::Rmsnorm2dFusedAddEnum)0, (ck_tile::Rmsnorm2dFusedQuantEnum)0, (ck_tile::Rmsnorm2dSensitiveEnum)0> > >, ck_tile::Default2DEpilogue<ck_tile::Default2DEpilogueProblem<float, ck_tile::bf16_t, false, false, true> > >, ck_tile::gfx9_t>' |
	    "$T/kname-check" table >"$T/got"
	printf '%s\n' \
	    'aiter::add_rmsnorm_quant_kernel<…>' \
	    'vllm::fused_add_rms_norm_kernel<…>' \
	    'Memcpy DtoD (Device -> Device)' \
	    'Memcpy HtoD (Pageable -> Device)' \
	    'Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT128x256x32_MI16x16x1_SN_…' \
	    'ck_tile::kentry<…, Rmsnorm2dFwd<…>, …>' >"$T/want"
	same "$T/want" "$T/got"
}
check "the issue's names: DF16b, a std::enable_if return type, copies, a Tensile tile, a CK wrapper" \
    t_issue_names

t_clashes() {
	build
	# two instantiations: the template arguments in which they differ
	printf '%s\n' \
	    '_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi256ELi16ELb0ELb0ELb1ELi1EEEvPT0_PT_PfS4_S4_S4_diiiiiiib' \
	    '_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi64ELi8ELb0ELb0ELb1ELi1EEEvPT0_PT_PfS4_S4_S4_diiiiiiib' |
	    "$T/kname-check" table >"$T/got"
	printf '%s\n' 'aiter::add_rmsnorm_quant_kernel<…, 256, 16, …>' \
	    'aiter::add_rmsnorm_quant_kernel<…, 64, 8, …>' >"$T/want"
	same "$T/want" "$T/got"
	# one tile, different configurations: the first word in which they differ
	printf '%s\n' \
	    'Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT128x16x128_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_WS64_WG32_4_2' \
	    'Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT128x16x128_MI16x16x1_SN_LDSB1_AFC1_AG0_AFEM1_AFEM1_ASEM1_CLR1_WS64_WG32_4_2' |
	    "$T/kname-check" table >"$T/got"
	printf '%s\n' 'Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT128x16x128_MI16x16x1_…_AFEM1_…' \
	    'Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT128x16x128_MI16x16x1_…_AG0_…' >"$T/want"
	same "$T/want" "$T/got"
	# overloads: the first word of the parameters in which they differ
	printf '%s\n' 'ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)' \
	    'ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)' |
	    "$T/kname-check" table >"$T/got"
	printf '%s\n' 'ncclKernel_AllReduce_RING_LL_Sum_float(…ncclWorkElem…)' \
	    'ncclKernel_AllReduce_RING_LL_Sum_float(…ncclDevComm…)' >"$T/want"
	same "$T/want" "$T/got"
	# nothing readable tells them apart (C++20 manglings libiberty does not
	# read: only the scope path is known): a hash of the whole name; a name
	# given twice keeps one short name
	printf '%s\n' \
	    '_ZN7sgl_hip10activation18act_and_mul_kernelI14__hip_bfloat16TnPFT_RKS3_EXadL_Z4siluIS2_ES3_S5_EEEEvPS3_PS4_i' \
	    '_ZN7sgl_hip10activation18act_and_mul_kernelI14__hip_bfloat16TnPFT_RKS3_EXadL_Z4geluIS2_ES3_S5_EEEEvPS3_PS4_i' \
	    '_ZN7sgl_hip10activation18act_and_mul_kernelI14__hip_bfloat16TnPFT_RKS3_EXadL_Z4siluIS2_ES3_S5_EEEEvPS3_PS4_i' |
	    "$T/kname-check" table >"$T/got"
	eq 3 "$(grep -c '^sgl_hip::activation::act_and_mul_kernel<…> #[0-9a-f]\{4\}$' "$T/got")"
	eq 2 "$(sort -u "$T/got" | grep -c '')"
	eq "$(sed -n 1p "$T/got")" "$(sed -n 3p "$T/got")"
}
check "within a table two different names never share a short name" t_clashes

t_many_hashed() {
	build
	# 3,000 names only a hash tells apart: four hex digits collide (about 70
	# pairs), the colliding ones take the whole hash
	awk 'BEGIN { for (i = 0; i < 3000; i++)
	    printf "_ZN7sgl_hip10activation18act_and_mul_kernelI14__hip_bfloat16TnPFT_RKS3_EXadL_Z%dsiluIS2_ES3_S5_EEEEvPS3_PS4_i\n", i }' |
	    "$T/kname-check" table >"$T/got"
	eq 3000 "$(sort -u "$T/got" | grep -c '')"
	[ "$(grep -c ' #[0-9a-f]\{16\}$' "$T/got")" -gt 0 ]
}
check "names only a hash tells apart stay apart past four hex digits" t_many_hashed

t_identity() {
	build
	printf '%s\n' \
	    'void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, unsigned char, (vllm::Fp8KVCacheDataType)1>' \
	    'void cutlass::device_kernel<flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90<2, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cute::tuple<cute::C<128>, cute::C<128>, cute::C<128> >, 128, cutlass::bfloat16_t, float, cutlass::arch::Sm90, true, false, false, true, false, false, false, true, true, true, false, false>, flash::CollectiveEpilogueFwd<cute::tuple<cute::C<128>, cute::C<128>, cute::C<128> >, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cutlass::bfloat16_t, cutlass::arch::Sm90, 256, true, true, false, false>, flash::VarlenDynamicPersistentTileScheduler<128, 256, 128, false, true, true> > >' \
	    '_ZN7sgl_hip10activation18act_and_mul_kernelI14__hip_bfloat16TnPFT_RKS3_EXadL_Z4siluIS2_ES3_S5_EEEEvPS3_PS4_i' \
	    'void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)' |
	    "$T/kname-check" identity >"$T/got"
	printf '%s\n' 'vllm::reshape_and_cache_flash_kernel' 'flash::FlashAttnFwdSm90' \
	    'sgl_hip::activation::act_and_mul_kernel' 'at::native::vectorized_layer_norm_kernel' >"$T/want"
	same "$T/want" "$T/got"
}
check "identity: no template arguments, a wrapper read as its kernel, the scope path of what libiberty refuses" \
    t_identity

done_testing
