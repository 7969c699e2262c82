/*
 * From each trace, what rank-skew keeps: per rank and stage, the collective
 * kernels (48 bytes each: with their launch call and the GPU busy and idle
 * time before them), the time of every other kernel name, and the
 * busy, kernel and communication sums.  The trace itself is dropped after
 * this, so memory grows with collectives and names, not with traces.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "sbuf.h"
#include "skew.h"
#include "text.h"
#include "xalloc.h"

void
skew_free(struct skew *s)
{
	size_t i;

	for (i = 0; i < s->nrs; i++) {
		free(s->rs[i].c);
		free(s->rs[i].kt);
		imap_free(&s->rs[i].kix);
	}
	free(s->rs);
	free(s->expect);
	imap_free(&s->canon);
	s->rs = NULL;
	s->expect = NULL;
	s->nrs = s->caprs = s->nexpect = s->capexpect = 0;
}

void
skew_expect(struct skew *s, long long r)
{
	/* repeats are dropped where the ranks are sorted (skew_report): a search here made a million quadratic */
	xgrow(&s->expect, &s->capexpect, s->nexpect + 1, sizeof *s->expect);
	s->expect[s->nexpect++] = r;
}

/* The rankstage of (rank, stage), made when new.  Few exist: a linear search. */
static size_t
rankstage_of(struct skew *s, long long rank, uint32_t stage)
{
	size_t i;

	for (i = 0; i < s->nrs; i++)
		if (s->rs[i].rank == rank && s->rs[i].stage == stage)
			return i;
	xgrow(&s->rs, &s->caprs, s->nrs + 1, sizeof *s->rs);
	memset(&s->rs[s->nrs], 0, sizeof *s->rs);
	s->rs[s->nrs].rank = rank;
	s->rs[s->nrs].stage = stage;
	s->rs[s->nrs].last_trace = -1;
	return s->nrs++;
}

/* Canonical name id and collective kind of a raw name id, computed once per name. */
static uint32_t
canon_of(struct skew *s, uint32_t raw, int *kind)
{
	uint64_t *v = imap_get(&s->canon, raw);
	sbuf c = SBUF_INIT;
	const char *p;
	size_t n;
	int k;
	uint32_t id;

	if (v) {
		*kind = (int)(*v >> 32);
		return (uint32_t)(*v & 0xffffffffu) - 1;
	}
	p = strtab_str(s->str, raw);
	n = strtab_len(s->str, raw);
	canonicalize_name(p, n, &c);
	id = strtab_intern(s->str, sb_str(&c), c.len);
	sb_free(&c);
	k = coll_kind(p, n);
	*imap_put(&s->canon, raw, NULL) = (uint64_t)k << 32 | (uint64_t)(id + 1);
	*kind = k;
	return id;
}

static void
add_ktime(struct rankstage *rs, uint32_t name, double dur)
{
	int isnew;
	uint64_t *v = imap_insert(&rs->kix, name, rs->nkt, &isnew);

	if (isnew) {
		xgrow(&rs->kt, &rs->capkt, rs->nkt + 1, sizeof *rs->kt);
		rs->kt[rs->nkt++] = (struct ktime){ name, 0, 0.0 };
	}
	rs->kt[*v].launches++;
	rs->kt[*v].us += dur;
}

/* A kernel interval, for the busy union. */
struct iv {
	size_t rsi;
	double ts, end;
};

static int
iv_cmp(const void *a, const void *b)
{
	const struct iv *x = a, *y = b;

	if (x->rsi != y->rsi)
		return x->rsi < y->rsi ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return (x->end > y->end) - (x->end < y->end);
}

/* The busy union of one rankstage's intervals v[0..n) (sorted), merged into m; returns its count. */
static size_t
merge(const struct iv *v, size_t n, struct iv *m)
{
	size_t i = 0, j, nm = 0;

	while (i < n) {
		m[nm] = v[i];
		for (j = i + 1; j < n && v[j].ts <= m[nm].end; j++)
			if (v[j].end > m[nm].end)
				m[nm].end = v[j].end;
		nm++;
		i = j;
	}
	return nm;
}

/* The busy time of merged intervals m[0..n) inside [lo, hi). */
static double
busy_in(const struct iv *m, size_t n, double lo, double hi)
{
	double b = 0;
	size_t i;

	for (i = 0; i < n && m[i].ts < hi; i++) {
		double a = m[i].ts > lo ? m[i].ts : lo, z = m[i].end < hi ? m[i].end : hi;
		if (z > a)
			b += z - a;
	}
	return b;
}

static int
coll_ts_cmp(const void *a, const void *b)
{
	const struct coll *x = a, *y = b;

	return (x->ts > y->ts) - (x->ts < y->ts);
}

/*
 * Add the union of each rankstage's intervals to its busy time, and give
 * the collectives this trace added to it (from first[rsi] on) the busy and
 * idle time of the window before each: from the previous one's end (the
 * first: from the rankstage's first interval in this trace) to its start.
 * A linear scan per collective: the windows are short and few.
 */
static void
add_busy(struct skew *s, struct iv *v, size_t n, const size_t *first, size_t nfirst)
{
	size_t i = 0, j, k, nm;
	struct iv *m = xmalloc((n ? n : 1) * sizeof *m);

	xqsort(v, n, sizeof *v, iv_cmp);
	while (i < n) {
		struct rankstage *rs = &s->rs[v[i].rsi];
		size_t from = v[i].rsi < nfirst ? first[v[i].rsi] : 0, lo = 0;
		double prev;
		for (j = i + 1; j < n && v[j].rsi == v[i].rsi; j++)
			;
		nm = merge(v + i, j - i, m);
		for (k = 0; k < nm; k++)
			rs->busy_us += m[k].end - m[k].ts;
		if (from < rs->nc)
			xqsort(rs->c + from, rs->nc - from, sizeof *rs->c, coll_ts_cmp);
		prev = v[i].ts;
		for (k = from; k < rs->nc; k++) {
			struct coll *c = &rs->c[k];
			double w = c->ts > prev ? c->ts - prev : 0;
			while (lo < nm && m[lo].end <= prev)
				lo++;
			c->busy_before = w > 0 ? busy_in(m + lo, nm - lo, prev, c->ts) : 0;
			c->idle_before = w - c->busy_before;
			if (c->ts + c->dur > prev)
				prev = c->ts + c->dur;
		}
		i = j;
	}
	free(m);
}

void
skew_add_trace(struct skew *s, struct trace_reader *r, const struct trace *tr, long long seq)
{
	struct iv *iv;
	size_t i, niv = 0, rsi, *first = NULL, nfirst = 0;
	imap ln = { 0 };	/* correlation -> launch index + 1 */
	int any_sel = 0, kind;
	uint32_t all = strtab_intern(s->str, "all", 3), stage, name;
	/* consecutive kernels mostly share a stage: remember the last lookup */
	uint32_t last_stage = NOSTR;
	size_t last_rsi = 0;
	double shift;

	(void)r;
	if (!tr->has_rank) {
		warn_msg("trace %lld ('%s') names no rank: left out", tr->t,
		    strtab_str(s->str, tr->path));
		s->unranked++;
		return;
	}
	for (i = 0; i < tr->nk && !any_sel; i++)
		any_sel = tr->k[i].sel;
	if (!any_sel && tr->nk) {
		warn_msg("trace %lld ('%s'): no kernel is marked sel (not staged by "
		    "trace-stage?); all of them are used", tr->t, strtab_str(s->str, tr->path));
		s->unselected++;
	}
	if (!s->has_base) {
		s->base_ref = tr->time_base;
		s->has_base = 1;
	}
	shift = (double)(tr->time_base - s->base_ref);
	for (i = 0; i < tr->nln; i++)
		if (tr->ln[i].has_corr)
			*imap_put(&ln, (uint64_t)tr->ln[i].corr, NULL) = i + 1;
	/* where each rankstage's collectives from this trace begin */
	first = xmalloc((s->nrs + 1) * sizeof *first);
	for (nfirst = 0; nfirst < s->nrs; nfirst++)
		first[nfirst] = s->rs[nfirst].nc;
	iv = xmalloc((tr->nk ? tr->nk : 1) * sizeof *iv);
	for (i = 0; i < tr->nk; i++) {
		const struct tkernel *k = &tr->k[i];
		struct rankstage *rs;
		if (any_sel && !k->sel)
			continue;
		stage = k->stage != NOSTR ? k->stage : all;
		if (stage != last_stage) {
			last_rsi = rankstage_of(s, tr->rank, stage);
			if (last_rsi >= nfirst) {	/* new: all its collectives are this trace's */
				first = xrealloc(first, (last_rsi + 1) * sizeof *first);
				while (nfirst <= last_rsi)
					first[nfirst++] = 0;
			}
			last_stage = stage;
			rs = &s->rs[last_rsi];
			if (rs->last_trace != seq) {
				rs->ntraces++;
				rs->last_trace = seq;
			}
		}
		rsi = last_rsi;
		rs = &s->rs[rsi];
		name = canon_of(s, k->name, &kind);
		rs->kernel_us += k->dur;
		if (kind != CK_NONE) {
			const uint64_t *l = k->has_corr ? imap_get(&ln, (uint64_t)k->corr) : NULL;
			xgrow(&rs->c, &rs->capc, rs->nc + 1, sizeof *rs->c);
			rs->c[rs->nc++] = (struct coll){ k->ts + shift, k->dur,
			    l ? tr->ln[*l - 1].ts + shift : NAN, 0, 0, name, (unsigned char)kind };
			rs->comm_us += k->dur;
		} else
			add_ktime(rs, name, k->dur);
		iv[niv++] = (struct iv){ rsi, k->ts + shift, k->ts + shift + k->dur };
	}
	add_busy(s, iv, niv, first, nfirst);
	free(iv);
	free(first);
	imap_free(&ln);
}
