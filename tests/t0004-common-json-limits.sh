#!/bin/sh
# One nesting limit (1024 levels) and one size limit (json_max_bytes(), 1 GiB
# or TRIAGE_MAX_JSON_BYTES) for every JSON input, and the general tokenizer
# behind them (issue 21): an input past a limit ends with exit 1 naming the
# file, the place and the limit, never with a signal; the tokenizer gives
# jsmn's tokens, in linear time at any depth; the writers are iterative.
. "$(dirname "$0")/lib.sh"

LIB=$BIN/../libcommon.a
CC=${CC:-cc}
GEN=$TESTDIR/gen-trace

# nest N OPEN CLOSE: N copies of OPEN, then N of CLOSE (no newline)
nest() {
	awk -v n="$1" -v o="$2" -v c="$3" 'BEGIN { for (i = 0; i < n; i++) printf "%s", o;
	    for (i = 0; i < n; i++) printf "%s", c }'
}
# not_signal RC: the exit status of a tool that must not die by a signal
not_signal() {
	[ "$1" -lt 128 ] || { echo "died by signal $(($1 - 128))"; return 1; }
}

t_tokenizer() {
	[ -f "$LIB" ] || { echo "no $LIB"; return 1; }
	san=
	if nm "$LIB" 2>/dev/null | grep -q __asan; then
		san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
	fi
	# shellcheck disable=SC2086
	"$CC" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $san -iquote "$TOP/common" \
	    -o "$T/json-general-check" "$FIX/common/json-general-check.c" "$LIB" $COMMON_LIBS
	for d in "" "-d ctrl" "-d nan" "-d inf" "-d trailing-comma" "-d surrogate" \
	    "-d utf8" "-d strnum"; do
		# shellcheck disable=SC2086
		"$GEN" -n 1 -s both --streams 2 $d >"$T/t$(echo "$d" | tr -d ' -').json"
	done
	"$T/json-general-check" "$T"/t*.json >"$T/out" || { cat "$T/out"; return 1; }
	cat "$T/out"
	has "$T/out" ' 0 failed$'
}
check "the general tokenizer gives jsmn's tokens; 1024 levels pass, 1025 fail at the bracket" t_tokenizer

t_event_size() {
	# one 3 MiB event (a long name) in a trace, with a 1 MiB limit
	awk 'BEGIN { printf "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 0, \"dur\": 1, \"pid\": 0, \"tid\": 1},\n{\"ph\": \"X\", \"name\": \"";
	    for (i = 0; i < 3 * 1024 * 16; i++) printf "%064d", i; print "\", \"ts\": 1}]}" }' >"$T/big.json"
	off=$(($(head -n 1 "$T/big.json" | wc -c)))
	set +e
	TRIAGE_MAX_JSON_BYTES=1M "$BIN/trace-extract" "$T/big.json" >"$T/out" 2>"$T/err"
	rc=$?
	set -e
	eq 1 "$rc" "exit status"
	has "$T/err" "'$T/big.json': the event that starts at byte $off is larger than the limit of 1 MiB (TRIAGE_MAX_JSON_BYTES)"
	# under the default limit it is an event like any other
	"$BIN/trace-extract" -q "$T/big.json" | jq -e -s '[.[] | select(.type == "stats")][0].events == 2' >/dev/null
}
check "an event past the size limit: exit 1 with its offset and the limit" t_event_size

t_record_size() {
	awk 'BEGIN { printf "{\"type\":\"note\",\"id\":\"x\",\"text\":\""; for (i = 0; i < 40000; i++)
	    printf "%064d", i; print "\"}" }' >"$T/big.jsonl"
	for tool in trace-stage kernel-map fuse-detect triage-render; do
		set +e
		TRIAGE_MAX_JSON_BYTES=64K "$BIN/$tool" "$T/big.jsonl" >"$T/out" 2>"$T/err"
		rc=$?
		set -e
		eq 1 "$rc" "$tool exit status"
		has "$T/err" "^$tool: $T/big.jsonl:1: record is larger than the limit of 65536 bytes (TRIAGE_MAX_JSON_BYTES)"
	done
}
check "a record line past the size limit: exit 1 with file:line, in every reader" t_record_size

t_record_depth() {
	{
		printf '{"type":"input","v":1,"role":"single","path":"x","framework":"sglang","server_args":'
		nest 5000 '{"a":' '}'
		echo ',"tp_size":1,"traces":[]}'
	} >"$T/deep.jsonl"
	for tool in fuse-detect triage-render; do
		set +e
		"$BIN/$tool" "$T/deep.jsonl" >"$T/out" 2>"$T/err"
		rc=$?
		set -e
		not_signal "$rc"
		eq 1 "$rc" "$tool exit status"
		has "$T/err" "^$tool: $T/deep.jsonl:1: record is nested deeper than the limit of 1024 levels (at byte 5199 of the line)"
	done
}
check "a record nested 5000 deep: exit 1 naming the limit, not a stack overflow" t_record_depth

t_server_args() {
	mkdir -p "$T/prof"
	"$GEN" -n 1 -l 1 -o "$T/prof/t.trace.json"
	# 60,000 levels: once a stack overflow in the compact writer
	{ printf '{"model_path": "m", "x": '; nest 60000 '[' ']'; echo '}'; } >"$T/prof/server_args.json"
	set +e
	"$BIN/trace-extract" "$T/prof" >"$T/out" 2>"$T/err"
	rc=$?
	set -e
	not_signal "$rc"
	eq 1 "$rc" "exit status"
	has "$T/err" "^trace-extract: '$T/prof/server_args.json': the server args are nested deeper than the limit of 1024 levels (at byte 1048); fix or remove the file"
	# 1023 levels (the input record adds one): kept, written compactly, and
	# every downstream reader takes the record
	{ printf '{"model_path": "m", "x": '; nest 1022 '[' ']'; echo '}'; } >"$T/prof/server_args.json"
	"$BIN/trace-extract" -q "$T/prof" >"$T/rec.jsonl"
	# (deeper than jq reads: compared as text, the file has no space in a string)
	tr -d ' ' <"$T/prof/server_args.json" >"$T/want"
	grep '^{"type":"input"' "$T/rec.jsonl" | sed 's/.*"server_args":\(.*\),"model":.*/\1/' >"$T/got"
	same "$T/want" "$T/got"
	"$BIN/trace-stage" -q "$T/rec.jsonl" | "$BIN/kernel-map" -q | "$BIN/fuse-detect" -q |
	    "$BIN/triage-render" -q >"$T/report"
	has "$T/report" "Kernel"
	# one level more is refused: its record could not be read downstream
	{ printf '{"model_path": "m", "x": '; nest 1023 '[' ']'; echo '}'; } >"$T/prof/server_args.json"
	status 1 "$BIN/trace-extract" -q "$T/prof" >/dev/null 2>"$T/err"
	has "$T/err" "the server args are nested deeper than the limit of 1024 levels; fix or remove"
}
check "server_args.json 60,000 levels deep: exit 1 naming the limit; 1023 levels: kept" t_server_args

t_patterns() {
	{ printf '{"pattern": "p", "x": '; nest 3000 '[' ']'; echo '}'; } >"$T/deep.jsonl"
	"$GEN" -n 1 -l 1 -o "$T/t.json"
	"$BIN/trace-extract" -q "$T/t.json" | "$BIN/trace-stage" -q | "$BIN/kernel-map" -q >"$T/rows"
	status 1 "$BIN/fuse-detect" --patterns "$T/deep.jsonl" "$T/rows" >/dev/null 2>"$T/err"
	has "$T/err" "^fuse-detect: $T/deep.jsonl:1: pattern is nested deeper than the limit of 1024 levels (at byte 1045)"
	awk 'BEGIN { printf "{\"pattern\": \""; for (i = 0; i < 2000; i++) printf "%064d", i; print "\"}" }' >"$T/long.jsonl"
	set +e
	TRIAGE_MAX_JSON_BYTES=64K "$BIN/fuse-detect" --patterns "$T/long.jsonl" "$T/rows" >/dev/null 2>"$T/err"
	rc=$?
	set -e
	eq 1 "$rc" "exit status"
	has "$T/err" "^fuse-detect: $T/long.jsonl:1: pattern is larger than the limit of 65536 bytes"
}
check "a pattern catalog line too deep or too long: exit 1 with file:line and the limit" t_patterns

t_bad_limit() {
	# a malformed setting is ignored: the default limit applies
	"$GEN" -n 1 -l 1 -o "$T/t.json"
	TRIAGE_MAX_JSON_BYTES=lots "$BIN/trace-extract" -q "$T/t.json" >"$T/out"
	has "$T/out" '"type":"stats"'
}
check "a malformed TRIAGE_MAX_JSON_BYTES leaves the default" t_bad_limit

done_testing
