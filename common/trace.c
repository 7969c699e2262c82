/* The per-trace reader: one trace's records as typed arrays. */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "rules.h"
#include "trace.h"
#include "xalloc.h"

void
trace_free(struct trace *tr)
{
	free(tr->k);
	free(tr->op);
	free(tr->ln);
	free(tr->fr);
	free(tr->an);
	free(tr->tn);
	imap_free(&tr->corr);
	free(tr->stats_line);
	memset(tr, 0, sizeof *tr);
}

void
trace_reader_init(struct trace_reader *r, strtab *str, const struct trace_ops *ops)
{
	memset(r, 0, sizeof *r);
	r->ops = *ops;
	r->str = str;
}

void
trace_reader_free(struct trace_reader *r)
{
	trace_free(&r->tr);
	imap_free(&r->thread_ix);
	free(r->thr_pid);
	free(r->thr_tid);
	sb_free(&r->lastpid);
	sb_free(&r->lasttid);
	r->nthr = r->capthr = 0;
}

uint32_t
trace_intern(struct trace_reader *r, struct rstr s)
{
	return strtab_intern(r->str, s.s ? s.s : "", s.n);
}

uint32_t
trace_thread_pid(const struct trace_reader *r, uint32_t thread)
{
	return r->thr_pid[thread];
}

uint32_t
trace_thread_tid(const struct trace_reader *r, uint32_t thread)
{
	return r->thr_tid[thread];
}

uint32_t
trace_thread_count(const struct trace_reader *r)
{
	return (uint32_t)r->nthr;
}

/*
 * The thread id of (pid, tid).  Consecutive records mostly share their
 * thread, so the last one's text is compared before anything is interned.
 */
static uint32_t
thread_of(struct trace_reader *r, struct rstr pid, struct rstr tid)
{
	uint32_t p, t;
	uint64_t *v;
	int isnew;

	if (r->nthr && pid.n == r->lastpid.len && tid.n == r->lasttid.len &&
	    memcmp(pid.s, sb_str(&r->lastpid), pid.n) == 0 &&
	    memcmp(tid.s, sb_str(&r->lasttid), tid.n) == 0)
		return r->lastthread;
	p = trace_intern(r, pid);
	t = trace_intern(r, tid);
	v = imap_put(&r->thread_ix, (uint64_t)p << 32 | t, &isnew);
	if (isnew) {
		size_t cap = r->capthr;
		xgrow(&r->thr_pid, &cap, r->nthr + 1, sizeof *r->thr_pid);
		if (cap != r->capthr)
			r->thr_tid = xreallocarray(r->thr_tid, cap, sizeof *r->thr_tid);
		r->capthr = cap;
		r->thr_pid[r->nthr] = p;
		r->thr_tid[r->nthr] = t;
		*v = r->nthr++;
	}
	sb_reset(&r->lastpid);
	sb_add(&r->lastpid, pid.s, pid.n);
	sb_reset(&r->lasttid);
	sb_add(&r->lasttid, tid.s, tid.n);
	r->lastthread = (uint32_t)*v;
	return r->lastthread;
}

/* A record of the open trace: its "t" must be the trace's. */
static void
need_trace(struct trace_reader *r, enum rec_type t, long long rt)
{
	if (!r->open)
		rec_die(&r->rd, "%s record outside a trace (no trace record before it)",
		    rec_types[t].name);
	if (rt != r->tr.t)
		rec_die(&r->rd, "%s record for trace %lld inside trace %lld", rec_types[t].name,
		    rt, r->tr.t);
}

static int
keep(struct trace_reader *r, enum rec_type t, const void *rec)
{
	return !r->ops.keep || r->ops.keep(r->ops.ctx, r, t, rec);
}

static void
open_trace(struct trace_reader *r)
{
	struct rec_trace x;

	REC_READ(&r->rd, trace, &x);
	if (r->open)
		rec_die(&r->rd, "trace record inside trace %lld (its stats record is missing; "
		    "input truncated?)", r->tr.t);
	trace_free(&r->tr);
	r->tr.t = x.t;
	r->tr.role = trace_intern(r, x.role);
	r->tr.path = trace_intern(r, x.path);
	if (REC_HAS(&x, trace, stage)) {
		r->tr.stage = trace_intern(r, x.stage);
	} else {
		/* the path's stage (kernel-table.md §3.1), as trace-extract would write it */
		char *path = rstr_dup(x.path);
		const char *st = parse_stage(path);
		r->tr.stage = strtab_intern(r->str, st, strlen(st));
		free(path);
	}
	r->tr.rank = x.rank;
	r->tr.has_rank = REC_HAS(&x, trace, rank);
	r->open = 1;
}

static void
add_kernel(struct trace_reader *r)
{
	struct rec_kernel x;
	struct tkernel *k;

	REC_READ(&r->rd, kernel, &x);
	need_trace(r, RT_kernel, x.t);
	if (!keep(r, RT_kernel, &x))
		return;
	xgrow(&r->tr.k, &r->tr.capk, r->tr.nk + 1, sizeof *r->tr.k);
	k = &r->tr.k[r->tr.nk++];
	memset(k, 0, sizeof *k);
	k->ts = x.ts;
	k->dur = x.dur;
	k->name = trace_intern(r, x.name);
	k->cat = trace_intern(r, x.cat);
	k->thread = thread_of(r, x.pid, x.tid);
	k->stream = REC_HAS(&x, kernel, stream) ? trace_intern(r, x.stream) : NOSTR;
	k->stage = REC_HAS(&x, kernel, stage) ? trace_intern(r, x.stage) : NOSTR;
	k->ext = x.external_id;
	k->ext_src = REC_HAS(&x, kernel, external_id) ? EXT_OWN : EXT_NONE;
	k->corr = x.correlation;
	k->has_corr = REC_HAS(&x, kernel, correlation);
	k->overlap = x.overlap;
	k->sel = x.sel;
}

static void
add_call(struct trace_reader *r, enum rec_type t)
{
	struct tcall *c;
	struct rstr name, pid, tid;
	struct rec_cpu_op o;
	struct rec_launch l;

	if (t == RT_cpu_op) {
		REC_READ(&r->rd, cpu_op, &o);
		need_trace(r, t, o.t);
		if (!keep(r, t, &o))
			return;
		xgrow(&r->tr.op, &r->tr.capop, r->tr.nop + 1, sizeof *r->tr.op);
		c = &r->tr.op[r->tr.nop++];
		c->ts = o.ts;
		c->dur = o.dur;
		c->ext = o.external_id;
		c->ext_src = REC_HAS(&o, cpu_op, external_id) ? EXT_OWN : EXT_NONE;
		c->corr = o.correlation;
		c->has_corr = REC_HAS(&o, cpu_op, correlation);
		name = o.name;
		pid = o.pid;
		tid = o.tid;
	} else {
		REC_READ(&r->rd, launch, &l);
		need_trace(r, t, l.t);
		if (!keep(r, t, &l))
			return;
		xgrow(&r->tr.ln, &r->tr.capln, r->tr.nln + 1, sizeof *r->tr.ln);
		c = &r->tr.ln[r->tr.nln++];
		c->ts = l.ts;
		c->dur = l.dur;
		c->ext = l.external_id;
		c->ext_src = REC_HAS(&l, launch, external_id) ? EXT_OWN : EXT_NONE;
		c->corr = l.correlation;
		c->has_corr = 1;
		name = l.name;
		pid = l.pid;
		tid = l.tid;
	}
	c->name = trace_intern(r, name);
	c->thread = thread_of(r, pid, tid);
}

static void
add_frame(struct trace_reader *r)
{
	struct rec_frame x;
	struct tframe *f;

	REC_READ(&r->rd, frame, &x);
	need_trace(r, RT_frame, x.t);
	if (!keep(r, RT_frame, &x))
		return;
	xgrow(&r->tr.fr, &r->tr.capfr, r->tr.nfr + 1, sizeof *r->tr.fr);
	f = &r->tr.fr[r->tr.nfr++];
	f->ts = x.ts;
	f->dur = x.dur;
	f->name = trace_intern(r, x.name);
	f->thread = thread_of(r, x.pid, x.tid);
}

static void
add_annotation(struct trace_reader *r)
{
	struct rec_annotation x;
	struct tannot *a;

	REC_READ(&r->rd, annotation, &x);
	need_trace(r, RT_annotation, x.t);
	if (!keep(r, RT_annotation, &x))
		return;
	xgrow(&r->tr.an, &r->tr.capan, r->tr.nan + 1, sizeof *r->tr.an);
	a = &r->tr.an[r->tr.nan++];
	a->ts = x.ts;
	a->dur = x.dur;
	a->name = trace_intern(r, x.name);
	a->cat = trace_intern(r, x.cat);
	a->thread = thread_of(r, x.pid, x.tid);
	a->stage = REC_HAS(&x, annotation, stage) ? trace_intern(r, x.stage) : NOSTR;
	a->ext = x.external_id;
	a->has_ext = REC_HAS(&x, annotation, external_id);
}

static void
add_thread_name(struct trace_reader *r)
{
	struct rec_thread_name x;
	struct tthreadname *n;

	REC_READ(&r->rd, thread_name, &x);
	need_trace(r, RT_thread_name, x.t);
	if (!keep(r, RT_thread_name, &x))
		return;
	xgrow(&r->tr.tn, &r->tr.captn, r->tr.ntn + 1, sizeof *r->tr.tn);
	n = &r->tr.tn[r->tr.ntn++];
	n->thread = thread_of(r, x.pid, x.tid);
	n->name = trace_intern(r, x.name);
}

static void
add_corr(struct trace_reader *r)
{
	struct rec_corr x;

	REC_READ(&r->rd, corr, &x);
	need_trace(r, RT_corr, x.t);
	if (!keep(r, RT_corr, &x))
		return;
	/* a later entry for the same correlation wins (kernel-table.md §1.4.6) */
	*imap_put(&r->tr.corr, (uint64_t)x.correlation, NULL) = (uint64_t)x.external_id;
}

/* Kernels and CPU ops without an External id of their own take the corr map's. */
static void
apply_corr(struct trace *tr)
{
	size_t i;
	uint64_t *v;

	if (imap_count(&tr->corr) == 0)
		return;
	for (i = 0; i < tr->nk; i++) {
		struct tkernel *k = &tr->k[i];
		if (k->ext_src == EXT_NONE && k->has_corr &&
		    (v = imap_get(&tr->corr, (uint64_t)k->corr))) {
			k->ext = (long long)*v;
			k->ext_src = EXT_CORR;
		}
	}
	for (i = 0; i < tr->nop; i++) {
		struct tcall *c = &tr->op[i];
		if (c->ext_src == EXT_NONE && c->has_corr &&
		    (v = imap_get(&tr->corr, (uint64_t)c->corr))) {
			c->ext = (long long)*v;
			c->ext_src = EXT_CORR;
		}
	}
}

static void
close_trace(struct trace_reader *r)
{
	struct rec_stats x;

	REC_READ(&r->rd, stats, &x);
	need_trace(r, RT_stats, x.t);
	r->tr.stats = x;
	r->tr.stats_line = rec_detach(RT_stats, &r->tr.stats);
	apply_corr(&r->tr);
	r->ntraces++;
	if (r->ops.on_trace)
		r->ops.on_trace(r->ops.ctx, r, &r->tr);
	trace_free(&r->tr);
	r->open = 0;
}

void
trace_take(struct trace_reader *r, struct trace *out)
{
	*out = r->tr;
	memset(&r->tr, 0, sizeof r->tr);
}

void
trace_read(struct trace_reader *r, FILE *fp, const char *name)
{
	rec_reader_init(&r->rd, fp, name);
	while (rec_next(&r->rd)) {
		enum rec_type t = rec_type_of(&r->rd);
		unsigned bit = t < RT_COUNT ? 1u << t : 0;

		if (t == RT_trace) {
			open_trace(r);
		} else if (t == RT_stats) {
			close_trace(r);
		} else if (bit & r->ops.collect) {
			switch (t) {
			case RT_kernel:
				add_kernel(r);
				break;
			case RT_cpu_op:
			case RT_launch:
				add_call(r, t);
				break;
			case RT_frame:
				add_frame(r);
				break;
			case RT_annotation:
				add_annotation(r);
				break;
			case RT_thread_name:
				add_thread_name(r);
				break;
			case RT_corr:
				add_corr(r);
				break;
			default:
				if (r->ops.on_line)
					r->ops.on_line(r->ops.ctx, r, t);
				break;
			}
		} else if (r->ops.on_line) {
			r->ops.on_line(r->ops.ctx, r, t);
		}
		if (r->ops.pass && !(bit & r->ops.consume))
			rec_line(r->rd.line, r->rd.len);
	}
	if (r->open)
		die(EXIT_DATA, "%s: input ended inside trace %lld (no stats record); the upstream "
		    "tool probably failed", name, r->tr.t);
	rec_reader_free(&r->rd);
}
