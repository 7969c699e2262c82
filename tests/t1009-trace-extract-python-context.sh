#!/bin/sh
# trace-extract resolves each CPU op's, launch's and kernel's Python context
# from the frames itself (py_context traces: py_* members, frame_name
# records, no frame records but the capture markers).  The values by hand on
# a generated trace, then the same tables as from frame records
# (--frames): kernel rows and sites (kernel-map), overlap rows
# (overlap-sweep), capture regions (trace-health), on generated traces,
# on the kernel-map attribution fixture turned into a trace, with events
# in reverse order, with the frames kept in a temporary file, and with a
# scope at the edge of the time-window margin.
. "$(dirname "$0")/lib.sh"

GEN=$TESTDIR/gen-trace
EX=$BIN/trace-extract

# names FILE: the records with every py_* id replaced by its frame name
names() {
	jq -sc '(map(select(.type == "frame_name") | {key: (.id | tostring), value: .name}) |
	    from_entries) as $n | .[] | select(.type != "frame_name") |
	    if has("py_loc") then .py_loc |= $n[tostring] else . end |
	    if has("py_stack") then .py_stack |= map($n[tostring]) else . end |
	    if has("py_scopes") then .py_scopes |= map($n[tostring]) else . end |
	    if has("py_window") then .py_window |= map($n[tostring]) else . end' "$1"
}

"$GEN" -s both -n 2 -l 2 -o "$T/g.json"
"$EX" "$T/g.json" >"$T/g.jsonl"

t_values() {
	names "$T/g.jsonl" >"$T/g.names"
	# the first rmsnorm op (ts 110, dur 16): probe 111, inside forward_batch and forward_cuda
	eq '"python/sglang/srt/layers/layernorm.py(60): forward_cuda"' \
	    "$(jq -c 'select(.type == "cpu_op") | .py_loc' "$T/g.names" | head -n 1)"
	eq '["python/sglang/srt/model_executor/model_runner.py(1500): forward_batch","python/sglang/srt/layers/layernorm.py(60): forward_cuda"]' \
	    "$(jq -c 'select(.type == "cpu_op") | .py_stack' "$T/g.names" | head -n 1)"
	eq '["python/sglang/srt/model_executor/model_runner.py(1500): forward_batch","python/sglang/srt/layers/layernorm.py(60): forward_cuda"]' \
	    "$(jq -c 'select(.type == "cpu_op") | .py_scopes' "$T/g.names" | head -n 1)"
	# its launch (ts 114) sees the same frames
	eq '"python/sglang/srt/layers/layernorm.py(60): forward_cuda"' \
	    "$(jq -c 'select(.type == "launch") | .py_loc' "$T/g.names" | head -n 1)"
	# the rmsnorm kernel runs at 126.5 while both frames are open on the CPU
	eq '["python/sglang/srt/model_executor/model_runner.py(1500): forward_batch","python/sglang/srt/layers/layernorm.py(60): forward_cuda"]' \
	    "$(jq -c 'select(.type == "kernel") | .py_window' "$T/g.names" | head -n 1)"
	# every id used is defined once, before its first use; no frame records
	eq 0 "$(jq -c 'select(.type == "frame")' "$T/g.jsonl" | wc -l | tr -d ' ')"
	eq "$(jq -r 'select(.type == "frame_name") | .id' "$T/g.jsonl" | sort -u | wc -l)" \
	    "$(jq -r 'select(.type == "frame_name") | .id' "$T/g.jsonl" | wc -l)"
	# input, trace, the GPU's device record, then the frame names
	eq frame_name "$(sed -n 4p "$T/g.jsonl" | jq -r .type)"
	"$EX" --frames "$T/g.json" >"$T/gf.jsonl"
	eq "$(jq -c 'select(.type == "frame")' "$T/gf.jsonl" | wc -l | tr -d ' ')" \
	    "$(jq -r 'select(.type == "stats") | .frames' "$T/g.jsonl")"
}
check "locations, stacks, scope chains and windows by hand" t_values

# kmap [--frames] TRACE: kernel-map's rows and sites for the trace
kmap() {
	"$EX" -q "$@" | "$BIN/trace-stage" -q | "$BIN/kernel-map" -q --kernel-table-limit 0 |
	    jq -c 'select(.type == "kernel_row" or .type == "site")'
}

# overlap MAPPING [--frames]: overlap-sweep's rows, the trace as mapping and as formal trace
overlap() {
	_m=$1
	shift
	"$EX" -q --role mapping "$@" "$_m" | "$BIN/trace-stage" -q >"$T/mapping"
	"$BIN/kernel-map" -q --sites-only <"$T/mapping" >"$T/sites"
	cat "$T/sites" >>"$T/mapping"
	"$EX" -q --role formal "$_m" | "$BIN/trace-stage" -q |
	    "$BIN/kernel-map" -q --mapping "$T/sites" |
	    "$BIN/overlap-sweep" -q --mapping "$T/mapping" --overlap-table-limit 0 |
	    jq -c 'select(.type == "overlap_row")'
}

# same_tables TRACE: the default and --frames give the same rows, also when
# every byte kept aside goes to the temporary file
same_tables() {
	kmap --frames "$1" >"$T/old.k"
	kmap "$1" >"$T/new.k"
	TRIAGE_SPOOL_MEM=64 kmap "$1" >"$T/spill.k"
	[ -s "$T/old.k" ]
	same "$T/old.k" "$T/new.k"
	same "$T/old.k" "$T/spill.k"
	overlap "$1" --frames >"$T/old.o"
	overlap "$1" >"$T/new.o"
	TRIAGE_SPOOL_MEM=64 overlap "$1" >"$T/spill.o"
	[ -s "$T/old.o" ]
	same "$T/old.o" "$T/new.o"
	same "$T/old.o" "$T/spill.o"
}

t_generated() {
	"$GEN" -s both --streams 2 -n 4 -l 3 -o "$T/a.json"
	same_tables "$T/a.json"
	"$GEN" -s decode --graph -n 3 -l 2 -o "$T/b.json"
	same_tables "$T/b.json"
	"$GEN" -f vllm -s both -n 3 -l 2 -d disorder -o "$T/c.json.gz"
	same_tables "$T/c.json.gz"
}
check "generated traces: the same kernel and overlap rows as from frame records" t_generated

# The events of a record stream as a Chrome trace (frames, ops, launches, kernels).
to_trace() {
	jq -sc '{traceEvents: [.[] | select(.type == "frame" or .type == "cpu_op" or
	    .type == "launch" or .type == "kernel") |
	    {ph: "X", name, pid, tid, ts, dur} +
	    (if .type == "frame" then {cat: "python_function"}
	     elif .type == "cpu_op" then {cat: "cpu_op", args: ({"External id": .external_id,
	         correlation} | with_entries(select(.value != null)))}
	     elif .type == "launch" then {cat: "cuda_runtime", args: ({correlation,
	         "External id": .external_id} | with_entries(select(.value != null)))}
	     else {cat: "kernel", args: ({"External id": .external_id, correlation,
	         stream: 7} | with_entries(select(.value != null)))} end)]}' "$1"
}

t_fixture() {
	# out-of-order starts, equal starts, ops and launches on many threads (the
	# kernel on another GPU process is left out, so that pid 0 is the table's)
	grep -v other_pid_kernel "$FIX/kernel-map/attribution.jsonl" >"$T/attr.jsonl"
	to_trace "$T/attr.jsonl" >"$T/attr.json"
	same_tables "$T/attr.json"
	# the thread whose starts go backwards is sorted in memory: the frame of t2003
	eq 'python/sglang/srt/layers/linear.py:50 forward' \
	    "$(jq -r 'select(.type == "kernel_row" and .kernel == "void gemm_kernel<float>") | .location' "$T/new.k")"
}
check "the kernel-map attribution fixture as a trace: the same tables" t_fixture

# The CPU ops written (issue 30): those a kernel is matched to by External
# id, its own or its correlation's; the frame names only the others' contexts
# use go with them, and every table is the one --all-ops gives.
t_ops_written() {
	cat >"$T/ops.json" <<'EOF2'
{"traceEvents": [
{"ph": "X", "cat": "python_function", "name": "python/model.py(10): forward", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
{"ph": "X", "cat": "python_function", "name": "python/alloc.py(3): empty_cache", "pid": 1, "tid": 1, "ts": 60, "dur": 10},
{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 8, "args": {"External id": 1}},
{"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 1, "tid": 1, "ts": 61, "dur": 2, "args": {"External id": 2}},
{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 30, "dur": 8, "args": {"External id": 4}},
{"ph": "X", "cat": "cpu_op", "name": "aten::copy_", "pid": 1, "tid": 1, "ts": 40, "dur": 8, "args": {"correlation": 9}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 12, "dur": 3, "args": {"correlation": 5, "External id": 1}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 32, "dur": 3, "args": {"correlation": 9, "External id": 4}},
{"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7, "ts": 20, "dur": 5, "args": {"stream": 7, "correlation": 5, "External id": 1}},
{"ph": "X", "cat": "kernel", "name": "add_kernel", "pid": 0, "tid": 7, "ts": 40, "dur": 5, "args": {"stream": 7, "correlation": 9}}
]}
EOF2
	"$EX" -q "$T/ops.json" >"$T/ops.jsonl"
	"$EX" -q --all-ops "$T/ops.json" >"$T/all.jsonl"
	# aten::empty launches nothing; aten::add through add_kernel's correlation;
	# aten::copy_ by its own correlation, which maps to External id 4 too
	eq 'aten::mm aten::add aten::copy_' "$(jq -r 'select(.type == "cpu_op") | .name' "$T/ops.jsonl" |
	    tr '\n' ' ' | sed 's/ $//')"
	eq 4 "$(grep -c '"type":"cpu_op"' "$T/all.jsonl")" "ops with --all-ops"
	eq 4 "$(jq -r 'select(.type == "stats") | .cpu_ops' "$T/ops.jsonl")" "the stats count every op"
	hasnt "$T/ops.jsonl" 'alloc.py'
	has "$T/all.jsonl" 'alloc.py'
	# the same records otherwise, and the same tables
	grep -v -e '"type":"cpu_op"' -e '"type":"frame_name"' "$T/ops.jsonl" >"$T/ops.rest"
	grep -v -e '"type":"cpu_op"' -e '"type":"frame_name"' "$T/all.jsonl" >"$T/all.rest"
	same "$T/all.rest" "$T/ops.rest"
	for f in ops all; do
		"$BIN/trace-stage" -q <"$T/$f.jsonl" | "$BIN/kernel-map" -q |
		    jq -c 'select(.type == "kernel_row") | [.kernel, .cpu_op, .location]' >"$T/$f.rows"
	done
	same "$T/all.rows" "$T/ops.rows"
	eq '["add_kernel","aten::add","python/model.py:10 forward"]' "$(grep add_kernel "$T/ops.rows")"
}
check "cpu_op records: the ops a kernel is matched to; --all-ops writes every one" t_ops_written

# --no-windows (issue 30): the same records without the kernels' windows
# and the frame names only they use, and the same kernel table.
t_no_windows() {
	"$GEN" -s both --streams 2 -n 4 -l 3 -o "$T/w.json"
	"$EX" -q "$T/w.json" >"$T/w.jsonl"
	"$EX" -q --no-windows "$T/w.json" >"$T/nw.jsonl"
	grep -q '"py_window":' "$T/w.jsonl"
	hasnt "$T/nw.jsonl" '"py_window'
	grep -v '"type":"frame_name"' "$T/w.jsonl" |
	    sed -e 's/,"py_window":\[[0-9,]*\]//' -e 's/,"py_window_band":\[[][0-9,.e+-]*\]//' >"$T/w.rest"
	grep -v '"type":"frame_name"' "$T/nw.jsonl" >"$T/nw.rest"
	same "$T/w.rest" "$T/nw.rest"
	[ "$(grep -c '"type":"frame_name"' "$T/nw.jsonl")" -le "$(grep -c '"type":"frame_name"' "$T/w.jsonl")" ]
	for f in w nw; do
		"$BIN/trace-stage" -q <"$T/$f.jsonl" | "$BIN/kernel-map" -q |
		    jq -c 'select(.type == "kernel_row")' >"$T/$f.rows"
	done
	[ -s "$T/w.rows" ]
	same "$T/w.rows" "$T/nw.rows"
}
check "--no-windows: no kernel windows, the same kernel table" t_no_windows

t_reversed() {
	"$GEN" -s both --streams 2 -n 4 -l 3 -o "$T/r.json"
	jq -c '.traceEvents |= reverse' "$T/r.json" >"$T/rev.json"
	same_tables "$T/rev.json"
}
check "events in reverse order: the same tables" t_reversed

t_window_band() {
	# a scope that ends 0.0005 before the earliest fallback query: inside the
	# 0.001 margin, but the query range's pre-filter (overlap.md §6.5) drops it
	printf '%s\n' '{"traceEvents": [' \
	    '{"ph": "X", "cat": "python_function", "name": "python/sglang/srt/b.py(2): g", "pid": 1, "tid": 1, "ts": 0, "dur": 1000},' \
	    '{"ph": "X", "cat": "python_function", "name": "python/sglang/srt/a.py(1): f", "pid": 1, "tid": 1, "ts": 100, "dur": 50},' \
	    '{"ph": "X", "cat": "python_function", "name": "python/sglang/srt/c.py(3): h", "pid": 1, "tid": 1, "ts": 300.0005, "dur": 50},' \
	    '{"ph": "X", "cat": "kernel", "name": "k_early", "pid": 0, "tid": 7, "ts": 150.0005, "dur": 20, "args": {"correlation": 1, "stream": 7}},' \
	    '{"ph": "X", "cat": "kernel", "name": "k_late", "pid": 0, "tid": 7, "ts": 300, "dur": 20, "args": {"correlation": 2, "stream": 7}}' \
	    ']}' >"$T/band.json"
	"$EX" -q "$T/band.json" >"$T/band.jsonl"
	names "$T/band.jsonl" >"$T/band.names"
	# both kernels carry their candidates: one scope lies in each margin
	eq '["python/sglang/srt/b.py(2): g","python/sglang/srt/a.py(1): f"]' \
	    "$(jq -c 'select(.type == "kernel" and .name == "k_early") | .py_window' "$T/band.names")"
	eq 2 "$(jq -c 'select(.type == "kernel" and has("py_window_band"))' "$T/band.jsonl" | wc -l | tr -d ' ')"
	same_tables "$T/band.json"
	# the pre-filter dropped f: g is k_early's scope; h starts after k_late, the last query
	eq 'python/sglang/srt/b.py(2): g' \
	    "$(jq -r 'select(.kernel == "k_early") | .python_scope' "$T/new.o")"
	eq 'python/sglang/srt/b.py(2): g' \
	    "$(jq -r 'select(.kernel == "k_late") | .python_scope' "$T/new.o")"
}
check "window scopes in the tolerance margin: filtered as from frames" t_window_band

t_capture() {
	# capture markers stay frame records: trace-health finds the same regions
	printf '%s\n' '{"traceEvents": [' \
	    '{"ph": "X", "cat": "python_function", "name": "torch/cuda/graphs.py(80): capture_begin", "pid": 1, "tid": 1, "ts": 10, "dur": 5},' \
	    '{"ph": "X", "cat": "python_function", "name": "python/sglang/srt/x.py(1): run", "pid": 1, "tid": 1, "ts": 16, "dur": 10},' \
	    '{"ph": "X", "cat": "python_function", "name": "torch/cuda/graphs.py(90): capture_end", "pid": 1, "tid": 1, "ts": 30, "dur": 5},' \
	    '{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 20, "dur": 1, "args": {"correlation": 5}},' \
	    '{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 100, "dur": 20, "args": {"correlation": 9, "stream": 7}}' \
	    ']}' >"$T/cap.json"
	"$EX" -q "$T/cap.json" >"$T/cap.jsonl"
	eq '["torch/cuda/graphs.py(80): capture_begin","torch/cuda/graphs.py(90): capture_end"]' \
	    "$(jq -c 'select(.type == "frame") | .name' "$T/cap.jsonl" | jq -sc .)"
	"$BIN/trace-stage" -q <"$T/cap.jsonl" | "$BIN/trace-health" -q |
	    jq -c 'select(.type == "health") | .checks' >"$T/new.h"
	"$EX" -q --frames "$T/cap.json" | "$BIN/trace-stage" -q | "$BIN/trace-health" -q |
	    jq -c 'select(.type == "health") | .checks' >"$T/old.h"
	same "$T/old.h" "$T/new.h"
	grep -q capture "$T/new.h"
}
check "capture markers stay frame records; trace-health's checks unchanged" t_capture

t_broken() {
	# a trace that fails halfway leaves no records of its events behind
	head -c 3000 "$T/g.json" >"$T/cut.json"
	status 1 "$EX" -q "$T/cut.json" >"$T/cut.jsonl"
	# the trace record is written at the trace's end (issue 25), so only the input record
	eq 'input' "$(jq -r .type "$T/cut.jsonl" | tr '\n' ' ' | sed 's/ $//')"
}
check "a broken trace: no event records, exit 1" t_broken

t_bad_members() {
	printf '%s\n' '{"type":"trace","v":1,"t":0,"path":"/d/decode/a.json","py_context":true}' \
	    '{"type":"cpu_op","t":0,"name":"op","ts":1,"dur":1,"external_id":1,"py_loc":0,"py_stack":[0,"x"]}' \
	    '{"type":"stats","t":0}' >"$T/bad1"
	status 1 "$BIN/kernel-map" -q <"$T/bad1" >/dev/null 2>"$T/err1"
	has "$T/err1" "<stdin>:2: cpu_op record: member 'py_stack' is not an array of frame_name ids"
	printf '%s\n' '{"type":"trace","v":1,"t":0,"path":"/d/decode/a.json","py_context":true}' \
	    '{"type":"cpu_op","t":0,"name":"op","ts":1,"dur":1,"external_id":1,"py_loc":3,"py_stack":[3]}' \
	    '{"type":"kernel","t":0,"name":"k","ts":5,"dur":1,"external_id":1,"sel":true}' \
	    '{"type":"stats","t":0}' >"$T/bad2"
	status 1 "$BIN/kernel-map" -q <"$T/bad2" >/dev/null 2>"$T/err2"
	has "$T/err2" "trace 0: a py_\\* member refers to frame_name 3, which the trace does not define"
}
check "malformed py_* members and undefined ids: exit 1 with the record or trace" t_bad_members

t_window_sets() {
	# consecutive kernels with the same scopes open share one chain and band
	# text; a scope joining or leaving between two kernels, or one of each
	# (k3 to k4: the set's size stays 3), makes a new one
	F='"ph": "X", "cat": "python_function", "pid": 100'
	K='"ph": "X", "cat": "kernel", "pid": 0, "dur": 1'
	cat >"$T/w.json" <<EOF
{"traceEvents": [
{$F, "tid": 100, "name": "python/sglang/srt/managers/scheduler.py(900): event_loop", "ts": 0, "dur": 100},
{$F, "tid": 100, "name": "python/sglang/srt/layers/layernorm.py(60): forward_cuda", "ts": 1, "dur": 49},
{$F, "tid": 101, "name": "python/sglang/srt/layers/linear.py(300): forward", "ts": 40, "dur": 60},
{$F, "tid": 102, "name": "python/sglang/srt/layers/activation.py(80): forward", "ts": 55, "dur": 45},
{$F, "tid": 103, "name": "python/sglang/srt/layers/sampler.py(70): forward", "ts": 20.0005, "dur": 5},
{$K, "tid": 7, "name": "k1", "ts": 10, "args": {"correlation": 1}},
{$K, "tid": 7, "name": "k2", "ts": 20, "args": {"correlation": 2}},
{$K, "tid": 8, "name": "k2b", "ts": 20.0002, "args": {"correlation": 6}},
{$K, "tid": 7, "name": "k3", "ts": 45, "args": {"correlation": 3}},
{$K, "tid": 7, "name": "k4", "ts": 60, "args": {"correlation": 4}},
{$K, "tid": 7, "name": "k5", "ts": 70, "args": {"correlation": 5}}
]}
EOF
	"$EX" -q "$T/w.json" | jq -sc '(map(select(.type == "frame_name") |
	    {key: (.id | tostring), value: .name}) | from_entries) as $n |
	    def short: $n[tostring] | sub("python/sglang/srt/"; "") | sub("\\.py.*"; "");
	    .[] | select(.type == "kernel") |
	    [.name, (.py_window // [] | map(short)), (.py_window_band // [] | map(.[0] |= short))]' \
	    >"$T/w.out"
	cat >"$T/w.want" <<'EOF'
["k1",["managers/scheduler","layers/layernorm"],[]]
["k2",["managers/scheduler","layers/layernorm","layers/sampler"],[["managers/scheduler",0,100],["layers/layernorm",1,49],["layers/sampler",20.0005,5]]]
["k2b",["managers/scheduler","layers/layernorm","layers/sampler"],[["managers/scheduler",0,100],["layers/layernorm",1,49],["layers/sampler",20.0005,5]]]
["k3",["managers/scheduler","layers/layernorm","layers/linear"],[]]
["k4",["managers/scheduler","layers/linear","layers/activation"],[]]
["k5",["managers/scheduler","layers/linear","layers/activation"],[]]
EOF
	same "$T/w.want" "$T/w.out"
}
check "kernel windows: one chain per set of open scopes, a new one when it changes" t_window_sets

done_testing
