/*
 * JSON-lines records (man/man5/triage-records.5): one object per line with
 * "type" as its first member, typed by the record table (rectab.h).
 *
 * Writing: rec_begin(type) .. rec_<kind>(member, ...) .. rec_end() build one
 * line and write it to stdout.  Member ids come from the table, so the key
 * text is the table's; members must be written in table order, and
 * rec_end() checks that every required member was written (a violation is
 * a bug in the tool: it aborts with a message).  Numbers are printed as the
 * shortest text that strtod() maps back to the same double, so times
 * survive any number of pipe stages unchanged.
 *
 * Reading: a rec_reader yields one line at a time; rec_type_of() names its
 * type from the line prefix without parsing, and rec_read() decodes the
 * line into the type's struct (struct rec_<type>).  The decoding policy is
 * the same for every tool:
 *   - a required member that is missing or null, or any member whose value
 *     has the wrong JSON type, ends the run with exit 1 and
 *     "file:line: <type> record: member '<m>' ...";
 *   - an optional member that is missing or null leaves its bit in `has`
 *     clear and its field at the table's default (zero when it has none);
 *   - unknown members are ignored; the last of duplicate members wins;
 *   - member names and the type are compared decoded ("n\u0061me" is
 *     "name"), like every JSON name the tools read (issue 21).
 * Lines our own writers produce (members in table order, plain strings)
 * are decoded by matching the table's layout without tokenizing; any other
 * line takes the general path, which gives the same values.
 *
 * Strings in a decoded struct are (pointer, length) spans, valid until the
 * next rec_next() on that reader: into the line when the JSON text needed
 * no decoding, else into the reader's scratch buffer.  JSON members are the
 * value's raw text.
 */
#ifndef REC_H
#define REC_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "rectab.h"
#include "sbuf.h"

/* The record format version written in "trace" and "input" records. */
#define REC_VERSION 1

/* A string span: s[0..n), not NUL-terminated. */
struct rstr {
	const char *s;
	size_t n;
};

/* ---- what the table generates ---- */

enum rec_type {
#define REC_TYPE_ENUM(t, MEMBERS, X) RT_##t,
	REC_TYPES(REC_TYPE_ENUM, 0)
#undef REC_TYPE_ENUM
	RT_COUNT,
	RT_UNKNOWN = RT_COUNT	/* a type the table does not know */
};

/* Member ids: RM_<type>_<member>, one range per type after RM_<type>__. */
enum rec_member {
#define REC_MEMBER_ENUM(t, m, kind, need, dflt) RM_##t##_##m,
#define REC_TYPE_MEMBERS(t, MEMBERS, X) RM_##t##__, MEMBERS(REC_MEMBER_ENUM, t)
	REC_TYPES(REC_TYPE_MEMBERS, 0)
#undef REC_TYPE_MEMBERS
#undef REC_MEMBER_ENUM
	RM_COUNT
};

enum rec_kind { RK_INT, RK_NUM, RK_BOOL, RK_STR, RK_JSON };

#define REC_CTYPE_INT long long
#define REC_CTYPE_NUM double
#define REC_CTYPE_BOOL int
#define REC_CTYPE_STR struct rstr
#define REC_CTYPE_JSON struct rstr

/* struct rec_<type>: `has` bit REC_BIT(type, m) is set when member m was present. */
#define REC_FIELD(t, m, kind, need, dflt) REC_CTYPE_##kind m;
#define REC_STRUCT(t, MEMBERS, X) struct rec_##t { uint64_t has; MEMBERS(REC_FIELD, t) };
REC_TYPES(REC_STRUCT, 0)
#undef REC_STRUCT
#undef REC_FIELD

#define REC_BIT(t, m) (1ULL << (RM_##t##_##m - RM_##t##__ - 1))
#define REC_HAS(p, t, m) (((p)->has & REC_BIT(t, m)) != 0)

/* One member of the table. */
struct rec_memberinfo {
	enum rec_type type;
	const char *name;	/* the JSON key */
	const char *lead;	/* ,"<name>": as it appears on a line */
	unsigned char leadlen;
	unsigned char kind;	/* enum rec_kind */
	unsigned char required;
	unsigned short offset;	/* of the field in struct rec_<type> */
	const char *dflt;	/* an absent optional member's value as text, or NULL */
};

/* One type of the table: its members are ids first .. first + n - 1. */
struct rec_typeinfo {
	const char *name;
	enum rec_member first;
	unsigned n;
	size_t size;		/* sizeof(struct rec_<type>) */
	uint64_t required;	/* mask of the required members' bits */
};

extern const struct rec_memberinfo rec_members[RM_COUNT];
extern const struct rec_typeinfo rec_types[RT_COUNT];

/* The type named s[0..n), or RT_UNKNOWN. */
enum rec_type rec_type_named(const char *s, size_t n);

/*
 * Is t one of the per-event types (kernel, launch, cpu_op, sync, and the
 * kernel_stages and kernel_name records that stand for the kernels' stage
 * and name members), the bulk of a
 * stream?  The last filter of a pipeline to read them leaves them out
 * of its output with --drop-events when only the report's tables follow
 * (kernel-roofline(1), overlap-sweep(1); issue 30).
 */
static inline int
rec_is_event(enum rec_type t)
{
	return t == RT_kernel || t == RT_launch || t == RT_cpu_op || t == RT_sync ||
	    t == RT_kernel_stages || t == RT_kernel_name;
}

/* ---- writing ---- */

void rec_begin(enum rec_type t);
void rec_str(enum rec_member m, const char *s, size_t n);
void rec_cstr(enum rec_member m, const char *s);	/* NULL writes null */
/* A string member whose value is given quoted already, as json_quote writes it. */
void rec_quoted(enum rec_member m, const char *quoted, size_t n);
void rec_rstr(enum rec_member m, struct rstr s);
/*
 * A row's id (issue 29): the text "PREFIX-N", N the row's place among the
 * rows of its type that the tool writes, from 1 ("kernel-3").  The report's
 * JSON document and trace-annotate's findings carry the same text.
 */
void rec_id(enum rec_member m, const char *prefix, long long n);
void rec_int(enum rec_member m, long long v);
void rec_num(enum rec_member m, double v);		/* non-finite: null */
void rec_numtext(enum rec_member m, const char *txt, size_t n);	/* verbatim JSON number */
void rec_bool(enum rec_member m, int v);
void rec_null(enum rec_member m);			/* an optional member written as null */
void rec_json(enum rec_member m, const char *json, size_t n);	/* pre-built JSON value */
/*
 * A member of any kind whose value is the n bytes given, unchecked: for a
 * tool that keeps its records aside in a private form and restores the
 * value before the record leaves it (trace-extract's spool, issue 30).
 */
void rec_verbatim(enum rec_member m, const char *text, size_t n);
void rec_end(void);

/*
 * Drop the record being built, if any, writing nothing: for a tool that
 * writes one more record on its way out of a failed run (exit handlers).
 */
void rec_abandon(void);

/*
 * Write a decoded record back: the members whose `has` bit is set, in table
 * order.  rec points to the type's struct.
 */
void rec_write(enum rec_type t, const void *rec);

/* Write a whole line (without its '\n') verbatim, adding the newline. */
void rec_line(const char *line, size_t n);

/*
 * Send the records written from now on to fp (not closed here); NULL
 * restores stdout.  For a tool whose stdout carries something else
 * (trace-capture's --records).  Write errors show at fflush/fclose of fp.
 */
void rec_output(FILE *fp);

/*
 * Reopen a record written earlier to add members: text[0..n) is one whole
 * record of type t (its line without the '\n'), whose members all precede
 * member `after` or are it.  Continue with rec_<kind>() calls for members
 * after `after`, in table order, and rec_end().  A text that does not end
 * with '}' is an internal error (abort).
 */
void rec_extend(enum rec_type t, enum rec_member after, const char *text, size_t n);

/* ---- reading ---- */

typedef struct {
	FILE *fp;
	const char *name;	/* for messages: file name or "<stdin>" */
	size_t lineno;
	char *line;		/* current line, NUL-terminated, no '\n' */
	size_t len;
	json_doc doc;		/* the tokenized line, once rec_parse() ran */
	int parsed;
	unsigned long nfast;	/* lines rec_read() decoded without tokenizing (tests) */
	/* private */
	char *buf;
	size_t bcap, bstart, bend;
	size_t scanned;		/* bytes after bstart known to hold no newline (linear long lines) */
	int eof;
	unsigned blank;		/* blank lines in a row */
	unsigned long long nread;	/* bytes read, under the input limit */
	const char *type;	/* the type span in the line, or NULL */
	size_t typelen;
	int tid;		/* enum rec_type of the line, -1 before lookup */
	int *mval;		/* value token of each top-level member */
	size_t nm, mcap;
	sbuf scratch;		/* decoded strings of the current record */
	sbuf typebuf, keybuf;	/* an escaped type value or member name, decoded */
	struct rec_knames *knames;	/* the kernel_name records read so far, or NULL */
} rec_reader;

/* name: used in messages.  The reader does not own fp. */
void rec_reader_init(rec_reader *r, FILE *fp, const char *name);
void rec_reader_free(rec_reader *r);

/*
 * Read the next non-empty line.  Returns 1, or 0 at end of input.  A line
 * longer than json_max_bytes() ends the run with exit 1 and its number
 * (issue 21), before it is held whole.
 */
int rec_next(rec_reader *r);

/* The current line's type: from the line prefix, parsing only unusual lines. */
enum rec_type rec_type_of(rec_reader *r);
/* Its type text, decoded (valid until the next line; *n is its length). */
const char *rec_type(rec_reader *r, size_t *n);
/* Does the current line have the type named `type`? */
int rec_is(rec_reader *r, const char *type);

/*
 * Decode the current line, whose type must be t, into *out (a struct
 * rec_<t>), by the policy above.  Dies with exit 1 on a malformed record.
 * REC_READ(r, type, p) checks that p points to the right struct.
 *
 * A kernel record that gives name_ref instead of name (trace-extract
 * --name-refs, issue 30) gets its name from the kernel_name record of its
 * trace and id that came before it in the stream, after the stream's last
 * trace record (rec_type_of keeps each as it types its line, until the
 * next trace record; a name_ref without
 * one, a record with both or neither, and a kernel_name record whose
 * trace and id came before, die with exit 1).
 * Its name then stays valid until the stream's next trace record or the
 * reader is freed, and has the bits of both name and name_ref.
 */
void rec_read(rec_reader *r, enum rec_type t, void *out);
#define REC_READ(r, type, p) rec_read((r), RT_##type, (1 ? (p) : (struct rec_##type *)0))

/*
 * Tokenize the current line into r->doc (for members a tool walks itself,
 * such as a JSON member's nested values).  Dies with exit 1 and
 * "name:line" when it is not a JSON object, or nests deeper than
 * JSON_MAX_DEPTH (the message names the limit and the byte).
 */
void rec_parse(rec_reader *r);

/* Parse a JSON member's text (from rec_read) into d; dies like rec_parse. */
void rec_parse_json(rec_reader *r, json_doc *d, struct rstr text);

/* die with "name:line: <msg>" (exit 1): a record that breaks a tool's rule. */
void rec_die(const rec_reader *r, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 2, 3)));

/*
 * For filters at the end of their reading: exit 3 (design: nothing to
 * analyze) with a message when no reader of this process has read a single
 * record, so that an empty stream, usually an upstream failure, is never
 * a silent success.
 */
void rec_require_records(void);

/*
 * Open a record file for reading ("-" is stdin); dies with exit 1 on
 * failure.  A gzip file (a saved report, triage --format jsonl | gzip) is
 * inflated as it is read; any record stream is read under the input limit
 * of reslimit.h (TRIAGE_MAX_INPUT_BYTES), issue 27.
 * More than 1,000 blank lines in a row end any record stream with exit 1.
 */
FILE *rec_open(const char *path);

/*
 * Make a decoded record outlive its line: copy every string and JSON span
 * of rec (a struct rec_<t>) into one heap block, each NUL-terminated, and
 * point the spans there.  Returns the block; the caller frees it.
 */
char *rec_detach(enum rec_type t, void *rec);

/* Heap copy of a span as a NUL-terminated string. */
char *rstr_dup(struct rstr s);
/*
 * Does the span equal the C string?  Inline, so that a literal's length
 * is known where it is called (the tools test categories and kinds of
 * every record this way).
 */
static inline int
rstr_eq(struct rstr s, const char *c)
{
	size_t n = strlen(c);

	return s.n == n && (n == 0 || memcmp(s.s, c, n) == 0);
}

#endif
