/*
 * Site statistics, their merge, stage payloads and mapping samples
 * (kernel-table.md §5.2-§5.5).
 */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "km.h"
#include "num.h"
#include "rules.h"
#include "xalloc.h"

/* Key i and its count (i < c->n): the first in the struct, the others in the arrays. */
static uint32_t
counter_key(const counter_t *c, size_t i)
{
	return i == 0 ? c->key0 : c->more[i - 1].key;
}

static long long
counter_get(const counter_t *c, size_t i)
{
	return i == 0 ? c->cnt0 : c->more[i - 1].cnt;
}

static long long *
counter_cnt(counter_t *c, size_t i)
{
	return i == 0 ? &c->cnt0 : &c->more[i - 1].cnt;
}

static void
counter_add(counter_t *c, uint32_t key, long long n)
{
	size_t i;

	/* Counters are small (a site's CPU ops and stacks); scan from the end. */
	for (i = c->n; i-- > 0;)
		if (counter_key(c, i) == key) {
			*counter_cnt(c, i) += n;
			return;
		}
	if (c->n == UINT32_MAX)
		die(EXIT_DATA, "more than %u CPU ops or stacks at one site", UINT32_MAX - 1);
	if (c->n > 0 && c->n - 1 == c->cap) {
		c->cap = c->cap ? (c->cap > UINT32_MAX / 2 ? UINT32_MAX : c->cap * 2) : 3;
		c->more = xreallocarray(c->more, c->cap, sizeof c->more[0]);
	}
	if (c->n == 0) {
		c->key0 = key;
		c->cnt0 = n;
	} else {
		c->more[c->n - 1].key = key;
		c->more[c->n - 1].cnt = n;
	}
	c->n++;
}

/* most_common(1): the highest count, the first inserted among equals. */
static uint32_t
counter_top(const counter_t *c)
{
	size_t i, best = 0;
	long long bc;

	if (c->n == 0)
		return NOSTR;
	bc = c->cnt0;
	for (i = 1; i < c->n; i++)
		if (c->more[i - 1].cnt > bc) {
			best = i;
			bc = c->more[i - 1].cnt;
		}
	return counter_key(c, best);
}

/* Site i of kernel k (i < k->n). */
static uint32_t
kern_site(const kern_acc *k, size_t i)
{
	return i == 0 ? k->site0 : k->site[i - 1];
}

static void
counter_free(counter_t *c)
{
	free(c->more);
}

void
sitestats_free(sitestats *st)
{
	size_t i;

	for (i = 0; i < st->nk; i++)
		free(st->k[i].site);
	for (i = 0; i < st->ns; i++) {
		counter_free(&st->s[i].ops);
		counter_free(&st->s[i].stacks);
	}
	free(st->k);
	free(st->s);
	imap_free(&st->kmap);
	imap_free(&st->smap);
	memset(st, 0, sizeof *st);
}

static site_acc *
site_get(sitestats *st, uint32_t canon, uint32_t loc)
{
	int isnew;
	uint64_t *v = imap_put(&st->kmap, canon, &isnew);
	size_t ki, si;
	kern_acc *k;

	if (isnew) {
		xgrow(&st->k, &st->capk, st->nk + 1, sizeof st->k[0]);
		*v = st->nk++;
		memset(&st->k[*v], 0, sizeof st->k[*v]);
		st->k[*v].canon = canon;
	}
	ki = (size_t)*v;
	k = &st->k[ki];
	v = imap_put(&st->smap, (uint64_t)ki << 32 | loc, &isnew);
	if (isnew) {
		xgrow(&st->s, &st->caps, st->ns + 1, sizeof st->s[0]);
		*v = st->ns++;
		memset(&st->s[*v], 0, sizeof st->s[*v]);
		st->s[*v].loc = loc;
		if (k->n == 0) {
			k->site0 = (uint32_t)*v;
		} else {
			if (k->n - 1 == k->cap) {
				k->cap = k->cap ? xmul(k->cap, 2) : 3;
				k->site = xreallocarray(k->site, k->cap, sizeof k->site[0]);
			}
			k->site[k->n - 1] = (uint32_t)*v;
		}
		k->n++;
	}
	si = (size_t)*v;
	return &st->s[si];
}

void
sitestats_add(sitestats *st, uint32_t canon, const struct kres *a, double dur)
{
	site_acc *s = site_get(st, canon, a->loc);

	s->total += dur;
	s->count++;
	if (a->op != NOSTR)
		counter_add(&s->ops, a->op, 1);
	if (a->stack != NOSTR)
		counter_add(&s->stacks, a->stack, 1);
}

void
sitestats_merge(sitestats *dst, const sitestats *src)
{
	size_t i, j, c;

	for (i = 0; i < src->nk; i++) {
		const kern_acc *sk = &src->k[i];
		for (j = 0; j < sk->n; j++) {
			const site_acc *ss = &src->s[kern_site(sk, j)];
			site_acc *ds = site_get(dst, sk->canon, ss->loc);
			ds->total += ss->total;
			ds->count += ss->count;
			for (c = 0; c < ss->ops.n; c++)
				counter_add(&ds->ops, counter_key(&ss->ops, c), counter_get(&ss->ops, c));
			for (c = 0; c < ss->stacks.n; c++)
				counter_add(&ds->stacks, counter_key(&ss->stacks, c),
				    counter_get(&ss->stacks, c));
		}
	}
}

void
sitestats_merge_move(sitestats *dst, sitestats *src)
{
	/*
	 * Into an empty dst a merge only copies: kernels and their sites in
	 * src's order, totals 0 + x, counters in src's order.  Taking src
	 * whole saves that copy, a third of kernel-map's memory when every
	 * kernel has a name of its own (issue 21).
	 */
	if (dst->nk == 0 && dst->ns == 0) {
		sitestats_free(dst);
		*dst = *src;
		memset(src, 0, sizeof *src);
		return;
	}
	sitestats_merge(dst, src);
	sitestats_free(src);
}

void
catmap_set(catmap *c, uint32_t canon, const char *cat)
{
	int isnew;
	uint64_t *v = imap_put(&c->m, canon, &isnew);

	if (isnew) {
		size_t cap = c->cap;
		xgrow(&c->cat, &c->cap, c->n + 1, sizeof c->cat[0]);
		if (c->cap != cap)
			c->canon = xreallocarray(c->canon, c->cap, sizeof c->canon[0]);
		c->canon[c->n] = canon;
		*v = c->n++;
	}
	c->cat[*v] = cat;
}

void
catmap_merge(catmap *dst, const catmap *src)
{
	size_t i;

	for (i = 0; i < src->n; i++)
		catmap_set(dst, src->canon[i], src->cat[i]);
}

const char *
catmap_get(const catmap *c, uint32_t canon)
{
	const uint64_t *v = imap_get(&c->m, canon);

	return v ? c->cat[*v] : NULL;
}

void
catmap_free(catmap *c)
{
	imap_free(&c->m);
	free(c->cat);
	free(c->canon);
	memset(c, 0, sizeof *c);
}

/* ---- payloads (§5.4) ---- */

typedef struct {
	const site_acc *acc;
	site_t site;
	int prio;
	size_t pos;
} site_sort;

static int
cmp_total_desc(const void *pa, const void *pb)
{
	const site_sort *a = pa, *b = pb;

	if (a->acc->total != b->acc->total)
		return a->acc->total > b->acc->total ? -1 : 1;
	return a->pos < b->pos ? -1 : a->pos > b->pos;
}

static int
cmp_rank_desc(const void *pa, const void *pb)
{
	const site_sort *a = pa, *b = pb;

	if (a->prio != b->prio)
		return a->prio > b->prio ? -1 : 1;
	if (a->site.total_us != b->site.total_us)
		return a->site.total_us > b->site.total_us ? -1 : 1;
	if (a->site.launches != b->site.launches)
		return a->site.launches > b->site.launches ? -1 : 1;
	return a->pos < b->pos ? -1 : a->pos > b->pos;
}

static int
cmp_entry(const void *pa, const void *pb)
{
	const entry_t *a = pa, *b = pb;

	return strcmp(a->kernel, b->kernel);
}

static char *
dup_id(uint32_t id)
{
	return id == NOSTR ? NULL : xstrdup(km_s(id));
}

static void
build_entry(const sitestats *st, const kern_acc *k, const catmap *cats, entry_t *e)
{
	site_sort *ss = xcalloc(k->n, sizeof *ss);
	sbuf b = SBUF_INIT;
	nsum sum = NSUM_INIT;
	double ktotal;
	const char *cat;
	size_t i;

	for (i = 0; i < k->n; i++) {
		ss[i].acc = &st->s[kern_site(k, i)];
		ss[i].pos = i;
		nsum_add(&sum, ss[i].acc->total);
	}
	ktotal = nsum_value(&sum);
	xqsort(ss, k->n, sizeof *ss, cmp_total_desc);
	for (i = 0; i < k->n; i++) {
		const site_acc *a = ss[i].acc;
		site_t *s = &ss[i].site;
		uint32_t stack = counter_top(&a->stacks);
		s->location = xstrdup(km_s(a->loc));
		s->stack = dup_id(stack);
		s->top_cpu_op = dup_id(counter_top(&a->ops));
		if (s->stack && preferred_stack_location(s->stack, strlen(s->stack), &b))
			s->display_location = xstrdup(sb_str(&b));
		else
			s->display_location = xstrdup(s->location);
		s->launches = a->count;
		s->total_us = round3(a->total);
		s->share_pct = round3(pct(a->total, ktotal));
		s->has_share = 1;
		site_display_location(s, &b);
		ss[i].prio = source_location_priority(sb_str(&b), b.len);
		ss[i].pos = i;
	}
	xqsort(ss, k->n, sizeof *ss, cmp_rank_desc);
	e->kernel = xstrdup(km_s(k->canon));
	cat = catmap_get(cats, k->canon);
	e->category = xstrdup(cat ? cat : "other");
	e->sites = xcalloc(k->n ? k->n : 1, sizeof e->sites[0]);
	e->nsites = k->n;
	for (i = 0; i < k->n; i++)
		e->sites[i] = ss[i].site;
	if (k->n) {
		site_display_location(&e->sites[0], &b);
		e->best_location = xstrdup(sb_str(&b));
	}
	entry_share_strings(e);
	sb_free(&b);
	free(ss);
}

static const sitestats *order_st;

static int
cmp_kern_name(const void *pa, const void *pb)
{
	const kern_acc *a = &order_st->k[*(const size_t *)pa], *b = &order_st->k[*(const size_t *)pb];

	return strcmp(km_s(a->canon), km_s(b->canon));
}

void
build_payload_each(const sitestats *st, const catmap *cats,
    void (*fn)(void *ctx, const entry_t *e), void *ctx)
{
	size_t *o = xmallocarray(st->nk ? st->nk : 1, sizeof *o), i;
	entry_t e;

	for (i = 0; i < st->nk; i++)
		o[i] = i;
	order_st = st;
	xqsort(o, st->nk, sizeof *o, cmp_kern_name);
	for (i = 0; i < st->nk; i++) {
		memset(&e, 0, sizeof e);
		build_entry(st, &st->k[o[i]], cats, &e);
		fn(ctx, &e);
		entry_free(&e);
	}
	free(o);
}

void
build_payload(const sitestats *st, const catmap *cats, payload_t *out)
{
	size_t i;

	payload_free(out);
	for (i = 0; i < st->nk; i++)
		build_entry(st, &st->k[i], cats, payload_add(out));
	if (out->n)
		xqsort(out->e, out->n, sizeof out->e[0], cmp_entry);
}

/* ---- sampling (§5.5.2) ---- */

/* A canonical name of the group: its kernels, and where its samples are among them. */
struct sname {
	uint32_t canon;
	unsigned long long n, seen;	/* kernels counted, and met again so far */
	unsigned long long at[16];	/* the sampled places, ascending */
	size_t nat, next;		/* how many, and the next to meet */
	size_t rank;			/* its place among the names in byte order */
};

/* A sampled kernel with its sort key (ts, raw name, then sample order). */
typedef struct {
	double ts;
	uint32_t name;
	unsigned long long k, pos;
	size_t sname, j;
} pick_t;

struct sampler {
	imap ix;			/* canon -> index into names */
	struct sname *names;
	size_t nnames, capnames;
	pick_t *pk;
	size_t npk, cappk;
	int picking;
};

struct sampler *
sampler_new(void)
{
	return xcalloc(1, sizeof(struct sampler));
}

void
sampler_count(struct sampler *s, uint32_t canon)
{
	int isnew;
	uint64_t *v = imap_put(&s->ix, canon, &isnew);

	if (isnew) {
		xgrow(&s->names, &s->capnames, s->nnames + 1, sizeof s->names[0]);
		memset(&s->names[s->nnames], 0, sizeof s->names[0]);
		s->names[s->nnames].canon = canon;
		*v = s->nnames++;
	}
	s->names[*v].n++;
}

static int
cmp_sname(const void *pa, const void *pb)
{
	const struct sname *a = *(const struct sname *const *)pa, *b = *(const struct sname *const *)pb;

	return strcmp(km_s(a->canon), km_s(b->canon));
}

/* After the counts: each name's sampled places, and its rank by name. */
static void
sampler_places(struct sampler *s)
{
	struct sname **by = xmalloc((s->nnames ? s->nnames : 1) * sizeof *by);
	size_t i, j;

	for (i = 0; i < s->nnames; i++) {
		struct sname *n = &s->names[i];
		n->nat = n->n <= 16 ? (size_t)n->n : 16;
		for (j = 0; j < n->nat; j++)
			n->at[j] = n->n <= 16 ? j : sample_position(j, (size_t)n->n);
		by[i] = n;
	}
	if (s->nnames)
		xqsort(by, s->nnames, sizeof *by, cmp_sname);
	for (i = 0; i < s->nnames; i++)
		by[i]->rank = i;
	free(by);
	s->picking = 1;
}

void
sampler_pick(struct sampler *s, uint32_t canon, unsigned long long i, double ts, uint32_t name)
{
	uint64_t *v;
	struct sname *n;

	if (!s->picking)
		sampler_places(s);
	if (!(v = imap_get(&s->ix, canon)))
		return;
	n = &s->names[*v];
	while (n->next < n->nat && n->at[n->next] == n->seen) {
		pick_t *p;
		xgrow(&s->pk, &s->cappk, s->npk + 1, sizeof s->pk[0]);
		p = &s->pk[s->npk++];
		p->ts = ts;
		p->name = name;
		p->k = i;
		p->sname = (size_t)*v;
		p->j = n->next++;
	}
	n->seen++;
}

/* Sample order: the names by byte order, each name's samples by place. */
static const struct sampler *sort_s;

static int
cmp_order(const void *pa, const void *pb)
{
	const pick_t *a = pa, *b = pb;
	size_t ra = sort_s->names[a->sname].rank, rb = sort_s->names[b->sname].rank;

	if (ra != rb)
		return ra < rb ? -1 : 1;
	return (a->j > b->j) - (a->j < b->j);
}

static int
cmp_pick(const void *pa, const void *pb)
{
	const pick_t *a = pa, *b = pb;
	int c;

	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (a->name != b->name && (c = strcmp(km_s(a->name), km_s(b->name))) != 0)
		return c;
	return a->pos < b->pos ? -1 : a->pos > b->pos;
}

unsigned long long *
sampler_done(struct sampler *s, size_t *n)
{
	unsigned long long *out = xmalloc((s->npk ? s->npk : 1) * sizeof *out);
	size_t i;

	sort_s = s;
	xqsort(s->pk, s->npk, sizeof s->pk[0], cmp_order);
	for (i = 0; i < s->npk; i++)
		s->pk[i].pos = i;
	xqsort(s->pk, s->npk, sizeof s->pk[0], cmp_pick);
	for (i = 0; i < s->npk; i++)
		out[i] = s->pk[i].k;
	*n = s->npk;
	imap_free(&s->ix);
	free(s->names);
	free(s->pk);
	free(s);
	return out;
}
