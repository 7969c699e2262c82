/*
 * One JSON value at a time, as jsmn tokens (one event object of a trace,
 * or one record line, or one side file).  Token indexes refer to
 * json_doc.tok; spans point into the caller's text, which must outlive the
 * doc's use.  The doc owns only its token array (grown on demand; freed by
 * json_doc_free).
 *
 * Limits (issue 21), the same for every JSON input -- trace events, record
 * lines, server args, mapping and site files, catalogs, server replies:
 * containers nest at most JSON_MAX_DEPTH deep, and one value is at most
 * json_max_bytes() long.  Past either, the parse fails with JSON_EDEPTH or
 * JSON_ESIZE and the byte offset, and the tool exits 1 naming the limit
 * (json_limit_text); nothing recurses on the nesting, so no input can
 * exhaust the stack.
 */
#ifndef JSON_H
#define JSON_H

/*
 * Parent links let jsmn close a container in O(1) instead of walking back
 * over the tokens; every translation unit must agree on the token layout, so
 * it is set here and in jsmn_impl.c, never on a command line.
 */
#ifndef JSMN_PARENT_LINKS
#define JSMN_PARENT_LINKS
#endif
#define JSMN_HEADER
#include <jsmn.h>
#undef JSMN_HEADER

#include <stddef.h>

#include "sbuf.h"

typedef struct {
	const char *js;
	size_t len;
	jsmntok_t *tok;
	int ntok;
	unsigned cap;
	size_t err_off;		/* after a failed json_parse: where it failed */
	int depth;		/* after json_parse: the deepest nesting (0: a scalar) */
} json_doc;

/* Containers nested deeper than this are refused (the trace scanner's limit too). */
#define JSON_MAX_DEPTH 1024

/* What json_parse returns. */
enum { JSON_OK = 0, JSON_EINVAL = -1, JSON_EDEPTH = -2, JSON_ESIZE = -3 };

/*
 * The most bytes one JSON value may have: 1 GiB, or TRIAGE_MAX_JSON_BYTES
 * from the environment (bytes, or with a K, M or G suffix; binary units),
 * at most 2 GiB - 2 since token offsets are int.  Read once.
 */
size_t json_max_bytes(void);

/*
 * Which limit a JSON_EDEPTH or JSON_ESIZE names, as a phrase for messages:
 * "nested deeper than the limit of 1024 levels", "larger than the limit of
 * 1 GiB"; other codes give "not valid JSON".  Static storage.
 */
const char *json_limit_text(int err);

/*
 * The general tokenizer (jsontok.c): the tokens jsmn makes for js[0..len)
 * (one value with optional whitespace around it), in time linear in the
 * length at any depth.  Accepts what the trace scanner accepts: strict
 * JSON plus raw control characters in strings, NaN / Infinity / inf
 * literals (any case, signed) and a trailing comma before a closing
 * bracket (flags 0).  Returns JSON_OK, or an error code with the failing
 * byte offset in *erroff.
 */
int json_tokenize(json_doc *d, const char *js, size_t len, int flags, size_t *erroff);
/* json_tokenize flags: Python's json grammar (json_valid), none of the leniencies above. */
#define JSON_TOK_STRICT 1

/* Value kinds as the reference's JSON module would see them. */
enum json_kind {
	JK_MISSING = 0,		/* index < 0 */
	JK_NULL, JK_TRUE, JK_FALSE,
	JK_INT,			/* number without fraction or exponent */
	JK_FLOAT,		/* number with fraction/exponent, or NaN/Infinity */
	JK_STR, JK_OBJ, JK_ARR
};

/* Is a number token one of the NaN / Infinity / nan / inf literals? */
int json_nonfinite_literal(const char *s, size_t n);

/*
 * Tokenize js[0..len), one JSON value (json_tokenize).  Returns JSON_OK (0),
 * or JSON_EINVAL, JSON_EDEPTH or JSON_ESIZE (all negative) with the byte
 * offset in d->err_off; callers name the limit with json_limit_text.
 */
int json_parse(json_doc *d, const char *js, size_t len);
void json_doc_free(json_doc *d);

/*
 * The fast path for the common case: tokenize the one JSON object that
 * starts at js[0] when it is strictly valid JSON (RFC 8259: no raw control
 * characters in strings, no NaN literals, no trailing commas) and at most 64
 * containers deep.  The tokens are exactly those jsmn makes for the same
 * text (lenient mode, parent links), so every reader of a json_doc works
 * unchanged.  The object may be followed by more text.
 *
 * Returns the object's length in bytes, or 0 when the text is unusual,
 * invalid or ends before the object closes; the doc is then unusable until
 * the caller takes the general path (the scanner's validation, json_parse).
 * A member name with an escape, or an escaped top-level "ph" value, is
 * unusual: the general path decodes them (json_decode_names, issue 21).
 */
size_t json_parse_object(json_doc *d, const char *js, size_t len);

/*
 * Member selection: the values of a few known members of an object, and of
 * one member's object value (a trace event's "args"), found in one pass.
 * idx[i] for i < ntop is the value token of top[i], then idx[ntop + j] that
 * of inner[j] in the object value of top[nest]; -1 when absent.  Of
 * duplicate members the last counts, as for json_get.  Names are compared
 * byte for byte with the raw key text.
 */
struct json_key {
	const char *s;
	size_t n;		/* strlen(s) */
};
#define JSON_KEY(lit) { lit, sizeof(lit) - 1 }

struct json_keys {
	unsigned ntop, ninner;
	struct json_key top[16];
	struct json_key inner[16];
	int nest;		/* index in top of the searched object member, or -1 */
};

/*
 * The fast path of selection: what json_parse_object accepts, validated
 * the same way, but tokenized only as far as the selection needs: d gets
 * the root object (token 0) and a token for each selected value (a string,
 * a primitive, or the nest member's object), each exactly as jsmn makes it,
 * and idx their indexes.  Returns the object's length, or 0 when the text is
 * not strictly valid, or a selected value other than the nest object is an
 * object or array, or a key at a selected level has an escape: the caller
 * then tokenizes the text in full (json_parse) and selects with
 * json_select_doc, to the same values.
 */
size_t json_select_object(json_doc *d, const char *js, size_t len, const struct json_keys *k,
    int *idx);

/* Selection in a fully tokenized doc whose token 0 is an object. */
void json_select_doc(const json_doc *d, const struct json_keys *k, int *idx);

/*
 * Is s[0..n) exactly one JSON value, with only whitespace around it, as
 * Python's json module reads it (RFC 8259 plus the NaN, Infinity and
 * -Infinity literals; raw control characters in strings refused), within
 * the limits above?  For replies of servers, not for traces.
 */
int json_valid(const char *s, size_t n);

/* Index of the token after the whole subtree at i (ntok when i is out of range). */
int json_skip(const json_doc *d, int i);

/*
 * Value index for `key` in the object at obj (last duplicate wins), or -1.
 * Member names are compared decoded: "n\u0061me" is "name" (issue 21).
 */
int json_get(const json_doc *d, int obj, const char *key);

/* Does the string token i, decoded, equal s[0..n)?  0 for any other token. */
int json_str_eq(const json_doc *d, int i, const char *s, size_t n);

enum json_kind json_kind(const json_doc *d, int i);

/* Raw token span (string tokens exclude the quotes). */
const char *json_span(const json_doc *d, int i, size_t *n);

/*
 * Decode a string token into valid UTF-8: escapes resolved, lone
 * surrogates and invalid bytes replaced by U+FFFD.  U+0000 (an escaped
 * \u0000 or a raw NUL) is spelled C0 80, as modified UTF-8 does, so that
 * the C strings every tool keeps names in never end inside a name and
 * "abc\u0000def" stays apart from "abc\u0000xyz" (issue 27); json_quote
 * writes it back as \u0000 and common/esc.h shows it as \x00.  Appends to
 * out (no reset).  *repl (if given) is incremented per replacement.
 * Returns 1 if the token was copied verbatim (no escapes, nothing
 * replaced).
 */
int json_str_append(const json_doc *d, int i, sbuf *out, unsigned *repl);
/* Same, resetting out first. */
void json_str(const json_doc *d, int i, sbuf *out, unsigned *repl);

/* Python str() of the value at i (§1.2 to-text); missing gives "None".  Iterative. */
void json_pystr(const json_doc *d, int i, sbuf *out, unsigned *repl);

/* Python float() of the value (§1.2 to-double).  Returns 1 or 0. */
int json_todouble(const json_doc *d, int i, double *out);

/* coerce_optional_int (§1.2).  Returns 1 (present) or 0 (absent). */
int json_coerce_int(const json_doc *d, int i, long long *out);

/* Python truthiness of the value; missing is falsy. */
int json_truthy(const json_doc *d, int i);

/*
 * Append the value at i as compact JSON (strings re-escaped, valid UTF-8).
 * Iterative: any depth the tokenizer allows.
 */
void json_write_compact(const json_doc *d, int i, sbuf *out);

/*
 * When the object at token 0 has a member name with an escape, at any
 * depth, or an escaped top-level "ph" value, write it to out (reset first)
 * with those decoded and everything else as it is, and return 1; else
 * return 0.  Readers that compare names or "ph" on the raw text (the trace
 * scanner's events) re-tokenize the result (issue 21).
 */
int json_decode_names(const json_doc *d, sbuf *out);

/*
 * Append s[0..n) as a JSON string literal, quotes included: control
 * characters escaped, C0 80 (U+0000 as json_str_append spells it) as
 * \u0000.
 */
void json_quote(sbuf *out, const char *s, size_t n);

/* Length of the leading run of s[0..n) free of '"', '\\' and control characters. */
size_t json_string_run(const char *s, size_t n);

/*
 * Length of the strict JSON number (RFC 8259, no NaN or Infinity) at the
 * start of s[0..n), or 0 when none starts there.
 */
size_t json_number_len(const char *s, size_t n);

/*
 * Length of the leading run of s[0..n) that is printable ASCII other than
 * '"' and '\\': text that reads the same inside and outside a JSON string.
 */
size_t json_plain_len(const char *s, size_t n);

/* Decode one UTF-8 code point; returns its length or 0 when invalid. */
size_t utf8_decode(const unsigned char *p, size_t n, unsigned *cp);

#endif
