#!/bin/sh
# common/esc.c: text made safe for markdown, spreadsheets and terminals;
# U+0000 kept by the JSON decoder and writer; "too large" numbers (issue
# 27).  A C program linked against the library of the build under test
# (sanitized when that build is) checks hand-written expectations.
. "$(dirname "$0")/lib.sh"

LIB=$BIN/../libcommon.a
CC=${CC:-cc}

t_esc() {
	[ -f "$LIB" ] || { echo "no $LIB"; return 1; }
	san=
	if nm "$LIB" 2>/dev/null | grep -q __asan; then
		san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
	fi
	# shellcheck disable=SC2086
	"$CC" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $san -iquote "$TOP/common" \
	    -o "$T/esc-check" "$FIX/common/esc-check.c" "$LIB" $COMMON_LIBS &&
	"$T/esc-check" >"$T/out" || { cat "$T/out"; return 1; }
	has "$T/out" ' 0 failed$'
}
check "control characters, markdown, formulas, URLs, U+0000, numbers past 64 bits" t_esc

done_testing
