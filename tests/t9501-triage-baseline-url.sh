#!/bin/sh
# triage --baseline with a live candidate: the candidate captured from a
# loopback fake server (--url, or --mapping-url with --formal-url), the
# baseline a saved report of an earlier capture; the fake writes the same
# traces every time, so nothing changes.
# sanitize: no (the driver's own logic; the tools it runs are tested under
# the sanitizers by their own scripts)
. "$(dirname "$0")/lib.sh"
. "$TESTDIR/capture-lib.sh"

mkdir -p "$T/a" "$T/b" "$T/m" "$T/f"
spawn_fake sg --framework sglang
spawn_fake m --framework vllm --trace-dir "$T/m"
spawn_fake f --framework vllm --trace-dir "$T/f"

t_url() {
	use_fake sg
	"$TRIAGE" -q --url "$FAKE_URL" --output-dir "$T/a" $FAST --format jsonl --output "$T/base.jsonl"
	"$TRIAGE" -q --gate 0 --baseline "$T/base.jsonl" --url "$FAKE_URL" --output-dir "$T/b" $FAST \
	    --format jsonl >"$T/out"
	eq "extend decode" "$(jq -r 'select(.type == "diff_input" and .side == "cand") | .stages[]' "$T/out" | xargs)"
	eq "extend=neutral decode=neutral overall=neutral" "$(jq -r 'select(.type == "verdict") |
	    "\(.scope)=\(.verdict)"' "$T/out" | xargs)"
	eq same "$(jq -r 'select(.type == "diff_row") | .status' "$T/out" | sort -u)"
	# the candidate's traces are the new capture's
	jq -r 'select(.type == "diff_input" and .side == "cand") | .path' "$T/out" | grep -q "^$T/b"
}
check "--baseline with --url: the new capture against the saved one" t_url

t_dual_url() {
	use_fake m
	mu=$FAKE_URL
	use_fake f
	"$TRIAGE" -q --mapping-url "$mu" --mapping-output-dir "$T/m" --formal-url "$FAKE_URL" \
	    --formal-output-dir "$T/f" $FAST --format jsonl --output "$T/dual.jsonl"
	"$TRIAGE" -q --gate 0 --baseline "$T/dual.jsonl" --mapping-url "$mu" --mapping-output-dir "$T/m" \
	    --formal-url "$FAKE_URL" --formal-output-dir "$T/f" $FAST --format jsonl >"$T/out"
	eq "mapping/formal mapping/formal" "$(jq -r 'select(.type == "diff_input") | .mode' "$T/out" | xargs)"
	eq neutral "$(jq -r 'select(.type == "verdict" and .scope == "overall") | .verdict' "$T/out")"
}
check "--baseline with --mapping-url and --formal-url" t_dual_url

done_testing
