/* External merge sort of fixed-size records (xsort.h). */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "spool.h"
#include "xalloc.h"
#include "xsort.h"

/* A merge reads each run through a buffer of at most this many bytes. */
#define RUN_BUF (64u << 10)

struct run {
	unsigned long long off, n;	/* its first byte in the spool, its records */
	unsigned long long next;	/* records read into its buffer so far */
	char *buf;
	size_t have, pos;		/* records in the buffer, and the next one */
};

struct xsort {
	size_t size;
	xsort_cmp cmp;
	void *ctx;
	char *buf;			/* the records not in a run */
	size_t n, alloc;		/* in it, and room for */
	size_t own;			/* its budget in bytes */
	unsigned long long count;
	struct spool *sp;		/* the runs, once a buffer filled */
	struct run *run;
	size_t nrun, caprun;
	int reading;
	size_t pos;			/* reading without runs: the next record of buf */
	size_t *heap;			/* merging: run indexes, least head first */
	size_t nheap;
	size_t rbrec;			/* records of a run's read buffer */
	char *out;			/* merging: the record handed out */
};

int
xsort_by_ll(const void *pa, const void *pb, void *ctx)
{
	long long a, b;

	(void)ctx;
	memcpy(&a, pa, sizeof a);	/* no alignment is assumed */
	memcpy(&b, pb, sizeof b);
	return (a > b) - (a < b);
}

int
xsort_by_ull(const void *pa, const void *pb, void *ctx)
{
	unsigned long long a, b;

	(void)ctx;
	memcpy(&a, pa, sizeof a);
	memcpy(&b, pb, sizeof b);
	return (a > b) - (a < b);
}

int
xsort_by_double(const void *pa, const void *pb, void *ctx)
{
	double a, b;

	(void)ctx;
	memcpy(&a, pa, sizeof a);
	memcpy(&b, pb, sizeof b);
	return (a > b) - (a < b);
}

struct xsort *
xsort_new(size_t size, xsort_cmp cmp, void *ctx)
{
	struct xsort *x = xcalloc(1, sizeof *x);

	if (size == 0)
		size = 1;
	x->size = size;
	x->cmp = cmp;
	x->ctx = ctx;
	x->own = spool_limit();
	return x;
}

void
xsort_free(struct xsort *x)
{
	size_t i;

	if (!x)
		return;
	for (i = 0; i < x->nrun; i++)
		free(x->run[i].buf);
	free(x->run);
	free(x->heap);
	free(x->out);
	free(x->buf);
	spool_free(x->sp);
	free(x);
}

unsigned long long
xsort_count(const struct xsort *x)
{
	return x->count;
}

size_t
xsort_runs(const struct xsort *x)
{
	return x->nrun;
}

void *
xsort_memory(struct xsort *x, size_t *n)
{
	if (x->reading || x->nrun)
		return NULL;
	*n = x->n;
	return x->buf;
}

static void
sort_buf(struct xsort *x)
{
	if (x->cmp)
		xqsort_r(x->buf, x->n, x->size, x->cmp, x->ctx);
}

/* The buffer, sorted, becomes the next run. */
static void
spill(struct xsort *x)
{
	struct run *r;

	if (x->n == 0)
		return;
	sort_buf(x);
	if (!x->sp)
		x->sp = spool_new_limit(1);	/* straight to the file: the buffer is the memory */
	if (!x->cmp && x->nrun) {
		/* a queue: its runs follow each other in the file, read as one */
		spool_append(x->sp, x->buf, x->n * x->size);
		x->run[0].n += x->n;
		x->n = 0;
		return;
	}
	xgrow(&x->run, &x->caprun, x->nrun + 1, sizeof *x->run);
	r = &x->run[x->nrun++];
	memset(r, 0, sizeof *r);
	r->n = x->n;
	r->off = spool_append(x->sp, x->buf, x->n * x->size);
	x->n = 0;
}

/*
 * Room for more records in the buffer: doubled (from 1024, so that small
 * sorts stay small) up to the sort's budget.  Returns 0 when it cannot
 * grow: the buffer is to become a run.  Measured: a pool shared by the
 * sorts, to keep mid-sized traces in memory, took twice the memory and no
 * less CPU than spilling runs to the page cache.
 */
static int
grow(struct xsort *x)
{
	size_t c = x->alloc ? x->alloc * 2 : 1024, cap = x->own / x->size ? x->own / x->size : 1;

	if (c > cap)
		c = cap;
	if (c <= x->alloc)
		return 0;
	x->buf = xreallocarray(x->buf, c, x->size);
	x->alloc = c;
	return 1;
}

void
xsort_add(struct xsort *x, const void *rec)
{
	if (x->reading)
		die(EXIT_DATA, "internal error: a record added to a sort being read");
	if (x->n == x->alloc && !grow(x))
		spill(x);
	memcpy(x->buf + x->n * x->size, rec, x->size);
	x->n++;
	x->count++;
}

/* Refill a run's buffer; returns 0 when the run is done. */
static int
refill(struct xsort *x, struct run *r)
{
	unsigned long long left = r->n - r->next;
	size_t k = left < x->rbrec ? (size_t)left : x->rbrec;

	if (k == 0)
		return 0;
	spool_read(x->sp, r->off + r->next * x->size, r->buf, k * x->size);
	r->next += k;
	r->have = k;
	r->pos = 0;
	return 1;
}

static const void *
head(const struct xsort *x, size_t i)
{
	const struct run *r = &x->run[i];

	return r->buf + r->pos * x->size;
}

/* Does run a's head come before run b's?  Ties go to the earlier run: stable. */
static int
before(const struct xsort *x, size_t a, size_t b)
{
	int c = x->cmp ? x->cmp(head(x, a), head(x, b), x->ctx) : 0;

	return c < 0 || (c == 0 && a < b);
}

static void
sift_down(struct xsort *x, size_t i)
{
	size_t *h = x->heap, n = x->nheap, c, t;

	for (;;) {
		c = 2 * i + 1;
		if (c >= n)
			return;
		if (c + 1 < n && before(x, h[c + 1], h[c]))
			c++;
		if (!before(x, h[c], h[i]))
			return;
		t = h[i];
		h[i] = h[c];
		h[c] = t;
		i = c;
	}
}

/* Start reading: the last buffer becomes a run when others exist, and each run is primed. */
static void
start(struct xsort *x)
{
	size_t i, per;

	x->reading = 1;
	x->pos = 0;
	if (x->nrun == 0) {
		sort_buf(x);
		return;
	}
	spill(x);
	free(x->buf);
	x->buf = NULL;
	/* the read buffers share the sort's budget */
	per = x->own / x->nrun;
	x->alloc = 0;
	if (per > RUN_BUF)
		per = RUN_BUF;
	x->rbrec = per / x->size ? per / x->size : 1;
	x->heap = xreallocarray(x->heap, x->nrun, sizeof *x->heap);
	x->out = xmalloc(x->size);
	for (i = 0; i < x->nrun; i++)
		x->run[i].buf = xreallocarray(x->run[i].buf, x->rbrec, x->size);
	xsort_rewind(x);
}

void
xsort_rewind(struct xsort *x)
{
	size_t i;

	if (!x->reading) {
		start(x);
		return;
	}
	x->pos = 0;
	if (x->nrun == 0)
		return;
	x->nheap = 0;
	for (i = 0; i < x->nrun; i++) {
		x->run[i].next = 0;
		if (refill(x, &x->run[i]))
			x->heap[x->nheap++] = i;
	}
	for (i = x->nheap / 2; i-- > 0;)
		sift_down(x, i);
}

const void *
xsort_next(struct xsort *x)
{
	struct run *r;

	if (!x->reading)
		start(x);
	if (x->nrun == 0)
		return x->pos < x->n ? x->buf + x->pos++ * x->size : NULL;
	if (x->nheap == 0)
		return NULL;
	/* the least head, copied out: its run's buffer may be refilled now */
	r = &x->run[x->heap[0]];
	memcpy(x->out, r->buf + r->pos * x->size, x->size);
	if (++r->pos == r->have && !refill(x, r))
		x->heap[0] = x->heap[--x->nheap];
	sift_down(x, 0);
	return x->out;
}
