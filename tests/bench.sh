# make bench: time the toolkit against plain decompression on a large trace.
#
# Builds big traces once (in build/bench/) with ../shared/tools/scale-trace
# from the real SGLang prefill+decode trace when ../shared is there, or with
# tests/gen-trace otherwise; then measures, side by side, gzip -dc, trace-extract,
# the single-trace triage and the mapping/formal triage: wall time, CPU time and
# the largest resident set of any process, and prints each as a ratio to gzip -dc.
# Each figure is the fastest of BENCH_RUNS runs (5), the commands taking turns
# run by run: the machine is shared and noisy, and a slow spell then hits all alike.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${TRIAGE_BINDIR:-$top/build/bin}
out=$top/build/bench
mkdir -p "$out"
shared=$top/../shared
src=$shared/corpus/traces/tl_sglang_qwen3_8b_prefilldecode.json.gz
sizes=${BENCH_COPIES:-"2 10 20"}
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "bench: GNU time (/usr/bin/time) is required: apt-get install time" >&2; exit 1; }

make_trace() {	# make_trace COPIES -> path
	f=$out/trace-x$1.json.gz
	if [ ! -s "$f" ]; then
		if [ -f "$src" ]; then
			python3 "$shared/tools/scale-trace" "$src" "$f" "$1" >&2 || exit 1
		else
			"$top/tests/gen-trace" --steps $(($1 * 500)) --gzip >"$f" || exit 1
		fi
	fi
	echo "$f"
}

# run_once CMD: appends "wall cpu maxrss_kb" of one run of CMD to $out/runs.NAME
run_once() {	# run_once NAME CMD
	$TIME -f "%e %U %S %M" -o "$out/time.txt" sh -c "$2" >/dev/null 2>"$out/stderr.txt" || {
		echo "bench: command failed: $2" >&2
		cat "$out/stderr.txt" >&2
		exit 1
	}
	awk '{printf "%.2f %.2f %d\n", $1, $2 + $3, $4}' "$out/time.txt" >>"$out/runs.$1"
}

# best NAME: "wall cpu maxrss_kb" of the fastest run (the machine's other
# work only ever adds time; the peak RSS is the largest seen)
best() {
	rss=$(awk 'BEGIN {m = 0} $3 > m {m = $3} END {print m}' "$out/runs.$1")
	sort -n "$out/runs.$1" | head -n 1 | awk -v rss="$rss" '{print $1, $2, rss}'
}

printf 'machine: %s, %s cores, %s\n' "$(uname -m)" "$(nproc)" \
    "$(awk '/MemTotal/ {printf "%.0f GiB RAM", $2 / 1048576}' /proc/meminfo)"
printf 'each figure: the fastest of %s runs, the commands taking turns\n' "${BENCH_RUNS:-5}"
printf '%-8s %-9s %-22s %8s %8s %9s %10s %9s\n' copies json_MB command wall_s cpu_s rss_MB \
    wall/gzip cpu/gzip
for n in $sizes; do
	t=$(make_trace "$n")
	mb=$(gzip -dc "$t" | wc -c | awk '{printf "%.0f", $1 / 1048576}')
	names="gzip extract single dual"
	for c in $names; do
		: >"$out/runs.$c"
	done
	# Round robin, so a slow spell of the shared machine hits every command alike.
	r=0
	while [ "$r" -lt "${BENCH_RUNS:-5}" ]; do
		run_once gzip "gzip -dc '$t'"
		run_once extract "'$bin/trace-extract' -q '$t'"
		run_once single "TRIAGE_BINDIR='$bin' '$top/scripts/triage' -q --input '$t'"
		run_once dual "TRIAGE_BINDIR='$bin' '$top/scripts/triage' -q --mapping-input '$t' --formal-input '$t'"
		r=$((r + 1))
	done
	set -- $(best gzip)
	gw=$1 gc=$2
	for c in $names; do
		case $c in
		gzip) label="gzip -dc" ;;
		extract) label=trace-extract ;;
		single) label="triage single" ;;
		dual) label="triage mapping/formal" ;;
		esac
		set -- $(best "$c")
		printf '%-8s %-9s %-22s %8s %8s %9.1f %10.2f %9.2f\n' "$n" "$mb" "$label" "$1" "$2" \
		    "$(echo "$3" | awk '{print $1 / 1024}')" \
		    "$(echo "$1 $gw" | awk '{print ($2 > 0 ? $1 / $2 : 0)}')" \
		    "$(echo "$2 $gc" | awk '{print ($2 > 0 ? $1 / $2 : 0)}')"
		[ "$c" = single ] && sw=$1
		[ "$c" = dual ] && printf '%-8s %-9s %-22s %8s   mapping/formal wall / single wall = %.2f\n' \
		    "$n" "$mb" "" "" "$(echo "$1 $sw" | awk '{print ($2 > 0 ? $1 / $2 : 0)}')"
	done
done
