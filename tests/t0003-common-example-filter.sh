#!/bin/sh
# The example filter of docs/CONTRIBUTING.md (examples/filter/stream-time.c)
# builds against the library and agrees with a jq computation from the
# same records.
. "$(dirname "$0")/lib.sh"

LIB=$BIN/../libcommon.a
CC=${CC:-cc}

t_stream_time() {
	san=
	if nm "$LIB" 2>/dev/null | grep -q __asan; then
		san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
	fi
	# shellcheck disable=SC2086
	"$CC" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $san -iquote "$TOP/common" \
	    -o "$T/stream-time" "$TOP/examples/filter/stream-time.c" "$LIB" $COMMON_LIBS
	"$TOP/tests/gen-trace" -s both -n 3 --streams 2 >"$T/trace.json"
	"$BIN/trace-extract" -q "$T/trace.json" >"$T/rec"
	"$T/stream-time" "$T/rec" | tail -n +2 | sort >"$T/got"
	jq -r 'select(.type == "kernel") | [.t, .pid, (.stream // .tid), .dur] | @tsv' "$T/rec" |
	    awk -F '\t' '{ k = $1 "\t" $2 "\t" $3; n[k]++; us[k] += $4 }
	        END { for (k in n) printf "%s\t%d\t%.3f\n", k, n[k], us[k] / 1000 }' |
	    sort >"$T/want"
	[ -s "$T/want" ]
	same "$T/want" "$T/got"
	eq 2 "$(wc -l <"$T/got" | tr -d ' ')" "streams"
}
check 'the example filter builds and sums GPU time per stream as jq does' t_stream_time

done_testing
