/* Step markers: which annotations are steps, what they say, and the GPU work they launched. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "imap.h"
#include "rules.h"
#include "ss.h"
#include "xalloc.h"

/* ---- marker names ---- */

/* Digits at s[*i..n) as a number (saturating); 0 when there are none. */
static int
digits(const char *s, size_t n, size_t *i, long long *v)
{
	size_t start = *i;

	*v = 0;
	while (*i < n && s[*i] >= '0' && s[*i] <= '9') {
		if (*v < 100000000000000000LL)
			*v = *v * 10 + (s[*i] - '0');
		(*i)++;
	}
	return *i > start;
}

/* Skip a "(...)" group at s[*i]; returns 0 when there is none or it is open. */
static int
group(const char *s, size_t n, size_t *i)
{
	if (*i >= n || s[*i] != '(')
		return 0;
	while (*i < n && s[*i] != ')')
		(*i)++;
	if (*i >= n)
		return 0;
	(*i)++;
	return 1;
}

static int
lit(const char *s, size_t n, size_t *i, const char *l)
{
	size_t k = strlen(l);

	if (n - *i < k || memcmp(s + *i, l, k) != 0)
		return 0;
	*i += k;
	return 1;
}

/* PyTorch's profiler schedule: "ProfilerStep#<N>". */
static int
parse_pytorch(const char *s, size_t n)
{
	size_t i = 0;
	long long v;

	return lit(s, n, &i, "ProfilerStep#") && digits(s, n, &i, &v) && i == n;
}

/*
 * SGLang: "step[<MODE> key=value ...]", e.g. "step[DECODE bs=32]",
 * "step[EXTEND bs=15 toks=15360]".  bs is the batch, toks the tokens.
 */
static int
parse_sglang(const char *s, size_t n, struct marker *m)
{
	size_t i = 5, w;
	long long v;

	if (n < 6 || memcmp(s, "step[", 5) != 0 || s[n - 1] != ']')
		return 0;
	n--;	/* the closing bracket */
	for (w = i; w < n && s[w] != ' '; w++)
		;
	if (w - i == 6 && !memcmp(s + i, "DECODE", 6))
		m->stage = "decode";
	else if ((w - i == 6 && !memcmp(s + i, "EXTEND", 6)) ||
	    (w - i == 7 && !memcmp(s + i, "PREFILL", 7)))
		m->stage = "extend";
	for (i = w; i < n; i++) {
		if (s[i] != ' ')
			continue;
		i++;
		if (lit(s, n, &i, "bs=") && digits(s, n, &i, &v)) {
			m->has_batch = 1;
			m->batch = v;
		} else if (lit(s, n, &i, "toks=") && digits(s, n, &i, &v)) {
			m->has_tokens = 1;
			m->tokens = v;
		}
		i--;	/* the loop's i++ lands on the next character */
	}
	return 1;
}

/*
 * The tokens a vLLM marker's group gives its requests: the number that
 * opens it, "(888_788544)" (tokens, then the sum of their squares) or
 * "(sq4064sk...)" (the query tokens).  Leaves *i where group() does.
 */
static int
group_tokens(const char *s, size_t n, size_t *i, long long *tok)
{
	size_t j = *i + 1;

	if (j + 2 <= n && s[j] == 's' && s[j + 1] == 'q')
		j += 2;
	*tok = 0;
	return group(s, n, i) && digits(s, n, &j, tok);
}

/*
 * vLLM's per-iteration execute marker, two spellings seen in traces:
 *   execute_<T>_context_<C>(...)_generation_<G>(...)   T tokens
 *   execute_context_<C>(...)_generation_<G>(...)
 * C requests in prefill and G in decode: the batch is C + G.  Without T
 * the tokens are the groups' (group_tokens), prefill's plus decode's.
 */
static int
parse_vllm(const char *s, size_t n, struct marker *m)
{
	size_t i = 0;
	long long tok = 0, c, g, ctok, gtok;
	int has_tok, has_groups;

	if (!lit(s, n, &i, "execute_"))
		return 0;
	has_tok = digits(s, n, &i, &tok);
	if (has_tok && !lit(s, n, &i, "_"))
		return 0;
	if (!lit(s, n, &i, "context_") || !digits(s, n, &i, &c))
		return 0;
	has_groups = group_tokens(s, n, &i, &ctok);
	if (!lit(s, n, &i, "_generation_") || !digits(s, n, &i, &g))
		return 0;
	has_groups &= group_tokens(s, n, &i, &gtok);
	if (i != n)
		return 0;
	m->has_batch = 1;
	m->batch = c + g;
	if (has_tok) {
		m->has_tokens = 1;
		m->tokens = tok;
	} else if (has_groups && ctok <= LLONG_MAX - gtok) {
		m->has_tokens = 1;
		m->tokens = ctok + gtok;
	}
	if (c > 0 && g == 0)
		m->stage = "extend";
	else if (c == 0 && g > 0)
		m->stage = "decode";
	return 1;
}

void
marker_parse(const char *s, size_t n, struct marker *m)
{
	memset(m, 0, sizeof *m);
	if (parse_sglang(s, n, m))
		m->family = SF_SGLANG;
	else if (parse_vllm(s, n, m))
		m->family = SF_VLLM;
	else if (parse_pytorch(s, n))
		m->family = SF_PYTORCH;
	else
		memset(m, 0, sizeof *m);
}

/* ---- the steps of a trace ---- */

static int
step_cmp(const void *pa, const void *pb)
{
	const struct step *a = pa, *b = pb;

	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->ord < b->ord ? -1 : a->ord > b->ord;
}

size_t
steps_find(struct trace_reader *r, const struct trace *tr, struct step **out)
{
	uint32_t gpu = strtab_find(r->str, "gpu_user_annotation", 19);
	struct marker *m = xmalloc((tr->nan ? tr->nan : 1) * sizeof *m);
	struct step *st = NULL;
	size_t i, k, n = 0, cap = 0;
	int best = SF_NONE;

	for (i = 0; i < tr->nan; i++) {
		const struct tannot *a = &tr->an[i];
		memset(&m[i], 0, sizeof m[i]);
		if (a->cat == gpu)
			continue;	/* the GPU-side copy of a CPU marker */
		if (ss_bad_time(a->ts + (double)tr->time_base, a->dur))
			continue;	/* no time to measure */
		marker_parse(strtab_str(r->str, a->name), strtab_len(r->str, a->name), &m[i]);
		if (m[i].family != SF_NONE && (best == SF_NONE || m[i].family < best))
			best = m[i].family;
	}
	for (i = 0; best != SF_NONE && i < tr->nan; i++) {
		const struct tannot *a = &tr->an[i];
		if (m[i].family != best)
			continue;
		xgrow(&st, &cap, n + 1, sizeof *st);
		memset(&st[n], 0, sizeof st[n]);
		st[n].ts = a->ts;
		st[n].dur = a->dur > 0 ? a->dur : 0;
		st[n].name = a->name;
		st[n].pid = trace_thread_pid(r, a->thread);
		st[n].stage = NOSTR;
		st[n].m = m[i];
		st[n].ord = n;
		n++;
	}
	free(m);
	xqsort(st, n, sizeof *st, step_cmp);
	/*
	 * One range written twice is one step: a legacy ProfilerStep#N of cat
	 * Operator beside a user_annotation copy of it (trace-extract makes an
	 * annotation of both).
	 */
	for (i = k = 0; i < n; i++)
		if (k == 0 || st[i].ts != st[k - 1].ts || st[i].dur != st[k - 1].dur ||
		    st[i].name != st[k - 1].name || st[i].pid != st[k - 1].pid)
			st[k++] = st[i];
	*out = st;
	return k;
}

double *
steps_maxend(const struct step *st, size_t nst)
{
	double *maxend = xmalloc((nst ? nst : 1) * sizeof *maxend);
	size_t k;

	for (k = 0; k < nst; k++) {
		double e = st[k].ts + st[k].dur;
		maxend[k] = k && maxend[k - 1] > e ? maxend[k - 1] : e;
	}
	return maxend;
}

long
step_of(const struct step *st, size_t nst, const double *maxend, const struct item *x)
{
	size_t k, lo = 0, hi = nst, mid;

	if (nst == 0 || x->launch < 0)
		return -1;
	while (lo < hi) {	/* lo = markers starting at or before the call */
		mid = (lo + hi) / 2;
		if (st[mid].ts <= x->lts)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (k = lo; k-- > 0 && maxend[k] >= x->lts;)
		if (st[k].pid == x->lpid && st[k].ts + st[k].dur >= x->lts)
			return (long)k;
	return -1;
}

int
items_by_step(const void *pa, const void *pb, void *ctx)
{
	const struct sitem *a = pa, *b = pb;

	(void)ctx;
	if (a->step != b->step)
		return a->step < b->step ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (a->end != b->end)
		return a->end < b->end ? -1 : 1;
	return a->ord < b->ord ? -1 : a->ord > b->ord;
}

/* Per-stage time of one step's items: a handful of stages, searched linearly. */
struct stime {
	uint32_t stage;
	double us;
};

static uint32_t
major_stage(struct trace_reader *r, const struct stime *s, size_t n)
{
	size_t i, best = 0;

	for (i = 1; i < n; i++) {
		int bi = stage_index(strtab_str(r->str, s[best].stage));
		int ii = stage_index(strtab_str(r->str, s[i].stage));
		if (s[i].us > s[best].us || (s[i].us == s[best].us && ii < bi))
			best = i;
	}
	return s[best].stage;
}

/* The figures of one step's items, fed in order of start. */
struct stepacc {
	struct uacc u;
	struct commacc ca;
	struct stime *stt;
	size_t nstt, capstt;
	long long n;
	double first, last;
};

static void
step_close(struct trace_reader *r, struct step *s, struct stepacc *a)
{
	s->kernels = a->n;
	s->busy_us = uacc_value(&a->u);
	s->span_us = a->last - a->first;
	commacc_value(&a->ca, &s->comm_total_us, &s->comm_overlap_us);
	s->gpu_ts = a->first;	/* sorted by start */
	s->gpu_end = a->last;
	s->stage = major_stage(r, a->stt, a->nstt);
}

void
steps_finish(struct trace_reader *r, const struct trace *tr, struct step *st, size_t nst,
    struct xsort *by_step)
{
	struct stepacc a;
	const struct sitem *x;
	long cur = -1;
	size_t k;

	memset(&a, 0, sizeof a);
	xsort_rewind(by_step);
	while ((x = xsort_next(by_step)) != NULL) {
		if (x->step < 0)
			continue;
		if (x->step != cur) {
			if (cur >= 0)
				step_close(r, &st[cur], &a);
			cur = x->step;
			memset(&a.u, 0, sizeof a.u);
			memset(&a.ca, 0, sizeof a.ca);
			a.nstt = 0;
			a.n = 0;
			a.first = x->ts;
			a.last = x->end;
		}
		a.n++;
		uacc_add(&a.u, x->ts, x->end);
		commacc_add(&a.ca, x->bucket, x->ts, x->end);
		if (x->end > a.last)
			a.last = x->end;
		for (k = 0; k < a.nstt && a.stt[k].stage != x->stage; k++)
			;
		if (k == a.nstt) {
			xgrow(&a.stt, &a.capstt, a.nstt + 1, sizeof *a.stt);
			a.stt[a.nstt++] = (struct stime){ x->stage, 0 };
		}
		a.stt[k].us += x->dur;
	}
	if (cur >= 0)
		step_close(r, &st[cur], &a);
	free(a.stt);
	for (k = 0; k < nst; k++) {
		const char *st_name;
		if (st[k].stage != NOSTR)
			continue;
		st_name = strtab_str(r->str, tr->stage);
		if (!strcmp(st_name, "all") && st[k].m.stage)
			st_name = st[k].m.stage;
		st[k].stage = strtab_intern(r->str, st_name, strlen(st_name));
	}
}

void
steps_periods(struct step *st, size_t nst, int has_offset, double offset_us)
{
	imap next = { 0 };	/* pid -> index + 1 of the next step of that process */
	size_t i;
	uint64_t *v;
	double end, gend;
	int isnew;

	for (i = nst; i-- > 0;) {
		v = imap_put(&next, st[i].pid, &isnew);
		st[i].last = isnew;
		if (!isnew) {
			st[i].period_us = st[*v - 1].ts - st[i].ts;
		} else {
			/*
			 * The GPU's end on the host's clock: with the GPU clock
			 * offset_us ahead, its times are that much late (issue 25).
			 */
			end = st[i].ts + st[i].dur;
			gend = st[i].gpu_end - (has_offset ? offset_us : 0);
			if (st[i].kernels > 0 && gend > end)
				end = gend;
			st[i].period_us = end - st[i].ts;
		}
		if (st[i].period_us < 0)	/* cannot happen: sorted by start */
			st[i].period_us = 0;
		*v = i + 1;
	}
	imap_free(&next);
}

int
step_tokens(const struct trace_reader *r, const struct step *s, double *tokens)
{
	if (s->m.has_tokens) {
		*tokens = (double)s->m.tokens;
		return 1;
	}
	if (s->m.has_batch && !strcmp(strtab_str(r->str, s->stage), "decode")) {
		*tokens = (double)s->m.batch;
		return 1;
	}
	return 0;
}

double
percentile(const double *v, size_t n, int p)
{
	size_t rank = ((size_t)p * n + 99) / 100;	/* ceil(p * n / 100) */

	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return v[rank - 1];
}
