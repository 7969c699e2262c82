/* Interval figures of GPU work items: busy, idle, host-bound gaps, buckets, graphs. */
#include <stdlib.h>
#include <string.h>

#include "rules.h"
#include "ss.h"
#include "xalloc.h"

int
stage_cmp(const strtab *str, uint32_t a, uint32_t b)
{
	const char *x, *y;
	int ix, iy;

	if (a == b)
		return 0;
	x = strtab_str(str, a);
	y = strtab_str(str, b);
	ix = stage_index(x);
	iy = stage_index(y);
	if (ix != iy)
		return ix < iy ? -1 : 1;
	return strcmp(x, y);
}

int
items_by_stage(const void *pa, const void *pb, void *str)
{
	const struct item *a = pa, *b = pb;
	int c = stage_cmp(str, a->stage, b->stage);

	if (c)
		return c;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (a->end != b->end)
		return a->end < b->end ? -1 : 1;
	return a->ord < b->ord ? -1 : a->ord > b->ord;
}

int
items_by_start(const void *pa, const void *pb, void *ctx)
{
	const struct gitem *a = pa, *b = pb;

	(void)ctx;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (a->end != b->end)
		return a->end < b->end ? -1 : 1;
	return a->ord < b->ord ? -1 : a->ord > b->ord;
}

/* An end still to come in the bucket sweep's heap. */
struct hend {
	double t;
	unsigned char bucket, graph;
};

static void
heap_push(struct figacc *a, struct hend x)
{
	size_t i;

	xgrow(&a->h, &a->caph, a->nh + 1, sizeof *a->h);
	i = a->nh++;
	while (i > 0 && a->h[(i - 1) / 2].t > x.t) {
		a->h[i] = a->h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	a->h[i] = x;
}

static struct hend
heap_pop(struct figacc *a)
{
	struct hend *h = a->h, top = h[0], x = h[--a->nh];
	size_t i = 0, c, n = a->nh;

	while ((c = 2 * i + 1) < n) {
		if (c + 1 < n && h[c + 1].t < h[c].t)
			c++;
		if (!(h[c].t < x.t))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
	return top;
}

/*
 * The bucket sweep: split the busy time into buckets (the
 * highest-precedence bucket running owns each instant) and measure the
 * time some graph item runs.  Each elementary segment between consecutive
 * endpoints is attributed once, in order of time: the starts come in
 * order (the items do), the ends from a heap of those running, which
 * holds only the items running at once (issue 30).  At each time every
 * end and start is counted before the next segment.
 */
static void
bucket_to(struct figacc *a, double t)
{
	int b;

	if (a->any && t > a->prev) {
		double seg = t - a->prev;
		for (b = 0; b < B_COUNT; b++) {
			if (a->cnt[b] > 0) {
				a->f.bucket_us[b] += seg;
				break;
			}
		}
		if (a->graph > 0)
			a->f.graph_us += seg;
	}
	while (a->nh && a->h[0].t == t) {
		struct hend x = heap_pop(a);
		a->cnt[x.bucket]--;
		a->graph -= x.graph;
	}
	a->prev = t;
	a->any = 1;
}

/* The ends before t, each at its time. */
static void
bucket_ends(struct figacc *a, double t)
{
	while (a->nh && a->h[0].t < t)
		bucket_to(a, a->h[0].t);
}

void
fig_init(struct figacc *a)
{
	memset(a, 0, sizeof *a);
}

void
fig_add(struct figacc *a, const struct item *x)
{
	struct figures *f = &a->f;

	f->kernel_us += x->dur;
	f->copies += !x->kernel;
	commacc_add(&a->ca, x->bucket, x->ts, x->end);
	if (x->graph)
		f->graph_mode = 1;
	a->eager += x->kernel && !x->graph;
	if (f->kernels++ == 0) {
		f->first = a->busy_ts = x->ts;
		a->cur_end = f->last = x->end;
	} else if (x->ts > a->cur_end) {	/* an idle gap [cur_end, x->ts) */
		f->busy_us += a->cur_end - a->busy_ts;
		a->busy_ts = x->ts;
		a->cur_end = x->end;
	} else if (x->end > a->cur_end) {
		a->cur_end = x->end;
	}
	if (x->end > f->last)
		f->last = x->end;
	if (x->end <= x->ts)
		return;		/* zero length: no time to attribute */
	bucket_ends(a, x->ts);
	bucket_to(a, x->ts);
	a->cnt[x->bucket]++;
	a->graph += x->graph;
	heap_push(a, (struct hend){ x->end, x->bucket, x->graph });
}

void
fig_done(struct figacc *a, struct figures *f)
{
	while (a->nh)
		bucket_to(a, a->h[0].t);
	*f = a->f;
	if (f->kernels) {
		f->busy_us += a->cur_end - a->busy_ts;
		f->span_us = f->last - f->first;
	}
	f->idle_us = f->span_us - f->busy_us;
	if (f->idle_us < 0)	/* rounding of the two sums */
		f->idle_us = 0;
	if (f->graph_mode)
		f->eager = a->eager;
	commacc_value(&a->ca, &f->comm_total_us, &f->comm_overlap_us);
	free(a->h);
	memset(a, 0, sizeof *a);
}

/*
 * The host-bound part of the gap [gap_ts, next->ts): the GPU idled until
 * the launch call of the next item ended, or until the item started when
 * the call ended later.  Only the first item of a launch waits for it: the
 * other kernels of a graph replay were submitted with the first.
 */
static double
host_part(const struct gitem *next, double gap_ts)
{
	double lend, h;

	if (next->launch < 0 || !next->first)
		return 0;
	lend = next->lts + (next->ldur > 0 ? next->ldur : 0);
	h = (lend < next->ts ? lend : next->ts) - gap_ts;
	return h > 0 ? h : 0;
}

void
commacc_value(const struct commacc *c, double *total, double *overlap)
{
	double comm = uacc_value(&c->comm), both;

	both = comm + uacc_value(&c->compute) - uacc_value(&c->either);
	if (both < 0)	/* rounding of the three sums */
		both = 0;
	if (both > comm)
		both = comm;
	*total = comm;
	*overlap = both;
}

/* The time in [ts, end) the host sat in a blocking call (ts never before the last call's). */
static double
sync_part(const struct blockset *bs, size_t *bu, double ts, double end)
{
	double sum = 0, a, b;
	size_t j;

	if (!bs || ts >= end)
		return 0;
	while (*bu < bs->nu && bs->u[*bu].end <= ts)
		(*bu)++;
	for (j = *bu; j < bs->nu && bs->u[j].ts < end; j++) {
		a = bs->u[j].ts > ts ? bs->u[j].ts : ts;
		b = bs->u[j].end < end ? bs->u[j].end : end;
		if (b > a)
			sum += b - a;
	}
	return sum;
}

/* Gap order for the choice: by key (the duration or the host part), longest first, then start. */
static int
gap_by_dur(const struct gap *a, const struct gap *b)
{
	double x = a->end - a->ts, y = b->end - b->ts;

	if (x != y)
		return x > y ? -1 : 1;
	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

static int
gap_by_host(const struct gap *a, const struct gap *b)
{
	if (a->host_us != b->host_us)
		return a->host_us > b->host_us ? -1 : 1;
	return gap_by_dur(a, b);
}

/* Keep g among the best SS_IDLE_GAPS of v (sorted best first) by cmp. */
static void
gap_rank(struct gap **v, size_t *n, const struct gap *g, int (*cmp)(const struct gap *,
    const struct gap *))
{
	size_t i;

	if (!*v)
		*v = xmalloc(SS_IDLE_GAPS * sizeof **v);
	if (*n == SS_IDLE_GAPS && cmp(g, &(*v)[*n - 1]) >= 0)
		return;
	i = *n < SS_IDLE_GAPS ? (*n)++ : *n - 1;
	while (i > 0 && cmp(g, &(*v)[i - 1]) < 0) {
		(*v)[i] = (*v)[i - 1];
		i--;
	}
	(*v)[i] = *g;
}

void
gaps_sweep(struct xsort *by_start, const uint32_t *stages, size_t ns, struct figures *f,
    const struct blockset *bs, int by_host, struct gapsel *sel)
{
	const struct gitem *x;
	double cur_end = 0;
	struct gap g;
	int started = 0;
	size_t k, bu = 0;

	(void)stages;
	for (k = 0; k < ns; k++) {
		f[k].idle_us = f[k].idle_launch_us = f[k].idle_sync_us = f[k].sync_max_us = 0;
		f[k].other_us = 0;
	}
	xsort_rewind(by_start);
	while ((x = xsort_next(by_start)) != NULL) {
		if (!started) {
			cur_end = x->end;
			started = 1;
			continue;
		}
		if (!(x->ts > cur_end)) {
			if (x->end > cur_end)
				cur_end = x->end;
			continue;
		}
		g.ts = cur_end;
		g.end = x->ts;
		g.host_us = host_part(x, cur_end);
		if (g.host_us > g.end - g.ts)
			g.host_us = g.end - g.ts;
		g.sync_us = sync_part(bs, &bu, g.ts + g.host_us, g.end);
		g.next = *x;
		cur_end = x->end;
		/* the gap counts in every stage whose span holds it */
		for (k = 0; k < ns; k++) {
			struct figures *fk = &f[k];
			if (fk->kernels == 0 || g.ts < fk->first || g.end > fk->last)
				continue;
			fk->idle_us += g.end - g.ts;
			fk->idle_launch_us += g.host_us;
			fk->idle_sync_us += g.sync_us;
			if (g.sync_us > fk->sync_max_us) {
				fk->sync_max_us = g.sync_us;
				fk->sync_max_gap = g.ts;
				fk->sync_max_ts = g.ts + g.host_us;
				fk->sync_max_end = g.end;
			}
			if (g.end - g.ts < SS_IDLE_GAP_MIN_US)
				continue;
			gap_rank(&sel[k].by_dur, &sel[k].ndur, &g, gap_by_dur);
			if (by_host && g.host_us > 0)
				gap_rank(&sel[k].by_host, &sel[k].nhost, &g, gap_by_host);
		}
	}
	for (k = 0; k < ns; k++) {
		double rest = f[k].span_us - f[k].busy_us - f[k].idle_us;
		if (f[k].idle_us > f[k].span_us - f[k].busy_us)	/* rounding of the sums */
			f[k].idle_us = f[k].span_us - f[k].busy_us > 0 ? f[k].span_us - f[k].busy_us : 0;
		/*
		 * under a nanosecond, below any trace's resolution, the rest is
		 * the sums' rounding (1.4e-14 us on a one-stage trace), not
		 * another stage's work
		 */
		f[k].other_us = rest >= 1e-3 ? rest : 0;
		if (f[k].idle_launch_us > f[k].idle_us)
			f[k].idle_launch_us = f[k].idle_us;
		if (f[k].idle_sync_us > f[k].idle_us - f[k].idle_launch_us)
			f[k].idle_sync_us = f[k].idle_us - f[k].idle_launch_us;
	}
}

static int
gap_by_start(const void *pa, const void *pb)
{
	const struct gap *a = pa, *b = pb;

	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

struct gap *
gaps_chosen(struct gapsel *sel, size_t *n)
{
	struct gap *out = NULL;
	size_t i, j, m = 0;

	if (sel->ndur + sel->nhost)
		out = xmalloc((sel->ndur + sel->nhost) * sizeof *out);
	for (i = 0; i < sel->ndur; i++)
		out[m++] = sel->by_dur[i];
	for (i = 0; i < sel->nhost; i++) {
		for (j = 0; j < sel->ndur && sel->by_dur[j].ts != sel->by_host[i].ts; j++)
			;
		if (j == sel->ndur)	/* a gap is one start: chosen once */
			out[m++] = sel->by_host[i];
	}
	if (m > 1)
		xqsort(out, m, sizeof *out, gap_by_start);
	free(sel->by_dur);
	free(sel->by_host);
	memset(sel, 0, sizeof *sel);
	*n = m;
	return out;
}
