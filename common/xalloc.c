/* Allocation wrappers that die cleanly on exhaustion or size overflow. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "xalloc.h"

static void
oom(void)
{
	die(EXIT_DATA, "out of memory");
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *
xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
	if (!p)
		oom();
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom();
	return p;
}

char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *
xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

static void __attribute__((noreturn))
overflow(size_t a, size_t b, char op)
{
	die(EXIT_DATA, "out of memory: a size of %zu %c %zu does not fit in memory", a, op, b);
}

size_t
xmul(size_t a, size_t b)
{
	size_t r;

	if (__builtin_mul_overflow(a, b, &r))
		overflow(a, b, 'x');
	return r;
}

size_t
xadd(size_t a, size_t b)
{
	size_t r;

	if (__builtin_add_overflow(a, b, &r))
		overflow(a, b, '+');
	return r;
}

void *
xmallocarray(size_t n, size_t size)
{
	return xmalloc(xmul(n, size));
}

void *
xreallocarray(void *p, size_t n, size_t size)
{
	return xrealloc(p, xmul(n, size));
}

void
xgrow(void *pp, size_t *cap, size_t need, size_t elem)
{
	void **p = pp;
	size_t c = *cap, max = SIZE_MAX / (elem ? elem : 1);

	if (need <= c)
		return;
	if (need > max)
		overflow(need, elem, 'x');
	if (c < 4)
		c = 4;	/* small: many arrays of a few items each live long */
	/* doubling past `max` would wrap to a small size: stop at max */
	while (c < need)
		c = c > max / 2 ? max : c * 2;
	*p = xrealloc(*p, c * elem);
	*cap = c;
}

/*
 * Most arrays the tools sort arrive in order already (records in time
 * order, rows in the order written): one pass that finds them so costs
 * n - 1 comparisons where glibc's merge sort costs n log n and a
 * temporary of the array's size.  glibc's qsort is that merge sort, stable,
 * so an array in order comes back unchanged either way.
 */
void
xqsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	const char *b = base;
	size_t i;

	for (i = 1; i < n; i++)
		if (cmp(b + (i - 1) * size, b + i * size) > 0) {
			qsort(base, n, size, cmp);
			return;
		}
}

void
xqsort_r(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *, void *),
    void *arg)
{
	const char *b = base;
	size_t i;

	for (i = 1; i < n; i++)
		if (cmp(b + (i - 1) * size, b + i * size, arg) > 0) {
			qsort_r(base, n, size, cmp, arg);
			return;
		}
}
