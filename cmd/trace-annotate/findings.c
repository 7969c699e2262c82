/*
 * The findings of one trace, placed: which records become which slices
 * on which track, and what each slice's args say (trace-annotate(1)).
 * Every slice's args carry "row", the id of the report row it belongs to
 * (triage-records(5)), so a reader goes from the report to the timeline
 * and back.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "json.h"
#include "kname.h"
#include "num.h"
#include "ta.h"
#include "xalloc.h"

/*
 * Instances marked per row (a kernel row, a graph escape, a fuse row): past
 * this many the rest are left unmarked and counted in a warning, so that
 * memory stays bounded on traces of millions of kernels.
 */
#define TA_MARKS_MAX 50000

static const char *const track_names[K_COUNT] = {
	"Steps", "GPU idle: waiting for the host", "GPU idle: other", "Graph escapes",
	"Top kernels", "Overlap: exposed", NULL, "Collectives: waiting",
	"Collectives: last to arrive"
};

static unsigned long long unmarked;

/* ---- args ---- */

static void
key(sbuf *a, const char *k)
{
	if (a->len)
		sb_addc(a, ',');
	json_quote(a, k, strlen(k));
	sb_addc(a, ':');
}

static void
arg_str(sbuf *a, const char *k, uint32_t v)
{
	if (v == NOSTR)
		return;
	key(a, k);
	json_quote(a, ta_s(v), strlen(ta_s(v)));
}

/*
 * A cell of several values (Python sites, CPU ops, candidate paths), which
 * the records join with "<br>" as the report's tables do, as an array of
 * strings, like the JSON document's list cells.
 */
static void
arg_list(sbuf *a, const char *k, uint32_t v)
{
	const char *p, *q;

	if (v == NOSTR)
		return;
	key(a, k);
	sb_addc(a, '[');
	for (p = ta_s(v);; p = q + 4) {
		q = strstr(p, "<br>");
		json_quote(a, p, q ? (size_t)(q - p) : strlen(p));
		if (!q)
			break;
		sb_addc(a, ',');
	}
	sb_addc(a, ']');
}

static void
arg_num(sbuf *a, const char *k, double v)
{
	char buf[40];

	if (!isfinite(v))
		return;
	key(a, k);
	sb_adds(a, num_json(v, buf));
}

static void
arg_int(sbuf *a, const char *k, long long v)
{
	key(a, k);
	sb_printf(a, "%lld", v);
}

/* A trace-relative time in args: on the trace's own clock, like ts. */
static void
arg_ts(sbuf *a, const struct ta_trace *tr, const char *k, double rel_us)
{
	double v = rel_us * 1000.0;

	if (!(v > -9e18 && v < 9e18))
		return;
	key(a, k);
	ta_ts_text(tr->base, llround(v), a);
}

/* The short name of a kernel name id, computed once per name. */
static uint32_t
short_of(uint32_t name)
{
	static imap cache;	/* name id -> short id + 1 */
	static sbuf b;
	uint64_t *v = imap_put(&cache, name, NULL);

	if (!*v) {
		kname_short(ta_s(name), strlen(ta_s(name)), KNAME_WIDTH, &b);
		*v = (uint64_t)strtab_intern(ta.str, sb_str(&b), b.len) + 1;
	}
	return (uint32_t)(*v - 1);
}

/* ---- slices ---- */

static void
step_slice(const struct ta_out *o, const struct ta_step *s, sbuf *name, sbuf *a)
{
	(void)o;
	sb_printf(name, "step %lld: %s", s->index, ta_s(s->name));
	arg_str(a, "row", s->id);
	arg_str(a, "stage", s->stage);
	arg_int(a, "index", s->index);
	arg_str(a, "marker", s->name);
	if (s->has_period)
		arg_num(a, "period_us", s->period_us);
	arg_num(a, "cpu_us", s->cpu_us);
	if (s->has_gpu) {
		arg_num(a, "gpu_busy_us", s->busy_us);
		arg_num(a, "gpu_span_us", s->span_us);
		if (s->has_period && s->period_us > 0)
			arg_num(a, "gpu_busy_pct", 100.0 * s->busy_us / s->period_us);
		arg_int(a, "kernels", s->kernels);
	}
	if (s->has_batch)
		arg_int(a, "batch", s->batch);
	if (s->has_tokens)
		arg_int(a, "tokens", s->tokens);
}

static void
gap_slice(const struct ta_out *o, const struct ta_find *f, sbuf *name, sbuf *a)
{
	const struct ta_gap *g = &ta.gap[f->ref];
	int host = o->track_kind[f->track] == K_IDLE_HOST;

	if (host)
		sb_printf(name, "waiting for the host: %s", g->launch != NOSTR ? ta_s(g->launch) :
		    "launch");
	else
		sb_adds(name, g->has_host ? "GPU idle, work submitted" : "GPU idle");
	arg_str(a, "row", f->aux != NOSTR ? ta.gpu[f->aux].id : NOSTR);
	arg_str(a, "gap", g->id);
	arg_str(a, "stage", g->stage);
	arg_ts(a, o->tr, "gap_ts", g->ts);
	arg_num(a, "gap_us", g->dur);
	if (g->has_host)
		arg_num(a, "host_us", g->host_us);
	if (g->has_sync)
		arg_num(a, "sync_us", g->sync_us);
	arg_str(a, "next_kernel", g->kernel);
	arg_str(a, "launch", g->launch);
	if (g->has_launch) {
		arg_ts(a, o->tr, "launch_ts", g->launch_ts);
		arg_num(a, "launch_dur_us", g->launch_dur);
		arg_ts(a, o->tr, "launch_end", g->launch_ts + g->launch_dur);
	}
}

static void
kernel_slice(const struct ta_krow *k, sbuf *name, sbuf *a)
{
	sb_adds(name, ta_s(short_of(k->kernel)));
	arg_str(a, "row", k->id);
	arg_str(a, "kernel", k->kernel);
	arg_str(a, "stage", k->stage);
	arg_str(a, "category", k->category);
	arg_num(a, "share_pct", k->share_pct);
	arg_num(a, "total_us", k->total_us);
	arg_int(a, "launches", k->launches);
	arg_list(a, "python_location", k->location);
	arg_list(a, "cpu_op", k->cpu_op);
}

static void
escape_slice(const struct ta_escape *e, sbuf *name, sbuf *a)
{
	sb_printf(name, "eager: %s", ta_s(short_of(e->kernel)));
	arg_str(a, "row", e->id);
	arg_str(a, "kernel", e->kernel);
	arg_str(a, "stage", e->stage);
	arg_int(a, "eager_launches", e->launches);
	arg_num(a, "total_us", e->total_us);
	arg_num(a, "share_pct", e->share_pct);
	arg_list(a, "python_location", e->location);
}

static void
exposed_slice(const struct ta_exposed *x, const struct ta_orow *r, sbuf *name, sbuf *a)
{
	sb_printf(name, "exposed: %s", ta_s(short_of(r->kernel)));
	arg_str(a, "row", r->id);
	arg_str(a, "kernel", r->kernel);
	arg_str(a, "stage", r->stage);
	arg_str(a, "priority", r->priority);
	arg_str(a, "verdict", r->verdict);
	arg_num(a, "exclusive_pct", 100.0 * r->exclusive_ratio);
	arg_num(a, "hidden_pct", 100.0 * r->hidden_ratio);
	arg_num(a, "share_pct", r->share_pct);
	arg_list(a, "python_scope", r->scope);
	arg_str(a, "recommendation", r->recommendation);
	arg_num(a, "exposed_us", x->exposed_us);
	arg_int(a, "exposed_intervals", x->intervals);
	arg_int(a, "intervals_marked", (long long)x->nspan);
}

static void
fuse_slice(const struct ta_frow *r, uint32_t kernel, sbuf *name, sbuf *a)
{
	sb_adds(name, ta_s(short_of(kernel)));
	arg_str(a, "row", r->id);
	arg_str(a, "pattern", r->pattern);
	arg_str(a, "kernel", kernel);
	arg_str(a, "stage", r->stage);
	arg_str(a, "confidence", r->confidence);
	arg_num(a, "related_us", r->related_us);
	arg_num(a, "share_pct", r->share_pct);
	arg_list(a, "candidate_path", r->candidate);
}

static void
coll_slice(const struct ta_out *o, const struct ta_find *f, sbuf *name, sbuf *a)
{
	const struct ta_coll *c = &ta.coll[f->ref];
	const struct ta_rankts *me = &c->r[f->aux];
	double lo = me->dur;
	size_t i;

	for (i = 0; i < c->nr; i++)
		if (c->r[i].dur < lo)
			lo = c->r[i].dur;
	if (o->track_kind[f->track] == K_WAIT) {
		if (c->has_last)
			sb_printf(name, "waiting for rank %lld: %s", c->last_rank, ta_s(c->kind));
		else
			sb_printf(name, "waiting: %s", ta_s(c->kind));
	} else {
		sb_printf(name, "last to arrive: %s", ta_s(c->kind));
	}
	arg_str(a, "row", c->id);
	arg_str(a, "kind", c->kind);
	arg_str(a, "kernel", c->name);
	arg_str(a, "stage", c->stage);
	arg_int(a, "ordinal", c->ordinal);
	arg_int(a, "rank", me->rank);
	arg_num(a, "wait_us", me->dur - lo);
	arg_num(a, "skew_us", c->skew_us);
	arg_num(a, "collective_wait_us", c->wait_us);
	if (c->has_last)
		arg_int(a, "last_rank", c->last_rank);
	if (o->rank && o->rank->straggler)
		arg_str(a, "straggler_row", o->rank->id);
}

/*
 * Slices of one row are alike but for their times: the name and args of
 * the kinds that mark a row's instances are made once per (kind, ref, aux)
 * and kept as strings.
 */
static void
cached(const struct ta_out *o, const struct ta_find *f, sbuf *name, sbuf *a)
{
	static imap cache[K_COUNT];	/* ref << 32 | aux -> name id << 32 | args id */
	int kind = o->track_kind[f->track], isnew;
	uint64_t *v = imap_put(&cache[kind], (uint64_t)f->ref << 32 | f->aux, &isnew);

	if (isnew) {
		switch (kind) {
		case K_KERNEL: kernel_slice(&ta.krow[f->ref], name, a); break;
		case K_ESCAPE: escape_slice(&ta.esc[f->ref], name, a); break;
		case K_EXPOSED: exposed_slice(&ta.exp[f->ref], &ta.orow[f->aux], name, a); break;
		default:
			fuse_slice(&ta.frow[f->ref], ta.frow[f->ref].kernel[f->aux], name, a);
			break;
		}
		*v = (uint64_t)strtab_intern(ta.str, sb_str(name), name->len) << 32 |
		    strtab_intern(ta.str, sb_str(a), a->len);
		return;
	}
	sb_adds(name, ta_s((uint32_t)(*v >> 32)));
	sb_adds(a, ta_s((uint32_t)*v));
}

void
ta_slice(const struct ta_out *o, const struct ta_find *f, sbuf *name, sbuf *args)
{
	switch (o->track_kind[f->track]) {
	case K_STEP: step_slice(o, &ta.step[f->ref], name, args); break;
	case K_IDLE_HOST:
	case K_IDLE_OTHER: gap_slice(o, f, name, args); break;
	case K_WAIT:
	case K_LAST: coll_slice(o, f, name, args); break;
	default: cached(o, f, name, args); break;
	}
}

/* ---- the findings of one trace ---- */

/* The gpu_time record of (t, stage), or NOSTR. */
static uint32_t
gpu_row(long long t, uint32_t stage)
{
	size_t i;

	for (i = 0; i < ta.ngpu; i++)
		if (ta.gpu[i].t == t && ta.gpu[i].stage == stage)
			return (uint32_t)i;
	return NOSTR;
}

static void
steps(struct ta_out *o)
{
	uint32_t tr = ta_track(o, K_STEP, track_names[K_STEP]);
	sbuf cn = SBUF_INIT;
	size_t i, j;

	for (i = 0; i < ta.nstep; i++) {
		const struct ta_step *s = &ta.step[i];
		double end;
		if (s->t != o->tr->t)
			continue;
		end = s->ts + (s->has_period ? s->period_us : s->cpu_us);
		ta_add(o, tr, s->ts, end, (uint32_t)i, 0);
		if (!s->has_gpu || !s->has_period || !(s->period_us > 0))
			continue;
		/* GPU busy over the step's period; 0 after it unless the stage's next step starts there */
		sb_reset(&cn);
		sb_printf(&cn, "GPU busy %% (%s)", ta_s(s->stage));
		ta_counter(o, sb_str(&cn), s->ts, "busy_pct", 100.0 * s->busy_us / s->period_us);
		for (j = i + 1; j < ta.nstep && !(ta.step[j].t == s->t &&
		    ta.step[j].stage == s->stage); j++)
			;
		if (j == ta.nstep || ta.step[j].ts > end)
			ta_counter(o, sb_str(&cn), end, "busy_pct", 0);
	}
	sb_free(&cn);
}

/*
 * The idle gaps: a stage's gaps are those of its own kernels, so with
 * several stages (their kernels interleaved) each stage gets tracks of its
 * own, "GPU idle: other (decode)".
 */
static void
gaps(struct ta_out *o)
{
	uint32_t host = ta_track(o, K_IDLE_HOST, track_names[K_IDLE_HOST]);
	uint32_t other = ta_track(o, K_IDLE_OTHER, track_names[K_IDLE_OTHER]);
	uint32_t first = NOSTR;
	int several = 0;
	sbuf tn = SBUF_INIT;
	size_t i;

	for (i = 0; i < ta.ngap; i++)
		if (ta.gap[i].t == o->tr->t) {
			if (first == NOSTR)
				first = ta.gap[i].stage;
			several |= ta.gap[i].stage != first;
		}
	for (i = 0; i < ta.ngap; i++) {
		const struct ta_gap *g = &ta.gap[i];
		uint32_t row;
		double h;
		if (g->t != o->tr->t)
			continue;
		if (several) {
			sb_reset(&tn);
			sb_printf(&tn, "%s (%s)", track_names[K_IDLE_HOST], ta_s(g->stage));
			host = ta_track(o, K_IDLE_HOST, sb_str(&tn));
			sb_reset(&tn);
			sb_printf(&tn, "%s (%s)", track_names[K_IDLE_OTHER], ta_s(g->stage));
			other = ta_track(o, K_IDLE_OTHER, sb_str(&tn));
		}
		row = gpu_row(g->t, g->stage);
		/* the host-bound part is the gap's beginning: until the launch call ended */
		h = g->has_host ? (g->host_us < 0 ? 0 : g->host_us > g->dur ? g->dur : g->host_us) : 0;
		if (h > 0)
			ta_add(o, host, g->ts, g->ts + h, (uint32_t)i, row);
		if (g->dur - h > 0)
			ta_add(o, other, g->ts + h, g->ts + g->dur, (uint32_t)i, row);
	}
	sb_free(&tn);
}

static void
exposed(struct ta_out *o)
{
	uint32_t tr = ta_track(o, K_EXPOSED, track_names[K_EXPOSED]);
	size_t i, j, k;

	for (i = 0; i < ta.nexp; i++) {
		const struct ta_exposed *x = &ta.exp[i];
		if (x->t != o->tr->t)
			continue;
		for (j = 0; j < ta.norow && ta.orow[j].id != x->row; j++)
			;
		if (j == ta.norow)
			continue;	/* a row this stream does not hold */
		for (k = 0; k < x->nspan; k++)
			ta_add(o, tr, x->span[2 * k], x->span[2 * k] + x->span[2 * k + 1], (uint32_t)i,
			    (uint32_t)j);
	}
}

static void
collectives(struct ta_out *o)
{
	const struct ta_trace *t = o->tr;
	uint32_t wait = ta_track(o, K_WAIT, track_names[K_WAIT]);
	uint32_t last = ta_track(o, K_LAST, track_names[K_LAST]);
	size_t i, j, k;

	if (!t->has_rank)
		return;
	for (i = 0; i < ta.ncoll; i++) {
		const struct ta_coll *c = &ta.coll[i];
		const struct ta_rankrow *rr = NULL;
		double lo, own, shift;
		for (k = 0; k < ta.nrrow; k++)
			if (ta.rrow[k].stage == c->stage && ta.rrow[k].rank == t->rank)
				rr = &ta.rrow[k];
		for (j = 0; j < c->nr && c->r[j].rank != t->rank; j++)
			;
		if (!rr || j == c->nr)
			continue;
		o->rank = rr;
		lo = c->r[j].dur;
		for (k = 0; k < c->nr; k++)
			if (c->r[k].dur < lo)
				lo = c->r[k].dur;
		/* back from the aligned clock of rank-skew to the trace's own (rank-skew(1)) */
		shift = rr->has_base ? (double)(t->base - rr->base) : 0;
		own = c->r[j].ts - rr->offset_us - shift;
		/* the last to arrive waited for nobody: its slice is the whole collective */
		if (c->has_last && c->last_rank == t->rank)
			ta_add(o, last, own, own + c->r[j].dur, (uint32_t)i, (uint32_t)j);
		else if (c->r[j].dur - lo > 0)
			ta_add(o, wait, own, own + (c->r[j].dur - lo), (uint32_t)i, (uint32_t)j);
	}
}

/* The rows whose instances are marked, by (stage, canonical name) of this trace. */
struct index {
	imap krow, esc;		/* key -> index + 1 */
	imap fuse;		/* key -> first link + 1 */
	struct link { uint32_t frow, k, next; } *link;	/* next: link + 1, 0 the end */
	size_t nlink, caplink;
	imap eff;		/* key -> eff accumulator + 1 */
	struct acc { double flops, bytes; int has_flops, has_bytes; unsigned long long n; } *acc;
	size_t nacc, capacc;
	unsigned *marks_k, *marks_e, *marks_f;	/* per row: instances marked */
};

static uint64_t
key2(uint32_t stage, uint32_t canon)
{
	return (uint64_t)stage << 32 | canon;
}

static void
index_build(struct index *x, long long t)
{
	size_t i, j;

	memset(x, 0, sizeof *x);
	for (i = 0; i < ta.nkrow; i++)
		if (ta.krow[i].t == t)
			imap_insert(&x->krow, key2(ta.krow[i].stage, ta.krow[i].kernel), i + 1, NULL);
	for (i = 0; i < ta.nesc; i++)
		if (ta.esc[i].t == t)
			imap_insert(&x->esc, key2(ta.esc[i].stage, ta.esc[i].kernel), i + 1, NULL);
	for (i = 0; i < ta.nfrow; i++) {
		if (ta.frow[i].t != t)
			continue;
		for (j = 0; j < ta.frow[i].nkernel; j++) {
			uint64_t *v = imap_put(&x->fuse, key2(ta.frow[i].stage, ta.frow[i].kernel[j]),
			    NULL);
			xgrow(&x->link, &x->caplink, x->nlink + 1, sizeof *x->link);
			x->link[x->nlink].frow = (uint32_t)i;
			x->link[x->nlink].k = (uint32_t)j;
			x->link[x->nlink].next = (uint32_t)*v;
			*v = ++x->nlink;
		}
	}
	for (i = 0; i < ta.neff; i++) {
		uint64_t *v;
		int isnew;
		if (ta.eff[i].has_t && ta.eff[i].t != t)
			continue;
		v = imap_put(&x->eff, key2(ta.eff[i].stage, ta.eff[i].kernel), &isnew);
		if (isnew) {
			xgrow(&x->acc, &x->capacc, x->nacc + 1, sizeof *x->acc);
			memset(&x->acc[x->nacc], 0, sizeof *x->acc);
			*v = ++x->nacc;
		}
		if (ta.eff[i].has_flops) {
			x->acc[*v - 1].flops += ta.eff[i].flops;
			x->acc[*v - 1].has_flops = 1;
		}
		if (ta.eff[i].has_bytes) {
			x->acc[*v - 1].bytes += ta.eff[i].bytes;
			x->acc[*v - 1].has_bytes = 1;
		}
	}
	x->marks_k = xcalloc(ta.nkrow + 1, sizeof *x->marks_k);
	x->marks_e = xcalloc(ta.nesc + 1, sizeof *x->marks_e);
	x->marks_f = xcalloc(ta.nfrow + 1, sizeof *x->marks_f);
}

static void
index_free(struct index *x)
{
	imap_free(&x->krow);
	imap_free(&x->esc);
	imap_free(&x->fuse);
	imap_free(&x->eff);
	free(x->link);
	free(x->acc);
	free(x->marks_k);
	free(x->marks_e);
	free(x->marks_f);
}

/* Count a mark of a row; 0 when the row has its TA_MARKS_MAX already. */
static int
mark(unsigned *n)
{
	if (*n >= TA_MARKS_MAX) {
		unmarked++;
		return 0;
	}
	(*n)++;
	return 1;
}

/* Read the spool from its start; fn for each item of trace t. */
static void
each_item(long long t, void (*fn)(void *ctx, const struct ta_kinst *k), void *ctx)
{
	struct ta_kinst k;

	rewind(ta.spool);
	while (fread(&k, sizeof k, 1, ta.spool) == 1)
		if (k.t == t)
			fn(ctx, &k);
	if (ferror(ta.spool))
		die(EXIT_DATA, "cannot read the temporary file of kernels: %s", strerror(errno));
}

struct marking {
	struct ta_out *o;
	struct index *x;
	uint32_t kernel, escape;
};

static void
mark_item(void *ctx, const struct ta_kinst *k)
{
	struct marking *m = ctx;
	struct ta_out *o = m->o;
	uint64_t key = key2(k->stage, k->canon), *v, li;
	sbuf tn = SBUF_INIT;

	if ((v = imap_get(&m->x->krow, key)) && mark(&m->x->marks_k[*v - 1]))
		ta_add(o, m->kernel, k->ts, k->ts + k->dur, (uint32_t)(*v - 1), 0);
	/* eager: a kernel not submitted by a graph launch (step-stats' rule) */
	if (k->is_kernel && (v = imap_get(&m->x->esc, key)) &&
	    !(k->has_corr && imap_get(&o->tr->graph_corr, (uint64_t)k->corr)) &&
	    mark(&m->x->marks_e[*v - 1]))
		ta_add(o, m->escape, k->ts, k->ts + k->dur, (uint32_t)(*v - 1), 0);
	v = imap_get(&m->x->fuse, key);
	for (li = v ? *v : 0; li; li = m->x->link[li - 1].next) {
		const struct link *l = &m->x->link[li - 1];
		if (mark(&m->x->marks_f[l->frow])) {
			sb_reset(&tn);
			sb_printf(&tn, "Fuse: %s", ta_s(ta.frow[l->frow].pattern));
			ta_add(o, ta_track(o, K_FUSE, sb_str(&tn)), k->ts, k->ts + k->dur, l->frow,
			    l->k);
		}
	}
	if ((v = imap_get(&m->x->eff, key)))
		m->x->acc[*v - 1].n++;
	sb_free(&tn);
}

/*
 * Achieved TFLOP/s and GB/s of each step's GPU window (from its first
 * kernel's start over its GPU span), when kernel_eff records are present:
 * the modeled kernels starting in the window, each with its row's FLOPs
 * and bytes per launch (the row's totals over its launches), over the
 * summed durations of the kernels that have them (a memory-bound kernel
 * modeled by its bytes alone dilutes no FLOP rate).
 */
struct window {
	uint32_t stage;
	double ts, end, flops, bytes, flops_us, bytes_us;
};

struct rating {
	struct index *x;
	struct window *w;
	size_t nw;
};

static int
window_cmp(const void *pa, const void *pb)
{
	const struct window *a = pa, *b = pb;

	if (a->stage != b->stage)
		return a->stage < b->stage ? -1 : 1;
	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

static void
rate_item(void *ctx, const struct ta_kinst *k)
{
	struct rating *r = ctx;
	const uint64_t *v = imap_get(&r->x->eff, key2(k->stage, k->canon));
	size_t lo = 0, hi = r->nw, mid;
	const struct acc *a;

	if (!v)
		return;
	a = &r->x->acc[*v - 1];
	while (lo < hi) {	/* the last window of the stage starting at or before the kernel */
		mid = lo + (hi - lo) / 2;
		if (r->w[mid].stage < k->stage ||
		    (r->w[mid].stage == k->stage && r->w[mid].ts <= k->ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || r->w[lo - 1].stage != k->stage || k->ts >= r->w[lo - 1].end || !a->n)
		return;
	if (a->has_flops) {
		r->w[lo - 1].flops += a->flops / (double)a->n;
		r->w[lo - 1].flops_us += k->dur;
	}
	if (a->has_bytes) {
		r->w[lo - 1].bytes += a->bytes / (double)a->n;
		r->w[lo - 1].bytes_us += k->dur;
	}
}

static void
rates(struct ta_out *o, struct index *x)
{
	struct rating r = { x, NULL, 0 };
	size_t cap = 0, i;
	sbuf tf = SBUF_INIT, gb = SBUF_INIT;

	for (i = 0; i < ta.nstep; i++) {
		const struct ta_step *s = &ta.step[i];
		if (s->t != o->tr->t || !s->has_gpu_ts || !s->has_gpu)
			continue;
		xgrow(&r.w, &cap, r.nw + 1, sizeof *r.w);
		memset(&r.w[r.nw], 0, sizeof *r.w);
		r.w[r.nw].stage = s->stage;
		r.w[r.nw].ts = s->gpu_ts;
		r.w[r.nw++].end = s->gpu_ts + s->span_us;
	}
	xqsort(r.w, r.nw, sizeof *r.w, window_cmp);
	each_item(o->tr->t, rate_item, &r);
	for (i = 0; i < r.nw; i++) {
		const struct window *w = &r.w[i];
		int last = i + 1 == r.nw || r.w[i + 1].stage != w->stage || r.w[i + 1].ts > w->end;
		sb_reset(&tf);
		sb_reset(&gb);
		sb_printf(&tf, "Achieved TFLOP/s (%s)", ta_s(w->stage));
		sb_printf(&gb, "Achieved GB/s (%s)", ta_s(w->stage));
		/* FLOP per microsecond / 1e6 is TFLOP/s; bytes per microsecond / 1e3 is GB/s */
		if (w->flops_us > 0) {
			ta_counter(o, sb_str(&tf), w->ts, "tflops", w->flops / w->flops_us / 1e6);
			if (last)
				ta_counter(o, sb_str(&tf), w->end, "tflops", 0);
		}
		if (w->bytes_us > 0) {
			ta_counter(o, sb_str(&gb), w->ts, "gbps", w->bytes / w->bytes_us / 1e3);
			if (last)
				ta_counter(o, sb_str(&gb), w->end, "gbps", 0);
		}
	}
	free(r.w);
	sb_free(&tf);
	sb_free(&gb);
}

void
ta_findings(struct ta_out *o)
{
	struct index x;
	struct marking m;
	size_t i;

	for (i = 0; i < K_COUNT; i++)	/* the tracks in display order, made before any lane */
		if (track_names[i])
			ta_track(o, (int)i, track_names[i]);
	steps(o);
	gaps(o);
	index_build(&x, o->tr->t);
	m.o = o;
	m.x = &x;
	m.kernel = ta_track(o, K_KERNEL, track_names[K_KERNEL]);
	m.escape = ta_track(o, K_ESCAPE, track_names[K_ESCAPE]);
	each_item(o->tr->t, mark_item, &m);
	exposed(o);
	collectives(o);
	if (x.nacc)
		rates(o, &x);
	index_free(&x);
	if (unmarked)
		warn_msg("trace %lld: %llu kernel instances past %d per row left unmarked",
		    o->tr->t, unmarked, TA_MARKS_MAX);
	unmarked = 0;
}
