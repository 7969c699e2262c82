/*
 * From each trace, what rank-skew keeps: per rank and stage, the collective
 * kernels (24 bytes each), the time of every other kernel name, and the
 * busy, kernel and communication sums.  The trace itself is dropped after
 * this, so memory grows with collectives and names, not with traces.
 */
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
	size_t i;

	for (i = 0; i < s->nexpect; i++)
		if (s->expect[i] == r)
			return;
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

/* Add the union of each rankstage's intervals to its busy time. */
static void
add_busy(struct skew *s, struct iv *v, size_t n)
{
	size_t i = 0, j;
	double start, end;

	xqsort(v, n, sizeof *v, iv_cmp);
	while (i < n) {
		start = v[i].ts;
		end = v[i].end;
		for (j = i + 1; j < n && v[j].rsi == v[i].rsi && v[j].ts <= end; j++)
			if (v[j].end > end)
				end = v[j].end;
		s->rs[v[i].rsi].busy_us += end - start;
		i = j;
	}
}

void
skew_add_trace(struct skew *s, struct trace_reader *r, const struct trace *tr, long long seq)
{
	struct iv *iv;
	size_t i, niv = 0, rsi;
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
	iv = xmalloc((tr->nk ? tr->nk : 1) * sizeof *iv);
	for (i = 0; i < tr->nk; i++) {
		const struct tkernel *k = &tr->k[i];
		struct rankstage *rs;
		if (any_sel && !k->sel)
			continue;
		stage = k->stage != NOSTR ? k->stage : all;
		if (stage != last_stage) {
			last_rsi = rankstage_of(s, tr->rank, stage);
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
			xgrow(&rs->c, &rs->capc, rs->nc + 1, sizeof *rs->c);
			rs->c[rs->nc++] = (struct coll){ k->ts + shift, k->dur, name, (unsigned char)kind };
			rs->comm_us += k->dur;
		} else
			add_ktime(rs, name, k->dur);
		iv[niv++] = (struct iv){ rsi, k->ts + shift, k->ts + shift + k->dur };
	}
	add_busy(s, iv, niv);
	free(iv);
}
