#!/bin/sh
# trace-capture's own files and folders in a folder others can write to
# (issue 27 item 3): a stage folder planted as a symbolic link is refused
# before any request; a trace reached through a link to another folder is
# never moved; the path printed to the driver is one line (an output
# folder with a line break is refused); credentials never printed, also
# for a URL without a scheme.
. "$(dirname "$0")/lib.sh"
. "$TESTDIR/capture-lib.sh"

cap() {
	set +e
	capture "$@"
	set -e
}

mkdir -p "$T/planted" "$T/elsewhere" "$T/out" "$T/srv" "$T/sgl"
spawn_fake planted --framework vllm --trace-dir "$T/planted"
spawn_fake outside --framework vllm --trace-dir "$T/srv"
spawn_fake sgl --framework sglang

t_planted_stage() {
	ln -s "$T/elsewhere" "$T/planted/prefill"
	use_fake planted
	cap planted --url "$FAKE_URL" --framework vllm --output-dir "$T/planted" $FAST
	eq 4 "$(cat "$T/planted.rc")" "exit status"
	eq "trace-capture: '$T/planted/prefill' is a symbolic link, not a folder: trace-capture makes its stage folders itself (remove it, or choose another --output-dir)" \
	    "$(tail -n 1 "$T/planted.err")"
	# refused before the profiler was started, and nothing moved through it
	eq "" "$(reqs | grep start_profile)" "start_profile requests"
	eq "" "$(ls -A "$T/elsewhere")" "files in the link's target"
	[ -L "$T/planted/prefill" ]
	# the same for SGLang, whose server writes into the stage folder
	mkdir -p "$T/sgl/out"
	ln -s "$T/elsewhere" "$T/sgl/out/decode"
	use_fake sgl
	cap sgl --url "$FAKE_URL" --framework sglang --output-dir "$T/sgl/out" $FAST
	eq 4 "$(cat "$T/sgl.rc")" "exit status (SGLang)"
	has "$T/sgl.err" "'$T/sgl/out/decode' is a symbolic link, not a folder"
	eq "" "$(reqs | grep start_profile)" "start_profile requests (SGLang)"
	eq "" "$(ls -A "$T/elsewhere")" "files in the link's target (SGLang)"
}
check "a stage folder planted as a symlink is refused before any request" t_planted_stage

t_outside() {
	# the output folder holds a link to the folder the server writes to:
	# the new trace is found there, but never moved out of it
	ln -s "$T/srv" "$T/out/server"
	use_fake outside
	cap outside --url "$FAKE_URL" --framework vllm --output-dir "$T/out" $FAST \
	    --profile-workload prefill
	eq 4 "$(cat "$T/outside.rc")" "exit status"
	has "$T/outside.err" "^trace-capture: '$T/out/server/fake_tp0\.[0-9]*\.pt\.trace\.json\.gz' lies outside the output folder '$T/out' (behind a symbolic link): a trace there is never moved (point --output-dir at the folder the server writes to)$"
	# the trace is where the server wrote it; the stop was still sent
	eq 1 "$(ls "$T/srv" | grep -c 'pt.trace.json.gz$')" "traces left in the server's folder"
	eq "" "$(ls -A "$T/out/prefill" 2>/dev/null)" "traces in the stage folder"
	reqs | grep -q 'POST /stop_profile'
}
check "a trace behind a link to another folder is never moved out of it" t_outside

t_newline() {
	use_fake planted
	: >"$FAKE_LOG"
	nlout="$T/a
b"
	cap nl --url "$FAKE_URL" --framework vllm --output-dir "$nlout" $FAST
	eq 2 "$(cat "$T/nl.rc")" "exit status"
	has "$T/nl.err" "^trace-capture: bad --output-dir value, it holds a line break: $T/a\\\\x0ab$"
	eq 0 "$(wc -l <"$FAKE_LOG" | tr -d ' ')" "requests sent"
	[ ! -e "$nlout" ]
	cap nlp --url "$FAKE_URL" --framework vllm --output-dir "$T/out" --profile-prefix "x
y" $FAST
	eq 2 "$(cat "$T/nlp.rc")" "exit status (--profile-prefix)"
	# through the driver: exit 2, never another folder analyzed
	set +e
	"$TRIAGE" -q --url "$FAKE_URL" --framework vllm --output-dir "$nlout" >"$T/d.out" 2>"$T/d.err"
	rc=$?
	set -e
	eq 2 "$rc" "the driver's exit status"
	[ ! -s "$T/d.out" ]
}
check "an output folder with a line break is refused (the reply is one path a line)" t_newline

t_credentials() {
	# no scheme: still user info, still masked
	cap noscheme --url "probe:s3cr3t@127.0.0.1:9" --framework vllm --output-dir "$T/out"
	eq 2 "$(cat "$T/noscheme.rc")" "exit status"
	has "$T/noscheme.err" "not an http:// or https:// URL: probe:\*\*\*@127.0.0.1:9$"
	hasnt "$T/noscheme.err" 's3cr3t'
	# a token as the user name is a credential too
	cap token --url "ftp://ghp_tok3n@127.0.0.1:9/" --framework vllm --output-dir "$T/out"
	has "$T/token.err" "ftp://\*\*\*@127.0.0.1:9/$"
	hasnt "$T/token.err" 'tok3n'
	# the driver's progress line masks it the same way
	set +e
	"$TRIAGE" --progress --url "http://probe:s3cr3t@127.0.0.1:9" --framework vllm \
	    --output-dir "$T/out" --connect-timeout 1 >/dev/null 2>"$T/d.err"
	set -e
	has "$T/d.err" "^triage: single: capturing from http://probe:\*\*\*@127.0.0.1:9\.\.\.$"
	hasnt "$T/d.err" 's3cr3t'
}
check "credentials in --url are never printed, with or without a scheme" t_credentials

done_testing
