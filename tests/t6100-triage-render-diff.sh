#!/bin/sh
# triage-render: trace-diff's records as a report in every format: the
# verdicts, per stage the GPU time figures, the kernel table (largest
# change first, the 1.0 % bar, renamed and moved kernels, what the bar left
# out), fuse transitions and overlap rows.
. "$(dirname "$0")/lib.sh"

TR=$BIN/triage-render

kr() {	# kr STAGE KERNEL US LAUNCHES [LOCATION]
	printf '{"type":"kernel_row","t":0,"stage":"%s","kernel":"%s","category":"gemm","total_us":%s,"launches":%s,"stage_total_us":0,"location":"%s"}\n' \
	    "$1" "$2" "$3" "$4" "${5:-a.py:1 f}"
}
gt() {	# gt STAGE STEPS BUSY
	printf '{"type":"gpu_time","t":0,"stage":"%s","kernels":1,"kernel_us":1,"busy_us":%s,"span_us":1,"idle_us":0,"compute_us":1,"comm_us":0,"memcpy_us":0,"steps":%s}\n' \
	    "$1" "$3" "$2"
}

# decode: 2 steps vs 4; gemm retuned (MT128 -> MT256), norm grows, a tiny
# kernel under the bar in both runs, one kernel removed, one new and moved
setup() {
	{
		printf '{"type":"input","role":"single","path":"/runs/base/t.json.gz","framework":"sglang"}\n'
		kr decode 'gemm_MT128x64' 1600 8; kr decode 'void norm<8>' 200 8
		kr decode 'void tiny' 4 2; kr decode 'void old_kernel' 196 2
		kr decode 'void mover' 0.5 1 'old.py:1 f'
		gt decode 2 2000
		printf '{"type":"fuse_row","t":0,"stage":"decode","pattern":"Fused QK norm","related_us":200,"status":"missing"}\n'
	} >"$T/a"
	{
		printf '{"type":"input","role":"single","path":"/runs/cand/t.json.gz","framework":"sglang"}\n'
		kr decode 'gemm_MT256x64' 3600 16; kr decode 'void norm<8>' 520 16
		kr decode 'void tiny' 8 4; kr decode 'void fresh' 72 4 'new.py:2 g'
		kr decode 'void mover' 1 2 'new.py:3 h'
		gt decode 4 4200
	} >"$T/b"
	"$BIN/trace-diff" --no-pass --gate 10 --baseline "$T/a" "$T/b" >"$T/d"
}
setup

t_markdown() {
	"$TR" <"$T/d" >"$T/md"
	has "$T/md" '^# Triage report: t.json.gz vs t.json.gz$'
	has "$T/md" '^- \*\*Baseline\*\*: /runs/base/t.json.gz (SGLang, single trace; steps: decode 2)$'
	has "$T/md" '^- \*\*Verdict\*\*: neutral in stage decode: GPU time per step +5.0% (threshold 10.0%)$'
	has "$T/md" '^> Note: decode: the baseline has 2 steps and the candidate 4, so times are per step.$'
	# per step: base (1600+200+4+196+0.5)/2 = 1000.25, cand (3600+520+8+72+1)/4 = 1050.25
	has "$T/md" '^| decode | neutral | kernel_us_per_step | 1.00 ms | 1.05 ms | +5.0% | 10.0% | - | - |$'
	has "$T/md" '^\*\*decode: GPU time per step 1.00 ms -> 1.05 ms (+5.0%), neutral; 2 changed, 1 new, 1 removed, 2 the same.\*\*$'
	# largest absolute change first (per step): gemm +100 us, old_kernel -98, norm +30, fresh +18
	sed -n '/^## Kernels/,/^## Fusions/p' "$T/md" | grep '^| [^-K]' >"$T/rows"
	eq "gemm_MT256x64<br>was gemm_MT128x64 | changed (family) | 0.80 ms | 0.90 ms | +0.10 ms | +12.5% | 8 | 16 | a.py:1 f" \
	    "$(sed -n 1p "$T/rows" | sed 's/^| //; s/ |$//')"
	eq "old_kernel | removed | 0.10 ms | 0.00 ms | -0.10 ms | -100.0% | 2 | 0 | a.py:1 f" \
	    "$(sed -n 2p "$T/rows" | sed 's/^| //; s/ |$//')"
	eq "norm\\<…> | changed | 0.10 ms | 0.13 ms | +0.03 ms | +30.0% | 8 | 16 | a.py:1 f" \
	    "$(sed -n 3p "$T/rows" | sed 's/^| //; s/ |$//')"
	eq "fresh | new | 0.00 ms | 0.02 ms | +0.02 ms | - | 0 | 4 | new.py:2 g" \
	    "$(sed -n 4p "$T/rows" | sed 's/^| //; s/ |$//')"
	eq 4 "$(wc -l <"$T/rows" | tr -d ' ')"
	# tiny (0.2 % of both stages) and mover (0.02 %) under the bar: +1 us and +0.25 us per step
	has "$T/md" '^2 more kernel names below 1.0% of the stage in both runs: together 0.00 ms.$'
	has "$T/md" '^| Fused QK norm | resolved | missing | - | 0.10 ms | - |$'
	has "$T/md" '^| Steps | 2 | 4 | +2 | +100.0% |$'
	has "$T/md" '^| GPU busy per step | 1.00 ms | 1.05 ms | +0.05 ms | +5.0% |$'
	hasnt "$T/md" '^## Legend'
}
check "markdown: facts, verdicts, per-step figures, kernels by change, the bar" t_markdown

t_moved_shown() {
	# the mover above the bar: its site moved
	{ printf '{"type":"input","role":"single","path":"/a","framework":"none"}\n'; kr decode 'void m' 10 1 'old.py:1 f'; } >"$T/a2"
	{ printf '{"type":"input","role":"single","path":"/b","framework":"none"}\n'; kr decode 'void m' 10 1 'new.py:3 h'; } >"$T/b2"
	"$BIN/trace-diff" --no-pass --baseline "$T/a2" "$T/b2" | "$TR" >"$T/md"
	has "$T/md" '^| m | same | 0.01 ms | 0.01 ms | 0.00 ms | 0.0% | 1 | 1 | new.py:3 h<br>moved from old.py:1 f |$'
	has "$T/md" 'no serving framework detected'
}
check "a moved Python site shows where it came from" t_moved_shown

t_json() {
	"$TR" -f json <"$T/d" >"$T/j"
	eq "verdict diff_gpu diff diff_fuse" "$(jq -r '.reports[0].tables[].table' "$T/j" | xargs)"
	# numbers in the column's unit (microseconds per step), full names, lists as arrays
	eq '[800,900,100,12.5,["a.py:1 f"]]' "$(jq -c '.reports[0].tables[] | select(.table == "diff") |
	    .rows[0] | [.base_us, .cand_us, .delta_us, .delta_pct, .location]' "$T/j")"
	eq "gemm_MT256x64
was gemm_MT128x64" "$(jq -r '.reports[0].tables[] | select(.table == "diff") | .rows[0].kernel' "$T/j")"
	# the facts are fields: the verdict itself, each side's input as its record has it
	eq "neutral" "$(jq -r '.reports[0].facts.verdict' "$T/j")"
	eq 'diff /runs/base/t.json.gz 2 4' "$(jq -r '.reports[0].facts |
	    "\(.mode) \(.baseline.path) \(.baseline.steps.decode) \(.candidate.steps.decode)"' "$T/j")"
}
check "json: the tables, numbers in their units" t_json

t_csv_tsv() {
	"$TR" -f csv <"$T/d" >"$T/c"
	eq "stage,kernel,kernel_short,status,base_us,cand_us,delta_us,delta_pct,base_launches,cand_launches,location" \
	    "$(head -n 1 "$T/c" | tr -d '\r')"
	# five records; a family's kernel cell keeps its two lines, as in json, quoted
	eq 5 "$(python3 -c 'import csv, sys; print(len(list(csv.reader(open(sys.argv[1], newline="")))))' \
	    "$T/c")"
	eq "$(printf 'decode,"gemm_MT256x64\nwas gemm_MT128x64","gemm_MT256x64\nwas gemm_MT128x64",changed (family),800,900,100,12.5,8,16,a.py:1 f')" \
	    "$(sed -n 2,4p "$T/c" | tr -d '\r')"
	eq 'decode,void old_kernel,old_kernel,removed,98,0,-98,-100,2,0,a.py:1 f' "$(sed -n 5p "$T/c" | tr -d '\r')"
	"$TR" -f tsv --table verdict <"$T/d" >"$T/t"
	# 50 / 1000.25 of the baseline
	eq "	overall	neutral	kernel_us_per_step	1000.25	1050.25	4.999	10	-	-" \
	    "$(sed -n 3p "$T/t")"
	"$TR" -f tsv --table diff_gpu <"$T/d" | grep -q '^decode	Steps	2	4	2	100$'
	mkdir "$T/dir"
	"$TR" -f csv -o "$T/dir/" <"$T/d"
	eq "diff.csv diff_fuse.csv diff_gpu.csv verdict.csv" "$(ls "$T/dir" | xargs)"
}
check "csv and tsv: the kernel diff by default, any table by name" t_csv_tsv

t_html() {
	"$TR" -f html <"$T/d" >"$T/h"
	has "$T/h" '<div class="tw"><table class="sortable" data-table="diff">'
	# the charts (issue 31): the stage's GPU time in both runs, the kernel changes
	has "$T/h" '"cls":"dbar","title":"GPU time per stage in both runs"'
	has "$T/h" '"axis":"GPU time per step (ms), the sum of the kernel durations"'
	has "$T/h" '"cls":"kbar","title":"The largest changes of the stage'"'"'s kernels"'
	if command -v chromium >/dev/null 2>&1; then
		cp "$T/h" "$T/h.html"
		chromium --headless --no-sandbox --disable-gpu --user-data-dir="$T/chr" \
		    --dump-dom "file://$T/h.html" >"$T/dom" 2>/dev/null
		has "$T/dom" '<body data-ready="1" data-errors="0"'
		eq 2 "$(grep -o 'class="dbar"' "$T/dom" | wc -l)" "stage bars (baseline, candidate)"
		eq 4 "$(grep -o 'class="kbar"' "$T/dom" | wc -l)" "kernel change bars (the shown rows)"
	fi
	has "$T/h" '<section data-section="verdict">'
	has "$T/h" '<td class="k" data-v="gemm_MT256x64&#10;was gemm_MT128x64">'
	has "$T/h" '<td class="k" title="void old_kernel" data-v="old_kernel">'
	hasnt "$T/h" 'data-section="legend"'
	eq 1 "$(grep -c '</main>' "$T/h")"
	"$TR" -f jsonl <"$T/d" >"$T/l"
	same "$T/d" "$T/l"
}
check "html: sortable tables, no kernel legend; jsonl: the records" t_html

t_overlap_section() {
	o() { printf '{"type":"overlap_row","stage":"decode","verdict":"%s","kernel":"void k","total_us":%s,"exclusive_ratio":%s}\n' "$@"; }
	{ kr decode 'void k' 10 1; o headroom 10 1; } >"$T/a3"
	{ kr decode 'void k' 12 1; o low-roi-hidden 12 0.5; } >"$T/b3"
	"$BIN/trace-diff" --no-pass --baseline "$T/a3" "$T/b3" | "$TR" >"$T/md"
	has "$T/md" '^## Overlap$'
	has "$T/md" '^# Triage report: baseline vs candidate$'
	has "$T/md" '^- \*\*Baseline\*\*: (path unknown) (no serving framework detected, single trace)$'
	# 10 us to 12 us: a change of 2 us, under 0.005 ms but not none
	has "$T/md" '^| k | 0.01 ms | 0.01 ms | +\\<0.01 ms | 100.0% | 50.0% | headroom | low-roi-hidden |$'
}
check "overlap rows of both runs: their own section" t_overlap_section

t_hardware() {
	# other GPUs are compared; the header says the hardware differs (issue 25)
	jq -c 'if .type == "diff_input" then .gpu = (if .side == "base" then "NVIDIA H100 80GB HBM3" else "AMD Instinct MI300X" end) else . end' \
	    "$T/d" | "$TR" >"$T/hw.md"
	has "$T/hw.md" '^- \*\*GPU\*\*: hardware differs: NVIDIA H100 80GB HBM3 vs AMD Instinct MI300X$'
	jq -c 'if .type == "diff_input" then .gpu = "NVIDIA H100 80GB HBM3" else . end' "$T/d" | "$TR" >"$T/hw1.md"
	has "$T/hw1.md" '^- \*\*GPU\*\*: NVIDIA H100 80GB HBM3$'
	# one side without a GPU: not said to be both runs'
	jq -c 'if .type == "diff_input" then (if .side == "base" then .gpu = "NVIDIA H100 80GB HBM3" else del(.gpu) end) else . end' \
	    "$T/d" | "$TR" >"$T/hw2.md"
	has "$T/hw2.md" "^- \\*\\*GPU\\*\\*: NVIDIA H100 80GB HBM3 (the baseline's; the candidate's trace names no GPU)\$"
}
check "the GPUs of the two runs, and when the hardware differs" t_hardware

done_testing
