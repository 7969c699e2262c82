#!/bin/sh
# triage-render: a time that is not zero never reads as zero.  Under
# 0.005 ms "%.2f ms" prints "0.00 ms", as if the kernel took no time; the
# report says "<0.01 ms" (in markdown "\<0.01 ms", escaped; the charts,
# which show three decimals under a millisecond, "<0.001 ms"), a true zero
# stays "0.00 ms", the machine formats keep the microseconds, and --compat
# reference keeps the reference's "%.2f".
. "$(dirname "$0")/lib.sh"
GEN=$TESTDIR/gen-trace
RENDER=$BIN/triage-render

# the default trace with its rmsnorm kernels at 1.2 us: 4.8 us in 4 launches
"$GEN" -o "$T/base.json"
jq -c '.traceEvents |= map(if .cat == "kernel" and (.name | test("rmsnorm"))
    then .dur = 1.2 else . end)' "$T/base.json" >"$T/small.json"
"$TRIAGE" -q --format jsonl --input "$T/small.json" >"$T/small.jsonl"

t_markdown() {
	"$RENDER" <"$T/small.jsonl" >"$T/r.md"
	has "$T/r.md" '^| sgl_demo::rmsnorm_kernel\\<…> | norm | \\<0\.01 ms | 1\.5% | 4 | 29\.5 us | 50\.5 us | '
	# --stats: the launches' mean, min, max, p50 and p90, in microseconds below 1 ms
	"$RENDER" --stats <"$T/small.jsonl" >"$T/s.md"
	has "$T/s.md" '^| sgl_demo::rmsnorm_kernel\\<…> | norm | \\<0\.01 ms | 1\.5% | 4 | 29\.5 us | 50\.5 us | 1\.2 us | 1\.2 us | 1\.2 us | 1\.2 us | 1\.2 us |$'
	# a true zero stays a zero: no idle waiting on a synchronization, no communication
	has "$T/r.md" '^| 12 | 0\.32 ms | 0\.07 ms | 0\.02 ms | 0\.00 ms | 0\.40 ms | 0\.32 ms | 0\.00 ms | 0\.00 ms | 0\.00 ms | '
	hasnt "$T/r.md" 'rmsnorm.*| 0\.00 ms |'
}
check "markdown: a nonzero time under 0.005 ms reads <0.01 ms, a zero 0.00 ms" t_markdown

t_html() {
	"$RENDER" --format html <"$T/small.jsonl" >"$T/r.html"
	has "$T/r.html" 'data-v="4\.8">&lt;0\.01 ms</td>'
	# the charts' labels: three decimals under a millisecond, and what rounds to
	# zero without being zero reads <0.001 ms
	need_node=$(command -v node || true)
	[ -n "$need_node" ] || { echo "node not found: scripts/install-deps --test installs it"; return 1; }
	grep '^function ms(us)' "$T/r.html" >"$T/ms.js"
	eq '0.000 ms|<0.001 ms|-<0.001 ms|0.005 ms|0.120 ms|1.50 ms' "$(node -e "
	    $(cat "$T/ms.js")
	    console.log([0, 0.3, -0.3, 4.8, 120, 1500].map(ms).join('|'))")"
}
check "html: the tables' <0.01 ms, the charts' <0.001 ms" t_html

t_machine() {
	# the machine formats keep the microseconds
	"$RENDER" --format csv --table kernel <"$T/small.jsonl" | tr -d '\r' >"$T/k.csv"
	eq '4.8,1.2,1.2,1.2' "$(awk -F, '/rmsnorm/ { print $6 "," $11 "," $12 "," $13 }' "$T/k.csv")" \
	    "total_us, mean_us, min_us, max_us"
	"$RENDER" --format json <"$T/small.jsonl" >"$T/r.json"
	eq '4.8 1.2 1.2' "$(jq -r '.reports[0].tables[] | select(.table == "kernel") | .rows[] |
	    select(.kernel | test("rmsnorm")) | "\(.total_us) \(.mean_us) \(.p90_us)"' "$T/r.json")"
}
check "csv, json: the microseconds as they are" t_machine

t_compat() {
	# the reference prints %.2f of ms: its 0.00 ms stays, byte for byte
	"$TRIAGE" -q --compat reference --input "$T/small.json" >"$T/c.md"
	has "$T/c.md" '^| void sgl_demo::rmsnorm_kernel<__nv_bfloat16, 8> | norm | 0\.00 ms | 1\.5% | 4 | '
	hasnt "$T/c.md" '<0\.01'
}
check "--compat reference: the reference's 0.00 ms" t_compat

t_diff() {
	# a change of 4 us in 4.8 us: signed, never an unsigned zero
	jq -c '.traceEvents |= map(if .cat == "kernel" and (.name | test("rmsnorm"))
	    then .dur = 2.2 else . end)' "$T/base.json" >"$T/cand.json"
	"$TRIAGE" -q --baseline "$T/small.json" --input "$T/cand.json" >"$T/d.md"
	has "$T/d.md" '^| sgl_demo::rmsnorm_kernel\\<…> | changed | \\<0\.01 ms | 0\.01 ms | +\\<0\.01 ms | +83\.3% | '
	"$TRIAGE" -q --baseline "$T/cand.json" --input "$T/small.json" >"$T/d2.md"
	has "$T/d2.md" '^| sgl_demo::rmsnorm_kernel\\<…> | changed | 0\.01 ms | \\<0\.01 ms | -\\<0\.01 ms | -45\.5% | '
}
check "the comparison: a change under 0.005 ms keeps its sign" t_diff

done_testing
