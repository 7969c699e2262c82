#!/bin/sh
# overlap-sweep: where each row's kernel ran exposed (issue 29), the
# overlap_exposed record after the rows, by hand.
. "$(dirname "$0")/lib.sh"
. "$FIX/overlap-sweep/records.sh"

minimal_mapping >"$T/map"

# gemm A [0,100] on stream 1 while stream 2 runs [50,80]: exposed [0,50)
# and [80,100); gemm B [200,300] while stream 2 runs [250,260] and stream 1
# goes on with silu [300,310]: exposed [200,250) and [260,300).  160 of
# gemm's 200 us exposed, as its exclusive_ratio 0.8 says.
stream() {
	trc formal /f/f.json all
	kern gemm_kernel 1 0 100
	kern copy_kernel 2 50 30
	kern gemm_kernel 1 200 100
	kern copy_kernel 2 250 10
	kern silu_kernel 1 300 10
	end
}

t_exposed() {
	stream | os --mapping "$T/map" >"$T/out"
	jq -r 'select(.type == "overlap_row" and .kernel == "gemm_kernel") | "\(.id) \(.exclusive_ratio) \(.total_us)"' \
	    "$T/out" >"$T/row"
	id=$(cut -d' ' -f1 "$T/row")
	eq "$id 0.8 200" "$(cat "$T/row")"
	eq "{\"type\":\"overlap_exposed\",\"t\":0,\"stage\":\"all\",\"row\":\"$id\",\"exposed_us\":160,\"intervals\":4,\"spans\":[[0,50],[80,20],[200,50],[260,40]]}" \
	    "$(grep "\"row\":\"$id\"" "$T/out")"
	# the rows numbered in order
	eq 'overlap-1 overlap-2 overlap-3' "$(jq -r 'select(.type == "overlap_row") | .id' "$T/out" | tr '\n' ' ' | sed 's/ $//')"
	# one record per row, all after the rows
	eq "$(grep -c '"type":"overlap_row"' "$T/out")" "$(grep -c '"type":"overlap_exposed"' "$T/out")"
	jq -r .type "$T/out" | uniq | tail -n 2 >"$T/tail"
	printf 'overlap_row\noverlap_exposed\n' >"$T/want"
	same "$T/want" "$T/tail"
}
check 'the exposed parts of a row kernel, their sum its exclusive time' t_exposed

# 150 exposed instances of 10..59 us: the 100 longest kept, in order of start.
t_bounded() {
	{
		trc formal /f/f.json all
		i=0
		while [ "$i" -lt 150 ]; do
			kern gemm_kernel 1 $((i * 100)) $((10 + i % 50))
			i=$((i + 1))
		done
		end
	} | os --mapping "$T/map" >"$T/out"
	jq -r 'select(.type == "overlap_exposed") | "\(.intervals) \(.spans | length) \(.exposed_us)"' \
	    "$T/out" >"$T/got"
	eq '150 100 5175' "$(cat "$T/got")"
	eq sorted "$(jq -r 'select(.type == "overlap_exposed") | .spans[][0]' "$T/out" | sort -n -c && echo sorted)"
	# the shortest kept is of 26 us: the 100 longest are the three 59..27 runs and a part of 26
	eq 26 "$(jq -r 'select(.type == "overlap_exposed") | [.spans[][1]] | min' "$T/out")"
}
check 'at most 100 intervals a row, the longest, in order of start' t_bounded
# Two gemm events on one stream that overlap (a merged trace, programmatic
# dependent launch): [0,100] and [50,150], alone on the GPU.  Their exposed
# time counts each event (200 us, exclusive_ratio 1), the spans are the
# union, once: [0,150).  Work is linear in events (make scale, overlap).
t_overlapping() {
	{
		trc formal /f/f.json all
		kern gemm_kernel 1 0 100
		kern gemm_kernel 1 50 100
		end
	} | os --mapping "$T/map" >"$T/out"
	eq '200 1 [[0,150]]' "$(jq -c -r 'select(.type == "overlap_exposed") | "\(.exposed_us) \(.intervals) \(.spans)"' "$T/out")"
}
check 'overlapping events of a row: time per event, spans their union' t_overlapping
done_testing
