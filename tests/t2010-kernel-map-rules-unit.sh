#!/bin/sh
# common/rules.c and common/payload.c: the spec's worked examples, checked
# by a small C program linked against the library of the build under test.
. "$(dirname "$0")/lib.sh"

LIB=$BIN/../libcommon.a
CC=${CC:-cc}

t_rules() {
	if [ ! -f "$LIB" ] || ! command -v "$CC" >/dev/null; then
		echo "# skipped: no $LIB or no C compiler"
		return 0
	fi
	san=
	if nm "$LIB" 2>/dev/null | grep -q __asan; then
		san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
	fi
	# shellcheck disable=SC2086
	"$CC" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $san -I"$TOP/common" \
	    -o "$T/rules-check" "$FIX/kernel-map/rules-check.c" "$LIB" $COMMON_LIBS &&
	"$T/rules-check" >"$T/out" &&
	has "$T/out" ' 0 failed$'
}
check 'stage, rank, framework, category, priority, sampling and lookup rules' t_rules

done_testing
