# make bench: the toolkit's time and memory against plain decompression.
#
# Builds big traces once (in build/bench/) with ../shared/tools/scale-trace
# from the real SGLang Qwen3-8B prefill+decode trace when ../shared is there,
# or with tests/gen-trace otherwise: 2 and 20 copies, and 100 with
# BENCH_LARGE=1 (BENCH_COPIES overrides the list).  For each size:
#
#  - time: gzip -dc, trace-extract, the single-trace triage and the
#    mapping/formal triage take turns for BENCH_RUNS rounds (5); each
#    round's CPU time (user + sys of every process) and wall time of a
#    command is divided by that round's gzip -dc, so that a slow spell of
#    the shared machine, which hits neighbouring runs alike, cancels out;
#    the median ratio is shown with the smallest and largest;
#  - memory: one more run of each triage with every tool wrapped in GNU
#    time, for each tool's peak RSS;
#  - the record stream: bytes of the largest pipe (trace-extract's output)
#    per byte of JSON, and of the mapping/formal flow's temporary files;
#  - the annotated trace (issue 29): trace-annotate of the single-trace
#    run's records into a gzip copy of the trace takes its turn in the
#    rounds too, and one more run gives its peak RSS, which must not grow
#    with the trace (it streams the trace through).
#
# At the end, the figures the project's budget names (issue 13): single
# CPU <= 1.0x gzip -dc and mapping/formal <= 2.0x at 20 copies, every
# process <= 64 MB, CPU linear from 20 to 100 copies within 10 %, streams
# <= 0.3 MB per MB of JSON.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${TRIAGE_BINDIR:-$top/build/bin}
out=$top/build/bench
mkdir -p "$out"
shared=$top/../shared
src=$shared/corpus/traces/tl_sglang_qwen3_8b_prefilldecode.json.gz
if [ -n "${BENCH_COPIES:-}" ]; then
	sizes=$BENCH_COPIES
elif [ -n "${BENCH_LARGE:-}" ]; then
	sizes="2 20 100"
else
	sizes="2 20"
fi
runs=${BENCH_RUNS:-5}
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "bench: GNU time (/usr/bin/time) is required: apt-get install time" >&2; exit 1; }
tools="trace-extract trace-stage trace-health kernel-map step-stats kernel-roofline overlap-sweep fuse-detect triage-render trace-annotate"

make_trace() {	# make_trace COPIES -> path
	f=$out/trace-x$1.json.gz
	if [ ! -s "$f" ]; then
		if [ -f "$src" ]; then
			# (the name ends in .gz: scale-trace compresses by the name)
			python3 "$shared/tools/scale-trace" "$src" "$out/part-x$1.json.gz" "$1" >&2 &&
			    mv "$out/part-x$1.json.gz" "$f" || exit 1
		else
			"$top/tests/gen-trace" --steps $(($1 * 500)) --gzip >"$f" || exit 1
		fi
	fi
	echo "$f"
}

# run_once NAME CMD: appends "wall cpu" of one run of CMD to $out/runs.NAME
run_once() {
	$TIME -f "%e %U %S" -o "$out/time.txt" sh -c "$2" >/dev/null 2>"$out/stderr.txt" || {
		echo "bench: command failed: $2" >&2
		cat "$out/stderr.txt" >&2
		exit 1
	}
	awk '{printf "%.3f %.3f\n", $1, $2 + $3}' "$out/time.txt" >>"$out/runs.$1"
}

# ratios NAME FIELD: "median min max" of NAME's figure over gzip's, round by round
ratios() {
	paste -d ' ' "$out/runs.$1" "$out/runs.gzip" |
	    awk -v f="$2" '{ r[NR] = $f / ($(f + 2) > 0 ? $(f + 2) : 1) }
	    END { n = NR; for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
	              if (r[j] < r[i]) { t = r[i]; r[i] = r[j]; r[j] = t }
	          m = n % 2 ? r[(n + 1) / 2] : (r[n / 2] + r[n / 2 + 1]) / 2
	          printf "%.2f %.2f %.2f\n", m, r[1], r[n] }'
}

# median NAME FIELD: the median of one figure of NAME's runs
median() {
	awk -v f="$2" '{ print $f }' "$out/runs.$1" | sort -n |
	    awk '{ v[NR] = $1 } END { printf "%.2f\n", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# wrappers DIR: a bin directory whose tools log "tool maxrss_kb" to $BENCH_RSS_LOG
wrappers() {
	mkdir -p "$1"
	for t in $tools trace-capture rank-skew; do
		printf '#!/bin/sh\nexec %s -a -o "$BENCH_RSS_LOG" -f "%s %%M" "%s/%s" "$@"\n' \
		    "$TIME" "$t" "$bin" "$t" >"$1/$t"
		chmod +x "$1/$t"
	done
}

printf 'machine: %s, %s cores, %s; load average at start: %s\n' "$(uname -m)" "$(nproc)" \
    "$(awk '/MemTotal/ {printf "%.0f GiB RAM", $2 / 1048576}' /proc/meminfo)" \
    "$(cut -d ' ' -f 1-3 /proc/loadavg)"
printf 'each ratio: the median over %s rounds of the command against gzip -dc in the same round (smallest-largest)\n' "$runs"
wrappers "$out/wrap"
: >"$out/summary"
for n in $sizes; do
	t=$(make_trace "$n")
	bytes=$(gzip -dc "$t" | wc -c)
	mb=$(echo "$bytes" | awk '{printf "%.0f", $1 / 1048576}')
	for c in gzip extract single dual annotate; do
		: >"$out/runs.$c"
	done
	TRIAGE_BINDIR=$bin "$top/scripts/triage" -q --format jsonl --input "$t" >"$out/records.jsonl"
	r=0
	while [ "$r" -lt "$runs" ]; do
		run_once gzip "gzip -dc '$t'"
		run_once extract "'$bin/trace-extract' -q '$t'"
		run_once single "TRIAGE_BINDIR='$bin' '$top/scripts/triage' -q --input '$t'"
		run_once dual "TRIAGE_BINDIR='$bin' '$top/scripts/triage' -q --mapping-input '$t' --formal-input '$t'"
		run_once annotate "'$bin/trace-annotate' -q -o '$out/annotated.json.gz' '$out/records.jsonl'"
		r=$((r + 1))
	done
	$TIME -f '%M' -o "$out/rss.annotate" "$bin/trace-annotate" -q -o "$out/annotated.json.gz" \
	    "$out/records.jsonl"
	asize=$(wc -c <"$out/annotated.json.gz")
	rm -f "$out/annotated.json.gz" "$out/records.jsonl"
	# memory: each tool's peak RSS, one wrapped run of each flow
	: >"$out/rss.single"
	: >"$out/rss.dual"
	BENCH_RSS_LOG=$out/rss.single TRIAGE_BINDIR=$out/wrap "$top/scripts/triage" -q --input "$t" >/dev/null
	BENCH_RSS_LOG=$out/rss.dual TRIAGE_BINDIR=$out/wrap "$top/scripts/triage" -q \
	    --mapping-input "$t" --formal-input "$t" >/dev/null
	# the streams
	s1=$("$bin/trace-extract" -q "$t" | wc -c)
	s2=$("$bin/trace-extract" -q --role mapping "$t" | "$bin/trace-stage" -q |
	    "$bin/trace-health" -q | tee "$out/mapping.jsonl" | "$bin/kernel-map" -q --sites-only | wc -c)
	s2=$((s2 + $(wc -c <"$out/mapping.jsonl")))
	s2=$((s2 + $("$bin/trace-extract" -q --role formal "$t" | "$bin/trace-stage" -q |
	    "$bin/trace-health" -q | wc -c)))
	rm -f "$out/mapping.jsonl"

	printf '\n%s copies, %s MB of JSON (%s)\n' "$n" "$mb" "$(basename "$t")"
	printf '  %-24s %8s %8s %22s %22s\n' command wall_s cpu_s "wall/gzip" "cpu/gzip"
	for c in gzip extract single dual annotate; do
		case $c in
		gzip) label="gzip -dc" ;;
		extract) label=trace-extract ;;
		single) label="triage --input" ;;
		dual) label="triage mapping/formal" ;;
		annotate) label="trace-annotate (.gz)" ;;
		esac
		set -- $(ratios "$c" 1)
		w="$1 ($2-$3)"
		set -- $(ratios "$c" 2)
		printf '  %-24s %8s %8s %22s %22s\n' "$label" "$(median "$c" 1)" "$(median "$c" 2)" "$w" \
		    "$1 ($2-$3)"
		echo "$n $c cpu $1 $(median "$c" 2)" >>"$out/summary"
	done
	for f in single dual; do
		printf '  peak RSS MB, %-6s' "$f:"
		awk '{ if ($2 > m[$1]) m[$1] = $2; if (!($1 in o)) o[$1] = ++k; n[o[$1]] = $1 }
		    END { for (i = 1; i <= k; i++) printf " %s %.1f", n[i], m[n[i]] / 1024; print "" }' \
		    "$out/rss.$f"
		awk -v n="$n" -v f="$f" '{ if ($2 > m) m = $2 } END { print n, f, "rss", m / 1024 }' \
		    "$out/rss.$f" >>"$out/summary"
	done
	printf '  annotated trace: peak RSS %.1f MB, %.1f MB gzip (the trace %.1f MB)\n' \
	    "$(tail -n 1 "$out/rss.annotate" | awk '{print $1 / 1024}')" \
	    "$(echo "$asize" | awk '{print $1 / 1048576}')" "$(wc -c <"$t" | awk '{print $1 / 1048576}')"
	echo "$n annotate rss $(tail -n 1 "$out/rss.annotate" | awk '{print $1 / 1024}')" >>"$out/summary"
	printf '  record stream: %.3f MB per MB of JSON (trace-extract); mapping/formal temporary files %.3f\n' \
	    "$(echo "$s1 $bytes" | awk '{print $1 / $2}')" "$(echo "$s2 $bytes" | awk '{print $1 / $2}')"
	echo "$n stream single $(echo "$s1 $bytes" | awk '{print $1 / $2}')" >>"$out/summary"
	echo "$n stream dual $(echo "$s2 $bytes" | awk '{print $1 / $2}')" >>"$out/summary"
done
printf '\nload average at the end: %s\n' "$(cut -d ' ' -f 1-3 /proc/loadavg)"

# The budget.
awk '
function verdict(ok) { return ok ? "ok" : "NOT MET" }
$3 == "cpu" { r[$1 " " $2] = $4; c[$1 " " $2] = $5 }
$2 == "annotate" && $3 == "rss" { arss[$1] = $4; next }
$3 == "rss" { if ($4 > rss[$1]) rss[$1] = $4 }
$2 == "stream" { s[$1 " " $3] = $4 }
END {
	print "\nbudget:"
	if ("20 single" in r) {
		printf "  single-trace CPU at 20 copies: %.2fx gzip -dc (<= 1.0): %s\n", r["20 single"], verdict(r["20 single"] <= 1.0)
		printf "  mapping/formal CPU at 20 copies: %.2fx gzip -dc (<= 2.0): %s\n", r["20 dual"], verdict(r["20 dual"] <= 2.0)
	}
	for (n in rss)
		if (n == 20 || n == 100)
			printf "  largest process at %d copies: %.1f MB (<= 64): %s\n", n, rss[n], verdict(rss[n] <= 64)
	if (("20 single" in c) && ("100 single" in c))
		for (f = 0; f < 2; f++) {
			k = f ? "dual" : "single"
			g = c["100 " k] / c["20 " k] / 5
			printf "  %s CPU from 20 to 100 copies: %.2f of linear (within 0.90-1.10): %s\n", k, g, verdict(g >= 0.9 && g <= 1.1)
		}
	if (("20" in arss) && ("100" in arss))
		printf "  trace-annotate peak RSS at 20 and 100 copies: %.1f and %.1f MB (bounded: within 8 MB): %s\n", arss[20], arss[100], verdict(arss[100] - arss[20] <= 8)
	for (n in arss)
		if (n == 20 || n == 100)
			printf "  trace-annotate at %d copies: %.1f MB (<= 64): %s\n", n, arss[n], verdict(arss[n] <= 64)
	for (k in s)
		if (k ~ /^20 /)
			printf "  %s stream at 20 copies: %.3f MB per MB of JSON (<= 0.3): %s\n", substr(k, 4), s[k], verdict(s[k] <= 0.3)
}' "$out/summary"
