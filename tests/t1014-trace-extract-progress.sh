#!/bin/sh
# trace-extract's progress lines (issue 31): the file named once, and a
# line left open ended when the process is interrupted.
. "$(dirname "$0")/lib.sh"
EX=$BIN/trace-extract
"$TESTDIR/gen-trace" -s both -n 3 -o "$T/t.json"

t_label() {
	# a label that holds the path names the file; one of a directory adds its name
	"$EX" --progress --progress-label "mapping: $T/t.json" "$T/t.json" >/dev/null 2>"$T/a.err"
	has "$T/a.err" "^trace-extract: mapping: $T/t.json: 100% (0 of 0 MiB), [0-9]* events, done.$"
	mkdir -p "$T/d"
	cp "$T/t.json" "$T/d/r.trace.json"
	"$EX" --progress --progress-label "$T/d" "$T/d" >/dev/null 2>"$T/b.err"
	has "$T/b.err" "^trace-extract: $T/d: r.trace.json: 100% "
	"$EX" --progress "$T/t.json" >/dev/null 2>"$T/c.err"
	has "$T/c.err" "^trace-extract: $T/t.json: 100% "
}
check "progress: the file named once" t_label

t_progress_signal() {
	# an interrupted extraction ends its progress line: a trace fed slowly
	# through a FIFO (a line is shown every 65536 events, a second after the
	# start at the soonest), SIGINT once a progress line is out (env: a
	# background job starts with SIGINT ignored)
	mkfifo "$T/slow.fifo"
	awk 'BEGIN { printf "{\"traceEvents\": [\n"
	    for (i = 0; i < 40000; i++) printf "{\"ph\":\"i\",\"name\":\"m\",\"ts\":%d,\"pid\":1,\"tid\":1},\n", i }' \
	    >"$T/half1"
	awk 'BEGIN { for (i = 40000; i < 80000; i++)
	    printf "{\"ph\":\"i\",\"name\":\"m\",\"ts\":%d,\"pid\":1,\"tid\":1},\n", i }' >"$T/half2"
	( cat "$T/half1"; sleep 1.2; cat "$T/half2"; sleep 30 ) >"$T/slow.fifo" &
	feeder=$!
	env --default-signal=INT "$EX" --progress "$T/slow.fifo" >/dev/null \
	    2>"$T/sig.err" &
	pid=$!
	i=0
	while ! grep -q 'MiB' "$T/sig.err" && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
	kill -INT "$pid"
	rc=0
	wait "$pid" || rc=$?
	# the feeder may be gone: under set -e its cat ends it when killed by
	# SIGPIPE, the reader gone while half2 was still being written
	kill "$feeder" 2>/dev/null || :
	wait "$feeder" 2>/dev/null || :
	eq 130 "$rc" "exit status"
	has "$T/sig.err" 'MiB'
	# the file's last byte ends the line
	eq 0a "$(tail -c 1 "$T/sig.err" | od -An -tx1 | tr -d ' ')" "the last byte"
}
check "progress: an interrupt ends the line it left open" t_progress_signal

done_testing
