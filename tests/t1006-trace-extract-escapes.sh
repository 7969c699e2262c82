#!/bin/sh
# \uXXXX escapes in member names and in the "ph" value (issue 21): JSON that
# means the same gives the same records and the same report.  Once an
# escaped "name" merged every kernel into one empty row at 100 % and an
# escaped "dur" gave exit 3.  Also the record reader, server_args.json and
# the pattern catalog compare names decoded.
. "$(dirname "$0")/lib.sh"

GEN=$TESTDIR/gen-trace

# Every member name the extraction reads, and "ph", spelled with escapes.
escape_all() {
	sed -e 's/"name": /"n\\u0061me": /g' -e 's/"ph": "X"/"\\u0070h": "\\u0058"/g' \
	    -e 's/"ph": "M"/"p\\u0068": "\\u004d"/g' -e 's/"ph": /"\\u0070\\u0068": /g' \
	    -e 's/"cat": /"c\\u0061t": /g' \
	    -e 's/"dur": /"d\\u0075r": /g' -e 's/"ts": /"\\u0074s": /g' \
	    -e 's/"pid": /"pi\\u0064": /g' -e 's/"tid": /"\\u0074id": /g' \
	    -e 's/"args": /"\\u0061rgs": /g' -e 's/"External id": /"External\\u0020id": /g' \
	    -e 's/"correlation": /"c\\u006frrelation": /g' -e 's/"stream": /"s\\u0074ream": /g' \
	    -e 's/"traceEvents": /"trace\\u0045vents": /'
}

# the same file name in two folders: reports name the trace
mkdir -p "$T/p" "$T/e"
"$GEN" -n 2 -s both --streams 2 -o "$T/p/t.json"
escape_all <"$T/p/t.json" >"$T/e/t.json"
ln -s p/t.json "$T/plain.json"
ln -s e/t.json "$T/esc.json"

t_same_records() {
	# the escapes are really there: no plain name left on an event line
	hasnt "$T/esc.json" '^  {.*"name": '
	hasnt "$T/esc.json" '"ph": '
	has "$T/esc.json" '"d\\u0075r": '
	"$BIN/trace-extract" -q "$T/plain.json" | sed "s|$T/p/t.json|T|g" >"$T/plain.rec"
	"$BIN/trace-extract" -q "$T/esc.json" | sed "s|$T/e/t.json|T|g" >"$T/esc.rec"
	same "$T/plain.rec" "$T/esc.rec"
	eq 16 "$(grep -c '"type":"kernel"' "$T/esc.rec")" "kernels"
}
check "an all-escaped trace gives the records of the plain one" t_same_records

t_same_report() {
	"$TRIAGE" -q --input "$T/p/t.json" | sed "s|$T/p/|D/|g" >"$T/plain.md"
	"$TRIAGE" -q --input "$T/e/t.json" | sed "s|$T/e/|D/|g" >"$T/esc.md"
	same "$T/plain.md" "$T/esc.md"
	has "$T/esc.md" 'sm90_xmma_gemm'
}
check "and the same report" t_same_report

t_one_name() {
	# only "name" escaped, in the kernels alone: the case that merged every row
	mkdir -p "$T/n" "$T/d"
	sed '/"cat": "kernel"/s/"name": /"n\\u0061me": /' "$T/p/t.json" >"$T/n/t.json"
	has "$T/n/t.json" '"cat": "kernel", "n\\u0061me"'
	"$BIN/trace-extract" -q "$T/n/t.json" | jq -r 'select(.type == "kernel") | .name' |
	    sort -u >"$T/names"
	"$BIN/trace-extract" -q "$T/p/t.json" | jq -r 'select(.type == "kernel") | .name' |
	    sort -u >"$T/want"
	same "$T/want" "$T/names"
	eq 5 "$(wc -l <"$T/names" | tr -d ' ')" "distinct kernel names"
	# only "dur" escaped: once exit 3 with a self-contradicting message
	sed 's/"dur": /"d\\u0075r": /g' "$T/p/t.json" >"$T/d/t.json"
	"$TRIAGE" -q --input "$T/d/t.json" | sed "s|$T/d/|D/|g" >"$T/dur.md"
	"$TRIAGE" -q --input "$T/p/t.json" | sed "s|$T/p/|D/|g" >"$T/plain.md"
	same "$T/plain.md" "$T/dur.md"
}
check "an escaped name or dur alone: the numbers of the plain trace" t_one_name

t_records() {
	# escaped member names and type in a record stream read like plain ones
	"$BIN/trace-extract" -q "$T/plain.json" | "$BIN/trace-stage" -q >"$T/staged"
	sed -e 's/"type":"kernel"/"\\u0074ype":"k\\u0065rnel"/' -e 's/"name":/"n\\u0061me":/' \
	    -e 's/,"dur":/,"d\\u0075r":/' "$T/staged" >"$T/staged.esc"
	has "$T/staged.esc" '"k\\u0065rnel"'
	# kernel-map reads the kernels and writes rows and sites from them
	"$BIN/kernel-map" -q "$T/staged" | grep '"type":"\(kernel_row\|site\)"' >"$T/km.plain"
	"$BIN/kernel-map" -q "$T/staged.esc" | grep '"type":"\(kernel_row\|site\)"' >"$T/km.esc"
	[ -s "$T/km.plain" ]
	same "$T/km.plain" "$T/km.esc"
}
check "records with escaped names and type decode like plain ones" t_records

t_server_args() {
	mkdir -p "$T/prof"
	cp "$T/plain.json" "$T/prof/t.trace.json"
	printf '{"model_p\\u0061th": "org/Model-7B", "tp_\\u0073ize": 2}' >"$T/prof/server_args.json"
	"$BIN/trace-extract" -q "$T/prof" | jq -c 'select(.type == "input") | [.model, .tp_size]' >"$T/got"
	eq '["org/Model-7B",2]' "$(cat "$T/got")"
}
check "server_args.json with escaped names" t_server_args

t_catalog() {
	"$BIN/trace-extract" -q "$T/plain.json" | "$BIN/trace-stage" -q | "$BIN/kernel-map" -q >"$T/rows"
	printf '%s\n' '{"pattern": "norm-fuse", "active_keywords": ["rmsnorm"], "candidate_path": ["x.py"]}' >"$T/p1"
	printf '%s\n' '{"p\u0061ttern": "norm-fuse", "active_k\u0065ywords": ["rmsnorm"], "c\u0061ndidate_path": ["x.py"]}' >"$T/p2"
	"$BIN/fuse-detect" -q --patterns "$T/p1" "$T/rows" | grep fuse_row >"$T/f1"
	"$BIN/fuse-detect" -q --patterns "$T/p2" "$T/rows" | grep fuse_row >"$T/f2"
	same "$T/f1" "$T/f2"
	has "$T/f1" '"pattern":"norm-fuse"'
}
check "a pattern catalog with escaped names" t_catalog

t_spooled_names() {
	# kernel names wait in the spool as references to the trace's names
	# (issue 30); each comes back as it was, control bytes and quotes too,
	# in a run of two traces and through the spool's temporary file
	mkdir -p "$T/sp"
	for i in 1 2; do
		printf '{"traceEvents": [\n' >"$T/sp/t$i.json"
		for n in 'void \u0001at::native::kernel<\"q\">(int)' 'short_k' "kernel_of_trace_${i}_with_a_long_name" \
		    'void \u0001at::native::kernel<\"q\">(int)'; do
			printf '{"ph": "X", "cat": "kernel", "name": "%s", "pid": 0, "tid": 7, "ts": %d, "dur": 2, "args": {"stream": 7}},\n' \
			    "$n" "$((1000 + i * 10))"
		done >>"$T/sp/t$i.json"
		printf '{"ph": "X", "cat": "kernel", "name": "\\u0001", "pid": 0, "tid": 7, "ts": 1100, "dur": 2, "args": {"stream": 7}}\n]}\n' >>"$T/sp/t$i.json"
	done
	TRIAGE_SPOOL_MEM=64 "$BIN/trace-extract" -q "$T/sp/t1.json" "$T/sp/t2.json" |
	    jq -r 'select(.type == "kernel") | [.t, .name] | @json' >"$T/sp/got"
	for i in 0 1; do
		printf '[%d,"void \\u0001at::native::kernel<\\"q\\">(int)"]\n[%d,"short_k"]\n' $i $i
		printf '[%d,"kernel_of_trace_%d_with_a_long_name"]\n' $i $((i + 1))
		printf '[%d,"void \\u0001at::native::kernel<\\"q\\">(int)"]\n[%d,"\\u0001"]\n' $i $i
	done >"$T/sp/want"
	same "$T/sp/want" "$T/sp/got"
	# and byte for byte what the spool held in memory gives
	"$BIN/trace-extract" -q "$T/sp/t1.json" "$T/sp/t2.json" >"$T/sp/mem"
	TRIAGE_SPOOL_MEM=64 "$BIN/trace-extract" -q "$T/sp/t1.json" "$T/sp/t2.json" >"$T/sp/file"
	same "$T/sp/mem" "$T/sp/file"
	hasnt "$T/sp/file" "$(printf '\001')"
}
check "kernel names kept aside in the spool come back whole" t_spooled_names

done_testing
