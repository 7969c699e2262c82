# An independent computation of rank-skew's collective figures, for tests:
# jq -r -s --arg coll RE --arg align RE -f tests/rank-skew-check.jq STAGED
#
# STAGED is `trace-extract --all-ranks | trace-stage` output (one trace per
# rank, distinct trace indexes).  Collectives are the selected kernels whose
# name matches $coll; they are matched by name and ordinal (each name is its
# own kind here), the clocks aligned on the end of each rank's first kernel
# matching $align.  A rank is last only when it starts later than the first
# by more than the median end spread of the stage's collectives (at least
# 1 us).  Prints per matched collective, in stage and start order:
#   stage <TAB> name <TAB> ordinal <TAB> skew_us <TAB> wait_us <TAB> last_rank
# with figures to three decimals.

def fmt: (. * 1000 | round) / 1000 | tostring;

(map(select(.type == "trace")) | map({key: (.t | tostring), value: .rank}) | from_entries) as $rank
| [.[] | select(.type == "kernel" and .sel == true and (.name | test($coll)))
    | {rank: $rank[.t | tostring], stage, name, ts, dur}]
| group_by(.stage)[]
| . as $k
| ($k | map(.rank) | unique) as $ranks
| ($k | map(select(.name | test($align))) | group_by(.rank)
    | map(sort_by(.ts)[0] | {key: (.rank | tostring), value: (.ts + .dur)}) | from_entries) as $fin
| ($fin[$ranks[0] | tostring]) as $refend
| [$k[] | . + {ats: (.ts + ($refend - $fin[.rank | tostring]))}] as $a
| [$a | group_by(.name)[] | . as $byname
    | ($ranks | map(. as $r | $byname | map(select(.rank == $r)) | sort_by(.ts))) as $per
    | range(0; $per[0] | length) as $i
    | ($per | map(.[$i])) as $row
    | ($row | map(.ats) | max) as $late
    | {stage: $row[0].stage, name: $row[0].name, ordinal: ($i + 1),
       first: ($row | map(.ats) | min),
       skew: ($late - ($row | map(.ats) | min)),
       wait: (($row | map(.dur) | max) - ($row | map(.dur) | min)),
       spread: (($row | map(.ats + .dur) | max) - ($row | map(.ats + .dur) | min)),
       last: ($row | map(select(.ats == $late)) | sort_by(.dur, .rank) | .[0].rank)}]
# a rank is last only past the clocks' agreement: the median end spread, at least 1 us
| (map(.spread) | sort | if length % 2 == 1 then .[length / 2 | floor]
    else (.[length / 2 - 1] + .[length / 2]) / 2 end) as $med
| ([$med, 1] | max) as $tol
| map(if .skew > $tol then . else .last = null end)
| sort_by(.first)[]
| [.stage, .name, (.ordinal | tostring), (.skew | fmt), (.wait | fmt), (.last | tostring)]
| join("\t")
