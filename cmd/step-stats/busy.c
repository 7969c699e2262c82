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

static int
items_cmp(const void *pa, const void *pb, void *str)
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

void
items_sort(struct item *it, size_t n, const strtab *str)
{
	if (n > 1)
		xqsort_r(it, n, sizeof *it, items_cmp, (void *)str);
}

double
union_measure(const struct span *s, size_t n, double *span)
{
	double busy = 0, first, cur_ts, cur_end, last;
	size_t i;

	*span = 0;
	if (n == 0)
		return 0;
	first = cur_ts = s[0].ts;
	cur_end = last = s[0].end;
	for (i = 1; i < n; i++) {
		if (s[i].ts > cur_end) {
			busy += cur_end - cur_ts;
			cur_ts = s[i].ts;
			cur_end = s[i].end;
		} else if (s[i].end > cur_end) {
			cur_end = s[i].end;
		}
		if (s[i].end > last)
			last = s[i].end;
	}
	busy += cur_end - cur_ts;
	*span = last - first;
	return busy;
}

/* An end still to come in bucket_sweep's heap. */
struct hend {
	double t;
	unsigned char bucket, graph;
};

static void
heap_push(struct hend *h, size_t *n, struct hend x)
{
	size_t i = (*n)++;

	while (i > 0 && h[(i - 1) / 2].t > x.t) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = x;
}

static struct hend
heap_pop(struct hend *h, size_t *n)
{
	struct hend top = h[0], x = h[--*n];
	size_t i = 0, c;

	while ((c = 2 * i + 1) < *n) {
		if (c + 1 < *n && h[c + 1].t < h[c].t)
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
 * Split the busy time into buckets (the highest-precedence bucket running
 * owns each instant) and measure the time some graph item runs.  Each
 * elementary segment between consecutive endpoints is attributed once, in
 * order of time.  The items come in order of start (stage_figures), so the
 * endpoints are their starts merged with a heap of the ends to come: the
 * heap holds the items running at once, where a sort of every endpoint was
 * a tenth of step-stats (issue 30).  The segments and their sums are the
 * sort's, in its order: at each time every end and start is counted before
 * the next segment.
 */
static void
bucket_sweep(const struct item *it, size_t n, struct figures *f)
{
	struct hend *h = xmalloc((n ? n : 1) * sizeof *h);
	long cnt[B_COUNT] = { 0 }, graph = 0;
	size_t i = 0, nh = 0;
	double prev = 0, t;
	int b, any = 0;

	for (;;) {
		while (i < n && it[i].end <= it[i].ts)
			i++;	/* zero length: no time to attribute */
		if (i == n && nh == 0)
			break;
		t = i < n && (nh == 0 || it[i].ts < h[0].t) ? it[i].ts : h[0].t;
		if (any && t > prev) {
			double seg = t - prev;
			for (b = 0; b < B_COUNT; b++) {
				if (cnt[b] > 0) {
					f->bucket_us[b] += seg;
					break;
				}
			}
			if (graph > 0)
				f->graph_us += seg;
		}
		while (nh && h[0].t == t) {
			struct hend x = heap_pop(h, &nh);
			cnt[x.bucket]--;
			graph -= x.graph;
		}
		while (i < n && (it[i].end <= it[i].ts || it[i].ts == t)) {
			if (it[i].end > it[i].ts) {
				cnt[it[i].bucket]++;
				graph += it[i].graph;
				heap_push(h, &nh, (struct hend){ it[i].end, it[i].bucket, it[i].graph });
			}
			i++;
		}
		prev = t;
		any = 1;
	}
	free(h);
}

/*
 * The host-bound part of the gap [gap_ts, next->ts): the GPU idled until
 * the launch call of the next item ended, or until the item started when
 * the call ended later.  Only the first item of a launch waits for it: the
 * other kernels of a graph replay were submitted with the first.
 */
static double
host_part(const struct item *next, double gap_ts, const struct tcall *ln)
{
	double lend, h;

	if (next->launch < 0 || !next->first)
		return 0;
	lend = ln[next->launch].ts + (ln[next->launch].dur > 0 ? ln[next->launch].dur : 0);
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

void
stage_figures(const struct item *it, size_t n, struct figures *f)
{
	double cur_end = 0, first = 0, last = 0, busy_ts = 0;
	struct commacc ca = { 0 };
	size_t i;

	memset(f, 0, sizeof *f);
	f->kernels = (long long)n;
	for (i = 0; i < n; i++) {
		const struct item *x = &it[i];
		f->kernel_us += x->dur;
		f->copies += !x->kernel;
		commacc_add(&ca, x->bucket, x->ts, x->end);
		if (x->graph)
			f->graph_mode = 1;
		if (i == 0) {
			first = busy_ts = x->ts;
			cur_end = last = x->end;
			continue;
		}
		if (x->ts > cur_end) {	/* an idle gap [cur_end, x->ts) */
			f->busy_us += cur_end - busy_ts;
			busy_ts = x->ts;
			cur_end = x->end;
		} else if (x->end > cur_end) {
			cur_end = x->end;
		}
		if (x->end > last)
			last = x->end;
	}
	if (n) {
		f->busy_us += cur_end - busy_ts;
		f->span_us = last - first;
		f->first = first;
		f->last = last;
	}
	f->idle_us = f->span_us - f->busy_us;
	if (f->idle_us < 0)	/* rounding of the two sums */
		f->idle_us = 0;
	if (f->graph_mode)
		for (i = 0; i < n; i++)
			f->eager += it[i].kernel && !it[i].graph;
	commacc_value(&ca, &f->comm_total_us, &f->comm_overlap_us);
	bucket_sweep(it, n, f);
}

/*
 * The trace's gaps in order of start: a sweep over every stage's run at
 * once (ns runs sorted by start, merged by start, end and input order),
 * handing each gap of no item running to fn.  The sync part is measured
 * against the union of the blocking calls with a cursor that only moves
 * forward, as the gaps do.
 */
struct sweep {
	const struct item *it;
	const size_t *bound;
	size_t ns;
	size_t *cur;		/* per run: the next item */
	const struct tcall *ln;
	const struct blockset *bs;
	size_t bu;		/* cursor into bs->u */
};

static const struct item *
sweep_next(struct sweep *w)
{
	const struct item *best = NULL, *x;
	size_t k, bk = 0;

	for (k = 0; k < w->ns; k++) {
		if (w->cur[k] >= w->bound[k + 1])
			continue;
		x = &w->it[w->cur[k]];
		if (!best || x->ts < best->ts || (x->ts == best->ts && (x->end < best->end ||
		    (x->end == best->end && x->ord < best->ord)))) {
			best = x;
			bk = k;
		}
	}
	if (best)
		w->cur[bk]++;
	return best;
}

/* The time in [ts, end) the host sat in a blocking call (ts never before the last call's). */
static double
sync_part(struct sweep *w, double ts, double end)
{
	const struct blockset *bs = w->bs;
	double sum = 0, a, b;
	size_t j;

	if (!bs || ts >= end)
		return 0;
	while (w->bu < bs->nu && bs->u[w->bu].end <= ts)
		w->bu++;
	for (j = w->bu; j < bs->nu && bs->u[j].ts < end; j++) {
		a = bs->u[j].ts > ts ? bs->u[j].ts : ts;
		b = bs->u[j].end < end ? bs->u[j].end : end;
		if (b > a)
			sum += b - a;
	}
	return sum;
}

static void
sweep_gaps(struct sweep *w, void (*fn)(void *ctx, const struct gap *g), void *ctx)
{
	const struct item *x;
	double cur_end = 0;
	struct gap g;
	int started = 0;
	size_t k;

	for (k = 0; k < w->ns; k++)
		w->cur[k] = w->bound[k];
	w->bu = 0;
	while ((x = sweep_next(w)) != NULL) {
		if (!started) {
			cur_end = x->end;
			started = 1;
			continue;
		}
		if (x->ts > cur_end) {
			g.ts = cur_end;
			g.end = x->ts;
			g.host_us = host_part(x, cur_end, w->ln);
			if (g.host_us > g.end - g.ts)
				g.host_us = g.end - g.ts;
			g.sync_us = sync_part(w, g.ts + g.host_us, g.end);
			g.next = x;
			fn(ctx, &g);
			cur_end = x->end;
		} else if (x->end > cur_end) {
			cur_end = x->end;
		}
	}
}

/* trace_idle's callback: the gap counts in every stage whose span holds it. */
struct idlectx {
	struct figures *f;
	size_t ns;
	const struct item *it;
	const size_t *bound;
};

static void
idle_gap_add(void *ctx, const struct gap *g)
{
	struct idlectx *c = ctx;
	size_t k;

	for (k = 0; k < c->ns; k++) {
		struct figures *f = &c->f[k];
		if (c->bound[k] == c->bound[k + 1] || g->ts < f->first || g->end > f->last)
			continue;
		f->idle_us += g->end - g->ts;
		f->idle_launch_us += g->host_us;
		f->idle_sync_us += g->sync_us;
		if (g->sync_us > f->sync_max_us) {
			f->sync_max_us = g->sync_us;
			f->sync_max_gap = g->ts;
			f->sync_max_ts = g->ts + g->host_us;
			f->sync_max_end = g->end;
		}
	}
}

void
trace_idle(const struct item *it, const size_t *bound, size_t ns, const struct tcall *ln,
    const struct blockset *bs, struct figures *f)
{
	struct sweep w = { it, bound, ns, NULL, ln, bs, 0 };
	struct idlectx c = { f, ns, it, bound };
	size_t k;

	w.cur = xmalloc((ns ? ns : 1) * sizeof *w.cur);
	for (k = 0; k < ns; k++) {
		f[k].idle_us = f[k].idle_launch_us = f[k].idle_sync_us = f[k].sync_max_us = 0;
		f[k].other_us = 0;
	}
	sweep_gaps(&w, idle_gap_add, &c);
	for (k = 0; k < ns; k++) {
		double rest = f[k].span_us - f[k].busy_us - f[k].idle_us;
		if (f[k].idle_us > f[k].span_us - f[k].busy_us)	/* rounding of the sums */
			f[k].idle_us = f[k].span_us - f[k].busy_us > 0 ? f[k].span_us - f[k].busy_us : 0;
		f[k].other_us = rest > 0 ? rest : 0;
		if (f[k].idle_launch_us > f[k].idle_us)
			f[k].idle_launch_us = f[k].idle_us;
		if (f[k].idle_sync_us > f[k].idle_us - f[k].idle_launch_us)
			f[k].idle_sync_us = f[k].idle_us - f[k].idle_launch_us;
	}
	free(w.cur);
}

/* Gap order for the choice: by key (the duration or the host part), longest first, then start. */
static int
gap_by_dur(const void *pa, const void *pb)
{
	const struct gap *a = *(const struct gap *const *)pa, *b = *(const struct gap *const *)pb;
	double x = a->end - a->ts, y = b->end - b->ts;

	if (x != y)
		return x > y ? -1 : 1;
	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

static int
gap_by_host(const void *pa, const void *pb)
{
	const struct gap *a = *(const struct gap *const *)pa, *b = *(const struct gap *const *)pb;

	if (a->host_us != b->host_us)
		return a->host_us > b->host_us ? -1 : 1;
	return gap_by_dur(pa, pb);
}

/* stage_gaps' callback: the stage's gaps of a microsecond or more. */
struct gapctx {
	const struct figures *f;
	struct gap *g;
	size_t ng, cap;
};

static void
gap_keep(void *ctx, const struct gap *g)
{
	struct gapctx *c = ctx;

	if (g->ts < c->f->first || g->end > c->f->last || g->end - g->ts < SS_IDLE_GAP_MIN_US)
		return;
	xgrow(&c->g, &c->cap, c->ng + 1, sizeof *c->g);
	c->g[c->ng++] = *g;
}

size_t
stage_gaps(const struct item *it, const size_t *bound, size_t ns, const struct tcall *ln,
    const struct blockset *bs, const struct figures *f, int by_host, struct gap **out)
{
	struct sweep w = { it, bound, ns, NULL, ln, bs, 0 };
	struct gapctx c = { f, NULL, 0, 0 };
	struct gap *g, *sel, **ix;
	unsigned char *pick;
	size_t ng, i, k, nsel = 0;

	*out = NULL;
	if (f->kernels == 0)
		return 0;
	w.cur = xmalloc((ns ? ns : 1) * sizeof *w.cur);
	sweep_gaps(&w, gap_keep, &c);
	free(w.cur);
	g = c.g;
	ng = c.ng;
	if (ng == 0)
		return 0;
	ix = xmalloc(ng * sizeof *ix);
	pick = xcalloc(ng, 1);
	for (i = 0; i < ng; i++)
		ix[i] = &g[i];
	xqsort(ix, ng, sizeof *ix, gap_by_dur);
	for (k = 0; k < ng && k < SS_IDLE_GAPS; k++)
		pick[ix[k] - g] = 1;
	if (by_host) {
		xqsort(ix, ng, sizeof *ix, gap_by_host);
		for (k = 0; k < ng && k < SS_IDLE_GAPS && ix[k]->host_us > 0; k++)
			pick[ix[k] - g] = 1;
	}
	sel = xmalloc(ng * sizeof *sel);
	for (i = 0; i < ng; i++)	/* the gaps came in order of start */
		if (pick[i])
			sel[nsel++] = g[i];
	free(ix);
	free(pick);
	free(g);
	*out = sel;
	return nsel;
}
