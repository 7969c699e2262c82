#!/bin/sh
# trace-health: the record's shape, the verdict rule, --strict, records
# passing through, several traces, and bad input.
. "$(dirname "$0")/lib.sh"

GEN=$TESTDIR/gen-trace
EX=$BIN/trace-extract
ST=$BIN/trace-stage
TH=$BIN/trace-health

IDS='no_kernels graph_launch_without_kernels launch_without_kernel kernel_without_launch no_python_stacks no_cpu_ops no_shapes merged_devices clock_offset clock_skew stream_overlap absurd_timestamps truncated duplicate_event_arrays skipped_events short_capture'

staged() {	# staged NAME [GEN-OPTION...]
	_n=$1
	shift
	"$GEN" "$@" -o "$T/$_n.json"
	"$EX" -q "$T/$_n.json" | "$ST" -q >"$T/$_n.jsonl"
}

staged clean
staged graph --graph -s both -n 3 --streams 2 -f vllm
staged dup -d dup-ranks
staged orphan -d orphan
staged both -d dup-ranks -d orphan

t_clean() {
	for n in clean graph; do
		"$TH" "$T/$n.jsonl" >"$T/$n.out" 2>"$T/$n.err"
		eq "" "$(cat "$T/$n.err")" "$n stderr"
		eq 1 "$(jq -c 'select(.type == "health")' "$T/$n.out" | wc -l | tr -d ' ')"
		eq ok "$(jq -r 'select(.type == "health") | .verdict' "$T/$n.out")"
		eq "$IDS" "$(jq -r 'select(.type == "health") | [.checks[].id] | join(" ")' "$T/$n.out")"
		eq '["ok"]' "$(jq -c 'select(.type == "health") | [.checks[].status] | unique' "$T/$n.out")"
		eq '[[]]' "$(jq -c 'select(.type == "health") | [.checks[].affects] | unique' "$T/$n.out")"
	done
	eq '{"type":"health","t":0,"role":"single","path":"'"$T"'/clean.json","verdict":"ok"}' \
	    "$(jq -c 'select(.type == "health") | del(.checks)' "$T/clean.out")"
	eq '{"id":"launch_without_kernel","status":"ok","value":0,"detail":"each of 12 CUDA launches has its kernel","affects":[]}' \
	    "$(jq -c 'select(.type == "health") | .checks[2]' "$T/clean.out")"
}
check "a trace without defects: ok, every check ok, nothing on stderr" t_clean

t_shape() {
	# every check object has exactly the documented members and kinds
	# (the second trace renumbered: one stream numbers its traces once)
	{ cat "$T/clean.out"; jq -c 'if has("t") then .t = 1 else . end' "$T/dup.jsonl"; } |
	    "$TH" -q >"$T/shape.out"
	eq true "$(jq -s '[.[] | select(.type == "health") | .checks[] |
	    (keys == ["affects","detail","id","status","value"]) and (.id | type) == "string" and
	    (.status | IN("ok","info","limited","warn","fail")) and (.value | type) == "number" and
	    (.value == (.value | floor)) and (.detail | type) == "string" and (.detail != "") and
	    (.affects | type) == "array" and
	    all(.affects[]; IN("kernel","overlap","fuse","gpu_time","step")) and
	    ((.status | IN("ok","info")) == (.affects == []))] | all' "$T/shape.out")"
}
check "the check objects: id, status, value, detail, affects" t_shape

t_verdict_rule() {
	"$TH" -q "$T/orphan.jsonl" >"$T/v1.out"
	eq "degraded launch_without_kernel=warn" "$(jq -r 'select(.type == "health") |
	    "\(.verdict) \([.checks[] | select(.status != "ok") | "\(.id)=\(.status)"] | join(" "))"' "$T/v1.out")"
	# a failing check makes the trace unusable, whatever warns beside it
	"$TH" -q "$T/both.jsonl" >"$T/v2.out"
	eq "unusable launch_without_kernel=warn stream_overlap=fail" "$(jq -r 'select(.type == "health") |
	    "\(.verdict) \([.checks[] | select(.status != "ok") | "\(.id)=\(.status)"] | join(" "))"' "$T/v2.out")"
}
check "verdict: any fail is unusable, else any warn is degraded" t_verdict_rule

t_strict() {
	status 0 "$TH" --strict "$T/clean.jsonl" >/dev/null
	for n in dup orphan; do
		status 1 "$TH" --strict "$T/$n.jsonl" >"$T/s.out" 2>"$T/s.err"
		has "$T/s.err" "^trace-health: '$T/$n.json': verdict [a-z]*; data-quality warnings are errors under --strict$"
		# the whole stream is still written
		eq "$(wc -l <"$T/$n.jsonl" | tr -d ' ')" "$(grep -vc '"type":"health"' "$T/s.out")"
	done
	# -q silences the warnings, not the --strict error
	status 1 "$TH" -q -s "$T/dup.jsonl" >/dev/null 2>"$T/sq.err"
	eq "trace-health: '$T/dup.json': verdict unusable; data-quality warnings are errors under --strict" "$(cat "$T/sq.err")"
	# --expect-steps turns a short capture into an error under --strict
	status 1 "$TH" -q --strict --expect-steps 3 "$T/clean.jsonl" >/dev/null 2>/dev/null
	status 0 "$TH" -q --strict --expect-steps 2 "$T/clean.jsonl" >/dev/null
	# only defects: a capture without stacks or steps (limited) and kernels
	# that began before the capture (information) pass --strict
	jq -c 'select(.type != "frame" and .type != "annotation") |
	    if .type == "stats" then .frames = 0 else . end' "$T/clean.jsonl" >"$T/lim.jsonl"
	status 0 "$TH" --strict "$T/lim.jsonl" >"$T/lim.out" 2>"$T/lim.err"
	eq "ok no_python_stacks=limited short_capture=limited" "$(jq -r 'select(.type == "health") |
	    "\(.verdict) \([.checks[] | select(.status != "ok") | "\(.id)=\(.status)"] | join(" "))"' "$T/lim.out")"
	eq "" "$(cat "$T/lim.err")"
}
check "--strict: exit 1 when a verdict is not ok, after the whole stream" t_strict

t_passthrough() {
	# every record passes unchanged and in order; the health record comes
	# just before its trace's stats record
	{ printf '{"type":"note","x":[1,{"y":"\\u00e9"}]}\n'; cat "$T/orphan.jsonl"; } >"$T/pt.jsonl"
	"$TH" -q "$T/pt.jsonl" >"$T/pt.out"
	grep -v '"type":"health"' "$T/pt.out" >"$T/pt.rest"
	same "$T/pt.jsonl" "$T/pt.rest"
	eq '"health" "stats"' "$(tail -n 2 "$T/pt.out" | jq -r .type | sed 's/.*/"&"/' | tr '\n' ' ' | sed 's/ $//')"
}
check "every record passes through; health comes before stats" t_passthrough

t_several_traces() {
	"$EX" -q "$T/clean.json" "$T/dup.json" "$T/orphan.json" | "$ST" -q | "$TH" -q >"$T/m.out"
	eq '[0,"ok"] [1,"unusable"] [2,"degraded"]' "$(jq -c 'select(.type == "health") | [.t, .verdict]' "$T/m.out" | tr '\n' ' ' | sed 's/ $//')"
	# and several files on the command line, in order
	"$TH" -q "$T/orphan.jsonl" "$T/clean.jsonl" >"$T/m2.out"
	eq "degraded ok" "$(jq -r 'select(.type == "health") | .verdict' "$T/m2.out" | tr '\n' ' ' | sed 's/ $//')"
}
check "one health record per trace" t_several_traces

t_trace_stage_first() {
	"$EX" -q "$T/clean.json" >"$T/raw.jsonl"
	status 1 "$TH" "$T/raw.jsonl" >/dev/null 2>"$T/raw.err"
	has "$T/raw.err" "^trace-health: $T/raw.jsonl:[0-9]*: trace 0 has kernels but no gpu_pids record; run trace-stage before trace-health$"
}
check "an unstaged stream with kernels is an error" t_trace_stage_first

t_bad_input() {
	head -n 20 "$T/orphan.jsonl" >"$T/cut.jsonl"
	status 1 "$TH" "$T/cut.jsonl" >/dev/null 2>"$T/c.err"
	has "$T/c.err" "^trace-health: $T/cut.jsonl: input ended inside trace 0 (no stats record); the upstream tool probably failed"
	printf '{"type":"trace","t":0}\n{"type":"launch","t":0,"name":"l","ts":1,"dur":2}\n' >"$T/b1.jsonl"
	status 1 "$TH" "$T/b1.jsonl" >/dev/null 2>"$T/b.err"
	has "$T/b.err" "b1.jsonl:2: launch record: member 'correlation' is missing"
	printf '{"type":"gpu_pids","t":0,"selected":"0","time_us":{}}\n' >"$T/b2.jsonl"
	status 1 "$TH" "$T/b2.jsonl" >/dev/null 2>"$T/b.err"
	has "$T/b.err" "b2.jsonl:1: gpu_pids record for trace 0 outside that trace"
	status 1 "$TH" "$T/missing.jsonl" >/dev/null 2>"$T/b.err"
	has "$T/b.err" "cannot open '$T/missing.jsonl'"
	: >"$T/empty.jsonl"
	status 3 "$TH" "$T/empty.jsonl" >"$T/e.out" 2>"$T/e.err"
	eq "" "$(cat "$T/e.out")"
	has "$T/e.err" "no records in the input"
}
check "malformed, truncated and empty streams" t_bad_input

t_usage() {
	status 2 "$TH" --expect-steps 0 "$T/clean.jsonl" >/dev/null 2>"$T/u.err"
	has "$T/u.err" "^trace-health: bad --expect-steps value, too small: 0"
	status 2 "$TH" --expect-steps x "$T/clean.jsonl" >/dev/null 2>"$T/u.err"
	has "$T/u.err" "bad --expect-steps value"
	status 2 "$TH" --bogus >/dev/null 2>"$T/u.err"
	status 0 "$TH" --help >"$T/h.out"
	has "$T/h.out" "^usage: trace-health \[-qs\] \[--expect-steps N\] \[file ...\]"
	has "$T/h.out" "--strict"
}
check "usage: --expect-steps takes a positive count" t_usage

t_write_error() {
	if [ -w /dev/full ]; then
		status 1 "$TH" -q "$T/clean.jsonl" >/dev/full 2>"$T/full.err"
		has "$T/full.err" "^trace-health: write error on stdout"
	fi
}
check "a write error is exit 1" t_write_error

done_testing
