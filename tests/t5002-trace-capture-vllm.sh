#!/bin/sh
# trace-capture against a fake vLLM server: model discovery, OpenAI probes
# with the completions fallback, empty start body, stage folders, new-only
# traces, the settle delay and auto detection.
. "$(dirname "$0")/lib.sh"
. "$TESTDIR/capture-lib.sh"

mkdir -p "$T/out" "$T/fb" "$T/d5" "$T/leg/srv"
spawn_fake both --framework vllm --trace-dir "$T/out"
spawn_fake fb --framework vllm --trace-dir "$T/fb" --chat-status 500
spawn_fake d5 --framework vllm --trace-dir "$T/d5"
spawn_fake leg --framework vllm --trace-dir "$T/leg/srv"

# -- both stages; an old trace already in the folder must stay put --
printf '{"traceEvents": []}' | gzip >"$T/out/old.pt.trace.json.gz"
use_fake both
capture both --url "$FAKE_URL" --framework vllm --output-dir "$T/out" $FAST
stop_fake
LOG=$FAKE_LOG

t_lines() {
	eq 0 "$(cat "$T/both.rc")" exit
	printf '%s\nvllm\n' "$(cd "$T/out" && pwd -P)" >"$T/want"
	same "$T/want" "$T/both.out"
}
check 'both: exit 0 without --no-profile-by-stage; root and framework on stdout' t_lines

t_order() {
	{
		for s in prefill decode; do
			echo "GET /v1/models"
			n=10; [ $s = decode ] && n=1
			i=0; while [ $i -lt $n ]; do echo "POST /v1/chat/completions"; i=$((i + 1)); done
			echo "POST /start_profile"
			n=5; [ $s = decode ] && n=1
			i=0; while [ $i -lt $n ]; do echo "POST /v1/chat/completions"; i=$((i + 1)); done
			echo "POST /stop_profile"
		done
	} >"$T/want"
	reqs "$LOG" >"$T/got"
	same "$T/want" "$T/got"
}
check 'both: models, warm-ups, start, captures, stop for each stage' t_order

t_payloads() {
	eq "" "$(jq -r 'select(.path == "/start_profile" or .path == "/stop_profile") | .body' \
	    "$LOG" | tr -d '\n')" 'start/stop bodies'
	jq -r 'select(.path == "/start_profile") | "\(.headers["content-length"]) \(.headers["content-type"])"' \
	    "$LOG" | sort -u >"$T/got"
	echo '0 application/json' >"$T/want"
	same "$T/want" "$T/got"
	jq -c 'select(.path == "/v1/chat/completions") | .body | fromjson | keys_unsorted' \
	    "$LOG" | sort -u >"$T/got"
	echo '["model","messages","temperature","max_tokens","stream"]' >"$T/want"
	same "$T/want" "$T/got"
	jq -r 'select(.path == "/v1/chat/completions") | .body | fromjson |
	    [.model, .messages[0].role, (.messages[0].content | split(" ") | length),
	     (.messages[0].content | split(" ") | .[0]), .temperature, .max_tokens,
	     .stream, (.messages | length)] | @tsv' "$LOG" >"$T/got"
	{
		for i in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14; do
			printf 'fake-model\tuser\t4090\tprofile_probe_%s\t0\t1\tfalse\t1\n' $i
		done
		printf 'fake-model\tuser\t2\tprofile_probe_0\t0\t10\tfalse\t1\n'
		printf 'fake-model\tuser\t2\tprofile_probe_1\t0\t2048\tfalse\t1\n'
	} >"$T/want"
	same "$T/want" "$T/got"
	# No seed on the OpenAI path.
	eq 0 "$(grep -c seed "$LOG")" seeds
}
check 'both: empty start body (length 0), chat payloads, no seed' t_payloads

t_layout() {
	ls "$T/out/prefill" >"$T/p"
	ls "$T/out/decode" >"$T/d"
	eq 1 "$(wc -l <"$T/p" | tr -d ' ')" 'prefill files'
	eq 1 "$(wc -l <"$T/d" | tr -d ' ')" 'decode files'
	grep -Eq '^fake_tp0\.[0-9]+\.pt\.trace\.json\.gz$' "$T/p"
	grep -Eq '^fake_tp0\.[0-9]+\.pt\.trace\.json\.gz$' "$T/d"
	gzip -t "$T/out/prefill/"* "$T/out/decode/"*
	# The pre-existing trace neither ended a wait nor moved.
	[ -f "$T/out/old.pt.trace.json.gz" ]
	eq 3 "$(find "$T/out" -name '*.json.gz' | wc -l | tr -d ' ')" 'traces in total'
}
check 'both: new traces moved to <out>/prefill and <out>/decode; old one left' t_layout

t_notes() {
	# no --profile-prefix was given: nothing to note about it (t5010 gives one)
	hasnt "$T/both.err" 'ignores --profile-prefix'
	hasnt "$T/both.err" 'profile-by-stage'
}
check 'no note for options not given (--profile-prefix, --profile-by-stage)' t_notes

# -- auto detection, chat fallback, --profile-by-stage note, settle delay --
use_fake fb
capture fb --url "$FAKE_URL" --output-dir "$T/fb" --profile-workload decode \
    --warmup-steps 0 --profile-by-stage --profile-prefix '' --settle-delay 0.4 \
    --probe-delay 0 --poll-interval 0.05 --wait-timeout 10
stop_fake

t_fallback() {
	eq 0 "$(cat "$T/fb.rc")" exit
	eq vllm "$(sed -n 2p "$T/fb.out")"
	printf '%s\n' 'GET /server_info' 'GET /readiness' 'GET /v1/models' \
	    'GET /v1/models' 'POST /start_profile' 'POST /v1/chat/completions' \
	    'POST /v1/completions' 'POST /stop_profile' >"$T/want"
	reqs >"$T/got"
	same "$T/want" "$T/got"
	jq -c 'select(.path == "/v1/completions") | .body | fromjson |
	    [keys_unsorted, .prompt, .max_tokens]' "$FAKE_LOG" >"$T/got"
	echo '[["model","prompt","temperature","max_tokens","stream"],"profile_probe_0 profile",2048]' >"$T/want"
	same "$T/want" "$T/got"
	[ -d "$T/fb/decode" ] && [ ! -d "$T/fb/prefill" ]
}
check 'auto: vLLM from /v1/models; chat failure falls back to completions' t_fallback

t_pbs_note() {
	eq 0 "$(cat "$T/fb.rc")" exit
	has "$T/fb.err" 'note: --profile-by-stage applies to SGLang only; ignored for vLLM'
	hasnt "$T/fb.err" 'ignores --profile-prefix'
}
check '--profile-by-stage on vLLM is a note, not a failure' t_pbs_note

t_settle() {
	jq -s '[.[] | select(.method == "POST")] | (.[1].t - .[0].t) >= 0.4' \
	    "$FAKE_LOG" | grep -q true
}
check '--settle-delay: captures wait after start_profile' t_settle

# -- the reference's 5 s settle delay by default --
use_fake d5
capture d5 -q --url "$FAKE_URL" --framework vllm --output-dir "$T/d5" \
    --profile-workload decode --warmup-steps 0 --probe-delay 0 --poll-interval 0.05
stop_fake

t_default_settle() {
	eq 0 "$(cat "$T/d5.rc")" exit
	eq "" "$(cat "$T/d5.err")" 'stderr with -q'
	jq -s '[.[] | select(.method == "POST")] | (.[1].t - .[0].t) >= 5' \
	    "$FAKE_LOG" | grep -q true
}
check 'default: at least 5 s between start_profile and the capture' t_default_settle

# -- legacy into a folder: the folder of the new trace, not of older ones --
printf '{"traceEvents": []}' >"$T/leg/older.pt.trace.json"
use_fake leg
capture leg --url "$FAKE_URL" --framework vllm --output-dir "$T/leg" \
    --profile-workload legacy --warmup-steps 0 $FAST
stop_fake

t_legacy_dir() {
	eq 0 "$(cat "$T/leg.rc")" exit
	printf '%s\nvllm\n' "$T/leg/srv" >"$T/want"
	same "$T/want" "$T/leg.out"
	[ -f "$T/leg/older.pt.trace.json" ]
	ls "$T/leg/srv" | grep -Eq '^fake_tp0\.[0-9]+\.pt\.trace\.json\.gz$'
}
check 'legacy: prints the folder holding the new trace; nothing is moved' t_legacy_dir

done_testing
