/* trace-extract internals shared by its source files. */
#ifndef EXTRACT_H
#define EXTRACT_H

#include <stddef.h>

#include "json.h"
#include "sbuf.h"

/* A discovered trace file with its modification time (ns). */
struct tfile {
	char *path;		/* absolute, symlink-free */
	long long mtime_ns;
	int order;		/* discovery order, for stable ties */
};

struct tlist {
	struct tfile *v;
	size_t n, cap;
};

void tlist_free(struct tlist *l);

/*
 * Does `path` look like a trace (capture-and-cli.md §3.3)?  Names ending
 * .trace.json(.gz) or containing .pt.trace.json pass unread; other .json
 * and .json.gz files are validated in full.
 */
int file_looks_like_trace(const char *path);

/*
 * discover_trace_targets (capture-and-cli.md §3.6 with all_traces=false,
 * kernel-table.md Appendix A): the traces to analyze for an operand, in
 * analysis order, and the directory whose server_args.json applies.
 * Returns 0, or an exit code after printing a message (no traces: 3;
 * unreadable: 1).
 */
int discover_targets(const char *abspath, struct tlist *out, char **trace_dir);

/* All traces below dir (recursive or not), oldest first. */
void discover_files(const char *dir, int recursive, struct tlist *out);

/*
 * load_server_args (§3.7): read the first server_args.json found in
 * `dir` then its parent.  Returns 1 with the minified JSON text in out,
 * 0 when none exists, or -1 after printing an error (malformed).
 */
int load_server_args_dir(const char *dir, sbuf *out);
int load_server_args_for(const char *path, sbuf *out);	/* §3.7 file/dir rule */

/*
 * Framework resolution (kernel-table.md Appendix B, capture-and-cli.md
 * §5.7).  `explicit_fw` is the --framework value; `fallback` (may be NULL)
 * is the hint a live capture found from the URL.  Returns a canonical name,
 * or "none" when nothing names one (--compat reference: "sglang"), and in
 * *source what decided: option, server_args, path, trace, capture, none
 * (or default).  A content hint's evidence is left in `evidence`.
 */
const char *resolve_framework(const char *explicit_fw, const char *fallback,
    const char *abspath, int is_dir, const char *server_args_json, const char **source,
    sbuf *evidence);

/* The last resort of resolve_framework: the capture's hint, else none (or sglang). */
const char *default_framework(const char *fallback, const char **source);

/*
 * The framework a trace's own Python frames and op names belong to, by
 * majority over its head (docs/deviations.md); NULL when none.  `evidence`
 * receives a sentence saying how many of which.
 */
const char *trace_frames_hint(const char *path, sbuf *evidence);

/* Server-args hint (§5.3) on minified JSON text; NULL when none. */
const char *server_args_hint(const char *json);

/* Trace-content hint (§5.4) of a trace file; NULL when none or unreadable. */
const char *trace_content_hint(const char *path);

#endif
