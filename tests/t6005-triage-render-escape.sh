#!/bin/sh
# triage-render: the eager-kernel table of a graph-mode stage (graph_escape
# records) is cut like the kernel table: rows at or above the 1.0% bar, at
# most as many as the kernel table shows when its row limit bound, and a
# line for the rest (a real A100 trace only 23% in graphs listed 78 eager
# kernels, most at 0.0%).  The records keep every row.
. "$(dirname "$0")/lib.sh"

RENDER=$BIN/triage-render

# rows N: N graph_escape rows of stage decode, shares 40, 20, 10, 5, 2.5,
# ... percent of 1000 us, and N kernel rows of the same shares; the first
# LIMIT kernel rows shown (0: every row at or above 1%)
rows() {
	awk -v n="$1" -v lim="$2" 'BEGIN {
		print "{\"type\":\"input\",\"v\":1,\"role\":\"single\",\"path\":\"/p\",\"framework\":\"sglang\"}"
		print "{\"type\":\"gpu_time\",\"t\":0,\"stage\":\"decode\",\"kernels\":10,\"kernel_us\":1000,\"busy_us\":1000,\"span_us\":1000,\"idle_us\":0,\"compute_us\":1000,\"comm_us\":0,\"memcpy_us\":0,\"graph_us\":100,\"graph_pct\":10,\"eager_kernels\":9}"
		s = 40
		for (i = 0; i < n; i++) {
			shown = s >= 1 && (lim == 0 || i < lim) ? "true" : "false"
			printf "{\"type\":\"kernel_row\",\"t\":0,\"stage\":\"decode\",\"kernel\":\"k%d\",\"category\":\"other\",\"total_us\":%g,\"launches\":1,\"share_pct\":%g,\"stage_total_us\":1000,\"location\":\"unresolved\",\"cpu_op\":\"-\",\"shown\":%s}\n", i, s * 10, s, shown
			s /= 2
		}
		s = 40
		for (i = 0; i < n; i++) {
			printf "{\"type\":\"graph_escape\",\"t\":0,\"stage\":\"decode\",\"kernel\":\"k%d\",\"launches\":1,\"total_us\":%g,\"share_pct\":%g}\n", i, s * 10, s
			s /= 2
		}
	}'
}

escape_rows() {	# escape_rows FILE: the kernels of the eager table, then its closing line
	awk '/^Kernels launched outside CUDA graphs/ { f = 1; next }
	    f && /^\| k[0-9]/ { split($0, a, " \\| "); sub(/^\| /, "", a[1]); printf "%s ", a[1] }
	    f && /more eager kernel/ { print ""; print; exit }' "$1"
}

t_bar() {
	# 40, 20, 10, 5, 2.5, 1.25 percent shown; 0.625 ... below the bar
	rows 10 0 | "$RENDER" >"$T/a.md"
	eq "k0 k1 k2 k3 k4 k5 
4 more eager kernel names below the 1.0% bar or the row limit: 1.2% of the stage's GPU time." \
	    "$(escape_rows "$T/a.md")"
	# the records, and the JSON document's escape table, are cut the same
	rows 10 0 | "$RENDER" --format json >"$T/a.json"
	eq 6 "$(jq '.reports[0].tables[] | select(.table == "escape") | .rows | length' "$T/a.json")"
}
check "the 1.0% bar: rows below it are one line" t_bar

t_limit() {
	# --kernel-table-limit 3 showed three kernel rows: the eager table too
	rows 10 3 | "$RENDER" >"$T/b.md"
	eq "k0 k1 k2 
7 more eager kernel names below the 1.0% bar or the row limit: 9.9% of the stage's GPU time." \
	    "$(escape_rows "$T/b.md")"
	# nothing at the bar: the table says so, and what it leaves out
	rows 10 0 | grep -v graph_escape >"$T/c.jsonl"
	printf '%s\n' '{"type":"graph_escape","t":0,"stage":"decode","kernel":"k9","launches":1,"total_us":5,"share_pct":0.5}' \
	    >>"$T/c.jsonl"
	"$RENDER" <"$T/c.jsonl" >"$T/c.md"
	has "$T/c.md" '^No eager kernel reaches 1.0% of the stage.s GPU time.$'
	has "$T/c.md" '^1 more eager kernel name below the 1.0% bar or the row limit: 0.5% of the stage.s GPU time.$'
}
check "the kernel table's row limit, when it bound, holds for the eager table" t_limit

done_testing
