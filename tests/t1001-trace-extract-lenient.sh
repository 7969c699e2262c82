#!/bin/sh
# trace-extract: defects where the data stays clear are accepted, with one
# counted warning line per kind, and give the same records as a clean trace.
. "$(dirname "$0")/lib.sh"

GEN=$TESTDIR/gen-trace
EX=$BIN/trace-extract

"$GEN" -o "$T/clean.json"
"$EX" "$T/clean.json" >"$T/clean.jsonl"
# The kernels of a record stream, sorted, without the trace index; their
# py_window frame_name ids (numbered in file order) as the names.
kernels() {
	jq -sc '(map(select(.type == "frame_name") | {key: (.id | tostring), value: .name}) |
	    from_entries) as $n | .[] | select(.type == "kernel") | del(.t) |
	    if has("py_window") then .py_window |= map($n[tostring]) else . end' "$1" | sort
}
kernels "$T/clean.jsonl" >"$T/clean.k"

# run DEFECT [GEN-OPTION...]: generate, extract; leaves $T/$1.{jsonl,err,rc}.
run() {
	_d=$1
	shift
	"$GEN" -d "$_d" "$@" -o "$T/$_d.json"
	set +e
	"$EX" "$T/$_d.json" >"$T/$_d.jsonl" 2>"$T/$_d.err"
	echo $? >"$T/$_d.rc"
	set -e
}
warnings() {	# warnings FILE KEY: a counter of the stats record
	jq -r "select(.type == \"stats\") | .warnings.\"$2\"" "$1"
}
same_kernels() {
	kernels "$T/$1.jsonl" >"$T/$1.k"
	same "$T/clean.k" "$T/$1.k"
}

t_ctrl() {
	run ctrl
	eq 0 "$(cat "$T/ctrl.rc")"
	has "$T/ctrl.err" "'$T/ctrl.json': 3 raw control characters inside strings (accepted)"
	eq 3 "$(warnings "$T/ctrl.jsonl" control_chars)"
	eq '"thread 4242 (python3\u0001)"' \
	    "$(jq -c 'select(.type == "thread_name" and .pid == "4242") | .name' "$T/ctrl.jsonl" | sed 's/\\\\/\\/g')"
	same_kernels ctrl
}
check "raw control characters: accepted, counted, escaped on output" t_ctrl

t_utf8() {
	run utf8
	eq 0 "$(cat "$T/utf8.rc")"
	# the thread name and the 4 attention kernels
	has "$T/utf8.err" "'$T/utf8.json': 5 invalid UTF-8 sequences or lone surrogates shown as U+FFFD"
	eq 5 "$(warnings "$T/utf8.jsonl" replacement_chars)"
	iconv -f UTF-8 -t UTF-8 "$T/utf8.jsonl" >/dev/null
	eq 4 "$(jq -c 'select(.type == "kernel" and (.name | contains("BatchDecode\ufffdKernel")))' "$T/utf8.jsonl" | wc -l | tr -d ' ')"
	eq '"thread 4242 (python3 \ufffd)"' "$(jq -c 'select(.type == "thread_name" and .pid == "4242") | .name' "$T/utf8.jsonl" | jq -a .)"
}
check "invalid UTF-8: U+FFFD, counted, output valid UTF-8" t_utf8

t_surrogate() {
	run surrogate
	eq 0 "$(cat "$T/surrogate.rc")"
	has "$T/surrogate.err" "2 invalid UTF-8 sequences or lone surrogates shown as U+FFFD"
	eq '"thread 4242 (python3 \ufffdx\ufffd)"' "$(jq -c 'select(.type == "thread_name" and .pid == "4242") | .name' "$T/surrogate.jsonl" | jq -a .)"
	# a valid pair decodes to one code point and is not counted
	eq '"stream 7 \ud83d\ude00"' "$(jq -c 'select(.type == "thread_name" and .pid == "0") | .name' "$T/surrogate.jsonl" | jq -a .)"
	iconv -f UTF-8 -t UTF-8 "$T/surrogate.jsonl" >/dev/null
}
check "lone surrogate escapes: U+FFFD; a valid pair is kept" t_surrogate

t_nan() {
	run nan
	eq 0 "$(cat "$T/nan.rc")"
	has "$T/nan.err" "13 NaN/Infinity literals (not standard JSON; accepted)"
	has "$T/nan.err" "1 event skipped: dur_not_finite"
	eq 1 "$(jq -r 'select(.type == "stats") | .skipped.dur_not_finite' "$T/nan.jsonl")"
	same_kernels nan
}
check "NaN literals: accepted in args; a NaN dur skips its event" t_nan

t_inf() {
	run inf
	eq 0 "$(cat "$T/inf.rc")"
	has "$T/inf.err" "25 NaN/Infinity literals (not standard JSON; accepted)"
	has "$T/inf.err" "1 event skipped: ts_not_finite"
	same_kernels inf
}
check "Infinity, -Infinity and inf literals; an inf ts skips its event" t_inf

t_strnum() {
	run strnum
	eq 0 "$(cat "$T/strnum.rc")"
	eq "" "$(cat "$T/strnum.err")"
	same_kernels strnum
	eq '{"type":"cpu_op","t":0,"name":"sgl_kernel::rmsnorm","pid":"4242","tid":"4242","ts":110,"dur":16,"external_id":2}' \
	    "$(jq -c 'select(.type == "cpu_op") | del(.py_loc, .py_stack, .py_scopes)' "$T/strnum.jsonl" | head -n 1)"
}
check "numbers written as strings are coerced" t_strnum

t_strnum_huge() {
	# a string number far beyond the integer range (found by fuzzing: an
	# out-of-range conversion while printing it)
	printf '[{"ph": "X", "cat": "kernel", "name": "k", "ts": "1718000000000888888888888888888888118", "dur": "20", "pid": 0, "tid": 7}]' >"$T/bigts.json"
	"$EX" "$T/bigts.json" >"$T/bigts.jsonl"
	eq 1.718000000000889e+36 "$(jq -r 'select(.type == "kernel") | .ts' "$T/bigts.jsonl")"
}
check "a numeric string beyond the integer range" t_strnum_huge

t_bom() {
	run bom
	eq 0 "$(cat "$T/bom.rc")"
	has "$T/bom.err" "'$T/bom.json': UTF-8 byte order mark at the start (ignored)"
	eq 1 "$(warnings "$T/bom.jsonl" bom)"
	same_kernels bom
}
check "byte order mark" t_bom

t_bom_pipe() {
	# the mark split over two reads of a pipe
	{ printf '\357'; sleep 0.2; tail -c +2 "$T/bom.json"; } | "$EX" - >"$T/bompipe.jsonl" 2>"$T/bompipe.err"
	has "$T/bompipe.err" "byte order mark"
	eq 12 "$(jq -c 'select(.type == "kernel")' "$T/bompipe.jsonl" | wc -l | tr -d ' ')"
}
check "byte order mark split across pipe reads" t_bom_pipe

t_trailing_comma() {
	run trailing-comma
	eq 0 "$(cat "$T/trailing-comma.rc")"
	has "$T/trailing-comma.err" "2 trailing commas before ']' or '}' (accepted)"
	same_kernels trailing-comma
}
check "trailing commas in the event array and in args" t_trailing_comma

t_no_close() {
	run no-close
	eq 0 "$(cat "$T/no-close.rc")"
	has "$T/no-close.err" "the event array has no closing ']' (accepted)"
	eq 1 "$(warnings "$T/no-close.jsonl" missing_close_bracket)"
	same_kernels no-close
	# and the array form with its bracket gives no warning
	"$GEN" --array -o "$T/arr.json"
	"$EX" "$T/arr.json" 2>"$T/arr.err" >/dev/null
	eq "" "$(cat "$T/arr.err")"
}
check "top-level array without its closing ']'" t_no_close

t_disorder() {
	run disorder
	eq 0 "$(cat "$T/disorder.rc")"
	same_kernels disorder
}
check "events out of order give the same kernels" t_disorder

t_ns() {
	run ns
	eq 0 "$(cat "$T/ns.rc")"
	eq "" "$(cat "$T/ns.err")"
	same_kernels ns
}
check "displayTimeUnit ns: times stay microseconds" t_ns

t_multimember() {
	"$GEN" -d multimember -o "$T/mm.json.gz"
	[ "$(od -An -tx1 -N2 "$T/mm.json.gz" | tr -d ' ')" = 1f8b ]
	# two gzip members: the second header appears again inside the file
	"$EX" "$T/mm.json.gz" >"$T/mm.jsonl" 2>"$T/mm.err"
	eq "" "$(cat "$T/mm.err")"
	kernels "$T/mm.jsonl" >"$T/mm.k"
	same "$T/clean.k" "$T/mm.k"
}
check "multi-member gzip is read as one stream" t_multimember

t_plain_gz() {
	"$GEN" -d plain-gz -o "$T/plain.json.gz"
	eq '{"' "$(head -c 1 "$T/plain.json.gz")\""
	"$EX" "$T/plain.json.gz" >"$T/pgz.jsonl" 2>"$T/pgz.err"
	eq false "$(jq -c 'select(.type == "trace") | .gzip' "$T/pgz.jsonl")"
	kernels "$T/pgz.jsonl" >"$T/pgz.k"
	same "$T/clean.k" "$T/pgz.k"
}
check "plain JSON named .json.gz: compression sniffed from the bytes" t_plain_gz

t_gz_named_json() {
	"$GEN" -z -o "$T/gz-as.json"
	"$EX" "$T/gz-as.json" >"$T/gzas.jsonl"
	eq true "$(jq -c 'select(.type == "trace") | .gzip' "$T/gzas.jsonl")"
	eq 12 "$(jq -c 'select(.type == "kernel")' "$T/gzas.jsonl" | wc -l | tr -d ' ')"
}
check "gzip data named .json is decompressed" t_gz_named_json

t_bracket_in_string() {
	# ']' and '}' inside strings must not end anything
	sed 's/"ProfilerStep#1"/"ProfilerStep#1 ]} {[ \\" ]"/' "$T/clean.json" >"$T/br.json"
	"$EX" "$T/br.json" >"$T/br.jsonl" 2>"$T/br.err"
	eq "" "$(cat "$T/br.err")"
	eq '"ProfilerStep#1 ]} {[ \" ]"' "$(jq -c 'select(.type == "annotation") | .name' "$T/br.jsonl" | head -n 1)"
	kernels "$T/br.jsonl" >"$T/br.k"
	same "$T/clean.k" "$T/br.k"
}
check "brackets and quotes inside strings" t_bracket_in_string

t_several() {
	"$GEN" -d ctrl -d bom -d trailing-comma -d utf8 -o "$T/sev.json"
	"$EX" "$T/sev.json" >/dev/null 2>"$T/sev.err"
	eq 4 "$(grep -c 'warning:' "$T/sev.err")"
}
check "several defects: one warning line per kind" t_several

t_nul() {
	# a raw NUL inside a string is one more control character, not the end
	# of the event (found by fuzzing: the tokenizer stopped at it)
	printf '[{"ph": "X", "cat": "cpu_op", "name": "a\000b", "pid": 1, "tid": 1, "ts": 5, "dur": 2, "args": {"External id": 3}}]' >"$T/nul.json"
	# (an op no kernel is matched to is written with --all-ops only)
	"$EX" --all-ops "$T/nul.json" >"$T/nul.jsonl" 2>"$T/nul.err"
	has "$T/nul.err" "1 raw control character inside strings (accepted)"
	eq '"a\u0000b"' "$(jq -c 'select(.type == "cpu_op") | .name' "$T/nul.jsonl")"
}
check "a raw NUL byte inside a string" t_nul

t_nameless() {
	# kernel events without name or cat (found by fuzzing: undefined
	# behaviour on an empty buffer)
	printf '[{"ph": "X", "cat": "kernel", "ts": 5, "dur": 2, "pid": 0, "tid": 7}, {"ph": "X", "name": "k", "ts": 9, "dur": 2, "pid": 0, "tid": 7, "args": {"stream": 7}}]' >"$T/nn.json"
	"$EX" --compat reference "$T/nn.json" >"$T/nn.jsonl"
	eq '["",""]' "$(jq -c 'select(.type == "kernel") | .name' "$T/nn.jsonl" | head -n 1 | jq -c '[., ""]')"
	eq '""' "$(jq -c 'select(.type == "kernel" and .name == "k") | .cat' "$T/nn.jsonl")"
}
check "kernels without a name or a category" t_nameless

t_quiet() {
	"$EX" -q "$T/ctrl.json" >/dev/null 2>"$T/q.err"
	eq "" "$(cat "$T/q.err")"
}
check "-q silences the warnings" t_quiet

done_testing
