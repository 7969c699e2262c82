#!/bin/sh
# trace-extract --name-refs (issue 30): each long kernel name once per trace
# in a kernel_name record, and kernel records that refer to it by name_ref.
# Every report must be the one the names in full give (triage passes it
# whenever the records are not the output), and a reference that does not
# resolve is refused by every reader.
. "$(dirname "$0")/lib.sh"

GEN=$TESTDIR/gen-trace
EX=$BIN/trace-extract

# A bin directory whose trace-extract drops --name-refs: triage without it.
mkdir -p "$T/plain"
for f in "$BIN"/*; do
	ln -s "$f" "$T/plain/$(basename "$f")"
done
rm "$T/plain/trace-extract"
cat >"$T/plain/trace-extract" <<EOF
#!/bin/sh
for a do
	shift
	[ "\$a" = --name-refs ] || set -- "\$@" "\$a"
done
exec "$BIN/trace-extract" "\$@"
EOF
chmod +x "$T/plain/trace-extract"

# report NAME ARGS...: triage's stdout and stderr with and without the references
report() {
	_n=$1
	shift
	"$TRIAGE" -q "$@" >"$T/$_n.refs" 2>"$T/$_n.refs.err" || return 1
	TRIAGE_BINDIR=$T/plain "$TRIAGE" -q "$@" >"$T/$_n.full" 2>"$T/$_n.full.err" || return 1
	sed -i "s#$T/plain#BIN#g" "$T/$_n.full.err"
	sed -i "s#$BIN#BIN#g" "$T/$_n.refs.err"
	same "$T/$_n.full" "$T/$_n.refs" && same "$T/$_n.full.err" "$T/$_n.refs.err"
}

t_stream() {
	"$GEN" -s both -n 3 --streams 2 -o "$T/a.json"
	"$EX" -q "$T/a.json" >"$T/full.jsonl"
	"$EX" -q --name-refs "$T/a.json" >"$T/refs.jsonl"
	# the long names referred to, each defined once, before its first use
	jq -r 'select(.type == "kernel_name") | .id' "$T/refs.jsonl" | sort | uniq -d >"$T/dup"
	test ! -s "$T/dup"
	eq 0 "$(jq -s '[.[] | select(.type == "kernel" and has("name"))] | length' "$T/refs.jsonl")" \
	    "kernel records with a name"
	jq -c 'if .type == "kernel_name" then "def \(.id)" elif .type == "kernel" then "use \(.name_ref)"
	    else empty end' "$T/refs.jsonl" | awk '/def/ { d[$2] = 1 } /use/ && !d[$2] { bad = 1 }
	    END { exit bad }'
	# resolved, every kernel record is the one with its name in full
	jq -c 'select(.type == "kernel")' "$T/full.jsonl" >"$T/k.full"
	jq -c --slurp '(map(select(.type == "kernel_name") | {key: "\(.id)", value: .name}) |
	    from_entries) as $n | .[] | select(.type == "kernel") |
	    (to_entries | map(if .key == "name_ref" then {key: "name", value: $n["\(.value)"]} else . end) |
	    from_entries)' "$T/refs.jsonl" >"$T/k.refs"
	same "$T/k.full" "$T/k.refs"
	# a name of 12 bytes or fewer stays in its record
	printf '{"traceEvents":[{"ph":"X","cat":"kernel","name":"short_k","pid":0,"tid":7,"ts":1,"dur":2,"args":{"stream":7}}]}' \
	    >"$T/short.json"
	"$EX" -q --name-refs "$T/short.json" >"$T/short.jsonl"
	has "$T/short.jsonl" '"type":"kernel","t":0,"name":"short_k"'
	eq 0 "$(grep -c '"kernel_name"' "$T/short.jsonl")" "kernel_name records"
	# a long name of one kernel record stays in it; one of two is referred to
	printf '{"traceEvents":[%s,%s,%s]}' \
	    '{"ph":"X","cat":"kernel","name":"once_only_kernel_name","pid":0,"tid":7,"ts":1,"dur":2}' \
	    '{"ph":"X","cat":"kernel","name":"twice_seen_kernel_name","pid":0,"tid":7,"ts":4,"dur":2}' \
	    '{"ph":"X","cat":"kernel","name":"twice_seen_kernel_name","pid":0,"tid":7,"ts":7,"dur":2}' \
	    >"$T/once.json"
	"$EX" -q --name-refs "$T/once.json" >"$T/once.jsonl"
	has "$T/once.jsonl" '"type":"kernel","t":0,"name":"once_only_kernel_name"'
	eq '"twice_seen_kernel_name"' "$(jq -c 'select(.type == "kernel_name") | .name' "$T/once.jsonl")"
	eq 2 "$(grep -c '"name_ref":' "$T/once.jsonl")" "referring records"
}
check "the stream: each long name once, before its first reference; the records resolve to the full ones" t_stream

t_reports() {
	"$GEN" -s both -n 3 --streams 2 -o "$T/s.json"
	"$GEN" -s both -n 3 --streams 2 --graph -o "$T/g.json"
	"$GEN" -f vllm -s decode -n 4 -o "$T/v.json"
	report s.md --input "$T/s.json"
	has "$T/s.md.refs" 'GPU time'
	report s.json --input "$T/s.json" --format json
	report v.md --input "$T/v.json"
	report dual.md --mapping-input "$T/s.json" --formal-input "$T/g.json"
	has "$T/dual.md.refs" 'Overlap'
	report dual.html --mapping-input "$T/s.json" --formal-input "$T/g.json" --format html
	# a directory: several traces in one stream, the names of each its own
	mkdir -p "$T/dir"
	cp "$T/s.json" "$T/dir/prefill.json"
	cp "$T/v.json" "$T/dir/decode.json"
	report dir.md --input "$T/dir"
	# the ranks' streams one after another (rank-skew), each numbering from 0
	d=$T/ranks
	mkdir -p "$d"
	"$GEN" -n 2 -l 2 --streams 2 --rank 0 --world 2 -o "$d/run-TP-0.trace.json"
	"$GEN" -f vllm -n 2 -l 2 --streams 2 --rank 1 --world 2 --comm-late 10 -o "$d/run-TP-1.trace.json"
	report ranks.md --all-ranks --input "$d"
	has "$T/ranks.md.refs" 'all ranks (2)'
	report base.md --baseline "$T/s.json" --input "$T/g.json"
}
check "every report is the same with the references: single, vLLM, dual, a directory, all ranks, a diff" t_reports

t_dropped() {
	# the last filter that reads the events leaves the kernel names out with them
	"$EX" -q --name-refs "$T/s.json" | "$BIN/trace-stage" -q --late-stages | "$BIN/trace-health" -q |
	    "$BIN/kernel-map" -q | "$BIN/step-stats" -q | "$BIN/kernel-roofline" -q --drop-events \
	    >"$T/roof.jsonl"
	eq 0 "$(grep -c '"type":"kernel\(_name\)*"' "$T/roof.jsonl")" "event records left"
	has "$T/roof.jsonl" '"type":"kernel_row"'
	"$EX" -q --name-refs "$T/s.json" | "$BIN/trace-stage" -q --late-stages |
	    "$BIN/overlap-sweep" -q --drop-events >"$T/ov.jsonl"
	eq 0 "$(grep -c '"type":"kernel\(_name\|_stages\)*"' "$T/ov.jsonl")" "overlap-sweep's left"
}
check "--drop-events leaves the kernel_name records out too (kernel-roofline, overlap-sweep)" t_dropped

t_refused() {
	"$GEN" -s decode -o "$T/d.json"
	"$EX" -q --name-refs "$T/d.json" >"$T/r.jsonl"
	first=$(jq -r 'select(.type == "kernel_name") | .id' "$T/r.jsonl" | head -n 1)
	# a reference to no kernel_name record: the record lost, or the id changed
	grep -v '"type":"kernel_name"' "$T/r.jsonl" >"$T/lost.jsonl"
	# a name given twice
	awk '/"type":"kernel_name"/ && !d { print; d = 1 } 1' "$T/r.jsonl" >"$T/twice.jsonl"
	# both a name and a reference; neither
	sed '0,/"name_ref":/s/"name_ref":/"name":"k","name_ref":/' "$T/r.jsonl" >"$T/both.jsonl"
	sed '0,/"name_ref":[0-9]*,/s/"name_ref":[0-9]*,//' "$T/r.jsonl" >"$T/neither.jsonl"
	# an id out of range
	sed '0,/"type":"kernel_name","t":0,"id":[0-9]*/s//"type":"kernel_name","t":0,"id":-1/' \
	    "$T/r.jsonl" >"$T/neg.jsonl"
	cat >"$T/want" <<EOF
lost name_ref $first names no kernel_name record of trace 0 before it
twice kernel_name record: id $first of trace 0 was given before
both both 'name' and 'name_ref' are given
neither kernel record: member 'name' is missing
neg each must be from 0 to 2147483647
EOF
	for tool in trace-stage trace-health kernel-map step-stats kernel-roofline overlap-sweep \
	    rank-skew trace-annotate; do
		args=
		[ $tool = overlap-sweep ] && args="--mapping /dev/null"
		[ $tool = trace-annotate ] && args="--trace-file $T/d.json -o $T/ann.json"
		while read -r f msg; do
			status 1 "$BIN/$tool" -q $args <"$T/$f.jsonl" 2>"$T/err" >"$T/out"
			has "$T/err" "$msg"
		done <"$T/want"
	done
	test ! -e "$T/ann.json"
}
check "references that do not resolve: refused by every reader (exit 1)" t_refused

# A stream in another layout (Python's json.dumps: spaces; jq -S: keys
# sorted; an escaped type) is read to the same kernels: its kernel_name and
# trace records count as well as ours.
chain() {	# chain FILE: the single-trace filters after trace-extract, late
	"$BIN/trace-stage" -q --late-stages <"$1" | "$BIN/trace-health" -q | "$BIN/kernel-map" -q |
	    "$BIN/step-stats" -q | "$BIN/kernel-roofline" -q --drop-events | "$BIN/fuse-detect" -q |
	    "$BIN/triage-render" -q -
}
t_layouts() {
	"$GEN" -s both -n 3 --streams 2 -o "$T/l.json"
	"$EX" -q "$T/l.json" >"$T/l.full"
	"$EX" -q --name-refs "$T/l.json" >"$T/l.refs"
	python3 -c 'import json, sys
for l in sys.stdin: print(json.dumps(json.loads(l)))' <"$T/l.refs" >"$T/l.py"
	jq -cS . "$T/l.refs" >"$T/l.sorted"
	sed 's/"type":"kernel_name"/"type":"kernel\\u005fname"/; s/"type":"trace"/"type":"tr\\u0061ce"/' \
	    "$T/l.refs" >"$T/l.esc"
	has "$T/l.esc" 'kernel\\u005fname'
	chain "$T/l.full" >"$T/want.md"
	for f in refs py sorted esc; do
		chain "$T/l.$f" >"$T/got.$f.md"
		same "$T/want.md" "$T/got.$f.md"
	done
	# two ranks' streams one after another, ids the same, names not: each rank its own
	"$GEN" -n 2 -l 2 --streams 2 --rank 0 --world 2 -o "$T/r0.json"
	"$GEN" -f vllm -n 2 -l 2 --streams 2 --rank 1 --world 2 -o "$T/r1.json"
	for r in 0 1; do
		"$EX" -q "$T/r$r.json" | "$BIN/trace-stage" -q >"$T/r$r.full"
		"$EX" -q --name-refs "$T/r$r.json" | "$BIN/trace-stage" -q --late-stages >"$T/r$r.refs"
		python3 -c 'import json, sys
for l in sys.stdin: print(json.dumps(json.loads(l)))' <"$T/r$r.refs" >"$T/r$r.py"
	done
	cat "$T/r0.full" "$T/r1.full" | "$BIN/rank-skew" -q --no-pass >"$T/skew.want"
	cat "$T/r0.refs" "$T/r1.py" | "$BIN/rank-skew" -q --no-pass >"$T/skew.got"
	same "$T/skew.want" "$T/skew.got"
	# no more kernel_name records than kernels may be (TRIAGE_MAX_KERNELS)
	status 1 env TRIAGE_MAX_KERNELS=1 "$BIN/trace-health" -q <"$T/l.refs" 2>"$T/err" >/dev/null
	has "$T/err" 'more kernel_name records than the limit of 1 (TRIAGE_MAX_KERNELS)'
}
check "other layouts of the same records, ranks one after another, the names' limit" t_layouts

done_testing
