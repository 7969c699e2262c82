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
	double x = a->end - a->ts, y = b->end - b->ts;

	if (x != y)
		return x > y ? -1 : 1;
	return a->ts < b->ts ? -1 : a->ts > b->ts;
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

void
ov_write_exposed(long long t, const char *stage, oev_t *ev, size_t n, const orow_t *rows,
    size_t nrows, long long first_id)
{
	struct ov_span *x, *p = NULL;
	size_t nx, np, cap = 0, r, i, j;
	double sum;

	if (nrows == 0)
		return;
	nx = ov_exclusive(ev, n, &x);
	for (r = 0; r < nrows; r++) {
		np = 0;
		sum = 0;
		for (i = 0; i < n; i++) {
			const oev_t *e = &ev[i];
			if (e->canon != rows[r].kernel || e->cat != rows[r].cat || !(e->end > e->ts))
				continue;
			for (j = first_after(x, nx, e->ts); j < nx && x[j].ts < e->end; j++) {
				double a = x[j].ts > e->ts ? x[j].ts : e->ts;
				double b = x[j].end < e->end ? x[j].end : e->end;
				if (!(b > a))
					continue;
				xgrow(&p, &cap, np + 1, sizeof *p);
				p[np].ts = a;
				p[np++].end = b;
				sum += b - a;
			}
		}
		write_row(t, stage, first_id + (long long)r, p, np, sum);
	}
	free(p);
	free(x);
}
