#!/bin/sh
# kernel-map: entry lookup in the mapping map (§5.7), with --mapping.
. "$(dirname "$0")/lib.sh"

km() { "$BIN/kernel-map" "$@"; }
KF=$FIX/kernel-map

km --mapping "$KF/lookup-map.jsonl" <"$KF/lookup-formal.jsonl" >"$T/look.out"
row() {	# row KERNEL FIELD
	jq -r --arg k "$1" "select(.type==\"kernel_row\" and .kernel==\$k)|.$2" "$T/look.out"
}

t_alias_stage_first() {
	eq gemm_kernel_v2 "$(row gemm_kernel entry.kernel)" &&
	eq 'python/sglang/a.py:1 f' "$(row gemm_kernel location)" &&
	eq 'aten::mm' "$(row gemm_kernel cpu_op)"
}
check 'a prefix match in the stage beats an exact match in global' t_alias_stage_first

t_alias_group() {
	eq zz_memset_big "$(row 'Memset (Device)' entry.kernel)" &&
	eq 'python/sglang/big.py:2 g' "$(row 'Memset (Device)' location)"
}
check 'memset alias group: the heavier candidate wins' t_alias_group

t_global() {
	eq 'python/sglang/e.py:3 h' "$(row exact_global location)" &&
	eq - "$(row exact_global cpu_op)"
}
check 'the global payload is tried after the stage aliases' t_global

t_local() {
	eq unknown_kernel "$(row unknown_kernel entry.kernel)" &&
	eq unresolved "$(row unknown_kernel location)"
}
check 'no mapping entry: the formal payload of the trace' t_local

t_echo() {
	eq 2 "$(grep -c '"type":"input"' "$T/look.out")" &&
	head -n 1 "$KF/lookup-map.jsonl" >"$T/want" &&
	head -n 1 "$T/look.out" | same "$T/want" -
}
check 'the mapping input record is echoed first' t_echo

t_empty_key() {
	printf '%s\n' '{"type":"site","scope":"mapping_global","kernel":"","category":"other","best_location":"python/sglang/empty.py:1 e","sites":[]}' \
	    '{"type":"site","scope":"mapping_global","kernel":"zz","category":"other","best_location":"python/sglang/zz.py:1 z","sites":[]}' >"$T/map" &&
	printf '%s\n' '{"type":"trace","v":1,"t":0,"path":"/d/decode/a.json","stage":"decode"}' \
	    '{"type":"kernel","t":0,"name":"abc","ts":0,"dur":1,"sel":true}' \
	    '{"type":"stats","t":0}' >"$T/in" &&
	km --mapping "$T/map" <"$T/in" >"$T/out" &&
	eq abc "$(jq -r 'select(.type=="kernel_row")|.entry.kernel' "$T/out")"
}
check 'an empty best key is no match, the ladder goes on' t_empty_key

t_long_prefix() {
	a=voidcutlassdevicekernelflashattnfwdsm90aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa &&
	printf '{"type":"site","scope":"mapping_global","kernel":"%s_x1","category":"gemm","best_location":"python/sglang/long.py:1 l","sites":[]}\n' "$a" >"$T/map" &&
	printf '%s\n' '{"type":"trace","v":1,"t":0,"path":"/d/decode/a.json","stage":"decode"}' \
	    "{\"type\":\"kernel\",\"t\":0,\"name\":\"${a}_y2\",\"ts\":0,\"dur\":1,\"sel\":true}" \
	    '{"type":"stats","t":0}' >"$T/in" &&
	km --mapping "$T/map" <"$T/in" >"$T/out" &&
	eq 'python/sglang/long.py:1 l' "$(jq -r 'select(.type=="kernel_row")|.location' "$T/out")"
}
check 'long names match on a common compact prefix' t_long_prefix

done_testing
