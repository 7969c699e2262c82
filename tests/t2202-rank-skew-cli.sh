#!/bin/sh
# rank-skew: options, exit status, the warnings about its input, and memory
# that holds one trace's kernels plus compact collectives, not every trace.
. "$(dirname "$0")/lib.sh"

RS=$BIN/rank-skew
AR='ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)'

trc() { printf '{"type":"trace","t":%s,"path":"/p/%s.json"%s}\n' "$1" "$2" "${3:+,\"rank\":$3}"; }
k() {	# k T NAME TS DUR [SEL]
	printf '{"type":"kernel","t":%s,"name":"%s","ts":%s,"dur":%s,"stage":"decode"%s}\n' \
	    "$1" "$2" "$3" "$4" "$( [ "${5:-1}" = 1 ] && echo ',"sel":true')"
}
st() { printf '{"type":"stats","t":%s}\n' "$1"; }

t_usage() {
	status 2 "$RS" --align sideways </dev/null 2>"$T/err"
	has "$T/err" "bad --align value, not end or none: sideways"
	status 2 "$RS" --ranks 3-1 </dev/null 2>"$T/err"
	has "$T/err" "bad --ranks value"
	status 2 "$RS" --ranks x </dev/null 2>/dev/null
	status 2 "$RS" -n -1 </dev/null 2>/dev/null
	status 2 "$RS" --bogus </dev/null 2>/dev/null
	"$RS" --help | grep -q -- '--no-pass'
}
check "bad options: usage and exit 2" t_usage

t_negative_rank() {
	# --ranks: a rank is a whole number from 0, alone, in a range or a list
	for v in -1 0--1 -2-3 0,-1; do
		status 2 "$RS" --ranks "$v" </dev/null 2>"$T/neg.err" >"$T/neg.out"
		usage_err "$T/neg.err" rank-skew "bad --ranks value, ranks are whole numbers from 0: $v"
		[ ! -s "$T/neg.out" ]
	done
	# a trace record whose rank is -1: a malformed record, exit 1 naming its line,
	# and no rank rows
	{ trc 0 a 0; k 0 "$AR" 10 5; st 0; trc 1 b -1; k 1 "$AR" 12 3; st 1; } >"$T/neg"
	status 1 "$RS" --no-pass "$T/neg" 2>"$T/neg.err" >"$T/neg.out"
	eq "rank-skew: $T/neg:4: trace record: member 'rank' is -1: a rank is a whole number from 0" \
	    "$(cat "$T/neg.err")"
	[ ! -s "$T/neg.out" ]
	# the same from every tool of the common trace reader (common/trace.h)
	{ trc 0 a -1; k 0 "$AR" 10 5; st 0; } >"$T/neg1"
	for tool in rank-skew trace-stage trace-health kernel-map step-stats overlap-sweep; do
		args=
		[ $tool = overlap-sweep ] && args="--mapping /dev/null"
		rc=0
		# shellcheck disable=SC2086
		"$BIN/$tool" -q $args "$T/neg1" 2>"$T/neg.err" >/dev/null || rc=$?
		eq 1 "$rc" "$tool's exit status"
		eq "$tool: $T/neg1:1: trace record: member 'rank' is -1: a rank is a whole number from 0" \
		    "$(cat "$T/neg.err")"
	done
}
check "a negative rank, in --ranks (exit 2) or a trace record (exit 1), is refused" t_negative_rank

t_nothing() {
	status 3 "$RS" </dev/null 2>"$T/err"
	has "$T/err" "nothing to compare: no kernels in 0 traces"
	{ trc 0 a; k 0 "$AR" 1 2; st 0; trc 1 b; k 1 "$AR" 1 2; st 1; } >"$T/in"
	status 3 "$RS" "$T/in" >"$T/out" 2>"$T/err"
	has "$T/err" "warning: trace 0 ('/p/a.json') names no rank: left out"
	has "$T/err" "nothing to compare: no trace names a rank"
	# the input still went through before the message
	same "$T/in" "$T/out"
}
check "no ranked trace: exit 3, saying why" t_nothing

t_unselected() {
	{ trc 0 r0 0; k 0 "$AR" 10 5 0; st 0; trc 1 r1 1; k 1 "$AR" 12 3; st 1; } |
	    "$RS" --no-pass >"$T/out" 2>"$T/err"
	has "$T/err" "trace 0 ('/p/r0.json'): no kernel is marked sel (not staged by trace-stage?); all of them are used"
	eq "5 3" "$(jq -r 'select(.type == "rank_row") | .comm_us' "$T/out" | tr '\n' ' ' | sed 's/ $//')"
}
check "a trace without sel kernels: all used, with a warning" t_unselected

t_two_traces_one_rank() {
	{
		trc 0 a 0; k 0 "$AR" 10 5; st 0
		trc 1 b 0; k 1 "$AR" 110 5; st 1
		trc 2 c 1; k 2 "$AR" 12 3; k 2 "$AR" 111 4; st 2
	} | "$RS" --no-pass >"$T/out" 2>"$T/err"
	has "$T/err" "stage 'decode': rank 0 has kernels from 2 traces; their collectives are joined in time order"
	eq 2 "$(grep -c collective_row "$T/out")"
}
check "a rank with two traces in a stage: joined, with a warning" t_two_traces_one_rank

t_no_collectives() {
	{ trc 0 a 0; k 0 gemm 10 5; st 0; trc 1 b 1; k 1 gemm 12 7; st 1; } |
	    "$RS" --no-pass >"$T/out" 2>"$T/err"
	has "$T/err" "stage 'decode': no collective kernels on any rank: nothing to match"
	eq "rank_align rank_row rank_row" "$(jq -r .type "$T/out" | tr '\n' ' ' | sed 's/ $//')"
	eq "5 7" "$(jq -r 'select(.type == "rank_row") | .busy_us' "$T/out" | tr '\n' ' ' | sed 's/ $//')"
}
check "ranks without collectives: their rows, nothing matched" t_no_collectives

t_ranks_list() {
	{ trc 0 a 0; k 0 "$AR" 10 5; st 0; trc 1 b 2; k 1 "$AR" 12 3; st 1; } >"$T/in"
	"$RS" --no-pass -q --ranks 0-2,5 "$T/in" >"$T/out" 2>"$T/err"
	eq '[1,5]' "$(jq -c 'select(.type == "rank_gap") | [.ranks[].rank]' "$T/out")"
	[ ! -s "$T/err" ]
}
check "--ranks: numbers and ranges; -q silences the warning" t_ranks_list

t_write_error() {
	{ trc 0 a 0; k 0 "$AR" 10 5; st 0; trc 1 b 1; k 1 "$AR" 12 3; st 1; } >"$T/in"
	status 1 "$RS" "$T/in" >/dev/full 2>"$T/err"
	has "$T/err" "write error"
}
check "a full disk: exit 1" t_write_error

# Memory: one trace's kernels at a time.  Four ranks of 40000 kernels each
# (one all-reduce in 100) must not take much more than one rank.
# (with glibc's own malloc settings: the tools' huge-page heap, memtune.h,
# counts RSS in 2 MiB steps, coarser than the difference measured here)
peak_kb() {	# peak_kb FILE: rank-skew's peak RSS on FILE, in KiB
	TRIAGE_MALLOC=default /usr/bin/time -f %M "$RS" --no-pass "$1" 2>&1 >/dev/null | tail -n 1
}
t_memory() {
	if nm "$RS" 2>/dev/null | grep -q __asan; then
		echo "# sanitizer build: its allocator keeps freed memory; not measured"
		return 0
	fi
	[ -x /usr/bin/time ] || return 0
	awk -v ranks=4 -v n=40000 -v ar="$AR" 'BEGIN {
		for (r = 0; r < ranks; r++) {
			printf "{\"type\":\"trace\",\"t\":%d,\"path\":\"/p/x-TP-%d.json\",\"rank\":%d}\n", r, r, r
			for (i = 0; i < n; i++)
				printf "{\"type\":\"kernel\",\"t\":%d,\"name\":\"%s\",\"ts\":%d,\"dur\":2,\"stage\":\"decode\",\"sel\":true}\n",
				    r, (i % 100 == 99 ? ar : "gemm_" (i % 7)), i * 3 + r
			printf "{\"type\":\"stats\",\"t\":%d}\n", r
		}
	}' >"$T/four"
	awk '/"t":1,/ { exit } { print }' "$T/four" >"$T/one"
	echo '{"type":"stats","t":0}' >>"$T/one"
	one=$(peak_kb "$T/one")
	four=$(peak_kb "$T/four")
	echo "# peak RSS: one rank $one KiB, four ranks $four KiB"
	[ "$four" -lt $((one * 3 / 2)) ]
}
check "four ranks take about the memory of one" t_memory

done_testing
