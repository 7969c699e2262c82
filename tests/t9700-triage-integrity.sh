#!/bin/sh
# The driver's integrity (issue 27): -o by triage-render's rules (one
# implementation), checked before any work; batch operands with a line
# break refused; a saved --baseline report streamed, never inflated into
# $TMPDIR, and a stream of blank lines refused; the run dies with the
# driver, even by SIGKILL; numbers past 64 bits "too large"; names in the
# driver's own messages escaped.
# sanitize: no (the driver's own logic; the tools it runs are tested under
# the sanitizers by their own scripts)
. "$(dirname "$0")/lib.sh"
GEN=$TESTDIR/gen-trace
ESC=$(printf '\033')
"$GEN" -s both -n 3 -o "$T/t.json"
"$TRIAGE" -q --input "$T/t.json" >"$T/want.md"

# tool_bin DIR: the tools, with trace-extract and trace-diff wrapped: the
# first logs its start (DIR/started) and sleeps $SLEEP seconds, the second
# records the size of $TMPDIR.
tool_bin() {
	mkdir -p "$1/bin"
	for t in "$BIN"/*; do ln -sf "$t" "$1/bin/$(basename "$t")"; done
	rm "$1/bin/trace-extract" "$1/bin/trace-diff"
	cat >"$1/bin/trace-extract" <<EOF
#!/bin/sh
echo \$\$ >>"$1/started"
sleep \${SLEEP:-0}
exec "$BIN/trace-extract" "\$@"
EOF
	cat >"$1/bin/trace-diff" <<EOF
#!/bin/sh
du -sk "\$TMPDIR" | cut -f 1 >"$1/tmpdir-kb"
exec "$BIN/trace-diff" "\$@"
EOF
	chmod +x "$1/bin/trace-extract" "$1/bin/trace-diff"
}
tool_bin "$T/w"

t_output_targets() {
	mkdir -p "$T/o"
	echo old >"$T/o/r.md"
	chmod 600 "$T/o/r.md"
	"$TRIAGE" -q --input "$T/t.json" -o "$T/o/r.md"
	same "$T/want.md" "$T/o/r.md"
	eq 600 "$(stat -c %a "$T/o/r.md")" "mode kept"
	ln -s r.md "$T/o/l.md"
	"$TRIAGE" -q --input "$T/t.json" -o "$T/o/l.md"
	[ -L "$T/o/l.md" ]
	mkfifo "$T/o/p.md"
	timeout 20 cat "$T/o/p.md" >"$T/from-fifo" &
	reader=$!
	"$TRIAGE" -q --input "$T/t.json" -o "$T/o/p.md"
	wait "$reader" || :
	same "$T/want.md" "$T/from-fifo"
	[ -p "$T/o/p.md" ]
	"$TRIAGE" -q --input "$T/t.json" -o - >"$T/dash.md"
	same "$T/want.md" "$T/dash.md"
	[ ! -e ./- ]
	"$TRIAGE" -q --input "$T/t.json" -o /dev/stdout | cat >"$T/devout.md"
	same "$T/want.md" "$T/devout.md"
	# other hard links: exit 2 before any work (no extraction started)
	echo old >"$T/o/h1.md"
	ln "$T/o/h1.md" "$T/o/h2.md"
	rm -f "$T/w/started"
	set +e
	TRIAGE_BINDIR=$T/w/bin "$TRIAGE" --input "$T/t.json" -o "$T/o/h1.md" 2>"$T/err"
	rc=$?
	set -e
	eq 2 "$rc" "exit status"
	[ ! -e "$T/w/started" ] || { echo "an extraction started"; return 1; }
	usage_err "$T/err" triage "error: --output '$T/o/h1.md': it has 1 other hard link(s), which a new file would cut (remove them, or write elsewhere)"
	eq old "$(cat "$T/o/h1.md")" "the linked file"
	eq "h1.md h2.md l.md p.md r.md" "$(ls -A "$T/o" | tr '\n' ' ' | sed 's/ $//')" "files"
}
check "-o: a mode kept, a link written through, a FIFO written, - is stdout, hard links refused" t_output_targets

t_batch_newline() {
	mkdir -p "$T/nl" "$T/b"
	cp "$T/t.json" "$T/nl/line
x.json"
	cp "$T/t.json" "$T/nl/line.json"
	rm -f "$T/w/started"
	set +e
	TRIAGE_BINDIR=$T/w/bin "$TRIAGE" -o "$T/b" "$T/nl/line
x.json" "$T/nl/line.json" 2>"$T/err"
	rc=$?
	set -e
	eq 2 "$rc" "exit status"
	[ ! -e "$T/w/started" ] || { echo "an extraction started"; return 1; }
	usage_err "$T/err" triage "error: a batch operand holds a line break: '$T/nl/line\\x0ax.json'"
	eq "" "$(ls -A "$T/b")" "reports written"
}
check "batch: an operand with a line break is refused (exit 2) before any work" t_batch_newline

# A batch report's name is the driver's: a link planted there is refused
# before any work, the file it names untouched, no report written.
t_batch_planted_link() {
	mkdir -p "$T/bl" "$T/blo"
	cp "$T/t.json" "$T/bl/a.json"
	cp "$T/t.json" "$T/bl/b.json"
	echo victim >"$T/victim"
	ln -s ../victim "$T/blo/a.md"
	set +e
	"$TRIAGE" -q -o "$T/blo/" "$T/bl/a.json" "$T/bl/b.json" 2>"$T/err"
	rc=$?
	set -e
	eq 2 "$rc" "exit status"
	has "$T/err" "cannot write '$T/blo/a.md': it is a symbolic link"
	eq victim "$(cat "$T/victim")"
	eq a.md "$(ls -A "$T/blo")" "files (the link alone)"
}
check "batch: a report is never written through a link planted at its name" t_batch_planted_link

t_messages() {
	# the driver's own lines escape what they quote
	printf '{"traceEvents": [' >"$T/bad$ESC[31m.json"
	cp "$T/t.json" "$T/ok$ESC[1m.json"
	set +e
	"$TRIAGE" "$T/bad$ESC[31m.json" "$T/ok$ESC[1m.json" >"$T/out" 2>"$T/err"
	rc=$?
	set -e
	eq 1 "$rc" "exit status"
	eq 0 "$(cat "$T/err" "$T/out" | grep -c "$ESC")" "raw ESC characters"
	has "$T/err" "^triage: '$T/bad\\\\x1b\[31m.json': analysis failed (exit 1)$"
	has "$T/out" "^=== $T/ok\\\\x1b\[1m.json$"
	# --bundle labels are JSON strings, whatever the operand holds
	cp "$T/t.json" "$T/tab$(printf '\t')\"q\".json"
	"$TRIAGE" -q --bundle "$T/tab	\"q\".json" "$T/t.json" >"$T/bundle.md"
	has "$T/bundle.md" '^# Triage bundle: 2 runs$'
	has "$T/bundle.md" 'tab	"q".json'
}
check "the driver's messages and bundle labels: control characters escaped" t_messages

t_numbers() {
	for a in "-j 99999999999999999999" "--jobs=123456789012345678901234" \
	    "--kernel-table-limit 99999999999999999999" "--num-steps 99999999999999999999"; do
		# shellcheck disable=SC2086
		status 2 "$TRIAGE" $a --input "$T/t.json" 2>"$T/err"
		has "$T/err" ": too large: '"
	done
	status 2 "$TRIAGE" --overlap-table-limit -99999999999999999999 --input "$T/t.json" 2>"$T/err"
	has "$T/err" "argument --overlap-table-limit: too small: '-99999999999999999999'"
	# leading zeros are no size
	"$TRIAGE" -q -j 0000000000000000000000001 --input "$T/t.json" >/dev/null
}
check "numbers past 64 bits: \"too large\" (or \"too small\"), exit 2" t_numbers

t_baseline_streamed() {
	"$TRIAGE" -q --format jsonl --input "$T/t.json" >"$T/base.jsonl"
	# a saved report of 20 MB that gzips to little: read as a stream
	{
		cat "$T/base.jsonl"
		yes "{\"type\":\"zz_pad\",\"x\":\"$(head -c 2000 /dev/zero | tr '\0' x)\"}" |
		    head -n 10000
	} | gzip >"$T/base.jsonl.gz"
	[ "$(wc -c <"$T/base.jsonl.gz")" -lt 1000000 ]
	mkdir -p "$T/btmp"
	TMPDIR=$T/btmp TRIAGE_BINDIR=$T/w/bin "$TRIAGE" -q --baseline "$T/base.jsonl.gz" \
	    --input "$T/t.json" >"$T/diff.md"
	has "$T/diff.md" '^# Triage report: .* vs '
	kb=$(cat "$T/w/tmpdir-kb")
	[ "$kb" -lt 2000 ] || { echo "TMPDIR held $kb KB when trace-diff started"; return 1; }
	eq "" "$(ls -A "$T/btmp")" "files left"
	# a saved report that is a stream of blank lines: refused, not read to its end
	{ cat "$T/base.jsonl"; head -c 5000000 /dev/zero | tr '\0' '\n'; } | gzip >"$T/blank.jsonl.gz"
	status 1 "$TRIAGE" -q --baseline "$T/blank.jsonl.gz" --input "$T/t.json" >"$T/out" 2>"$T/err"
	has "$T/err" "blank.jsonl.gz:[0-9]*: more than 1000 blank lines in a row: not a record stream"
	[ ! -s "$T/out" ]
}
check "a saved --baseline report is streamed, never inflated to TMPDIR; blank lines refused" t_baseline_streamed

t_sigkill() {
	mkdir -p "$T/ktmp"
	SLEEP=30 TMPDIR=$T/ktmp TRIAGE_BINDIR=$T/w/bin "$TRIAGE" -q --mapping-input "$T/t.json" \
	    --formal-input "$T/t.json" >/dev/null 2>&1 &
	pid=$!
	i=0
	until [ "$(ps -eo args | grep -c "^sleep 30$")" -ge 2 ] || [ $i -ge 200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	[ -n "$(ls -A "$T/ktmp")" ] || { echo "no scratch directory"; return 1; }
	kill -KILL "$pid"
	wait "$pid" || :
	# the watchdog stops the rest and removes the scratch directory
	i=0
	while { [ -n "$(ls -A "$T/ktmp")" ] || ps -eo args | grep -q "$T/w/bin"; } &&
	    [ $i -lt 200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	eq "" "$(ps -eo pid,args | grep "$T/w/bin" | grep -v grep)" "processes left"
	eq "" "$(ls -A "$T/ktmp")" "files left"
}
check "SIGKILL of the driver: its pipeline stops and its scratch directory goes" t_sigkill

# A directory's traces are one run's; two that share a stage (one by its
# path, one by its annotations) keep their rows apart, as the reference
# does, and every total of the stage counts both; traces of two GPUs are
# said not to be one run.
t_traces_of_one_stage() {
	mkdir -p "$T/mx"
	"$GEN" -s decode -n 3 -o "$T/mx/x_prefill.json"
	"$GEN" -s both -n 3 --gpu 'NVIDIA B300 SXM6 AC' -o "$T/mx/y.json"
	"$TRIAGE" --input "$T/mx" >"$T/mx.md" 2>"$T/mx.err"
	# x's three steps (its path says prefill) and y's prefill step: one stage, summed
	has "$T/mx.md" '^\*\*extend/prefill: 0.98 ms of kernel time over 2 traces in 24 kernels over 4 steps;'
	has "$T/mx.md" '^Stage kernel time (the sum of kernel durations, the base of Share) 0.98 ms in 24 GPU items of 6 names over 2 traces, whose rows are not merged'
	has "$T/mx.md" '^> Note: The 2 traces analyzed together ran on different GPUs (Demo GPU, NVIDIA B300 SXM6 AC): they are not one run'
	has "$T/mx.err" 'ran on different GPUs'
	# one trace of each stage: nothing of the kind
	"$TRIAGE" -q --input "$T/mx/y.json" >"$T/y.md"
	hasnt "$T/y.md" 'over 2 traces'
	hasnt "$T/y.md" 'different GPUs'
}
check "two traces of one stage: totals of both, rows apart; traces of two GPUs said" t_traces_of_one_stage

done_testing
