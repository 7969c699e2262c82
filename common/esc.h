/*
 * Text made safe for where it is written (issue 27).  Names, paths and
 * model ids come from traces, servers and other people's file systems: a
 * kernel named "<img onerror=...>" or one holding ESC sequences must show
 * as the text it is in a report, a spreadsheet or a terminal, never act.
 *
 * Inputs are (pointer, length) spans of any bytes: decoded record text is
 * valid UTF-8 with U+0000 spelled C0 80 (json.h), file names may be
 * anything.  Every function appends to `out` (no reset); the caller owns
 * the sbuf.
 */
#ifndef ESC_H
#define ESC_H

#include <stddef.h>

#include "sbuf.h"

/* esc_ctrl flags: the control characters a destination may keep. */
#define ESC_KEEP_TAB	1
#define ESC_KEEP_NL	2
#define ESC_KEEP_CR	4	/* a quoted CSV cell holds a CR as it holds a LF */

/*
 * Control characters shown as escapes: C0 controls and DEL as "\x1b"
 * (tab, newline and CR kept when the flags say so), U+0000 (C0 80) as "\x00",
 * C1 controls (U+0080-U+009F, CSI among them) as "\u009b", the
 * bidirectional controls (U+061C, U+200E-F, U+202A-E, U+2066-9, which
 * reorder the text around them) as "\u202e", and each byte that is not
 * part of valid UTF-8 as "\xff".  Everything else is copied.
 * For stderr, markdown, CSV and TSV (issue 27 item 10).
 */
void esc_ctrl(const char *p, size_t n, int flags, sbuf *out);

/* Would esc_ctrl change p[0..n) under these flags? */
int esc_ctrl_needed(const char *p, size_t n, int flags);

/*
 * Markdown (CommonMark and GitHub's tables) for text that must stay text:
 * a backslash before each character that can start or end a link, image,
 * HTML tag, entity, emphasis, code span, strike-through or table cell
 * (\ ` * _ [ ] < & | ~; "_" inside a word and "#" inside a word stay bare,
 * since neither acts there, and so does ">", which ends a tag or autolink
 * only after an escaped "<"), the ":" of "://" and the "." of "www."
 * (GitHub's extended autolinks), "&#8203;" (a zero-width space) after an
 * "@" before a letter or digit, so that "@name" and "@org/team" notify no
 * one where the report is pasted (GitHub matches mentions on the rendered
 * text, where "\@" and "&#64;" are a bare "@" again; the space shows as
 * nothing, and an e-mail address no longer links either), CR, LF and CR
 * LF as "<br>", control characters as esc_ctrl shows them.  `line_start`: the text begins a
 * line, so its leading blanks go and a first character that could open a
 * block (# > - + = or "1." "1)") is escaped too (issue 27 item 7).
 */
void esc_md(const char *p, size_t n, int line_start, sbuf *out);

/*
 * CSV/TSV formula injection (issue 27 item 9): does a text cell begin with
 * a character a spreadsheet reads as a formula (= + - @ tab CR)?  A cell
 * that is a whole number ("-1.5") and the lone placeholder "-" are no
 * formulas.  The writer puts a "'" before a cell for which this is 1.
 */
int esc_is_formula(const char *s, size_t n);

/*
 * A URL with the password of its user info shown as "***"
 * ("http://user:***@host/"); a URL without one is copied (issue 21, 27).
 */
void esc_url(const char *url, sbuf *out);

#endif
