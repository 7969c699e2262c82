#!/bin/sh
# triage --annotate FILE: the findings written into a copy of the analyzed
# trace (trace-annotate(1)), the same row ids in the report's JSON document
# and on the slices; one file per rank with --all-ranks, or a directory;
# the formal trace of a mapping/formal pair; the name checked before any
# work; and what it cannot be combined with.
. "$(dirname "$0")/lib.sh"
GEN=$TESTDIR/gen-trace
CHECK=$TESTDIR/annotate-check.py

"$GEN" -s both -n 3 -l 2 --graph -o "$T/t.json"
gzip -c "$T/t.json" >"$T/t.json.gz"

added() {	# added FILE: the findings' events, a line each
	gzip -dcf "$1" | jq -c '(.traceEvents | map(select(.name == "process_name" and
	    .args.name == "triage findings")) | .[0].pid) as $p | .traceEvents[] | select(.pid == $p)'
}

t_single() {
	"$TRIAGE" -q --input "$T/t.json.gz" --annotate "$T/a.json.gz" -f json -o "$T/r.json"
	gzip -t "$T/a.json.gz"
	eq ok "$(python3 "$CHECK" "$T/t.json.gz" "$T/a.json.gz" | cut -c1-2)"
	# the kernel table's rows and the top-kernel slices carry the same ids
	jq -r '.reports[0].tables[] | select(.table == "kernel") | .rows[].id' "$T/r.json" | sort -u >"$T/ids"
	added "$T/a.json.gz" | jq -r 'select(.ph == "X" and (.args.row | startswith("kernel-"))) | .args.row' |
	    sort -u >"$T/rows"
	[ -s "$T/rows" ]
	same "$T/ids" "$T/rows"
	# and the steps': every step row of the report is a slice
	jq -r '.reports[0].tables[] | select(.table == "step") | .rows[].id' "$T/r.json" | sort >"$T/ids"
	added "$T/a.json.gz" | jq -r 'select(.ph == "X" and (.args.row | startswith("step-"))) | .args.row' |
	    sort >"$T/rows"
	eq 3 "$(wc -l <"$T/rows" | tr -d ' ')" "step slices"
	same "$T/ids" "$T/rows"
	# graph escapes and the stage's idle gaps are there too
	added "$T/a.json.gz" | jq -r 'select(.ph == "M" and .name == "thread_name") | .args.name' >"$T/tracks"
	has "$T/tracks" '^Steps$'
	has "$T/tracks" '^Top kernels$'
	# the report itself is what it is without --annotate
	"$TRIAGE" -q --input "$T/t.json.gz" -f json -o "$T/r2.json"
	same "$T/r2.json" "$T/r.json"
	# and the annotated trace analyzes as the original did: the findings are
	# no kernels, CPU ops or markers (only the names and the event count differ)
	"$TRIAGE" -q --input "$T/t.json.gz" | sed "s#$T/t.json.gz#T#g; s#t.json.gz#T#g" |
	    sed 's/first [0-9]* events/first N events/' | grep -v 'skipped_events' >"$T/o.md"
	"$TRIAGE" -q --input "$T/a.json.gz" | sed "s#$T/a.json.gz#T#g; s#a.json.gz#T#g" |
	    sed 's/first [0-9]* events/first N events/' | grep -v 'skipped_events' >"$T/a.md"
	same "$T/o.md" "$T/a.md"
	# the records (-f jsonl) hold the ids the slices carry
	"$TRIAGE" -q --input "$T/t.json.gz" -f jsonl --annotate "$T/b.json" >"$T/rec"
	jq -r 'select(.id) | .id' "$T/rec" | sort -u >"$T/all"
	added "$T/b.json" | jq -r 'select(.ph == "X") | .args.row' | sort -u >"$T/used"
	eq '' "$(comm -13 "$T/all" "$T/used")" "slice rows that are no record's"
}
check 'one trace: the annotated copy, the same row ids in the JSON report and the slices' t_single

t_ranks() {
	d=$T/prof
	mkdir -p "$d"
	# rank 1 arrives 9 us late at every all-reduce, rank 0 waits for it
	"$GEN" -n 2 -l 2 --streams 2 --world 2 --rank 0 --comm-wait 9 -z -o "$d/run-TP-0.trace.json.gz"
	"$GEN" -n 2 -l 2 --streams 2 --world 2 --rank 1 --comm-late 9 -z -o "$d/run-TP-1.trace.json.gz"
	"$TRIAGE" -q --all-ranks --input "$d" --annotate "$T/ranks.json.gz" >/dev/null
	for r in 0 1; do
		python3 "$CHECK" "$d/run-TP-$r.trace.json.gz" "$T/ranks.rank$r.json.gz" >/dev/null
	done
	eq 'Collectives: waiting' "$(added "$T/ranks.rank0.json.gz" |
	    jq -r 'select(.ph == "M" and .name == "thread_name" and (.args.name | startswith("Coll"))) | .args.name' | sort -u)"
	eq 'waiting for rank 1: custom-all-reduce' "$(added "$T/ranks.rank0.json.gz" |
	    jq -r 'select(.ph == "X" and (.args.row | startswith("collective-"))) | .name' | sort -u)"
	eq 'last to arrive: custom-all-reduce' "$(added "$T/ranks.rank1.json.gz" |
	    jq -r 'select(.ph == "X" and (.args.row | startswith("collective-"))) | .name' | sort -u)"
	# a directory: one file per rank, named by the trace
	"$TRIAGE" -q --all-ranks --input "$d" --annotate "$T/out/" >/dev/null
	gzip -t "$T/out/run-TP-0.trace.annotated.json.gz"
	gzip -t "$T/out/run-TP-1.trace.annotated.json.gz"
	# a rank's name is made here: a link planted at one refuses every rank's file
	mkdir -p "$T/lk"
	echo victim >"$T/victim"
	ln -s ../victim "$T/lk/r.rank1.json"
	status 2 "$TRIAGE" -q --all-ranks --input "$d" --annotate "$T/lk/r.json" >/dev/null 2>"$T/err"
	has "$T/err" "cannot write '$T/lk/r.rank1.json': it is a symbolic link"
	eq victim "$(cat "$T/victim")"
	eq r.rank1.json "$(ls -A "$T/lk")" "files written"
	# one planted after that check, while rank 0 is annotated, is refused too
	rm -f "$T/lk/r.rank1.json"
	mkdir -p "$T/racebin"
	for f in "$BIN"/*; do ln -sf "$f" "$T/racebin/"; done
	rm -f "$T/racebin/trace-annotate"
	printf '#!/bin/sh
ln -s ../victim %s/lk/r.rank1.json 2>/dev/null
exec %s/trace-annotate "$@"
' \
	    "$T" "$BIN" >"$T/racebin/trace-annotate"
	chmod +x "$T/racebin/trace-annotate"
	status 2 env TRIAGE_BINDIR="$T/racebin" "$TRIAGE" -q --all-ranks --input "$d" \
	    --annotate "$T/lk/r.json" >/dev/null 2>"$T/err"
	has "$T/err" "cannot write '$T/lk/r.rank1.json': it is a symbolic link"
	eq victim "$(cat "$T/victim")"
}
check '--all-ranks: one file per rank with its side of every collective; a directory' t_ranks

t_dual() {
	"$GEN" -s both -n 3 -l 2 -o "$T/m.json"
	"$TRIAGE" -q --mapping-input "$T/m.json" --formal-input "$T/t.json" --annotate "$T/f.json" \
	    -f jsonl >"$T/rec"
	python3 "$CHECK" "$T/t.json" "$T/f.json" >/dev/null
	# the exposed intervals of every overlap row with spans
	jq -r 'select(.type == "overlap_exposed" and (.spans | length) > 0) | .row' "$T/rec" | sort -u >"$T/want"
	[ -s "$T/want" ]
	added "$T/f.json" | jq -r 'select(.ph == "X" and (.args.row | startswith("overlap-"))) | .args.row' |
	    sort -u >"$T/got"
	same "$T/want" "$T/got"
}
check 'mapping/formal: the formal trace, with the overlap rows exposed intervals' t_dual

t_refused() {
	status 2 "$TRIAGE" --input "$T/t.json" --annotate "$T/no/such/dir/a.json" 2>"$T/err"
	has "$T/err" "argument\\|--annotate '$T/no/such/dir/a.json'"
	status 2 "$TRIAGE" --input "$T/t.json" --annotate - 2>"$T/err"
	status 2 "$TRIAGE" --annotate "$T/x.json" "$T/t.json" 2>"$T/err"
	has "$T/err" 'not with batch paths or --baseline'
	status 2 "$TRIAGE" --baseline "$T/t.json" --input "$T/t.json" --annotate "$T/x.json" 2>"$T/err"
	status 2 "$TRIAGE" --compat reference --input "$T/t.json" --annotate "$T/x.json" 2>"$T/err"
	has "$T/err" 'not a mode of the reference'
	[ ! -e "$T/x.json" ]
	"$TRIAGE" --help | grep -q -- '--annotate FILE'
}
check '--annotate: its name checked first; not with batch, --baseline or --compat reference' t_refused
done_testing
