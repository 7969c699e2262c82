# Run every tests/t*.sh and print one closing line: "N passed, N failed".
# The scripts are independent (each has its own scratch directory), so they
# run TEST_JOBS at a time (default: the number of processors); their output
# is printed in file order once all have finished.
TESTDIR=$(cd "$(dirname "$0")" && pwd)
jobs=${TEST_JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}
out=$(mktemp -d "${TMPDIR:-/tmp}/triage-run.XXXXXX") || exit 1
trap 'rm -rf "$out"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The slowest scripts first, so the last to start are short ones.
ls -S "$TESTDIR"/t[0-9]*.sh | xargs -P "$jobs" -n 1 sh -c '
	n=$(basename "$1" .sh)
	sh "$1" >"$0/$n.out" 2>&1
	echo $? >"$0/$n.rc"' "$out"

pass=0
fail=0
failed=""
for t in "$TESTDIR"/t[0-9]*.sh; do
	[ -f "$t" ] || continue
	n=$(basename "$t" .sh)
	rc=1
	[ -s "$out/$n.rc" ] && read -r rc <"$out/$n.rc"
	grep -v '^ok ' "$out/$n.out"
	p=$(grep -c '^ok ' "$out/$n.out")
	f=$(grep -c '^not ok ' "$out/$n.out")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		echo "not ok - $n: exited $rc"
	fi
	pass=$((pass + p))
	fail=$((fail + f))
	[ "$f" -ne 0 ] && failed="$failed $n.sh"
done
[ -n "$failed" ] && echo "failed scripts:$failed"
echo "tests: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
