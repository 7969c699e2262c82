# triage's command line and run control (issue 19): options checked before
# any work, outputs that are never lost, batch names that never collide,
# -j under dash, signals that stop the whole run, progress lines.  The
# driver runs under /bin/sh (dash on Debian), as installed.
# sanitize: no (the driver's own logic; the tools it runs are tested under
# the sanitizers by their own scripts)
. "$(dirname "$0")/lib.sh"
GEN=$TESTDIR/gen-trace
"$GEN" -s both -n 3 -o "$T/t.json"

# slow_bin DIR SECONDS: a tool set whose trace-extract logs its start (in
# DIR/started), sleeps first, then logs its end (DIR/finished) and runs.
# An extraction stopped by a signal never reaches "finished".
slow_bin() {
	mkdir -p "$1/bin" "$1/running"
	for t in "$BIN"/*; do ln -s "$t" "$1/bin/$(basename "$t")"; done
	rm "$1/bin/trace-extract"
	cat >"$1/bin/trace-extract" <<EOF
#!/bin/sh
case " \$* " in *" --list-ranks "*) exec "$BIN/trace-extract" "\$@" ;; esac
: >"$1/running/\$\$"
echo \$\$ >>"$1/started"
sleep $2
echo \$\$ >>"$1/finished"
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
	usage_err "$T/err" triage "error: argument --jobs: invalid int value: 'abc'"
	status 2 "$TRIAGE" --kernel-table-limit 1x --input "$T/t.json" 2>"$T/err"
	has "$T/err" "invalid int value: '1x'"
	status 2 "$TRIAGE" --url http://127.0.0.1:9 --wait-timeout soon 2>"$T/err"
	has "$T/err" "argument --wait-timeout: invalid number of seconds: 'soon'"
}
check "numeric options: exit 2 with one line before any work, never a hang" t_numbers

t_parsing() {
	# a usage error is one line and where the help is, not the usage
	status 2 "$TRIAGE" --form=json --input "$T/t.json" 2>"$T/err"
	usage_err "$T/err" triage "error: ambiguous option: --form could match --formal-input, --formal-url, --format, --formal-output-dir, --formal-profile-prefix"
	# under --compat reference, argparse's form: the usage, then one error
	status 2 "$TRIAGE" --compat reference --form=json --input "$T/t.json" 2>"$T/err"
	eq 1 "$(grep -c '^usage:' "$T/err")" "usage lines"
	eq 1 "$(grep -c 'error:' "$T/err")" "error lines"
	eq "triage: error: ambiguous option: --form could match --formal-input, --formal-url, --format, --formal-output-dir, --formal-profile-prefix" \
	    "$(tail -n 1 "$T/err")"
	status 2 "$TRIAGE" --inptu "$T/t.json" 2>"$T/err"
	usage_err "$T/err" triage "error: unrecognized arguments: --inptu (did you mean --input?)"
	status 2 "$TRIAGE" --zz "$T/t.json" 2>"$T/err"
	usage_err "$T/err" triage "error: unrecognized arguments: --zz"
	# a path option twice: the first would be dropped unsaid (argparse's last
	# one under --compat reference)
	status 2 "$TRIAGE" --input "$T/t.json" --input "$T/u.json" 2>"$T/err"
	usage_err "$T/err" triage "error: --input given twice ('$T/t.json' first): name one path (several traces: give them as operands, one report each)"
	"$TRIAGE" -q --compat reference --input "$T/nonexistent.json" --input "$T/t.json" >/dev/null
	# the short forms people type
	"$TRIAGE" -q -f json -o "$T/s.json" --input "$T/t.json"
	jq -e '.reports[0].tables | length > 0' "$T/s.json" >/dev/null
	"$TRIAGE" -q -fcsv -o"$T/s.csv" --input "$T/t.json"
	eq "stage,kernel,kernel_short,category,total_us,share_pct,launches,launch_delay_p50_us,launch_delay_max_us,mean_us,min_us,max_us,p50_us,p90_us,location,cpu_op" \
	    "$(head -n 1 "$T/s.csv" | tr -d '\r')"
}
check "options: one error for an ambiguous prefix, did-you-mean, -o/-f/-j short forms" t_parsing

t_first_word() {
	# a mistyped trace path: the reference's error, and what was wrong
	status 2 "$TRIAGE" "$T/nonexist.json" 2>"$T/err"
	eq "triage: note: '$T/nonexist.json' is no file or directory here (a trace is named with --input PATH)" \
	    "$(sed -n 1p "$T/err")"
	eq "triage: error: This skill exposes only the triage workflow. Use single-trace mode (--input/--url) or mapping+formal two-trace mode." \
	    "$(sed -n 2p "$T/err")"
	status 2 "$TRIAGE" "$T/nonexist.json" --compat reference 2>"$T/err"
	hasnt "$T/err" 'note:'
	# --baseline alone: what it lacks, not the mapping message
	status 2 "$TRIAGE" --baseline "$T/t.json" 2>"$T/err"
	usage_err "$T/err" triage "error: --baseline needs the run to compare with it: --input PATH (or --url, or the --mapping-*/--formal-* pair)."
}
check "a first word that is no path, --baseline without a run: said so" t_first_word

t_no_clobber() {
	# an output never lands on a trace of the run: before any work, exit 2,
	# the trace untouched
	mkdir -p "$T/cl/bd" "$T/cl/pd"
	cp "$T/t.json" "$T/cl/bd/run.json"
	cp "$T/t.json" "$T/cl/pd/t.json"
	cp "$T/t.json" "$T/cl/b0.json"
	status 2 "$TRIAGE" -f json -o "$T/cl/bd/" "$T/cl/bd/run.json" 2>"$T/err"
	has "$T/err" "is the trace '$T/cl/bd/run.json' this run reads: name another file"
	status 2 "$TRIAGE" --input "$T/cl/b0.json" -o "$T/cl/b0.json" 2>"$T/err"
	has "$T/err" "^triage: error: --output '$T/cl/b0.json' is the trace"
	ln -s b0.json "$T/cl/b0-link.json"	# the same file by another name
	status 2 "$TRIAGE" --input "$T/cl/b0-link.json" --annotate "$T/cl/b0.json" 2>"$T/err"
	rm -f "$T/cl/b0-link.json"
	has "$T/err" "^triage: error: --annotate '$T/cl/b0.json' is the trace"
	status 2 "$TRIAGE" --input "$T/cl/pd" -o "$T/cl/pd/t.json" 2>"$T/err"
	has "$T/err" "is a trace file of the profile directory '$T/cl/pd' this run reads"
	status 2 "$TRIAGE" --input "$T/cl/b0.json" -o "$T/cl/s.json.gz" --annotate "$T/cl/s.json.gz" 2>"$T/err"
	has "$T/err" "^triage: error: --annotate '$T/cl/s.json.gz' is the --output file too: name two files"
	# standard output by another name: the trace would be mixed into the report
	status 2 "$TRIAGE" --input "$T/cl/b0.json" --annotate /dev/stdout >"$T/cl/mix.out" 2>"$T/err"
	has "$T/err" "^triage: error: --annotate '/dev/stdout' is standard output, where the report goes: name a file"
	test ! -s "$T/cl/mix.out"
	# a trace on standard input cannot be copied: refused before any work
	status 2 "$TRIAGE" --input - --annotate "$T/cl/a.json" <"$T/cl/b0.json" >/dev/null 2>"$T/err"
	has "$T/err" "not with a trace on standard input (--input -)"
	test ! -e "$T/cl/a.json"
	same "$T/t.json" "$T/cl/bd/run.json"
	same "$T/t.json" "$T/cl/b0.json"
	same "$T/t.json" "$T/cl/pd/t.json"
	# a report beside the traces of a profile directory is fine
	"$TRIAGE" -q --input "$T/cl/pd" -o "$T/cl/pd/report.md"
	has "$T/cl/pd/report.md" '^# Triage report'
}
check "no output overwrites a trace the run reads (-o, --annotate, batch -o DIR/)" t_no_clobber

t_header_words() {
	# the standard input is named so, not "-"; a profile of two traces says it
	"$TRIAGE" -q --input - <"$T/t.json" >"$T/in.md"
	has "$T/in.md" '^# Triage report: standard input$'
	has "$T/in.md" '^- \*\*Traces\*\*: standard input$'
	mkdir -p "$T/pd/prefill" "$T/pd/decode"
	"$TESTDIR/gen-trace" -s prefill -o "$T/pd/prefill/a.trace.json"
	"$TESTDIR/gen-trace" -s decode -o "$T/pd/decode/b.trace.json"
	"$TRIAGE" -q --input "$T/pd" >"$T/pd.md"
	has "$T/pd.md" '^- \*\*Mode\*\*: single profile, 2 traces analyzed together$'
}
check "the header: standard input by name, a profile of two traces" t_header_words

t_output_checked_first() {
	slow_bin "$T/o" 5
	export TRIAGE_BINDIR=$T/o/bin
	status 2 "$TRIAGE" --input "$T/t.json" --output /no/such/dir/r.md 2>"$T/err"
	usage_err "$T/err" triage "error: --output '/no/such/dir/r.md': no such directory '/no/such/dir'"
	mkdir -p "$T/outdir"
	status 2 "$TRIAGE" --input "$T/t.json" --output "$T/outdir/" 2>"$T/err"
	has "$T/err" "names a directory; one report needs a file name"
	status 2 "$TRIAGE" --input "$T/t.json" --output "$T/outdir" 2>"$T/err"
	has "$T/err" "is a directory; one report needs a file name"
	: >"$T/afile"
	status 2 "$TRIAGE" -o "$T/afile" "$T/t.json" "$T/t.json" 2>"$T/err"
	has "$T/err" "is a file; batch mode writes one report per operand into a directory"
	# option values too: a table no report has, --table without csv or tsv
	status 2 "$TRIAGE" --input "$T/t.json" -f csv --table kernels 2>"$T/err"
	has "$T/err" "^triage: error: argument --table: bad --table value, not a table of the report (gpu, launch, stream, annotation, step, escape, kernel, "
	status 2 "$TRIAGE" --input "$T/t.json" --table kernel 2>"$T/err"
	usage_err "$T/err" triage "error: --table goes with --format csv or tsv"
	# none of them started an extraction
	[ ! -e "$T/o/started" ]
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
	# four operands, -j N: N extractions register before any goes on
	# (gate_bin), and never more than N
	for j in 1 2 4; do
		rm -rf "$T/j"
		gate_bin "$T/j"
		GATE_N=$j TRIAGE_BINDIR=$T/j/bin dash "$TOP/scripts/triage" -q -j $j \
		    --output "$T/jout$j" "$T/t.json" "$T/t.json" "$T/t.json" "$T/t.json"
		hasnt "$T/j/concurrent" stuck
		eq "$j" "$(sort -n "$T/j/concurrent" | tail -n 1)" "most at once with -j $j"
		eq 4 "$(ls "$T/jout$j" | wc -l)" "reports"
	done
}
check "-j N runs N analyses at once under dash, never more (a semaphore the jobs keep)" t_jobs_dash

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
		# until both extractions run: on a loaded machine that took over 5 s;
		# the bound (20 s, within their 30) only keeps a broken run from hanging
		i=0
		while [ "$(ls "$T/s/running" | wc -l)" -lt 2 ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
		kill -s "$sig" "$pid"
		rc=0
		wait "$pid" || rc=$?
		case $sig in TERM) want=143 ;; INT) want=130 ;; HUP) want=129 ;; esac
		eq "$want" "$rc" "exit status after SIG$sig"
		# both extractions were stopped in their 30 s, neither finished it
		eq 2 "$(grep -c . "$T/s/started")" "extractions started"
		[ ! -e "$T/s/finished" ] || { echo "an extraction ran to its end"; return 1; }
		rm -f "$T/s/started"
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
	# the file named once (issue 31)
	has "$T/p.lines" "^trace-extract: mapping: $T/t.json: 100% .*, done.$"
	has "$T/p.lines" "^trace-extract: formal: $T/t.json: 100% .*, done.$"
	has "$T/p.lines" '^triage: mapping/formal: kernel map, step stats, overlap sweep, fuse detection, report...$'
	"$TRIAGE" --progress -j 2 "$T/t.json" "$T/t.json" >/dev/null 2>"$T/b.err"
	eq "triage: batch: 1 of 2 done triage: batch: 2 of 2 done" \
	    "$(grep '^triage: batch' "$T/b.err" | tr '\n' ' ' | sed 's/ $//')"
	"$TRIAGE" --progress -j 1 "$T/t.json" "$T/t.json" >/dev/null 2>"$T/b1.err"
	has "$T/b1.err" "$T/t.json (2/2): 100%"
	# a directory operand: the file read within it
	mkdir -p "$T/pd"
	cp "$T/t.json" "$T/pd/r.trace.json"
	"$TRIAGE" --progress --input "$T/pd" >/dev/null 2>"$T/d.err"
	has "$T/d.err" "^trace-extract: $T/pd: r.trace.json: 100% "
	# no progress when stderr is no terminal, or with --quiet
	"$TRIAGE" --input "$T/t.json" >/dev/null 2>"$T/np.err"
	hasnt "$T/np.err" '100%'
	"$TRIAGE" -q --progress --input "$T/t.json" >/dev/null 2>"$T/q.err"
	[ ! -s "$T/q.err" ]
}
check "progress: per role and operand, after extraction, N of M in batch" t_progress

t_table_dir() {
	# csv or tsv with -o DIR/: one file per table, as triage-render writes them
	"$TRIAGE" -q --input "$T/t.json" -f csv -o "$T/csvdir/"
	"$TRIAGE" -q --input "$T/t.json" -f jsonl | "$BIN/triage-render" -f csv -o "$T/want/"
	eq "$(ls "$T/want" | xargs)" "$(ls "$T/csvdir" | xargs)" "files"
	for f in "$T/want"/*; do same "$f" "$T/csvdir/$(basename "$f")"; done
	has "$T/csvdir/kernel.csv" '^stage,kernel,kernel_short,'
	# an existing directory without the slash, tsv, one --table
	mkdir -p "$T/tsvdir"
	"$TRIAGE" -q --input "$T/t.json" -f tsv --table step -o "$T/tsvdir"
	eq "step.tsv" "$(ls "$T/tsvdir")"
	has "$T/tsvdir/step.tsv" "$(printf '^stage\tindex\tname\tbatch\ttokens\t')"
	# md still needs a file name
	status 2 "$TRIAGE" -q --input "$T/t.json" -o "$T/csvdir/" 2>"$T/err"
	has "$T/err" "names a directory; one report needs a file name"
}
check "-f csv|tsv -o DIR/: a file per table" t_table_dir

t_help() {
	# --help is the option table: every option the parser takes, in 79 columns
	"$TRIAGE" --help >"$T/help"
	awk 'length > 79 { print "too long: " $0; e = 1 } END { exit e }' "$T/help"
	sed -n '/^opt_table() {/,/^OPTIONS$/p' "$TRIAGE" | grep -v '^#\|^opt_table\|cat <<\|^OPTIONS' |
	    cut -d'|' -f1 | sed 's/^.,//' | sort >"$T/table"
	grep -o '^  \(-., \)\{0,1\}--[a-z][a-z-]*\|^      --[a-z][a-z-]*' "$T/help" |
	    sed 's/.*--//' | sort >"$T/listed"
	same "$T/table" "$T/listed"
	[ "$(wc -l <"$T/table")" -ge 58 ]
	# the parser takes each of them (a flag, or one value)
	for o in $(cat "$T/table"); do
		status 2 "$TRIAGE" "--$o=" --no-such-option 2>"$T/e" >/dev/null
		hasnt "$T/e" "unrecognized arguments: --$o"
	done
}
check "--help: made from the parser's option table, every line within 79 columns" t_help

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
	# CSV: every run's kernel rows in one table, the run first; the summary as "runs"
	"$TRIAGE" -q --bundle -f csv "$T/runs/a" "$T/runs/b" "$T/runs/c" >"$T/bundle.csv"
	eq "run,stage,kernel" "$(head -n 1 "$T/bundle.csv" | cut -d, -f1-3)"
	eq 3 "$(tail -n +2 "$T/bundle.csv" | cut -d, -f1 | sort -u | wc -l | tr -d ' ')" "runs in the kernel csv"
	"$TRIAGE" -q --bundle -f csv --table runs "$T/runs/a" "$T/runs/b" "$T/runs/c" >"$T/runs.csv"
	eq 4 "$(wc -l <"$T/runs.csv" | tr -d ' ')" "the summary's lines"
	has "$T/runs.csv" "$T/runs/b"
	"$TRIAGE" -q --bundle -f tsv --table gpu "$T/runs/a" "$T/runs/c" >"$T/gpu.tsv"
	eq "run	stage	items	kernels" "$(head -n 1 "$T/gpu.tsv" | cut -f1-4)"
}
check "--bundle of three runs: a table of contents entry per run, grouped; CSV of all runs" t_bundle_three

done_testing
