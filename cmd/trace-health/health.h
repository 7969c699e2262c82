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
	OV_PDL,			/* short tail overlaps of distinct kernels (NVIDIA) */
	OV_UNKNOWN
};

/* Everything the checks look at, for one trace. */
struct facts {
	const char *path;		/* the trace file (for messages) */
	const char *role;		/* the trace's role (single, mapping, formal) */

	/* from the stats record */
	long long events, cpu_ops, frames;
	long long skipped;		/* events skipped, every reason together */
	char skipped_why[256];		/* "reason N, ..." of the nonzero reasons */
	long long missing_close;	/* 1 when the event array lacks its ']' */

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

	/* compute kernels (cat "kernel") on sel against the launches */
	long long compute, compute_no_launch;
	long long skew;			/* kernels on sel starting before their launch */
	double skew_max;
	long long absurd;		/* kernels on sel with ts < 0 or ts > 1e17 */

	/* same-stream overlap on sel (cuda_sync events aside) */
	long long overlaps;		/* kernels starting before the previous one ends */
	long long overlaps_same;	/* of them: the same kernel name as the previous */
	double overlap_max;		/* the largest overlap */
	int overlap_partial;		/* every overlapping kernel ends after the previous */
	enum overlap_cause cause;
	const char *arch;		/* "Hopper" or "Blackwell" from kernel names, or NULL */
	char arch_tag[16];		/* the name fragment that told it ("sm90") */

	/* stages, and steps */
	struct stage_facts st[NSTAGE];
	size_t nst;
	long long steps;		/* step annotations of the first vocabulary found */
	const char *step_kind;		/* the vocabulary, e.g. "ProfilerStep#N", or NULL */
};

/*
 * Measure one staged trace.  r and tr are the reader's (trace.h); tr must
 * hold the trace's kernels, launches and annotations; of its frames only
 * torch.cuda.graph's capture_begin and capture_end are looked at (main.c
 * keeps no others).  sel is the string id of the pid its gpu_pids record
 * names, NOSTR when the trace has none (no kernels).  Fills *f completely;
 * f->path and f->sel_name point into r's string table.  Allocates nothing
 * that outlives the call.
 */
void facts_measure(struct facts *f, const struct trace_reader *r, const struct trace *tr,
    uint32_t sel);

/* A check's status, in increasing severity. */
enum status { ST_OK, ST_WARN, ST_FAIL };

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

enum { NCHECK = 13 };

/* Options that change the thresholds. */
struct health_opts {
	long long expect_steps;	/* --expect-steps N; 0: not asked */
};

/*
 * Judge the facts: fill c[0..NCHECK) in the order of trace-health(1) and
 * return the verdict's worst status (ST_FAIL: unusable, ST_WARN: degraded,
 * ST_OK: ok).  The caller frees the details with checks_free.
 */
enum status checks_run(struct check c[NCHECK], const struct facts *f,
    const struct health_opts *o);
void checks_free(struct check c[NCHECK]);

/* "ok", "warn", "fail"; the verdict's words: "ok", "degraded", "unusable". */
const char *status_name(enum status s);
const char *verdict_name(enum status worst);

/* Append the checks as the JSON array of the health record's "checks". */
void checks_json(sbuf *out, const struct check c[NCHECK]);

#endif
