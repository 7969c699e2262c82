/*
 * Where each overlap row's kernel ran exposed (issue 29): the parts of its
 * events during which no other stream ran, for trace-annotate to mark on
 * the timeline.  One overlap_exposed record per row, holding a bounded
 * number of intervals, so the stream does not grow with the kernels.
 */
#include <stdlib.h>
#include <string.h>

#include "num.h"
#include "overlap.h"
#include "rec.h"
#include "xalloc.h"

static int
by_length(const void *pa, const void *pb)
{
	const struct ov_span *a = pa, *b = pb;
	int c = num_cmp(b->end - b->ts, a->end - a->ts);	/* longest first */

	return c ? c : num_cmp(a->ts, b->ts);
}

static int
by_start(const void *pa, const void *pb)
{
	const struct ov_span *a = pa, *b = pb;

	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

/* The first exclusive interval that ends after ts (x sorted, disjoint), or nx. */
static size_t
first_after(const struct ov_span *x, size_t nx, double ts)
{
	size_t lo = 0, hi = nx, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (x[mid].end <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void
write_row(long long t, const char *stage, long long id, struct ov_span *p, size_t np,
    double sum)
{
	sbuf js = SBUF_INIT;
	char row[64], b1[40], b2[40];
	size_t i, keep = np < OV_EXPOSED_SPANS ? np : OV_EXPOSED_SPANS;

	xqsort(p, np, sizeof *p, by_length);
	xqsort(p, keep, sizeof *p, by_start);
	sb_addc(&js, '[');
	for (i = 0; i < keep; i++)
		sb_printf(&js, "%s[%s,%s]", i ? "," : "", num_json(p[i].ts, b1),
		    num_json(p[i].end - p[i].ts, b2));
	sb_addc(&js, ']');
	snprintf(row, sizeof row, "overlap-%lld", id);
	rec_begin(RT_overlap_exposed);
	rec_int(RM_overlap_exposed_t, t);
	rec_cstr(RM_overlap_exposed_stage, stage);
	rec_cstr(RM_overlap_exposed_row, row);
	rec_num(RM_overlap_exposed_exposed_us, sum);
	rec_int(RM_overlap_exposed_intervals, (long long)np);
	rec_json(RM_overlap_exposed_spans, js.s, js.len);
	rec_end();
	sb_free(&js);
}

/*
 * The exclusive time inside [ts, end): the whole intervals between by the
 * prefix sums (pre[j] = length of x[0..j)), the two partial ends clipped.
 */
static double
exclusive_in(const struct ov_span *x, const double *pre, size_t nx, double ts, double end)
{
	size_t j0 = first_after(x, nx, ts), lo = j0, hi = nx, mid;
	double sum;

	while (lo < hi) {	/* j1: the first interval starting at or after end */
		mid = lo + (hi - lo) / 2;
		if (x[mid].ts < end)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo <= j0)
		return 0.0;
	sum = pre[lo] - pre[j0];
	if (x[j0].ts < ts)
		sum -= ts - x[j0].ts;
	if (x[lo - 1].end > end)
		sum -= x[lo - 1].end - end;
	return sum > 0.0 ? sum : 0.0;
}

/*
 * Per row: the exposed time summed over its events (so that it is
 * exclusive_ratio x total_us), and as spans the exclusive set intersected
 * with the union of its events.  Events of one row that overlap (one
 * stream's kernels overlapping in a merged trace, programmatic dependent
 * launch) are merged first, so that the work is linear in events plus
 * intervals, not their product (make scale, shape overlap).
 */
void
ov_write_exposed(long long t, const char *stage, oev_t *ev, size_t n, const orow_t *rows,
    size_t nrows, long long first_id)
{
	struct ov_span *x, *p = NULL, *u = NULL;
	size_t nx, np, nu, m, capp = 0, capu = 0, r, i, j;
	double sum, *pre;

	if (nrows == 0)
		return;
	nx = ov_exclusive(ev, n, &x);
	pre = xmalloc((nx + 1) * sizeof *pre);
	pre[0] = 0.0;
	for (j = 0; j < nx; j++)
		pre[j + 1] = pre[j] + (x[j].end - x[j].ts);
	for (r = 0; r < nrows; r++) {
		sum = 0;
		nu = 0;
		for (i = 0; i < n; i++) {
			const oev_t *e = &ev[i];
			if (e->canon != rows[r].kernel || e->cat != rows[r].cat || !(e->end > e->ts))
				continue;
			sum += exclusive_in(x, pre, nx, e->ts, e->end);
			xgrow(&u, &capu, nu + 1, sizeof *u);
			u[nu].ts = e->ts;
			u[nu++].end = e->end;
		}
		xqsort(u, nu, sizeof *u, by_start);
		for (m = 0, i = 0; i < nu; i++) {	/* merge only what overlaps */
			if (m && u[i].ts < u[m - 1].end) {
				if (u[i].end > u[m - 1].end)
					u[m - 1].end = u[i].end;
			} else {
				u[m++] = u[i];
			}
		}
		np = 0;
		for (i = 0, j = 0; i < m && j < nx;) {
			double a = x[j].ts > u[i].ts ? x[j].ts : u[i].ts;
			double b = x[j].end < u[i].end ? x[j].end : u[i].end;
			if (b > a) {
				xgrow(&p, &capp, np + 1, sizeof *p);
				p[np].ts = a;
				p[np++].end = b;
			}
			if (x[j].end < u[i].end)
				j++;
			else
				i++;
		}
		write_row(t, stage, first_id + (long long)r, p, np, sum);
	}
	free(u);
	free(p);
	free(pre);
	free(x);
}
