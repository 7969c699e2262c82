/* Integer hash map: 64-bit keys to 64-bit values. */
#include <stdlib.h>
#include <string.h>

#include "imap.h"
#include "strtab.h"
#include "xalloc.h"

/*
 * A key's home slot.  Keys that differ only in their low IMAP_RUN bits
 * share one hashed group of adjacent slots, so ids that count up (CUDA
 * correlation ids, External ids, indexes) are looked up in memory order
 * rather than one cache miss each; the group itself is placed by a full
 * mix of the rest of the key, so no key set puts more than 2^IMAP_RUN keys
 * on one home group (the probe lengths of hashed keys, at worst).
 */
#define IMAP_RUN 3

static inline size_t
home(uint64_t key, size_t cap)
{
	return (size_t)(hash_u64(key >> IMAP_RUN) << IMAP_RUN | (key & ((1u << IMAP_RUN) - 1))) &
	    (cap - 1);
}

static void
grow(imap *m)
{
	imap nm;
	size_t i, j;

	nm.cap = m->cap ? m->cap * 2 : 64;
	if (nm.cap > SIZE_MAX / sizeof *nm.slot)
		xmalloc(SIZE_MAX);	/* out of memory, said the usual way */
	nm.n = m->n;
	nm.slot = xmalloc(nm.cap * sizeof *nm.slot);
	nm.used = xcalloc(nm.cap, 1);
	for (i = 0; i < m->cap; i++) {
		if (!m->used[i])
			continue;
		for (j = home(m->slot[i].key, nm.cap); nm.used[j]; j = (j + 1) & (nm.cap - 1))
			;
		nm.used[j] = 1;
		nm.slot[j] = m->slot[i];
	}
	free(m->slot);
	free(m->used);
	*m = nm;
}

uint64_t *
imap_get(const imap *m, uint64_t key)
{
	size_t i;

	if (m->cap == 0)
		return NULL;
	for (i = home(key, m->cap); m->used[i]; i = (i + 1) & (m->cap - 1))
		if (m->slot[i].key == key)
			return &m->slot[i].val;
	return NULL;
}

uint64_t *
imap_put(imap *m, uint64_t key, int *isnew)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap)
		grow(m);
	for (i = home(key, m->cap); m->used[i]; i = (i + 1) & (m->cap - 1))
		if (m->slot[i].key == key) {
			if (isnew)
				*isnew = 0;
			return &m->slot[i].val;
		}
	m->used[i] = 1;
	m->slot[i].key = key;
	m->slot[i].val = 0;
	m->n++;
	if (isnew)
		*isnew = 1;
	return &m->slot[i].val;
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
imap_copy(imap *dst, const imap *src)
{
	*dst = *src;
	if (!src->cap)
		return;
	dst->slot = xmallocarray(src->cap, sizeof *dst->slot);
	dst->used = xmalloc(src->cap);
	memcpy(dst->slot, src->slot, src->cap * sizeof *dst->slot);
	memcpy(dst->used, src->used, src->cap);
}

void
imap_free(imap *m)
{
	free(m->slot);
	free(m->used);
	memset(m, 0, sizeof *m);
}
