/*
 * Text primitives of the reference analyzer, reproduced byte for byte
 * (spec kernel-table.md §1.3, §2.1, §4.5; fuse-detect.md §3).
 *
 * All inputs are (pointer, length) spans of valid UTF-8 (trace-extract
 * repairs invalid bytes to U+FFFD before anything reaches these functions).
 * Functions taking an `sbuf *out` reset it first and leave the result there;
 * the caller owns the sbuf.  Case folding is ASCII-only; the reference uses
 * Unicode lowercasing, which differs only for non-ASCII letters
 * (docs/deviations.md).
 */
#ifndef TEXT_H
#define TEXT_H

#include <stddef.h>

#include "sbuf.h"

/* Byte length of the Python-whitespace code point at p (str.isspace), or 0. */
size_t text_ws_len(const char *p, size_t n);

/* Strip Python whitespace at both ends; returns the new start, sets *outlen. */
const char *text_strip(const char *p, size_t n, size_t *outlen);

/*
 * normalize_text (§1.3): strip; if the rest contains one of the six ASCII
 * whitespace characters, collapse every run of Unicode whitespace to one
 * space.
 */
void text_normalize(const char *p, size_t n, sbuf *out);

/* ASCII lowercase in place. */
void text_lower(char *p, size_t n);

/* Plain substring / prefix tests (needle is a C string). */
int text_has(const char *p, size_t n, const char *needle);
int text_starts(const char *p, size_t n, const char *prefix);
int text_ends(const char *p, size_t n, const char *suffix);

/* Same, on the ASCII-lowercased text without copying. */
int text_has_ci(const char *p, size_t n, const char *lower_needle);

/* Number of Unicode code points in a UTF-8 span. */
size_t text_cplen(const char *p, size_t n);

/* compact (normalize_match_text): normalize, keep [0-9A-Za-z], lowercase. */
void text_compact(const char *p, size_t n, sbuf *out);

/*
 * canonicalize_name (§2.1): the kernel-table row key.  Under
 * --compat reference every 0x run becomes 0xADDR, as the reference does;
 * otherwise only one that starts a word (text_hex_addr_words).
 */
void canonicalize_name(const char *p, size_t n, sbuf *out);

/* normalize_repo_relative_path (§4.5). */
void normalize_repo_relative_path(const char *p, size_t n, sbuf *out);

/*
 * normalize_source_location (§4.5): "path(123): func" becomes
 * "<repo-relative path>:123 func"; anything else is only normalized.
 */
void normalize_source_location(const char *p, size_t n, sbuf *out);

/*
 * Match "^(.+?)\((\d+)\): (.+)$" on p.  On success returns 1 and sets the
 * path length, line start/length and func start (func runs to the end).
 * `loose_space` accepts any run of whitespace after ':' (the overlap
 * scope parser, overlap.md §9.3, uses \s*).
 */
int text_match_pyloc(const char *p, size_t n, size_t *pathlen,
    size_t *line_off, size_t *line_len, size_t *func_off);

/*
 * The one spelling of a Python site in every report table and format
 * (issue 26): "PATH:LINE FUNC", whichever form the record holds it in:
 * kernel-map's and step-stats' "PATH:LINE FUNC", a frame's "PATH(LINE):
 * FUNC" (overlap-sweep's scopes), fuse-detect's "FUNC @ PATH:LINE".  A
 * " (site share N%)" suffix stays; text of no such form (unresolved,
 * unmapped, -) is copied as it is.  Writes out (reset first).
 */
void text_site_display(const char *p, size_t n, sbuf *out);

/* Replace every 0x[0-9a-fA-F]+ with 0xADDR (appends to out, no reset). */
void text_hex_addr(const char *p, size_t n, sbuf *out);
/*
 * The same for a 0x run that starts a word (not after a letter, digit or
 * underscore): an address, not a digit run such as a tile shape's
 * "320x224" (docs/deviations.md C12).
 */
void text_hex_addr_words(const char *p, size_t n, sbuf *out);

/* Escape for a markdown cell: '|' -> "\|", '\n' -> "<br>" (appends). */
void text_md_escape(const char *p, size_t n, sbuf *out);

#endif
