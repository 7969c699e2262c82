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
	free(r->opchain);
	memset(r, 0, sizeof *r);
}

static strtab *lists, *bands;

uint32_t
pylist_intern(const uint32_t *v, size_t n)
{
	if (n == 0)
		return NOSTR;
	if (!lists)
		lists = strtab_new();
	return strtab_intern(lists, (const char *)v, n * sizeof *v);
}

const uint32_t *
pylist(uint32_t id, size_t *n)
{
	if (id == NOSTR) {
		*n = 0;
		return NULL;
	}
	*n = strtab_len(lists, id) / sizeof(uint32_t);
	return (const uint32_t *)(const void *)strtab_str(lists, id);
}

uint32_t
pyband_intern(const struct tpyband *b, size_t n)
{
	if (n == 0)
		return NOSTR;
	if (!bands)
		bands = strtab_new();
	return strtab_intern(bands, (const char *)b, n * sizeof *b);
}

const struct tpyband *
pyband(uint32_t id, size_t *n)
{
	if (id == NOSTR) {
		*n = 0;
		return NULL;
	}
	*n = strtab_len(bands, id) / sizeof(struct tpyband);
	return (const struct tpyband *)(const void *)strtab_str(bands, id);
}

void
pylist_free(void)
{
	strtab_free(lists);
	strtab_free(bands);
	lists = bands = NULL;
}

