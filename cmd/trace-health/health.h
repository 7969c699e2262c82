/*
 * trace-health's two halves: facts.c measures a staged trace (counts and
 * times, no judgement), checks.c judges the measurements against the
 * thresholds of trace-health(1) and words the result.  main.c reads the
 * records and writes the "health" record.
 *
 * Times are microseconds, as in the trace.  Strings are ids in the reader's
 * string table (trace.h) or static text; nothing here owns the trace.
 */
#ifndef HEALTH_H
#define HEALTH_H

#include <stddef.h>
#include <stdint.h>

#include "sbuf.h"
#include "trace.h"

/* The stages the kernel table has sections for; "all" is not one of them. */
enum { NSTAGE = 2 };

/* One stage that the trace names (by its path or by annotations). */
struct stage_facts {
	const char *name;	/* "extend" or "decode" (static) */
	int from_path;		/* named by the trace's path, not by annotations */
	long long kernels;	/* on the analyzed process, with this stage */
	long long windows;	/* annotations naming the stage */
	long long launches;	/* launches inside its CPU annotation windows */
};

/* Why kernels overlap on one stream, when the pattern tells. */
enum overlap_cause {
	OV_NONE,		/* no overlap */
	OV_MERGED,		/* most overlapping kernels repeat the kernel before them */
	OV_PDL,			/* short tail overlaps of distinct kernels (NVIDIA sm90+) */
	OV_NEGLIGIBLE,		/* a few overlaps too small to change a figure (timestamp error) */
	OV_UNKNOWN
};

/* The analyzed GPU, from the trace's device records (trace-extract). */
struct gpu_facts {
	int known;		/* a device record names it */
	long long major, minor;	/* compute capability, -1 when absent */
	int amd;		/* AMD (ROCm): its name, or a warp of 64 */
	char name[128];
};

/* Everything the checks look at, for one trace. */
struct facts {
	const char *path;		/* the trace file (for messages) */
	const char *role;		/* the trace's role (single, mapping, formal) */

	/* from the stats record */
	long long events, cpu_ops, frames;
	long long skipped;		/* events skipped, every reason together, zero_dur aside */
	char skipped_why[256];		/* "reason N, ..." of the nonzero reasons */
	long long zero_dur;		/* GPU items of dur 0, not kernels (stats kernels_zero_dur) */
	long long launch_zero_dur;	/* launches whose GPU items all have dur 0 */
	long long missing_close;	/* 1 when the event array lacks its ']' */
	long long event_arrays;		/* traceEvents arrays past the first (stats.warnings) */

	/* from the trace record */
	int flags_known;		/* it says which profiler options were on */
	int with_shapes;		/* record_shapes was on */
	long long time_base;		/* time_base_us: absolute time = ts + this */

	/* from trace-stage's gpu_pids record: the launch-to-start latencies */
	int has_latency;
	double latency_p50;
	long long idle_starts;
	double idle_start_min;
	int has_start_min;
	double start_min;		/* the least start - launch call start */
	char sync_call[64];		/* a blocking call showing one clock, "" for none */
	double sync_return, sync_wait;	/* its return after the work it waited for, its wait */
	int has_offset;
	double offset_us;

	struct gpu_facts gpu;

	/* GPU processes (pids holding kernel records) */
	size_t npids;
	uint32_t sel;			/* the analyzed pid (gpu_pids.selected), NOSTR: none */
	const char *sel_name;		/* its text ("" for none) */
	double total_us, other_us;	/* kernel time, all pids and the others than sel */
	long long nk, nk_sel;		/* kernel records, all and on sel */

	/* launches and their kernels (by correlation, kernels on any pid) */
	long long nln;
	long long graph, graph_missing;	/* cudaGraphLaunch and its like; without kernels */
	long long captured;		/* inside a torch.cuda.graph capture, without kernels */
	long long eager, eager_missing;	/* every other launch; without kernels */
	long long tail_missing;		/* the last eager launches in time, all without kernels */
	long long capture_regions;	/* capture_begin .. capture_end frame pairs */
	int amd;			/* hip* launches: ROCm, where there is no PDL */
	long long first_launch_corr;	/* the least correlation of a kernel launch */
	int has_first_launch;

	/* compute kernels (cat "kernel") on sel against the launches */
	long long compute, compute_no_launch;
	long long compute_before;	/* of those, launched before the capture began */
	long long skew;			/* kernels on sel starting before their launch */
	double skew_max;
	long long absurd;		/* kernels on sel with ts < 0 or ts > 1e17 */

	/* same-stream overlap on sel (cuda_sync events aside) */
	long long overlaps;		/* kernels starting before the previous one ends */
	long long overlaps_same;	/* of them: the same kernel name as the previous */
	double overlap_max;		/* the largest overlap */
	double overlap_us;		/* all overlaps together */
	double sel_us;			/* the kernel time of the kernels looked at */
	long long stream_kernels;	/* kernels on the streams looked at */
	int overlap_partial;		/* every overlapping kernel ends after the previous */
	enum overlap_cause cause;
	const char *arch;		/* "Hopper" or "Blackwell" from kernel names, or NULL */
	char arch_tag[64];		/* what told it ("sm90", "compute capability 9.0") */

	/* stages, and steps */
	struct stage_facts st[NSTAGE];
	size_t nst;
	long long steps;		/* step annotations of the first vocabulary found */
	const char *step_kind;		/* the vocabulary, e.g. "ProfilerStep#N", or NULL */
};

/*
 * What main.c read outside the trace's collected records, for the facts:
 * trace-stage's gpu_pids record and trace-extract's device records.
 */
struct side_facts {
	int has_latency, has_offset, has_start_min;
	double latency_p50, idle_start_min, offset_us, start_min;
	long long idle_starts;
	char sync_call[64];
	double sync_return, sync_wait;
	struct gpu_facts dev[16];	/* the trace's devices, by the order of their records */
	long long dev_id[16];
	size_t ndev;
};

/*
 * Measure one staged trace.  r and tr are the reader's (trace.h), read in
 * queue mode; tr must hold the trace's kernels, launches and annotations; of its frames only
 * torch.cuda.graph's capture_begin and capture_end are looked at (main.c
 * keeps no others).  sel is the string id of the pid its gpu_pids record
 * names, NOSTR when the trace has none (no kernels).  Fills *f completely;
 * f->path and f->sel_name point into r's string table.  Allocates nothing
 * that outlives the call.  sf (may be NULL): what main.c read of the
 * trace's gpu_pids and device records.
 */
void facts_measure(struct facts *f, const struct trace_reader *r, struct trace *tr,
    uint32_t sel, const struct side_facts *sf);

/*
 * A check's status (issue 25: three kinds of finding).  ok: nothing found.
 * info: expected behaviour worth knowing (programmatic dependent launch,
 * kernels launched before the capture began).  limited: a limitation of
 * the capture settings (no stacks, no shapes, no CPU ops, no step
 * markers), with what it costs.  warn and fail: a defect, data missing or
 * wrong.  Only defects make the verdict degraded (warn) or unusable (fail).
 */
enum status { ST_OK, ST_INFO, ST_LIMITED, ST_WARN, ST_FAIL };

/* The tables and sections a check can make untrustworthy (bits). */
enum {
	AF_KERNEL = 1 << 0,	/* kernel table */
	AF_OVERLAP = 1 << 1,	/* overlap-opportunity table */
	AF_FUSE = 1 << 2,	/* fuse-opportunity table */
	AF_GPU_TIME = 1 << 3,	/* GPU busy and idle time */
	AF_STEP = 1 << 4	/* per-step figures */
};

/* One check's outcome. */
struct check {
	const char *id;		/* static, e.g. "no_kernels" */
	enum status status;
	long long value;	/* the count the threshold applies to */
	unsigned affects;	/* AF_* bits; 0 when the status is ok */
	sbuf detail;		/* one sentence, no path; owned, freed by checks_free */
};

enum { NCHECK = 16 };

/* Options that change the thresholds. */
struct health_opts {
	long long expect_steps;	/* --expect-steps N; 0: not asked */
};

/*
 * Judge the facts: fill c[0..NCHECK) in the order of trace-health(1) and
 * return the verdict's worst defect status (ST_FAIL: unusable, ST_WARN:
 * degraded, ST_OK: ok; limitations and information leave it ok).  The
 * caller frees the details with checks_free.
 */
enum status checks_run(struct check c[NCHECK], const struct facts *f,
    const struct health_opts *o);
void checks_free(struct check c[NCHECK]);

/* "ok", "info", "limited", "warn", "fail"; the verdict's words: "ok", "degraded", "unusable". */
const char *status_name(enum status s);
const char *verdict_name(enum status worst);

/* Append the checks as the JSON array of the health record's "checks". */
void checks_json(sbuf *out, const struct check c[NCHECK]);

#endif
