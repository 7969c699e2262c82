#!/bin/sh
# trace-extract: the model on the input record (issue 26): --model or the
# server args name it; the model family comes from the trace's Python
# frames (the framework's or Hugging Face's model file they run most, the
# model class of nn.Module frames) or its CPU op names; triage shows it in
# the header with its source.  --compat reference reads the server args only.
. "$(dirname "$0")/lib.sh"

# mk FILE NAME_OR_CAT=NAME...: a trace of python_function events (or, for
# "cpu_op:NAME" and "user_annotation:NAME", events of that category) and one kernel.
mk() {
	_f=$1
	shift
	{
		printf '{"traceEvents": [\n'
		_ts=100
		for _e in "$@"; do
			case $_e in
			cpu_op:*|user_annotation:*) _c=${_e%%:*} _n=${_e#*:} ;;
			*) _c=python_function _n=$_e ;;
			esac
			printf '{"ph": "X", "cat": "%s", "name": "%s", "pid": 1, "tid": 1, "ts": %d, "dur": 5, "args": {}},\n' \
			    "$_c" "$_n" "$_ts"
			_ts=$((_ts + 10))
		done
		printf '{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": %d, "dur": 3, "args": {"stream": 7}}\n]}\n' "$_ts"
	} >"$_f"
}

# rep N TEXT: TEXT N times, one argument each
rep() {
	_i=0
	while [ "$_i" -lt "$1" ]; do
		printf '%s\n' "$2"
		_i=$((_i + 1))
	done
}

input() {	# input FILE [OPTS...]: the input record's model members, tab-separated
	_f=$1
	shift
	"$BIN/trace-extract" -q "$@" "$_f" | head -n 1 |
	    jq -r '[.model, .model_family, .model_source, .model_evidence] | map(. // "-") | @tsv'
}

t_frames() {
	# 40 frames of SGLang's qwen3_moe.py beat 10 of qwen2.py (all 5 us
	# long); utils.py is no model
	# shellcheck disable=SC2046
	IFS='
'
	mk "$T/a.json" $(rep 40 '/sgl-workspace/sglang/python/sglang/srt/models/qwen3_moe.py(120): forward') \
	    $(rep 10 'python/sglang/srt/models/qwen2.py(80): forward') \
	    $(rep 50 'python/sglang/srt/models/utils.py(394): _reshape_for_qk_norm')
	unset IFS
	eq '-	qwen3_moe	frames	40 Python frames of sglang/srt/models/qwen3_moe.py; of 2 model families seen it was seen most (40 times; qwen2 10)' \
	    "$(input "$T/a.json")"
	# vLLM's and Hugging Face's model files
	IFS='
'
	mk "$T/b.json" $(rep 3 'vllm/model_executor/models/gpt_oss.py(293): forward')
	mk "$T/c.json" $(rep 2 'transformers/models/llama/modeling_llama.py(300): forward')
	unset IFS
	eq '-	gpt_oss	frames	3 Python frames of vllm/model_executor/models/gpt_oss.py' "$(input "$T/b.json")"
	eq '-	llama	frames	2 Python frames of transformers/models/llama/modeling_llama.py' "$(input "$T/c.json")"
}
check "the model file the Python frames run most names the family" t_frames

# A diffusion pipeline (a real xDiT FLUX.1 trace on MI300X: CLIP runs
# first, 40 frames, then T5, 173, then the denoising loop): the family whose
# code ran longest in one call, not the first or most seen.
t_longest() {
	{
		printf '{"traceEvents": [\n'
		_i=0
		while [ $_i -lt 40 ]; do
			printf '{"ph": "X", "cat": "python_function", "name": "transformers/models/clip/modeling_clip.py(700): forward", "pid": 1, "tid": 1, "ts": %d, "dur": %d, "args": {}},\n' \
			    $((1000 + _i * 10)) $([ $_i -eq 0 ] && echo 8900 || echo 5)
			_i=$((_i + 1))
		done
		_i=0
		while [ $_i -lt 173 ]; do
			printf '{"ph": "X", "cat": "python_function", "name": "transformers/models/t5/modeling_t5.py(1000): forward", "pid": 1, "tid": 1, "ts": %d, "dur": %d, "args": {}},\n' \
			    $((20000 + _i * 10)) $([ $_i -eq 0 ] && echo 28800 || echo 5)
			_i=$((_i + 1))
		done
		printf '{"ph": "X", "cat": "python_function", "name": "diffusers/pipelines/flux/pipeline_flux.py(700): __call__", "pid": 1, "tid": 1, "ts": 900, "dur": 248700, "args": {}},\n'
		printf '{"ph": "X", "cat": "python_function", "name": "xfuser/model_executor/models/transformers/transformer_flux.py(300): forward", "pid": 1, "tid": 1, "ts": 60000, "dur": 4000, "args": {}},\n'
		printf '{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 60100, "dur": 3, "args": {"stream": 7}}\n]}\n'
	} >"$T/flux.json"
	eq '-	flux	frames	2 Python frames of its model files, the longest in diffusers/pipelines/flux/pipeline_flux.py; of 3 model families seen its code ran longest in one call (248.7 ms; t5 28.8 ms; clip 8.9 ms)' \
	    "$(input "$T/flux.json")"
	# SD 3.5: the pipeline's directory and file name the family
	sed 's|diffusers/pipelines/flux/pipeline_flux.py|diffusers/pipelines/stable_diffusion_3/pipeline_stable_diffusion_3.py|; s|xfuser/model_executor/models/transformers/transformer_flux.py|diffusers/models/transformers/transformer_sd3.py|' \
	    "$T/flux.json" >"$T/sd3.json"
	eq '-	stable_diffusion_3	frames	1 Python frame of diffusers/pipelines/stable_diffusion_3/pipeline_stable_diffusion_3.py; of 4 model families seen its code ran longest in one call (248.7 ms; t5 28.8 ms; clip 8.9 ms; sd3 4.0 ms)' \
	    "$(input "$T/sd3.json")"
}
check "a diffusion pipeline, not the text encoder it runs first: the longest call names the family" t_longest

t_classes() {
	# nn.Module frames and CPU ops named after the model class
	mk "$T/a.json" 'nn.Module: DeepseekV2ForCausalLM_0' 'nn.Module: DeepseekV2DecoderLayer_3' \
	    'nn.Module: Linear_7' 'nn.Module: RMSNorm_2'
	eq '-	deepseek_v2	frames	2 nn.Module frames of its model class' "$(input "$T/a.json")"
	mk "$T/b.json" 'user_annotation:Qwen3MoeForCausalLM' 'cpu_op:aten::mm'
	eq '-	qwen3_moe	ops	1 CPU op named after its model class' "$(input "$T/b.json")"
	# a graph-mode decode trace runs no model code: nothing said
	mk "$T/c.json" 'python/sglang/srt/model_executor/model_runner.py(3373): _forward_raw'
	eq '-	-	-	-' "$(input "$T/c.json")"
}
check "model classes of nn.Module frames and CPU ops; no frames, no family" t_classes

t_named() {
	mk "$T/a.json" 'vllm/model_executor/models/gpt_oss.py(293): forward'
	eq 'openai/gpt-oss-120b	gpt_oss	option	1 Python frame of vllm/model_executor/models/gpt_oss.py' \
	    "$(input "$T/a.json" --model openai/gpt-oss-120b)"
	mkdir "$T/d" && cp "$T/a.json" "$T/d/x.trace.json" &&
	printf '{"model_path": "/models/gpt-oss-20b", "tp_size": 1}\n' >"$T/d/server_args.json"
	eq '/models/gpt-oss-20b	gpt_oss	server_args	1 Python frame of vllm/model_executor/models/gpt_oss.py' \
	    "$(input "$T/d")"
	# --model wins over the server args
	eq 'mine	gpt_oss	option	1 Python frame of vllm/model_executor/models/gpt_oss.py' "$(input "$T/d" --model mine)"
	# a stream is read once, and its one pass gives the family, as a file's does
	eq 'x	gpt_oss	option	1 Python frame of vllm/model_executor/models/gpt_oss.py' "$("$BIN/trace-extract" -q --model x - <"$T/a.json" | head -n 1 |
	    jq -r '[.model, .model_family, .model_source, .model_evidence] | map(. // "-") | @tsv')"
}
check "--model and server args name the model; the family still comes from the frames" t_named

# A named model the frames contradict is warned of; a family that fits does not.
t_contradiction() {
	mk "$T/v.json" 'vllm/model_executor/models/gpt_oss.py(293): forward'
	eq gpt_oss "$("$BIN/trace-extract" -q "$T/v.json" | head -n 1 | jq -r .model_family)"
	"$BIN/trace-extract" --model Qwen/Qwen3-8B "$T/v.json" 2>"$T/err" >/dev/null
	has "$T/err" "warning: the model named (Qwen/Qwen3-8B, from --model) and the model family the trace's frames run (gpt_oss: "
	"$BIN/trace-extract" --model openai/gpt-oss-20b "$T/v.json" 2>"$T/err" >/dev/null
	hasnt "$T/err" 'the model named'
	# a local path names no family
	"$BIN/trace-extract" --model /data/ckpt "$T/v.json" 2>"$T/err" >/dev/null
	hasnt "$T/err" 'the model named'
}
check "a --model the frames contradict is warned of" t_contradiction

t_compat() {
	mk "$T/a.json" 'vllm/model_executor/models/gpt_oss.py(293): forward'
	eq '-	-	-	-' "$(input "$T/a.json" --compat reference)"
	status 2 "$BIN/trace-extract" -q --compat reference --model x "$T/a.json" >/dev/null 2>"$T/err"
	has "$T/err" 'not a mode of the reference'
	status 2 "$TRIAGE" -q --compat reference --model x --input "$T/a.json" >/dev/null 2>"$T/err"
	has "$T/err" '--model is not a mode of the reference'
}
check "--compat reference: no family; --model refused (exit 2)" t_compat

t_header() {
	# shellcheck disable=SC2046
	IFS='
'
	mk "$T/a.json" $(rep 4 'python/sglang/srt/models/qwen3_moe.py(120): forward') \
	    'cpu_op:aten::mm'
	unset IFS
	"$TRIAGE" -q --framework sglang --input "$T/a.json" >"$T/r.md"
	has "$T/r.md" '^- \*\*Model\*\*: qwen3_moe, from the trace.s Python frames (4 Python frames of sglang/srt/models/qwen3_moe.py)$'
	"$TRIAGE" -q --framework sglang --model Qwen/Qwen3-30B-A3B --input "$T/a.json" >"$T/r2.md"
	has "$T/r2.md" '^- \*\*Model\*\*: Qwen/Qwen3-30B-A3B (from --model; model family qwen3_moe, from the trace.s frames)$'
	has "$T/r2.md" '^# Triage report: Qwen3-30B-A3B$'
}
check "the header names the model and where it came from" t_header

t_one_pass() {
	# the first trace's hints come from its own extraction pass (issue 30),
	# as from a reading of their own: a directory's next trace when the
	# first shows none; a trace that breaks, or a run stopped by a limit,
	# after its frames still names them
	mkdir -p "$T/d"
	mk "$T/d/run-TP-0.json" 'aten::mm'
	# shellcheck disable=SC2046
	IFS='
'
	mk "$T/d/run-TP-1.json" $(rep 70 'python/sglang/srt/models/qwen3.py(200): forward')
	unset IFS
	"$BIN/trace-extract" -q --all-ranks "$T/d" | head -n 1 >"$T/in"
	eq 'sglang	trace	64 Python frames or ops of sglang/ in the first 64 events	qwen3	70 Python frames of sglang/srt/models/qwen3.py' \
	    "$(jq -r '[.framework, .framework_source, .framework_evidence, .model_family,
	    .model_evidence] | @tsv' "$T/in")"
	head -c 6000 "$T/d/run-TP-1.json" >"$T/cut.json"
	status 1 "$BIN/trace-extract" -q "$T/cut.json" >"$T/cut.jsonl" 2>/dev/null
	eq 'input sglang qwen3' "$(jq -r '"\(.type) \(.framework) \(.model_family)"' "$T/cut.jsonl")"
	# its kernel twice: one past the limit of 1
	sed 's/^{"ph": "X", "cat": "kernel".*/&,\n&/' "$T/d/run-TP-1.json" >"$T/two.json"
	TRIAGE_MAX_KERNELS=1 status 1 "$BIN/trace-extract" -q "$T/two.json" >"$T/lim.jsonl" 2>/dev/null
	eq 'input sglang qwen3' "$(jq -r '"\(.type) \(.framework) \(.model_family)"' "$T/lim.jsonl")"
	# stopped before its frames: the hints are read on their own, as a
	# whole pass would give them
	{ printf '{"traceEvents": [\n'
	  printf '{"ph": "X", "cat": "kernel", "name": "k%s", "pid": 0, "tid": 7, "ts": %s, "dur": 1},\n' 1 1 2 3
	  sed -n 's/^\({"ph": "X", "cat": "python_function".*}\),$/\1,/p' "$T/d/run-TP-1.json"
	  printf '{"ph": "X", "cat": "kernel", "name": "k3", "pid": 0, "tid": 7, "ts": 9000, "dur": 1}\n]}\n'
	} >"$T/early.json"
	TRIAGE_MAX_KERNELS=1 status 1 "$BIN/trace-extract" -q "$T/early.json" >"$T/early.jsonl" \
	    2>/dev/null
	eq 'input sglang 64 Python frames or ops of sglang/ in the first 66 events qwen3' \
	    "$(jq -r '"\(.type) \(.framework) \(.framework_evidence) \(.model_family)"' "$T/early.jsonl")"
}
check "the hints of the first trace's own pass, a directory's next trace, a broken or stopped run" t_one_pass

done_testing
