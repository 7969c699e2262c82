#!/bin/sh
# fuse-detect: framework, tensor-parallel and model gates, and where the
# framework and server args come from (fuse-detect.md §1 step 4, §5, §8).
. "$(dirname "$0")/lib.sh"
. "$FIX/fuse-detect/rows.sh"

# A catalog with one pattern per framework hint, one without a hint, and
# TP and model gated ones; pattern P matches only the row "key_P_end".
mkcat() {
	pat '"pattern":"S","candidate_path":["python/sglang/a.py"],"active_keywords":["key_S_end"]'
	pat '"pattern":"V","candidate_path":["x.py","vllm/b.py"],"active_keywords":["key_V_end"]'
	pat '"pattern":"T","candidate_path":["tensorrt_llm/c.py"],"active_keywords":["key_T_end"]'
	pat '"pattern":"K","candidate_path":["TokenSpeed-kernels/d.py"],"active_keywords":["key_K_end"]'
	pat '"pattern":"None","candidate_path":["PR #1","docs/e.md"],"active_keywords":["key_None_end"]'
	pat '"pattern":"TP","require_tp":true,"min_tp_size":2,"active_keywords":["key_TP_end"]'
	pat '"pattern":"TPoff","require_tp":false,"min_tp_size":8,"active_keywords":["key_TPoff_end"]'
	pat '"pattern":"Q3","model_include":["qwen3"],"model_exclude":["qwen3.5","qwen3_5"],"active_keywords":["key_Q3_end"]'
	pat '"pattern":"Q35","model_include":["qwen3.5","qwen3_5"],"active_keywords":["key_Q35_end"]'
}
rows9() {	# rows9 T: one row per pattern of mkcat
	for p in S V T K None TP TPoff Q3 Q35; do
		srow "$1" decode "key_${p}_end" 10 90 'a.py:1 f'
	done
}
# The catalog and the rows, written once.
mkcat >"$T/cat"
rows9 0 >"$T/rows9"
# The patterns that produce a row, sorted.
fired() {	# fired FRAMEWORK ARGS_JSON
	{ inp "$1" "$2"; cat "$T/rows9"; } >"$T/in"
	fd -p "$T/cat" <"$T/in" 2>"$T/err" >"$T/out" &&
	jq -r 'select(.type=="fuse_row") | .pattern' "$T/out" | sort | paste -sd' ' -
}

t_framework() {
	eq 'None Q3 S TPoff' "$(fired sglang '{"model_path":"Qwen/Qwen3-8B"}')" &&
	eq 'None Q3 TPoff V' "$(fired vllm '{"model_path":"Qwen/Qwen3-8B"}')" &&
	eq 'None Q3 T TPoff' "$(fired trtllm '{"model_path":"Qwen/Qwen3-8B"}')" &&
	eq 'K None Q3 TPoff' "$(fired tokenspeed '{"model_path":"Qwen/Qwen3-8B"}')"
}
check 'framework hints from candidate paths gate patterns' t_framework

t_framework_quirks() {
	# "" and "auto" disable the gate; other spellings pass only hintless
	# patterns (edge case 1).
	eq 'K None Q3 S T TPoff V' "$(fired '' '{"model_path":"Qwen/Qwen3-8B"}')" &&
	eq 'K None Q3 S T TPoff V' "$(fired ' AUTO ' '{"model_path":"Qwen/Qwen3-8B"}')" &&
	eq 'None Q3 TPoff' "$(fired tensorrt-llm '{"model_path":"Qwen/Qwen3-8B"}')" &&
	eq 'None Q3 S TPoff' "$(fired ' SGLang ' '{"model_path":"Qwen/Qwen3-8B"}')"
}
check 'framework "" and auto pass all, unknown spellings only hintless' t_framework_quirks

t_tp() {
	eq 'None Q35 S TP TPoff' "$(fired sglang '{"model_path":"qwen3.5-moe","tp_size":2}')" &&
	eq 'None Q35 S TPoff' "$(fired sglang '{"model_path":"qwen3.5-moe","tp_size":1}')" &&
	eq 'None S TP TPoff' "$(fired sglang '{"tp_size":" 4 "}')" &&
	eq 'None S TP TPoff' "$(fired sglang '{"tp_size":2.7}')" &&
	eq 'None S TPoff' "$(fired sglang '{"tp_size":1.9}')" &&
	eq 'None S TPoff' "$(fired sglang '{"tp_size":0}')" &&
	eq 'None S TPoff' "$(fired sglang '{"tensor_parallel_size":8}')" &&
	eq 'None S TP TPoff' "$(fired sglang '{"tp_size":"1_6"}')"
}
check 'tp_size: require_tp only, Python int() of strings and floats' t_tp

t_tp_bad() {
	# The reference crashes on int("2.0"); we warn and use 1.
	eq 'None S TPoff' "$(fired sglang '{"tp_size":"2.0"}')" &&
	has "$T/err" "server_args tp_size '2.0' is not an integer; using 1" &&
	eq 'None S TPoff' "$(fired sglang '{"tp_size":[2]}')" &&
	has "$T/err" "server_args tp_size '\[2\]' is not an integer; using 1"
}
check 'tp_size "2.0": warning and 1 instead of a crash' t_tp_bad

t_model() {
	# Substring tests on the lowercased path; exclusion after inclusion;
	# qwen3-5 passes the Qwen3 row (edge cases 14, 31).
	eq 'None Q3 S TPoff' "$(fired sglang '{"model_path":"/models/Qwen3-5-Preview"}')" &&
	eq 'None Q35 S TPoff' "$(fired sglang '{"model_path":"/models/Qwen3_5-A3B"}')" &&
	eq 'None Q35 S TPoff' "$(fired sglang '{"model_path":"","model":"QWEN3.5"}')" &&
	eq 'None S TPoff' "$(fired sglang '{"model_path":"llama-3"}')" &&
	eq 'None S TPoff' "$(fired sglang '{}')" &&
	eq 'None Q3 S TPoff' "$(fired sglang '{"model_path":"ckpts/qwen3/x","model":"qwen3.5"}')"
}
check 'model include/exclude on the lowercased model path' t_model

t_model_registry() {
	# Registry rows 12 and 23 share an active keyword; the model decides.
	for m in Qwen/Qwen3-8B qwen3-5-test Qwen/Qwen3.5-35B; do
		{ inp sglang "{\"model_path\":\"$m\"}"
		  srow 0 decode fused_qk_norm_mrope_3d_cache_pts_quant_shuffle_kernel 500 1000 'a.py:1 f'
		} | fd | jq -r 'select(.type=="fuse_row") | .pattern'
	done >"$T/got" &&
	printf '%s\n' 'Qwen3 decode fused QK norm + 3D mRoPE + KV cache write' \
	    'Qwen3 decode fused QK norm + 3D mRoPE + KV cache write' \
	    'PR #20667 Qwen3.5 fused QK norm + RoPE + KV cache write' >"$T/want" &&
	same "$T/want" "$T/got"
}
check 'registry rows 12 and 23 are told apart by the model path' t_model_registry

t_mapping_args() {
	# Formal server args null or {} fall back to the mapping input's.
	mkcat >"$T/cat" &&
	for fa in null '{}'; do
		{ inp sglang '{"model_path":"qwen3.5","tp_size":2}' mapping
		  inp sglang "$fa" formal
		  trc 0 formal
		  rows9 0
		} | fd -p "$T/cat" | jq -r 'select(.type=="fuse_row") | .pattern' | sort | paste -sd' ' -
	done >"$T/got" &&
	printf '%s\n' 'None Q35 S TP TPoff' 'None Q35 S TP TPoff' >"$T/want" &&
	same "$T/want" "$T/got" &&
	{ inp sglang '{"model_path":"qwen3.5","tp_size":2}' mapping
	  inp vllm '{"model_path":"llama"}' formal
	  rows9 0
	} | fd -p "$T/cat" | jq -r 'select(.type=="fuse_row") | .pattern' | sort | paste -sd' ' - >"$T/got" &&
	eq 'None TPoff V' "$(cat "$T/got")"
}
check 'server args: formal if truthy, else mapping; framework always formal' t_mapping_args

t_per_trace() {
	# Rows written after both traces still use the input of their own trace.
	mkcat >"$T/cat" &&
	{ inp vllm '{"model_path":"m"}'; trc 0
	  inp sglang '{"model_path":"m"}'; trc 1
	  rows9 0
	  rows9 1
	} | fd -p "$T/cat" | jq -r 'select(.type=="fuse_row") | "\(.t):\(.pattern)"' | paste -sd' ' - >"$T/got" &&
	eq '0:V 0:None 0:TPoff 1:S 1:None 1:TPoff' "$(cat "$T/got")"
}
check 'each trace uses the input in force when it began' t_per_trace

t_mapping_trace() {
	mkcat >"$T/cat" &&
	{ inp sglang null mapping; trc 0 mapping
	  rows9 0
	} | fd -p "$T/cat" | jq -r 'select(.type=="fuse_row") | .pattern' >"$T/got" &&
	eq '' "$(cat "$T/got")"
}
check 'rows of a mapping trace get no fuse rows' t_mapping_trace

t_no_input() {
	mkcat >"$T/cat" &&
	rows9 0 | fd -p "$T/cat" 2>"$T/err" |
	    jq -r 'select(.type=="fuse_row") | .pattern' | sort | paste -sd' ' - >"$T/got" &&
	eq 'None S TPoff' "$(cat "$T/got")" &&
	has "$T/err" 'no input record names the framework; assuming sglang' &&
	rows9 0 | fd -q -p "$T/cat" 2>"$T/err" >/dev/null &&
	eq 0 "$(wc -c <"$T/err")" "stderr bytes with -q"
}
check 'no input record: sglang with a warning (silenced by -q)' t_no_input

done_testing
