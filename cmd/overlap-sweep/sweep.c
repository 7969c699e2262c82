/* The interval sweep over a stage's kernels and the per-kernel aggregates (overlap.md §4, §5). */
#include <stdlib.h>

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

double
ov_sweep(oev_t *ev, size_t n)
{
	point_t *pt;
	size_t *act, nact = 0, i, j, nstreams;
	long *pos;
	uint32_t *sidx;
	long *scount, *scomp;
	long nactive_streams = 0, total_comp = 0;
	double busy = 0.0, prev = 0.0, seg;
	int have_prev = 0;
	imap streams = { 0 };

	if (n == 0)
		return 0.0;
	/* Dense stream numbers so the per-stream counts are plain arrays. */
	sidx = xmalloc(n * sizeof *sidx);
	nstreams = 0;
	for (i = 0; i < n; i++) {
		int isnew;
		uint64_t *v = imap_insert(&streams, ev[i].stream, (uint32_t)nstreams, &isnew);
		if (isnew)
			nstreams++;
		sidx[i] = *v;
	}
	imap_free(&streams);
	scount = xcalloc(nstreams, sizeof *scount);
	scomp = xcalloc(nstreams, sizeof *scomp);

	pt = xmalloc(2 * n * sizeof *pt);
	for (i = 0; i < n; i++) {
		pt[2 * i] = (point_t){ ev[i].ts, 1, i };
		pt[2 * i + 1] = (point_t){ ev[i].end, 0, i };
	}
	qsort(pt, 2 * n, sizeof *pt, cmp_point);

	act = xmalloc(n * sizeof *act);
	pos = xmalloc(n * sizeof *pos);
	for (i = 0; i < n; i++)
		pos[i] = -1;

	for (j = 0; j < 2 * n; j++) {
		double t = pt[j].t;
		size_t e = pt[j].i;

		if (have_prev && t > prev && nact > 0) {
			seg = t - prev;
			busy += seg;
			/*
			 * An event is hidden when some active event sits on
			 * another stream, i.e. at least two streams are active;
			 * hidden under compute when another stream has an active
			 * compute kernel (§4.6).  Each event still gets `seg`
			 * added on its own so the sums round as the reference's.
			 */
			for (i = 0; i < nact; i++) {
				oev_t *a = &ev[act[i]];
				if (nactive_streams >= 2) {
					a->hidden_us += seg;
					if (total_comp - scomp[sidx[act[i]]] > 0)
						a->hbc_us += seg;
				} else {
					a->exclusive_us += seg;
				}
			}
		}
		if (pt[j].kind == 0) {
			/* An end whose start has not been seen yet is a no-op (§4.7). */
			if (pos[e] >= 0) {
				size_t p = (size_t)pos[e], last = act[--nact];
				act[p] = last;
				pos[last] = (long)p;
				pos[e] = -1;
				if (--scount[sidx[e]] == 0)
					nactive_streams--;
				if (ev[e].cat == OC_COMPUTE) {
					scomp[sidx[e]]--;
					total_comp--;
				}
			}
		} else if (pos[e] < 0) {
			pos[e] = (long)nact;
			act[nact++] = e;
			if (scount[sidx[e]]++ == 0)
				nactive_streams++;
			if (ev[e].cat == OC_COMPUTE) {
				scomp[sidx[e]]++;
				total_comp++;
			}
		}
		prev = t;
		have_prev = 1;
	}
	free(pt);
	free(act);
	free(pos);
	free(sidx);
	free(scount);
	free(scomp);
	return busy;
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
