#!/bin/sh
# make scale: the pathological shapes of issue 21 at N and 10 N items
# (SCALE_N, default 100,000), through scripts/triage.  Each size runs twice,
# the two sizes taking turns, and twice more at most while the ratio is over
# the limit (the machine's other load only adds time, so each size's figure
# is its least CPU time, user + system, of the whole pipeline).  A shape passes when 10 N costs at most 12 times N.  Also
# prints, per shape, the peak RSS of the largest process at 10 N (GNU
# time's figure for the whole run), and the peak memory of kernel-map and
# fuse-detect on 10 N distinct kernel names, beside the trace's size, and
# each process's peak on SCALE_SAME kernels of one name (issue 30: a
# process over SCALE_RSS_MB fails the run, unless SCALE_RSS_GATE=0).
# SCALE_SHAPES picks shapes (all: pids overlap ext names nest same).  Needs
# GNU time.
set -eu
cd "$(dirname "$0")/.."
TOP=$(pwd)
BIN=${TRIAGE_BINDIR:-$TOP/build/bin}
export TRIAGE_BINDIR=$BIN
N=${SCALE_N:-100000}
GEN=$TOP/tests/gen-hostile
TIME=${GNU_TIME:-/usr/bin/time}
[ -x "$TIME" ] || { echo "scale: GNU time not found at $TIME"; exit 2; }

D=$(mktemp -d "${TMPDIR:-/tmp}/triage-scale.XXXXXX")
trap 'rm -rf "$D"' EXIT

# cpu OUT CMD...: CPU seconds (user + system, children included) of CMD;
# its largest process's peak RSS in MB is left in $D/rss
cpu() {
	_out=$1
	shift
	"$TIME" -f '%U %S %M' -o "$D/t" "$@" >"$_out" 2>/dev/null || {
		echo "scale: failed: $*"
		exit 1
	}
	awk '{ printf "%d\n", $3 / 1024 }' "$D/t" >"$D/rss"
	awk '{ printf "%.2f\n", $1 + $2 }' "$D/t"
}

# case NAME MODE: MODE single (FILE) or pair (MAPPING FORMAL) on both sizes
fail=0
report() {
	printf '%-12s %9s %9s %8s %8s %6s %8s  %s\n' "$@"
}
report shape N 10N "cpu N" "cpu 10N" ratio "MB 10N" verdict

run_case() {
	name=$1
	shift
	case " ${SCALE_SHAPES:-pids overlap ext names nest} " in
	*" $name "*) ;;
	*) return 0 ;;
	esac
	best_s= best_l=
	round=0
	# Two rounds, and up to four more while the ratio is over the limit: the
	# machine's other load only adds time, so more rounds can only bring
	# each size's least CPU time nearer its cost on an idle machine (a CI
	# loaded CI runner once made 11x read 12.4x; on a host whose memory
	# costs drift, overlap's 10 N read 22.9 to 25.1 s in three runs in a
	# row, and four rounds gave 12.9x where three runs gave 10.9x).
	while :; do
		round=$((round + 1))
		for size in s l; do
			if [ "$1" = single ]; then
				c=$(cpu "$D/out" "$TOP/scripts/triage" -q --input "$D/$name.$size.json")
			else
				c=$(cpu "$D/out" "$TOP/scripts/triage" -q --mapping-input "$D/$name.$size.json" \
				    --formal-input "$D/$2.$size.json")
			fi
			if [ $size = s ]; then
				best_s=$(awk -v a="$c" -v b="${best_s:-1e99}" 'BEGIN { print (a < b ? a : b) }')
			else
				best_l=$(awk -v a="$c" -v b="${best_l:-1e99}" 'BEGIN { print (a < b ? a : b) }')
				rss_l=$(cat "$D/rss")
			fi
		done
		ratio=$(awk -v a="$best_s" -v b="$best_l" 'BEGIN { printf "%.1f", (a > 0.05 ? b / a : 0) }')
		[ "$round" -lt 2 ] && continue
		awk -v r="$ratio" 'BEGIN { exit !(r > 12) }' || break
		[ "$round" -lt 6 ] || break
	done
	verdict=ok
	if awk -v r="$ratio" 'BEGIN { exit !(r > 12) }'; then
		verdict="TOO SLOW (over 12x)"
		fail=1
	fi
	[ "$round" -gt 2 ] && verdict="$verdict, $round rounds"
	report "$name" "$N" "$((N * 10))" "$best_s" "$best_l" "${ratio}x" "$rss_l" "$verdict"
}

for size in s l; do
	n=$N
	[ $size = l ] && n=$((N * 10))
	"$GEN" pids "$n" >"$D/pids.$size.json"
	"$GEN" overlap "$n" >"$D/overlap.$size.json"
	"$GEN" ext "$n" >"$D/ext.$size.json"
	"$GEN" nest "$n" >"$D/nest.$size.json"
	"$GEN" names "$n" map >"$D/names.$size.json"
	"$GEN" names "$n" run >"$D/run.$size.json"
done
run_case pids single
run_case overlap pair overlap
run_case ext pair ext
run_case names pair run
run_case nest single

# memory bounded by distinct names, not by repeats (issue 30): SCALE_SAME
# (default 1,000,000; issue 30's figure is 10,000,000: 3 GB of JSON, and as
# much again in TMPDIR while it runs) kernels of one name with their
# launches, single trace, every tool wrapped in GNU time for its own peak
# RSS; a tool over SCALE_RSS_MB (256) fails the run (SCALE_RSS_GATE=0: only
# says so).  Also its CPU against a tenth of the kernels.
same_memory() {
	ns=${SCALE_SAME:-1000000}
	lim=${SCALE_RSS_MB:-256}
	mkdir -p "$D/wrap"
	for t in trace-extract trace-stage trace-health kernel-map step-stats kernel-roofline \
	    fuse-detect triage-render; do
		printf '#!/bin/sh\nexec %s -a -o "$SCALE_RSS_LOG" -f "%s %%M" "%s/%s" "$@"\n' \
		    "$TIME" "$t" "$BIN" "$t" >"$D/wrap/$t"
		chmod +x "$D/wrap/$t"
	done
	"$GEN" same "$((ns / 10))" >"$D/same.s.json"
	cs=$(cpu "$D/out" "$TOP/scripts/triage" -q --input "$D/same.s.json")
	rm -f "$D/same.s.json"
	"$GEN" same "$ns" >"$D/same.l.json"
	mb=$(($(wc -c <"$D/same.l.json") / 1048576))
	: >"$D/rss.log"
	"$TIME" -f '%U %S' -o "$D/t" env SCALE_RSS_LOG="$D/rss.log" TRIAGE_BINDIR="$D/wrap" \
	    "$TOP/scripts/triage" -q --input "$D/same.l.json" >"$D/out" 2>"$D/err" || {
		echo "scale: failed: triage --input (same, $ns kernels)"
		cat "$D/err"
		exit 1
	}
	cl=$(awk '{ printf "%.2f", $1 + $2 }' "$D/t")
	rm -f "$D/same.l.json"
	printf 'memory, %s kernels of one name with their launches (trace %s MB), peak RSS MB:' "$ns" "$mb"
	awk '{ printf " %s %d", $1, $2 / 1024 }' "$D/rss.log"
	echo
	over=$(awk -v l="$lim" '$2 / 1024 > l { printf " %s", $1 }' "$D/rss.log")
	printf 'same: CPU %s s for %s kernels, %s s for %s (%sx)' "$cs" "$((ns / 10))" "$cl" "$ns" \
	    "$(awk -v a="$cs" -v b="$cl" 'BEGIN { printf "%.1f", (a > 0.05 ? b / a : 0) }')"
	if [ -n "$over" ]; then
		if [ "${SCALE_RSS_GATE:-1}" = 1 ]; then
			printf '; OVER %s MB:%s\n' "$lim" "$over"
			fail=1
		else
			printf '; NOT MET, over %s MB:%s (issue 30)\n' "$lim" "$over"
		fi
	else
		printf '; every process within %s MB: ok\n' "$lim"
	fi
}
case " ${SCALE_SHAPES:-same} " in *" same "*) same_memory ;; esac

# memory of the distinct-name case, one kernel per name
case " ${SCALE_SHAPES:-names} " in *" names "*) ;; *) exit $fail ;; esac
"$BIN/trace-extract" -q "$D/names.l.json" | "$BIN/trace-stage" -q >"$D/st"
"$TIME" -f '%M' -o "$D/m1" "$BIN/kernel-map" -q "$D/st" >"$D/km"
"$TIME" -f '%M' -o "$D/m2" "$BIN/fuse-detect" -q "$D/km" >/dev/null
printf 'memory, %s distinct kernel names (trace %s MB): kernel-map %s MB, fuse-detect %s MB\n' \
    "$((N * 10))" "$(($(wc -c <"$D/names.l.json") / 1048576))" \
    "$(($(cat "$D/m1") / 1024))" "$(($(cat "$D/m2") / 1024))"
exit $fail
