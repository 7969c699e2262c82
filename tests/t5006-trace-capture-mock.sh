#!/bin/sh
# trace-capture against the shared mock server and its capture scenarios
# (cases B38, B39, B50), plus a partial-write scenario of our own.
. "$(dirname "$0")/lib.sh"
. "$TESTDIR/capture-lib.sh"

MOCK=$SHARED/tools/mock-llm-server
[ -f "$MOCK" ] && [ -d "$SHARED/cases" ] || skip_all "shared mock server not available"

# mock NAME SCENARIO: start the mock on a free port serving $T/NAME.
mock() {
	mkdir -p "$T/$1"
	_port=$("$PYTHON" -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])')
	"$PYTHON" "$MOCK" "$2" "$_port" "$T/$1" 2>"$T/$1.mock" &
	echo $! >"$T/$1.pid"
	FAKE_PIDS="$FAKE_PIDS $!"
	echo "http://127.0.0.1:$_port" >"$T/$1.url"
}

# wait_mock NAME: until that mock answers (or about 10 s); sets MURL.
wait_mock() {
	MURL=$(cat "$T/$1.url")
	_i=0
	while ! grep -q 'GET /v1/models' "$T/$1.mock" 2>/dev/null && [ $_i -lt 100 ]; do
		curl -s -o /dev/null --max-time 1 "$MURL/v1/models" 2>/dev/null
		sleep 0.1
		_i=$((_i + 1))
	done
}

unmock() {
	kill "$(cat "$T/$1.pid")" 2>/dev/null
	wait "$(cat "$T/$1.pid")" 2>/dev/null
	return 0
}

command -v curl >/dev/null 2>&1 || skip_all "curl not available to probe the mock"

# All four mocks start at once; the interpreter is slow to start.
mock b50 "$SHARED/cases/B50-capture-ok.json"
mock b38 "$SHARED/cases/B38-capture-no-trace.json"
mock b39 "$SHARED/cases/B39-capture-start-error.json"
mock part "$FIX/trace-capture/partial-then-complete.json"

wait_mock b50
capture b50 --url "$MURL" --output-dir "$T/b50" $FAST
unmock b50

t_b50() {
	eq 0 "$(cat "$T/b50.rc")" exit
	printf '%s\nvllm\n' "$(cd "$T/b50" && pwd -P)" >"$T/want"
	same "$T/want" "$T/b50.out"
	gzip -t "$T/b50/prefill/host-1234.pt.trace.json.gz"
	gzip -t "$T/b50/decode/host-1234.pt.trace.json.gz"
}
check 'B50 healthy server: exit 0, one complete trace per stage folder' t_b50

wait_mock b38
capture b38 --url "$MURL" --output-dir "$T/b38" --profile-workload decode \
    --warmup-steps 0 --probe-delay 0 --settle-delay 0 --poll-interval 0.05 \
    --wait-timeout 1
unmock b38

t_b38() {
	eq 4 "$(cat "$T/b38.rc")" exit
	has "$T/b38.err" "no new trace appeared in '$T/b38' within 1 s"
	eq "" "$(cat "$T/b38.out")" stdout
}
check 'B38 server never writes a trace: exit 4 within the wait, folder named' t_b38

wait_mock b39
capture b39 --url "$MURL" --output-dir "$T/b39" $FAST
unmock b39

t_b39() {
	eq 4 "$(cat "$T/b39.rc")" exit
	has "$T/b39.err" 'cannot start the vLLM profiler: POST .*/start_profile: HTTP 404: {"detail": "Not Found"}'
	has "$T/b39.err" 'stop_profile was still sent, and failed too: .*HTTP 404'
	grep 'POST /st' "$T/b39.mock" | sed 's/.*"POST \([^ ]*\) .*/\1/' >"$T/got"
	printf '%s\n' /start_profile /stop_profile >"$T/want"
	same "$T/want" "$T/got"
}
check 'B39 start answers 404: exit 4 with status and body, stop still sent' t_b39

wait_mock part
capture part --url "$MURL" --framework vllm --output-dir "$T/part" $FAST \
    --profile-workload prefill
unmock part

t_partial() {
	eq 0 "$(cat "$T/part.rc")" exit
	gzip -t "$T/part/prefill/host-1234.pt.trace.json.gz"
}
check 'partial then complete: the wait holds until the gzip trailer is there' t_partial

done_testing
