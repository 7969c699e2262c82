/* Python contexts of ops, launches and kernels from a trace's frames (pyctx.h). */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "num.h"
#include "pyctx.h"
#include "pyscope.h"
#include "rules.h"
#include "sbuf.h"
#include "spool.h"
#include "strtab.h"
#include "xalloc.h"
#include "xsort.h"

#define FBUF 32768		/* frames gathered before they go to the spool, at most */
#define STACK_MAX 4		/* kernel-table.md §4.3: the last four positive frames */
#define CHAIN_MAX 6		/* overlap.md §6.3, §6.5 */
#define KM_TOL 1e-3		/* a frame ended this little before a query still counts */
#define WIN_TOL 1e-3		/* overlap.md §6.5 */

/* Name classes, worked out once per distinct name. */
enum {
	NC_DONE = 1,
	NC_MEANINGFUL = 2,	/* canonical scope is meaningful (§6.2) */
	NC_FALLBACK = 4,	/* ... or a fallback scope */
	NC_BUILTIN = 8		/* a "<built-in ...>" frame overlap-sweep never reads */
};

struct nameinfo {
	int prio;		/* frame_priority (kernel-table.md §4.3) */
	unsigned flags;
	uint32_t canon;		/* canonical scope, in pc->canons */
};

/* A frame as kept: 24 bytes. */
struct pframe {
	double ts, dur;
	uint32_t thread, name;
};

/*
 * A frame as swept: with its end, its place among its thread's frames in
 * the file, and its name's priority and classes.
 */
struct gframe {
	double ts, dur, end;
	uint32_t name, idx;
	int prio;
	unsigned flags;
};

struct block {
	unsigned long long off;
	uint32_t n;
};

struct pthread {
	struct block *b;
	size_t nb, capb;
	double last;		/* start of the thread's latest frame */
	size_t nframes;
	unsigned unsorted : 1;	/* some frame starts before the one before it */
};

/* A query of one thread: tag = slot << 2 | kind. */
enum { Q_OP, Q_SCOPE, Q_LAUNCH };
struct pq {
	double q;
	uint32_t thread, tag;
};

struct wq {
	double q;
	uint32_t slot;
};

struct pyctx {
	strtab *threads, *names, *canons, *seqs, *bands;
	sbuf lastkey, key;
	uint32_t lastthread;
	struct nameinfo *ni;
	size_t capni;
	unsigned char *used;
	struct pthread *th;
	size_t nth, capth;
	struct pframe *buf;
	size_t nbuf, fbuf;	/* frames gathered, and how many at most */
	size_t cursor_frames;	/* read buffers of all cursors together */
	struct spool *fsp;
	/*
	 * The queries wait in queues (xsort.h) until the trace's end, and are
	 * read into the arrays below only when the trace has frames: a trace
	 * profiled without with_stack costs no memory per op, launch or kernel
	 * (issue 30).  keep: pyctx_drop_ops's bitmap, applied as they are read.
	 */
	struct xsort *qq, *wqq;
	const unsigned char *keep;
	struct pq *q;
	size_t nq;
	struct wq *w;
	size_t nw;
	size_t nop, nln, nk;
	uint32_t *op_loc, *op_stack, *op_scopes, *ln_loc, *ln_stack, *k_win, *k_band;
	int resolved;
};

struct pyctx *
pyctx_new(void)
{
	struct pyctx *pc = xcalloc(1, sizeof *pc);

	pc->threads = strtab_new();
	pc->names = strtab_new();
	pc->canons = strtab_new();
	pc->seqs = strtab_new();
	pc->bands = strtab_new();
	pc->lastthread = PY_NONE;
	pc->qq = xsort_new(sizeof(struct pq), NULL, NULL);
	pc->wqq = xsort_new(sizeof(struct wq), NULL, NULL);
	/* the spool's memory limit bounds the other buffers of frames too */
	pc->cursor_frames = spool_limit() / sizeof(struct pframe);
	if (pc->cursor_frames == 0)
		pc->cursor_frames = 1;
	pc->fbuf = pc->cursor_frames < FBUF ? pc->cursor_frames : FBUF;
	return pc;
}

void
pyctx_free(struct pyctx *pc)
{
	size_t i;

	if (!pc)
		return;
	strtab_free(pc->threads);
	strtab_free(pc->names);
	strtab_free(pc->canons);
	strtab_free(pc->seqs);
	strtab_free(pc->bands);
	sb_free(&pc->lastkey);
	sb_free(&pc->key);
	free(pc->ni);
	free(pc->used);
	for (i = 0; i < pc->nth; i++)
		free(pc->th[i].b);
	free(pc->th);
	free(pc->buf);
	spool_free(pc->fsp);
	xsort_free(pc->qq);
	xsort_free(pc->wqq);
	free(pc->q);
	free(pc->w);
	free(pc->op_loc);
	free(pc->op_stack);
	free(pc->op_scopes);
	free(pc->ln_loc);
	free(pc->ln_stack);
	free(pc->k_win);
	free(pc->k_band);
	free(pc);
}

/* ---- names and threads ---- */

uint32_t
pyctx_thread(struct pyctx *pc, const char *pid, size_t pn, const char *tid, size_t tn)
{
	uint32_t len = (uint32_t)pn, id;

	/* consecutive events mostly share their thread */
	if (pc->lastthread != PY_NONE && pc->lastkey.len == sizeof len + pn + tn &&
	    memcmp(pc->lastkey.s, &len, sizeof len) == 0 &&
	    memcmp(pc->lastkey.s + sizeof len, pid, pn) == 0 &&
	    memcmp(pc->lastkey.s + sizeof len + pn, tid, tn) == 0)
		return pc->lastthread;
	/* (pid, tid) as one key: the pid's length first, so that no pair can run together */
	sb_reset(&pc->key);
	sb_add(&pc->key, (const char *)&len, sizeof len);
	sb_add(&pc->key, pid, pn);
	sb_add(&pc->key, tid, tn);
	id = strtab_intern(pc->threads, pc->key.s, pc->key.len);
	if (id >= pc->nth) {
		xgrow(&pc->th, &pc->capth, (size_t)id + 1, sizeof *pc->th);
		memset(&pc->th[pc->nth], 0, ((size_t)id + 1 - pc->nth) * sizeof *pc->th);
		pc->nth = (size_t)id + 1;
	}
	sb_reset(&pc->lastkey);
	sb_add(&pc->lastkey, pc->key.s, pc->key.len);
	pc->lastthread = id;
	return id;
}

uint32_t
pyctx_name(struct pyctx *pc, const char *s, size_t n)
{
	return strtab_intern(pc->names, s, n);
}

const char *
pyctx_name_str(const struct pyctx *pc, uint32_t id, size_t *n)
{
	*n = strtab_len(pc->names, id);
	return strtab_str(pc->names, id);
}

uint32_t
pyctx_name_count(const struct pyctx *pc)
{
	return strtab_count(pc->names);
}

int
pyctx_name_used(const struct pyctx *pc, uint32_t id)
{
	return pc->used && id < strtab_count(pc->names) && pc->used[id];
}

static const struct nameinfo *
info(struct pyctx *pc, uint32_t name)
{
	struct nameinfo *ni;
	const char *s;
	size_t n;
	sbuf c = SBUF_INIT;

	if (name >= pc->capni) {
		size_t old = pc->capni;
		xgrow(&pc->ni, &pc->capni, (size_t)name + 1, sizeof *pc->ni);
		memset(pc->ni + old, 0, (pc->capni - old) * sizeof *pc->ni);
	}
	ni = &pc->ni[name];
	if (ni->flags & NC_DONE)
		return ni;
	s = pyctx_name_str(pc, name, &n);
	ni->flags = NC_DONE;
	ni->prio = frame_priority(s, n);
	if (scope_builtin_frame(s, n)) {
		ni->flags |= NC_BUILTIN;
		ni->canon = PY_NONE;
		return ni;
	}
	canonicalize_python_scope_name(s, n, &c);
	if (scope_is_meaningful(c.s ? c.s : "", c.len))
		ni->flags |= NC_MEANINGFUL;
	if (scope_is_fallback(c.s ? c.s : "", c.len))
		ni->flags |= NC_FALLBACK;
	ni->canon = strtab_intern(pc->canons, c.s ? c.s : "", c.len);
	sb_free(&c);
	return ni;
}

/* ---- keeping the frames ---- */

/* Move the gathered frames to the spool, one block per thread in file order. */
static void
flush_frames(struct pyctx *pc)
{
	struct pframe *tmp;
	size_t *start, i, t;

	if (pc->nbuf == 0)
		return;
	if (!pc->fsp)
		pc->fsp = spool_new();
	start = xcalloc(pc->nth + 1, sizeof *start);
	for (i = 0; i < pc->nbuf; i++)
		start[pc->buf[i].thread + 1]++;
	for (t = 0; t < pc->nth; t++)
		start[t + 1] += start[t];
	tmp = xmalloc(pc->nbuf * sizeof *tmp);
	for (i = 0; i < pc->nbuf; i++)
		tmp[start[pc->buf[i].thread]++] = pc->buf[i];	/* start[t] ends as t's end */
	for (t = 0, i = 0; t < pc->nth; t++) {
		struct pthread *th = &pc->th[t];
		size_t n = start[t] - i;
		if (n == 0)
			continue;
		xgrow(&th->b, &th->capb, th->nb + 1, sizeof *th->b);
		th->b[th->nb].off = spool_append(pc->fsp, tmp + i, n * sizeof *tmp);
		th->b[th->nb].n = (uint32_t)n;
		th->nb++;
		i = start[t];
	}
	free(tmp);
	free(start);
	pc->nbuf = 0;
}

void
pyctx_frame(struct pyctx *pc, uint32_t thread, uint32_t name, double ts, double dur)
{
	struct pthread *th = &pc->th[thread];

	if (th->nframes && ts < th->last)
		th->unsorted = 1;
	th->last = ts;
	th->nframes++;
	if (!pc->buf)
		pc->buf = xmalloc(pc->fbuf * sizeof *pc->buf);
	pc->buf[pc->nbuf++] = (struct pframe){ ts, dur, thread, name };
	if (pc->nbuf == pc->fbuf)
		flush_frames(pc);
}

/* ---- queries ---- */

static void
add_query(struct pyctx *pc, uint32_t thread, double q, size_t slot, int kind)
{
	if (slot >= (1u << 30))
		die(EXIT_DATA, "more than 2^30 CPU ops or launches in one trace");
	struct pq x = { q, thread, (uint32_t)slot << 2 | (uint32_t)kind };

	xsort_add(pc->qq, &x);
}

void
pyctx_op(struct pyctx *pc, uint32_t thread, double ts, double dur, int scopes)
{
	double half = dur * 0.5;

	/* kernel-map's probe: 1 us into the op, or its middle when it is shorter */
	add_query(pc, thread, ts + (1.0 < half ? 1.0 : half), pc->nop, Q_OP);
	if (scopes && dur > 0)
		add_query(pc, thread, ts, pc->nop, Q_SCOPE);
	pc->nop++;
}

void
pyctx_launch(struct pyctx *pc, uint32_t thread, double ts)
{
	add_query(pc, thread, ts, pc->nln++, Q_LAUNCH);
}

void
pyctx_kernel(struct pyctx *pc, double ts, int overlap)
{
	if (overlap) {
		struct wq x = { ts, (uint32_t)pc->nk };
		xsort_add(pc->wqq, &x);
	}
	pc->nk++;
}

/* ---- reading a thread's frames back in start order ---- */

/*
 * Frames of one thread in kernel-map's active-set order: start ascending,
 * then end descending, then file order.  The file holds them by start with
 * only ties out of order, so frames of one start are gathered and sorted;
 * a thread whose starts go backwards is sorted whole, in memory.
 */
struct cursor {
	struct pyctx *pc;
	struct pthread *th;
	size_t bi;			/* next block */
	uint32_t bleft;			/* frames left in the current block */
	unsigned long long boff;
	struct pframe *rb;		/* read buffer */
	size_t rn, rpos, rcap;
	uint32_t idx;			/* file index of the next raw frame */
	struct gframe *g;		/* the current group, or the whole sorted thread */
	size_t gn, gpos, gcap;
	struct gframe la;		/* a raw frame read past the group */
	int have_la, whole;
	struct gframe cur;		/* the frame at the cursor */
	int have;
};

static int
raw_next(struct cursor *c, struct gframe *f)
{
	const struct pframe *p;
	const struct nameinfo *ni;

	if (c->rpos == c->rn) {
		size_t n;
		while (c->bleft == 0) {
			if (c->bi == c->th->nb)
				return 0;
			c->boff = c->th->b[c->bi].off;
			c->bleft = c->th->b[c->bi].n;
			c->bi++;
		}
		n = c->bleft < c->rcap ? c->bleft : c->rcap;
		spool_read(c->pc->fsp, c->boff, c->rb, n * sizeof *c->rb);
		c->boff += n * sizeof *c->rb;
		c->bleft -= (uint32_t)n;
		c->rn = n;
		c->rpos = 0;
	}
	p = &c->rb[c->rpos++];
	f->ts = p->ts;
	f->dur = p->dur;
	f->end = p->ts + p->dur;
	f->name = p->name;
	f->idx = c->idx++;
	ni = info(c->pc, p->name);
	f->prio = ni->prio;
	f->flags = ni->flags;
	return 1;
}

static int
cmp_group(const void *pa, const void *pb)
{
	const struct gframe *a = pa, *b = pb;

	if (a->end != b->end)
		return a->end > b->end ? -1 : 1;
	return (a->idx > b->idx) - (a->idx < b->idx);
}

static int
cmp_whole(const void *pa, const void *pb)
{
	const struct gframe *a = pa, *b = pb;

	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return cmp_group(pa, pb);
}

/* Advance to the next frame in order; returns 0 at the end. */
static int
cursor_next(struct cursor *c)
{
	struct gframe f;

	if (c->gpos < c->gn) {
		c->cur = c->g[c->gpos++];
		return c->have = 1;
	}
	if (c->whole)
		return c->have = 0;
	if (c->have_la) {
		f = c->la;
		c->have_la = 0;
	} else if (!raw_next(c, &f)) {
		return c->have = 0;
	}
	c->gn = c->gpos = 0;
	xgrow(&c->g, &c->gcap, 1, sizeof *c->g);
	c->g[c->gn++] = f;
	while (raw_next(c, &c->la)) {
		if (c->la.ts != f.ts) {
			c->have_la = 1;
			break;
		}
		xgrow(&c->g, &c->gcap, c->gn + 1, sizeof *c->g);
		c->g[c->gn++] = c->la;
	}
	if (c->gn > 1)
		xqsort(c->g, c->gn, sizeof *c->g, cmp_group);
	c->cur = c->g[c->gpos++];
	return c->have = 1;
}

static void
cursor_open(struct cursor *c, struct pyctx *pc, uint32_t thread, size_t nbuf)
{
	memset(c, 0, sizeof *c);
	c->pc = pc;
	c->th = &pc->th[thread];
	c->rcap = nbuf ? nbuf : 1;
	c->rb = xmalloc(c->rcap * sizeof *c->rb);
	if (c->th->unsorted) {
		struct gframe f;
		while (raw_next(c, &f)) {
			xgrow(&c->g, &c->gcap, c->gn + 1, sizeof *c->g);
			c->g[c->gn++] = f;
		}
		xqsort(c->g, c->gn, sizeof *c->g, cmp_whole);
		c->whole = 1;
	}
	cursor_next(c);
}

static void
cursor_close(struct cursor *c)
{
	free(c->rb);
	free(c->g);
}

/* ---- results ---- */

static uint32_t
seq_id(struct pyctx *pc, const uint32_t *v, size_t n)
{
	size_t i;

	if (n == 0)
		return PY_NONE;
	for (i = 0; i < n; i++)
		pc->used[v[i]] = 1;
	return strtab_intern(pc->seqs, (const char *)v, n * sizeof *v);
}

static struct pylist
seq_list(const struct pyctx *pc, uint32_t id)
{
	struct pylist l = { NULL, 0 };

	if (id != PY_NONE) {
		l.v = (const uint32_t *)(const void *)strtab_str(pc->seqs, id);
		l.n = strtab_len(pc->seqs, id) / sizeof *l.v;
	}
	return l;
}

/*
 * kernel-map's choose_mapping_frame and build_stack_display (attr.c
 * resolve_active) on a non-empty active set in active-set order.
 */
static void
km_resolve(struct pyctx *pc, const struct gframe *a, size_t n, uint32_t *loc, uint32_t *stack)
{
	size_t i, best = 0, npos = 0, k = 0;
	int bprio = a[0].prio;
	uint32_t st[STACK_MAX];

	for (i = 1; i < n; i++) {
		int prio = a[i].prio;
		const struct gframe *c = &a[best];
		if (prio > bprio || (prio == bprio &&
		    (a[i].ts > c->ts || (a[i].ts == c->ts && -a[i].dur > -c->dur)))) {
			best = i;
			bprio = prio;
		}
	}
	*loc = a[best].name;
	pc->used[*loc] = 1;
	for (i = 0; i < n; i++)
		if (a[i].prio > 0)
			npos++;
	if (npos == 0) {
		st[k++] = a[n - 1].name;
	} else {
		size_t skip = npos > STACK_MAX ? npos - STACK_MAX : 0, seen = 0;
		for (i = 0; i < n; i++) {
			if (a[i].prio <= 0)
				continue;
			if (seen++ >= skip)
				st[k++] = a[i].name;
		}
	}
	*stack = seq_id(pc, st, k);
}

static int
cmp_start_idx(const void *pa, const void *pb)
{
	const struct gframe *a = *(const struct gframe *const *)pa;
	const struct gframe *b = *(const struct gframe *const *)pb;

	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return (a->idx > b->idx) - (a->idx < b->idx);
}

/*
 * overlap-sweep's scope chain at q (srcmap.c thread_contexts): of the
 * frames active at q (started at or before it, ending at or after it) with
 * a positive duration, the last six meaningful scopes in start order, or
 * the last six fallback ones when none is meaningful.
 */
static uint32_t
scope_chain(struct pyctx *pc, const struct gframe *a, size_t n, double q, const struct gframe **tmp)
{
	size_t i, m = 0, from, k = 0;
	unsigned want;
	uint32_t ch[CHAIN_MAX];

	for (want = NC_MEANINGFUL; want && m == 0; want = want == NC_MEANINGFUL ? NC_FALLBACK : 0)
		for (i = 0; i < n; i++)
			if (a[i].dur > 0 && a[i].end >= q && (a[i].flags & want) &&
			    !(a[i].flags & NC_BUILTIN))
				tmp[m++] = &a[i];
	if (m == 0)
		return PY_NONE;
	xqsort(tmp, m, sizeof *tmp, cmp_start_idx);
	from = m > CHAIN_MAX ? m - CHAIN_MAX : 0;
	for (i = from; i < m; i++)
		ch[k++] = tmp[i]->name;
	return seq_id(pc, ch, k);
}

static int
cmp_pq(const void *pa, const void *pb)
{
	const struct pq *a = pa, *b = pb;

	if (a->thread != b->thread)
		return a->thread < b->thread ? -1 : 1;
	if (a->q != b->q)
		return a->q < b->q ? -1 : 1;
	return (a->tag > b->tag) - (a->tag < b->tag);
}

/* One thread's ops and launches against its frames. */
static void
sweep_thread(struct pyctx *pc, uint32_t thread, const struct pq *q, size_t nq)
{
	struct cursor c;
	struct gframe *act = NULL;
	const struct gframe **tmp = NULL;
	size_t nact = 0, capact = 0, captmp = 0, i, j, m;

	if (pc->th[thread].nframes == 0)
		return;
	cursor_open(&c, pc, thread, pc->cursor_frames);
	for (i = 0; i < nq; i++) {
		double t = q[i].q;
		uint32_t slot = q[i].tag >> 2, loc = PY_NONE, stack = PY_NONE;
		while (c.have && c.cur.ts <= t) {
			xgrow(&act, &capact, nact + 1, sizeof *act);
			act[nact++] = c.cur;
			cursor_next(&c);
		}
		/* queries only grow: a frame ended before this one is gone for good */
		for (j = m = 0; j < nact; j++)
			if (act[j].end >= t - KM_TOL)
				act[m++] = act[j];
		nact = m;
		if (nact == 0)
			continue;
		switch (q[i].tag & 3) {
		case Q_OP:
			km_resolve(pc, act, nact, &loc, &stack);
			pc->op_loc[slot] = loc;
			pc->op_stack[slot] = stack;
			break;
		case Q_LAUNCH:
			km_resolve(pc, act, nact, &loc, &stack);
			pc->ln_loc[slot] = loc;
			pc->ln_stack[slot] = stack;
			break;
		case Q_SCOPE:
			xgrow(&tmp, &captmp, nact, sizeof *tmp);
			pc->op_scopes[slot] = scope_chain(pc, act, nact, t, tmp);
			break;
		}
	}
	free(act);
	free(tmp);
	cursor_close(&c);
}

/* ---- the time-window chains (overlap.md §6.5) ---- */

struct wframe {
	double ts, dur, end;
	uint32_t name, canon;
};

static int
cmp_wq(const void *pa, const void *pb)
{
	const struct wq *a = pa, *b = pb;

	if (a->q != b->q)
		return a->q < b->q ? -1 : 1;
	return (a->slot > b->slot) - (a->slot < b->slot);
}

/* (ts ascending, dur descending): the order of srcmap.c's cmp_wscope before the name. */
static int
wkey(const struct wframe *a, const struct wframe *b)
{
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (a->dur != b->dur)
		return a->dur > b->dur ? -1 : 1;
	return 0;
}

static int
cmp_canon_key(const void *pa, const void *pb)
{
	const struct wframe *a = pa, *b = pb;

	if (a->canon != b->canon)
		return a->canon < b->canon ? -1 : 1;
	return wkey(a, b);
}

static const strtab *sort_canons;	/* for cmp_window: the names compared */

static int
cmp_window(const void *pa, const void *pb)
{
	const struct wframe *a = pa, *b = pb;
	int c = wkey(a, b);

	if (c || a->canon == b->canon)
		return c;
	return strcmp(strtab_str(sort_canons, a->canon), strtab_str(sort_canons, b->canon));
}

/*
 * One query's chain from the scopes open around it: sorted by (ts, -dur,
 * name) with repeated names dropped (the first kept), the last six.  That
 * is: each name's least key, the six names whose least keys are greatest.
 */
static uint32_t
window_chain(struct pyctx *pc, struct wframe *w, size_t n)
{
	size_t i, m = 0, from, k = 0;
	uint32_t ch[CHAIN_MAX];

	xqsort(w, n, sizeof *w, cmp_canon_key);
	for (i = 0; i < n; i++)
		if (i == 0 || w[i].canon != w[i - 1].canon)
			w[m++] = w[i];
	sort_canons = pc->canons;
	xqsort(w, m, sizeof *w, cmp_window);
	from = m > CHAIN_MAX ? m - CHAIN_MAX : 0;
	for (i = from; i < m; i++)
		ch[k++] = w[i].name;
	return seq_id(pc, ch, k);
}

/* The band text: every candidate as [id, ts, dur]. */
static uint32_t
window_band(struct pyctx *pc, const struct wframe *w, size_t n, sbuf *b)
{
	size_t i;
	char num[40];

	sb_reset(b);
	sb_addc(b, '[');
	for (i = 0; i < n; i++) {
		pc->used[w[i].name] = 1;
		sb_printf(b, "%s[%u,", i ? "," : "", w[i].name);
		sb_adds(b, num_json(w[i].ts, num));
		sb_addc(b, ',');
		sb_adds(b, num_json(w[i].dur, num));
		sb_addc(b, ']');
	}
	sb_addc(b, ']');
	return strtab_intern(pc->bands, b->s, b->len);
}

/* A min-heap of cursors by the start of their current frame. */
static void
heap_down(struct cursor *cs, size_t *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i, t;
		if (l < n && cs[h[l]].cur.ts < cs[h[m]].cur.ts)
			m = l;
		if (r < n && cs[h[r]].cur.ts < cs[h[m]].cur.ts)
			m = r;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/*
 * Every thread's meaningful scopes by start (a merge of the threads'
 * cursors), swept once against the sorted kernel starts: a scope joins when
 * it starts no later than q + 0.001 and leaves once it ended more than
 * 0.001 before q.
 */
#define NONE_YET (UINT32_MAX - 1)	/* not an id: strtab ids stop below it */

static void
sweep_windows(struct pyctx *pc)
{
	struct cursor *cs;
	struct wframe *open = NULL, *tmp = NULL;
	size_t nopen = 0, capopen = 0, captmp = 0, i, j, m, nc = 0, nh, per, *h;
	sbuf band = SBUF_INIT;
	uint32_t chain = NONE_YET, band_id = NONE_YET;	/* of the open set, once computed */

	xqsort(pc->w, pc->nw, sizeof *pc->w, cmp_wq);
	for (i = 0; i < pc->nth; i++)
		if (pc->th[i].nframes)
			nc++;
	if (nc == 0)
		return;
	per = pc->cursor_frames / nc;
	cs = xcalloc(nc, sizeof *cs);
	h = xmalloc(nc * sizeof *h);
	for (i = 0, nh = 0; i < pc->nth; i++)
		if (pc->th[i].nframes) {
			cursor_open(&cs[nh], pc, (uint32_t)i, per ? per : 1);
			h[nh] = nh;
			nh++;
		}
	/* every cursor starts with a frame (its thread has some) */
	for (i = nh / 2; i-- > 0;)
		heap_down(cs, h, nh, i);
	for (i = 0; i < pc->nw; i++) {
		double q = pc->w[i].q;
		int inband = 0;
		while (nh > 0 && !(q < cs[h[0]].cur.ts - WIN_TOL)) {
			struct cursor *c = &cs[h[0]];
			if (c->cur.dur > 0 && (c->cur.flags & NC_MEANINGFUL) &&
			    !(c->cur.flags & NC_BUILTIN)) {
				xgrow(&open, &capopen, nopen + 1, sizeof *open);
				open[nopen++] = (struct wframe){ c->cur.ts, c->cur.dur, c->cur.end,
				    c->cur.name, info(pc, c->cur.name)->canon };
				chain = band_id = NONE_YET;
			}
			if (!cursor_next(c))
				h[0] = h[--nh];
			heap_down(cs, h, nh, 0);
		}
		for (j = m = 0; j < nopen; j++)
			if (!(open[j].end + WIN_TOL < q))
				open[m++] = open[j];
		if (m != nopen)
			chain = band_id = NONE_YET;
		nopen = m;
		if (nopen == 0)
			continue;
		for (j = 0; j < nopen; j++)
			if (open[j].ts > q || open[j].end < q)
				inband = 1;
		/*
		 * The chain and the band text depend on the open scopes alone, and
		 * on CUDA-graph decode three kernels in four start with the same
		 * scopes open as the one before: computed once per set.
		 */
		if (inband) {
			if (band_id == NONE_YET)
				band_id = window_band(pc, open, nopen, &band);
			pc->k_band[pc->w[i].slot] = band_id;
		}
		if (chain == NONE_YET) {
			xgrow(&tmp, &captmp, nopen, sizeof *tmp);
			memcpy(tmp, open, nopen * sizeof *tmp);
			chain = window_chain(pc, tmp, nopen);
		}
		pc->k_win[pc->w[i].slot] = chain;
	}
	for (j = 0; j < nc; j++)
		cursor_close(&cs[j]);
	free(cs);
	free(h);
	free(open);
	free(tmp);
	sb_free(&band);
}

static uint32_t *
none_array(size_t n)
{
	uint32_t *a = xmalloc((n ? n : 1) * sizeof *a);

	memset(a, 0xff, (n ? n : 1) * sizeof *a);	/* PY_NONE */
	return a;
}

void
pyctx_drop_ops(struct pyctx *pc, const unsigned char *keep)
{
	pc->keep = keep;
}

/* The queued queries into their arrays, those of the ops not kept left out. */
static void
load_queries(struct pyctx *pc)
{
	const struct pq *p;
	const struct wq *w;

	pc->q = xreallocarray(NULL, xsort_count(pc->qq) + 1, sizeof *pc->q);
	while ((p = xsort_next(pc->qq)) != NULL) {
		unsigned kind = p->tag & 3, op = p->tag >> 2;
		if ((kind == Q_OP || kind == Q_SCOPE) && pc->keep &&
		    !(pc->keep[op >> 3] >> (op & 7) & 1))
			continue;
		pc->q[pc->nq++] = *p;
	}
	pc->w = xreallocarray(NULL, xsort_count(pc->wqq) + 1, sizeof *pc->w);
	while ((w = xsort_next(pc->wqq)) != NULL)
		pc->w[pc->nw++] = *w;
	xsort_free(pc->qq);
	xsort_free(pc->wqq);
	pc->qq = pc->wqq = NULL;
}

void
pyctx_resolve(struct pyctx *pc)
{
	size_t i, j;

	if (pc->resolved)
		return;
	pc->resolved = 1;
	flush_frames(pc);
	free(pc->buf);
	pc->buf = NULL;
	pc->used = xcalloc(strtab_count(pc->names) + 1, 1);
	if (!pc->fsp)
		return;		/* no frames: no contexts, and no arrays of none */
	load_queries(pc);
	pc->op_loc = none_array(pc->nop);
	pc->op_stack = none_array(pc->nop);
	pc->op_scopes = none_array(pc->nop);
	pc->ln_loc = none_array(pc->nln);
	pc->ln_stack = none_array(pc->nln);
	pc->k_win = none_array(pc->nk);
	pc->k_band = none_array(pc->nk);
	xqsort(pc->q, pc->nq, sizeof *pc->q, cmp_pq);
	for (i = 0; i < pc->nq; i = j) {
		for (j = i; j < pc->nq && pc->q[j].thread == pc->q[i].thread; j++)
			;
		sweep_thread(pc, pc->q[i].thread, pc->q + i, j - i);
	}
	if (pc->nw)
		sweep_windows(pc);
	free(pc->q);
	pc->q = NULL;
	pc->nq = 0;
	free(pc->w);
	pc->w = NULL;
	pc->nw = 0;
}

void
pyctx_op_result(const struct pyctx *pc, size_t i, uint32_t *loc, struct pylist *stack,
    struct pylist *scopes)
{
	*loc = pc->op_loc ? pc->op_loc[i] : PY_NONE;
	*stack = seq_list(pc, pc->op_stack ? pc->op_stack[i] : PY_NONE);
	*scopes = seq_list(pc, pc->op_scopes ? pc->op_scopes[i] : PY_NONE);
}

void
pyctx_launch_result(const struct pyctx *pc, size_t i, uint32_t *loc, struct pylist *stack)
{
	*loc = pc->ln_loc ? pc->ln_loc[i] : PY_NONE;
	*stack = seq_list(pc, pc->ln_stack ? pc->ln_stack[i] : PY_NONE);
}

void
pyctx_kernel_result(const struct pyctx *pc, size_t i, struct pylist *window, const char **band,
    size_t *bandlen)
{
	*window = seq_list(pc, pc->k_win ? pc->k_win[i] : PY_NONE);
	*band = NULL;
	*bandlen = 0;
	if (pc->k_band && pc->k_band[i] != PY_NONE) {
		*band = strtab_str(pc->bands, pc->k_band[i]);
		*bandlen = strtab_len(pc->bands, pc->k_band[i]);
	}
}
