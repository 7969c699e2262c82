#!/bin/sh
# triage-render's CSV and TSV cells, one rule each (triage-render(1)):
# CSV quotes as RFC 4180 says and keeps a cell's tabs and line breaks (LF,
# CR, CR LF) as they are inside the quotes; TSV, which has no quoting,
# shows a tab, LF and CR inside a cell as \x09, \x0a and \x0d, so that a
# line is a row and a tab ends a cell.  The formula guard looks at the
# cell as written: a CSV cell's leading tab gets a "'", TSV's escaped one
# needs none.  A list column's values (arrays in JSON) are joined with
# "; ".  The same in --compat reference.
. "$(dirname "$0")/lib.sh"
GEN=$TESTDIR/gen-trace
RENDER=$BIN/triage-render
TAB=$(printf '\t')

"$GEN" -s both -o "$T/base.json"
"$TRIAGE" -q --format jsonl --input "$T/base.json" >"$T/base.jsonl"
# the extend stage's two first rows: names with every line break, tabs,
# a comma and quotes; a list of two sites
jq -c 'if .type == "kernel_row" and .id == "kernel-1" then
        .kernel = "two\nlines\r\nand\rcr" | .entry.kernel = .kernel |
        .location = "site one<br>site two" | .cpu_op = "\tlead tab"
    elif .type == "kernel_row" and .id == "kernel-2" then
        .kernel = "\t=SUM(1)" | .entry.kernel = .kernel |
        .cpu_op = "tab\tinside, \"quoted\""
    else . end' "$T/base.jsonl" >"$T/r.jsonl"

# csvcells FILE KEY...: the first two extend rows' cells of those columns,
# read by Python's csv module, as JSON (every character visible)
csvcells() {
	python3 - "$@" <<'PY'
import csv, json, sys
with open(sys.argv[1], newline="") as f:
    rows = [r for r in csv.DictReader(f) if r["stage"] == "extend"]
for r in rows[:2]:
    print(json.dumps([r[k] for k in sys.argv[2:]]))
PY
}

t_csv() {
	"$RENDER" --names full --format csv --table kernel <"$T/r.jsonl" >"$T/k.csv"
	csvcells "$T/k.csv" kernel location cpu_op >"$T/got"
	cat >"$T/want" <<'EOF'
["two\nlines\r\nand\rcr", "site one; site two", "'\tlead tab"]
["'\t=SUM(1)", "python/sglang/srt/layers/attention/flashinfer_backend.py:200 forward", "tab\tinside, \"quoted\""]
EOF
	same "$T/want" "$T/got"
	# the quoted cells as written: line breaks raw, quotes doubled
	has "$T/k.csv" "^extend,\"two$"
	has "$T/k.csv" "$(printf '^lines\r$')"
	has "$T/k.csv" "$(printf '^and\rcr",')"
	has "$T/k.csv" "$(printf ',"tab\tinside, ""quoted"""\r$')"
	hasnt "$T/k.csv" '\\x0'
}
check "csv: RFC 4180, a cell's tabs and line breaks (LF, CR, CR LF) kept inside its quotes" t_csv

t_tsv() {
	"$RENDER" --names full --format tsv --table kernel <"$T/r.jsonl" >"$T/k.tsv"
	# every line a row of 16 cells
	eq "" "$(awk -F'\t' 'NF != 16 { print NR ": " NF }' "$T/k.tsv")" "rows of another width"
	eq 7 "$(wc -l <"$T/k.tsv" | tr -d ' ')" "lines: the header and six rows"
	# kernel, kernel_short, location, cpu_op; no quoting, no "'" before an escaped tab
	sed -n '2,3p' "$T/k.tsv" | cut -f 2,3,15,16 >"$T/got"
	printf '%s\t%s\t%s\t%s\n' 'two\x0alines\x0d\x0aand\x0dcr' 'two\x0alines\x0d\x0aand\x0dcr' \
	    'site one; site two' '\x09lead tab' >"$T/want"
	printf '%s\t%s\t%s\t%s\n' '\x09=SUM(1)' '\x09=SUM(1)' \
	    'python/sglang/srt/layers/attention/flashinfer_backend.py:200 forward' \
	    'tab\x09inside, "quoted"' >>"$T/want"
	same "$T/want" "$T/got"
}
check "tsv: a cell's tab, LF and CR as \\x09, \\x0a, \\x0d; no quoting; the guard on what is written" t_tsv

t_compat() {
	"$RENDER" --compat reference --format csv <"$T/r.jsonl" >"$T/c.csv"
	csvcells "$T/c.csv" c1 c6 c7 >"$T/got"
	cat >"$T/want" <<'EOF'
["two\nlines\r\nand\rcr", "site one<br>site two", "'\tlead tab"]
["'\t=SUM(1)", "python/sglang/srt/layers/attention/flashinfer_backend.py:200 forward", "tab\tinside, \"quoted\""]
EOF
	same "$T/want" "$T/got"
	"$RENDER" --compat reference --format tsv <"$T/r.jsonl" >"$T/c.tsv"
	eq "" "$(awk -F'\t' 'NF != 10 { print NR ": " NF }' "$T/c.tsv")" "rows of another width"
	grep '^kernel	extend	' "$T/c.tsv" | sed -n '1,2p' | cut -f 3,8,9 >"$T/got"
	printf '%s\t%s\t%s\n' 'two\x0alines\x0d\x0aand\x0dcr' 'site one<br>site two' '\x09lead tab' \
	    >"$T/want"
	printf '%s\t%s\t%s\n' '\x09=SUM(1)' \
	    'python/sglang/srt/layers/attention/flashinfer_backend.py:200 forward' \
	    'tab\x09inside, "quoted"' >>"$T/want"
	same "$T/want" "$T/got"
}
check "--compat reference: the same rules for its CSV and TSV" t_compat

done_testing
