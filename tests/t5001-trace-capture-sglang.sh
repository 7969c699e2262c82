#!/bin/sh
# trace-capture against a fake SGLang server: request order, payloads,
# the guard step, the layout <out>/<stage>/<epoch>/, legacy and auto modes.
. "$(dirname "$0")/lib.sh"
. "$TESTDIR/capture-lib.sh"

spawn_fake both --framework sglang
spawn_fake legacy --framework sglang
spawn_fake auto --framework sglang
spawn_fake ws --framework sglang

# -- default workload (both), explicit framework --
use_fake both
capture both --url "$FAKE_URL/" --framework sglang --output-dir "$T/out" $FAST
stop_fake
LOG=$FAKE_LOG

t_lines() {
	eq 0 "$(cat "$T/both.rc")" exit
	printf '%s\nsglang\n' "$(cd "$T/out" && pwd -P)" >"$T/want"
	same "$T/want" "$T/both.out"
}
check 'both: exit 0, stdout is the root and the framework' t_lines

t_order() {
	{
		echo "GET /server_info"
		for i in 0 1 2 3 4 5 6 7 8 9; do echo "POST /generate"; done
		echo "POST /start_profile"
		for i in 0 1 2 3 4; do echo "POST /generate"; done
		echo "POST /stop_profile"
		echo "GET /server_info"
		echo "POST /generate"
		echo "POST /start_profile"
		echo "POST /generate"
		echo "POST /stop_profile"
	} >"$T/want"
	reqs "$LOG" >"$T/got"
	same "$T/want" "$T/got"
}
check 'both: request sequence per stage (info, warm-ups, start, captures, stop)' t_order

t_start_payload() {
	jq -c 'select(.path == "/start_profile") | .body | fromjson | keys_unsorted' \
	    "$LOG" | sort -u >"$T/keys"
	echo '["output_dir","num_steps","activities","profile_by_stage","merge_profiles","profile_prefix"]' >"$T/want"
	same "$T/want" "$T/keys"
	jq -r 'select(.path == "/start_profile") | .body | fromjson |
	    [.num_steps, (.num_steps | type), (.activities | join(",")),
	     .profile_by_stage, .merge_profiles, .profile_prefix] | @tsv' \
	    "$LOG" >"$T/got"
	printf '6\tstring\tCPU,GPU\tfalse\tfalse\ttriage-trace-prefill\n6\tstring\tCPU,GPU\tfalse\tfalse\ttriage-trace-decode\n' >"$T/want"
	same "$T/want" "$T/got"
	root=$(cd "$T/out" && pwd -P)
	jq -r 'select(.path == "/start_profile") | .body | fromjson | .output_dir' \
	    "$LOG" >"$T/dirs"
	grep -Eq "^$root/prefill/[0-9]+\\.[0-9]+\$" "$T/dirs"
	grep -Eq "^$root/decode/[0-9]+\\.[0-9]+\$" "$T/dirs"
}
check 'both: start payload keys, num_steps "6" (guard step) as a string, prefixes' t_start_payload

t_generate() {
	jq -r 'select(.path == "/generate") | .body | fromjson |
	    [(.text | split(" ") | length), (.text | split(" ") | .[0]),
	     .sampling_params.sampling_seed, .sampling_params.temperature,
	     .sampling_params.max_new_tokens, .stream] | @tsv' "$LOG" >"$T/got"
	{
		for i in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14; do
			printf '4090\tprofile_probe_%s\t%s\t0\t1\tfalse\n' $i $i
		done
		printf '2\tprofile_probe_0\t0\t0\t10\tfalse\n'
		printf '2\tprofile_probe_1\t1\t0\t2048\tfalse\n'
	} >"$T/want"
	same "$T/want" "$T/got"
	# Every prompt is unique within a stage.
	eq 15 "$(jq -r 'select(.path == "/generate") | .body | fromjson | .text' \
	    "$LOG" | head -n 15 | sort -u | wc -l | tr -d ' ')" 'distinct prefill prompts'
	eq "profile_probe_1 profile" "$(jq -r 'select(.path == "/generate") |
	    .body | fromjson | .text' "$LOG" | tail -n 1)"
}
check 'both: probe prompts, seeds and token counts (§7.3 defaults)' t_generate

t_headers() {
	eq 0 "$(jq -r 'select(.method == "POST") | .headers["content-type"]' "$LOG" |
	    grep -vc '^application/json$')" 'POSTs without the JSON content type'
	eq 0 "$(jq -r 'select(.path == "/stop_profile") | .body' "$LOG" | grep -c .)" \
	    'stop bodies'
}
check 'every POST is application/json; stop has no body' t_headers

t_layout() {
	for s in prefill decode; do
		set -- "$T"/out/$s/*/server_args.json
		[ -f "$1" ] || { echo "no server_args.json under $s"; return 1; }
		eq fake/model "$(jq -r .model_path "$1")" "$s server_args model_path"
		d=$(dirname "$1")
		basename "$d" | grep -Eq '^[0-9]+\.[0-9]+$'
		ls "$d" | grep -q "^triage-trace-$s-.*-TP-0\\.trace\\.json\\.gz\$"
		gzip -t "$d"/*.trace.json.gz
	done
	eq 2 "$(find "$T/out" -name '*.trace.json.gz' | wc -l | tr -d ' ')" traces
}
check 'both: <out>/<stage>/<epoch>/server_args.json beside the trace' t_layout

t_stop_refused() {
	# The decode capture (2048 steps) makes the fake stop on its own, so its
	# stop_profile answers 400; SGLang stop errors are not failures.
	has "$T/both.err" 'decode: stop_profile not accepted'
}
check 'a refused SGLang stop after an auto-stop is only a note' t_stop_refused

# -- legacy workload with the SGLang-only options --
use_fake legacy
capture legacy --url "$FAKE_URL" --framework sglang --output-dir "$T/leg" \
    --profile-workload legacy --num-steps 3 --start-step 2 --profile-by-stage \
    --merge-profiles --probe-requests 0 --warmup-steps 2 $FAST
stop_fake

t_legacy() {
	eq 0 "$(cat "$T/legacy.rc")" exit
	d=$(head -n 1 "$T/legacy.out")
	case $d in "$(cd "$T/leg" && pwd -P)"/*) ;; *) echo "bad path $d"; return 1 ;; esac
	eq sglang "$(sed -n 2p "$T/legacy.out")"
	[ -f "$d/server_args.json" ]
	ls "$d" | grep -q -- '-TP-0-EXTEND\.trace\.json\.gz$'
	ls "$d" | grep -q -- '-TP-0-DECODE\.trace\.json\.gz$'
	ls "$d" | grep -q '^merged-'
	jq -c 'select(.path == "/start_profile") | .body | fromjson |
	    [.num_steps, .start_step, .profile_by_stage, .merge_profiles, .profile_prefix]' \
	    "$FAKE_LOG" >"$T/got"
	echo '["3","2",true,true,"triage-trace"]' >"$T/want"
	same "$T/want" "$T/got"
	# Legacy: the probe prompt loses its first word to the marker; 64 tokens.
	jq -r 'select(.path == "/generate") | .body | fromjson |
	    "\(.text | split(" ") | .[0:3] | join(" "))|\(.sampling_params.max_new_tokens)"' \
	    "$FAKE_LOG" >"$T/got"
	printf '%s\n' 'profile_probe_0 the word|64' 'profile_probe_1 the word|64' \
	    'profile_probe_2 the word|64' >"$T/want"
	same "$T/want" "$T/got"
}
check 'legacy: raw num_steps, start_step as string, by-stage and merged traces' t_legacy

# -- auto detection, no --output-dir, probe delay --
mkdir -p "$T/tmp"
use_fake auto
TMPDIR=$T/tmp capture auto --url "$FAKE_URL" --profile-workload decode \
    --probe-delay 0.3 --poll-interval 0.05 --wait-timeout 10
stop_fake

t_auto() {
	eq 0 "$(cat "$T/auto.rc")" exit
	eq sglang "$(sed -n 2p "$T/auto.out")"
	case $(head -n 1 "$T/auto.out") in
	"$T"/tmp/sglang-torch-profile-*) ;;
	*) echo "unexpected root $(head -n 1 "$T/auto.out")"; return 1 ;;
	esac
	[ -d "$(head -n 1 "$T/auto.out")/decode" ]
	reqs | head -n 2 >"$T/got"
	printf 'GET /server_info\nGET /server_info\n' >"$T/want"
	same "$T/want" "$T/got"
	has "$T/auto.err" 'framework: SGLang (GET /server_info)'
	# The capture request waits --probe-delay after start_profile.
	jq -s '[.[] | select(.path == "/start_profile" or .path == "/generate")] |
	    (.[2].t - .[1].t) >= 0.3' "$FAKE_LOG" | grep -q true
}
check 'auto: detected from /server_info, temp root, probe delay honoured' t_auto

# -- a prompt with odd whitespace, and an empty prefix --
use_fake ws
capture ws --url "$FAKE_URL" --framework sglang --output-dir "$T/ws" \
    --profile-workload legacy --probe-prompt '  a   b  c  ' --warmup-steps 0 \
    --profile-prefix '' --no-profile-by-stage $FAST
stop_fake

t_ws() {
	eq 0 "$(cat "$T/ws.rc")" exit
	eq '"profile_probe_0 b  c"' "$(jq -c 'select(.path == "/generate") | .body |
	    fromjson | .text' "$FAKE_LOG")" prompt
	eq '"" false' "$(jq -r 'select(.path == "/start_profile") | .body | fromjson |
	    "\(.profile_prefix | tojson) \(.profile_by_stage)"' "$FAKE_LOG")" 'prefix and by-stage'
}
check 'legacy: the marker replaces the first word; inner whitespace is kept' t_ws

done_testing
