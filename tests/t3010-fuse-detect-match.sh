#!/bin/sh
# fuse-detect: keyword matching, direct and split matches, thresholds and
# the cells of a row (fuse-detect.md §4, §6, §7.1, §7.3, §7.4).
. "$(dirname "$0")/lib.sh"
. "$FIX/fuse-detect/rows.sh"
# The reference's substring matching and cells, as --compat reference keeps
# them; the corrected matching (whole words, categories) is t3070's.
FD_MODE="--compat reference"

SG='{"model_path":"m","tp_size":1}'

# run CATALOG_LINES STREAM_FILE: fuse rows of the stream under that catalog.
run() {
	printf '%s\n' "$1" >"$T/cat"
	fd -p "$T/cat" <"$2" >"$T/out"
}

t_worked() {
	fd <"$FIX/fuse-detect/qwen3-decode.jsonl" >"$T/out" &&
	fuse_rows "$T/out" >"$T/got" &&
	same "$FIX/fuse-detect/qwen3-decode.expect" "$T/got"
}
check 'worked example: QK RoPE reshape + KV cache write (split) and residual add + RMSNorm (direct)' t_worked

t_worked_cells() {
	fd <"$FIX/fuse-detect/qwen3-decode.jsonl" >"$T/out" &&
	eq 'Fused QK RoPE reshape + KV cache write,Fused residual add + RMSNorm' \
	    "$(fuse_rows "$T/out" .pattern | paste -sd, -)" &&
	eq 'mainline split|Confirmed|1500|15|40' \
	    "$(fuse_rows "$T/out" '"\(.origin)|\(.confidence)|\(.related_us)|\(.share_pct)|\(.priority)"' | head -1)" &&
	eq 'python/sglang/srt/layers/layernorm.py<br>python/sglang/srt/layers/quantization/modelslim/modelslim.py' \
	    "$(fuse_rows "$T/out" .candidate_path | sed -n 2p)"
}
check 'worked example cells: order, status, candidate path joined with <br>' t_worked_cells

t_compact() {
	{ inp sglang "$SG"; srow 0 decode store_kvcache 500 1000 'a.py:1 f'; } >"$T/in" &&
	run "$(pat '"pattern":"P","active_keywords":["KV-Cache"]')" "$T/in" &&
	eq 'P' "$(fuse_rows "$T/out" .pattern)"
}
check 'compact match: KV-Cache matches store_kvcache' t_compact

t_straddle() {
	{ inp sglang "$SG"; row 0 decode xfoo 500 1000 'location' '-'; } >"$T/in" &&
	run "$(pat '"pattern":"P","active_keywords":["foo loc"]')" "$T/in" &&
	eq 'P' "$(fuse_rows "$T/out" .pattern)" &&
	run "$(pat '"pattern":"P","active_keywords":["onbr"]')" "$T/in" &&
	eq '' "$(fuse_rows "$T/out" .pattern)" &&
	{ inp sglang "$SG"; row 0 decode k 500 1000 'a<br>b (site share 60%)' '-'; } >"$T/in" &&
	run "$(pat '"pattern":"P","active_keywords":["abrb","siteshare60"]')" "$T/in" &&
	eq 'P' "$(fuse_rows "$T/out" .pattern)"
}
check 'needles straddle name, location and cpu_op; <br> and site share count' t_straddle

t_not_searched() {
	{ inp sglang "$SG"
	  row 0 decode k 500 1000 'a.py:1 f' '-' \
	      "$(ent k "$(site 'a.py:1 f' 'secretstack.py:1 g')" "$(site 'hidden.py:2 h')")"
	} >"$T/in" &&
	run "$(pat '"pattern":"P","active_keywords":["secretstack","hidden","other"]')" "$T/in" &&
	eq '' "$(fuse_rows "$T/out" .pattern)"
}
check 'category, stack and unrendered sites are not searched' t_not_searched

t_short() {
	# One unmapped row satisfies both groups ("v" is in "unresolved"): a
	# split match from a single kernel, counted once (edge cases 4, 6).
	{ inp sglang "$SG"; row 0 decode gemm_kernel 300 1000 unresolved -; } >"$T/in" &&
	run "$(pat '"pattern":"P","split_groups":[["gemm"],["v"]],"min_share":0.1,"likely_share":50')" "$T/in" &&
	eq 'P|Candidate|300|mainline split|gemm_kernel (30.0%)|-' \
	    "$(fuse_rows "$T/out" '"\(.pattern)|\(.confidence)|\(.related_us)|\(.origin)|\(.evidence)|\(.current_locations)"')"
}
check 'short needles match inside words; one row can fill every group' t_short

t_direct_split() {
	{ inp sglang "$SG"
	  srow 0 decode act_kernel 100 1000 'a.py:1 f'
	  srow 0 decode g1_kernel 50 1000 'b.py:2 g'
	  srow 0 decode g2_kernel 30 1000 'c.py:3 h'
	} >"$T/in" &&
	run "$(pat '"pattern":"D","origin":"upstream","active_keywords":["act_kernel"],"split_groups":[["g1_"],["zzz"]],"min_share":99')
$(pat '"pattern":"S","origin":"inflight","split_groups":[["g1_"],["g2_"]],"min_share":0.1,"likely_share":50')" "$T/in" &&
	fuse_rows "$T/out" '"\(.pattern) \(.origin) \(.confidence) \(.related_us)"' >"$T/got" &&
	printf 'D upstream direct Confirmed 150\n' >"$T/want" &&
	same "$T/want" "$T/got"
}
check 'direct match ignores min_share and keeps partial groups (edge case 7)' t_direct_split

t_pending() {
	{ inp sglang "$SG"; srow 0 decode g1_kernel 50 1000 'b.py:2 g'; srow 0 decode g2_kernel 30 1000 'c.py:3 h'; } >"$T/in" &&
	run "$(pat '"pattern":"S","origin":"inflight","split_groups":[["g1_"],["g2_"]],"min_share":0.1,"likely_share":50,"rationale":"H."')" "$T/in" &&
	eq 'S pending split Candidate 80' "$(fuse_rows "$T/out" '"\(.pattern) \(.origin) \(.confidence) \(.related_us)"')" &&
	eq 'Matches an open upstream path (8.0% related GPU time). H.' "$(fuse_rows "$T/out" .rationale)"
}
check 'inflight origin: pending status and open-upstream rationale' t_pending

t_min_share() {
	# 150 of 10000 is exactly 1.5 %: equality passes, 149 does not (edge case 10).
	{ inp sglang "$SG"; srow 0 decode g1_a 100 10000 'a.py:1 f'; srow 0 decode g2_b 50 10000 'b.py:1 f'; } >"$T/in" &&
	run "$(pat '"pattern":"S","split_groups":[["g1_"],["g2_"]],"min_share":1.5,"likely_share":9')" "$T/in" &&
	eq 'S' "$(fuse_rows "$T/out" .pattern)" &&
	{ inp sglang "$SG"; srow 0 decode g1_a 100 10000 'a.py:1 f'; srow 0 decode g2_b 49 10000 'b.py:1 f'; } >"$T/in" &&
	run "$(pat '"pattern":"S","split_groups":[["g1_"],["g2_"]],"min_share":1.5,"likely_share":9')" "$T/in" &&
	eq '' "$(fuse_rows "$T/out" .pattern)"
}
check 'min_share rejects strictly below, equality passes' t_min_share

t_likely() {
	{ inp sglang "$SG"; srow 0 decode g1_a 150 10000 'a.py:1 f'; srow 0 decode g2_b 50 10000 'b.py:1 f'; } >"$T/in" &&
	run "$(pat '"pattern":"S","split_groups":[["g1_"],["g2_"]],"min_share":0.1,"likely_share":2.0')" "$T/in" &&
	eq 'Confirmed' "$(fuse_rows "$T/out" .confidence)" &&
	{ inp sglang "$SG"; srow 0 decode g1_a 150 10000 'a.py:1 f'; srow 0 decode g2_b 49 10000 'b.py:1 f'; } >"$T/in" &&
	run "$(pat '"pattern":"S","split_groups":[["g1_"],["g2_"]],"min_share":0.1,"likely_share":2.0')" "$T/in" &&
	eq 'Candidate' "$(fuse_rows "$T/out" .confidence)"
}
check 'likely_share promotes at equality' t_likely

t_render_bar() {
	# 97 of 10000 would print as 1.0% but is below the bar (edge case 9).
	{ inp sglang "$SG"; srow 0 decode act_a 97 10000 'a.py:1 f'; } >"$T/in" &&
	run "$(pat '"pattern":"P","active_keywords":["act_a"]')" "$T/in" &&
	eq '' "$(fuse_rows "$T/out" .pattern)" &&
	{ inp sglang "$SG"; srow 0 decode act_a 100 10000 'a.py:1 f'; } >"$T/in" &&
	run "$(pat '"pattern":"P","active_keywords":["act_a"]')" "$T/in" &&
	eq '1' "$(fuse_rows "$T/out" .share_pct)"
}
check '1.0% render bar on the unrounded share' t_render_bar

t_evidence() {
	# Union order (active rows, then group 1, group 2), rows below 1%
	# skipped, at most 3, full names, %.1f with ties to even.
	{ inp sglang "$SG"
	  srow 0 decode big_g1 4000 10000 'a.py:1 f'
	  srow 0 decode mid_act 300 10000 'b.py:1 f'
	  srow 0 decode small_g2 125 10000 'c.py:1 f'
	  srow 0 decode tiny_act 50 10000 'd.py:1 f'
	  srow 0 decode other_g2 110 10000 'e.py:1 f'
	} >"$T/in" &&
	run "$(pat '"pattern":"P","active_keywords":["_act"],"split_groups":[["_g1"],["_g2"]]')" "$T/in" &&
	eq 'mid_act (3.0%)<br>big_g1 (40.0%)<br>small_g2 (1.2%)' "$(fuse_rows "$T/out" .evidence)" &&
	eq '4585' "$(fuse_rows "$T/out" .related_us)"
}
check 'evidence: union order, 1% floor, cap 3, %.1f ties to even' t_evidence

t_evidence_none() {
	{ inp sglang "$SG"; srow 0 decode a_act 60 10000 'a.py:1 f'; srow 0 decode b_act 60 10000 'b.py:1 g'; } >"$T/in" &&
	run "$(pat '"pattern":"P","active_keywords":["_act"]')" "$T/in" &&
	eq '-|1.2' "$(fuse_rows "$T/out" '"\(.evidence)|\(.share_pct)"')"
}
check 'evidence is - when no single kernel reaches 1% (edge case 18)' t_evidence_none

t_zero() {
	{ inp sglang "$SG"; srow 0 decode act_a 0 10000 'a.py:1 f'; srow 0 decode other 10000 10000 'a.py:1 f'; } >"$T/in" &&
	run "$(pat '"pattern":"P","active_keywords":["act_a"]')" "$T/in" &&
	eq '' "$(fuse_rows "$T/out" .pattern)" &&
	{ inp sglang "$SG"; srow 0 decode act_a 0 0 'a.py:1 f'; } >"$T/in" &&
	run "$(pat '"pattern":"P","active_keywords":["act_a"]')" "$T/in" &&
	eq '' "$(fuse_rows "$T/out" .pattern)"
}
check 'no row when related time or the stage total is zero' t_zero

t_rationale() {
	{ inp sglang "$SG"; srow 0 decode act_a 123 1000 'a.py:1 f'; srow 0 decode g1_b 200 1000 'b.py:1 f'; srow 0 decode g2_c 300 1000 'c.py:1 f'; } >"$T/in" &&
	run "$(pat '"pattern":"M","active_keywords":["act_a"],"rationale":"One."')
$(pat '"pattern":"N","split_groups":[["g1_"],["g2_"]],"rationale_hint":"Two."')
$(pat '"pattern":"U","origin":"upstream","split_groups":[["g2_"]]')" "$T/in" &&
	fuse_rows "$T/out" .rationale >"$T/got" &&
	cat >"$T/want" <<-'EOT' &&
	Split kernels in this family take 50.0% of GPU time. This tree already has a matching path. Two.
	`M` is present in this trace (12.3% related GPU time). One.
	EOT
	same "$T/want" "$T/got"
}
check 'rationale templates (mainline split, mainline direct; span sorts first)' t_rationale

t_upstream_rationale() {
	{ inp sglang "$SG"; srow 0 decode act_a 123 1000 'a.py:1 f'; } >"$T/in" &&
	run "$(pat '"pattern":"U","origin":"upstream","active_keywords":["act_a"],"rationale":"Three."')" "$T/in" &&
	eq 'Matches an upstream path (12.3% related GPU time). Three.' "$(fuse_rows "$T/out" .rationale)" &&
	eq 'upstream direct' "$(fuse_rows "$T/out" .origin)" &&
	eq 'in use' "$(fuse_rows "$T/out" .status)"
}
check 'rationale template (upstream, direct or split alike)' t_upstream_rationale

t_unicode_case() {
	# A KELVIN SIGN in a kernel name lowers to k before compacting (§4).
	{ inp sglang "$SG"; srow 0 decode "FusedAddRMSNorm$(printf '\342\204\252')ernel" 500 1000 'a.py:1 f'; } >"$T/in" &&
	run "$(pat '"pattern":"P","active_keywords":["fusedaddrmsnormkernel"]')" "$T/in" &&
	eq 'P' "$(fuse_rows "$T/out" .pattern)" &&
	run "$(pat '"pattern":"P","active_keywords":["FusedAddRMSNorm\u212aernel2"]')" "$T/in" &&
	eq '' "$(fuse_rows "$T/out" .pattern)"
}
check 'KELVIN SIGN: lowered to k in the row, dropped from a needle' t_unicode_case

t_unicode_fold() {
	# Deviation: other non-ASCII letters keep their case, so a needle made
	# only of them ("Ä", compact form empty) misses "ä", which the
	# reference's str.lower() would find.  Needles with any ASCII letter
	# or digit are unaffected: compact() drops non-ASCII on both sides.
	{ inp sglang "$SG"; srow 0 decode "$(printf '\303\244rger_kernel')" 500 1000 'a.py:1 f'; } >"$T/in" &&
	run "$(pat '"pattern":"P","active_keywords":["\u00c4"]')" "$T/in" &&
	eq '' "$(fuse_rows "$T/out" .pattern)" &&
	run "$(pat '"pattern":"P","active_keywords":["\u00e4"]')" "$T/in" &&
	eq 'P' "$(fuse_rows "$T/out" .pattern)" &&
	run "$(pat '"pattern":"P","active_keywords":["\u00c4RGER_KERNEL"]')" "$T/in" &&
	eq 'P' "$(fuse_rows "$T/out" .pattern)"
}
check 'non-ASCII case folding is not done (documented deviation)' t_unicode_fold

t_null_cell() {
	row 0 decode act_a 500 1000 x - >"$T/r" &&
	{ inp sglang "$SG"; jq -c '.location=null' "$T/r"; } >"$T/in" &&
	run "$(pat '"pattern":"P","active_keywords":["act_a"]')" "$T/in" 2>"$T/err" &&
	eq 'P' "$(fuse_rows "$T/out" .pattern)" &&
	# an optional member given as null reads as its default (triage-records(5))
	{ inp sglang "$SG"; jq -c '.location="unresolved"' "$T/r"; } >"$T/in2" &&
	run "$(pat '"pattern":"P","active_keywords":["act_a"]')" "$T/in2" &&
	fuse_rows "$T/out" '"\(.pattern)|\(.current_locations)"' >"$T/want" &&
	run "$(pat '"pattern":"P","active_keywords":["act_a"]')" "$T/in" &&
	fuse_rows "$T/out" '"\(.pattern)|\(.current_locations)"' | same "$T/want" -
}
check 'null location reads as its default, unresolved, instead of crashing (edge case 37)' t_null_cell

done_testing
