/* Candidates, dependency signal, priority and the row list (overlap.md §8-§10). */
#include <stdlib.h>
#include <string.h>

#include "num.h"
#include "opt.h"
#include "overlap.h"
#include "xalloc.h"

#define TOP_N 5
#define MIN_RENDER_SHARE_PCT 1.0

typedef struct {
	const agg_t *a;
	double k1, k2;
	size_t pos;
} cand_t;

/* Descending on (k1, k2), original order on ties: Python's sorted(reverse=True). */
static int
cmp_cand(const void *pa, const void *pb)
{
	const cand_t *a = pa, *b = pb;

	if (a->k1 != b->k1)
		return a->k1 > b->k1 ? -1 : 1;
	if (a->k2 != b->k2)
		return a->k2 > b->k2 ? -1 : 1;
	return (a->pos > b->pos) - (a->pos < b->pos);
}

static double
category_weight(int cat)
{
	switch (cat) {
	case OC_COMMUNICATION:
		return 1.3;
	case OC_MEMORY:
		return 1.15;
	case OC_COMPUTE:
		return 0.35;
	case OC_OTHER:
		return 0.8;
	default:
		return 1.0;
	}
}

/*
 * top_overlap_opportunities (§8.1): non-compute candidates first, each part
 * sorted by weighted exclusive time, then the first 5 overall.
 */
static size_t
headroom_candidates(const agg_t *agg, size_t nagg, const agg_t **out)
{
	cand_t *c = xmalloc((nagg ? nagg : 1) * sizeof *c);
	size_t np = 0, nf = 0, i, n = 0;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		size_t start = pass == 0 ? 0 : np, cnt = 0;
		for (i = 0; i < nagg; i++) {
			const agg_t *a = &agg[i];
			if (!(a->total_us >= 5.0 && agg_exclusive_ratio(a) >= 0.45))
				continue;
			if ((a->cat == OC_COMPUTE) != (pass == 1))
				continue;
			c[start + cnt] = (cand_t){ a, a->exclusive_us * category_weight(a->cat), 0, i };
			cnt++;
		}
		xqsort(c + start, cnt, sizeof *c, cmp_cand);
		if (pass == 0)
			np = cnt;
		else
			nf = cnt;
	}
	for (i = 0; i < np + nf && n < TOP_N; i++)
		out[n++] = c[i].a;
	free(c);
	return n;
}

/* top_hidden_low_roi (§8.2). */
static size_t
low_roi_candidates(const agg_t *agg, size_t nagg, const agg_t **out)
{
	cand_t *c = xmalloc((nagg ? nagg : 1) * sizeof *c);
	size_t nc = 0, i, n = 0;

	for (i = 0; i < nagg; i++) {
		const agg_t *a = &agg[i];
		double h = a->hidden_us, hr = agg_hidden_ratio(a), den;
		if (a->cat != OC_ELEMENTWISE && a->cat != OC_MEMORY)
			continue;
		if (!(a->total_us >= 5.0 && hr >= 0.65))
			continue;
		den = 1.0 > h ? 1.0 : h;	/* max(hidden_us, 1.0) */
		c[nc++] = (cand_t){ a, h * (1.0 + a->hbc_us / den), hr, i };
	}
	xqsort(c, nc, sizeof *c, cmp_cand);
	for (i = 0; i < nc && n < TOP_N; i++)
		out[n++] = c[i].a;
	free(c);
	return n;
}

/* Neighbour index (§9.1): per stream, ordered by (ts, end, idx). */
typedef struct {
	long *prev, *next;
} nbr_t;

/* Order of event indexes by (stream, ts, end, list order); ctx: the events. */
static int
cmp_nbr(const void *pa, const void *pb, void *ctx)
{
	const oev_t *ev = ctx;
	const oev_t *a = &ev[*(const size_t *)pa], *b = &ev[*(const size_t *)pb];
	int c;

	if (a->stream != b->stream)
		return a->stream < b->stream ? -1 : 1;
	if ((c = num_cmp(a->ts, b->ts)) || (c = num_cmp(a->end, b->end)))
		return c;
	return (a->idx > b->idx) - (a->idx < b->idx);
}

static void
nbr_build(nbr_t *nb, const oev_t *ev, size_t n)
{
	size_t *o = xmalloc((n ? n : 1) * sizeof *o), i;

	nb->prev = xmalloc((n ? n : 1) * sizeof *nb->prev);
	nb->next = xmalloc((n ? n : 1) * sizeof *nb->next);
	for (i = 0; i < n; i++)
		o[i] = i;
	xqsort_r(o, n, sizeof *o, cmp_nbr, (void *)ev);
	for (i = 0; i < n; i++) {
		nb->prev[o[i]] = i > 0 && ev[o[i - 1]].stream == ev[o[i]].stream ? (long)o[i - 1] : -1;
		nb->next[o[i]] = i + 1 < n && ev[o[i + 1]].stream == ev[o[i]].stream ? (long)o[i + 1] : -1;
	}
	free(o);
}

/* is_neighbor_dependency_like (§9.4). */
static int
dependency_like(int cur, int nb)
{
	if (cur == OC_COMMUNICATION)
		return nb != OC_COMMUNICATION;
	if (cur == OC_ELEMENTWISE || cur == OC_MEMORY)
		return nb != OC_OTHER;
	return 0;
}

/* best_scope / best_launch_op of the looked-up source, or the placeholders. */
static void
source_of(srcmap_t *sm, uint32_t name, const char **scope, const char **launch, uint32_t *scope_id)
{
	const srcstat_t *st = srcmap_lookup(sm, S(name), SLEN(name));
	uint32_t bs = st ? counter_best(&st->scope) : NOSTR;
	uint32_t bl = st ? counter_best(&st->launch) : NOSTR;

	*scope = bs != NOSTR && SLEN(bs) ? S(bs) : "unmapped";
	*launch = bl != NOSTR && SLEN(bl) ? S(bl) : "n/a";
	if (scope_id)
		*scope_id = bs != NOSTR && SLEN(bs) ? bs : NOSTR;
}

/* classify_dependency_signal (§9.2-§9.5) for one aggregate. */
static const char *
dependency_signal(const oev_t *ev, const nbr_t *nb, const agg_t *a, srcmap_t *sm)
{
	const oev_t *cur, *side[2];
	const char *cs, *cl;
	double T, m, gap[2];
	int risk[2], unclear[2], k;

	if (a->rep < 0)
		return "adjacency unclear";
	cur = &ev[a->rep];
	side[0] = nb->prev[a->rep] >= 0 ? &ev[nb->prev[a->rep]] : NULL;
	side[1] = nb->next[a->rep] >= 0 ? &ev[nb->next[a->rep]] : NULL;
	source_of(sm, a->name, &cs, &cl, NULL);
	m = cur->dur * 0.15;
	m = m < 20.0 ? m : 20.0;	/* min(20.0, dur * 0.15) */
	T = m > 2.0 ? m : 2.0;		/* max(2.0, ...) */
	if (side[0])
		gap[0] = cur->ts - side[0]->end;
	if (side[1])
		gap[1] = side[1]->ts - cur->end;
	for (k = 0; k < 2; k++) {
		const char *ns, *nl;
		int tight;

		risk[k] = unclear[k] = 0;
		if (!side[k])
			continue;
		if (0.0 > gap[k])
			gap[k] = 0.0;
		tight = gap[k] <= T;
		if (!tight)
			continue;
		source_of(sm, side[k]->canon, &ns, &nl, NULL);
		risk[k] = same_scope_family(cs, ns) ||
		    (strcmp(cl, "n/a") != 0 && strcmp(cl, nl) == 0) ||
		    dependency_like(cur->cat, side[k]->cat);
		unclear[k] = !risk[k] &&
		    (strcmp(cs, "unmapped") == 0 || strcmp(ns, "unmapped") == 0);
	}
	if (risk[0] && risk[1])
		return "both-side serial risk";
	if (risk[0])
		return "prev-side serial risk";
	if (risk[1])
		return "next-side serial risk";
	if (unclear[0] || unclear[1])
		return "adjacency unclear";
	return "serial risk low";
}

/* dependency_risk_label (§9.6). */
static const char *
risk_label(const char *sig)
{
	if (strcmp(sig, "serial risk low") == 0)
		return "low";
	if (strcmp(sig, "adjacency unclear") == 0)
		return "unclear";
	if (strstr(sig, "serial risk"))
		return "high";
	return sig;
}

static void
build_row(orow_t *r, const oev_t *ev, const nbr_t *nb, const agg_t *a, double busy,
    srcmap_t *sm, int headroom)
{
	const char *dummy;

	r->kernel = a->name;
	r->cat = a->cat;
	r->total_us = a->total_us;
	r->share_pct = busy > 0 ? (a->total_us / busy) * 100.0 : 0.0;
	r->exclusive_ratio = agg_exclusive_ratio(a);
	r->hidden_ratio = agg_hidden_ratio(a);
	r->verdict = headroom ? "headroom" : "low-roi-hidden";
	source_of(sm, a->name, &dummy, &dummy, &r->scope);
	r->signal = dependency_signal(ev, nb, a, sm);
	r->risk = risk_label(r->signal);
	/* build_priority_and_recommendation (§10.2) */
	if (r->share_pct < MIN_RENDER_SHARE_PCT) {
		r->priority = "P5";
		r->recommendation = "skip";
	} else if (headroom) {
		if (strcmp(r->risk, "low") == 0) {
			r->priority = "P1";
			r->recommendation = a->cat == OC_COMMUNICATION ? "try overlap" : "try fusion";
		} else {
			r->priority = "P2";
			r->recommendation = "check deps";
		}
	} else {
		r->priority = "P4";
		r->recommendation = "skip";
	}
}

orow_t *
ov_rows(const oev_t *ev, size_t n, double busy, const agg_t *agg, size_t nagg,
    srcmap_t *sm, long long limit, size_t *nrows)
{
	const agg_t *hc[TOP_N], *lc[TOP_N];
	size_t nh = headroom_candidates(agg, nagg, hc);
	size_t nl = low_roi_candidates(agg, nagg, lc);
	orow_t *rows = xmalloc(2 * TOP_N * sizeof *rows);
	size_t nr = 0, i, kept = 0;
	imap seen = { 0 };
	nbr_t nb;

	nbr_build(&nb, ev, n);
	for (i = 0; i < nh; i++) {
		build_row(&rows[nr], ev, &nb, hc[i], busy, sm, 1);
		/* a pruned headroom row leaves its name free for a low-ROI row */
		if (strcmp(rows[nr].priority, "P5") == 0)
			continue;
		imap_insert(&seen, hc[i]->name, 0, NULL);
		nr++;
	}
	for (i = 0; i < nl; i++) {
		int isnew;
		/* `seen` holds names only: a same-named aggregate of another category counts */
		imap_insert(&seen, lc[i]->name, 0, &isnew);
		if (!isnew)
			continue;
		build_row(&rows[nr++], ev, &nb, lc[i], busy, sm, 0);
	}
	/*
	 * The reference limits before the share filter, so rows under the 1%
	 * bar use up slots and --overlap-table-limit 3 can show one row
	 * (overlap.md checklist item 5).  Corrected: the limit counts rows
	 * that are shown.
	 */
	if (compat_reference && limit > 0 && (unsigned long long)limit < nr)
		nr = (size_t)limit;
	for (i = 0; i < nr; i++)
		if (rows[i].share_pct >= MIN_RENDER_SHARE_PCT &&
		    (compat_reference || limit <= 0 || kept < (unsigned long long)limit))
			rows[kept++] = rows[i];
	free(nb.prev);
	free(nb.next);
	imap_free(&seen);
	*nrows = kept;
	return rows;
}
