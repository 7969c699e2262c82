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
 */
#ifndef SS_H
#define SS_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

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
	long launch;		/* index into the trace's launches, or -1 */
	long step;		/* index into the steps, or -1 */
	size_t ord;		/* input order, the last sort key */
	unsigned char bucket;	/* B_* */
	unsigned graph : 1;	/* launched by a graph launch */
	unsigned kernel : 1;	/* a kernel (not a copy or set) */
	unsigned first : 1;	/* starts first among the items of its launch */
	unsigned has_delay : 1;	/* first, with a launch: it carries its launch's delay */
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
 * Sort items by stage order (stage_index(), then the stage text), then by
 * start, end and input order, so each stage is one run sorted by start.
 * str resolves the stage ids.
 */
void items_sort(struct item *it, size_t n, const strtab *str);

/*
 * The figures of items it[0..n), one stage's run as items_sort leaves it.
 * The sweep needs scratch for the items running at once (at most n),
 * allocated and freed here.  Every figure is finite and non-negative.
 * idle_us is span_us - busy_us here (its own gaps); trace_idle sets the
 * idle figures.
 */
void stage_figures(const struct item *it, size_t n, struct figures *f);

/*
 * Measure of the union of [ts, end] of spans sorted by start, and their
 * span (last end minus first start) in *span.  n may be 0 (both 0).
 */
struct span {
	double ts, end;
};
double union_measure(const struct span *s, size_t n, double *span);

/*
 * The host's blocking calls (issue 25): calls that return only once GPU
 * work is done, during which the host could submit nothing: the trace's
 * sync records (cudaDeviceSynchronize, cudaStreamSynchronize,
 * cudaEventSynchronize, their HIP forms) and the launches of synchronous
 * copies (cudaMemcpy, hipMemcpyWithStream: kind memcpy, no "Async").  c:
 * the calls sorted by start; u: the union of their intervals, sorted,
 * disjoint.  Built by blockset_make (block.c).
 */
struct bcall {
	double ts, end;
	uint32_t name;
};

struct blockset {
	struct bcall *c;
	size_t n;
	struct span *u;
	size_t nu;
};

/*
 * The blocking calls of the processes that launched it[0..n) (the
 * processes of their items' launch calls): the trace's sync records on
 * those processes and the synchronous copies among the items' launches.
 * Fills *bs with heap arrays (blockset_free).
 */
void blockset_make(struct trace_reader *r, const struct trace *tr, const struct item *it,
    size_t n, struct blockset *bs);
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
	const struct item *next;
};

/*
 * Replace each stage's idle_us and idle_launch_us with the trace's gaps
 * inside its span (issue 25): time with no item of any stage running, so
 * that stages whose items interleave do not count each other's work as
 * idle; set other_us (the rest of the span outside the stage's busy
 * time) and the blocking-call figures (idle_sync_us, sync_max_*).
 * it[0..n) as items_sort leaves it; stage k is it[bound[k]..bound[k+1])
 * with figures f[k] (stage_figures); bs may be NULL (no blocking part).
 * One pass over the items, merging the stages' runs by start.
 */
void trace_idle(const struct item *it, const size_t *bound, size_t ns, const struct tcall *ln,
    const struct blockset *bs, struct figures *f);

/*
 * The chosen gaps of stage k (the trace's gaps inside its span f->first
 * .. f->last, as in trace_idle), as above, in order of start; by_host:
 * rank by the host-bound part too.  Returns the count and sets *out to a
 * heap array (NULL when none) the caller frees; the gaps point into it[].
 */
size_t stage_gaps(const struct item *it, const size_t *bound, size_t ns, const struct tcall *ln,
    const struct blockset *bs, const struct figures *f, int by_host, struct gap **out);

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
 * Give each item the step whose marker contains its launch call's start,
 * on the same process (the latest-starting such marker).  Items without a
 * launch get none.
 */
void steps_assign(struct trace_reader *r, const struct trace *tr, struct step *st, size_t nst,
    struct item *it, size_t n);

/*
 * Per step: kernels, busy and span of its items, their communication
 * total and overlap (issue 32), and its stage (the stage
 * holding most of its items' time; without items the trace's path stage,
 * else the stage the marker names, else "all").  it[0..n) is reordered.
 */
void steps_finish(struct trace_reader *r, const struct trace *tr, struct step *st, size_t nst,
    struct item *it, size_t n);

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
 * The launch_delay record of one stage and its kernel_delay records:
 * it[0..n) is the stage's run (sorted by start); f its figures (for the
 * verdict).  offset_us: the trace's clock offset when has_offset (then
 * only the count is written, step-stats(1)).  Allocates 16 bytes per
 * delay of the stage, freed before returning.
 */
void delay_write(const struct trace_reader *r, long long t, uint32_t stage,
    const struct item *it, size_t n, const struct figures *f, int has_offset, double offset_us);

/* ---- streams.c: per-stream busy and idle (issue 32) ---- */

/*
 * The stream_time records of one stage's run it[0..n) (sorted by start):
 * one accumulator per distinct stream, one pass.
 */
void streams_write(const struct trace_reader *r, long long t, uint32_t stage,
    const struct item *it, size_t n);

/* ---- annot.c: GPU time per GPU annotation (issue 32) ---- */

/*
 * The annotation_time records of one stage: the trace's
 * gpu_user_annotation ranges on process gpu_pid (a string id; NOSTR: none
 * qualify) against the stage's run it[0..n), sorted by start.  busy_us is
 * the stage's GPU busy time (for share_pct).  Scratch: the stage's items
 * and the clipped pieces of the items inside ranges, freed here.
 */
void annot_write(struct trace_reader *r, const struct trace *tr, uint32_t gpu_pid,
    uint32_t stage, const struct item *it, size_t n, double busy_us);

/* ---- escape.c ---- */

/*
 * Remember a kernel_row's location for (t, stage, kernel), from on_line;
 * the first row of a key wins (kernel-map writes one per key).
 */
void escape_note_row(long long t, struct rstr stage, struct rstr kernel, struct rstr location);

/*
 * Queue the graph_escape rows of one graph-mode stage: the eager kernels
 * among it[0..n) grouped by canonical name, largest total first.
 * kernel_us is the stage's kernel time (for share_pct).
 */
void escape_add(struct trace_reader *r, long long t, uint32_t stage, const struct item *it,
    size_t n, double kernel_us);

/* Write the queued rows with the locations noted so far, and free everything. */
void escape_flush(void);

#endif
