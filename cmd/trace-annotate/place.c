/*
 * Tracks and the events of the "triage findings" process (Trace Event
 * Format): metadata naming the process and its tracks, one complete (X)
 * event per finding, counter (C) events.  Slices of one track never
 * overlap: a finding that would overlap the one before it goes to the
 * first lane of its kind where it fits, a track of its own named like the
 * kind's with " (2)", " (3)"... (Perfetto would move overlapping complete
 * events to an overflow track of its own making; chrome://tracing draws
 * them over each other).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "err.h"
#include "json.h"
#include "num.h"
#include "ta.h"
#include "xalloc.h"

uint32_t
ta_track(struct ta_out *o, int kind, const char *name)
{
	uint32_t id = strtab_intern(ta.str, name, strlen(name));
	size_t i;

	for (i = 0; i < o->ntrack; i++)
		if (o->track_name[i] == id && o->track_kind[i] == kind)
			return (uint32_t)i;
	xgrow(&o->track_name, &o->captrack, o->ntrack + 1, sizeof *o->track_name);
	o->track_kind = xreallocarray(o->track_kind, o->captrack, 1);
	o->track_name[o->ntrack] = id;
	o->track_kind[o->ntrack] = (unsigned char)kind;
	return (uint32_t)o->ntrack++;
}

/* Microseconds to nanoseconds, rounded; 0 when it does not fit (checked by the caller). */
static int
to_ns(double us, long long *ns)
{
	double v = us * 1000.0;

	if (!(v > -9e18 && v < 9e18))
		return 0;
	*ns = llround(v);
	return 1;
}

static void spill(struct ta_out *o);

/* Findings held before a sorted run of them goes to the temporary file (ta.h). */
static size_t
run_cap(void)
{
	static size_t cap;
	const char *v, *errstr;
	long long n;

	if (cap)
		return cap;
	cap = (4u << 20) / sizeof(struct ta_find);
	v = getenv("TRIAGE_SPOOL_MEM");	/* as trace-extract's; the tests make it small */
	if (v && *v && parse_num(v, 1, 1LL << 40, &n, &errstr)) {
		cap = (size_t)n / sizeof(struct ta_find);
		if (cap < 1)
			cap = 1;
	}
	return cap;
}

void
ta_add(struct ta_out *o, uint32_t track, double ts_us, double end_us, uint32_t ref, uint32_t aux)
{
	struct ta_find *f;
	long long a, b;

	if (!to_ns(ts_us, &a) || !to_ns(end_us, &b) || b < a)
		return;
	if (o->nf >= run_cap())
		spill(o);
	xgrow(&o->f, &o->capf, o->nf + 1, sizeof *o->f);
	f = &o->f[o->nf++];
	f->ts = a;
	f->end = b;
	f->track = track;
	f->ref = ref;
	f->aux = aux;
}

void
ta_ts_text(long long base, long long ns, sbuf *out)
{
	long long q = ns / 1000, r = ns % 1000, whole;
	char frac[8];
	int k;

	if (r < 0) {	/* floor division: r in 0..999 */
		r += 1000;
		q -= 1;
	}
	whole = base + q;
	if (whole < 0 && r > 0) {	/* -4.75 is -(4 + 0.75): the fraction counts down */
		sb_printf(out, "-%lld", -whole - 1);
		r = 1000 - r;
	} else {
		sb_printf(out, "%lld", whole);
	}
	if (r == 0)
		return;
	snprintf(frac, sizeof frac, "%03lld", r);
	for (k = 2; k > 0 && frac[k] == '0'; k--)
		frac[k] = '\0';
	sb_printf(out, ".%s", frac);
}

void
ta_counter(struct ta_out *o, const char *name, double ts_us, const char *series, double value)
{
	long long ns;
	char buf[40];

	if (!to_ns(ts_us, &ns) || !isfinite(value))
		return;
	sb_adds(&o->counters, "{\"ph\":\"C\",\"cat\":\"triage\",\"name\":");
	json_quote(&o->counters, name, strlen(name));
	sb_printf(&o->counters, ",\"pid\":%lld,\"ts\":", o->pid);
	ta_ts_text(o->tr->base, ns, &o->counters);
	sb_adds(&o->counters, ",\"args\":{");
	json_quote(&o->counters, series, strlen(series));
	sb_printf(&o->counters, ":%s}}\n", num_json(value, buf));
	o->ncounters++;
}

/* Tracks by kind (the display order), then as made; a track's slices by start. */
static int
by_track_start(const void *pa, const void *pb, void *ctx)
{
	const struct ta_find *a = pa, *b = pb;
	const struct ta_out *o = ctx;
	int c;

	if (o->track_kind[a->track] != o->track_kind[b->track])
		return o->track_kind[a->track] < o->track_kind[b->track] ? -1 : 1;
	if (a->track != b->track)
		return a->track < b->track ? -1 : 1;
	if ((c = num_cmp(a->ts, b->ts)) || (c = num_cmp(a->end, b->end)))
		return c;
	return (a->ref > b->ref) - (a->ref < b->ref);
}

/*
 * The findings held, sorted, as one more run of the temporary file.  The
 * sort is stable and the runs merge with ties going to the earlier run,
 * so the order is the one sort of them all would give.
 */
static void
spill(struct ta_out *o)
{
	if (o->nf == 0)
		return;
	if (!o->runs)
		o->runs = ta_tmpfile("the findings");
	if (o->nf > 1)
		xqsort_r(o->f, o->nf, sizeof *o->f, by_track_start, o);
	if (fseeko(o->runs, 0, SEEK_END) != 0 ||
	    fwrite(o->f, sizeof *o->f, o->nf, o->runs) != o->nf)
		die(EXIT_DATA, "cannot write a temporary file for the findings: %s", strerror(errno));
	xgrow(&o->run_len, &o->caprun, o->nruns + 1, sizeof *o->run_len);
	o->run_len[o->nruns++] = o->nf;
	o->nf = 0;
}

/* A spooled run being read back: its next findings, a buffer at a time. */
#define RUN_BUF 2048

struct rrun {
	off_t off;		/* of its next finding not in buf */
	size_t left;		/* findings not yet in buf */
	struct ta_find buf[RUN_BUF];
	size_t n, i;		/* buf holds n, the next is buf[i] */
};

/* The findings in order: o->f sorted, or the runs merged (a heap of them by their next). */
struct fsrc {
	struct ta_out *o;
	size_t i;
	struct rrun *r;
	size_t *heap, nh;
	struct ta_find cur;	/* the one src_next returned, out of the way of a refill */
};

static int
refill(struct fsrc *s, struct rrun *r)
{
	size_t k = r->left < RUN_BUF ? r->left : RUN_BUF;

	r->i = r->n = 0;
	if (k == 0)
		return 0;
	if (fseeko(s->o->runs, r->off, SEEK_SET) != 0 ||
	    fread(r->buf, sizeof *r->buf, k, s->o->runs) != k)
		die(EXIT_DATA, "cannot read back a temporary file of the findings: %s",
		    ferror(s->o->runs) ? strerror(errno) : "it is shorter than written");
	r->off += (off_t)(k * sizeof *r->buf);
	r->left -= k;
	r->n = k;
	return 1;
}

/* Does run a's next finding go before run b's? */
static int
run_before(const struct fsrc *s, size_t a, size_t b)
{
	const struct rrun *x = &s->r[a], *y = &s->r[b];
	int c = by_track_start(&x->buf[x->i], &y->buf[y->i], s->o);

	return c < 0 || (c == 0 && a < b);
}

static void
heap_down(struct fsrc *s, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i, t;
		if (l < s->nh && run_before(s, s->heap[l], s->heap[m]))
			m = l;
		if (l + 1 < s->nh && run_before(s, s->heap[l + 1], s->heap[m]))
			m = l + 1;
		if (m == i)
			return;
		t = s->heap[i];
		s->heap[i] = s->heap[m];
		s->heap[m] = t;
		i = m;
	}
}

static void
src_open(struct fsrc *s, struct ta_out *o)
{
	size_t i;
	off_t off = 0;

	memset(s, 0, sizeof *s);
	s->o = o;
	if (!o->nruns)
		return;
	s->r = xcalloc(o->nruns, sizeof *s->r);
	s->heap = xmalloc(o->nruns * sizeof *s->heap);
	for (i = 0; i < o->nruns; i++) {
		s->r[i].off = off;
		s->r[i].left = o->run_len[i];
		off += (off_t)(o->run_len[i] * sizeof(struct ta_find));
		if (refill(s, &s->r[i]))
			s->heap[s->nh++] = i;
	}
	for (i = s->nh / 2; i-- > 0;)
		heap_down(s, i);
}

/* The next finding in order (valid until the next call), or NULL. */
static const struct ta_find *
src_next(struct fsrc *s)
{
	struct rrun *r;
	const struct ta_find *f;

	if (!s->r)
		return s->i < s->o->nf ? &s->o->f[s->i++] : NULL;
	if (s->nh == 0)
		return NULL;
	r = &s->r[s->heap[0]];
	f = &r->buf[r->i];
	s->cur = *f;
	if (++r->i == r->n && !refill(s, r))
		s->heap[0] = s->heap[--s->nh];
	if (s->nh)
		heap_down(s, 0);
	return &s->cur;
}

static void
src_close(struct fsrc *s)
{
	free(s->r);
	free(s->heap);
}

/* The lanes of the current track: each one's last slice's end. */
struct lanes {
	long long *end;
	size_t n, cap;
	uint32_t track;
	int any;
};

/* f's lane among its track's, the first where it fits; *opened when it needed a new one. */
static size_t
lane_of(struct lanes *l, const struct ta_find *f, int *opened)
{
	size_t lane;

	if (!l->any || f->track != l->track) {
		l->n = 0;
		l->track = f->track;
		l->any = 1;
	}
	for (lane = 0; lane < l->n && l->end[lane] > f->ts; lane++)
		;
	*opened = lane == l->n;
	if (*opened) {
		xgrow(&l->end, &l->cap, l->n + 1, sizeof *l->end);
		l->n++;
	}
	l->end[lane] = f->end;
	return lane;
}

/* The events as they are made, handed to put in pieces of about 64 KiB. */
struct emit {
	void (*put)(void *ctx, const char *p, size_t n);
	void *ctx;
	sbuf b;
	int first;
};

/* Start one event: the separator from the one before (the lead before the first). */
static sbuf *
event(struct emit *e, const char *lead)
{
	sb_adds(&e->b, e->first ? lead : ",\n");
	e->first = 0;
	return &e->b;
}

static void
flush(struct emit *e, int all)
{
	if (e->b.len >= (64u << 10) || (all && e->b.len)) {
		e->put(e->ctx, e->b.s, e->b.len);
		sb_reset(&e->b);
	}
}

static void
meta(struct emit *e, const char *lead, long long pid, long long tid, const char *what,
    const char *key, const char *text, long long num)
{
	sbuf *out = event(e, lead);

	sb_printf(out, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%lld,\"tid\":%lld,\"args\":{\"%s\":",
	    what, pid, tid, key);
	if (text)
		json_quote(out, text, strlen(text));
	else
		sb_printf(out, "%lld", num);
	sb_adds(out, "}}");
}

void
ta_events(struct ta_out *o, const char *lead, void (*put)(void *ctx, const char *p, size_t n),
    void *ctx)
{
	struct lanes ln = { NULL, 0, 0, 0, 0 };
	long long tid = 0, *first_tid;	/* per track: the tid of its first lane */
	size_t lane;
	sbuf name = SBUF_INIT, args = SBUF_INIT, tn = SBUF_INIT;
	struct emit e = { put, ctx, SBUF_INIT, 1 };
	struct fsrc src;
	const struct ta_find *f;
	const char *c, *end;
	int opened;

	if (o->nf == 0 && o->nruns == 0 && o->ncounters == 0)
		return;
	meta(&e, lead, o->pid, 0, "process_name", "name", "triage findings", 0);
	/* Kineto sorts its processes by pid (GPUs from 16777216): a negative index is first */
	meta(&e, lead, o->pid, 0, "process_sort_index", "sort_index", NULL, -1);
	if (o->nruns)
		spill(o);	/* the rest as the last run: they all merge */
	else if (o->nf > 1)
		xqsort_r(o->f, o->nf, sizeof *o->f, by_track_start, o);
	first_tid = xcalloc(o->ntrack + 1, sizeof *first_tid);
	/* the lanes first: each lane a track of its own, named before any slice */
	src_open(&src, o);
	while ((f = src_next(&src)) != NULL) {
		lane = lane_of(&ln, f, &opened);
		if (opened) {
			sb_reset(&tn);
			sb_adds(&tn, ta_s(o->track_name[f->track]));
			if (lane)
				sb_printf(&tn, " (%zu)", lane + 1);
			else
				first_tid[f->track] = tid + 1;
			++tid;
			meta(&e, lead, o->pid, tid, "thread_name", "name", sb_str(&tn), 0);
			meta(&e, lead, o->pid, tid, "thread_sort_index", "sort_index", NULL, tid);
			flush(&e, 0);
		}
	}
	src_close(&src);
	/* then the slices, each on its lane again */
	ln.any = 0;
	src_open(&src, o);
	while ((f = src_next(&src)) != NULL) {
		sbuf *out = event(&e, lead);
		lane = lane_of(&ln, f, &opened);
		sb_reset(&name);
		sb_reset(&args);
		ta_slice(o, f, &name, &args);
		sb_adds(out, "{\"ph\":\"X\",\"cat\":\"triage\",\"name\":");
		json_quote(out, sb_str(&name), name.len);
		sb_printf(out, ",\"pid\":%lld,\"tid\":%lld,\"ts\":", o->pid,
		    first_tid[f->track] + (long long)lane);
		ta_ts_text(o->tr->base, f->ts, out);
		sb_adds(out, ",\"dur\":");
		ta_ts_text(0, f->end - f->ts, out);
		sb_printf(out, ",\"args\":{%s}}", sb_str(&args));
		flush(&e, 0);
	}
	src_close(&src);
	/* the counters, one event a line in o->counters */
	for (c = sb_str(&o->counters); *c; c = end + 1) {
		end = strchr(c, '\n');
		sb_add(event(&e, lead), c, (size_t)(end - c));
		flush(&e, 0);
	}
	sb_adds(&e.b, "\n");
	flush(&e, 1);
	free(ln.end);
	free(first_tid);
	sb_free(&name);
	sb_free(&args);
	sb_free(&tn);
	sb_free(&e.b);
}
