/* Small helpers shared by the overlap-sweep files: interning, category names. */
#include <stdlib.h>
#include <string.h>

#include "overlap.h"
#include "xalloc.h"

strtab *ov_str;

uint32_t
intern(const char *s, size_t n)
{
	return strtab_intern(ov_str, s ? s : "", s ? n : 0);
}

uint32_t
intern_c(const char *s)
{
	return intern(s, s ? strlen(s) : 0);
}

const char *
ocat_name(int cat)
{
	switch (cat) {
	case OC_COMPUTE:
		return "compute";
	case OC_COMMUNICATION:
		return "communication";
	case OC_MEMORY:
		return "memory";
	case OC_ELEMENTWISE:
		return "elementwise";
	default:
		return "other";
	}
}

void
rawdata_free(rawdata_t *r)
{
	free(r->ops);
	free(r->fr);
	memset(r, 0, sizeof *r);
}

