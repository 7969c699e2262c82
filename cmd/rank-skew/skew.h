/*
 * rank-skew internals: the collective kinds, what one rank holds per stage
 * (its collectives in a compact array, the time of its other kernels by
 * name, and sums), and the per-stage analysis that matches, aligns and
 * writes the records (rank-skew(1), triage-records(5)).
 *
 * Times are microseconds on one time base for all ranks (base_ref below).
 * Names are ids in the caller's string table; kernel names are canonical
 * (canonicalize_name, the kernel table's row key).  Everything here belongs to the struct skew and is
 * released by skew_free.  Allocation failures end the run (xalloc.h);
 * nothing else here fails: problems in the data are warnings and records.
 */
#ifndef SKEW_H
#define SKEW_H

#include <stddef.h>
#include <stdint.h>

#include "imap.h"
#include "strtab.h"
#include "trace.h"

/* ---- kinds (kind.c) ---- */

enum ckind {
	CK_NONE,		/* not a collective */
	CK_ALL_REDUCE, CK_ALL_GATHER, CK_REDUCE_SCATTER, CK_ALL_TO_ALL, CK_SEND_RECV,
	CK_BROADCAST, CK_REDUCE,
	CK_NCCL,		/* another NCCL kernel (ncclDevKernel_Generic, ...) */
	CK_CUSTOM_ALL_REDUCE,	/* one-shot, two-shot, multimem, cross_device_reduce, ... */
	CK_MOE_DISPATCH, CK_MOE_COMBINE,
	CK_COUNT
};

/*
 * The collective kind (enum ckind) of the raw kernel name name[0..n), not
 * NUL-terminated, from its function name alone (template arguments and
 * parameters are not read, so cub's DispatchReduceByKey inside a template
 * is no MoE dispatch).  A MoE dispatch or combine is a kernel whose last
 * component names one and which kernel_category (kcat.h) calls
 * communication: an expert-parallel library's namespace or a name saying
 * all-to-all (issue 26 follow-up).  Returns CK_NONE for any other kernel.
 */
int coll_kind(const char *name, size_t n);

/* The kind's record text ("all-reduce", ...); static. */
const char *coll_kind_name(int kind);

/*
 * 1 for kinds in which every rank of the group takes part and which end on
 * all ranks together (all-reduce, all-gather, reduce-scatter, all-to-all,
 * custom all-reduce): the collectives the clocks are aligned on.
 */
int coll_kind_syncs(int kind);

/* ---- what is held per rank and stage ---- */

/*
 * One collective kernel of a rank, and what came before it on that rank
 * (issue 31, where a straggler's lateness is): the ts of its launch call
 * (NAN when no launch record has its correlation), and the window from
 * the rank's previous collective's end (the first: from its first kernel's
 * start in the trace) to its start, split into GPU busy (the union of every
 * kernel's interval, any stream) and idle.
 */
struct coll {
	double ts, dur;
	double launch;		/* launch call ts, same clock as ts; NAN: none */
	double busy_before, idle_before;
	uint32_t name;		/* canonical name id */
	unsigned char kind;	/* enum ckind */
};

/* The time of one other kernel name on a rank. */
struct ktime {
	uint32_t name;		/* canonical name id */
	long long launches;
	double us;
};

/* One rank in one stage. */
struct rankstage {
	long long rank;
	uint32_t stage;			/* stage name id */
	int ntraces;			/* traces whose kernels it holds */
	long long last_trace;		/* the latest of them, by position in the stream */
	struct coll *c;			/* collectives, in record order until sorted */
	size_t nc, capc;
	struct ktime *kt;		/* other kernels, by first appearance */
	size_t nkt, capkt;
	imap kix;			/* name id -> index into kt */
	double busy_us;			/* union of the kernel intervals */
	double kernel_us;		/* sum of kernel durations */
	double comm_us;			/* sum of collective durations */
	/* the analysis's results */
	double offset_us;		/* added to this rank's ts to align it */
	double wait_us;			/* sum of dur minus the shortest, matched collectives */
	long long last_arrivals, matched;
	int straggler;
	/*
	 * The straggler's alone (issue 31): over the matched collectives it
	 * arrived last at (late_n), its aligned start, launch call, busy and
	 * idle time before them minus the median of the other ranks', summed;
	 * its other kernels' time minus the others' median; and where the
	 * lateness is (lateness_where).  has_launch: every rank had the launch
	 * of at least one of them.
	 */
	long long late_n;
	double late_us, late_launch_us, late_busy_us, late_idle_us, kernel_excess_us;
	int has_launch;
};

/* Everything rank-skew holds: one rankstage per (rank, stage) seen. */
struct skew {
	strtab *str;			/* the caller's */
	struct rankstage *rs;
	size_t nrs, caprs;
	long long *expect;		/* ranks expected besides those seen (--ranks, tp_size) */
	size_t nexpect, capexpect;
	imap canon;			/* raw name id -> canonical id + 1 | kind << 32 */
	int align_end;			/* 1: align clocks on a collective's end; 0: none */
	long long top;			/* rank_kernel_delta records per stage, 0: all */
	long long unranked;		/* traces left out: no rank */
	/*
	 * The time base every rank's times are put on (issue 25): the first
	 * trace's time_base_us; another trace's times move by the (exact,
	 * integer) difference of the bases, so ranks compare on one clock.
	 */
	long long base_ref;
	int has_base;
	/* rows written so far, per type: the next one's id (issue 29) */
	long long nrank_rows, ncollective_rows, ndelta_rows;
	long long unselected;		/* traces with no "sel" kernel: all kernels used */
};

/* A zeroed struct skew with str set is ready; skew_free releases it. */
void skew_free(struct skew *s);

/*
 * Add one trace (from trace_reader's on_trace): its selected kernels
 * (those with "sel", or all when none has it, with a warning) go to the
 * rankstage of the trace's rank and each kernel's stage ("all" when it has
 * none).  The trace stays the reader's; only ids of r's string table (which
 * must be s->str) and copied numbers are kept.  `seq` numbers the traces
 * of the stream (0, 1, ...).  A trace without a rank is counted in
 * s->unranked, warned about and left out.
 */
void skew_add_trace(struct skew *s, struct trace_reader *r, const struct trace *tr,
    long long seq);

/* Expect rank r (--ranks, input tp_size) even when no trace has it; repeats are ignored. */
void skew_expect(struct skew *s, long long r);

/*
 * Match, align and write the records of every stage to stdout (rec.h;
 * stage order: extend, decode, all, then others by name), with warnings
 * for missing ranks and sequences that do not line up.  Sorts each
 * rankstage's collectives by start and fills its result fields.  Returns
 * the number of stages written.
 */
size_t skew_report(struct skew *s);

/* ---- what makes the straggler late (delta.c) ---- */

/* The median of v[0..n) (n > 0; the mean of the middle two when n is even); sorts v in place. */
double median(double *v, size_t n);

/*
 * Write the rank_kernel_delta records of a stage to stdout: the kernels
 * (collectives aside) whose time on `straggler`, one of the stage's n ranks
 * rs[0..n), exceeds their median time over those ranks (0 where a kernel
 * did not run) the most, largest first, at most s->top of them (all when
 * 0).  Nothing is written when no kernel exceeds its median.
 */
void write_deltas(struct skew *s, struct rankstage *const *rs, size_t n,
    const struct rankstage *straggler);

/*
 * Where the straggler's lateness is (issue 31), from its late_* figures:
 * "host" when its launch calls came late by at least half the lateness
 * (the GPU could not start what was not launched yet), else "idle" when
 * its GPU sat idle before the collectives at least that much longer than
 * the others' (launched in time, waiting on something else: an event,
 * a copy, another stream), else "kernels" when its GPU was busy that much
 * longer before them, else "spread" (no part reaches half); "none" when
 * it was not late (late_us <= 0).  Static text.
 */
const char *lateness_where(const struct rankstage *x);

#endif
