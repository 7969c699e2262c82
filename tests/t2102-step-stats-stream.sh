#!/bin/sh
# step-stats as a filter: every record passes, where its records go, the
# Python sites of kernel-map's rows (before or after kernel-map), the
# command line and errors.
. "$(dirname "$0")/lib.sh"
. "$FIX/step-stats/records.sh"

# A graph-mode decode trace: a replay [10,30] and two eager kernels.
graph_trace() {
	trc "/p/decode/t$T_IDX.json"
	ann 'step[DECODE bs=4]' 0 100
	launch cudaGraphLaunch 1 5 1
	launch cudaLaunchKernel 40 2 2
	launch cudaLaunchKernel 50 2 3
	kern graph_gemm kernel 10 20 1 7
	kern 'void argmax_kernel<float>(float*)' kernel 45 4 2 7
	kern 'void argmax_kernel<float>(float*)' kernel 55 6 3 7
	end
}

two_traces() {
	T_IDX=0 graph_trace
	T_IDX=1 graph_trace
}

t_passthrough() {
	two_traces >"$T/in"
	ss <"$T/in" >"$T/out"
	grep -v -e '"type":"gpu_time"' -e '"type":"step"' -e '"type":"graph_escape"' \
	    -e '"type":"launch_delay"' -e '"type":"kernel_delay"' -e '"type":"stream_time"' \
	    -e '"type":"idle_gap"' "$T/out" >"$T/rest"
	same "$T/in" "$T/rest"
}
check 'every input record passes byte for byte' t_passthrough

t_order() {
	two_traces | ss >"$T/out"
	jq -r '[.type, .t] | join(" ")' "$T/out" | uniq >"$T/got"
	printf '%s\n' 'trace 0' 'gpu_pids 0' 'annotation 0' 'launch 0' 'kernel 0' 'gpu_time 0' \
	    'idle_gap 0' 'launch_delay 0' 'kernel_delay 0' 'stream_time 0' 'step 0' 'stats 0' 'trace 1' \
	    'gpu_pids 1' 'annotation 1' 'launch 1' 'kernel 1' 'gpu_time 1' 'idle_gap 1' 'launch_delay 1' \
	    'kernel_delay 1' 'stream_time 1' 'step 1' 'stats 1' 'graph_escape 0' \
	    'graph_escape 1' >"$T/want"
	same "$T/want" "$T/got"
	# ids in the order written, per type, over the whole run (issue 29)
	eq 'gpu-1 gap-1 gap-2 step-1 gpu-2 gap-3 gap-4 step-2 escape-1 escape-2' \
	    "$(jq -r 'select(.id) | .id' "$T/out" | tr '\n' ' ' | sed 's/ $//')"
	eq '0 void argmax_kernel<float> 2 10' \
	    "$(rec graph_escape 'select(.t == 0) | "\(.t) \(.kernel) \(.launches) \(.total_us)"' "$T/out")"
}
check 'gpu_time with its idle gaps and the breakdowns of its stage, and step, before their trace stats, graph_escape at the end; row ids' t_order

# kernel_row records lend their location to the escape row of the same
# trace, stage and canonical kernel, wherever they come in the stream.
t_sites() {
	{
		T_IDX=0 graph_trace | sed '$d'
		T_IDX=0 krow decode 'void argmax_kernel<float>' 'python/sglang/srt/sampler.py:88 forward'
		T_IDX=0 end
		T_IDX=1 graph_trace
		T_IDX=1 krow extend 'void argmax_kernel<float>' 'wrong/stage.py:1 f'
		T_IDX=2 krow decode 'void argmax_kernel<float>' 'wrong/trace.py:1 f'
	} | ss >"$T/out"
	rec graph_escape '"\(.t) \(.location // "-")"' "$T/out" >"$T/got"
	printf '%s\n' '0 python/sglang/srt/sampler.py:88 forward' '1 -' >"$T/want"
	same "$T/want" "$T/got"
}
check 'graph_escape location from the kernel_row of the same trace, stage and kernel' t_sites

# A generated graph-mode trace through the real pipeline: step-stats gives
# the same gpu_time and step records before and after kernel-map, and after
# it the escape rows carry kernel-map's locations.  The eager step is
# annotated decode too, so that its 4 kernels are decode's escapes.
t_kernel_map_order() {
	"$TOP/tests/gen-trace" -s both -n 3 --streams 2 --graph |
	    sed 's/model_forward_prefill/model_forward_decode/' >"$T/t.json"
	"$BIN/trace-extract" -q "$T/t.json" | "$BIN/trace-stage" -q >"$T/staged"
	ss <"$T/staged" | "$BIN/kernel-map" >"$T/before"
	"$BIN/kernel-map" <"$T/staged" | ss >"$T/after"
	grep -e '"type":"gpu_time"' -e '"type":"step"' "$T/before" >"$T/b"
	grep -e '"type":"gpu_time"' -e '"type":"step"' "$T/after" >"$T/a"
	[ -s "$T/b" ]
	same "$T/b" "$T/a"
	eq 4 "$(grep -c '"type":"graph_escape"' "$T/after")" "escape rows"
	rec graph_escape '"\(.t)\t\(.stage)\t\(.kernel)\t\(.location)"' "$T/after" | sort >"$T/got"
	rec kernel_row '"\(.t)\t\(.stage)\t\(.kernel)\t\(.location)"' "$T/after" | sort >"$T/rows"
	eq 4 "$(grep -c -F -x -f "$T/got" "$T/rows")" "escape rows with their kernel row's location"
	eq 0 "$(rec graph_escape 'select(has("location"))' "$T/before" | wc -l | tr -d ' ')"
}
check 'same figures before and after kernel-map; after it, kernel-map locations' t_kernel_map_order

t_unstaged() {
	"$TOP/tests/gen-trace" >"$T/t.json"
	"$BIN/trace-extract" -q "$T/t.json" >"$T/rec"
	status 0 ss <"$T/rec" >"$T/out" 2>"$T/err"
	has "$T/err" "run trace-stage first"
	hasnt "$T/out" '"type":"gpu_time"'
	status 0 ss -q <"$T/rec" >/dev/null 2>"$T/err"
	[ ! -s "$T/err" ]
}
check 'unstaged input: a warning (silenced by -q), nothing counted, exit 0' t_unstaged

t_cli() {
	ss --help >"$T/out"
	eq 'usage: step-stats [-q] [file]' "$(head -n 1 "$T/out")"
	status 2 ss a b 2>"$T/err"
	usage_err "$T/err" step-stats "one record file at most (got 2)"
	status 2 ss --bogus 2>"$T/err"
	status 1 ss "$T/nonexistent" 2>"$T/err"
	has "$T/err" "cannot open"
	two_traces >"$T/in"
	ss "$T/in" >"$T/a"
	ss <"$T/in" >"$T/b"
	same "$T/a" "$T/b"
}
check 'command line: --help, bad usage exit 2, a file operand as stdin' t_cli

t_errors() {
	printf '%s\n' '{"type":"trace","t":0}' '{"type":"launch","t":0,"name":"x","ts":1,"dur":1}' \
	    '{"type":"stats","t":0}' >"$T/in"
	status 1 ss <"$T/in" >/dev/null 2>"$T/err"
	has "$T/err" "<stdin>:2: launch record: member 'correlation' is missing"
	printf '%s\n' '{"type":"trace","t":0}' '{"type":"kernel","t":0,"name":"k","ts":1,"dur":1}' >"$T/in"
	status 1 ss <"$T/in" >/dev/null 2>"$T/err"
	has "$T/err" "input ended inside trace 0"
	two_traces >"$T/in"
	status 1 ss <"$T/in" >/dev/full 2>"$T/err"
}
check 'malformed or truncated input and write errors exit 1' t_errors

done_testing
