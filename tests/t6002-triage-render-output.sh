#!/bin/sh
# triage-render -o PATH by what PATH names (issue 27, common/ofile.h): a
# regular file replaced whole through a mkstemp file beside it, keeping
# its mode (and owner); other hard links refused with exit 2; a symlink
# written through; a FIFO or a device written directly, never replaced;
# "-" and /dev/stdout the standard output; links planted under the
# temporary names the tools once used followed nowhere.
. "$(dirname "$0")/lib.sh"
GEN=$TESTDIR/gen-trace
R=$BIN/triage-render

"$GEN" -n 2 -o "$T/t.json"
"$TRIAGE" -q --format jsonl --input "$T/t.json" >"$T/rec.jsonl"
"$R" <"$T/rec.jsonl" >"$T/want.md"
mkdir -p "$T/o"
cd "$T/o" || exit 1

t_regular() {
	echo old >r600.md
	chmod 600 r600.md
	"$R" -o r600.md <"$T/rec.jsonl"
	same "$T/want.md" r600.md
	eq 600 "$(stat -c %a r600.md)" "mode kept"
	# a new file: 0666 less the umask
	(umask 027 && "$R" -o new.md <"$T/rec.jsonl")
	eq 640 "$(stat -c %a new.md)" "mode of a new file"
	# nothing left beside them
	eq "new.md r600.md" "$(ls -A | grep 'md' | tr '\n' ' ' | sed 's/ $//')"
}
check "a regular file: replaced whole, its mode kept; a new one by the umask" t_regular

t_owner() {
	if [ "$(id -u)" != 0 ] || ! id nobody >/dev/null 2>&1; then
		echo "not root, or no user nobody # SKIP"
		return 0
	fi
	echo old >theirs.md
	chown nobody theirs.md
	"$R" -o theirs.md <"$T/rec.jsonl"
	eq nobody "$(stat -c %U theirs.md)" "owner kept"
	same "$T/want.md" theirs.md
}
check "root writing over another user's report keeps it theirs" t_owner

t_links() {
	echo old >real.md
	ln -s real.md link.md
	"$R" -o link.md <"$T/rec.jsonl"
	[ -L link.md ] || { echo "link.md is no longer a symlink"; return 1; }
	same "$T/want.md" real.md
	# a dangling link: the file it names is made, in that directory
	mkdir -p sub
	ln -s sub/made.md dangling.md
	"$R" -o dangling.md <"$T/rec.jsonl"
	[ -L dangling.md ]
	same "$T/want.md" sub/made.md
	# a chain of links, the last relative to its own directory
	ln -s ../real2.md sub/rel.md
	ln -s sub/rel.md chain.md
	"$R" -o chain.md <"$T/rec.jsonl"
	same "$T/want.md" real2.md
	[ -L sub/rel.md ] && [ -L chain.md ]
}
check "a symlink is written through to the file it names (dangling and chained too)" t_links

t_hard_link() {
	echo old >h1.md
	ln h1.md h2.md
	status 2 "$R" -o h1.md <"$T/rec.jsonl" 2>"$T/err"
	eq "triage-render: cannot write 'h1.md': it has 1 other hard link(s), which a new file would cut (remove them, or write elsewhere)" \
	    "$(cat "$T/err")"
	eq old "$(cat h1.md)" "h1.md"
	eq 2 "$(stat -c %h h1.md)" "links"
	status 2 "$R" --check-output -o h2.md 2>/dev/null
}
check "a file with other hard links is refused, exit 2, before the records are read" t_hard_link

t_fifo() {
	mkfifo pipe.md
	timeout 20 cat pipe.md >"$T/from-fifo" &	# (a FIFO replaced: no writer ever comes)
	reader=$!
	"$R" -o pipe.md <"$T/rec.jsonl"
	wait "$reader" || :
	same "$T/want.md" "$T/from-fifo"
	[ -p pipe.md ] || { echo "the FIFO was replaced"; return 1; }
}
check "a FIFO is written directly: its reader gets the report, the FIFO stays" t_fifo

t_device() {
	if ! mknod null.md c 1 3 2>/dev/null; then
		echo "mknod not permitted here # SKIP"
		return 0
	fi
	"$R" -o null.md <"$T/rec.jsonl"
	[ -c null.md ] || { echo "the device became: $(stat -c %F null.md)"; return 1; }
	"$R" --copy "$T/want.md" -o null.md
	[ -c null.md ]
}
check "a character device (a copy of /dev/null) is written, never replaced" t_device

t_stdout() {
	"$R" -o - <"$T/rec.jsonl" >"$T/dash.md"
	same "$T/want.md" "$T/dash.md"
	[ ! -e ./- ] || { echo "a file named - was made"; return 1; }
	"$R" -o /dev/stdout <"$T/rec.jsonl" >"$T/devout.md"
	same "$T/want.md" "$T/devout.md"
	# through a pipe too (/dev/stdout is then no file to rename over)
	"$R" -o /dev/stdout <"$T/rec.jsonl" | cat >"$T/piped.md"
	same "$T/want.md" "$T/piped.md"
	"$R" -o /dev/fd/1 <"$T/rec.jsonl" >"$T/fd1.md"
	same "$T/want.md" "$T/fd1.md"
	# appending: the descriptor itself, not a rewrite of the file
	echo first >"$T/app.md"
	"$R" --copy "$T/want.md" -o /dev/stdout >>"$T/app.md"
	eq first "$(head -n 1 "$T/app.md")" "the line before"
}
check "-o - and /dev/stdout are the standard output as it is" t_stdout

t_planted() {
	# links under the names the tools once used for their temporary files
	# (PATH.tmp.PID, .NAME.triage-tmp.PID), for the next 2,000 pids, made
	# by one process (perl-base is essential on Debian) so that few pids go
	echo victim >"$T/victim"
	last=$(cat /proc/sys/kernel/ns_last_pid 2>/dev/null || echo $$)
	perl -e 'for my $p ($ARGV[1] + 1 .. $ARGV[1] + 2000) {
	    symlink($ARGV[0], "planted.md.tmp.$p") or die;
	    symlink($ARGV[0], ".planted.md.triage-tmp.$p") or die }' "$T/victim" "$last"
	"$R" -o planted.md <"$T/rec.jsonl"
	"$TRIAGE" -q --input "$T/t.json" -o planted2.md
	eq victim "$(cat "$T/victim")" "the victim"
	[ -f planted.md ] && [ ! -L planted.md ]
	[ -f planted2.md ] && [ ! -L planted2.md ]
	same "$T/want.md" planted.md
	# the temporary files were made with O_EXCL under names of their own, and are gone
	eq 4000 "$(ls -A | grep -c 'planted.*tmp')" "only the planted links beside them"
}
check "links planted under predictable temporary names are never written through" t_planted

t_refused() {
	mkdir -p adir
	status 2 "$R" -o adir <"$T/rec.jsonl" 2>"$T/err"
	has "$T/err" "cannot write 'adir': it is a directory"
	status 2 "$R" -o nodir/x.md <"$T/rec.jsonl" 2>"$T/err"
	has "$T/err" "cannot write 'nodir/x.md': no such directory 'nodir'"
	status 0 "$R" --check-output -o fresh.md
	[ ! -e fresh.md ]
	status 2 "$R" --check-output -o adir 2>/dev/null
	# --copy: a finished file, streamed, by the same rules
	"$R" --copy "$T/want.md" -o copied.md
	same "$T/want.md" copied.md
}
check "directories and missing directories refused (exit 2); --check-output, --copy" t_refused

t_csv_dir() {
	"$R" --format csv -o tables/ <"$T/rec.jsonl"
	[ -f tables/kernel.csv ] && [ -f tables/gpu.csv ]
	eq "" "$(ls -A tables | grep -v '\.csv$')" "temporary files left"
}
check "csv -o DIR/: one file per table, each written the same way" t_csv_dir

# The names in DIR/ are the renderer's, not the user's: a link planted at
# one is refused before any table is written, the file it names untouched;
# --no-link says the same of an -o PATH triage made (batch reports).
t_csv_dir_link() {
	mkdir -p planted
	echo victim >victim
	ln -s ../victim planted/kernel.csv
	status 2 "$R" --format csv -o planted/ <"$T/rec.jsonl" 2>"$T/err"
	has "$T/err" "cannot write 'planted/kernel.csv': it is a symbolic link"
	eq victim "$(cat victim)"
	eq "kernel.csv" "$(ls -A planted)" "files written"
	ln -s victim madelink.md
	status 2 "$R" --no-link --copy "$T/rec.jsonl" -o madelink.md 2>"$T/err"
	eq victim "$(cat victim)"
	# a link the user names is followed, as documented
	"$R" --copy "$T/rec.jsonl" -o madelink.md
	cmp -s "$T/rec.jsonl" victim
}
check "names the renderer makes are never written through a planted link" t_csv_dir_link

done_testing
