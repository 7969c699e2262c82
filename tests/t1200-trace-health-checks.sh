#!/bin/sh
# trace-health: one fixture per check, with its value, status, detail and
# affected tables; the data-quality warnings trace-stage used to give are
# here now, with the same counts.
. "$(dirname "$0")/lib.sh"

GEN=$TESTDIR/gen-trace
EX=$BIN/trace-extract
ST=$BIN/trace-stage
TH=$BIN/trace-health

# staged NAME [GEN-OPTION...]: generate, extract and stage into $T/NAME.jsonl
staged() {
	_n=$1
	shift
	"$GEN" "$@" -o "$T/$_n.json"
	"$EX" -q "$T/$_n.json" | "$ST" -q >"$T/$_n.jsonl"
}

# health NAME [OPTION...]: trace-health over $T/NAME.jsonl; $T/NAME.{out,err,h}
# (h: the health record alone) and $T/NAME.ck, its checks one a line
# ("id<TAB>status value affects<TAB>detail", by one jq: the lookups below
# read it with awk, not a jq each; issue 31)
health() {
	_n=$1
	shift
	"$TH" "$@" "$T/$_n.jsonl" >"$T/$_n.out" 2>"$T/$_n.err"
	grep '^{"type":"health"' "$T/$_n.out" >"$T/$_n.h"
	jq -r '.checks[] | "\(.id)\t\(.status) \(.value) \(.affects | join(","))\t\(.detail)"' \
	    "$T/$_n.h" >"$T/$_n.ck"
}

# ck NAME ID: the check ID of $T/NAME.h as "status value [affects]"
ck() {
	awk -F'\t' -v id="$2" '$1 == id { s = $2; sub(/ $/, "", s); print s }' "$T/$1.ck"
}
detail() {
	awk -F'\t' -v id="$2" '$1 == id { print $3 }' "$T/$1.ck"
}
# the checks that are not ok, as "id=status"
notok() {
	awk -F'\t' '{ split($2, f, " ") } f[1] != "ok" { l = l (l == "" ? "" : " ") $1 "=" f[1] }
	    END { print l }' "$T/$1.ck"
}

# Hand-made staged records: GPU pid 0, stream 7; CPU pid and thread 9.
hdr() {	# hdr PATH
	printf '{"type":"trace","v":1,"t":0,"path":"%s","stage":"all"}\n' "$1"
	printf '{"type":"gpu_pids","t":0,"selected":"0","time_us":{"0":1}}\n'
	printf '{"type":"annotation","t":0,"name":"ProfilerStep#1","cat":"user_annotation","pid":"9","tid":"9","ts":1,"dur":900}\n'
}
K() {	# K NAME TS DUR CORR [CAT]
	printf '{"type":"kernel","t":0,"name":"%s","cat":"%s","pid":"0","tid":"7","ts":%s,"dur":%s,"stream":"7","correlation":%s,"stage":"all","sel":true}\n' \
	    "$1" "${5:-kernel}" "$2" "$3" "$4"
}
L() {	# L NAME TS CORR [TID]
	printf '{"type":"launch","t":0,"name":"%s","pid":"9","tid":"%s","ts":%s,"dur":2,"correlation":%s}\n' \
	    "$1" "${4:-9}" "$2" "$3"
}
F() {	# F NAME TS DUR
	printf '{"type":"frame","t":0,"name":"%s","pid":"9","tid":"9","ts":%s,"dur":%s}\n' "$1" "$2" "$3"
}
A() {	# A NAME TS DUR
	printf '{"type":"annotation","t":0,"name":"%s","cat":"user_annotation","pid":"9","tid":"9","ts":%s,"dur":%s}\n' \
	    "$1" "$2" "$3"
}
end() {
	printf '{"type":"stats","t":0,"events":100,"kernels":3,"cpu_ops":5,"launches":3,"frames":5}\n'
}
# launch N kernels back to back, 10 us apart from ts BASE, correlations from CORR
eager() {	# eager N BASE CORR
	_i=0
	while [ "$_i" -lt "$1" ]; do
		L cudaLaunchKernel $(($2 + _i * 10)) $(($3 + _i))
		K "void k$_i()" $(($2 + _i * 10 + 5)) 4 $(($3 + _i))
		_i=$((_i + 1))
	done
}

t_hand_baseline() {
	{ hdr base.json; eager 3 10 1; end; } >"$T/base.jsonl"
	health base
	eq ok "$(jq -r .verdict "$T/base.h")"
	eq "" "$(cat "$T/base.err")"
}
check "the hand-made baseline is ok" t_hand_baseline

# ---- no_kernels ----

t_no_kernels_trace() {
	"$GEN" -d no-kernels -o "$T/nok.json"
	"$EX" -q "$T/nok.json" >"$T/nok.x"
	status 3 "$ST" -q "$T/nok.x" >"$T/nok.jsonl" 2>/dev/null
	health nok
	eq unusable "$(jq -r .verdict "$T/nok.h")"
	eq "fail 1 kernel,overlap,fuse,gpu_time,step" "$(ck nok no_kernels)"
	eq "no GPU kernels in the trace (44 events, 12 launches, 12 CPU ops)" "$(detail nok no_kernels)"
	has "$T/nok.err" "^trace-health: warning: '$T/nok.json': no GPU kernels in the trace"
}
check "no_kernels: a trace without GPU kernels fails" t_no_kernels_trace

t_no_kernels_stage() {
	# prefill then decode steps, the decode kernels lost: CPU launches in the
	# decode windows, no kernel with the decode stage
	staged sb -s both -n 3
	health sb
	eq "ok 0" "$(ck sb no_kernels)"
	eq "kernels in every stage: extend 6, decode 12" "$(detail sb no_kernels)"
	jq -c 'select(.type != "kernel" or .stage != "decode")' "$T/sb.jsonl" >"$T/nodec.jsonl"
	health nodec
	eq "fail 1 kernel,overlap,fuse,gpu_time,step" "$(ck nodec no_kernels)"
	eq "decode: no kernels on the analyzed process, though 2 annotations name it and 12 launches fall in them" \
	    "$(detail nodec no_kernels)"
}
check "no_kernels: a stage the annotations name but without kernels fails" t_no_kernels_stage

t_no_kernels_mapping() {
	# kernel-map --sites-only says nothing about an empty mapping input: the
	# mapping trace's health record does
	printf '%s\n' '{"type":"trace","v":1,"t":0,"role":"mapping","path":"/m/a.json","stage":"all"}' \
	    '{"type":"stats","t":0,"events":4}' >"$T/map0.jsonl"
	health map0
	eq "fail 1" "$(ck map0 no_kernels | cut -d' ' -f1-2)"
	status 0 "$BIN/kernel-map" --sites-only "$T/map0.out" >"$T/map0.sites" 2>"$T/map0.kerr"
	eq "" "$(cat "$T/map0.kerr")"
}
check "no_kernels: an empty mapping trace (kernel-map's old warning)" t_no_kernels_mapping

# ---- graph_launch_without_kernels ----

# drop_graph NAME OUT K: drop the kernels of the first K graph launches
drop_graph() {
	_c=$(jq -r 'select(.type == "launch" and .name == "cudaGraphLaunch") | .correlation' \
	    "$T/$1.jsonl" | head -n "$3" | tr '\n' ',' | sed 's/,$//')
	jq -c --argjson c "[$_c]" 'select(.type != "kernel" or ((.correlation as $x | $c | index($x)) | not))' \
	    "$T/$1.jsonl" >"$T/$2.jsonl"
}

t_graph_launch() {
	staged g3 --graph -s both -n 3
	health g3
	eq "ok 0" "$(ck g3 graph_launch_without_kernels)"
	eq "2 CUDA-graph launches, each with its kernels" "$(detail g3 graph_launch_without_kernels)"
	drop_graph g3 g3x 1
	health g3x
	eq "fail 1 kernel,overlap,fuse,gpu_time" "$(ck g3x graph_launch_without_kernels)"
	eq "1 of 2 CUDA-graph launches has no recorded kernel: the replayed graphs' GPU work is missing" \
	    "$(detail g3x graph_launch_without_kernels)"
	# one of three: a warning
	staged g4 --graph -s both -n 4
	drop_graph g4 g4x 1
	health g4x
	eq "warn 1 kernel,overlap,fuse,gpu_time" "$(ck g4x graph_launch_without_kernels)"
	eq degraded "$(jq -r .verdict "$T/g4x.h")"
	# graph launches are neither eager launches without kernels nor a cut tail
	eq "ok 0" "$(ck g4x launch_without_kernel)"
	eq "ok 0" "$(ck g4x truncated)"
}
check "graph_launch_without_kernels: replays whose kernels were not recorded" t_graph_launch

# capture FILE EAGER: launches 101 and 102 inside a capture on thread 9 (no
# kernels), 103 inside it on thread 8 (no kernel), 100 in the capture_begin
# frame itself (it runs), EAGER more launches with kernels.
capture_fixture() {
	{
		hdr cap.json
		F "/usr/lib/python3/site-packages/torch/cuda/graphs.py(98): capture_begin" 200 20
		L cudaLaunchKernel 210 100
		K "void capture_begin_fill()" 215 2 100
		L hipLaunchKernel 230 101
		L cudaLaunchKernel 240 102
		L cudaLaunchKernel 245 103 8
		F "/usr/lib/python3/site-packages/torch/cuda/graphs.py(119): capture_end" 260 5
		eager "$2" 300 1
		end
	} >"$T/$1.jsonl"
}

t_captured() {
	capture_fixture cap 6
	health cap
	eq "warn 2 kernel,overlap,fuse,gpu_time" "$(ck cap graph_launch_without_kernels)"
	eq "2 of 10 launches were made inside 1 CUDA-graph capture (torch.cuda.graph capture_begin .. capture_end): recorded into a graph, never run, so without kernels" \
	    "$(detail cap graph_launch_without_kernels)"
	# the other thread's launch was not captured
	eq "warn 1" "$(ck cap launch_without_kernel | cut -d' ' -f1-2)"
	eq "1 of 8 CUDA launches has no recorded kernel (launch-to-kernel coverage 87.5%)" \
	    "$(detail cap launch_without_kernel)"
	# captured launches half of all: a capture trace, unusable for the tables
	capture_fixture cap2 0
	health cap2
	eq "fail 2 kernel,overlap,fuse,gpu_time" "$(ck cap2 graph_launch_without_kernels)"
}
check "graph_launch_without_kernels: launches captured into a CUDA graph" t_captured

# ---- launch_without_kernel ----

t_coverage() {
	staged orphan -d orphan
	health orphan
	eq "warn 2 kernel,overlap,fuse,gpu_time" "$(ck orphan launch_without_kernel)"
	has "$T/orphan.err" "^trace-health: warning: '$T/orphan.json': 2 of 14 CUDA launches have no recorded kernel (launch-to-kernel coverage 85.7%)$"
	eq 1 "$(wc -l <"$T/orphan.err" | tr -d ' ')"
	# half of the launches without kernels: fail
	jq -c 'select(.type != "kernel" or (.name | test("gemm|Decode") | not))' "$T/orphan.jsonl" >"$T/half.jsonl"
	health half
	eq "fail 10" "$(ck half launch_without_kernel | cut -d' ' -f1-2)"
	# under 1%: ok, and the count is still given
	staged many -n 20 -l 4
	_c=$(jq -r 'select(.type == "launch") | .correlation' "$T/many.jsonl" | head -n 1)
	jq -c --argjson c "$_c" 'select(.type != "kernel" or .correlation != $c)' "$T/many.jsonl" >"$T/many1.jsonl"
	health many1
	eq "ok 1" "$(ck many1 launch_without_kernel)"
	eq "1 of 240 CUDA launches has no recorded kernel (launch-to-kernel coverage 99.6%), under the 1% threshold" \
	    "$(detail many1 launch_without_kernel)"
	eq ok "$(jq -r .verdict "$T/many1.h")"
}
check "launch_without_kernel: coverage warning from 1%, failure from 50%" t_coverage

t_skipped_kernels() {
	# kernels skipped for their dur leave their launches without kernels
	staged dur -d nodur -d negdur
	health dur
	eq "warn 3 kernel,gpu_time" "$(ck dur skipped_events)"
	eq "3 of 83 events skipped (dur_null_or_not_a_number 1, kernels_without_positive_dur 2)" \
	    "$(detail dur skipped_events)"
}
check "skipped_events: the stats record's skipped events, by reason" t_skipped_kernels

t_skipped_fail() {
	jq -c 'if .type == "stats" then .skipped.ts_not_finite = 6 else . end' "$T/dur.jsonl" >"$T/dur9.jsonl"
	health dur9
	eq "fail 9 kernel,gpu_time" "$(ck dur9 skipped_events)"
	eq unusable "$(jq -r .verdict "$T/dur9.h")"
}
check "skipped_events: 10% of the events skipped fails" t_skipped_fail

# ---- kernel_without_launch ----

t_kernel_without_launch() {
	staged clean
	jq -c 'select(.type != "launch")' "$T/clean.jsonl" >"$T/nolaunch.jsonl"
	health nolaunch
	eq "warn 12 kernel,fuse" "$(ck nolaunch kernel_without_launch)"
	eq "12 of 12 compute kernels on the analyzed process have no launch record (100.0%): their source locations rest on the External id alone" \
	    "$(detail nolaunch kernel_without_launch)"
	eq "ok 0" "$(ck nolaunch launch_without_kernel)"
	eq "no kernel launches outside CUDA graphs" "$(detail nolaunch launch_without_kernel)"
	# under 1%
	_c=$(jq -r 'select(.type == "launch") | .correlation' "$T/many.jsonl" | sed -n 7p)
	jq -c --argjson c "$_c" 'select(.type != "launch" or .correlation != $c)' "$T/many.jsonl" >"$T/manyl.jsonl"
	health manyl
	eq "ok 1" "$(ck manyl kernel_without_launch)"
}
check "kernel_without_launch: kernels whose launch was not recorded" t_kernel_without_launch

t_before_capture() {
	# the first step's first three kernels were launched before the profiler
	# recorded the host: their correlations are below every launch's; the
	# capture's start, not a defect
	jq -c 'select(.type != "launch" or .correlation > 3)' "$T/clean.jsonl" >"$T/early.jsonl"
	health early
	eq "info 0" "$(ck early kernel_without_launch)"
	eq "3 of 12 compute kernels on the analyzed process were launched before the profiler recorded the host (correlation ids below the first launch's): they ran as the capture began, their source locations rest on the External id alone" \
	    "$(detail early kernel_without_launch)"
	eq ok "$(jq -r .verdict "$T/early.h")"
	# a launch lost in the middle of the capture is a defect
	jq -c 'select(.type != "launch" or .correlation != 7)' "$T/clean.jsonl" >"$T/mid.jsonl"
	health mid
	eq "warn 1 kernel,fuse" "$(ck mid kernel_without_launch)"
}
check "kernel_without_launch: kernels launched before the capture began are expected" t_before_capture

t_zero_dur() {
	# a kernel of dur 0 (shorter than a microsecond in a trace of whole
	# microseconds) ran: its launch has it; a zero-length sync is no GPU item
	printf '%s\n' '{"traceEvents": [' \
	    '{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 9, "ts": 10, "dur": 2, "args": {"correlation": 1}},' \
	    '{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 9, "ts": 20, "dur": 2, "args": {"correlation": 2}},' \
	    '{"ph": "X", "cat": "kernel", "name": "k1", "pid": 0, "tid": 7, "ts": 15, "dur": 4, "args": {"correlation": 1}},' \
	    '{"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7, "ts": 25, "dur": 0, "args": {"correlation": 2}},' \
	    '{"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "pid": 0, "tid": 7, "ts": 30, "dur": 0, "args": {"stream": 7}}' \
	    ']}' >"$T/zero.json"
	"$EX" -q "$T/zero.json" | "$ST" -q >"$T/zero.jsonl"
	eq '1 1 1 1' "$(jq -r 'select(.type == "stats") | "\(.warnings.kernels_without_positive_dur) \(.warnings.kernels_zero_dur) \(.warnings.launches_zero_dur) \(.not_gpu_work)"' "$T/zero.jsonl")"
	health zero
	eq "ok 0" "$(ck zero launch_without_kernel)"
	eq "each of 2 CUDA launches has its kernel (1 with a kernel of zero duration, shorter than the trace's clock resolution)" \
	    "$(detail zero launch_without_kernel)"
	eq "info 0" "$(ck zero skipped_events)"
	eq ok "$(jq -r .verdict "$T/zero.h")"
}
check "zero-duration GPU items: their launches have them; no skipped events" t_zero_dur

t_memcpy_not_counted() {
	# GPU copies come from cudaMemcpyAsync, not a launch: not counted
	{ hdr cp.json; eager 3 10 1; K "Memcpy HtoD (Pageable -> Device)" 100 3 50 gpu_memcpy; end; } >"$T/cp.jsonl"
	health cp
	eq "ok 0" "$(ck cp kernel_without_launch)"
	eq "each of 3 compute kernels on the analyzed process has its launch" "$(detail cp kernel_without_launch)"
}
check "kernel_without_launch: copies and memsets are not compute kernels" t_memcpy_not_counted

# ---- no_python_stacks, no_cpu_ops ----

t_no_stacks() {
	jq -c 'select(.type != "frame") | if .type == "stats" then .frames = 0 else . end' \
	    "$T/clean.jsonl" >"$T/nostack.jsonl"
	health nostack
	# a limitation of the capture settings: it costs the locations, it degrades nothing
	eq "limited 0 kernel,overlap,fuse" "$(ck nostack no_python_stacks)"
	eq "limited: no python_function events (the profiler ran without with_stack): kernels get no Python source location" \
	    "$(detail nostack no_python_stacks)"
	eq ok "$(jq -r .verdict "$T/nostack.h")"
	eq "" "$(cat "$T/nostack.err")"
	health clean
	eq "ok 14" "$(ck clean no_python_stacks)"
	eq "14 Python frames" "$(detail clean no_python_stacks)"
}
check "no_python_stacks: no python_function events" t_no_stacks

t_no_cpu_ops() {
	jq -c 'select(.type != "cpu_op") | if .type == "stats" then .cpu_ops = 0 else . end' \
	    "$T/clean.jsonl" >"$T/noops.jsonl"
	health noops
	eq "limited 0 kernel,fuse" "$(ck noops no_cpu_ops)"
	eq ok "$(jq -r .verdict "$T/noops.h")"
	eq "ok 12" "$(ck clean no_cpu_ops)"
}
check "no_cpu_ops: no cpu_op events" t_no_cpu_ops

# ---- merged_devices ----

t_merged_devices() {
	staged two -d two-gpus
	health two
	eq "warn 2 overlap,gpu_time" "$(ck two merged_devices)"
	has "$T/two.err" "^trace-health: warning: '$T/two.json': kernels on 2 GPU processes; analyzing pid 0, the others hold 0.36 ms (50.0% of kernel time)$"
	eq 1 "$(wc -l <"$T/two.err" | tr -d ' ')"
	eq "ok 1" "$(ck clean merged_devices)"
	eq "one GPU process (pid 0)" "$(detail clean merged_devices)"
}
check "merged_devices: kernels on several GPU processes" t_merged_devices

t_heavier_pid() {
	# trace-stage analyzes the heavier process (pid 1: 0.76 ms); the
	# warning gives the lighter one's share, 0.36 of 1.12 ms
	"$GEN" -d two-gpus -o "$T/tg.json"
	"$EX" -q "$T/tg.json" | jq -c 'if .type == "kernel" and .pid == "1" and (.name | test("gemm")) then .dur = 150 else . end' |
	    "$ST" -q >"$T/tg.jsonl"
	health tg
	has "$T/tg.err" "'$T/tg.json': kernels on 2 GPU processes; analyzing pid 1, the others hold 0.36 ms (32.1% of kernel time)"
}
check "merged_devices: the others' share when the heavier process is analyzed" t_heavier_pid

# ---- clock_skew ----

t_skew() {
	# every GPU timestamp 30 us early: the first kernel of each step starts
	# 17.5 us before its launch (the others queue behind it)
	staged skew -d skew
	health skew
	eq "warn 3 gpu_time,step" "$(ck skew clock_skew)"
	eq "3 kernels start before their launch call, by up to 17.500 us: the CPU and GPU clocks disagree" \
	    "$(detail skew clock_skew)"
	eq "ok 0" "$(ck skew stream_overlap)"
	eq "ok 0" "$(ck clean clock_skew)"
}
check "clock_skew: kernels starting before their launch" t_skew

# ---- stream_overlap ----

t_overlap_merged() {
	staged dup -d dup-ranks
	health dup
	eq "fail 12 kernel,overlap,fuse,gpu_time" "$(ck dup stream_overlap)"
	has "$T/dup.err" "^trace-health: warning: '$T/dup.json': 12 kernels start before the previous kernel on the same stream ends, by up to 49.000 us; 12 of them repeat the kernel before them: merged ranks or duplicated processes$"
	eq 1 "$(wc -l <"$T/dup.err" | tr -d ' ')"
	eq unusable "$(jq -r .verdict "$T/dup.h")"
}
check "stream_overlap: two ranks concatenated on one pid fail, counted" t_overlap_merged

t_overlap_pdl() {
	{
		hdr pdl.json
		L cudaLaunchKernelExC 10 1; L cudaLaunchKernelExC 12 2; L cudaLaunchKernelExC 14 3
		K "nvjet_sm103_tst_64x16_64x16_4x1_v_bz_TNT" 20 20 1
		K "void fused_qknorm()" 38 5 2
		K "void fused_rope()" 42.5 3 3
		end
	} >"$T/pdl.jsonl"
	health pdl
	# expected on sm90 and later: information, no defect, nothing on stderr
	eq "info 2" "$(ck pdl stream_overlap)"
	eq "2 kernels start before the previous kernel on the same stream ends, each by less than 10 us (at most 2.000 us) and each outlasting the one before: programmatic dependent launch (Blackwell: sm103); expected, and counted once in the busy time" \
	    "$(detail pdl stream_overlap)"
	eq ok "$(jq -r .verdict "$T/pdl.h")"
	eq "" "$(cat "$T/pdl.err")"
	# Hopper by name; and no name telling the architecture
	sed 's/nvjet_sm103_tst/sm90_xmma_gemm/' "$T/pdl.jsonl" >"$T/pdl90.jsonl"
	health pdl90
	has_text "$(detail pdl90 stream_overlap)" "programmatic dependent launch (Hopper: sm90)"
	sed 's/nvjet_sm103_tst/cutlass_gemm/' "$T/pdl.jsonl" >"$T/pdlx.jsonl"
	health pdlx
	has_text "$(detail pdlx stream_overlap)" "programmatic dependent launch (Hopper or Blackwell; neither the trace nor a kernel name tells the architecture)"
	# the trace's own device record tells it, before any kernel name
	sed '1a\
{"type":"device","t":0,"id":0,"name":"NVIDIA GB300","compute_major":10,"compute_minor":3,"warp_size":32}' \
	    "$T/pdlx.jsonl" >"$T/pdldev.jsonl"
	health pdldev
	has_text "$(detail pdldev stream_overlap)" "programmatic dependent launch (Blackwell: compute capability 10.3)"
	# an sm80 device: no programmatic dependent launch, whatever the names
	sed '1a\
{"type":"device","t":0,"id":0,"name":"NVIDIA A100-SXM4-80GB","compute_major":8,"compute_minor":0,"warp_size":32}' \
	    "$T/pdl.jsonl" >"$T/pdl80.jsonl"
	health pdl80
	eq "warn 2 kernel,overlap,gpu_time" "$(ck pdl80 stream_overlap)"
}
check "stream_overlap: programmatic dependent launch, with the architecture" t_overlap_pdl

t_overlap_jitter() {
	# one kernel of a hundred starting 0.111 us early (ROCm, a real vLLM trace): no figure moves
	{
		hdr jit.json
		eager 100 10 1
		K "void late()" 1008.889 4 999
		end
	} | sed 's/cudaLaunchKernel/hipLaunchKernel/' >"$T/jit.jsonl"
	health jit
	eq "info 1" "$(ck jit stream_overlap)"
	has_text "$(detail jit stream_overlap)" "by up to 0.111 us, 0.111 us in all (0.0275% of the kernel time): too little to change a figure"
	eq ok "$(jq -r .verdict "$T/jit.h")"
	# more of the kernel time overlapped (here 2.111 us of 406 us): a warning
	sed 's/"ts":1008.889,"dur":4,/"ts":1006.889,"dur":6,/' "$T/jit.jsonl" >"$T/jit2.jsonl"
	health jit2
	eq "warn 1 kernel,overlap,gpu_time" "$(ck jit2 stream_overlap)"
}
check "stream_overlap: a few overlaps too small to change a figure are information" t_overlap_jitter

t_overlap_unknown() {
	# an older architecture, HIP launches, or a long overlap: not PDL
	sed 's/nvjet_sm103_tst/sm80_xmma_gemm/' "$T/pdl.jsonl" >"$T/ov80.jsonl"
	sed 's/cudaLaunchKernelExC/hipLaunchKernel/' "$T/pdl.jsonl" >"$T/ovhip.jsonl"
	sed 's/"ts":20,"dur":20,/"ts":20,"dur":50,/' "$T/pdl.jsonl" >"$T/ovlong.jsonl"
	for f in ov80 ovhip ovlong; do
		health $f
		eq "warn 2 kernel,overlap,gpu_time" "$(ck $f stream_overlap)" "$f"
		has "$T/$f.err" "merged processes, clock errors or concurrent launches; the pattern does not tell which$"
	done
	has "$T/ovlong.err" "by up to 32.000 us"
}
check "stream_overlap: when the pattern does not tell, a warning that says so" t_overlap_unknown

t_overlap_sync() {
	# a cuda_sync event waits for the copy it overlaps: no overlap
	{ hdr sync.json; eager 3 10 1; K "Stream Sync" 14 20 60 cuda_sync; end; } >"$T/sync.jsonl"
	health sync
	eq "ok 0" "$(ck sync stream_overlap)"
	eq "no kernels overlap on a stream" "$(detail sync stream_overlap)"
}
check "stream_overlap: cuda_sync events are not work" t_overlap_sync

# ---- no_shapes ----

t_no_shapes() {
	# Kineto writes each profiler option only when it is on
	jq -c 'if .type == "trace" then .capture_flags = {"with_stack": true} else . end' \
	    "$T/clean.jsonl" >"$T/noshape.jsonl"
	health noshape
	eq "limited 0 kernel" "$(ck noshape no_shapes)"
	has_text "$(detail noshape no_shapes)" "limited: the profiler ran without record_shapes"
	eq ok "$(jq -r .verdict "$T/noshape.h")"
	jq -c 'if .type == "trace" then .capture_flags = {"record_shapes": true} else . end' \
	    "$T/clean.jsonl" >"$T/shape.jsonl"
	health shape
	eq "ok 1" "$(ck shape no_shapes)"
	# an older writer states no options: nothing known, nothing said
	health clean
	eq "ok 0" "$(ck clean no_shapes)"
	eq "the trace does not say whether input shapes were recorded" "$(detail clean no_shapes)"
}
check "no_shapes: a limitation only when the trace says record_shapes was off" t_no_shapes

# ---- clock_offset ----

t_clock_offset() {
	staged ahead -s both -n 3 -d gpu-ahead
	health ahead
	eq "warn 55005 gpu_time,step" "$(ck ahead clock_offset)"
	# the first kernel is the one with nothing queued before it; no kernel
	# starts sooner than 55.0125 ms after its call began (calls last 8 us)
	eq "1 item that starts on a GPU with nothing running or queued starts 55.005 ms after its launch call returned, and no item starts sooner than 55.013 ms after its call began (a launch reaches an idle GPU in 5 to 50 us): the GPU clock runs about 55.0 ms ahead of the host's; stages follow the launch times (trace-stage), and the idle time waiting for the host is not measured" \
	    "$(detail ahead clock_offset)"
	eq degraded "$(jq -r .verdict "$T/ahead.h")"
	# its stages are right (by the launches): no stage lacks kernels
	eq "ok 0" "$(ck ahead no_kernels)"
	health clean
	eq "ok 0" "$(ck clean clock_offset)"
	# of the 12 kernels, the first and the second gemm start with nothing
	# queued; the others wait behind the kernel before them, however short
	# the gap (2 us), since their calls returned before it began
	eq "launch to start: median 39.500 us; of 2 items that start on a GPU with nothing running or queued the quickest starts 4.500 us after its launch call returned" \
	    "$(detail clean clock_offset)"
}
check "clock_offset: a kernel that starts with nothing queued 55 ms after its launch" t_clock_offset

# ---- absurd_timestamps ----

t_absurd_ts() {
	staged absurd -d absurd-ts
	health absurd
	eq "warn 1 gpu_time,step" "$(ck absurd absurd_timestamps)"
	has "$T/absurd.err" "'$T/absurd.json': 1 kernel has a negative or absurd timestamp (outside 0 .. 1e17 us, or more than an hour after its launch call)$"
	eq "ok 0" "$(ck clean absurd_timestamps)"
	# one kernel 3e13 us after its launch: days of idle time from one event
	{ hdr far.json; eager 4 10 1; K far 30000000000010 5 99; L cudaLaunchKernel 8 99; end; } >"$T/far.jsonl"
	health far
	eq "warn 1 gpu_time,step" "$(ck far absurd_timestamps)"
}
check "absurd_timestamps: negative or absurd timestamps are counted" t_absurd_ts

# ---- truncated ----

t_truncated_bracket() {
	staged noclose -d no-close
	health noclose
	eq "warn 0 kernel,gpu_time,step" "$(ck noclose truncated)"
	eq "the event array has no closing ']' (the format allows it; a writer stopped early leaves the same)" \
	    "$(detail noclose truncated)"
	eq "ok 0" "$(ck clean truncated)"
}
check "truncated: an event array without its closing bracket" t_truncated_bracket

t_truncated_tail() {
	{ hdr tail.json; eager 8 10 1; L cudaLaunchKernel 200 50; L cudaLaunchKernel 210 51; end; } >"$T/tail.jsonl"
	health tail
	eq "warn 2 kernel,gpu_time,step" "$(ck tail truncated)"
	eq "the last 2 launches have no kernels: the capture stopped before the GPU ran them" \
	    "$(detail tail truncated)"
	eq "2 of 10 CUDA launches have no recorded kernel (launch-to-kernel coverage 80.0%); the last 2 in time are among them (truncated)" \
	    "$(detail tail launch_without_kernel)"
	# one launch at the end is not evidence of a cut
	{ hdr tail1.json; eager 8 10 1; L cudaLaunchKernel 200 50; end; } >"$T/tail1.jsonl"
	health tail1
	eq "ok 0" "$(ck tail1 truncated)"
}
check "truncated: launches at the end whose kernels never came" t_truncated_tail

# ---- duplicate_event_arrays ----

# A second traceEvents member: the report reads both, a viewer the last.
t_duplicate_event_arrays() {
	"$GEN" -o "$T/one.json"
	sed '0,/"traceEvents": *\[/s//"traceEvents": [], "traceEvents": [/' "$T/one.json" >"$T/dup.json"
	"$EX" -q "$T/dup.json" | "$ST" -q >"$T/dup.jsonl"
	health dup
	eq "warn 1 kernel,overlap,fuse,gpu_time,step" "$(ck dup duplicate_event_arrays)"
	eq "2 traceEvents arrays: this report reads them all, a JSON reader (a trace viewer, Python's json) the last alone, so the two show other events" \
	    "$(detail dup duplicate_event_arrays)"
	staged one1
	health one1
	eq "ok 0" "$(ck one1 duplicate_event_arrays)"
	# and --strict makes the warning an error
	status 1 "$EX" --strict "$T/dup.json" >/dev/null 2>"$T/dup.err"
	has "$T/dup.err" 'more than one traceEvents array'
}
check "duplicate_event_arrays: two traceEvents members" t_duplicate_event_arrays

# ---- short_capture ----

t_short_capture() {
	health clean --expect-steps 2
	eq "ok 2" "$(ck clean short_capture)"
	eq "2 steps (ProfilerStep#N)" "$(detail clean short_capture)"
	health clean --expect-steps 3
	eq "warn 2 gpu_time,step" "$(ck clean short_capture)"
	eq "2 steps (ProfilerStep#N), fewer than the 3 asked for" "$(detail clean short_capture)"
	jq -c 'select(.type != "annotation")' "$T/clean.jsonl" >"$T/nosteps.jsonl"
	health nosteps
	eq "limited 0 step" "$(ck nosteps short_capture)"
	eq "limited: no step annotations (ProfilerStep#N, step[...], execute_..._generation_...): no per-step figures (step period, tokens per second)" \
	    "$(detail nosteps short_capture)"
	# asked for steps, and none: a defect
	health nosteps --expect-steps 1
	eq "warn 0 gpu_time,step" "$(ck nosteps short_capture)"
}
check "short_capture: fewer steps than asked for, or none" t_short_capture

t_step_vocabulary() {
	{
		printf '{"type":"trace","v":1,"t":0,"path":"v.json"}\n'
		A "step[DECODE bs=16]" 10 50; A "step[DECODE bs=16]" 70 50
		A "execute_16_context_0(sq0sk0)_generation_16(sq16sk8193)" 12 40
		printf '{"type":"stats","t":0}\n'
	} >"$T/voc.jsonl"
	health voc
	eq "2 steps (step[...])" "$(detail voc short_capture)"
	grep -v 'step\[' "$T/voc.jsonl" >"$T/voc2.jsonl"
	health voc2
	eq "1 step (execute_<n>_context_<...>_generation_<...>)" "$(detail voc2 short_capture)"
	# GPU-side copies of annotations are not steps
	sed 's/"cat":"user_annotation"/"cat":"gpu_user_annotation"/' "$T/voc2.jsonl" >"$T/voc3.jsonl"
	health voc3
	eq "limited 0" "$(ck voc3 short_capture | cut -d' ' -f1-2)"
}
check "short_capture: the step vocabularies of the serving frameworks" t_step_vocabulary

t_spilled() {
	# the kernels, launches and joins in runs of a few records on disk
	# (issue 30): the same health record for every defect the checks know
	for d in none orphan two-gpus dup-ranks skew gpu-ahead negdur absurd-ts nodur; do
		if [ $d = none ]; then "$GEN" -s both -n 4 --streams 2 -o "$T/sp.json"
		else "$GEN" -s both -n 4 --streams 2 -d $d -o "$T/sp.json"; fi
		"$EX" -q "$T/sp.json" | "$ST" -q --late-stages >"$T/sp.st"
		"$BIN/trace-health" -q "$T/sp.st" >"$T/mem"
		TRIAGE_SPOOL_MEM=64 "$BIN/trace-health" -q "$T/sp.st" >"$T/disk"
		same "$T/mem" "$T/disk"
		[ $d = orphan ] && cp "$T/disk" "$T/orphan"
	done
	# an orphan launch per step, found through the sorted launches
	eq 'launch_without_kernel warn 4' "$(grep '"type":"health"' "$T/orphan" |
	    jq -r '.checks[] | select(.status != "ok") | "\(.id) \(.status) \(.value)"')"
	"$GEN" -s decode -n 6 --graph -o "$T/g.json"
	"$EX" -q "$T/g.json" | "$ST" -q >"$T/g.st"
	"$BIN/trace-health" -q "$T/g.st" >"$T/mem"
	TRIAGE_SPOOL_MEM=64 "$BIN/trace-health" -q "$T/g.st" >"$T/disk"
	same "$T/mem" "$T/disk"
}
check "the same health records with the kernels and the joins in runs on disk" t_spilled

done_testing
