#!/bin/sh
# trace-capture against a fake TensorRT-LLM server: a trace folder with
# stage workloads, and a fixed trace file with the legacy workload.
. "$(dirname "$0")/lib.sh"
. "$TESTDIR/capture-lib.sh"

mkdir -p "$T/out" "$T/fixed"
spawn_fake dir --framework trtllm --trace-dir "$T/out" --ranks 2
spawn_fake file --framework trtllm --trace-file "$T/fixed/trace.json"

# -- folder mode, both stages, two ranks --
use_fake dir
capture dir --url "$FAKE_URL" --framework tensorrt-llm --output-dir "$T/out" $FAST
stop_fake

t_dir() {
	eq 0 "$(cat "$T/dir.rc")" exit
	printf '%s\ntrtllm\n' "$(cd "$T/out" && pwd -P)" >"$T/want"
	same "$T/want" "$T/dir.out"
	for s in prefill decode; do
		eq "fake_tp0 fake_tp1" "$(ls "$T/out/$s" | sed 's/\..*//' | tr '\n' ' ' | sed 's/ $//')" "$s ranks"
	done
	eq 0 "$(find "$T/out" -maxdepth 1 -type f | wc -l | tr -d ' ')" 'files left at the top'
	hasnt "$T/dir.err" 'ignores --profile-prefix'
}
check 'folder: both ranks of each stage moved to their stage folder' t_dir

t_dir_order() {
	reqs | uniq -c | awk '{print $1, $2, $3}' >"$T/got"
	printf '%s\n' '1 GET /v1/models' '10 POST /v1/chat/completions' \
	    '1 POST /start_profile' '5 POST /v1/chat/completions' '1 POST /stop_profile' \
	    '1 GET /v1/models' '1 POST /v1/chat/completions' '1 POST /start_profile' \
	    '1 POST /v1/chat/completions' '1 POST /stop_profile' >"$T/want"
	same "$T/want" "$T/got"
	eq "" "$(jq -r 'select(.path == "/start_profile") | .body' "$FAKE_LOG" | tr -d '\n')" 'start body'
}
check 'folder: same protocol as vLLM, empty start body' t_dir_order

# -- fixed file, legacy workload, run twice (the file is rewritten) --
use_fake file
capture file1 --url "$FAKE_URL" --framework trtllm --output-dir "$T/fixed/trace.json" \
    --profile-workload legacy --warmup-steps 1 --probe-max-new-tokens 7 $FAST
capture file2 --url "$FAKE_URL" --framework trtllm --output-dir "$T/fixed/trace.json" \
    --profile-workload legacy --warmup-steps 1 --probe-max-new-tokens 7 $FAST
stop_fake

t_file() {
	eq 0 "$(cat "$T/file1.rc")" 'first exit'
	printf '%s\ntrtllm\n' "$T/fixed/trace.json" >"$T/want"
	same "$T/want" "$T/file1.out"
	jq -e '.traceEvents | length == 3' "$T/fixed/trace.json" >/dev/null
	jq -r 'select(.path == "/v1/chat/completions") | .body | fromjson |
	    "\(.messages[0].content | split(" ") | .[0])|\(.max_tokens)"' \
	    "$FAKE_LOG" | head -n 2 >"$T/got"
	printf '%s\n' 'profile_probe_0|7' 'profile_probe_1|7' >"$T/want"
	same "$T/want" "$T/got"
}
check 'legacy: a fixed trace file is the captured path' t_file

t_file_again() {
	# The file existed before the second run; its rewrite is what ends the wait.
	eq 0 "$(cat "$T/file2.rc")" 'second exit'
	same "$T/file1.out" "$T/file2.out"
}
check 'legacy: a rewritten fixed file counts as a new trace' t_file_again

done_testing
