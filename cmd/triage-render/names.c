/*
 * Short kernel names for the tables people read (issue: 60 % of a report
 * was raw mangled names of up to 1,470 characters).  The rules are
 * common/kname.h's; the full name stays in JSON and, in HTML, on hover.
 */
#include <string.h>

#include "kname.h"
#include "render.h"
#include "xalloc.h"

void
short_names(const char *const *names, size_t n, char **out)
{
	size_t i;

	if (names_full) {
		for (i = 0; i < n; i++)
			out[i] = xstrdup(names[i]);
		return;
	}
	kname_short_all(names, n, KNAME_WIDTH, out);
}

char *
short_name(const char *name)
{
	sbuf b = SBUF_INIT;

	if (names_full)
		return xstrdup(name);
	kname_short(name, strlen(name), KNAME_WIDTH, &b);
	return b.s ? sb_detach(&b) : xstrdup("");
}
