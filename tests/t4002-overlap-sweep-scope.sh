#!/bin/sh
# overlap-sweep: the Python scope column and the dependency signal (§6, §7, §9).
. "$(dirname "$0")/lib.sh"
. "$FIX/overlap-sweep/records.sh"

scope_of() {	# scope_of FILE KERNEL
	jq -r --arg k "$2" 'select(.type=="overlap_row" and .kernel==$k) | .python_scope' "$1"
}

formal_one() {	# formal_one KERNEL: one exclusive kernel, 100 us
	trc formal /f/f.json all
	kern "$1" 1 0 100
	end
}

# §6.6 verified example: best_location X, one site Y with 7 launches, two
# sampled events that both fall back to the kernel map: scope_counter
# {X: 2, Y: 14}, so the scope is Y.  With 1 launch it is {X: 2, Y: 2} and
# the first inserted, X, wins; with 0 launches Y is not counted.
mapping_fallback() {	# mapping_fallback LAUNCHES
	trc mapping /m/m.json all
	kern my_kernel 1 0 10
	kern my_kernel 1 100 10
	site mapping_global all my_kernel X \
	    "[{\"location\":\"Y0\",\"display_location\":\"Y\",\"launches\":$1,\"total_us\":1,\"share_pct_within_kernel\":100,\"top_cpu_op\":\"aten::mm\",\"stack\":null}]"
	end
}

t_entry_fallback() {
	formal_one my_kernel >"$T/in" &&
	mapping_fallback 7 >"$T/map" &&
	os --mapping "$T/map" <"$T/in" >"$T/out" &&
	eq Y "$(scope_of "$T/out" my_kernel)" &&
	mapping_fallback 1 >"$T/map" &&
	os --mapping "$T/map" <"$T/in" >"$T/out" &&
	eq X "$(scope_of "$T/out" my_kernel)" &&
	mapping_fallback 0 >"$T/map" &&
	os --mapping "$T/map" <"$T/in" >"$T/out" &&
	eq X "$(scope_of "$T/out" my_kernel)"
}
check '§6.6 kernel-map fallback multiplies site launches per sample' t_entry_fallback

# A stage entry of the kernel map is found through the stage aliases.
t_entry_stage_alias() {
	{
		trc mapping /m/m.json all
		kern my_kernel 1 0 10
		site mapping_stage all my_kernel 'python/sglang/x.py:1 f' '[]'
		end
	} >"$T/map" &&
	formal_one my_kernel >"$T/in" &&
	os --mapping "$T/map" <"$T/in" >"$T/out" &&
	eq 'python/sglang/x.py:1 f' "$(scope_of "$T/out" my_kernel)"
}
check 'kernel-map stage entries are looked up by stage alias' t_entry_stage_alias

# CPU-op context (§6.3): the op's external id matches the kernel's, and the
# Python frames open at the op give the chain.  The install prefix is
# rewritten (§6.2) and choose_best_scope prefers the framework frame.
cpu_mapping() {
	trc mapping /m/m.json all
	frame '/opt/venv/lib/python3.10/site-packages/torch/nn/modules/module.py(1500): _call_impl' 0 100
	frame '/opt/sglang/python/sglang/srt/layers/communicator.py(50): all_reduce' 10 50
	frame 'threading.py(300): run' 0 1000
	cpuop aten::add 5 20 5
	kern my_kernel 1 30 10 ',"external_id":5'
	kern my_kernel 1 60 10 ',"external_id":5'
	end
}

t_cpu_context() {
	cpu_mapping >"$T/map" &&
	formal_one my_kernel >"$T/in" &&
	os --mapping "$T/map" <"$T/in" >"$T/out" &&
	eq 'python/sglang/srt/layers/communicator.py(50): all_reduce' "$(scope_of "$T/out" my_kernel)"
}
check 'CPU-op contexts give canonical chain scopes' t_cpu_context

# §6.9: the formal payload counts every launch, so its location (30
# launches) beats the chain scope counted twice; with one launch it loses.
t_payload_dominates() {
	cpu_mapping >"$T/map" &&
	{
		trc formal /f/f.json all
		kern my_kernel 1 0 100
		site formal_stage all my_kernel 'python/sglang/srt/models/llama.py:200 forward' \
		    '[{"location":"python/sglang/srt/models/llama.py:200 forward","display_location":"python/sglang/srt/models/llama.py:200 forward","launches":30,"total_us":100,"share_pct_within_kernel":100,"top_cpu_op":"cudaGraphLaunch","stack":null}]'
		end
	} >"$T/in" &&
	os --mapping "$T/map" <"$T/in" >"$T/out" &&
	eq 'python/sglang/srt/models/llama.py:200 forward' "$(scope_of "$T/out" my_kernel)" &&
	sed 's/"launches":30/"launches":1/' "$T/in" >"$T/in1" &&
	os --mapping "$T/map" <"$T/in1" >"$T/out" &&
	eq 'python/sglang/srt/layers/communicator.py(50): all_reduce' "$(scope_of "$T/out" my_kernel)"
}
check 'formal payload launches dominate the scope' t_payload_dominates

# A later formal trace's payload of the same stage replaces the earlier one.
t_payload_last_wins() {
	minimal_mapping >"$T/map" &&
	{
		T_IDX=0 trc formal /f/a.json all
		T_IDX=0 kern my_kernel 1 0 100
		T_IDX=0 site formal_stage all my_kernel 'first.py:1 f' '[]'
		T_IDX=0 end
		T_IDX=1 trc formal /f/b.json all
		T_IDX=1 kern other_kernel 1 0 100
		T_IDX=1 site formal_stage all other_kernel 'second.py:1 f' '[]'
		T_IDX=1 end
	} >"$T/in" &&
	os --mapping "$T/map" <"$T/in" >"$T/out" &&
	eq unmapped "$(scope_of "$T/out" my_kernel)"
}
check 'the last formal payload of a stage wins' t_payload_last_wins

# §6.5 time-window fallback: kernels without an external id take the
# meaningful frames of any thread open at their GPU start, and
# "time-window fallback" as launch op.  Two tight neighbours sharing that
# launch op are a serial risk (§9.5), whatever their scopes.
tw_mapping() {
	trc mapping /m/m.json all
	frame 'python/sglang/a.py(1): fa' 0 20 55
	frame 'python/sglang/b.py(2): fb' 90 20 56
	kern foo_a 1 10 5
	kern foo_b 1 100 5
	end
}

t_time_window() {
	tw_mapping >"$T/map" &&
	{
		trc formal /f/f.json all
		kern foo_a 1 0 50
		kern foo_b 1 51 50
		end
	} >"$T/in" &&
	os --mapping "$T/map" <"$T/in" >"$T/out" &&
	eq 'python/sglang/a.py(1): fa' "$(scope_of "$T/out" foo_a)" &&
	eq 'python/sglang/b.py(2): fb' "$(scope_of "$T/out" foo_b)" &&
	eq 'next-side serial risk high P2' "$(jq -r 'select(.type=="overlap_row" and .kernel=="foo_a") | "\(.dependency_signal) \(.dep_risk) \(.priority)"' "$T/out")" &&
	eq 'prev-side serial risk' "$(jq -r 'select(.type=="overlap_row" and .kernel=="foo_b") | .dependency_signal' "$T/out")"
}
check 'time-window fallback scopes and launch-op equality' t_time_window

# The same pair 10 us apart is not tight (threshold 7.5 us): low risk.
t_not_tight() {
	tw_mapping >"$T/map" &&
	{
		trc formal /f/f.json all
		kern foo_a 1 0 50
		kern foo_b 1 60 50
		end
	} >"$T/in" &&
	os --mapping "$T/map" <"$T/in" >"$T/out" &&
	eq 'serial risk low P1' "$(jq -r 'select(.type=="overlap_row" and .kernel=="foo_a") | "\(.dependency_signal) \(.priority)"' "$T/out")"
}
check 'a gap above the tight threshold is low risk' t_not_tight

# §9.3: chain-format scopes with the same function name in different files
# are one family; an unmapped tight neighbour makes the adjacency unclear.
t_scope_family() {
	{
		trc mapping /m/m.json all
		frame 'python/sglang/a.py(1): forward' 0 20 55
		frame 'python/sglang/b.py(2): forward' 90 20
		kern foo_a 1 10 5
		kern foo_b 1 100 5 ',"external_id":9'
		cpuop aten::mm 9 95 1
		end
	} >"$T/map" &&
	{
		trc formal /f/f.json all
		kern foo_a 1 0 50
		kern foo_b 1 51 50
		kern foo_c 2 200 50
		kern foo_d 2 251 50
		end
	} >"$T/in" &&
	os --mapping "$T/map" <"$T/in" >"$T/out" &&
	eq 'python/sglang/b.py(2): forward' "$(scope_of "$T/out" foo_b)" &&
	eq 'next-side serial risk' "$(jq -r 'select(.type=="overlap_row" and .kernel=="foo_a") | .dependency_signal' "$T/out")" &&
	eq 'adjacency unclear' "$(jq -r 'select(.type=="overlap_row" and .kernel=="foo_c") | .dependency_signal' "$T/out")"
}
check 'same function name across files is one scope family' t_scope_family

# §6.6 quirk: a CPU context with an empty chain skips the time-window
# fallback; with no kernel-map entry the kernel stays unmapped.
t_empty_chain_quirk() {
	{
		trc mapping /m/m.json all
		frame 'python/sglang/a.py(1): fa' 0 20 55
		cpuop aten::mm 9 500 1
		kern foo_a 1 10 5 ',"external_id":9'
		end
	} >"$T/map" &&
	formal_one foo_a >"$T/in" &&
	os --mapping "$T/map" <"$T/in" >"$T/out" &&
	eq unmapped "$(scope_of "$T/out" foo_a)"
}
check 'a CPU context with an empty chain skips the time window' t_empty_chain_quirk

# §6.3 takes a CPU op's own External id only: an op that has just a
# correlation (mapped to the kernel's id by a corr record) gives no context,
# and the frames open at the op are not used.
t_no_corr_fallback_for_ops() {
	{
		trc mapping /m/m.json all
		frame 'python/sglang/a.py(1): fa' 0 20
		echo '{"type":"cpu_op","t":0,"name":"aten::mm","pid":"100","tid":"100","ts":5,"dur":1,"correlation":77}'
		kern foo_a 1 500 5 ',"external_id":5'
		echo '{"type":"corr","t":0,"correlation":77,"external_id":5}'
		end
	} >"$T/map" &&
	formal_one foo_a >"$T/in" &&
	os --mapping "$T/map" <"$T/in" >"$T/out" &&
	eq unmapped "$(scope_of "$T/out" foo_a)" &&
	sed 's/"correlation":77}$/"correlation":77,"external_id":5}/' "$T/map" >"$T/map2" &&
	os --mapping "$T/map2" <"$T/in" >"$T/out" &&
	eq 'python/sglang/a.py(1): fa' "$(scope_of "$T/out" foo_a)"
}
check 'CPU ops match by their own External id only' t_no_corr_fallback_for_ops

# §7.1 relaxed lookup: a source key that prefixes the kernel name matches.
t_relaxed_lookup() {
	{
		trc mapping /m/m.json all
		frame 'python/sglang/srt/layers/communicator.py(50): all_reduce' 0 20 55
		kern ncclDevKernel_AllReduce 1 10 5
		end
	} >"$T/map" &&
	formal_one ncclDevKernel_AllReduce_Sum_f32_RING >"$T/in" &&
	os --mapping "$T/map" <"$T/in" >"$T/out" &&
	eq 'python/sglang/srt/layers/communicator.py(50): all_reduce' \
	    "$(scope_of "$T/out" ncclDevKernel_AllReduce_Sum_f32_RING)"
}
check 'relaxed lookup by prefix' t_relaxed_lookup

# Sampling (§6.1): of 40 launches only 16 are counted, so a payload site with
# 17 launches outweighs a chain scope every launch had.
t_sampling() {
	{
		trc mapping /m/m.json all
		frame 'python/sglang/a.py(1): fa' 0 100000 55
		i=0
		while [ $i -lt 40 ]; do
			kern my_kernel 1 $((i * 100)) 5
			i=$((i + 1))
		done
		end
	} >"$T/map" &&
	{
		trc formal /f/f.json all
		kern my_kernel 1 0 100
		site formal_stage all my_kernel 'p.py:1 f' \
		    '[{"location":"p.py:1 f","display_location":"p.py:1 f","launches":17,"total_us":1,"share_pct_within_kernel":100,"top_cpu_op":null,"stack":null}]'
		end
	} >"$T/in" &&
	os --mapping "$T/map" <"$T/in" >"$T/out" &&
	eq 'p.py:1 f' "$(scope_of "$T/out" my_kernel)" &&
	sed 's/"launches":17/"launches":16/' "$T/in" >"$T/in16" &&
	os --mapping "$T/map" <"$T/in16" >"$T/out" &&
	eq 'python/sglang/a.py(1): fa' "$(scope_of "$T/out" my_kernel)"
}
check 'mapping events are sampled to 16 per name' t_sampling

done_testing
