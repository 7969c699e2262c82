/* jsmn-based access to one JSON value, with the reference's coercions. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
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

/* Length of the run at p[0..n) of ASCII without '\\'. */
static inline size_t
run_plain_ascii(const unsigned char *p, size_t n)
{
	size_t k = 0;
#if defined(__SSE2__)
	const __m128i bs = _mm_set1_epi8('\\');

	for (; k + 16 <= n; k += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(p + k));
		int m = _mm_movemask_epi8(_mm_or_si128(v, _mm_cmpeq_epi8(v, bs)));
		if (m)
			return k + (size_t)__builtin_ctz((unsigned)m);
	}
#endif
	for (; k < n; k++)
		if (p[k] == '\\' || p[k] >= 0x80)
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
	jsmn_parser p;
	int r;

	const char *scan = js;

	d->js = js;
	d->len = len;
	if (len && memchr(js, '\0', len)) {
		size_t k;
		xgrow(&d->nul_copy, &d->nul_cap, len, 1);
		memcpy(d->nul_copy, js, len);
		for (k = 0; k < len; k++)
			if (d->nul_copy[k] == '\0')
				d->nul_copy[k] = '\001';
		scan = d->nul_copy;
	}
	if (d->cap == 0) {
		d->cap = 256;
		d->tok = xmalloc(d->cap * sizeof *d->tok);
	}
	for (;;) {
		jsmn_init(&p);
		r = jsmn_parse(&p, scan, len, d->tok, d->cap);
		if (r == JSMN_ERROR_NOMEM) {
			d->cap *= 2;
			d->tok = xrealloc(d->tok, d->cap * sizeof *d->tok);
			continue;
		}
		break;
	}
	if (r < 1) {
		d->ntok = 0;
		return -1;
	}
	d->ntok = r;
	return 0;
}

void
json_doc_free(json_doc *d)
{
	free(d->tok);
	d->tok = NULL;
	d->cap = 0;
	d->ntok = 0;
	free(d->nul_copy);
	d->nul_copy = NULL;
	d->nul_cap = 0;
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
		const jsmntok_t *t = &d->tok[i];
		if (t->type == JSMN_STRING && (size_t)(t->end - t->start) == kl &&
		    memcmp(d->js + t->start, key, kl) == 0)
			found = i + 1;
		i = json_skip(d, i + 1);
	}
	return found;
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

	if (c < 0x80) {
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
			sb_addc(out, s[k]);
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

static void
pyrepr_value(const json_doc *d, int i, sbuf *out, int top, unsigned *repl)
{
	char buf[40];
	size_t n;
	const char *s;
	double v;
	int k, cnt;

	switch (json_kind(d, i)) {
	case JK_MISSING:
	case JK_NULL:
		sb_adds(out, "None");
		return;
	case JK_TRUE:
		sb_adds(out, "True");
		return;
	case JK_FALSE:
		sb_adds(out, "False");
		return;
	case JK_INT:
		s = json_span(d, i, &n);
		if (n == 2 && s[0] == '-' && s[1] == '0')
			sb_addc(out, '0');
		else
			sb_add(out, s, n);
		return;
	case JK_FLOAT:
		json_todouble(d, i, &v);
		sb_adds(out, num_repr(v, buf));
		return;
	case JK_STR:
		if (top)
			json_str_append(d, i, out, repl);
		else {
			sb_addc(out, '\'');
			json_str_append(d, i, out, repl);
			sb_addc(out, '\'');
		}
		return;
	case JK_ARR:
		sb_addc(out, '[');
		cnt = d->tok[i].size;
		for (k = 0, i++; k < cnt; k++) {
			if (k)
				sb_adds(out, ", ");
			pyrepr_value(d, i, out, 0, repl);
			i = json_skip(d, i);
		}
		sb_addc(out, ']');
		return;
	case JK_OBJ:
		sb_addc(out, '{');
		cnt = d->tok[i].size;
		for (k = 0, i++; k < cnt; k++) {
			if (k)
				sb_adds(out, ", ");
			pyrepr_value(d, i, out, 0, repl);
			sb_adds(out, ": ");
			pyrepr_value(d, i + 1, out, 0, repl);
			i = json_skip(d, i + 1);
		}
		sb_addc(out, '}');
		return;
	}
}

void
json_pystr(const json_doc *d, int i, sbuf *out, unsigned *repl)
{
	sb_reset(out);
	pyrepr_value(d, i, out, 1, repl);
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

void
json_quote(sbuf *out, const char *s, size_t n)
{
	static const char hexd[] = "0123456789abcdef";
	size_t i, start = 0;

	if (!s)
		s = "";		/* an empty sbuf: NULL with n == 0 */
	sb_grow(out, n + 2);
	sb_addc(out, '"');
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
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
	}
	sb_add(out, s + start, n - start);
	sb_addc(out, '"');
}

void
json_write_compact(const json_doc *d, int i, sbuf *out)
{
	sbuf t = SBUF_INIT;
	size_t n;
	const char *s;
	int k, cnt;
	char buf[40];
	double v;

	switch (json_kind(d, i)) {
	case JK_MISSING:
	case JK_NULL:
		sb_adds(out, "null");
		break;
	case JK_TRUE:
		sb_adds(out, "true");
		break;
	case JK_FALSE:
		sb_adds(out, "false");
		break;
	case JK_INT:
		s = json_span(d, i, &n);
		sb_add(out, s, n);
		break;
	case JK_FLOAT:
		s = json_span(d, i, &n);
		if (json_nonfinite_literal(s, n)) {
			json_todouble(d, i, &v);
			sb_adds(out, num_json(v, buf));	/* null: JSON has no NaN */
		} else
			sb_add(out, s, n);
		break;
	case JK_STR:
		json_str(d, i, &t, NULL);
		json_quote(out, t.s ? t.s : "", t.len);
		break;
	case JK_ARR:
		sb_addc(out, '[');
		cnt = d->tok[i].size;
		for (k = 0, i++; k < cnt; k++) {
			if (k)
				sb_addc(out, ',');
			json_write_compact(d, i, out);
			i = json_skip(d, i);
		}
		sb_addc(out, ']');
		break;
	case JK_OBJ:
		sb_addc(out, '{');
		cnt = d->tok[i].size;
		for (k = 0, i++; k < cnt; k++) {
			if (k)
				sb_addc(out, ',');
			json_write_compact(d, i, out);
			sb_addc(out, ':');
			json_write_compact(d, i + 1, out);
			i = json_skip(d, i + 1);
		}
		sb_addc(out, '}');
		break;
	}
	sb_free(&t);
}

/* ---- the strict fast path (json_parse_object) ---- */

#define FAST_DEPTH 64
/* Longer numbers are the scanner's error to report (scan.c MAXPRIM). */
#define FAST_MAX_NUMBER 512

static int
is_hex(unsigned char c)
{
	return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

/* Append a token; the root has parent -1, every other token adds one to its parent's size. */
static inline int
fast_tok(json_doc *d, int *nt, jsmntype_t type, int start, int parent)
{
	jsmntok_t *t;

	if ((unsigned)*nt >= d->cap) {
		d->cap = d->cap ? d->cap * 2 : 256;
		d->tok = xrealloc(d->tok, d->cap * sizeof *d->tok);
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
	const unsigned char *b = (const unsigned char *)js, *p = b, *e = b + len, *q;
	int stack[FAST_DEPTH], sp = 0, nt = 0, par, top, k;

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
		/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
		q = p;
		if (q < e && *q == '-')
			q++;
		if (q < e && *q == '0')
			q++;
		else if (q < e && *q >= '1' && *q <= '9')
			while (++q < e && *q >= '0' && *q <= '9')
				;
		else
			return 0;
		if (q < e && *q == '.') {
			if (++q >= e || *q < '0' || *q > '9')
				return 0;
			while (++q < e && *q >= '0' && *q <= '9')
				;
		}
		if (q < e && (*q | 0x20) == 'e') {
			if (++q < e && (*q == '+' || *q == '-'))
				q++;
			if (q >= e || *q < '0' || *q > '9')
				return 0;
			while (++q < e && *q >= '0' && *q <= '9')
				;
		}
		if (q - p > FAST_MAX_NUMBER)
			return 0;
		k = (int)(q - p);
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
		if (p + 1 >= e)
			return 0;
		switch (p[1]) {
		case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
			p += 2;
			break;
		case 'u':
			if (e - p < 6 || !is_hex(p[2]) || !is_hex(p[3]) || !is_hex(p[4]) ||
			    !is_hex(p[5]))
				return 0;
			p += 6;
			break;
		default:
			return 0;
		}
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

/* A whole string or primitive at p[0..n) (a lone top-level value). */
static int
valid_scalar(const unsigned char *p, size_t n)
{
	const unsigned char *e = p + n, *q = p;
	json_doc d = { 0 };
	char buf[1100];
	size_t k;

	if (n == 0)
		return 0;
	if (*p == '"') {
		/* as an array element, where the tokenizer checks strings */
		json_doc w = { 0 };
		char *tmp = xmalloc(n + 2);
		int ok;
		tmp[0] = '[';
		memcpy(tmp + 1, p, n);
		tmp[n + 1] = ']';
		ok = parse_container(&w, tmp, n + 2, 0) == n + 2;
		json_doc_free(&w);
		free(tmp);
		return ok;
	}
	if ((k = nonfinite_at(p, e)) == n)
		return 1;
	if ((n == 4 && (!memcmp(p, "true", 4) || !memcmp(p, "null", 4))) ||
	    (n == 5 && !memcmp(p, "false", 5)))
		return 1;
	/* a number: the tokenizer's rule, on "[number]" */
	if (n > FAST_MAX_NUMBER)
		return 0;
	buf[0] = '[';
	memcpy(buf + 1, q, n);
	buf[n + 1] = ']';
	k = parse_container(&d, buf, n + 2, 0);
	json_doc_free(&d);
	return k == n + 2;
}

int
json_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *e = p + n;
	json_doc d = { 0 };
	size_t k;
	int ok;

	while (p < e && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r'))
		p++;
	while (e > p && (e[-1] == ' ' || e[-1] == '\n' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	if (p == e)
		return 0;
	if (*p != '{' && *p != '[')
		return valid_scalar(p, (size_t)(e - p));
	k = parse_container(&d, (const char *)p, (size_t)(e - p), 1);
	ok = k > 0 && k == (size_t)(e - p);
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

/* Past the run of ASCII digits at q[0..e): eight bytes at a time while they last. */
static inline const unsigned char *
skip_digits(const unsigned char *q, const unsigned char *e)
{
	uint64_t w, t;

	while (e - q >= 8) {
		memcpy(&w, q, 8);
		/* a byte below '0' or above '9' sets its top bit in t */
		t = (w - 0x3030303030303030ULL) | (w + 0x4646464646464646ULL);
		t &= 0x8080808080808080ULL;
		if (t)
			return q + (__builtin_ctzll(t) >> 3);
		q += 8;
	}
	while (q < e && *q >= '0' && *q <= '9')
		q++;
	return q;
}

size_t
json_string_run(const char *s, size_t n)
{
	return run_unquoted((const unsigned char *)s, n);
}

size_t
json_number_len(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *e = p + n, *q = p;

	if (q < e && *q == '-')
		q++;
	if (q < e && *q == '0')
		q++;
	else if (q < e && *q >= '1' && *q <= '9')
		q = skip_digits(q + 1, e);
	else
		return 0;
	if (q < e && *q == '.') {
		if (++q >= e || *q < '0' || *q > '9')
			return 0;
		q = skip_digits(q + 1, e);
	}
	if (q < e && (*q | 0x20) == 'e') {
		if (++q < e && (*q == '+' || *q == '-'))
			q++;
		if (q >= e || *q < '0' || *q > '9')
			return 0;
		q = skip_digits(q + 1, e);
	}
	return (size_t)(q - p);
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
	int sp = 0, nt = 0, sel = -1, kk, j, t;

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
	/* a key: plain text up to its quote; at a searched level, no escapes */
	for (;;) {
		p += run_unquoted(p, (size_t)(e - p));
		if (p >= e || *p != '\\')
			break;
		if (level[sp - 1])
			return 0;
		if (p + 1 >= e)
			return 0;
		switch (p[1]) {
		case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
			p += 2;
			break;
		case 'u':
			if (e - p < 6 || !is_hex(p[2]) || !is_hex(p[3]) || !is_hex(p[4]) ||
			    !is_hex(p[5]))
				return 0;
			p += 6;
			break;
		default:
			return 0;
		}
	}
	if (p >= e || *p != '"')
		return 0;
	sel = -1;
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
			if (q + 1 >= e)
				return 0;
			switch (q[1]) {
			case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
				q += 2;
				break;
			case 'u':
				if (e - q < 6 || !is_hex(q[2]) || !is_hex(q[3]) || !is_hex(q[4]) ||
				    !is_hex(q[5]))
					return 0;
				q += 6;
				break;
			default:
				return 0;
			}
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
		q = p;
		if (q < e && *q == '-')
			q++;
		if (q < e && *q == '0')
			q++;
		else if (q < e && *q >= '1' && *q <= '9')
			q = skip_digits(q + 1, e);
		else
			return 0;
		if (q < e && *q == '.') {
			if (++q >= e || *q < '0' || *q > '9')
				return 0;
			q = skip_digits(q + 1, e);
		}
		if (q < e && (*q | 0x20) == 'e') {
			if (++q < e && (*q == '+' || *q == '-'))
				q++;
			if (q >= e || *q < '0' || *q > '9')
				return 0;
			q = skip_digits(q + 1, e);
		}
		if (q - p > FAST_MAX_NUMBER)
			return 0;
		kk = (int)(q - p);
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

