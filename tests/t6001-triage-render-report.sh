# triage-render's structured report, read back the way its readers read it:
# markdown through a CommonMark (GFM tables) parser, CSV through Python's csv
# module, JSON through json.load, HTML in a headless browser (the charts'
# script ran without errors, one segment per category, a screenshot), and
# bundles of several runs.  The fixture's numbers are chosen by hand, so
# every asserted value is known in advance.
. "$(dirname "$0")/lib.sh"
F=$FIX/triage-render/report.jsonl
RENDER=$BIN/triage-render

need() {
	command -v "$1" >/dev/null 2>&1 && return 0
	echo "$1 not found: scripts/install-deps installs it"
	return 1
}

t_markdown_structure() {
	need cmark-gfm
	"$RENDER" <"$F" >"$T/r.md"
	cmark-gfm -e table "$T/r.md" >"$T/r.html"
	# the outline: title, sections, stages
	eq "h1:Triage report: Qwen3-8B h2:GPU time h3:decode h2:Kernels h3:extend/prefill h3:decode h2:Overlap opportunities h3:decode h2:Fuse opportunities h3:decode h2:Fusions already in use h3:decode h2:Ranks h3:decode h2:Trace health h2:Legend" \
	    "$(grep -o '<h[1-3]>[^<]*</h[1-3]>' "$T/r.html" | sed 's/<h\([1-3]\)>\(.*\)<\/h[1-3]>/h\1:\2/' |
	    tr '\n' ' ' | sed 's/ $//')"
	# every table parsed as one: gpu, step, 2 kernel, overlap, fuse, in use,
	# rank, collective, rank_kernel, health
	eq 11 "$(grep -c '<table>' "$T/r.html")" "tables"
	# values as computed by hand: 600 us of 1000 us is 60.0%
	has "$T/r.md" '^| cutlass::Kernel2\\<cutlass_80_tensorop_bf16\\_…\\_64x64_32x6_tn_align8> | gemm | 0.60 ms | 60.0% | 10 | python/sglang/srt/layers/linear.py:300 forward | aten::mm |$'
	has "$T/r.md" '^1 more kernel name below the 1.0% bar or the row limit: 0.5% of the stage.s GPU time.$'
	# every share names its base (issue 25): the categories of the kernel time, idle of the span
	has "$T/r.md" '^\*\*decode: 1.00 ms of kernel time (0.95 ms GPU busy: overlapping items counted once) in 42 kernels over 2 steps; of the kernel time: gemm 60%, attention 30%, elementwise 10%; GPU idle 21% of the span; 0% of the busy time in CUDA graphs.\*\*$'
	has "$T/r.md" '^| GPU items | GPU busy | GPU idle | Idle waiting for the host | Idle waiting on a synchronization | Span | Busy: compute | Busy: communication, no compute | Busy: memory only | Communication total | Communication under compute | Busy in CUDA graphs | Steps | Step period p50 | Step period p90 | Step period max | Last step period | Tokens/s |$'
	has "$T/r.md" '^> \*\*Trace health: degraded.\*\* No Python stacks (with_stack) (no_python_stacks): the kernel and fuse tables are less trustworthy.$'
	# the check that passed is counted, not listed (issue 31)
	has "$T/r.md" '^| t.json | no_python_stacks | warn | 0 | no python_function events | kernel, fuse |$'
	hasnt "$T/r.md" '^| t.json | truncated '
	has "$T/r.md" '^1 other check passed.$'
	has "$T/r.md" '^\*\*decode: rank 1 is the straggler (last to arrive at 2 of 2 matched collectives); the ranks waited 0.01 ms to 0.08 ms in collectives.\*\*$'
	# a clock offset of 3 us: under 0.005 ms, not none
	has "$T/r.md" '^| 1 | 0.99 ms | 1.04 ms | 0.03 ms | 0.01 ms | 2 | 2 | \\<0.01 ms | yes |$'
	has "$T/r.md" '^| SiLU + Mul | 0.00 ms | 0.0% | silu_and_mul | - |$'
	has "$T/r.md" '^> Note: A note to pass on.$'
	# the in-use fusion is not an opportunity
	eq 1 "$(sed -n '/^## Fuse opportunities/,/^## Fusions already/p' "$T/r.md" | grep -c '^| [A-Z].* | Confirmed |')"
}
check "markdown: a CommonMark outline, tables that parse, hand-computed values" t_markdown_structure

# Issue 25: the last step's period stands apart, marked in the step table,
# and a rate taken from it (no complete step had a count) says so.
# A figure too large for a double (1e999) in a table record is refused,
# whichever path the record reader takes (the fast one for our writers'
# layout, the general one for any other): a report never prints inf.
t_infinite_figure() {
	_rep=$FIX/triage-render/report.jsonl
	sed '0,/"type":"kernel_row"/s/"share_pct":60,/"share_pct":1e999,/' "$_rep" >"$T/inf1.jsonl"
	sed '0,/"type":"gpu_time"/s/"busy_us":950,/"busy_us":1e999,/' "$_rep" >"$T/inf2.jsonl"
	sed '0,/"type":"gpu_time"/s/^{"type":"gpu_time","t":0,/{"t":0,"type":"gpu_time",/' \
	    "$T/inf2.jsonl" >"$T/inf3.jsonl"
	for f in inf1 inf2 inf3; do
		grep -q 1e999 "$T/$f.jsonl" || { echo "$f: no 1e999"; return 1; }
		for fmt in md json csv; do
			status 1 "$BIN/triage-render" -q --format "$fmt" "$T/$f.jsonl" >"$T/out" 2>"$T/err" ||
			    return 1
			has "$T/err" "member '[a-z_]*' is not a finite number (too large for a double)"
		done
	done
}
check "a figure too large for a double: exit 1, never an inf in a report" t_infinite_figure

t_last_step() {
	sed -e '/"type":"gpu_time"/s/}$/,"complete_steps":1,"step_last_us":800,"tokens_per_s":10000,"tokens_from_last":true}/' \
	    -e '/"index":1,/s/}$/,"period_us":800,"last":true}/' "$F" | "$RENDER" >"$T/r.md"
	has "$T/r.md" '^| 42 | 0.95 ms | 0.25 ms | 0.20 ms | - | 1.20 ms | .* | 2 | 0.55 ms | 0.59 ms | 0.60 ms | 0.80 ms | 10000 (last step) |$'
	has "$T/r.md" '^| 1 | ProfilerStep#2 | 8 | - | 0.80 ms (last) | 0.60 ms | 0.48 ms | 0.60 ms | 21 |$'
	# a rate with a fraction is rounded in the text, whole for machines
	sed -e '/"type":"gpu_time"/s/}$/,"complete_steps":1,"step_last_us":800,"tokens_per_s":67.5739,"tokens_from_last":true}/' \
	    -e '/"index":1,/s/}$/,"period_us":800,"last":true}/' "$F" >"$T/r.jsonl"
	"$RENDER" <"$T/r.jsonl" >"$T/r.md"
	has "$T/r.md" '| 68 (last step) |$'
	"$RENDER" --format csv --table gpu <"$T/r.jsonl" >"$T/r.csv"
	has "$T/r.csv" ',800,67.5739'
}
check "the last step apart: its period marked, a rate from it named" t_last_step

# The periods are the host's: a report says when the host ran ahead of the
# GPU (step-stats' steps_host_ahead: the complete steps' busy p50 over their
# period p50), and when a rate of the last step alone comes from a period
# its GPU work spans under half.
t_step_caveats() {
	sed -e '/"type":"gpu_time"/s/"step_p50_us":550,/"step_p50_us":400,"step_busy_p50_us":470,"steps_host_ahead":true,/' \
	    "$F" >"$T/ahead.jsonl"
	"$RENDER" <"$T/ahead.jsonl" >"$T/r.md"
	has "$T/r.md" "^The complete steps' GPU work (busy p50 0.47 ms) is longer than their period (p50 0.40 ms, on the host's clock): the host queued steps ahead of the GPU"
	# machines read it in the gpu table's columns, as markdown does not show
	"$RENDER" --format csv --table gpu <"$T/ahead.jsonl" | tr -d '\r' >"$T/g.csv"
	eq 'step_busy_p50_us 470' "$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "step_busy_p50_us") c = i }
	    NR == 2 { print "step_busy_p50_us", $c }' "$T/g.csv")"
	hasnt "$T/r.md" 'Step GPU busy p50'
	"$RENDER" <"$F" >"$T/r0.md"
	hasnt "$T/r0.md" 'queued steps ahead|last step.s alone'
	sed -e '/"type":"gpu_time"/s/}$/,"complete_steps":1,"step_last_us":800,"tokens_per_s":10000,"tokens_from_last":true}/' \
	    -e '/"index":1,/s/"gpu_span_us":600}$/"gpu_span_us":300,"period_us":800,"last":true}/' "$F" |
	    "$RENDER" >"$T/r.md"
	has "$T/r.md" "^Tokens per second are the last step's alone, and its GPU work spans 0.30 ms of its 0.80 ms period (38%)"
}
check "step caveats: the host queued steps ahead; a last-step rate from a stalled period" t_step_caveats

# A CSV of a table with no rows is a bare header: stderr says why.
t_csv_empty_reason() {
	grep -v '"type":"overlap_row"' "$F" | "$RENDER" --format csv --table overlap >"$T/o.csv" 2>"$T/o.err"
	eq 1 "$(wc -l <"$T/o.csv" | tr -d ' ')" "lines (the header)"
	has "$T/o.err" 'the overlap table has no rows: '
	"$RENDER" --format csv --table kernel <"$F" >/dev/null 2>"$T/k.err"
	hasnt "$T/k.err" 'has no rows'
}
check "a CSV table without rows says why on stderr" t_csv_empty_reason

# A trace that is mostly CUDA-graph captures times the capture: the banner says so.
t_capture_banner() {
	printf '%s\n' \
	    '{"type":"trace","v":1,"t":0,"role":"single","path":"/p/cap.json","stage":"all"}' \
	    '{"type":"health","t":0,"role":"single","path":"/p/cap.json","verdict":"unusable","checks":[{"id":"graph_launch_without_kernels","status":"fail","value":361,"detail":"361 of 460 launches were made inside 25 CUDA-graph captures (torch.cuda.graph capture_begin .. capture_end): recorded into a graph, never run, so without kernels","affects":["kernel","overlap","fuse","gpu_time"]}]}' \
	    '{"type":"stats","t":0,"events":1}' | "$RENDER" >"$T/cap.md" 2>/dev/null
	has "$T/cap.md" '^> \*\*Trace health: unusable.\*\* A trace of CUDA-graph captures, whose launches were recorded into graphs and never ran: it times the capture, not serving; profile the replays (graph_launch_without_kernels)'
}
check "a trace of CUDA-graph captures: the banner says it times the capture" t_capture_banner

# Issue 25: idle time with the host blocked in a synchronizing call is its
# own column, and a line names the longest such wait and its call.
t_sync_idle() {
	sed -e '/"type":"gpu_time"/s/"idle_launch_us":200,/"idle_launch_us":10,"idle_sync_us":180,"sync_gap_us":150,"sync_gap_ts":300,"sync_gap_call":"hipMemcpyWithStream",/' \
	    -e '/"type":"gpu_time"/a {"type":"launch_delay","t":0,"stage":"decode","launches":40,"p50_us":20,"p90_us":30,"max_us":200,"threshold_us":100,"over":1,"verdict":"stalled"}' \
	    "$F" | "$RENDER" >"$T/r.md"
	has "$T/r.md" '^| 42 | 0.95 ms | 0.25 ms | 0.01 ms | 0.18 ms | 1.20 ms |'
	has "$T/r.md" ' Of the idle time, 0.18 ms (15% of the span) the host sat blocked in a synchronizing call while the GPU waited with work queued: both waited on a synchronization (an event, a synchronous copy or a stream behind one), not on each other; the longest such wait 0.15 ms, in hipMemcpyWithStream.$'
}
check "idle waiting on a synchronization: a column, and the longest wait named" t_sync_idle

# Issue 25: a count of work items that holds copies says so.
t_items_count() {
	sed -e '/"type":"gpu_time"/s/"kernels":42,/"kernels":42,"copies":5,/' "$F" | "$RENDER" >"$T/r.md"
	has "$T/r.md" '^\*\*decode: 1.00 ms of kernel time (0.95 ms GPU busy: overlapping items counted once) in 42 GPU items (37 kernels, 5 copies and sets) over 2 steps;'
	has "$T/r.md" '^| Step | Marker | Batch | Tokens | Period | CPU marker | GPU busy | GPU span | GPU items |$'
	# one of each: singular words
	# the machine formats: every GPU item (items), the kernels and the copies and sets
	# apart, and the kernel time (columns markdown leaves to the headline)
	sed -e '/"type":"gpu_time"/s/"kernels":42,/"kernels":42,"copies":5,/' "$F" |
	    "$RENDER" --format csv --table gpu >"$T/g.csv"
	eq "stage,items,kernels,copies,kernel_us,busy_us" "$(head -n 1 "$T/g.csv" | cut -d, -f1-6)"
	eq "decode,42,37,5,1000,950" "$(sed -n 2p "$T/g.csv" | cut -d, -f1-6)"
	"$RENDER" --format csv --table gpu <"$F" | sed -n 2p | cut -d, -f1-5 >"$T/g0"
	eq "decode,42,42,0,1000" "$(cat "$T/g0")"
	sed -e '/"type":"gpu_time"/s/"kernels":42,/"kernels":42,"copies":5,/' "$F" |
	    "$RENDER" --format json >"$T/g.json"
	eq '42 37 5 1000' "$(jq -r '.reports[0].tables[] | select(.table == "gpu") | .rows[0] |
	    "\(.items) \(.kernels) \(.copies) \(.kernel_us)"' "$T/g.json")"
	hasnt "$T/r.md" 'Copies and sets |'
	hasnt "$T/r.md" '| Kernels |'
	sed -e '/"type":"gpu_time"/s/"kernels":42,/"kernels":2,"copies":1,/' "$F" | "$RENDER" >"$T/r1.md"
	has "$T/r1.md" ' in 2 GPU items (1 kernel, 1 copy or set) over 2 steps;'
	sed -e '/"type":"gpu_time"/s/"kernels":42,/"kernels":1,/' "$F" | "$RENDER" >"$T/r2.md"
	has "$T/r2.md" ' in 1 kernel over 2 steps;'
}
check "GPU items: kernels and copies counted apart in the headline" t_items_count

# Issue 25: in a stage whose items interleave with another's, the span
# time when only the other stage ran is neither busy nor idle: of the 1.20
# ms span, 0.95 ms busy, 0.07 ms idle (6%), 0.18 ms the other stage's (15%).
t_other_stages() {
	sed -e '/"type":"gpu_time"/s/"idle_us":250,"idle_launch_us":200,/"idle_us":70,"idle_launch_us":20,"other_stages_us":180,/' "$F" | "$RENDER" >"$T/r.md"
	has "$T/r.md" '; GPU idle 6% of the span, only other stages. work 15% of it; 0% of the busy time in CUDA graphs.\*\*$'
	# the table says it too, between idle and span: 0.95 + 0.07 + 0.18 = 1.20
	has "$T/r.md" '^| GPU items | GPU busy | GPU idle | Idle waiting for the host | Idle waiting on a synchronization | Only other stages busy | Span |'
	has "$T/r.md" '^| 42 | 0\.95 ms | 0\.07 ms | 0\.02 ms | - | 0\.18 ms | 1\.20 ms |'
	# where no other stage ran, no such column; machines always have it
	"$RENDER" <"$F" >"$T/r0.md"
	hasnt "$T/r0.md" 'Only other stages busy'
	"$RENDER" --format csv --table gpu <"$F" | head -n 1 | grep -q ',idle_sync_us,other_stages_us,span_us,'
}
check "interleaved stages: the headline names the other stages' share of the span" t_other_stages

t_csv() {
	for tb in kernel overlap fuse fuse_in_use gpu step rank collective rank_kernel health; do
		"$RENDER" --format csv --table "$tb" <"$F" >"$T/$tb.csv" || return 1
	done
	python3 - "$T" <<'EOF' || return 1
import csv, sys
d = sys.argv[1]
def rows(name):
    with open(f"{d}/{name}.csv", newline="") as f:
        return list(csv.DictReader(f))
k = rows("kernel")
assert [r["stage"] for r in k] == ["extend", "extend", "decode", "decode", "decode"], k
assert k[2]["kernel"].startswith("void cutlass::Kernel2<cutlass_80_tensorop"), k[2]
# the short name beside the whole one; the records' member names as columns
assert k[2]["kernel_short"] == "cutlass::Kernel2<cutlass_80_tensorop_bf16_…_64x64_32x6_tn_align8>", k[2]
assert list(k[0].keys()) == ["stage", "kernel", "kernel_short", "category", "total_us",
    "share_pct", "launches", "mean_us", "min_us", "max_us", "p50_us", "p90_us", "location",
    "cpu_op"], list(k[0].keys())
assert float(k[2]["total_us"]) == 600 and float(k[2]["share_pct"]) == 60, k[2]
assert int(k[2]["launches"]) == 10
# a figure the records do not have (kernel-map's statistics): an empty cell, not "-"
assert k[2]["mean_us"] == "" and k[2]["p90_us"] == "", k[2]
r = rows("rank")
assert [(x["rank"], x["straggler"]) for x in r] == [("0", ""), ("1", "yes")], r
assert float(r[0]["wait_us"]) == 80
h = rows("health")
assert [(x["check"], x["status"]) for x in h] == [("no_python_stacks", "warn"), ("truncated", "ok")]
g = rows("gpu")
assert float(g[0]["idle_launch_us"]) == 200 and float(g[0]["step_p50_us"]) == 550
s = rows("step")
assert [float(x["cpu_us"]) for x in s] == [500, 600]
assert [x["batch"] for x in s] == ["8", "8"] and [x["tokens"] for x in s] == ["", ""], s
c = rows("collective")
assert [int(x["ordinal"]) for x in c] == [1, 2] and float(c[0]["skew_us"]) == 40
for name in ("overlap", "fuse", "fuse_in_use", "rank_kernel"):
    assert len(rows(name)) == 1, name
EOF
	# one file per table with -o DIR/, the same bytes as --table
	"$RENDER" --format csv -o "$T/all/" <"$F"
	same "$T/kernel.csv" "$T/all/kernel.csv"
	same "$T/health.csv" "$T/all/health.csv"
	# TSV: as many fields on every line as in the header
	"$RENDER" --format tsv --table kernel <"$F" >"$T/k.tsv"
	eq 1 "$(awk -F'\t' '{print NF}' "$T/k.tsv" | sort -u | wc -l)" "TSV field counts"
	# a name no report has: exit 2 before any record is read (stdin is never read)
	status 2 "$RENDER" --format csv --table nosuch </dev/full 2>"$T/err"
	usage_err "$T/err" triage-render "bad --table value, not a table of the report (gpu, launch, stream, annotation, step, escape, kernel, roofline, unmodeled, overlap, fuse, fuse_in_use, rank, collective, rank_kernel, health, verdict, diff_gpu, diff, diff_fuse, diff_overlap, runs): nosuch"
	# a table of other reports only: said once the records are read
	status 2 "$RENDER" --format csv --table verdict <"$F" 2>"$T/err"
	has "$T/err" "no table .verdict. in this report; it has: gpu, step, kernel, overlap, fuse, fuse_in_use, rank, collective, rank_kernel, health$"
}
check "csv/tsv: every table parses with named columns and raw numbers" t_csv

t_precision() {
	# sums of floating-point durations carry noise; the machine formats
	# round each figure to its precision: microseconds and percentages to 3
	# decimals, ratios to 5
	jq -c 'if .type == "kernel_row" and .stage == "decode" and .total_us == 600 then
	    .total_us = 29461.400999999998 | .share_pct = 60.00000000000001 |
	    .mean_us = 2946.1400999999996 | .min_us = 10 | .max_us = 5000.0005 | .p50_us = 2900 |
	    .p90_us = 4999.99999999 else . end |
	    if .type == "overlap_row" then .exclusive_ratio = 0.8999999999999999 else . end' "$F" \
	    >"$T/noise.jsonl"
	"$RENDER" --format csv --table kernel <"$T/noise.jsonl" >"$T/n.csv"
	has "$T/n.csv" ',gemm,29461.401,60,10,2946.14,10,5000.001,2900,5000,'
	"$RENDER" --format csv --table overlap <"$T/noise.jsonl" >"$T/o.csv"
	has "$T/o.csv" ',300,30,0.9,0.1,low,'
	"$RENDER" --format json <"$T/noise.jsonl" >"$T/n.json"
	eq '29461.401 2946.14 5000.001' "$(jq -r '.reports[0].tables[] | select(.table == "kernel" and
	    .stage == "decode") | .rows[0] | "\(.total_us) \(.mean_us) \(.max_us)"' "$T/n.json")"
	# markdown: the statistics as a column set with --stats, in place of the sites
	"$RENDER" --stats <"$T/noise.jsonl" >"$T/s.md"
	has "$T/s.md" '^| Kernel | Category | GPU time | Share | Launches | Mean | Min | Max | p50 | p90 |$'
	has "$T/s.md" '^| cutlass::Kernel2\\<cutlass_80_tensorop_bf16\\_…\\_64x64_32x6_tn_align8> | gemm | 29.46 ms | 60.0% | 10 | 2946.1 us | 10.0 us | 5000.0 us | 2900.0 us | 5000.0 us |$'
	"$RENDER" <"$T/noise.jsonl" >"$T/m.md"
	hasnt "$T/m.md" '| Mean |'
	# HTML: on the GPU time's hover
	"$RENDER" -f html <"$T/noise.jsonl" >"$T/s.html"
	has "$T/s.html" 'title="per launch: mean 2946.1 us, min 10.0 us, max 5000.0 us, p50 2900.0 us, p90 5000.0 us"'
}
check "csv, json: figures rounded to their precision; --stats and hover: the duration statistics" t_precision

t_json() {
	"$RENDER" --format json <"$F" >"$T/r.json"
	python3 - "$T/r.json" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
r = doc["reports"][0]
assert r["health"] == {"verdict": "degraded",
    "text": "No Python stacks (with_stack) (no_python_stacks): the kernel and fuse tables "
    "are less trustworthy."}, r["health"]
# every check, the passed one too: machines want them all (issue 31)
hr = [t for t in r["tables"] if t["table"] == "health"][0]["rows"]
assert [x["check"] for x in hr] == ["no_python_stacks", "truncated"], hr
# the facts are fields with the figures; the labels' phrases are md and HTML's
f = r["facts"]
assert f["model"] == "Qwen/Qwen3-8B", f
# the fixture holds rank-skew's rows: all ranks (issue 25)
assert f["mode"] == "all_ranks" and f["framework"] == "sglang", f
assert f["framework_source"] == "server_args", f
assert f["traces"] == ["/p/qwen/t.json"], f
assert all(k == k.lower() and " " not in k for k in f), f
assert r["notes"] == ["A note to pass on."]
ids = [(t["table"], t["stage"]) for t in r["tables"]]
assert ids == [("gpu", "decode"), ("step", "decode"), ("kernel", "extend"), ("kernel", "decode"),
    ("overlap", "decode"), ("fuse", "decode"), ("fuse_in_use", "decode"), ("rank", "decode"),
    ("collective", "decode"), ("rank_kernel", "decode"), ("health", None)], ids
k = [t for t in r["tables"] if t["table"] == "kernel" and t["stage"] == "decode"][0]
assert k["rows"][0]["total_us"] == 600 and k["rows"][0]["kernel_short"] == "cutlass::Kernel2<cutlass_80_tensorop_bf16_…_64x64_32x6_tn_align8>"
assert k["rows"][0]["location"] == ["python/sglang/srt/layers/linear.py:300 forward"]
assert k["rows"][0]["mean_us"] is None, k["rows"][0]
# short names stay unique within a table even when the elided forms collide
e = [t for t in r["tables"] if t["table"] == "kernel" and t["stage"] == "extend"][0]
shorts = [x["kernel_short"] for x in e["rows"]]
assert len(set(shorts)) == 2 and all(s.startswith("ns::gemm<") for s in shorts), shorts
# a figure the run lacks is null, never text; every kernel row has its short name
for t in r["tables"]:
    for row in t["rows"]:
        for key, v in row.items():
            if key.endswith(("_us", "_pct")) or key in ("kernels", "launches", "steps"):
                assert v is None or isinstance(v, (int, float)), (t["table"], key, v)
        if "kernel" in row:
            assert "kernel_short" in row, row
gpu = [t for t in r["tables"] if t["table"] == "gpu"][0]["rows"][0]
assert gpu["idle_launch_us"] is None or isinstance(gpu["idle_launch_us"], (int, float))
EOF
	# no model named: null, and the family the frames show, as the markdown says it
	sed 's/"model":"Qwen\/Qwen3-8B"/"model_family":"qwen3"/' "$F" | "$RENDER" --format json |
	    jq -c '.reports[0].facts | [.model, .model_family]' >"$T/fam"
	eq '[null,"qwen3"]' "$(cat "$T/fam")"
}
check "json: one document, typed rows, health verdict, unique short names" t_json

t_json_missing_figure() {
	# a gpu_time record without idle_launch_us (no launch records): null, not "-"
	jq -c 'if .type == "gpu_time" then del(.idle_launch_us) else . end' "$F" >"$T/nl.jsonl"
	"$RENDER" --format json <"$T/nl.jsonl" >"$T/nl.json"
	eq null "$(jq -c '.reports[0].tables[] | select(.table == "gpu") | .rows[0].idle_launch_us' \
	    "$T/nl.json")" "idle_launch_us"
}
check "json: a figure the run lacks is null" t_json_missing_figure

# Issue 29: a row shows its record's id first, null for a record without
# one; a table none of whose records has one has no id member.
t_json_row_ids() {
	awk '/"type":"kernel_row"/ && !n++ { sub(/}$/, ",\"id\":\"kernel-7\"}") } { print }' "$F" |
	    "$RENDER" -f json >"$T/r.json"
	eq '"kernel-7",null' "$(jq -r '[.reports[0].tables[] | select(.table == "kernel" and .stage == "decode")
	    | .rows[:2][] | .id] | map(tojson) | join(",")' "$T/r.json")"
	eq 'id,kernel' "$(jq -r '.reports[0].tables[] | select(.table == "kernel" and .stage == "decode")
	    | .rows[0] | keys_unsorted[:2] | join(",")' "$T/r.json")"
	eq false "$(jq '[.reports[0].tables[] | select(.table == "health") | .rows[] | has("id")] | any' "$T/r.json")"
}
check "json: each row the id of its record" t_json_row_ids

t_jsonl_passes_records() {
	"$RENDER" --format jsonl <"$F" >"$T/r.jsonl"
	same "$F" "$T/r.jsonl"
}
check "jsonl: the records as they came" t_jsonl_passes_records

t_spaced_records() {
	# the kept copy of a row leaves out members no report reads (a row's
	# site payload, a hidden row's names): records written with spaces, and
	# with an "entry" in every kernel row, give the same report in every format
	python3 -c '
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("type") == "kernel_row":
        r["entry"] = {"kernel": r.get("kernel", ""), "sites": [{"location": "x: y, z"}]}
    print(json.dumps(r))' "$F" >"$T/spaced.jsonl"
	grep -q '"shown": false, ' "$T/spaced.jsonl"
	for f in md csv json html; do
		"$RENDER" --format "$f" <"$F" >"$T/plain.$f"
		"$RENDER" --format "$f" <"$T/spaced.jsonl" >"$T/spaced.$f"
		same "$T/plain.$f" "$T/spaced.$f"
	done
}
check "records with spaces and site payloads: the same report in every format" t_spaced_records

t_html_in_browser() {
	need chromium
	"$RENDER" --format html <"$F" >"$T/r.html"
	# headless, no sandbox (CI runs as root); the DOM after the page's script ran
	# (at 1400 px: the page is no wider than the window, its tables fit or
	# scroll inside their sections)
	chromium --headless --no-sandbox --disable-gpu --user-data-dir="$T/chr" \
	    --window-size=1400,1000 --dump-dom "file://$T/r.html" >"$T/dom.html" 2>"$T/chr.err"
	has "$T/dom.html" '<body data-ready="1" data-errors="0" data-overflow="0"'
	# decode: gemm, attention, elementwise, reduction; extend: gemm (shares of the
	# kernel time, as the headline's: idle is the GPU-time table's, of the span)
	eq 5 "$(grep -o 'class="seg"' "$T/dom.html" | wc -l)" "stacked segments"
	# the rows shown: 3 of decode (the fourth is under the bar), 2 of extend
	eq 5 "$(grep -o 'class="bar"' "$T/dom.html" | wc -l)" "top-kernel bars"
	eq 2 "$(grep -o 'class="step"' "$T/dom.html" | wc -l)" "step bars"
	hasnt "$T/dom.html" 'data-cat="idle"'
	has "$T/dom.html" 'Kernel time by category (shares of the sum of kernel durations, as in the headline)'
	has "$T/dom.html" 'class="banner degraded"'
	# ranks: busy, communication and wait for each of the 2 ranks
	eq 6 "$(grep -o 'class="rbar"' "$T/dom.html" | wc -l)" "rank bars"
	eq 2 "$(grep -o 'class="stepgpu"' "$T/dom.html" | wc -l)" "GPU-busy step bars"
	# every chart: a title, an axis with its unit, a legend (issue 31)
	figs=$(grep -o '<figure class="chart"' "$T/dom.html" | wc -l)
	eq 6 "$figs" "charts"
	eq "$figs" "$(grep -o 'class="ctitle"' "$T/dom.html" | wc -l)" "chart titles"
	eq "$figs" "$(grep -o 'class="legend"' "$T/dom.html" | wc -l)" "legends"
	eq 0 "$(grep -o '<text[^>]*class="axis"[^>]*>[^<]*</text>' "$T/dom.html" | grep -vc '(ms)')" \
	    "axes without their unit"
	eq "$figs" "$(grep -o 'class="axis"' "$T/dom.html" | wc -l)" "axes"
	eq 1 "$(grep -o '<text[^>]*class="xaxis"[^>]*>step (its index in the table)</text>' \
	    "$T/dom.html" | wc -l)" "the steps' x axis"
	# the steps along the table's own index, in their hover too
	has "$T/dom.html" '<text[^>]*class="xtick"[^>]*>0</text>'
	has "$T/dom.html" '<title>step 0 (ProfilerStep#1): step time (CPU) 0.500 ms</title>'
	# one step: a bar of its own width on the axis, not a slab across it
	jq -c 'select(.type != "step" or .index == 0)' "$F" >"$T/one-step.jsonl"
	"$RENDER" --format html <"$T/one-step.jsonl" >"$T/one.html"
	chromium --headless --no-sandbox --disable-gpu --user-data-dir="$T/chr" \
	    --dump-dom "file://$T/one.html" >"$T/one.dom" 2>>"$T/chr.err"
	w=$(grep -o '<rect [^>]*class="step"' "$T/one.dom" | grep -o 'width="[0-9.]*"' | tr -dc '0-9.\n')
	awk -v w="$w" 'BEGIN { exit !(w > 0 && w <= 40) }' || { echo "one step's bar: width $w"; return 1; }
	# the page draws: a non-trivial PNG
	chromium --headless --no-sandbox --disable-gpu --user-data-dir="$T/chr" \
	    --window-size=1200,1600 --screenshot="$T/shot.png" "file://$T/r.html" 2>>"$T/chr.err"
	eq '89504e47' "$(od -An -tx1 -N4 "$T/shot.png" | tr -d ' ')" "PNG signature"
	[ "$(wc -c <"$T/shot.png")" -gt 20000 ]
}
check "html: the charts' script runs clean in a browser and draws every segment" t_html_in_browser

t_bundle() {
	need cmark-gfm
	{
		echo '{"type":"run","id":0,"label":"runs/a"}'
		cat "$F"
		echo '{"type":"run","id":1,"label":"runs/b"}'
		sed 's/Qwen\/Qwen3-8B/meta-llama\/Llama-3.1-8B/; s/"framework":"sglang"/"framework":"vllm"/' "$F"
	} >"$T/b.jsonl"
	"$RENDER" --bundle <"$T/b.jsonl" >"$T/b.md"
	cmark-gfm -e table "$T/b.md" >"$T/b.html"
	has "$T/b.md" '^# Triage bundle: 2 runs$'
	# the summary: a row per run, before the contents
	has "$T/b.md" '^| Run | Model | Framework | GPU | extend/prefill GPU time | decode GPU time | GPU time (no stage) | Step p50 | Step GPU busy p50 | Step stage | Health |$'
	has "$T/b.md" '^| runs/a | Qwen/Qwen3-8B | SGLang | - | 4.00 ms | 1.00 ms | - | 0.55 ms | - | decode | degraded |$'
	# a run whose host queued steps ahead: its period marked, the GPU's beside it
	{
		echo '{"type":"run","id":0,"label":"runs/e"}'
		sed '/"type":"gpu_time"/s/"step_p50_us":550/"step_p50_us":550,"step_busy_p50_us":900,"steps_host_ahead":true/' "$F"
		echo '{"type":"run","id":1,"label":"runs/a"}'
		cat "$F"
	} >"$T/bh.jsonl"
	"$RENDER" --bundle <"$T/bh.jsonl" >"$T/bh.md"
	has "$T/bh.md" '^| runs/e | Qwen/Qwen3-8B | SGLang | - | 4.00 ms | 1.00 ms | - | 0.55 ms (host ahead) | 0.90 ms | decode | degraded |$'
	# machines get the numbers alone (CSV rows end in CR LF)
	"$RENDER" --bundle -f csv --table runs <"$T/bh.jsonl" >"$T/bh.csv"
	has "$T/bh.csv" '^,runs/e,Qwen/Qwen3-8B,SGLang,,4000,1000,,550,900,decode,degraded.$'
	has "$T/bh.csv" '^,runs/a,Qwen/Qwen3-8B,SGLang,,4000,1000,,550,,decode,degraded.$'
	[ "$(grep -n '^## Summary' "$T/b.md" | cut -d: -f1)" -lt "$(grep -n '^## Contents' "$T/b.md" | cut -d: -f1)" ]
	# a run that names no model: the family its frames show; a GPU the trace
	# leaves unnamed: the part its figures fit
	{
		echo '{"type":"run","id":0,"label":"runs/c"}'
		sed 's/"model":"Qwen\/Qwen3-8B"/"model_family":"qwen3"/' "$F" |
		    sed '/"type":"input"/a\
{"type":"device","t":0,"id":0,"name":"","total_global_mem":206141652992,"compute_major":9,"compute_minor":4,"num_sms":304,"warp_size":64}'
		echo '{"type":"run","id":1,"label":"runs/d"}'
		cat "$F"
	} | "$RENDER" --bundle >"$T/bf.md"
	has "$T/bf.md" '^| runs/c | qwen3 (from its frames) | SGLang | AMD Instinct MI300X (matched) | '
	has "$T/bf.md" '^| runs/d | Qwen/Qwen3-8B | SGLang | - | '

	# in HTML with its chart: each run's stages stacked
	"$RENDER" --bundle -f html <"$T/b.jsonl" >"$T/bb.html"
	chromium --headless --no-sandbox --disable-gpu --user-data-dir="$T/chr" \
	    --dump-dom "file://$T/bb.html" >"$T/bb.dom" 2>/dev/null
	has "$T/bb.dom" '<body data-ready="1" data-errors="0"'
	has "$T/bb.dom" 'data-table="runs"'
	eq 4 "$(grep -o 'class="ubar"' "$T/bb.dom" | wc -l)" "run bars (2 runs, 2 stages)"
	# the table of contents links each run once, grouped by model
	eq 2 "$(sed -n '/^## Contents/,/^## [^C]/p' "$T/b.md" | grep -c '](#')" "TOC entries"
	has "$T/b.md" 'Qwen3-8B'
	has "$T/b.md" 'Llama-3.1-8B'
	eq 2 "$(grep -c '<h3>Triage report: runs/[ab]</h3>' "$T/b.html")" "run headings"
	eq 1 "$(grep -c '<h2>Legend</h2>' "$T/b.html")" "legends"
	"$RENDER" --bundle --format json <"$T/b.jsonl" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert [r["facts"]["model"] for r in d["reports"]] == ["Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B"]
s = d["summary"]
assert s["table"] == "runs" and [x["run"] for x in s["rows"]] == ["runs/a", "runs/b"], s
assert [x["framework"] for x in s["rows"]] == ["SGLang", "vLLM"], s
assert [x["decode_us"] for x in s["rows"]] == [1000, 1000] and s["rows"][0]["extend_us"] == 4000, s
assert [x["step_p50_us"] for x in s["rows"]] == [550, 550], s
assert [x["health"] for x in s["rows"]] == ["degraded", "degraded"], s'
}
check "bundle: one document of two runs with a table of contents" t_bundle

t_names_full() {
	"$RENDER" --names full <"$F" >"$T/full.md"
	has "$T/full.md" '^| void cutlass::Kernel2\\<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x6_tn_align8>(cutlass::Params) | gemm |'
	status 2 "$RENDER" --names abbreviated <"$F" 2>/dev/null
}
check "--names full keeps whole kernel names" t_names_full

t_health_variants() {
	# several traces: the banner names the failing one by its role, the
	# passed check is counted, not listed (issue 31)
	printf '%s\n' \
	    '{"type":"health","t":0,"role":"mapping","path":"/m/a.json","verdict":"ok","checks":[{"id":"x","status":"ok","value":0,"detail":"fine","affects":[]}]}' \
	    '{"type":"health","t":0,"role":"formal","path":"/f/b.json","verdict":"unusable","checks":[{"id":"no_kernels","status":"fail","value":0,"detail":"no kernels","affects":["kernel","overlap","fuse"]}]}' |
	    "$RENDER" >"$T/h.md"
	has "$T/h.md" '^> \*\*Trace health: unusable.\*\* formal trace: kernels missing (no_kernels): the kernel, overlap and fuse tables are less trustworthy.$'
	has "$T/h.md" '^| formal: b.json | no_kernels | fail | 0 | no kernels | kernel, overlap, fuse |$'
	hasnt "$T/h.md" '^| mapping: a.json | x |'
	has "$T/h.md" '^1 other check passed.$'
	printf '%s\n' \
	    '{"type":"health","t":0,"path":"/a.json","verdict":"ok","checks":[{"id":"x","status":"ok","value":3,"detail":"fine","affects":[]},{"id":"y","status":"ok","value":0,"detail":"fine too","affects":[]}]}' |
	    "$RENDER" >"$T/ok.md"
	has "$T/ok.md" '^> \*\*Trace health: ok.\*\* All 2 checks passed.$'
	# no table of "ok" rows: the sentence alone
	eq "2 checks on 1 trace: 0 defects, 0 limitations, 0 for information.|All 2 checks passed." \
	    "$(sed -n '/^## Trace health/,/^## Legend/p' "$T/ok.md" | sed -n '5p;7p' | paste -sd '|')"
	hasnt "$T/ok.md" '^| Trace | Check |'
	# the three kinds (issue 25): the defect first, the limitations after it
	# in a few words each, information in the table only
	printf '%s\n' \
	    '{"type":"health","t":0,"path":"/a.json","verdict":"degraded","checks":[{"id":"clock_offset","status":"warn","value":55005,"detail":"the clocks disagree","affects":["gpu_time","step"]},{"id":"no_python_stacks","status":"limited","value":0,"detail":"limited: no stacks: no locations","affects":["kernel"]},{"id":"short_capture","status":"limited","value":0,"detail":"limited: no steps","affects":["step"]},{"id":"stream_overlap","status":"info","value":2,"detail":"PDL","affects":[]}]}' |
	    "$RENDER" >"$T/k.md"
	has "$T/k.md" '^> \*\*Trace health: degraded.\*\* Host and GPU clocks apart (clock_offset): the gpu_time and step tables are less trustworthy. Limited by the capture settings too: no Python stacks (with_stack), no step markers.$'
	has "$T/k.md" '^| a.json | stream_overlap | info | 2 | PDL |  |$'
	has "$T/k.md" '^4 checks on 1 trace: 1 defect, 2 limitations, 1 for information.$'
	hasnt "$T/k.md" 'other check'
	printf '%s\n' '{"type":"health","t":0,"path":"/a.json","verdict":"ok","checks":[{"id":"no_python_stacks","status":"limited","value":0,"detail":"limited: no stacks: no locations","affects":["kernel"]}]}' \
	    >"$T/k2.jsonl"
	"$RENDER" <"$T/k2.jsonl" >"$T/k2.md"
	has "$T/k2.md" '^> \*\*Trace health: ok.\*\* No defect found; limited by the capture settings: no Python stacks (with_stack).$'
}
check "health banner: several traces, an unusable one, all checks passed, limitations" t_health_variants

t_deployments() {
	# a mapping/formal pair of two deployments: said, by name or by figures
	inp() {	# inp ROLE GPU SMS MEM WORLD
		printf '{"type":"input","v":1,"role":"%s","path":"/%s","framework":"vllm","traces":["/%s"],"world_size":%s,"gpu":"%s","gpu_sms":%s,"gpu_mem":%s}\n' \
		    "$1" "$1" "$1" "$5" "$2" "$3" "$4"
	}
	{ inp mapping "NVIDIA B200" 148 191503138816 8; inp formal "" 304 206141652992 1; } |
	    "$RENDER" >"$T/dep.md" 2>/dev/null
	has "$T/dep.md" '^> Note: The mapping and formal traces come from different deployments (NVIDIA B200 vs an unnamed GPU (304 SMs/CUs, 192 GiB); world size 8 vs 1): the Python sites and input shapes the mapping gives are another run.s.$'
	# an empty name against a name: the figures decide, and these agree
	{ inp mapping "" 304 206141652992 1; inp formal "AMD Instinct MI300X" 304 206141652992 1; } |
	    "$RENDER" >"$T/dep2.md" 2>/dev/null
	hasnt "$T/dep2.md" 'different deployments'
	{ inp mapping "X" 1 1 1; inp formal "X" 1 1 1; } | "$RENDER" >"$T/dep3.md" 2>/dev/null
	hasnt "$T/dep3.md" 'different deployments'
	# another framework and model family: said on stderr too, and the formal
	# trace takes no model family from the other deployment's mapping
	{ inp mapping "X" 1 1 1 | sed 's/}$/,"model_family":"gpt_oss"}/'
	  inp formal "X" 1 1 1 | sed 's/"vllm"/"sglang"/; s/}$/,"model_family":"qwen3"}/'; } |
	    "$RENDER" >"$T/dep4.md" 2>"$T/dep4.err"
	has "$T/dep4.md" '^> Note: The mapping and formal traces come from different deployments (vLLM vs SGLang; model family gpt_oss vs qwen3): '
	has "$T/dep4.err" 'warning: The mapping and formal traces come from different deployments'
	has "$T/dep4.md" '^- \*\*Model\*\*: qwen3'
	{ inp mapping "X" 1 1 1 | sed 's/}$/,"model_family":"gpt_oss"}/'
	  inp formal "X" 1 1 1 | sed 's/"vllm"/"sglang"/'; } | "$RENDER" >"$T/dep5.md" 2>/dev/null
	hasnt "$T/dep5.md" 'gpt_oss'
}
check "mapping/formal of two deployments: a note" t_deployments

t_health_all_ranks() {
	# --all-ranks: the tables are rank 0's (its trace record), the other
	# ranks' health records come alone; their defects of the timings touch
	# the rank rows, and a trace with two defects is named once
	printf '%s\n' \
	    '{"type":"trace","v":1,"t":0,"role":"single","path":"/p/w0.json","stage":"all"}' \
	    '{"type":"health","t":0,"role":"single","path":"/p/w0.json","verdict":"ok","checks":[{"id":"x","status":"ok","value":0,"detail":"fine","affects":[]}]}' \
	    '{"type":"stats","t":0,"events":1}' \
	    '{"type":"rank_row","stage":"all","rank":0,"busy_us":1,"kernel_us":1,"comm_us":0,"wait_us":0,"last_arrivals":0,"collectives":0}' \
	    '{"type":"rank_gap","stage":"all","reason":"count","kind":"all-reduce","ranks":[{"rank":0,"count":3},{"rank":5,"count":1}]}' \
	    '{"type":"rank_gap","stage":"all","reason":"names","kind":"all-gather","ordinal":2,"ranks":[{"rank":0,"count":2,"name":"ncclA*"},{"rank":5,"count":2,"name":"ncclB"}]}' \
	    '{"type":"health","t":0,"role":"single","path":"/p/w5.json","verdict":"degraded","checks":[{"id":"skipped_events","status":"warn","value":41,"detail":"41 skipped","affects":["kernel","gpu_time"]},{"id":"launch_without_kernel","status":"warn","value":41,"detail":"41 launches","affects":["kernel","gpu_time"]},{"id":"no_python_stacks","status":"limited","value":0,"detail":"no stacks","affects":["kernel","overlap","fuse"]}]}' \
	    >"$T/ar.in"
	"$RENDER" <"$T/ar.in" >"$T/ar.md" 2>"$T/ar.err"
	has "$T/ar.md" '^> \*\*Trace health: degraded.\*\* w5.json: events skipped (skipped_events) and launches without their kernels (launch_without_kernel): the rank table is less trustworthy.$'
	has "$T/ar.md" '^| w5.json | skipped_events | warn | 41 | 41 skipped | rank |$'
	has "$T/ar.md" '^4 checks on 2 traces: 2 defects, 1 limitation, 0 for information.$'
	# the rank rows compare GPU timings: missing Python stacks do not touch them
	has "$T/ar.md" '^| w5.json | no_python_stacks | limited | 0 | no stacks |  |$'
	# the gaps as sentences, names escaped, no JSON
	has "$T/ar.md" '^Not matched all-reduce: the ranks hold different numbers of them (rank 0: 3, rank 5: 1). Not matched all-gather: the kernels differ between ranks at number 2 (rank 0: 2 ncclA\\\*, rank 5: 2 ncclB).$'
	hasnt "$T/ar.md" '{"rank"'
	# no collective matched: no wait measured, no straggler's kernels to list
	has "$T/ar.md" '^| 0 | \\<0.01 ms | \\<0.01 ms | 0.00 ms | - | - | '
	has "$T/ar.md" '^No straggler in this stage, so no kernels of one to compare.$'
	hasnt "$T/ar.md" "The straggler's kernels"
	# the traces' world size larger than the ranks compared: said
	has "$T/ar.md" '^Every rank of the run compared, stage by stage'
	sed '1s/"stage":"all"}/"stage":"all","world_size":8}/' "$T/ar.in" | "$RENDER" 2>/dev/null >"$T/ar8.md"
	has "$T/ar8.md" "^Rank 0 of the run's 8 compared (the other ranks' traces are not here: the straggler and the waits are among these), stage by stage"
	# without rank rows (mapping/formal) a trace's own affects stand
	grep -v '"type":"rank_' "$T/ar.in" | "$RENDER" >"$T/ar2.md" 2>/dev/null
	has "$T/ar2.md" '^| w5.json | skipped_events | warn | 41 | 41 skipped | kernel, gpu_time |$'
}
check "all ranks: every rank's health, another rank's defects affect the rank rows" t_health_all_ranks

t_site_spelling() {
	# one site as each tool writes it: kernel-map's, a frame's (overlap
	# scope), fuse-detect's; the report spells it one way in every table
	cat >"$T/sites.jsonl" <<-'EOT'
	{"type":"input","v":1,"role":"formal","path":"/p","framework":"sglang"}
	{"type":"input","v":1,"role":"mapping","path":"/m","framework":"sglang"}
	{"type":"kernel_row","t":0,"stage":"decode","kernel":"norm_k","category":"norm","total_us":500,"launches":2,"share_pct":50,"stage_total_us":1000,"location":"python/sglang/srt/layers/layernorm.py:60 forward_cuda (site share 60%)<br>a.py:2 g (site share 40%)","cpu_op":"-","shown":true}
	{"type":"overlap_row","stage":"decode","priority":"P1","verdict":"headroom","kernel":"norm_k","python_scope":"python/sglang/srt/layers/layernorm.py(60): forward_cuda","total_us":500,"share_pct":50}
	{"type":"fuse_row","t":0,"stage":"decode","pattern":"P","confidence":"Confirmed","related_us":500,"share_pct":50,"evidence":"norm_k (50.0%)","current_locations":"forward_cuda @ python/sglang/srt/layers/layernorm.py:60<br>unresolved","candidate_path":"x.py","rationale":"r","status":"missing"}
	{"type":"gpu_time","t":0,"stage":"decode","kernels":2,"kernel_us":500,"busy_us":500,"span_us":500,"idle_us":0,"compute_us":500,"comm_us":0,"memcpy_us":0}
	{"type":"graph_escape","t":0,"stage":"decode","kernel":"norm_k","launches":2,"total_us":500,"share_pct":50,"location":"python/sglang/srt/layers/layernorm.py:60 forward_cuda"}
	EOT
	"$RENDER" <"$T/sites.jsonl" >"$T/s.md"
	eq 4 "$(grep -c 'python/sglang/srt/layers/layernorm.py:60 forward_cuda' "$T/s.md")"
	hasnt "$T/s.md" 'layernorm.py(60)'
	hasnt "$T/s.md" 'forward_cuda @'
	has "$T/s.md" 'layernorm.py:60 forward_cuda (site share 60%)<br>a.py:2 g (site share 40%) |'
	"$RENDER" --format csv --table fuse <"$T/sites.jsonl" >"$T/f.csv"
	has "$T/f.csv" 'python/sglang/srt/layers/layernorm.py:60 forward_cuda'
	"$RENDER" --format json <"$T/sites.jsonl" >"$T/s.json"
	eq 'python/sglang/srt/layers/layernorm.py:60 forward_cuda' \
	    "$(jq -r '.reports[0].tables[] | select(.table == "overlap") | .rows[0].python_scope' "$T/s.json")"
	# the reference's spellings under --compat reference
	"$RENDER" --compat reference <"$T/sites.jsonl" >"$T/r.md"
	has "$T/r.md" 'forward_cuda @ python/sglang/srt/layers/layernorm.py:60'
}
check "one spelling of a Python site in the kernel, overlap, fuse and escape tables" t_site_spelling

done_testing
