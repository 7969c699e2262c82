#!/bin/sh
# kernel-roofline in scripts/triage: both flows, the mapping trace's shapes for
# the formal trace's CUDA-graph kernels, the report (efficiency columns,
# headline, Roofline section, CSV and JSON tables, the HTML chart), --compat
# reference and traces without shapes left as they were.
. "$(dirname "$0")/lib.sh"

FX=$FIX/kernel-roofline
GPU="--gpu testgpu --gpu-specs $FX/test-gpus.jsonl"

need() {
	command -v "$1" >/dev/null 2>&1 || { echo "$1 not installed (scripts/install-deps)"; exit 1; }
}

# The mapping: two aten::mm [128x256][256x512] bf16 kernels of 10 us and one
# aten::silu [1024x4096] bf16 of 20 us; the formal trace replays the same
# kernels in one CUDA graph (8, 8 and 20 us), with no CPU ops.
t_mapping_formal() {
	# shellcheck disable=SC2086
	"$TRIAGE" -q --mapping-input "$FX/mapping.json" --formal-input "$FX/formal.json" $GPU \
	    -f jsonl >"$T/dual.jsonl"
	# per launch, the mapping's mean: 2 M N K = 33554432 FLOPs, 458752 bytes a GEMM
	eq "gemm_k mapping 2 67108864 917504" "$(jq -r 'select(.type == "kernel_eff" and .kernel == "gemm_k") |
	    "\(.kernel) \(.source) \(.launches) \(.flops) \(.bytes)"' "$T/dual.jsonl")"
	eq "silu_k mapping 16777216 83.88608" "$(jq -r 'select(.type == "kernel_eff" and .kernel == "silu_k") |
	    "\(.kernel) \(.source) \(.bytes) \(.pct_of_roof * 1e6 | round / 1e6)"' "$T/dual.jsonl")"
	eq "36 36 100" "$(jq -r 'select(.type == "roofline") | "\(.stage_us) \(.modeled_us) \(.modeled_pct)"' \
	    "$T/dual.jsonl")"
	# without the mapping, the graph's kernels have no op
	# shellcheck disable=SC2086
	"$TRIAGE" -q --input "$FX/formal.json" $GPU -f jsonl >"$T/formal.jsonl"
	eq "0 the trace records no input shapes (profiled without record_shapes)" \
	    "$(jq -r 'select(.type == "roofline") | "\(.modeled_us) \(.unmodeled[0].reason)"' "$T/formal.jsonl")"
}
check "mapping/formal: the graph-replayed kernels take the mapping trace's shapes, said so" \
    t_mapping_formal

t_report() {
	# shellcheck disable=SC2086
	"$TRIAGE" -q --input "$FX/mapping.json" $GPU >"$T/r.md"
	has "$T/r.md" '^| Kernel | Category | GPU time | Share | Launches | Launch delay p50 | Launch delay max | Python location (site share) | CPU op | TFLOP/s | GB/s | % of roof | Bound |$'
	has "$T/r.md" '^| silu_k | activation | 0.02 ms | 50.0% | 1 | 66.0 us | 66.0 us | unresolved | aten::silu | - | 839 GB/s | 83.9% | memory |$'
	has "$T/r.md" '^## Roofline$'
	# (0.917504 + 16.777216) us at the roofline of 40 us: 44.2 %
	has "$T/r.md" '^\*\*all: modeled 100% of the GPU time (0.04 ms of 0.04 ms); at the roofline of the Test GPU the modeled kernels would take 44.2% of their 0.04 ms (0.02 ms less).\*\*$'
	has "$T/r.md" '^GPU: Test GPU (named by --gpu); memory 1000 GB/s.$'
	# a table entry without a memory bandwidth (the B300's): what it lacks, never "0 GB/s"
	sed 's/"mem_gbps": 1000, //' "$FX/test-gpus.jsonl" >"$T/nobw.jsonl"
	"$TRIAGE" -q --input "$FX/mapping.json" --gpu testgpu --gpu-specs "$T/nobw.jsonl" >"$T/nobw.md"
	has "$T/nobw.md" "^\*\*all: modeled 100% of the GPU time (0.04 ms of 0.04 ms); the Test GPU's table entry has no memory bandwidth, which every kernel's roofline needs.\*\*\$"
	has "$T/nobw.md" '^GPU: Test GPU (named by --gpu); memory bandwidth not in the GPU table (gpu-specs(5)).$'
	hasnt "$T/nobw.md" '0 GB/s'
	# 0.92 us at the roofline: under 0.005 ms, not none
	has "$T/r.md" '^| gemm_k | aten::mm | M=128 N=512 K=256 bf16 | 0.02 ms | 2 | 3.4 | 46 | 73.1 | memory | \\<0.01 ms | 4.6% | bf16 | exact | trace | 6.711e+07 | 9.175e+05 |$'
	# every member in CSV
	# shellcheck disable=SC2086
	"$TRIAGE" -q --input "$FX/mapping.json" $GPU -f csv --table roofline >"$T/r.csv"
	eq "stage,kernel,kernel_short,op,shape,time_us,launches,tflops,gbps,intensity,bound,roof_us,pct_of_roof,dtype,estimate,source,flops,bytes" \
	    "$(sed -n 1p "$T/r.csv" | tr -d '\r')"
	eq "all,gemm_k,gemm_k,aten::mm,M=128 N=512 K=256 bf16,20,2,3.355443,45.8752,73.142857,memory,0.918,4.58752,bf16,exact,trace,67108864,917504" \
	    "$(sed -n 2p "$T/r.csv" | tr -d '\r')"
	# shellcheck disable=SC2086
	"$TRIAGE" -q --input "$FX/mapping.json" $GPU -f json >"$T/r.json"
	eq "roofline unmodeled" "$(jq -r '[.reports[0].tables[] | select(.table == "roofline" or
	    .table == "unmodeled") | .table] | join(" ")' "$T/r.json")"
}
check "the report: efficiency columns, the headline, the Roofline section, CSV and JSON" t_report

t_no_gpu_no_pct() {
	"$TRIAGE" -q --input "$FX/mapping.json" >"$T/r.md"
	has "$T/r.md" "no roofline: the trace has no device record (Kineto's deviceProperties); --gpu NAME names the GPU."
	has "$T/r.md" '^| gemm_k | gemm | 0.02 ms | 50.0% | 2 | 76.0 us | 86.0 us | unresolved | aten::mm | 3.4 TFLOP/s | 45.9 GB/s | - | - |$'
	hasnt "$T/r.md" '83.9%'
	# the machine formats: no bound, no data type is null in JSON and an empty CSV
	# cell, never the "-" markdown shows
	"$TRIAGE" -q --input "$FX/mapping.json" -f json >"$T/r.json"
	eq '[null,"bf16",null,null]|[null,null,null,null]' "$(jq -r '.reports[0].tables[] |
	    select(.table == "roofline") | .rows | map([.bound, .dtype, .roof_us, .pct_of_roof]
	    | tojson) | join("|")' "$T/r.json")"
	eq 'null null|null null' "$(jq -r '.reports[0].tables[] | select(.table == "kernel") | .rows |
	    map("\(.bound) \(.pct_of_roof)") | join("|")' "$T/r.json")"
	"$TRIAGE" -q --input "$FX/mapping.json" -f csv --table roofline | tr -d '\r' >"$T/r.csv"
	eq 'all,silu_k,silu_k,aten::silu,"[1024,4096] bf16",20,1,,838.8608,,,,,,exact,trace,0,16777216' \
	    "$(sed -n 3p "$T/r.csv")"
	"$TRIAGE" -q --input "$FX/mapping.json" -f csv --table kernel | tr -d '\r' >"$T/k.csv"
	eq 'unresolved,aten::mm,3.355443,45.8752,,' "$(sed -n 2p "$T/k.csv" | cut -d, -f15-)"
}
check "no GPU: achieved rates but no percentage, and the reason; null and empty cells for machines" \
    t_no_gpu_no_pct

t_unchanged() {
	# a trace without shapes: no Roofline section, the kernel table as before
	"$TRIAGE" -q --input "$FX/formal.json" >"$T/f.md"
	hasnt "$T/f.md" 'Roofline'
	hasnt "$T/f.md" 'TFLOP/s'
	# the reference's layout: kernel-roofline does not run
	# shellcheck disable=SC2086
	"$TRIAGE" -q --compat reference --input "$FX/mapping.json" $GPU -f json >"$T/c.json"
	hasnt "$T/c.json" 'pct_of_roof'
	hasnt "$T/c.json" 'TFLOP'
	# shellcheck disable=SC2086
	"$TRIAGE" -q --compat reference --input "$FX/mapping.json" $GPU >"$T/c.md"
	hasnt "$T/c.md" 'Roofline'
	status 2 "$TRIAGE" -q --input "$FX/mapping.json" --gpu 'No Such GPU' 2>"$T/err"
	has "$T/err" "^triage: error: --gpu: 'No Such GPU' is not in the GPU table"
}
check "no shapes, --compat reference: the report as it was; an unknown --gpu: exit 2 first" t_unchanged

t_html_chart() {
	need chromium
	# shellcheck disable=SC2086
	"$TRIAGE" -q --input "$FX/mapping.json" $GPU -f html >"$T/r.html"
	has "$T/r.html" '"kind":"roof"'
	chromium --headless --no-sandbox --disable-gpu --user-data-dir="$T/chr" \
	    --dump-dom "file://$T/r.html" >"$T/dom.html" 2>"$T/chr.err"
	has "$T/dom.html" '<body data-ready="1" data-errors="0"'
	# one point per row with FLOPs (the GEMM), one roof per type used (bf16)
	eq 1 "$(grep -o 'class="point"' "$T/dom.html" | wc -l)" "points"
	eq 1 "$(grep -o 'class="roof"' "$T/dom.html" | wc -l)" "roofs"
	has "$T/dom.html" 'data-dtype="bf16"'
}
check "html: the roofline chart draws in a browser" t_html_chart

t_late_spilled() {
	# kernels without their stages wait in a spool until the kernel_stages
	# records come (issue 30): the same records in memory and on disk
	for f in shapes-trace formal mapping; do
		"$BIN/trace-extract" -q "$FIX/kernel-roofline/$f.json" |
		    "$BIN/trace-stage" -q --late-stages | "$BIN/kernel-map" -q |
		    "$BIN/step-stats" -q >"$T/in"
		"$BIN/kernel-roofline" -q --gpu-specs "$FIX/kernel-roofline/test-gpus.jsonl" \
		    "$T/in" >"$T/mem"
		TRIAGE_SPOOL_MEM=64 "$BIN/kernel-roofline" -q \
		    --gpu-specs "$FIX/kernel-roofline/test-gpus.jsonl" "$T/in" >"$T/disk"
		same "$T/mem" "$T/disk"
	done
	test "$(grep -c '"type":"kernel_eff"' "$T/disk")" -gt 0
}
check "late stages: the kernels waiting for them in a spool, the same rows" t_late_spilled

done_testing
