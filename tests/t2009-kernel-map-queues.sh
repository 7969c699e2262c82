#!/bin/sh
# kernel-map reads a trace's kernels, CPU ops and launches from the reader's
# queues and attributes them by sorting and merging (issue 30): its records
# must be the same with every sort spilling runs of a few records to disk
# (TRIAGE_SPOOL_MEM=64) as in memory, on every path: the sampled mapping of
# a non-SGLang run, SGLang's, the frame records' (trace-extract --frames),
# CUDA graphs, two GPU processes, late stages, --sites-only and --mapping.
. "$(dirname "$0")/lib.sh"

GEN=$TESTDIR/gen-trace
EX=$BIN/trace-extract
ST=$BIN/trace-stage
KM=$BIN/kernel-map

# both STREAM [ARGS]: kernel-map's records in memory and on disk are the same
both() {
	_s=$1
	shift
	"$KM" -q "$@" "$_s" >"$T/mem"
	TRIAGE_SPOOL_MEM=64 "$KM" -q "$@" "$_s" >"$T/disk"
	same "$T/mem" "$T/disk"
}

t_paths() {
	for fw in sglang vllm; do
		for x in "" --frames; do
			"$GEN" -f $fw -s both -n 6 -l 3 --streams 2 -o "$T/g.json"
			"$EX" -q $x "$T/g.json" | "$ST" -q >"$T/s"
			both "$T/s"
			both "$T/s" --sites-only
			"$EX" -q $x "$T/g.json" | "$ST" -q --late-stages >"$T/late"
			both "$T/late"
		done
	done
	# the sampled mapping reached the disk path too: 16 of each kernel's launches
	test "$(jq -s '[.[] | select(.type == "site" and .scope == "mapping_stage")] | length' \
	    "$T/disk")" -gt 0
}
check "sampled and full mappings, frames and contexts, late stages: the same records" t_paths

t_graphs() {
	"$GEN" -s decode -n 8 --graph -d two-gpus -o "$T/g.json"
	"$EX" -q "$T/g.json" | "$ST" -q --late-stages >"$T/s"
	both "$T/s"
	# most of the decode time in graphs: the note, found through the sorted launches
	eq graph_launch_attribution "$(jq -r 'select(.type == "note") | .id' "$T/disk")"
	both "$T/s" --sites-only
	# eager prefill and graph decode steps in one stage (no annotations): the
	# share is summed kernel by kernel, each with its own attribution
	"$GEN" -s both -n 6 -l 3 --graph -o "$T/m.json"
	grep -v '"cat": "user_annotation"' "$T/m.json" >"$T/mix.json"
	"$EX" -q "$T/mix.json" | "$ST" -q >"$T/s"
	both "$T/s"
	eq '67.2% of the trace' "$(jq -r 'select(.type == "note") | .text' "$T/disk" | cut -c1-18)"
}
check "CUDA graphs on two GPU processes, and mixed with eager steps: the graph note and every row the same" \
    t_graphs

t_mapping() {
	"$GEN" -f vllm -s both -n 5 -o "$T/m.json"
	"$GEN" -f vllm -s both -n 5 --graph -o "$T/f.json"
	"$EX" -q --role mapping "$T/m.json" | "$ST" -q | "$KM" -q --sites-only >"$T/sites"
	"$EX" -q --role formal "$T/f.json" | "$ST" -q --late-stages >"$T/formal"
	both "$T/formal" --mapping "$T/sites"
	test "$(grep -c '"type":"kernel_row"' "$T/disk")" -gt 3
}
check "a formal run against a mapping's sites: the same rows" t_mapping

done_testing
