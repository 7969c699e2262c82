# Helpers for the trace-capture tests (t5NNN), sourced after tests/lib.sh.
#
# start_fake NAME FAKE-ARGS...  starts tests/fake-llm-server.py on a free
#   loopback port; sets FAKE_URL, FAKE_LOG (its request log) and FAKE_DIR.
#   spawn_fake and use_fake do the same in two steps.
# stop_fake                      stops the fake in use.
# capture NAME ARGS...           runs trace-capture, keeping $T/NAME.out,
#   $T/NAME.err and $T/NAME.rc (no test asserts on time, issue 31).
# reqs [FILE]                    "METHOD PATH" per logged request.
# Every fake still running when the script ends is stopped by its pid.

CAPTURE=$BIN/trace-capture
FAKE_PIDS=""
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
NO_PROXY=127.0.0.1,localhost
no_proxy=$NO_PROXY
export NO_PROXY no_proxy

_capture_cleanup() {
	for _p in $FAKE_PIDS; do
		kill "$_p" 2>/dev/null
	done
	_cleanup
}
trap _capture_cleanup EXIT

# skip_all REASON: print one skipped check and end the script.
skip_all() {
	echo "ok - $_name: $1 # SKIP"
	_npass=$((_npass + 1))
	done_testing
	exit 0
}

# The system interpreter starts fastest (a version-manager shim can take seconds).
PYTHON=${PYTHON:-}
if [ -z "$PYTHON" ]; then
	if [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; else PYTHON=python3; fi
fi
command -v "$PYTHON" >/dev/null 2>&1 || skip_all "python3 not available"
command -v jq >/dev/null 2>&1 || skip_all "jq not available"

# spawn_fake NAME FAKE-ARGS...: start a fake without waiting for it, so a
# script can start all its fakes at once (the interpreter is slow to start).
spawn_fake() {
	_d=$T/fake-$1
	shift
	mkdir -p "$_d"
	: >"$_d/log.jsonl"
	"$PYTHON" "$TESTDIR/fake-llm-server.py" --log "$_d/log.jsonl" \
	    --port-file "$_d/port" "$@" 2>"$_d/stderr" &
	echo $! >"$_d/pid"
	FAKE_PIDS="$FAKE_PIDS $!"
}

# use_fake NAME: wait until that fake listens; set FAKE_URL, FAKE_LOG, FAKE_PID.
use_fake() {
	FAKE_DIR=$T/fake-$1
	FAKE_LOG=$FAKE_DIR/log.jsonl
	FAKE_PID=$(cat "$FAKE_DIR/pid")
	_i=0
	while [ ! -s "$FAKE_DIR/port" ] && [ $_i -lt 300 ]; do
		sleep 0.05
		_i=$((_i + 1))
	done
	FAKE_URL=http://127.0.0.1:$(cat "$FAKE_DIR/port" 2>/dev/null)
}

start_fake() {
	spawn_fake "$@"
	use_fake "$1"
}

stop_fake() {
	kill "$FAKE_PID" 2>/dev/null
	wait "$FAKE_PID" 2>/dev/null
	return 0
}

capture() {
	_n=$1
	shift
	"$CAPTURE" "$@" >"$T/$_n.out" 2>"$T/$_n.err"
	echo $? >"$T/$_n.rc"
}

reqs() {
	jq -r '"\(.method) \(.path)"' "${1:-$FAKE_LOG}"
}

# Options that make a capture fast against a fake that writes at once.
FAST="--probe-delay 0 --settle-delay 0 --poll-interval 0.05 --wait-timeout 10"
