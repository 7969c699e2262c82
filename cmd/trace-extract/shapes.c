/* The input shapes of the CPU ops that launch GPU work (shapes.h, issue 28). */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "imap.h"
#include "json.h"
#include "rec.h"
#include "sbuf.h"
#include "shapes.h"
#include "spool.h"
#include "strtab.h"
#include "xalloc.h"
#include "xsort.h"

/* The tolerance of a launch at an op's edge, microseconds (kernel-map's, §4.2). */
#define EDGE_US 1e-3
/* A value longer than this is dropped: no model reads a list that long. */
#define MAX_VALUE 65536

/*
 * One CPU op as kept in the op spool, followed by its shape text (textlen
 * bytes: the name, then the raw Input Dims, Input type and Concrete Inputs,
 * each with its length before it), compacted only for the ops that
 * launched kernels.
 */
struct opent {
	double ts, dur;
	long long ext;
	uint32_t thread, textlen;
	unsigned char has_ext, pad[7];
};

struct launch {
	double ts;
	long long corr, ext;
	uint32_t thread;
	unsigned char has_ext, graph;
	long long op;			/* the op that launched it, -1 none yet */
};

struct kent {
	long long corr;
	double dur;
	unsigned char has_corr, copy;
};

/* An op that launched kernels: their summed duration and its op_shape id. */
struct opwork {
	double total;
	uint32_t shape;
};

/* The op spool's memory: beyond it, a temporary file (read back sequentially). */
#define OPS_MEM (1u << 20)

struct shapes {
	struct spool *ops;
	unsigned long long nop;
	unsigned long long ntext;	/* ops with a shape text */
	/*
	 * The launches and kernels wait in queues (xsort.h) until the trace's
	 * end, and are read into the arrays below only when some op recorded
	 * its shapes: a trace profiled without record_shapes costs no memory
	 * per launch or kernel (issue 30).
	 */
	struct xsort *lq, *kq;
	struct launch *ln;
	size_t nln;
	struct kent *k;
	size_t nk;
	imap by_corr;			/* correlation -> launch index */
	imap by_op;			/* op index -> index into work */
	struct opwork *work;
	size_t nwork, capwork;
	strtab *blobs;			/* distinct shape texts: id = op_shape id */
	sbuf blob, val;
};

struct shapes *
shapes_new(void)
{
	struct shapes *sh = xcalloc(1, sizeof *sh);

	sh->ops = spool_new_limit(OPS_MEM);
	sh->lq = xsort_new(sizeof(struct launch), NULL, NULL);
	sh->kq = xsort_new(sizeof(struct kent), NULL, NULL);
	sh->blobs = strtab_new();
	return sh;
}

void
shapes_free(struct shapes *sh)
{
	if (!sh)
		return;
	spool_free(sh->ops);
	xsort_free(sh->lq);
	xsort_free(sh->kq);
	free(sh->ln);
	free(sh->k);
	imap_free(&sh->by_corr);
	imap_free(&sh->by_op);
	free(sh->work);
	strtab_free(sh->blobs);
	sb_free(&sh->blob);
	sb_free(&sh->val);
	free(sh);
}

/* ---- the args of an op ---- */

static size_t
skip_ws(const char *p, size_t i, size_t n)
{
	while (i < n && (p[i] == ' ' || p[i] == '\n' || p[i] == '\t' || p[i] == '\r'))
		i++;
	return i;
}

/* Characters a skip must stop at: 1 in strings ('"', '\\'), 2 outside them (brackets too). */
static const unsigned char stop[256] = {
	['"'] = 3, ['\\'] = 3, ['['] = 2, [']'] = 2, ['{'] = 2, ['}'] = 2
};

/* The end of the string starting at p[i] == '"': the index after its closing quote. */
static size_t
skip_string(const char *p, size_t i, size_t n)
{
	i++;
	while (i < n) {
		while (i < n && !(stop[(unsigned char)p[i]] & 1))
			i++;
		if (i >= n || p[i] == '"')
			break;
		i += 2;	/* the backslash and the character it escapes */
	}
	return i < n ? i + 1 : n;
}

/* The end of the value at p[i] (valid JSON, as the scanner accepted it). */
static size_t
skip_value(const char *p, size_t i, size_t n)
{
	int depth = 0;

	if (i >= n)
		return n;
	if (p[i] == '"')
		return skip_string(p, i, n);
	if (p[i] != '[' && p[i] != '{') {
		while (i < n && p[i] != ',' && p[i] != '}' && p[i] != ']' && p[i] != ' ' &&
		    p[i] != '\n' && p[i] != '\t' && p[i] != '\r')
			i++;
		return i;
	}
	while (i < n) {
		char c;
		while (i < n && !(stop[(unsigned char)p[i]] & 2))
			i++;
		if (i >= n)
			break;
		c = p[i];
		if (c == '"') {
			i = skip_string(p, i, n);
			continue;
		}
		if (c == '[' || c == '{')
			depth++;
		else if ((c == ']' || c == '}') && --depth == 0)
			return i + 1;
		i++;
	}
	return n;
}

static const struct {
	const char *name;
	size_t n;
} wanted[3] = { { "Input Dims", 10 }, { "Input type", 10 }, { "Concrete Inputs", 15 } };

/*
 * The spans of the three members in an args object: 1, or 0 when a member
 * name has an escape (the caller then reads the object the general way).
 */
static int
find_members(const char *p, size_t n, struct rstr v[3])
{
	size_t i = skip_ws(p, 0, n), ks, ke, vs;
	int j;

	if (i >= n || p[i] != '{')
		return 1;
	i = skip_ws(p, i + 1, n);
	while (i < n && p[i] == '"') {
		ks = i + 1;
		ke = skip_string(p, i, n) - 1;
		if (memchr(p + ks, '\\', ke - ks))
			return 0;
		i = skip_ws(p, ke + 1, n);
		if (i >= n || p[i] != ':')
			return 1;
		vs = skip_ws(p, i + 1, n);
		i = skip_value(p, vs, n);
		for (j = 0; j < 3; j++)
			if (ke - ks == wanted[j].n && memcmp(p + ks, wanted[j].name, wanted[j].n) == 0) {
				v[j].s = p + vs;	/* the last of duplicate members wins */
				v[j].n = i - vs;
			}
		i = skip_ws(p, i, n);
		if (i < n && p[i] == ',')
			i = skip_ws(p, i + 1, n);
	}
	return 1;
}

/* The same through the tokenizer, for member names with escapes. */
static void
find_members_slow(const char *p, size_t n, struct rstr v[3])
{
	json_doc d = { 0 };
	int j, i;

	if (json_parse(&d, p, n) < 0 || d.ntok < 1 || d.tok[0].type != JSMN_OBJECT) {
		json_doc_free(&d);
		return;
	}
	for (j = 0; j < 3; j++) {
		i = json_get(&d, 0, wanted[j].name);
		if (i >= 0 && d.tok[i].type == JSMN_ARRAY) {
			v[j].s = p + d.tok[i].start;
			v[j].n = (size_t)(d.tok[i].end - d.tok[i].start);
		}
	}
	json_doc_free(&d);
}

int
shapes_compact(const char *p, size_t n, sbuf *out)
{
	size_t i = 0;
	char last = 0;

	sb_reset(out);
	if (n == 0 || p[0] != '[' || n > MAX_VALUE)
		return 0;
	while (i < n) {
		char c = p[i];
		if (c == '"') {
			size_t e = skip_string(p, i, n), k;
			for (k = i + 1; k + 1 < e; k++)
				if ((unsigned char)p[k] < 0x20)
					return 0;	/* a raw control character: not strict JSON */
			sb_add(out, p + i, e - i);
			i = e;
			last = '"';
			continue;
		}
		if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
			i++;
			continue;
		}
		if ((c == ']' || c == '}') && last == ',')
			return 0;	/* a trailing comma */
		if (c == 't' || c == 'f' || c == 'n') {
			const char *lit = c == 't' ? "true" : c == 'f' ? "false" : "null";
			size_t ll = strlen(lit);
			if (n - i < ll || memcmp(p + i, lit, ll) != 0)
				return 0;
			sb_add(out, lit, ll);
			i += ll;
			last = 'l';
			continue;
		}
		if (!((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' ||
		    c == 'E' || c == '[' || c == ']' || c == '{' || c == '}' || c == ',' || c == ':'))
			return 0;	/* NaN, Infinity: not strict JSON */
		sb_addc(out, c);
		last = c;
		i++;
	}
	return 1;
}

/* Append one length-prefixed piece to the shape text. */
static void
blob_piece(sbuf *b, const char *p, size_t n)
{
	uint32_t len = (uint32_t)n;

	sb_add(b, (const char *)&len, sizeof len);
	sb_add(b, p, n);
}

void
shapes_op(struct shapes *sh, uint32_t thread, double ts, double dur, int has_ext,
    long long ext, const char *name, size_t namelen, const char *args, size_t argslen)
{
	struct opent o;
	struct rstr v[3] = { { NULL, 0 }, { NULL, 0 }, { NULL, 0 } };
	int j, any = 0;

	memset(&o, 0, sizeof o);
	o.ts = ts;
	o.dur = dur;
	o.ext = ext;
	o.has_ext = has_ext != 0;
	o.thread = thread;
	if (args && argslen && !find_members(args, argslen, v))
		find_members_slow(args, argslen, v);
	sb_reset(&sh->blob);
	sb_add(&sh->blob, (const char *)&o, sizeof o);
	blob_piece(&sh->blob, name, namelen);
	for (j = 0; j < 3; j++) {
		/* raw: compacted and checked only if the op launches a kernel (name_shapes) */
		if (v[j].s && v[j].n <= MAX_VALUE) {
			blob_piece(&sh->blob, v[j].s, v[j].n);
			any = 1;
		} else
			blob_piece(&sh->blob, "", 0);
	}
	if (any) {
		struct opent *h = (struct opent *)(void *)sh->blob.s;
		h->textlen = (uint32_t)(sh->blob.len - sizeof o);
		spool_append(sh->ops, sh->blob.s, sh->blob.len);
		sh->ntext++;
	} else
		spool_append(sh->ops, &o, sizeof o);
	sh->nop++;
}

void
shapes_launch(struct shapes *sh, uint32_t thread, double ts, long long corr, int has_ext,
    long long ext, int graph)
{
	struct launch l;

	memset(&l, 0, sizeof l);
	l.ts = ts;
	l.corr = corr;
	l.ext = ext;
	l.has_ext = has_ext != 0;
	l.thread = thread;
	l.graph = graph != 0;
	l.op = -1;
	xsort_add(sh->lq, &l);
}

void
shapes_kernel(struct shapes *sh, int has_corr, long long corr, double dur, int copy)
{
	struct kent k;

	memset(&k, 0, sizeof k);
	k.corr = corr;
	k.dur = dur;
	k.has_corr = has_corr != 0;
	k.copy = copy != 0;
	xsort_add(sh->kq, &k);
}

/* A queue read into its array (n records of size bytes). */
static void *
load(struct xsort *q, size_t size, size_t *n)
{
	unsigned long long c = xsort_count(q);
	char *a = xreallocarray(NULL, c ? (size_t)c : 1, size);
	const void *p;
	size_t i = 0;

	while ((p = xsort_next(q)) != NULL)
		memcpy(a + i++ * size, p, size);
	*n = i;
	return a;
}

/* ---- resolution ---- */

/* Sort keys of launch indexes: (ext, thread, ts) or (thread, ts). */
static const struct launch *sort_ln;

static int
cmp_ext(const void *pa, const void *pb)
{
	const struct launch *a = &sort_ln[*(const uint32_t *)pa], *b = &sort_ln[*(const uint32_t *)pb];

	if (a->ext != b->ext)
		return a->ext < b->ext ? -1 : 1;
	if (a->thread != b->thread)
		return a->thread < b->thread ? -1 : 1;
	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

static int
cmp_thread(const void *pa, const void *pb)
{
	const struct launch *a = &sort_ln[*(const uint32_t *)pa], *b = &sort_ln[*(const uint32_t *)pb];

	if (a->thread != b->thread)
		return a->thread < b->thread ? -1 : 1;
	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

/* A sequential reader of the op spool's variable-size entries. */
struct oprd {
	struct shapes *sh;
	unsigned long long off, size, oi;
	char *buf;
	size_t cap, have, pos;
};

static void
oprd_init(struct oprd *r, struct shapes *sh)
{
	memset(r, 0, sizeof *r);
	r->sh = sh;
	r->size = spool_size(sh->ops);
	r->cap = 1 << 16;
	r->buf = xmalloc(r->cap);
}

/* Make `need` bytes available at r->pos. */
static void
oprd_fill(struct oprd *r, size_t need)
{
	size_t k;

	memmove(r->buf, r->buf + r->pos, r->have - r->pos);
	r->have -= r->pos;
	r->pos = 0;
	if (need > r->cap) {
		r->cap = need;
		r->buf = xrealloc(r->buf, r->cap);
	}
	k = r->cap - r->have;
	if (k > r->size - r->off)
		k = (size_t)(r->size - r->off);
	spool_read(r->sh->ops, r->off, r->buf + r->have, k);
	r->off += k;
	r->have += k;
	if (r->have < need)
		die(EXIT_DATA, "internal error: an op entry of the shape spool lost its end");
}

/* The next op and its shape text (valid until the next call); 0 at the end. */
static int
oprd_next(struct oprd *r, struct opent *o, const char **text)
{
	if (r->oi >= r->sh->nop)
		return 0;
	if (r->have - r->pos < sizeof *o)
		oprd_fill(r, sizeof *o);
	memcpy(o, r->buf + r->pos, sizeof *o);
	if (r->have - r->pos < sizeof *o + o->textlen)
		oprd_fill(r, sizeof *o + o->textlen);
	*text = r->buf + r->pos + sizeof *o;
	r->pos += sizeof *o + o->textlen;
	r->oi++;
	return 1;
}

/* An op that contains launches of the index being painted: idx[lo..hi). */
struct cover {
	double ts, dur;
	unsigned long long oi;
	size_t lo, hi;
};

static int
cmp_cover(const void *pa, const void *pb)
{
	const struct cover *a = pa, *b = pb;

	/* the innermost first: the latest start, then the shortest, then file order */
	if (a->ts != b->ts)
		return a->ts > b->ts ? -1 : 1;
	if (a->dur != b->dur)
		return a->dur < b->dur ? -1 : 1;
	return a->oi < b->oi ? -1 : a->oi > b->oi;
}

/* Is launch l before the key (ext when by_ext, thread, ts)? */
static int
launch_before(const struct launch *l, int by_ext, long long ext, uint32_t thread, double ts,
    int or_equal)
{
	if (by_ext && l->ext != ext)
		return l->ext < ext;
	if (l->thread != thread)
		return l->thread < thread;
	return or_equal ? l->ts <= ts : l->ts < ts;
}

/* The first of idx[0..n) not before the key. */
static size_t
bound(const struct shapes *sh, const uint32_t *idx, size_t n, int by_ext, long long ext,
    uint32_t thread, double ts, int or_equal)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (launch_before(&sh->ln[idx[mid]], by_ext, ext, thread, ts, or_equal))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static size_t
next_free(size_t *up, size_t i)
{
	size_t r = i, t;

	while (up[r] != r)
		r = up[r];
	while (up[i] != r) {	/* path compression */
		t = up[i];
		up[i] = r;
		i = t;
	}
	return r;
}

/*
 * Give each launch of idx[0..n) (sorted by (ext, thread, ts) when by_ext,
 * else (thread, ts)) the innermost op of its thread that contains it, of
 * the launch's External id when by_ext.  The ops that contain any are
 * kept (their span and index range), sorted innermost first, and each
 * takes the launches of its range that no more inner op took: a union-find
 * skips those, so the time is linear in ops and launches whatever the
 * nesting.
 */
static void
paint(struct shapes *sh, const uint32_t *idx, size_t n, int by_ext)
{
	struct oprd rd;
	struct opent o;
	const char *text;
	struct cover *cv = NULL;
	size_t ncv = 0, capcv = 0, i, j, *up;

	oprd_init(&rd, sh);
	while (oprd_next(&rd, &o, &text)) {
		size_t lo, hi;
		if (by_ext && !o.has_ext)
			continue;
		lo = bound(sh, idx, n, by_ext, o.ext, o.thread, o.ts - EDGE_US, 0);
		hi = bound(sh, idx, n, by_ext, o.ext, o.thread, o.ts + o.dur + EDGE_US, 1);
		if (lo >= hi)
			continue;
		xgrow(&cv, &capcv, ncv + 1, sizeof *cv);
		cv[ncv].ts = o.ts;
		cv[ncv].dur = o.dur;
		cv[ncv].oi = rd.oi - 1;
		cv[ncv].lo = lo;
		cv[ncv++].hi = hi;
	}
	free(rd.buf);
	xqsort(cv, ncv, sizeof *cv, cmp_cover);
	up = xmalloc((n + 1) * sizeof *up);
	for (i = 0; i <= n; i++)
		up[i] = i;
	for (i = 0; i < ncv; i++)
		for (j = next_free(up, cv[i].lo); j < cv[i].hi; j = next_free(up, j + 1)) {
			sh->ln[idx[j]].op = (long long)cv[i].oi;
			up[j] = j + 1;
		}
	free(up);
	free(cv);
}

static void
write_shape(const char *blob, size_t n, long long t, uint32_t id)
{
	static const enum rec_member m[3] = { RM_op_shape_dims, RM_op_shape_types,
	    RM_op_shape_concrete };
	uint32_t len;
	size_t off = 0;
	int j;

	rec_begin(RT_op_shape);
	rec_int(RM_op_shape_t, t);
	rec_int(RM_op_shape_id, id);
	for (j = -1; j < 3 && off + sizeof len <= n; j++) {
		memcpy(&len, blob + off, sizeof len);
		off += sizeof len;
		if (len > n - off)
			break;
		if (j < 0)
			rec_str(RM_op_shape_op, blob + off, len);
		else if (len)
			rec_json(m[j], blob + off, len);
		off += len;
	}
	rec_end();
}

/*
 * The compact shape text of an op's raw one (its name, then each value
 * compacted, or empty when it is no strict JSON array); 0 when no value is left.
 */
static int
compact_blob(const char *t, size_t n, sbuf *out, sbuf *val)
{
	uint32_t len;
	size_t off = 0;
	int j, any = 0;

	sb_reset(out);
	for (j = -1; j < 3 && off + sizeof len <= n; j++) {
		memcpy(&len, t + off, sizeof len);
		off += sizeof len;
		if (len > n - off)
			return 0;
		if (j < 0)
			blob_piece(out, t + off, len);
		else if (len && shapes_compact(t + off, len, val)) {
			blob_piece(out, val->s, val->len);
			any = 1;
		} else
			blob_piece(out, "", 0);
		off += len;
	}
	return any;
}

/* Give every op that launched kernels its op_shape id, writing each new one. */
static void
name_shapes(struct shapes *sh, long long t)
{
	struct oprd rd;
	struct opent op;
	const char *text;
	sbuf b = SBUF_INIT;

	oprd_init(&rd, sh);
	while (oprd_next(&rd, &op, &text)) {
		uint64_t *w;
		uint32_t before, id;
		if (!op.textlen || !(w = imap_get(&sh->by_op, rd.oi - 1)))
			continue;
		if (!compact_blob(text, op.textlen, &b, &sh->val))
			continue;
		before = strtab_count(sh->blobs);
		id = strtab_intern(sh->blobs, b.s, b.len);
		if (strtab_count(sh->blobs) > before)
			write_shape(b.s, b.len, t, id);
		sh->work[*w].shape = id;
	}
	sb_free(&b);
	free(rd.buf);
}

void
shapes_resolve(struct shapes *sh, long long t)
{
	uint32_t *idx;
	size_t i, n;
	int isnew;

	if (sh->ntext == 0)
		return;		/* no op has a shape: no kernel gets one */
	sh->ln = load(sh->lq, sizeof *sh->ln, &sh->nln);
	sh->k = load(sh->kq, sizeof *sh->k, &sh->nk);
	xsort_free(sh->lq);
	xsort_free(sh->kq);
	sh->lq = sh->kq = NULL;
	idx = xmalloc((sh->nln ? sh->nln : 1) * sizeof *idx);

	for (i = 0; i < sh->nln; i++) {
		uint64_t *v = imap_put(&sh->by_corr, (uint64_t)sh->ln[i].corr, &isnew);
		if (isnew)	/* a duplicated correlation keeps its first launch */
			*v = i;
	}
	sort_ln = sh->ln;
	for (i = n = 0; i < sh->nln; i++)
		if (sh->ln[i].has_ext && !sh->ln[i].graph)
			idx[n++] = (uint32_t)i;
	if (n) {
		xqsort(idx, n, sizeof *idx, cmp_ext);
		paint(sh, idx, n, 1);
	}
	for (i = n = 0; i < sh->nln; i++)
		if (sh->ln[i].op < 0 && !sh->ln[i].graph)
			idx[n++] = (uint32_t)i;
	if (n) {
		xqsort(idx, n, sizeof *idx, cmp_thread);
		paint(sh, idx, n, 0);
	}
	free(idx);
	/* each op's kernels: their summed duration */
	for (i = 0; i < sh->nk; i++) {
		const struct kent *k = &sh->k[i];
		uint64_t *v, *w;
		const struct launch *l;
		if (!k->has_corr || !(v = imap_get(&sh->by_corr, (uint64_t)k->corr)))
			continue;
		l = &sh->ln[*v];
		if (l->op < 0)
			continue;
		w = imap_put(&sh->by_op, (uint64_t)l->op, &isnew);
		if (isnew) {
			xgrow(&sh->work, &sh->capwork, sh->nwork + 1, sizeof *sh->work);
			sh->work[sh->nwork].total = 0;
			sh->work[sh->nwork].shape = UINT32_MAX;
			*w = sh->nwork++;
		}
		if (!k->copy)
			sh->work[*w].total += k->dur;
	}
	if (sh->nwork)
		name_shapes(sh, t);
}

int
shapes_kernel_result(const struct shapes *sh, size_t i, uint32_t *id, double *frac)
{
	const struct kent *k;
	const struct opwork *w;
	uint64_t *v, *wi;
	long long op;

	if (i >= sh->nk)
		return 0;
	k = &sh->k[i];
	if (!k->has_corr || !(v = imap_get(&sh->by_corr, (uint64_t)k->corr)))
		return 0;
	op = sh->ln[*v].op;
	if (op < 0 || !(wi = imap_get(&sh->by_op, (uint64_t)op)))
		return 0;
	w = &sh->work[*wi];
	if (w->shape == UINT32_MAX)
		return 0;
	*id = w->shape;
	*frac = k->copy ? 0.0 : w->total > 0 ? k->dur / w->total : 1.0;
	if (*frac > 1.0)
		*frac = 1.0;
	return 1;
}
