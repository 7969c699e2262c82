#!/bin/sh
# fuse-detect: command line, pass-through, errors, the built-in catalog.
. "$(dirname "$0")/lib.sh"
. "$FIX/fuse-detect/rows.sh"

# Argument checking

t_help() {
	fd -h >"$T/out" 2>"$T/err" &&
	has "$T/out" '^usage: fuse-detect ' &&
	eq 0 "$(wc -c <"$T/err")" "stderr bytes" &&
	fd --help | cmp -s - "$T/out"
}
check '-h prints usage to stdout and exits 0' t_help

t_version() {
	fd --version >"$T/out" &&
	has "$T/out" '^fuse-detect (llm-torch-profiler-analysis) '
}
check '--version' t_version

t_badopt() {
	status 2 fd --no-such-option </dev/null 2>"$T/err" &&
	usage_err "$T/err" fuse-detect "unknown or ambiguous option '--no-such-option'"
}
check 'unknown option exits 2: one line and where the help is' t_badopt

t_badexplain() {
	status 2 fd --explain=stdout </dev/null 2>"$T/err" &&
	has "$T/err" "bad --explain value, not stderr or records: stdout"
}
check 'bad --explain value exits 2' t_badexplain

t_stdin_twice() {
	status 2 fd -p - </dev/null 2>"$T/err" &&
	has "$T/err" 'cannot read both patterns and records from stdin'
}
check '-p - with records on stdin is a usage error' t_stdin_twice

# Behavior

mkstream() {
	inp sglang '{"model_path":"Qwen/Qwen3-8B","tp_size":1}'
	trc 0
	echo '{"type":"kernel","t":0,"name":"k","other":[1,2,{"x":null}]}'
	srow 0 decode 'void flashinfer::norm::FusedAddRMSNormKernel<8>' 500 1000 \
	    'python/sglang/srt/layers/layernorm.py:120 forward_cuda'
	srow 0 decode 'other_kernel' 500 1000 'python/sglang/srt/x.py:1 f'
	echo '{"type":"stats","t":0,"unknown":"\u00e9"}'
}

t_passthrough() {
	mkstream >"$T/in" &&
	fd <"$T/in" >"$T/out" &&
	jq -c 'select(.type!="fuse_row")' "$T/out" >"$T/rest" &&
	jq -c . "$T/in" >"$T/in.c" &&
	same "$T/in.c" "$T/rest" &&
	grep -v '"type":"fuse_row"' "$T/out" >"$T/raw" &&
	same "$T/in" "$T/raw"
}
check 'every record passes through byte for byte' t_passthrough

t_placement() {
	mkstream >"$T/in" &&
	fd <"$T/in" | jq -r .type | tr '\n' ' ' >"$T/types" &&
	eq 'input trace kernel kernel_row kernel_row fuse_row stats ' "$(cat "$T/types")"
}
check 'fuse rows follow the group'"'"'s last kernel_row' t_placement

t_files() {
	mkstream >"$T/in" &&
	fd <"$T/in" >"$T/a" &&
	fd "$T/in" >"$T/b" &&
	same "$T/a" "$T/b" &&
	fd - <"$T/in" >"$T/c" &&
	same "$T/a" "$T/c"
}
check 'file operands and - read like stdin' t_files

t_malformed() {
	{ mkstream; echo '{"type":"kernel_row",'; } >"$T/in" &&
	status 1 fd <"$T/in" >/dev/null 2>"$T/err" &&
	has "$T/err" '^fuse-detect: <stdin>:7: record is not a JSON object'
}
check 'malformed record: exit 1 naming <stdin>:LINE' t_malformed

t_missing() {
	echo '{"type":"kernel_row","t":0,"stage":"decode","kernel":"k"}' >"$T/in" &&
	status 1 fd <"$T/in" >/dev/null 2>"$T/err" &&
	has "$T/err" "<stdin>:1: kernel_row record: member 'total_us' is missing"
}
check 'kernel_row without its members: exit 1' t_missing

t_badentry() {
	row 0 decode k 1 1 loc - '[1]' >"$T/in" &&
	status 1 fd <"$T/in" >/dev/null 2>"$T/err" &&
	has "$T/err" "<stdin>:1: kernel_row record: member 'entry' is not a site entry or null"
}
check 'kernel_row entry of the wrong type: exit 1' t_badentry

t_named_file() {
	printf '\n{"type":"x"}\nnot json\n' >"$T/in" &&
	status 1 fd "$T/in" >/dev/null 2>"$T/err" &&
	has "$T/err" "$T/in:3: "
}
check 'errors in a file operand name the file' t_named_file

t_nofile() {
	status 1 fd "$T/nonexistent" >/dev/null 2>"$T/err" &&
	has "$T/err" "cannot open '$T/nonexistent'"
}
check 'missing operand: exit 1' t_nofile

t_builtin() {
	mkstream >"$T/in" &&
	fd <"$T/in" >"$T/a" &&
	fd -p "$TOP/data/fuse-patterns.jsonl" <"$T/in" >"$T/b" &&
	same "$T/a" "$T/b" &&
	fd --explain=records <"$T/in" | jq -r 'select(.type=="fuse_explain") | .pattern' >"$T/names" &&
	jq -r .pattern "$TOP/data/fuse-patterns.jsonl" >"$T/want" &&
	same "$T/want" "$T/names"
}
check 'built-in catalog is data/fuse-patterns.jsonl, all 47 patterns' t_builtin

t_badcat() {
	{ pat '"pattern":"A","active_keywords":["x"]'
	  echo '# a comment'
	  echo
	  pat '"pattern":"B","min_share":"high"'; } >"$T/cat" &&
	status 1 fd -p "$T/cat" </dev/null 2>"$T/err" &&
	has "$T/err" "^fuse-detect: $T/cat:4: 'min_share' is not a number"
}
check 'malformed catalog line: exit 1 naming FILE:LINE' t_badcat

t_badcat2() {
	for body in '"active_keywords":["x"]' '"pattern":""' \
	    '"pattern":"P","split_groups":["x"]' '"pattern":"P","priority":1.5' \
	    '"pattern":"P","require_tp":1' '"pattern":"P","subsumes":"Q"'; do
		pat "$body" >"$T/cat"
		status 1 fd -p "$T/cat" </dev/null 2>"$T/err" || return 1
		has "$T/err" "$T/cat:1: " || return 1
	done
	echo '[1]' >"$T/cat" &&
	status 1 fd -p "$T/cat" </dev/null 2>"$T/err" &&
	has "$T/err" "$T/cat:1: pattern is not a JSON object" &&
	status 1 fd -p "$T/none" </dev/null 2>"$T/err" &&
	has "$T/err" "cannot open '$T/none'"
}
check 'catalog type errors and unreadable catalogs exit 1' t_badcat2

t_several() {
	mkstream >"$T/in" &&
	pat '"pattern":"Mine","active_keywords":["other_kernel"],"rationale":"R."' >"$T/mine" &&
	fd -p "$TOP/data/fuse-patterns.jsonl" -p "$T/mine" <"$T/in" >"$T/out" &&
	fuse_rows "$T/out" .pattern >"$T/got" &&
	printf 'Fused residual add + RMSNorm\nMine\n' >"$T/want" &&
	same "$T/want" "$T/got"
}
check 'several -p files load into one catalog in order' t_several

t_alone() {
	# The catalog is inside the binary: a copy run far from the source
	# tree (no data/ anywhere near) still finds the patterns.
	mkstream >"$T/in" &&
	mkdir "$T/alone" && cp "$FUSE_DETECT" "$T/alone/fuse-detect" &&
	(cd "$T/alone" && ./fuse-detect) <"$T/in" >"$T/a" &&
	fd <"$T/in" >"$T/b" &&
	same "$T/b" "$T/a" &&
	has "$T/a" '"type":"fuse_row"'
}
check 'works installed alone: the catalog is built in' t_alone

t_odd_needles() {
	# the reference's substring tests (fuse-detect.md §4); words need letters or digits
	FD_MODE="--compat reference"
	# A needle without letters or digits has an empty compact form, so
	# only the lowercase substring test applies; "" matches every row.
	mkstream >"$T/in" &&
	pat '"pattern":"Colons","active_keywords":["::"]' >"$T/cat" &&
	fd -p "$T/cat" <"$T/in" | jq -r 'select(.type=="fuse_row") | .evidence' >"$T/got" &&
	eq 'void flashinfer::norm::FusedAddRMSNormKernel<8> (50.0%)' "$(cat "$T/got")" &&
	pat '"pattern":"Empty","active_keywords":[""],"split_groups":[[]]' >"$T/cat" &&
	fd -p "$T/cat" <"$T/in" | jq -r 'select(.type=="fuse_row") | .related_us' >"$T/got" &&
	eq 1000 "$(cat "$T/got")"
}
check 'needles without alphanumerics; the empty needle' t_odd_needles

t_devfull() {
	mkstream >"$T/in" &&
	status 1 fd <"$T/in" >/dev/full 2>"$T/err" &&
	has "$T/err" 'write error on stdout'
}
check 'write error on stdout: exit 1' t_devfull

t_empty() {
	status 3 fd </dev/null >"$T/out" 2>"$T/err" &&
	eq 0 "$(wc -c <"$T/out")" "stdout bytes" &&
	has "$T/err" "no records in the input"
}
check 'empty input: nothing to analyze (exit 3), no output' t_empty

t_man() {
	if ! command -v mandoc >/dev/null; then return 0; fi
	mandoc -Tlint -W warning "$TOP/man/man1/fuse-detect.1" "$TOP/man/man5/fuse-patterns.5"
}
check 'man pages lint clean' t_man

done_testing
