/*
 * What trace-diff writes: the two sides (diff_input), per stage the GPU
 * time figures (diff_metric), the kernel rows (diff_row), the fuse-row
 * transitions (diff_fuse), the overlap rows (diff_overlap) and the stage's
 * verdict, then the overall verdict; and the gate's decision.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "err.h"
#include "json.h"
#include "num.h"
#include "rec.h"
#include "rules.h"
#include "opt.h"
#include "xalloc.h"

static const char *const status_name[] = { "same", "changed", "new", "removed" };

enum { V_NEUTRAL, V_IMPROVEMENT, V_REGRESSION, V_INCOMPARABLE };
static const char *const verdict_name[] = { "neutral", "improvement", "regression",
	"incomparable" };

/* A stage's decision, kept for the overall verdict and the messages. */
struct sverdict {
	uint32_t stage;
	int v;
	const char *metric;
	double base, cand, delta_pct;
	int has_pct;
	const char *reason;	/* static text, or NULL */
	struct scmp *cmp;
	double shared;		/* overall: shared_family_pct's smaller side */
	int has_shared;
};

/* ---- helpers ---- */

static void
cstr(enum rec_member m, const strtab *str, uint32_t id)
{
	rec_str(m, strtab_str(str, id), strtab_len(str, id));
}

/* Stage order (side.c's): extend, decode, all, then others by name. */
static const strtab *order_str;

static int
stage_order(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	const char *x = strtab_str(order_str, a), *y = strtab_str(order_str, b);
	int ia = stage_index(x), ib = stage_index(y);

	return ia != ib ? (ia < ib ? -1 : 1) : strcmp(x, y);
}

static int
dbl_cmp(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return a < b ? -1 : a > b;
}

/* Nearest-rank median of n > 0 step figures (as step-stats computes p50). */
static double
median(const double *x, size_t n)
{
	double *v = xmalloc(n * sizeof *v), r;
	size_t k;

	memcpy(v, x, n * sizeof *v);
	xqsort(v, n, sizeof *v, dbl_cmp);
	k = (n + 1) / 2;	/* ceil(n / 2): at least half at or below */
	r = v[k - 1];
	free(v);
	return r;
}

/* A kernel name for a message: cut to 60 bytes at a character boundary. */
static const char *
short_for_msg(const char *s, sbuf *out)
{
	size_t n = strlen(s), cut = 57;

	sb_reset(out);
	if (n <= 60)
		return s;
	while (cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80)
		cut--;
	sb_add(out, s, cut);
	sb_adds(out, "...");
	return sb_str(out);
}

/* ---- the two sides ---- */

static void
write_input(const struct side *s, const char *which, const strtab *str)
{
	sbuf j = SBUF_INIT;
	size_t i;
	int any = 0;

	rec_begin(RT_diff_input);
	rec_cstr(RM_diff_input_side, which);
	rec_cstr(RM_diff_input_path, s->path);
	rec_cstr(RM_diff_input_mode, s->dual ? "mapping/formal" : "single");
	rec_cstr(RM_diff_input_framework, s->framework);
	if (s->model)
		rec_cstr(RM_diff_input_model, s->model);
	if (s->model_family)
		rec_cstr(RM_diff_input_model_family, s->model_family);
	if (s->gpu)
		rec_cstr(RM_diff_input_gpu, s->gpu);
	if (s->world > 0)
		rec_int(RM_diff_input_world_size, s->world);
	if (s->health)
		rec_cstr(RM_diff_input_health, s->health);
	sb_addc(&j, '[');
	for (i = 0; i < s->nst; i++) {
		if (i)
			sb_addc(&j, ',');
		json_quote(&j, strtab_str(str, s->st[i].name), strtab_len(str, s->st[i].name));
	}
	sb_addc(&j, ']');
	rec_json(RM_diff_input_stages, j.s, j.len);
	sb_reset(&j);
	sb_addc(&j, '{');
	for (i = 0; i < s->nst; i++) {
		if (s->st[i].steps <= 0)
			continue;
		if (any++)
			sb_addc(&j, ',');
		json_quote(&j, strtab_str(str, s->st[i].name), strtab_len(str, s->st[i].name));
		sb_printf(&j, ":%lld", s->st[i].steps);
	}
	sb_addc(&j, '}');
	if (any)
		rec_json(RM_diff_input_steps, j.s, j.len);
	rec_end();
	sb_free(&j);
}

/*
 * Under this share of either run's kernel time in kernel families both runs
 * have, and without a model both name, the runs are not the same workload
 * (issue 25: a dense 8B model on MI300X against a MoE on B300 was "an
 * improvement of 35.6 %").
 */
#define SHARED_MIN_PCT (100.0 / 3)

/*
 * Why the runs cannot be compared, appended to why ("" when they can),
 * from every identity the runs carry: another model or model family (when
 * both name one), another framework, another world size, other stages;
 * and, when they do not both name one model, how little of their kernel
 * time is in kernel families both have (*shared, percent: the smaller of
 * the two sides' shares).
 */
static void
comparability(const struct side *b, const struct side *c, strtab *str, sbuf *why,
    double *shared)
{
	size_t i;
	int same = b->nst == c->nst, one_model;

	if (b->model && c->model && strcmp(b->model, c->model) != 0)
		sb_printf(why, "%smodel '%s' vs '%s'", why->len ? "; " : "", b->model, c->model);
	if (b->model_family && c->model_family && strcmp(b->model_family, c->model_family) != 0)
		sb_printf(why, "%smodel family %s vs %s", why->len ? "; " : "", b->model_family,
		    c->model_family);
	if (strcmp(b->framework, c->framework) != 0)
		sb_printf(why, "%sframework %s vs %s", why->len ? "; " : "", b->framework,
		    c->framework);
	if (b->world > 0 && c->world > 0 && b->world != c->world)
		sb_printf(why, "%sworld size %lld vs %lld (a rank's share of the work differs)",
		    why->len ? "; " : "", b->world, c->world);
	*shared = shared_family_pct(b, c, str);
	{
		double other = shared_family_pct(c, b, str);
		if (other < *shared)
			*shared = other;
	}
	one_model = (b->model && c->model && strcmp(b->model, c->model) == 0) ||
	    (b->model_family && c->model_family && strcmp(b->model_family, c->model_family) == 0);
	if (!one_model && *shared < SHARED_MIN_PCT)
		sb_printf(why, "%sonly %.0f%% of the GPU time is in kernel families both runs have "
		    "(under a third), and they do not name one model (--model NAME, or --force)",
		    why->len ? "; " : "", *shared);
	for (i = 0; same && i < b->nst; i++)
		same = b->st[i].name == c->st[i].name;
	if (!same) {
		sb_printf(why, "%sstages ", why->len ? "; " : "");
		for (i = 0; i < b->nst; i++)
			sb_printf(why, "%s%s", i ? "," : "", strtab_str(str, b->st[i].name));
		sb_adds(why, b->nst ? " vs " : "(none) vs ");
		for (i = 0; i < c->nst; i++)
			sb_printf(why, "%s%s", i ? "," : "", strtab_str(str, c->st[i].name));
		if (!c->nst)
			sb_adds(why, "(none)");
	}
}

/* ---- per stage ---- */

static void
metric_begin(const strtab *str, uint32_t stage, const char *name, double b, double c,
    int ratio, int per_step)
{
	rec_begin(RT_diff_metric);
	cstr(RM_diff_metric_stage, str, stage);
	rec_cstr(RM_diff_metric_metric, name);
	rec_num(RM_diff_metric_base, b);
	rec_num(RM_diff_metric_cand, c);
	rec_num(RM_diff_metric_delta, c - b);
	/*
	 * a percentage's change is in points: no relative change of it; nor of
	 * a base under a hundredth of the other side ("+56523.7%" of 0.82 ms
	 * idle is noise): the change itself says it
	 */
	if (!ratio && b != 0 && fabs(b) * 100 >= fabs(c))
		rec_num(RM_diff_metric_delta_pct, 100 * (c - b) / b);
	if (per_step)
		rec_bool(RM_diff_metric_per_step, 1);
}

static void
metric(const strtab *str, uint32_t stage, const char *name, double b, double c, int ratio,
    int per_step)
{
	metric_begin(str, stage, name, b, c, ratio, per_step);
	rec_end();
}

/* The median GPU busy time of the stage's steps, or -1 unless every step has it. */
static double
busy_p50(const struct stage *st)
{
	return st->nstep && st->nbusy == st->nstep ? median(st->step_busy_us, st->nbusy) : -1;
}

static void
write_metrics(const struct scmp *m, const strtab *str)
{
	const struct stage *b = m->b, *c = m->c;
	double bs = m->bscale, cs = m->cscale;

	metric(str, m->name, "kernel_us", b->total_us * bs, c->total_us * cs, 0, m->per_step);
	if (b->has_gpu && c->has_gpu) {
		metric(str, m->name, "busy_us", b->busy_us * bs, c->busy_us * cs, 0, m->per_step);
		metric(str, m->name, "idle_us", b->idle_us * bs, c->idle_us * cs, 0, m->per_step);
		if (b->has_idle_launch && c->has_idle_launch)
			metric(str, m->name, "idle_launch_us", b->idle_launch_us * bs,
			    c->idle_launch_us * cs, 0, m->per_step);
		if (b->has_idle_sync && c->has_idle_sync)
			metric(str, m->name, "idle_sync_us", b->idle_sync_us * bs,
			    c->idle_sync_us * cs, 0, m->per_step);
		if (b->has_graph && c->has_graph)
			metric(str, m->name, "graph_pct", pct(b->graph_us, b->busy_us),
			    pct(c->graph_us, c->busy_us), 1, 0);
	}
	if (b->nstep && c->nstep) {
		double bp = median(b->step_us, b->nstep), cp = median(c->step_us, c->nstep);
		double bb = busy_p50(b), cb = busy_p50(c);
		/*
		 * The period is of the host's step markers.  When the steps' GPU
		 * busy median is more than 5 % over it (step-stats' rule for
		 * steps_host_ahead), the host queued them ahead of the GPU and the
		 * period's change is the host's; the GPU busy per step is the
		 * GPU's step time, compared when every step of both runs has it.
		 */
		metric_begin(str, m->name, "step_p50_us", bp, cp, 0, 0);
		if (bp > 0 && bb > 1.05 * bp)
			rec_bool(RM_diff_metric_base_host_ahead, 1);
		if (cp > 0 && cb > 1.05 * cp)
			rec_bool(RM_diff_metric_cand_host_ahead, 1);
		rec_end();
		if (bb >= 0 && cb >= 0)
			metric(str, m->name, "step_busy_p50_us", bb, cb, 0, 0);
	}
	if (b->steps > 0 && c->steps > 0)
		metric(str, m->name, "steps", (double)b->steps, (double)c->steps, 0, 0);
}

static void
write_rows(const struct scmp *m, const strtab *str)
{
	static const char *const match_name[] = { NULL, "name", "family" };
	size_t i;

	for (i = 0; i < m->nr; i++) {
		const struct drow *d = &m->r[i];
		rec_begin(RT_diff_row);
		cstr(RM_diff_row_stage, str, m->name);
		cstr(RM_diff_row_kernel, str, d->kernel);
		if (d->base_kernel != NOSTR)
			cstr(RM_diff_row_base_kernel, str, d->base_kernel);
		cstr(RM_diff_row_category, str, d->cat);
		rec_cstr(RM_diff_row_status, status_name[d->status]);
		if (d->match != M_NONE)
			rec_cstr(RM_diff_row_match, match_name[d->match]);
		rec_num(RM_diff_row_base_us, d->base_us);
		rec_num(RM_diff_row_cand_us, d->cand_us);
		rec_num(RM_diff_row_delta_us, d->delta_us);
		if (d->base_us > 0)
			rec_num(RM_diff_row_delta_pct, 100 * d->delta_us / d->base_us);
		rec_int(RM_diff_row_base_launches, d->bl);
		rec_int(RM_diff_row_cand_launches, d->cl);
		rec_num(RM_diff_row_base_share_pct, d->bshare);
		rec_num(RM_diff_row_cand_share_pct, d->cshare);
		if (d->bnames > 1 || d->cnames > 1) {
			rec_int(RM_diff_row_base_names, d->bnames);
			rec_int(RM_diff_row_cand_names, d->cnames);
		}
		if (m->per_step)
			rec_bool(RM_diff_row_per_step, 1);
		rec_bool(RM_diff_row_shown, d->shown);
		if (d->loc != NOSTR)
			cstr(RM_diff_row_location, str, d->loc);
		if (d->base_loc != NOSTR)
			cstr(RM_diff_row_base_location, str, d->base_loc);
		rec_end();
	}
}

/*
 * A fuse pattern's transition between the runs; each status is "in use",
 * "missing" (an opportunity) or NOSTR (no row).
 */
static const char *
transition(const strtab *str, uint32_t bs, uint32_t cs)
{
	int bu = bs != NOSTR && strcmp(strtab_str(str, bs), "in use") == 0;
	int cu = cs != NOSTR && strcmp(strtab_str(str, cs), "in use") == 0;

	if (bs != NOSTR && cs != NOSTR && bu == cu)
		return "same";
	if (bu)
		return "lost";		/* a fusion that ran no longer does */
	if (bs == NOSTR)
		return cu ? "gained" : "appeared";
	return cu ? "fused" : "resolved";
}

static void
fuse_one(const struct scmp *m, const strtab *str, uint32_t pat, const struct frow *b,
    const struct frow *c)
{
	rec_begin(RT_diff_fuse);
	cstr(RM_diff_fuse_stage, str, m->name);
	cstr(RM_diff_fuse_pattern, str, pat);
	rec_cstr(RM_diff_fuse_transition, transition(str, b ? b->status : NOSTR,
	    c ? c->status : NOSTR));
	if (b)
		cstr(RM_diff_fuse_base_status, str, b->status);
	if (c)
		cstr(RM_diff_fuse_cand_status, str, c->status);
	if (b)
		rec_num(RM_diff_fuse_base_us, b->us * m->bscale);
	if (c)
		rec_num(RM_diff_fuse_cand_us, c->us * m->cscale);
	if (m->per_step)
		rec_bool(RM_diff_fuse_per_step, 1);
	rec_end();
}

/* The baseline's patterns in its order, then the candidate's new ones. */
static void
write_fuse(const struct scmp *m, const strtab *str)
{
	size_t i, j;

	for (i = 0; m->b && i < m->b->nf; i++) {
		const struct frow *c = NULL;
		for (j = 0; m->c && j < m->c->nf && !c; j++)
			if (m->c->f[j].pattern == m->b->f[i].pattern)
				c = &m->c->f[j];
		fuse_one(m, str, m->b->f[i].pattern, &m->b->f[i], c);
	}
	for (j = 0; m->c && j < m->c->nf; j++) {
		int seen = 0;
		for (i = 0; m->b && i < m->b->nf && !seen; i++)
			seen = m->b->f[i].pattern == m->c->f[j].pattern;
		if (!seen)
			fuse_one(m, str, m->c->f[j].pattern, NULL, &m->c->f[j]);
	}
}

struct opair {
	uint32_t kernel;
	const struct orow *b, *c;
	double key;
};

static int
opair_cmp(const void *pa, const void *pb)
{
	const struct opair *a = pa, *b = pb;

	if (a->key != b->key)
		return a->key > b->key ? -1 : 1;
	return strcmp(strtab_str(order_str, a->kernel), strtab_str(order_str, b->kernel));
}

/* Overlap rows by kernel name, the larger time first; only when both runs have overlap rows. */
static void
write_overlap(const struct scmp *m, const strtab *str)
{
	size_t nb = m->b ? m->b->no : 0, nc = m->c ? m->c->no : 0, n = 0, i, j;
	struct opair *v = xmalloc((nb + nc + 1) * sizeof *v);

	for (i = 0; i < nb; i++) {
		v[n].kernel = m->b->o[i].kernel;
		v[n].b = &m->b->o[i];
		v[n].c = NULL;
		for (j = 0; j < nc && !v[n].c; j++)
			if (m->c->o[j].kernel == v[n].kernel)
				v[n].c = &m->c->o[j];
		n++;
	}
	for (j = 0; j < nc; j++) {
		for (i = 0; i < nb && m->b->o[i].kernel != m->c->o[j].kernel; i++)
			;
		if (i < nb)
			continue;
		v[n].kernel = m->c->o[j].kernel;
		v[n].b = NULL;
		v[n++].c = &m->c->o[j];
	}
	for (i = 0; i < n; i++) {
		double bu = v[i].b ? v[i].b->us * m->bscale : 0, cu = v[i].c ? v[i].c->us * m->cscale : 0;
		v[i].key = bu > cu ? bu : cu;
	}
	order_str = str;
	xqsort(v, n, sizeof *v, opair_cmp);
	for (i = 0; i < n; i++) {
		rec_begin(RT_diff_overlap);
		cstr(RM_diff_overlap_stage, str, m->name);
		cstr(RM_diff_overlap_kernel, str, v[i].kernel);
		if (v[i].b)
			rec_num(RM_diff_overlap_base_us, v[i].b->us * m->bscale);
		if (v[i].c)
			rec_num(RM_diff_overlap_cand_us, v[i].c->us * m->cscale);
		if (v[i].b && v[i].c)
			rec_num(RM_diff_overlap_delta_us, v[i].c->us * m->cscale -
			    v[i].b->us * m->bscale);
		if (v[i].b)
			rec_num(RM_diff_overlap_base_exclusive_pct, 100 * v[i].b->excl);
		if (v[i].c)
			rec_num(RM_diff_overlap_cand_exclusive_pct, 100 * v[i].c->excl);
		if (v[i].b)
			cstr(RM_diff_overlap_base_verdict, str, v[i].b->verdict);
		if (v[i].c)
			cstr(RM_diff_overlap_cand_verdict, str, v[i].c->verdict);
		if (m->per_step)
			rec_bool(RM_diff_overlap_per_step, 1);
		rec_end();
	}
	free(v);
}

/*
 * The kernels that account for a stage's change: the rows moving the same
 * way as the stage, largest first, until they make up 80 % of its change
 * (at most five).  As a JSON array of {kernel, status, delta_us}.
 */
static void
accounting(const struct scmp *m, const strtab *str, double net, sbuf *j)
{
	double sum = 0;
	size_t i, n = 0;

	sb_addc(j, '[');
	for (i = 0; i < m->nr && n < 5 && fabs(sum) < 0.8 * fabs(net); i++) {
		const struct drow *d = &m->r[i];
		char buf[32];
		if (d->delta_us == 0 || (d->delta_us > 0) != (net > 0))
			continue;
		if (n++)
			sb_addc(j, ',');
		sb_adds(j, "{\"kernel\":");
		json_quote(j, strtab_str(str, d->kernel), strtab_len(str, d->kernel));
		sb_printf(j, ",\"status\":\"%s\",\"delta_us\":%s}", status_name[d->status],
		    num_json(d->delta_us, buf));
		sum += d->delta_us;
	}
	sb_addc(j, ']');
}

static void
stage_verdict(struct scmp *m, const strtab *str, const struct opts *o, struct sverdict *v)
{
	memset(v, 0, sizeof *v);
	v->stage = m->name;
	v->cmp = m;
	if (!m->b || !m->c) {
		v->v = V_INCOMPARABLE;
		v->reason = m->b ? "the stage is only in the baseline" :
		    "the stage is only in the candidate";
		return;
	}
	v->metric = m->per_step ? "kernel_us_per_step" : "kernel_us";
	v->base = m->b->total_us * m->bscale;
	v->cand = m->c->total_us * m->cscale;
	if (v->base <= 0 && v->cand > 0) {
		v->v = V_INCOMPARABLE;
		v->reason = "no GPU time in the baseline's stage";
		return;
	}
	v->has_pct = 1;
	v->delta_pct = v->base > 0 ? 100 * (v->cand - v->base) / v->base : 0;
	v->v = v->delta_pct > o->threshold ? V_REGRESSION :
	    v->delta_pct < -o->threshold ? V_IMPROVEMENT : V_NEUTRAL;
}

/*
 * The change of a stage's communication kernels (category communication),
 * scaled as the rows are: the part of a regression a collective accounts
 * for, which includes waiting for the other ranks.
 */
static double
comm_delta(const struct scmp *m, const strtab *str)
{
	double d = 0;
	size_t i;

	for (i = 0; i < m->nr; i++)
		if (m->r[i].cat != NOSTR && strcmp(strtab_str(str, m->r[i].cat), "communication") == 0)
			d += m->r[i].delta_us;
	return d;
}

/*
 * The verdict's reason: `reason` as given, and for a regression or an
 * improvement whose kernels include collectives, that a collective's time
 * includes waiting for the other ranks (issue 25), split by rank-skew's
 * wait when both runs were analyzed with --all-ranks.
 */
static void
collectives(const struct sverdict *v, const strtab *str, const char *reason, sbuf *out)
{
	const struct scmp *m = v->cmp;
	double cd, wb, wc;

	sb_reset(out);
	if (reason)
		sb_adds(out, reason);
	if (!m || !m->b || !m->c || (v->v != V_REGRESSION && v->v != V_IMPROVEMENT) ||
	    (cd = comm_delta(m, str)) == 0)
		return;
	sb_printf(out, "%scollective kernels account for %+.3f ms of it, and a collective's time "
	    "includes waiting for the other ranks", out->len ? "; " : "", cd / 1000);
	if (m->b->has_wait && m->c->has_wait) {
		wb = m->b->rank_wait_us * m->bscale;
		wc = m->c->rank_wait_us * m->cscale;
		sb_printf(out, ": rank %lld's wait went %.3f -> %.3f ms (%+.3f ms), its transfers "
		    "%+.3f ms", m->c->wait_rank, wb / 1000, wc / 1000, (wc - wb) / 1000,
		    (cd - (wc - wb)) / 1000);
	} else
		sb_adds(out, " (triage --all-ranks on both runs splits the wait from the transfer)");
}

/*
 * Runs of other batch sizes (the steps' mean batch 10 % or more apart):
 * GPU time per step grows with the batch, so the reason says so, with the
 * GPU time per token when both runs' steps name their tokens.
 */
static void
batches(const struct scmp *m, sbuf *out)
{
	double bb, cb, bt, ct;

	if (!m || !m->b || !m->c || !m->b->nbatch || !m->c->nbatch)
		return;
	bb = m->b->batch_sum / (double)m->b->nbatch;
	cb = m->c->batch_sum / (double)m->c->nbatch;
	if (!(bb > 0 && cb > 0) || fabs(cb - bb) < 0.1 * (bb > cb ? bb : cb))
		return;
	sb_printf(out, "%sthe steps' batch differs (%.4g in the baseline, %.4g in the "
	    "candidate, on average): GPU time per step grows with the batch", out->len ? "; " : "",
	    bb, cb);
	if (m->b->ntok && m->c->ntok && m->b->steps > 0 && m->c->steps > 0) {
		bt = m->b->total_us / (double)m->b->steps / (m->b->tok_sum / (double)m->b->ntok);
		ct = m->c->total_us / (double)m->c->steps / (m->c->tok_sum / (double)m->c->ntok);
		if (bt > 0 && ct > 0)
			sb_printf(out, ", and per token it went %.4g -> %.4g ms (%+.1f%%)", bt / 1000,
			    ct / 1000, 100 * (ct - bt) / bt);
	}
}

static void
write_verdict(const struct sverdict *v, const char *scope, const strtab *str,
    const struct opts *o, const char *reason)
{
	const struct scmp *m = v->cmp;
	sbuf j = SBUF_INIT, why = SBUF_INIT;

	rec_begin(RT_verdict);
	rec_cstr(RM_verdict_scope, scope);
	rec_cstr(RM_verdict_verdict, verdict_name[v->v]);
	if (v->metric) {
		rec_cstr(RM_verdict_metric, v->metric);
		rec_num(RM_verdict_base, v->base);
		rec_num(RM_verdict_cand, v->cand);
	}
	if (v->has_pct)
		rec_num(RM_verdict_delta_pct, v->delta_pct);
	rec_num(RM_verdict_threshold_pct, o->threshold);
	if (m && m->per_step)
		rec_bool(RM_verdict_per_step, 1);
	if (m && m->b && m->b->steps > 0)
		rec_int(RM_verdict_base_steps, m->b->steps);
	if (m && m->c && m->c->steps > 0)
		rec_int(RM_verdict_cand_steps, m->c->steps);
	if (strcmp(scope, "overall") == 0 && m)
		cstr(RM_verdict_stage, str, v->stage);
	if (m && (v->v == V_REGRESSION || v->v == V_IMPROVEMENT)) {
		accounting(m, str, v->cand - v->base, &j);
		rec_json(RM_verdict_kernels, j.s, j.len);
	}
	if (reason || (m && (v->v == V_REGRESSION || v->v == V_IMPROVEMENT))) {
		collectives(v, str, reason, &why);
		if (v->v == V_REGRESSION || v->v == V_IMPROVEMENT)
			batches(m, &why);
		if (why.len)
			rec_str(RM_verdict_reason, why.s, why.len);
	}
	if (v->has_shared)
		rec_num(RM_verdict_shared_pct, v->shared);
	if (m && m->b && m->c && (v->v == V_REGRESSION || v->v == V_IMPROVEMENT) &&
	    comm_delta(m, str) != 0) {
		rec_num(RM_verdict_comm_delta_us, comm_delta(m, str));
		if (m->b->has_wait && m->c->has_wait) {
			rec_num(RM_verdict_base_wait_us, m->b->rank_wait_us * m->bscale);
			rec_num(RM_verdict_cand_wait_us, m->c->rank_wait_us * m->cscale);
		}
	}
	rec_end();
	sb_free(&j);
	sb_free(&why);
}

/* The overall decision from the stages': the worst regression, else the best improvement. */
static struct sverdict
overall(const struct sverdict *sv, size_t n)
{
	struct sverdict best;
	size_t i;
	int found = 0;

	memset(&best, 0, sizeof best);
	best.v = V_INCOMPARABLE;
	for (i = 0; i < n; i++) {
		const struct sverdict *v = &sv[i];
		int better;
		if (v->v == V_INCOMPARABLE)
			continue;
		if (!found)
			better = 1;
		else if (v->v != best.v)
			better = v->v == V_REGRESSION || (v->v == V_IMPROVEMENT && best.v == V_NEUTRAL);
		else if (v->v == V_REGRESSION)
			better = v->delta_pct > best.delta_pct;
		else if (v->v == V_IMPROVEMENT)
			better = v->delta_pct < best.delta_pct;
		else
			better = fabs(v->delta_pct) > fabs(best.delta_pct);
		if (better)
			best = *v;
		found = 1;
	}
	return best;
}

/* On stderr: the stages beyond the gate and the kernels that account for each. */
static void
gate_message(const struct sverdict *v, const strtab *str, const struct opts *o)
{
	const struct scmp *m = v->cmp;
	sbuf msg = SBUF_INIT, tmp = SBUF_INIT;
	double net = v->cand - v->base, sum = 0;
	size_t i, n = 0;

	sb_printf(&msg, "regression in stage '%s': GPU time%s %+.1f%% (%.2f -> %.2f ms), "
	    "beyond --gate %g%%", strtab_str(str, v->stage), m->per_step ? " per step" : "",
	    v->delta_pct, v->base / 1000, v->cand / 1000, o->threshold);
	for (i = 0; i < m->nr && n < 5 && sum < 0.8 * net; i++) {
		const struct drow *d = &m->r[i];
		if (d->delta_us <= 0)
			continue;
		sb_printf(&msg, "%s %s %+.3f ms (%s)", n++ ? "," : "; kernels:",
		    short_for_msg(strtab_str(str, d->kernel), &tmp), d->delta_us / 1000,
		    status_name[d->status]);
		sum += d->delta_us;
	}
	collectives(v, str, NULL, &tmp);
	if (tmp.len)
		sb_printf(&msg, "; %s", tmp.s);
	err_msg("%s", msg.s);
	sb_free(&msg);
	sb_free(&tmp);
}

int
diff_report(struct side *b, struct side *c, strtab *str, const struct opts *o)
{
	uint32_t *names = xmalloc((b->nst + c->nst + 1) * sizeof *names);
	struct scmp *cmp;
	struct sverdict *sv, all;
	size_t n = 0, i, j;
	sbuf why = SBUF_INIT, reason = SBUF_INIT;
	int status = EXIT_OK, incomparable;
	double shared;

	comparability(b, c, str, &why, &shared);
	incomparable = why.len > 0;
	/* which GPU is faster is a real question: say it, compare anyway */
	if (b->gpu && c->gpu && strcmp(b->gpu, c->gpu) != 0)
		note_msg("hardware differs: %s vs %s", b->gpu, c->gpu);
	write_input(b, "base", str);
	write_input(c, "cand", str);
	for (i = 0; i < b->nst + c->nst; i++) {
		uint32_t id = i < b->nst ? b->st[i].name : c->st[i - b->nst].name;
		for (j = 0; j < n && names[j] != id; j++)
			;
		if (j == n)
			names[n++] = id;
	}
	order_str = str;
	xqsort(names, n, sizeof *names, stage_order);
	cmp = xcalloc(n ? n : 1, sizeof *cmp);
	sv = xcalloc(n ? n : 1, sizeof *sv);
	for (i = 0; i < n; i++) {
		struct scmp *m = &cmp[i];
		m->name = names[i];
		m->b = side_stage(b, names[i]);
		m->c = side_stage(c, names[i]);
		stage_compare(m, str);
		if (m->b && m->c)
			write_metrics(m, str);
		write_rows(m, str);
		write_fuse(m, str);
		if (b->overlap && c->overlap)
			write_overlap(m, str);
		stage_verdict(m, str, o, &sv[i]);
		write_verdict(&sv[i], strtab_str(str, names[i]), str, o, sv[i].reason);
	}
	all = overall(sv, n);
	if (incomparable && !o->force) {
		memset(&all, 0, sizeof all);
		all.v = V_INCOMPARABLE;
		sb_adds(&reason, why.s);
	} else if (all.v == V_INCOMPARABLE) {
		sb_adds(&reason, "no stage with GPU time on both sides");
		if (incomparable)
			sb_printf(&reason, "; %s", why.s);
	} else if (incomparable)
		sb_printf(&reason, "compared anyway (--force): %s", why.s);
	all.shared = shared;
	all.has_shared = 1;
	write_verdict(&all, "overall", str, o, reason.len ? reason.s : NULL);
	if (incomparable && !o->force) {
		err_msg("the runs are not comparable: %s (--force compares them anyway)", why.s);
		status = EXIT_INCOMPARABLE;
	} else if (o->gate && all.v == V_REGRESSION) {
		for (i = 0; i < n; i++)
			if (sv[i].v == V_REGRESSION)
				gate_message(&sv[i], str, o);
		status = EXIT_REGRESSION;
	}
	for (i = 0; i < n; i++)
		scmp_free(&cmp[i]);
	free(cmp);
	free(sv);
	free(names);
	sb_free(&why);
	sb_free(&reason);
	return status;
}
