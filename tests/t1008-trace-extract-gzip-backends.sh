#!/bin/sh
# ISA-L and zlib inflate (common/zio.c; TRIAGE_ZLIB=1 selects zlib) read the
# same gzip input to the same records and refuse the same damaged input with
# the same exit status: whole files, multi-member files, optional header
# fields, every prefix of a small file, corrupt and padded streams.
. "$(dirname "$0")/lib.sh"

GEN=$TESTDIR/gen-trace
EX=$BIN/trace-extract

"$GEN" -n 2 -l 2 -s both -o "$T/plain.json"
"$GEN" -n 2 -l 2 -s both -o "$T/clean.json.gz"
"$GEN" -n 2 -l 2 -s both -d multimember -o "$T/multi.json.gz"

# both FILE: records, stderr and exit status of each backend into FILE.{isal,zlib}.*
both() {
	set +e
	"$EX" "$1" >"$T/out.isal" 2>"$T/err.isal"
	echo $? >"$T/rc.isal"
	TRIAGE_ZLIB=1 "$EX" "$1" >"$T/out.zlib" 2>"$T/err.zlib"
	echo $? >"$T/rc.zlib"
	set -e
}

# the records of FILE with the path-dependent trace/input records left out
records() {
	grep -v '"type":"\(input\|trace\)"' "$1"
}

t_whole() {
	"$EX" "$T/plain.json" >"$T/plain.jsonl"
	for f in clean multi; do
		both "$T/$f.json.gz"
		eq 0 "$(cat "$T/rc.isal")" "isal exit"
		eq 0 "$(cat "$T/rc.zlib")" "zlib exit"
		same "$T/out.zlib" "$T/out.isal"
		records "$T/plain.jsonl" >"$T/want"
		records "$T/out.isal" >"$T/got"
		same "$T/want" "$T/got"
	done
	# a file of two members really has a second gzip header
	eq 2 "$(od -An -tx1 -v "$T/multi.json.gz" | tr -d ' \n' | grep -o 1f8b08 | wc -l | tr -d ' ')"
}
check "whole and multi-member files: the same records as the plain text" t_whole

t_header_fields() {
	# FEXTRA, FNAME and FCOMMENT after the fixed header (flags 0x1c)
	{
		printf '\037\213\010\034\000\000\000\000\000\003'
		printf '\004\000ABCD'
		printf 'trace.json\000'
		printf 'a comment\000'
		tail -c +11 "$T/clean.json.gz"
	} >"$T/fields.json.gz"
	both "$T/fields.json.gz"
	eq 0 "$(cat "$T/rc.isal")"
	eq 0 "$(cat "$T/rc.zlib")"
	records "$T/out.isal" >"$T/got"
	records "$T/plain.jsonl" >"$T/want"
	same "$T/want" "$T/got"
	same "$T/out.zlib" "$T/out.isal"
}
check "optional gzip header fields are skipped by both" t_header_fields

t_prefixes() {
	size=$(wc -c <"$T/clean.json.gz")
	mkdir -p "$T/pre"
	i=0
	n=0
	while [ "$i" -lt "$size" ]; do
		head -c "$i" "$T/clean.json.gz" >"$T/pre/p$(printf %05d "$i").json.gz"
		n=$((n + 1))
		# every byte near the ends, a sample in between
		if [ "$i" -lt 40 ] || [ "$i" -ge $((size - 40)) ]; then
			i=$((i + 1))
		elif [ $((i + 97)) -gt $((size - 40)) ]; then
			i=$((size - 40))
		else
			i=$((i + 97))
		fi
	done
	[ "$n" -ge 80 ] || { echo "only $n prefixes tried"; return 1; }
	# one process per backend over every prefix (a tool per file and backend
	# was most of the script's time): the same records, the same message for
	# each file, in order, and each file refused with a message of its own
	set +e
	(cd "$T/pre" && "$EX" -- *) >"$T/out.isal" 2>"$T/err.isal"
	echo $? >"$T/rc.isal"
	(cd "$T/pre" && TRIAGE_ZLIB=1 "$EX" -- *) >"$T/out.zlib" 2>"$T/err.zlib"
	echo $? >"$T/rc.zlib"
	set -e
	same "$T/rc.zlib" "$T/rc.isal"
	same "$T/err.zlib" "$T/err.isal"
	same "$T/out.zlib" "$T/out.isal"
	[ "$(cat "$T/rc.isal")" -ne 0 ]
	eq "$n" "$(grep -c "^trace-extract: '[^']*/p[0-9]*\.json\.gz': " "$T/err.isal")" "files refused"
	eq "$n" "$(grep -o "^trace-extract: '[^']*/p[0-9]*\.json\.gz': " "$T/err.isal" | sort -u |
	    wc -l | tr -d ' ')" "one message each"
}
check "every sampled prefix: the same message and exit status from both" t_prefixes

t_corrupt() {
	size=$(wc -c <"$T/clean.json.gz")
	for at in 30 200 600 $((size - 200)) $((size - 6)); do
		{ head -c "$at" "$T/clean.json.gz"; printf 'XXXXXXXX'
		  tail -c $((size - at - 8)) "$T/clean.json.gz"; } >"$T/bad.json.gz"
		both "$T/bad.json.gz"
		eq 1 "$(cat "$T/rc.isal")" "isal exit at $at"
		eq 1 "$(cat "$T/rc.zlib")" "zlib exit at $at"
		has "$T/err.isal" "'$T/bad.json.gz': \\(corrupt gzip data\\|truncated gzip stream\\|invalid JSON\\)"
		has "$T/err.zlib" "'$T/bad.json.gz': \\(corrupt gzip data\\|truncated gzip stream\\|invalid JSON\\)"
	done
	# a damaged CRC-32 in the trailer
	{ head -c $((size - 8)) "$T/clean.json.gz"; printf 'ABCD'; tail -c 4 "$T/clean.json.gz"; } \
	    >"$T/crc.json.gz"
	both "$T/crc.json.gz"
	eq 1 "$(cat "$T/rc.isal")"
	eq 1 "$(cat "$T/rc.zlib")"
	has "$T/err.isal" "corrupt gzip data: incorrect data"
	has "$T/err.zlib" "corrupt gzip data: incorrect data check"
}
check "corrupt data and a bad checksum: exit 1 from both" t_corrupt

t_padding_garbage() {
	{ cat "$T/multi.json.gz"; head -c 3000 /dev/zero; } >"$T/pad.json.gz"
	both "$T/pad.json.gz"
	eq 0 "$(cat "$T/rc.isal")"
	same "$T/out.zlib" "$T/out.isal"
	{ cat "$T/multi.json.gz"; printf 'junk'; } >"$T/junk.json.gz"
	both "$T/junk.json.gz"
	eq 1 "$(cat "$T/rc.isal")"
	same "$T/err.zlib" "$T/err.isal"
	has "$T/err.isal" "trailing garbage after gzip data at compressed byte $(wc -c <"$T/multi.json.gz")"
}
check "zero padding accepted, trailing garbage refused, by both" t_padding_garbage

done_testing
