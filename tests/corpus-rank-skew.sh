# The all-ranks flow on the shared real rank set (four ranks, 0 2 4 5, of an
# 8-rank DLRM training job with NCCL all-reduce and send/recv): every rank
# appears, every collective is matched across all ranks or reported in a
# rank_gap, and the figures agree with an independent computation: jq for
# every collective (tests/rank-skew-check.jq), awk by hand for the first
# all-reduce.  Usage: sh tests/corpus-rank-skew.sh SHARED_DIR
shared=${1:-../shared}
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${TRIAGE_BINDIR:-$top/build/bin}
dir=$shared/ranks/dlrm_4rank
pass=0
fail=0
if [ ! -d "$dir" ]; then
	echo "rank-skew corpus: no $dir, skipped"
	exit 0
fi
t=$(mktemp -d "${TMPDIR:-/tmp}/corpus-rank-skew.XXXXXX") || exit 1
trap 'rm -rf "$t"' EXIT

ok() {	# ok DESCRIPTION EXPECTED ACTUAL
	if [ "$2" = "$3" ]; then
		echo "ok - $1"
		pass=$((pass + 1))
	else
		echo "not ok - $1: expected '$2', got '$3'"
		fail=$((fail + 1))
	fi
}

# The pipelines triage --all-ranks runs, one per rank; then rank-skew.
"$bin/trace-extract" -q --list-ranks "$dir" >"$t/ranks"
ok "ranks found" "0 2 4 5" "$(tr '\n' ' ' <"$t/ranks" | sed 's/ $//')"
for r in $(cat "$t/ranks"); do
	"$bin/trace-extract" -q --rank "$r" "$dir" | "$bin/trace-stage" -q | "$bin/kernel-map" -q |
	    "$bin/fuse-detect" -q >"$t/rank$r.jsonl"
done
cat "$t"/rank*.jsonl | "$bin/rank-skew" --no-pass --ranks "$(paste -sd, "$t/ranks")" \
    >"$t/skew.jsonl" 2>"$t/skew.err"
ok "rank-skew exit status" 0 "$?"
"$bin/trace-extract" -q --all-ranks "$dir" | "$bin/trace-stage" -q >"$t/staged"

# every rank appears, in every stage
ok "a rank_row for every rank" "all:0 all:2 all:4 all:5" \
    "$(jq -r 'select(.type == "rank_row") | "\(.stage):\(.rank)"' "$t/skew.jsonl" | tr '\n' ' ' |
    sed 's/ $//')"
ok "no rank missing" 0 "$(grep -c '"reason":"missing"' "$t/skew.jsonl")"

# every collective kernel (NCCL here) is counted, and matched or in a rank_gap
jq -r -s '(map(select(.type == "trace")) | map({key: (.t | tostring), value: .rank}) | from_entries) as $r
    | [.[] | select(.type == "kernel" and .sel and (.name | startswith("nccl")))]
    | group_by($r[.t | tostring])[] | "\($r[.[0].t | tostring]):\(length)"' "$t/staged" >"$t/want"
jq -r 'select(.type == "rank_row") | "\(.rank):\(.collectives)"' "$t/skew.jsonl" >"$t/got"
ok "collectives per rank agree with the NCCL kernels" "$(cat "$t/want" | tr '\n' ' ')" \
    "$(cat "$t/got" | tr '\n' ' ')"
ok "every collective matched or reported in a rank_gap" "" \
    "$(jq -r -s '(map(select(.type == "rank_gap" and .reason != "missing")) |
        [.[].ranks[]] | group_by(.rank) | map({key: (.[0].rank | tostring), value: (map(.count) | add)}) |
        from_entries) as $gap
      | (map(select(.type == "collective_row")) | [.[].ranks[].rank] | group_by(.) |
        map({key: (.[0] | tostring), value: length}) | from_entries) as $rows
      | .[] | select(.type == "rank_row")
      | select(.collectives != (($rows[.rank | tostring] // 0) + ($gap[.rank | tostring] // 0))
          or .matched != ($rows[.rank | tostring] // 0))
      | .rank' "$t/skew.jsonl" | tr '\n' ' ')"
echo "# collective rows: $(grep -c collective_row "$t/skew.jsonl"), rank gaps:" \
    "$(grep -c rank_gap "$t/skew.jsonl")"

# every collective against the independent jq computation
jq -r -s --arg coll '^nccl' --arg align 'AllReduce' -f "$top/tests/rank-skew-check.jq" "$t/staged" |
    cut -f 1,3- | sort >"$t/want"
jq -r 'select(.type == "collective_row") | [.stage, (.ordinal | tostring),
    (.skew_us * 1000 | round / 1000 | tostring), (.wait_us * 1000 | round / 1000 | tostring),
    (.last_rank | tostring)] | join("\t")' "$t/skew.jsonl" | sort >"$t/got"
ok "skew, wait and last rank of every collective agree with jq" "$(cat "$t/want")" "$(cat "$t/got")"

# the first all-reduce by hand: each rank's ts and dur from the kernel
# records, offsets from its end, then skew and wait
jq -r -s '(map(select(.type == "trace")) | map({key: (.t | tostring), value: .rank}) | from_entries) as $r
    | .[] | select(.type == "kernel" and .sel and (.name | startswith("ncclKernel_AllReduce")))
    | [$r[.t | tostring], .ts, .dur] | @tsv' "$t/staged" | sort -k1,1n -k2,2n |
    awk -F '\t' '!seen[$1]++' >"$t/ar1"
echo "# first all-reduce, rank ts dur:"
sed 's/^/#   /' "$t/ar1"
awk -F '\t' '
	NR == 1 { refend = $2 + $3 }
	{ s = $2 + (refend - ($2 + $3)); if (NR == 1 || s < lo) lo = s
	  if (NR == 1 || s > hi) { hi = s; last = $1 }
	  if (NR == 1 || $3 < dmin) dmin = $3; if (NR == 1 || $3 > dmax) dmax = $3
	  printf "#   rank %s offset %.0f aligned start %.0f\n", $1, refend - ($2 + $3), s }
	END { print hi - lo, dmax - dmin, last }' "$t/ar1" >"$t/hand"
grep '^#' "$t/hand"
echo "#   by hand: skew, wait, last rank = $(grep -v '^#' "$t/hand")"
ok "first all-reduce: skew, wait, last rank by hand" "$(grep -v '^#' "$t/hand")" \
    "$(jq -r 'select(.type == "collective_row" and .kind == "all-reduce" and .ordinal == 1) |
        "\(.skew_us) \(.wait_us) \(.last_rank)"' "$t/skew.jsonl")"

# where the straggler is late (issue 31), against an independent
# computation from the raw traces (tests/rank-late-check.py)
python3 "$top/tests/rank-late-check.py" "$dir" >"$t/late.want"
jq -c -S 'select(.type == "rank_row" and .straggler) | {rank, late_collectives, late_us,
    late_launch_us, late_idle_us, late_busy_us, kernel_excess_us}' "$t/skew.jsonl" >"$t/late.got"
echo "# straggler's lateness: $(cat "$t/late.got")"
ok "the straggler's lateness agrees with the raw traces" "$(jq -c -S . "$t/late.want")" \
    "$(cat "$t/late.got")"
ok "the lateness is on the straggler's host" host \
    "$(jq -r 'select(.type == "rank_row" and .straggler) | .late_in' "$t/skew.jsonl")"

# the driver: exit 0, the lowest rank's tables
"$top/scripts/triage" -q --input "$dir" >"$t/one.md"
"$top/scripts/triage" -q --all-ranks -j 2 --input "$dir" >"$t/all.md"
ok "triage --all-ranks exit status" 0 "$?"
# the same report but for the one-rank note and the Ranks section
# (and the Mode line, which says which: single trace, all ranks (4 of 8);
# and the health, which covers every rank's trace)
nohealth='/^> \*\*Trace health/d;/^## Trace health$/,/^## Legend$/{/^## Legend$/!d;};/^- \*\*Traces\*\*/d'
sed -e '/^> Note: Rank/,+1d' -e '/^- \*\*Mode\*\*/d' -e "$nohealth" "$t/one.md" >"$t/one.rest"
sed -e '/^## Ranks$/,/^## Trace health$/{/^## Trace health$/!d}' -e '/^- \*\*Mode\*\*/d' \
    -e "$nohealth" "$t/all.md" >"$t/all.rest"
ok "triage --all-ranks: Mode says so" "- **Mode**: all ranks (4 of 8)" "$(grep '^- \*\*Mode' "$t/all.md")"
ok "triage --all-ranks: the lowest rank's tables" "$(cksum <"$t/one.rest")" "$(cksum <"$t/all.rest")"
ok "the all-ranks health covers the four ranks' traces" 1 \
    "$(grep -c ' checks on 4 traces: ' "$t/all.md")"
for w in worker0 worker2 worker4 worker5; do
	ok "the all-ranks health table has $w" 1 \
	    "$(sed -n '/^## Trace health$/,/^## Legend$/p' "$t/all.md" | grep -c "^| $w" | sed 's/^[1-9][0-9]*$/1/')"
done
ok "one rank's report says it is one of four" 1 "$(grep -c '^> Note: Rank 0 of 4 analyzed' "$t/one.md")"
ok "the all-ranks report names the straggler" 1 \
    "$(grep -c '^\*\*all: rank 2 is the straggler' "$t/all.md")"
ok "the all-ranks report says where its lateness is" 1 \
    "$(grep -c "^\*\*all: rank 2's lateness is on its host" "$t/all.md")"
ok "no slow-kernel list: its kernels account for under 10%" 0 \
    "$(grep -c '^| Rank | Kernel | On this rank' "$t/all.md")"

echo "# rank rows:"
jq -r 'select(.type == "rank_row") | "#   rank \(.rank): busy \(.busy_us) us, kernels \(.kernel_us),
    comm \(.comm_us), wait \(.wait_us), last \(.last_arrivals), offset \(.offset_us)\(if .straggler then ", straggler" else "" end)"' \
    "$t/skew.jsonl" | tr -s ' \n' ' ' | sed 's/ #/\n#/g'
echo
echo "rank-skew corpus: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
