#!/bin/sh
# Text from a trace, its server args or its file names written where it
# goes (issue 27): markdown that stays text (no forged blocks, HTML, links
# or images, no row split by a CR), HTML whose embedded chart data no name
# can end, CSV/TSV cells no spreadsheet runs as formulas, no control
# character raw in any text format or on stderr, and names that differ
# only after a NUL kept apart.
. "$(dirname "$0")/lib.sh"
GEN=$TESTDIR/gen-trace
RENDER=$BIN/triage-render
ESC=$(printf '\033')

need() {
	command -v "$1" >/dev/null 2>&1 && return 0
	echo "$1 not found: scripts/install-deps installs it"
	return 1
}

# The hostile trace: kernels named with HTML, a comment that would swallow
# a page, an ESC sequence, a formula, NULs; CPU ops with an image, a CR
# and a cell separator, a formula; a GPU process whose string pid holds a
# forged banner, and a lighter second one (so the banner names the first);
# server args whose model_path forges blocks.
"$GEN" -s both -n 3 -o "$T/base.json"
mkdir -p "$T/prof"
jq '.traceEvents |= (map(
    if .cat == "kernel" and (.name | test("rmsnorm")) then
        .name = "<!--<script>alert(1)</script>\u001b]0;pwn\u0007"
    elif .cat == "kernel" and (.name | test("gemm")) then
        .name = "=HYPERLINK(\"http://e/x\",\"y\")<img src=x onerror=alert(1)>"
    elif .cat == "kernel" and (.name | test("BatchDecode")) then
        .name = (if .args.correlation % 2 == 0 then "abc\u0000def" else "abc\u0000xyz" end)
    elif .cat == "cpu_op" and .name == "aten::mm" then .name = "![x](http://e/i.png)\r| forged | cell | www.e.example \u202eevil"
    elif .cat == "cpu_op" and (.name | test("decode")) then .name = "@SUM(A1:A9)"
    else . end
    | if .pid == 0 then .pid = "1\n\n> **Trace health: ok.** forged" else . end)
    + [(map(select(.cat == "kernel"))[0] | .dur = 1)])' \
    "$T/base.json" >"$T/prof/t.json"
printf '{"model_path": "org/M\\n\\n> **Trace health: ok.** forged\\n# Forged <img src=x onerror=alert(2)>"}' \
    >"$T/prof/server_args.json"
"$TRIAGE" -q --format jsonl --input "$T/prof" >"$T/r.jsonl"

t_markdown() {
	need cmark-gfm
	"$RENDER" --names full <"$T/r.jsonl" >"$T/r.md" 2>"$T/r.err"
	[ ! -s "$T/r.err" ]
	# unsafe mode lets raw HTML through: none may be there
	cmark-gfm --unsafe -e table -e autolink "$T/r.md" >"$T/r.html"
	eq 1 "$(grep -c '<h1>' "$T/r.html")" "headings of level 1"
	eq 1 "$(grep -c '<blockquote>' "$T/r.html")" "quotes (the real banner alone)"
	hasnt "$T/r.html" '<img'
	hasnt "$T/r.html" '<script'
	hasnt "$T/r.html" '<!--'
	# GitHub's autolinks: no "http://" nor "www." in a name becomes a link
	hasnt "$T/r.html" '<a href'
	hasnt "$T/r.md" '^> \*\*Trace health: ok'
	hasnt "$T/r.md" '^# Forged'
	# the pid's text is in the merged_devices check's detail, in its cell (the banner
	# names the check in its own words, issue 31)
	has "$T/r.md" '^| t.json | merged_devices | warn | .*analyzing pid 1<br><br>> \\\*\\\*Trace health: ok\.\\\*\\\* forged'
	# the image and the CR stay in their cell: every kernel row has 9 cells (two of them launch delays)
	sed -n '/^## Kernels/,/^## Overlap/p' "$T/r.md" | grep '^| [^-K]' >"$T/rows"
	eq 7 "$(wc -l <"$T/rows" | tr -d ' ')" "kernel rows"
	awk -F' [|] ' '{ if (NF != 9) { print "row of " NF " cells: " $0; bad = 1 } } END { exit bad }' \
	    "$T/rows"
	has "$T/rows" '| !\\\[x\\\](http\\://e/i.png)<br>\\| forged \\| cell \\| www\\.e.example \\u202eevil |$'
	# a bidirectional override reorders no cell: shown as its escape
	eq 0 "$(grep -c "$(printf '\342\200\256')" "$T/r.md")" "raw U+202E"
	# two names that differ after a NUL are two rows
	has "$T/rows" '^| abc\\x00def | '
	has "$T/rows" '^| abc\\x00xyz | '
	eq 0 "$(grep -c "$ESC" "$T/r.md")" "raw ESC characters"
	has "$T/r.md" '\\x1b\\\]0;pwn\\x07'
}
check "markdown: names, model ids and pids stay text in every cell and line" t_markdown

# GitHub's mention filter (html-pipeline's MentionFilter, and its team
# form): on the rendered page's text outside pre, code and a, an "@" at
# the start or after a non-word character, then a name; prints each one.
mentions() {
	python3 - "$1" <<'PY'
import html.parser, re, sys
pat = re.compile(r"(?:^|\W)@([a-z0-9][a-z0-9-]*)(?:/[a-z0-9][a-z0-9_-]*)?", re.I)
class P(html.parser.HTMLParser):
    skip = 0
    def handle_starttag(self, tag, a):
        self.skip += tag in ("pre", "code", "a")
    def handle_endtag(self, tag):
        self.skip -= tag in ("pre", "code", "a")
    def handle_data(self, d):
        if not self.skip:
            for m in pat.finditer(d):
                print(m.group(0).strip())
P().feed(open(sys.argv[1], encoding="utf-8").read())
PY
}

t_mentions() {
	need cmark-gfm
	# a name, a site, a CPU op and the model with "@user", "@org/team", an e-mail
	jq -c 'if .type == "kernel_row" and .id == "kernel-1" then
	    .kernel = "gemm for @octocat, x@y.com" | .entry.kernel = .kernel |
	    .location = "@org/team/m.py:1 f" | .cpu_op = "@torch.jit"
	    elif .type == "input" then .model = "@hf-user/Model" else . end' "$T/r.jsonl" |
	    "$RENDER" --names full >"$T/m.md"
	cmark-gfm --unsafe -e table -e autolink "$T/m.md" >"$T/m.html"
	mentions "$T/m.html" >"$T/m.found"
	eq "" "$(cat "$T/m.found")" "mentions on the rendered page"
	hasnt "$T/m.html" 'mailto:'
	# the visible text is the name's: the zero-width space shows as nothing
	zw=$(printf '\342\200\213')
	sed "s/$zw//g" "$T/m.html" >"$T/m.visible"
	has "$T/m.visible" '<td>gemm for @octocat, x@y.com</td>'
	has "$T/m.visible" '<td>@org/team/m.py:1 f</td>'
	has "$T/m.visible" '<td>@torch.jit</td>'
	has "$T/m.visible" '@hf-user/Model'
	has "$T/m.md" '| @&#8203;torch\.jit |$'
	# the checker finds what it should: the same text unescaped is four mentions
	printf '<p>@octocat x@y.com @org/team (@torch.jit <code>@no</code></p>' >"$T/raw.html"
	eq "@octocat @org/team (@torch" "$(mentions "$T/raw.html" | paste -sd' ')" "checker"
}
check "markdown: @user and @org/team in names notify no one on GitHub" t_mentions

t_nul_json() {
	# the records and the JSON document keep the NUL, escaped
	eq 2 "$(jq -s '[.[] | select(.type == "kernel_row" and .stage == "decode" and
	    (.kernel | startswith("abc\u0000")))] | length' "$T/r.jsonl")" "decode rows of abc NUL"
	"$RENDER" --format json <"$T/r.jsonl" >"$T/r.json"
	grep -q 'abc\\u0000def' "$T/r.json"
	grep -q 'abc\\u0000xyz' "$T/r.json"
}
check "a NUL in a name is kept, as \\u0000 in JSON" t_nul_json

t_csv() {
	"$RENDER" --format csv --table kernel --names full <"$T/r.jsonl" | tr -d '\r' >"$T/k.csv"
	# formulas neutralised with a leading ', numbers and the "-" placeholder kept
	# (the whole name, then its short form: the same under --names full)
	has "$T/k.csv" "^extend,\"'=HYPERLINK(\"\"http://e/x\"\",\"\"y\"\")<img src=x onerror=alert(1)>\",\"'=HYPERLINK(\"\"http://e/x\"\",\"\"y\"\")<img src=x onerror=alert(1)>\",other,240,"
	has "$T/k.csv" ",'@SUM(A1:A9)$"
	hasnt "$T/k.csv" ',=\|,@\|,"=\|,"@'
	eq 0 "$(grep -c "$ESC" "$T/k.csv")" "raw ESC characters"
	has "$T/k.csv" '\\x1b\]0;pwn\\x07'
	eq 0 "$(grep -c "$(printf '\342\200\256')" "$T/k.csv")" "raw U+202E"
	has "$T/k.csv" 'www.e.example \\u202eevil'
	"$RENDER" --format tsv --table kernel --names full <"$T/r.jsonl" >"$T/k.tsv"
	has "$T/k.tsv" "$(printf "^decode\t'=HYPERLINK")"
	eq 0 "$(grep -c "$ESC" "$T/k.tsv")" "raw ESC characters in TSV"
	# --raw-cells: the cells as they are (control characters still escaped)
	"$RENDER" --format csv --table kernel --names full --raw-cells <"$T/r.jsonl" |
	    tr -d '\r' >"$T/raw.csv"
	has "$T/raw.csv" '^extend,"=HYPERLINK('
	has "$T/raw.csv" ',@SUM(A1:A9)$'
	eq 0 "$(grep -c "$ESC" "$T/raw.csv")" "raw ESC characters with --raw-cells"
	# the driver passes --raw-cells on
	"$TRIAGE" -q --format csv --table kernel --raw-cells --input "$T/prof" | tr -d '\r' >"$T/d.csv"
	has "$T/d.csv" ',@SUM(A1:A9)$'
}
check "csv/tsv: formula cells get a leading ', numbers stay numbers, --raw-cells" t_csv

t_compat() {
	# the reference's layout and escaping, but no raw control character
	"$TRIAGE" -q --compat reference --input "$T/prof" >"$T/c.md"
	eq 0 "$(grep -c "$ESC" "$T/c.md")" "raw ESC characters"
	"$TRIAGE" -q --compat reference --format csv --input "$T/prof" | tr -d '\r' >"$T/c.csv"
	has "$T/c.csv" ",'@SUM(A1:A9)"
	eq 0 "$(grep -c "$ESC" "$T/c.csv")" "raw ESC characters in CSV"
}
check "--compat reference: no control character raw, formulas neutralised" t_compat

t_stderr() {
	# a path and a pid with ESC and a line break: one line each, escaped
	mkdir -p "$T/e"
	cp "$T/prof/t.json" "$T/e/$(printf 'x\033]0;title\007y').json"
	"$TRIAGE" --input "$T/e" >/dev/null 2>"$T/e.err"
	eq 0 "$(grep -c "$ESC" "$T/e.err")" "raw ESC characters on stderr"
	has "$T/e.err" 'x\\x1b\]0;title\\x07y.json'
	has "$T/e.err" 'analyzing pid 1\\x0a\\x0a> \*\*Trace health: ok\.\*\* forged, the others'
	hasnt "$T/e.err" '^> '
}
check "stderr: control characters and line breaks of names and pids escaped" t_stderr

t_html() {
	need chromium
	"$RENDER" --format html <"$T/r.jsonl" >"$T/r.html"
	# the title is text: a line break is a space, never a literal <br>
	title=$(sed -n 's:.*<title>\(.*\)</title>.*:\1:p' "$T/r.html")
	case $title in *'<br>'*|*'<'*) echo "markup in the title: $title"; return 1 ;; esac
	has "$T/r.html" '<title>M  &gt; \*\*Trace health: ok\.\*\* forged # Forged &lt;img'
	# the chart data: no < > & or a line separator raw inside the script element
	sed -n 's:.*<script type="application/json" id="chart-data">\(.*\)</script>.*:\1:p' \
	    "$T/r.html" >"$T/data"
	[ -s "$T/data" ]
	hasnt "$T/data" '[<>&]'
	has "$T/data" '\\u003c!--\\u003cscript\\u003e'
	chromium --headless --no-sandbox --disable-gpu --user-data-dir="$T/chr" \
	    --dump-dom "file://$T/r.html" >"$T/dom.html" 2>"$T/chr.err"
	has "$T/dom.html" '<body data-ready="1" data-errors="0"'
	# every chart drawn: a bar per kernel row shown (at most 10 a stage)
	want=$(jq -s '[group_by(.stage)[] | map(select(.type == "kernel_row" and .shown)) |
	    length | if . > 10 then 10 else . end] | add' "$T/r.jsonl")
	eq "$want" "$(grep -o 'class="bar"' "$T/dom.html" | wc -l | tr -d ' ')" "top-kernel bars"
	hasnt "$T/dom.html" '<img'
	has "$T/dom.html" '&lt;img src=x onerror=alert(1)&gt;'
}
check "html: names cannot end the chart data or add markup; the title is text" t_html

done_testing
