#!/bin/sh
# The HTML report of real traces, of a comparison of two, of a bundle and
# of a rank set, in headless Chromium at 1400 px: the page's script ran
# (data-ready), nothing went to the console or to window.onerror, the page
# is no wider than the window (tables fit or scroll inside their section),
# every chart has its title, axis and legend, and each stage's stacked bar
# has one segment per kernel category of the stage (shares of the kernel
# time, the headline's base: idle is the span's, in the GPU-time table),
# as counted with jq from the same run's records.
# Usage: sh tests/corpus-html.sh SHARED_DIR
shared=${1:-../shared}
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/corpus-html.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() {	# ok WHAT EXPECTED ACTUAL
	if [ "$2" = "$3" ]; then
		pass=$((pass + 1))
		echo "ok - $1"
	else
		fail=$((fail + 1))
		echo "not ok - $1: expected '$2', got '$3'"
	fi
}
command -v chromium >/dev/null 2>&1 || { echo "not ok - chromium not installed (scripts/install-deps)"; exit 1; }

# load NAME: the DOM of $tmp/NAME.html after its script ran, and the console
load() {
	chromium --headless --no-sandbox --disable-gpu --user-data-dir="$tmp/profile" \
	    --enable-logging=stderr --v=0 --window-size=1400,1000 --dump-dom "file://$tmp/$1.html" \
	    >"$tmp/$1.dom" 2>"$tmp/$1.log"
	ok "$1: the page's script ran without errors, no wider than 1400 px" \
	    '<body data-ready="1" data-errors="0" data-overflow="0">' \
	    "$(grep -o '<body[^>]*>' "$tmp/$1.dom")"
	ok "$1: nothing on the console" 0 "$(grep -c 'CONSOLE' "$tmp/$1.log")"
	_f=$(grep -o '<figure class="chart"' "$tmp/$1.dom" | wc -l | tr -d ' ')
	ok "$1: every chart drawn with its title, axis and legend" "$_f $_f $_f" \
	    "$(grep -o 'class="ctitle"' "$tmp/$1.dom" | wc -l | tr -d ' ') $(grep -o 'class="axis"' \
	    "$tmp/$1.dom" | wc -l | tr -d ' ') $(grep -o 'class="legend"' "$tmp/$1.dom" | wc -l | tr -d ' ')"
}

for n in tl_sglang_qwen3_8b_prefilldecode tl_vllm_b200_eager_tp8 hta_mi250_minitoy_rocm62 \
    kineto_docs_after_fix; do
	f=$(ls "$shared/corpus/traces/$n".json* | head -n 1)
	"$top/scripts/triage" -q --format jsonl --input "$f" >"$tmp/$n.jsonl"
	"$top/build/bin/triage-render" -q --format html <"$tmp/$n.jsonl" >"$tmp/$n.html"
	load "$n"
	# per stage (report order): distinct categories of its kernel rows (the
	# stack is of the kernel time, the headline's base; idle is the span's)
	want=$(jq -rs '
	    map(select(.type == "kernel_row")) | group_by(.stage)
	    | map(map(.category) | unique | length)
	    | add' "$tmp/$n.jsonl")
	ok "$n: one segment per category, every stage" "$want" \
	    "$(grep -o 'class="seg"' "$tmp/$n.dom" | wc -l | tr -d ' ')"
done
# every bar of a heaviest-kernels chart in its category's legend colour
# (a category without a colour of its own once took one by position)
ok "tl_vllm_b200_eager_tp8: the heaviest kernels' bars in their legend's colours" ok \
    "$(python3 - "$tmp/tl_vllm_b200_eager_tp8.dom" <<'PY'
import re, sys
dom = open(sys.argv[1]).read()
bad = []
for fig in re.findall(r'<figure class="chart".*?</figure>', dom, re.S):
    if 'heaviest kernels' not in fig:
        continue
    fills = {tuple(int(h[i:i + 2], 16) for i in (1, 3, 5))
             for h in re.findall(r'<rect[^>]*fill="(#[0-9a-f]{6})"[^>]*class="bar"', fig)}
    legend = {tuple(map(int, m)) for m in
              re.findall(r'background: rgb\((\d+), (\d+), (\d+)\)', fig)}
    if not fills or not fills <= legend:
        bad.append(sorted(fills - legend))
print("ok" if not bad else bad)
PY
)"
# a bar label wider than its margin (B200's bmm_MxE4m3_... names) is
# narrowed to fit, not cut at the chart's left edge
ok "tl_vllm_b200_eager_tp8: the long kernel labels narrowed to their margin" 1 \
    "$(grep -o 'lengthAdjust="spacingAndGlyphs"' "$tmp/tl_vllm_b200_eager_tp8.dom" | wc -l |
    awk '{print ($1 > 0)}')"

# a comparison: the decode trace against the prefill+decode one, as wholes
b=$(ls "$shared/corpus/traces/tl_sglang_qwen3_8b_decode".json* | head -n 1)
c=$(ls "$shared/corpus/traces/tl_sglang_qwen3_8b_prefilldecode".json* | head -n 1)
"$top/scripts/triage" -q --format html --whole-run --baseline "$b" --input "$c" >"$tmp/diff.html"
rc=$?
case $rc in 0|5) ok "diff: triage --baseline exit status" ok ok ;;
*) ok "diff: triage --baseline exit status" "0 or 5" "$rc" ;; esac
load diff
ok "diff: the kernel diff table is there" 1 "$(grep -c 'data-table="diff"' "$tmp/diff.dom" |
    awk '{print ($1 > 0)}')"

# a bundle of the four runs: the summary table and its bars
set --
for n in tl_sglang_qwen3_8b_prefilldecode tl_vllm_b200_eager_tp8 hta_mi250_minitoy_rocm62 \
    kineto_docs_after_fix; do
	set -- "$@" "$(ls "$shared/corpus/traces/$n".json* | head -n 1)"
done
"$top/scripts/triage" -q --bundle --format html --output "$tmp/bundle.html" "$@"
load bundle
ok "bundle: the summary table" 1 "$(grep -c 'data-table="runs"' "$tmp/bundle.dom" |
    awk '{print ($1 > 0)}')"
ok "bundle: a bar per run and stage" "$(grep -o '"cls":"ubar"' "$tmp/bundle.html" | wc -l |
    awk '{print ($1 == 1)}')" "$(grep -o 'class="ubar"' "$tmp/bundle.dom" | wc -l | awk '{print ($1 >= 4)}')"

# the rank set: the ranks' chart, a group of three bars per rank and stage
if [ -d "$shared/ranks" ]; then
	r=$(ls -d "$shared"/ranks/*/ | head -n 1)
	"$top/scripts/triage" -q --all-ranks -j 2 --format jsonl --input "$r" >"$tmp/ranks.jsonl"
	"$top/build/bin/triage-render" -q --format html <"$tmp/ranks.jsonl" >"$tmp/ranks.html"
	load ranks
	ok "ranks: busy, communication and wait per rank and stage" \
	    "$(jq -s '[.[] | select(.type == "rank_row")] | length * 3' "$tmp/ranks.jsonl")" \
	    "$(grep -o 'class="rbar"' "$tmp/ranks.dom" | wc -l | tr -d ' ')"
fi

echo "corpus html: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
