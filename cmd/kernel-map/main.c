/*
 * kernel-map: attribute each trace's kernels to Python source sites and
 * build the kernel table (kernel-table.md §4-§5, Appendix C).
 *
 * Reads the record stream of trace-extract | trace-stage, keeps one trace
 * at a time, and when a trace's "stats" record arrives turns it into
 * compact per-stage aggregates.  Writes "site" records (the payloads) and
 * "kernel_row" records, and passes every record it does not consume.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "json.h"
#include "km.h"
#include "num.h"
#include "payload.h"
#include "rec.h"
#include "rules.h"
#include "sbuf.h"
#include "xalloc.h"

/* One (trace, stage) of the kernel table, waiting for the final mapping map. */
typedef struct {
	uint32_t canon;
	const char *category;
	double total;
	long long count;
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

static long long limit;			/* --kernel-table-limit; <= 0: all */
static const char *mapping_file;
static int sites_only;

static rec_reader rd;
static trace_t cur;
static int open_trace;
static int sglang = 1;			/* framework of the latest input record */
static u64map threads;
static uint32_t nthreads;

static mapstage_t *mstages;
static size_t nmstages, capmstages;
static sitestats mglobal;
static catmap mglobal_cats;
static kernel_map_t kmap;

static pending_t *pend;
static size_t npend, cappend;

static long long ntraces, nkernel_traces;
static uint32_t *cat_names;		/* events by category, from stats records */
static long long *cat_counts;
static size_t ncats, capcats;

static const struct option longopts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "kernel-table-limit", required_argument, NULL, 'n' },
	{ "mapping", required_argument, NULL, 'm' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "sites-only", no_argument, NULL, 's' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

static const char usage_text[] =
    "usage: kernel-map [-hq] [--kernel-table-limit n] [--mapping file | --sites-only]\n"
    "                  [file]\n";

static void __attribute__((noreturn))
usage(int code)
{
	fputs(usage_text, code ? stderr : stdout);
	exit(code);
}

static void __attribute__((noreturn, format(printf, 1, 2)))
bad_record(const char *fmt, ...)
{
	va_list ap;
	sbuf b = SBUF_INIT;

	va_start(ap, fmt);
	sb_vprintf(&b, fmt, ap);
	va_end(ap);
	die(EXIT_DATA, "%s:%zu: %s", rd.name, rd.lineno, sb_str(&b));
}

/* ---- reading one record's fields ---- */

static uint32_t
get_text(const char *key, int required)
{
	sbuf b = SBUF_INIT;
	int i = rec_get(&rd, key);
	uint32_t id;

	if (i < 0 && required) {
		size_t n;
		const char *t = rec_type(&rd, &n);
		bad_record("%.*s record without '%s'", (int)n, t, key);
	}
	if (json_kind(&rd.doc, i) == JK_STR)
		json_str(&rd.doc, i, &b, NULL);
	else
		json_pystr(&rd.doc, i, &b, NULL);	/* numbers as Python str() */
	id = km_intern(sb_str(&b), b.len);
	sb_free(&b);
	return id;
}

static double
get_num(const char *key)
{
	double v;

	if (!rec_get_num(&rd, key, &v)) {
		size_t n;
		const char *t = rec_type(&rd, &n);
		bad_record("%.*s record without a numeric '%s'", (int)n, t, key);
	}
	return v;
}

static uint32_t
thread_of(uint32_t pid, uint32_t tid)
{
	uint64_t key = (uint64_t)pid << 32 | tid;
	uint32_t t = u64map_get(&threads, key);

	if (t == NONE) {
		t = nthreads++;
		u64map_put(&threads, key, t);
	}
	return t;
}

/* The record belongs to the open trace: check its "t". */
static void
need_trace(void)
{
	long long t;

	if (!open_trace)
		bad_record("record outside a trace (no 'trace' record before it)");
	if (!rec_get_int(&rd, "t", &t) || t != cur.t)
		bad_record("record for trace %lld inside trace %lld", t, cur.t);
}

static void
read_kernel(void)
{
	kernel_t *k;
	int sel = 0;
	long long v;
	uint32_t st;

	if (!rec_get_bool(&rd, "sel", &sel) || !sel)
		return;
	need_trace();
	xgrow(&cur.k, &cur.capk, cur.nk + 1, sizeof cur.k[0]);
	k = &cur.k[cur.nk];
	memset(k, 0, sizeof *k);
	k->name = get_text("name", 1);
	k->canon = km_canon(k->name);
	k->category = km_category(k->name);
	k->ts = get_num("ts");
	k->dur = get_num("dur");
	if (rec_get_int(&rd, "external_id", &v)) {
		k->ext = v;
		k->has_ext = 1;
	}
	if (rec_get_int(&rd, "correlation", &v)) {
		k->corr = v;
		k->has_corr = 1;
	}
	st = rec_get(&rd, "stage") >= 0 ? get_text("stage", 0) : cur.stage;
	k->stage = st;
	k->loc = k->stack = k->op = NONE;
	cur.nk++;
}

static void
read_timed(timed_t **arr, size_t *n, size_t *cap, const char *idkey)
{
	timed_t *e;
	uint32_t pid, tid;
	long long v;

	need_trace();
	xgrow(arr, cap, *n + 1, sizeof **arr);
	e = &(*arr)[*n];
	memset(e, 0, sizeof *e);
	e->name = get_text("name", 1);
	pid = get_text("pid", 0);
	tid = get_text("tid", 0);
	e->thread = thread_of(pid, tid);
	e->ts = get_num("ts");
	e->dur = get_num("dur");
	if (rec_get_int(&rd, idkey, &v)) {
		e->id = v;
		e->has_id = 1;
	}
	/* A cpu op without External id may get one from the corr map later. */
	if (!e->has_id && strcmp(idkey, "external_id") == 0 &&
	    rec_get_int(&rd, "correlation", &v)) {
		e->id = v;
		e->has_id = -1;
	}
	(*n)++;
}

static void
read_frame(void)
{
	frame_t *f;
	uint32_t raw, pid, tid;

	need_trace();
	xgrow(&cur.fr, &cur.capfr, cur.nfr + 1, sizeof cur.fr[0]);
	f = &cur.fr[cur.nfr];
	raw = get_text("name", 1);
	pid = get_text("pid", 0);
	tid = get_text("tid", 0);
	f->thread = thread_of(pid, tid);
	f->norm = km_frame_norm(raw);
	f->prio = km_frame_prio(raw);
	f->ts = get_num("ts");
	f->dur = get_num("dur");
	f->end = f->ts + f->dur;
	f->seq = (uint32_t)cur.nfr++;
}

static void
read_corr(void)
{
	long long c, x;
	uint32_t i;

	need_trace();
	if (!rec_get_int(&rd, "correlation", &c) || !rec_get_int(&rd, "external_id", &x))
		bad_record("corr record without integer 'correlation' and 'external_id'");
	i = u64map_get(&cur.corr, (uint64_t)c);
	if (i == NONE) {
		xgrow(&cur.corr_ext, &cur.capcorr, cur.ncorr + 1, sizeof cur.corr_ext[0]);
		i = (uint32_t)cur.ncorr++;
		u64map_put(&cur.corr, (uint64_t)c, i);
	}
	cur.corr_ext[i] = x;		/* later entries overwrite (§1.4.6) */
}

static void
read_stats_cats(void)
{
	int o = rec_get(&rd, "by_cat"), i, k, n;
	long long v;
	sbuf b = SBUF_INIT;

	if (json_kind(&rd.doc, o) != JK_OBJ)
		return;
	n = rd.doc.tok[o].size;
	for (k = 0, i = o + 1; k < n; k++, i = json_skip(&rd.doc, i + 1)) {
		uint32_t id;
		size_t j;
		json_str(&rd.doc, i, &b, NULL);
		if (!json_coerce_int(&rd.doc, i + 1, &v))
			continue;
		id = km_intern(sb_str(&b), b.len);
		for (j = 0; j < ncats && cat_names[j] != id; j++)
			;
		if (j == ncats) {
			xgrow(&cat_names, &capcats, ncats + 1, sizeof cat_names[0]);
			cat_counts = xrealloc(cat_counts, capcats * sizeof cat_counts[0]);
			cat_names[j] = id;
			cat_counts[j] = 0;
			ncats++;
		}
		cat_counts[j] += v;
	}
	sb_free(&b);
}

/* ---- output ---- */

static void
write_site(const char *scope, const long long *t, const char *stage, const entry_t *e)
{
	sbuf line = SBUF_INIT, js = SBUF_INIT;

	sb_adds(&line, "{\"type\":\"site\",\"scope\":\"");
	sb_adds(&line, scope);
	sb_addc(&line, '"');
	if (t)
		sb_printf(&line, ",\"t\":%lld", *t);
	if (stage) {
		sb_adds(&line, ",\"stage\":");
		json_quote(&line, stage, strlen(stage));
	}
	entry_to_json(e, &js);
	sb_addc(&line, ',');
	sb_add(&line, js.s + 1, js.len - 1);	/* the entry's members */
	rec_line(line.s, line.len);
	sb_free(&line);
	sb_free(&js);
}

static void
write_payload(const char *scope, const long long *t, const char *stage, const payload_t *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		write_site(scope, t, stage, &p->e[i]);
}

static void
write_mapping_sites(void)
{
	size_t i;

	for (i = 0; i < kmap.nstages; i++)
		write_payload("mapping_stage", NULL, kmap.stage_names[i], &kmap.stages[i]);
	write_payload("mapping_global", NULL, NULL, &kmap.global);
}

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
		e = lookup_kernel_map_entry(&kmap, stage, name);
		if (!e)
			e = relaxed_lookup(&p->local, name);
		best_site_summary(e, &loc, &op);
		share = pct(a->total, p->stage_total);
		rec_begin("kernel_row");
		rec_int("t", p->t);
		rec_cstr("stage", stage);
		rec_cstr("kernel", name);
		rec_cstr("category", a->category);
		rec_num("total_us", a->total);
		rec_int("launches", a->count);
		rec_num("share_pct", share);
		rec_num("stage_total_us", p->stage_total);
		rec_str("location", sb_str(&loc), loc.len);
		rec_str("cpu_op", sb_str(&op), op.len);
		rec_bool("shown", (limit <= 0 || (long long)i < limit) && share >= 1.0);
		if (e) {
			sb_reset(&js);
			entry_to_json(e, &js);
			rec_raw("entry", js.s, js.len);
		} else
			rec_null("entry");
		rec_end();
	}
	sb_free(&loc);
	sb_free(&op);
	sb_free(&js);
}

static void
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

typedef struct {
	uint32_t stage;
	size_t *idx, n, cap;
	size_t *sample, nsample;
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
cmp_stage_order(const void *pa, const void *pb)
{
	const sgroup_t *a = pa, *b = pb;
	int x = stage_index(km_s(a->stage)), y = stage_index(km_s(b->stage));

	return x < y ? -1 : x > y;
}

/* Formal pass of one stage group (§5.6, §5.9): local payload and row aggregates. */
static void
formal_stage(const sgroup_t *g, long long t)
{
	sitestats st = { 0 };
	catmap cats = { 0 };
	pending_t *p;
	size_t i;

	xgrow(&pend, &cappend, npend + 1, sizeof pend[0]);
	p = &pend[npend++];
	memset(p, 0, sizeof *p);
	p->t = t;
	p->stage = g->stage;
	sitestats_add(&st, &cur, g->idx, g->n);
	for (i = 0; i < g->n; i++)
		catmap_set(&cats, cur.k[g->idx[i]].canon, cur.k[g->idx[i]].category);
	build_payload(&st, &cats, &p->local);
	write_payload("formal_stage", &t, km_s(g->stage), &p->local);
	sitestats_free(&st);
	catmap_free(&cats);
}

/* Rows of the stage groups, in stage order, honouring the 'all' skip rule. */
static void
formal_rows(sgroup_t *g, size_t ng, size_t first_pend)
{
	nsum tsum = NSUM_INIT;
	double trace_total;
	size_t i, j, gi;
	uint32_t all = km_intern("all", 3);
	pending_t *sorted;

	for (i = 0; i < cur.nk; i++)
		nsum_add(&tsum, cur.k[i].dur);
	trace_total = nsum_value(&tsum);

	/* pend[first_pend..] are in group order; reorder them by stage (stable). */
	sorted = xmalloc(ng * sizeof *sorted);
	for (gi = 0; gi < ng; gi++)
		sorted[gi] = pend[first_pend + gi];
	{
		size_t *ord = xmalloc(ng * sizeof *ord), a, b;
		for (a = 0; a < ng; a++)
			ord[a] = a;
		for (a = 1; a < ng; a++)	/* insertion sort: stable, ng <= 3 */
			for (b = a; b > 0 && cmp_stage_order(&g[ord[b - 1]], &g[ord[b]]) > 0; b--) {
				size_t x = ord[b];
				ord[b] = ord[b - 1];
				ord[b - 1] = x;
			}
		npend = first_pend;
		for (a = 0; a < ng; a++) {
			const sgroup_t *sg = &g[ord[a]];
			pending_t p = sorted[ord[a]];
			nsum ssum = NSUM_INIT;
			u64map idx = { 0 };

			for (j = 0; j < sg->n; j++)
				nsum_add(&ssum, cur.k[sg->idx[j]].dur);
			p.stage_total = nsum_value(&ssum);
			if (sg->stage == all && cur.stage == all &&
			    pct(p.stage_total, trace_total) < 1.0) {
				payload_free(&p.local);
				continue;
			}
			p.rows = xmalloc((sg->n ? sg->n : 1) * sizeof p.rows[0]);
			for (j = 0; j < sg->n; j++) {
				const kernel_t *k = &cur.k[sg->idx[j]];
				uint32_t r = u64map_get(&idx, k->canon);
				if (r == NONE) {
					r = (uint32_t)p.nrows++;
					u64map_put(&idx, k->canon, r);
					p.rows[r].canon = k->canon;
					p.rows[r].total = 0.0;
					p.rows[r].count = 0;
				}
				p.rows[r].total += k->dur;
				p.rows[r].count++;
				p.rows[r].category = k->category;	/* last wins */
			}
			u64map_free(&idx);
			sort_aggs(p.rows, p.nrows);
			pend[npend++] = p;
		}
		free(ord);
	}
	free(sorted);
}

static void
process_trace(void)
{
	sgroup_t *g = NULL;
	size_t ng = 0, capg = 0, i, j, first_pend = npend;
	int build_map = mapping_file == NULL;
	int formal = !sites_only;
	u64map gidx = { 0 };

	/* cpu ops without External id take it from the correlation map */
	for (i = 0; i < cur.nop; i++) {
		timed_t *o = &cur.op[i];
		if (o->has_id == -1) {
			uint32_t c = u64map_get(&cur.corr, (uint64_t)o->id);
			o->has_id = c != NONE;
			if (c != NONE)
				o->id = cur.corr_ext[c];
		}
	}
	ntraces++;
	if (cur.nk == 0)
		goto done;
	nkernel_traces++;

	/* group_kernels_by_stage (§3.3): stages by first appearance, file order */
	for (i = 0; i < cur.nk; i++) {
		uint32_t s = cur.k[i].stage, gi = u64map_get(&gidx, s);
		if (gi == NONE) {
			xgrow(&g, &capg, ng + 1, sizeof g[0]);
			gi = (uint32_t)ng++;
			memset(&g[gi], 0, sizeof g[gi]);
			g[gi].stage = s;
			u64map_put(&gidx, s, gi);
		}
		xgrow(&g[gi].idx, &g[gi].cap, g[gi].n + 1, sizeof g[gi].idx[0]);
		g[gi].idx[g[gi].n++] = i;
	}

	for (i = 0; i < ng; i++) {
		if (build_map && !cur.sglang) {
			g[i].sample = xmalloc(g[i].n * sizeof g[i].sample[0]);
			g[i].nsample = sample_kernels(&cur, g[i].idx, g[i].n, g[i].sample);
			for (j = 0; j < g[i].nsample; j++)
				cur.k[g[i].sample[j]].need = 1;
		}
		if (formal || !build_map || cur.sglang)
			for (j = 0; j < g[i].n; j++)
				cur.k[g[i].idx[j]].need = 1;
	}
	attribute_kernels(&cur);

	if (build_map) {
		/* mapping pass (§5.5): merge per stage and globally, in group order */
		for (i = 0; i < ng; i++) {
			mapstage_t *ms = mapstage(g[i].stage);
			sitestats st = { 0 };
			if (cur.sglang)
				sitestats_add(&st, &cur, g[i].idx, g[i].n);
			else
				sitestats_add(&st, &cur, g[i].sample, g[i].nsample);
			sitestats_merge(&ms->sites, &st);
			sitestats_merge(&mglobal, &st);
			sitestats_free(&st);
			for (j = 0; j < g[i].n; j++) {
				const kernel_t *k = &cur.k[g[i].idx[j]];
				catmap_set(&ms->cats, k->canon, k->category);
				catmap_set(&mglobal_cats, k->canon, k->category);
			}
		}
	}
	if (formal) {
		for (i = 0; i < ng; i++)
			formal_stage(&g[i], cur.t);
		formal_rows(g, ng, first_pend);
		if (!build_map)
			flush_pending();	/* the mapping map is final already */
	}
done:
	for (i = 0; i < ng; i++) {
		free(g[i].idx);
		free(g[i].sample);
	}
	free(g);
	u64map_free(&gidx);
	trace_reset(&cur);
	open_trace = 0;
}

static void
open_new_trace(void)
{
	long long t;
	uint32_t path;

	if (open_trace)
		bad_record("trace record inside trace %lld (its stats record is missing)", cur.t);
	if (!rec_get_int(&rd, "t", &t))
		bad_record("trace record without an integer 't'");
	memset(&cur, 0, sizeof cur);
	cur.t = t;
	path = rec_get(&rd, "path") >= 0 ? get_text("path", 0) : km_intern("", 0);
	cur.path = path;
	if (rec_get(&rd, "stage") >= 0)
		cur.stage = get_text("stage", 0);
	else
		cur.stage = km_intern(parse_stage(km_s(path)), strlen(parse_stage(km_s(path))));
	cur.sglang = sglang;
	open_trace = 1;
}

static void
read_input_record(void)
{
	sbuf fw = SBUF_INIT;

	if (rec_get_str(&rd, "framework", &fw))
		sglang = strcmp(sb_str(&fw), "sglang") == 0;
	sb_free(&fw);
}

static int
cmp_entry_name(const void *pa, const void *pb)
{
	return strcmp(((const entry_t *)pa)->kernel, ((const entry_t *)pb)->kernel);
}

/* --mapping FILE: the mapping map from its site records; its input records are echoed. */
static void
load_mapping(const char *path)
{
	FILE *fp = rec_open(path);
	rec_reader r;
	sbuf scope = SBUF_INIT, stage = SBUF_INIT;
	size_t i;

	rec_reader_init(&r, fp, path);
	while (rec_next(&r)) {
		if (rec_is(&r, "input")) {
			rec_line(r.line, r.len);
			continue;
		}
		if (!rec_is(&r, "site"))
			continue;
		if (!rec_get_str(&r, "scope", &scope))
			die(EXIT_DATA, "%s:%zu: site record without 'scope'", path, r.lineno);
		if (strcmp(scope.s, "mapping_stage") == 0) {
			payload_t *p;
			if (!rec_get_str(&r, "stage", &stage))
				die(EXIT_DATA, "%s:%zu: mapping_stage site without 'stage'", path, r.lineno);
			p = kernel_map_stage(&kmap, sb_str(&stage), 1);
			if (entry_from_json(&r.doc, 0, payload_add(p)) < 0)
				die(EXIT_DATA, "%s:%zu: site record without 'kernel'", path, r.lineno);
		} else if (strcmp(scope.s, "mapping_global") == 0) {
			if (entry_from_json(&r.doc, 0, payload_add(&kmap.global)) < 0)
				die(EXIT_DATA, "%s:%zu: site record without 'kernel'", path, r.lineno);
		}
	}
	if (fp != stdin)
		fclose(fp);
	rec_reader_free(&r);
	sb_free(&scope);
	sb_free(&stage);
	/* lookups iterate in ascending byte order of the name (§5.4) */
	for (i = 0; i < kmap.nstages; i++)
		if (kmap.stages[i].n)
			qsort(kmap.stages[i].e, kmap.stages[i].n, sizeof(entry_t), cmp_entry_name);
	if (kmap.global.n)
		qsort(kmap.global.e, kmap.global.n, sizeof(entry_t), cmp_entry_name);
}

static void
no_kernels(void)
{
	sbuf b = SBUF_INIT;
	size_t i;

	for (i = 0; i < ncats; i++)
		sb_printf(&b, "%s%s %lld", i ? ", " : "",
		    *km_s(cat_names[i]) ? km_s(cat_names[i]) : "uncategorized", cat_counts[i]);
	if (ntraces == 0)
		die(EXIT_EMPTY, "no traces in the input");
	die(EXIT_EMPTY, "no GPU kernels to analyze in %lld trace%s (events by category: %s)",
	    ntraces, ntraces == 1 ? "" : "s", b.len ? b.s : "none");
}

static void
finish_mapping(void)
{
	size_t i;

	for (i = 0; i < nmstages; i++) {
		build_payload(&mstages[i].sites, &mstages[i].cats,
		    kernel_map_stage(&kmap, km_s(mstages[i].stage), 1));
		sitestats_free(&mstages[i].sites);
		catmap_free(&mstages[i].cats);
	}
	build_payload(&mglobal, &mglobal_cats, &kmap.global);
	sitestats_free(&mglobal);
	catmap_free(&mglobal_cats);
	free(mstages);
}

int
main(int argc, char **argv)
{
	const char *errstr, *in = "-";
	FILE *fp;
	size_t tn;
	const char *type;
	int c;

	tool_init(argc, argv);
	while ((c = getopt_long(argc, argv, "hq", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(0);
		case 'm':
			mapping_file = optarg;
			break;
		case 'n':
			if (!parse_num(optarg, LLONG_MIN, LLONG_MAX, &limit, &errstr)) {
				warnx("bad --kernel-table-limit value, %s: %s", errstr, optarg);
				usage(EXIT_USAGE);
			}
			break;
		case 'q':
			quiet = 1;
			break;
		case 's':
			sites_only = 1;
			break;
		case 'V':
			print_version();
		default:
			usage(EXIT_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc > 1)
		usage(EXIT_USAGE);
	if (argc == 1)
		in = argv[0];
	if (mapping_file && sites_only) {
		warnx("--mapping and --sites-only cannot be combined");
		usage(EXIT_USAGE);
	}

	km_str = strtab_new();
	if (mapping_file) {
		load_mapping(mapping_file);
		write_mapping_sites();
	}
	fp = rec_open(in);
	rec_reader_init(&rd, fp, strcmp(in, "-") == 0 ? "<stdin>" : in);
	while (rec_next(&rd)) {
		int pass = 1;

		type = rec_type(&rd, &tn);
#define IS(s) (tn == sizeof(s) - 1 && memcmp(type, s, tn) == 0)
		if (IS("kernel")) {
			read_kernel();
		} else if (IS("cpu_op")) {
			read_timed(&cur.op, &cur.nop, &cur.capop, "external_id");
			pass = sites_only;
		} else if (IS("launch")) {
			read_timed(&cur.ln, &cur.nln, &cur.capln, "correlation");
			pass = sites_only;
		} else if (IS("frame")) {
			read_frame();
			pass = sites_only;
		} else if (IS("corr")) {
			read_corr();
			pass = sites_only;
		} else if (IS("trace")) {
			open_new_trace();
		} else if (IS("input")) {
			read_input_record();
		} else if (IS("stats")) {
			need_trace();
			read_stats_cats();
			/* the trace's site (and, with --mapping, row) records precede its stats */
			{
				char *line = xstrndup(rd.line, rd.len);
				size_t len = rd.len;
				process_trace();
				rec_line(line, len);
				free(line);
			}
			pass = 0;
		}
#undef IS
		if (pass)
			rec_line(rd.line, rd.len);
	}
	if (open_trace)
		die(EXIT_DATA, "%s: input truncated: trace %lld has no stats record", rd.name, cur.t);
	if (fp != stdin)
		fclose(fp);
	rec_reader_free(&rd);

	if (!mapping_file) {
		finish_mapping();
		write_mapping_sites();
	}
	if (!sites_only)
		flush_pending();
	if (!sites_only && nkernel_traces == 0)
		no_kernels();
	if (sites_only && nkernel_traces == 0)
		warn_msg("no GPU kernels in the mapping input; the mapping map is empty");
	free(pend);
	kernel_map_free(&kmap);
	u64map_free(&threads);
	strtab_free(km_str);
	return tool_finish(EXIT_OK);
}
