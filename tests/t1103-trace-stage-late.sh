#!/bin/sh
# trace-stage --late-stages (issue 30): kernels pass on as they come and
# kernel_stages records give their stage and sel at the trace's end; every
# filter after it must report exactly what it reports from kernels staged
# in their records, and a stream whose stages do not add up is refused.
. "$(dirname "$0")/lib.sh"

GEN=$TESTDIR/gen-trace
EX=$BIN/trace-extract
ST=$BIN/trace-stage

# single FILE LATE FORMAT: the single-trace pipeline, as triage runs it, by hand
single() {
	"$EX" -q --no-windows "$1" | "$ST" -q $2 | "$BIN/trace-health" -q | "$BIN/kernel-map" -q |
	    "$BIN/step-stats" -q | "$BIN/kernel-roofline" -q --drop-events | "$BIN/fuse-detect" -q |
	    "$BIN/triage-render" -q --format "$3" -
}

# dual MAPPING FORMAL LATE: the mapping/formal pipeline, by hand, markdown
dual() {
	"$EX" -q --role mapping --no-windows "$1" | "$ST" -q $3 | "$BIN/trace-health" -q >"$T/m.jsonl"
	"$BIN/kernel-map" -q --sites-only <"$T/m.jsonl" >"$T/sites.jsonl"
	"$EX" -q --role formal --no-windows "$2" | "$ST" -q $3 | "$BIN/trace-health" -q |
	    "$BIN/kernel-map" -q --mapping "$T/sites.jsonl" | "$BIN/step-stats" -q |
	    "$BIN/kernel-roofline" -q --mapping "$T/m.jsonl" |
	    "$BIN/overlap-sweep" -q --mapping "$T/m.jsonl" --drop-events | "$BIN/fuse-detect" -q |
	    "$BIN/triage-render" -q -
}

# merged A B OUT: the events of two traces in one file, in time order (the
# second's GPU work on pid 1), so that the two processes' kernels alternate
merged() {
	jq -c -s '{traceEvents: ((.[0].traceEvents + .[1].traceEvents) | sort_by(.ts // 0))} +
	    (.[0] | del(.traceEvents))' "$1" "$2" >"$3"
}

t_same_reports() {
	"$GEN" -s both -n 3 --streams 2 -o "$T/a.json"
	"$GEN" -f vllm -s decode -n 4 -o "$T/v.json"
	for f in a v; do
		for fmt in md json; do
			single "$T/$f.json" "" $fmt >"$T/$f.$fmt.staged"
			single "$T/$f.json" --late-stages $fmt >"$T/$f.$fmt.late"
			same "$T/$f.$fmt.staged" "$T/$f.$fmt.late"
		done
	done
	has "$T/a.md.late" 'GPU time'
	# the kernels pass on as trace-extract wrote them; their stages follow
	"$EX" -q "$T/a.json" | jq -c 'select(.type == "kernel")' >"$T/x.k"
	"$EX" -q "$T/a.json" | "$ST" -q --late-stages >"$T/late.jsonl"
	jq -c 'select(.type == "kernel")' "$T/late.jsonl" >"$T/l.k"
	same "$T/x.k" "$T/l.k"
	eq "1" "$(jq -s '[.[] | select(.type == "kernel_stages")] | length' "$T/late.jsonl")"
	# runs: what the staged kernels say, in record order
	"$EX" -q "$T/a.json" | "$ST" -q | jq -r 'select(.type == "kernel") | "\(.stage) \(.sel // false)"' |
	    uniq -c | awk '{ printf "%s %s %s\n", $1, $2, ($3 == "true") }' >"$T/want"
	jq -r 'select(.type == "kernel_stages") | .runs[] | "\(.[0]) \(.[1]) \(.[2])"' \
	    "$T/late.jsonl" >"$T/got"
	same "$T/want" "$T/got"
}
check "the single-trace report is the same from late stages (md, json; SGLang, vLLM)" t_same_reports

t_dual() {
	"$GEN" -s both -n 3 --streams 2 -o "$T/map.json"
	"$GEN" -s both -n 3 --streams 2 --graph -o "$T/formal.json"
	dual "$T/map.json" "$T/formal.json" "" >"$T/d.staged"
	dual "$T/map.json" "$T/formal.json" --late-stages >"$T/d.late"
	same "$T/d.staged" "$T/d.late"
	has "$T/d.late" 'Overlap'
}
check "the mapping/formal report is the same from late stages (overlap-sweep, kernel-roofline --mapping)" t_dual

# Kernels whose External id only the corr map gives (CUDA-graph replays,
# older Kineto): trace-stage's rewrite wrote it into them; late, every
# reader takes it from the corr records, which pass kernel-map on.
t_corr_ids() {
	"$GEN" -s both -n 3 --streams 2 -o "$T/m.json"
	"$GEN" -s both -n 3 --streams 2 --graph -o "$T/g.json"
	jq -c '.traceEvents |= map(if (.cat // "" | test("kernel|gpu_mem")) then del(.args["External id"]) else . end)' \
	    "$T/m.json" >"$T/m-noext.json"
	dual "$T/m-noext.json" "$T/g.json" "" >"$T/c.staged"
	dual "$T/m-noext.json" "$T/g.json" --late-stages >"$T/c.late"
	same "$T/c.staged" "$T/c.late"
	for fmt in md json; do
		single "$T/m-noext.json" "" $fmt >"$T/n.$fmt.staged"
		single "$T/m-noext.json" --late-stages $fmt >"$T/n.$fmt.late"
		same "$T/n.$fmt.staged" "$T/n.$fmt.late"
	done
	# the corr records go on past kernel-map (it consumes them otherwise)
	"$EX" -q "$T/g.json" | "$ST" -q --late-stages | "$BIN/trace-health" -q | "$BIN/kernel-map" -q |
	    grep -c '"type":"corr"' >"$T/ncorr" || :
	[ "$(cat "$T/ncorr")" -gt 0 ]
}
check "kernels whose External id the corr map gives: the same reports late" t_corr_ids

# Two GPU processes whose kernels alternate: a run per kernel, so more runs
# than one record holds (4,096), and filters that keep only the analyzed
# process's kernels (kernel-map, step-stats) drop every other one.
t_many_runs() {
	"$GEN" -s decode -n 1400 -l 1 -o "$T/p0.json"
	"$GEN" -s decode -n 1400 -l 1 --gpu-pid 1 -o "$T/p1.json"
	merged "$T/p0.json" "$T/p1.json" "$T/two.json"
	"$EX" -q "$T/two.json" | "$ST" -q --late-stages >"$T/late.jsonl"
	jq -r 'select(.type == "kernel_stages") | "\(.first) \(.runs | length)"' "$T/late.jsonl" >"$T/recs"
	eq "3" "$(wc -l <"$T/recs" | tr -d ' ')" "kernel_stages records"
	eq "0 4096" "$(sed -n 1p "$T/recs")"
	eq "4200" "$(jq -s '[.[] | select(.type == "kernel_stages") | .runs[] | select(.[2] == 1) | .[0]] |
	    add' "$T/late.jsonl")" "selected kernels"
	for fmt in md json; do
		single "$T/two.json" "" $fmt >"$T/two.$fmt.staged"
		single "$T/two.json" --late-stages $fmt >"$T/two.$fmt.late"
		same "$T/two.$fmt.staged" "$T/two.$fmt.late"
	done
	has "$T/two.md.late" '4200 GPU items'
}
check "two processes' kernels alternating: runs over several records, the other process dropped" t_many_runs

# A stream whose kernel_stages do not add up is refused by every reader.
t_refused() {
	"$GEN" -s decode -o "$T/d.json"
	"$EX" -q "$T/d.json" | "$ST" -q --late-stages >"$T/late.jsonl"
	# one kernel record lost
	awk '/"type":"kernel",/ && !done { done = 1; next } 1' "$T/late.jsonl" >"$T/lost.jsonl"
	# the runs cover one kernel fewer than there are
	sed '/"type":"kernel_stages"/s/"runs":\[\[\([0-9]*\),/"runs":[[X\1,/' "$T/late.jsonl" |
	    awk '/"type":"kernel_stages"/ { match($0, /X[0-9]+/); n = substr($0, RSTART + 1, RLENGTH - 1);
	        sub(/X[0-9]+/, n - 1) } 1' >"$T/short.jsonl"
	# a run that is not [count, stage, sel]
	sed '/"type":"kernel_stages"/s/"runs":\[\[/"runs":[[0,"decode",1],[/' "$T/late.jsonl" >"$T/bad.jsonl"
	# runs that begin past the first kernel record
	sed '/"type":"kernel_stages"/s/"first":0/"first":2/' "$T/late.jsonl" >"$T/gap.jsonl"
	for tool in trace-health kernel-map step-stats kernel-roofline overlap-sweep rank-skew; do
		args=
		[ $tool = overlap-sweep ] && args="--mapping /dev/null"
		status 1 "$BIN/$tool" -q $args <"$T/lost.jsonl" 2>"$T/err" >"$T/out"
		has "$T/err" 'run 1 reaches kernel record 12, but the trace has 11 so far'
		status 1 "$BIN/$tool" -q $args <"$T/short.jsonl" 2>"$T/err" >"$T/out"
		has "$T/err" 'cover 11 of its 12 kernel records'
		status 1 "$BIN/$tool" -q $args <"$T/bad.jsonl" 2>"$T/err" >"$T/out"
		has "$T/err" 'run 1 is not \[count >= 1, stage or null, 0 or 1\]'
		status 1 "$BIN/$tool" -q $args <"$T/gap.jsonl" 2>"$T/err" >"$T/out"
		has "$T/err" 'begin at kernel record 2, where the trace.s kernel_stages so far end at 0'
	done
	# kernels staged already would carry two stages; trace-annotate reads
	# the kernels' own stages, so it refuses late ones
	"$EX" -q "$T/d.json" | "$ST" -q >"$T/staged.jsonl"
	status 1 "$ST" -q --late-stages "$T/staged.jsonl" 2>"$T/err" >"$T/out"
	has "$T/err" 'staged already'
	status 1 "$BIN/trace-annotate" -q --trace-file "$T/d.json" -o "$T/ann.json" "$T/late.jsonl" \
	    2>"$T/err"
	has "$T/err" 'late-stages'
	test ! -e "$T/ann.json"
}
check "kernel_stages that do not add up, staged input, and trace-annotate: refused (exit 1)" t_refused

t_process_per_kernel() {
	# a GPU process per kernel (make scale's pids shape): the tools that keep
	# only the analyzed process's kernels leave the others' pid and tid as
	# text until their stage says so, in memory and spilled to disk
	"$TESTDIR/gen-hostile" pids 3000 >"$T/p.json"
	"$EX" -q "$T/p.json" | "$ST" -q >"$T/early.jsonl"
	"$EX" -q "$T/p.json" | "$ST" -q --late-stages >"$T/late.jsonl"
	for t in kernel-map step-stats; do
		# the kernel records differ by their stage members, kernel_stages are late's
		"$BIN/$t" -q "$T/early.jsonl" | grep -v '^{"type":"kernel",' >"$T/e2.out"
		"$BIN/$t" -q "$T/late.jsonl" |
		    grep -v -e '^{"type":"kernel",' -e '^{"type":"kernel_stages",' >"$T/l.out"
		TRIAGE_SPOOL_MEM=64 "$BIN/$t" -q "$T/late.jsonl" |
		    grep -v -e '^{"type":"kernel",' -e '^{"type":"kernel_stages",' >"$T/d.out"
		same "$T/e2.out" "$T/l.out"
		same "$T/e2.out" "$T/d.out"
	done
	eq 1 "$(jq -s '[.[] | select(.type == "gpu_time")] | .[0].kernels' "$T/d.out")"
}
check "a GPU process per kernel: the same figures late, in memory and on disk" t_process_per_kernel

done_testing
