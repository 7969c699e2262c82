#!/bin/sh
# Write the fuzz seed corpora: small generated traces (clean and with each
# defect) for the scanner, single events for the extractor, and record
# streams (trace-extract and trace-stage output) for the record reader.
# usage: tests/fuzz/seeds.sh FUZZDIR BINDIR
set -eu
out=$1
bin=$2
gen=$(dirname "$0")/../gen-trace
mkdir -p "$out/seeds-scan" "$out/seeds-extract" "$out/seeds-records"
i=0
for opts in "" "--array" "-z" "--graph -s both" "--streams 2 -f vllm" \
    "-d ctrl" "-d utf8" "-d surrogate" "-d nan" "-d inf" "-d strnum" "-d bom" \
    "-d trailing-comma" "-d no-close" "-d nodur" "-d multimember" "-d truncate=900" \
    "-d interleave" "-d empty" "-d notrailer"; do
	i=$((i + 1))
	# shellcheck disable=SC2086
	"$gen" -n 1 -l 1 $opts >"$out/seeds-scan/s$i"
done
# single events: the lines of one trace that hold an object
"$gen" -n 1 -l 1 --streams 2 --graph -d strnum -d nan -d nodur | sed -n 's/^  \({.*}\),\{0,1\}$/\1/p' |
    awk -v d="$out/seeds-extract" '{ f = d "/e" NR; print > f; close(f) }'
"$gen" -n 1 -l 1 --streams 2 -s both | sed -n 's/^  \({.*}\),\{0,1\}$/\1/p' |
    awk -v d="$out/seeds-extract" '{ f = d "/f" NR; print > f; close(f) }'
# record streams, cut into pieces of 8 lines
"$gen" -n 1 -l 1 --streams 2 -s both >"$out/rec.json"
"$bin/trace-extract" -q "$out/rec.json" >"$out/rec.jsonl"
"$bin/trace-stage" -q "$out/rec.jsonl" >>"$out/rec.jsonl"
split -l 8 "$out/rec.jsonl" "$out/seeds-records/r"
rm -f "$out/rec.json" "$out/rec.jsonl"
