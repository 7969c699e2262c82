#!/bin/sh
# trace-extract: which traces a profile directory names (capture-and-cli.md
# §3-§5, kernel-table.md Appendix A-B): newest trace per stage, rank
# filtering, merged- files, prefill/ decode/ subfolders, server_args.json
# placement, the model and the framework.
. "$(dirname "$0")/lib.sh"

GEN=$TESTDIR/gen-trace
EX=$BIN/trace-extract

# ranks in file names only (no distributedInfo), as these tests are about names
"$GEN" -n 1 -l 1 --no-dist-info -o "$T/proto.json"
"$GEN" -n 1 -l 1 -z --no-dist-info -o "$T/proto.json.gz"

# put FILE EPOCH: a copy of the prototype trace with that mtime.
put() {
	mkdir -p "$(dirname "$1")"
	case $1 in
	*.gz) cp "$T/proto.json.gz" "$1" ;;
	*) cp "$T/proto.json" "$1" ;;
	esac
	touch -d "@$2" "$1"
}
# traces DIR: the selected trace paths, relative to DIR, space separated.
traces() {
	"$EX" "$@" | jq -r 'select(.type == "input") | .traces[]' |
	    sed "s|^$(cd "$1" && pwd -P)/||" | tr '\n' ' ' | sed 's/ $//'
}
input() {	# input DIR JQ: a member of the input record
	"$EX" "$1" | jq -c "select(.type == \"input\") | $2"
}

t_newest_per_stage() {
	d=$T/flat
	put "$d/a.trace.json" 1000
	put "$d/b.trace.json" 3000
	put "$d/c.trace.json.gz" 2000
	eq "b.trace.json" "$(traces "$d")"
}
check "one stage: only the newest trace" t_newest_per_stage

t_stage_names() {
	d=$T/stages
	put "$d/run-prefill.trace.json" 1000
	put "$d/run-decode.trace.json" 1000
	put "$d/run2-decode.trace.json" 5000
	put "$d/run.trace.json" 1000
	eq "run-prefill.trace.json run2-decode.trace.json run.trace.json" "$(traces "$d")"
	eq "extend decode all" "$("$EX" "$d" | jq -r 'select(.type == "trace") | .stage' | tr '\n' ' ' | sed 's/ $//')"
}
check "newest per path stage, ordered extend, decode, all" t_stage_names

t_subfolders() {
	d=$T/split
	put "$d/prefill/x.trace.json" 2000
	put "$d/decode/y.trace.json" 1000
	put "$d/decode/z.trace.json" 1500
	eq "prefill/x.trace.json decode/z.trace.json" "$(traces "$d")"
}
check "prefill/ and decode/ subfolders" t_subfolders

t_newest_dir() {
	d=$T/runs
	put "$d/old/a.trace.json" 1000
	put "$d/new/b.trace.json" 4000
	put "$d/new/c.trace.json" 3000
	eq "new/b.trace.json" "$(traces "$d")"
}
check "no stage folders: the directory of the newest trace" t_newest_dir

t_ranks() {
	d=$T/ranks
	put "$d/p-TP-1.trace.json" 5000
	put "$d/p-TP-0.trace.json" 1000
	put "$d/norank.trace.json" 6000
	eq "p-TP-0.trace.json" "$(traces "$d")"
	eq 0 "$("$EX" "$d" | jq -r 'select(.type == "trace") | .rank')"
	d=$T/ranks2
	put "$d/x_tp3.json" 1000
	put "$d/x_tp2.json" 1000
	eq "x_tp2.json" "$(traces "$d")"
}
check "TP ranks: rank 0, else the smallest; unranked files dropped" t_ranks

t_merged() {
	d=$T/merged
	put "$d/merged-all.trace.json" 9000
	put "$d/r.trace.json" 1000
	eq "r.trace.json" "$(traces "$d")"
	d=$T/onlymerged
	put "$d/merged-all.trace.json" 1000
	eq "merged-all.trace.json" "$(traces "$d")"
}
check "merged- traces are dropped unless nothing else is left" t_merged

t_not_traces() {
	d=$T/mixed
	put "$d/t.json" 1000
	printf '{"a": 1}' >"$d/config.json"
	printf '{"traceEvents": []}' >"$d/metadata.json"
	printf '{"not": "a trace"}' >"$d/other.json"
	touch -d @9000 "$d/other.json" "$d/config.json" "$d/metadata.json"
	printf '[1, 2]' >"$d/numbers.json"
	touch -d @9000 "$d/numbers.json"
	eq "t.json" "$(traces "$d")"
}
check "only files that look like traces are chosen" t_not_traces

t_no_traces() {
	mkdir -p "$T/none/sub"
	printf '{}' >"$T/none/sub/x.json"
	status 3 "$EX" "$T/none" >"$T/out" 2>"$T/err"
	has "$T/err" "no trace files found under '$T/none'"
	eq "" "$(cat "$T/out")"
}
check "a directory without traces: exit 3" t_no_traces

t_server_args_file() {
	d=$T/sa1
	put "$d/run/t.trace.json" 1000
	printf '{"model_path": "org/Model-7B", "tp_size": 2, "attention_backend": "fa3"}' >"$d/server_args.json"
	# a file operand looks in its own folder only (issue 27): the one above
	# may be anyone's (/tmp/server_args.json for /tmp/x/trace.json)
	eq null "$(input "$d/run/t.trace.json" .model)"
	eq null "$(input "$d/run/t.trace.json" .server_args)"
	# the reference looks in its parent, then its grandparent
	eq '"org/Model-7B"' "$("$EX" --compat reference "$d/run/t.trace.json" |
	    jq -c 'select(.type == "input") | .model')"
	mv "$d/server_args.json" "$d/run/server_args.json"
	eq '"org/Model-7B"' "$(input "$d/run/t.trace.json" .model)"
	eq 2 "$(input "$d/run/t.trace.json" .tp_size)"
	eq '{"model_path":"org/Model-7B","tp_size":2,"attention_backend":"fa3"}' "$(input "$d/run/t.trace.json" .server_args)"
	# a profile directory: itself (or the traces' folder), never its parent
	printf '{"model_path": "other/Model"}' >"$d/server_args.json"
	eq '"org/Model-7B"' "$(input "$d/run" .model)"
	rm "$d/run/server_args.json"
	eq null "$(input "$d/run" .model)"
	eq '"other/Model"' "$(input "$d" .model)"
}
check "server_args.json beside a trace file, never above it (but under --compat reference)" t_server_args_file

t_server_args_dir() {
	d=$T/sa2
	put "$d/prof/t.trace.json" 1000
	printf '{"model": "m-small", "tp_size": "4"}' >"$d/prof/server_args.json"
	eq '"m-small"' "$(input "$d/prof" .model)"
	eq 4 "$(input "$d/prof" .tp_size)"
	# model_path wins over model; a falsy model_path falls back
	printf '{"model_path": "", "model": "fallback"}' >"$d/prof/server_args.json"
	eq '"fallback"' "$(input "$d/prof" .model)"
	printf '{"tp_size": 1}' >"$d/prof/server_args.json"
	eq null "$(input "$d/prof" .model)"
}
check "server_args.json in a profile directory; model_path, model" t_server_args_dir

t_server_args_bad() {
	d=$T/sa3
	put "$d/t.trace.json" 1000
	printf '{"model": ' >"$d/server_args.json"
	status 1 "$EX" "$d" >/dev/null 2>"$T/err"
	has "$T/err" "'$d/server_args.json': invalid JSON in server args file"
}
check "a malformed server_args.json is an error" t_server_args_bad

t_framework() {
	d=$T/fw1
	put "$d/t.trace.json" 1000
	eq '"sglang"' "$(input "$d" .framework)"
	printf '{"tokenizer_mode": "auto", "served_model_name": "vllm-demo"}' >"$d/server_args.json"
	eq '"vllm"' "$(input "$d" .framework)"
	printf '{"enable_allreduce_fusion": true}' >"$d/server_args.json"
	eq '"tokenspeed"' "$(input "$d" .framework)"
	rm "$d/server_args.json"
	# the path names vLLM: so it is, unless the trace's own code is another's (C26)
	mkdir -p "$T/my-vllm-runs" "$T/my-vllm-nocode"
	"$GEN" -n 4 -o "$T/my-vllm-runs/t.trace.json"
	eq '"sglang"' "$(input "$T/my-vllm-runs" .framework 2>/dev/null)"
	jq -c '.traceEvents |= map(select(.cat != "python_function"))' "$T/proto.json" \
	    >"$T/my-vllm-nocode/t.trace.json"
	eq '"vllm"' "$(input "$T/my-vllm-nocode" .framework)"
	mkdir -p "$T/fw2"
	"$GEN" -f vllm -o "$T/fw2/t.json"
	eq '"vllm"' "$(input "$T/fw2" .framework)"
	eq '"trtllm"' "$("$EX" --framework tensorrt-llm "$T/fw2" | jq -c 'select(.type == "input") | .framework')"
}
check "framework: server args, then the trace's code over the path, then the path" t_framework

t_fallback() {
	d=$T/fb
	mkdir -p "$d"
	printf '[{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2, "pid": 0, "tid": 7}]' >"$d/t.json"
	eq '["none","none"]' "$(input "$d" '[.framework, .framework_source]')"
	eq '"sglang"' "$("$EX" --compat reference "$d" | jq -c 'select(.type == "input") | .framework')"
	eq '["vllm","capture"]' "$("$EX" --framework-fallback vllm "$d" |
	    jq -c 'select(.type == "input") | [.framework, .framework_source]')"
}
check "no hint: the fallback, else none (the reference: sglang)" t_fallback

t_bad_trace_named_trace() {
	# *.trace.json is taken unread; a broken one fails at extraction
	d=$T/broken
	mkdir -p "$d"
	printf '{"traceEvents": [' >"$d/x.trace.json"
	status 1 "$EX" "$d" >/dev/null 2>"$T/err"
	has "$T/err" "truncated JSON"
}
check "a broken *.trace.json is selected and then rejected" t_bad_trace_named_trace

t_symlink() {
	d=$T/link
	put "$T/real/t.trace.json" 1000
	mkdir -p "$d"
	ln -s "$T/real/t.trace.json" "$d/alias.trace.json"
	eq "\"$(cd "$T/real" && pwd -P)/t.trace.json\"" "$(input "$d" '.traces[0]')"
}
check "symlinks are reported by their target" t_symlink

t_fifo() {
	# a named pipe, as <(cmd) gives one: read once, one trace, no discovery
	"$TESTDIR/gen-trace" -s both -n 2 -o "$T/piped.json"
	mkfifo "$T/pipe"
	cat "$T/piped.json" >"$T/pipe" &
	"$EX" -q "$T/pipe" >"$T/fifo.jsonl"
	wait
	eq "\"$T/pipe\"" "$(jq -c 'select(.type == "input") | .path' "$T/fifo.jsonl")"
	eq "[\"$T/pipe\"]" "$(jq -c 'select(.type == "input") | .traces' "$T/fifo.jsonl")"
	# the same events as from the file
	"$EX" -q "$T/piped.json" >"$T/file.jsonl"
	grep -v '"type":"\(input\|trace\)"' "$T/fifo.jsonl" >"$T/a"
	grep -v '"type":"\(input\|trace\)"' "$T/file.jsonl" >"$T/b"
	same "$T/b" "$T/a"
	[ "$(grep -c '"type":"kernel"' "$T/a")" -gt 0 ]
	# and triage reads it too
	cat "$T/piped.json" >"$T/pipe" &
	"$TRIAGE" --input "$T/pipe" >"$T/report.md"
	wait
	has "$T/report.md" "\*\*Traces\*\*: $T/pipe"
	has "$T/report.md" '^## Kernels'
	# the framework and model family from that one pass, as the file's
	eq "$(jq -c 'select(.type == "input") | [.framework, .framework_source, .model_family]' "$T/file.jsonl")" \
	    "$(jq -c 'select(.type == "input") | [.framework, .framework_source, .model_family]' "$T/fifo.jsonl")"
	eq '["sglang","trace"]' "$("$EX" -q - <"$T/piped.json" | jq -c 'select(.type == "input") | [.framework, .framework_source]')"
}
check "a named pipe operand (<(cmd)) is one trace, read once" t_fifo

done_testing
