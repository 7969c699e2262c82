#!/bin/sh
# The annotated trace on real traces (issue 29): for every trace of
# SHARED_DIR/corpus/traces (single-trace flow), every pair of
# SHARED_DIR/corpus/expected/pairs (mapping/formal flow, the formal trace
# annotated) and every rank of SHARED_DIR/ranks (--all-ranks, one file per
# rank), `triage --annotate` writes a trace that tests/annotate-check.py
# accepts: it parses as JSON, holds the original's bytes in order and its
# events, count and content, and its added events follow the Trace Event
# Format (phases, pid and tids, ts, dur, track metadata, no overlapping
# complete events on one track, a report row id in each slice).  Then, for
# each finding kind, the slices agree with the records they came from: one
# step slice per step record, the top kernel rows' instances as many as
# the kernel records of those rows, each row id one of the report's.
# Usage: sh tests/corpus-annotate.sh SHARED_DIR
shared=${1:-../shared}
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${TRIAGE_BINDIR:-$top/build/bin}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/corpus-annotate.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

ok() {	# ok DESCRIPTION EXPECTED ACTUAL
	if [ "$2" = "$3" ]; then
		pass=$((pass + 1))
	else
		echo "not ok - $1: expected '$2', got '$3'"
		fail=$((fail + 1))
	fi
}

# The added events of an annotated trace, one JSON object a line.
added() {
	gzip -dcf "$1" | jq -c '(if type == "array" then . else .traceEvents end)
	    | (map(select(.ph == "M" and .name == "process_name" and .args.name == "triage findings"))
	       | .[0].pid) as $p | .[] | select(.pid == $p and $p != null)'
}

# check NAME ORIGINAL ANNOTATED RECORDS: the format, then the findings against the records.
check() {
	r=$(python3 "$top/tests/annotate-check.py" "$2" "$3" --summary 2>&1)
	case $r in
	ok*) pass=$((pass + 1)); echo "ok - $1: ${r#ok }" ;;
	*) echo "not ok - $1: $r"; fail=$((fail + 1)); return ;;
	esac
	added "$3" >"$tmp/added"
	t=$(jq -r 'select(.type == "trace") | .t' "$4" | head -n 1)
	ok "$1: a step slice per step record" \
	    "$(jq -c --argjson t "$t" 'select(.type == "step" and .t == $t) | .id' "$4" | sort)" \
	    "$(jq -c 'select(.ph == "X" and (.args.row // "" | startswith("step-"))) | .args.row' \
	        "$tmp/added" | sort)"
	# the top rows (shown, ten a stage): a slice per launch the row counts
	want=$(jq -r -s --argjson t "$t" '[.[] | select(.type == "kernel_row" and .t == $t and .shown)]
	    | group_by(.stage) | map(.[:10]) | add // [] | .[] | "\(.id) \(.launches)"' "$4" | sort)
	got=$(jq -r 'select(.ph == "X" and (.args.row // "" | startswith("kernel-"))) | .args.row' \
	    "$tmp/added" | sort | uniq -c | awk '{ print $2, $1 }' | sort)
	ok "$1: a slice per launch of the top kernel rows" "$want" "$got"
	# graph escapes: a slice per eager launch step-stats counted
	ok "$1: a slice per eager launch of the graph_escape rows" \
	    "$(jq -s --argjson t "$t" '[.[] | select(.type == "graph_escape" and .t == $t) | .launches] | add // 0' "$4")" \
	    "$(jq -s '[.[] | select(.ph == "X" and (.args.row // "" | startswith("escape-")))] | length' "$tmp/added")"
	# idle gaps: the host-bound part and the rest of each idle_gap record, as slices
	ok "$1: the idle_gap records' parts as slices" \
	    "$(jq -s --argjson t "$t" '[.[] | select(.type == "idle_gap" and .t == $t)
	        | ((if (.host_us // 0) > 0 then 1 else 0 end) + (if .dur - (.host_us // 0) > 0 then 1 else 0 end))] | add // 0' "$4")" \
	    "$(jq -s '[.[] | select(.ph == "X" and (.args.gap // null) != null)] | length' "$tmp/added")"
	# fuse opportunities: a slice per launch of their evidence kernels' rows
	ok "$1: a slice per launch of the fuse rows' evidence kernels" \
	    "$(jq -s --argjson t "$t" '
	        ([.[] | select(.type == "kernel_row" and .t == $t)] | map({key: (.stage + "\u0001" + .kernel), value: .launches}) | from_entries) as $l
	        | [.[] | select(.type == "fuse_row" and .t == $t and .status != "in use") as $f
	           | ($f.evidence_kernels // [])[] | $l[$f.stage + "\u0001" + .] // 0] | add // 0' "$4")" \
	    "$(jq -s '[.[] | select(.ph == "X" and (.args.row // "" | startswith("fuse-")))] | length' "$tmp/added")"
	# every row id is one of the records' ids
	jq -r 'select(.id != null) | .id' "$4" | sort -u >"$tmp/ids"
	jq -r 'select(.ph == "X") | .args.row' "$tmp/added" | sort -u >"$tmp/rows"
	ok "$1: every row id is a record's" "" "$(comm -13 "$tmp/ids" "$tmp/rows" | head -3)"
}

if [ ! -d "$shared/corpus/traces" ]; then
	echo "annotate corpus: no $shared/corpus/traces, skipped"
	exit 0
fi
for f in "$shared"/corpus/traces/*; do
	name=$(basename "$f")
	"$top/scripts/triage" -q --format jsonl --input "$f" --annotate "$tmp/$name.ann.json.gz" \
	    >"$tmp/rec" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		# a trace the triage refuses (exit 3: nothing to analyze) has no annotation
		ok "$name: triage exit status" 0 "$rc ($(head -c 200 "$tmp/err"))"
		continue
	fi
	check "$name" "$f" "$tmp/$name.ann.json.gz" "$tmp/rec"
done
for p in "$shared"/corpus/expected/pairs/*.md; do
	[ -f "$p" ] || continue
	b=$(basename "$p" .md)
	m=$(ls "$shared"/corpus/traces/"${b%%__*}".* | head -n 1)
	fo=$(ls "$shared"/corpus/traces/"${b#*__}".* | head -n 1)
	"$top/scripts/triage" -q --format jsonl --mapping-input "$m" --formal-input "$fo" \
	    --annotate "$tmp/pair.json" >"$tmp/rec" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		ok "$b: triage exit status" 0 "$rc ($(head -c 200 "$tmp/err"))"
		continue
	fi
	check "pair $b" "$fo" "$tmp/pair.json" "$tmp/rec"
	# overlap rows: every exposed slice inside one of its overlap_exposed record's spans
	ok "pair $b: exposed slices are the overlap_exposed spans" \
	    "$(jq -r 'select(.type == "overlap_exposed") | "\(.row) \(.spans | length)"' "$tmp/rec" |
	        awk '$2 > 0' | sort)" \
	    "$(jq -r 'select(.ph == "X" and (.args.row // "" | startswith("overlap-"))) | .args.row' \
	        "$tmp/added" | sort | uniq -c | awk '{ print $2, $1 }' | sort)"
done
if [ -d "$shared/ranks" ]; then
	for d in "$shared"/ranks/*/; do
		[ -d "$d" ] || continue
		set="$(basename "$d")"
		mkdir -p "$tmp/$set"
		"$top/scripts/triage" -q --all-ranks --format jsonl --input "$d" \
		    --annotate "$tmp/$set/" >"$tmp/rec" 2>"$tmp/err"
		rc=$?
		ok "$set: triage --all-ranks exit status" 0 "$rc$(head -c 200 "$tmp/err")"
		n=0
		for f in "$d"*; do
			a=$tmp/$set/$(basename "$f" | sed 's/\.json\.gz$//; s/\.json$//').annotated.json.gz
			[ -f "$a" ] || a=${a%.gz}
			if [ ! -f "$a" ]; then
				ok "$set: an annotated trace for $(basename "$f")" yes no
				continue
			fi
			n=$((n + 1))
			r=$(python3 "$top/tests/annotate-check.py" "$f" "$a" --summary 2>&1)
			case $r in
			ok*) pass=$((pass + 1)); echo "ok - $set $(basename "$f"): ${r#ok }" ;;
			*) echo "not ok - $set $(basename "$f"): $r"; fail=$((fail + 1)) ;;
			esac
			added "$a" >"$tmp/added"
			# a collective slice on each rank for every collective it waited in or came last to
			ok "$set $(basename "$f"): collective slices" yes \
			    "$(jq -s 'map(select(.ph == "X" and (.args.row // "" | startswith("collective-"))))
			        | if length > 0 then "yes" else "none" end' -r "$tmp/added")"
		done
	done
fi
echo "annotate corpus: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
