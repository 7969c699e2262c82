/* Allocation wrappers that die cleanly on exhaustion or size overflow. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "memtune.h"
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
	mem_heap_advise();
	mem_block_advise(p, n);
	return p;
}

void *
xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
	size_t n;

	if (!p)
		oom();
	mem_heap_advise();
	if (!__builtin_mul_overflow(nmemb, size, &n))
		mem_block_advise(p, n);
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom();
	mem_heap_advise();
	mem_block_advise(p, n);
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
 * Sorting.  Most arrays the tools sort arrive in order already, or as a
 * few runs in order (records in time order, one run per stream or per
 * annotation): one pass finds the runs, n - 1 comparisons.  An array in
 * order returns then; one of a few runs is merged run by run (log2 of the
 * runs passes, where glibc's merge sort spends log2 n passes); any other
 * goes to qsort.  glibc's qsort is a stable merge sort, and the run merge
 * is stable too, so each gives the one stable order: the same bytes.
 */
struct sorter {
	int (*c2)(const void *, const void *);
	int (*c3)(const void *, const void *, void *);
	void *arg;
	size_t size;		/* of what merge_pass moves: an element, or a pointer to one */
	int indirect;		/* the array merged holds pointers to the elements */
};

static int
order(const struct sorter *so, const void *a, const void *b)
{
	if (so->indirect) {
		a = *(const char *const *)a;
		b = *(const char *const *)b;
	}
	return so->c2 ? so->c2(a, b) : so->c3(a, b, so->arg);
}

/* One element of z bytes; most are whole words, copied as such. */
static inline void
copy_el(char *d, const char *s, size_t z)
{
	if (z % sizeof(uint64_t) == 0) {
		uint64_t w;
		size_t k;
		for (k = 0; k < z; k += sizeof w) {
			memcpy(&w, s + k, sizeof w);
			memcpy(d + k, &w, sizeof w);
		}
	} else
		memcpy(d, s, z);
}

/* Merge the runs src[at[i]..at[i+1]) pairwise into dst; at is updated. */
static size_t
merge_pass(const struct sorter *so, const char *src, char *dst, size_t *at, size_t nrun)
{
	size_t r, k = 0, z = so->size;

	for (r = 0; r < nrun; r += 2, k++) {
		size_t lo = at[r], mid = at[r + 1], hi = r + 1 < nrun ? at[r + 2] : mid;
		size_t i = lo, j = mid, o = lo;
		while (i < mid && j < hi) {
			if (order(so, src + j * z, src + i * z) < 0)
				copy_el(dst + o++ * z, src + j++ * z, z);
			else
				copy_el(dst + o++ * z, src + i++ * z, z);
		}
		memcpy(dst + o * z, src + i * z, (mid - i) * z);
		o += mid - i;
		memcpy(dst + o * z, src + j * z, (hi - j) * z);
		at[k] = lo;
	}
	at[k] = at[nrun];
	return k;
}

/* Merge the nrun runs of a (at their boundaries at) into one, b the scratch; returns which holds it. */
static char *
merge_all(const struct sorter *so, char *a, char *b, size_t *at, size_t nrun)
{
	char *x;

	while (nrun > 1) {
		nrun = merge_pass(so, a, b, at, nrun);
		x = a;
		a = b;
		b = x;
	}
	return a;
}

/* glibc's sort, for arrays of many runs and when memory is short */
static void
sort_qsort(void *base, size_t n, const struct sorter *so)
{
	if (so->c2)
		qsort(base, n, so->size, so->c2);
	else
		qsort_r(base, n, so->size, so->c3, so->arg);
}

/*
 * A few elements: insertion, which is stable, so the order is the merge
 * sort's; glibc's qsort cost more in its setup than in comparing (3 % of
 * trace-extract went to sorting the handful of Python scopes open at each
 * kernel, issue 30).
 */
#define SMALL_N 16
#define SMALL_SIZE 256

static void
sort_small(char *b, size_t n, const struct sorter *so)
{
	union {
		unsigned char b[SMALL_SIZE];
		max_align_t align;	/* the comparators read it as their element type */
	} u;
	unsigned char *el = u.b;
	size_t i, j, z = so->size;

	for (i = 1; i < n; i++) {
		if (order(so, b + (i - 1) * z, b + i * z) <= 0)
			continue;
		memcpy(el, b + i * z, z);
		for (j = i; j > 0 && order(so, b + (j - 1) * z, el) > 0; j--)
			;
		memmove(b + (j + 1) * z, b + j * z, (i - j) * z);
		memcpy(b + j * z, el, z);
	}
}

static void
sort_any(void *base, size_t n, const struct sorter *so)
{
	const char *b = base;
	size_t i, nrun = 1, most = n / 256, *at = NULL, z = so->size;
	char *tmp, *src;

	if (n <= SMALL_N && z <= SMALL_SIZE) {
		sort_small(base, n, so);
		return;
	}

	/* one pass: the run boundaries, as long as they are few */
	for (i = 1; i < n; i++) {
		if (order(so, b + (i - 1) * z, b + i * z) <= 0)
			continue;
		if (nrun > most || z == 0 || n > SIZE_MAX / 2 / z)
			goto many;
		if (!at) {
			if ((at = malloc((most + 2) * sizeof *at)) == NULL)
				goto many;
			at[0] = 0;
		}
		at[nrun++] = i;
	}
	if (nrun == 1)
		return;
	at[nrun] = n;
	/*
	 * Without memory for the merge's copy, qsort sorts (it has a way that
	 * needs none): the merge's temporaries are malloc's, not xmalloc's.
	 */
	if (z > 4 * sizeof(char *)) {
		/* large elements: merge pointers to them, then move each element once */
		struct sorter ind = *so;
		const char **p = malloc(n * 2 * sizeof *p);
		if (!p)
			goto many;
		for (i = 0; i < n; i++)
			p[i] = b + i * z;
		ind.size = sizeof *p;
		ind.indirect = 1;
		src = merge_all(&ind, (char *)p, (char *)(p + n), at, nrun);
		if ((tmp = malloc(n * z)) == NULL) {
			free(p);
			goto many;
		}
		for (i = 0; i < n; i++)
			memcpy(tmp + i * z, ((const char **)(void *)src)[i], z);
		memcpy(base, tmp, n * z);
		free(tmp);
		free(p);
		free(at);
		return;
	}
	if ((tmp = malloc(n * z)) == NULL)
		goto many;
	src = merge_all(so, base, tmp, at, nrun);
	if (src != base)
		memcpy(base, src, n * z);
	free(tmp);
	free(at);
	return;
many:
	free(at);
	sort_qsort(base, n, so);
}

void
xqsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	struct sorter so = { cmp, NULL, NULL, size, 0 };

	if (n > 1)
		sort_any(base, n, &so);
}

void
xqsort_r(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *, void *),
    void *arg)
{
	struct sorter so = { NULL, cmp, arg, size, 0 };

	if (n > 1)
		sort_any(base, n, &so);
}
