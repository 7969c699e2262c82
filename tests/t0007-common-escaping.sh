#!/bin/sh
# common/esc.c: text made safe for markdown, spreadsheets and terminals
# (and common/ofile.c: names a tool makes never written through a link);
# U+0000 kept by the JSON decoder and writer; "too large" numbers (issue
# 27).  A C program linked against the library of the build under test
# (sanitized when that build is) checks hand-written expectations.
. "$(dirname "$0")/lib.sh"

t_esc() {
	c_check esc-check
}
check "control characters, markdown, formulas, URLs, U+0000, numbers past 64 bits" t_esc

# common/ofile.c: a name a tool makes is never written through a link,
# checked when it is opened (so a link planted after a check is refused too)
t_ofile_made() {
	mkdir -p "$T/of"
	C_CHECK_ARGS="$T/of" c_check ofile-check
}
check "ofile: made names refuse links, typed names follow them" t_ofile_made

done_testing
