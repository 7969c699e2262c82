/*
 * overlap-sweep: the overlap-opportunity table of the mapping/formal flow
 * (spec overlap.md).  Reads the formal record stream, passes every record
 * through, and at end of input appends one overlap_row record per table row.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "num.h"
#include "overlap.h"
#include "rec.h"
#include "rules.h"
#include "text.h"
#include "xalloc.h"

#define NSTAGES 3	/* extend, decode, all: the stage_index order */

static const char *stage_names[NSTAGES] = { "extend", "decode", "all" };

/* A kernel record accepted by the overlap detector, before pid selection. */
typedef struct {
	uint32_t raw, pid, tid, thr, stream;	/* stream NOSTR: absent */
	int stage;				/* 0..2 */
	int has_eid;
	long long eid;
	double ts, dur;
} kin_t;

/*
 * One trace of a stream.  The kernels and thread names are dropped when the
 * trace closes; the raw CPU data (mapping traces only) lives as long as a
 * bundle refers to the trace.
 */
typedef struct {
	int open, refs;
	size_t order;		/* position in the stream, breaks sort-key ties */
	int sidx;		/* stage_index(parse_stage(path)) */
	char *base;		/* file name of the path */
	kin_t *k;
	size_t nk, capk;
	imap tnames;		/* thread key -> thread name */
	rawdata_t raw;
} trace_t;

/* A stage bundle (§3.6): one trace's overlap kernels of one stage. */
typedef struct {
	trace_t *tr;
	oev_t *ev;
	size_t n;
} bundle_t;

typedef struct {
	int keep_raw;		/* mapping side: keep CPU ops and frames */
	trace_t **tr;		/* indexed by the records' t */
	size_t ntr;
	size_t seq;
	bundle_t b[NSTAGES];
} side_t;

/* Formal stage payloads (§1 step 3): per stage, the last trace's entries. */
typedef struct {
	char *stage;
	long long t;
	payload_t p;
} fpayload_t;

static const char *pid_substring;
static long long table_limit;
static fpayload_t *fpay;
static size_t nfpay, capfpay;
static kernel_map_t kmap;

static void usage(void) __attribute__((noreturn));

static void
usage(void)
{
	fprintf(stderr, "usage: overlap-sweep [-q] [--mapping file] [--overlap-table-limit n]\n"
	    "                     [--pid-substring text] [file ...]\n");
	exit(EXIT_USAGE);
}

/* ---- record fields ---- */

/* A member as the text the reference compares (strings verbatim, else str()). */
static uint32_t
get_text(rec_reader *r, const char *key)
{
	static sbuf b;
	int i = rec_get(r, key);

	if (i < 0)
		return NOSTR;
	if (json_kind(&r->doc, i) == JK_STR)
		json_str(&r->doc, i, &b, NULL);
	else
		json_pystr(&r->doc, i, &b, NULL);
	return intern(b.s, b.len);
}

static long long
get_t(rec_reader *r)
{
	long long t;

	if (!rec_get_int(r, "t", &t) || t < 0 || t > 1000000)
		die(EXIT_DATA, "%s:%zu: record has no valid \"t\" member", r->name, r->lineno);
	return t;
}

static int
get_coerced(rec_reader *r, const char *key, long long *v)
{
	int i = rec_get(r, key);

	return i >= 0 && json_coerce_int(&r->doc, i, v);
}

static uint32_t
thread_key(uint32_t pid, uint32_t tid)
{
	sbuf b = SBUF_INIT;
	uint32_t id;

	sb_add(&b, S(pid), SLEN(pid));
	sb_addc(&b, '\0');
	sb_add(&b, S(tid), SLEN(tid));
	id = intern(b.s, b.len);
	sb_free(&b);
	return id;
}

/* ---- traces and bundles ---- */

static trace_t *
trace_of(side_t *sd, rec_reader *r, long long t)
{
	if ((size_t)t >= sd->ntr || !sd->tr[t])
		die(EXIT_DATA, "%s:%zu: record for trace %lld outside that trace", r->name,
		    r->lineno, t);
	return sd->tr[t];
}

static void
trace_release(trace_t *tr)
{
	if (!tr || tr->open || tr->refs > 0)
		return;
	rawdata_free(&tr->raw);
	free(tr->base);
	free(tr->k);
	imap_free(&tr->tnames);
	free(tr);
}

static void
trace_open(side_t *sd, rec_reader *r)
{
	long long t = get_t(r);
	sbuf path = SBUF_INIT, stage = SBUF_INIT;
	trace_t *tr;
	const char *slash;

	if ((size_t)t >= sd->ntr) {
		size_t n = (size_t)t + 1;
		sd->tr = xrealloc(sd->tr, n * sizeof *sd->tr);
		memset(sd->tr + sd->ntr, 0, (n - sd->ntr) * sizeof *sd->tr);
		sd->ntr = n;
	}
	if (sd->tr[t])
		die(EXIT_DATA, "%s:%zu: trace %lld opened twice", r->name, r->lineno, t);
	rec_get_str(r, "path", &path);
	if (!rec_get_str(r, "stage", &stage))
		sb_adds(&stage, parse_stage(sb_str(&path)));
	tr = xcalloc(1, sizeof *tr);
	tr->open = 1;
	tr->order = sd->seq++;
	tr->sidx = stage_index(sb_str(&stage));
	slash = strrchr(sb_str(&path), '/');
	tr->base = xstrdup(slash ? slash + 1 : sb_str(&path));
	sd->tr[t] = tr;
	sb_free(&path);
	sb_free(&stage);
}

/* Is trace a ahead of b in the (stage_index, file name) order of §3.6? */
static int
trace_before(const trace_t *a, const trace_t *b)
{
	int c;

	if (a->sidx != b->sidx)
		return a->sidx < b->sidx;
	c = strcmp(a->base, b->base);
	if (c != 0)
		return c < 0;
	return a->order < b->order;
}

/*
 * Offer a trace's events of one stage to the bundle map: the first trace in
 * sorted order wins the stage.  Traces arrive in stream order, so a later
 * one replaces the bundle only when it sorts strictly earlier.
 */
static void
bundle_offer(side_t *sd, int st, trace_t *tr, const oev_t *ev, size_t n)
{
	bundle_t *b = &sd->b[st];
	trace_t *old = b->tr;

	if (old && !trace_before(tr, old))
		return;
	free(b->ev);
	b->ev = xmalloc((n ? n : 1) * sizeof *b->ev);
	memcpy(b->ev, ev, n * sizeof *ev);
	b->n = n;
	b->tr = tr;
	tr->refs++;
	if (old) {
		old->refs--;
		trace_release(old);
	}
}

/*
 * select_heaviest_pid (§2.6 step 4) over the trace's overlap kernels: the
 * pid with the largest summed duration, preferring TP00 pids when no pid
 * substring was given.  Returns NOSTR when no kernel qualifies.
 */
static uint32_t
select_pid(const trace_t *tr)
{
	imap ix = { 0 };
	uint32_t *pids = NULL, best = NOSTR;
	double *sum = NULL, bsum = 0;
	size_t n = 0, cap = 0, i;
	int pass, filtered = pid_substring && *pid_substring;

	for (i = 0; i < tr->nk; i++) {
		const kin_t *k = &tr->k[i];
		int isnew;
		uint32_t *v;
		if (filtered && !strstr(S(k->pid), pid_substring))
			continue;
		v = imap_put(&ix, k->pid, (uint32_t)n, &isnew);
		if (isnew) {
			size_t c2 = cap;
			xgrow(&pids, &c2, n + 1, sizeof *pids);
			if (c2 != cap)
				sum = xrealloc(sum, c2 * sizeof *sum);
			cap = c2;
			pids[n] = k->pid;
			sum[n] = 0.0;
			n++;
		}
		sum[*v] += k->dur;
	}
	for (pass = filtered ? 1 : 0; pass < 2 && best == NOSTR; pass++) {
		for (i = 0; i < n; i++) {
			if (pass == 0 && !strstr(S(pids[i]), "TP00"))
				continue;
			if (best == NOSTR || sum[i] > bsum) {
				best = pids[i];
				bsum = sum[i];
			}
		}
	}
	free(pids);
	free(sum);
	imap_free(&ix);
	return best;
}

/*
 * Canonical name and overlap category of an interned raw kernel name,
 * computed once per distinct name: kernel names repeat thousands of times
 * and the keyword scan dominated the run.
 */
static void
name_rules(uint32_t raw, uint32_t *canon, int *cat)
{
	static uint32_t *cc;	/* canon + 1, 0 = not yet computed */
	static int *ct;
	static size_t cap;
	static sbuf b;
	const char *c;

	if (raw >= cap) {
		size_t old = cap;
		xgrow(&cc, &cap, (size_t)raw + 1, sizeof *cc);
		ct = xrealloc(ct, cap * sizeof *ct);
		memset(cc + old, 0, (cap - old) * sizeof *cc);
	}
	if (!cc[raw]) {
		sb_reset(&b);
		canonicalize_name(S(raw), SLEN(raw), &b);
		cc[raw] = intern(sb_str(&b), b.len) + 1;
		c = overlap_classify(S(raw), SLEN(raw));
		ct[raw] = strcmp(c, "compute") == 0 ? OC_COMPUTE :
		    strcmp(c, "communication") == 0 ? OC_COMMUNICATION :
		    strcmp(c, "memory") == 0 ? OC_MEMORY :
		    strcmp(c, "elementwise") == 0 ? OC_ELEMENTWISE : OC_OTHER;
	}
	*canon = cc[raw] - 1;
	*cat = ct[raw];
}

/*
 * The trace is complete: build its overlap events and offer its stages.
 * The slot of its index is cleared; bundles keep what they need.
 */
static void
trace_close(side_t *sd, rec_reader *r)
{
	long long t = get_t(r);
	trace_t *tr = trace_of(sd, r, t);
	uint32_t pid = select_pid(tr);
	oev_t *ev[NSTAGES] = { NULL };
	size_t nev[NSTAGES] = { 0 }, cap[NSTAGES] = { 0 }, i, idx = 0;
	sbuf b = SBUF_INIT;
	int st, others;

	for (i = 0; pid != NOSTR && i < tr->nk; i++) {
		const kin_t *k = &tr->k[i];
		oev_t *e;
		uint32_t stream = k->stream;
		if (k->pid != pid)
			continue;
		if (stream == NOSTR) {
			/* §2.6: thread name, then "tid=<tid>" */
			uint32_t *v = imap_get(&tr->tnames, k->thr);
			if (v) {
				stream = *v;
			} else {
				sb_reset(&b);
				sb_adds(&b, "tid=");
				sb_add(&b, S(k->tid), SLEN(k->tid));
				stream = intern(b.s, b.len);
			}
		}
		st = k->stage;
		xgrow(&ev[st], &cap[st], nev[st] + 1, sizeof *ev[st]);
		e = &ev[st][nev[st]++];
		memset(e, 0, sizeof *e);
		name_rules(k->raw, &e->canon, &e->cat);
		e->stream = stream;
		e->has_eid = k->has_eid;
		e->eid = k->eid;
		e->idx = idx++;
		e->ts = k->ts;
		e->dur = k->dur;
		e->end = k->ts + k->dur;
	}
	sb_free(&b);
	/* render_stages: `all` only when it is the sole stage (§3.4) */
	others = nev[0] > 0 || nev[1] > 0;
	for (st = 0; st < NSTAGES; st++) {
		if (nev[st] && !(st == 2 && others))
			bundle_offer(sd, st, tr, ev[st], nev[st]);
		free(ev[st]);
	}
	free(tr->k);
	tr->k = NULL;
	tr->nk = tr->capk = 0;
	imap_free(&tr->tnames);
	tr->open = 0;
	if (!sd->keep_raw)
		rawdata_free(&tr->raw);
	sd->tr[t] = NULL;
	trace_release(tr);
}

static void
add_kernel(side_t *sd, rec_reader *r)
{
	int ov = 0, si;
	trace_t *tr;
	kin_t k;
	sbuf stage = SBUF_INIT;

	if (!rec_get_bool(r, "overlap", &ov) || !ov)
		return;
	tr = trace_of(sd, r, get_t(r));
	memset(&k, 0, sizeof k);
	if (!rec_get_num(r, "ts", &k.ts) || !rec_get_num(r, "dur", &k.dur))
		die(EXIT_DATA, "%s:%zu: kernel record without numeric ts and dur", r->name,
		    r->lineno);
	k.raw = get_text(r, "name");
	if (k.raw == NOSTR)
		k.raw = intern("", 0);
	k.pid = get_text(r, "pid");
	k.tid = get_text(r, "tid");
	if (k.pid == NOSTR)
		k.pid = intern_c("None");
	if (k.tid == NOSTR)
		k.tid = intern_c("None");
	k.thr = thread_key(k.pid, k.tid);
	k.stream = get_text(r, "stream");
	if (k.stream != NOSTR && SLEN(k.stream) == 0)
		k.stream = NOSTR;
	k.has_eid = get_coerced(r, "external_id", &k.eid);
	/* before trace-stage has run, a kernel is in its trace's path stage */
	rec_get_str(r, "stage", &stage);
	si = stage.len ? stage_index(sb_str(&stage)) : tr->sidx;
	if (si > 2)
		die(EXIT_DATA, "%s:%zu: unknown kernel stage '%s'", r->name, r->lineno,
		    sb_str(&stage));
	k.stage = si;
	sb_free(&stage);
	xgrow(&tr->k, &tr->capk, tr->nk + 1, sizeof *tr->k);
	tr->k[tr->nk++] = k;
}

static void
add_thread_name(side_t *sd, rec_reader *r)
{
	trace_t *tr = trace_of(sd, r, get_t(r));
	uint32_t pid = get_text(r, "pid"), tid = get_text(r, "tid"), name = get_text(r, "name");
	uint32_t *v;

	/* only non-empty names are stored; a later one overrides (§2.6 step 1) */
	if (name == NOSTR || SLEN(name) == 0)
		return;
	v = imap_put(&tr->tnames, thread_key(pid == NOSTR ? intern_c("None") : pid,
	    tid == NOSTR ? intern_c("None") : tid), name, NULL);
	*v = name;
}

/*
 * The members CPU ops and Python frames share: ts, dur, name and the
 * (pid, tid) thread.  Only complete-duration events take part (§6.3 step 2,
 * §6.5): returns 0 for the others.
 */
static int
read_cpu_event(rec_reader *r, double *ts, double *dur, uint32_t *name, uint32_t *thr)
{
	uint32_t pid, tid;

	if (!rec_get_num(r, "ts", ts) || !rec_get_num(r, "dur", dur) || !(*dur > 0))
		return 0;
	*name = get_text(r, "name");
	if (*name == NOSTR)
		*name = intern("", 0);
	pid = get_text(r, "pid");
	tid = get_text(r, "tid");
	*thr = thread_key(pid == NOSTR ? intern_c("None") : pid,
	    tid == NOSTR ? intern_c("None") : tid);
	return 1;
}

static void
add_cpu_op(side_t *sd, rec_reader *r)
{
	trace_t *tr = trace_of(sd, r, get_t(r));
	cpuop_t op;

	if (!get_coerced(r, "external_id", &op.eid))
		return;
	if (!read_cpu_event(r, &op.ts, &op.dur, &op.name, &op.thr))
		return;
	xgrow(&tr->raw.ops, &tr->raw.capops, tr->raw.nops + 1, sizeof *tr->raw.ops);
	tr->raw.ops[tr->raw.nops++] = op;
}

/*
 * A "<built-in ...>" frame without ".py(" or "): " in its name can be
 * neither a meaningful nor a fallback scope (§6.2), so it never enters a
 * chain.  Such frames are four in ten of a stack-traced trace; telling them
 * from the raw line saves reading them.
 */
/*
 * First occurrence of pat[0..pn) in s[0..n), found by memchr for its byte
 * pat[k] (pick a rare one), or NULL.
 */
static const char *
find_sub(const char *s, size_t n, const char *pat, size_t pn, size_t k)
{
	const char *p = s + k, *e = s + n;

	if (n < pn)
		return NULL;
	while ((size_t)(e - p) >= pn - k && (p = memchr(p, pat[k], (size_t)(e - p) - (pn - k) + 1))) {
		if (memcmp(p - k, pat, pn) == 0)
			return p - k;
		p++;
	}
	return NULL;
}

/* On the whole line, before reading it: ".py(" elsewhere only means a closer look. */
static int
builtin_frame(const rec_reader *r)
{
	const char *p;

	if (!find_sub(r->line, r->len, "<built-in", 9, 0))
		return 0;	/* most lines: '<' is rare */
	p = find_sub(r->line, r->len, "\"name\":\"", 8, 1);	/* the first 'n' is usually its own */
	if (!p || (size_t)(r->line + r->len - p) < 17 || memcmp(p + 8, "<built-in", 9) != 0)
		return 0;
	return !find_sub(r->line, r->len, ".py(", 4, 3) && !find_sub(r->line, r->len, "): ", 3, 0);
}

static void
add_frame(side_t *sd, rec_reader *r)
{
	trace_t *tr;
	frame_t f;
	struct rec_frame fr;
	static uint32_t lastthr;

	if (builtin_frame(r))
		return;
	if (rec_frame(r, &fr)) {
		/* the thread first: the reader's same_thread refers to its last match */
		if (!fr.same_thread)
			lastthr = thread_key(intern(fr.pid, fr.pid_len), intern(fr.tid, fr.tid_len));
		tr = trace_of(sd, r, fr.t >= 0 && fr.t <= 1000000 ? fr.t : get_t(r));
		if (!(fr.dur > 0))
			return;
		f.ts = fr.ts;
		f.dur = fr.dur;
		f.raw = intern(fr.name, fr.name_len);
		f.thr = lastthr;
	} else {
		tr = trace_of(sd, r, get_t(r));
		if (!read_cpu_event(r, &f.ts, &f.dur, &f.raw, &f.thr))
			return;
	}
	xgrow(&tr->raw.fr, &tr->raw.capfr, tr->raw.nfr + 1, sizeof *tr->raw.fr);
	tr->raw.fr[tr->raw.nfr++] = f;
}

static void
add_site(rec_reader *r, int mapping)
{
	sbuf scope = SBUF_INIT, stage = SBUF_INIT;
	payload_t *p = NULL;

	rec_get_str(r, "scope", &scope);
	rec_get_str(r, "stage", &stage);
	if (mapping && strcmp(sb_str(&scope), "mapping_global") == 0) {
		p = &kmap.global;
	} else if (mapping && strcmp(sb_str(&scope), "mapping_stage") == 0) {
		p = kernel_map_stage(&kmap, sb_str(&stage), 1);
	} else if (!mapping && strcmp(sb_str(&scope), "formal_stage") == 0) {
		long long t = get_t(r);
		size_t i;
		for (i = 0; i < nfpay; i++)
			if (strcmp(fpay[i].stage, sb_str(&stage)) == 0)
				break;
		if (i == nfpay) {
			xgrow(&fpay, &capfpay, nfpay + 1, sizeof *fpay);
			memset(&fpay[nfpay], 0, sizeof *fpay);
			fpay[nfpay].stage = xstrdup(sb_str(&stage));
			fpay[nfpay].t = t;
			nfpay++;
		} else if (fpay[i].t != t) {
			/* a later trace's payload of the same stage wins (§1 step 3) */
			payload_free(&fpay[i].p);
			fpay[i].t = t;
		}
		p = &fpay[i].p;
	}
	if (p) {
		entry_t *e = payload_add(p);
		if (entry_from_json(&r->doc, 0, e) < 0)
			die(EXIT_DATA, "%s:%zu: site record is not a payload entry", r->name,
			    r->lineno);
	}
	sb_free(&scope);
	sb_free(&stage);
}

/*
 * Read one record stream.  With `pass`, every line is copied to stdout.
 * `collect` turns the overlap bookkeeping on (off in single-trace mode).
 */
static void
read_stream(side_t *sd, FILE *fp, const char *name, int pass, int collect, int mapping)
{
	rec_reader r;
	size_t i;

	rec_reader_init(&r, fp, name);
	while (rec_next(&r)) {
		size_t n;
		const char *ty;

		if (pass)
			rec_line(r.line, r.len);
		if (!collect)
			continue;
		ty = rec_type(&r, &n);
#define IS(s) (n == sizeof(s) - 1 && memcmp(ty, s, n) == 0)
		if (IS("kernel"))
			add_kernel(sd, &r);
		else if (IS("frame")) {
			if (mapping)
				add_frame(sd, &r);
		} else if (IS("cpu_op")) {
			if (mapping)
				add_cpu_op(sd, &r);
		} else if (IS("thread_name"))
			add_thread_name(sd, &r);
		else if (IS("site"))
			add_site(&r, mapping);
		else if (IS("trace"))
			trace_open(sd, &r);
		else if (IS("stats"))
			trace_close(sd, &r);
#undef IS
	}
	for (i = 0; i < sd->ntr; i++)
		if (sd->tr[i])
			die(EXIT_DATA, "%s:%zu: input truncated inside trace %zu", name,
			    r.lineno, i);
	rec_reader_free(&r);
}

/* pick_stage_value (§3.5) over the bundle map. */
static const bundle_t *
pick_bundle(const side_t *sd, int st)
{
	int i, n = 0, only = -1;

	if (sd->b[st].tr)
		return &sd->b[st];
	if (sd->b[2].tr)
		return &sd->b[2];
	for (i = 0; i < NSTAGES; i++)
		if (sd->b[i].tr) {
			n++;
			only = i;
		}
	return n == 1 ? &sd->b[only] : NULL;
}

/* pick_stage_value over the formal payloads. */
static const payload_t *
pick_payload(const char *stage)
{
	size_t i;

	for (i = 0; i < nfpay; i++)
		if (strcmp(fpay[i].stage, stage) == 0)
			return &fpay[i].p;
	for (i = 0; i < nfpay; i++)
		if (strcmp(fpay[i].stage, "all") == 0)
			return &fpay[i].p;
	return nfpay == 1 ? &fpay[0].p : NULL;
}

static void
emit_row(const char *stage, const orow_t *r)
{
	rec_begin("overlap_row");
	rec_cstr("stage", stage);
	rec_cstr("priority", r->priority);
	rec_cstr("verdict", r->verdict);
	rec_str("kernel", S(r->kernel), SLEN(r->kernel));
	if (r->scope != NOSTR)
		rec_str("python_scope", S(r->scope), SLEN(r->scope));
	else
		rec_cstr("python_scope", "unmapped");
	rec_num("total_us", r->total_us);
	rec_num("share_pct", r->share_pct);
	rec_num("exclusive_ratio", r->exclusive_ratio);
	rec_num("hidden_ratio", r->hidden_ratio);
	rec_cstr("dep_risk", r->risk);
	rec_cstr("dependency_signal", r->signal);
	rec_cstr("recommendation", r->recommendation);
	rec_end();
}

/*
 * The mapping side of each stage's source map (§6.3-6.6) depends on the
 * mapping trace alone, so it is built as soon as the mapping is read: while
 * the formal records are still being made upstream, and so that the mapping
 * trace's CPU data can be freed before the formal side is read.
 */
static srcmap_t premap[NSTAGES];
static int have_premap[NSTAGES];

static void
build_mapping_maps(const side_t *mapping)
{
	int st;

	for (st = 0; st < NSTAGES; st++) {
		const bundle_t *mb = pick_bundle(mapping, st);
		if (!mb)
			continue;
		srcmap_build(&premap[st], mb->ev, mb->n, &mb->tr->raw, &kmap, stage_names[st]);
		have_premap[st] = 1;
	}
	srcmap_cache_free();
}

/* The per-stage loop of §1 step 5. */
static void
emit_tables(side_t *formal)
{
	int st, others = formal->b[0].tr || formal->b[1].tr;

	for (st = 0; st < NSTAGES; st++) {
		bundle_t *fb = &formal->b[st];
		srcmap_t *sm = &premap[st];
		agg_t *agg;
		orow_t *rows;
		size_t nagg, nrows, i;
		double busy;

		if (!fb->tr || (st == 2 && others))
			continue;
		if (!have_premap[st])
			continue;
		busy = ov_sweep(fb->ev, fb->n);
		agg = ov_aggregate(fb->ev, fb->n, &nagg);
		srcmap_merge_payload(sm, pick_payload(stage_names[st]));
		rows = ov_rows(fb->ev, fb->n, busy, agg, nagg, sm, table_limit, &nrows);
		for (i = 0; i < nrows; i++)
			emit_row(stage_names[st], &rows[i]);
		free(rows);
		free(agg);
	}
}

static void
side_free(side_t *sd)
{
	size_t i;
	int st;

	for (st = 0; st < NSTAGES; st++) {
		free(sd->b[st].ev);
		if (sd->b[st].tr) {
			sd->b[st].tr->refs--;
			trace_release(sd->b[st].tr);
		}
	}
	for (i = 0; i < sd->ntr; i++)
		if (sd->tr[i]) {
			sd->tr[i]->open = 0;
			trace_release(sd->tr[i]);
		}
	free(sd->tr);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "mapping", required_argument, NULL, 'm' },
		{ "overlap-table-limit", required_argument, NULL, 'l' },
		{ "pid-substring", required_argument, NULL, 'p' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const char *mapfile = NULL, *errstr;
	side_t formal = { 0 }, mapping = { .keep_raw = 1 };
	int c, i;
	size_t k;

	tool_init(argc, argv);
	while ((c = getopt_long(argc, argv, "hq", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			printf("usage: overlap-sweep [-q] [--mapping file] [--overlap-table-limit n]\n"
			    "                     [--pid-substring text] [file ...]\n");
			return tool_finish(EXIT_OK);
		case 'l':
			if (!parse_num(optarg, -(1LL << 62), 1LL << 62, &table_limit, &errstr)) {
				fprintf(stderr, "%s: bad --overlap-table-limit value, %s: %s\n",
				    progname, errstr, optarg);
				usage();
			}
			break;
		case 'm':
			mapfile = optarg;
			break;
		case 'p':
			pid_substring = optarg;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'V':
			print_version();
		default:
			usage();
		}
	}
	argc -= optind;
	argv += optind;
	/* max(0, --overlap-table-limit): a negative limit means unlimited */
	if (table_limit < 0)
		table_limit = 0;

	ov_str = strtab_new();
	if (mapfile) {
		FILE *fp = rec_open(mapfile);
		read_stream(&mapping, fp, mapfile, 0, 1, 1);
		if (fp != stdin)
			fclose(fp);
		build_mapping_maps(&mapping);
		side_free(&mapping);
	}
	if (argc == 0) {
		read_stream(&formal, stdin, "<stdin>", 1, mapfile != NULL, 0);
	} else {
		for (i = 0; i < argc; i++) {
			FILE *fp = rec_open(argv[i]);
			read_stream(&formal, fp, strcmp(argv[i], "-") ? argv[i] : "<stdin>", 1,
			    mapfile != NULL, 0);
			if (fp != stdin)
				fclose(fp);
		}
	}
	/* single-trace mode never has overlap rows (§1 step 1) */
	if (mapfile)
		emit_tables(&formal);

	side_free(&formal);
	for (k = 0; k < NSTAGES; k++)
		srcmap_free(&premap[k]);
	for (k = 0; k < nfpay; k++) {
		free(fpay[k].stage);
		payload_free(&fpay[k].p);
	}
	free(fpay);
	kernel_map_free(&kmap);
	scope_cache_free();
	strtab_free(ov_str);
	return tool_finish(EXIT_OK);
}
