/* Integer hash map: 64-bit keys to 64-bit values. */
#include <stdlib.h>
#include <string.h>

#include "imap.h"
#include "strtab.h"
#include "xalloc.h"

static void
grow(imap *m)
{
	imap nm;
	size_t i, j;

	nm.cap = m->cap ? m->cap * 2 : 64;
	if (nm.cap > SIZE_MAX / sizeof *nm.key)
		xmalloc(SIZE_MAX);	/* out of memory, said the usual way */
	nm.n = m->n;
	nm.key = xmalloc(nm.cap * sizeof *nm.key);
	nm.val = xmalloc(nm.cap * sizeof *nm.val);
	nm.used = xcalloc(nm.cap, 1);
	for (i = 0; i < m->cap; i++) {
		if (!m->used[i])
			continue;
		for (j = hash_u64(m->key[i]) & (nm.cap - 1); nm.used[j]; j = (j + 1) & (nm.cap - 1))
			;
		nm.used[j] = 1;
		nm.key[j] = m->key[i];
		nm.val[j] = m->val[i];
	}
	free(m->key);
	free(m->val);
	free(m->used);
	*m = nm;
}

uint64_t *
imap_get(const imap *m, uint64_t key)
{
	size_t i;

	if (m->cap == 0)
		return NULL;
	for (i = hash_u64(key) & (m->cap - 1); m->used[i]; i = (i + 1) & (m->cap - 1))
		if (m->key[i] == key)
			return &m->val[i];
	return NULL;
}

uint64_t *
imap_put(imap *m, uint64_t key, int *isnew)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap)
		grow(m);
	for (i = hash_u64(key) & (m->cap - 1); m->used[i]; i = (i + 1) & (m->cap - 1))
		if (m->key[i] == key) {
			if (isnew)
				*isnew = 0;
			return &m->val[i];
		}
	m->used[i] = 1;
	m->key[i] = key;
	m->val[i] = 0;
	m->n++;
	if (isnew)
		*isnew = 1;
	return &m->val[i];
}

uint64_t *
imap_insert(imap *m, uint64_t key, uint64_t val, int *isnew)
{
	int n;
	uint64_t *v = imap_put(m, key, &n);

	if (n)
		*v = val;
	if (isnew)
		*isnew = n;
	return v;
}

size_t
imap_count(const imap *m)
{
	return m->n;
}

void
imap_free(imap *m)
{
	free(m->key);
	free(m->val);
	free(m->used);
	memset(m, 0, sizeof *m);
}
