/* Kernel names: demangling, identity and short names (kname.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "kname.h"
#include "strtab.h"
#include "xalloc.h"

#define ELL "\xe2\x80\xa6"	/* U+2026 HORIZONTAL ELLIPSIS */
#define DEMANGLE_MAX 8192
#define MAX_DEPTH 256		/* deeper nesting: the name is read as plain text */
#define ANON "(anonymous namespace)"
#define ANON_LEN 21

static int
is_alpha(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int
is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static int
is_ident(unsigned char c)
{
	return is_alpha(c) || is_digit(c) || c == '_';
}

/* Characters a person sees: UTF-8 continuation bytes do not count. */
static size_t
u8len(const char *s, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		k += ((unsigned char)s[i] & 0xc0) != 0x80;
	return k;
}

/* ---- demangling ---- */

/*
 * The scope path of a nested mangled name, when the demangler refuses it:
 * only the <length><identifier> pieces it spells out, so nothing is
 * guessed.  Returns 1 with "a::b::c" (and "<…>" when template arguments
 * follow) in out, else 0.
 */
static int
mangled_scope(const char *s, size_t n, sbuf *out)
{
	const char *p = s + 2, *end = s + n;
	int pieces = 0;

	sb_reset(out);
	if (n < 3 || s[0] != '_' || s[1] != 'Z')
		return 0;
	if (p < end && *p == 'L')
		p++;
	if (p < end && *p == 'N') {
		p++;
		while (p < end && strchr("KVrRO", *p))
			p++;
	}
	if (end - p >= 2 && p[0] == 'S' && p[1] == 't') {
		sb_adds(out, "std");
		pieces++;
		p += 2;
	}
	while (p < end && *p >= '1' && *p <= '9') {
		size_t len = 0;
		while (p < end && is_digit((unsigned char)*p) && len < DEMANGLE_MAX)
			len = len * 10 + (size_t)(*p++ - '0');
		if (len > (size_t)(end - p))
			break;
		if (pieces++)
			sb_adds(out, "::");
		if (len >= 10 && strncmp(p, "_GLOBAL__N", 10) == 0)
			sb_adds(out, ANON);
		else
			sb_add(out, p, len);
		p += len;
	}
	if (pieces == 0 || (pieces == 1 && out->len == 3 && memcmp(out->s, "std", 3) == 0)) {
		sb_reset(out);
		return 0;
	}
	if (p < end && *p == 'I')
		sb_adds(out, "<" ELL ">");
	return 1;
}

int
kname_demangle(const char *s, size_t n, sbuf *out)
{
	char *z, *d;
	int opts = DMGL_PARAMS | DMGL_ANSI | DMGL_TYPES | DMGL_GNU_V3;

	sb_reset(out);
	if (n < 3 || s[0] != '_' || s[1] != 'Z' || n > DEMANGLE_MAX || memchr(s, '\0', n))
		return 0;
	z = xstrndup(s, n);
	d = cplus_demangle(z, opts);
	/*
	 * Composable Kernel symbols of 1,500-2,000 characters nest past the
	 * demangler's default recursion limit (c++filt refuses them too, and
	 * takes them with --no-recurse-limit); the length bound above keeps
	 * the recursion bounded without it.
	 */
	if (!d)
		d = cplus_demangle(z, opts | DMGL_NO_RECURSE_LIMIT);
	free(z);
	if (!d)
		return 0;
	sb_adds(out, d);
	free(d);
	return 1;
}

void
kname_display(const char *s, size_t n, sbuf *out)
{
	if (kname_demangle(s, n, out) || mangled_scope(s, n, out))
		return;
	sb_reset(out);
	sb_add(out, s, n);
}

/* ---- structure ---- */

/*
 * Does '<' at i open a template argument list?  It follows a name, or
 * the call operator of a templated lambda ("operator()<T>"); after
 * anything else it is an operator ("(8)<(0)").
 */
static int
lt_opens(const char *s, size_t i)
{
	return (i > 0 && is_ident((unsigned char)s[i - 1])) ||
	    (i >= 10 && memcmp(s + i - 10, "operator()", 10) == 0);
}

static int
opener(const char *s, size_t i)
{
	char c = s[i];

	return c == '(' || c == '[' || c == '{' || (c == '<' && lt_opens(s, i));
}

/*
 * The index of the bracket closing the one opened at s[i], or n when the
 * text ends first (or nests past MAX_DEPTH).  '>' closes only a '<' (an
 * operator inside a parenthesized expression does not), a stray closer
 * is text.
 */
static size_t
close_of(const char *s, size_t n, size_t i)
{
	char st[MAX_DEPTH];
	size_t d = 0, j;

	for (j = i; j < n; j++) {
		char c = s[j];
		if (opener(s, j)) {
			if (d == MAX_DEPTH)
				return n;
			st[d++] = c;
			continue;
		}
		if (d == 0)
			continue;
		if ((c == ')' && st[d - 1] == '(') || (c == ']' && st[d - 1] == '[') ||
		    (c == '}' && st[d - 1] == '{') || (c == '>' && st[d - 1] == '<')) {
			if (--d == 0)
				return j;
		}
	}
	return n;
}

enum { K_COPY, K_CXX, K_PLAIN };

struct kparts {
	int kind;
	size_t q0, q1;		/* qualified name: no return type, no function template list */
	int has_t;
	size_t t0, t1;		/* the function's template arguments, inside <> */
	int has_p;
	size_t p0, p1;		/* the parameter list, its parentheses included */
};

static int
starts(const char *s, size_t n, const char *p)
{
	size_t k = strlen(p);

	return n >= k && memcmp(s, p, k) == 0;
}

/* Only cv and ref qualifiers (and spaces) in s[0..n)? */
static int
qualifiers_only(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		if (s[i] == ' ' || s[i] == '&') {
			i++;
			continue;
		}
		if (starts(s + i, n - i, "const"))
			i += 5;
		else if (starts(s + i, n - i, "volatile"))
			i += 8;
		else if (starts(s + i, n - i, "noexcept"))
			i += 8;
		else
			return 0;
	}
	return 1;
}

static void
parse(const char *s, size_t n, struct kparts *k)
{
	size_t i = 0, j, lastsp = (size_t)-1, end;
	size_t pa = (size_t)-1, pb = 0, ta = (size_t)-1, tb = 0;

	memset(k, 0, sizeof *k);
	k->q1 = n;
	if (starts(s, n, "Memcpy ") || starts(s, n, "Memset ")) {
		k->kind = K_COPY;
		return;
	}
	/* top level: its spaces and its last bracket groups */
	while (i < n) {
		if (opener(s, i)) {
			j = close_of(s, n, i);
			if (j == n) {	/* unbalanced: no structure to read */
				k->kind = K_PLAIN;
				return;
			}
			if (s[i] == '(' && i > 0 && s[i - 1] != ' ' && s[i - 1] != ':' &&
			    !(j - i + 1 == ANON_LEN && memcmp(s + i, ANON, ANON_LEN) == 0) &&
			    qualifiers_only(s + j + 1, n - j - 1)) {
				pa = i;
				pb = j;
			}
			i = j + 1;
			continue;
		}
		/* " const" of a member ("operator()() const::{lambda()#2}") names no type before it */
		if (s[i] == ' ' && pa == (size_t)-1 && !starts(s + i, n - i, " const") &&
		    !starts(s + i, n - i, " volatile"))
			lastsp = i;
		i++;
	}
	end = n;
	if (pa != (size_t)-1) {
		k->has_p = 1;
		k->p0 = pa;
		k->p1 = pb + 1;
		end = pa;
	}
	while (end > 0 && s[end - 1] == ' ')
		end--;
	if (lastsp != (size_t)-1 && lastsp < end)
		k->q0 = lastsp + 1;
	/* a trailing <...> right before the parameters is the function's */
	if (end > k->q0 && s[end - 1] == '>') {
		for (i = k->q0; i < end; i++) {
			if (!opener(s, i))
				continue;
			j = close_of(s, n, i);
			if (j + 1 == end && s[i] == '<') {
				ta = i;
				tb = j;
				break;
			}
			i = j;
		}
	}
	if (ta != (size_t)-1) {
		k->has_t = 1;
		k->t0 = ta + 1;
		k->t1 = tb;
		k->q1 = ta;
	} else
		k->q1 = end;
	k->kind = k->has_t || k->has_p || memmem(s + k->q0, k->q1 - k->q0, "::", 2) ?
	    K_CXX : K_PLAIN;
	/* a plain name with spaces is one name; only "void " is a return type there */
	if (k->kind == K_PLAIN && k->q0 && !(k->q0 == 5 && memcmp(s, "void ", 5) == 0))
		k->q0 = 0;
}

/* The components of a qualified name: spans split at top-level "::". */
struct comps {
	size_t a[64], b[64];
	size_t n;
};

static void
split_scope(const char *s, size_t q0, size_t q1, struct comps *c)
{
	size_t i = q0, start = q0, j;

	c->n = 0;
	while (i < q1) {
		if (opener(s, i)) {
			j = close_of(s, q1, i);
			i = j < q1 ? j + 1 : q1;
			continue;
		}
		if (i + 1 < q1 && s[i] == ':' && s[i + 1] == ':') {
			if (c->n < 63) {
				c->a[c->n] = start;
				c->b[c->n++] = i;
			}
			i += 2;
			start = i;
			continue;
		}
		i++;
	}
	c->a[c->n] = start;
	c->b[c->n++] = q1;
}

static int
is_anon(const char *s, size_t a, size_t b)
{
	return b - a == ANON_LEN && memcmp(s + a, ANON, ANON_LEN) == 0;
}

/*
 * One scope component as shown: its template lists elided to "<…>", a
 * parenthesized part to "(…)"; with `strip`, lists dropped altogether
 * (the identity).
 */
static void
put_comp(const char *s, size_t a, size_t b, int strip, sbuf *out)
{
	size_t i = a, j;

	while (i < b) {
		if (opener(s, i)) {
			j = close_of(s, b, i);
			if (j >= b) {
				sb_add(out, s + i, b - i);
				return;
			}
			if (!strip) {
				if (s[i] == '{' && j - i <= 24)
					sb_add(out, s + i, j - i + 1);
				else {
					sb_addc(out, s[i]);
					sb_adds(out, ELL);
					sb_addc(out, s[j]);
				}
			}
			i = j + 1;
			continue;
		}
		sb_addc(out, s[i++]);
	}
}

/*
 * Scope components [from, to) of c as shown, "::"-joined, the
 * "(anonymous namespace)" ones left out.
 */
static void
put_scopes(const char *s, const struct comps *c, size_t from, size_t to, int strip, sbuf *out)
{
	size_t i, shown = 0;

	for (i = from; i < to; i++) {
		if (is_anon(s, c->a[i], c->b[i]))
			continue;
		if (shown++)
			sb_adds(out, "::");
		put_comp(s, c->a[i], c->b[i], strip, out);
	}
}

/* The qualified name s[q0..q1), "(anonymous namespace)" scopes left out. */
static void
put_qname(const char *s, size_t q0, size_t q1, int strip, sbuf *out)
{
	struct comps c;

	split_scope(s, q0, q1, &c);
	put_scopes(s, &c, 0, c.n, strip, out);
}

/* Split a template argument list at its top-level commas; spaces trimmed. */
struct args {
	size_t a[128], b[128];
	size_t n;
	int more;		/* past 128 arguments */
};

static void
split_args(const char *s, size_t t0, size_t t1, struct args *g)
{
	size_t i = t0, start = t0, j;

	g->n = 0;
	g->more = 0;
	if (t0 >= t1)
		return;
	for (;;) {
		if (i >= t1 || s[i] == ',') {
			size_t a = start, b = i < t1 ? i : t1;
			while (a < b && s[a] == ' ')
				a++;
			while (b > a && s[b - 1] == ' ')
				b--;
			if (g->n < 128) {
				g->a[g->n] = a;
				g->b[g->n++] = b;
			} else
				g->more = 1;
			if (i >= t1)
				return;
			start = ++i;
			continue;
		}
		if (opener(s, i)) {
			j = close_of(s, t1, i);
			i = j < t1 ? j + 1 : t1;
			continue;
		}
		i++;
	}
}

static const char *const wrappers[] = { "kentry", "Kernel", "Kernel2", "device_kernel", NULL };

/*
 * For a launch wrapper (its last component is one of wrappers[]), the
 * index of the template argument that names the kernel it runs: the first
 * that starts like a name and is qualified, templated or long (not a
 * number, a bool or a scalar type).  -1 when it is none.
 */
static long
wrapped_arg(const char *s, const struct kparts *k, struct args *g)
{
	struct comps c;
	size_t i, w;

	if (k->kind != K_CXX || !k->has_t)
		return -1;
	split_scope(s, k->q0, k->q1, &c);
	for (w = 0; wrappers[w]; w++)
		if (c.b[c.n - 1] - c.a[c.n - 1] == strlen(wrappers[w]) &&
		    memcmp(s + c.a[c.n - 1], wrappers[w], strlen(wrappers[w])) == 0)
			break;
	if (!wrappers[w])
		return -1;
	split_args(s, k->t0, k->t1, g);
	for (i = 0; i < g->n; i++) {
		size_t a = g->a[i], b = g->b[i];
		if (b == a || !(is_alpha((unsigned char)s[a]) || s[a] == '_'))
			continue;
		if (memmem(s + a, b - a, "::", 2) || memchr(s + a, '<', b - a) || b - a >= 16)
			return (long)i;
	}
	return -1;
}

void
kname_identity(const char *name, size_t n, sbuf *out)
{
	sbuf d = SBUF_INIT;
	struct kparts k, kw;
	struct args g;
	long w;

	kname_display(name, n, &d);
	parse(d.s ? d.s : "", d.len, &k);
	sb_reset(out);
	if (k.kind == K_COPY) {
		sb_add(out, sb_str(&d), d.len);
	} else if ((w = wrapped_arg(d.s, &k, &g)) >= 0) {
		/* the kernel class the wrapper runs, read as a name of its own */
		const char *a = d.s + g.a[w];
		parse(a, g.b[w] - g.a[w], &kw);
		put_qname(a, kw.q0, kw.q1, 1, out);
	} else if (k.kind == K_CXX) {
		put_qname(d.s, k.q0, k.q1, 1, out);
	} else {
		sb_add(out, sb_str(&d) + k.q0, k.q1 - k.q0);
	}
	sb_free(&d);
}

/* ---- plain names by units ---- */

/*
 * The units of a plain name: runs of letters and digits; a run longer
 * than 24 characters is cut where a capital follows a small letter or a
 * digit (fmhaSm100fKernel_QkvBfloat16...).  `must` marks units that stay.
 */
struct units {
	size_t a[256], b[256];
	unsigned char must[256];
	size_t n;
	int cut;		/* more than 256 units: the rest is never shown */
};

static void
split_units(const char *s, size_t n, struct units *u)
{
	size_t i = 0, start, j;

	u->n = 0;
	u->cut = 0;
	while (i < n) {
		if (u->n == 256) {
			u->cut = 1;
			break;
		}
		if (!(is_alpha((unsigned char)s[i]) || is_digit((unsigned char)s[i]))) {
			i++;
			continue;
		}
		start = i;
		while (i < n && (is_alpha((unsigned char)s[i]) || is_digit((unsigned char)s[i])))
			i++;
		if (i - start <= 24) {
			u->a[u->n] = start;
			u->b[u->n++] = i;
			continue;
		}
		for (j = start + 1; j <= i && u->n < 256; j++) {
			unsigned char p = (unsigned char)s[j - 1], c = j < i ? (unsigned char)s[j] : 0;
			if (j == i || (c >= 'A' && c <= 'Z' && ((p >= 'a' && p <= 'z') || is_digit(p)))) {
				u->a[u->n] = start;
				u->b[u->n++] = j;
				start = j;
			}
		}
	}
	memset(u->must, 0, sizeof u->must);
}

/* A tile or shape word: letters, then digits 'x' digits (MT128x256x32, 64x16, bt128x128x32). */
static int
shape_unit(const char *s, size_t a, size_t b)
{
	size_t i;

	for (i = a; i + 2 < b; i++)
		if (is_digit((unsigned char)s[i]) && s[i + 1] == 'x' && is_digit((unsigned char)s[i + 2]))
			return 1;
	return 0;
}

static int
all_digits(const char *s, size_t a, size_t b)
{
	size_t i;

	for (i = a; i < b; i++)
		if (!is_digit((unsigned char)s[i]))
			return 0;
	return b > a;
}

/*
 * The units a plain name always keeps: its first, its vendor tile words,
 * a Triton index.  Returns 1 for a Tensile name, whose words up to the
 * matrix instruction all stay (they say the problem: transposes, types,
 * bias, the macro tile MT..x..x.., the instruction MI..) and whose tail
 * says less.
 */
static int
mark_vendor(const char *s, size_t n, struct units *u)
{
	size_t i, j, first = u->n;

	if (u->n == 0)
		return 0;
	u->must[0] = 1;
	if (starts(s, n, "Cijk_")) {
		for (i = 0; i < u->n; i++) {
			if (starts(s + u->a[i], u->b[i] - u->a[i], "MI") &&
			    u->b[i] - u->a[i] > 2 && is_digit((unsigned char)s[u->a[i] + 2])) {
				for (j = 0; j <= i; j++)
					u->must[j] = 1;
				return 1;
			}
		}
		for (i = 0; i < u->n; i++)
			if (starts(s + u->a[i], u->b[i] - u->a[i], "MT") &&
			    u->b[i] - u->a[i] > 2 && is_digit((unsigned char)s[u->a[i] + 2])) {
				u->must[i] = 1;
				break;
			}
		return 1;
	} else {
		for (i = 0; i < u->n && first == u->n; i++)
			if (shape_unit(s, u->a[i], u->b[i]) && u->b[i] <= 100)
				first = i;
		if (first < u->n) {
			u->must[first] = 1;
			if (first + 1 < u->n && shape_unit(s, u->a[first + 1], u->b[first + 1]))
				u->must[first + 1] = 1;
		}
	}
	if (all_digits(s, u->a[u->n - 1], u->b[u->n - 1]))
		u->must[u->n - 1] = 1;
	return 0;
}

/* Render the kept units (keep[i]) of s; gaps become "…" with the separators around them. */
static void
render_units(const char *s, size_t n, const struct units *u, const unsigned char *keep, sbuf *out)
{
	size_t i, last = (size_t)-1;

	sb_reset(out);
	sb_add(out, s, u->n ? u->a[0] : n);	/* a leading separator ("_matmul") */
	for (i = 0; i < u->n; i++) {
		if (!keep[i])
			continue;
		if (last != (size_t)-1) {
			if (last + 1 == i) {
				sb_add(out, s + u->b[last], u->a[i] - u->b[last]);
			} else {
				if (s[u->b[last]] == '_')
					sb_addc(out, '_');
				sb_adds(out, ELL);
				if (s[u->a[i] - 1] == '_')
					sb_addc(out, '_');
			}
		}
		sb_add(out, s + u->a[i], u->b[i] - u->a[i]);
		last = i;
	}
	if (last == (size_t)-1)
		return;
	if (last + 1 < u->n || u->cut) {
		if (s[u->b[last]] == '_')
			sb_addc(out, '_');
		sb_adds(out, ELL);
	} else {
		sb_add(out, s + u->b[last], n - u->b[last]);	/* a trailing separator */
	}
}

/*
 * A plain name in about `width` characters: the units it must keep and
 * its last units (up to 12 characters), then as many of the others as fit
 * from the front.  `extra` (NULL: none) marks more units that stay.
 * Appends to res.
 */
static void
short_plain(const char *s, size_t n, size_t width, const unsigned char *extra, sbuf *res)
{
	sbuf tmp = SBUF_INIT, *out = &tmp;
	struct units u;
	unsigned char keep[256], base[256];
	size_t i, tail = 0;
	int tensile;

	if (u8len(s, n) <= width && !extra) {
		sb_add(res, s, n);
		return;
	}
	split_units(s, n, &u);
	tensile = mark_vendor(s, n, &u);
	for (i = 0; extra && i < u.n; i++)
		u.must[i] |= extra[i];
	memcpy(keep, u.must, sizeof keep);
	for (i = u.n; i > 1 && !tensile; i--) {
		tail += u.b[i - 1] - u.a[i - 1];
		if (tail > 12 && i < u.n)
			break;
		if (tail > 16)
			break;
		keep[i - 1] = 1;
	}
	render_units(s, n, &u, keep, out);
	if (u8len(sb_str(out), out->len) > width)
		memcpy(keep, u.must, sizeof keep);	/* no room for the tail */
	memcpy(base, keep, sizeof base);
	for (i = 1; i < u.n; i++) {
		if (keep[i])
			continue;
		keep[i] = 1;
		render_units(s, n, &u, keep, out);
		if (u8len(sb_str(out), out->len) > width) {
			keep[i] = 0;
			break;
		}
	}
	(void)base;
	render_units(s, n, &u, keep, out);
	sb_add(res, sb_str(out), out->len);
	sb_free(&tmp);
}

/* ---- short names ---- */

/* The template argument at a (its text) as a clash shows it: whole when short. */
static void
put_arg(const char *s, size_t a, size_t b, sbuf *out)
{
	struct kparts k;

	if (u8len(s + a, b - a) <= 24) {
		sb_add(out, s + a, b - a);
		return;
	}
	if (s[a] == '(') {
		/* a cast constant, "(ck::InMemoryDataOperationEnum)1": its type's last name */
		size_t j = close_of(s, b, a), i;
		if (j < b) {
			for (i = j; i > a + 1 && s[i - 1] != ':'; i--)
				;
			sb_addc(out, '(');
			sb_add(out, s + i, j - i);
			sb_add(out, s + j, b - j);
			return;
		}
	}
	parse(s + a, b - a, &k);
	if (k.kind == K_CXX) {
		struct comps c;
		size_t i, j;
		split_scope(s + a, k.q0, k.q1, &c);
		/*
		 * A lambda ("f(...)::{lambda()#1}::operator()() const::{lambda(int)#1}")
		 * is shown by the function it is defined in: "f(…)::{…}".
		 */
		for (i = c.n; i > 0 && (s[a + c.a[i - 1]] == '{' ||
		    starts(s + a + c.a[i - 1], c.b[i - 1] - c.a[i - 1], "operator()")); i--)
			;
		if (i > 0 && i < c.n) {
			for (j = c.a[i - 1]; j < c.b[i - 1] && is_ident((unsigned char)s[a + j]); j++)
				;
			sb_add(out, s + a + c.a[i - 1], j - c.a[i - 1]);
			sb_adds(out, "(" ELL ")::{" ELL "}");
			return;
		}
		put_comp(s + a, c.a[c.n - 1], c.b[c.n - 1], 0, out);
		if (k.has_t)
			sb_adds(out, "<" ELL ">");
	} else
		short_plain(s + a, b - a, 24, NULL, out);
}

/*
 * Balance what a short name shows: a closer without its opener is
 * dropped, openers left open are closed at the end (a cut name).
 */
static void
balance(sbuf *b)
{
	char st[MAX_DEPTH];
	size_t d = 0, i, o = 0;
	char *s = b->s;

	if (!s)
		return;
	for (i = 0; i < b->len; i++) {
		char c = s[i];
		if (c == '(' || c == '[' || c == '{' || (c == '<' && lt_opens(s, i))) {
			if (d < MAX_DEPTH)
				st[d++] = c;
		} else if (c == ')' || c == ']' || c == '}') {
			char want = c == ')' ? '(' : c == ']' ? '[' : '{';
			if (!d || st[d - 1] != want)
				continue;	/* stray: left out */
			d--;
		} else if (c == '>' && d && st[d - 1] == '<') {
			d--;
		}
		s[o++] = c;
	}
	b->len = o;
	s[o] = '\0';
	while (d) {
		char c = st[--d];
		sb_addc(b, c == '(' ? ')' : c == '[' ? ']' : c == '{' ? '}' : '>');
	}
}

/*
 * No short name runs past twice the width, whatever it is made of (a
 * hostile name of one 300,000-character word, thousands of tile words):
 * cut at a character boundary, "…" added, brackets closed again.
 */
static void
cap(sbuf *b, size_t width)
{
	size_t i, k = 0, max = 2 * width;

	if (u8len(sb_str(b), b->len) <= max)
		return;
	for (i = 0; i < b->len; i++)
		if (((unsigned char)b->s[i] & 0xc0) != 0x80 && k++ == max)
			break;
	b->len = i;
	b->s[i] = '\0';
	sb_adds(b, ELL);
	balance(b);
}

/*
 * How a name is shown, before clashes: `show` marks the template
 * arguments to show (NULL: the wrapper's kernel, or none), `tok` a word
 * of the arguments or parameters to add ("…word…"), `uextra` the units a
 * plain name must keep.
 */
struct view {
	const unsigned char *show;
	size_t nshow;
	const char *tok;	/* NUL-terminated, or NULL */
	int tok_in_params;
	const unsigned char *uextra;
};

/* A scope component without brackets (a name that units can shorten)? */
static int
plain_comp(const char *s, size_t a, size_t b)
{
	size_t i;

	for (i = a; i < b; i++)
		if (opener(s, i) || s[i] == ' ')
			return 0;
	return 1;
}

static void
render(const char *d, size_t n, const struct kparts *k, size_t width, const struct view *v,
    sbuf *out)
{
	sbuf q = SBUF_INIT;
	struct args g;
	struct comps c;
	size_t i;
	long w = -1;

	sb_reset(out);
	if (k->kind == K_COPY) {
		sb_add(out, d, n);
		cap(out, width);
		return;
	}
	if (k->kind == K_PLAIN) {
		short_plain(d + k->q0, k->q1 - k->q0, width, v ? v->uextra : NULL, out);
		balance(out);
		cap(out, width);
		return;
	}
	split_scope(d, k->q0, k->q1, &c);
	/* the scopes, then the function (a long plain one shortened by its units) */
	put_scopes(d, &c, 0, c.n - 1, 0, &q);
	if (c.n >= 3 && u8len(sb_str(&q), q.len) + c.b[c.n - 1] - c.a[c.n - 1] > width) {
		/* the vendor's namespace and the function; the scopes between elided */
		sb_reset(&q);
		put_comp(d, c.a[0], c.b[0], 0, &q);
		sb_adds(&q, "::" ELL);
	}
	if (c.n > 1 && q.len)
		sb_adds(&q, "::");
	if (plain_comp(d, c.a[c.n - 1], c.b[c.n - 1])) {
		size_t room = u8len(sb_str(&q), q.len);
		sbuf f = SBUF_INIT;
		short_plain(d + c.a[c.n - 1], c.b[c.n - 1] - c.a[c.n - 1],
		    room + 24 < width ? width - room : 24, v ? v->uextra : NULL, &f);
		sb_add(&q, sb_str(&f), f.len);
		sb_free(&f);
	} else
		put_comp(d, c.a[c.n - 1], c.b[c.n - 1], 0, &q);
	sb_add(out, sb_str(&q), q.len);
	if (k->has_t) {
		int gap = 0, any = 0;

		w = wrapped_arg(d, k, &g);
		if (w < 0)
			split_args(d, k->t0, k->t1, &g);
		sb_addc(out, '<');
		for (i = 0; i < g.n; i++) {
			int shown = v && v->show ? i < v->nshow && v->show[i] : (long)i == w;
			if (!shown) {
				gap = 1;
				continue;
			}
			if (any || gap)
				sb_adds(out, any && !gap ? ", " : any ? ", " ELL ", " : ELL ", ");
			gap = 0;
			if ((long)i == w && !(v && v->show)) {
				struct kparts kw;
				const char *a = d + g.a[i];
				parse(a, g.b[i] - g.a[i], &kw);
				if (kw.kind == K_CXX) {
					split_scope(a, kw.q0, kw.q1, &c);
					put_comp(a, c.a[c.n - 1], c.b[c.n - 1], 0, out);
					if (kw.has_t)
						sb_adds(out, "<" ELL ">");
				} else {
					size_t room = u8len(sb_str(out), out->len) + 1;
					short_plain(a, g.b[i] - g.a[i], room + 32 < width ? width - room : 32,
					    NULL, out);
				}
			} else
				put_arg(d, g.a[i], g.b[i], out);
			any = 1;
		}
		if (gap || g.more || !any)
			sb_adds(out, any ? ", " ELL : ELL);
		if (v && v->tok && !v->tok_in_params) {
			sb_adds(out, any ? ", " ELL : "");
			sb_adds(out, v->tok);
			sb_adds(out, ELL);
		}
		sb_addc(out, '>');
	}
	if (v && v->tok && v->tok_in_params) {
		sb_adds(out, "(" ELL);
		sb_adds(out, v->tok);
		sb_adds(out, ELL ")");
	}
	balance(out);
	cap(out, width);
	sb_free(&q);
}

void
kname_short(const char *s, size_t n, size_t width, sbuf *out)
{
	sbuf d = SBUF_INIT;
	struct kparts k;

	kname_display(s, n, &d);
	parse(sb_str(&d), d.len, &k);
	render(sb_str(&d), d.len, &k, width, NULL, out);
	sb_free(&d);
}

/* ---- one table ---- */

struct item {
	const char *raw;	/* the name as given */
	sbuf d;			/* display text */
	struct kparts k;
	char *out;
	unsigned char *show;	/* template arguments shown */
	size_t nshow;
	unsigned char uextra[256];
	int has_uextra;
	char *tok;
	int tok_in_params;
	int done;		/* hashed: no further rounds */
};

/* qsort of indexes by the strings they point to (a table's shorts; set before the sort). */
static char **sort_by;

static int
cmp_str_idx(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = strcmp(sort_by[x], sort_by[y]);

	return c ? c : (x > y) - (x < y);
}

static void
sort_idx(size_t *ix, size_t n, char **v)
{
	sort_by = v;
	if (n > 1)
		xqsort(ix, n, sizeof *ix, cmp_str_idx);
	sort_by = NULL;
}

/* The words ([A-Za-z0-9_] runs) of s[a..b): their spans, up to max. */
static size_t
tokens(const char *s, size_t a, size_t b, size_t *ta, size_t *tb, size_t max)
{
	size_t i = a, n = 0;

	while (i < b && n < max) {
		if (!is_ident((unsigned char)s[i])) {
			i++;
			continue;
		}
		ta[n] = i;
		while (i < b && is_ident((unsigned char)s[i]))
			i++;
		tb[n++] = i;
	}
	return n;
}

static void
rerender(struct item *it, size_t width)
{
	struct view v = { it->show, it->nshow, it->tok, it->tok_in_params,
		it->has_uextra ? it->uextra : NULL };

	free(it->out);
	sbuf o = SBUF_INIT;
	render(sb_str(&it->d), it->d.len, &it->k, width, &v, &o);
	it->out = o.s ? sb_detach(&o) : xstrdup("");
}

/* Where the units of a name start: its last scope component (it ends at q1). */
static void
unit_span(const struct item *x, size_t *a)
{
	struct comps c;

	*a = x->k.q0;
	if (x->k.kind != K_CXX)
		return;
	split_scope(x->d.s, x->k.q0, x->k.q1, &c);
	*a = c.a[c.n - 1];
}

/* Resolve one clash group g[0..m) (different display texts, one short name). */
static void
resolve(struct item *it, const size_t *g, size_t m, int round, size_t width)
{
	size_t i, j, p;
	int cxx_t = 1, plain = 1;

	for (i = 0; i < m; i++) {
		cxx_t &= it[g[i]].k.kind == K_CXX && it[g[i]].k.has_t;
		plain &= it[g[i]].k.kind == K_PLAIN || (it[g[i]].k.kind == K_CXX && !it[g[i]].k.has_t);
	}
	if (round == 0) {
		/* names whose functions differ: the first unit of the function in which they do */
		struct comps c0, ci;
		int differ = 0;
		split_scope(it[g[0]].d.s, it[g[0]].k.q0, it[g[0]].k.q1, &c0);
		for (i = 1; i < m && !differ; i++) {
			const struct item *x = &it[g[i]];
			split_scope(x->d.s, x->k.q0, x->k.q1, &ci);
			differ = ci.b[ci.n - 1] - ci.a[ci.n - 1] != c0.b[c0.n - 1] - c0.a[c0.n - 1] ||
			    memcmp(x->d.s + ci.a[ci.n - 1], it[g[0]].d.s + c0.a[c0.n - 1],
			    c0.b[c0.n - 1] - c0.a[c0.n - 1]) != 0;
		}
		if (differ) {
			plain = 1;	/* the units below */
			cxx_t = 0;
		}
	}
	if (round == 0 && cxx_t) {
		/* the template arguments in which they differ */
		struct args *a = xcalloc(m, sizeof *a);
		size_t most = 0;
		for (i = 0; i < m; i++) {
			split_args(it[g[i]].d.s, it[g[i]].k.t0, it[g[i]].k.t1, &a[i]);
			if (a[i].n > most)
				most = a[i].n;
		}
		/* an argument differs when not every name has the first one's */
		unsigned char *differ = xcalloc(most + 1, 1);
		for (p = 0; p < most; p++)
			for (j = 1; j < m && !differ[p]; j++) {
				const char *s1 = it[g[0]].d.s, *s2 = it[g[j]].d.s;
				size_t l1 = p < a[0].n ? a[0].b[p] - a[0].a[p] : (size_t)-1;
				size_t l2 = p < a[j].n ? a[j].b[p] - a[j].a[p] : (size_t)-1;
				differ[p] = l1 != l2 || (l1 != (size_t)-1 &&
				    memcmp(s1 + a[0].a[p], s2 + a[j].a[p], l1) != 0);
			}
		for (i = 0; i < m; i++) {
			struct item *x = &it[g[i]];
			free(x->show);
			x->show = xcalloc(most + 1, 1);
			x->nshow = most;
			memcpy(x->show, differ, most);
			rerender(x, width);
		}
		free(differ);
		free(a);
		return;
	}
	if (round <= 1 && plain) {
		/* the first unit in which the names differ stays */
		struct units *u = xcalloc(m, sizeof *u);
		size_t most = 0, *ua = xcalloc(m, sizeof *ua);
		for (i = 0; i < m; i++) {
			const struct item *x = &it[g[i]];
			unit_span(x, &ua[i]);
			split_units(x->d.s + ua[i], x->k.q1 - ua[i], &u[i]);
			if (u[i].n > most)
				most = u[i].n;
		}
		for (p = 0; p < most; p++) {
			int differ = 0;
			for (i = 1; i < m && !differ; i++) {
				const char *s0 = it[g[0]].d.s + ua[0], *si = it[g[i]].d.s + ua[i];
				size_t l0 = p < u[0].n ? u[0].b[p] - u[0].a[p] : (size_t)-1;
				size_t li = p < u[i].n ? u[i].b[p] - u[i].a[p] : (size_t)-1;
				differ = l0 != li || (l0 != (size_t)-1 &&
				    memcmp(s0 + u[0].a[p], si + u[i].a[p], l0) != 0);
			}
			if (differ)
				break;
		}
		for (i = 0; i < m && p < most; i++) {
			struct item *x = &it[g[i]];
			if (p < u[i].n) {
				x->uextra[p] = 1;
				x->has_uextra = 1;
			} else if (u[i].n) {
				x->uextra[u[i].n - 1] = 1;
				x->has_uextra = 1;
			}
			rerender(x, width);
		}
		free(u);
		free(ua);
		if (p < most)
			return;
	}
	if (round <= 2) {
		/* the first word of the arguments and parameters in which they differ */
		size_t (*ta)[64] = xcalloc(m, sizeof *ta), (*tb)[64] = xcalloc(m, sizeof *tb);
		size_t *nt = xcalloc(m, sizeof *nt), most = 0;
		for (i = 0; i < m; i++) {
			const struct item *x = &it[g[i]];
			size_t from = x->k.has_t ? x->k.t0 : x->k.has_p ? x->k.p0 : x->k.q1;
			nt[i] = tokens(x->d.s, from, x->d.len, ta[i], tb[i], 64);
			if (nt[i] > most)
				most = nt[i];
		}
		for (p = 0; p < most; p++) {
			int differ = 0;
			for (i = 1; i < m && !differ; i++) {
				size_t l0 = p < nt[0] ? tb[0][p] - ta[0][p] : (size_t)-1;
				size_t li = p < nt[i] ? tb[i][p] - ta[i][p] : (size_t)-1;
				differ = l0 != li || (l0 != (size_t)-1 && memcmp(it[g[0]].d.s + ta[0][p],
				    it[g[i]].d.s + ta[i][p], l0) != 0);
			}
			if (differ)
				break;
		}
		for (i = 0; i < m && p < most; i++) {
			struct item *x = &it[g[i]];
			free(x->tok);
			x->tok = p < nt[i] ? xstrndup(x->d.s + ta[i][p], tb[i][p] - ta[i][p]) :
			    xstrdup("");
			x->tok_in_params = !x->k.has_t || (p < nt[i] && ta[i][p] >= x->k.t1);
			rerender(x, width);
		}
		free(ta);
		free(tb);
		free(nt);
		if (p < most)
			return;
	}
	/* the last resort: a hash of the whole name */
	for (i = 0; i < m; i++) {
		struct item *x = &it[g[i]];
		char tag[16];
		size_t len = strlen(x->out);
		if (x->done)
			continue;
		snprintf(tag, sizeof tag, " #%04x",
		    (unsigned)(hash_bytes(x->raw, strlen(x->raw)) & 0xffff));
		x->out = xrealloc(x->out, len + strlen(tag) + 1);
		memcpy(x->out + len, tag, strlen(tag) + 1);
		x->done = 1;
	}
}

void
kname_short_all(const char *const *names, size_t n, size_t width, char **out)
{
	struct item *it = xcalloc(n ? n : 1, sizeof *it);
	size_t *ix = xcalloc(n ? n : 1, sizeof *ix), i, j, k, q, m;
	size_t *g = xcalloc(n ? n : 1, sizeof *g), *tmp = xcalloc(n ? n : 1, sizeof *tmp);
	size_t *rep = xcalloc(n ? n : 1, sizeof *rep);
	char **shorts = xcalloc(n ? n : 1, sizeof *shorts), **raws = xcalloc(n ? n : 1, sizeof *raws);
	int round, clash = 1;

	for (i = 0; i < n; i++) {
		it[i].raw = names[i];
		kname_display(names[i], strlen(names[i]), &it[i].d);
		if (!it[i].d.s)
			sb_adds(&it[i].d, "");
		parse(it[i].d.s, it[i].d.len, &it[i].k);
		rerender(&it[i], width);
	}
	for (round = 0; clash && round < 4; round++) {
		clash = 0;
		for (i = 0; i < n; i++) {
			ix[i] = i;
			shorts[i] = it[i].out;
		}
		sort_idx(ix, n, shorts);
		for (i = 0; i < n; i = j) {
			for (j = i; j < n && strcmp(it[ix[j]].out, it[ix[i]].out) == 0; j++)
				;
			if (j - i < 2)
				continue;
			/* the group's distinct names, one index each: sorted by name, runs of one */
			for (k = i; k < j; k++)
				raws[k - i] = (char *)it[ix[k]].raw;
			for (k = i; k < j; k++)
				tmp[k - i] = k - i;
			sort_idx(tmp, j - i, raws);
			for (m = 0, k = 0; k < j - i; k++) {
				if (k == 0 || strcmp(raws[tmp[k]], raws[tmp[k - 1]]) != 0)
					g[m++] = ix[i + tmp[k]];
				rep[k] = g[m - 1];
			}
			if (m < 2)
				continue;
			clash = 1;
			resolve(it, g, m, round, width);
			/* a name given twice follows its first */
			for (k = 0; k < j - i; k++) {
				q = ix[i + tmp[k]];
				if (q != rep[k]) {
					free(it[q].out);
					it[q].out = xstrdup(it[rep[k]].out);
				}
			}
		}
	}
	/*
	 * Four hex digits of hash collide past a few hundred hashed names (a
	 * hostile table): then all sixteen, then an ordinal, so that no two
	 * different names ever end alike.
	 */
	for (round = 0; clash && round < 2; round++) {
		clash = 0;
		for (i = 0; i < n; i++) {
			ix[i] = i;
			shorts[i] = it[i].out;
		}
		sort_idx(ix, n, shorts);
		for (i = 0; i < n; i = j) {
			size_t ord = 0;
			for (j = i; j < n && strcmp(it[ix[j]].out, it[ix[i]].out) == 0; j++)
				;
			for (k = i + 1; k < j; k++)
				if (strcmp(it[ix[k]].raw, it[ix[i]].raw) != 0)
					break;
			if (k == j)
				continue;	/* one name, given several times */
			clash = 1;
			for (k = i; k < j; k++) {
				struct item *x = &it[ix[k]];
				char tag[40];
				if (round == 0)
					snprintf(tag, sizeof tag, "%016llx", (unsigned long long)
					    hash_bytes(x->raw, strlen(x->raw)));
				else
					snprintf(tag, sizeof tag, "%016llx-%zu", (unsigned long long)
					    hash_bytes(x->raw, strlen(x->raw)), ++ord);
				rerender(x, width);	/* the 4-digit tag goes, the long one comes */
				q = strlen(x->out);
				x->out = xrealloc(x->out, q + strlen(tag) + 3);
				snprintf(x->out + q, strlen(tag) + 3, " #%s", tag);
			}
		}
	}
	for (i = 0; i < n; i++) {
		out[i] = it[i].out;
		sb_free(&it[i].d);
		free(it[i].show);
		free(it[i].tok);
	}
	free(it);
	free(ix);
	free(g);
	free(tmp);
	free(rep);
	free(shorts);
	free(raws);
}
