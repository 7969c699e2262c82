/*
 * trace-stage: choose the GPU process whose kernels the kernel table reads
 * and give every kernel its stage (kernel-table.md §1.4.3, §3): the path
 * stage of its trace, or else the stage of the user annotation it falls in.
 * Kernels are held per trace until its "stats" record, because annotations
 * and the correlation map can come after them; everything else streams
 * through.  They wait in the reader's queues (trace.h queue mode), and the
 * clocks are measured by sorting and merging (clocks.c), in memory that
 * does not grow with the trace (issue 30).  Whether the trace can be
 * trusted is trace-health's question.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "imap.h"
#include "json.h"
#include "num.h"
#include "opt.h"
#include "rec.h"
#include "rules.h"
#include "stage.h"
#include "trace.h"
#include "xalloc.h"

/* A user annotation that names a stage (§3.2). */
struct annot {
	const char *stage;	/* "extend" or "decode" (static) */
	double ts, end;
	int gpu;
};

/* Windows of one annotation kind, merged and sorted (§3.2). */
struct wlist {
	struct window {
		const char *stage;
		double ts, end;
	} *w;
	size_t n, cap;
	double *maxend1;	/* prefix max of end + 1e-3 */
	size_t *argmax;		/* first index achieving the prefix max of end */
};

/* What one trace needs while its kernels are staged. */
struct stager {
	struct trace_reader *rd;
	const struct trace *tr;
	struct annot *an;	/* annotations with a stage, in record order */
	size_t nan;
	imap by_ext;		/* External id -> index into an (§3.2 step 1) */
	struct wlist gpu, cpu;
};

static long long kernels_total;
static sbuf seen_cats;		/* "cat N, ..." of traces without kernels */
static char *first_path;	/* the first trace's path (the message names it) */

/*
 * --late-stages: kernels pass on as they come and their stages follow in
 * kernel_stages records, so the filters after this one read them while
 * trace-extract still writes; without it every kernel waits here for the
 * trace's end (issue 30).
 */
static int late_stages;

enum { O_LATE = OPT_LONG };

static const struct opt opts[] = {
	{ "late-stages", O_LATE, NULL,
	    "pass kernels on as they come; give their stage and sel in kernel_stages records" },
	{ NULL, 0, NULL, NULL }
};

static const struct tool tool = {
	"[-q] [--late-stages] [file ...]",
	"Select the kernel-table GPU process and resolve each kernel's stage in a\n"
	"trace-extract record stream (triage-records(5)).  Kernels get \"stage\" and,\n"
	"on the selected process, \"sel\"; a \"gpu_pids\" record per trace names the\n"
	"process and the kernel time of every GPU process.",
	opts
};

static void on_trace(void *ctx, struct trace_reader *r, struct trace *tr);

/*
 * Under --late-stages a kernel passes on with the members it came with, so
 * one staged already would carry two stages: refused.
 */
static int
keep_unstaged(void *ctx, struct trace_reader *r, enum rec_type t, const void *rec)
{
	(void)ctx;
	if (t == RT_kernel && (REC_HAS((const struct rec_kernel *)rec, kernel, stage) ||
	    REC_HAS((const struct rec_kernel *)rec, kernel, sel)))
		rec_die(&r->rd, "kernel record staged already (by an earlier trace-stage): "
		    "--late-stages reads trace-extract's records");
	return 1;
}

static const char *
S(const struct trace_reader *r, uint32_t id)
{
	return strtab_str(r->str, id);
}

/*
 * Each string's quoted JSON text, made the first time a kernel record
 * writes it: kernels repeat a few names, streams and threads, and quoting
 * them anew for each was a tenth of trace-stage (issue 30).
 */
static sbuf qtext = SBUF_INIT;	/* the texts, back to back */
static struct qspan {
	size_t off, len;	/* len 0: not made yet (a quoted text is never empty) */
} *qs;
static size_t qcap;

static void
put_string(const struct trace_reader *r, enum rec_member m, uint32_t id)
{
	if (id >= qcap) {
		size_t old = qcap;
		xgrow(&qs, &qcap, (size_t)id + 1, sizeof *qs);
		memset(qs + old, 0, (qcap - old) * sizeof *qs);
	}
	if (!qs[id].len) {
		qs[id].off = qtext.len;
		json_quote(&qtext, S(r, id), strtab_len(r->str, id));
		qs[id].len = qtext.len - qs[id].off;
	}
	rec_quoted(m, qtext.s + qs[id].off, qs[id].len);
}

int
main(int argc, char **argv)
{
	struct trace_reader rd;
	struct trace_ops ops = { 0 };
	strtab *str = strtab_new();
	int c, i, rc = EXIT_OK;

	tool_init(argc, argv);
	while ((c = opt_next(&tool, argc, argv)) != -1) {
		if (c == O_LATE)
			late_stages = 1;
		else
			opt_usage(&tool, EXIT_USAGE);
	}
	argc -= optind;
	argv += optind;
	ops.collect = TR_MASK(kernel) | TR_MASK(annotation) | TR_MASK(corr) | TR_MASK(launch) |
	    TR_MASK(sync);
	/*
	 * Kernels are rewritten at the trace's end, unless they pass on now;
	 * an earlier trace-stage's kernel_stages never pass (these stages are new).
	 */
	ops.consume = (late_stages ? 0 : TR_MASK(kernel)) | TR_MASK(kernel_stages);
	ops.keep = late_stages ? keep_unstaged : NULL;
	ops.pass = 1;
	ops.queue = 1;	/* kernels, launches and syncs in bounded memory (issue 30) */
	ops.on_trace = on_trace;
	trace_reader_init(&rd, str, &ops);
	for (i = 0; i < (argc ? argc : 1); i++) {
		const char *name = argc ? argv[i] : "-";
		FILE *fp = rec_open(name);
		trace_read(&rd, fp, strcmp(name, "-") ? name : "<stdin>");
		if (fp != stdin)
			fclose(fp);
	}
	rec_require_records();
	if (rd.ntraces && kernels_total == 0) {
		fflush(stdout);
		/* named, so that a batch or a directory of many says which */
		if (rd.ntraces == 1 && first_path && *first_path)
			err_msg("'%s': no GPU kernel events to analyze; the trace holds%s", first_path,
			    seen_cats.len ? sb_str(&seen_cats) : " no events at all");
		else
			err_msg("no GPU kernel events to analyze in %lld traces; they hold%s",
			    rd.ntraces, seen_cats.len ? sb_str(&seen_cats) : " no events at all");
		rc = EXIT_EMPTY;
	}
	free(first_path);
	trace_reader_free(&rd);
	strtab_free(str);
	sb_free(&seen_cats);
	return tool_finish(rc);
}

/* ---- pid selection (§1.4.3) ---- */

/*
 * The GPU processes in first-seen order with their summed kernel time, and
 * the selected one: the heaviest "TP00" pid, else the heaviest "TP-0" pid,
 * else the heaviest.
 */
static uint32_t
select_pid(const struct trace_reader *r, struct trace *tr, double **times,
    uint32_t **pids, size_t *npids)
{
	static const char *pref[] = { "TP00", "TP-0" };
	imap ix = { 0 };
	uint32_t *p = NULL;
	double *t = NULL;
	size_t j, n = 0, cap = 0, best;
	int k, found, isnew;
	struct tkcursor cur;
	const struct tkernel *kn;

	trace_kernel_rewind(tr, &cur);
	while ((kn = trace_kernel_next(&cur)) != NULL) {
		uint32_t pid = trace_thread_pid(r, kn->thread);
		uint64_t *v = imap_put(&ix, pid, &isnew);
		if (isnew) {
			size_t c2 = cap;
			xgrow(&p, &c2, n + 1, sizeof *p);
			if (c2 != cap)
				t = xreallocarray(t, c2, sizeof *t);
			cap = c2;
			p[n] = pid;
			t[n] = 0.0;
			*v = n++;
		}
		t[*v] += kn->dur;
	}
	imap_free(&ix);
	*times = t;
	*pids = p;
	*npids = n;
	if (n == 0)
		return NOSTR;
	for (k = 0; k < 2; k++) {
		found = 0;
		best = 0;
		for (j = 0; j < n; j++) {
			if (!strstr(S(r, p[j]), pref[k]))
				continue;
			if (!found || t[j] > t[best])
				best = j;
			found = 1;
		}
		if (found)
			return p[best];
	}
	best = 0;
	for (j = 1; j < n; j++)
		if (t[j] > t[best])
			best = j;
	return p[best];
}

/* ---- stage windows (§3.2) ---- */

/* Sort order of annotations: ts, end, then record order (stable). */
static int
annot_cmp(const void *a, const void *b)
{
	const struct annot *x = *(const struct annot *const *)a, *y = *(const struct annot *const *)b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return x < y ? -1 : x > y;
}

static void
build_windows(const struct stager *sg, int gpu, struct wlist *wl)
{
	const struct annot **tmp = xmalloc((sg->nan ? sg->nan : 1) * sizeof *tmp);
	size_t i, m = 0;

	for (i = 0; i < sg->nan; i++)
		if (sg->an[i].gpu == gpu)
			tmp[m++] = &sg->an[i];
	xqsort(tmp, m, sizeof *tmp, annot_cmp);
	memset(wl, 0, sizeof *wl);
	for (i = 0; i < m; i++) {
		struct window *prev = wl->n ? &wl->w[wl->n - 1] : NULL;
		if (prev && prev->stage == tmp[i]->stage && tmp[i]->ts <= prev->end + 1e-3) {
			if (tmp[i]->end > prev->end)
				prev->end = tmp[i]->end;
			continue;
		}
		xgrow(&wl->w, &wl->cap, wl->n + 1, sizeof *wl->w);
		wl->w[wl->n].stage = tmp[i]->stage;
		wl->w[wl->n].ts = tmp[i]->ts;
		wl->w[wl->n].end = tmp[i]->end;
		wl->n++;
	}
	free(tmp);
	wl->maxend1 = xmalloc((wl->n ? wl->n : 1) * sizeof *wl->maxend1);
	wl->argmax = xmalloc((wl->n ? wl->n : 1) * sizeof *wl->argmax);
	for (i = 0; i < wl->n; i++) {
		double e1 = wl->w[i].end + 1e-3;
		if (i == 0 || e1 > wl->maxend1[i - 1]) {
			wl->maxend1[i] = e1;
			wl->argmax[i] = i;
		} else {
			wl->maxend1[i] = wl->maxend1[i - 1];
			wl->argmax[i] = wl->argmax[i - 1];
		}
	}
}

static void
wlist_free(struct wlist *wl)
{
	free(wl->w);
	free(wl->maxend1);
	free(wl->argmax);
	memset(wl, 0, sizeof *wl);
}

/*
 * The reference scans every window: the first containing one wins, else
 * the nearest (strictly smallest gap, first on ties).  Windows are sorted
 * by start, so the containing candidates are a prefix and the first of them
 * whose end reaches the probe is found on the prefix maximum of ends; the
 * nearest non-containing window is either the latest-ending one of that
 * prefix or the first one after it.  Returns 1 (contained), 0 (nearest in
 * *gap), -1 (no windows).
 */
static int
scan_windows(const struct wlist *wl, double probe, const char **stage, double *gap)
{
	size_t lo = 0, hi = wl->n, r, mid;
	double g1, g2, a, b;
	size_t i1;

	if (wl->n == 0)
		return -1;
	while (lo < hi) {	/* r = number of windows with ts <= probe */
		mid = (lo + hi) / 2;
		if (wl->w[mid].ts <= probe)
			lo = mid + 1;
		else
			hi = mid;
	}
	r = lo;
	if (r > 0 && wl->maxend1[r - 1] >= probe) {
		lo = 0;
		hi = r - 1;
		while (lo < hi) {
			mid = (lo + hi) / 2;
			if (wl->maxend1[mid] >= probe)
				hi = mid;
			else
				lo = mid + 1;
		}
		*stage = wl->w[lo].stage;
		return 1;
	}
	g1 = INFINITY;
	i1 = 0;
	if (r > 0) {
		i1 = wl->argmax[r - 1];
		a = fabs(probe - wl->w[i1].ts);
		b = fabs(probe - wl->w[i1].end);
		g1 = a < b ? a : b;
	}
	if (r < wl->n) {
		a = fabs(probe - wl->w[r].ts);
		b = fabs(probe - wl->w[r].end);
		g2 = a < b ? a : b;
		if (r == 0 || g2 < g1) {
			*stage = wl->w[r].stage;
			*gap = g2;
			return 0;
		}
	}
	*stage = wl->w[i1].stage;
	*gap = g1;
	return 0;
}

/*
 * The annotations that name a stage, and the External id index: per id a
 * GPU annotation beats a CPU one, then the longer one, then the earlier.
 */
static void
collect_annotations(struct stager *sg)
{
	const struct trace *tr = sg->tr;
	size_t i;
	int isnew;

	sg->an = xmalloc((tr->nan ? tr->nan : 1) * sizeof *sg->an);
	for (i = 0; i < tr->nan; i++) {
		const struct tannot *a = &tr->an[i];
		const char *st, *txt;
		struct annot *x;
		uint64_t *v;

		if (a->stage == NOSTR)
			continue;
		txt = S(sg->rd, a->stage);
		st = annotation_stage(txt, strlen(txt));	/* canonical static string */
		if (!strcmp(txt, "decode"))
			st = "decode";
		else if (!strcmp(txt, "extend"))
			st = "extend";
		/*
		 * A time that is not finite (1e999 in a hand-made record, or a
		 * sum past a double) bounds no window: its end would be NaN and
		 * sort with nothing (docs/robustness.md).
		 */
		if (!st || !isfinite(a->ts) || !isfinite(a->ts + a->dur))
			continue;
		x = &sg->an[sg->nan++];
		x->stage = st;
		x->ts = a->ts;
		x->end = a->ts + a->dur;
		x->gpu = strcmp(S(sg->rd, a->cat), "gpu_user_annotation") == 0;
		if (!a->has_ext)
			continue;
		v = imap_put(&sg->by_ext, (uint64_t)a->ext, &isnew);
		if (isnew) {
			*v = sg->nan - 1;
		} else {
			const struct annot *old = &sg->an[*v];
			if (old->gpu != x->gpu ? x->gpu : x->end - x->ts > old->end - old->ts)
				*v = sg->nan - 1;
		}
	}
}

/*
 * cpu_ts: the host time the kernel is placed at among the CPU windows: its
 * launch call's start (C24, C20), else its own ts (less the clocks' offset).
 */
static const char *
resolve_stage(const struct stager *sg, const struct tkernel *k, double cpu_ts)
{
	const char *st = NULL, *st2 = NULL;
	double gap = 0, gap2 = 0, probe = k->ts + 1e-3, cprobe = cpu_ts + 1e-3;
	int r1, r2, have = 0;
	uint64_t *v;

	if (k->ext_src != EXT_NONE && (v = imap_get(&sg->by_ext, (uint64_t)k->ext)))
		return sg->an[*v].stage;
	r1 = scan_windows(&sg->gpu, probe, &st, &gap);
	if (r1 == 1)
		return st;
	if (r1 == 0)
		have = 1;
	r2 = scan_windows(&sg->cpu, cprobe, &st2, &gap2);
	if (r2 == 1)
		return st2;
	if (r2 == 0 && (!have || gap2 < gap)) {
		st = st2;
		gap = gap2;
		have = 1;
	}
	if (have && gap <= 20000.0)
		return st;
	return "all";
}

/* ---- output ---- */

static void
write_gpu_pids(const struct trace_reader *r, const struct trace *tr, uint32_t sel,
    const double *times, const uint32_t *pids, size_t npids, const struct clocks *c)
{
	sbuf o = SBUF_INIT;
	char buf[40];
	size_t i;

	sb_addc(&o, '{');
	for (i = 0; i < npids; i++) {
		const char *p = S(r, pids[i]);
		if (i)
			sb_addc(&o, ',');
		json_quote(&o, p, strlen(p));
		sb_addc(&o, ':');
		sb_adds(&o, num_json(times[i], buf));
	}
	sb_addc(&o, '}');
	rec_begin(RT_gpu_pids);
	rec_int(RM_gpu_pids_t, tr->t);
	rec_cstr(RM_gpu_pids_selected, S(r, sel));
	rec_json(RM_gpu_pids_time_us, o.s, o.len);
	if (c && c->pairs)
		rec_num(RM_gpu_pids_launch_latency_p50_us, c->p50);
	if (c && c->pairs) {
		rec_int(RM_gpu_pids_idle_starts, c->idle);
		if (c->idle)
			rec_num(RM_gpu_pids_idle_start_latency_us, c->idle_min);
		rec_num(RM_gpu_pids_launch_start_min_us, c->start_min);
	}
	if (c && c->sync_call != NOSTR) {
		rec_cstr(RM_gpu_pids_sync_call, S(r, c->sync_call));
		rec_num(RM_gpu_pids_sync_return_us, c->sync_return);
		rec_num(RM_gpu_pids_sync_wait_us, c->sync_wait);
	}
	if (c && c->offset)
		rec_num(RM_gpu_pids_clock_offset_us, c->offset_us);
	rec_end();
	sb_free(&o);
}

static void
write_kernel(const struct trace_reader *r, const struct trace *tr, const struct tkernel *k,
    const char *stage, int sel)
{
	rec_begin(RT_kernel);
	rec_int(RM_kernel_t, tr->t);
	put_string(r, RM_kernel_name, k->name);
	put_string(r, RM_kernel_cat, k->cat);
	put_string(r, RM_kernel_pid, trace_thread_pid(r, k->thread));
	put_string(r, RM_kernel_tid, trace_thread_tid(r, k->thread));
	rec_num(RM_kernel_ts, k->ts);
	rec_num(RM_kernel_dur, k->dur);
	if (k->stream != NOSTR)
		put_string(r, RM_kernel_stream, k->stream);
	if (k->ext_src != EXT_NONE)
		rec_int(RM_kernel_external_id, k->ext);
	if (k->has_corr)
		rec_int(RM_kernel_correlation, k->corr);
	if (k->bytes >= 0)
		rec_int(RM_kernel_bytes, k->bytes);
	if (k->overlap)
		rec_bool(RM_kernel_overlap, 1);
	if (k->py_window != NOSTR)
		rec_json(RM_kernel_py_window, S(r, k->py_window), strtab_len(r->str, k->py_window));
	if (k->py_window_band != NOSTR)
		rec_json(RM_kernel_py_window_band, S(r, k->py_window_band),
		    strtab_len(r->str, k->py_window_band));
	if (k->shape != NOSTR) {
		rec_int(RM_kernel_shape, k->shape);
		if (k->shape_frac != 1.0)
			rec_num(RM_kernel_shape_frac, k->shape_frac);
	}
	rec_cstr(RM_kernel_stage, stage);
	if (sel)
		rec_bool(RM_kernel_sel, 1);
	rec_end();
}

/*
 * The kernel_stages records of --late-stages: runs of kernels in record
 * order with the same stage and sel, RUNS_PER_RECORD to a record so that
 * no line grows with the trace.
 */
#define RUNS_PER_RECORD 4096

struct runs {
	sbuf json;		/* the record's runs so far, without the brackets */
	size_t nruns;		/* in json */
	size_t first;		/* the ordinal of json's first kernel */
	size_t next;		/* the ordinal after the last kernel added */
	const char *stage;	/* of the open run (NULL: none open) */
	int sel;
	size_t count;
};

static void
run_close(struct runs *u)
{
	if (!u->count)
		return;
	sb_printf(&u->json, "%s[%zu,", u->nruns ? "," : "", u->count);
	if (u->stage)
		json_quote(&u->json, u->stage, strlen(u->stage));
	else
		sb_adds(&u->json, "null");
	sb_printf(&u->json, ",%d]", u->sel);
	u->nruns++;
	u->count = 0;
}

/* Write the runs closed so far as one record, and open the next at the current kernel. */
static void
run_write(struct runs *u, long long t)
{
	if (u->nruns) {
		rec_begin(RT_kernel_stages);
		rec_int(RM_kernel_stages_t, t);
		rec_int(RM_kernel_stages_first, (long long)u->first);
		sb_addc(&u->json, ']');
		rec_json(RM_kernel_stages_runs, u->json.s, u->json.len);
		rec_end();
	}
	sb_reset(&u->json);
	sb_addc(&u->json, '[');
	u->nruns = 0;
	u->first = u->next - u->count;
}

static void
run_add(struct runs *u, long long t, const char *stage, int sel)
{
	if (!u->json.len)
		sb_addc(&u->json, '[');
	if (u->count && (u->sel != sel || (u->stage != stage && (!u->stage || !stage ||
	    strcmp(u->stage, stage) != 0)))) {
		run_close(u);
		if (u->nruns == RUNS_PER_RECORD)
			run_write(u, t);
	}
	if (!u->count) {
		u->stage = stage;
		u->sel = sel;
	}
	u->count++;
	u->next++;
}

static void
run_flush(struct runs *u, long long t)
{
	run_close(u);
	run_write(u, t);
	sb_free(&u->json);
}

/* A trace without kernels: remember what it held instead, from its stats record. */
static void
note_categories(const struct trace *tr)
{
	json_doc d = { 0 };
	int k, n, j;
	sbuf name = SBUF_INIT;

	if (!REC_HAS(&tr->stats, stats, by_cat) ||
	    json_parse(&d, tr->stats.by_cat.s, tr->stats.by_cat.n) < 0 ||
	    d.tok[0].type != JSMN_OBJECT) {
		json_doc_free(&d);
		return;
	}
	n = d.tok[0].size;
	for (k = 0, j = 1; k < n; k++, j = json_skip(&d, j + 1)) {
		long long cnt = 0;
		json_str(&d, j, &name, NULL);
		json_coerce_int(&d, j + 1, &cnt);
		sb_printf(&seen_cats, "%s %lld %s event%s", seen_cats.len ? "," : "", cnt,
		    name.len ? name.s : "uncategorized", cnt == 1 ? "" : "s");
	}
	sb_free(&name);
	json_doc_free(&d);
}

static void
on_trace(void *ctx, struct trace_reader *r, struct trace *tr)
{
	struct stager sg = { 0 };
	struct clocks ck;
	double *times;
	uint32_t *pids, sel;
	size_t npids, i;
	const char *path_stage = S(r, tr->stage);
	struct xsort *starts = NULL;
	const struct klaunch *ks = NULL;
	struct tkcursor cur;
	const struct tkernel *k;
	int at_launch;
	struct runs runs = { 0 };

	(void)ctx;
	sg.rd = r;
	sg.tr = tr;
	sel = select_pid(r, tr, &times, &pids, &npids);
	collect_annotations(&sg);
	build_windows(&sg, 1, &sg.gpu);
	build_windows(&sg, 0, &sg.cpu);
	memset(&ck, 0, sizeof ck);
	if (npids && !compat_reference)
		measure_clocks(r, tr, sel, &ck);
	if (npids)
		write_gpu_pids(r, tr, sel, times, pids, npids, compat_reference ? NULL : &ck);
	/*
	 * Among the CPU windows a kernel sits at its launch call, where the
	 * host was (C24: a prefill kernel queued behind others may start on the
	 * GPU after the next decode step's annotation began); at its own start
	 * under --compat reference (§3.2.2), less the offset when the clocks
	 * disagree and it has no launch (C20).
	 */
	at_launch = strcmp(path_stage, "all") == 0 && sg.cpu.n && (ck.offset || !compat_reference);
	if (at_launch) {
		starts = kernel_launch_starts(tr);
		ks = xsort_next(starts);
	}
	trace_kernel_rewind(tr, &cur);
	for (i = 0; (k = trace_kernel_next(&cur)) != NULL; i++) {
		double cpu_ts = k->ts;
		const char *stage;
		if (ks && ks->k == i) {
			cpu_ts = ks->ts;
			ks = xsort_next(starts);
		} else if (ck.offset)
			cpu_ts = k->ts - ck.offset_us;
		stage = strcmp(path_stage, "all") != 0 ? path_stage : resolve_stage(&sg, k, cpu_ts);
		if (late_stages)
			run_add(&runs, tr->t, stage, trace_thread_pid(r, k->thread) == sel);
		else
			write_kernel(r, tr, k, stage, trace_thread_pid(r, k->thread) == sel);
	}
	if (late_stages)
		run_flush(&runs, tr->t);
	xsort_free(starts);
	kernels_total += (long long)tr->nk;
	if (!first_path)
		first_path = xstrdup(tr->path != NOSTR ? S(r, tr->path) : "");
	if (!tr->nk)
		note_categories(tr);
	free(times);
	free(pids);
	free(sg.an);
	imap_free(&sg.by_ext);
	wlist_free(&sg.gpu);
	wlist_free(&sg.cpu);
}
