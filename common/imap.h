/*
 * The integer hash map every tool uses: 64-bit keys to 64-bit values, open
 * addressing with linear probing, at most half full; keys that count up
 * sit side by side (imap.c home).  A zeroed imap is empty and valid;
 * imap_free leaves it so.  Pointers to values stay valid until the next
 * imap_put on the same map (a put may move the table).
 */
#ifndef IMAP_H
#define IMAP_H

#include <stddef.h>
#include <stdint.h>

/* A key beside its value: a lookup that finds its key finds the value in the same line. */
struct imap_slot {
	uint64_t key, val;
};

typedef struct {
	struct imap_slot *slot;
	unsigned char *used;
	size_t n, cap;
} imap;

/* The value slot of key, or NULL when the key is absent. */
uint64_t *imap_get(const imap *m, uint64_t key);

/*
 * The value slot of key, inserted (holding 0) when absent; *isnew (if not
 * NULL) says which.
 */
uint64_t *imap_put(imap *m, uint64_t key, int *isnew);

/* imap_put, with `val` stored in a new slot: the insertion-ordered index idiom. */
uint64_t *imap_insert(imap *m, uint64_t key, uint64_t val, int *isnew);

/* Number of keys. */
size_t imap_count(const imap *m);

/* dst becomes a copy of src, with tables of its own (dst's old ones are not freed). */
void imap_copy(imap *dst, const imap *src);

void imap_free(imap *m);

#endif
