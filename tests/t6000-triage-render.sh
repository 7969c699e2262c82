# triage-render --compat reference: the reference analyzer's report layout,
# stage sections, escaping, headers, and the machine formats as they were.
# (t6001 tests the structured report.)
. "$(dirname "$0")/lib.sh"
R=render_ref
render_ref() { "$BIN/triage-render" --compat reference "$@"; }
F=$FIX/triage-render

markdown_golden() {
	"$R" <"$F/rows.jsonl" >"$T/out.md"
	same "$F/rows.md" "$T/out.md"
}
check "markdown report: headers, stage sections, escaping, format_ms rounding" markdown_golden

empty_tables() {
	printf '%s\n' '{"type":"input","role":"single","framework":"sglang","traces":["/x.json"]}' |
	    "$R" >"$T/e.md"
	has "$T/e.md" '^| No kernel rows at or above 1.0% share. | - | - | - | - | - | - |$'
	has "$T/e.md" '^| No medium-confidence source-backed fusion opportunity matched this trace. |'
	hasnt "$T/e.md" '#####'
	hasnt "$T/e.md" '^Model:'
	eq "$(tail -c 1 "$T/e.md" | od -An -c | tr -d ' ')" '\n' "last byte"
	eq 1 "$(grep -c . "$T/e.md" | awk '{print ($1 > 10)}')" "report length"
}
check "no rows: placeholder rows, no headings, no Model line" empty_tables

only_all() {
	printf '%s\n' '{"type":"input","role":"single","framework":"sglang","traces":["/x.json"]}' \
	    '{"type":"kernel_row","t":0,"stage":"all","kernel":"k","category":"other","total_us":10,"launches":1,"share_pct":100,"stage_total_us":10,"location":"unresolved","cpu_op":"-","shown":true}' |
	    "$R" >"$T/a.md"
	hasnt "$T/a.md" '#####'
	has "$T/a.md" '^| k | other | 0.01 ms | 100.0% | 1 | unresolved | - |$'
}
check "a lone all stage has no heading" only_all

dual_header() {
	printf '%s\n' \
	    '{"type":"input","role":"mapping","framework":"vllm","server_args":{"model":"m1"},"model":"m1","traces":["/m.json"]}' \
	    '{"type":"input","role":"formal","framework":"sglang","server_args":null,"traces":["/f1.json","/f2.json"]}' |
	    "$R" >"$T/d.md"
	eq "Mode: mapping-formal" "$(sed -n 2p "$T/d.md")"
	eq "Mapping framework: vLLM" "$(sed -n 3p "$T/d.md")"
	eq "Formal framework: SGLang" "$(sed -n 4p "$T/d.md")"
	eq "Mapping traces: /m.json" "$(sed -n 5p "$T/d.md")"
	eq "Formal traces: /f1.json, /f2.json" "$(sed -n 6p "$T/d.md")"
	eq "Model: m1" "$(sed -n 7p "$T/d.md")"
	printf '%s\n' \
	    '{"type":"input","role":"mapping","framework":"trtllm","server_args":{"model":"m1"},"model":"m1","traces":["/m.json"]}' \
	    '{"type":"input","role":"formal","framework":"trtllm","server_args":{"x":1},"traces":["/f.json"]}' |
	    "$R" >"$T/d2.md"
	eq "Framework: TensorRT-LLM" "$(sed -n 3p "$T/d2.md")"
	hasnt "$T/d2.md" '^Model:'
}
check "mapping/formal header: frameworks, traces, Model from formal args first" dual_header

overlap_row() {
	printf '%s\n' '{"type":"input","role":"formal","framework":"sglang","traces":["/f.json"]}' \
	    '{"type":"overlap_row","stage":"decode","priority":"P2","verdict":"headroom","kernel":"void f<a|b>","python_scope":"x.py(1): f","total_us":900,"share_pct":20.45,"exclusive_ratio":1,"hidden_ratio":0,"dep_risk":"high","recommendation":"check deps"}' |
	    "$R" >"$T/o.md"
	has "$T/o.md" '^##### decode$'
	has "$T/o.md" '^| P2 | headroom | void f<a\\|b> | x.py(1): f | 900.0 us, share 20.4%, excl 100.0% / hid 0.0% | high | check deps |$'
}
check "overlap rows: formal signal cell, %.1f ties to even" overlap_row

json_format() {
	"$R" --format json <"$F/rows.jsonl" >"$T/r.jsonl"
	jq -e -s 'length == 4' "$T/r.jsonl" >/dev/null
	eq '"report"' "$(head -1 "$T/r.jsonl" | jq .type)"
	eq 2 "$(head -1 "$T/r.jsonl" | jq .kernel_rows)"
	eq 905 "$(jq -r 'select(.type=="kernel_row" and .stage=="decode") | .gpu_time_us' "$T/r.jsonl")"
	eq '"k_a|b"' "$(jq 'select(.type=="kernel_row" and .stage=="decode") | .kernel' "$T/r.jsonl")"
	eq 65.8 "$(jq 'select(.type=="fuse_row") | .share_pct' "$T/r.jsonl")"
	# batch streams: every row names the input it came from
	eq '"/p/run"' "$(jq 'select(.type=="fuse_row") | .input' "$T/r.jsonl")"
}
check "--format json: typed rows, numbers in explicit units" json_format

csv_format() {
	"$R" --format csv <"$F/rows.jsonl" >"$T/r.csv"
	head -1 "$T/r.csv" | grep -q '^table,stage,'
	grep -q '^kernel,extend,"gemm, ""big""",gemm,1234.5,100,2,' "$T/r.csv"
	grep -q '^kernel,decode,k_a|b,other,905,65.8,3,unresolved,-' "$T/r.csv"
	# CRLF ends the 4 records; the cell's own newline stays inside its quotes
	eq 4 "$(tr -cd '\r' <"$T/r.csv" | wc -c | tr -d ' ')" "CR count"
	grep -q '"aten::mm$' "$T/r.csv"
	"$R" --format tsv <"$F/rows.jsonl" >"$T/r.tsv"
	grep -q "^kernel	decode	k_a|b	other	905	65.8	3	unresolved	-" "$T/r.tsv"
}
check "--format csv/tsv: RFC 4180 quoting, plain numbers" csv_format

output_file() {
	"$R" -o "$T/o.md" <"$F/rows.jsonl" >"$T/stdout"
	same "$F/rows.md" "$T/o.md"
	eq 0 "$(wc -c <"$T/stdout" | tr -d ' ')" "stdout bytes"
	# a target that cannot work is a usage error, found before the records are read
	status 2 "$R" -o /nonexistent/dir/x.md <"$F/rows.jsonl" 2>"$T/err"
	has "$T/err" "cannot write '/nonexistent/dir/x.md': no such directory '/nonexistent/dir'"
}
check "--output writes the file, a bad path exits 2" output_file

usage_errors() {
	status 2 "$R" --format xml </dev/null 2>"$T/err"
	has "$T/err" "bad --format value, not md, html, json, jsonl, csv or tsv: xml"
	status 0 "$R" --help >"$T/help"
	has "$T/help" '^usage: triage-render'
	"$R" --version | grep -q '^triage-render (llm-torch-profiler-analysis) '
	printf 'not json\n' >"$T/bad"
	status 1 "$R" "$T/bad" 2>"$T/err2"
	has "$T/err2" "bad:1: record"
}
check "usage, help, version and malformed records" usage_errors

write_errors() {
	status 1 "$R" <"$F/rows.jsonl" >/dev/full 2>"$T/err"
	has "$T/err" "write error"
}
check "a full disk is an error, not silence" write_errors

done_testing
