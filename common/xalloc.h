/* Allocation that never returns NULL: failure prints "out of memory" and exits 1. */
#ifndef XALLOC_H
#define XALLOC_H

#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);

/*
 * Grow *pp (an array of `elem`-byte items with capacity *cap) so it can hold
 * at least `need` items.  Capacity doubles; contents are kept.
 */
void xgrow(void *pp, size_t *cap, size_t need, size_t elem);

/*
 * qsort that accepts an empty array with a NULL base (qsort itself may not
 * be passed NULL, even with zero elements).
 */
void xqsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

#endif
