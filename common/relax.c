/*
 * The relaxed kernel-entry lookup (kernel-table.md §5.7.3, §5.7.4) with an
 * index, so that a stream of lookups costs about the names' length each
 * rather than a scan of every key (issue 21: quadratic in the number of
 * distinct kernel names, 20,000 misses took 84 s).
 *
 * The answer is exactly the plain scan's: the key with the highest score,
 * the first in payload order on ties.  Step 2's candidates fall into four
 * kinds, each found without a scan (q: the lowered name, k: a lowered key):
 *   A1  k is a prefix of q        score min(cp(k), cp(q))  hash probes of q's prefixes
 *   A2  q is a prefix of k        score cp(q)              a range of the sorted keys
 *   B1  k occurs in q, not first  score min(..) / 2        hash probes of q's substrings
 *   B2  q occurs in a longer k    score cp(q) / 2          4-gram postings, first hit
 * A key of two kinds is scored by its better one, as the scan does.  Step
 * 3 walks the keys sorted by compact form outward from where the name
 * would sit; step 4's answer depends only on which alias groups the name
 * holds, so it is computed once per group set.
 *
 * The index is built by the first lookup that misses exactly, so a run
 * whose names all match exactly never pays for it.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "num.h"
#include "payload.h"
#include "rules.h"
#include "strtab.h"
#include "text.h"
#include "xalloc.h"

#define HBASE 0x100000001b3ULL	/* the rolling hash's base (odd) */
#define RMQ_BLOCK 32
#define GRAM 4
#define NO_KEY UINT32_MAX

/* The minimum over ranges of a fixed array: block minima and a sparse table over them. */
struct rmq {
	const uint32_t *v;
	size_t n, nb;
	uint32_t **sp;		/* sp[k][b]: min of blocks b .. b + 2^k - 1 */
	int levels;
};

struct relax_ix {
	size_t n;
	int sorted;		/* entries in ascending byte order: a binary search decides */
	char *text;		/* every lowered key, NUL-terminated, in payload order */
	size_t *off;		/* entry i's lowered key is text + off[i] */
	uint32_t *len, *cp;	/* its bytes and code points */
	/* lowered key -> first entry with it, by (length, rolling hash) */
	struct kslot {
		uint64_t h;
		uint32_t len, idx;	/* idx NO_KEY: empty slot */
	} *slot;
	size_t nslot;
	uint32_t *lens;		/* the distinct key lengths, ascending */
	size_t nlens;
	uint64_t *powl;		/* HBASE^(lens[j] - 1) */
	uint32_t *ord;		/* entries by lowered key, then index (A2) */
	struct rmq ordmin;
	/* B2, built when first needed */
	int grams_built;
	uint32_t *bucket;	/* 2^GBITS + 1 offsets into post */
	uint32_t *post;		/* entry indexes per 4-gram bucket, ascending */
	struct sgram {
		uint32_t g, idx;	/* a 1- to 3-byte string (its length in the top byte), first entry */
	} *sg;			/* open addressing; g == 0: empty */
	size_t nsg, capsg;
	/* step 3, built when first needed */
	int long_built;
	char **ck;		/* compact forms of the keys of 96 characters or more */
	size_t *cklen;
	uint32_t *cidx;		/* their entries, sorted by compact form */
	size_t nlong;
	/* step 4: the answer per set of alias groups */
	unsigned char alias_done[16];
	const entry_t *alias_best[16];
};

#define GBITS 20

static uint64_t
hash_span(const char *s, size_t n)
{
	uint64_t h = 0;
	size_t i;

	for (i = 0; i < n; i++)
		h = h * HBASE + (unsigned char)s[i];
	return h;
}

/* ---- range minima ---- */

static void
rmq_build(struct rmq *r, const uint32_t *v, size_t n)
{
	size_t b, i;
	int k;

	r->v = v;
	r->n = n;
	r->nb = (n + RMQ_BLOCK - 1) / RMQ_BLOCK;
	for (r->levels = 1; ((size_t)1 << r->levels) <= r->nb; r->levels++)
		;
	r->sp = xcalloc((size_t)r->levels, sizeof *r->sp);
	r->sp[0] = xmallocarray(r->nb ? r->nb : 1, sizeof **r->sp);
	for (b = 0; b < r->nb; b++) {
		uint32_t m = NO_KEY;
		for (i = b * RMQ_BLOCK; i < n && i < (b + 1) * RMQ_BLOCK; i++)
			if (v[i] < m)
				m = v[i];
		r->sp[0][b] = m;
	}
	for (k = 1; k < r->levels; k++) {
		size_t w = (size_t)1 << (k - 1);
		r->sp[k] = xmallocarray(r->nb, sizeof **r->sp);
		for (b = 0; b < r->nb; b++)
			r->sp[k][b] = b + w < r->nb && r->sp[k - 1][b + w] < r->sp[k - 1][b] ?
			    r->sp[k - 1][b + w] : r->sp[k - 1][b];
	}
}

static void
rmq_free(struct rmq *r)
{
	int k;

	for (k = 0; r->sp && k < r->levels; k++)
		free(r->sp[k]);
	free(r->sp);
	memset(r, 0, sizeof *r);
}

/* min of v[lo..hi), NO_KEY when empty */
static uint32_t
rmq_min(const struct rmq *r, size_t lo, size_t hi)
{
	uint32_t m = NO_KEY;
	size_t bl, bh, i;
	int k;

	if (lo >= hi)
		return m;
	bl = lo / RMQ_BLOCK;
	bh = (hi - 1) / RMQ_BLOCK;
	if (bh - bl < 2) {
		for (i = lo; i < hi; i++)
			if (r->v[i] < m)
				m = r->v[i];
		return m;
	}
	for (i = lo; i < (bl + 1) * RMQ_BLOCK; i++)
		if (r->v[i] < m)
			m = r->v[i];
	for (i = bh * RMQ_BLOCK; i < hi; i++)
		if (r->v[i] < m)
			m = r->v[i];
	bl++;
	for (k = 0; ((size_t)2 << k) <= bh - bl; k++)
		;
	if (r->sp[k][bl] < m)
		m = r->sp[k][bl];
	if (r->sp[k][bh - ((size_t)1 << k)] < m)
		m = r->sp[k][bh - ((size_t)1 << k)];
	return m;
}

/* ---- building ---- */

static const char *ord_text;
static const size_t *ord_off;

static int
cmp_ord(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	int c = strcmp(ord_text + ord_off[a], ord_text + ord_off[b]);

	return c ? c : (a > b) - (a < b);
}

static int
cmp_u32(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

	return (a > b) - (a < b);
}

/* The slot of lowered key text[0..len) with hash h: its own, or the empty one it would take. */
static struct kslot *
kslot_of(const struct relax_ix *x, const char *key, uint32_t len, uint64_t h)
{
	size_t j = (size_t)hash_u64(h ^ ((uint64_t)len << 48)) & (x->nslot - 1);

	/* the hash is not trusted alone: the text decides */
	while (x->slot[j].idx != NO_KEY && !(x->slot[j].h == h && x->slot[j].len == len &&
	    memcmp(x->text + x->off[x->slot[j].idx], key, len) == 0))
		j = (j + 1) & (x->nslot - 1);
	return &x->slot[j];
}

static struct relax_ix *
build_ix(const payload_t *p)
{
	struct relax_ix *x = xcalloc(1, sizeof *x);
	size_t i, total = 0, j;
	uint32_t *lv;

	if (p->n >= NO_KEY)
		die(EXIT_DATA, "more than %u kernel names in one site payload", NO_KEY - 1);
	x->n = p->n;
	x->sorted = 1;
	for (i = 1; i < p->n && x->sorted; i++)
		x->sorted = strcmp(p->e[i - 1].kernel, p->e[i].kernel) <= 0;
	x->off = xmallocarray(p->n, sizeof *x->off);
	x->len = xmallocarray(p->n, sizeof *x->len);
	x->cp = xmallocarray(p->n, sizeof *x->cp);
	for (i = 0; i < p->n; i++)
		total = xadd(total, xadd(strlen(p->e[i].kernel), 1));
	x->text = xmalloc(total ? total : 1);
	for (i = 0, total = 0; i < p->n; i++) {
		size_t n = strlen(p->e[i].kernel);
		x->off[i] = total;
		memcpy(x->text + total, p->e[i].kernel, n + 1);
		text_lower(x->text + total, n);
		x->len[i] = (uint32_t)n;
		x->cp[i] = (uint32_t)text_cplen(p->e[i].kernel, n);
		total += n + 1;
	}
	/* the first entry of each lowered key */
	for (x->nslot = 64; x->nslot < 2 * p->n; x->nslot *= 2)
		;
	x->slot = xmallocarray(x->nslot, sizeof *x->slot);
	for (j = 0; j < x->nslot; j++)
		x->slot[j].idx = NO_KEY;
	lv = xmallocarray(p->n ? p->n : 1, sizeof *lv);
	for (i = 0; i < p->n; i++) {
		uint64_t h = hash_span(x->text + x->off[i], x->len[i]);
		struct kslot *s = kslot_of(x, x->text + x->off[i], x->len[i], h);
		if (s->idx == NO_KEY)	/* the first entry with this lowered key keeps it */
			*s = (struct kslot){ h, x->len[i], (uint32_t)i };
		lv[i] = x->len[i];
	}
	/* distinct lengths */
	xqsort(lv, p->n, sizeof *lv, cmp_u32);
	for (i = 0; i < p->n; i++)
		if (i == 0 || lv[i] != lv[i - 1])
			lv[x->nlens++] = lv[i];
	x->lens = lv;
	x->powl = xmallocarray(x->nlens ? x->nlens : 1, sizeof *x->powl);
	for (j = 0; j < x->nlens; j++) {
		uint64_t pw = 1;
		uint32_t k;
		for (k = 1; k < x->lens[j]; k++)
			pw *= HBASE;
		x->powl[j] = pw;
	}
	/* keys by lowered text, for A2 */
	x->ord = xmallocarray(p->n ? p->n : 1, sizeof *x->ord);
	for (i = 0; i < p->n; i++)
		x->ord[i] = (uint32_t)i;
	ord_text = x->text;
	ord_off = x->off;
	xqsort(x->ord, p->n, sizeof *x->ord, cmp_ord);
	rmq_build(&x->ordmin, x->ord, p->n);
	return x;
}

/* The slot of short string g: its own, or the empty one it would take. */
static struct sgram *
sg_slot(const struct relax_ix *x, uint32_t g)
{
	size_t j = (size_t)hash_u64(g) & (x->capsg - 1);

	while (x->sg[j].g != 0 && x->sg[j].g != g)
		j = (j + 1) & (x->capsg - 1);
	return &x->sg[j];
}

/* Remember i as holding short string g, unless an earlier entry does. */
static void
sg_add(struct relax_ix *x, uint32_t g, uint32_t i)
{
	struct sgram *s;
	size_t k;

	if (2 * (x->nsg + 1) > x->capsg) {
		struct sgram *old = x->sg;
		size_t oc = x->capsg;
		x->capsg = oc ? xmul(oc, 2) : 1024;
		x->sg = xcalloc(x->capsg, sizeof *x->sg);
		for (k = 0; k < oc; k++)
			if (old[k].g)
				*sg_slot(x, old[k].g) = old[k];
		free(old);
	}
	s = sg_slot(x, g);
	if (s->g == 0) {
		*s = (struct sgram){ g, i };
		x->nsg++;
	}
}

static uint32_t
gram_bucket(const char *s)
{
	uint32_t w;

	memcpy(&w, s, 4);
	return (uint32_t)(hash_u64(w) >> (64 - GBITS));
}

static void
build_grams(struct relax_ix *x)
{
	size_t nb = (size_t)1 << GBITS, i, k, total = 0;
	uint32_t *last = xmallocarray(nb, sizeof *last), *fill;

	x->bucket = xcalloc(nb + 1, sizeof *x->bucket);
	/* count, each entry once per bucket */
	for (k = 0; k < nb; k++)
		last[k] = NO_KEY;
	for (i = 0; i < x->n; i++) {
		const char *s = x->text + x->off[i];
		for (k = 0; k + GRAM <= x->len[i]; k++) {
			uint32_t b = gram_bucket(s + k);
			if (last[b] != (uint32_t)i) {
				last[b] = (uint32_t)i;
				x->bucket[b + 1]++;
				total++;
			}
		}
	}
	for (k = 0; k < nb; k++)
		x->bucket[k + 1] += x->bucket[k];
	x->post = xmallocarray(total ? total : 1, sizeof *x->post);
	fill = xmallocarray(nb, sizeof *fill);
	memcpy(fill, x->bucket, nb * sizeof *fill);
	for (k = 0; k < nb; k++)
		last[k] = NO_KEY;
	for (i = 0; i < x->n; i++) {
		const char *s = x->text + x->off[i];
		for (k = 0; k + GRAM <= x->len[i]; k++) {
			uint32_t b = gram_bucket(s + k);
			if (last[b] != (uint32_t)i) {
				last[b] = (uint32_t)i;
				x->post[fill[b]++] = (uint32_t)i;
			}
		}
		/* strings of 1 to 3 bytes, with the first entry that holds each */
		for (k = 0; k < x->len[i]; k++) {
			size_t l;
			for (l = 1; l < GRAM && k + l <= x->len[i]; l++) {
				uint32_t g = 0;
				memcpy(&g, s + k, l);
				sg_add(x, g | (uint32_t)l << 24, (uint32_t)i);
			}
		}
	}
	free(fill);
	free(last);
	x->grams_built = 1;
}

void
relax_ix_free(struct relax_ix *x)
{
	size_t i;

	if (!x)
		return;
	free(x->text);
	free(x->off);
	free(x->len);
	free(x->cp);
	free(x->slot);
	free(x->lens);
	free(x->powl);
	free(x->ord);
	rmq_free(&x->ordmin);
	free(x->bucket);
	free(x->post);
	free(x->sg);
	for (i = 0; i < x->nlong; i++)
		free(x->ck[i]);
	free(x->ck);
	free(x->cklen);
	free(x->cidx);
	free(x);
}

/* ---- step 2 ---- */

struct best {
	long score;
	uint32_t idx;	/* NO_KEY: none yet */
};

static void
consider(struct best *b, long score, uint32_t idx)
{
	if (idx == NO_KEY)
		return;
	if (score > b->score || (score == b->score && idx < b->idx)) {
		b->score = score;
		b->idx = idx;
	}
}

/* The first entry whose lowered key is q[0..n) (hash h), or NO_KEY. */
static uint32_t
find_key(const struct relax_ix *x, const char *q, size_t n, uint64_t h)
{
	return kslot_of(x, q, (uint32_t)n, h)->idx;
}

/* A2: the first entry whose lowered key starts with q. */
static uint32_t
first_with_prefix(const struct relax_ix *x, const char *q, size_t n)
{
	size_t lo = 0, hi = x->n, a, b;

	while (lo < hi) {	/* the first key >= q */
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(x->text + x->off[x->ord[mid]], q) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	a = lo;
	hi = x->n;
	while (lo < hi) {	/* past the keys that start with q */
		size_t mid = lo + (hi - lo) / 2;
		if (strncmp(x->text + x->off[x->ord[mid]], q, n) == 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	b = lo;
	return rmq_min(&x->ordmin, a, b);
}

/* B2: the first entry whose lowered key contains q. */
static uint32_t
first_containing(struct relax_ix *x, const char *q, size_t n)
{
	size_t k, best = 0, bestn = SIZE_MAX;
	uint32_t g = 0;

	if (!x->grams_built)
		build_grams(x);
	if (n == 0)
		return x->n ? 0 : NO_KEY;
	if (n < GRAM) {
		memcpy(&g, q, n);
		if (x->capsg == 0)
			return NO_KEY;
		g = sg_slot(x, g | (uint32_t)n << 24)->g ? sg_slot(x, g | (uint32_t)n << 24)->idx :
		    NO_KEY;
		return g;
	}
	/* the rarest gram's entries, in payload order: the first that holds q */
	for (k = 0; k + GRAM <= n; k++) {
		uint32_t b = gram_bucket(q + k);
		size_t c = x->bucket[b + 1] - x->bucket[b];
		if (c < bestn) {
			bestn = c;
			best = b;
		}
	}
	for (k = x->bucket[best]; k < x->bucket[best + 1]; k++) {
		uint32_t i = x->post[k];
		if (x->len[i] >= n && memmem(x->text + x->off[i], x->len[i], q, n))
			return i;
	}
	return NO_KEY;
}

static long
min_l(long a, long b)
{
	return a < b ? a : b;
}

/* Step 2 over the index: the best entry, or NO_KEY when no key is related. */
static uint32_t
affix_best(struct relax_ix *x, const char *q, size_t qn, long qcp)
{
	struct best b = { -1, NO_KEY };
	uint64_t h = 0;
	size_t j, pos, k;

	/* A2 first: every key that extends q scores cp(q), the most anything can */
	consider(&b, qcp, first_with_prefix(x, q, qn));
	/* A1: q's prefixes that are keys */
	for (j = 0, k = 0; j < x->nlens && x->lens[j] <= qn; j++) {
		for (; k < x->lens[j]; k++)
			h = h * HBASE + (unsigned char)q[k];
		{
			uint32_t i = find_key(x, q, x->lens[j], h);
			if (i != NO_KEY)
				consider(&b, min_l(x->cp[i], qcp), i);
		}
	}
	/* B2: every key that holds q scores cp(q) / 2 */
	if (qcp / 2 >= b.score)
		consider(&b, qcp / 2, first_containing(x, q, qn));
	/* B1: q's substrings that are keys, longest lengths first, while they can still win */
	for (j = x->nlens; j-- > 0;) {
		uint32_t L = x->lens[j];
		uint64_t pw = x->powl[j];

		if (L > qn)
			continue;
		if (L == 0 || min_l(L, qcp) / 2 < b.score)
			break;	/* shorter keys score less; the empty key is A1's */
		h = hash_span(q, L);
		for (pos = 0;; pos++) {
			uint32_t i = find_key(x, q + pos, L, h);
			if (i != NO_KEY)
				consider(&b, min_l(x->cp[i], qcp) / 2, i);
			if (pos + L >= qn)
				break;
			h = (h - (unsigned char)q[pos] * pw) * HBASE + (unsigned char)q[pos + L];
		}
	}
	return b.idx;
}

/* ---- step 3 ---- */

static char *const *ck_text;
static const size_t *ck_len;

static int
cmp_long(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	size_t n = ck_len[a] < ck_len[b] ? ck_len[a] : ck_len[b];
	int c = memcmp(ck_text[a], ck_text[b], n);

	if (c)
		return c;
	if (ck_len[a] != ck_len[b])
		return ck_len[a] < ck_len[b] ? -1 : 1;
	return (a > b) - (a < b);
}

static void
build_long(struct relax_ix *x, const payload_t *p)
{
	sbuf c = SBUF_INIT;
	size_t i, cap = 0, n = 0;
	char **ck = NULL;
	size_t *cl = NULL, cap2 = 0;
	uint32_t *ci = NULL;
	size_t cap3 = 0;

	for (i = 0; i < p->n; i++) {
		text_compact(p->e[i].kernel, strlen(p->e[i].kernel), &c);
		if (c.len < 96)
			continue;
		xgrow(&ck, &cap, n + 1, sizeof *ck);
		xgrow(&cl, &cap2, n + 1, sizeof *cl);
		xgrow(&ci, &cap3, n + 1, sizeof *ci);
		ck[n] = xstrndup(c.s, c.len);
		cl[n] = c.len;
		ci[n] = (uint32_t)i;
		n++;
	}
	sb_free(&c);
	/* sort positions 0..n-1 by compact text; cidx maps back to entries */
	{
		uint32_t *o = xmallocarray(n ? n : 1, sizeof *o);
		char **ck2 = xmallocarray(n ? n : 1, sizeof *ck2);
		size_t *cl2 = xmallocarray(n ? n : 1, sizeof *cl2);
		uint32_t *ci2 = xmallocarray(n ? n : 1, sizeof *ci2);
		for (i = 0; i < n; i++)
			o[i] = (uint32_t)i;
		ck_text = ck;
		ck_len = cl;
		xqsort(o, n, sizeof *o, cmp_long);
		for (i = 0; i < n; i++) {
			ck2[i] = ck[o[i]];
			cl2[i] = cl[o[i]];
			ci2[i] = ci[o[i]];
		}
		free(o);
		free(ck);
		free(cl);
		free(ci);
		ck = ck2;
		cl = cl2;
		ci = ci2;
	}
	x->ck = ck;
	x->cklen = cl;
	x->cidx = ci;
	x->nlong = n;
	x->long_built = 1;
}

static size_t
common_len(const char *a, size_t an, const char *b, size_t bn)
{
	size_t i = 0;

	while (i < an && i < bn && a[i] == b[i])
		i++;
	return i;
}

/*
 * The long-name step: the highest common prefix P of compact forms (+32
 * when both are flash-attention CUTLASS kernels) among keys where P >= 64
 * and P >= trunc(0.4 * min length); first entry on ties.  Keys sharing a
 * longer prefix with the name sit nearer its place in the sorted order, so
 * the walk goes outward from there and stops below 64.
 */
static const entry_t *
long_best(struct relax_ix *x, const payload_t *p, const char *qc, size_t qn)
{
	static const char flash[] = "voidcutlassdevicekernelflash";
	int qflash = text_starts(qc, qn, flash);
	size_t lo = 0, hi = x->nlong, l, r;
	long best_score = -1;
	uint32_t best = NO_KEY;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		size_t n = x->cklen[mid] < qn ? x->cklen[mid] : qn;
		int c = memcmp(x->ck[mid], qc, n);
		if (c < 0 || (c == 0 && x->cklen[mid] < qn))
			lo = mid + 1;
		else
			hi = mid;
	}
	/* l walks down from lo - 1, r up from lo */
	l = lo;
	r = lo;
	for (;;) {
		size_t pl = l > 0 ? common_len(x->ck[l - 1], x->cklen[l - 1], qc, qn) : 0;
		size_t pr = r < x->nlong ? common_len(x->ck[r], x->cklen[r], qc, qn) : 0;
		size_t P, k, S;
		long s;

		if ((l == 0 || pl < 64) && (r >= x->nlong || pr < 64))
			break;
		if (l > 0 && pl >= 64 && (r >= x->nlong || pr < 64 || pl >= pr)) {
			k = --l;
			P = pl;
		} else {
			k = r++;
			P = pr;
		}
		/* every key met later shares at most P: a better score is impossible then */
		if (best != NO_KEY && (long)P + (qflash ? 32 : 0) < best_score)
			break;
		S = qn < x->cklen[k] ? qn : x->cklen[k];
		if ((double)P < trunc((double)S * 0.4))
			continue;
		s = (long)P;
		if (qflash && text_starts(x->ck[k], x->cklen[k], flash))
			s += 32;
		if (s > best_score || (s == best_score && x->cidx[k] < best)) {
			best_score = s;
			best = x->cidx[k];
		}
	}
	return best == NO_KEY ? NULL : &p->e[best];
}

/* ---- step 4: alias groups (§5.7.4) ---- */

static void
alias_text(const entry_t *e, sbuf *out)
{
	sbuf raw = SBUF_INIT;
	size_t i;

	/* separators vanish in compaction: a plain concatenation */
#define ADD(s) do { sb_addc(&raw, ' '); if (s) sb_adds(&raw, (s)); } while (0)
	sb_adds(&raw, e->kernel);
	ADD(e->best_location);
	for (i = 0; i < e->nsites && i < 4; i++) {
		ADD(e->sites[i].location);
		ADD(e->sites[i].display_location);
		ADD(e->sites[i].top_cpu_op);
		ADD(e->sites[i].stack);
	}
#undef ADD
	text_compact(sb_str(&raw), raw.len, out);
	sb_free(&raw);
}

static const char *const alias_flash[] = {
	"flashattnfwdsm90", "flashattnvarlenfunc",
	"vllmflashattnflashattninterface", "vllmfa3cfwd", NULL
};
static const char *const alias_mha[] = {
	"maskedmultiheadattentionkernel", "attentioninplace",
	"attentionbackendtrtllm", NULL
};
static const char *const alias_rope[] = {
	"fusedqknormropekernel", "applyqknormrope",
	"modelingqwen3py98applyqknormrope", NULL
};
static const char *const alias_memset[] = { "memset", NULL };
static const char *const *const alias_groups[4] = { alias_flash, alias_mha, alias_rope,
	alias_memset };

/* The best entry for the alias groups in `set` (bit g: group g), in group order. */
static const entry_t *
alias_scan(const payload_t *p, unsigned set)
{
	const char *const *groups[4];
	size_t ng = 0, i, g;
	sbuf text = SBUF_INIT, cell = SBUF_INIT, ops = SBUF_INIT;
	const entry_t *best = NULL;
	long long best_score = 0;
	int have = 0;

	for (g = 0; g < 4; g++)
		if (set & (1u << g))
			groups[ng++] = alias_groups[g];
	for (i = 0; i < p->n; i++) {
		const entry_t *e = &p->e[i];
		long long score = 0;
		int pr1, pr2;
		nsum sum = NSUM_INIT;
		size_t k;

		alias_text(e, &text);
		for (g = 0; g < ng; g++) {
			size_t gs = 0;
			const char *const *t;
			for (t = groups[g]; *t; t++) {
				size_t tl = strlen(*t);
				if (tl > gs && text_has(sb_str(&text), text.len, *t))
					gs = tl;
			}
			if (gs > 0)
				score += 1000 * (long long)(g + 1) + (long long)gs;
		}
		if (score <= 0)
			continue;
		pr1 = e->best_location ? source_location_priority(e->best_location,
		    strlen(e->best_location)) : source_location_priority("", 0);
		best_site_summary(e, &cell, &ops);
		pr2 = source_location_priority(sb_str(&cell), cell.len);
		score += pr1 > pr2 ? pr1 : pr2;
		for (k = 0; k < e->nsites; k++)
			nsum_add(&sum, e->sites[k].total_us);
		score += (long long)floordiv10(nsum_value(&sum));
		if (!have || score > best_score) {
			have = 1;
			best_score = score;
			best = e;
		}
	}
	sb_free(&text);
	sb_free(&cell);
	sb_free(&ops);
	if (best && *best->kernel == '\0')
		return NULL;
	return best;
}

static const entry_t *
alias_lookup(const payload_t *p, struct relax_ix *x, const char *qc, size_t qcn)
{
	unsigned set = 0;

	if (text_has(qc, qcn, "flashattnfwdcombine"))
		set |= 1;
	if (text_has(qc, qcn, "kernelmha"))
		set |= 2;
	if (text_has(qc, qcn, "applybiasropeupdatekvcachev2"))
		set |= 4;
	if (text_starts(qc, qcn, "memset"))
		set |= 8;
	if (set == 0)
		return NULL;
	if (!x->alias_done[set]) {
		x->alias_best[set] = alias_scan(p, set);
		x->alias_done[set] = 1;
	}
	return x->alias_best[set];
}

/* ---- the lookup ---- */

/* Payloads are kept in ascending byte order: a binary search finds an exact hit. */
static const entry_t *
exact_lookup(const payload_t *p, const char *name)
{
	size_t lo = 0, hi = p->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(p->e[mid].kernel, name);
		if (c == 0)
			return &p->e[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const entry_t *
relaxed_lookup(const payload_t *p, const char *name)
{
	struct relax_ix *x;
	const entry_t *hit, *best;
	sbuf ql = SBUF_INIT, qc = SBUF_INIT;
	size_t qn = strlen(name);
	uint32_t i;

	if (!p || p->n == 0)
		return NULL;
	if ((hit = exact_lookup(p, name)) != NULL)
		return hit;
	/* built on the first miss; a const payload keeps it as a cache */
	if (!p->relax)
		((payload_t *)p)->relax = build_ix(p);
	x = p->relax;
	if (!x->sorted) {
		/* out of order: the search proved nothing, the first equal key counts */
		size_t k;
		for (k = 0; k < p->n; k++)
			if (strcmp(p->e[k].kernel, name) == 0)
				return &p->e[k];
	}
	sb_add(&ql, name, qn);
	text_lower(ql.s, ql.len);
	i = affix_best(x, sb_str(&ql), qn, (long)text_cplen(name, qn));
	sb_free(&ql);
	if (i != NO_KEY && *p->e[i].kernel)
		return &p->e[i];

	text_compact(name, qn, &qc);
	if (qc.len >= 96) {
		if (!x->long_built)
			build_long(x, p);
		best = long_best(x, p, qc.s, qc.len);
		if (best && *best->kernel) {
			sb_free(&qc);
			return best;
		}
	}
	best = alias_lookup(p, x, sb_str(&qc), qc.len);
	sb_free(&qc);
	return best;
}
