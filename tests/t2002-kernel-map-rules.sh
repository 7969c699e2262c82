#!/bin/sh
# kernel-map: kernel names (canonicalize_name) and categories (classify_kernel).
. "$(dirname "$0")/lib.sh"

km() { "$BIN/kernel-map" "$@"; }
KF=$FIX/kernel-map

t_table() {
	km --compat reference <"$KF/rules.jsonl" >"$T/out" &&
	jq -r 'select(.type=="kernel_row")|[.kernel,.category,.launches]|@tsv' "$T/out" >"$T/got" &&
	same "$KF/rules.expected" "$T/got"
}
check 'canonical names and categories of the worked examples (--compat reference)' t_table

# The corrected categories (data/kernel-categories.jsonl, docs/deviations.md):
# the same names where the reference's answer is wrong.
t_table_corrected() {
	km <"$KF/rules.jsonl" >"$T/out" &&
	jq -r 'select(.type=="kernel_row")|[.kernel,.category]|@tsv' "$T/out" >"$T/got" &&
	cut -f1,2 "$KF/rules.expected" >"$T/ref" &&
	diff "$T/ref" "$T/got" | sed -n 's/^> //p' >"$T/changed" &&
	# a parameter's type (gemm_args) does not make a GEMM, a fill is a
	# copy, topk_softmax is MoE routing, and "dispatch" alone is no collective
	printf '%s\n' \
	    'void mixed	other' \
	    'foo0x1bar	other' \
	    'Memcpy DtoD (Device -> Device)	memcpy' \
	    'Memset (Device)	memset' \
	    'void cutlass::device_kernel<flash::FlashAttnFwdSm90<x>>	attention' \
	    'void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, x>	copy' \
	    'triton_poi_fused_copy_0	elementwise' \
	    'topk_softmax	moe' \
	    'dispatch_kernel	other' \
	    'store_kvcache	kv_cache' | same - "$T/changed"
}
check 'corrected categories and names: only those the reference gets wrong change' t_table_corrected

row() {	# row KERNEL FIELD: the field of that kernel's row
	jq -r --arg k "$1" "select(.type==\"kernel_row\" and .kernel==\$k)|.$2" "$T/out"
}

t_canon_quirks() {
	km --compat reference <"$KF/rules.jsonl" >"$T/out" &&
	eq 1 "$(row 'void f(a) ' launches)" "trailing space kept" &&
	eq 1 "$(row 'void a(b))' launches)" "unbalanced left alone" &&
	eq 1 "$(row 'foo0xADDRr' launches)" "hex inside identifiers" &&
	eq 1 "$(row 'void x' launches)" "whitespace collapsed, args cut"
}
check 'canonicalize (--compat reference): trailing space, unbalanced parens, 0x runs' t_canon_quirks

# Corrected (docs/deviations.md C12): only a 0x run that starts a word is an
# address, so Tensile tile shapes stay apart instead of merging into one row.
t_canon_tiles() {
	{
		head -n 2 "$KF/rules.jsonl"
		printf '{"type":"kernel","t":0,"name":"%s","ts":%d,"dur":10,"stage":"decode","sel":true}\n' \
		    Cijk_Alik_Bljk_MT160x256x64_MI16x16x1 100 \
		    Cijk_Alik_Bljk_MT160x128x64_MI16x16x1 200 \
		    'void k<(void*)0x7f00ab>(int)' 300 \
		    'kern_0x1f' 400
		tail -n 1 "$KF/rules.jsonl"
	} >"$T/tiles.jsonl"
	km <"$T/tiles.jsonl" >"$T/out"
	eq 1 "$(row Cijk_Alik_Bljk_MT160x256x64_MI16x16x1 launches)" "first tile shape"
	eq 1 "$(row Cijk_Alik_Bljk_MT160x128x64_MI16x16x1 launches)" "second tile shape"
	eq 1 "$(row 'void k<(void*)0xADDR>' launches)" "an address after a parenthesis"
	eq 1 "$(row 'kern_0x1f' launches)" "after an underscore: part of the word"
	km --compat reference <"$T/tiles.jsonl" >"$T/out"
	eq 2 "$(row Cijk_Alik_Bljk_MT160xADDRx64_MI16x16x1 launches)" "the reference merges them"
	eq 1 "$(row 'kern_0xADDR' launches)" "and replaces inside words"
}
check 'canonicalize (corrected): tile shapes stay apart, addresses go' t_canon_tiles

t_category_raw() {
	km --compat reference <"$KF/rules.jsonl" >"$T/out" &&
	eq gemm "$(row 'void cutlass::device_kernel<flash::FlashAttnFwdSm90<x>>' category)" &&
	eq memory "$(row 'void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, x>' category)" &&
	eq softmax "$(row topk_softmax category)" &&
	eq communication "$(row dispatch_kernel category)"
}
check 'classify: first rule wins, weak keywords yield to compute hints' t_category_raw

t_last_wins() {
	km --compat reference <"$KF/rules.jsonl" >"$T/out" &&
	eq gemm "$(row 'void mixed' category)" "last raw name has gemm args" &&
	eq other "$(row 'void mixed2' category)" "last raw name has plain args"
}
check 'category of a canonical name is the last kernel'"'"'s' t_last_wins

t_stage_label_paths() {
	printf '%s\n' '{"type":"trace","v":1,"t":0,"path":"/r/x_prefill_decode/t.json"}' \
	    '{"type":"kernel","t":0,"name":"k","ts":0,"dur":1,"sel":true}' \
	    '{"type":"stats","t":0}' >"$T/in" &&
	km <"$T/in" >"$T/out" &&
	eq extend "$(jq -r 'select(.type=="kernel_row")|.stage' "$T/out")"
}
check 'a kernel without stage takes the path stage of its trace' t_stage_label_paths

done_testing
