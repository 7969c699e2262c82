#!/bin/sh
# overlap-sweep on kernels that all overlap one another and on many CPU ops
# under one External id (issue 21: 100,000 took 17.7 s and 9.6 s).  The
# sweep's two ways of summing against a naive recomputation; the rows of a
# 4,000-kernel mutual overlap against an awk recomputation of the same
# ratios; and an External id shared by 3,000 ops attributing every kernel.
. "$(dirname "$0")/lib.sh"

LIB=$BIN/../libcommon.a
CC=${CC:-cc}
GEN=$TESTDIR/gen-hostile
PYTHON=${PYTHON:-python3}

t_sweep() {
	[ -f "$LIB" ] || { echo "no $LIB"; return 1; }
	san=
	if nm "$LIB" 2>/dev/null | grep -q __asan; then
		san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
	fi
	# shellcheck disable=SC2086
	"$CC" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $san -iquote "$TOP/common" \
	    -iquote "$TOP/cmd/overlap-sweep" -o "$T/sweep-check" \
	    "$FIX/overlap-sweep/sweep-check.c" "$TOP/cmd/overlap-sweep/sweep.c" "$LIB" \
	    $COMMON_LIBS
	"$T/sweep-check" >"$T/out" || { cat "$T/out"; return 1; }
	cat "$T/out"
	has "$T/out" '^sweep: 400 sets, 0 failed$'
}
check "the plain sweep equals a naive recomputation bit for bit, the running totals to 1e-9" t_sweep

t_mutual() {
	# 4,000 kernels overlapping one another on one stream, every eighth on
	# another: 7 million additions, past the plain loop's budget, so the
	# running totals answer
	"$GEN" overlap 4000 >"$T/ov.json"
	"$TRIAGE" -q --mapping-input "$T/ov.json" --formal-input "$T/ov.json" --format jsonl \
	    --overlap-table-limit 0 >"$T/rec.jsonl"
	jq -r 'select(.type == "overlap_row") | [.kernel, .total_us, .exclusive_ratio,
	    .hidden_ratio] | @tsv' "$T/rec.jsonl" | sort >"$T/got"
	eq 5 "$(wc -l <"$T/got" | tr -d ' ')" "rows"
	# Python: a kernel is hidden where both streams are busy, exclusive elsewhere
	"$BIN/trace-extract" -q "$T/ov.json" | jq -c 'select(.type == "kernel") |
	    [.name, .stream, .ts, .dur]' | "$PYTHON" -c '
import json, sys
ks = [json.loads(l) for l in sys.stdin]
def union(iv):
    out = []
    for a, b in sorted(iv):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out
u = {s: union([(k[2], k[2] + k[3]) for k in ks if k[1] == s]) for s in ("7", "9")}
both = [(max(a, c), min(b, d)) for a, b in u["7"] for c, d in u["9"] if max(a, c) < min(b, d)]
tot, hid = {}, {}
for n, s, ts, dur in ks:
    h = sum(max(0, min(ts + dur, b) - max(ts, a)) for a, b in both)
    tot[n] = tot.get(n, 0) + dur
    hid[n] = hid.get(n, 0) + h
for n in sorted(tot):
    print("%s\t%r\t%.15f\t%.15f" % (n, tot[n], (tot[n] - hid[n]) / tot[n], hid[n] / tot[n]))
' | sort >"$T/want"
	join -t "$(printf '\t')" "$T/got" "$T/want" | awk -F '\t' '
	function d(a, b) { return a > b ? a - b : b - a }
	{ n++; if (d($2, $5) > 1e-6 || d($3, $6) > 1e-9 || d($4, $7) > 1e-9) { print "differs: " $0; bad = 1 } }
	END { if (n != 5) { print n " rows joined"; exit 1 } exit bad }'
}
check "4,000 mutually overlapping kernels: each row's ratios as a Python recomputation" t_mutual

t_shared_ext() {
	# 3,500 ops under External id 1, op i in frame op<i mod 7>.py, kernel i
	# 1 us after op i: each kernel's context is the nearest op, so
	# kernel_<k> comes from op<k>.py, never from the first op of the list
	"$GEN" ext 3500 7 >"$T/ext.json"
	"$TRIAGE" -q --mapping-input "$T/ext.json" --formal-input "$T/ext.json" --format jsonl \
	    --overlap-table-limit 0 >"$T/rec.jsonl"
	jq -r 'select(.type == "overlap_row") | [.kernel, .python_scope] | @tsv' "$T/rec.jsonl" |
	    sort >"$T/got"
	[ "$(wc -l <"$T/got")" -ge 5 ]
	awk -F '\t' '{ k = substr($1, 8); if ($2 != "python/sglang/srt/layers/op" k ".py:1" k " forward") {
	    print "wrong scope: " $0; bad = 1 } } END { exit bad }' "$T/got"
}
check "3,500 CPU ops under one External id: every kernel takes the nearest op's scope" t_shared_ext

done_testing
