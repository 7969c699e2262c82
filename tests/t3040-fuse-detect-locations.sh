#!/bin/sh
# fuse-detect: the "Current kernel Python location" cell (fuse-detect.md
# §7.2, Appendix A.2, edge cases 19-21, 36, 38).
. "$(dirname "$0")/lib.sh"
. "$FIX/fuse-detect/rows.sh"

SG='{"model_path":"m","tp_size":1}'
CAT='{"pattern":"P","active_keywords":["hit_"]}'

# locs ROW_LINES...: the location cell of pattern P over rows named hit_*.
locs() {
	printf '%s\n' "$CAT" >"$T/cat"
	{ inp sglang "$SG"; printf '%s\n' "$@"; } | fd -p "$T/cat" >"$T/out" &&
	fuse_rows "$T/out" .current_locations
}

t_format() {
	eq 'forward_cuda @ python/sglang/srt/layers/layernorm.py:120' \
	    "$(locs "$(srow 0 d hit_a 5 10 'python/sglang/srt/layers/layernorm.py:120 forward_cuda')")" &&
	eq 'fn name @ a:b:12x c:34' "$(locs "$(srow 0 d hit_a 5 10 'a:b:12x c:34 fn name')")" &&
	eq 'no_line_here' "$(locs "$(srow 0 d hit_a 5 10 'no_line_here')")" &&
	eq ':12 f' "$(locs "$(srow 0 d hit_a 5 10 ':12 f')")" &&
	eq "$(printf 'f\302\240g @ a.py:7')" \
	    "$(locs "$(srow 0 d hit_a 5 10 "$(printf 'a.py:7\302\240\302\240f\302\240g')")")" &&
	eq 'f g @ a.py:7' "$(locs "$(srow 0 d hit_a 5 10 "$(printf 'a.py:7\302\240\302\240f  g')")")" &&
	eq 'f g @ a.py:7' "$(locs "$(srow 0 d hit_a 5 10 'a.py:7   f  g')")"
}
check 'FUNC @ PATH:LINE with the lazy path group (edge case 20)' t_format

t_unicode() {
	# \d and \s are Unicode: Arabic-Indic digits, NO-BREAK SPACE (edge case 38).
	eq "$(printf 'fn @ a.py:\331\241\331\242')" \
	    "$(locs "$(srow 0 d hit_a 5 10 "$(printf 'a.py:\331\241\331\242 fn')")")" &&
	eq 'fn @ a.py:12' "$(locs "$(srow 0 d hit_a 5 10 "$(printf 'a.py:12\302\240fn')")")" &&
	eq "$(printf 'a.py:\302\262 fn')" \
	    "$(locs "$(srow 0 d hit_a 5 10 "$(printf 'a.py:\302\262 fn')")")"
}
check 'Unicode digits and spaces in the location regex' t_unicode

t_caps() {
	# Per row: 4 distinct values before formatting, so D (the 5th) is
	# lost even though A and A2 format alike; overall: 4 after formatting.
	e=$(ent hit_a "$(site 'a.py:1 f')" "$(site "$(printf 'a.py:1\tf')")" \
	    "$(site 'b.py:2 g')" "$(site 'c.py:3 h')" "$(site 'd.py:4 i')")
	eq 'f @ a.py:1<br>g @ b.py:2<br>h @ c.py:3<br>j @ e.py:5' \
	    "$(locs "$(row 0 d hit_a 5 10 x - "$e")" "$(srow 0 d hit_b 4 10 'e.py:5 j')" \
	        "$(srow 0 d hit_c 3 10 'f.py:6 k')")"
}
check 'two caps of 4: per row before formatting, overall after' t_caps

t_dedup() {
	eq 'f @ a.py:1<br>g @ b.py:2' \
	    "$(locs "$(srow 0 d hit_a 5 10 'a.py:1 f')" "$(srow 0 d hit_b 4 10 'a.py:1 f')" \
	        "$(srow 0 d hit_c 3 10 'b.py:2 g')")"
}
check 'the same location from several rows appears once' t_dedup

t_below_bar_rows() {
	# Rows under 1% are missing from the evidence but give locations (edge
	# case 19); the corrected evidence lists them (t3070).
	FD_MODE="--compat reference"
	printf '%s\n' "$CAT" >"$T/cat" &&
	{ inp sglang "$SG"; srow 0 d hit_big 500 1000 'a.py:1 f'; srow 0 d hit_tiny 1 1000 'b.py:2 g'; } |
	    fd -p "$T/cat" >"$T/out" &&
	eq 'hit_big (50.0%)|f @ a.py:1<br>g @ b.py:2' "$(fuse_rows "$T/out" '"\(.evidence)|\(.current_locations)"')"
}
check 'locations come from all related rows, evidence only from 1% rows' t_below_bar_rows

t_all_sites() {
	# All sites of the entry, not only the two rendered into row.location.
	e=$(ent hit_a "$(site 'python/sglang/a.py:1 f')" "$(site 'python/sglang/b.py:2 g')" \
	    "$(site 'python/sglang/c.py:3 h')")
	eq 'f @ python/sglang/a.py:1<br>g @ python/sglang/b.py:2<br>h @ python/sglang/c.py:3' \
	    "$(locs "$(row 0 d hit_a 5 10 'python/sglang/a.py:1 f<br>python/sglang/b.py:2 g' - "$e")")"
}
check 'every site of the entry contributes' t_all_sites

t_stored_display() {
	# The stored display_location is never read (edge case 36); A.2 keeps a
	# preferred location over the stack's best frame.
	s=$(site 'python/sglang/srt/layers/layernorm.py:120 forward_cuda' \
	    'python/sglang/srt/models/qwen3.py:300 forward -> python/sglang/srt/model_executor/model_runner.py:3194 _forward_raw')
	s=$(printf '%s' "$s" | jq -c '.display_location="python/sglang/srt/model_executor/model_runner.py:3194 _forward_raw"')
	eq 'forward_cuda @ python/sglang/srt/layers/layernorm.py:120' \
	    "$(locs "$(row 0 d hit_a 5 10 x - "$(ent hit_a "$s")")")"
}
check 'the stored display_location is ignored' t_stored_display

t_stack() {
	# A low-signal or non-framework location gives way to the stack's
	# preferred frame; whitespace-only locations vanish unless the stack helps.
	s1=$(site 'torch/nn/modules/module.py:1750 _call_impl' \
	    'python/sglang/srt/layers/linear.py:88 forward -> torch/nn/modules/module.py:1750 _call_impl')
	s2=$(site '   ')
	s3=$(site '  ' 'vllm/model_executor/layers/x.py:5 fwd')
	eq 'forward @ python/sglang/srt/layers/linear.py:88<br>fwd @ vllm/model_executor/layers/x.py:5' \
	    "$(locs "$(row 0 d hit_a 5 10 x - "$(ent hit_a "$s1" "$s2" "$s3")")")"
}
check 'display locations come from the stack when the location is weak' t_stack

t_unresolved() {
	# A site whose location is "unresolved" text shows it; an empty one
	# is skipped and the row falls back to its location cell (edge case 21).
	eq 'unresolved' "$(locs "$(row 0 d hit_a 5 10 x - "$(ent hit_a "$(site unresolved)")")")" &&
	eq 'f @ x.py:1<br>g (site share 60%) @ y.py:2' \
	    "$(locs "$(row 0 d hit_a 5 10 'x.py:1 f<br> y.py:2 g (site share 60%)' - "$(ent hit_a "$(site '')")")")" &&
	eq 'f @ x.py:1' "$(locs "$(row 0 d hit_a 5 10 'x.py:1 f' -)")" &&
	eq '-' "$(locs "$(row 0 d hit_a 5 10 unresolved -)")" &&
	eq '-' "$(locs "$(row 0 d hit_a 5 10 '' -)")"
}
check 'unresolved sites, and the row-location fallback' t_unresolved

done_testing
