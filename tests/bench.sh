# make bench: time the toolkit against plain decompression on a large trace.
#
# Builds big traces once (in build/bench/) with ../shared/tools/scale-trace
# from the real SGLang prefill+decode trace when ../shared is there, or with
# tests/gen-trace otherwise; then measures, side by side, gzip -dc, trace-extract,
# the single-trace triage and the mapping/formal triage: wall time, CPU time and
# the largest resident set of any process, and prints each as a ratio to gzip -dc.
# Each figure is the fastest of BENCH_RUNS runs (5): this machine is shared and noisy.
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

# measure CMD: prints "wall cpu maxrss_kb" of the fastest of $BENCH_RUNS runs
# (3 by default): the machine's other work only ever adds time.
measure() {
	: >"$out/runs.txt"
	_r=0
	while [ "$_r" -lt "${BENCH_RUNS:-5}" ]; do
		$TIME -f "%e %U %S %M" -o "$out/time.txt" sh -c "$*" >/dev/null 2>"$out/stderr.txt" || {
			echo "bench: command failed: $*" >&2
			cat "$out/stderr.txt" >&2
			exit 1
		}
		cat "$out/time.txt" >>"$out/runs.txt"
		_r=$((_r + 1))
	done
	sort -n "$out/runs.txt" | head -n 1 | awk '{printf "%.2f %.2f %d\n", $1, $2 + $3, $4}'
}

printf 'machine: %s, %s cores, %s\n' "$(uname -m)" "$(nproc)" \
    "$(awk '/MemTotal/ {printf "%.0f GiB RAM", $2 / 1048576}' /proc/meminfo)"
printf '%-8s %-9s %-22s %8s %8s %9s %10s %9s\n' copies json_MB command wall_s cpu_s rss_MB \
    wall/gzip cpu/gzip
for n in $sizes; do
	t=$(make_trace "$n")
	mb=$(gzip -dc "$t" | wc -c | awk '{printf "%.0f", $1 / 1048576}')
	set -- $(measure "gzip -dc '$t'")
	gw=$1 gc=$2
	for c in "gzip -dc" "trace-extract" "triage single" "triage mapping/formal"; do
		case $c in
		"gzip -dc") cmd="gzip -dc '$t'" ;;
		trace-extract) cmd="'$bin/trace-extract' -q '$t'" ;;
		"triage single") cmd="TRIAGE_BINDIR='$bin' '$top/scripts/triage' -q --input '$t'" ;;
		*) cmd="TRIAGE_BINDIR='$bin' '$top/scripts/triage' -q --mapping-input '$t' --formal-input '$t'" ;;
		esac
		set -- $(measure "$cmd")
		printf '%-8s %-9s %-22s %8s %8s %9.1f %10.2f %9.2f\n' "$n" "$mb" "$c" "$1" "$2" \
		    "$(echo "$3" | awk '{print $1 / 1024}')" \
		    "$(echo "$1 $gw" | awk '{print ($2 > 0 ? $1 / $2 : 0)}')" \
		    "$(echo "$2 $gc" | awk '{print ($2 > 0 ? $1 / $2 : 0)}')"
	done
done
