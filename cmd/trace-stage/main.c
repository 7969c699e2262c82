/*
 * trace-stage: choose the GPU process whose kernels the kernel table reads
 * and give every kernel its stage (kernel-table.md §1.4.3, §3): the path
 * stage of its trace, or else the stage of the user annotation it falls in.
 * Kernels are held per trace until its "stats" record, because annotations
 * and the correlation map can come after them; everything else streams
 * through.  Whether the trace can be trusted is trace-health's question.
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
select_pid(const struct trace_reader *r, const struct trace *tr, double **times,
    uint32_t **pids, size_t *npids)
{
	static const char *pref[] = { "TP00", "TP-0" };
	imap ix = { 0 };
	uint32_t *p = NULL;
	double *t = NULL;
	size_t i, j, n = 0, cap = 0, best;
	int k, found, isnew;

	for (i = 0; i < tr->nk; i++) {
		uint32_t pid = trace_thread_pid(r, tr->k[i].thread);
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
		t[*v] += tr->k[i].dur;
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

/* ---- the clocks of host and device (issue 25) ---- */

/*
 * A launch reaches an idle GPU in 5 to 50 us on every real trace seen; a
 * GPU clock offset from the host's shows as kernels that start on an idle
 * GPU a long time after their launch call returned (146 ms in one vLLM
 * trace), or as kernels that start long before their call.  Past this,
 * the clocks disagree.
 */
#define CLOCK_OFFSET_US 1000.0
/*
 * An idle gap is real from a microsecond: back-to-back items of one queue
 * follow each other within a nanosecond on ROCm and a few hundred on CUDA.
 */
#define IDLE_GAP_US 1.0
/*
 * A blocking call that waited this long for GPU work and returned within
 * this long after the work ended shows one clock: on a GPU clock a
 * millisecond ahead it would have returned a millisecond "before" the work
 * it waited for ended (5.8 us after the last kernel in a real MI300X
 * trace's hipDeviceSynchronize of 37.9 ms, 3 to 35 us elsewhere).
 */
#define SYNC_TOL_US 100.0

/* What the launch-to-start latencies of the analyzed process say. */
struct clocks {
	long long pairs;	/* items with a launch */
	double p50;		/* median of start - launch start over them */
	long long idle;		/* of them: the first of their launch, on a GPU with nothing queued */
	double idle_min;	/* the least start - launch end among those */
	double start_min;	/* the least start - launch start over all pairs */
	uint32_t sync_call;	/* a blocking call showing one clock (name id), or NOSTR */
	double sync_return;	/* its return after the last item it waited for ended */
	double sync_wait;	/* how long it waited for that item */
	int offset;		/* the clocks disagree by at least CLOCK_OFFSET_US */
	double offset_us;	/* then: see measure_clocks */
};

struct kstart {
	double ts, end;
	long launch;		/* index into tr->ln, or -1 */
};

static int
kstart_cmp(const void *a, const void *b)
{
	const struct kstart *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return (x->end > y->end) - (x->end < y->end);
}

/* (launch call start, item end) pairs, by call start. */
struct callend {
	double call, end;
};

static int
callend_cmp(const void *a, const void *b)
{
	const struct callend *x = a, *y = b;

	if (x->call != y->call)
		return x->call < y->call ? -1 : 1;
	return (x->end > y->end) - (x->end < y->end);
}

/*
 * Does a blocking call [s0, ret] that waited for GPU work ending at `last`
 * show one clock?  Keeps the one that returned soonest after its work.
 */
static void
sync_evidence(struct clocks *c, uint32_t name, double s0, double ret, double last)
{
	double back = ret - last, wait = last - s0;

	if (wait < SYNC_TOL_US || back < 0 || back > SYNC_TOL_US)
		return;
	if (c->sync_call != NOSTR && (back > c->sync_return ||
	    (back == c->sync_return && wait <= c->sync_wait)))
		return;
	c->sync_call = name;
	c->sync_return = back;
	c->sync_wait = wait;
}

/* A synchronous copy's call (cudaMemcpy, hipMemcpyWithStream): it returns once its copy is done. */
static int
sync_copy(const struct trace_reader *r, const struct tcall *l)
{
	const char *n = S(r, l->name);

	return l->kind == LAUNCH_MEMCPY && !strstr(n, "Async") && !strstr(n, "async");
}

/*
 * The blocking calls of the trace against the GPU work of process sel: a
 * synchronize call against the latest end of the items launched (call
 * start) before it began, a synchronous copy against its own copy.
 */
static void
measure_syncs(const struct trace_reader *r, const struct trace *tr, const struct kstart *v,
    size_t n, struct clocks *c)
{
	/*
	 * A synchronize call waited for the items whose launch call began
	 * before it: the latest end among them is the latest end of a launch's
	 * items over the launches that began before it.  So each launch's
	 * latest item end, then the launches by call start (a few thousand, in
	 * order already, where sorting the 135,000 items of a CUDA-graph decode
	 * trace by their call was 4 % of trace-stage; issue 30).
	 */
	double *lend = xmalloc((tr->nln ? tr->nln : 1) * sizeof *lend);
	struct callend *ce = xmalloc((tr->nln ? tr->nln : 1) * sizeof *ce);
	double *pmax;
	size_t i, m = 0, lo, hi, mid;

	for (i = 0; i < tr->nln; i++)
		lend[i] = -INFINITY;
	for (i = 0; i < n; i++) {
		const struct tcall *l;
		if (v[i].launch < 0)
			continue;
		l = &tr->ln[v[i].launch];
		if (!(v[i].end <= lend[v[i].launch]))
			lend[v[i].launch] = v[i].end;
		if (sync_copy(r, l))
			sync_evidence(c, l->name, l->ts, l->ts + (l->dur > 0 ? l->dur : 0), v[i].end);
	}
	for (i = 0; i < tr->nln; i++)
		if (lend[i] != -INFINITY)
			ce[m++] = (struct callend){ tr->ln[i].ts, lend[i] };
	free(lend);
	xqsort(ce, m, sizeof *ce, callend_cmp);
	pmax = xmalloc((m ? m : 1) * sizeof *pmax);
	for (i = 0; i < m; i++)
		pmax[i] = i && pmax[i - 1] > ce[i].end ? pmax[i - 1] : ce[i].end;
	for (i = 0; i < tr->nsy; i++) {
		const struct tcall *sy = &tr->sy[i];
		lo = 0;
		hi = m;
		while (lo < hi) {	/* the launches whose call began before the synchronize */
			mid = (lo + hi) / 2;
			if (ce[mid].call < sy->ts)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo)
			sync_evidence(c, sy->name, sy->ts, sy->ts + (sy->dur > 0 ? sy->dur : 0),
			    pmax[lo - 1]);
	}
	free(ce);
	free(pmax);
}

/*
 * Measure the launch-to-start latencies of the kernels of process sel:
 * over every kernel with a launch (its correlation's first launch record),
 * and over those that start on a GPU with nothing of the process running
 * or queued, as the first item of their launch, whose start can be late
 * only by the clocks.  Nothing is queued before the process's first item,
 * nor after a real idle gap when no item starting then or later had its
 * launch call return before the gap began; back-to-back items of a deep
 * launch queue (a GPU-bound loop, the host tens of milliseconds ahead)
 * are queued, however small the gap between them.  A blocking call that
 * returned right after the work it waited for (sync_evidence) shows one
 * clock and overrules the latencies.  Not under --compat reference.
 */
static void
measure_clocks(const struct trace_reader *r, const struct trace *tr, uint32_t sel,
    struct clocks *c)
{
	struct kstart *v = xmalloc((tr->nk ? tr->nk : 1) * sizeof *v);
	double *lat = xmalloc((tr->nk ? tr->nk : 1) * sizeof *lat), maxend = 0;
	double *sufend = xmalloc((tr->nk + 1) * sizeof *sufend);
	unsigned char *seen = xcalloc(tr->nln ? tr->nln : 1, 1);
	imap by_corr = { 0 };
	size_t i, n = 0;
	uint64_t *x;
	int isnew;

	memset(c, 0, sizeof *c);
	c->sync_call = NOSTR;
	for (i = 0; i < tr->nln; i++) {
		x = imap_put(&by_corr, (uint64_t)tr->ln[i].corr, &isnew);
		if (isnew)
			*x = i;
	}
	for (i = 0; i < tr->nk; i++) {
		const struct tkernel *k = &tr->k[i];
		if (trace_thread_pid(r, k->thread) != sel)
			continue;
		v[n].ts = k->ts;
		v[n].end = k->ts + (k->dur > 0 ? k->dur : 0);
		v[n].launch = k->has_corr && (x = imap_get(&by_corr, (uint64_t)k->corr)) ?
		    (long)*x : -1;
		n++;
	}
	xqsort(v, n, sizeof *v, kstart_cmp);
	/* sufend[i]: the earliest launch-call end of the items starting at or after v[i] */
	sufend[n] = INFINITY;
	for (i = n; i-- > 0;) {
		double e = INFINITY;
		if (v[i].launch >= 0) {
			const struct tcall *l = &tr->ln[v[i].launch];
			e = l->ts + (l->dur > 0 ? l->dur : 0);
		}
		sufend[i] = e < sufend[i + 1] ? e : sufend[i + 1];
	}
	for (i = 0; i < n; i++) {
		if (v[i].launch >= 0) {
			const struct tcall *l = &tr->ln[v[i].launch];
			double ls = v[i].ts - l->ts;
			lat[c->pairs] = ls;
			if (!c->pairs || ls < c->start_min)
				c->start_min = ls;
			c->pairs++;
			if (!seen[v[i].launch] && (i == 0 ||
			    (v[i].ts - maxend >= IDLE_GAP_US && sufend[i] > maxend))) {
				double le = v[i].ts - (l->ts + (l->dur > 0 ? l->dur : 0));
				if (!c->idle || le < c->idle_min)
					c->idle_min = le;
				c->idle++;
			}
			seen[v[i].launch] = 1;
		}
		if (i == 0 || v[i].end > maxend)
			maxend = v[i].end;
	}
	if (c->pairs)	/* the lower median, lat[(pairs - 1) / 2] of lat sorted */
		c->p50 = num_percentile(lat, (size_t)c->pairs, 50);
	measure_syncs(r, tr, v, n, c);
	/*
	 * The GPU ahead: the quickest start on an idle GPU is late, and so is
	 * every start after its call began (no item starts before its call on
	 * one clock, so that bounds the offset: the lesser of the two).
	 */
	if (c->sync_call != NOSTR) {
		/* one clock */
	} else if (c->idle && c->idle_min >= CLOCK_OFFSET_US && c->start_min >= CLOCK_OFFSET_US) {
		c->offset = 1;
		c->offset_us = c->idle_min < c->start_min ? c->idle_min : c->start_min;
	} else if (c->pairs && c->start_min <= -CLOCK_OFFSET_US) {
		c->offset = 1;
		c->offset_us = c->start_min;
	}
	imap_free(&by_corr);
	free(v);
	free(lat);
	free(sufend);
	free(seen);
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
	imap by_corr = { 0 };
	uint64_t *x;
	int isnew, at_launch;
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
	if (at_launch)
		for (i = 0; i < tr->nln; i++) {
			x = imap_put(&by_corr, (uint64_t)tr->ln[i].corr, &isnew);
			if (isnew)
				*x = i;
		}
	for (i = 0; i < tr->nk; i++) {
		const struct tkernel *k = &tr->k[i];
		double cpu_ts = k->ts;
		const char *stage;
		if (at_launch && k->has_corr && (x = imap_get(&by_corr, (uint64_t)k->corr)))
			cpu_ts = tr->ln[*x].ts;
		else if (ck.offset)
			cpu_ts = k->ts - ck.offset_us;
		stage = strcmp(path_stage, "all") != 0 ? path_stage : resolve_stage(&sg, k, cpu_ts);
		if (late_stages)
			run_add(&runs, tr->t, stage, trace_thread_pid(r, k->thread) == sel);
		else
			write_kernel(r, tr, k, stage, trace_thread_pid(r, k->thread) == sel);
	}
	if (late_stages)
		run_flush(&runs, tr->t);
	imap_free(&by_corr);
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
