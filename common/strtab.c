/* Open-addressing string interning table. */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "strtab.h"
#include "xalloc.h"

/*
 * Long strings (kernel names run to hundreds of bytes, and every record
 * carries one) are looked up first in a small direct-mapped cache keyed by
 * their length and end bytes, checked by comparing the whole string: a hit
 * skips hashing every byte (issue 30).  A miss costs one comparison.
 */
#define FRONT_MIN 32		/* strings this long or longer use the cache */
#define FRONT_SLOTS 1024

struct strtab {
	char **str;		/* id -> string */
	uint32_t *lens;
	uint32_t n, cap;
	uint32_t *slot;		/* hash slot -> id + 1, 0 = empty */
	uint64_t *hash;		/* id -> hash */
	size_t nslot;
	uint32_t front[FRONT_SLOTS];	/* id + 1 of a long string, 0 = empty */
	/*
	 * The strings' bytes: short ones packed into chunks in the order they
	 * come, long ones in blocks of their own; every block is in `blocks`
	 * until strtab_free.  A million distinct pids once cost a million
	 * mallocs, each string alone in the heap (issue 30).
	 */
	char *chunk;
	size_t chunk_left;
	char **blocks;
	size_t nblocks, capblocks;
};

#define CHUNK_BYTES 65536	/* a multiple of STR_ALIGN, as malloc's blocks are aligned */
#define STR_ALIGN 8		/* strtab.h: a string may hold an array of 8-byte items */
#define OWN_BLOCK 1024		/* strings this long or longer get a block of their own */

static char *
block(strtab *t, size_t n)
{
	char *b = xmalloc(n);

	xgrow(&t->blocks, &t->capblocks, t->nblocks + 1, sizeof *t->blocks);
	t->blocks[t->nblocks++] = b;
	return b;
}

/* A copy of s[0..n) with a NUL after it, kept until strtab_free. */
static char *
keep_str(strtab *t, const char *s, size_t n)
{
	char *d;
	size_t need = (n + 1 + STR_ALIGN - 1) & ~(size_t)(STR_ALIGN - 1);

	if (n + 1 >= OWN_BLOCK) {
		d = block(t, n + 1);
	} else {
		if (t->chunk_left < need) {
			t->chunk = block(t, CHUNK_BYTES);
			t->chunk_left = CHUNK_BYTES;
		}
		d = t->chunk;
		t->chunk += need;
		t->chunk_left -= need;
	}
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

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
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->nblocks; i++)
		free(t->blocks[i]);
	free(t->blocks);
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

/* The cache slot of a string of n >= FRONT_MIN bytes. */
static inline size_t
front_slot(const char *s, size_t n)
{
	uint64_t a, b, c;

	memcpy(&a, s, 8);
	memcpy(&b, s + n - 16, 8);
	memcpy(&c, s + n - 8, 8);
	return (size_t)(hash_u64(a ^ hash_u64(b ^ (uint64_t)n) ^ c * 0x9e3779b97f4a7c15ULL) &
	    (FRONT_SLOTS - 1));
}

uint32_t
strtab_intern(strtab *t, const char *s, size_t n)
{
	uint64_t h;
	size_t j, f = 0, cap;
	uint32_t id;

	if (n >= FRONT_MIN) {
		f = front_slot(s, n);
		if ((id = t->front[f]) != 0 && t->lens[id - 1] == n &&
		    memcmp(t->str[id - 1], s, n) == 0)
			return id - 1;
	}
	h = hash_bytes(s, n);
	j = h & (t->nslot - 1);
	while ((id = t->slot[j]) != 0) {
		id--;
		if (t->hash[id] == h && t->lens[id] == n && memcmp(t->str[id], s, n) == 0) {
			if (n >= FRONT_MIN)
				t->front[f] = id + 1;
			return id;
		}
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
	t->str[id] = keep_str(t, s, n);
	t->lens[id] = (uint32_t)n;
	t->hash[id] = h;
	t->slot[j] = id + 1;
	if (n >= FRONT_MIN)
		t->front[f] = id + 1;
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
