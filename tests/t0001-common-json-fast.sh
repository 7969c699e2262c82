#!/bin/sh
# The fast paths of reading, each checked against the general path by a C
# program linked against the library of the build under test, on fixed
# cases, generated events and records, and seeded random mutations:
# - common/json.c json_parse_object(), the strict one-pass tokenizer: its
#   tokens must equal jsmn's on everything it accepts; it must accept strictly
#   valid objects and leave unusual ones to the general path;
# - json_select_object() and common/jshape.c json_select_shaped(), the
#   selections trace-extract reads events with: the members jsmn's tokens
#   give, on the same objects;
# - common/rec.c rec_read(), the typed record reader: a line in our writers'
#   layout (its fast path) must decode to what any other layout of the same
#   record (the general path) gives.
. "$(dirname "$0")/lib.sh"

LIB=$BIN/../libcommon.a
CC=${CC:-cc}

build_check() {
	[ -f "$LIB" ] || { echo "no $LIB"; return 1; }
	san=
	if nm "$LIB" 2>/dev/null | grep -q __asan; then
		san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
	fi
	# shellcheck disable=SC2086
	"$CC" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $san -iquote "$TOP/common" \
	    -o "$T/json-fast-check" "$FIX/common/json-fast-check.c" "$LIB" $COMMON_LIBS
}

t_fixed_and_events() {
	build_check
	"$TOPDIR_GEN" -s both -n 3 --streams 2 >"$T/trace.json"
	"$T/json-fast-check" "$T/trace.json" >"$T/out" || { cat "$T/out"; return 1; }
	cat "$T/out"
	has "$T/out" ' 0 failed$'
	# nearly every event line of a clean trace takes the fast path
	n=$(grep -c '^  {' "$T/trace.json")
	acc=$(sed -n 's/.* \([0-9]*\) accepted.*/\1/p' "$T/out")
	[ "$acc" -ge "$n" ] || { echo "only $acc accepted of $n event lines"; return 1; }
	# and the events seen twice mostly fit a shape learnt from the first
	fit=$(sed -n 's/.* \([0-9]*\) fitted shapes.*/\1/p' "$T/out")
	[ "$fit" -ge "$n" ] || { echo "only $fit fitted shapes for $n event lines"; return 1; }
}
TOPDIR_GEN=$TOP/tests/gen-trace
check "fast tokens equal jsmn's on fixed cases, generated events and their mutations" t_fixed_and_events

t_records() {
	build_check
	"$TOPDIR_GEN" -s both -n 2 --streams 2 >"$T/trace.json"
	"$BIN/trace-extract" -q "$T/trace.json" | "$BIN/trace-stage" -q | tee "$T/records.jsonl" |
	    "$BIN/kernel-map" -q --sites-only >>"$T/records.jsonl"
	"$T/json-fast-check" "$T/records.jsonl" >"$T/out" || { cat "$T/out"; return 1; }
	has "$T/out" ' 0 failed$'
	# every record line is accepted whole
	lines=$(wc -l <"$T/records.jsonl")
	acc=$(sed -n 's/.* \([0-9]*\) accepted.*/\1/p' "$T/out")
	[ "$acc" -ge "$lines" ] || { echo "only $acc accepted of $lines records"; return 1; }
}
check "fast tokens equal jsmn's on every record of a pipeline and its mutations" t_records

t_rec_read() {
	[ -f "$LIB" ] || { echo "no $LIB"; return 1; }
	san=
	if nm "$LIB" 2>/dev/null | grep -q __asan; then
		san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
	fi
	# fuzz-err.c replaces err.o: die() returns to the check through longjmp
	# shellcheck disable=SC2086
	"$CC" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $san -iquote "$TOP/common" \
	    -iquote "$TOP/tests/fuzz" -o "$T/rec-read-check" "$FIX/common/rec-read-check.c" \
	    "$TOP/tests/fuzz/fuzz-err.c" "$LIB" $COMMON_LIBS
	"$TOPDIR_GEN" -s both -n 2 >"$T/trace.json"
	"$BIN/trace-extract" -q "$T/trace.json" | "$BIN/trace-stage" -q | tee "$T/records.jsonl" |
	    "$BIN/kernel-map" -q | "$BIN/fuse-detect" -q >>"$T/records.jsonl"
	"$T/rec-read-check" "$T/records.jsonl" >"$T/out" || { cat "$T/out"; return 1; }
	cat "$T/out"
	has "$T/out" ' 0 failed$'
	# every record our tools write without a JSON member takes the fast path
	plain=$(grep -vc -e '"type":"\(input\|stats\|site\|kernel_row\|gpu_pids\)"' "$T/records.jsonl")
	f=$(sed -n 's/.* \([0-9]*\) fast.*/\1/p' "$T/out")
	[ "$f" -ge "$plain" ] || { echo "only $f fast for $plain plain records"; return 1; }
}
check "rec_read decodes our layout and any other the same way" t_rec_read

t_json_valid() {
	[ -f "$LIB" ] || { echo "no $LIB"; return 1; }
	san=
	if nm "$LIB" 2>/dev/null | grep -q __asan; then
		san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
	fi
	# shellcheck disable=SC2086
	"$CC" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $san -iquote "$TOP/common" \
	    -o "$T/json-valid-check" "$FIX/common/json-valid-check.c" "$LIB" $COMMON_LIBS
	"$T/json-valid-check" >"$T/out" || { cat "$T/out"; return 1; }
}
check "json_valid takes what Python's json module takes, strictly" t_json_valid

done_testing
