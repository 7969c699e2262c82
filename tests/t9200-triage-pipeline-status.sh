#!/bin/sh
# scripts/triage reports the stage that failed, not the upstream stages that
# were killed by SIGPIPE when it stopped reading; nothing reaches stdout.
. "$(dirname "$0")/lib.sh"

# A tool directory where one filter is replaced by a failing stand-in.
fake_bin() {	# fake_bin DIR TOOL CODE
	mkdir -p "$1"
	for t in trace-extract trace-stage kernel-map overlap-sweep fuse-detect triage-render trace-capture; do
		ln -sf "$BIN/$t" "$1/$t"
	done
	rm -f "$1/$2"
	printf '#!/bin/sh\necho "%s: simulated failure" >&2\nexit %s\n' "$2" "$3" >"$1/$2"
	chmod +x "$1/$2"
}

"$TESTDIR/gen-trace" -n 200 -l 8 -o "$T/big.json"

t_downstream_failure() {
	fake_bin "$T/b1" kernel-map 1
	TRIAGE_BINDIR=$T/b1 status 1 "$TRIAGE" --input "$T/big.json" >"$T/out" 2>"$T/err"
	eq 0 "$(wc -c <"$T/out" | tr -d ' ')" "stdout bytes"
	has "$T/err" "kernel-map: simulated failure"
}
check "a failing kernel-map: exit 1, its message, no report" t_downstream_failure

t_render_failure() {
	fake_bin "$T/b2" triage-render 3
	TRIAGE_BINDIR=$T/b2 status 3 "$TRIAGE" --input "$T/big.json" >"$T/out2" 2>"$T/err2"
	eq 0 "$(wc -c <"$T/out2" | tr -d ' ')" "stdout bytes"
}
check "a failing last stage keeps its own exit code" t_render_failure

t_mapping_failure() {
	fake_bin "$T/b3" overlap-sweep 1
	TRIAGE_BINDIR=$T/b3 status 1 "$TRIAGE" --mapping-input "$T/big.json" \
	    --formal-input "$T/big.json" >"$T/out3" 2>"$T/err3"
	eq 0 "$(wc -c <"$T/out3" | tr -d ' ')" "stdout bytes"
	has "$T/err3" "overlap-sweep: simulated failure"
}
check "mapping/formal: a failing overlap-sweep is reported" t_mapping_failure

done_testing
