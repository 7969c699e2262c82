#!/bin/sh
# trace-capture --records: one probe record per request sent (latency,
# tokens, empty answers), as the reference's endpoint probe reports; notes
# only for options given; triage --url shows the probe summary and one
# framework (issue 19).
. "$(dirname "$0")/lib.sh"
. "$TESTDIR/capture-lib.sh"

spawn_fake sgl --framework sglang --tokens 7
spawn_fake empty --framework sglang --answer "  "
spawn_fake vl --framework vllm --trace-dir "$T/vl" --tokens 5
spawn_fake vp --framework vllm --trace-dir "$T/vp"
spawn_fake tri --framework sglang --tokens 3
spawn_fake bad --framework sglang --start-status 500
spawn_fake good --framework sglang

# The captures run here, outside the checks: stop_fake's `wait` needs the
# shell that started the fake.
use_fake sgl
capture sgl --url "$FAKE_URL" --framework sglang --output-dir "$T/sgl" \
    --records "$T/sgl.jsonl" $FAST
stop_fake
use_fake empty
capture empty --url "$FAKE_URL" --framework sglang --output-dir "$T/empty" \
    --profile-workload decode --records "$T/empty.jsonl" $FAST
stop_fake
use_fake vl
capture vl --url "$FAKE_URL" --framework vllm --output-dir "$T/vl" \
    --default-profile-prefix mapping-trace --records "$T/vl.jsonl" $FAST
stop_fake
use_fake vp
capture vp --url "$FAKE_URL" --framework vllm --output-dir "$T/vp" \
    --profile-prefix mine $FAST
stop_fake
use_fake tri
"$TOP/scripts/triage" --url "$FAKE_URL" --output-dir "$T/tri" --profile-workload decode \
    --probe-delay 0 --settle-delay 0 --poll-interval 0.05 --wait-timeout 10 \
    >"$T/tri.md" 2>"$T/tri.err"
echo $? >"$T/tri.rc"
stop_fake
# without --output-dir, SGLang captures into a fresh $TMPDIR/sglang-torch-profile-*
mkdir -p "$T/tmpbad" "$T/tmpgood"
use_fake bad
TMPDIR=$T/tmpbad capture bad --url "$FAKE_URL" --framework sglang --profile-workload decode $FAST
stop_fake
use_fake good
TMPDIR=$T/tmpgood capture good --url "$FAKE_URL" --framework sglang --profile-workload decode $FAST
stop_fake

t_sglang_records() {
	eq 0 "$(cat "$T/sgl.rc")" exit
	# the request sequence of a both-workload capture (t5001): prefill 10
	# warm-ups and 5 profiled, decode 1 and 1
	eq 'prefill warm-up 10 prefill capture 5 decode warm-up 1 decode capture 1' \
	    "$(jq -r '"\(.stage) \(.phase)"' "$T/sgl.jsonl" | uniq -c | awk '{print $2, $3, $1}' |
	    tr '\n' ' ' | sed 's/ $//')"
	eq 17 "$(jq -s '[.[] | select(.type == "probe" and .ok and .http_status == 200 and
	    .endpoint == "/generate" and .completion_tokens == 7 and .empty == false and
	    .latency_us > 0)] | length' "$T/sgl.jsonl")"
	# indices: the profile_probe_N markers of the prompts
	eq '0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 0 1' "$(jq -r .index "$T/sgl.jsonl" | tr '\n' ' ' | sed 's/ $//')"
	# stdout keeps its two lines
	eq 2 "$(wc -l <"$T/sgl.out")"
}
check "SGLang: a record per /generate request, in order, with tokens and latency" t_sglang_records

t_empty_answers() {
	eq 0 "$(cat "$T/empty.rc")" exit
	eq 'true true' "$(jq -r .empty "$T/empty.jsonl" | tr '\n' ' ' | sed 's/ $//')"
	eq 0 "$(jq -s 'map(select(has("completion_tokens"))) | length' "$T/empty.jsonl")"
}
check "white-space answers are empty; no token count when the server gives none" t_empty_answers

t_vllm_notes() {
	eq 0 "$(cat "$T/vl.rc")" exit
	hasnt "$T/vl.err" 'ignores --profile-prefix'
	eq '/v1/chat/completions 5' "$(jq -r '"\(.endpoint) \(.completion_tokens)"' "$T/vl.jsonl" | sort -u)"
	eq 0 "$(cat "$T/vp.rc")" exit
	has "$T/vp.err" 'note: vLLM ignores --profile-prefix'
}
check "vLLM: chat records; the prefix note only when --profile-prefix is given" t_vllm_notes

t_triage_summary() {
	eq 0 "$(cat "$T/tri.rc")" exit
	has "$T/tri.md" '^- \*\*Probe requests\*\*: 2 sent (1 warm-up, 1 while profiling); latency mean [0-9.]* ms, p95 [0-9.]* ms; 6 tokens generated; 0 empty answers$'
	# the framework the capture found is the report's, and stderr agrees
	has "$T/tri.err" 'framework: SGLang'
	has "$T/tri.md" '^- \*\*Framework\*\*: SGLang (from the live server)$'
	hasnt "$T/tri.err" 'ignores --profile-prefix'
}
check "triage --url: the probe summary in the header, one framework" t_triage_summary

t_failed_capture_cleans_up() {
	eq 4 "$(cat "$T/bad.rc")" exit
	eq "" "$(ls "$T/tmpbad")" "left behind by a failed capture"
	eq 0 "$(cat "$T/good.rc")" exit
	# a successful one keeps its traces there, and prints that folder
	eq 1 "$(ls "$T/tmpgood" | grep -c '^sglang-torch-profile-')"
	eq "$T/tmpgood" "$(dirname "$(sed -n 1p "$T/good.out")")"
}
check "a failed SGLang capture leaves no temporary folder; a good one keeps it" t_failed_capture_cleans_up

done_testing
