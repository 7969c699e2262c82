/*
 * Kernel -> launch -> CPU op -> Python frame attribution of one trace
 * (kernel-table.md §4), plus the per-string caches the rest of kernel-map
 * uses.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "km.h"
#include "num.h"
#include "opt.h"
#include "rules.h"
#include "text.h"
#include "xalloc.h"
#include "xsort.h"

strtab *km_str;

/* ---- per-string caches ---- */

static struct {
	uint32_t *canon, *norm;
	const char **cat;
	int *prio;
	size_t cap;
} cache;

static void
cache_fit(uint32_t id)
{
	size_t old = cache.cap, i;

	if (id < old)
		return;
	cache.cap = old ? old : 1024;
	while (cache.cap <= id)
		cache.cap *= 2;
	cache.canon = xreallocarray(cache.canon, cache.cap, sizeof cache.canon[0]);
	cache.norm = xreallocarray(cache.norm, cache.cap, sizeof cache.norm[0]);
	cache.cat = xreallocarray(cache.cat, cache.cap, sizeof cache.cat[0]);
	cache.prio = xreallocarray(cache.prio, cache.cap, sizeof cache.prio[0]);
	for (i = old; i < cache.cap; i++) {
		cache.canon[i] = NOSTR;
		cache.norm[i] = NOSTR;
		cache.cat[i] = NULL;
		cache.prio[i] = INT_MIN;
	}
}

uint32_t
km_intern(const char *s, size_t n)
{
	return strtab_intern(km_str, s, n);
}

const char *
km_s(uint32_t id)
{
	return id == NOSTR ? NULL : strtab_str(km_str, id);
}

uint32_t
km_canon(uint32_t raw)
{
	sbuf b = SBUF_INIT;

	cache_fit(raw);
	if (cache.canon[raw] == NOSTR) {
		canonicalize_name(strtab_str(km_str, raw), strtab_len(km_str, raw), &b);
		cache.canon[raw] = km_intern(sb_str(&b), b.len);
		sb_free(&b);
	}
	return cache.canon[raw];
}

const char *
km_category(uint32_t raw)
{
	cache_fit(raw);
	if (!cache.cat[raw])
		cache.cat[raw] = classify_kernel(strtab_str(km_str, raw), strtab_len(km_str, raw));
	return cache.cat[raw];
}

uint32_t
km_frame_norm(uint32_t raw)
{
	sbuf b = SBUF_INIT;

	cache_fit(raw);
	if (cache.norm[raw] == NOSTR) {
		normalize_source_location(strtab_str(km_str, raw), strtab_len(km_str, raw), &b);
		cache.norm[raw] = km_intern(sb_str(&b), b.len);
		sb_free(&b);
	}
	return cache.norm[raw];
}

int
km_frame_prio(uint32_t raw)
{
	cache_fit(raw);
	if (cache.prio[raw] == INT_MIN)
		cache.prio[raw] = frame_priority(strtab_str(km_str, raw), strtab_len(km_str, raw));
	return cache.prio[raw];
}

void
km_cache_free(void)
{
	free(cache.canon);
	free(cache.norm);
	free(cache.cat);
	free(cache.prio);
	memset(&cache, 0, sizeof cache);
}

/* ---- timed matching (§4.2) ---- */

static int
cmp_dbl(double a, double b)
{
	return a < b ? -1 : a > b ? 1 : 0;
}

/* A call (a CPU op by External id, a launch by correlation) as the match reads it. */
struct mcall {
	long long id;
	double ts;
	unsigned long long idx;	/* its index among the trace's calls: ties in file order */
	double dur;
	uint32_t name, thread, py_loc, py_stack;
};

/* A kernel waiting for its call: the probe is its start. */
struct mwait {
	long long id;
	double p;
	unsigned long long i;	/* the kernel's index */
};

/* A kernel's call. */
struct mres {
	unsigned long long i;
	struct mcall c;
};

static int
cmp_mcall(const void *pa, const void *pb, void *ctx)
{
	const struct mcall *a = pa, *b = pb;
	int c;

	(void)ctx;
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	if ((c = cmp_dbl(a->ts, b->ts)) != 0)
		return c;
	return (a->idx > b->idx) - (a->idx < b->idx);
}

static int
cmp_mwait(const void *pa, const void *pb, void *ctx)
{
	const struct mwait *a = pa, *b = pb;
	int c;

	(void)ctx;
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	if ((c = cmp_dbl(a->p, b->p)) != 0)
		return c;
	return (a->i > b->i) - (a->i < b->i);
}

/*
 * A group's members (the calls of one id) read in order, with the first
 * two at hand before any is consumed: match_timed's choice when none has
 * started by the probe.
 */
struct members {
	struct xsort *q;
	const struct mcall *next;	/* the sort's next record, any group */
	long long id;
	struct mcall la[2];		/* looked ahead, not consumed */
	size_t nla;
	struct mcall last[4];		/* the last four consumed, a ring */
	unsigned long long r;		/* consumed: members that started by the probe */
};

/* The group of id, members looked ahead; returns 0 when there is none. */
static int
members_open(struct members *m, long long id)
{
	while (m->next && m->next->id < id)
		m->next = xsort_next(m->q);
	m->id = id;
	m->nla = 0;
	m->r = 0;
	while (m->nla < 2 && m->next && m->next->id == id) {
		m->la[m->nla++] = *m->next;
		m->next = xsort_next(m->q);
	}
	return m->nla > 0;
}

/* Consume the members that start no later than lim. */
static void
members_upto(struct members *m, double lim)
{
	for (;;) {
		struct mcall c;
		if (m->nla) {
			if (!(m->la[0].ts <= lim))
				return;
			c = m->la[0];
			m->la[0] = m->la[1];
			m->nla--;
		} else if (m->next && m->next->id == m->id && m->next->ts <= lim) {
			c = *m->next;
			m->next = xsort_next(m->q);
		} else
			return;
		m->last[m->r % 4] = c;
		m->r++;
	}
}

/*
 * match_timed_event (§4.2): the member of the kernel's group nearest its
 * start p: of the members started by p + 1e-3, the last four, nearest by
 * end; else the first two, nearest by start.  Kernels come by (id, p).
 */
static const struct mcall *
members_match(struct members *m, double p)
{
	const struct mcall *best;
	double bd, d;
	unsigned long long k, from;

	members_upto(m, p + 1e-3);
	if (m->r > 0) {
		from = m->r > 4 ? m->r - 4 : 0;
		best = &m->last[from % 4];
		bd = fabs((best->ts + best->dur) - p);
		for (k = from + 1; k < m->r; k++) {
			d = fabs((m->last[k % 4].ts + m->last[k % 4].dur) - p);
			if (d < bd) {
				bd = d;
				best = &m->last[k % 4];
			}
		}
		return best;
	}
	best = &m->la[0];
	if (m->nla > 1 && fabs(m->la[1].ts - p) < fabs(m->la[0].ts - p))
		best = &m->la[1];
	return best;
}

/* Each waiting kernel's call, by kernel index (struct mres).  Frees both sorts. */
static struct xsort *
match_calls(struct xsort *calls, struct xsort *waits)
{
	struct xsort *out = xsort_new(sizeof(struct mres), xsort_by_ull, NULL);
	struct members m;
	const struct mwait *w;
	int have = 0, in = 0;

	memset(&m, 0, sizeof m);
	m.q = calls;
	m.next = xsort_next(calls);
	while ((w = xsort_next(waits)) != NULL) {
		const struct mcall *c;
		struct mres x;
		if (!have || w->id != m.id) {
			in = members_open(&m, w->id);
			have = 1;
		}
		if (!in || !(c = members_match(&m, w->p)))
			continue;
		x.i = w->i;
		x.c = *c;
		xsort_add(out, &x);
	}
	xsort_free(calls);
	xsort_free(waits);
	return out;
}

/* ---- active frames (§4.3) ---- */

/* A query of the frames: where a kernel's op (slot 2i) or launch (2i + 1) was. */
typedef struct {
	uint32_t thread;
	double q;
	unsigned long long slot;
} query_t;

/* A query's answer. */
typedef struct {
	unsigned long long slot;
	uint32_t loc, stack;
} qres_t;

static int
cmp_query(const void *pa, const void *pb, void *ctx)
{
	const query_t *a = pa, *b = pb;
	int c;

	(void)ctx;
	if (a->thread != b->thread)
		return a->thread < b->thread ? -1 : 1;
	if ((c = cmp_dbl(a->q, b->q)) != 0)
		return c;
	return a->slot < b->slot ? -1 : a->slot > b->slot;
}

/*
 * Active-set order within a thread: ts ascending, end descending; equal
 * frames keep file order (the sort below is stable).
 */
static int
frame_before(const struct tframe *a, const struct tframe *b)
{
	if (a->ts != b->ts)
		return a->ts < b->ts;
	return a->ts + a->dur > b->ts + b->dur;
}

/*
 * Sort a trace's frames into (thread, active-set order), stably.  File
 * order is nearly that order already (the tracer writes each thread's
 * frames by start, with threads interleaved), so: a stable counting pass
 * groups the frames by thread, each thread's ascending runs are merged
 * pairwise until one is left (a natural merge sort: one pass over sorted
 * input), all on 4-byte indexes, and the frames are then moved into place
 * along the permutation's cycles.  Extra memory: three index arrays, not a
 * second frame array.
 */
static void
sort_frames(struct tframe *fr, size_t n)
{
	uint32_t *idx, *tmp, *cnt, maxt = 0, *run;
	size_t i, t, nt, nrun, caprun = 0;
	unsigned char *done;

	if (n < 2)
		return;
	for (i = 0; i < n; i++)
		if (fr[i].thread > maxt)
			maxt = fr[i].thread;
	nt = (size_t)maxt + 1;
	cnt = xcalloc(nt + 1, sizeof *cnt);
	for (i = 0; i < n; i++)
		cnt[fr[i].thread + 1]++;
	for (t = 0; t < nt; t++)
		cnt[t + 1] += cnt[t];
	idx = xmalloc(n * sizeof *idx);
	tmp = xmalloc(n * sizeof *tmp);
	for (i = 0; i < n; i++)
		idx[cnt[fr[i].thread]++] = (uint32_t)i;	/* cnt[t] ends as thread t's end */
	run = NULL;
	for (t = 0; t < nt; t++) {
		size_t lo = t ? cnt[t - 1] : 0, hi = cnt[t], r;
		uint32_t *src = idx, *dst = tmp;

		/* run starts, then the end */
		nrun = 0;
		for (i = lo; i < hi; i++)
			if (i == lo || frame_before(&fr[idx[i]], &fr[idx[i - 1]])) {
				xgrow(&run, &caprun, nrun + 2, sizeof *run);
				run[nrun++] = (uint32_t)i;
			}
		if (nrun <= 1)
			continue;
		run[nrun] = (uint32_t)hi;
		while (nrun > 1) {
			size_t out = 0;
			/* run r is [run[r], run[r + 1]); merge runs r and r + 1 (an odd last one is copied) */
			for (r = 0; r < nrun; r += 2) {
				size_t a = run[r], am = run[r + 1], b = am,
				    bm = r + 1 < nrun ? run[r + 2] : am, k = a;
				while (a < am && b < bm)
					dst[k++] = frame_before(&fr[src[b]], &fr[src[a]]) ? src[b++] : src[a++];
				while (a < am)
					dst[k++] = src[a++];
				while (b < bm)
					dst[k++] = src[b++];
				run[out++] = run[r];
			}
			run[out] = (uint32_t)hi;
			nrun = out;
			{
				uint32_t *x = src;
				src = dst;
				dst = x;
			}
		}
		if (src != idx)
			memcpy(idx + lo, src + lo, (hi - lo) * sizeof *idx);
	}
	/* position k takes frame idx[k]: follow each cycle once */
	done = xcalloc(n, 1);
	for (i = 0; i < n; i++) {
		size_t k = i;
		struct tframe f;
		if (done[i] || idx[i] == i)
			continue;
		f = fr[i];
		while (idx[k] != i) {
			fr[k] = fr[idx[k]];
			done[k] = 1;
			k = idx[k];
		}
		fr[k] = f;
		done[k] = 1;
	}
	free(done);
	free(run);
	free(tmp);
	free(idx);
	free(cnt);
}

/* choose_mapping_frame and build_stack_display on a non-empty active set. */
static void
resolve_active(const struct tframe *fr, const uint32_t *act, size_t n, uint32_t *loc,
    uint32_t *stack, sbuf *b)
{
	size_t i, best = 0, npos = 0, first, k;
	int bprio = km_frame_prio(fr[act[0]].name);

	for (i = 1; i < n; i++) {
		const struct tframe *f = &fr[act[i]], *c = &fr[act[best]];
		int prio = km_frame_prio(f->name);
		if (prio > bprio || (prio == bprio &&
		    (f->ts > c->ts || (f->ts == c->ts && -f->dur > -c->dur)))) {
			best = i;
			bprio = prio;
		}
	}
	*loc = km_frame_norm(fr[act[best]].name);

	sb_reset(b);
	for (i = 0; i < n; i++)
		if (km_frame_prio(fr[act[i]].name) > 0)
			npos++;
	if (npos == 0) {
		sb_adds(b, strtab_str(km_str, km_frame_norm(fr[act[n - 1]].name)));
	} else {
		first = npos > 4 ? npos - 4 : 0;
		for (i = 0, k = 0; i < n; i++) {
			if (km_frame_prio(fr[act[i]].name) <= 0)
				continue;
			if (k++ < first)
				continue;
			if (k - 1 > first)
				sb_adds(b, " -> ");
			sb_adds(b, strtab_str(km_str, km_frame_norm(fr[act[i]].name)));
		}
	}
	*stack = b->len ? km_intern(b->s, b->len) : NOSTR;
}

/*
 * Sweep every thread's frames once over its sorted query times: frames are
 * appended as their start passes, and dropped once they end more than
 * 1e-3 before the query (queries only grow, so they never come back).
 */
static struct xsort *
resolve_queries(struct trace *tr, struct xsort *qs)
{
	struct xsort *out = xsort_new(sizeof(qres_t), xsort_by_ull, NULL);
	uint32_t *act = NULL;
	size_t nact = 0, capact = 0, fi = 0, j, m;
	sbuf b = SBUF_INIT;
	uint32_t cur = NOSTR;
	double lastq = 0;
	uint32_t lastloc = NOSTR, laststack = NOSTR;
	int have_last = 0;
	const query_t *q;

	sort_frames(tr->fr, tr->nfr);
	while ((q = xsort_next(qs)) != NULL) {
		qres_t x;
		x.slot = q->slot;
		if (q->thread != cur) {
			cur = q->thread;
			nact = 0;
			have_last = 0;
			while (fi < tr->nfr && tr->fr[fi].thread < cur)
				fi++;
		}
		if (have_last && q->q == lastq) {
			x.loc = lastloc;
			x.stack = laststack;
			xsort_add(out, &x);
			continue;
		}
		while (fi < tr->nfr && tr->fr[fi].thread == cur && tr->fr[fi].ts <= q->q) {
			xgrow(&act, &capact, nact + 1, sizeof act[0]);
			act[nact++] = (uint32_t)fi++;
		}
		for (j = m = 0; j < nact; j++)
			if (tr->fr[act[j]].ts + tr->fr[act[j]].dur >= q->q - 1e-3)
				act[m++] = act[j];
		nact = m;
		if (nact == 0) {
			lastloc = laststack = NOSTR;
		} else
			resolve_active(tr->fr, act, nact, &lastloc, &laststack, &b);
		lastq = q->q;
		have_last = 1;
		x.loc = lastloc;
		x.stack = laststack;
		xsort_add(out, &x);
	}
	free(act);
	sb_free(&b);
	xsort_free(qs);
	return out;
}

/*
 * The same location and stack from a call's py_* members, which
 * trace-extract resolved from the frames by the rules above (its pyctx.c):
 * the location frame and the stack frames, to be normalized and joined.
 */
static void
resolve_context(const kmtrace_t *kt, const struct mcall *c, uint32_t *loc, uint32_t *stack,
    sbuf *b)
{
	uint32_t st[4];
	size_t n, i;

	*loc = *stack = NOSTR;
	if (c->py_loc == NOSTR)
		return;
	*loc = km_frame_norm(trace_py_name(kt->rd, kt->tr, c->py_loc));
	n = trace_py_names(kt->rd, kt->tr, c->py_stack, st, 4);
	sb_reset(b);
	for (i = 0; i < n; i++) {
		if (i)
			sb_adds(b, " -> ");
		sb_adds(b, strtab_str(km_str, km_frame_norm(st[i])));
	}
	*stack = b->len ? km_intern(b->s, b->len) : NOSTR;
}

/*
 * resolve_context, once per (location, stack) pair of the trace: the calls
 * of a CUDA-graph decode trace share a few hundred (issue 30).  memo maps
 * the pair to the answer, loc in the high half.
 */
static void
context_of(const kmtrace_t *kt, const struct mcall *c, uint32_t *loc, uint32_t *stack, sbuf *b,
    imap *memo)
{
	uint64_t *v;
	int isnew;

	if (c->py_loc == NOSTR) {
		*loc = *stack = NOSTR;
		return;
	}
	v = imap_put(memo, (uint64_t)c->py_loc << 32 | c->py_stack, &isnew);
	if (isnew) {
		resolve_context(kt, c, loc, stack, b);
		*v = (uint64_t)*loc << 32 | *stack;
	} else {
		*loc = (uint32_t)(*v >> 32);
		*stack = (uint32_t)*v;
	}
}

/* A kernel's two calls, as matched (has: bit 1 the op, bit 2 the launch). */
struct kcalls {
	unsigned long long i;
	int has;
	struct mcall op, ln;
};

/* The next match of a kernel index from a sort of struct mres, at or after i. */
static const struct mres *
res_at(struct xsort *x, const struct mres **cur, unsigned long long i)
{
	while (*cur && (*cur)->i < i)
		*cur = xsort_next(x);
	return *cur && (*cur)->i == i ? *cur : NULL;
}

/*
 * The ladder of §4.6 for one kernel, from its calls and their locations
 * and stacks (NOSTR: none found).  Its launch-name quirk (no frames at the
 * launch: the CPU-op cell names the launch, cudaLaunchKernel, even when a
 * CPU op matched) only under --compat reference (docs/deviations.md C14).
 */
static void
ladder(const struct kcalls *kx, uint32_t oloc, uint32_t ostack, uint32_t lloc, uint32_t lstack,
    uint32_t unresolved, struct kres *a)
{
	int op = kx->has & 1, ln = (kx->has & 2) != 0;

	memset(a, 0, sizeof *a);
	a->i = kx->i;
	if (ln)
		a->graph = strstr(strtab_str(km_str, kx->ln.name), "GraphLaunch") != NULL;
	if (op && oloc != NOSTR) {
		a->loc = oloc;
		a->stack = ostack;
		a->op = kx->op.name;
	} else if (ln && lloc != NOSTR) {
		a->loc = lloc;
		a->stack = lstack;
		a->op = op ? kx->op.name : kx->ln.name;
	} else if (ln) {
		a->loc = unresolved;
		a->stack = NOSTR;
		a->op = op && !compat_reference ? kx->op.name : kx->ln.name;
	} else {
		a->loc = unresolved;
		a->stack = NOSTR;
		a->op = op ? kx->op.name : NOSTR;
	}
	if (a->op != NOSTR && strtab_len(km_str, a->op) == 0)
		a->op = NOSTR;
}

struct xsort *
attribute_kernels(kmtrace_t *kt, const unsigned long long *need, size_t nneed)
{
	struct trace *tr = kt->tr;
	struct xsort *wop = xsort_new(sizeof(struct mwait), cmp_mwait, NULL);
	struct xsort *wln = xsort_new(sizeof(struct mwait), cmp_mwait, NULL);
	struct xsort *cop = xsort_new(sizeof(struct mcall), cmp_mcall, NULL);
	struct xsort *cln = xsort_new(sizeof(struct mcall), cmp_mcall, NULL);
	struct xsort *mop, *mln, *calls = NULL, *qs = NULL, *qr = NULL;
	struct xsort *out = xsort_new(sizeof(struct kres), NULL, NULL);
	struct tkcursor kc;
	struct tocursor oc;
	const struct tkernel *k;
	const struct tcall *c;
	const struct mres *po, *pl;
	const struct kcalls *kx;
	const qres_t *q = NULL;
	unsigned long long i, n, nk = 0;
	size_t ni = 0;
	uint32_t unresolved = km_intern("unresolved", 10);
	sbuf b = SBUF_INIT;
	imap memo = { 0 };

	/* the kernels to attribute, waiting for their CPU op and launch call */
	trace_kernel_rewind(tr, &kc);
	for (i = 0; (k = trace_kernel_next(&kc)) != NULL; i++) {
		nk = i + 1;
		if (need) {
			if (ni == nneed || need[ni] != i)
				continue;
			ni++;
		}
		if (k->ext_src != EXT_NONE) {
			struct mwait w = { k->ext, k->ts, i };
			xsort_add(wop, &w);
		}
		if (k->has_corr) {
			struct mwait w = { k->corr, k->ts, i };
			xsort_add(wln, &w);
		}
	}
	/* the calls by id, each id's by start, stable (build_index) */
	if (xsort_count(wop)) {
		trace_op_rewind(tr, &oc);
		for (n = 0; (c = trace_op_next(&oc)) != NULL; n++)
			if (c->ext_src != EXT_NONE) {
				struct mcall x = { c->ext, c->ts, n, c->dur, c->name, c->thread,
				    c->py_loc, c->py_stack };
				xsort_add(cop, &x);
			}
	}
	if (xsort_count(wln) && tr->lq) {
		xsort_rewind(tr->lq);
		for (n = 0; (c = xsort_next(tr->lq)) != NULL; n++)
			if (c->has_corr) {
				struct mcall x = { c->corr, c->ts, n, c->dur, c->name, c->thread,
				    c->py_loc, c->py_stack };
				xsort_add(cln, &x);
			}
	}
	mop = match_calls(cop, wop);
	mln = match_calls(cln, wln);

	/*
	 * Each kernel's two calls, by number; with the calls' Python contexts
	 * (trace-extract resolved each call's frames) the ladder at once, else
	 * the calls wait while the frames' queries are swept.
	 */
	if (!tr->py_context) {
		calls = xsort_new(sizeof(struct kcalls), NULL, NULL);
		qs = xsort_new(sizeof(query_t), cmp_query, NULL);
	}
	po = xsort_next(mop);
	pl = xsort_next(mln);
	for (ni = 0, i = 0; need ? ni < nneed : i < nk; ni++, i++) {
		struct kcalls x;
		const struct mres *o, *l;
		if (need)
			i = need[ni];
		memset(&x, 0, sizeof x);
		x.i = i;
		if ((o = res_at(mop, &po, i)) != NULL) {
			x.has |= 1;
			x.op = o->c;
		}
		if ((l = res_at(mln, &pl, i)) != NULL) {
			x.has |= 2;
			x.ln = l->c;
		}
		if (tr->py_context) {
			struct kres a;
			uint32_t oloc = NOSTR, ostack = NOSTR, lloc = NOSTR, lstack = NOSTR;
			if (x.has & 1)
				context_of(kt, &x.op, &oloc, &ostack, &b, &memo);
			if (x.has & 2)
				context_of(kt, &x.ln, &lloc, &lstack, &b, &memo);
			ladder(&x, oloc, ostack, lloc, lstack, unresolved, &a);
			xsort_add(out, &a);
			continue;
		}
		xsort_add(calls, &x);
		if (x.has & 1) {
			double half = x.op.dur * 0.5;
			query_t y = { x.op.thread, x.op.ts + (1.0 < half ? 1.0 : half), 2 * i };
			xsort_add(qs, &y);
		}
		if (x.has & 2) {
			query_t y = { x.ln.thread, x.ln.ts, 2 * i + 1 };
			xsort_add(qs, &y);
		}
	}
	xsort_free(mop);
	xsort_free(mln);
	if (qs) {
		qr = resolve_queries(tr, qs);
		q = xsort_next(qr);
	}
	while (calls && (kx = xsort_next(calls)) != NULL) {
		struct kres a;
		uint32_t oloc = NOSTR, ostack = NOSTR, lloc = NOSTR, lstack = NOSTR;
		if ((kx->has & 1) && q && q->slot == 2 * kx->i) {
			oloc = q->loc;
			ostack = q->stack;
			q = xsort_next(qr);
		}
		if ((kx->has & 2) && q && q->slot == 2 * kx->i + 1) {
			lloc = q->loc;
			lstack = q->stack;
			q = xsort_next(qr);
		}
		ladder(kx, oloc, ostack, lloc, lstack, unresolved, &a);
		xsort_add(out, &a);
	}
	xsort_free(calls);
	xsort_free(qr);
	imap_free(&memo);
	sb_free(&b);
	return out;
}
