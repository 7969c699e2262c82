#!/bin/sh
# rank-skew on generated traces of four ranks (tests/gen-trace): one rank
# arrives 12 us late at every all-reduce, the others wait for it, two hosts'
# clocks are off.  The figures must agree with an independent jq computation
# (tests/rank-skew-check.jq) and with what the generator was told.
. "$(dirname "$0")/lib.sh"

GEN=$TESTDIR/gen-trace
d=$T/prof
mkdir -p "$d"
# prefill step 1, decode steps 2 and 3; three layers: one all-reduce each
common="-s both -n 3 -l 3 --streams 2 -z"
"$GEN" $common --rank 0 --comm-wait 12 -o "$d/run-TP-0.trace.json.gz"
"$GEN" $common --rank 1 --comm-wait 12 --clock 2000 -o "$d/run-TP-1.trace.json.gz"
"$GEN" $common --rank 2 --comm-late 12 -o "$d/run-TP-2.trace.json.gz"
"$GEN" $common --rank 3 --comm-wait 12 --clock 777 -o "$d/run-TP-3.trace.json.gz"
"$BIN/trace-extract" -q --all-ranks "$d" | "$BIN/trace-stage" -q >"$T/staged"
"$BIN/rank-skew" --no-pass "$T/staged" >"$T/out" 2>"$T/err"

t_what_was_generated() {
	# 3 prefill and 6 decode all-reduces, each 12 us skewed and 12 us of wait, rank 2 last
	eq "extend 3 12 12 2" "$(jq -r 'select(.type == "collective_row" and .stage == "extend") |
	    "\(.stage) \(.ordinal) \(.skew_us) \(.wait_us) \(.last_rank)"' "$T/out" | tail -n 1)"
	eq 6 "$(jq -s '[.[] | select(.type == "collective_row" and .stage == "decode" and
	    .skew_us == 12 and .wait_us == 12 and .last_rank == 2)] | length' "$T/out")"
	eq "0 -2000 0 -777" "$(jq -r 'select(.type == "rank_row" and .stage == "decode") | .offset_us' "$T/out" |
	    tr '\n' ' ' | sed 's/ $//')"
	eq "72 72 0 72" "$(jq -r 'select(.type == "rank_row" and .stage == "decode") | .wait_us' "$T/out" |
	    tr '\n' ' ' | sed 's/ $//')"
	eq 2 "$(jq 'select(.type == "rank_row" and .stage == "decode" and .straggler) | .rank' "$T/out")"
	[ ! -s "$T/err" ]
}
check "the skew and wait the generator put in, the clocks it shifted" t_what_was_generated

# Starts within the clocks' agreement are one arrival: a rank whose
# all-reduces start 1 ns later is not the straggler (it was, waiting 0.00 ms).
t_together() {
	mkdir -p "$T/tog"
	"$GEN" -n 2 -l 2 --streams 2 --world 2 --rank 0 -o "$T/tog/r-TP-0.json"
	"$GEN" -n 2 -l 2 --streams 2 --world 2 --rank 1 -o "$T/r1.json"
	# its first all-reduce, whose end aligns the clocks, 1 ns longer
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
k = min((e for e in d["traceEvents"] if e.get("ph") == "X" and "cross_device_reduce" in e.get("name", "")),
        key=lambda e: e["ts"])
k["dur"] += 0.001
json.dump(d, open(sys.argv[2], "w"))' "$T/r1.json" "$T/tog/r-TP-1.json"
	"$BIN/trace-extract" -q --all-ranks "$T/tog" | "$BIN/trace-stage" -q |
	    "$BIN/rank-skew" --no-pass >"$T/tog.out"
	eq "" "$(jq -r 'select(.type == "collective_row") | .last_rank // empty' "$T/tog.out")"
	eq "" "$(jq -r 'select(.type == "rank_row" and .straggler) | .rank' "$T/tog.out")"
	eq "4" "$(jq -s '[.[] | select(.type == "collective_row" and .skew_us > 0)] | length' "$T/tog.out")"
	"$TRIAGE" -q --all-ranks --input "$T/tog" >"$T/tog.md"
	has "$T/tog.md" "^\*\*all: no straggler: at the 4 matched collectives the ranks arrived together"
	hasnt "$T/tog.md" 'is the straggler'
}
check "starts 1 ns apart: the same arrival, no straggler" t_together

t_time_bases() {
	# each trace's times are relative to its own time_base_us (issue 25):
	# a rank whose base is 10^9 us higher, its times as much lower, is the
	# same rank on the same clock
	jq -c 'if .t == 1 and .type == "trace" then .time_base_us += 1000000000
	    elif .t == 1 and (.ts | type) == "number" then .ts -= 1000000000 else . end' \
	    "$T/staged" >"$T/rebased"
	"$BIN/rank-skew" --no-pass "$T/rebased" >"$T/out2"
	same "$T/out" "$T/out2"
}
check "ranks with other time bases are compared on one clock" t_time_bases

t_independent() {
	jq -r -s --arg coll 'cross_device_reduce' --arg align 'cross_device_reduce' \
	    -f "$TESTDIR/rank-skew-check.jq" "$T/staged" | cut -f 1,3- | sort >"$T/want"
	jq -r 'select(.type == "collective_row") |
	    [.stage, (.ordinal | tostring), (.skew_us * 1000 | round / 1000 | tostring),
	     (.wait_us * 1000 | round / 1000 | tostring), (.last_rank | tostring)] | join("\t")' \
	    "$T/out" | sort >"$T/got"
	eq 9 "$(wc -l <"$T/got")"
	same "$T/want" "$T/got"
}
check "every collective agrees with an independent jq computation" t_independent

t_busy_kernel() {
	# per rank and stage: kernel time is the sum of the selected kernels, busy
	# time the length of their union (the all-reduces overlap compute kernels)
	jq -r -s '(map(select(.type == "trace")) | map({key: (.t | tostring), value: .rank}) | from_entries) as $r
	    | [.[] | select(.type == "kernel" and .sel)] | group_by([$r[.t | tostring], .stage])[]
	    | (sort_by(.ts) | reduce .[] as $k ({busy: 0, end: null};
	        if .end == null or $k.ts > .end then .busy += $k.dur | .end = $k.ts + $k.dur
	        elif $k.ts + $k.dur > .end then .busy += $k.ts + $k.dur - .end | .end = $k.ts + $k.dur
	        else . end)) as $u
	    | [.[0].stage, $r[.[0].t | tostring], (map(.dur) | add), $u.busy] | @tsv' "$T/staged" |
	    sort >"$T/want"
	jq -r 'select(.type == "rank_row") | [.stage, .rank, .kernel_us, .busy_us] | @tsv' "$T/out" |
	    sort >"$T/got"
	same "$T/want" "$T/got"
	# the generator's all-reduces do overlap: busy below kernel time somewhere
	[ "$(jq -s '[.[] | select(.type == "rank_row" and .busy_us < .kernel_us)] | length' "$T/out")" -gt 0 ]
}
check "kernel and busy time per rank and stage agree with jq" t_busy_kernel

t_cut_rank() {
	# rank 3's trace lost its last all-reduce (decode): decode is reported, extend still matched
	c=$T/cut
	mkdir -p "$c"
	cp "$d"/run-TP-[012].trace.json.gz "$c/"
	"$GEN" $common --rank 3 --comm-wait 12 --comm-drop 1 -o "$c/run-TP-3.trace.json.gz"
	"$BIN/trace-extract" -q --all-ranks "$c" | "$BIN/trace-stage" -q |
	    "$BIN/rank-skew" --no-pass >"$T/cut.out" 2>"$T/cut.err"
	eq '{"stage":"decode","reason":"count","kind":"custom-all-reduce","ranks":[{"rank":0,"count":6},{"rank":1,"count":6},{"rank":2,"count":6},{"rank":3,"count":5}]}' \
	    "$(jq -c 'select(.type == "rank_gap") | del(.type)' "$T/cut.out")"
	has "$T/cut.err" "stage 'decode': custom-all-reduce counts differ between ranks (5 on rank 3, 6 on rank 0): not paired"
	eq "extend:3" "$(jq -r 'select(.type == "collective_row") | .stage' "$T/cut.out" | uniq -c |
	    awk '{ print $2 ":" $1 }')"
}
check "a rank's sequence cut short: reported, the other stage still matched" t_cut_rank

t_order_free() {
	# the ranks in another order, each rank's pipeline run on its own: the same analysis
	for r in 3 1 0 2; do
		"$BIN/trace-extract" -q --rank "$r" "$d" | "$BIN/trace-stage" -q
	done | "$BIN/rank-skew" --no-pass >"$T/out2" 2>&1
	same "$T/out" "$T/out2"
}
check "ranks in any order, from separate pipelines: the same records" t_order_free

done_testing
