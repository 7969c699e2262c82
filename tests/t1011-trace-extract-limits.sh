#!/bin/sh
# Resource limits (issue 27 item 13, common/reslimit.h): the decompressed
# text of one input (TRIAGE_MAX_INPUT_BYTES), the kernels and the CPU ops
# of one trace (TRIAGE_MAX_KERNELS, TRIAGE_MAX_CPU_OPS): past one, exit 1
# naming it, the trace's records never written; and a closed or empty
# standard input is nothing to analyze (exit 3), item 14.
. "$(dirname "$0")/lib.sh"
GEN=$TESTDIR/gen-trace
EX=$BIN/trace-extract

"$GEN" -n 2 -o "$T/t.json"	# 12 kernels, 12 CPU ops, 12 launches

t_input_bytes() {
	# a small gzip that inflates far past the limit: refused as it is read
	{ printf '{"traceEvents": [\n'; head -c 3000000 /dev/zero | tr '\0' ' '; printf ']}\n'; } |
	    gzip -9 >"$T/bomb.json.gz"
	[ "$(wc -c <"$T/bomb.json.gz")" -lt 20000 ]
	status 1 env TRIAGE_MAX_INPUT_BYTES=1M "$EX" "$T/bomb.json.gz" >"$T/out" 2>"$T/err"
	has "$T/err" "^trace-extract: '$T/bomb.json.gz': the decompressed text is larger than the limit of 1 MiB (TRIAGE_MAX_INPUT_BYTES); the text read so far ends at byte [0-9]* (line [0-9]*, column [0-9]*); no trace of one run is that large: a compression bomb, or raise the limit$"
	# no event record of it went out (the trace record waits for the trace's end)
	eq "input" "$(jq -r .type "$T/out" | tr '\n' ' ' | sed 's/ $//')" "records written"
	# plain text too, and the default takes both
	gzip -dc "$T/bomb.json.gz" >"$T/big.json"
	status 1 env TRIAGE_MAX_INPUT_BYTES=1M "$EX" "$T/big.json" >/dev/null 2>"$T/err"
	has "$T/err" "the input text is larger than the limit of 1 MiB (TRIAGE_MAX_INPUT_BYTES)"
	status 3 "$EX" "$T/bomb.json.gz" >/dev/null 2>&1
	status 1 env TRIAGE_MAX_INPUT_BYTES=1M "$TRIAGE" -q --input "$T/bomb.json.gz" >"$T/r" 2>"$T/err"
	[ ! -s "$T/r" ]
	has "$T/err" "TRIAGE_MAX_INPUT_BYTES"
	# a record stream is one input too
	"$EX" "$T/t.json" >"$T/rec.jsonl"
	status 1 env TRIAGE_MAX_INPUT_BYTES=2K "$BIN/trace-stage" "$T/rec.jsonl" >/dev/null 2>"$T/err"
	eq "trace-stage: '$T/rec.jsonl': the record stream is larger than the limit of 2048 bytes (TRIAGE_MAX_INPUT_BYTES)" \
	    "$(cat "$T/err")"
}
check "decompressed bytes past TRIAGE_MAX_INPUT_BYTES: exit 1 naming the limit" t_input_bytes

t_kernels() {
	status 1 env TRIAGE_MAX_KERNELS=5 "$EX" "$T/t.json" >"$T/out" 2>"$T/err"
	eq "trace-extract: '$T/t.json': more than 5 GPU kernels in one trace, the limit of 5 (TRIAGE_MAX_KERNELS); no trace of one run holds that many (a generated or merged file?); raise the limit to read it anyway, at the cost of memory" \
	    "$(cat "$T/err")"
	eq "input" "$(jq -r .type "$T/out" | tr '\n' ' ' | sed 's/ $//')" "records written"
	status 0 env TRIAGE_MAX_KERNELS=12 "$EX" "$T/t.json" >/dev/null
	status 1 env TRIAGE_MAX_KERNELS=5 "$TRIAGE" -q --input "$T/t.json" >"$T/r" 2>"$T/err"
	[ ! -s "$T/r" ]
	has "$T/err" "the limit of 5 (TRIAGE_MAX_KERNELS)"
}
check "kernels past TRIAGE_MAX_KERNELS: exit 1 naming the limit, no report" t_kernels

t_spool_fails() {
	# the temporary file for the records cannot be made: one message, exit 1
	# (the exit's flush of the spool once failed again, and again, until a
	# segmentation fault)
	"$GEN" -n 40 -o "$T/t40.json"
	status 1 env TMPDIR="$T/nonexistent" TRIAGE_SPOOL_MEM=1000 "$EX" -q "$T/t40.json" \
	    >"$T/out" 2>"$T/err"
	eq "trace-extract: cannot make a temporary file in '$T/nonexistent': No such file or directory" \
	    "$(cat "$T/err")"
	eq "input" "$(jq -r .type "$T/out")" "records written"
}
check "a temporary file that cannot be made: exit 1, one message" t_spool_fails

t_cpu_ops() {
	status 1 env TRIAGE_MAX_CPU_OPS=3 "$EX" "$T/t.json" >/dev/null 2>"$T/err"
	has "$T/err" "^trace-extract: '$T/t.json': more than 3 CPU ops in one trace, the limit of 3 (TRIAGE_MAX_CPU_OPS)"
	# launches count under the same limit
	jq '.traceEvents |= map(select(.cat != "cpu_op"))' "$T/t.json" >"$T/noops.json"
	status 1 env TRIAGE_MAX_CPU_OPS=3 "$EX" "$T/noops.json" >/dev/null 2>"$T/err"
	has "$T/err" "more than 3 launch calls in one trace, the limit of 3 (TRIAGE_MAX_CPU_OPS)"
	status 0 env TRIAGE_MAX_CPU_OPS=12 "$EX" "$T/t.json" >/dev/null
	# a malformed value is the default
	status 0 env TRIAGE_MAX_CPU_OPS=lots TRIAGE_MAX_KERNELS=0 "$EX" "$T/t.json" >/dev/null
}
check "CPU ops and launches past TRIAGE_MAX_CPU_OPS: exit 1 naming the limit" t_cpu_ops

t_closed_stdin() {
	status 3 "$EX" - <&- >/dev/null 2>"$T/err"
	eq "trace-extract: '-': empty input: standard input is closed or empty (nothing was piped in); nothing to analyze" \
	    "$(cat "$T/err")"
	status 3 "$EX" - </dev/null >/dev/null 2>/dev/null
	status 3 "$TRIAGE" --input - <&- >"$T/r" 2>"$T/err"
	[ ! -s "$T/r" ]
	has "$T/err" "^trace-extract: '-': empty input: standard input is closed or empty"
	hasnt "$T/err" 'Bad file descriptor'
	# a closed stdin the run does not read is no matter
	"$TRIAGE" -q --input "$T/t.json" <&- >"$T/r"
	has "$T/r" '^# Triage report'
	# a filter reading records from it has none
	status 3 "$BIN/trace-stage" <&- >/dev/null 2>"$T/err"
	has "$T/err" 'no records in the input'
}
check "a closed standard input reads as an empty one: exit 3 with the message" t_closed_stdin

# A limit set and not understood is said: by each tool (its default
# applies), and by triage before any work (exit 2).
t_bad_limits() {
	"$TESTDIR/gen-trace" -o "$T/ok.json"
	env TRIAGE_MAX_INPUT_BYTES=16GB "$EX" "$T/ok.json" >/dev/null 2>"$T/err"
	has "$T/err" "TRIAGE_MAX_INPUT_BYTES='16GB' is not a limit (a whole number from 1, with k, M, G or T after it or not): the limit of 16 GiB (TRIAGE_MAX_INPUT_BYTES) applies"
	env TRIAGE_MAX_JSON_BYTES=1e30 "$EX" "$T/ok.json" >/dev/null 2>"$T/err"
	has "$T/err" "TRIAGE_MAX_JSON_BYTES='1e30' is not a size"
	env TRIAGE_MAX_KERNELS=16M "$EX" "$T/ok.json" >/dev/null 2>"$T/err"
	[ ! -s "$T/err" ]
	status 2 env TRIAGE_MAX_KERNELS=-1 "$TRIAGE" -q --input "$T/ok.json" >/dev/null 2>"$T/err"
	has "$T/err" "^triage: error: TRIAGE_MAX_KERNELS='-1' is not a limit"
	env TRIAGE_MAX_KERNELS= "$TRIAGE" -q --input "$T/ok.json" >/dev/null
}
check "a limit set and not understood: said (tools), refused (triage)" t_bad_limits

# A name past 64 KiB is cut, with a hash of the whole: two such names that
# share their first 64 KiB stay two rows, and no tool carries megabytes.
t_long_names() {
	python3 -c 'import json
n = "k" + "A" * (200 * 1024)
ev = [{"ph": "X", "cat": "kernel", "name": n, "pid": 0, "tid": 7, "ts": 10, "dur": 5, "args": {"stream": 7}},
      {"ph": "X", "cat": "kernel", "name": n[:-1] + "B", "pid": 0, "tid": 7, "ts": 20, "dur": 5, "args": {"stream": 7}}]
print(json.dumps({"traceEvents": ev}))' >"$T/long.json"
	"$EX" "$T/long.json" >"$T/long.jsonl" 2>"$T/err"
	has "$T/err" "2 event names longer than 64 KiB cut to that, each with a hash of the whole name"
	eq "65510 65510" "$(jq -r 'select(.type == "kernel") | .name | length' "$T/long.jsonl" | tr '\n' ' ' | sed 's/ $//')"
	eq 2 "$(jq -r 'select(.type == "kernel") | .name' "$T/long.jsonl" | sort -u | wc -l | tr -d ' ')"
	has "$T/long.jsonl" '…\[204801 bytes, hash [0-9a-f]\{16\}\]"'
	# the reference keeps them whole
	eq "204801" "$("$EX" -q --compat reference "$T/long.json" | jq -r 'select(.type == "kernel") | .name | length' | head -n 1)"
}
check "names past 64 KiB: cut, a hash of the whole kept, said" t_long_names

done_testing
