#!/bin/sh
# trace-extract: input that is not clear is rejected with exit 1 and a message
# naming the file, the byte offset, line:column and a hint; nothing to analyze
# is exit 3 saying what was found instead.
. "$(dirname "$0")/lib.sh"

GEN=$TESTDIR/gen-trace
EX=$BIN/trace-extract

"$GEN" -n 1 -l 1 -o "$T/small.json"

# fails CODE FILE: run trace-extract, expect CODE; stderr in $T/err.
fails() {
	status "$1" "$EX" "$2" >"$T/out" 2>"$T/err"
}
# One line of stderr, and no stats record on stdout.
one_error() {
	eq 1 "$(wc -l <"$T/err" | tr -d ' ')" "stderr lines"
	hasnt "$T/out" '"type":"stats"'
}

t_syntax() {
	# an unquoted key in the first complete event
	l=$(grep -n '"ph": "X"' "$T/small.json" | head -n 1 | cut -d: -f1)
	sed "${l}s/\"ph\": \"X\"/ph: \"X\"/" "$T/small.json" >"$T/syntax.json"
	fails 1 "$T/syntax.json"
	one_error
	col=$(sed -n "${l}p" "$T/syntax.json" | awk '{ print index($0, "ph:") }')
	off=$(($(head -n $((l - 1)) "$T/syntax.json" | wc -c) + col - 1))
	has "$T/err" "^trace-extract: '$T/syntax.json': invalid JSON: expected a double-quoted object key at byte $off (line $l, column $col); the file is not valid JSON"
}
check "syntax error: exit 1 with byte offset, line:column and a hint" t_syntax

t_interleave() {
	"$GEN" -d interleave -o "$T/il.json"
	fails 1 "$T/il.json"
	one_error
	has "$T/err" "'$T/il.json': invalid JSON: .* at byte [0-9]* (line [0-9]*, column [0-9]*); the file is not valid JSON (two writers interleaved"
}
check "two writers interleaved: exit 1" t_interleave

t_concatenated() {
	cat "$T/small.json" "$T/small.json" >"$T/twice.json"
	fails 1 "$T/twice.json"
	size=$(wc -c <"$T/small.json")
	lines=$(wc -l <"$T/small.json")
	has "$T/err" "unexpected data after the end of the JSON document at byte $size (line $((lines + 1)), column 1)"
}
check "two documents written into one file: exit 1 at the second" t_concatenated

t_trunc_string() {
	# cut inside the name of the first kernel
	at=$(grep -b -o 'void sgl_demo' "$T/small.json" | head -n 1 | cut -d: -f1)
	head -c $((at + 5)) "$T/small.json" >"$T/cut.json"
	lines=$(wc -l <"$T/cut.json")
	fails 1 "$T/cut.json"
	one_error
	has "$T/err" "'$T/cut.json': truncated JSON: input ends at byte $((at + 5)) (line $((lines + 1)), column [0-9]*) inside a string that starts at byte $((at - 1)); the file ends early"
}
check "JSON cut off mid-string: exit 1 \"truncated\" with the offset" t_trunc_string

t_trunc_object() {
	# cut right after a complete member of an event
	at=$(grep -b -o '"cat": "cpu_op"' "$T/small.json" | head -n 1 | cut -d: -f1)
	head -c $((at + 15)) "$T/small.json" >"$T/cut2.json"
	fails 1 "$T/cut2.json"
	has "$T/err" "truncated JSON: input ends at byte $((at + 15)) (line [0-9]*, column [0-9]*) inside an object that starts at byte"
}
check "JSON cut off between members: exit 1 \"truncated\"" t_trunc_object

t_trunc_object_form() {
	# the object form needs its closing brackets (only the bare array may omit ']')
	head -n -3 "$T/small.json" >"$T/nobr.json"
	fails 1 "$T/nobr.json"
	has "$T/err" "truncated JSON: input ends at byte [0-9]* (line [0-9]*, column 1) inside an array that starts at byte"
}
check "object form without ']}': truncated" t_trunc_object_form

t_gzip_notrailer() {
	"$GEN" -n 1 -l 1 -d notrailer -o "$T/nt.json.gz"
	fails 1 "$T/nt.json.gz"
	one_error
	size=$(wc -c <"$T/nt.json.gz")
	plain=$(wc -c <"$T/small.json")
	has "$T/err" "'$T/nt.json.gz': truncated gzip stream: input ends before the end of the compressed data (at compressed byte $size); the text read so far ends at byte $plain (line [0-9]*, column 1); the compressed file is damaged or cut short"
}
check "gzip without its trailer: exit 1 \"truncated gzip stream\"" t_gzip_notrailer

t_gzip_cut() {
	"$GEN" -n 1 -l 1 -d truncate=400 -o "$T/gcut.json.gz"
	fails 1 "$T/gcut.json.gz"
	has "$T/err" "truncated gzip stream: input ends before the end of the compressed data (at compressed byte 400)"
}
check "gzip cut mid-stream: exit 1" t_gzip_cut

t_gzip_corrupt() {
	"$GEN" -n 1 -l 1 -o "$T/c.json.gz"
	size=$(wc -c <"$T/c.json.gz")
	# overwrite 16 bytes in the middle of the deflate data
	{ head -c 200 "$T/c.json.gz"; printf 'XXXXXXXXXXXXXXXX'; tail -c $((size - 216)) "$T/c.json.gz"; } >"$T/bad.json.gz"
	fails 1 "$T/bad.json.gz"
	has "$T/err" "'$T/bad.json.gz': corrupt gzip data"
}
check "corrupt deflate data: exit 1" t_gzip_corrupt

t_gzip_garbage() {
	{ cat "$T/c.json.gz"; printf 'junk'; } >"$T/junk.json.gz"
	fails 1 "$T/junk.json.gz"
	has "$T/err" "trailing garbage after gzip data at compressed byte $(wc -c <"$T/c.json.gz")"
	# zero padding after the stream is common and accepted
	{ cat "$T/c.json.gz"; head -c 512 /dev/zero; } >"$T/pad.json.gz"
	status 0 "$EX" "$T/pad.json.gz" >/dev/null
}
check "garbage after the gzip stream: exit 1; zero padding is fine" t_gzip_garbage

t_empty_file() {
	: >"$T/empty.json"
	fails 1 "$T/empty.json"
	has "$T/err" "'$T/empty.json': empty input: no JSON document found"
	printf ' \n\t' >"$T/blank.json"
	fails 1 "$T/blank.json"
}
check "empty file: exit 1" t_empty_file

t_bad_tokens() {
	for doc in '[{"ph": "X", "ts": 01}]' '[{"ph": "X", "ts": +1}]' '[{"ph": "X", "ts": 1.}]' \
	    '[{"ph": "X", "name": "a\qb"}]' '[{"ph": "X", "name": "\u12G4"}]' '[{"ph": tru}]' \
	    '[{"ph": "X",, "ts": 1}]' '[{"ph" "X"}]' '[{"ph": "X"}}' '[{1: 2}]' "[{'ph': 'X'}]"; do
		printf '%s' "$doc" >"$T/tok.json"
		fails 1 "$T/tok.json" || { echo "for: $doc"; return 1; }
		has "$T/err" "invalid JSON: .* at byte [0-9]* (line 1, column [0-9]*)"
	done
}
check "bad tokens: exit 1 with a position" t_bad_tokens

t_line_far() {
	# lines counted over many read chunks (1 MiB each), CR LF and blank lines among them
	awk 'BEGIN { print "{\"traceEvents\": ["
		for (i = 0; i < 40000; i++) {
			printf "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k%d\", \"ts\": %d, \"dur\": 1},", i, i
			printf (i % 7 == 0 ? "\r\n" : i % 5 == 0 ? "\n\n" : "\n")
		}
		print "{\"ph\": \"X\", \"ts\": 1, \"dur\": tru}"; print "]}" }' >"$T/far.json"
	# after 1 + 40000 event lines + 6857 blank ones (i a multiple of 5, not of 7)
	fails 1 "$T/far.json"
	has "$T/err" "invalid literal or number at byte [0-9]* (line 46859, column 29)"
	gzip -c "$T/far.json" >"$T/far.json.gz"
	fails 1 "$T/far.json.gz"
	has "$T/err" "invalid literal or number at byte [0-9]* (line 46859, column 29)"
}
check "the line and column of an error past many read chunks" t_line_far

t_nul_byte() {
	printf '[{"ph": "X",\000 "ts": 1}]' >"$T/nul.json"
	fails 1 "$T/nul.json"
	has "$T/err" "expected a double-quoted object key at byte 12 (line 1, column 13)"
}
check "a NUL byte between tokens is a syntax error" t_nul_byte

t_nul_literal() {
	# a NUL inside a literal once ended the comparison early: accepted, then dropped
	printf '[{"ph": "X", "ts": -Infinity\000\000\016}]' >"$T/nullit.json"
	fails 1 "$T/nullit.json"
	has "$T/err" "invalid JSON: invalid literal or number at byte 19 (line 1, column 20)"
}
check "a NUL byte inside a NaN or Infinity literal is a syntax error (found by fuzz-scan)" t_nul_literal

t_deep() {
	awk 'BEGIN { printf "[{\"args\": "; for (i = 0; i < 2000; i++) printf "["; }' >"$T/deep.json"
	fails 1 "$T/deep.json"
	has "$T/err" "nested deeper than the limit of 1024 levels at byte"
}
check "absurd nesting is refused, not a stack overflow" t_deep

t_long_number() {
	awk 'BEGIN { printf "[{\"ph\": \"X\", \"ts\": 1"; for (i = 0; i < 600; i++) printf "0"; print "}]" }' >"$T/num.json"
	fails 1 "$T/num.json"
	has "$T/err" "number or literal longer than 512 bytes"
}
check "a 600-digit number is refused" t_long_number

t_missing_file() {
	fails 1 "$T/nope.json"
	has "$T/err" "cannot open '$T/nope.json': No such file or directory"
}
check "missing file: exit 1" t_missing_file

t_empty_events() {
	"$GEN" -d empty -o "$T/e.json"
	fails 3 "$T/e.json"
	has "$T/err" "'$T/e.json': no trace events: the event array is empty"
	printf '{"schemaVersion": 1}' >"$T/noev.json"
	fails 3 "$T/noev.json"
	has "$T/err" "no trace events: the document has no traceEvents array"
	printf '[1, "x", null]' >"$T/scalars.json"
	fails 3 "$T/scalars.json"
	has "$T/err" "no trace events: the event array holds 3 elements, none of them an object"
	printf 'null' >"$T/null.json"
	fails 3 "$T/null.json"
	has "$T/err" "no trace events: the document is neither a JSON object nor an array"
}
check "nothing to analyze: exit 3 saying what was found" t_empty_events

t_worst_status() {
	# a bad file among good ones: the good ones are still extracted, exit 1
	status 1 "$EX" "$T/small.json" "$T/cut.json" "$T/small.json" >"$T/mix.jsonl" 2>"$T/mix.err"
	eq 2 "$(jq -c 'select(.type == "stats")' "$T/mix.jsonl" | wc -l | tr -d ' ')"
	status 1 "$EX" "$T/e.json" "$T/cut.json" >/dev/null 2>&1
	status 3 "$EX" "$T/e.json" >/dev/null 2>&1
}
check "several operands: malformed beats empty, good ones still extracted" t_worst_status

t_usage() {
	status 2 "$EX" --bogus >/dev/null 2>"$T/u.err"
	usage_err "$T/u.err" trace-extract "unknown or ambiguous option '--bogus'"
	status 2 "$EX" --list-ranks >/dev/null 2>"$T/u.err"
	usage_err "$T/u.err" trace-extract "--list-ranks needs a profile directory"
	status 0 "$EX" --help >"$T/h.out"
	has "$T/h.out" "usage: trace-extract"
}
check "usage errors: exit 2" t_usage

# Not a trace at all: the message names what the bytes look like (issue 19).
t_not_json() {
	printf '\211PNG\r\n\032\n0000000000000000' >"$T/png.json"
	printf 'PK\003\004\024\000\010\000\010\000' >"$T/zip.json"
	printf '\177ELF\002\001\001\000\000\000\000\000\000\000\000\000' >"$T/elf.json"
	printf '<!DOCTYPE html><html></html>' | gzip >"$T/page.json.gz"
	for f in png:"a PNG image" zip:"a ZIP archive" elf:"an ELF executable" page:"gzip-compressed HTML"; do
		n=${f%%:*}
		file=$T/$n.json
		[ -f "$file" ] || file=$T/$n.json.gz
		status 1 "$BIN/trace-extract" "$file" 2>"$T/err" >/dev/null
		has "$T/err" "': not a trace: the bytes look like ${f#*:}"
	done
	# text that is not JSON keeps the parser's message, without the "two writers" guess
	printf 'hello\n' >"$T/hello.json"
	status 1 "$BIN/trace-extract" "$T/hello.json" 2>"$T/err" >/dev/null
	has "$T/err" "expected a value at byte 0 .*does not start with a JSON value"
}
check "not a trace: PNG, ZIP, ELF, gzip of HTML named as such" t_not_json

t_tty_stdin() {
	# a terminal on stdin gets a hint instead of a silent wait
	script -qc "$BIN/trace-extract </dev/null; echo; $BIN/trace-extract" /dev/null \
	    </dev/null >"$T/tty.out" 2>&1 &
	pid=$!
	sleep 1
	kill "$pid" 2>/dev/null || :
	has "$T/tty.out" "reading the trace from standard input, a terminal: name a trace file"
	# not from a pipe or a file
	printf '{"traceEvents":[]}' | "$BIN/trace-extract" >/dev/null 2>"$T/pipe.err" || :
	hasnt "$T/pipe.err" "standard input, a terminal"
}
check "stdin at a terminal: a hint, not a silent wait" t_tty_stdin

t_nul_in_literal() {
	# found by fuzz-scan: "inf" followed by a NUL byte passed as a literal, then
	# the event tokenizer refused the event and it was dropped without a word
	printf '[{"ph": "X", "name": "k", "cat": "kernel", "ts": 1, "dur": inf\000x, "pid": 0}]' \
	    >"$T/nul.json"
	status 1 "$BIN/trace-extract" "$T/nul.json" 2>"$T/err" >/dev/null
	has "$T/err" "invalid literal or number at byte 59"
}
check "a NUL byte inside a literal: invalid JSON, exit 1" t_nul_in_literal

done_testing
