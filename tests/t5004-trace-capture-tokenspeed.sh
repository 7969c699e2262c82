#!/bin/sh
# trace-capture against a fake TokenSpeed server: detection by /readiness,
# the start payload with profile_id, per-rank files moved per stage, and a
# plain-text 2xx start answer.
. "$(dirname "$0")/lib.sh"
. "$TESTDIR/capture-lib.sh"

mkdir -p "$T/out" "$T/txt"
spawn_fake both --framework tokenspeed --ranks 2
spawn_fake txt --framework tokenspeed --start-text

use_fake both
capture both --url "$FAKE_URL" --output-dir "$T/out" --profile-prefix ts-triage \
    --no-profile-by-stage $FAST
stop_fake
LOG=$FAKE_LOG

t_lines() {
	eq 0 "$(cat "$T/both.rc")" exit
	printf '%s\ntokenspeed\n' "$(cd "$T/out" && pwd -P)" >"$T/want"
	same "$T/want" "$T/both.out"
	has "$T/both.err" 'framework: TokenSpeed (GET /readiness)'
	hasnt "$T/both.err" 'ignores --profile-prefix'
}
check 'auto: TokenSpeed from /readiness; root and framework on stdout' t_lines

t_order() {
	reqs | uniq -c | awk '{print $1, $2, $3}' >"$T/got"
	printf '%s\n' '1 GET /server_info' '1 GET /readiness' '1 GET /v1/models' \
	    '10 POST /v1/chat/completions' '1 POST /start_profile' \
	    '5 POST /v1/chat/completions' '1 POST /stop_profile' '1 GET /v1/models' \
	    '1 POST /v1/chat/completions' '1 POST /start_profile' \
	    '1 POST /v1/chat/completions' '1 POST /stop_profile' >"$T/want"
	same "$T/want" "$T/got"
}
check 'request sequence (detection, then per stage)' t_order

t_start() {
	root=$(cd "$T/out" && pwd -P)
	jq -c 'select(.path == "/start_profile") | .body | fromjson' "$LOG" >"$T/got"
	{
		jq -cn --arg d "$root" '{output_dir: $d, activities: ["CPU", "GPU"], with_stack: true, record_shapes: false, profile_id: "ts-triage-prefill"}'
		jq -cn --arg d "$root" '{output_dir: $d, activities: ["CPU", "GPU"], with_stack: true, record_shapes: false, profile_id: "ts-triage-decode"}'
	} >"$T/want"
	same "$T/want" "$T/got"
}
check 'start payload: keys in order, output_dir, profile_id per stage' t_start

t_layout() {
	eq "ts-triage-prefill-TP-0.trace.json.gz ts-triage-prefill-TP-1.trace.json.gz" \
	    "$(ls "$T/out/prefill" | tr '\n' ' ' | sed 's/ $//')" prefill
	eq "ts-triage-decode-TP-0.trace.json.gz ts-triage-decode-TP-1.trace.json.gz" \
	    "$(ls "$T/out/decode" | tr '\n' ' ' | sed 's/ $//')" decode
}
check 'per-rank traces moved to <out>/prefill and <out>/decode' t_layout

# -- a start that answers 2xx in plain text still counts as started --
use_fake txt
capture txt --url "$FAKE_URL" --framework ts --output-dir "$T/txt" \
    --profile-workload decode --profile-prefix '' $FAST
stop_fake

t_text_start() {
	eq 0 "$(cat "$T/txt.rc")" exit
	eq "triage-trace-decode" "$(jq -r 'select(.path == "/start_profile") | .body |
	    fromjson | .profile_id' "$FAKE_LOG")" 'profile_id with an empty prefix'
	reqs | grep -q 'POST /stop_profile'
	[ -f "$T/txt/decode/triage-trace-decode-TP-0.trace.json.gz" ]
}
check 'a plain-text 2xx start answer is accepted (not a start failure)' t_text_start

done_testing
