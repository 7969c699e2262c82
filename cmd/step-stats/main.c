/*
 * step-stats: GPU busy and idle time, host-bound gaps, CUDA-graph coverage
 * and per-step latency of each trace and stage of a staged record stream
 * (trace-extract | trace-stage, optionally | kernel-map).
 *
 * Kernels, launches and step markers are held per trace until its "stats"
 * record; then the trace's gpu_time and step records are written before
 * the stats line.  Every input record passes through.  graph_escape rows
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
#include "ss.h"
#include "trace.h"
#include "xalloc.h"

static const struct opt opts[] = { { NULL, 0, NULL, NULL } };

static const struct tool tool = {
	"[-q] [file]",
	"Add GPU busy/idle time, host-bound gaps, CUDA-graph coverage and step\n"
	"latency to a staged record stream (trace-extract | trace-stage): one\n"
	"\"gpu_time\" record per trace and stage, one \"step\" record per step\n"
	"marker, and \"graph_escape\" rows for eager kernels of graph-mode stages.\n"
	"Every input record passes through.",
	opts
};

/* The run: per-trace state reset in on_trace, and totals for the end. */
static struct {
	long long items;	/* GPU work items over all traces */
	long long work;		/* work kernels of this trace, selected or not */
	int staged;		/* this trace has trace-stage's gpu_pids record */
	long long unstaged, bad_times;
	unsigned char *bucket;	/* raw name id -> bucket + 1, 0 unknown */
	size_t nbucket;
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
		return k->sel;
	}
	if (t == RT_annotation) {
		const struct rec_annotation *a = rec;
		struct marker m;
		if (rstr_eq(a->cat, "gpu_user_annotation"))
			return 0;
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
	if (t == RT_gpu_pids)
		run.staged = 1;
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
	while (opt_next(&tool, argc, argv) != -1)
		opt_usage(&tool, EXIT_USAGE);
	if (argc - optind > 1) {
		err_msg("one record file at most (got %d)", argc - optind);
		opt_usage(&tool, EXIT_USAGE);
	}
	if (optind < argc)
		in = argv[optind];
	ops.collect = TR_MASK(kernel) | TR_MASK(launch) | TR_MASK(annotation);
	ops.pass = 1;
	ops.keep = keep;
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

static int
graph_launch(const char *name)
{
	return !strncmp(name, "cudaGraphLaunch", 15) || !strncmp(name, "hipGraphLaunch", 14) ||
	    !strncmp(name, "cuGraphLaunch", 13);
}

/* The trace's GPU work items; n in *n.  Launch indexes come from the correlation. */
static struct item *
make_items(struct trace_reader *r, const struct trace *tr, size_t *n)
{
	struct item *it = xmalloc((tr->nk ? tr->nk : 1) * sizeof *it);
	double *first = xmalloc((tr->nln ? tr->nln : 1) * sizeof *first);
	imap by_corr = { 0 };
	size_t i, m = 0;
	int isnew;

	for (i = 0; i < tr->nln; i++) {
		uint64_t *v = imap_put(&by_corr, (uint64_t)tr->ln[i].corr, &isnew);
		if (isnew)	/* a duplicated correlation keeps its first launch */
			*v = i;
		first[i] = INFINITY;
	}
	for (i = 0; i < tr->nk; i++) {
		const struct tkernel *k = &tr->k[i];
		const char *cat = strtab_str(r->str, k->cat);
		struct item *x = &it[m];
		uint64_t *v;
		if (ss_bad_time(k->ts, k->dur)) {
			run.bad_times++;
			continue;
		}
		memset(x, 0, sizeof *x);
		x->ts = k->ts;
		x->dur = k->dur > 0 ? k->dur : 0;
		x->end = x->ts + x->dur;
		x->stage = k->stage != NOSTR ? k->stage : tr->stage;
		x->name = k->name;
		x->kernel = !strcmp(cat, "kernel") || !strcmp(cat, "Kernel");
		x->bucket = bucket_of(r->str, k->name, !x->kernel);
		x->launch = -1;
		x->step = -1;
		x->ord = m;
		if (k->has_corr && (v = imap_get(&by_corr, (uint64_t)k->corr))) {
			x->launch = (long)*v;
			x->graph = graph_launch(strtab_str(r->str, tr->ln[*v].name));
			if (x->ts < first[*v])
				first[*v] = x->ts;
		}
		m++;
	}
	for (i = 0; i < m; i++)
		it[i].first = it[i].launch >= 0 && it[i].ts == first[it[i].launch];
	imap_free(&by_corr);
	free(first);
	*n = m;
	return it;
}

static void
write_gpu_time(const struct trace *tr, const char *stage, const struct figures *f,
    const double *dur, size_t nsteps, int launches)
{
	rec_begin(RT_gpu_time);
	rec_int(RM_gpu_time_t, tr->t);
	rec_cstr(RM_gpu_time_stage, stage);
	rec_int(RM_gpu_time_kernels, f->kernels);
	rec_num(RM_gpu_time_kernel_us, f->kernel_us);
	rec_num(RM_gpu_time_busy_us, f->busy_us);
	rec_num(RM_gpu_time_span_us, f->span_us);
	rec_num(RM_gpu_time_idle_us, f->idle_us);
	if (launches)
		rec_num(RM_gpu_time_idle_launch_us, f->idle_launch_us);
	rec_num(RM_gpu_time_compute_us, f->bucket_us[B_COMPUTE]);
	rec_num(RM_gpu_time_comm_us, f->bucket_us[B_COMM]);
	rec_num(RM_gpu_time_memcpy_us, f->bucket_us[B_MEM]);
	if (launches) {
		rec_num(RM_gpu_time_graph_us, f->graph_us);
		rec_num(RM_gpu_time_graph_pct, pct(f->graph_us, f->busy_us));
		if (f->graph_mode)
			rec_int(RM_gpu_time_eager_kernels, f->eager);
	}
	if (nsteps)
		rec_int(RM_gpu_time_steps, (long long)nsteps);
	if (nsteps > 1) {
		rec_num(RM_gpu_time_step_p50_us, percentile(dur, nsteps, 50));
		rec_num(RM_gpu_time_step_p90_us, percentile(dur, nsteps, 90));
		rec_num(RM_gpu_time_step_max_us, dur[nsteps - 1]);
	}
	rec_end();
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
	if (s->m.has_batch)
		rec_int(RM_step_batch, s->m.batch);
	if (s->m.has_tokens)
		rec_int(RM_step_tokens, s->m.tokens);
	if (launches) {
		rec_int(RM_step_kernels, s->kernels);
		rec_num(RM_step_gpu_busy_us, s->busy_us);
		rec_num(RM_step_gpu_span_us, s->span_us);
	}
	rec_end();
}

static int
dbl_cmp(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return a < b ? -1 : a > b;
}

/*
 * The stages to report, in stage order: those of the items (one run each
 * after items_sort) and those of the steps.
 */
static size_t
report_stages(const strtab *str, const struct item *it, size_t n, const struct step *st,
    size_t nst, uint32_t **out)
{
	uint32_t *s = xmalloc((n + nst + 1) * sizeof *s), tmp;
	size_t i, j, ns = 0;

	for (i = 0; i < n + nst; i++) {
		uint32_t id = i < n ? it[i].stage : st[i - n].stage;
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
	struct item *it;
	struct figures f;
	uint32_t *stages;
	double *dur;
	size_t n, nst, ns, i, a, b, k, nd;
	int launches = tr->nln > 0;

	(void)ctx;
	if (run.work && !run.staged) {	/* no sel anywhere: figures of nothing would mislead */
		run.unstaged++;
		run.work = 0;
		return;
	}
	run.work = 0;
	run.staged = 0;
	it = make_items(r, tr, &n);
	run.items += (long long)n;
	nst = steps_find(r, tr, &st);
	steps_assign(r, tr, st, nst, it, n);
	steps_finish(r, tr, st, nst, it, n);
	items_sort(it, n, r->str);
	ns = report_stages(r->str, it, n, st, nst, &stages);
	dur = xmalloc((nst ? nst : 1) * sizeof *dur);
	for (k = 0, a = 0; k < ns; k++) {
		for (b = a; b < n && it[b].stage == stages[k]; b++)
			;
		stage_figures(it + a, b - a, tr->ln, &f);
		for (i = 0, nd = 0; i < nst; i++)
			if (st[i].stage == stages[k])
				dur[nd++] = st[i].dur;
		xqsort(dur, nd, sizeof *dur, dbl_cmp);
		write_gpu_time(tr, strtab_str(r->str, stages[k]), &f, dur, nd, launches);
		if (launches && f.graph_mode)
			escape_add(r, tr->t, stages[k], it + a, b - a, f.kernel_us);
		a = b;
	}
	for (i = 0; i < nst; i++)
		write_step(r, tr, &st[i], i, launches);
	free(dur);
	free(stages);
	free(st);
	free(it);
}
