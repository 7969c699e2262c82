#!/bin/sh
# Write the fuzz seed corpora: small generated traces (clean and with each
# defect) for the scanner, single events for the extractor, record streams
# (trace-extract and trace-stage output) for the record reader, directory
# trees for discovery, server args, side files (a pattern catalog, a
# mapping's site records) and server replies for the capture.
# usage: tests/fuzz/seeds.sh FUZZDIR BINDIR
set -eu
out=$1
bin=$2
gen=$(dirname "$0")/../gen-trace
mkdir -p "$out/seeds-scan" "$out/seeds-extract" "$out/seeds-records" "$out/seeds-discover" \
    "$out/seeds-serverargs" "$out/seeds-sidefiles" "$out/seeds-capture" "$out/seeds-kname" \
    "$out/seeds-roofline"
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
"$bin/trace-stage" -q "$out/rec.jsonl" >"$out/staged.jsonl"
cat "$out/rec.jsonl" "$out/staged.jsonl" | split -l 8 - "$out/seeds-records/r"
# side files: the pattern catalog (mode byte "0"), a mapping's site records ("1")
{ printf 0; cat "$(dirname "$0")/../../data/fuse-patterns.jsonl"; } >"$out/seeds-sidefiles/catalog"
{ printf 1; "$bin/kernel-map" -q --sites-only "$out/staged.jsonl"; } >"$out/seeds-sidefiles/sites"
rm -f "$out/rec.json" "$out/rec.jsonl" "$out/staged.jsonl"
# kernel names: the real ones of the name fixture, in groups of 16
cut -f1 "$(dirname "$0")/../fixtures/common/kernel-names.tsv" | split -l 16 - "$out/seeds-kname/k"
# kernel-roofline: the GPU table (mode byte "0"), and op shapes ("1": op, dims, types, concrete)
{ printf 0; cat "$(dirname "$0")/../../data/gpu-specs.jsonl"; } >"$out/seeds-roofline/table"
printf '1aten::addmm\n[[512],[128,256],[256,512],[],[]]\n["c10::BFloat16","c10::BFloat16","c10::BFloat16","Scalar","Scalar"]\n["","","","1","1"]' \
    >"$out/seeds-roofline/gemm"
printf '1aten::_flash_attention_forward\n[[500,8,64],[500,8,64],[500,8,64],[5],[5],[],[],[],[]]\n["c10::BFloat16","c10::BFloat16","c10::BFloat16","int","int","Scalar","Scalar","Scalar","Scalar"]\n["","","","","","128","128","0.","True"]' \
    >"$out/seeds-roofline/varlen"
printf '1aten::convolution_backward\n[[10,512,7,7],[10,512,7,7],[512,512,3,3],[],[],[],[],[],[],[],[]]\n["float","float","float","ScalarList","ScalarList","ScalarList","ScalarList","Scalar","ScalarList","Scalar","ScalarList"]\n["","","","[0]","[1, 1]","[1, 1]","[1, 1]","False","[0, 0]","1","[True, True, False]"]' \
    >"$out/seeds-roofline/conv"
# trees: a first byte for the rank mode, then one entry a line (fuzz-discover.c)
small=$("$gen" -n 1 -l 1 | tr -d '\n')
printf '%s\n' 0 "d prof" "f t.trace.json $small" "f server_args.json {\"model_path\": \"m\"}" \
    >"$out/seeds-discover/flat"
printf '%s\n' 1 "d prof" "d prefill" "f a-TP-0.trace.json $small" "u" "d decode" \
    "f a-TP-1.trace.json $small" "l up .." "u" "l latest ." >"$out/seeds-discover/stages"
printf '%s\n' 2 "d a" "d b" "d c" "f merged-x.json [{\"ph\": \"X\"}]" "f rank-3.json $small" \
    >"$out/seeds-discover/deep"
# server args
printf '{"model_path": "org/Model-7B", "tp_size": 2, "attention_backend": "fa3"}' \
    >"$out/seeds-serverargs/plain"
printf '{"model_p\\u0061th": "vllm/x", "a": [1, 2.5e3, null, true, {"b": NaN}]}' \
    >"$out/seeds-serverargs/escaped"
# replies: the --url line, then (2-byte status, 2-byte length, body) each
reply() {	# STATUS BODY
	printf "\\$(printf %03o $(($1 >> 8)))\\$(printf %03o $(($1 & 255)))"
	printf "\\$(printf %03o $((${#2} >> 8)))\\$(printf %03o $((${#2} & 255)))"
	printf '%s' "$2"
}
{ echo "http://user:pw@127.0.0.1:30000/?k=v#f"; reply 200 '{"model_path": "m", "tokenizer_path": "t"}'
  reply 200 '{"text": "ok"}'; reply 200 '{"text": "ok"}'
  reply 200 '{"object": "list", "data": [{"id": "fake-model"}]}'
  reply 500 '{"error": "no"}'; reply 200 '{"choices": []}'; reply 302 'moved'; } \
    >"$out/seeds-capture/sglang"
{ echo "https://h:8000"; reply 404 'nf'; reply 404 'nf'
  reply 200 '{"object": "list", "data": [{"id": "m"}]}'; reply 200 '{"choices": [{"text": "x"}]}'; } \
    >"$out/seeds-capture/vllm"
