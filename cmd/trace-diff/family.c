/*
 * Kernel families (trace-diff(1), "Families"): the part of a kernel's name
 * that survives retuning, so that a GEMM whose tile sizes or template
 * arguments changed between two runs is one "changed" kernel rather than a
 * "removed" and a "new" one.  The C++ demangler is no help here: the
 * runtime's refuses the manglings GPU compilers emit today (DF16b), so
 * mangled names are read only as far as their scope path.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"

static void
cut(sbuf *b, size_t len)
{
	b->len = len;
	if (b->s)
		b->s[len] = '\0';
}

/*
 * The scope path of an Itanium-mangled name, "ns::cls::func", up to its
 * first template argument list: _Z [L] [N [K|V|r|R|O]...] then <length>
 * <identifier> pieces.  Returns 0 (out untouched) when the name does not
 * start that way.
 */
static int
mangled_scope(const char *s, size_t n, sbuf *out)
{
	const char *p = s + 2, *end = s + n;
	size_t start = out->len;
	int pieces = 0;

	if (n < 3 || s[0] != '_' || s[1] != 'Z')
		return 0;
	if (p < end && *p == 'L')
		p++;
	if (p < end && *p == 'N') {
		p++;
		while (p < end && strchr("KVrRO", *p))
			p++;
	}
	while (p < end && *p >= '1' && *p <= '9') {
		size_t len = 0;
		while (p < end && isdigit((unsigned char)*p))
			len = len * 10 + (size_t)(*p++ - '0');
		if (len > (size_t)(end - p)) {
			cut(out, start);
			return 0;
		}
		if (pieces++)
			sb_adds(out, "::");
		if (len >= 10 && strncmp(p, "_GLOBAL__N", 10) == 0)
			sb_adds(out, "(anonymous namespace)");
		else
			sb_add(out, p, len);
		p += len;
	}
	if (pieces == 0)
		cut(out, start);
	return pieces > 0;
}

/*
 * Drop template argument lists and parameter lists: every balanced <...>
 * or (...) group, nested ones inside it included, except the scope
 * "(anonymous namespace)".  An unbalanced group is kept as it is.
 */
static void
drop_lists(const char *s, size_t n, sbuf *out)
{
	size_t i = 0;

	while (i < n) {
		size_t j;
		int depth = 0;

		if (s[i] != '<' && s[i] != '(') {
			sb_addc(out, s[i++]);
			continue;
		}
		if (n - i >= 21 && memcmp(s + i, "(anonymous namespace)", 21) == 0) {
			sb_add(out, s + i, 21);
			i += 21;
			continue;
		}
		for (j = i; j < n; j++) {
			if (s[j] == '<' || s[j] == '(')
				depth++;
			else if ((s[j] == '>' || s[j] == ')') && --depth == 0)
				break;
		}
		if (j == n) {
			sb_add(out, s + i, n - i);
			return;
		}
		i = j + 1;
	}
}

static int
is_hexdigit(int c)
{
	return isdigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/*
 * Hashes and numbers to '#': an alphanumeric token of 8 or more hex digits
 * mixing digits and letters (a build hash), then every run of digits, then
 * "ADDR" (canonical names write hexadecimal addresses as 0xADDR).
 */
static void
mask_numbers(const char *s, size_t n, sbuf *out)
{
	size_t i = 0;

	while (i < n) {
		size_t j = i;
		int digits = 0, letters = 0, hex = 1;

		if (!isalnum((unsigned char)s[i])) {
			sb_addc(out, s[i++]);
			continue;
		}
		while (j < n && isalnum((unsigned char)s[j])) {
			if (isdigit((unsigned char)s[j]))
				digits = 1;
			else if (is_hexdigit((unsigned char)s[j]))
				letters = 1;
			else
				hex = 0;
			j++;
		}
		if (hex && digits && letters && j - i >= 8) {
			sb_addc(out, '#');
			i = j;
			continue;
		}
		for (; i < j; i++) {
			if (!isdigit((unsigned char)s[i])) {
				if (j - i >= 4 && memcmp(s + i, "ADDR", 4) == 0) {
					sb_addc(out, '#');
					i += 3;
				} else
					sb_addc(out, s[i]);
				continue;
			}
			sb_addc(out, '#');
			while (i + 1 < j && isdigit((unsigned char)s[i + 1]))
				i++;
		}
	}
}

void
kernel_family(const char *name, size_t n, sbuf *out)
{
	sbuf a = SBUF_INIT, b = SBUF_INIT;
	const char *p;
	size_t len;

	sb_reset(out);
	if (!mangled_scope(name, n, &a)) {
		/* a demangled function template names its return type first */
		if (n > 5 && memcmp(name, "void ", 5) == 0) {
			name += 5;
			n -= 5;
		}
		drop_lists(name, n, &a);
	}
	p = sb_str(&a);
	len = a.len;
	while (len && p[len - 1] == ' ')
		len--;
	while (len && *p == ' ') {
		p++;
		len--;
	}
	if (len == 0) {		/* nothing but lists: the name is its own family */
		p = name;
		len = n;
	}
	mask_numbers(p, len, &b);
	sb_add(out, sb_str(&b), b.len);
	sb_free(&a);
	sb_free(&b);
}
