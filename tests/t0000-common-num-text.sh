#!/bin/sh
# common/num.c and common/text.c: numbers and strings exactly as the
# reference prints and compares them; common/xalloc.c's sorts in glibc's
# order; common/xsort.c's external sort.  C programs linked against the library of the build under test
# (sanitized when that build is), run by c_check (lib.sh).
. "$(dirname "$0")/lib.sh"

t_num_text() {
	c_check num-check
}
check "fast decimals equal strtod; repr, rounding, SUM, pct; canonical names, locations, compact" t_num_text

t_sort() {
	c_check sort-check
}
check "sorting: an array in order untouched after n - 1 comparisons, the rest as qsort" t_sort

t_xsort() {
	c_check xsort-check
}
check "external sort: stable over runs on disk, a queue with no comparator, rewound passes" t_xsort

t_memtune() {
	c_check memtune-check
	has "$T/memtune-check.out" '^memtune: '
	TRIAGE_MALLOC=default "$T/memtune-check" >"$T/default.out" || { cat "$T/default.out"; return 1; }
	has "$T/default.out" ' 0 failed$'
}
check "the filters' heap advised as huge pages, glibc's settings under TRIAGE_MALLOC=default" t_memtune

done_testing
