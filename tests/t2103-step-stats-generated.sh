#!/bin/sh
# step-stats on generated traces (tests/gen-trace) against an independent
# jq computation of every figure (tests/fixtures/step-stats/recompute.jq):
# eager and graph decode, two streams with all-reduce, prefill and decode
# stages, several profiler steps.
. "$(dirname "$0")/lib.sh"

# compare GEN-TRACE-OPTIONS...: step-stats and jq agree on the trace
compare() {
	"$TOP/tests/gen-trace" "$@" >"$T/t.json"
	"$BIN/trace-extract" -q "$T/t.json" | "$BIN/trace-stage" -q >"$T/rec"
	"$BIN/step-stats" <"$T/rec" >"$T/out"
	{
		jq -r 'select(.type == "gpu_time") | ["gpu_time", .t, .stage, .kernels, .kernel_us,
		    .busy_us, .span_us, .idle_us, .idle_launch_us, .compute_us, .comm_us,
		    .memcpy_us, .graph_us, (.eager_kernels // "-")] | @tsv' "$T/out"
		jq -r 'select(.type == "step") | ["step", .t, .index, .kernels, .gpu_busy_us,
		    .gpu_span_us] | @tsv' "$T/out"
	} | sort >"$T/got"
	jq -s -r -f "$FIX/step-stats/recompute.jq" "$T/rec" | sort >"$T/want"
	[ -s "$T/want" ]
	# same lines, numbers equal to 1e-9 relative (the traces' times are integers)
	awk -F '\t' '
	function abs(x) { return x < 0 ? -x : x }
	NR == FNR { want[FNR] = $0; n = FNR; next }
	{
		if (FNR > n) { print "extra line: " $0; bad = 1; next }
		split(want[FNR], w, "\t")
		for (i = 1; i <= NF; i++) {
			if ($i == w[i]) continue
			if ($i ~ /^-?[0-9.e+-]+$/ && abs($i - w[i]) <= 1e-9 * (abs(w[i]) + 1)) continue
			printf "line %d field %d: step-stats %s, jq %s\n", FNR, i, $i, w[i]
			bad = 1
		}
		got = FNR
	}
	END {
		if (got != n) { print "line counts differ: " got " vs " n; bad = 1 }
		exit bad
	}' "$T/want" "$T/got"
}

check 'default trace: eager decode, two profiler steps' compare
check 'two streams with all-reduce, prefill and decode stages' compare -s both -n 4 --streams 2
check 'CUDA-graph decode replays, two streams, prefill eager' compare -s both -n 5 --streams 2 --graph
check 'vLLM vocabulary, three layers, graph decode' compare -f vllm -n 6 -l 3 --graph -s decode

done_testing
