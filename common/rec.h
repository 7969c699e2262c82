/*
 * JSON-lines records (man/man5/triage-records.5): one object per line with
 * "type" as its first member.
 *
 * Writing: rec_begin() .. rec_*() .. rec_end() build one line in an internal
 * buffer and write it to stdout.  Keys are C strings written verbatim; values
 * are escaped.  Numbers are printed as the shortest text that strtod() maps
 * back to the same double, so times survive any number of pipe stages
 * unchanged.
 *
 * Reading: a rec_reader yields one line at a time; the type is read from the
 * line prefix without parsing, and rec_parse() tokenizes the line only when a
 * tool needs its fields.  Spans and strings returned point into the reader's
 * line buffer and are valid until the next rec_next().
 */
#ifndef REC_H
#define REC_H

#include <stdio.h>

#include "json.h"
#include "sbuf.h"

/* The record format version written in "trace" and "input" records. */
#define REC_VERSION 1

void rec_begin(const char *type);
void rec_str(const char *key, const char *s, size_t n);
void rec_cstr(const char *key, const char *s);		/* NULL writes null */
void rec_int(const char *key, long long v);
void rec_num(const char *key, double v);		/* non-finite: null */
void rec_numtext(const char *key, const char *txt, size_t n);	/* verbatim */
void rec_bool(const char *key, int v);
void rec_null(const char *key);
void rec_raw(const char *key, const char *json, size_t n);	/* pre-built JSON */
void rec_end(void);
/* Write a whole line (without its '\n'), adding the newline. */
void rec_line(const char *line, size_t n);
/*
 * While fp is not NULL, every line written also goes to fp (a copy for a
 * later reader that needs only some records).  Write errors on fp are the
 * caller's to check (ferror) before closing it.
 */
void rec_also(FILE *fp);

typedef struct {
	FILE *fp;
	const char *name;	/* for messages: file name or "<stdin>" */
	size_t lineno;
	char *line;		/* current line, NUL-terminated, no '\n' */
	size_t len;
	json_doc doc;
	int parsed;
	/* private: read(2) buffer and the current line's type span */
	char *buf;
	size_t bcap, bstart, bend;
	int eof;
	const char *type;
	size_t typelen;
	int *mval;		/* value token of each top-level member */
	size_t nm, mcap;
	char lastpid[32], lasttid[32];	/* rec_frame's previous thread, when short */
	size_t lastpid_len, lasttid_len;	/* (size_t)-1: none */
} rec_reader;

void rec_reader_init(rec_reader *r, FILE *fp, const char *name);
void rec_reader_free(rec_reader *r);

/* Read the next non-empty line.  Returns 1, or 0 at end of input. */
int rec_next(rec_reader *r);

/* Does the current line have type `type`?  Parses only when the prefix is unusual. */
int rec_is(rec_reader *r, const char *type);

/* The current line's type (points into the line; *n is its length). */
const char *rec_type(rec_reader *r, size_t *n);

/* Tokenize the current line; dies with exit 1 and "name:line" when it is not a JSON object. */
void rec_parse(rec_reader *r);

/* Top-level member lookup on the parsed line: token index or -1. */
int rec_get(rec_reader *r, const char *key);

/* Typed getters (parse on demand).  Return 1 when present with that type. */
int rec_get_str(rec_reader *r, const char *key, sbuf *out);
int rec_get_num(rec_reader *r, const char *key, double *out);
int rec_get_int(rec_reader *r, const char *key, long long *out);
int rec_get_bool(rec_reader *r, const char *key, int *out);

/*
 * The fast path for the records our own writers produce, whose members come
 * in a fixed order: match the whole current line against `layout`, which is
 * the line's exact text with conversions in place of values:
 *   %s  a string of printable ASCII without escapes; takes (const char **s,
 *       size_t *n), the span inside the quotes (in the line buffer)
 *   %f  a JSON number; takes double *, the value rec_get_num() would give
 *   %i  a JSON number; takes long long *, the value rec_get_int() would give
 * e.g. "{\"type\":\"frame\",\"t\":%i,\"name\":%s,\"ts\":%f}".
 * Returns 1 on an exact match.  Returns 0 on any difference (another member
 * order, an extra member, an escape, a non-ASCII byte, an integer out of
 * range), and the caller takes the general getters, which give the same
 * values for a matching line; outputs may be partly written then.
 */
int rec_match(rec_reader *r, const char *layout, ...);

/*
 * A "frame" record in the layout trace-extract writes (REC_FRAME_LAYOUT),
 * read with rec_match: frames are nine records in ten of a stack-traced
 * stream.  Spans point into the line buffer (valid until rec_next).
 */
#define REC_FRAME_LAYOUT "{\"type\":\"frame\",\"t\":%i,\"name\":%s,\"pid\":%s," \
	"\"tid\":%s,\"ts\":%f,\"dur\":%f}"

struct rec_frame {
	long long t;
	const char *name, *pid, *tid;
	size_t name_len, pid_len, tid_len;
	double ts, dur;			/* microseconds */
	int same_thread;	/* pid and tid as in the reader's previous matched frame */
};

/*
 * Read the current line as a frame in REC_FRAME_LAYOUT.  Returns 1, or 0
 * when the line is anything else (the caller takes the general getters).
 * same_thread lets a tool skip interning the thread again: consecutive
 * frames mostly share it.
 */
int rec_frame(rec_reader *r, struct rec_frame *f);

/* Open a record file for reading ("-" is stdin); dies with exit 1 on failure. */
FILE *rec_open(const char *path);

#endif
