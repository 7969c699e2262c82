/*
 * trace-diff internals: one side of the comparison read from its record
 * stream (side.c), kernel families (family.c), the per-stage comparison of
 * kernel rows (match.c), and the figures, verdicts and records written
 * (report.c).  trace-diff(1) is the specification; issue 17 the request.
 *
 * Times are microseconds.  Strings are ids in the run's one string table
 * (NOSTR: absent), shared by both sides so that equal names have equal
 * ids.  Every array belongs to the struct that holds it; side_free and
 * cmp_free release them.
 */
#ifndef DIFF_H
#define DIFF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "imap.h"
#include "sbuf.h"
#include "strtab.h"

#define NOSTR UINT32_MAX

/* Bars of trace-diff(1): a row is shown at 1.0 % of its stage on either side. */
#define DIFF_BAR_PCT 1.0
/* A kernel on both sides whose time moved by at most this share of the larger side is "same". */
#define DIFF_SAME_PCT 1.0
/* The verdict threshold without --gate. */
#define DIFF_THRESHOLD_PCT 5.0

/* One kernel of a stage: its kernel_row records summed over the traces. */
struct krow {
	uint32_t name, cat;
	uint32_t loc;		/* first Python site of the first row, or NOSTR */
	uint32_t fam;		/* family key (family.c), set by the matcher */
	double us;
	long long launches;
	int paired;		/* matched by the matcher */
};

/* A fuse_row: the pattern's status ("in use" or "missing") and GPU time. */
struct frow {
	uint32_t pattern, status;
	double us;
};

/* An overlap_row: time, exclusive share (0..1) and verdict. */
struct orow {
	uint32_t kernel, verdict;
	double us, excl;
};

struct stage {
	uint32_t name;
	struct krow *k;
	size_t nk, capk;
	double total_us;	/* the sum of its kernel rows */
	/* step-stats' gpu_time records of the stage, summed over the traces */
	int has_gpu, has_idle_launch, has_idle_sync, has_graph;
	double busy_us, idle_us, idle_launch_us, idle_sync_us, graph_us;
	long long steps;
	double *step_us;	/* periods of its complete steps with GPU work */
	size_t nstep, capstep;
	double *step_busy_us;	/* the GPU busy time of the same steps, of those that have it */
	size_t nbusy, capbusy;
	/*
	 * Its steps with GPU work, the last too: the batch summed over those
	 * that name one, the tokens over those that name them (a decode
	 * step's tokens are its batch), for runs of other batch sizes.
	 */
	double batch_sum, tok_sum;
	long long nbatch, ntok;
	struct frow *f;
	size_t nf, capf;
	struct orow *o;
	size_t no, capo;
	/*
	 * rank-skew's rank_row of the lowest rank (the one the tables show),
	 * with --all-ranks: the time its collectives took and the part of it
	 * spent waiting for the other ranks (issue 25).
	 */
	int has_wait;
	long long wait_rank;
	double rank_comm_us, rank_wait_us;
};

struct side {
	const char *what;	/* "baseline" or "candidate", for messages */
	char *path, *framework, *model, *health;	/* heap; model and health may be NULL */
	/*
	 * What the traces say of themselves (issue 25), each NULL or -1 when
	 * they do not: the model family (the input record's model_family), the
	 * analyzed GPU's name (its device record) and the job's world size.
	 */
	char *model_family, *gpu;
	long long world;
	int dual;		/* mapping/formal records */
	long long rows, diffs;	/* kernel rows read; trace-diff records read */
	int overlap;		/* it has overlap rows */
	struct stage *st;
	size_t nst, capst;
	imap kix;		/* (stage index << 32 | kernel name) -> row index + 1 */
};

/* ---- side.c ---- */

/*
 * Read one record stream into s, which the caller zeroed and named
 * (s->what).  name is for messages; pass copies every line to stdout;
 * whole puts every stage under "all" (--whole-run).  Stages are kept
 * in stage order (extend, decode, all, then others by name).  Dies with
 * exit 1 on a malformed record or a bundle of runs (run records).
 */
void side_read(struct side *s, strtab *str, FILE *fp, const char *name, int pass, int whole);
void side_free(struct side *s);

/* The stage of s named `name`, or NULL. */
struct stage *side_stage(const struct side *s, uint32_t name);

/*
 * The share of a side's kernel time in kernel families (kernel_family)
 * that the other side has too, in percent; 100 for a side without time.
 * str: the shared table.
 */
double shared_family_pct(const struct side *a, const struct side *b, strtab *str);

/*
 * First resolved Python site of a kernel_row location cell ("a (site share
 * 60%)<br>b ..." -> "a"; "unresolved (...)<br>b (...)" -> "b"), else the first.
 */
void first_site(const char *loc, size_t n, sbuf *out);

/* ---- family.c ---- */

/*
 * The family of a canonical kernel name (trace-diff(1), "Families"): its
 * identity (kname_identity: demangled, return type, template argument and
 * parameter lists dropped, a launch wrapper read as the kernel it runs),
 * hashes and then every run of digits replaced by '#'.
 * Writes it to out (reset first).
 */
void kernel_family(const char *name, size_t n, sbuf *out);

/* ---- match.c ---- */

enum { ST_SAME, ST_CHANGED, ST_NEW, ST_REMOVED };
enum { M_NONE, M_NAME, M_FAMILY };

/* One diff_row. */
struct drow {
	uint32_t kernel;	/* the candidate's name (the baseline's when removed); family rows: the family */
	uint32_t base_kernel;	/* the baseline's name when it differs from kernel, else NOSTR */
	uint32_t cat, loc, base_loc;	/* base_loc: only when the site moved */
	int status, match;
	int bnames, cnames;	/* names folded in: 0 (none) or more; rows of one name each show 1 */
	double base_us, cand_us, delta_us;	/* scaled (per step when per_step) */
	double bshare, cshare;	/* percent of the stage on each side */
	long long bl, cl;	/* launches, not scaled */
	int shown;
};

/* The comparison of one stage present on one side or both. */
struct scmp {
	uint32_t name;
	struct stage *b, *c;	/* NULL on the side without it */
	int per_step;		/* both sides have steps, in different numbers */
	double bscale, cscale;	/* 1, or 1 / steps when per_step */
	struct drow *r;
	size_t nr;
	int counts[4];		/* rows by status */
};

/*
 * Compare the kernel rows of a stage: by name, then the leftovers by
 * family; sets every row's status, shares and bar, and sorts the rows by
 * absolute delta (largest first).  str: the shared table (family keys are
 * interned there).
 */
void stage_compare(struct scmp *c, strtab *str);
void scmp_free(struct scmp *c);

/* ---- report.c ---- */

struct opts {
	double threshold;	/* verdict threshold, percent */
	int gate;		/* --gate given */
	int force;		/* --force */
};

/*
 * Compare the two sides and write trace-diff's records (diff_input, then
 * per stage diff_metric, diff_row, diff_fuse, diff_overlap and verdict,
 * then the overall verdict), with the gate's and comparability's messages
 * on stderr.  Returns the exit status: 0, EXIT_REGRESSION or
 * EXIT_INCOMPARABLE.
 */
int diff_report(struct side *b, struct side *c, strtab *str, const struct opts *o);

#endif
