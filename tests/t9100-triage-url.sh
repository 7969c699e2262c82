#!/bin/sh
# scripts/triage --url / --mapping-url / --formal-url against loopback fakes:
# capture, then the tables of what was captured.
# sanitize: no (the driver's own logic; the tools it runs are tested under
# the sanitizers by their own scripts)
. "$(dirname "$0")/lib.sh"
. "$TESTDIR/capture-lib.sh"

mkdir -p "$T/sg" "$T/vl" "$T/m" "$T/f"
spawn_fake sg --framework sglang
spawn_fake vl --framework vllm --trace-dir "$T/vl"
spawn_fake m --framework vllm --trace-dir "$T/m"
spawn_fake f --framework vllm --trace-dir "$T/f"

t_sglang() {
	use_fake sg
	"$TRIAGE" --compat reference --url "$FAKE_URL" --output-dir "$T/sg" $FAST -q >"$T/sg.md" 2>"$T/sg.err"
	eq 0 $? exit
	eq "Mode: single-trace" "$(sed -n 2p "$T/sg.md")"
	eq "Framework: SGLang" "$(sed -n 3p "$T/sg.md")"
	# prefill first, then decode, each a trace under <out>/<stage>/<epoch>/
	sed -n 4p "$T/sg.md" | grep -q "^Input traces: $T/sg/prefill/[0-9.]*/.*\.trace\.json\.gz, $T/sg/decode/[0-9.]*/"
	has "$T/sg.md" '^##### extend/prefill$'
	has "$T/sg.md" '^##### decode$'
	has "$T/sg.md" '^| gemm_kernel | gemm | '
}
check "--url on SGLang: both stages captured and tabled" t_sglang

t_vllm() {
	use_fake vl
	"$TRIAGE" --compat reference --url "$FAKE_URL" --output-dir "$T/vl" $FAST -q >"$T/vl.md" 2>"$T/vl.err"
	eq 0 $? exit
	eq "Framework: vLLM" "$(sed -n 3p "$T/vl.md")"
	sed -n 4p "$T/vl.md" | grep -q "^Input traces: $T/vl/prefill/.*, $T/vl/decode/"
}
check "--url on vLLM: detected from the server, staged folders" t_vllm

t_dual() {
	use_fake m
	mu=$FAKE_URL
	use_fake f
	"$TRIAGE" --compat reference --mapping-url "$mu" --mapping-output-dir "$T/m" --formal-url "$FAKE_URL" \
	    --formal-output-dir "$T/f" $FAST -q >"$T/d.md" 2>"$T/d.err"
	eq 0 $? exit
	eq "Mode: mapping-formal" "$(sed -n 2p "$T/d.md")"
	sed -n 4p "$T/d.md" | grep -q "^Mapping traces: $T/m/prefill/"
	sed -n 5p "$T/d.md" | grep -q "^Formal traces: $T/f/prefill/"
}
check "--mapping-url and --formal-url" t_dual

t_down() {
	status 4 "$TRIAGE" --url http://127.0.0.1:9 --framework vllm --output-dir "$T/none" $FAST \
	    >"$T/down.out" 2>"$T/down.err"
	eq 0 "$(wc -c <"$T/down.out" | tr -d ' ')" "stdout bytes"
	has "$T/down.err" "127.0.0.1:9"
}
check "a server that is down: exit 4, nothing on stdout" t_down

done_testing
