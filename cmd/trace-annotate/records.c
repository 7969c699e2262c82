/*
 * Reading the record stream: the traces, the rows and finding records the
 * annotation needs (all bounded in number by the filters that write
 * them), and every analyzed GPU work item, spooled to a temporary file so
 * that memory does not grow with the kernels.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "json.h"
#include "num.h"
#include "rec.h"
#include "rules.h"
#include "ta.h"
#include "text.h"
#include "xalloc.h"

struct ta ta;

/* Trace indexes past this are refused: no stream holds a million traces. */
#define MAX_TRACE_INDEX 1000000

static uint32_t
in(struct rstr s)
{
	return strtab_intern(ta.str, s.s ? s.s : "", s.n);
}

static uint32_t
in_c(const char *s)
{
	return strtab_intern(ta.str, s, strlen(s));
}

const char *
ta_s(uint32_t id)
{
	return id == NOSTR ? "" : strtab_str(ta.str, id);
}

struct ta_trace *
ta_trace_of(long long t)
{
	size_t i;

	for (i = 0; i < ta.ntr; i++)
		if (ta.tr[i].t == t)
			return &ta.tr[i];
	return NULL;
}

/* The trace of index t, made when first named (a kernel may come before its trace record). */
static struct ta_trace *
trace_at(const rec_reader *r, long long t)
{
	struct ta_trace *x = ta_trace_of(t);

	if (x)
		return x;
	if (t < 0 || t > MAX_TRACE_INDEX)
		rec_die(r, "trace index %lld out of range", t);
	xgrow(&ta.tr, &ta.captr, ta.ntr + 1, sizeof *ta.tr);
	x = &ta.tr[ta.ntr++];
	memset(x, 0, sizeof *x);
	x->t = t;
	x->path = x->role = x->stage = NOSTR;
	return x;
}

/* Canonical name of a raw kernel name, computed once per distinct name (kernel-map's row key). */
static uint32_t
canon_of(struct rstr name)
{
	static uint32_t *cc;	/* raw id -> canonical id + 1 */
	static size_t cap;
	static sbuf b;
	uint32_t raw = in(name);

	if (raw >= cap) {
		size_t old = cap;
		xgrow(&cc, &cap, (size_t)raw + 1, sizeof *cc);
		memset(cc + old, 0, (cap - old) * sizeof *cc);
	}
	if (!cc[raw]) {
		canonicalize_name(name.s ? name.s : "", name.n, &b);
		cc[raw] = strtab_intern(ta.str, sb_str(&b), b.len) + 1;
	}
	return cc[raw] - 1;
}

/* A numeric pid (the text of a JSON number) raises ta.max_pid. */
static void
note_pid(struct rstr pid)
{
	long long v;
	const char *err;
	char buf[32];

	if (pid.n == 0 || pid.n >= sizeof buf)
		return;
	memcpy(buf, pid.s, pid.n);
	buf[pid.n] = '\0';
	if (parse_num(buf, 0, 1LL << 62, &v, &err) && v > ta.max_pid)
		ta.max_pid = v;
}

static void
read_kernel(rec_reader *r)
{
	struct rec_kernel k;
	struct ta_kinst x;
	struct ta_trace *tr;
	int kernel, mem;

	REC_READ(r, kernel, &k);
	note_pid(k.pid);
	kernel = rstr_eq(k.cat, "kernel") || rstr_eq(k.cat, "Kernel");
	mem = rstr_eq(k.cat, "gpu_memcpy") || rstr_eq(k.cat, "gpu_memset") ||
	    rstr_eq(k.cat, "Memcpy") || rstr_eq(k.cat, "Memset");
	if (!k.sel || !(kernel || mem) || !(k.dur >= 0) || k.ts != k.ts)
		return;
	tr = trace_at(r, k.t);
	memset(&x, 0, sizeof x);
	x.t = k.t;
	x.stage = REC_HAS(&k, kernel, stage) ? in(k.stage) :
	    tr->stage != NOSTR ? tr->stage : in_c("all");
	x.canon = canon_of(k.name);
	x.is_kernel = (unsigned char)kernel;
	x.has_corr = REC_HAS(&k, kernel, correlation);
	x.corr = k.correlation;
	x.ts = k.ts;
	x.dur = k.dur;
	if (fwrite(&x, sizeof x, 1, ta.spool) != 1)
		die(EXIT_DATA, "cannot write the temporary file of kernels: disk full?");
	ta.nspool++;
}

static void
read_trace(rec_reader *r)
{
	struct rec_trace x;
	struct ta_trace *tr;

	REC_READ(r, trace, &x);
	tr = trace_at(r, x.t);
	tr->path = in(x.path);
	tr->role = in(x.role);
	tr->stage = REC_HAS(&x, trace, stage) ? in(x.stage) : NOSTR;
	tr->has_rank = REC_HAS(&x, trace, rank);
	tr->rank = x.rank;
	tr->base = x.time_base_us;
	tr->gzip = x.gzip;
}

/* The kernel rows kept so far per (trace, stage): a handful of stages, searched linearly. */
static struct {
	long long t;
	uint32_t stage;
	long long n;
} *kseen;
static size_t nkseen, capkseen;

static void
read_kernel_row(rec_reader *r)
{
	struct rec_kernel_row k;
	struct ta_krow *x;
	uint32_t stage;
	size_t i;

	REC_READ(r, kernel_row, &k);
	if (!k.shown || !REC_HAS(&k, kernel_row, id))
		return;
	stage = in(k.stage);
	for (i = 0; i < nkseen && !(kseen[i].t == k.t && kseen[i].stage == stage); i++)
		;
	if (i == nkseen) {
		xgrow(&kseen, &capkseen, nkseen + 1, sizeof *kseen);
		kseen[nkseen].t = k.t;
		kseen[nkseen].stage = stage;
		kseen[nkseen++].n = 0;
	}
	if (ta.top > 0 && kseen[i].n >= ta.top)
		return;
	kseen[i].n++;
	xgrow(&ta.krow, &ta.capkrow, ta.nkrow + 1, sizeof *ta.krow);
	x = &ta.krow[ta.nkrow++];
	x->t = k.t;
	x->stage = stage;
	x->kernel = in(k.kernel);
	x->category = in(k.category);
	x->location = in(k.location);
	x->cpu_op = in(k.cpu_op);
	x->id = in(k.id);
	x->total_us = k.total_us;
	x->share_pct = k.share_pct;
	x->launches = k.launches;
}

static void
read_step(rec_reader *r)
{
	struct rec_step s;
	struct ta_step *x;

	REC_READ(r, step, &s);
	xgrow(&ta.step, &ta.capstep, ta.nstep + 1, sizeof *ta.step);
	x = &ta.step[ta.nstep++];
	memset(x, 0, sizeof *x);
	x->t = s.t;
	x->index = s.index;
	x->stage = in(s.stage);
	x->name = in(s.name);
	x->id = REC_HAS(&s, step, id) ? in(s.id) : NOSTR;
	x->ts = s.ts;
	x->cpu_us = s.cpu_us;
	x->has_period = REC_HAS(&s, step, period_us);
	x->period_us = s.period_us;
	x->has_gpu = REC_HAS(&s, step, gpu_busy_us) && REC_HAS(&s, step, gpu_span_us);
	x->busy_us = s.gpu_busy_us;
	x->span_us = s.gpu_span_us;
	x->kernels = s.kernels;
	x->has_gpu_ts = REC_HAS(&s, step, gpu_ts);
	x->gpu_ts = s.gpu_ts;
	x->has_batch = REC_HAS(&s, step, batch);
	x->batch = s.batch;
	x->has_tokens = REC_HAS(&s, step, tokens);
	x->tokens = s.tokens;
}

static void
read_gpu_time(rec_reader *r)
{
	struct rec_gpu_time g;
	struct ta_gpu *x;

	REC_READ(r, gpu_time, &g);
	xgrow(&ta.gpu, &ta.capgpu, ta.ngpu + 1, sizeof *ta.gpu);
	x = &ta.gpu[ta.ngpu++];
	x->t = g.t;
	x->stage = in(g.stage);
	x->id = REC_HAS(&g, gpu_time, id) ? in(g.id) : NOSTR;
	x->busy_us = g.busy_us;
	x->idle_us = g.idle_us;
	x->has_launch = REC_HAS(&g, gpu_time, idle_launch_us);
	x->idle_launch_us = g.idle_launch_us;
}

static void
read_idle_gap(rec_reader *r)
{
	struct rec_idle_gap g;
	struct ta_gap *x;

	REC_READ(r, idle_gap, &g);
	xgrow(&ta.gap, &ta.capgap, ta.ngap + 1, sizeof *ta.gap);
	x = &ta.gap[ta.ngap++];
	memset(x, 0, sizeof *x);
	x->t = g.t;
	x->stage = in(g.stage);
	x->kernel = REC_HAS(&g, idle_gap, kernel) ? in(g.kernel) : NOSTR;
	x->launch = REC_HAS(&g, idle_gap, launch) ? in(g.launch) : NOSTR;
	x->id = REC_HAS(&g, idle_gap, id) ? in(g.id) : NOSTR;
	x->ts = g.ts;
	x->dur = g.dur;
	x->has_host = REC_HAS(&g, idle_gap, host_us);
	x->host_us = g.host_us;
	x->has_sync = REC_HAS(&g, idle_gap, sync_us);
	x->sync_us = g.sync_us;
	x->has_launch = REC_HAS(&g, idle_gap, launch_ts);
	x->launch_ts = g.launch_ts;
	x->launch_dur = g.launch_dur;
}

static void
read_launch(rec_reader *r)
{
	struct rec_launch l;

	REC_READ(r, launch, &l);
	note_pid(l.pid);
	if (graph_launch_name(l.name.s ? l.name.s : "", l.name.n))
		imap_put(&trace_at(r, l.t)->graph_corr, (uint64_t)l.correlation, NULL);
}

static void
read_escape(rec_reader *r)
{
	struct rec_graph_escape e;
	struct ta_escape *x;

	REC_READ(r, graph_escape, &e);
	xgrow(&ta.esc, &ta.capesc, ta.nesc + 1, sizeof *ta.esc);
	x = &ta.esc[ta.nesc++];
	x->t = e.t;
	x->stage = in(e.stage);
	x->kernel = in(e.kernel);
	x->location = REC_HAS(&e, graph_escape, location) ? in(e.location) : NOSTR;
	x->id = REC_HAS(&e, graph_escape, id) ? in(e.id) : NOSTR;
	x->launches = e.launches;
	x->total_us = e.total_us;
	x->share_pct = e.share_pct;
}

static void
read_overlap_row(rec_reader *r)
{
	struct rec_overlap_row o;
	struct ta_orow *x;

	REC_READ(r, overlap_row, &o);
	if (!REC_HAS(&o, overlap_row, id))
		return;
	xgrow(&ta.orow, &ta.caporow, ta.norow + 1, sizeof *ta.orow);
	x = &ta.orow[ta.norow++];
	x->stage = in(o.stage);
	x->kernel = in(o.kernel);
	x->priority = in(o.priority);
	x->verdict = in(o.verdict);
	x->scope = in(o.python_scope);
	x->recommendation = in(o.recommendation);
	x->id = in(o.id);
	x->total_us = o.total_us;
	x->share_pct = o.share_pct;
	x->exclusive_ratio = o.exclusive_ratio;
	x->hidden_ratio = o.hidden_ratio;
}

/* The elements of a JSON array member, or dies naming the record. */
static int
array_of(rec_reader *r, json_doc *d, struct rstr text, const char *type, const char *member)
{
	rec_parse_json(r, d, text);
	if (d->ntok < 1 || d->tok[0].type != JSMN_ARRAY)
		rec_die(r, "%s record: member '%s' is not an array", type, member);
	return d->tok[0].size;
}

static void
read_exposed(rec_reader *r)
{
	struct rec_overlap_exposed e;
	struct ta_exposed *x;
	json_doc d = { 0 };
	int n, i, k;

	REC_READ(r, overlap_exposed, &e);
	n = array_of(r, &d, e.spans, "overlap_exposed", "spans");
	xgrow(&ta.exp, &ta.capexp, ta.nexp + 1, sizeof *ta.exp);
	x = &ta.exp[ta.nexp++];
	x->t = e.t;
	x->stage = in(e.stage);
	x->row = in(e.row);
	x->exposed_us = e.exposed_us;
	x->intervals = e.intervals;
	x->span = xmallocarray(n ? (size_t)n : 1, 2 * sizeof *x->span);
	x->nspan = 0;
	for (i = 0, k = 1; i < n; i++, k = json_skip(&d, k)) {
		double ts, dur;
		if (d.tok[k].type != JSMN_ARRAY || d.tok[k].size != 2 ||
		    !json_todouble(&d, k + 1, &ts) || !json_todouble(&d, k + 2, &dur))
			rec_die(r, "overlap_exposed record: member 'spans' holds an element "
			    "other than [ts, dur]");
		x->span[2 * x->nspan] = ts;
		x->span[2 * x->nspan++ + 1] = dur;
	}
	json_doc_free(&d);
}

static void
read_fuse_row(rec_reader *r)
{
	struct rec_fuse_row f;
	struct ta_frow *x;
	json_doc d = { 0 };
	sbuf s = SBUF_INIT;
	int n, i, k;

	REC_READ(r, fuse_row, &f);
	if (rstr_eq(f.status, "in use") || !REC_HAS(&f, fuse_row, evidence_kernels) ||
	    !REC_HAS(&f, fuse_row, id))
		return;
	n = array_of(r, &d, f.evidence_kernels, "fuse_row", "evidence_kernels");
	xgrow(&ta.frow, &ta.capfrow, ta.nfrow + 1, sizeof *ta.frow);
	x = &ta.frow[ta.nfrow++];
	x->t = f.t;
	x->stage = in(f.stage);
	x->pattern = in(f.pattern);
	x->confidence = in(f.confidence);
	x->candidate = in(f.candidate_path);
	x->id = in(f.id);
	x->related_us = f.related_us;
	x->share_pct = f.share_pct;
	x->kernel = xmallocarray(n ? (size_t)n : 1, sizeof *x->kernel);
	x->nkernel = 0;
	for (i = 0, k = 1; i < n; i++, k = json_skip(&d, k)) {
		if (d.tok[k].type != JSMN_STRING)
			rec_die(r, "fuse_row record: member 'evidence_kernels' holds a non-string");
		json_str(&d, k, &s, NULL);
		x->kernel[x->nkernel++] = strtab_intern(ta.str, sb_str(&s), s.len);
	}
	sb_free(&s);
	json_doc_free(&d);
}

static void
read_rank_row(rec_reader *r)
{
	struct rec_rank_row w;
	struct ta_rankrow *x;

	REC_READ(r, rank_row, &w);
	xgrow(&ta.rrow, &ta.caprrow, ta.nrrow + 1, sizeof *ta.rrow);
	x = &ta.rrow[ta.nrrow++];
	x->stage = in(w.stage);
	x->id = REC_HAS(&w, rank_row, id) ? in(w.id) : NOSTR;
	x->rank = w.rank;
	x->has_base = REC_HAS(&w, rank_row, time_base_us);
	x->base = w.time_base_us;
	x->offset_us = w.offset_us;
	x->straggler = w.straggler;
}

static void
read_collective_row(rec_reader *r)
{
	struct rec_collective_row c;
	struct ta_coll *x;
	json_doc d = { 0 };
	int n, i, k;

	REC_READ(r, collective_row, &c);
	if (!REC_HAS(&c, collective_row, id))
		return;
	n = array_of(r, &d, c.ranks, "collective_row", "ranks");
	xgrow(&ta.coll, &ta.capcoll, ta.ncoll + 1, sizeof *ta.coll);
	x = &ta.coll[ta.ncoll++];
	x->stage = in(c.stage);
	x->kind = in(c.kind);
	x->name = in(c.name);
	x->id = in(c.id);
	x->ordinal = c.ordinal;
	x->has_last = REC_HAS(&c, collective_row, last_rank);
	x->last_rank = c.last_rank;
	x->skew_us = c.skew_us;
	x->wait_us = c.wait_us;
	x->r = xmallocarray(n ? (size_t)n : 1, sizeof *x->r);
	x->nr = 0;
	for (i = 0, k = 1; i < n; i++, k = json_skip(&d, k)) {
		struct ta_rankts *e = &x->r[x->nr];
		int a = json_get(&d, k, "rank"), b = json_get(&d, k, "ts"), e2 = json_get(&d, k, "dur");
		if (d.tok[k].type != JSMN_OBJECT || !json_coerce_int(&d, a, &e->rank) ||
		    !json_todouble(&d, b, &e->ts) || !json_todouble(&d, e2, &e->dur))
			rec_die(r, "collective_row record: member 'ranks' holds an element "
			    "other than {rank, ts, dur}");
		x->nr++;
	}
	json_doc_free(&d);
}

/*
 * kernel_eff (kernel-roofline, issue 28) is read by name, members by their
 * names: stage, kernel, flops, bytes and, when present, t.  A stream
 * without the type has no achieved-rate counters.
 */
static void
read_kernel_eff(rec_reader *r)
{
	json_doc *d = &r->doc;
	struct ta_eff *x;
	sbuf s = SBUF_INIT;
	int st, k, t, fl, by;

	rec_parse(r);
	st = json_get(d, 0, "stage");
	k = json_get(d, 0, "kernel");
	if (json_kind(d, st) != JK_STR || json_kind(d, k) != JK_STR)
		rec_die(r, "kernel_eff record: members 'stage' and 'kernel' must be strings");
	xgrow(&ta.eff, &ta.capeff, ta.neff + 1, sizeof *ta.eff);
	x = &ta.eff[ta.neff++];
	memset(x, 0, sizeof *x);
	json_str(d, st, &s, NULL);
	x->stage = strtab_intern(ta.str, sb_str(&s), s.len);
	json_str(d, k, &s, NULL);
	{
		struct rstr name = { sb_str(&s), s.len };
		x->kernel = canon_of(name);
	}
	t = json_get(d, 0, "t");
	x->has_t = json_coerce_int(d, t, &x->t);
	fl = json_get(d, 0, "flops");
	by = json_get(d, 0, "bytes");
	x->has_flops = json_todouble(d, fl, &x->flops) && x->flops >= 0;
	x->has_bytes = json_todouble(d, by, &x->bytes) && x->bytes >= 0;
	sb_free(&s);
}

FILE *
ta_tmpfile(const char *what)
{
	const char *dir = getenv("TMPDIR");
	sbuf path = SBUF_INIT;
	FILE *fp = NULL;
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	sb_printf(&path, "%s/trace-annotate.XXXXXX", dir);
	if ((fd = mkstemp(path.s)) >= 0) {
		unlink(path.s);
		if (!(fp = fdopen(fd, "w+b")))
			close(fd);
	}
	if (!fp)
		die(EXIT_DATA, "cannot make a temporary file for %s in '%s': %s", what, dir,
		    strerror(errno));
	sb_free(&path);
	return fp;
}

void
ta_read(FILE *fp, const char *name)
{
	rec_reader rd;

	if (!ta.str)
		ta.str = strtab_new();
	ta.max_pid = -1;
	ta.spool = ta_tmpfile("the kernels");
	rec_reader_init(&rd, fp, name);
	while (rec_next(&rd)) {
		switch (rec_type_of(&rd)) {
		case RT_trace: read_trace(&rd); break;
		case RT_stats: {
			struct rec_stats s;
			struct ta_trace *tr;
			REC_READ(&rd, stats, &s);
			tr = trace_at(&rd, s.t);
			tr->has_stats = 1;
			tr->events = s.events;
			break;
		}
		case RT_kernel: read_kernel(&rd); break;
		case RT_kernel_stages: {
			/* the kernels read so far had no stage: their findings would be lost */
			struct rec_kernel_stages ks;
			REC_READ(&rd, kernel_stages, &ks);
			rec_die(&rd, "kernel_stages record: these kernels came without their stages "
			    "(trace-stage --late-stages); trace-annotate reads kernels staged in their "
			    "own records: run trace-stage without --late-stages");
		}
		case RT_launch: read_launch(&rd); break;
		case RT_annotation: {
			struct rec_annotation a;
			REC_READ(&rd, annotation, &a);
			note_pid(a.pid);
			break;
		}
		case RT_step: read_step(&rd); break;
		case RT_gpu_time: read_gpu_time(&rd); break;
		case RT_idle_gap: read_idle_gap(&rd); break;
		case RT_kernel_row: read_kernel_row(&rd); break;
		case RT_graph_escape: read_escape(&rd); break;
		case RT_overlap_row: read_overlap_row(&rd); break;
		case RT_overlap_exposed: read_exposed(&rd); break;
		case RT_fuse_row: read_fuse_row(&rd); break;
		case RT_rank_row: read_rank_row(&rd); break;
		case RT_collective_row: read_collective_row(&rd); break;
		default:
			if (rec_is(&rd, "kernel_eff"))
				read_kernel_eff(&rd);
			break;
		}
	}
	rec_reader_free(&rd);
	rec_require_records();
	if (fflush(ta.spool) != 0 || ferror(ta.spool))
		die(EXIT_DATA, "cannot write the temporary file of kernels: %s", strerror(errno));
	free(kseen);
	kseen = NULL;
	nkseen = capkseen = 0;
}
