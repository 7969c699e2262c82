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

done_testing
