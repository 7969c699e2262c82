#!/bin/sh
# kernel-map: the mapping sample of non-SGLang runs (§5.5.2).
. "$(dirname "$0")/lib.sh"

km() { "$BIN/kernel-map" "$@"; }
KF=$FIX/kernel-map

lines() {	# lines SCOPE: the frame line of each site of kx, in payload order
	jq -c --arg s "$1" 'select(.type=="site" and .scope==$s and .kernel=="kx")|.sites|map(.location|capture(":(?<n>[0-9]+) ").n|tonumber)' "$T/out"
}

t_positions() {
	km <"$KF/sampling.jsonl" >"$T/out" &&
	eq '[0,1,2,3,4,5,6,8,9,10,11,12,13,14,15,16]' "$(lines mapping_stage)" &&
	eq '[0,1,2,3,4,5,6,8,9,10,11,12,13,14,15,16]' "$(lines mapping_global)"
}
check '17 launches: file positions 0-7 and 9-16, then time order' t_positions

t_formal_all() {
	km <"$KF/sampling.jsonl" >"$T/out" &&
	eq '[16,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]' "$(lines formal_stage)"
}
check 'the formal payload keeps every launch, in file order' t_formal_all

t_row() {
	km <"$KF/sampling.jsonl" >"$T/out" &&
	eq 17 "$(jq 'select(.type=="kernel_row" and .kernel=="kx")|.launches' "$T/out")" &&
	eq 'python/sglang/f.py:0 f (site share 6%)<br>python/sglang/f.py:1 f (site share 6%)' \
	    "$(jq -r 'select(.type=="kernel_row" and .kernel=="kx")|.location' "$T/out")" &&
	eq 6.25 "$(jq 'select(.type=="kernel_row" and .kernel=="kx")|.entry.sites[0].share_pct_within_kernel' "$T/out")"
}
check 'rows count every launch but show the sampled shares' t_row

t_sglang_no_sample() {
	sed 's/"framework":"vllm"/"framework":"sglang"/' "$KF/sampling.jsonl" >"$T/in" &&
	km <"$T/in" >"$T/out" &&
	eq 17 "$(jq -s '[.[]|select(.type=="site" and .scope=="mapping_stage" and .kernel=="kx")|.sites[]]|length' "$T/out")"
}
check 'framework sglang: no sampling' t_sglang_no_sample

t_sites_only_sample() {
	km --sites-only <"$KF/sampling.jsonl" >"$T/out" &&
	eq '[0,1,2,3,4,5,6,8,9,10,11,12,13,14,15,16]' "$(lines mapping_stage)"
}
check '--sites-only samples the same way' t_sites_only_sample

done_testing
