/*
 * The JSON lexical grammar (RFC 8259 section 6 numbers, section 7 string
 * escapes) written once for the readers that check it byte by byte:
 * json.c (strict tokenizer, member selection, json_number_len), jsontok.c
 * (the general tokenizer) and jshape.c (events read by their shape).
 * Inline, since all of them are on trace-extract's hot path.  Pointers
 * are to unsigned bytes; e is one past the last byte that may be read.
 */
#ifndef JSONLEX_H
#define JSONLEX_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline int
jl_is_hex(unsigned char c)
{
	return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

/* Past the run of ASCII digits at q[0..e): eight bytes at a time while they last. */
static inline const unsigned char *
jl_digits(const unsigned char *q, const unsigned char *e)
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

/*
 * The length of the JSON number that starts at p (the longest prefix of
 * p[0..e) matching -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?), or 0
 * when none starts there.
 */
static inline size_t
jl_number_len(const unsigned char *p, const unsigned char *e)
{
	const unsigned char *q = p;

	if (q < e && *q == '-')
		q++;
	if (q < e && *q == '0')
		q++;
	else if (q < e && *q >= '1' && *q <= '9')
		q = jl_digits(q + 1, e);
	else
		return 0;
	if (q < e && *q == '.') {
		if (++q >= e || *q < '0' || *q > '9')
			return 0;
		q = jl_digits(q + 1, e);
	}
	if (q < e && (*q | 0x20) == 'e') {
		if (++q < e && (*q == '+' || *q == '-'))
			q++;
		if (q >= e || *q < '0' || *q > '9')
			return 0;
		q = jl_digits(q + 1, e);
	}
	return (size_t)(q - p);
}

/*
 * The length of the string escape at p (p[0] is the backslash): 2 for
 * \" \\ \/ \b \f \n \r \t, 6 for \u and four hex digits, 0 when p[0..e)
 * holds no valid escape.
 */
static inline size_t
jl_escape_len(const unsigned char *p, const unsigned char *e)
{
	if (e - p < 2)
		return 0;
	switch (p[1]) {
	case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
		return 2;
	case 'u':
		return e - p >= 6 && jl_is_hex(p[2]) && jl_is_hex(p[3]) && jl_is_hex(p[4]) &&
		    jl_is_hex(p[5]) ? 6 : 0;
	default:
		return 0;
	}
}

#endif
