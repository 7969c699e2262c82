/*
 * The clocks of host and GPU (issue 25), measured by sorting and merging
 * the trace's queues (issue 30): kernels joined to their launch calls by
 * correlation, ordered by start, swept forward and backward, and the
 * blocking calls merged against the launches in call order.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "num.h"
#include "stage.h"
#include "xalloc.h"

/*
 * A launch reaches an idle GPU in 5 to 50 us on every real trace seen; a
 * GPU clock offset from the host's shows as kernels that start on an idle
 * GPU a long time after their launch call returned (146 ms in one vLLM
 * trace), or as kernels that start long before their call.  Past this,
 * the clocks disagree.
 */
#define CLOCK_OFFSET_US 1000.0
/*
 * An idle gap is real from a microsecond: back-to-back items of one queue
 * follow each other within a nanosecond on ROCm and a few hundred on CUDA.
 */
#define IDLE_GAP_US 1.0
/*
 * A blocking call that waited this long for GPU work and returned within
 * this long after the work ended shows one clock: on a GPU clock a
 * millisecond ahead it would have returned a millisecond "before" the work
 * it waited for ended (5.8 us after the last kernel in a real MI300X
 * trace's hipDeviceSynchronize of 37.9 ms, 3 to 35 us elsewhere).
 */
#define SYNC_TOL_US 100.0

static const char *
S(const struct trace_reader *r, uint32_t id)
{
	return strtab_str(r->str, id);
}

static double
pos_dur(double dur)
{
	return dur > 0 ? dur : 0;
}

/* ---- kernels joined to the first launch record of their correlation ---- */

/* A launch record as the joins read it. */
struct lrec {
	long long corr;
	unsigned long long l;	/* its index among the trace's launch records */
	double ts, end;		/* the call's start, and its end (ts + dur, dur below 0 as 0) */
	uint32_t name;
	unsigned char kind;
};

/* The launch records by correlation (the sort is stable: the first of each comes first). */
static struct xsort *
launches_by_corr(struct trace *tr)
{
	struct xsort *x = xsort_new(sizeof(struct lrec), xsort_by_ll, NULL);
	const struct tcall *c;
	unsigned long long i = 0;

	if (tr->lq) {
		xsort_rewind(tr->lq);
		while ((c = xsort_next(tr->lq)) != NULL) {
			struct lrec l = { c->corr, i++, c->ts, c->ts + pos_dur(c->dur), c->name,
			    c->kind };
			xsort_add(x, &l);
		}
	}
	return x;
}

/* The first launch of each correlation, read in correlation order. */
struct lcur {
	struct xsort *q;
	const struct lrec *next;
	struct lrec e;
	int have;
};

static void
lcur_open(struct lcur *c, struct xsort *q)
{
	memset(c, 0, sizeof *c);
	c->q = q;
	xsort_rewind(q);
	c->next = xsort_next(q);
}

static int
lcur_step(struct lcur *c)
{
	if (!c->next)
		return c->have = 0;
	c->e = *c->next;
	/* a duplicated correlation keeps its first launch */
	while ((c->next = xsort_next(c->q)) != NULL && c->next->corr == c->e.corr)
		;
	return c->have = 1;
}

/* The first launch of corr, asked in ascending order; NULL when there is none. */
static const struct lrec *
lcur_get(struct lcur *c, long long corr)
{
	if (!c->have && !lcur_step(c))
		return NULL;
	while (c->e.corr < corr)
		if (!lcur_step(c))
			return NULL;
	return c->e.corr == corr ? &c->e : NULL;
}

/* A kernel waiting for its launch: its correlation first, for the join. */
struct kc {
	long long corr;
	unsigned long long k;
};

struct xsort *
kernel_launch_starts(struct trace *tr)
{
	struct xsort *byk = xsort_new(sizeof(struct klaunch), xsort_by_ll, NULL);
	struct xsort *kc = xsort_new(sizeof(struct kc), xsort_by_ll, NULL);
	struct xsort *lq = launches_by_corr(tr);
	struct tkcursor cur;
	const struct tkernel *k;
	const struct kc *w;
	const struct lrec *l;
	struct lcur lc;
	unsigned long long i = 0;

	trace_kernel_rewind(tr, &cur);
	while ((k = trace_kernel_next(&cur)) != NULL) {
		if (k->has_corr) {
			struct kc x = { k->corr, i };
			xsort_add(kc, &x);
		}
		i++;
	}
	lcur_open(&lc, lq);
	while ((w = xsort_next(kc)) != NULL)
		if ((l = lcur_get(&lc, w->corr)) != NULL) {
			struct klaunch o = { w->k, l->ts };
			xsort_add(byk, &o);
		}
	xsort_free(kc);
	xsort_free(lq);
	return byk;
}

/* ---- the items of the analyzed process ---- */

/* An item with its launch (l -1: none). */
struct item {
	double ts, end;
	unsigned long long k;	/* kernel index: ties in file order */
	long long l;
	double lts, lend;
	uint32_t lname;
	unsigned char lkind;
};

/* By start, then end, then file order (the order a stable sort of the file's gave). */
static int
cmp_start(const void *pa, const void *pb, void *ctx)
{
	const struct item *a = pa, *b = pb;

	(void)ctx;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (a->end != b->end)
		return (a->end > b->end) - (a->end < b->end);
	return (a->k > b->k) - (a->k < b->k);
}

static int
cmp_start_rev(const void *pa, const void *pb, void *ctx)
{
	return cmp_start(pb, pa, ctx);
}

/* A waiting item: its correlation first, for the join. */
struct kwait {
	long long corr;
	struct item it;
};

/* The items of process sel with their launches, by start (cmp_start). */
static struct xsort *
sel_items(const struct trace_reader *r, struct trace *tr, uint32_t sel, struct xsort *lq)
{
	struct xsort *by_start = xsort_new(sizeof(struct item), cmp_start, NULL);
	struct xsort *wait = xsort_new(sizeof(struct kwait), xsort_by_ll, NULL);
	struct tkcursor cur;
	const struct tkernel *k;
	const struct kwait *w;
	struct lcur lc;
	unsigned long long i = 0;

	trace_kernel_rewind(tr, &cur);
	while ((k = trace_kernel_next(&cur)) != NULL) {
		struct kwait x;
		memset(&x, 0, sizeof x);
		x.it.ts = k->ts;
		x.it.end = k->ts + pos_dur(k->dur);
		x.it.k = i++;
		x.it.l = -1;
		if (trace_thread_pid(r, k->thread) != sel)
			continue;
		if (k->has_corr) {
			x.corr = k->corr;
			xsort_add(wait, &x);
		} else
			xsort_add(by_start, &x.it);
	}
	lcur_open(&lc, lq);
	while ((w = xsort_next(wait)) != NULL) {
		struct item it = w->it;
		const struct lrec *l = lcur_get(&lc, w->corr);
		if (l) {
			it.l = (long long)l->l;
			it.lts = l->ts;
			it.lend = l->end;
			it.lname = l->name;
			it.lkind = l->kind;
		}
		xsort_add(by_start, &it);
	}
	xsort_free(wait);
	return by_start;
}

/*
 * sufend of each item by start: the earliest launch-call end of the
 * items starting at or after it (INFINITY when none has a launch), in
 * start order.  One pass backward: the items sorted the other way.
 */
struct suf {
	unsigned long long pos;
	double v;
};

static struct xsort *
suffix_ends(struct xsort *by_start, unsigned long long n)
{
	struct xsort *rev = xsort_new(sizeof(struct item), cmp_start_rev, NULL);
	struct xsort *out = xsort_new(sizeof(struct suf), xsort_by_ll, NULL);
	const struct item *it;
	double m = INFINITY;
	unsigned long long j = 0;

	xsort_rewind(by_start);
	while ((it = xsort_next(by_start)) != NULL)
		xsort_add(rev, it);
	while ((it = xsort_next(rev)) != NULL) {
		struct suf s;
		double e = it->l >= 0 ? it->lend : INFINITY;
		if (e < m)
			m = e;
		s.pos = n - 1 - j++;
		s.v = m;
		xsort_add(out, &s);
	}
	xsort_free(rev);
	return out;
}

/*
 * num_percentile of the values of a sort of doubles (n of them, n > 0):
 * selected in place while they are all in memory, else read in order.
 */
static double
sorted_percentile(struct xsort *x, unsigned long long n, int p)
{
	unsigned long long rank = ((unsigned long long)p * n + 99) / 100, i;
	const double *v = NULL;
	size_t m;
	double *mem = xsort_memory(x, &m);

	if (mem)
		return num_percentile(mem, m, p);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	for (i = 0; i < rank; i++)
		v = xsort_next(x);
	return *v;
}

/* ---- blocking calls ---- */

/*
 * Does a blocking call [s0, ret] that waited for GPU work ending at `last`
 * show one clock?  Keeps the one that returned soonest after its work.
 */
static void
sync_evidence(struct clocks *c, uint32_t name, double s0, double ret, double last)
{
	double back = ret - last, wait = last - s0;

	if (wait < SYNC_TOL_US || back < 0 || back > SYNC_TOL_US)
		return;
	if (c->sync_call != NOSTR && (back > c->sync_return ||
	    (back == c->sync_return && wait <= c->sync_wait)))
		return;
	c->sync_call = name;
	c->sync_return = back;
	c->sync_wait = wait;
}

/* A synchronous copy's call (cudaMemcpy, hipMemcpyWithStream): it returns once its copy is done. */
static int
sync_copy(const struct trace_reader *r, const struct item *it)
{
	const char *n = S(r, it->lname);

	return it->lkind == LAUNCH_MEMCPY && !strstr(n, "Async") && !strstr(n, "async");
}

/* A launch's latest item end: (launch, its call start, the end) by launch. */
struct lend {
	long long l;
	double call, end;
};

/* (call start, latest end) by call start, then end, then launch: callend order. */
static int
cmp_call(const void *pa, const void *pb, void *ctx)
{
	const struct lend *a = pa, *b = pb;

	(void)ctx;
	if (a->call != b->call)
		return a->call < b->call ? -1 : 1;
	if (a->end != b->end)
		return (a->end > b->end) - (a->end < b->end);
	return (a->l > b->l) - (a->l < b->l);
}

/* A blocking call: its start and index, by start (ties in file order). */
struct syn {
	double ts;
	unsigned long long i;
};

static int
cmp_syn(const void *pa, const void *pb, void *ctx)
{
	const struct syn *a = pa, *b = pb;

	(void)ctx;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return (a->i > b->i) - (a->i < b->i);
}

/* What a blocking call waited for: the latest end of the items launched before it. */
struct waited {
	unsigned long long i;
	double last;
	int has;
};

/*
 * The trace's synchronize calls against the GPU work of the analyzed
 * process: each against the latest end of the items whose launch call
 * began before it (per launch its latest item end, the launches by call
 * start, a running maximum), in the calls' record order.  ends: struct
 * lend of every item with a launch, by launch.
 */
static void
measure_syncs(struct trace *tr, struct xsort *ends, struct clocks *c)
{
	struct xsort *calls = xsort_new(sizeof(struct lend), cmp_call, NULL);
	struct xsort *syn = xsort_new(sizeof(struct syn), cmp_syn, NULL);
	struct xsort *got = xsort_new(sizeof(struct waited), xsort_by_ll, NULL);
	const struct lend *e, *ce;
	const struct syn *s;
	const struct tcall *sy;
	const struct waited *w;
	struct lend cur;
	int have = 0, any = 0;
	double pmax = 0;
	unsigned long long i = 0;

	if (!tr->sq || tr->nsy == 0)
		goto out;
	/* each launch's latest item end */
	while ((e = xsort_next(ends)) != NULL) {
		if (have && e->l != cur.l) {
			xsort_add(calls, &cur);
			have = 0;
		}
		if (!have) {
			cur = *e;
			have = 1;
		} else if (!(e->end <= cur.end))
			cur.end = e->end;
	}
	if (have)
		xsort_add(calls, &cur);
	xsort_rewind(tr->sq);
	while ((sy = xsort_next(tr->sq)) != NULL) {
		struct syn x = { sy->ts, i++ };
		xsort_add(syn, &x);
	}
	/* the calls by start against the launches by call start */
	ce = xsort_next(calls);
	while ((s = xsort_next(syn)) != NULL) {
		struct waited x = { s->i, 0, 0 };
		while (ce && ce->call < s->ts) {
			pmax = any && pmax > ce->end ? pmax : ce->end;
			any = 1;
			ce = xsort_next(calls);
		}
		x.has = any;
		x.last = pmax;
		xsort_add(got, &x);
	}
	/* and the evidence in the calls' record order */
	xsort_rewind(tr->sq);
	while ((sy = xsort_next(tr->sq)) != NULL && (w = xsort_next(got)) != NULL)
		if (w->has)
			sync_evidence(c, sy->name, sy->ts, sy->ts + pos_dur(sy->dur), w->last);
out:
	xsort_free(calls);
	xsort_free(syn);
	xsort_free(got);
}

/*
 * Measure the launch-to-start latencies of the kernels of process sel:
 * over every kernel with a launch (its correlation's first launch record),
 * and over those that start on a GPU with nothing of the process running
 * or queued, as the first item of their launch, whose start can be late
 * only by the clocks.  Nothing is queued before the process's first item,
 * nor after a real idle gap when no item starting then or later had its
 * launch call return before the gap began; back-to-back items of a deep
 * launch queue (a GPU-bound loop, the host tens of milliseconds ahead)
 * are queued, however small the gap between them.  A blocking call that
 * returned right after the work it waited for (sync_evidence) shows one
 * clock and overrules the latencies.  Not under --compat reference.
 */
void
measure_clocks(const struct trace_reader *r, struct trace *tr, uint32_t sel, struct clocks *c)
{
	struct xsort *lq = launches_by_corr(tr), *items, *suf, *lat, *ends;
	unsigned char *seen = xcalloc(tr->nln / 8 + 1, 1);
	const struct item *it;
	const struct suf *sf;
	unsigned long long n, i = 0;
	double maxend = 0;

	memset(c, 0, sizeof *c);
	c->sync_call = NOSTR;
	items = sel_items(r, tr, sel, lq);
	xsort_free(lq);
	n = xsort_count(items);
	suf = suffix_ends(items, n);
	lat = xsort_new(sizeof(double), xsort_by_double, NULL);
	ends = xsort_new(sizeof(struct lend), xsort_by_ll, NULL);
	xsort_rewind(items);
	while ((it = xsort_next(items)) != NULL) {
		sf = xsort_next(suf);
		if (it->l >= 0) {
			double ls = it->ts - it->lts;
			size_t li = (size_t)it->l;
			struct lend e = { it->l, it->lts, it->end };
			xsort_add(lat, &ls);
			if (!c->pairs || ls < c->start_min)
				c->start_min = ls;
			c->pairs++;
			if (!(seen[li >> 3] >> (li & 7) & 1) &&
			    (i == 0 || (it->ts - maxend >= IDLE_GAP_US && sf->v > maxend))) {
				double le = it->ts - it->lend;
				if (!c->idle || le < c->idle_min)
					c->idle_min = le;
				c->idle++;
			}
			seen[li >> 3] |= (unsigned char)(1u << (li & 7));
			xsort_add(ends, &e);
			if (sync_copy(r, it))
				sync_evidence(c, it->lname, it->lts, it->lend, it->end);
		}
		if (i == 0 || it->end > maxend)
			maxend = it->end;
		i++;
	}
	if (c->pairs)	/* the lower median, lat[(pairs - 1) / 2] of lat sorted */
		c->p50 = sorted_percentile(lat, (unsigned long long)c->pairs, 50);
	measure_syncs(tr, ends, c);
	/*
	 * The GPU ahead: the quickest start on an idle GPU is late, and so is
	 * every start after its call began (no item starts before its call on
	 * one clock, so that bounds the offset: the lesser of the two).
	 */
	if (c->sync_call != NOSTR) {
		/* one clock */
	} else if (c->idle && c->idle_min >= CLOCK_OFFSET_US && c->start_min >= CLOCK_OFFSET_US) {
		c->offset = 1;
		c->offset_us = c->idle_min < c->start_min ? c->idle_min : c->start_min;
	} else if (c->pairs && c->start_min <= -CLOCK_OFFSET_US) {
		c->offset = 1;
		c->offset_us = c->start_min;
	}
	xsort_free(items);
	xsort_free(suf);
	xsort_free(lat);
	xsort_free(ends);
	free(seen);
}
