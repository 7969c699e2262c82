#!/bin/sh
# triage-render (issue 31): a short health banner -- the verdict and the
# one or two defects that matter -- above a checks table of the checks not
# ok with a count of those that passed (md and HTML; json and csv keep
# every check); and the rank report saying where the straggler's lateness
# is, its slow-kernel list left out when its kernels account for under a
# tenth of it.  Hand-written fixtures, exact text.
. "$(dirname "$0")/lib.sh"
RENDER=$BIN/triage-render
C=$FIX/triage-render/checks.jsonl
H=$FIX/triage-render/straggler-host.jsonl

# checks.jsonl: 8 checks; 3 ok (no_kernels, truncated, merged_devices), 3
# defects (clock_skew 2 tables, stream_overlap 3, skipped_events 2), one
# limitation, one for information
t_banner() {
	"$RENDER" <"$C" >"$T/c.md"
	# the two that matter: the one affecting most tables, then the first in order
	has "$T/c.md" '^> \*\*Trace health: degraded.\*\* Kernels overlapping on one stream (stream_overlap); kernels that start before their launch calls (clock_skew); 1 more defect: the kernel, overlap, gpu_time and step tables are less trustworthy. Limited by the capture settings too: no Python stacks (with_stack).$'
	# about 40 words, the details in the table
	[ "$(grep '^> \*\*Trace health' "$T/c.md" | wc -w)" -le 45 ]
}
check "banner: the verdict and the two defects that matter, briefly" t_banner

t_table() {
	"$RENDER" <"$C" >"$T/c.md"
	sed -n '/^## Trace health/,/^## Legend/p' "$T/c.md" | grep '^| ' >"$T/rows"
	cat >"$T/want" <<-'EOF'
	| Trace | Check | Status | Value | Detail | Affects |
	| t.json | clock_skew | warn | 2 | 2 kernels start before their launch call, by up to 181.000 us: the CPU and GPU clocks disagree | gpu_time, step |
	| t.json | stream_overlap | warn | 2 | 2 kernels start before the previous kernel on the same stream ends | kernel, overlap, gpu_time |
	| t.json | skipped_events | warn | 1 | 1 of 61 events skipped | kernel, gpu_time |
	| t.json | no_python_stacks | limited | 0 | limited: no python_function events | kernel |
	| t.json | kernel_without_launch | info | 0 | 3 kernels launched before the capture began |  |
	EOF
	sed -i '2d' "$T/rows"	# the |---| line
	same "$T/want" "$T/rows"
	has "$T/c.md" '^8 checks on 1 trace: 3 defects, 1 limitation, 1 for information.$'
	has "$T/c.md" '^3 other checks passed.$'
}
check "checks table: the checks not ok, and how many others passed" t_table

t_info_only() {
	# an info check is listed, so the banner does not say all passed
	jq -c '.checks |= map(if .status == "warn" or .status == "limited" then .status = "ok" | .affects = [] else . end) | .verdict = "ok"' \
	    "$C" | "$RENDER" >"$T/i.md"
	has "$T/i.md" '^> \*\*Trace health: ok.\*\* No defect found: 7 of 8 checks passed, 1 is for information.$'
	has "$T/i.md" '^| t.json | kernel_without_launch | info | 0 | '
	has "$T/i.md" '^7 other checks passed.$'
	hasnt "$T/i.md" 'All 8 checks passed'
}
check "an info check: no 'all passed', listed, the others counted" t_info_only

t_machines() {
	# json and csv keep every check
	"$RENDER" -f json <"$C" >"$T/c.json"
	eq "no_kernels clock_skew stream_overlap skipped_events no_python_stacks kernel_without_launch truncated merged_devices" \
	    "$(jq -r '.reports[0].tables[] | select(.table == "health") | .rows[].check' "$T/c.json" | tr '\n' ' ' | sed 's/ $//')"
	eq "null" "$(jq '.reports[0].tables[] | select(.table == "health") | .left_out' "$T/c.json")"
	"$RENDER" -f csv --table health <"$C" | tr -d '\r' >"$T/c.csv"	# RFC 4180's CRLF
	eq 9 "$(wc -l <"$T/c.csv" | tr -d ' ')" "csv lines (a header and 8 checks)"
	has "$T/c.csv" '^,t.json,truncated,ok,0,the event array is closed,$'
}
check "json and csv keep every check" t_machines

t_html() {
	"$RENDER" -f html <"$C" >"$T/c.html"
	eq 5 "$(sed -n '/data-table="health"/,/<\/table>/p' "$T/c.html" | grep -c '<tr><td')" "health rows in html"
	has "$T/c.html" '<p class="more">3 other checks passed.</p>'
	has "$T/c.html" '<div class="banner degraded"><b>Trace health: degraded.</b> Kernels overlapping on one stream (stream_overlap); '
	# the banner is not bold throughout: the verdict is
	hasnt "$T/c.html" '\.banner{[^}]*font-weight'
}
check "html: the same rows and count, the verdict alone bold" t_html

t_straggler_host() {
	"$RENDER" <"$H" >"$T/h.md"
	has "$T/h.md" "^\*\*decode: rank 1's lateness is on its host: at the 3 collectives it arrived last at, it started 2.50 ms after the other ranks, and its launch calls of them came 2.40 ms after the others'.\*\*$"
	has "$T/h.md" "^Against the other ranks' median, summed over those collectives: its start +2.50 ms, its launch calls +2.40 ms, its GPU's idle time before them +2.45 ms and busy time +0.01 ms; its kernels take 0.02 ms more than the other ranks' (median) in the whole stage. The GPU cannot start what the host has not launched: the time is in the host's work before those launches (Python, data loading, CPU ops). Its kernels account for under 10% of the lateness: no slow-kernel list.$"
	# kernels 0.02 ms (excess) or 0.01 ms (busy) of 2.50 ms: under 10%, no list
	hasnt "$T/h.md" '^| Rank | Kernel |'
	# the alignment's spread is a median over the collectives, said so
	has "$T/h.md" "Clocks aligned on the end of the first matched all-reduce (rank 0's); after alignment a matched collective's ends spread 2 us across the ranks (the median over the collectives)."
	has "$T/h.md" "^2 kernels of the straggler with more time than the other ranks' median, not listed (-f json has them).$"
	"$RENDER" -f json <"$H" >"$T/h.json"
	eq "gemm_a gemm_b" "$(jq -r '.reports[0].tables[] | select(.table == "rank_kernel") | .rows[].kernel' "$T/h.json" | tr '\n' ' ' | sed 's/ $//')"
	"$RENDER" -f html <"$H" >"$T/h.html"
	hasnt "$T/h.html" 'data-table="rank_kernel"'
}
check "straggler late on its host: said with its figures, no slow-kernel list" t_straggler_host

t_straggler_kernels() {
	# the same with its kernels 1.90 ms slower and its GPU 2.00 ms busier before them
	sed 's/"late_launch_us":2400,"late_idle_us":2450,"late_busy_us":10,"kernel_excess_us":20,"late_in":"host"/"late_launch_us":100,"late_idle_us":300,"late_busy_us":2000,"kernel_excess_us":1900,"late_in":"kernels"/' \
	    "$H" | "$RENDER" >"$T/k.md"
	has "$T/k.md" "^\*\*decode: rank 1's lateness is in its kernels: at the 3 collectives it arrived last at, it started 2.50 ms after the other ranks, and its GPU ran kernels 2.00 ms longer before them.\*\*$"
	has "$T/k.md" "^Against .* its kernels take 1.90 ms more than the other ranks' (median) in the whole stage. Its GPU was still busy with other work before them. The straggler's kernels that take longer than the other ranks' median:$"
	has "$T/k.md" '^| 1 | gemm_a | 0.31 ms | 0.30 ms | 0.01 ms | 4 |$'
	# busier before them but no slower in all (0.02 ms of 2.50): their order, not their speed
	sed 's/"late_launch_us":2400,"late_idle_us":2450,"late_busy_us":10,"kernel_excess_us":20,"late_in":"host"/"late_launch_us":0,"late_idle_us":0,"late_busy_us":2500,"kernel_excess_us":20,"late_in":"kernels"/' \
	    "$H" | "$RENDER" >"$T/o.md"
	has "$T/o.md" ' Its GPU was still busy with other work before them, yet its kernels take about as long as the other ranks. in all: the same work ran before the collectives instead of beside or after them (their order, not their speed). The straggler.s kernels'
	# at exactly a tenth the list shows (250 of 2500 us)
	sed 's/"late_busy_us":10,"kernel_excess_us":20/"late_busy_us":10,"kernel_excess_us":250/' "$H" | "$RENDER" >"$T/t.md"
	has "$T/t.md" '^| 1 | gemm_a | 0.31 ms | 0.30 ms | 0.01 ms | 4 |$'
}
check "straggler late in its kernels: the slow-kernel list, from a tenth of the lateness" t_straggler_kernels

t_straggler_idle() {
	sed 's/"late_launch_us":2400,"late_idle_us":2450/"late_launch_us":-30,"late_idle_us":2450/; s/"late_in":"host"/"late_in":"idle"/' \
	    "$H" | "$RENDER" >"$T/i.md"
	has "$T/i.md" "^\*\*decode: rank 1's lateness is in its GPU idle gaps: at the 3 collectives it arrived last at, it started 2.50 ms after the other ranks, launched them no later than they did, and its GPU sat idle 2.45 ms longer before them.\*\*$"
	has "$T/i.md" 'its launch calls -0.03 ms, '
	sed 's/"late_launch_us":2400,"late_idle_us":2450/"late_launch_us":300,"late_idle_us":2450/; s/"late_in":"host"/"late_in":"idle"/' \
	    "$H" | "$RENDER" | grep -c 'launched them only 0.30 ms later, and its GPU sat idle 2.45 ms longer' >"$T/n"
	eq 1 "$(cat "$T/n")"
	has "$T/i.md" ' Launched in time, the collectives waited on a GPU with nothing running: a dependency (an event, a copy, another stream) came late.'
}
check "straggler late in its GPU idle gaps" t_straggler_idle

t_old_records() {
	# records without the lateness members: the list as before
	sed 's/,"late_collectives".*"late_in":"host"//' "$H" | "$RENDER" >"$T/o.md"
	has "$T/o.md" "^The straggler's kernels that take longer than the other ranks' median:$"
	has "$T/o.md" '^| 1 | gemm_a | 0.31 ms | 0.30 ms | 0.01 ms | 4 |$'
}
check "rank_row without the lateness members: the slow-kernel list as before" t_old_records

done_testing
