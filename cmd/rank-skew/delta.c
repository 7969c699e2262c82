/*
 * rank_kernel_delta: what makes the straggler late.  Its collectives are
 * the short ones (it waits least), so the cause is in its other kernels:
 * those whose time on the straggler exceeds the median of the other ranks'
 * the most (the others', as its lateness is measured: of two ranks, the
 * other's time, not the mean of both).
 */
#include <stdlib.h>
#include <string.h>

#include "rec.h"
#include "skew.h"
#include "xalloc.h"

static int
dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double
median(double *v, size_t n)
{
	xqsort(v, n, sizeof *v, dbl_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct delta {
	uint32_t name;
	long long launches;
	double rank_us, median_us;
};

/* Largest delta first; equal deltas by name, so the output is stable. */
static int
delta_cmp(const void *a, const void *b, void *ctx)
{
	const struct delta *x = a, *y = b;
	const strtab *str = ctx;
	double dx = x->rank_us - x->median_us, dy = y->rank_us - y->median_us;

	if (dx != dy)
		return dx > dy ? -1 : 1;
	return strcmp(strtab_str(str, x->name), strtab_str(str, y->name));
}

/* The kernel's time on rank x, 0 when it never ran there. */
static double
time_on(const struct rankstage *x, uint32_t name)
{
	const uint64_t *v = imap_get(&x->kix, name);

	return v ? x->kt[*v].us : 0.0;
}

void
write_deltas(struct skew *s, struct rankstage *const *rs, size_t n,
    const struct rankstage *straggler)
{
	struct delta *d = NULL;
	size_t nd = 0, cap = 0, r, i, j, no;
	double *v = xmalloc(n * sizeof *v);
	imap seen = { 0 };

	if (n < 2) {	/* no other rank to compare with */
		free(v);
		return;
	}

	for (r = 0; r < n; r++) {
		for (i = 0; i < rs[r]->nkt; i++) {
			uint32_t name = rs[r]->kt[i].name;
			int isnew;
			const uint64_t *own;
			imap_put(&seen, name, &isnew);
			if (!isnew)
				continue;
			for (j = no = 0; j < n; j++)
				if (rs[j] != straggler)
					v[no++] = time_on(rs[j], name);
			own = imap_get(&straggler->kix, name);
			xgrow(&d, &cap, nd + 1, sizeof *d);
			d[nd].name = name;
			d[nd].rank_us = own ? straggler->kt[*own].us : 0.0;
			d[nd].launches = own ? straggler->kt[*own].launches : 0;
			d[nd].median_us = median(v, no);
			if (d[nd].rank_us > d[nd].median_us)
				nd++;
		}
	}
	if (nd)
		xqsort_r(d, nd, sizeof *d, delta_cmp, s->str);
	for (i = 0; i < nd && (s->top == 0 || (long long)i < s->top); i++) {
		const char *name = strtab_str(s->str, d[i].name);
		rec_begin(RT_rank_kernel_delta);
		rec_cstr(RM_rank_kernel_delta_stage, strtab_str(s->str, straggler->stage));
		rec_int(RM_rank_kernel_delta_rank, straggler->rank);
		rec_str(RM_rank_kernel_delta_kernel, name, strlen(name));
		rec_num(RM_rank_kernel_delta_rank_us, d[i].rank_us);
		rec_num(RM_rank_kernel_delta_median_us, d[i].median_us);
		rec_num(RM_rank_kernel_delta_delta_us, d[i].rank_us - d[i].median_us);
		rec_int(RM_rank_kernel_delta_launches, d[i].launches);
		rec_id(RM_rank_kernel_delta_id, "delta", ++s->ndelta_rows);
		rec_end();
	}
	imap_free(&seen);
	free(v);
	free(d);
}
