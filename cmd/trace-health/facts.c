/*
 * Measure a staged trace for trace-health: what its records hold and lack,
 * as counts and times; checks.c decides what they mean.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "health.h"
#include "imap.h"
#include "json.h"
#include "text.h"
#include "xalloc.h"
#include "xsort.h"

/*
 * Times closer than this (1 ns, below the trace's resolution) are equal: a
 * kernel starts before its launch, or before the previous kernel's end,
 * only by more.
 */
#define EPS_US 1e-3
/* Timestamps outside [0, 1e17] us are clock garbage (1e17 us is year 5138). */
#define ABSURD_US 1e17
/*
 * A kernel that starts more than an hour after its launch call: no GPU
 * queue holds work that long, and a profile spans seconds to minutes; one
 * such kernel makes the stage's span, idle time and last step hours long.
 */
#define ABSURD_DELAY_US 3.6e9

static const char *
S(const struct trace_reader *r, uint32_t id)
{
	return strtab_str(r->str, id);
}

/* Sum of an integer member of a JSON object member of the stats record. */
static long long
stats_int(const struct rstr *obj, const char *key)
{
	json_doc d = { 0 };
	long long v = 0;
	int i;

	if (obj->s && json_parse(&d, obj->s, obj->n) == 0 && d.ntok > 0 &&
	    d.tok[0].type == JSMN_OBJECT && (i = json_get(&d, 0, key)) >= 0 &&
	    !json_coerce_int(&d, i, &v))
		v = 0;
	json_doc_free(&d);
	return v;
}

/* Append "reason N" to why, ", " between. */
static void
add_why(char *why, size_t size, const char *reason, size_t n, long long count)
{
	size_t len = strlen(why);

	if (len + 1 < size)
		snprintf(why + len, size - len, "%s%.*s %lld", len ? ", " : "", (int)n, reason, count);
}

/*
 * The sum of every member of a JSON object of counts (stats.skipped), each
 * nonzero one also named in why.
 */
static long long
stats_sum(const struct rstr *obj, char *why, size_t size)
{
	json_doc d = { 0 };
	long long v, sum = 0;
	const char *key;
	size_t n;
	int k, i;

	if (obj->s && json_parse(&d, obj->s, obj->n) == 0 && d.ntok > 0 &&
	    d.tok[0].type == JSMN_OBJECT)
		for (k = 0, i = 1; k < d.tok[0].size; k++, i = json_skip(&d, i + 1))
			if (json_coerce_int(&d, i + 1, &v) && v) {
				sum += v;
				key = json_span(&d, i, &n);
				add_why(why, size, key, n, v);
			}
	json_doc_free(&d);
	return sum;
}

static void
measure_stats(struct facts *f, const struct trace *tr)
{
	static const char *const extra[] = { "kernels_without_positive_dur", "non_object_events" };
	const struct rec_stats *s = &tr->stats;
	long long v;
	size_t i;

	f->events = s->events;
	f->cpu_ops = s->cpu_ops;
	f->frames = s->frames;
	/*
	 * stats.skipped counts by reason; GPU events without a positive dur and
	 * array elements that are not objects are skipped too, counted apart.
	 * GPU items of dur 0 ran, shorter than the timer's resolution: no
	 * data is missing (issue 25), so they are no skipped events here.
	 */
	f->zero_dur = stats_int(&s->warnings, "kernels_zero_dur");
	f->launch_zero_dur = stats_int(&s->warnings, "launches_zero_dur");
	f->skipped = stats_sum(&s->skipped, f->skipped_why, sizeof f->skipped_why);
	for (i = 0; i < 2; i++) {
		v = stats_int(&s->warnings, extra[i]);
		if (i == 0)
			v -= f->zero_dur;
		if (v > 0) {
			f->skipped += v;
			add_why(f->skipped_why, sizeof f->skipped_why, extra[i], strlen(extra[i]), v);
		}
	}
	f->missing_close = stats_int(&s->warnings, "missing_close_bracket") != 0;
	f->event_arrays = stats_int(&s->warnings, "duplicate_trace_events");
}

/* The trace record's capture_flags: which profiler options were on. */
static void
measure_flags(struct facts *f, const struct trace_reader *r, const struct trace *tr)
{
	json_doc d = { 0 };
	const char *t;
	int i;

	f->time_base = tr->time_base;
	if (tr->capture_flags == NOSTR)
		return;
	t = S(r, tr->capture_flags);
	if (json_parse(&d, t, strlen(t)) == 0 && d.ntok > 0 && d.tok[0].type == JSMN_OBJECT) {
		f->flags_known = 1;
		i = json_get(&d, 0, "record_shapes");
		f->with_shapes = i >= 0 && json_kind(&d, i) == JK_TRUE;
	}
	json_doc_free(&d);
}

/* Take what main.c read of the gpu_pids and device records; f->sel is set. */
static void
facts_side(struct facts *f, const struct side_facts *sf)
{
	long long id;
	size_t i;
	char *end;

	f->has_latency = sf->has_latency;
	f->latency_p50 = sf->latency_p50;
	f->idle_starts = sf->idle_starts;
	f->idle_start_min = sf->idle_start_min;
	f->has_start_min = sf->has_start_min;
	f->start_min = sf->start_min;
	memcpy(f->sync_call, sf->sync_call, sizeof f->sync_call);
	f->sync_return = sf->sync_return;
	f->sync_wait = sf->sync_wait;
	f->has_offset = sf->has_offset;
	f->offset_us = sf->offset_us;
	/* Kineto's GPU process is the device index: the analyzed pid's device */
	id = f->sel != NOSTR ? strtoll(f->sel_name, &end, 10) : -1;
	if (f->sel == NOSTR || *f->sel_name == '\0' || *end != '\0')
		id = -1;
	for (i = 0; i < sf->ndev; i++)
		if (sf->dev_id[i] == id) {
			f->gpu = sf->dev[i];
			return;
		}
	if (sf->ndev)
		f->gpu = sf->dev[0];
}

/* ---- one pass over the kernels (issue 30: they wait in the reader's queues) ---- */

/* A kernel of the analyzed process, waiting for its launch: its correlation first. */
struct kwait {
	long long corr;
	double ts, dur;
	int compute;		/* cat "kernel" */
};

/* A kernel of the analyzed process on a stream, for the overlap sweep. */
struct sk {
	uint32_t stream, name;
	double ts, end;
	unsigned long long k;	/* record order: ties as a stable sort of the file's */
};

static int
sk_cmp(const void *a, const void *b, void *ctx)
{
	const struct sk *x = a, *y = b;

	(void)ctx;
	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return (x->k > y->k) - (x->k < y->k);
}

/* What the pass over the kernels leaves for the measures after it. */
struct kpass {
	struct xsort *corrs;	/* every kernel's correlation, ascending */
	struct xsort *wait;	/* struct kwait of the analyzed process's kernels with one */
	struct xsort *streams;	/* struct sk by (stream, ts, end) */
	int arch;		/* kernel_arch of the analyzed process's names */
};

static int name_arch(const char *name);
static void measure_kernels(struct facts *f, struct kpass *kp, struct xsort *by_corr);

/*
 * The GPU processes: kernel time per pid, summed in record order per pid
 * and then over the pids in first-seen order, as trace-stage sums them, so
 * the figures equal its gpu_pids record.  In the same pass: the analyzed
 * process's kernels without a launch to find, its kernels per stage (the
 * stages are slotted already), its streams' kernels, and the correlations
 * of all, for the joins after.
 */
static void
kernel_pass(struct facts *f, const struct trace_reader *r, struct trace *tr, struct kpass *kp)
{
	imap ix = { 0 }, seen = { 0 };
	uint32_t *pid = NULL;
	double *us = NULL;
	size_t i, n = 0, cap = 0, s;
	unsigned long long ki = 0;
	int isnew;
	struct tkcursor cur;
	const struct tkernel *k;

	memset(kp, 0, sizeof *kp);
	kp->corrs = xsort_new(sizeof(long long), xsort_by_ll, NULL);
	kp->wait = xsort_new(sizeof(struct kwait), xsort_by_ll, NULL);
	kp->streams = xsort_new(sizeof(struct sk), sk_cmp, NULL);
	trace_kernel_rewind(tr, &cur);
	for (; (k = trace_kernel_next(&cur)) != NULL; ki++) {
		uint32_t p = trace_thread_pid(r, k->thread);
		uint64_t *v = imap_put(&ix, p, &isnew);
		if (isnew) {
			size_t c2 = cap;
			xgrow(&pid, &c2, n + 1, sizeof *pid);
			if (c2 != cap)
				us = xreallocarray(us, c2, sizeof *us);
			cap = c2;
			pid[n] = p;
			us[n] = 0.0;
			*v = n++;
		}
		us[*v] += k->dur;
		if (k->has_corr)
			xsort_add(kp->corrs, &k->corr);
		if (p != f->sel)
			continue;
		f->nk_sel++;
		if (!k->has_corr) {
			/* no correlation: no launch (the rest, with theirs, in measure_kernels) */
			double abs_ts = k->ts + (double)f->time_base;
			if (abs_ts < 0 || abs_ts > ABSURD_US)
				f->absurd++;
			if (strcasecmp(S(r, k->cat), "kernel") == 0) {
				f->compute++;
				f->compute_no_launch++;
			}
		} else {
			struct kwait w = { k->corr, k->ts, k->dur,
			    strcasecmp(S(r, k->cat), "kernel") == 0 };
			xsort_add(kp->wait, &w);
		}
		if (strcasecmp(S(r, k->cat), "cuda_sync") != 0) {
			struct sk x = { k->stream != NOSTR ? k->stream : trace_thread_tid(r, k->thread),
			    k->name, k->ts, k->ts + k->dur, ki };
			xsort_add(kp->streams, &x);
			f->sel_us += k->dur;
		}
		if (k->stage != NOSTR)
			for (s = 0; s < f->nst; s++)
				if (strcmp(S(r, k->stage), f->st[s].name) == 0)
					f->st[s].kernels++;
		imap_put(&seen, k->name, &isnew);
		if (isnew) {
			int a = name_arch(S(r, k->name));
			if (a > kp->arch)
				kp->arch = a;
		}
	}
	for (i = 0; i < n; i++) {
		f->total_us += us[i];
		if (pid[i] != f->sel)
			f->other_us += us[i];
	}
	f->npids = n;
	f->nk = (long long)tr->nk;
	imap_free(&ix);
	imap_free(&seen);
	free(pid);
	free(us);
}

static void
kpass_free(struct kpass *kp)
{
	xsort_free(kp->corrs);
	xsort_free(kp->wait);
	xsort_free(kp->streams);
}

/* ---- CUDA-graph capture regions ---- */

struct region {
	uint32_t thread;
	double ts, end;
};

static int
frame_cmp(const void *a, const void *b)
{
	const struct tframe *x = *(const struct tframe *const *)a;
	const struct tframe *y = *(const struct tframe *const *)b;

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static int
region_cmp(const void *a, const void *b)
{
	const struct region *x = a, *y = b;

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/*
 * torch.cuda.graph captures between its capture_begin and capture_end
 * calls: launches made in between on that thread are recorded into the
 * graph, not run, so they never get a kernel.  A region runs from the end
 * of the capture_begin frame (which may itself launch work that runs) to
 * the start of the next capture_end frame on the same thread.
 */
static struct region *
capture_regions(const struct trace_reader *r, const struct trace *tr, size_t *nreg)
{
	const struct tframe **fr = xmalloc((tr->nfr ? tr->nfr : 1) * sizeof *fr);
	struct region *reg = xmalloc((tr->nfr ? tr->nfr : 1) * sizeof *reg);
	const struct tframe *open = NULL;
	size_t i, n = 0;

	for (i = 0; i < tr->nfr; i++)
		fr[i] = &tr->fr[i];
	xqsort(fr, tr->nfr, sizeof *fr, frame_cmp);
	for (i = 0; i < tr->nfr; i++) {
		const char *name = S(r, fr[i]->name);
		if (open && open->thread != fr[i]->thread)
			open = NULL;
		if (text_ends(name, strlen(name), ": capture_begin")) {
			open = fr[i];
		} else if (open && text_ends(name, strlen(name), ": capture_end")) {
			reg[n].thread = open->thread;
			reg[n].ts = open->ts + open->dur;
			reg[n].end = fr[i]->ts;
			n++;
			open = NULL;
		}
	}
	free(fr);
	xqsort(reg, n, sizeof *reg, region_cmp);
	*nreg = n;
	return reg;
}

/* Is ts on thread inside a capture region?  reg sorted by (thread, ts). */
static int
in_capture(const struct region *reg, size_t n, uint32_t thread, double ts)
{
	size_t lo = 0, hi = n, mid;

	while (lo < hi) {	/* the first region after (thread, ts) */
		mid = (lo + hi) / 2;
		if (reg[mid].thread < thread || (reg[mid].thread == thread && reg[mid].ts <= ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && reg[lo - 1].thread == thread && ts <= reg[lo - 1].end;
}

/* ---- launches against kernels ---- */

/* A launch record as the joins read it: its correlation first. */
struct lrec {
	long long corr;
	unsigned long long l;	/* its index among the trace's launch records */
	double ts, dur;
};

struct eager {
	double ts;
	int missing;
};

static int
eager_cmp(const void *a, const void *b, void *ctx)
{
	const struct eager *x = a, *y = b;

	(void)ctx;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->missing - y->missing;
}

/*
 * Sort every launch into graph launches, captured launches and eager
 * launches, and count those whose correlation no kernel carries.  The
 * tail is the run of eager launches at the end of the trace whose kernels
 * are all missing, after at least one that has its kernel.  Leaves the
 * launches by correlation in *by_corr (the first of each first) for
 * measure_kernels.
 */
static void
measure_launches(struct facts *f, const struct trace_reader *r, struct trace *tr,
    struct kpass *kp, struct xsort **by_corr)
{
	struct region *reg;
	struct xsort *eg = xsort_new(sizeof(struct eager), eager_cmp, NULL);
	unsigned char *missing = xcalloc(tr->nln / 8 + 1, 1);
	const struct tcall *l;
	const struct lrec *p;
	const struct eager *e;
	const long long *kc;
	unsigned long long i = 0;
	size_t nreg;
	long long run = 0;
	int any_found = 0;

	*by_corr = xsort_new(sizeof(struct lrec), xsort_by_ll, NULL);
	if (tr->lq) {
		xsort_rewind(tr->lq);
		while ((l = xsort_next(tr->lq)) != NULL) {
			struct lrec x = { l->corr, i++, l->ts, l->dur };
			xsort_add(*by_corr, &x);
		}
	}
	/* a launch whose correlation no kernel record carries: its kernel is missing */
	kc = xsort_next(kp->corrs);
	while ((p = xsort_next(*by_corr)) != NULL) {
		while (kc && *kc < p->corr)
			kc = xsort_next(kp->corrs);
		if (!kc || *kc != p->corr)
			missing[p->l >> 3] |= (unsigned char)(1u << (p->l & 7));
	}
	reg = capture_regions(r, tr, &nreg);
	f->capture_regions = (long long)nreg;
	i = 0;
	if (tr->lq) {
		xsort_rewind(tr->lq);
		while ((l = xsort_next(tr->lq)) != NULL) {
			const char *name = S(r, l->name);
			size_t len = strlen(name);
			int miss = missing[i >> 3] >> (i & 7) & 1;
			i++;
			/* a copy's or set's call is kept only with its GPU item: never missing */
			if (l->kind != LAUNCH_KERNEL)
				continue;
			if (!f->has_first_launch || l->corr < f->first_launch_corr)
				f->first_launch_corr = l->corr;
			f->has_first_launch = 1;
			if (text_starts(name, len, "hip"))
				f->amd = 1;
			if (text_has_ci(name, len, "graphlaunch")) {
				f->graph++;
				f->graph_missing += miss;
			} else if (miss && nreg && in_capture(reg, nreg, l->thread, l->ts)) {
				f->captured++;
			} else {
				struct eager x = { l->ts, miss };
				f->eager++;
				f->eager_missing += miss;
				xsort_add(eg, &x);
			}
		}
	}
	f->nln = f->graph + f->captured + f->eager;
	/* the last run of missing ones, by time; none when no eager launch has its kernel */
	while ((e = xsort_next(eg)) != NULL) {
		if (e->missing) {
			run++;
		} else {
			run = 0;
			any_found = 1;
		}
	}
	f->tail_missing = any_found ? run : 0;
	xsort_free(eg);
	free(missing);
	free(reg);
}

/*
 * Compute kernels of the analyzed process without a launch, kernels that
 * start before their launch, and timestamps no clock gives: the kernels
 * with a correlation against the first launch of theirs.
 */
static void
measure_kernels(struct facts *f, struct kpass *kp, struct xsort *by_corr)
{
	const struct kwait *w;
	const struct lrec *p;
	struct lrec first;
	int have = 0;

	xsort_rewind(by_corr);
	p = xsort_next(by_corr);
	while ((w = xsort_next(kp->wait)) != NULL) {
		const struct lrec *v = NULL;
		double abs_ts = w->ts + (double)f->time_base;
		/* the first launch of each correlation up to the kernel's (the sort is stable) */
		while (p && (!have || first.corr < w->corr)) {
			first = *p;
			have = 1;
			while ((p = xsort_next(by_corr)) != NULL && p->corr == first.corr)
				;
		}
		if (have && first.corr == w->corr)
			v = &first;
		if (abs_ts < 0 || abs_ts > ABSURD_US ||
		    (v && w->ts - (v->ts + v->dur) > ABSURD_DELAY_US))
			f->absurd++;
		if (w->compute) {
			f->compute++;
			f->compute_no_launch += v == NULL;
			/*
			 * Correlation ids grow with every runtime call: one below the
			 * first launch's was launched before the profiler recorded the
			 * host, and ran once it recorded the GPU (issue 25).
			 */
			if (!v && f->has_first_launch && w->corr < f->first_launch_corr)
				f->compute_before++;
		}
		if (v && w->ts < v->ts - EPS_US) {
			double d = v->ts - w->ts;
			f->skew++;
			if (d > f->skew_max)
				f->skew_max = d;
		}
	}
}

/* ---- same-stream overlap ---- */

/*
 * The GPU architecture the kernel names give away: cuBLAS, cuBLASLt and
 * CUTLASS kernels carry it ("sm90_xmma_gemm", "nvjet_sm103_tst").  A device
 * runs kernels built for older architectures too, so the highest number
 * found over the analyzed process's names is the closest to the device
 * (kernel_pass takes the highest).  Returns one name's, 0 when it names none.
 */
static int
name_arch(const char *name)
{
	const char *p;
	int best = 0;

	for (p = name; (p = strstr(p, "sm")) != NULL; p += 2) {
		const char *q = p + 2;
		int v = 0, nd = 0;
		if (p > name && ((p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= 'A' && p[-1] <= 'Z')))
			continue;
		if (*q == '_')
			q++;
		while (*q >= '0' && *q <= '9' && nd < 4) {
			v = v * 10 + (*q++ - '0');
			nd++;
		}
		if ((nd == 2 || nd == 3) && !(*q >= '0' && *q <= '9') && v >= 50 && v > best)
			best = v;
	}
	return best;
}

/*
 * Kernels of the analyzed process that start before the previous kernel
 * on their stream ends.  cuda_sync events are waits, not work, and overlap
 * the work they wait for by nature.  Then why, when the pattern tells:
 * merged processes repeat each kernel (most overlapping kernels have the
 * name of the one before); programmatic dependent launch (sm90 and later)
 * starts a kernel shortly before the previous one ends, which it then
 * outlasts.
 */
static void
measure_overlap(struct facts *f, struct kpass *kp)
{
	const struct sk *p;
	struct sk prev = { 0, 0, 0, 0, 0 }, v;
	long long n = 0;
	int arch;

	f->overlap_partial = 1;
	for (; (p = xsort_next(kp->streams)) != NULL; prev = v, n++) {
		v = *p;
		if (n == 0 || v.stream != prev.stream || v.ts >= prev.end - EPS_US)
			continue;
		f->overlaps++;
		f->overlaps_same += v.name == prev.name;
		f->overlap_us += (v.end < prev.end ? v.end : prev.end) - v.ts;
		if (prev.end - v.ts > f->overlap_max)
			f->overlap_max = prev.end - v.ts;
		if (v.end <= prev.end)
			f->overlap_partial = 0;
	}
	f->stream_kernels = n;
	if (f->overlaps == 0) {
		f->cause = OV_NONE;
		return;
	}
	/* the device record's compute capability, else what kernel names tell */
	if (f->gpu.known && !f->gpu.amd && f->gpu.major >= 9) {
		arch = (int)(f->gpu.major * 10 + (f->gpu.minor > 0 ? f->gpu.minor : 0));
		f->arch = f->gpu.major >= 10 ? "Blackwell" : "Hopper";
		snprintf(f->arch_tag, sizeof f->arch_tag, "compute capability %lld.%lld",
		    f->gpu.major, f->gpu.minor > 0 ? f->gpu.minor : 0);
	} else if (f->gpu.known && (f->gpu.amd || f->gpu.major >= 0)) {
		arch = f->gpu.amd ? -1 : (int)(f->gpu.major * 10);	/* older than sm90, or AMD */
	} else {
		arch = kp->arch;
		if (arch >= 90) {
			f->arch = arch >= 100 ? "Blackwell" : "Hopper";
			snprintf(f->arch_tag, sizeof f->arch_tag, "sm%d", arch);
		}
	}
	if (f->overlaps_same * 2 >= f->overlaps)
		f->cause = OV_MERGED;
	else if (f->overlaps_same == 0 && f->overlap_partial && f->overlap_max < 10.0 &&
	    !f->amd && !f->gpu.amd && (arch == 0 || arch >= 90))
		f->cause = OV_PDL;
	else if (f->overlaps_same * 2 < f->overlaps && f->overlaps * 100 <= n &&
	    f->overlap_us <= 0.001 * f->sel_us)
		f->cause = OV_NEGLIGIBLE;
	else
		f->cause = OV_UNKNOWN;
}

/* ---- stages and steps ---- */

static struct stage_facts *
stage_slot(struct facts *f, const char *name)
{
	size_t i;

	for (i = 0; i < f->nst; i++)
		if (strcmp(f->st[i].name, name) == 0)
			return &f->st[i];
	if (f->nst == NSTAGE)
		return NULL;
	memset(&f->st[f->nst], 0, sizeof f->st[0]);
	f->st[f->nst].name = name;
	return &f->st[f->nst++];
}

/* "extend" or "decode" as a static string, or NULL. */
static const char *
stage_name(const char *s)
{
	if (strcmp(s, "extend") == 0)
		return "extend";
	if (strcmp(s, "decode") == 0)
		return "decode";
	return NULL;
}

/*
 * The stages the trace names: its path's stage when that is not "all"
 * (trace-stage then gives every kernel that stage), else the stages its
 * annotations name; kernel_pass counts their kernels.
 */
static void
stage_slots(struct facts *f, const struct trace_reader *r, const struct trace *tr)
{
	const char *ps = stage_name(S(r, tr->stage));
	struct stage_facts *sf;
	size_t i;

	if (ps) {
		sf = stage_slot(f, ps);
		sf->from_path = 1;
	} else {
		for (i = 0; i < tr->nan; i++) {
			const char *an;
			if (tr->an[i].stage == NOSTR || !(an = stage_name(S(r, tr->an[i].stage))))
				continue;
			if ((sf = stage_slot(f, an)))
				sf->windows++;
		}
	}
}

/*
 * Launches inside a stage's CPU windows, counted only for stages without
 * kernels (kernel_pass counted those), where the detail needs them.
 */
static void
stage_launches(struct facts *f, const struct trace_reader *r, struct trace *tr)
{
	const struct tcall *l;
	size_t i, s;

	for (s = 0; s < f->nst; s++) {
		if (f->st[s].kernels || f->st[s].from_path || !tr->lq)
			continue;
		xsort_rewind(tr->lq);
		while ((l = xsort_next(tr->lq)) != NULL)
			for (i = 0; i < tr->nan; i++) {
				const struct tannot *a = &tr->an[i];
				const char *an;
				if (a->stage == NOSTR || !(an = stage_name(S(r, a->stage))) ||
				    strcmp(an, f->st[s].name) != 0 ||
				    strcmp(S(r, a->cat), "gpu_user_annotation") == 0)
					continue;
				if (l->ts >= a->ts && l->ts <= a->ts + a->dur) {
					f->st[s].launches++;
					break;
				}
			}
	}
}

/*
 * Steps: CPU annotations of one iteration, in the first vocabulary the
 * trace uses: torch.profiler's "ProfilerStep#N", a scheduler's "step[...]",
 * vLLM's "execute_..._context_..._generation_...".
 */
static void
measure_steps(struct facts *f, const struct trace_reader *r, const struct trace *tr)
{
	static const char *const kind[] = {
		"ProfilerStep#N", "step[...]", "execute_<n>_context_<...>_generation_<...>"
	};
	long long n[3] = { 0, 0, 0 };
	size_t i;
	int k;

	for (i = 0; i < tr->nan; i++) {
		const char *name = S(r, tr->an[i].name);
		size_t len = strlen(name);
		if (strcmp(S(r, tr->an[i].cat), "user_annotation") != 0)
			continue;
		if (text_starts(name, len, "ProfilerStep#"))
			n[0]++;
		else if (text_starts(name, len, "step["))
			n[1]++;
		else if (text_starts(name, len, "execute_") && text_has(name, len, "_context_") &&
		    text_has(name, len, "_generation_"))
			n[2]++;
	}
	for (k = 0; k < 3; k++)
		if (n[k]) {
			f->steps = n[k];
			f->step_kind = kind[k];
			return;
		}
}

void
facts_measure(struct facts *f, const struct trace_reader *r, struct trace *tr,
    uint32_t sel, const struct side_facts *sf)
{
	struct kpass kp;
	struct xsort *by_corr;

	memset(f, 0, sizeof *f);
	f->path = S(r, tr->path);
	f->role = S(r, tr->role);
	f->sel = sel;
	f->sel_name = sel != NOSTR ? S(r, sel) : "";
	if (sf)
		facts_side(f, sf);
	measure_stats(f, tr);
	measure_flags(f, r, tr);
	stage_slots(f, r, tr);
	kernel_pass(f, r, tr, &kp);
	measure_launches(f, r, tr, &kp, &by_corr);
	measure_kernels(f, &kp, by_corr);
	measure_overlap(f, &kp);
	stage_launches(f, r, tr);
	measure_steps(f, r, tr);
	xsort_free(by_corr);
	kpass_free(&kp);
}
