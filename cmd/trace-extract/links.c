/* The correlation map and the records it decides, joined by sorting (links.h). */
#include <stdlib.h>
#include <string.h>

#include "links.h"
#include "rec.h"
#include "xalloc.h"
#include "xsort.h"

/* A key with a value: (correlation, External id), (correlation, ordinal), ... */
struct kv {
	long long k, v;
};

struct links {
	struct xsort *map;	/* kv (correlation, External id), by correlation; the last wins */
	struct xsort *need;	/* correlations that want a corr record */
	struct xsort *gpu;	/* correlations of kernel records (GPU work reached) */
	struct xsort *zero;	/* correlations of GPU items of dur 0 */
	struct xsort *lq;	/* kv (correlation, launch ordinal << 1 | copy) */
	struct xsort *kext;	/* External ids the kernel records carry */
	struct xsort *kcorr;	/* correlations of the kernel records without one */
	struct xsort *ocorr;	/* kv (correlation, op ordinal) of ops without an External id */
	struct xsort *oext;	/* kv (External id, op ordinal) */
	size_t nlaunch, nop;
	unsigned char *lkeep, *lzero, *okeep;	/* bitmaps, after links_resolve */
	int copies;		/* some launch is a copy's or set's call */
	unsigned long long copies_kept;
};

struct links *
links_new(void)
{
	struct links *l = xcalloc(1, sizeof *l);

	l->map = xsort_new(sizeof(struct kv), xsort_by_ll, NULL);
	l->need = xsort_new(sizeof(long long), xsort_by_ll, NULL);
	l->gpu = xsort_new(sizeof(long long), xsort_by_ll, NULL);
	l->zero = xsort_new(sizeof(long long), xsort_by_ll, NULL);
	l->lq = xsort_new(sizeof(struct kv), xsort_by_ll, NULL);
	l->kext = xsort_new(sizeof(long long), xsort_by_ll, NULL);
	l->kcorr = xsort_new(sizeof(long long), xsort_by_ll, NULL);
	l->ocorr = xsort_new(sizeof(struct kv), xsort_by_ll, NULL);
	l->oext = xsort_new(sizeof(struct kv), xsort_by_ll, NULL);
	return l;
}

void
links_free(struct links *l)
{
	if (!l)
		return;
	xsort_free(l->map);
	xsort_free(l->need);
	xsort_free(l->gpu);
	xsort_free(l->zero);
	xsort_free(l->lq);
	xsort_free(l->kext);
	xsort_free(l->kcorr);
	xsort_free(l->ocorr);
	xsort_free(l->oext);
	free(l->lkeep);
	free(l->lzero);
	free(l->okeep);
	free(l);
}

void
links_pair(struct links *l, long long corr, long long ext)
{
	struct kv x = { corr, ext };

	xsort_add(l->map, &x);
}

void
links_need(struct links *l, long long corr)
{
	xsort_add(l->need, &corr);
}

void
links_kernel(struct links *l, int has_corr, long long corr, int gpu, int has_ext, long long ext)
{
	if (has_corr && gpu)
		xsort_add(l->gpu, &corr);
	if (has_ext)
		xsort_add(l->kext, &ext);
	else if (has_corr)
		xsort_add(l->kcorr, &corr);
}

void
links_zero(struct links *l, long long corr)
{
	xsort_add(l->zero, &corr);
}

void
links_launch(struct links *l, long long corr, int copy)
{
	struct kv x = { corr, (long long)l->nlaunch++ << 1 | (copy != 0) };

	l->copies |= copy != 0;
	xsort_add(l->lq, &x);
}

void
links_op(struct links *l, int has_ext, long long ext, int has_corr, long long corr)
{
	struct kv x = { has_ext ? ext : corr, (long long)l->nop++ };

	if (has_ext)
		xsort_add(l->oext, &x);
	else if (has_corr)
		xsort_add(l->ocorr, &x);
}

/* ---- walking sorted sets ---- */

/* A sorted set of keys read forward: is a key in it (keys asked in ascending order)? */
struct cursor {
	struct xsort *x;
	const long long *cur;	/* the least key not yet passed, NULL at the end */
};

static void
cursor_open(struct cursor *c, struct xsort *x)
{
	xsort_rewind(x);
	c->x = x;
	c->cur = xsort_next(x);
}

static int
cursor_has(struct cursor *c, long long key)
{
	long long v;

	while (c->cur) {
		memcpy(&v, c->cur, sizeof v);
		if (v >= key)
			return v == key;
		c->cur = xsort_next(c->x);
	}
	return 0;
}

/*
 * The map read forward by correlation, one entry per correlation: the
 * last event's External id (the sort keeps the events' order among
 * equals).
 */
struct mapcur {
	struct xsort *x;
	const struct kv *cur;	/* the next record */
	int have;		/* an entry is at hand: */
	struct kv e;		/* it */
};

static void
mapcur_open(struct mapcur *m, struct xsort *x)
{
	xsort_rewind(x);
	m->x = x;
	m->cur = xsort_next(x);
	m->have = 0;
}

/* The next entry; 0 at the end. */
static int
mapcur_step(struct mapcur *m)
{
	if (!m->cur)
		return m->have = 0;
	memcpy(&m->e, m->cur, sizeof m->e);
	while ((m->cur = xsort_next(m->x)) != NULL && m->cur->k == m->e.k)
		memcpy(&m->e, m->cur, sizeof m->e);
	return m->have = 1;
}

/* The map's External id of corr (correlations asked in ascending order); 0 when none. */
static int
mapcur_get(struct mapcur *m, long long corr, long long *ext)
{
	if (!m->have && !mapcur_step(m))
		return 0;
	while (m->e.k < corr)
		if (!mapcur_step(m))
			return 0;
	if (m->e.k != corr)
		return 0;
	*ext = m->e.v;
	return 1;
}

static void
bit_set(unsigned char *b, size_t i)
{
	b[i >> 3] |= (unsigned char)(1u << (i & 7));
}

static int
bit_get(const unsigned char *b, size_t i)
{
	return b[i >> 3] >> (i & 7) & 1;
}

static unsigned char *
bitmap(size_t n)
{
	return xcalloc(n / 8 + 1, 1);
}

/* ---- the joins ---- */

/* Which launches are written, and which had only GPU items of dur 0. */
static void
resolve_launches(struct links *l)
{
	struct cursor gpu, zero;
	const struct kv *p;
	struct kv x;

	l->lkeep = bitmap(l->nlaunch);
	l->lzero = bitmap(l->nlaunch);
	if (!l->copies && xsort_count(l->zero) == 0) {
		/* the common trace: every launch a kernel launch, no item of dur 0 */
		memset(l->lkeep, 0xff, l->nlaunch / 8 + 1);
		return;
	}
	cursor_open(&gpu, l->gpu);
	cursor_open(&zero, l->zero);
	while ((p = xsort_next(l->lq)) != NULL) {
		int in_gpu, copy;
		size_t ord;
		memcpy(&x, p, sizeof x);
		copy = x.v & 1;
		ord = (size_t)(x.v >> 1);
		in_gpu = cursor_has(&gpu, x.k);
		if (!copy || in_gpu)
			bit_set(l->lkeep, ord);
		if (copy && in_gpu)
			l->copies_kept++;
		if (!copy && !in_gpu && cursor_has(&zero, x.k))
			bit_set(l->lzero, ord);
	}
}

/*
 * Which CPU ops are written: the External ids the kernel records carry,
 * their own and their correlations' (through the map), against each op's,
 * its own or its correlation's.
 */
static void
resolve_ops(struct links *l)
{
	struct mapcur m;
	struct cursor kx;
	const long long *c;
	const struct kv *p;
	struct kv x;
	long long ext;

	l->okeep = bitmap(l->nop);
	mapcur_open(&m, l->map);
	while ((c = xsort_next(l->kcorr)) != NULL)
		if (mapcur_get(&m, *c, &ext))
			xsort_add(l->kext, &ext);
	mapcur_open(&m, l->map);
	while ((p = xsort_next(l->ocorr)) != NULL) {
		memcpy(&x, p, sizeof x);
		if (mapcur_get(&m, x.k, &ext)) {
			x.k = ext;
			xsort_add(l->oext, &x);
		}
	}
	cursor_open(&kx, l->kext);
	while ((p = xsort_next(l->oext)) != NULL) {
		memcpy(&x, p, sizeof x);
		if (cursor_has(&kx, x.k))
			bit_set(l->okeep, (size_t)x.v);
	}
}

void
links_resolve(struct links *l, int all_ops)
{
	resolve_launches(l);
	if (!all_ops && l->nop)
		resolve_ops(l);
}

int
links_launch_keep(const struct links *l, size_t i)
{
	return i >= l->nlaunch || bit_get(l->lkeep, i);
}

unsigned long long
links_copies_kept(const struct links *l)
{
	return l->copies_kept;
}

int
links_launch_zero(const struct links *l, size_t i)
{
	return i < l->nlaunch && bit_get(l->lzero, i);
}

int
links_op_keep(const struct links *l, size_t i)
{
	return !l->okeep || i >= l->nop || bit_get(l->okeep, i);
}

const unsigned char *
links_op_bits(const struct links *l)
{
	return l->okeep;
}

void
links_put_corrs(struct links *l, long long t)
{
	struct mapcur m;
	const long long *p;
	long long c, last = 0, ext;
	int any = 0;

	mapcur_open(&m, l->map);
	while ((p = xsort_next(l->need)) != NULL) {
		c = *p;
		if (any && c == last)
			continue;
		any = 1;
		last = c;
		if (!mapcur_get(&m, c, &ext))
			continue;
		rec_begin(RT_corr);
		rec_int(RM_corr_t, t);
		rec_int(RM_corr_correlation, c);
		rec_int(RM_corr_external_id, ext);
		rec_end();
	}
}
