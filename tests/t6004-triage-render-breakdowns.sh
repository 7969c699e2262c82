#!/bin/sh
# triage-render: the GPU-time section's breakdowns of issue 32 from
# step-stats' records (a hand-written fixture): the collectives' columns,
# the launch-delay line and table per verdict, the stream and GPU
# annotation tables, the kernel table's launch delays joined by trace,
# stage and kernel, in every format.
. "$(dirname "$0")/lib.sh"
F=$FIX/triage-render/breakdowns.jsonl
RENDER=$BIN/triage-render

t_markdown() {
	"$RENDER" <"$F" >"$T/r.md"
	# extend: the GPU waited for the host 500 of 1000 us, 100 more idle with work queued
	has "$T/r.md" '^Launches arrived as the GPU went idle: host-bound (launch delay p50 3.5 us; the GPU waited for the host 0.50 ms, 50% of the span). Another 0.10 ms of idle time (10% of the span) had work queued that did not start: dependencies on other streams, events or processes.$'
	has "$T/r.md" '^| 10 | 3.5 us | 9.0 us | 120.0 us | 1 | host-bound |$'
	# decode: 2000 idle, 200 of it for the host: 1800 (45%) stalled
	# (a median delay over 100 us besides: the host ran ahead, said apart)
	has "$T/r.md" '^The GPU idled 1.80 ms (45% of the span) with work queued that did not start: stalled on dependencies (other streams, events or processes), not on the host (the GPU waited for the host 5% of the span). Besides the stall the host ran ahead of the GPU: the median launch queued 1.80 ms behind earlier work (GPU-bound).$'
	sed '/"verdict":"stalled"/s/"p50_us":1800,/"p50_us":40,/' "$F" | "$RENDER" >"$T/r2.md"
	has "$T/r2.md" '^The GPU idled 1.80 ms (45% of the span) with work queued that did not start: stalled on dependencies (other streams, events or processes), not on the host (the GPU waited for the host 5% of the span; launch delay p50 40.0 us).$'
	# the collectives in the GPU-time table, the headline and the steps
	has "$T/r.md" '^| 30 | 2.00 ms | 2.00 ms | 0.20 ms | - | 4.00 ms | 1.50 ms | 0.30 ms | 0.20 ms | 0.80 ms | 62.5% | 90.0% | 1 | - | - | - | - | - |$'
	has "$T/r.md" '; collectives 0.80 ms, 62% of it under compute;'
	has "$T/r.md" '^| 0 | step\\\[DECODE bs=8\\\] | 8 | - | 4.00 ms | 0.90 ms | 2.00 ms | 4.00 ms | 30 | 0.80 ms | 62.5% |$'
	# a stage without collectives: no such step columns, "-" for the percentage
	has "$T/r.md" '^| 10 | 0.40 ms | 0.60 ms | 0.50 ms | - | 1.00 ms | 0.40 ms | 0.00 ms | 0.00 ms | 0.00 ms | - | 0.0% |'
	# clocks apart: no interpretation, said so
	has "$T/r.md" '^Launch delays not interpreted: the host.s and the GPU.s clocks disagree by 146.39 ms (trace-stage), so every kernel seems to start that much after or before its launch call.$'
	has "$T/r.md" '^| 4 | - | - | - | - | - |$'
	# streams and annotations, names as text
	has "$T/r.md" '^| \\<b>x\\</b> | communication | 5 | 0.80 ms | 0.80 ms | 2.20 ms | 3.00 ms |$'
	has "$T/r.md" '^| nccl:all_reduce | 5 | 0.80 ms | 40.0% | 0.82 ms |$'
	eq 1 "$(grep -c '^| GPU annotation |' "$T/r.md")" "annotation tables (decode only)"
	# the kernel table: a row with a delay record, one without
	has "$T/r.md" '^| gemm_kernel\\<…> | gemm | 0.30 ms | 75.0% | 4 | 3.5 us | 120.0 us | a.py:1 f | aten::mm |$'
	has "$T/r.md" '^| norm_kernel\\<…> | norm | 0.10 ms | 25.0% | 6 | - | - | a.py:2 g | aten::rms_norm |$'
}
check 'markdown: the launch line and tables, streams, annotations, kernel delays' t_markdown

# The other verdicts, each with the host-bound idle figure beside it.
t_verdicts() {
	sed 's/"verdict":"stalled"/"verdict":"bursty"/' "$F" | "$RENDER" >"$T/b.md"
	has "$T/b.md" '^The host ran 1.80 ms ahead within bursts (the launch delay p50), but between them the GPU waited for it 0.20 ms, 5% of the span: host-bound between bursts. Another 1.80 ms of idle time (45% of the span) had work queued that did not start: dependencies on other streams, events or processes.$'
	sed 's/"verdict":"stalled"/"verdict":"gpu_bound"/' "$F" | "$RENDER" >"$T/g.md"
	has "$T/g.md" '^The host ran 1.80 ms ahead of the GPU (the launch delay p50): GPU-bound; the GPU waited for the host 5% of the span.$'
	has "$T/g.md" '^| 5 | 1.80 ms | 2.50 ms | 2.60 ms | 4 | GPU-bound |$'
	sed 's/"verdict":"stalled"/"verdict":"balanced"/' "$F" | "$RENDER" >"$T/n.md"
	has "$T/n.md" '^Launches arrived just ahead of the GPU: neither host- nor GPU-bound (launch delay p50 1.80 ms; the GPU waited for the host 5% of the span).$'
}
check 'verdicts: bursty, GPU-bound and balanced say what they mean' t_verdicts

t_csv_json() {
	"$RENDER" --format csv --table stream <"$F" | tr -d '\r' >"$T/s.csv"
	head -n 1 "$T/s.csv" >"$T/h"
	eq 'stage,stream,kind,kernels,kernel_us,busy_us,idle_us,span_us' "$(cat "$T/h")"
	has "$T/s.csv" '^decode,<b>x</b>,communication,5,800,800,2200,3000$'
	"$RENDER" --format csv --table annotation <"$F" | tr -d '\r' >"$T/a.csv"
	# a formula-like name gets its leading '
	has "$T/a.csv" "^decode,'=cmd|' /C calc'!A0,1,100,5,3000\$"
	"$RENDER" --format csv --table launch <"$F" | tr -d '\r' >"$T/l.csv"
	# the record's own verdict, and the label people read beside it
	has "$T/l.csv" '^stage,launches,p50_us,p90_us,max_us,over,verdict,verdict_short$'
	has "$T/l.csv" '^extend,10,3.5,9,120,1,host_bound,host-bound$'
	"$RENDER" --format csv --table kernel --names full <"$F" | tr -d '\r' >"$T/k.csv"
	has "$T/k.csv" '^stage,kernel,kernel_short,category,total_us,share_pct,launches,launch_delay_p50_us,launch_delay_max_us,mean_us,min_us,max_us,p50_us,p90_us,location,cpu_op$'
	has "$T/k.csv" '^extend,void gemm_kernel<128>,void gemm_kernel<128>,gemm,300,75,4,3.5,120,'
	has "$T/k.csv" '^extend,void norm_kernel<128>,void norm_kernel<128>,norm,100,25,6,,,'
	"$RENDER" --format json <"$F" >"$T/r.json"
	eq 'launch:extend:host_bound:host-bound launch:decode:stalled:stalled launch:all:null:null' \
	    "$(jq -r '[.reports[0].tables[] | select(.table == "launch") |
	    "launch:\(.stage):\(.rows[0].verdict):\(.rows[0].verdict_short)"] | join(" ")' "$T/r.json")"
	eq '1800' "$(jq '.reports[0].tables[] | select(.table == "launch" and .stage == "decode") | .rows[0].p50_us' "$T/r.json")"
	eq '2 1' "$(jq -r '[.reports[0].tables[] | select(.table == "stream") | .rows | length] | reverse | .[0:2] | join(" ")' "$T/r.json")"
	eq 'null' "$(jq '.reports[0].tables[] | select(.table == "launch" and .stage == "all") | .rows[0].p50_us' "$T/r.json")"
}
check 'csv and json: the launch, stream, annotation and kernel tables with raw numbers' t_csv_json

t_html() {
	"$RENDER" --format html <"$F" >"$T/r.html"
	has "$T/r.html" 'Launches arrived as the GPU went idle: host-bound'
	has "$T/r.html" '&lt;b&gt;x&lt;/b&gt;'
	hasnt "$T/r.html" '<b>x</b>'
}
check 'html: the breakdowns as tables, names as text' t_html

# Without step-stats' breakdown records (an older stream): none of the new
# tables and the kernel table as before.
t_without() {
	grep -v -e '"type":"launch_delay"' -e '"type":"kernel_delay"' -e '"type":"stream_time"' \
	    -e '"type":"annotation_time"' "$F" | "$RENDER" >"$T/o.md"
	hasnt "$T/o.md" '^| Launches | Delay p50'
	hasnt "$T/o.md" '^| Stream |'
	has "$T/o.md" '^| Kernel | Category | GPU time | Share | Launches | Python location (site share) | CPU op |$'
}
check 'without the breakdown records: no new tables, the kernel table unchanged' t_without

done_testing
