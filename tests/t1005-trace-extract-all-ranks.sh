#!/bin/sh
# trace-extract --all-ranks, --rank N and --list-ranks: every rank of a
# profile directory (newest trace per rank and stage, in rank order), one
# rank alone, the ranks found; the default still keeps the lowest rank only.
. "$(dirname "$0")/lib.sh"

GEN=$TESTDIR/gen-trace
EX=$BIN/trace-extract

# the rank in the file name only (no distributedInfo), as the older traces have it
"$GEN" -n 1 -l 1 -z --no-dist-info -o "$T/proto.json.gz"

put() {	# put FILE EPOCH: a copy of the prototype with that mtime
	mkdir -p "$(dirname "$1")"
	cp "$T/proto.json.gz" "$1"
	touch -d "@$2" "$1"
}
names() {	# names ARGS...: "rank:file" of each trace record, space separated
	"$EX" -q "$@" | jq -r 'select(.type == "trace") | "\(.rank):\(.path | split("/") | last)"' |
	    tr '\n' ' ' | sed 's/ $//'
}

d=$T/tp
put "$d/p-TP-2.trace.json.gz" 1000
put "$d/p-TP-0.trace.json.gz" 1000
put "$d/old-TP-0.trace.json.gz" 500
put "$d/p-TP-1.trace.json.gz" 1000
put "$d/merged-p.trace.json.gz" 2000
put "$d/notes.trace.json.gz" 2000

t_default_lowest() {
	eq "0:p-TP-0.trace.json.gz" "$(names "$d")"
}
check "without --all-ranks only the lowest rank is read" t_default_lowest

t_all_ranks() {
	eq "0:p-TP-0.trace.json.gz 1:p-TP-1.trace.json.gz 2:p-TP-2.trace.json.gz" \
	    "$(names --all-ranks "$d")"
	# one input record listing them, trace indexes 0, 1, 2
	eq 3 "$("$EX" -q --all-ranks "$d" | jq -s '[.[] | select(.type == "input")][0].traces | length')"
	eq "0 1 2" "$("$EX" -q --all-ranks "$d" | jq -r 'select(.type == "trace") | .t' | tr '\n' ' ' |
	    sed 's/ $//')"
}
check "--all-ranks: the newest trace of every rank, in rank order" t_all_ranks

t_unranked_warned() {
	"$EX" --all-ranks "$d" >/dev/null 2>"$T/err"
	has "$T/err" "warning: 1 trace under '.*/tp' names no rank and is left out"
}
check "--all-ranks warns about the trace that names no rank" t_unranked_warned

t_rank_one() {
	eq "1:p-TP-1.trace.json.gz" "$(names --rank 1 "$d")"
	eq '["p-TP-1.trace.json.gz"]' "$("$EX" -q --rank 1 "$d" |
	    jq -c 'select(.type == "input") | .traces | map(split("/") | last)')"
	status 3 "$EX" --rank 7 "$d" >"$T/out" 2>"$T/err"
	has "$T/err" "no trace of rank 7 under '.*/tp' (ranks found: 0, 1, 2)"
	[ ! -s "$T/out" ]
	# a file operand must name the rank
	eq "2:p-TP-2.trace.json.gz" "$(names --rank 2 "$d/p-TP-2.trace.json.gz")"
	status 3 "$EX" --rank 1 "$d/p-TP-2.trace.json.gz" >/dev/null 2>&1
}
check "--rank N: that rank's traces only; exit 3 for a rank not there" t_rank_one

t_list_ranks() {
	eq "0 1 2" "$("$EX" --list-ranks "$d" | tr '\n' ' ' | sed 's/ $//')"
	mkdir -p "$T/norank"
	put "$T/norank/a.trace.json.gz" 1000
	status 3 "$EX" --list-ranks "$T/norank" 2>"$T/err"
	has "$T/err" "no trace under '.*/norank' names a rank"
	# 18 digits are a rank; 19 or more no rank at all (cut, they would name another)
	mkdir -p "$T/long"
	put "$T/long/rank99999999999999999999999.json.gz" 1000
	put "$T/long/p-TP-1234567890123456789012.trace.json.gz" 1000
	put "$T/long/rank_123456789012345678.json.gz" 1000
	eq "123456789012345678" "$("$EX" --list-ranks "$T/long" 2>"$T/err")"
	has "$T/err" "2 traces under '.*/long' name no rank"
}
check "--list-ranks prints the ranks, one a line" t_list_ranks

t_stages_per_rank() {
	s=$T/staged
	put "$s/prefill/x-TP-0.trace.json.gz" 1000
	put "$s/prefill/x-TP-1.trace.json.gz" 1000
	put "$s/decode/y-TP-0.trace.json.gz" 1000
	put "$s/decode/z-TP-0.trace.json.gz" 3000
	put "$s/decode/y-TP-1.trace.json.gz" 1000
	eq "0:x-TP-0.trace.json.gz 0:z-TP-0.trace.json.gz 1:x-TP-1.trace.json.gz 1:y-TP-1.trace.json.gz" \
	    "$(names --all-ranks "$s")"
	eq "extend decode extend decode" "$("$EX" -q --all-ranks "$s" |
	    jq -r 'select(.type == "trace") | .stage' | tr '\n' ' ' | sed 's/ $//')"
}
check "stage folders: the newest trace per rank and stage" t_stages_per_rank

t_dashed_rank_names() {
	v=$T/vllm
	put "$v/w-rank-1.1714.pt.trace.json.gz" 1000
	put "$v/w-rank-0.1714.pt.trace.json.gz" 1000
	put "$v/w-rank-10.1714.pt.trace.json.gz" 1000
	# the reference's rule knows no "-rank-N": the default keeps the newest file
	eq ":w-rank-10.1714.pt.trace.json.gz" "$("$EX" -q "$v" |
	    jq -r 'select(.type == "trace") | "\(.rank // ""):\(.path | split("/") | last)"')"
	eq "0:w-rank-0.1714.pt.trace.json.gz 1:w-rank-1.1714.pt.trace.json.gz 10:w-rank-10.1714.pt.trace.json.gz" \
	    "$(names --all-ranks "$v")"
	eq "0 1 10" "$("$EX" --list-ranks "$v" | tr '\n' ' ' | sed 's/ $//')"
}
check "all-ranks modes read vLLM's -rank-N names" t_dashed_rank_names

t_no_rank_names() {
	"$EX" --all-ranks "$T/norank" >"$T/out" 2>"$T/err"
	eq 1 "$(jq -s '[.[] | select(.type == "trace")] | length' "$T/out")"
	has "$T/err" "warning: no trace under '.*/norank' names a rank: analyzing it as one rank"
}
check "--all-ranks on traces without rank names: one rank, with a warning" t_no_rank_names

# Ranks from the traces' own distributedInfo (issue 25): file names that
# carry none, and a name whose number is not the rank.
t_dist_ranks() {
	di=$T/dist
	mkdir -p "$di"
	"$GEN" -n 1 -l 1 --rank 1 --world 2 -o "$di/trace1.json"
	"$GEN" -n 1 -l 1 --rank 0 --world 2 -o "$di/trace0.json"
	touch -d @1000 "$di/trace0.json"
	touch -d @2000 "$di/trace1.json"
	eq "0 1" "$("$EX" --list-ranks "$di" | tr '\n' ' ' | sed 's/ $//')"
	eq "0:trace0.json 1:trace1.json" "$(names --all-ranks "$di")"
	eq '0 trace 2|1 trace 2' "$("$EX" -q --all-ranks "$di" |
	    jq -r 'select(.type == "trace") | "\(.rank) \(.rank_source) \(.world_size)"' | paste -sd '|')"
	eq "1:trace1.json" "$(names --rank 1 "$di")"
	# the default: the lowest rank, not the newest file, and a note of how many
	eq "0:trace0.json" "$(names "$di")"
	has_text "$("$EX" -q "$di" | jq -r 'select(.type == "note" and .id == "ranks_analyzed") | .text')" \
	    "Rank 0 of 2 analyzed"
	# --compat reference reads file names only, as the reference: the newest file
	eq ":trace1.json" "$("$EX" -q --compat reference "$di" |
	    jq -r 'select(.type == "trace") | "\(.rank // ""):\(.path | split("/") | last)"')"
}
check "ranks from distributedInfo: names without a rank, --list-ranks, --all-ranks, the default" t_dist_ranks

t_dist_beats_name() {
	# vLLM names a TP8 run's trace "..._tp8_..."; the file is rank 0 of 8
	"$GEN" -n 1 -l 1 --rank 0 --world 8 -o "$T/llama_tp8_run.pt.trace.json"
	eq '0 trace 8' "$("$EX" -q "$T/llama_tp8_run.pt.trace.json" |
	    jq -r 'select(.type == "trace") | "\(.rank) \(.rank_source) \(.world_size)"')"
	"$GEN" -n 1 -l 1 --no-dist-info -o "$T/llama_tp8_old.pt.trace.json"
	eq '8 name null' "$("$EX" -q "$T/llama_tp8_old.pt.trace.json" |
	    jq -r 'select(.type == "trace") | "\(.rank) \(.rank_source) \(.world_size)"')"
}
check "a trace's distributedInfo rank beats the number in its file name" t_dist_beats_name

# A distributedInfo that cannot be (rank 5 of 2, a rank that is no number)
# is warned of and not believed: the file name's rank, if any, instead.
t_dist_impossible() {
	"$GEN" -n 1 -l 1 --rank 5 --world 2 -o "$T/w_tp1.json"
	eq '1 name null' "$("$EX" "$T/w_tp1.json" 2>"$T/err" |
	    jq -r 'select(.type == "trace") | "\(.rank) \(.rank_source) \(.world_size)"')"
	has "$T/err" "distributedInfo says rank 5 in a world of 2 ranks, which cannot be: both ignored"
	sed 's/"rank": *5/"rank": "x"/' "$T/w_tp1.json" >"$T/w_tp1s.json"
	"$EX" "$T/w_tp1s.json" 2>"$T/err" >/dev/null
	has "$T/err" "distributedInfo's rank is no rank (a whole number from 0): ignored"
	# a rank from a file name orders with those from distributedInfo by its number
	di=$T/mixrank
	mkdir -p "$di"
	"$GEN" -n 1 -l 1 --rank 0 --world 2 -o "$di/w0.json"
	"$GEN" -n 1 -l 1 --rank 9 --world 2 -o "$di/w_tp1.json"
	eq "0 1" "$("$EX" -q --list-ranks "$di" 2>/dev/null | tr '\n' ' ' | sed 's/ $//')"
	eq w0.json "$("$EX" -q "$di" 2>/dev/null | jq -r 'select(.type == "trace") | .path | split("/") | last')"
}
check "an impossible distributedInfo is warned of and not believed" t_dist_impossible

t_dropped_files() {
	m=$T/mixed
	mkdir -p "$m/a/deep" "$m/b"
	"$GEN" -f sglang -n 1 -l 1 -o "$m/a/deep/s.trace.json"
	"$GEN" -f vllm -n 1 -l 1 -o "$m/b/v.trace.json"
	touch -d @1000 "$m/a/deep/s.trace.json"
	touch -d @2000 "$m/b/v.trace.json"
	"$EX" "$m" >"$T/out" 2>"$T/err"
	eq v.trace.json "$(jq -r 'select(.type == "trace") | .path | split("/") | last' "$T/out")"
	# the framework is the analyzed trace's, not the dropped one's
	eq vllm "$(jq -r 'select(.type == "input") | .framework' "$T/out")"
	eq '1 trace file under the input was not analyzed: 1 in another directory than the one analyzed (a/deep/s.trace.json). Name a trace file, or a directory holding only the traces of one run, to analyze another.' \
	    "$(jq -r 'select(.type == "note" and .id == "traces_not_analyzed") | .text' "$T/out")"
	has "$T/err" "warning: '$m': 1 trace file under the input was not analyzed"
	# an older trace of the same stage beside the newest
	cp "$m/b/v.trace.json" "$m/b/w.trace.json"
	touch -d @500 "$m/b/w.trace.json"
	has_text "$("$EX" -q "$m" | jq -r 'select(.type == "note" and .id == "traces_not_analyzed") | .text')" \
	    '2 trace files under the input were not analyzed: 1 in another directory than the one analyzed (a/deep/s.trace.json); 1 older than a trace of the same rank and stage (b/w.trace.json)'
	# nothing dropped: no note; --compat reference: never
	eq 0 "$("$EX" -q "$m/a" | grep -c traces_not_analyzed)"
	eq 0 "$("$EX" -q --compat reference "$m" | grep -c traces_not_analyzed)"
}
check "discovery says which trace files it left out, and why" t_dropped_files

# A candidate that does not read (a truncated gzip, JSON cut short: a capture
# still writing) is left out as the reference leaves it, but said, so that an
# older good trace beside it is not analyzed without a word; with nothing
# readable left, exit 1 and why, not "no trace files".
t_damaged_files() {
	m=$T/dmg
	mkdir -p "$m"
	"$GEN" -f sglang -n 1 -l 1 -o "$m/a.json"
	touch -d @1000 "$m/a.json"
	"$GEN" -f sglang -n 1 -l 1 -o "$T/whole.json"
	gzip -c "$T/whole.json" >"$T/whole.json.gz"
	head -c "$(($(wc -c <"$T/whole.json.gz") / 2))" "$T/whole.json.gz" >"$m/b.json.gz"
	printf '{"traceEvents": [\n' >"$m/c.json"
	"$EX" "$m" >"$T/out" 2>"$T/err"
	eq a.json "$(jq -r 'select(.type == "trace") | .path | split("/") | last' "$T/out")"
	eq '2 trace files under the input were not analyzed: 2 unreadable (truncated or malformed: still being written, or damaged) (c.json, b.json.gz). Name a trace file, or a directory holding only the traces of one run, to analyze another.' \
	    "$(jq -r 'select(.type == "note" and .id == "traces_not_analyzed") | .text' "$T/out")"
	has "$T/err" "warning: left out of the traces to analyze: '$m/b.json.gz': truncated gzip stream"
	has "$T/err" "warning: left out of the traces to analyze: '$m/c.json': truncated JSON"
	rm "$m/a.json"
	status 1 "$EX" -q "$m" >"$T/out" 2>"$T/err"
	has "$T/err" "no readable trace file under '$m': 2 left out as damaged (above)"
	eq 0 "$(grep -c . "$T/out")" "records after the failure"
	# a newer damaged trace in another folder than the one analyzed: said too
	mkdir -p "$T/dm2/old" "$T/dm2/new"
	"$GEN" -f sglang -n 1 -l 1 -o "$T/dm2/old/a.json"
	touch -d @1000 "$T/dm2/old/a.json"
	cp "$m/b.json.gz" "$T/dm2/new/b.json.gz"
	has_text "$("$EX" -q "$T/dm2" | jq -r 'select(.type == "note" and .id == "traces_not_analyzed") | .text')" \
	    '1 unreadable (truncated or malformed: still being written, or damaged) (new/b.json.gz)'
}
check "damaged candidates are left out aloud; none readable is exit 1" t_damaged_files

# trace-annotate's copy written into the profile directory is no newer
# capture: left out, said; alone it is analyzed; --compat reference: as the
# reference, by its time.
t_annotated_copy() {
	m=$T/ann
	mkdir -p "$m"
	"$GEN" -f sglang -n 1 -l 1 -o "$m/t.json"
	touch -d @1000 "$m/t.json"
	cp "$m/t.json" "$m/t.annotated.json"
	eq t.json "$("$EX" -q "$m" | jq -r 'select(.type == "trace") | .path | split("/") | last')"
	has_text "$("$EX" -q "$m" | jq -r 'select(.type == "note" and .id == "traces_not_analyzed") | .text')" \
	    '1 trace file under the input was not analyzed: 1 made by trace-annotate (annotated copies, not captures) (t.annotated.json)'
	eq t.annotated.json "$("$EX" -q --compat reference "$m" | jq -r 'select(.type == "trace") | .path | split("/") | last')"
	# a copy written into a folder of its own below the profile: the original's folder still
	mkdir -p "$m/sub/ann"
	mv "$m/t.json" "$m/sub/t.json"
	mv "$m/t.annotated.json" "$m/sub/ann/t.annotated.json"
	eq t.json "$("$EX" -q "$m/sub" | jq -r 'select(.type == "trace") | .path | split("/") | last')"
	rm "$m/sub/t.json"
	eq t.annotated.json "$("$EX" -q "$m/sub" | jq -r 'select(.type == "trace") | .path | split("/") | last')"
}
check "an annotated copy in the profile directory is not its newest trace" t_annotated_copy

t_usage() {
	status 2 "$EX" --all-ranks --rank 1 "$d" 2>"$T/err"
	has "$T/err" "not with --all-ranks"
	status 2 "$EX" --rank x "$d" 2>"$T/err"
	has "$T/err" "bad --rank value"
	status 2 "$EX" --list-ranks 2>/dev/null
}
check "--all-ranks with --rank, a bad rank, --list-ranks without operand: usage" t_usage

done_testing
