# Test harness sourced by every tests/tNNNN-*.sh script.
#
# Each script runs its checks with `check DESCRIPTION COMMAND...` (or a
# shell function as the command); the harness prints TAP-like lines and a
# summary.  Binaries come from $TRIAGE_BINDIR (build/bin by default); a
# failing script keeps its scratch directory and says where it is.
set -u
LC_ALL=C
TZ=UTC
export LC_ALL TZ

TESTDIR=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$TESTDIR/.." && pwd)
BIN=${TRIAGE_BINDIR:-$TOP/build/bin}
TRIAGE=${TRIAGE:-$TOP/scripts/triage}
TRIAGE_BINDIR=$BIN
export TRIAGE_BINDIR
FIX=$TESTDIR/fixtures
# The libraries a program linked with the build's libcommon.a needs (the
# Makefile writes them; ISA-L unless built with ISAL=0).
COMMON_LIBS=$(cat "$BIN/../ldlibs" 2>/dev/null || echo "-lisal -liberty -lz -lm -lpthread")
SHARED=${SHARED:-$TOP/../shared}

T=$(mktemp -d "${TMPDIR:-/tmp}/triage-test.XXXXXX")
_npass=0
_nfail=0
_name=$(basename "$0" .sh)

_cleanup() {
	if [ "$_nfail" -eq 0 ]; then
		rm -rf "$T"
	else
		echo "# $_name: scratch directory kept: $T" >&2
	fi
}
trap _cleanup EXIT

# check DESCRIPTION COMMAND [ARG...]: run the command; pass when it exits 0.
# c_check NAME: compile $FIX/common/NAME.c against the library of the build
# under test (sanitized when that build is), run it, and pass when it says
# " 0 failed" (its output is shown otherwise)
c_check() {
	_lib=$BIN/../libcommon.a
	[ -f "$_lib" ] || { echo "no $_lib"; return 1; }
	_san=
	if nm "$_lib" 2>/dev/null | grep -q __asan; then
		_san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
	fi
	# shellcheck disable=SC2086
	"${CC:-cc}" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $_san -iquote "$TOP/common" \
	    -o "$T/$1" "$FIX/common/$1.c" "$_lib" $COMMON_LIBS &&
	# shellcheck disable=SC2086
	"$T/$1" ${C_CHECK_ARGS:-} >"$T/$1.out" || { cat "$T/$1.out"; return 1; }
	has "$T/$1.out" ' 0 failed$'
}

check() {
	_desc=$1
	shift
	# Not inside `if`, `||` or `&&`: there the shell ignores set -e, and only
	# the last assertion of a check would count.
	[ -n "${TEST_PROFILE:-}" ] && _t0=$(date +%s%N)
	( set -e; "$@" ) >"$T/.out" 2>&1
	_rc=$?
	# TEST_PROFILE=FILE: each check's wall time appended to FILE (ms)
	[ -n "${TEST_PROFILE:-}" ] &&
	    echo "$((($(date +%s%N) - _t0) / 1000000)) $_name: $_desc" >>"$TEST_PROFILE"
	if [ "$_rc" -eq 0 ]; then
		_npass=$((_npass + 1))
		echo "ok - $_name: $_desc"
	else
		_nfail=$((_nfail + 1))
		echo "not ok - $_name: $_desc"
		sed 's/^/#   /' "$T/.out" | head -n 40
	fi
}

# Assertion helpers for use inside check commands.
eq() {	# eq EXPECTED ACTUAL [WHAT]
	if [ "$1" != "$2" ]; then
		echo "expected ${3:+$3 }'$1', got '$2'"
		return 1
	fi
}
same() {	# same EXPECTED_FILE ACTUAL_FILE
	if ! cmp -s "$1" "$2"; then
		diff -u "$1" "$2" | head -n 40
		return 1
	fi
}
status() {	# status EXPECTED_CODE COMMAND...: command's exit code must match
	_want=$1
	shift
	set +e
	"$@"
	_got=$?
	set -e
	if [ "$_got" != "$_want" ]; then
		echo "expected exit $_want, got $_got: $*"
		return 1
	fi
}
has() {	# has FILE PATTERN: grep -q with a message
	if ! grep -q -- "$2" "$1"; then
		echo "'$2' not found in $1:"
		head -n 20 "$1"
		return 1
	fi
}
has_text() {	# has_text TEXT SUBSTRING: the text holds the substring, literally
	case $1 in
	*"$2"*) return 0 ;;
	esac
	echo "'$2' not in '$1'"
	return 1
}
hasnt() {
	if grep -q -- "$2" "$1"; then
		echo "'$2' unexpectedly found in $1"
		return 1
	fi
}

# gate_bin DIR: a tool set whose trace-extract keeps a semaphore log: each
# one registers in DIR/running while it runs and logs how many are
# registered as it starts (DIR/concurrent).  The first $GATE_N to start
# (DIR/order) wait until all $GATE_N have started (after 20 s one logs
# "stuck" and goes on).  A driver that runs more than N analyses at once
# logs a count above N; one that runs fewer never lets the first N past
# the gate; one that runs N logs N.  No sleep decides the outcome.
gate_bin() {
	mkdir -p "$1/bin" "$1/running"
	for t in "$BIN"/*; do ln -s "$t" "$1/bin/$(basename "$t")"; done
	rm "$1/bin/trace-extract"
	cat >"$1/bin/trace-extract" <<EOF
#!/bin/sh
case " \$* " in *" --list-ranks "*) exec "$BIN/trace-extract" "\$@" ;; esac
: >"$1/running/\$\$"
ls "$1/running" | wc -l >>"$1/concurrent"
echo \$\$ >>"$1/order"
if [ "\$(grep -c . "$1/order")" -le "\$GATE_N" ]; then
	i=0
	while [ "\$(grep -c . "$1/order")" -lt "\$GATE_N" ]; do
		i=\$((i + 1))
		[ \$i -gt 400 ] && { echo stuck >>"$1/concurrent"; break; }
		sleep 0.05
	done
fi
"$BIN/trace-extract" "\$@"
rc=\$?
rm -f "$1/running/\$\$"
exit \$rc
EOF
	chmod +x "$1/bin/trace-extract"
}

# usage_err FILE TOOL MESSAGE: FILE is a usage error of TOOL (issue 31):
# the line "TOOL: MESSAGE" and where the help is, nothing else.
usage_err() {
	eq "$2: $3|Try '$2 --help' for more information." "$(tr '\n' '|' <"$1" | sed 's/|$//')" \
	    "usage error"
}

# done_testing: print the summary line the runner reads; exit 1 on failure.
done_testing() {
	echo "# $_name: $_npass passed, $_nfail failed"
	[ "$_nfail" -eq 0 ]
}
