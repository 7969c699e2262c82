/* The per-trace reader: one trace's records as typed arrays. */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "rules.h"
#include "spool.h"
#include "trace.h"
#include "xalloc.h"
#include "xsort.h"

static void stages_reset(struct trace_reader *r);

void
trace_free(struct trace *tr)
{
	free(tr->k);
	free(tr->op);
	free(tr->ln);
	free(tr->sy);
	free(tr->fr);
	free(tr->an);
	free(tr->tn);
	imap_free(&tr->corr);
	imap_free(&tr->pyname);
	free(tr->stats_line);
	xsort_free(tr->kq);
	xsort_free(tr->oq);
	xsort_free(tr->ox);
	xsort_free(tr->lq);
	xsort_free(tr->sq);
	xsort_free(tr->cq);
	xsort_free(tr->kx);
	xsort_free(tr->rq);
	spool_free(tr->qlazy);
	sb_free(&tr->qlazybuf);
	memset(tr, 0, sizeof *tr);
}

void
trace_reader_init(struct trace_reader *r, strtab *str, const struct trace_ops *ops)
{
	size_t i;

	memset(r, 0, sizeof *r);
	r->ops = *ops;
	r->str = str;
	for (i = 0; i < sizeof r->last / sizeof r->last[0]; i++)
		r->last[i] = NOSTR;
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
	free(r->pyok);
	r->pyok = NULL;
	stages_reset(r);
	xsort_free(r->kneed);
	xsort_free(r->oneed);
	r->kneed = r->oneed = NULL;
	imap_free(&r->seen_t);
	imap_free(&r->kref);
	r->cappyok = 0;
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
/*
 * Members that repeat from record to record (a kernel's category, stream and
 * stage, a launch's name): the id of the last one, when s is the same text,
 * else trace_intern's.  A short comparison instead of hashing and probing
 * (issue 30).
 */
enum { LAST_CAT, LAST_STREAM, LAST_STAGE, LAST_LAUNCH };

static uint32_t
intern_last(struct trace_reader *r, int which, struct rstr s)
{
	uint32_t id = r->last[which];

	if (id != NOSTR && strtab_len(r->str, id) == s.n) {
		const char *t = strtab_str(r->str, id);
		size_t i;
		for (i = 0; i < s.n && t[i] == s.s[i]; i++)
			;
		if (i == s.n)
			return id;
	}
	return r->last[which] = trace_intern(r, s);
}

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

/* The kernel_stages bookkeeping of a trace that begins or ends. */
static void
stages_reset(struct trace_reader *r)
{
	free(r->kord);
	r->kord = NULL;
	r->capkord = 0;
	r->nkrec = r->kst_next = r->kst_cursor = 0;
	r->kst_seen = r->late = 0;
	free(r->lazyoff);
	r->lazyoff = NULL;
	r->caplazy = r->nlazy = 0;
	sb_free(&r->lazy);
	sb_free(&r->klazypid);
	sb_free(&r->klazytid);
	r->klazy_valid = 0;
}

/*
 * Is pid/tid the late kernel's before it?  Then its thread is made at
 * once (kernels of one stream come in runs); else it becomes the one to
 * compare the next with.  Returns 1 for a repeat.
 */
static int
lazy_repeat(struct trace_reader *r, struct rstr pid, struct rstr tid)
{
	if (r->klazy_valid && pid.n == r->klazypid.len && tid.n == r->klazytid.len &&
	    memcmp(pid.s, sb_str(&r->klazypid), pid.n) == 0 &&
	    memcmp(tid.s, sb_str(&r->klazytid), tid.n) == 0)
		return 1;
	sb_reset(&r->klazypid);
	sb_add(&r->klazypid, pid.s ? pid.s : "", pid.n);
	sb_reset(&r->klazytid);
	sb_add(&r->klazytid, tid.s ? tid.s : "", tid.n);
	r->klazy_valid = 1;
	return 0;
}

/*
 * A late kernel's pid and tid kept as text (lazy): each length, then the
 * bytes.  Returns the kernel's thread field: LAZY_THREAD and the index of
 * its entry in lazyoff.  A kernel of the same pid and tid as the late
 * kernel before it gets its thread at once (one lookup for a trace of one
 * process, where every kernel is kept); a new one waits, so that a GPU
 * process per kernel interns none of the unselected (finish_stages).
 */
#define LAZY_THREAD 0x80000000u

static uint32_t thread_of(struct trace_reader *r, struct rstr pid, struct rstr tid);

static uint32_t
lazy_put(struct trace_reader *r, struct rstr pid, struct rstr tid)
{
	size_t n = r->nlazy;

	if (lazy_repeat(r, pid, tid))
		return thread_of(r, pid, tid);
	if (n >= LAZY_THREAD)
		return thread_of(r, pid, tid);	/* two billion new ones: no more waiting */
	xgrow(&r->lazyoff, &r->caplazy, n + 1, sizeof *r->lazyoff);
	r->lazyoff[n] = r->lazy.len;
	r->nlazy++;
	sb_add(&r->lazy, (const char *)&pid.n, sizeof pid.n);
	sb_add(&r->lazy, pid.s ? pid.s : "", pid.n);
	sb_add(&r->lazy, (const char *)&tid.n, sizeof tid.n);
	sb_add(&r->lazy, tid.s ? tid.s : "", tid.n);
	return LAZY_THREAD | (uint32_t)n;
}

/*
 * lazy_put in queue mode: the texts go to the trace's qlazy spool in
 * kernel order, read back by trace_kernel_next, which makes the threads
 * of the selected kernels only.  Returns LAZY_THREAD, or the thread when
 * the kernel's process is the late kernel's before it.
 */
static uint32_t
lazy_queue(struct trace_reader *r, struct rstr pid, struct rstr tid)
{
	struct trace *tr = &r->tr;

	if (lazy_repeat(r, pid, tid))
		return thread_of(r, pid, tid);
	if (!tr->qlazy)
		tr->qlazy = spool_new();
	tr->qr = r;
	spool_append(tr->qlazy, &pid.n, sizeof pid.n);
	spool_append(tr->qlazy, pid.s ? pid.s : "", pid.n);
	spool_append(tr->qlazy, &tid.n, sizeof tid.n);
	spool_append(tr->qlazy, tid.s ? tid.s : "", tid.n);
	tr->qlazysize += 2 * sizeof pid.n + pid.n + tid.n;
	return LAZY_THREAD;
}

/* n bytes of qlazy at off (off never behind the last call's but after a rewind) */
static const char *
lazy_bytes(struct trace *tr, unsigned long long off, size_t n)
{
	sbuf *b = &tr->qlazybuf;

	if (off < tr->qlazyat || off + n > tr->qlazyat + b->len) {
		unsigned long long left = tr->qlazysize - off;
		size_t k = left < 65536 ? (size_t)left : 65536;
		if (k < n)
			k = n;
		sb_reset(b);
		sb_grow(b, k);
		spool_read(tr->qlazy, off, b->s, k);
		b->len = k;
		tr->qlazyat = off;
	}
	return b->s + (off - tr->qlazyat);
}

/*
 * The next pid and tid texts of a cursor's trace (a kernel lazy_queue
 * made LAZY_THREAD), made a thread when make is set.
 */
static uint32_t
lazy_next(struct tkcursor *c, int make)
{
	struct trace *tr = c->tr;
	struct rstr pid, tid;
	size_t np, nt;
	const char *p;

	memcpy(&np, lazy_bytes(tr, c->loff, sizeof np), sizeof np);
	memcpy(&nt, lazy_bytes(tr, c->loff + sizeof np + np, sizeof nt), sizeof nt);
	/* the whole entry at once, so that both texts stay in the block */
	p = lazy_bytes(tr, c->loff, 2 * sizeof np + np + nt);
	c->loff += 2 * sizeof np + np + nt;
	if (!make)
		return LAZY_THREAD;
	pid.s = p + sizeof np;
	pid.n = np;
	tid.s = p + 2 * sizeof np + np;
	tid.n = nt;
	return thread_of(tr->qr, pid, tid);
}

/* The thread of a kernel whose thread field lazy_put made. */
static uint32_t
lazy_thread(struct trace_reader *r, uint32_t field)
{
	struct rstr pid, tid;
	const char *p = r->lazy.s + r->lazyoff[field & ~LAZY_THREAD];

	memcpy(&pid.n, p, sizeof pid.n);
	pid.s = p + sizeof pid.n;
	p = pid.s + pid.n;
	memcpy(&tid.n, p, sizeof tid.n);
	tid.s = p + sizeof tid.n;
	return thread_of(r, pid, tid);
}

static void
open_trace(struct trace_reader *r)
{
	struct rec_trace x;

	REC_READ(&r->rd, trace, &x);
	if (r->open)
		rec_die(&r->rd, "trace record inside trace %lld (its stats record is missing; "
		    "input truncated?)", r->tr.t);
	imap_free(&r->kref);	/* name_refs hold until the next trace record (rec.h) */
	if (!r->ops.repeat_t) {
		int isnew;
		imap_put(&r->seen_t, (uint64_t)x.t, &isnew);
		if (!isnew)
			rec_die(&r->rd, "trace %lld again: a record stream holds each trace once "
			    "(two streams concatenated? run them through the tools one at a time)", x.t);
	}
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
	r->tr.has_rank = REC_HAS(&x, trace, rank);
	/* trace-extract writes none below 0; -1 would be a rank of its own to rank-skew */
	if (r->tr.has_rank && x.rank < 0)
		rec_die(&r->rd, "trace record: member 'rank' is %lld: a rank is a whole number "
		    "from 0", x.rank);
	r->tr.rank = x.rank;
	r->tr.world_size = x.world_size;
	r->tr.has_world = REC_HAS(&x, trace, world_size);
	r->tr.time_base = x.time_base_us;
	r->tr.capture_flags = REC_HAS(&x, trace, capture_flags) ? trace_intern(r, x.capture_flags) :
	    NOSTR;
	r->tr.py_context = x.py_context;
	r->open = 1;
	stages_reset(r);
}

/* ---- Python contexts ---- */

static void
add_frame_name(struct trace_reader *r)
{
	struct rec_frame_name x;

	REC_READ(&r->rd, frame_name, &x);
	need_trace(r, RT_frame_name, x.t);
	if (x.id < 0 || x.id >= (long long)NOSTR)
		rec_die(&r->rd, "frame_name record: member 'id' is out of range");
	*imap_put(&r->tr.pyname, (uint64_t)x.id, NULL) = trace_intern(r, x.name);
}

/* Length of the unsigned integer at p[0..n) below NOSTR (no sign, no fraction), or 0. */
static size_t
id_len(const char *p, size_t n, uint32_t *v)
{
	size_t k = 0;
	unsigned long long x = 0;

	while (k < n && p[k] >= '0' && p[k] <= '9' && k < 11)
		x = x * 10 + (unsigned)(p[k++] - '0');
	if (k == 0 || (k > 1 && p[0] == '0') || x >= NOSTR)
		return 0;
	*v = (uint32_t)x;
	return k;
}

/* Is s[0..n) a JSON array of ids exactly as trace-extract writes it ("[1,2]", no spaces)? */
static int
plain_id_list(const char *s, size_t n)
{
	size_t i = 1, k;
	uint32_t v;

	if (n < 2 || s[0] != '[' || s[n - 1] != ']')
		return 0;
	if (n == 2)
		return 1;
	for (;;) {
		if ((k = id_len(s + i, n - 1 - i, &v)) == 0)
			return 0;
		i += k;
		if (i == n - 1)
			return 1;
		if (s[i++] != ',')
			return 0;
	}
}

/*
 * Intern and check a py_* JSON member (kind 1: an id list, 2: a band).  A
 * list in any other layout is rewritten as trace-extract writes it, so the
 * tools decode only that one.
 */
static uint32_t
py_member(struct trace_reader *r, struct rstr v, int kind, const char *type, const char *m)
{
	uint32_t id;
	json_doc d = { 0 };
	sbuf t = SBUF_INIT;
	int i, k, ok;

	if (kind == 1 && plain_id_list(v.s, v.n)) {
		id = trace_intern(r, v);
		goto mark;
	}
	id = trace_intern(r, v);
	if (id < r->cappyok && r->pyok[id] == kind)
		return id;
	rec_parse_json(&r->rd, &d, v);
	ok = d.tok[0].type == JSMN_ARRAY;
	sb_addc(&t, '[');
	for (k = 0, i = 1; ok && k < d.tok[0].size; k++) {
		long long x = 0;
		double f;
		if (kind == 1) {
			ok = json_kind(&d, i) == JK_INT && json_coerce_int(&d, i, &x) && x >= 0 &&
			    x < (long long)NOSTR;
			sb_printf(&t, "%s%lld", k ? "," : "", x);
		} else {
			/* [id, ts, dur] */
			ok = d.tok[i].type == JSMN_ARRAY && d.tok[i].size == 3 &&
			    json_kind(&d, i + 1) == JK_INT && json_coerce_int(&d, i + 1, &x) &&
			    x >= 0 && x < (long long)NOSTR &&
			    (json_kind(&d, i + 2) == JK_INT || json_kind(&d, i + 2) == JK_FLOAT) &&
			    json_todouble(&d, i + 2, &f) &&
			    (json_kind(&d, i + 3) == JK_INT || json_kind(&d, i + 3) == JK_FLOAT) &&
			    json_todouble(&d, i + 3, &f);
		}
		i = json_skip(&d, i);
	}
	json_doc_free(&d);
	if (!ok) {
		sb_free(&t);
		rec_die(&r->rd, "%s record: member '%s' is not %s", type, m,
		    kind == 1 ? "an array of frame_name ids" : "an array of [id, ts, dur] arrays");
	}
	sb_addc(&t, ']');
	if (kind == 1)
		id = strtab_intern(r->str, t.s, t.len);
	sb_free(&t);
mark:
	if (id >= r->cappyok) {
		size_t old = r->cappyok;
		xgrow(&r->pyok, &r->cappyok, (size_t)id + 1, 1);
		memset(r->pyok + old, 0, r->cappyok - old);
	}
	r->pyok[id] = (unsigned char)kind;
	return id;
}

static uint32_t
py_loc(struct trace_reader *r, int has, long long v, const char *type)
{
	if (!has)
		return NOSTR;
	if (v < 0 || v >= (long long)NOSTR)
		rec_die(&r->rd, "%s record: member 'py_loc' is not a frame_name id", type);
	return (uint32_t)v;
}

/* A name the trace's frame_name records must define; dies naming the trace otherwise. */
static uint32_t
py_lookup(const struct trace_reader *r, const struct trace *tr, uint32_t id)
{
	const uint64_t *v = imap_get(&tr->pyname, id);

	if (!v)
		die(EXIT_DATA, "%s: trace %lld: a py_* member refers to frame_name %u, which the "
		    "trace does not define", r->rd.name, tr->t, id);
	return (uint32_t)*v;
}

uint32_t
trace_py_name(const struct trace_reader *r, const struct trace *tr, uint32_t id)
{
	return id == NOSTR ? NOSTR : py_lookup(r, tr, id);
}

size_t
trace_py_names(const struct trace_reader *r, const struct trace *tr, uint32_t list,
    uint32_t *out, size_t max)
{
	const char *s;
	size_t n, i = 1, k, m = 0;
	uint32_t v = 0;

	if (list == NOSTR)
		return 0;
	s = strtab_str(r->str, list);
	n = strtab_len(r->str, list);
	while (i < n - 1 && m < max) {
		k = id_len(s + i, n - 1 - i, &v);
		out[m++] = py_lookup(r, tr, v);
		i += k + 1;
	}
	return m;
}

struct tpyband *
trace_py_band(const struct trace_reader *r, const struct trace *tr, uint32_t band, size_t *n)
{
	json_doc d = { 0 };
	struct tpyband *b;
	int i, k;
	long long id = 0;

	*n = 0;
	if (band == NOSTR)
		return NULL;
	/* checked when read, so it parses */
	json_parse(&d, strtab_str(r->str, band), strtab_len(r->str, band));
	b = xmalloc(((size_t)d.tok[0].size + 1) * sizeof *b);
	for (k = 0, i = 1; k < d.tok[0].size; k++, i = json_skip(&d, i)) {
		json_coerce_int(&d, i + 1, &id);
		b[k].name = py_lookup(r, tr, (uint32_t)id);
		json_todouble(&d, i + 2, &b[k].ts);
		json_todouble(&d, i + 3, &b[k].dur);
	}
	*n = (size_t)d.tok[0].size;
	json_doc_free(&d);
	return b;
}

/* ---- queue mode (issue 30) ---- */

/* struct tkext by its second member (a correlation while it waits for the map) */
static int
by_second(const void *pa, const void *pb, void *ctx)
{
	const struct tkext *a = pa, *b = pb;

	(void)ctx;
	return (a->ext > b->ext) - (a->ext < b->ext);
}

static void
enqueue(struct xsort **q, size_t size, const void *rec)
{
	if (!*q)
		*q = xsort_new(size, NULL, NULL);
	xsort_add(*q, rec);
}

/* The corr map read forward, one entry per correlation: its last record's id. */
struct corrcur {
	struct xsort *q;
	const struct tcorr *next;	/* the next record */
	struct tcorr e;			/* the entry at hand, when have */
	int have;
};

static int
corrcur_step(struct corrcur *m)
{
	if (!m->next)
		return m->have = 0;
	m->e = *m->next;
	while ((m->next = xsort_next(m->q)) != NULL && m->next->corr == m->e.corr)
		m->e = *m->next;
	return m->have = 1;
}

/* The map's id of corr, asked in ascending order; 0 when it has none. */
static int
corrcur_get(struct corrcur *m, long long corr, long long *ext)
{
	if (!m->have && !corrcur_step(m))
		return 0;
	while (m->e.corr < corr)
		if (!corrcur_step(m))
			return 0;
	if (m->e.corr != corr)
		return 0;
	*ext = m->e.ext;
	return 1;
}

/*
 * The map's ids of the records of need (struct tkext: index, correlation),
 * by index: apply_corr's join, made by sorting both sides.  Frees need.
 */
static struct xsort *
corr_join(struct xsort *cq, struct xsort *need)
{
	struct corrcur m = { cq, NULL, { 0, 0 }, 0 };
	struct xsort *out = xsort_new(sizeof(struct tkext), xsort_by_ll, NULL);
	const struct tkext *n;
	long long ext;

	xsort_rewind(cq);
	m.next = xsort_next(cq);
	while ((n = xsort_next(need)) != NULL)
		if (corrcur_get(&m, n->ext, &ext)) {
			struct tkext x = { n->k, ext };
			xsort_add(out, &x);
		}
	xsort_free(need);
	return out;
}

/*
 * The trace's end in queue mode: the kernels without an External id of
 * their own that the corr map has one for, and the CPU ops when the tool
 * reads corr records (apply_corr's ops_too).
 */
static void
queue_corr(struct trace_reader *r)
{
	struct trace *tr = &r->tr;

	if (r->kneed && tr->cq)
		tr->kx = corr_join(tr->cq, r->kneed);
	else
		xsort_free(r->kneed);
	if (r->oneed && tr->cq && (r->ops.collect & TR_MASK(corr)))
		tr->ox = corr_join(tr->cq, r->oneed);
	else
		xsort_free(r->oneed);
	r->kneed = r->oneed = NULL;
	tr->q_sel_only = r->ops.sel_only;
}

int
trace_kernel_any(struct trace *tr)
{
	struct tkcursor c;

	trace_kernel_rewind(tr, &c);
	return trace_kernel_next(&c) != NULL;
}

void
trace_kernel_rewind(struct trace *tr, struct tkcursor *c)
{
	const struct tkext *x;

	memset(c, 0, sizeof *c);
	c->tr = tr;
	if (tr->kq)
		xsort_rewind(tr->kq);
	if (tr->kx) {
		xsort_rewind(tr->kx);
		if ((x = xsort_next(tr->kx)) != NULL) {
			c->x = *x;
			c->have_x = 1;
		}
	}
	if (tr->rq)
		xsort_rewind(tr->rq);
}

const struct tkernel *
trace_kernel_next(struct tkcursor *c)
{
	const struct tkernel *k;
	const struct tkext *x;

again:
	k = c->tr->kq ? xsort_next(c->tr->kq) : NULL;
	if (!k)
		return NULL;
	c->k = *k;
	if (c->have_x && c->x.k == c->i) {
		c->k.ext = c->x.ext;
		c->k.ext_src = EXT_CORR;
		x = xsort_next(c->tr->kx);
		if (x)
			c->x = *x;
		else
			c->have_x = 0;
	}
	if (c->tr->rq) {
		/* the runs cover the kernel records in order (finish_stages checked) */
		const struct trun *u;
		while (!c->have_run || c->k.rord >= c->run.from + c->run.n) {
			if ((u = xsort_next(c->tr->rq)) == NULL)
				break;
			c->run = *u;
			c->have_run = 1;
		}
		if (c->have_run && c->k.rord >= c->run.from && c->k.rord < c->run.from + c->run.n) {
			c->k.stage = c->run.stage;
			c->k.sel = c->run.sel != 0;
		}
	}
	c->i++;
	if (c->k.thread == LAZY_THREAD && c->tr->qlazy)
		c->k.thread = lazy_next(c, !c->tr->q_sel_only || c->k.sel);
	if (c->tr->q_sel_only && !c->k.sel)
		goto again;
	return &c->k;
}

void
trace_op_rewind(struct trace *tr, struct tocursor *c)
{
	const struct tkext *x;

	memset(c, 0, sizeof *c);
	c->tr = tr;
	if (tr->oq)
		xsort_rewind(tr->oq);
	if (tr->ox) {
		xsort_rewind(tr->ox);
		if ((x = xsort_next(tr->ox)) != NULL) {
			c->x = *x;
			c->have_x = 1;
		}
	}
}

const struct tcall *
trace_op_next(struct tocursor *c)
{
	const struct tcall *o = c->tr->oq ? xsort_next(c->tr->oq) : NULL;
	const struct tkext *x;

	if (!o)
		return NULL;
	c->c = *o;
	if (c->have_x && c->x.k == c->i) {
		c->c.ext = c->x.ext;
		c->c.ext_src = EXT_CORR;
		x = xsort_next(c->tr->ox);
		if (x)
			c->x = *x;
		else
			c->have_x = 0;
	}
	c->i++;
	return &c->c;
}

static void
add_kernel(struct trace_reader *r)
{
	struct rec_kernel x;
	struct tkernel *k, one;
	uint32_t ord;
	int staged;

	REC_READ(&r->rd, kernel, &x);
	need_trace(r, RT_kernel, x.t);
	if (r->nkrec >= UINT32_MAX)
		rec_die(&r->rd, "more than %u kernel records in trace %lld", UINT32_MAX, x.t);
	ord = (uint32_t)r->nkrec++;
	staged = REC_HAS(&x, kernel, stage);
	if (!staged)
		r->late = 1;	/* whether or not the tool keeps it: its corr records must pass */
	if (!keep(r, RT_kernel, &x) || (r->ops.sel_only && staged && !x.sel)) {
		if (!r->kord) {
			/* the kernels collected so far are ordinals 0 .. nk - 1 */
			size_t i;
			xgrow(&r->kord, &r->capkord, r->tr.nk + 1, sizeof *r->kord);
			for (i = 0; i < r->tr.nk; i++)
				r->kord[i] = (uint32_t)i;
		}
		return;
	}
	if (r->kord) {
		xgrow(&r->kord, &r->capkord, r->tr.nk + 1, sizeof *r->kord);
		r->kord[r->tr.nk] = ord;
	}
	if (r->ops.queue) {
		k = &one;
	} else {
		xgrow(&r->tr.k, &r->tr.capk, r->tr.nk + 1, sizeof *r->tr.k);
		k = &r->tr.k[r->tr.nk];
	}
	r->tr.nk++;
	memset(k, 0, sizeof *k);
	k->rord = ord;
	k->ts = x.ts;
	k->dur = x.dur;
	if (REC_HAS(&x, kernel, name_ref)) {
		/* a name given once (kernel_name): interned once, not per record */
		int isnew;
		uint64_t *v = imap_put(&r->kref, (uint64_t)x.t << 32 | (uint64_t)x.name_ref, &isnew);
		if (isnew)
			*v = (uint64_t)trace_intern(r, x.name) + 1;
		k->name = (uint32_t)(*v - 1);
	} else
		k->name = trace_intern(r, x.name);
	k->cat = intern_last(r, LAST_CAT, x.cat);
	if (r->ops.sel_only && !staged && r->ops.queue)
		k->thread = lazy_queue(r, x.pid, x.tid);
	else if (r->ops.sel_only && !staged)
		k->thread = lazy_put(r, x.pid, x.tid);	/* made once its stage says sel */
	else
		k->thread = thread_of(r, x.pid, x.tid);
	k->stream = REC_HAS(&x, kernel, stream) ? intern_last(r, LAST_STREAM, x.stream) : NOSTR;
	k->stage = REC_HAS(&x, kernel, stage) ? intern_last(r, LAST_STAGE, x.stage) : NOSTR;
	k->ext = x.external_id;
	k->ext_src = REC_HAS(&x, kernel, external_id) ? EXT_OWN : EXT_NONE;
	k->corr = x.correlation;
	k->has_corr = REC_HAS(&x, kernel, correlation);
	k->overlap = x.overlap;
	k->sel = x.sel;
	k->py_window = REC_HAS(&x, kernel, py_window) ?
	    py_member(r, x.py_window, 1, "kernel", "py_window") : NOSTR;
	k->py_window_band = REC_HAS(&x, kernel, py_window_band) ?
	    py_member(r, x.py_window_band, 2, "kernel", "py_window_band") : NOSTR;
	k->shape = REC_HAS(&x, kernel, shape) && x.shape >= 0 && x.shape < (long long)NOSTR ?
	    (uint32_t)x.shape : NOSTR;
	k->shape_frac = x.shape_frac;
	k->bytes = REC_HAS(&x, kernel, bytes) ? x.bytes : -1;
	if (r->ops.queue) {
		if (k->ext_src == EXT_NONE && k->has_corr) {
			struct tkext need = { r->tr.nk - 1, k->corr };
			if (!r->kneed)
				r->kneed = xsort_new(sizeof need, by_second, NULL);
			xsort_add(r->kneed, &need);
		}
		enqueue(&r->tr.kq, sizeof *k, k);
	}
}

/*
 * Ordinals [from, from + n) of the trace's kernel records get stage and
 * sel: the collected kernels among them, found from the cursor on (runs
 * come in stream order).
 */
static void
set_stages(struct trace_reader *r, size_t from, size_t n, uint32_t stage, int sel)
{
	size_t i = r->kst_cursor, end = from + n;

	if (!r->kord) {
		/* nothing dropped: ordinal i is kernel i */
		for (i = from; i < end; i++) {
			r->tr.k[i].stage = stage;
			r->tr.k[i].sel = sel != 0;
		}
		r->kst_cursor = end;
		return;
	}
	for (; i < r->tr.nk && r->kord[i] < end; i++) {
		r->tr.k[i].stage = stage;
		r->tr.k[i].sel = sel != 0;
	}
	r->kst_cursor = i;
}

size_t
trace_stage_runs(rec_reader *rd, const struct rec_kernel_stages *x, size_t covered, size_t nkrec,
    void (*fn)(void *ctx, size_t from, size_t n, const char *stage, int sel), void *ctx)
{
	json_doc d = { 0 };
	sbuf name = SBUF_INIT;
	int i, k, n;

	if (x->first < 0 || (unsigned long long)x->first != covered)
		rec_die(rd, "kernel_stages record: its runs begin at kernel record %lld, where "
		    "the trace's kernel_stages so far end at %zu (records lost or out of order)",
		    x->first, covered);
	rec_parse_json(rd, &d, x->runs);
	if (json_kind(&d, 0) != JK_ARR)
		rec_die(rd, "kernel_stages record: member 'runs' is not an array");
	n = d.tok[0].size;
	for (k = 0, i = 1; k < n; k++, i = json_skip(&d, i)) {
		long long cnt = 0, sel = 0;
		enum json_kind sk = JK_MISSING;
		if (json_kind(&d, i) != JK_ARR || d.tok[i].size != 3 ||
		    json_kind(&d, i + 1) != JK_INT || !json_coerce_int(&d, i + 1, &cnt) || cnt < 1 ||
		    ((sk = json_kind(&d, i + 2)) != JK_STR && sk != JK_NULL) ||
		    json_kind(&d, i + 3) != JK_INT || !json_coerce_int(&d, i + 3, &sel) ||
		    (sel != 0 && sel != 1))
			rec_die(rd, "kernel_stages record: run %d is not [count >= 1, stage or null, "
			    "0 or 1]", k + 1);
		if ((unsigned long long)cnt > nkrec - covered)
			rec_die(rd, "kernel_stages record: run %d reaches kernel record %llu, but the "
			    "trace has %zu so far", k + 1, (unsigned long long)covered +
			    (unsigned long long)cnt, nkrec);
		if (sk == JK_STR)
			json_str(&d, i + 2, &name, NULL);
		fn(ctx, covered, (size_t)cnt, sk == JK_STR ? sb_str(&name) : NULL, (int)sel);
		covered += (size_t)cnt;
	}
	sb_free(&name);
	json_doc_free(&d);
	return covered;
}

static void
stage_run(void *ctx, size_t from, size_t n, const char *stage, int sel)
{
	struct trace_reader *r = ctx;

	if (r->ops.queue) {
		struct trun u = { from, n, stage ? strtab_intern(r->str, stage, strlen(stage)) : NOSTR,
		    sel };
		enqueue(&r->tr.rq, sizeof u, &u);
		return;
	}
	set_stages(r, from, n, stage ? strtab_intern(r->str, stage, strlen(stage)) : NOSTR, sel);
}

/* A kernel_stages record: the stages of the next runs of kernel records. */
static void
add_stages(struct trace_reader *r)
{
	struct rec_kernel_stages x;

	REC_READ(&r->rd, kernel_stages, &x);
	need_trace(r, RT_kernel_stages, x.t);
	r->kst_next = trace_stage_runs(&r->rd, &x, r->kst_next, r->nkrec, stage_run, r);
	r->kst_seen = 1;
}

/*
 * At the trace's end: the kernel_stages must have covered every kernel
 * record; then a sel_only reader drops the kernels that came unstaged and
 * are not of the analyzed process.
 */
static void
finish_stages(struct trace_reader *r)
{
	size_t i, m = 0;

	if (r->kst_seen && r->kst_next != r->nkrec)
		rec_die(&r->rd, "the kernel_stages records of trace %lld cover %zu of its %zu "
		    "kernel records (the stream lost records?)", r->tr.t, r->kst_next, r->nkrec);
	if (r->ops.sel_only && r->late && !r->ops.queue) {
		for (i = 0; i < r->tr.nk; i++)
			if (r->tr.k[i].sel) {
				r->tr.k[m] = r->tr.k[i];
				if (r->nlazy && (r->tr.k[m].thread & LAZY_THREAD))
					r->tr.k[m].thread = lazy_thread(r, r->tr.k[m].thread);
				m++;
			}
		r->tr.nk = m;
	}
}

static void
add_call(struct trace_reader *r, enum rec_type t)
{
	struct tcall *c, one;
	struct rstr name, pid, tid;
	struct rec_cpu_op o;
	struct rec_launch l;

	if (t == RT_cpu_op) {
		REC_READ(&r->rd, cpu_op, &o);
		need_trace(r, t, o.t);
		if (!keep(r, t, &o))
			return;
		if (r->ops.queue) {
			c = &one;
			memset(c, 0, sizeof *c);
		} else {
			xgrow(&r->tr.op, &r->tr.capop, r->tr.nop + 1, sizeof *r->tr.op);
			c = &r->tr.op[r->tr.nop];
		}
		r->tr.nop++;
		c->ts = o.ts;
		c->dur = o.dur;
		c->ext = o.external_id;
		c->ext_src = REC_HAS(&o, cpu_op, external_id) ? EXT_OWN : EXT_NONE;
		c->corr = o.correlation;
		c->has_corr = REC_HAS(&o, cpu_op, correlation);
		c->py_loc = py_loc(r, REC_HAS(&o, cpu_op, py_loc), o.py_loc, "cpu_op");
		c->kind = LAUNCH_KERNEL;
		c->py_stack = REC_HAS(&o, cpu_op, py_stack) ?
		    py_member(r, o.py_stack, 1, "cpu_op", "py_stack") : NOSTR;
		c->py_scopes = REC_HAS(&o, cpu_op, py_scopes) ?
		    py_member(r, o.py_scopes, 1, "cpu_op", "py_scopes") : NOSTR;
		name = o.name;
		pid = o.pid;
		tid = o.tid;
	} else {
		REC_READ(&r->rd, launch, &l);
		need_trace(r, t, l.t);
		if (!keep(r, t, &l))
			return;
		if (r->ops.queue) {
			c = &one;
			memset(c, 0, sizeof *c);
		} else {
			xgrow(&r->tr.ln, &r->tr.capln, r->tr.nln + 1, sizeof *r->tr.ln);
			c = &r->tr.ln[r->tr.nln];
		}
		r->tr.nln++;
		c->ts = l.ts;
		c->dur = l.dur;
		c->ext = l.external_id;
		c->ext_src = REC_HAS(&l, launch, external_id) ? EXT_OWN : EXT_NONE;
		c->corr = l.correlation;
		c->has_corr = 1;
		c->py_loc = py_loc(r, REC_HAS(&l, launch, py_loc), l.py_loc, "launch");
		c->py_stack = REC_HAS(&l, launch, py_stack) ?
		    py_member(r, l.py_stack, 1, "launch", "py_stack") : NOSTR;
		c->py_scopes = NOSTR;
		c->kind = rstr_eq(l.kind, "kernel") ? LAUNCH_KERNEL : rstr_eq(l.kind, "memcpy") ?
		    LAUNCH_MEMCPY : rstr_eq(l.kind, "memset") ? LAUNCH_MEMSET : LAUNCH_OTHER;
		name = l.name;
		pid = l.pid;
		tid = l.tid;
	}
	c->name = t == RT_launch ? intern_last(r, LAST_LAUNCH, name) : trace_intern(r, name);
	c->thread = thread_of(r, pid, tid);
	if (c != &one)
		return;
	if (t == RT_launch) {
		enqueue(&r->tr.lq, sizeof *c, c);
		return;
	}
	if (c->ext_src == EXT_NONE && c->has_corr) {
		struct tkext need = { r->tr.nop - 1, c->corr };
		if (!r->oneed)
			r->oneed = xsort_new(sizeof need, by_second, NULL);
		xsort_add(r->oneed, &need);
	}
	enqueue(&r->tr.oq, sizeof *c, c);
}

/* A "sync" record: a blocking synchronize call (issue 25 follow-up). */
static void
add_sync(struct trace_reader *r)
{
	struct rec_sync x;
	struct tcall *c, one;

	REC_READ(&r->rd, sync, &x);
	need_trace(r, RT_sync, x.t);
	if (!keep(r, RT_sync, &x))
		return;
	if (r->ops.queue) {
		c = &one;
	} else {
		xgrow(&r->tr.sy, &r->tr.capsy, r->tr.nsy + 1, sizeof *r->tr.sy);
		c = &r->tr.sy[r->tr.nsy];
	}
	r->tr.nsy++;
	memset(c, 0, sizeof *c);
	c->ts = x.ts;
	c->dur = x.dur;
	c->corr = x.correlation;
	c->has_corr = REC_HAS(&x, sync, correlation);
	c->ext_src = EXT_NONE;
	c->kind = LAUNCH_OTHER;
	c->py_loc = c->py_stack = c->py_scopes = NOSTR;
	c->name = trace_intern(r, x.name);
	c->thread = thread_of(r, x.pid, x.tid);
	if (c == &one)
		enqueue(&r->tr.sq, sizeof *c, c);
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
	if (r->ops.queue) {
		struct tcorr e = { x.correlation, x.external_id };
		if (!r->tr.cq)
			r->tr.cq = xsort_new(sizeof e, xsort_by_ll, NULL);
		xsort_add(r->tr.cq, &e);	/* stable: a later entry comes after */
		return;
	}
	*imap_put(&r->tr.corr, (uint64_t)x.correlation, NULL) = (uint64_t)x.external_id;
}

/*
 * Kernels and CPU ops without an External id of their own take the corr
 * map's; CPU ops only when the tool reads corr records (the map may be
 * there for late kernels alone, below).
 */
static void
apply_corr(struct trace *tr, int ops_too)
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
	for (i = 0; ops_too && i < tr->nop; i++) {
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
	finish_stages(r);
	if (r->ops.queue)
		queue_corr(r);
	else
		apply_corr(&r->tr, (r->ops.collect & TR_MASK(corr)) != 0);
	r->ntraces++;
	if (r->ops.on_trace)
		r->ops.on_trace(r->ops.ctx, r, &r->tr);
	trace_free(&r->tr);
	stages_reset(r);
	xsort_free(r->kneed);
	xsort_free(r->oneed);
	r->kneed = r->oneed = NULL;
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
	imap_free(&r->seen_t);		/* each stream numbers its own traces */
	imap_free(&r->kref);		/* and its kernel names */
	rec_reader_init(&r->rd, fp, name);
	while (rec_next(&r->rd)) {
		enum rec_type t = rec_type_of(&r->rd);
		unsigned bit = t < 32 ? 1u << t : 0;	/* TR_MASK covers the first 32 types */

		if (t == RT_trace) {
			open_trace(r);
		} else if (t == RT_frame_name) {
			add_frame_name(r);
		} else if (t == RT_stats) {
			close_trace(r);
		} else if (t == RT_kernel_stages && (r->ops.collect & TR_MASK(kernel))) {
			add_stages(r);
		} else if (t == RT_corr && r->late && !(bit & r->ops.collect) &&
		    (r->ops.collect & TR_MASK(kernel))) {
			/*
			 * Kernels that came without their stages came without the External
			 * ids trace-stage's rewrite takes from the corr map, too: the
			 * reader takes them, whatever the tool reads.
			 */
			add_corr(r);
		} else if (bit & r->ops.collect) {
			switch (t) {
			case RT_kernel:
				add_kernel(r);
				break;
			case RT_cpu_op:
			case RT_launch:
				add_call(r, t);
				break;
			case RT_sync:
				add_sync(r);
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
		/* and the corr records go on after such kernels: the filters after need them */
		if (r->ops.pass && (!(bit & r->ops.consume) || (t == RT_corr && r->late)))
			rec_line(r->rd.line, r->rd.len);
	}
	if (r->open)
		die(EXIT_DATA, "%s: input ended inside trace %lld (no stats record); the upstream "
		    "tool probably failed", name, r->tr.t);
	rec_reader_free(&r->rd);
}
