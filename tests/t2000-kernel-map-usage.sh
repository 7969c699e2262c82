#!/bin/sh
# kernel-map: command line and exit statuses.
. "$(dirname "$0")/lib.sh"

km() { "$BIN/kernel-map" "$@"; }
KF=$FIX/kernel-map

# Argument checking

t_help() {
	km -h >"$T/out" 2>"$T/err" &&
	has "$T/out" '^usage: kernel-map ' &&
	eq 0 "$(wc -c <"$T/err")" "stderr bytes" &&
	km --help | cmp -s - "$T/out"
}
check '-h prints usage to stdout and exits 0' t_help

t_version() {
	km --version >"$T/out" &&
	has "$T/out" 'kernel-map'
}
check '--version' t_version

t_badopt() {
	status 2 km --no-such-option </dev/null 2>"$T/err" &&
	usage_err "$T/err" kernel-map "unknown or ambiguous option '--no-such-option'"
}
check 'unknown option exits 2: one line and where the help is' t_badopt

t_badlimit() {
	status 2 km --kernel-table-limit 12x </dev/null 2>"$T/err" &&
	has "$T/err" "bad --kernel-table-limit value, invalid: 12x"
}
check 'non-numeric --kernel-table-limit exits 2' t_badlimit

t_both() {
	status 2 km --sites-only --mapping "$KF/lookup-map.jsonl" </dev/null 2>"$T/err" &&
	has "$T/err" 'cannot be combined'
}
check '--mapping with --sites-only is a usage error' t_both

t_stdin_twice() {
	status 2 km --mapping - </dev/null 2>"$T/err" &&
	has "$T/err" 'cannot read both the mapping file and the records from stdin'
}
check '--mapping - with records on stdin is a usage error' t_stdin_twice

t_operands() {
	status 2 km a b </dev/null 2>"$T/err" &&
	usage_err "$T/err" kernel-map "one record file at most (got 2)"
}
check 'more than one operand is a usage error' t_operands

# Behavior

t_file_operand() {
	km "$KF/rows.jsonl" >"$T/a" &&
	km <"$KF/rows.jsonl" >"$T/b" &&
	same "$T/a" "$T/b"
}
check 'a file operand reads like stdin' t_file_operand

t_negative_limit() {
	km --kernel-table-limit -3 <"$KF/rows.jsonl" >"$T/a" &&
	km --kernel-table-limit 0 <"$KF/rows.jsonl" >"$T/b" &&
	same "$T/a" "$T/b" &&
	eq 6 "$(jq -s '[.[]|select(.type=="kernel_row" and .shown)]|length' "$T/a")"
}
check 'a negative limit means no limit, like 0' t_negative_limit

t_missing_mapping() {
	status 1 km --mapping "$T/nope" </dev/null 2>"$T/err" &&
	has "$T/err" "cannot open '$T/nope'"
}
check 'unreadable --mapping file exits 1' t_missing_mapping

done_testing
