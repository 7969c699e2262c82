#!/bin/sh
# fuse-detect on a stage of 30,000 distinct kernel names (issue 21: 1.2 GB
# for a million).  Rows that hit no keyword are not held; the table is
# what holding them all gives: the related rows, their time and share,
# the evidence and the locations, recomputed here with jq.
. "$(dirname "$0")/lib.sh"
. "$FIX/fuse-detect/rows.sh"

SG='{"model_path":"m","tp_size":1}'

t_distinct() {
	# 30,000 rows of 1..100 us (the 30 rmsnorm kernels 20 ms each), written as kernel-map writes them (rows.sh's
	# row and site, in one awk); every 1000th is an rmsnorm kernel
	{
		inp sglang "$SG"
		trc 0
		awk 'BEGIN {
			for (i = 0; i < 30000; i++) tot += (i % 1000 == 7) ? 20000 : i % 100 + 1
			loc = "python/sglang/srt/layers/layernorm.py:42 forward"
			for (i = 0; i < 30000; i++) {
				n = (i % 1000 == 7) ? "rmsnorm_kernel_" i : "distinct_kernel_" i
				u = (i % 1000 == 7) ? 20000 : i % 100 + 1
				printf "{\"type\":\"kernel_row\",\"t\":0,\"stage\":\"decode\",\"kernel\":\"%s\",\"category\":\"other\",\"total_us\":%d,\"launches\":1,\"share_pct\":%.17g,\"stage_total_us\":%d,\"location\":\"%s\",\"cpu_op\":\"aten::mm\",\"shown\":true,\"entry\":{\"kernel\":\"%s\",\"category\":\"other\",\"best_location\":\"%s\",\"sites\":[{\"location\":\"%s\",\"display_location\":\"%s\",\"launches\":1,\"total_us\":%d,\"share_pct_within_kernel\":100,\"top_cpu_op\":null,\"stack\":null}]}}\n", n, u, 100 * u / tot, tot, loc, n, loc, loc, loc, u
			}
		}'
	} >"$T/in"
	printf '%s\n' '{"pattern":"norm","active_keywords":["rmsnorm"],"candidate_path":["python/sglang/srt/layers/layernorm.py"],"priority":10}' >"$T/cat"
	"$FUSE_DETECT" -q -p "$T/cat" <"$T/in" >"$T/out"
	jq -c 'select(.type == "fuse_row") | [.pattern, .related_us, .share_pct, .current_locations]' \
	    "$T/out" >"$T/got"
	jq -s -c '[.[] | select(.type == "kernel_row")] as $r |
	    ($r | map(select(.kernel | startswith("rmsnorm"))) | map(.total_us) | add) as $rel |
	    ["norm", $rel, (100 * $rel / $r[0].stage_total_us * 1000 | round / 1000),
	     "forward @ python/sglang/srt/layers/layernorm.py:42"]' "$T/in" >"$T/want"
	jq -c '.[2] |= (. * 1000 | round / 1000)' "$T/got" >"$T/got2"
	same "$T/want" "$T/got2"
	# every kernel_row passes through unchanged
	eq 30000 "$(grep -c '"type":"kernel_row"' "$T/out")" "kernel rows passed"
	grep '"type":"kernel_row"' "$T/in" >"$T/rin"
	grep '"type":"kernel_row"' "$T/out" >"$T/rout"
	same "$T/rin" "$T/rout"
}
check "30,000 distinct kernels, 30 of them matched: the table of the related rows" t_distinct

done_testing
