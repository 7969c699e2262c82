#!/bin/sh
# Cross-check step-stats on real traces: for every single-file trace of
# SHARED_DIR/corpus/traces, the gpu_time records' kernels, kernel_us,
# busy_us, span_us, idle_us and graph_us must agree within 0.1 % with a
# computation in jq straight from the kernel and launch records of
# `trace-extract T | trace-stage`; and every figure has the properties it
# must have at any clock epoch (busy within the sum of durations and the
# span, nothing negative).  Usage: sh tests/corpus-step-stats.sh SHARED_DIR
#
# The jq side follows step-stats(1) word for word and nothing else: work
# items are kernel records with sel true and cat kernel, gpu_memcpy,
# gpu_memset, Kernel, Memcpy or Memset; a negative dur counts as 0; busy is
# the measure of the union of [ts, ts+dur]; graph items are those whose
# correlation names a launch record called cudaGraphLaunch*, hipGraphLaunch*
# or cuGraphLaunch*.
#
# tests/steps-check.py then recomputes, from the trace's JSON itself, the
# idle time, its host-bound and synchronization parts, the count of copies
# and the step figures (periods, complete-step percentiles, the last
# step's period less the clock offset, tokens per second).
shared=${1:-../shared}
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${TRIAGE_BINDIR:-$top/build/bin}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/corpus-step-stats.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

# The recomputation: one line per (t, stage) with the six figures.
recompute='
def union:
  sort_by(.[0], .[1])
  | reduce .[] as $x ({b: 0, s: null, e: null};
      if .s == null then {b: 0, s: $x[0], e: $x[1]}
      elif $x[0] > .e then {b: (.b + .e - .s), s: $x[0], e: $x[1]}
      elif $x[1] > .e then .e = $x[1]
      else . end)
  | if .s == null then 0 else .b + .e - .s end;
(reduce (.[] | select(.type == "launch")) as $l ({};
   (($l.t | tostring) + ":" + ($l.correlation | tostring)) as $k
   | if has($k) then . else .[$k] = $l.name end)) as $ln
| [.[] | select(.type == "kernel" and .sel == true
    and (.cat | IN("kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset")))
    | .dur = (if .dur < 0 then 0 else .dur end)
    | .graph = (.correlation != null and
        ($ln[(.t | tostring) + ":" + (.correlation | tostring)] // ""
         | test("^(cudaGraphLaunch|hipGraphLaunch|cuGraphLaunch)")))]
| group_by([.t, .stage])[]
| [.[0].t, .[0].stage, length, (map(.dur) | add), (map([.ts, .ts + .dur]) | union),
   ((map(.ts + .dur) | max) - (map(.ts) | min)),
   (map(select(.graph) | [.ts, .ts + .dur]) | union)]
| .[6] as $g | .[0:6] + [.[5] - .[4], $g]
| @tsv'

fields='kernels kernel_us busy_us span_us idle_us graph_us'

for f in "$shared"/corpus/traces/*.json "$shared"/corpus/traces/*.json.gz; do
	[ -f "$f" ] || continue
	name=$(basename "$f")
	"$bin/trace-extract" -q "$f" 2>/dev/null | "$bin/trace-stage" -q >"$tmp/rec" 2>/dev/null
	if ! "$bin/step-stats" -q "$tmp/rec" >"$tmp/out"; then
		echo "not ok - $name: step-stats failed"
		fail=$((fail + 1))
		continue
	fi
	jq -r 'select(.type == "gpu_time" and .kernels > 0)
	    | [.t, .stage, .kernels, .kernel_us, .busy_us, .span_us, .idle_us, (.graph_us // 0)]
	    | @tsv' "$tmp/out" | sort >"$tmp/got"
	jq -s -r "$recompute" "$tmp/rec" | sort >"$tmp/want"
	# join on (t, stage); every figure within 0.1 % (or 1 ns for values near 0)
	res=$(awk -F '\t' -v fields="$fields" '
	function abs(x) { return x < 0 ? -x : x }
	function close_to(a, b, m) {
		m = abs(a) > abs(b) ? abs(a) : abs(b)
		return abs(a - b) <= 0.001 * m || abs(a - b) <= 0.001
	}
	BEGIN { split(fields, fn, " ") }
	NR == FNR { want[$1 "\t" $2] = $0; next }
	{
		k = $1 "\t" $2
		if (!(k in want)) { bad = bad " extra stage " $2; next }
		split(want[k], w, "\t")
		for (i = 3; i <= 8; i++) {
			if (!close_to($i, w[i]))
				bad = bad sprintf(" %s/%s %s: %s vs jq %s", $1, $2, fn[i - 2], $i, w[i])
			d = abs($i - w[i])
			if (d > maxabs) maxabs = d
			if (d > 0 && d / (abs(w[i]) > abs($i) ? abs(w[i]) : abs($i)) > maxrel)
				maxrel = d / (abs(w[i]) > abs($i) ? abs(w[i]) : abs($i))
		}
		summary = summary sprintf(" [t%s %s: %d items, busy %.1f of span %.1f us, graph %.1f us]",
		    $1, $2, $3, $5, $6, $8)
		seen[k] = 1
	}
	END {
		for (k in want) if (!(k in seen)) bad = bad " missing stage " k
		if (bad != "") print "BAD" bad
		else printf "OK%s; largest difference %.3g us (%.2g %%)\n", summary, maxabs, 100 * maxrel
	}' "$tmp/want" "$tmp/got")
	case $res in
	OK*)
		if [ -s "$tmp/want" ]; then
			echo "ok - $name:${res#OK}"
		else
			echo "ok - $name: no GPU work items on the analyzed process (none in jq either)"
		fi
		pass=$((pass + 1)) ;;
	*)
		echo "not ok - $name:${res#BAD}"
		fail=$((fail + 1)) ;;
	esac
	# The properties every figure has on any trace, at any clock epoch (issue
	# 25): the union is no longer than the sum of the durations and no
	# longer than the span; nothing is negative; the host-bound idle is part
	# of the idle; the split adds up to the busy time; each step's GPU busy
	# is within its span.  (The sums are rounded once per item: 1e-9 of
	# the larger side.)
	bad=$(jq -r 'def le(a; b): a <= b + 1e-9 * ([a, b, 1] | map(fabs) | max);
	    if .type == "gpu_time" then
	      [ (if le(.busy_us; .kernel_us) then empty else "busy \(.busy_us) > kernel \(.kernel_us)" end),
	        (if le(.busy_us; .span_us) then empty else "busy > span" end),
	        (if le(.idle_launch_us // 0; .idle_us) then empty else "host-bound > idle" end),
	        (if le(.compute_us + .comm_us + .memcpy_us; .busy_us) and le(.busy_us; .compute_us + .comm_us + .memcpy_us)
	         then empty else "split != busy" end),
	        ([.kernel_us, .busy_us, .span_us, .idle_us, .idle_launch_us // 0, .compute_us, .comm_us,
	          .memcpy_us, .graph_us // 0, .step_p50_us // 0, .tokens_per_s // 0] | map(select(. < 0)) |
	          if length > 0 then "negative figure" else empty end) ] | map("\(.stage): " + .) | .[]
	    elif .type == "step" then
	      [ (if le(.gpu_busy_us // 0; .gpu_span_us // 0) then empty else "step \(.index) busy > span" end),
	        ([.cpu_us, .period_us, .gpu_busy_us // 0, .gpu_span_us // 0] | map(select(. < 0)) |
	          if length > 0 then "step \(.index) negative figure" else empty end) ] | .[]
	    else empty end' "$tmp/out" | sort -u | head -n 5 | tr '\n' ';')
	if [ -z "$bad" ]; then
		echo "ok - $name: busy within the sum of durations and the span, nothing negative"
		pass=$((pass + 1))
	else
		echo "not ok - $name: $bad"
		fail=$((fail + 1))
	fi	# idle, host-bound and synchronization idle, and the step figures
	# (complete periods, the last apart, the clock offset out of it),
	# recomputed from the trace's own JSON (tests/steps-check.py)
	if res=$(python3 "$top/tests/steps-check.py" "$f" "$tmp/out" 2>&1); then
		echo "ok - $name: from the raw JSON: $res"
		pass=$((pass + 1))
	else
		echo "not ok - $name: from the raw JSON: $res"
		fail=$((fail + 1))
	fi
done
echo "corpus step-stats: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
