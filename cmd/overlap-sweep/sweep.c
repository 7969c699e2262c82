/* The interval sweep over a stage's kernels and the per-kernel aggregates (overlap.md §4, §5). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "overlap.h"
#include "xalloc.h"

typedef struct {
	double t;
	int kind;		/* 0 end, 1 start: ends sort first at equal times */
	size_t i;		/* event position: keeps list order among equals */
} point_t;

/*
 * Python's stable sort by (time, kind) over points emitted in list order is
 * the same as a sort by (time, kind, position).  NaN times, which the
 * reference would leave in an unspecified order, go last so the comparison
 * stays a total order.
 */
static int
cmp_point(const void *pa, const void *pb)
{
	const point_t *a = pa, *b = pb;
	int an = a->t != a->t, bn = b->t != b->t;

	if (an != bn)
		return an - bn;
	if (!an && a->t != b->t)
		return a->t < b->t ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind - b->kind;
	return (a->i > b->i) - (a->i < b->i);
}

/* ---- exact sums of many segments: double-double (Knuth's two-sum) ---- */

typedef struct {
	double hi, lo;
} dd_t;

static inline void
dd_add(dd_t *a, double x)
{
	double s = a->hi + x, v = s - a->hi, e = (a->hi - (s - v)) + (x - v);

	a->hi = s;
	a->lo += e;
}

/* b - a, rounded once to a double */
static inline double
dd_diff(dd_t b, dd_t a)
{
	return (b.hi - a.hi) + (b.lo - a.lo);
}

/*
 * The plain sweep adds every segment to every active event, O(active) per
 * segment: mutually overlapping kernels make that quadratic (100,000
 * took 17.7 s).  Past this much work the sums come from running totals
 * instead (sweep_totals); real traces have a few streams, so a few active
 * events per segment, and stay far below it.
 */
#define EXACT_WORK_PER_EVENT 32
#define EXACT_WORK_MIN ((size_t)1 << 22)

size_t ov_sweep_max_exact_work;

/* What the sweeps share: dense stream numbers, the sorted points. */
struct sweep {
	oev_t *ev;
	size_t n, nstreams;
	uint32_t *sidx;
	point_t *pt;
};

/*
 * Segment bookkeeping common to both sweeps: the active set, per-stream
 * counts, and which streams run compute kernels.  Returns 1 when point j
 * started an event, -1 when it ended one, 0 when it changed nothing.
 */
struct active {
	size_t *act, nact;
	long *pos;
	long *scount, *scomp;
	long nactive_streams, total_comp, ncs;	/* ncs: streams with active compute */
	unsigned long long cs_sum;		/* the sum of those streams' numbers */
};

static int
apply_point(struct active *a, const struct sweep *w, size_t j)
{
	size_t e = w->pt[j].i;
	uint32_t st = w->sidx[e];

	if (w->pt[j].kind == 0) {
		/* An end whose start has not been seen yet is a no-op (§4.7). */
		if (a->pos[e] < 0)
			return 0;
		{
			size_t p = (size_t)a->pos[e], last = a->act[--a->nact];
			a->act[p] = last;
			a->pos[last] = (long)p;
			a->pos[e] = -1;
		}
		if (--a->scount[st] == 0)
			a->nactive_streams--;
		if (w->ev[e].cat == OC_COMPUTE) {
			if (--a->scomp[st] == 0) {
				a->ncs--;
				a->cs_sum -= st;
			}
			a->total_comp--;
		}
		return -1;
	}
	if (a->pos[e] >= 0)
		return 0;
	a->pos[e] = (long)a->nact;
	a->act[a->nact++] = e;
	if (a->scount[st]++ == 0)
		a->nactive_streams++;
	if (w->ev[e].cat == OC_COMPUTE) {
		if (a->scomp[st]++ == 0) {
			a->ncs++;
			a->cs_sum += st;
		}
		a->total_comp++;
	}
	return 1;
}

static void
active_init(struct active *a, const struct sweep *w)
{
	size_t i;

	memset(a, 0, sizeof *a);
	a->act = xmallocarray(w->n, sizeof *a->act);
	a->pos = xmallocarray(w->n, sizeof *a->pos);
	for (i = 0; i < w->n; i++)
		a->pos[i] = -1;
	a->scount = xcalloc(w->nstreams, sizeof *a->scount);
	a->scomp = xcalloc(w->nstreams, sizeof *a->scomp);
}

static void
active_free(struct active *a)
{
	free(a->act);
	free(a->pos);
	free(a->scount);
	free(a->scomp);
}

/* The plain loop's work: the number of (segment, active event) additions. */
static size_t
sweep_work(const struct sweep *w)
{
	struct active a;
	size_t j, work = 0;
	double prev = 0.0;
	int have_prev = 0;

	active_init(&a, w);
	for (j = 0; j < 2 * w->n; j++) {
		double t = w->pt[j].t;
		if (have_prev && t > prev && a.nact > 0)
			work += a.nact;
		apply_point(&a, w, j);
		prev = t;
		have_prev = 1;
	}
	active_free(&a);
	return work;
}

/*
 * The reference's loop: every closed segment added to each active event's
 * hidden, exclusive and hidden-under-compute time, segment by segment in
 * time order (§0), so the sums round as the reference's do.
 */
static double
sweep_plain(const struct sweep *w)
{
	struct active a;
	size_t i, j;
	double busy = 0.0, prev = 0.0, seg;
	int have_prev = 0;

	active_init(&a, w);
	for (j = 0; j < 2 * w->n; j++) {
		double t = w->pt[j].t;

		if (have_prev && t > prev && a.nact > 0) {
			seg = t - prev;
			busy += seg;
			/*
			 * An event is hidden when some active event sits on
			 * another stream, i.e. at least two streams are active;
			 * hidden under compute when another stream has an active
			 * compute kernel (§4.6).  Each event still gets `seg`
			 * added on its own so the sums round as the reference's.
			 */
			for (i = 0; i < a.nact; i++) {
				oev_t *e = &w->ev[a.act[i]];
				if (a.nactive_streams >= 2) {
					e->hidden_us += seg;
					if (a.total_comp - a.scomp[w->sidx[a.act[i]]] > 0)
						e->hbc_us += seg;
				} else {
					e->exclusive_us += seg;
				}
			}
		}
		apply_point(&a, w, j);
		prev = t;
		have_prev = 1;
	}
	active_free(&a);
	return busy;
}

/* An event's sums: the totals now less the totals at its start. */
static void
finish(oev_t *e, const dd_t *at, dd_t H, dd_t E, dd_t G, dd_t P)
{
	e->hidden_us = dd_diff(H, at[0]);
	e->exclusive_us = dd_diff(E, at[1]);
	e->hbc_us = ((G.hi - at[2].hi) - (P.hi - at[3].hi)) + ((G.lo - at[2].lo) - (P.lo - at[3].lo));
}

/*
 * The same sums from running totals: an event's hidden time is the hidden
 * total at its end minus the total at its start, and likewise exclusive
 * time.  Hidden-under-compute time needs another stream with compute:
 * always when two or more streams run compute, and when exactly one does,
 * for the events of every other stream, so its total is the all-streams
 * total minus that stream's share (per-stream totals of the segments
 * where it was the only one).  Totals are double-double, so each result
 * is the exact sum of the segments rounded once, where the plain loop
 * rounds at every segment: they differ by a few units in the last place
 * (docs/deviations.md).  O(n) after the sort.
 */
static double
sweep_totals(const struct sweep *w)
{
	struct active a;
	dd_t H = { 0, 0 }, E = { 0, 0 }, G = { 0, 0 }, *P1, *snap;
	size_t i, j;
	double busy = 0.0, prev = 0.0, seg;
	int have_prev = 0;

	active_init(&a, w);
	P1 = xcalloc(w->nstreams, sizeof *P1);
	snap = xcalloc(w->n, 4 * sizeof *snap);	/* per event at its start: H, E, G, its P1 */
	for (j = 0; j < 2 * w->n; j++) {
		double t = w->pt[j].t;
		size_t e = w->pt[j].i;
		int r;

		if (have_prev && t > prev && a.nact > 0) {
			seg = t - prev;
			busy += seg;
			if (a.nactive_streams >= 2) {
				dd_add(&H, seg);
				if (a.ncs >= 1)
					dd_add(&G, seg);
				if (a.ncs == 1)	/* the compute stream's own events get none of it */
					dd_add(&P1[a.cs_sum], seg);
			} else {
				dd_add(&E, seg);
			}
		}
		r = apply_point(&a, w, j);
		if (r > 0) {
			snap[4 * e] = H;
			snap[4 * e + 1] = E;
			snap[4 * e + 2] = G;
			snap[4 * e + 3] = P1[w->sidx[e]];
		} else if (r < 0) {
			finish(&w->ev[e], snap + 4 * e, H, E, G, P1[w->sidx[e]]);
		}
		prev = t;
		have_prev = 1;
	}
	/* events still active at the end (an end before its start, NaN times) */
	for (i = 0; i < a.nact; i++)
		finish(&w->ev[a.act[i]], snap + 4 * a.act[i], H, E, G, P1[w->sidx[a.act[i]]]);
	free(P1);
	free(snap);
	active_free(&a);
	return busy;
}

/* Dense stream numbers and the sorted points of w->ev[0..w->n), n > 0. */
static void
sweep_prepare(struct sweep *w)
{
	oev_t *ev = w->ev;
	size_t i, a, b, n = w->n;
	imap streams = { 0 };
	point_t *pt;

	/* Dense stream numbers so the per-stream counts are plain arrays. */
	w->sidx = xmallocarray(n, sizeof *w->sidx);
	for (i = 0; i < n; i++) {
		int isnew;
		uint64_t *v = imap_insert(&streams, ev[i].stream, (uint32_t)w->nstreams, &isnew);
		if (isnew)
			w->nstreams++;
		w->sidx[i] = (uint32_t)*v;
	}
	imap_free(&streams);
	/*
	 * The starts and the ends sorted apart, then merged: cmp_point is a
	 * total order, so this is the order one sort of every point gives,
	 * and each half mostly arrives in order (events in time order; one
	 * kernel after another on a stream), which xqsort finds in one pass
	 * where a sort of the points interleaved cost a seventh of
	 * overlap-sweep (issue 30).
	 */
	pt = xmallocarray(n, 2 * sizeof *pt);
	for (i = 0; i < n; i++) {
		pt[i] = (point_t){ ev[i].ts, 1, i };
		pt[n + i] = (point_t){ ev[i].end, 0, i };
	}
	xqsort(pt, n, sizeof *pt, cmp_point);
	xqsort(pt + n, n, sizeof *pt, cmp_point);
	w->pt = xmallocarray(n, 2 * sizeof *w->pt);
	for (i = 0, a = 0, b = n; a < n || b < 2 * n; i++)
		w->pt[i] = b == 2 * n || (a < n && cmp_point(&pt[a], &pt[b]) < 0) ? pt[a++] : pt[b++];
	free(pt);
}

double
ov_sweep(oev_t *ev, size_t n)
{
	struct sweep w = { ev, n, 0, NULL, NULL };
	size_t max;
	double busy;

	if (n == 0)
		return 0.0;
	sweep_prepare(&w);
	max = ov_sweep_max_exact_work ? ov_sweep_max_exact_work :
	    n > (SIZE_MAX - EXACT_WORK_MIN) / EXACT_WORK_PER_EVENT ? SIZE_MAX :
	    EXACT_WORK_PER_EVENT * n + EXACT_WORK_MIN;
	if (sweep_work(&w) <= max)
		busy = sweep_plain(&w);
	else
		busy = sweep_totals(&w);
	free(w.pt);
	free(w.sidx);
	return busy;
}

size_t
ov_exclusive(oev_t *ev, size_t n, struct ov_span **out)
{
	struct sweep w = { ev, n, 0, NULL, NULL };
	struct active a;
	struct ov_span *x = NULL;
	size_t j, nx = 0, cap = 0;
	double prev = 0.0;
	int have_prev = 0;

	*out = NULL;
	if (n == 0)
		return 0;
	sweep_prepare(&w);
	active_init(&a, &w);
	for (j = 0; j < 2 * w.n; j++) {
		double t = w.pt[j].t;
		/* the segments sweep_plain adds to exclusive_us: one stream active */
		if (have_prev && t > prev && a.nact > 0 && a.nactive_streams < 2) {
			if (nx && x[nx - 1].end == prev) {
				x[nx - 1].end = t;
			} else {
				xgrow(&x, &cap, nx + 1, sizeof *x);
				x[nx].ts = prev;
				x[nx++].end = t;
			}
		}
		apply_point(&a, &w, j);
		prev = t;
		have_prev = 1;
	}
	active_free(&a);
	free(w.pt);
	free(w.sidx);
	*out = x;
	return nx;
}

agg_t *
ov_aggregate(const oev_t *ev, size_t n, size_t *nagg)
{
	agg_t *a = NULL;
	size_t na = 0, cap = 0, i;
	imap idx = { 0 };

	for (i = 0; i < n; i++) {
		const oev_t *e = &ev[i];
		uint64_t key = ((uint64_t)e->canon << 8) | (uint64_t)e->cat;
		int isnew;
		uint64_t *v = imap_insert(&idx, key, (uint32_t)na, &isnew);
		agg_t *g;
		double score;

		if (isnew) {
			xgrow(&a, &cap, na + 1, sizeof *a);
			a[na] = (agg_t){ .name = e->canon, .cat = e->cat,
			    .rep_score = -1.0, .rep = -1 };
			na++;
		}
		g = &a[*v];
		g->count++;
		g->total_us += e->dur;
		g->hidden_us += e->hidden_us;
		g->exclusive_us += e->exclusive_us;
		g->hbc_us += e->hbc_us;
		/* Strictly greater: the first longest instance represents the kernel. */
		score = e->hidden_us + e->exclusive_us;
		if (score > g->rep_score) {
			g->rep_score = score;
			g->rep = (long)i;
		}
	}
	imap_free(&idx);
	*nagg = na;
	return a;
}

double
agg_hidden_ratio(const agg_t *a)
{
	return a->total_us != 0.0 ? a->hidden_us / a->total_us : 0.0;
}

double
agg_exclusive_ratio(const agg_t *a)
{
	return a->total_us != 0.0 ? a->exclusive_us / a->total_us : 0.0;
}
