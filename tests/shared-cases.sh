# Run the shared defective-trace cases through scripts/triage and check each
# ends with its documented exit code, never a signal, and prints no report
# after an error.  Usage: sh tests/shared-cases.sh SHARED_DIR
shared=${1:-../shared}
top=$(cd "$(dirname "$0")/.." && pwd)
triage=$top/scripts/triage
pass=0
fail=0
expect() {	# expect CASEFILE CODE
	f=$shared/cases/$1
	[ -f "$f" ] || return 0
	out=$(mktemp)
	timeout 60 "$triage" --input "$f" >"$out" 2>/dev/null
	rc=$?
	if [ "$rc" -ne "$2" ]; then
		echo "not ok - $1: expected exit $2, got $rc"
		fail=$((fail + 1))
	elif [ "$rc" -ne 0 ] && [ -s "$out" ]; then
		echo "not ok - $1: exit $rc but a report was printed"
		fail=$((fail + 1))
	else
		echo "ok - $1: exit $rc"
		pass=$((pass + 1))
	fi
	rm -f "$out"
}
for f in "$shared"/cases/B*.json "$shared"/cases/B*.json.gz; do
	b=$(basename "$f")
	case $b in
	*capture*) continue ;;
	B01-*|B29-*|B34-*|B32-gzip-syncflush*) expect "$b" 1 ;;
	B11-*|B13-*) expect "$b" 3 ;;
	*) expect "$b" 0 ;;
	esac
done
echo "cases: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
