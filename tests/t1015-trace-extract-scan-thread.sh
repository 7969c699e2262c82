#!/bin/sh
# trace-extract finds the events on a thread of its own and handles them on
# another (common/scanq.c, issue 30): the records, the messages and the exit
# status must be what the one-thread run (TRIAGE_NO_THREADS) gives, whatever
# the events: many blocks' worth, events larger than a block one after
# another, escaped names, the document's members before and after the
# events, a truncated document, an empty one.
. "$(dirname "$0")/lib.sh"

GEN=$TESTDIR/gen-trace
EX=$BIN/trace-extract

# both FILE [ARGS]: records, stderr and exit status of each way into $T/{thr,one}.*
both() {
	_f=$1
	shift
	set +e
	"$EX" "$@" "$_f" >"$T/thr.out" 2>"$T/thr.err"
	echo $? >"$T/thr.rc"
	TRIAGE_NO_THREADS=1 "$EX" "$@" "$_f" >"$T/one.out" 2>"$T/one.err"
	echo $? >"$T/one.rc"
	set -e
}

# alike FILE [ARGS]: both ways give the same bytes and status
alike() {
	both "$@"
	same "$T/one.out" "$T/thr.out" &&
	    same "$T/one.err" "$T/thr.err" &&
	    eq "$(cat "$T/one.rc")" "$(cat "$T/thr.rc")" "exit status"
}

t_generated() {
	# 60 steps of 6 layers, two streams, Python frames: over a MiB of events
	"$GEN" -s both -n 60 -l 6 --streams 2 -o "$T/big.json"
	test "$(wc -c <"$T/big.json")" -gt 1048576
	alike "$T/big.json"
	eq 0 "$(cat "$T/thr.rc")"
	test "$(grep -c '"type":"kernel"' "$T/thr.out")" -gt 1000
	gzip -c "$T/big.json" >"$T/big.json.gz"
	alike "$T/big.json.gz"
	alike "$T/big.json" --all-ops --python-ids
	"$GEN" -s decode -n 30 --graph -o "$T/graph.json"
	alike "$T/graph.json"
}
check "the records of a generated trace, plain and gzip" t_generated

# A trace of kernels whose args carry strings of $1 bytes ($2 of them in a
# row), escaped names, and members on both sides of the events.
odd_trace() {
	awk -v big="$1" -v nbig="$2" 'BEGIN {
		pad = "x"
		while (length(pad) < big)
			pad = pad pad
		pad = substr(pad, 1, big)
		printf "{\"deviceProperties\": [{\"id\": 0, \"name\": \"Demo GPU\", \"computeMajor\": 9, "
		printf "\"computeMinor\": 0, \"numSms\": 132, \"totalGlobalMem\": 85899345920}],\n"
		printf "\"traceEvents\": [\n"
		for (i = 0; i < 3000; i++) {
			t = 1000 + i * 10
			printf "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", "
			printf "\"pid\": 100, \"tid\": 100, \"ts\": %d, \"dur\": 2, ", t
			printf "\"args\": {\"correlation\": %d, \"External id\": %d}},\n", i + 1, i + 1
			name = (i % 7 == 0) ? "esc\\u0041ped_kernel\\t<int>" : "gemm_kernel_" (i % 5)
			printf "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, ", name
			printf "\"tid\": 7, \"ts\": %d, \"dur\": 5, \"args\": {\"stream\": 7, ", t + 3
			if (i >= 1000 && i < 1000 + nbig)
				printf "\"note\": \"%s\", ", pad
			printf "\"correlation\": %d}},\n", i + 1
		}
		printf "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"last\", \"pid\": 0, \"tid\": 7, "
		printf "\"ts\": 99999, \"dur\": 1, \"args\": {\"stream\": 7}}\n],\n"
		printf "\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 3, \"world_size\": 4},\n"
		printf "\"baseTimeNanoseconds\": 1700000000000000000}\n"
	}'
}

t_odd_events() {
	# one event of 300 KiB, then five of 600 KiB in a row: each larger than a block
	odd_trace 307200 1 >"$T/one.json"
	alike "$T/one.json"
	eq 0 "$(cat "$T/thr.rc")"
	has "$T/thr.out" '"name":"escAped_kernel\\t<int>"'
	has "$T/thr.out" '"rank":3'
	odd_trace 614400 5 >"$T/five.json"
	alike "$T/five.json"
	eq 0 "$(cat "$T/thr.rc")"
	eq 3001 "$(grep -c '"type":"kernel"' "$T/thr.out")" "kernel records"
}
check "events larger than a block, escaped names, members on both sides" t_odd_events

t_large_memory() {
	# an event larger than a block is handed over where the scanner holds
	# it, not copied: the peak is the one-thread run's
	[ -x /usr/bin/time ] || return 0
	odd_trace 20000000 1 >"$T/large.json"
	/usr/bin/time -f '%M' -o "$T/rss.thr" "$EX" -q "$T/large.json" >"$T/l.thr"
	TRIAGE_NO_THREADS=1 /usr/bin/time -f '%M' -o "$T/rss.one" "$EX" -q "$T/large.json" >"$T/l.one"
	same "$T/l.one" "$T/l.thr"
	thr=$(tail -n 1 "$T/rss.thr")
	one=$(tail -n 1 "$T/rss.one")
	if [ $((thr - one)) -gt 8192 ]; then
		echo "peak RSS $thr kB with the scan thread, $one kB without"
		return 1
	fi
}
check "an event of 20 MB: no copy of it, the one-thread run's memory" t_large_memory

t_damaged() {
	odd_trace 100 0 >"$T/whole.json"
	head -c 300000 "$T/whole.json" >"$T/cut.json"
	alike "$T/cut.json"
	eq 1 "$(cat "$T/thr.rc")"
	has "$T/thr.err" "truncated JSON"
	# a broken byte past many events: the same message, no trace's records written
	{ head -c 200000 "$T/whole.json"; printf '}}}'; tail -c +200001 "$T/whole.json"; } \
	    >"$T/broken.json"
	alike "$T/broken.json"
	eq 1 "$(cat "$T/thr.rc")"
	eq 0 "$(grep -c '"type":"\(trace\|kernel\)"' "$T/thr.out")" "trace records"
	printf '{"traceEvents": []}' >"$T/empty.json"
	alike "$T/empty.json"
	eq 3 "$(cat "$T/thr.rc")"
}
check "damaged and empty documents: the same messages and status" t_damaged

t_progress() {
	# progress lines say the input consumed as of an event: one line, done at the end
	"$EX" --progress "$T/big.json" >/dev/null 2>"$T/p.err"
	has "$T/p.err" "^trace-extract: $T/big.json: 100% "
}
check "progress with the scan on its own thread" t_progress

done_testing
