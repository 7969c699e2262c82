#!/bin/sh
# trace-stage: the host's and the GPU's clocks (issue 25 follow-up).  A
# GPU-bound loop keeps a deep launch queue: every kernel starts tens of
# milliseconds after its launch, back to back, and that is no clock offset.
# Only an item that starts on a GPU with nothing of the process running or
# queued tells the clocks apart, and a blocking call that returns right
# after the GPU work it waited for shows one clock.  The shape is a real
# MI300X DDP training trace's (hipDeviceSynchronize of 37.9 ms returning
# 5.8 us after the last kernel ended, 1227 of 1259 kernels 1 ns after the
# one before), scaled down.
. "$(dirname "$0")/lib.sh"

EX=$BIN/trace-extract
ST=$BIN/trace-stage
HE=$BIN/trace-health

# queue [pre] [sync|copy|late]: one clock.  pre: a kernel launched before the
# capture runs 0..20000.  The host launches 8 kernels (calls 10+10k, 4 us
# long); each runs 100 us, 0.5 us after the one before, kernel 4 10.5 us
# after (waiting on other work: still queued).  sync: hipDeviceSynchronize
# from 100 returns 5.75 us after the last kernel ends (20814); copy: instead a
# synchronous copy's call from 100 returns 5.5 us after its copy (20814.5 to
# 20824.5); late: the synchronize returns 2 ms after.
queue() {
	awk -v pre="$1" -v tail="$2" 'BEGIN {
		printf "{\"traceEvents\":[\n"
		if (pre == "pre")
			printf "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"void at::native::batch_norm_backward_kernel<float>\",\"pid\":0,\"tid\":7,\"ts\":0,\"dur\":20000,\"args\":{\"stream\":7}},\n"
		s = 20000.5
		for (k = 0; k < 8; k++) {
			if (k == 4)
				s += 10
			printf "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"hipLaunchKernel\",\"pid\":100,\"tid\":100,\"ts\":%d,\"dur\":4,\"args\":{\"correlation\":%d}},\n", 10 + 10 * k, k + 1
			printf "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"void at::native::vectorized_elementwise_kernel<4>\",\"pid\":0,\"tid\":7,\"ts\":%.1f,\"dur\":100,\"args\":{\"correlation\":%d,\"stream\":7}},\n", s, k + 1
			s += 100.5
		}
		if (tail == "sync")
			printf "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"hipDeviceSynchronize\",\"pid\":100,\"tid\":100,\"ts\":100,\"dur\":20719.75,\"args\":{\"correlation\":9}},\n"
		if (tail == "late")
			printf "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"hipDeviceSynchronize\",\"pid\":100,\"tid\":100,\"ts\":100,\"dur\":22714,\"args\":{\"correlation\":9}},\n"
		if (tail == "copy") {
			printf "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"hipMemcpyWithStream\",\"pid\":100,\"tid\":100,\"ts\":100,\"dur\":20730,\"args\":{\"correlation\":9}},\n"
			printf "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy DtoH (Device -> Host)\",\"pid\":0,\"tid\":7,\"ts\":20814.5,\"dur\":10,\"args\":{\"correlation\":9,\"stream\":7}},\n"
		}
		printf "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add\",\"pid\":100,\"tid\":100,\"ts\":5,\"dur\":1,\"args\":{}}\n]}\n"
	}'
}

clocks() {	# clocks FILE: the gpu_pids clock members
	"$EX" -q "$1" | "$ST" | jq -r 'select(.type == "gpu_pids") |
	    "\(.idle_starts) \(.idle_start_latency_us) \(.launch_start_min_us) \(.sync_call) \(.sync_return_us) \(.sync_wait_us) \(.clock_offset_us)"'
}

t_deep_queue() {
	queue pre sync >"$T/q.json"
	# no item starts with nothing queued: kernel 0 follows the pre-capture
	# kernel by 0.5 us, kernel 4's 10.5 us gap has kernels 4 to 7 queued
	# (their calls ended at 54 to 84); the synchronize returned 5.75 us
	# after kernel 7 ended, having waited 20714 us for it
	eq "0 null 19990.5 hipDeviceSynchronize 5.75 20714 null" "$(clocks "$T/q.json")"
	"$EX" -q "$T/q.json" | "$ST" | jq -r 'select(.type == "gpu_pids") | .launch_latency_p50_us' >"$T/p50"
	eq 20262 "$(cat "$T/p50")"
	# without a synchronize the latencies alone say the same: no offset
	queue pre none >"$T/q0.json"
	eq "0 null 19990.5 null null null null" "$(clocks "$T/q0.json")"
	# the synchronize is found in the record stream
	eq '{"type":"sync","t":0,"name":"hipDeviceSynchronize","pid":"100","tid":"100","ts":100,"dur":20719.75,"correlation":9}' \
	    "$("$EX" -q "$T/q.json" | grep '"type":"sync"')"
	eq "" "$("$EX" -q --compat reference "$T/q.json" | grep '"type":"sync"' || true)"
}
check "a deep launch queue on one clock: back-to-back kernels are no idle starts, no offset" t_deep_queue

t_sync_overrules() {
	# the first kernel (nothing before it in the trace) starts 19986.5 us
	# after its call returned, and no kernel sooner than 19990.5 us after
	# its call began: alone, that is a GPU clock 20 ms ahead ...
	queue nopre none >"$T/a.json"
	eq "1 19986.5 19990.5 null null null 19986.5" "$(clocks "$T/a.json")"
	# ... but a synchronize returning 5.75 us after the work it waited for
	# shows one clock (the first kernel waited behind unrecorded work)
	queue nopre sync >"$T/b.json"
	eq "1 19986.5 19990.5 hipDeviceSynchronize 5.75 20714 null" "$(clocks "$T/b.json")"
	# a synchronous copy's call shows the same, by its own copy
	queue nopre copy >"$T/c.json"
	eq "1 19986.5 19990.5 hipMemcpyWithStream 5.5 20724.5 null" "$(clocks "$T/c.json")"
	# a synchronize returning 2 ms after the work shows nothing
	queue nopre late >"$T/d.json"
	eq "1 19986.5 19990.5 null null null 19986.5" "$(clocks "$T/d.json")"
}
check "a blocking call that returns right after the GPU work it waited for overrules the latencies" \
    t_sync_overrules

t_health() {
	queue pre sync >"$T/q.json"
	"$EX" -q "$T/q.json" | "$ST" | "$HE" -q | jq -r 'select(.type == "health") |
	    (.checks[] | select(.id == "clock_offset") | "\(.status) \(.value) \(.detail)")' >"$T/h"
	eq "ok 0 launch to start: median 20262.000 us; no item starts on a GPU with nothing running or queued (each waits behind earlier work: the host ran ahead of the GPU); hipDeviceSynchronize waited 20.714 ms and returned 5.750 us after the GPU work launched before it ended: host and GPU share one clock" \
	    "$(cat "$T/h")"
	queue nopre none >"$T/a.json"
	"$EX" -q "$T/a.json" | "$ST" | "$HE" -q | jq -r 'select(.type == "health") |
	    (.checks[] | select(.id == "clock_offset") | "\(.status) \(.value) \(.detail)")' >"$T/h"
	eq "warn 19987 1 item that starts on a GPU with nothing running or queued starts 19.986 ms after its launch call returned, and no item starts sooner than 19.991 ms after its call began (a launch reaches an idle GPU in 5 to 50 us): the GPU clock runs about 20.0 ms ahead of the host's; stages follow the launch times (trace-stage), and the idle time waiting for the host is not measured" \
	    "$(cat "$T/h")"
}
check "trace-health says which: a deep queue on one clock, or a clock offset" t_health

t_spilled() {
	# the joins and sorts of the measure in runs of a few records on disk
	# (issue 30): every record the same as in memory, both modes
	for pre in pre nopre; do
		for tail in none sync copy late; do
			queue $pre $tail >"$T/s.json"
			"$EX" -q "$T/s.json" >"$T/s.x"
			for m in "" --late-stages; do
				"$ST" -q $m "$T/s.x" >"$T/mem"
				TRIAGE_SPOOL_MEM=64 "$ST" -q $m "$T/s.x" >"$T/disk"
				same "$T/mem" "$T/disk"
			done
		done
	done
	grep -q '"clock_offset_us":19986.5' "$T/disk"
}
check "the same stages and clocks with the kernels, launches and joins in runs on disk" t_spilled

done_testing
