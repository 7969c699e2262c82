# triage's command line and run control (issue 19): options checked before
# any work, outputs that are never lost, batch names that never collide,
# -j under dash, signals that stop the whole run, progress lines.  The
# driver runs under /bin/sh (dash on Debian), as installed.
. "$(dirname "$0")/lib.sh"
GEN=$TESTDIR/gen-trace
"$GEN" -s both -n 3 -o "$T/t.json"

# slow_bin DIR SECONDS: a tool set whose trace-extract sleeps first and
# counts how many run at once (in DIR/concurrent).
slow_bin() {
	mkdir -p "$1/bin" "$1/running"
	for t in "$BIN"/*; do ln -s "$t" "$1/bin/$(basename "$t")"; done
	rm "$1/bin/trace-extract"
	cat >"$1/bin/trace-extract" <<EOF
#!/bin/sh
case " \$* " in *" --list-ranks "*) exec "$BIN/trace-extract" "\$@" ;; esac
: >"$1/running/\$\$"
ls "$1/running" | wc -l >>"$1/concurrent"
sleep $2
rm -f "$1/running/\$\$"
exec "$BIN/trace-extract" "\$@"
EOF
	chmod +x "$1/bin/trace-extract"
}

t_numbers() {
	for a in "-j 0" "-j -1" "--jobs=0" "-j0"; do
		# shellcheck disable=SC2086
		status 2 timeout 10 "$TRIAGE" $a "$T/t.json" 2>"$T/err"
		has "$T/err" "argument --jobs: must be at least 1"
	done
	status 2 "$TRIAGE" -j abc "$T/t.json" 2>"$T/err"
	eq "triage: error: argument --jobs: invalid int value: 'abc'" "$(tail -n 1 "$T/err")"
	status 2 "$TRIAGE" --kernel-table-limit 1x --input "$T/t.json" 2>"$T/err"
	has "$T/err" "invalid int value: '1x'"
	status 2 "$TRIAGE" --url http://127.0.0.1:9 --wait-timeout soon 2>"$T/err"
	has "$T/err" "argument --wait-timeout: invalid number of seconds: 'soon'"
}
check "numeric options: exit 2 with one line before any work, never a hang" t_numbers

t_parsing() {
	status 2 "$TRIAGE" --form=json --input "$T/t.json" 2>"$T/err"
	eq 1 "$(grep -c '^usage:' "$T/err")" "usage lines"
	eq 1 "$(grep -c 'error:' "$T/err")" "error lines"
	has "$T/err" "ambiguous option: --form could match --formal-input, --formal-url, --formal-output-dir, --formal-profile-prefix, --format"
	status 2 "$TRIAGE" --inptu "$T/t.json" 2>"$T/err"
	eq "triage: error: unrecognized arguments: --inptu (did you mean --input?)" "$(tail -n 1 "$T/err")"
	status 2 "$TRIAGE" --zz "$T/t.json" 2>"$T/err"
	eq "triage: error: unrecognized arguments: --zz" "$(tail -n 1 "$T/err")"
	# the short forms people type
	"$TRIAGE" -q -f json -o "$T/s.json" --input "$T/t.json"
	jq -e '.reports[0].tables | length > 0' "$T/s.json" >/dev/null
	"$TRIAGE" -q -fcsv -o"$T/s.csv" --input "$T/t.json"
	eq "stage,kernel,category,gpu_time_us,share_pct,launches,launch_delay_p50_us,launch_delay_max_us,python_location,cpu_op" \
	    "$(head -n 1 "$T/s.csv" | tr -d '\r')"
}
check "options: one error for an ambiguous prefix, did-you-mean, -o/-f/-j short forms" t_parsing

t_output_checked_first() {
	slow_bin "$T/o" 5
	export TRIAGE_BINDIR=$T/o/bin
	t0=$(date +%s)
	status 2 "$TRIAGE" --input "$T/t.json" --output /no/such/dir/r.md 2>"$T/err"
	eq "triage: error: --output '/no/such/dir/r.md': no such directory '/no/such/dir'" "$(tail -n 1 "$T/err")"
	mkdir -p "$T/outdir"
	status 2 "$TRIAGE" --input "$T/t.json" --output "$T/outdir/" 2>"$T/err"
	has "$T/err" "names a directory; one report needs a file name"
	status 2 "$TRIAGE" --input "$T/t.json" --output "$T/outdir" 2>"$T/err"
	has "$T/err" "is a directory; one report needs a file name"
	: >"$T/afile"
	status 2 "$TRIAGE" -o "$T/afile" "$T/t.json" "$T/t.json" 2>"$T/err"
	has "$T/err" "is a file; batch mode writes one report per operand into a directory"
	# none of them started an extraction (each would sleep 5 s)
	[ "$(($(date +%s) - t0))" -lt 5 ]
	[ ! -s "$T/o/concurrent" ]
	unset TRIAGE_BINDIR
}
check "--output is checked before any work: missing directory, file vs directory" t_output_checked_first

t_output_whole() {
	# a failed analysis leaves the previous report as it was
	echo "old report" >"$T/r.md"
	printf '{"traceEvents": [' >"$T/bad.json"
	status 1 "$TRIAGE" -q --input "$T/bad.json" --output "$T/r.md" 2>/dev/null
	eq "old report" "$(cat "$T/r.md")"
	"$TRIAGE" -q --input "$T/t.json" --output "$T/r.md"
	has "$T/r.md" '^# Triage report'
	# no temporary file is left beside it
	eq "r.md" "$(ls -a "$T" | grep 'r\.md')"
	# a full disk on stdout: the tool says so and exits 1
	status 1 "$TRIAGE" -q --input "$T/t.json" >/dev/full 2>"$T/err"
	eq "triage: cannot write the report to standard output: write error: No space left on device" \
	    "$(cat "$T/err")"
}
check "outputs: written whole or not at all, a write error named, exit 1" t_output_whole

t_full_tmpdir() {
	# a TMPDIR that fills up mid-run: an error, never exit 0 with an empty report
	mkdir -p "$T/small"
	if ! mount -t tmpfs -o size=64k tmpfs "$T/small" 2>/dev/null; then
		echo "cannot mount a small tmpfs here # SKIP"
		return 0
	fi
	dd if=/dev/zero of="$T/small/fill" bs=4k 2>/dev/null || :	# until full
	rc=0
	TMPDIR=$T/small "$TRIAGE" --input "$T/t.json" >"$T/full.md" 2>"$T/err" || rc=$?
	umount "$T/small"
	[ "$rc" -ne 0 ] || { echo "exit 0 with a full TMPDIR"; return 1; }
	has "$T/err" "^triage: .*no exit status recorded (is '$T/small' full?)"
}
check "a full TMPDIR is an error, not an empty report" t_full_tmpdir

t_batch_names() {
	mkdir -p "$T/x/prof" "$T/y/prof" "$T/b"
	"$GEN" -n 2 -o "$T/x/prof/a.trace.json"
	"$GEN" -n 3 -o "$T/y/prof/a.trace.json"
	cp "$T/t.json" "$T/-odd.json"
	(cd "$T" && "$TRIAGE" -q -j 2 --output b/ x/prof y/prof -- -odd.json)
	eq "odd.md x_prof.md y_prof.md" "$(ls "$T/b" | tr '\n' ' ' | sed 's/ $//')"
	has "$T/b/x_prof.md" 'x/prof'
	has "$T/b/y_prof.md" 'y/prof'
	# the same base name twice, and one that clashes even by path
	mkdir -p "$T/c"
	(cd "$T" && "$TRIAGE" -q --output c x/prof x/prof/)
	eq "x_prof-2.md x_prof.md" "$(ls "$T/c" | tr '\n' ' ' | sed 's/ $//')"
}
check "batch: file names never collide; no hidden or dash-led names" t_batch_names

t_jobs_dash() {
	slow_bin "$T/j" 0.3
	for j in 1 2; do
		: >"$T/j/concurrent"
		TRIAGE_BINDIR=$T/j/bin dash "$TOP/scripts/triage" -q -j $j --output "$T/jout$j" \
		    "$T/t.json" "$T/t.json" "$T/t.json" "$T/t.json"
		eq "$j" "$(sort -n "$T/j/concurrent" | tail -n 1)" "most at once with -j $j"
		eq 4 "$(ls "$T/jout$j" | wc -l)" "reports"
	done
}
check "-j N limits the analyses at once under dash" t_jobs_dash

# t_signals: a slow mapping/formal run (both extractions sleeping) gets a
# signal at its pid alone; setsid keeps the test shell out of its group.
t_signals() {
	slow_bin "$T/s" 30
	for sig in TERM INT HUP; do
		mkdir -p "$T/tmp.$sig"
		# (env: a background job of this shell starts with SIGINT ignored,
		# which a shell may not trap; at a terminal it is not)
		TMPDIR=$T/tmp.$sig TRIAGE_BINDIR=$T/s/bin setsid env --default-signal=INT \
		    "$TRIAGE" --mapping-input "$T/t.json" \
		    --formal-input "$T/t.json" >"$T/sig.out" 2>"$T/sig.err" &
		pid=$!
		i=0
		while [ "$(ls "$T/s/running" | wc -l)" -lt 2 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
		kill -s "$sig" "$pid"
		t0=$(date +%s)
		rc=0
		wait "$pid" || rc=$?
		case $sig in TERM) want=143 ;; INT) want=130 ;; HUP) want=129 ;; esac
		eq "$want" "$rc" "exit status after SIG$sig"
		[ "$(($(date +%s) - t0))" -le 2 ]
		sleep 0.3
		# every process of the run is gone, and its files
		eq "" "$(ps -eo pid,args | grep "$T/s/bin" | grep -v grep)" "processes left after SIG$sig"
		eq "" "$(ls "$T/tmp.$sig")" "files left after SIG$sig"
		[ ! -s "$T/sig.err" ] || { cat "$T/sig.err"; return 1; }
		rm -f "$T/s/running/"*
	done
}
check "INT, TERM, HUP to the driver stop every process, remove its files, exit 128+N" t_signals

t_sigpipe() {
	mkdir -p "$T/tmp.pipe"
	TMPDIR=$T/tmp.pipe "$TRIAGE" "$T/t.json" "$T/t.json" "$T/t.json" 2>"$T/pipe.err" | head -n 1 >/dev/null
	sleep 0.2
	eq "" "$(ls "$T/tmp.pipe")" "files left after SIGPIPE"
}
check "a closed reader (| head) leaves no temporary files" t_sigpipe

t_progress() {
	"$TRIAGE" --progress --mapping-input "$T/t.json" --formal-input "$T/t.json" \
	    >/dev/null 2>"$T/p.err"
	tr '\r' '\n' <"$T/p.err" >"$T/p.lines"
	has "$T/p.lines" "^trace-extract: mapping: $T/t.json: t.json: 100% .*, done.$"
	has "$T/p.lines" "^trace-extract: formal: $T/t.json: t.json: 100% .*, done.$"
	has "$T/p.lines" '^triage: mapping/formal: kernel map, step stats, overlap sweep, fuse detection, report...$'
	"$TRIAGE" --progress -j 2 "$T/t.json" "$T/t.json" >/dev/null 2>"$T/b.err"
	eq "triage: batch: 1 of 2 done triage: batch: 2 of 2 done" \
	    "$(grep '^triage: batch' "$T/b.err" | tr '\n' ' ' | sed 's/ $//')"
	"$TRIAGE" --progress -j 1 "$T/t.json" "$T/t.json" >/dev/null 2>"$T/b1.err"
	has "$T/b1.err" "$T/t.json (2/2): t.json: 100%"
	# no progress when stderr is no terminal, or with --quiet
	"$TRIAGE" --input "$T/t.json" >/dev/null 2>"$T/np.err"
	hasnt "$T/np.err" '100%'
	"$TRIAGE" -q --progress --input "$T/t.json" >/dev/null 2>"$T/q.err"
	[ ! -s "$T/q.err" ]
}
check "progress: per role and operand, after extraction, N of M in batch" t_progress

t_bundle_three() {
	mkdir -p "$T/runs/a" "$T/runs/b" "$T/runs/c"
	"$GEN" -n 2 -o "$T/runs/a/t.trace.json"
	"$GEN" -f vllm -n 2 -o "$T/runs/b/t.trace.json"
	"$GEN" -s decode -n 2 -o "$T/runs/c/t.trace.json"
	"$TRIAGE" -q --bundle -o "$T/bundle.md" "$T/runs/a" "$T/runs/b" "$T/runs/c"
	# one TOC entry per run, linking to its section, grouped by framework
	eq 3 "$(sed -n '/^## Contents/,/^## [^C]/p' "$T/bundle.md" | grep -c '^    - \[.*\](#run-[123])$')"
	for i in 1 2 3; do has "$T/bundle.md" "^<a id=\"run-$i\"></a>$"; done
	has "$T/bundle.md" '^  - SGLang$'
	has "$T/bundle.md" '^  - vLLM$'
	"$TRIAGE" -q --bundle -f html -o "$T/bundle.html" "$T/runs/a" "$T/runs/b" "$T/runs/c"
	eq 3 "$(grep -o '<a href="#run-[123]"' "$T/bundle.html" | sort -u | wc -l)"
}
check "--bundle of three runs: a table of contents entry per run, grouped" t_bundle_three

done_testing
