#!/bin/sh
# trace-capture: command line, and the checks made before any request.
. "$(dirname "$0")/lib.sh"
CAPTURE=$BIN/trace-capture
# Nothing listens on port 9 of the loopback; none of these checks reach it.
URL=http://127.0.0.1:9
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
NO_PROXY=127.0.0.1
no_proxy=127.0.0.1
export NO_PROXY no_proxy

t_help() {
	"$CAPTURE" -h >"$T/h.out" 2>"$T/h.err"
	has "$T/h.out" '^usage: trace-capture'
	has "$T/h.out" '--profile-workload'
	eq "" "$(cat "$T/h.err")" stderr
}
check '-h prints usage to stdout, exit 0' t_help

t_version() {
	"$CAPTURE" --version >"$T/v.out"
	has "$T/v.out" '^trace-capture (llm-torch-profiler-analysis) '
}
check '--version' t_version

t_no_url() {
	status 2 "$CAPTURE" 2>"$T/e"
	usage_err "$T/e" trace-capture "--url is required"
	status 2 "$CAPTURE" --url '' 2>"$T/e"
	has "$T/e" '--url is required'
}
check 'missing or empty --url: exit 2' t_no_url

t_operand() {
	status 2 "$CAPTURE" --url "$URL" stray 2>"$T/e"
	has "$T/e" "unexpected argument 'stray'"
}
check 'operands are refused' t_operand

t_bad_url() {
	status 2 "$CAPTURE" --url 127.0.0.1:9 2>"$T/e"
	has "$T/e" 'bad --url value'
}
check 'a URL without http:// is a usage error' t_bad_url

t_choices() {
	status 2 "$CAPTURE" --url "$URL" --framework sgl 2>"$T/e"
	has "$T/e" "argument --framework: invalid choice: 'sgl' (choose from 'auto', 'sglang', 'vllm', 'trtllm', 'tllm', 'tensorrt-llm', 'tokenspeed', 'token-speed', 'ts')"
	status 2 "$CAPTURE" --url "$URL" --profile-workload mixed 2>"$T/e"
	has "$T/e" "argument --profile-workload: invalid choice: 'mixed' (choose from 'legacy', 'prefill', 'decode', 'both')"
}
check 'framework and workload choices as the reference lists them' t_choices

t_numbers() {
	status 2 "$CAPTURE" --url "$URL" --num-steps x 2>"$T/e"
	has "$T/e" 'bad --num-steps value, invalid: x'
	status 2 "$CAPTURE" --url "$URL" --prefill-input-len 99999999999 2>"$T/e"
	has "$T/e" 'bad --prefill-input-len value, too large: 99999999999'
	status 2 "$CAPTURE" --url "$URL" --probe-delay nan 2>"$T/e"
	has "$T/e" 'bad --probe-delay value, invalid: nan'
	status 2 "$CAPTURE" --url "$URL" --wait-timeout -1 2>"$T/e"
	has "$T/e" 'bad --wait-timeout value, too small: -1'
	status 2 "$CAPTURE" --url "$URL" --connect-timeout 0 2>"$T/e"
	has "$T/e" 'bad --connect-timeout value, too small: 0'
}
check 'numeric options are range-checked' t_numbers

t_prefix() {
	status 2 "$CAPTURE" --url "$URL" --prof x 2>"$T/e"
	has "$T/e" "ambiguous"
	# --fram is an unambiguous prefix of --framework: the choice check runs.
	status 2 "$CAPTURE" --url "$URL" --fram nope 2>"$T/e"
	has "$T/e" "argument --framework: invalid choice: 'nope'"
}
check 'unambiguous option prefixes work, ambiguous ones are refused' t_prefix

t_remote_needs_dir() {
	status 2 "$CAPTURE" -q --url "$URL" --framework vllm 2>"$T/e"
	has "$T/e" 'vLLM live capture requires --output-dir to point at the server-side torch profiler trace path that is visible from this machine.'
	status 2 "$CAPTURE" -q --url "$URL" --framework ts --output-dir '' 2>"$T/e"
	has "$T/e" 'TokenSpeed live capture requires --output-dir'
}
check 'remote frameworks need --output-dir (exit 2, no request)' t_remote_needs_dir

t_sglang_only() {
	status 2 "$CAPTURE" --url "$URL" --framework trtllm --output-dir "$T/o" \
	    --start-step 3 2>"$T/e"
	has "$T/e" '--start-step is only supported for SGLang live capture.'
	status 2 "$CAPTURE" --url "$URL" --framework tllm --output-dir "$T/o" \
	    --merge-profiles 2>"$T/e"
	has "$T/e" '--merge-profiles is only supported for SGLang live capture.'
}
check '--start-step and --merge-profiles are SGLang-only (exit 2)' t_sglang_only

t_file_output() {
	status 2 "$CAPTURE" --url "$URL" --framework tensorrt-llm \
	    --output-dir "$T/trace.json" 2>"$T/e"
	has "$T/e" '--profile-workload both requires a directory output path for TensorRT-LLM'
	: >"$T/plainfile"
	status 2 "$CAPTURE" --url "$URL" --framework vllm --profile-workload decode \
	    --output-dir "$T/plainfile" 2>"$T/e"
	has "$T/e" '--profile-workload decode requires a directory output path for vLLM'
	[ ! -e "$T/trace.json" ]
}
check 'a staged workload with a file output path fails before capturing' t_file_output

t_refused() {
	status 4 "$CAPTURE" -q --url "$URL" 2>"$T/e"
	has "$T/e" 'cannot reach the server'
	has "$T/e" '127.0.0.1'
	status 4 "$CAPTURE" -q --url "$URL" --framework vllm --output-dir "$T/o" 2>"$T/e"
	has "$T/e" "Could not read $URL/v1/models"
	has "$T/e" 'onnect'
}
check 'connection refused: exit 4 at once, naming the URL' t_refused

t_path_hint() {
	# The output folder's path names the framework: no detection request.
	status 4 "$CAPTURE" --url "$URL" --output-dir "$T/ts/prof" 2>"$T/e"
	has "$T/e" 'framework: TokenSpeed (the --output-dir path)'
	has "$T/e" "Could not read $URL/v1/models"
	hasnt "$T/e" 'cannot reach the server to detect'
}
check 'auto: a framework named in the --output-dir path wins' t_path_hint

done_testing
