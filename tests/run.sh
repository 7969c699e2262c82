# Run every tests/t*.sh: a line per script as it ends, then the failures'
# details in file order and one closing line: "tests: N passed, N failed".
# The scripts are independent (each has its own scratch directory), so they
# run TEST_JOBS at a time (default: twice the number of processors, since
# many wait on servers, sleeps and pipes rather than compute).  With
# TEST_SANITIZE=1 (make test-sanitize) the scripts that say "# sanitize:
# no" -- they test the sh driver or the documents, whose C tools other
# scripts run under the sanitizers -- are left out.  TEST_ONLY=PATTERN runs
# the scripts whose names hold PATTERN.
TESTDIR=$(cd "$(dirname "$0")" && pwd)
ncpu=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
jobs=${TEST_JOBS:-$((ncpu * 2))}
out=$(mktemp -d "${TMPDIR:-/tmp}/triage-run.XXXXXX") || exit 1
# the scripts' scratch directories live in the run's own: kept with it
# when a script failed, gone with it otherwise
mkdir "$out/tmp" || exit 1
TMPDIR=$out/tmp
export TMPDIR
keep=
trap '[ -n "$keep" ] || rm -rf "$out"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The scripts to run, the slowest first (by size: the long ones are
# long), so that the last to start are short ones.
ls -S "$TESTDIR"/t[0-9]*.sh | while read -r t; do
	case $(basename "$t") in *"${TEST_ONLY:-}"*) ;; *) continue ;; esac
	if [ -n "${TEST_SANITIZE:-}" ] && sed -n '1,12p' "$t" | grep -q '^# sanitize: no'; then
		echo "skip $(basename "$t" .sh) (sanitize: no)" >&2
		continue
	fi
	echo "$t"
done >"$out/list" 2>"$out/skipped"
nskip=$(grep -c . "$out/skipped")
start=$(date +%s)

# Each script's line as it ends: its counts and wall time.  One printf,
# so the lines of scripts ending together never mix.
xargs -P "$jobs" -n 1 sh -c '
	n=$(basename "$1" .sh)
	t0=$(date +%s%N)
	sh "$1" >"$0/$n.out" 2>&1
	rc=$?
	echo $rc >"$0/$n.rc"
	ms=$((($(date +%s%N) - t0) / 1000000))
	p=$(grep -c "^ok " "$0/$n.out")
	f=$(grep -c "^not ok " "$0/$n.out")
	[ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
	if [ "$f" -eq 0 ]; then w=ok; else w=FAIL; fi
	printf "%-4s %-42s %3d passed, %d failed  %d.%d s\n" "$w" "$n" "$p" "$f" \
	    $((ms / 1000)) $((ms % 1000 / 100))' "$out" <"$out/list"

pass=0
fail=0
failed=""
while read -r t; do
	n=$(basename "$t" .sh)
	rc=1
	[ -s "$out/$n.rc" ] && read -r rc <"$out/$n.rc"
	p=$(grep -c '^ok ' "$out/$n.out")
	f=$(grep -c '^not ok ' "$out/$n.out")
	if [ "$f" -ne 0 ] || [ "$rc" -ne 0 ]; then
		# the failures in full, in file order below the progress lines
		grep -v '^ok ' "$out/$n.out"
		if [ "$f" -eq 0 ]; then
			f=1
			echo "not ok - $n: exited $rc"
		fi
		failed="$failed $n.sh"
	fi
	pass=$((pass + p))
	fail=$((fail + f))
done <<EOF
$(sort "$out/list")
EOF
if [ -n "$failed" ]; then
	echo "failed scripts:$failed (their scratch directories: $out/tmp)"
	keep=1
fi
echo "tests: $pass passed, $fail failed ($(grep -c . "$out/list") scripts${nskip:+, $nskip left out under the sanitizers}, $(($(date +%s) - start)) s)" |
    sed 's/, 0 left out under the sanitizers//'
[ "$fail" -eq 0 ]
