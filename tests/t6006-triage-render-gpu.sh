#!/bin/sh
# triage-render: the header's GPU line (issue 25 follow-up).  An AMD GPU
# shows its gfx target and compute units, never a CUDA compute capability
# (Kineto on ROCm writes HIP's 9.0 for gfx90a, 9.4 for gfx942); a GPU the
# trace leaves unnamed (vLLM on ROCm 7 writes "") or names generically
# (ROCm 6.2: "AMD Radeon Graphics") is named by the part of the GPU table
# its figures fit, and says so.  The figures are those of real traces'
# deviceProperties.
. "$(dirname "$0")/lib.sh"

GEN=$TESTDIR/gen-trace

# gpu FILE NAME WARP SMS MEM MAJOR MINOR: the header's GPU line for a trace
# whose one device has these properties
gpu() {
	jq -c --arg n "$2" --argjson w "$3" --argjson s "$4" --argjson m "$5" --argjson a "$6" \
	    --argjson b "$7" '.deviceProperties = [{"id": 0, "name": $n, "warpSize": $w,
	    "numSms": $s, "totalGlobalMem": $m, "computeMajor": $a, "computeMinor": $b}]' \
	    "$T/base.json" >"$1"
	"$TRIAGE" -q --input "$1" | sed -n 's/^- \*\*GPU\*\*: //p'
}

t_amd() {
	"$GEN" -o "$T/base.json"
	eq 'AMD Instinct MI300X, gfx942, 304 CUs, 192 GiB' \
	    "$(gpu "$T/a.json" "AMD Instinct MI300X" 64 304 206141652992 9 4)"
	eq 'AMD Instinct MI210, gfx90a, 104 CUs, 64 GiB' \
	    "$(gpu "$T/b.json" "AMD Instinct MI210" 64 104 68702699520 9 0)"
	# an AMD part the table does not know: the family of its version
	eq 'AMD Instinct MI100, a gfx90… target (HIP version 9.0), 120 CUs, 32 GiB' \
	    "$(gpu "$T/c.json" "AMD Instinct MI100" 64 120 34342961152 9 0)"
	# NVIDIA keeps its compute capability and SMs
	eq 'NVIDIA H100 80GB HBM3, compute capability 9.0, 132 SMs, 79 GiB' \
	    "$(gpu "$T/d.json" "NVIDIA H100 80GB HBM3" 32 132 85031714816 9 0)"
}
check "AMD: the gfx target and compute units; NVIDIA: compute capability and SMs" t_amd

t_unnamed() {
	"$GEN" -o "$T/base.json"
	# vLLM on ROCm 7 (an MI300X node): no name, its figures fit one part
	eq 'AMD Instinct MI300X (matched by its 304 CUs, 192 GiB and GFX version 9.4: the trace names no GPU), gfx942, 304 CUs, 192 GiB' \
	    "$(gpu "$T/a.json" "" 64 304 206141652992 9 4)"
	# ROCm 6.2 on an MI250: a generic name whose figures fit two parts,
	# both gfx90a
	eq 'AMD Radeon Graphics (a generic name: its 104 CUs, 64 GiB and GFX version 9.0 fit AMD Instinct MI210 and AMD Instinct MI250 (one GCD)), gfx90a, 104 CUs, 64 GiB' \
	    "$(gpu "$T/b.json" "AMD Radeon Graphics" 64 104 68702699520 9 0)"
	# figures that fit no part: nothing invented
	eq 'unnamed GPU, a gfx94… target (HIP version 9.4), 100 CUs, 10 GiB' \
	    "$(gpu "$T/c.json" "" 64 100 10737418240 9 4)"
}
check "an unnamed or generically named GPU: the part its figures fit, said to be matched" t_unnamed

done_testing
