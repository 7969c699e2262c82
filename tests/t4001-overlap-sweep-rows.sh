#!/bin/sh
# overlap-sweep: candidates, pruning, limit, pid and stage selection (§3, §8, §10).
. "$(dirname "$0")/lib.sh"
. "$FIX/overlap-sweep/records.sh"

minimal_mapping >"$T/map"

kernels() { jq -r 'select(.type=="overlap_row") | .kernel' "$1" | tr '\n' ' ' | sed 's/ $//'; }

# Rows before the filter: gemm (headroom P1), relu (low-ROI, 8/1012 = 0.79 %,
# P5) and silu (low-ROI P4).  relu sorts before silu (hidden under compute).
limit_stream() {
	trc formal /f/f.json all
	kern gemm_kernel 1 0 1000
	kern relu_kernel 2 100 8
	kern silu_kernel 3 1000 12
	kern foo_kernel 4 1000 12
	end
}

t_limit_before_filter() {
	limit_stream >"$T/in" &&
	os --compat reference --mapping "$T/map" <"$T/in" >"$T/out" &&
	eq 'gemm_kernel silu_kernel' "$(kernels "$T/out")" &&
	os --compat reference --mapping "$T/map" --overlap-table-limit 2 <"$T/in" >"$T/out2" &&
	eq 'gemm_kernel' "$(kernels "$T/out2")" &&
	os --compat reference --mapping "$T/map" --overlap-table-limit 3 <"$T/in" >"$T/out3" &&
	eq 'gemm_kernel silu_kernel' "$(kernels "$T/out3")" &&
	os --compat reference --mapping "$T/map" --overlap-table-limit -4 <"$T/in" >"$T/out4" &&
	same "$T/out" "$T/out4"
}
check 'reference: the limit runs before the 1.0% filter; pruned P5 rows use slots' t_limit_before_filter

# Corrected (docs/deviations.md C11): the limit counts the rows shown.
t_limit_counts_shown() {
	limit_stream >"$T/in" &&
	os --mapping "$T/map" --overlap-table-limit 2 <"$T/in" >"$T/out2" &&
	eq 'gemm_kernel silu_kernel' "$(kernels "$T/out2")" &&
	os --mapping "$T/map" --overlap-table-limit 1 <"$T/in" >"$T/out1" &&
	eq 'gemm_kernel' "$(kernels "$T/out1")" &&
	os --mapping "$T/map" <"$T/in" >"$T/out" &&
	eq 'gemm_kernel silu_kernel' "$(kernels "$T/out")"
}
check 'corrected: --overlap-table-limit N shows N rows when N pass the 1.0% bar' t_limit_counts_shown

t_rows_values() {
	limit_stream >"$T/in" &&
	os --mapping "$T/map" <"$T/in" >"$T/out" &&
	rows "$T/out" >"$T/got" &&
	printf '%s\n' \
	    'all	P1	headroom	gemm_kernel	unmapped	1000	98.81422924901186	0.992	0.008	low	serial risk low	try fusion' \
	    'all	P4	low-roi-hidden	silu_kernel	unmapped	12	1.185770750988142	0	1	low	serial risk low	skip' \
	    >"$T/want" &&
	same "$T/want" "$T/got"
}
check 'row values: compute headroom gets try fusion, low-ROI gets P4 skip' t_rows_values

# seen is keyed by canonical name only: the elementwise "void k<a>" is
# suppressed because the "other" one of the same name was emitted.
t_seen_by_name() {
	{
		trc formal /f/f.json all
		kern 'void k<a>(float*)' 1 0 100
		kern 'void k<a>(relu_args*)' 2 200 100
		kern gemm_kernel 3 150 200
		end
	} >"$T/in" &&
	os --mapping "$T/map" <"$T/in" >"$T/out" &&
	eq 'void k<a> gemm_kernel' "$(kernels "$T/out")" &&
	eq 'headroom' "$(jq -r 'select(.type=="overlap_row" and .kernel=="void k<a>") | .verdict' "$T/out")"
}
check 'the seen set holds names only' t_seen_by_name

# A pruned headroom row does not enter seen: the low-ROI aggregate of the
# same name is then kept.
t_pruned_headroom_not_seen() {
	{
		trc formal /f/f.json all
		kern 'void k<a>(float*)' 1 0 6
		kern 'void k<a>(relu_args*)' 2 200 100
		kern gemm_kernel 3 150 800
		end
	} >"$T/in" &&
	os --mapping "$T/map" <"$T/in" >"$T/out" &&
	eq 'gemm_kernel void k<a>' "$(kernels "$T/out")" &&
	eq 'low-roi-hidden' "$(jq -r 'select(.type=="overlap_row" and .kernel=="void k<a>") | .verdict' "$T/out")"
}
check 'a pruned headroom row leaves its name to low-ROI' t_pruned_headroom_not_seen

# Headroom takes the top 5 of non-compute candidates first: five tiny
# memcpy kernels (pruned as P5) push the large GEMM out of the table.
t_top5_non_compute_first() {
	{
		trc formal /f/f.json all
		kern gemm_kernel 1 0 10000
		for i in 1 2 3 4 5; do
			kern "Memcpy DtoD $i" 1 $((10000 + 10 * i)) 6
		done
		end
	} >"$T/in" &&
	os --mapping "$T/map" <"$T/in" >"$T/out" &&
	eq '' "$(kernels "$T/out")" &&
	grep -v 'Memcpy DtoD 5' "$T/in" >"$T/in4" &&
	os --mapping "$T/map" <"$T/in4" >"$T/out4" &&
	eq 'gemm_kernel' "$(kernels "$T/out4")"
}
check 'headroom: non-compute top 5 first, compute only after' t_top5_non_compute_first

# Communication headroom with low risk: P1 try overlap.
t_communication() {
	{
		trc formal /f/f.json all
		kern ncclDevKernel_AllReduce_Sum 1 0 100
		end
	} >"$T/in" &&
	os --mapping "$T/map" <"$T/in" >"$T/out" &&
	eq 'P1 try overlap 100' "$(jq -r 'select(.type=="overlap_row") | "\(.priority) \(.recommendation) \(.share_pct)"' "$T/out")"
}
check 'communication headroom with low risk: P1 try overlap' t_communication

# Pid selection (§2.6 step 4): TP00 is preferred over a heavier process
# unless --pid-substring is given.  The substring applies to the mapping
# trace too, so the mapping kernel's pid has to contain it.
t_pid() {
	{
		trc mapping /m/m.json all
		PID='[TP01] mapping' kern unrelated_mapping_kernel 1 0 1
		end
	} >"$T/map" &&
	{
		trc formal /f/f.json all
		PID='[TP01] GPU' kern heavy_kernel 1 0 100
		PID='[TP00] GPU' kern light_kernel 1 0 10
		end
	} >"$T/in" &&
	os --mapping "$T/map" <"$T/in" >"$T/out" &&
	eq 'light_kernel' "$(kernels "$T/out")" &&
	os --mapping "$T/map" --pid-substring TP0 <"$T/in" >"$T/out" &&
	eq 'heavy_kernel' "$(kernels "$T/out")" &&
	os --mapping "$T/map" --pid-substring '' <"$T/in" >"$T/out" &&
	eq 'light_kernel' "$(kernels "$T/out")" &&
	os --mapping "$T/map" --pid-substring nomatch <"$T/in" >"$T/out" &&
	eq '' "$(kernels "$T/out")" &&
	os --mapping "$T/map" --pid-substring TP00 <"$T/in" >"$T/out" &&
	eq '' "$(kernels "$T/out")"
}
check 'pid selection: TP00 preference, --pid-substring' t_pid

# Stages: rows per formal stage in extend, decode order; kernels left in
# "all" are dropped when the trace has other stages (§3.6).
t_stages() {
	{
		trc formal /f/f.json all
		STAGE=decode kern decode_kernel 1 0 100
		STAGE=extend kern extend_kernel 1 200 100
		STAGE=all kern leftover_kernel 1 400 100
		end
	} >"$T/in" &&
	os --mapping "$T/map" <"$T/in" >"$T/out" &&
	eq 'extend:extend_kernel:100 decode:decode_kernel:100' \
	    "$(jq -r 'select(.type=="overlap_row") | "\(.stage):\(.kernel):\(.share_pct)"' "$T/out" | tr '\n' ' ' | sed 's/ $//')"
}
check 'rows per stage; leftover all kernels dropped' t_stages

# A formal stage without a mapping bundle (§3.5) yields nothing: formal
# {all}, mapping {extend, decode}.
t_no_mapping_stage() {
	{
		trc mapping /m/m.json all
		STAGE=extend kern a_kernel 1 0 10
		STAGE=decode kern b_kernel 1 20 10
		end
	} >"$T/map2" &&
	{
		trc formal /f/f.json all
		kern formal_kernel 1 0 100
		end
	} >"$T/in" &&
	os --mapping "$T/map2" <"$T/in" >"$T/out" &&
	eq '' "$(kernels "$T/out")" &&
	os --mapping "$T/map" <"$T/in" >"$T/out" &&
	eq 'formal_kernel' "$(kernels "$T/out")"
}
check 'formal stage without a mapping bundle gives no rows' t_no_mapping_stage

# Bundles: the first trace in (stage index, file name) order wins a stage,
# whatever the stream order.
t_bundle_order() {
	{
		T_IDX=0 trc formal /f/b-decode.json decode
		T_IDX=0 STAGE=decode kern from_b 1 0 100
		T_IDX=0 end
		T_IDX=1 trc formal /f/a-decode.json decode
		T_IDX=1 STAGE=decode kern from_a 1 0 100
		T_IDX=1 end
	} >"$T/in" &&
	os --mapping "$T/map" <"$T/in" >"$T/out" &&
	eq 'from_a' "$(kernels "$T/out")"
}
check 'the first trace in file-name order supplies the stage' t_bundle_order

done_testing
