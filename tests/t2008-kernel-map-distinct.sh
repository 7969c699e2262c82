#!/bin/sh
# kernel-map on traces where every kernel has a name of its own (issue 21:
# 1.9 GB for a million).  Statistics taken instead of copied, the formal
# payload written entry by entry and the global payload dropped once
# written must leave every record as it was: rows and sites recomputed
# with jq, and a second trace (the global statistics then merge two)
# summed across both.
. "$(dirname "$0")/lib.sh"

GEN=$TESTDIR/gen-hostile

t_one_trace() {
	"$GEN" names 20000 >"$T/t.json"
	"$BIN/trace-extract" -q "$T/t.json" | "$BIN/trace-stage" -q >"$T/st"
	"$BIN/kernel-map" -q "$T/st" >"$T/km"
	for scope in mapping_stage mapping_global formal_stage; do
		eq 20000 "$(grep -c "\"scope\":\"$scope\"" "$T/km")" "$scope sites"
	done
	eq 20000 "$(grep -c '"type":"kernel_row"' "$T/km")" "rows"
	# each row: its own kernel's time, launch count 1, the frame it ran under;
	# the global and the stage payloads of one trace with one stage the same
	# (one jq over the 46 MB of records, its lines split by their tag)
	jq -r 'if .type == "kernel_row" then
	        "got\t" + ([.kernel, .total_us, .launches, .location] | @tsv)
	    elif .type == "site" and .scope == "mapping_global" then "g\t" + (del(.scope) | tojson)
	    elif .type == "site" and .scope == "mapping_stage" then
	        "s\t" + (del(.scope, .stage) | tojson)
	    else empty end' "$T/km" |
	    awk -v d="$T" '{ f = $0; sub(/\t.*/, "", f); sub(/^[^\t]*\t/, ""); print > (d "/" f) }'
	sort -o "$T/got" "$T/got"
	jq -r 'select(.type == "kernel") | [.name, .dur, 1,
	    "python/sglang/srt/layers/op\((.name | ltrimstr("k_kernel_") | tonumber) % 7).py:1\((.name |
	    ltrimstr("k_kernel_") | tonumber) % 7) forward"] | @tsv' "$T/st" | sort >"$T/want"
	same "$T/want" "$T/got"
	same "$T/s" "$T/g"
}
check "20,000 distinct names: every row and site as recomputed" t_one_trace

t_two_traces() {
	# two traces sharing their names: global launches add up, each stage keeps its own
	"$GEN" names 3000 >"$T/a.json"
	mkdir -p "$T/decode"
	cp "$T/a.json" "$T/decode/b.json"
	"$BIN/trace-extract" -q "$T/a.json" "$T/decode/b.json" | "$BIN/trace-stage" -q |
	    "$BIN/kernel-map" -q >"$T/km2"
	jq -r 'select(.type == "site" and .scope == "mapping_global") |
	    [.kernel, (.sites | map(.launches) | add)] | @tsv' "$T/km2" | sort -u >"$T/glob"
	eq 3000 "$(wc -l <"$T/glob" | tr -d ' ')" "global entries"
	eq 2 "$(cut -f2 "$T/glob" | sort -u)" "launches per name across the two traces"
	jq -r 'select(.type == "site" and .scope == "mapping_stage") | .stage' "$T/km2" |
	    sort | uniq -c | awk '{ print $2 " " $1 }' >"$T/stages"
	printf '%s\n' 'all 3000' 'decode 3000' >"$T/want"
	same "$T/want" "$T/stages"
}
check "two traces: the global statistics merge both, the stages stay apart" t_two_traces

done_testing
