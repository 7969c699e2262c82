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

typedef struct {
	long long id;
	double ts;
	uint32_t i;		/* index into the call array: file order */
} tkey;

static int
cmp_dbl(double a, double b)
{
	return a < b ? -1 : a > b ? 1 : 0;
}

static int
cmp_tkey(const void *pa, const void *pb)
{
	const tkey *a = pa, *b = pb;
	int c;

	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	if ((c = cmp_dbl(a->ts, b->ts)) != 0)
		return c;
	return a->i < b->i ? -1 : a->i > b->i;
}

/*
 * Group the calls by id (a CPU op's External id, own or through the corr
 * map; a launch's correlation), each group by ts, stable; calls without an
 * id are left out.
 */
static tkey *
build_index(const struct tcall *ev, size_t n, int by_corr, size_t *out_n)
{
	tkey *k = xmalloc((n ? n : 1) * sizeof *k);
	size_t i, m = 0;

	for (i = 0; i < n; i++) {
		if (by_corr ? !ev[i].has_corr : ev[i].ext_src == EXT_NONE)
			continue;
		k[m].id = by_corr ? ev[i].corr : ev[i].ext;
		k[m].ts = ev[i].ts;
		k[m].i = (uint32_t)i;
		m++;
	}
	xqsort(k, m, sizeof *k, cmp_tkey);
	*out_n = m;
	return k;
}

/* match_timed_event: the member of group `id` nearest the probe p, or NOSTR. */
static uint32_t
match_timed(const tkey *k, size_t n, const struct tcall *ev, long long id, double p)
{
	size_t lo = 0, hi = n, g0, g1, r, i, best;
	double lim = p + 1e-3, d, bd;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	g0 = lo;
	hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k[mid].id <= id)
			lo = mid + 1;
		else
			hi = mid;
	}
	g1 = lo;
	if (g0 == g1)
		return NOSTR;
	/* r: members starting no later than p + 1e-3 */
	lo = g0;
	hi = g1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k[mid].ts <= lim)
			lo = mid + 1;
		else
			hi = mid;
	}
	r = lo - g0;
	if (r > 0) {
		i = r > 4 ? g0 + r - 4 : g0;
		best = i;
		bd = fabs((ev[k[i].i].ts + ev[k[i].i].dur) - p);
		for (i++; i < g0 + r; i++) {
			d = fabs((ev[k[i].i].ts + ev[k[i].i].dur) - p);
			if (d < bd) {
				bd = d;
				best = i;
			}
		}
	} else {
		best = g0;
		bd = fabs(ev[k[g0].i].ts - p);
		if (g0 + 1 < g1 && fabs(ev[k[g0 + 1].i].ts - p) < bd)
			best = g0 + 1;
	}
	return k[best].i;
}

/* ---- active frames (§4.3) ---- */

typedef struct {
	uint32_t thread;
	double q;
	uint32_t slot;		/* index into the per-query result arrays */
} query_t;

static int
cmp_query(const void *pa, const void *pb)
{
	const query_t *a = pa, *b = pb;
	int c;

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
static void
resolve_queries(struct trace *tr, query_t *qs, size_t nq, uint32_t *rloc, uint32_t *rstack)
{
	uint32_t *act = NULL;
	size_t nact = 0, capact = 0, fi = 0, qi, j, m;
	sbuf b = SBUF_INIT;
	uint32_t cur = NOSTR;
	double lastq = 0;
	uint32_t lastloc = NOSTR, laststack = NOSTR;
	int have_last = 0;

	sort_frames(tr->fr, tr->nfr);
	xqsort(qs, nq, sizeof qs[0], cmp_query);
	for (qi = 0; qi < nq; qi++) {
		const query_t *q = &qs[qi];
		if (q->thread != cur) {
			cur = q->thread;
			nact = 0;
			have_last = 0;
			while (fi < tr->nfr && tr->fr[fi].thread < cur)
				fi++;
		}
		if (have_last && q->q == lastq) {
			rloc[q->slot] = lastloc;
			rstack[q->slot] = laststack;
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
		rloc[q->slot] = lastloc;
		rstack[q->slot] = laststack;
	}
	free(act);
	sb_free(&b);
}

/*
 * The same location and stack from a call's py_* members, which
 * trace-extract resolved from the frames by the rules above (its pyctx.c):
 * the location frame and the stack frames, to be normalized and joined.
 */
static void
resolve_context(const kmtrace_t *kt, const struct tcall *c, uint32_t *loc, uint32_t *stack,
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
context_of(const kmtrace_t *kt, const struct tcall *c, uint32_t *loc, uint32_t *stack, sbuf *b,
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

void
attribute_kernels(kmtrace_t *kt)
{
	struct trace *tr = kt->tr;
	tkey *opk, *lnk;
	size_t nopk, nlnk, i, nq = 0;
	uint32_t *opm, *lnm, *rloc, *rstack;
	query_t *qs;
	uint32_t unresolved = km_intern("unresolved", 10);

	opk = build_index(tr->op, tr->nop, 0, &nopk);
	lnk = build_index(tr->ln, tr->nln, 1, &nlnk);
	opm = xmalloc((tr->nk ? tr->nk : 1) * sizeof *opm);
	lnm = xmalloc((tr->nk ? tr->nk : 1) * sizeof *lnm);
	qs = xmalloc((2 * tr->nk + 1) * sizeof *qs);
	for (i = 0; i < tr->nk; i++) {
		const struct tkernel *k = &tr->k[i];
		opm[i] = lnm[i] = NOSTR;
		if (!kt->ka[i].need)
			continue;
		if (k->ext_src != EXT_NONE)
			opm[i] = match_timed(opk, nopk, tr->op, k->ext, k->ts);
		if (k->has_corr)
			lnm[i] = match_timed(lnk, nlnk, tr->ln, k->corr, k->ts);
		if (opm[i] != NOSTR) {
			const struct tcall *op = &tr->op[opm[i]];
			double half = op->dur * 0.5;
			qs[nq].thread = op->thread;
			qs[nq].q = op->ts + (1.0 < half ? 1.0 : half);
			qs[nq].slot = (uint32_t)(2 * i);
			nq++;
		}
		if (lnm[i] != NOSTR) {
			const char *ln = strtab_str(km_str, tr->ln[lnm[i]].name);
			kt->ka[i].graph = strstr(ln, "GraphLaunch") != NULL;
			qs[nq].thread = tr->ln[lnm[i]].thread;
			qs[nq].q = tr->ln[lnm[i]].ts;
			qs[nq].slot = (uint32_t)(2 * i + 1);
			nq++;
		}
	}
	rloc = xmalloc((2 * tr->nk + 1) * sizeof *rloc);
	rstack = xmalloc((2 * tr->nk + 1) * sizeof *rstack);
	if (tr->py_context) {
		/* trace-extract resolved each call's frames: no frames to sweep */
		sbuf b = SBUF_INIT;
		imap memo = { 0 };
		for (i = 0; i < tr->nk; i++) {
			if (!kt->ka[i].need)
				continue;
			if (opm[i] != NOSTR)
				context_of(kt, &tr->op[opm[i]], &rloc[2 * i], &rstack[2 * i], &b, &memo);
			if (lnm[i] != NOSTR)
				context_of(kt, &tr->ln[lnm[i]], &rloc[2 * i + 1], &rstack[2 * i + 1],
				    &b, &memo);
		}
		imap_free(&memo);
		sb_free(&b);
	} else
		resolve_queries(tr, qs, nq, rloc, rstack);

	/*
	 * The ladder of §4.6.  Its launch-name quirk (no frames at the launch:
	 * the CPU-op cell names the launch, cudaLaunchKernel, even when a CPU
	 * op matched) only under --compat reference (docs/deviations.md C14).
	 */
	for (i = 0; i < tr->nk; i++) {
		kattr_t *a = &kt->ka[i];
		uint32_t op = opm[i], ln = lnm[i];
		if (!a->need)
			continue;
		if (op != NOSTR && rloc[2 * i] != NOSTR) {
			a->loc = rloc[2 * i];
			a->stack = rstack[2 * i];
			a->op = tr->op[op].name;
		} else if (ln != NOSTR && rloc[2 * i + 1] != NOSTR) {
			a->loc = rloc[2 * i + 1];
			a->stack = rstack[2 * i + 1];
			a->op = op != NOSTR ? tr->op[op].name : tr->ln[ln].name;
		} else if (ln != NOSTR) {
			a->loc = unresolved;
			a->stack = NOSTR;
			a->op = op != NOSTR && !compat_reference ? tr->op[op].name : tr->ln[ln].name;
		} else {
			a->loc = unresolved;
			a->stack = NOSTR;
			a->op = op != NOSTR ? tr->op[op].name : NOSTR;
		}
		if (a->op != NOSTR && strtab_len(km_str, a->op) == 0)
			a->op = NOSTR;
	}
	free(opk);
	free(lnk);
	free(opm);
	free(lnm);
	free(qs);
	free(rloc);
	free(rstack);
}
