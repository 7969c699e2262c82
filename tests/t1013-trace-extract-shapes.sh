#!/bin/sh
# trace-extract: the recorded shapes of the CPU ops that launch GPU work
# (issue 28, triage-records(5) op_shape): only those ops' shapes, one record
# per distinct shape, each kernel's shape id and share of its op's work,
# the External id join checked by nesting and the nesting alone for older
# Kineto, no op for CUDA-graph replays, memcpy bytes; trace-stage keeps them.
. "$(dirname "$0")/lib.sh"

F=$FIX/kernel-roofline/shapes-trace.json

extract() {
	"$BIN/trace-extract" -q "$@" "$F" >"$T/x.jsonl"
}

kshape() {	# kshape NAME [N]: the shape member of the Nth kernel named NAME
	jq -rs --arg n "$1" --argjson i "${2:-0}" \
	    '[.[] | select(.type == "kernel" and .name == $n)][$i].shape // "none"' "$T/x.jsonl"
}

shape_op() {	# shape_op ID: the op of op_shape ID
	jq -r --argjson i "$1" 'select(.type == "op_shape" and .id == $i) | .op' "$T/x.jsonl"
}

t_only_launching_ops() {
	extract
	eq "aten::addmm aten::copy_ aten::mm aten::neg aten::pow aten::silu" \
	    "$(jq -r 'select(.type == "op_shape") | .op' "$T/x.jsonl" | sort | paste -sd' ')" "ops"
	# the ops that launched nothing, or only a graph, or recorded no shapes
	hasnt "$T/x.jsonl" '"op":"aten::view"'
	hasnt "$T/x.jsonl" '"op":"some::graph_replay"'
	hasnt "$T/x.jsonl" '"op":"aten::empty"'
	# op_shape records come before the kernels that name them
	eq 1 "$(jq -rs 'map(.type) | (index("op_shape") < index("kernel")) | if . then 1 else 0 end' \
	    "$T/x.jsonl")" "order"
}
check "op_shape records only for the ops that launched kernels, before the kernels" t_only_launching_ops

t_compact_and_deduplicated() {
	extract
	eq '{"dims":[[128,256],[256,512]],"types":["c10::BFloat16","c10::BFloat16"],"concrete":["",""]}' \
	    "$(jq -c 'select(.type == "op_shape" and .op == "aten::mm") | {dims, types, concrete}' \
	    "$T/x.jsonl")" "mm shapes"
	# two aten::mm ops of the same shapes (written with and without spaces): one record
	eq 1 "$(grep -c '"op":"aten::mm"' "$T/x.jsonl")" "mm records"
	eq "$(kshape gemm_a 0)" "$(kshape gemm_a 1)" "both mm kernels"
	eq aten::mm "$(shape_op "$(kshape gemm_a 1)")"
	# a member name written with an escape is read decoded
	eq '[[64]]' "$(jq -c 'select(.type == "op_shape" and .op == "aten::neg") | .dims' "$T/x.jsonl")"
	# a NaN literal is no JSON a record may carry: that member is left out
	eq 'null [[64],[]]' "$(jq -r 'select(.type == "op_shape" and .op == "aten::pow") |
	    "\(.concrete) \(.dims | tojson)"' "$T/x.jsonl")"
}
check "shapes without white space, one record per distinct shape, escapes decoded, NaN refused" \
    t_compact_and_deduplicated

t_kernel_links() {
	extract
	# an op launching two kernels shares its work by their time: 30 and 10 us
	eq "0.75 0.25" "$(jq -r 'select(.type == "kernel" and .cat == "kernel" and .shape_frac) |
	    .shape_frac' "$T/x.jsonl" | paste -sd' ')" "fractions"
	eq aten::addmm "$(shape_op "$(kshape splitk_reduce)")"
	# older Kineto: the launch's External id is its correlation (300); an op elsewhere
	# has that id (aten::empty at 500 us) but only aten::silu contains the launch
	eq aten::silu "$(shape_op "$(kshape silu_kernel)")"
	# a graph replay's kernels have no op, whatever op encloses the graph launch
	eq none "$(kshape graph_kernel)"
	# an op without recorded shapes gives its kernels none
	eq none "$(kshape relu_kernel)"
	# a memcpy: its bytes, the op of its cudaMemcpyAsync, and no share of the op's work
	eq "4096 aten::copy_ 0" "$(jq -r 'select(.type == "kernel" and .cat == "gpu_memcpy") |
	    "\(.bytes) \(.shape) \(.shape_frac)"' "$T/x.jsonl" |
	    { read -r b s f; echo "$b $(shape_op "$s") $f"; })"
}
check "kernels: shape id, share of the op's work, older Kineto by nesting, no op for graphs, bytes" \
    t_kernel_links

t_spool_file() {
	extract
	mv "$T/x.jsonl" "$T/mem.jsonl"
	TRIAGE_SPOOL_MEM=64 extract
	same "$T/mem.jsonl" "$T/x.jsonl"
}
check "the same records when the op spools go to temporary files" t_spool_file

t_frames_mode() {
	extract --frames
	hasnt "$T/x.jsonl" '"op_shape"'
	hasnt "$T/x.jsonl" '"shape":[0-9]'
}
check "--frames: no shapes (they are resolved with the Python contexts)" t_frames_mode

t_stage_keeps() {
	extract
	"$BIN/trace-stage" -q <"$T/x.jsonl" >"$T/s.jsonl"
	eq "$(jq -c 'select(.type == "kernel") | [.shape, .shape_frac, .bytes]' "$T/x.jsonl")" \
	    "$(jq -c 'select(.type == "kernel") | [.shape, .shape_frac, .bytes]' "$T/s.jsonl")"
}
check "trace-stage keeps shape, shape_frac and bytes" t_stage_keeps

t_nested() {
	# 2000 ops each containing every later launch: each launch's op is the
	# innermost, the op it was launched from (its dims name it), in time
	# linear in ops and launches (t2400-style sizes; make scale the large ones)
	sh "$TESTDIR/gen-hostile" nest 2000 >"$T/nest.json"
	"$BIN/trace-extract" -q "$T/nest.json" >"$T/x.jsonl"
	eq 2000 "$(grep -c '"op_shape"' "$T/x.jsonl")" "op_shape records"
	jq -rs '(map(select(.type == "op_shape")) | map({key: (.id | tostring), value: .dims[0][0]}) |
	    from_entries) as $d | [.[] | select(.type == "kernel") | $d[.shape | tostring] == .correlation]
	    | all' "$T/x.jsonl" >"$T/ok"
	eq true "$(cat "$T/ok")" "every kernel's op"
}
check "nested ops: each launch gets its innermost op" t_nested

done_testing
