# An independent computation of trace-diff's figures, for tests:
# jq -n -r --slurpfile base B --slurpfile cand C --slurpfile diff D \
#    --argjson merge false -f tests/trace-diff-check.jq
#
# B and C are the two runs' records (triage --format jsonl), D trace-diff's
# output.  From the kernel_row and gpu_time records alone, per stage: each
# side's GPU time (the sum of its rows), its steps, and per canonical name
# its time and launches; times per step when both sides have steps in
# different numbers (trace-diff(1), "Steps").  Then every diff_row must
# agree: name-matched rows to the names' times, new and removed rows to the
# names found on one side only, every name of each side in exactly one row
# (a family row counts its base_names / cand_names), the rows adding up to
# the stage on each side, delta_us = cand_us - base_us, the same/changed
# rule; and each stage verdict's delta_pct to the totals.  Prints "BAD ..."
# lines, then one "OK ..." or "FAIL ..." summary line.

def close($a; $b): ($a - $b | fabs) <= 1e-9 * ([($a | fabs), ($b | fabs), 1] | max);
def stagename: if $merge then "all" elif (. // "") == "" then "all" else . end;

def side($recs):
  reduce ($recs[] | select(.type == "kernel_row")) as $k ({};
      ($k.stage | stagename) as $s
      | .[$s].total += $k.total_us
      | .[$s].names[$k.kernel].us += $k.total_us
      | .[$s].names[$k.kernel].launches += ($k.launches // 0))
  | reduce ($recs[] | select(.type == "gpu_time")) as $g (.;
      ($g.stage | stagename) as $s
      | if .[$s] then .[$s].steps += ($g.steps // 0) else . end);

side($base) as $b
| side($cand) as $c
| [$diff[] | select(.type == "diff_row")] as $rows
| [($b | keys[]), ($c | keys[])] | unique
| map(. as $s
    | ($b[$s] // null) as $bs | ($c[$s] // null) as $cs
    | (($bs.steps // 0) > 0 and ($cs.steps // 0) > 0 and $bs.steps != $cs.steps) as $ps
    | (if $ps then $bs.steps else 1 end) as $bd
    | (if $ps then $cs.steps else 1 end) as $cd
    | [$rows[] | select(.stage == $s)] as $r
    | [
        # the rows add up to the stage on each side
        (if $bs and (close($r | map(.base_us) | add; $bs.total / $bd) | not)
         then "\($s): baseline rows add up to \($r | map(.base_us) | add), jq \($bs.total / $bd)" else empty end),
        (if $cs and (close($r | map(.cand_us) | add; $cs.total / $cd) | not)
         then "\($s): candidate rows add up to \($r | map(.cand_us) | add), jq \($cs.total / $cd)" else empty end),
        # every name of a side in exactly one row
        (($bs.names // {} | length) as $n
         | ($r | map(if .status == "new" then 0 elif .base_names then .base_names else 1 end) | add // 0) as $m
         | if $n != $m then "\($s): \($n) baseline names, \($m) in the rows" else empty end),
        (($cs.names // {} | length) as $n
         | ($r | map(if .status == "removed" then 0 elif .cand_names then .cand_names else 1 end) | add // 0) as $m
         | if $n != $m then "\($s): \($n) candidate names, \($m) in the rows" else empty end),
        ($r[] | . as $x
         | (if close($x.delta_us; $x.cand_us - $x.base_us) | not
            then "\($s): \($x.kernel): delta_us \($x.delta_us) is not cand_us - base_us" else empty end),
           (if $x.match == "name" then
              ($bs.names[$x.kernel]) as $bn | ($cs.names[$x.kernel]) as $cn
              | if ($bn == null or $cn == null) then "\($s): \($x.kernel) matched by name, not on both sides"
                elif (close($x.base_us; $bn.us / $bd) and close($x.cand_us; $cn.us / $cd)
                    and $x.base_launches == $bn.launches and $x.cand_launches == $cn.launches) | not
                then "\($s): \($x.kernel): \($x.base_us) / \($x.cand_us) vs jq \($bn.us / $bd) / \($cn.us / $cd)"
                else
                  ((($x.delta_us | fabs) <= 0.01 * ([$x.base_us, $x.cand_us] | max)
                    and $bn.launches * $cd == $cn.launches * $bd) as $same
                   | if ($x.status == "same") != $same then "\($s): \($x.kernel): status \($x.status)" else empty end)
                end
            elif $x.status == "new" then
              if ($bs.names[$x.kernel] != null) or ($cs.names[$x.kernel] == null)
                 or (close($x.cand_us; $cs.names[$x.kernel].us / $cd) | not)
              then "\($s): new \($x.kernel) is not a candidate-only name of that time" else empty end
            elif $x.status == "removed" then
              if ($cs.names[$x.kernel] != null) or ($bs.names[$x.kernel] == null)
                 or (close($x.base_us; $bs.names[$x.kernel].us / $bd) | not)
              then "\($s): removed \($x.kernel) is not a baseline-only name of that time" else empty end
            elif $x.match == "family" and ($x.base_names | not) then
              if ($bs.names[$x.base_kernel] == null) or ($cs.names[$x.kernel] == null)
                 or ($bs.names[$x.kernel] != null) or ($cs.names[$x.base_kernel] != null)
              then "\($s): family pair \($x.base_kernel) -> \($x.kernel) is not two one-sided names" else empty end
            else empty end)),
        # the verdict from the totals
        (if $bs and $cs and $bs.total > 0 then
           (100 * ($cs.total / $cd - $bs.total / $bd) / ($bs.total / $bd)) as $want
           | ([$diff[] | select(.type == "verdict" and .scope == $s)][0].delta_pct) as $got
           | if close($got; $want) | not then "\($s): verdict delta_pct \($got), jq \($want)" else empty end
         else empty end)
      ] as $bad
    | {stage: $s, bad: $bad,
       sum: "\($s): \($r | length) rows (\([$r[] | select(.status == "same")] | length) same, \([$r[] | select(.status == "changed")] | length) changed, \([$r[] | select(.status == "new")] | length) new, \([$r[] | select(.status == "removed")] | length) removed)\(if $ps then " per step \($bs.steps)/\($cs.steps)" else "" end)"})
| (map(.bad[] | "BAD " + .)[]),
  (if map(.bad | length) | add > 0 then "FAIL" else "OK " + (map(.sum) | join("; ")) end)
