#!/bin/sh
# kernel-map: kernel_row records (§5.9): order, 'all' skip, limit, shares.
. "$(dirname "$0")/lib.sh"

km() { "$BIN/kernel-map" "$@"; }
KF=$FIX/kernel-map

rows() {
	jq -r 'select(.type=="kernel_row")|[.t,.stage,.kernel,.total_us,.launches,.shown]|@tsv' "$T/out"
}

t_rows() {
	km --kernel-table-limit 2 <"$KF/rows.jsonl" >"$T/out" &&
	rows >"$T/got" &&
	printf '0\textend\te_first\t2\t1\ttrue\n0\tdecode\tb_kernel\t500\t2\ttrue\n0\tdecode\ta_kernel\t500\t1\ttrue\n0\tdecode\tc_small\t5\t1\tfalse\n1\tdecode\td_one\t30\t1\ttrue\n1\tdecode\td_two\t20\t1\ttrue\n1\tdecode\td_three\t10\t1\tfalse\n' >"$T/want" &&
	same "$T/want" "$T/got"
}
check 'stage order, ties in first-appearance order, limit before the share bar' t_rows

t_all_skip() {
	km <"$KF/rows.jsonl" >"$T/out" &&
	eq 0 "$(jq -s '[.[]|select(.type=="kernel_row" and .stage=="all")]|length' "$T/out")" &&
	eq 1 "$(jq -s '[.[]|select(.type=="site" and .scope=="formal_stage" and .stage=="all")]|length' "$T/out")"
}
check "the 'all' leftover under 1% of the trace makes no rows" t_all_skip

t_all_path_kept() {
	sed 's/"stage":"decode","sel"/"stage":"all","sel"/; s/"stage":"extend","sel"/"stage":"all","sel"/' "$KF/rows.jsonl" >"$T/in" &&
	km <"$T/in" >"$T/out" &&
	eq 5 "$(jq -s '[.[]|select(.type=="kernel_row" and .t==0 and .stage=="all")]|length' "$T/out")"
}
check "a whole-trace 'all' stage is kept" t_all_path_kept

t_shares() {
	km <"$KF/rows.jsonl" >"$T/out" &&
	eq 1005 "$(jq 'select(.type=="kernel_row" and .kernel=="a_kernel")|.stage_total_us' "$T/out")" &&
	eq 49.75124378109453 "$(jq 'select(.type=="kernel_row" and .kernel=="a_kernel")|.share_pct' "$T/out")" &&
	eq 100 "$(jq 'select(.type=="kernel_row" and .kernel=="e_first")|.share_pct' "$T/out")"
}
check 'share_pct is the unrounded percentage of the stage total' t_shares

t_share_bar() {
	printf '%s\n' '{"type":"trace","v":1,"t":0,"path":"/d/decode/a.json","stage":"decode"}' \
	    '{"type":"kernel","t":0,"name":"big","ts":0,"dur":98.00004,"sel":true}' \
	    '{"type":"kernel","t":0,"name":"one","ts":1,"dur":1,"sel":true}' \
	    '{"type":"kernel","t":0,"name":"under","ts":2,"dur":0.99996,"sel":true}' \
	    '{"type":"stats","t":0}' >"$T/in" &&
	km <"$T/in" >"$T/out" &&
	eq 1 "$(jq 'select(.type=="kernel_row" and .kernel=="one")|.share_pct' "$T/out")" &&
	eq 0.99996 "$(jq 'select(.type=="kernel_row" and .kernel=="under")|.share_pct' "$T/out")" &&
	eq 'true true false' "$(jq -r 'select(.type=="kernel_row")|.shown' "$T/out" | tr '\n' ' ' | sed 's/ $//')"
}
check 'the 1.0% bar compares the unrounded share' t_share_bar

t_duplicate_stage_rows() {
	km <"$KF/rows.jsonl" >"$T/out" &&
	eq 2 "$(jq -s '[.[]|select(.type=="kernel_row" and .stage=="decode")|.t]|unique|length' "$T/out")"
}
check 'rows of one stage from two traces stay separate' t_duplicate_stage_rows

t_duration_stats() {
	# per row, its launches' mean, min, max and nearest-rank p50/p90 (issue
	# 31): "many" runs 10 times in file order 5 1 3 2 4 10 6 7 8 9 us, so
	# mean 5.5, min 1, max 10, p50 the 5th smallest (5), p90 the 9th (9);
	# "two" runs 2 and 8 (p50 2, p90 8); "one" once
	{
		printf '{"type":"trace","v":1,"t":0,"path":"/s.json","stage":"all"}\n'
		printf '{"type":"gpu_pids","t":0,"selected":"0","time_us":{"0":1}}\n'
		ts=0
		for dur in 5 1 3 2 4 10 6 7 8 9; do
			ts=$((ts + 20))
			printf '{"type":"kernel","t":0,"name":"many","ts":%d,"dur":%d,"stage":"decode","sel":true}\n' \
			    "$ts" "$dur"
			[ "$dur" = 3 ] && printf '{"type":"kernel","t":0,"name":"two","ts":%d,"dur":2,"stage":"decode","sel":true}\n' $((ts + 5))
			[ "$dur" = 7 ] && printf '{"type":"kernel","t":0,"name":"two","ts":%d,"dur":8,"stage":"decode","sel":true}\n' $((ts + 5))
		done
		printf '{"type":"kernel","t":0,"name":"one","ts":500,"dur":0.125,"stage":"decode","sel":true}\n'
		printf '{"type":"stats","t":0}\n'
	} >"$T/stats.jsonl"
	km <"$T/stats.jsonl" >"$T/out"
	jq -r 'select(.type == "kernel_row") |
	    [.kernel, .launches, .total_us, .mean_us, .min_us, .max_us, .p50_us, .p90_us] | @tsv' \
	    "$T/out" >"$T/got"
	printf 'many\t10\t55\t5.5\t1\t10\t5\t9\ntwo\t2\t10\t5\t2\t8\t2\t8\none\t1\t0.125\t0.125\t0.125\t0.125\t0.125\t0.125\n' \
	    >"$T/want"
	same "$T/want" "$T/got"
}
check "each row: its launches' mean, min, max, p50 and p90 duration" t_duration_stats

done_testing
