/*
 * Kernel families (trace-diff(1), "Families"): the part of a kernel's name
 * that survives retuning, so that a GEMM whose tile sizes or template
 * arguments changed between two runs is one "changed" kernel rather than a
 * "removed" and a "new" one.  The family starts from the kernel's
 * identity (common/kname.h: demangled, return type, template and argument
 * lists left out, a launch wrapper read as the kernel it runs).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "kname.h"

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
	kname_identity(name, n, &a);
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
