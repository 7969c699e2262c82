#!/bin/sh
# overlap-sweep: command line, pass-through, errors, and the pipeline on a
# bare top-level-array trace.
. "$(dirname "$0")/lib.sh"
. "$FIX/overlap-sweep/records.sh"

# Argument checking

t_help() {
	os -h >"$T/out" 2>"$T/err" &&
	has "$T/out" '^usage: overlap-sweep ' &&
	eq 0 "$(wc -c <"$T/err")" "stderr bytes" &&
	os --help | cmp -s - "$T/out"
}
check '-h prints usage to stdout and exits 0' t_help

t_version() {
	os --version >"$T/out" &&
	has "$T/out" '^overlap-sweep (llm-torch-profiler-analysis) '
}
check '--version' t_version

t_badopt() {
	status 2 os --no-such-option </dev/null 2>"$T/err" &&
	usage_err "$T/err" overlap-sweep "unknown or ambiguous option '--no-such-option'"
}
check 'unknown option exits 2: one line and where the help is' t_badopt

t_badlimit() {
	status 2 os --overlap-table-limit abc </dev/null 2>"$T/err" &&
	has "$T/err" 'bad --overlap-table-limit value, invalid: abc' &&
	status 2 os --mapping </dev/null 2>"$T/err"
}
check 'bad --overlap-table-limit exits 2' t_badlimit

# Behavior

formal_stream() {
	echo '{"type":"input","v":1,"role":"formal","path":"/f/f.json"}'
	trc formal /f/f.json all
	kern foo_kernel 1 0 100 ',"unknown":[1,{"x":null}]'
	echo '{"type":"kernel_row","t":0,"stage":"all","kernel":"foo_kernel"}'
	end
}

t_single_mode() {
	formal_stream >"$T/in" &&
	os <"$T/in" >"$T/out" &&
	same "$T/in" "$T/out"
}
check 'without --mapping records pass through and no rows are added' t_single_mode

t_passthrough() {
	formal_stream >"$T/in" &&
	minimal_mapping >"$T/map" &&
	os --mapping "$T/map" <"$T/in" >"$T/out" &&
	grep -v -e '"type":"overlap_row"' -e '"type":"overlap_exposed"' "$T/out" >"$T/rest" &&
	same "$T/in" "$T/rest" &&
	eq 1 "$(grep -c '"type":"overlap_row"' "$T/out")" &&
	eq 'overlap_row overlap_exposed' "$(tail -n 2 "$T/out" | jq -r .type | tr '\n' ' ' | sed 's/ $//')" &&
	os --mapping "$T/map" "$T/in" >"$T/out2" &&
	same "$T/out" "$T/out2" &&
	os --mapping "$T/map" - <"$T/in" >"$T/out3" &&
	same "$T/out" "$T/out3"
}
check 'records pass through unchanged; rows come last, their exposure after them' t_passthrough

t_drop_events() {
	{
		formal_stream | sed '/"type":"stats"/d'
		echo '{"type":"launch","t":0,"name":"cudaLaunchKernel","pid":"1","tid":"1","ts":0,"dur":1,"correlation":1}'
		echo '{"type":"cpu_op","t":0,"name":"aten::mm","pid":"1","tid":"1","ts":0,"dur":2}'
		echo '{"type":"sync","t":0,"name":"cudaDeviceSynchronize","pid":"1","tid":"1","ts":3,"dur":1}'
		formal_stream | grep '"type":"stats"'
	} >"$T/in" &&
	minimal_mapping >"$T/map" &&
	os --mapping "$T/map" <"$T/in" >"$T/all" &&
	os --mapping "$T/map" --drop-events <"$T/in" >"$T/out" &&
	grep -v -e '"type":"kernel",' -e '"type":"launch",' -e '"type":"cpu_op",' \
	    -e '"type":"sync",' "$T/all" >"$T/want" &&
	same "$T/want" "$T/out" &&
	eq 1 "$(grep -c '"type":"overlap_row"' "$T/out")" &&
	eq 0 "$(grep -c -e '"type":"kernel",' -e '"type":"launch",' "$T/out")"
}
check '--drop-events: the same rows, the event records left out' t_drop_events

t_row_members() {
	formal_stream >"$T/in" &&
	minimal_mapping >"$T/map" &&
	os --mapping "$T/map" <"$T/in" >"$T/out" &&
	eq 'type,stage,priority,verdict,kernel,python_scope,total_us,share_pct,exclusive_ratio,hidden_ratio,dep_risk,dependency_signal,recommendation,id' \
	    "$(grep '"type":"overlap_row"' "$T/out" | jq -r 'keys_unsorted | join(",")')"
}
check 'overlap_row members follow triage-records(5)' t_row_members

t_malformed() {
	{ trc formal /f/f.json all; echo '{"type":"kernel", oops'; end; } >"$T/in" &&
	minimal_mapping >"$T/map" &&
	status 1 os --mapping "$T/map" <"$T/in" >/dev/null 2>"$T/err" &&
	has "$T/err" '^overlap-sweep: <stdin>:2: '
}
check 'a malformed record exits 1 with file and line' t_malformed

t_malformed_mapping() {
	formal_stream >"$T/in" &&
	{ trc mapping /m/m.json all; echo 'not json'; } >"$T/map" &&
	status 1 os --mapping "$T/map" <"$T/in" >/dev/null 2>"$T/err" &&
	has "$T/err" "^overlap-sweep: $T/map:2: "
}
check 'a malformed mapping record names the mapping file' t_malformed_mapping

t_truncated() {
	{ trc formal /f/f.json all; kern foo_kernel 1 0 100; } >"$T/in" &&
	minimal_mapping >"$T/map" &&
	status 1 os --mapping "$T/map" <"$T/in" >/dev/null 2>"$T/err" &&
	has "$T/err" 'input ended inside trace 0'
}
check 'end of input inside a trace exits 1' t_truncated

t_missing_mapping() {
	status 1 os --mapping "$T/nonexistent" </dev/null 2>"$T/err" &&
	has "$T/err" "cannot open '$T/nonexistent'"
}
check 'an unreadable mapping file exits 1' t_missing_mapping

t_no_kernel_ts() {
	{ trc formal /f/f.json all; echo '{"type":"kernel","t":0,"name":"k","overlap":true}'; end; } >"$T/in" &&
	minimal_mapping >"$T/map" &&
	status 1 os --mapping "$T/map" <"$T/in" >/dev/null 2>"$T/err" &&
	has "$T/err" "<stdin>:2: kernel record: member 'ts' is missing"
}
check 'a kernel record without times exits 1' t_no_kernel_ts

t_write_error() {
	formal_stream >"$T/in" &&
	if [ -w /dev/full ]; then
		status 1 os <"$T/in" >/dev/full 2>"$T/err" &&
		has "$T/err" 'write error on stdout'
	fi
}
check 'a write error exits 1' t_write_error

# Deviation (docs/deviations.md): the reference crashes on a bare top-level
# JSON array trace in mapping/formal mode; we analyze it like any trace.
t_toplevel_array() {
	F=$FIX/overlap-sweep/toplevel-array.json
	"$BIN/trace-extract" -q --role mapping "$F" | "$BIN/trace-stage" -q | tee "$T/map" |
	    "$BIN/kernel-map" -q --sites-only >"$T/sites" &&
	cat "$T/sites" >>"$T/map" &&
	"$BIN/trace-extract" -q --role formal "$F" | "$BIN/trace-stage" -q |
	    "$BIN/kernel-map" -q --mapping "$T/sites" | os --mapping "$T/map" >"$T/out" &&
	rows "$T/out" >"$T/got" &&
	printf '%s\n' \
	    'all	P1	headroom	Memcpy DtoH (Device -> Pinned)	unmapped	40	28.57142857142857	1	0	low	serial risk low	try fusion' \
	    'all	P1	headroom	void gemm_kernel<float>	python/sglang/srt/layers/linear.py(123): forward	100	71.42857142857143	1	0	low	serial risk low	try fusion' \
	    >"$T/want" &&
	same "$T/want" "$T/got"
}
check 'a bare top-level-array trace is analyzed (deviation)' t_toplevel_array

done_testing
