#!/bin/sh
# trace-extract: the fields of every record type on generated traces.
. "$(dirname "$0")/lib.sh"

GEN=$TESTDIR/gen-trace
EX=$BIN/trace-extract

"$GEN" -s both --streams 2 -n 2 -l 1 -o "$T/rec.json"
"$EX" "$T/rec.json" >"$T/rec.jsonl" 2>"$T/rec.err"
echo $? >"$T/rec.rc"
# the same with every frame a record and no Python contexts (the records' own members)
"$EX" --frames "$T/rec.json" >"$T/fr.jsonl"
"$GEN" --graph -n 2 -l 1 -o "$T/graph.json"
"$EX" "$T/graph.json" >"$T/graph.jsonl"

# first TYPE [FILE]: the first record of that type, compact.
first() {
	jq -c "select(.type == \"$1\")" "${2:-$T/rec.jsonl}" | head -n 1
}
count() {
	jq -c "select(.type == \"$1\")" "${2:-$T/rec.jsonl}" | wc -l | tr -d ' '
}

t_clean() {
	eq 0 "$(cat "$T/rec.rc")" "exit"
	eq "" "$(cat "$T/rec.err")" "stderr"
}
check "clean trace: exit 0, nothing on stderr" t_clean

t_every_line_typed() {
	eq "" "$(jq -c 'select((keys_unsorted[0]) != "type")' "$T/rec.jsonl")"
	eq input "$(head -n 1 "$T/rec.jsonl" | jq -r .type)"
	eq trace "$(sed -n 2p "$T/rec.jsonl" | jq -r .type)"
	eq stats "$(tail -n 1 "$T/rec.jsonl" | jq -r .type)"
}
check "every line is an object with type first; input, trace ... stats" t_every_line_typed

t_input() {
	eq "{\"type\":\"input\",\"v\":1,\"role\":\"single\",\"path\":\"$T/rec.json\",\"framework\":\"sglang\",\"framework_source\":\"trace\",\"framework_evidence\":\"14 Python frames or ops of sglang/ in the first 59 events\",\"server_args\":null,\"tp_size\":1,\"traces\":[\"$T/rec.json\"],\"world_size\":1,\"gpu\":\"Demo GPU\",\"gpu_sms\":132,\"gpu_mem\":85899345920}" \
	    "$(first input)"
	# the deployment's figures only when the first trace gives them; none under --compat reference
	"$EX" -q --compat reference "$T/rec.json" | head -n 1 >"$T/in.ref"
	hasnt "$T/in.ref" '"gpu"'
	hasnt "$T/in.ref" '"world_size"'
}
check "input record" t_input

t_trace() {
	eq "{\"type\":\"trace\",\"v\":1,\"t\":0,\"role\":\"single\",\"path\":\"$T/rec.json\",\"stage\":\"all\",\"rank\":0,\"rank_source\":\"trace\",\"world_size\":1,\"gzip\":false,\"py_context\":true,\"time_base_us\":1718000000000000}" \
	    "$(first trace)"
	eq "{\"type\":\"trace\",\"v\":1,\"t\":0,\"role\":\"single\",\"path\":\"$T/rec.json\",\"stage\":\"all\",\"rank\":0,\"rank_source\":\"trace\",\"world_size\":1,\"gzip\":false,\"time_base_us\":1718000000000000}" \
	    "$(first trace "$T/fr.jsonl")"
	# --compat reference: the trace record as the reference-era tools wrote it
	eq "{\"type\":\"trace\",\"v\":1,\"t\":0,\"role\":\"single\",\"path\":\"$T/rec.json\",\"stage\":\"all\",\"gzip\":false,\"py_context\":true}" \
	    "$("$EX" -q --compat reference "$T/rec.json" | jq -c 'select(.type == "trace")')"
}
check "trace record (py_context unless --frames; rank, world size, time base)" t_trace

# Times relative to the trace's base (issue 25): exact at any clock, the
# trace's digits kept, and the absolute time is ts + time_base_us.
t_time_base() {
	printf '%s\n' '{"traceEvents": [' \
	    '{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1700000000123456.789, "dur": 4.25, "args": {"correlation": 5}},' \
	    '{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1700000000123460.001, "dur": 0.999, "args": {"correlation": 5}},' \
	    '{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1699999999999999.5, "dur": 1, "args": {}},' \
	    '{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": "1700000000123470.25", "dur": 1, "args": {}}' \
	    ']}' >"$T/ns.json"
	"$EX" -q "$T/ns.json" >"$T/ns.jsonl"
	eq 1700000000000000 "$(jq -r 'select(.type == "trace") | .time_base_us' "$T/ns.jsonl")"
	# the digits after the base, as the trace wrote them; before it, exactly negative
	eq '123456.789 123460.001 -0.5 123470.25' "$(grep -o '"ts":[^,]*' "$T/ns.jsonl" |
	    sed 's/"ts"://' | tr '\n' ' ' | sed 's/ $//')"
	# a trace whose first time is under 10^9 us keeps its times as they are
	"$GEN" -n 1 -l 1 | jq '.traceEvents |= map(if .ts then .ts -= 1718000000000000 else . end)' \
	    >"$T/small.json"
	eq null "$("$EX" -q "$T/small.json" | jq -r 'select(.type == "trace") | .time_base_us')"
}
check "times relative to an integer base: exact at any clock epoch" t_time_base

# The runtime calls of copies and sets submit GPU work as launches do
# (issue 25): launch records of their kind, when a GPU item carries their
# correlation; a call whose copy was not recorded, and calls of other
# kinds, are not kept.  Under --compat reference, none of them.
t_copy_launches() {
	printf '%s\n' '{"traceEvents": [' \
	    '{"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 9, "tid": 9, "ts": 10, "dur": 5, "args": {"correlation": 1}},' \
	    '{"ph": "X", "cat": "cuda_runtime", "name": "hipMemsetAsync", "pid": 9, "tid": 9, "ts": 20, "dur": 5, "args": {"correlation": 2}},' \
	    '{"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 9, "tid": 9, "ts": 30, "dur": 5, "args": {"correlation": 3}},' \
	    '{"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 9, "tid": 9, "ts": 40, "dur": 5, "args": {"correlation": 4}},' \
	    '{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 9, "ts": 50, "dur": 5, "args": {"correlation": 5}},' \
	    '{"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pinned -> Device)", "pid": 0, "tid": 7, "ts": 12, "dur": 3, "args": {"correlation": 1, "stream": 7}},' \
	    '{"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 22, "dur": 1, "args": {"correlation": 2, "stream": 7}},' \
	    '{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 52, "dur": 4, "args": {"correlation": 5, "stream": 7}}' \
	    ']}' >"$T/cp.json"
	"$EX" -q "$T/cp.json" >"$T/cp.jsonl"
	eq 'cudaMemcpyAsync 1 memcpy|hipMemsetAsync 2 memset|cudaLaunchKernel 5 kernel' \
	    "$(jq -r 'select(.type == "launch") | "\(.name) \(.correlation) \(.kind // "kernel")"' "$T/cp.jsonl" | paste -sd '|')"
	eq 3 "$(jq -r 'select(.type == "stats") | .launches' "$T/cp.jsonl")"
	# the copy's gap is waiting for the host: [15,22) until the set's call
	# ended at 25 (7), [23,52) until the launch's at 55 (29)
	eq 36 "$("$BIN/trace-stage" -q <"$T/cp.jsonl" | "$BIN/step-stats" -q |
	    jq -r 'select(.type == "gpu_time") | .idle_launch_us')"
	eq 'cudaLaunchKernel' "$("$EX" -q --compat reference "$T/cp.json" |
	    jq -r 'select(.type == "launch") | .name' | paste -sd '|')"
}
check "copies' and sets' runtime calls are launch records of their kind" t_copy_launches

t_device() {
	eq '{"type":"device","t":0,"id":0,"name":"Demo GPU","total_global_mem":85899345920,"compute_major":9,"compute_minor":0,"num_sms":132}' \
	    "$(first device)"
	# the 2021 format's computeProperties, with its own member names
	printf '%s\n' '{"schemaVersion": 1, "computeProperties": [{"id": 0, "name": "Tesla V100-DGXS-32GB", "totalGlobalMem": 34084028416, "major": 7, "minor": 0, "multiProcessorCount": 80, "maxThreadsPerMultiProcessor": 2048}],' \
	    '"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10, "dur": 1}]}' >"$T/old.json"
	eq '{"type":"device","t":0,"id":0,"name":"Tesla V100-DGXS-32GB","total_global_mem":34084028416,"compute_major":7,"compute_minor":0,"num_sms":80,"max_threads_per_sm":2048}' \
	    "$("$EX" -q "$T/old.json" | jq -c 'select(.type == "device")')"
	# deviceProperties after the events, as some writers put it
	printf '%s\n' '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10, "dur": 1}],' \
	    '"deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "computeMajor": 9, "computeMinor": 0}, {"id": 1, "name": "NVIDIA H100 80GB HBM3", "computeMajor": 9, "computeMinor": 0}],' \
	    '"distributedInfo": {"rank": 3, "world_size": 4, "pg_config": [{"pg_desc": "default_pg", "pg_size": 4, "ranks": [0, 1, 2, 3]}, {"pg_desc": "tp", "pg_size": 2, "ranks": [2, 3]}]}}' >"$T/late.json"
	"$EX" -q "$T/late.json" >"$T/late.jsonl"
	eq 2 "$(count device "$T/late.jsonl")"
	eq '3 trace 4 2' "$(jq -r 'select(.type == "trace") | "\(.rank) \(.rank_source) \(.world_size) \(.tp_size)"' "$T/late.jsonl")"
	eq 0 "$("$EX" -q --compat reference "$T/late.json" | grep -c '"type":"device"')"
}
check "device records from deviceProperties; distributedInfo anywhere in the document" t_device

t_py_members_only() {
	# with and without --frames the records are the same but for the py_* members
	jq -c 'select(.type != "frame" and .type != "frame_name" and .type != "trace") |
	    del(.py_loc, .py_stack, .py_scopes, .py_window, .py_window_band)' "$T/rec.jsonl" >"$T/a"
	jq -c 'select(.type != "frame" and .type != "trace")' "$T/fr.jsonl" >"$T/b"
	same "$T/b" "$T/a"
	eq 0 "$(jq -c 'select(has("py_loc") or has("py_window"))' "$T/fr.jsonl" | wc -l | tr -d ' ')"
}
check "--frames: the same records without py_* members" t_py_members_only

t_kernel() {
	eq '{"type":"kernel","t":0,"name":"void sgl_demo::rmsnorm_kernel<__nv_bfloat16, 8>(__nv_bfloat16*, __nv_bfloat16 const*, int, float)","cat":"kernel","pid":"0","tid":"7","ts":126.5,"dur":20,"stream":"7","external_id":3,"correlation":1,"overlap":true}' \
	    "$(first kernel "$T/fr.jsonl")"
	eq 8 "$(count kernel)" "kernels"
	# the all-reduce runs on the second stream
	eq '"9"' "$(jq -c 'select(.type == "kernel" and (.name | test("cross_device"))) | .stream' "$T/rec.jsonl" | sort -u)"
}
check "kernel record: raw name, pid/tid/stream as text, ts verbatim" t_kernel

t_cpu_op() {
	eq '{"type":"cpu_op","t":0,"name":"sgl_kernel::rmsnorm","pid":"4242","tid":"4242","ts":110,"dur":16,"external_id":3}' \
	    "$(first cpu_op "$T/fr.jsonl")"
	eq 8 "$(count cpu_op)"
}
check "cpu_op record" t_cpu_op

t_launch() {
	eq '{"type":"launch","t":0,"name":"cudaLaunchKernel","pid":"4242","tid":"4242","ts":114,"dur":8,"correlation":1,"external_id":3}' \
	    "$(first launch "$T/fr.jsonl")"
	eq 8 "$(count launch)"
}
check "launch record" t_launch

t_frame() {
	eq '{"type":"frame","t":0,"name":"python/sglang/srt/model_executor/model_runner.py(1500): forward_batch","pid":"4242","tid":"4242","ts":104,"dur":110}' \
	    "$(first frame "$T/fr.jsonl")"
	eq 10 "$(count frame "$T/fr.jsonl")"
	# without --frames only capture markers are frame records; this trace has none
	eq 0 "$(count frame)"
	"$EX" --frames --python-ids "$T/rec.json" >"$T/ids.jsonl"
	eq '{"type":"frame","t":0,"name":"python/sglang/srt/model_executor/model_runner.py(1500): forward_batch","pid":"4242","tid":"4242","ts":104,"dur":110,"python_id":1,"parent_id":0}' \
	    "$(first frame "$T/ids.jsonl")"
}
check "frame records with --frames; python_id and parent_id with --python-ids" t_frame

t_annotation() {
	eq '{"type":"annotation","t":0,"name":"ProfilerStep#1","cat":"user_annotation","pid":"4242","tid":"4242","ts":100,"dur":120,"external_id":1}' \
	    "$(first annotation)"
	eq '{"type":"annotation","t":0,"name":"model_forward_prefill","cat":"user_annotation","pid":"4242","tid":"4242","ts":102,"dur":114,"external_id":2,"stage":"extend"}' \
	    "$(jq -c 'select(.type == "annotation" and .stage == "extend")' "$T/rec.jsonl")"
	eq decode "$(jq -r 'select(.type == "annotation" and (.name | test("decode"))) | .stage' "$T/rec.jsonl")"
}
check "annotation records, with the stage their name implies" t_annotation

t_thread_name() {
	eq '{"type":"thread_name","t":0,"pid":"4242","tid":"4242","name":"thread 4242 (python3)"}' \
	    "$(first thread_name)"
	eq 3 "$(count thread_name)"
}
check "thread_name records from ph M metadata" t_thread_name

t_stats() {
	eq '{"type":"stats","t":0,"events":59,"ph_x":38,"ph_m":5,"ph_other":16,"kernels":8,"cpu_ops":8,"launches":8,"frames":10,"annotations":4,"not_gpu_work":0,"by_cat":{"":5,"user_annotation":4,"python_function":10,"cpu_op":8,"cuda_runtime":8,"kernel":8,"ac2g":16},"skipped":{"ts_null_or_not_a_number":0,"dur_null_or_not_a_number":0,"ts_not_finite":0,"dur_not_finite":0,"args_not_an_object":0,"dur_over_a_year":0},"warnings":{"bom":0,"control_chars":0,"trailing_commas":0,"missing_close_bracket":0,"non_object_events":0,"nan_inf_literals":0,"replacement_chars":0,"kernels_without_positive_dur":0,"negative_dur":0,"duplicate_trace_events":0,"kernels_zero_dur":0,"launches_zero_dur":0},"shape":"object"}' \
	    "$(first stats)"
}
check "stats record: counts by ph and category, zero warnings" t_stats

t_corr() {
	eq '{"type":"corr","t":0,"correlation":1,"external_id":2}
{"type":"corr","t":0,"correlation":2,"external_id":4}' "$(jq -c 'select(.type == "corr")' "$T/graph.jsonl")"
	eq 0 "$(jq -c 'select(.type == "kernel" and has("external_id"))' "$T/graph.jsonl" | wc -l | tr -d ' ')"
	eq '"cudaGraphLaunch"' "$(jq -c 'select(.type == "launch") | .name' "$T/graph.jsonl" | sort -u)"
}
check "CUDA graph: kernels share the launch correlation; corr records map it" t_corr

t_corr_after_events() {
	# corr records come after the trace's events and before its stats
	last_kernel=$(grep -n '"type":"kernel"' "$T/graph.jsonl" | tail -n 1 | cut -d: -f1)
	first_corr=$(grep -n '"type":"corr"' "$T/graph.jsonl" | head -n 1 | cut -d: -f1)
	stats=$(grep -n '"type":"stats"' "$T/graph.jsonl" | cut -d: -f1)
	[ "$last_kernel" -lt "$first_corr" ] && [ "$first_corr" -lt "$stats" ]
}
check "corr records follow the events, stats closes the trace" t_corr_after_events

t_array_form() {
	"$GEN" --array -n 1 -l 1 -o "$T/arr.json"
	"$EX" "$T/arr.json" >"$T/arr.jsonl" 2>"$T/arr.err"
	eq '"array"' "$(jq -c 'select(.type == "stats") | .shape' "$T/arr.jsonl")"
	eq 3 "$(count kernel "$T/arr.jsonl")"
	eq "" "$(cat "$T/arr.err")"
}
check "top-level array form" t_array_form

t_gzip() {
	"$GEN" -n 1 -l 1 -o "$T/z.json.gz"
	"$EX" "$T/z.json.gz" >"$T/z.jsonl"
	eq true "$(jq -c 'select(.type == "trace") | .gzip' "$T/z.jsonl")"
	"$GEN" -n 1 -l 1 -o "$T/z.json"
	"$EX" "$T/z.json" | jq -c 'select(.type != "input" and .type != "trace")' >"$T/plain.jsonl"
	jq -c 'select(.type != "input" and .type != "trace")' "$T/z.jsonl" >"$T/gz.jsonl"
	same "$T/plain.jsonl" "$T/gz.jsonl"
}
check "gzip input gives the same records as plain" t_gzip

t_stdin() {
	"$EX" - <"$T/z.json.gz" >"$T/stdin.jsonl"
	eq '"-"' "$(jq -c 'select(.type == "trace") | .path' "$T/stdin.jsonl")"
	eq 3 "$(count kernel "$T/stdin.jsonl")"
}
check "stdin ('-'), gzip sniffed from the bytes" t_stdin

t_two_operands() {
	"$EX" "$T/z.json" "$T/arr.json" >"$T/two.jsonl"
	eq "0 1" "$(jq -r 'select(.type == "stats") | .t' "$T/two.jsonl" | tr '\n' ' ' | sed 's/ $//')"
	eq 2 "$(count input "$T/two.jsonl")"
}
check "several operands: trace indexes count on" t_two_operands

t_vllm() {
	"$GEN" -f vllm -n 1 -l 1 -o "$T/v.json"
	"$EX" "$T/v.json" >"$T/v.jsonl"
	eq vllm "$(jq -r 'select(.type == "input") | .framework' "$T/v.jsonl")"
	eq sglang "$(jq -r 'select(.type == "input") | .framework' "$T/z.jsonl")"
	"$EX" --framework trtllm "$T/v.json" | jq -r 'select(.type == "input") | .framework' >"$T/fw"
	eq trtllm "$(cat "$T/fw")"
}
check "framework from trace content; --framework wins" t_vllm

t_role() {
	"$EX" --role mapping "$T/z.json" | jq -r 'select(.type == "trace") | .role' >"$T/role"
	eq mapping "$(cat "$T/role")"
	status 2 "$EX" --role bogus "$T/z.json" 2>"$T/role.err" >/dev/null
	has "$T/role.err" "bad --role value, not single, mapping or formal: bogus"
}
check "--role is recorded; a bad one is a usage error" t_role

t_progress() {
	# -p forces progress lines onto a non-terminal stderr; --no-progress,
	# given later, takes them away again but keeps the warnings
	# (a pause in the input makes the run last past a progress update)
	{ head -c 100 "$T/z.json"; sleep 1.2; tail -c +101 "$T/z.json"; } |
	    "$EX" -p - >"$T/p.jsonl" 2>"$T/p.err"
	has "$T/p.err" 'events, done\.$'
	{ head -c 100 "$T/z.json"; sleep 1.2; tail -c +101 "$T/z.json"; } |
	    "$EX" -p --no-progress - >"$T/np.jsonl" 2>"$T/np.err"
	eq 0 "$(wc -c <"$T/np.err" | tr -d ' ')" "stderr bytes"
	same "$T/p.jsonl" "$T/np.jsonl"
	printf '{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":1},]}' >"$T/tc.json"
	"$EX" --no-progress "$T/tc.json" >/dev/null 2>"$T/tc.err"
	has "$T/tc.err" 'trailing comma before'
}
check "--progress forces progress; --no-progress turns it off, not the warnings" t_progress

# What a live server answered as beats the trace's own hints (issue 19);
# the reference takes it only when nothing else hints.
t_captured() {
	"$TESTDIR/gen-trace" -o "$T/sgl.json"
	eq "vllm capture" "$("$BIN/trace-extract" -q --framework-captured vllm "$T/sgl.json" |
	    jq -r 'select(.type == "input") | "\(.framework) \(.framework_source)"')"
	eq "sglang trace" "$("$BIN/trace-extract" -q --framework-fallback vllm "$T/sgl.json" |
	    jq -r 'select(.type == "input") | "\(.framework) \(.framework_source)"')"
	eq "sglang trace" "$("$BIN/trace-extract" -q --compat reference --framework-captured vllm \
	    "$T/sgl.json" | jq -r 'select(.type == "input") | "\(.framework) \(.framework_source)"')"
	eq "trtllm option" "$("$BIN/trace-extract" -q -f trtllm --framework-captured vllm "$T/sgl.json" |
	    jq -r 'select(.type == "input") | "\(.framework) \(.framework_source)"')"
}
check "--framework-captured: the live server's answer beats the trace's hints" t_captured

# A path that names one framework, a trace whose Python code is another's:
# the code wins, with a warning (docs/deviations.md C26); a path that
# agrees, or a trace with no framework code, keeps the path's; the
# reference takes the path.
t_path_against_code() {
	mkdir -p "$T/fwp"
	"$TESTDIR/gen-trace" -o "$T/fwp/vllm_run.json"
	fw() { "$BIN/trace-extract" "$@" | jq -r 'select(.type == "input") | "\(.framework) \(.framework_source)"'; }
	eq "sglang trace" "$(fw "$T/fwp/vllm_run.json" 2>"$T/err")"
	has "$T/err" "its path names vLLM, its traces' Python code SGLang (.* Python frames or ops of sglang/"
	eq "vllm path" "$(fw -q --compat reference "$T/fwp/vllm_run.json")"
	mkdir -p "$T/fwp/sglang"
	cp "$T/fwp/vllm_run.json" "$T/fwp/sglang/run.json"
	eq "sglang path" "$(fw "$T/fwp/sglang/run.json" 2>"$T/err")"
	[ ! -s "$T/err" ]
	"$TESTDIR/gen-trace" -f vllm -o "$T/fwp/x.json"
	jq -c '.traceEvents |= map(select(.cat != "python_function"))' "$T/fwp/x.json" >"$T/fwp/vllm_nocode.json"
	eq "vllm path" "$(fw -q "$T/fwp/vllm_nocode.json")"
}
check "a path naming another framework than the trace's code: the code wins, said" t_path_against_code

t_legacy_categories() {
	# Kineto before PyTorch 1.10: "Operator" and "Runtime" for cpu_op and
	# cuda_runtime (docs/deviations.md C13); the reference reads neither
	cat >"$T/legacy.json" <<'EOF2'
{"traceEvents": [
{"ph": "X", "cat": "Operator", "name": "aten::conv2d", "pid": 1, "tid": 1, "ts": 100, "dur": 50, "args": {"External id": 7}},
{"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 110, "dur": 5, "args": {"correlation": 42, "external id": 7}},
{"ph": "X", "cat": "Runtime", "name": "cudaStreamSynchronize", "pid": 1, "tid": 1, "ts": 130, "dur": 5, "args": {"correlation": 43}},
{"ph": "X", "cat": "Kernel", "name": "volta_sgemm_128x64_nt", "pid": 0, "tid": "stream 7", "ts": 120, "dur": 30, "args": {"stream": 7, "correlation": 42, "external id": 7}}
]}
EOF2
	"$BIN/trace-extract" -q "$T/legacy.json" >"$T/legacy.jsonl"
	eq "cpu_op aten::conv2d 100 50" "$(jq -r 'select(.type == "cpu_op") | "\(.type) \(.name) \(.ts) \(.dur)"' \
	    "$T/legacy.jsonl")"
	eq "launch cudaLaunchKernel 42" "$(jq -r 'select(.type == "launch") |
	    "\(.type) \(.name) \(.correlation)"' "$T/legacy.jsonl")"
	eq 1 "$(grep -c '"type":"kernel"' "$T/legacy.jsonl")" "kernels"
	# their runtime calls and GPU items carry a lowercase "external id" (C23):
	# the kernel is matched to its op
	eq "launch 7 kernel 7" "$(jq -r 'select(.type == "kernel" or .type == "launch") |
	    "\(.type) \(.external_id)"' "$T/legacy.jsonl" | tr '\n' ' ' | sed 's/ $//')" \
	    "the launch's and the kernel's External ids"
	eq "aten::conv2d" "$("$BIN/trace-stage" -q <"$T/legacy.jsonl" | "$BIN/kernel-map" -q |
	    jq -r 'select(.type == "kernel_row") | .cpu_op')"
	"$BIN/trace-extract" -q --compat reference "$T/legacy.json" >"$T/legacy.ref"
	eq 0 "$(grep -c '"type":"\(cpu_op\|launch\)"' "$T/legacy.ref")" "reference: no ops, no launches"
	eq null "$(jq -r 'select(.type == "kernel") | .external_id' "$T/legacy.ref")" \
	    "reference: the kernel's lowercase id unread"
	# the launch makes the host gap measurable downstream
	"$BIN/trace-stage" -q <"$T/legacy.jsonl" | "$BIN/step-stats" -q |
	    jq -r 'select(.type == "gpu_time") | .idle_launch_us' >"$T/il"
	eq 0 "$(cat "$T/il")" "idle_launch_us"
}
check "legacy Operator and Runtime categories are CPU ops and launches" t_legacy_categories

t_legacy_steps() {
	# there torch.profiler's step range is an Operator too: also a step
	# marker (an annotation record), its number whole; not under --compat
	cat >"$T/lstep.json" <<'EOF2'
{"traceEvents": [
{"ph": "X", "cat": "Operator", "name": "ProfilerStep#3", "pid": 1, "tid": 1, "ts": 90, "dur": 70},
{"ph": "X", "cat": "Operator", "name": "ProfilerStep#3x", "pid": 1, "tid": 1, "ts": 91, "dur": 60},
{"ph": "X", "cat": "Operator", "name": "aten::conv2d", "pid": 1, "tid": 1, "ts": 100, "dur": 50, "args": {"External id": 7}},
{"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 110, "dur": 5, "args": {"correlation": 42, "external id": 7}},
{"ph": "X", "cat": "Kernel", "name": "volta_sgemm_128x64_nt", "pid": 0, "tid": "stream 7", "ts": 120, "dur": 30, "args": {"stream": 7, "correlation": 42, "external id": 7}}
]}
EOF2
	"$BIN/trace-extract" -q --all-ops "$T/lstep.json" >"$T/lstep.jsonl"
	eq "user_annotation ProfilerStep#3 90 70" "$(jq -r 'select(.type == "annotation") |
	    "\(.cat) \(.name) \(.ts) \(.dur)"' "$T/lstep.jsonl")"
	eq 3 "$(grep -c '"type":"cpu_op"' "$T/lstep.jsonl")" "every Operator stays a CPU op"
	eq "ProfilerStep#3 1 70" "$("$BIN/trace-stage" -q <"$T/lstep.jsonl" | "$BIN/step-stats" -q |
	    jq -r 'select(.type == "step") | "\(.name) \(.kernels) \(.cpu_us)"')"
	eq 0 "$("$BIN/trace-extract" -q --compat reference "$T/lstep.json" | grep -c '"type":"annotation"')" \
	    "reference: no annotation"
	# a user_annotation copy of the same range beside it: still one step
	sed 's/^\({"ph": "X", "cat": \)"Operator"\(, "name": "ProfilerStep#3",.*\)$/&\n\1"user_annotation"\2/' \
	    "$T/lstep.json" >"$T/lstep2.json"
	eq 2 "$(grep -c ProfilerStep#3\" "$T/lstep2.json")"
	eq "ProfilerStep#3 1" "$("$BIN/trace-extract" -q "$T/lstep2.json" | "$BIN/trace-stage" -q |
	    "$BIN/step-stats" -q | jq -r 'select(.type == "step") | "\(.name) \(.kernels)"')"
}
check "legacy ProfilerStep#N of cat Operator is a step marker" t_legacy_steps

done_testing
