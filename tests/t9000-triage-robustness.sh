#!/bin/sh
# scripts/triage end to end on generated traces: the exact report of a small
# trace, the exit status of every defect kind, and no stdout after an error.
. "$(dirname "$0")/lib.sh"

GEN=$TESTDIR/gen-trace

# report FILE [TRIAGE-OPTION...]: run the driver; $T/r.{out,err,rc}.
report() {
	_f=$1
	shift
	set +e
	"$TRIAGE" --compat reference "$@" --input "$_f" >"$T/r.out" 2>"$T/r.err"
	echo $? >"$T/r.rc"
	set -e
}
# The report without its "Input traces" line (it names the file).
body() {
	sed 's|^Input traces: .*|Input traces: TRACE|' "$1"
}

# tests/fixtures/triage/streams2.md is the report of `gen-trace --streams 2`
# (2 decode steps x 2 layers, stage "all"), checked by hand against
# kernel-table.md: per kernel 4 launches of gemm 50, attention 30,
# all-reduce 15 and rmsnorm 10 us, 420 us in all, so gemm 0.20 ms 47.6 %
# (200/420), attention 0.12 ms 28.6 %, all-reduce 0.06 ms 14.3 %, rmsnorm
# 0.04 ms 9.5 %, in descending time.  Names are canonicalised (§2.1: the
# argument list of a "void ...(...)" name is cut), categories follow §2.2
# (gemm; "attention" in DefaultAttention; cross_device_reduce is strong
# communication; rmsnorm is norm).  The location is the layer frame: both it
# and the step frame are python/sglang/ frames of priority 300 (§4.4) active
# at the CPU op's query time, and the later start wins (§4.3); one site, so
# no share is printed.  Single-trace mode prints the overlap placeholder and
# no fusion pattern matches.
t_golden() {
	"$GEN" --streams 2 -o "$T/g.json"
	report "$T/g.json"
	eq 0 "$(cat "$T/r.rc")"
	eq "" "$(cat "$T/r.err")"
	body "$T/r.out" >"$T/g.md"
	same "$FIX/triage/streams2.md" "$T/g.md"
	has "$T/r.out" "^Input traces: $T/g.json$"
}
check "exact report of a small generated trace" t_golden

t_example() {
	# the README's sample trace is gen-trace output
	[ -f "$TOP/examples/sglang-serving.trace.json.gz" ] || return 0
	gzip -dc "$TOP/examples/sglang-serving.trace.json.gz" >"$T/ex1.json"
	"$GEN" -s both -n 4 --streams 2 -o "$T/ex2.json"
	cmp "$T/ex1.json" "$T/ex2.json"
}
check "the README's sample trace is reproducible with gen-trace" t_example

t_quick_start_sample() {
	# the pair of examples/sglang-tp2 is gen-trace output, as its README says
	S=$TOP/examples/sglang-tp2
	gzip -dc "$S/eager/sglang-eager.trace.json.gz" >"$T/e1.json"
	"$GEN" -s both -n 6 --streams 2 --world 2 -o "$T/e2.json"
	cmp "$T/e1.json" "$T/e2.json"
	gzip -dc "$S/graph/sglang-graph.trace.json.gz" >"$T/g1.json"
	"$GEN" -s both -n 6 --streams 2 --graph --world 2 -o "$T/g2.json"
	cmp "$T/g1.json" "$T/g2.json"
	# the README's quick-start command, as written, fills all three tables
	cmd=$(sed -n 's/^sh scripts\/install-deps && make -s && \(build\/bin\/triage .*\)$/\1/p' "$TOP/README.md")
	[ -n "$cmd" ] || { echo "no quick-start command in README.md"; return 1; }
	(cd "$TOP" && TRIAGE_BINDIR=$BIN sh -c "$cmd") >"$T/q.md" 2>"$T/q.err"
	for s in Kernels 'Overlap opportunities' 'Fuse opportunities'; do
		# table lines, less a header and a separator line per table
		sed -n "/^## $s\$/,/^## /p" "$T/q.md" >"$T/sec"
		eq 1 "$(($(grep -c '^| ' "$T/sec") - 2 * $(grep -c '^| ---' "$T/sec") > 0))" \
		    "rows under $s"
	done
	has "$T/q.md" '^| FlashInfer unified allreduce_fusion | Confirmed |'
	has "$T/q.md" '^> \*\*Trace health: ok.\*\* All 32 checks passed on every trace.$'
	# a TP2 deployment's rank, and every share with its base (issue 25)
	has "$T/q.md" '^- \*\*Rank\*\*: 0 of 2 (the trace.s distributedInfo)$'
	has "$T/q.md" '; of the kernel time: gemm 51%, attention 34%, norm 9%;'
	has "$T/q.md" '| Busy: communication, no compute |'
}
check "the quick-start sample fills the kernel, overlap and fuse tables" t_quick_start_sample

# Lenient defects: exit 0, the same report as the clean trace, a warning.
t_lenient() {
	"$GEN" -o "$T/clean.json"
	report "$T/clean.json"
	body "$T/r.out" >"$T/clean.md"
	for d in ctrl:"raw control characters" bom:"byte order mark" \
	    trailing-comma:"trailing commas" no-close:"no closing ']'" \
	    nan:"NaN/Infinity literals" inf:"event skipped: ts_not_finite" \
	    nodur:"missing, null or negative dur" negdur:"or negative dur" \
	    skew:"start before their launch call" strnum: disorder: ns: multimember: plain-gz:; do
		kind=${d%%:*}
		msg=${d#*:}
		f=$T/$kind.json
		case $kind in multimember|plain-gz) f=$f.gz ;; esac
		"$GEN" -d "$kind" -o "$f"
		report "$f"
		eq 0 "$(cat "$T/r.rc")" "exit for $kind"
		body "$T/r.out" >"$T/$kind.md"
		same "$T/clean.md" "$T/$kind.md" || { echo "report differs for $kind"; return 1; }
		if [ -n "$msg" ]; then
			has "$T/r.err" "$msg" || { echo "for $kind"; return 1; }
		else
			eq "" "$(cat "$T/r.err")" "stderr for $kind"
		fi
	done
}
check "lenient defects: exit 0, same report as the clean trace, a warning" t_lenient

t_utf8() {
	for kind in utf8 surrogate; do
		"$GEN" -d "$kind" -o "$T/$kind.json"
		report "$T/$kind.json"
		eq 0 "$(cat "$T/r.rc")"
		iconv -f UTF-8 -t UTF-8 "$T/r.out" >/dev/null
		has "$T/r.err" "shown as U+FFFD"
	done
	report "$T/utf8.json"
	has "$T/r.out" "$(printf '| void flashinfer::BatchDecode\357\277\275Kernel<8u, flashinfer::DefaultAttention> | attention | 0.12 ms | 33.3%% |')"
}
check "invalid UTF-8 and lone surrogates: valid UTF-8 report with U+FFFD" t_utf8

t_warned() {
	# exit 0 with a data-quality warning, and --strict makes each fail
	for d in dup-ranks:"same stream ends" two-gpus:"kernels on 2 GPU processes" \
	    orphan:"launch-to-kernel coverage" absurd-ts:"absurd timestamp" \
	    nodur:"or negative dur"; do
		kind=${d%%:*}
		"$GEN" -d "$kind" -o "$T/$kind.json"
		report "$T/$kind.json"
		eq 0 "$(cat "$T/r.rc")" "exit for $kind"
		has "$T/r.err" "${d#*:}"
		report "$T/$kind.json" --strict
		eq 1 "$(cat "$T/r.rc")" "exit for $kind --strict"
		eq "" "$(cat "$T/r.out")" "stdout for $kind --strict"
		has "$T/r.err" "data-quality warnings are errors under --strict"
	done
}
check "data-quality warnings: exit 0; with --strict exit 1 and no report" t_warned

t_malformed() {
	"$GEN" -d interleave -o "$T/il.json"
	"$GEN" -d truncate=5000 -o "$T/cut.json"
	"$GEN" -d notrailer -o "$T/nt.json.gz"
	"$GEN" -d truncate=700 -o "$T/cut.json.gz"
	for f in il.json cut.json nt.json.gz cut.json.gz; do
		report "$T/$f"
		eq 1 "$(cat "$T/r.rc")" "exit for $f"
		eq "" "$(cat "$T/r.out")" "stdout for $f"
		has "$T/r.err" "^trace-extract: '$T/$f': .* at byte [0-9]* (line [0-9]*, column [0-9]*)"
		eq 1 "$(wc -l <"$T/r.err" | tr -d ' ')" "stderr lines for $f"
	done
}
check "malformed traces: exit 1, one message with the position, no stdout" t_malformed

t_empty() {
	"$GEN" -d empty -o "$T/empty.json"
	report "$T/empty.json"
	eq 3 "$(cat "$T/r.rc")"
	eq "" "$(cat "$T/r.out")"
	has "$T/r.err" "no trace events: the event array is empty"
	"$GEN" -d no-kernels -o "$T/nok.json"
	report "$T/nok.json"
	eq 3 "$(cat "$T/r.rc")"
	eq "" "$(cat "$T/r.out")"
	has "$T/r.err" "no GPU kernel events to analyze; the trace holds .* 12 cpu_op events, 12 cuda_runtime events"
	mkdir -p "$T/nodir"
	report "$T/nodir"
	eq 3 "$(cat "$T/r.rc")"
	eq "" "$(cat "$T/r.out")"
}
check "nothing to analyze: exit 3 saying what was found, no stdout" t_empty

t_missing() {
	report "$T/absent.json"
	eq 1 "$(cat "$T/r.rc")"
	eq "" "$(cat "$T/r.out")"
	has "$T/r.err" "cannot open '$T/absent.json'"
}
check "a missing input: exit 1" t_missing

t_graph_vllm() {
	"$GEN" -f vllm --graph -s decode -o "$T/vg.json"
	report "$T/vg.json"
	eq 0 "$(cat "$T/r.rc")"
	has "$T/r.out" "^Framework: vLLM$"
	has "$T/r.out" "^##### decode$"
	# graph replays: kernels reach Python through the cudaGraphLaunch (no CPU
	# op, so that is the CPU op cell); of the frames active at the launch,
	# cuda_graph.py's __call__ is low-signal (285 - 80, §4.4), so the step
	# frame execute_model (285) is the location
	has "$T/r.out" "| void sgl_demo::rmsnorm_kernel<__nv_bfloat16, 8> | norm | 0.04 ms | 11.1% | 4 | vllm/v1/worker/gpu_model_runner.py:1400 execute_model | cudaGraphLaunch |"
}
check "vLLM CUDA-graph trace with decode annotations" t_graph_vllm

t_model_line() {
	mkdir -p "$T/prof/decode"
	"$GEN" -o "$T/prof/decode/t.trace.json"
	printf '{"model_path": "org/Demo-8B", "model": "ignored", "tp_size": 1}' >"$T/prof/server_args.json"
	report "$T/prof"
	eq 0 "$(cat "$T/r.rc")"
	eq "Input traces: $T/prof/decode/t.trace.json
Model: org/Demo-8B" "$(sed -n '4,5p' "$T/r.out")"
	has "$T/r.out" "^##### decode$"
	rm "$T/prof/server_args.json"
	report "$T/prof"
	hasnt "$T/r.out" "^Model:"
}
check "profile directory: decode/ subfolder, server_args.json gives the Model line" t_model_line

t_dual_errors() {
	"$GEN" -o "$T/m.json"
	set +e
	"$TRIAGE" --mapping-input "$T/m.json" --formal-input "$T/il.json" >"$T/d.out" 2>"$T/d.err"
	rc=$?
	set -e
	eq 1 "$rc"
	eq "" "$(cat "$T/d.out")"
	set +e
	"$TRIAGE" --mapping-input "$T/cut.json" --formal-input "$T/m.json" >"$T/d.out" 2>"$T/d.err"
	rc=$?
	set -e
	eq 1 "$rc"
	eq "" "$(cat "$T/d.out")"
	has "$T/d.err" "truncated JSON"
}
check "mapping/formal mode: a bad trace in either role is exit 1, no stdout" t_dual_errors

done_testing
