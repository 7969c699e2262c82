#!/bin/sh
# The links trace-extract resolves at a trace's end (cmd/trace-extract/
# links.c, issue 30): the correlation map (the last event with both ids
# wins) and its corr records, the copy and set calls kept only when a GPU
# item carries their correlation, the kernel launches whose items all had
# a dur of 0, and the CPU ops kept only when a kernel carries their
# External id.  They are joined by sorting in runs on disk past the
# memory budget: the records must be the same with every run a few
# records long (TRIAGE_SPOOL_MEM=64) as in memory, whatever the order of
# the events in the file.
. "$(dirname "$0")/lib.sh"

EX=$BIN/trace-extract

# The events: correlations given out of order, kernels before their
# launches, an op linked by its correlation only, ops no kernel names, a
# correlation mapped twice (the later event wins), copies with and without
# their GPU item, a launch whose kernel had a dur of 0.
cat >"$T/links.json" <<'EOF'
{"traceEvents": [
{"ph": "X", "cat": "kernel", "name": "k_late_launch", "pid": 0, "tid": 7, "ts": 300, "dur": 4, "args": {"correlation": 30, "stream": 7}},
{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 9, "tid": 9, "ts": 290, "dur": 20, "args": {"External id": 103}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 9, "ts": 295, "dur": 2, "args": {"correlation": 30, "External id": 101}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 9, "ts": 296, "dur": 2, "args": {"correlation": 30, "External id": 103}},
{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 9, "tid": 9, "ts": 100, "dur": 20, "args": {"External id": 102}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 9, "ts": 105, "dur": 2, "args": {"correlation": 20, "External id": 102}},
{"ph": "X", "cat": "kernel", "name": "k_own_ext", "pid": 0, "tid": 7, "ts": 110, "dur": 5, "args": {"correlation": 20, "External id": 102, "stream": 7}},
{"ph": "X", "cat": "cpu_op", "name": "aten::unused", "pid": 9, "tid": 9, "ts": 130, "dur": 5, "args": {"External id": 104}},
{"ph": "X", "cat": "cpu_op", "name": "aten::by_corr", "pid": 9, "tid": 9, "ts": 140, "dur": 20, "args": {"correlation": 10}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 9, "ts": 145, "dur": 2, "args": {"correlation": 10, "External id": 105}},
{"ph": "X", "cat": "kernel", "name": "k_corr_only", "pid": 0, "tid": 7, "ts": 150, "dur": 5, "args": {"correlation": 10, "stream": 7}},
{"ph": "X", "cat": "cpu_op", "name": "aten::copy_", "pid": 9, "tid": 9, "ts": 160, "dur": 20, "args": {"External id": 106}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 9, "tid": 9, "ts": 161, "dur": 2, "args": {"correlation": 40, "External id": 106}},
{"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pinned -> Device)", "pid": 0, "tid": 7, "ts": 170, "dur": 3, "args": {"correlation": 40, "stream": 7, "bytes": 4096}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaMemsetAsync", "pid": 9, "tid": 9, "ts": 175, "dur": 2, "args": {"correlation": 41}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 9, "ts": 180, "dur": 2, "args": {"correlation": 5, "External id": 107}},
{"ph": "X", "cat": "kernel", "name": "k_zero", "pid": 0, "tid": 7, "ts": 185, "dur": 0, "args": {"correlation": 5, "stream": 7}}
]}
EOF

# ex OUT [ARGS]: the records of links.json, in memory and in runs of a few records
ex() {
	_o=$1
	shift
	"$EX" -q "$@" "$T/links.json" >"$T/$_o.mem"
	TRIAGE_SPOOL_MEM=64 "$EX" -q "$@" "$T/links.json" >"$T/$_o"
	same "$T/$_o.mem" "$T/$_o"
}

t_corr_records() {
	ex x.jsonl
	# k_late_launch (30), k_corr_only (10) and the memcpy item (40) need the map; 30
	# maps to the later launch's 103
	eq '10 105|30 103|40 106' "$(jq -r 'select(.type == "corr") | "\(.correlation) \(.external_id)"' \
	    "$T/x.jsonl" | paste -sd '|')"
}
check "corr records: by correlation, the later of two events with both ids wins" t_corr_records

t_launches() {
	ex x.jsonl
	# the memset call's item was never recorded: dropped; the copy's kept
	eq 'cudaLaunchKernel 30|cudaLaunchKernel 30|cudaLaunchKernel 20|cudaLaunchKernel 10|cudaMemcpyAsync 40|cudaLaunchKernel 5' \
	    "$(jq -r 'select(.type == "launch") | "\(.name) \(.correlation)"' "$T/x.jsonl" |
	    paste -sd '|')"
	eq '6 1 1' "$(jq -r 'select(.type == "stats") |
	    "\(.launches) \(.warnings.launches_zero_dur) \(.warnings.kernels_zero_dur)"' "$T/x.jsonl")"
}
check "launches: a copy's call kept for its GPU item, a set's without one dropped, a dur-0 kernel's counted" \
    t_launches

t_ops() {
	ex x.jsonl
	# aten::mm through k_late_launch's correlation (103), aten::add by its kernel's own
	# id, aten::by_corr through its correlation (105, k_corr_only's), aten::copy_ through
	# the memcpy item's (106); not aten::unused (104)
	eq 'aten::mm|aten::add|aten::by_corr|aten::copy_' \
	    "$(jq -r 'select(.type == "cpu_op") | .name' "$T/x.jsonl" | paste -sd '|')"
	ex all.jsonl --all-ops
	eq 5 "$(jq -s '[.[] | select(.type == "cpu_op")] | length' "$T/all.jsonl")"
}
check "CPU ops: kept when a kernel carries their id, own or through a correlation; all with --all-ops" \
    t_ops

t_reversed() {
	# the same events last to first: every correlation and id now comes in descending order
	{
		echo '{"traceEvents": ['
		sed -n '/^{"ph"/p' "$T/links.json" | sed 's/},$/}/' | awk '{ l[NR] = $0 } END {
			for (i = NR; i >= 1; i--) print l[i] (i > 1 ? "," : "") }'
		echo ']}'
	} >"$T/rev.json"
	"$EX" -q "$T/rev.json" >"$T/rev.mem"
	TRIAGE_SPOOL_MEM=64 "$EX" -q "$T/rev.json" >"$T/rev.jsonl"
	same "$T/rev.mem" "$T/rev.jsonl"
	# now the earlier launch of correlation 30 comes later in the file and wins
	eq '10 105|30 101|40 106' "$(jq -r 'select(.type == "corr") | "\(.correlation) \(.external_id)"' \
	    "$T/rev.jsonl" | paste -sd '|')"
	eq 'aten::copy_|aten::by_corr|aten::add' \
	    "$(jq -r 'select(.type == "cpu_op") | .name' "$T/rev.jsonl" | paste -sd '|')"
}
check "events in reverse order: the same joins, the map's later event still wins" t_reversed

t_generated() {
	# a generated trace of many launches, ops and kernels, frames and CUDA graphs
	"$TESTDIR/gen-trace" -s both -n 40 -l 6 --streams 2 -o "$T/gen.json"
	"$EX" -q "$T/gen.json" >"$T/gen.mem"
	TRIAGE_SPOOL_MEM=64 "$EX" -q "$T/gen.json" >"$T/gen.jsonl"
	same "$T/gen.mem" "$T/gen.jsonl"
	"$TESTDIR/gen-trace" -s decode -n 20 --graph -d two-gpus -o "$T/graph.json"
	"$EX" -q "$T/graph.json" >"$T/graph.mem"
	TRIAGE_SPOOL_MEM=64 "$EX" -q "$T/graph.json" >"$T/graph.jsonl"
	same "$T/graph.mem" "$T/graph.jsonl"
	test "$(grep -c '"type":"corr"' "$T/graph.jsonl")" -gt 10
}
check "generated traces: the same records with the joins in runs on disk" t_generated

done_testing
