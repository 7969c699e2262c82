#!/bin/sh
# triage --all-ranks: every rank's pipeline in its own processes, -j at a
# time, merged into rank-skew and the renderer; and the README's xargs
# example of the same pipelines, run as written.
# sanitize: no (the driver's own logic; the tools it runs are tested under
# the sanitizers by their own scripts)
. "$(dirname "$0")/lib.sh"

GEN=$TESTDIR/gen-trace
d=$T/prof
mkdir -p "$d"
# four ranks: rank 2 arrives 12 us late at every all-reduce, the others wait
common="-s both -n 3 -l 3 --streams 2 --world 4 -z"
"$GEN" $common --rank 0 --comm-wait 12 -o "$d/run-TP-0.trace.json.gz"
"$GEN" $common --rank 1 --comm-wait 12 --clock 2000 -o "$d/run-TP-1.trace.json.gz"
"$GEN" $common --rank 2 --comm-late 12 -o "$d/run-TP-2.trace.json.gz"
"$GEN" $common --rank 3 --comm-wait 12 --clock 777 -o "$d/run-TP-3.trace.json.gz"

# A bin directory whose triage-render keeps a copy of what it reads.
fake=$T/bin
mkdir -p "$fake"
for t in "$BIN"/*; do ln -s "$t" "$fake/$(basename "$t")"; done
rm "$fake/triage-render"
cat >"$fake/triage-render" <<EOF
#!/bin/sh
tee "$T/render.in" | "$BIN/triage-render" "\$@"
EOF
chmod +x "$fake/triage-render"

t_same_tables() {
	"$TRIAGE" --input "$d" >"$T/one.md"
	"$TRIAGE" --all-ranks -j 2 --input "$d" >"$T/all.md" 2>"$T/err"
	# one rank's report says it is one of four; the all-ranks report has
	# a Ranks section instead; the rest is the same
	has "$T/one.md" '^> Note: Rank 0 of 4 analyzed (the traces name ranks 0, 1, 2, 3)'
	# (and the health, which covers every rank: below)
	nohealth='/^> \*\*Trace health/d;/^## Trace health$/,/^## Legend$/{/^## Legend$/!d;};/^- \*\*Traces\*\*/d'
	sed -e '/^> Note: Rank/,+1d' -e '/^- \*\*Mode\*\*/d' -e "$nohealth" "$T/one.md" >"$T/one.rest"
	sed -e '/^## Ranks$/,/^## Trace health$/{/^## Trace health$/!d}' -e '/^- \*\*Mode\*\*/d' \
	    -e "$nohealth" "$T/all.md" >"$T/all.rest"
	same "$T/one.rest" "$T/all.rest"
	has "$T/all.md" '^## Trace health$'
	has "$T/all.md" ' checks on 4 traces: '
	has "$T/all.md" "^- \\*\\*Traces\\*\\*: 4 ranks' traces of $d; the tables are from $d/run-TP-0.trace.json.gz\$"
	"$TRIAGE" --input "$d" --format json >"$T/one.json"
	"$TRIAGE" --all-ranks -j 3 --input "$d" --format json >"$T/all.json"
	eq 4 "$(jq '[.reports[0].tables[] | select(.table == "health") | .rows[].trace] | unique |
	    length' "$T/all.json")" "traces in the health table"
	# the header says which mode and which rank (issue 25)
	has "$T/one.md" '^- \*\*Mode\*\*: single trace$'
	has "$T/all.md" '^- \*\*Mode\*\*: all ranks (4)$'
	has "$T/all.md" '^- \*\*Rank\*\*: 0 of 4 (the trace.s distributedInfo)$'
	has "$T/all.md" '^- \*\*GPU\*\*: Demo GPU, compute capability 9.0, 132 SMs, 80 GiB$'
	eq 8 "$(sed -n '/^## Ranks$/,/^## /p' "$T/all.md" | grep -c '^| [0-3] | [0-9.]* ms')"
	eq "$(jq -c '.reports[0].tables | map(select(.table | test("^(rank|collective|rank_kernel|health)$") | not))' "$T/one.json")" \
	    "$(jq -c '.reports[0].tables | map(select(.table | test("^(rank|collective|rank_kernel|health)$") | not))' "$T/all.json")"
	eq "extend:0,1,2,3 decode:0,1,2,3" "$(jq -r '.reports[0].tables[] | select(.table == "rank") |
	    "\(.stage):\([.rows[].rank] | join(","))"' "$T/all.json" | tr '\n' ' ' | sed 's/ $//')"
	[ ! -s "$T/err" ]
}
check "the report's tables are the lowest rank's, as without --all-ranks" t_same_tables

# Ranks by the traces' distributedInfo (issue 25): names without a rank
t_dist_rank_names() {
	dd=$T/dist
	mkdir -p "$dd"
	"$GEN" -n 2 -l 2 --streams 2 --rank 0 --world 2 -o "$dd/trace0.json"
	"$GEN" -n 2 -l 2 --streams 2 --rank 1 --world 2 --comm-late 10 -o "$dd/trace1.json"
	"$TRIAGE" --all-ranks --input "$dd" >"$T/dist.md" 2>"$T/dist.err"
	has "$T/dist.md" '^- \*\*Mode\*\*: all ranks (2)$'
	has "$T/dist.md" '^- \*\*Rank\*\*: 0 of 2 (the trace.s distributedInfo)$'
	eq 2 "$(sed -n '/^## Ranks$/,/^## /p' "$T/dist.md" | grep -c '^| [01] | [0-9.]* ms')"
}
check "--all-ranks on traces whose names carry no rank: their distributedInfo" t_dist_rank_names

t_renderer_gets_skew() {
	TRIAGE_BINDIR=$fake "$TRIAGE" --all-ranks -j 2 --input "$d" >/dev/null
	# the lowest rank's records, then rank-skew's
	eq 0 "$(jq -s '[.[] | select(.type == "trace") | .rank] | join(",")' -r "$T/render.in")"
	eq "0 1 2 3 0 1 2 3" "$(jq -r 'select(.type == "rank_row") | .rank' "$T/render.in" | tr '\n' ' ' |
	    sed 's/ $//')"
	eq 9 "$(jq -s '[.[] | select(.type == "collective_row" and .skew_us == 12 and .last_rank == 2)] |
	    length' "$T/render.in")"
	# the same as one process reading every rank
	"$BIN/trace-extract" -q --all-ranks "$d" | "$BIN/trace-stage" -q | "$BIN/rank-skew" --no-pass \
	    >"$T/skew.want"
	grep -E '"type":"(rank_align|rank_gap|rank_row|collective_row|rank_kernel_delta)"' "$T/render.in" \
	    >"$T/skew.got"
	same "$T/skew.want" "$T/skew.got"
}
check "the renderer reads rank-skew's records of all four ranks" t_renderer_gets_skew

t_jobs_same() {
	TRIAGE_BINDIR=$fake "$TRIAGE" --all-ranks -j 1 --input "$d" >/dev/null
	cp "$T/render.in" "$T/j1"
	TRIAGE_BINDIR=$fake "$TRIAGE" --all-ranks --jobs 4 --input "$d" >/dev/null
	same "$T/j1" "$T/render.in"
}
check "-j 1 and -j 4 give the same records" t_jobs_same

t_jobs_limit() {
	# N ranks register before any goes on, never more (gate_bin, lib.sh)
	for j in 1 2 4; do
		rm -rf "$T/g"
		gate_bin "$T/g"
		GATE_N=$j TRIAGE_BINDIR=$T/g/bin "$TRIAGE" --all-ranks -j "$j" --input "$d" >/dev/null
		hasnt "$T/g/concurrent" stuck
		eq "$j" "$(sort -n "$T/g/concurrent" | tail -n 1)" "most ranks at once with -j $j"
	done
}
check "-j N runs N ranks at a time, never more (a semaphore the jobs keep)" t_jobs_limit

t_failed_rank() {
	b=$T/broken
	mkdir -p "$b"
	cp "$d"/*.gz "$b/"
	head -c 3000 "$d/run-TP-3.trace.json.gz" >"$b/run-TP-3.trace.json.gz"
	status 1 "$TRIAGE" --all-ranks -j 2 --input "$b" >"$T/out" 2>"$T/err"
	has "$T/err" "triage: rank 3: analysis failed (exit 1)"
	has "$T/err" "run-TP-3.trace.json.gz"
	[ ! -s "$T/out" ]
}
check "a rank that fails fails the run, naming the rank" t_failed_rank

t_usage() {
	status 2 "$TRIAGE" --all-ranks "$d" 2>"$T/err"
	has "$T/err" "all-ranks needs single-trace mode"
	status 2 "$TRIAGE" --all-ranks --mapping-input "$d" --formal-input "$d" 2>/dev/null
	status 1 "$TRIAGE" --all-ranks --input "$T/no-such-dir" 2>"$T/err"
	has "$T/err" "cannot open"
	mkdir -p "$T/norank"
	"$GEN" -n 1 --no-dist-info -o "$T/norank/a.trace.json"
	status 3 "$TRIAGE" --all-ranks --input "$T/norank" 2>"$T/err"
	has "$T/err" "no trace under '.*norank' names a rank"
	# one trace file is no set of ranks: said so, not "names no rank"
	status 2 "$TRIAGE" --all-ranks --input "$T/norank/a.trace.json" 2>"$T/err"
	has "$T/err" "is one trace file: name the directory that holds the ranks' traces, or drop --all-ranks"
}
check "--all-ranks: usage, a missing path, a directory without ranks" t_usage

# The README's block, as written, on this machine.
t_readme_example() {
	sed -n '/^<!-- t9400 -->$/,/^```$/p' "$TOP/README.md" | sed '1,2d;$d' >"$T/example.sh"
	[ "$(wc -l <"$T/example.sh")" -ge 4 ]
	mkdir -p "$T/ex"
	ln -s "$d" "$T/ex/prof"
	(cd "$T/ex" && PATH=$BIN:$PATH sh -e "$T/example.sh") >"$T/ex.md" 2>"$T/ex.err"
	same "$T/all.md" "$T/ex.md"
	eq "0 1 2 3" "$(tr '\n' ' ' <"$T/ex/ranks" | sed 's/ $//')"
	same "$T/skew.want" "$T/ex/skew.jsonl"
	# a rank whose job left nothing is reported missing, thanks to --ranks
	rm "$T/ex/rank2.jsonl"
	(cd "$T/ex" && cat rank*.jsonl | "$BIN/rank-skew" --no-pass --ranks "$(paste -sd, ranks)") \
	    >"$T/ex.gap" 2>"$T/ex.err"
	eq "extend:2 decode:2" "$(jq -r 'select(.type == "rank_gap" and .reason == "missing") |
	    "\(.stage):\([.ranks[].rank] | join(","))"' "$T/ex.gap" | tr '\n' ' ' | sed 's/ $//')"
	has "$T/ex.err" "no kernels of rank 2"
}
check "the README's xargs example runs as written and agrees with triage" t_readme_example

# readme_block MARK: the README's code block after "<!-- MARK -->", with
# every --sshlogin naming this machine (":") instead of the fleet.
readme_block() {
	sed -n "/^<!-- $1 -->\$/,/^"'```'"\$/p" "$TOP/README.md" | sed '1,2d;$d' |
	    sed 's/--sshlogin [^ ]*/--sshlogin :/'
}

# The README's GNU parallel examples, with this machine as the one host
# (parallel runs the job through the shell here, as a remote host would).
t_readme_parallel() {
	if ! command -v parallel >/dev/null 2>&1; then
		echo "GNU parallel not installed (scripts/install-deps --test) # SKIP"
		return 0
	fi
	readme_block "t9400 parallel" >"$T/par.sh"
	has "$T/par.sh" "parallel --sshlogin : "
	mkdir -p "$T/par"
	sed "s#/shared/prof#$d#g" "$T/par.sh" >"$T/par/run.sh"
	(cd "$T/par" && HOME=$T/par PATH=$BIN:$PATH sh -e run.sh) >"$T/par.out" 2>"$T/par.err" ||
	    { cat "$T/par.err"; return 1; }
	# every rank's stream, whole, in all.jsonl; rank_row as from one process
	eq "0 1 2 3" "$(jq -r 'select(.type == "trace") | .rank' "$T/par/all.jsonl" | sort -n |
	    tr '\n' ' ' | sed 's/ $//')" "ranks"
	grep '"type":"rank_row"' "$T/skew.want" | sort >"$T/rows.want"
	sort "$T/par.out" >"$T/rows.got"
	same "$T/rows.want" "$T/rows.got"
	# the fleet: a report per run directory, written beside it
	readme_block "t9400 fleet" >"$T/fleet.sh"
	has "$T/fleet.sh" "parallel --sshlogin : "
	mkdir -p "$T/fl/runs/a" "$T/fl/runs/b"
	cp "$d/run-TP-0.trace.json.gz" "$T/fl/runs/a/"
	cp "$d/run-TP-1.trace.json.gz" "$T/fl/runs/b/"
	(cd "$T/fl" && HOME=$T/fl PATH=$BIN:$PATH sh -e "$T/fleet.sh") 2>"$T/fl.err" ||
	    { cat "$T/fl.err"; return 1; }
	for r in a b; do
		(cd "$T/fl" && "$TRIAGE" --input "runs/$r/") >"$T/fl-$r.want"
		same "$T/fl-$r.want" "$T/fl/runs/$r/triage.md"
	done
}
check "the README's GNU parallel examples run with this machine as the host" t_readme_parallel

done_testing
