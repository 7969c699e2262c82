/*
 * One stage across ranks: which collectives line up (same kind, same
 * ordinal, the same kernel on every rank of the stage), the clock offset of
 * each rank, and per matched collective its skew, wait and last rank.
 *
 * A kind whose count or kernel sequence differs between the ranks is not
 * paired at all: pairing by ordinal would join unrelated collectives
 * whenever one rank lost one at the start.  It is reported instead
 * (rank_gap), as are expected ranks without kernels in the stage.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "num.h"
#include "rec.h"
#include "rules.h"
#include "sbuf.h"
#include "skew.h"
#include "xalloc.h"

/* One kind's collectives on the stage's ranks. */
struct group {
	int kind;
	size_t n;		/* per rank, when matched */
	size_t *ix;		/* matched: ix[r * n + i] indexes rs[r]->c */
	int matched;
	int reason;		/* unmatched: GAP_COUNT or GAP_NAMES */
	size_t bad;		/* GAP_NAMES: the first ordinal (0-based) that differs */
};

enum { GAP_COUNT = 1, GAP_NAMES };

/* One matched collective (group g, ordinal i) and its figures. */
struct row {
	size_t g, i;
	double key;		/* earliest aligned start: the rows' order */
	double skew, wait, spread;
	long long last;
	size_t lastix;		/* the last rank's index in the stage */
	int has_last;
};

/*
 * A rank arrives last at a collective only when it starts later than the
 * first by more than the clocks agree: the median spread of the matched
 * collectives' ends (a collective ends on every rank at once, so after
 * alignment that spread is the clocks' disagreement), and at least
 * ARRIVAL_MIN_US.  Closer starts are the same arrival: a rank 1 ns later
 * was named the straggler.
 */
#define ARRIVAL_MIN_US 1.0

/* What the analysis of one stage works on. */
struct stage {
	struct skew *s;
	uint32_t id;
	struct rankstage **rs;	/* the stage's ranks, ascending */
	size_t nr;
	long long *missing;	/* expected ranks without kernels here */
	size_t nmissing;
	struct group g[CK_COUNT];
	size_t ng;
	struct row *row;
	size_t nrow;
	long long align_g;	/* group aligned on, or -1 */
};

static int
coll_cmp(const void *a, const void *b)
{
	const struct coll *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->dur != y->dur)
		return x->dur < y->dur ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind - y->kind;
	return (x->name > y->name) - (x->name < y->name);
}

static int
rs_cmp(const void *a, const void *b)
{
	const struct rankstage *x = *(struct rankstage *const *)a;
	const struct rankstage *y = *(struct rankstage *const *)b;

	return (x->rank > y->rank) - (x->rank < y->rank);
}

static int
ll_cmp(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

static const char *
S(const struct stage *st, uint32_t id)
{
	return strtab_str(st->s->str, id);
}

/* Count, then check, each kind's sequence on every rank. */
static void
build_groups(struct stage *st)
{
	size_t r, i, k, *cnt = xcalloc(st->nr * CK_COUNT, sizeof *cnt);

	for (r = 0; r < st->nr; r++)
		for (i = 0; i < st->rs[r]->nc; i++)
			cnt[r * CK_COUNT + st->rs[r]->c[i].kind]++;
	for (k = 1; k < CK_COUNT; k++) {
		struct group *g = &st->g[st->ng];
		size_t n = cnt[k], *pos;
		int any = 0, equal = 1;
		for (r = 0; r < st->nr; r++) {
			any |= cnt[r * CK_COUNT + k] != 0;
			equal &= cnt[r * CK_COUNT + k] == n;
		}
		if (!any)
			continue;
		memset(g, 0, sizeof *g);
		g->kind = (int)k;
		st->ng++;
		if (!equal) {
			g->reason = GAP_COUNT;
			continue;
		}
		g->n = n;
		g->ix = xmalloc(st->nr * n * sizeof *g->ix);
		for (r = 0; r < st->nr; r++) {
			pos = g->ix + r * n;
			for (i = 0; i < st->rs[r]->nc; i++)
				if (st->rs[r]->c[i].kind == k)
					*pos++ = i;
		}
		g->matched = 1;
		for (i = 0; i < n && g->matched; i++)
			for (r = 1; r < st->nr; r++)
				if (st->rs[r]->c[g->ix[r * n + i]].name != st->rs[0]->c[g->ix[i]].name) {
					g->matched = 0;
					g->reason = GAP_NAMES;
					g->bad = i;
					break;
				}
	}
	free(cnt);
}

static const struct coll *
at(const struct stage *st, const struct group *g, size_t r, size_t i)
{
	return &st->rs[r]->c[g->ix[r * g->n + i]];
}

/*
 * Clock offsets: each rank's first collective of the alignment group ends
 * when the lowest rank's does.  The group is the matched one whose first
 * collective starts earliest on the lowest rank, among the kinds that end
 * together on all ranks when there are any.
 */
static void
align(struct stage *st)
{
	size_t gi, r;
	int best_sync = 0;
	double best_ts = 0;
	const struct group *g;

	st->align_g = -1;
	for (gi = 0; gi < st->ng; gi++) {
		int sync;
		double ts;
		g = &st->g[gi];
		if (!g->matched || g->n == 0)
			continue;
		sync = coll_kind_syncs(g->kind);
		ts = at(st, g, 0, 0)->ts;
		if (st->align_g < 0 || sync > best_sync || (sync == best_sync && ts < best_ts)) {
			st->align_g = (long long)gi;
			best_sync = sync;
			best_ts = ts;
		}
	}
	for (r = 0; r < st->nr; r++)
		st->rs[r]->offset_us = 0;
	if (st->align_g < 0 || !st->s->align_end)
		return;
	g = &st->g[st->align_g];
	for (r = 1; r < st->nr; r++) {
		const struct coll *ref = at(st, g, 0, 0), *c = at(st, g, r, 0);
		st->rs[r]->offset_us = (ref->ts + ref->dur) - (c->ts + c->dur);
	}
}

static int
row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->g != y->g)
		return x->g < y->g ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

/*
 * The figures of one matched collective, added to the ranks' sums.  The
 * last rank is the one with the latest aligned start; among equal starts
 * the shortest collective, then the lowest rank.  When all start together
 * there is none.
 */
static void
measure(struct stage *st, size_t gi, size_t i, struct row *w)
{
	const struct group *g = &st->g[gi];
	double minstart = 0, maxstart = 0, mindur = 0, maxdur = 0, minend = 0, maxend = 0;
	size_t r, last = 0;

	for (r = 0; r < st->nr; r++) {
		const struct coll *c = at(st, g, r, i);
		double s0 = c->ts + st->rs[r]->offset_us, e0 = s0 + c->dur;
		if (r == 0 || s0 < minstart)
			minstart = s0;
		if (r == 0 || s0 > maxstart || (s0 == maxstart && c->dur < at(st, g, last, i)->dur)) {
			maxstart = s0;
			last = r;
		}
		if (r == 0 || c->dur < mindur)
			mindur = c->dur;
		if (r == 0 || c->dur > maxdur)
			maxdur = c->dur;
		if (r == 0 || e0 < minend)
			minend = e0;
		if (r == 0 || e0 > maxend)
			maxend = e0;
	}
	w->g = gi;
	w->i = i;
	w->key = minstart;
	w->skew = maxstart - minstart;
	w->wait = maxdur - mindur;
	w->spread = maxend - minend;
	w->has_last = 0;	/* measure_all decides, against the clocks' spread */
	w->last = st->rs[last]->rank;
	w->lastix = last;
	for (r = 0; r < st->nr; r++) {
		st->rs[r]->wait_us += at(st, g, r, i)->dur - mindur;
		st->rs[r]->matched++;
	}
}

static void
measure_all(struct stage *st)
{
	size_t gi, i, n = 0;

	for (gi = 0; gi < st->ng; gi++)
		if (st->g[gi].matched)
			n += st->g[gi].n;
	st->row = xmalloc((n ? n : 1) * sizeof *st->row);
	for (gi = 0; gi < st->ng; gi++)
		if (st->g[gi].matched)
			for (i = 0; i < st->g[gi].n; i++)
				measure(st, gi, i, &st->row[st->nrow++]);
	if (st->nrow) {
		double *sp = xmalloc(st->nrow * sizeof *sp), tol;
		for (i = 0; i < st->nrow; i++)
			sp[i] = st->row[i].spread;
		tol = median(sp, st->nrow);
		free(sp);
		if (!(tol >= ARRIVAL_MIN_US))
			tol = ARRIVAL_MIN_US;
		for (i = 0; i < st->nrow; i++) {
			struct row *w = &st->row[i];
			w->has_last = w->skew > tol;
			if (w->has_last)
				st->rs[w->lastix]->last_arrivals++;
		}
	}
	xqsort(st->row, st->nrow, sizeof *st->row, row_cmp);
}

/* The straggler: most last arrivals, then the least wait, then the lowest rank. */
static struct rankstage *
straggler(struct stage *st)
{
	struct rankstage *b = NULL;
	size_t r;

	for (r = 0; r < st->nr; r++) {
		struct rankstage *x = st->rs[r];
		if (x->last_arrivals == 0)
			continue;
		if (!b || x->last_arrivals > b->last_arrivals ||
		    (x->last_arrivals == b->last_arrivals && x->wait_us < b->wait_us))
			b = x;
	}
	if (b)
		b->straggler = 1;
	return b;
}

/*
 * Where the straggler x is late (issue 31): at each matched collective it
 * arrived last at, its aligned start, launch call, and busy and idle time
 * before it, each minus the median of the other ranks'; summed.  Its other
 * kernels' time (kernel_us - comm_us) minus the others' median: the
 * kernel time excess, the whole stage.
 */
static void
lateness(struct stage *st, struct rankstage *x)
{
	size_t k, r, n, xi = 0;
	double *v = xmalloc(st->nr * sizeof *v);

	for (r = 0; r < st->nr; r++)
		if (st->rs[r] == x)
			xi = r;
	for (k = 0; k < st->nrow; k++) {
		const struct row *w = &st->row[k];
		const struct group *g = &st->g[w->g];
		const struct coll *c = at(st, g, xi, w->i);
		double off = x->offset_us;
		int launches = !isnan(c->launch);
		if (!w->has_last || w->last != x->rank)
			continue;
		x->late_n++;
		for (r = n = 0; r < st->nr; r++)
			if (r != xi)
				v[n++] = at(st, g, r, w->i)->ts + st->rs[r]->offset_us;
		x->late_us += c->ts + off - median(v, n);
		for (r = n = 0; r < st->nr; r++)
			if (r != xi)
				v[n++] = at(st, g, r, w->i)->busy_before;
		x->late_busy_us += c->busy_before - median(v, n);
		for (r = n = 0; r < st->nr; r++)
			if (r != xi)
				v[n++] = at(st, g, r, w->i)->idle_before;
		x->late_idle_us += c->idle_before - median(v, n);
		for (r = n = 0; r < st->nr; r++)
			if (r != xi) {
				launches &= !isnan(at(st, g, r, w->i)->launch);
				v[n++] = at(st, g, r, w->i)->launch + st->rs[r]->offset_us;
			}
		if (launches) {
			x->late_launch_us += c->launch + off - median(v, n);
			x->has_launch = 1;
		}
	}
	for (r = n = 0; r < st->nr; r++)
		if (r != xi)
			v[n++] = st->rs[r]->kernel_us - st->rs[r]->comm_us;
	if (n)
		x->kernel_excess_us = x->kernel_us - x->comm_us - median(v, n);
	free(v);
}

const char *
lateness_where(const struct rankstage *x)
{
	double half = x->late_us / 2;

	if (!(x->late_us > 0))
		return "none";
	if (x->has_launch && x->late_launch_us >= half)
		return "host";
	if (x->late_idle_us >= half)
		return "idle";
	if (x->late_busy_us >= half)
		return "kernels";
	return "spread";
}

/* ---- writing ---- */

static void
put_align(const struct stage *st)
{
	double *sp;
	size_t i;

	rec_begin(RT_rank_align);
	rec_cstr(RM_rank_align_stage, S(st, st->id));
	if (st->align_g >= 0 && st->s->align_end) {
		const struct group *g = &st->g[st->align_g];
		rec_cstr(RM_rank_align_method, "end");
		rec_int(RM_rank_align_ref_rank, st->rs[0]->rank);
		rec_cstr(RM_rank_align_kind, coll_kind_name(g->kind));
		rec_cstr(RM_rank_align_name, S(st, at(st, g, 0, 0)->name));
		rec_int(RM_rank_align_ordinal, 1);
	} else
		rec_cstr(RM_rank_align_method, "none");
	if (st->nrow) {
		sp = xmalloc(st->nrow * sizeof *sp);
		for (i = 0; i < st->nrow; i++)
			sp[i] = st->row[i].spread;
		rec_num(RM_rank_align_end_spread_us, median(sp, st->nrow));
		free(sp);
	}
	rec_end();
}

static void
put_gaps(const struct stage *st)
{
	sbuf j = SBUF_INIT;
	size_t gi, r, i;

	if (st->nmissing) {
		sb_addc(&j, '[');
		for (i = 0; i < st->nmissing; i++)
			sb_printf(&j, "%s{\"rank\":%lld,\"count\":0}", i ? "," : "", st->missing[i]);
		sb_addc(&j, ']');
		rec_begin(RT_rank_gap);
		rec_cstr(RM_rank_gap_stage, S(st, st->id));
		rec_cstr(RM_rank_gap_reason, "missing");
		rec_json(RM_rank_gap_ranks, j.s, j.len);
		rec_end();
	}
	for (gi = 0; gi < st->ng; gi++) {
		const struct group *g = &st->g[gi];
		if (g->matched)
			continue;
		sb_reset(&j);
		sb_addc(&j, '[');
		for (r = 0; r < st->nr; r++) {
			const struct rankstage *x = st->rs[r];
			size_t n = 0;
			const struct coll *c = NULL;
			for (i = 0; i < x->nc; i++)
				if (x->c[i].kind == g->kind && n++ == g->bad && g->reason == GAP_NAMES)
					c = &x->c[i];
			sb_printf(&j, "%s{\"rank\":%lld,\"count\":%zu", r ? "," : "", x->rank, n);
			if (c) {
				const char *nm = S(st, c->name);
				sb_adds(&j, ",\"name\":");
				json_quote(&j, nm, strlen(nm));
			}
			sb_addc(&j, '}');
		}
		sb_addc(&j, ']');
		rec_begin(RT_rank_gap);
		rec_cstr(RM_rank_gap_stage, S(st, st->id));
		rec_cstr(RM_rank_gap_reason, g->reason == GAP_COUNT ? "count" : "names");
		rec_cstr(RM_rank_gap_kind, coll_kind_name(g->kind));
		if (g->reason == GAP_NAMES)
			rec_int(RM_rank_gap_ordinal, (long long)g->bad + 1);
		rec_json(RM_rank_gap_ranks, j.s, j.len);
		rec_end();
	}
	sb_free(&j);
}

static void
put_rank_rows(const struct stage *st)
{
	size_t r;

	for (r = 0; r < st->nr; r++) {
		const struct rankstage *x = st->rs[r];
		rec_begin(RT_rank_row);
		rec_cstr(RM_rank_row_stage, S(st, st->id));
		rec_int(RM_rank_row_rank, x->rank);
		rec_num(RM_rank_row_busy_us, x->busy_us);
		rec_num(RM_rank_row_kernel_us, x->kernel_us);
		rec_num(RM_rank_row_comm_us, x->comm_us);
		rec_num(RM_rank_row_wait_us, x->wait_us);
		rec_int(RM_rank_row_last_arrivals, x->last_arrivals);
		rec_int(RM_rank_row_collectives, (long long)x->nc);
		rec_int(RM_rank_row_matched, x->matched);
		rec_num(RM_rank_row_offset_us, x->offset_us);
		rec_bool(RM_rank_row_straggler, x->straggler);
		if (x->straggler) {
			rec_int(RM_rank_row_late_collectives, x->late_n);
			rec_num(RM_rank_row_late_us, x->late_us);
			if (x->has_launch)
				rec_num(RM_rank_row_late_launch_us, x->late_launch_us);
			rec_num(RM_rank_row_late_idle_us, x->late_idle_us);
			rec_num(RM_rank_row_late_busy_us, x->late_busy_us);
			rec_num(RM_rank_row_kernel_excess_us, x->kernel_excess_us);
			rec_cstr(RM_rank_row_late_in, lateness_where(x));
		}
		if (st->s->has_base)
			rec_int(RM_rank_row_time_base_us, st->s->base_ref);
		rec_id(RM_rank_row_id, "rank", ++st->s->nrank_rows);
		rec_end();
	}
}

static void
put_collective_rows(const struct stage *st)
{
	sbuf j = SBUF_INIT;
	char b1[40], b2[40];
	size_t k, r;

	for (k = 0; k < st->nrow; k++) {
		const struct row *w = &st->row[k];
		const struct group *g = &st->g[w->g];
		sb_reset(&j);
		sb_addc(&j, '[');
		for (r = 0; r < st->nr; r++) {
			const struct coll *c = at(st, g, r, w->i);
			sb_printf(&j, "%s{\"rank\":%lld,\"ts\":%s,\"dur\":%s}", r ? "," : "",
			    st->rs[r]->rank, num_json(c->ts + st->rs[r]->offset_us, b1),
			    num_json(c->dur, b2));
		}
		sb_addc(&j, ']');
		rec_begin(RT_collective_row);
		rec_cstr(RM_collective_row_stage, S(st, st->id));
		rec_cstr(RM_collective_row_kind, coll_kind_name(g->kind));
		rec_cstr(RM_collective_row_name, S(st, at(st, g, 0, w->i)->name));
		rec_int(RM_collective_row_ordinal, (long long)w->i + 1);
		rec_json(RM_collective_row_ranks, j.s, j.len);
		rec_num(RM_collective_row_skew_us, w->skew);
		rec_num(RM_collective_row_wait_us, w->wait);
		if (w->has_last)
			rec_int(RM_collective_row_last_rank, w->last);
		rec_id(RM_collective_row_id, "collective", ++st->s->ncollective_rows);
		rec_end();
	}
	sb_free(&j);
}

/* ---- warnings ---- */

static void
warn_gaps(const struct stage *st)
{
	sbuf m = SBUF_INIT;
	size_t gi, r, i;

	if (st->nmissing) {
		for (i = 0; i < st->nmissing; i++)
			sb_printf(&m, "%s%lld", i ? ", " : "", st->missing[i]);
		warn_msg("stage '%s': no kernels of rank%s %s: left out of the matching",
		    S(st, st->id), st->nmissing > 1 ? "s" : "", sb_str(&m));
	}
	for (gi = 0; gi < st->ng; gi++) {
		const struct group *g = &st->g[gi];
		size_t lo = 0, hi = 0, n;
		long long rlo = 0, rhi = 0;
		if (g->matched)
			continue;
		if (g->reason == GAP_NAMES) {
			warn_msg("stage '%s': %s number %zu is not the same kernel on every rank: "
			    "the %s sequences do not line up and are not paired", S(st, st->id),
			    coll_kind_name(g->kind), g->bad + 1, coll_kind_name(g->kind));
			continue;
		}
		for (r = 0; r < st->nr; r++) {
			for (i = n = 0; i < st->rs[r]->nc; i++)
				n += st->rs[r]->c[i].kind == g->kind;
			if (r == 0 || n < lo)
				lo = n, rlo = st->rs[r]->rank;
			if (r == 0 || n > hi)
				hi = n, rhi = st->rs[r]->rank;
		}
		warn_msg("stage '%s': %s counts differ between ranks (%zu on rank %lld, %zu on "
		    "rank %lld): not paired", S(st, st->id), coll_kind_name(g->kind), lo, rlo, hi,
		    rhi);
	}
	for (r = 0; r < st->nr; r++)
		if (st->rs[r]->ntraces > 1)
			warn_msg("stage '%s': rank %lld has kernels from %d traces; their "
			    "collectives are joined in time order", S(st, st->id), st->rs[r]->rank,
			    st->rs[r]->ntraces);
	sb_free(&m);
}

/* ---- a stage ---- */

static void
analyze_stage(struct skew *s, uint32_t id, const long long *ranks, size_t nranks)
{
	struct stage st;
	struct rankstage *lag;
	size_t i, r;

	memset(&st, 0, sizeof st);
	st.s = s;
	st.id = id;
	st.rs = xmalloc(s->nrs * sizeof *st.rs);
	for (i = 0; i < s->nrs; i++)
		if (s->rs[i].stage == id)
			st.rs[st.nr++] = &s->rs[i];
	xqsort(st.rs, st.nr, sizeof *st.rs, rs_cmp);
	st.missing = xmalloc((nranks ? nranks : 1) * sizeof *st.missing);
	for (i = r = 0; i < nranks; i++) {
		while (r < st.nr && st.rs[r]->rank < ranks[i])
			r++;
		if (r == st.nr || st.rs[r]->rank != ranks[i])
			st.missing[st.nmissing++] = ranks[i];
	}
	for (r = 0; r < st.nr; r++)
		xqsort(st.rs[r]->c, st.rs[r]->nc, sizeof *st.rs[r]->c, coll_cmp);
	if (st.nr > 1) {
		build_groups(&st);
		align(&st);
		measure_all(&st);
		lag = straggler(&st);
		if (lag)
			lateness(&st, lag);
	} else {
		warn_msg("stage '%s': only rank %lld: nothing to compare", S(&st, id),
		    st.rs[0]->rank);
		st.align_g = -1;
		lag = NULL;
	}
	warn_gaps(&st);
	if (st.nr > 1 && st.ng == 0)
		warn_msg("stage '%s': no collective kernels on any rank: nothing to match",
		    S(&st, id));
	else if (st.nr > 1 && st.align_g < 0 && s->align_end)
		warn_msg("stage '%s': no collective is matched on every rank: clocks not "
		    "aligned", S(&st, id));
	put_align(&st);
	put_gaps(&st);
	put_rank_rows(&st);
	put_collective_rows(&st);
	if (lag)
		write_deltas(s, st.rs, st.nr, lag);
	for (i = 0; i < st.ng; i++)
		free(st.g[i].ix);
	free(st.row);
	free(st.missing);
	free(st.rs);
}

struct stage_key {
	uint32_t id;
	const char *name;
};

static int
stage_cmp(const void *a, const void *b)
{
	const struct stage_key *x = a, *y = b;
	int ix = stage_index(x->name), iy = stage_index(y->name);

	return ix != iy ? ix - iy : strcmp(x->name, y->name);
}

size_t
skew_report(struct skew *s)
{
	struct stage_key *st = xmalloc((s->nrs ? s->nrs : 1) * sizeof *st);
	long long *ranks = xmalloc((s->nrs + s->nexpect + 1) * sizeof *ranks);
	size_t nst = 0, nranks = 0, i, j;

	for (i = 0; i < s->nrs; i++) {
		for (j = 0; j < nst && st[j].id != s->rs[i].stage; j++)
			;
		if (j == nst) {
			st[nst].id = s->rs[i].stage;
			st[nst++].name = strtab_str(s->str, s->rs[i].stage);
		}
		ranks[nranks++] = s->rs[i].rank;
	}
	for (i = 0; i < s->nexpect; i++)
		ranks[nranks++] = s->expect[i];
	xqsort(ranks, nranks, sizeof *ranks, ll_cmp);
	for (i = j = 0; i < nranks; i++)
		if (j == 0 || ranks[j - 1] != ranks[i])
			ranks[j++] = ranks[i];
	nranks = j;
	xqsort(st, nst, sizeof *st, stage_cmp);
	for (i = 0; i < nst; i++)
		analyze_stage(s, st[i].id, ranks, nranks);
	free(ranks);
	free(st);
	return nst;
}
