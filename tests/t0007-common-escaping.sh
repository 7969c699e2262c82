#!/bin/sh
# common/esc.c: text made safe for markdown, spreadsheets and terminals;
# U+0000 kept by the JSON decoder and writer; "too large" numbers (issue
# 27).  A C program linked against the library of the build under test
# (sanitized when that build is) checks hand-written expectations.
. "$(dirname "$0")/lib.sh"

t_esc() {
	c_check esc-check
}
check "control characters, markdown, formulas, URLs, U+0000, numbers past 64 bits" t_esc

done_testing
