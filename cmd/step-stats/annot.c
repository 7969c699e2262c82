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

#include "err.h"
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

/* One GPU annotation range that counts: its row and the merged intervals it meets. */
struct win {
	size_t row, lo, hi;	/* merged intervals [lo, hi) of its stream */
	double ts, end;
};

static int
win_cmp(const void *pa, const void *pb)
{
	const struct win *a = pa, *b = pb;

	return a->row < b->row ? -1 : a->row > b->row;
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

/*
 * Pieces, at most, that a stage's annotations may cut from its items: 16
 * an item, nested ranges 16 deep that each span the whole stage.  Past it
 * (annotations that each span most of a long trace, by the thousand:
 * quadratic), the annotation_time records are left out and a note says so,
 * rather than hours or gigabytes (issue 30).
 */
#define PIECES_PER_ITEM 16
#define PIECES_MIN (1u << 22)

void
annot_write(struct trace_reader *r, const struct trace *tr, uint32_t gpu_pid, uint32_t stage,
    const struct item *it, size_t n, double busy_us)
{
	uint32_t gua = strtab_find(r->str, "gpu_user_annotation", 19);
	size_t *ix, i, j, k, lo, hi, mid, nrow = 0, caprow = 0, np = 0, capp = 0, nr = 0, capr = 0;
	size_t nm = 0, nw = 0, capw = 0, *run0, *run1, nrun = 0;
	unsigned long long total = 0;
	double *ms, *me;
	uint32_t *mstream;
	struct piece *p = NULL, *rg = NULL;
	struct win *w = NULL;
	struct arow *rows = NULL;
	imap by_name = { 0 };
	int isnew;

	if (gua == NOSTR || gpu_pid == NOSTR || n == 0)
		return;
	ix = xmalloc(n * sizeof *ix);
	for (i = 0; i < n; i++)
		ix[i] = i;
	if (n > 1)
		xqsort_r(ix, n, sizeof *ix, by_stream, (void *)it);
	/*
	 * Each stream's items merged as a union accumulator merges them (touching
	 * ones join): a range cut from these gives the pieces the items would,
	 * joined, so the same union and the same sums, from fewer pieces.
	 */
	ms = xmalloc(n * sizeof *ms);
	me = xmalloc(n * sizeof *me);
	mstream = xmalloc(n * sizeof *mstream);
	run0 = xmalloc(n * sizeof *run0);
	run1 = xmalloc(n * sizeof *run1);
	for (i = 0; i < n; i++) {
		const struct item *x = &it[ix[i]];
		if (nm && mstream[nm - 1] == x->stream && !(x->ts > me[nm - 1])) {
			if (x->end > me[nm - 1])
				me[nm - 1] = x->end;
			continue;
		}
		if (!nm || mstream[nm - 1] != x->stream) {
			if (nrun)
				run1[nrun - 1] = nm;
			run0[nrun++] = nm;
		}
		ms[nm] = x->ts;
		me[nm] = x->end;
		mstream[nm++] = x->stream;
	}
	run1[nrun - 1] = nm;
	for (k = 0; k < tr->nan; k++) {
		const struct tannot *a = &tr->an[k];
		uint32_t stream;
		size_t rl = 0, rh = nrun, first, last;
		double aend;
		uint64_t *v;
		if (a->cat != gua || trace_thread_pid(r, a->thread) != gpu_pid || !(a->dur > 0) ||
		    ss_bad_time(a->ts + (double)tr->time_base, a->dur))
			continue;
		aend = a->ts + a->dur;
		stream = trace_thread_tid(r, a->thread);
		while (rl < rh) {	/* the stream's run of merged intervals */
			mid = (rl + rh) / 2;
			if (mstream[run0[mid]] < stream)
				rl = mid + 1;
			else
				rh = mid;
		}
		if (rl == nrun || mstream[run0[rl]] != stream)
			continue;
		first = run0[rl];
		last = run1[rl];
		lo = first;
		hi = last;
		while (lo < hi) {	/* the first interval ending after the range starts */
			mid = (lo + hi) / 2;
			if (me[mid] > a->ts)
				hi = mid;
			else
				lo = mid + 1;
		}
		first = lo;
		hi = last;
		while (lo < hi) {	/* the first interval starting at or after its end */
			mid = (lo + hi) / 2;
			if (ms[mid] < aend)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == first)
			continue;
		v = imap_insert(&by_name, a->name, nrow, &isnew);
		if (isnew) {
			xgrow(&rows, &caprow, nrow + 1, sizeof *rows);
			rows[nrow++] = (struct arow){ a->name, 0, 0, 0 };
		}
		xgrow(&w, &capw, nw + 1, sizeof *w);
		w[nw++] = (struct win){ (size_t)*v, first, lo, a->ts, aend };
		total += lo - first;
	}
	if (total > (unsigned long long)PIECES_PER_ITEM * n + PIECES_MIN) {
		char text[320];
		snprintf(text, sizeof text, "The GPU time inside the GPU annotations is not measured: "
		    "%zu annotation ranges overlap %llu stretches of the stage's GPU work, more than "
		    "%llu (ranges that each span most of the trace); the other figures are.", nw, total,
		    (unsigned long long)PIECES_PER_ITEM * n + PIECES_MIN);
		rec_begin(RT_note);
		rec_int(RM_note_t, tr->t);
		rec_cstr(RM_note_stage, strtab_str(r->str, stage));
		rec_cstr(RM_note_id, "annotation_time_unmeasured");
		rec_cstr(RM_note_text, text);
		rec_end();
		warn_msg("%s", text);
		nrow = 0;
		nw = 0;
	}
	/* row by row: only one row's pieces are held at a time */
	if (nw > 1)
		xqsort(w, nw, sizeof *w, win_cmp);
	for (i = 0; i < nw; i = j) {
		struct uacc u = { 0 }, ur = { 0 };
		size_t row = w[i].row;
		np = nr = 0;
		for (j = i; j < nw && w[j].row == row; j++) {
			size_t from = np, m;
			for (m = w[j].lo; m < w[j].hi; m++) {
				double ps = ms[m] > w[j].ts ? ms[m] : w[j].ts;
				double pe = me[m] < w[j].end ? me[m] : w[j].end;
				if (!(pe > ps))
					continue;
				xgrow(&p, &capp, np + 1, sizeof *p);
				p[np++] = (struct piece){ row, ps, pe };
			}
			if (np > from) {	/* the range met some work: it counts */
				rows[row].count++;
				xgrow(&rg, &capr, nr + 1, sizeof *rg);
				rg[nr++] = (struct piece){ row, w[j].ts, w[j].end };
			}
		}
		if (np > 1)
			xqsort(p, np, sizeof *p, piece_cmp);
		for (k = 0; k < np; k++)
			uacc_add(&u, p[k].ts, p[k].end);
		rows[row].busy_us = uacc_value(&u);
		if (nr > 1)
			xqsort(rg, nr, sizeof *rg, piece_cmp);
		for (k = 0; k < nr; k++)
			uacc_add(&ur, rg[k].ts, rg[k].end);
		rows[row].range_us = uacc_value(&ur);
	}
	/* rows whose ranges met only zero-length items: none of their own */
	for (i = 0, j = 0; i < nrow; i++)
		if (rows[i].count)
			rows[j++] = rows[i];
	nrow = j;
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
	free(w);
	free(ms);
	free(me);
	free(mstream);
	free(run0);
	free(run1);
	free(ix);
}
