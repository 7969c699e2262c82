/*
 * String interning: each distinct byte string gets a dense id (0, 1, 2...)
 * in first-seen order.  Strings are copied into the table and stay valid,
 * NUL-terminated, until strtab_free(), each at an address aligned for
 * 8-byte items (a tool may keep a binary array as a string).  Lengths and ids are 32-bit: a
 * string of 4 GiB or more, or more than 2^32 - 2 distinct strings, ends the
 * run with exit 1 (issue 21).
 */
#ifndef STRTAB_H
#define STRTAB_H

#include <stddef.h>
#include <stdint.h>

typedef struct strtab strtab;

strtab *strtab_new(void);
void strtab_free(strtab *t);				/* NULL is a no-op */
uint32_t strtab_intern(strtab *t, const char *s, size_t n);
/* Returns the id, or UINT32_MAX when the string was never interned. */
uint32_t strtab_find(const strtab *t, const char *s, size_t n);
const char *strtab_str(const strtab *t, uint32_t id);
size_t strtab_len(const strtab *t, uint32_t id);
uint32_t strtab_count(const strtab *t);

/* 64-bit hash of a byte string (also used by other hash tables). */
uint64_t hash_bytes(const void *p, size_t n);
uint64_t hash_u64(uint64_t x);

#endif
