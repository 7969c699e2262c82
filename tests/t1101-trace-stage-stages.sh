#!/bin/sh
# trace-stage: each kernel's stage (path stage, else the annotation it falls
# in), the selected process, and External ids through the correlation map.
. "$(dirname "$0")/lib.sh"

GEN=$TESTDIR/gen-trace
EX=$BIN/trace-extract
ST=$BIN/trace-stage

# stages FILE: "stage count" lines of the selected kernels.
stages() {
	"$EX" -q ${COMPAT:+--compat reference} "$1" | "$ST" ${COMPAT:+--compat reference} | jq -r 'select(.type == "kernel" and .sel) | .stage' | sort | uniq -c |
	    awk '{ print $2, $1 }' | tr '\n' ' ' | sed 's/ $//'
}

t_annotations() {
	"$GEN" -s both -n 3 -o "$T/both.json"
	# The GPU runs behind: of the prefill step's 6 kernels only the first
	# layer's 3 start inside (or nearest to) the prefill window, but all 6
	# were launched inside it, where a kernel sits among the CPU windows
	# (C24); the reference looks up each kernel's own start
	eq "decode 12 extend 6" "$(stages "$T/both.json")"
	eq "decode 15 extend 3" "$(COMPAT=1 stages "$T/both.json")"
	"$GEN" -s decode -o "$T/dec.json"
	eq "decode 12" "$(stages "$T/dec.json")"
}
check "stage from the prefill/decode annotations around each step" t_annotations

# Annotation names the reference misreads (docs/deviations.md, Corrections):
# SGLang's step[EXTEND ...] names no stage for it (its kernels join the
# nearest decode window), and vLLM's
# execute_context_C_generation_G is matched by substring, so 20 decode
# requests ("generation_20") are no stage and a mixed batch is decode.
t_annotation_names() {
	"$GEN" -s both -n 3 -o "$T/both.json"
	sed 's/model_forward_prefill/step[EXTEND bs=4 toks=512]/; s/model_forward_decode/step[DECODE bs=8]/g' \
	    "$T/both.json" >"$T/sgl.json"
	eq "decode 12 extend 6" "$(stages "$T/sgl.json")"
	eq "decode 18" "$(COMPAT=1 stages "$T/sgl.json")"
	sed 's/model_forward_prefill/execute_context_2_generation_10/; s/model_forward_decode/execute_context_0_generation_20/g' \
	    "$T/both.json" >"$T/vllm.json"
	eq "decode 12 extend 6" "$(stages "$T/vllm.json")"
	# reference: the mixed prefill batch reads as decode, the decode steps
	# as nothing, and every kernel goes to the nearest window: decode
	eq "decode 18" "$(COMPAT=1 stages "$T/vllm.json")"
	# stage words are whole words: DLRM's record_function "## decoder fp8
	# None ##" (a training trace's decoder layer, 4 a step in two real HTA
	# traces) names no stage; the reference reads "decoder" as decode
	sed 's/model_forward_prefill/## decoder fp8 None ##/; s/model_forward_decode/## decoder fp8 None ##/g' \
	    "$T/both.json" >"$T/dlrm.json"
	eq "all 18" "$(stages "$T/dlrm.json")"
	eq "decode 18" "$(COMPAT=1 stages "$T/dlrm.json")"
	# SGLang's graph capture marker and CamelCase words still name theirs
	sed 's/model_forward_prefill/ChunkedPrefill/; s/model_forward_decode/capture_32_decode/g' \
	    "$T/both.json" >"$T/words.json"
	eq "decode 12 extend 6" "$(stages "$T/words.json")"
}
check "annotation names: SGLang step[EXTEND], vLLM context/generation counts, whole words (reference: misread)" t_annotation_names

t_none() {
	"$GEN" -o "$T/none.json"
	eq "all 12" "$(stages "$T/none.json")"
}
check "no stage annotations: all" t_none

t_path_stage() {
	mkdir -p "$T/run/decode"
	"$GEN" -s both -o "$T/run/decode/x.trace.json"
	eq "decode 12" "$(stages "$T/run/decode/x.trace.json")"
	"$GEN" -s both -o "$T/run/trace-prefill.json"
	eq "extend 12" "$(stages "$T/run/trace-prefill.json")"
}
check "a stage in the path wins over annotations" t_path_stage

t_first_kernel() {
	"$EX" -q "$T/both.json" | "$ST" | jq -c 'select(.type == "kernel")' | head -n 1 >"$T/k1"
	eq '{"type":"kernel","t":0,"name":"void sgl_demo::rmsnorm_kernel<__nv_bfloat16, 8>(__nv_bfloat16*, __nv_bfloat16 const*, int, float)","cat":"kernel","pid":"0","tid":"7","ts":126.5,"dur":20,"stream":"7","external_id":3,"correlation":1,"overlap":true,"py_window":[0,1],"stage":"extend","sel":true}' \
	    "$(cat "$T/k1")"
}
check "kernel record after trace-stage: stage and sel added, py_window kept" t_first_kernel

t_graph_ext() {
	"$GEN" --graph -s decode -o "$T/g.json"
	"$EX" -q "$T/g.json" | "$ST" >"$T/g.out"
	eq '[3,6]' "$(jq -c 'select(.type == "kernel") | .external_id' "$T/g.out" | sort -u | jq -sc .)"
	eq "decode 12" "$(stages "$T/g.json")"
}
check "CUDA-graph kernels get the launch's External id through corr" t_graph_ext

t_order_free() {
	# annotations after the kernels (events out of order) resolve the same
	"$GEN" -s both -n 3 -d disorder -o "$T/dis.json"
	eq "decode 12 extend 6" "$(stages "$T/dis.json")"
}
check "out-of-order events: same stages" t_order_free

# The GPU clock 55 ms ahead of the host's (issue 25): every kernel starts
# 55 ms after its launch, even on an idle GPU, so by its own time it lies
# in no CPU annotation window.  Its launch call does: step 1 is prefill,
# steps 2 and 3 decode (2 layers of 3 kernels a step).  The trace's first
# kernel has nothing queued before it and starts 4.5 us after its call
# returns (in the clean trace too), here 55004.5; the others follow earlier
# work (no idle start), and none starts sooner than 55012.5 us after its
# call began, so the offset is 55004.5.
t_clock_offset() {
	"$GEN" -s both -n 3 -d gpu-ahead -o "$T/ahead.json"
	"$EX" -q "$T/ahead.json" | "$ST" >"$T/ahead.out"
	eq '1 55004.5 55012.5 55004.5' "$(jq -r 'select(.type == "gpu_pids") |
	    "\(.idle_starts) \(.idle_start_latency_us) \(.launch_start_min_us) \(.clock_offset_us)"' "$T/ahead.out")"
	eq "decode 12 extend 6" "$(stages "$T/ahead.json")"
	# --compat reference: the reference's rule, by the kernels' own times
	eq "all 18" "$("$EX" -q --compat reference "$T/ahead.json" | "$ST" --compat reference |
	    jq -r 'select(.type == "kernel") | .stage' | sort | uniq -c | awk '{ print $2, $1 }' |
	    tr '\n' ' ' | sed 's/ $//')"
	"$EX" -q --compat reference "$T/ahead.json" | "$ST" --compat reference | grep gpu_pids >"$T/g"
	hasnt "$T/g" clock_offset
	# 30 us of skew is no offset: no clock_offset_us
	"$GEN" -s both -n 3 -d skew -o "$T/skew.json"
	"$EX" -q "$T/skew.json" | "$ST" | grep gpu_pids >"$T/g"
	hasnt "$T/g" clock_offset
}
check "host and device clocks that disagree: kernels staged at their launch calls" t_clock_offset

# C24: among the CPU windows a kernel sits at its launch call.  A prefill
# kernel queued behind others starts on the GPU after the decode step's
# annotation began; a GPU-side window that holds its start still decides.
t_at_launch() {
	rec() {	# rec GPU_WINDOW: the records, with a gpu_user_annotation when 1
		echo '{"type":"trace","v":1,"t":0,"role":"single","path":"x.json","stage":"all"}'
		echo '{"type":"annotation","t":0,"name":"model_forward_prefill","cat":"user_annotation","pid":"1","tid":"1","ts":0,"dur":100,"stage":"extend"}'
		echo '{"type":"annotation","t":0,"name":"model_forward_decode","cat":"user_annotation","pid":"1","tid":"1","ts":100,"dur":100,"stage":"decode"}'
		[ "$1" = 1 ] &&
		    echo '{"type":"annotation","t":0,"name":"model_forward_decode","cat":"gpu_user_annotation","pid":"0","tid":"7","ts":140,"dur":60,"stage":"decode"}'
		echo '{"type":"launch","t":0,"name":"cudaLaunchKernel","pid":"1","tid":"1","ts":50,"dur":5,"correlation":1}'
		echo '{"type":"launch","t":0,"name":"cudaLaunchKernel","pid":"1","tid":"1","ts":120,"dur":5,"correlation":2}'
		echo '{"type":"kernel","t":0,"name":"late_prefill","cat":"kernel","pid":"0","tid":"7","ts":150,"dur":10,"stream":"7","correlation":1}'
		echo '{"type":"kernel","t":0,"name":"decode_k","cat":"kernel","pid":"0","tid":"7","ts":165,"dur":10,"stream":"7","correlation":2}'
		echo '{"type":"kernel","t":0,"name":"no_launch","cat":"kernel","pid":"0","tid":"7","ts":180,"dur":10,"stream":"7","correlation":9}'
		echo '{"type":"stats","t":0}'
	}
	st() { jq -r 'select(.type == "kernel") | "\(.name)=\(.stage)"' | tr '\n' ' ' | sed 's/ $//'; }
	rec 0 | "$ST" -q >"$T/al.out"
	eq "late_prefill=extend decode_k=decode no_launch=decode" "$(st <"$T/al.out")"
	rec 0 | "$ST" -q --compat reference >"$T/al.ref"
	eq "late_prefill=decode decode_k=decode no_launch=decode" "$(st <"$T/al.ref")"
	rec 1 | "$ST" -q >"$T/al.gpu"
	eq "late_prefill=decode decode_k=decode no_launch=decode" "$(st <"$T/al.gpu")"
}
check "kernels among the CPU windows at their launch calls; a GPU window first (C24)" t_at_launch

t_two_traces() {
	"$EX" -q "$T/both.json" "$T/none.json" | "$ST" >"$T/two.out"
	eq '0 1' "$(jq -r 'select(.type == "gpu_pids") | .t' "$T/two.out" | tr '\n' ' ' | sed 's/ $//')"
	eq "all 12" "$(jq -r 'select(.type == "kernel" and .t == 1) | .stage' "$T/two.out" | sort | uniq -c | awk '{ print $2, $1 }')"
}
check "several traces in one stream are staged one by one" t_two_traces

t_inf_annotation() {
	# an annotation of infinite times (1e999: the record reader reads it as
	# infinity) bounds no window; its end was NaN, which sorted
	# with nothing, and the decode windows after it held no kernel
	{
		echo '{"type":"trace","v":1,"t":0,"role":"single","path":"x.json","stage":"all"}'
		echo '{"type":"annotation","t":0,"name":"model_forward_extend","cat":"user_annotation","pid":"1","tid":"1","ts":-1e999,"dur":1e999,"stage":"extend"}'
		echo '{"type":"annotation","t":0,"name":"model_forward_decode","cat":"user_annotation","pid":"1","tid":"1","ts":-1e999,"dur":5,"stage":"decode"}'
		awk 'BEGIN { for (i = 0; i < 300; i++) printf "{\"type\":\"annotation\",\"t\":0,\"name\":\"model_forward_decode\",\"cat\":\"user_annotation\",\"pid\":\"1\",\"tid\":\"1\",\"ts\":%d,\"dur\":90,\"stage\":\"decode\"}\n", 100 * i }'
		echo '{"type":"kernel","t":0,"name":"k","cat":"kernel","pid":"0","tid":"7","ts":150,"dur":10,"stream":"7"}'
		echo '{"type":"stats","t":0}'
	} >"$T/inf.jsonl"
	"$ST" <"$T/inf.jsonl" >"$T/inf.out"
	eq decode "$(jq -r 'select(.type == "kernel") | .stage' "$T/inf.out")"
}
check "an annotation whose times are not finite bounds no window" t_inf_annotation

done_testing
