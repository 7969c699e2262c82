#!/bin/sh
# kernel-map: what passes through, what is consumed, malformed streams.
. "$(dirname "$0")/lib.sh"

km() { "$BIN/kernel-map" "$@"; }
KF=$FIX/kernel-map

t_consumed() {
	km <"$KF/attribution.jsonl" >"$T/out" &&
	eq 0 "$(jq -s '[.[]|select(.type=="frame" or .type=="cpu_op" or .type=="corr")]|length' "$T/out")" &&
	eq "$(grep -c '"type":"launch",' "$KF/attribution.jsonl")" "$(grep -c '"type":"launch",' "$T/out")" launches &&
	eq 7 "$(grep -c '"type":"kernel",' "$T/out")" &&
	has "$T/out" '"type":"thread_name"' &&
	has "$T/out" '"other_pid_kernel"'
}
check 'frame, cpu_op and corr are consumed; kernels and launches pass' t_consumed

t_passthrough_bytes() {
	km <"$KF/rows.jsonl" >"$T/out" &&
	grep -v -e '"type":"site"' -e '"type":"kernel_row"' "$T/out" >"$T/rest" &&
	same "$KF/rows.jsonl" "$T/rest"
}
check 'unconsumed records pass byte for byte, unknown types too' t_passthrough_bytes

t_sites_only() {
	km --sites-only <"$KF/attribution.jsonl" >"$T/out" &&
	# the input records and the mapping sites, nothing else
	eq 'input' "$(grep -v '"type":"site"' "$T/out" | jq -r .type | uniq)" &&
	grep '"type":"input"' "$KF/attribution.jsonl" >"$T/in.want" &&
	grep '"type":"input"' "$T/out" | same "$T/in.want" - &&
	eq 0 "$(grep -c '"kernel_row"' "$T/out")" &&
	eq 0 "$(grep -c '"formal_stage"' "$T/out")" &&
	eq 6 "$(jq -s '[.[]|select(.type=="site" and .scope=="mapping_stage" and .stage=="decode")]|length' "$T/out")" &&
	eq 6 "$(jq -s '[.[]|select(.type=="site" and .scope=="mapping_global")]|length' "$T/out")"
}
check '--sites-only writes the input records and the mapping sites alone' t_sites_only

t_sites_only_health() {
	# the mapping's health records go on with its sites, in order, byte for
	# byte (triage's report shows the mapping's verdict from them)
	awk '/"type":"stats"/ { print "{\"type\":\"health\",\"t\":0,\"verdict\":\"ok\",\"n\":" NR "}" }
	    { print }' "$KF/attribution.jsonl" >"$T/h.jsonl" &&
	[ "$(grep -c '"type":"health"' "$T/h.jsonl")" -ge 1 ] &&
	km --sites-only <"$T/h.jsonl" >"$T/out" &&
	grep -e '"type":"input"' -e '"type":"health"' "$T/h.jsonl" >"$T/want" &&
	grep -v '"type":"site"' "$T/out" | same "$T/want" - &&
	eq 6 "$(jq -s '[.[]|select(.type=="site" and .scope=="mapping_global")]|length' "$T/out")" &&
	# without --sites-only they pass like any record
	grep '"type":"health"' "$T/h.jsonl" >"$T/want.h" &&
	km <"$T/h.jsonl" | grep '"type":"health"' | same "$T/want.h" -
}
check '--sites-only keeps the health records too' t_sites_only_health

t_sites_only_graphs() {
	# a mapping trace profiled with CUDA graphs on: a note that its sites are
	# the graph launch's, which the formal run passes on to the report
	"$TESTDIR/gen-trace" -s decode -n 3 --graph >"$T/g.json"
	"$BIN/trace-extract" -q --role mapping "$T/g.json" | "$BIN/trace-stage" -q >"$T/gm.jsonl"
	km --sites-only <"$T/gm.jsonl" >"$T/gs.jsonl"
	eq "mapping_in_graphs decode" "$(jq -r 'select(.type == "note") | "\(.id) \(.stage)"' "$T/gs.jsonl")"
	has "$T/gs.jsonl" 'The mapping trace ran 100.0% of its decode stage.s kernel time in CUDA graphs: '
	km --mapping "$T/gs.jsonl" <"$T/gm.jsonl" >"$T/gf.jsonl"
	eq 1 "$(grep -c '"id":"mapping_in_graphs"' "$T/gf.jsonl")"
	# an eager mapping says nothing
	"$TESTDIR/gen-trace" -s decode -n 3 >"$T/e.json"
	"$BIN/trace-extract" -q --role mapping "$T/e.json" | "$BIN/trace-stage" -q | km --sites-only >"$T/es.jsonl"
	eq 0 "$(grep -c '"type":"note"' "$T/es.jsonl")"
}
check '--sites-only on a graph-on mapping trace: a note, passed on by --mapping' t_sites_only_graphs

t_sites_mapping() {
	km --sites-only <"$KF/attribution.jsonl" >"$T/sites.jsonl"
	[ "$(grep -c '"type":"site"' "$T/sites.jsonl")" -gt 0 ]
	# a formal run reads the same mapping from the sites or from the stream followed by them
	{ grep -v '"type":"input"' "$KF/attribution.jsonl"; cat "$T/sites.jsonl"; } >"$T/full.jsonl"
	km --mapping "$T/full.jsonl" <"$KF/attribution.jsonl" >"$T/f1"
	km --mapping "$T/sites.jsonl" <"$KF/attribution.jsonl" >"$T/f2"
	same "$T/f1" "$T/f2"
	[ "$(grep -c '"scope":"mapping_stage"' "$T/f2")" -gt 0 ]
	status 2 km --sites-file "$T/x.jsonl" <"$KF/attribution.jsonl" 2>"$T/e" >/dev/null
	has "$T/e" "unknown or ambiguous option '--sites-file'"
}
check '--sites-only output is enough for --mapping; --sites-file is gone' t_sites_mapping

t_site_order() {
	km --sites-only <"$KF/attribution.jsonl" >"$T/out" &&
	jq -r 'select(.type=="site" and .scope=="mapping_global")|.kernel' "$T/out" >"$T/names" &&
	LC_ALL=C sort "$T/names" | same - "$T/names"
}
check 'payload entries come in ascending byte order' t_site_order

t_formal_before_stats() {
	km <"$KF/rows.jsonl" >"$T/out" &&
	jq -r '.type + (if .type=="site" then "/" + .scope else "" end)' "$T/out" |
	    uniq >"$T/types" &&
	cat >"$T/want" <<-'X' &&
	input
	trace
	annotation
	gpu_pids
	kernel
	mystery
	site/formal_stage
	stats
	trace
	kernel
	site/formal_stage
	stats
	site/mapping_stage
	site/mapping_global
	kernel_row
	X
	same "$T/want" "$T/types"
}
check 'formal sites precede their stats; mapping sites and rows come last' t_formal_before_stats

t_mapping_order() {
	km --sites-only <"$KF/rows.jsonl" >"$T/sites" &&
	grep -v '"type":"input"' "$KF/rows.jsonl" | sed 's/"role":"single"/"role":"formal"/' >"$T/in" &&
	km --mapping "$T/sites" <"$T/in" >"$T/out" &&
	jq -r '.type + (if .type=="site" then "/" + .scope else "" end)' "$T/out" |
	    uniq >"$T/types" &&
	head -n 3 "$T/types" >"$T/head" &&
	printf 'input\nsite/mapping_stage\nsite/mapping_global\n' | same - "$T/head" &&
	grep -n . "$T/types" | grep -A1 'kernel_row' | grep -q ':stats$'
}
check '--mapping echoes the mapping input and sites first, rows before each stats' t_mapping_order

# Malformed streams

t_truncated() {
	head -n 11 "$KF/rows.jsonl" >"$T/in" &&
	status 1 km <"$T/in" >/dev/null 2>"$T/err" &&
	has "$T/err" 'input ended inside trace 0 (no stats record)'
}
check 'a stream ending inside a trace exits 1' t_truncated

t_not_json() {
	{ head -n 3 "$KF/rows.jsonl"; echo '{"type":"kernel",'; } >"$T/in" &&
	status 1 km <"$T/in" >/dev/null 2>"$T/err" &&
	has "$T/err" '<stdin>:4: '
}
check 'a line that is not JSON exits 1 with its position' t_not_json

t_lenient_not_json() {
	# jsmn alone would take these: a key without a value, an unquoted key
	for bad in '{"type":"kernel","t":0,"name":"k","b"}' '{"type":"kernel","t":0,name:"k"}' \
	    '{"type":"kernel","t":0,"a":1,2}'; do
		{ head -n 3 "$KF/rows.jsonl"; echo "$bad"; } >"$T/in"
		status 1 km <"$T/in" >/dev/null 2>"$T/err"
		has "$T/err" '<stdin>:4: record is not a JSON object'
	done
}
check 'a member without a value or a quoted key: exit 1, not a guess' t_lenient_not_json

t_no_ts() {
	{ head -n 2 "$KF/rows.jsonl"; echo '{"type":"kernel","t":0,"name":"k","dur":1,"sel":true}'; } >"$T/in" &&
	status 1 km <"$T/in" >/dev/null 2>"$T/err" &&
	has "$T/err" "<stdin>:3: kernel record: member 'ts' is missing"
}
check 'a kernel without ts exits 1' t_no_ts

t_outside() {
	echo '{"type":"frame","t":0,"name":"f","pid":"1","tid":"1","ts":0,"dur":1}' >"$T/in" &&
	status 1 km <"$T/in" >/dev/null 2>"$T/err" &&
	has "$T/err" '<stdin>:1: frame record outside a trace'
}
check 'a consumed record outside a trace exits 1' t_outside

t_wrong_t() {
	{ head -n 2 "$KF/rows.jsonl"; echo '{"type":"frame","t":5,"name":"f","pid":"1","tid":"1","ts":0,"dur":1}'; } >"$T/in" &&
	status 1 km <"$T/in" >/dev/null 2>"$T/err" &&
	has "$T/err" '<stdin>:3: frame record for trace 5 inside trace 0'
}
check 'a record of another trace exits 1' t_wrong_t

t_nested_trace() {
	{ head -n 2 "$KF/rows.jsonl"; sed -n 2p "$KF/rows.jsonl"; } >"$T/in" &&
	status 1 km <"$T/in" >/dev/null 2>"$T/err" &&
	has "$T/err" 'stats record is missing'
}
check 'a trace opened inside a trace exits 1' t_nested_trace

# Nothing to analyze

t_no_kernels() {
	printf '%s\n' '{"type":"input","v":1,"role":"single","framework":"sglang"}' \
	    '{"type":"trace","v":1,"t":0,"path":"/a.json","stage":"all"}' \
	    '{"type":"kernel","t":0,"name":"k","ts":0,"dur":1,"sel":false}' \
	    '{"type":"stats","t":0,"by_cat":{"cpu_op":3,"":2}}' >"$T/in" &&
	status 3 km <"$T/in" >/dev/null 2>"$T/err" &&
	has "$T/err" 'no GPU kernels to analyze in 1 trace (events by category: cpu_op 3, uncategorized 2)'
}
check 'no selected kernel exits 3 and says what was seen' t_no_kernels

t_empty() {
	status 3 km </dev/null >/dev/null 2>"$T/err" &&
	has "$T/err" 'no traces in the input'
}
check 'empty input exits 3' t_empty

t_sites_only_empty() {
	printf '%s\n' '{"type":"trace","v":1,"t":0,"path":"/a.json","stage":"all"}' \
	    '{"type":"stats","t":0}' >"$T/in" &&
	km --sites-only <"$T/in" >"$T/out" 2>"$T/err" &&
	eq 0 "$(wc -c <"$T/out" | tr -d ' ')" &&
	eq "" "$(cat "$T/err")"
}
check 'a mapping input without kernels: an empty map, exit 0 (trace-health reports it)' t_sites_only_empty

t_full() {
	if [ -w /dev/full ]; then
		status 1 km <"$KF/rows.jsonl" >/dev/full 2>"$T/err" &&
		has "$T/err" 'write error'
	fi
}
check 'a write error exits 1' t_full

done_testing
