#!/bin/sh
# The Python contexts trace-extract resolves (py_* members) against the
# frame records they replace, on every real trace of SHARED_DIR/corpus:
# kernel-map's kernel_row and site records and overlap-sweep's overlap_row
# records (each trace as mapping and formal trace, as in the corpus's dual
# reports) must be identical from `trace-extract --frames` and from
# `trace-extract`, and again with the frames and records kept in temporary
# files (TRIAGE_SPOOL_MEM=4096) rather than memory.
# Usage: sh tests/corpus-python-context.sh SHARED_DIR
shared=${1:-../shared}
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${TRIAGE_BINDIR:-$top/build/bin}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/corpus-python-context.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

# tables TRACE OUT [--frames]: the kernel and overlap rows and the sites
tables() {
	_t=$1
	_o=$2
	shift 2
	"$bin/trace-extract" -q --role mapping "$@" "$_t" | "$bin/trace-stage" -q >"$tmp/mapping"
	"$bin/kernel-map" -q --sites-only <"$tmp/mapping" >"$tmp/sites"
	cat "$tmp/sites" >>"$tmp/mapping"
	"$bin/kernel-map" -q --kernel-table-limit 0 <"$tmp/mapping" |
	    grep '"type":"\(kernel_row\|site\)"' >"$_o"
	"$bin/trace-extract" -q --role formal "$_t" | "$bin/trace-stage" -q |
	    "$bin/kernel-map" -q --mapping "$tmp/sites" |
	    "$bin/overlap-sweep" -q --mapping "$tmp/mapping" --overlap-table-limit 0 |
	    grep '"type":"overlap_row"' >>"$_o"
}

for t in "$shared"/corpus/traces/*; do
	n=$(basename "$t")
	tables "$t" "$tmp/old" --frames
	tables "$t" "$tmp/new"
	TRIAGE_SPOOL_MEM=4096 tables "$t" "$tmp/spill"
	if cmp -s "$tmp/old" "$tmp/new" && cmp -s "$tmp/old" "$tmp/spill"; then
		pass=$((pass + 1))
		echo "ok - $n: $(wc -l <"$tmp/old" | tr -d ' ') rows and sites the same"
	else
		fail=$((fail + 1))
		echo "not ok - $n"
		diff "$tmp/old" "$tmp/new" | head -n 10
		diff "$tmp/old" "$tmp/spill" | head -n 10
	fi
done
echo "corpus-python-context: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
