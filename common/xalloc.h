/*
 * Allocation that never returns NULL: failure prints "out of memory" and
 * exits 1 (EXIT_DATA).  Sizes are checked too: a count times an element
 * size, or a capacity doubled, that does not fit in size_t ends the run
 * the same way ("out of memory: ... does not fit"), never wraps to a small
 * buffer (issue 21).
 */
#ifndef XALLOC_H
#define XALLOC_H

#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);

/* a * b and a + b in bytes or items; die (exit 1) when the result overflows. */
size_t xmul(size_t a, size_t b);
size_t xadd(size_t a, size_t b);

/* xmalloc(n * size) and xrealloc(p, n * size) with the product checked. */
void *xmallocarray(size_t n, size_t size);
void *xreallocarray(void *p, size_t n, size_t size);

/*
 * Grow *pp (an array of `elem`-byte items with capacity *cap) so it can hold
 * at least `need` items.  Capacity doubles (at least 4), capped at the
 * largest count whose byte size fits in size_t; contents are kept.  Every
 * growing array of the tools goes through here or through sb_grow.
 */
void xgrow(void *pp, size_t *cap, size_t need, size_t elem);

/*
 * qsort and qsort_r that accept an empty array with a NULL base (qsort
 * itself may not be passed NULL, even with zero elements), return at once,
 * after n - 1 comparisons, when the array is in order already, and merge
 * an array of a few runs in order (at most one per 256 elements) run by run
 * (issue 30).  The order is glibc's stable merge sort's: elements that
 * compare equal keep their order (as with qsort when it can allocate its
 * temporary; it falls back to an unstable sort only when it cannot).  The
 * run merge needs a copy of the array; when it cannot have one, qsort
 * sorts, as it would have.
 */
void xqsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
void xqsort_r(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *, void *),
    void *arg);

#endif
