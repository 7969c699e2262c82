#!/bin/sh
# trace-diff: kernels matched by name, then by family (renamed template
# kernels, retuned tile sizes, hashes, mangled names), new and removed ones,
# the same/changed rule, the 1.0 % bar, moved Python sites and the order of
# the rows; every figure here is computed by hand.
. "$(dirname "$0")/lib.sh"

TD=$BIN/trace-diff

# kr STAGE KERNEL US [LAUNCHES [CATEGORY [LOCATION [T]]]]: a kernel_row record
kr() {
	printf '{"type":"kernel_row","t":%s,"stage":"%s","kernel":"%s","category":"%s","total_us":%s,"launches":%s,"stage_total_us":0,"location":"%s"}\n' \
	    "${7:-0}" "$1" "$2" "${5:-gemm}" "$3" "${4:-1}" "${6:-a.py:1 f}"
}
inp() { printf '{"type":"input","role":"single","path":"%s","framework":"sglang"}\n' "$1"; }

# rows FILE: "status match kernel base_kernel base_us cand_us delta_us" per diff_row
rows() {
	jq -r 'select(.type == "diff_row") |
	    [.status, (.match // "-"), .kernel, (.base_kernel // "-"), .base_us, .cand_us, .delta_us] |
	    join(" ")' "$1"
}

t_self() {
	{ inp /r/a.json; kr decode 'void g<1>' 600 3; kr decode 'void n<2>' 400 3 norm; } >"$T/a"
	"$TD" --no-pass --gate 0 --baseline "$T/a" "$T/a" >"$T/out"
	eq "same name void g<1> - 600 600 0
same name void n<2> - 400 400 0" "$(rows "$T/out")"
	eq "neutral neutral" "$(jq -r 'select(.type == "verdict") | .verdict' "$T/out" | xargs)"
	eq "0 0" "$(jq -r 'select(.type == "verdict") | .delta_pct' "$T/out" | xargs)"
}
check "a run against itself: only same rows, zero deltas, exit 0 under --gate 0" t_self

t_template() {
	# the same kernel with other template arguments and its parameter list
	{ inp /r/a; kr decode 'void ns::gemm_kernel<128, 64, cutlass::half_t>' 500 4; } >"$T/a"
	{ inp /r/b; kr decode 'void ns::gemm_kernel<256, 64, cutlass::half_t>' 450 4; } >"$T/b"
	"$TD" --no-pass --baseline "$T/a" "$T/b" >"$T/out"
	eq "changed family void ns::gemm_kernel<256, 64, cutlass::half_t> void ns::gemm_kernel<128, 64, cutlass::half_t> 500 450 -50" \
	    "$(rows "$T/out")"
	eq -10 "$(jq 'select(.type == "diff_row") | .delta_pct' "$T/out")"
}
check "a renamed template kernel is one changed row (family), not new and removed" t_template

t_tiles_mangled_hash() {
	{
		inp /r/a
		kr decode 'sm90_xmma_gemm_bf16bf16_tilesize128x128x64_cublas' 100
		kr decode '_ZN5aiter12rmsnorm_kernelILi256ELi16EEEvPT_' 50 1 norm
		kr decode 'triton_poi_fused_add_3a9f0c2e17' 30 1 elementwise
		kr decode 'Cijk_Alik_MT320xADDRx64_MI16x16x1' 20
	} >"$T/a"
	{
		inp /r/b
		kr decode 'sm90_xmma_gemm_bf16bf16_tilesize256x128x64_cublas' 110
		kr decode '_ZN5aiter12rmsnorm_kernelILi64ELi8EEEvPT_' 40 1 norm
		kr decode 'triton_poi_fused_add_77e0b15d42' 30 1 elementwise
		kr decode 'Cijk_Alik_MT128x256x32_MI16x16x1' 25
	} >"$T/b"
	"$TD" --no-pass --baseline "$T/a" "$T/b" >"$T/out"
	eq "changed family sm90_xmma_gemm_bf16bf16_tilesize256x128x64_cublas sm90_xmma_gemm_bf16bf16_tilesize128x128x64_cublas 100 110 10
changed family _ZN5aiter12rmsnorm_kernelILi64ELi8EEEvPT_ _ZN5aiter12rmsnorm_kernelILi256ELi16EEEvPT_ 50 40 -10
changed family Cijk_Alik_MT128x256x32_MI16x16x1 Cijk_Alik_MT320xADDRx64_MI16x16x1 20 25 5
changed family triton_poi_fused_add_77e0b15d42 triton_poi_fused_add_3a9f0c2e17 30 30 0" "$(rows "$T/out")"
}
check "tile sizes, mangled template arguments, hashes and 0xADDR are left out of the family" t_tiles_mangled_hash

t_new_removed() {
	{ inp /r/a; kr decode 'void keep<1>' 100; kr decode 'void gone<1>' 20 2 norm; } >"$T/a"
	{ inp /r/b; kr decode 'void keep<1>' 100; kr decode 'void fresh_kernel' 30 3 activation 'b.py:9 h'; } >"$T/b"
	"$TD" --no-pass --baseline "$T/a" "$T/b" >"$T/out"
	eq "new - void fresh_kernel - 0 30 30
removed - void gone<1> - 20 0 -20
same name void keep<1> - 100 100 0" "$(rows "$T/out")"
	# new: no delta_pct, no match; removed: -100 %; launches kept per side
	eq 'null 0 3 b.py:9 h' "$(jq -r 'select(.type == "diff_row" and .status == "new") |
	    "\(.delta_pct) \(.base_launches) \(.cand_launches) \(.location)"' "$T/out")"
	eq '-100 2 0' "$(jq -r 'select(.type == "diff_row" and .status == "removed") |
	    "\(.delta_pct) \(.base_launches) \(.cand_launches)"' "$T/out")"
}
check "kernels on one side only are new or removed" t_new_removed

t_category() {
	# one family, another category: not the same kernel
	{ inp /r/a; kr decode 'void k<1>' 100 1 gemm; } >"$T/a"
	{ inp /r/b; kr decode 'void k<2>' 100 1 norm; } >"$T/b"
	"$TD" --no-pass --baseline "$T/a" "$T/b" >"$T/out"
	eq "removed new" "$(jq -r 'select(.type == "diff_row") | .status' "$T/out" | xargs)"
}
check "a family match needs the same category" t_category

t_family_many() {
	# two retuned names in the baseline, one in the candidate: one row for the family
	{ inp /r/a; kr decode 'gemm_MT64x64' 300 2; kr decode 'gemm_MT32x32' 100 2; kr decode 'gemm_MT16x16' 50 1; } >"$T/a"
	{ inp /r/b; kr decode 'gemm_MT16x16' 50 1; kr decode 'gemm_MT128x64' 350 3; } >"$T/b"
	"$TD" --no-pass --baseline "$T/a" "$T/b" >"$T/out"
	eq "changed family gemm_MT#x# - 400 350 -50
same name gemm_MT16x16 - 50 50 0" "$(rows "$T/out")"
	eq "2 1 4 3" "$(jq -r 'select(.type == "diff_row" and .match == "family") |
	    "\(.base_names) \(.cand_names) \(.base_launches) \(.cand_launches)"' "$T/out")"
}
check "several leftover names of one family make one family row" t_family_many

t_same_rule() {
	{
		inp /r/a
		kr decode 'void a' 1000 10; kr decode 'void b' 1000 10; kr decode 'void c' 1000 10
	} >"$T/a"
	{
		inp /r/b
		# 0.9 % of the larger side: same; 1.5 %: changed; as fast with more launches: changed
		kr decode 'void a' 1009 10; kr decode 'void b' 1015 10; kr decode 'void c' 1000 11
	} >"$T/b"
	"$TD" --no-pass --baseline "$T/a" "$T/b" >"$T/out"
	eq "changed:void b same:void a changed:void c" "$(jq -r 'select(.type == "diff_row") |
	    "\(.status):\(.kernel)"' "$T/out" | xargs)"
}
check "same: within 1.0 % of the larger side and as many launches; else changed" t_same_rule

t_bar_and_order() {
	# stage totals 1000 and 1000: 0.5 % and 0.5 % hidden; 0.5 % vs 2 % shown
	{ inp /r/a; kr decode 'void big' 985; kr decode 'void tiny' 5; kr decode 'void grows' 5 1 norm; kr decode 'void x' 5 1 norm; } >"$T/a"
	{ inp /r/b; kr decode 'void big' 970; kr decode 'void tiny' 5; kr decode 'void grows' 20 1 norm; kr decode 'void x' 5 1 norm; } >"$T/b"
	"$TD" --no-pass --baseline "$T/a" "$T/b" >"$T/out"
	# largest absolute change first, then the larger time, then the name
	eq "void big:-15:true void grows:15:true void tiny:0:false void x:0:false" \
	    "$(jq -r 'select(.type == "diff_row") | "\(.kernel):\(.delta_us):\(.shown)"' "$T/out" | xargs)"
	eq "98.5 97" "$(jq -r 'select(.type == "diff_row" and .kernel == "void big") |
	    "\(.base_share_pct) \(.cand_share_pct)"' "$T/out")"
}
check "rows by absolute change; shown at 1.0 % of the stage on either side" t_bar_and_order

t_moved() {
	{ inp /r/a; kr decode 'void k' 10 1 gemm 'old.py:3 f (site share 60%)<br>x.py:1 g (site share 40%)'; } >"$T/a"
	{ inp /r/b; kr decode 'void k' 10 1 gemm 'new.py:7 f'; kr decode 'void s' 5 1 gemm 'same.py:1 z'; } >"$T/b"
	{ cat "$T/a"; kr decode 'void s' 5 1 gemm 'same.py:1 z'; } >"$T/a2"
	"$TD" --no-pass --baseline "$T/a2" "$T/b" >"$T/out"
	eq "void k new.py:7 f old.py:3 f|void s same.py:1 z null" "$(jq -r 'select(.type == "diff_row") |
	    "\(.kernel) \(.location) \(.base_location)"' "$T/out" | paste -sd '|' -)"
}
check "a kernel whose Python site moved names both sites" t_moved

t_traces_summed() {
	# a profile directory: the same kernel in two traces of a stage adds up
	{ inp /r/a; kr decode 'void k' 10 2 gemm x 0; kr decode 'void k' 15 3 gemm x 1; } >"$T/a"
	{ inp /r/b; kr decode 'void k' 25 5; } >"$T/b"
	"$TD" --no-pass --baseline "$T/a" "$T/b" >"$T/out"
	eq "same name void k - 25 25 0" "$(rows "$T/out")"
}
check "rows of one kernel in several traces of a stage are summed" t_traces_summed

t_swap() {
	{
		inp /r/a
		kr decode 'void keep' 100 2; kr decode 'void gone' 20 1 norm
		kr decode 'void t<1>' 40 1 rope; kr decode 'fam_A1' 30; kr decode 'fam_A2' 10
		kr extend 'void p' 300
	} >"$T/a"
	{
		inp /r/b
		kr decode 'void keep' 130 2; kr decode 'void fresh' 25 1 activation
		kr decode 'void t<2>' 35 1 rope; kr decode 'fam_A7' 50
		kr extend 'void p' 310
	} >"$T/b"
	"$TD" --no-pass --baseline "$T/a" "$T/b" >"$T/ab"
	"$TD" --no-pass --baseline "$T/b" "$T/a" >"$T/ba"
	# key a row by its stage and (sorted) pair of names; compare status and delta
	jq -r 'select(.type == "diff_row") |
	    "\(.stage):\([.kernel, (.base_kernel // .kernel)] | sort | join("/")) \(.status) \(.delta_us)"' \
	    "$T/ab" | sort >"$T/k1"
	jq -r 'select(.type == "diff_row") |
	    (.status | if . == "new" then "removed" elif . == "removed" then "new" else . end) as $s |
	    "\(.stage):\([.kernel, (.base_kernel // .kernel)] | sort | join("/")) \($s) \(-.delta_us)"' \
	    "$T/ba" | sort >"$T/k2"
	same "$T/k1" "$T/k2"
	eq 6 "$(wc -l <"$T/k1" | tr -d ' ')"
}
check "swapping the runs negates every delta and swaps new with removed" t_swap

done_testing
