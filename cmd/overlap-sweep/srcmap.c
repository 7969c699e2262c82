/*
 * The source map behind the "Python scope" column (overlap.md §6, §7.1):
 * which Python scope launched each kernel, learned from the graph-off
 * mapping trace and merged with the formal trace's site payload.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "overlap.h"
#include "rules.h"
#include "text.h"
#include "xalloc.h"

#define SAMPLE_LIMIT 16
#define CHAIN_MAX 6
#define CHAIN_KEY 4
#define TOL 1e-3

/* ---- counters (§6.0) ---- */

/*
 * Each counter of the map has an id (stats index * 3 + which); the map's
 * cidx table finds a key's slot in a counter in O(1).
 */
static void
counter_add(srcmap_t *sm, size_t si, int which, uint32_t key, long long by)
{
	srcstat_t *st = &sm->s[si];
	counter_t *c = which == 0 ? &st->scope : which == 1 ? &st->chain : &st->launch;
	uint64_t cid = (uint64_t)si * 3 + (uint64_t)which;
	int isnew;
	uint64_t *v = imap_insert(&sm->cidx, (cid << 32) | key, (uint32_t)c->n, &isnew);

	if (isnew) {
		/* most counters hold one key: start at one, not xgrow's 16 (issue 21) */
		if (c->n == c->cap) {
			c->cap = c->cap ? xmul(c->cap, 2) : 1;
			c->c = xreallocarray(c->c, c->cap, sizeof *c->c);
		}
		c->c[c->n++] = (cnt_t){ key, 0 };
	}
	c->c[*v].n += by;
}

uint32_t
counter_best(const counter_t *c)
{
	size_t i, best = 0;

	if (c->n == 0)
		return NOSTR;
	for (i = 1; i < c->n; i++)
		if (c->c[i].n > c->c[best].n)
			best = i;
	return c->c[best].key;
}

double
srcstat_mapping_ratio(const srcstat_t *st)
{
	return st->total_count ? (double)st->mapped_count / (double)st->total_count : 0.0;
}

/* source_map.setdefault(name): index of the stats, appended when new. */
static size_t
stats_for(srcmap_t *sm, uint32_t name)
{
	int isnew;
	uint64_t *v = imap_insert(&sm->byname, name, (uint32_t)sm->n, &isnew);

	if (isnew) {
		xgrow(&sm->s, &sm->cap, sm->n + 1, sizeof *sm->s);
		memset(&sm->s[sm->n], 0, sizeof sm->s[sm->n]);
		sm->s[sm->n].name = name;
		sm->n++;
	}
	return *v;
}

void
srcmap_free(srcmap_t *sm)
{
	size_t i;

	for (i = 0; i < sm->n; i++) {
		free(sm->s[i].scope.c);
		free(sm->s[i].chain.c);
		free(sm->s[i].launch.c);
		free(sm->s[i].lower);
		free(sm->s[i].compact);
	}
	free(sm->s);
	imap_free(&sm->byname);
	imap_free(&sm->cidx);
	memset(sm, 0, sizeof *sm);
}

static void
counter_copy(counter_t *dst, const counter_t *src)
{
	dst->n = dst->cap = src->n;
	dst->c = src->n ? xmallocarray(src->n, sizeof *dst->c) : NULL;
	if (src->n)
		memcpy(dst->c, src->c, src->n * sizeof *dst->c);
}

void
srcmap_copy(srcmap_t *dst, const srcmap_t *src)
{
	size_t i;

	memset(dst, 0, sizeof *dst);
	dst->n = dst->cap = src->n;
	dst->s = src->n ? xmallocarray(src->n, sizeof *dst->s) : NULL;
	for (i = 0; i < src->n; i++) {
		srcstat_t *d = &dst->s[i];
		const srcstat_t *s = &src->s[i];
		*d = *s;
		counter_copy(&d->scope, &s->scope);
		counter_copy(&d->chain, &s->chain);
		counter_copy(&d->launch, &s->launch);
		/* the lookup caches come back from the name on first use */
		d->lower = d->compact = NULL;
		d->lower_cp = d->compact_len = 0;
		d->cached = 0;
	}
	imap_copy(&dst->byname, &src->byname);
	imap_copy(&dst->cidx, &src->cidx);
}

/* strip(str(x or "")) as an interned id; NOSTR when empty. */
static uint32_t
strip_id(const char *s)
{
	size_t n;
	const char *p;

	if (!s)
		return NOSTR;
	p = text_strip(s, strlen(s), &n);
	return n ? intern(p, n) : NOSTR;
}

static int
is_unresolved(uint32_t id)
{
	return id == NOSTR || (SLEN(id) == 10 && memcmp(S(id), "unresolved", 10) == 0);
}

/* ---- §6.1 sampling ---- */

static int
cmp_ts_idx(const void *pa, const void *pb)
{
	const oev_t *a = *(const oev_t *const *)pa, *b = *(const oev_t *const *)pb;

	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return (a->idx > b->idx) - (a->idx < b->idx);
}

/*
 * sample_source_map_events: at most 16 events per canonical name at the
 * §6.1 positions, then sorted by (ts, idx).  Returns pointers into mev.
 */
static const oev_t **
sample_events(const oev_t *mev, size_t nm, size_t *ns)
{
	imap grp = { 0 };
	size_t *gn = NULL, *first, *last, *next, gcap = 0, ng = 0, i, k, out = 0;
	const oev_t **s;

	/* each group's members in list order, as a linked list of positions */
	next = xmalloc((nm ? nm : 1) * sizeof *next);
	first = xmalloc((nm ? nm : 1) * sizeof *first);
	last = xmalloc((nm ? nm : 1) * sizeof *last);
	for (i = 0; i < nm; i++) {
		int isnew;
		uint64_t *v = imap_insert(&grp, mev[i].canon, (uint32_t)ng, &isnew);
		if (isnew) {
			xgrow(&gn, &gcap, ng + 1, sizeof *gn);
			gn[ng] = 0;
			first[ng] = i;
			ng++;
		} else {
			next[last[*v]] = i;
		}
		last[*v] = i;
		next[i] = (size_t)-1;
		gn[*v]++;
	}
	s = xmalloc((nm ? nm : 1) * sizeof *s);
	for (k = 0; k < ng; k++) {
		size_t n = gn[k], j = 0, pos = 0;
		for (i = first[k]; i != (size_t)-1; i = next[i], pos++) {
			/* for n > 16 the sampled positions are strictly increasing */
			if (n <= SAMPLE_LIMIT || (j < SAMPLE_LIMIT && sample_position(j, n) == pos)) {
				s[out++] = &mev[i];
				j++;
			}
		}
	}
	xqsort(s, out, sizeof *s, cmp_ts_idx);
	free(gn);
	free(first);
	free(last);
	free(next);
	imap_free(&grp);
	*ns = out;
	return s;
}

/* ---- §6.3 CPU launch contexts ---- */

typedef struct {
	uint32_t op;
	double ts, dur;
	uint32_t chain[CHAIN_MAX];
	int nchain;
} ctx_t;

typedef struct {
	ctx_t *v;
	size_t n, cap;
	uint32_t *by_ts;	/* long lists: positions by (ts, dur, position), else NULL */
	int sorted_built;
} ctxlist_t;

typedef struct {
	ctxlist_t *l;
	size_t n, cap;
	imap byeid;		/* eid -> index in l */
} ctxmap_t;

typedef struct {
	uint32_t canon;
	int flags;
	double ts, end;
	/* links in the active lists, [0] meaningful scopes, [1] fallback ones; -2: not in it */
	int32_t prev[2], next[2];
} tscope_t;

/*
 * Sort keys for index arrays: (time, index), the order of a stable sort by
 * time.  The context is the scope array (starts, ends) or the op order.
 */
struct opsort {
	const cpuop_t *ops;
	const size_t *opi;
};

static int
cmp_start(const void *pa, const void *pb, void *ctx)
{
	const tscope_t *sc = ctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

	if (sc[a].ts != sc[b].ts)
		return sc[a].ts < sc[b].ts ? -1 : 1;
	return (a > b) - (a < b);
}

static int
cmp_end(const void *pa, const void *pb, void *ctx)
{
	const tscope_t *sc = ctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

	if (sc[a].end != sc[b].end)
		return sc[a].end < sc[b].end ? -1 : 1;
	return (a > b) - (a < b);
}

static int
cmp_opts(const void *pa, const void *pb, void *ctx)
{
	const struct opsort *o = ctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	double ta = o->ops[o->opi[a]].ts, tb = o->ops[o->opi[b]].ts;

	if (ta != tb)
		return ta < tb ? -1 : 1;
	return (a > b) - (a < b);
}

/* idx[0..n) = 0..n-1 in the order of cmp; the sort is skipped when file order is already it. */
static uint32_t *
sorted_index(size_t n, int (*cmp)(const void *, const void *, void *), void *ctx)
{
	uint32_t *idx = xmalloc((n ? n : 1) * sizeof *idx);
	size_t i;
	int sorted = 1;

	for (i = 0; i < n; i++) {
		idx[i] = (uint32_t)i;
		if (i && sorted && cmp(&idx[i - 1], &idx[i], ctx) > 0)
			sorted = 0;
	}
	if (!sorted)
		xqsort_r(idx, n, sizeof *idx, cmp, ctx);
	return idx;
}

/*
 * One thread's timeline: scopes open at the op's ts count.  Events are taken
 * in (time, kind, index) order with kinds scope start < CPU op < scope end,
 * merged from three sorted index arrays (starts, ops, ends) rather than
 * sorted together: a stack-traced thread has a million scopes and few ops.
 * The active set is a doubly linked list in start order, so the chain is
 * read backwards from its tail.
 */
/* A thread's scopes with their start and end orders, kept for every stage's map. */
typedef struct {
	const rawdata_t *raw;
	uint32_t thr;
	tscope_t *sc;
	size_t nsc;
	uint32_t *st, *en;
} timeline_t;

static timeline_t *tl;
static size_t ntl, captl;

void
srcmap_cache_free(void)
{
	size_t i;

	for (i = 0; i < ntl; i++) {
		free(tl[i].sc);
		free(tl[i].st);
		free(tl[i].en);
	}
	free(tl);
	tl = NULL;
	ntl = captl = 0;
}

/* Append the context of op to its External id's list. */
static void
add_context(ctxmap_t *cm, const cpuop_t *op, const uint32_t *chain, int n)
{
	ctx_t cx;
	ctxlist_t *l;
	uint64_t *v;
	int j, isnew;

	cx.op = op->name;
	cx.ts = op->ts;
	cx.dur = op->dur;
	cx.nchain = n;
	for (j = 0; j < n; j++)
		cx.chain[j] = chain[j];
	v = imap_insert(&cm->byeid, (uint64_t)op->ext, (uint32_t)cm->n, &isnew);
	if (isnew) {
		xgrow(&cm->l, &cm->cap, cm->n + 1, sizeof *cm->l);
		memset(&cm->l[cm->n], 0, sizeof cm->l[cm->n]);
		cm->n++;
	}
	l = &cm->l[*v];
	xgrow(&l->v, &l->cap, l->n + 1, sizeof *l->v);
	l->v[l->n++] = cx;
}

/* Unlink scope k from active list w (0 meaningful, 1 fallback), whose tail is *tail. */
static void
list_remove(tscope_t *sc, size_t k, int w, long *tail)
{
	if (sc[k].prev[w] == -2 && sc[k].next[w] == -2)
		return;
	if (sc[k].prev[w] >= 0)
		sc[sc[k].prev[w]].next[w] = sc[k].next[w];
	if (sc[k].next[w] >= 0)
		sc[sc[k].next[w]].prev[w] = sc[k].prev[w];
	else
		*tail = sc[k].prev[w];
	sc[k].prev[w] = sc[k].next[w] = -2;
}

static void
thread_contexts(ctxmap_t *cm, const cpuop_t *ops, const size_t *opi, size_t nop,
    const timeline_t *t)
{
	tscope_t *sc = t->sc;
	const uint32_t *st = t->st, *en = t->en;
	size_t nsc = t->nsc;
	uint32_t *oq;
	size_t a = 0, b = 0, c = 0;
	/*
	 * The open scopes of each class, in start order: the chain is the last
	 * six meaningful ones, else the last six fallback ones, read from the
	 * tails in O(6) -- one list of both made an op under many open
	 * fallback frames cost a walk over all of them (issue 21).
	 */
	long tail[2] = { -1, -1 };
	struct opsort os = { ops, opi };
	int w;

	oq = sorted_index(nop, cmp_opts, &os);
	for (a = 0; a < nsc; a++)
		for (w = 0; w < 2; w++)
			sc[a].prev[w] = sc[a].next[w] = -2;
	a = 0;
	while (b < nop) {
		/* the next event: the least (time, kind) of the three heads */
		double ta = a < nsc ? sc[st[a]].ts : 0, tb = ops[opi[oq[b]]].ts,
		    tc = c < nsc ? sc[en[c]].end : 0;
		int kind = 1;
		if (a < nsc && ta <= tb && (c >= nsc || ta <= tc))
			kind = 0;
		else if (c < nsc && tc < tb)
			kind = 2;
		if (kind == 0) {
			size_t k = st[a++];
			for (w = 0; w < 2; w++) {
				if (!(sc[k].flags & (w == 0 ? SCOPE_MEANINGFUL : SCOPE_FALLBACK)))
					continue;
				sc[k].prev[w] = (int32_t)tail[w];
				sc[k].next[w] = -1;
				if (tail[w] >= 0)
					sc[tail[w]].next[w] = (int32_t)k;
				tail[w] = (long)k;
			}
		} else if (kind == 2) {
			size_t k = en[c++];
			list_remove(sc, k, 0, &tail[0]);
			list_remove(sc, k, 1, &tail[1]);
		} else {
			const cpuop_t *op = &ops[opi[oq[b++]]];
			uint32_t rev[CHAIN_MAX], chain[CHAIN_MAX];
			int nrev = 0, j;
			long s;

			for (w = 0; w < 2 && nrev == 0; w++)
				for (s = tail[w]; s >= 0 && nrev < CHAIN_MAX; s = sc[s].prev[w])
					rev[nrev++] = sc[s].canon;
			for (j = 0; j < nrev; j++)
				chain[j] = rev[nrev - 1 - j];
			add_context(cm, op, chain, nrev);
		}
	}
	free(oq);
}

/*
 * thread_contexts for a py_context trace: the ops in the same order, each
 * with the chain trace-extract resolved (raw names, canonicalized here).
 */
static void
py_thread_contexts(ctxmap_t *cm, const rawdata_t *raw, const size_t *opi, size_t nop)
{
	struct opsort os = { raw->ops, opi };
	uint32_t *oq = sorted_index(nop, cmp_opts, &os), chain[CHAIN_MAX];
	size_t b, n, j;

	for (b = 0; b < nop; b++) {
		const uint32_t *names = pylist(raw->opchain[opi[oq[b]]], &n);
		int flags;
		if (n > CHAIN_MAX)
			n = CHAIN_MAX;
		for (j = 0; j < n; j++)
			chain[j] = scope_of_raw(names[j], &flags);
		add_context(cm, &raw->ops[opi[oq[b]]], chain, (int)n);
	}
	free(oq);
}

/*
 * extract_cpu_launch_contexts (§6.3) for the external ids in `targets`.
 * Threads are visited in first-seen order of their ops (the reference's
 * order is hash-dependent; §6.3 step 6).
 */
static void
cpu_contexts(ctxmap_t *cm, const rawdata_t *raw, const imap *targets)
{
	imap thr = { 0 };
	size_t nthr = 0, i, t;
	size_t **topi = NULL, *tn = NULL, *tcap = NULL, capt = 0;
	tscope_t **tsc = NULL;
	size_t *tscn = NULL, *tsccap = NULL, *tli, missing = 0;

	for (i = 0; i < raw->nops; i++) {
		const cpuop_t *op = &raw->ops[i];
		int isnew;
		uint64_t *v;
		if (!(op->dur > 0) || !imap_get(targets, (uint64_t)op->ext))
			continue;
		v = imap_insert(&thr, op->thread, (uint32_t)nthr, &isnew);
		if (isnew) {
			if (nthr + 1 > capt) {
				size_t c2 = capt;
				xgrow(&topi, &c2, nthr + 1, sizeof *topi);
				tn = xreallocarray(tn, c2, sizeof *tn);
				tcap = xreallocarray(tcap, c2, sizeof *tcap);
				tsc = xreallocarray(tsc, c2, sizeof *tsc);
				tscn = xreallocarray(tscn, c2, sizeof *tscn);
				tsccap = xreallocarray(tsccap, c2, sizeof *tsccap);
				capt = c2;
			}
			topi[nthr] = NULL;
			tn[nthr] = tcap[nthr] = 0;
			tsc[nthr] = NULL;
			tscn[nthr] = tsccap[nthr] = 0;
			nthr++;
		}
		t = *v;
		xgrow(&topi[t], &tcap[t], tn[t] + 1, sizeof *topi[t]);
		topi[t][tn[t]++] = i;
	}
	if (raw->py) {
		/* trace-extract resolved every op's chain: no timelines */
		for (t = 0; t < nthr; t++) {
			py_thread_contexts(cm, raw, topi[t], tn[t]);
			free(topi[t]);
		}
		free(topi);
		free(tn);
		free(tcap);
		free(tsc);
		free(tscn);
		free(tsccap);
		imap_free(&thr);
		return;
	}
	/* each thread's timeline, made by the first map that needs it */
	tli = xmalloc((nthr ? nthr : 1) * sizeof *tli);
	for (t = 0; t < nthr; t++) {
		size_t k;
		uint32_t key = raw->ops[topi[t][0]].thread;	/* the thread of topi[t]'s ops */

		for (k = 0; k < ntl && !(tl[k].raw == raw && tl[k].thr == key); k++)
			;
		tli[t] = k < ntl ? k : (size_t)-1;
		if (k == ntl)
			missing++;
	}
	if (missing) {
		for (i = 0; i < raw->nfr; i++) {
			const frame_t *f = &raw->fr[i];
			uint64_t *v;
			int flags;
			uint32_t canon;
			if (!(f->dur > 0) || !(v = imap_get(&thr, f->thread)) || tli[*v] != (size_t)-1)
				continue;
			canon = scope_of_raw(f->name, &flags);
			if (!flags)
				continue;
			t = *v;
			xgrow(&tsc[t], &tsccap[t], tscn[t] + 1, sizeof *tsc[t]);
			tsc[t][tscn[t]++] = (tscope_t){ canon, flags, f->ts, f->ts + f->dur,
			    { -2, -2 }, { -2, -2 } };
		}
		for (t = 0; t < nthr; t++) {
			timeline_t *x;
			if (tli[t] != (size_t)-1)
				continue;
			xgrow(&tl, &captl, ntl + 1, sizeof *tl);
			x = &tl[ntl];
			x->raw = raw;
			x->thr = raw->ops[topi[t][0]].thread;
			x->sc = tsc[t];
			x->nsc = tscn[t];
			x->st = sorted_index(x->nsc, cmp_start, x->sc);
			x->en = sorted_index(x->nsc, cmp_end, x->sc);
			tsc[t] = NULL;
			tli[t] = ntl++;
		}
	}
	for (t = 0; t < nthr; t++) {
		thread_contexts(cm, raw->ops, topi[t], tn[t], &tl[tli[t]]);
		free(topi[t]);
		free(tsc[t]);
	}
	free(tli);
	free(topi);
	free(tn);
	free(tcap);
	free(tsc);
	free(tscn);
	free(tsccap);
	imap_free(&thr);
}

/* Lists this long are searched through a sorted index, shorter ones scanned. */
#define CTX_SCAN_MAX 32

static int
cmp_ctx(const void *pa, const void *pb, void *arg)
{
	const ctx_t *v = arg, *a = &v[*(const uint32_t *)pa], *b = &v[*(const uint32_t *)pb];

	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (a->dur != b->dur)
		return a->dur < b->dur ? -1 : 1;
	return (*(const uint32_t *)pa > *(const uint32_t *)pb) -
	    (*(const uint32_t *)pa < *(const uint32_t *)pb);
}

/*
 * The plain rule over l->v[lo..hi) (§6.3): minimal |ts - kernel ts|, then
 * minimal dur, first in list order.
 */
static const ctx_t *
scan_contexts(const ctxlist_t *l, double kts)
{
	const ctx_t *best = NULL;
	double bd = 0, bdur = 0;
	size_t i;

	for (i = 0; i < l->n; i++) {
		double d = fabs(l->v[i].ts - kts);
		if (!best || d < bd || (d == bd && l->v[i].dur < bdur)) {
			best = &l->v[i];
			bd = d;
			bdur = l->v[i].dur;
		}
	}
	return best;
}

/*
 * choose_cpu_context (§6.3): minimal (|ts - kernel ts|, dur), first on
 * ties.  A scan per sampled kernel made many CPU ops under one External id
 * quadratic (100,000 took 9.6 s, issue 21); a long list is sorted once by
 * (ts, dur, position) and searched: |ts - kts| only grows away from kts,
 * so the best contexts are the first of their ts at the nearest distinct
 * times on either side (a few when rounding makes distances tie).
 */
static const ctx_t *
choose_cpu_context(ctxmap_t *cm, long long eid, double kts)
{
	const uint64_t *v = imap_get(&cm->byeid, (uint64_t)eid);
	ctxlist_t *l;
	const ctx_t *best = NULL;
	double bd = 0, bdur = 0;
	size_t lo, hi, i, k;
	int side;

	if (!v)
		return NULL;
	l = &cm->l[*v];
	if (l->n <= CTX_SCAN_MAX || isnan(kts))
		return scan_contexts(l, kts);
	if (!l->sorted_built) {
		l->by_ts = xmallocarray(l->n, sizeof *l->by_ts);
		for (i = 0; i < l->n; i++)
			l->by_ts[i] = (uint32_t)i;
		xqsort_r(l->by_ts, l->n, sizeof *l->by_ts, cmp_ctx, l->v);
		l->sorted_built = 1;
		/* NaN times do not sort: such a list keeps the scan */
		for (i = 0; i < l->n; i++)
			if (isnan(l->v[i].ts) || isnan(l->v[i].dur)) {
				free(l->by_ts);
				l->by_ts = NULL;
				break;
			}
	}
	if (!l->by_ts)
		return scan_contexts(l, kts);
	lo = 0;
	hi = l->n;
	while (lo < hi) {	/* the first context at or after kts */
		size_t mid = lo + (hi - lo) / 2;
		if (l->v[l->by_ts[mid]].ts < kts)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* walk each side by distinct ts while the distance can still tie the best */
	for (side = 0; side < 2; side++) {
		k = lo;
		for (;;) {
			size_t first;
			const ctx_t *c;
			double d, ts;

			if (side == 0 ? k >= l->n : k == 0)
				break;
			if (side == 1)
				k--;
			ts = l->v[l->by_ts[k]].ts;
			/* the group of this ts: its first element is its least dur, first position */
			first = k;
			if (side == 1)
				while (first > 0 && l->v[l->by_ts[first - 1]].ts == ts)
					first--;
			c = &l->v[l->by_ts[first]];
			d = fabs(ts - kts);
			if (best && d > bd)
				break;
			/* equal distance and dur: the earlier position wins, as in the scan */
			if (!best || d < bd || (d == bd && (c->dur < bdur ||
			    (c->dur == bdur && c < best)))) {
				best = c;
				bd = d;
				bdur = c->dur;
			}
			if (side == 0) {
				while (k < l->n && l->v[l->by_ts[k]].ts == ts)
					k++;
			} else {
				k = first;
			}
		}
	}
	return best;
}

static void
ctxmap_free(ctxmap_t *cm)
{
	size_t i;

	for (i = 0; i < cm->n; i++) {
		free(cm->l[i].v);
		free(cm->l[i].by_ts);
	}
	free(cm->l);
	imap_free(&cm->byeid);
}

/* ---- §6.5 time-window fallback ---- */

typedef struct {
	double ts, dur;
	uint32_t canon;
} wscope_t;

typedef struct {
	wscope_t *v;
	size_t n, cap;
} wlist_t;

static int
cmp_wscope(const void *pa, const void *pb)
{
	const wscope_t *a = pa, *b = pb;
	int c;

	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (a->dur != b->dur)
		return a->dur > b->dur ? -1 : 1;	/* -dur ascending */
	if (a->canon == b->canon)
		return 0;
	c = strcmp(S(a->canon), S(b->canon));
	return c;
}

/*
 * One query's scopes to its chain: sorted by (ts, -dur, name), repeated
 * names dropped (the first kept), the last six.  Frees the list.
 */
static void
window_finish(wlist_t *w, uint32_t *chain, int *nchain)
{
	imap seen = { 0 };
	uint32_t *keep;
	size_t nk = 0, j;

	*nchain = 0;
	if (w->n == 0)
		return;
	xqsort(w->v, w->n, sizeof *w->v, cmp_wscope);
	keep = xmalloc(w->n * sizeof *keep);
	for (j = 0; j < w->n; j++) {
		int isnew;
		imap_insert(&seen, w->v[j].canon, 0, &isnew);
		if (isnew)
			keep[nk++] = w->v[j].canon;
	}
	j = nk > CHAIN_MAX ? nk - CHAIN_MAX : 0;
	for (; j < nk; j++)
		chain[(*nchain)++] = keep[j];
	free(keep);
	imap_free(&seen);
	free(w->v);
	w->v = NULL;
	w->n = w->cap = 0;
}

/*
 * build_temporal_scope_lookup_from_raw_events (§6.5): for each query (a
 * sampled event's GPU start), the meaningful Python scopes of any thread
 * open at that time, deduplicated, last 6.  `qts` must be sorted; chains
 * are written to chains[q * CHAIN_MAX] with their lengths in nchain[q].
 */
static void
time_window(const rawdata_t *raw, const double *qts, size_t nq, uint32_t *chains, int *nchain)
{
	wlist_t *w = xcalloc(nq, sizeof *w);
	double qmin = qts[0], qmax = qts[nq - 1];
	size_t i, q;

	for (i = 0; i < raw->nfr; i++) {
		const frame_t *f = &raw->fr[i];
		double end = f->ts + f->dur, lo_t, hi_t;
		size_t lo, hi, a, b;
		int flags;
		uint32_t canon;

		if (!(f->dur > 0))
			continue;
		if (end < qmin || f->ts > qmax)
			continue;
		canon = scope_of_raw(f->name, &flags);
		if (!(flags & SCOPE_MEANINGFUL))
			continue;
		lo_t = f->ts - TOL;
		hi_t = end + TOL;
		/* lower bound of lo_t */
		a = 0, b = nq;
		while (a < b) {
			size_t m = a + (b - a) / 2;
			if (qts[m] < lo_t)
				a = m + 1;
			else
				b = m;
		}
		lo = a;
		/* upper bound of hi_t */
		a = lo, b = nq;
		while (a < b) {
			size_t m = a + (b - a) / 2;
			if (hi_t < qts[m])
				b = m;
			else
				a = m + 1;
		}
		hi = a;
		for (q = lo; q < hi; q++) {
			xgrow(&w[q].v, &w[q].cap, w[q].n + 1, sizeof *w[q].v);
			w[q].v[w[q].n++] = (wscope_t){ f->ts, f->dur, canon };
		}
	}
	for (q = 0; q < nq; q++)
		window_finish(&w[q], chains + q * CHAIN_MAX, &nchain[q]);
	free(w);
}

/*
 * time_window for a py_context trace: each query's chain as trace-extract
 * resolved it (its kernel's py_window), or, when a scope of it lies in the
 * tolerance margin (py_window_band), worked out again from the candidates
 * with this run's query range, whose pre-filter may drop such scopes.
 */
static void
py_time_window(const oev_t *const *qe, const double *qts, size_t nq, uint32_t *chains,
    int *nchain)
{
	double qmin = qts[0], qmax = qts[nq - 1];
	size_t q, i, n;

	for (q = 0; q < nq; q++) {
		const struct tpyband *b = pyband(qe[q]->band, &n);
		nchain[q] = 0;
		if (b) {
			wlist_t w = { 0 };
			for (i = 0; i < n; i++) {
				int flags;
				uint32_t canon;
				if (!(b[i].dur > 0) || b[i].ts + b[i].dur < qmin || b[i].ts > qmax)
					continue;
				canon = scope_of_raw(b[i].name, &flags);
				if (!(flags & SCOPE_MEANINGFUL))
					continue;
				xgrow(&w.v, &w.cap, w.n + 1, sizeof *w.v);
				w.v[w.n++] = (wscope_t){ b[i].ts, b[i].dur, canon };
			}
			window_finish(&w, chains + q * CHAIN_MAX, &nchain[q]);
		} else {
			const uint32_t *v = pylist(qe[q]->win, &n);
			int flags;
			for (i = 0; i < n && i < CHAIN_MAX; i++)
				chains[q * CHAIN_MAX + nchain[q]++] = scope_of_raw(v[i], &flags);
		}
	}
}

/* ---- §6.6 the attribution ladder ---- */

/* short_name(normalize_text(s), 100) (§11.4). */
static uint32_t
short_name_id(uint32_t id, size_t max)
{
	sbuf t = SBUF_INIT;
	uint32_t r;

	text_normalize(S(id), SLEN(id), &t);
	if (text_cplen(t.s ? t.s : "", t.len) > max) {
		size_t i = 0, cp = 0;
		while (i < t.len && cp < max - 3) {
			i++;
			while (i < t.len && ((unsigned char)t.s[i] & 0xc0) == 0x80)
				i++;
			cp++;
		}
		t.len = i;
		sb_add(&t, "...", 3);
	}
	r = intern(t.s, t.len);
	sb_free(&t);
	return r;
}

/* Step 5: the kernel-map entry fallback for an event without a chain. */
static void
entry_fallback(srcmap_t *sm, size_t si, const entry_t *e)
{
	uint32_t best;
	size_t k;

	if (!e)
		return;
	best = strip_id(e->best_location);
	if (is_unresolved(best))
		return;
	sm->s[si].mapped_count++;
	counter_add(sm, si, 0, best, 1);
	for (k = 0; k < e->nsites; k++) {
		const site_t *st = &e->sites[k];
		long long L = st->launches;
		const char *d = st->display_location && *st->display_location ?
		    st->display_location : st->location;
		uint32_t dl = strip_id(d);

		if (!is_unresolved(dl) && L > 0)
			counter_add(sm, si, 0, dl, L);
		if (st->top_cpu_op && *st->top_cpu_op)
			counter_add(sm, si, 2, intern_c(st->top_cpu_op), L > 1 ? L : 1);
	}
}

void
srcmap_build(srcmap_t *sm, const oev_t *mev, size_t nm, const rawdata_t *raw,
    const kernel_map_t *km, const char *stage)
{
	size_t ns, i, nq = 0;
	const oev_t **smp = sample_events(mev, nm, &ns);
	imap targets = { 0 };
	ctxmap_t cm = { 0 };
	const ctx_t **ctx = xcalloc(ns ? ns : 1, sizeof *ctx);
	long *qof = xmalloc((ns ? ns : 1) * sizeof *qof);
	double *qts = xmalloc((ns ? ns : 1) * sizeof *qts);
	const oev_t **qe = xmalloc((ns ? ns : 1) * sizeof *qe);
	uint32_t *chains = NULL;
	int *nchain = NULL;
	uint32_t twf = intern_c("time-window fallback");
	sbuf key = SBUF_INIT;

	for (i = 0; i < ns; i++)
		if (smp[i]->has_eid)
			imap_insert(&targets, (uint64_t)smp[i]->eid, 0, NULL);
	if (targets.n)
		cpu_contexts(&cm, raw, &targets);
	/* Queries: events without an id or without contexts, in (ts, idx) order. */
	for (i = 0; i < ns; i++) {
		qof[i] = -1;
		if (smp[i]->has_eid)
			ctx[i] = choose_cpu_context(&cm, smp[i]->eid, smp[i]->ts);
		if (!ctx[i]) {
			qof[i] = (long)nq;
			qe[nq] = smp[i];
			qts[nq++] = smp[i]->ts;
		}
	}
	if (nq) {
		chains = xmalloc(nq * CHAIN_MAX * sizeof *chains);
		nchain = xmalloc(nq * sizeof *nchain);
		if (raw->py)
			py_time_window(qe, qts, nq, chains, nchain);
		else
			time_window(raw, qts, nq, chains, nchain);
	}

	for (i = 0; i < ns; i++) {
		const oev_t *e = smp[i];
		size_t si = stats_for(sm, e->canon), k, from;
		const uint32_t *chain = NULL;
		int nc = 0;
		uint32_t launch = NOSTR;

		sm->s[si].total_count++;
		if (ctx[i]) {
			chain = ctx[i]->chain;
			nc = ctx[i]->nchain;
			launch = short_name_id(ctx[i]->op, 100);
		} else if (qof[i] >= 0 && nchain[qof[i]] > 0) {
			chain = &chains[(size_t)qof[i] * CHAIN_MAX];
			nc = nchain[qof[i]];
			launch = twf;
		}
		if (nc == 0) {
			/* the lookup has no side effects, so it runs only when needed */
			entry_fallback(sm, si, lookup_kernel_map_entry(km, stage, S(e->canon)));
			continue;
		}
		sm->s[si].mapped_count++;
		counter_add(sm, si, 0, chain[choose_best_scope(chain, (size_t)nc)], 1);
		sb_reset(&key);
		from = nc > CHAIN_KEY ? (size_t)nc - CHAIN_KEY : 0;
		for (k = from; k < (size_t)nc; k++) {
			if (k > from)
				sb_add(&key, " -> ", 4);
			sb_add(&key, S(chain[k]), SLEN(chain[k]));
		}
		counter_add(sm, si, 1, intern(key.s, key.len), 1);
		if (launch != NOSTR && SLEN(launch))
			counter_add(sm, si, 2, launch, 1);
	}
	sb_free(&key);
	free(chains);
	free(nchain);
	free(qts);
	free(qe);
	free(qof);
	free(ctx);
	ctxmap_free(&cm);
	imap_free(&targets);
	free(smp);
}

/* ---- §6.9 formal payload merge ---- */

void
srcmap_merge_payload(srcmap_t *sm, const payload_t *p)
{
	size_t i, k;

	if (!p)
		return;
	for (i = 0; i < p->n; i++) {
		const entry_t *e = &p->e[i];
		uint32_t best = strip_id(e->best_location);
		size_t si;

		if (e->nsites == 0 && is_unresolved(best))
			continue;
		si = stats_for(sm, intern_c(e->kernel));
		if (e->nsites == 0) {
			sm->s[si].total_count++;
			sm->s[si].mapped_count++;
			counter_add(sm, si, 0, best, 1);
			continue;
		}
		for (k = 0; k < e->nsites; k++) {
			const site_t *st = &e->sites[k];
			/* the raw location, falling back to the entry's best */
			const char *l = st->location && *st->location ? st->location :
			    (best != NOSTR ? S(best) : NULL);
			uint32_t loc = strip_id(l), op, stk;
			long long L = st->launches > 1 ? st->launches : 1;

			sm->s[si].total_count += L;
			if (!is_unresolved(loc)) {
				sm->s[si].mapped_count += L;
				counter_add(sm, si, 0, loc, L);
			}
			if ((op = strip_id(st->top_cpu_op)) != NOSTR)
				counter_add(sm, si, 2, op, L);
			if ((stk = strip_id(st->stack)) != NOSTR)
				counter_add(sm, si, 1, stk, L);
		}
	}
}

/* ---- §7.1 relaxed lookup ---- */

static void
fill_cache(srcstat_t *st)
{
	sbuf b = SBUF_INIT;

	if (st->cached)
		return;
	st->lower = xstrndup(S(st->name), SLEN(st->name));
	text_lower(st->lower, SLEN(st->name));
	st->lower_cp = text_cplen(st->lower, SLEN(st->name));
	text_compact(S(st->name), SLEN(st->name), &b);
	st->compact_len = b.len;
	st->compact = b.s ? sb_detach(&b) : xstrdup("");
	st->cached = 1;
}

static size_t
common_prefix(const char *a, size_t an, const char *b, size_t bn)
{
	size_t i = 0;

	while (i < an && i < bn && a[i] == b[i])
		i++;
	return i;
}

static const char *alias_groups[4][5] = {
	{ "flashattnfwdsm90", "flashattnvarlenfunc", "vllmflashattnflashattninterface",
	  "vllmfa3cfwd", NULL },
	{ "maskedmultiheadattentionkernel", "attentioninplace", "attentionbackendtrtllm",
	  NULL },
	{ "fusedqknormropekernel", "applyqknormrope", "modelingqwen3py98applyqknormrope",
	  NULL },
	{ "memset", NULL },
};

static const srcstat_t *
found(const srcstat_t *st)
{
	/* an empty key reads as "not found" in the reference */
	return st && SLEN(st->name) ? st : NULL;
}

const srcstat_t *
srcmap_lookup(srcmap_t *sm, const char *name, size_t n)
{
	uint32_t id = strtab_find(ov_str, name, n);
	const uint64_t *v;
	char *low;
	size_t lowcp, i, ngroups = 0;
	long best_score = -1;
	const srcstat_t *best = NULL;
	sbuf c = SBUF_INIT, txt = SBUF_INIT, tc = SBUF_INIT;
	int groups[4];

	if (id != UINT32_MAX && (v = imap_get(&sm->byname, id)))
		return &sm->s[*v];

	/* prefix / substring, case-insensitive, lengths in code points */
	low = xstrndup(name, n);
	text_lower(low, n);
	lowcp = text_cplen(low, n);
	for (i = 0; i < sm->n; i++) {
		srcstat_t *st = &sm->s[i];
		size_t kn = SLEN(st->name), m;
		long score;

		fill_cache(st);
		m = st->lower_cp < lowcp ? st->lower_cp : lowcp;
		if (text_starts(st->lower, kn, low) || text_starts(low, n, st->lower))
			score = (long)m;
		else if (text_has(low, n, st->lower) || text_has(st->lower, kn, low))
			score = (long)(m / 2);
		else
			continue;
		if (score > best_score) {
			best_score = score;
			best = st;
		}
	}
	free(low);
	if (found(best))
		return best;

	/* long names: common prefix of the compact forms */
	text_compact(name, n, &c);
	best = NULL;
	best_score = -1;
	if (c.len >= 96) {
		for (i = 0; i < sm->n; i++) {
			srcstat_t *st = &sm->s[i];
			size_t p, mn;
			long score;

			fill_cache(st);
			if (st->compact_len < 96)
				continue;
			p = common_prefix(c.s, c.len, st->compact, st->compact_len);
			mn = c.len < st->compact_len ? c.len : st->compact_len;
			if (p < 64 || (double)p < (double)(long long)((double)mn * 0.4))
				continue;
			score = (long)p;
			if (text_starts(c.s, c.len, "voidcutlassdevicekernelflash") &&
			    text_starts(st->compact, st->compact_len, "voidcutlassdevicekernelflash"))
				score += 32;
			if (score > best_score) {
				best_score = score;
				best = st;
			}
		}
		if (found(best)) {
			sb_free(&c);
			return best;
		}
	}

	/* alias groups */
	if (c.len && text_has(c.s, c.len, "flashattnfwdcombine"))
		groups[ngroups++] = 0;
	if (c.len && text_has(c.s, c.len, "kernelmha"))
		groups[ngroups++] = 1;
	if (c.len && text_has(c.s, c.len, "applybiasropeupdatekvcachev2"))
		groups[ngroups++] = 2;
	if (c.len && text_starts(c.s, c.len, "memset"))
		groups[ngroups++] = 3;
	best = NULL;
	best_score = -1;
	for (i = 0; ngroups && i < sm->n; i++) {
		srcstat_t *st = &sm->s[i];
		uint32_t bs = counter_best(&st->scope), bc = counter_best(&st->chain),
		    bl = counter_best(&st->launch);
		long score = 0;
		size_t g;

		sb_reset(&txt);
		sb_add(&txt, S(st->name), SLEN(st->name));
		sb_addc(&txt, ' ');
		if (bs != NOSTR)
			sb_add(&txt, S(bs), SLEN(bs));
		sb_addc(&txt, ' ');
		if (bc != NOSTR)
			sb_add(&txt, S(bc), SLEN(bc));
		sb_addc(&txt, ' ');
		if (bl != NOSTR)
			sb_add(&txt, S(bl), SLEN(bl));
		text_compact(txt.s, txt.len, &tc);
		for (g = 0; g < ngroups; g++) {
			const char *const *tok = alias_groups[groups[g]];
			size_t longest = 0;
			for (; *tok; tok++)
				if (tc.len && text_has(tc.s, tc.len, *tok) && strlen(*tok) > longest)
					longest = strlen(*tok);
			if (longest)
				score += 1000L * (long)(g + 1) + (long)longest;
		}
		if (score <= 0)
			continue;
		score += source_scope_priority(bs != NOSTR ? S(bs) : "", bs != NOSTR ? SLEN(bs) : 0);
		score += (long)(srcstat_mapping_ratio(st) * 100.0);
		if (score > best_score) {
			best_score = score;
			best = st;
		}
	}
	sb_free(&c);
	sb_free(&txt);
	sb_free(&tc);
	return found(best);
}
