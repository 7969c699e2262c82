/*
 * GPU time per GPU annotation (issue 32).  Kineto writes a
 * gpu_user_annotation range per annotation and stream: from the first to
 * the last GPU item, on that stream, of the work launched inside a CPU
 * record_function or NVTX-like range (SGLang's and vLLM's model sections,
 * nccl:all_reduce, Optimizer.step).  Per name and stage: how many ranges,
 * how long they were open, and how long the GPU was busy inside them with
 * their own stream's work.
 */
#include <stdlib.h>
#include <string.h>

#include "imap.h"
#include "num.h"
#include "rec.h"
#include "ss.h"
#include "xalloc.h"

/* An interval of one annotation name (its row). */
struct piece {
	size_t row;
	double ts, end;
};

struct arow {
	uint32_t name;
	long long count;
	double busy_us, range_us;
};

static int
piece_cmp(const void *pa, const void *pb)
{
	const struct piece *a = pa, *b = pb;

	if (a->row != b->row)
		return a->row < b->row ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->end < b->end ? -1 : a->end > b->end;
}

/*
 * The measure of each row's pieces added to *field of its row: the pieces
 * in piece_cmp order, by a counting sort on the row (stable) and a sort of
 * each row's run, which annot_write makes come in order most of the time
 * (issue 30: one sort of every piece was a tenth of step-stats).
 */
static void
measure_rows(struct piece *p, size_t np, struct arow *rows, size_t nrow, int range)
{
	size_t *at, i, j, r;
	struct piece *q;

	if (np == 0)
		return;
	at = xcalloc(nrow + 1, sizeof *at);
	q = xmalloc(np * sizeof *q);
	for (i = 0; i < np; i++)
		at[p[i].row + 1]++;
	for (r = 0; r < nrow; r++)
		at[r + 1] += at[r];
	for (i = 0; i < np; i++)
		q[at[p[i].row]++] = p[i];	/* at[r] ends as the end of row r's run */
	for (r = 0, i = 0; r < nrow; i = at[r++]) {
		struct uacc u = { 0 };
		if (at[r] == i)
			continue;
		xqsort(q + i, at[r] - i, sizeof *q, piece_cmp);
		for (j = i; j < at[r]; j++)
			uacc_add(&u, q[j].ts, q[j].end);
		if (range)
			rows[r].range_us = uacc_value(&u);
		else
			rows[r].busy_us = uacc_value(&u);
	}
	free(q);
	free(at);
}

/* The stage's items by stream, then start: the order ranges are looked up in. */
static int
by_stream(const void *pa, const void *pb, void *items)
{
	const struct item *it = items;
	const struct item *a = &it[*(const size_t *)pa], *b = &it[*(const size_t *)pb];

	if (a->stream != b->stream)
		return a->stream < b->stream ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return *(const size_t *)pa < *(const size_t *)pb ? -1 : 1;
}

/* Most busy first, then by name. */
static int
arow_cmp(const void *pa, const void *pb, void *str)
{
	const struct arow *a = pa, *b = pb;

	if (a->busy_us != b->busy_us)
		return a->busy_us > b->busy_us ? -1 : 1;
	return strcmp(strtab_str(str, a->name), strtab_str(str, b->name));
}

void
annot_write(struct trace_reader *r, const struct trace *tr, uint32_t gpu_pid, uint32_t stage,
    const struct item *it, size_t n, double busy_us)
{
	uint32_t gua = strtab_find(r->str, "gpu_user_annotation", 19);
	size_t *ix, i, k, lo, hi, mid, nrow = 0, caprow = 0, np = 0, capp = 0, nr = 0, capr = 0;
	double *pmax;
	struct piece *p = NULL, *rg = NULL;
	struct arow *rows = NULL;
	imap by_name = { 0 };
	int isnew;

	if (gua == NOSTR || gpu_pid == NOSTR || n == 0)
		return;
	ix = xmalloc(n * sizeof *ix);
	pmax = xmalloc(n * sizeof *pmax);
	for (i = 0; i < n; i++)
		ix[i] = i;
	if (n > 1)
		xqsort_r(ix, n, sizeof *ix, by_stream, (void *)it);
	for (i = 0; i < n; i++)	/* prefix maximum of the ends within each stream's run */
		pmax[i] = i && it[ix[i - 1]].stream == it[ix[i]].stream && pmax[i - 1] > it[ix[i]].end ?
		    pmax[i - 1] : it[ix[i]].end;
	for (k = 0; k < tr->nan; k++) {
		const struct tannot *a = &tr->an[k];
		uint32_t stream;
		size_t first, row = 0;
		double aend;
		int hit = 0;
		if (a->cat != gua || trace_thread_pid(r, a->thread) != gpu_pid || !(a->dur > 0) ||
		    ss_bad_time(a->ts + (double)tr->time_base, a->dur))
			continue;
		aend = a->ts + a->dur;
		stream = trace_thread_tid(r, a->thread);
		lo = 0;
		hi = n;
		while (lo < hi) {	/* the stream's run starts at lo */
			mid = (lo + hi) / 2;
			if (it[ix[mid]].stream < stream)
				lo = mid + 1;
			else
				hi = mid;
		}
		first = lo;
		hi = n;
		while (lo < hi) {	/* lo: the first item of the run starting at or after the end */
			mid = (lo + hi) / 2;
			if (it[ix[mid]].stream == stream && it[ix[mid]].ts < aend)
				lo = mid + 1;
			else
				hi = mid;
		}
		size_t from = np;
		for (i = lo; i-- > first && pmax[i] > a->ts;) {
			const struct item *x = &it[ix[i]];
			double s = x->ts > a->ts ? x->ts : a->ts, e = x->end < aend ? x->end : aend;
			if (!(e > s))
				continue;
			if (!hit) {
				uint64_t *v = imap_insert(&by_name, a->name, nrow, &isnew);
				if (isnew) {
					xgrow(&rows, &caprow, nrow + 1, sizeof *rows);
					rows[nrow++] = (struct arow){ a->name, 0, 0, 0 };
				}
				row = (size_t)*v;
				rows[row].count++;
				xgrow(&rg, &capr, nr + 1, sizeof *rg);
				rg[nr++] = (struct piece){ row, a->ts, aend };
				hit = 1;
			}
			xgrow(&p, &capp, np + 1, sizeof *p);
			p[np++] = (struct piece){ row, s, e };
		}
		for (i = from; np && i < np - 1 - (i - from); i++) {	/* found last first: in order */
			struct piece x = p[i];
			p[i] = p[np - 1 - (i - from)];
			p[np - 1 - (i - from)] = x;
		}
	}
	measure_rows(p, np, rows, nrow, 0);
	measure_rows(rg, nr, rows, nrow, 1);
	if (nrow > 1)
		xqsort_r(rows, nrow, sizeof *rows, arow_cmp, (void *)r->str);
	for (i = 0; i < nrow; i++) {
		rec_begin(RT_annotation_time);
		rec_int(RM_annotation_time_t, tr->t);
		rec_cstr(RM_annotation_time_stage, strtab_str(r->str, stage));
		rec_cstr(RM_annotation_time_name, strtab_str(r->str, rows[i].name));
		rec_int(RM_annotation_time_count, rows[i].count);
		rec_num(RM_annotation_time_busy_us, rows[i].busy_us);
		rec_num(RM_annotation_time_share_pct, pct(rows[i].busy_us, busy_us));
		rec_num(RM_annotation_time_range_us, rows[i].range_us);
		rec_end();
	}
	imap_free(&by_name);
	free(rows);
	free(p);
	free(rg);
	free(pmax);
	free(ix);
}
