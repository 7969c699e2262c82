#!/bin/sh
# trace-annotate: the trace streamed through byte for byte, the findings
# added before the closing bracket of its event array, in every shape a
# trace comes in (object or bare array, empty, trailing comma, no closing
# bracket, a byte order mark, members after the array, brackets inside
# strings), plain or gzip either way; and the failures that leave nothing
# behind.
. "$(dirname "$0")/lib.sh"
TA=$BIN/trace-annotate

# recs PATH EVENTS: the records of a trace at PATH of EVENTS events, with one
# step [10, 30) and so one finding (base 0)
recs() {
	printf '{"type":"step","t":0,"stage":"all","index":0,"name":"ProfilerStep#1","ts":10,"cpu_us":20,"period_us":20,"id":"step-1"}\n'
	printf '{"type":"trace","v":1,"t":0,"role":"single","path":"%s","gzip":false,"time_base_us":0}\n' "$1"
	printf '{"type":"stats","t":0,"events":%s}\n' "$2"
}

STEP='{"ph":"X","cat":"triage","name":"step 0: ProfilerStep#1","pid":4194305,"tid":1,"ts":10,"dur":20,"args":{"row":"step-1","stage":"all","index":0,"marker":"ProfilerStep#1","period_us":20,"cpu_us":20}}'
META='{"ph":"M","name":"process_name","pid":4194305,"tid":0,"args":{"name":"triage findings"}},
{"ph":"M","name":"process_sort_index","pid":4194305,"tid":0,"args":{"sort_index":-1}},
{"ph":"M","name":"thread_name","pid":4194305,"tid":1,"args":{"name":"Steps"}},
{"ph":"M","name":"thread_sort_index","pid":4194305,"tid":1,"args":{"sort_index":1}},'

# shape NAME TEXT EVENTS EXPECTED: the trace TEXT annotated is EXPECTED exactly
# (@ADDED@ the added events; printf %b escapes in both)
shape() {
	printf '%b' "$2" >"$T/$1.json"
	recs "$T/$1.json" "$3" | "$TA" -q -o "$T/$1.out.json"
	printf '%b' "$4" | awk -v m="$META" -v s="$STEP" '{ gsub(/@ADDED@/, m "\n" s); print }' |
	    sed '$!b' >"$T/$1.want"
	# awk adds a newline at the end: compare the want's text as written
	if [ "$(tail -c 1 "$T/$1.json" | od -An -c | tr -d ' ')" != '\n' ] &&
	    [ "$(tail -c 1 "$T/$1.want" | od -An -c | tr -d ' ')" = '\n' ]; then
		head -c -1 "$T/$1.want" >"$T/$1.w2" && mv "$T/$1.w2" "$T/$1.want"
	fi
	same "$T/$1.want" "$T/$1.out.json"
	python3 "$TOP/tests/annotate-check.py" "$T/$1.json" "$T/$1.out.json" >/dev/null
}

t_object() {
	shape object '{"schemaVersion": 1, "traceEvents": [\n{"ph": "X", "name": "a]}[", "pid": 1, "tid": 1, "ts": 1, "dur": 2}\n],\n"deviceProperties": [{"id": 0}], "displayTimeUnit": "ms"}\n' 1 \
	    '{"schemaVersion": 1, "traceEvents": [\n{"ph": "X", "name": "a]}[", "pid": 1, "tid": 1, "ts": 1, "dur": 2}\n,\n@ADDED@\n],\n"deviceProperties": [{"id": 0}], "displayTimeUnit": "ms"}\n'
}
check 'an object: the events right before its closing bracket; the members after it kept' t_object

t_empty() {
	shape empty '{"traceEvents": []}' 0 '{"traceEvents": [\n@ADDED@\n]}'
	shape trailing '{"traceEvents": [{"ph": "i", "ts": 1, "pid": 1, "tid": 1, "name": "x"},\n]}' 1 \
	    '{"traceEvents": [{"ph": "i", "ts": 1, "pid": 1, "tid": 1, "name": "x"},\n\n@ADDED@\n]}'
}
check 'an empty event array, a trailing comma: no comma added before the first' t_empty

t_array() {
	shape array '[{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2}]\n' 1 \
	    '[{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2},\n@ADDED@\n]\n'
	# the trace-event format lets an array end without its bracket: it gets one
	printf '[{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2},\n' >"$T/open.json"
	recs "$T/open.json" 1 | "$TA" -q -o "$T/open.out.json"
	eq "$(cat "$T/open.json")" "$(head -n 1 "$T/open.out.json")"
	eq ']' "$(tail -n 1 "$T/open.out.json")"
	jq -e 'length == 6' "$T/open.out.json" >/dev/null
	python3 "$TOP/tests/annotate-check.py" "$T/open.json" "$T/open.out.json" >/dev/null
}
check 'a bare array, and one without its closing bracket' t_array

t_bom() {
	shape bom '\357\273\277{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2}]}' 1 \
	    '\357\273\277{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2},\n@ADDED@\n]}'
	# a second traceEvents member: a viewer reads the last alone, findings in
	# the first would not show, so none are written, and no file is left
	printf '{"traceEvents": [], "traceEvents": [{"ph": "i", "ts": 1, "pid": 1, "tid": 1, "name": "x"}]}' >"$T/twice.json"
	recs "$T/twice.json" 1 >"$T/twice.rec"
	status 1 "$TA" -q -o "$T/twice.out.json" "$T/twice.rec" 2>"$T/twice.err"
	has "$T/twice.err" "holds 2 traceEvents arrays, and a trace viewer reads the last alone"
	[ ! -e "$T/twice.out.json" ]
}
check 'a byte order mark kept; two event arrays refused' t_bom

t_gzip() {
	"$TOP/tests/gen-trace" -n 3 -o "$T/g.json"
	n=$("$BIN/trace-extract" -q "$T/g.json" | jq -s 'map(select(.type == "stats"))[0].events')
	gzip -c "$T/g.json" >"$T/g.json.gz"
	# gzip in, gzip out by the name
	recs "$T/g.json.gz" "$n" | "$TA" -q -o "$T/o.json.gz"
	gzip -t "$T/o.json.gz"
	recs "$T/g.json" "$n" | "$TA" -q -o "$T/o.json"
	same "$T/o.json" "$(gzip -dc "$T/o.json.gz" >"$T/o2.json"; echo "$T/o2.json")"
	# plain in, gzip out with -z on stdout; gzip in, plain out
	recs "$T/g.json" "$n" | "$TA" -q -z >"$T/o3.gz"
	gzip -dc "$T/o3.gz" | cmp - "$T/o.json"
	recs "$T/g.json.gz" "$n" | "$TA" -q -o "$T/o4.json"
	same "$T/o.json" "$T/o4.json"
	python3 "$TOP/tests/annotate-check.py" "$T/g.json.gz" "$T/o.json.gz" >/dev/null
}
check 'gzip in and out, by the output name or -z' t_gzip

t_no_findings() {
	printf '{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2}], "x": 1}\n' >"$T/n.json"
	recs "$T/n.json" 1 | grep -v '"type":"step"' | "$TA" -q -o "$T/n.out.json"
	same "$T/n.json" "$T/n.out.json"
}
check 'no finding: the copy is the trace, byte for byte' t_no_findings

t_in_place() {
	printf '{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2}]}\n' >"$T/p.json"
	cp "$T/p.json" "$T/p.orig"
	recs "$T/p.json" 1 | "$TA" -q -o "$T/p.json"
	python3 "$TOP/tests/annotate-check.py" "$T/p.orig" "$T/p.json" >/dev/null
}
check 'the output may be the trace itself: read whole before it is replaced' t_in_place

t_failures() {
	printf '{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1' >"$T/cut.json"
	echo keep >"$T/out.json"
	recs "$T/cut.json" 1 | status 1 "$TA" -q -o "$T/out.json" 2>"$T/err"
	has "$T/err" "^trace-annotate: '$T/cut.json': truncated JSON"
	eq keep "$(cat "$T/out.json")" "the output file untouched"
	[ -z "$(ls "$T" | grep '^\.\?out\.json\.')" ]
	# not the trace of the records: another event count
	printf '{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2}]}\n' >"$T/one.json"
	recs "$T/one.json" 5 | status 1 "$TA" -q -o "$T/new.json" 2>"$T/err"
	has "$T/err" "holds 1 events where the records' trace held 5: not the trace the records were made from"
	[ ! -e "$T/new.json" ]
	# --trace-file: another copy of it, not counted
	recs "$T/elsewhere.json" 5 | "$TA" -q --trace-file "$T/one.json" -o "$T/new.json"
	[ -s "$T/new.json" ]
	printf '{"other": [1, 2]}\n' >"$T/none.json"
	recs "$T/none.json" 0 | status 1 "$TA" -q -o "$T/new2.json" 2>"$T/err"
	has "$T/err" "has no event array (traceEvents): nothing to annotate"
	[ ! -e "$T/new2.json" ]
	recs "$T/missing.json" 1 | status 1 "$TA" -q -o "$T/new3.json" 2>"$T/err"
	has "$T/err" "cannot open '$T/missing.json'"
	gzip -c "$T/one.json" | head -c 30 >"$T/cut.json.gz"
	recs "$T/cut.json.gz" 1 | status 1 "$TA" -q -o "$T/new4.json" 2>"$T/err"
	has "$T/err" "truncated gzip stream"
}
check 'a cut trace, another trace, no event array: exit 1 and no output left' t_failures

# The memory of a large trace is the scanner's: four times the trace (800
# steps of 8 layers, 24 MB, against 200) costs no more than the findings'
# few hundred kB more of resident memory.
rss_of() {	# rss_of STEPS: kB of trace-annotate's peak on a generated trace
	"$TOP/tests/gen-trace" -n "$1" -l 8 -o "$T/big$1.json"
	n=$("$BIN/trace-extract" -q "$T/big$1.json" | jq -s 'map(select(.type == "stats"))[0].events')
	recs "$T/big$1.json" "$n" >"$T/big$1.jsonl"
	/usr/bin/time -f '%M' -o "$T/rss$1" "$TA" -q -o "$T/big$1.out.json" "$T/big$1.jsonl"
	one_insertion "$T/big$1.json" "$T/big$1.out.json"
	tail -n 1 "$T/rss$1"
}

# one_insertion ORIGINAL OUTPUT: OUTPUT is ORIGINAL with one run of bytes
# inserted: what follows the first difference is the original's end
one_insertion() {
	# POSIX cmp says "char N", GNU's outside the C locale "byte N"
	_n=$(cmp "$1" "$2" 2>/dev/null | sed -n 's/.* differ: [a-z]* \([0-9]*\),.*/\1/p')
	[ -n "$_n" ]
	_rest=$(($(wc -c <"$1") - _n + 1))
	[ "$(tail -c "$_rest" "$1" | cksum)" = "$(tail -c "$_rest" "$2" | cksum)" ]
}

t_bounded() {
	[ -x /usr/bin/time ] || return 0
	small=$(rss_of 200)
	large=$(rss_of 800)
	[ "$(wc -c <"$T/big800.json")" -gt 20000000 ]
	if [ $((large - small)) -ge 8192 ]; then
		echo "peak RSS ${small} kB at 200 steps, ${large} kB at 800"
		return 1
	fi
}
check 'a large trace in bounded memory' t_bounded
done_testing
