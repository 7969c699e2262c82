/* Small containers shared by the overlap-sweep files: interning and a hash map. */
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

static size_t
slot(const imap *m, uint64_t key)
{
	size_t mask = m->cap - 1, i = (size_t)hash_u64(key) & mask;

	while (m->used[i] && m->k[i] != key)
		i = (i + 1) & mask;
	return i;
}

uint32_t *
imap_get(const imap *m, uint64_t key)
{
	size_t i;

	if (m->cap == 0)
		return NULL;
	i = slot(m, key);
	return m->used[i] ? &m->v[i] : NULL;
}

/* Double the table; load factor stays under 1/2 so probes stay short. */
static void
grow(imap *m)
{
	imap old = *m;
	size_t i;

	m->cap = old.cap ? old.cap * 2 : 16;
	m->k = xmalloc(m->cap * sizeof *m->k);
	m->v = xmalloc(m->cap * sizeof *m->v);
	m->used = xcalloc(m->cap, 1);
	for (i = 0; i < old.cap; i++) {
		if (old.used[i]) {
			size_t j = slot(m, old.k[i]);
			m->used[j] = 1;
			m->k[j] = old.k[i];
			m->v[j] = old.v[i];
		}
	}
	free(old.k);
	free(old.v);
	free(old.used);
}

uint32_t *
imap_put(imap *m, uint64_t key, uint32_t v, int *isnew)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap)
		grow(m);
	i = slot(m, key);
	if (m->used[i]) {
		if (isnew)
			*isnew = 0;
		return &m->v[i];
	}
	m->used[i] = 1;
	m->k[i] = key;
	m->v[i] = v;
	m->n++;
	if (isnew)
		*isnew = 1;
	return &m->v[i];
}

void
imap_free(imap *m)
{
	free(m->k);
	free(m->v);
	free(m->used);
	memset(m, 0, sizeof *m);
}
