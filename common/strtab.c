/* Open-addressing string interning table. */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "strtab.h"
#include "xalloc.h"

struct strtab {
	char **str;		/* id -> string */
	uint32_t *lens;
	uint32_t n, cap;
	uint32_t *slot;		/* hash slot -> id + 1, 0 = empty */
	uint64_t *hash;		/* id -> hash */
	size_t nslot;
};

uint64_t
hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

uint64_t
hash_bytes(const void *vp, size_t n)
{
	const unsigned char *p = vp;
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ n, w;

	while (n >= 8) {
		memcpy(&w, p, 8);
		h = (h ^ hash_u64(w)) * 0x100000001b3ULL;
		p += 8;
		n -= 8;
	}
	w = 0;
	memcpy(&w, p, n);
	h = hash_u64(h ^ w ^ (uint64_t)n << 56);
	return h;
}

strtab *
strtab_new(void)
{
	strtab *t = xcalloc(1, sizeof *t);

	t->nslot = 1024;
	t->slot = xcalloc(t->nslot, sizeof *t->slot);
	return t;
}

void
strtab_free(strtab *t)
{
	uint32_t i;

	if (!t)
		return;
	for (i = 0; i < t->n; i++)
		free(t->str[i]);
	free(t->str);
	free(t->lens);
	free(t->hash);
	free(t->slot);
	free(t);
}

static void
rehash(strtab *t)
{
	size_t ns = t->nslot * 2, i, j;
	uint32_t *slot = xcalloc(ns, sizeof *slot);

	for (i = 0; i < t->n; i++) {
		j = t->hash[i] & (ns - 1);
		while (slot[j])
			j = (j + 1) & (ns - 1);
		slot[j] = (uint32_t)i + 1;
	}
	free(t->slot);
	t->slot = slot;
	t->nslot = ns;
}

uint32_t
strtab_find(const strtab *t, const char *s, size_t n)
{
	uint64_t h = hash_bytes(s, n);
	size_t j = h & (t->nslot - 1);
	uint32_t id;

	while ((id = t->slot[j]) != 0) {
		id--;
		if (t->hash[id] == h && t->lens[id] == n && memcmp(t->str[id], s, n) == 0)
			return id;
		j = (j + 1) & (t->nslot - 1);
	}
	return UINT32_MAX;
}

uint32_t
strtab_intern(strtab *t, const char *s, size_t n)
{
	uint64_t h = hash_bytes(s, n);
	size_t j = h & (t->nslot - 1);
	uint32_t id;
	size_t cap;

	while ((id = t->slot[j]) != 0) {
		id--;
		if (t->hash[id] == h && t->lens[id] == n && memcmp(t->str[id], s, n) == 0)
			return id;
		j = (j + 1) & (t->nslot - 1);
	}
	/* ids and lengths are 32-bit, and UINT32_MAX is NOSTR (trace.h) */
	if (n > UINT32_MAX)
		die(EXIT_DATA, "a string of %zu bytes is longer than the 4 GiB limit", n);
	if (t->n >= UINT32_MAX - 1)
		die(EXIT_DATA, "more than %u distinct strings", UINT32_MAX - 2);
	if (t->n == t->cap) {
		cap = t->cap;
		xgrow(&t->str, &cap, t->n + 1, sizeof *t->str);
		if (cap > UINT32_MAX - 1)
			cap = UINT32_MAX - 1;
		t->lens = xreallocarray(t->lens, cap, sizeof *t->lens);
		t->hash = xreallocarray(t->hash, cap, sizeof *t->hash);
		t->cap = (uint32_t)cap;
	}
	id = t->n++;
	t->str[id] = xstrndup(s, n);
	t->lens[id] = (uint32_t)n;
	t->hash[id] = h;
	t->slot[j] = id + 1;
	if ((size_t)t->n * 2 > t->nslot)
		rehash(t);
	return id;
}

const char *
strtab_str(const strtab *t, uint32_t id)
{
	return t->str[id];
}

size_t
strtab_len(const strtab *t, uint32_t id)
{
	return t->lens[id];
}

uint32_t
strtab_count(const strtab *t)
{
	return t->n;
}
