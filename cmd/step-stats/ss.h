/*
 * step-stats internals: the GPU work items of one trace, the interval
 * figures computed from them (busy.c), the step markers and their work
 * (steps.c), the eager kernels of graph-mode stages (escape.c), and the
 * breakdowns of issue 32: launch delays (delay.c), streams (streams.c) and
 * GPU annotations (annot.c).
 *
 * Times are microseconds as in the records: relative to the trace's time
 * base (time_base_us, issue 25), so that they stay exact.  Strings are ids in the tool's
 * one string table (the trace reader's); NOSTR marks an absent one.  Every
 * array here is owned by the caller that passes it, unless a function says
 * it allocates.
 *
 * Issue 30: the items are never held together.  They are records in sorts
 * (xsort.h), each read in the order an analysis needs (by stage and start,
 * by start, by step, by stream), and every figure below is an accumulator
 * fed one item at a time in that order, in memory that grows with the
 * stages, streams, steps and kernel names, not with the items.
 */
#ifndef SS_H
#define SS_H

#include <stddef.h>
#include <stdint.h>

#include "imap.h"
#include "trace.h"
#include "xsort.h"

/*
 * Corrupt times (microseconds), as trace-extract and trace-stage judge
 * them: a duration beyond a year, a timestamp beyond 1e17 either way.  A
 * few would overflow every sum; items and markers with them, or with a
 * non-finite time, are left out (ss_bad_time).
 */
#define SS_DUR_ABSURD_US 3.2e13
#define SS_TS_ABSURD_US 1e17

/*
 * Is (ts, dur) unusable: not finite, or corrupt as above?  ts is absolute:
 * a record's ts plus its trace's time base (trace.h).
 */
static inline int
ss_bad_time(double ts, double dur)
{
	return !(ts >= -SS_TS_ABSURD_US && ts <= SS_TS_ABSURD_US && dur <= SS_DUR_ABSURD_US &&
	    dur >= -SS_DUR_ABSURD_US);
}

/*
 * Busy-time buckets, in precedence order: where items of several buckets
 * run at once, the time counts once, for the lowest-numbered bucket.
 */
enum { B_COMPUTE, B_COMM, B_MEM, B_COUNT };

/* One GPU work item of the analyzed process (man page: "GPU work item"). */
struct item {
	double ts, end, dur;	/* dur >= 0, end = ts + dur */
	uint32_t stage;		/* the kernel's stage, else the trace's path stage */
	uint32_t name;		/* raw kernel name */
	uint32_t stream;	/* the kernel record's stream, else its tid (string id) */
	uint32_t canon;		/* canonical name (the kernel table's key), string id */
	double delay;		/* launch delay (has_delay): ts - the call's end */
	long long launch;	/* index among the trace's launches, or -1 */
	double lts, ldur;	/* its launch call's start and duration (launch >= 0) */
	uint32_t lname, lpid;	/* the call's name and process (string ids) */
	long step;		/* index into the steps, or -1 */
	unsigned long long ord;	/* input order, the last sort key */
	unsigned char lkind;	/* the call's LAUNCH_* */
	unsigned char bucket;	/* B_* */
	unsigned graph : 1;	/* launched by a graph launch */
	unsigned kernel : 1;	/* a kernel (not a copy or set) */
	unsigned first : 1;	/* starts first among the items of its launch */
	unsigned has_delay : 1;	/* first, with a launch: it carries its launch's delay */
};

/*
 * The parts of an item the other orders need, so that its sorts hold less
 * than the whole item: the trace's time line (gaps_sweep: the item after a
 * gap, with its launch call), the steps' (steps_finish) and the streams'
 * (annot_write).
 */
struct gitem {
	double ts, end;
	unsigned long long ord;
	double lts, ldur;	/* as in struct item */
	long long launch;
	uint32_t name, lname;
	unsigned char first;
};

struct sitem {
	long step;
	double ts, end, dur;
	unsigned long long ord;
	uint32_t stage;
	unsigned char bucket;
};

struct aitem {
	uint32_t stage, stream;
	double ts, end;
	unsigned long long ord;
};

/* Interval figures of one set of items (a stage); see step-stats(1). */
struct figures {
	long long kernels, eager;
	long long copies;	/* of the kernels (work items), the copies and sets */
	double kernel_us, busy_us, span_us, idle_us, idle_launch_us;
	double first, last;	/* the stage's span: its first start, its last end */
	double other_us;	/* span time when only other stages' items ran (trace_idle) */
	double idle_sync_us;	/* idle while the host sat in a blocking call (trace_idle) */
	double sync_max_us;	/* the largest such part of one gap, */
	double sync_max_gap;	/* that gap's start, */
	double sync_max_ts, sync_max_end;	/* and the window after its host-bound part */
	double bucket_us[B_COUNT];
	double graph_us;
	double comm_total_us;	/* union of the communication items (issue 32) */
	double comm_overlap_us;	/* the part of it during which a compute item ran */
	int graph_mode;		/* at least one item was launched by a graph launch */
};

/*
 * The measure of a union of intervals fed in order of start (a start
 * never before the previous one's): constant memory, one pass (issue 30's
 * shape).  Touching intervals merge.  Zero-initialize to start.
 */
struct uacc {
	double ts, end, busy;
	int open;
};

static inline void
uacc_add(struct uacc *u, double ts, double end)
{
	if (!u->open) {
		u->ts = ts;
		u->end = end;
		u->open = 1;
	} else if (ts > u->end) {
		u->busy += u->end - u->ts;
		u->ts = ts;
		u->end = end;
	} else if (end > u->end) {
		u->end = end;
	}
}

static inline double
uacc_value(const struct uacc *u)
{
	return u->busy + (u->open ? u->end - u->ts : 0);
}

/*
 * Communication under compute, from three unions over the same items
 * (issue 32): |comm| + |compute| - |comm or compute| is the measure of
 * their intersection.  The unions are fed in order of start, so the
 * figure costs three accumulators, not a sweep.
 */
struct commacc {
	struct uacc comm, compute, either;
};

static inline void
commacc_add(struct commacc *c, unsigned bucket, double ts, double end)
{
	if (bucket == B_COMM)
		uacc_add(&c->comm, ts, end);
	else if (bucket == B_COMPUTE)
		uacc_add(&c->compute, ts, end);
	else
		return;
	uacc_add(&c->either, ts, end);
}

/* The union of the communication items, and the part of it under compute (both >= 0). */
void commacc_value(const struct commacc *c, double *total, double *overlap);

/* ---- busy.c ---- */

/* Stage order: stage_index() (extend, decode, all, others), then the text. */
int stage_cmp(const strtab *str, uint32_t a, uint32_t b);

/*
 * Item orders for the sorts (xsort.h comparators): struct item by stage
 * order (stage_cmp; ctx is the string table), then start, end and input
 * order (items_by_stage: each stage one run sorted by start); struct gitem
 * by start, end and input order alone (items_by_start: the trace's time
 * line).
 */
int items_by_stage(const void *a, const void *b, void *str);
int items_by_start(const void *a, const void *b, void *ctx);

/*
 * The figures of one stage, fed its items in order of start (a run of
 * items_by_stage).  fig_init starts, fig_add takes each item, fig_done
 * fills *f and frees the scratch (the items running at once).  Every
 * figure is finite and non-negative; idle_us is span_us - busy_us here
 * (its own gaps); gaps_sweep sets the idle figures.
 */
struct hend;
struct figacc {
	struct figures f;
	double cur_end, busy_ts;
	struct commacc ca;
	long long eager;
	/* the bucket sweep: the ends still to come, a heap */
	struct hend *h;
	size_t nh, caph;
	long cnt[B_COUNT], graph;
	double prev;
	int any;
};
void fig_init(struct figacc *a);
void fig_add(struct figacc *a, const struct item *x);
void fig_done(struct figacc *a, struct figures *f);

struct span {
	double ts, end;
};

/*
 * The host's blocking calls (issue 25): calls that return only once GPU
 * work is done, during which the host could submit nothing: the trace's
 * sync records (cudaDeviceSynchronize, cudaStreamSynchronize,
 * cudaEventSynchronize, their HIP forms) and the launches of synchronous
 * copies (cudaMemcpy, hipMemcpyWithStream: kind memcpy, no "Async").  c:
 * the calls sorted by start; u: the union of their intervals, sorted,
 * disjoint.  Built by blockset_item for each item (in stage order) and
 * blockset_finish.
 */
struct bcall {
	double ts, end;
	uint32_t name;
};

struct blockset {
	struct bcall *c;
	size_t n, cap;
	struct span *u;
	size_t nu;
	imap pids;		/* host processes that launched the items */
	unsigned char *seen;	/* per launch: met already */
	size_t nseen;
};

/* Start a blockset for a trace of nln launches. */
void blockset_init(struct blockset *bs, size_t nln);
/* An item: its launch's process, and its launch when that is a synchronous copy. */
void blockset_item(struct trace_reader *r, const struct trace *tr, struct blockset *bs,
    const struct item *x);
/* The trace's sync records on those processes; then the calls sorted and their union. */
void blockset_finish(struct trace_reader *r, struct trace *tr, struct blockset *bs);
void blockset_free(struct blockset *bs);

/*
 * The call of bs that overlaps [ts, end) longest (the first by start of a
 * tie); NOSTR when none does.
 */
uint32_t blockset_call(const struct blockset *bs, double ts, double end);

/*
 * The idle gaps step-stats writes as idle_gap records (issue 29), per
 * trace and stage: the SS_IDLE_GAPS longest and, when the host-bound part
 * is measured, the SS_IDLE_GAPS with the longest host-bound part, so that
 * an annotated trace shows where the GPU waited without the stream growing
 * with the kernels.  Only gaps of at least SS_IDLE_GAP_MIN_US count.
 */
#define SS_IDLE_GAPS 32
/* Gaps shorter than this (microseconds) are launch spacing, not waiting: none is written. */
#define SS_IDLE_GAP_MIN_US 1.0

/*
 * One idle gap [ts, end) of the trace: no item of any stage ran in it.
 * host_us: its host-bound part (until the launch call of the item after
 * it ended); sync_us: of the rest, the time the host sat in a blocking
 * call; next: the item after it.
 */
struct gap {
	double ts, end, host_us, sync_us;
	struct gitem next;
};

/* A stage's chosen gaps, at most 2 * SS_IDLE_GAPS. */
struct gapsel {
	struct gap *by_dur, *by_host;	/* the best so far, best first */
	size_t ndur, nhost;
};

/*
 * The trace's gaps, from every item in order of start (items_by_start):
 * each stage's idle_us and idle_launch_us become the trace's gaps inside
 * its span (issue 25: time with no item of any stage running, so that
 * stages whose items interleave do not count each other's work as idle),
 * with other_us (the rest of the span outside the stage's busy time) and
 * the blocking-call figures (idle_sync_us, sync_max_*); sel[k] gets stage
 * k's chosen gaps (by_host: ranked by the host-bound part too).  stages:
 * the ns stage ids of f[]; bs may be NULL (no blocking part).
 */
void gaps_sweep(struct xsort *by_start, const uint32_t *stages, size_t ns, struct figures *f,
    const struct blockset *bs, int by_host, struct gapsel *sel);
/* A stage's chosen gaps in order of start; *n their count (a heap array, or NULL). */
struct gap *gaps_chosen(struct gapsel *sel, size_t *n);

/* ---- steps.c ---- */

/* Step marker families, in the order a trace's family is chosen. */
enum { SF_NONE, SF_SGLANG, SF_VLLM, SF_PYTORCH };

/*
 * What a marker name says: its family (SF_*), the batch size and token
 * count when it carries them (has_* set), and the stage it names
 * ("extend", "decode") or NULL.
 */
struct marker {
	int family;
	int has_batch, has_tokens;
	long long batch, tokens;
	const char *stage;	/* static string or NULL */
};

/* Classify and parse a marker name s[0..n); family SF_NONE when it is none. */
void marker_parse(const char *s, size_t n, struct marker *m);

/* One step: a marker of the trace's chosen family and the work it launched. */
struct step {
	double ts, dur;		/* the marker's CPU span (dur >= 0) */
	uint32_t name, pid;	/* pid: string id of the marker's process */
	uint32_t stage;		/* resolved by steps_finish */
	struct marker m;
	size_t ord;		/* input order, the last sort key */
	long long kernels;
	double busy_us, span_us;
	double comm_total_us, comm_overlap_us;	/* as in struct figures */
	double gpu_ts, gpu_end;	/* the first start, the last end of its items (kernels > 0) */
	double period_us;	/* steps_periods */
	int last;		/* steps_periods: no later step on its process */
};

/*
 * The steps of a trace: the CPU-side annotations (cat other than
 * gpu_user_annotation) of the first family present among SGLang, vLLM and
 * PyTorch, sorted by start (then input order).  Returns the count and
 * sets *out to a new array (NULL when none); the caller frees it.
 */
size_t steps_find(struct trace_reader *r, const struct trace *tr, struct step **out);

/*
 * The step of an item: the step whose marker contains its launch call's
 * start, on the same process (the latest-starting such marker); -1 for
 * an item without a launch, or outside every marker.  maxend: the
 * markers' prefix maximum of ends (steps_maxend, a heap array the caller
 * frees).
 */
double *steps_maxend(const struct step *st, size_t nst);
long step_of(const struct step *st, size_t nst, const double *maxend, const struct item *x);

/* struct sitem by step (then start, end and input order), for steps_finish. */
int items_by_step(const void *a, const void *b, void *ctx);

/*
 * Per step: kernels, busy and span of its items, their communication
 * total and overlap (issue 32), and its stage (the stage
 * holding most of its items' time; without items the trace's path stage,
 * else the stage the marker names, else "all").  by_step: the items in
 * items_by_step order.
 */
void steps_finish(struct trace_reader *r, const struct trace *tr, struct step *st, size_t nst,
    struct xsort *by_step);

/*
 * Each step's period (step-stats(1), issue 25): from its start to the
 * start of the next step of its process (a complete period), the last
 * one's (last set) to the later of its marker's end and its GPU work's
 * end, that end taken back to the host's clock by offset_us (the trace's
 * clock offset, gpu_pids.clock_offset_us, microseconds, positive when the
 * GPU clock is ahead) when has_offset.  st sorted by start, finished
 * (steps_finish).
 */
void steps_periods(struct step *st, size_t nst, int has_offset, double offset_us);

/*
 * The count of tokens a step moved, for tokens per second: the tokens its
 * marker names, else, in the decode stage, its batch (one token a request);
 * returns 0 when it has neither.
 */
int step_tokens(const struct trace_reader *r, const struct step *s, double *tokens);

/*
 * Nearest-rank percentile p (1..100) of v[0..n), n > 0, sorted ascending:
 * the smallest value with at least p % of the values at or below it.
 */
double percentile(const double *v, size_t n, int p);

/* ---- delay.c: launch delays (issue 32) ---- */

/*
 * A launch delay past this counts as an outlier (launch_delay.over):
 * Holistic Trace Analysis's default launch_delay_cutoff, 100 us.
 */
#define LD_OVER_US 100.0

/*
 * The launch delays of a trace: each item that carries its launch's delay
 * goes into two sorts (by stage, and by stage and kernel name), and each
 * item's time into its name's total, in stage order (delay_item); then
 * per stage, in the same order, the launch_delay record and its
 * kernel_delay records (delay_write: f the stage's figures, for the
 * verdict; offset_us the trace's clock offset when has_offset, then only
 * the count is written, step-stats(1)).
 */
struct delays;
struct delays *delays_new(void);
void delay_item(struct delays *d, size_t stage, const struct item *x);
void delay_write(struct delays *d, const struct trace_reader *r, long long t, size_t k,
    uint32_t stage, const struct figures *f, int has_offset, double offset_us);
void delays_free(struct delays *d);

/* ---- streams.c: per-stream busy and idle (issue 32) ---- */

/*
 * The stream_time records of one stage: one accumulator per distinct
 * stream, fed the stage's items in order of start (streams_item), then
 * written (streams_write, which frees it).
 */
struct streams;
struct streams *streams_new(void);
void streams_item(struct streams *s, const struct item *x);
void streams_write(struct streams *s, const struct trace_reader *r, long long t, uint32_t stage);

/* ---- annot.c: GPU time per GPU annotation (issue 32) ---- */

/*
 * The annotation_time records of one stage: the trace's
 * gpu_user_annotation ranges on process gpu_pid (a string id; NOSTR: none
 * qualify) against the stage's items, read from by_stream (struct aitem
 * of every item of the trace by stage, stream, start, end and input order:
 * items_by_stream) from its cursor on; n the stage's items.  busy_us is the stage's GPU busy
 * time (for share_pct).  The clipped pieces of the items inside ranges
 * wait in a sort.
 */
int items_by_stream(const void *a, const void *b, void *str);
void annot_write(struct trace_reader *r, const struct trace *tr, uint32_t gpu_pid,
    uint32_t stage, struct xsort *by_stream, const struct aitem **cur, size_t n, double busy_us);

/* ---- escape.c ---- */

/*
 * Remember a kernel_row's location for (t, stage, kernel), from on_line;
 * the first row of a key wins (kernel-map writes one per key).
 */
void escape_note_row(long long t, struct rstr stage, struct rstr kernel, struct rstr location);

/*
 * The graph_escape rows of one stage: escape_item takes its items in
 * order of start, grouping the eager kernels by canonical name; for a
 * graph-mode stage escape_add then queues the rows, largest total first
 * (kernel_us: the stage's kernel time, for share_pct); escape_drop
 * forgets them otherwise.
 */
struct escrows;
struct escrows *escape_new(void);
void escape_item(struct escrows *e, const struct item *x);
void escape_add(struct escrows *e, struct trace_reader *r, long long t, uint32_t stage,
    double kernel_us);
void escape_drop(struct escrows *e);

/* Write the queued rows with the locations noted so far, and free everything. */
void escape_flush(void);

#endif
