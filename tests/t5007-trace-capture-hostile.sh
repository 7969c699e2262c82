#!/bin/sh
# trace-capture against servers and folders that misbehave (issue 21):
# redirects (off by default; --follow-redirects: same origin only), user
# info in --url (sent, never printed), a query and a fragment in --url, a
# header trickled byte by byte, symlink loops in the output folder, a name
# taken in the stage folder, and a signal while waiting.
. "$(dirname "$0")/lib.sh"
. "$TESTDIR/capture-lib.sh"

# spawn_bad NAME ARGS...: tests/fake-bad-server.py; use_fake NAME then works.
spawn_bad() {
	_d=$T/fake-$1
	shift
	mkdir -p "$_d"
	: >"$_d/log.jsonl"
	"$PYTHON" "$TESTDIR/fake-bad-server.py" --log "$_d/log.jsonl" \
	    --port-file "$_d/port" "$@" 2>"$_d/stderr" &
	echo $! >"$_d/pid"
	FAKE_PIDS="$FAKE_PIDS $!"
}

# capture, inside a check (whose body runs under set -e)
cap() {
	set +e
	capture "$@"
	set -e
}

mkdir -p "$T/far" "$T/near" "$T/cred" "$T/query" "$T/loop" "$T/taken" "$T/sig"
spawn_fake far --framework vllm --trace-dir "$T/far"
spawn_fake near --framework vllm --trace-dir "$T/near"
spawn_fake cred --framework vllm --trace-dir "$T/cred"
spawn_fake query --framework vllm --trace-dir "$T/query"
spawn_fake loop --framework vllm --trace-dir "$T/loop"
spawn_fake taken --framework trtllm --trace-file "$T/taken/trace.json"
spawn_fake sig --framework vllm --trace-dir "$T/sig" --no-trace
use_fake far
FAR_URL=$FAKE_URL
FAR_LOG=$FAKE_LOG
use_fake near
spawn_bad away --mode redirect --to "$FAR_URL"
spawn_bad same --mode proxy --upstream "$FAKE_URL"
NEAR_LOG=$FAKE_LOG
spawn_bad trickle --mode trickle --interval 0.1

# -- redirects --
t_redirect_away() {
	use_fake away
	cap away --url "$FAKE_URL" --framework vllm --output-dir "$T/far" $FAST
	eq 4 "$(cat "$T/away.rc")" "exit status"
	has "$T/away.err" "GET $FAKE_URL/v1/models: HTTP 307 redirecting to $FAR_URL/v1/models (not followed: --follow-redirects follows redirects to the same server)"
	cap away2 --url "$FAKE_URL" --framework vllm --output-dir "$T/far" $FAST --follow-redirects
	eq 4 "$(cat "$T/away2.rc")" "exit status"
	has "$T/away2.err" "HTTP 307 redirecting to $FAR_URL/v1/models (not followed: another server than --url names)"
	# the other server never heard of us
	eq 0 "$(wc -l <"$FAR_LOG" | tr -d ' ')" "requests that reached the other server"
}
check "a redirect to another server is not followed, with or without --follow-redirects" t_redirect_away

t_redirect_same() {
	use_fake same
	cap same0 --url "$FAKE_URL" --framework vllm --output-dir "$T/near" $FAST
	eq 4 "$(cat "$T/same0.rc")" "exit status without --follow-redirects"
	has "$T/same0.err" "HTTP 307 redirecting to $FAKE_URL/real/v1/models (not followed: --follow-redirects"
	cap same --url "$FAKE_URL" --framework vllm --output-dir "$T/near" $FAST --follow-redirects
	eq 0 "$(cat "$T/same.rc")" "exit status with --follow-redirects"
	# every call went through the redirect, with its method and body (307)
	jq -r 'select(.path | startswith("/real/") | not) | "\(.method) \(.path)"' "$FAKE_LOG" |
	    grep -c 'POST /start_profile' | grep -qx 2
	jq -r '"\(.method) \(.path)"' "$NEAR_LOG" | grep -c '^POST /start_profile$' | grep -qx 2
	ls "$T/near/prefill" | grep -q 'pt.trace.json.gz$'
	ls "$T/near/decode" | grep -q 'pt.trace.json.gz$'
}
check "a redirect to the same server: refused by default, followed with --follow-redirects" t_redirect_same

# -- credentials, query, fragment --
t_credentials() {
	use_fake cred
	port=${FAKE_URL##*:}
	cap cred --url "http://probe:s3cr%21t@127.0.0.1:$port" --framework vllm \
	    --output-dir "$T/cred" $FAST --profile-workload prefill
	eq 0 "$(cat "$T/cred.rc")" "exit status"
	# sent as basic authentication with every request: probe:s3cr!t
	jq -r '.headers.authorization' "$FAKE_LOG" | sort -u >"$T/auth"
	eq "Basic $(printf 'probe:s3cr!t' | base64)" "$(cat "$T/auth")" "authorization"
	# never printed: a failing call (connection refused) names the URL masked
	kill "$FAKE_PID"
	i=0
	while kill -0 "$FAKE_PID" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	cap cred2 --url "http://probe:s3cr%21t@127.0.0.1:$port/" --framework vllm \
	    --output-dir "$T/cred" $FAST
	eq 4 "$(cat "$T/cred2.rc")" "exit status"
	hasnt "$T/cred2.err" 's3cr'
	has "$T/cred2.err" "http://127.0.0.1:$port/v1/models"
	cap cred3 --url "ftp://probe:s3cr%21t@127.0.0.1:$port/" --framework vllm \
	    --output-dir "$T/cred"
	eq 2 "$(cat "$T/cred3.rc")" "exit status"
	has "$T/cred3.err" "not an http:// or https:// URL: ftp://probe:\*\*\*@127.0.0.1:$port/"
	hasnt "$T/cred3.err" 's3cr'
}
check "user info in --url is sent as credentials and masked in every message" t_credentials

t_query_fragment() {
	use_fake query
	spawn_bad qproxy --mode proxy --no-redirect --upstream "$FAKE_URL"
	use_fake qproxy
	cap query --url "$FAKE_URL/?key=abc#frag" --framework vllm --output-dir "$T/query" \
	    $FAST --profile-workload prefill
	eq 0 "$(cat "$T/query.rc")" "exit status"
	jq -r '"\(.method) \(.path)"' "$FAKE_LOG" | sort -u >"$T/got"
	printf '%s\n' 'GET /v1/models?key=abc' 'POST /start_profile?key=abc' \
	    'POST /stop_profile?key=abc' 'POST /v1/chat/completions?key=abc' | sort >"$T/want"
	same "$T/want" "$T/got"
}
check "a query in --url goes with every request, a fragment with none" t_query_fragment

# -- a header trickled one byte at a time --
t_trickle() {
	use_fake trickle
	cap trickle --url "$FAKE_URL" --framework vllm --output-dir "$T/far" $FAST \
	    --request-timeout 3
	eq 4 "$(cat "$T/trickle.rc")" "exit status"
	has "$T/trickle.err" "GET $FAKE_URL/v1/models: timed out: the response header was still incomplete 3 s after it began ([0-9]* bytes received)"
	hasnt "$T/trickle.err" 'no data for'
}
check "a header trickled byte by byte: timed out in the header phase, said so" t_trickle

# -- the output folder --
t_links() {
	# two links back to the folder itself: the walk once doubled per level
	ln -s . "$T/loop/latest"
	ln -s . "$T/loop/current"
	use_fake loop
	cap loop --url "$FAKE_URL" --framework vllm --output-dir "$T/loop" $FAST
	eq 0 "$(cat "$T/loop.rc")" "exit status"
	eq 1 "$(ls "$T/loop/prefill" | grep -c 'pt.trace.json.gz$')" "prefill traces"
	eq 1 "$(ls "$T/loop/decode" | grep -c 'pt.trace.json.gz$')" "decode traces"
	eq 0 "$(ls "$T/loop" | grep -c 'pt.trace.json.gz$')" "traces left at the top"
	[ -L "$T/loop/latest" ] && [ -L "$T/loop/current" ]
}
check "symlinks back to the output folder: each folder walked once, traces staged" t_links

t_taken() {
	# a trace of that name already in the stage folder stays, the new one gets a prefix
	mkdir -p "$T/taken/prefill"
	echo old >"$T/taken/prefill/trace.json"
	use_fake taken
	cap taken --url "$FAKE_URL" --framework trtllm --output-dir "$T/taken" $FAST
	eq 0 "$(cat "$T/taken.rc")" "exit status"
	eq old "$(cat "$T/taken/prefill/trace.json")" "the old file"
	ls "$T/taken/prefill" | grep -q '^[0-9]*-trace.json$'
	[ -f "$T/taken/decode/trace.json" ]
}
check "a name taken in the stage folder: nothing replaced" t_taken

t_signal() {
	use_fake sig
	"$CAPTURE" --url "$FAKE_URL" --framework vllm --output-dir "$T/sig" --probe-delay 0 \
	    --settle-delay 0 --poll-interval 0.05 --wait-timeout 60 >"$T/sig.out" 2>"$T/sig.err" &
	pid=$!
	i=0
	until grep -q 'waiting up to' "$T/sig.err" || [ $i -ge 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -TERM "$pid"
	set +e
	wait "$pid"
	rc=$?
	set -e
	# (the message says the signal ended the wait, not its 60 s limit)
	eq 4 "$rc" "exit status after one SIGTERM"
	has "$T/sig.err" "interrupted by a signal while waiting for traces"
}
check "one SIGTERM while waiting for traces ends the capture with exit 4" t_signal

done_testing
