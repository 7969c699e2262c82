#!/bin/sh
# fuse-detect: --explain verdicts, and groups per (trace, stage).
. "$(dirname "$0")/lib.sh"
. "$FIX/fuse-detect/rows.sh"

mkcat() {
	pat '"pattern":"Fw","candidate_path":["vllm/x.py"],"active_keywords":["zz"]'
	pat '"pattern":"Tp","require_tp":true,"min_tp_size":4,"active_keywords":["zz"]'
	pat '"pattern":"Inc","model_include":["llama"],"active_keywords":["zz"]'
	pat '"pattern":"Exc","model_exclude":["qwen"],"active_keywords":["zz"]'
	pat '"pattern":"Miss","active_keywords":["nothing"],"split_groups":[["a_"],["nothing"]]'
	pat '"pattern":"Zero","active_keywords":["zero_"]'
	pat '"pattern":"Share","split_groups":[["a_"],["b_"]],"min_share":90'
	pat '"pattern":"Top","priority":9,"active_keywords":["a_"],"subsumes":["Blocked"]'
	pat '"pattern":"Blocked","active_keywords":["c_"]'
	pat '"pattern":"Taken","active_keywords":["a_","c_"]'
	pat '"pattern":"Small","active_keywords":["tiny_"]'
	pat '"pattern":"Ok","origin":"upstream","split_groups":[["b_"],["c_"]],"min_share":1,"likely_share":99'
}
mkin() {
	inp sglang '{"model_path":"Qwen/Qwen3","tp_size":2}'
	trc 0
	srow 0 decode a_kernel 500 1000 'a.py:1 f'
	srow 0 decode b_kernel 300 1000 'b.py:1 f'
	srow 0 decode c_kernel 100 1000 'c.py:1 f'
	srow 0 decode zero_kernel 0 1000 'z.py:1 f'
	srow 0 decode tiny_kernel 5 1000 't.py:1 f'
}

t_records() {
	mkcat >"$T/cat" && mkin >"$T/in" &&
	fd -p "$T/cat" --explain=records <"$T/in" >"$T/out" &&
	jq -r 'select(.type=="fuse_explain") | "\(.t) \(.stage) \(.pattern) \(.verdict)"' "$T/out" >"$T/got" &&
	cat >"$T/want" <<-'EOT' &&
	0 decode Fw gated_framework
	0 decode Tp gated_tp
	0 decode Inc gated_model_include
	0 decode Exc gated_model_exclude
	0 decode Miss no_keyword_hit
	0 decode Zero no_related_time
	0 decode Share below_min_share
	0 decode Top accepted
	0 decode Blocked blocked_by_subsumes
	0 decode Taken rows_consumed
	0 decode Small below_render_bar
	0 decode Ok accepted
	EOT
	same "$T/want" "$T/got" &&
	jq -r .type "$T/out" | uniq -c | awk '{print $1, $2}' | paste -sd' ' - >"$T/types" &&
	eq '1 input 1 trace 5 kernel_row 2 fuse_row 12 fuse_explain' "$(cat "$T/types")"
}
check '--explain=records: one verdict per pattern, after the fuse rows' t_records

t_details() {
	mkcat >"$T/cat" && mkin >"$T/in" &&
	fd -p "$T/cat" --explain=records <"$T/in" |
	    jq -r 'select(.type=="fuse_explain") | .detail' >"$T/got" &&
	cat >"$T/want" <<-'EOT' &&
	candidate path is vllm code, framework is 'sglang'
	tp_size 2 is below min_tp_size 4
	model 'qwen/qwen3' (model family '') contains none of 'llama'
	model 'qwen/qwen3' (model family '') contains one of 'qwen'
	no active keyword hit; 1 of 2 split groups matched
	direct match, but its 1 rows have no GPU time
	split match of 80.000% is below min_share 90%; matched 'a_' in a_kernel (name), 'b_' in b_kernel (name)
	direct match, 1 rows, 50.000%, Confirmed; matched 'a_' in a_kernel (name)
	direct match of 10.000% blocked: subsumed by accepted 'Top'; matched 'c_' in c_kernel (name)
	direct match of 60.000% dropped: row 'a_kernel' already taken by 'Top'; matched 'a_' in a_kernel (name)
	direct match accepted (it consumes its 1 rows), but 0.500% is below the 1.0% render bar; matched 'tiny_' in tiny_kernel (name)
	split match, 2 rows, 40.000%, Candidate; matched 'b_' in b_kernel (name), 'c_' in c_kernel (name)
	EOT
	same "$T/want" "$T/got"
}
check '--explain details name the numbers and the blocking pattern' t_details

t_stderr() {
	mkcat >"$T/cat" && mkin >"$T/in" &&
	fd -p "$T/cat" --explain <"$T/in" >"$T/out" 2>"$T/err" &&
	has "$T/err" '^fuse-detect: explain: t=0 decode: Ok: accepted: split match, 2 rows, 40.000%, Candidate; matched .b_. in b_kernel (name), .c_. in c_kernel (name)$' &&
	eq 12 "$(grep -c '^fuse-detect: explain: ' "$T/err")" &&
	hasnt "$T/out" fuse_explain &&
	fd -p "$T/cat" --explain=stderr <"$T/in" 2>"$T/err2" >/dev/null &&
	same "$T/err" "$T/err2"
}
check '--explain on stderr, one line per pattern' t_stderr

t_empty_stage() {
	mkcat >"$T/cat" &&
	{ inp sglang null; srow 0 all a_kernel 0 0 'a.py:1 f'; } |
	    fd -p "$T/cat" --explain=records | jq -r 'select(.type=="fuse_explain") | .verdict' | sort -u >"$T/got" &&
	eq empty_stage "$(cat "$T/got")"
}
check 'a stage without GPU time: empty_stage for every pattern' t_empty_stage

t_groups() {
	# Two traces, two stages each: rows follow each group, with the
	# group's own denominators.
	printf '%s\n' '{"pattern":"P","active_keywords":["a_kernel"]}' >"$T/cat" &&
	{ inp sglang null
	  trc 0; srow 0 extend a_kernel 10 100 'a.py:1 f'; srow 0 decode a_kernel 10 20 'a.py:1 f'
	  echo '{"type":"stats","t":0}'
	  trc 1; srow 1 extend a_kernel 30 40 'a.py:1 f'; srow 1 decode b_kernel 10 10 'a.py:1 f'
	  echo '{"type":"stats","t":1}'
	} | fd -p "$T/cat" >"$T/out" &&
	jq -r 'if .type=="fuse_row" then "F:\(.t):\(.stage):\(.share_pct)" elif .type=="kernel_row" then "K:\(.t):\(.stage)" else .type end' "$T/out" |
	    paste -sd' ' - >"$T/got" &&
	eq 'input trace K:0:extend F:0:extend:10 K:0:decode F:0:decode:50 stats trace K:1:extend F:1:extend:75 K:1:decode stats' "$(cat "$T/got")"
}
check 'fuse rows per (trace, stage), right after the group' t_groups

t_noncontiguous() {
	printf '%s\n' '{"pattern":"P","active_keywords":["a_"]}' >"$T/cat" &&
	{ inp sglang null; srow 0 decode a_kernel 10 20 'a.py:1 f'; echo '{"type":"site"}'
	  srow 0 decode b_kernel 10 20 'a.py:1 f'; } >"$T/in" &&
	status 1 fd -p "$T/cat" <"$T/in" >/dev/null 2>"$T/err" &&
	has "$T/err" "<stdin>:4: kernel rows of trace 0 stage 'decode' are not contiguous"
}
check 'a (trace, stage) split by other records is an error' t_noncontiguous

done_testing
