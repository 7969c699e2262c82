#!/bin/sh
# common/num.c and common/text.c (and xalloc.c's sorts): numbers and strings exactly as the reference
# prints and compares them, checked by a C program linked against the library
# of the build under test (sanitized when that build is).
. "$(dirname "$0")/lib.sh"

LIB=$BIN/../libcommon.a
CC=${CC:-cc}

t_num_text() {
	[ -f "$LIB" ] || { echo "no $LIB"; return 1; }
	san=
	if nm "$LIB" 2>/dev/null | grep -q __asan; then
		san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
	fi
	# shellcheck disable=SC2086
	"$CC" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $san -iquote "$TOP/common" \
	    -o "$T/num-check" "$FIX/common/num-check.c" "$LIB" $COMMON_LIBS &&
	"$T/num-check" >"$T/out" || { cat "$T/out"; return 1; }
	has "$T/out" ' 0 failed$'
}
check "fast decimals equal strtod; repr, rounding, SUM, pct; canonical names, locations, compact" t_num_text

t_sort() {
	san=
	if nm "$LIB" 2>/dev/null | grep -q __asan; then
		san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
	fi
	# shellcheck disable=SC2086
	"$CC" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $san -iquote "$TOP/common" \
	    -o "$T/sort-check" "$FIX/common/sort-check.c" "$LIB" $COMMON_LIBS &&
	"$T/sort-check" >"$T/out" || { cat "$T/out"; return 1; }
	has "$T/out" ' 0 failed$'
}
check "sorting: an array in order untouched after n - 1 comparisons, the rest as qsort" t_sort

done_testing
