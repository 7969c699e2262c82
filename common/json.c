/* Access to one tokenized JSON value, with the reference's coercions. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "jsonlex.h"
#include "num.h"
#include "xalloc.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/*
 * Plain runs inside strings, 16 bytes at a time where SSE2 is there (every
 * x86-64): string text is most of a trace's bytes.
 */

/* Length of the run at p[0..n) free of '"', '\\' and control characters. */
static inline size_t
run_unquoted(const unsigned char *p, size_t n)
{
	size_t k = 0;
#if defined(__SSE2__)
	const __m128i dq = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\'),
	    c1f = _mm_set1_epi8(0x1f);

	for (; k + 16 <= n; k += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(p + k));
		__m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, dq),
		    _mm_cmpeq_epi8(v, bs)), _mm_cmpeq_epi8(_mm_max_epu8(v, c1f), c1f));
		int m = _mm_movemask_epi8(hit);
		if (m)
			return k + (size_t)__builtin_ctz((unsigned)m);
	}
#endif
	for (; k < n; k++)
		if (p[k] == '"' || p[k] == '\\' || p[k] < 0x20)
			break;
	return k;
}

size_t
json_plain_len(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t k = 0;
#if defined(__SSE2__)
	const __m128i dq = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\'),
	    sp = _mm_set1_epi8(0x20), del = _mm_set1_epi8(0x7f);

	for (; k + 16 <= n; k += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(p + k));
		/* signed: bytes >= 0x80 are negative, so below ' ' too */
		__m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, dq),
		    _mm_cmpeq_epi8(v, bs)), _mm_or_si128(_mm_cmplt_epi8(v, sp),
		    _mm_cmpeq_epi8(v, del)));
		int m = _mm_movemask_epi8(hit);
		if (m)
			return k + (size_t)__builtin_ctz((unsigned)m);
	}
#endif
	for (; k < n; k++)
		if (p[k] == '"' || p[k] == '\\' || p[k] < 0x20 || p[k] >= 0x7f)
			break;
	return k;
}

/* Length of the run at p[0..n) of ASCII without '\\' or NUL. */
static inline size_t
run_plain_ascii(const unsigned char *p, size_t n)
{
	size_t k = 0;
#if defined(__SSE2__)
	const __m128i bs = _mm_set1_epi8('\\'), zero = _mm_setzero_si128();

	for (; k + 16 <= n; k += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(p + k));
		int m = _mm_movemask_epi8(_mm_or_si128(v, _mm_or_si128(_mm_cmpeq_epi8(v, bs),
		    _mm_cmpeq_epi8(v, zero))));
		if (m)
			return k + (size_t)__builtin_ctz((unsigned)m);
	}
#endif
	for (; k < n; k++)
		if (p[k] == '\\' || p[k] >= 0x80 || p[k] == 0)
			break;
	return k;
}

int
json_nonfinite_literal(const char *s, size_t n)
{
	/* NaN, Infinity, nan, inf with an optional sign; numbers start otherwise. */
	if (n && (s[0] == '-' || s[0] == '+')) {
		s++;
		n--;
	}
	return n && ((s[0] | 0x20) == 'n' || (s[0] | 0x20) == 'i');
}

int
json_parse(json_doc *d, const char *js, size_t len)
{
	int r = json_tokenize(d, js, len, 0, &d->err_off);

	return r == JSON_OK && d->ntok > 0 ? JSON_OK : r != JSON_OK ? r : JSON_EINVAL;
}

void
json_doc_free(json_doc *d)
{
	free(d->tok);
	d->tok = NULL;
	d->cap = 0;
	d->ntok = 0;
}

int
json_skip(const json_doc *d, int i)
{
	int pending;

	if (i < 0 || i >= d->ntok)
		return d->ntok;		/* past the end: nothing to skip */
	pending = d->tok[i].size;
	i++;
	while (pending > 0 && i < d->ntok) {
		pending += d->tok[i].size - 1;
		i++;
	}
	return i;
}

int
json_get(const json_doc *d, int obj, const char *key)
{
	int i, n, k, found = -1;
	size_t kl = strlen(key);

	if (obj < 0 || obj >= d->ntok || d->tok[obj].type != JSMN_OBJECT)
		return -1;
	n = d->tok[obj].size;
	i = obj + 1;
	for (k = 0; k < n && i < d->ntok; k++) {
		if (json_str_eq(d, i, key, kl))
			found = i + 1;
		i = json_skip(d, i + 1);
	}
	return found;
}

int
json_str_eq(const json_doc *d, int i, const char *s, size_t n)
{
	const jsmntok_t *t = &d->tok[i];
	const char *r = d->js + t->start;
	size_t rn = (size_t)(t->end - t->start);
	sbuf dec = SBUF_INIT;
	int eq;

	if (t->type != JSMN_STRING)
		return 0;
	if (!memchr(r, '\\', rn))
		return rn == n && memcmp(r, s, n) == 0;
	if (rn <= n)
		return 0;	/* every escape is longer than what it stands for */
	json_str(d, i, &dec, NULL);
	eq = dec.len == n && memcmp(dec.s, s, n) == 0;
	sb_free(&dec);
	return eq;
}

const char *
json_span(const json_doc *d, int i, size_t *n)
{
	*n = (size_t)(d->tok[i].end - d->tok[i].start);
	return d->js + d->tok[i].start;
}

enum json_kind
json_kind(const json_doc *d, int i)
{
	const jsmntok_t *t;
	const char *s;
	size_t n, k;

	if (i < 0 || i >= d->ntok)
		return JK_MISSING;
	t = &d->tok[i];
	switch (t->type) {
	case JSMN_OBJECT:
		return JK_OBJ;
	case JSMN_ARRAY:
		return JK_ARR;
	case JSMN_STRING:
		return JK_STR;
	default:
		break;
	}
	s = d->js + t->start;
	n = (size_t)(t->end - t->start);
	if (n == 0)
		return JK_NULL;
	switch (s[0]) {
	case 'n':
		return n == 4 && memcmp(s, "null", 4) == 0 ? JK_NULL : JK_FLOAT;
	case 't':
		return JK_TRUE;
	case 'f':
		return JK_FALSE;
	default:
		break;
	}
	if (json_nonfinite_literal(s, n))
		return JK_FLOAT;
	/* A number: a fraction or an exponent makes it a float. */
	for (k = 0; k < n; k++)
		if (s[k] == '.' || s[k] == 'e' || s[k] == 'E')
			return JK_FLOAT;
	return JK_INT;
}

size_t
utf8_decode(const unsigned char *p, size_t n, unsigned *cp)
{
	unsigned c;

	if (n == 0)
		return 0;
	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		if (n < 2 || (p[1] & 0xc0) != 0x80)
			return 0;
		*cp = ((unsigned)(p[0] & 0x1f) << 6) | (p[1] & 0x3f);
		return 2;
	}
	if (p[0] >= 0xe0 && p[0] <= 0xef) {
		if (n < 3 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
			return 0;
		c = ((unsigned)(p[0] & 0x0f) << 12) | ((unsigned)(p[1] & 0x3f) << 6) |
		    (p[2] & 0x3f);
		if (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))
			return 0;
		*cp = c;
		return 3;
	}
	if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		if (n < 4 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 ||
		    (p[3] & 0xc0) != 0x80)
			return 0;
		c = ((unsigned)(p[0] & 0x07) << 18) | ((unsigned)(p[1] & 0x3f) << 12) |
		    ((unsigned)(p[2] & 0x3f) << 6) | (p[3] & 0x3f);
		if (c < 0x10000 || c > 0x10ffff)
			return 0;
		*cp = c;
		return 4;
	}
	return 0;
}

static void
put_utf8(sbuf *out, unsigned c)
{
	char b[4];

	if (c == 0) {
		sb_add(out, "\xc0\x80", 2);	/* U+0000, kept inside C strings (json.h) */
	} else if (c < 0x80) {
		sb_addc(out, (char)c);
	} else if (c < 0x800) {
		b[0] = (char)(0xc0 | (c >> 6));
		b[1] = (char)(0x80 | (c & 0x3f));
		sb_add(out, b, 2);
	} else if (c < 0x10000) {
		b[0] = (char)(0xe0 | (c >> 12));
		b[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		b[2] = (char)(0x80 | (c & 0x3f));
		sb_add(out, b, 3);
	} else {
		b[0] = (char)(0xf0 | (c >> 18));
		b[1] = (char)(0x80 | ((c >> 12) & 0x3f));
		b[2] = (char)(0x80 | ((c >> 6) & 0x3f));
		b[3] = (char)(0x80 | (c & 0x3f));
		sb_add(out, b, 4);
	}
}

static int
hex4(const char *s, unsigned *v)
{
	unsigned r = 0;
	int i;

	for (i = 0; i < 4; i++) {
		char c = s[i];
		r <<= 4;
		if (c >= '0' && c <= '9')
			r |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			r |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			r |= (unsigned)(c - 'A' + 10);
		else
			return 0;
	}
	*v = r;
	return 1;
}

#define REPL 0xfffd

int
json_str_append(const json_doc *d, int i, sbuf *out, unsigned *repl)
{
	size_t n, k = 0, len;
	const char *s = json_span(d, i, &n);
	const unsigned char *u = (const unsigned char *)s;
	unsigned cp, lo;
	int verbatim = 1;

	/* Fast path: plain ASCII without escapes. */
	k = run_plain_ascii(u, n);
	if (k == n) {
		sb_add(out, s, n);
		return 1;
	}
	sb_grow(out, n);
	sb_add(out, s, k);
	while (k < n) {
		if (u[k] == '\\' && k + 1 < n) {
			verbatim = 0;
			switch (s[k + 1]) {
			case 'b': sb_addc(out, '\b'); k += 2; continue;
			case 'f': sb_addc(out, '\f'); k += 2; continue;
			case 'n': sb_addc(out, '\n'); k += 2; continue;
			case 'r': sb_addc(out, '\r'); k += 2; continue;
			case 't': sb_addc(out, '\t'); k += 2; continue;
			case 'u':
				if (k + 6 <= n && hex4(s + k + 2, &cp)) {
					k += 6;
					if (cp >= 0xd800 && cp <= 0xdbff && k + 6 <= n &&
					    s[k] == '\\' && s[k + 1] == 'u' &&
					    hex4(s + k + 2, &lo) && lo >= 0xdc00 && lo <= 0xdfff) {
						cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
						k += 6;
					} else if (cp >= 0xd800 && cp <= 0xdfff) {
						cp = REPL;
						if (repl)
							(*repl)++;
					}
					put_utf8(out, cp);
					continue;
				}
				sb_addc(out, s[k + 1]);
				k += 2;
				continue;
			default:
				sb_addc(out, s[k + 1]);
				k += 2;
				continue;
			}
		}
		if (u[k] < 0x80) {
			if (u[k] == 0) {
				put_utf8(out, 0);	/* a raw NUL (accepted, counted) */
				verbatim = 0;
			} else {
				sb_addc(out, s[k]);
			}
			k++;
			continue;
		}
		len = utf8_decode(u + k, n - k, &cp);
		if (len == 0) {
			put_utf8(out, REPL);
			if (repl)
				(*repl)++;
			verbatim = 0;
			k++;
			continue;
		}
		sb_add(out, s + k, len);
		k += len;
	}
	return verbatim;
}

void
json_str(const json_doc *d, int i, sbuf *out, unsigned *repl)
{
	sb_reset(out);
	json_str_append(d, i, out, repl);
}

/*
 * How the iterative writer spells a value: compact JSON, Python's str(),
 * or the text as it is but for member names (and one value) decoded.
 */
enum style { COMPACT, PYREPR, RAWNAMES };

/*
 * One scalar (an empty container's brackets are written by the caller).
 * `top`: the whole value (PYREPR leaves a top-level string unquoted);
 * `decode`: in RAWNAMES, a name or value to write decoded.
 */
static void
write_scalar(const json_doc *d, int i, sbuf *out, enum style st, int top, int decode,
    unsigned *repl)
{
	char buf[40];
	size_t n;
	const char *s;
	double v;
	sbuf t = SBUF_INIT;

	switch (json_kind(d, i)) {
	case JK_MISSING:
	case JK_NULL:
		sb_adds(out, st == PYREPR ? "None" : "null");
		return;
	case JK_TRUE:
		sb_adds(out, st == PYREPR ? "True" : "true");
		return;
	case JK_FALSE:
		sb_adds(out, st == PYREPR ? "False" : "false");
		return;
	case JK_INT:
		s = json_span(d, i, &n);
		if (st == PYREPR && n == 2 && s[0] == '-' && s[1] == '0')
			sb_addc(out, '0');
		else
			sb_add(out, s, n);
		return;
	case JK_FLOAT:
		s = json_span(d, i, &n);
		if (st == RAWNAMES) {
			sb_add(out, s, n);
		} else if (st == PYREPR) {
			json_todouble(d, i, &v);
			sb_adds(out, num_repr(v, buf));
		} else if (json_nonfinite_literal(s, n)) {
			json_todouble(d, i, &v);
			sb_adds(out, num_json(v, buf));	/* null: JSON has no NaN */
		} else
			sb_add(out, s, n);
		return;
	case JK_STR:
		if (st == RAWNAMES && !decode) {
			s = json_span(d, i, &n);
			sb_addc(out, '"');
			sb_add(out, s, n);
			sb_addc(out, '"');
		} else if (st != PYREPR) {
			json_str(d, i, &t, NULL);
			json_quote(out, t.s ? t.s : "", t.len);
			sb_free(&t);
		} else if (top) {
			json_str_append(d, i, out, repl);
		} else {
			sb_addc(out, '\'');
			json_str_append(d, i, out, repl);
			sb_addc(out, '\'');
		}
		return;
	default:
		return;
	}
}

/*
 * Write the value at i by walking its tokens in order with an explicit
 * stack of open containers (members left to write), so that no nesting
 * depth can exhaust the C stack.
 */
static void
write_value(const json_doc *d, int i, sbuf *out, enum style st, unsigned *repl)
{
	struct open {
		int left;	/* members or elements still to write */
		int obj, first;
	} fixed[64], *stk = fixed;
	size_t sp = 0, cap = sizeof fixed / sizeof fixed[0];
	const char *sep = st == PYREPR ? ", " : ",", *colon = st == PYREPR ? ": " : ":";
	int top = 1, decode = 0;

	if (i < 0 || i >= d->ntok) {
		write_scalar(d, -1, out, st, 1, 0, repl);
		return;
	}
	for (;;) {
		/* a member's key, then its value; an element */
		if (sp > 0) {
			struct open *o = &stk[sp - 1];
			if (!o->first)
				sb_adds(out, sep);
			o->first = 0;
			if (o->obj) {
				write_scalar(d, i, out, st, 0, 1, repl);
				sb_adds(out, colon);
				/* RAWNAMES decodes the top-level "ph" value too (json_decode_names) */
				decode = st == RAWNAMES && sp == 1 && json_str_eq(d, i, "ph", 2);
				i++;
			}
		}
		if (i < d->ntok && (d->tok[i].type == JSMN_OBJECT || d->tok[i].type == JSMN_ARRAY) &&
		    d->tok[i].size > 0) {
			if (sp == cap) {
				struct open *n = xmallocarray(cap * 2, sizeof *n);
				memcpy(n, stk, sp * sizeof *n);
				if (stk != fixed)
					free(stk);
				stk = n;
				cap *= 2;
			}
			stk[sp].left = d->tok[i].size;
			stk[sp].obj = d->tok[i].type == JSMN_OBJECT;
			stk[sp].first = 1;
			sp++;
			sb_addc(out, d->tok[i].type == JSMN_OBJECT ? '{' : '[');
			i++;
			top = 0;
			continue;
		}
		if (i < d->ntok && d->tok[i].type == JSMN_OBJECT)
			sb_adds(out, "{}");
		else if (i < d->ntok && d->tok[i].type == JSMN_ARRAY)
			sb_adds(out, "[]");
		else
			write_scalar(d, i, out, st, top, decode, repl);
		decode = 0;
		i++;
		/* the value is done: close every container it completed */
		while (sp > 0 && --stk[sp - 1].left == 0) {
			sb_addc(out, stk[sp - 1].obj ? '}' : ']');
			sp--;
		}
		if (sp == 0 || i >= d->ntok)
			break;
	}
	while (sp > 0) {	/* only for a doc cut short: keep the output balanced */
		sb_addc(out, stk[sp - 1].obj ? '}' : ']');
		sp--;
	}
	if (stk != fixed)
		free(stk);
}

void
json_pystr(const json_doc *d, int i, sbuf *out, unsigned *repl)
{
	sb_reset(out);
	/* most values are scalars (an event's name, pid, tid): no walk needed */
	if (i < 0 || i >= d->ntok || (d->tok[i].type != JSMN_OBJECT && d->tok[i].type != JSMN_ARRAY))
		write_scalar(d, i, out, PYREPR, 1, 0, repl);
	else
		write_value(d, i, out, PYREPR, repl);
}

int
json_todouble(const json_doc *d, int i, double *out)
{
	size_t n;
	const char *s;
	char buf[512];
	sbuf t = SBUF_INIT;
	int ok;

	switch (json_kind(d, i)) {
	case JK_TRUE:
		*out = 1.0;
		return 1;
	case JK_FALSE:
		*out = 0.0;
		return 1;
	case JK_INT:
	case JK_FLOAT:
		s = json_span(d, i, &n);
		if (json_nonfinite_literal(s, n)) {
			const char *q = (s[0] == '-' || s[0] == '+') ? s + 1 : s;
			if ((q[0] | 0x20) == 'n')
				*out = NAN;
			else
				*out = s[0] == '-' ? -HUGE_VAL : HUGE_VAL;
			return 1;
		}
		if (num_fast_decimal(s, n, out))
			return 1;
		if (n >= sizeof buf) {
			sb_add(&t, s, n);
			*out = strtod(t.s, NULL);
			sb_free(&t);
			return 1;
		}
		memcpy(buf, s, n);
		buf[n] = '\0';
		*out = strtod(buf, NULL);
		return 1;
	case JK_STR:
		json_str(d, i, &t, NULL);
		ok = num_py_float(t.s ? t.s : "", t.len, out);
		sb_free(&t);
		return ok;
	default:
		return 0;
	}
}

int
json_coerce_int(const json_doc *d, int i, long long *out)
{
	size_t n;
	const char *s;
	sbuf t = SBUF_INIT;
	double v;
	int ok;

	switch (json_kind(d, i)) {
	case JK_TRUE:
		*out = 1;
		return 1;
	case JK_FALSE:
		*out = 0;
		return 1;
	case JK_INT:
		s = json_span(d, i, &n);
		return num_py_int(s, n, out);
	case JK_FLOAT:
		if (!json_todouble(d, i, &v) || !isfinite(v) || v != floor(v) ||
		    fabs(v) >= 9.2e18)
			return 0;
		*out = (long long)v;
		return 1;
	case JK_STR:
		json_str(d, i, &t, NULL);
		if (t.len == 0 || (t.len == 4 && memcmp(t.s, "None", 4) == 0)) {
			sb_free(&t);
			return 0;
		}
		ok = num_py_int(t.s, t.len, out);
		sb_free(&t);
		return ok;
	default:
		return 0;
	}
}

int
json_truthy(const json_doc *d, int i)
{
	double v;
	size_t n;

	switch (json_kind(d, i)) {
	case JK_MISSING:
	case JK_NULL:
	case JK_FALSE:
		return 0;
	case JK_TRUE:
		return 1;
	case JK_INT:
	case JK_FLOAT:
		if (!json_todouble(d, i, &v))
			return 0;
		return v != 0.0;	/* NaN is truthy: NaN != 0 */
	case JK_STR:
		json_span(d, i, &n);
		return n != 0;
	case JK_OBJ:
	case JK_ARR:
		return d->tok[i].size != 0;
	}
	return 0;
}

/*
 * Whether any byte of w needs json_quote's attention: below 0x20, '"',
 * '\\' or 0xc0 (exact for "any", word at a time: names are long and seldom
 * need an escape, and quoting them is a tenth of trace-stage; issue 30).
 */
static inline int
quote_any(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
	uint64_t q = w ^ (ones * 0x22), b = w ^ (ones * 0x5c), c = w ^ (ones * 0xc0);

	return (((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((b - ones) & ~b) |
	    ((c - ones) & ~c)) & high ? 1 : 0;
}

void
json_quote(sbuf *out, const char *s, size_t n)
{
	static const char hexd[] = "0123456789abcdef";
	size_t i = 0, start = 0;
	uint64_t w;

	if (!s)
		s = "";		/* an empty sbuf: NULL with n == 0 */
	sb_grow(out, n + 2);
	sb_addc(out, '"');
	while (i < n) {
		unsigned char c;
		if (n - i >= 8) {
			memcpy(&w, s + i, 8);
			if (!quote_any(w)) {
				i += 8;
				continue;
			}
		}
		c = (unsigned char)s[i];
		if (c >= 0x20 && c != '"' && c != '\\' && c != 0xc0) {
			i++;
			continue;
		}
		if (c == 0xc0) {
			/* C0 80 is how decoded text spells U+0000 (json.h) */
			if (i + 1 < n && (unsigned char)s[i + 1] == 0x80) {
				sb_add(out, s + start, i - start);
				sb_add(out, "\\u0000", 6);
				start = i + 2;
				i += 2;
			} else
				i++;
			continue;
		}
		sb_add(out, s + start, i - start);
		start = i + 1;
		switch (c) {
		case '"': sb_add(out, "\\\"", 2); break;
		case '\\': sb_add(out, "\\\\", 2); break;
		case '\n': sb_add(out, "\\n", 2); break;
		case '\t': sb_add(out, "\\t", 2); break;
		case '\r': sb_add(out, "\\r", 2); break;
		default: {
			char e[6] = { '\\', 'u', '0', '0', hexd[c >> 4], hexd[c & 15] };
			sb_add(out, e, 6);
		}
		}
		i++;
	}
	sb_add(out, s + start, n - start);
	sb_addc(out, '"');
}

void
json_write_compact(const json_doc *d, int i, sbuf *out)
{
	write_value(d, i, out, COMPACT, NULL);
}

int
json_decode_names(const json_doc *d, sbuf *out)
{
	int i, esc = 0;

	if (d->ntok == 0 || d->tok[0].type != JSMN_OBJECT)
		return 0;
	for (i = 1; i < d->ntok && !esc; i++) {
		const jsmntok_t *t = &d->tok[i];
		if (t->type != JSMN_STRING || !memchr(d->js + t->start, '\\',
		    (size_t)(t->end - t->start)))
			continue;
		/* a name (a string with a value), or the top-level "ph" value */
		esc = t->size == 1 || (t->parent > 0 && d->tok[t->parent].parent == 0 &&
		    d->tok[t->parent].type == JSMN_STRING && json_str_eq(d, t->parent, "ph", 2));
	}
	if (!esc)
		return 0;
	sb_reset(out);
	write_value(d, 0, out, RAWNAMES, NULL);
	return 1;
}

/* ---- the strict fast path (json_parse_object) ---- */

#define FAST_DEPTH 64
/* Longer numbers are the scanner's error to report (scan.c MAXPRIM). */
#define FAST_MAX_NUMBER 512

/* Append a token; the root has parent -1, every other token adds one to its parent's size. */
static inline int
fast_tok(json_doc *d, int *nt, jsmntype_t type, int start, int parent)
{
	jsmntok_t *t;

	if ((unsigned)*nt >= d->cap) {
		d->cap = d->cap ? d->cap * 2 : 256;
		d->tok = xreallocarray(d->tok, d->cap, sizeof *d->tok);
	}
	t = &d->tok[*nt];
	t->type = type;
	t->start = start;
	t->end = -1;
	t->size = 0;
	t->parent = parent;
	if (parent >= 0)
		d->tok[parent].size++;
	return (*nt)++;
}

/* Is the string token t the value of a top-level "ph" member? */
static int
escaped_ph(const json_doc *d, int t)
{
	const jsmntok_t *k = &d->tok[d->tok[t].parent];

	return k->type == JSMN_STRING && k->parent == 0 && k->end - k->start == 2 &&
	    memcmp(d->js + k->start, "ph", 2) == 0;
}

/* Python's json module also reads these three literals (json_valid). */
static int
nonfinite_at(const unsigned char *p, const unsigned char *e)
{
	if (e - p >= 3 && memcmp(p, "NaN", 3) == 0)
		return 3;
	if (e - p >= 8 && memcmp(p, "Infinity", 8) == 0)
		return 8;
	if (e - p >= 9 && memcmp(p, "-Infinity", 9) == 0)
		return 9;
	return 0;
}

/*
 * The strict tokenizer behind json_parse_object and json_valid: the object
 * or array at js[0]; `literals` lets NaN, Infinity and -Infinity through.
 */
static size_t
parse_container(json_doc *d, const char *js, size_t len, int literals)
{
	const unsigned char *b = (const unsigned char *)js, *p = b, *e = b + len;
	int stack[FAST_DEPTH], sp = 0, nt = 0, par, top, k;
	size_t el;

	/* Token offsets are ints, as in jsmn. */
	if (len == 0 || (*p != '{' && *p != '[') || len > (size_t)0x7fffffff)
		return 0;
	d->js = js;
#define WS() while (p < e && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')) p++
	if (*p == '[') {
		stack[sp++] = fast_tok(d, &nt, JSMN_ARRAY, 0, -1);
		p++;
		WS();
		if (p >= e)
			return 0;
		if (*p == ']')
			goto close;
		par = stack[sp - 1];
		goto value;
	}
	stack[sp++] = fast_tok(d, &nt, JSMN_OBJECT, 0, -1);
	p++;
	/* after '{' */
obj_open:
	WS();
	if (p >= e)
		return 0;
	if (*p == '}')
		goto close;
	/* fall through to a key */
key:
	if (*p != '"')
		return 0;
	par = fast_tok(d, &nt, JSMN_STRING, (int)(p + 1 - b), stack[sp - 1]);
	goto string;
string_done_key:
	WS();
	if (p >= e || *p != ':')
		return 0;
	p++;
	WS();
	/* the value's parent is its key (jsmn's layout) */
	goto value;
value:
	if (p >= e)
		return 0;
	switch (*p) {
	case '"':
		fast_tok(d, &nt, JSMN_STRING, (int)(p + 1 - b), par);
		par = -2;	/* marks a value string */
		goto string;
	case '{':
		if (sp == FAST_DEPTH)
			return 0;
		stack[sp++] = fast_tok(d, &nt, JSMN_OBJECT, (int)(p - b), par);
		p++;
		goto obj_open;
	case '[':
		if (sp == FAST_DEPTH)
			return 0;
		stack[sp++] = fast_tok(d, &nt, JSMN_ARRAY, (int)(p - b), par);
		p++;
		WS();
		if (p >= e)
			return 0;
		if (*p == ']')
			goto close;
		par = stack[sp - 1];
		goto value;
	case 't':
		k = 4;
		if (e - p < 4 || memcmp(p, "true", 4) != 0)
			return 0;
		goto prim;
	case 'f':
		k = 5;
		if (e - p < 5 || memcmp(p, "false", 5) != 0)
			return 0;
		goto prim;
	case 'n':
		k = 4;
		if (e - p < 4 || memcmp(p, "null", 4) != 0)
			return 0;
		goto prim;
	default:
		if (literals && (k = nonfinite_at(p, e)) > 0)
			goto prim;
		el = jl_number_len(p, e);
		if (el == 0 || el > FAST_MAX_NUMBER)
			return 0;
		k = (int)el;
		goto prim;
	}
prim:
	/* a primitive must end at a delimiter for jsmn to end its token there */
	if (p + k >= e || !(p[k] == ',' || p[k] == '}' || p[k] == ']' || p[k] == ' ' ||
	    p[k] == '\n' || p[k] == '\t' || p[k] == '\r'))
		return 0;
	top = fast_tok(d, &nt, JSMN_PRIMITIVE, (int)(p - b), par);
	d->tok[top].end = (int)(p + k - b);
	p += k;
	goto after_value;
string:
	/* p is at the opening quote; the token is the last one made */
	p++;
	for (;;) {
		p += run_unquoted(p, (size_t)(e - p));
		if (p >= e || *p != '\\')
			break;
		/*
		 * An escaped member name, or an escaped "ph" value, is compared
		 * after decoding: the general path does that (issue 21).
		 */
		if (par != -2 || escaped_ph(d, nt - 1) || (el = jl_escape_len(p, e)) == 0)
			return 0;
		p += el;
	}
	if (p >= e || *p != '"')
		return 0;	/* cut short, or a raw control character */
	d->tok[nt - 1].end = (int)(p - b);
	p++;
	if (par != -2) {
		par = nt - 1;
		goto string_done_key;
	}
	/* fall through */
after_value:
	WS();
	if (p >= e)
		return 0;
	top = stack[sp - 1];
	if (*p == ',') {
		p++;
		WS();
		if (p >= e)
			return 0;
		if (d->tok[top].type == JSMN_OBJECT)
			goto key;
		par = top;
		goto value;
	}
	if ((*p == '}' && d->tok[top].type == JSMN_OBJECT) ||
	    (*p == ']' && d->tok[top].type == JSMN_ARRAY))
		goto close;
	return 0;
close:
	top = stack[--sp];
	d->tok[top].end = (int)(p + 1 - b);
	p++;
	if (sp > 0)
		goto after_value;
#undef WS
	d->len = (size_t)(p - b);
	d->ntok = nt;
	return d->len;
}

size_t
json_parse_object(json_doc *d, const char *js, size_t len)
{
	if (len == 0 || js[0] != '{')
		return 0;
	return parse_container(d, js, len, 0);
}

int
json_valid(const char *s, size_t n)
{
	json_doc d = { 0 };
	size_t off;
	int ok = json_tokenize(&d, s, n, JSON_TOK_STRICT, &off) == JSON_OK && d.ntok > 0;

	json_doc_free(&d);
	return ok;
}

/* ---- member selection (json_select_object, json_select_doc) ---- */

/* Index of the key s[0..n) (n > 0) in names[0..cnt), or -1. */
static inline int
key_index(const struct json_key *names, unsigned cnt, const char *s, size_t n)
{
	unsigned i;

	for (i = 0; i < cnt; i++)
		if (names[i].n == n && names[i].s[0] == s[0] && memcmp(names[i].s, s, n) == 0)
			return (int)i;
	return -1;
}

size_t
json_string_run(const char *s, size_t n)
{
	return run_unquoted((const unsigned char *)s, n);
}

size_t
json_number_len(const char *s, size_t n)
{
	return jl_number_len((const unsigned char *)s, (const unsigned char *)s + n);
}

void
json_select_doc(const json_doc *d, const struct json_keys *k, int *idx)
{
	int i, n, m, a, j;
	size_t kl;
	const char *key;

	for (j = 0; j < (int)(k->ntop + k->ninner); j++)
		idx[j] = -1;
	if (d->ntok < 1 || d->tok[0].type != JSMN_OBJECT)
		return;
	n = d->tok[0].size;
	for (m = 0, i = 1; m < n && i < d->ntok; m++) {
		key = json_span(d, i, &kl);
		if (kl && (j = key_index(k->top, k->ntop, key, kl)) >= 0)
			idx[j] = i + 1;
		i = json_skip(d, i + 1);
	}
	if (k->nest < 0 || (a = idx[k->nest]) < 0 || d->tok[a].type != JSMN_OBJECT)
		return;
	n = d->tok[a].size;
	for (m = 0, i = a + 1; m < n && i < d->ntok; m++) {
		key = json_span(d, i, &kl);
		if (kl && (j = key_index(k->inner, k->ninner, key, kl)) >= 0)
			idx[k->ntop + (unsigned)j] = i + 1;
		i = json_skip(d, i + 1);
	}
}

/*
 * The strict grammar of parse_container (same checks, same limits), making
 * tokens only for the selected values.  `level` of each open container: 1
 * the root object, 2 the nest object (its members are searched), 0 any
 * other; `sel` is the slot the value being read fills (-1: none).
 */
size_t
json_select_object(json_doc *d, const char *js, size_t len, const struct json_keys *k, int *idx)
{
	const unsigned char *b = (const unsigned char *)js, *p = b, *e = b + len, *q, *ks;
	unsigned char level[FAST_DEPTH], isobj[FAST_DEPTH];
	int tokof[FAST_DEPTH], nmem[FAST_DEPTH];
	int sp = 0, nt = 0, sel = -1, kk, j, t, phval = 0;
	size_t el;

	if (len == 0 || *p != '{' || len > (size_t)0x7fffffff)
		return 0;
	for (j = 0; j < (int)(k->ntop + k->ninner); j++)
		idx[j] = -1;
	d->js = js;
	fast_tok(d, &nt, JSMN_OBJECT, 0, -1);
	level[0] = 1;
	isobj[0] = 1;
	tokof[0] = 0;
	nmem[0] = 0;
	sp = 1;
	p++;
#define WS() while (p < e && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')) p++
obj_open:
	WS();
	if (p >= e)
		return 0;
	if (*p == '}')
		goto close;
key:
	if (*p != '"')
		return 0;
	ks = ++p;
	/*
	 * a key: plain text up to its quote.  An escaped member name, at any
	 * depth, is compared decoded: the general path's (json_decode_names).
	 */
	p += run_unquoted(p, (size_t)(e - p));
	if (p >= e || *p != '"')
		return 0;
	sel = -1;
	/* the top-level "ph" value is compared decoded too: escaped, the general path's */
	phval = level[sp - 1] == 1 && p - ks == 2 && ks[0] == 'p' && ks[1] == 'h';
	nmem[sp - 1]++;
	if (p > ks) {
		if (level[sp - 1] == 1) {
			if ((kk = key_index(k->top, k->ntop, (const char *)ks, (size_t)(p - ks))) >= 0)
				sel = kk;
		} else if (level[sp - 1] == 2) {
			if ((kk = key_index(k->inner, k->ninner, (const char *)ks, (size_t)(p - ks))) >= 0)
				sel = (int)k->ntop + kk;
		}
	}
	p++;
	WS();
	if (p >= e || *p != ':')
		return 0;
	p++;
	WS();
	goto value;
value:
	if (p >= e)
		return 0;
	switch (*p) {
	case '"':
		q = p + 1;
		for (;;) {
			q += run_unquoted(q, (size_t)(e - q));
			if (q >= e || *q != '\\')
				break;
			if (phval || (el = jl_escape_len(q, e)) == 0)
				return 0;
			q += el;
		}
		if (q >= e || *q != '"')
			return 0;	/* cut short, or a raw control character */
		if (sel >= 0) {
			t = fast_tok(d, &nt, JSMN_STRING, (int)(p + 1 - b), -1);
			d->tok[t].end = (int)(q - b);
			idx[sel] = t;
		}
		p = q + 1;
		goto after_value;
	case '{':
	case '[':
		if (sp == FAST_DEPTH)
			return 0;
		phval = 0;
		isobj[sp] = *p == '{';
		level[sp] = 0;
		tokof[sp] = -1;
		nmem[sp] = 0;
		if (sel >= 0) {
			/* only the nest member may be a container, and an object */
			if (!isobj[sp] || sel != k->nest)
				return 0;
			t = fast_tok(d, &nt, JSMN_OBJECT, (int)(p - b), -1);
			idx[sel] = t;
			tokof[sp] = t;
			level[sp] = 2;
			/* a later duplicate of the nest member replaces the earlier one's members */
			for (j = 0; j < (int)k->ninner; j++)
				idx[k->ntop + (unsigned)j] = -1;
		}
		sp++;
		p++;
		if (isobj[sp - 1])
			goto obj_open;
		WS();
		if (p >= e)
			return 0;
		if (*p == ']')
			goto close;
		sel = -1;
		goto value;
	case 't':
		kk = 4;
		if (e - p < 4 || memcmp(p, "true", 4) != 0)
			return 0;
		goto prim;
	case 'f':
		kk = 5;
		if (e - p < 5 || memcmp(p, "false", 5) != 0)
			return 0;
		goto prim;
	case 'n':
		kk = 4;
		if (e - p < 4 || memcmp(p, "null", 4) != 0)
			return 0;
		goto prim;
	default:
		el = jl_number_len(p, e);
		if (el == 0 || el > FAST_MAX_NUMBER)
			return 0;
		kk = (int)el;
		goto prim;
	}
prim:
	/* a primitive must end at a delimiter for jsmn to end its token there */
	if (p + kk >= e || !(p[kk] == ',' || p[kk] == '}' || p[kk] == ']' || p[kk] == ' ' ||
	    p[kk] == '\n' || p[kk] == '\t' || p[kk] == '\r'))
		return 0;
	if (sel >= 0) {
		t = fast_tok(d, &nt, JSMN_PRIMITIVE, (int)(p - b), -1);
		d->tok[t].end = (int)(p + kk - b);
		idx[sel] = t;
	}
	p += kk;
after_value:
	WS();
	if (p >= e)
		return 0;
	if (*p == ',') {
		p++;
		WS();
		if (p >= e)
			return 0;
		if (isobj[sp - 1])
			goto key;
		sel = -1;
		goto value;
	}
	if ((*p == '}' && isobj[sp - 1]) || (*p == ']' && !isobj[sp - 1]))
		goto close;
	return 0;
close:
	sp--;
	if (tokof[sp] >= 0) {
		d->tok[tokof[sp]].end = (int)(p + 1 - b);
		d->tok[tokof[sp]].size = nmem[sp];
	}
	p++;
	if (sp > 0)
		goto after_value;
#undef WS
	d->len = (size_t)(p - b);
	d->ntok = nt;
	return d->len;
}

