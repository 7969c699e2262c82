# Run every tests/t*.sh and print one closing line: "N passed, N failed".
TESTDIR=$(cd "$(dirname "$0")" && pwd)
pass=0
fail=0
failed=""
for t in "$TESTDIR"/t[0-9]*.sh; do
	[ -f "$t" ] || continue
	out=$(sh "$t" 2>&1)
	rc=$?
	printf '%s\n' "$out" | grep -v '^ok ' 
	p=$(printf '%s\n' "$out" | grep -c '^ok ')
	f=$(printf '%s\n' "$out" | grep -c '^not ok ')
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		echo "not ok - $(basename "$t"): exited $rc"
	fi
	pass=$((pass + p))
	fail=$((fail + f))
	[ "$f" -ne 0 ] && failed="$failed $(basename "$t")"
done
[ -n "$failed" ] && echo "failed scripts:$failed"
echo "tests: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
