#!/bin/sh
# trace-capture failure paths: every one exits 4 with the HTTP status and
# body, or with what timed out and the folder watched; a failed start or
# probe is still followed by stop_profile; nothing hangs.
. "$(dirname "$0")/lib.sh"
. "$TESTDIR/capture-lib.sh"

ONE="--profile-workload decode --warmup-steps 0 $FAST"

# Every fake this script uses, started at once.
for fw in sglang vllm trtllm tokenspeed; do
	mkdir -p "$T/s-$fw"
	spawn_fake "start-$fw" --framework "$fw" --trace-dir "$T/s-$fw" \
	    --start-status 404 --start-body '{"detail": "Not Found"}'
done
mkdir -p "$T/none" "$T/slow" "$T/slower" "$T/stop" "$T/hang" "$T/hs"
printf '{"traceEvents": []}\n' >"$T/none/old.pt.trace.json"
spawn_fake none --framework vllm --trace-dir "$T/none" --no-trace
spawn_fake slow --framework vllm --trace-dir "$T/slow" --slow-trace 1.5
spawn_fake slower --framework vllm --trace-dir "$T/slower" --slow-trace 4
spawn_fake stop --framework vllm --trace-dir "$T/stop" --stop-status 500 \
    --stop-body 'profiler crashed'
for m in 404 empty bad; do
	mkdir -p "$T/m-$m"
	spawn_fake "models-$m" --framework vllm --trace-dir "$T/m-$m" --models $m
done
spawn_fake hang --framework sglang --hang /generate
spawn_fake hs --framework vllm --trace-dir "$T/hs" --hang /start_profile
spawn_fake gone --framework sglang
mkdir -p "$T/sig"
spawn_fake sig --framework vllm --trace-dir "$T/sig" --hang /v1/chat/completions

# start_profile rejected, for each framework.
for fw in sglang vllm trtllm tokenspeed; do
	use_fake "start-$fw"
	capture "start-$fw" --url "$FAKE_URL" --framework "$fw" \
	    --output-dir "$T/s-$fw" $ONE
	cp "$FAKE_LOG" "$T/start-$fw.log"
	stop_fake
done

t_start_rejected() {
	for fw in sglang vllm trtllm tokenspeed; do
		eq 4 "$(cat "$T/start-$fw.rc")" "$fw exit"
		eq "" "$(cat "$T/start-$fw.out")" "$fw stdout"
		has "$T/start-$fw.err" "cannot start the .* profiler: POST http://127.0.0.1:[0-9]*/start_profile: HTTP 404: {\"detail\": \"Not Found\"}"
		reqs "$T/start-$fw.log" | tail -n 2 >"$T/got"
		printf '%s\n' 'POST /start_profile' 'POST /stop_profile' >"$T/want"
		same "$T/want" "$T/got"
		has "$T/start-$fw.err" 'stop_profile was still sent'
	done
	has "$T/start-vllm.err" "vLLM live torch profiling requires the server to be launched with --profiler-config"
	has "$T/start-trtllm.err" "TLLM_PROFILE_START_STOP=<start>-<stop>"
	has "$T/start-tokenspeed.err" "TokenSpeed live torch profiling requires a server build"
}
check 'start rejected (404 + body): exit 4, status and body quoted, stop still sent' t_start_rejected

# No trace is ever written; an old trace in the folder must not end the wait.
use_fake none
capture none --url "$FAKE_URL" --framework vllm --output-dir "$T/none" \
    --profile-workload decode --warmup-steps 0 --probe-delay 0 --settle-delay 0 \
    --poll-interval 0.05 --wait-timeout 1
stop_fake

t_no_trace() {
	eq 4 "$(cat "$T/none.rc")" exit
	has "$T/none.err" "no new trace appeared in '$T/none' within 1 s (1 file(s) already there were ignored)"
	eq "" "$(cat "$T/none.out")" stdout
}
check 'no trace written: exit 4 within --wait-timeout, naming the folder' t_no_trace

# The trace is still being written when stop_profile returns.
use_fake slow
capture slow --url "$FAKE_URL" --framework vllm --output-dir "$T/slow" $ONE
stop_fake

t_slow() {
	eq 0 "$(cat "$T/slow.rc")" exit
	set -- "$T"/slow/decode/*.pt.trace.json.gz
	[ -f "$1" ]
	gzip -t "$1"
	gzip -dc "$1" | jq -e '.traceEvents | length == 3' >/dev/null
}
check 'trace still being written at stop: the wait holds until it is complete' t_slow

use_fake slower
capture slower --url "$FAKE_URL" --framework vllm --output-dir "$T/slower" \
    --profile-workload decode --warmup-steps 0 --probe-delay 0 --settle-delay 0 \
    --poll-interval 0.05 --wait-timeout 1
stop_fake

t_slower() {
	eq 4 "$(cat "$T/slower.rc")" exit
	has "$T/slower.err" "trace still incomplete in '$T/slower' after 1 s: 'fake_tp0\\.[0-9]*\\.pt\\.trace\\.json\\.gz' ([0-9]* bytes, gzip stream without its trailer)"
	# Nothing half-written was moved into the stage folder.
	[ ! -d "$T/slower/decode" ]
}
check 'trace never completed within the wait: exit 4 naming file and folder' t_slower

# stop_profile fails on a remote framework.
use_fake stop
capture stop --url "$FAKE_URL" --framework vllm --output-dir "$T/stop" $ONE
stop_fake

t_stop_failed() {
	eq 4 "$(cat "$T/stop.rc")" exit
	has "$T/stop.err" "Failed to stop vLLM profiler via $FAKE_URL/stop_profile: POST $FAKE_URL/stop_profile: HTTP 500: profiler crashed"
}
check 'stop failed: exit 4 with status and body' t_stop_failed

# /v1/models problems (§6.6 messages), before anything is started.
for m in 404 empty bad; do
	use_fake "models-$m"
	capture "models-$m" --url "$FAKE_URL" --framework vllm --output-dir "$T/m-$m" $ONE
	cp "$FAKE_LOG" "$T/models-$m.log"
	stop_fake
done

t_models() {
	for m in 404 empty bad; do
		eq 4 "$(cat "$T/models-$m.rc")" "$m exit"
		eq "GET /v1/models" "$(reqs "$T/models-$m.log")" "$m requests"
	done
	has "$T/models-404.err" 'Could not read http://127.0.0.1:[0-9]*/v1/models: GET .*: HTTP 404: {"detail": "Not Found"}'
	has "$T/models-empty.err" 'No models returned by http://127.0.0.1:[0-9]*/v1/models'
	has "$T/models-bad.err" 'Malformed /v1/models payload from http://127.0.0.1:[0-9]*: '
}
check '/v1/models unreadable, empty or malformed: exit 4, nothing started' t_models

# A capture probe that never answers: the request timeout ends it, then stop.
use_fake hang
capture hang --url "$FAKE_URL" --framework sglang --output-dir "$T/hang" \
    --request-timeout 1 $ONE
cp "$FAKE_LOG" "$T/hang.log"
stop_fake

t_probe_hang() {
	eq 4 "$(cat "$T/hang.rc")" exit
	has "$T/hang.err" 'capture request 1 of 1 failed: POST http://127.0.0.1:[0-9]*/generate: timed out'
	reqs "$T/hang.log" | tail -n 2 >"$T/got"
	printf '%s\n' 'POST /generate' 'POST /stop_profile' >"$T/want"
	same "$T/want" "$T/got"
}
check 'a probe that hangs: --request-timeout, exit 4, stop still sent' t_probe_hang

# A start_profile that never answers.
use_fake hs
capture hs --url "$FAKE_URL" --framework vllm --output-dir "$T/hs" \
    --request-timeout 1 $ONE
stop_fake

t_start_hang() {
	eq 4 "$(cat "$T/hs.rc")" exit
	has "$T/hs.err" 'cannot start the vLLM profiler: POST .*/start_profile: timed out'
	# it may yet start after the stop: a warning, not the configuration hint
	has "$T/hs.err" '^trace-capture: warning: the server may still be starting its profiler; if the start completes after the stop sent now, the profiler runs on'
	hasnt "$T/hs.err" 'profiler-config'
}
check 'a start that hangs: exit 4 within the request timeout, a warning that it may yet start' t_start_hang

# The server is gone: connection refused, for an explicit framework too.
use_fake gone
GONE=$FAKE_URL
stop_fake
capture gone --url "$GONE" --framework sglang --output-dir "$T/gone" $ONE

t_gone() {
	eq 4 "$(cat "$T/gone.rc")" exit
	has "$T/gone.err" "cannot start the SGLang profiler: POST $GONE/start_profile: .*onnect"
}
check 'server down: exit 4 quickly, naming the URL' t_gone

# SIGTERM while a capture request is in flight: the profiler is stopped.
use_fake sig
"$CAPTURE" --url "$FAKE_URL" --framework vllm --output-dir "$T/sig" \
    --request-timeout 30 $ONE >"$T/sig.out" 2>"$T/sig.err" &
SIGPID=$!
_i=0
while ! grep -q chat/completions "$FAKE_LOG" && [ $_i -lt 100 ]; do
	sleep 0.05
	_i=$((_i + 1))
done
kill -TERM $SIGPID
wait $SIGPID
echo $? >"$T/sig.rc"
stop_fake

t_signal() {
	eq 4 "$(cat "$T/sig.rc")" exit
	has "$T/sig.err" 'capture request 1 of 1 failed: POST .*/v1/chat/completions: interrupted by a signal'
	reqs | tail -n 3 >"$T/got"
	printf '%s\n' 'POST /start_profile' 'POST /v1/chat/completions' \
	    'POST /stop_profile' >"$T/want"
	same "$T/want" "$T/got"
}
check 'SIGTERM during a capture: stop_profile sent, exit 4 at once' t_signal

done_testing
