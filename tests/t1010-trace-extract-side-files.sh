#!/bin/sh
# Side files (issue 27 item 4): server_args.json and a --patterns catalog
# are read only when they are regular files (a FIFO never hangs the run, a
# link to /dev/zero is never read), at most TRIAGE_MAX_SIDE_BYTES; and
# server_args.json only from the folder named or the traces' own, never a
# parent anyone may write to.
. "$(dirname "$0")/lib.sh"
GEN=$TESTDIR/gen-trace
EX=$BIN/trace-extract

mkdir -p "$T/fifo" "$T/zero" "$T/big" "$T/tmp/x" "$T/ok"
"$GEN" -n 1 -o "$T/fifo/t.trace.json"
cp "$T/fifo/t.trace.json" "$T/zero/t.trace.json"
cp "$T/fifo/t.trace.json" "$T/big/t.trace.json"
cp "$T/fifo/t.trace.json" "$T/tmp/x/trace.json"
cp "$T/fifo/t.trace.json" "$T/ok/t.trace.json"
mkfifo "$T/fifo/server_args.json"
ln -s /dev/zero "$T/zero/server_args.json"

t_fifo() {
	# no writer ever opens the FIFO: a blocking open would hang forever
	status 1 timeout 20 "$EX" "$T/fifo" >/dev/null 2>"$T/err"
	eq "trace-extract: '$T/fifo/server_args.json': not a regular file (a FIFO); the server args file is read from regular files only" \
	    "$(cat "$T/err")"
	status 1 timeout 20 "$TRIAGE" -q --input "$T/fifo" >"$T/out" 2>"$T/err"
	[ ! -s "$T/out" ]
	has "$T/err" "not a regular file (a FIFO)"
}
check "a FIFO named server_args.json is refused at once, exit 1" t_fifo

t_zero() {
	status 1 timeout 20 "$EX" "$T/zero" >/dev/null 2>"$T/err"
	has "$T/err" "^trace-extract: '$T/zero/server_args.json': not a regular file (a character device)"
}
check "a link to /dev/zero is refused before a byte is read" t_zero

t_size() {
	{ printf '{"model_path": "m", "pad": "'; head -c 5000 /dev/zero | tr '\0' x; echo '"}'; } \
	    >"$T/big/server_args.json"
	status 1 env TRIAGE_MAX_SIDE_BYTES=4K "$EX" "$T/big" >/dev/null 2>"$T/err"
	eq "trace-extract: '$T/big/server_args.json': the server args file is larger than the limit of 4096 bytes (TRIAGE_MAX_SIDE_BYTES); no server args file is that large" \
	    "$(cat "$T/err")"
	# the default (16 MiB) takes it
	eq '"m"' "$("$EX" "$T/big" | jq -c 'select(.type == "input") | .model')"
}
check "a server_args.json past TRIAGE_MAX_SIDE_BYTES is refused, naming the limit" t_size

t_parent() {
	# any user's /tmp/server_args.json is not the model of /tmp/x/trace.json
	printf '{"model_path": "planted/Model"}' >"$T/tmp/server_args.json"
	eq null "$("$EX" "$T/tmp/x/trace.json" | jq -c 'select(.type == "input") | .model')"
	eq null "$("$EX" "$T/tmp/x" | jq -c 'select(.type == "input") | .model')"
	"$TRIAGE" -q --input "$T/tmp/x/trace.json" >"$T/r.md"
	hasnt "$T/r.md" 'planted'
	# the folder named, or the trace's own, still counts
	printf '{"model_path": "org/Own"}' >"$T/ok/server_args.json"
	eq '"org/Own"' "$("$EX" "$T/ok/t.trace.json" | jq -c 'select(.type == "input") | .model')"
	eq '"org/Own"' "$("$EX" "$T/ok" | jq -c 'select(.type == "input") | .model')"
}
check "server_args.json from the named folder or the trace's own, never a parent" t_parent

t_patterns() {
	"$TRIAGE" -q --format jsonl --input "$T/ok" >"$T/rec.jsonl"
	mkfifo "$T/pat.fifo"
	status 1 timeout 20 "$BIN/fuse-detect" --patterns "$T/pat.fifo" <"$T/rec.jsonl" \
	    >/dev/null 2>"$T/err"
	eq "fuse-detect: '$T/pat.fifo': not a regular file (a FIFO); the pattern catalog is read from regular files only" \
	    "$(cat "$T/err")"
	status 1 timeout 20 "$BIN/fuse-detect" --patterns /dev/zero <"$T/rec.jsonl" \
	    >/dev/null 2>"$T/err"
	has "$T/err" "'/dev/zero': not a regular file (a character device)"
	# past the limit: refused while it is read
	cp "$TOP/data/fuse-patterns.jsonl" "$T/pat.jsonl"
	status 1 env TRIAGE_MAX_SIDE_BYTES=1K "$BIN/fuse-detect" --patterns "$T/pat.jsonl" \
	    <"$T/rec.jsonl" >/dev/null 2>"$T/err"
	has "$T/err" "the pattern catalog is larger than the limit of 1024 bytes (TRIAGE_MAX_SIDE_BYTES)"
	"$BIN/fuse-detect" --patterns "$T/pat.jsonl" <"$T/rec.jsonl" >/dev/null
}
check "a --patterns catalog: regular files only, size-limited" t_patterns

done_testing
