/*
 * The general JSON tokenizer behind json_parse, and the limits every JSON
 * input shares (json.h, issue 21).
 *
 * It makes exactly the tokens jsmn makes (parent links, lenient mode) for
 * any text the trace scanner accepts: strict JSON plus raw control
 * characters (NUL too) in strings, NaN / Infinity / inf literals in any
 * case with a sign, and a trailing comma before ']' or '}'.  Unlike jsmn it
 * keeps the open containers on a stack, so closing one is O(1) at any
 * depth (jsmn walks the parent chain: quadratic in the nesting), refuses
 * nesting beyond JSON_MAX_DEPTH and text beyond json_max_bytes(), and
 * refuses what is not JSON (jsmn's lenient mode lets unquoted words
 * through).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "err.h"
#include "json.h"
#include "jsonlex.h"
#include "reslimit.h"
#include "xalloc.h"

/* ---- the size policy ---- */

#define MAX_BYTES_DEFAULT ((size_t)1 << 30)
/* token offsets are int: the text must stay below INT_MAX bytes */
#define MAX_BYTES_CEILING ((size_t)INT_MAX - 1)

static size_t max_bytes;
static int max_bytes_from_env;

/* "123", "64K", "512M", "1G" (binary units); 0 when malformed. */
static size_t
parse_size(const char *s)
{
	return (size_t)limit_parse(s, MAX_BYTES_CEILING);
}

size_t
json_max_bytes(void)
{
	if (max_bytes == 0) {
		const char *e = getenv("TRIAGE_MAX_JSON_BYTES");
		size_t v = parse_size(e);
		max_bytes_from_env = v != 0;
		max_bytes = v ? v : MAX_BYTES_DEFAULT;
		if (e && *e && !v)
			warn_msg("TRIAGE_MAX_JSON_BYTES='%s' is not a size (a whole number from 1, with "
			    "k, M, G or T after it or not): the default of %zu MiB applies", e,
			    (size_t)MAX_BYTES_DEFAULT >> 20);
	}
	return max_bytes;
}

const char *
json_limit_text(int err)
{
	static char size_text[96];
	size_t m;

	switch (err) {
	case JSON_EDEPTH:
		return "nested deeper than the limit of 1024 levels";
	case JSON_ESIZE:
		m = json_max_bytes();
		if (m % ((size_t)1 << 30) == 0)
			snprintf(size_text, sizeof size_text, "larger than the limit of %zu GiB", m >> 30);
		else if (m % ((size_t)1 << 20) == 0)
			snprintf(size_text, sizeof size_text, "larger than the limit of %zu MiB", m >> 20);
		else
			snprintf(size_text, sizeof size_text, "larger than the limit of %zu bytes", m);
		if (max_bytes_from_env) {
			size_t n = strlen(size_text);
			snprintf(size_text + n, sizeof size_text - n, " (TRIAGE_MAX_JSON_BYTES)");
		}
		return size_text;
	default:
		return "not valid JSON";
	}
}

/* ---- the tokenizer ---- */

/* Bytes that end a number or literal, as in jsmn's lenient mode. */
static int
is_delim(unsigned char c)
{
	return c == ',' || c == ']' || c == '}' || c == ' ' || c == '\n' || c == '\t' ||
	    c == '\r' || c == ':';
}

static size_t num_len(const unsigned char *p, const unsigned char *q);

/*
 * Length of the literal or number at p[0..e) by the trace scanner's rule
 * (scan.c valid_prim), or 0.  The caller checks what follows it.
 */
static size_t
prim_len(const unsigned char *p, const unsigned char *e, int strict)
{
	const unsigned char *q = p, *w;
	size_t n;

	while (q < e && !is_delim(*q))
		q++;
	n = (size_t)(q - p);
	if (n == 0 || n > 512)
		return 0;
	if ((n == 4 && (!memcmp(p, "true", 4) || !memcmp(p, "null", 4))) ||
	    (n == 5 && !memcmp(p, "false", 5)))
		return n;
	if (strict)	/* Python's json: exactly these three */
		return (n == 3 && !memcmp(p, "NaN", 3)) || (n == 8 && !memcmp(p, "Infinity", 8)) ||
		    (n == 9 && !memcmp(p, "-Infinity", 9)) ? n : num_len(p, q);
	w = p;
	if (*w == '-' || *w == '+')
		w++;
	if (((size_t)(q - w) == 3 && (!strncasecmp((const char *)w, "nan", 3) ||
	    !strncasecmp((const char *)w, "inf", 3))) ||
	    ((size_t)(q - w) == 8 && !strncasecmp((const char *)w, "infinity", 8)))
		return n;
	return num_len(p, q);
}

/* n when p[0..q) is exactly a JSON number, else 0. */
static size_t
num_len(const unsigned char *p, const unsigned char *q)
{
	size_t n = jl_number_len(p, q);

	return n == (size_t)(q - p) ? n : 0;
}

/* Append a token; every token but the root adds one to its parent's size. */
static int
add_tok(json_doc *d, int *nt, jsmntype_t type, int start, int parent)
{
	jsmntok_t *t;

	if ((size_t)*nt >= d->cap) {
		size_t c = d->cap;
		xgrow(&d->tok, &c, (size_t)*nt + 1, sizeof *d->tok);
		d->cap = c > UINT_MAX ? UINT_MAX : (unsigned)c;
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

#define WS(p, e) while ((p) < (e) && (*(p) == ' ' || *(p) == '\n' || *(p) == '\t' || \
	*(p) == '\r')) (p)++

int
json_tokenize(json_doc *d, const char *js, size_t len, int flags, size_t *erroff)
{
	int strict = (flags & JSON_TOK_STRICT) != 0;
	const unsigned char *b = (const unsigned char *)js, *p = b, *e = b + len;
	int stack[JSON_MAX_DEPTH];
	int sp = 0, nt = 0, par = -1, top, key, comma = 0;
	size_t k, el;

	d->js = js;
	d->len = len;
	d->ntok = 0;
	d->depth = 0;
	*erroff = 0;
	if (len > json_max_bytes()) {
		*erroff = json_max_bytes();
		return JSON_ESIZE;
	}
	WS(p, e);
	if (p >= e)
		goto invalid;
	/* p is at a value whose parent token is `par` */
value:
	switch (*p) {
	case '{':
	case '[':
		if (sp == JSON_MAX_DEPTH) {
			*erroff = (size_t)(p - b);
			return JSON_EDEPTH;
		}
		stack[sp++] = add_tok(d, &nt, *p == '{' ? JSMN_OBJECT : JSMN_ARRAY,
		    (int)(p - b), par);
		if (sp > d->depth)
			d->depth = sp;
		p++;
		comma = 0;
		goto open;
	case '"':
		key = 0;
		add_tok(d, &nt, JSMN_STRING, (int)(p + 1 - b), par);
		goto string;
	default:
		if ((k = prim_len(p, e, strict)) == 0)
			goto invalid;
		top = add_tok(d, &nt, JSMN_PRIMITIVE, (int)(p - b), par);
		d->tok[top].end = (int)(p + k - b);
		p += k;
		goto after_value;
	}

open:	/* after '{' or '[' or a ',' inside one: a member, an element or the close */
	WS(p, e);
	if (p >= e)
		goto invalid;
	top = stack[sp - 1];
	if ((*p == '}' && d->tok[top].type == JSMN_OBJECT) ||
	    (*p == ']' && d->tok[top].type == JSMN_ARRAY)) {
		if (strict && comma)
			goto invalid;	/* a trailing comma */
		goto close;
	}
	if (d->tok[top].type == JSMN_ARRAY) {
		par = top;
		goto value;
	}
	if (*p != '"')
		goto invalid;
	key = 1;
	add_tok(d, &nt, JSMN_STRING, (int)(p + 1 - b), top);
	goto string;

string:	/* p at the opening quote of the last token made */
	for (p++;; p++) {
		if (p >= e)
			goto invalid;
		if (*p == '"')
			break;
		if (*p < 0x20 && strict)
			goto invalid;
		if (*p != '\\')
			continue;
		if ((el = jl_escape_len(p, e)) == 0)
			goto invalid;
		p += el - 1;	/* the loop steps over the last byte */
	}
	d->tok[nt - 1].end = (int)(p - b);
	p++;
	if (!key)
		goto after_value;
	WS(p, e);
	if (p >= e || *p != ':')
		goto invalid;
	p++;
	WS(p, e);
	if (p >= e)
		goto invalid;
	par = nt - 1;	/* a member's value hangs off its key */
	goto value;

after_value:
	if (sp == 0)
		goto end;
	WS(p, e);
	if (p >= e)
		goto invalid;
	top = stack[sp - 1];
	if (*p == ',') {
		p++;
		comma = 1;
		goto open;
	}
	if ((*p == '}' && d->tok[top].type == JSMN_OBJECT) ||
	    (*p == ']' && d->tok[top].type == JSMN_ARRAY))
		goto close;
	goto invalid;

close:
	top = stack[--sp];
	d->tok[top].end = (int)(p + 1 - b);
	p++;
	goto after_value;

end:
	WS(p, e);
	if (p != e)
		goto invalid;	/* a second value, or garbage after the first */
	d->ntok = nt;
	return 0;

invalid:
	*erroff = (size_t)(p - b);
	d->ntok = 0;
	return JSON_EINVAL;
}
