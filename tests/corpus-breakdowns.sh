#!/bin/sh
# Cross-check step-stats' breakdowns (issue 32) on real traces: for every
# single-file trace of SHARED_DIR/corpus/traces, tests/breakdowns-check.py
# recomputes from the trace's own JSON (Python's standard library, exact
# decimals) the collectives' union and the part under compute per stage and
# step, the launch delays per stage and kernel name, busy and idle per
# stream and GPU time per GPU annotation, and compares them with the
# records of `trace-extract T | trace-stage | step-stats`.  The corpus has
# traces with collectives (hta_nccl_data, tl_vllm_b200_eager_tp8,
# hta_trace_diff_control), several streams and gpu_user_annotation ranges
# (hta_step_gpu_user_annotation, tl_mi300_resnet_actckpt).
# Usage: sh tests/corpus-breakdowns.sh SHARED_DIR
shared=${1:-../shared}
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${TRIAGE_BINDIR:-$top/build/bin}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/corpus-breakdowns.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
comm=0
streams=0
annotated=0

for f in "$shared"/corpus/traces/*.json "$shared"/corpus/traces/*.json.gz; do
	[ -f "$f" ] || continue
	name=$(basename "$f")
	if ! "$bin/trace-extract" -q "$f" 2>/dev/null | "$bin/trace-stage" -q 2>/dev/null |
	    "$bin/step-stats" -q >"$tmp/out"; then
		echo "not ok - $name: the pipeline failed"
		fail=$((fail + 1))
		continue
	fi
	if res=$(python3 "$top/tests/breakdowns-check.py" "$f" "$tmp/out" 2>&1); then
		echo "ok - $name: $res"
		pass=$((pass + 1))
	else
		echo "not ok - $name: $res"
		fail=$((fail + 1))
	fi
	# what the corpus exercised
	jq -s '[.[] | select(.type == "gpu_time" and .comm_total_us > 0)] | length' "$tmp/out" >"$tmp/n"
	[ "$(cat "$tmp/n")" -gt 0 ] && comm=$((comm + 1))
	jq -s '[.[] | select(.type == "stream_time")] | group_by(.stage) | map(length) | max // 0' \
	    "$tmp/out" >"$tmp/n"
	[ "$(cat "$tmp/n")" -gt 1 ] && streams=$((streams + 1))
	jq -s '[.[] | select(.type == "annotation_time")] | length' "$tmp/out" >"$tmp/n"
	[ "$(cat "$tmp/n")" -gt 0 ] && annotated=$((annotated + 1))
done
echo "# traces with collectives: $comm, with several streams: $streams, with GPU annotations: $annotated"
# the recomputation must have had each kind to check
for k in "$comm" "$streams" "$annotated"; do
	if [ "$k" -eq 0 ]; then
		echo "not ok - the corpus exercised every breakdown (collectives, streams, annotations)"
		fail=$((fail + 1))
		break
	fi
done
echo "corpus breakdowns: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
