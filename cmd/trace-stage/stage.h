/* trace-stage internals shared by its source files. */
#ifndef STAGE_H
#define STAGE_H

#include <stdint.h>

#include "trace.h"
#include "xsort.h"

/* What the launch-to-start latencies of the analyzed process say (issue 25). */
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

/*
 * Measure the clocks of host and GPU on the kernels of process sel (a
 * string id) against their launch calls and the trace's blocking calls
 * (clocks.c).  The trace is read in queue mode (trace.h); every pass is a
 * sort or a merge, so memory does not grow with the kernels (issue 30).
 */
void measure_clocks(const struct trace_reader *r, struct trace *tr, uint32_t sel,
    struct clocks *c);

/* A kernel's launch call start, by kernel index (the first launch of its correlation). */
struct klaunch {
	unsigned long long k;
	double ts;
};

/*
 * The launch call start of every kernel whose correlation a launch
 * record carries (its first such record), in kernel order: a sort of
 * struct klaunch the caller reads with xsort_next and frees.
 */
struct xsort *kernel_launch_starts(struct trace *tr);

#endif
