#!/bin/sh
# The record table (common/rectab.h) is the one definition of the records:
# - triage-records(5) lists exactly its types and members, with their kinds,
#   requirement and defaults;
# - every filter that reads a type rejects the same malformed record the
#   same way: exit 1, "<input>:<line>: <type> record: member '<m>' ...".
. "$(dirname "$0")/lib.sh"

LIB=$BIN/../libcommon.a
CC=${CC:-cc}
MAN5=$TOP/man/man5/triage-records.5

schema() {
	[ -f "$T/rec-schema" ] && return 0
	san=
	if nm "$LIB" 2>/dev/null | grep -q __asan; then
		san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
	fi
	# shellcheck disable=SC2086
	"$CC" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $san -iquote "$TOP/common" \
	    -o "$T/rec-schema" "$FIX/common/rec-schema.c" "$LIB" $COMMON_LIBS
	"$T/rec-schema" >"$T/schema"
}

t_man_lists_the_table() {
	schema
	# ".Ss TYPE" then ".It Li MEMBER Pq KIND, required|optional|default VALUE"
	awk '
	/^\.Sh / { in_types = ($2 == "RECORD") }
	in_types && /^\.Ss / { type = $2 }
	in_types && /^\.It Li / && type != "" {
		line = $0
		sub(/^\.It Li /, "", line)
		m = line; sub(/ .*/, "", m)
		q = line; sub(/^[^ ]* Pq /, "", q)
		split(q, a, ", ")
		kind = a[1]; need = a[2]
		d = "-"
		if (need ~ /^default /) { d = need; sub(/^default /, "", d); need = "optional" }
		if (d == "empty") d = "\"\""
		print type, m, kind, need, d
	}' "$MAN5" >"$T/man"
	same "$T/schema" "$T/man"
}
check 'triage-records(5) lists exactly the members of the record table' t_man_lists_the_table

# bad_record TYPE DROP: a record of TYPE with every required member but DROP
# (plain values of the right kinds; "t" is 0)
bad_record() {
	awk -v type="$1" -v drop="$2" '
	BEGIN { printf "{\"type\":\"%s\"", type }
	$1 == type && $4 == "required" && $2 != drop {
		v = "\"x\""
		if ($3 == "integer") v = "0"
		if ($3 == "number") v = "1.5"
		if ($3 == "boolean") v = "true"
		if ($3 == "JSON") v = "[]"
		printf ",\"%s\":%s", $2, v
	}
	END { print "}" }' "$T/schema"
}

# the first required member of TYPE other than "t"
first_required() {
	awk -v type="$1" '$1 == type && $4 == "required" && $2 != "t" { print $2; exit }' "$T/schema"
}

# Which record types each filter reads (the others pass through unread).
readers='
trace-stage trace kernel annotation launch corr kernel_stages stats
trace-health trace kernel launch frame annotation gpu_pids kernel_stages stats
kernel-map trace kernel cpu_op launch frame corr kernel_stages stats
overlap-sweep trace kernel thread_name site kernel_stages stats
overlap-sweep:mapping trace kernel thread_name cpu_op frame site kernel_stages stats
fuse-detect trace kernel_row
rank-skew trace kernel input kernel_stages stats
triage-render kernel_row overlap_row fuse_row diff_input diff_metric diff_row diff_fuse diff_overlap verdict
step-stats trace kernel launch annotation kernel_row kernel_stages stats
trace-diff input kernel_row gpu_time step fuse_row overlap_row health
trace-annotate trace stats kernel kernel_stages launch annotation step gpu_time idle_gap kernel_row graph_escape overlap_row overlap_exposed fuse_row rank_row collective_row
'

# run_filter SPEC INPUT: run the filter with INPUT as the records it reads
run_filter() {
	case $1 in
	overlap-sweep) "$BIN/overlap-sweep" --mapping /dev/null <"$2" ;;
	overlap-sweep:mapping) "$BIN/overlap-sweep" --mapping "$2" </dev/null ;;
	trace-diff) "$BIN/trace-diff" --baseline /dev/null <"$2" ;;
	*) "$BIN/$1" <"$2" ;;
	esac
}

t_same_outcome() {
	schema
	echo "$readers" | while read -r spec types; do
		[ -n "$spec" ] || continue
		for type in $types; do
			m=$(first_required "$type")
			[ -n "$m" ] || continue
			{
				[ "$type" != trace ] && echo '{"type":"trace","t":0}'
				bad_record "$type" "$m"
				echo '{"type":"stats","t":0}'
			} >"$T/in"
			line=1
			[ "$type" != trace ] && line=2
			where='<stdin>'
			[ "$spec" = overlap-sweep:mapping ] && where=$T/in
			status 1 run_filter "$spec" "$T/in" >/dev/null 2>"$T/err"
			tool=${spec%%:*}
			has "$T/err" "^$tool: $where:$line: $type record: member '$m' is missing\$"
			# a value of the wrong kind: the same shape of message
			sed "s/\"type\":\"$type\"/&,\"$m\":{\"a\":1}/" "$T/in" >"$T/in2"
			[ "$spec" = overlap-sweep:mapping ] && where=$T/in2
			status 1 run_filter "$spec" "$T/in2" >/dev/null 2>"$T/err"
			has "$T/err" "^$tool: $where:$line: $type record: member '$m' is not "
		done
	done
}
check 'every filter rejects the same malformed records the same way' t_same_outcome

# Records a reader cannot take the same way as a jq tap, or that hold a
# trace twice (two streams concatenated), end the run with exit 1.
t_ambiguous() {
	printf '%s\n' '{"type":"trace","t":0,"path":"/x/decode/t.json"}' \
	    '{"type":"kernel","t":0,"name":"k","ts":1,"dur":2,"type":"note"}' '{"type":"stats","t":0}' \
	    >"$T/dup-type"
	status 1 "$BIN/trace-stage" -q "$T/dup-type" >/dev/null 2>"$T/err"
	has "$T/err" 'dup-type:2: record has two "type" members'
	printf '%s\n' '{"type":"trace","t":0,"path":"/x/decode/t.json"}' \
	    '{"type":"kernel","t":0,"name":"k","ts":1,"dur":2}' '{"type":"stats","t":0}' >"$T/one"
	cat "$T/one" "$T/one" >"$T/two"
	status 1 "$BIN/trace-stage" -q "$T/two" >/dev/null 2>"$T/err"
	has "$T/err" "two:4: trace 0 again: a record stream holds each trace once"
	"$BIN/trace-stage" -q "$T/one" >"$T/one.st"
	cat "$T/one.st" "$T/one.st" >"$T/two.st"
	for tool in trace-health kernel-map step-stats; do
		status 1 "$BIN/$tool" -q "$T/two.st" >/dev/null 2>"$T/err"
		has "$T/err" "two.st:[0-9]*: trace 0 again: a record stream holds each trace once"
	done
	# two files are two streams, each numbering its own traces
	"$BIN/trace-stage" -q "$T/one" "$T/one" >/dev/null
}
check 'two "type" members, a trace twice in one stream: refused' t_ambiguous

# The documents piped into a filter by mistake: the message says what to run.
t_not_records() {
	"$TESTDIR/gen-trace" -o "$T/tr.json"
	status 1 "$BIN/kernel-map" -q "$T/tr.json" >/dev/null 2>"$T/err"
	has "$T/err" 'a torch.profiler trace, not a record stream: run trace-extract on the trace first'
	gzip -c "$T/tr.json" >"$T/tr.json.gz"
	status 1 "$BIN/trace-stage" -q <"$T/tr.json.gz" >/dev/null 2>"$T/err"
	has "$T/err" 'this is gzip data on a stream read once'
	"$TRIAGE" -q --input "$T/tr.json" -f json >"$T/rep.json"
	status 1 "$BIN/triage-render" -q "$T/rep.json" >/dev/null 2>"$T/err"
	has "$T/err" 'this is a triage report (--format json), not its records: the tools read --format jsonl'
	# trace-stage left out: the kernels are nobody's
	"$BIN/trace-extract" -q "$T/tr.json" >"$T/x.jsonl"
	status 3 "$BIN/kernel-map" -q "$T/x.jsonl" >/dev/null 2>"$T/err"
	has "$T/err" 'run trace-stage before kernel-map'
}
check 'a trace, gzip on stdin, a json report, unstaged records: the message says what to run' t_not_records

t_defaults() {
	# an optional member with a default reads as it: pid "None" when absent
	printf '%s\n' '{"type":"trace","t":0,"path":"/x/decode/t.json"}' \
	    '{"type":"kernel","t":0,"name":"k","ts":1,"dur":2}' '{"type":"stats","t":0}' |
	    "$BIN/trace-stage" -q >"$T/out"
	eq '"None" "None" "decode" ""' "$(jq -r 'select(.type=="kernel") |
	    "\(.pid|tojson) \(.tid|tojson) \(.stage|tojson) \(.cat|tojson)"' "$T/out")"
}
check 'absent optional members read as their documented defaults' t_defaults

# A record longer than many pipe reads (a 3 MiB name arrives in 64 KiB
# pieces): read whole, byte for byte, by a filter reading a pipe, with the
# records around it (the newline search resumes where it stopped, issue 30).
t_long_line_pipe() {
	python3 -c "
import sys
w = sys.stdout.write
w('{\"type\":\"trace\",\"v\":1,\"t\":0,\"role\":\"single\",\"path\":\"/p/t.json\",\"stage\":\"all\"}\n')
w('{\"type\":\"note\",\"id\":\"n\",\"text\":\"' + 'x' * (3 << 20) + '\"}\n')
w('{\"type\":\"note\",\"id\":\"m\",\"text\":\"short\"}\n')
w('{\"type\":\"stats\",\"t\":0,\"events\":0}\n')" >"$T/long.jsonl"
	cat "$T/long.jsonl" | "$BIN/trace-health" -q >"$T/long.out"
	grep -v '"type":"health"' "$T/long.out" >"$T/long.cmp"
	cmp "$T/long.jsonl" "$T/long.cmp"
}
check 'a record of many pipe reads passes whole' t_long_line_pipe

done_testing
