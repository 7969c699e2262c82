#!/bin/sh
# make install / uninstall into a DESTDIR; the installed triage runs on its own.
# sanitize: no (the driver's own logic; the tools it runs are tested under
# the sanitizers by their own scripts)
. "$(dirname "$0")/lib.sh"

t_install() {
	make -s -C "$TOP" install DESTDIR="$T/root" PREFIX=/usr O="${O:-build}" >"$T/make.out" 2>&1 ||
	    { cat "$T/make.out"; return 1; }
	for t in trace-extract trace-stage trace-health kernel-map overlap-sweep fuse-detect \
	    triage-render trace-capture triage; do
		[ -x "$T/root/usr/bin/$t" ] || { echo "missing bin/$t"; return 1; }
	done
	for m in triage.1 trace-extract.1 kernel-map.1 fuse-detect.1; do
		[ -f "$T/root/usr/share/man/man1/$m" ] || { echo "missing man1/$m"; return 1; }
	done
	[ -f "$T/root/usr/share/man/man5/triage-records.5" ]
	[ -f "$T/root/usr/share/man/man5/fuse-patterns.5" ]
	[ -f "$T/root/usr/share/llm-torch-profiler-analysis/fuse-patterns.jsonl" ]
}
check "make install puts binaries, the driver, man pages and the catalog in place" t_install

t_build_bin() {
	# make leaves the driver beside the tools: build/bin on PATH gives every command
	same "$TOP/scripts/triage" "$BIN/triage"
	[ -x "$BIN/triage" ]
	(cd "$T" && env -u TRIAGE_BINDIR PATH="$BIN:/usr/bin:/bin" triage --input \
	    "$TOP/examples/sglang-serving.trace.json.gz") >"$T/b.md"
	has "$T/b.md" "^# Triage report: "
	# the build prints a line per program; with -s nothing
	make -s -C "$TOP" O="${O:-build}" all >"$T/quiet.out" 2>&1
	eq 0 "$(wc -c <"$T/quiet.out" | tr -d ' ')" "bytes make -s printed"
}
check "make leaves triage in build/bin with the tools; make -s prints nothing" t_build_bin

t_run_installed() {
	# Only the installed directory: no build tree, no TRIAGE_BINDIR.
	cp "$TOP/examples/sglang-serving.trace.json.gz" "$T/s.json.gz"
	env -u TRIAGE_BINDIR PATH=/usr/bin:/bin "$T/root/usr/bin/triage" --input "$T/s.json.gz" >"$T/r.md"
	has "$T/r.md" "^# Triage report: "
	has "$T/r.md" "^### decode$"
}
check "the installed triage finds its filters beside itself" t_run_installed

t_uninstall() {
	make -s -C "$TOP" uninstall DESTDIR="$T/root" PREFIX=/usr >/dev/null 2>&1
	eq "" "$(find "$T/root" -type f | head -5)" "files left"
}
check "make uninstall removes every installed file" t_uninstall

done_testing
