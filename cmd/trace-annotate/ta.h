/*
 * trace-annotate internals: what the record stream says about each trace
 * (records.c), the findings placed on the trace's timeline (findings.c),
 * their tracks and events (place.c), and the trace streamed through with
 * the events added (stream.c).
 *
 * Times: the records' trace-relative microseconds (triage-records(5)); a
 * finding is held in integer nanoseconds relative to its trace's
 * time_base_us and written back on the trace's own clock by adding that
 * integer to the decimal text (place.c), never through a double.  Strings
 * are ids in ta.str; every array is owned by the run (struct ta) and lives
 * until the end of the program.
 */
#ifndef TA_H
#define TA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "imap.h"
#include "sbuf.h"
#include "strtab.h"

#define NOSTR UINT32_MAX

/* A trace of the stream: its trace and stats records. */
struct ta_trace {
	long long t;
	uint32_t path, role, stage;
	long long rank, base, events;
	int has_rank, has_stats, gzip;
	imap graph_corr;	/* correlations of its CUDA-graph launches */
};

/* A step record (step-stats). */
struct ta_step {
	long long t, index, kernels, batch, tokens;
	uint32_t stage, name, id;
	double ts, cpu_us, period_us, busy_us, span_us, gpu_ts;
	unsigned has_period : 1, has_gpu : 1, has_gpu_ts : 1, has_batch : 1, has_tokens : 1;
};

/* A gpu_time record: the report row a stage's idle gaps belong to. */
struct ta_gpu {
	long long t;
	uint32_t stage, id;
	double busy_us, idle_us, idle_launch_us;
	int has_launch;
};

/* An idle_gap record (step-stats). */
struct ta_gap {
	long long t;
	uint32_t stage, kernel, launch, id;
	double ts, dur, host_us, launch_ts, launch_dur;
	double sync_us;		/* of the rest, the host in a blocking call (has_sync) */
	unsigned has_host : 1, has_launch : 1, has_sync : 1;
};

/* A kernel table row among the top ones (kernel_row, shown, within -n). */
struct ta_krow {
	long long t, launches;
	uint32_t stage, kernel, category, location, cpu_op, id;
	double total_us, share_pct;
};

/* A graph_escape row. */
struct ta_escape {
	long long t, launches;
	uint32_t stage, kernel, location, id;
	double total_us, share_pct;
};

/* An overlap_row and its overlap_exposed record (matched by the row's id). */
struct ta_orow {
	uint32_t stage, kernel, priority, verdict, scope, recommendation, id;
	double total_us, share_pct, exclusive_ratio, hidden_ratio;
};
struct ta_exposed {
	long long t, intervals;
	uint32_t stage, row;
	double exposed_us;
	double *span;		/* nspan (ts, dur) pairs */
	size_t nspan;
};

/* A fuse_row that is an opportunity (not in use), with its evidence kernels. */
struct ta_frow {
	long long t;
	uint32_t stage, pattern, confidence, candidate, id;
	double related_us, share_pct;
	uint32_t *kernel;	/* canonical names */
	size_t nkernel;
};

/* rank-skew's rank_row and collective_row records. */
struct ta_rankrow {
	uint32_t stage, id;
	long long rank, base;
	double offset_us;
	int has_base, straggler;
};
struct ta_rankts {
	long long rank;
	double ts, dur;		/* aligned, on the rank_row's time base */
};
struct ta_coll {
	uint32_t stage, kind, name, id;
	long long ordinal, last_rank;
	int has_last;
	double skew_us, wait_us;
	struct ta_rankts *r;
	size_t nr;
};

/* A kernel_eff record (kernel-roofline, issue 28), when the stream has any. */
struct ta_eff {
	long long t;
	int has_t;
	uint32_t stage, kernel;	/* canonical name */
	double flops, bytes;
	int has_flops, has_bytes;
};

/* A GPU work item of an analyzed process, as spooled from its kernel record. */
struct ta_kinst {
	long long t, corr;
	uint32_t stage, canon;
	unsigned char is_kernel, has_corr;
	double ts, dur;
};

struct ta {
	strtab *str;
	struct ta_trace *tr;
	size_t ntr, captr;
	struct ta_step *step;
	size_t nstep, capstep;
	struct ta_gpu *gpu;
	size_t ngpu, capgpu;
	struct ta_gap *gap;
	size_t ngap, capgap;
	struct ta_krow *krow;
	size_t nkrow, capkrow;
	struct ta_escape *esc;
	size_t nesc, capesc;
	struct ta_orow *orow;
	size_t norow, caporow;
	struct ta_exposed *exp;
	size_t nexp, capexp;
	struct ta_frow *frow;
	size_t nfrow, capfrow;
	struct ta_rankrow *rrow;
	size_t nrrow, caprrow;
	struct ta_coll *coll;
	size_t ncoll, capcoll;
	struct ta_eff *eff;
	size_t neff, capeff;
	FILE *spool;		/* struct ta_kinst of every analyzed GPU work item */
	unsigned long long nspool;
	long long max_pid;	/* the largest numeric pid of the records, or -1 */
	long long top;		/* kernel rows per stage to mark (-n; 0: every shown one) */
};

extern struct ta ta;

/* ---- records.c ---- */

/*
 * Read the record stream fp (name for messages) into ta, spooling the
 * kernels to a temporary file.  Malformed records end the run (exit 1,
 * triage-records(5)); no record at all is exit 3.
 */
void ta_read(FILE *fp, const char *name);

/* The trace of index t, or NULL. */
struct ta_trace *ta_trace_of(long long t);

/* The string of an id ("" for NOSTR). */
const char *ta_s(uint32_t id);

/* ---- place.c: tracks and events ---- */

/* A finding on one track: [ts, end) in nanoseconds from the trace's time base. */
struct ta_find {
	long long ts, end;
	uint32_t track;
	uint32_t ref;		/* the kind's row or record, an index into ta */
	uint32_t aux;		/* a second index a kind needs */
};

/* The kinds of finding, one track (or one per pattern) each, in display order. */
enum ta_kind {
	K_STEP, K_IDLE_HOST, K_IDLE_OTHER, K_ESCAPE, K_KERNEL, K_EXPOSED, K_FUSE,
	K_WAIT, K_LAST, K_COUNT
};

/* The added events of one trace, built by findings.c and written by place.c. */
struct ta_out {
	const struct ta_trace *tr;
	long long pid;
	struct ta_find *f;
	size_t nf, capf;
	/*
	 * Past TRIAGE_SPOOL_MEM bytes of findings (4 MiB), each such run is
	 * sorted and spooled to a temporary file; ta_events merges the runs
	 * (issue 30: memory bounded, not by the kernel instances marked).
	 */
	FILE *runs;
	size_t *run_len;	/* findings of each spooled run, in order */
	size_t nruns, caprun;
	uint32_t *track_name;	/* per track: its name (an id), kind in track_kind */
	unsigned char *track_kind;
	size_t ntrack, captrack;
	sbuf counters;		/* the C events, whole, one a line */
	size_t ncounters;
	const struct ta_rankrow *rank;	/* this trace's rank_row (K_WAIT, K_LAST), or NULL */
};

/*
 * A temporary file in $TMPDIR (else /tmp), unlinked at once, for `what`
 * (used in the message when it cannot be made: exit 1).
 */
FILE *ta_tmpfile(const char *what);

/* A track of kind k named `name`, made on first use; its index. */
uint32_t ta_track(struct ta_out *o, int kind, const char *name);

/* Add a finding of [ts, end) microseconds (trace-relative) on a track; skipped when not finite. */
void ta_add(struct ta_out *o, uint32_t track, double ts_us, double end_us, uint32_t ref,
    uint32_t aux);

/* A C event at ts_us (trace-relative) of counter `name` with one series. */
void ta_counter(struct ta_out *o, const char *name, double ts_us, const char *series,
    double value);

/*
 * The added events as JSON text, handed to put in pieces: lead before the
 * first, ",\n" between two, "\n" after the last; the process's and
 * tracks' metadata, the slices (one that overlaps an earlier one of its
 * track moved to a lane, a track of its own), the counters.  Nothing when
 * there is no finding.  Sorts o->f, and reads back and closes the spooled
 * runs.
 */
void ta_events(struct ta_out *o, const char *lead, void (*put)(void *ctx, const char *p, size_t n),
    void *ctx);

/* What findings.c writes for one finding: its slice's name and the members of its args. */
void ta_slice(const struct ta_out *o, const struct ta_find *f, sbuf *name, sbuf *args);

/*
 * The decimal text of base (integer microseconds) plus ns nanoseconds, to
 * a nanosecond (trailing zeros dropped): the trace's own ts (issue 25).
 */
void ta_ts_text(long long base, long long ns, sbuf *out);

/* ---- findings.c ---- */

/* Every finding of trace tr into o (o zeroed but for tr and pid). */
void ta_findings(struct ta_out *o);

/* ---- stream.c ---- */

/*
 * Copy the trace at path to `out` ("-": stdout; gzip when gz), byte for
 * byte, with o's events (ta_findings, then ta_events) added before the
 * closing bracket of its event array; o->pid is raised above every pid the
 * trace's bytes name first, so that no event of the trace is in the
 * findings' process.  Checks that the trace has `events` events when events
 * >= 0.  made: out is a name trace-annotate made (in a directory, with a
 * trace's label), never written through a link.  Exits on failure (1: the
 * trace unreadable, not a trace or not the records' one; 2: out refused),
 * leaving no output file behind.
 */
void ta_stream(const char *path, const char *out, int gz, int made, struct ta_out *o,
    long long events);

#endif
