/*
 * The trace-event scanner: reads a Chrome-trace JSON document from a zio
 * stream and hands each trace event object, as one contiguous span of JSON
 * text, to a callback.  It validates the JSON grammar of the whole document
 * as it goes (so a file that two writers interleaved, or a truncated one, is
 * rejected with a position), but is lenient where the data stays clear:
 * a UTF-8 byte order mark, raw control characters inside strings, NaN /
 * Infinity / -Infinity literals, a trailing comma before ']' or '}', and a
 * top-level event array without its closing ']' (the trace-event format
 * allows it).  Each leniency is counted in scan_stats.
 *
 * Both document shapes are understood: {"traceEvents": [ ... ], ...} and a
 * bare top-level array of events.  Memory use is bounded by the largest
 * single event.
 */
#ifndef SCAN_H
#define SCAN_H

#include <stddef.h>

#include "json.h"
#include "zio.h"

struct scan_stats {
	int shape;			/* 0 unknown, 'o' object, 'a' array */
	int has_events;			/* an event array was found */
	unsigned long long bytes;	/* JSON bytes consumed */
	unsigned long long events;	/* event objects handed to the callback */
	unsigned long long elements;	/* elements of the event array, of any kind */
	int early_nonobject;		/* one of the first 8 elements is not an object */
	unsigned long long bom, ctrl, trailing_commas, missing_close,
	    nonobject, dup_trace_events, literals;
	/*
	 * Where the (first) event array ends (issue 29): the decompressed byte
	 * offset of its closing ']' (set once seen; for a bare array without
	 * one, the end of the input at the end of the scan), and what precedes
	 * it: '[' (no element), ',' (a trailing comma) or 'v' (an element).
	 */
	int events_closed;
	unsigned long long events_close;
	int events_before;
};

/*
 * Called once per event object, tokenized: ev->js holds its ev->len bytes of
 * JSON text (not NUL-terminated), which start at decompressed byte `off`, and
 * ev->tok its jsmn tokens (token 0 is the object).  Strictly valid events are
 * tokenized in the same pass that finds them (json_parse_object); the rest
 * (control characters, NaN literals, trailing commas, events across read
 * chunks) are validated by the scanner's state machine, then tokenized with
 * json_parse.  ev->ntok is 0 in the one case jsmn refuses an event the
 * scanner accepted (none is known).  The doc and the text are valid only
 * during the call.  Return 0 to go on, non-zero to stop the scan early
 * (scan_run then returns SCAN_STOPPED).
 */
typedef int (*scan_event_fn)(void *ctx, const json_doc *ev, unsigned long long off);

enum { SCAN_OK = 0, SCAN_ERROR = -1, SCAN_STOPPED = 1 };

/*
 * Scan the document in z.  `name` is used in messages.  On SCAN_ERROR the
 * message (file, byte offset, line:column, hint) is in errbuf.  With
 * fn == NULL the document is only validated.  `progress`, when non-NULL, is
 * called about every 8 MiB with the stats so far.
 */
int scan_run(zio *z, const char *name, scan_event_fn fn, void *ctx,
    struct scan_stats *st, char *errbuf, size_t errlen,
    void (*progress)(void *ctx, const struct scan_stats *st));

/*
 * scan_run for readers of a few known members: each event comes with the
 * value token of every member of `keys` (json.h, struct json_keys) in
 * idx, -1 for an absent one.  A strictly valid event is tokenized only as
 * far as the selection needs (json_select_object), so ev->tok holds the
 * root object and the selected values, not the whole event; any other is
 * tokenized in full, with the same idx (json_select_doc).  ev->ntok is 0,
 * with every idx -1, in the case where jsmn refuses an event the scanner
 * accepted.
 */
typedef int (*scan_select_fn)(void *ctx, const json_doc *ev, const int *idx,
    unsigned long long off);
int scan_run_select(zio *z, const char *name, const struct json_keys *keys, scan_select_fn fn,
    void *ctx, struct scan_stats *st, char *errbuf, size_t errlen);

/*
 * scan_run_tap (issue 29): validate the document as scan_run does without
 * a callback, and hand every decompressed byte of it, in order, to tap:
 * each chunk as read (a byte order mark included), after the scanner has
 * read it, with the offset of its first byte.  When the event array closes
 * inside a chunk, st->events_closed is set before that chunk's tap.  tap
 * returns 0 to go on, non-zero to stop (SCAN_STOPPED).  Memory: that of
 * scan_run.
 */
typedef int (*scan_tap_fn)(void *ctx, const char *p, size_t n, unsigned long long off,
    const struct scan_stats *st);
int scan_run_tap(zio *z, const char *name, scan_tap_fn tap, void *ctx, struct scan_stats *st,
    char *errbuf, size_t errlen);

/*
 * Members of the top-level object besides the events (Kineto writes
 * deviceProperties and distributedInfo there, before or after traceEvents;
 * issue 25).  keys is a NULL-terminated list of member names (at most 31
 * bytes each), compared decoded.  When such a member's value is an object,
 * an array, a number or a literal, fn gets it tokenized (the whole value,
 * under the same size and depth limits as an event; token 0 is the value)
 * with the index of its key in keys; a string value is skipped.  The doc is valid only during
 * the call; return non-zero to stop the scan (SCAN_STOPPED).  A bare
 * top-level array has no such members.
 */
struct scan_members {
	const char *const *keys;
	int (*fn)(void *ctx, int which, const json_doc *value);
};

/*
 * scan_run_select (sfn non-NULL, with keys) or scan_run (fn, keys NULL),
 * also handing the members of `members` (may be NULL) to members->fn with
 * the same ctx.
 */
int scan_run_members(zio *z, const char *name, const struct json_keys *keys, scan_select_fn sfn,
    scan_event_fn fn, const struct scan_members *members, void *ctx, struct scan_stats *st,
    char *errbuf, size_t errlen);

#endif
