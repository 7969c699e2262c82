#!/bin/sh
# overlap-sweep: the interval sweep (overlap.md §4) seen through the rows.
. "$(dirname "$0")/lib.sh"
. "$FIX/overlap-sweep/records.sh"

minimal_mapping >"$T/map"

# §4.8 worked check: a (memory, stream 1, 0+10), b (compute, stream 1, 5+10),
# c (other, stream 2, 12+10).  busy 22; a is exclusive although b overlaps it
# on its own stream; b and c are hidden 3 us each.
t_worked() {
	{
		trc formal /f/f.json all
		kern 'Memcpy DtoH (Device -> Pinned)' 1 0 10
		kern gemm_kernel 1 5 10
		kern foo_kernel 2 12 10
		end
	} >"$T/in" &&
	os --mapping "$T/map" <"$T/in" >"$T/out" &&
	rows "$T/out" >"$T/got" &&
	printf '%s\n' \
	    'all	P2	headroom	Memcpy DtoH (Device -> Pinned)	unmapped	10	45.45454545454545	1	0	high	next-side serial risk	check deps' \
	    'all	P1	headroom	foo_kernel	unmapped	10	45.45454545454545	0.7	0.3	low	serial risk low	try fusion' \
	    'all	P2	headroom	gemm_kernel	unmapped	10	45.45454545454545	0.7	0.3	unclear	adjacency unclear	check deps' \
	    >"$T/want" &&
	same "$T/want" "$T/got" &&
	signal "$T/out" >"$T/sig" &&
	printf '%s\n' \
	    '10.0 us, share 45.5%, excl 100.0% / hid 0.0%' \
	    '10.0 us, share 45.5%, excl 70.0% / hid 30.0%' \
	    '10.0 us, share 45.5%, excl 70.0% / hid 30.0%' >"$T/want" &&
	same "$T/want" "$T/sig"
}
check '§4.8 worked check: busy 22, same-stream overlap stays exclusive' t_worked

# Second check: back-to-back kernels on two streams do not overlap (ends
# sort before starts), busy 20.
t_back_to_back() {
	{
		trc formal /f/f.json all
		kern first_kernel 1 0 10
		kern second_kernel 2 10 10
		end
	} >"$T/in" &&
	os --mapping "$T/map" <"$T/in" >"$T/out" &&
	eq '10 50 1 0
10 50 1 0' "$(jq -r 'select(.type=="overlap_row") | "\(.total_us) \(.share_pct) \(.exclusive_ratio) \(.hidden_ratio)"' "$T/out")"
}
check 'back-to-back kernels on two streams stay exclusive' t_back_to_back

# §4.7: 6.8e15 + 0.1 == 6.8e15 in double, so the first event's end sorts
# before its start and it stays active to the end of the sweep: busy is
# 110, and the memcpy on stream 2 is fully hidden (share 10/110).
t_zero_width() {
	{
		trc formal /f/f.json all
		kern absorbed_kernel 1 6800000000000000 0.1
		kern 'Memcpy HtoD (Pinned -> Device)' 2 6800000000000100 10
		end
	} >"$T/in" &&
	os --mapping "$T/map" <"$T/in" >"$T/out" &&
	rows "$T/out" >"$T/got" &&
	echo 'all	P4	low-roi-hidden	Memcpy HtoD (Pinned -> Device)	unmapped	10	9.090909090909092	0	1	low	serial risk low	skip' >"$T/want" &&
	same "$T/want" "$T/got"
}
check '§4.7 zero-width end absorption keeps the event active' t_zero_width

# §2.6 stream quirk: stream 0 is falsy, so trace-extract omits it and the
# kernel falls through to its thread's name, then to "tid=<tid>".  A kernel
# whose stream member carries that same text shares the stream, so both
# stay exclusive although they overlap.
t_stream_fallback() {
	{
		trc formal /f/f.json all
		tname 1 5 'stream 0 5'
		TID=5 kern thread_named_kernel - 0 10
		kern same_stream_by_name 'stream 0 5' 2 10
		TID=6 kern tid_kernel - 100 10
		kern same_stream_by_tid 'tid=6' 102 10
		end
	} >"$T/in" &&
	os --mapping "$T/map" <"$T/in" >"$T/out" &&
	eq '0 0 0 0' "$(jq -r 'select(.type=="overlap_row") | .hidden_ratio' "$T/out" | tr '\n' ' ' | sed 's/ $//')" &&
	eq 4 "$(grep -c '"type":"overlap_row"' "$T/out")"
}
check 'stream fallback: thread name, then tid=<tid>' t_stream_fallback

# Without the matching text the same kernels hide each other.
t_stream_distinct() {
	{
		trc formal /f/f.json all
		tname 1 5 'stream 7 7'
		TID=5 kern thread_named_kernel - 0 10
		kern other_stream_kernel 'stream 0 5' 0 10
		end
	} >"$T/in" &&
	os --mapping "$T/map" <"$T/in" >"$T/out" &&
	eq '' "$(jq -r 'select(.type=="overlap_row") | .kernel' "$T/out")"
}
check 'different stream texts hide each other' t_stream_distinct

# An empty thread name is not stored (§2.6 step 1): tid=<tid> applies.
t_empty_thread_name() {
	{
		trc formal /f/f.json all
		tname 1 5 ''
		TID=5 kern unnamed_thread_kernel - 0 10
		kern tid_text_kernel 'tid=5' 0 10
		end
	} >"$T/in" &&
	os --mapping "$T/map" <"$T/in" >"$T/out" &&
	eq '1 1' "$(jq -r 'select(.type=="overlap_row") | .exclusive_ratio' "$T/out" | tr '\n' ' ' | sed 's/ $//')"
}
check 'an empty thread name falls through to tid=<tid>' t_empty_thread_name

# Hidden under compute (§4.6) weighs the low-ROI order: the relu kernel is
# hidden 8 us under a GEMM (score 16), the silu kernel 12 us under an
# "other" kernel (score 12), so relu sorts first.
t_hidden_by_compute() {
	{
		trc formal /f/f.json all
		kern gemm_kernel 1 0 40
		kern relu_kernel 2 10 8
		kern silu_kernel 3 100 12
		kern foo_kernel 4 100 12
		end
	} >"$T/in" &&
	os --mapping "$T/map" <"$T/in" >"$T/out" &&
	eq 'relu_kernel silu_kernel' "$(jq -r 'select(.type=="overlap_row" and .verdict=="low-roi-hidden") | .kernel' "$T/out" | tr '\n' ' ' | sed 's/ $//')"
}
check 'hidden-under-compute time orders low-ROI rows' t_hidden_by_compute

done_testing
