/*
 * step-stats: GPU busy and idle time, host-bound gaps, CUDA-graph coverage,
 * per-step latency, and the breakdowns of issue 32 (collectives under
 * compute, launch delays, streams, GPU annotations) of each trace and stage
 * of a staged record stream (trace-extract | trace-stage, optionally |
 * kernel-map).
 *
 * Kernels, launches, step markers and GPU annotations are held per trace
 * until its "stats" record (the kernels and launches in the reader's
 * queues, issue 30); then the trace's items are sorted on disk in the
 * orders the figures need (ss.h), and its gpu_time records with their
 * stages' breakdowns, and its step records, are written before the stats
 * line.  Every input record passes through.  graph_escape rows
 * wait for the end of the stream, where kernel-map's kernel_row records
 * (if any) have been seen and can name each kernel's Python location.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "imap.h"
#include "num.h"
#include "opt.h"
#include "rec.h"
#include "rules.h"
#include "sbuf.h"
#include "ss.h"
#include "text.h"
#include "trace.h"
#include "xalloc.h"

static const struct opt opts[] = { { NULL, 0, NULL, NULL } };

static const struct tool tool = {
	"[-q] [file]",
	"Add GPU busy/idle time, host-bound gaps, idle time with the host blocked in\n"
	"a synchronizing call, CUDA-graph coverage and step periods (of complete\n"
	"steps, the last apart) to a staged record stream (trace-extract |\n"
	"trace-stage): one \"gpu_time\" record per trace and stage (with the\n"
	"collectives' total and their share under compute), its \"launch_delay\"\n"
	"(what the launch delays say), \"kernel_delay\" per kernel name,\n"
	"\"stream_time\" per stream, \"annotation_time\" per GPU annotation and\n"
	"\"idle_gap\" records for its longest idle gaps; one \"step\" record per step\n"
	"marker, and \"graph_escape\" rows for eager kernels of graph-mode stages.\n"
	"Every input record passes through.",
	opts
};

/* The run: per-trace state reset in on_trace, and totals for the end. */
static struct {
	long long items;	/* GPU work items over all traces */
	long long work;		/* work kernels of this trace, selected or not */
	int staged;		/* this trace has trace-stage's gpu_pids record */
	int clock_offset;	/* and its clocks disagree (gpu_pids.clock_offset_us) */
	double offset_us;	/* by this much */
	uint32_t gpu_pid;	/* gpu_pids.selected (string id), NOSTR before it */
	uint32_t *canon;	/* raw name id -> canonical name id + 1, 0 unknown */
	size_t ncanon;
	long long unstaged, bad_times;
	unsigned char *bucket;	/* raw name id -> bucket + 1, 0 unknown */
	size_t nbucket;
	long long ngpu, nstep, ngap;	/* records written: the next one's id (issue 29) */
} run;

static void on_trace(void *ctx, struct trace_reader *r, struct trace *tr);

/* The kernel categories that are GPU work (never cuda_sync or runtime events). */
static int
work_cat(struct rstr c, int *kernel, int *mem)
{
	*kernel = rstr_eq(c, "kernel") || rstr_eq(c, "Kernel");
	*mem = rstr_eq(c, "gpu_memcpy") || rstr_eq(c, "gpu_memset") || rstr_eq(c, "Memcpy") ||
	    rstr_eq(c, "Memset");
	return *kernel || *mem;
}

/* Hold only what the figures need: work items of the analyzed process, CPU step markers. */
static int
keep(void *ctx, struct trace_reader *r, enum rec_type t, const void *rec)
{
	int kernel, mem;

	(void)ctx;
	(void)r;
	if (t == RT_kernel) {
		const struct rec_kernel *k = rec;
		if (!work_cat(k->cat, &kernel, &mem))
			return 0;
		run.work++;
		return 1;	/* the reader keeps those of the analyzed process (sel_only) */
	}
	if (t == RT_annotation) {
		const struct rec_annotation *a = rec;
		struct marker m;
		/* GPU ranges for annotation_time; the analyzed process is known at the trace's end */
		if (rstr_eq(a->cat, "gpu_user_annotation"))
			return 1;
		marker_parse(a->name.s, a->name.n, &m);
		return m.family != SF_NONE;
	}
	return 1;
}

static void
on_line(void *ctx, struct trace_reader *r, enum rec_type t)
{
	struct rec_kernel_row k;

	(void)ctx;
	if (t == RT_gpu_pids) {
		struct rec_gpu_pids g;
		REC_READ(&r->rd, gpu_pids, &g);
		run.staged = 1;
		run.clock_offset = REC_HAS(&g, gpu_pids, clock_offset_us);
		run.offset_us = g.clock_offset_us;
		run.gpu_pid = trace_intern(r, g.selected);
	}
	if (t != RT_kernel_row)
		return;
	REC_READ(&r->rd, kernel_row, &k);
	escape_note_row(k.t, k.stage, k.kernel, k.location);
}

int
main(int argc, char **argv)
{
	struct trace_reader rd;
	struct trace_ops ops = { 0 };
	strtab *str = strtab_new();
	const char *in = "-";
	FILE *fp;

	tool_init(argc, argv);
	run.gpu_pid = NOSTR;
	while (opt_next(&tool, argc, argv) != -1)
		opt_usage(&tool, EXIT_USAGE);
	if (argc - optind > 1) {
		err_msg("one record file at most (got %d)", argc - optind);
		opt_usage(&tool, EXIT_USAGE);
	}
	if (optind < argc)
		in = argv[optind];
	ops.collect = TR_MASK(kernel) | TR_MASK(launch) | TR_MASK(sync) | TR_MASK(annotation);
	ops.pass = 1;
	ops.keep = keep;
	ops.sel_only = 1;
	ops.queue = 1;	/* kernels, launches and syncs in bounded memory (issue 30) */
	ops.on_trace = on_trace;
	ops.on_line = on_line;
	trace_reader_init(&rd, str, &ops);
	fp = rec_open(in);
	trace_read(&rd, fp, strcmp(in, "-") ? in : "<stdin>");
	if (fp != stdin)
		fclose(fp);
	escape_flush();
	if (run.unstaged)
		warn_msg("%lld trace%s with GPU kernels but no trace-stage records (no 'sel', "
		    "no gpu_pids): nothing counted; run trace-stage first", run.unstaged,
		    run.unstaged == 1 ? "" : "s");
	if (run.bad_times)
		warn_msg("%lld GPU work items with a corrupt ts or dur (not finite, ts beyond "
		    "1e17 us, dur beyond a year) were not counted",
		    run.bad_times);
	rec_require_records();
	if (rd.ntraces == 0)
		warn_msg("no traces in the input");
	else if (run.items == 0 && run.unstaged < rd.ntraces)
		warn_msg("no GPU work items on the analyzed process in %lld trace%s", rd.ntraces,
		    rd.ntraces == 1 ? "" : "s");
	trace_reader_free(&rd);
	strtab_free(str);
	free(run.bucket);
	free(run.canon);
	return tool_finish(EXIT_OK);
}

/* ---- one trace ---- */

/* The bucket of a work item, classified once per distinct name. */
static unsigned char
bucket_of(const strtab *str, uint32_t name, int mem)
{
	const char *c;
	size_t cap = run.nbucket;

	if (mem)
		return B_MEM;
	if (name >= run.nbucket) {
		xgrow(&run.bucket, &cap, (size_t)name + 1, 1);
		memset(run.bucket + run.nbucket, 0, cap - run.nbucket);
		run.nbucket = cap;
	}
	if (!run.bucket[name]) {
		c = classify_kernel(strtab_str(str, name), strtab_len(str, name));
		run.bucket[name] = 1 + (!strcmp(c, "communication") ? B_COMM :
		    category_moves_memory(c) ? B_MEM : B_COMPUTE);
	}
	return run.bucket[name] - 1;
}

/* The canonical name (the kernel table's key) of a raw name, made once per name. */
static uint32_t
canon_of(strtab *str, uint32_t name, sbuf *b)
{
	size_t cap = run.ncanon;

	if (name >= run.ncanon) {
		xgrow(&run.canon, &cap, (size_t)name + 1, sizeof *run.canon);
		memset(run.canon + run.ncanon, 0, (cap - run.ncanon) * sizeof *run.canon);
		run.ncanon = cap;
	}
	if (!run.canon[name]) {
		canonicalize_name(strtab_str(str, name), strtab_len(str, name), b);
		run.canon[name] = 1 + strtab_intern(str, sb_str(b), b->len);
	}
	return run.canon[name] - 1;
}

/* A kernel's item waiting for its launch: its correlation first, for the join. */
struct kwait {
	long long corr;
	struct item it;
};

/* A launch record as the join reads it: its correlation first. */
struct lrec {
	long long corr;
	unsigned long long l;	/* its index among the trace's launches */
	double ts, dur;
	uint32_t name, pid;
	unsigned char kind;
};

/*
 * Waiting items by correlation, then start and input order: after the join
 * each launch's items come together, its first item first.
 */
static int
by_corr_start(const void *pa, const void *pb, void *ctx)
{
	const struct kwait *a = pa, *b = pb;

	(void)ctx;
	if (a->corr != b->corr)
		return a->corr < b->corr ? -1 : 1;
	if (a->it.ts != b->it.ts)
		return a->it.ts < b->it.ts ? -1 : 1;
	return a->it.ord < b->it.ord ? -1 : a->it.ord > b->it.ord;
}

/* Where make_items puts each item: the sorts the analyses read, and the stages met. */
struct sink {
	struct xsort *by_step, *by_stage, *by_start, *by_stream;
	const struct step *st;
	size_t nst;
	const double *maxend;
	uint32_t *stages;
	size_t nstages, capstages;
	long long n;
};

static void
sink_add(struct sink *k, struct item *x)
{
	size_t i;

	struct gitem g;
	struct sitem s;
	struct aitem a;

	x->step = step_of(k->st, k->nst, k->maxend, x);
	memset(&g, 0, sizeof g);
	g.ts = x->ts;
	g.end = x->end;
	g.ord = x->ord;
	g.lts = x->lts;
	g.ldur = x->ldur;
	g.launch = x->launch;
	g.name = x->name;
	g.lname = x->lname;
	g.first = x->first;
	memset(&s, 0, sizeof s);
	s.step = x->step;
	s.ts = x->ts;
	s.end = x->end;
	s.dur = x->dur;
	s.ord = x->ord;
	s.stage = x->stage;
	s.bucket = x->bucket;
	memset(&a, 0, sizeof a);
	a.stage = x->stage;
	a.stream = x->stream;
	a.ts = x->ts;
	a.end = x->end;
	a.ord = x->ord;
	if (x->step >= 0)	/* steps_finish reads only the items of a step */
		xsort_add(k->by_step, &s);
	xsort_add(k->by_stage, x);
	xsort_add(k->by_start, &g);
	xsort_add(k->by_stream, &a);
	for (i = 0; i < k->nstages && k->stages[i] != x->stage; i++)
		;
	if (i == k->nstages) {
		xgrow(&k->stages, &k->capstages, k->nstages + 1, sizeof *k->stages);
		k->stages[k->nstages++] = x->stage;
	}
	k->n++;
}

/*
 * The trace's GPU work items, each to the sink: the kernels joined to
 * the first launch record of their correlation (by sorting both by
 * correlation, the kernels then by start), so that each launch's first
 * item carries its delay.
 */
static void
make_items(struct trace_reader *r, struct trace *tr, struct sink *snk)
{
	struct xsort *wait = xsort_new(sizeof(struct kwait), by_corr_start, NULL);
	struct xsort *ln = xsort_new(sizeof(struct lrec), xsort_by_ll, NULL);
	struct tkcursor cur;
	const struct tkernel *k;
	const struct tcall *c;
	const struct kwait *w;
	const struct lrec *p;
	struct lrec first = { 0, 0, 0, 0, 0, 0, 0 };
	sbuf canon = SBUF_INIT;
	unsigned long long m = 0, l = 0;
	int have = 0;
	long long cl = -1;
	double cfirst = 0;

	trace_kernel_rewind(tr, &cur);
	while ((k = trace_kernel_next(&cur)) != NULL) {
		const char *cat = strtab_str(r->str, k->cat);
		struct kwait x;
		if (ss_bad_time(k->ts + (double)tr->time_base, k->dur)) {
			run.bad_times++;
			continue;
		}
		memset(&x, 0, sizeof x);
		x.it.ts = k->ts;
		x.it.dur = k->dur > 0 ? k->dur : 0;
		x.it.end = x.it.ts + x.it.dur;
		x.it.stage = k->stage != NOSTR ? k->stage : tr->stage;
		x.it.name = k->name;
		x.it.stream = k->stream != NOSTR ? k->stream : trace_thread_tid(r, k->thread);
		x.it.canon = canon_of(r->str, k->name, &canon);
		x.it.kernel = !strcmp(cat, "kernel") || !strcmp(cat, "Kernel");
		x.it.bucket = bucket_of(r->str, k->name, !x.it.kernel);
		x.it.launch = -1;
		x.it.step = -1;
		x.it.ord = m++;
		if (k->has_corr) {
			x.corr = k->corr;
			xsort_add(wait, &x);
		} else
			sink_add(snk, &x.it);
	}
	sb_free(&canon);
	if (tr->lq) {
		xsort_rewind(tr->lq);
		while ((c = xsort_next(tr->lq)) != NULL) {
			struct lrec x = { c->corr, l++, c->ts, c->dur, c->name,
			    trace_thread_pid(r, c->thread), c->kind };
			xsort_add(ln, &x);
		}
	}
	/* a duplicated correlation keeps its first launch */
	p = xsort_next(ln);
	while ((w = xsort_next(wait)) != NULL) {
		struct item it = w->it;
		while (p && (!have || first.corr < w->corr)) {
			first = *p;
			have = 1;
			while ((p = xsort_next(ln)) != NULL && p->corr == first.corr)
				;
		}
		if (!have || first.corr != w->corr) {
			sink_add(snk, &it);
			continue;
		}
		it.launch = (long long)first.l;
		it.lts = first.ts;
		it.ldur = first.dur;
		it.lname = first.name;
		it.lpid = first.pid;
		it.lkind = first.kind;
		it.graph = graph_launch_name(strtab_str(r->str, first.name),
		    strtab_len(r->str, first.name));
		/*
		 * Each launch's items by start: those at its first start are
		 * first; one delay a launch, its first item's (of a tie, the first
		 * in input order)
		 */
		if (it.launch != cl) {
			cl = it.launch;
			cfirst = it.ts;
			it.has_delay = 1;
			it.delay = it.ts - (it.lts + (it.ldur > 0 ? it.ldur : 0));
		}
		it.first = it.ts == cfirst;
		sink_add(snk, &it);
	}
	xsort_free(wait);
	xsort_free(ln);
}

/*
 * A stage's step figures (issue 25): the periods of its complete steps
 * with GPU work, ascending, for the percentiles; its last step's period;
 * the tokens and the periods that moved them.
 */
struct stepfig {
	size_t nsteps, ncomplete;
	double *dur;		/* ncomplete periods, sorted */
	double *busy;		/* their GPU busy times, sorted (with launches) */
	int has_last;
	double last_us;
	double tok, tok_us;
	int tok_last;		/* the tokens are the last steps' (no complete step has a count) */
};

/*
 * host_bound: idle_launch_us and idle_sync_us are measured (launch
 * records, and clocks that agree: with an offset every gap looks queued,
 * issue 25).  sync_call: the blocking call of the largest sync part, or
 * NOSTR.
 */
static void
write_gpu_time(const struct trace_reader *r, const struct trace *tr, const char *stage,
    const struct figures *f, const struct stepfig *sf, int launches, int host_bound,
    uint32_t sync_call)
{
	rec_begin(RT_gpu_time);
	rec_int(RM_gpu_time_t, tr->t);
	rec_cstr(RM_gpu_time_stage, stage);
	rec_int(RM_gpu_time_kernels, f->kernels);
	if (f->copies)
		rec_int(RM_gpu_time_copies, f->copies);
	rec_num(RM_gpu_time_kernel_us, f->kernel_us);
	rec_num(RM_gpu_time_busy_us, f->busy_us);
	rec_num(RM_gpu_time_span_us, f->span_us);
	rec_num(RM_gpu_time_idle_us, f->idle_us);
	if (launches && host_bound) {
		rec_num(RM_gpu_time_idle_launch_us, f->idle_launch_us);
		rec_num(RM_gpu_time_idle_sync_us, f->idle_sync_us);
		if (sync_call != NOSTR && f->sync_max_us > 0) {
			rec_num(RM_gpu_time_sync_gap_us, f->sync_max_us);
			rec_num(RM_gpu_time_sync_gap_ts, f->sync_max_gap);
			rec_str(RM_gpu_time_sync_gap_call, strtab_str(r->str, sync_call),
			    strtab_len(r->str, sync_call));
		}
	}
	if (f->other_us > 0)
		rec_num(RM_gpu_time_other_stages_us, f->other_us);
	rec_num(RM_gpu_time_compute_us, f->bucket_us[B_COMPUTE]);
	rec_num(RM_gpu_time_comm_us, f->bucket_us[B_COMM]);
	rec_num(RM_gpu_time_memcpy_us, f->bucket_us[B_MEM]);
	rec_num(RM_gpu_time_comm_total_us, f->comm_total_us);
	if (f->comm_total_us > 0)
		rec_num(RM_gpu_time_comm_overlap_pct, pct(f->comm_overlap_us, f->comm_total_us));
	if (launches) {
		rec_num(RM_gpu_time_graph_us, f->graph_us);
		rec_num(RM_gpu_time_graph_pct, pct(f->graph_us, f->busy_us));
		if (f->graph_mode)
			rec_int(RM_gpu_time_eager_kernels, f->eager);
	}
	if (sf->nsteps) {
		rec_int(RM_gpu_time_steps, (long long)sf->nsteps);
		rec_int(RM_gpu_time_complete_steps, (long long)sf->ncomplete);
	}
	if (sf->ncomplete) {
		rec_num(RM_gpu_time_step_p50_us, percentile(sf->dur, sf->ncomplete, 50));
		rec_num(RM_gpu_time_step_p90_us, percentile(sf->dur, sf->ncomplete, 90));
		rec_num(RM_gpu_time_step_max_us, sf->dur[sf->ncomplete - 1]);
	}
	if (sf->has_last)
		rec_num(RM_gpu_time_step_last_us, sf->last_us);
	if (sf->ncomplete && launches) {
		/*
		 * The periods are of the host's step markers: when the steps' GPU
		 * work takes longer, the host ran ahead (issue 25 follow-up), the
		 * markdown's caveat, said for machines too.
		 */
		double p50 = percentile(sf->dur, sf->ncomplete, 50);
		double bp50 = percentile(sf->busy, sf->ncomplete, 50);
		rec_num(RM_gpu_time_step_busy_p50_us, bp50);
		if (p50 > 0 && bp50 > 1.05 * p50)
			rec_bool(RM_gpu_time_steps_host_ahead, 1);
	}
	if (sf->tok_us > 0) {
		rec_num(RM_gpu_time_tokens_per_s, sf->tok / (sf->tok_us / 1e6));
		if (sf->tok_last)
			rec_bool(RM_gpu_time_tokens_from_last, 1);
	}
	rec_id(RM_gpu_time_id, "gpu", ++run.ngpu);
	rec_end();
}

/*
 * The stage's chosen idle gaps (gaps_sweep): each with the item after it
 * and that item's launch call; host_us only when measured (as
 * idle_launch_us in write_gpu_time).
 */
static void
write_gaps(const struct trace_reader *r, const struct trace *tr, const char *stage,
    struct gapsel *sel, int host_bound)
{
	size_t ng, i;
	struct gap *g = gaps_chosen(sel, &ng);

	for (i = 0; i < ng; i++) {
		const struct gitem *x = &g[i].next;
		rec_begin(RT_idle_gap);
		rec_int(RM_idle_gap_t, tr->t);
		rec_cstr(RM_idle_gap_stage, stage);
		rec_num(RM_idle_gap_ts, g[i].ts);
		rec_num(RM_idle_gap_dur, g[i].end - g[i].ts);
		if (host_bound) {
			rec_num(RM_idle_gap_host_us, g[i].host_us);
			if (g[i].sync_us > 0)
				rec_num(RM_idle_gap_sync_us, g[i].sync_us);
		}
		rec_str(RM_idle_gap_kernel, strtab_str(r->str, x->name), strtab_len(r->str, x->name));
		if (x->launch >= 0) {
			rec_str(RM_idle_gap_launch, strtab_str(r->str, x->lname),
			    strtab_len(r->str, x->lname));
			rec_num(RM_idle_gap_launch_ts, x->lts);
			rec_num(RM_idle_gap_launch_dur, x->ldur > 0 ? x->ldur : 0);
		}
		rec_id(RM_idle_gap_id, "gap", ++run.ngap);
		rec_end();
	}
	free(g);
}

static void
write_step(const struct trace_reader *r, const struct trace *tr, const struct step *s,
    size_t index, int launches)
{
	rec_begin(RT_step);
	rec_int(RM_step_t, tr->t);
	rec_cstr(RM_step_stage, strtab_str(r->str, s->stage));
	rec_int(RM_step_index, (long long)index);
	rec_cstr(RM_step_name, strtab_str(r->str, s->name));
	rec_num(RM_step_ts, s->ts);
	rec_num(RM_step_cpu_us, s->dur);
	rec_num(RM_step_period_us, s->period_us);
	if (s->last)
		rec_bool(RM_step_last, 1);
	if (s->m.has_batch)
		rec_int(RM_step_batch, s->m.batch);
	if (s->m.has_tokens)
		rec_int(RM_step_tokens, s->m.tokens);
	if (launches) {
		rec_int(RM_step_kernels, s->kernels);
		rec_num(RM_step_gpu_busy_us, s->busy_us);
		rec_num(RM_step_gpu_span_us, s->span_us);
		rec_num(RM_step_comm_total_us, s->comm_total_us);
		if (s->comm_total_us > 0)
			rec_num(RM_step_comm_overlap_pct, pct(s->comm_overlap_us, s->comm_total_us));
		if (s->kernels > 0)
			rec_num(RM_step_gpu_ts, s->gpu_ts);
	}
	rec_id(RM_step_id, "step", ++run.nstep);
	rec_end();
}

static int
dbl_cmp(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return a < b ? -1 : a > b;
}

/*
 * The step figures of stage: the percentiles are of complete periods
 * (a step followed by another of its process) of steps with GPU work, so
 * that neither the last step's queue drain nor an empty trailing marker
 * is a step time (issue 25); without launch records no step has known
 * work, and all count.  Tokens per second are of the same steps, else,
 * when none of them has a count, of the last steps with work.  dur: room
 * for nst periods, filled and sorted here.
 */
static void
step_figures(const struct trace_reader *r, const struct step *st, size_t nst, uint32_t stage,
    int launches, double *dur, double *busy, struct stepfig *sf)
{
	double t, ltok = 0, ltok_us = 0;
	size_t i;

	memset(sf, 0, sizeof *sf);
	sf->dur = dur;
	sf->busy = busy;
	for (i = 0; i < nst; i++) {
		const struct step *s = &st[i];
		int work = !launches || s->kernels > 0;
		if (s->stage != stage)
			continue;
		sf->nsteps++;
		if (!work)
			continue;
		if (s->last) {
			sf->has_last = 1;	/* sorted by start: the latest wins */
			sf->last_us = s->period_us;
			if (step_tokens(r, s, &t)) {
				ltok += t;
				ltok_us += s->period_us;
			}
			continue;
		}
		busy[sf->ncomplete] = s->busy_us;
		dur[sf->ncomplete++] = s->period_us;
		if (step_tokens(r, s, &t)) {
			sf->tok += t;
			sf->tok_us += s->period_us;
		}
	}
	if (sf->tok_us <= 0 && ltok_us > 0) {
		sf->tok = ltok;
		sf->tok_us = ltok_us;
		sf->tok_last = 1;
	}
	xqsort(dur, sf->ncomplete, sizeof *dur, dbl_cmp);
	xqsort(busy, sf->ncomplete, sizeof *busy, dbl_cmp);
}

/*
 * The stages to report, in stage order: those of the items and those of
 * the steps.
 */
static size_t
report_stages(const strtab *str, const uint32_t *ist, size_t ni, const struct step *st,
    size_t nst, uint32_t **out)
{
	uint32_t *s = xmalloc((ni + nst + 1) * sizeof *s), tmp;
	size_t i, j, ns = 0;

	for (i = 0; i < ni + nst; i++) {
		uint32_t id = i < ni ? ist[i] : st[i - ni].stage;
		for (j = 0; j < ns && s[j] != id; j++)
			;
		if (j == ns)
			s[ns++] = id;
	}
	for (i = 1; i < ns; i++)	/* a handful of stages: insertion sort */
		for (j = i; j > 0 && stage_cmp(str, s[j - 1], s[j]) > 0; j--) {
			tmp = s[j];
			s[j] = s[j - 1];
			s[j - 1] = tmp;
		}
	*out = s;
	return ns;
}

static void
on_trace(void *ctx, struct trace_reader *r, struct trace *tr)
{
	struct step *st;
	struct figures *f;
	struct blockset bs;
	struct sink snk;
	struct figacc fa;
	struct streams **ss;
	struct escrows **es;
	struct gapsel *sel;
	struct delays *dl;
	uint32_t *stages;
	double *dur, *busy, *maxend;
	struct stepfig sf;
	size_t nst, ns, i, k, *count;
	const struct item *x;
	const struct aitem *acur;
	int launches = tr->nln > 0, offset, host_bound, open = 0;
	uint32_t gpu_pid = run.gpu_pid;
	double offset_us = run.offset_us;

	(void)ctx;
	offset = run.clock_offset;
	run.clock_offset = 0;
	run.gpu_pid = NOSTR;
	if (run.work && !run.staged) {	/* no sel anywhere: figures of nothing would mislead */
		run.unstaged++;
		run.work = 0;
		return;
	}
	run.work = 0;
	run.staged = 0;
	nst = steps_find(r, tr, &st);
	maxend = steps_maxend(st, nst);
	memset(&snk, 0, sizeof snk);
	snk.by_step = xsort_new(sizeof(struct sitem), items_by_step, NULL);
	snk.by_stage = xsort_new(sizeof(struct item), items_by_stage, r->str);
	snk.by_start = xsort_new(sizeof(struct gitem), items_by_start, NULL);
	snk.by_stream = xsort_new(sizeof(struct aitem), items_by_stream, r->str);
	snk.st = st;
	snk.nst = nst;
	snk.maxend = maxend;
	make_items(r, tr, &snk);
	run.items += snk.n;
	free(maxend);
	steps_finish(r, tr, st, nst, snk.by_step);
	xsort_free(snk.by_step);
	steps_periods(st, nst, offset, offset_us);
	ns = report_stages(r->str, snk.stages, snk.nstages, st, nst, &stages);
	dur = xmalloc((nst ? nst : 1) * sizeof *dur);
	busy = xmalloc((nst ? nst : 1) * sizeof *busy);
	f = xcalloc(ns ? ns : 1, sizeof *f);
	ss = xcalloc(ns ? ns : 1, sizeof *ss);
	es = xcalloc(ns ? ns : 1, sizeof *es);
	sel = xcalloc(ns ? ns : 1, sizeof *sel);
	count = xcalloc(ns ? ns : 1, sizeof *count);
	dl = delays_new();
	host_bound = launches && !offset;
	if (host_bound)
		blockset_init(&bs, tr->nln);
	else
		memset(&bs, 0, sizeof bs);
	/* each stage's items in order of start: its figures, streams, delays, escapes */
	k = 0;
	while ((x = xsort_next(snk.by_stage)) != NULL) {
		if (!open || stages[k] != x->stage) {
			if (open)
				fig_done(&fa, &f[k]);
			while (stages[k] != x->stage)
				k++;
			fig_init(&fa);
			ss[k] = streams_new();
			es[k] = escape_new();
			open = 1;
		}
		fig_add(&fa, x);
		streams_item(ss[k], x);
		escape_item(es[k], x);
		delay_item(dl, k, x);
		if (host_bound)
			blockset_item(r, tr, &bs, x);
		count[k]++;
	}
	if (open)
		fig_done(&fa, &f[k]);
	xsort_free(snk.by_stage);
	if (host_bound)
		blockset_finish(r, tr, &bs);
	/* the trace's gaps, over every stage's items by start */
	gaps_sweep(snk.by_start, stages, ns, f, host_bound ? &bs : NULL, host_bound, sel);
	xsort_free(snk.by_start);
	acur = xsort_next(snk.by_stream);
	for (k = 0; k < ns; k++) {
		step_figures(r, st, nst, stages[k], launches, dur, busy, &sf);
		write_gpu_time(r, tr, strtab_str(r->str, stages[k]), &f[k], &sf, launches, !offset,
		    f[k].sync_max_us > 0 ? blockset_call(&bs, f[k].sync_max_ts, f[k].sync_max_end) :
		    NOSTR);
		write_gaps(r, tr, strtab_str(r->str, stages[k]), &sel[k], host_bound);
		if (launches)
			delay_write(dl, r, tr->t, k, stages[k], &f[k], offset, offset_us);
		if (ss[k])
			streams_write(ss[k], r, tr->t, stages[k]);
		annot_write(r, tr, gpu_pid, stages[k], snk.by_stream, &acur, count[k], f[k].busy_us);
		if (es[k] && launches && f[k].graph_mode)
			escape_add(es[k], r, tr->t, stages[k], f[k].kernel_us);
		else
			escape_drop(es[k]);
	}
	xsort_free(snk.by_stream);
	delays_free(dl);
	blockset_free(&bs);
	free(f);
	free(ss);
	free(es);
	free(sel);
	free(count);
	for (i = 0; i < nst; i++)
		write_step(r, tr, &st[i], i, launches);
	free(dur);
	free(busy);
	free(stages);
	free(snk.stages);
	free(st);
}
