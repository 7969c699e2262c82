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
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

void
ta_add(struct ta_out *o, uint32_t track, double ts_us, double end_us, uint32_t ref, uint32_t aux)
{
	struct ta_find *f;
	long long a, b;

	if (!to_ns(ts_us, &a) || !to_ns(end_us, &b) || b < a)
		return;
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
	long long *lane_end = NULL;	/* per lane of the current track: its last slice's end */
	long long tid = 0, *first_tid;	/* per track: the tid of its first lane */
	size_t nlane, caplane = 0, i, j, lane;
	sbuf name = SBUF_INIT, args = SBUF_INIT, tn = SBUF_INIT;
	struct emit e = { put, ctx, SBUF_INIT, 1 };
	const char *c, *end;

	if (o->nf == 0 && o->ncounters == 0)
		return;
	meta(&e, lead, o->pid, 0, "process_name", "name", "triage findings", 0);
	/* Kineto sorts its processes by pid (GPUs from 16777216): a negative index is first */
	meta(&e, lead, o->pid, 0, "process_sort_index", "sort_index", NULL, -1);
	if (o->nf > 1)
		xqsort_r(o->f, o->nf, sizeof *o->f, by_track_start, o);
	first_tid = xcalloc(o->ntrack + 1, sizeof *first_tid);
	/* the lanes first: each lane a track of its own, named before any slice */
	for (i = 0; i < o->nf; i = j) {
		uint32_t tr = o->f[i].track;
		nlane = 0;
		for (j = i; j < o->nf && o->f[j].track == tr; j++) {
			struct ta_find *f = &o->f[j];
			for (lane = 0; lane < nlane && lane_end[lane] > f->ts; lane++)
				;
			if (lane == nlane) {
				xgrow(&lane_end, &caplane, nlane + 1, sizeof *lane_end);
				sb_reset(&tn);
				sb_adds(&tn, ta_s(o->track_name[tr]));
				if (nlane)
					sb_printf(&tn, " (%zu)", nlane + 1);
				if (!nlane)
					first_tid[tr] = tid + 1;
				++tid;
				meta(&e, lead, o->pid, tid, "thread_name", "name", sb_str(&tn), 0);
				meta(&e, lead, o->pid, tid, "thread_sort_index", "sort_index", NULL, tid);
				nlane++;
			}
			lane_end[lane] = f->end;
			f->lane = (uint32_t)lane;
		}
		flush(&e, 0);
	}
	for (i = 0; i < o->nf; i++) {
		const struct ta_find *f = &o->f[i];
		sbuf *out = event(&e, lead);
		sb_reset(&name);
		sb_reset(&args);
		ta_slice(o, f, &name, &args);
		sb_adds(out, "{\"ph\":\"X\",\"cat\":\"triage\",\"name\":");
		json_quote(out, sb_str(&name), name.len);
		sb_printf(out, ",\"pid\":%lld,\"tid\":%lld,\"ts\":", o->pid,
		    first_tid[f->track] + (long long)f->lane);
		ta_ts_text(o->tr->base, f->ts, out);
		sb_adds(out, ",\"dur\":");
		ta_ts_text(0, f->end - f->ts, out);
		sb_printf(out, ",\"args\":{%s}}", sb_str(&args));
		flush(&e, 0);
	}
	/* the counters, one event a line in o->counters */
	for (c = sb_str(&o->counters); *c; c = end + 1) {
		end = strchr(c, '\n');
		sb_add(event(&e, lead), c, (size_t)(end - c));
		flush(&e, 0);
	}
	sb_adds(&e.b, "\n");
	flush(&e, 1);
	free(lane_end);
	free(first_tid);
	sb_free(&name);
	sb_free(&args);
	sb_free(&tn);
	sb_free(&e.b);
}
