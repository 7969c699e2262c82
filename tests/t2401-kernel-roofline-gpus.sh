#!/bin/sh
# kernel-roofline: the GPU table (data/gpu-specs.jsonl, gpu-specs(5)) and
# matching a trace's device to it.  Every entry's arithmetic: each figure is
# the datasheet's printed one, halved where it is a sparse figure, divided
# where it is a board's or a rack's; the ratios the datasheets state hold;
# every entry names its source.  Device names as real traces write them.
. "$(dirname "$0")/lib.sh"

DATA=$TOP/data/gpu-specs.jsonl
SPECS=$FIX/kernel-roofline/test-gpus.jsonl

t_arithmetic() {
	# printed "1,979*" -> 989.5 (sparse halved), "2.5 PFLOPS" -> 2500, "3.35 TB/s" -> 3350 GB/s
	jq -e -s '
	def num: sub("[*]$"; "") | sub(" *(PFLOPS|POPS|TB/s)$"; "e3") | sub(" *(TFLOPS|TOPS|GB/s)$"; "")
	    | gsub(","; "") | if test("e3$") then (sub("e3$"; "") | tonumber * 1000) else tonumber end;
	def close($a; $b): ($a - $b | fabs) <= 1e-6 * ([$a, $b] | max) + 1e-9;
	[ .[] | . as $e | ($e.scale // 1) as $s |
	  ( $e.printed // {} | to_entries[] |
	    ((.value | num) / $s / (if (.value | endswith("*")) then 2 else 1 end)) as $dense |
	    (if .key == "mem" then $e.mem_gbps else $e.tflops[.key] end) as $have |
	    select(close($dense; $have) | not) | "\($e.name) \(.key): \($have) != \($dense)" ),
	  ( $e.tflops // {} | keys[] as $k | select(($e.printed // {}) | has($k) | not) |
	    "\($e.name) \($k): no printed figure" ),
	  ( select($e.mem_gbps and (($e.printed // {}) | has("mem") | not)) | "\($e.name): mem not printed" ),
	  ( select(($e.source // "") == "") | "\($e.name): no source" )
	] | if length == 0 then true else (.[] | debug) | false end' "$DATA" >/dev/null
}
check "every figure is the datasheet's, halved when printed sparse, divided per GPU" t_arithmetic

t_ratios() {
	# "fp8=2*bf16": the datasheet's own relation between two of the entry's figures
	jq -e -s '
	[ .[] | . as $e | ($e.ratios // [])[] |
	  capture("^(?<a>[a-z0-9_]+)=((?<k>[0-9]+)[*])?(?<b>[a-z0-9_]+)$") as $r |
	  ($e.tflops[$r.a]) as $x | ($e.tflops[$r.b] * (($r.k // "1") | tonumber)) as $y |
	  select($x == null or $y == null or (($x - $y) | fabs) > 0.006 * $y) |
	  "\($e.name): \($r.a)=\($x) but \($r.k // 1)*\($r.b)=\($y)" ]
	| if length == 0 then true else (.[] | debug) | false end' "$DATA" >/dev/null
	# the parts where the datasheet says so have fp8 at twice bf16
	eq 0 "$(jq -s '[.[] | select(.tflops.fp8 and .tflops.bf16 and (.ratios // [] | index("fp8=2*bf16") | not)
	    and (.name | test("L40S|GB300") | not))] | length' "$DATA")" "fp8 parts without the ratio"
}
check "the ratios the datasheets state hold (fp8 = 2 x bf16, bf16 = fp16, ...)" t_ratios

t_parts() {
	for p in V100 T4 'A10$' A10G 'A100 SXM4 40GB' 'A100 SXM4 80GB' 'A100 PCIe 40GB' \
	    'A100 PCIe 80GB' A800 L4 L40S 'H100 SXM' 'H100 PCIe' 'H100 NVL' H800 H20 'H200 SXM' \
	    GH200 B200 B300 GB200 GB300 'RTX 4090' 'RTX 5090' MI210 MI250X MI300X MI308X \
	    MI325X MI355X; do
		jq -e -s --arg p "$p" 'map(select(.name | test($p))) | length > 0' "$DATA" >/dev/null ||
		    { echo "no entry for $p"; return 1; }
	done
	# the parts without public figures say so, and have none
	eq "NVIDIA A10G NVIDIA H20 AMD Instinct MI308X" "$(jq -r 'select((.tflops | length) == 0 and
	    (.mem_gbps | not)) | .name' "$DATA" | paste -sd' ')"
}
check "the issue's parts are all there; those without public figures have none" t_parts

# A stream of one-kernel traces, one device record each; rl: their roofline records.
devices() {
	: >"$T/in.jsonl"
	_t=0
	while IFS='|' read -r name sm ccmaj ccmin mem; do
		printf '{"type":"trace","t":%d}\n{"type":"device","t":%d,"id":0,"name":"%s","total_global_mem":%s,"num_sms":%s,"compute_major":%s,"compute_minor":%s}\n' \
		    "$_t" "$_t" "$name" "$mem" "$sm" "$ccmaj" "$ccmin"
		printf '{"type":"kernel","t":%d,"name":"k","ts":0,"dur":1,"stage":"all","sel":true}\n{"type":"stats","t":%d}\n' \
		    "$_t" "$_t"
		_t=$((_t + 1))
	done >"$T/in.jsonl"
}

t_real_names() {
	devices <<'EOF2'
NVIDIA H100 80GB HBM3|132|9|0|85018279936
NVIDIA A100-PG509-200|108|8|0|42297524224
NVIDIA A100 80GB PCIe|108|8|0|84987740160
Tesla V100-SXM2-32GB|80|7|0|34089730048
AMD Instinct MI300X|304|9|4|206141652992
|304|9|4|206141652992
NVIDIA B200|148|10|0|191503138816
NVIDIA B300 SXM6 AC|148|10|3|287431131136
AMD Instinct MI210|104|9|0|68702699520
NVIDIA H20|78|9|0|102005473280
EOF2
	"$BIN/kernel-roofline" -q <"$T/in.jsonl" >"$T/out.jsonl"
	jq -r 'select(.type == "roofline") | .gpu' "$T/out.jsonl" >"$T/got"
	cat >"$T/want" <<'EOF2'
NVIDIA H100 SXM
NVIDIA A100 SXM4 40GB
NVIDIA A100 PCIe 80GB
NVIDIA Tesla V100 SXM2
AMD Instinct MI300X
AMD Instinct MI300X
NVIDIA B200
NVIDIA B300
AMD Instinct MI210
NVIDIA H20
EOF2
	same "$T/want" "$T/got"
	# a matched part without public figures: no roofline figures at all
	eq "null null" "$(jq -r 'select(.type == "roofline" and .gpu == "NVIDIA H20") |
	    "\(.mem_gbps) \(.roof_us)"' "$T/out.jsonl")"
}
check "device names as real traces write them (an empty ROCm name by its properties)" t_real_names

t_no_match() {
	devices <<'EOF2'
AMD Radeon Graphics|104|9|0|68702699520
NVIDIA GeForce RTX 2080 Ti|68|7|5|11554586624
EOF2
	"$BIN/kernel-roofline" -q <"$T/in.jsonl" >"$T/out.jsonl"
	jq -r 'select(.type == "roofline") | "\(.gpu) \(.gpu_reason)"' "$T/out.jsonl" >"$T/got"
	has "$T/got" "null 'AMD Radeon Graphics' fits both AMD Instinct MI210 and AMD Instinct MI250 (one GCD)"
	has "$T/got" "null 'NVIDIA GeForce RTX 2080 Ti' is not in the GPU table"
	# no GPU: no percentage anywhere
	hasnt "$T/out.jsonl" '"pct_of_roof"'
	hasnt "$T/out.jsonl" '"roof_us"'
	# --gpu names it whatever the trace says
	"$BIN/kernel-roofline" -q --gpu 'NVIDIA H100 SXM' <"$T/in.jsonl" >"$T/out.jsonl"
	eq "NVIDIA H100 SXM option" "$(jq -r 'select(.type == "roofline") | "\(.gpu) \(.gpu_source)"' \
	    "$T/out.jsonl" | sort -u)"
	# a part of names: the one entry it names, or which it could mean (exit 2)
	"$BIN/kernel-roofline" -q --gpu mi355 <"$T/in.jsonl" >"$T/out.jsonl"
	eq "AMD Instinct MI355X" "$(jq -r 'select(.type == "roofline") | .gpu' "$T/out.jsonl" | sort -u)"
	status 2 "$BIN/kernel-roofline" -q --gpu H100 <"$T/in.jsonl" >/dev/null 2>"$T/err"
	has "$T/err" "^kernel-roofline: --gpu: 'H100' could be NVIDIA H100 SXM, NVIDIA H100 PCIe, NVIDIA H100 NVL: name one of them$"
}
check "a generic name that fits two parts, a part not in the table: no roofline, and why" t_no_match

t_generic_and_several() {
	printf '%s\n' '{"type":"trace","t":0}' \
	    '{"type":"device","t":0,"id":0,"name":"AMD Radeon Graphics","total_global_mem":68702699520,"num_sms":100,"compute_major":9,"compute_minor":4}' \
	    '{"type":"kernel","t":0,"name":"k","ts":0,"dur":1,"stage":"all","sel":true}' '{"type":"stats","t":0}' \
	    '{"type":"trace","t":1}' \
	    '{"type":"device","t":1,"id":0,"name":"generic-c","total_global_mem":68702699520,"num_sms":200,"compute_major":9,"compute_minor":4}' \
	    '{"type":"device","t":1,"id":3,"name":"test gpu","total_global_mem":1,"num_sms":1,"compute_major":1,"compute_minor":0}' \
	    '{"type":"gpu_pids","t":1,"selected":"3","time_us":{}}' \
	    '{"type":"kernel","t":1,"name":"k","ts":0,"dur":1,"stage":"all","sel":true}' '{"type":"stats","t":1}' \
	    >"$T/in.jsonl"
	"$BIN/kernel-roofline" -q --gpu-specs "$SPECS" <"$T/in.jsonl" >"$T/out.jsonl"
	jq -r 'select(.type == "roofline") | .gpu // .gpu_reason' "$T/out.jsonl" >"$T/got"
	# Generic A and B fit the properties with different figures: neither is taken
	has "$T/got" "fits both Generic A and Generic B"
	# of two devices, the analyzed process's (gpu_pids)
	eq "Test GPU" "$(sed -n 2p "$T/got")"
}
check "generic entries by properties, ambiguity refused; the analyzed process's device" \
    t_generic_and_several

t_bad_input() {
	printf '{"name": "x", "match": "not a list", "source": "s"}\n' >"$T/bad.jsonl"
	status 1 "$BIN/kernel-roofline" -q --gpu-specs "$T/bad.jsonl" </dev/null 2>"$T/err"
	has "$T/err" "bad.jsonl:1: 'match' is not an array of strings"
	status 2 "$BIN/kernel-roofline" --gpu 'No Such GPU' </dev/null 2>"$T/err"
	has "$T/err" "'No Such GPU' is not in the GPU table"
	status 3 "$BIN/kernel-roofline" </dev/null 2>/dev/null
	status 2 "$BIN/kernel-roofline" --gpu-specs - --mapping - 2>/dev/null
}
check "a malformed table (exit 1, file:line), an unknown --gpu (exit 2), no records (exit 3)" t_bad_input

done_testing
