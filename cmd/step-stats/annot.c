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

/* A GPU annotation range that counts, in the trace's annotation order. */
struct win {
	uint32_t name, stream;
	double ts, end;
	long long overlaps;	/* merged stretches of the stage's work it meets */
	int counted;		/* it cut a piece of positive length from them */
	size_t row;
};

/* A piece of work inside a range: its range (index into the windows), clipped. */
struct piece {
	size_t w;
	double ts, end;
};

struct arow {
	uint32_t name;
	long long count;
	double busy_us, range_us;
};

int
items_by_stream(const void *pa, const void *pb, void *str)
{
	const struct aitem *a = pa, *b = pb;
	int c = stage_cmp(str, a->stage, b->stage);

	if (c)
		return c;
	if (a->stream != b->stream)
		return a->stream < b->stream ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (a->end != b->end)
		return a->end < b->end ? -1 : 1;
	return a->ord < b->ord ? -1 : a->ord > b->ord;
}

/* The windows by (stream, start), for the sweep. */
static const struct win *sort_w;

static int
win_by_stream(const void *pa, const void *pb)
{
	const struct win *a = &sort_w[*(const size_t *)pa], *b = &sort_w[*(const size_t *)pb];

	if (a->stream != b->stream)
		return a->stream < b->stream ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return *(const size_t *)pa < *(const size_t *)pb ? -1 : 1;
}

/* Pieces by (row, start, end): ctx is the windows, which know their rows. */
static int
piece_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct piece *a = pa, *b = pb;
	const struct win *w = ctx;

	if (w[a->w].row != w[b->w].row)
		return w[a->w].row < w[b->w].row ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->end < b->end ? -1 : a->end > b->end;
}

static int
range_cmp(const void *pa, const void *pb)
{
	const struct span *a = pa, *b = pb;

	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->end < b->end ? -1 : a->end > b->end;
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

/*
 * One merged stretch [ms, me) of a stream's work against the ranges of
 * that stream: ix[*p..) by start, act the ranges open so far.
 */
struct sweep {
	struct win *w;
	size_t *ix, nw, p;	/* the ranges by (stream, start); the next to open */
	size_t *act, nact, capact;
	uint32_t stream;
	struct xsort *pieces;	/* in the order cut; sorted once the rows are known */
};

static void
stretch(struct sweep *s, uint32_t stream, double ms, double me)
{
	size_t j, m;

	if (stream != s->stream) {
		s->stream = stream;
		s->nact = 0;
		while (s->p < s->nw && s->w[s->ix[s->p]].stream < stream)
			s->p++;
	}
	while (s->p < s->nw && s->w[s->ix[s->p]].stream == stream && s->w[s->ix[s->p]].ts < me) {
		xgrow(&s->act, &s->capact, s->nact + 1, sizeof *s->act);
		s->act[s->nact++] = s->ix[s->p++];
	}
	for (j = m = 0; j < s->nact; j++) {
		struct win *w = &s->w[s->act[j]];
		double ps, pe;
		if (!(w->end > ms))
			continue;	/* ended: later stretches start later still */
		s->act[m++] = s->act[j];
		w->overlaps++;
		ps = ms > w->ts ? ms : w->ts;
		pe = me < w->end ? me : w->end;
		if (pe > ps) {
			struct piece x = { s->act[j], ps, pe };
			xsort_add(s->pieces, &x);
			w->counted = 1;
		}
	}
	s->nact = m;
}

void
annot_write(struct trace_reader *r, const struct trace *tr, uint32_t gpu_pid, uint32_t stage,
    struct xsort *by_stream, const struct aitem **cur, size_t n, double busy_us)
{
	uint32_t gua = strtab_find(r->str, "gpu_user_annotation", 19);
	struct sweep sw;
	struct arow *rows = NULL;
	struct span *rg = NULL;
	const struct piece *pc;
	imap by_name = { 0 };
	size_t i, j, k, nrow = 0, caprow = 0, nr, capr = 0, capw = 0;
	struct xsort *sorted = NULL;
	unsigned long long total = 0;
	double ms = 0, me = 0;
	uint32_t mstream = 0;
	int open = 0, isnew;

	memset(&sw, 0, sizeof sw);
	for (k = 0; gua != NOSTR && gpu_pid != NOSTR && k < tr->nan; k++) {
		const struct tannot *a = &tr->an[k];
		if (a->cat != gua || trace_thread_pid(r, a->thread) != gpu_pid || !(a->dur > 0) ||
		    ss_bad_time(a->ts + (double)tr->time_base, a->dur))
			continue;
		xgrow(&sw.w, &capw, sw.nw + 1, sizeof *sw.w);
		memset(&sw.w[sw.nw], 0, sizeof sw.w[0]);
		sw.w[sw.nw].name = a->name;
		sw.w[sw.nw].stream = trace_thread_tid(r, a->thread);
		sw.w[sw.nw].ts = a->ts;
		sw.w[sw.nw].end = a->ts + a->dur;
		sw.nw++;
	}
	sw.ix = xmalloc((sw.nw ? sw.nw : 1) * sizeof *sw.ix);
	for (i = 0; i < sw.nw; i++)
		sw.ix[i] = i;
	sort_w = sw.w;
	if (sw.nw > 1)
		xqsort(sw.ix, sw.nw, sizeof *sw.ix, win_by_stream);
	sw.pieces = xsort_new(sizeof(struct piece), NULL, NULL);
	sw.stream = NOSTR;
	/*
	 * The stage's items, stream by stream, merged as a union accumulator
	 * merges them (touching ones join): the ranges cut the pieces the items
	 * would, joined, so the same union and the same sums from fewer pieces.
	 */
	for (i = 0; i < n && *cur; i++, *cur = xsort_next(by_stream)) {
		const struct aitem *x = *cur;
		if (sw.nw == 0)
			continue;	/* still read: the next stage's items follow */
		if (open && mstream == x->stream && !(x->ts > me)) {
			if (x->end > me)
				me = x->end;
			continue;
		}
		if (open)
			stretch(&sw, mstream, ms, me);
		open = 1;
		mstream = x->stream;
		ms = x->ts;
		me = x->end;
	}
	if (open)
		stretch(&sw, mstream, ms, me);
	if (sw.nw == 0 || n == 0)
		goto out;
	/* rows by name, in the order of the ranges that met some work */
	for (i = 0; i < sw.nw; i++) {
		uint64_t *v;
		if (!sw.w[i].overlaps)
			continue;
		total += (unsigned long long)sw.w[i].overlaps;
		v = imap_insert(&by_name, sw.w[i].name, nrow, &isnew);
		if (isnew) {
			xgrow(&rows, &caprow, nrow + 1, sizeof *rows);
			rows[nrow++] = (struct arow){ sw.w[i].name, 0, 0, 0 };
		}
		sw.w[i].row = (size_t)*v;
		if (sw.w[i].counted)
			rows[*v].count++;
	}
	if (total > (unsigned long long)PIECES_PER_ITEM * n + PIECES_MIN) {
		char text[320];
		size_t nwin = 0;
		for (i = 0; i < sw.nw; i++)
			nwin += sw.w[i].overlaps > 0;
		snprintf(text, sizeof text, "The GPU time inside the GPU annotations is not measured: "
		    "%zu annotation ranges overlap %llu stretches of the stage's GPU work, more than "
		    "%llu (ranges that each span most of the trace); the other figures are.", nwin,
		    total, (unsigned long long)PIECES_PER_ITEM * n + PIECES_MIN);
		rec_begin(RT_note);
		rec_int(RM_note_t, tr->t);
		rec_cstr(RM_note_stage, strtab_str(r->str, stage));
		rec_cstr(RM_note_id, "annotation_time_unmeasured");
		rec_cstr(RM_note_text, text);
		rec_end();
		warn_msg("%s", text);
		goto out;
	}
	/* each row's busy time: the union of its pieces, in order */
	sorted = xsort_new(sizeof(struct piece), piece_cmp, sw.w);
	while ((pc = xsort_next(sw.pieces)) != NULL)
		xsort_add(sorted, pc);
	pc = xsort_next(sorted);
	while (pc) {
		size_t row = sw.w[pc->w].row;
		struct uacc u = { 0 };
		for (; pc && sw.w[pc->w].row == row; pc = xsort_next(sorted))
			uacc_add(&u, pc->ts, pc->end);
		rows[row].busy_us = uacc_value(&u);
	}
	/* and how long its counted ranges were open: their union */
	for (j = 0; j < nrow; j++) {
		struct uacc ur = { 0 };
		nr = 0;
		for (i = 0; i < sw.nw; i++)
			if (sw.w[i].overlaps && sw.w[i].counted && sw.w[i].row == j) {
				xgrow(&rg, &capr, nr + 1, sizeof *rg);
				rg[nr++] = (struct span){ sw.w[i].ts, sw.w[i].end };
			}
		if (nr > 1)
			xqsort(rg, nr, sizeof *rg, range_cmp);
		for (k = 0; k < nr; k++)
			uacc_add(&ur, rg[k].ts, rg[k].end);
		rows[j].range_us = uacc_value(&ur);
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
out:
	imap_free(&by_name);
	free(rows);
	free(rg);
	free(sw.w);
	free(sw.ix);
	free(sw.act);
	xsort_free(sw.pieces);
	xsort_free(sorted);
}
