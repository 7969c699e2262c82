#!/bin/sh
# fuse-detect: ranking, subsumes, row consumption and the render bar after
# selection (fuse-detect.md §8 steps 5-7, edge cases 8, 11-13).
. "$(dirname "$0")/lib.sh"
. "$FIX/fuse-detect/rows.sh"

SG='{"model_path":"m","tp_size":1}'

run() {
	printf '%s\n' "$1" >"$T/cat"
	fd -p "$T/cat" --explain=records <"$2" >"$T/out"
}
verdicts() {	# pattern=verdict, catalog order
	jq -r 'select(.type=="fuse_explain") | "\(.pattern)=\(.verdict)"' "$T/out" | paste -sd' ' -
}

stream3() {
	inp sglang "$SG"
	srow 0 decode r1_kernel 300 1000 'a.py:1 f'
	srow 0 decode r2_kernel 200 1000 'b.py:2 g'
	srow 0 decode r3_kernel 100 1000 'c.py:3 h'
}

t_subsumes() {
	# B's rows are disjoint from A's, yet A subsumes it (edge case 13).
	stream3 >"$T/in" &&
	run "$(pat '"pattern":"B","active_keywords":["r2_"]')
$(pat '"pattern":"A","priority":10,"active_keywords":["r1_"],"subsumes":["B"]')" "$T/in" &&
	eq 'A' "$(fuse_rows "$T/out" .pattern | paste -sd' ' -)" &&
	eq 'B=blocked_by_subsumes A=accepted' "$(verdicts)"
}
check 'subsumes blocks by name even with disjoint rows' t_subsumes

t_subsumes_needs_accept() {
	# A subsumes B but loses its row to C first, so B stays free.
	stream3 >"$T/in" &&
	run "$(pat '"pattern":"C","priority":20,"active_keywords":["r1_"]')
$(pat '"pattern":"A","priority":10,"active_keywords":["r1_"],"subsumes":["B"]')
$(pat '"pattern":"B","active_keywords":["r2_"]')" "$T/in" &&
	eq 'C B' "$(fuse_rows "$T/out" .pattern | paste -sd' ' -)" &&
	eq 'C=accepted A=rows_consumed B=accepted' "$(verdicts)" &&
	has "$T/out" "row 'r1_kernel' already taken by 'C'"
}
check 'subsumes takes effect only once the subsuming pattern is accepted' t_subsumes_needs_accept

t_consume() {
	# D shares r2 with C: the whole of D goes, r3 included (edge case 12).
	stream3 >"$T/in" &&
	run "$(pat '"pattern":"C","priority":5,"active_keywords":["r1_","r2_"]')
$(pat '"pattern":"D","active_keywords":["r2_","r3_"]')
$(pat '"pattern":"E","active_keywords":["r3_"]')" "$T/in" &&
	eq 'C E' "$(fuse_rows "$T/out" .pattern | paste -sd' ' -)" &&
	eq 'C=accepted D=rows_consumed E=accepted' "$(verdicts)"
}
check 'row consumption is all or nothing' t_consume

t_ties() {
	# Equal (priority, span, rows, time): catalog order, not name order.
	stream3 >"$T/in" &&
	run "$(pat '"pattern":"Zed","active_keywords":["r1_"]')
$(pat '"pattern":"Alpha","active_keywords":["r2_"]')
$(pat '"pattern":"Mid","active_keywords":["r3_"]')" "$T/in" &&
	eq 'Zed Alpha Mid' "$(fuse_rows "$T/out" .pattern | paste -sd' ' -)"
}
check 'sort ties keep catalog order' t_ties

t_keys() {
	# Key order: priority, then span, then related rows, then time (the
	# reference's; corrected, a fusion in use ranks first: t3070).
	FD_MODE="--compat reference"
	stream3 >"$T/in" &&
	run "$(pat '"pattern":"Time","active_keywords":["r1_"]')
$(pat '"pattern":"Rows","active_keywords":["r2_","r3_"]')
$(pat '"pattern":"Span","split_groups":[["r3_"],["r3_"]],"min_share":0')
$(pat '"pattern":"Prio","priority":1,"active_keywords":["zzz"],"split_groups":[["r1_"]]')" "$T/in" &&
	eq 'Time=rows_consumed Rows=rows_consumed Span=accepted Prio=accepted' "$(verdicts)" &&
	eq 'Prio Span' "$(fuse_rows "$T/out" .pattern | paste -sd' ' -)"
}
check 'ranking: priority, span, related rows, related time' t_keys

t_keys2() {
	# Without priority or span differences, more rows beat more time.
	stream3 >"$T/in" &&
	run "$(pat '"pattern":"Time","active_keywords":["r1_"]')
$(pat '"pattern":"Rows","active_keywords":["r2_","r3_"]')" "$T/in" &&
	eq 'Rows Time' "$(fuse_rows "$T/out" .pattern | paste -sd' ' -)" &&
	run "$(pat '"pattern":"Less","active_keywords":["r3_"]')
$(pat '"pattern":"More","active_keywords":["r2_"]')" "$T/in" &&
	eq 'More Less' "$(fuse_rows "$T/out" .pattern | paste -sd' ' -)"
}
check 'ranking: more related rows, then more time, first' t_keys2

t_quirk8() {
	# A high-priority direct match on a 0.01% kernel is accepted, takes
	# that row and blocks what it subsumes, then falls under the render
	# bar: the visible split match and the subsumed pattern are gone.
	{ inp sglang "$SG"
	  srow 0 decode big_rope 3000 10000 'a.py:1 f'
	  srow 0 decode big_cache 2000 10000 'b.py:1 g'
	  srow 0 decode tiny_fused_rope_cache 1 10000 'c.py:1 h'
	} >"$T/in" &&
	run "$(pat '"pattern":"Tiny","priority":100,"active_keywords":["tiny_fused"],"subsumes":["Other"]')
$(pat '"pattern":"Split","split_groups":[["rope"],["cache"]],"min_share":0.1')
$(pat '"pattern":"Other","active_keywords":["big_cache"]')" "$T/in" &&
	eq '' "$(fuse_rows "$T/out" .pattern)" &&
	eq 'Tiny=below_render_bar Split=rows_consumed Other=blocked_by_subsumes' "$(verdicts)"
}
check 'active-match quirk: an invisible direct match suppresses visible ones (edge case 8)' t_quirk8

t_quirk8_registry() {
	# With the built-in catalog: a 0.01% CUTLASS scaled-MM kernel launched
	# under the silu_and_mul op is a direct match of the priority-90 PR
	# pattern; it takes that row, so the 5% activation-and-mul match that
	# shares it disappears, and the PR row itself is under the bar.
	{ inp sglang '{"model_path":"Qwen/Qwen3-8B","tp_size":1}'
	  row 0 decode 'void sgl_kernel::silu_and_mul_kernel<bf16>' 500 10000 \
	      'python/sglang/srt/layers/activation.py:83 forward_cuda' 'sgl_kernel::silu_and_mul'
	  row 0 decode 'cutlass_scaled_mm_sm90_kernel' 1 10000 \
	      'python/sglang/srt/layers/activation.py:83 forward_cuda' 'sgl_kernel::silu_and_mul'
	} >"$T/in" &&
	fd --explain=records <"$T/in" >"$T/out" &&
	eq '' "$(fuse_rows "$T/out" .pattern)" &&
	jq -r 'select(.type=="fuse_explain" and (.verdict|test("gated|no_keyword")|not)) | "\(.pattern)=\(.verdict)"' "$T/out" >"$T/got" &&
	printf '%s\n' 'Fused activation-and-mul (SwiGLU / GeGLU)=rows_consumed' \
	    'PR #22392 CUTLASS FP8 scaled MM replacing nvjet=below_render_bar' >"$T/want" &&
	same "$T/want" "$T/got" &&
	# Without the tiny kernel the activation row is there.
	head -n 2 "$T/in" | fd | jq -r 'select(.type=="fuse_row") | .pattern' >"$T/got" &&
	echo 'Fused activation-and-mul (SwiGLU / GeGLU)' >"$T/want" &&
	same "$T/want" "$T/got"
}
check 'active-match quirk with the built-in catalog' t_quirk8_registry

t_partial_consumed() {
	# the reference (edge case 7); corrected, a fusion in use is its fused kernels (t3070)
	FD_MODE="--compat reference"
	# With an active hit, rows of a partly matched group are related and
	# taken (edge case 7): the lower pattern on g1_kernel loses it.
	{ inp sglang "$SG"
	  srow 0 decode act_kernel 300 1000 'a.py:1 f'
	  srow 0 decode g1_kernel 200 1000 'b.py:1 g'
	} >"$T/in" &&
	run "$(pat '"pattern":"H","priority":1,"active_keywords":["act_kernel"],"split_groups":[["g1_"],["g2_"]]')
$(pat '"pattern":"I","active_keywords":["g1_kernel"]')" "$T/in" &&
	eq 'H|500|act_kernel (30.0%)<br>g1_kernel (20.0%)' "$(fuse_rows "$T/out" '"\(.pattern)|\(.related_us)|\(.evidence)"')" &&
	eq 'H=accepted I=rows_consumed' "$(verdicts)"
}
check 'partial split rows join a direct match and are consumed' t_partial_consumed

t_identity() {
	# Identity is (name, location, cpu_op): the same kernel name in two
	# rows with different locations is two rows.
	{ inp sglang "$SG"
	  row 0 decode same_kernel 300 1000 'a.py:1 f' -
	  row 0 decode same_kernel 200 1000 'b.py:1 g' -
	} >"$T/in" &&
	run "$(pat '"pattern":"A","active_keywords":["same_kernel"]')" "$T/in" &&
	eq '500' "$(fuse_rows "$T/out" .related_us)"
}
check 'row identity is the (name, location, cpu_op) triple' t_identity

done_testing
