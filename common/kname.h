/*
 * Kernel names for people and for rules (issue 26): demangling, the
 * kernel's identity, and short names by structure.
 *
 * A kernel name in a trace is an Itanium-mangled symbol (_ZN5aiter...),
 * a demangled C++ signature ("void ns::f<T, 8>(T*, int)", its argument
 * list cut by canonicalize_name or not), a copy-engine transfer ("Memcpy
 * DtoD (Device -> Device)"), or a plain identifier (Cijk_..._MT128x256x32
 * _..., nvjet_tst_64x8_..., triton_poi_fused_add_0).  Mangled names are
 * demangled by libiberty's cplus_demangle, as c++filt does, DF16b
 * (std::bfloat16_t) and the other extended types included; a name it
 * cannot demangle keeps the scope path its nested name spells out
 * (_ZN7sgl_hip10activation18act_and_mul_kernelI... ->
 * sgl_hip::activation::act_and_mul_kernel), never guessed identifiers.
 *
 * All functions take valid UTF-8 (pointer, length), write to a
 * caller-owned sbuf (reset first) and never fail; ASCII is what they
 * interpret, other bytes pass through.
 */
#ifndef KNAME_H
#define KNAME_H

#include <stddef.h>

#include "sbuf.h"

/*
 * The demangled text of a mangled name (_Z...): 1 and out filled when
 * libiberty demangles it, else 0 and out empty.  Names past 8 KiB are not
 * tried (a real kernel's symbol is under 3 KiB; the limit bounds the
 * demangler's recursion on hostile input).
 */
int kname_demangle(const char *s, size_t n, sbuf *out);

/*
 * The name as people read it in full: demangled when it is mangled (the
 * scope path when demangling fails), else the name itself.
 */
void kname_display(const char *s, size_t n, sbuf *out);

/*
 * The kernel's identity: its qualified function name without return type,
 * template arguments or parameter list ("aiter::add_rmsnorm_quant_kernel",
 * "vllm::fused_add_rms_norm_kernel" out of "std::enable_if<...>::type
 * vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(...)"); for a launch
 * wrapper (ck_tile::kentry, cutlass::Kernel, cutlass::Kernel2,
 * cutlass::device_kernel) the kernel class it runs ("ck_tile::kentry<1,
 * ck_tile::Rmsnorm2dFwd<...>>" -> "ck_tile::Rmsnorm2dFwd").  Plain names
 * and copies are their own identity.  Categories, fusion keywords and
 * trace-diff's families read this, so a data type in a template argument
 * (Fp8KVCacheDataType) never decides what a kernel is.
 */
void kname_identity(const char *s, size_t n, sbuf *out);

/* Short names aim at this many characters; a qualified name may exceed it. */
#define KNAME_WIDTH 72

/*
 * The short name of one kernel, about `width` characters: the return
 * type, template arguments and parameter list elided ("ns::f<…>"; a
 * wrapper shows the kernel it runs, "ck_tile::kentry<…, Rmsnorm2dFwd<…>>";
 * "(anonymous namespace)::" dropped); a long plain name keeps its first
 * words, its vendor tile and config words (Tensile MT..x..x.. and MI..,
 * the first NxM shape of nvjet, CUTLASS, xmma and MIOpen names) and its
 * last words, with "…" for what it leaves out ("Cijk_Alik_Bljk_BBS_BH_
 * Bias_HA_S_SAV_UserArgs_MT128x256x32_MI16x16x1_…").  Copies ("Memcpy
 * HtoD (Pageable -> Device)") and names within the width are kept whole.
 * Brackets are always balanced.
 */
void kname_short(const char *s, size_t n, size_t width, sbuf *out);

/*
 * Short names for one table: out[i] (heap, the caller frees) for
 * names[i], so that two different names never share one.  A clash adds
 * the smallest part that tells the names apart: the template arguments
 * in which they differ ("aiter::add_rmsnorm_quant_kernel<…, 256, 16, …>"),
 * the first word in which they differ, and as a last resort a four-digit
 * hash of the whole name (" #1a2b", stable across runs).  Equal names get
 * equal short names.
 */
void kname_short_all(const char *const *names, size_t n, size_t width, char **out);

#endif
