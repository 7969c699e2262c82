#!/bin/sh
# The paths that keep payloads small for traces of many distinct kernels
# (issue 21): equal texts of an entry held once, a mapping_global that
# repeats a stage read as that stage, stages whose lookups reach the same
# payloads told apart from those that do not (tests/fixtures/common/
# kmap-check.c, also under ASan); and a mapping/formal run of one stage
# against two, where overlap-sweep's one source map serves both stages.
. "$(dirname "$0")/lib.sh"

LIB=$BIN/../libcommon.a
CC=${CC:-cc}

t_unit() {
	[ -f "$LIB" ] || { echo "no $LIB"; return 1; }
	san=
	if nm "$LIB" 2>/dev/null | grep -q __asan; then
		san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
	fi
	# shellcheck disable=SC2086
	"$CC" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $san -iquote "$TOP/common" \
	    -o "$T/kmap-check" "$FIX/common/kmap-check.c" "$LIB" $COMMON_LIBS
	"$T/kmap-check" >"$T/out" || { cat "$T/out"; return 1; }
	cat "$T/out"
	has "$T/out" '^kmap: 23 checks, 0 failed$'
}
check "shared texts, a global read as the stage it repeats, stages alike for lookups" t_unit

t_one_stage_map() {
	# the mapping has one stage ("all"), the formal two: each formal stage
	# gets its rows from a map of its own, merged with its own payload (so
	# the stages spell the rmsnorm scope differently, as the reference does)
	"$TESTDIR/gen-trace" --streams 2 >"$T/map.json"
	"$TESTDIR/gen-trace" --stages both --streams 2 -n 3 >"$T/run.json"
	"$BIN/trace-extract" -q "$T/map.json" | "$BIN/trace-stage" -q |
	    jq -r 'select(.type == "trace") | .stage' >"$T/mstages"
	eq all "$(cat "$T/mstages")" "mapping stages"
	# as the reference stages the kernels (each at its own start: the GPU
	# runs behind, so prefill kernels land in decode, whose payload then
	# spells the site as the mapping does)
	"$TRIAGE" -q --compat reference --mapping-input "$T/map.json" --formal-input "$T/run.json" \
	    --format json >"$T/ref.json"
	jq -r 'select(.type == "overlap_row") | "\(.stage) \(.python_scope)"' "$T/ref.json" |
	    grep layernorm >"$T/scopes"
	eq "extend python/sglang/srt/layers/layernorm.py(60): forward_cuda
decode python/sglang/srt/layers/layernorm.py:60 forward_cuda" "$(cat "$T/scopes")" "rmsnorm scopes"
	eq 7 "$(grep -c '"type":"overlap_row"' "$T/ref.json")" "overlap rows"
	# staged at their launches (C24), decode holds decode's kernels alone
	"$TRIAGE" -q --mapping-input "$T/map.json" --formal-input "$T/run.json" --format jsonl \
	    >"$T/rec.jsonl"
	jq -r 'select(.type == "overlap_row") | "\(.stage) \(.python_scope)"' "$T/rec.jsonl" |
	    grep layernorm >"$T/scopes"
	eq "extend python/sglang/srt/layers/layernorm.py(60): forward_cuda
decode python/sglang/srt/layers/layernorm.py(60): forward_cuda" "$(cat "$T/scopes")" "rmsnorm scopes"
	eq 0 "$(jq -s 'map(select(.type == "overlap_row" and .stage == "decode" and
	    (.kernel | test("Prefill")))) | length' "$T/rec.jsonl")" "prefill kernels in decode"
}
check "a one-stage mapping against a two-stage formal trace: a source map per stage" t_one_stage_map

done_testing
