/* Keyword matching and location formatting for the fuse table. */
#include <string.h>

#include "json.h"
#include "kname.h"
#include "match.h"
#include "text.h"

void
py_lower(const char *p, size_t n, sbuf *out)
{
	const unsigned char *s = (const unsigned char *)p;
	size_t i;

	sb_reset(out);
	for (i = 0; i < n; i++) {
		if (s[i] >= 'A' && s[i] <= 'Z') {
			sb_addc(out, (char)(s[i] + ('a' - 'A')));
		} else if (s[i] == 0xc4 && i + 1 < n && s[i + 1] == 0xb0) {
			sb_add(out, "i\xcc\x87", 3);	/* U+0130 -> i U+0307 */
			i++;
		} else if (s[i] == 0xe2 && i + 2 < n && s[i + 1] == 0x84 &&
		    s[i + 2] == 0xaa) {
			sb_addc(out, 'k');		/* U+212A KELVIN SIGN */
			i += 2;
		} else {
			sb_addc(out, (char)s[i]);
		}
	}
}

void
haystack_build(haystack_t *h, const char *name, const char *loc,
    const char *cpu_op)
{
	sbuf joined = SBUF_INIT;

	sb_adds(&joined, name);
	sb_addc(&joined, ' ');
	sb_adds(&joined, loc);
	sb_addc(&joined, ' ');
	sb_adds(&joined, cpu_op);
	py_lower(joined.s, joined.len, &h->hay);
	/*
	 * Compacting after lowering is what lets a KELVIN SIGN in a kernel
	 * name complete "kernel" (§4 step 2); compact() alone would drop it.
	 */
	text_compact(h->hay.s, h->hay.len, &h->compact);
	/* kept for every row of a stage: no growth room */
	sb_fit(&h->hay);
	sb_fit(&h->compact);
	sb_free(&joined);
}

void
haystack_free(haystack_t *h)
{
	sb_free(&h->hay);
	sb_free(&h->compact);
}

/* Add each "<br>"-separated part of s as a field; a site's share suffix is left out. */
static unsigned
add_parts(words *w, const char *s, int sites)
{
	const char *p = s, *q;
	unsigned n = 0;

	for (;; p = q + 4) {
		size_t len;
		const char *t;
		q = strstr(p, "<br>");
		t = text_strip(p, q ? (size_t)(q - p) : strlen(p), &len);
		if (sites && len > 0 && t[len - 1] == ')') {
			const char *o = memmem(t, len, " (site share ", 13);
			if (o)
				len = (size_t)(o - t);
		}
		if (len && !(len == 1 && t[0] == '-') && !(len == 10 && memcmp(t, "unresolved", 10) == 0)) {
			words_add(w, t, len);
			n++;
		}
		if (!q)
			break;
	}
	return n;
}

void
haystack_words(words *w, const char *name, const char *loc, const char *cpu_op,
    unsigned *nloc)
{
	sbuf id = SBUF_INIT;

	words_reset(w);
	kname_identity(name, strlen(name), &id);
	words_add(w, sbs(&id), id.len);
	*nloc = add_parts(w, loc, 1);
	add_parts(w, cpu_op, 0);
	sb_free(&id);
}

long
kw_find(const words *w, const kwlist_t *kw, unsigned *field)
{
	size_t i;
	long at;

	for (i = 0; i < kw->n; i++) {
		const char *c = kw->v[i].compact;
		if (kw->v[i].model_name)
			continue;
		if (c[0] && (at = words_find(w, c, strlen(c))) >= 0) {
			if (field)
				*field = w->w[at].field;
			return (long)i;
		}
	}
	return -1;
}

const char *
field_kind(unsigned f, unsigned nloc)
{
	return f == 0 ? "name" : f <= nloc ? "Python location" : "CPU op";
}

static int
contains(const sbuf *hay, const char *needle)
{
	size_t m = strlen(needle);

	/* An empty needle is a substring of anything, as in the reference. */
	if (m == 0)
		return 1;
	return m <= hay->len && memmem(hay->s, hay->len, needle, m) != NULL;
}

int
kw_match(const haystack_t *h, const kwlist_t *kw)
{
	size_t i;

	for (i = 0; i < kw->n; i++) {
		if (contains(&h->hay, kw->v[i].lower))
			return 1;
		if (kw->v[i].compact[0] && contains(&h->compact, kw->v[i].compact))
			return 1;
	}
	return 0;
}

/*
 * Zero digit of every block of ten Unicode decimal digits (general
 * category Nd, Unicode 15.0): Python's \d in a str pattern accepts all of
 * them, and every such block is contiguous.
 */
static const unsigned nd_zero[] = {
	0x30, 0x660, 0x6f0, 0x7c0, 0x966, 0x9e6, 0xa66, 0xae6, 0xb66, 0xbe6,
	0xc66, 0xce6, 0xd66, 0xde6, 0xe50, 0xed0, 0xf20, 0x1040, 0x1090,
	0x17e0, 0x1810, 0x1946, 0x19d0, 0x1a80, 0x1a90, 0x1b50, 0x1bb0,
	0x1c40, 0x1c50, 0xa620, 0xa8d0, 0xa900, 0xa9d0, 0xa9f0, 0xaa50,
	0xabf0, 0xff10, 0x104a0, 0x10d30, 0x11066, 0x110f0, 0x11136, 0x111d0,
	0x112f0, 0x11450, 0x114d0, 0x11650, 0x116c0, 0x11730, 0x118e0,
	0x11950, 0x11c50, 0x11d50, 0x11da0, 0x11f50, 0x16a60, 0x16ac0,
	0x16b50, 0x1d7ce, 0x1d7d8, 0x1d7e2, 0x1d7ec, 0x1d7f6, 0x1e140,
	0x1e2f0, 0x1e4f0, 0x1e950, 0x1fbf0
};

/* Byte length of the Unicode decimal digit at p, or 0. */
static size_t
digit_len(const char *p, size_t n)
{
	unsigned cp;
	size_t k, i;

	if (n && *p >= '0' && *p <= '9')
		return 1;
	if (n == 0 || (unsigned char)*p < 0x80)
		return 0;
	k = utf8_decode((const unsigned char *)p, n, &cp);
	if (k == 0)
		return 0;
	for (i = 0; i < sizeof nd_zero / sizeof nd_zero[0]; i++)
		if (cp >= nd_zero[i] && cp < nd_zero[i] + 10)
			return k;
	return 0;
}

/* Byte length of the code point at p (1 for a stray byte). */
static size_t
cp_len(const char *p, size_t n)
{
	unsigned cp;
	size_t k = utf8_decode((const unsigned char *)p, n, &cp);

	return k ? k : 1;
}

void
format_fusion_location(const char *p, size_t n, sbuf *out)
{
	sbuf t = SBUF_INIT;
	const char *s;
	size_t len, i, j, k, digits_end, ws_start, last_ws;

	text_normalize(p, n, &t);
	s = t.s ? t.s : "";
	len = t.len;
	/*
	 * (.+?) is lazy: try each ':' from the left, skipping position 0
	 * because the path needs at least one character.  For a given colon
	 * the digit and space runs are greedy, and since (.+) accepts spaces
	 * the only way to fail after a space run is a run that reaches the
	 * end with a single space (normalize_text strips, so it cannot).
	 */
	for (i = cp_len(s, len); i < len; i += cp_len(s + i, len - i)) {
		if (s[i] != ':')
			continue;
		j = i + 1;
		while (j < len && (k = digit_len(s + j, len - j)) != 0)
			j += k;
		if (j == i + 1)
			continue;
		digits_end = j;
		ws_start = j;
		last_ws = j;
		while (j < len && (k = text_ws_len(s + j, len - j)) != 0) {
			last_ws = j;
			j += k;
		}
		if (j == ws_start)
			continue;
		if (j == len) {
			if (last_ws == ws_start)
				continue;
			j = last_ws;	/* give the last space to (.+) */
		}
		sb_reset(out);
		sb_add(out, s + j, len - j);
		sb_add(out, " @ ", 3);
		sb_add(out, s, i);
		sb_addc(out, ':');
		sb_add(out, s + i + 1, digits_end - (i + 1));
		sb_free(&t);
		return;
	}
	sb_reset(out);
	sb_add(out, s, len);
	sb_free(&t);
}
