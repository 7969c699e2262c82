/*
 * Launch delays (issue 32): for each launch call, the time from the call's
 * end to the start of the first GPU item it submitted, as Holistic Trace
 * Analysis measures it.  A graph replay is one call, so it counts once.
 * Per stage: the distribution and what it says (the host ahead of the
 * GPU, or the GPU waiting for the host); per kernel name: p50 and max,
 * for the kernel table.
 */
#include <stdlib.h>
#include <string.h>

#include "imap.h"
#include "num.h"
#include "rec.h"
#include "ss.h"
#include "xalloc.h"

/*
 * The verdict's bound on the idle figures: the GPU waited for the host, or
 * idled with work queued, in at least this share of the span (step-stats(1)).
 */
#define IDLE_PCT 10.0

/*
 * kernel_delay records are for the kernel table, whose rows start at 1.0 %
 * of the stage's kernel time: names under half that get none, so that
 * their number stays bounded (200 a stage) whatever the trace's count of
 * distinct names (issue 30).
 */
#define KD_MIN_PCT 0.5

/* A delay with its stage (the stages' order, from 0) and kernel name. */
struct dl {
	unsigned long long stage;
	uint32_t canon;
	double us;
};

/* By stage, then delay: a stage's distribution in order. */
static int
by_stage(const void *pa, const void *pb, void *ctx)
{
	const struct dl *a = pa, *b = pb;

	(void)ctx;
	if (a->stage != b->stage)
		return a->stage < b->stage ? -1 : 1;
	return a->us < b->us ? -1 : a->us > b->us;
}

/* By stage, kernel name (id), then delay: each name's distribution in order. */
static int
by_name(const void *pa, const void *pb, void *ctx)
{
	const struct dl *a = pa, *b = pb;

	(void)ctx;
	if (a->stage != b->stage)
		return a->stage < b->stage ? -1 : 1;
	if (a->canon != b->canon)
		return a->canon < b->canon ? -1 : 1;
	return a->us < b->us ? -1 : a->us > b->us;
}

struct delays {
	struct xsort *all, *named;	/* struct dl: by_stage, by_name */
	const struct dl *pa, *pn;	/* their next records */
	int started;
	/* per stage: its names' kernel time (in stage order), its delays' count and outliers */
	imap names;			/* stage << 32 | canon -> index into name_us, name_nd */
	double *name_us;
	long long *name_nd;		/* the name's delays */
	size_t nn, capn;
	long long *nd, *over;
	size_t nst, capst;
};

struct delays *
delays_new(void)
{
	struct delays *d = xcalloc(1, sizeof *d);

	d->all = xsort_new(sizeof(struct dl), by_stage, NULL);
	d->named = xsort_new(sizeof(struct dl), by_name, NULL);
	return d;
}

void
delays_free(struct delays *d)
{
	if (!d)
		return;
	xsort_free(d->all);
	xsort_free(d->named);
	imap_free(&d->names);
	free(d->name_us);
	free(d->name_nd);
	free(d->nd);
	free(d->over);
	free(d);
}

void
delay_item(struct delays *d, size_t stage, const struct item *x)
{
	int isnew;
	uint64_t *v = imap_insert(&d->names, (uint64_t)stage << 32 | x->canon, d->nn, &isnew);

	if (isnew) {
		size_t cap = d->capn;
		xgrow(&d->name_us, &d->capn, d->nn + 1, sizeof *d->name_us);
		if (cap != d->capn)
			d->name_nd = xreallocarray(d->name_nd, d->capn, sizeof *d->name_nd);
		d->name_us[d->nn] = 0;
		d->name_nd[d->nn++] = 0;
	}
	d->name_us[*v] += x->dur;
	if (stage >= d->nst) {
		size_t old = d->capst;
		xgrow(&d->nd, &d->capst, stage + 1, sizeof *d->nd);
		if (old != d->capst)
			d->over = xreallocarray(d->over, d->capst, sizeof *d->over);
		for (old = d->nst; old <= stage; old++)
			d->nd[old] = d->over[old] = 0;
		d->nst = stage + 1;
	}
	if (x->has_delay) {
		struct dl e = { stage, x->canon, x->delay };
		xsort_add(d->all, &e);
		xsort_add(d->named, &e);
		d->nd[stage]++;
		d->over[stage] += x->delay > LD_OVER_US;
		d->name_nd[*v]++;
	}
}

/* One kernel name's delays, for the kernel_delay records. */
struct kd {
	uint32_t canon;
	long long launches, over;
	double p50, max;
};

/* Largest max first (the outliers), then by name. */
static int
kd_cmp(const void *pa, const void *pb, void *str)
{
	const struct kd *a = pa, *b = pb;

	if (a->max != b->max)
		return a->max > b->max ? -1 : 1;
	return strcmp(strtab_str(str, a->canon), strtab_str(str, b->canon));
}

/*
 * What the distribution says, consistent with the idle figures: whether the
 * GPU waited for the host (idle_launch_us, IDLE_PCT % of the span or more),
 * else whether it idled that long with work queued that did not start (the
 * rest of idle_us: a stall that every later launch queues behind), and
 * whether the median launch queued LD_OVER_US or more behind earlier work
 * (the host ran ahead).
 *   host_bound  it waited for the host, the median launch did not queue
 *   bursty      both: the host ran ahead in bursts, the GPU waited between them
 *   stalled     it did not wait for the host but idled with work queued
 *   gpu_bound   the median launch queued, the GPU hardly idled for either
 *   balanced    none of these
 */
static const char *
verdict(double p50, const struct figures *f)
{
	int ahead = p50 >= LD_OVER_US;

	if (!(f->span_us > 0))
		return ahead ? "gpu_bound" : "balanced";
	if (pct(f->idle_launch_us, f->span_us) >= IDLE_PCT)
		return ahead ? "bursty" : "host_bound";
	if (pct(f->idle_us - f->idle_launch_us, f->span_us) >= IDLE_PCT)
		return "stalled";
	return ahead ? "gpu_bound" : "balanced";
}

void
delay_write(struct delays *d, const struct trace_reader *r, long long t, size_t k,
    uint32_t stage, const struct figures *f, int has_offset, double offset_us)
{
	long long nd = k < d->nst ? d->nd[k] : 0, i, j;
	double p50, p90, max = 0;
	struct kd *kd = NULL;
	size_t nk = 0, capk = 0;
	unsigned long long rank50, rank90;

	if (!d->started) {
		d->pa = xsort_next(d->all);
		d->pn = xsort_next(d->named);
		d->started = 1;
	}
	if (nd == 0)
		return;
	rec_begin(RT_launch_delay);
	rec_int(RM_launch_delay_t, t);
	rec_cstr(RM_launch_delay_stage, strtab_str(r->str, stage));
	rec_int(RM_launch_delay_launches, nd);
	if (has_offset) {
		/* every delay carries the offset: no figure, no verdict */
		rec_num(RM_launch_delay_clock_offset_us, offset_us);
		rec_end();
		/* skip the stage's delays in both sorts */
		for (i = 0; i < nd; i++) {
			d->pa = xsort_next(d->all);
			d->pn = xsort_next(d->named);
		}
		return;
	}
	/* the stage's distribution: the nearest ranks of p50 and p90 (percentile) */
	rank50 = ((unsigned long long)50 * (unsigned long long)nd + 99) / 100;
	rank90 = ((unsigned long long)90 * (unsigned long long)nd + 99) / 100;
	if (rank50 < 1)
		rank50 = 1;
	if (rank90 < 1)
		rank90 = 1;
	p50 = p90 = 0;
	for (i = 1; i <= nd && d->pa; i++) {
		if ((unsigned long long)i == rank50)
			p50 = d->pa->us;
		if ((unsigned long long)i == rank90)
			p90 = d->pa->us;
		max = d->pa->us;
		d->pa = xsort_next(d->all);
	}
	rec_num(RM_launch_delay_p50_us, p50);
	rec_num(RM_launch_delay_p90_us, p90);
	rec_num(RM_launch_delay_max_us, max);
	rec_num(RM_launch_delay_threshold_us, LD_OVER_US);
	rec_int(RM_launch_delay_over, d->over[k]);
	rec_cstr(RM_launch_delay_verdict, verdict(p50, f));
	rec_end();
	/* per kernel name of the kernel table's size: its delays in order within the name */
	for (i = 0; i < nd && d->pn; i = j) {
		uint32_t canon = d->pn->canon;
		const uint64_t *ni = imap_get(&d->names, (uint64_t)k << 32 | canon);
		long long n = ni ? d->name_nd[*ni] : 0, m = 0, over = 0;
		unsigned long long r50 = ((unsigned long long)50 * (unsigned long long)n + 99) / 100;
		double p = 0, mx = 0;
		if (r50 < 1)
			r50 = 1;
		for (j = i; j < nd && d->pn && d->pn->canon == canon; j++) {
			if ((unsigned long long)++m == r50)
				p = d->pn->us;
			mx = d->pn->us;
			over += d->pn->us > LD_OVER_US;
			d->pn = xsort_next(d->named);
		}
		if (f->kernel_us > 0 && ni && pct(d->name_us[*ni], f->kernel_us) < KD_MIN_PCT)
			continue;
		xgrow(&kd, &capk, nk + 1, sizeof *kd);
		kd[nk].canon = canon;
		kd[nk].launches = m;
		kd[nk].p50 = p;
		kd[nk].max = mx;
		kd[nk].over = over;
		nk++;
	}
	if (nk > 1)
		xqsort_r(kd, nk, sizeof *kd, kd_cmp, (void *)r->str);
	for (i = 0; i < (long long)nk; i++) {
		rec_begin(RT_kernel_delay);
		rec_int(RM_kernel_delay_t, t);
		rec_cstr(RM_kernel_delay_stage, strtab_str(r->str, stage));
		rec_cstr(RM_kernel_delay_kernel, strtab_str(r->str, kd[i].canon));
		rec_int(RM_kernel_delay_launches, kd[i].launches);
		rec_num(RM_kernel_delay_p50_us, kd[i].p50);
		rec_num(RM_kernel_delay_max_us, kd[i].max);
		rec_int(RM_kernel_delay_over, kd[i].over);
		rec_end();
	}
	free(kd);
}
