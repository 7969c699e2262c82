#!/bin/sh
# trace-stage: the analyzed GPU process, staging without data-quality
# warnings (trace-health gives them: t1200), exit 3 for nothing to analyze,
# and malformed record streams.
. "$(dirname "$0")/lib.sh"

GEN=$TESTDIR/gen-trace
EX=$BIN/trace-extract
ST=$BIN/trace-stage

# stage DEFECT [GEN-OPTION...]: generate, extract, stage; $T/$1.{out,err,rc}.
stage() {
	_d=$1
	shift
	"$GEN" -d "$_d" "$@" -o "$T/$_d.json"
	"$EX" -q "$T/$_d.json" >"$T/$_d.jsonl"
	set +e
	"$ST" "$T/$_d.jsonl" >"$T/$_d.out" 2>"$T/$_d.err"
	echo $? >"$T/$_d.rc"
	set -e
}

t_clean() {
	"$GEN" -o "$T/clean.json"
	"$EX" "$T/clean.json" | "$ST" >"$T/clean.out" 2>"$T/clean.err"
	eq "" "$(cat "$T/clean.err")"
	eq '{"type":"gpu_pids","t":0,"selected":"0","time_us":{"0":360},"launch_latency_p50_us":39.5,"idle_starts":2,"idle_start_latency_us":4.5,"launch_start_min_us":12.5}' \
	    "$(jq -c 'select(.type == "gpu_pids")' "$T/clean.out")"
}
check "clean trace: no warnings; the GPU process and its kernel time" t_clean

t_quiet() {
	# defective traces are staged without a word: trace-health judges them
	for d in dup-ranks two-gpus orphan absurd-ts skew; do
		stage $d
		eq 0 "$(cat "$T/$d.rc")" "$d exit"
		eq "" "$(cat "$T/$d.err")" "$d stderr"
	done
}
check "defective traces: staged, no data-quality warnings" t_quiet

t_gpu_pids() {
	eq 0 "$(cat "$T/two-gpus.rc")"
	eq '{"0":360,"1":360}' "$(jq -c 'select(.type == "gpu_pids") | .time_us' "$T/two-gpus.out")"
	eq 12 "$(jq -c 'select(.type == "kernel" and .sel)' "$T/two-gpus.out" | wc -l | tr -d ' ')"
	eq 12 "$(jq -c 'select(.type == "kernel" and (.sel | not))' "$T/two-gpus.out" | wc -l | tr -d ' ')"
}
check "several GPU processes: which one is analyzed and what the others hold" t_gpu_pids

t_heavier_pid() {
	# the heavier process wins (pid 1: 0.76 ms); the warning gives the
	# lighter one's share, 0.36 of 1.12 ms
	"$GEN" -d two-gpus -o "$T/tg.json"
	"$EX" -q "$T/tg.json" | jq -c 'if .type == "kernel" and .pid == "1" and (.name | test("gemm")) then .dur = 150 else . end' >"$T/tg.jsonl"
	"$ST" "$T/tg.jsonl" >"$T/tg.out" 2>"$T/tg.err"
	eq '"1"' "$(jq -c 'select(.type == "gpu_pids") | .selected' "$T/tg.out")"
	eq '{"0":360,"1":760}' "$(jq -c 'select(.type == "gpu_pids") | .time_us' "$T/tg.out")"
}
check "the heaviest GPU process is analyzed" t_heavier_pid

t_skew() {
	# kernels 30 us before their launch: attribution uses the correlation
	# (trace-health reports the skew: t1200 skew)
	eq 12 "$(jq -c 'select(.type == "kernel" and .external_id)' "$T/skew.out" | wc -l | tr -d ' ')"
}
check "small clock skew: kernels keep their External id" t_skew

t_no_strict() {
	# --strict moved to trace-health (t1201 strict)
	status 2 "$ST" --strict "$T/skew.jsonl" >/dev/null 2>"$T/s.err"
	has "$T/s.err" "^trace-stage: unknown or ambiguous option '--strict'"
}
check "--strict is trace-health's option now" t_no_strict

t_extract_quality() {
	"$GEN" -d nodur -d negdur -o "$T/dur.json"
	"$EX" "$T/dur.json" >"$T/dur.jsonl" 2>"$T/dur.err"
	has "$T/dur.err" "'$T/dur.json': 1 event skipped: dur_null_or_not_a_number"
	has "$T/dur.err" "'$T/dur.json': 2 GPU events with missing, null or negative dur (skipped)"
	eq '{"kernels_without_positive_dur":2,"negative_dur":1}' \
	    "$(jq -c 'select(.type == "stats") | .warnings | {kernels_without_positive_dur, negative_dur}' "$T/dur.jsonl")"
	eq 0 "$(jq -c 'select(.type == "kernel" and (.name | test("dur_kernel")))' "$T/dur.jsonl" | wc -l | tr -d ' ')"
	status 1 "$EX" --strict "$T/dur.json" >/dev/null 2>"$T/sx.err"
	has "$T/sx.err" "data-quality warnings are errors under --strict"
	# a dur of 0 is work shorter than the clock, said apart (trace-health: info)
	"$GEN" -o "$T/z.json"
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
k = [e for e in d["traceEvents"] if e.get("cat") == "kernel"]
k[0]["dur"] = 0
json.dump(d, open(sys.argv[1], "w"))' "$T/z.json"
	"$EX" "$T/z.json" >/dev/null 2>"$T/z.err"
	has "$T/z.err" "'$T/z.json': 1 GPU item of zero duration, shorter than the trace's clock resolution (no kernel row, as in the reference)$"
	hasnt "$T/z.err" "negative dur"
}
check "kernels with missing, null or negative dur: skipped, counted; --strict fails" t_extract_quality

t_no_kernels() {
	stage no-kernels
	eq 3 "$(cat "$T/no-kernels.rc")"
	has "$T/no-kernels.err" "^trace-stage: '$T/[^']*': no GPU kernel events to analyze; the trace holds 4 uncategorized events, 2 user_annotation events, 14 python_function events, 12 cpu_op events, 12 cuda_runtime events$"
}
check "no GPU kernels: exit 3 with the events per category" t_no_kernels

t_some_kernels() {
	# a trace without kernels next to one with kernels is not an error
	# (the second trace renumbered: one stream numbers its traces once)
	{ cat "$T/no-kernels.jsonl"; jq -c 'if has("t") then .t = 1 else . end' "$T/clean.out"; } |
	    jq -c 'select(.type != "gpu_pids") | if .type == "kernel" then del(.stage, .sel) else . end' >"$T/mix.jsonl"
	status 0 "$ST" "$T/mix.jsonl" >/dev/null
}
check "kernels in one trace of several: exit 0" t_some_kernels

t_truncated_stream() {
	head -n 20 "$T/orphan.jsonl" >"$T/cut.jsonl"
	status 1 "$ST" "$T/cut.jsonl" >/dev/null 2>"$T/c.err"
	has "$T/c.err" "^trace-stage: $T/cut.jsonl: input ended inside trace 0 (no stats record); the upstream tool probably failed"
	# a line cut mid-record
	{ head -n 20 "$T/orphan.jsonl"; sed -n 21p "$T/orphan.jsonl" | head -c 30; } >"$T/cut2.jsonl"
	status 1 "$ST" "$T/cut2.jsonl" >/dev/null 2>"$T/c2.err"
	has "$T/c2.err" "^trace-stage: $T/cut2.jsonl:21: record is not a JSON object"
}
check "a stream cut short: exit 1" t_truncated_stream

t_bad_records() {
	printf '{"type":"trace","t":0}\n{"type":"kernel","name":"k","ts":"x","dur":2}\n' >"$T/b1.jsonl"
	status 1 "$ST" "$T/b1.jsonl" >/dev/null 2>"$T/b.err"
	has "$T/b.err" "b1.jsonl:2: kernel record: member"
	printf '{"type":"trace","t":0}\n{"type":"kernel","name":"k","ts":NaN,"dur":2}\n' >"$T/b2.jsonl"
	status 1 "$ST" "$T/b2.jsonl" >/dev/null 2>"$T/b.err"
	has "$T/b.err" "b2.jsonl:2: kernel record: member"
	printf '{"type":"kernel","t":0,"name":"k","ts":1,"dur":2}\n' >"$T/b3.jsonl"
	status 1 "$ST" "$T/b3.jsonl" >/dev/null 2>"$T/b.err"
	has "$T/b.err" "b3.jsonl:1: kernel record outside a trace"
	printf '[1, 2]\n' >"$T/b4.jsonl"
	status 1 "$ST" "$T/b4.jsonl" >/dev/null 2>"$T/b.err"
	has "$T/b.err" "b4.jsonl:1: record is not a JSON object"
	printf '{"type":5}\n' >"$T/b5.jsonl"
	status 1 "$ST" "$T/b5.jsonl" >/dev/null 2>"$T/b.err"
	has "$T/b.err" "b5.jsonl:1: record has no \"type\" string member"
	printf '{"type":"trace","t":0}\n{"type":"trace","t":1}\n' >"$T/b6.jsonl"
	status 1 "$ST" "$T/b6.jsonl" >/dev/null 2>"$T/b.err"
	has "$T/b.err" "b6.jsonl:2: trace record inside trace 0 (its stats record is missing"
	status 1 "$ST" "$T/missing.jsonl" >/dev/null 2>"$T/b.err"
	has "$T/b.err" "cannot open '$T/missing.jsonl'"
}
check "malformed records: exit 1 naming file:line" t_bad_records

t_nul_type() {
	# a type holding a NUL after a known name (found by fuzzing: read past
	# the end of the name it was compared with)
	printf '{"type":"kernel\000xyz","t":0}\n' >"$T/nt.jsonl"
	status 0 "$ST" "$T/nt.jsonl" >"$T/nt.out" 2>"$T/nt.err"
	cmp "$T/nt.jsonl" "$T/nt.out"
	eq "" "$(cat "$T/nt.err")"
}
check "a record type with a NUL in it is just an unknown type" t_nul_type

t_passthrough() {
	# unknown record types pass through untouched, in order
	{ printf '{"type":"note","x":[1,{"y":"\\u00e9"}]}\n'; cat "$T/clean.json" | "$EX" -q -; } >"$T/pt.jsonl"
	"$ST" "$T/pt.jsonl" | head -n 1 >"$T/pt.out"
	eq '{"type":"note","x":[1,{"y":"\u00e9"}]}' "$(cat "$T/pt.out")"
}
check "unknown record types pass through" t_passthrough

t_empty_stream() {
	# nothing to analyze (exit 3), said so: usually the tool before failed
	: >"$T/empty.jsonl"
	status 3 "$ST" "$T/empty.jsonl" >"$T/e.out" 2>"$T/e.err"
	eq "" "$(cat "$T/e.out")"
	has "$T/e.err" "^trace-stage: no records in the input: the tool before this one wrote nothing"
	# every filter says the same of an empty stream
	for f in trace-health step-stats overlap-sweep fuse-detect triage-render; do
		status 3 "$BIN/$f" <"$T/empty.jsonl" >"$T/e.out" 2>"$T/e.err"
		eq "" "$(cat "$T/e.out")" "$f output"
		has "$T/e.err" "^$f: no records in the input"
	done
	for f in kernel-map rank-skew; do
		status 3 "$BIN/$f" <"$T/empty.jsonl" >/dev/null 2>&1
	done
}
check "an empty stream: exit 3 from every filter, with a message" t_empty_stream

done_testing
