#!/bin/sh
# relaxed_lookup (common/relax.c) with its index against the plain scan it
# replaced, on generated payloads and names that reach every step (issue
# 21: the scan made lookups quadratic in distinct kernel names); and a
# mapping/formal run whose formal names all miss the mapping's.
. "$(dirname "$0")/lib.sh"

LIB=$BIN/../libcommon.a
CC=${CC:-cc}

t_same_answers() {
	[ -f "$LIB" ] || { echo "no $LIB"; return 1; }
	san=
	if nm "$LIB" 2>/dev/null | grep -q __asan; then
		san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
	fi
	# shellcheck disable=SC2086
	"$CC" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $san -iquote "$TOP/common" \
	    -o "$T/relax-check" "$FIX/common/relax-check.c" "$LIB" $COMMON_LIBS
	# (the plain scan's buffers grow and shrink the heap's top all along: a
	# top pad keeps glibc from giving the pages back each time, four fifths
	# of the run's time in page faults otherwise)
	GLIBC_TUNABLES=glibc.malloc.top_pad=16777216 "$T/relax-check" >"$T/out" ||
	    { cat "$T/out"; return 1; }
	cat "$T/out"
	has "$T/out" '^relax: 18300 lookups, 0 failed$'
}
check "the indexed lookup answers as the plain scan on 18,300 generated lookups" t_same_answers

t_misses() {
	# 3,000 formal names, none in the mapping: every row keeps its own site
	"$TESTDIR/gen-hostile" names 3000 map >"$T/map.json"
	"$TESTDIR/gen-hostile" names 3000 run >"$T/run.json"
	"$TRIAGE" -q --mapping-input "$T/map.json" --formal-input "$T/run.json" --format jsonl \
	    >"$T/rec.jsonl"
	jq -r 'select(.type == "kernel_row") | .kernel' "$T/rec.jsonl" | grep -c '^run_kernel_' |
	    grep -qx 3000
	jq -r 'select(.type == "kernel_row") | .location' "$T/rec.jsonl" | sort -u >"$T/locs"
	eq 7 "$(grep -c '^python/sglang/srt/layers/op[0-6].py:1[0-6] forward$' "$T/locs")" \
	    "distinct locations"
}
check "3,000 formal names that miss the mapping: each row has its own site" t_misses

done_testing
