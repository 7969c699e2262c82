/*
 * overlap-sweep internals: the overlap-opportunity table of the
 * mapping/formal flow (spec overlap.md).
 *
 * Times are microseconds exactly as in the trace.  Every string the tool
 * keeps is interned once in ov_str for the whole run and referred to by its
 * id; no structure here owns string memory.  Arrays are owned by the
 * structure that holds them and released by its *_free function.
 */
#ifndef OVERLAP_H
#define OVERLAP_H

#include <stddef.h>
#include <stdint.h>

#include "imap.h"
#include "payload.h"
#include "pyscope.h"
#include "sbuf.h"
#include "strtab.h"
#include "trace.h"

/* The run's string table (created in main). */
extern strtab *ov_str;

static inline const char *
S(uint32_t id)
{
	return strtab_str(ov_str, id);
}

static inline size_t
SLEN(uint32_t id)
{
	return strtab_len(ov_str, id);
}

/* Intern s[0..n) (NULL reads as ""); the id stays valid for the run. */
uint32_t intern(const char *s, size_t n);
uint32_t intern_c(const char *s);

/*
 * Overlap categories (§2.7).  The enum value is CATEGORY_PRIORITY of the
 * table in §2.7, which only the unrendered dominant-overlap name used.
 */
enum ocat { OC_OTHER, OC_ELEMENTWISE, OC_MEMORY, OC_COMMUNICATION, OC_COMPUTE };
const char *ocat_name(int cat);


/*
 * One overlap kernel event of a trace (§2.6 step 5) on the chosen process.
 * `idx` is the running index among the trace's kept events; the sweep
 * accumulators start at 0 and are filled by ov_sweep.
 */
typedef struct {
	uint32_t canon;		/* canonicalize_name of the raw name */
	uint32_t stream;	/* §2.6 stream text */
	int cat;		/* enum ocat of the raw name */
	int has_eid;
	long long eid;		/* External id, correlation-resolved */
	uint32_t win, band;	/* mapping side, py_context: its §6.5 window (pylist_*), NOSTR none */
	size_t idx;
	double ts, dur, end;	/* end = ts + dur in double */
	double hidden_us, exclusive_us, hbc_us;
} oev_t;

/*
 * ov_sweep (§4): the interval sweep over one stage's events, in list order.
 * Adds every closed segment to each active event's hidden, exclusive and
 * hidden-under-compute time, segment by segment in time order (§0), using
 * per-stream counts (§4.6).  O(n log n) for the sort plus O(active) per
 * segment while that work stays under ov_sweep_max_exact_work (default 0:
 * 32 per event plus 4 million); past it, kernels that all overlap one
 * another, the sums come from running totals in O(n) (issue 21), exact
 * sums rounded once instead of at every segment (docs/deviations.md).
 * Returns the union busy time, summed segment by segment either way.
 * Quirks kept: ends sort before starts at equal times, and an event whose
 * ts + dur == ts stays active to the end (§4.7).
 */
double ov_sweep(oev_t *ev, size_t n);
/* The work past which ov_sweep uses running totals; 0: the default (tests set it). */
extern size_t ov_sweep_max_exact_work;

/*
 * ov_exclusive (issue 29): the times when exactly one stream of ev[0..n)
 * runs, the segments ov_sweep adds to exclusive_us (its quirks included),
 * merged into intervals in order of start.  Returns their count and sets
 * *out to a heap array (NULL when none); the caller frees it.  O(n log n).
 */
struct ov_span {
	double ts, end;
};
size_t ov_exclusive(oev_t *ev, size_t n, struct ov_span **out);

/* Per (canonical name, category) aggregate (§5). */
typedef struct {
	uint32_t name;
	int cat;
	long long count;
	double total_us, hidden_us, exclusive_us, hbc_us;
	double rep_score;
	long rep;		/* index into the event list, -1 when none */
} agg_t;

/*
 * ov_aggregate (§5): aggregates in first-seen order.  Sums are left folds in
 * event-list order.  Returns a heap array of *nagg items (caller frees).
 */
agg_t *ov_aggregate(const oev_t *ev, size_t n, size_t *nagg);
double agg_hidden_ratio(const agg_t *a);
double agg_exclusive_ratio(const agg_t *a);

/*
 * Raw CPU-side events of a mapping trace (§6.3, §6.5), as the trace reader
 * collected them: CPU ops with their own External id (ext), Python frames
 * with their raw name; both with positive durations.  In a py_context trace
 * (triage-records(5)) there are no frames: trace-extract resolved each op's
 * §6.3 scope chain (opchain, one per op) and each kernel's §6.5 window
 * (oev_t.win, .band) from them.
 */
typedef struct tcall cpuop_t;
typedef struct tframe frame_t;

typedef struct {
	cpuop_t *ops;
	size_t nops, capops;
	frame_t *fr;
	size_t nfr, capfr;
	int py;			/* py_context: chains below, frames unused */
	uint32_t *opchain;	/* per op: pylist of raw frame names, NOSTR none */
} rawdata_t;

void rawdata_free(rawdata_t *r);

/*
 * Lists of raw frame-name ids and window bands, interned for the run: an
 * id (NOSTR for an empty list) and back.  Pointers stay valid for the run.
 */
uint32_t pylist_intern(const uint32_t *v, size_t n);
const uint32_t *pylist(uint32_t id, size_t *n);
uint32_t pyband_intern(const struct tpyband *b, size_t n);
const struct tpyband *pyband(uint32_t id, size_t *n);
void pylist_free(void);

/*
 * Python-scope text rules (scope.c; canonical names and the meaningful and
 * fallback classes are common/pyscope.h's).  Inputs are (pointer, length)
 * spans of valid UTF-8; nothing is retained.
 *
 * scope_is_low_signal (§6.2): canonicalizes, lowercases, looks for the
 *   function and path tokens ('(' and ':' variants).
 * source_scope_priority (§6.8): the alias-score priority of a scope.
 * choose_best_scope (§6.7): index of the best element of a non-empty chain
 *   of interned canonical names (first on ties).
 * same_scope_family (§9.3): NUL-terminated scopes of one family?
 */
int scope_is_low_signal(const char *s, size_t n);
int source_scope_priority(const char *s, size_t n);
size_t choose_best_scope(const uint32_t *chain, size_t n);
int same_scope_family(const char *a, const char *b);

/*
 * Canonical scope of a raw frame name, cached by the raw name's id:
 * returns the canonical id and sets *flags (SCOPE_MEANINGFUL,
 * SCOPE_FALLBACK).
 */
#define SCOPE_MEANINGFUL 1
#define SCOPE_FALLBACK 2
uint32_t scope_of_raw(uint32_t raw, int *flags);
void scope_cache_free(void);		/* release the cache at exit */

/*
 * Insertion-ordered counter of interned strings (§6.0): a Python Counter,
 * whose most_common(1) is the highest count, first inserted on ties.
 */
typedef struct {
	uint32_t key;
	long long n;
} cnt_t;

typedef struct {
	cnt_t *c;
	size_t n, cap;
} counter_t;

/* KernelSourceStats (§6.0). */
typedef struct {
	uint32_t name;
	long long total_count, mapped_count;
	counter_t scope, chain, launch;
	/* lookup caches (§7.1), filled on first use */
	char *lower;
	size_t lower_cp;
	char *compact;
	size_t compact_len;
	int cached;
} srcstat_t;

/* The source map: canonical kernel name -> stats, in insertion order. */
typedef struct {
	srcstat_t *s;
	size_t n, cap;
	imap byname;		/* name id -> index in s */
	imap cidx;		/* (counter id, key) -> index in that counter */
} srcmap_t;

/* most_common(1) of a counter: the key, or NOSTR when the counter is empty. */
uint32_t counter_best(const counter_t *c);
double srcstat_mapping_ratio(const srcstat_t *st);

/*
 * srcmap_build (§6.1-§6.6): attribute the mapping bundle's events `mev`
 * (its kernels of one stage, list order) using the mapping trace's raw CPU
 * events and the mapping kernel map.  `stage` is the formal stage name used
 * for kernel-map lookups.  The stats are appended to sm (new keys in first
 * sampled-time order); the inputs are only read.  Counts are launches, not
 * microseconds.
 */
void srcmap_build(srcmap_t *sm, const oev_t *mev, size_t nm, const rawdata_t *raw,
    const kernel_map_t *km, const char *stage);

/* A deep copy of src into dst (dst's contents are not freed). */
void srcmap_copy(srcmap_t *dst, const srcmap_t *src);

/*
 * srcmap_build keeps each thread's sorted scope timeline for the next map
 * built from the same raw data (the other stages); this frees them.  Call it
 * before that raw data is freed.
 */
void srcmap_cache_free(void);

/*
 * merge_source_map_from_kernel_payload (§6.9): add the formal stage
 * payload's sites with their full launch counts; p may be NULL (no payload).
 * The payload is only read.
 */
void srcmap_merge_payload(srcmap_t *sm, const payload_t *p);

/*
 * relaxed_source_stats_lookup (§7.1): exact key, then prefix/substring,
 * long-name common prefix and alias groups.  Returns a pointer into sm
 * (valid until sm changes) or NULL when nothing matches or the best key is
 * empty.  Fills per-stats lookup caches, hence the non-const map.
 */
const srcstat_t *srcmap_lookup(srcmap_t *sm, const char *name, size_t n);

void srcmap_free(srcmap_t *sm);		/* leaves an empty, reusable map */

/* One rendered overlap row (§10.5). */
typedef struct {
	const char *priority, *verdict, *recommendation, *signal, *risk;
	uint32_t kernel;
	int cat;		/* the aggregate's enum ocat: its events are (kernel, cat) */
	uint32_t scope;		/* NOSTR: "unmapped" */
	double total_us, share_pct, exclusive_ratio, hidden_ratio;
} orow_t;

/*
 * ov_rows (§8-§10): the stage's rows after the limit and the final
 * share >= 1.0 filter.  `busy` is ov_sweep's result.  Returns a heap array
 * of *nrows rows (caller frees).
 */
orow_t *ov_rows(const oev_t *ev, size_t n, double busy, const agg_t *agg,
    size_t nagg, srcmap_t *sm, long long limit, size_t *nrows);

/*
 * The overlap_exposed record of each row of a stage (exposed.c, issue 29):
 * the time of its kernel's events ev[] inside the exclusive intervals
 * (ov_exclusive) summed over the events, and as spans that set intersected
 * with the union of the events (events that overlap one another merged):
 * their count and the OV_EXPOSED_SPANS longest as [ts, dur] pairs in order
 * of start.  Time O((n + intervals) log n) per row.  t: the stage's trace; first_id: the
 * number of the first row's id ("overlap-N"), the rows numbered in order.
 */
#define OV_EXPOSED_SPANS 100
void ov_write_exposed(long long t, const char *stage, oev_t *ev, size_t n, const orow_t *rows,
    size_t nrows, long long first_id);

#endif
