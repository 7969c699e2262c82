/*
 * Busy and idle per stream (issue 32): the GPU figures of step-stats(1)
 * for each stream's own items, so that a stream that waits (a
 * communication stream between collectives, a copy stream) shows.
 */
#include <stdlib.h>
#include <string.h>

#include "imap.h"
#include "rec.h"
#include "ss.h"
#include "xalloc.h"

struct st {
	uint32_t stream;
	long long kernels;
	double kernel_us, first, last;
	double bucket_us[B_COUNT];	/* kernel time by bucket, for its kind */
	struct uacc u;
};

static const char *const kind_name[B_COUNT] = { "compute", "communication", "memory" };

/* Most busy first, then by the stream's text. */
static int
st_cmp(const void *pa, const void *pb, void *str)
{
	const struct st *a = pa, *b = pb;
	double x = uacc_value(&a->u), y = uacc_value(&b->u);

	if (x != y)
		return x > y ? -1 : 1;
	return strcmp(strtab_str(str, a->stream), strtab_str(str, b->stream));
}

struct streams {
	imap ix;		/* stream id -> index into s */
	struct st *s;
	size_t ns, cap;
};

struct streams *
streams_new(void)
{
	return xcalloc(1, sizeof(struct streams));
}

void
streams_item(struct streams *ss, const struct item *x)
{
	int isnew;
	uint64_t *v = imap_insert(&ss->ix, x->stream, ss->ns, &isnew);
	struct st *a;

	if (isnew) {
		xgrow(&ss->s, &ss->cap, ss->ns + 1, sizeof *ss->s);
		memset(&ss->s[ss->ns], 0, sizeof ss->s[ss->ns]);
		ss->s[ss->ns].stream = x->stream;
		ss->s[ss->ns].first = x->ts;
		ss->s[ss->ns].last = x->end;
		ss->ns++;
	}
	a = &ss->s[*v];
	a->kernels++;
	a->kernel_us += x->dur;
	a->bucket_us[x->bucket] += x->dur;
	if (x->end > a->last)
		a->last = x->end;
	uacc_add(&a->u, x->ts, x->end);
}

void
streams_write(struct streams *ss, const struct trace_reader *r, long long t, uint32_t stage)
{
	struct st *s = ss->s;
	size_t ns = ss->ns, i;
	int b, kind;

	if (ns > 1)
		xqsort_r(s, ns, sizeof *s, st_cmp, (void *)r->str);
	for (i = 0; i < ns; i++) {
		double busy = uacc_value(&s[i].u), span = s[i].last - s[i].first;
		double idle = span - busy;
		for (kind = 0, b = 1; b < B_COUNT; b++)
			if (s[i].bucket_us[b] > s[i].bucket_us[kind])
				kind = b;
		rec_begin(RT_stream_time);
		rec_int(RM_stream_time_t, t);
		rec_cstr(RM_stream_time_stage, strtab_str(r->str, stage));
		rec_cstr(RM_stream_time_stream, strtab_str(r->str, s[i].stream));
		rec_cstr(RM_stream_time_kind, kind_name[kind]);
		rec_int(RM_stream_time_kernels, s[i].kernels);
		rec_num(RM_stream_time_kernel_us, s[i].kernel_us);
		rec_num(RM_stream_time_busy_us, busy);
		rec_num(RM_stream_time_span_us, span);
		rec_num(RM_stream_time_idle_us, idle > 0 ? idle : 0);
		rec_end();
	}
	imap_free(&ss->ix);
	free(s);
	free(ss);
}
