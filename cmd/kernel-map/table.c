/*
 * The kernel table of kernel-map: per-trace stage groups, the mapping
 * map (kernel-table.md §5.5), formal payloads and rows (§5.6-§5.9), and
 * the site and kernel_row records that carry them.
 */
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "km.h"
#include "num.h"
#include "opt.h"
#include "payload.h"
#include "rec.h"
#include "rules.h"
#include "sbuf.h"
#include "xalloc.h"
#include "xsort.h"

/*
 * One row of a (trace, stage) of the kernel table, waiting for the final
 * mapping map: the name's launches and their durations' total and
 * statistics (issue 31: mean, min, max, p50, p90 per launch; 40 bytes a
 * row beside the total).
 */
typedef struct {
	uint32_t canon;
	const char *category;
	double total;
	long long count;
	double min, max, p50, p90;
} agg_t;

typedef struct {
	long long t;
	uint32_t stage;
	double stage_total;
	agg_t *rows;		/* sorted by total descending, stable */
	size_t nrows;
	payload_t local;	/* §5.6, the last-resort lookup */
} pending_t;

/* A stage of the mapping map while it is being built (§5.5). */
typedef struct {
	uint32_t stage;
	sitestats sites;
	catmap cats;
} mapstage_t;

long long km_limit;
int km_formal_with_mapping;
kernel_map_t km_map;

static mapstage_t *mstages;
static size_t nmstages, capmstages;
static sitestats mglobal;
static catmap mglobal_cats;
/*
 * After the first (trace, stage) merge, the global statistics equal that
 * stage's, so until a second merge comes they are only its index here
 * (-1: none): one copy fewer of every kernel's sites in the common case
 * of one trace with one stage (issue 21).
 */
static long mglobal_alias = -1;

static pending_t *pend;
static size_t npend, cappend;

/* ---- output ---- */

static void
write_site(const char *scope, const long long *t, const char *stage, const entry_t *e)
{
	sbuf js = SBUF_INIT;

	rec_begin(RT_site);
	rec_cstr(RM_site_scope, scope);
	if (t)
		rec_int(RM_site_t, *t);
	if (stage)
		rec_cstr(RM_site_stage, stage);
	rec_cstr(RM_site_kernel, e->kernel ? e->kernel : "");
	rec_cstr(RM_site_category, e->category);
	rec_cstr(RM_site_best_location, e->best_location);
	entry_sites_to_json(e, &js);
	rec_json(RM_site_sites, js.s, js.len);
	rec_end();
	sb_free(&js);
}

/* Where build_payload_each's entries go: site records of one (trace, stage). */
struct site_out {
	const char *scope, *stage;
	const long long *t;
};

static void
write_site_cb(void *ctx, const entry_t *e)
{
	const struct site_out *o = ctx;

	write_site(o->scope, o->t, o->stage, e);
}

static void
write_payload(const char *scope, const long long *t, const char *stage, const payload_t *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		write_site(scope, t, stage, &p->e[i]);
}

void
write_mapping_sites(void)
{
	size_t i;

	for (i = 0; i < km_map.nstages; i++)
		write_payload("mapping_stage", NULL, km_map.stage_names[i], &km_map.stages[i]);
	write_payload("mapping_global", NULL, NULL, kernel_map_global(&km_map));
}

/* The rows written so far: the next one's id (issue 29). */
static long long nrows_written;

/* Rows of one (trace, stage) (§5.7-§5.9), in table order. */
static void
write_rows(const pending_t *p)
{
	sbuf loc = SBUF_INIT, op = SBUF_INIT, js = SBUF_INIT;
	const char *stage = km_s(p->stage), *name;
	const entry_t *e;
	double share;
	size_t i;

	for (i = 0; i < p->nrows; i++) {
		const agg_t *a = &p->rows[i];
		name = km_s(a->canon);
		e = lookup_kernel_map_entry(&km_map, stage, name);
		if (!e)
			e = relaxed_lookup(&p->local, name);
		best_site_summary(e, &loc, &op);
		share = pct(a->total, p->stage_total);
		rec_begin(RT_kernel_row);
		rec_int(RM_kernel_row_t, p->t);
		rec_cstr(RM_kernel_row_stage, stage);
		rec_cstr(RM_kernel_row_kernel, name);
		rec_cstr(RM_kernel_row_category, a->category);
		rec_num(RM_kernel_row_total_us, a->total);
		rec_int(RM_kernel_row_launches, a->count);
		rec_num(RM_kernel_row_share_pct, share);
		rec_num(RM_kernel_row_stage_total_us, p->stage_total);
		rec_str(RM_kernel_row_location, sb_str(&loc), loc.len);
		rec_str(RM_kernel_row_cpu_op, sb_str(&op), op.len);
		rec_bool(RM_kernel_row_shown, (km_limit <= 0 || (long long)i < km_limit) &&
		    share >= 1.0);
		if (e) {
			sb_reset(&js);
			entry_to_json(e, &js);
			rec_json(RM_kernel_row_entry, js.s, js.len);
		} else
			rec_null(RM_kernel_row_entry);
		if (a->count > 0) {
			rec_num(RM_kernel_row_mean_us, a->total / (double)a->count);
			rec_num(RM_kernel_row_min_us, a->min);
			rec_num(RM_kernel_row_max_us, a->max);
			rec_num(RM_kernel_row_p50_us, a->p50);
			rec_num(RM_kernel_row_p90_us, a->p90);
		}
		rec_id(RM_kernel_row_id, "kernel", ++nrows_written);
		rec_end();
	}
	sb_free(&loc);
	sb_free(&op);
	sb_free(&js);
}

void
flush_pending(void)
{
	size_t i;

	for (i = 0; i < npend; i++) {
		write_rows(&pend[i]);
		free(pend[i].rows);
		payload_free(&pend[i].local);
	}
	npend = 0;
}

/* ---- per-trace processing ---- */

/*
 * One stage group of a trace (group_kernels_by_stage, §3.3): what the
 * passes over its kernels add up, since the kernels themselves are not
 * held (issue 30).
 */
typedef struct {
	uint32_t stage;
	catmap cats;			/* its kernels' categories, record order */
	/* formal: the rows (§5.1), by canonical name in first-seen order */
	imap rowix;
	agg_t *rows;
	size_t nrows, caprows;
	nsum sum;
	sitestats fst;			/* formal statistics, every kernel */
	sitestats mst;			/* mapping statistics: every kernel, or the sample */
	struct sampler *smp;		/* mapping, not SGLang: the sample */
	unsigned long long *sample;	/* its picks, in sample order */
	size_t nsample;
	double all, graph;		/* kernel time, and of it in CUDA graphs */
} sgroup_t;

static mapstage_t *
mapstage(uint32_t stage)
{
	size_t i;

	for (i = 0; i < nmstages; i++)
		if (mstages[i].stage == stage)
			return &mstages[i];
	xgrow(&mstages, &capmstages, nmstages + 1, sizeof mstages[0]);
	memset(&mstages[nmstages], 0, sizeof mstages[0]);
	mstages[nmstages].stage = stage;
	return &mstages[nmstages++];
}

/*
 * Descending sort by total that keeps equal totals in first-appearance
 * order (a bottom-up merge sort: qsort is not stable).
 */
static void
sort_aggs(agg_t *a, size_t n)
{
	agg_t *tmp;
	size_t w, lo, mid, hi, l, r, k;

	tmp = xmalloc((n ? n : 1) * sizeof *tmp);
	for (w = 1; w < n; w *= 2) {
		for (lo = 0; lo < n; lo += 2 * w) {
			mid = lo + w < n ? lo + w : n;
			hi = lo + 2 * w < n ? lo + 2 * w : n;
			for (l = lo, r = mid, k = lo; k < hi; k++) {
				if (l < mid && (r >= hi || !(a[r].total > a[l].total)))
					tmp[k] = a[l++];
				else
					tmp[k] = a[r++];
			}
		}
		memcpy(a, tmp, n * sizeof *a);
	}
	free(tmp);
}

static int
stage_before(const sgroup_t *a, const sgroup_t *b)
{
	return stage_index(km_s(a->stage)) < stage_index(km_s(b->stage));
}

/* A launch's duration in a row, for the percentiles: (group, row, duration). */
struct rdur {
	unsigned long long g, row;
	double dur;
};

static int
cmp_rdur(const void *pa, const void *pb, void *ctx)
{
	const struct rdur *a = pa, *b = pb;

	(void)ctx;
	if (a->g != b->g)
		return a->g < b->g ? -1 : 1;
	if (a->row != b->row)
		return a->row < b->row ? -1 : 1;
	return (a->dur > b->dur) - (a->dur < b->dur);
}

/* One kernel into its group's rows (§5.1: the first-seen order, the last category). */
static void
agg_add(sgroup_t *g, size_t gi, uint32_t canon, const char *category, double dur,
    struct xsort *pd)
{
	int isnew;
	uint64_t *v = imap_put(&g->rowix, canon, &isnew);
	agg_t *r;
	struct rdur x;

	nsum_add(&g->sum, dur);
	if (isnew) {
		xgrow(&g->rows, &g->caprows, g->nrows + 1, sizeof g->rows[0]);
		*v = g->nrows++;
		r = &g->rows[*v];
		memset(r, 0, sizeof *r);
		r->canon = canon;
		r->min = r->max = dur;
	}
	r = &g->rows[*v];
	r->total += dur;
	r->count++;
	if (dur < r->min)
		r->min = dur;
	if (dur > r->max)
		r->max = dur;
	r->category = category;
	x.g = gi;
	x.row = *v;
	x.dur = dur;
	xsort_add(pd, &x);
}

/*
 * The p50 and p90 of each row's launch durations (nearest rank, as
 * step-stats' step percentiles), from every launch's (group, row,
 * duration) sorted: a row's run, ascending, holds its count of them.
 */
static void
row_percentiles(sgroup_t *g, size_t ng, struct xsort *pd)
{
	const struct rdur *x;
	unsigned long long at = 0, cg = (unsigned long long)-1, cr = 0;
	size_t n, i, *base, *end, nr = 0, r;
	struct rdur *mem = xsort_memory(pd, &n);
	double *dur;

	if (mem) {
		/*
		 * All in memory: each row's durations laid out row by row (a
		 * counting sort), each run selected in place, as num_percentile
		 * does without a sort.
		 */
		base = xmalloc((ng + 1) * sizeof *base);
		for (i = 0; i < ng; i++) {
			base[i] = nr;
			nr += g[i].nrows;
		}
		end = xcalloc(nr + 1, sizeof *end);
		dur = xmalloc((n ? n : 1) * sizeof *dur);
		for (i = 0; i < n; i++)
			end[base[mem[i].g] + mem[i].row + 1]++;
		for (r = 0; r < nr; r++)
			end[r + 1] += end[r];
		for (i = 0; i < n; i++)
			dur[end[base[mem[i].g] + mem[i].row]++] = mem[i].dur;
		/* end[r] is now the end of row r's run, the start of row r + 1's */
		for (i = 0; i < ng; i++)
			for (r = 0; r < g[i].nrows; r++) {
				size_t k = base[i] + r, start = k ? end[k - 1] : 0;
				g[i].rows[r].p90 = num_percentile(dur + start, end[k] - start, 90);
				g[i].rows[r].p50 = num_percentile(dur + start, end[k] - start, 50);
			}
		free(dur);
		free(end);
		free(base);
		return;
	}
	while ((x = xsort_next(pd)) != NULL) {
		agg_t *r = &g[x->g].rows[x->row];
		unsigned long long n = (unsigned long long)r->count, k50, k90;
		if (x->g != cg || x->row != cr) {
			cg = x->g;
			cr = x->row;
			at = 0;
		}
		at++;
		/* rank ceil(p * n / 100), at least 1 (num_percentile) */
		k50 = (50 * n + 99) / 100;
		k90 = (90 * n + 99) / 100;
		if (at == (k50 ? k50 : 1))
			r->p50 = x->dur;
		if (at == (k90 ? k90 : 1))
			r->p90 = x->dur;
	}
}

/* A note record of trace t about stage st (triage-records(5) note). */
static void
put_note(long long t, const char *st, const char *id, const char *text)
{
	rec_begin(RT_note);
	rec_int(RM_note_t, t);
	rec_cstr(RM_note_stage, st);
	rec_cstr(RM_note_id, id);
	rec_cstr(RM_note_text, text);
	rec_end();
}

/* "the trace's" or "the decode stage's" (prefix "the"), "its ..." (prefix "its"). */
static void
stage_whose(char *out, size_t n, const char *prefix, const char *st)
{
	if (strcmp(st, "all") == 0)
		snprintf(out, n, "%s%s", prefix, strcmp(prefix, "its") == 0 ? "" : " trace's");
	else
		snprintf(out, n, "%s %.20s stage's", prefix, st);
}

/*
 * When most of a stage's GPU time ran in CUDA/HIP graphs, each of those
 * kernels is attributed to the graph launch's Python site, which says
 * little; say so, and how to get real sites (docs/deviations.md).
 */
static void
note_graph_attribution(const kmtrace_t *kt, const sgroup_t *g)
{
	char text[512], whose[64];
	const char *st = km_s(g->stage);

	if (!(g->all > 0) || pct(g->graph, g->all) < 10.0)
		return;
	stage_whose(whose, sizeof whose, "the", st);
	snprintf(text, sizeof text, "%.1f%% of %s kernel time ran in CUDA graphs: those "
	    "kernels are attributed to the graph launch's Python site. For each kernel's "
	    "own site, pair a graph-off trace with this one: triage --mapping-input EAGER "
	    "--formal-input GRAPH.", pct(g->graph, g->all), whose);
	put_note(kt->tr->t, st, "graph_launch_attribution", text);
}

/*
 * A mapping trace is profiled with CUDA graphs off, so that each kernel is
 * launched by its own op: when one stage's kernels ran in graphs (10 % of
 * its kernel time or more), their sites are the graph launch's, and the
 * formal trace's kernels take them too (the mapping/formal flow, run with
 * the same graph-on trace twice, or a graph-on mapping).  Launches found
 * by correlation, over every kernel of the stage: g->all and g->graph.
 */
static void
note_mapping_graphs(const kmtrace_t *kt, const sgroup_t *g, size_t ng)
{
	size_t i;

	for (i = 0; i < ng; i++) {
		char text[512], whose[64];
		const char *st = km_s(g[i].stage);
		if (!(g[i].all > 0) || pct(g[i].graph, g[i].all) < 10.0)
			continue;
		stage_whose(whose, sizeof whose, "its", st);
		snprintf(text, sizeof text, "The mapping trace ran %.1f%% of %s kernel time in CUDA "
		    "graphs: those kernels take the graph launch's Python site, and so do the "
		    "formal trace's. A mapping trace is profiled with CUDA graphs off (SGLang "
		    "--disable-cuda-graph, vLLM --enforce-eager).", pct(g[i].graph, g[i].all), whose);
		put_note(kt->tr->t, st, "mapping_in_graphs", text);
	}
}

/*
 * The formal_stage site records of one stage group from its statistics st
 * (every kernel of the group), held in *local when local is not NULL,
 * then the group's graph-attribution note.
 */
static void
formal_group(const kmtrace_t *kt, const sgroup_t *g, const sitestats *st, payload_t *local)
{
	if (local) {
		build_payload(st, &g->cats, local);
		write_payload("formal_stage", &kt->tr->t, km_s(g->stage), local);
	} else {
		/* written entry by entry, never held whole */
		struct site_out o = { "formal_stage", km_s(g->stage), &kt->tr->t };
		build_payload_each(st, &g->cats, write_site_cb, &o);
	}
	if (!compat_reference && !km_formal_with_mapping)
		note_graph_attribution(kt, g);
}

/*
 * Formal pass of one trace (§5.9): a local payload per stage group, in
 * group order, then the rows' aggregates per stage in stage order, with
 * the leftover 'all' stage dropped when under 1% of the trace.
 *
 * The local payloads are the rows' last-resort lookup (§5.7.1 step 2),
 * reached only when the mapping map has no entry.  Without --mapping the
 * trace is its own mapping: every kernel name of every stage is in the
 * map, the lookup always hits, so `keep_local` is 0 and the payloads are
 * dropped once written -- their memory per distinct kernel name is the
 * largest part of a trace where every kernel has a name of its own
 * (issue 21).  `written`: the mapping pass wrote the groups' site records
 * already (formal_group), from the statistics it had built of the same
 * kernels.
 */
static void
formal_trace(const kmtrace_t *kt, sgroup_t *g, size_t ng, int keep_local, int written,
    double trace_total)
{
	payload_t *local = xcalloc(ng, sizeof *local);
	size_t *ord = xmalloc(ng * sizeof *ord), a, b, i;
	uint32_t all = km_intern("all", 3);

	for (i = 0; i < ng && !written; i++)
		formal_group(kt, &g[i], &g[i].fst, keep_local ? &local[i] : NULL);

	/* stable insertion sort of the (at most three) groups by stage order */
	for (a = 0; a < ng; a++) {
		for (b = a; b > 0 && stage_before(&g[a], &g[ord[b - 1]]); b--)
			ord[b] = ord[b - 1];
		ord[b] = a;
	}
	for (a = 0; a < ng; a++) {
		sgroup_t *sg = &g[ord[a]];
		pending_t *p;
		xgrow(&pend, &cappend, npend + 1, sizeof pend[0]);
		p = &pend[npend];
		memset(p, 0, sizeof *p);
		p->t = kt->tr->t;
		p->stage = sg->stage;
		p->stage_total = nsum_value(&sg->sum);
		p->rows = sg->rows;	/* moved */
		p->nrows = sg->nrows;
		sg->rows = NULL;
		sg->nrows = 0;
		sort_aggs(p->rows, p->nrows);
		if (sg->stage == all && kt->tr->stage == all &&
		    pct(p->stage_total, trace_total) < 1.0) {
			free(p->rows);
			payload_free(&local[ord[a]]);
			continue;
		}
		p->local = local[ord[a]];	/* moved */
		npend++;
	}
	free(ord);
	free(local);
}

/* A kernel's correlation and number, for the graph launches of a mapping trace. */
struct kcorr {
	long long corr;
	unsigned long long i;
};

/*
 * The kernels whose correlation's first launch record is a CUDA/HIP graph
 * launch, as a bitmap by kernel number (the caller frees it): the launches
 * by correlation merged with the kernels by correlation.
 */
static unsigned char *
graph_kernels(struct trace *tr, unsigned long long nk)
{
	struct xsort *kc = xsort_new(sizeof(struct kcorr), xsort_by_ll, NULL);
	struct xsort *lc = xsort_new(sizeof(struct kcorr), xsort_by_ll, NULL);
	unsigned char *bits = xcalloc(nk / 8 + 1, 1);
	struct tkcursor cur;
	const struct tkernel *k;
	const struct tcall *l;
	const struct kcorr *x, *y;
	unsigned long long i;

	trace_kernel_rewind(tr, &cur);
	for (i = 0; (k = trace_kernel_next(&cur)) != NULL; i++)
		if (k->has_corr) {
			struct kcorr c = { k->corr, i };
			xsort_add(kc, &c);
		}
	if (tr->lq) {
		xsort_rewind(tr->lq);
		while ((l = xsort_next(tr->lq)) != NULL) {
			/* the flag in the second word: the sort keeps the first launch first */
			struct kcorr c = { l->corr,
			    strstr(strtab_str(km_str, l->name), "GraphLaunch") != NULL };
			xsort_add(lc, &c);
		}
	}
	y = xsort_next(lc);
	while ((x = xsort_next(kc)) != NULL) {
		struct kcorr first;
		while (y && y->corr < x->corr)
			y = xsort_next(lc);
		if (!y || y->corr != x->corr)
			continue;
		first = *y;
		if (first.i)
			bits[x->i >> 3] |= (unsigned char)(1u << (x->i & 7));
	}
	xsort_free(kc);
	xsort_free(lc);
	return bits;
}

static int
cmp_ull(const void *pa, const void *pb)
{
	unsigned long long a = *(const unsigned long long *)pa, b = *(const unsigned long long *)pb;

	return (a > b) - (a < b);
}

void
process_trace(kmtrace_t *kt, int build_map, int formal)
{
	struct trace *tr = kt->tr;
	sgroup_t *g = NULL;
	size_t ng = 0, capg = 0, i, j, nneed = 0;
	imap gidx = { 0 }, picked = { 0 };
	struct xsort *pd = formal ? xsort_new(sizeof(struct rdur), cmp_rdur, NULL) : NULL;
	struct xsort *res = NULL;
	struct tkcursor cur;
	const struct tkernel *k;
	const struct kres *a;
	struct spick {
		struct kres r;
		uint32_t canon;
		double dur;
	} *sres = NULL;
	unsigned long long n, *need = NULL;
	unsigned char *gbits = NULL;
	nsum tsum = NSUM_INIT;
	int written, sampled = build_map && !kt->sglang;
	int all_attr = formal || !build_map || kt->sglang;

	/* group_kernels_by_stage (§3.3): stages by first appearance, file order */
	trace_kernel_rewind(tr, &cur);
	for (n = 0; (k = trace_kernel_next(&cur)) != NULL; n++) {
		int isnew;
		uint32_t stage = k->stage != NOSTR ? k->stage : tr->stage;
		uint32_t canon = km_canon(k->name);
		const char *category = km_category(k->name);
		uint64_t *v = imap_put(&gidx, stage, &isnew);
		sgroup_t *gi;
		if (isnew) {
			xgrow(&g, &capg, ng + 1, sizeof g[0]);
			*v = ng++;
			memset(&g[*v], 0, sizeof g[*v]);
			g[*v].stage = stage;
			g[*v].sum = (nsum)NSUM_INIT;
			if (sampled)
				g[*v].smp = sampler_new();
		}
		gi = &g[*v];
		catmap_set(&gi->cats, canon, category);
		if (formal)
			agg_add(gi, (size_t)*v, canon, category, k->dur, pd);
		nsum_add(&tsum, k->dur);
		if (sampled)
			sampler_count(gi->smp, canon);
	}

	/* attribute only what the passes read: the sample, or every kernel */
	if (sampled) {
		trace_kernel_rewind(tr, &cur);
		for (n = 0; (k = trace_kernel_next(&cur)) != NULL; n++) {
			uint32_t stage = k->stage != NOSTR ? k->stage : tr->stage;
			sampler_pick(g[*imap_get(&gidx, stage)].smp, km_canon(k->name), n, k->ts,
			    k->name);
		}
		for (i = 0; i < ng; i++) {
			g[i].sample = sampler_done(g[i].smp, &g[i].nsample);
			g[i].smp = NULL;
			nneed += g[i].nsample;
		}
		if (!all_attr) {
			need = xmalloc((nneed ? nneed : 1) * sizeof *need);
			for (i = 0, nneed = 0; i < ng; i++)
				for (j = 0; j < g[i].nsample; j++)
					need[nneed++] = g[i].sample[j];
			xqsort(need, nneed, sizeof *need, cmp_ull);
		}
	}
	res = attribute_kernels(kt, all_attr ? NULL : need, nneed);

	/*
	 * An SGLang trace's mapping statistics are of every kernel, as the
	 * formal pass's: its site records are written from them before they
	 * merge, instead of from a second copy built beside the merged ones
	 * (issue 21).  Without --mapping only: the local payloads go unheld.
	 */
	written = build_map && formal && kt->sglang;
	if (!formal && build_map && !compat_reference)
		gbits = graph_kernels(tr, (unsigned long long)tr->nk);
	if (sampled) {
		/* the sample's attributions, by kernel number */
		sres = xmalloc((nneed ? nneed : 1) * sizeof *sres);
		for (i = 0; i < ng; i++)
			for (j = 0; j < g[i].nsample; j++)
				imap_put(&picked, g[i].sample[j], NULL);
	}
	/* every kernel again, with its attribution when it has one */
	trace_kernel_rewind(tr, &cur);
	a = xsort_next(res);
	for (n = 0, j = 0; (k = trace_kernel_next(&cur)) != NULL; n++) {
		uint32_t stage = k->stage != NOSTR ? k->stage : tr->stage;
		sgroup_t *gi = &g[*imap_get(&gidx, stage)];
		struct kres one;
		const struct kres *kr = NULL;
		if (a && a->i == n) {
			/* a copy: the sort's next record takes its place */
			one = *a;
			kr = &one;
			if (sres && imap_get(&picked, n)) {
				*imap_put(&picked, n, NULL) = j;
				sres[j].r = *kr;
				sres[j].canon = km_canon(k->name);
				sres[j++].dur = k->dur;
			}
			if (all_attr) {
				uint32_t canon = km_canon(k->name);
				if (build_map && kt->sglang)
					sitestats_add(&gi->mst, canon, kr, k->dur);
				if (formal && !written)
					sitestats_add(&gi->fst, canon, kr, k->dur);
			}
			a = xsort_next(res);
		}
		if (formal) {
			gi->all += k->dur;
			if (kr && kr->graph)
				gi->graph += k->dur;
		} else if (gbits) {
			gi->all += k->dur;
			if (gbits[n >> 3] >> (n & 7) & 1)
				gi->graph += k->dur;
		}
	}
	xsort_free(res);
	if (sampled)
		for (i = 0; i < ng; i++)
			for (j = 0; j < g[i].nsample; j++) {
				const struct spick *sp = &sres[*imap_get(&picked, g[i].sample[j])];
				sitestats_add(&g[i].mst, sp->canon, &sp->r, sp->dur);
			}
	if (formal)
		row_percentiles(g, ng, pd);

	if (build_map) {
		/* mapping pass (§5.5): merge per stage and globally, in group order */
		for (i = 0; i < ng; i++) {
			mapstage_t *ms = mapstage(g[i].stage);
			sitestats *st = &g[i].mst;
			if (written)
				formal_group(kt, &g[i], st, NULL);
			if (mglobal_alias >= 0) {
				/* a second merge: the global stats become their own */
				sitestats_merge(&mglobal, &mstages[mglobal_alias].sites);
				mglobal_alias = -1;
			}
			if (mglobal.nk == 0 && mglobal.ns == 0 && ms->sites.nk == 0 &&
			    ms->sites.ns == 0) {
				/* both would be copies of st: the stage takes it, global points at it */
				sitestats_merge_move(&ms->sites, st);
				mglobal_alias = (long)(ms - mstages);
			} else {
				sitestats_merge(&mglobal, st);
				sitestats_merge_move(&ms->sites, st);
			}
			catmap_merge(&ms->cats, &g[i].cats);
			catmap_merge(&mglobal_cats, &g[i].cats);
		}
	}
	if (formal)
		formal_trace(kt, g, ng, !build_map, written, nsum_value(&tsum));
	else if (build_map && !compat_reference)
		note_mapping_graphs(kt, g, ng);
	for (i = 0; i < ng; i++) {
		catmap_free(&g[i].cats);
		imap_free(&g[i].rowix);
		free(g[i].rows);
		sitestats_free(&g[i].fst);
		sitestats_free(&g[i].mst);
		free(g[i].sample);
	}
	free(g);
	free(need);
	free(sres);
	free(gbits);
	xsort_free(pd);
	imap_free(&gidx);
	imap_free(&picked);
}

void
finish_mapping(int hold_stages)
{
	struct site_out o = { "mapping_global", NULL, NULL };
	const sitestats *gst = mglobal_alias >= 0 ? &mstages[mglobal_alias].sites : &mglobal;
	size_t i;

	/* the stage payloads stay for rows: each is looked up in its stage's (§5.7.2) */
	for (i = 0; i < nmstages; i++) {
		if (hold_stages) {
			payload_t *p = kernel_map_stage(&km_map, km_s(mstages[i].stage), 1);
			build_payload(&mstages[i].sites, &mstages[i].cats, p);
			write_payload("mapping_stage", NULL, km_s(mstages[i].stage), p);
		} else {
			struct site_out so = { "mapping_stage", km_s(mstages[i].stage), NULL };
			build_payload_each(&mstages[i].sites, &mstages[i].cats, write_site_cb, &so);
		}
	}
	/*
	 * Without --mapping no row's name misses its stage's payload, so the
	 * global one is only written, entry by entry, never held: one copy
	 * fewer of every kernel's sites (issue 21).
	 */
	build_payload_each(gst, &mglobal_cats, write_site_cb, &o);
	mglobal_alias = -1;
	sitestats_free(&mglobal);
	catmap_free(&mglobal_cats);
	for (i = 0; i < nmstages; i++) {
		sitestats_free(&mstages[i].sites);
		catmap_free(&mstages[i].cats);
	}
	free(mstages);
	mstages = NULL;
	nmstages = capmstages = 0;
}

void
table_free(void)
{
	size_t i;

	for (i = 0; i < npend; i++) {
		free(pend[i].rows);
		payload_free(&pend[i].local);
	}
	npend = 0;
	free(pend);
	pend = NULL;
	cappend = 0;
	kernel_map_free(&km_map);
}
