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

struct dl {
	uint32_t canon;
	double us;
};

static int
dbl_cmp(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return a < b ? -1 : a > b;
}

static int
dl_cmp(const void *pa, const void *pb)
{
	const struct dl *a = pa, *b = pb;

	if (a->canon != b->canon)
		return a->canon < b->canon ? -1 : 1;
	return a->us < b->us ? -1 : a->us > b->us;
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
delay_write(const struct trace_reader *r, long long t, uint32_t stage, const struct item *it,
    size_t n, const struct figures *f, int has_offset, double offset_us)
{
	struct dl *d = xmalloc((n ? n : 1) * sizeof *d);
	double *v = xmalloc((n ? n : 1) * sizeof *v), *name_us = NULL;
	imap names = { 0 };	/* canonical name -> index into name_us */
	struct kd *k;
	size_t i, j, nd = 0, nk = 0, nn = 0, capn = 0;
	long long over = 0;
	int isnew;

	for (i = 0; i < n; i++) {
		uint64_t *x = imap_insert(&names, it[i].canon, nn, &isnew);
		if (isnew) {
			xgrow(&name_us, &capn, nn + 1, sizeof *name_us);
			name_us[nn++] = 0;
		}
		name_us[*x] += it[i].dur;
		if (it[i].has_delay) {
			d[nd].canon = it[i].canon;
			d[nd].us = it[i].delay;
			v[nd] = it[i].delay;
			over += it[i].delay > LD_OVER_US;
			nd++;
		}
	}
	if (nd == 0)
		goto out;
	rec_begin(RT_launch_delay);
	rec_int(RM_launch_delay_t, t);
	rec_cstr(RM_launch_delay_stage, strtab_str(r->str, stage));
	rec_int(RM_launch_delay_launches, (long long)nd);
	if (has_offset) {
		/* every delay carries the offset: no figure, no verdict */
		rec_num(RM_launch_delay_clock_offset_us, offset_us);
		rec_end();
		goto out;
	}
	xqsort(v, nd, sizeof *v, dbl_cmp);
	rec_num(RM_launch_delay_p50_us, percentile(v, nd, 50));
	rec_num(RM_launch_delay_p90_us, percentile(v, nd, 90));
	rec_num(RM_launch_delay_max_us, v[nd - 1]);
	rec_num(RM_launch_delay_threshold_us, LD_OVER_US);
	rec_int(RM_launch_delay_over, over);
	rec_cstr(RM_launch_delay_verdict, verdict(percentile(v, nd, 50), f));
	rec_end();

	/* per kernel name of the kernel table's size: its delays sorted within the name */
	xqsort(d, nd, sizeof *d, dl_cmp);
	k = xmalloc(nd * sizeof *k);
	for (i = 0; i < nd; i = j) {
		for (j = i; j < nd && d[j].canon == d[i].canon; j++)
			v[j - i] = d[j].us;
		if (f->kernel_us > 0 &&
		    pct(name_us[*imap_get(&names, d[i].canon)], f->kernel_us) < KD_MIN_PCT)
			continue;
		k[nk].canon = d[i].canon;
		k[nk].launches = (long long)(j - i);
		k[nk].p50 = percentile(v, j - i, 50);
		k[nk].max = v[j - i - 1];
		k[nk].over = 0;
		for (; i < j; i++)
			k[nk].over += d[i].us > LD_OVER_US;
		nk++;
	}
	if (nk > 1)
		xqsort_r(k, nk, sizeof *k, kd_cmp, (void *)r->str);
	for (i = 0; i < nk; i++) {
		rec_begin(RT_kernel_delay);
		rec_int(RM_kernel_delay_t, t);
		rec_cstr(RM_kernel_delay_stage, strtab_str(r->str, stage));
		rec_cstr(RM_kernel_delay_kernel, strtab_str(r->str, k[i].canon));
		rec_int(RM_kernel_delay_launches, k[i].launches);
		rec_num(RM_kernel_delay_p50_us, k[i].p50);
		rec_num(RM_kernel_delay_max_us, k[i].max);
		rec_int(RM_kernel_delay_over, k[i].over);
		rec_end();
	}
	free(k);
out:
	imap_free(&names);
	free(name_us);
	free(d);
	free(v);
}
