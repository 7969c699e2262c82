#!/bin/sh
# trace-extract and the whole pipeline on hostile input: every prefix of a
# small trace (plain and gzip), an event over 1 MiB, write errors.
. "$(dirname "$0")/lib.sh"

GEN=$TESTDIR/gen-trace
EX=$BIN/trace-extract

"$GEN" --array -n 1 -l 1 -o "$T/small.json"
"$GEN" --array -n 1 -l 1 -z -o "$T/small.json.gz"
mkdir "$T/plain" "$T/gz"

# prefixes FILE DIR SUFFIX: every prefix of FILE as DIR/pNNNNN.SUFFIX, written
# by one awk (starting a process per prefix is slow on small machines).  The
# file is read as records separated by \001 and joined back; a separator at
# the very end yields no record, so the size puts it back.
prefixes() {
	awk -v size="$(wc -c <"$1")" -v dir="$2" -v suf="$3" 'BEGIN { RS = "\001" }
	    { s = NR > 1 ? s "\001" $0 : $0 }
	    END {
		if (length(s) < size)
			s = s "\001"
		for (i = 0; i <= size; i++) {
			f = sprintf("%s/p%05d.%s", dir, i, suf)
			printf "%s", substr(s, 1, i) > f
			close(f)
		}
	    }' "$1"
}
prefixes "$T/small.json" "$T/plain" json
prefixes "$T/small.json.gz" "$T/gz" json.gz
cmp "$T/small.json.gz" "$T/gz/p$(printf %05d "$(wc -c <"$T/small.json.gz")").json.gz"

# torture DIR: run trace-extract over every file of DIR, one process.
torture() {
	_d=$1
	set +e
	(cd "$_d" && "$EX" -q -- *) >"$T/$2.jsonl" 2>"$T/$2.err"
	_rc=$?
	set -e
	case $_rc in
	0|1|3) ;;
	*) echo "exit $_rc (a signal is > 128)"; return 1 ;;
	esac
	# Each operand either ends with a stats record or is named in an error.
	jq -r 'select(.type == "input") | .path' "$T/$2.jsonl" | sed 's|.*/||' | sort >"$T/$2.inputs"
	(cd "$_d" && ls) >"$T/$2.all"
	# operands the tool could not even open would be missing from the inputs
	same "$T/$2.all" "$T/$2.inputs"
	jq -r 'select(.type == "trace") | "\(.t) \(.path)"' "$T/$2.jsonl" | sed 's| .*/| |' | sort -n >"$T/$2.traces"
	jq -r 'select(.type == "stats") | .t' "$T/$2.jsonl" | sort -n >"$T/$2.stats"
	grep -E "^trace-extract: '[^']*': (invalid JSON|truncated|empty input)" "$T/$2.err" |
	    sed "s|^trace-extract: '.*/\\([^/']*\\)':.*|\\1|" | sort >"$T/$2.bad"
	# no file both failed and produced statistics, none did neither
	awk -v stats="$T/$2.stats" -v bad="$T/$2.bad" '
	    BEGIN { while ((getline l < stats) > 0) S[l] = 1; while ((getline l < bad) > 0) B[l] = 1 }
	    { if (($1 in S) && ($2 in B)) { print $2 ": stats record and an error"; e = 1 }
	      if (!($1 in S) && !($2 in B)) { print $2 ": neither a stats record nor an error"; e = 1 } }
	    END { exit e }' "$T/$2.traces"
	# stderr holds nothing but those messages
	hasnt "$T/$2.err" "AddressSanitizer\|runtime error\|Assertion"
}

t_plain_prefixes() {
	torture "$T/plain" plain
	n=$(ls "$T/plain" | wc -l | tr -d ' ')
	eq "$(($(wc -c <"$T/small.json") + 1))" "$n" "prefix count"
	# the whole file is fine, and so is the file without its closing ']'
	last=$(ls "$T/plain" | tail -n 1)
	hasnt "$T/plain.bad" "$last"
	eq 3 "$("$EX" -q "$T/plain/$last" | jq -c 'select(.type == "kernel")' | wc -l | tr -d ' ')"
}
check "every prefix of a plain trace: exit 0, 1 or 3, each file accounted for" t_plain_prefixes

t_gzip_prefixes() {
	torture "$T/gz" gz
	last=$(ls "$T/gz" | tail -n 1)
	hasnt "$T/gz.bad" "$last"
	# every shorter gzip prefix lacks its trailer
	eq "$(($(ls "$T/gz" | wc -l) - 1))" "$(($(grep -c 'truncated gzip stream\|empty input\|invalid JSON' "$T/gz.err")))"
}
check "every prefix of a gzip trace: all but the whole file rejected" t_gzip_prefixes

# The full driver on a sample of prefixes: the exit status says what
# happened, and nothing reaches stdout unless the run succeeded.
t_triage_prefixes() {
	step=${TORTURE_STEP:-211}
	for dir in plain gz; do
		n=$(ls "$T/$dir" | wc -l)
		i=0
		while [ "$i" -lt "$n" ]; do
			f=$(ls "$T/$dir" | sed -n "$((i + 1))p")
			set +e
			"$TRIAGE" --input "$T/$dir/$f" >"$T/tri.out" 2>"$T/tri.err"
			rc=$?
			set -e
			case $rc in
			0) has "$T/tri.out" "^# Triage report" ;;
			1|3) [ ! -s "$T/tri.out" ] || { echo "$f: exit $rc with output"; return 1; } ;;
			*) echo "$f: exit $rc"; cat "$T/tri.err"; return 1 ;;
			esac
			i=$((i + step))
		done
	done
}
check "scripts/triage on sampled prefixes: exit 0, 1 or 3, no output after errors" t_triage_prefixes

t_big_event() {
	"$GEN" -d big-event -o "$T/big.json"
	[ "$(wc -c <"$T/big.json")" -gt 2000000 ]
	"$EX" --all-ops "$T/big.json" >"$T/big.jsonl" 2>"$T/big.err"
	eq "" "$(cat "$T/big.err")"
	eq '"aten::empty"' "$(jq -c 'select(.type == "cpu_op") | .name' "$T/big.jsonl" | tail -n 1)"
	eq 12 "$(jq -c 'select(.type == "kernel")' "$T/big.jsonl" | wc -l | tr -d ' ')"
}
check "an event over 1 MiB (spanning read chunks)" t_big_event

t_big_name() {
	# a 1.2 MiB kernel name travels through every tool of the pipeline
	awk 'BEGIN { p = "k"; while (length(p) < 1258291) p = p p }
	    /rmsnorm_kernel/ && !done { sub(/void sgl_demo::rmsnorm_kernel/, "void " p); done = 1 } { print }' \
	    "$T/small.json" >"$T/bigname.json"
	# whole under --compat reference; else cut at 64 KiB with a hash (t1011)
	"$EX" --compat reference "$T/bigname.json" | "$BIN/trace-stage" >"$T/bn.jsonl"
	eq 1 "$(jq -c 'select(.type == "kernel" and (.name | length) > 1258291)' "$T/bn.jsonl" | wc -l | tr -d ' ')"
	"$EX" "$T/bigname.json" 2>/dev/null | "$BIN/trace-stage" >"$T/bn2.jsonl"
	eq 1 "$(jq -c 'select(.type == "kernel" and (.name | endswith("]")) and (.name | contains("bytes, hash")))' \
	    "$T/bn2.jsonl" | wc -l | tr -d ' ')"
	"$TRIAGE" --input "$T/bigname.json" >"$T/bn.md" 2>/dev/null
	has "$T/bn.md" "^| kkkkkkkk"
	"$TRIAGE" --compat reference --input "$T/bigname.json" >"$T/bn.txt"
	has "$T/bn.txt" "kkkkkkkkkkkkkkkk"
}
check "a kernel name over 1 MiB through the whole pipeline" t_big_name

t_dev_full() {
	status 1 "$EX" "$T/big.json" >/dev/full 2>"$T/full.err"
	has "$T/full.err" "^trace-extract: write error on stdout: No space left on device"
	"$EX" "$T/big.json" >"$T/big.jsonl"
	status 1 "$BIN/trace-stage" "$T/big.jsonl" >/dev/full 2>"$T/full.err"
	has "$T/full.err" "^trace-stage: write error on stdout"
}
check ">/dev/full: exit 1 with \"write error\"" t_dev_full

t_head() {
	# a reader that stops early ends the writer quietly (SIGPIPE, no message)
	"$GEN" -n 40 -l 8 -o "$T/long.json"
	"$EX" "$T/long.json" 2>"$T/h1.err" | head -n 1 >"$T/h1.out"
	eq 1 "$(wc -l <"$T/h1.out" | tr -d ' ')"
	eq "" "$(cat "$T/h1.err")"
	"$EX" "$T/long.json" >"$T/long.jsonl"
	"$BIN/trace-stage" "$T/long.jsonl" 2>"$T/h2.err" | head -n 1 >/dev/null
	eq "" "$(cat "$T/h2.err")"
}
check "| head -1 ends quietly" t_head

done_testing
