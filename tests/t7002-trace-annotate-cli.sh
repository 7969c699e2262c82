#!/bin/sh
# trace-annotate's command line: usage, which traces and where they go
# (one file, one per trace by rank or index, a directory), the trace read
# from standard input, bad records and empty streams.
. "$(dirname "$0")/lib.sh"
TA=$BIN/trace-annotate

# trc T PATH [RANK]: a trace record with a step and its stats (2 events)
trc() {
	printf '{"type":"step","t":%s,"stage":"all","index":0,"name":"ProfilerStep#1","ts":1,"cpu_us":1,"period_us":1,"id":"step-%s"}\n' "$1" "$1"
	printf '{"type":"trace","v":1,"t":%s,"role":"single","path":"%s"%s,"time_base_us":0}\n' "$1" "$2" \
	    "${3:+,\"rank\":$3}"
	printf '{"type":"stats","t":%s,"events":2}\n' "$1"
}

mk() {	# mk NAME: a trace of two events
	printf '{"traceEvents": [{"ph": "i", "name": "a", "pid": 1, "tid": 1, "ts": 1},\n{"ph": "i", "name": "b", "pid": 1, "tid": 1, "ts": 2}]}\n' >"$T/$1"
}

t_usage() {
	"$TA" --help >"$T/help"
	has "$T/help" '^usage: trace-annotate \[-qz\] \[-n N\] \[-o FILE\] \[-t N\] \[--trace-file F\]$'
	has "$T/help" '^ *\[--no-link\] \[records\]$'
	has "$T/help" 'Perfetto'
	status 2 "$TA" --bogus </dev/null 2>"$T/err"
	status 2 "$TA" -n x </dev/null 2>"$T/err"
	has "$T/err" "bad --top value"
	status 2 "$TA" a b </dev/null 2>/dev/null
	# an output that cannot be written: exit 2 before the records are read
	status 2 "$TA" -o "$T/no/such/dir/x.json" </dev/null 2>"$T/err"
	has "$T/err" 'no/such/dir'
}
check 'usage, bad options and outputs: exit 2' t_usage

t_records() {
	status 3 "$TA" </dev/null 2>"$T/err"
	printf '{"type":"input","v":1}\n' | status 3 "$TA" 2>"$T/err"
	has "$T/err" 'no trace record: nothing to annotate'
	mk a.json
	trc 0 "$T/a.json" | status 3 "$TA" -t 4 2>"$T/err"
	has "$T/err" 'the records hold no trace 4'
	printf '{"type":"trace","t":0}\n{"type":"idle_gap","t":0,"stage":"x","ts":"late","dur":1}\n' |
	    status 1 "$TA" 2>"$T/err"
	has "$T/err" "^trace-annotate: <stdin>:2: idle_gap record: member 'ts' is not "
	printf '{"type":"trace","t":0}\n{"type":"overlap_exposed","t":0,"stage":"s","row":"overlap-1","exposed_us":1,"intervals":1,"spans":[[1]]}\n' |
	    status 1 "$TA" 2>"$T/err"
	has "$T/err" "overlap_exposed record: member 'spans' holds an element other than \[ts, dur\]"
	# a trace read from standard input has no file to annotate
	trc 0 - | status 2 "$TA" 2>"$T/err"
	has "$T/err" 'trace 0 was read from standard input: name its file with --trace-file'
}
check 'empty streams exit 3, malformed records 1, a trace from stdin 2' t_records

t_names() {
	mk a.json
	mk b.json.gz.tmp
	gzip -c "$T/b.json.gz.tmp" >"$T/b.json.gz"
	{ trc 0 "$T/a.json" 0; trc 1 "$T/b.json.gz" 3; } >"$T/two.jsonl"
	# two traces on standard output: no
	status 2 "$TA" "$T/two.jsonl" >/dev/null 2>"$T/err"
	has "$T/err" 'the records hold 2 traces: name a directory'
	# one file name: each trace's rank before the extension
	"$TA" -q -o "$T/out.json.gz" "$T/two.jsonl"
	gzip -t "$T/out.rank0.json.gz"
	gzip -t "$T/out.rank3.json.gz"
	# ranks not all known: the trace index
	{ trc 0 "$T/a.json"; trc 1 "$T/b.json.gz" 3; } | "$TA" -q -o "$T/x.json"
	[ -s "$T/x.t0.json" ] && [ -s "$T/x.t1.json" ]
	# a directory: the trace's stem, gzip as the trace was
	mkdir "$T/d"
	"$TA" -o "$T/d" "$T/two.jsonl" 2>"$T/err"
	[ -s "$T/d/a.annotated.json" ]
	gzip -t "$T/d/b.annotated.json.gz"
	has "$T/err" "annotated '$T/a.json' into '$T/d/a.annotated.json'"
	"$TA" -q -z -o "$T/e/" "$T/two.jsonl" 2>"$T/err" && return 1
	mkdir "$T/e"
	"$TA" -q -z -o "$T/e/" "$T/two.jsonl"
	gzip -t "$T/e/a.annotated.json.gz"
	# -t: one of them, to stdout
	"$TA" -q -t 1 "$T/two.jsonl" | grep -q '"name":"triage findings"'
	# --trace-file names one trace only
	status 2 "$TA" --trace-file "$T/a.json" -o "$T/d/" "$T/two.jsonl" 2>"$T/err"
	has "$T/err" 'choose one with -t N'
	"$TA" -q -t 0 --trace-file "$T/b.json.gz" "$T/two.jsonl" >"$T/c.json"
	grep -q '"name":"triage findings"' "$T/c.json"
	# two traces of one stem (prefill/ and decode/ of a profile): two files, not one
	mkdir -p "$T/pd/prefill" "$T/pd/decode" "$T/pdo"
	cp "$T/a.json" "$T/pd/prefill/h.json"
	cp "$T/a.json" "$T/pd/decode/h.json"
	{ trc 0 "$T/pd/prefill/h.json" 0; trc 1 "$T/pd/decode/h.json" 0; } >"$T/pd.jsonl"
	"$TA" -o "$T/pdo/" "$T/pd.jsonl" 2>"$T/err"
	[ -s "$T/pdo/h.t0.annotated.json" ] && [ -s "$T/pdo/h.t1.annotated.json" ]
	has "$T/err" "annotated '$T/pd/decode/h.json' into '$T/pdo/h.t1.annotated.json'"
	eq 2 "$(ls "$T/pdo" | wc -l | tr -d ' ')" "files"
	# a rank's name is made here: a link planted at one refuses all, none written
	mkdir "$T/lk"
	echo victim >"$T/victim"
	ln -s ../victim "$T/lk/o.rank3.json"
	status 2 "$TA" -q -o "$T/lk/o.json" "$T/two.jsonl" 2>"$T/err"
	has "$T/err" "cannot write '$T/lk/o.rank3.json': it is a symbolic link"
	eq victim "$(cat "$T/victim")"
	eq o.rank3.json "$(ls "$T/lk")" "files written"
	# --no-link: the caller made the -o name (triage, a rank's file): a link
	# there is refused too; a name the user typed is written through it
	mk one.json
	trc 0 "$T/one.json" >"$T/one.jsonl"
	ln -s ../victim "$T/lk/made.json"
	status 2 "$TA" -q --no-link -o "$T/lk/made.json" "$T/one.jsonl" 2>"$T/err"
	has "$T/err" "cannot write '$T/lk/made.json': it is a symbolic link"
	eq victim "$(cat "$T/victim")"
	"$TA" -q -o "$T/lk/made.json" "$T/one.jsonl"
	has "$T/victim" 'triage findings'
}
check 'where the traces go: a file, by rank or index, a directory, -t, --trace-file' t_names

t_pid() {
	mk a.json
	{
		trc 0 "$T/a.json"
		printf '{"type":"launch","t":0,"name":"cudaLaunchKernel","pid":"5000000","tid":"1","ts":1,"dur":1,"correlation":1}\n'
	} | "$TA" -q >"$T/o.json"
	eq 5000001 "$(jq '[.traceEvents[] | select(.cat == "triage")][0].pid' "$T/o.json")"
	# the trace's own events, no records (metadata, instants), own pids too:
	# a trace cannot plant events in the findings' process
	printf '{"traceEvents": [{"ph": "M", "name": "process_name", "pid": 4194305, "tid": 0, "args": {"name": "triage findings"}},\n{"ph": "i", "name": "fake", "cat": "triage", "pid" :\n "6000000.0", "tid": 1, "ts": 2}]}\n' >"$T/b.json"
	trc 0 "$T/b.json" | "$TA" -q >"$T/o2.json"
	eq 6000001 "$(jq '[.traceEvents[] | select(.name == "process_name" and .args.name == "triage findings")] | map(.pid) | max' "$T/o2.json")"
	eq 1 "$(jq '[.traceEvents[] | select(.pid == 6000001)] | map(select(.name == "process_name")) | length' "$T/o2.json")"
	# a key as a JSON reader decodes it, a long float, a "pid" inside a string (no pid)
	printf '{"traceEvents": [{"ph": "i", "name": "x \\"pid\\": 9000000000", "p\\u0069d": 7000000, "tid": 1, "ts": 1},\n{"ph": "i", "name": "b", "pid": 7.000002000000000000000000000000000000000000e6, "tid": 1, "ts": 2}]}\n' >"$T/c.json"
	trc 0 "$T/c.json" | "$TA" -q >"$T/o3.json"
	eq 7000003 "$(jq '[.traceEvents[] | select(.name == "process_name" and .args.name == "triage findings")][0].pid' "$T/o3.json")"
	# a pid of 2^62 or more leaves none free above it: refused, nothing written
	printf '{"traceEvents": [{"ph": "i", "name": "x", "pid": 4611686018427387904, "tid": 1, "ts": 1},\n{"ph": "i", "name": "b", "pid": 1, "tid": 1, "ts": 2}]}\n' >"$T/d.json"
	trc 0 "$T/d.json" | status 1 "$TA" -q -o "$T/o4.json" 2>"$T/err"
	has "$T/err" 'the trace names a pid of 2^62 or more'
	[ ! -e "$T/o4.json" ]
}
check 'the findings pid is above every pid of the records and of the trace' t_pid

# Names from the trace are text: a quote, a control character and a NUL
# inside a kernel's name and its CPU op come out as JSON escapes, the
# document valid and the names read back as they were.
t_hostile() {
	mk a.json
	k='void k\"x\u0001\u0000y<1>'
	{
		printf '{"type":"kernel","t":0,"name":"%s(int)","cat":"kernel","pid":"0","tid":"7","ts":1,"dur":1,"stage":"all","sel":true}\n' "$k"
		trc 0 "$T/a.json"
		printf '{"type":"kernel_row","t":0,"stage":"all","kernel":"%s","total_us":1,"launches":1,"share_pct":100,"stage_total_us":1,"location":"a.py:1 f","cpu_op":"op\\n\\u001b[31m","shown":true,"id":"kernel-1"}\n' "$k"
	} | "$TA" -q >"$T/o.json"
	grep -q '"kernel":"void k\\"x\\u0001\\u0000y<1>"' "$T/o.json"
	grep -q '"cpu_op":\["op\\n\\u001b\[31m"\]' "$T/o.json"
	eq '"void k\"x\u0001\u0000y<1>"' "$(jq '.traceEvents[] | select(.cat == "triage" and .args.kernel) | .args.kernel' "$T/o.json")"
	! LC_ALL=C grep -q "$(printf '\001')" "$T/o.json"
}
check 'names with quotes, control characters and NUL: JSON escapes' t_hostile
done_testing
