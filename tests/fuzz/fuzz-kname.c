/*
 * libFuzzer harness for kernel names (common/kname.h, common/kcat.h): the
 * input is a list of names, one a line, as hostile as a trace can make
 * them (mangled symbols for libiberty, deep or broken bracket nesting,
 * huge words).  Each is demangled, given its identity, short name and
 * category; the list is shortened as one table.  Short names must stay
 * within their cap and the table's different names apart.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "kcat.h"
#include "kname.h"
#include "sbuf.h"

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char *text = malloc(size + 1), **names, **out, *p;
	size_t n = 0, i, j, k;
	sbuf b = SBUF_INIT;

	if (!text)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	for (i = 0; i < size; i++)
		n += text[i] == '\n';
	names = calloc(n + 2, sizeof *names);
	out = calloc(n + 2, sizeof *out);
	if (!names || !out)
		abort();
	for (n = 0, p = text;; n++) {
		char *nl = strchr(p, '\n');
		names[n] = p;
		if (!nl) {
			n++;
			break;
		}
		*nl = '\0';
		p = nl + 1;
	}
	for (i = 0; i < n; i++) {
		size_t len = strlen(names[i]);
		kname_demangle(names[i], len, &b);
		kname_identity(names[i], len, &b);
		kname_short(names[i], len, KNAME_WIDTH, &b);
		for (k = j = 0; j < b.len; j++)
			k += ((unsigned char)b.s[j] & 0xc0) != 0x80;
		if (k > 2 * KNAME_WIDTH + 1 + 64)
			abort();	/* the cap, and the brackets it may close */
		kernel_category(names[i], len);
	}
	kname_short_all((const char *const *)names, n, KNAME_WIDTH, out);
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (strcmp(names[i], names[j]) != 0 && strcmp(out[i], out[j]) == 0 &&
			    strstr(out[i], " #") == NULL)
				abort();	/* different names, one short name, no hash */
	for (i = 0; i < n; i++)
		free(out[i]);
	free(out);
	free(names);
	free(text);
	sb_free(&b);
	return 0;
}
