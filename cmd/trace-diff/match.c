/*
 * The kernel rows of one stage compared across the two runs: kernels match
 * by canonical name, the rest by family (trace-diff(1), "Matching").  The
 * rules treat both sides alike, so that swapping them negates every delta
 * and swaps new with removed.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "num.h"
#include "xalloc.h"

static const strtab *cmp_str;	/* for the sort comparators */

/* A side's unpaired row and its family, for grouping. */
struct fam {
	uint32_t fam;
	const struct krow *k;
};

/* By family, then time (largest first), then name: the same order on either side. */
static int
fam_cmp(const void *pa, const void *pb)
{
	const struct fam *a = pa, *b = pb;

	if (a->fam != b->fam)
		return a->fam < b->fam ? -1 : 1;
	if (a->k->us != b->k->us)
		return a->k->us > b->k->us ? -1 : 1;
	return strcmp(strtab_str(cmp_str, a->k->name), strtab_str(cmp_str, b->k->name));
}

static double
larger(double a, double b)
{
	return a > b ? a : b;
}

/* Largest absolute delta first, then the larger time, then the names. */
static int
row_cmp(const void *pa, const void *pb)
{
	const struct drow *a = pa, *b = pb;
	double da = fabs(a->delta_us), db = fabs(b->delta_us);
	double ma = larger(a->base_us, a->cand_us), mb = larger(b->base_us, b->cand_us);
	int c;

	if (da != db)
		return da > db ? -1 : 1;
	if (ma != mb)
		return ma > mb ? -1 : 1;
	if ((c = strcmp(strtab_str(cmp_str, a->kernel), strtab_str(cmp_str, b->kernel))) != 0)
		return c;
	if (a->base_kernel == b->base_kernel)
		return 0;
	if (a->base_kernel == NOSTR || b->base_kernel == NOSTR)
		return a->base_kernel == NOSTR ? -1 : 1;
	return strcmp(strtab_str(cmp_str, a->base_kernel), strtab_str(cmp_str, b->base_kernel));
}

static struct drow *
new_row(struct scmp *c, size_t *cap)
{
	struct drow *d;

	xgrow(&c->r, cap, c->nr + 1, sizeof *c->r);
	d = &c->r[c->nr++];
	memset(d, 0, sizeof *d);
	d->kernel = d->base_kernel = d->loc = d->base_loc = NOSTR;
	return d;
}

/* Fill a row's times and shares from raw (unscaled) sums. */
static void
set_times(struct scmp *c, struct drow *d, double bus, double cus)
{
	d->base_us = c->per_step ? bus / (double)c->b->steps : bus;
	d->cand_us = c->per_step ? cus / (double)c->c->steps : cus;
	d->delta_us = d->cand_us - d->base_us;
	d->bshare = c->b ? pct(bus, c->b->total_us) : 0;
	d->cshare = c->c ? pct(cus, c->c->total_us) : 0;
	d->shown = larger(d->bshare, d->cshare) >= DIFF_BAR_PCT;
}

/* Where the Python site went: the candidate's, and the baseline's when it differs. */
static void
set_sites(struct drow *d, const struct krow *b, const struct krow *k)
{
	d->loc = k ? k->loc : b ? b->loc : NOSTR;
	if (b && k && b->loc != k->loc && b->loc != NOSTR && k->loc != NOSTR)
		d->base_loc = b->loc;
}

static void
pair_rows(struct scmp *c, size_t *cap, const struct krow *b, const struct krow *k, int match)
{
	struct drow *d = new_row(c, cap);
	int same_launches;

	d->kernel = k->name;
	if (b->name != k->name)
		d->base_kernel = b->name;
	d->cat = k->cat;
	d->match = match;
	d->bnames = d->cnames = 1;
	d->bl = b->launches;
	d->cl = k->launches;
	set_times(c, d, b->us, k->us);
	set_sites(d, b, k);
	/* launches per step: cross-multiplied, so no rounding */
	same_launches = c->per_step ? d->bl * c->c->steps == d->cl * c->b->steps : d->bl == d->cl;
	d->status = match == M_NAME && same_launches &&
	    fabs(d->delta_us) <= DIFF_SAME_PCT / 100 * larger(d->base_us, d->cand_us) ?
	    ST_SAME : ST_CHANGED;
}

static void
lone_row(struct scmp *c, size_t *cap, const struct krow *k, int cand)
{
	struct drow *d = new_row(c, cap);

	d->kernel = k->name;
	d->cat = k->cat;
	d->match = M_NONE;
	d->status = cand ? ST_NEW : ST_REMOVED;
	if (cand) {
		d->cnames = 1;
		d->cl = k->launches;
		set_times(c, d, 0, k->us);
	} else {
		d->bnames = 1;
		d->bl = k->launches;
		set_times(c, d, k->us, 0);
	}
	d->loc = k->loc;
}

/*
 * A family with several unpaired names on a side: one row for the family,
 * since which retuned kernel became which cannot be told.
 */
static void
family_row(struct scmp *c, size_t *cap, strtab *str, const struct fam *b, size_t nb,
    const struct fam *k, size_t nk)
{
	struct drow *d = new_row(c, cap);
	const char *key = strtab_str(str, b[0].fam), *tab = strchr(key, '\x1f');
	double bus = 0, cus = 0;
	size_t i;

	d->kernel = strtab_intern(str, tab ? tab + 1 : key, strlen(tab ? tab + 1 : key));
	d->cat = k[0].k->cat;
	d->match = M_FAMILY;
	d->status = ST_CHANGED;
	d->bnames = (int)nb;
	d->cnames = (int)nk;
	for (i = 0; i < nb; i++) {
		bus += b[i].k->us;
		d->bl += b[i].k->launches;
	}
	for (i = 0; i < nk; i++) {
		cus += k[i].k->us;
		d->cl += k[i].k->launches;
	}
	set_times(c, d, bus, cus);
	set_sites(d, b[0].k, k[0].k);	/* the largest member of each side */
}

/* The unpaired rows of a stage with their family keys (category, 0x1f, family), sorted. */
static size_t
unpaired(const struct stage *st, strtab *str, struct fam **out)
{
	struct fam *v = xmalloc((st && st->nk ? st->nk : 1) * sizeof *v);
	sbuf f = SBUF_INIT, key = SBUF_INIT;
	size_t i, n = 0;

	for (i = 0; st && i < st->nk; i++) {
		const struct krow *k = &st->k[i];
		if (k->paired)
			continue;
		kernel_family(strtab_str(str, k->name), strtab_len(str, k->name), &f);
		sb_reset(&key);
		sb_adds(&key, strtab_str(str, k->cat));
		sb_addc(&key, '\x1f');
		sb_add(&key, sb_str(&f), f.len);
		v[n].fam = strtab_intern(str, sb_str(&key), key.len);
		v[n++].k = k;
	}
	sb_free(&f);
	sb_free(&key);
	xqsort(v, n, sizeof *v, fam_cmp);
	*out = v;
	return n;
}

void
stage_compare(struct scmp *c, strtab *str)
{
	struct stage *b = c->b, *k = c->c;
	struct fam *fb, *fk;
	size_t cap = 0, i, j, nb, nk, ib, ik;
	imap by_name = { 0 };
	uint64_t *v;

	cmp_str = str;
	c->per_step = b && k && b->steps > 0 && k->steps > 0 && b->steps != k->steps;
	c->bscale = c->per_step ? 1.0 / (double)b->steps : 1;
	c->cscale = c->per_step ? 1.0 / (double)k->steps : 1;
	for (i = 0; b && i < b->nk; i++) {
		b->k[i].paired = 0;
		*imap_put(&by_name, b->k[i].name, NULL) = i + 1;
	}
	for (i = 0; k && i < k->nk; i++)
		k->k[i].paired = 0;
	/* 1. the same canonical name */
	for (i = 0; b && k && i < k->nk; i++) {
		if (!(v = imap_get(&by_name, k->k[i].name)))
			continue;
		pair_rows(c, &cap, &b->k[*v - 1], &k->k[i], M_NAME);
		b->k[*v - 1].paired = k->k[i].paired = 1;
	}
	imap_free(&by_name);
	/* 2. the same family: one name each side pairs; more make one family row */
	nb = unpaired(b, str, &fb);
	nk = unpaired(k, str, &fk);
	for (ib = 0, ik = 0; ib < nb && ik < nk;) {
		size_t eb, ek;
		if (fb[ib].fam != fk[ik].fam) {
			if (fb[ib].fam < fk[ik].fam)
				ib++;
			else
				ik++;
			continue;
		}
		for (eb = ib; eb < nb && fb[eb].fam == fb[ib].fam; eb++)
			;
		for (ek = ik; ek < nk && fk[ek].fam == fk[ik].fam; ek++)
			;
		if (eb - ib == 1 && ek - ik == 1)
			pair_rows(c, &cap, fb[ib].k, fk[ik].k, M_FAMILY);
		else
			family_row(c, &cap, str, fb + ib, eb - ib, fk + ik, ek - ik);
		for (j = ib; j < eb; j++)
			((struct krow *)fb[j].k)->paired = 1;
		for (j = ik; j < ek; j++)
			((struct krow *)fk[j].k)->paired = 1;
		ib = eb;
		ik = ek;
	}
	free(fb);
	free(fk);
	/* 3. the rest: new in the candidate, removed from the baseline */
	for (i = 0; k && i < k->nk; i++)
		if (!k->k[i].paired)
			lone_row(c, &cap, &k->k[i], 1);
	for (i = 0; b && i < b->nk; i++)
		if (!b->k[i].paired)
			lone_row(c, &cap, &b->k[i], 0);
	xqsort(c->r, c->nr, sizeof *c->r, row_cmp);
	memset(c->counts, 0, sizeof c->counts);
	for (i = 0; i < c->nr; i++)
		c->counts[c->r[i].status]++;
}

void
scmp_free(struct scmp *c)
{
	free(c->r);
	c->r = NULL;
	c->nr = 0;
}
